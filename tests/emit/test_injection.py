"""Hostile strings reach the scripts quoted: nothing in them runs, and they arrive byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primus_lang.diagnostics import CompileError
from primus_lang.emit import TARGETS, EmitContext, emit
from primus_lang.ir.run import blend_problem
from tests.emit.harness import SHELLCHECK, write
from tests.emit.ir_cases import CASES

PROBE = """#!{python}
import json, os, sys
with open(os.environ["PROBE_OUT"], "w") as f:
    json.dump({{"argv": sys.argv[1:], "cwd": os.getcwd()}}, f)
"""


def hostile(canary: Path, target: str = "") -> str:
    """Quotes, command substitution, backticks, a glob, a separator and non-ASCII, each a way out.
    For Bridge one kind of quote and no backslash: its Hydra overrides refuse the rest (P7001)."""
    if target.startswith("bridge+"):
        return f"""it's $(touch {canary}) `touch {canary}` ; touch {canary} * ünïcødé ✓ $HOME"""
    return f"""it's "q" $(touch {canary}) `touch {canary}` ; touch {canary} * ünïcødé ✓ \\ $HOME"""


def emitted(tmp_path: Path, target: str, value: str, **extra: str) -> tuple[Path, dict[str, str]]:
    # Bridge builds only the models it has recipes for (emit/bridge.py), Mixtral not among them
    space, cand = CASES["llama3_8b_h100_fp8cs" if target.startswith("bridge+") else "mixtral_h100"]
    space = attrs.evolve(space, name=f"mix\n$(touch {tmp_path / 'canary'})`x`'\"")
    # Bridge splits a data path on whitespace and refuses one holding a space (P7001): its hostile
    # path separates the words with $IFS, which a shell that expanded it would split again
    data_path = value.replace(" ", "$IFS") if target.startswith("bridge+") else value
    ctx = EmitContext(
        source_name=f"evil\n`touch {tmp_path / 'canary'}`.prx",
        variables={
            "data_path": data_path, "tokenizer_model": value, "checkpoint_dir": value,
            "container_image": "img:1", "megatron_dir": str(tmp_path / "work ünï $(x)"), **extra,
        },
    )
    files = emit(space, cand, target, ctx)
    return write(files, tmp_path / "out"), files


