"""A Megatron-Bridge launch → ``Recipe``: ``[torchrun ...] scripts/training/run_recipe.py --recipe NAME
[options] section.field=value ...`` (run_recipe.py's parser), or the performance launcher's
``setup_experiment.py -m FAMILY -mr MODEL -ng GPUS -g GPU -c PRECISION ...``, read at one Bridge release.

The recipe's own settings come from the generated table of the release's recipes (frameworks.bridge,
through emit/bridge_recipes.py); the options and overrides replace them. Every key goes through emit/bridge.py's one table: a field that holds a
Megatron argument becomes that argument (so ``interpret`` reads it as it reads any recipe), any
other recorded field is carried through for the bridge target as ``bridge__section__field``.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Sequence
from typing import Any

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import (
    BRIDGE_BAD_OVERRIDE,
    BRIDGE_UNKNOWN_KEY,
    BRIDGE_UNKNOWN_RECIPE,
    RECIPE_BAD_VALUE,
    RECIPE_CONTRADICTION,
    RECIPE_UNSUPPORTED,
    RECIPE_VALUE_NOT_CARRIED,
    RECIPE_VALUE_UNKNOWN,
)
from primus_lang.emit import (
    DTYPES,
    LAUNCHERS,
    PERF_EFFECTS,
    PERF_LAUNCH_GROUPS,
    PERF_LAUNCH_ONLY,
    PRECISION_KNOBS,
    PRECISION_SECTIONS,
    RECIPE_KEY,
    BridgeRecipe,
    dest_of,
    negated_dest_of,
    passthrough_key,
    precision_settings,
    recipes,
    recorded_fields,
    unmodelled_precision,
)
from primus_lang.frameworks import bridge, spelling
from primus_lang.ir.ranges import KIND_CEILINGS
from primus_lang.ir.span import Span
from primus_lang.recipes.flags import MODELLED
from primus_lang.recipes.megatron import launcher_settings, sbatch_setting, torchrun_nodes
from primus_lang.recipes.scheduler import (
    SLURM,
    Collector,
    bridge_launcher,
    launcher_options,
    read_directives,
    read_srun,
)
from primus_lang.recipes.settings import Entry, Recipe
from primus_lang.recipes.unmodelled import BRIDGE_RECIPE_UNMODELLED
from primus_lang.recipes.words import Launch, Word, shown

K, P = spelling.KNOBS, spelling.PARTS
SCRIPTS = ("run_recipe.py", "train.sh")
PERF_MODULES = "megatron.bridge.perf_recipes"
# the performance launcher's scripts, whose selector flags name a recipe indirectly
PERFORMANCE_SCRIPTS = ("setup_experiment.py", "run_script.py")
# GPUs a node of each part Bridge's performance launcher knows holds, where it is not 8 (GB200/GB300 NVL72
# trays: 4; scripts/performance/argument_parser.py, NUM_GPUS_PER_NODE_MAP)
_GPUS_PER_NODE = {"gb200": 4, "gb300": 4, "vr200": 4, "r100": 1}


def is_bridge_launch(words: Sequence[Word]) -> bool:
    """Whether a launch runs Bridge's recipe entry point (read before Megatron's reader)."""
    names = {w.text.rsplit("/", 1)[-1] for w in words}
    return bool(names & {*SCRIPTS, *PERFORMANCE_SCRIPTS}) and "pretrain_gpt.py" not in names


def read_bridge_launch(launch: Launch, file: str, version: str = bridge.DEFAULT_VERSION) -> Recipe:
    """``version``: the Megatron-Bridge release the launch runs, whose recipes and fields it is read by."""
    words = list(launch.words)
    problems: list[Diagnostic] = []
    start = next((i for i, w in enumerate(words) if w.text.rsplit("/", 1)[-1] in SCRIPTS + PERFORMANCE_SCRIPTS),
                 None)
    if start is None:
        raise CompileError(Diagnostic(BRIDGE_UNKNOWN_RECIPE, "no Megatron-Bridge entry point in the command line",
                                      span=Span(file, 1, 1, 1, 2),
                                      help="the line should run scripts/training/run_recipe.py --recipe NAME"))
    script = words[start]
    launcher: dict[str, Entry] = {}
    notes: list[str] = []
    if start:
        # Bridge's READMEs launch through uv (`uv run python scripts/...`), which only picks the environment
        before = [w for k, w in enumerate(words[:start])
                  if not (w.text == "uv" or (w.text == "run" and k and words[k - 1].text == "uv"))]
        launcher, notes = launcher_settings(before, problems)
    perf = script.text.rsplit("/", 1)[-1] in PERFORMANCE_SCRIPTS
    rest = words[start + 1:]
    placed = Collector()
    own_job = perf or script.text.rsplit("/", 1)[-1] == "train.sh"
    if own_job:
        # the launcher submits a job of its own: the script's `#SBATCH` lines and srun are its outer job's
        if any(option in SLURM for option, _ in launch.directives):
            placed.notes.append(f"the script's `#SBATCH` lines are those of the job that runs `{script.text}`, "
                                "which submits its own: where that runs is the launcher's options and defaults")
    else:
        read_directives(launch, placed)
        read_srun(words[:start], placed)
    if perf:
        rest = launcher_options(rest, bridge_launcher("performance", version), placed, dict(launch.env))
    if script.text.rsplit("/", 1)[-1] == "train.sh":
        rest = launcher_options(rest, bridge_launcher("train.sh", version), placed, dict(launch.env))
        rest, own, said = _launcher_options(rest, problems, version)
        launcher |= own
        notes += said
    reader = _Reader(file, rest, problems, version, perf=perf)
    reader.read()
    if any(d.code is BRIDGE_UNKNOWN_KEY for d in problems) and reader.recipe_name:
        try:
            reader.recipe()
        except CompileError as unknown:
            # a recipe primusc does not read (fine-tuning, a vision model's) has fields of its own, which
            # the pretraining recipes' table does not list: its own refusal is the reason, not its fields
            problems[:] = [*unknown.diagnostics, *(d for d in problems if d.code is not BRIDGE_UNKNOWN_KEY)]
    if problems:
        # a word lost to a redirection (a README's `<account>`) is the likely cause of what is missing
        lost = tuple(n for n in launch.notes if "is a redirection in bash" in n)
        raise CompileError([attrs.evolve(d, notes=(*d.notes, *lost)) for d in problems])
    recipe = reader.recipe()
    entries = _entries(recipe, reader, problems)
    if problems:
        raise CompileError(problems)
    gpu = recipe.gpu
    # a recipe for fewer GPUs than a node holds (Llama 3 8B's library alias: 2) runs on part of one
    per_node = min(_GPUS_PER_NODE.get(gpu, 8), recipe.gpus)
    nodes, gpus = launcher.get("nnodes"), launcher.get("nproc_per_node")
    if nodes is None and gpus is None:
        # a Slurm script's own allocation (Bridge's examples: `#SBATCH --nodes=4`, srun a task a GPU), which
        # its launch line runs on whatever the recipe's name was written for
        nodes = sbatch_setting(launch, ("--nodes", "-N"), "nnodes")
        gpus = sbatch_setting(launch, ("--gpus-per-node", "--ntasks-per-node"), "nproc_per_node") if nodes else None
    given = reader.selectors.get("gpus_per_node")
    if given is not None and nodes is None and gpus is None:
        gpus = Entry("nproc_per_node", given[0], given[1].span, given[1].text)
        per_node = int(given[0]) if given[0].isascii() and given[0].isdigit() and int(given[0]) > 0 else per_node
        nodes = Entry("nnodes", str(max(1, recipe.gpus // per_node)), None, "the recipe's GPU count")
    if nodes is None and gpus is None:
        where = recipe.gpus_from
        gpus = Entry("nproc_per_node", str(per_node), None, where)
        nodes = Entry("nnodes", str(max(1, recipe.gpus // per_node)), None, where)
    if nodes is None and start:
        nodes, notes = torchrun_nodes(words[:start], notes)
    notes += _overlap_at(recipe, entries, nodes, gpus)
    notes = [*launch.notes, *notes, *reader.notes]
    if f"_{gpu}_" not in recipe.name:
        notes.append(f"the GPU, {gpu}, is the one Bridge's library recipes are written for (`--gpu` chooses)")
    notes.append(f"recipe `{recipe.name}` read from {recipe.source}")
    notes += _recipe_unmodelled(recipe.name, version)
    placement = placed.placement()
    return Recipe(file, "bridge", entries, nodes=nodes, gpus_per_node=gpus,
                  card=Entry("model", recipe.card, reader.recipe_span, reader.recipe_written),
                  gpu_hint=gpu, notes=(*notes, *placement.notes), warnings=tuple(reader.warnings), version=version,
                  placement=placement)


def _recipe_unmodelled(name: str, version: str) -> list[str]:
    """A note for each of the recipe's own fields, on, whose cost the projection leaves out
    (``BRIDGE_RECIPE_UNMODELLED``): the launch runs them, since it names the recipe."""
    recorded = bridge.recipe(name, version)
    fields = recorded.settings if recorded is not None else {}
    return [f"the recipe's `{path}` = true is run by the launch, not modelled: it {why}"
            for path, why in BRIDGE_RECIPE_UNMODELLED.items() if fields.get(path) is True]


def _overlap_at(recipe: BridgeRecipe, entries: dict[str, Entry], nodes: Entry | None, gpus: Entry | None) -> list[str]:
    """The data-parallel overlap the recipe's CommOverlapConfig runs on the launch's GPUs, where they are
    another count than the recipe's (``BridgeRecipe.dp_overlap``): on at DP > 1 (training/comm_overlap.py),
    unless the launch sets it. Llama 3 70B's library recipe is written for 32 GPUs at DP 1; launched on 64,
    Bridge overlaps its gradient reduction."""
    counts = [e.value for e in (nodes, gpus) if e is not None]
    if not recipe.dp_overlap or len(counts) != 2 or not all(str(c).isascii() and str(c).isdigit() for c in counts):
        return []
    world = int(counts[0]) * int(counts[1])
    if world == recipe.gpus:
        return []

    def size(knob: str) -> int:
        e = entries.get(K[knob])
        return int(e.value) if e is not None and isinstance(e.value, int) and e.value > 0 else 1

    dp = world // max(1, size("tp") * size("pp") * size("cp"))
    said = []
    for path in recipe.dp_overlap:
        dest = dest_of(path)
        if dest is None or (dest in entries and entries[dest].span is not None):  # the launch's own value
            continue
        entries[dest] = Entry(dest, dp > 1, None, f"{recipe.comm_overlap} at DP {dp}")
        said.append(dest)
    if not said:
        return []
    return [f"{' and '.join(f'`{d}`' for d in said)} read as {str(dp > 1).lower()}: the recipe's CommOverlapConfig "
            f"sets them from the data-parallel size, {dp} on these {world} GPUs (the recipe's own {recipe.gpus} "
            "GPUs give another)"]


DETERMINISTIC = (("model.deterministic_mode", "true"), ("model.cross_entropy_loss_fusion", "false"),
                 ("comm_overlap.tp_comm_overlap", "false"))

# train.sh's options that give the cluster's shape, by dest (its others are the Slurm job's: where it runs is
# read into the site, the rest noted; their spellings are setup_experiment.py's, frameworks/bridge/launchers.json)
_TRAIN_SH_SHAPE = {"nodes": "nnodes", "gpus_per_node": "nproc_per_node"}


def _launcher_options(words: list[Word], problems: list[Diagnostic],
                      version: str) -> tuple[list[Word], dict[str, Entry], list[str]]:
    """train.sh's own options out of ``words`` (scripts/training/setup_experiment.py's, which takes the
    cluster's options and forwards the rest to run_recipe.py): the cluster's shape read, the rest noted as
    the launcher's."""
    options = {spelled: o for o in bridge.launcher_options("train.sh", version) for spelled in o.options}
    rest: list[Word] = []
    shape: dict[str, Entry] = {}
    notes: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        name, eq, inline = w.text.partition("=")
        option = options.get(name)
        if option is not None and option.takes_value:
            value = Word(inline, w.span, w.unknown) if eq else (words[i + 1] if i + 1 < len(words) else None)
            i += 1 if eq else 2
            if value is None or not value.text:
                problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{name}` needs a value", span=w.span))
            elif option.dest in _TRAIN_SH_SHAPE:
                key = _TRAIN_SH_SHAPE[option.dest]
                shape[key] = Entry(key, value.text, w.span, f"{name} {value.text}")
            else:
                notes.append(f"`{name}` is train.sh's own (the Slurm job's); the emitted launch files set theirs")
            continue
        if option is not None:
            notes.append(f"`{w.text}` is train.sh's own; not carried")
        else:
            rest.append(w)
        i += 1
    return rest, shape, list(dict.fromkeys(notes))


class _Reader:
    def __init__(self, file: str, words: list[Word], problems: list[Diagnostic], version: str, *,
                 perf: bool = False) -> None:
        self.file, self.words, self.problems, self.version, self.perf = file, words, problems, version, perf
        self.recipe_name = ""
        self.recipe_span: Span | None = None
        self.recipe_written = ""
        self.overrides: list[tuple[str, str, Word]] = []  # (path, Hydra text, where)
        self.late: list[tuple[str, str, Word]] = []  # the performance launcher's options, over the overrides
        # its --cuda_graph_scope, which Bridge applies only where the graph implementation is not none: the
        # recipe's, which is known once its name is
        self.graph_scope: tuple[str, Word] | None = None
        self.selectors: dict[str, tuple[str, Word]] = {}
        self.notes: list[str] = []
        self.indexed: Word | None = None  # `--dataset megatron-indexed`: the corpus dataset.data_path names
        self.warnings: list[Diagnostic] = []  # overrides left out, as the Megatron-LM reader leaves them (W3133)

    def value(self, i: int, inline: str, eq: str) -> tuple[str, int]:
        if eq:
            return inline, i + 1
        return (self.words[i + 1].text, i + 2) if i + 1 < len(self.words) else ("", i + 1)

    def read(self) -> None:
        kept = []
        for w in self.words:
            if w.unknown:
                why = w.unknown[0]
                how = f"`--set {why.variable}=VALUE`" if why.variable else "the value the run used"
                override = _OVERRIDE.match(w.text)
                path = override.group(1) if override is not None else ""
                if path and path not in recorded_fields(self.version):
                    kept.append(w)  # a field Bridge does not have: said as such (P3141), whatever its value
                    continue
                if path and not _modelled(path):
                    # a save folder or a run's name under `$SLURM_JOB_ID`: left out and said, as the Megatron-LM
                    # reader leaves out a flag it does not model
                    self.warnings.append(Diagnostic(
                        RECIPE_VALUE_NOT_CARRIED, f"`{shown(w.text)}` reads {why.what}: not carried to the launch "
                        "files", span=why.span or w.span, help=f"give it with {how} to carry it"))
                    continue
                self.problems.append(Diagnostic(
                    RECIPE_VALUE_UNKNOWN, f"`{shown(w.text)}` reads {why.what}", span=why.span or w.span,
                    help=f"give it with {how}"))
            kept.append(w)
        self.words = kept
        if self.problems:
            return
        if self.perf:
            self.read_performance()
        else:
            self.read_training()
        if self.indexed is not None:
            named = next((path for path, _, _ in self.overrides if path in _CORPUS_PATHS), None)
            if named is not None:
                self.notes.append(f"`--dataset megatron-indexed` reads the indexed corpus `{named}` names, "
                                  "as the launch does; the preset's own split (9999,8,2) is not carried")
            else:
                self.problems.append(Diagnostic(
                    BRIDGE_BAD_OVERRIDE, "`--dataset megatron-indexed` names no corpus: the line gives no "
                    "`dataset.data_path=`", span=self.indexed.span,
                    help="add dataset.data_path=PREFIX or dataset.blend=... (the indexed corpus), or use --dataset "
                         "mock"))
        self.overrides += self.late
        if self.perf:
            self.perf_recipe()
            self.apply_graph_scope()

    def read_performance(self) -> None:
        """setup_experiment.py / run_script.py: the recipe's parts, its options, Hydra overrides."""
        i = 0
        while i < len(self.words):
            w = self.words[i]
            name, eq, inline = w.text.partition("=")
            if not w.text.startswith("-"):
                self.override(w)
                i += 1
                continue
            name = self.unabbreviated(name, w)
            if name in LAUNCHERS.perf_site_switches:
                self.notes.append(f"`{name}` is the performance launcher's own; the emitted launch files run the job")
                i += 1
                continue
            if name == "--deterministic":
                # what the launcher applies (recipes/utils/determinism_utils.py, apply_determinism_overrides):
                # deterministic kernels, no fused cross entropy, no TP communication overlap
                self.late += [(path, value, w) for path, value in DETERMINISTIC]
                self.notes.append("`--deterministic` is read as Bridge applies it: model.deterministic_mode, "
                                  "no fused cross-entropy, no TP communication overlap, and the launch exports its "
                                  "NCCL_ALGO, CUBLAS_WORKSPACE_CONFIG and NVTE_ALLOW_NONDETERMINISTIC_ALGO")
                i += 1
                continue
            read = any(name in known for known in (LAUNCHERS.perf_selectors, LAUNCHERS.perf_options,
                                                    LAUNCHERS.perf_site_values))
            spec = _perf_options(self.version).get(name)
            if spec is not None and not read:
                i = self.perf_option(spec, name, w, i, inline, eq)
                continue
            if not read:
                self.problems.append(Diagnostic(
                    BRIDGE_BAD_OVERRIDE, f"`{name}` is a performance-launcher option primusc does not read",
                    span=w.span, help="write its effect as a `section.field=value` override, or drop it"))
                i += 1
                continue
            value, i = self.value(i, inline, eq)
            if not value:
                self.problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{name}` needs a value", span=w.span))
            elif name in LAUNCHERS.perf_selectors:
                self.selectors[LAUNCHERS.perf_selectors[name]] = (value, w)
            elif name in LAUNCHERS.perf_options:
                path = LAUNCHERS.perf_options[name]
                self.late.append((path, "null" if value == "None" else value, w))
                if path == "model.tensor_model_parallel_size" and value.isascii() and value.isdigit():
                    self.late.append(("model.sequence_parallel", "true" if int(value) > 1 else "false", w))
            else:
                self.notes.append(f"`{name}` is a launcher or site setting; the emitted launch files set their own")

    def perf_option(self, spec: bridge.LauncherOption, name: str, w: Word, i: int, inline: str, eq: str) -> int:
        """An option of the performance launcher's parser beyond the recipe's parts and shape: what it does to
        the recipe (``PERF_EFFECTS``), a setting of how the job runs (noted), or one primusc cannot read."""
        value, i = self.value(i, inline, eq) if spec.takes_value else ("", i + 1)
        if spec.dest == "cuda_graph_scope":
            self.graph_scope = (value, w)
            return i
        effect = PERF_EFFECTS.get(spec.dest)
        if effect is not None:
            result = effect(value)
            if isinstance(result, str):
                self.problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{name} {value}`: {result}", span=w.span,
                                                help="the performance launcher refuses it too"))
            else:
                self.late += [(path, v, w) for path, v in result]
        elif spec.group in PERF_LAUNCH_GROUPS or spec.dest in PERF_LAUNCH_ONLY:
            self.notes.append(f"`{name}` is a launcher or site setting; the emitted launch files set their own")
        else:
            self.problems.append(Diagnostic(
                BRIDGE_BAD_OVERRIDE, f"`{name}` is a performance-launcher option primusc does not read", span=w.span,
                help="write its effect as a `section.field=value` override, or drop it"))
        return i

    def apply_graph_scope(self) -> None:
        """``--cuda_graph_scope`` as _set_cuda_graph_overrides applies it: ignored where the graph
        implementation (the line's `--cuda_graph_impl`, else the recipe's) is none; refused with
        transformer_engine for the full iteration."""
        if self.graph_scope is None:
            return
        value, w = self.graph_scope
        given = [v for path, v, _ in self.late if path == "model.cuda_graph_impl"]
        recipe = bridge.recipe(self.recipe_name, self.version) if self.recipe_name else None
        impl = given[-1] if given else recipe.settings.get("model.cuda_graph_impl") if recipe else None
        if impl in (None, "none"):
            self.notes.append(f"`--cuda_graph_scope {value}` is not read: the graph implementation is none (the "
                              "recipe's, without `--cuda_graph_impl`), and the launcher then ignores the scope")
            return
        result = PERF_EFFECTS["cuda_graph_scope"](value)
        if isinstance(result, str) or ("full_iteration" in value and impl == "transformer_engine"):
            why = result if isinstance(result, str) else "the full iteration cannot be graphed by transformer_engine"
            self.problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`--cuda_graph_scope {value}`: {why}", span=w.span,
                                            help="the performance launcher refuses it too"))
            return
        # what the scope sets replaces the line's own (the full iteration's `local` becomes `full_iteration`, as
        # Bridge's set_full_iteration_cuda_graph sets it), not contradicts it
        replaced = {path for path, _ in result}
        self.overrides = [o for o in self.overrides if o[0] not in replaced] + [(path, v, w) for path, v in result]

    def unabbreviated(self, name: str, w: Word) -> str:
        """The performance launcher's option ``name`` stands for: its parser keeps argparse's default
        ``allow_abbrev``, so a unique prefix of an option (`--gpus_per` for `--gpus_per_node`, `-s` for `-sl`)
        is that option, and a prefix of several is an error there (run_recipe.py's parser turns it off)."""
        known = _perf_options(self.version)
        if name in known:
            return name
        # argparse matches a prefix against options of its own dash count: `-s` against `-sl`, not `--seq_length`
        dashes = 2 if name.startswith("--") else 1
        starting = sorted(o for o in known if o.startswith(name) and (2 if o.startswith("--") else 1) == dashes)
        if len(starting) == 1:
            self.notes.append(f"`{name}` is read as `{starting[0]}`: the performance launcher's parser takes a "
                              "unique prefix of an option for it")
            return starting[0]
        if len(starting) > 1:
            self.problems.append(Diagnostic(
                RECIPE_BAD_VALUE, f"`{name}` is a prefix of several performance-launcher options "
                f"({', '.join(starting)}): the launcher stops on it as ambiguous", span=w.span,
                help="write the option in full"))
        return name

    def perf_recipe(self) -> None:
        """The flat recipe the selectors name (utils/utils.py, _recipe_function_name)."""
        missing = [flag for flag, part in (("-mr", "recipe"), ("-ng", "gpus"), ("-g", "gpu"))
                   if part not in self.selectors]
        if missing:
            self.problems.append(Diagnostic(BRIDGE_UNKNOWN_RECIPE, "the performance launch does not name its "
                                            f"recipe: {', '.join(missing)} missing", span=self.words[0].span
                                            if self.words else None, help="give -mr, -ng and -g (and -c)"))
            return
        task, task_word = self.selectors.get("task", ("pretrain", None))
        if task != "pretrain":
            self.problems.append(Diagnostic(BRIDGE_BAD_OVERRIDE, f"`--task {task}`: primusc plans pretraining runs only",
                                            span=task_word.span if task_word else None, help="use --task pretrain"))
        domain = self.selectors.get("domain")
        if domain is not None and domain[0] != "llm":
            self.problems.append(Diagnostic(BRIDGE_BAD_OVERRIDE, f"`--domain {domain[0]}`: primusc plans language "
                                            "models", span=domain[1].span, help="use --domain llm"))
        precision, precision_word = self.selectors.get("precision", ("bf16", None))
        if precision not in LAUNCHERS.perf_precisions:
            self.problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`-c {precision}` is no precision of the launcher",
                                            span=precision_word.span if precision_word else None,
                                            help="one of " + ", ".join(LAUNCHERS.perf_precisions)))
            return
        variant = self.selectors.get("variant", ("", None))[0].lower()
        suffix = "" if variant in ("", "v1", "v2") else f"_{variant}"
        recipe, recipe_word = self.selectors["recipe"]
        gpus = self.selectors["gpus"][0]
        gpu = self.selectors["gpu"][0].lower()
        named = LAUNCHERS.perf_precisions[precision]
        self.recipe_name = f"{recipe.lower()}_{task}_{gpus}gpu_{gpu}_{named}{suffix}_config"
        self.recipe_span, self.recipe_written = recipe_word.span, f"-mr {recipe}"

    def read_training(self) -> None:
        """scripts/training/run_recipe.py (or train.sh): its options, then Hydra overrides."""
        i = 0
        while i < len(self.words):
            w = self.words[i]
            name, eq, inline = w.text.partition("=")
            if w.text.startswith("-") and name in ("--recipe", "--model", "--mode", "--dataset", "--step-func",
                                                   "--step_func", *LAUNCHERS.convenience):
                value, i = (inline, i + 1) if eq else ((self.words[i + 1].text, i + 2) if i + 1 < len(self.words)
                                                       else ("", i + 1))
                if not value:
                    self.problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{name}` needs a value", span=w.span))
                    continue
                self.option(name, value, w)
                continue
            if w.text in LAUNCHERS.switches:
                self.notes.append(f"`{w.text}` changes how run_recipe.py runs, not the recipe; not carried")
                i += 1
                continue
            if w.text.startswith("-"):
                known = ["--recipe", "--model", "--mode", "--dataset", *LAUNCHERS.convenience, *LAUNCHERS.switches]
                close = difflib.get_close_matches(name, known, n=1)
                # an option of a later run_recipe.py than the releases recorded reads as a typo otherwise
                newer = (f"primusc knows run_recipe.py as of Megatron-Bridge {', '.join(bridge.version_names())}: "
                         "an option added since is not read; write what it sets as overrides")
                self.problems.append(Diagnostic(
                    BRIDGE_UNKNOWN_KEY, f"`{name}` is not a run_recipe.py option of Megatron-Bridge {self.version}",
                    span=w.span, help=f"did you mean `{close[0]}`? {newer}" if close
                    else "options: " + ", ".join(known) + f"; {newer}"))
                i += 1
                # its value, when it has one, is not an override of its own
                if not eq and i < len(self.words) and not self.words[i].text.startswith("-") \
                        and "=" not in self.words[i].text:
                    i += 1
                continue
            self.override(w)
            i += 1

    def option(self, name: str, value: str, w: Word) -> None:
        if name == "--recipe":
            self.recipe_name, self.recipe_span, self.recipe_written = value, w.span, f"--recipe {value}"
        elif name == "--model":
            self.recipe_name, self.recipe_span, self.recipe_written = f"{value}_pretrain_config", w.span, \
                f"--model {value}"
        elif name == "--mode":
            if value != "pretrain":
                self.problems.append(Diagnostic(BRIDGE_BAD_OVERRIDE, f"`--mode {value}`: primusc plans pretraining "
                                                "runs only", span=w.span, help="use --mode pretrain"))
        elif name == "--dataset":
            if value == "mock":
                # run_recipe.py swaps in its mock dataset, whatever data the recipe names
                self.overrides.append((bridge.canonical("dataset.mock"), "true", w))
            elif value == "megatron-indexed":
                self.indexed = w  # the corpus is dataset.data_path's: checked once every override is read
            else:
                self.problems.append(Diagnostic(BRIDGE_BAD_OVERRIDE, f"`--dataset {value}`: a dataset preset is "
                                                "Bridge's own; primusc reads mock data or `dataset.data_path=`",
                                                span=w.span, help="write the corpus as dataset.data_path=PREFIX"))
        elif name in ("--step-func", "--step_func"):
            self.notes.append(f"`{name} {value}` is Bridge's forward step; not carried")
        else:
            self.overrides.append((LAUNCHERS.convenience[name], value, w))

    def override(self, w: Word) -> None:
        key, eq, value = w.text.partition("=")
        if w.unknown:
            # read() keeps a word whose value only the script knows for its key alone: no field of Bridge's
            self.unknown_key(key.lstrip("+"), w, "...")
            return
        if key.startswith("~"):
            self.problems.append(Diagnostic(BRIDGE_BAD_OVERRIDE, f"`{w.text}` deletes a field of the recipe, which "
                                            "a space cannot describe", span=w.span, help="set the field's value instead"))
            return
        if not eq or not key:
            # `\ ` at a line's end escapes the space: the word is a space and the command ends there
            blank = not w.text.strip()
            self.problems.append(Diagnostic(
                BRIDGE_BAD_OVERRIDE, f"`{w.text}` is not a `section.field=value` override", span=w.span,
                help="a backslash followed by a space escapes the space, and the line ends the command: delete "
                "the space after `\\` to continue the line" if blank else "write KEY=VALUE, one word"))
            return
        key = key.lstrip("+")
        if key != "mixed_precision" and key not in recorded_fields(self.version):
            self.unknown_key(key, w, value)
            return
        self.overrides.append((bridge.canonical(key), value, w))

    def unknown_key(self, key: str, w: Word, value: str) -> None:
        fields = recorded_fields(self.version)
        renamed = bridge.MEGATRON_NAMED.get(key)
        close = difflib.get_close_matches(key, [f for f in fields if "=" not in f], n=1)
        self.problems.append(Diagnostic(BRIDGE_UNKNOWN_KEY, f"`{key}` is not a field of Megatron-Bridge "
                                        f"{self.version}'s ConfigContainer", span=w.span,
                                        help=f"Bridge calls Megatron-LM's `{key.split('.')[-1]}` `{renamed}`: write "
                                        f"`{renamed}={value}`" if renamed else
                                        f"did you mean `{close[0]}`?" if close else
                                        "check the key (`--bridge-version` names the release)"))

    def recipe(self) -> BridgeRecipe:
        known_recipes = recipes(self.version)
        if self.perf:
            # the performance launcher looks among the flat performance recipes only (utils/utils.py,
            # flat_perf_recipe_names): a library recipe of the same name is not what it runs
            known_recipes = {n: r for n, r in known_recipes.items() if r.source.startswith(PERF_MODULES)}
        found = known_recipes.get(self.recipe_name)
        if found is not None:
            return found
        if self.perf:
            fallback = self.fallback(known_recipes)
            if fallback is not None:
                return fallback
        release = self.version
        evaluated = bridge.recipe(self.recipe_name, release)
        failed = bridge.error(self.recipe_name, release)
        if evaluated is not None:
            model = f"`{evaluated.hf_id}`" if evaluated.hf_id else "a model its provider builds (no Hugging Face checkpoint)"
            why = f"Megatron-Bridge {release}'s recipe `{self.recipe_name}` trains {model}, which has no stdlib model card"
            hint = ("write its card from the model's config.json (`primusc import-hf config.json`), then the space by "
                    "hand; recipes primusc reads: " + _shown_names(known_recipes))
        elif failed is not None:
            why = f"Megatron-Bridge {release}'s recipe `{self.recipe_name}` could not be evaluated on CPU ({failed})"
            hint = "its settings are not in frameworks/bridge; name another recipe, or write the space by hand"
        else:
            close = difflib.get_close_matches(self.recipe_name, bridge.recipe_names(release), n=1)
            why = (f"`{self.recipe_name}` is not a pretraining recipe of Megatron-Bridge {release}"
                   if self.recipe_name else "the launch names no recipe (`--recipe NAME` or `--model STEM`)")
            hint = (f"did you mean `{close[0]}`? " if close else "") + "recipes primusc reads: " + \
                _shown_names(known_recipes)
        raise CompileError(Diagnostic(BRIDGE_UNKNOWN_RECIPE, why, span=self.recipe_span, help=hint))

    def fallback(self, known: dict[str, BridgeRecipe]) -> BridgeRecipe | None:
        """The performance launcher's own answer to a GPU count it has no recipe for
        (scripts/performance/utils/utils.py, get_perf_optimized_recipe): the recipe of the same model, GPU
        and precision at the count its table of defaults names, else the most GPUs, its global batch
        scaled by the data-parallel ratio (utils/overrides.py, set_post_overrides)."""
        m = re.fullmatch(r"(.+)_(pretrain)_(\d+)gpu_([a-z0-9]+)_([a-z0-9]+)(_\w+)?_config", self.recipe_name)
        if m is None:
            return None
        model, task, count, gpu, precision, variant = m.groups()
        head, tail = f"{model}_{task}_", f"gpu_{gpu}_{precision}{variant or ''}_config"
        others = [r for name, r in known.items() if name.startswith(head) and name.endswith(tail)
                  and name[len(head):-len(tail)].isdigit()]
        if not others:
            return None
        default = bridge.perf_default_count(model, task, gpu, precision, variant and variant[1:], self.version)
        base = next((r for r in others if r.gpus == default), None) or max(others, key=lambda r: r.gpus)
        gpus = int(count)
        settings = dict(base.settings)
        batch = settings.get("train.global_batch_size")
        if isinstance(batch, int) and not isinstance(batch, bool):
            settings["train.global_batch_size"] = max(1, batch * gpus // base.gpus)
        self.notes.append(f"Megatron-Bridge has no `{self.recipe_name}`: the launcher runs `{base.name}` with its "
                          f"global batch scaled from {base.gpus} to {gpus} GPUs, as read here")
        return attrs.evolve(base, name=base.name, gpus=gpus, settings=settings,
                            gpus_from=f"the launcher's -ng {gpus}")


def _shown_names(known: dict[str, BridgeRecipe]) -> str:
    """The library names (one per model) and how many more: the performance recipes are hundreds."""
    library = sorted(n for n in known if "gpu_" not in n)
    if not library:  # performance recipes alone: say their models
        models = sorted({n.split("_pretrain", 1)[0] for n in known})
        return f"{len(known)} performance recipes of " + ", ".join(models)
    return ", ".join(library) + f" and {len(known) - len(library)} performance recipes of their models"


def hydra_scalar(text: str) -> Any:
    """A Hydra override value as Python: true/false/null, numbers, ``[a,b]`` lists, quoted text."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return tuple(str(hydra_scalar(x.strip())) for x in inner.split(",")) if inner else ()
    # Hydra's grammar, not YAML 1.1's: `3e-05` is a float there, `True` a bool, `null` nothing
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "null":
        return None
    if _INT.fullmatch(text):
        # Python refuses to convert integers of more than 4,300 digits; any such is past every ceiling
        return int(text) if len(text) <= 40 else float("-inf" if text.startswith("-") else "inf")
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


# where `--dataset megatron-indexed` finds its corpus: GPTDatasetConfig's prefixes, or its blend of them
# (Megatron-Bridge v0.6.0; its Nemotron 3 Ultra and DeepSeek-V4 scripts give `dataset.blend`)
_CORPUS_PATHS = frozenset(bridge.canonical(p) for p in ("dataset.data_path", "dataset.blend", "dataset.blend_per_split"))
_BLEND = bridge.canonical("dataset.blend")


def _modelled(path: str) -> bool:
    """Whether a Bridge field holds what primusc models: a knob, a model or run setting, the model's shape
    (which the recipe's card owns), or the corpus."""
    return ((dest_of(bridge.canonical(path)) or "") in MODELLED or path.removeprefix("model.") in _ARCHITECTURE
            or bridge.canonical(path) in _CORPUS_PATHS)  # what `--dataset megatron-indexed` reads its corpus from


def _blend_words(text: str) -> tuple[str, ...] | None:
    """GPTDatasetConfig's ``blend``, ``[[prefix, ...], [weight, ...] or null]``, as Megatron's data-path
    words (``weight prefix ...``, or the prefixes alone), which the launch writes back as the corpus (None:
    not such a blend)."""
    from primus_lang.datafiles import loads_yaml
    from primus_lang.recipes.settings import CODES

    try:
        blend = loads_yaml(text, "dataset.blend", CODES, "a Hydra value")  # Hydra's lists are YAML flow lists
    except CompileError:
        return None
    if not (isinstance(blend, list) and len(blend) == 2 and isinstance(blend[0], list) and blend[0]
            and all(isinstance(p, str) and p and not any(c.isspace() for c in p) for p in blend[0])):
        return None
    prefixes, weights = blend
    if weights is None:
        return tuple(prefixes)
    if not (isinstance(weights, list) and len(weights) == len(prefixes)
            and all(isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0 for w in weights)):
        return None
    return tuple(word for w, p in zip(weights, prefixes, strict=True) for word in (repr(w), p))


# a Hydra override's dotted path before its `=` (`checkpoint.save=...`, `+logger.x=...`)
_OVERRIDE = re.compile(r"\+{0,2}([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)=")
_INT = re.compile(r"[+-]?[0-9]+")
# the shape of the model (Megatron's names, which TransformerConfig shares): a Bridge recipe's model is its card
_ARCHITECTURE = frozenset(spelling.CARD[f] for f in ("num_layers", "hidden", "ffn_hidden", "heads", "kv_heads",
                                                     "head_dim", "vocab", "moe.ffn_hidden", "moe.top_k"))
# the largest ceiling of any kind of quantity in the IR (ir/ranges.py): FLOP/s
_LARGEST = max(KIND_CEILINGS.values())
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(inf|nan)", re.IGNORECASE)


# Fields a recipe's table records that the config computes, not reads: megatron-core's dataset config sets
# `mock` itself (`field(init=False)`: true where neither `blend` nor `blend_per_split` names data), so the
# table's `False` (the field's default before that) says nothing of what the recipe runs
_DERIVED = frozenset({"dataset.mock"})


def _entries(recipe: BridgeRecipe, reader: _Reader, problems: list[Diagnostic]) -> dict[str, Entry]:
    """The recipe's recorded settings (no span), then the launch's overrides over them, keyed by the
    Megatron argument each field holds, else by the field's passthrough name."""
    entries: dict[str, Entry] = {RECIPE_KEY: Entry(RECIPE_KEY, recipe.name, None, "--recipe")}
    stated: dict[str, tuple[Any, Word]] = {}
    recorded = bridge.recipe(recipe.name, reader.version)
    # the model's shape as the recipe builds it (its card's), which an override may restate but not change
    shape = {bridge.canonical(p): v for p, v in recorded.settings.items()} if recorded is not None else {}

    def put(path: str, value: Any, where: Word | None, text: str) -> None:
        span = where.span if where is not None else None
        if path == "mixed_precision":
            settings = precision_settings(str(value), reader.version)
            if settings is None:
                problems.extend(_precision_problems(str(value), where, recipe.name, reader.version))
                return
            for dest in _PRECISION_FIELDS:
                entries.pop(dest, None)
            for dest, v in settings.items():
                entries[dest] = Entry(dest, v, span, f"mixed_precision={value}")
            return
        if where is not None and path.removeprefix("model.") in _ARCHITECTURE and value != shape.get(path, value):
            # the model is the card the recipe's Hugging Face config gives; an override of its shape would
            # launch a model other than the one primusc accounts and projects
            problems.append(Diagnostic(RECIPE_UNSUPPORTED, f"`{text}` changes the model the recipe names",
                                       span=span, help="primusc plans a Bridge recipe's own model: write a space "
                                       "over a card with this change (`model m = CARD { ... }`) by hand"))
            return
        if path == _BLEND and where is not None:
            words = _blend_words(where.text.split("=", 1)[1])
            if words is None:
                problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{shown(where.text)}` is no blend primusc can read",
                                           span=span, help="write `dataset.blend=[[PREFIX, ...], [WEIGHT, ...]]` (or "
                                           "`null` weights), or the corpus as `dataset.data_path=PREFIX`"))
                return
            path, value = bridge.canonical("dataset.data_path"), words
        negated = negated_dest_of(path)
        if negated is not None and isinstance(value, bool):
            dest, value = negated, not value
        else:
            dest = dest_of(path) or passthrough_key(path)
        if where is not None and not isinstance(value, bool) and isinstance(value, (int, float)) \
                and abs(value) > _LARGEST and (isinstance(value, int) or value == float("inf")):
            # a knob's value is bounded by its own ceiling later (interpret); a value carried to the space
            # would otherwise reach it as a number the language cannot hold (P1016 at the space's line)
            problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{where.text}` is too large: no count, size or "
                                       f"time primusc knows exceeds {_LARGEST:,.0f}", span=span,
                                       help="fix the value in the launch (check the digits)"))
            return
        if where is not None:
            previous = stated.get(dest)
            if previous is not None and previous[0] != value:
                problems.append(Diagnostic(RECIPE_CONTRADICTION, f"`{text}` contradicts `{previous[1].text}`",
                                           span=span, notes=(f"first at {previous[1].span}",),
                                           help="run_recipe.py keeps the last silently; keep the one you mean"))
            stated[dest] = (value, where)
        if dest in _DTYPE_DESTS and isinstance(value, str):
            value = DTYPES.get(value.removeprefix("torch."), value)
        if dest == "cuda_graph_scope" and isinstance(value, str):
            value = (value,)
        if dest == "recompute_modules" and value is not None and not isinstance(value, tuple):
            value = (str(value),)
        entries[dest] = Entry(dest, value, span, text)

    for path, value in recipe.settings.items():
        if path in _DERIVED:
            continue
        put(path, value, None, f"{recipe.name}'s {path}")
    for path, text, where in reader.overrides:
        value = hydra_scalar(text)
        if path == bridge.GRAPH_MODULES:
            # megatron-core's newer name of the per-layer graph scope, which a bridge launch writes
            # (emit/bridge.py), with the scope cleared: read as the scope, and that null as nothing more
            path, value = bridge.GRAPH_SCOPE, () if value == "full" else value
        elif path == bridge.GRAPH_SCOPE and value is None:
            continue
        put(path, value, where, where.text)
    _precision_setup(recipe, reader, entries, problems)
    # run_recipe.py sets the model's sequence length from the dataset's after the overrides
    # (recipe_runner.sync_model_dataset_sequence_length): one sequence length either way
    return entries


