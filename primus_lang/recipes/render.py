"""An imported recipe as a space: the model card (a stdlib card with the run's overrides, or a new
card), the cluster, fixed knobs at the recipe's values, axes around it, the baseline, passthrough."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import attrs

from primus_lang.frameworks import bridge, megatron
from primus_lang.ir import derived
from primus_lang.ir.candidate import KNOBS, Candidate, Recompute
from primus_lang.ir.model import Mamba, Mla, Model, Moe
from primus_lang.ir.quantity import Kind, kind_of
from primus_lang.ir.site import carried_env
from primus_lang.ir.text import literal
from primus_lang.recipes.interpret import Imported, megatron_table
from primus_lang.recipes.scheduler import Placement
from primus_lang.recipes.words import shown

_KEYWORDS = frozenset({"let", "require", "fits", "maximize", "minimize", "budget", "strategy", "target", "assume",
                       "import", "model", "gpu", "cluster", "space", "site", "true", "false"})


def _value(v: Any) -> str:
    return literal(v, Kind.TEXT)


def knob_text(knob: str, v: Any) -> str:
    """A knob's value as a space writes it (and as ``render_space``'s ``left_out`` names it)."""
    return literal(v, kind_of(KNOBS[knob]))


_BLOCKS: dict[str, type] = {"moe": Moe, "mla": Mla, "mamba": Mamba}


def _model_lines(fields: dict[str, Any], base: dict[str, Any] | None, indent: str) -> list[str]:
    """``field = value`` for every field (a new card) or every field differing from ``base``."""
    out: list[str] = []
    for f in attrs.fields(Model):
        if f.name in ("name", "source", "span"):
            continue
        if f.name not in fields:
            continue
        v = fields[f.name]
        if base is not None and base.get(f.name) == v:
            continue
        if f.name in _BLOCKS:
            if v is None:
                continue
            old = base.get(f.name) if base else None
            block = _BLOCKS[f.name]
            inner = [f"{m.name} = {_field_value(m, getattr(v, m.name))}" for m in attrs.fields(block)
                     if old is None or getattr(old, m.name) != getattr(v, m.name)]
            out.append(f"{indent}{f.name} {{ " + "; ".join(inner) + " }")
            continue
        out.append(f"{indent}{f.name} = {_field_value(f, v)}")
    return out


def _field_value(f: attrs.Attribute[Any], v: Any) -> str:
    return literal(v, kind_of(f))


def _axes(imp: Imported, model: dict[str, Any], gpus_per_node: int, world: int) -> dict[str, list[str]]:
    """Neighbours of the recipe the model and the cluster allow: TP inside a node dividing the heads
    and query groups, PP dividing the layers, MBS 1, halved and doubled, the recompute family with
    fewer layers recomputed (a recipe that recomputes every layer often fits with a quarter or half of
    them), and under FSDP the distributed optimizer beside it (PP > 1 needs it with torch FSDP2). A
    recipe that offloads activations keeps its PP 1, no recomputation and its offloaded layers
    (megatron-core takes offloading with neither; host memory, which more layers fill, is not in the
    account)."""
    c = imp.candidate
    kept, _ = _neighbours(imp, model, gpus_per_node, world)
    tps, pps, mbss = kept["tp"], kept["pp"], kept["mbs"]
    recomputes = [knob_text("recompute", r) for r in _recompute_neighbours(c.recompute)]
    for other in ("none", "selective"):
        if other not in recomputes and not c.offload_layers:  # megatron-core offloads without recomputation
            recomputes.append(other)
    out = {"tp": [knob_text("tp", t) for t in tps], "mbs": [knob_text("mbs", m) for m in mbss], "recompute": recomputes}
    if _pp_axis(c):
        out["pp"] = [knob_text("pp", p) for p in pps]
        if c.sharding == "fsdp" and len(pps) > 1:
            out["sharding"] = ["fsdp", "dist_opt"]
    return {k: v for k, v in out.items() if len(v) > 1}


def _pp_axis(c: Candidate) -> bool:
    """Whether the space varies PP: not beside offloading or a recipe's own layout of its stages."""
    return not c.offload_layers and not c.pipeline_layout and not c.first_stage_layers and not c.last_stage_layers \
        and c.vpp == 1


