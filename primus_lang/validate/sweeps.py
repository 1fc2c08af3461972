"""Controlled sweeps (the schema of ``validation/sweeps.yaml``) as projection inputs.

A sweep is one base recipe and its variants, each measured on the same cluster and software. A
variant is a published run whose row is the base with the variant's ``set`` merged over it, so it
goes through the same reading as the published-runs corpus (``runs.resolve``): one mapping, one set
of assumptions (docs/projection.md). What a row cannot say (async TP in torchtitan, a zero-bubble
schedule) a variant says as ``knobs``: candidate fields set after the row is read.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import attrs
from attrs import frozen

from primus_lang.datafiles import DataCodes, load_yaml
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_projection import (
    RUNS_FILE_ENCODING,
    RUNS_FILE_NUMBER,
    RUNS_FILE_TOO_DEEP,
    RUNS_FILE_TOO_LARGE,
    RUNS_FILE_TOO_MANY_VALUES,
    SWEEP_METRIC,
    SWEEPS_DUPLICATE,
    SWEEPS_FILE,
    SWEEPS_SCHEMA,
)
from primus_lang.ir import Candidate
from primus_lang.ir.quantity import META_CHOICES, META_KIND, Kind
from primus_lang.validate.runs import Run, load_cards, resolve_row

SWEEPS_CODES = DataCodes(unreadable=SWEEPS_FILE, encoding=RUNS_FILE_ENCODING, too_large=RUNS_FILE_TOO_LARGE,
                         too_deep=RUNS_FILE_TOO_DEEP, too_many_nodes=RUNS_FILE_TOO_MANY_VALUES,
                         number=RUNS_FILE_NUMBER)
SCHEMA = 1
METRICS = ("tokens_per_sec_per_gpu", "step_time_s", "model_tflops_per_gpu")


@frozen
class Variant:
    """One measured variant, resolved. ``run.skip`` (or ``skip`` before a run exists) says why it is
    not projected."""

    id: str
    measured: float | None
    run: Run | None = None
    skip: str = ""
    knobs: tuple[tuple[str, Any], ...] = ()

    @property
    def reason(self) -> str:
        return self.skip or (self.run.skip if self.run is not None else "")


@frozen
class Sweep:
    id: str
    title: str
    metric: str
    varies: tuple[str, ...]
    source: dict[str, Any]
    unknown: tuple[str, ...]
    assumed: tuple[tuple[str, str], ...]  # (field, "value: why")
    variants: tuple[Variant, ...]


def _problem(path: str, message: str, code: Any = SWEEPS_FILE) -> CompileError:
    return CompileError(Diagnostic(code, f"`{path}` is not a sweeps file: {message}" if code is SWEEPS_FILE
                                   else message))


def merged(base: Any, over: Any) -> Any:
    """``over`` laid on ``base``: mappings merge key by key, anything else (a list, a value) replaces."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = merged(base.get(key), value)
        return out
    return copy.deepcopy(over)


# Candidate fields a variant may set beyond what a row says, and the values each takes
def _knob_choices() -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for f in attrs.fields(Candidate):
        kind = f.metadata.get(META_KIND)
        if kind is Kind.FLAG:
            out[f.name] = (True, False)
        elif kind is Kind.ENUM and f.metadata.get(META_CHOICES):
            out[f.name] = tuple(f.metadata[META_CHOICES])
    return out


def apply_knobs(run: Run, knobs: dict[str, Any]) -> Run:
    """The run with the variant's candidate knobs set, or skipped with why a knob cannot be."""
    if run.skip or not knobs or run.cand is None:
        return run
    choices = _knob_choices()
    for name, value in knobs.items():
        if name not in choices:
            return attrs.evolve(run, skip=f"unsupported feature: knob `{name}` (a sweep sets only flags and "
                                           f"choices of the candidate: {', '.join(sorted(choices))})")
        if value not in choices[name]:
            return attrs.evolve(run, skip=f"unsupported feature: `{name} = {value}` "
                                           f"(one of {', '.join(map(str, choices[name]))})")
    cand = attrs.evolve(run.cand, **knobs)
    if cand.schedule == "zbv" and cand.vpp != 2:
        return attrs.evolve(run, skip=f"layout inconsistent: the ZBV schedule runs 2 chunks per rank, not {cand.vpp}")
    if cand.schedule in ("1f1b", "zero_bubble") and cand.vpp > 1:
        return attrs.evolve(run, skip=f"layout inconsistent: schedule `{cand.schedule}` with VPP {cand.vpp}")
    return attrs.evolve(run, cand=cand)


