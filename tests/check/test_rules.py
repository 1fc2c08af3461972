"""Each rule reads only the knobs it declares (the counting fast path relies on it), and every
message names the rule and its values."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from primus_lang.check.enumerate import ScalarView
from primus_lang.check.frame import frame_of
from primus_lang.check.rules import RULES
from primus_lang.ir import Candidate, Recompute
from primus_lang.ir.candidate import KNOBS
from primus_lang.ir.quantity import Kind, choices_of, kind_of

from .test_enumeration import space_of

SPACE = space_of("gbs = 64")


def _knob(name: str) -> st.SearchStrategy[object]:
    f = KNOBS[name]
    kind = kind_of(f)
    if kind is Kind.FLAG:
        return st.booleans()
    if kind is Kind.ENUM:
        return st.sampled_from(choices_of(f))
    if kind is Kind.BLOCK:
        return st.builds(
            Recompute,
            st.sampled_from(["none", "selective", "full"]),
            st.integers(0, 12),
            st.sampled_from(["uniform", "block"]),
        )
    if name in ("gbs", "seq_len"):
        return st.sampled_from([8, 64, 96, 4096, 6144])
    return st.sampled_from([0, 1, 2, 3, 4, 8] if name == "etp" else [1, 2, 3, 4, 8])


CANDIDATES = st.builds(Candidate, **{name: _knob(name) for name in KNOBS})


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(CANDIDATES, CANDIDATES)
def test_rules_read_only_what_they_declare(a: Candidate, b: Candidate) -> None:
    for rule in RULES:
        mixed = attrs.evolve(b, **{k: getattr(a, k) for k in rule.reads})
        fa, fm = frame_of(SPACE, [a]), frame_of(SPACE, [mixed])
        assert bool(rule.ok(fa, SPACE)) == bool(rule.ok(fm, SPACE)), rule.code.id
        if not bool(rule.ok(fa, SPACE)):
            message, help = rule.explain(ScalarView(fa), SPACE)
            assert f"({rule.code.name})" in message and help


def test_a_flag_in_a_message_is_the_value_the_point_has() -> None:
    # the one-point view holds flags as "true"/"false", and `bool("false")` is true: a message said
    # `sequence_parallel true` of a point that had it off
    from primus_lang.check import legality

    cand = Candidate(tp=2, sequence_parallel=False, tp_comm_overlap=True)
    said = " ".join(v.message for v in legality(SPACE, cand))
    assert "sequence_parallel false" in said and "sequence_parallel true" not in said
    off = Candidate(sharding="dist_opt", overlap_param_gather=True, overlap_grad_reduce=False)
    assert "overlap_grad_reduce false" in " ".join(v.message for v in legality(SPACE, off))


def test_a_sequence_beyond_a_chunked_attention_is_refused(tmp_path: object) -> None:
    """Llama 4 Scout attends inside 8192-token chunks: a new user's trial raised a space's seq_len on its
    imported card to 32k and it was projected as full causal attention over 32k tokens, silently."""
    from pathlib import Path

    from primus_lang.check import legal_points, never_legal
    from primus_lang.check.enumerate import never_legal_why
    from primus_lang.lower import load_space

    path = Path(str(tmp_path)) / "s.prx"
    path.write_text("import models.llama4 (llama4_scout)\nimport clusters.nvidia (h100_x8)\n"
                    "space s on h100_x8 {\n  model = llama4_scout\n  seq_len : 8192 | 32768\n  gbs = 64\n"
                    "  tp : 4 | 8\n  ep : 8\n}\n")
    space = load_space(path)
    assert {c.seq_len for c in legal_points(space)} == {8192}
    assert ("seq_len", 32768, "P4049", "", False) in never_legal(space)
    line = never_legal_why(space, "seq_len", 32768, "P4049")
    assert "seq_len 32768" in line and "chunked over 8192 tokens" in line
