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
    assert help == ("add to the space: TP above 1 (up to 8), PP above 1 (up to 8), full recompute, FSDP sharding; "
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
    assert "PP above 1 (up to 8)" in help


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
