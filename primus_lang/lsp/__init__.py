"""The language server (`primusc lsp`): the compiler's stages seen from an editor.

Only ``server.py`` imports pygls; the other modules are plain functions over text, AST and IR, so
they are tested without a client and stay usable if the LSP library changes.
"""
