"""Run in a subprocess by tools/framework_knowledge.py, with a Megatron-LM source tree first on sys.path:
builds the argument parser megatron/training/arguments.py builds and prints every option as JSON.

Modules a CPU machine lacks (Transformer Engine, apex, triton, flash-attn, ...) are replaced by stubs
that accept any attribute, call and subclassing, so the parser is built by the release's own code."""

from __future__ import annotations

import argparse
import enum
import importlib.abc
import importlib.machinery
import json
import sys
import types
from typing import Any

# top-level packages Megatron imports optionally or that need a GPU build; stubbed when missing
STUBBED = ("transformer_engine", "apex", "triton", "flash_attn", "flash_attn_interface", "flashattn_hopper",
           "mamba_ssm", "causal_conv1d", "deep_ep", "grouped_gemm", "modelopt",
           "nvtx", "tensorstore", "zarr", "multistorageclient", "nv_one_logger",
           "wandb", "tensorboard", "einops", "sentencepiece", "tiktoken", "transformers", "datasets",
           "nltk", "flask", "flask_restful", "tqdm", "megatron_fsdp", "cuda", "cupy", "nvshmem", "fla",
           "onnx", "pynvml", "psutil", "wrapt", "mlflow", "torchao", "hydra", "omegaconf", "opentelemetry",
           "av", "PIL", "timm", "open_clip", "torchvision")


class _StubMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _stub_class("instance")

    def __iter__(cls) -> Any:
        return iter(())

    def __bool__(cls) -> bool:
        return False

    def __or__(cls, other: Any) -> Any:
        return cls

    __ror__ = __or__

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __mro_entries__(cls, bases: Any) -> tuple[type, ...]:
        return (object,)


def _stub_class(name: str) -> Any:
    return _StubMeta(name, (), {})


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name[:1].islower():
            return _stub_module(f"{self.__name__}.{name}")
        return _stub_class(name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # a decorator (`@triton.jit`, `@triton.jit(...)`) that leaves the function as it is
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda fn: fn


def _stub_module(name: str) -> types.ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    module = _StubModule(name)
    module.__path__ = []  # a package, so submodules import
    module.__version__ = "0.0.0"
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    sys.modules[name] = module
    return module


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.split(".")[0] not in STUBBED:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            try:
                spec = finder.find_spec(fullname, path, target)  # type: ignore[attr-defined]
            except (ImportError, AttributeError, ValueError):
                spec = None
            if spec is not None:
                return None  # installed: the real one
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: Any) -> types.ModuleType:
        return _stub_module(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


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
    # torch decides once, on first use, whether triton is there: decided before the stub exists
    import torch._dynamo
    import torch._inductor.codecache  # noqa: F401

    sys.meta_path.insert(0, _Finder())
    # releases from core_v0.18 use Python 3.12's typing.override, a decorator that changes nothing
    import typing

    if not hasattr(typing, "override"):
        typing.override = lambda fn: fn  # type: ignore[attr-defined]
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
