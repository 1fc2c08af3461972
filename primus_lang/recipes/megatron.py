"""A Megatron-LM launch → ``Recipe``: the launch command's words (``shell`` reads a script into them),
the launcher's words skipped (torchrun's node and GPU counts kept for the cluster), and every flag
read as the Megatron-LM version's own parser reads it (``frameworks.megatron``): a switch, one value
or a list, checked against its type and choices. A flag the version lacks is an error naming the
versions that have it; a flag primusc does not model is carried through unchanged."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

from attrs import evolve, frozen

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import (
    RECIPE_BAD_VALUE,
    RECIPE_CONTRADICTION,
    RECIPE_EMPTY_VARIABLE,
    RECIPE_SHELL_SYNTAX,
    RECIPE_UNKNOWN_FLAG,
    RECIPE_UNREADABLE,
    RECIPE_UNSUPPORTED,
    RECIPE_VALUE_NOT_CARRIED,
    RECIPE_VALUE_UNKNOWN,
)
from primus_lang.frameworks import megatron
from primus_lang.ir.span import Span
from primus_lang.recipes.flags import LAUNCHER_SWITCHES, LAUNCHER_VALUES, MODELLED, setting_name
from primus_lang.recipes.scheduler import placement_of
from primus_lang.recipes.settings import Entry, Recipe
from primus_lang.recipes.shell import NOT_FOLLOWED, launch_of
from primus_lang.recipes.words import Launch, Why, Word

# torchrun's own names; without `--nnodes` each runs on one node (torch.distributed.run's default "1:1")
_TORCHRUN = ("torchrun", "torch.distributed.run", "torch.distributed.launch")


@frozen
class _Read:
    entries: dict[str, Entry]
    problems: list[Diagnostic]
    missing: list[tuple[Word, str]]  # flags the version lacks, with their option string
    warnings: list[Diagnostic]


def read_command_line(launch: Launch, file: str, version: str | None) -> Recipe:
    """``version``: the Megatron-LM version the user named; None reads at the default version, or at a
    newer release when the recipe uses flags only a newer one has (said in a note)."""
    words = list(launch.words)
    if not words:
        raise CompileError(Diagnostic(RECIPE_UNREADABLE, f"`{file}` holds no command line (it is empty, or comments "
                                      "only): nothing to read",
                                      help="pass a Megatron-LM command line (`torchrun ... pretrain_gpt.py --flags`), "
                                      "a Megatron-Bridge launch (`run_recipe.py --recipe NAME ...`) or a Primus "
                                      "experiment YAML"))
    notes: list[str] = list(launch.notes)
    start = _script_end(words)
    script = words[start - 1] if start else None
    path = script.text.replace("\\", "/") if script is not None else ""
    if script is not None:
        _refuse_other_family(script, path)
        if path.rsplit("/", 1)[-1] not in megatron.GPT_SCRIPTS:
            notes.append(f"`{script.text}` is not one of Megatron-LM's pretraining scripts "
                         f"({', '.join(megatron.GPT_SCRIPTS)}): its flags are read as pretraining's, and the "
                         "space's launch runs pretrain_gpt.py (pretrain_mamba.py for a hybrid)")
    nodes = gpus = None
    problems: list[Diagnostic] = []
    if start:
        launcher, launcher_notes = launcher_settings(words[:start], problems)
        notes += launcher_notes
        nodes, gpus = launcher.get("nnodes"), launcher.get("nproc_per_node")
        if nodes is None:
            nodes, notes = torchrun_nodes(words[:start], notes)
    nodes = nodes or sbatch_setting(launch, ("--nodes", "-N"), "nnodes")
    gpus = gpus or sbatch_setting(launch, ("--gpus-per-node", "--ntasks-per-node"), "nproc_per_node")
    flags = words[start:]
    chosen = version or megatron.DEFAULT_VERSION
    name = path.rsplit("/", 1)[-1]
    since = megatron.SCRIPT_SINCE.get(name)
    releases = megatron.releases()
    if version is None and since is not None and releases.index(since) > releases.index(chosen):
        notes.append(f"read as Megatron-LM {since} or later: `{name}` first ships in {since} "
                     "(`--megatron-version` names another)")
        chosen = since
    read = _read_flags(flags, chosen)
    if read.missing and version is None:
        # a recipe for a newer release: the oldest release from the default on that has every flag
        newer = [v for v in megatron.releases() if v > chosen]
        for candidate in newer:
            attempt = _read_flags(flags, candidate)
            if not attempt.missing:
                notes.append(f"read as Megatron-LM {candidate}: {_listed([o for _, o in read.missing])} "
                             f"{'is' if len(read.missing) == 1 else 'are'} not in {chosen} "
                             "(`--megatron-version` names another)")
                chosen, read = candidate, attempt
                break
    problems += read.problems
    for word, option in read.missing:
        problems.append(_unknown_flag(word, option, chosen, version is not None))
    if problems:
        # a file the script sources may set what it reads from its environment: say it was not read
        unfollowed = tuple(n for n in launch.notes if NOT_FOLLOWED in n)
        unknown = [i for i, p in enumerate(problems) if p.code is RECIPE_VALUE_UNKNOWN]
        if unfollowed and unknown:
            first = problems[unknown[0]]
            problems[unknown[0]] = evolve(first, notes=(*first.notes, *unfollowed))
        raise CompileError(problems)
    if not read.entries:
        # a launcher and a script alone: every setting would be reported missing, one cause
        raise CompileError(Diagnostic(RECIPE_UNREADABLE, "the command line sets no Megatron-LM argument: nothing "
                                      "to read", span=words[start - 1].span if start else None,
                                      help="add the run's flags after the script (`pretrain_gpt.py "
                                      "--num-layers 32 --hidden-size 4096 ...`)"))
    notes += _provided(read.entries, chosen)
    placement = placement_of(launch, words[:start])
    notes += placement.notes
    return Recipe(file, "megatron", read.entries, nodes=nodes, gpus_per_node=gpus, notes=tuple(notes),
                  warnings=tuple(read.warnings), version=chosen, env=launch.env, defaults=launch.defaults,
                  placement=placement)


# what each package a flag may come from is, said where a launch needs it installed
_PROVIDERS = {"modelopt": "nvidia-modelopt, whose arguments pretrain_gpt.py adds to the parser where it is installed "
                          "(megatron/post_training/arguments.py)"}


def _provided(entries: Mapping[str, Entry], version: str) -> list[str]:
    """A note per package whose flags the recipe sets: Megatron-LM's parser refuses them where it is not
    installed (Megatron-LM's gpt-oss example sets `--enable-gpt-oss`, a flag of nvidia-modelopt's)."""
    known = megatron.flags(version)
    by: dict[str, list[str]] = {}
    for entry in entries.values():
        flag = known.get(entry.written or "")
        if flag is not None and flag.provider:
            by.setdefault(flag.provider, []).append(f"`{flag.option}`")
    return [f"{', '.join(options)} {'is a flag' if len(options) == 1 else 'are flags'} of "
            f"{_PROVIDERS.get(provider, provider)}: the launch needs it installed where it runs"
            for provider, options in by.items()]


def read_command_text(text: str, file: str, version: str | None = None,
                      given: Mapping[str, str] | None = None) -> Recipe:
    """A command line or script's text, read as ``read_recipe`` reads a file of it."""
    return read_command_line(launch_of(text, file, given), file, version)