@pytest.mark.parametrize("target", TARGETS)
def test_dry_run_executes_nothing(target: str, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    folder, files = emitted(tmp_path, target, hostile(canary, target))
    script = {"slurm": "launch.sbatch", "local": "launch.sh", "k8s": "node.sh"}[target.split("+")[1]]
    result = subprocess.run(["bash", str(folder / script), "--dry-run"], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin"}, timeout=60)
    assert result.returncode == 0, result.stderr
    assert not canary.exists()
    assert "rank 0:" in result.stdout
    if SHELLCHECK:
        for path in files:
            if path.endswith((".sh", ".sbatch")):
                check = subprocess.run([SHELLCHECK, str(folder / path)], capture_output=True, text=True, timeout=600)
                assert check.returncode == 0, check.stdout


def test_values_arrive_byte_for_byte(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    value = hostile(canary)
    folder, _ = emitted(tmp_path, "megatron+local", value)
    workdir = tmp_path / "work ünï $(x)"
    workdir.mkdir()
    probe = tmp_path / "probe"
    probe.write_text(PROBE.format(python=sys.executable))
    probe.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "PRIMUSC_TORCHRUN": str(probe), "PROBE_OUT": str(tmp_path / "argv.json"),
           "NODE_RANK": "0", "MASTER_ADDR": "127.0.0.1"}
    result = subprocess.run(["bash", str(folder / "launch.sh")], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert not canary.exists()
    record = json.loads((tmp_path / "argv.json").read_text())
    argv = record["argv"]
    assert record["cwd"] == str(workdir)
    for flag in ("--data-path", "--tokenizer-model", "--save", "--load"):
        assert argv[argv.index(flag) + 1] == value


def test_primus_yaml_keeps_the_value(tmp_path: Path) -> None:
    value = hostile(tmp_path / "canary")
    _, files = emitted(tmp_path, "primus+k8s", value)
    overrides = yaml.safe_load(files["experiment.yaml"])["modules"]["pre_trainer"]["overrides"]
    experiment = yaml.safe_load(files["experiment.yaml"])
    assert overrides["train_data_path"] == value and experiment["workspace"] == value
    assert overrides["save"].startswith(value + "/primusc/primusc/")  # where Primus saves (checkpoint_path_patches)
    docs = list(yaml.safe_load_all(files["pytorchjob.yaml"]))
    assert docs[0]["data"]["experiment.yaml"] == files["experiment.yaml"]
    assert docs[0]["data"]["node.sh"] == files["node.sh"]


def test_comments_stay_comments(tmp_path: Path) -> None:
    _, files = emitted(tmp_path, "megatron+slurm", "data")
    for text in files.values():
        for line in text.splitlines():
            assert "touch" not in line or line.lstrip().startswith(("#", '"')), line
    assert "#SBATCH --job-name=mix-touch-" in files["launch.sbatch"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("data_path", "a\nb"),
        ("partition", "gpu\n#SBATCH --uid=0"),
        ("partition", "gpu --uid=0"),
        ("account", "$(id)"),
        ("time_limit", "forever"),
        ("job_name", "Bad_Name"),
        ("megatron_version", "core_v0.99"),
        ("container", "lxc"),
        ("master_port", "0"),
        ("train_iters", "1e3"),
        ("namespace", "a;b"),
    ],
)
def test_unsafe_variables_are_refused(name: str, value: str) -> None:
    space, cand = CASES["mixtral_h100"]
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+slurm", EmitContext(variables={name: value}))
    assert [d.code.id for d in err.value.diagnostics] == ["P7004"]


def test_prx_strings_and_file_names_cannot_escape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Through the real front end: a hostile string in the .prx and a hostile file name."""
    pytest.importorskip("primus_lang.lower")
    from primus_lang.cli import main

    canary = tmp_path / "canary"
    source = tmp_path / f"evil $(touch {canary.name}) `x` 'q' ünï.prx"
    source.write_text(
        "import models.llama3 (llama3_1_8b)\n"
        "import clusters.nvidia (h100_x8)\n"
        f'model m = llama3_1_8b {{ source = "$(touch {canary}) `touch {canary}` \' ; ünï" }}\n'
        "space s on h100_x8 { model = m; gbs = 512; tp : 1 | 2 }\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    argv = ["emit", str(source), "--point", "tp=2", "--target", "megatron+slurm", "--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    for script in ("launch.sbatch", "node.sh"):
        result = subprocess.run(["bash", str(out / script), "--dry-run"], capture_output=True, text=True,
                                env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path, timeout=60)
        assert result.returncode == 0, result.stderr
    assert not canary.exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"]["file"] == source.name


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40))
def test_any_value_arrives_intact_or_is_refused(value: str, tmp_path: Path) -> None:
    space, cand = CASES["llama8b_zbv"]
    ctx = EmitContext(variables={"data_path": value, "tokenizer_model": "t", "megatron_dir": str(tmp_path)})
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in value):
        with pytest.raises(CompileError) as err:
            emit(space, cand.replace(schedule="1f1b", vpp=1), "megatron+local", ctx)
        assert [d.code.id for d in err.value.diagnostics] == ["P7004"]
        return
    files = emit(space, cand.replace(schedule="1f1b", vpp=1), "megatron+local", ctx)
    folder = write(files, tmp_path / "h")
    probe = tmp_path / "probe"
    probe.write_text(PROBE.format(python=sys.executable))
    probe.chmod(0o755)
    record = tmp_path / "argv.json"
    env = {"PATH": "/usr/bin:/bin", "PRIMUSC_TORCHRUN": str(probe), "PROBE_OUT": str(record)}
    result = subprocess.run(["bash", str(folder / "launch.sh")], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    argv = json.loads(record.read_text())["argv"]
    # a weighted blend arrives as Megatron's separate words, anything else as one argument
    words = value.split() if len(value.split()) > 1 and blend_problem(value) is None else [value]
    start = argv.index("--data-path") + 1
    assert argv[start:start + len(words)] == words
