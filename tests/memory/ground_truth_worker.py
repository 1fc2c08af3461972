"""Spawned worker: builds each case in megatron-core and writes what it measured as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import megatron_harness as mh


def measure(case: tuple[str, Any, Any, str]) -> dict[str, int]:
    import ground_truth_cases as cases
    import torch
    from megatron.core.fusions.fused_softmax import FusedScaleMaskSoftmax

    name, model, cand, what = case
    torch.manual_seed(0)
    cfg, wrapped = mh.build_gpt(model, cand, **cases.CONFIG.get(name, {}))
    if what == "params":
        return {"params": mh.param_bytes(wrapped)}
    if what in ("activations", "peak"):
        # which softmax path megatron-core took, for the test to hold against the account's rule
        paths = {"fused": 0, "torch": 0}
        fused, fallback = FusedScaleMaskSoftmax.forward_fused_softmax, FusedScaleMaskSoftmax.forward_torch_softmax

        def count(path: str, fn: Any) -> Any:
            def run(self: Any, *args: Any, **kwargs: Any) -> Any:
                paths[path] += 1
                return fn(self, *args, **kwargs)
            return run

        FusedScaleMaskSoftmax.forward_fused_softmax = count("fused", fused)  # type: ignore[method-assign]
        FusedScaleMaskSoftmax.forward_torch_softmax = count("torch", fallback)  # type: ignore[method-assign]
        try:
            meter = mh.saved_bytes_of_step(wrapped, model, cand, backward=what == "peak")
        finally:
            FusedScaleMaskSoftmax.forward_fused_softmax = fused  # type: ignore[method-assign]
            FusedScaleMaskSoftmax.forward_torch_softmax = fallback  # type: ignore[method-assign]
        return {"activations": meter.total, "peak": meter.peak, **paths}
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig

    ddp_cfg = DistributedDataParallelConfig(
        grad_reduce_in_fp32=True, use_distributed_optimizer=True, overlap_grad_reduce=False
    )
    ddp = DistributedDataParallel(cfg, ddp_cfg, module=wrapped)

    def size(buffers: Any, attr: str) -> int:
        return sum(getattr(b, attr).numel() * getattr(b, attr).element_size() for b in buffers)

    return {
        "grad": size(ddp.buffers, "grad_data"),
        "param": size(ddp.buffers, "param_data"),
        "grad_expert": size(ddp.expert_parallel_buffers, "grad_data"),
        "param_expert": size(ddp.expert_parallel_buffers, "param_data"),
    }


def worker(rank: int, world: int, port: int, group: str, tp: int, ep: int, etp: int | None, out_dir: str) -> None:
    import ground_truth_cases as cases

    mh.init_distributed(rank, world, port, tp=tp, ep=ep, etp=etp)
    results: dict[str, Any] = {}
    for case in getattr(cases, group):
        try:
            results[case[0]] = measure(case)
        except Exception as exc:  # a failed build is reported per case, not as a hung spawn
            results[case[0]] = {"error": f"{type(exc).__name__}: {exc}"}
    Path(out_dir, f"{group}-{rank}.json").write_text(json.dumps(results))
    mh.shutdown()


def run_group(group: str, world: int, tp: int, ep: int, out_dir: str, etp: int | None = None) -> list[dict[str, Any]]:
    mh.run_spawned(worker, world, group, tp, ep, etp, out_dir)
    return [json.loads(Path(out_dir, f"{group}-{r}.json").read_text()) for r in range(world)]
