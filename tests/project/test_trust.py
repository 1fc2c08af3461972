"""Error bands, ties and the warnings of a projection: measured from residuals, stated per profile,
and acted on by plan."""

from __future__ import annotations

import json
import math
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from primus_lang.cli import main
from primus_lang.ir import Candidate, Gpu, Provenance
from primus_lang.project import Projection
from primus_lang.resources import data_dir
from primus_lang.validate import trust
from primus_lang.validate.bands import band_of, held_out_coverage, measure, pair_errors, paired_of

RUNS = Path(__file__).parent / "data" / "runs.yaml"
GPU = Gpu(name="g", vendor="nvidia", peak_bf16=1e15, hbm_capacity=2**37, hbm_bandwidth=3e12, scale_up_bandwidth=4.5e11)


def test_a_band_is_the_central_interval_of_measured_over_projected() -> None:
    # errors are projected/measured - 1: +100% means measured half of the projection
    errors = [1.0, 0.25, 0.0, -0.2, -0.5]
    lo, hi = band_of(errors, coverage=1.0)
    assert (lo, hi) == pytest.approx((0.5, 2.0))
    lo, hi = band_of([0.0] * 50, coverage=0.8)
    assert (lo, hi) == pytest.approx((1.0, 1.0))


@given(st.lists(st.floats(-0.6, 2.0), min_size=3, max_size=60))
def test_the_band_is_never_narrower_than_the_sample_quantiles(errors: list[float]) -> None:
    import numpy as np

    lo, hi = band_of(errors, 0.8)
    ratios = [1 / (1 + e) for e in errors]
    plain_lo, plain_hi = np.quantile(ratios, [0.1, 0.9])
    assert lo <= plain_lo + 1e-12 and hi >= plain_hi - 1e-12


def test_held_out_coverage_is_near_nominal_on_exchangeable_residuals() -> None:
    # 400 residuals spread evenly in log space, each its own layout: a band measured without a row
    # must hold about 80% of such rows (the widening keeps it from falling short)
    errors = {f"r{i:03}": math.exp(-0.4 + 0.8 * ((i * 37) % 400) / 399) - 1 for i in range(400)}
    inside, rows = held_out_coverage(errors, errors, lambda rid: rid)
    assert rows == 400
    assert 0.78 <= inside / rows <= 0.84


def test_a_row_is_never_judged_by_its_own_layouts_twins() -> None:
    # two rows re-measure one layout far off; everything else is exact: each twin, judged without
    # the other, falls outside a band of exact residuals
    errors = {"a": 1.0, "b": 1.0, **{f"x{i}": 0.0 for i in range(10)}}
    layout = {"a": "L", "b": "L"}
    inside, rows = held_out_coverage({"a": 1.0, "b": 1.0}, errors, lambda rid: layout.get(rid, rid))
    assert (inside, rows) == (0, 2)


def test_pairs_are_rows_of_one_group_with_different_layouts() -> None:
    errors = {"a": 0.1, "b": 0.1, "c": -0.1, "d": 0.5}
    group = {"a": "g1", "b": "g1", "c": "g1", "d": "g2"}.__getitem__
    layout = {"a": "L1", "b": "L1", "c": "L2", "d": "L3"}.__getitem__
    pairs = pair_errors(errors, group, layout)
    # a-b re-measure one layout (no pair); d is alone in its group
    assert sorted(pairs) == pytest.approx(sorted([abs(math.log(1.1 / 0.9))] * 2))
    assert paired_of(pairs, 0.5) == pytest.approx(1.1 / 0.9 - 1)
    band = measure(errors, pairs)
    assert band.rows == 4 and band.pairs == 2 and band.paired_coverage == 0.5


def test_ties_are_inside_the_paired_band() -> None:
    prov = Provenance(basis="fitted", rows=20, error=0.1, low=0.9, high=1.1, paired=0.05)
    assert trust.tied(prov, 100.0, 104.0)
    assert not trust.tied(prov, 100.0, 106.0)
    assert trust.tied(prov, 106.0, 101.0)


