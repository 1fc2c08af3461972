"""What `primusc learn` makes of an imperfect log, and each of its diagnostics (P6020-P6025, P8041)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import attrs
import pytest

from primus_lang.bench.logs import WARMUP, parse_log, past_warmup, steady
from primus_lang.cli import main
from primus_lang.ir import Provenance
from tests.campaign.loop import SPACE

ARGS = """------------------------ arguments ------------------------
  tensor_model_parallel_size ...................... {tp}
  micro_batch_size ................................ {mbs}
  global_batch_size ............................... 64
  seq_length ...................................... 4096
"""


def line(i: int, ms: float, skipped: int = 0, nan: int = 0, loss: str = "1.05E+01") -> str:
    return (f" [2026-12-01 10:00:00] iteration {i:>8}/      30 | elapsed time per iteration (ms): {ms:.1f} | "
            f"global batch size:    64 | lm loss: {loss} | number of skipped iterations: {skipped:>3} | "
            f"number of nan iterations: {nan:>3} |\n")


def log(times: list[tuple[int, float]], head: str = ARGS.format(tp=1, mbs=8)) -> str:
    return head + "".join(line(i, ms) for i, ms in times)


def test_warm_up_iterations_are_left_out() -> None:
    text = log([(1, 9000.0), (2, 4000.0)] + [(i, 2000.0 + i) for i in range(3, 31)])
    st = steady(parse_log(text), 5)
    assert st.kept == 25 and st.seconds == pytest.approx(2.018) and not st.notes


def test_a_restart_starts_a_new_warm_up() -> None:
    # requeued after iteration 12: resumed from a checkpoint at 8, slow again for its first iterations
    first = [(1, 9000.0)] + [(i, 2000.0) for i in range(2, 13)]
    second = [(8, 9000.0), (9, 8000.0)] + [(i, 2100.0) for i in range(10, 31)]
    st = steady(parse_log(log(first + second)), 2)
    assert st.kept == 10 + 21 and st.seconds == pytest.approx(2.1)
    assert any("iteration 8 after 12: the run restarted" in n for n in st.notes)


def test_warm_up_counts_iterations_whatever_the_logging_interval() -> None:
    # every 10th iteration logged, each line the average since the last: the first holds warm-up iterations 1-5
    text = log([(10, 5000.0)] + [(i, 2000.0 + i) for i in range(20, 101, 10)])
    kept, _ = past_warmup(parse_log(text), WARMUP)
    assert [it.index for it in kept] == list(range(20, 101, 10))
    # at an interval of 1, the first WARMUP lines, as before; a restart's resume point starts its own
    assert [it.index for it in past_warmup(parse_log(log([(i, 2000.0) for i in range(1, 9)])), 5)[0]] == [6, 7, 8]
    restarted = log([(i, 2000.0) for i in range(10, 51, 10)] + [(i, 2000.0) for i in range(30, 61, 10)])
    assert [it.index for it in past_warmup(parse_log(restarted), 5)[0]] == [20, 30, 40, 50, 40, 50, 60]


def test_skipped_and_nan_iterations_are_left_out() -> None:
    text = ARGS.format(tp=1, mbs=8) + "".join(line(i, 2000.0) for i in range(1, 21))
    text += line(21, 500.0, skipped=1) + line(22, 500.0, nan=1) + line(23, 500.0, loss="nan")
    st = steady(parse_log(text), 5)
    assert st.kept == 15 and st.seconds == pytest.approx(2.0)
    assert any("3 logged iteration(s) with skipped or NaN" in n for n in st.notes)


def test_a_cut_off_last_line_is_left_unread() -> None:
    text = log([(i, 2000.0) for i in range(1, 21)]) + " [2026-12-01] iteration 21/ 30 | elapsed time per iteration (ms): 2"
    parsed = parse_log(text)
    assert parsed.cut_line == text.count("\n") + 1 and len(parsed.iterations) == 20
    assert any("cut off" in n for n in steady(parsed, 5).notes)


# ---- through the command: a real campaign with hand-written logs --------------------------------------------

@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("campaign") / "plan"
    assert main(["plan", str(SPACE), "--out", str(out), "--target", "megatron+local", "--shortlist", "3"]) == 0
    return out / "campaign"


def fill(campaign: Path, tmp_path: Path, broken: dict[int, str | None]) -> Path:
    """A copy of ``campaign`` with a log per job (``broken``: a job's own text, or None for none). The
    copy sits beside the original, at its depth: the manifest finds the space by a path relative to
    the campaign folder, which a copy elsewhere would not keep (in a checkout near the root the
    surplus `..` of a deeper copy would still land on it by luck)."""
    copy = campaign.parent / f"{campaign.name}-{tmp_path.name}"
    shutil.copytree(campaign, copy)
    for job in json.loads((copy / "manifest.json").read_text())["jobs"]:
        cand = job["candidate"]
        text = log([(i, 2000.0) for i in range(1, 31)], ARGS.format(tp=cand["tp"], mbs=cand["mbs"]))
        text = broken.get(job["index"], text)
        if text is not None:
            (copy / job["log"]).write_text(text)
    return copy


def code_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["learn", *argv]) == 1
    return capsys.readouterr().err


def test_a_missing_log_names_its_file_and_partial_learns_without_it(campaign: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    copy = fill(campaign, tmp_path, {1: None})
    err = code_of(capsys, str(copy))
    assert "P6020" in err and "job-1/train.log" in err
    assert main(["learn", str(copy), "--partial", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert [r["index"] for r in result["runs"]] == [0, 2] and "P6020" in captured.err
    assert [r["measured"] for r in result["ranked"]].count(False) == 1  # job 1 ranked by the learned projection


def test_a_log_that_died_before_training_or_too_early_is_p6021(campaign: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    copy = fill(campaign, tmp_path, {0: ARGS.format(tp=1, mbs=8) + "torch.OutOfMemoryError: CUDA out of memory\n"})
    err = code_of(capsys, str(copy))
    assert "P6021" in err and "holds no iteration lines" in err and "OutOfMemoryError" in err
    (copy / "job-0" / "train.log").write_text(log([(i, 2000.0) for i in range(1, 8)]))
    err = code_of(capsys, str(copy))
    assert "P6021" in err and "2 steady iteration(s) of 7" in err


def test_a_log_of_another_recipe_is_p6022(campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = fill(campaign, tmp_path, {0: log([(i, 2000.0) for i in range(1, 31)], ARGS.format(tp=4, mbs=8))})
    err = code_of(capsys, str(copy))
    assert "P6022" in err and "tp 4 (the manifest: 1)" in err


def test_a_log_of_another_recompute_or_precision_is_p6022(campaign: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A shortlist's candidates often differ only in recomputation, precision or an overlap: two logs put in
    each other's folders are another recipe's, though their layouts agree (a new user's trial)."""
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    cand = jobs[0]["candidate"]
    recompute = "full" if cand["recompute"]["kind"] != "full" else "None"
    head = ARGS.format(tp=cand["tp"], mbs=cand["mbs"]) + f"  recompute_granularity ........................... {recompute}\n" \
        "  recompute_num_layers ............................ 1\n" \
        f"  fp8 ............................................. {'None' if cand['precision'] != 'bf16' else 'hybrid'}\n"
    copy = fill(campaign, tmp_path, {0: log([(i, 2000.0) for i in range(1, 31)], head)})
    err = " ".join(code_of(capsys, str(copy)).split())
    assert "P6022" in err and "recompute " in err and "precision " in err


def test_an_arguments_block_says_what_is_off() -> None:
    """Printed as unset, recomputation and FP8 are off; the overlaps, the attention backend and the MoE
    dispatcher are read as they are printed; a block without them keeps the base's."""
    from primus_lang.bench import candidate_from_log
    from primus_lang.ir import Candidate, Recompute

    base = Candidate(tp=2, precision="fp8", recompute=Recompute("full", 2), tp_comm_overlap=True)
    head = ARGS.format(tp=2, mbs=1) + "  recompute_granularity ........................... None\n" \
        "  fp8 ............................................. None\n" \
        "  tp_comm_overlap ................................. False\n" \
        "  attention_backend ............................... AttnBackend.flash\n"
    ran = candidate_from_log(parse_log(log([(1, 2000.0)], head)), base, moe=False)
    assert (ran.recompute, ran.precision, ran.tp_comm_overlap, ran.attention) == (Recompute(), "bf16", False, "fa2")
    kept = candidate_from_log(parse_log(log([(1, 2000.0)], ARGS.format(tp=2, mbs=1))), base, moe=False)
    assert (kept.recompute, kept.precision, kept.tp_comm_overlap) == (Recompute("full", 2), "fp8", True)


def test_a_space_of_another_model_is_p6023(campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.prx"
    other.write_text(SPACE.read_text().replace("num_layers = 16", "num_layers = 32").replace("mid_llama", "big_llama"))
    assert "P6023" in code_of(capsys, str(fill(campaign, tmp_path, {})), "--space", str(other))


def test_nothing_to_learn_is_p6024(campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "P6024" in code_of(capsys, str(fill(campaign, tmp_path, {0: None, 1: None, 2: None})), "--partial")


def test_a_bad_profile_name_is_p6025(campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = fill(campaign, tmp_path, {})
    assert "P6025" in code_of(capsys, str(copy), "--name", "my-site")
    assert "P6025" in code_of(capsys, str(copy), "--name", "h200_calibrated")


def test_a_folder_without_a_manifest_is_p8041(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "P8041" in code_of(capsys, str(tmp_path))
    (tmp_path / "manifest.json").write_text('{"format": 1}')
    assert "P8041" in code_of(capsys, str(tmp_path))


def test_the_site_profile_is_deterministic_and_an_edited_one_is_not_overwritten(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = fill(campaign, tmp_path, {})
    assert main(["learn", str(copy)]) == 0
    site = copy / "site.prx"
    first = site.read_text()
    assert all(f"{f.name} =" in first for f in attrs.fields(Provenance))  # what the band saw, too
    # learnt again as more jobs finish: its own profile, unchanged since, is replaced, and it says so
    capsys.readouterr()
    assert main(["learn", str(copy)]) == 0
    assert "an earlier `primusc learn` wrote, unchanged since" in capsys.readouterr().out
    assert site.read_text() == first
    # a profile the user edited (or any other file) is theirs: kept unless --force
    site.write_text(first.replace("# Site profile", "# my notes\n# Site profile", 1))
    assert "P8003" in code_of(capsys, str(copy))
    assert "my notes" in site.read_text()
    assert main(["learn", str(copy), "--force"]) == 0
    assert site.read_text() == first
    # another campaign's learn does not replace this one's profile without --force (a re-trial)
    other = copy.parent / f"{copy.name}-other"
    shutil.copytree(copy, other)
    (other / "manifest.json").write_text((other / "manifest.json").read_text() + "\n")
    assert "P8003" in code_of(capsys, str(other), "--out", str(site))
    assert site.read_text() == first


def test_a_moved_campaign_asks_for_its_space(campaign: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    moved = tmp_path / "deeper" / "still" / "campaign"
    shutil.copytree(fill(campaign, tmp_path, {}), moved)
    err = code_of(capsys, str(moved))
    assert "the campaign folder moved" in err and "--space" in err
    assert main(["learn", str(moved), "--space", str(SPACE), "--json"]) == 0


def test_the_site_profile_never_replaces_what_it_is_learnt_from(campaign: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # `--out manifest.json --force` (or a log, or the space) wrote the profile over the campaign's input
    copy = fill(campaign, tmp_path, {})
    manifest = (copy / "manifest.json").read_bytes()
    # rank 0's log too, which learn reads beside a job's log (a trial's `--out job-1/rank0.log --force`)
    (copy / "job-1" / "rank0.log").write_text(ARGS.format(tp=1, mbs=8))
    for out in (copy / "manifest.json", copy / "job-0" / "train.log", copy / "job-1" / "rank0.log",
                copy / "job-2" / "rank0.log"):
        assert "P8012" in code_of(capsys, str(copy), "--out", str(out), "--force")
    assert (copy / "manifest.json").read_bytes() == manifest
    assert (copy / "job-1" / "rank0.log").read_text() == ARGS.format(tp=1, mbs=8)
    assert not (copy / "job-2" / "rank0.log").exists()
    space = tmp_path / "space.prx"
    space.write_text(SPACE.read_text())
    assert "P8012" in code_of(capsys, str(copy), "--space", str(space), "--out", str(space), "--force")
    assert space.read_text() == SPACE.read_text()


def test_jobs_that_failed_are_reported_with_how_they_ended_and_never_ranked(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 31: an out-of-memory death was ranked #1 "by measurement" with --partial. A job whose log
    shows how it ended (out of memory, the time limit, an error before training) is evidence, not a
    result: listed with its cause, left out of the ranking, and an out-of-memory death is set against
    the memory account."""
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    head = ARGS.format(tp=jobs[2]["candidate"]["tp"], mbs=jobs[2]["candidate"]["mbs"])
    copy = fill(campaign, tmp_path, {
        0: head + "[rank7]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
        2: log([(i, 2000.0) for i in range(1, 6)], head)
        + "slurmstepd: error: *** JOB 1234 ON node7 CANCELLED AT 2026-12-01T10:00:00 DUE TO TIME LIMIT ***\n",
    })
    assert main(["learn", str(copy), "--partial", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [r["index"] for r in result["ranked"]] == [1]
    assert {f["index"]: f["ended"] for f in result["failed"]} == {0: "out of memory", 2: "timed out"}
    assert any("job 0 ran out of memory" in n and "account" in n for n in result["notes"])
    (copy / "job-0" / "train.log").write_text(head + "Traceback (most recent call last):\nImportError: no module x\n"
                                               "srun: error: node1: task 0: Exited with exit code 1\n")
    assert main(["learn", str(copy), "--partial", "--force"]) == 0
    captured = capsys.readouterr()
    # the exception the traceback announces is quoted, not its header (a trial's "it says: 'Traceback (most recent
    # call last):'")
    assert "failed to start" in captured.out and "it says: 'ImportError: no module x'" in " ".join(captured.err.split())


def test_learn_says_whether_the_best_beat_the_baseline_beyond_the_noise(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    head = ARGS.format(tp=jobs[0]["candidate"]["tp"], mbs=jobs[0]["candidate"]["mbs"])
    # job 0 at 1.5 s an iteration, jittering by 1%; the others at 2 s
    faster = log([(i, 1500.0 * (1.01 if i % 2 else 0.99)) for i in range(1, 31)], head)
    copy = fill(campaign, tmp_path, {0: faster})
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["jobs"][2]["baseline"] = True
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert main(["learn", str(copy), "--json"]) == 0
    said = [n for n in json.loads(capsys.readouterr().out)["notes"] if "over the baseline" in n]
    assert len(said) == 1 and "job 0" in said[0] and "+34.7%" in said[0] and "beyond the noise" in said[0]


def test_learn_sets_the_measured_memory_against_the_account(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    head = ARGS.format(tp=jobs[0]["candidate"]["tp"], mbs=jobs[0]["candidate"]["mbs"])
    memory = ("[Rank 0] (after 5 iterations) memory (MB) | allocated: 20000.00 | max allocated: 40960.00 | "
              "reserved: 45000.00 | max reserved: 46080.00\n")
    copy = fill(campaign, tmp_path, {0: log([(i, 2000.0) for i in range(1, 31)], head + memory)})
    assert main(["learn", str(copy), "--json"]) == 0
    said = [n for n in json.loads(capsys.readouterr().out)["notes"] if n.startswith("job 0: the memory account")]
    assert len(said) == 1 and "40.0 GiB allocated (45.0 GiB reserved)" in said[0] and "on this cluster" in said[0]


def test_the_memory_of_rank_zeros_log_is_read_beside_the_printing_pods(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each data-parallel rank 0 prints its memory, so under PP across pods the first stage prints in
    rank 0's log: `learn` read only the last pod's and set the account against the lighter stage."""
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    head = ARGS.format(tp=jobs[0]["candidate"]["tp"], mbs=jobs[0]["candidate"]["mbs"])
    memory = ("[Rank {r}] (after 5 iterations) memory (MB) | allocated: 20000.00 | max allocated: {mb:.2f} | "
              "reserved: 45000.00 | max reserved: {mb:.2f}\n")
    copy = fill(campaign, tmp_path, {0: log([(i, 2000.0) for i in range(1, 31)], memory.format(r=56, mb=30720))})
    (copy / "job-0" / "rank0.log").write_text(head + memory.format(r=0, mb=61440))
    assert main(["learn", str(copy), "--json"]) == 0
    said = [n for n in json.loads(capsys.readouterr().out)["notes"] if n.startswith("job 0: the memory account")]
    assert len(said) == 1 and "60.0 GiB allocated" in said[0]
    # a local campaign saves the other nodes' logs too: a middle stage's is read as well
    (copy / "job-0" / "node3.log").write_text(memory.format(r=24, mb=71680))
    assert main(["learn", str(copy), "--json", "--force"]) == 0
    said = [n for n in json.loads(capsys.readouterr().out)["notes"] if n.startswith("job 0: the memory account")]
    assert "70.0 GiB allocated" in said[0]


def test_a_folder_in_place_of_a_log_is_said_to_be_one(campaign: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    copy = fill(campaign, tmp_path, {1: None})
    (copy / "job-1" / "train.log").mkdir()
    err = " ".join(code_of(capsys, str(copy)).split())
    assert "P6020" in err and "job-1/train.log` is not a file but a folder" in err and "no log at" not in err
    # rank 0's log as a folder: measured from the job's own log, with a word on the folder
    copy = fill(campaign, tmp_path / "rank0", {})
    (copy / "job-1" / "rank0.log").mkdir()
    assert main(["learn", str(copy), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("job-1/rank0.log` is not a file: rank 0's log was not read" in n for n in notes)


def test_rank_zeros_log_says_what_ran_where_another_pod_printed_the_iterations(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A multi-node Kubernetes campaign saves the last rank's pod log (the iterations) and rank 0's
    (the arguments) beside it."""
    iterations_only = log([(i, 2000.0) for i in range(1, 31)], "")
    copy = fill(campaign, tmp_path, {0: iterations_only})
    (copy / "job-0" / "rank0.log").write_text(ARGS.format(tp=4, mbs=8) + "rank 0 prints no iteration line\n")
    err = code_of(capsys, str(copy))
    assert "P6022" in err and "job-0/rank0.log` ran tp 4 (the manifest: 1)" in err


def test_a_log_without_arguments_is_measured_and_says_its_recipe_is_unchecked(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = fill(campaign, tmp_path, {0: log([(i, 2000.0) for i in range(1, 31)], "")})
    assert main(["learn", str(copy), "--json"]) == 0
    captured = capsys.readouterr()
    assert "prints no arguments block" in captured.out + captured.err


def test_a_missing_logs_hint_runs_the_campaigns_own_driver(campaign: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    copy = fill(campaign, tmp_path, {2: None})
    err = code_of(capsys, str(copy))
    assert "run the job (bash campaign.sh)" in err and "sbatch" not in err  # a local campaign


# ---- what current releases print, and runs that end badly after training began (issue 31's loop) ----------

def test_current_arguments_blocks_read_whole(tmp_path: Path) -> None:
    """Megatron-LM from core_v0.16 and Primus v26 print `cpu_offloading_num_layers ... 0` (nothing offloaded),
    and an interleaved pipeline as its VPP: the schedule a VPP above 1 runs is Megatron's interleaved one,
    unless Primus's patched pipeline names another."""
    from primus_lang.bench import candidate_from_log
    from primus_lang.ir import Candidate

    head = ARGS.format(tp=1, mbs=8) + "  cpu_offloading_num_layers ....................... 0\n" \
        "  pipeline_model_parallel_size .................... 4\n" \
        "  virtual_pipeline_model_parallel_size ............ 2\n"
    ran = candidate_from_log(parse_log(log([(1, 2000.0)], head)), Candidate(), moe=False)
    assert ran.offload_layers == 0 and (ran.pp, ran.vpp, ran.schedule) == (4, 2, "interleaved")
    patched = head + "  patch_primus_pipeline ........................... True\n" \
        "  pp_algorithm .................................... zero-bubble\n"
    assert candidate_from_log(parse_log(log([(1, 2000.0)], patched)), Candidate(), moe=False).schedule == "zero_bubble"
    with pytest.raises(Exception, match="not a whole number from 0"):
        candidate_from_log(parse_log(log([(1, 2000.0)], head.replace("....... 0", "....... -1"))), Candidate(), moe=False)


def test_a_run_that_stops_after_training_began_is_not_ranked(campaign: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Enough steady iterations, then out of memory or the time limit: its steps are listed, not ranked.
    An end named before the last iteration is one the run went on from (a requeue resumed it)."""
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    head = ARGS.format(tp=jobs[0]["candidate"]["tp"], mbs=jobs[0]["candidate"]["mbs"])
    steps = [(i, 2000.0) for i in range(1, 14)]
    copy = fill(campaign, tmp_path, {
        0: log(steps, head) + "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.8 GiB\n",
        1: log(steps, ARGS.format(tp=jobs[1]["candidate"]["tp"], mbs=jobs[1]["candidate"]["mbs"]))
        + "slurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2026-12-05T09:30:02 DUE TO TIME LIMIT ***\n",
    })
    assert main(["learn", str(copy), "--partial", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert [r["index"] for r in result["ranked"]] == [2]
    assert {f["index"]: f["ended"] for f in result["failed"]} == {0: "out of memory", 1: "timed out"}
    assert "out of memory after 13 logged iteration(s) (median step 2.000 s over 8 steady)" in captured.err
    # its steps are listed where the docs say, in --json too (a trial found them only in the message)
    assert [f["median_step"] for f in result["failed"]] == [pytest.approx(2.0), pytest.approx(2.0)]
    assert main(["learn", str(copy), "--partial", "--force"]) == 0
    assert "timed out (median step 2.000 s before it stopped)" in capsys.readouterr().out
    # the same death, then a requeue that ran to the end: measured and ranked
    resumed = log(steps, head) + "torch.OutOfMemoryError: CUDA out of memory\n" + log(
        [(i, 2100.0) for i in range(8, 31)], "")
    (copy / "job-0" / "train.log").write_text(resumed)
    assert main(["learn", str(copy), "--partial", "--json", "--force"]) == 0
    assert 0 in [r["index"] for r in json.loads(capsys.readouterr().out)["ranked"]]


def test_a_log_of_another_model_or_batch_is_p6022(campaign: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    head = ARGS.format(tp=jobs[0]["candidate"]["tp"], mbs=jobs[0]["candidate"]["mbs"])
    steps = [(i, 2000.0) for i in range(1, 31)]
    copy = fill(campaign, tmp_path, {0: log(steps, head + "  num_layers ...................... 40\n"
                                            "  world_size ...................... 32\n")})
    err = code_of(capsys, str(copy))
    assert "P6022" in err and "num_layers 40 (the campaign's: 16)" in err and "world_size 32" in err
    # no arguments block: the batch its iteration lines print is checked against the manifest's
    (copy / "job-0" / "train.log").write_text(log(steps, "").replace("global batch size:    64",
                                                                      "global batch size:   512"))
    err = code_of(capsys, str(copy))
    assert "P6022" in err and "global batch size 512 on its iteration lines (the manifest: 64)" in err
    # nor a GPU count, but Primus prints tokens/s/GPU: the log of an 8-times smaller run, the same batch
    # (a new user's trial: its step over the campaign's GPUs was learnt from, 8 times too slow)
    cluster = json.loads((copy / "manifest.json").read_text())["cluster"]
    world = cluster["nodes"] * cluster["gpus_per_node"]
    ours = 64 * 4096 / (2.0 * world)
    (copy / "job-0" / "train.log").write_text(log(steps, "").replace(
        " | lm loss:", f" | tokens per GPU (tokens/s/GPU): {8 * ours:.1f}/{8 * ours:.1f} | lm loss:"))
    err = code_of(capsys, str(copy))
    assert "P6022" in err and f"it ran on about {max(1, world // 8):,} GPUs" in err
    (copy / "job-0" / "train.log").write_text(log(steps, "").replace(
        " | lm loss:", f" | tokens per GPU (tokens/s/GPU): {1.05 * ours:.1f}/{ours:.1f} | lm loss:"))
    assert main(["learn", str(copy), "--partial", "--json", "--force"]) == 0  # within a quarter: measured
    assert 0 in [r["index"] for r in json.loads(capsys.readouterr().out)["ranked"]]


def test_with_partial_and_nothing_usable_each_jobs_reason_is_said(campaign: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    copy = fill(campaign, tmp_path, {0: "", 1: "INFO: Started server process [4242]\n", 2: "\x00\x01\x02\x03\x04\n"})
    err = code_of(capsys, str(copy), "--partial")
    assert err.count("P6021") == 3 and "P6024" in err and "not text (binary data?)" in err
    assert "--partial" not in err.replace("(--partial)", "")  # it was given: no help offers it again


def test_a_dense_models_log_is_not_checked_for_moe_settings(campaign: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Megatron prints `moe_token_dispatcher_type` (default allgather) for a dense model too; the manifest's
    candidate says alltoall, and `learn` refused every dense log of Megatron-LM and Primus (a trial)."""
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    assert all(j["candidate"]["moe_dispatcher"] != "allgather" for j in jobs)
    moe = "  moe_token_dispatcher_type ....................... allgather\n"
    copy = fill(campaign, tmp_path, {j["index"]: log([(i, 2000.0) for i in range(1, 31)], ARGS.format(
        tp=j["candidate"]["tp"], mbs=j["candidate"]["mbs"]) + moe) for j in jobs})
    assert main(["learn", str(copy), "--json"]) == 0, capsys.readouterr().err


def test_a_finished_log_of_a_rank_that_prints_no_iterations_asks_for_the_last_ranks(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Megatron prints the iteration lines from the last rank only: rank 0's log of a finished run holds its
    arguments and `[after training is done]`, which `learn` called a job that failed to start (a trial)."""
    cand = json.loads((campaign / "manifest.json").read_text())["jobs"][0]["candidate"]
    rank0 = ARGS.format(tp=cand["tp"], mbs=cand["mbs"]) + \
        "[after training is done] datetime: 2026-08-22 10:12:00.000000 \n"
    err = " ".join(code_of(capsys, str(fill(campaign, tmp_path, {0: rank0}))).split())
    assert "P6804" in err and "failed to start" not in err and "P6021" not in err
    assert "a rank that does not print them" in err and "the last rank" in err


def test_a_first_rank_log_says_how_a_multi_node_job_ended(campaign: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A multi-node Kubernetes job: the pod that prints the iterations only saw its peer die; rank 0's log,
    saved beside it, ran out of memory."""
    copy = fill(campaign, tmp_path, {0: "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"})
    (copy / "job-0" / "rank0.log").write_text("[rank0]: torch.OutOfMemoryError: CUDA out of memory.\n")
    assert main(["learn", str(copy), "--partial", "--json"]) == 0
    said = capsys.readouterr()
    assert json.loads(said.out)["failed"] == [
        {"index": 0, "label": json.loads((copy / "manifest.json").read_text())["jobs"][0]["label"],
         "ended": "out of memory", "median_step": None}]
    # the printing pod's log is the one without iteration lines; rank 0's is the one that says why (a trial read
    # "rank0.log holds no iteration lines", true of every rank 0 log)
    err = " ".join(said.err.split())
    assert "train.log` holds no iteration lines;" in err and "rank0.log` ends: '[rank0]: torch.OutOfMemoryError" in err


def test_how_a_run_ended_against_whether_it_trained_to_its_end(campaign: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A re-trial's cases: the host's OOM killer is the host's out of memory, not the GPU's; a log that stops short saying nothing is
    not ranked; a crash after the last iteration of the run (teardown) or after Megatron's own exit is
    measured; on multi-node Kubernetes rank 0's out of memory tells more than the printing pod's crash."""
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    heads = [ARGS.format(tp=j["candidate"]["tp"], mbs=j["candidate"]["mbs"]) for j in jobs]
    short = [(i, 2000.0) for i in range(1, 21)]
    full = [(i, 2000.0) for i in range(1, 31)]
    copy = fill(campaign, tmp_path, {
        0: log(short, heads[0]) + "slurmstepd: error: Detected 1 oom_kill event in StepId=7.0.\n"
        "srun: error: node-001: task 0: Out Of Memory\n",
        1: log(short, heads[1]),
        2: log(full, heads[2]) + "Segmentation fault (core dumped)\nsrun: error: n1: task 0: Exited with exit code 139\n",
    })
    assert main(["learn", str(copy), "--partial", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # the host's OOM killer took the job: its host memory, which says nothing of the GPU's account
    assert {f["index"]: f["ended"] for f in result["failed"]} == {0: "host out of memory", 1: "stopped early"}
    assert not any("job 0 ran out of memory" in n for n in result["notes"])
    assert [r["index"] for r in result["ranked"] if r["measured"]] == [2]
    assert any("names an end after its last iteration, crashed" in n and "trained every iteration" in n
               for n in result["notes"])
    # Megatron's own exit (the launch's --exit-duration-in-mins) at 20 of 30: the run ended as told
    (copy / "job-1" / "train.log").write_text(log(short, heads[1]) + "[2026-12-05 10:00:00] exiting program after "
                                              "54.1 minutes\nsrun: error: n1: task 0: Exited with exit code 1\n")
    # multi-node Kubernetes: the printing pod saw its peer die, rank 0 ran out of memory
    (copy / "job-0" / "train.log").write_text(log(short, heads[0]) + "primusc campaign: pytorchjob/j0 failed: "
                                              "PyTorchJobFailed: 1 Master replica(s) failed.\n")
    (copy / "job-0" / "rank0.log").write_text(heads[0] + "[rank0]: torch.OutOfMemoryError: CUDA out of memory.\n")
    assert main(["learn", str(copy), "--partial", "--json", "--force"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {f["index"]: f["ended"] for f in result["failed"]} == {0: "out of memory"}
    assert sorted(r["index"] for r in result["ranked"] if r["measured"]) == [1, 2]
    # measured, and said to be cut short by its exit (a trial found it ranked without a word)
    assert any("stopped at iteration 20 of 30, at the exit its settings set" in n for n in result["notes"])
    # the same exit after 7 iterations leaves too few steady ones: a longer time limit, not more iterations
    (copy / "job-1" / "train.log").write_text(log(short[:7], heads[1]) + "[2026-12-05 10:00:00] exiting program "
                                              "after 54.1 minutes\n")
    err = " ".join(code_of(capsys, str(copy), "--force").split())
    assert "stopped at the exit its settings set (--exit-duration-in-mins or --exit-interval) after iteration 7 " \
           "of 30: give the job a longer time limit" in err
    assert "trained to its end" not in err
    # on several nodes only rank 0 prints the exit (print_datetime is print_rank_0): its log says it
    (copy / "job-1" / "train.log").write_text(log(short, ""))
    (copy / "job-1" / "rank0.log").write_text(heads[1] + "[2026-12-05 10:00:00] exiting program after 54.1 minutes\n")
    (copy / "job-0" / "train.log").write_text(log(full, heads[0]))
    (copy / "job-0" / "rank0.log").unlink()
    assert main(["learn", str(copy), "--json", "--force"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert sorted(r["index"] for r in result["ranked"] if r["measured"]) == [0, 1, 2]
    assert any("stopped at iteration 20 of 30, at the exit its settings set" in n for n in result["notes"])


def test_a_stop_from_outside_is_no_planned_exit_where_the_arguments_set_none(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trial's multi-node Kubernetes job: the pod's deadline at iteration 19 of 30 in the printing pod's log,
    rank 0's saying its training loop was done. The arguments set no exit, so the run did not stop where its
    settings told it to: it timed out, and is not ranked."""
    jobs = json.loads((campaign / "manifest.json").read_text())["jobs"]
    no_exit = "  exit_duration_in_mins ........................... None\n  exit_interval ................................... None\n"
    head = ARGS.format(tp=jobs[0]["candidate"]["tp"], mbs=jobs[0]["candidate"]["mbs"]) + no_exit
    copy = fill(campaign, tmp_path, {0: log([(i, 2000.0) for i in range(1, 20)], head)
                                     + "primusc campaign: pytorchjob/j0 failed: DeadlineExceeded\n"})
    (copy / "job-0" / "rank0.log").write_text(head + "[after training is done] datetime: 2026-12-05 10:00:00\n")
    assert main(["learn", str(copy), "--partial", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {f["index"]: f["ended"] for f in result["failed"]} == {0: "timed out"}
    assert 0 not in [r["index"] for r in result["ranked"] if r["measured"]]


def test_learn_and_calibrate_log_leave_out_the_same_warm_up() -> None:
    import argparse

    from primus_lang.commands import calibrate_log, learn

    defaults = []
    for module in (learn, calibrate_log):
        sub = argparse.ArgumentParser().add_subparsers()
        module.register(sub)
        parser = next(iter(sub.choices.values()))
        defaults.append(parser.get_default("warmup"))
    assert defaults == [WARMUP, WARMUP]


def test_a_warm_up_longer_than_a_finished_run_says_to_lower_it(campaign: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # every job trained its 30 of 30: nothing stopped early, the warm-up asked takes them all
    err = code_of(capsys, str(fill(campaign, tmp_path, {})), "--warmup", "40")
    assert "the run trained to its end: lower --warmup" in err and "stopped early" not in err


def test_a_hip_error_is_the_line_quoted_with_its_end(campaign: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # a new user's trial: a real MI300 crash, `[HIP error](invalid resource handle)` at the end of a long
    # line, was quoted as the log's last line cut at 160 characters, before the words that tell
    crash = ("[AITER] /workspace/aiter/csrc/cpp_itfs/mha_fwd_generate/asm_fmha_fwd_v3_gfx942.cpp:142 fail to call "
             "hipModuleLaunchKernel(kernel_func, gdx, gdy, gdz, bdx, bdy, bdz, 0, stream, nullptr, config) "
             "[HIP error](invalid resource handle)")
    copy = fill(campaign, tmp_path, {0: ARGS.format(tp=1, mbs=8) + "building GPT model ...\n" + crash
                                     + "\nW1202 12:00:00 torch/distributed/elastic/agent: Sending process 11 closing\n"})
    err = code_of(capsys, str(copy))
    assert "P6021" in err and "failed to start" in err and "invalid resource handle" in err
    assert "it says: '[AITER]" in err  # the error line, not the log's last


def test_a_log_older_than_the_campaign_is_said_and_plan_force_says_it_keeps_them(
        campaign: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trial re-planned into the same folder with --force (a new container image) and learnt the old logs as the
    new campaign's without a word."""
    import os

    copy = fill(campaign, tmp_path, {})
    written = (copy / "manifest.json").stat().st_mtime
    os.utime(copy / "job-0" / "train.log", (written - 7300, written - 7300))
    assert main(["learn", str(copy), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    said = [n for n in notes if "before the campaign's manifest" in n]
    assert len(said) == 1 and said[0].startswith("job 0 ") and "last written about 2 hours before" in said[0]
    out = tmp_path / "plan"
    assert main(["plan", str(SPACE), "--out", str(out), "--target", "megatron+local", "--shortlist", "2"]) == 0
    (out / "campaign" / "job-0" / "train.log").write_text("an earlier run's log\n")
    capsys.readouterr()
    assert main(["plan", str(SPACE), "--out", str(out), "--target", "megatron+local", "--shortlist", "2", "--force"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "already holds 1 log(s) of an earlier campaign (job-0/train.log)" in err
    assert (out / "campaign" / "job-0" / "train.log").read_text() == "an earlier run's log\n"


def test_learn_pointed_at_the_plan_folder_or_the_manifest_names_the_campaign(
        campaign: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = " ".join(code_of(capsys, str(campaign.parent)).split())
    assert "is the plan's folder; its campaign is" in err and f"primusc learn {campaign}" in err
    err = " ".join(code_of(capsys, str(campaign / "manifest.json")).split())
    assert "is a manifest, not a campaign folder" in err and f"primusc learn {campaign}" in err
    # the plan's own manifest, and one job's folder (a re-trial's): each names the campaign
    for wrong in (campaign.parent / "manifest.json", campaign / "job-0"):
        assert wrong.exists()
        err = " ".join(code_of(capsys, str(wrong)).split())
        assert f"primusc learn {campaign}" in err, err
