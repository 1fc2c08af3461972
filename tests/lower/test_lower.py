"""Lowering: units by field kind, inheritance with nested merges, imports, domains, the IR round trip."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.ir import Program, Recompute
from primus_lang.ir.serialize import from_json, from_yaml, to_json, to_yaml
from primus_lang.lower import load_program, load_space, loads_program
from primus_lang.resources import data_dir

EXAMPLES = sorted(data_dir("examples").glob("*.prx"))
STDLIB = sorted(data_dir("stdlib").rglob("*.prx"))

GPU = """gpu g {
  vendor = amd; peak_bf16 = 1307.4 TFLOP/s; peak_fp8 = 2.6149 PFLOP/s
  hbm_capacity = 192 GiB; hbm_bandwidth = 5.3 TB/s; scale_up_bandwidth = 448 GB/s
  nic_bandwidth = 400 Gbps; scale_up_latency = 3 us; nic_latency = 0.008 ms; reserved_memory = 4 GB
  efficiency { gemm_max = 0.78; attention = 55% }
}
"""


def codes(text: str) -> list[str]:
    with pytest.raises(CompileError) as err:
        loads_program(text, "t.prx")
    return [d.code.id for d in err.value.diagnostics]


def test_units_become_si() -> None:
    g = loads_program(GPU, "t.prx").gpus[0]
    assert g.hbm_capacity == 192 * 2**30 and isinstance(g.hbm_capacity, int)
    assert g.reserved_memory == 4 * 10**9
    assert g.peak_bf16 == pytest.approx(1.3074e15) and g.peak_fp8 == pytest.approx(2.6149e15)
    assert g.hbm_bandwidth == pytest.approx(5.3e12)
    assert g.nic_bandwidth == pytest.approx(50e9)  # bits
    assert g.scale_up_latency == pytest.approx(3e-6) and g.nic_latency == pytest.approx(8e-6)
    assert g.efficiency.attention == pytest.approx(0.55)


def test_inheritance_merges_nested_blocks() -> None:
    p = loads_program(GPU + "gpu h = g { efficiency { gemm_max = 0.71 }; hbm_capacity = 256 GB }", "t.prx")
    g, h = p.gpus
    assert h.efficiency.gemm_max == 0.71 and h.efficiency.attention == g.efficiency.attention
    assert h.hbm_capacity == 256 * 10**9 and h.peak_bf16 == g.peak_bf16 and h.name == "h"


def test_model_defaults_and_moe_override() -> None:
    p = loads_program(
        "model a { num_layers = 2; hidden = 1_024; ffn_hidden = 4096; heads = 8; vocab = 1e3; seq_len = 128 }\n"
        "model b = a { moe { num_experts = 8; top_k = 2; ffn_hidden = 512 } }\n"
        "model c = b { moe { top_k = 1 } }",
        "t.prx",
    )
    a, b, c = p.models
    assert (a.kv_heads, a.head_dim, a.max_position_embeddings, a.hidden, a.vocab) == (8, 128, 128, 1024, 1000)
    assert b.moe is not None and c.moe is not None
    assert (c.moe.num_experts, c.moe.top_k, c.moe.ffn_hidden) == (8, 1, 512)


def test_cluster_nic_and_gpu_override() -> None:
    p = loads_program(
        GPU
        + "cluster c { gpu = g { hbm_capacity = 1 TiB }; nodes = 2; gpus_per_node = 8; nic = 4 x 400 Gbps }",
        "t.prx",
    )
    c = p.clusters[0]
    assert (c.nics_per_node, c.nic_bandwidth, c.gpu.hbm_capacity, c.world) == (4, 50e9, 2**40, 16)
    assert c.nic_bandwidth_per_gpu == pytest.approx(25e9)


def test_domains_expand() -> None:
    text = (
        GPU
        + "model m { num_layers = 8; hidden = 64; ffn_hidden = 64; heads = 8; vocab = 10; seq_len = 64 }\n"
        + "cluster c { gpu = g; nodes = 1; gpus_per_node = 8 }\n"
        + "space s on c { model = m { seq_len = 256 }; gbs = 8\n"
        + "tp : 1 .. 8 step 3; pp : 2 | pow2(1 .. 8) | 3; precision : bf16 | fp8\n"
        + "recompute : none | full(layers: 1 .. 2, method: uniform | block) | full(4)\n"
        + "vpp : 1 | 2 when pp > 1 }"
    )
    s = loads_program(text, "t.prx").spaces[0]
    axes = {a.name: a.domain.values for a in s.axes}
    # a value two alternatives both give is searched once, in the order first given
    assert axes["tp"] == (1, 4, 7) and axes["pp"] == (2, 1, 4, 8, 3)
    assert axes["recompute"] == (
        Recompute(),
        Recompute("full", 1, "uniform"),
        Recompute("full", 1, "block"),
        Recompute("full", 2, "uniform"),
        Recompute("full", 2, "block"),
        Recompute("full", 4, "block"),
    )
    assert dict(s.fixed) == {"gbs": 8, "seq_len": 256} and s.model.seq_len == 256
    # an alternative that adds nothing is most likely a typo for a missing value: refused at its span
    for axis, col in (("pp : pow2(1 .. 8) | 8", 41), ("precision : bf16 | fp8 | bf16", 46)):
        with pytest.raises(CompileError) as err:
            loads_program(text.replace("pp : 2 | pow2(1 .. 8) | 3; precision : bf16 | fp8", axis), "t.prx")
        (d,) = err.value.diagnostics
        line = 1 + text[: text.index("tp : 1 ..")].count("\n")
        assert d.code.id == "P3039" and d.span is not None and (d.span.line, d.span.column) == (line, col), d


def test_relative_imports_and_star(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "hw.prx").write_text(GPU + "cluster c { gpu = g; nodes = 1; gpus_per_node = 8 }\n")
    main_file = tmp_path / "main.prx"
    main_file.write_text(
        'import "./lib/hw.prx" (*)\nimport models.llama3 (llama3_1_8b)\n'
        "space s on c { model = llama3_1_8b; gbs = 16 }\n"
    )
    s = load_space(main_file)
    assert s.cluster.gpu.name == "g" and s.model.name == "llama3_1_8b"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (GPU.replace("192 GiB", "192 GiB/s"), "P3001"),
        (GPU.replace("55%", "155%"), "P3009"),
        (GPU.replace("vendor = amd", "vendor = amdd"), "P3005"),
        (GPU + "gpu g2 = nope { }", "P2001"),
        (GPU + "cluster c { gpu = g; nodes = 1; gpus_per_node = 8; nic = 8 }", "P3007"),
    ],
)
def test_errors(text: str, code: str) -> None:
    assert code in codes(text)


@pytest.mark.parametrize("path", EXAMPLES + STDLIB, ids=lambda p: p.name)
def test_shipped_files_check_and_are_formatted(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(path)]) == 0
    assert main(["fmt", "--check", str(path)]) == 0


@pytest.mark.parametrize("path", EXAMPLES + STDLIB, ids=lambda p: p.name)
def test_ir_round_trip(path: Path) -> None:
    program = load_program(path)
    assert from_json(to_json(program), Program) == program
    assert from_yaml(to_yaml(program), Program) == program


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(EXAMPLES), st.integers(1, 64), st.sampled_from(["bf16", "fp8"]), st.integers(1, 4))
def test_ir_round_trip_of_edited_spaces(path: Path, gbs: int, precision: str, step: int) -> None:
    text = path.read_text().replace("gbs = ", f"gbs = {gbs} # ", 1)
    text = (
        text.replace("{", f"{{ precision = {precision}; tp : 1 .. 8 step {step}\n", 1)
        if "precision" not in text
        else text
    )
    try:
        program = loads_program(text, str(path))
    except CompileError:
        return
    assert from_json(to_json(program), Program) == program


def test_selective_modules() -> None:
    from primus_lang.check import raw_points

    text = (
        GPU
        + "model m { num_layers = 8; hidden = 64; ffn_hidden = 64; heads = 8; vocab = 10; seq_len = 64 }\n"
        + "cluster c { gpu = g; nodes = 1; gpus_per_node = 8 }\n"
        + "space s on c { model = m; gbs = 8; recompute : selective | selective(core_attn, mlp) }"
    )
    if "modules" not in attrs.fields_dict(Recompute):
        assert "P3013" in codes(text)
        return
    space = loads_program(text, "t.prx").spaces[0]
    values = space.axes[0].domain.values
    modules = [attrs.asdict(v, recurse=False)["modules"] for v in values if isinstance(v, Recompute)]
    assert modules == [(), ("core_attn", "mlp")]
    assert [c.recompute for c in raw_points(space)] == list(values)


def test_op_level_recompute_is_a_value_and_refused_on_moe_models() -> None:
    from primus_lang.check import legality, raw_points

    text = (
        GPU
        + "model m { num_layers = 8; hidden = 64; ffn_hidden = 64; heads = 8; vocab = 10; seq_len = 64 }\n"
        + "model e = m { moe { num_experts = 4; top_k = 2; ffn_hidden = 32 } }\n"
        + "cluster c { gpu = g; nodes = 1; gpus_per_node = 8 }\n"
        + "space s on c { model = m; gbs = 8; recompute : none | op | full(2) }\n"
        + "space t on c { model = e; gbs = 8; recompute = op }"
    )
    dense, moe = loads_program(text, "t.prx").spaces
    values = [c.recompute for c in raw_points(dense)]
    assert values == [Recompute(), Recompute("op"), Recompute("full", 2)]
    assert str(Recompute("op")) == "op"
    assert not legality(dense, next(c for c in raw_points(dense) if c.recompute.kind == "op"))
    refused = legality(moe, next(iter(raw_points(moe))))
    assert [v.code for v in refused] == ["P4027"]
    assert "MoE" in refused[0].message


def test_a_stdlib_name_left_out_of_the_import_is_named_with_its_module() -> None:
    text = ("import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\n"
            "space s on mi325x_x8 {\n  model = llama3_1_8b\n  gbs = 64\n  gpu = mi300x_calibrated\n}\n")
    with pytest.raises(CompileError) as err:
        loads_program(text, "s.prx")
    (diag,) = err.value.diagnostics
    assert diag.code.id == "P2001" and "`hardware.calibrated` defines it" in diag.help
    # a name no stdlib module defines keeps the nearest spelling
    with pytest.raises(CompileError) as err:
        loads_program(text.replace("mi300x_calibrated", "mi325x_x9"), "s.prx")
    assert "hardware.calibrated" not in err.value.diagnostics[0].help


@pytest.mark.parametrize("objective", ["maximize step_time", "minimize tokens_per_gpu", "minimize mfu",
                                       "minimize tflops_per_gpu", "maximize memory_peak"])
def test_an_objective_that_asks_for_the_worst_recipe_is_refused(objective: str) -> None:
    """`maximize step_time` planned and launched the slowest recipe; `maximize cost` was refused already."""
    text = ("import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\n"
            f"space s on mi325x_x8 {{ model = llama3_1_8b; gbs = 64; {objective} }}")
    with pytest.raises(CompileError) as err:
        loads_program(text, "t.prx")
    [d] = err.value.diagnostics
    sense, metric = objective.split()
    other = "minimize" if sense == "maximize" else "maximize"
    assert d.code.id == "P3005" and d.help == f"write `{other} {metric}`"


MODEL = "model m {{ num_layers = 2; hidden = {hidden}; heads = {heads}; ffn_hidden = 64; vocab = 100; seq_len = 8 {extra} }}"


def test_a_head_width_left_to_an_inexact_division_is_refused_at_hidden() -> None:
    """`hidden = 4000; heads = 30` was lowered to a 133-wide head (3,990 wide attention) without a word."""
    with pytest.raises(CompileError) as err:
        loads_program(MODEL.format(hidden=4000, heads=30, extra=""), "t.prx")
    [d] = err.value.diagnostics
    assert d.code.id == "P3009" and "133.3" in d.message and d.span is not None and d.span.column == 27
    assert "(3,990 or 4,020)" in d.help
    assert loads_program(MODEL.format(hidden=4000, heads=30, extra="; head_dim = 128"), "t.prx").models[0].head_dim == 128
    assert loads_program(MODEL.format(hidden=3840, heads=30, extra=""), "t.prx").models[0].head_dim == 128


def test_a_missing_field_names_only_what_has_no_default() -> None:
    with pytest.raises(CompileError) as err:
        loads_program("model m { num_layers = 2; hidden = 64; heads = 4; vocab = 100 }", "t.prx")
    [d] = err.value.diagnostics
    assert d.message == "`m` does not set `ffn_hidden`, `seq_len`"  # not max_position_embeddings, which follows seq_len
    assert d.help.startswith("a model needs num_layers, hidden, ffn_hidden, heads, vocab, seq_len (")
    assert "`max_position_embeddings` defaults to seq_len" in d.help


def test_a_gbs_with_a_bad_value_is_not_also_said_missing() -> None:
    text = "import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\nspace s on mi325x_x8 {{ model = llama3_1_8b; {} }}"
    assert codes(text.format("gbs = 12O")) == ["P3007"]
    assert codes(text.format("tp = 1")) == ["P3008"]


def test_a_derived_card_re_derives_what_its_base_left_to_a_rule_and_keeps_what_it_set() -> None:
    """`model a = base { heads = 24 }` kept the base's 128-wide head (4096 / 32) without a word."""
    base = "model base { num_layers = 2; hidden = 4096; heads = 32; ffn_hidden = 64; vocab = 100; seq_len = 8 }\n"
    models = {m.name: m for m in loads_program(base + "model b = base { hidden = 5120 }\nmodel d = base { heads = 64 }\n"
                                               "model e = base { seq_len = 16 }", "t.prx").models}
    assert (models["b"].head_dim, models["d"].head_dim, models["d"].kv_heads) == (160, 64, 64)
    assert models["e"].max_position_embeddings == 16
    assert codes(base + "model a = base { heads = 24 }") == ["P3009"]
    # a base that states its head width keeps it (Qwen3-32B inherits Qwen3-8B's stated 128 over 5120 / 64)
    stated = base.replace("seq_len = 8 }", "seq_len = 8; head_dim = 128 }")
    assert loads_program(stated + "model b = base { hidden = 5120; heads = 64 }", "t.prx").models[1].head_dim == 128


