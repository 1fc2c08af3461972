"""Planning across clusters (issue 32): cluster axes, a training run's days and cost with their bands,
the front of days against cost, and the cluster the launch files are for."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import attrs
import pytest

from primus_lang.cli import main
from primus_lang.diagnostics import CompileError
from primus_lang.diagnostics import codes_names as N
from primus_lang.diagnostics import codes_types as T
from primus_lang.ir import cluster_points
from primus_lang.ir.expr import to_text
from primus_lang.ir.hardware import Provenance
from primus_lang.lower import load_space
from primus_lang.search import limits_of, plan_capacity, run_search
from primus_lang.search.capacity import DAY, HOUR, ClusterPlan, Spread, figure, front

HEAD = """import models.llama3 (llama3_8b)
import clusters.nvidia (h100_x8)
import hardware.calibrated (h100_sxm_calibrated, b200_calibrated)
"""


def space_text(body: str) -> str:
    return HEAD + f"""
space s on h100_x8 {{
  model = llama3_8b
  seq_len = 4096
  gbs = 256
  tp : 1 | 2 | 4
  pp : 1 | 2
  mbs : 1 | 2
  sharding = dist_opt
  fits memory headroom 5%
{body}
}}
"""


# a run trains whole iterations: 1T tokens at 256 sequences of 4,096 a step are 953,675 steps
WHOLE = math.ceil(1e12 / (256 * 4096)) * 256 * 4096

PRICED = """  gpu : h100_sxm_calibrated { price_per_hour = 2 } | b200_calibrated { price_per_hour = 5 }
  nodes : 1 | 2 | 4
  train_tokens = 1T
  strategy exhaustive
"""


def priced(tmp_path: Path, body: str) -> Path:
    """The space of ``PRICED`` clusters with ``body`` added, written where a command can read it."""
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + body))
    return path


def load(tmp_path: Path, body: str) -> object:
    path = tmp_path / "space.prx"
    path.write_text(space_text(body))
    return load_space(path)


def code_of(tmp_path: Path, body: str) -> object:
    with pytest.raises(CompileError) as err:
        load(tmp_path, body)
    return err.value.diagnostics[0].code


def test_cluster_axes_span_one_space_per_cluster(tmp_path: Path) -> None:
    space = load(tmp_path, PRICED + "  minimize cost\n")
    points = cluster_points(space)  # type: ignore[arg-type]
    assert [label for label, _ in points] == [
        f"gpu={g},nodes={n}" for g in ("h100_sxm_calibrated", "b200_calibrated") for n in (1, 2, 4)]
    assert [(sub.cluster.gpu.name, sub.cluster.world, sub.cluster.gpu.price_per_hour) for _, sub in points][2:4] == [
        ("h100_sxm_calibrated", 32, 2.0), ("b200_calibrated", 8, 5.0)]
    assert all(not sub.cluster_axes for _, sub in points)
    first = points[0][1].cluster
    assert first.name == "gpu=h100_sxm_calibrated,nodes=1"  # a manifest names the point, not the base cluster
    assert space.cluster == attrs.evolve(first, name="h100_x8")  # type: ignore[attr-defined]  # what the others see
    assert space.capacity.train_tokens == 1e12  # type: ignore[attr-defined]


@pytest.mark.parametrize(("text", "tokens"), [("15T", 15e12), ("500B", 5e11), ("2M", 2e6), ("1.5e13", 1.5e13)])
def test_train_tokens_read_with_a_suffix_or_as_a_number(tmp_path: Path, text: str, tokens: float) -> None:
    assert load(tmp_path, f"  train_tokens = {text}\n").capacity.train_tokens == tokens  # type: ignore[attr-defined]


def test_a_space_may_fix_one_cluster_field(tmp_path: Path) -> None:
    space = load(tmp_path, "  nodes = 3\n")
    assert space.cluster.world == 24 and not space.cluster_axes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("body", "code"), [
    ("  train_tokens = lots\n", T.WRONG_TYPE),
    ("  train_tokens = 1T\n  maximize cost\n", T.BAD_ENUM),
    ("  minimize time_to_train\n", T.MISSING_FIELD),
    ("  train_tokens = 1T\n  minimize cost\n", T.MISSING_FIELD),  # h100_sxm_calibrated has no price
    ("  train_tokens = 1T\n  require time_to_train <= 30 and tp == 2\n", T.BAD_EXPRESSION),
    ("  nodes : 1 | 2 when tp > 1\n", T.MISPLACED_STATEMENT),
    ("  gpu : 1 | 2\n", T.WRONG_TYPE),
    ("  gpu : no_such_gpu\n", N.UNKNOWN_NAME),
    ("  gpu : h100_sxm_calibrated { price_per_hour = 2 } | h100_sxm_calibrated { price_per_hour = 1 }\n",
     N.DUPLICATE_DEFINITION),
])
def test_what_a_run_needs_is_refused_with_a_code(tmp_path: Path, body: str, code: object) -> None:
    assert code_of(tmp_path, body) is code


def test_each_cluster_gets_its_own_best_and_the_run_figures_follow(tmp_path: Path) -> None:
    space = load(tmp_path, PRICED + "  minimize cost\n")
    cap = plan_capacity(space, None, limits_of(space), None)  # type: ignore[arg-type]
    assert len(cap.clusters) == 6 and not any(c.excluded for c in cap.clusters)
    for (label, sub), c in zip(cluster_points(space), cap.clusters, strict=True):  # type: ignore[arg-type]
        alone = run_search(sub)
        assert alone.best is not None and alone.best.candidate is not None and alone.best.evaluation is not None
        assert c.label == label and c.recipe == alone.best.candidate.label()
        assert c.tokens_per_gpu is not None and c.days is not None and c.cost is not None
        rate = alone.best.evaluation.tokens_per_gpu
        assert c.days.value == pytest.approx(WHOLE / (rate * c.gpus) / DAY)
        assert c.cost.value == pytest.approx(c.days.value * DAY / HOUR * c.gpus * c.price_per_hour)
        # the band: the slowest rate the profile allows is the longest and dearest run
        assert c.tokens_per_gpu.low <= rate <= c.tokens_per_gpu.high
        assert c.days.low <= c.days.value <= c.days.high and c.cost.low <= c.cost.value <= c.cost.high
    chosen = cap.cluster(cap.chosen)
    assert chosen is not None and all(chosen.cost.value <= c.cost.value for c in cap.clusters)  # type: ignore[union-attr]


def test_clusters_searched_in_parallel_give_the_same_plan(tmp_path: Path) -> None:
    space = load(tmp_path, PRICED + "  minimize cost\n")
    heard: list[tuple[str, int, int]] = []
    serial = plan_capacity(space, "exhaustive", limits_of(space, 10**6), None)  # type: ignore[arg-type]
    forked = plan_capacity(space, "exhaustive", limits_of(space, 10**6), None,  # type: ignore[arg-type]
                           progress=lambda c, k, n: heard.append((c.label, k, n)), jobs=2)
    assert forked == serial
    searched = [c.label for c in serial.clusters if not c.excluded]
    assert heard == [(label, k + 1, len(searched)) for k, label in enumerate(searched)]  # in order, once each
    assert all(c.proven for c in serial.clusters if not c.excluded)  # exhaustive proves each cluster's best


def test_an_error_in_a_worker_reaches_the_caller_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from primus_lang.diagnostics import Diagnostic
    from primus_lang.diagnostics.codes_search import NO_FITTING_POINT
    from primus_lang.search import capacity

    def refused(*args: object) -> None:
        raise CompileError(Diagnostic(NO_FITTING_POINT, "nothing fits here", help="a hint"))

    space = load(tmp_path, PRICED + "  minimize cost\n")
    monkeypatch.setattr(capacity, "_search", refused)  # the forked workers inherit it
    with pytest.raises(CompileError) as err:
        plan_capacity(space, None, limits_of(space), None, jobs=2)  # type: ignore[arg-type]
    assert [(d.code, d.message, d.help) for d in err.value.diagnostics] == [(NO_FITTING_POINT, "nothing fits here", "a hint")]


def test_the_front_holds_exactly_the_clusters_no_other_beats_on_both(tmp_path: Path) -> None:
    space = load(tmp_path, PRICED + "  minimize time_to_train\n")
    cap = plan_capacity(space, None, limits_of(space), None)  # type: ignore[arg-type]
    assert {c.label for c in cap.clusters if c.front} == front(cap.clusters)
    for c in cap.clusters:
        assert c.days is not None and c.cost is not None
        beaten = any(o.days is not None and o.cost is not None and o.days.value <= c.days.value
                     and o.cost.value <= c.cost.value and o.label != c.label for o in cap.clusters)
        assert c.front != beaten
    assert {c.label for c in cap.clusters if c.front_gpus} == front(cap.clusters, "gpus")
    for c in cap.clusters:
        assert c.days is not None
        fewer = any(o.days is not None and o.days.value <= c.days.value and o.gpus <= c.gpus
                    and (o.days.value, o.gpus) != (c.days.value, c.gpus) for o in cap.clusters)
        assert c.front_gpus != fewer
    fastest = min(cap.clusters, key=lambda c: c.days.value if c.days else 0)
    assert cap.chosen == fastest.label and fastest.front


def test_without_tokens_to_train_the_front_is_of_throughput_against_gpus(tmp_path: Path) -> None:
    """Without `train_tokens` a cluster has no days, and a trial's table left every ★ empty under a legend that
    defines it: the cluster's tokens a second stand for its days (their inverse)."""
    space = load(tmp_path, "  nodes : 1 | 2 | 4\n  strategy exhaustive\n  maximize tokens_per_gpu\n")
    cap = plan_capacity(space, None, limits_of(space), None)  # type: ignore[arg-type]
    assert all(c.days is None and c.tokens_per_gpu is not None for c in cap.clusters)
    marked = {c.label for c in cap.clusters if c.front}
    assert marked and marked == front(cap.clusters)

    def rate(c: object) -> float:
        return c.tokens_per_gpu.value * c.gpus  # type: ignore[attr-defined, no-any-return]

    for c in cap.clusters:
        beaten = any(rate(o) >= rate(c) and o.gpus <= c.gpus and o.label != c.label for o in cap.clusters)
        assert (c.label in marked) != beaten


