"""Per-tensor FP8 on a part whose tensor cores read FP8 operands in any layout (Blackwell): the
quantize kernels write no transposed copy, so they move one byte less per element; block-scaled
recipes quantize their column-wise copy on their own on every part."""

from __future__ import annotations

import attrs
import pytest

from primus_lang.ir import Candidate
from primus_lang.ir.candidate import FP8_RECIPES
from primus_lang.project import project
from primus_lang.project.build import FP8_CAST_BYTES, FP8_WEIGHT_CAST_BYTES, cast_bytes, weight_cast_bytes
from primus_lang.project.precision import precision_gain

from .fixtures import B200, H100, LLAMA3_1_8B, cluster

TN_B200 = attrs.evolve(B200, fp8_layouts="tn")
IN_PLACE = attrs.evolve(B200, fp8_layouts="any")


@pytest.mark.parametrize("recipe", FP8_RECIPES)
def test_only_per_tensor_recipes_skip_the_transposed_copy(recipe: str) -> None:
    cand = Candidate(precision="fp8", fp8_recipe=recipe)
    saved = 1.0 if recipe in ("tensorwise", "delayed") else 0.0
    assert IN_PLACE.fp8_transposes(recipe) == (saved == 0.0)
    assert H100.fp8_transposes(recipe)
    assert cast_bytes(cand, H100) == FP8_CAST_BYTES[recipe]
    assert cast_bytes(cand, IN_PLACE) == FP8_CAST_BYTES[recipe] - saved
    assert weight_cast_bytes(cand, IN_PLACE) == FP8_WEIGHT_CAST_BYTES[recipe] - saved


def test_the_quantize_kernels_and_nothing_else_get_cheaper() -> None:
    cand = Candidate(mbs=1, gbs=64, seq_len=8192, precision="fp8", fp8_recipe="tensorwise")
    tn = precision_gain(LLAMA3_1_8B, cluster(TN_B200, nodes=1), cand)
    anyl = precision_gain(LLAMA3_1_8B, cluster(IN_PLACE, nodes=1), cand)
    parts_tn, parts_any = ({p: low for p, _, low in g.parts} for g in (tn, anyl))
    # tensorwise current scaling moves 6 bytes per element on a TN-only part, 5 where it reads in place
    assert parts_any["quantize kernels"] < parts_tn["quantize kernels"]
    for part in ("GEMMs", "attention", "communication"):
        assert parts_any[part] == pytest.approx(parts_tn[part], rel=1e-12)
    assert anyl.bf16_tokens == pytest.approx(tn.bf16_tokens, rel=1e-12)
    faster = project(LLAMA3_1_8B, cluster(IN_PLACE, nodes=1), cand).tokens_per_gpu
    assert faster > project(LLAMA3_1_8B, cluster(TN_B200, nodes=1), cand).tokens_per_gpu
