"""Writes the framework knowledge primusc reads (``frameworks/``) from the frameworks' own sources.

Not run by the tests: rerun it against git checkouts (a clone, or a bare mirror) to refresh the tables,
then commit what it wrote. Each table names the tag and commit it came from.

    python tools/framework_knowledge.py megatron MEGATRON_LM_GIT_DIR
    python tools/framework_knowledge.py megatron-rules MEGATRON_LM_GIT_DIR
    python tools/framework_knowledge.py primus PRIMUS_GIT_DIR
    python tools/framework_knowledge.py bridge BRIDGE_GIT_DIR --megatron-git MEGATRON_LM_GIT_DIR --python PY
    python tools/framework_knowledge.py bridge-launchers BRIDGE_GIT_DIR

``megatron``: every command-line flag of megatron/training/arguments.py at each release below and at
the commits Primus and Megatron-Bridge pin, with its dest, action, nargs, type, default and choices,
and those pretrain_gpt.py adds when nvidia-modelopt is installed (megatron/post_training/arguments.py,
marked ``"provider": "modelopt"``).
The parser is built by the release's own code (``add_megatron_arguments``) in a subprocess
(tools/megatron_parser_probe.py), with the GPU-only packages stubbed, so the flags it generates from
config dataclasses are counted too; nothing is copied from the sources.

``bridge``: every pretraining recipe of Megatron-Bridge (library and performance) at each ref below, evaluated
by Bridge's own code in a subprocess (tools/bridge_recipe_probe.py), which needs a Python with torch,
omegaconf, hydra-core and transformers (``--python``): the settings each applies, as the paths Hydra overrides
take, and the paths each model class accepts.

``bridge-launchers``: the options of Megatron-Bridge's two Slurm launchers (scripts/training/setup_experiment.py,
which train.sh runs, and scripts/performance/argument_parser.py) at each ref below, read from the source's
``add_argument`` calls (no subprocess): every spelling, the dest, the action, nargs and the default (a literal, or
the environment variable ``os.environ.get`` reads), and the argument group, which is how an import learns
where such a launch runs and what it falls back to.

``megatron-rules``: the asserts of megatron/training/arguments.py's ``validate_args`` that compare
arguments with constants alone (tools/validate_args_rules.py), at the same versions as ``megatron``: what
stops a run at start, which ``emit`` checks a launch's settings against. Read from the source text; no
subprocess.

``primus``: Primus's Megatron trainer defaults (primus/configs/modules/megatron/*.yaml) and its model
files (primus/configs/models/megatron/*.yaml) as written, at each Primus release below.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "frameworks"
PROBE = Path(__file__).resolve().parent / "megatron_parser_probe.py"

# name -> (git ref, what it is). The latest patch of each minor release from core_v0.12, then the
# Megatron-LM commits the other frameworks pin as submodules.
MEGATRON_VERSIONS: dict[str, tuple[str, str]] = {
    "core_v0.12": ("core_v0.12.3", "release core_v0.12.3"),
    "core_v0.13": ("core_v0.13.1", "release core_v0.13.1"),
    "core_v0.14": ("core_v0.14.0", "release core_v0.14.0"),
    "core_v0.15": ("core_v0.15.3", "release core_v0.15.3"),
    "core_v0.16": ("core_v0.16.1", "release core_v0.16.1"),
    "core_v0.17": ("core_v0.17.1", "release core_v0.17.1"),
    "core_v0.18": ("core_v0.18.2", "release core_v0.18.2"),
    "core_v0.19": ("core_v0.19.0", "release core_v0.19.0"),
    "primus_v26.2": ("3bec9aa97dda898d16ff5a89bac0ed2b6682b172",
                     "the third_party/Megatron-LM commit AMD-AGI/Primus v26.2.1 pins"),
    "primus_v26.5": ("d3528a21301db2d12e92912b3ec025dc8a2ed4d6",
                     "the third_party/Megatron-LM commit AMD-AGI/Primus v26.3.1 to v26.5.1 pin"),
    "bridge_v0.6": ("cd4afffa648426a959dc7cb1e24b5ce7d0c3ff54",
                    "the 3rdparty/Megatron-LM commit NVIDIA-NeMo/Megatron-Bridge v0.6.0 pins"),
    "bridge_067f987": ("2a75ac12c54ba6a42b34024756820bf819a2e25f",
                       "the 3rdparty/Megatron-LM commit NVIDIA-NeMo/Megatron-Bridge 067f987 pins"),
}

# Megatron-Bridge refs whose recipes are evaluated: the release, and the main commit primusc's Bridge launches
# were first written for (its Llama recipes build a nested model config: `model.transformer.*` paths)
BRIDGE_VERSIONS: dict[str, str] = {"v0.6": "v0.6.0", "067f987": "067f987df03b8355b03192d88d70f1709fedf51a"}
BRIDGE_PROBE = Path(__file__).resolve().parent / "bridge_recipe_probe.py"
# the sections of a ConfigContainer a recipe's settings are kept from (the others are paths and names of
# the machine it runs on: logger folders, checkpoint paths, the profiler)
BRIDGE_SECTIONS = ("model", "train", "ddp", "optimizer", "scheduler", "mixed_precision", "comm_overlap", "dataset",
                   "tokenizer", "rng", "dist")

# Primus releases whose trainer defaults and model files are read
PRIMUS_VERSIONS: dict[str, str] = {"v26.2": "v26.2.1", "v26.3": "v26.3.1", "v26.4": "v26.4.0", "v26.5": "v26.5.1"}
PRIMUS_CONFIGS = "primus/configs"


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True,
                          text=True, timeout=3600).stdout


def git_dir_of(path: str) -> str:
    p = Path(path)
    return str(p / ".git") if (p / ".git").exists() else str(p)


def megatron_flags(git_dir: str, ref: str, python: str) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tree:
        archive = subprocess.run(["git", "--git-dir", git_dir, "archive", ref, "megatron"], check=True,
                                 capture_output=True, timeout=3600).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True, timeout=3600)
        done = subprocess.run([python, str(PROBE)], cwd=tree, env={"PYTHONPATH": tree, "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"building the parser at {ref} failed:\n{done.stderr[-3000:]}")
        flags: list[dict[str, Any]] = json.loads(done.stdout)
        return flags


_ACTIONS = {"_StoreAction": "store", "_StoreTrueAction": "store_true", "_StoreFalseAction": "store_false",
            "_StoreConstAction": "store_const", "_AppendAction": "append", "_CountAction": "count",
            "BooleanOptionalAction": "boolean_optional"}


def _form(action: dict[str, Any]) -> dict[str, Any]:
    """What a flag is at one version: the parts a reader of a command line needs."""
    kind = _ACTIONS.get(action["action"], action["action"])
    form: dict[str, Any] = {"dest": action["dest"], "action": kind}
    if kind in ("store", "append"):
        form["nargs"] = action["nargs"]
        form["type"] = action["type"]
        form["choices"] = action["choices"]
    form["default"] = action["default"]
    if kind == "store_const":
        form["const"] = action["const"]
    if action.get("provider"):
        form["provider"] = action["provider"]
    return form


def megatron(git_dir: str, python: str) -> dict[str, Any]:
    versions = []
    per_flag: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for name, (ref, what) in MEGATRON_VERSIONS.items():
        commit = git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip()
        date = git(git_dir, "log", "-1", "--format=%cs", commit).strip()
        versions.append({"name": name, "ref": ref, "commit": commit, "date": date, "what": what})
        print(f"{name}: {ref} ({commit[:10]}, {date})", file=sys.stderr)
        for action in megatron_flags(git_dir, ref, python):
            for option in action["options"]:
                if option.startswith("--"):
                    per_flag.setdefault(option, []).append((name, _form(action)))
    order = [v["name"] for v in sorted(versions, key=lambda v: (v["date"], v["name"]))]
    flags: dict[str, list[dict[str, Any]]] = {}
    for option in sorted(per_flag):
        forms: list[dict[str, Any]] = []
        for name, form in sorted(per_flag[option], key=lambda nf: order.index(nf[0])):
            same = next((f for f in forms if {k: v for k, v in f.items() if k != "versions"} == form), None)
            if same is None:
                forms.append({**form, "versions": [name]})
            else:
                same["versions"].append(name)
        flags[option] = forms
    return {
        "source": "NVIDIA/Megatron-LM megatron/training/arguments.py: the parser add_megatron_arguments builds, "
                  "read by tools/framework_knowledge.py",
        "versions": sorted(versions, key=lambda v: order.index(v["name"])),
        "flags": flags,
    }


def megatron_rules(git_dir: str) -> dict[str, Any]:
    """Each ``validate_args`` rule (validate_args_rules.py), keyed by its readable form, with the versions that
    assert it and its line in each."""
    from validate_args_rules import rules

    from primus_lang.frameworks.rules import describe

    versions = []
    per_rule: dict[str, dict[str, Any]] = {}
    for name, (ref, what) in MEGATRON_VERSIONS.items():
        commit = git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip()
        date = git(git_dir, "log", "-1", "--format=%cs", commit).strip()
        versions.append({"name": name, "ref": ref, "commit": commit, "date": date, "what": what})
        def resolve(module: str, commit: str = commit) -> str | None:
            done = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{module.replace('.', '/')}.py"],
                                  capture_output=True, text=True, timeout=600)
            return done.stdout if done.returncode == 0 else None

        found = rules(git(git_dir, "show", f"{commit}:megatron/training/arguments.py"), resolve)
        print(f"{name}: {ref} ({commit[:10]}, {date}): {len(found)} rules", file=sys.stderr)
        for rule in found:
            key = f"when {describe(rule['when'])}: {describe(rule['require'])}"
            entry = per_rule.setdefault(key, {"when": rule["when"], "require": rule["require"], "message": rule["message"],
                                              "versions": [], "lines": {}})
            entry["versions"].append(name)
            entry["lines"][name] = rule["line"]
    return {"source": "NVIDIA/Megatron-LM megatron/training/arguments.py: validate_args's asserts over arguments and "
                      "constants alone, read by tools/framework_knowledge.py (tools/validate_args_rules.py)",
            "versions": versions, "rules": dict(sorted(per_rule.items()))}


def _megatron_preset(rel: str) -> bool:
    """A Megatron language-model preset or a file one extends: ``modules/megatron/*.yaml``,
    ``models/megatron/*.yaml`` and the shared ``modules/*.yaml`` / ``models/*.yaml`` beside them."""
    parts = rel.split("/")
    if not rel.endswith(".yaml") or parts[0] not in ("modules", "models"):
        return False
    return len(parts) == 2 or (len(parts) == 3 and parts[1] == "megatron")


def primus(git_dir: str) -> dict[str, Any]:
    """Each preset file as written (its ``extends:`` list kept: primusc merges by Primus's rules when it
    reads them), with the Primus versions that ship it unchanged."""
    versions = []
    presets: dict[str, list[dict[str, Any]]] = {}
    for name, ref in PRIMUS_VERSIONS.items():
        commit = git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip()
        date = git(git_dir, "log", "-1", "--format=%cs", commit).strip()
        megatron_pin = git(git_dir, "ls-tree", commit, "third_party/Megatron-LM").split()[2]
        versions.append({"name": name, "ref": ref, "commit": commit, "date": date, "megatron": megatron_pin})
        for path in git(git_dir, "ls-tree", "-r", "--name-only", commit, PRIMUS_CONFIGS).splitlines():
            rel = path[len(PRIMUS_CONFIGS) + 1:]
            if not _megatron_preset(rel):
                continue
            data = yaml.safe_load(git(git_dir, "show", f"{commit}:{path}")) or {}
            forms = presets.setdefault(rel, [])
            same = next((f for f in forms if f["data"] == data), None)
            if same is None:
                forms.append({"data": data, "versions": [name]})
            else:
                same["versions"].append(name)
    versions.sort(key=lambda v: v["date"])
    return {
        "source": "AMD-AGI/Primus primus/configs/{modules,models}/megatron/*.yaml (trainer defaults and model "
                  "presets) and the shared presets they extend, as written, by path under primus/configs, read by "
                  "tools/framework_knowledge.py",
        "versions": versions,
        "presets": dict(sorted(presets.items())),
    }


def bridge(git_dir: str, megatron_git: str, python: str) -> dict[str, Any]:
    """Every pretraining recipe of each ref, evaluated by Bridge's own code (tools/bridge_recipe_probe.py):
    its settings as the paths Hydra overrides take, kept as the differences from the most common value of
    each path over every recipe of every ref (``base``), the paths a launch may override per model class,
    and the recipes this CPU could not evaluate with why."""
    versions, probes = [], {}
    for name, ref in BRIDGE_VERSIONS.items():
        commit = git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip()
        date = git(git_dir, "log", "-1", "--format=%cs", commit).strip()
        pin = git(git_dir, "ls-tree", commit, "3rdparty/Megatron-LM").split()[2]
        versions.append({"name": name, "ref": ref, "commit": commit, "date": date, "megatron": pin})
        with tempfile.TemporaryDirectory() as tree:
            for repo, what, sub in ((git_dir, commit, "src"), (megatron_git, pin, "megatron")):
                archive = subprocess.run(["git", "--git-dir", repo, "archive", what, sub], check=True,
                                         capture_output=True, timeout=3600).stdout
                subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True, timeout=3600)
            done = subprocess.run([python, str(BRIDGE_PROBE), f"{tree}/src", tree], capture_output=True, text=True,
                                  timeout=3600, cwd=tree)
            if done.returncode != 0:
                raise SystemExit(f"evaluating Bridge's recipes at {ref} failed:\n{done.stderr[-3000:]}")
            probes[name] = json.loads(done.stdout)
        print(f"bridge {name}: {len(probes[name]['recipes'])} recipes, {len(probes[name]['errors'])} not evaluated",
              file=sys.stderr)
    kept = {(v, r): _bridge_kept(x["paths"]) for v, p in probes.items() for r, x in p["recipes"].items()}
    classes = {(v, r): x["model_class"] for v, p in probes.items() for r, x in p["recipes"].items()}
    bases = {c: common_settings([s for key, s in kept.items() if classes[key] == c]) for c in sorted(set(classes.values()))}
    recipes: dict[str, list[dict[str, Any]]] = {}
    errors: dict[str, dict[str, str]] = {}
    for name, probe in probes.items():
        for r, v in sorted(probe["recipes"].items()):
            entry = {"where": v["where"], "gpu": v["gpu"], "hf_id": v["hf_id"], "model_class": v["model_class"],
                     "comm_overlap": v["comm_overlap"],
                     **difference(bases[v["model_class"]], kept[(name, r)])}
            forms = recipes.setdefault(r, [])
            same = next((f for f in forms if {k: f[k] for k in entry} == entry), None)
            if same is None:
                forms.append({**entry, "versions": [name]})
            else:
                same["versions"].append(name)
        for r, why in probe["errors"].items():
            errors.setdefault(r, {})[name] = why
    return {
        "source": "NVIDIA-NeMo/Megatron-Bridge: every pretraining recipe megatron.bridge.recipes and "
                  "megatron.bridge.perf_recipes export, evaluated by its own code on CPU "
                  "(tools/bridge_recipe_probe.py), as Hydra override paths (a nested model config's "
                  "model.transformer.X as model.X); a recipe's settings are its differences from the `base` of "
                  "its model class, less the paths it lists `absent`",
        "versions": versions,
        "base": bases,
        "sections": {v: sorted({p for x in p_["recipes"].values() for p in x["paths"] if not p.startswith("model.")})
                     for v, p_ in probes.items()},
        "models": {v: {c: sorted({p for x in p_["recipes"].values() if x["model_class"] == c for p in x["paths"]
                                  if p.startswith("model.")})
                       for c in sorted({x["model_class"] for x in p_["recipes"].values()})}
                   for v, p_ in probes.items()},
        "precisions": {v: {n: {k: x for k, x in c.items() if not k.startswith("_")} for n, c in p_["precisions"].items()}
                       for v, p_ in probes.items()},
        "errors": dict(sorted(errors.items())),
        "perf_default_counts": {v["name"]: perf_default_counts(git_dir, v["commit"]) for v in versions},
        "recipes": dict(sorted(recipes.items())),
    }


# the launchers whose options bridge-launchers reads: name -> the file that builds its parser
BRIDGE_LAUNCHERS = {"train.sh": "scripts/training/setup_experiment.py",
                    "performance": "scripts/performance/argument_parser.py"}


def bridge_launchers(git_dir: str) -> dict[str, Any]:
    versions, launchers = [], {}
    for name, ref in BRIDGE_VERSIONS.items():
        commit = git(git_dir, "rev-parse", f"{ref}^{{commit}}").strip()
        versions.append({"name": name, "ref": ref, "commit": commit})
        for launcher, path in BRIDGE_LAUNCHERS.items():
            launchers.setdefault(launcher, {})[name] = argparse_options(git(git_dir, "show", f"{commit}:{path}"))
    return {
        "source": "NVIDIA-NeMo/Megatron-Bridge: the options of its Slurm launchers, read from their add_argument "
                  f"calls ({', '.join(f'{k}: {v}' for k, v in BRIDGE_LAUNCHERS.items())}); a default read from "
                  "the environment is {\"env\": NAME}, one that is no literal is null",
        "versions": versions,
        "launchers": launchers,
    }


def argparse_options(text: str) -> list[dict[str, Any]]:
    """Each ``add_argument`` call of a parser's source: its option strings, dest, action, default and group
    (the title of the ``add_argument_group`` it is called on)."""
    tree = ast.parse(text)
    groups = {node.targets[0].id: node.value.args[0].value for node in ast.walk(tree)
              if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
              and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
              and node.value.func.attr == "add_argument_group" and node.value.args
              and isinstance(node.value.args[0], ast.Constant)}
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        options = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not options or not options[0].startswith("-"):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        long = next((o for o in options if o.startswith("--")), options[0])
        dest = _literal(keywords["dest"]) if "dest" in keywords else long.lstrip("-").replace("-", "_")
        action = keywords.get("action")
        owner = node.func.value
        nargs = keywords.get("nargs")
        out.append({"options": options, "dest": dest,
                    "action": action.value if isinstance(action, ast.Constant) else None,
                    "nargs": nargs.value if isinstance(nargs, ast.Constant) else None,
                    "default": _default(keywords.get("default")),
                    "group": groups.get(owner.id, "") if isinstance(owner, ast.Name) else ""})
    return sorted(out, key=lambda o: (o["dest"], o["options"]))


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _default(node: ast.expr | None) -> Any:
    """A default as data: a literal, ``{"env": NAME}`` for ``os.environ.get(NAME)`` / ``os.getenv(NAME)``,
    else None (computed where the launcher runs)."""
    if node is None:
        return None
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and ast.unparse(node.func) in ("os.environ.get", "os.getenv"):
        return {"env": node.args[0].value}
    value = _literal(node)
    return value if value is None or isinstance(value, bool | int | float | str | list) else None


def perf_default_counts(git_dir: str, commit: str) -> list[list[Any]]:
    """The performance launcher's GPU count for a model, task, GPU, precision and variant when a launch's
    count has no recipe (scripts/performance/utils/utils.py, _DEFAULT_GPU_COUNT_OVERRIDES; the largest
    count otherwise): read from the literal, not run."""
    text = git(git_dir, "show", f"{commit}:scripts/performance/utils/utils.py")
    for node in ast.parse(text).body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id == "_DEFAULT_GPU_COUNT_OVERRIDES":
            table = ast.literal_eval(node.value)
            return sorted([*key, count] for key, count in table.items())
    return []


def common_settings(settings: list[dict[str, Any]]) -> dict[str, Any]:
    """Each path's most common value over ``settings`` (the recipes of one model class)."""
    counts: dict[str, dict[str, int]] = {}
    for one in settings:
        for path, value in one.items():
            text = json.dumps(value, sort_keys=True)
            counts.setdefault(path, {}).setdefault(text, 0)
            counts[path][text] += 1
    return {path: json.loads(max(c.items(), key=lambda kv: (kv[1], kv[0]))[0]) for path, c in sorted(counts.items())}


def difference(base: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """A recipe as its model class's ``base`` changes: the values that differ, and the paths it lacks
    (a precision given by name has no mixed_precision.*)."""
    return {"settings": {p: x for p, x in settings.items()
                         if json.dumps(x, sort_keys=True) != json.dumps(base.get(p), sort_keys=True)},
            "absent": absent_prefixes(set(base), set(settings))}


def absent_prefixes(base: set[str], have: set[str]) -> list[str]:
    """The paths of ``base`` missing from ``have``, a whole missing subtree as its prefix and ``.*``
    (a recipe without a CommOverlapConfig lacks every comm_overlap path): frameworks.bridge reads both."""
    missing = base - have
    out: set[str] = set()
    for path in missing:
        parts = path.split(".")
        chosen = path
        for k in range(1, len(parts)):
            prefix = ".".join(parts[:k]) + "."
            if not any(p.startswith(prefix) for p in have):
                chosen = prefix + "*"
                break
        out.add(chosen)
    return sorted(out)


def _bridge_kept(paths: dict[str, Any]) -> dict[str, Any]:
    """A recipe's settings, a nested model config's ``model.transformer.X`` as ``model.X`` (the paths a model
    class accepts say where a launch writes each: ``frameworks.bridge.spelled``)."""
    out: dict[str, Any] = {}
    for p, v in paths.items():
        if p.split(".", 1)[0] not in BRIDGE_SECTIONS or p.startswith(
                ("dataset.blend", "dataset.path_to_cache", "tokenizer.tokenizer_model")):
            continue
        flat = "model." + p.removeprefix("model.transformer.") if p.startswith("model.transformer.") else p
        out.setdefault(flat, v)
    return out


def write(path: Path, data: dict[str, Any], table: str) -> None:
    """Top-level keys pretty, each entry of ``table`` on one line: a refresh diffs flag by flag."""
    lines = ["{"]
    keys = list(data)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        if key == table:
            lines.append(f"  {json.dumps(key)}: {{")
            entries = list(data[key].items())
            for j, (name, value) in enumerate(entries):
                sep = "," if j < len(entries) - 1 else ""
                lines.append(f"    {json.dumps(name)}: {json.dumps(value, sort_keys=True)}{sep}")
            lines.append(f"  }}{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(data[key], sort_keys=True)}{comma}")
    lines.append("}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("framework", choices=("megatron", "megatron-rules", "primus", "bridge", "bridge-launchers"))
    parser.add_argument("git", help="the framework's git checkout or bare mirror")
    parser.add_argument("--megatron-git", help="Megatron-LM's checkout or mirror, whose commit Bridge pins (bridge only)")
    parser.add_argument("--python", default=sys.executable,
                        help="a Python with torch installed, to build Megatron's parser (megatron only)")
    args = parser.parse_args()
    git_dir = git_dir_of(args.git)
    if args.framework == "megatron":
        write(OUT / "megatron" / "arguments.json", megatron(git_dir, args.python), "flags")
    elif args.framework == "megatron-rules":
        write(OUT / "megatron" / "rules.json", megatron_rules(git_dir), "rules")
    elif args.framework == "primus":
        write(OUT / "primus" / "presets.json", primus(git_dir), "presets")
    elif args.framework == "bridge-launchers":
        write(OUT / "bridge" / "launchers.json", bridge_launchers(git_dir), "launchers")
    else:
        if not args.megatron_git:
            raise SystemExit("bridge needs --megatron-git (the recipes import the megatron-core Bridge pins)")
        write(OUT / "bridge" / "recipes.json", bridge(git_dir, git_dir_of(args.megatron_git), args.python), "recipes")


if __name__ == "__main__":
    main()
