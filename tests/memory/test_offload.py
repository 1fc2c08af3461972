"""Activation offloading (`offload_layers`, Megatron's --cpu-offloading-num-layers): what megatron-core
takes, what it saves at the peak, what its copies cost, and how recipes say it."""

from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from primus_lang.check import baseline_point, legal_points, legality
from primus_lang.cli import main
from primus_lang.emit import emit
from primus_lang.ir import Recompute, Space
from primus_lang.lower import load_space, loads_program
from primus_lang.memory import account, offload_bytes, prefilter
from primus_lang.project import project, project_many
from tests.emit.harness import context

SPACE = """
import models.llama3 (llama3_70b)
import hardware.nvidia (GPU)

cluster c { gpu = GPU; nodes = NODES; gpus_per_node = PER }

space s on c {
  model = llama3_70b
  seq_len = 8192
  gbs = 256
  mbs = 2
  precision = fp8
  sharding = fsdp
  fp8_param_gather = true
  main_grad_dtype = bf16
  offload_layers : 0 | 1 | 20 | 40 | 79
  recompute : none | full(layers: 1)
  pp : 1 | 2
}
"""


def space(gpu: str = "gb200", nodes: int = 16, per: int = 4) -> Space:
    text = SPACE.replace("GPU", gpu).replace("NODES", str(nodes)).replace("PER", str(per))
    return loads_program(text, "offload.prx").spaces[0]


def test_megatron_core_refuses_offloading_with_pp_recompute_or_graphs() -> None:
    s = space()
    points = list(legal_points(s))
    offloading = [c for c in points if c.offload_layers]
    # every offloading point runs at PP 1 without recomputation; every layer count below 80 is taken
    assert offloading and all(c.pp == 1 and c.recompute.kind == "none" for c in offloading)
    assert {c.offload_layers for c in offloading} == {1, 20, 40, 79}
    base = offloading[0]
    assert not legality(s, base)
    for change in ({"pp": 2}, {"recompute": Recompute("full", layers=1)}, {"cuda_graph": "attn"},
                   {"offload_layers": 80}):
        broken = legality(s, base.replace(**change))
        assert "P4044" in [v.code for v in broken], change


def test_the_peak_holds_every_layer_but_the_offloaded_ones() -> None:
    s = space()
    cands = {c.offload_layers: c for c in legal_points(s) if c.pp == 1 and c.recompute.kind == "none"}
    peaks = {n: account(s.model, s.cluster, c, s.settings).peak.total for n, c in cands.items()}
    layer = (peaks[0] - peaks[40]) / 40
    # a dense model's layers are alike: each offloaded layer takes the same bytes off the peak, and the
    # reload at the start of the backward fits where the head's logits were
    assert peaks[0] - peaks[20] == 20 * layer and peaks[20] - peaks[40] == 20 * layer
    assert layer == offload_bytes(s.model, cands[1], s.cluster.world, s.settings)
    rows = account(s.model, s.cluster, cands[40], s.settings).peak
    assert "offloaded layer reloaded" not in [t.name for t in rows.terms]
    # the pre-filter says the same, point by point
    points = list(cands.values())
    assert [int(p) for p in prefilter(s.model, s.cluster, points, s.settings)] == [peaks[c.offload_layers] for c in points]


def test_the_copies_cost_what_the_host_link_cannot_hide() -> None:
    def step(gpu: str, nodes: int, per: int, n: int) -> tuple[float, float]:
        s = space(gpu, nodes, per)
        c = next(c for c in legal_points(s) if c.offload_layers == n and c.pp == 1 and c.recompute.kind == "none")
        p = project(s.model, s.cluster, c, s.settings)
        return p.step_time, dict(p.breakdown)["offload"]

    # GB200's NVLink-C2C copies 40 layers within the forward and the backward: nothing shows
    base, _ = step("gb200", 16, 4, 0)
    assert step("gb200", 16, 4, 40) == (base, 0.0)
    # an H100 copies over PCIe: the step waits for what the copies take beyond the passes' compute
    h_base, _ = step("h100", 8, 8, 0)
    h_step, h_offload = step("h100", 8, 8, 79)
    assert h_offload > 0 and h_step == pytest.approx(h_base + h_offload, rel=1e-12)


@pytest.mark.parametrize("gpu, nodes, per", [("gb200", 16, 4), ("h100", 8, 8)])
def test_the_batch_path_equals_the_scalar_one(gpu: str, nodes: int, per: int) -> None:
    s = space(gpu, nodes, per)
    points = list(legal_points(s))
    assert [project(s.model, s.cluster, c, s.settings) for c in points] == \
        project_many(s.model, s.cluster, points, s.settings)


def test_recipes_say_it_as_megatron_and_bridge_read_it(tmp_path: Path) -> None:
    def imported(text: str, *options: str) -> int:
        launch, out = tmp_path / "launch.sh", tmp_path / "s.prx"
        launch.write_text(text)
        assert main(["import-recipe", str(launch), "--out", str(out), "--force", *options]) == 0
        cand = baseline_point(load_space(out))
        assert cand is not None
        return cand.offload_layers

    megatron = ("torchrun pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
                "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 "
                "--tokenizer-type NullTokenizer --vocab-size 32000 --bf16 --cpu-offloading-num-layers 20\n")
    # Megatron-LM's arguments turn offloading on from the count alone
    assert imported(megatron, "--gpu", "h100") == 20
    # NVIDIA's GB200 FP8 recipe of Llama 3 70B (Megatron-Bridge v0.6) offloads 40 of its 80 layers
    bridge = "python scripts/training/run_recipe.py --recipe llama3_70b_pretrain_64gpu_gb200_fp8cs_config"
    assert imported(bridge + "\n") == 40
    # its config holds the switch beside the count: off, the count does nothing
    assert imported(bridge + " model.cpu_offloading=false\n") == 0


