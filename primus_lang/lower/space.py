"""A ``space`` definition → ``ir.Space``: knobs fixed or made axes, lets, requires, goals, budget."""

from __future__ import annotations

import difflib
import typing
from typing import Any

import attrs

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics import codes_names as N
from primus_lang.diagnostics import codes_types as T
from primus_lang.frameworks import bridge, megatron
from primus_lang.ir.candidate import KNOBS
from primus_lang.ir.expr import DERIVED, Expr, names_in
from primus_lang.ir.hardware import Cluster
from primus_lang.ir.model import Model
from primus_lang.ir.quantity import Kind
from primus_lang.ir.ranges import SETTING_RANGES
from primus_lang.ir.run import Run
from primus_lang.ir.site import Site
from primus_lang.ir.space import (
    OBJECTIVE_METRICS,
    STRATEGIES,
    TIE_BREAKS,
    Axis,
    Budget,
    Constraint,
    Domain,
    Let,
    MemoryRule,
    Objective,
    Settings,
    Space,
    Value,
)
from primus_lang.lower.baseline import lower_baseline, lower_passthrough
from primus_lang.lower.domains import expand, single
from primus_lang.lower.names import base_names, enum_values, resolve_expr, type_of
from primus_lang.lower.scope import LoadedModule, Resolver
from primus_lang.lower.site import lower_run
from primus_lang.lower.values import count, fail, fraction, name_span, number, unit_quantity
from primus_lang.syntax import ast

FRAMEWORKS = ("megatron", "primus", "bridge")
LAUNCHERS = ("slurm", "k8s", "local")
ORACLES = ("simulate", "benchmark", "hybrid")


def _choose(name: str, choices: tuple[str, ...], what: str, span: Any) -> str:
    if name in choices:
        return name
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f"did you mean `{close[0]}`? " if close else ""
    raise fail(
        T.BAD_ENUM, f"`{name}` is not a {what}", span, help=f"{hint}choose one of {' | '.join(choices)}"
    )


def _setting(name: str, value: ast.Value, span: Any) -> Any:
    fields = attrs.fields_dict(Settings)
    if name not in fields or name == "target":
        close = difflib.get_close_matches(name, [f for f in fields if f != "target"], n=1)
        hint = (
            f"did you mean `{close[0]}`?"
            if close
            else "settings: " + ", ".join(f for f in fields if f != "target")
        )
        raise fail(N.UNKNOWN_FIELD, f"`{name}` is not a setting", span, help=hint)
    hint = typing.get_type_hints(Settings)[name]
    if hint is float:
        v = number(value, name, allow_percent=False)
        if name in SETTING_RANGES:
            low, high, what = SETTING_RANGES[name]
            if not low <= v <= high:
                code = T.TOO_LARGE if v > high else T.OUT_OF_RANGE
                raise fail(code, f"`assume {name}` must be between {low:g} and {high:g}, not {v:g}", value.span,
                           help=what)
        return v
    if hint is int:
        return count(value, name)
    if isinstance(value, ast.Str):
        text = value.value
    elif isinstance(value, ast.Ident):
        text = value.name
    else:
        raise fail(T.WRONG_TYPE, f"`{name}` takes a name or a string", value.span)
    choices = {"oracle": ORACLES, "tie_break": TIE_BREAKS, "megatron_version": megatron.releases(),
               "bridge_version": bridge.version_names()}.get(name)
    return _choose(text, choices, name, value.span) if choices else text


def _knob_deps(names: set[str], lets: dict[str, set[str]]) -> set[str]:
    out: set[str] = set()
    for n in names:
        if n in KNOBS:
            out.add(n)
        elif n in DERIVED:
            out.update(DERIVED[n])
        elif n in lets:
            out.update(lets[n])
    return out


