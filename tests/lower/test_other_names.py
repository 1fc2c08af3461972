"""A field written under Megatron's (or a launcher's) name is pointed at the field that sets it, not at
the nearest spelling (`lr_decay_style` is `decay`, not `decay_iters`)."""

from __future__ import annotations

import attrs
import pytest

from primus_lang.diagnostics import CompileError
from primus_lang.ir.run import MEGATRON_NAMES, Run
from primus_lang.ir.site import LAUNCHER_NAMES, Site
from primus_lang.lower import loads_program

SPACE = """
import models.llama3 (llama3_8b)
import clusters.nvidia (h100_x8)

space s on h100_x8 {{
  model = llama3_8b
  gbs = 64
  tp : 1 | 2
  target megatron + slurm
  run {{ {field} = {value} }}
}}
"""


@pytest.mark.parametrize(("name", "value", "field"), [
    ("lr_decay_style", "cosine", "decay"), ("lr_warmup_iters", "10", "warmup_iters"),
    ("init_method_std", "0.01", "init_std"), ("save", '"ckpt"', "checkpoint_dir"),
])
def test_megatron_name_in_a_run_block(name: str, value: str, field: str) -> None:
    with pytest.raises(CompileError) as err:
        loads_program(SPACE.format(field=name, value=value), "s.prx")
    d = err.value.diagnostics[0]
    assert d.code.id == "P2002" and (d.help or "").startswith(f"write `{field}`:")
    # the field it names takes the value as written
    loads_program(SPACE.format(field=field, value=value), "s.prx")


def test_launcher_name_in_a_site_block() -> None:
    with pytest.raises(CompileError) as err:
        loads_program('site x { time = 2 h }\n', "x.prx")
    d = err.value.diagnostics[0]
    assert d.code.id == "P2002" and (d.help or "").startswith("write `time_limit`:")


@pytest.mark.parametrize(("table", "cls"), [(MEGATRON_NAMES, Run), (LAUNCHER_NAMES, Site)])
def test_every_alias_names_a_field_and_is_not_one(table: dict[str, str], cls: type) -> None:
    fields = {f.name for f in attrs.fields(cls)}
    assert set(table.values()) <= fields and not set(table) & fields
