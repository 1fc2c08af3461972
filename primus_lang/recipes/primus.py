"""A Primus experiment YAML → ``Recipe``, read as Primus loads it (``frameworks.primus``, the rules are in
its docstring): ``${VAR:default}`` substituted, the module preset (``config: pre_trainer.yaml``) and the
model preset (``model: NAME.yaml``) of the Primus release merged under the experiment's ``overrides``
(AMD-AGI/Primus examples/megatron/configs/<GPU>/*.yaml). Every merged setting is read (Primus's
defaults are what the run uses); only the experiment's own overrides are carried through, since the
presets come with Primus."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from typing import Any

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import (
    PRIMUS_UNREAD_OVERRIDE,
    RECIPE_ENV_DEFAULT,
    RECIPE_NOT_PRIMUS,
    RECIPE_SHELL_SYNTAX,
    RECIPE_UNKNOWN_CARD,
    RECIPE_UNKNOWN_FLAG,
    RECIPE_UNSUPPORTED,
)
from primus_lang.frameworks import megatron, primus
from primus_lang.ir.span import Span
from primus_lang.recipes.flags import setting_name
from primus_lang.recipes.settings import Entry, Recipe

_ARGUMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_GPUS = ("MI300X", "MI325X", "MI355X", "MI350X", "H100", "H200", "B200", "GB200", "B300", "GB300")


# A model preset's settings a launch does not carry: the tokenizer is the card's vocabulary (the launch
# runs mock data unless the experiment names a corpus), and the shared experts' overlap with the
# dispatch, which megatron-core allows only beside the all-to-all dispatcher and primusc runs in line,
# is the Primus target's to set (emit.primus_configs.overlaps_shared_experts)
_PRESET_KEPT = ("tokenizer", "moe_shared_expert_overlap")


def _overlap_left_out(merged: Mapping[str, Any], origin: Mapping[str, str], model_name: object) -> list[str]:
    """The note for a model preset's shared-expert overlap, which a launch does not carry (``_PRESET_KEPT``)."""
    key = "moe_shared_expert_overlap"
    if origin.get(key) != "model" or primus.assigned(merged.get(key)) is not True:
        return []
    return [f"`{model_name}: {key}` (the shared experts overlapped with the dispatch) is not carried: primusc's memory "
            "account and projection run the shared experts in line, and so do its launches (megatron-core overlaps "
            "them only beside the all-to-all dispatcher, Primus Turbo's DeepEP not at all)"]


