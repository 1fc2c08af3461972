"""``site`` definitions and a space's ``run`` block: the parts generic lowering cannot read.

A site's ``mounts`` and ``env`` blocks hold entries the user names, so they are lowered here; every
other field goes through ``Loader.build`` like a cluster's. Each value that later lands in a shell,
an ``#SBATCH`` line or a Kubernetes object is checked where it is written.
"""

from __future__ import annotations

import difflib
import re
from pathlib import PurePosixPath
from typing import Any

from primus_lang.diagnostics import CompileError, Diagnostic
from primus_lang.diagnostics import codes_types as T
from primus_lang.ir.run import Run, blend_problem
from primus_lang.ir.site import (
    ABSOLUTE,
    IMAGE,
    IMAGE_FORM,
    MOUNT_NAME,
    RESERVED_ENV,
    RUNTIMES,
    SHELL_ENV,
    SLURM_NAMES,
    EnvVar,
    Mount,
    text_problem,
)
from primus_lang.ir.span import Span
from primus_lang.lower.scope import LoadedModule, Resolver
from primus_lang.syntax import ast

PATH_FIELDS = ("megatron_dir", "primus_dir", "bridge_dir", "data_root", "checkpoint_root", "preamble")
OPTION_LISTS = ("sbatch_args", "srun_args")
K8S_NAMES = ("namespace", "queue", "cluster_queue", "priority_class", "image_pull_secret", "service_account")

