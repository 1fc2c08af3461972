"""A Megatron-LM command line or arguments file → ``Recipe``: launcher words skipped (torchrun's
node and GPU counts kept for the cluster), every flag checked against the known arguments."""

from __future__ import annotations

import difflib

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import (
    RECIPE_BAD_VALUE,
    RECIPE_CONTRADICTION,
    RECIPE_UNKNOWN_FLAG,
    RECIPE_UNREADABLE,
)
from primus_lang.recipes.flags import KNOWN, LAUNCHER_SWITCHES, LAUNCHER_VALUES, LAUNCHERS, LIST, SWITCH
from primus_lang.recipes.settings import Entry, Recipe
from primus_lang.recipes.words import Word, split_words


def read_command_line(text: str, file: str) -> Recipe:
    words, problems = split_words(text, file)
    if not words and not problems:
        raise CompileError(Diagnostic(RECIPE_UNREADABLE, f"`{file}` holds no command line (it is empty, or comments "
                                      "only): nothing to read",
                                      help="pass a Megatron-LM command line (`torchrun ... pretrain_gpt.py --flags`), "
                                      "a Megatron-Bridge launch (`run_recipe.py --recipe NAME ...`) or a Primus "
                                      "experiment YAML"))
    notes: list[str] = []
    start = _script_end(words)
    nodes = gpus = None
    if start:
        launcher, notes = _launcher(words[:start], problems)
        nodes, gpus = launcher.get("nnodes"), launcher.get("nproc_per_node")
        if nodes is None:
            nodes, notes = torchrun_nodes(words[:start], notes)
    entries: dict[str, Entry] = {}
    i = start
    while i < len(words):
        w = words[i]
        if not w.text.startswith("--"):
            problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{w.text}` is not a flag, nor the value of one",
                                       span=w.span, help="every word after the script is `--flag` or its value"))
            i += 1
            continue
        name, eq, inline = w.text[2:].partition("=")
        dest = name.replace("-", "_")
        arity = KNOWN.get(dest)
        if arity is None:
            close = difflib.get_close_matches(dest, list(KNOWN), n=1)
            hint = f"did you mean `--{close[0].replace('_', '-')}`?" if close else "check the flag's spelling"
            problems.append(Diagnostic(RECIPE_UNKNOWN_FLAG, f"`--{name}` is not a Megatron-LM argument primusc knows",
                                       span=w.span, help=hint))
            i += 1
            while i < len(words) and not words[i].text.startswith("--"):
                i += 1  # its values, whatever they are, belong to it
            continue
        values: list[Word] = []
        i += 1
        if eq:
            values.append(Word(inline, w.span))
        elif arity != SWITCH:
            while i < len(words) and not _is_flag(words[i].text) and (arity == LIST or not values):
                values.append(words[i])
                i += 1
        value: object
        if arity == SWITCH:
            if eq:
                problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`--{name}` is a switch and takes no value",
                                           span=w.span, help=f"write `--{name}` alone"))
            value = True
        elif not values:
            problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`--{name}` needs a value", span=w.span,
                                       help="give it before the next flag"))
            continue
        elif arity == LIST:
            value = tuple(v.text for v in values)
        else:
            value = values[0].text
        previous = entries.get(dest)
        if previous is not None and previous.value != value:
            problems.append(Diagnostic(RECIPE_CONTRADICTION, f"`--{name}` is given twice, with different values",
                                       span=w.span, notes=(f"first at {previous.span}",),
                                       help="Megatron keeps the last silently; keep the one you mean"))
        entries[dest] = Entry(dest, value, w.span, f"--{name}")
    if problems:
        raise CompileError(problems)
    if not entries:
        # a launcher and a script alone: every setting would be reported missing, one cause
        raise CompileError(Diagnostic(RECIPE_UNREADABLE, "the command line sets no Megatron-LM argument: nothing "
                                      "to read", span=words[start - 1].span if start else None,
                                      help="add the run's flags after the script (`pretrain_gpt.py "
                                      "--num-layers 32 --hidden-size 4096 ...`)"))
    return Recipe(file, "megatron", entries, nodes=nodes, gpus_per_node=gpus, notes=tuple(notes))


def _is_flag(text: str) -> bool:
    # a negative number (`--moe-aux-loss-coeff -1` never occurs, but `-1` is a value) is not a flag
    return text.startswith("--") or (text.startswith("-") and len(text) > 1 and not text[1:2].isdigit())


def _script_end(words: list[Word]) -> int:
    """The index after the training script (``pretrain_gpt.py``), or 0 for a file of flags alone."""
    for i, w in enumerate(words):
        if w.text.endswith(".py"):
            return i + 1
        if w.text.startswith("--") and w.text[2:].partition("=")[0].replace("-", "_") in KNOWN:
            return 0  # Megatron's flags before any script: a plain arguments file
    return 0


# torchrun's own names; without `--nnodes` each runs on one node (torch.distributed.run's default "1:1")
_TORCHRUN = ("torchrun", "torch.distributed.run", "torch.distributed.launch")


def torchrun_nodes(words: list[Word], notes: list[str]) -> tuple[Entry | None, list[str]]:
    """The node count torchrun takes when its line gives no ``--nnodes``: one; None without torchrun."""
    if not any(w.text.rsplit("/", 1)[-1] in _TORCHRUN for w in words):
        return None, notes
    return (Entry("nnodes", "1", None, "torchrun's default"),
            [*notes, "torchrun is given no `--nnodes`: one node, torchrun's default"])


def _launcher(words: list[Word], problems: list[Diagnostic]) -> tuple[dict[str, Entry], list[str]]:
    out: dict[str, Entry] = {}
    notes: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        name, eq, inline = w.text.lstrip("-").partition("=")
        key = name.replace("-", "_")
        if w.text.startswith("-") and key in LAUNCHER_VALUES:
            if eq:
                out[key] = Entry(key, inline, w.span, w.text)
                i += 1
            elif i + 1 < len(words):
                out[key] = Entry(key, words[i + 1].text, w.span, w.text)
                i += 2
            else:
                problems.append(Diagnostic(RECIPE_BAD_VALUE, f"`{w.text}` needs a value", span=w.span))
                i += 1
            if key not in ("nnodes", "nproc_per_node"):
                notes.append(f"launcher `{w.text}` is the launcher's own setting; the emitted launch files set it")
            continue
        if (w.text.startswith("-") and key in LAUNCHER_SWITCHES) or w.text.rsplit("/", 1)[-1] in LAUNCHERS \
                or w.text.endswith(".py"):
            i += 1
            continue
        problems.append(Diagnostic(RECIPE_UNKNOWN_FLAG, f"`{w.text}` is not a launcher word primusc knows",
                                   span=w.span, help="the line should read `torchrun [options] pretrain_gpt.py --flags`"))
        i += 1
    return out, notes
