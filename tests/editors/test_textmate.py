"""The TextMate grammar, run in the engine VS Code uses (vscode-textmate on Oniguruma): it scopes
every token of every example and stdlib file, and covers every keyword and terminal of
grammar/primus.lark, so the two cannot drift apart unnoticed."""

from __future__ import annotations

import json
import re
import subprocess

from tests.editors.conftest import VSCODE

ROOT = VSCODE.parents[1]
LARK = (ROOT / "grammar" / "primus.lark").read_text()

# For each terminal of the Lark grammar, a line holding one, the token, and the scope it must get.
TERMINALS = {
    "NAME": ("  tp : 1 | llama3", "llama3", "variable.other"),
    "DIGIT_NAME": ("  schedule : 1f1b", "1f1b", "constant.other.enum"),
    "FLOAT": ("  gemm_max = 0.78", "0.78", "constant.numeric"),
    "INT": ("  nodes = 1_000", "1_000", "constant.numeric"),
    "UNIT": ("  hbm_capacity = 80GiB", "GiB", "keyword.other.unit"),
    "DAYS": ("  require time_to_train <= 30 days", "days", "keyword.other.unit"),
    "STRING": ('  source = "a \\" b"', '"a \\" b"', "string.quoted"),
    "COMMENT": ("  # a comment", "# a comment", "comment.line"),
    "COMPARE": ("  require tp >= 2", ">=", "keyword.operator.comparison"),
    "ADD_OP": ("  let a = tp - 1", "-", "keyword.operator.arithmetic"),
    "MUL_OP": ("  let a = tp // 2", "//", "keyword.operator.arithmetic"),
    "PERCENT": ("  fits memory headroom 5%", "%", "keyword.other.unit"),
    "STAR": ("import models.llama3 (*)", "*", "keyword.operator"),
}
DEFINITION_KINDS = re.findall(r'"(\w+)"', re.search(r"^!def_kind:(.*)$", LARK, re.M).group(1))  # type: ignore[union-attr]
KEYWORD_LINES = {"x": ("  nic = 8 x 400 Gbps", "keyword."),
                 **{kind: (f"{kind} name {{", "storage.type") for kind in DEFINITION_KINDS}}


def tokenize(node: str, texts: dict[str, str]) -> dict[str, list[list[tuple[int, int, list[str]]]]]:
    done = subprocess.run([node, "test/tokenize.js", "-"], cwd=VSCODE, input=json.dumps(texts),
                          capture_output=True, text=True, timeout=600, check=True)
    data: dict[str, list[list[tuple[int, int, list[str]]]]] = json.loads(done.stdout)
    return data


def scope_at(tokens: list[tuple[int, int, list[str]]], at: int) -> list[str]:
    return next(scopes for start, end, scopes in tokens if start <= at < end)


def test_every_token_of_every_example_and_stdlib_file_is_scoped(node: str) -> None:
    files = sorted([*ROOT.glob("examples/**/*.prx"), *ROOT.glob("stdlib/**/*.prx")])
    assert len(files) > 15
    texts = {str(p.relative_to(ROOT)): p.read_text() for p in files}
    bare = []
    for name, rows in tokenize(node, texts).items():
        source = texts[name].split("\n")
        for row, tokens in enumerate(rows):
            for start, end, scopes in tokens:
                text = source[row][start:end]
                if text.strip() and (len(scopes) < 2 or any(s.startswith("invalid") for s in scopes)):
                    bare.append(f"{name}:{row + 1}:{start + 1}: {text!r} {scopes}")
    assert not bare, "\n".join(bare[:20])


def lark_terminals() -> set[str]:
    return {m.group(1) for m in re.finditer(r"^([A-Z_]+)(?:\.\d+)?\s*:", LARK, re.M)} - {"WS"}


def lark_literals() -> set[str]:
    rules = "\n".join(line for line in LARK.split("\n") if not re.match(r"^\s*(//|[A-Z_]+(\.\d+)?\s*:)", line))
    return set(re.findall(r'"([^"\\]+)"', rules))


def test_every_terminal_of_the_lark_grammar_has_a_scope(node: str) -> None:
    assert lark_terminals() == set(TERMINALS), "a terminal was added to or removed from primus.lark: add it here"
    texts = {name: line for name, (line, _, _) in TERMINALS.items()}
    got = tokenize(node, texts)
    for name, (line, token, scope) in TERMINALS.items():
        at = line.index(token)
        found = [scope_at(got[name][0], i) for i in range(at, at + len(token))]
        assert all(any(s.startswith(scope) for s in scopes) for scopes in found), (name, found)


def test_every_keyword_and_punctuation_of_the_lark_grammar_has_a_scope(node: str) -> None:
    literals = lark_literals()
    keywords = {w for w in literals if re.fullmatch(r"[a-z]+", w)}
    assert {"import", "space", "require", "when", "step", "headroom", "usd", "x", "in"} <= keywords
    texts = {w: KEYWORD_LINES.get(w, (f"  {w} y", ""))[0] for w in keywords}
    punctuation = sorted(literals - keywords)
    texts["<punctuation>"] = "  " + " ".join(punctuation)
    got = tokenize(node, texts)
    for word in keywords:
        line, scope = KEYWORD_LINES.get(word, (texts[word], "keyword."))
        scopes = scope_at(got[word][0], line.index(word))
        assert any(s.startswith(scope) for s in scopes), (word, scopes)
    line = texts["<punctuation>"]
    for mark in punctuation:
        scopes = scope_at(got["<punctuation>"][0], line.index(f" {mark}") + 1)
        assert len(scopes) > 1 and not any(s.startswith("invalid") for s in scopes), (mark, scopes)
