"""``emit(space, cand, target, context) -> {relative path: text}``: a pure function of its inputs.

Steps: parse the target, resolve the variables, refuse an illegal candidate, collect what the
framework or launcher cannot express (all of it, then stop with P7001), render the templates, and
add ``manifest.json`` recording what was emitted and from what.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_emit import (
    BAD_VARIABLE,
    BRIDGE_ON_AMD,
    BRIDGE_ONLY_DROPPED,
    BRIDGE_UNKNOWN_FIELD,
    HUB_TOKENIZER_NO_TOKEN,
    ILLEGAL_CANDIDATE,
    K8S_NO_RDMA,
    NULL_TOKENIZER,
    PASSTHROUGH_UNKNOWN,
    PRIMUS_ON_NVIDIA,
    PRIMUS_ONLY_DROPPED,
    RECIPE_EXIT_REPLACED,
    RULE_LEFT_OUT,
    SITE_UNEXPANDED,
    SITE_UNSUPPORTED,
    TIME_LIMIT_SHORT,
    UNKNOWN_TARGET,
    UNSUPPORTED,
)
from primus_lang.emit.context import EmitContext, Variables, resolve_variables
from primus_lang.emit.environment import DETERMINISTIC_SETTINGS, collective_library, environment
from primus_lang.emit.frameworks import FRAMEWORKS, WANDB_SETTINGS, Framework, wandb_disabled
from primus_lang.emit.launch_rules import LeftOut
from primus_lang.emit.launchers import LAUNCHERS, Launcher
from primus_lang.emit.profiles import NO_VERSION
from primus_lang.emit.sites import (
    decided_settings,
    exit_minutes,
    site_problems,
    slurm_seconds,
    variable_defaults,
)
from primus_lang.emit.templating import render
from primus_lang.frameworks import megatron, primus, spelling
from primus_lang.ir import Candidate, Space
from primus_lang.ir.candidate import format_value
from primus_lang.ir.serialize import to_data

NODE_SCRIPT = "node.sh"
MANIFEST = "manifest.json"
TARGETS = tuple(f"{f}+{launcher}" for f in FRAMEWORKS for launcher in LAUNCHERS)


def parse_target(target: str) -> tuple[type[Framework], type[Launcher]]:
    framework, _, launcher = target.replace(" ", "").partition("+")
    if framework not in FRAMEWORKS or launcher not in LAUNCHERS:
        raise CompileError(
            Diagnostic(
                UNKNOWN_TARGET,
                f"unknown emission target `{target}`",
                help="targets: " + ", ".join(TARGETS),
            )
        )
    return FRAMEWORKS[framework], LAUNCHERS[launcher]


def emitted_names(target: str) -> frozenset[str]:
    """The files ``emit`` writes for ``target``, whatever the candidate: what ``plan`` must keep its
    trace and report apart from before it searches."""
    framework, launcher = parse_target(target)
    return frozenset({*framework.TEMPLATES, NODE_SCRIPT, *launcher.TEMPLATES, MANIFEST})


def refuse_illegal(space: Space, cand: Candidate) -> None:
    """Run the checker's legality rules; an illegal candidate never reaches a template."""
    from primus_lang.check import legality

    violations = list(legality(space, cand))
    if not violations:
        return
    notes = tuple(f"{getattr(v, 'code', '')} {getattr(v, 'message', v)}".strip() for v in violations)
    raise CompileError(
        Diagnostic(
            ILLEGAL_CANDIDATE,
            f"candidate `{cand.label()}` is illegal and was not emitted",
            help=str(getattr(violations[0], "help", "") or "choose a point that `primusc check` keeps"),
            notes=notes,
        )
    )


def _header(space: Space, cand: Candidate, target: str, ctx: EmitContext) -> dict[str, Any]:
    return {
        "version": ctx.primusc_version,
        "source": ctx.source_name or "<python>",
        "sha256": ctx.source_sha256 or "-",
        "space": space.name,
        "target": target,
        "label": cand.label(),
        # the hardware the recipe was planned and its memory proved for: a space may span several clusters
        "cluster": f"{space.cluster.nodes} node{'s' if space.cluster.nodes != 1 else ''} x "
                   f"{space.cluster.gpus_per_node} {space.cluster.gpu.name}",
    }


