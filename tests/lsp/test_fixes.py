"""Quick fixes: the suggested name over the word the message names, and nothing where that is unsure."""

from __future__ import annotations

from primus_lang.diagnostics import Diagnostic, lookup
from primus_lang.ir.span import Span
from primus_lang.lsp.fixes import Fix, quick_fix

CODE = lookup("P2009")
assert CODE is not None


def _diag(message: str, help: str, span: Span | None) -> Diagnostic:
    assert CODE is not None
    return Diagnostic(CODE, message, span, help=help)


def test_the_fix_is_placed_on_the_named_word_inside_a_wider_span() -> None:
    lines = ["space s on c {", "  maximize tokens_per_gpuu", "}"]
    d = _diag("`tokens_per_gpuu` is not a metric", "did you mean `tokens_per_gpu`? choose one of ...",
              Span("f", 2, 3, 2, 27))
    assert quick_fix(d, lines) == Fix(Span("f", 2, 12, 2, 27), "tokens_per_gpu")


def test_a_word_standing_only_inside_a_longer_name_is_not_replaced() -> None:
    lines = ["  require tp <= gpus_per_nodes"]
    d = _diag("unknown name `tp`", "did you mean `pp`?", Span("f", 1, 20, 1, 31))
    assert quick_fix(d, lines) is None


def test_no_fix_without_a_single_suggestion_or_a_span() -> None:
    lines = ["  tpp : 1 | 2"]
    span = Span("f", 1, 3, 1, 6)
    assert quick_fix(_diag("`tpp` is not a knob", "knobs: tp, pp", span), lines) is None
    assert quick_fix(_diag("`tpp` is not a knob", "did you mean `tp`?", None), lines) is None
    assert quick_fix(_diag("`tpp` is not a knob", "did you mean `tp`?", span), lines) == Fix(span, "tp")
