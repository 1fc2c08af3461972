"""A tiny SVG writer: every attribute and text node is escaped here, so charts never build markup."""

from __future__ import annotations

import html
import math


def _num(value: float) -> str:
    # Two decimals are below a pixel's resolution and keep the file small.
    if not math.isfinite(value):
        raise ValueError(f"non-finite SVG coordinate {value!r}")
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _attrs(attrs: dict[str, object]) -> str:
    parts = []
    for key, value in attrs.items():
        if value is None:
            continue
        name = key.rstrip("_").replace("_", "-")
        text = _num(value) if isinstance(value, float) else str(value)
        parts.append(f'{name}="{html.escape(text, quote=True)}"')
    return " ".join(parts)


class Svg:
    """Collects elements of one chart; ``render`` returns the ``<svg>`` element."""

    def __init__(self, width: float, height: float, label: str, css_class: str = "chart") -> None:
        self.width = width
        self.height = height
        self.label = label
        self.css_class = css_class
        self._parts: list[str] = []

    def _el(self, tag: str, attrs: dict[str, object], title: str | None = None, text: str | None = None) -> None:
        inner = ""
        if title:
            inner += f"<title>{html.escape(title)}</title>"
        if text is not None:
            inner += html.escape(text)
        self._parts.append(f"<{tag} {_attrs(attrs)}>{inner}</{tag}>" if inner else f"<{tag} {_attrs(attrs)}/>")

    def rect(
        self, x: float, y: float, w: float, h: float, fill: str, title: str | None = None, **extra: object
    ) -> None:
        self._el("rect", {"x": float(x), "y": float(y), "width": float(max(w, 0.0)),
                          "height": float(max(h, 0.0)), "fill": fill, **extra}, title)

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str, **extra: object) -> None:
        self._el("line", {"x1": float(x1), "y1": float(y1), "x2": float(x2), "y2": float(y2),
                          "stroke": stroke, **extra})

    def circle(self, cx: float, cy: float, r: float, fill: str, title: str | None = None, **extra: object) -> None:
        self._el("circle", {"cx": float(cx), "cy": float(cy), "r": float(r), "fill": fill, **extra}, title)

    def polyline(self, points: list[tuple[float, float]], stroke: str, **extra: object) -> None:
        if not points:
            return
        coords = " ".join(f"{_num(x)},{_num(y)}" for x, y in points)
        self._el("polyline", {"points": coords, "fill": "none", "stroke": stroke, **extra})

    def path(self, d: str, **extra: object) -> None:
        self._el("path", {"d": d, **extra})

    def text(self, x: float, y: float, content: str, **extra: object) -> None:
        self._el("text", {"x": float(x), "y": float(y), **extra}, text=content)

    def raw_defs(self, defs: str) -> None:
        """Fixed markup written by this package (patterns), never user text."""
        self._parts.insert(0, f"<defs>{defs}</defs>")

    def render(self) -> str:
        head = _attrs({
            "class": self.css_class, "viewBox": f"0 0 {_num(self.width)} {_num(self.height)}",
            "width": float(self.width), "height": float(self.height), "role": "img", "aria-label": self.label,
            "xmlns": "http://www.w3.org/2000/svg",
        })
        return f"<svg {head}>" + "".join(self._parts) + "</svg>"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round axis ticks (1, 2, 5 times a power of ten) covering ``[low, high]``."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    # Multiples of the step, not a running sum, so float error does not accumulate along the axis.
    k = math.floor(low / step)
    ticks = [k * step]
    while ticks[-1] < high - step * 1e-9:
        k += 1
        ticks.append(k * step)
    return ticks


class Scale:
    """A linear map from data to pixels."""

    def __init__(self, d0: float, d1: float, p0: float, p1: float) -> None:
        self.d0, self.d1, self.p0, self.p1 = d0, d1, p0, p1

    def __call__(self, value: float) -> float:
        if self.d1 == self.d0:
            return (self.p0 + self.p1) / 2
        return self.p0 + (value - self.d0) * (self.p1 - self.p0) / (self.d1 - self.d0)
