"""The Python API as docs/search.md shows it: its block runs as it stands and agrees with `plan`."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_documented_python_block_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "docs" / "search.md").read_text(encoding="utf-8")
    section = text[text.index("## Using it from Python"):]
    block = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert block is not None
    monkeypatch.chdir(ROOT)  # its paths are the repository's, as a reader of the docs runs it
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.group(1), "docs/search.md", "exec"), {})
    counts, search = out.getvalue().splitlines()
    raw, legal, tokens, low, high = map(int, counts.split())
    assert raw > legal > 0 and low < tokens < high
    # plan's winner on this space (the raw best and the tie-break's choice agree here)
    _best, winner, files = search.split(" ", 2)
    assert winner.startswith("tp=4,pp=8") and "launch.sbatch" in files


def test_a_hand_made_candidate_is_judged_before_its_rules() -> None:
    """A new user's trial: `tp=-1` projected a negative memory peak, `tp=0` divided by zero, `tp="4"` raised
    numpy's errors and `precision="fp9"` was projected as BF16; each is now a violation of its own."""
    import attrs

    from primus_lang.check import legality, parse_point
    from primus_lang.lower import load_space

    space = load_space(ROOT / "examples" / "llama3_70b_h100.prx")
    base = parse_point(space, "tp=8,pp=4")
    assert not legality(space, base)
    for change, code, said in (({"tp": -1}, "P3009", "`tp` must be at least 1, not -1"),
                               ({"tp": 0}, "P3009", "`tp` must be at least 1, not 0"),
                               ({"tp": "4"}, "P3007", "`tp` is '4', not an integer"),
                               ({"tp": 4.0}, "P3007", "`tp` is 4.0, not an integer"),
                               ({"precision": "fp9"}, "P3005", "`precision` is 'fp9', not one of bf16, fp8, fp4"),
                               ({"recompute": "full"}, "P3007", "`recompute` is 'full', not a Recompute")):
        (v,) = legality(space, attrs.evolve(base, **change))  # type: ignore[arg-type]
        assert (v.code, v.message) == (code, said) and "parse_point" in v.help


def test_library_calls_refuse_what_the_commands_refuse() -> None:
    from primus_lang.check import parse_point
    from primus_lang.diagnostics import CompileError
    from primus_lang.lower import load_space
    from primus_lang.memory import account, explain_overflow
    from primus_lang.search import Limits, run_search

    space = load_space(ROOT / "examples" / "llama3_70b_h100.prx")
    with pytest.raises(CompileError) as err:
        run_search(space, None, Limits(evaluations=0), seed=0)
    assert err.value.diagnostics[0].code.id == "P8009"
    fits = account(space.model, space.cluster, parse_point(space, "tp=8,pp=4"), space.settings)
    with pytest.raises(ValueError, match="no overflow to explain"):
        explain_overflow(fits, space.headroom)  # it said "exceeds ... by -27,890,306,252 bytes"
