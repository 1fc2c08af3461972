"""A projection does not depend on what the process projected before it.

The operator lists are cached (project/build.py: a layer's tasks, a step's tasks) under keys that must
hold everything the cached tasks read. FP8 primary weights (``fp8_param_gather``) gather a byte per
parameter where BF16 ones gather two; the key of the step's tasks (the distributed optimizer's gather)
and of an FSDP layer's left it out, so whichever of two candidates differing only there was projected
first gave both their step time: a search's ranking depended on its order, and so did the test suite
(the calibrate refit in a worker that had projected FP8 gathers before)."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from primus_lang.check import legal_points
from primus_lang.lower import load_space
from primus_lang.project import project
from primus_lang.resources import data_dir


@pytest.mark.parametrize("sharding", ["dist_opt", "fsdp"])
@pytest.mark.parametrize("first", ["bf16_gather", "fp8_gather"])
def test_fp8_primary_weights_gather_less_whichever_is_projected_first(sharding: str, first: str) -> None:
    space = load_space(Path(data_dir("examples")) / "llama3_1_70b_mi325x.prx")
    base = next(c for c in legal_points(space) if c.sharding == "dist_opt" and c.pp > 1)
    # a sequence length of its own per case, so no case reads another's cached tasks
    seq = {("dist_opt", "bf16_gather"): 4096, ("dist_opt", "fp8_gather"): 2048,
           ("fsdp", "bf16_gather"): 1024, ("fsdp", "fp8_gather"): 512}[(sharding, first)]
    plain = attrs.evolve(base, sharding=sharding, precision="fp8", fp8_param_gather=False, seq_len=seq)
    fp8 = attrs.evolve(plain, fp8_param_gather=True)
    order = [plain, fp8] if first == "bf16_gather" else [fp8, plain]
    step = {c.fp8_param_gather: project(space.model, space.cluster, c, space.settings).step_time for c in order}
    assert step[True] < step[False]
