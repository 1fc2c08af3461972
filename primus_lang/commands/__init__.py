"""One module per ``primusc`` sub-command, each with ``register(subparsers)``."""
