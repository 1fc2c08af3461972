"""explain and diff on real memory accounts and projections of an example space."""

from __future__ import annotations

import json
import math
from pathlib import Path

import attrs
import pytest
from rich.console import Console

from primus_lang.ir import Candidate, Recompute, Space
from primus_lang.lower import load_space
from primus_lang.report.compare import diff
from primus_lang.report.evaluate import evaluate
from primus_lang.report.terminal import diff_view, explain_view
from primus_lang.resources import data_dir

EXAMPLE = data_dir("examples") / "llama3_1_70b_mi325x.prx"


@pytest.fixture(scope="module")
def space() -> Space:
    return load_space(Path(EXAMPLE))


def cand(space: Space, **knobs: object) -> Candidate:
    fixed = dict(space.fixed)
    gbs, seq = fixed["gbs"], fixed["seq_len"]
    assert isinstance(gbs, int) and isinstance(seq, int)
    return Candidate(gbs=gbs, seq_len=seq).replace(**knobs)


def text(renderable: object) -> str:
    console = Console(width=160, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_explain_shows_every_term_and_the_breakdown(space: Space) -> None:
    ev = evaluate(space, cand(space, tp=4, pp=4, precision="fp8"))
    out = text(explain_view(ev.view, int(ev.account.capacity), ev.limit))
    for rank in ev.account.ranks:
        assert rank.name in out
    for term in ev.account.peak.terms:
        if len(term.name) <= 30:  # longer names fold inside their column
            assert term.name in out
        assert f"{term.bytes:,}" in out
    for kind, secs in ev.view.breakdown:
        assert secs >= 0
        assert (kind in out) == (secs > 0)  # parts that take no time are left out
    assert ev.view.memory_peak == ev.account.peak.total
    assert ev.limit == ev.account.spare(0.05) + ev.account.peak.total
    assert "tokens/s/GPU" in out


def test_diff_names_the_parts_that_explain_the_gap(space: Space) -> None:
    a = evaluate(space, cand(space, tp=8, pp=1)).view
    b = evaluate(space, cand(space, tp=4, pp=4, recompute=Recompute("full", 10))).view
    d = diff(a, b)
    assert {k for k, _, _ in d.knobs} >= {"tp", "pp", "recompute"}
    gap = b.step_time - a.step_time
    # The breakdown parts add up to the step on the critical stage, so their changes add up to the gap.
    assert math.isclose(sum(c.delta for c in d.time), gap, rel_tol=0.05, abs_tol=1e-6)
    faster = "A" if gap > 0 else "B"
    assert d.summary[0].startswith(f"{faster} is ")
    largest = max(d.time, key=lambda c: abs(c.delta))
    assert largest.name in d.summary[1]
    out = text(diff_view(d))
    assert "knobs that differ" in out and largest.name in out


def test_diff_of_two_batch_sizes_compares_throughput(space: Space) -> None:
    """A bigger batch takes a longer step and trains more tokens a second: the verdict said the smaller one
    was 42% faster by its step time (a new user's trial)."""
    small = evaluate(space, cand(space, tp=4, pp=4)).view
    base = cand(space, tp=4, pp=4)
    big = evaluate(space, base.replace(gbs=2 * base.gbs)).view
    assert big.step_time > small.step_time and big.tokens_per_gpu > small.tokens_per_gpu
    d = diff(small, big)
    assert d.summary[0].startswith("B trains ") and "more tokens/s/GPU than A" in d.summary[0]
    assert "do not say which is faster" in d.summary[0]


def test_diff_says_first_that_a_point_cannot_run(space: Space) -> None:
    """A new user read "A is 6.3% faster than B" and found A's overflow further down: a point that does
    not fit is said first, and the speed verdict follows it."""
    fits = evaluate(space, cand(space, tp=8, pp=1)).view
    over = attrs.evolve(fits, fits=False)
    d = diff(over, fits)
    assert d.summary[0].startswith("A does not fit in memory, so it cannot run")
    assert d.summary[1].startswith(("A is ", "B is ", "A and B"))
    both = diff(over, over)
    assert both.summary[0].startswith("A and B do not fit in memory, so neither can run")
    assert all("does not fit" not in line for line in diff(fits, fits).summary)


def test_diff_says_when_the_pair_lies_beyond_the_pairs_its_error_was_measured_on(space: Space) -> None:
    """A new user's trial: a pair of points beyond the profile's runs (W6012) was judged "beyond the ±10.4%"
    as if the paired error measured on calibrated pairs held for it."""
    a = evaluate(space, cand(space, tp=8, pp=1)).view
    b = evaluate(space, cand(space, tp=4, pp=4, recompute=Recompute("full", 10))).view
    assert a.basis and "lies beyond" not in diff(a, b).summary[0] and "lie beyond" not in diff(a, b).summary[0]
    far = attrs.evolve(b, beyond=("a moe model, where its runs trained dense models",))
    assert "B lies beyond them, W6012" in diff(a, far).summary[0]
    assert "both lie beyond them" in diff(attrs.evolve(a, beyond=far.beyond), far).summary[0]


def test_diff_of_a_candidate_with_itself_is_quiet(space: Space) -> None:
    a = evaluate(space, cand(space, tp=4, pp=2)).view
    d = diff(a, a)
    assert d.knobs == ()
    assert all(c.delta == 0 for c in d.time + d.memory)
    assert "same step time" in d.summary[0]


def test_explain_and_diff_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.cli import main

    assert main(["explain", str(EXAMPLE), "--point", "tp=4,pp=2", "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one["candidate"]["tp"] == 4 and one["candidate"]["pp"] == 2 and one["label"] == "tp=4,pp=2"
    peak = max(one["memory"], key=lambda r: r["total"])
    assert one["memory_peak"] == peak["total"] == sum(t["bytes"] for t in peak["terms"])
    assert one["fits"] == (one["memory_peak"] <= one["memory_limit"] <= one["memory_capacity"])
    gain = one["precision_gain"]  # the BF16 point set beside its FP8 twin
    assert gain["bf16_tokens_per_gpu"] == pytest.approx(one["projection"]["tokens_per_gpu"], rel=1e-9)
    assert gain["ratio"] == pytest.approx(gain["low_tokens_per_gpu"] / gain["bf16_tokens_per_gpu"])
    assert {p["part"] for p in gain["parts"]} >= {"GEMMs", "quantize kernels", "attention"}
    assert main(["diff", str(EXAMPLE), "--a", "tp=8", "--b", "tp=4,pp=2", "--json"]) == 0
    two = json.loads(capsys.readouterr().out)
    assert ["tp", "8", "4"] in two["knobs"]
    assert two["a"]["projection"]["step_time"] > 0 and two["summary"]
    assert two["a"]["precision_gain"]["precision"].startswith("fp8")
    # tied: the two step times within the profile's paired band, as the verdict in `summary` says
    ratio = two["a"]["projection"]["step_time"] / two["b"]["projection"]["step_time"]
    paired = two["a"]["band"]["paired"]
    assert two["tied"] == (abs(math.log(ratio)) <= math.log1p(paired))
    assert ("a tie" in two["summary"][0]) == two["tied"]
    # FP8 against BF16: the MFU row subtracts figures of two peaks, which a line under it says
    assert main(["diff", str(EXAMPLE), "tp=4,pp=2", "tp=4,pp=2,precision=fp8"]) == 0
    assert "of each candidate's own precision's dense peak" in capsys.readouterr().out.replace("\n", " ")
    assert main(["diff", str(EXAMPLE), "tp=8"]) == 1
    assert "P8902" in capsys.readouterr().err
    assert main(["explain", str(EXAMPLE), "--point", "tp=4,pp=2"]) == 0
    out = capsys.readouterr().out
    assert "the fullest rank class" in out and "against BF16, same recipe" in out and "quantize kernels" in out


def test_an_illegal_point_is_explained_with_its_violations(capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.cli import main

    # explained anyway, but the status says it cannot run
    assert main(["explain", str(EXAMPLE), "--point", "tp=3", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert any(code == "P4003" for code, _ in out["violations"])  # 64 heads are not divisible by TP 3
    assert main(["explain", str(EXAMPLE), "--point", "tp=3"]) == 1
    captured = capsys.readouterr()
    assert "not a legal point" in captured.out and "what it would cost, not a run" in captured.out
    # stderr says why the status is 1, with its code, in the format asked (a trial's script saw only prose)
    assert main(["--error-format", "json", "explain", str(EXAMPLE), "--point", "tp=3"]) == 1
    found = [d for line in capsys.readouterr().err.splitlines() for d in json.loads(line)["diagnostics"]]
    [said] = [d for d in found if d["code"] == "P6003"]
    assert any(n.startswith("P4003") for n in said["notes"])
    # a comparison with a point that cannot start is not a success a script should take as one
    assert main(["diff", str(EXAMPLE), "tp=3", "tp=4,pp=2"]) == 1
    assert "P6003" in capsys.readouterr().err
    assert main(["diff", str(EXAMPLE), "tp=3", "tp=4,pp=2", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["a"]["violations"]
    assert main(["explain", str(EXAMPLE), "--point", "mbs=4,precision=fp8", "--json"]) == 1  # legal, 1.2 TiB
    assert json.loads(capsys.readouterr().out)["fits"] is False
    # the table shows the overflow; stderr says why the status is 1 (a new user saw only the status)
    assert main(["explain", str(EXAMPLE), "--point", "mbs=4,precision=fp8"]) == 1
    assert "P5001" in capsys.readouterr().err


def test_explain_typos_are_user_errors_with_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    from primus_lang.cli import main

    assert main(["explain", "nofile.prx", "--point", "tp=2"]) == 1
    assert "P2015" in capsys.readouterr().err
    assert main(["explain", "value-out-of-rang"]) == 1
    err = capsys.readouterr().err
    assert "P2016" in err and "`value-out-of-range`" in err
    assert main(["explain", "P3009"]) == 0 and "value-out-of-range" in capsys.readouterr().out


def test_a_space_that_varies_its_sequence_names_it_in_every_label(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # a new user's trial: with `seq_len : 32768 | 131072` two points of `project`'s table shared the label
    # `tp=2,cp=8`, and a label is what --point takes back
    from primus_lang.cli import main

    space = tmp_path / "long.prx"
    space.write_text("import models.llama3 (llama3_1_8b)\nimport clusters.nvidia (h100_x8)\n"
                     "space long on h100_x8 {\n  model = llama3_1_8b\n  seq_len : 32768 | 131072\n  gbs = 64\n"
                     "  tp : 1 | 2\n  cp : 4 | 8\n}\n", encoding="utf-8")
    assert main(["project", str(space), "--top", "100", "--json"]) == 0
    labels = [r["label"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert len(labels) == len(set(labels)) and all("seq_len=" in label for label in labels)
    assert main(["explain", str(space), "--point", labels[0], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["candidate"]["seq_len"] == int(labels[0].split("seq_len=")[1].split(",")[0])


def test_the_precision_table_says_when_the_host_decides_the_ratio() -> None:
    """A host-bound recipe's FP8 ratio moves with its launches (the quantize kernels) more than with its GEMMs: the
    title says so, where a trial read `0.83x the tokens/s` as FP8 being slower on the GPU."""
    from primus_lang.project.precision import PrecisionGain
    from primus_lang.report.terminal import precision_table

    def title(host: tuple[float, float]) -> str:
        gain = PrecisionGain("fp8", "fp8 (delayed)", 10_993.0, 9_177.0, (("GEMMs", 4.0, 2.4),
                                                                        ("quantize kernels", 0.0, 0.5)), host)
        return str(precision_table(gain).title)

    assert "the host's launches decide it (+3.700 s a step of exposed host time" in title((5.547, 9.247))
    assert "decide it" not in title((0.1, 0.2))