# an option (`--mpi=pmix`), as sbatch reads them
_OPTION = re.compile(r"--?[A-Za-z][A-Za-z0-9-]*(=[^\s\x00-\x1f'\"`$\\;]*)?")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_LABEL_KEY = re.compile(r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                        r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class _Text:
    """A string field as written: its text and the span of the statement."""

    def __init__(self, text: str, span: Span | None) -> None:
        self.text, self.span = text, span


def _text_stmts(block: ast.Block) -> dict[str, _Text]:
    return {st.name: _Text(st.value.value, st.span) for st in block.stmts
            if isinstance(st, ast.Assign) and isinstance(st.value, ast.Str)}


def _check_path(value: str, what: str, span: Span | None) -> Diagnostic | None:
    if value == "" or ABSOLUTE.fullmatch(value):
        return None
    return Diagnostic(T.SITE_PATH, f"`{what}` = {value!r} is not an absolute path without `:` or `,`", span,
                      help=f"write the full path from `/`, e.g. `{what} = \"/{value.lstrip('./')}\"`")


def site_blocks(loader: Resolver, block: ast.Block, base: dict[str, Any],
                module: LoadedModule) -> tuple[ast.Block, dict[str, Any]]:
    """The block without its ``mounts``/``env`` entries, and those entries lowered (a base's entries
    stay unless this block names them again)."""
    rest: list[ast.Stmt] = []
    extra: dict[str, Any] = {}
    errors: list[Diagnostic] = []
    for st in block.stmts:
        if isinstance(st, ast.Nested) and st.name == "mounts":
            try:
                extra["mounts"] = _merge(base.get("mounts", ()), _mounts(loader, st.body, module))
            except CompileError as err:
                errors.extend(err.diagnostics)
        elif isinstance(st, ast.Nested) and st.name == "env":
            try:
                extra["env"] = _merge(base.get("env", ()), _env(st.body))
            except CompileError as err:
                errors.extend(err.diagnostics)
        elif isinstance(st, ast.Assign) and st.name == "runtime" and isinstance(st.value, ast.Ident | ast.Str):
            # a bare name like an enum, but checked here for its own code and the enroot hint
            extra["runtime"] = st.value.name if isinstance(st.value, ast.Ident) else st.value.value
        else:
            rest.append(st)
    errors += _check_fields(block, base)
    if errors:
        raise CompileError(errors)
    return ast.Block(tuple(rest), block.span), extra


def _merge(old: tuple[Any, ...], new: tuple[Any, ...]) -> tuple[Any, ...]:
    names = {item.name for item in new}
    return tuple(item for item in old if item.name not in names) + new


def _mounts(loader: Resolver, body: ast.Block, module: LoadedModule) -> tuple[Mount, ...]:
    out: list[Mount] = []
    errors: list[Diagnostic] = []
    for st in body.stmts:
        if not isinstance(st, ast.Nested):
            errors.append(Diagnostic(T.SITE_MOUNT, "a mount is a named block: `NAME { path = ...; host = ... }`",
                                     st.span, help="e.g. `data { host = \"/lustre/data\"; path = \"/data\" }`"))
            continue
        try:
            mount: Mount = loader.build(Mount, st.body, {}, module, {"name": st.name, "span": st.span}, None)
        except CompileError as err:
            errors.extend(err.diagnostics)
            continue
        texts = _text_stmts(st.body)
        if not MOUNT_NAME.fullmatch(st.name):
            errors.append(Diagnostic(T.SITE_MOUNT, f"mount name `{st.name}` is not a lowercase name", st.span,
                                     help="lowercase letters, digits and `_` (it names a Kubernetes volume)"))
        if bool(mount.host) == bool(mount.claim):
            errors.append(Diagnostic(T.SITE_MOUNT, f"mount `{st.name}` needs exactly one of `host` and `claim`",
                                     st.span, help="`host` for a folder on the nodes, `claim` for a Kubernetes "
                                     "PersistentVolumeClaim"))
        for what in ("path", "host"):
            where = texts[what].span if what in texts else st.span
            problem = _check_path(getattr(mount, what), what, where)
            if problem is not None:
                errors.append(problem)
        if mount.claim and not _DNS_LABEL.fullmatch(mount.claim):
            errors.append(Diagnostic(T.SITE_VALUE, f"claim `{mount.claim}` is not a Kubernetes name",
                                     texts["claim"].span if "claim" in texts else st.span,
                                     help="lowercase letters, digits and `-`"))
        out.append(mount)
    if errors:
        raise CompileError(errors)
    return tuple(out)


def _env(body: ast.Block) -> tuple[EnvVar, ...]:
    out: list[EnvVar] = []
    errors: list[Diagnostic] = []
    for st in body.stmts:
        if not isinstance(st, ast.Assign):
            errors.append(Diagnostic(T.SITE_ENV, "an environment entry is `NAME = \"value\"` or `NAME = forward`",
                                     st.span))
            continue
        if st.name in RESERVED_ENV:
            errors.append(Diagnostic(T.SITE_ENV, f"`{st.name}` is set by the launch files", st.span,
                                     help="`primusc explain P3034` lists the variables primusc controls"))
            continue
        if st.name in SHELL_ENV:
            errors.append(Diagnostic(T.SITE_ENV, f"`{st.name}` changes how bash runs the launch script", st.span,
                                     help="leave it out: the launch files are bash scripts, and no training setting needs it"))
            continue
        value: str | None
        if isinstance(st.value, ast.Str):
            value = st.value.value
        elif isinstance(st.value, ast.Quantity) and st.value.unit is None:
            value = st.value.text
        elif isinstance(st.value, ast.Ident) and st.value.name == "forward":
            value = None
        else:
            errors.append(Diagnostic(T.SITE_ENV, f"`{st.name}` takes a string, a number or `forward`", st.span,
                                     help=f"e.g. `{st.name} = \"value\"`"))
            continue
        if value is not None and _CONTROL.search(value):
            errors.append(Diagnostic(T.SITE_ENV, f"`{st.name}` holds a control character", st.span))
            continue
        out.append(EnvVar(st.name, value, st.span))
    if errors:
        raise CompileError(errors)
    return tuple(out)


def _check_fields(block: ast.Block, base: dict[str, Any]) -> list[Diagnostic]:
    texts = _text_stmts(block)
    errors: list[Diagnostic] = []
    for what in PATH_FIELDS:
        if what in texts:
            problem = _check_path(texts[what].text, what, texts[what].span)
            if problem is not None:
                errors.append(problem)
    for what in (*SLURM_NAMES, "constraint"):
        why = text_problem(what, texts[what].text) if what in texts else None
        if why is not None:
            errors.append(Diagnostic(T.SITE_VALUE, f"`{what}` {why}", texts[what].span))
    for what in K8S_NAMES:
        if what in texts and texts[what].text and not _DNS_LABEL.fullmatch(texts[what].text):
            errors.append(Diagnostic(T.SITE_VALUE, f"`{what}` must be a Kubernetes name (lowercase letters, digits, `-`)",
                                     texts[what].span))
    for what in OPTION_LISTS:
        bad = [w for w in texts[what].text.split() if not _OPTION.fullmatch(w)] if what in texts else []
        if bad:
            errors.append(Diagnostic(T.SITE_VALUE, f"`{what}` holds `{bad[0][:60]}`, not an option `--name[=value]`",
                                     texts[what].span, help="options, space-separated, each `--name` or "
                                     "`--name=value` (no quotes, `$` or `;`: they are written as given)"))
    for what, value in texts.items():
        if _CONTROL.search(value.text):
            errors.append(Diagnostic(T.SITE_VALUE, f"`{what}` holds a control character", value.span))
    runtime_st = next((st for st in block.stmts if isinstance(st, ast.Assign) and st.name == "runtime"), None)
    runtime = base.get("runtime", "none")
    if runtime_st is not None and isinstance(runtime_st.value, ast.Ident | ast.Str):
        runtime = runtime_st.value.name if isinstance(runtime_st.value, ast.Ident) else runtime_st.value.value
        if runtime not in RUNTIMES:
            close = difflib.get_close_matches(runtime, RUNTIMES, n=1)
            hint = "pyxis runs enroot images: write `runtime = pyxis`" if runtime == "enroot" else (
                f"did you mean `{close[0]}`? " if close else "") + "runtimes: " + " | ".join(RUNTIMES)
            errors.append(Diagnostic(T.SITE_RUNTIME, f"`{runtime}` is not a container runtime primusc starts",
                                     runtime_st.value.span, help=hint))
    image = texts["image"].text if "image" in texts else base.get("image", "")
    if "image" in texts and image and not IMAGE.fullmatch(image):
        errors.append(Diagnostic(T.SITE_VALUE, f"`image` holds `{image[:60]}`, which no container runtime can start",
                                 texts["image"].span, help=f"write {IMAGE_FORM}"))
    if runtime in RUNTIMES and runtime != "none" and not image:
        errors.append(Diagnostic(T.SITE_IMAGE, f"runtime `{runtime}` needs an `image`",
                                 runtime_st.span if runtime_st is not None else block.span,
                                 help="add `image = \"registry/name:tag\"`"))
    if "node_selector" in texts:
        errors += _selector(texts["node_selector"])
    if "tolerations" in texts:
        errors += _tolerations(texts["tolerations"])
    if "annotations" in texts:
        errors += _annotations(texts["annotations"])
    if "secrets" in texts:
        errors += _secrets(texts["secrets"])
    return errors


def _annotations(st: _Text) -> list[Diagnostic]:
    for part in (p.strip() for p in st.text.split(",") if p.strip()):
        key, eq, value = part.partition("=")
        if not (eq and _LABEL_KEY.fullmatch(key) and value and not _CONTROL.search(value)):
            return [Diagnostic(T.SITE_SELECTOR, f"`{part}` is not a `key=value` pod annotation", st.span,
                               help="e.g. `annotations = \"k8s.v1.cni.cncf.io/networks=rdma-net\"`")]
    return []


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]{1,253}")