def _precision_problems(name: str, where: Word | None, recipe: str, version: str) -> list[Diagnostic]:
    """Why a precision named by the launch (``where``) or recorded for the recipe cannot be read: a name
    Bridge does not register (in any spelling it accepts), or a precision primusc does not model."""
    registered = bridge.precision_named(name, version)
    span = where.span if where is not None else None
    if registered is None:
        if where is None:
            # a recorded precision config no registered recipe matches (bridge_recipes gives it a marker):
            # read as BF16 it would plan another run than the recipe's
            return [Diagnostic(RECIPE_UNSUPPORTED, f"{recipe}'s precision (`{name}`) is none primusc models",
                               help="primusc plans BF16 training with BF16, FP8 or FP4 GEMMs")]
        return [Diagnostic(BRIDGE_UNKNOWN_KEY, f"`mixed_precision={name}` is no precision recipe Bridge "
                           "registers", span=span, help="e.g. bf16_mixed, bf16_with_fp8_current_scaling_mixed")]
    why = unmodelled_precision(bridge.precisions(version)[registered])
    shown = f"`mixed_precision={name}`" if where is not None else f"{recipe}'s precision `{name}`"
    return [Diagnostic(RECIPE_UNSUPPORTED, f"{shown} is {why}", span=span,
                       help="primusc plans BF16 training: name one of Bridge's bf16 precision recipes "
                            "(bf16_mixed, bf16_with_fp8_current_scaling_mixed, bf16_with_nvfp4_mixed, ...)")]


