"""What import-hf cannot map, it refuses with a registered P31xx code pointing at the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from primus_lang.diagnostics import CompileError
from primus_lang.hfimport import map_config, read_config

FIXTURES = Path(__file__).parent / "fixtures"


def base_llama() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / "llama3_1_70b.json").read_text())
    return data


def refuse(tmp_path: Path, data: object, raw: bytes | None = None) -> CompileError:
    path = tmp_path / "config.json"
    path.write_bytes(raw if raw is not None else json.dumps(data, indent=2).encode())
    with pytest.raises(CompileError) as info:
        map_config(read_config(path), "card")
    return info.value


def codes(err: CompileError) -> list[str]:
    return [d.code.id for d in err.diagnostics]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CompileError) as info:
        read_config(tmp_path / "absent.json")
    assert codes(info.value) == ["P3101"]


def test_not_json_points_at_the_error(tmp_path: Path) -> None:
    err = refuse(tmp_path, None, raw=b'{"model_type": "llama",\n  "hidden_size": }')
    assert codes(err) == ["P3101"]
    span = err.diagnostics[0].span
    assert span is not None and span.line == 2


def test_json_list_and_binary(tmp_path: Path) -> None:
    assert codes(refuse(tmp_path, [1, 2])) == ["P3101"]
    assert codes(refuse(tmp_path, None, raw=b"\xff\xfe\x00junk")) == ["P3101"]


def test_unknown_model_type_suggests_a_near_name(tmp_path: Path) -> None:
    data = base_llama() | {"model_type": "lama"}
    err = refuse(tmp_path, data)
    assert codes(err) == ["P3102"]
    assert "did you mean `llama`" in err.diagnostics[0].help
    assert err.diagnostics[0].span is not None


def test_missing_model_type(tmp_path: Path) -> None:
    data = base_llama()
    del data["model_type"]
    assert codes(refuse(tmp_path, data)) == ["P3103"]


def test_every_missing_field_is_reported(tmp_path: Path) -> None:
    data = base_llama()
    for key in ("num_hidden_layers", "vocab_size", "intermediate_size"):
        del data[key]
    err = refuse(tmp_path, data)
    assert codes(err) == ["P3103"] * 3
    text = " ".join(d.message for d in err.diagnostics)
    assert "num_hidden_layers" in text and "vocab_size" in text and "intermediate_size" in text


def test_head_dim_needed_when_hidden_does_not_split(tmp_path: Path) -> None:
    data = base_llama() | {"hidden_size": 8000, "num_attention_heads": 96, "num_key_value_heads": 8}
    err = refuse(tmp_path, data)
    assert codes(err) == ["P3103"] and "head_dim" in err.diagnostics[0].message


def test_hybrid_by_model_type(tmp_path: Path) -> None:
    err = refuse(tmp_path, json.loads((FIXTURES / "jamba_hybrid.json").read_text()))
    assert codes(err) == ["P3104"]


def test_hybrid_by_field(tmp_path: Path) -> None:
    assert codes(refuse(tmp_path, base_llama() | {"mamba_d_state": 128})) == ["P3104"]
    layer_types = ["linear_attention", "full_attention"] * 40
    assert codes(refuse(tmp_path, base_llama() | {"layer_types": layer_types})) == ["P3104"]


def test_gated_relu_is_unsupported(tmp_path: Path) -> None:
    err = refuse(tmp_path, base_llama() | {"hidden_act": "relu"})
    assert codes(err) == ["P3105"]
    assert err.diagnostics[0].span is not None


def test_qwen3_moe_sparse_step_and_scattered_dense_layers(tmp_path: Path) -> None:
    qwen = json.loads((FIXTURES / "qwen3_235b_a22b.json").read_text())
    assert codes(refuse(tmp_path, qwen | {"decoder_sparse_step": 2})) == ["P3105"]
    assert codes(refuse(tmp_path, qwen | {"mlp_only_layers": [0, 5]})) == ["P3105"]


def test_qwen3_moe_dense_prefix_is_kept(tmp_path: Path) -> None:
    qwen = json.loads((FIXTURES / "qwen3_235b_a22b.json").read_text()) | {"mlp_only_layers": [0, 1]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(qwen))
    model = map_config(read_config(path), "q").model
    assert model.moe is not None and model.moe.dense_layers == 2


def test_gpt_oss_window_pattern_must_be_periodic(tmp_path: Path) -> None:
    gpt = json.loads((FIXTURES / "gpt_oss_120b.json").read_text())
    irregular = ["sliding_attention", "full_attention", "full_attention"] + ["sliding_attention"] * 33
    err = refuse(tmp_path, gpt | {"layer_types": irregular})
    assert codes(err) == ["P3105"] and "every n-th layer" in err.diagnostics[0].message
    assert err.diagnostics[0].span is not None and err.diagnostics[0].span.line > 1


def test_no_near_name_into_another_architecture(tmp_path: Path) -> None:
    """issue 20: qwen2 was told "did you mean `qwen3`?", whose QK norms Qwen2.5 lacks."""
    for other in ("qwen4", "gemma4", "llama5", "deepseek_v4"):
        err = refuse(tmp_path, base_llama() | {"model_type": other})
        assert codes(err) == ["P3102"] and "did you mean" not in (err.diagnostics[0].help or ""), other


@pytest.mark.parametrize(("model_type", "missing"), [
    ("qwen2_moe", "shared_expert_gate"), ("llama4", "text_config"), ("gemma3", "text_config"),
])
def test_known_family_names_the_missing_feature(tmp_path: Path, model_type: str, missing: str) -> None:
    err = refuse(tmp_path, base_llama() | {"model_type": model_type})
    assert codes(err) == ["P3102"] and missing in err.diagnostics[0].message
    assert "did you mean" not in (err.diagnostics[0].help or "")
    assert err.diagnostics[0].span is not None


def test_llama4_maverick_and_long_chunks_name_the_feature(tmp_path: Path) -> None:
    scout = json.loads((FIXTURES / "llama4_scout.json").read_text())
    err = refuse(tmp_path, scout | {"interleave_moe_layer_step": 49})
    assert codes(err) == ["P3105"] and "no layer would route to experts" in (err.diagnostics[0].help or "")
    err = refuse(tmp_path, scout | {"attention_chunk_size": 2048})
    assert codes(err) == ["P3105"] and "chunked attention" in (err.diagnostics[0].help or "")


def test_bad_values(tmp_path: Path) -> None:
    err = refuse(tmp_path, base_llama() | {"hidden_size": "8192", "tie_word_embeddings": "no"})
    assert sorted(codes(err)) == ["P3106", "P3106"]
    assert codes(refuse(tmp_path, base_llama() | {"num_key_value_heads": 7})) == ["P3106"]
    assert codes(refuse(tmp_path, base_llama() | {"num_hidden_layers": 0})) == ["P3106"]


@pytest.mark.parametrize(("data", "said"), [
    ({"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 131072}, "a tokenizer_config.json"),
    ({"metadata": {"total_size": 1}, "weight_map": {"lm_head.weight": "model-00001.safetensors"}},
     "a weights index"),
    ({"bos_token_id": 1, "do_sample": True, "temperature": 0.6}, "a generation_config.json"),
])
def test_another_file_of_the_models_folder_is_named(tmp_path: Path, data: dict[str, Any], said: str) -> None:
    err = refuse(tmp_path, data)
    assert codes(err) == ["P3103"] and f"is {said}" in err.diagnostics[0].message
    assert err.diagnostics[0].message.endswith("not the model's config.json")


def test_qwen2_vl_is_a_multimodal_model_not_qwen2(tmp_path: Path) -> None:
    err = refuse(tmp_path, {**base_llama(), "model_type": "qwen2_vl"})
    assert codes(err) == ["P3102"] and "vision encoder" in err.diagnostics[0].message
    assert "did you mean" not in str(err.diagnostics[0].help)


def test_layer_types_of_another_length_is_said_as_such(tmp_path: Path) -> None:
    data = {**json.loads((FIXTURES / "gpt_oss_120b.json").read_text())}
    data["layer_types"] = data["layer_types"][:-2]
    err = refuse(tmp_path, data)
    assert "layer_types lists 34 layers; num_hidden_layers is 36" in err.diagnostics[0].message
