"""What a space's site profile and run block give emission: defaults for the variables, data paths
read against the site's roots, and what a launcher cannot do of a site.

Precedence, lowest first: the variable table's defaults, the site and run block, ``--var``.
"""

from __future__ import annotations

import math
import posixpath

from primus_lang.emit.context import VARIABLES
from primus_lang.ir import Space
from primus_lang.ir.run import blend_problem
from primus_lang.ir.site import Site


def slurm_time(seconds: float) -> str:
    """``D-HH:MM:SS``, rounded up to the minute Slurm counts in: a fraction of a second is a minute,
    never ``00:00:00``, which Slurm reads as no time limit at all."""
    minutes = math.ceil(seconds / 60)
    days, rest = divmod(minutes, 24 * 60)
    text = f"{rest // 60:02d}:{rest % 60:02d}:00"
    return f"{days}-{text}" if days else text


def slurm_seconds(limit: str) -> float:
    """Seconds of a Slurm ``[D-]HH:MM:SS`` (or ``MM``, ``MM:SS``, ``HH:MM:SS``) time."""
    days, _, clock = limit.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    if days:  # D-HH[:MM[:SS]]
        parts += [0] * (3 - len(parts))
    if len(parts) == 1:
        seconds = parts[0] * 60
    elif len(parts) == 2:
        seconds = parts[0] * 60 + parts[1]
    else:
        seconds = parts[0] * 3600 + parts[1] * 60 + parts[2]
    return float(seconds + (int(days) * 86400 if days else 0))


def exit_minutes(limit: str) -> int:
    """When a run under the time limit ``limit`` should stop by itself (Megatron's
    ``--exit-duration-in-mins``): a tenth of the limit before the kill, at least one minute and at
    most fifteen (the time to write a checkpoint); at least one minute in."""
    minutes = slurm_seconds(limit) / 60
    return max(1, math.floor(minutes - min(15.0, max(1.0, math.ceil(minutes / 10)))))


# Launch variables that name a Megatron setting of their own: a recipe's passthrough value (an imported
# experiment's `train_iters: 50`) is the launch's, so it is the variable's default too, and the manifest
# says what runs; a site, a run block or a `--var` still decide over it
_SETTING_VARIABLES = ("train_iters", "save_interval", "eval_iters", "eval_interval", "log_interval", "lr")


def _run_settings(space: Space) -> dict[str, str]:
    """The launch variables among the Megatron settings that the space's run block sets, as text."""
    run = space.run
    if run is None:
        return {}
    out = {name: str(value) for name, value in (
        ("train_iters", run.train_iters), ("save_interval", run.save_interval), ("log_interval", run.log_interval),
    ) if value}
    if run.lr:
        out["lr"] = repr(run.lr)
    return out


def decided_settings(space: Space) -> set[str]:
    """The Megatron settings among the launch variables that the space's run block sets: the passthrough's
    own value of them yields (a `--var` decides over both)."""
    return set(_run_settings(space))


def variable_defaults(space: Space) -> dict[str, str]:
    carried = dict(space.passthrough)
    # a value the variable would refuse is left to the launch as written (the passthrough carries it)
    out: dict[str, str] = {name: str(carried[name]) for name in _SETTING_VARIABLES
                           if name in carried and not isinstance(carried[name], bool)
                           and VARIABLES[name].check(str(carried[name])) is None}
    site, run = space.site, space.run
    if site is not None:
        out.update({name: value for name, value in (
            ("partition", site.partition), ("account", site.account), ("container_image", site.image),
            ("megatron_dir", site.megatron_dir), ("primus_dir", site.primus_dir), ("bridge_dir", site.bridge_dir),
            ("namespace", site.namespace),
        ) if value})
        out["container"] = site.runtime
        out["slurm_gpus"] = site.gpu_request.replace("_", "-")
        if site.time_limit:
            out["time_limit"] = slurm_time(site.time_limit)
    if run is not None:
        out.update({name: value for name, value in (
            ("data_path", run.data or run.train_data), ("tokenizer_model", run.tokenizer_model),
            ("tokenizer_type", run.tokenizer), ("checkpoint_dir", run.checkpoint_dir),
        ) if value})
        out.update(_run_settings(space))
    if space.settings.megatron_version:
        out["megatron_version"] = space.settings.megatron_version
    if space.settings.bridge_version:
        out["bridge_version"] = space.settings.bridge_version
    return out


def under(root: str, path: str) -> str:
    """``path`` read from ``root`` when it is relative (and a root is set)."""
    return posixpath.join(root, path) if root and path and not path.startswith("/") else path


def data_paths(text: str, root: str) -> tuple[str, ...]:
    """A prefix or weighted blend as Megatron's ``nargs='*'`` takes it: one argument per word of a
    blend, the whole text as one argument otherwise (a single prefix may hold spaces)."""
    words = text.split()
    if len(words) > 1 and blend_problem(text) is None:
        return tuple(w if i % 2 == 0 else under(root, w) for i, w in enumerate(words))
    return (under(root, text),)


def site_problems(site: Site | None, launcher: str) -> list[str]:
    """What the launcher would have to drop of the site (P7013)."""
    if site is None:
        return []
    out: list[str] = []
    if launcher != "k8s":
        out += [f"mount `{m.name}` is the volume claim `{m.claim}`, which only Kubernetes mounts"
                for m in site.mounts if m.claim]
    else:
        out += [f"`env` forwards `{name}`: a Kubernetes pod has no submitter's environment to take it from "
                f"(read it from a Secret: `secrets = \"{name}=SECRET/KEY\"`)" for name in site.forwarded()]
    if launcher != "k8s" and site.secrets:
        out.append("`secrets` are read from Kubernetes Secrets, which only a pod has (on Slurm: `env { NAME = forward }`)")
    if launcher == "local" and site.mounts:
        out.append("the site mounts folders into containers, and the local launcher starts none")
    return out
