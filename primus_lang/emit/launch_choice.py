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
    for trial in result.ranked(len(result.trials)):
        if trial.candidate is not None and not unsupported(space, trial.candidate, target):
            return Launch(trial, why)
    expressible = [int(i) for i in land.fitting if not unsupported(space, land.points[int(i)], target)]
    trials = [uncharged(land, land.points[i], int(land.peaks[i]), evaluate(land.points[i]), PROJECTED_TO_LAUNCH)
              for i in expressible]
    return Launch(max(trials, key=lambda t: t.score or float("-inf"), default=winner), why)
