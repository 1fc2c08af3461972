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
from primus_lang.ir.hardware import Cluster, Gpu
from primus_lang.ir.model import Model
from primus_lang.ir.quantity import Kind
from primus_lang.ir.ranges import SETTING_RANGES
from primus_lang.ir.run import Run
from primus_lang.ir.site import Site
from primus_lang.ir.space import (
    BLOCK_CLASSES,
    CAPACITY_METRICS,
    METRIC_SENSE,
    OBJECTIVE_METRICS,
    STRATEGIES,
    TIE_BREAKS,
    Axis,
    Budget,
    Capacity,
    ClusterAxis,
    Constraint,
    Domain,
    Let,
    MemoryRule,
    Objective,
    Settings,
    Space,
    Value,
    cluster_at,
    user_settings,
)
from primus_lang.lower import capacity
from primus_lang.lower.baseline import lower_baseline, lower_passthrough
from primus_lang.lower.domains import expand, single
from primus_lang.lower.names import base_names, enum_values, knob_hint, resolve_expr, type_of
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
    names = user_settings()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"did you mean `{close[0]}`?" if close else "settings: " + ", ".join(names)
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


class _SpaceBody:
    """What the statements of one space set, gathered one statement at a time."""

    def __init__(self, loader: Resolver, module: LoadedModule, d: ast.Definition) -> None:
        self.loader = loader
        self.module = module
        self.d = d
        self.cluster: Cluster | None = loader.resolve(module, d.on, "cluster", d.name_span) if d.on else None
        self.model: Model | None = None
        self.site: Site | None = None
        self.run: Run | None = None
        self.baseline: tuple[tuple[str, Value], ...] | None = None
        self.passthrough: tuple[tuple[str, bool | int | float | str], ...] = ()
        self.fixed: dict[str, Value] = {}
        self.axes: list[Axis] = []
        self.lets: list[Let] = []
        self.let_deps: dict[str, set[str]] = {}
        self.let_types: dict[str, str] = {}
        self.constraints: list[Constraint] = []
        self.memory: MemoryRule | None = None
        self.objective = Objective()
        self.budget: Budget | None = None
        self.strategy = "auto"
        self.settings: dict[str, Any] = {}
        self.set_by: dict[str, ast.Stmt] = {}
        self.known = base_names()
        self.cluster_axes: list[ClusterAxis] = []
        self.cluster_fixed: dict[str, Any] = {}
        self.capacity = Capacity()

    def claim(self, key: str, st: ast.Stmt, what: str, why: str = "") -> None:
        if key in self.set_by:
            prev = self.set_by[key].span
            raise fail(
                N.DUPLICATE_FIELD,
                f"{what} set twice in space `{self.d.name}`",
                st.span,
                help="; ".join(x for x in (f"the first is at {prev}" if prev else "", why) if x),
            )
        self.set_by[key] = st

    def expr(self, e: Expr, want: str | None = "bool") -> Expr:
        out = resolve_expr(e, self.known | {let.name for let in self.lets})
        got = type_of(out, self.let_types)
        if want is not None and got != want:
            raise fail(
                T.BAD_EXPRESSION,
                f"a condition must be true or false, but this is a {got}",
                e.span,
                help="compare it: e.g. `tp > 1`",
            )
        return out

    def add(self, st: ast.Stmt) -> None:
        if isinstance(st, ast.Assign):
            self.assign(st)
        elif isinstance(st, ast.AxisStmt):
            self.axis(st)
        elif isinstance(st, ast.LetStmt):
            self.let(st)
        elif isinstance(st, ast.RequireStmt) and capacity.is_capacity(st):
            cons = (*self.capacity.constraints, capacity.constraint(st))
            self.capacity = attrs.evolve(self.capacity, constraints=cons)
        elif isinstance(st, ast.RequireStmt):
            self.constraints.append(Constraint(self.expr(st.expr), st.message or "", st.span))
        elif isinstance(st, ast.FitsStmt):
            self.claim("fits", st, "`fits memory`")
            head = fraction(st.headroom, "headroom") if st.headroom is not None else 0.0
            self.memory = MemoryRule(head, st.span)
        elif isinstance(st, ast.ObjectiveStmt):
            self.claim("objective", st, "the objective",
                       "a space optimizes one objective: keep one and bound the others with `require`, e.g. "
                       "`minimize cost` with `require time_to_train <= 30 days` (plan's cluster table marks the "
                       "front of days against cost)")
            if st.metric in CAPACITY_METRICS:
                self.capacity = attrs.evolve(self.capacity, objective=_objective(st, st.metric))
            else:
                metric = _choose(st.metric, OBJECTIVE_METRICS + CAPACITY_METRICS, "metric", st.span)
                self.objective = _objective(st, metric)
        elif isinstance(st, ast.BudgetStmt):
            self.claim("budget", st, "`budget`")
            self.budget = _budget(st)
        elif isinstance(st, ast.StrategyStmt):
            self.claim("strategy", st, "`strategy`")
            self.strategy = _choose(st.name, STRATEGIES, "strategy", st.span)
        elif isinstance(st, ast.TargetStmt):
            self.claim("target", st, "`target`")
            self.settings["target"] = _target(st)
        elif isinstance(st, ast.AssumeStmt):
            self.claim(f"assume {st.name}", st, f"`assume {st.name}`")
            self.settings[st.name] = _setting(st.name, st.value, st.span)
        else:
            self.nested(st)

    def assign(self, st: ast.Assign) -> None:
        if st.name == "model":
            self.claim("model", st, "`model`")
            self.model = self.loader.reference(self.module, st.value, Model, "model")
        elif st.name == "cluster":
            self.claim("cluster", st, "`cluster`")
            self._refuse_second_cluster(st)
            self.cluster = self.loader.reference(self.module, st.value, Cluster, "cluster")
        elif st.name == "site":
            self.claim("site", st, "`site`")
            self.site = self.loader.reference(self.module, st.value, Site, "site")
        elif st.name in KNOBS:
            self.claim(st.name, st, f"knob `{st.name}`")
            self.fixed[st.name] = single(KNOBS[st.name], st.value)
        elif st.name in capacity.CLUSTER_FIELDS:
            self.claim(st.name, st, f"cluster field `{st.name}`")
            (self.cluster_fixed[st.name],) = capacity.cluster_values(self.loader, self.module, st.name,
                                                                       ast.Domain((st.value,), st.span))
        elif st.name == "train_tokens":
            self.claim(st.name, st, "`train_tokens`")
            self.capacity = attrs.evolve(self.capacity, train_tokens=capacity.train_tokens(st.value), span=st.span)
        else:
            _unknown_knob(st.name, name_span(st.span, st.name))

    def _refuse_second_cluster(self, st: ast.Assign) -> None:
        """``space S on C { cluster = D }``: one of the two would be dropped without a word."""
        d = self.d
        named = st.value.name if isinstance(st.value, ast.Ident) else \
            st.value.base if isinstance(st.value, ast.Override) else None
        if d.on is not None and named != d.on:
            raise fail(N.DUPLICATE_FIELD, f"space `{d.name}` is `on {d.on}` and sets `cluster` to "
                       f"`{named or 'another'}`", st.span,
                       help=f"keep one: drop `on {d.on}`, or this statement")

    def axis(self, st: ast.AxisStmt) -> None:
        if st.name in capacity.CLUSTER_FIELDS:
            self.claim(st.name, st, f"cluster field `{st.name}`")
            self.cluster_axes.append(capacity.cluster_axis(self.loader, self.module, st))
            return
        if st.name not in KNOBS:
            _unknown_knob(st.name, name_span(st.span, st.name))
        self.claim(st.name, st, f"knob `{st.name}`")
        values = expand(KNOBS[st.name], st.domain)
        when = self.expr(st.when) if st.when is not None else None
        self.axes.append(Axis(st.name, Domain(values), when, st.span))

    def let(self, st: ast.LetStmt) -> None:
        if st.name in self.known or st.name in self.let_deps:
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
        e = self.expr(st.expr, None)
        self.let_types[st.name] = type_of(e, self.let_types)
        self.let_deps[st.name] = _knob_deps(names_in(e), self.let_deps)
        self.lets.append(Let(st.name, e, st.span))

    def nested(self, st: ast.Stmt) -> None:
        if isinstance(st, ast.Nested) and st.name == "run":
            self.claim("run", st, "`run`")
            self.run = lower_run(self.loader, self.module, st)
        elif isinstance(st, ast.Nested) and st.name in ("baseline", "passthrough"):
            self.claim(st.name, st, f"`{st.name}`")
            if st.name == "baseline":
                self.baseline = lower_baseline(st)
            else:
                self.passthrough = lower_passthrough(st)
        else:
            raise fail(
                T.MISPLACED_STATEMENT,
                f"a space takes no nested block `{getattr(st, 'name', '')}`",
                st.span,
                help="write `model = base { field = value }` to override a model inside a space",
            )

    def missing(self) -> list[Diagnostic]:
        """The fields every space must set that this one does not."""
        d = self.d
        errors: list[Diagnostic] = []
        if self.model is None and "model" not in self.set_by:
            errors.append(
                Diagnostic(
                    T.MISSING_FIELD, f"space `{d.name}` sets no `model`", d.name_span, help="add `model = NAME`"
                )
            )
        if self.cluster is None and "cluster" not in self.set_by and d.on is None:
            errors.append(
                Diagnostic(
                    T.MISSING_FIELD,
                    f"space `{d.name}` names no cluster",
                    d.name_span,
                    help=f"write `space {d.name} on CLUSTER {{ ... }}`",
                )
            )
        # a `gbs` written with a bad value has its own error already
        if "gbs" not in self.fixed and "gbs" not in self.axis_names() and "gbs" not in self.set_by:
            errors.append(
                Diagnostic(
                    T.MISSING_FIELD,
                    f"space `{d.name}` sets no global batch size `gbs`",
                    d.name_span,
                    help="add e.g. `gbs = 256` (sequences per step)",
                )
            )
        return errors

    def axis_names(self) -> set[str]:
        return {a.name for a in self.axes}

    def space(self) -> Space:
        model, cluster = self.model, self.cluster
        assert model is not None and cluster is not None
        if "seq_len" not in self.fixed and "seq_len" not in self.axis_names():
            self.fixed["seq_len"] = model.seq_len
        _order_conditions(self.axes, self.let_deps)
        # the cluster the other commands see is the first the cluster axes span
        declared, fixed = cluster, tuple(self.cluster_fixed.items())
        cluster = cluster_at(declared, fixed, {a.name: a.values[0] for a in self.cluster_axes})
        gpus = tuple(g for a in self.cluster_axes for g in a.values if isinstance(g, Gpu)) or (cluster.gpu,)
        space = Space(
            name=self.d.name,
            model=model,
            cluster=cluster,
            fixed=tuple(self.fixed.items()),
            axes=tuple(self.axes),
            lets=tuple(self.lets),
            constraints=tuple(self.constraints),
            memory=self.memory,
            objective=self.objective,
            budget=self.budget or Budget(),
            strategy=self.strategy,
            settings=Settings(**self.settings),
            span=self.d.span,
            knob_spans=tuple(
                (name, st.span) for name, st in self.set_by.items() if name in KNOBS and st.span is not None
            ),
            site=self.site,
            run=self.run,
            baseline=self.baseline,
            passthrough=self.passthrough,
            cluster_axes=tuple(self.cluster_axes),
            capacity=capacity.check(self.capacity, gpus, self.d.name_span),
            # a space that changes the cluster's own fields (`gpu = ...`) keeps the definition too: what a GPU's
            # node shape replaced is said from it (commands/_capacity.shape_note)
            cluster_declared=declared if self.cluster_axes or self.cluster_fixed else None,
            cluster_fixed=fixed if self.cluster_axes else (),
        )
        capacity.check_steps(space.capacity, self._least("gbs") * self._least("seq_len"))
        return space

    def _least(self, knob: str) -> int:
        """The smallest value ``knob`` takes in the space (its axis's, the fixed one, or its default)."""
        axis = next((a for a in self.axes if a.name == knob), None)
        values = axis.domain.values if axis is not None else (self.fixed.get(knob, KNOBS[knob].default),)
        return min(int(v) for v in values if isinstance(v, int | float))


