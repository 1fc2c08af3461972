from __future__ import annotations

import json
from pathlib import Path

import pytest

from primus_lang.bench.logs import Offset, candidate_from_log, fit_offset, parse_log, steady
from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.ir import Candidate, Recompute

LOGS = Path(__file__).parent / "logs"
MEGATRON = LOGS / "megatron_llama8b_tp2.log"
PRIMUS = LOGS / "primus_llama70b_pp4.log"


def test_megatron_log_iterations_and_arguments() -> None:
    log = parse_log(MEGATRON.read_text())
    assert [i.index for i in log.iterations] == [1, 2, 3, 4]
    assert log.iterations[0].seconds == pytest.approx(21.8443)
    assert log.iterations[1].tflops_per_gpu == pytest.approx(244.2)
    assert log.iterations[1].gbs == 128
    # the first iteration is warm-up: median of 18.9126, 18.8741, 18.9050
    assert steady(log, 1).seconds == pytest.approx(18.9050)
    cand = candidate_from_log(log, moe=False)
    assert (cand.tp, cand.pp, cand.mbs, cand.gbs, cand.seq_len) == (2, 1, 2, 128, 8192)
    assert cand.recompute == Recompute("selective") and cand.sharding == "dist_opt" and cand.precision == "bf16"


def test_primus_log_with_rank_prefixes() -> None:
    log = parse_log(PRIMUS.read_text())
    assert log.iterations[-1].tokens_per_gpu == pytest.approx(576.9)
    cand = candidate_from_log(log, moe=False)
    assert (cand.tp, cand.pp, cand.vpp, cand.gbs) == (8, 4, 2, 256)
    assert cand.recompute == Recompute("full", 4, "block")


def test_a_log_without_iterations_is_a_user_error() -> None:
    with pytest.raises(CompileError) as err:
        parse_log("nothing to see\n", "empty.log")
    assert err.value.diagnostics[0].code.id == "P6804"


def test_offset_is_the_geometric_mean_of_factors() -> None:
    runs = [Offset("a", 2.0, 1.0), Offset("b", 1.0, 2.0), Offset("c", 1.5, 1.5)]
    assert fit_offset(runs) == pytest.approx(1.0)
    assert runs[0].factor == 2.0


SPACE = """
import models.llama3 (llama3_1_8b)
import hardware.amd (mi325x)
cluster c { gpu = mi325x; nodes = 1; gpus_per_node = 8 }
space s on c { model = llama3_1_8b; seq_len = 8192; gbs = 128 }
"""


