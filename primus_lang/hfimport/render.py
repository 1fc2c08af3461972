"""An imported ``Model`` as ``.prx`` text, laid out like the stdlib cards."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import BAD_CARD_NAME, INCONSISTENT_CONFIG
from primus_lang.hfimport.config import HfConfig
from primus_lang.hfimport.mapping import Imported
from primus_lang.ir.model import Mamba, Mla, Model, Moe
from primus_lang.ir.quantity import Kind, kind_of
from primus_lang.ir.text import literal

# Fields every card states even at their default, so a reader never has to know the IR's defaults.
_ALWAYS = frozenset(
    {
        "num_layers",
        "hidden",
        "ffn_hidden",
        "heads",
        "kv_heads",
        "head_dim",
        "vocab",
        "seq_len",
        "max_position_embeddings",
        "activation",
        "norm",
        "position",
        "tied_embeddings",
    }
)
_SKIP = frozenset({"name", "source", "span"})
# Words the grammar reserves; a card with one of these names could not be referred to.
_KEYWORDS = frozenset(
    {
        "import",
        "model",
        "gpu",
        "cluster",
        "space",
        "on",
        "let",
        "require",
        "fits",
        "memory",
        "budget",
        "strategy",
        "target",
        "assume",
        "maximize",
        "minimize",
        "when",
        "step",
        "and",
        "or",
        "not",
        "in",
        "true",
        "false",
    }
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_name(name: str) -> str:
    if not _IDENT.fullmatch(name) or name in _KEYWORDS:
        raise CompileError(
            Diagnostic(
                BAD_CARD_NAME,
                f"`{name}` cannot name a model card",
                help="use letters, digits and `_`, starting with a letter (e.g. `llama3_1_70b`), and no keyword",
            )
        )
    return name


def card_name(config: HfConfig) -> str:
    """A name from the Hub id (``meta-llama/Llama-3.1-70B`` → ``llama_3_1_70b``) or the folder."""
    origin = config.data.get("_name_or_path")
    base = origin if isinstance(origin, str) and origin.strip() else ""
    if not base:
        path = Path(config.file)
        base = path.parent.name if path.stem == "config" and path.parent.name else path.stem
    base = base.rstrip("/").rsplit("/", 1)[-1]
    name = re.sub(r"[^a-z0-9]+", "_", base.lower()).strip("_") or "imported"
    if name[0].isdigit() or name in _KEYWORDS:
        name = "m_" + name
    return name


def _one_line(text: str) -> str:
    """Config text reaches comments and strings: no line breaks or control characters may escape."""
    return "".join(c if c.isprintable() else " " for c in text)


def _lines(obj: Model | Moe | Mla | Mamba, indent: str, always: frozenset[str]) -> list[str]:
    out: list[str] = []
    blocks: list[tuple[str, Moe | Mla | Mamba]] = []
    for f in attrs.fields(type(obj)):
        if f.name in _SKIP:
            continue
        value = getattr(obj, f.name)
        kind = kind_of(f)
        if kind is Kind.BLOCK:
            if value is not None:
                blocks.append((f.name, value))
            continue
        required = f.default is attrs.NOTHING
        if required or f.name in always or value != f.default:
            out.append(f"{indent}{f.name} = {literal(value, kind)}")
    # The stdlib writes the sequence mixers (mla, mamba) before the MLP (moe); keep that order.
    for name, block in sorted(blocks, key=lambda b: 1 if b[0] == "moe" else 0):
        out.append(f"{indent}{name} {{")
        out.extend(_lines(block, indent + "  ", frozenset()))
        out.append(f"{indent}}}")
    return out


def render_card(imported: Imported, config_file: str) -> str:
    model = imported.model
    head = [
        f"# Model card written by `primusc import-hf` from {_one_line(config_file)}"
        f" (model_type `{_one_line(imported.model_type)}`).",
        "# Check it against the model's paper or code before relying on it.",
    ]
    if imported.notes:
        head.append("# Approximations and settings left out:")
        head.extend(f"#   - {_one_line(note)}" for note in imported.notes)
    body = [f"model {check_name(model.name)} {{"]
    body.extend(_lines(model, "  ", _ALWAYS))
    body.append(f"  source = {literal(_one_line(model.source), Kind.TEXT)}")
    body.append("}")
    text = "\n".join([*head, "", *body]) + "\n"
    _check_loads(text, config_file)
    return text


def _check_loads(text: str, config_file: str) -> None:
    """Refuse to hand out a card that `primusc check` would refuse: the config's values may each
    pass and still contradict each other or the language's ranges (top-k above the expert count)."""
    from primus_lang.lower import loads_program

    try:
        loads_program(text, f"<card from {config_file}>")
    except CompileError as err:
        reasons = [d.message for d in err.diagnostics]
        raise CompileError(
            Diagnostic(
                INCONSISTENT_CONFIG,
                f"the card for `{config_file}` would not load: {reasons[0]}",
                notes=tuple(reasons[1:]),
                help="fix the config's values; no card is written",
            )
        ) from None
