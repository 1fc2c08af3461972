"""What a new user's trial found `explain`, `check` and the tie rule left unsaid: a point that does not fit,
a precision twin that does not fit, a TP group across nodes, the `require` behind a never-legal value, and
a winner taken for a gain no projection can show."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from primus_lang.cli import main
from primus_lang.ir import Candidate, Provenance
from primus_lang.validate import trust

SPACE = """import models.llama3 (llama3_1_8b)
import hardware.nvidia (h100)
cluster c {{ gpu = h100; nodes = {nodes}; gpus_per_node = 8 }}
space s on c {{
  model = llama3_1_8b
  seq_len = 8192
  gbs = 128
  tp : 1 | 2 | 8 | 16
  mbs : 1 | 8
  precision : bf16 | fp8
  sharding : none | dist_opt
{extra}  target megatron + slurm
}}
"""


def space(tmp_path: Path, nodes: int = 2, extra: str = "") -> Path:
    path = tmp_path / "s.prx"
    path.write_text(SPACE.format(nodes=nodes, extra=extra))
    return path


def test_a_point_that_does_not_fit_says_so_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(space(tmp_path)), "--point", "tp=1,mbs=8,sharding=dist_opt,precision=bf16"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "candidate mbs=8" in out
    head = out.index("candidate mbs=8")
    assert out.index("does not fit in memory: its fullest rank is over the limit by", head) < out.index("tokens/s/GPU", head)


QWEN = """import models.qwen3 (qwen3_30b_a3b)
import clusters.nvidia (h100_x8)
space q on h100_x8 {
  nodes = 2
  model = qwen3_30b_a3b
  seq_len = 4096
  gbs = 256
  precision : bf16 | fp8
  pp : 1 | 2
  ep : 4 | 8
  etp = 1
  mbs : 1 | 2
  sharding = dist_opt
  fits memory headroom 5%
  target megatron + slurm
}
"""


def test_the_precision_twin_that_does_not_fit_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trial's Qwen3-30B-A3B at PP 2, EP 8, MBS 2 fits in FP8 and not in BF16: FP8 is what lets it run, where
    the ratio of tokens/s alone (1.00x) read as FP8 buying nothing."""
    path = tmp_path / "q.prx"
    path.write_text(QWEN)
    assert main(["explain", str(path), "--point", "pp=2,ep=8,mbs=2,precision=fp8", "--json"]) == 0
    gain = json.loads(capsys.readouterr().out)["precision_gain"]
    assert gain["over_memory_limit"]["bf16"] > 0 and gain["over_memory_limit"]["low"] == 0
    assert gain["host_seconds"]["low"] > gain["host_seconds"]["bf16"] > 0  # each quantize kernel is a launch
    assert main(["explain", str(path), "--point", "pp=2,ep=8,mbs=2,precision=fp8"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "in BF16 it does not fit in memory (over the limit by" in out
    assert "host launches the GPU waits for:" in out


def test_a_tp_group_across_nodes_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["explain", str(space(tmp_path)), "--point", "tp=16,mbs=1,sharding=dist_opt,precision=bf16"])
    out = " ".join(capsys.readouterr().out.split())
    assert "TP 16 spans 2 scale-up domains of 8 GPUs: every layer's TP collectives cross the inter-node network" in out
    main(["explain", str(space(tmp_path)), "--point", "tp=8,mbs=1,sharding=dist_opt,precision=bf16", "--json"])
    assert json.loads(capsys.readouterr().out)["layout"] == ""


def test_never_legal_names_the_require_and_the_default_behind_it(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = space(tmp_path, extra='  require tp <= 8 "TP inside a node"\n  require mbs >= 1\n')
    assert main(["check", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "never legal: tp = 16 (every point with it breaks P4100 (TP inside a node); `primusc explain P4100`)" in out
    # `overlap_param_gather` is true unless written, and needs a sharded optimizer
    assert ("never legal: sharding = none (every point with it breaks P4014; `primusc explain P4014`; "
            "`overlap_param_gather` is true unless the space sets it") in out


def test_among_ties_alike_in_numerics_fewer_mechanisms_win() -> None:
    """A trial's plan launched full-iteration CUDA graphs for a 0.004% projected gain over the same recipe
    without them."""
    plain = Candidate(precision="fp8")
    graphed = attrs.evolve(plain, cuda_graph="full")
    prov = Provenance(basis="fitted", paired=0.05)
    group, rest = trust.tie_group([graphed, plain], prov, lambda c: 1.00004 if c is graphed else 1.0, lambda c: c)
    assert group == [plain, graphed] and rest == []
    assert trust.machinery(graphed) == ["captures CUDA graphs"] and trust.machinery(plain) == []
    # numerics still come first: BF16 with graphs before FP8 without
    bf16_graphed = attrs.evolve(graphed, precision="bf16")
    group, _ = trust.tie_group([plain, bf16_graphed], prov, lambda c: 1.0, lambda c: c)
    assert group == [bf16_graphed, plain]


def test_the_active_count_is_said_both_ways(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Published active counts differ in which tables they hold (a trial's gpt-oss-120b: 5.71B with both,
    5.13B in OpenAI's model card, which counts the output layer and not the embedding): explain gives each."""
    from primus_lang.lower import stdlib_cards
    from primus_lang.memory import model_size

    _, llama = stdlib_cards()["llama3_1_8b"]
    size = model_size(llama, Candidate(seq_len=8192, gbs=64))
    assert size.embedding == size.output == 128256 * 4096
    path = tmp_path / "q.prx"
    path.write_text(QWEN)
    main(["explain", str(path), "--point", "pp=2,ep=8,mbs=2,precision=fp8"])
    out = " ".join(capsys.readouterr().out.split())
    assert ("3.35B active a token (3.04B without the input embedding, 2.73B without the output layer too)"
            in out)


def test_never_legal_names_the_rule_among_the_points_other_rules_leave(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A re-trial's `mbs = 3` at GBS 64 was said to be ruled out by no single check: batch-divisibility lets a
    TP 32 point through on 16 GPUs (no whole DP to divide by), which world-divisibility removes anyway."""
    path = tmp_path / "c.prx"
    path.write_text(SPACE.format(nodes=2, extra="").replace("tp : 1 | 2 | 8 | 16", "tp : 1 | 2 | 32")
                    .replace("mbs : 1 | 8", "mbs : 1 | 3").replace("gbs = 128", "gbs = 64"))
    assert main(["check", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("never legal: mbs = 3 (every point with it the other rules allow breaks P4002; `primusc explain P4002`)"
            in out)
    assert "never legal: tp = 32 (every point with it breaks P4001; `primusc explain P4001`)" in out


def test_a_rule_that_removes_no_point_is_never_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A reviewer's case: a conditional axis ties two `require`s to `cp = 2`; the rules that do not read `cp`
    then leave no point with it, and world-divisibility (which removes nothing here) had been named."""
    path = tmp_path / "c.prx"
    path.write_text("import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\nspace vac on mi325x_x8 {\n"
                    "  model = llama3_1_8b\n  seq_len = 8192\n  gbs = 128\n  tp : 1 | 2\n  cp : 1 | 2\n"
                    "  mbs : 2 | 4 when cp > 1\n  require mbs != 2 \"no mbs two\"\n  require mbs != 4 \"no mbs four\"\n"
                    "  target megatron + slurm\n}\n")
    assert main(["check", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("never legal: cp = 2 (each point breaks P4100 (no mbs two) or P4100 (no mbs four); none of them alone "
            "rules out every such point)") in out
