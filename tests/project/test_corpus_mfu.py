"""The MFU that W6003 names as the corpus's best is the corpus's: recomputed from its measured runs."""

from __future__ import annotations

from primus_lang.project import project
from primus_lang.validate import corpus, trust
from primus_lang.validate.runs import load_runs


def test_the_corpus_mfu_w6003_quotes_is_the_best_measured() -> None:
    best = 0.0
    for run in load_runs(corpus.runs_file(), calibrated=True):
        if run.skip or run.measured is None:
            continue
        assert run.model is not None and run.cluster is not None and run.cand is not None
        proj = project(run.model, run.cluster, run.cand, run.settings())
        # the measured run's MFU: the projection's at the measured tokens/s (same model FLOPs a token)
        best = max(best, proj.mfu * run.measured / proj.tokens_per_gpu)
    assert round(best, 3) == trust.CORPUS_MFU_MAX
    assert best + 0.1 < trust.MFU_CEILING
