"""The report as a browser draws it: headless Chromium, no network, an empty profile."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from primus_lang.report import charts, render_report
from tests.report.pngread import coloured_pixels, decode
from tests.report.synthetic import report

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed"),
]
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars",
)


def chromium(tmp: Path, page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{len(list(tmp.iterdir()))}"
    profile.mkdir()
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    )


def screenshot(tmp: Path, page: Path, width: int, height: int, scale: float = 1.0) -> bytes:
    """A PNG of the page laid out ``width`` CSS pixels wide; ``scale`` < 1 shrinks the image, not the
    layout, which keeps the pure-Python PNG decoding of a long page fast."""
    png = tmp / (page.stem + ".png")
    chromium(tmp, page, f"--screenshot={png}", f"--window-size={width},{height}",
             f"--force-device-scale-factor={scale}")
    return png.read_bytes()


def test_the_browser_builds_every_chart(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_report(report()), encoding="utf-8")
    dom = chromium(tmp_path, page, "--dump-dom").stdout
    for cls in ("timeline", "memory", "scatter", "trajectory", "breakdown"):
        assert re.search(rf'<svg[^>]*class="chart {cls}"', dom), cls
    assert len(re.findall(r'class="block block-F"', dom)) > 10
    assert len(re.findall(r'class="term"', dom)) > 20
    assert len(re.findall(r'class="point"', dom)) > 10
    assert len(re.findall(r'class="evaluation"', dom)) > 10
    assert len(re.findall(r'class="part"', dom)) >= 5


def test_each_chart_paints_pixels(tmp_path: Path) -> None:
    data = report()
    assert data.winner is not None
    cands = [data.winner, *data.runners_up]
    svgs = {
        "timeline": charts.timeline_chart(data.winner),
        "memory": charts.memory_chart(data, cands[:2]),
        "scatter": charts.scatter_chart(data),
        "trajectory": charts.trajectory_chart(data),
        "breakdown": charts.breakdown_chart(cands),
    }
    # One page, each chart alone in a band of fixed height; one screenshot, then pixels per band.
    band = 600
    body = "".join(f"<div style='height:{band}px;overflow:hidden'>{svg}</div>" for svg in svgs.values())
    body += f"<div style='height:{band}px'></div>"  # an empty band: the control
    page = tmp_path / "charts.html"
    page.write_text(f"<!DOCTYPE html><html><body style='margin:0'>{body}</body></html>", encoding="utf-8")
    scale = 0.5
    png = decode(screenshot(tmp_path, page, 1000, band * (len(svgs) + 1), scale=scale))
    h = int(band * scale)
    for i, name in enumerate([*svgs, "empty"]):
        colour, ink = coloured_pixels(png, (0, i * h, int(1000 * scale), (i + 1) * h), step=2)
        if name == "empty":
            assert colour == 0 and ink == 0
            continue
        # Every second pixel of a half-size image; the trajectory is dots and lines, the rest filled bars.
        least = 60 if name == "trajectory" else 250
        assert colour > least, f"{name} painted {colour} coloured samples"
        assert ink > colour


def test_the_full_page_screenshot(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_report(report()), encoding="utf-8")
    png = screenshot(tmp_path, page, 1040, 1400, scale=0.5)
    image = decode(png)
    assert image[:2] == (520, 700) and len(image[3]) == 700
    colour, ink = coloured_pixels(image, step=2)
    assert colour > 500 and ink > colour
