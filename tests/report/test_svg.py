from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from primus_lang.report.svg import Scale, Svg, nice_ticks


def test_text_and_attributes_are_escaped() -> None:
    svg = Svg(100, 50, 'a "label" <b>')
    svg.text(1, 2, "<script>alert('x')</script> & more", fill='red" onload="x')
    svg.rect(0, 0, 10, 10, "#000", title="</title><script>")
    out = svg.render()
    assert "<script>" not in out
    assert "&lt;script&gt;" in out
    assert 'onload="x"' not in out
    assert "&quot;" in out


def test_non_finite_coordinates_are_refused() -> None:
    svg = Svg(10, 10, "x")
    with pytest.raises(ValueError):
        svg.circle(float("nan"), 1, 1, "#000")


def test_negative_sizes_are_clamped() -> None:
    svg = Svg(10, 10, "x")
    svg.rect(0, 0, -5, 3, "#000")
    assert 'width="0"' in svg.render()


@given(st.floats(-1e12, 1e12), st.floats(0.001, 1e12))
def test_ticks_cover_the_range_with_round_steps(low: float, span: float) -> None:
    # Chart ranges are never narrower than a millionth of their magnitude (bytes, seconds, tokens).
    assume(span >= abs(low) * 1e-6)
    high = low + span
    ticks = nice_ticks(low, high, 6)
    assert ticks[0] <= low + 1e-9 * abs(low) + 1e-12
    assert ticks[-1] >= high - 1e-9 * abs(high)
    assert 2 <= len(ticks) <= 14
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    # Far from zero a tick's float loses digits; the step must still be round to well within a pixel.
    assert any(math.isclose(mantissa, m, rel_tol=1e-3) for m in (1, 2, 2.5, 5, 10))


def test_scale_maps_ends_and_handles_a_flat_domain() -> None:
    s = Scale(0, 10, 100, 200)
    assert s(0) == 100 and s(10) == 200 and s(5) == 150
    assert Scale(3, 3, 0, 10)(3) == 5
