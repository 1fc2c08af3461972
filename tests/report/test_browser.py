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


def screenshot(tmp: Path, page: Path, width: int, height: int) -> bytes:
    png = tmp / (page.stem + ".png")
    chromium(tmp, page, f"--screenshot={png}", f"--window-size={width},{height}")
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
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    empty_colour, empty_ink = coloured_pixels(screenshot(tmp_path, blank, 1000, 700), step=2)
    assert empty_colour == 0 and empty_ink == 0
    for name, svg in svgs.items():
        page = tmp_path / f"{name}.html"
        page.write_text(f"<!DOCTYPE html><html><body style='margin:0'>{svg}</body></html>", encoding="utf-8")
        colour, ink = coloured_pixels(screenshot(tmp_path, page, 1000, 700), step=2)
        # Sampling every second pixel; the trajectory is dots and lines, the others filled bars.
        least = 300 if name == "trajectory" else 1000
        assert colour > least, f"{name} painted {colour} coloured samples"
        assert ink > colour


def test_the_full_page_screenshot(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_report(report()), encoding="utf-8")
    png = screenshot(tmp_path, page, 1040, 1400)
    width, height, _, _ = decode(png)
    assert (width, height) == (1040, 1400)
    colour, ink = coloured_pixels(png, step=3)
    assert colour > 2000 and ink > colour
