"""A `--point` whose named knobs are legal together but contradict a knob it leaves out (filled with its
axis's first value): the refusal names the legal point that keeps what was named."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.check import legality, nearest_legal_point, parse_point
from primus_lang.cli import main
from primus_lang.lower import load_space

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llama3_70b_h100.prx"


def test_the_nearest_legal_point_keeps_the_named_knobs() -> None:
    space = load_space(EXAMPLE)
    text = "tp=4,pp=8,vpp=5,mbs=1"
    cand = parse_point(space, text)
    assert list(legality(space, cand))  # vpp=5 beside the schedule axis's first value, 1f1b
    nearer = nearest_legal_point(space, text, cand)
    assert nearer == "tp=4,pp=8,vpp=5,mbs=1,schedule=interleaved"
    assert not list(legality(space, parse_point(space, nearer)))
    assert nearest_legal_point(space, "tp=3", parse_point(space, "tp=3")) is None


@pytest.mark.parametrize("command", [["emit", "--out", "OUT"], ["explain"], ["check", "--explain"]])
def test_each_point_command_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    """A user's `emit --point tp=4,pp=8,vpp=5,mbs=1` was told to tie vpp to the schedule in the space, which
    already does: the fix was `schedule=interleaved` in the point."""
    argv = [command[0], str(EXAMPLE), *[str(tmp_path / "o") if a == "OUT" else a for a in command[1:]],
            "--point", "tp=4,pp=8,vpp=5,mbs=1"]
    assert main(argv) == 1
    err = " ".join(capsys.readouterr().err.split())
    # the nearest legal point that also fits in memory: the nearest legal one (schedule=interleaved alone) is
    # 79.7 GiB where 75.7 GiB is usable, and a trial's emit of it was refused again (P5001)
    nearer = "tp=4,pp=8,vpp=5,mbs=1,recompute=full(1,block),schedule=interleaved"
    assert f"`--point {nearer}` keeps the knobs you named and is legal" in err
    if command[0] == "emit":
        assert main(["emit", str(EXAMPLE), "--point", nearer, "--out", str(tmp_path / "o2")]) == 0
