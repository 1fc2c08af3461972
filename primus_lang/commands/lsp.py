"""``primusc lsp``: the language server, over stdio (editors start it; see docs/editors.md)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("lsp", help="run the language server on stdin/stdout (for editors)")
    p.add_argument("--stdio", action="store_true", help="accepted for editors that pass it; stdio is the only transport")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import gc

    from primus_lang.diagnostics import CompileError, Diagnostic
    from primus_lang.diagnostics.codes_search import LSP_UNAVAILABLE

    try:
        import pygls  # noqa: F401
    except ImportError:
        raise CompileError(Diagnostic(LSP_UNAVAILABLE, "`primusc lsp` needs pygls, which is not installed",
                                      help="pip install 'primusc[lsp]'")) from None
    # a server lives for hours and re-lowers on every keystroke: the batch commands' raised
    # collector thresholds (gc_policy.py) would let garbage of old analyses pile up
    gc.set_threshold(700, 10, 10)
    from primus_lang.lsp import serve

    serve()
    return 0
