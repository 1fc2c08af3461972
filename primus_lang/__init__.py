"""primusc: a compiler for distributed LLM-training recipes."""

__version__ = "0.1.0"
