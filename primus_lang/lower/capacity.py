"""A space's cluster axes and training run: ``nodes : 8 | 16``, ``gpu : h100_sxm_calibrated | b200_calibrated``,
``train_tokens = 15T``, ``minimize cost``, ``require time_to_train <= 30``.

The recipe axes are searched on each cluster the cluster axes span (``ir.space.cluster_points``); the
clusters are then compared by what a whole run takes (``search.capacity``)."""

from __future__ import annotations

import difflib
import math
import re
from typing import Any

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics import codes_names as N
from primus_lang.diagnostics import codes_types as T
from primus_lang.ir.expr import Const, Expr, Name, map_children, names_in
from primus_lang.ir.hardware import Cluster, Gpu
from primus_lang.ir.quantity import Kind, kind_of
from primus_lang.ir.space import (
    CAPACITY_NAMES,
    Capacity,
    ClusterAxis,
    Constraint,
    Space,
    cluster_label,
    cluster_points,
)
from primus_lang.ir.text import COUNT_SUFFIXES
from primus_lang.lower.domains import expand
from primus_lang.lower.names import resolve_expr, type_of
from primus_lang.lower.scope import LoadedModule, Resolver
from primus_lang.lower.values import fail
from primus_lang.syntax import ast

# the cluster's fields a space may choose (its name and span are not choices)
CLUSTER_FIELDS = tuple(f.name for f in attrs.fields(Cluster) if f.name not in ("name", "span"))
_TOKEN_COUNT = re.compile(r"([0-9]{1,6})([" + "".join(COUNT_SUFFIXES) + "])", re.ASCII)


def cluster_values(loader: Resolver, module: LoadedModule, name: str, domain: ast.Domain) -> tuple[Any, ...]:
    """The values of a cluster field's domain: GPU profiles (a name, or a name with fields replaced)
    for ``gpu``, numbers of the field's kind for the others."""
    f = attrs.fields_dict(Cluster)[name]
    if kind_of(f) is not Kind.REF:
        return tuple(expand(f, domain))
    gpus: list[Gpu] = []
    for alt in domain.alts:
        if not isinstance(alt, ast.Ident | ast.Override):
            raise fail(T.WRONG_TYPE, "`gpu` takes GPU profiles", getattr(alt, "span", domain.span),
                       help="e.g. `gpu : h100_sxm_calibrated | b200_calibrated { price_per_hour = 6.5 }`")
        gpu = loader.reference(module, alt, Gpu, "gpu")
        if isinstance(alt, ast.Ident) and gpu in gpus:
            # `gpu : h100 | h100 | mi355x`: the same profile twice, a slip like `tp : 1 | 2 | 2`
            raise fail(T.REPEATED_VALUE, f"`{alt.name}` is listed twice in the `gpu` axis", alt.span,
                       help="remove the repeat, or write the GPU meant")
        if any(g.name == gpu.name for g in gpus):
            # the table, --cluster and the launch files name a cluster by its GPU's name
            raise fail(N.DUPLICATE_DEFINITION, f"two values of `gpu` are both named `{gpu.name}`",
                       getattr(alt, "span", domain.span),
                       help=f"give each its own name: `gpu {gpu.name}_b = {gpu.name} {{ ... }}` at the top level")
        gpus.append(gpu)
    return tuple(gpus)


def cluster_axis(loader: Resolver, module: LoadedModule, st: ast.AxisStmt) -> ClusterAxis:
    if st.when is not None:
        raise fail(T.MISPLACED_STATEMENT, f"the cluster axis `{st.name}` takes no `when`", st.span,
                   help="every cluster is searched whole; constrain the recipe axes instead")
    return ClusterAxis(st.name, cluster_values(loader, module, st.name, st.domain), st.span)


