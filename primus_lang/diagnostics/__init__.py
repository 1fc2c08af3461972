"""Diagnostics: registered codes, one Diagnostic type, three renderings (human, short, json)."""

from primus_lang.diagnostics.core import (
    Code,
    CompileError,
    Diagnostic,
    Label,
    Severity,
    all_codes,
    lookup,
    record_code,
    register,
)
from primus_lang.diagnostics.render import render

__all__ = [
    "Code",
    "CompileError",
    "Diagnostic",
    "Label",
    "Severity",
    "all_codes",
    "lookup",
    "record_code",
    "register",
    "render",
]
