"""P2: names and imports (something referred to does not exist, or exists twice)."""

from primus_lang.diagnostics.core import register

UNKNOWN_NAME = register(
    "P2001",
    "unknown-name",
    "a reference to a model, GPU or cluster that is not defined or imported",
    "Define it in this file or import it: `import models.llama3 (llama3_1_70b)`. The message suggests "
    "the closest defined name.",
)
UNKNOWN_FIELD = register(
    "P2002",
    "unknown-field",
    "a field that the block's kind does not have",
    "Each block kind (model, gpu, cluster, moe, mla, efficiency) has a fixed set of fields, listed in "
    "docs/language.md. Field names are lowercase with underscores.",
)
UNKNOWN_MODULE = register(
    "P2003",
    "unknown-module",
    "an import of a stdlib module or file that does not exist",
    '`import models.llama3 (...)` reads stdlib/models/llama3.prx; `import "./x.prx" (...)` reads a file '
    "relative to the importing file.",
)
IMPORT_CYCLE = register(
    "P2004",
    "import-cycle",
    "files import each other in a circle",
    "A file cannot (directly or through others) import itself. Move the shared definitions into a third "
    "file that both import.",
)
NOT_EXPORTED = register(
    "P2005",
    "name-not-in-module",
    "an import names something the module does not define",
    "Check the spelling, or list the module's definitions with `primusc dump --stage ast FILE`.",
)
DUPLICATE_DEFINITION = register(
    "P2006",
    "duplicate-definition",
    "two definitions (or a definition and an import) share a name",
    "Names are unique within a file, across kinds. Rename one of them.",
)
DUPLICATE_FIELD = register(
    "P2007",
    "duplicate-field",
    "a field or knob set twice in the same block",
    "Each field is set at most once per block; a knob is either fixed (`=`) or an axis (`:`), not both.",
)
WRONG_KIND = register(
    "P2008",
    "wrong-kind-of-definition",
    "a name refers to a definition of another kind (a GPU where a model is expected)",
    "`model = ...` takes a model, a cluster's `gpu = ...` a GPU, `space s on ...` a cluster.",
)
UNKNOWN_KNOB = register(
    "P2009",
    "unknown-knob",
    "an axis or fixed value for a knob that does not exist",
    "Knobs are the fields of a candidate recipe (tp, pp, vpp, cp, ep, etp, mbs, gbs, seq_len, precision, "
    "recompute, sharding, schedule, ...); docs/language.md lists them with their values. The cluster a "
    "point runs on (`gpu`, `nodes`, ...) is not one: a command's --cluster names it where the space has "
    "cluster axes.",
)
UNKNOWN_VARIABLE = register(
    "P2010",
    "unknown-variable",
    "an expression uses a name that is not a knob, a derived value, a model fact or a `let`",
    "Expressions may use knobs, `dp edp microbatches world nodes gpus_per_node layers_per_stage`, model "
    "facts `num_layers hidden heads kv_heads num_experts vocab`, enum values and earlier `let` names.",
)
INHERITANCE_CYCLE = register(
    "P2011",
    "inheritance-cycle",
    "a definition inherits from itself through a chain of `= base`",
    "`model a = b { }` and `model b = a { }` cannot both hold; break the chain.",
)
UNKNOWN_SPACE = register(
    "P2012",
    "unknown-space",
    "`--space NAME` names no space of the file",
    "The message lists the spaces the file defines.",
)
NO_SPACE = register(
    "P2013",
    "no-space",
    "the command needs a space but the file defines none, or several without `--space`",
    "Pick one with `--space NAME`, or add a `space NAME on CLUSTER { ... }` definition.",
)
UNKNOWN_FUNCTION = register(
    "P2014",
    "unknown-function",
    "a call to a function the language does not have",
    "Expressions know `min(a, b, ...)`, `max(a, b, ...)` and `divides(a, b)` (a divides b); domains know "
    "`pow2(lo .. hi)` and `full(layers: ..., method: ...)`.",
)
FILE_ACCESS = register(
    "P2015",
    "file-access",
    "a file or folder the command reads or writes cannot be used",
    "The path does not exist, is a folder where a file is needed (or the other way round), or cannot\n"
    "be read or written with your permissions. The message names the path and the system's reason.",
)
UNKNOWN_CODE = register(
    "P2016",
    "unknown-code",
    "`primusc explain` was given neither a diagnostic code nor a file",
    "`primusc explain P3009` (or its name, `value-out-of-range`) explains a code; `primusc explain` lists\n"
    "them all; `primusc explain FILE --point ...` explains a candidate of the space in FILE.",
)
BAD_ARGUMENT = register(
    "P2017",
    "bad-argument",
    "the command line names an unknown option or command, or gives an option a value it cannot take",
    "`primusc --help` lists the commands and `primusc COMMAND --help` a command's options and the\n"
    "values they take.",
)