def read_experiment(text: str, file: str, data: Any, given: Mapping[str, str] | None = None,
                    version: str | None = None) -> Recipe:
    given = dict(given or {})
    release = version or primus.DEFAULT_VERSION
    if release not in primus.version_names():
        raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"Primus `{release}` is not a release primusc has read",
                                      help="releases: " + ", ".join(primus.version_names())))
    modules = data.get("modules") if isinstance(data.get("modules"), dict) else {}
    pre = modules.get("pre_trainer")
    others = [k for k in modules if k != "pre_trainer" and isinstance(k, str)]
    if pre is None and others:
        # a post-training experiment (Primus's SFT files run modules.post_trainer): another trainer's run
        raise CompileError(Diagnostic(
            RECIPE_UNSUPPORTED, f"`{file}` runs `modules.{others[0]}`: primusc plans and launches Primus's "
            f"pretraining trainer (`modules.pre_trainer`, `{primus.PRETRAINER}`), not this one",
            span=_span_of(text, file, others[0]),
            help=f"to plan the same model and layout as pretraining, import a copy under `modules.pre_trainer` with "
                 f"`config: {primus.PRETRAINER}` (fine-tuning's packed sequences then project as pretraining's)"))
    if not isinstance(pre, dict) or "model" not in pre:
        raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"`{file}` has no `modules.pre_trainer.model`",
                                      span=Span(file, 1, 1, 1, 2),
                                      help="pass a Primus experiment (examples/megatron/configs/<GPU>/*.yaml)"))
    warnings: list[Diagnostic] = []
    problems: list[Diagnostic] = []
    notes: list[str] = []
    taken: list[tuple[str, str, Any, Span | None]] = []  # (setting, variable, the default taken, where)

    def substituted(key: str, value: Any, span: Span | None) -> Any:
        if not isinstance(value, str) or primus.ENV.search(value) is None:
            return value
        out, read = primus.substitute(value, given)
        if isinstance(out, primus.Unset):
            problems.append(Diagnostic(RECIPE_SHELL_SYNTAX, f"`{key}` is `{value}`: `${{{out.variable}}}` has no "
                                       "default, and only the run's environment gives it", span=span,
                                       help=f"give it with `--set {out.variable}=VALUE`"))
            return None
        taken.extend((key, name, out, span) for name in read if name not in given)
        return out

    framework = substituted("framework", pre.get("framework", "megatron"), _span_of(text, file, "framework"))
    if framework != "megatron":
        flavor = (pre.get("overrides") or {}).get("flavor") if isinstance(pre.get("overrides"), dict) else None
        # Primus's Megatron-Bridge experiments name the Bridge recipe they run (`flavor`), which primusc reads
        # as a Bridge launch; Primus's own mapping of their flat overrides onto Bridge's config is not read
        bridge_help = (f"; its recipe is Megatron-Bridge's `{flavor}`: import the Bridge launch of it "
                       f"(`python scripts/training/run_recipe.py --recipe {flavor} train.global_batch_size=...`) "
                       "to plan it on the bridge target" if framework == "megatron_bridge" and isinstance(flavor, str)
                       and re.fullmatch(r"\w+", flavor) else "")
        raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"the experiment's framework is `{framework}`, not megatron",
                                      span=_span_of(text, file, "framework"),
                                      help="primusc reads Primus's Megatron experiments" + bridge_help))
    overrides = pre.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, "`modules.pre_trainer.overrides` is not a mapping",
                                      span=_span_of(text, file, "overrides")))
    model_span = _span_of(text, file, "model")
    model_name = substituted("model", pre["model"], model_span)
    config_name = substituted("config", pre.get("config", primus.PRETRAINER), _span_of(text, file, "config"))
    if config_name != primus.PRETRAINER:
        # the launch primusc writes runs the pretraining trainer: another one's run (its dataset, its
        # adapters) would be silently replaced by pretraining
        problems.append(Diagnostic(
            RECIPE_UNSUPPORTED, f"`config: {config_name}`: primusc plans and launches Primus's pretraining trainer "
            f"(`{primus.PRETRAINER}`), not this one", span=_span_of(text, file, "config"),
            help=f"to plan the same model and layout as pretraining, import a copy with `config: {primus.PRETRAINER}` "
                 "(fine-tuning's packed sequences then project as pretraining's, a little slow)"))
    lora = overrides.get("lora")
    if isinstance(lora, dict) and lora.get("enabled") not in (None, False, "false", "False"):
        problems.append(Diagnostic(
            RECIPE_UNSUPPORTED, "`lora`: LoRA freezes the base weights, which then keep no gradients and no "
            "optimizer state, and adds adapter GEMMs: primusc's memory account and projection count full training",
            span=_span_of(text, file, "lora"), help="import the recipe without `lora` to plan full training"))
    if problems:
        raise CompileError(problems)
    module = primus.preset("modules", str(config_name), release)
    model = primus.preset("models", str(model_name), release)
    if module is None:
        raise CompileError(Diagnostic(RECIPE_NOT_PRIMUS, f"Primus {release} has no module preset `{config_name}`",
                                      span=_span_of(text, file, "config"),
                                      help="presets: " + ", ".join(primus.preset_names("modules", release))))
    if model is None and "/" in str(model_name):
        # the table holds primus/configs/models/megatron/*.yaml: a subfolder's (diffusion/, ...) is no
        # language model's preset, which is what the trainer primusc plans builds
        folder = str(model_name).rsplit("/", 1)[0]
        raise CompileError(Diagnostic(RECIPE_UNKNOWN_CARD, f"`model: {model_name}` is one of Primus's `{folder}/` "
                                      "presets: primusc reads the language-model presets of "
                                      "primus/configs/models/megatron, not its subfolders'", span=model_span,
                                      help="primusc plans decoder language models (dense, MoE, MLA, Mamba hybrids)"))
    if model is None:
        names = primus.preset_names("models", release)
        close = difflib.get_close_matches(str(model_name), names, n=1)
        raise CompileError(Diagnostic(RECIPE_UNKNOWN_CARD, f"Primus {release} has no model preset `{model_name}`",
                                      span=model_span, help=f"did you mean `{close[0]}`?" if close
                                      else "Primus's model presets: " + ", ".join(names)))
    ours: dict[str, Any] = {}
    for key, value in overrides.items():
        span = _span_of(text, file, str(key))
        if not isinstance(key, str) or _ARGUMENT.fullmatch(key) is None:
            problems.append(Diagnostic(RECIPE_UNKNOWN_FLAG, f"`{str(key)[:60]}` in `overrides` is not an argument name",
                                       span=span, help="an override is a Megatron or Primus argument, e.g. "
                                       "`micro_batch_size: 2`"))
            continue
        ours[key] = substituted(key, value, span)
    if problems:
        raise CompileError(problems)
    megatron_version = primus.megatron_version(release)
    merged, origin = primus.module_config(_substituted_all(module, given), _substituted_all(model, given), ours)
    # what a launch over Primus's generic card gives where the experiment says nothing (emit.primus_configs)
    generic = primus.preset("models", primus.GENERIC_CARD, release) or {}
    launched, _ = primus.module_config(_substituted_all(module, given), _substituted_all(generic, given), {})
    dests = megatron.by_dest(megatron_version)
    flags = megatron.flags(megatron_version)
    entries: dict[str, Entry] = {}
    for key, value in merged.items():
        value = primus.assigned(value)
        if value is None or not isinstance(key, str):
            continue
        if origin[key] == "overrides":
            written, span, preset = f"overrides.{key}", _span_of(text, file, key), False
        else:
            written, span, preset = f"{model_name if origin[key] == 'model' else config_name}: {key}", None, True
        unread, dropped = _unread_override(key, value, span, dests, flags.get("--" + key.replace("_", "-")),
                                           (megatron_version, release), known=key in module or key in model)
        if unread is not None and not preset:
            warnings.append(unread)
        if dropped:
            continue
        name = _setting_of(key, dests.get(key, ()))
        # Primus hands Megatron its settings by dest and drops other names (`bases`, or a preset's
        # `original_max_position_embeddings`, which no Megatron-LM it pins reads): those are not carried.
        # Primus's own settings, which its presets define for every model (`router_logit_softcapping`, read
        # by its MoE router: Grok 2 sets 30), are carried where the model's preset sets them otherwise
        carry = (origin[key] == "model" and (key in dests or key in launched) and launched.get(key) != value
                 and not key.startswith(_PRESET_KEPT))
        entries[name] = Entry(name, value, span, written, preset=preset, carry=carry)
    notes += _overlap_left_out(merged, origin, model_name)
    if taken:
        # one warning for the run's environment, each default a line of it
        key, name, value, span = taken[0]
        warnings.insert(0, Diagnostic(
            RECIPE_ENV_DEFAULT, f"the experiment reads {len(taken)} environment variable(s) primusc does not read; "
            f"took their defaults, `{name}` = `{value}` first", span=span,
            notes=tuple(f"`{k}`: ${{{n}}} = `{v}`" for k, n, v, _ in taken),
            help=f"`--set {name}=VALUE` gives another"))
    notes += _unread(given, [data, module, model])
    nulls = [k for k, v in ours.items() if primus.assigned(v) is None]
    if nulls:
        notes.append(f"{', '.join(f'`{k}: null`' for k in nulls)} "
                     f"{'leaves' if len(nulls) == 1 else 'leave'} the setting to Megatron's default")
    notes.append(f"read as Primus {release} would: `{config_name}` and the model preset `{model_name}` under the "
                 "experiment's overrides")
    folders = file.replace("\\", "/").upper().split("/")[:-1]
    # Primus's MLPerf configs sit in `MI355/` (the part's name without its X)
    gpu = next((g for g in _GPUS if g in folders or (g.endswith("X") and g[:-1] in folders)), "")
    return Recipe(file, "primus", entries, card=Entry("model", str(model_name), model_span, "model"),
                  gpu_hint=gpu.lower(), notes=tuple(notes), warnings=tuple(warnings), version=release)