def _secrets(st: _Text) -> list[Diagnostic]:
    for part in (p.strip() for p in st.text.split(",") if p.strip()):
        name, eq, ref = part.partition("=")
        secret, slash, key = ref.partition("/")
        if not (eq and slash and _ENV_NAME.fullmatch(name) and _DNS_LABEL.fullmatch(secret)
                and _SECRET_KEY.fullmatch(key)):
            return [Diagnostic(T.SITE_SELECTOR, f"`{part}` is not `VARIABLE=secret/key`", st.span,
                               help="e.g. `secrets = \"HF_TOKEN=hf-token/token\"`: the variable is read from the "
                                    "key `token` of the Secret `hf-token` in the namespace")]
        if name in RESERVED_ENV or name in SHELL_ENV:
            return [Diagnostic(T.SITE_SELECTOR, f"`{name}` is set by the launch files or changes how bash reads "
                               "them; a secret cannot hold it", st.span)]
    return []


def _selector(st: _Text) -> list[Diagnostic]:
    text = st.text
    for part in (p.strip() for p in text.split(",")):
        key, eq, value = part.partition("=")
        if not (eq and _LABEL_KEY.fullmatch(key) and _LABEL_VALUE.fullmatch(value)):
            return [Diagnostic(T.SITE_SELECTOR, f"`{part}` is not a `key=value` node label", st.span,
                               help="e.g. `node_selector = \"nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\"`")]
    return []


