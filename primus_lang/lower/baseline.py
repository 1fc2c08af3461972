"""A space's ``baseline { ... }`` (the recipe a plan reports first) and ``passthrough { ... }``
(Megatron settings carried to the launch files as written) blocks."""

from __future__ import annotations

from primus_lang.diagnostics.codes_import import RECIPE_NO_BASELINE
from primus_lang.diagnostics.codes_types import RUN_TEXT
from primus_lang.frameworks import spelling
from primus_lang.ir.candidate import KNOBS
from primus_lang.ir.space import Value
from primus_lang.lower.domains import single
from primus_lang.lower.values import fail
from primus_lang.syntax import ast

_NAME_LIMIT = 128


def lower_baseline(block: ast.Nested) -> tuple[tuple[str, Value], ...]:
    out: dict[str, Value] = {}
    for st in block.body.stmts:
        if not isinstance(st, ast.Assign) or st.name not in KNOBS:
            name = getattr(st, "name", "")
            raise fail(RECIPE_NO_BASELINE, f"`{name}` is not a knob; a baseline sets knobs (`tp = 8`)", st.span,
                       help="knobs: " + ", ".join(KNOBS))
        if st.name in out:
            raise fail(RECIPE_NO_BASELINE, f"`{st.name}` is set twice in the baseline", st.span)
        out[st.name] = single(KNOBS[st.name], st.value)
    return tuple(out.items())


def lower_passthrough(block: ast.Nested) -> tuple[tuple[str, bool | int | float | str], ...]:
    out: dict[str, bool | int | float | str] = {}
    for st in block.body.stmts:
        if not isinstance(st, ast.Assign):
            raise fail(RECIPE_NO_BASELINE, "a passthrough block holds `name = value` settings only", st.span)
        if st.name in KNOBS or st.name in out or len(st.name) > _NAME_LIMIT:
            why = "is a knob: set it in the space" if st.name in KNOBS else "is set twice, or too long"
            raise fail(RECIPE_NO_BASELINE, f"passthrough `{st.name}` {why}", st.span)
        ours = spelling.stated_by(st.name)
        if ours is not None:
            # the launch writes it from the candidate or the card; carried as well, it would replace what was checked
            # and projected (a trial's `tensor_model_parallel_size = 4` launched TP 4 for a TP 1 plan)
            knob, _, part = ours.partition(".")
            what = (f"the knob `{knob}`" + (f"'s {part}" if part else "") if knob in KNOBS
                    else f"the model card's `{ours}`")
            raise fail(RECIPE_NO_BASELINE, f"passthrough `{st.name}` is Megatron's name for {what}, which the launch "
                       "writes from the candidate or the card: carried too, it would replace the checked value",
                       st.span, help=f"set {what} in the space (an axis, a fixed value or the baseline)" if knob in KNOBS
                       else "set it in the model card")
        v = st.value
        if isinstance(v, ast.Str) and not v.value.isprintable():
            raise fail(RUN_TEXT, f"passthrough `{st.name}` holds a control character (a newline or tab)", v.span,
                       help="write it on one line, without `\\n` or `\\t`: the launch writes it as one argument")
        if isinstance(v, ast.Str) or (isinstance(v, ast.Quantity) and v.unit is None):
            out[st.name] = v.value
        elif isinstance(v, ast.Ident) and v.name in ("true", "false"):
            out[st.name] = v.name == "true"
        else:
            raise fail(RECIPE_NO_BASELINE, f"passthrough `{st.name}` takes text, a number or true/false", st.span,
                       help='write e.g. `lr = "1.0e-4"`')
    return tuple(out.items())
