"""Regret of every search strategy against the exhaustive optimum, on example spaces.

    python benchmarks/tune_compare.py                       # the example spaces below, 5 seeds
    python benchmarks/tune_compare.py --write-docs          # also refresh the table in docs/search.md
    python benchmarks/tune_compare.py examples/x.prx ...    # other spaces

It is ``primusc tune-compare`` with the spaces the documentation reports and the option to put the
result into docs/search.md between its ``tune-compare`` markers, with the machine time it took.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from primus_lang.lower import load_space
from primus_lang.search.compare import DEFAULT_BUDGETS, DEFAULT_STRATEGIES, compare, markdown

ROOT = Path(__file__).resolve().parents[1]
SPACES = (
    "examples/llama3_1_8b_mi325x.prx",
    "examples/llama3_1_70b_mi325x.prx",
    "examples/llama3_70b_h100.prx",
    "examples/mixtral_8x22b_mi355x.prx",
    "examples/qwen3_235b_mi355x.prx",
    "examples/deepseek_v3_mi355x.prx",
    "examples/llama3_70b_gb200.prx",
    "examples/nemotron3_nano_gb200.prx",
    "examples/gpt_oss_120b_b200.prx",
)
BEGIN, END = "<!-- tune-compare:begin -->", "<!-- tune-compare:end -->"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", default=list(SPACES))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)))
    parser.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES))
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    spaces = [load_space(ROOT / f if not Path(f).is_absolute() else Path(f)) for f in args.files]
    budgets = tuple(int(b) for b in args.budgets.split(","))
    strategies = tuple(s.strip() for s in args.strategies.split(","))
    start = time.monotonic()
    result = compare(spaces, strategies, budgets, args.seeds, progress=lambda line: print(line, file=sys.stderr))
    elapsed = time.monotonic() - start
    text = markdown(result) + (
        f"\n_{len(spaces)} spaces x {len(strategies)} strategies x {len(budgets)} budgets x {args.seeds} seeds, "
        f"simulate oracle, {elapsed:.0f} s on this machine (`python benchmarks/tune_compare.py`)._\n"
    )
    print(text)
    if args.write_docs:
        doc = ROOT / "docs" / "search.md"
        body = doc.read_text(encoding="utf-8")
        head, _, rest = body.partition(BEGIN)
        _, _, tail = rest.partition(END)
        doc.write_text(f"{head}{BEGIN}\n{text}{END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
