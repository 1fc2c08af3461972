"""What a measurement's numbers depend on, and when two sets of them may be mixed.

The facts are the ones that move kernel and collective times: the device model, the runtime
(CUDA/ROCm/CPU), the driver, torch and the frameworks above it, the collective backend. None of them
is a date or a host name, so two nodes of one cluster state the same facts and a campaign's file
says the same thing wherever it is merged.
"""

from __future__ import annotations

import importlib.metadata
import re

from attrs import frozen

from primus_lang import __version__
from primus_lang.bench.runtime import DeviceInfo

# frameworks whose kernels a training step runs besides torch's own; absent ones are not recorded
FRAMEWORKS = ("megatron-core", "transformer-engine", "primus-turbo", "flash-attn")
KEY_FACTS = ("device_name", "runtime", "driver", "torch")


def facts_of(device: DeviceInfo, backend: str) -> dict[str, str]:
    facts = {
        "device_name": device.name, "kind": device.kind, "runtime": device.runtime, "driver": device.driver,
        "torch": device.torch_version, "backend": backend, "primusc": __version__,
    }
    for name in FRAMEWORKS:
        try:
            facts[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return facts


def key_of(facts: dict[str, str]) -> str:
    """The device key the facts describe (``DeviceInfo.key``), or "" if a key fact is missing."""
    if any(k not in facts for k in KEY_FACTS):
        return ""
    return f"{facts['device_name']}|{facts['runtime']}|{facts['driver']}|torch {facts['torch']}"


def device_of(key: str, facts: dict[str, str]) -> DeviceInfo:
    """A ``DeviceInfo`` for a device measured elsewhere: the hybrid oracle reads its rows, never runs it."""
    kind = facts.get("kind", "cpu")
    return DeviceInfo("cpu" if kind == "cpu" else "cuda", kind, facts["device_name"], facts["runtime"],
                      facts["driver"], facts["torch"])


def _major(version: str) -> str:
    """``cuda 12.8`` -> ``cuda 12``; ``cpu`` -> ``cpu``."""
    family, _, number = version.partition(" ")
    return f"{family} {number.split('.')[0]}".strip()


def _release(torch_version: str) -> str:
    """``2.7.1+cu128`` -> ``2.7``: torch changes kernels between releases, not between patches."""
    found = re.match(r"(\d+)\.(\d+)", torch_version)
    return f"{found[1]}.{found[2]}" if found else torch_version


@frozen
class Clash:
    kind: str  # "device" | "runtime"
    fact: str  # which fact differs
    ours: str
    theirs: str


def clash(ours: dict[str, str], theirs: dict[str, str]) -> Clash | None:
    """Why two devices measured for one target must not be mixed, or None when they may.

    The driver and patch releases may differ (they are recorded and keyed apart); the device model,
    the runtime's major version and torch's major.minor release may not."""
    if ours.get("device_name") != theirs.get("device_name"):
        return Clash("device", "device", ours.get("device_name", "?"), theirs.get("device_name", "?"))
    if _major(ours.get("runtime", "")) != _major(theirs.get("runtime", "")):
        return Clash("runtime", "runtime", ours.get("runtime", "?"), theirs.get("runtime", "?"))
    if _release(ours.get("torch", "")) != _release(theirs.get("torch", "")):
        return Clash("runtime", "torch release", ours.get("torch", "?"), theirs.get("torch", "?"))
    return None
