"""Learn a site's GPU profile from a shortlist campaign's measured runs.

The campaign ran a few candidates of one space on the user's cluster; each is now a ``Run`` with
its measured tokens/s/GPU. The efficiency parameters are refitted on them with partial pooling
toward the profile the plan started from (``fit_efficiency`` with ``POOL_SIGMA``), as ``calibrate``
pools a GPU's rows toward its vendor: a handful of runs of similar layouts move the parameters
they identify (the GEMM plateau dominates a dense model's step) and leave the others near where
the evidence of the corpus put them. Then the shortlist is ranked again, each measured candidate
by its measurement, since a measurement on the user's cluster is better evidence than any
projection of it.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from attrs import frozen

from primus_lang.ir import Candidate, Cluster, Efficiency, Gpu, Model, Provenance, Settings, text
from primus_lang.validate.calibrate import PARAMS, POOL_SIGMA, fit_efficiency, identifiable, projected
from primus_lang.validate.runs import Run


@frozen
class Measured:
    """One campaign job that left a usable log."""

    index: int
    label: str
    candidate: Candidate
    tokens_per_gpu: float  # measured
    step_time: float  # measured, seconds


@frozen
class RunError:
    index: int
    label: str
    measured: float
    before: float  # projected tokens/s/GPU on the starting profile
    after: float  # on the learned one

    @property
    def error_before(self) -> float:
        return self.before / self.measured - 1

    @property
    def error_after(self) -> float:
        return self.after / self.measured - 1


@frozen
class Ranked:
    label: str
    tokens_per_gpu: float
    measured: bool  # ranked by its measurement (else by the learned profile's projection)
    index: int  # its job index


@frozen
class Learned:
    start: Gpu
    efficiency: Efficiency
    fitted: tuple[str, ...]  # the parameters the runs could move
    runs: tuple[RunError, ...]
    ranked: tuple[Ranked, ...]

    @property
    def mape_before(self) -> float:
        return sum(abs(r.error_before) for r in self.runs) / len(self.runs)

    @property
    def mape_after(self) -> float:
        return sum(abs(r.error_after) for r in self.runs) / len(self.runs)


def tokens_per_gpu(cand: Candidate, cluster: Cluster, step_time: float) -> float:
    """Tokens/s/GPU of a step time, as the projection counts them."""
    return cand.gbs * cand.seq_len / (step_time * cluster.world)


def learn(model: Model, cluster: Cluster, settings: Settings, measured: Sequence[Measured],
          unmeasured: Sequence[tuple[int, str, Candidate]] = ()) -> Learned:
    """Refit ``cluster.gpu``'s efficiencies on ``measured`` (partial pooling toward them) and rank
    the shortlist: measured jobs by measurement, ``unmeasured`` ones (index, label, candidate) by
    the learned profile's projection."""
    start = cluster.gpu
    runs = [Run(f"job-{m.index}", (model.name, start.name, m.candidate.precision), m.tokens_per_gpu, model, cluster,
                m.candidate) for m in measured]
    eff = fit_efficiency(runs, start.efficiency, settings, center=start.efficiency, sigma=POOL_SIGMA)
    errors = tuple(RunError(m.index, m.label, m.tokens_per_gpu, projected(r, start.efficiency, settings),
                            projected(r, eff, settings)) for m, r in zip(measured, runs, strict=True))
    learned = attrs.evolve(cluster, gpu=attrs.evolve(start, efficiency=eff))
    ranked = [Ranked(m.label, m.tokens_per_gpu, True, m.index) for m in measured]
    for index, label, cand in unmeasured:
        run = Run(f"job-{index}", (model.name, start.name, cand.precision), None, model, learned, cand)
        ranked.append(Ranked(label, projected(run, eff, settings), False, index))
    ranked.sort(key=lambda r: (-r.tokens_per_gpu, r.index))
    return Learned(start, eff, tuple(identifiable(runs)), errors, tuple(ranked))


def site_profile(learned: Learned, name: str, base_import: str, comments: Sequence[str]) -> str:
    """``gpu NAME = START { efficiency { ... } provenance { ... } }`` with ``comments`` above it.

    The band stays the starting profile's: a few runs of one space measure no band (their errors
    after the fit are in-sample), so the provenance says so instead of claiming a narrower one."""
    start = learned.start
    p = start.provenance
    note = (f"fitted on {len(learned.runs)} campaign runs (partial pooling toward {start.name}); band kept from "
            f"{start.name} ({p.basis}): {len(learned.runs)} runs of one space cannot measure one")
    prov = attrs.evolve(p, basis="fitted", rows=len(learned.runs), note=note)
    lines = [f"# {c}" if c else "#" for c in comments]
    lines += ["", base_import, ""]
    body = "\n".join(f"    {n} = {text.fitted(n, getattr(learned.efficiency, n))}" for n in PARAMS)
    lines += [f"gpu {name} = {start.name} {{", "  efficiency {", body, "  }", _provenance(prov), "}", ""]
    return "\n".join(lines)


def _provenance(p: Provenance) -> str:
    return "  provenance {\n" + "\n".join(f"    {k} = {v}" for k, v in text.provenance_fields(p)) + "\n  }"