def test_numerics_order_bf16_then_finer_fp8_then_fp32_states() -> None:
    bf16 = Candidate()
    order = [
        bf16,
        bf16.replace(main_grad_dtype="bf16"),
        bf16.replace(main_grad_dtype="bf16", optimizer_dtype="bf16"),
        bf16.replace(main_grad_dtype="bf16", optimizer_dtype="bf16", cross_entropy="te"),  # and BF16 logits
        bf16.replace(precision="fp8", fp8_recipe="mxfp8"),
        bf16.replace(precision="fp8", fp8_recipe="tensorwise"),
        bf16.replace(precision="fp8", fp8_recipe="delayed"),
        bf16.replace(precision="fp4"),
    ]
    costs = [trust.numerics_cost(c) for c in order]
    assert costs == sorted(costs) and len(set(costs)) == len(costs)
    assert trust.numerics_changes(bf16, bf16.replace(cross_entropy="te")) == ["computes the loss on BF16 logits"]
    assert trust.numerics_cost(bf16.replace(cross_entropy="native")) == trust.numerics_cost(bf16)


def test_tie_group_puts_the_least_numerics_change_first_unless_told_speed() -> None:
    prov = Provenance(basis="fitted", rows=20, error=0.1, low=0.9, high=1.1, paired=0.05)
    ranked = [(103.0, Candidate(precision="fp8", fp8_recipe="delayed")), (102.0, Candidate(optimizer_dtype="bf16")),
              (101.0, Candidate()), (90.0, Candidate(tp=2))]
    group, rest = trust.tie_group(ranked, prov, lambda r: r[0], lambda r: r[1])
    assert [r[0] for r in group] == [101.0, 102.0, 103.0] and [r[0] for r in rest] == [90.0]
    group, _ = trust.tie_group(ranked, prov, lambda r: r[0], lambda r: r[1], prefer="speed")
    assert [r[0] for r in group] == [103.0, 102.0, 101.0]


def test_a_spec_sheet_warns_and_a_fitted_profile_does_not() -> None:
    spec = trust.warnings(GPU, [("tp=1", 0.4)], "fix it")
    assert [d.code.id for d in spec] == ["W6002"] and spec[0].help == "fix it"
    fitted = attrs.evolve(GPU, provenance=Provenance(basis="fitted", rows=30, error=0.1, low=0.9, high=1.1, paired=0.1))
    assert trust.warnings(fitted, [("tp=1", 0.4)], "fix it") == []
    over = trust.warnings(fitted, [("tp=1", 0.4), ("tp=2", 0.9)], "fix it")
    assert [d.code.id for d in over] == ["W6003"] and "tp=2" in over[0].message


def test_a_band_scales_tokens_and_inverts_for_step_time() -> None:
    gpu = attrs.evolve(GPU, provenance=Provenance(basis="fitted", rows=30, error=0.1, low=0.8, high=1.25, paired=0.1))
    b = trust.band(gpu, 1000.0, 2.0)
    assert (b.tokens_low, b.tokens_high) == pytest.approx((800.0, 1250.0))
    assert (b.step_low, b.step_high) == pytest.approx((1.6, 2.5))


SPACE = """
import models.llama3 (llama3_1_8b)

gpu wide = mi325x_spec_like {{ provenance {{ basis = fitted; rows = 30; error = 0.1; low = 0.8; high = 1.2; paired = {paired} }} }}
gpu mi325x_spec_like {{
  vendor = amd; peak_bf16 = 1307 TFLOP/s; peak_fp8 = 2615 TFLOP/s; hbm_capacity = 256 GiB
  hbm_bandwidth = 6 TB/s; scale_up_bandwidth = 64 GB/s; nic_bandwidth = 400 Gbps
}}
cluster c {{ gpu = wide; nodes = 1; gpus_per_node = 8 }}

space s on c {{
  model = llama3_1_8b
  gbs = 64
  precision : bf16 | fp8
  optimizer_dtype : fp32 | bf16
  {extra}
  maximize tokens_per_gpu
}}
"""


