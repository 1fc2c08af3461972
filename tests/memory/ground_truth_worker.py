"""Spawned worker: builds each case in megatron-core and writes what it measured as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import megatron_harness as mh


def measure(case: tuple[str, Any, Any, str]) -> dict[str, int]:
    import torch

    _name, model, cand, what = case
    torch.manual_seed(0)
    cfg, wrapped = mh.build_gpt(model, cand)
    if what == "params":
        return {"params": mh.param_bytes(wrapped)}
    if what == "activations":
        return {"activations": mh.saved_bytes_of_step(wrapped, model, cand).total}
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


def worker(rank: int, world: int, port: int, group: str, tp: int, ep: int, out_dir: str) -> None:
    import ground_truth_cases as cases

    mh.init_distributed(rank, world, port, tp=tp, ep=ep)
    results: dict[str, Any] = {}
    for case in getattr(cases, group):
        try:
            results[case[0]] = measure(case)
        except Exception as exc:  # a failed build is reported per case, not as a hung spawn
            results[case[0]] = {"error": f"{type(exc).__name__}: {exc}"}
    Path(out_dir, f"{group}-{rank}.json").write_text(json.dumps(results))
    mh.shutdown()


def run_group(group: str, world: int, tp: int, ep: int, out_dir: str) -> list[dict[str, Any]]:
    mh.run_spawned(worker, world, group, tp, ep, out_dir)
    return [json.loads(Path(out_dir, f"{group}-{r}.json").read_text()) for r in range(world)]
