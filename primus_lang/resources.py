"""Where the language's data folders (grammar/, stdlib/, emitters/, examples/, validation/, frameworks/) live.

In a checkout they sit at the repository root; in an installed wheel they are packed under
``primus_lang/_data`` (see pyproject.toml). Callers ask by folder name and never care which.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the folder ``name`` (``grammar``, ``stdlib``, ``emitters``, ``examples``, ``validation`` or ``frameworks``)."""
    packed = _PACKAGE / "_data" / name
    if packed.is_dir():
        return packed
    checkout = _PACKAGE.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"primusc data folder {name!r} is missing from this installation")
