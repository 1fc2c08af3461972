"""Which Megatron-LM a launch of each framework runs: the release a Megatron-LM launch names, the
commit Primus or Megatron-Bridge pins. The checker asks it for the megatron-core whose asserts a
candidate must meet; emission for the flags a launch may write."""

from __future__ import annotations

from primus_lang.frameworks import bridge, megatron, primus


def megatron_of(framework: str, megatron_version: str = "", bridge_version: str = "", primus_version: str = "") -> str:
    """The Megatron-LM version table a ``framework`` launch runs on (``megatron_version``: the release a
    Megatron-LM launch names, empty for the default; ``bridge_version`` and ``primus_version``: the
    Bridge and Primus releases, likewise)."""
    if framework == "primus":
        return primus.megatron_version(primus_version or primus.DEFAULT_VERSION)
    if framework == "bridge":
        return bridge.megatron_version(bridge_version or bridge.DEFAULT_VERSION)
    return megatron_version or megatron.DEFAULT_VERSION
