"""The reference: a real training step of a small GPT, timed end to end on local ranks.

Megatron's mixed-precision step at miniature: BF16 weights, micro-batches with gradient
accumulation, the gradients gathered into one FP32 buffer, all-reduced over data-parallel ranks,
Adam on FP32 master weights, master copied back to BF16. This is what the oracle's projection of
the same configuration is checked against.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from attrs import frozen

from primus_lang.bench.gpt import build_gpt
from primus_lang.bench.procs import run_ranks
from primus_lang.bench.runtime import cpu_threads, torch
from primus_lang.bench.timing import cpu_clock
from primus_lang.ir import Model


@frozen
class RefConfig:
    layers: int
    mbs: int
    seq: int
    microbatches: int
    recompute: str = "none"  # none | selective | full
    full_layers: int = 0  # layers recomputed (full only)
    world: int = 1  # data-parallel ranks

    def label(self) -> str:
        rc = f"full({self.full_layers})" if self.recompute == "full" else self.recompute
        return f"L={self.layers} mbs={self.mbs} seq={self.seq} M={self.microbatches} rc={rc} dp={self.world}"


class Trainer:
    """One rank's model, master weights and optimizer; ``step()`` runs one full training step."""

    def __init__(self, model: Model, cfg: RefConfig, device: str = "cpu") -> None:
        t = torch()
        self.t, self.cfg, self.device = t, cfg, device
        self.net = build_gpt(
            model, cfg.layers, t.bfloat16, device, recompute=cfg.recompute, full_layers=cfg.full_layers
        )
        self.params = [p for p in self.net.parameters() if p.requires_grad]
        self.master = t.cat([p.detach().reshape(-1).float() for p in self.params]).requires_grad_(True)
        self.opt = t.optim.Adam([self.master], lr=1e-4, foreach=True)
        gen = t.Generator(device="cpu").manual_seed(1)
        shape = (cfg.mbs, cfg.seq)
        self.ids = t.randint(0, model.vocab, shape, generator=gen).to(device)
        self.labels = t.randint(0, model.vocab, shape, generator=gen).to(device)

    def step(self, world: int) -> None:
        t = self.t
        for _ in range(self.cfg.microbatches):
            loss = self.net(self.ids, self.labels) / self.cfg.microbatches
            loss.backward()
        flat = t.cat([p.grad.reshape(-1).float() for p in self.params])
        if world > 1:
            t.distributed.all_reduce(flat)
            flat.div_(world)
        self.master.grad = flat
        self.opt.step()
        offset = 0
        with t.no_grad():
            for p in self.params:
                n = p.numel()
                p.copy_(self.master[offset : offset + n].view_as(p))
                p.grad = None
                offset += n
        if self.device.startswith("cuda"):
            t.cuda.synchronize(self.device)


def _time_steps(trainer: Trainer, world: int, warmup: int, steps: int) -> float:
    t = trainer.t
    samples = []
    clock = cpu_clock() if trainer.device == "cpu" else time.perf_counter
    for i in range(warmup + steps):
        if world > 1:
            t.distributed.barrier()
        begin = clock()
        trainer.step(world)
        if i >= warmup:
            samples.append(clock() - begin)
    if world > 1:
        # a step ends when the slowest rank ends: take the max over ranks, sample by sample
        worst = t.tensor(samples, dtype=t.float64)
        t.distributed.all_reduce(worst, op=t.distributed.ReduceOp.MAX)
        samples = worst.tolist()
    # the fastest step: other processes on a shared CPU only ever add time (see timing.Timing.best)
    return float(min(samples) if trainer.device == "cpu" else statistics.median(samples))


def _rank_worker(rank: int, world: int, payload: Any) -> list[float]:
    model, configs, warmup, steps = payload
    return [_time_steps(Trainer(model, cfg), world, warmup, steps) for cfg in configs]


def measure_reference(
    model: Model, configs: list[RefConfig], *, warmup: int = 1, steps: int = 3, device: str = "cpu"
) -> list[float]:
    """Median step time of each configuration, in seconds (configs of each world size share a launch)."""
    t = torch()
    times: dict[int, float] = {}
    for world in sorted({c.world for c in configs}):
        idx = [i for i, c in enumerate(configs) if c.world == world]
        chosen = [configs[i] for i in idx]
        if world == 1:
            if device == "cpu":
                t.set_num_threads(cpu_threads())
            got = [_time_steps(Trainer(model, c, device), 1, warmup, steps) for c in chosen]
        else:
            got = run_ranks(_rank_worker, world, (model, chosen, warmup, steps))
        times.update(zip(idx, got, strict=True))
    return [times[i] for i in range(len(configs))]
