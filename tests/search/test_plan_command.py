"""``primusc plan`` and ``primusc tune-compare`` on a small real space (front end, memory, projection, emit)."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from primus_lang.cli import main
from primus_lang.ir import Candidate
from primus_lang.lower import load_space
from primus_lang.resources import data_dir
from primus_lang.search.plan import prepare
from primus_lang.search.stages import evaluator_of

TINY = str(Path(__file__).parent / "data" / "tiny.prx")


def plan_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code = main(["plan", TINY, "--json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def test_plan_ranks_explains_and_emits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plan"
    code, data = plan_json(capsys, "--out", str(out), "--budget", "30")
    assert code == 0
    result = data["result"]
    assert result["evaluations"] == 30 and result["strategy"] == "auto"
    ranked = data["ranked"]
    scores = [t["score"] for t in ranked]
    assert 1 <= len(ranked) <= 10 and scores == sorted(scores, reverse=True)
    assert ranked[0]["candidate"] == result["best"]["candidate"]
    assert all(t["memory_peak"] <= t["memory_limit"] for t in ranked)
    # every ranked candidate carries its band, around its projection
    assert len(data["bands"]) == len(ranked)
    # MI355X (CDNA 4) carries the AMD pool fitted on MI325X (CDNA 3) rows: the one way its candidates lie
    # beyond them
    assert all(b["tokens_low"] <= t["evaluation"]["tokens_per_gpu"] <= b["tokens_high"]
               and [w.split(",")[0] for w in b["beyond"]] == ["a GPU of the cdna4 architecture"]
               for b, t in zip(data["bands"], ranked, strict=True))
    assert any(line.startswith("Over the baseline") or "baseline" in line for line in data["explanation"])
    assert data["target"] == "megatron+local"
    files = {Path(f).name for f in data["files"]}
    assert "manifest.json" in files and "report.html" in files
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["space"] == "tiny"
    assert (out / "trace.jsonl").is_file()
    import subprocess

    for script in [p for p in out.iterdir() if p.suffix in (".sh", ".sbatch")]:
        subprocess.run(["bash", "-n", str(script)], check=True, timeout=600)


def test_plan_refuses_a_non_empty_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "old.txt").write_text("x")
    assert main(["--error-format", "short", "plan", TINY, "--out", str(tmp_path)]) == 1
    assert "P8003" in capsys.readouterr().err
    assert main(["plan", TINY, "--out", str(tmp_path), "--force", "--budget", "5", "--json"]) == 0


def test_plan_never_replaces_a_users_file_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An existing --trace or --report file, or an --out that is a file, is refused before the search;
    with --force a fresh search starts its own trace instead of appending to the old one."""
    mine = tmp_path / "mine.jsonl"
    mine.write_text("precious\n")
    report = tmp_path / "mine.html"
    report.write_text("<p>mine</p>")
    afile = tmp_path / "afile"
    afile.write_text("x")
    for args in (("--trace", str(mine)), ("--report", str(report))):
        assert main(["--error-format", "short", "plan", TINY, "--out", str(tmp_path / "o"), *args]) == 1
        assert "P8003" in capsys.readouterr().err
    assert main(["--error-format", "short", "plan", TINY, "--out", str(afile)]) == 1
    assert "P8003" in capsys.readouterr().err and afile.read_text() == "x"
    assert mine.read_text() == "precious\n" and report.read_text() == "<p>mine</p>"
    assert not (tmp_path / "o").exists()
    assert main(["plan", TINY, "--out", str(tmp_path / "o"), "--trace", str(mine), "--force", "--budget", "5",
                 "--json", "--no-emit"]) == 0
    capsys.readouterr()
    lines = mine.read_text().splitlines()
    assert "precious" not in lines and sum('"event":"start"' in line for line in lines) == 1