def lower_space(loader: Resolver, module: LoadedModule, d: ast.Definition) -> Space:
    if d.base is not None:
        raise fail(
            T.MISPLACED_STATEMENT,
            "a space cannot inherit from another space",
            d.name_span,
            help="copy the statements, or put shared models and clusters in an imported file",
        )
    cluster: Cluster | None = loader.resolve(module, d.on, "cluster", d.name_span) if d.on else None
    model: Model | None = None
    site: Site | None = None
    run: Run | None = None
    baseline: tuple[tuple[str, Value], ...] | None = None
    passthrough: tuple[tuple[str, bool | int | float | str], ...] = ()
    fixed: dict[str, Value] = {}
    axes: list[Axis] = []
    lets: list[Let] = []
    let_deps: dict[str, set[str]] = {}
    constraints: list[Constraint] = []
    memory: MemoryRule | None = None
    objective = Objective()
    budget: Budget | None = None
    strategy = "auto"
    settings: dict[str, Any] = {}
    set_by: dict[str, ast.Stmt] = {}
    errors: list[Diagnostic] = []
    known = base_names()

    def claim(key: str, st: ast.Stmt, what: str) -> None:
        if key in set_by:
            prev = set_by[key].span
            raise fail(
                N.DUPLICATE_FIELD,
                f"{what} set twice in space `{d.name}`",
                st.span,
                help=f"the first is at {prev}" if prev else "",
            )
        set_by[key] = st

    let_types: dict[str, str] = {}

    def expr(e: Expr, want: str | None = "bool") -> Expr:
        out = resolve_expr(e, known | {let.name for let in lets})
        got = type_of(out, let_types)
        if want is not None and got != want:
            raise fail(
                T.BAD_EXPRESSION,
                f"a condition must be true or false, but this is a {got}",
                e.span,
                help="compare it: e.g. `tp > 1`",
            )
        return out

    for st in d.body.stmts:
        try:
            if isinstance(st, ast.Assign):
                if st.name == "model":
                    claim("model", st, "`model`")
                    model = loader.reference(module, st.value, Model, "model")
                elif st.name == "cluster":
                    claim("cluster", st, "`cluster`")
                    named = st.value.name if isinstance(st.value, ast.Ident) else \
                        st.value.base if isinstance(st.value, ast.Override) else None
                    if d.on is not None and named != d.on:
                        # one of the two would be dropped without a word
                        raise fail(N.DUPLICATE_FIELD, f"space `{d.name}` is `on {d.on}` and sets `cluster` to "
                                   f"`{named or 'another'}`", st.span,
                                   help=f"keep one: drop `on {d.on}`, or this statement")
                    cluster = loader.reference(module, st.value, Cluster, "cluster")
                elif st.name == "site":
                    claim("site", st, "`site`")
                    site = loader.reference(module, st.value, Site, "site")
                elif st.name in KNOBS:
                    claim(st.name, st, f"knob `{st.name}`")
                    fixed[st.name] = single(KNOBS[st.name], st.value)
                else:
                    _unknown_knob(st.name, name_span(st.span, st.name))
            elif isinstance(st, ast.AxisStmt):
                if st.name not in KNOBS:
                    _unknown_knob(st.name, name_span(st.span, st.name))
                claim(st.name, st, f"knob `{st.name}`")
                values = expand(KNOBS[st.name], st.domain)
                when = expr(st.when) if st.when is not None else None
                axes.append(Axis(st.name, Domain(values), when, st.span))
            elif isinstance(st, ast.LetStmt):
                if st.name in known or st.name in let_deps:
                    raise fail(
                        N.DUPLICATE_FIELD,
                        f"`let {st.name}` hides a name that already exists",
                        st.span,
                        help="choose another name",
                    )
                if st.name in ("true", "false") or st.name in enum_values():
                    # `let bf16 = 4` turned `precision == bf16` into a number; `let true = 0` was unreadable
                    raise fail(
                        N.DUPLICATE_FIELD,
                        f"`let {st.name}` hides the constant `{st.name}`",
                        st.span,
                        help="choose another name",
                    )
                e = expr(st.expr, None)
                let_types[st.name] = type_of(e, let_types)
                let_deps[st.name] = _knob_deps(names_in(e), let_deps)
                lets.append(Let(st.name, e, st.span))
            elif isinstance(st, ast.RequireStmt):
                constraints.append(Constraint(expr(st.expr), st.message or "", st.span))
            elif isinstance(st, ast.FitsStmt):
                claim("fits", st, "`fits memory`")
                head = fraction(st.headroom, "headroom") if st.headroom is not None else 0.0
                memory = MemoryRule(head, st.span)
            elif isinstance(st, ast.ObjectiveStmt):
                claim("objective", st, "the objective")
                metric = _choose(st.metric, OBJECTIVE_METRICS, "metric", st.span)
                objective = Objective(st.sense, metric, st.span)
            elif isinstance(st, ast.BudgetStmt):
                claim("budget", st, "`budget`")
                budget = _budget(st)
            elif isinstance(st, ast.StrategyStmt):
                claim("strategy", st, "`strategy`")
                strategy = _choose(st.name, STRATEGIES, "strategy", st.span)
            elif isinstance(st, ast.TargetStmt):
                claim("target", st, "`target`")
                settings["target"] = _target(st)
            elif isinstance(st, ast.AssumeStmt):
                claim(f"assume {st.name}", st, f"`assume {st.name}`")
                settings[st.name] = _setting(st.name, st.value, st.span)
            elif isinstance(st, ast.Nested) and st.name == "run":
                claim("run", st, "`run`")
                run = lower_run(loader, module, st)
            elif isinstance(st, ast.Nested) and st.name in ("baseline", "passthrough"):
                claim(st.name, st, f"`{st.name}`")
                if st.name == "baseline":
                    baseline = lower_baseline(st)
                else:
                    passthrough = lower_passthrough(st)
            else:
                raise fail(
                    T.MISPLACED_STATEMENT,
                    f"a space takes no nested block `{getattr(st, 'name', '')}`",
                    st.span,
                    help="write `model = base { field = value }` to override a model inside a space",
                )
        except CompileError as err:
            errors.extend(err.diagnostics)
    if model is None and "model" not in set_by:
        errors.append(
            Diagnostic(
                T.MISSING_FIELD, f"space `{d.name}` sets no `model`", d.name_span, help="add `model = NAME`"
            )
        )
    if cluster is None and "cluster" not in set_by and d.on is None:
        errors.append(
            Diagnostic(
                T.MISSING_FIELD,
                f"space `{d.name}` names no cluster",
                d.name_span,
                help=f"write `space {d.name} on CLUSTER {{ ... }}`",
            )
        )
    axis_names = {a.name for a in axes}
    if "gbs" not in fixed and "gbs" not in axis_names:
        errors.append(
            Diagnostic(
                T.MISSING_FIELD,
                f"space `{d.name}` sets no global batch size `gbs`",
                d.name_span,
                help="add e.g. `gbs = 256` (sequences per step)",
            )
        )
    if errors:
        raise CompileError(errors)
    assert model is not None and cluster is not None
    if "seq_len" not in fixed and "seq_len" not in axis_names:
        fixed["seq_len"] = model.seq_len
    _order_conditions(axes, let_deps)
    return Space(
        name=d.name,
        model=model,
        cluster=cluster,
        fixed=tuple(fixed.items()),
        axes=tuple(axes),
        lets=tuple(lets),
        constraints=tuple(constraints),
        memory=memory,
        objective=objective,
        budget=budget or Budget(),
        strategy=strategy,
        settings=Settings(**settings),
        span=d.span,
        knob_spans=tuple(
            (name, st.span) for name, st in set_by.items() if name in KNOBS and st.span is not None
        ),
        site=site,
        run=run,
        baseline=baseline,
        passthrough=passthrough,
    )


