"""A space's own recipe stays the launch when nothing beats it by the paired band, but not when the memory
account refuses it and a tied candidate fits: an imported recipe moved to a smaller GPU (`import-recipe
--gpu a100_40gb` of a script written for 80 GB) is no evidence that it starts there (a new user's trial)."""

from __future__ import annotations

from primus_lang.ir import Candidate, Provenance
from primus_lang.search.ties import against_baseline
from primus_lang.search.trial import SPACE_RECIPE, Evaluation, Trial

PROV = Provenance(basis="pooled", paired=0.075)


def _trial(cand: Candidate, tokens: float, peak: int, source: str = "planner") -> Trial:
    evaluation = Evaluation(step_time=1.0, tokens_per_gpu=tokens, tflops_per_gpu=1.0, mfu=0.5,
                            bubble_fraction=0.0, exposed_comm=0.0)
    return Trial(1, source, "evaluated", cand, cand.label(), memory_peak=peak, memory_limit=100,
                 evaluation=evaluation, score=tokens)


RECIPE = Candidate(tp=1, gbs=64)
TIED = Candidate(tp=2, gbs=64)


def test_a_recipe_that_fits_stays_against_a_tied_winner() -> None:
    launched, why = against_baseline(_trial(TIED, 1030.0, 90), _trial(RECIPE, 1000.0, 95, SPACE_RECIPE), PROV,
                                     "tokens_per_gpu", "maximize")
    assert launched.candidate == RECIPE and "the launch files are the recipe's own" in why


def test_a_recipe_the_account_refuses_gives_way_to_a_tied_one_that_fits() -> None:
    launched, why = against_baseline(_trial(TIED, 1030.0, 90), _trial(RECIPE, 1000.0, 120, SPACE_RECIPE), PROV,
                                     "tokens_per_gpu", "maximize")
    assert launched.candidate == TIED
    assert "does not fit by the memory account" in why and "tp=2" in why and "--point baseline" in why
    # not for a winner the paired band tells apart from the recipe (a reviewer's finding): it stays
    launched, why = against_baseline(_trial(TIED, 500.0, 90), _trial(RECIPE, 1000.0, 120, SPACE_RECIPE), PROV,
                                     "tokens_per_gpu", "maximize")
    assert launched.candidate == RECIPE and "overcounts it" in why
    # where neither fits there is nothing safer to hand over: the recipe stays, as before
    launched, why = against_baseline(_trial(TIED, 1030.0, 110), _trial(RECIPE, 1000.0, 120, SPACE_RECIPE), PROV,
                                     "tokens_per_gpu", "maximize")
    assert launched.candidate == RECIPE and "overcounts it" in why


def test_for_another_framework_a_recipe_the_account_refuses_gives_way_to_any_winner_that_fits() -> None:
    # `plan --target megatron+slurm` of a Primus space: no one ran the recipe as Megatron-FSDP
    from primus_lang.ir import Settings

    retargeted = Settings(target="primus+slurm").retarget("megatron+slurm")
    launched, why = against_baseline(_trial(TIED, 500.0, 90), _trial(RECIPE, 1000.0, 120, SPACE_RECIPE), PROV,
                                     "tokens_per_gpu", "maximize", retargeted)
    assert launched.candidate == TIED and "as megatron+slurm launches it" in why
    # a launcher of its own framework is no other launch of it: the recipe stays, as on the space's target
    relaunched = Settings(target="primus+slurm").retarget("primus + k8s")
    assert not relaunched.source_target and relaunched.target == "primus+k8s"
    launched, _ = against_baseline(_trial(TIED, 500.0, 90), _trial(RECIPE, 1000.0, 120, SPACE_RECIPE), PROV,
                                   "tokens_per_gpu", "maximize", relaunched)
    assert launched.candidate == RECIPE