def _unread_override(key: str, value: Any, span: Span | None, dests: Mapping[str, Any], flag: megatron.Flag | None,
                     versions: tuple[str, str], known: bool) -> tuple[Diagnostic | None, bool]:
    """What reads a setting of an experiment that no Megatron dest names: the warning it takes (W3134)
    and whether Primus drops it before Megatron (then it is not carried). ``versions``: the Megatron-LM
    and Primus releases; ``known``: a Primus preset holds the name, so Primus's own code may read it."""
    megatron_version, release = versions
    if key in dests:
        return None, False
    computed_from = primus.COMPUTED.get(key)
    if computed_from is not None:
        # validate_args sets it again from its own setting
        return Diagnostic(PRIMUS_UNREAD_OVERRIDE, f"`{key}` is what Megatron-LM's validate_args computes from "
                          f"`{computed_from}`, over any value set here: nothing reads `{key}: {value}`",
                          span=span, help=f"write `{computed_from}: {value}`"), True
    if flag is not None:
        # Primus hands Megatron its settings by argparse dest and drops any other name: a flag's name
        # whose dest differs (`norm_epsilon`, read as `layernorm_epsilon`) reaches nothing
        return Diagnostic(PRIMUS_UNREAD_OVERRIDE, f"`{key}` is the flag `{flag.option}`'s name, but Primus sets "
                          f"Megatron-LM {megatron_version}'s arguments by dest and this one's is `{flag.dest}`: "
                          f"nothing reads `{key}`", span=span,
                          notes=(f"the run takes Megatron's default, {flag.default}, and so does the space this "
                                 "import writes",) if flag.default is not None else (),
                          help=f"write `{flag.dest}: {value}`"), True
    if not known:
        return Diagnostic(PRIMUS_UNREAD_OVERRIDE, f"`{key}` is not a Megatron-LM {megatron_version} argument nor a "
                          f"setting of Primus {release}'s presets: nothing reads it", span=span,
                          help="check its spelling"), False
    return None, False