@pytest.mark.parametrize(("text", "says"), [
    ("import clusters.nvidia (h100_x8)\ncluster mine = h100_x8 { price_per_hour = 2.0 }\n",
     "`price_per_hour` is a field of a gpu, not of a cluster: write it where the gpu is named, "
     "`gpu = NAME { price_per_hour = ... }`"),
    ("import models.llama3 (llama3_8b)\nmodel m = llama3_8b { hbm_capacity = 80 GiB }\n",
     "`hbm_capacity` is a field of a gpu, not of a model: write it in the gpu's block"),
])
def test_a_field_written_in_another_block_names_its_home(text: str, says: str) -> None:
    """A new user's trial put a GPU's price on the cluster and was given the cluster's fields alone."""
    with pytest.raises(CompileError) as err:
        loads_program(text, "t.prx")
    (d,) = err.value.diagnostics
    assert d.code.id == "P2002" and says in str(d.help)


def test_a_base_of_the_wrong_kind_is_pointed_at_where_it_is_named(tmp_path: Path) -> None:
    """A new user's trial: `model m = mi325x { ... }` put the caret under `m`."""
    path = tmp_path / "wk.prx"
    path.write_text("import hardware.amd (mi325x)\nmodel m = mi325x { seq_len = 1 }\n")
    with pytest.raises(CompileError) as err:
        load_program(str(path))
    (d,) = err.value.diagnostics
    assert d.code.id == "P2008" and d.span is not None and (d.span.line, d.span.column, d.span.end_column) == (2, 11, 17)


def test_a_gpu_field_written_in_a_space_names_the_gpu() -> None:
    text = ("import models.llama3 (llama3_8b)\nimport clusters.nvidia (h100_x8)\n"
            "space s on h100_x8 {\n  model = llama3_8b\n  gbs = 64\n  price_per_hour = 2\n}\n")
    with pytest.raises(CompileError) as err:
        loads_program(text, "t.prx")
    (d,) = err.value.diagnostics
    assert d.code.id == "P2009" and "write `gpu = NAME { price_per_hour = ... }` in the space" in str(d.help)


def test_fmt_diff_alone_shows_the_diff_and_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`fmt --diff` without `--check` printed the formatted file and exited 0, the --diff ignored."""
    path = tmp_path / "m.prx"
    text = "model   m = x {  }\n"
    path.write_text(text)
    assert main(["fmt", "--diff", str(path)]) == 1
    out = capsys.readouterr()
    assert out.out.startswith(f"--- {path}") and "would reformat" in out.err
    assert path.read_text() == text
    assert main(["fmt", "--diff", "--write", str(path)]) == 1
    assert "P2017" in capsys.readouterr().err and path.read_text() == text