def _precision_setup(recipe: BridgeRecipe, reader: _Reader, entries: dict[str, Entry],
                     problems: list[Diagnostic]) -> None:
    """The knobs the precision's fields set, as its setup leaves them after the overrides
    (bridge_recipes.after_precision): a ddp override of such a field is written over, said in a note."""
    is_config, fields = recipe.precision_is_config, dict(recipe.precision)
    for path, text, where in reader.overrides:
        if path == "mixed_precision":
            named = bridge.precision_named(str(hydra_scalar(text)), reader.version)
            is_config, fields = False, dict(bridge.precisions(reader.version).get(named or "", {}))
        elif path.startswith("mixed_precision."):
            if not is_config:
                problems.append(Diagnostic(BRIDGE_BAD_OVERRIDE, f"`{where.text}`: the precision is a registered "
                                           "recipe's name here, whose fields Hydra cannot override", span=where.span,
                                           help="drop it, or name the field's section (ddp., optimizer.) only if "
                                           "the precision leaves it"))
                return
            fields[path.removeprefix("mixed_precision.")] = hydra_scalar(text)
    # an override of the GEMM precision inside the recipe's own precision config (`mixed_precision.fp8=e4m3`)
    # was carried to the launch while the space projected the recipe's precision; primusc writes a precision
    # change as a registered recipe's name, so the run it would launch is another than this one
    for path, text, where in reader.overrides:
        name = path.removeprefix("mixed_precision.")
        if is_config and name in _PRECISION_FIELDS and hydra_scalar(text) != recipe.precision.get(name):
            problems.append(Diagnostic(
                RECIPE_UNSUPPORTED, f"`{where.text}` changes the GEMM precision inside the recipe's own precision "
                "config, which primusc does not read as a precision", span=where.span,
                help="launch the recipe of that precision (the performance recipes come in bf16, fp8cs, fp8mx, "
                     "... variants), or name a registered one (`mixed_precision=bf16_with_mxfp8_mixed`)"))
    for field in PRECISION_KNOBS:
        if field not in fields:
            continue
        value = bool(fields[field])
        negated = field == "grad_reduce_in_fp32"
        dest = P["main_grad_dtype.bf16_reduce"] if negated else K[field]
        stated = next((w for p, _, w in reader.overrides if p.startswith(PRECISION_SECTIONS) and
                       p.endswith("." + field) and not p.startswith("mixed_precision.")), None)
        if stated is not None and bool(hydra_scalar(stated.text.partition("=")[2])) != value:
            reader.notes.append(f"`{stated.text}` is written over by the precision's {field}={str(value).lower()} "
                                "(Bridge's MixedPrecisionConfig.setup): read as the precision says")
        entries[dest] = Entry(dest, (not value) if negated else value, None, f"the precision's {field}")


# MixedPrecisionConfig's fields that say the GEMM precision, named as the Megatron arguments they hold
_PRECISION_FIELDS = ("fp8", "fp8_recipe", "fp4", "fp4_recipe")

# the torch.dtype fields primusc reads, as Megatron-LM spells them (bridge_recipes.DTYPES)
_DTYPE_DESTS = frozenset({K["main_grad_dtype"], K["optimizer_dtype"], P["optimizer_dtype.second_moment"],
                          "moe_router_dtype"})


@functools.cache
def _perf_options(version: str) -> dict[str, bridge.LauncherOption]:
    """Every spelling of an option the performance launcher's parser has at Bridge ``version``
    (``frameworks/bridge/launchers.json``; the hand-kept ``LAUNCHERS`` tables name a part of them)."""
    return {spelled: o for o in bridge.launcher_options("performance", version) for spelled in o.options}
