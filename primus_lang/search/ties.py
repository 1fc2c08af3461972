"""The winner among candidates a projection cannot tell apart.

Two evaluated candidates whose projections lie within the GPU profile's paired band of each other
are tied: on the published runs, the measured order of two such recipes went either way. ``settle``
groups every evaluated candidate tied with the best projected one and, unless the space says
``assume tie_break = speed``, puts first the one that changes the training's numerics least
(``validate.trust.numerics_cost``): a user who can have BF16 and FP32 gradients at the same measured
speed should not be handed delayed FP8 scaling and BF16 Adam moments for a 0.1% projected gain. Among
those alike in numerics, the one that depends on fewer mechanisms beyond plain Megatron comes first
(``trust.machinery``: CUDA graphs, userbuffers, DeepEP), for the same reason.
"""

from __future__ import annotations

from attrs import field, frozen

from primus_lang.ir import Candidate, Provenance, Settings
from primus_lang.search.trial import SearchResult, Trial
from primus_lang.validate import trust


@frozen
class Settled:
    winner: Trial | None
    fastest: Trial | None  # the best projected, which the winner may not be
    tied: tuple[Trial, ...]  # the group tied with the best, the winner first (the winner included)
    ranked: tuple[Trial, ...]  # the tied group in its chosen order, then the rest as projected
    paired: float  # the band the ties were judged by (0: no ties judged)
    # the space's settings: its tie rule, and what its target launches (numerics are judged as launched)
    settings: Settings = field(factory=Settings)

    def fastest_below(self, n: int) -> Trial | None:
        """The projected fastest where the tie rule ranked it below the first ``n`` (None where it is among
        them): a table of the winners shows what the winner was preferred to."""
        return self.fastest if self.fastest is not None and self.fastest not in self.ranked[:max(1, n)] else None

    def top(self, n: int) -> tuple[Trial, ...]:
        """The first ``n`` of ``ranked``, and the projected fastest after them where the tie rule ranked it
        lower (the report's)."""
        below = self.fastest_below(n)
        return (*self.ranked[:max(1, n)], *((below,) if below is not None else ()))

    def cost(self, t: Trial) -> tuple[int, int, int, int]:
        assert t.candidate is not None
        return trust.numerics_cost(self.settings.as_launched(t.candidate))


def _value(t: Trial, metric: str) -> float:
    assert t.evaluation is not None
    return float(getattr(t.evaluation, metric))


def settle(result: SearchResult, prov: Provenance, metric: str, settings: Settings | None = None) -> Settled:
    """The chosen winner, the tied group and the ranking with that group first (``settings``: the
    space's tie rule and target). A memory objective is exact (a byte count, not a projection), so it
    has no ties."""
    settings = settings or Settings()
    ranked = [t for t in result.ranked(len(result.trials)) if t.evaluation is not None and t.candidate is not None]
    if not ranked or metric == "memory_peak":
        return Settled(ranked[0] if ranked else None, ranked[0] if ranked else None, tuple(ranked[:1]),
                       tuple(ranked), 0.0, settings)

    def cand(t: Trial) -> Candidate:
        assert t.candidate is not None  # ranked holds evaluated candidates only
        return settings.as_launched(t.candidate)

    group, rest = trust.tie_group(ranked, prov, lambda t: _value(t, metric), cand, prefer=settings.tie_break)
    return Settled(group[0], ranked[0], tuple(group), tuple(group + rest), prov.paired, settings)


def against_baseline(winner: Trial, baseline: Trial | None, prov: Provenance, metric: str,
                     sense: str, settings: Settings | None = None) -> tuple[Trial, str]:
    """The recipe to launch when the space has one of its own (an imported recipe, ``baseline { }``): the
    search's winner only when it beats the recipe by more than the profile's paired band, else the recipe
    itself, never less than what the user runs, unless the memory account refuses the recipe and the winner,
    tied with it, fits. The second value says why the recipe stays or gives way ("" if it is beaten
    outright)."""
    if baseline is None or baseline.evaluation is None or baseline.candidate is None or winner.evaluation is None \
            or winner.candidate is None or winner.candidate == baseline.candidate:
        return winner, ""
    ours, theirs = _value(winner, metric), _value(baseline, metric)
    ahead = ours > theirs if sense == "maximize" else ours < theirs
    if ahead and not trust.tied(prov, ours, theirs):
        return winner, ""
    change = ours / theirs - 1 if theirs else 0.0
    fits, winner_fits = (t.spare is None or t.spare >= 0 for t in (baseline, winner))
    if not fits and settings is not None and settings.source_target and winner_fits:
        # launched for another framework than the space's own, the recipe is no evidence that it fits
        return winner, (f"The space's baseline (the recipe) does not fit by the memory account as {settings.target} "
                        f"launches it (the space's own target is {settings.source_target}); the launch files are "
                        f"those of {winner.candidate.label()}, which fits and projects {change:+.1%} {metric} "
                        "against it.")
    if not fits and winner_fits and trust.tied(prov, ours, theirs):
        # a recipe the account refuses is only evidence where it ran: on another GPU or node count
        # (`import-recipe --gpu`) it may not start at all, so a tied recipe that fits is launched
        return winner, (f"The space's baseline (the recipe) does not fit by the memory account; the launch files are "
                        f"those of {winner.candidate.label()}, which fits and projects {change:+.1%} {metric} against "
                        "it. If the recipe runs as it is on this cluster, the account overcounts it (`primusc check "
                        "SPACE --explain --point baseline` lists its terms) and `primusc emit SPACE --point baseline` "
                        "writes its own.")
    if ahead:
        said = (f"Nothing the search found beats the space's baseline (the recipe) by more than the profile's paired "
                f"band ({prov.paired:.1%}): the best found, {winner.candidate.label()}, projects {change:+.1%} "
                f"{metric}; the launch files are the recipe's own.")
    else:
        said = (f"The space's baseline (the recipe) projects at least as well as anything the search found (its "
                f"pick, {winner.candidate.label()}, projects {change:+.1%} {metric} against it); the launch files "
                "are the recipe's own.")
    if not fits:
        said += (" The memory account says the recipe does not fit; if it runs as it is, the account overcounts it "
                 "(`primusc check SPACE --explain --point baseline` lists its terms).")
    return baseline, said


