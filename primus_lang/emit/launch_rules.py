"""A launch's settings checked against what its Megatron-LM refuses at start (``frameworks.rules``).

An imported recipe's own settings are carried to the launch as written, and some hold only beside
settings the recipe had and a candidate of its space does not: Megatron-FSDP's checkpoint format and
buffer registration beside the distributed optimizer, a sample-based schedule beside an iteration count.
Where a rule the settings break reads a carried setting, that setting is left out (primusc's own value,
or the parser's default, takes its place) and the launch says so; a rule broken by primusc's own settings
alone is a problem that refuses the emission, since the launch would stop at start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from primus_lang.emit.arguments import Settings
from primus_lang.emit.profiles import Profile
from primus_lang.frameworks import megatron, rules

_ABSENT = object()


@frozen
class LeftOut:
    """Carried settings a launch leaves out, and the rule of its Megatron-LM they break."""

    settings: tuple[tuple[str, Any], ...]  # (setting, the recipe's value)
    rule: rules.Rule
    version: str


def arguments(settings: Mapping[str, Any], profile: Profile) -> dict[str, Any]:
    """``settings`` as the argparse dests of ``profile``'s version (a setting it has no flag for is left out)."""
    dests = megatron.by_dest(profile.name)
    flags = megatron.flags(profile.name)
    out: dict[str, Any] = {}
    for key, value in settings.items():
        dest = profile.dest(key)
        if dest not in dests:
            flag = flags.get("--" + dest.replace("_", "-"))
            if flag is None:
                continue
            dest = flag.dest
        out[dest] = value
    return out


def settle(settings: Settings, own: Mapping[str, Any], carried: frozenset[str],
           profile: Profile) -> tuple[list[LeftOut], list[str]]:
    """Leave out of ``settings`` (in place) the carried settings a rule of ``profile``'s version refuses beside
    the others: returns what was left out and, for rules broken by ``own`` settings alone, the problems."""
    left: list[LeftOut] = []
    for _ in range(len(carried) + 1):  # each round leaves out at least one carried setting
        found = rules.broken(arguments(settings, profile), profile.name)
        if not found:
            return left, []
        culprit = next(((rule, keys) for rule in found if (keys := _carried_in(rule, settings, own, carried, profile))),
                       None)
        if culprit is None:
            return left, [problem(rule, profile.name) for rule in found]
        rule, keys = culprit
        keys = _fewest(rule, keys, settings, own, profile)
        left.append(LeftOut(tuple((k, settings[k]) for k in keys), rule, profile.name))
        for k in keys:
            _restore(settings, own, k)
    return left, [problem(rule, profile.name) for rule in rules.broken(arguments(settings, profile), profile.name)]


def _restore(settings: Settings, own: Mapping[str, Any], key: str) -> None:
    """``key`` back to primusc's own value, or to the parser's default where primusc writes none."""
    if key in own:
        settings[key] = own[key]
    else:
        del settings[key]


def _fewest(rule: rules.Rule, keys: list[str], settings: Settings, own: Mapping[str, Any], profile: Profile) -> list[str]:
    """The one carried setting whose leaving out mends ``rule`` (a recipe's batch ramp-up, not its iteration
    count, which the launch sets either way), else all of ``keys``."""
    for key in keys:
        trial = dict(settings)
        _restore(trial, own, key)
        if rule not in rules.broken(arguments(trial, profile), profile.name):
            return [key]
    return keys


def _carried_in(rule: rules.Rule, settings: Settings, own: Mapping[str, Any], carried: frozenset[str],
                profile: Profile) -> list[str]:
    """The carried settings, changed from primusc's own, that ``rule`` reads."""
    reads = rule.reads
    flags = megatron.flags(profile.name)
    out = []
    for key in settings:
        if key not in carried or settings[key] == own.get(key, _ABSENT):
            continue
        dest = profile.dest(key)
        flag = flags.get("--" + dest.replace("_", "-"))
        if dest in reads or (flag is not None and flag.dest in reads):
            out.append(key)
    return out


def problem(rule: rules.Rule, version: str) -> str:
    when = "" if rule.when is None else f" when `{rule.condition}`"
    return (f"settings Megatron-LM {version} refuses at start: it requires `{rule.requirement}`{when} "
            f"(\"{rule.message}\", {rule.cite(version)})")
