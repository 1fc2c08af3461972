"""What a launch script exports reaches the launch primusc writes, as the space's site environment
(Megatron-LM's Mamba example exports its NCCL and Triton cache settings; they were lost)."""

from __future__ import annotations

from pathlib import Path

from primus_lang.check import baseline_point
from primus_lang.cli import main
from primus_lang.emit import emit
from primus_lang.lower import load_space
from tests.recipes.test_bad_recipes import LLAMA8B


def test_the_scripts_exports_are_the_sites_environment(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text("export NCCL_IB_TIMEOUT=19\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\nexport IFS=,\n"
                      "export CUDA_VISIBLE_DEVICES=0,1,2,3\n"
                      'export TRITON_CACHE_DIR="./triton cache/"\nLOCAL_ONLY=1\n'
                      "torchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B + "\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    space = load_space(out)
    assert space.site is not None
    # CUDA_DEVICE_MAX_CONNECTIONS follows the candidate's rule in the launch files, the visible devices their
    # layout; IFS is bash's own; a variable the script does not export is its own
    assert dict(space.site.values()) == {"NCCL_IB_TIMEOUT": "19", "TRITON_CACHE_DIR": "./triton cache/"}
    cand = baseline_point(space)
    assert cand is not None
    node = emit(space, cand, "megatron+local")["node.sh"]
    assert "export NCCL_IB_TIMEOUT=${NCCL_IB_TIMEOUT:-19}" in node
    assert "export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-'./triton cache/'}" in node


def test_a_script_that_exports_nothing_gets_no_site(tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py " + LLAMA8B + "\n")
    out = tmp_path / "space.prx"
    assert main(["import-recipe", str(script), "--gpu", "h100", "--out", str(out)]) == 0
    assert "\nsite " not in out.read_text() and load_space(out).site is None
