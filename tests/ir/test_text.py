"""One printer of `.prx` values (ir/text.py): what it writes reads back as the same value, and the
language server's hover and the docs state a field's default in the same words."""

from __future__ import annotations

from pathlib import Path

import attrs
from hypothesis import given
from hypothesis import strategies as st

from primus_lang.ir import KNOBS, Recompute
from primus_lang.ir.hardware import Cluster, Efficiency, Gpu, Provenance
from primus_lang.ir.model import Model
from primus_lang.ir.quantity import Kind, kind_of
from primus_lang.ir.text import field_default, literal, provenance_fields
from primus_lang.lower.domains import single
from primus_lang.lsp.knowledge import field_markdown
from primus_lang.syntax import ast, parse


def _read(field: attrs.Attribute[object], text: str) -> object:
    module = parse(f"space s on c {{\n  {field.name} = {text}\n}}\n", "<t>")
    (space,) = [d for d in module.items if isinstance(d, ast.Definition)]
    (stmt,) = space.body.stmts
    assert isinstance(stmt, ast.Assign)
    return single(field, stmt.value)


@given(st.text(max_size=40))
def test_a_text_reads_back(s: str) -> None:
    kept = "".join(c if c.isprintable() or c in "\n\t" else " " for c in s)
    assert _read(KNOBS["pipeline_layout"], literal(s, Kind.TEXT)) == kept


def test_recomputation_reads_back() -> None:
    for r in (Recompute(), Recompute("selective"), Recompute("selective", modules=("core_attn", "mlp")),
              Recompute("full", 3, "block"), Recompute("op")):
        assert _read(KNOBS["recompute"], literal(r)) == r


def test_quantities_in_units() -> None:
    assert literal(80 * 2**30, Kind.BYTES) == "80 GiB"
    assert literal(1536 * 2**20, Kind.BYTES) == "1536 MiB"
    assert literal(0, Kind.BYTES) == "0 GiB"
    assert literal(400e9 / 8, Kind.BANDWIDTH) == "50 GB/s"
    assert literal(1e-5, Kind.TIME) == "10 us"
    assert literal(989.4e12, Kind.FLOPS) == "989.4 TFLOP/s"
    assert literal(0.1 + 0.2) == repr(0.1 + 0.2)  # exact, not :g's 0.3


def test_hover_and_docs_state_the_same_defaults() -> None:
    rows = (Path(__file__).parents[2] / "docs" / "language.md").read_text(encoding="utf-8")
    for cls in (Model, Gpu, Cluster, Efficiency):
        for f in attrs.fields(cls):
            if f.name in ("name", "span") or kind_of(f) is Kind.REF:
                continue
            said = field_default(f)
            assert f"- default: `{said}`" in field_markdown("field", f)
            mine = [r for r in rows.splitlines() if r.startswith(f"| `{f.name}` |")]
            cells = {r.split(" | ")[2].strip("`") for r in mine}
            assert not mine or said in cells, (cls.__name__, f.name, said, cells)
    assert field_default(attrs.fields_dict(Model)["kv_heads"]) == "heads"


def test_every_provenance_field_is_written_and_reads_back() -> None:
    """calibrate's and learn's profiles write one block: every field, so a profile read back keeps what its
    fit saw (learn's once dropped seq_max, world_max and the far band, and read back as "not recorded")."""
    p = Provenance(basis="fitted", rows=12, error=0.1234, low=0.8, high=1.2, paired=0.05, coverage=0.8,
                   paired_coverage=0.5, note='a "quoted" note', seq_max=16384, world_max=512, far_low=0.7,
                   far_high=1.3)
    written = dict(provenance_fields(p))
    assert list(written) == [f.name for f in attrs.fields(Provenance) if f.name != "note"] + ["note"]
    for f in attrs.fields(Provenance):
        back, value = _read(f, written[f.name]), getattr(p, f.name)
        assert back == (round(value, 3) if isinstance(value, float) else value), f.name
