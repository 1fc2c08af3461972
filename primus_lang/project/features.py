"""Model features the projection or the memory account does not cost (W6010), so a plan says so
instead of projecting such a model as if the feature were absent."""

from __future__ import annotations

from primus_lang.diagnostics import Diagnostic
from primus_lang.diagnostics.codes_projection import IGNORED_FEATURE
from primus_lang.ir import Model


def ignored_features(model: Model) -> list[str]:
    """What ``model`` has that the projection or memory account leaves out, one line each."""
    out: list[str] = []
    if model.attention_softcap:
        out.append(f"`attention_softcap` = {model.attention_softcap:g}: the tanh on every attention score "
                   "inside the fused attention kernel is not costed")
    if model.logit_softcap:
        # the projection costs the capping kernel's traffic (project/build.py _head), not its memory
        out.append(f"`logit_softcap` = {model.logit_softcap:g}: the capped logits' copy saved for the "
                   "backward (tokens x vocabulary/TP) is not in the memory account")
    return out


def feature_warnings(model: Model) -> list[Diagnostic]:
    """W6010 for the model's uncosted features, once for the model."""
    lines = ignored_features(model)
    if not lines:
        return []
    return [Diagnostic(IGNORED_FEATURE, f"model `{model.name}`: the projection leaves out {len(lines)} feature(s)",
                       notes=tuple(lines),
                       help="read the projection as slightly optimistic for this model (`primusc explain W6010`)")]
