"""A file of thousands of broken definitions gets each diagnostic once, in order, in time linear in
the file (found by the fuzzer: 20,000 one-line models took minutes, as each diagnostic split the
whole source again and each was checked against every earlier one)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from primus_lang.diagnostics import CompileError, render
from primus_lang.lower import load_program
from primus_lang.sources import SOURCES

# the package's `render` (the function) hides the module of the same name
render_module = importlib.import_module("primus_lang.diagnostics.render")
COUNT = 3000


def test_each_definition_gets_its_diagnostic_once_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "many.prx"
    path.write_text("".join(f"model m{i} {{ num_layers = 1 }}\n" for i in range(COUNT)))
    with pytest.raises(CompileError) as err:
        load_program(path)
    diags = err.value.diagnostics
    assert [d.code.id for d in diags] == ["P3008"] * COUNT
    assert [d.span.line for d in diags if d.span] == list(range(1, COUNT + 1))

    splits: list[int] = []
    real = render_module.lines
    monkeypatch.setattr(render_module, "lines", lambda text: splits.append(1) or real(text))
    render_module._lines.cache_clear()
    text = render(diags, "human", SOURCES.get)
    assert len(splits) == 1, "the source is cut into lines once, not once per diagnostic"
    assert text.count("error[P3008]") == COUNT
