"""The diagnostic model. Codes are registered objects (mypy's errorcodes are the model).

Families by the first digit: P1 syntax, P2 names and imports, P3 types, units and domains,
P4 constraints and legality, P5 memory, P6 projection, P7 emit, P8 search and I/O, P9 internal;
warnings use W and the same digits. Each family keeps its codes and message text in
``primus_lang/diagnostics/codes_<family>.py``.
"""

from __future__ import annotations

import enum
import os

from attrs import Factory, field, frozen

from primus_lang.ir.span import Span


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@frozen
class Code:
    id: str  # "P1001"
    name: str  # kebab-case: "unexpected-token"
    summary: str  # one line for `primusc explain`
    explanation: str = ""  # a paragraph with an example and the fix

    @property
    def severity(self) -> Severity:
        return Severity.WARNING if self.id.startswith("W") else Severity.ERROR


_REGISTRY: dict[str, Code] = {}


def register(id: str, name: str, summary: str, explanation: str = "") -> Code:
    if id in _REGISTRY:
        raise ValueError(f"diagnostic code {id} registered twice")
    code = Code(id, name, summary, explanation)
    _REGISTRY[id] = code
    return code


def _load_families() -> None:
    # Importing the family modules registers their codes; done lazily to avoid import cycles.
    import importlib
    import pkgutil

    import primus_lang.diagnostics as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("codes_"):
            importlib.import_module(f"primus_lang.diagnostics.{info.name}")


def lookup(id_or_name: str) -> Code | None:
    _load_families()
    key = id_or_name.strip()
    if key.upper() in _REGISTRY:
        return _REGISTRY[key.upper()]
    return next((c for c in _REGISTRY.values() if c.name == key), None)


def all_codes() -> list[Code]:
    _load_families()
    return sorted(_REGISTRY.values(), key=lambda c: c.id)


@frozen
class Label:
    """A secondary position with its own note (the constraint's site beside the value's)."""

    span: Span
    message: str


@frozen
class Diagnostic:
    code: Code
    message: str  # lowercase, no final period, names in backticks
    span: Span | None = None
    help: str = ""
    notes: tuple[str, ...] = ()
    labels: tuple[Label, ...] = ()
    severity: Severity = field(default=Factory(lambda self: self.code.severity, takes_self=True))

    def __attrs_post_init__(self) -> None:
        record_code(self.code.id)


# For the test suite only: while ``PRIMUSC_RECORD_CODES`` names a folder, every process (a test's
# ``primusc`` subprocess too) appends each code it produces (makes a ``Diagnostic`` with, or a
# legality ``Violation``), once per folder, to ``codes-<pid>.txt`` there; tests/codes_seen.py checks
# that the suite produced every registered code. Unset (always, outside the tests), it costs one
# lookup per diagnostic.
RECORD_CODES = "PRIMUSC_RECORD_CODES"
_recorded: set[tuple[str, str]] = set()


def record_code(code_id: str) -> None:
    """Note that ``code_id`` was produced (a no-op unless ``PRIMUSC_RECORD_CODES`` is set)."""
    folder = os.environ.get(RECORD_CODES)
    if not folder or (folder, code_id) in _recorded:
        return
    _recorded.add((folder, code_id))
    try:
        with open(os.path.join(folder, f"codes-{os.getpid()}.txt"), "a", encoding="utf-8") as out:
            out.write(code_id + "\n")
    except OSError:  # a folder gone: the suite's check then names the code as never produced
        pass


class CompileError(Exception):
    """Raised by any stage with one or more diagnostics; the CLI renders them and exits 1."""

    def __init__(self, diagnostics: Diagnostic | list[Diagnostic]) -> None:
        self.diagnostics = [diagnostics] if isinstance(diagnostics, Diagnostic) else list(diagnostics)
        super().__init__("; ".join(d.message for d in self.diagnostics))

    def __reduce__(self) -> tuple[type[CompileError], tuple[list[Diagnostic]]]:
        # a worker process (plan --jobs) hands its error back pickled: rebuild it from its diagnostics
        return (CompileError, (self.diagnostics,))
