"""Where a recipe says its job runs, read into the fields of a site profile.

A launch script names its Slurm account, partition, QoS, reservation, time limit and node features in
``#SBATCH`` lines or on ``srun``, and the container pyxis runs it in (with that container's mounts) on
``srun``; Megatron-Bridge's two Slurm launchers take the same as options of their own. The import writes
them as the space's site, which the launch files read (``emit.sites``): they are not lost with the script.
A value the site cannot hold (a variable only the running script knows, a relative mount) is said in a
note and left out.

Precedence follows Slurm's: the job's ``#SBATCH`` lines (and sbatch's own options, read after them) decide
the allocation, and an ``srun`` inside it only fills what they leave unset (its ``-t`` is a step's limit
within the job's, its ``-p`` cannot move the job). A launcher that writes the job itself (train.sh, the
performance launcher) is the only source of what it takes, its own defaults included.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

from attrs import frozen

from primus_lang.emit import VARIABLES, slurm_seconds, slurm_time
from primus_lang.frameworks import bridge
from primus_lang.ir.site import ABSOLUTE, MOUNT_NAME, text_problem
from primus_lang.recipes.words import Launch, Word, shown, slurm_options

# sbatch(1) and srun(1): the options of the job's placement, each to the site field that holds it
SLURM: Mapping[str, str] = {
    "--partition": "partition", "-p": "partition", "--account": "account", "-A": "account", "--qos": "qos",
    "-q": "qos", "--reservation": "reservation", "--time": "time_limit", "-t": "time_limit",
    "--constraint": "constraint", "-C": "constraint",
}
# pyxis's srun options (NVIDIA/pyxis README): the image and its mounts
PYXIS: Mapping[str, str] = {"--container-image": "image", "--container-mounts": "mounts"}
_SRUN: Mapping[str, str] = {**SLURM, **PYXIS}
# pyxis switches that change how the container starts, not where the launch's files are: kept on srun
PYXIS_SWITCHES = frozenset({"--container-writable", "--container-readonly", "--container-remap-root",
                            "--no-container-remap-root", "--container-mount-home", "--no-container-mount-home",
                            "--no-container-entrypoint"})


@frozen
class Launcher:
    """A launcher that writes the Slurm job itself: its options that say where the job runs (each to a site
    field), those that take more sbatch parameters (``KEY=VALUE;...``) or srun options (a list), and what it
    falls back to where the line does not say (a value, or ``$VARIABLE`` from the script's environment)."""

    name: str
    fields: Mapping[str, str]
    sbatch_params: frozenset[str] = frozenset()
    srun_args: frozenset[str] = frozenset()
    defaults: Mapping[str, str] = {}


# What Megatron-Bridge's launchers' options say of where the job runs, by their dest: the site field each
# fills, and the options that take more sbatch parameters or srun arguments. Their spellings and defaults
# are the launchers' own, read from their sources per release (frameworks/bridge/launchers.json)
_BRIDGE_FIELDS = {"account": "account", "partition": "partition", "time": "time_limit", "time_limit": "time_limit",
                  "container_image": "image", "mount": "mounts", "custom_mounts": "mounts"}
_BRIDGE_SBATCH = frozenset({"additional_slurm_params"})
_BRIDGE_SRUN = frozenset({"srun_args", "custom_srun_args"})
_BRIDGE_NAMES = {"train.sh": "train.sh", "performance": "the performance launcher"}


@functools.cache
def bridge_launcher(launcher: str, version: str) -> Launcher:
    """``launcher`` (``train.sh``, ``performance``) of Megatron-Bridge ``version`` as a placement reader."""
    opts = bridge.launcher_options(launcher, version)
    return Launcher(
        _BRIDGE_NAMES[launcher],
        {spelled: _BRIDGE_FIELDS[o.dest] for o in opts if o.dest in _BRIDGE_FIELDS for spelled in o.options},
        frozenset(spelled for o in opts if o.dest in _BRIDGE_SBATCH for spelled in o.options),
        frozenset(spelled for o in opts if o.dest in _BRIDGE_SRUN for spelled in o.options),
        {_BRIDGE_FIELDS[o.dest]: f"${o.env}" if o.env else o.default or "" for o in opts
         if o.dest in _BRIDGE_FIELDS and (o.env or o.default)})


# the programs that end srun's own options on a launch line
_PROGRAMS = frozenset({"torchrun", "python", "python3", "bash", "sh", "env", "uv", "numactl", "apptainer",
                       "singularity", "docker", "podman"})
_ORDER = ("partition", "account", "qos", "reservation", "constraint", "time_limit", "runtime", "image")
_PYXIS_FLAGS = re.compile(r"[a-z+]*")


@frozen
class Mounted:
    """One bind mount a recipe's container has: a host folder at ``path`` inside it."""

    name: str
    host: str
    path: str
    read_only: bool = False


@frozen
class Placement:
    """The site fields a recipe sets, as the language writes them (``time_limit`` in seconds), in the
    order a site lists them; the pyxis switches its ``srun`` keeps; its mounts; what was not carried."""

    fields: tuple[tuple[str, str | float], ...] = ()
    srun_args: tuple[str, ...] = ()
    mounts: tuple[Mounted, ...] = ()
    notes: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.fields or self.srun_args or self.mounts)

    def carried(self) -> str:
        """What the site holds, for the import's note."""
        parts = [f"{name} `{_shown(name, value)}`" for name, value in self.fields]
        parts += [f"srun `{' '.join(self.srun_args)}`"] if self.srun_args else []
        parts += [f"mount `{m.host}:{m.path}{':ro' if m.read_only else ''}`" for m in self.mounts]
        return ", ".join(parts)


