"""Validation: the published runs and controlled sweeps of the corpus read and projected, the
calibration that fits the GPU profiles on them, the error bands measured from held-out residuals and
how sure a projection is (``trust``), and a site profile learned from a campaign's logs.

It reads the projection (``primus_lang.project``) and the corpus; no projection reads it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from primus_lang.exports import lazy_exports

# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.validate import trust
    from primus_lang.validate.calibrate import (
        PARAMS,
        Fit,
        calibrate_shuffles,
        hold_out_groups,
        hold_out_models,
        hold_out_sources,
        sibling_transfer,
        to_prx,
        transfer,
        vendor_pools,
    )
    from primus_lang.validate.calibration_notes import Setup
    from primus_lang.validate.calibration_notes import header as calibration_notes_header
    from primus_lang.validate.corpus import manifest, runs_file
    from primus_lang.validate.learn import Measured, site_profile, tokens_per_gpu
    from primus_lang.validate.learn import learn as learn_site
    from primus_lang.validate.precision_pairs import bundled_pairs, pairs_summary
    from primus_lang.validate.precision_pairs import precision_pairs as pair_rows
    from primus_lang.validate.precision_pairs import to_markdown as precision_pairs_to_markdown
    from primus_lang.validate.provenance import host_shares, provenances, source_coverage, spec_errors
    from primus_lang.validate.ranking import rank_sweep
    from primus_lang.validate.ranking import summary as ranking_summary
    from primus_lang.validate.ranking import to_json as ranking_to_json
    from primus_lang.validate.runs import (
        GPU_NAMES,
        Profiles,
        Run,
        gpu_key,
        load_runs,
        malformed,
        stdlib_definitions,
    )
    from primus_lang.validate.summary import error_table
    from primus_lang.validate.summary import to_json as summary_to_json
    from primus_lang.validate.summary import to_markdown as summary_to_markdown
    from primus_lang.validate.sweep_holdout import leave_sweep_out
    from primus_lang.validate.sweeps import load_sweeps
    from primus_lang.validate.trust import describe, tied
    from primus_lang.validate.validate import (
        INTERNAL_ERROR,
        MIN_GROUP,
        row_result,
        to_json_rows,
        validate_rows,
    )
    from primus_lang.validate.validate import summarize as validate_summarize

__getattr__ = lazy_exports(__name__, __file__)

__all__ = ["GPU_NAMES", "INTERNAL_ERROR", "MIN_GROUP", "PARAMS", "Fit", "Measured", "Profiles", "Run", "Setup", "bundled_pairs", "calibrate_shuffles", "calibration_notes_header", "describe", "error_table", "gpu_key", "hold_out_groups", "hold_out_models", "hold_out_sources", "host_shares", "learn_site", "leave_sweep_out", "load_runs", "load_sweeps", "malformed", "manifest", "pair_rows", "pairs_summary", "precision_pairs_to_markdown", "provenances", "rank_sweep", "ranking_summary", "ranking_to_json", "row_result", "runs_file", "sibling_transfer", "site_profile", "source_coverage", "spec_errors", "stdlib_definitions", "summary_to_json", "summary_to_markdown", "tied", "to_json_rows", "to_prx", "tokens_per_gpu", "transfer", "trust", "validate_rows", "validate_summarize", "vendor_pools"]
