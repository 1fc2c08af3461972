"""``primusc check FILE --explain --point ...`` prints the account of one candidate, or its JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from primus_lang.cli import main
from primus_lang.lower import load_space
from primus_lang.memory import account
from primus_lang.resources import data_dir

EXAMPLE = str(data_dir("examples") / "llama3_1_70b_mi325x.prx")


def test_json_is_the_account(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", EXAMPLE, "--explain", "--point", "tp=8,pp=2,mbs=1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    space = load_space(EXAMPLE)
    from primus_lang.check import parse_point

    acc = account(space.model, space.cluster, parse_point(space, "tp=8,pp=2,mbs=1"), space.settings)
    assert data["peak"]["total"] == acc.peak.total
    assert [r["total"] for r in data["ranks"]] == [r.total for r in acc.ranks]
    assert data["fits"] is True


def test_table_and_overflow(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", EXAMPLE, "--explain", "--point", "tp=1,pp=1,mbs=4"]) == 1
    out = capsys.readouterr().out
    assert "P5001" in out and "adam moments" in out and "act: fc1 output" in out


def test_a_point_on_a_cluster_the_axes_span(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--cluster` puts the point on one of the clusters a space's axes span, as `project` and `explain` take
    it: a trial's plan chose 64 nodes, and `check --explain` could only account its point on the first cluster,
    where it did not divide the GPUs."""
    src = tmp_path / "nodes.prx"
    src.write_text("import models.llama3 (llama3_1_70b)\nimport clusters.nvidia (h100_x8)\n"
                   "space s on h100_x8 {\n  model = llama3_1_70b\n  seq_len = 8192\n  gbs = 64\n  nodes : 1 | 16\n"
                   "  tp = 4\n  pp = 4\n}\n")
    assert main(["check", str(src), "--explain", "--point", "tp=4,pp=4", "--json"]) == 1
    first = json.loads(capsys.readouterr().out)
    assert first["violations"]
    assert main(["check", str(src), "--explain", "--point", "tp=4,pp=4", "--cluster", "nodes=16", "--json"]) == 0
    chosen = json.loads(capsys.readouterr().out)
    assert not chosen["violations"] and chosen["peak"]["total"] < first["peak"]["total"]
    assert (first["cluster"]["nodes"], chosen["cluster"]["nodes"]) == (1, 16)  # which cluster each account is on
    assert main(["check", str(src), "--cluster", "nodes=16"]) == 1
    assert "`--cluster` chooses the cluster of `--explain --point`" in capsys.readouterr().err


def test_cuda_graph_memory_is_said_to_be_outside_the_account(capsys: pytest.CaptureFixture[str]) -> None:
    """A graph's static buffers and private pool have no term (only a GPU measures them): the account says so
    where a candidate captures graphs, where a trial saw a +87% projection at the same memory peak."""
    assert main(["check", EXAMPLE, "--explain", "--point", "tp=8,pp=2,mbs=1,cuda_graph=attn", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [note] = data["not_counted"]
    assert note.startswith("CUDA graphs (`cuda_graph = attn`)")
    assert main(["check", EXAMPLE, "--explain", "--point", "tp=8,pp=2,mbs=1"]) == 0
    assert "CUDA graphs" not in capsys.readouterr().out
    assert main(["explain", EXAMPLE, "--point", "tp=8,pp=2,mbs=1,cuda_graph=attn"]) == 0
    assert "are not in this account" in capsys.readouterr().out.replace("\n", " ")