def _shown(name: str, value: str | float) -> str:
    if name == "time_limit" and isinstance(value, float):
        return slurm_time(value)
    return str(value)


class Collector:
    """Gathers a recipe's placement options. ``take`` with ``job`` (the allocation's own: ``#SBATCH``, a
    launcher that writes the job) decides over a step's (``srun``'s), which only fills what is unset."""

    def __init__(self) -> None:
        self.fields: dict[str, str | float] = {}
        self.from_job: set[str] = set()
        self.origin: dict[str, str] = {}
        self.srun_args: list[str] = []
        self.mounts: dict[str, Mounted] = {}
        self.notes: list[str] = []

    def take(self, field: str, value: Word, origin: str, job: bool = True) -> None:
        """``value`` for the site field ``field`` (``mounts``: a list of them), as ``origin`` wrote it."""
        said = f"`{shown(origin)}`"
        if value.unknown:
            self.notes.append(f"{said} is not carried to the site: it reads {value.unknown[0].what}, known only "
                              "when the script runs" + (f" (`--set {value.unknown[0].variable}=VALUE` gives it)"
                                                        if value.unknown[0].variable else ""))
            return
        if field == "mounts":
            self._mounts(value.text, said)
            return
        parsed = self._parse(field, value.text, said)
        if parsed is None:
            return
        if not job and field in self.from_job:
            if parsed != self.fields[field]:
                self.notes.append(f"{said} is the step's, inside the job's `{self.origin[field]}`: the job's is carried")
            return
        self.fields[field], self.origin[field] = parsed, shown(origin)
        if job:
            self.from_job.add(field)
        if field == "image":
            self.fields["runtime"] = "pyxis"

    def _parse(self, field: str, text: str, said: str) -> str | float | None:
        if field == "time_limit":
            if VARIABLES["time_limit"].check(text) is None and slurm_seconds(text) > 0:
                return slurm_seconds(text)
            self.notes.append(f"{said} is not carried to the site, which holds a limit in [D-]HH:MM:SS (no "
                              "unlimited one)")
            return None
        problem = text_problem(field, text)
        if problem is not None:
            self.notes.append(f"{said} is not carried to the site: `{field}` {problem}")
            return None
        return text

    def default(self, field: str, value: str, env: Mapping[str, str], launcher: str) -> None:
        """``launcher``'s own fallback for a field its line leaves unset: a value, or ``$NAME`` from the
        script's environment (nothing where the script does not set it). Such a launcher submits a job of its
        own, so nothing else has set the field (the script's `#SBATCH` lines are not read beside it)."""
        if field in self.fields:
            return
        text = env.get(value[1:], "") if value.startswith("$") else value
        if text:
            where = f"`{value[1:]}` in the script's environment" if value.startswith("$") else "its default"
            self.take(field, Word(text), f"{launcher}'s {field} ({where})")

    def _mounts(self, text: str, said: str) -> None:
        for item in (part for part in text.split(",") if part):
            host, _, rest = item.partition(":")
            path, _, flags = rest.partition(":")
            path = path or host
            if not (ABSOLUTE.fullmatch(host) and ABSOLUTE.fullmatch(path) and _PYXIS_FLAGS.fullmatch(flags)):
                self.notes.append(f"mount `{shown(item)}` of {said} is not carried to the site: a site mounts an "
                                  "absolute host folder at an absolute path (`HOST[:PATH[:ro]]`)")
                continue
            mount = Mounted(_mount_name(path, self.mounts), host, path, "ro" in flags.split("+"))
            self.mounts[mount.name] = mount

    def switch(self, option: str) -> None:
        if option in PYXIS_SWITCHES and option not in self.srun_args:
            self.srun_args.append(option)

    def placement(self) -> Placement:
        notes = list(self.notes)
        srun_args, mounts = tuple(self.srun_args), tuple(self.mounts.values())
        if "image" not in self.fields and (srun_args or mounts):
            # a mount or a switch of pyxis's without its image would be an srun option the launch runs bare with
            notes.append("the container's mounts and switches are not carried: its image is not (above), and "
                         "without it the launch runs outside a container")
            srun_args, mounts = (), ()
        fields = tuple((name, self.fields[name]) for name in _ORDER if name in self.fields)
        if fields and "time_limit" not in self.fields:
            notes.append(f"the script sets no time limit the site can hold: the launch asks for "
                         f"{VARIABLES['time_limit'].default} (a site's `time_limit` or `--var time_limit` gives another)")
        return Placement(fields, srun_args, mounts, tuple(dict.fromkeys(notes)))


