"""P89xx: the report, explain and diff commands (I/O of the search family, kept in their own range)."""

from primus_lang.diagnostics.core import register

TRACE_EMPTY = register(
    "P8901",
    "trace-without-evaluations",
    "the trace records no evaluated candidate, so there is nothing to report",
    "`primusc report TRACE` draws the evaluations a search traced. A trace written by a search that was\n"
    "interrupted before its first evaluation, or that found no fitting point, has none. Rerun\n"
    "`primusc plan FILE --trace TRACE` (or `--resume TRACE`) until it evaluates something.",
)
NEEDS_TWO_POINTS = register(
    "P8902",
    "diff-needs-two-points",
    "`primusc diff` compares exactly two candidates",
    "Give the two points as arguments, `primusc diff space.prx tp=2,pp=4 tp=4,pp=2`, or with\n"
    "`--a tp=2,pp=4 --b tp=4,pp=2`. Knobs not named take their default where the space\n"
    "allows it, else the first value of their axis.",
)
REPORT_WRITE = register(
    "P8903",
    "report-not-written",
    "the HTML report could not be written",
    "The path given to `--report` or `--out` must be in a directory primusc can create and write.",
)
SPACE_NOT_FOUND = register(
    "P8904",
    "trace-space-not-found",
    "the space file named by the trace cannot be read",
    "A trace records the path of the .prx file its search read, relative to where `primusc plan` ran.\n"
    "Run `primusc report` from the same directory, or pass `--space FILE` to name the file.",
)
