"""A launch's settings checked against what its Megatron-LM refuses at start (``frameworks.rules``).

An imported recipe's own settings are carried to the launch as written, and some hold only beside
settings the recipe had and a candidate of its space does not: Megatron-FSDP's checkpoint format and
buffer registration beside the distributed optimizer, a sample-based schedule beside an iteration count.
Where a rule the settings break reads a carried setting, that setting is left out (primusc's own value,
or the parser's default, takes its place) and the launch says so; a rule broken by primusc's own settings
alone is a problem that refuses the emission, since the launch would stop at start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from primus_lang.emit.arguments import Settings
from primus_lang.emit.profiles import Profile
from primus_lang.frameworks import rules, spelling

_ABSENT = object()


@frozen
class LeftOut:
    """Carried settings a launch leaves out, and the rule of its Megatron-LM they break."""

    settings: tuple[tuple[str, Any], ...]  # (setting, the recipe's value)
    rule: rules.Rule
    version: str
    beside: tuple[tuple[str, Any], ...] = ()  # the rule's other arguments, as the launch has them


@frozen
class Unrun:
    """A carried setting a launch leaves out since the framework itself (not Megatron-LM's ``validate_args``)
    refuses it beside the candidate's settings: why, in a sentence's predicate, and where the framework says so."""

    setting: str
    value: Any
    why: str
    where: str


def arguments(settings: Mapping[str, Any], profile: Profile) -> dict[str, Any]:
    """``settings`` as the argparse dests and values of ``profile``'s version (``Profile.arguments``)."""
    return profile.arguments(settings)


def settle(settings: Settings, own: Mapping[str, Any], carried: frozenset[str], profile: Profile,
           beneath: Mapping[str, Any] | None = None) -> tuple[list[LeftOut], list[str]]:
    """Leave out of ``settings`` (in place) the carried settings a rule of ``profile``'s version refuses beside
    the others: returns what was left out and the problems, the rules that leaving out no carried setting
    mends (``beneath``: what the framework sets where the launch does not, Primus's preset; the parser's
    defaults below that)."""
    def found(trial: Mapping[str, Any]) -> list[rules.Rule]:
        return rules.broken(arguments(trial, profile), profile.name, beneath)

    left: list[LeftOut] = []
    unmendable: list[rules.Rule] = []
    for _ in range(len(carried) + 1):  # each round leaves out at least one carried setting
        broken = [r for r in found(settings) if r not in unmendable]
        if not broken:
            break
        rule = broken[0]
        keys = _mending(rule, _carried_in(rule, settings, own, carried, profile), settings, own, found)
        if not keys:
            unmendable.append(rule)
            continue
        gone = tuple((k, settings[k]) for k in keys)
        for k in keys:
            _restore(settings, own, k)
        dests = {stored[0] for k, v in gone if (stored := profile.argument(k, v)) is not None}
        beside = rules.known(arguments(settings, profile), profile.name, sorted(rule.reads - dests), beneath)
        left.append(LeftOut(gone, rule, profile.name, tuple(beside.items())))
    return left, [problem(rule, profile.name) for rule in found(settings)]


def _restore(settings: Settings, own: Mapping[str, Any], key: str) -> None:
    """``key`` back to primusc's own value, or to the framework's default where primusc writes none."""
    if key in own:
        settings[key] = own[key]
    else:
        del settings[key]


def _mending(rule: rules.Rule, keys: list[str], settings: Settings, own: Mapping[str, Any],
             found: Callable[[Mapping[str, Any]], list[rules.Rule]]) -> list[str]:
    """The fewest carried settings whose leaving out mends ``rule``: one (a recipe's batch ramp-up, not its
    iteration count, which the launch sets either way), else all of ``keys``, else none (leaving them out
    would lose the recipe's settings and mend nothing)."""
    for trying in [[k] for k in keys] + ([keys] if len(keys) > 1 else []):
        trial = dict(settings)
        for key in trying:
            _restore(trial, own, key)
        if rule not in found(trial):
            return trying
    return []


def _carried_in(rule: rules.Rule, settings: Settings, own: Mapping[str, Any], carried: frozenset[str],
                profile: Profile) -> list[str]:
    """The carried settings, changed from primusc's own, that ``rule`` reads."""
    out = []
    for key, value in settings.items():
        if key not in carried or value == own.get(key, _ABSENT):
            continue
        stored = profile.argument(key, value)
        if stored is not None and stored[0] in rule.reads:
            out.append(key)
    return out


def problem(rule: rules.Rule, version: str) -> str:
    """A rule primusc's own settings break, with the knobs that write what it reads (what to change)."""
    knobs = sorted({k for dest in rule.reads if (k := spelling.knob_behind(dest))})
    change = f"; the knobs that set it: {', '.join(f'`{k}`' for k in knobs)}" if knobs else ""
    return f"settings Megatron-LM {version} refuses at start: it {rule.says()} ({rule.quoted(version)}){change}"