def _tolerations(st: _Text) -> list[Diagnostic]:
    text = st.text
    for part in (p.strip() for p in text.split(",")):
        taint, colon, effect = part.rpartition(":")
        key, _, value = taint.partition("=")
        if not (colon and effect in _EFFECTS and _LABEL_KEY.fullmatch(key) and _LABEL_VALUE.fullmatch(value)):
            return [Diagnostic(T.SITE_SELECTOR, f"`{part}` is not a `key[=value]:Effect` toleration", st.span,
                               help="effects: " + ", ".join(_EFFECTS) + "; e.g. `\"nvidia.com/gpu:NoSchedule\"`")]
    return []


# ---- a space's run block ----------------------------------------------------------------------
def lower_run(loader: Resolver, module: LoadedModule, st: ast.Nested) -> Run:
    run: Run = loader.build(Run, st.body, {}, module, {"span": st.span}, None)
    texts = _text_stmts(st.body)
    errors: list[Diagnostic] = []
    for what in ("data", "train_data", "valid_data", "test_data"):
        why = blend_problem(getattr(run, what))
        if why is not None:
            errors.append(Diagnostic(T.RUN_DATA, f"`{what}`: {why}", texts[what].span,
                                     help="e.g. `\"0.7 wiki/text_document 0.3 code/text_document\"`"))
    if run.data and (run.train_data or run.valid_data or run.test_data):
        errors.append(Diagnostic(T.RUN_DATA, "`data` and the per-split fields exclude each other", texts["data"].span,
                                 help="Megatron takes --data-path or --train/valid/test-data-path, not both"))
    real = run.data or run.train_data
    if real and (run.tokenizer == "NullTokenizer" or (not run.tokenizer and not run.tokenizer_model)):
        errors.append(Diagnostic(T.RUN_TOKENIZER, "the run reads real data with the null tokenizer",
                                 texts["data" if "data" in texts else "train_data"].span,
                                 help="add `tokenizer_model = \"...\"` (the tokenizer the data was made with)"))
    for what, text in texts.items():
        if any(not c.isprintable() for c in text.text):
            errors.append(Diagnostic(T.RUN_TEXT, f"`{what}` holds a control character (a newline or tab)", text.span,
                                     help="write it on one line, without `\\n` or `\\t`"))
    folder = run.checkpoint_dir
    if folder and not folder.startswith("/") and ".." in PurePosixPath(folder).parts:
        errors.append(Diagnostic(T.RUN_TEXT, f"`checkpoint_dir` `{folder}` climbs out of the site's checkpoint root",
                                 texts["checkpoint_dir"].span if "checkpoint_dir" in texts else st.span,
                                 help="a relative folder lies under `checkpoint_root`; write the absolute folder meant"))
    if errors:
        raise CompileError(errors)
    return run