def _read_flags(words: list[Word], version: str) -> _Read:
    known = megatron.flags(version)
    entries: dict[str, Entry] = {}
    problems: list[Diagnostic] = []
    missing: list[tuple[Word, str]] = []
    warnings: list[Diagnostic] = []
    split: dict[Span, list[str]] = {}  # quoted values bash split into words: the words after the first
    i = 0
    while i < len(words):
        w = words[i]
        if not w.text.startswith("--"):
            if w.span is not None and i > 0 and words[i - 1].span == w.span:
                # one quoted word of the script became several: an unquoted `${ARGS[@]}` splits it
                split.setdefault(w.span, []).append(w.text)
            elif (unset := _unset_variable(w)) is not None and unset.quoted:
                # "${EXTRA_ARGS}" unset is one empty argument, which Megatron's parser refuses
                problems.append(Diagnostic(
                    RECIPE_VALUE_UNKNOWN, f"`{w.text}` reads {unset.what}; quoted and unset, it is one empty "
                    "argument, which Megatron's parser refuses", span=w.span,
                    help=f"give it with `--set {unset.variable}='--flag VALUE ...'`"))
            elif unset is not None:
                warnings.append(_read_as_empty(w, unset))
            else:
                problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{w.text}` is not a flag, nor the value of one",
                                           span=w.span, help="every word after the script is `--flag` or its value"))
            i += 1
            continue
        option, eq, inline = w.text.partition("=")
        flag = known.get(option)
        if flag is None:
            missing.append((w, option))
            i += 1
            while i < len(words) and not _is_flag(words[i].text):
                i += 1  # its values, whatever they are, belong to it
            continue
        values: list[Word] = []
        i += 1
        if eq:
            values.append(Word(inline, w.span, w.unknown))
        elif flag.arity != megatron.SWITCH:
            while i < len(words) and not _is_flag(words[i].text) and (flag.arity == megatron.LIST or not values):
                unset = _unset_variable(words[i])
                if unset is not None and not unset.quoted and values:
                    # bash expands it to no word: `--data-path $1 ${EXTRA_ARGS}` hands the flag $1 alone (a flag's
                    # only value unset is most likely one to give, `--tensor-model-parallel-size $TP`: P3132)
                    warnings.append(_read_as_empty(words[i], unset))
                else:
                    values.append(words[i])
                i += 1
        name = setting_name(option)
        unknown = [why for v in values for why in v.unknown]
        if unknown:
            why = unknown[0]
            how = f"`--set {why.variable}=VALUE`" if why.variable else "the value the run used"
            if name in MODELLED:
                problems.append(Diagnostic(RECIPE_VALUE_UNKNOWN, f"`{option}` reads {why.what}",
                                           span=why.span or w.span, help=f"give it with {how}"))
            else:
                warnings.append(Diagnostic(RECIPE_VALUE_NOT_CARRIED, f"`{option}` reads {why.what}: not carried to "
                                           "the launch files", span=why.span or w.span,
                                           help=f"give it with {how} to carry it"))
            continue
        value: object
        if flag.arity == megatron.SWITCH:
            if eq:
                problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{option}` is a switch and takes no value",
                                           span=w.span, help=f"write `{option}` alone"))
            value = True
        elif not values:
            if flag.nargs == "*":
                value = ()
            else:
                problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{option}` needs a value", span=w.span,
                                           help="give it before the next flag"))
                continue
        elif flag.arity == megatron.LIST:
            value = tuple(v.text for v in values)
        else:
            value = values[0].text
        placeholder = _placeholder(value) if name not in MODELLED else None
        if placeholder is not None:
            # an example script's stand-in for a path its user gives (Megatron-LM's gpt-oss example sets
            # CHECKPOINT_PATH="NO_VALUE_PROVIDED" and exits unless an argument replaces it)
            warnings.append(Diagnostic(RECIPE_VALUE_NOT_CARRIED, f"`{option}` reads the placeholder `{placeholder}`: "
                                       "not carried to the launch files", span=values[0].span if values else w.span,
                                       help="give the real value in the recipe or with `--set NAME=VALUE` to carry it"))
            continue
        bad = _value_problem(flag, value, version)
        if bad is not None:
            problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{option}` is `{_shown(value)}`, expected {bad}",
                                       span=values[0].span if values else w.span,
                                       help=_releases_taking(option, value, version)))
            continue
        previous = entries.get(name)
        if previous is not None and previous.value != value:
            problems.append(Diagnostic(RECIPE_CONTRADICTION, f"`{option}` is given twice, with different values",
                                       span=w.span, notes=(f"first at {previous.span}",),
                                       help="Megatron keeps the last silently; keep the one you mean"))
        entries[name] = Entry(name, value, w.span, option)
    for span, rest in split.items():
        problems.append(Diagnostic(
            RECIPE_BAD_VALUE, f"bash splits this quoted value into {len(rest) + 1} words: the flag before it takes "
            f"the first, and `{rest[0]}`{' ...' if len(rest) > 1 else ''} is no flag's", span=span,
            help="an array expanded without quotes (`${ARGS[@]}`) splits each of its elements at spaces, and "
                 "Megatron-LM is handed the words apart too: quote the expansion (`\"${ARGS[@]}\"`) in the script"))
    return _Read(entries, problems, missing, warnings)


