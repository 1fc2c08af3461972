"""P1: syntax (the text is not a well-formed ``.prx`` file)."""

from primus_lang.diagnostics.core import register

UNEXPECTED_TOKEN = register(
    "P1001",
    "unexpected-token",
    "the parser met a token it cannot use here",
    "The text is not valid .prx at this point. The message lists what the grammar expected; "
    "`docs/language.md` shows every construct with an example.",
)
UNEXPECTED_CHARACTER = register(
    "P1002",
    "unexpected-character",
    "a character that starts no token of the language",
    "Only names, numbers with units, strings in double quotes, `#` comments and the language's "
    "operators may appear. Remove the character or put the text in a string.",
)
UNCLOSED_BLOCK = register(
    "P1003",
    "unclosed-block",
    "the file ends inside a `{ ... }` block or a parenthesis",
    "Every `{` needs a matching `}` (and every `(` a `)`). Example:\n\n"
    "    model m { num_layers = 32    # missing `}`\n\nadd the closing brace.",
)
EQUALS_FOR_DOMAIN = register(
    "P1004",
    "equals-for-domain",
    "a set of values written with `=` instead of `:`",
    "`knob = value` fixes a knob; `knob : a | b` makes it an axis with several values. Write\n\n"
    "    tp : 1 | 2 | 4\n\ninstead of `tp = 1 | 2 | 4`.",
)
UNKNOWN_UNIT = register(
    "P1005",
    "unknown-unit",
    "a number is followed by a word that is not a unit",
    "Units: B KB MB GB TB KiB MiB GiB TiB (bytes), B/s .. TB/s, GiB/s, Mbps Gbps Tbps (bandwidth), "
    "FLOP/s GFLOP/s TFLOP/s PFLOP/s, ns us ms s min h (time), % (fraction). They are case-sensitive: "
    "`GiB`, not `Gib`.",
)
MISSING_VALUE = register(
    "P1006",
    "missing-value",
    "`=` or `:` with nothing usable after it",
    "A field needs a value (`num_layers = 32`), an axis a domain (`tp : 1 | 2`).",
)
TOP_LEVEL_STATEMENT = register(
    "P1007",
    "statement-outside-definition",
    "a field or axis written outside any definition",
    "At the top level a file holds only `import`s and `model`, `gpu`, `cluster` and `space` "
    "definitions; fields go inside a definition's braces.",
)
EMPTY_FILE = register(
    "P1008",
    "empty-file",
    "the file defines nothing",
    "A .prx file needs at least one import or definition. An empty file is usually a wrong path or "
    "a file that was truncated.",
)
NOT_TEXT = register(
    "P1009",
    "not-text",
    "the input is not UTF-8 text",
    "primusc reads UTF-8 text; this input holds bytes that are not (a binary file, or another encoding). "
    "Check the path, or convert the file with `iconv -t UTF-8`.",
)
FILE_TOO_LARGE = register(
    "P1010",
    "file-too-large",
    "the input is larger than any recipe file should be",
    "Recipe files are a few kilobytes; primusc refuses inputs above 4 MiB rather than spend minutes "
    "parsing what is almost certainly not a recipe (a log, a checkpoint, generated data).",
)
MISSING_IMPORT_LIST = register(
    "P1011",
    "missing-import-list",
    "an import without its parenthesised list of names",
    "Name what you take from a module: `import models.llama3 (llama3_1_70b)`, or `(*)` for everything.",
)
KEYWORD_AS_NAME = register(
    "P1012",
    "keyword-as-name",
    "a keyword used where a name was expected",
    "Words such as `let`, `require`, `fits`, `budget`, `strategy`, `target`, `assume`, `maximize` start "
    "statements inside a space and cannot be field or knob names.",
)
MISSING_NAME = register(
    "P1013",
    "missing-name",
    "a definition without its name",
    "Every definition is named: `model my_model { ... }`, `space s on my_cluster { ... }`.",
)
UNCLOSED_STRING = register(
    "P1014",
    "unclosed-string",
    'a string without its closing `"` on the same line',
    'Strings are written in double quotes on one line: `source = "HF config.json"`.',
)
EXPRESSION_TOO_DEEP = register(
    "P1015",
    "expression-too-deep",
    "an expression nested more deeply than the compiler accepts",
    "Expressions may nest at most 200 levels of operators (an operator inside another; parentheses "
    "alone add none); split a long one with `let`.",
)
NUMBER_OUT_OF_RANGE = register(
    "P1016",
    "number-out-of-range",
    "a number literal beyond what the compiler can hold exactly",
    "Whole numbers are at most 9,223,372,036,854,775,807 (2^63 - 1) and decimals must be finite and, "
    "unless 0, must not round to 0: `1e400` would read as infinity and `1e-400` as 0, so "
    "`require tp < 1e400` would mean something else once formatted. No field, knob or bound needs such "
    "a number; check the digits.",
)
NOT_A_FILE = register(
    "P1017",
    "not-a-file",
    "the path names a directory, a device or a pipe, not a source file",
    "primusc reads `.prx` sources from regular files only: `/dev/zero` never ends, `/dev/stdin` or a\n"
    "named pipe blocks until someone writes, and a directory holds no text. Give the path of the file.",
)
NEGATIVE_VALUE = register(
    "P1018",
    "negative-value",
    "a negative number written as a field's, knob's or assumption's value",
    "Counts, sizes, bandwidths, times and assumptions are never negative, so values have no minus sign:\n"
    "`tp : -1` or `nodes = -2` is refused where the `-` stands. Expressions in `require`, `let` and\n"
    "`when` may subtract and negate (`require tp - pp > -1`).",
)
