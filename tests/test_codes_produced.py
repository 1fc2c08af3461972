"""Every registered diagnostic code is produced by some test.

A code counts as produced when a test names it (its id, its name or its constant: the bad-input
snapshots, the focused tests of each stage) or when ``PRODUCERS`` below holds a small input that
produces it, which this file runs. ``NOT_YET_PRODUCED`` lists what is left: a new code must come
with a test, and a code leaves the list once one produces it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from primus_lang.check import summarize
from primus_lang.check.enumerate import require_legal
from primus_lang.diagnostics import CompileError, all_codes
from primus_lang.ir import Candidate
from primus_lang.lower import load_space

TESTS = Path(__file__).parent
HEAD = "import models.llama3 (llama3_1_8b)\nimport models.mixtral (mixtral_8x22b)\n" \
       "import models.gpt_oss (gpt_oss_120b)\nimport clusters.amd (mi325x_x8)\n"


def space_of(body: str, model: str = "llama3_1_8b") -> str:
    return HEAD + f"space s on mi325x_x8 {{\n  model = {model}\n  gbs = 256\n{body}\n}}\n"


# A legality rule that alone removes every point of a space is reported under its own code.
SOURCES: dict[str, str] = {
    "P4005": space_of("  tp = 1\n  tp_comm_overlap = true"),
    "P4008": space_of("  pp = 1\n  vpp = 2"),
    "P4009": space_of("  pp = 2\n  vpp = 1\n  schedule = interleaved"),
    "P4010": space_of("  pp = 1\n  schedule = zero_bubble"),
    "P4012": space_of("  cp = 4\n  seq_len = 4100"),
    "P4013": space_of("  recompute = full(layers: 33)"),
    "P4014": space_of("  sharding = none\n  overlap_param_gather = true"),
    "P4015": space_of("  sharding = fsdp\n  pp = 2"),
    "P4016": space_of("  ep = 3", "mixtral_8x22b"),
    "P4017": space_of("  ep = 2"),
    "P4018": space_of("  ep = 8\n  etp = 3", "mixtral_8x22b"),
    "P4019": space_of("  tp = 2\n  etp = 2", "gpt_oss_120b"),
    "P4020": space_of("  pp = 2\n  schedule = zero_bubble\n  recompute = full(layers: 1)"),
    "P4021": space_of("  ep = 8\n  tp = 2\n  sequence_parallel = false", "mixtral_8x22b"),
    "P4022": space_of("  ep = 1\n  ep_comm_overlap = true", "mixtral_8x22b"),
    "P3011": HEAD + "model m = llama3_1_8b { moe = 1 }\n",
    "P3014": space_of("  seq_len : 1 .. 150000"),
    "P2013": HEAD,
}


def _from_source(code: str, tmp: Path) -> set[str]:
    path = tmp / "case.prx"
    path.write_text(SOURCES[code], encoding="utf-8")
    try:
        space = load_space(path)
        require_legal(space, summarize(space))
    except CompileError as err:
        return {d.code.id for d in err.diagnostics}
    return set()


def _unknown_space(tmp: Path) -> set[str]:
    path = tmp / "case.prx"
    path.write_text(space_of(""), encoding="utf-8")
    try:
        load_space(path, "nope")
    except CompileError as err:
        return {d.code.id for d in err.diagnostics}
    return set()


def _unknown_strategy(tmp: Path) -> set[str]:
    from primus_lang.search.run import make_strategy

    try:
        make_strategy("nope")
    except CompileError as err:
        return {d.code.id for d in err.diagnostics}
    return set()


def _codes(call: Callable[[], object]) -> set[str]:
    try:
        call()
    except CompileError as err:
        return {d.code.id for d in err.diagnostics}
    return set()


def _trace(tmp: Path) -> Path:
    from primus_lang.search.budget import Limits
    from primus_lang.search.run import search_landscape
    from tests.search import synthetic

    path = tmp / "plan.jsonl"
    search_landscape(synthetic.landscape(), synthetic.evaluator(), "random", Limits(evaluations=5), seed=1, trace=path)
    return path


def _report_without_its_space(tmp: Path) -> set[str]:
    from primus_lang.report.rebuild import report_from_trace

    return _codes(lambda: report_from_trace(_trace(tmp), tmp / "r.html", space_file=str(tmp / "gone.prx")))


def _report_not_written(tmp: Path) -> set[str]:
    from primus_lang.report.rebuild import report_from_trace

    trace = _trace(tmp)
    return _codes(lambda: report_from_trace(trace, trace / "r.html"))  # a folder that is a file


def _calibrate_without_runs(tmp: Path) -> set[str]:
    import contextlib
    import io

    from primus_lang.cli import main

    runs = tmp / "runs.yaml"
    runs.write_text("- id: r1\n  model: no_such_model\n", encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
        main(["calibrate", "--runs", str(runs), "--error-format", "short"])
    return set(re.findall(r"\[(P\d{4})\]", out.getvalue()))


def _downscaled_op_recompute(tmp: Path) -> set[str]:
    from primus_lang.bench.compose import project_downscaled
    from primus_lang.ir import Recompute

    space = load_space(Path(__file__).parents[1] / "examples" / "llama3_1_8b_mi325x.prx")
    cand = Candidate(gbs=256, seq_len=8192, recompute=Recompute(kind="op"))
    # refused before any measurement: no database, device or oracle is reached
    return _codes(lambda: project_downscaled(space.model, space.cluster, cand, None, None, None))  # type: ignore[arg-type]


PRODUCERS: dict[str, Callable[[Path], set[str]]] = {
    "P6806": _downscaled_op_recompute,
    "P6002": _calibrate_without_runs,
    "P8903": _report_not_written,
    "P8904": _report_without_its_space,
    **{code: (lambda tmp, code=code: _from_source(code, tmp)) for code in SOURCES},  # type: ignore[misc]
    "P2012": _unknown_space,
    "P8004": _unknown_strategy,
}

# Codes no test produces yet (none today: keep it so).
NOT_YET_PRODUCED: frozenset[str] = frozenset()


def named_in_tests() -> set[str]:
    this = Path(__file__).resolve()
    text = "\n".join(p.read_text(encoding="utf-8", errors="ignore") for p in TESTS.rglob("*")
                     if p.is_file() and p.resolve() != this
                     and p.suffix in (".py", ".ambr", ".prx", ".yaml", ".json", ".txt", ".log", ".md"))
    words = set(re.findall(r"[A-Za-z0-9_-]+", text))
    import importlib
    import pkgutil

    import primus_lang.diagnostics as diagnostics

    constants: dict[str, set[str]] = {}
    for info in pkgutil.iter_modules(diagnostics.__path__):
        if info.name.startswith("codes_"):
            for key, value in vars(importlib.import_module(f"{diagnostics.__name__}.{info.name}")).items():
                if hasattr(value, "explanation"):
                    constants.setdefault(value.id, set()).add(key)
    return {c.id for c in all_codes() if c.id in words or c.name in words or constants.get(c.id, set()) & words}


def test_every_code_is_produced_by_some_test() -> None:
    covered = named_in_tests() | set(PRODUCERS)
    codes = {c.id for c in all_codes()}
    assert not codes - covered - NOT_YET_PRODUCED, sorted(codes - covered - NOT_YET_PRODUCED)
    assert codes >= NOT_YET_PRODUCED, NOT_YET_PRODUCED - codes


@pytest.mark.parametrize("code", sorted(PRODUCERS))
def test_producer(code: str, tmp_path: Path) -> None:
    assert code in PRODUCERS[code](tmp_path)
