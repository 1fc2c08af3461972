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


def test_the_recipe_with_a_change_settles_the_knobs_that_depend_on_it(tmp_path: object) -> None:
    from pathlib import Path

    from primus_lang.check import baseline_point, legality

    text = (data_dir("examples") / "llama3_70b_h100.prx").read_text()
    at = text.index("  fits memory")
    path = Path(str(tmp_path)) / "recipe.prx"
    path.write_text(text[:at] + "  baseline { tp = 4; pp = 4; schedule = interleaved; vpp = 5; tp_comm_overlap = true }\n"
                    + text[at:])
    space = load_space(path)
    base = baseline_point(space)
    assert base is not None and parse_point(space, "baseline") == base
    # without pipeline stages there is no interleaved schedule, and at TP 1 no TP overlap: as enumeration
    # settles a conditional axis whose condition fails; the rest stays the recipe's
    assert parse_point(space, "baseline,pp=1") == base.replace(pp=1, schedule="1f1b", vpp=1)
    assert parse_point(space, "baseline,tp=1") == base.replace(tp=1, tp_comm_overlap=False)
    assert parse_point(space, "baseline,tp=2") == base.replace(tp=2)
    for text_point in ("baseline,pp=1", "baseline,tp=1", "baseline,tp=2"):
        assert legality(space, parse_point(space, text_point)) == [], text_point


def test_a_knob_the_space_never_names_is_outside_at_another_value() -> None:
    # the space leaves fp8_param_gather at its default in every point: asking for it on is a point it never holds
    space = load_space(data_dir("examples") / "llama3_1_70b_mi325x.prx")
    notes = outside(space, parse_point(space, "precision=fp8,sharding=dist_opt,fp8_param_gather=true"))
    assert notes == ["`fp8_param_gather` = true, where the space leaves it at its default false"]
