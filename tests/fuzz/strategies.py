"""Hypothesis strategies that write `.prx` sources for the fuzzer, as bytes (a byte-level mutation
may leave a file that is not UTF-8, which the compiler must refuse, not crash on).

Two families:
- ``grammar_sources``: modules written from the grammar (grammar/primus.lark), mostly around real
  stdlib cards and clusters, so a good share reaches lowering, the legality checks, the memory
  account and the projection instead of stopping at the parser;
- ``mutated_sources``: the examples and the stdlib with a few edits each: a token replaced, deleted,
  doubled or moved, a number made huge, negative, tiny or non-finite, raw bytes, odd unicode,
  deep nesting, a repeated line, a truncation.

Nothing here imports ``primus_lang``: the generators describe the language from outside, so a bug in
the compiler cannot hide itself from them.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
CORPUS_FILES = sorted([*(ROOT / "examples").glob("*.prx"), *(ROOT / "stdlib").rglob("*.prx")])
CORPUS = [p.read_bytes() for p in CORPUS_FILES]


def _stdlib_names(kind: str) -> list[tuple[str, str]]:
    """(module, name) of every stdlib definition of ``kind``, e.g. ("models.llama3", "llama3_1_8b")."""
    out = []
    for path in sorted((ROOT / "stdlib").rglob("*.prx")):
        module = ".".join(path.relative_to(ROOT / "stdlib").with_suffix("").parts)
        out += [(module, name) for name in re.findall(rf"(?m)^{kind} (\w+)", path.read_text())]
    return out


MODELS = _stdlib_names("model")
GPUS = _stdlib_names("gpu")
CLUSTERS = _stdlib_names("cluster")

# Numbers at and past every edge the language draws: 2^63, float overflow and underflow, the
# ceilings of ir/ranges.py, zero, digit separators, and spellings that are not numbers at all.
EDGE_NUMBERS = [
    "0", "1", "2", "3", "7", "8", "64", "4096", "4097", "65536", "131072", "1048577", "16777217",
    "9223372036854775807", "9223372036854775808", "99999999999999999999999", "9" * 400,
    "1e308", "1e309", "1e400", "1e-400", "1e-320", "2.5e-324", "0.0", "0.000", "1.0", "0.5", "1.5e9",
    "1e15", "1e16", "1e20", "1_000", "1__0", "1_", "00", "007", "0e0", "1e0", "1.e5", "1e", "-1",
    "-0", "--1", "nan", "inf", "NaN", "Infinity", "0x10", "1/0",
]
UNITS = [
    "", "", "", "B", "KB", "GB", "GiB", "TiB", "PiB", "GB/s", "GiB/s", "Gbps", "Tbps", "TFLOP/s",
    "PFLOP/s", "ns", "us", "ms", "s", "min", "h", "%", "Gib", "gb",
]
KNOBS = [
    "tp", "pp", "vpp", "first_stage_layers", "last_stage_layers", "account_for_embedding",
    "account_for_loss", "pipeline_layout", "cp", "ep", "etp", "mbs", "gbs", "seq_len", "precision",
    "fp8_recipe", "recompute", "sharding", "schedule", "sequence_parallel", "attention", "cp_comm",
    "cross_entropy", "moe_dispatcher", "tp_comm_overlap", "overlap_grad_reduce", "overlap_param_gather",
    "ep_comm_overlap", "cuda_graph", "main_grad_dtype", "optimizer_dtype",
]
ENUMS = [
    "bf16", "fp8", "fp4", "tensorwise", "delayed", "blockwise", "mxfp8", "none", "selective", "op",
    "dist_opt", "fsdp", "1f1b", "interleaved", "zero_bubble", "zbv", "flash", "unfused", "p2p", "a2a",
    "allgather", "alltoall", "flex", "native", "te", "attn", "moe_router", "attn_moe_router", "layer", "full", "fp32",
    "true", "false", "uniform", "block", "core_attn", "mlp", "moe",
]
DERIVED = ["dp", "edp", "microbatches", "world", "nodes", "gpus_per_node", "layers_per_stage",
           "num_layers", "hidden", "heads", "kv_heads", "num_experts", "vocab"]
MODEL_FIELDS = [
    "num_layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "vocab", "seq_len",
    "max_position_embeddings", "rope_theta", "mtp_layers", "dropout", "attention_dropout",
    "sliding_window", "activation", "norm", "position", "tied_embeddings", "bias", "qk_layernorm",
    "attention_sinks", "pattern", "source",
]
MOE_FIELDS = ["num_experts", "top_k", "ffn_hidden", "shared_experts", "shared_ffn_hidden", "dense_layers",
              "latent", "aux_loss", "router_score", "bias_balancing"]
GPU_FIELDS = ["memory", "reserved_memory", "hbm_bandwidth", "peak_bf16", "peak_fp8", "peak_fp4",
              "scale_up_bandwidth", "scale_up_domain", "host_launch", "overlap_slowdown"]
CLUSTER_FIELDS = ["nodes", "gpus_per_node", "nics_per_node", "nic_bandwidth", "scale_up_domain"]
SETTINGS = ["moe_imbalance", "oracle", "seed", "llm_model"]
KEYWORDS = ["model", "gpu", "cluster", "space", "import", "on", "let", "require", "fits", "memory",
            "headroom", "maximize", "minimize", "budget", "strategy", "target", "assume", "when",
            "step", "x", "in", "and", "or", "not", "evals", "llm", "calls", "cost", "usd"]
# Characters the lexer treats specially or that look like what it accepts: line separators other
# than `\n`, a byte-order mark, zero-width and combining marks, non-ASCII digits and letters,
# control characters, a lone surrogate's neighbours.
ODD_TEXT = [
    "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\ufeff", "\u200b", "\u200d", "\u0301", "é",
    "²", "١", "𝟙", "Ａ", "ß", "\U0001f600", "\x00", "\r", "\r\n", "\t", "\x7f", "\ud7ff", "\ue000",
    "\\", '"', "\\\"", "'", "`", "$(", "${", "#", "\n", ";", "{", "}", "(", ")", "|", "..", ":", "=",
]
MUTATION_TOKENS = [*EDGE_NUMBERS, *UNITS[3:], *KNOBS, *ENUMS, *DERIVED, *KEYWORDS, *ODD_TEXT,
                   "pow2(", "full(", "selective(", "min(", "max(", "divides(", "x", "*", "//", "/",
                   "%", "+", "-", "==", "<=", ">", "!=", ",", ".", "models.llama3", '""', '"a"']

names = st.sampled_from(["m", "g", "c", "s", "a", "b", "x1", "_", "base", *KNOBS[:6]])


@st.composite
def numbers(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(EDGE_NUMBERS))
    if draw(st.booleans()):
        return str(draw(st.integers(0, 10**6)))
    return repr(draw(st.floats(0, 1e6, allow_nan=False, allow_infinity=False)))


@st.composite
def quantities(draw: st.DrawFn, units: tuple[str, ...] = ("",)) -> str:
    unit = draw(st.sampled_from([*units, *UNITS])) if draw(st.integers(0, 4)) == 0 else draw(st.sampled_from(units))
    space = "" if unit in ("", "%") or draw(st.integers(0, 5)) == 0 else " "
    return draw(numbers()) + space + unit


@st.composite
def domains(draw: st.DrawFn, values: st.SearchStrategy[str] | None = None) -> str:
    plain = values if values is not None else st.one_of(numbers(), st.sampled_from(ENUMS))

    @st.composite
    def alt(d: st.DrawFn) -> str:
        kind = d(st.integers(0, 6))
        if kind == 0:
            step = f" step {d(numbers())}" if d(st.booleans()) else ""
            return f"{d(numbers())} .. {d(numbers())}{step}"
        if kind == 1:
            return f"pow2({d(numbers())} .. {d(numbers())})"
        if kind == 2:
            inner = d(st.lists(plain, min_size=1, max_size=3))
            return f"full(layers: {' | '.join(inner)})" if d(st.booleans()) else f"full({', '.join(inner)})"
        if kind == 3:
            return f"selective({', '.join(d(st.lists(st.sampled_from(ENUMS), max_size=3)))})"
        return d(plain)

    return " | ".join(draw(st.lists(alt(), min_size=1, max_size=5)))


def expressions(max_leaves: int = 12) -> st.SearchStrategy[str]:
    atoms = st.one_of(numbers(), st.sampled_from([*KNOBS, *DERIVED, *ENUMS]), st.just('"a"'))
    return st.recursive(
        atoms,
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "//", "%"]), inner).map(" ".join),
            st.tuples(inner, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), inner).map(" ".join),
            st.tuples(inner, st.sampled_from(["and", "or"]), inner).map(" ".join),
            inner.map(lambda e: f"not {e}"),
            inner.map(lambda e: f"-{e}"),
            inner.map(lambda e: f"({e})"),
            st.tuples(inner, st.lists(inner, min_size=1, max_size=3)).map(lambda t: f"{t[0]} in ({', '.join(t[1])})"),
            st.tuples(st.sampled_from(["min", "max", "divides", "pow2", "abs"]), st.lists(inner, max_size=3))
            .map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        ),
        max_leaves=max_leaves,
    )


@st.composite
def space_statements(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 14))
    knob = draw(st.sampled_from(KNOBS))
    if kind <= 5:
        when = f" when {draw(expressions(4))}" if draw(st.integers(0, 3)) == 0 else ""
        return f"{knob} : {draw(domains())}{when}"
    if kind <= 7:
        return f"{knob} = {draw(st.one_of(quantities(), st.sampled_from(ENUMS), st.just('full(4)')))}"
    if kind == 8:
        return f"require {draw(expressions())}" + (' "why"' if draw(st.booleans()) else "")
    if kind == 9:
        return f"let {draw(names)} = {draw(expressions(6))}"
    if kind == 10:
        return "fits memory" + (f" headroom {draw(quantities(('%', '')))}" if draw(st.booleans()) else "")
    if kind == 11:
        items = draw(st.lists(st.sampled_from(["{} evals", "{} min", "{} h", "llm {} calls", "cost {} usd"]),
                              min_size=1, max_size=3))
        return "budget " + ", ".join(i.format(draw(numbers())) for i in items)
    if kind == 12:
        return draw(st.sampled_from(["maximize", "minimize"])) + " " + draw(
            st.sampled_from(["tokens_per_gpu", "step_time", "mfu", "tflops_per_gpu", "memory_peak", "x"]))
    if kind == 13:
        return draw(st.sampled_from(["strategy auto", "strategy planner", "strategy bogus", "target megatron + slurm",
                                     "target primus + k8s", "target primus + local + x"]))
    setting = draw(st.sampled_from(SETTINGS))
    value = draw(st.one_of(quantities(), st.sampled_from(["simulate", "hybrid", '"gpt"'])))
    return f"assume {setting} = {value}"


def _block(statements: list[str], one_line: bool) -> str:
    if one_line:
        return "{ " + "; ".join(statements) + " }"
    return "{\n" + "".join(f"  {s}\n" for s in statements) + "}"


@st.composite
def field_statements(draw: st.DrawFn, fields: list[str]) -> str:
    name = draw(st.sampled_from(fields))
    value = draw(st.one_of(quantities(("", "GiB", "TB/s", "TFLOP/s", "us")), st.sampled_from(ENUMS),
                           st.just('"text"'), st.just("8 x 400 Gbps")))
    return f"{name} = {value}"


@st.composite
def grammar_sources(draw: st.DrawFn) -> bytes:
    """A module over real stdlib cards: imports, maybe a model or cluster of its own (often derived
    from a stdlib one with overrides), and a space with axes, fixed knobs and constraints."""
    module, model = draw(st.sampled_from(MODELS))
    cmodule, cluster = draw(st.sampled_from(CLUSTERS))
    lines = [f"import {module} ({model})", f"import {cmodule} ({cluster})"]
    one_line = draw(st.booleans())
    if draw(st.booleans()):
        fields = draw(st.lists(field_statements(MODEL_FIELDS), max_size=3))
        if draw(st.integers(0, 3)) == 0:
            fields.append("moe " + _block(draw(st.lists(field_statements(MOE_FIELDS), min_size=1, max_size=3)), True))
        lines.append(f"model m = {model} " + _block(fields, one_line))
        model = "m"
    if draw(st.booleans()):
        gmodule, gpu = draw(st.sampled_from(GPUS))
        lines.insert(0, f"import {gmodule} ({gpu})")
        if draw(st.booleans()):
            lines.append(f"gpu g = {gpu} " + _block(draw(st.lists(field_statements(GPU_FIELDS), max_size=3)), one_line))
            gpu = "g"
        fields = [f"gpu = {gpu}", f"nodes = {draw(numbers())}", f"gpus_per_node = {draw(numbers())}"]
        fields += draw(st.lists(field_statements(CLUSTER_FIELDS), max_size=2))
        lines.append("cluster c " + _block(fields, one_line))
        cluster = "c"
    body = [f"model = {model}", f"gbs = {draw(numbers())}"]
    if draw(st.booleans()):
        body.append(f"seq_len = {draw(numbers())}")
    body += draw(st.lists(space_statements(), max_size=8))
    lines.append(f"space s on {cluster} " + _block(body, one_line))
    return "\n".join(lines).encode() + b"\n"


# --- mutations ------------------------------------------------------------------------------------

_TOKEN = re.compile(rb"[A-Za-z0-9_.]+|\s+|.", re.S)
_NUMBER = re.compile(rb"(?<![A-Za-z0-9_.])[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][+-]?[0-9]+)?")


def _tokens(data: bytes) -> list[bytes]:
    return _TOKEN.findall(data)


def _nest(depth: int, kind: int) -> bytes:
    if kind == 0:
        return b"(" * depth + b"1" + b")" * depth
    if kind == 1:
        return b"-" * depth + b"1"
    if kind == 2:
        return b"not " * depth + b"true"
    if kind == 3:
        return b"a { " * depth + b"}" * depth
    if kind == 4:
        return b"full(" * depth + b"1" + b")" * depth
    return b"1" + b" + 1" * depth


@st.composite
def _mutate(draw: st.DrawFn, data: bytes) -> bytes:
    kind = draw(st.integers(0, 11))
    at = draw(st.integers(0, max(len(data), 1) - 1)) if data else 0
    if kind <= 3:  # token-level: replace, delete, double, or move one token
        tokens = _tokens(data)
        if not tokens:
            return data
        i = draw(st.integers(0, len(tokens) - 1))
        if kind == 0:
            tokens[i] = draw(st.sampled_from(MUTATION_TOKENS)).encode("utf-8", "surrogatepass")
        elif kind == 1:
            del tokens[i]
        elif kind == 2:
            tokens.insert(i, tokens[i])
        else:
            j = draw(st.integers(0, len(tokens) - 1))
            tokens.insert(j, tokens.pop(i))
        return b"".join(tokens)
    if kind <= 5:  # a number at an edge
        found = list(_NUMBER.finditer(data))
        if not found:
            return data
        m = draw(st.sampled_from(found))
        new = draw(st.one_of(st.sampled_from(EDGE_NUMBERS), st.integers(-(2**70), 2**70).map(str)))
        return data[: m.start()] + new.encode() + data[m.end() :]
    if kind == 6:  # raw bytes
        junk = draw(st.binary(min_size=1, max_size=8))
        cut = draw(st.integers(0, 8))
        return data[:at] + junk + data[at + cut :]
    if kind == 7:  # odd unicode
        return data[:at] + draw(st.sampled_from(ODD_TEXT)).encode("utf-8", "surrogatepass") + data[at:]
    if kind == 8:  # deep nesting, at a token boundary so it lands in an expression or a block
        starts = [m.end() for m in re.finditer(rb"require |= |: |\{ ?", data)] or [at]
        where = draw(st.sampled_from(starts))
        depth = draw(st.sampled_from([10, 100, 500, 1000, 3000, 10000]))
        return data[:where] + _nest(depth, draw(st.integers(0, 5))) + b" " + data[where:]
    if kind == 9:  # a line repeated
        lines = data.split(b"\n")
        i = draw(st.integers(0, len(lines) - 1))
        lines[i:i] = [lines[i]] * draw(st.sampled_from([2, 10, 200]))
        return b"\n".join(lines)
    if kind == 10:  # truncation
        return data[:at]
    # a slice of another corpus file spliced in
    other = draw(st.sampled_from(CORPUS))
    start = draw(st.integers(0, len(other) - 1))
    return data[:at] + other[start : start + draw(st.integers(1, 400))] + data[at:]


# files whose projection is quick (a space of a few thousand points on a dense model, or no space):
# the test suite's share of the corpus, where the benchmark takes all of it
QUICK = [data for path, data in zip(CORPUS_FILES, CORPUS, strict=True)
         if path.parent.name != "examples" or path.stem == "llama3_1_8b_mi325x"]


@st.composite
def mutated_sources(draw: st.DrawFn, corpus: list[bytes] | None = None) -> bytes:
    data = draw(st.sampled_from(corpus or CORPUS))
    for _ in range(draw(st.integers(1, 4))):
        data = draw(_mutate(data))
    return data


@st.composite
def mutated_grammar_sources(draw: st.DrawFn) -> bytes:
    data = draw(grammar_sources())
    if draw(st.booleans()):
        data = draw(_mutate(data))
    return data


def sources() -> st.SearchStrategy[bytes]:
    """Everything the fuzzer draws from: about half mutated corpus files, half written from the grammar."""
    return st.one_of(mutated_sources(), mutated_grammar_sources())
