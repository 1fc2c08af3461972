"""What a benchmark or hybrid oracle's timings are when they were not taken on the space's GPU (a new user's
trial: CPU compute beside the H100 profile's band and simulated collectives, said nowhere)."""

from __future__ import annotations

from types import SimpleNamespace

from primus_lang.bench.runtime import DeviceInfo
from primus_lang.commands._options import foreign_device
from primus_lang.lower import load_program
from primus_lang.resources import data_dir


def _gpu(name: str) -> object:
    program = load_program(str(data_dir("stdlib") / "hardware" / "calibrated.prx"))
    return next(g for g in program.gpus if g.name == name)


def _oracle(device: str, kind: str, name: str) -> object:
    return SimpleNamespace(device=DeviceInfo(device, kind, name, "cuda 12.8", "570", "2.13.0"))


def test_timings_of_another_device_are_said_and_the_spaces_own_are_not() -> None:
    h100 = _gpu("h100_sxm_calibrated")
    said = foreign_device(_oracle("cpu", "cpu", "AMD EPYC 9654"), h100)  # type: ignore[arg-type]
    assert "timed on AMD EPYC 9654 (cpu), not on the space's h100_sxm_calibrated" in said
    assert "collectives simulated" in said
    assert "NVIDIA H200" in foreign_device(_oracle("cuda:0", "cuda", "NVIDIA H200"), h100)  # type: ignore[arg-type]
    assert foreign_device(_oracle("cuda:0", "cuda", "NVIDIA H100 80GB HBM3"), h100) == ""  # type: ignore[arg-type]
    assert foreign_device(None, h100) == ""  # type: ignore[arg-type]  # the simulate oracle