def test_plan_refuses_a_bad_target_or_variable_before_searching(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    for args, code in ((("--target", "megatron+mars"), "P7002"), (("--var", "nonsense=1"), "P7003")):
        assert main(["--error-format", "short", "plan", TINY, "--out", str(tmp_path / "o"), *args]) == 1
        assert code in capsys.readouterr().err
        assert not (tmp_path / "o").exists()  # nothing searched, no trace left behind


def test_report_keeps_an_existing_file_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", TINY, "--out", str(tmp_path / "p"), "--budget", "5", "--json", "--no-emit"]) == 0
    capsys.readouterr()
    page = tmp_path / "page.html"
    page.write_text("mine")
    trace = str(tmp_path / "p" / "trace.jsonl")
    assert main(["--error-format", "short", "report", trace, "--out", str(page)]) == 1
    assert "P8003" in capsys.readouterr().err and page.read_text() == "mine"
    assert main(["report", trace, "--out", str(page), "--force"]) == 0
    assert page.read_text().startswith("<!DOCTYPE html>")


def test_plan_table_and_bad_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", TINY, "--out", str(tmp_path / "a"), "--budget", "20", "--strategy", "random",
                 "--no-emit"]) == 0
    text = capsys.readouterr().out
    assert "tokens/s/GPU" in text and "Over the" in text
    assert main(["--error-format", "short", "plan", TINY, "--budget", "lots"]) == 1
    assert "P8009" in capsys.readouterr().err
    assert main(["plan", TINY, "--patience", "0", "--error-format", "short"]) == 1
    assert "P8009" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:  # argparse's own errors are user errors too: exit 1, a code
        main(["plan", TINY, "--seed", "x"])
    assert exit_.value.code == 1 and "P2017" in capsys.readouterr().err


def test_plan_resumes_a_cut_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, whole = plan_json(capsys, "--out", str(tmp_path / "w"), "--budget", "30", "--seed", "3", "--no-emit")
    lines = (tmp_path / "w" / "trace.jsonl").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"evaluation_number":12,' in line)
    trace = tmp_path / "cut.jsonl"
    trace.write_text("\n".join(lines[: cut + 1]) + "\n")
    code, resumed = plan_json(capsys, "--out", str(tmp_path / "r"), "--budget", "30", "--seed", "3",
                              "--no-emit", "--resume", str(trace))
    assert code == 0
    assert resumed["result"]["best"]["candidate"] == whole["result"]["best"]["candidate"]
    assert resumed["result"]["evaluations"] == 30
    assert [t["candidate"] for t in resumed["result"]["trials"]] == [t["candidate"] for t in whole["result"]["trials"]]


def test_tune_compare_reports_regret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    md = tmp_path / "cmp.md"
    assert main(["tune-compare", TINY, "--budgets", "10,20", "--seeds", "2", "--strategies", "auto,random,exhaustive",
                 "--out", str(md)]) == 0
    text = md.read_text()
    assert "| auto |" in text and "| 10 evals | 20 evals |" in text
    assert "exhaustive branch and bound proved it" in text


