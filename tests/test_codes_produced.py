"""Every registered diagnostic code is produced by some test: seen made, not only named.

A whole-suite run records the code of every ``Diagnostic`` (and legality violation) any of its
processes makes, the ``primusc`` subprocesses tests start included, and fails if a registered code
was never produced
(tests/codes_seen.py, called from tests/conftest.py; ``NOT_YET_PRODUCED`` there lists, with reasons,
what no test produces yet). ``PRODUCERS`` below holds small inputs for codes no other test
produces; this file runs them and checks the recorder itself.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from primus_lang.check import summarize
from primus_lang.check.enumerate import require_legal
from primus_lang.diagnostics import CompileError, all_codes
from primus_lang.diagnostics.core import RECORD_CODES
from primus_lang.ir import Candidate
from primus_lang.lower import load_space
from tests.codes_seen import NEEDS, NOT_YET_PRODUCED, produced

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
    "P4042": space_of("  fp8_param_gather = true"),
    "P4043": space_of("  attention = fa2", model="gpt_oss_120b"),
    "P4046": space_of('  cross_entropy = te\n  assume megatron_version = "core_v0.19"'),
    # a pipeline of more slots than the projection simulates (tests/bad_inputs/test_deep_pipelines.py)
    "P4191": "import hardware.amd (mi325x)\n"
             "cluster c { gpu = mi325x; nodes = 131072; gpus_per_node = 8; scale_up_domain = 1048576 }\n"
             "model m { num_layers = 4096; hidden = 64; ffn_hidden = 64; heads = 4; vocab = 10; seq_len = 8 }\n"
             "space s on c { model = m; gbs = 16777216; pp = 1024 }\n",
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


def _internal_error(tmp: Path) -> set[str]:
    """What no input may produce (the hostile-input tests assert its absence): a command that fails
    with an unexpected exception is reported as P9001 with exit 2, never a traceback."""
    import contextlib
    import io
    from unittest import mock

    import primus_lang.commands.explain as explain
    from primus_lang.cli import main

    def broken(_args: object) -> int:
        raise ZeroDivisionError("a bug")

    out = io.StringIO()
    with mock.patch.object(explain, "run", broken), contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
        status = main(["explain", "P9001", "--error-format", "short"])
    assert status == 2 and "Traceback" not in out.getvalue(), out.getvalue()
    return set(re.findall(r"\[(P\d{4})\]", out.getvalue()))


PRODUCERS: dict[str, Callable[[Path], set[str]]] = {
    "P9001": _internal_error,
    "P6806": _downscaled_op_recompute,
    "P6002": _calibrate_without_runs,
    "P8903": _report_not_written,
    "P8904": _report_without_its_space,
    **{code: (lambda tmp, code=code: _from_source(code, tmp)) for code in SOURCES},  # type: ignore[misc]
    "P2012": _unknown_space,
    "P8004": _unknown_strategy,
}


def test_the_recorder_sees_codes_made_in_process_and_in_a_primusc_subprocess(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "codes"
    folder.mkdir()
    monkeypatch.setenv(RECORD_CODES, str(folder))
    assert "P8004" in _unknown_strategy(tmp_path)
    done = subprocess.run([sys.executable, "-m", "primus_lang.cli", "check", str(tmp_path / "gone.prx")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "P2003" in done.stderr
    assert {"P8004", "P2003"} <= produced(folder)
    files = [path.read_text().split() for path in folder.glob("codes-*.txt")]
    assert len(files) == 2 and all(len(set(ids)) == len(ids) for ids in files)  # a file per process, a code once


def test_codes_not_yet_produced_are_registered_and_say_why() -> None:
    codes = {c.id for c in all_codes()}
    assert set(NOT_YET_PRODUCED) <= codes, set(NOT_YET_PRODUCED) - codes
    assert all(reason.strip() for reason in NOT_YET_PRODUCED.values())
    assert not set(NOT_YET_PRODUCED) & set(PRODUCERS)
    needed = set().union(*NEEDS.values())  # left to tests that need an optional package
    assert needed <= codes, needed - codes


@pytest.mark.parametrize("code", sorted(PRODUCERS))
def test_producer(code: str, tmp_path: Path) -> None:
    assert code in PRODUCERS[code](tmp_path)
