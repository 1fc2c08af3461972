"""``primusc dump --stage ast|ir FILE``: the syntax tree or the lowered IR as JSON or YAML."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import attrs
import yaml

from primus_lang.ir import serialize
from primus_lang.ir.serialize import to_data
from primus_lang.ir.span import Span
from primus_lang.lower import load_program
from primus_lang.syntax import decode, parse, read_source


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("dump", help="print the AST or IR of a .prx file")
    p.add_argument("file", help="the .prx file")
    p.add_argument("--stage", choices=("ast", "ir"), default="ir", help="which stage to print")
    p.add_argument("--format", choices=("json", "yaml"), default="json", help="output format")
    p.set_defaults(func=run)


def ast_data(node: Any) -> Any:
    """The AST as plain data; each node tagged with its class name, spans as `file:line:col`."""
    if isinstance(node, Span):
        return f"{node.file}:{node.line}:{node.column}-{node.end_line}:{node.end_column}"
    if attrs.has(type(node)):
        out: dict[str, Any] = {"node": type(node).__name__}
        for f in attrs.fields(type(node)):
            out[f.name] = ast_data(getattr(node, f.name))
        return out
    if isinstance(node, tuple | list):
        return [ast_data(x) for x in node]
    return node


def run(args: argparse.Namespace) -> int:
    if args.stage == "ast":
        # bounded and refusing pipes and devices, as every other command reads a source
        data = ast_data(parse(decode(read_source(Path(args.file), args.file), args.file), args.file))
    else:
        data = to_data(load_program(args.file))
    if args.format == "yaml":
        print(yaml.safe_dump(data, sort_keys=False), end="")
    else:
        print(serialize.to_json(data))
    return 0