@pytest.mark.parametrize("framework", ["megatron", "primus"])
def test_a_launch_offloads_what_the_point_says_and_reads_back(tmp_path: Path, framework: str) -> None:
    s = space()
    cand = next(c for c in legal_points(s) if c.offload_layers == 79)
    if framework == "primus":
        # Primus runs FSDP as torch FSDP2, under which Megatron-LM turns FP8 gathers off (refused, P7001)
        cand = cand.replace(fp8_param_gather=False)
    files = emit(s, cand, f"{framework}+local", context())
    if framework == "megatron":
        node = files["node.sh"]
        assert "--cpu-offloading-num-layers 79" in node
        block = re.search(r"^ARGS=\(\n(.*?)^\)", node, re.MULTILINE | re.DOTALL)
        script = re.search(r"^SCRIPT=(\S+)", node, re.MULTILINE)
        assert block is not None and script is not None
        recipe = tmp_path / "launch.sh"
        recipe.write_text(f"torchrun --nnodes 16 --nproc-per-node 4 {script.group(1)} {' '.join(block.group(1).split())}\n")
    else:
        recipe = tmp_path / "experiment.yaml"
        recipe.write_text(files["experiment.yaml"])
    out = tmp_path / "s.prx"
    assert main(["import-recipe", str(recipe), "--gpu", "gb200", "--nodes", "16", "--gpus-per-node", "4",
                 "--out", str(out)]) == 0
    back = baseline_point(load_space(out))
    assert back is not None and back.offload_layers == 79


def test_a_bridge_launch_sets_the_switch_beside_the_count(tmp_path: Path) -> None:
    launch, out = tmp_path / "launch.sh", tmp_path / "s.prx"
    launch.write_text("python scripts/training/run_recipe.py --recipe llama3_70b_pretrain_64gpu_gb200_fp8cs_config\n")
    assert main(["import-recipe", str(launch), "--out", str(out)]) == 0
    s = load_space(out)
    base = baseline_point(s)
    assert base is not None

    def overrides(n: int) -> list[str]:
        node = emit(s, base.replace(offload_layers=n), "bridge+local", context())["node.sh"]
        return [w for w in node.split() if w.startswith(("model.cpu_offloading=", "model.cpu_offloading_num_layers="))]

    assert overrides(60) == ["model.cpu_offloading_num_layers=60", "model.cpu_offloading=true"]
    # the recipe offloads 40 layers itself: a point without offloading turns it off, not only to 0 layers
    assert overrides(0) == ["model.cpu_offloading_num_layers=0", "model.cpu_offloading=false"]


def test_megatron_core_refuses_offloading_on_a_hybrid_model_and_beside_its_other_offloading() -> None:
    nano = loads_program(SPACE.replace("models.llama3 (llama3_70b)", "models.nemotron3 (nemotron_3_nano_30b_a3b)")
                         .replace("model = llama3_70b", "model = nemotron_3_nano_30b_a3b")
                         .replace("offload_layers : 0 | 1 | 20 | 40 | 79", "offload_layers : 0 | 20")
                         .replace("GPU", "gb200").replace("NODES", "16").replace("PER", "4"), "nano.prx").spaces[0]
    # its Mamba stack enters no offload context: offloading would save nothing there
    assert {c.offload_layers for c in legal_points(nano)} == {0}
    s = space()
    base = next(c for c in legal_points(s) if c.offload_layers == 40)
    for carried in ("fine_grained_activation_offloading", "moe_paged_stash"):
        clash = attrs.evolve(s, passthrough=((carried, True),))
        assert [v.code for v in legality(clash, base)] == ["P4044"], carried
        assert not legality(clash, base.replace(offload_layers=0))


def test_the_full_iteration_graph_takes_offloading_from_core_v0_18() -> None:
    s = space()
    base = next(c for c in legal_points(s) if c.offload_layers == 40)
    graphed = base.replace(cuda_graph="full")
    assert "P4044" in [v.code for v in legality(s, graphed)]  # megatron-core 0.16.1, the default target
    newer = attrs.evolve(s, settings=attrs.evolve(s.settings, megatron_version="core_v0.18"))
    assert "P4044" not in [v.code for v in legality(newer, graphed)]


@pytest.mark.parametrize(("override", "needle"), [
    ("model.cpu_offloading_activations=false", "offloading that leaves the activations on the GPU"),
    ("optimizer.optimizer_cpu_offload=true", "the optimizer state and step in host memory are not modelled"),
])
def test_offloading_primusc_does_not_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       override: str, needle: str) -> None:
    launch = tmp_path / "launch.sh"
    launch.write_text("python scripts/training/run_recipe.py --recipe llama3_70b_pretrain_64gpu_gb200_fp8cs_config "
                      f"{override}\n")
    assert main(["import-recipe", str(launch)]) == 1
    err = capsys.readouterr().err
    assert "P3125" in err and needle in err