def train_tokens(value: ast.Value) -> float:
    """``15T``, ``500B``, ``2M`` or a plain number of tokens."""
    if isinstance(value, ast.Ident):
        m = _TOKEN_COUNT.fullmatch(value.name)
        if m is not None:
            return int(m.group(1)) * COUNT_SUFFIXES[m.group(2)]
    elif isinstance(value, ast.Quantity) and value.unit in (None, "B") and value.value > 0:
        # `500B` lexes as bytes; a count of tokens has no bytes, so B is the billion it means here
        return float(value.value) * (1e9 if value.unit == "B" else 1.0)
    if isinstance(value, ast.Ident) and _TOKEN_COUNT.fullmatch(value.name.upper()):
        raise fail(T.WRONG_TYPE, f"`{value.name}`: a count's suffix is a capital letter", value.span,
                   help=f"write `train_tokens = {value.name.upper()}` (K, M, B or T)")
    raise fail(T.WRONG_TYPE, "`train_tokens` is a count of tokens", getattr(value, "span", None),
               help="e.g. `train_tokens = 15T` (K, M, B or T) or `train_tokens = 1.5e13`")


def check_steps(cap: Capacity, least_step: int) -> None:
    """A run of fewer tokens than one step of the space's smallest batch is a count without its suffix
    (`train_tokens = 15` for 15T): its days and cost would be a step's, a billionth of the run meant."""
    tokens = cap.train_tokens
    if 0 < tokens < least_step:
        meant = f"`train_tokens = {tokens:.0f}T` for {tokens:.0f} trillion tokens, " if tokens.is_integer() else ""
        raise fail(T.OUT_OF_RANGE, f"`train_tokens` of {tokens:,.0f} is less than one step of the space's "
                   f"smallest batch ({least_step:,} tokens)", cap.span,
                   help=f"write {meant}a count's suffix (K, M, B or T) glued to its number")


def is_capacity(st: ast.RequireStmt) -> bool:
    """Whether a requirement is on the whole run (its time, cost or GPUs) rather than on the recipe."""
    return bool(names_in(st.expr) & set(CAPACITY_NAMES))


def _counts(e: Expr) -> Expr:
    """``5M`` in a requirement (`require cost <= 5M`) as the number it names, and ``30days`` as ``30 days``
    (the lexer reads a whole number glued to letters as one name; ``30.5days`` reads as the number and its unit)."""
    if isinstance(e, Name):
        m = _TOKEN_COUNT.fullmatch(e.id)
        if m is not None:
            return Const(int(m.group(1)) * COUNT_SUFFIXES[m.group(2)], e.span)
        days = _GLUED_DAYS.fullmatch(e.id)
        return Const(int(days.group(1)), e.span, unit=days.group(2)) if days is not None else e
    return map_children(e, _counts)


_GLUED_DAYS = re.compile(r"([0-9]{1,6})(days?)", re.ASCII)


def constraint(st: ast.RequireStmt) -> Constraint:
    other = sorted(names_in(_counts(st.expr)) - set(CAPACITY_NAMES))
    if other:
        glued = re.fullmatch(r"(\d+(?:\.\d+)?)([A-Za-z]+)", other[0])
        if glued is not None and glued.group(2).lower() in ("d", "day", "days"):  # `30Days`, `30d`
            # `time_to_train <= 30days`: a number with its unit glued on reads as one name
            raise fail(T.BAD_EXPRESSION, f"`{other[0]}`: a number and its unit are two words", st.span,
                       help=f"write `{glued.group(1)} days`")
        raise fail(T.BAD_EXPRESSION, f"a requirement on the whole run cannot also name `{other[0]}`", st.span,
                   help=f"it names only {', '.join(CAPACITY_NAMES)}; write a recipe's requirement on its own line")
    e: Expr = resolve_expr(_counts(st.expr), set(CAPACITY_NAMES))
    got = type_of(e, dict.fromkeys(CAPACITY_NAMES, "number"))
    if got != "bool":
        raise fail(T.BAD_EXPRESSION, f"a condition must be true or false, but this is a {got}", st.span,
                   help="compare it: e.g. `time_to_train <= 30` (days)")
    return Constraint(e, st.message or "", st.span)


