"""What primusc writes into the user's files and launch scripts (issue 22): ``fmt --write`` keeps a
file's permissions and hard links, refuses a read-only file and one changed under it; a site's time
limit never becomes Slurm's "no limit"; hostile site and ``--var`` values leave every script
parseable by bash and every Kubernetes object loadable with its value intact."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from primus_lang.cli import main
from primus_lang.commands import fmt as fmt_command

UNFORMATTED = "space  a on  h100_x8 {\n  tp : 1|2\n}\n"


def formatted_text(tmp_path: Path) -> str:
    probe = tmp_path / "probe.prx"
    probe.write_text(UNFORMATTED)
    assert main(["fmt", "--write", str(probe)]) == 0
    return probe.read_text()


def test_fmt_write_keeps_the_files_permissions(tmp_path: Path) -> None:
    src = tmp_path / "private.prx"
    src.write_text(UNFORMATTED)
    src.chmod(0o640)
    assert main(["fmt", "--write", str(src)]) == 0
    assert src.read_text() == formatted_text(tmp_path)
    # the replacement was made 0644 before: a private file became readable by everyone
    assert stat.S_IMODE(src.stat().st_mode) == 0o640


def test_fmt_write_refuses_a_read_only_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "frozen.prx"
    src.write_text(UNFORMATTED)
    src.chmod(0o444)
    assert main(["fmt", "--write", str(src)]) == 1
    err = capsys.readouterr().err
    assert "P2015" in err and "read-only" in err and "Traceback" not in err
    assert src.read_text() == UNFORMATTED
    assert stat.S_IMODE(src.stat().st_mode) == 0o444


def test_fmt_write_keeps_a_hard_link(tmp_path: Path) -> None:
    src = tmp_path / "one.prx"
    src.write_text(UNFORMATTED)
    other = tmp_path / "two.prx"
    os.link(src, other)
    assert main(["fmt", "--write", str(src)]) == 0
    # one name held the new text and the other the old before: the rename broke the link
    assert os.path.samefile(src, other)
    assert other.read_text() == src.read_text() == formatted_text(tmp_path)


def test_fmt_write_leaves_a_file_changed_while_formatting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "edited.prx"
    src.write_text(UNFORMATTED)
    saved = "# saved by an editor meanwhile\n" + UNFORMATTED
    real = fmt_command.format_module

    def format_and_edit(module: Any, text: str) -> str:
        out = real(module, text)
        src.write_text(saved)
        return out

    monkeypatch.setattr(fmt_command, "format_module", format_and_edit)
    assert main(["fmt", "--write", str(src)]) == 1
    err = capsys.readouterr().err
    assert "P2015" in err and "changed while" in err
    assert src.read_text() == saved


SPACE = """import models.llama3 (llama3_1_8b)
import clusters.nvidia (h100_x8)

site s {{
{site}
}}

space sp on h100_x8 {{
  site = s
  model = llama3_1_8b
  gbs = 128
  tp : 2
  mbs : 1
}}
"""


def emit(tmp_path: Path, site: str, target: str, *var: str) -> Path:
    src = tmp_path / "site.prx"
    src.write_text(SPACE.format(site=site))
    out = tmp_path / ("out-" + target.replace("+", "-"))
    argv = ["emit", str(src), "--point", "tp=2,mbs=1", "--target", target, "--out", str(out)]
    for v in var:
        argv += ["--var", v]
    assert main(argv) == 0
    return out


@pytest.mark.parametrize("limit", ["0.001 s", "1e-300 s", "59.5 s"])
def test_a_fraction_of_a_minute_is_never_slurms_no_limit(tmp_path: Path, limit: str) -> None:
    out = emit(tmp_path, f'image = "img"\n  time_limit = {limit}', "megatron+slurm")
    text = (out / "launch.sbatch").read_text()
    # `--time=00:00:00` asks Slurm for no time limit at all
    assert "#SBATCH --time=00:01:00" in text and "00:00:00" not in text


HOSTILE = ["x;rm -rf /", "$(touch PWNED)", "`id`", "it's", 'q"q', "ü-é", "${HOME}", "a#b", "-x", "a\\b"]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def check_scripts(out: Path) -> None:
    for path in out.rglob("*"):
        if path.suffix in (".sh", ".sbatch"):
            subprocess.run(["bash", "-n", str(path)], check=True, timeout=600)
            if shutil.which("shellcheck"):
                subprocess.run(["shellcheck", "-S", "warning", str(path)], check=True, capture_output=True, timeout=600)


@pytest.mark.parametrize("target", ["megatron+slurm", "primus+slurm", "bridge+slurm", "megatron+k8s"])
@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_site_values_stay_quoted(tmp_path: Path, target: str, value: str) -> None:
    v = _escape(value)
    # an image no runtime can start (a space, a leading `-`) is refused where it is written (P3036): the
    # image carries the value's shell metacharacters without them
    image = value.replace(" ", "").lstrip("-") or "x"
    site = (
        f'image = "{_escape(image)}"\n  runtime = docker\n  env {{ FOO = "{v}" }}\n'
        f'  mounts {{ d {{ host = "/h{v}"; path = "/c{v}" }} }}'
    )
    if target.endswith("k8s"):
        site = site.replace("runtime = docker", "")
    # Bridge's Hydra overrides cannot carry `${...}` or a backslash as text: P7001, tested elsewhere
    var = () if target.startswith("bridge") else (f"checkpoint_dir={value}",)
    out = emit(tmp_path, site, target, *var)
    check_scripts(out)
    for doc in out.glob("*.yaml"):
        list(yaml.safe_load_all(doc.read_text()))
    if target.endswith("k8s"):
        job = [d for d in yaml.safe_load_all((out / "pytorchjob.yaml").read_text()) if d]
        images = [c["image"] for d in job for spec in _pod_specs(d) for c in spec.get("containers", [])]
        assert images and all(written == image for written in images)
    assert not (tmp_path / "PWNED").exists() and not Path("PWNED").exists()


def _pod_specs(doc: object) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    if isinstance(doc, dict):
        if "containers" in doc:
            found.append(doc)
        for value in doc.values():
            found += _pod_specs(value)
    elif isinstance(doc, list):
        for value in doc:
            found += _pod_specs(value)
    return found


def test_an_unwritable_out_is_named_as_given(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = Path(__file__).parents[1] / "hfimport" / "fixtures" / "mixtral_8x7b.json"
    assert main(["import-hf", str(fixture), "--out", "/proc/self/card.prx"]) == 1
    err = capsys.readouterr().err
    # it named the hidden temporary file `.card.prx.<hex>.tmp` before
    assert "P2015" in err and "`/proc/self/card.prx`" in err and ".tmp" not in err
