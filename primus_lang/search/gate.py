"""The objective gate: a search may change how a model is trained, never what is trained.

Throughput is only comparable between recipes that train the same model on the same tokens with the
same optimisation. So a proposal that changes the global batch, the sequence length, the model, the
data, the learning-rate schedule or the MoE routing is refused unless the space itself declares that
knob an axis. A proposal that moves a knob the space fixed, or to a value outside an axis's domain, is
refused too: the space is the user's contract with the search.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from attrs import frozen

from primus_lang.frameworks import spelling
from primus_lang.ir.candidate import KNOBS, RECOMPUTE_KINDS, Candidate, Recompute
from primus_lang.ir.quantity import Kind, choices_of, kind_of
from primus_lang.search.landscape import Landscape

# Knobs of a Candidate that define the training problem rather than its execution.
TRAINED_KNOBS = frozenset({"gbs", "seq_len"})

# Names an LLM (or a person) may reach for that are not knobs and change what is trained.
TRAINED_NAMES = frozenset(
    {
        "model", "data", "dataset", "tokenizer", "vocab", "num_layers", "hidden", "heads",
        "lr", "learning_rate", "lr_schedule", "lr_decay_style", "lr_warmup", "lr_warmup_iters",
        "min_lr", "weight_decay", "adam_beta1", "adam_beta2", "clip_grad", "train_iters",
        "train_samples", "top_k", "moe_top_k", "moe_router_topk", "capacity_factor",
        "moe_capacity_factor", "moe_expert_capacity_factor", "token_drop", "drop_tokens",
        "moe_token_drop_policy", "moe_pad_expert_input_to_capacity", "routing", "router",
        "moe_router_load_balancing_type", "moe_aux_loss_coeff", "num_experts",
    }
    # the model card's fields and the Megatron settings that state them (`hidden_size`, `num_attention_heads`)
    | set(spelling.CARD) | set(spelling.CARD.values())
)

# Megatron argument names that mean one of our count knobs (frameworks.spelling), and their other names
ALIASES = {**{name: knob for knob, name in spelling.KNOBS.items() if kind_of(KNOBS[knob]) is Kind.COUNT},
           **spelling.ALIASES}

_FULL = re.compile(r"^full\s*\(\s*(?:layers\s*[:=]\s*)?(\d+)\s*(?:,\s*(?:method\s*[:=]\s*)?(\w+)\s*)?\)$")


@frozen
class GateVerdict:
    allowed: bool
    reasons: tuple[str, ...] = ()
    changes: tuple[tuple[str, object], ...] = ()  # the knob changes, values coerced to knob types


def coerce(knob: str, raw: object) -> object:
    """Turn a JSON-ish value into the knob's type; ValueError names what was expected."""
    kind = kind_of(KNOBS[knob])
    if kind is Kind.COUNT:
        if isinstance(raw, bool):
            raise ValueError(f"`{knob}` takes an integer, got {raw!r}")
        if isinstance(raw, int):
            return raw
        if isinstance(raw, float) and raw.is_integer():
            return int(raw)
        text = raw.strip() if isinstance(raw, str) else ""
        if re.fullmatch(r"-?[0-9]+", text, flags=re.ASCII):  # one sign at most: `--4` is no integer
            return int(text)
        raise ValueError(f"`{knob}` takes an integer, got {raw!r}")
    if kind is Kind.FLAG:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true"
        raise ValueError(f"`{knob}` takes true or false, got {raw!r}")
    if kind is Kind.ENUM:
        choices = choices_of(KNOBS[knob])
        if isinstance(raw, str) and raw.strip() in choices:
            return raw.strip()
        if isinstance(raw, str) and raw.strip().lower() in choices:  # `FP8` for fp8, as recompute reads `FULL`
            return raw.strip().lower()
        raise ValueError(f"`{knob}` takes one of {', '.join(choices)}, got {raw!r}")
    if kind is Kind.BLOCK:
        return coerce_recompute(raw)
    raise ValueError(f"`{knob}` cannot be set by a search")


def coerce_recompute(raw: object) -> Recompute:
    if isinstance(raw, Recompute):
        return raw
    if isinstance(raw, dict):
        kind = str(raw.get("kind", "none"))
        layers = raw.get("layers", 0)
        method = str(raw.get("method", "block"))
        if kind not in RECOMPUTE_KINDS or not isinstance(layers, int) or isinstance(layers, bool):
            raise ValueError(f"`recompute` takes none, selective, op or full(layers), got {raw!r}")
        return Recompute(kind, layers if kind == "full" else 0, method)
    if isinstance(raw, str):
        text = raw.strip().lower()
        if text in ("none", "selective", "op"):
            return Recompute(text)
        match = _FULL.match(text)
        if match:
            method = match.group(2) or "block"
            if method not in ("uniform", "block"):
                raise ValueError(f"recompute method must be uniform or block, got {method!r}")
            return Recompute("full", int(match.group(1)), method)
    raise ValueError(f"`recompute` takes none, selective, op or full(layers), got {raw!r}")


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def gate_changes(land: Landscape, changes: Iterable[tuple[str, object]], base: Candidate) -> GateVerdict:
    """Judge raw knob changes proposed on top of ``base``."""
    reasons: list[str] = []
    coerced: list[tuple[str, object]] = []
    for raw_name, raw_value in changes:
        name = ALIASES.get(raw_name, raw_name)
        if name not in KNOBS:
            if name in TRAINED_NAMES:
                reasons.append(f"`{raw_name}` changes what is trained; the space does not declare it")
            else:
                reasons.append(f"`{raw_name}` is not a knob of a recipe")
            continue
        try:
            value = coerce(name, raw_value)
        except ValueError as err:
            reasons.append(str(err))
            continue
        coerced.append((name, value))
        reasons.extend(_judge(land, name, value))
    return GateVerdict(not reasons, tuple(reasons), tuple(coerced))


def gate_candidate(land: Landscape, cand: Candidate) -> GateVerdict:
    """Judge a whole candidate: every knob that is not an axis must keep the space's value."""
    reasons: list[str] = []
    for name in KNOBS:
        value = getattr(cand, name)
        if name in land.axis_names or value == getattr(land.base, name):
            continue
        reasons.extend(_judge(land, name, value))
    return GateVerdict(not reasons, tuple(reasons))


def _judge(land: Landscape, name: str, value: object) -> list[str]:
    fixed = getattr(land.base, name)
    if name in land.axis_names:
        axis = next(a for a in land.axes if a.name == name)
        if value == fixed or any(type(v) is type(value) and v == value for v in axis.values):
            return []
        shown = ", ".join(_shown(v) for v in axis.values)
        return [f"`{name} = {_shown(value)}` is outside the axis domain ({shown})"]
    if value == fixed:
        return []
    if name in TRAINED_KNOBS:
        return [f"`{name}` changes what is trained ({_shown(fixed)} -> {_shown(value)}); the space does not declare it an axis"]
    return [f"`{name}` is fixed by the space to {_shown(fixed)}"]