def check(cap: Capacity, gpus: tuple[Gpu, ...], span: Any) -> Capacity:
    """What a run's objective and requirements need: the tokens to train for its days and cost, and a
    price for every GPU for its cost and tokens per unit of price."""
    # each statement with the figures it names, the objective first: a missing input is said at the
    # first statement that needs it
    statements = ([({cap.objective.metric}, cap.objective.span)] if cap.objective is not None else []) + [
        (names_in(c.expr), c.span) for c in cap.constraints]

    def needing(figures: set[str]) -> Any:
        return next((at or span for named, at in statements if named & figures), None)

    where = needing({"time_to_train", "cost"})
    if where is not None and cap.train_tokens <= 0:
        raise fail(T.MISSING_FIELD, "a run's time and cost need the tokens it trains on", where,
                   help="add e.g. `train_tokens = 15T` to the space")
    for figure in ("cost", "tokens_per_dollar"):
        where = needing({figure})
        unpriced = list(dict.fromkeys(g.name for g in gpus if g.price_per_hour <= 0))
        if where is not None and unpriced:
            named = ", ".join(f"`{n}`" for n in unpriced)
            raise fail(T.MISSING_FIELD, f"{named} {'has' if len(unpriced) == 1 else 'have'} no `price_per_hour` (a "
                       f"price of 0 is none), and `{figure}` needs one for every GPU", where,
                       help=f"give the price you pay: `gpu : {unpriced[0]} {{ price_per_hour = ... }}` (primusc "
                            "knows no prices)")
    return cap


def _parts(label: str) -> tuple[str, ...]:
    return tuple(sorted(part.replace(" ", "") for part in label.split(",")))


def select_cluster(space: Space, label: str) -> tuple[str, Space]:
    """The cluster ``label`` names (``gpu=...,nodes=...``, in any order) as the table names it, and the
    space on it."""
    points = dict(cluster_points(space))
    for known, sub in points.items():
        if _parts(known) == _parts(label):
            return known, sub
    axes = "; ".join(f"{a.name}: " + " | ".join(_written(a.name, v) for v in a.values) for a in space.cluster_axes)
    closest = _nearest_cluster(space, label, points)
    raise CompileError(Diagnostic(N.UNKNOWN_NAME, f"`{label}` is not a cluster of space `{space.name}`",
                                  help=(f"did you mean `{closest}`? " if closest else "")
                                  + (f"name one value of each axis ({axes}), e.g. {next(iter(points))}" if axes
                                     else f"the space has no cluster axes; its one cluster is {next(iter(points))}")))


def _written(axis: str, value: object) -> str:
    """One value of a cluster axis as a label writes it."""
    return cluster_label({axis: value}).split("=", 1)[1]


def _nearest_value(given: str, values: list[str]) -> str:
    """The value of one axis a user most likely meant: the one ``given`` names in another case, else the one
    that ``given`` begins in any case (``h100`` for ``h100_sxm_calibrated``: a GPU named as people shorten
    it), else the nearest number (``100`` nodes: 128 of 64 | 128), else the closest spelling ("" when none
    is close)."""
    if given in values or not given:
        return given
    folded = [v for v in values if v.casefold() == given.casefold()]
    if folded:
        return folded[0]  # `B200_calibrated`: the name in another case, before any other spelling
    numeric = {v: float(v) for v in values if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", v)}
    if numeric and re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", given) and float(given) > 0:
        number = float(given)
        return min(numeric, key=lambda v: (abs(math.log(numeric[v] / number)), numeric[v]))
    started = [v for v in values if v.casefold().startswith(given.casefold())]
    if started:
        return started[0]
    near = difflib.get_close_matches(given, values, n=1, cutoff=0.6)
    return near[0] if near else ""


def _nearest_cluster(space: Space, label: str, points: dict[str, Space]) -> str:
    """The cluster of the table a label that names none most likely meant, axis by axis ("" when an axis
    is missing, unknown or has no close value)."""
    given = {k.casefold(): v for k, v in (part.split("=", 1) for part in _parts(label) if "=" in part)}
    chosen = {}
    for axis in space.cluster_axes:
        values = [_written(axis.name, v) for v in axis.values]
        value = _nearest_value(given.get(axis.name, ""), values) if axis.name in given else ""
        if not value:
            return ""
        chosen[axis.name] = value
    wanted = _parts(",".join(f"{k}={v}" for k, v in chosen.items()))
    return next((known for known in points if _parts(known) == wanted), "")