def _parts(space: Space, cand: Candidate, target: str,
           ctx: EmitContext) -> tuple[Framework, Launcher, Variables]:
    framework_cls, launcher_cls = parse_target(target)
    variables = resolve_variables(ctx.variables, space.name, variable_defaults(space))
    passthrough = _carried(space, ctx.variables)
    if framework_cls.NAME != "primus":
        # an imported Primus experiment's own settings reach a Primus launch alone (W7024)
        dropped = set(primus_only(space))
        # an imported Primus experiment's tokenizer types are Hugging Face tokenizers of `tokenizer_model`:
        # Megatron's name for them (a Megatron recipe's Llama2Tokenizer is Megatron's own SentencePiece one)
        hf = primus.HF_TOKENIZERS if _imported_from_primus(space) else frozenset()
        passthrough = tuple((k, "HuggingFaceTokenizer" if k == "tokenizer_type" and v in hf else v)
                            for k, v in passthrough if k not in dropped)
    if launcher_cls.TIME_LIMITED:
        # the run stops by itself before the scheduler kills it, in each framework's spelling; a recipe's
        # own exit stands where it comes first
        limit = exit_minutes(variables.time_limit)
        own = _whole(dict(passthrough).get(EXIT_SETTING))
        if not own or own > limit:  # 0 is Megatron's "no exit": the scheduler's kill then ends the run
            passthrough = (*((k, v) for k, v in passthrough if k != EXIT_SETTING), (EXIT_SETTING, limit))
    return (framework_cls(space.model, space.cluster, cand, variables, space.run, space.site, passthrough,
                          primus_experiment=_imported_from_primus(space)),
            launcher_cls(space.cluster, variables, space.site), variables)


EXIT_SETTING = "exit_duration_in_mins"  # Megatron-LM's; Primus takes the same key, Bridge train.exit_duration_in_mins


def primus_only(space: Space) -> list[str]:
    """The space's passthrough settings only a Primus launch reads: those Primus's presets hold and no
    Megatron-LM parser has (its logging, Primus Turbo's switches), any other no Megatron-LM has in a
    space whose own target is Primus (an imported experiment: Primus reads names of its code's own),
    and a Weights & Biases project the experiment turns off (Megatron-LM stops at start on a project
    without an experiment name)."""
    imported = _imported_from_primus(space)
    own = [k for k, _ in space.passthrough
           if k in primus.own_settings() or (imported and k not in megatron.known_names())]
    if wandb_disabled(space.passthrough, imported):
        own += [k for k, _ in space.passthrough if k in WANDB_SETTINGS]
    return own


def _imported_from_primus(space: Space) -> bool:
    """Whether the space's own target is Primus: its passthrough is an imported Primus experiment's."""
    return (space.settings.source_target or space.settings.target).replace(" ", "").startswith("primus+")


def _carried(space: Space, given: Mapping[str, str]) -> tuple[tuple[str, bool | int | float | str], ...]:
    """The space's passthrough less what a `--var` names or the space's run block sets: the user's word
    on the command line, or in the run block, wins over the imported recipe's (its `train_iters`, `lr`,
    ...), as it wins over a site's."""
    decided = decided_settings(space)
    return tuple((k, v) for k, v in space.passthrough if k not in given and k not in decided)


def _whole(value: object) -> int | None:
    """A carried setting's whole number (ASCII digits, as Megatron's argparse takes it); None otherwise."""
    text = str(value) if value is not None and not isinstance(value, bool) else ""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


