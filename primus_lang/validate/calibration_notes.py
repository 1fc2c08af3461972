"""The header of a calibrated-profiles file: what it was fitted on, the command that refits it, the
method, and what the fit measured.

Every figure here is computed by the ``calibrate`` run that writes the file, so the header cannot
drift from the profiles under it and the shipped ``stdlib/hardware/calibrated.prx`` is reproduced
byte for byte by its command. The method paragraph is fixed text: it describes the code, and changes
when the code does. Figures that need more than the one fit the file comes from (the spread over fold
shuffles, held-out groups and models) are ``calibrate``'s other reports (docs/projection.md).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

from attrs import frozen

from primus_lang.validate.calibrate import PRIOR_SIGMA, Fit
from primus_lang.validate.runs import Run

WIDTH = 100


@frozen
class Setup:
    """The options that shape the file (``calibrate``'s defaults where a user gives none)."""

    runs: str | None = None  # --runs as given; None: the bundled corpus alone
    with_bundled: bool = False
    folds: int = 5
    seed: int = 0
    pool_sigma: float | None = 4.0  # None: --no-pool
    min_rows: int = 3
    gpus: tuple[str, ...] = ()

    def command(self) -> str:
        """The command line that writes the same file."""
        words = ["primusc calibrate"]
        if self.runs:
            words.append(f"--runs {self.runs}")
        if self.with_bundled:
            words.append("--with-bundled")
        default = Setup()
        words += [f"--folds {self.folds}"] if self.folds != default.folds else []
        words += [f"--seed {self.seed}"] if self.seed != default.seed else []
        if self.pool_sigma is None:
            words.append("--no-pool")
        elif self.pool_sigma != default.pool_sigma:
            words.append(f"--pool-sigma {self.pool_sigma:g}")
        words += [f"--min-rows {self.min_rows}"] if self.min_rows != default.min_rows else []
        words += [f"--gpu {g}" for g in self.gpus]
        return " ".join([*words, "--out FILE"])


def _method(setup: Setup) -> str:
    if setup.pool_sigma is None:
        prior = (f"with a weak prior (sigma {PRIOR_SIGMA:g} in logit space) toward its spec sheet; each profile "
                 "is fitted alone (--no-pool).")
    else:
        prior = (f"with a prior (sigma {setup.pool_sigma:g} in logit space) toward the values fitted on the rows of "
                 "every profile of its vendor (partial pooling); what a profile's rows cannot move keeps the "
                 "pooled value, and a GPU without rows of its own carries its vendor's pooled values. host_launch is "
                 "the host's software, not the vendor's kernels: a vendor's pool starts from, and is pulled "
                 "toward, the value pooled over the vendors with more rows.")
    if setup.runs and not setup.with_bundled:
        prior += (" A site's fit (its rows alone): each profile starts from the shipped calibrated profile of its "
                  "part (stdlib/hardware/calibrated.prx), so what its rows cannot move keeps what the published "
                  "runs measured, and no GPU without rows of its own is written.")
    return (
        "Each profile: Levenberg-Marquardt on log(projected/measured tokens/s/GPU) over that GPU's rows, "
        f"{prior} The FP8 plateau is the BF16 one times the GEMM kernels' FP8/BF16 ratio: measured on "
        "NVIDIA's GEMMs and never fitted there, fitted from rows of both dtypes on a vendor no kernel timing "
        "measured; the NVFP4 plateau is fitted as a ratio to the FP8 one. gemm_knee_flops is the fixed per-kernel cost in BF16 FLOPs; host_launch the host's "
        "time per op of primusc's op list outside CUDA graphs (a pass takes the longer of GPU and host); "
        "overlap_slowdown the compute lost per second of communication hidden under it; sink_attention "
        "attention with learned sinks (Transformer Engine runs it on cuDNN's kernel, not flash attention) "
        "relative to `attention`, moved only by rows of models with sinks; ssm_scan Mamba-2's scan kernels "
        "relative to the attention, GEMM and HBM rates, fitted after the other parameters and from the "
        "rows of hybrid models alone, so the other models' values are those fitted without them."
    )


def _mape(errors: Sequence[float]) -> float:
    return sum(abs(e) for e in errors) / len(errors)


def header(setup: Setup, source: str, fits: Sequence[Fit], runs: Sequence[Run], thin: Mapping[str, int],
           transferred: Mapping[str, Sequence[tuple[str, float]]], bands: Mapping[str, object]) -> list[str]:
    """The file's leading comment lines. ``runs``: the rows fitted; ``thin``: rows of each GPU with
    too few to fit; ``transferred`` and ``bands``: ``transfer``'s errors and ``provenances``'s report."""
    fitted = {rid for f in fits for rid in f.row_ids}
    rows = [r for r in runs if r.id in fitted]
    nvfp4 = sum(1 for r in rows if r.cand and r.cand.precision == "fp4")
    hybrid = sum(1 for r in rows if r.model and r.model.hybrid)
    kinds = [f"{nvfp4} of them NVFP4"] if nvfp4 else []
    kinds += [f"{hybrid} of hybrid Mamba models"] if hybrid else []
    fit_on = (f"Fit on: {source}, the rows primusc can project: {len(rows)} rows over {len(fits)} "
              f"profile{'s' if len(fits) != 1 else ''}")
    fit_on += f" ({', '.join(kinds)})" if kinds else ""
    if thin:
        fit_on += (f"; too few to fit (under {setup.min_rows}): "
                   + ", ".join(f"{g} ({n} row{'s' if n > 1 else ''})" for g, n in sorted(thin.items())))
    paragraphs = [
        "Calibrated hardware profiles written by `primusc calibrate` (docs/projection.md, Calibration).",
        f"Refit: {setup.command()}",
        fit_on + ".",
        _method(setup),
    ]
    cv = [e for f in fits for e in f.cross_validated]
    if cv:
        paragraphs.append(
            f"Cross-validated: {setup.folds} folds over distinct layouts, dealt per profile (fold shuffle "
            f"{setup.seed}), each row projected with parameters, pooled ones included, fitted without its fold: "
            f"MAPE {_mape(cv):.1%} over {len(cv)} rows. Its spread over fold shuffles is `calibrate --repeats "
            "3`'s report.")
    moved = {g: [e for _, e in errs] for g, errs in sorted(transferred.items()) if errs}
    if moved:
        parts = [f"{g} {_mape(errs):.1%} ({len(errs)} rows{'' if g in {f.gpu for f in fits} else ', never fitted'})"
                 for g, errs in moved.items()]
        paragraphs.append("Left out of its vendor's pool (the pool of the vendor's other GPUs projecting its "
                          "rows), each GPU's MAPE: " + ", ".join(parts) + ".")
    paragraphs.append(_bands(bands))
    lines: list[str] = []
    for text in paragraphs:
        lines += textwrap.wrap(text, WIDTH - 2, initial_indent="# ", subsequent_indent="# ",
                               break_on_hyphens=False, break_long_words=False)
    return lines


def _bands(bands: Mapping[str, object]) -> str:
    """How the provenance blocks' bands were measured, and how many held-out rows they hold."""
    text = ("Each profile's provenance block is the band measured for its kind of evidence: 80% of "
            "measured/projected tokens/s/GPU over runs no fit saw (a fitted profile's own cross-validated "
            "residuals, or its vendor's or every profile's where it has under 15; a pooled profile's from the "
            "leave-one-GPU-out transfer), widened by split-conformal's (n+1)/n. `paired` is the median error of "
            "the ratio of two projections of one model on one GPU at one GPU count: plan calls candidates "
            "closer than that tied.")
    held = []
    coverage = bands.get("held_out_coverage")
    if isinstance(coverage, dict):
        own = [f"{vendor.upper()} {c['inside']} of {c['rows']} rows ({c['share']:.0%})"
               for vendor, c in sorted(coverage.items()) if c.get("rows")]
        held += [f"inside the band its fitted profile ships with, {', '.join(own)}"] if own else []
    moved = bands.get("transfer_held_out_coverage")
    if isinstance(moved, dict) and moved.get("rows"):
        held.append(f"inside the transfer's band, {moved['inside']} of {moved['rows']} ({moved['share']:.0%})")
    if held:
        text += " Each row judged against a band measured without it and its layout's twins: " + "; ".join(held) + "."
    return text
