"""The server's pieces without a client: cancellation of slow work, positions, the P8050 refusal."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from primus_lang.ir.span import Span
from primus_lang.lower import load_space
from primus_lang.lsp.analysis import analyse, source_of
from primus_lang.lsp.positions import from_client, span_range, utf16_units
from primus_lang.lsp.slow import Cancelled, SlowWork, fitting_points

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "llama3_1_70b_mi325x.prx"


def test_a_cancelled_proof_stops_and_a_newer_job_cancels_the_older() -> None:
    space = load_space(EXAMPLE)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        fitting_points(space, stop)
    work = SlowWork()
    gate = threading.Event()
    started = threading.Event()

    def blocker(ev: threading.Event) -> str:
        started.set()
        gate.wait(60)  # hang guard only: released below
        if ev.is_set():
            raise Cancelled
        return "old"

    [old] = work.submit("doc", [blocker])
    assert started.wait(60)
    [queued_old] = work.submit("doc", [lambda ev: "newer"])
    [new] = work.submit("doc", [lambda ev: "newest"])
    gate.set()
    with pytest.raises(Cancelled):
        old.result(60)
    assert queued_old.cancelled()
    assert new.result(60) == "newest"
    work.shutdown()


def test_fitting_points_counts_like_the_prefilter() -> None:
    fits = fitting_points(load_space(EXAMPLE), threading.Event())
    assert fits.legal == 5544 and 0 < fits.fitting <= fits.legal and fits.least_peak <= fits.usable


def test_positions_count_utf16_units_and_code_points() -> None:
    text_lines = ["a = \"𝄞x\" # é"]
    assert utf16_units("𝄞") == 2
    # column 7 (code points, 1-based) is `x`: 6 code points before it, 7 UTF-16 units
    start, end = span_range(text_lines, Span("f", 1, 7, 1, 8), utf16_units)
    assert start == (0, 7) and end == (0, 8)
    assert from_client(text_lines, 0, 7, utf16_units) == (0, 6)


def test_analysis_matches_check_and_reads_bad_bytes_from_disk(tmp_path: Path) -> None:
    ok = analyse(EXAMPLE.read_text(), str(EXAMPLE))
    assert ok.diagnostics == () and [(c.raw, c.legal) for c in ok.counts] == [(28728, 5544)]
    path = tmp_path / "bad.prx"
    path.write_bytes(b"model m { # \xff\n}\n")
    shown = path.read_bytes().decode("utf-8", "replace")
    assert isinstance(source_of(shown, str(path)), bytes)
    [diag] = analyse(shown, str(path)).diagnostics
    assert diag.code.id == "P1009"
    # an edited buffer is the editor's text, whatever the file on disk holds
    assert source_of(shown + "x", str(path)) == shown + "x"


def test_lsp_without_pygls_is_a_diagnostic() -> None:
    code = "import sys; sys.modules['pygls'] = None; from primus_lang.cli import main; sys.exit(main(['lsp']))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "P8050" in done.stderr and "primusc[lsp]" in done.stderr


def test_hover_and_completion_on_a_spaces_statements_and_sizes() -> None:
    """A new user's trial: hover said nothing on `tokens_per_gpu`, `300 evals`, `10 min`, `headroom` or the
    target line, and completion offered nothing after `tp : `."""
    from primus_lang.lsp.complete import complete
    from primus_lang.lsp.navigate import hover

    text = ("space s on c {\n  tp : \n  maximize tokens_per_gpu\n  budget 300 evals, 10 min\n"
            "  fits memory headroom 5%\n  target bridge + slurm\n}\n")
    lines = text.split("\n")

    def said(line: int, word: str) -> str:
        facts = hover(None, text, None, lines, line, lines[line].index(word) + 1, {})
        return "\n".join(facts.parts) if facts is not None else ""

    assert "tokens trained per second per GPU" in said(2, "tokens_per_gpu")
    assert "`N evals`" in said(3, "evals") and "`N evals`" in said(3, "min")
    assert "headroom" in said(4, "headroom") and "megatron, primus or bridge" in said(5, "slurm")
    offered = [label for label, *_ in complete(text, None, lines, 1, len(lines[1]))]
    assert offered[:4] == ["1", "2", "4", "8"] and "pow2(1 .. 8)" in offered
    metrics = {label: doc for label, _kind, _detail, doc in complete(text, None, lines, 2, len("  maximize "))}
    assert {"tokens_per_gpu", "time_to_train", "cost"} <= set(metrics) and metrics["cost"]