def _variant(sweep: dict[str, Any], raw: Any, cards: dict[str, Any], calibrated: bool) -> Variant:
    if not isinstance(raw, dict) or not raw.get("id"):
        return Variant(str(raw)[:40], None, skip="variant not understood: a variant is a mapping with an `id`")
    vid = str(raw["id"])
    value = raw.get("measured")
    measured = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if raw.get("unsupported"):
        return Variant(vid, measured, skip=f"unsupported feature: {raw['unsupported']}")
    if measured is None:
        outcome = raw.get("outcome") or "the source gives no value"
        return Variant(vid, None, skip=f"no measurement: {outcome}")
    knobs = {**(sweep.get("knobs") or {}), **(raw.get("knobs") or {})}
    row: dict[str, Any] = merged(sweep["base"], {k: v["value"] for k, v in (sweep.get("assumed") or {}).items()
                                                 if isinstance(v, dict) and "value" in v})
    row = merged(row, raw.get("set") or {})
    metric = sweep.get("metric")
    # a step time converts exactly; tokens/s and TFLOP/s are carried as the run's measurement (the
    # TFLOP/s one is compared with the projection's TFLOP/s, never turned into tokens)
    row["measured"] = {"step_time_s": measured} if metric == "step_time_s" else {"tokens_per_sec_per_gpu": measured}
    row.update(id=f"{sweep['id']}/{vid}", config_complete=True)
    row.setdefault("source", str((sweep.get("source") or {}).get("title") or ""))
    run = apply_knobs(resolve_row(row, cards, calibrated), knobs)
    return Variant(vid, run.measured, run, knobs=tuple(sorted(knobs.items())))


def _sweep(raw: Any, cards: dict[str, Any], calibrated: bool, path: str) -> Sweep:
    if not isinstance(raw, dict) or not raw.get("id"):
        raise _problem(path, "each sweep is a mapping with an `id`")
    sid = str(raw["id"])
    if not isinstance(raw.get("base"), dict):
        raise _problem(path, f"sweep `{sid}` has no `base` mapping (the recipe its variants change)")
    variants = raw.get("variants")
    if not isinstance(variants, list) or not variants:
        raise _problem(path, f"sweep `{sid}` has no `variants` list")
    metric = raw.get("metric", "tokens_per_sec_per_gpu")
    if metric not in METRICS:
        raise CompileError(Diagnostic(SWEEP_METRIC, f"sweep `{sid}` measures `{metric}`, not one of "
                                                    f"{', '.join(METRICS)}"))
    ids = [str(v.get("id")) for v in variants if isinstance(v, dict)]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise CompileError(Diagnostic(SWEEPS_DUPLICATE, f"sweep `{sid}` has two variants named `{twice[0]}`"))
    assumed = raw.get("assumed") or {}
    source = raw.get("source") or {}
    if not isinstance(source, dict):
        raise _problem(path, f"sweep `{sid}` has a `source` that is not a mapping (its `title`, `url`, `read_from`)")
    return Sweep(
        id=sid, title=str(raw.get("title") or ""), metric=metric,
        varies=tuple(str(v) for v in raw.get("varies") or ()),
        source=dict(source),
        unknown=tuple(str(u) for u in raw.get("unknown") or ()),
        assumed=tuple((str(k), f"{v.get('value')}: {v.get('why', '')}") for k, v in assumed.items()
                      if isinstance(v, dict)),
        variants=tuple(_variant(raw, v, cards, calibrated) for v in variants),
    )


def load_sweeps(path: str | Path, calibrated: bool = True) -> list[Sweep]:
    """Every sweep of a sweeps file, its variants resolved (models from the stdlib, then the file's
    own ``models``, then a ``model_cards.yaml`` beside it)."""
    path = Path(path)
    name = str(path)
    doc = load_yaml(path, SWEEPS_CODES, "a sweeps file")
    if not isinstance(doc, dict):
        raise _problem(name, "expected a mapping with `schema` and `sweeps`")
    if "schema" not in doc:
        raise CompileError(Diagnostic(SWEEPS_SCHEMA, f"`{name}` has no `schema` key; this primusc reads schema "
                                                     f"{SCHEMA}", help=f"start the file with `schema: {SCHEMA}`"))
    if doc.get("schema") != SCHEMA:
        raise CompileError(Diagnostic(SWEEPS_SCHEMA, f"`{name}` says `schema: {doc.get('schema')}`; this primusc "
                                                     f"reads schema {SCHEMA}"))
    sweeps = doc.get("sweeps")
    if not isinstance(sweeps, list) or not sweeps:
        raise _problem(name, "`sweeps` is not a non-empty list")
    own = doc.get("models") or {}
    if not isinstance(own, dict):
        raise _problem(name, "`models` is not a mapping of model cards")
    cards = {**load_cards(path.parent / "model_cards.yaml"), **own}
    out = [_sweep(s, cards, calibrated, name) for s in sweeps]
    ids = [s.id for s in out]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise CompileError(Diagnostic(SWEEPS_DUPLICATE, f"two sweeps are named `{twice[0]}`"))
    return out
