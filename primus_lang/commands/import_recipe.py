"""``primusc import-recipe FILE``: a Megatron-LM command line or a Primus experiment becomes a space
whose baseline is that recipe, with axes around it and what primusc does not model carried through."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from primus_lang.commands._options import natural
from primus_lang.diagnostics import CompileError, Diagnostic, render
from primus_lang.diagnostics.codes_import import (
    OUTPUT_EXISTS,
    RECIPE_CONTRADICTION,
    RECIPE_ILLEGAL,
    RECIPE_MISSING,
)
from primus_lang.diagnostics.codes_legality import BATCH_DIVISIBILITY, MXFP8_NEEDS_MX
from primus_lang.frameworks import spelling

if TYPE_CHECKING:
    from primus_lang.check import Violation
    from primus_lang.ir import Candidate, Model, Space
    from primus_lang.recipes import Imported, Recipe


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "import-recipe",
        help="write a space (.prx) whose baseline is a Megatron-LM command line, a Megatron-Bridge launch "
        "or a Primus experiment",
        description="Read a Megatron-LM command line or arguments file, a Megatron-Bridge launch (run_recipe.py "
        "--recipe NAME and its overrides), or a Primus experiment YAML (nothing "
        "is run), and write a space: the model card, the cluster, the recipe as its baseline, axes around it, "
        "and the settings primusc does not model carried through to emission.",
    )
    p.add_argument("recipe", help="the launch script, the flags file, or the Primus experiment YAML")
    p.add_argument("--nodes", type=natural, help="nodes, where the recipe does not say (torchrun's --nnodes)")
    p.add_argument("--gpus-per-node", type=natural, help="GPUs per node, where the recipe does not say")
    p.add_argument("--vocab-size", type=natural, default=None,
                   help="the vocabulary, where the recipe's tokenizer hides it and no stdlib card has the model")
    p.add_argument("--gpu", help="the GPU profile (stdlib hardware name: mi300x, mi325x, mi355x, h100, h200, b200, ...)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="given",
                   help="a value the script reads from its environment or arguments, or sets itself (`--set TP=4` "
                   "holds over the script's own `TP=2`; `--set 1=/data` for its first argument, `--set PRIMUS_TP=2` "
                   "for a Primus `${PRIMUS_TP:1}`); repeatable")
    p.add_argument("--megatron-version", choices=_megatron_versions(),
                   help="the Megatron-LM release the command line runs on (default: core_v0.16, or the release "
                   "its flags need)")
    p.add_argument("--primus-version", choices=_primus_versions(),
                   help="the Primus release the experiment runs on (default: v26.5)")
    p.add_argument("--bridge-version", choices=_bridge_versions(),
                   help="the Megatron-Bridge release the launch runs on (default: v0.6)")
    p.add_argument("--name", help="the space's name (default: from the file's name)")
    p.add_argument("--out", help="write the space here instead of standard output")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    p.set_defaults(func=run)


def _megatron_versions() -> tuple[str, ...]:
    from primus_lang.frameworks import megatron

    return megatron.releases()


def _primus_versions() -> tuple[str, ...]:
    from primus_lang.frameworks import primus

    return primus.version_names()


def _bridge_versions() -> tuple[str, ...]:
    from primus_lang.frameworks import bridge

    return bridge.version_names()


def _given(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[1-9][0-9]?", name):
            raise CompileError(Diagnostic(RECIPE_MISSING, f"`--set {pair}` is not NAME=VALUE",
                                          help="a variable's name, `=`, and its value (`--set TP=4`; `--set 1=PATH` "
                                          "for the script's first argument)"))
        out[name] = value
    return out


def _recipe_help(v: Violation, kind: str) -> str:
    help_ = v.help or f"`primusc explain {v.code}` says why"
    if v.code == BATCH_DIVISIBILITY.id:
        # a recipe's global batch is its own choice, which the rule's help (written for a space) leaves alone
        help_ += "; or give the recipe another global batch (its `global_batch_size` or `--global-batch-size`)"
    if v.code == MXFP8_NEEDS_MX.id:
        # Megatron-Bridge names some Blackwell MXFP8 recipes after the H100 layout they start from
        # (gpt_oss_20b_pretrain_16gpu_h100_fp8mx_config: "GPT-OSS 20B with Blackwell MXFP8")
        help_ = "the recipe runs MXFP8, which needs Blackwell or CDNA 4: give the GPU it runs on (`--gpu b200`)"
    # the rule's help names knobs as a space writes them; a user holding a recipe writes the recipe's own
    named = [k for k in dict.fromkeys(re.findall(r"\b[a-z][a-z_]+\b", help_)) if k in spelling.KNOBS]
    written = {k: _as_written(spelling.KNOBS[k], kind) for k in named if spelling.KNOBS[k] != k}
    said = [f"`{k}` is {w}" for k, w in written.items() if w]
    return help_ + (f" (in the recipe, {', '.join(said)})" if said else "")


def _as_written(dest: str, kind: str) -> str:
    """A Megatron setting as a recipe of ``kind`` writes it: a flag, a Primus key, a Bridge field."""
    if kind == "primus":
        return f"`{dest}`"
    if kind == "bridge":
        from primus_lang.emit import paths

        return " or ".join(f"`{p}`" for p in paths(dest))
    return f"`--{dest.replace('_', '-')}`"


def _name(path: str) -> str:
    stem = Path(path).name.split(".")[0] if not Path(path).name.startswith(".") else "recipe"
    name = re.sub(r"[^a-z0-9]+", "_", Path(path).stem.lower()).strip("_") or stem or "recipe"
    return name if name[0].isalpha() else "r_" + name


# GPUs in a node where the recipe does not say: NVL72 trays hold 4, every other stdlib node 8
_GPUS_PER_NODE = {"gb200": 4, "gb300": 4}
_MOST_NODES = 4096


def _spare(space: Space, cand: Candidate) -> int:
    """Bytes ``cand`` leaves free on the fullest rank of ``space``'s cluster (negative: over by that
    many), by primusc's account."""
    from primus_lang.memory import account

    return account(space.model, space.cluster, cand, space.settings).spare(space.headroom)


