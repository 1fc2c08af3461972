"""Run in a subprocess by tools/framework_knowledge.py (``bridge``), in a Python that has torch, omegaconf,
hydra-core and transformers: evaluates every pretraining recipe Megatron-Bridge exports, library and
performance, on this CPU, and prints each ConfigContainer as Hydra override paths with their values.

    python tools/bridge_recipe_probe.py BRIDGE_SRC MEGATRON_TREE > recipes.json

Nothing is downloaded: a recipe's ``AutoBridge.from_hf_pretrained(HF_ID)`` builds its model config from
transformers' defaults for the model type with the dimensions below (each model's public config.json on
the Hugging Face Hub); a family without a row keeps transformers' defaults, which leaves the recipe's own
settings (parallelism, precision, batch, overlap) as the recipe writes them. The GPU a recipe asks about
is the one its name gives (H100 for a library recipe)."""

from __future__ import annotations

import importlib
import json
import logging
import pkgutil
import re
import sys
import types
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import import_stubs

STUBBED = ("transformer_engine", "transformer_engine_torch", "apex", "flash_attn", "flash_attn_interface",
           "flashattn_hopper", "flash_mla", "mamba_ssm", "causal_conv1d", "deep_ep", "deep_gemm", "grouped_gemm",
           "modelopt", "nvtx", "tensorstore", "zarr", "multistorageclient", "nv_one_logger", "wandb", "tensorboard",
           "mlflow", "comet_ml", "megatron_fsdp", "cupy", "nvshmem", "fla", "onnx", "pynvml", "torchao",
           "opentelemetry", "diffusers", "peft", "datasets", "mistral_common", "qwen_vl_utils", "flashinfer",
           "fast_hadamard_transform", "nemo_run", "cuda", "liger_kernel", "tilelang", "hybrid_ep", "triton", "nvidia",
           "cudnn", "cuequivariance", "kitchen", "flashattn", "sonic_moe", "quack", "cutlass", "open_clip", "timm")
PREFIXES = ("megatron.energon", "torch.utils.tensorboard", "google.protobuf")

