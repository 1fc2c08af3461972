"""`parse_by_item` (the language server's and `loads_program`'s parse, one cached item at a time) gives
the tree `parse` gives, spans and comments included, and the same diagnostics for text that does not
parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.diagnostics import CompileError
from primus_lang.resources import data_dir
from primus_lang.syntax import parse, parse_by_item
from primus_lang.syntax.parser import _parse_text

SOURCES = sorted([*data_dir("examples").glob("*.prx"), *data_dir("stdlib").rglob("*.prx")])

EDGES = [
    'import models.llama3 (llama3_1_8b)\n# a } in a comment\nmodel a = llama3_1_8b { source = "a { b" }\n'
    "model b = a { num_layers = 2 }; model c = b { }\n  model d = c { }\n",
    "model a = b {\n  num_layers = 2\n",  # never closed
    "model a = b { }\n}\nmodel c = d { }\n",  # closes too much
    'model a = b { source = "open\n}\nmodel c = d { }\n',  # a string cut by a line end
    "# only a comment\n",
    "model a = b { num_layers = ( }\nmodel c = d { }\n",
]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_every_shipped_source_parses_the_same_by_item(path: Path) -> None:
    text = path.read_text()
    assert parse_by_item(text, str(path)) == _parse_text(text, str(path))


@pytest.mark.parametrize("text", EDGES)
def test_edge_texts_parse_or_fail_the_same_by_item(text: str) -> None:
    def outcome(fn: object) -> object:
        try:
            return fn(text, "e.prx")  # type: ignore[operator]
        except CompileError as err:
            return [(d.code.id, d.message, d.span) for d in err.diagnostics]

    assert outcome(parse_by_item) == outcome(parse)
