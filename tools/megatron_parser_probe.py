"""Run in a subprocess by tools/framework_knowledge.py, with a Megatron-LM source tree first on sys.path:
builds the argument parser megatron/training/arguments.py builds and prints every option as JSON.

Modules a CPU machine lacks (Transformer Engine, apex, triton, flash-attn, ...) are replaced by stubs
that accept any attribute, call and subclassing, so the parser is built by the release's own code."""

from __future__ import annotations

import argparse
import enum
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import import_stubs

# top-level packages Megatron imports optionally or that need a GPU build; stubbed. Packages it checks
# the version or registry of (nvidia_resiliency_ext, emerging_optimizers) are left absent instead.
STUBBED = ("transformer_engine", "apex", "triton", "flash_attn", "flash_attn_interface", "flashattn_hopper",
           "mamba_ssm", "causal_conv1d", "deep_ep", "grouped_gemm", "modelopt",
           "nvtx", "tensorstore", "zarr", "multistorageclient", "nv_one_logger",
           "wandb", "tensorboard", "einops", "sentencepiece", "tiktoken", "transformers", "datasets",
           "nltk", "flask", "flask_restful", "tqdm", "megatron_fsdp", "cuda", "cupy", "nvshmem", "fla",
           "onnx", "pynvml", "psutil", "wrapt", "mlflow", "torchao", "hydra", "omegaconf", "opentelemetry",
           "av", "PIL", "timm", "open_clip", "torchvision")


def _plain(value: Any) -> Any:
    """A default as JSON: numbers, text, booleans and lists as they are, anything else by its name."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.name
    return repr(value)


def _type_name(kind: Any) -> str | None:
    if kind is None:
        return None
    name = getattr(kind, "__name__", None) or type(kind).__name__
    return str(name)


def main() -> None:
    import_stubs.install(STUBBED)
    from megatron.training import arguments

    parser = argparse.ArgumentParser(allow_abbrev=False, conflict_handler="resolve")
    arguments.add_megatron_arguments(parser)
    core = {id(a) for a in parser._actions}
    try:
        # pretrain_gpt.py passes these as its extra_args_provider when nvidia-modelopt is installed
        from megatron.post_training.arguments import add_modelopt_args
    except ImportError:
        pass
    else:
        add_modelopt_args(parser)
    out = []
    for action in parser._actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue
        out.append({
            "provider": None if id(action) in core else "modelopt",
            "options": list(action.option_strings),
            "dest": action.dest,
            "action": type(action).__name__,
            "nargs": action.nargs if action.nargs is None or isinstance(action.nargs, int) else str(action.nargs),
            "const": _plain(action.const),
            "default": _plain(action.default),
            "type": _type_name(action.type),
            "choices": [_plain(c) for c in action.choices] if action.choices is not None else None,
            "deprecated": "deprecated" in (action.help or "").lower(),
        })
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