def _fits(space: Space, cand: Candidate) -> bool:
    return _spare(space, cand) >= 0


def _fewest_nodes(cand: Candidate, gpus: int,
                  space_of: Callable[[int], tuple[Space, Candidate]]) -> tuple[int, str]:
    """The fewest nodes on which the recipe's layout is legal and its baseline fits in memory, else the
    legal count on which it comes closest to fitting (the fewest of those that come as close): a recipe
    that does not say its node count ran on some count, and the smallest that holds it is the one a
    user reads it for; a 671B model's placeholder count is not read as one node."""
    from primus_lang.check import legality

    model_parallel = cand.tp * cand.pp * cand.cp
    legal: int | None = None
    first: int | None = None
    fewest_broken = 0
    tried = 0
    last = 0
    closest, most_spare = 0, 0
    for n in range(1, _MOST_NODES + 1):
        world = n * gpus
        if world % model_parallel or cand.gbs % (cand.mbs * (world // model_parallel)):
            continue
        tried += 1
        if tried > 64:
            break
        space, baseline = space_of(n)
        broken = len(legality(space, baseline))
        if first is None or broken < fewest_broken:
            # the count that breaks fewest rules: what is still broken there no node count mends
            first, fewest_broken = n, broken
        if broken:
            continue
        legal, last = legal or n, n
        spare = _spare(space, baseline)
        if spare >= 0:
            return n, "the fewest on which its layout is legal and it fits in memory"
        if not closest or spare > most_spare:
            closest, most_spare = n, spare
    if legal is None:
        if first is None:
            raise CompileError(Diagnostic(RECIPE_MISSING, "the recipe does not say how many nodes, and no count up "
                                          f"to {_MOST_NODES:,} divides its batch over its layout", help="pass `--nodes N`"))
        return first, ""  # a rule no node count mends: the caller reports it at the setting that breaks it
    # written where its layout starts (a Primus example is a one-node file that names no count); `project
    # --point baseline` and `emit` take the recipe with W5002 where the account says it does not fit
    counted = f"the one count its batch allows ({legal} node{'s' if legal > 1 else ''})" if legal == last else \
        f"any count tried ({legal} to {last} nodes)"
    chosen = "the fewest on which its layout is legal" if closest == legal else \
        "the legal count on which it comes closest to fitting"
    return closest, (f"{chosen}; by primusc's account its baseline does not fit in memory on {counted}, so the "
                     "account overcounts it or the run needs another count")


def _idle(cand: Candidate, world: int) -> str:
    """What the chosen count leaves a pipeline, where it is fewer micro-batches than stages: most of each
    step is then the pipeline's fill and drain, which a recipe that names no node count rarely meant."""
    dp = world // (cand.tp * cand.pp * cand.cp)
    micro = cand.gbs // (cand.mbs * dp) if dp else 0
    if cand.pp <= 1 or micro >= cand.pp:
        return ""
    return (f"; there the batch gives each pipeline {micro} micro-batch{'es' if micro != 1 else ''} for {cand.pp} "
            f"stages, a bubble of {(cand.pp - 1) / (micro + cand.pp - 1):.0%} of the step: check the count the recipe "
            "was run on")


def _count(given: int | None, entry: Any, what: str, flag: str, default: int | None = None,
           set_instead: Callable[[int, int], str] | None = None) -> int:
    """The count ``flag`` gives or the recipe's ``entry`` states (they must agree), else ``default``;
    ``set_instead(stated, given)`` says how else to give it where the two disagree."""
    from_recipe = None
    if entry is not None:
        text = str(entry.value)
        if not (text.isascii() and text.isdigit()) or int(text) < 1:  # `²` passes isdigit() alone
            raise CompileError(Diagnostic(RECIPE_MISSING, f"`{entry.written}` is `{text}`, not a count primusc can "
                                          "read", span=entry.span, help=f"pass `{flag}`"))
        from_recipe = int(text)
    if given is not None and given < 1:
        raise CompileError(Diagnostic(RECIPE_MISSING, f"`{flag}` is {given}, expected at least 1"))
    if from_recipe is not None and given is not None and given != from_recipe:
        if entry.span is None:
            # a count the recipe implies (a Bridge recipe's name, `..._2gpu_...`), written nowhere
            raise CompileError(Diagnostic(
                RECIPE_CONTRADICTION, f"`{flag} {given}` contradicts the recipe's {what}, {from_recipe} "
                f"({entry.written})",
                help=f"drop `{flag}` to import the recipe as it runs, then plan it on more GPUs by changing the "
                     "cluster's `nodes` and `gpus_per_node` in the space written; or import a recipe written for "
                     "that many GPUs"))
        other = f"; {set_instead(from_recipe, given)}" if set_instead is not None else ""
        raise CompileError(Diagnostic(RECIPE_CONTRADICTION, f"`{flag} {given}` contradicts the recipe's "
                                      f"`{entry.written} {from_recipe}`", span=entry.span,
                                      help=f"drop `{flag}`, or change the recipe{other}"))
    value = from_recipe if from_recipe is not None else given if given is not None else default
    if value is None:
        raise CompileError(Diagnostic(RECIPE_MISSING, f"the recipe does not say the {what}",
                                      help=f"pass `{flag} N`"))
    return value


def build(args: argparse.Namespace) -> tuple[str, list[str], list[Diagnostic]]:
    """The space's text, the lines of the summary, and the warnings."""
    import attrs

    from primus_lang.check import baseline_point, legality, never_legal
    from primus_lang.frameworks import primus
    from primus_lang.ir.model import card_fields
    from primus_lang.ir.site import credential
    from primus_lang.lower import loads_program, stdlib_cards
    from primus_lang.recipes import (
        ReadOptions,
        find_card,
        interpret,
        knob_text,
        match_shape,
        neighbour_notes,
        null_tokenizer_extra,
        passthrough_keys_ok,
        primus_card_name,
        read_recipe,
        render_space,
    )

    recipe = read_recipe(args.recipe, ReadOptions(_given(args.given), args.megatron_version, args.primus_version,
                                                      args.bridge_version))
    cards = stdlib_cards()
    card: tuple[str, str, dict[str, Any]] | None = None
    base: dict[str, Any] | None = None  # what interpret reads beside a command line: the card's, the vocabulary
    if recipe.kind == "bridge":
        # the recipe names its model: Bridge builds it from the card's Hugging Face config
        assert recipe.card is not None
        module, model = cards[recipe.card.value]
        card = (module, recipe.card.value, card_fields(model))
        imp = interpret(recipe, card[2], fill_all=True)
    else:
        # a command line states the whole model; a Primus experiment's presets do (merged as Primus does):
        # a stdlib card of the same shape supplies only what a tokenizer hides, the vocabulary
        shape = interpret(recipe, require_vocab=False)
        # the card a Primus experiment names, where its shape is the experiment's (cards of one shape
        # differ in what a tokenizer hides: Llama 2 70B and Llama 3.1 70B), else the first of its shape
        # (a preset that extends another names a variant of its model: Llama 3.3 70B's is Llama 3 70B's)
        named = [n for p in primus.lineage("models", recipe.card.value, recipe.version)
                 if (n := find_card(primus_card_name(p), cards)) is not None] \
            if recipe.kind == "primus" and recipe.card is not None else []
        extra = null_tokenizer_extra(recipe)
        found = next((n for n in named if match_shape(shape.model, {n: cards[n]}, extra)), None)
        found = found or match_shape(shape.model, cards, extra) or next(iter(named), None)
        if found is not None:
            module, model = cards[found]
            card = (module, found, card_fields(model))
        # a vocabulary the command line gives, else the tokenizer's where it is a stdlib card's model's
        given: dict[str, int] = {"vocab": args.vocab_size} if args.vocab_size else {}
        vocab_notes: list[str] = []
        if not given and not shape.stated & {"vocab"}:
            given, vocab_notes = _tokenizer_vocab(recipe, cards, card[2].get("vocab") if card else None)
        base = {**(card[2] if card else {}), **given} or None
        imp = interpret(recipe, base)
        recipe = attrs.evolve(recipe, notes=(*recipe.notes, *vocab_notes))
    notes = list(recipe.notes) + _preset_tokenizer(recipe, imp.model, cards)
    notes += _newest_reading(args, recipe, imp, base)
    if args.megatron_version and recipe.kind != "megatron":
        pins = "the megatron-core its release pins (`--bridge-version` chooses the release)" \
            if recipe.kind == "bridge" else "the Megatron-LM its release pins (`--primus-version` chooses the release)"
        notes.append(f"`--megatron-version {args.megatron_version}` names the Megatron-LM a command line is read at; "
                     f"a {recipe.kind.capitalize()} recipe runs {pins}; a megatron-target launch of the space takes "
                     f"`--var megatron_version={args.megatron_version}`")
    secrets = [k for k, _ in recipe.env if credential(k)]
    if secrets:
        notes.append(f"{', '.join(f'`{k}`' for k in secrets)}: a credential the script exports, not written into the "
                     "space or its launch files (they are shared and committed); export it in the environment that "
                     "submits the job, which Slurm passes on (a Kubernetes job takes it from a Secret)")
    if card is not None and (dropped := _dropped_blocks(imp.model, card[2])):
        # a card derived from another cannot take a block away: the recipe's model is written whole
        notes.append(f"the recipe's model has no {' or '.join(dropped)} block, which the stdlib card `{card[1]}` has: "
                     "the space writes a card of its own")
        card = None
    gpu = (args.gpu or recipe.gpu_hint or _gpu_in_name(args.recipe)).lower()
    if not gpu:
        raise CompileError(Diagnostic(RECIPE_MISSING, "the recipe does not say which GPU it runs on",
                                      help="pass `--gpu NAME` (mi300x, mi325x, mi355x, h100, h200, b200, ...)"))
    vendor = "amd" if gpu.startswith("mi") else "nvidia"
    if not _stdlib_has(vendor, gpu):
        known = _stdlib_gpus(vendor)
        said = f"`--gpu {gpu}`" if args.gpu else f"the recipe is written for `{gpu}`, which"
        raise CompileError(Diagnostic(RECIPE_MISSING, f"{said} has no GPU profile in the stdlib "
                                      f"(`hardware.{vendor}`: {', '.join(known)})",
                                      help="pass `--gpu NAME` to plan the recipe on one of them, or write the "
                                      f"space's cluster over a profile of your own (`gpu {gpu} {{ ... }}`, "
                                      "docs/stdlib.md)"))
    if not (args.gpu or recipe.gpu_hint):
        notes.append(f"the GPU, {gpu}, is the one the file's name names (`--gpu` chooses another)")
    gpus = _count(args.gpus_per_node, recipe.gpus_per_node, "GPUs per node", "--gpus-per-node",
                  default=_GPUS_PER_NODE.get(gpu, 8))
    if args.gpus_per_node is None and recipe.gpus_per_node is None:
        notes.append(f"{gpus} GPUs a node, as a {gpu} node holds (`--gpus-per-node` chooses)")
    nodes = _count(args.nodes, recipe.nodes, "number of nodes", "--nodes", default=0,
                   set_instead=lambda stated, wanted: _node_variable(recipe, stated, wanted))
    bad_keys = passthrough_keys_ok(imp)
    if bad_keys:
        raise CompileError(Diagnostic(RECIPE_CONTRADICTION, f"`{bad_keys[0]}` cannot be written as a passthrough "
                                      "field (a keyword of the language)"))
    target = {"primus": "primus+slurm", "bridge": "bridge+slurm"}.get(recipe.kind, "megatron+slurm")
    name = args.name or _name(args.recipe)
    notes += [n for n in imp.notes if n not in notes]
    if recipe.kind == "bridge":
        # what primusc did not record of a Bridge recipe is the recipe's own choice, not Megatron's default
        notes += [f"`{k}` is left to the recipe (`{k} = flash`: Transformer Engine picks a memory-efficient kernel)"
                  if k == "attention" else f"`{k}` is not recorded for the recipe; Megatron's default is assumed"
                  for k in imp.assumed]
    else:
        notes += [f"`{k}` is Megatron's default, which the recipe leaves unset" for k in imp.assumed]
    def space_of(count: int, said: list[str],
                 left_out: dict[str, list[str]] | None = None) -> tuple[str, Space, Candidate]:
        text = render_space(imp, name, card, (vendor, gpu), count, gpus, target, said, recipe.version, left_out)
        space = loads_program(text, f"<space from {args.recipe}>").spaces[0]
        cand = baseline_point(space)
        assert cand is not None
        return text, space, cand

    one_node = ""
    if not nodes and recipe.kind == "primus" and not legality(*(single := space_of(1, notes)[1:])):
        # Primus's launchers (examples/run_pretrain.sh, run_slurm_pretrain.sh) run one node unless NNODES
        # says otherwise: its example experiments are one-node runs, unless one node cannot hold the model
        if _fits(*single):
            nodes = 1
            notes.append("the experiment does not say how many nodes: 1, as Primus's launchers run it unless NNODES "
                         "says otherwise (`--nodes` chooses)")
        else:
            one_node = " (Primus's launchers run one node unless NNODES says otherwise, on which it does not fit)"
    if not nodes:
        nodes, why = _fewest_nodes(imp.candidate, gpus, lambda n: space_of(n, notes)[1:])
        if why:
            notes.append(f"the {'experiment' if recipe.kind == 'primus' else 'recipe'} does not say how many nodes: "
                         f"{nodes}, {why}{_idle(imp.candidate, nodes * gpus)}"
                         f"{one_node if nodes > 1 else ''} (`--nodes` chooses)")
    notes += neighbour_notes(imp, gpus, nodes * gpus)
    text, space, cand = space_of(nodes, notes)
    violations = legality(space, cand)
    if violations:
        elsewhere: tuple[str, ...] = ()
        if args.nodes is None and recipe.nodes is not None and recipe.kind == "megatron":
            # a script that reads its node count from the scheduler (`${SLURM_NNODES:-1}`) said its default
            other, why = _fewest_nodes(imp.candidate, gpus, lambda n: space_of(n, notes)[1:])
            if why and other != nodes:
                elsewhere = (f"on {other} nodes it starts ({why}); the recipe's `{recipe.nodes.written}` gave "
                             f"{nodes}: {_node_variable(recipe, nodes, other)}",)
        # a `--set` that changed nothing is often why the recipe still breaks the rule
        unread = tuple(n for n in recipe.notes if n.startswith("`--set "))
        raise CompileError([Diagnostic(RECIPE_ILLEGAL, f"the recipe breaks a Megatron rule: {v.message}",
                                       span=_span_for(v, imp.knob_spans),
                                       notes=elsewhere + _mtp_source(recipe, v.message) + unread,
                                       help=_recipe_help(v, recipe.kind))
                            for v in violations])
    # an axis value around the recipe that no point can take (TP beside EP 8 on 8 GPUs) would only
    # be a line in `check`'s report: the space does not offer it, and says so
    unusable: dict[str, list[Any]] = {}
    first_code: dict[str, str] = {}
    for axis, value, code, *_ in never_legal(space):
        unusable.setdefault(axis, []).append(value)
        first_code.setdefault(axis, code)
    if unusable:
        notes += [_unusable_note(space, axis, values, first_code[axis]) for axis, values in unusable.items()]
        text, space, cand = space_of(nodes, notes, {a: [knob_text(a, v) for v in vs] for a, vs in unusable.items()})
    summary = [f"space `{name}`: {args.recipe} ({recipe.kind})",
               f"  model    {'stdlib card `' + card[1] + '`' if card else 'a new card from the flags'}"
               + (f", overriding {', '.join(sorted(_overrides(imp.model, card[2])))}" if card and _overrides(imp.model, card[2]) else ""),
               f"  cluster  {nodes} x {gpus} {gpu}",
               f"  baseline {cand.label()}"]
    if recipe.placement:
        summary.append(f"  site     {recipe.placement.carried()}")
    if imp.passthrough:
        summary.append(f"  carried through unchanged ({len(imp.passthrough)}): "
                       + ", ".join(k for k, _ in imp.passthrough))
    summary += [f"  note: {n}" for n in notes]
    # a count the recipe's name implies (a Bridge recipe's `_2gpu_`) is the recipe's: `--nodes` cannot change it
    implied = recipe.nodes.written if recipe.nodes is not None and recipe.nodes.span is None else ""
    return text, summary, list(recipe.warnings) + _over_memory(space, cand, nodes, implied)


def _over_memory(space: Space, cand: Candidate, nodes: int, implied: str = "") -> list[Diagnostic]:
    """W5002 where the written baseline does not fit by the account: said beside the warnings, where a
    note among a dozen was missed (Megatron-LM's Megatron-FSDP DeepSeek-V3 script, on 1 node)."""
    from primus_lang.diagnostics.codes_memory import RECIPE_OVER_MEMORY
    from primus_lang.memory import account, explain_overflow

    acc = account(space.model, space.cluster, cand, space.settings)
    # the GPU's whole memory, not the space's headroom: a recipe that runs within a few GiB of it
    # (Megatron-LM's Llama 3 8B FP8 H100 example, 78.6 of 79.6 GiB) is no evidence of an overcount
    if acc.fits(0.0):
        return []
    over = explain_overflow(acc, 0.0)
    return [Diagnostic(RECIPE_OVER_MEMORY, f"the recipe does not fit on {nodes} node{'s' if nodes > 1 else ''} by "
                       f"primusc's account: {over.message}", notes=over.notes,
                       help="if it runs as it is, the account overcounts it (`primusc check SPACE --explain --point "
                            "baseline` lists its terms); else " + (
                                f"plan it on more GPUs by changing the cluster's `nodes` in the space written (the "
                                f"count is {implied}, which `--nodes` cannot change)" if implied
                                else "give the node count it runs on (`--nodes`)"))]


def _unusable_note(space: Space, axis: str, values: list[Any], code: str) -> str:
    """Why no legal point takes these values of ``axis``: the rule every point with the first of them
    breaks (``code``, from ``never_legal``), as it reads at the first such point."""
    from primus_lang.check import never_legal_why
    from primus_lang.ir.candidate import format_value

    them = "it" if len(values) == 1 else "them"
    head = f"`{axis}` {', '.join(format_value(v) for v in values)} not offered: no legal point takes {them}"
    return f"{head} ({never_legal_why(space, axis, values[0], code) or f'the checks rule {them} out together'})"


# a GPU a recipe's file or folder names (`train_llama3_8b_h100_fp8.sh`, `configs/MI355X/...`), newest first
_GPU_IN_NAME = re.compile(r"(?<![a-z0-9])(gb300|gb200|b300|b200|h200|h100|a100[_-]40gb|a100|mi355x|mi350x|mi325x|mi300x)"
                          r"(?![a-z0-9])")


def _stdlib_has(vendor: str, gpu: str) -> bool:
    """Whether the stdlib's ``hardware.VENDOR`` gives a GPU of that name (its own or one it imports)."""
    from primus_lang.lower import loads_program

    try:
        loads_program(f"import hardware.{vendor} ({gpu})\n", "<gpu>")
    except CompileError:
        return False
    return True


def _stdlib_gpus(vendor: str) -> tuple[str, ...]:
    """The GPU profiles the stdlib's ``hardware.VENDOR`` defines, by name."""
    from primus_lang.lower import load_program
    from primus_lang.resources import data_dir

    return tuple(g.name for g in load_program(str(data_dir("stdlib") / "hardware" / f"{vendor}.prx")).gpus)


def _gpu_in_name(path: str) -> str:
    m = _GPU_IN_NAME.search(str(path).lower())
    return m.group(1).replace("-", "_") if m is not None else ""


def _newest_reading(args: argparse.Namespace, recipe: Recipe, imp: Imported, card: dict[str, Any] | None) -> list[str]:
    """A note where the newest Megatron-LM release reads the command line otherwise than the release it was
    read at (the default, or the oldest that has its flags): a flag's meaning can change between releases
    (`--megatron-fsdp-main-grads-dtype bf16` keeps FP32 main gradients at core_v0.17, BF16 ones at
    core_v0.19), and a user launching today's release should know which reading the space holds."""
    import attrs

    from primus_lang.frameworks import megatron
    from primus_lang.ir.candidate import format_value
    from primus_lang.recipes import ReadOptions, interpret, read_recipe

    newest = megatron.releases()[-1]
    if recipe.kind != "megatron" or args.megatron_version or recipe.version == newest:
        return []
    try:
        theirs = interpret(read_recipe(args.recipe, ReadOptions(_given(args.given), newest)), card)
    except CompileError:
        return []  # a flag the newest release dropped: its own refusal, when asked for it
    changed = [f"`{f.name}` {format_value(getattr(theirs.candidate, f.name))}" for f in attrs.fields(type(imp.candidate))
               if getattr(theirs.candidate, f.name) != getattr(imp.candidate, f.name)]
    changed += [f"the model's `{k}` {theirs.model.get(k)!r}" for k in sorted(set(imp.model) | set(theirs.model))
                if imp.model.get(k) != theirs.model.get(k)]
    if not changed:
        return []
    return [f"read at Megatron-LM {recipe.version}; {newest} reads the command line otherwise: {', '.join(changed)} "
            f"(`--megatron-version {newest}` plans that reading)"]


def _tokenizer_vocab(recipe: Recipe, cards: dict[str, tuple[str, Model]],
                     vocab: int | None) -> tuple[dict[str, int], list[str]]:
    """The vocabulary a recipe's tokenizer gives its model, where the tokenizer's files are a stdlib card's
    model's (its Hugging Face repository): Megatron sizes the embedding and the output layer by the tokenizer.
    Taken where no vocabulary is known (Primus's Grok-1 preset tokenizes with Mixtral's), and where a tokenizer
    the launch carries gives another than the card's (Primus's MLPerf gpt-oss experiment tokenizes with Llama
    3.1's 128,256 tokens over gpt-oss's card of 201,088); a preset's tokenizer is not carried, so the card's
    vocabulary stands beside it (``_preset_tokenizer`` says so)."""
    from primus_lang.recipes import tokenizer_card

    tokenizer, files = recipe.entries.get("tokenizer_type"), recipe.entries.get("tokenizer_model")
    if tokenizer is None or files is None or not isinstance(files.value, str) or str(tokenizer.value).startswith("Null"):
        return {}, []
    other = tokenizer_card(files.value, cards)
    if other is None:
        return {}, []
    theirs = cards[other][1].vocab
    if vocab is None:
        return {"vocab": theirs}, [f"the vocabulary is the tokenizer's, `{files.value}`: {theirs:,} tokens as the stdlib "
                                   f"card `{other}` has them (`--vocab-size` gives another)"]
    if tokenizer.preset or theirs == vocab:
        return {}, []
    return {"vocab": theirs}, [f"the recipe's tokenizer `{tokenizer.value}` (`{files.value}`), which the launch carries, "
                               f"sizes the embedding and the output layer: read as {theirs:,} tokens as the stdlib card "
                               f"`{other}` has them, not the model card's {vocab:,} (`--vocab-size` gives another)"]


def _preset_tokenizer(recipe: Recipe, model: dict[str, Any], cards: dict[str, tuple[str, Model]]) -> list[str]:
    """A note where a Primus model preset tokenizes with another vocabulary than the space's model has: the
    preset's tokenizer is not carried (the launch runs mock data's NullTokenizer over the card's vocabulary),
    and the vocabulary sizes the embedding and the output layer (Primus's gpt_oss_20B preset tokenizes with
    DeepSeek-V2-Lite's 102,400 tokens where gpt-oss's card has 201,088)."""
    from primus_lang.recipes import tokenizer_card

    tokenizer, files = recipe.entries.get("tokenizer_type"), recipe.entries.get("tokenizer_model")
    vocab = model.get("vocab")
    if recipe.kind != "primus" or tokenizer is None or not tokenizer.preset or files is None \
            or not isinstance(files.value, str) or str(tokenizer.value).startswith("Null") or not isinstance(vocab, int):
        return []
    other = tokenizer_card(files.value, cards)
    theirs = cards[other][1].vocab if other is not None else vocab
    if theirs == vocab:
        return []
    return [f"the model preset tokenizes with `{tokenizer.value}` (`{files.value}`, {theirs:,} tokens as "
            f"the stdlib card `{other}` has them), which the launch does not carry: it runs mock data's NullTokenizer "
            f"over the model's vocabulary of {vocab:,}, so its embedding and output layer are "
            f"{'larger' if vocab > theirs else 'smaller'} than Primus's run had (`--vocab-size` chooses another; `--var tokenizer_type=... --var "
            "tokenizer_model=...` launches with the tokenizer)"]


def _dropped_blocks(model: dict[str, Any], base: dict[str, Any]) -> list[str]:
    """The blocks (``mla``, ``moe``, ``mamba``) ``base`` has and ``model`` turns off (a Primus experiment's
    ``multi_latent_attention: false`` over a preset of an MLA model)."""
    return [k for k in ("mla", "moe", "mamba") if base.get(k) is not None and k in model and model[k] is None]


def _overrides(model: dict[str, Any], base: dict[str, Any]) -> list[str]:
    return [k for k, v in model.items() if k in base and base[k] != v]


def _span_for(violation: Any, spans: dict[str, Any]) -> Any:
    for knob in getattr(violation, "knobs", ()) or ():
        if knob in spans:
            return spans[knob]
    rule = str(getattr(violation, "rule", "")).replace("-", "_")
    if rule in spans:
        return spans[rule]
    text = violation.message
    for knob, span in spans.items():
        if re.search(rf"\b{knob}\b", text) or re.search(rf"\b{knob.upper()}\b", text):
            return span
    return None


def run(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else None
    if out is not None:
        from primus_lang.outputs import refuse_collisions

        # --force replaces an existing space, never the recipe it is read from
        refuse_collisions({"--out": out}, {"the recipe": Path(args.recipe)})
    if out is not None and out.exists() and not args.force:
        raise CompileError(Diagnostic(OUTPUT_EXISTS, f"`{out}` exists; not overwriting it",
                                      help="pass `--force` to replace it, or choose another `--out`"))
    text, summary, warnings = build(args)
    if warnings:
        # in the error format asked, as every command's diagnostics (`--error-format json`: codes and spans)
        print(render(warnings, getattr(args, "error_format", "human")), file=sys.stderr)
    if out is None:
        sys.stdout.write(text)
    else:
        from primus_lang.outputs import write_file

        write_file(out, text, force=args.force, option="out")
    print("\n".join(summary), file=sys.stderr)
    if out is not None:
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _node_variable(recipe: Recipe, nodes: int, other: int) -> str:
    """How to give the node count: the environment variable whose script default gave it, where the
    reading took exactly one default equal to the count (``NNODES=${SLURM_NNODES:-1}``)."""
    # not `--nodes`: it would contradict the count the recipe states (P3124)
    # a default that merely equals the count (`MBS=${MBS:-1}`) is no node count: the name must say nodes
    named = [name for name, default in recipe.defaults
             if default.strip("\"'") == str(nodes) and "NODE" in name.upper()]
    if len(named) == 1:
        return f"the script read `{named[0]}` at its default {nodes}; give the count with `--set {named[0]}={other}`"
    return (f"if the script reads the count from its environment, give it with `--set NAME={other}`; if it "
            "sets the count itself, change it there")


def _mtp_source(recipe: Recipe, message: str) -> tuple[str, ...]:
    """Where the MTP layers a layout leaves out come from (a preset the recipe never shows, often)."""
    entry = recipe.entries.get("mtp_num_layers")
    if "MTP" not in message or entry is None or not entry.value:
        return ()
    whose = "its preset" if entry.preset else "the recipe"
    return (f"the MTP layers come from {whose}: `{entry.written}` = {entry.value}; megatron-core asserts that a "
            "layout places exactly that many `m` (PipelineParallelLayerLayout.validate_layer_layout): put them "
            "before the last stage's `L`, or set `mtp_num_layers: null` in the recipe (no MTP)",)

