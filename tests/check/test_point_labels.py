"""A label the tool prints (plan, project, the report, a manifest) reads back as the same candidate,
so a layout copied from one command into another's `--point` is the layout that was ranked."""

from __future__ import annotations

import pytest

from primus_lang.check import legal_points, parse_point
from primus_lang.check.point import outside
from primus_lang.lower import load_space
from primus_lang.resources import data_dir

EXAMPLES = sorted((data_dir("examples")).glob("*.prx"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_label_reads_back_as_its_candidate(path: object) -> None:
    space = load_space(path)  # type: ignore[arg-type]
    points = list(legal_points(space))
    assert points
    step = max(1, len(points) // 150)  # a spread of every example's points keeps the test quick
    for cand in points[::step]:
        assert parse_point(space, cand.label()) == cand, cand.label()
        assert outside(space, cand) == []  # a point of the space is never warned about


def test_a_left_out_knob_takes_its_default_where_the_space_allows_it() -> None:
    space = load_space(data_dir("examples") / "llama3_1_8b_mi325x.prx")
    # `tp_comm_overlap : true | false when tp > 1`: left out, it is false, as a label leaves it out
    assert parse_point(space, "tp=2").tp_comm_overlap is False
    assert parse_point(space, "tp=2,tp_comm_overlap=true").tp_comm_overlap is True


def test_a_point_the_space_never_searches_is_explained_with_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.cli import main

    example = data_dir("examples") / "llama3_1_8b_mi325x.prx"
    space = load_space(example)
    assert outside(space, parse_point(space, "recompute=full(5)")) != []
    assert main(["explain", str(example), "--point", "recompute=full(5)", "--json"]) == 0
    err = capsys.readouterr().err
    assert "W6001" in err and "full(5,block)" in err
