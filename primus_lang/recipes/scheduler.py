"""Where a recipe says its job runs, read into the fields of a site profile.

A launch script names its Slurm account, partition, QoS, reservation, time limit and node features in
``#SBATCH`` lines or on ``srun``, and the container pyxis runs it in (with that container's mounts) on
``srun``; Megatron-Bridge's two Slurm launchers take the same as options of their own. The import writes
them as the space's site, which the launch files read (``emit.sites``): they are not lost with the script.
A value the site cannot hold (a variable only the running script knows, a relative mount) is said in a
note and left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from attrs import frozen

from primus_lang.emit import VARIABLES
from primus_lang.emit.sites import slurm_seconds, slurm_time
from primus_lang.ir.site import ABSOLUTE, MOUNT_NAME, text_problem
from primus_lang.recipes.words import Launch, Word

# sbatch(1) and srun(1): the options of the job's placement, each to the site field that holds it
SLURM: Mapping[str, str] = {
    "--partition": "partition", "-p": "partition", "--account": "account", "-A": "account", "--qos": "qos",
    "-q": "qos", "--reservation": "reservation", "--time": "time_limit", "-t": "time_limit",
    "--constraint": "constraint", "-C": "constraint",
}
# pyxis's srun options (NVIDIA/pyxis README): the image and its mounts
PYXIS: Mapping[str, str] = {"--container-image": "image", "--container-mounts": "mounts"}
# pyxis switches that change how the container starts, not where the launch's files are: kept on srun
PYXIS_SWITCHES = frozenset({"--container-writable", "--container-readonly", "--container-remap-root",
                            "--no-container-remap-root", "--container-mount-home", "--no-container-mount-home",
                            "--no-container-entrypoint"})
# Megatron-Bridge 067f987 scripts/training/setup_experiment.py, its "Execution" argument group
TRAIN_SH: Mapping[str, str] = {"--account": "account", "--partition": "partition", "--time": "time_limit",
                               "--container-image": "image", "--mount": "mounts"}
# Megatron-Bridge's performance launcher, scripts/performance/argument_parser.py's "Slurm arguments"
PERFORMANCE: Mapping[str, str] = {
    "-a": "account", "--account": "account", "-p": "partition", "--partition": "partition", "-t": "time_limit",
    "--time_limit": "time_limit", "-i": "image", "--container_image": "image", "-cm": "mounts",
    "--custom_mounts": "mounts",
}
# the programs that end srun's own options on a launch line
_PROGRAMS = frozenset({"torchrun", "python", "python3", "bash", "sh", "env", "uv", "numactl", "apptainer",
                       "singularity", "docker", "podman"})
_ORDER = ("partition", "account", "qos", "reservation", "constraint", "time_limit", "runtime", "image")


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
    """Gathers a recipe's placement options, later ones over earlier ones (``#SBATCH`` lines, then srun's
    options, then a launcher's own)."""

    def __init__(self) -> None:
        self.fields: dict[str, str | float] = {}
        self.srun_args: list[str] = []
        self.mounts: dict[str, Mounted] = {}
        self.notes: list[str] = []

    def take(self, field: str, value: Word, origin: str) -> None:
        """``value`` for the site field ``field`` (``mounts``: a list of them), as ``origin`` wrote it."""
        if value.unknown:
            self.notes.append(f"`{origin}` is not carried to the site: it reads {value.unknown[0].what}, known "
                              "only when the script runs")
            return
        if field == "mounts":
            self._mounts(value.text, origin)
            return
        if field == "time_limit":
            problem = VARIABLES["time_limit"].check(value.text)
            if problem is None and slurm_seconds(value.text) > 0:
                self.fields[field] = slurm_seconds(value.text)
            else:
                self.notes.append(f"`{origin}` is not carried to the site: the time limit must be a Slurm time "
                                  "such as 04:00:00 or 1-00:00:00")
            return
        problem = text_problem(field, value.text)
        if problem is not None:
            self.notes.append(f"`{origin}` is not carried to the site: `{field}` {problem}")
            return
        self.fields[field] = value.text
        if field == "image":
            self.fields["runtime"] = "pyxis"

    def _mounts(self, text: str, origin: str) -> None:
        for item in (part for part in text.split(",") if part):
            host, _, rest = item.partition(":")
            path, _, flags = rest.partition(":")
            path = path or host
            if not (ABSOLUTE.fullmatch(host) and ABSOLUTE.fullmatch(path)):
                self.notes.append(f"mount `{item}` of `{origin}` is not carried to the site: a site mounts an absolute "
                                  "host folder at an absolute path")
                continue
            mount = Mounted(_mount_name(path, self.mounts), host, path, "ro" in flags.split("+"))
            self.mounts[mount.name] = mount

    def switch(self, option: str) -> None:
        if option not in self.srun_args:
            self.srun_args.append(option)

    def placement(self) -> Placement:
        fields = [(name, self.fields[name]) for name in _ORDER if name in self.fields]
        return Placement(tuple(fields), tuple(self.srun_args), tuple(self.mounts.values()),
                         tuple(dict.fromkeys(self.notes)))


def _mount_name(path: str, taken: Iterable[str]) -> str:
    """A volume name from the folder the container sees (``/lustre/data``: ``data``), unique."""
    base = re.sub(r"[^a-z0-9_]+", "_", path.rstrip("/").rsplit("/", 1)[-1].lower()).strip("_")[:50] or "mount"
    base = base if MOUNT_NAME.fullmatch(base) else "mount"
    name, n = base, 1
    while name in set(taken):
        n += 1
        name = f"{base}_{n}"
    return name


def options(words: list[Word], table: Mapping[str, str], collector: Collector, own: str) -> list[Word]:
    """``words`` without the options of ``table`` (a launcher's own, each taking a value), which go to
    ``collector``; ``own`` names the launcher in notes."""
    rest: list[Word] = []
    i = 0
    while i < len(words):
        w = words[i]
        name, eq, inline = w.text.partition("=")
        field = table.get(name)
        if field is None or (not eq and i + 1 >= len(words)):
            rest.append(w)
            i += 1
            continue
        value = Word(inline, w.span, w.unknown) if eq else words[i + 1]
        collector.take(field, value, f"{own} {name} {value.text}")
        i += 1 if eq else 2
    return rest


def read_srun(words: list[Word], collector: Collector) -> None:
    """The placement options and pyxis switches of the ``srun`` among a launch line's launcher words."""
    starts = [i for i, w in enumerate(words) if w.text.rsplit("/", 1)[-1] == "srun"]
    if not starts:
        return
    segment: list[Word] = []
    for w in words[starts[0] + 1:]:
        if w.text.rsplit("/", 1)[-1] in _PROGRAMS or w.text.endswith(".py"):
            break
        segment.append(w)
    for w in options(segment, {**SLURM, **PYXIS}, collector, "srun"):
        if w.text in PYXIS_SWITCHES:
            collector.switch(w.text)


def read_directives(launch: Launch, collector: Collector) -> None:
    """The placement options of the script's ``#SBATCH`` lines."""
    for option, value in launch.directives:
        field = SLURM.get(option)
        if field is not None and value:
            collector.take(field, Word(value), f"#SBATCH {option}={value}")


def placement_of(launch: Launch, launcher_words: list[Word]) -> Placement:
    """A launch script's placement: its ``#SBATCH`` lines, then its ``srun``'s options."""
    collector = Collector()
    read_directives(launch, collector)
    read_srun(launcher_words, collector)
    return collector.placement()