@frozen
class Choice:
    """What plan launches, and what every view of a plan (its terminal output, --json, the report
    plan writes and one rebuilt from its trace) names as the winner."""

    settled: Settled
    winner: Trial | None  # the settled winner, or the space's recipe when nothing beat it by the band
    kept: str  # why the recipe stays, or why one the account refuses gives way to a tied one ("" otherwise)
    recipe: Trial | None  # the space's own recipe, when the baseline is one


def choose(result: SearchResult, prov: Provenance, metric: str, sense: str, settings: Settings | None = None,
           baseline: Trial | None = None) -> Choice:
    """``settle`` the tie with the best projection, then hold the winner ``against_baseline`` when the
    baseline is the space's own recipe."""
    settled = settle(result, prov, metric, settings)
    recipe = baseline if baseline is not None and baseline.is_space_recipe else None
    winner, kept = settled.winner, ""
    if winner is not None:
        winner, kept = against_baseline(winner, recipe, prov, metric, sense, settings)
    return Choice(settled, winner, kept, recipe)


def _what_it_changes(s: Settled) -> str:
    """", and it keeps its gradients in BF16 (as primus launches it)": what the fastest changes that the
    winner does not, as both are launched (a knob left at its default may be launched otherwise)."""
    assert s.winner is not None and s.winner.candidate is not None
    assert s.fastest is not None and s.fastest.candidate is not None
    winner, fastest = (s.settings.as_launched(t.candidate) for t in (s.winner, s.fastest) if t.candidate is not None)
    said = trust.numerics_changes(winner, fastest)
    said += [m for m in trust.machinery(fastest) if m not in trust.machinery(winner)]
    if not said:
        return ""
    own = trust.numerics_changes(s.winner.candidate, s.fastest.candidate)
    own += [m for m in trust.machinery(s.fastest.candidate) if m not in trust.machinery(s.winner.candidate)]
    launched = f" (as {s.settings.target} launches it)" if own != said and s.settings.target else ""
    return f", and it {' and '.join(said)}{launched}"


def why_winner(s: Settled, metric: str) -> list[str]:
    """Sentences on the tie: how many, by which band, and why the winner is first."""
    if s.winner is None or len(s.tied) < 2:
        return []
    assert s.winner.candidate is not None
    lines = [f"{len(s.tied) - 1} other candidate(s) are tied with the best: the best's projected {metric} is "
             f"ahead of each of theirs by at most {s.paired:.1%}, the typical (median) error of the ratio of two "
             "projections on this GPU profile, so the projected order among them is not evidence (measure them "
             "to choose: `plan --shortlist`)."]
    if s.fastest is not None and s.fastest is not s.winner and s.fastest.candidate is not None:
        gain = _value(s.fastest, metric) / _value(s.winner, metric) - 1
        lines.append(
            f"Of the tied group, the winner changes numerics least (BF16 before FP8, finer FP8 scaling before "
            f"coarser, FP32 gradients, Adam moments and logits before BF16; then fewer layers offloaded), then "
            f"depends on fewest mechanisms beyond plain Megatron (CUDA graphs, TP communication overlap, expert "
            f"all-to-all overlap, DeepEP), each a way a launch can fail; the projected "
            f"fastest, "
            f"{s.fastest.candidate.label()}, differs by {gain:+.1%}{_what_it_changes(s)} "
            f"(`assume tie_break = speed` ranks by the projection alone).")
    elif s.winner is s.fastest and s.cost(s.winner) > min(s.cost(t) for t in s.tied if t.candidate is not None):
        lines.append("The space asks for speed (`assume tie_break = speed`): the projected fastest wins "
                     "although a tied candidate changes numerics less.")
    return lines
