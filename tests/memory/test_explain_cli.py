"""``primusc check FILE --explain --point ...`` prints the account of one candidate, or its JSON."""

from __future__ import annotations

import json

import pytest

from primus_lang.cli import main
from primus_lang.lower import load_space
from primus_lang.memory import account
from primus_lang.resources import data_dir

EXAMPLE = str(data_dir("examples") / "llama3_1_70b_mi325x.prx")


def test_json_is_the_account(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", EXAMPLE, "--explain", "--point", "tp=8,pp=2,mbs=1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    space = load_space(EXAMPLE)
    from primus_lang.check import parse_point

    acc = account(space.model, space.cluster, parse_point(space, "tp=8,pp=2,mbs=1"), space.settings)
    assert data["peak"]["total"] == acc.peak.total
    assert [r["total"] for r in data["ranks"]] == [r.total for r in acc.ranks]
    assert data["fits"] is True


def test_table_and_overflow(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", EXAMPLE, "--explain", "--point", "tp=1,pp=1,mbs=4"]) == 1
    out = capsys.readouterr().out
    assert "P5001" in out and "adam moments" in out and "act: fc1 output" in out
