"""The search loop: ask a strategy for proposals, judge each, charge and evaluate, trace everything.

Each proposal passes, in order: the objective gate (does it change what is trained or leave the
space?), legality (is it a point of the space?), the memory proof (does it fit?), the memo (was it
evaluated already?), and only then the oracle, which is what the evaluation budget counts.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from primus_lang.ir import serialize
from primus_lang.ir.candidate import Candidate
from primus_lang.search import budget as B
from primus_lang.search import interrupt
from primus_lang.search.bound import RefinesAhead
from primus_lang.search.budget import Limits, Meter
from primus_lang.search.evaluator import Evaluator
from primus_lang.search.gate import gate_candidate, gate_changes
from primus_lang.search.landscape import Landscape
from primus_lang.search.strategies.base import Strategy
from primus_lang.search.strategies.planner import BASELINE_MEANING, baseline_index
from primus_lang.search.trace import FORMAT, TraceWriter
from primus_lang.search.trial import (
    EVALUATED,
    ILLEGAL,
    OOM,
    REFUSED,
    REPEAT,
    Proposal,
    SearchResult,
    Trial,
)

BASELINE_SOURCE = "baseline"  # the proposal's source: the result's baseline is the trial whose source ends so
STALL_ROUNDS = 50  # rounds in a row without a new evaluation before the engine gives up on a strategy
BOUND_TOLERANCE = 1e-9


class Search:
    """One run of one strategy over one landscape. Strategies read its public state."""

    def __init__(
        self,
        land: Landscape,
        evaluator: Evaluator,
        strategy: Strategy,
        limits: Limits,
        seed: int = 0,
        trace_path: Path | None = None,
        resume_events: int = 0,
        elapsed_offset: float = 0.0,
        progress: Callable[[Search], None] | None = None,
        upper: np.ndarray | None = None,
        llm_replies: dict[str, dict[str, Any]] | None = None,
        notes: Sequence[str] = (),
        refine: Callable[[int, float], float] | None = None,
    ) -> None:
        self.land = land
        self.evaluator = evaluator
        self.strategy = strategy
        self.limits = limits
        self.seed = seed
        self.meter = Meter(limits, elapsed_offset)
        self.trace = TraceWriter(trace_path, skip=resume_events)
        self.resumed = resume_events > 0
        self.progress = progress
        self.upper = upper  # an upper bound on every point's score, or None
        self.bound_valid = upper is not None
        self._refine = refine if upper is not None else None
        self._refined: dict[int, float] = {}  # the tighter bound of each point it was asked for
        self.llm_replies = dict(llm_replies or {})  # recorded replies a resumed run answers from
        self.trials: list[Trial] = []
        self.seen = np.zeros(len(land), dtype=bool)
        self.scores = np.full(len(land), np.nan)
        self.trial_of: dict[int, Trial] = {}
        self.best: Trial | None = None
        self.best_index: int | None = None
        self.notes: list[str] = []
        self._initial_notes = tuple(notes)
        self.phase = ""

    # --- what strategies use -------------------------------------------------------------------
    def rng(self, name: str) -> np.random.Generator:
        """A generator private to ``name`` so one strategy's draws never shift another's."""
        return np.random.default_rng(np.random.SeedSequence([self.seed, zlib.crc32(name.encode())]))

    @property
    def evaluated_indices(self) -> np.ndarray:
        return np.flatnonzero(self.seen)

    def refined(self, index: int, enough: float = float("inf")) -> float:
        """Point ``index``'s upper bound, refined where the search can until it is at most ``enough``
        (a bound at or below the incumbent's score stays so: scores only rise)."""
        if self.upper is None:
            return float("inf")
        if self._refine is None:
            return float(self.upper[index])
        hit = self._refined.get(index)
        if hit is None or hit > enough:
            hit = self._refined[index] = min(float(self.upper[index]), self._refine(index, enough))
        return hit

    def refine_ahead(self, indices: Sequence[int]) -> None:
        """Tell the refined bound the points it will be asked about next (at the incumbent's score now),
        where it can compute them together: those not yet evaluated, and only while there is an
        incumbent and no bound has failed (refined bounds are not asked for otherwise)."""
        if not (isinstance(self._refine, RefinesAhead) and self.bound_valid and self.best is not None
                and self.best.score is not None):
            return
        open_ = self.land.fits & ~self.seen
        self._refine.ahead([int(i) for i in indices if open_[i]], self.land.tie_reach(self.best.score))

    def note(self, message: str) -> None:
        self.notes.append(message)
        self.trace.write("note", message=message)

    def _baseline_first(self) -> None:
        """The planner's baseline, evaluated before the strategy's first proposal: the recipe a practitioner
        starts from, which ``plan`` prints the winner against; a strategy that never proposed it could end
        below it (random search on a budget of 5: 38% below) and launch that."""
        land = self.land
        base = baseline_index(land)
        if base is not None and not self.meter.stop_reason():
            self.submit(Proposal(BASELINE_SOURCE, candidate=land.points[base],
                                 hypothesis=f"{BASELINE_MEANING}, mbs 1", index=base))

    def submit(self, proposal: Proposal) -> Trial:
        """Judge and, if it passes every check, evaluate one proposal."""
        interrupt.check()
        n = len(self.trials) + 1
        land = self.land
        self.trace.write(
            "proposal",
            n=n,
            source=proposal.source,
            candidate=None if proposal.candidate is None else serialize.to_data(proposal.candidate),
            changes={k: _jsonable(v) for k, v in proposal.changes},
            hypothesis=proposal.hypothesis,
        )
        common: dict[str, Any] = {"number": n, "source": proposal.source, "hypothesis": proposal.hypothesis}
        cand: Candidate | None
        if proposal.candidate is not None:
            cand = proposal.candidate
            verdict = gate_candidate(land, cand)
        else:
            base = proposal.base or (self.best.candidate if self.best and self.best.candidate else land.base)
            verdict = gate_changes(land, proposal.changes, base)
            cand = base.replace(**dict(verdict.changes)) if verdict.allowed else None
        if not verdict.allowed or cand is None:
            return self._record(Trial(verdict=REFUSED, reasons=verdict.reasons, **common), None)
        common["candidate"] = cand
        common["label"] = land.label(cand)
        at = proposal.index
        idx = at if at is not None and proposal.candidate is not None and land.points[at] is cand else land.lookup(cand)
        if idx is None:
            return self._record(Trial(verdict=ILLEGAL, reasons=tuple(land.why_illegal(cand)), **common), None)
        peak, limit = int(land.peaks[idx]), land.limit
        common["memory_peak"], common["memory_limit"] = peak, limit
        if not land.fits[idx]:
            over = f"needs {peak:,} B per GPU, {peak - limit:,} B over the limit of {limit:,} B"
            return self._record(Trial(verdict=OOM, reasons=(over,), **common), idx)
        earlier = self.trial_of.get(idx)
        if earlier is not None:
            return self._record(
                Trial(verdict=REPEAT, evaluation=earlier.evaluation, score=earlier.score,
                      reasons=(f"evaluated as proposal {earlier.number}",), **common),
                idx,
            )
        self.meter.evaluations += 1
        evaluation = self.evaluator(cand)
        score = land.score(evaluation, peak)
        trial = Trial(
            verdict=EVALUATED, evaluation=evaluation, score=score, charged=True,
            evaluation_number=self.meter.evaluations, **common,
        )
        return self._record(trial, idx)

    # --- the loop ------------------------------------------------------------------------------
    def run(self) -> SearchResult:
        with interrupt.watched():
            try:
                return self._run()
            finally:
                # the strategy holds the search and the search its strategy: without this cycle the
                # landscape (a hundred thousand points a cluster in a plan across clusters) is freed
                # when the caller lets go of it, not at the next full collection, clusters later
                self.strategy.finish()

    def _run(self) -> SearchResult:
        land = self.land
        if self.resumed:
            self.trace.write("resume", after_events=self.trace.skip)
        self.trace.write(
            "start",
            format=FORMAT,
            **self.header(),
            legal_points=len(land),
            fitting_points=int(land.fits.sum()),
        )
        for message in self._initial_notes:
            self.note(message)
        reason = ""
        try:
            self.strategy.start(self)
            if not self.strategy.starts_at_baseline:
                self._baseline_first()
            stall = 0
            while True:
                reason = self.meter.stop_reason() or ""
                if reason:
                    break
                if self.seen[land.fitting].all():
                    reason = B.STOP_EXHAUSTED
                    break
                if self.strategy.proven:
                    reason = B.STOP_PROVEN
                    break
                proposals = self.strategy.propose()
                if not proposals:
                    # a strategy may prove the optimum on the call that finds nothing left to propose
                    reason = B.STOP_PROVEN if self.strategy.proven else self.strategy.stop_reason or B.STOP_DONE
                    break
                before = self.meter.evaluations
                batch = []
                for p in proposals:
                    if self.meter.stop_reason():
                        break
                    batch.append(self.submit(p))
                self.strategy.observe(batch)
                stall = 0 if self.meter.evaluations > before else stall + 1
                if stall >= STALL_ROUNDS:
                    reason = B.STOP_STALLED
                    break
        except KeyboardInterrupt:
            self.trace.write("interrupted", proposals=len(self.trials), evaluations=self.meter.evaluations)
            self.trace.close()
            raise
        proven = (self.strategy.proven and self.bound_valid) or bool(self.seen[land.fitting].all())
        if reason == B.STOP_PROVEN and not proven:
            reason = B.STOP_DONE
        self.trace.write(
            "end",
            reason=reason,
            evaluations=self.meter.evaluations,
            proposals=len(self.trials),
            best=None if self.best is None else self.best.label,
            score=None if self.best is None else self.best.score,
            optimum_proven=proven,
        )
        self.trace.close()
        baseline = next(
            (t for t in self.trials if t.verdict == EVALUATED and t.source.endswith("baseline")), None
        )
        return SearchResult(
            space=land.name,
            strategy=self.strategy.name,
            seed=self.seed,
            objective=f"{land.objective.sense} {land.objective.metric}",
            stop_reason=reason,
            trials=tuple(self.trials),
            best=self.best,
            baseline=baseline,
            evaluations=self.meter.evaluations,
            proposals=len(self.trials),
            elapsed=self.meter.elapsed,
            optimum_proven=proven,
            llm_calls=self.meter.llm_calls,
            llm_cost_usd=self.meter.llm_cost_usd,
            legal_points=len(land),
            fitting_points=int(land.fits.sum()),
            notes=tuple(self.notes),
        )

    def header(self) -> dict[str, Any]:
        """What identifies the deterministic stream; a resume must match it."""
        lim = self.limits
        return {
            "space": self.land.name,
            "strategy": self.strategy.name,
            "seed": self.seed,
            "objective": f"{self.land.objective.sense} {self.land.objective.metric}",
            "evaluations": lim.evaluations,
            "patience": lim.patience,
            # a plan across clusters: which cluster this search ran on (absent otherwise, as before)
            **({"cluster": self.land.cluster_point} if self.land.cluster_point else {}),
            # a plan for another framework than the space's own (`--target`): what its points were judged as
            **({"target": self.land.launch_target} if self.land.launch_target else {}),
        }

    def _record(self, trial: Trial, idx: int | None) -> Trial:
        self.trials.append(trial)
        self.trace.write(
            "gate",
            n=trial.number,
            verdict=trial.verdict,
            reasons=list(trial.reasons),
            label=trial.label,
            memory_peak=trial.memory_peak,
            memory_limit=trial.memory_limit,
        )
        if trial.verdict == EVALUATED and idx is not None and trial.candidate is not None:
            self.seen[idx] = True
            self.scores[idx] = trial.score
            self.trial_of[idx] = trial
            self.trace.write(
                "evaluation",
                n=trial.number,
                evaluation_number=trial.evaluation_number,
                candidate=serialize.to_data(trial.candidate),
                evaluation=serialize.to_data(trial.evaluation),
                score=trial.score,
                elapsed=round(self.meter.elapsed, 3),
            )
            self._check_bound(idx, trial)
            assert trial.score is not None
            if self._better(trial):
                previous = self.best
                self.best, self.best_index = trial, idx
                self.meter.since_improvement = 0
                self.trace.write(
                    "incumbent",
                    n=trial.number,
                    label=trial.label,
                    score=trial.score,
                    previous=None if previous is None else previous.label,
                )
            else:
                self.meter.since_improvement += 1
        if self.progress is not None:
            self.progress(self)
        return trial

    def _better(self, trial: Trial) -> bool:
        """A higher score, or the same score with a smaller memory peak (the same order as ``ranked``)."""
        best = self.best
        if best is None or best.score is None or trial.score is None:
            return best is None
        if trial.score != best.score:
            return trial.score > best.score
        return (trial.memory_peak or 0) < (best.memory_peak or 0)

    def _check_bound(self, idx: int, trial: Trial) -> None:
        if self.upper is None or not self.bound_valid or trial.score is None:
            return
        bound = self._refined.get(idx, float(self.upper[idx]))
        if trial.score > bound + BOUND_TOLERANCE * max(1.0, abs(bound)):
            self.bound_valid = False
            self.note(
                f"the throughput bound failed at {trial.label} (score {trial.score:.6g} > bound {bound:.6g}); "
                "pruning is off and optimality is not claimed"
            )


def _jsonable(value: object) -> object:
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return serialize.to_data(value)
