"""A multimodal wrapper's config (LLaVA) is refused as a wrapper, with its `text_config` to import,
not offered the nearest text model's name (`llava` is not a typo of `llama`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hfimport.test_refusals import base_llama, codes, refuse


@pytest.mark.parametrize(("inner", "said"), [
    ("llama", "`llama`, which primusc imports"), ("clip_text", "`clip_text`, which primusc does not import"),
])
def test_wrapper_says_to_import_its_text_config(tmp_path: Path, inner: str, said: str) -> None:
    llava = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
             "text_config": base_llama() | {"model_type": inner},
             "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024}}
    err = refuse(tmp_path, llava)
    d = err.diagnostics[0]
    assert codes(err) == ["P3102"] and "multimodal wrapper" in d.message and d.span is not None
    assert "did you mean" not in (d.help or "") and "`text_config`" in (d.help or "") and said in (d.help or "")


@pytest.mark.parametrize("model_type", ["llama4", "gemma3", "qwen2_moe", "gemma3n"])
def test_known_family_refusal_reads_as_a_sentence(tmp_path: Path, model_type: str) -> None:
    err = refuse(tmp_path, base_llama() | {"model_type": model_type})
    assert "the IR cannot express " in err.diagnostics[0].message and "no a " not in err.diagnostics[0].message