def test_a_tie_on_the_objective_says_how_it_was_broken(tmp_path: Path) -> None:
    # the same GPU under two names runs the same recipes at the same speed: equal days
    path = tmp_path / "space.prx"
    path.write_text(space_text("""  gpu : h100_sxm_calibrated | h100_again
  train_tokens = 1T
  minimize time_to_train
  strategy exhaustive
""").replace("space s on", "gpu h100_again = h100_sxm_calibrated { }\n\nspace s on"))
    space = load_space(path)
    cap = plan_capacity(space, None, limits_of(space), None)  # type: ignore[arg-type]
    first, again = cap.cluster("gpu=h100_sxm_calibrated"), cap.cluster("gpu=h100_again")
    assert first is not None and again is not None and first.days is not None and again.days is not None
    assert first.days.value == again.days.value
    assert cap.chosen == again.label  # "gpu=h100_again" sorts first
    assert cap.mark(again.label) == f"chosen; ties with {first.label} on the objective, taken as its label sorts first"
    assert cap.mark(first.label) == ""
    alone = plan_capacity(load(tmp_path, PRICED + "  minimize cost\n"), None, limits_of(space), None)  # type: ignore[arg-type]
    assert alone.tie == "" and alone.mark(alone.chosen) == "chosen"


def test_a_tiny_run_is_costed_in_whole_iterations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 2.5M tokens are two and a half steps of 1,048,576: the run takes three, 3,145,728 tokens
    path = tmp_path / "space.prx"
    path.write_text(space_text('  gpu = b200_calibrated { price_per_hour = 5 }\n  train_tokens = 2500K\n'))
    assert main(["explain", str(path), "--point", "tp=2", "--json"]) == 0
    told = json.loads(capsys.readouterr().out)
    rate = told["projection"]["tokens_per_gpu"]
    assert told["run"]["days"]["value"] == pytest.approx(3 * 256 * 4096 / (rate * 64) / DAY, rel=1e-12)
    assert told["run"]["train_tokens"] == 2.5e6  # what the space asks for, as written
    assert told["run"]["iterations"] == 3  # and what a run of it trains
    assert main(["explain", str(path), "--point", "tp=2"]) == 0
    assert "days to train 2.5M tokens (3 iterations)" in " ".join(capsys.readouterr().out.split())


def test_requirements_exclude_clusters_and_gpus_needs_no_search(tmp_path: Path) -> None:
    space = load(tmp_path, PRICED + '  require gpus <= 16\n  require time_to_train <= 10000 "short"\n  minimize cost\n')
    cap = plan_capacity(space, None, limits_of(space), None)  # type: ignore[arg-type]
    big = [c for c in cap.clusters if c.gpus > 16]
    assert big and all(c.excluded == "fails: `require gpus <= 16`" and c.evaluations == 0 for c in big)
    slow = [c for c in cap.clusters if c.days is not None and c.days.value > 10000]
    assert all(c.excluded == "fails: short" for c in slow)
    assert cap.chosen and cap.cluster(cap.chosen).gpus <= 16  # type: ignore[union-attr]