def _mount_name(path: str, taken: Iterable[str]) -> str:
    """A volume name from the folder the container sees (``/lustre/data``: ``data``), unique."""
    base = re.sub(r"[^a-z0-9_]+", "_", path.rstrip("/").rsplit("/", 1)[-1].lower()).strip("_")[:50] or "mount"
    base = base if MOUNT_NAME.fullmatch(base) else "mount"
    used = set(taken)
    name, n = base, 1
    while name in used:
        n += 1
        name = f"{base}_{n}"
    return name


def launcher_options(words: list[Word], launcher: Launcher, collector: Collector,
                     env: Mapping[str, str]) -> list[Word]:
    """``words`` without ``launcher``'s placement options, which go to ``collector`` with the launcher's
    defaults for what the line leaves unset."""
    rest: list[Word] = []
    i = 0
    while i < len(words):
        w = words[i]
        name, eq, inline = w.text.partition("=")
        takes = name in launcher.fields or name in launcher.sbatch_params or name in launcher.srun_args
        if not takes or (not eq and i + 1 >= len(words)):
            rest.append(w)
            i += 1
            continue
        value = Word(inline, w.span, w.unknown) if eq else words[i + 1]
        origin = f"{launcher.name} {name} {value.text}"
        if name in launcher.fields:
            collector.take(launcher.fields[name], value, origin)
        elif name in launcher.sbatch_params:
            _sbatch_params(value, origin, collector)
        else:
            for option in value.text.split(","):
                collector.switch(option.strip())
        i += 1 if eq else 2
    for field, default in launcher.defaults.items():
        collector.default(field, default, env, launcher.name)
    return rest


def _sbatch_params(value: Word, origin: str, collector: Collector) -> None:
    """More sbatch parameters, as Bridge's launchers split them (the performance launcher's
    parse_additional_slurm_params; train.sh's takes the first form only): ``KEY=VALUE;KEY=VALUE``, else
    ``KEY=VALUE KEY=VALUE``, else one parameter (``nodelist=n1,n2``)."""
    parts = value.text.split(";") if ";" in value.text else value.text.split()
    for part in (p.strip() for p in parts if p.strip()):
        key, _, text = part.partition("=")
        field = SLURM.get(f"--{key.strip()}")
        if field is not None and text:
            collector.take(field, Word(text.strip(), value.span, value.unknown), f"{origin} ({key.strip()})")


def read_srun(words: list[Word], collector: Collector) -> None:
    """The placement options and pyxis switches of the ``srun`` among a launch line's launcher words: a
    step's, which the job's own decide over."""
    starts = [i for i, w in enumerate(words) if w.text.rsplit("/", 1)[-1] == "srun"]
    if not starts:
        return
    segment: list[Word] = []
    for w in words[starts[0] + 1:]:
        if w.text.rsplit("/", 1)[-1] in _PROGRAMS or w.text.endswith(".py"):
            break
        segment.append(w)
    options, _ = slurm_options([w.text for w in segment])
    by_text = {w.text: w for w in segment}
    for option, value in options:
        field = _SRUN.get(option)
        if field is not None and value:
            # the word the value came from keeps why it is unknown (`$IMAGE` the script never sets)
            word = next((by_text[t] for t in (f"{option}={value}", f"{option}{value}", value) if t in by_text),
                        Word(value))
            collector.take(field, Word(value, word.span, word.unknown), f"srun {option} {value}", job=False)
        elif not value:
            collector.switch(option)


def read_directives(launch: Launch, collector: Collector) -> None:
    """The placement options of the script's ``#SBATCH`` lines and sbatch's own options, which decide over
    them (said where they differ): the job's."""
    submitted = set(launch.submitted)
    lines: dict[str, tuple[str, str]] = {}  # field -> (how the script's own line wrote it, the value)
    for option, value in launch.directives:
        field = SLURM.get(option)
        if field is None or not value:
            continue
        if (option, value) in submitted:
            origin = f"sbatch {option} {value}"
            if field in lines and lines[field][1] != value:
                collector.notes.append(f"`{shown(origin)}` decides over the script's `{shown(lines[field][0])}`")
        else:
            origin = f"#SBATCH {option}{'=' if option.startswith('--') else ' '}{value}"
            lines[field] = (origin, value)
        collector.take(field, Word(value), origin)


def placement_of(launch: Launch, launcher_words: list[Word]) -> Placement:
    """A launch script's placement: its ``#SBATCH`` lines, then what its ``srun`` adds."""
    collector = Collector()
    read_directives(launch, collector)
    read_srun(launcher_words, collector)
    return collector.placement()
