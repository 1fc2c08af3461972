"""The language server (`primusc lsp`): the compiler's stages seen from an editor.

Only ``server.py`` imports pygls; the other modules are plain functions over text, AST and IR, so
they are tested without a client and stay usable if the LSP library changes.
"""

from typing import TYPE_CHECKING

from primus_lang.exports import lazy_exports

# Read by the front ends and later stages, and imported on first use: a command loads only the
# modules it needs (a projection never reads the corpus, nothing imports torch before a measurement).
if TYPE_CHECKING:
    from primus_lang.lsp.server import serve

__getattr__ = lazy_exports(__name__, __file__)

__all__ = ["serve"]