_LLAMA3 = {"vocab_size": 128256, "rope_theta": 500000.0, "num_key_value_heads": 8, "max_position_embeddings": 8192}
_LLAMA31 = {**_LLAMA3, "max_position_embeddings": 131072,
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 8192}}
# (HF id pattern, model_type, architecture, dimensions): meta-llama/*, Qwen/*, deepseek-ai/*, openai/* config.json
MODELS: list[tuple[str, str, str, dict[str, Any]]] = [
    (r"Meta-Llama-3-8B$", "llama", "LlamaForCausalLM",
     {**_LLAMA3, "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": 14336}),
    (r"Meta-Llama-3-70B$", "llama", "LlamaForCausalLM",
     {**_LLAMA3, "hidden_size": 8192, "num_hidden_layers": 80, "num_attention_heads": 64, "intermediate_size": 28672}),
    (r"Llama-3\.1-8B", "llama", "LlamaForCausalLM",
     {**_LLAMA31, "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": 14336}),
    (r"Llama-3\.1-70B", "llama", "LlamaForCausalLM",
     {**_LLAMA31, "hidden_size": 8192, "num_hidden_layers": 80, "num_attention_heads": 64, "intermediate_size": 28672}),
    (r"Llama-3\.1-405B", "llama", "LlamaForCausalLM",
     {**_LLAMA31, "hidden_size": 16384, "num_hidden_layers": 126, "num_attention_heads": 128,
      "intermediate_size": 53248}),
    (r"Llama-3\.2-1B", "llama", "LlamaForCausalLM",
     {**_LLAMA31, "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32, "intermediate_size": 8192,
      "tie_word_embeddings": True}),
    (r"Llama-3\.2-3B", "llama", "LlamaForCausalLM",
     {**_LLAMA31, "hidden_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 24, "intermediate_size": 8192,
      "tie_word_embeddings": True}),
    (r"Llama-2", "llama", "LlamaForCausalLM", {}),
    (r"DeepSeek-V3|Kimi-K2|Moonlight", "deepseek_v3", "DeepseekV3ForCausalLM",
     {"hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128, "intermediate_size": 18432,
      "moe_intermediate_size": 2048, "n_routed_experts": 256, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
      "q_lora_rank": 1536, "kv_lora_rank": 512, "vocab_size": 129280}),
    (r"DeepSeek-V2", "deepseek_v2", "DeepseekV2ForCausalLM", {}),
    (r"Qwen3-Next", "qwen3_next", "Qwen3NextForCausalLM", {}),
    (r"Qwen3-30B-A3B", "qwen3_moe", "Qwen3MoeForCausalLM",
     {"hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4,
      "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936}),
    (r"Qwen3-235B-A22B", "qwen3_moe", "Qwen3MoeForCausalLM",
     {"hidden_size": 4096, "num_hidden_layers": 94, "num_attention_heads": 64, "num_key_value_heads": 4,
      "moe_intermediate_size": 1536, "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936}),
    (r"Qwen3-.*A\d+B", "qwen3_moe", "Qwen3MoeForCausalLM", {}),
    (r"Qwen3\.5-.*A\d+B", "qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration", {}),
    (r"Qwen3\.5-", "qwen3_5", "Qwen3_5ForConditionalGeneration", {}),
    (r"Qwen3-", "qwen3", "Qwen3ForCausalLM", {}),
    (r"Qwen2", "qwen2", "Qwen2ForCausalLM", {}),
    (r"gpt-oss-120b", "gpt_oss", "GptOssForCausalLM",
     {"hidden_size": 2880, "num_hidden_layers": 36, "num_local_experts": 128, "num_experts_per_tok": 4}),
    (r"gpt-oss", "gpt_oss", "GptOssForCausalLM", {}),
    (r"gemma-2", "gemma2", "Gemma2ForCausalLM", {}),
    (r"GLM-4\.5", "glm4_moe", "Glm4MoeForCausalLM", {}),
    (r"GLM-5", "glm_moe_dsa", "GlmMoeDsaForCausalLM", {}),
    (r"Nemotron-3|Nemotron-H|nemotron-h", "nemotron_h", "NemotronHForCausalLM", {}),
    (r"DeepSeek-V4", "deepseek_v4", "DeepseekV4ForCausalLM", {}),
]
GPUS = {"h100": (9, 0, "NVIDIA H100 80GB HBM3"), "b200": (10, 0, "NVIDIA B200"), "b300": (10, 3, "NVIDIA B300"),
        "gb200": (10, 0, "NVIDIA GB200"), "gb300": (10, 3, "NVIDIA GB300"), "vr200": (11, 0, "NVIDIA VR200"),
        "r100": (11, 0, "NVIDIA R100")}
PERF_NAME = re.compile(r"_(pretrain)_(\d+)gpu_([a-z0-9]+)_(bf16|fp8cs|fp8mx|fp8sc|fp8ds|nvfp4)(_\w+)?_config$")


def main() -> None:
    bridge_src, megatron_tree = sys.argv[1:3]
    sys.path[:0] = [bridge_src, megatron_tree]
    import_stubs.install(STUBBED, PREFIXES, version="99.0.0")
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    import torch
    import transformers
    from megatron.bridge.models.conversion.auto_bridge import AutoBridge
    from megatron.bridge.training.utils.omegaconf_utils import create_omegaconf_dict_config
    from omegaconf import OmegaConf

    asked: list[str] = []

    def hf_config(hf_id: Any) -> Any:
        asked.append(str(hf_id))
        for pattern, model_type, architecture, dims in MODELS:
            if re.search(pattern, str(hf_id)):
                config = transformers.AutoConfig.for_model(model_type, **dims)
                config.architectures = [architecture]
                config.torch_dtype = "bfloat16"
                return config
        raise LookupError(f"no offline model config for {hf_id!r}")

    AutoBridge.from_hf_pretrained = classmethod(lambda cls, hf_id, **_: cls.from_hf_config(hf_config(hf_id)))
    gpu = ["h100"]

    def properties(*_a: Any, **_k: Any) -> Any:
        major, minor, name = GPUS[gpu[0]]
        return types.SimpleNamespace(major=major, minor=minor, name=name, total_memory=192 << 30,
                                     multi_processor_count=148)

    torch.cuda.get_device_properties = properties
    torch.cuda.get_device_capability = lambda *a, **k: (properties().major, properties().minor)
    torch.cuda.get_device_name = lambda *a, **k: properties().name
    torch.cuda.device_count = lambda: 1

    out: dict[str, Any] = {"recipes": {}, "errors": {}}
    for name, (where, fn) in sorted(_recipes().items()):
        m = PERF_NAME.search(name)
        gpu[0] = m.group(3) if m is not None and m.group(3) in GPUS else "h100"
        asked.clear()
        try:
            config = fn()
            tree, _ = create_omegaconf_dict_config(config)
            flat = _flatten(OmegaConf.to_container(tree, resolve=False))
        except Exception as err:  # a recipe this CPU cannot build: named in the table with why
            out["errors"][name] = f"{type(err).__name__}: {err}"[:300]
            continue
        out["recipes"][name] = {
            "where": where, "gpu": gpu[0], "hf_id": asked[0] if asked else "",
            "model_class": type(config.model).__qualname__,
            "comm_overlap": config.comm_overlap is not None, "paths": flat,
        }
    from megatron.bridge.training.mixed_precision import MIXED_PRECISION_RECIPES

    # the names `mixed_precision=NAME` takes, and the settings each precision recipe applies
    out["precisions"] = {name: _flatten(vars(make())) for name, make in sorted(MIXED_PRECISION_RECIPES.items())}
    json.dump(out, sys.stdout, sort_keys=True, default=repr)


def _recipes() -> dict[str, tuple[str, Any]]:
    """Every pretraining recipe run_recipe.py or the performance launcher can name: the library's exports
    and its per-GPU subpackages, and the flat performance recipes."""
    import megatron.bridge.perf_recipes as perf
    import megatron.bridge.recipes as library

    found: dict[str, tuple[str, Any]] = {}
    for name in dir(library):
        if name.endswith("_config") and "_pretrain" in name and callable(getattr(library, name)):
            found.setdefault(name, ("megatron.bridge.recipes", getattr(library, name)))
    for family in pkgutil.iter_modules(library.__path__):
        if not family.ispkg or family.name == "utils":
            continue
        module = importlib.import_module(f"megatron.bridge.recipes.{family.name}")
        for sub in pkgutil.iter_modules(module.__path__):
            if sub.ispkg:
                inner = importlib.import_module(f"{module.__name__}.{sub.name}")
                for name in getattr(inner, "__all__", dir(inner)):
                    if name.endswith("_config") and "_pretrain" in name and callable(getattr(inner, name, None)):
                        found.setdefault(name, (inner.__name__, getattr(inner, name)))
    for family in pkgutil.iter_modules(perf.__path__):
        if not family.ispkg or family.name.startswith("_"):
            continue
        module = importlib.import_module(f"megatron.bridge.perf_recipes.{family.name}")
        for name in dir(module):
            if PERF_NAME.search(name) and callable(getattr(module, name)):
                found[name] = (module.__name__, getattr(module, name))
    return found


def _flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(_flatten(value, path + "."))
        else:
            out[path] = value if isinstance(value, int | float | str | bool | type(None) | list) else repr(value)
    return out


if __name__ == "__main__":
    main()
