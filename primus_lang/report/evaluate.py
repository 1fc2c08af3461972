"""One candidate through the memory proof and the projection, kept together for the views."""

from __future__ import annotations

from typing import Any

from attrs import frozen

from primus_lang.ir import Candidate, Provenance, Space
from primus_lang.report.candidate_view import candidate_view
from primus_lang.report.view import CandidateView


@frozen
class Evaluated:
    candidate: Candidate
    account: Any  # memory.MemoryAccount
    projection: Any  # project.Projection, or None when the candidate does not fit
    view: CandidateView
    limit: int  # bytes a rank may use under the space's headroom


def evaluate(space: Space, cand: Candidate, project_overflow: bool = True, timeline: bool = False) -> Evaluated:
    """The byte account and the projection of ``cand`` (with its timeline when asked); a candidate that
    does not fit is still projected unless ``project_overflow`` is false, since explaining it is the
    point of asking."""
    from primus_lang.memory import account as memory_account
    from primus_lang.project import project

    acc = memory_account(space.model, space.cluster, cand, space.settings)
    fits = bool(acc.fits(space.headroom))
    proj = (project(space.model, space.cluster, cand, space.settings, timeline=timeline)
            if fits or project_overflow else None)
    from primus_lang.validate import trust

    return _evaluated(cand, acc, proj, space.headroom, space.cluster.gpu.provenance, space.cluster.world,
                      space.model, trust.target_stack(space.settings.target), space.cluster.gpu.arch)


def _evaluated(cand: Candidate, acc: Any, proj: Any, headroom: float, provenance: Provenance, world: int,
               model: Any, stack: str, arch: str) -> Evaluated:
    from primus_lang.memory import usable_bytes

    view = candidate_view(cand, proj, memory_peak=int(acc.peak.total), fits=bool(acc.fits(headroom)), account=acc,
                          projection=proj, provenance=provenance, world=world, model=model, stack=stack, arch=arch)
    return Evaluated(cand, acc, proj, view, usable_bytes(acc.capacity, headroom))


def evaluate_run(run: Any, settings: Any, oracle: Any = None) -> tuple[Evaluated, Candidate]:
    """A resolved corpus row (``project.runs.Run``) through what ``validate`` does to it: time for the
    candidate the row was read as, memory at the least-memory setting of the knobs it does not
    publish (the row's verdict; that candidate is returned beside). Figures are the validate
    table's, so a row can be explained in place."""
    from primus_lang.memory import least_memory
    from primus_lang.project import project

    acc, judged = least_memory(run.model, run.cluster, run.cand, settings, run.unpublished)
    proj = project(run.model, run.cluster, run.cand, settings, oracle=oracle)
    from primus_lang.validate import trust

    return _evaluated(run.cand, acc, proj, 0.0, run.cluster.gpu.provenance, run.cluster.world, run.model,
                      trust.stack_of(run.framework), run.cluster.gpu.arch), judged