# what example scripts write where their user is to give a path or a name: `NO_VALUE_PROVIDED`, `<DATA_PATH>`,
# a value starting `/path/to/`, `CHANGE_ME`, `YOUR_DATA_PATH`, `your_own_data_path` (Megatron-LM's detoxify
# example). Upper case inside brackets only: `<unk>`, `<s>` and `<image>` are real tokens
# (`--tiktoken-special-tokens`, `--special-tokens`); a lower-case `your_` alone is a real name often enough
_PLACEHOLDER = re.compile(r"NO_VALUE_PROVIDED|<[A-Z][A-Z0-9_ -]*>|^/path/to(?:/|$)|\bCHANGE_?ME\b|\bYOUR_[A-Z0-9_]+\b"
                          r"|\bPLACEHOLDER\b|\byour_own_\w+")


def _placeholder(value: object) -> str | None:
    """The placeholder a flag's value holds (a word of it, for a list), or None."""
    for word in value if isinstance(value, tuple) else (value,):
        found = _PLACEHOLDER.search(word) if isinstance(word, str) else None
        if found:
            return found.group(0)
    return None


def _releases_taking(option: str, value: object, version: str) -> str:
    """Where a value one release refuses is another's (`--cuda-graph-impl full_iteration`, core_v0.18 on):
    the releases to name; else the recipe is to be fixed."""
    taking = tuple(v for v in megatron.version_names() if v != version and option in megatron.flags(v)
                   and _value_problem(megatron.flags(v)[option], value, v) is None)
    releases = tuple(v for v in taking if v in megatron.releases())
    if not releases:
        return "fix the value in the recipe"
    # the newest, as an unknown flag's help names the newest release with it: one run's helps agree
    return (f"{megatron.describe(taking)} take it: give `--megatron-version {releases[-1]}` (or the release "
            "the recipe ran), or fix the value in the recipe")


