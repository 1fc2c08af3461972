#!/usr/bin/env python
"""Typing latency of `primusc lsp`: how long after an edit the editor has the new diagnostics.

Starts the server as an editor does (over stdio, through pygls's client), opens an example, then
makes edits that alternately break the file (an unknown knob) and fix it, each a text not seen before, and times each edit from
the `didChange` it sends to the `publishDiagnostics` that answers it. The memory proof of the
space's points runs meanwhile on the server's slow-work thread, as it would while one types.

    python benchmarks/lsp_latency.py [FILE] [--edits 40] [--lines 2000]

``--lines N`` writes a document of about N lines (the example with definitions of its model added
before its space, the shape of a file of many variants) and measures that instead. The CPU the server
spends per edit before it publishes (parse, lower, check) is also measured in this process with the
server's own `analyse`, since the wall time on a busy machine is mostly waiting.

The figure in docs/editors.md comes from this script; no test times anything.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls import uris
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent


async def measure(path: Path, edits: int) -> list[float]:
    client = LanguageClient("lsp-latency", "1")
    arrived: asyncio.Queue[tuple[int | None, int]] = asyncio.Queue()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams) -> None:
        arrived.put_nowait((params.version, len(params.diagnostics)))

    await client.start_io(sys.executable, "-m", "primus_lang.cli", "lsp")
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    client.initialized(lsp.InitializedParams())
    uri = uris.from_fs_path(str(path.resolve()))
    assert uri is not None
    text = path.read_text()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "primus", 1, text)))
    await arrived.get()
    anchor = text.index("\n}") if "\n}" in text else len(text)
    seconds = []
    for version in range(2, edits + 2):
        broken = version % 2 == 0
        edited = text[:anchor] + f"\n  # edit {version}" + ("\n  tpp = 2" if broken else "") + text[anchor:]
        sent = time.perf_counter()
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version, uri), [lsp.TextDocumentContentChangeWholeDocument(edited)]))
        while True:
            got, count = await asyncio.wait_for(arrived.get(), 120)
            if got == version:
                break
        seconds.append(time.perf_counter() - sent)
        assert (count > 0) == broken, (version, count)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return seconds


def generated(example: Path, lines: int, out: Path) -> Path:
    """The example with model definitions over its model inserted before its space, to about ``lines``."""
    text = example.read_text()
    model = text.split("model = ", 1)[1].split()[0]
    count = max(0, (lines - text.count("\n")) // 3)
    variants = "".join(f"model variant_{i} = {model} {{\n  num_layers = {40 + i % 40}\n}}\n" for i in range(count))
    at = text.index("\nspace ") + 1
    out.write_text(text[:at] + variants + text[at:])
    return out


def cpu_per_edit(path: Path, edits: int) -> list[float]:
    from primus_lang.lsp.analysis import analyse

    text = path.read_text()
    anchor = text.index("\n}") if "\n}" in text else len(text)
    analyse(text, str(path))  # the document as opened
    seconds = []
    for version in range(2, edits + 2):
        edited = text[:anchor] + f"\n  # edit {version}" + ("\n  tpp = 2" if version % 2 == 0 else "") + text[anchor:]
        start = time.process_time()
        analyse(edited, str(path))
        seconds.append(time.process_time() - start)
    return seconds


def _summary(seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p90 = ms[min(len(ms) - 1, int(0.9 * len(ms)))]
    return f"median {statistics.median(ms):.0f} ms, p90 {p90:.0f} ms, max {ms[-1]:.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", nargs="?", default=str(ROOT / "examples" / "llama3_1_70b_mi325x.prx"))
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--lines", type=int, default=0, help="measure a generated document of about this many lines")
    args = parser.parse_args()
    path = Path(args.file)
    if args.lines:
        import tempfile

        path = generated(path, args.lines, Path(tempfile.mkdtemp()) / f"{path.stem}_{args.lines}.prx")
    lines = path.read_text().count("\n")
    wall = asyncio.run(measure(path, args.edits))
    cpu = cpu_per_edit(path, args.edits)
    print(f"{path.name} ({lines:,} lines): {len(wall)} edits; diagnostics after an edit (wall): {_summary(wall)}; "
          f"the server's CPU per edit (analyse): {_summary(cpu)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
