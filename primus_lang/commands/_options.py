"""Options several commands share, declared once so they read and behave the same everywhere.

The leading underscore keeps this module out of the CLI's command discovery.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import TYPE_CHECKING

from primus_lang.bench.oracle import ORACLE_KINDS

if TYPE_CHECKING:
    from primus_lang.ir import Candidate, Cluster, Model, Settings
    from primus_lang.project.oracle import Oracle


def add_space_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="the .prx file")
    p.add_argument("--space", default=None, help="the space's name when the file defines several")


def add_oracle_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--oracle",
        choices=ORACLE_KINDS,
        default=None,
        help="simulate: hardware spec and efficiency curves, CPU only; benchmark: measure missing kernels on "
        "--device into --db; hybrid: the profile database where it has a shape, simulate elsewhere "
        "(default: the space's `assume oracle`, else simulate)",
    )
    p.add_argument("--device", default="cpu", help="device the benchmark oracle measures on (cpu, cuda:0)")
    p.add_argument("--db", default=None, help="profile database (default ~/.cache/primusc/profile.sqlite)")


def oracle_kind(args: argparse.Namespace, settings: Settings | None = None) -> str:
    chosen = getattr(args, "oracle", None)
    if chosen:
        return str(chosen)
    return settings.oracle if settings is not None else "simulate"


def build_oracle(
    args: argparse.Namespace, kind: str, cluster: Cluster, model: Model | None = None,
    cands: Iterable[Candidate] = (),
) -> Oracle | None:
    """The oracle ``kind`` names for ``cluster``; None means the projection's own simulate oracle."""
    if kind == "simulate":
        return None
    from primus_lang.bench.oracle import make_oracle

    return make_oracle(kind, args.device, args.db, cluster=cluster, model=model, cands=cands)
