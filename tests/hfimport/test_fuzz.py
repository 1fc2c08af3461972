"""Any JSON object at all yields a card that loads or a P31xx diagnostic, never another exception."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primus_lang.diagnostics import CompileError
from primus_lang.hfimport import SUPPORTED_MODEL_TYPES, card_name, map_config, read_config, render_card
from primus_lang.syntax import parse

FIXTURES = Path(__file__).parent / "fixtures"
BASES = [json.loads(p.read_text()) for p in sorted(FIXTURES.glob("*.json"))]
KEYS = sorted({k for base in BASES for k in base})

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 300_000) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = dict(draw(st.sampled_from(BASES)))
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=4)):
        if draw(st.booleans()):
            data.pop(key, None)
        else:
            data[key] = draw(json_values)
    if draw(st.booleans()):
        data["model_type"] = draw(st.sampled_from([*SUPPORTED_MODEL_TYPES, "jamba", "gemma3", 7]))
    return data


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=configs())
def test_mutated_configs_never_crash(data: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    config = read_config(path)
    try:
        result = map_config(config, card_name(config))
        text = render_card(result, str(path))  # refuses (P3112) a card the language would not load
    except CompileError as err:
        assert all(d.code.id.startswith("P31") for d in err.diagnostics)
        return
    items = parse(text, "card.prx").items
    assert [getattr(i, "name", None) for i in items] == [result.model.name]