def _value_problem(flag: megatron.Flag, value: object, version: str) -> str | None:
    """Why the version's parser would refuse ``value`` (its type, its choices), or None."""
    items = value if isinstance(value, tuple) else (value,) if isinstance(value, str) else ()
    for item in items:
        if flag.type == "int" and not _is_int(item):
            return "a whole number"
        if flag.type == "float" and not _is_float(item):
            return "a number"
        if flag.choices is not None:
            choices = [str(c) for c in flag.choices]
            if item not in choices:
                return f"one of {', '.join(choices)} (Megatron-LM {version})"
    return None


def _is_int(text: str) -> bool:
    t = text.strip()
    return (t[1:] if t[:1] in "+-" else t).isascii() and (t[1:] if t[:1] in "+-" else t).isdigit()


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip().lower() not in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity")


def _shown(value: object) -> str:
    text = " ".join(value) if isinstance(value, tuple) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _listed(options: Sequence[str]) -> str:
    shown = [f"`{o}`" for o in dict.fromkeys(options)]
    return ", ".join(shown[:4]) + (f" and {len(shown) - 4} more" if len(shown) > 4 else "")


def _unknown_flag(word: Word, option: str, version: str, named: bool) -> Diagnostic:
    have = megatron.versions_with(option)
    if have:
        newest_release = next((v for v in reversed(megatron.releases()) if v in have), None)
        hint = (f"pass `--megatron-version {newest_release}` if the recipe runs on it" if newest_release
                else "drop it, or read the recipe at a version that has it")
        return Diagnostic(RECIPE_UNKNOWN_FLAG, f"`{option}` is not a flag of Megatron-LM {version}; "
                          f"{megatron.describe(have)} {'has' if len(have) == 1 else 'have'} it",
                          span=word.span, help=hint)
    known = megatron.flags(version)
    close = difflib.get_close_matches(option, list(known), n=1, cutoff=0.75)
    hint = f"did you mean `{close[0]}`?" if close else "check the flag's spelling"
    return Diagnostic(RECIPE_UNKNOWN_FLAG, f"`{option}` is not a flag of any Megatron-LM version primusc has read "
                      f"({megatron.describe(megatron.version_names())})", span=word.span, help=hint)


def _refuse_other_family(script: Word, path: str) -> None:
    """One refusal for a script (``path``: its text with forward slashes) that trains a model family
    primusc does not plan (BERT, T5, multimodal), before its flags, which would be read as a GPT's or
    refused one by one."""
    for tail, family in megatron.OTHER_SCRIPTS:
        if path == tail or path.endswith("/" + tail):
            raise CompileError(Diagnostic(
                RECIPE_UNSUPPORTED, f"`{script.text}` trains {family}: primusc plans the pretraining of decoder-only "
                "language models (Megatron-LM's pretrain_gpt.py, and pretrain_mamba.py or pretrain_hybrid.py for "
                "hybrids)",
                span=script.span,
                help="import a pretrain_gpt.py launch, or write the space by hand for a model primusc can describe"))