def _setting_of(dest: str, flags: tuple[megatron.Flag, ...]) -> str:
    """A dest as primusc's settings name it: the flag's name (``layernorm_epsilon`` is ``--norm-epsilon``'s,
    ``norm_epsilon``) where its one flag stores a value under another name; the dest itself otherwise."""
    names = [setting_name(f.option) for f in flags]
    if dest in names or len(flags) != 1 or flags[0].action != "store":
        return dest
    return names[0]


def _strings(value: Any) -> Iterator[str]:
    """Every string inside ``value`` (mappings' keys and values, lists' items), however deep."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _unread(given: Mapping[str, str], values: list[Any]) -> list[str]:
    """A note on the ``--set`` names no ``${VAR:default}`` in ``values`` (the experiment as extended, its
    presets) reads."""
    referenced = {m.group(1) for v in _strings(values) for m in primus.ENV.finditer(v)}
    unread = sorted(set(given) - referenced)
    if not unread:
        return []
    return [f"{', '.join(f'`--set {n}=...`' for n in unread)} changed nothing: no `${{{unread[0]}:...}}` in the "
            "experiment or its presets reads it (an experiment's own setting is changed in its YAML, or in the "
            "space it imports to)"]


def _substituted_all(preset: Mapping[str, Any], given: Mapping[str, str]) -> dict[str, Any]:
    """A preset's values with ``${VAR:default}`` substituted (a reference without a default is left out:
    the preset's author meant the environment to give it)."""
    out: dict[str, Any] = {}
    for key, value in preset.items():
        if isinstance(value, str) and primus.ENV.search(value):
            value, _ = primus.substitute(value, given)
            if isinstance(value, primus.Unset):
                continue
        out[key] = value
    return out


def _span_of(text: str, file: str, key: str) -> Span | None:
    m = (re.search(r"^[ \t]*" + re.escape(key) + r"[ \t]*:", text, re.MULTILINE) if key else None) \
        or re.search(r"([\"'])" + re.escape(key) + r"\1[ \t]*:", text)  # quoted, or an experiment written as JSON
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    # at the key's first character: past the indent, or past the opening quote (at it when the key is empty)
    skip = len(m.group(0)) - len(m.group(0).lstrip()) if m.lastindex is None else int(bool(key))
    col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + skip + 1
    return Span(file, line, col, line, col + max(len(key), 1))
