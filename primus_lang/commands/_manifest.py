"""The campaign manifest ``primusc learn`` reads, checked field by field before anything uses it.

``plan --shortlist K`` writes it, but it travels to a cluster and back and may be edited on the way:
a job's candidate with ``"cuda_graph": "x"`` or ``"pp": -1``, a GPU profile with a negative peak, a
job without its log, a profile module name holding a newline (it is written into the site profile's
``import`` line). Each is refused as P8041 naming the field, where each used to surface as an internal
error (KeyError, ZeroDivisionError, a cattrs validation group) or as text spliced into the output.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics.codes_search import CAMPAIGN_MANIFEST
from primus_lang.ir.checked import from_checked

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _refused(path: Path, why: str) -> CompileError:
    return CompileError(Diagnostic(CAMPAIGN_MANIFEST, f"`{path}` is not a campaign manifest primusc wrote: {why}",
                                   help="write the campaign again with `primusc plan --shortlist K`, or undo the edit"))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_manifest(path: Path, data: dict[str, Any]) -> None:
    """Refuse ``data`` (the manifest at ``path``, its keys already present) unless every field
    ``learn`` reads is of the kind ``plan`` writes."""
    from primus_lang.ir import Candidate, Gpu

    for key in ("space", "model", "target"):
        if not isinstance(data.get(key), str):
            raise _refused(path, f"`{key}` is not a string")
    source = data["source"]
    if not isinstance(source, dict) or not all(isinstance(source.get(k, ""), str) for k in ("path", "file")):
        raise _refused(path, "`source` is not a mapping of the space's `file` and `path`")
    cluster = data["cluster"]
    if not isinstance(cluster, dict) or not all(_is_int(cluster.get(k)) and cluster[k] > 0
                                                for k in ("nodes", "gpus_per_node")):
        raise _refused(path, "`cluster` does not give `nodes` and `gpus_per_node` as positive integers")
    profile = data["profile"]
    if not isinstance(profile, dict) or not isinstance(profile.get("name"), str) \
            or not _IDENT.fullmatch(profile["name"]):
        raise _refused(path, "`profile` does not name the starting GPU profile by an identifier")
    module, file = profile.get("module"), profile.get("file")
    if module and not (isinstance(module, str) and _MODULE.fullmatch(module)):
        raise _refused(path, "`profile.module` is not a stdlib module name (like `hardware.calibrated`)")
    if not module and not isinstance(file, str):
        raise _refused(path, "`profile` gives neither the `module` nor the `file` of the starting GPU profile")
    _, why = from_checked(data["gpu"], Gpu)
    if why:
        raise _refused(path, f"its GPU profile: {why}")
    jobs = data["jobs"]
    if not isinstance(jobs, list) or not jobs:
        raise _refused(path, "`jobs` is not a non-empty list")
    for number, job in enumerate(jobs):
        if not isinstance(job, dict):
            raise _refused(path, f"job {number} is not a mapping")
        if not _is_int(job.get("index")) or not isinstance(job.get("log"), str) or not job["log"] \
                or not isinstance(job.get("label"), str):
            raise _refused(path, f"job {number} does not give its `index` (an integer), `log` and `label` (strings)")
        _, why = from_checked(job.get("candidate"), Candidate)
        if why:
            raise _refused(path, f"the candidate of job {job['index']}: {why}")
    indexes = [job["index"] for job in jobs]
    if len(set(indexes)) != len(indexes):
        raise _refused(path, "two jobs have the same `index`")