def _read_as_empty(w: Word, unset: Why) -> Diagnostic:
    return Diagnostic(RECIPE_EMPTY_VARIABLE, f"`{w.text}` stands for {unset.what}; the script never sets it, so it "
                      "is read as empty, as bash expands it", span=w.span,
                      help=f"if the run's environment sets it, give its flags with `--set {unset.variable}='--flag "
                           "VALUE ...'`")


def _unset_variable(w: Word) -> Why | None:
    """Why ``w`` is unknown, where it is nothing but a variable the script never sets (``${EXTRA_ARGS}``)."""
    if len(w.unknown) != 1 or not w.unknown[0].unset or not w.unknown[0].variable:
        return None
    why = w.unknown[0]
    return why if w.text in (f"${{{why.variable}}}", f"${why.variable}") else None


def _is_flag(text: str) -> bool:
    # a negative number (`--moe-aux-loss-coeff -1` never occurs, but `-1` is a value) is not a flag
    return text.startswith("--") or (text.startswith("-") and len(text) > 1 and not text[1:2].isdigit()
                                     and text[1:2] != ".")


def _script_end(words: list[Word]) -> int:
    """The index after the training script (``pretrain_gpt.py``), or 0 for a file of flags alone."""
    for i, w in enumerate(words):
        if w.text.endswith(".py"):
            return i + 1
        if w.text.startswith("--") and w.text.partition("=")[0] in megatron.flags(megatron.DEFAULT_VERSION) \
                and w.text.partition("=")[0].lstrip("-").replace("-", "_") not in LAUNCHER_VALUES:
            return 0  # Megatron's flags before any script: a plain arguments file
    return 0


def sbatch_setting(launch: Launch, options: tuple[str, ...], key: str) -> Entry | None:
    """A count an ``#SBATCH`` line of the script gives (``--nodes=4``; a task per GPU under ``srun``), where
    the launch line itself does not: the first of ``options`` set to a whole number."""
    given = dict(launch.directives)
    for option in options:
        value = given.get(option, "").split("-", 1)[0]  # `--nodes=2-4` asks for at least 2
        if value.isascii() and value.isdigit() and len(value) <= 6:
            return Entry(key, value, None, f"#SBATCH {option}={given[option]}")
    return None


def torchrun_nodes(words: list[Word], notes: list[str]) -> tuple[Entry | None, list[str]]:
    """The node count torchrun takes when its line gives no ``--nnodes``: one; None without torchrun."""
    if not any(w.text.rsplit("/", 1)[-1] in _TORCHRUN for w in words):
        return None, notes
    return (Entry("nnodes", "1", None, "torchrun's default"),
            [*notes, "torchrun is given no `--nnodes`: one node, torchrun's default"])


def launcher_settings(words: list[Word], problems: list[Diagnostic]) -> tuple[dict[str, Entry], list[str]]:
    """torchrun's options before the script; the launcher programs around them (``uv run``, ``srun``,
    ``python -m``, ``env``) are skipped, and their own options with them."""
    out: dict[str, Entry] = {}
    notes: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        name, eq, inline = w.text.lstrip("-").partition("=")
        key = name.replace("-", "_")
        if w.text.startswith("-") and key in LAUNCHER_VALUES:
            value: Word | None = Word(inline, w.span, w.unknown) if eq else (words[i + 1] if i + 1 < len(words)
                                                                              else None)
            i += 1 if eq else 2
            if value is None:
                problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{w.text}` needs a value", span=w.span))
                continue
            if key in ("container_image", "container_mounts"):
                continue  # srun's pyxis options: the site's (``scheduler.placement_of``)
            if key in ("nnodes", "nproc_per_node"):
                if value.unknown:
                    why = value.unknown[0]
                    problems.append(Diagnostic(RECIPE_SHELL_SYNTAX, f"`{w.text}` reads {why.what}",
                                               span=why.span or w.span,
                                               help=f"give it with `--set {why.variable}=VALUE`" if why.variable
                                               else "pass `--nodes` and `--gpus-per-node`"))
                    continue
                out[key] = Entry(key, value.text, w.span, w.text)
            else:
                notes.append(f"launcher `{w.text}` is the launcher's own setting; the emitted launch files set it")
            continue
        if w.text.startswith("-") and key in LAUNCHER_SWITCHES:
            i += 1
            continue
        i += 1
    return out, list(dict.fromkeys(notes))