def test_plan_writes_launch_files_for_the_chosen_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  minimize cost\n"))
    out = tmp_path / "plan"
    assert main(["plan", str(path), "--out", str(out), "--target", "megatron+slurm", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    chosen = plan["capacity"]["chosen"]
    assert plan["cluster"] == chosen and plan["gpu"] == chosen.split(",")[0].removeprefix("gpu=")
    nodes = int(chosen.split("nodes=")[1])
    assert f"NNODES={nodes}\n" in (out / "launch.sbatch").read_text()
    # the report plots every cluster's run, the chosen one marked, the front ringed
    report = (out / "report.html").read_text()
    assert "id='clusters'" in report and report.count('class="cluster') == 6
    assert report.count('class="cluster chosen"') == 1
    assert report.count('class="front-point"') == sum(c["front"] for c in plan["capacity"]["clusters"])
    # its table has the terminal's notes and the front of days against GPUs
    assert "<th>fewer GPUs</th>" in report
    assert report.count("<td>☆</td>") == sum(c["front_gpus"] for c in plan["capacity"]["clusters"])
    # another cluster of the table, named in any order
    other = next(c["label"] for c in plan["capacity"]["clusters"] if c["label"] != chosen)
    gpu, n = other.split(",")
    out2 = tmp_path / "plan2"
    assert main(["plan", str(path), "--out", str(out2), "--target", "megatron+slurm", "--cluster", f"{n},{gpu}",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cluster"] == other
    assert f"NNODES={n.removeprefix('nodes=')}\n" in (out2 / "launch.sbatch").read_text()


def test_plan_says_the_launch_runs_a_trial_of_the_whole_run(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  minimize cost\n"))
    assert main(["plan", str(path), "--out", str(tmp_path / "p")]) == 0
    # 1T tokens at GBS 256 x 4,096 a step
    assert "the 1T tokens take 953,675 iterations at 256 x 4,096 tokens each" in capsys.readouterr().out
    assert main(["plan", str(path), "--out", str(tmp_path / "q"), "--var", "train_iters=953675"]) == 0
    assert "a trial of the recipe" not in capsys.readouterr().out


def test_plan_prints_the_table_and_refuses_an_unknown_cluster(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  minimize cost\n"))
    assert main(["plan", str(path), "--out", str(tmp_path / "p"), "--no-emit"]) == 0
    text = capsys.readouterr().out
    assert "days to train" in text and "★" in text and "the plan below is for (no launch files: --no-emit) gpu=" in text
    assert "the launch files below" not in text
    assert main(["plan", str(path), "--out", str(tmp_path / "p2")]) == 0
    assert "the launch files below are for gpu=" in capsys.readouterr().out
    assert main(["plan", str(path), "--out", str(tmp_path / "q"), "--cluster", "gpu=b200_calibrated,nodes=3"]) == 1
    assert "P2001" in capsys.readouterr().err


def test_no_cluster_meeting_the_requirements_writes_nothing(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  require time_to_train <= 0.001\n  minimize cost\n"))
    out = tmp_path / "plan"
    assert main(["plan", str(path), "--out", str(out), "--json"]) == 1
    got = capsys.readouterr()
    out_json = json.loads(got.out)
    cap = out_json["capacity"]  # where a plan that chose a cluster has it too
    assert out_json["cluster"] == "" and cap["chosen"] == "" and all(c["excluded"] for c in cap["clusters"])
    assert not out.exists()
    # the requirement at its line, how near the fastest cluster came, and how many fail it (P8014)
    assert "P8014" in got.err and "require time_to_train <= 0.001" in got.err
    fastest = min(cap["clusters"], key=lambda c: c["days"]["value"])
    assert f"the fastest cluster, {fastest['label']}, trains in" in got.err and "6 of 6 clusters fail it" in got.err
    assert "more nodes or a faster GPU" in got.err


def test_requirements_no_cluster_meets_together_are_said_to_be(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A cap on GPUs beside a time only larger clusters reach: each requirement's nearest cluster is
    sought among those meeting the other (a new user was told the fastest cluster, which broke the cap)."""
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  minimize cost\n"))
    assert main(["plan", str(path), "--out", str(tmp_path / "all"), "--json"]) == 0
    days = {c["gpus"]: c["days"]["value"] for c in json.loads(capsys.readouterr().out)["capacity"]["clusters"]}
    small, large = min(days), max(days)
    assert days[large] < days[small]
    # within the small clusters' GPUs, the time only the large ones reach
    path.write_text(space_text(PRICED + f"  require gpus <= {small}\n"
                                        f"  require time_to_train <= {days[large] * 1.01:.6f}\n  minimize cost\n"))
    assert main(["plan", str(path), "--out", str(tmp_path / "p")]) == 1
    err = capsys.readouterr().err
    assert "P8014" in err and "together" in err
    assert "the fastest cluster of those meeting the other requirements" in err
    assert "nodes=1, trains in" in err  # the fastest within the cap, not the large cluster


def test_a_cap_on_gpus_is_reached_with_fewer_of_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  require gpus <= 4\n  minimize cost\n"))
    assert main(["plan", str(path), "--out", str(tmp_path / "p")]) == 1
    err = capsys.readouterr().err
    assert "P8014" in err and "the smallest has 8 GPUs" in err and "fewer nodes or fewer GPUs a node" in err
    assert "more nodes" not in err
    # check sets the clusters aside as plan does, without counting their points
    path.write_text(space_text(PRICED + "  require gpus <= 16\n  minimize cost\n"))
    assert main(["check", str(path)]) == 0
    text = capsys.readouterr().out
    assert "gpu=b200_calibrated,nodes=4 (32 GPUs): set aside, fails: `require gpus <= 16`" in text
    assert "gpu=b200_calibrated,nodes=2 (16 GPUs): " in text and text.count("set aside") == 2


def test_no_cluster_with_a_recipe_names_the_cluster_axes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    # 3 nodes of 8 GPUs leave no DP that divides the batch: no cluster has a legal point
    path.write_text(space_text(PRICED.replace("nodes : 1 | 2 | 4", "nodes : 3 | 5") + "  minimize cost\n")
                    .replace("gbs = 256", "gbs = 64"))
    assert main(["plan", str(path), "--out", str(tmp_path / "p")]) == 1
    err = capsys.readouterr().err
    assert "P8014" in err and "no cluster has a legal recipe that fits in memory (4 of 4 have none)" in err and "gpu : h100_sxm_calibrated" in err


@pytest.mark.parametrize(("written", "says"), [("1440 hours", "`60 days`"), ("60 d", "`60 days`"),
                                               ("8 weeks", "`56 days`"), ("90 minutes", "`0.0625 days`")])
def test_a_runs_time_in_another_unit_says_it_in_days(tmp_path: Path, written: str, says: str) -> None:
    with pytest.raises(CompileError) as err:
        load(tmp_path, PRICED + f"  require time_to_train <= {written}\n  minimize cost\n")
    (d,) = err.value.diagnostics
    assert d.code.id == "P1005" and "a run's time is counted in days" in d.message and says in str(d.help)


def test_a_gpu_listed_twice_is_a_repeat(tmp_path: Path) -> None:
    with pytest.raises(CompileError) as err:
        load(tmp_path, "  gpu : b200_calibrated | h100_sxm_calibrated | b200_calibrated\n  nodes : 1 | 2\n")
    (d,) = err.value.diagnostics
    assert d.code.id == "P3039" and d.message == "`b200_calibrated` is listed twice in the `gpu` axis"


@pytest.mark.parametrize(("written", "code", "says"), [("30 Days", "P1005", "did you mean `days`?"),
                                                       ("30 fortnights", "P1005", "`time_to_train <= 30 days`"),
                                                       ("30Days", "P3016", "write `30 days`")])
def test_a_runs_time_misspelled_is_told_days(tmp_path: Path, written: str, code: str, says: str) -> None:
    """A new user's trial: `30 Days` was told the units of a kernel's time (ns ... h), which a run's time refuses,
    and `30days` that a requirement on the run cannot name `30days`."""
    with pytest.raises(CompileError) as err:
        load(tmp_path, PRICED + f"  require time_to_train <= {written}\n  minimize cost\n")
    (d,) = err.value.diagnostics
    assert d.code.id == code and says in str(d.help), (d.message, d.help)


@pytest.mark.parametrize("written", ["30days", "30.5days", "30 days"])
def test_a_runs_days_read_glued_or_apart(tmp_path: Path, written: str) -> None:
    """`30.5days` read as 30.5 days while `30days` was refused (the lexer reads a whole number glued to letters
    as a name): both are read."""
    space = load(tmp_path, PRICED + f"  require time_to_train <= {written}\n  minimize cost\n")
    (cons,) = space.capacity.constraints
    assert to_text(cons.expr).replace(" ", "").startswith("time_to_train<=30")


@pytest.mark.parametrize("unit", ["days", "day"])
def test_a_requirement_on_the_runs_time_may_say_days(tmp_path: Path, unit: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    space = load(tmp_path, PRICED + f"  require time_to_train <= 30 {unit} \"a month\"\n  minimize cost\n")
    (con,) = space.capacity.constraints  # type: ignore[attr-defined]
    assert to_text(con.expr) == f"time_to_train <= 30 {unit}"
    assert main(["fmt", str(tmp_path / "space.prx"), "--check"]) in (0, 1)
    assert f"<= 30 {unit}" in (tmp_path / "space.prx").read_text()


@pytest.mark.parametrize("require", ["tp <= 2 days", "cost <= 30 days", "time_to_train * 2 <= 30 days"])
def test_days_measure_the_runs_time_alone(tmp_path: Path, require: str) -> None:
    assert code_of(tmp_path, PRICED + f"  require {require}\n  minimize cost\n") == T.BAD_EXPRESSION


def test_check_counts_the_points_of_each_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  minimize cost\n"))
    assert main(["check", str(path)]) == 0
    text = capsys.readouterr().out
    assert "6 clusters (gpu 2 x nodes 3)" in text and "gpu=b200_calibrated,nodes=4 (32 GPUs)" in text
    assert main(["check", str(path), "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)["cluster_points"]["s"]
    assert [c["gpus"] for c in counts] == [8, 16, 32, 8, 16, 32] and all(c["legal"] > 0 for c in counts)


def test_the_other_commands_take_a_cluster_of_the_axes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  minimize cost\n"))
    out = tmp_path / "emit"
    assert main(["emit", str(path), "--point", "tp=2", "--cluster", "nodes=4,gpu=b200_calibrated",
                 "--target", "megatron+slurm", "--out", str(out)]) == 0
    assert "NNODES=4\n" in (out / "launch.sbatch").read_text()
    assert '"gpu": "b200_calibrated"' in (out / "manifest.json").read_text()
    assert "# Planned for 4 nodes x 8 b200_calibrated.\n" in (out / "node.sh").read_text()
    capsys.readouterr()
    assert main(["emit", str(path), "--point", "tp=2", "--target", "megatron+slurm", "--out", str(tmp_path / "e2")]) == 0
    assert "NNODES=1\n" in (tmp_path / "e2" / "launch.sbatch").read_text()  # the first cluster the axes span
    assert "on the first cluster, gpu=h100_sxm_calibrated,nodes=1" in capsys.readouterr().err
    capsys.readouterr()
    assert main(["project", str(path), "--point", "tp=2", "--cluster", "gpu=b200_calibrated,nodes=2", "--json"]) == 0
    capsys.readouterr()
    # the figures say which cluster they are for (the first of the axes is not what plan chose)
    assert main(["project", str(path), "--point", "tp=2", "--cluster", "gpu=b200_calibrated,nodes=2"]) == 0
    assert "s on 2 nodes x 8 b200_calibrated (16 GPUs)" in capsys.readouterr().out
    assert main(["explain", str(path), "--point", "tp=2", "--cluster", "gpu=b200_calibrated,nodes=2"]) == 0
    assert "on 2 nodes x 8 b200_calibrated (16 GPUs)" in capsys.readouterr().out
    # a cluster the axes do not span is P2001, with the one it most likely means: a GPU named as a user
    # shortens it (a new user's slip), and axis by axis a GPU by the name it begins and a node count by
    # the nearest one (not the closest spelling)
    for named, said in (("gpu=h100_sxm_calibrated,nodes=9", "P2001"),
                        ("gpu=b200,nodes=2", "did you mean `gpu=b200_calibrated,nodes=2`?"),
                        ("gpu=h100,nodes=3", "did you mean `gpu=h100_sxm_calibrated,nodes=4`?"),
                        ("gpu=b200_calibrated,nodes=1.2", "did you mean `gpu=b200_calibrated,nodes=1`?")):
        assert main(["explain", str(path), "--point", "tp=2", "--cluster", named]) == 1
        assert said in capsys.readouterr().err
    # the cluster in --point: told where it goes
    assert main(["explain", str(path), "--point", "tp=2,gpu=b200_calibrated"]) == 1
    said = capsys.readouterr().err
    assert "`gpu` is the cluster's, not a knob of a point" in said
    assert "with `--cluster gpu=b200_calibrated,nodes=...`, and give the point the recipe alone: `tp=2`" in said
    # a second cluster is refused, not the first silently replaced (diff compared both points on the last)
    with pytest.raises(SystemExit) as stopped:
        main(["diff", str(path), "tp=2", "tp=4", "--cluster", "gpu=b200_calibrated,nodes=2",
              "--cluster", "gpu=b200_calibrated,nodes=4"])
    assert stopped.value.code == 1
    assert "--cluster given twice: a command runs on one cluster" in capsys.readouterr().err
    # the two points may follow an option as well as come before it
    assert main(["diff", str(path), "--cluster", "gpu=b200_calibrated,nodes=2", "tp=2", "tp=4", "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert main(["diff", str(path), "tp=2", "tp=4", "--cluster", "gpu=b200_calibrated,nodes=2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == after
    with pytest.raises(SystemExit) as stop:
        main(["diff", str(path), "--cluster", "gpu=b200_calibrated,nodes=2", "tp=2", "--nope", "tp=4"])
    assert stop.value.code == 1 and "P2017" in capsys.readouterr().err


def test_project_and_explain_give_a_points_run_with_its_band(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A space with train_tokens: project and explain give each point's days and cost (a new user's trial
    found them only in plan's table), from the same band as the tokens/s."""
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  minimize cost\n"))
    where = ["--cluster", "gpu=b200_calibrated,nodes=2"]
    assert main(["project", str(path), "--point", "tp=2", *where, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["results"]
    rate, band, run = row["projection"]["tokens_per_gpu"], row["band"], row["run"]
    assert run["train_tokens"] == 1e12
    assert run["days"]["value"] == pytest.approx(WHOLE / (rate * 16) / DAY)
    # the band's slowest rate is the longest run, its fastest the shortest
    assert run["days"]["high"] == pytest.approx(WHOLE / (band["tokens_low"] * 16) / DAY)
    assert run["days"]["low"] == pytest.approx(WHOLE / (band["tokens_high"] * 16) / DAY)
    assert run["cost"]["value"] == pytest.approx(run["days"]["value"] * DAY / HOUR * 16 * 5)
    assert run["tokens_per_dollar"]["value"] == pytest.approx(rate * HOUR / 5)
    assert main(["explain", str(path), "--point", "tp=2", *where, "--json"]) == 0
    told = json.loads(capsys.readouterr().out)["run"]
    for name in ("days", "cost", "tokens_per_dollar"):
        assert told[name] == pytest.approx(run[name])
    days = run["days"]
    cell = f"{figure(days['value'])} ({figure(days['low'])}–{figure(days['high'])})"
    assert main(["project", str(path), "--point", "tp=2", *where]) == 0
    out = capsys.readouterr().out
    assert "days to train" in out and cell in out
    assert main(["explain", str(path), "--point", "tp=2", *where]) == 0
    out = capsys.readouterr().out
    assert "days to train 1T tokens" in out and "cost at 5 a GPU-hour" in out and cell in out
    # a GPU without a price: the run's days, and no cost
    path.write_text(space_text("  gpu = b200_calibrated\n  train_tokens = 1T\n  minimize time_to_train\n"))
    assert main(["project", str(path), "--point", "tp=2", "--json"]) == 0
    unpriced = json.loads(capsys.readouterr().out)["results"][0]["run"]
    assert unpriced["days"] is not None and unpriced["cost"] is None and unpriced["tokens_per_dollar"] is None
    assert main(["project", str(path), "--point", "tp=2"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if "days to train" in line)
    assert "cost" not in header
    # a point that does not fit has no run (its figures say what it would cost)
    path.write_text(space_text(PRICED + "  minimize cost\n"))
    assert main(["explain", str(path), "--point", "tp=1,pp=1,mbs=2", "--cluster", "gpu=h100_sxm_calibrated,nodes=1",
                 "--json"]) == 1
    told = json.loads(capsys.readouterr().out)
    assert not told["fits"] and told["run"]["days"] is None and told["run"]["cost"] is None
    # the table breaks a long label between its knobs (a space after each comma), which reads back as a point
    assert main(["project", str(path), *where, "--point", "tp=2, pp=1, mbs=1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["label"] == "tp=2"
    # without train_tokens a rate says nothing of a run: no such column, and null in the JSON
    path.write_text(space_text("  gpu = b200_calibrated { price_per_hour = 5 }\n"))
    assert main(["project", str(path), "--point", "tp=2"]) == 0
    assert "days to train" not in capsys.readouterr().out
    assert main(["project", str(path), "--point", "tp=2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["run"] is None


def test_a_run_objective_on_one_cluster_plans_that_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text("  gpu = b200_calibrated { price_per_hour = 5 }\n  train_tokens = 1T\n  minimize cost\n"))
    assert main(["plan", str(path), "--out", str(tmp_path / "p"), "--no-emit", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    (only,) = plan["capacity"]["clusters"]
    assert plan["cluster"] == only["label"] == "h100_x8" and only["gpu"] == "b200_calibrated" and only["front"]


def test_a_cluster_where_nothing_fits_is_a_row_not_the_end(tmp_path: Path) -> None:
    space = load(tmp_path, "  gpu = h100_sxm_calibrated { hbm_capacity = 22 GiB; price_per_hour = 2 }\n"
                           "  nodes : 1 | 4\n  train_tokens = 1T\n  minimize cost\n  strategy exhaustive\n")
    cap = plan_capacity(space, None, limits_of(space), None)  # type: ignore[arg-type]
    small, big = cap.clusters
    assert "fits in memory" in small.excluded and small.days is None
    assert not big.excluded and big.days is not None and cap.chosen == big.label


def test_a_requirement_met_only_by_the_projection_is_said(tmp_path: Path) -> None:
    space = load(tmp_path, PRICED + "  minimize cost\n")
    cap = plan_capacity(space, None, limits_of(space), None)  # type: ignore[arg-type]
    c = cap.clusters[0]
    assert c.days is not None
    between = (c.days.value + c.days.high) / 2  # the projection meets it, the band's slow end does not
    space = load(tmp_path, PRICED + f"  require time_to_train <= {between:.6f}\n  minimize cost\n")
    c2 = plan_capacity(space, None, limits_of(space), None).clusters[0]  # type: ignore[arg-type]
    assert not c2.excluded and c2.marginal.startswith("the band's far end fails: `require time_to_train <=")
    # and the other way: the projection fails it, the band's fast end meets it
    between = (c.days.value + c.days.low) / 2
    space = load(tmp_path, PRICED + f"  require time_to_train <= {between:.6f}\n  minimize cost\n")
    c3 = plan_capacity(space, None, limits_of(space), None).clusters[0]  # type: ignore[arg-type]
    assert c3.excluded.startswith("fails: `require time_to_train <=") and c3.marginal == "the band's near end passes"


def test_counts_with_a_suffix_read_in_a_run_requirement(tmp_path: Path) -> None:
    space = load(tmp_path, PRICED + "  require cost <= 5M\n  minimize cost\n")
    (cons,) = space.capacity.constraints  # type: ignore[attr-defined]
    assert "5000000" in str(cons.expr)


def test_the_report_of_a_cluster_search_is_rebuilt_on_its_cluster(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  minimize cost\n"))
    out = tmp_path / "plan"
    assert main(["plan", str(path), "--out", str(out), "--no-emit", "--json"]) == 0
    chosen = json.loads(capsys.readouterr().out)["cluster"]
    trace = out / "trace.jsonl"
    lines = trace.read_text().splitlines()
    assert json.loads(lines[0])["cluster"] == chosen  # the trace says which cluster it searched
    gpu = chosen.split(",")[0].removeprefix("gpu=")
    capsys.readouterr()
    assert main(["report", str(trace), "--space", str(path), "--out", str(tmp_path / "r.html")]) == 0
    assert f"× {gpu}" in (tmp_path / "r.html").read_text()
    assert "the comparison of the space's clusters" in capsys.readouterr().err  # not in the trace, and said
    # a trace that does not say (an older one) needs --cluster
    start = json.loads(lines[0])
    del start["cluster"]
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    capsys.readouterr()
    assert main(["report", str(old), "--space", str(path), "--out", str(tmp_path / "o.html")]) == 1
    assert "P2017" in capsys.readouterr().err
    assert main(["report", str(old), "--space", str(path), "--out", str(tmp_path / "o.html"), "--cluster", chosen]) == 0


def test_a_gpu_axis_over_a_cluster_that_states_its_nics_says_so(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # a new user's trial: H100 planned on an A100 cluster's 200 Gb/s links, said nowhere
    path = tmp_path / "cap.prx"
    path.write_text("import models.llama3 (llama3_1_8b)\nimport clusters.nvidia (a100_x8)\n"
                    "import hardware.nvidia (a100, h100)\n"
                    "space cap on a100_x8 {\n  model = llama3_1_8b\n  seq_len = 4096\n  gbs = 512\n"
                    "  gpu : a100 | h100\n  nodes : 1 | 2\n  tp : 1 | 2\n  maximize tokens_per_gpu\n"
                    "  budget 4 evals\n}\n")
    assert main(["plan", str(path), "--no-emit", "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "planned on the cluster's own NICs, 200 Gb/s a GPU, where `h100` has another on its sheet" in err
    # the NICs of every GPU agree with the cluster's: nothing to say
    path.write_text(path.read_text().replace("a100_x8", "h100_x8").replace("gpu : a100 | h100",
                                                                           "gpu : h100 | b200"))
    path.write_text(path.read_text().replace("import hardware.nvidia (a100, h100)", "import hardware.nvidia (h100, b200)"))
    assert main(["plan", str(path), "--no-emit", "--out", str(tmp_path / "b")]) == 0
    assert "own NICs" not in capsys.readouterr().err
    # a cluster that counts its NICs but not their bandwidth plans each GPU on its sheet's (a reviewer's finding)
    from primus_lang.commands._capacity import network_note
    from primus_lang.lower import loads_program

    text = path.read_text().replace("import clusters.nvidia (h100_x8)\n", "").replace(
        "space cap on h100_x8", "cluster c1 { gpu = h100; nodes = 1; gpus_per_node = 8; nics_per_node = 8 }\n"
        "space cap on c1").replace("gpu : h100 | b200", "gpu : h100 | b200 | a100").replace(
        "(h100, b200)", "(h100, b200, a100)")
    assert network_note(loads_program(text, "c.prx").spaces[0]) == ""


BUDGETED = """import models.qwen3 (qwen3_32b)
import clusters.nvidia (h100_x8)
import hardware.calibrated (gb200_calibrated)

space q32 on h100_x8 {
  model = qwen3_32b
  seq_len = 4096
  gbs = 1024
  gpu : gb200_calibrated { price_per_hour = 5.0 }
  nodes : 16
  train_tokens = 10T
  precision : bf16 | fp8
  tp : 1 | 2 | 4 | 8
  pp : 1 | 2 | 4
  mbs : 1 | 2
  recompute : none | selective | full(layers: 1)
  cp : 1 | 2
  vpp : 1 | 2
  schedule : 1f1b | interleaved
  sharding = dist_opt
  fits memory headroom 5%
  minimize cost
  budget 30 evals
  strategy exhaustive
}
"""


def test_the_launch_is_for_the_recipe_the_clusters_row_found(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # the row's search proves its best in 20 evaluations without judging ties; judging them spends the 30 before
    # reaching it, so the plan searches as the row did (said) rather than launch a slower recipe than the table's
    # (on GB200: the 7 Dec refit's B200 profile let the tie search reach it first, so the case no longer arose there)
    path = tmp_path / "space.prx"
    path.write_text(BUDGETED)
    out = tmp_path / "plan"
    assert main(["plan", str(path), "--out", str(out), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    [row] = plan["capacity"]["clusters"]
    assert row["proven"] and plan["result"]["optimum_proven"]
    assert plan["ranked"][0]["label"] == row["recipe"]
    assert f"candidate {row['recipe']}." in (out / "launch.sbatch").read_text()
    assert any("searched as the cluster comparison searched" in n for n in plan["result"]["notes"])


def test_a_named_cluster_that_fails_a_requirement_is_launched_and_said(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  require gpus <= 16 \"our quota\"\n  minimize cost\n"))
    assert main(["plan", str(path), "--out", str(tmp_path / "p"), "--cluster", "gpu=b200_calibrated,nodes=4",
                 "--json"]) == 0
    captured = capsys.readouterr()
    assert "warning[W8015]: --cluster gpu=b200_calibrated,nodes=4 fails: our quota; the run's objective chooses" \
        in captured.err
    cap = json.loads(captured.out)["capacity"]
    assert cap["chosen"] == "gpu=b200_calibrated,nodes=4" and cap["named"] and cap["best"] not in ("", cap["chosen"])
    assert "NNODES=4\n" in (tmp_path / "p" / "launch.sbatch").read_text()
    # the table marks the cluster launched and the objective's choice
    assert main(["plan", str(path), "--out", str(tmp_path / "q"), "--cluster", "nodes=4,gpu=b200_calibrated"]) == 0
    table = capsys.readouterr().out
    assert "chosen (--cluster)" in table and "the objective's choice" in table
    report = (tmp_path / "q" / "report.html").read_text()
    assert "the objective&#x27;s choice (not launched)" in report or "the objective's choice (not launched)" in report


def test_emit_and_explain_on_a_cluster_that_fails_a_requirement_say_so(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's trial: `emit --cluster` wrote 64 nodes' launch past `require gpus <= 384`, and `explain`
    gave its days and cost, neither saying what `plan` says of that cluster."""
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED + "  require gpus <= 16 \"our quota\"\n  minimize cost\n"))
    capsys.readouterr()
    assert main(["emit", str(path), "--cluster", "gpu=b200_calibrated,nodes=4", "--point", "tp=1",
                 "--out", str(tmp_path / "e")]) == 0
    assert "warning[W8015]: the launch's run on --cluster gpu=b200_calibrated,nodes=4 fails: our quota" \
        in capsys.readouterr().err
    assert main(["explain", str(path), "--cluster", "gpu=b200_calibrated,nodes=4", "--point", "tp=1"]) == 0
    assert re.search(r"requirements on the run\s+fails: our quota", capsys.readouterr().out)
    # a cluster that meets them is launched without a word
    assert main(["emit", str(path), "--cluster", "gpu=b200_calibrated,nodes=2", "--point", "tp=1",
                 "--out", str(tmp_path / "f")]) == 0
    assert "W8015" not in capsys.readouterr().err


def test_a_named_cluster_without_a_legal_point_is_named_in_the_error(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED.replace("nodes : 1 | 2 | 4", "nodes : 3 | 4") + "  minimize cost\n"))
    assert main(["plan", str(path), "--out", str(tmp_path / "p"), "--cluster", "gpu=b200_calibrated,nodes=3"]) == 1
    err = capsys.readouterr().err
    assert "W8015" in err and "has no legal point on the cluster `gpu=b200_calibrated,nodes=3`" in err
    assert "name another cluster with --cluster" in err


def test_two_objectives_are_one_and_a_requirement(tmp_path: Path) -> None:
    with pytest.raises(CompileError) as err:
        load(tmp_path, PRICED + "  minimize cost\n  minimize time_to_train\n")
    (d,) = err.value.diagnostics
    assert d.code == N.DUPLICATE_FIELD and "`require time_to_train <= 30 days`" in str(d.help)


def test_the_reports_cluster_table_marks_the_wider_bands_as_the_terminal_does() -> None:
    """The re-trial: the report's table had the notes and ☆ but not the terminal's † and its line."""
    from primus_lang.report.clusters import section
    from primus_lang.report.view import ClusterPoint

    def point(label: str, beyond: tuple[str, ...]) -> ClusterPoint:
        return ClusterPoint(label, 64, "tp=2", 10.0, 8.0, 12.0, 1e5, 8e4, 1.2e5, True, False, beyond=beyond)

    page = section([point("gpu=a,nodes=8", ("2,048 GPUs beyond the 512 of its runs",)),
                    point("gpu=a,nodes=16", ("4,096 GPUs beyond the 512 of its runs",)), point("gpu=b,nodes=8", ())])
    assert page.count(" †</td>") == 2
    assert "†: beyond the runs its GPU profile was fitted on" in page and page.count("GPUs beyond the 512") == 1
    assert "searches stopped" not in page
    unproven = attrs.evolve(point("gpu=b,nodes=16", ()), proven=False)
    assert "1 of 2 clusters&#x27; searches stopped before proving their best" in section(
        [point("gpu=b,nodes=8", ()), unproven])


def test_a_band_that_leaves_its_figure_out_is_said() -> None:
    """A spec-sheet GPU's band lies wholly to one side of its projection (`299 (343–609)` days): the table
    showed it without a word."""
    from primus_lang.search import outside_line

    assert outside_line([("gpu=a", 299.0, 343.0, 609.0), ("gpu=b", 71.1, 58.3, 89.1)]).startswith(
        "gpu=a: the band leaves the figure out")
    assert outside_line([("gpu=b", 71.1, 58.3, 89.1)]) == ""


@pytest.mark.parametrize(("fixed", "gpus", "nics", "per_gpu_gbps"), [
    ("", 4, 4, 400), ("", 2, 2, 400),                          # h100_x8: 8 NICs of 400 Gb/s for 8 GPUs
    ("  nics_per_node = 4\n", 2, 4, 800),                      # a space's own NIC count holds on every node
])
def test_a_node_of_another_gpu_count_keeps_each_gpus_nic_bandwidth(tmp_path: Path, fixed: str, gpus: int,
                                                                   nics: int, per_gpu_gbps: int) -> None:
    """A new user's trial: 16 nodes of 4 GPUs projected faster than 8 of 8 on one `gpus_per_node` axis,
    since the cluster's 8 NICs stayed on the 4-GPU node, twice the scale-out bandwidth a GPU."""
    space = load(tmp_path, fixed + f"  gpus_per_node : 8 | {gpus}\n")
    by_gpus = {sub.cluster.gpus_per_node: sub.cluster for _label, sub in cluster_points(space)}  # type: ignore[arg-type]
    assert by_gpus[gpus].nics_per_node == nics
    assert by_gpus[gpus].nic_bandwidth_per_gpu == pytest.approx(per_gpu_gbps * 1e9 / 8)
    assert by_gpus[8].nic_bandwidth_per_gpu == pytest.approx((400 if not fixed else 200) * 1e9 / 8)
    # a space's own `gpus_per_node = N` reshapes its one cluster alike
    assert load(tmp_path, fixed + f"  gpus_per_node = {gpus}\n").cluster.nics_per_node == nics  # type: ignore[attr-defined]
    # whichever value the axis lists first (the reviewer's catch: the first point was reshaped twice)
    again = load(tmp_path, fixed + f"  gpus_per_node : {gpus} | 8\n")
    assert {sub.cluster.gpus_per_node: sub.cluster.nics_per_node for _l, sub in cluster_points(again)} == \
        {g: c.nics_per_node for g, c in by_gpus.items()}  # type: ignore[arg-type]


def test_a_node_whose_nics_do_not_divide_keeps_each_gpus_share_on_every_point(tmp_path: Path) -> None:
    """4 NICs of 400 Gb/s for 8 GPUs, on a node of 3: one NIC a GPU at 200 Gb/s, whichever point comes first
    and whatever NIC bandwidth another axis gives (a reviewer's case read 400 and 800)."""
    head = "  gpus_per_node : 3 | 8\n  nic_bandwidth : 400 Gbps | 800 Gbps\n"
    text = space_text(head).replace("import clusters.nvidia (h100_x8)",
                                    "import clusters.nvidia (h100_x8)\ncluster half = h100_x8 { nic = 4 x 400 Gbps }")
    path = tmp_path / "space.prx"
    path.write_text(text.replace("space s on h100_x8", "space s on half"))
    for order in (head, "  gpus_per_node : 8 | 3\n  nic_bandwidth : 800 Gbps | 400 Gbps\n"):
        path.write_text(path.read_text().replace(head, order) if order != head else path.read_text())
        got = {(sub.cluster.gpus_per_node, "100 GB/s" in label): sub.cluster.nic_bandwidth_per_gpu * 8 / 1e9
               for label, sub in cluster_points(load_space(path))}  # 800 Gbps is 100 GB/s
        assert got == {(3, False): pytest.approx(200), (3, True): pytest.approx(400), (8, False): pytest.approx(200),
                       (8, True): pytest.approx(400)}


def test_a_cluster_set_aside_before_its_search_is_not_named_as_meeting_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's trial: P8014 named a cluster `gpus <= N` had set aside, never searched, as the
    smallest of those meeting the time requirement; it had no run to meet it with."""
    path = priced(tmp_path, "  require gpus <= 8\n  require time_to_train <= 0.001\n  minimize cost\n")
    assert main(["plan", str(path), "--out", str(tmp_path / "p")]) == 1
    err = capsys.readouterr().err
    assert "P8014" in err and "the fastest cluster of those meeting the other requirements" in err
    assert "the smallest cluster" not in err  # every cluster meeting the time was never searched


def test_a_requirement_judged_on_another_objectives_best_says_so(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = priced(tmp_path, "  require time_to_train <= 0.001\n  minimize memory_peak\n")
    assert main(["plan", str(path), "--out", str(tmp_path / "p")]) == 1
    assert "best recipe by `minimize memory_peak`, not of its fastest" in capsys.readouterr().err


@pytest.mark.parametrize(("days", "written"), [
    (318.2, "318 (255–382)"), (1.5, "1.5 (1.2–1.8)"), (0.5, "12 h (9.6–14.4 h)"),
    (0.00221, "3.18 min (2.55–3.82 min)"), (0.000587, "50.7 s (40.6–60.9 s)"),
])
def test_a_run_of_under_a_day_is_said_in_hours_minutes_or_seconds(days: float, written: str) -> None:
    """A new user's 5M-token run read `0.000587 (0.000448–0.000677)` days."""
    from primus_lang.search import days_text

    assert days_text(days, days * 0.8, days * 1.2) == written


def test_check_refuses_a_space_whose_every_cluster_a_requirement_sets_aside(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's trial: `check` said ok of a space whose every cluster `gpus <= 4` set aside; `plan`
    then found nothing to search (P8014)."""
    path = priced(tmp_path, "  require gpus <= 4\n  minimize cost\n")
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "P8014" in err and "every cluster fails `require gpus <= 4`: the smallest has 8 GPUs" in err
    assert "fewer nodes or fewer GPUs a node" in err


def test_a_count_in_a_requirement_is_quoted_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = priced(tmp_path, "  require cost <= 1K\n  minimize cost\n")
    assert main(["plan", str(path), "--out", str(tmp_path / "p")]) == 1
    table = capsys.readouterr().out  # each cluster's note quotes the requirement it fails
    assert "fails: `require cost <= 1000`" in table and "1000.0" not in table


@pytest.mark.parametrize(("requires", "says"), [
    ("  require gpus >= 1024\n", "every cluster fails `require gpus >= 1024`: the largest has 32 GPUs"),
    ("  require gpus == 12\n", "every cluster fails `require gpus == 12`: its clusters have 8 to 32 GPUs"),
    ("  require gpus >= 16\n  require gpus <= 8\n", "no cluster meets `require gpus >= 16` and `require gpus <= 8` together"),
])
def test_check_names_the_requirement_and_the_nearest_cluster_as_they_are(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], requires: str, says: str) -> None:
    """The reviewer's cases: a lower bound's nearest cluster is the largest, reached with more nodes; two
    requirements that each some cluster meets are not one every cluster fails."""
    path = priced(tmp_path, requires + "  minimize cost\n")
    for command in ("check", "plan"):  # plan, with no cluster to search, says what check says
        assert main([command, str(path), *(["--out", str(tmp_path / "p")] if command == "plan" else [])]) == 1
        err = capsys.readouterr().err
        assert says in err
        assert ("more nodes or more GPUs a node" in err) == (">= 1024" in requires)


def test_a_gpu_without_a_price_puts_every_cluster_on_the_gpu_front(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's trial: one GPU without a price, and ★ compared the priced clusters' cost with the
    others' GPU count."""
    path = tmp_path / "space.prx"
    path.write_text(space_text(PRICED.replace("b200_calibrated { price_per_hour = 5 }", "b200_calibrated")
                               + "  minimize time_to_train\n"))
    assert main(["plan", str(path), "--out", str(tmp_path / "p"), "--no-emit", "--json"]) == 0
    clusters = json.loads(capsys.readouterr().out)["capacity"]["clusters"]
    assert [c["front"] for c in clusters] == [c["front_gpus"] for c in clusters]
    assert main(["plan", str(path), "--out", str(tmp_path / "q"), "--no-emit"]) == 0
    assert "★ is on GPUs, as ☆ is: `b200_calibrated` has no `price_per_hour`" in capsys.readouterr().out


def test_diff_gives_each_points_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A new user's trial: `diff` on a space with `train_tokens` gave no days or cost; `explain` did."""
    path = priced(tmp_path, "  minimize cost\n")
    args = ["--cluster", "gpu=b200_calibrated,nodes=2", "tp=1", "tp=2"]
    assert main(["diff", str(path), *args, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    for side, point in (("a", "tp=1"), ("b", "tp=2")):
        assert main(["explain", str(path), "--cluster", "gpu=b200_calibrated,nodes=2", "--point", point, "--json"]) == 0
        assert got[side]["run"] == json.loads(capsys.readouterr().out)["run"] and got[side]["run"]["days"]
    assert main(["diff", str(path), *args]) == 0
    out = capsys.readouterr().out
    assert "A: days to train 1T tokens" in out and "B: cost at 5 a GPU-hour" in out


def test_equal_days_go_to_the_cheaper_cluster(tmp_path: Path) -> None:
    """A trial: spot and reserved prices of one GPU tie on days; the dearer one had won on its label."""
    path = tmp_path / "space.prx"
    path.write_text(space_text("""  gpu : h100_reserved | h100_spot
  nodes : 1 | 2
  train_tokens = 1T
  minimize time_to_train
  strategy exhaustive
""").replace("space s on", "gpu h100_reserved = h100_sxm_calibrated { price_per_hour = 2.5 }\n"
                           "gpu h100_spot = h100_sxm_calibrated { price_per_hour = 1.2 }\n\nspace s on"))
    space = load_space(path)
    cap = plan_capacity(space, None, limits_of(space), None)  # type: ignore[arg-type]
    assert cap.chosen == "gpu=h100_spot,nodes=2"
    assert cap.tie == "ties with gpu=h100_reserved,nodes=2 on the objective, taken for its lower cost"
    spot = cap.cluster(cap.chosen)
    assert spot is not None and spot.front


def test_a_cluster_within_the_paired_error_of_the_chosen_is_marked_with_what_it_saves(tmp_path: Path) -> None:
    """A trial: 128 nodes were chosen for a run 5% shorter than 64 nodes' at 1.9 times the cost, inside the
    profile's paired error, and nothing said so."""
    from primus_lang.search.capacity import ClusterPlan, Spread, _near

    space = load(tmp_path, PRICED + "  minimize time_to_train\n")
    prov = {label: sub.cluster.gpu.provenance for label, sub in cluster_points(space)}
    paired = prov["gpu=h100_sxm_calibrated,nodes=1"].paired

    def run(label: str, gpu: str, days: float, cost: float) -> ClusterPlan:
        return ClusterPlan(label, gpu, 1, 8, 2.0, days=Spread(days, days, days), cost=Spread(cost, cost, cost))

    chosen = run("gpu=h100_sxm_calibrated,nodes=4", "h100_sxm_calibrated", 10.0, 200.0)
    inside = run("gpu=h100_sxm_calibrated,nodes=2", "h100_sxm_calibrated", 10.0 * (1 + paired * 0.9), 106.0)
    outside = run("gpu=h100_sxm_calibrated,nodes=1", "h100_sxm_calibrated", 10.0 * (1 + paired * 1.1), 55.0)
    other = run("gpu=b200_calibrated,nodes=1", "b200_calibrated", 10.01, 50.0)  # another profile errs on its own
    near = _near(space, [chosen, inside, outside, other], prov)
    assert near == {inside.label: f"≈ the chosen, within h100_sxm_calibrated's ±{paired:.1%} paired error, at "
                                  "0.53x its cost"}
    cost_first = load(tmp_path, PRICED + "  minimize cost\n")
    assert _near(cost_first, [attrs.evolve(chosen, cost=Spread(100.0, 100.0, 100.0)),
                              attrs.evolve(inside, cost=Spread(105.0, 105.0, 105.0), days=Spread(5.0, 5.0, 5.0))],
                 prov) == {
        inside.label: f"≈ the chosen, within h100_sxm_calibrated's ±{paired:.1%} paired error, at 0.50x its days"}


def test_a_row_names_every_requirement_it_fails(tmp_path: Path) -> None:
    space = load(tmp_path, PRICED + '  require time_to_train <= 0.001 days "quick"\n  require cost <= 1 "cheap"\n'
                 "  minimize cost\n")
    cap = plan_capacity(space, None, limits_of(space), None)  # type: ignore[arg-type]
    assert all(c.excluded == "fails: quick and cheap" for c in cap.clusters)


def test_a_time_limit_beside_a_gpu_cap_is_not_told_to_add_nodes(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = priced(tmp_path, "  require time_to_train <= 0.001 days\n  require gpus <= 16\n  minimize cost\n")
    assert main(["plan", str(path), "--out", str(tmp_path / "p"), "--no-emit"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "P8014" in err and "a faster GPU, or more nodes up to the GPU cap" in err
    assert "more nodes or a faster GPU" not in err


def test_a_gpu_that_comes_in_trays_is_planned_on_its_trays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trial: GB200 on the axis of an 8-GPU cluster had been planned (and launched) as 8-GPU nodes."""
    path = tmp_path / "space.prx"
    path.write_text(space_text("  gpu : b200_calibrated | gb200_calibrated\n  nodes = 4\n").replace(
        "b200_calibrated)\n", "b200_calibrated, gb200_calibrated)\n", 1))
    space = load_space(path)
    shapes = {sub.cluster.gpu.name: (sub.cluster.gpus_per_node, sub.cluster.world) for _l, sub in cluster_points(space)}
    assert shapes == {"b200_calibrated": (8, 32), "gb200_calibrated": (4, 16)}
    assert main(["plan", str(path), "--out", str(tmp_path / "p"), "--no-emit"]) == 0
    assert ("`gb200_calibrated` is planned on nodes of 4 GPUs (its node shape, `node_gpus`), not on the cluster's "
            "nodes of 8") in " ".join(capsys.readouterr().err.split())
    # and the other way: on GB200's trays, B200 is planned on its boards of 8 (a re-trial)
    nvl = tmp_path / "nvl.prx"
    nvl.write_text(path.read_text().replace("(h100_x8)", "(gb200_nvl72)").replace("on h100_x8", "on gb200_nvl72"))
    shapes = {sub.cluster.gpu.name: sub.cluster.gpus_per_node for _l, sub in cluster_points(load_space(nvl))}
    assert shapes == {"b200_calibrated": 8, "gb200_calibrated": 4}
    # a space on one cluster that sets the GPU is planned on its shape too, and check and plan say so (a review)
    one = tmp_path / "one.prx"
    one.write_text(path.read_text().replace("  gpu : b200_calibrated | gb200_calibrated\n", "  gpu = gb200_calibrated\n"))
    assert load_space(one).cluster.world == 16
    capsys.readouterr()
    assert main(["check", str(one)]) == 0
    assert "`gb200_calibrated` is planned on nodes of 4 GPUs" in " ".join(capsys.readouterr().out.split())
    assert main(["plan", str(one), "--out", str(tmp_path / "q"), "--no-emit"]) == 0
    assert "`gb200_calibrated` is planned on nodes of 4 GPUs" in " ".join(capsys.readouterr().err.split())
    # a node shape the space writes is the space's
    path.write_text(path.read_text().replace("  nodes = 4\n", "  nodes = 4\n  gpus_per_node = 8\n"))
    assert {sub.cluster.gpus_per_node for _l, sub in cluster_points(load_space(path))} == {8}


def test_the_report_says_what_the_clusters_were_compared_by(tmp_path: Path) -> None:
    path = priced(tmp_path, "  maximize tokens_per_dollar\n")
    assert main(["plan", str(path), "--out", str(tmp_path / "p"), "--no-emit"]) == 0
    page = (tmp_path / "p" / "report.html").read_text()
    assert "<b>clusters compared by</b> maximize tokens_per_dollar" in page
    assert "<b>train tokens</b> 1T" in page
    assert "<b>price per GPU-hour</b> h100_sxm_calibrated 2, b200_calibrated 5" in page
    assert "<b>recipe objective</b> maximize tokens_per_gpu" in page
    assert "<th>tokens/s/GPU</th>" in page and "<th>tokens per unit of price</th>" in page


def test_a_named_cluster_in_another_case_is_suggested_as_written(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = priced(tmp_path, "  minimize cost\n")
    assert main(["plan", str(path), "--out", str(tmp_path / "p"), "--cluster", "gpu=B200_calibrated,nodes=4"]) == 1
    assert "did you mean `gpu=b200_calibrated,nodes=4`?" in capsys.readouterr().err
    assert main(["plan", str(path), "--out", str(tmp_path / "p"), "--cluster", "GPU=b200,Nodes=4"]) == 1
    assert "did you mean `gpu=b200_calibrated,nodes=4`?" in capsys.readouterr().err


def test_a_cost_objective_without_a_time_limit_says_how_long_its_run_takes(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A trial: `minimize cost` alone chose a 1,923-day run without a word."""
    space = load(tmp_path, PRICED + "  minimize cost\n")
    cap = plan_capacity(space, None, limits_of(space), None)  # type: ignore[arg-type]
    chosen = cap.cluster(cap.chosen)
    assert chosen is not None and chosen.days is not None
    assert cap.unbounded.startswith("no `require time_to_train` bounds the run: the chosen one takes ")
    assert "the fastest (gpu=b200_calibrated,nodes=4)" in cap.unbounded
    bounded = load(tmp_path, PRICED + "  minimize cost\n  require time_to_train <= 10000 days\n")
    assert plan_capacity(bounded, None, limits_of(bounded), None).unbounded == ""  # type: ignore[arg-type]
    fastest = load(tmp_path, PRICED + "  minimize time_to_train\n")
    assert plan_capacity(fastest, None, limits_of(fastest), None).unbounded == ""  # type: ignore[arg-type]
    assert main(["plan", str(priced(tmp_path, "  minimize cost\n")), "--out", str(tmp_path / "p"), "--no-emit"]) == 0
    assert "note: no `require time_to_train` bounds the run" in capsys.readouterr().out


def test_a_choice_resting_on_an_unfitted_profile_is_said(tmp_path: Path) -> None:
    """A new user's trial: MI355X (pooled from its vendor's GPUs) chosen over H100 and H200 by cost, its band
    overlapping theirs, without a word that the choice of GPU rested on the least measured profile."""
    from primus_lang.search.capacity import _unmeasured

    space = load(tmp_path, PRICED + "  minimize cost\n")
    spread = lambda v: Spread(v, 0.8 * v, 1.2 * v)  # noqa: E731
    chosen = ClusterPlan("gpu=a,nodes=1", "a", 1, 8, 1.0, cost=spread(100.0), days=spread(1.0))
    near = ClusterPlan("gpu=b,nodes=1", "b", 1, 8, 1.0, cost=spread(130.0), days=spread(1.0))
    far = ClusterPlan("gpu=c,nodes=1", "c", 1, 8, 1.0, cost=spread(200.0), days=spread(1.0))
    fitted, pooled = Provenance(basis="fitted"), Provenance(basis="pooled")
    said = _unmeasured(space, [chosen, near, far], {"a": pooled, "b": fitted, "c": fitted})
    assert "the choice rests on `a`, whose profile has no runs of its own" in said
    assert "gpu=b,nodes=1: 130" in said and "gpu=c" not in said
    # a profile fitted on runs of its own, or bands that do not overlap: nothing to say
    assert _unmeasured(space, [chosen, near], {"a": fitted, "b": fitted}) == ""
    assert _unmeasured(space, [chosen, far], {"a": pooled, "c": fitted}) == ""
