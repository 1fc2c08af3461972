"""Stand-ins for the packages a CPU machine lacks (Transformer Engine, apex, flash-attn, ...), so a
framework's own code runs far enough to build its argument parser or its recipe configs.

Used by tools/megatron_parser_probe.py and tools/bridge_recipe_probe.py, each run in a subprocess by
tools/framework_knowledge.py. A stubbed name accepts any attribute, call and subclassing; a real class
derived from a stub still constructs; a stub called with one function (a decorator) returns it."""

from __future__ import annotations

import abc
import importlib.abc
import importlib.machinery
import sys
import types
import typing
from collections.abc import Iterable
from typing import Any


class _StubMeta(abc.ABCMeta):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return stub_class(name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "_is_stub" not in cls.__dict__:  # a real class derived from a stub: construct it
            return super().__call__(*args, **kwargs)
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return stub_class("instance")

    def __iter__(cls) -> Any:
        return iter(())

    def __bool__(cls) -> bool:
        return False

    def __or__(cls, other: Any) -> Any:
        return cls

    __ror__ = __or__

    def __getitem__(cls, item: Any) -> Any:
        return cls


def stub_class(name: str) -> Any:
    return _StubMeta(name, (), {"_is_stub": True})


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name[:1].islower():
            return _stub_module(f"{self.__name__}.{name}")
        return stub_class(name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # a decorator (`@triton.jit`, `@triton.jit(...)`) that leaves the function as it is
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda fn: fn


def _stub_module(name: str, version: str = "0.0.0") -> types.ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    module = _StubModule(name)
    module.__path__ = []  # a package, so submodules import
    module.__version__ = version
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    sys.modules[name] = module
    return module


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, packages: frozenset[str], prefixes: tuple[str, ...], version: str) -> None:
        self.packages, self.prefixes, self.version = packages, prefixes, version

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        top = fullname.split(".")[0]
        if top not in self.packages and not any(fullname == p or fullname.startswith(p + ".") for p in self.prefixes):
            return None
        return importlib.machinery.ModuleSpec(fullname, _Loader(self.version), is_package=True)


class _Loader(importlib.abc.Loader):
    def __init__(self, version: str) -> None:
        self.version = version

    def create_module(self, spec: Any) -> types.ModuleType:
        return _stub_module(spec.name, self.version)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install(packages: Iterable[str], prefixes: Iterable[str] = (), version: str = "0.0.0") -> None:
    """Stub ``packages`` (top-level names) and the modules under ``prefixes``; the stubs report ``version``."""
    # torch decides once, on first use, whether triton is there: decided before a stub could answer
    import torch._dynamo
    import torch._inductor.codecache  # noqa: F401

    sys.meta_path.insert(0, _Finder(frozenset(packages), tuple(prefixes), version))
    # releases from core_v0.18 use Python 3.12's typing.override, a decorator that changes nothing
    if not hasattr(typing, "override"):
        typing.override = lambda fn: fn  # type: ignore[attr-defined]
