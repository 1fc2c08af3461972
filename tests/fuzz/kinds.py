"""Generators of the hostile inputs the fourth review found kinds of (issue 34), each from a seeded
``random.Random`` so a run repeats from its seed: sources mutated by structure across files (items
and statements swapped, doubled and spliced between files), import graphs (chains, cycles, diamonds,
self-imports, devices, FIFOs, link loops), data files with control characters and numbers of
thousands of digits, hand-edited search traces, and JSON-RPC requests for the language server.

Each generator writes what it makes under a folder it is given and returns what to run; the contract
it is held to is in ``tests/fuzz/test_kinds.py`` and docs/fuzzing.md. Nothing here imports
``primus_lang`` except to find the files it mutates.
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.prx"))
STDLIB = sorted((ROOT / "primus_lang" / "stdlib").rglob("*.prx"))
PRIMUS = sorted((ROOT / "tests" / "recipes" / "fixtures").rglob("*.yaml"))
RUNS = ROOT / "validation" / "published_runs.yaml"

_ITEM = re.compile(r"^(?=(?:import|model|gpu|cluster|space|site)\b)", re.MULTILINE)
_CONTROL = [chr(c) for c in (*range(0, 9), 11, 12, *range(14, 32), 127, *range(128, 160))] + ["\ufffe"]
_HUGE = ["9" * 5001, "1" * 101, "-" + "9" * 400, "1e400", "1e-320", "nan", "-inf", "0x" + "f" * 60]


def _items(text: str) -> list[str]:
    return [p for p in _ITEM.split(text) if p.strip()]


def spliced(rng: random.Random) -> str:
    """Top-level items and the statements inside them swapped, doubled and spliced between two files."""
    a, b = rng.choice(EXAMPLES).read_text(), rng.choice([*EXAMPLES, *STDLIB]).read_text()
    items, theirs = _items(a), _items(b)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        if op == 0 and theirs:
            items.insert(rng.randrange(len(items) + 1), rng.choice(theirs))
        elif op == 1 and len(items) > 1:
            i, j = rng.randrange(len(items)), rng.randrange(len(items))
            items[i], items[j] = items[j], items[i]
        elif op == 2 and items:
            items.insert(rng.randrange(len(items) + 1), rng.choice(items))
        elif op == 3 and items:
            del items[rng.randrange(len(items))]
        else:  # a statement line of one item moved into another (or into the other file's)
            lines = "".join(items).splitlines(keepends=True)
            donor = "".join(theirs).splitlines(keepends=True) or lines
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(donor))
            items = ["".join(lines)]
    return "".join(items)


def import_graph(rng: random.Random, folder: Path) -> Path:
    """A top file importing a graph of files: a long chain, a cycle, a diamond, self-imports, and
    imports of a device, a FIFO, a link loop or a missing file."""
    folder.mkdir(parents=True, exist_ok=True)
    n = rng.choice([3, 20, 300])
    names = [f"f{i}.prx" for i in range(n)]
    edges: dict[str, list[str]] = {name: [] for name in names}
    shape = rng.choice(["chain", "cycle", "diamond", "self", "special"])
    for i, name in enumerate(names[:-1]):
        edges[name].append(names[i + 1])
    if shape == "cycle":
        edges[names[-1]].append(names[rng.randrange(n)])
    elif shape == "diamond" and n > 3:
        edges[names[0]] += [names[2], names[3]]
        edges[names[2]].append(names[-1])
    elif shape == "self":
        name = rng.choice(names)
        edges[name] += [name] * rng.randint(1, 6)
    special = ""
    if shape == "special":
        special = rng.choice(["zero", "fifo", "loop", "missing", "folder"])
        target = folder / f"{special}.prx"
        if special == "zero":
            target.symlink_to("/dev/zero")
        elif special == "fifo":
            os.mkfifo(target)
        elif special == "loop":
            target.symlink_to(target)
        elif special == "folder":
            target.mkdir()
        edges[names[-1]].append(target.name)
    for name in names:
        body = "".join(f'import "./{t}" (*)\n' for t in edges[name])
        body += f"model m_{name[:-4]} = llama3_1_8b {{ num_layers = {rng.choice([2, 32, 0])} }}\n"
        (folder / name).write_text("import models.llama3 (llama3_1_8b)\n" + body)
    top = folder / "top.prx"
    example = (ROOT / "examples" / "llama3_1_8b_mi325x.prx").read_text()
    top.write_text(f'import "./{names[0]}" (*)\n' + example)
    return top


def _insert(rng: random.Random, text: str, what: str) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + what + text[at:]


def data_file(rng: random.Random, folder: Path) -> tuple[str, Path]:
    """(kind, path): a Primus experiment, a runs file or a JSON data file with control characters,
    huge numbers or both inserted where a value or a comment goes."""
    folder.mkdir(parents=True, exist_ok=True)
    kind = rng.choice(["primus", "runs", "json"])
    if kind == "primus":
        text = rng.choice(PRIMUS).read_text()
    elif kind == "runs":
        text = "\n".join(RUNS.read_text().splitlines()[:400]) + "\n"
    else:
        text = json.dumps({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
                           "num_attention_heads": 32, "vocab_size": 128256, "intermediate_size": 14336})
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.5:
            text = _insert(rng, text, rng.choice(_CONTROL))
        else:
            number = rng.choice(_HUGE)
            spots = [m.start() for m in re.finditer(r"(?<=: )\S", text)] or [len(text)]
            at = rng.choice(spots)
            end = at + len(re.match(r"[^\s,}]*", text[at:]).group())  # type: ignore[union-attr]
            text = text[:at] + number + text[end:]
    path = folder / {"primus": "experiment.yaml", "runs": "runs.yaml", "json": "config.json"}[kind]
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return kind, path


_EDITS: list[Any] = [0, -1, 7, 2**63, "x", None, [], {}, 1e309, True, "9" * 5001]


def edited_trace(rng: random.Random, events: list[dict[str, Any]]) -> str:
    """A search trace (its events) edited as a person might: candidates' knobs set to values the space
    cannot have, keys dropped, events doubled or reordered."""
    out = [json.loads(json.dumps(e)) for e in events]
    for _ in range(rng.randint(1, 4)):
        e = rng.choice(out)
        op = rng.randrange(4)
        cand = e.get("candidate")
        if op == 0 and isinstance(cand, dict) and cand:
            cand[rng.choice(sorted(cand))] = rng.choice(_EDITS)
        elif op == 1 and e:
            del e[rng.choice(sorted(e))]
        elif op == 2:
            out.insert(rng.randrange(len(out) + 1), json.loads(json.dumps(e)))
        else:
            rng.shuffle(out)
    lines = []
    for e in out:
        try:
            lines.append(json.dumps(e))
        except ValueError:
            lines.append(json.dumps(str(e)))
    return "\n".join(lines) + "\n"


_METHODS = ["textDocument/hover", "textDocument/completion", "textDocument/definition", "textDocument/formatting",
            "textDocument/documentSymbol", "textDocument/codeLens", "no/such/method"]
_VALUES: list[Any] = [-1, 2**31, 2**53, "x", None, [], {}, 0.5, True]


def lsp_request(rng: random.Random, uris: list[str]) -> tuple[str, Any]:
    """(method, params): a request of the protocol with params well formed, mutated, or of no shape."""
    method = rng.choice(_METHODS)
    params: Any = {"textDocument": {"uri": rng.choice(uris)}, "position": {"line": rng.randint(0, 40),
                                                                          "character": rng.randint(0, 40)},
                   "options": {"tabSize": 2, "insertSpaces": True}}
    for _ in range(rng.randint(0, 2)):
        where = rng.choice(["textDocument", "position", "uri", "line", "whole"])
        if where == "whole":
            params = rng.choice(_VALUES)
        elif isinstance(params, dict) and where in params:
            params[where] = rng.choice(_VALUES)
        elif isinstance(params, dict) and isinstance(params.get("position"), dict) and where == "line":
            params["position"]["line"] = rng.choice(_VALUES)
        elif isinstance(params, dict) and isinstance(params.get("textDocument"), dict):
            params["textDocument"]["uri"] = rng.choice(["file:///dev/zero", "file:///nonexistent.prx", "", 5])
    return method, params
