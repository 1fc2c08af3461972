"""P8005 states memory in GiB like every other memory figure, and suggests only changes the space
does not already take as far as they go."""

from __future__ import annotations

from pathlib import Path

import pytest

from primus_lang.diagnostics import CompileError
from primus_lang.lower import load_space
from primus_lang.search.stages import landscape_of

HEAD = """import models.llama3 (llama3_1_8b)
import clusters.amd (mi355x_x1)
space nofit on mi355x_x1 {
  model = llama3_1_8b
  gbs = 64
  fits memory headroom 99%
"""


def no_fit(tmp_path: Path, axes: str) -> tuple[str, str, str]:
    path = tmp_path / "s.prx"
    path.write_text(HEAD + axes + "}\n")
    with pytest.raises(CompileError) as err:
        landscape_of(load_space(path))
    diag = err.value.diagnostics[0]
    assert diag.code.id == "P8005"
    return diag.message, diag.notes[0], diag.help


def test_in_gib_with_what_the_space_could_add(tmp_path: Path) -> None:
    _, note, help = no_fit(tmp_path, "  mbs : 1 | 2\n")
    assert note == "the smallest peak is 98.0 GiB per GPU against a limit of 2.9 GiB (288.0 GiB less 99% headroom)"
    # only the values a legal point takes: TP 3 divides neither the 32 heads nor the 8 GPUs
    assert help == ("add to the space: TP above 1 (2, 4 or 8), PP above 1 (2, 4 or 8), full recompute, FSDP sharding; "
                    "no count of nodes up to 64 holds one")


def test_no_more_tp_or_pp_than_the_cluster_takes(tmp_path: Path) -> None:
    _, _, help = no_fit(tmp_path, "  tp = 8\n  mbs = 2\n  sharding = fsdp\n")
    assert help == ("add to the space: full recompute, a smaller micro-batch; "
                    "no count of nodes up to 64 holds one")


def test_nothing_left_to_add(tmp_path: Path) -> None:
    _, _, help = no_fit(tmp_path, "  tp = 8\n  sharding = fsdp\n  recompute = full(32)\n")
    assert help.startswith("the space already takes TP, PP, recompute and sharding as far as they go")
    assert "TP above" not in help and "PP above" not in help


def test_larger_values_a_rule_removes_are_not_suggested_again(tmp_path: Path) -> None:
    # Llama 3.1 8B has 32 query heads and 8 KV groups: TP 16 would exceed the node anyway, and a TP
    # that does not divide the groups (3) is removed by legality, so it is not "add TP above 1"
    _, _, help = no_fit(tmp_path, "  tp : 1 | 3\n  mbs : 1 | 2\n")
    assert "TP above" not in help and "the larger values the space takes (TP 3) are illegal here" in help
    assert "PP above 1 (2, 4 or 8)" in help


def test_more_tp_or_pp_no_legal_point_takes_is_not_suggested(tmp_path: Path) -> None:
    # Megatron-Bridge's quick-start, imported: CP 2 on 2 GPUs leaves TP 2 or PP 2 no GPUs to divide
    # (TP·PP·CP = 4), which `check` calls never legal; the help says so, and where they would be legal
    path = tmp_path / "s.prx"
    path.write_text("import models.llama3 (llama3_8b)\nimport hardware.nvidia (h100)\n"
                    "cluster two { gpu = h100; nodes = 1; gpus_per_node = 2 }\n"
                    "space quick on two {\n  model = llama3_8b\n  seq_len = 4096\n  cp = 2\n  gbs = 128\n"
                    "  mbs : 1 | 2 | 4\n  recompute : none | selective\n  fits memory headroom 5%\n}\n")
    with pytest.raises(CompileError) as err:
        landscape_of(load_space(path))
    help = str(err.value.diagnostics[0].help)
    assert "TP above 1 (" not in help and "PP above 1 (" not in help
    for knob in ("TP", "PP"):
        assert (f"no legal point takes {knob} above 1 here (at {knob.lower()} = 2: TP·PP·CP = "
                in help), help
        assert f"though on 2 nodes {knob} 2 would be legal" in help
    assert help.count("`primusc explain P4001`") == 2


def test_a_space_with_its_recipe_says_how_to_launch_the_recipe(tmp_path: Path) -> None:
    path = tmp_path / "s.prx"
    path.write_text(HEAD + "  mbs : 1 | 2\n  baseline { mbs = 1 }\n}\n")
    with pytest.raises(CompileError) as err:
        landscape_of(load_space(path))
    [diag] = err.value.diagnostics
    assert diag.code.id == "P8005" and "`primusc emit FILE --point baseline`" in diag.notes[1]


def test_more_nodes_are_suggested_as_the_count_check_finds(tmp_path: Path) -> None:
    # plan and check walk the same doublings (search/room.py): FSDP over more GPUs shards the 405B's state
    path = tmp_path / "s.prx"
    path.write_text("import models.llama3 (llama3_1_405b)\nimport clusters.amd (mi355x_x1)\nspace big on mi355x_x1 {\n"
                    "  model = llama3_1_405b\n  gbs = 64\n  sharding = fsdp\n  recompute = full(126)\n}\n")
    with pytest.raises(CompileError) as err:
        landscape_of(load_space(path))
    (diag,) = err.value.diagnostics
    assert diag.code.id == "P8005" and "the fewest doubling of 1 on which a legal point fits" in str(diag.help)
