"""What the server says about a name: field and knob documentation from the IR's metadata, code
explanations from the registry, the stdlib's definitions, and a definition's resolved values."""

from __future__ import annotations

import functools
import re
from typing import Any

import attrs

from primus_lang.diagnostics import Code
from primus_lang.ir.candidate import KNOBS, Recompute
from primus_lang.ir.hardware import Cluster, Gpu
from primus_lang.ir.model import Model
from primus_lang.ir.quantity import Kind, choices_of, doc_of, kind_of
from primus_lang.ir.space import OBJECTIVE_METRICS, STRATEGIES, user_settings
from primus_lang.ir.text import field_default, literal
from primus_lang.lower import block_class
from primus_lang.resources import data_dir

CLASSES: dict[str, type] = {"model": Model, "gpu": Gpu, "cluster": Cluster}
DEFINITION_KINDS = ("model", "gpu", "cluster", "space")
TOP_KEYWORDS = ("import", *DEFINITION_KINDS)
SPACE_REFS = {"model": Model, "cluster": Cluster}
SPACE_STATEMENTS = {
    "let": "`let NAME = EXPR`: a derived value for later expressions",
    "require": '`require EXPR ["message"]`: a constraint; points where it is false are removed (P4100)',
    "fits": "`fits memory [headroom Q]`: the memory rule (a fraction of HBM kept free)",
    "maximize": "`maximize METRIC`: the objective (" + ", ".join(OBJECTIVE_METRICS) + ")",
    "minimize": "`minimize METRIC`: the objective (" + ", ".join(OBJECTIVE_METRICS) + ")",
    "budget": "`budget ITEM, ...`: `N evals`, a time (`30 min`), `llm N calls`, `cost N usd`",
    "strategy": "`strategy S`: " + ", ".join(STRATEGIES),
    "target": "`target FRAMEWORK [+ LAUNCHER]`: megatron, primus or bridge, on slurm, k8s or local",
    "assume": "`assume NAME = value`: a setting (" + ", ".join(user_settings()) + ")",
}
# names an expression (`let`, `require`, `when`) reads besides the knobs (docs/language.md)
DERIVED_NAMES = {
    "dp": "data-parallel size: world / (TP·PP·CP)",
    "edp": "expert data-parallel size: world / (ETP·EP·PP)",
    "microbatches": "micro-batches per step: GBS / (MBS·DP)",
    "world": "GPUs in the cluster",
    "nodes": "nodes in the cluster",
    "gpus_per_node": "GPUs per node",
    "layers_per_stage": "decoder layers on the fullest pipeline stage",
    "num_layers": "the model's layers",
    "hidden": "the model's width",
    "heads": "the model's attention heads",
    "kv_heads": "the model's key/value heads",
    "num_experts": "the model's routed experts (0 for a dense model)",
    "vocab": "the model's vocabulary",
}
FUNCTIONS = {"min": "`min(a, b, ...)`", "max": "`max(a, b, ...)`", "divides": "`divides(a, b)`: a divides b"}
RECOMPUTE_FORMS = ("none", "selective", "op", "full(layers: N)", "selective(core_attn, mlp)")


def fields_of_block(path: tuple[str, ...]) -> dict[str, attrs.Attribute[Any]]:
    """The fields a block accepts: ``("model",)``, ``("model", "moe")``, ``("space", "model")`` (an
    inline override) and so on; empty where the path names no block."""
    if not path:
        return {}
    if path[0] == "space":
        if len(path) == 1:
            return dict(KNOBS)
        cls: type | None = SPACE_REFS.get(path[1])
        rest = path[2:]
    else:
        cls = CLASSES.get(path[0])
        rest = path[1:]
    for name in rest:
        if cls is None:
            return {}
        if name == "gpu" and cls is Cluster:
            cls = Gpu
            continue
        fields = attrs.fields_dict(cls)
        if name not in fields or kind_of(fields[name]) not in (Kind.BLOCK, Kind.REF):
            return {}
        cls = block_class(cls, name)
    if cls is None:
        return {}
    return {f.name: f for f in attrs.fields(cls) if f.name not in ("name", "span")}


def values_of(f: attrs.Attribute[Any]) -> tuple[str, ...]:
    """The words a field or knob takes, for completion."""
    kind = kind_of(f)
    if kind is Kind.ENUM:
        return choices_of(f)
    if kind is Kind.FLAG:
        return ("true", "false")
    if f.name == "recompute":
        return RECOMPUTE_FORMS
    return ()


def field_markdown(owner: str, f: attrs.Attribute[Any]) -> str:
    kind = kind_of(f)
    what = " | ".join(values_of(f)) if values_of(f) else kind.value
    return (f"**`{f.name}`** ({owner})\n\n{doc_of(f)}\n\n"
            f"- takes: `{what}`\n- default: `{field_default(f)}`")


def code_markdown(code: Code) -> str:
    text = f"**{code.id}** `{code.name}`: {code.summary}"
    if code.explanation:
        text += "\n\n" + code.explanation
    return text + f"\n\n(`primusc explain {code.id}`)"


def show(value: Any, kind: Kind | None = None) -> str:
    """A value as the language writes it."""
    return literal(value, kind)


def resolved_markdown(kind: str, obj: Any, depth: int = 0) -> str:
    """A model, GPU or cluster with every field as lowering resolved it (defaults and inherited
    values included): what the compiler will use, which the source alone often does not say."""
    rows: list[str] = []
    for f in attrs.fields(type(obj)):
        if f.name in ("name", "span"):
            continue
        value = getattr(obj, f.name)
        if attrs.has(type(value)) and not isinstance(value, Recompute):
            if depth == 0:
                inner = resolved_markdown(f.name, value, depth + 1)
                rows.append(f"| `{f.name}` | {{ {inner} }} |")
            else:
                rows.append(f"`{f.name}` {{…}}")
            continue
        if depth:
            rows.append(f"{f.name} = {show(value, kind_of(f))}")
        else:
            rows.append(f"| `{f.name}` | `{show(value, kind_of(f))}` |")
    if depth:
        return "; ".join(rows)
    title = getattr(obj, "name", "")
    return f"**{kind} `{title}`** (resolved)\n\n| field | value |\n|---|---|\n" + "\n".join(rows)


_DEF = re.compile(r"^(model|gpu|cluster|space)\s+([A-Za-z_]\w*)", re.M)


@functools.cache
def stdlib_index() -> dict[str, tuple[tuple[str, str], ...]]:
    """Each stdlib module's definitions as (kind, name), read with a pattern rather than the parser:
    the index serves completion, which must not wait on (or share) the parser's thread."""
    try:
        root = data_dir("stdlib")
    except FileNotFoundError:
        return {}
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for path in sorted(root.rglob("*.prx")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        out[module] = tuple((m.group(1), m.group(2)) for m in _DEF.finditer(path.read_text(encoding="utf-8")))
    return out


def stdlib_path(module: str) -> Any:
    return data_dir("stdlib").joinpath(*module.split(".")).with_suffix(".prx")


def comment_above(text: str, line: int) -> str:
    """The comment lines right above 1-based ``line``: a stdlib card's source note."""
    rows = text.split("\n")
    out: list[str] = []
    i = line - 2
    while 0 <= i < len(rows) and rows[i].lstrip().startswith("#"):
        out.insert(0, rows[i].lstrip()[1:].strip())
        i -= 1
    return " ".join(out)
