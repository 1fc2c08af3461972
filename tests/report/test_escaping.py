"""Any text a user or a stage puts into the report comes out escaped, whatever it holds."""

from __future__ import annotations

import html
import math

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from primus_lang.report import render_report
from primus_lang.report.view import MemoryTerm, RankMemory, Trajectory, TrajectoryPoint
from tests.report.synthetic import report

BASE = report(n=12)
# The sentinels make each text unique in the page, so finding it raw means it was not escaped.
nasty = st.text(alphabet=st.sampled_from(list("<>&\"'/=; ab\u00e9\u2603\ufeff")), min_size=1,
                max_size=24).map(lambda t: f"Zq{t}Zq")


@settings(max_examples=40, deadline=None)
@given(nasty, nasty, nasty, nasty)
def test_every_text_is_escaped(space: str, label: str, term: str, strategy: str) -> None:
    assert BASE.winner is not None
    rank = RankMemory(name=label, stage=0, terms=(MemoryTerm(term, 1 << 30, formula=term),), total=1 << 30)
    winner = attrs.evolve(BASE.winner, label=label, knobs=((term, label),), ranks=(rank,),
                          breakdown=((term, 1.0), ("compute", 2.0)))
    data = attrs.evolve(BASE, space=space, winner=winner, notes=((term, strategy),),
                        trajectories=(Trajectory(strategy, (TrajectoryPoint(1, 1.0, 1.0),
                                                            TrajectoryPoint(2, math.nan, 1.0))),))
    page = render_report(data)
    for text in (space, label, term, strategy):
        if any(c in text for c in "<>&\"'"):
            assert text not in page
        assert html.escape(text) in page or html.escape(text, quote=False) in page
    assert "<script" not in page.replace("&lt;script", "")
