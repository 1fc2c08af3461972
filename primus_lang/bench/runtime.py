"""Lazy access to torch and a description of the device a measurement runs on."""

from __future__ import annotations

import importlib
import importlib.util
import os
import platform
from typing import Any

from attrs import frozen

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_bench import BAD_DEVICE, TORCH_MISSING


def torch() -> Any:
    """Import torch on first use; a missing install is a user error, not a traceback."""
    try:
        return importlib.import_module("torch")
    except ImportError as exc:
        raise CompileError(
            Diagnostic(
                TORCH_MISSING,
                "the benchmark oracle needs `torch`, which is not installed",
                help="`pip install 'primusc[bench]'`, or use `--oracle simulate`",
                notes=(str(exc),),
            )
        ) from exc


def torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


@frozen
class DeviceInfo:
    """Who measured a number: every profile-database row is keyed by all of these."""

    device: str  # the torch device string: "cpu", "cuda:0"
    kind: str  # cpu | cuda | rocm
    name: str  # "NVIDIA H200", "AMD Instinct MI325X", the CPU model
    runtime: str  # "cuda 12.8", "hip 6.4", "cpu"
    driver: str  # the GPU driver, or the CPU's thread count
    torch_version: str

    @property
    def key(self) -> str:
        return f"{self.name}|{self.runtime}|{self.driver}|torch {self.torch_version}"


MAX_THREADS = 4096


def cpu_threads() -> int:
    """One CPU "device" is one core: a rank of a local gloo job gets one core too, so kernel timings
    taken here compose into multi-process steps. ``PRIMUSC_BENCH_THREADS`` overrides it."""
    given = os.environ.get("PRIMUSC_BENCH_THREADS", "1").strip()
    if not (given.isascii() and given.isdigit()) or int(given) > MAX_THREADS:
        # int() took `²` as a digit and failed on it, and torch on a count past a C long: both P9001
        from primus_lang.diagnostics import CompileError, Diagnostic
        from primus_lang.diagnostics.codes_names import BAD_ARGUMENT

        raise CompileError(Diagnostic(BAD_ARGUMENT, f"the environment's PRIMUSC_BENCH_THREADS={given!r} is not a "
                                      f"count of threads up to {MAX_THREADS}",
                                      help="unset it (one thread a device), or set it to e.g. 4"))
    return max(1, int(given))


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(device: str) -> DeviceInfo:
    """Check that ``device`` is usable and say what it is."""
    t = torch()
    if device == "cpu":
        t.set_num_threads(cpu_threads())
        return DeviceInfo("cpu", "cpu", _cpu_name(), "cpu", f"{cpu_threads()} threads", t.__version__)
    if not device.startswith("cuda"):
        raise CompileError(
            Diagnostic(BAD_DEVICE, f"unknown device `{device}`", help="use `cpu`, `cuda` or `cuda:N`")
        )
    if not t.cuda.is_available():
        raise CompileError(
            Diagnostic(BAD_DEVICE, f"`{device}` asked for, but torch sees no GPU", help="use `--device cpu`")
        )
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    if index >= t.cuda.device_count():
        raise CompileError(
            Diagnostic(BAD_DEVICE, f"`{device}` does not exist: torch sees {t.cuda.device_count()} GPU(s)")
        )
    props = t.cuda.get_device_properties(index)
    hip = getattr(t.version, "hip", None)
    kind, runtime = ("rocm", f"hip {hip}") if hip else ("cuda", f"cuda {t.version.cuda}")
    driver = _gpu_driver(t)
    return DeviceInfo(f"cuda:{index}", kind, str(props.name), runtime, driver, t.__version__)


def _gpu_driver(t: Any) -> str:
    try:
        import subprocess

        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if out.returncode == 0 and out.stdout.strip():
            return "driver " + out.stdout.splitlines()[0].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "driver unknown"


DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8": "float8_e4m3fn"}


def torch_dtype(name: str) -> Any:
    return getattr(torch(), DTYPES[name])
