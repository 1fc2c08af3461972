"""Which recipe a plan's launch files run: its winner, or, where the target cannot express the winner,
the best recipe it can. ``plan`` writes those files and says so; the report, written by ``plan`` or
rebuilt from the trace, says the same from the same rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from attrs import frozen

from primus_lang.emit.emitter import unsupported
from primus_lang.ir import Candidate, Space
from primus_lang.search import SearchResult, Trial, uncharged

if TYPE_CHECKING:
    from primus_lang.search import Evaluation, Landscape

# an uncharged trial's source: the search did not evaluate it, the plan projected it to launch it
PROJECTED_TO_LAUNCH = "launch (the best the target can express; projected for comparison, not charged)"
# the winner with a knob the space leaves at its default set as the target runs it (``nearest_expressible``)
REPAIRED_TO_LAUNCH = "launch (the winner as the target expresses it; projected for comparison, not charged)"


@frozen
class Launch:
    trial: Trial  # the recipe the launch files run
    why: str  # why the winner is not it ("" when it is the winner)

    def line(self, target: str, winner: Trial) -> str:
        """What plan and the report say where the launch files are not the winner's ("" where they are)."""
        if not self.why or self.trial is winner or self.trial.candidate is None:
            return ""
        ours, best = self.trial.evaluation, winner.evaluation
        change = (f" ({ours.tokens_per_gpu:,.0f} against {best.tokens_per_gpu:,.0f} tokens/s/GPU)"
                  if ours is not None and best is not None else "")
        return (f"The target {target} cannot express the best recipe ({self.why}); the launch files are for "
                f"the best one it can: {self.trial.candidate.label()}{change}.")


def launchable(space: Space, result: SearchResult, winner: Trial, target: str, land: Landscape,
               evaluate: Callable[[Candidate], Evaluation]) -> Launch:
    """The best evaluated trial the target can express, with why the winner is not (the winner itself,
    or the winner when none can be: ``emit`` then says why with P7001). Where the search evaluated none
    the target can express (it proved the winner optimal first), the best fitting point it can express
    is projected now, uncharged."""
    assert winner.candidate is not None
    reasons = unsupported(space, winner.candidate, target)
    if not reasons:
        return Launch(winner, "")
    why = "; ".join(reasons)
    # the winner as the target would express it (a knob the space leaves at its default set as the target
    # runs it), beside the best of the space it can express: the better of the two is launched
    near = _repaired(space, winner.candidate, target, land, evaluate)
    for trial in result.ranked(len(result.trials)):
        if trial.candidate is not None and not unsupported(space, trial.candidate, target):
            return Launch(_better(trial, near), why)
    expressible = [int(i) for i in land.fitting if not unsupported(space, land.points[int(i)], target)]
    trials = [uncharged(land, land.points[i], int(land.peaks[i]), evaluate(land.points[i]), PROJECTED_TO_LAUNCH)
              for i in expressible]
    best = max(trials, key=lambda t: t.score or float("-inf"), default=None)
    return Launch(_better(best, near) if best is not None else near or winner, why)


def _repaired(space: Space, cand: Candidate, target: str, land: Landscape,
              evaluate: Callable[[Candidate], Evaluation]) -> Trial | None:
    """``emit.nearest_expressible`` of ``cand``, projected (uncharged), where it fits in memory."""
    from primus_lang.emit.emitter import nearest_expressible
    from primus_lang.memory import account

    near = nearest_expressible(space, cand, target)
    if near is None:
        return None
    peak = account(space.model, space.cluster, near, space.settings).peak.total
    if peak > land.limit:
        return None
    return uncharged(land, near, peak, evaluate(near), REPAIRED_TO_LAUNCH)


def _better(trial: Trial, other: Trial | None) -> Trial:
    if other is None:
        return trial
    return other if (other.score or float("-inf")) > (trial.score or float("-inf")) else trial