def _neighbours(imp: Imported, model: dict[str, Any], gpus_per_node: int,
                world: int) -> tuple[dict[str, list[int]], list[str]]:
    """The TP, PP and MBS values around the recipe's that its model and cluster allow, and for each one
    left out the reason (what ``neighbour_notes`` says)."""
    c = imp.candidate
    heads, groups, layers = model["heads"], model["kv_heads"], model["num_layers"]
    over = megatron.takes_tp_over_kv_heads(megatron_table(imp.recipe))
    why: dict[str, dict[int, str]] = {"tp": {}, "pp": {}, "mbs": {}}
    for t in (1, 2, 4, 8):
        if t > max(gpus_per_node, c.tp):
            continue  # TP stays inside a node: not a value to offer, nor to explain
        why["tp"][t] = (f"{heads} heads do not split over {t}" if heads % t else
                        f"{groups} query groups do not split over {t}" if not derived.kv_heads_split(
                            heads, groups, model.get("head_dim") or model["hidden"] // heads, t, over) else
                        f"{world} GPUs do not split over {t}" if world % t else "")
    for p in (c.pp // 2, c.pp * 2):
        if p >= 1:
            why["pp"][p] = (f"{layers} layers do not split over {p} stages" if layers % p else
                            f"{world} GPUs do not split into {p} stages" if world % p else "")
    for m in (1, c.mbs // 2, c.mbs * 2):
        if m >= 1:
            why["mbs"][m] = f"the global batch {c.gbs} does not divide by {m}" if c.gbs % m else ""
    own = {"tp": c.tp, "pp": c.pp, "mbs": c.mbs}
    kept = {k: sorted({v for v, no in values.items() if not no} | {own[k]}) for k, values in why.items()}
    notes = [f"`{k}` {v} not offered: {no}" for k, values in why.items() for v, no in values.items()
             if no and v != own[k] and (k != "pp" or _pp_axis(c))]
    return kept, notes


def neighbour_notes(imp: Imported, gpus_per_node: int, world: int) -> list[str]:
    """Why the space leaves out a value around the recipe's (PP 8 of a 12-layer model): the values it
    offers are those the model and the cluster split evenly, and a note names each one that does not."""
    return _neighbours(imp, imp.model, gpus_per_node, world)[1]


def _recompute_neighbours(rc: Recompute) -> list[Recompute]:
    """The recipe's recomputation, and with block-wise full recomputation of ``n`` layers a stage
    also ``n/2`` and ``n/4`` of them (uniform's count is a chunk size: every layer is recomputed)."""
    if rc.kind != "full" or rc.method != "block" or rc.layers < 2:
        return [rc]
    fewer = sorted({max(1, rc.layers // 2), max(1, rc.layers // 4)} - {rc.layers}, reverse=True)
    return [rc, *(attrs.evolve(rc, layers=n) for n in fewer)]


def render_space(imp: Imported, name: str, card: tuple[str, str, dict[str, Any]] | None, gpu: tuple[str, str],
                 nodes: int, gpus_per_node: int, target: str, notes: list[str], version: str = "",
                 left_out: Mapping[str, Collection[str]] | None = None) -> str:
    """``card``: (stdlib module, card name, its fields) when the recipe's model is a stdlib card;
    ``version``: the Megatron-LM release a command line was read at (a Bridge launch: the Bridge release),
    which its launch files then name; ``left_out``: per axis, values (as written) it does not offer."""
    c = imp.candidate
    lines = [f"# Space written by `primusc import-recipe` from {imp.recipe.file} ({imp.recipe.kind}).",
             "# The recipe is the space's baseline; `primusc plan` reports it first and what the best found changes."]
    lines += [f"# - {shown(n, 4000)}" for n in notes]
    lines.append("")
    model_name = f"{name}_model"
    if card is not None:
        module, card_name, fields = card
        lines.append(f"import {module} ({card_name})")
    lines.append(f"import hardware.{gpu[0]} ({gpu[1]})")
    lines.append("")
    if card is not None:
        body = _model_lines(imp.model, fields, "  ")
        lines.append(f"model {model_name} = {card[1]} {{" if body else f"model {model_name} = {card[1]} {{ }}")
        if body:
            lines += body
            lines.append("}")
    else:
        lines.append(f"model {model_name} {{")
        lines += _model_lines(imp.model, None, "  ")
        lines.append(f"  source = {_value('imported from ' + imp.recipe.file)}")
        lines.append("}")
    lines.append("")
    lines.append(f"cluster {name}_cluster {{ gpu = {gpu[1]}; nodes = {nodes}; gpus_per_node = {gpus_per_node} }}")
    lines.append("")
    env = exported(imp)
    placement = imp.recipe.placement
    if env or placement:
        lines += _site_lines(f"{name}_site", env, placement)
    world = nodes * gpus_per_node
    axes = _axes(imp, imp.model, gpus_per_node, world)
    if left_out:
        kept = {k: [v for v in values if v not in left_out.get(k, ())] for k, values in axes.items()}
        axes = {k: values for k, values in kept.items() if len(values) > 1}
    lines.append(f"space {name} on {name}_cluster {{")
    lines.append(f"  model = {model_name}")
    if env or placement:
        lines.append(f"  site = {name}_site")
    lines.append(f"  seq_len = {c.seq_len}")
    default = Candidate()
    for f in attrs.fields(Candidate):
        if f.name in ("seq_len",) or f.name in axes:
            continue
        v = getattr(c, f.name)
        if f.name != "gbs" and v == getattr(default, f.name):
            continue
        lines.append(f"  {f.name} = {knob_text(f.name, v)}")
    for knob, values in axes.items():
        lines.append(f"  {knob} : {' | '.join(values)}")
    lines.append("")
    inner = [f"{k} = {knob_text(k, getattr(c, k))}" for k in axes]
    lines.append("  baseline { " + "; ".join(inner) + " }" if inner else "  baseline { }")
    if imp.passthrough:
        lines.append("  passthrough {")
        for key, value in imp.passthrough:
            lines.append(f"    {key} = {_value(value)}")
        lines.append("  }")
    lines.append("")
    lines.append("  fits memory headroom 5%")
    lines.append("  maximize tokens_per_gpu")
    lines.append("  budget 200 evals, 5 min")
    framework, launcher = target.split("+")
    lines.append(f"  target {framework} + {launcher}")
    if imp.balanced:
        lines.append("  assume moe_imbalance = 1  # the recipe forces balanced routing: no busiest expert rank")
    if framework == "megatron" and version and version != megatron.DEFAULT_VERSION:
        lines.append(f"  assume megatron_version = {_value(version)}")
    if framework == "bridge" and version and version != bridge.DEFAULT_VERSION:
        lines.append(f"  assume bridge_version = {_value(version)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _site_lines(name: str, env: list[tuple[str, str]], placement: Placement) -> list[str]:
    """The site a recipe's script runs on: where its job runs (``scheduler``) and the variables it exports,
    which reach the launch as the site's environment (each a default the job's own environment overrides),
    not lost with the script."""
    lines = [f"site {name} {{"]
    for field, value in placement.fields:
        if field == "runtime":
            lines.append(f"  runtime = {value}")
        elif isinstance(value, float):
            lines.append(f"  {field} = {_duration(value)}")
        else:
            lines.append(f"  {field} = {_value(value)}")
    if placement.srun_args:
        lines.append(f"  srun_args = {_value(' '.join(placement.srun_args))}")
    if placement.mounts:
        lines.append("  mounts {")
        lines += [f"    {m.name} {{ host = {_value(m.host)}; path = {_value(m.path)}"
                  + ("; read_only = true }" if m.read_only else " }") for m in placement.mounts]
        lines.append("  }")
    if env:
        lines.append("  env {")
        lines += [f"    {k} = {_value(v)}" for k, v in env]
        lines.append("  }")
    return [*lines, "}", ""]


def _duration(seconds: float) -> str:
    """Seconds in the largest of the language's units that writes them whole."""
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds % size == 0:
            return f"{int(seconds // size)} {unit}"
    return f"{seconds:g} s"


def exported(imp: Imported) -> list[tuple[str, str]]:
    """The variables the recipe's script exports that a site may set (``site.carried_env``)."""
    return [(k, v) for k, v in imp.recipe.env if carried_env(k)]


def passthrough_keys_ok(imp: Imported) -> list[str]:
    """Passthrough names the language cannot write as a field (a keyword)."""
    return [k for k, _ in imp.passthrough if k in _KEYWORDS]