def test_calibrate_log_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space = tmp_path / "s.prx"
    space.write_text(SPACE)
    assert main(["calibrate-log", str(MEGATRON), "--warmup", "1", "--space", str(space), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    run = out["runs"][0]
    assert run["measured_s"] == pytest.approx(18.905)
    assert run["factor"] == pytest.approx(run["measured_s"] / run["projected_s"])
    assert out["factor"] == pytest.approx(run["factor"])
    assert main(["calibrate-log", str(tmp_path / "missing.log"), "--warmup", "1", "--space", str(space)]) == 1


def test_calibrate_log_reads_the_arguments_from_rank_0s_log_beside_the_printing_ranks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A multi-node Kubernetes campaign job saves the printing rank's stdout (train.log) and rank 0's (rank0.log)
    apart: a trial found calibrate-log refusing each, with hints that contradicted each other."""
    space = tmp_path / "s.prx"
    space.write_text(SPACE)
    text = MEGATRON.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(text) if " iteration " in line)
    (tmp_path / "rank0.log").write_text("".join(text[:at]))
    (tmp_path / "train.log").write_text("".join(text[at:]))
    assert main(["calibrate-log", str(tmp_path / "train.log"), "--warmup", "1", "--space", str(space), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["runs"][0]["candidate"] == "tp=2,mbs=2,recompute=selective"
    assert "recipe is read from rank 0's" in captured.err
    assert main(["calibrate-log", str(tmp_path / "rank0.log"), "--space", str(space)]) == 1
    assert "its train.log (rank 0's arguments are read from the rank0.log beside it)" in " ".join(
        capsys.readouterr().err.split())


def test_calibrate_log_says_a_job_that_did_not_finish(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 4 of 50 iterations, then Slurm's time limit: measured, with a note (a new user's trial: it was silent)
    space = tmp_path / "s.prx"
    space.write_text(SPACE)
    killed = tmp_path / "killed.log"
    killed.write_text(MEGATRON.read_text()
                      + "slurmstepd: error: *** JOB 4711 ON node7 CANCELLED AT 2025-03-02T10:04:00 DUE TO TIME LIMIT ***\n")
    assert main(["calibrate-log", str(killed), "--warmup", "1", "--space", str(space)]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "timed out after iteration 4 of 50" in err and "did not finish" in err
    assert main(["calibrate-log", str(MEGATRON), "--warmup", "1", "--space", str(space)]) == 0
    assert "did not finish" not in capsys.readouterr().err


def test_calibrate_log_reads_a_requeued_run_and_a_utf16_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Slurm appends a requeued job's output: each restart's first iterations are warm-up again, which
    `calibrate-log` had counted as steady (`learn` did not). PowerShell's `kubectl logs > file` writes
    UTF-16, which was read as holding no iteration lines."""
    space = tmp_path / "s.prx"
    space.write_text(SPACE)
    assert main(["calibrate-log", str(MEGATRON), "--warmup", "1", "--space", str(space), "--json"]) == 0
    clean = json.loads(capsys.readouterr().out)["runs"][0]["measured_s"]
    lines = MEGATRON.read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if "elapsed time per iteration" in line)
    slow = lines[first].replace("elapsed time per iteration (ms): ", "elapsed time per iteration (ms): 9")
    requeued = tmp_path / "requeued.log"
    requeued.write_text("".join(lines[:first] + [slow] * 3 + lines[first:]))  # three attempts died at iteration 1
    assert main(["calibrate-log", str(requeued), "--warmup", "1", "--space", str(space), "--json"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["runs"][0]["measured_s"] == clean
    assert "the run restarted" in got.err
    utf16 = tmp_path / "utf16.log"
    utf16.write_bytes(MEGATRON.read_text().replace("\n", "\r\n").encode("utf-16"))  # with its byte-order mark
    assert main(["calibrate-log", str(utf16), "--warmup", "1", "--space", str(space), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["measured_s"] == clean


def test_calibrate_log_reads_an_interleaved_pipeline(capsys: pytest.CaptureFixture[str]) -> None:
    # Primus's 70B log runs PP 4 with VPP 2: Megatron's interleaved schedule, not 1F1B with a VPP it cannot have
    from primus_lang.resources import data_dir

    space = data_dir("examples") / "llama3_1_70b_mi325x.prx"
    assert main(["calibrate-log", str(PRIMUS), "--warmup", "1", "--space", str(space), "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert "vpp=2" in run["candidate"] and "schedule=interleaved" in run["candidate"]


def test_a_dense_models_log_ran_no_expert_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Megatron prints expert_tensor_parallel_size for every run: TP's value by default, 1 if set
    for printed in ("2", "1"):
        text = MEGATRON.read_text().replace(
            "  tensor_model_parallel_size ",
            f"  expert_tensor_parallel_size ..................... {printed}\n  tensor_model_parallel_size ", 1)
        log = parse_log(text)
        assert log.arg("expert_tensor_parallel_size") == printed
        assert (candidate_from_log(log, moe=False).ep, candidate_from_log(log, moe=False).etp) == (1, 0)
        path = tmp_path / f"etp{printed}.log"
        path.write_text(text)
        space = tmp_path / "s.prx"
        space.write_text(SPACE)
        assert main(["calibrate-log", str(path), "--warmup", "1", "--space", str(space)]) == 0, capsys.readouterr().err
    # an MoE model's ETP equal to TP is Megatron's default, the knob's 0
    assert candidate_from_log(parse_log(text.replace("expert_tensor_parallel_size ..................... 1",
                                                     "expert_tensor_parallel_size ..................... 2")),
                              moe=True).etp == 0


def test_a_dense_models_log_ran_no_moe_settings() -> None:
    """Megatron prints every argument, the MoE ones at their defaults for a dense model too: `learn` read a
    dense run's `moe_token_dispatcher_type ... allgather` as its recipe and refused every log (a trial)."""
    line = next(x for x in MEGATRON.read_text().splitlines() if "sequence_parallel ." in x)
    extra = "\n".join(line.replace("sequence_parallel", name).rsplit(" ", 1)[0] + f" {value}" for name, value in
                      (("moe_token_dispatcher_type", "allgather"), ("overlap_moe_expert_parallel_comm", "True")))
    log = parse_log(MEGATRON.read_text().replace(line, line + "\n" + extra))
    base = Candidate(moe_dispatcher="alltoall")
    dense = candidate_from_log(log, base, moe=False)
    assert (dense.moe_dispatcher, dense.ep_comm_overlap) == ("alltoall", False)
    moe = candidate_from_log(log, base, moe=True)
    assert (moe.moe_dispatcher, moe.ep_comm_overlap) == ("allgather", True)


PRIMUS_NOW = (" [2026-12-01 10:00:00] iteration {i:>8}/     100 | consumed samples:         1280 | elapsed time per "
              "iteration (ms): {ms}/21412.0 | hip mem usage/free/total/usage_ratio: 100.00GB/156.00GB/256.00GB/39.06% "
              "| compute per GPU (TFLOP/s/GPU): 350.1 (avg 349.0)  | tokens/s/GPU inst/harmonic mean: 1234.5/1230.0 | "
              "learning rate: 1.000000E-04 | global batch size:   128 | lm loss: 1.050000E+01 |\n")
BRIDGE = (" [2026-12-01 10:00:00] iteration {i:>8}/     100 | consumed samples:         1280 | elapsed time per "
          "iteration (ms): {ms} | throughput per GPU (TFLOP/s/GPU): 512.3 | learning rate: 1.000000E-04 | "
          "global batch size:   128 | lm loss: 1.050000E+01 |\n")


# Primus in late 2025 (a real line's shape): every figure instant/average, its earlier names
PRIMUS_2025 = ("[20251202 09:12:08][rank-7/8][INFO ] [--------trainer.py:2560] : iteration {i:>8}/ 5000 | consumed "
               "samples: 16128 | elapsed time per iteration (ms): {ms}/13364.7 | hip mem usage/free/total/usage_ratio: "
               "153.81GB/102.17GB/255.98GB/60.09% | throughput per GPU (TFLOP/s/GPU): 567.6/568.0 | tokens per GPU "
               "(tokens/s/GPU): 9801.4/9807.3 | learning rate: 9.984820E-06 | global batch size: 128 | lm loss: "
               "6.548988E-03 | loss scale: 1.0 | grad norm: 0.061 | number of skipped iterations: 0 | number of nan "
               "iterations: 0 |\n")


@pytest.mark.parametrize("line", [PRIMUS_NOW, BRIDGE, PRIMUS_2025], ids=["primus-current", "megatron-bridge",
                                                                       "primus-2025"])
def test_the_iteration_lines_primus_and_bridge_print_today(line: str) -> None:
    """Primus's print_rank_last patch writes `instant/average` and its own throughput names; `learn`
    refused its default format (P6012) before."""
    log = parse_log("".join(line.format(i=i, ms=f"{21000.0 + i:.1f}") for i in range(1, 5)))
    assert [it.seconds for it in log.iterations] == pytest.approx([21.001, 21.002, 21.003, 21.004])
    assert log.iterations[0].gbs == 128 and log.iterations[0].tflops_per_gpu in (350.1, 512.3, 567.6)
    if line is PRIMUS_NOW:
        assert log.iterations[0].tokens_per_gpu == pytest.approx(1234.5)
    if line is PRIMUS_2025:
        assert log.iterations[0].tokens_per_gpu == pytest.approx(9801.4)


def test_a_log_without_arguments_ran_the_spaces_recipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "lines.log"
    log.write_text("".join(PRIMUS_NOW.format(i=i, ms=f"{21000.0 + i:.1f}") for i in range(1, 5)))
    space = tmp_path / "s.prx"
    space.write_text(SPACE)
    assert main(["calibrate-log", str(log), "--warmup", "1", "--space", str(space)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "P6804" in err  # no recipe to read it as, rather than one of defaults
    # a trial's Bridge user was told to pass the whole stdout, which for Bridge holds no arguments either
    assert "Megatron-Bridge prints no arguments block: pass a space whose `baseline`" in err
    space.write_text(SPACE.replace("gbs = 128 }", "gbs = 64; baseline { tp = 2; mbs = 1 } }"))
    assert main(["calibrate-log", str(log), "--warmup", "1", "--space", str(space), "--json"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["runs"][0]["candidate"].startswith("tp=2")
    assert "read as space `s`'s recipe, tp=2" in got.err and "global batch of 128" in got.err


def test_a_log_of_no_known_format_names_the_formats() -> None:
    with pytest.raises(CompileError) as err:
        parse_log("step 10 | time 21.2 s\n", "other.log")
    notes = " ".join(err.value.diagnostics[0].notes)
    assert "Megatron-Bridge" in notes and "Primus" in notes and "instant" not in notes


def test_the_memory_the_printing_ranks_report_is_read() -> None:
    """Megatron's report_memory lines (one per data-parallel rank 0) and Primus's device line: the most any
    printing rank held, to check the memory account against the cluster."""
    text = MEGATRON.read_text() + (
        "[Rank 0] (after 10 iterations) memory (MB) | allocated: 30000.00 | max allocated: 61440.00 | "
        "reserved: 70000.00 | max reserved: 71680.00\n"
        "[Rank 4] (after 10 iterations) memory (MB) | allocated: 30000.00 | max allocated: 65536.00 | "
        "reserved: 70000.00 | max reserved: 70000.00\n")
    log = parse_log(text)
    assert log.max_allocated == 64 * 2**30 and log.max_reserved == 70 * 2**30
    primus = parse_log(PRIMUS_NOW.format(i=1, ms="21000.0"))
    assert primus.max_reserved == 100 * 2**30 and primus.max_allocated == 0
    assert parse_log(MEGATRON.read_text()).max_allocated == 0


# Primus's logger (written here in its shape): a coloured time, rank and level, then `[file:line] :`
_PRIMUS_PREFIX = "[\x1b[32m20260511 02:57:54\x1b[0m][\x1b[36mrank-0/8\x1b[0m][\x1b[34m\x1b[1m[DEBUG]    \x1b[0m" \
                 "\x1b[34m\x1b[1m[------arguments.py:1576] : "


def _primus_run() -> list[str]:
    args = {"tensor_model_parallel_size": "2", "pipeline_model_parallel_size": "1", "micro_batch_size": "4",
            "global_batch_size": "64", "seq_length": "4096", "fp8": "e4m3", "fp8_recipe": "mxfp8"}
    lines = [_PRIMUS_PREFIX + "------------------------ arguments ------------------------\x1b[0m"]
    lines += [f"{_PRIMUS_PREFIX}  {k} {'.' * (40 - len(k))} {v}\x1b[0m" for k, v in args.items()]
    lines.append(_PRIMUS_PREFIX + "-------------------- end of arguments ---------------------\x1b[0m")
    for i, ms in enumerate((900.0, 510.0, 505.0, 508.0, 507.0, 506.0), 1):
        it = (f" iteration {i:8d}/      20 | consumed samples: {64 * i:12d} | elapsed time per iteration (ms): "
              f"{ms} | global batch size:    64 | lm loss: 1.1E+01 |")
        # Primus logs each iteration line twice, from two loggers
        lines += [f"[rank-7/8][DEBUG] [utils.py:{n}] : [2026-05-11 02:59:55.1]{it}" for n in (429, 425)]
    return lines


# what log collectors and launchers put around each line
_WRAPPERS = {
    "as printed": lambda line: line,
    "kubectl logs --timestamps": lambda line: "2026-05-11T02:57:54.123456789Z " + line,
    "containerd": lambda line: "2026-05-11T02:57:54.123456789Z stdout F " + line,
    "srun --label": lambda line: "0: " + line,
    "torchrun --tee": lambda line: "[default0]:" + line,
    "docker json-file": lambda line: json.dumps({"log": line + "\n", "stream": "stdout",
                                                 "time": "2026-05-11T02:57:54Z"}),
}


@pytest.mark.parametrize("wrapper", list(_WRAPPERS))
def test_a_primus_log_is_read_whatever_wraps_its_lines(wrapper: str) -> None:
    log = parse_log("\n".join(_WRAPPERS[wrapper](line) for line in _primus_run()) + "\n")
    # each iteration once: the echo of a line is not a restart
    assert [i.index for i in log.iterations] == [1, 2, 3, 4, 5, 6]
    assert steady(log, 2).notes == () and steady(log, 2).kept == 4
    assert log.arg("micro_batch_size") == "4" and log.arg("fp8") == "e4m3"  # no colour code left on a value
    cand = candidate_from_log(log, moe=False)
    assert (cand.tp, cand.mbs, cand.gbs, cand.precision, cand.fp8_recipe, cand.fp8_format) == \
        (2, 4, 64, "fp8", "mxfp8", "e4m3")


def test_a_restart_logging_an_iteration_again_is_still_a_restart() -> None:
    lines = _primus_run()
    iteration_two = next(line for line in lines if "iteration        2/" in line)
    restarted = iteration_two.replace("510.0", "530.0")  # the same iteration after a requeue, timed anew
    log = parse_log("\n".join([*lines, restarted]) + "\n")
    assert [i.index for i in log.iterations] == [1, 2, 3, 4, 5, 6, 2]
    assert "the run restarted" in steady(log, 2).notes[0]


def test_a_log_of_another_model_or_gpu_count_is_p6014(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space = tmp_path / "s.prx"
    space.write_text(SPACE.replace("llama3_1_8b", "llama3_2_1b"))  # 16 layers where the log ran 32
    assert main(["calibrate-log", str(MEGATRON), "--warmup", "1", "--space", str(space)]) == 1
    err = capsys.readouterr().err
    assert "P6014" in err and "num_layers 32 (space `s`: 16)" in err and f"{MEGATRON.name}:10:" in err
    log = tmp_path / "sixteen.log"
    log.write_text(MEGATRON.read_text().replace("  micro_batch_size ...", "  world_size ...................... 16\n"
                                                "  micro_batch_size ...", 1))
    space.write_text(SPACE)
    assert main(["calibrate-log", str(log), "--warmup", "1", "--space", str(space)]) == 1
    assert "world_size 16 (space `s`: 8)" in capsys.readouterr().err


def test_the_devices_memory_in_use_is_not_read_as_the_allocators_reserved() -> None:
    """A Primus log prints both Megatron's allocator figures and the device's use (every process on the
    GPU, larger): `learn` called the device's 94.7 GiB `reserved` where Megatron printed 84.6."""
    lines = [" [Rank 0] (after 2 iterations) memory (MB) | allocated: 70000.0 | max allocated: 80000.0 | "
             "reserved: 86000.0 | max reserved: 86630.4",
             " iteration        2/      20 | elapsed time per iteration (ms): 510.0 | hip mem usage/free/total/"
             "usage_ratio: 94.70GB/193.30GB/288.00GB/32.88% |"]
    log = parse_log("\n".join(lines) + "\n")
    assert (log.max_allocated, log.max_reserved) == (int(80000.0 * 2**20), int(86630.4 * 2**20))
    alone = parse_log(lines[1] + "\n")  # the device's figure is all there is
    assert alone.max_reserved == int(94.70 * 2**30)


def test_primus_most_used_over_ranks_is_read_beside_the_printing_ranks_own() -> None:
    """Primus prints, on the iterations it samples ROCm SMI, the most any rank used (an all-reduce over the
    ranks: under PP the first stage, not the printing last one); `learn` read only the printing rank's."""
    line = (" iteration        2/      20 | elapsed time per iteration (ms): 510.0 | hip mem usage/free/total/"
            "usage_ratio: 120.12GB/135.88GB/256.00GB/46.92% | rocm mem usage/free/total/usage_ratio: "
            "121.00GB/135.00GB/256.00GB/47.27% | rank-0 rocm max mem usage/usage_ratio: 201.50GB/78.71% |")
    assert parse_log(line + "\n").max_reserved == int(201.50 * 2**30)


def test_the_cross_entropy_kernel_is_read_from_the_arguments() -> None:
    # a reviewer's finding: a log of a run on Transformer Engine's cross-entropy was read as unfused
    text = MEGATRON.read_text()
    assert candidate_from_log(parse_log(text), moe=False).cross_entropy == "unfused"
    line = next(x for x in text.splitlines() if "sequence_parallel ." in x)
    for switch, impl, kernel in (("True", "te", "te"), ("True", "native", "native"), ("False", "te", "unfused")):
        extra = (line.replace("sequence_parallel", "cross_entropy_loss_fusion").rsplit(" ", 1)[0] + f" {switch}\n"
                 + line.replace("sequence_parallel", "cross_entropy_fusion_impl").rsplit(" ", 1)[0] + f" {impl}")
        log = parse_log(text.replace(line, line + "\n" + extra))
        assert candidate_from_log(log, moe=False).cross_entropy == kernel


def test_a_failed_start_quotes_the_exception_not_the_traceback_header(tmp_path: Path) -> None:
    from primus_lang.commands._log_lines import LogLines

    path = tmp_path / "train.log"
    path.write_text("[rank5]: Traceback (most recent call last):\n"
                    '[rank5]:   File "pretrain_gpt.py", line 303, in <module>\n'
                    "[rank5]: ImportError: libtransformer_engine.so: undefined symbol: foo\n"
                    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
                    "srun: error: node001: task 0: Exited with exit code 1\n")
    lines = LogLines(path).read_through()
    assert lines.cause() == "failed to start"
    assert lines.said() == "[rank5]: ImportError: libtransformer_engine.so: undefined symbol: foo"
    # a bare header with nothing raised after it is still what the log says
    path.write_text("Traceback (most recent call last):\nsrun: error: n1: task 0: Exited with exit code 1\n")
    assert LogLines(path).read_through().said() == "Traceback (most recent call last):"


@pytest.mark.parametrize(("line", "how"), [
    ("slurmstepd: error: Detected 1 oom_kill event in StepId=1234.0. Some of the step tasks have been OOM Killed.",
     "host out of memory"),
    ("srun: error: node-001: task 0: Out Of Memory", "host out of memory"),
    ("primusc campaign: pytorchjob/j failed: R: M; pods: j-worker-0 OOMKilled (exit 137)", "host out of memory"),
    ("[Mon Dec  7] Memory cgroup out of memory: Killed process 4242 (python)", "host out of memory"),
    ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "out of memory"),
    ("RuntimeError: HIP out of memory. Tried to allocate 1.00 GiB", "out of memory"),
])
def test_the_hosts_out_of_memory_is_told_from_the_gpus(line: str, how: str) -> None:
    from primus_lang.bench import ending

    assert ending(line) == how


def test_calibrate_log_says_which_decisive_arguments_a_log_does_not_print(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A cut arguments block was read at primusc's defaults for what it left out, without a word."""
    space = tmp_path / "s.prx"
    space.write_text(SPACE)
    cut = tmp_path / "cut.log"
    cut.write_text("".join(line for line in MEGATRON.read_text().splitlines(keepends=True)
                           if "micro_batch_size" not in line and "recompute_granularity" not in line))
    assert main(["calibrate-log", str(cut), "--warmup", "1", "--space", str(space)]) == 0
    err = capsys.readouterr().err
    assert "prints no `micro_batch_size`, `recompute_granularity`: read as mbs=1, recompute=none" in err
    assert main(["calibrate-log", str(MEGATRON), "--warmup", "1", "--space", str(space)]) == 0
    assert "prints no" not in capsys.readouterr().err
    # the parallel sizes a block leaves out are read from Megatron's `using world size: ...` line (a trial's cut
    # log was read at TP 1, its factor 1.49 for 0.95)
    no_tp = tmp_path / "no_tp.log"
    no_tp.write_text("".join(line for line in MEGATRON.read_text().splitlines(keepends=True)
                             if "tensor_model_parallel_size" not in line))
    assert candidate_from_log(parse_log(no_tp.read_text()), moe=False).tp == 2
    assert main(["calibrate-log", str(no_tp), "--warmup", "1", "--space", str(space)]) == 0
    assert "prints no" not in capsys.readouterr().err


def test_a_nan_iteration_megatron_prints_without_its_loss_is_left_out() -> None:
    """Megatron-LM prints no loss where it is NaN (training_log: `if avg >= 0.0`) and counts NaN iterations only
    among skipped ones, so a BF16 run's NaN iteration has no `lm loss` and a `grad norm: nan` (an issue thread's
    log: "number of nan iterations: 0"); such lines were measured as healthy."""
    line = (" iteration {i:8d}/     100 | elapsed time per iteration (ms): {ms} | global batch size:     8 |"
            "{loss} loss scale: 1.0 | grad norm: {grad} | number of skipped iterations:   0 | "
            "number of nan iterations:   0 |\n")
    text = "".join(line.format(i=i, ms=f"{1500.0 + i:.1f}", loss=" lm loss: 2.5E+00 |" if i < 4 else "",
                               grad="0.9" if i < 6 else "nan") for i in range(1, 8))
    log = parse_log(text, "nan.log")
    assert [it.nan for it in log.iterations] == [0, 0, 0, 1, 1, 1, 1]
    assert steady(log, 0).kept == 3


def test_arguments_behind_a_collectors_prefix_are_read_without_the_blocks_header() -> None:
    """An issue's excerpt keeps the arguments but not the `--- arguments ---` header: behind `kubectl logs
    --timestamps` or `srun --label` they were not read, and the log was said to print none."""
    for prefix in ("2025-03-01T10:00:00.123456789Z ", "3: ", "[2025-03-01 10:00:00] [rank-0] : "):
        text = (f"{prefix}  expert_model_parallel_size ...................... 8\n"
                f"{prefix} iteration        1/     100 | elapsed time per iteration (ms): 1500.0 | "
                "global batch size:   128 |\n")
        assert dict(parse_log(text, "p.log").args)["expert_model_parallel_size"] == "8", prefix


def test_calibrate_log_says_a_median_of_too_few_iterations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "short.log"
    log.write_text(MEGATRON.read_text())
    space = tmp_path / "s.prx"
    space.write_text(SPACE)
    assert main(["calibrate-log", str(log), "--warmup", "2", "--space", str(space)]) == 0
    assert "measured on 2 steady iterations (fewer than 3, which `learn` asks of a job)" in capsys.readouterr().err


def test_calibrate_log_warns_of_a_step_faster_than_the_gpus_peak(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A trial's log claimed 1.5 s a step for Llama 3.1 8B at 128 x 8192 tokens on 8 H100 (4.5 times the dense
    peak in model FLOPs) and got a factor of 0.116 without a word."""
    log = tmp_path / "fast.log"
    log.write_text("".join(
        f" iteration {i:8d}/     100 | elapsed time per iteration (ms): 1500.0 | global batch size:   128 |\n"
        for i in range(1, 10)))
    space = tmp_path / "s.prx"
    space.write_text(SPACE.replace("gbs = 128 }", "gbs = 128; baseline { tp = 2 } }"))
    assert main(["calibrate-log", str(log), "--warmup", "1", "--space", str(space)]) == 0
    assert "the GPU's dense peak in model FLOPs: the log did not run what the space says" in capsys.readouterr().err
