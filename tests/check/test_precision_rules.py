"""P4035: NVFP4 (``precision = fp4``) needs an NVIDIA GPU with FP4 tensor cores; P4040: FP8 needs a
GPU with FP8 tensor cores. The vectorised mask, the lazy enumeration and the one-point path agree."""

from __future__ import annotations

import attrs
import pytest

from primus_lang.check import legal_mask, legal_points, legality, raw_points, summarize
from primus_lang.ir import Candidate, Space
from primus_lang.lower import loads_program

MODEL = """
model d { num_layers = 24; hidden = 2048; ffn_hidden = 8192; heads = 16; kv_heads = 4; vocab = 32000; seq_len = 4096 }
"""
GPUS = {
    "blackwell": "vendor = nvidia; peak_bf16 = 2250 TFLOP/s; peak_fp8 = 4500 TFLOP/s; peak_fp4 = 9000 TFLOP/s",
    "hopper": "vendor = nvidia; peak_bf16 = 989 TFLOP/s; peak_fp8 = 1979 TFLOP/s",
    "ampere": "vendor = nvidia; peak_bf16 = 312 TFLOP/s",  # no FP8: Transformer Engine refuses it
    # MXFP4 tensor cores, but NVFP4 is Transformer Engine's recipe
    "mi355x": "vendor = amd; peak_bf16 = 2517 TFLOP/s; peak_fp8 = 5033 TFLOP/s; peak_fp4 = 10066 TFLOP/s",
}


def space(gpu: str) -> Space:
    src = MODEL + (f"gpu g {{ {GPUS[gpu]}; hbm_capacity = 192 GiB; hbm_bandwidth = 8 TB/s\n"
                   "  scale_up_bandwidth = 900 GB/s }\n"
                   "cluster c { gpu = g; nodes = 2; gpus_per_node = 8 }\n"
                   "space s on c { model = d\n gbs = 64\n tp : 1 | 2\n precision : bf16 | fp8 | fp4\n}")
    return loads_program(src, "t.prx").spaces[0]


@pytest.mark.parametrize(("gpu", "fp4_legal"), [("blackwell", True), ("hopper", False), ("mi355x", False)])
def test_fp4_needs_nvfp4_tensor_cores(gpu: str, fp4_legal: bool) -> None:
    s = space(gpu)
    refused = {v.code: v for v in legality(s, Candidate(gbs=64, precision="fp4"))}
    assert ("P4035" not in refused) == fp4_legal
    if not fp4_legal:
        assert "(fp4-needs-nvfp4)" in refused["P4035"].message and "fp8" in refused["P4035"].help
    for other in ("bf16", "fp8"):
        assert not legality(s, Candidate(gbs=64, precision=other))
    points = list(raw_points(s))
    one = [c for c in points if not legality(s, c)]
    assert [c for c, ok in zip(points, legal_mask(s, points), strict=True) if ok] == one
    assert list(legal_points(s)) == one
    assert {c.precision for c in one} == ({"bf16", "fp8", "fp4"} if fp4_legal else {"bf16", "fp8"})
    removed = {r.code: r.removed for r in summarize(s).rules}
    assert removed.get("P4035", 0) == (0 if fp4_legal else 2)


def test_fp8_needs_fp8_tensor_cores() -> None:
    s = space("ampere")
    refused = {v.code: v for v in legality(s, Candidate(gbs=64, precision="fp8"))}
    assert "(fp8-needs-fp8)" in refused["P4040"].message and "bf16" in refused["P4040"].help
    assert "P4040" not in {v.code for v in legality(space("hopper"), Candidate(gbs=64, precision="fp8"))}
    points = list(raw_points(s))
    one = [c for c in points if not legality(s, c)]
    assert [c for c, ok in zip(points, legal_mask(s, points), strict=True) if ok] == one
    assert {c.precision for c in one} == {"bf16"}
    assert {r.code: r.removed for r in summarize(s).rules}["P4040"] == 2


def test_check_names_the_axis_values_no_legal_point_takes(capsys: pytest.CaptureFixture[str]) -> None:
    # a new user's trial: `primusc check` on A100 counted P4040's removals but never said that
    # `precision = fp8` can be legal nowhere there
    from primus_lang.check import never_legal

    assert never_legal(space("ampere")) == [("precision", "fp8", "P4040", "", False), ("precision", "fp4", "P4035", "", False)]
    assert never_legal(space("blackwell")) == []
    # a conditional axis takes its default where its condition is off (a reviewer's finding: the Qwen3
    # example's `account_for_embedding : false | true when pp > 2` was named never legal at false)
    from primus_lang.lower import load_program, pick_space
    from primus_lang.resources import data_dir

    for example in sorted(data_dir("examples").glob("*.prx")):
        assert never_legal(pick_space(load_program(str(example)))) == [], example.name


def test_a_value_several_checks_rule_out_together_names_them() -> None:
    # a new user's trial: an imported space's note said `mbs` 12 was "ruled out together" and named no rule;
    # here MBS 8 breaks the batch split at TP 1 (GBS 256 over 8 x DP 64) and the space's require at TP 2
    from primus_lang.check import never_legal, never_legal_why

    text = ("import models.llama3 (llama3_1_8b)\nimport clusters.amd (mi325x_x8)\n"
            "space s on mi325x_x8 {\n  model = llama3_1_8b\n  gbs = 256\n  tp : 1 | 2\n  mbs : 1 | 8\n"
            "  require tp == 1 or mbs < 8 \"no large micro-batch under TP\"\n}\n")
    s = loads_program(text, "t.prx").spaces[0]
    assert ("mbs", 8, "", "", False) in never_legal(s)
    assert never_legal_why(s, "mbs", 8, "") == ("at mbs = 8 each point breaks P4002 (batch-divisibility) or P4100 "
                                                 "(no large micro-batch under TP); none of them alone rules out every such point")


@pytest.mark.parametrize(("gpu", "arch", "legal"), [("hopper", "hopper", False), ("blackwell", "blackwell", True),
                                                    ("mi355x", "cdna4", True), ("mi355x", "cdna3", False),
                                                    ("hopper", "", True)])
def test_mxfp8_needs_mx_tensor_cores(gpu: str, arch: str, legal: bool) -> None:
    # a new user's trial: MXFP8 on H100 was legal, projected and emitted; Transformer Engine refuses it
    # there. A profile that names no architecture is not refused
    s = space(gpu)
    s = attrs.evolve(s, cluster=attrs.evolve(s.cluster, gpu=attrs.evolve(s.cluster.gpu, arch=arch)))
    cand = Candidate(gbs=64, precision="fp8", fp8_recipe="mxfp8")
    refused = {v.code: v for v in legality(s, cand)}
    assert ("P4048" not in refused) == legal
    if not legal:
        assert "(mxfp8-needs-mx)" in refused["P4048"].message and "blockwise" in refused["P4048"].help
    assert "P4048" not in {v.code for v in legality(s, cand.replace(fp8_recipe="blockwise"))}
    points = [c.replace(fp8_recipe="mxfp8") for c in raw_points(s)]
    assert list(legal_mask(s, points)) == [not legality(s, c) for c in points]
