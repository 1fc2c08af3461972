"""``primusc import-hf config.json``: write a model card in the language from a Hugging Face config."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from primus_lang.commands._options import natural
from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_import import BAD_VALUE, OUTPUT_EXISTS
from primus_lang.hfimport import (
    SUPPORTED_MODEL_TYPES,
    card_name,
    check_name,
    map_config,
    read_config,
    render_card,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "import-hf",
        help="write a model card (.prx) from a Hugging Face config.json",
        description="Map a Hugging Face config.json (model_type " + ", ".join(SUPPORTED_MODEL_TYPES) + ") to a "
        "model card; refuse what the IR cannot express.",
    )
    p.add_argument("config", help="path of the model's config.json, or of the folder holding it")
    p.add_argument("--name", help="the card's name (default: from the Hub id or the folder)")
    p.add_argument("--out", help="write the card here instead of standard output")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    p.add_argument("--seq-len", type=natural, help="the card's default training sequence length")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else None
    if out is not None:
        from primus_lang.outputs import refuse_collisions

        # --force replaces an existing card, never the config.json the card is read from
        source = Path(args.config) / "config.json" if Path(args.config).is_dir() else Path(args.config)
        refuse_collisions({"--out": out}, {"the config": source})
    if out is not None:
        from primus_lang.outputs import refuse_link

        refuse_link(out)  # a folder, a link or a device is said as such, not as a file that exists
    if out is not None and out.exists() and not args.force:
        raise CompileError(
            Diagnostic(
                OUTPUT_EXISTS,
                f"`{out}` exists; not overwriting it",
                help="pass `--force` to replace it, or choose another `--out`",
            )
        )
    config = read_config(args.config)
    name = check_name(args.name) if args.name else card_name(config)
    if args.seq_len is not None and args.seq_len <= 0:
        raise CompileError(
            Diagnostic(BAD_VALUE, f"`--seq-len` is {args.seq_len}, expected a positive integer")
        )
    imported = map_config(config, name, seq_len=args.seq_len)
    text = render_card(imported, args.config)
    if out is None:
        sys.stdout.write(text)
    else:
        from primus_lang.outputs import write_file

        write_file(out, text, force=args.force, option="out")
        print(f"wrote model card `{name}` to {out}", file=sys.stderr)
    return 0