def _unknown_knob(name: str, span: Any) -> typing.NoReturn:
    candidates = [*KNOBS, "model", "cluster"]
    close = difflib.get_close_matches(name, candidates, n=1)
    if name in attrs.fields_dict(Settings):
        hint = f"`{name}` is a setting: write `assume {name} = ...`"
    elif close:
        hint = f"did you mean `{close[0]}`?"
    else:
        hint = "knobs: " + ", ".join(KNOBS)
    raise CompileError(Diagnostic(N.UNKNOWN_KNOB, f"`{name}` is not a knob", span, help=hint))


def _budget(st: ast.BudgetStmt) -> Budget:
    values: dict[str, Any] = {}
    for item in st.items:
        key = {"evals": "evaluations", "time": "seconds", "llm": "llm_calls", "cost": "llm_cost_usd"}[
            item.kind
        ]
        if key in values:
            raise fail(T.WRONG_TYPE, f"the budget names {item.kind} twice", item.span)
        if item.kind == "time":
            values[key] = unit_quantity(item.amount, Kind.TIME, "budget time")
        elif item.kind == "cost":
            values[key] = number(item.amount, "cost", allow_percent=False)
        else:
            values[key] = count(item.amount, item.kind)
    return Budget(**values, span=st.span)


def _target(st: ast.TargetStmt) -> str:
    if len(st.names) > 2:
        raise fail(
            T.WRONG_TYPE, "a target is `framework + launcher`", st.span, help="e.g. `target megatron + slurm`"
        )
    framework = _choose(st.names[0], FRAMEWORKS, "framework", st.span)
    launcher = _choose(st.names[1], LAUNCHERS, "launcher", st.span) if len(st.names) > 1 else "slurm"
    return f"{framework}+{launcher}"


def _order_conditions(axes: list[Axis], let_deps: dict[str, set[str]]) -> None:
    """Refuse conditional axes whose conditions depend on each other in a circle."""
    conditional = {a.name: _knob_deps(names_in(a.when), let_deps) for a in axes if a.when is not None}
    done: set[str] = set()
    pending = dict(conditional)
    while pending:
        ready = [n for n, deps in pending.items() if not (deps & (set(pending) | {n}) - done)]
        if not ready:
            axis = next(a for a in axes if a.name in pending)
            raise fail(
                T.CONDITION_CYCLE,
                f"the conditions of {', '.join(f'`{n}`' for n in sorted(pending))} depend on each other",
                axis.span,
                help="make one of these axes unconditional",
            )
        for n in ready:
            done.add(n)
            del pending[n]