def _plan(tmp_path: Path, capsys: pytest.CaptureFixture[str], paired: str, extra: str = "") -> dict[str, object]:
    tmp_path.mkdir(exist_ok=True)
    src = tmp_path / "s.prx"
    src.write_text(SPACE.format(paired=paired, extra=extra))
    assert main(["plan", str(src), "--out", str(tmp_path / "out"), "--no-emit", "--json", "--strategy",
                 "exhaustive"]) == 0
    out = capsys.readouterr()
    plan = json.loads(out.out)
    assert "W6002" not in out.err  # a fitted profile
    return plan  # type: ignore[no-any-return]


def test_plan_breaks_ties_toward_the_recipe_that_changes_numerics_least(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan(tmp_path, capsys, "0.9")  # everything is tied: the least change wins
    winner = plan["ranked"][0]["candidate"]
    assert (winner["precision"], winner["optimizer_dtype"]) == ("bf16", "fp32")
    assert len(plan["tied"]) == 4 and plan["tied"][0] == "defaults"
    assert any("tied with the best" in line for line in plan["explanation"])
    fastest = _plan(tmp_path / "b", capsys, "0.9", "assume tie_break = speed")["ranked"][0]["candidate"]
    assert fastest["precision"] == "fp8"
    untied = _plan(tmp_path / "c", capsys, "0")
    assert untied["ranked"][0]["candidate"]["precision"] == "fp8" and len(untied["tied"]) <= 2


def test_project_json_states_the_band_and_the_provenance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "s.prx"
    src.write_text(SPACE.format(paired="0.05", extra=""))
    assert main(["project", str(src), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["provenance"]["basis"] == "fitted"
    first = out["results"][0]
    assert first["band"]["tokens_low"] == pytest.approx(0.8 * first["projection"]["tokens_per_gpu"])
    assert first["tied_with_best"] is True


def test_a_spec_sheet_space_warns_with_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "s.prx"
    src.write_text(SPACE.format(paired="0.05", extra="").replace("gpu = wide", "gpu = mi325x_spec_like"))
    assert main(["project", str(src), "--top", "3"]) == 0
    err = capsys.readouterr().err
    assert "W6002" in err and "primusc calibrate" in err


def test_a_band_whose_high_end_is_below_its_low_end_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "s.prx"
    src.write_text(SPACE.format(paired="0.05", extra="").replace("low = 0.8; high = 1.2", "low = 1.2; high = 0.8"))
    assert main(["check", str(src)]) == 1
    assert "below its low end" in capsys.readouterr().err


@pytest.mark.parametrize("path", sorted(data_dir("examples").glob("*.prx")), ids=lambda p: p.stem)
def test_every_example_projects_on_a_fitted_profile_without_a_warning(path: Path) -> None:
    from primus_lang.lower import load_space

    space = load_space(path)
    gpu = space.cluster.gpu
    assert gpu.provenance.basis in ("fitted", "pooled")
    assert trust.warnings(gpu, [], trust.fix_for(gpu)) == []


def test_plain_stdlib_names_are_fitted_and_spec_names_warn() -> None:
    from primus_lang.lower import load_program

    plain = {g.name: g for g in load_program(str(data_dir("stdlib") / "hardware" / "nvidia.prx")).gpus}
    spec = {g.name: g for g in load_program(str(data_dir("stdlib") / "hardware" / "nvidia_spec.prx")).gpus}
    assert plain["h200"].provenance.basis == "pooled" and plain["b200"].provenance.basis == "fitted"
    warned = trust.warnings(spec["h200_spec"], [], trust.fix_for(spec["h200_spec"]))
    assert [d.code.id for d in warned] == ["W6002"] and "import hardware.nvidia (h200)" in (warned[0].help or "")


@pytest.mark.slow
def test_the_readme_example_projects_without_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["project", str(data_dir("examples") / "llama3_1_70b_mi325x.prx"), "--top", "3"]) == 0
    out = capsys.readouterr()
    assert "warning[" not in out.err and "fitted on 3 measured runs" in out.out


def test_efficiencies_set_by_hand_lose_the_base_profiles_band() -> None:
    from primus_lang.lower import loads_program

    program = loads_program(
        "import hardware.nvidia (h200)\n"
        "gpu hot = h200 { efficiency { gemm_max = 0.98 } }\n"
        "gpu same = h200 { hbm_capacity = 100 GiB }\n"
        "gpu kept = h200 { efficiency { gemm_max = 0.5 } provenance { basis = fitted; rows = 9; error = 0.1; "
        "low = 0.9; high = 1.1; paired = 0.05 } }\n", "<t>")
    gpus = {g.name: g for g in program.gpus}
    assert gpus["hot"].provenance.basis == "spec" and "set by hand over `h200`" in gpus["hot"].provenance.note
    assert gpus["same"].provenance.basis == "pooled"  # no efficiency edited: the base's evidence holds
    assert gpus["kept"].provenance.basis == "fitted" and gpus["kept"].provenance.rows == 9
    warned = trust.warnings(gpus["hot"], [], "fix")
    assert [d.code.id for d in warned] == ["W6002"] and "set by hand" in warned[0].notes[0]


FAR = Provenance(basis="fitted", rows=30, error=0.1, low=0.9, high=1.1, paired=0.1, seq_max=8192, world_max=64,
                 far_low=0.75, far_high=1.3)


def test_a_candidate_beyond_what_the_fit_saw_gets_the_far_band() -> None:
    inside = Candidate(seq_len=8192)
    assert trust.beyond(FAR, inside, 64) == [] and trust.factors(FAR, inside, 64) == (0.9, 1.1)
    long = Candidate(seq_len=65536)
    [why] = trust.beyond(FAR, long, 64)
    assert "65,536" in why and "8,192" in why
    assert trust.factors(FAR, long, 64) == (0.75, 1.3)
    assert "512 GPUs" in trust.beyond(FAR, inside, 512)[0]
    # the far band only ever widens, and a profile that records nothing checks nothing
    narrow = attrs.evolve(FAR, far_low=0.95, far_high=1.05)
    assert trust.factors(narrow, long, 64) == (0.9, 1.1)
    blank = Provenance(basis="fitted", rows=30, error=0.1, low=0.9, high=1.1, paired=0.1)
    assert trust.beyond(blank, long, 10_000) == [] and trust.far(blank) == (0.9, 1.1)
    b = trust.band(attrs.evolve(GPU, provenance=FAR), 1000.0, 2.0, long, 64)
    assert (b.tokens_low, b.tokens_high) == pytest.approx((750.0, 1300.0))


def test_w6012_names_the_first_candidate_beyond_and_the_wider_band() -> None:
    gpu = attrs.evolve(GPU, provenance=FAR)
    assert trust.warnings(gpu, [], "fix", [(Candidate(seq_len=4096), 64, 0.0)]) == []
    [w] = trust.warnings(gpu, [], "fix", [(Candidate(seq_len=4096), 64, 0.0), (Candidate(seq_len=32768), 64, 0.0)])
    assert w.code.id == "W6012" and "1 projection(s)" in w.message and "32,768" in w.message
    assert "0.75-1.30x" in w.notes[0]


def test_project_warns_and_widens_beyond_the_longest_sequence(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "s.prx"
    text = SPACE.format(paired="0.05", extra="seq_len = 32768").replace(
        "paired = 0.05", "paired = 0.05; seq_max = 8192; far_low = 0.7; far_high = 1.4")
    src.write_text(text)
    assert main(["project", str(src), "--json", "--top", "2"]) == 0
    out = capsys.readouterr()
    assert "W6012" in out.err and "32,768" in out.err
    first = json.loads(out.out)["results"][0]
    assert first["band"]["tokens_low"] == pytest.approx(0.7 * first["projection"]["tokens_per_gpu"])
    assert "32,768" in first["band"]["beyond"][0]
    assert "issue 30" in out.err  # a sequence beyond the fit's: what long runs elsewhere measured
    assert main(["explain", str(src), "--point", first["label"]]) == 0
    said = capsys.readouterr().out
    assert "widened: beyond its runs" in said


def test_a_model_precision_or_software_the_fit_never_saw_gets_the_far_band() -> None:
    from primus_lang.lower import stdlib_cards

    cards = stdlib_cards()
    dense, moe = cards["llama3_1_8b"][1], cards["mixtral_8x7b"][1]
    seen = attrs.evolve(FAR, kinds="dense", precisions="bf16,fp8", stacks="megatron-core,torchtitan")
    bf16 = Candidate(seq_len=8192)
    assert trust.beyond(seen, bf16, 64, dense, "megatron-core") == []
    # delayed and current per-tensor scaling are one kind of FP8 evidence
    for recipe in ("tensorwise", "delayed"):
        fp8 = Candidate(seq_len=8192, precision="fp8", fp8_recipe=recipe)
        assert trust.beyond(seen, fp8, 64, dense, "torchtitan") == []
    [why] = trust.beyond(seen, bf16, 64, moe, "megatron-core")
    assert why == "a moe model, where its runs trained dense models"
    [why] = trust.beyond(seen, Candidate(seq_len=8192, precision="fp8", fp8_recipe="mxfp8"), 64, dense)
    assert why.startswith("fp8 mxfp8 GEMMs, which none of its runs used")
    [why] = trust.beyond(seen, bf16, 64, dense, trust.stack_of("MaxText (JAX)"))
    assert why == "trained with maxtext, where its runs used megatron-core, torchtitan"
    assert trust.factors(seen, bf16, 64, moe) == (0.75, 1.3)
    # what the caller does not say (no model, no software) and what a profile does not record are not judged
    assert trust.beyond(seen, bf16, 64) == [] and trust.beyond(FAR, bf16, 64, moe, "maxtext") == []


def test_a_host_bound_candidate_of_a_kind_no_host_bound_run_measured_gets_the_far_band() -> None:
    from primus_lang.lower import stdlib_cards

    cards = stdlib_cards()
    dense, moe = cards["llama3_1_8b"][1], cards["mixtral_8x7b"][1]
    cand = Candidate(seq_len=8192)
    moe_only = attrs.evolve(FAR, host_bound="moe")
    [why] = trust.beyond(moe_only, cand, 64, dense, host=0.65)
    assert why == ("host-bound (65% of its step is the host launching work): the host's time per launch "
                   "(`host_launch`) was measured on host-bound runs of moe models only, never of a dense one")
    # the upper side reaches as far as the host's time would shrink at a dense op's launch cost (DENSE_LAUNCH_SHARE):
    # a trial's host-bound dense run had its band widened on the slow side only, where the evidence is the fast one
    low, high = trust.factors(moe_only, cand, 64, dense, host=0.65)
    assert low == 0.75 and high == pytest.approx(1 / (1 - 0.65 * 0.4)) and high > 1.3
    assert trust.factors(moe_only, cand, 64, dense, host=0.2) == (0.75, 1.3)  # the far band's own is wider
    # below the threshold, a kind the host-bound runs had, or a profile that records nothing: not judged
    assert trust.beyond(moe_only, cand, 64, dense, host=trust.HOST_BOUND / 2) == []
    assert trust.beyond(moe_only, cand, 64, moe, host=0.65) == []
    assert trust.beyond(FAR, cand, 64, dense, host=0.65) == []
    [why] = trust.beyond(attrs.evolve(FAR, host_bound="none"), cand, 64, dense, host=0.2)
    assert why.endswith("was measured on no host-bound run")
    gpu = attrs.evolve(GPU, provenance=moe_only)
    [w] = trust.warnings(gpu, [], "fix", [(cand, 64, 0.05), (cand, 64, 0.65)], dense)
    assert w.code.id == "W6012" and "1 projection(s)" in w.message and "host-bound (65%" in w.message


def test_the_kinds_of_model_whose_runs_are_host_bound() -> None:
    from primus_lang.validate.corpus import runs_file
    from primus_lang.validate.runs import load_runs

    rows = [r for r in load_runs(str(runs_file()), False) if not r.skip and r.model is not None][:40]
    assert trust.host_bound_kinds({}, rows) == "none"
    dense = next(r for r in rows if r.model is not None and r.model.moe is None)
    moe = next(r for r in rows if r.model is not None and r.model.moe is not None and r.model.mamba is None)
    assert trust.host_bound_kinds({dense.id: 0.5, moe.id: 0.09}, rows) == "dense"
    assert trust.host_bound_kinds({dense.id: 0.5, moe.id: trust.HOST_BOUND}, rows) == "dense,moe"
    assert trust.host_share(Projection(1.0, 1.0, 1.0, 0.5, 0.5, 0.0, (("compute", 0.8), ("host", 0.2)), ())) \
        == pytest.approx(0.2)


@pytest.mark.parametrize("framework,stack", [
    ("Megatron-Bridge (Megatron-Core)", "megatron-core"), ("NeMo 2.0 (Megatron-Core)", "megatron-core"),
    ("Primus (Megatron-LM backend)", "megatron-core"), ("Primus (TorchTitan backend)", "torchtitan"),
    ("NeMo AutoModel (PyTorch FSDP2)", "automodel"), ("torchtitan (torchao float8 / mx_formats)", "torchtitan"),
    ("MosaicML LLM Foundry", "llm-foundry"), ("llm-foundry", "llm-foundry"), ("", ""), ("bridge", "megatron-core"), ("primus", "megatron-core"),
    ("Megatron-DeepSpeed", "deepspeed"), ("MaxText (JAX)", "maxtext"), ("ünïcode stack", "ünïcode"),
])
def test_the_software_of_a_framework_name(framework: str, stack: str) -> None:
    assert trust.stack_of(framework) == stack
    assert trust.target_stack("primus+slurm") == "megatron-core" and trust.target_stack("") == ""


def test_validate_gives_each_row_its_band_and_counts_the_rows_inside(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--runs", str(RUNS), "--calibrated", "--no-memory", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = [r for r in out["rows"] if r["band"] is not None]
    assert rows and all(r["band"]["tokens_low"] <= r["projected"] <= r["band"]["tokens_high"] for r in rows)
    inside = [r for r in rows if r["band"]["tokens_low"] <= r["measured"] <= r["band"]["tokens_high"]]
    assert all(r["band"]["inside"] == (r in inside) for r in rows)
    cover = out["summary"]["band_coverage"]
    assert cover["rows"] == len(rows) and cover["inside"] == len(inside)
    assert cover["beyond_rows"] == sum(bool(r["band"]["beyond"]) for r in rows)


@pytest.mark.parametrize("fields,words", [
    ({"kinds": "Dense"}, "`kinds` names `Dense`"), ({"kinds": "dense moe"}, "`kinds` names `dense moe`"),
    ({"precisions": "fp9"}, "`precisions` names `fp9`"), ({"stacks": "Megatron-Core"}, "lower-case name"),
    ({"far_low": 2.0, "far_high": 0.5}, "far band's high end"), ({"far_low": 0.5}, "without `far_high`"),
])
def test_a_provenance_names_only_what_a_band_can_be_judged_by(fields: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        Provenance(**fields)  # type: ignore[arg-type]
    Provenance(kinds="dense,moe", precisions="bf16, fp8 mxfp8", stacks="megatron-core,llm-foundry")


def test_w6012_says_when_no_far_band_widens() -> None:
    gpu = attrs.evolve(GPU, provenance=attrs.evolve(FAR, far_low=0.0, far_high=0.0))
    [w] = trust.warnings(gpu, [], "fix", [(Candidate(seq_len=32768), 64, 0.0)])
    assert "stays the profile's 0.90-1.10x" in w.notes[0]
    # a host-bound dense candidate's upper side still reaches a dense launch's cost, and the note says so
    from primus_lang.lower import stdlib_cards

    dense = stdlib_cards()["llama3_1_8b"][1]
    no_far = attrs.evolve(GPU, provenance=attrs.evolve(FAR, far_low=0.0, far_high=0.0, host_bound="moe"))
    [w] = trust.warnings(no_far, [], "fix", [(Candidate(seq_len=8192), 64, 0.65)], dense)
    high = 1 / (1 - 0.65 * (1 - trust.DENSE_LAUNCH_SHARE))
    assert f"band is 0.90-{high:.2f}x: the profile's, its upper side as far as a dense launch's" in w.notes[0]
    assert "stays" not in w.notes[0]


def test_plan_marks_and_lists_the_widened_bands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "s.prx"
    src.write_text(SPACE.format(paired="0.05", extra="seq_len = 32768").replace(
        "paired = 0.05", "paired = 0.05; seq_max = 8192; far_low = 0.7; far_high = 1.4"))
    args = ["plan", str(src), "--no-emit", "--strategy", "exhaustive"]
    assert main([*args, "--out", str(tmp_path / "a"), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert len(plan["bands"]) == len(plan["ranked"])
    first, band = plan["ranked"][0], plan["bands"][0]
    assert "32,768" in band["beyond"][0]
    assert band["tokens_low"] == pytest.approx(0.7 * first["evaluation"]["tokens_per_gpu"])
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    said = capsys.readouterr()
    assert " †" in said.out and "†: beyond the runs the profile was fitted on (W6012), the band widened to 0.70-1.40x" in said.out
    # W6012 counts the rows the table marks (it counted the winner alone)
    marked = sum(1 for b in plan["bands"] if b and b["beyond"])
    assert marked > 1 and f"{marked} projection(s) lie beyond" in said.err


def test_numerics_are_judged_as_the_target_launches_them() -> None:
    # torch FSDP2 (the primus target's FSDP) keeps BF16 gradients whatever main_grad_dtype says, so its
    # "FP32 gradients" twin changes numerics no less than the BF16 one
    from primus_lang.ir import Settings
    from primus_lang.search.ties import Settled
    from primus_lang.search.trial import Trial

    def trial(**knobs: object) -> Trial:
        return Trial(1, "t", "evaluated", Candidate(sharding="fsdp", **knobs))  # type: ignore[arg-type]

    fp32, bf16 = trial(main_grad_dtype="fp32"), trial(main_grad_dtype="bf16")
    for target, alike in (("primus+slurm", True), ("megatron+slurm", False)):
        settled = Settled(None, None, (), (), 0.0, Settings(target=target))
        assert (settled.cost(fp32) == settled.cost(bf16)) == alike


def test_a_dense_model_the_host_bounds_is_beyond_the_calibrated_profiles(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Every host-bound run of the corpus trains a MoE or hybrid model (calibrated.prx records it): one 8k
    sequence of a dense 8B over TP 2 x CP 4 is projected mostly host time, measured on no such model."""
    src = tmp_path / "small.prx"
    src.write_text("import models.llama3 (llama3_8b)\nimport hardware.calibrated (gb300_calibrated)\n"
                   "cluster c { gpu = gb300_calibrated; nodes = 2; gpus_per_node = 4 }\n"
                   "space s on c { model = llama3_8b; seq_len = 8192; gbs = 128; precision = fp8; tp = 2; cp = 4 }\n")
    assert main(["project", str(src), "--json"]) == 0
    out = capsys.readouterr()
    assert "W6012" in out.err and "host-bound (" in out.err and "never of a dense one" in out.err
    band = json.loads(out.out)["results"][0]["band"]
    assert any(why.startswith("host-bound") for why in band["beyond"])


def test_candidates_of_both_dispatchers_say_the_flex_gain_is_not_projected(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """W6015: inside one node flex projects 3-4% faster than the all-to-all (the all-to-all dispatcher's second
    permutation and small collectives), where DeepEP measured 10.7-13.0% faster (Primus's MoE package): a
    trial's plan had kept the all-to-all by the tie-break without a word."""
    space = tmp_path / "moe.prx"
    space.write_text("import models.mixtral (mixtral_8x7b)\nimport clusters.amd (mi325x_x8)\n"
                     "space s on mi325x_x8 {\n  model = mixtral_8x7b\n  gbs = 256\n  ep = 8\n  tp = 1\n  pp = 1\n"
                     "  moe_dispatcher : alltoall | flex\n}\n")
    assert main(["project", str(space)]) == 0
    err = capsys.readouterr().err
    assert "W6015" in err and "the flex dispatcher and `alltoall` are compared with only part of flex's measured gain" in err
    one = tmp_path / "one.prx"
    one.write_text(space.read_text().replace("moe_dispatcher : alltoall | flex", "moe_dispatcher = flex"))
    assert main(["project", str(one)]) == 0
    assert "W6015" not in capsys.readouterr().err