def lower_space(loader: Resolver, module: LoadedModule, d: ast.Definition) -> Space:
    if d.base is not None:
        raise fail(
            T.MISPLACED_STATEMENT,
            "a space cannot inherit from another space",
            d.name_span,
            help="copy the statements, or put shared models and clusters in an imported file",
        )
    body = _SpaceBody(loader, module, d)
    errors: list[Diagnostic] = []
    for st in d.body.stmts:
        try:
            body.add(st)
        except CompileError as err:
            errors.extend(err.diagnostics)
    errors.extend(body.missing())
    if errors:
        raise CompileError(errors)
    return body.space()


def _objective(st: ast.ObjectiveStmt, metric: str) -> Objective:
    """``st`` as an objective (``metric``: its metric's name as checked), refused where it asks for the
    worst run (``maximize step_time``)."""
    sense = METRIC_SENSE[metric]
    if st.sense != sense:
        raise fail(T.BAD_ENUM, f"`{st.sense} {metric}` asks for the worst run", st.span,
                   help=f"write `{sense} {metric}`")
    return Objective(st.sense, metric, st.span)


def _unknown_knob(name: str, span: Any) -> typing.NoReturn:
    candidates = [*KNOBS, "model", "cluster", *capacity.CLUSTER_FIELDS, "train_tokens"]
    home = next((c.__name__.lower() for c in BLOCK_CLASSES if name in attrs.fields_dict(c)), "")
    if name in attrs.fields_dict(Settings):
        hint = f"`{name}` is a setting: write `assume {name} = ...`"
    elif home in ("gpu", "model"):
        # a field of the space's GPU or model card (`price_per_hour`, `hbm_capacity`), written in the space
        hint = f"`{name}` is a field of a {home}: write `{home} = NAME {{ {name} = ... }}` in the space" + (
            f" (or on each value of its `{home}` axis)" if home == "gpu" else "")
    else:
        hint = knob_hint(name, candidates)
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