def launched_iterations(space: Space, given: Mapping[str, str], gbs: int = 0) -> int:
    """How many iterations the launch runs: `--var train_iters`, else the recipe's own, else (a recipe that
    counts training in samples, ``gbs`` its global batch) its samples over the batch, else the default."""
    carried = dict(_carried(space, given))
    own = _whole(carried.get("train_iters"))
    if own is not None:
        return own
    samples = _whole(carried.get("train_samples"))
    if samples is not None and gbs > 0 and "train_iters" not in given:
        return -(-samples // gbs)
    return int(resolve_variables(given, space.name, variable_defaults(space)).train_iters)


def time_warnings(space: Space, target: str, step_time: float, given: Mapping[str, str],
                  start_up: float, gbs: int = 0) -> list[Diagnostic]:
    """W7022 when the launch's iterations at ``step_time`` (projected) and ``start_up`` seconds exceed the
    scheduler's time limit: the run stops early at the exit the launch sets, its work since the last
    checkpoint lost unless it saves one; W7026 when that exit replaces a later one of the recipe's own."""
    _, launcher_cls = parse_target(target)
    if not launcher_cls.TIME_LIMITED:
        return []
    v = resolve_variables(given, space.name, variable_defaults(space))
    out = []
    own = _whole(dict(_carried(space, given)).get(EXIT_SETTING))
    if own and own > exit_minutes(v.time_limit):
        out.append(Diagnostic(RECIPE_EXIT_REPLACED, f"the recipe's own `{EXIT_SETTING}` of {own} min leaves the run no "
                              f"time to stop before the scheduler kills it at {v.time_limit}: the launch exits after "
                              f"{exit_minutes(v.time_limit)} min instead", help="raise `time_limit` (`--var time_limit=...` or the site's) to keep the "
                                              "recipe's (see `primusc explain W7026`)"))
    iterations = launched_iterations(space, given, gbs)
    needed = start_up + iterations * step_time
    # the run stops itself at the exit the launch sets, before the scheduler's kill
    stop = min(slurm_seconds(v.time_limit), exit_minutes(v.time_limit) * 60.0)
    if needed <= stop:
        return out
    if start_up + step_time >= stop:
        # not even the first step: no exit the launch sets can come before the kill
        return [*out, Diagnostic(TIME_LIMIT_SHORT,
                                 f"the time limit of {v.time_limit} (the run stops itself after "
                                 f"{exit_minutes(v.time_limit)} min) is shorter than the {start_up / 60:.0f} min a job is "
                                 f"given to start and its first step at the projected {step_time:.2f} s: it ends before it "
                                 "logs an iteration",
                                 help="raise `time_limit` (`--var time_limit=...`, `--campaign-var` for a campaign's jobs, "
                                      "or the site's)")]
    return [*out, Diagnostic(TIME_LIMIT_SHORT,
                       f"{iterations:,} iterations at the projected {step_time:.2f} s and {start_up / 60:.0f} min to "
                       f"start take about {needed / 3600:.2f} h, over the time limit of {v.time_limit}: the run stops "
                       f"itself after {exit_minutes(v.time_limit)} min (`{EXIT_SETTING}`), before the kill",
                       help="raise `time_limit` (`--var time_limit=...` or the site's), lower `train_iters`, or save "
                            "checkpoints (`--var checkpoint_dir=...`) and run it again from them")]


# a `tokenizer_model` Hugging Face reads as a Hub repository (`org/name`), and what lets a process fetch one
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_HUB_ACCESS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def tokenizer_warnings(space: Space, target: str, given: Mapping[str, str]) -> list[Diagnostic]:
    """W7027 when a Hub tokenizer is fetched by processes that see no token: a pod, whose environment
    is the manifest's, or a Docker or Podman container, which gets only the variables it is given."""
    _, launcher_cls = parse_target(target)
    v = resolve_variables(given, space.name, variable_defaults(space))
    if v.tokenizer_type == "NullTokenizer" or not _HUB_ID.fullmatch(v.tokenizer_model):
        return []
    site = space.site
    shown = {n for n, _ in site.values()} if site else set()  # the values the site sets itself
    if launcher_cls.NAME == "k8s":
        shown |= {name for name, _, _ in site.secret_list()} if site else set()
        where = "a pod sees only the environment its manifest gives it"
    elif v.container in ("docker", "podman"):
        shown |= set(site.forwarded()) if site else set()
        where = f"a {v.container} container sees only the variables it is given"
    else:
        return []
    if shown & set(_HUB_ACCESS):
        return []
    return [Diagnostic(HUB_TOKENIZER_NO_TOKEN,
                       f"the tokenizer `{v.tokenizer_model}` is fetched from the Hugging Face Hub at start, and {where}, "
                       "with no HF_TOKEN: a gated repository refuses the download and the run stops before its first step",
                       help="read the token from a Secret (`secrets = \"HF_TOKEN=hf-token/token\"`; in containers on Slurm "
                            "`env { HF_TOKEN = forward }`), or give a tokenizer folder on a mounted volume "
                            "(see `primusc explain W7027`)")]


def left_out(space: Space, cand: Candidate | Sequence[Candidate], target: str,
             context: EmitContext | None = None) -> list[Diagnostic]:
    """W7025 for each carried setting the launch of ``cand`` leaves out: its Megatron-LM refuses it beside the
    candidate's settings (``launch_rules``). Given several candidates (a campaign's jobs), one warning names
    every launch that leaves out the same settings for the same reason."""
    cands = [cand] if isinstance(cand, Candidate) else list(cand)
    fsdp2 = attrs.evolve(space.settings, target=target).torch_fsdp2
    said: dict[tuple[str, str], list[str]] = {}  # (what is left out, why) -> the launches' labels
    notes: dict[tuple[str, str], str] = {}
    for c in cands:
        framework, _, _ = _parts(space, c, target, context or EmitContext())
        for gone in framework.left_out:
            written = ", ".join(f"`{framework.setting_text(k, v)}`" for k, v in gone.settings)
            key = (written, f"Megatron-LM {gone.version} {gone.rule.says()}{_beside(gone, c, fsdp2)}")
            said.setdefault(key, []).append(f"`{c.label()}`")
            notes[key] = gone.rule.quoted(gone.version)
        for unrun in framework.left_unrun:
            key = (f"`{framework.setting_text(unrun.setting, unrun.value)}`", unrun.why)
            said.setdefault(key, []).append(f"`{c.label()}`")
            notes[key] = unrun.where
    out = []
    for (written, why), labels in said.items():
        whose = f"the launch of {labels[0]}" if len(labels) == 1 else \
            f"the launches of {', '.join(labels[:-1])} and {labels[-1]}"
        out.append(Diagnostic(RULE_LEFT_OUT, f"{whose} {'leaves' if len(labels) == 1 else 'leave'} out the recipe's "
                              f"{written}: {why}", notes=(notes[(written, why)],), help="see `primusc explain W7025`"))
    return out


def _beside(gone: LeftOut, cand: Candidate, fsdp2: bool) -> str:
    """What the launch has for the rule's other arguments, each with the knob that writes it: why the
    recipe's setting cannot stay (``, and this launch has `use_megatron_fsdp` false: `sharding = dist_opt```;
    ``fsdp2``: the target launches FSDP as torch FSDP2, which no `use_megatron_fsdp` says)."""
    said = []
    for dest, value in gone.beside:
        knob = spelling.knob_behind(dest)
        text = format_value(value) if value is not None else "unset"
        why = f"`{knob} = {format_value(getattr(cand, knob))}`" if knob and hasattr(cand, knob) else ""
        if knob == "sharding" and cand.sharding == "fsdp" and fsdp2:
            why += ", launched as torch FSDP2"
        said.append(f"`{dest}` {text}" + (f" ({why})" if why else ""))
    return f", and this launch has {', '.join(said)}" if said else ""


def unsupported(space: Space, cand: Candidate, target: str, context: EmitContext | None = None) -> list[str]:
    """What ``target`` cannot express of ``cand`` (empty: it can); ``emit`` refuses with these."""
    framework, launcher, _ = _parts(space, cand, target, context or EmitContext())
    return framework.unsupported() + launcher.unsupported()


def nearest_expressible(space: Space, cand: Candidate, target: str) -> Candidate | None:
    """``cand`` with the knob values the target would express it with (``Framework.repairs``), where those
    are knobs the space leaves at their defaults (a knob the space fixes or varies is the user's choice) and
    the result is legal and expressible; None otherwise. A Megatron-Bridge precision given by name gathers
    FP8 weights: an FP8 winner with the default `fp8_param_gather = false` is launched with it on."""
    framework, _launcher, _ = _parts(space, cand, target, EmitContext())
    written = {name for name, _ in space.fixed} | {a.name for a in space.axes}
    repairs = framework.repairs()
    if not repairs or set(repairs) & written:
        return None
    repaired = cand.replace(**repairs)
    try:
        refuse_illegal(space, repaired)
    except CompileError:
        return None
    return None if unsupported(space, repaired, target) else repaired


def emit(space: Space, cand: Candidate, target: str, context: EmitContext | None = None) -> dict[str, str]:
    """The launch files of ``cand`` for ``target`` (``megatron+slurm``, ...): file name -> text, written nowhere.
    Refuses an illegal candidate, and one the target cannot express (``CompileError``: P7001); it does not
    check memory: ``primusc emit`` refuses a point that does not fit (``memory.refuse_overflow``) but the
    space's own recipe."""
    ctx = context or EmitContext()
    framework_cls, launcher_cls = parse_target(target)
    target = f"{framework_cls.NAME}+{launcher_cls.NAME}"
    refuse_illegal(space, cand)
    framework, launcher, variables = _parts(space, cand, target, ctx)
    _refuse_unsupported(target, framework.unsupported() + launcher.unsupported())
    unknown = framework.unknown_fields()
    if unknown:
        raise CompileError([Diagnostic(BRIDGE_UNKNOWN_FIELD, p, help="see `primusc explain P7020`") for p in unknown])
    _refuse_missing(launcher)
    _refuse_site(space, launcher, variables)
    return _render(space, cand, target, ctx, framework, launcher, variables)


def _refuse_unsupported(target: str, problems: list[str]) -> None:
    if problems:
        raise CompileError([Diagnostic(
            UNSUPPORTED, f"target `{target}` cannot launch it: {p}" if NO_VERSION in p
            else f"target `{target}` cannot express {p}",
            help="a setting no Megatron-LM version has is mistyped (W7028 names the nearest) or another framework's "
                 "own: correct its name, emit to the target of the framework that reads it, or remove it from the "
                 "space's `passthrough` block (see `primusc explain P7001`)" if NO_VERSION in p
            else "see `primusc explain P7001`") for p in problems])


def _refuse_missing(launcher: Launcher) -> None:
    missing = launcher.missing()
    if missing:
        raise CompileError(
            [
                Diagnostic(BAD_VARIABLE, f"the {launcher.NAME} launcher needs variable `{name}`",
                           help=f"pass `--var {name}=...`")
                for name in missing
            ]
        )


def _refuse_site(space: Space, launcher: Launcher, variables: Variables) -> None:
    out = [Diagnostic(SITE_UNSUPPORTED, f"the {launcher.NAME} launcher cannot use site `{space.site.name}`: {p}",
                      space.site.span, help="see `primusc explain P7013`")
           for p in site_problems(space.site, launcher.NAME)] if space.site is not None else []
    if variables.data_path and variables.tokenizer_type == "NullTokenizer":
        out.append(Diagnostic(NULL_TOKENIZER, "the data path names real data, but the tokenizer is NullTokenizer",
                              help="pass `--var tokenizer_model=...` (or `--var tokenizer_type=...`)"))
    if out:
        raise CompileError(out)


def target_warnings(space: Space, target: str) -> list[Diagnostic]:
    """What ``emit`` writes as asked but a user should hear about: W7020 for a Bridge recipe's own
    settings another framework leaves out, W7021 for Bridge on AMD GPUs, W7001 for Primus on NVIDIA GPUs,
    W7023 for a site path that holds a shell variable."""
    from primus_lang.emit.bridge import bridge_passthrough

    framework, launcher = parse_target(target)
    unexpanded = _unexpanded(space)
    first: list[Diagnostic] = []
    if unexpanded:
        first = [Diagnostic(SITE_UNEXPANDED, f"the site's {unexpanded[0][0]} `{unexpanded[0][1]}` is written as it is: "
                           "the launch files quote every value, so the shell never expands `$` in it",
                           notes=tuple(f"{what} `{value}`" for what, value in unexpanded[1:]),
                           help="write the path itself (`/lustre/alice/data`), or `--var` it per user")]
    first += unknown_passthrough(space) + _rdma_warnings(space, launcher.NAME)
    dropped = primus_only(space)
    wandb = [k for k in dropped if k in WANDB_SETTINGS]
    if framework.NAME != "primus" and dropped:
        first.append(Diagnostic(PRIMUS_ONLY_DROPPED,
                                f"the {framework.NAME} target leaves out the Primus settings of the space's passthrough: "
                                f"{', '.join(k for k in dropped if k not in wandb)}",
                                notes=(f"and {', '.join(f'`{k}`' for k in wandb)}: the experiment turns Weights & Biases "
                                       "off (`disable_wandb`), and Megatron-LM stops at start on a project without an "
                                       "experiment name",) if wandb else (),
                                help="emit with `--target primus+...` to keep them (see `primusc explain W7024`)"))
    bridge_only = [k for k, _ in space.passthrough if bridge_passthrough(k) is not None]
    if framework.NAME != "bridge" and bridge_only:
        return [*first, Diagnostic(BRIDGE_ONLY_DROPPED,
                           f"the {framework.NAME} target leaves out the Megatron-Bridge settings of the space's "
                           f"passthrough: {', '.join(bridge_only)}",
                           help="emit with `--target bridge+...` to keep them (see `primusc explain W7020`)")]
    if framework.NAME == "bridge" and space.cluster.gpu.vendor == "amd":
        return [*first, Diagnostic(BRIDGE_ON_AMD,
                           f"Megatron-Bridge is launched from NVIDIA's NeMo containers; cluster `{space.cluster.name}` "
                           f"has AMD `{space.cluster.gpu.name}` GPUs",
                           help="use `--target primus+...` on AMD clusters (see `primusc explain W7021`)")]
    if framework.NAME == "primus" and space.cluster.gpu.vendor == "nvidia":
        return [*first, Diagnostic(PRIMUS_ON_NVIDIA,
                           f"Primus runs on AMD GPUs with ROCm; cluster `{space.cluster.name}` has NVIDIA "
                           f"`{space.cluster.gpu.name}` GPUs",
                           help="use `--target megatron+...` on NVIDIA clusters (see `primusc explain W7001`)")]
    return first


_RDMA_NETWORK = "k8s.v1.cni.cncf.io/networks"  # Multus: a pod's secondary (RDMA) network


def _rdma_warnings(space: Space, launcher: str) -> list[Diagnostic]:
    """W7029 when pods of a Kubernetes job of several nodes would see no RDMA NIC: no device plugin's
    resource and no Multus network."""
    if launcher != "k8s" or space.cluster.nodes <= 1:
        return []
    site = space.site
    if site is not None and (site.rdma_resource or any(k == _RDMA_NETWORK for k, _ in site.annotation_list())):
        return []
    return [Diagnostic(K8S_NO_RDMA, f"the {space.cluster.nodes} pods of this Kubernetes job ask for no RDMA device "
                       "and name no RDMA network: NCCL/RCCL would carry the traffic between nodes over TCP sockets",
                       help="set the site's `rdma_resource` (its device plugin's, e.g. "
                            "`\"rdma/rdma_shared_device_a\"`) or its Multus network annotation "
                            "(see `primusc explain W7029`)")]


def unknown_passthrough(space: Space) -> list[Diagnostic]:
    """W7028 for each passthrough name no Megatron-LM release primusc has read and no Primus preset has (a
    Megatron-Bridge field, `bridge__...`, is Bridge's to judge), with the nearest known name. A space
    imported from a Primus experiment is not judged: Primus's code reads settings of its own that no
    preset lists (its MLPerf and diffusion switches), which its experiments carry."""
    import difflib

    from primus_lang.emit.bridge import bridge_passthrough

    if space.settings.source_target.replace(" ", "").startswith("primus+"):
        return []
    known = megatron.known_names() | primus.own_settings()
    out = []
    for name, _ in space.passthrough:
        if name in known or bridge_passthrough(name) is not None:
            continue
        near = difflib.get_close_matches(name.lower(), sorted(known), n=1, cutoff=0.75)
        out.append(Diagnostic(PASSTHROUGH_UNKNOWN, f"passthrough `{name}` is no Megatron-LM argument of any release "
                              "primusc has read, nor a Primus setting: Megatron-LM stops at start on it, Primus drops "
                              "it without a word",
                              help=f"did you mean `{near[0]}`?" if near else
                              "check its spelling (`primusc explain W7028`)"))
    return out


def _unexpanded(space: Space) -> list[tuple[str, str]]:
    """The site's paths that hold a shell variable (`/lustre/$USER/data`), which no launch expands."""
    site = space.site
    if site is None:
        return []
    paths = [(f"`{name}`", getattr(site, name)) for name in ("data_root", "checkpoint_root", "megatron_dir",
                                                            "primus_dir", "bridge_dir", "preamble", "image")]
    paths += [(f"mount `{m.name}`", m.host) for m in site.mounts if m.host]
    return [(what, value) for what, value in paths if "$" in value]


def check_target(space: Space, target: str, given: Mapping[str, str]) -> None:
    """What ``emit`` refuses whatever the candidate: an unknown target, a model the framework cannot
    build, an unknown or malformed variable, one the launcher needs and was not given. ``plan`` asks
    before it searches."""
    framework_cls, launcher_cls = parse_target(target)
    _refuse_unsupported(f"{framework_cls.NAME}+{launcher_cls.NAME}",
                        framework_cls.model_problems(space.model, space.passthrough))
    variables = resolve_variables(given, space.name, variable_defaults(space))
    launcher = launcher_cls(space.cluster, variables, space.site)
    _refuse_missing(launcher)
    _refuse_site(space, launcher, variables)


def _deterministic(space: Space, framework: Framework) -> bool:
    """Whether the launch runs in deterministic mode: the recipe's setting, unless the launch leaves it
    out (W7025: Megatron-LM refuses it beside flash attention), when its environment is not wanted either."""
    left = {k for out in framework.left_out for k, _ in out.settings} | {u.setting for u in framework.left_unrun}
    return any(k in DETERMINISTIC_SETTINGS and v is True and k not in left for k, v in space.passthrough)


def _render(
    space: Space,
    cand: Candidate,
    target: str,
    ctx: EmitContext,
    framework: Framework,
    launcher: Launcher,
    variables: Variables,
) -> dict[str, str]:
    cluster = space.cluster
    values: dict[str, Any] = {
        "header": _header(space, cand, target, ctx),
        "v": variables,
        "nodes": cluster.nodes,
        "gpus_per_node": cluster.gpus_per_node,
        "world": cluster.world,
        "vendor": cluster.gpu.vendor,
        "collective": collective_library(cluster),
        "env": environment(cluster, cand, space.site, deterministic=_deterministic(space, framework)),
        "site": space.site,
        "deadline_seconds": ctx.deadline_seconds,
        "program_template": framework.PROGRAM_TEMPLATE,
        "prepare_template": framework.PREPARE_TEMPLATE,
        "framework": framework.NAME,
    }
    values.update(framework.render_values())
    files: dict[str, str] = {}
    for path, template in framework.TEMPLATES.items():
        files[path] = render(template, **values)
    files[NODE_SCRIPT] = render("common/node.sh.j2", **values)
    values["files"] = dict(files)
    for path, template in launcher.TEMPLATES.items():
        files[path] = render(template, **values)
    files[MANIFEST] = manifest(space, cand, target, ctx, variables, files, launcher)
    return dict(sorted(files.items()))


def manifest(
    space: Space,
    cand: Candidate,
    target: str,
    ctx: EmitContext,
    variables: Variables,
    files: dict[str, str],
    launcher: Launcher,
) -> str:
    data = {
        "primusc_version": ctx.primusc_version,
        "source": {"file": ctx.source_name, "sha256": ctx.source_sha256},
        "target": target,
        "space": space.name,
        "model": space.model.name,
        "cluster": {"name": space.cluster.name, "nodes": space.cluster.nodes,
                    "gpus_per_node": space.cluster.gpus_per_node, "gpu": space.cluster.gpu.name},
        "candidate": to_data(cand),
        "label": cand.label(),
        "projection": ctx.projection,
        "memory": ctx.memory,
        "variables": attrs.asdict(variables),
        "files": {
            path: {"sha256": hashlib.sha256(text.encode()).hexdigest(), "executable": path in launcher.EXECUTABLE}
            for path, text in sorted(files.items())
        },
    }
    return json.dumps(data, indent=2, ensure_ascii=True) + "\n"
