"""What a space's target cannot express, found before the search (``primusc check``'s P7001 warning):
each reason is attributed to the axis values that bring it, not to the probe point's other knobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.emit.coverage import inexpressible
from primus_lang.ir import Space
from primus_lang.lower import loads_program

DENSE = """
model d { num_layers = 24; hidden = 2048; ffn_hidden = 8192; heads = 16; kv_heads = 4; vocab = 32000; seq_len = 4096 }
gpu g { vendor = nvidia; peak_bf16 = 1000 TFLOP/s; hbm_capacity = 192 GiB; hbm_bandwidth = 5 TB/s
  scale_up_bandwidth = 400 GB/s }
cluster c { gpu = g; nodes = 4; gpus_per_node = 8 }
"""


def space(body: str, target: str) -> Space:
    text = DENSE + f"space s on c {{ model = d\n gbs = 64\n pp = 2\n{body}\n target {target}\n}}"
    return loads_program(text, "t.prx").spaces[0]


def test_a_value_the_framework_lacks_is_named() -> None:
    found = inexpressible(space("schedule : 1f1b | zero_bubble\ntp : 1 | 2", "megatron + slurm"))
    assert [i.values for i in found] == [("schedule = zero_bubble",)]
    assert "schedule" in found[0].reason
    assert inexpressible(space("schedule : 1f1b | zero_bubble", "primus + slurm")) == []


def test_a_fixed_knob_the_framework_lacks_blames_no_axis() -> None:
    found = inexpressible(space("recompute = op\ntp : 1 | 2\ncuda_graph : none | attn", "megatron + slurm"))
    assert len(found) == 1 and found[0].values == ()
    assert "op" in found[0].reason


def test_check_warns_and_reports_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.prx"
    path.write_text(DENSE + "space s on c { model = d\n gbs = 64\n cuda_graph : none | attn | full\n"
                    " target primus + slurm\n}")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "warning P7001: target `primus+slurm` cannot express" in out
    assert "`cuda_graph` = full" in out
    assert main(["check", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [i["values"] for i in data["inexpressible"]["s"]] == [["cuda_graph = full"]]


def test_check_says_what_plan_will_stop_on_before_its_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A k8s target without a container image: `check` said ok, and `plan` then refused (P7004)."""
    path = tmp_path / "s.prx"
    path.write_text(DENSE + "space s on c { model = d\n gbs = 64\n target megatron + k8s\n}")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "warning P7004: the k8s launcher needs variable `container_image` (`plan` and `emit` stop on it" in out


def test_check_says_a_recompute_module_the_model_gives_nothing_to() -> None:
    """`selective(core_attn, mlp)` on a model whose every layer is MoE: `mlp` recomputes nothing."""
    from primus_lang.commands.check import _idle_modules

    moe = DENSE.replace("seq_len = 4096 }", "seq_len = 4096\n  moe { num_experts = 8; top_k = 2; ffn_hidden = 2048 } }")
    text = moe + "space s on c { model = d\n gbs = 64\n recompute : none | selective(core_attn, mlp)\n}"
    space_ = loads_program(text, "t.prx").spaces[0]
    assert [m for m, _ in _idle_modules(space_)] == ["mlp"]
    dense = loads_program(DENSE + "space s on c { model = d\n gbs = 64\n recompute = selective(mlp, moe)\n}",
                          "t.prx").spaces[0]
    assert _idle_modules(dense) == [("moe", "the model has no mixture-of-experts layer")]