def test_tune_compare_refuses_an_llm_row_it_cannot_run(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # without a model the investigator hands over to evolution: its row would be evolution's, named `llm`
    monkeypatch.delenv("PRIMUSC_LLM_MODEL", raising=False)
    assert main(["tune-compare", TINY, "--budgets", "10", "--seeds", "1", "--strategies", "llm"]) == 1
    err = capsys.readouterr().err
    assert "P8016" in err and "no LLM configured" in err and "using the evolutionary search" not in err


@pytest.mark.skipif(importlib.util.find_spec("litellm") is None, reason="litellm is in the `agent` extra")
def test_plan_json_says_its_notes_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--json` output piped into jq lost the note that the LLM strategy handed over to evolution."""
    assert main(["plan", TINY, "--strategy", "llm", "--llm-model", "foo/bar", "--budget", "5", "--json",
                 "--out", str(tmp_path / "out")]) == 0
    said = capsys.readouterr()
    assert json.loads(said.out)["result"]["strategy"] == "llm"
    assert "note: litellm does not know the model `foo/bar`" in said.err


def test_bound_never_exceeds_a_projection() -> None:
    space = load_space(TINY)
    prep = prepare(space)
    assert prep.upper is not None
    ev = evaluator_of(space)
    for i in prep.land.fitting:
        score = prep.land.score(ev(prep.land.points[i]), int(prep.land.peaks[i]))
        assert score <= prep.upper[i] * (1 + 1e-9)
    assert np.isfinite(prep.upper).all()


@pytest.mark.slow
def test_ctrl_c_on_plan_leaves_a_trace_that_resume_finishes(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    from tests.signals import hear_sigint

    root = Path(__file__).resolve().parents[2]
    space = str(root / "examples" / "mixtral_8x22b_mi355x.prx")
    trace = tmp_path / "trace.jsonl"
    args = [sys.executable, "-m", "primus_lang.cli", "plan", space, "--strategy", "random", "--budget", "600",
            "--seed", "1", "--no-emit", "--json", "--trace", str(trace)]
    proc = subprocess.Popen([*args, "--out", str(tmp_path / "a")], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=hear_sigint)
    # a guard against a hang only: how long the plan takes to reach 20 evaluations is the machine's business
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if trace.exists() and trace.read_text().count('"event":"evaluation"') >= 20:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130
    assert b"--resume" in err
    done = trace.read_text().count('"event":"evaluation"')
    assert 20 <= done < 600
    finished = subprocess.run([*args, "--out", str(tmp_path / "b"), "--resume", str(trace)], cwd=root,
                              capture_output=True, check=True, timeout=600)
    plan = json.loads(finished.stdout)
    assert plan["result"]["evaluations"] == 600
    assert trace.read_text().count('"event":"evaluation"') == 600


def test_plan_says_when_nothing_fits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space = str(Path(__file__).parent / "data" / "nothing_fits.prx")
    assert main(["--error-format", "short", "plan", space, "--out", str(tmp_path / "x")]) == 1
    assert "P8005" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("litellm") is None, reason="litellm is in the `agent` extra")
def test_plan_llm_replay_reruns_a_recorded_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    from primus_lang.search import Limits, LlmConfig, run_search

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    cassette = tmp_path / "run.cassette.json"
    reply = json.dumps({"proposals": [
        {"changes": {"precision": "fp8", "mbs": 2}, "hypothesis": "FP8 GEMMs and a bigger micro-batch"},
        {"changes": {"tp": 2, "precision": "fp8"}, "hypothesis": "TP 2 with FP8"},
        {"changes": {"gbs": 128}, "hypothesis": "a bigger batch"},
    ]})
    space = load_space(TINY)
    recorded = run_search(space, "llm", Limits(evaluations=15), seed=0,
                          llm=LlmConfig(model="gpt-4o-mini", cassette=cassette, mock_responses=(reply,)))
    assert any(t.source == "llm" for t in recorded.trials)
    code, data = plan_json(capsys, "--out", str(tmp_path / "p"), "--strategy", "llm", "--budget", "15",
                           "--no-emit", "--llm-model", "gpt-4o-mini", "--llm-replay", str(cassette))
    assert code == 0
    replayed = data["result"]["trials"]
    assert [(t["source"], t["verdict"], t["label"]) for t in replayed] == [
        (t.source, t.verdict, t.label) for t in recorded.trials
    ]
    assert any("changes what is trained" in r for t in replayed for r in t["reasons"])



def test_plan_llm_replay_of_a_missing_cassette_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Asked to rerun a recorded search from a cassette that is not there, plan ran the evolutionary search
    with a note and exited 0: a different search than the one asked for."""
    code = main(["plan", TINY, "--out", str(tmp_path / "p"), "--strategy", "llm", "--budget", "5",
                 "--llm-replay", str(tmp_path / "missing.json")])
    assert code == 1 and "P8008" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


OP_WINS = """\
import models.llama3 (llama3_1_8b)
import clusters.nvidia (h100_x8)

space op_wins on h100_x8 {
  model = llama3_1_8b
  seq_len = 8192
  gbs = 256
  mbs : 2
  recompute : op | full(layers: 32)
  sharding : fsdp
  maximize tokens_per_gpu
  budget 10 evals
  strategy exhaustive
  target megatron + slurm
}
"""


def test_plan_launches_the_best_recipe_the_target_can_express(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # torchtitan's op-level checkpointing wins the search but Megatron cannot express it: the launch
    # files are for the runner-up, and the explanation says why
    space = tmp_path / "op.prx"
    space.write_text(OP_WINS)
    assert main(["plan", str(space), "--json", "--out", str(tmp_path / "out")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ranked"][0]["candidate"]["recompute"]["kind"] == "op"
    assert any("cannot express the best recipe" in line and "recompute=full(32,block)" in line
               for line in data["explanation"])
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["candidate"]["recompute"]["kind"] == "full"


def test_a_proven_optimum_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space = str(data_dir("examples") / "llama3_1_8b_mi325x.prx")
    assert main(["plan", space, "--strategy", "exhaustive", "--budget", "100000", "--no-emit",
                 "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "stopped: optimum proven" in out and "optimum proven; optimum proven" not in out
    assert main(["plan", space, "--strategy", "exhaustive", "--budget", "5", "--no-emit",
                 "--out", str(tmp_path / "out"), "--force"]) == 0
    assert "stopped: evaluation budget spent; optimum not proven" in " ".join(capsys.readouterr().out.split())


FP8_ON_BRIDGE = """import models.llama3 (llama3_8b)
import clusters.nvidia (h100_x8)

space fp8_bridge on h100_x8 {
  model = llama3_8b
  seq_len = 4096
  gbs = 128
  tp : 1 | 2
  precision : bf16 | fp8
  sharding = dist_opt
  fits memory headroom 5%
  maximize tokens_per_gpu
  strategy exhaustive
  target bridge + slurm
  assume tie_break = speed
}
"""


def test_an_fp8_winner_bridge_names_by_its_precision_is_launched_as_bridge_runs_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Bridge trial: Bridge's registered FP8 precisions gather FP8 weights, which no override turns off, so
    an FP8 winner at the default `fp8_param_gather = false` fell back to a BF16 launch 22% slower. The winner
    with the knob as Bridge runs it is launched (the space leaves the knob at its default); a space that
    writes the knob keeps its choice."""
    from primus_lang.emit.emitter import nearest_expressible

    space_file = tmp_path / "fp8.prx"
    space_file.write_text(FP8_ON_BRIDGE)
    assert main(["plan", str(space_file), "--json", "--out", str(tmp_path / "out")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ranked"][0]["candidate"]["precision"] == "fp8"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["candidate"]["precision"] == "fp8" and manifest["candidate"]["fp8_param_gather"] is True
    assert any("cannot express the best recipe" in line and "fp8_param_gather=true" in line
               for line in data["explanation"])
    space = load_space(space_file)
    fp8 = Candidate(precision="fp8", sharding="dist_opt", gbs=128, seq_len=4096)
    assert nearest_expressible(space, fp8, "bridge+slurm") == fp8.replace(fp8_param_gather=True)
    space_file.write_text(FP8_ON_BRIDGE.replace("  sharding = dist_opt\n", "  sharding = dist_opt\n  fp8_param_gather = false\n"))
    assert nearest_expressible(load_space(space_file), fp8, "bridge+slurm") is None


@pytest.mark.parametrize(("text", "read"), [("10 evals", (10, None)), ("10evals,1min", (10, 60.0)),
                                            ("1 evaluation", (1, None)), ("100, 30 min", (100, 1800.0))])
def test_a_budget_reads_as_the_space_writes_it(text: str, read: tuple[int | None, float | None]) -> None:
    """A new user's trial: `--budget "10 evals"` (the space's own `budget 10 evals`) was refused."""
    from primus_lang.commands.plan import parse_budget

    assert parse_budget(text) == read
