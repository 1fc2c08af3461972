"""validate's memory verdict: unpublished knobs judged at their least-memory setting, false OOMs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from primus_lang.ir import Recompute
from primus_lang.memory import account
from primus_lang.validate.runs import load_runs
from primus_lang.validate.validate import summarize, to_json_rows, validate_rows

BASE: dict[str, Any] = {
    "id": "base", "source": "test", "framework": "Megatron-Bridge (Megatron-Core)", "task": "pretrain",
    "model_card": "llama3_1_8b", "seq_len": 8192, "precision": "BF16", "hardware": {"gpu": "H100 SXM"},
    "num_gpus": 8, "num_nodes": 1, "gpus_per_node": 8,
    "parallel": {"tp": 1, "pp": 1, "cp": 1, "distributed_optimizer": True},
    "mbs": 1, "gbs": 64, "recompute": None, "measured": {"tokens_per_sec_per_gpu": 9000},
    "config_complete": True,
}


def row(rid: str, **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(BASE)
    out.update(changes, id=rid)
    return out


def write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump(rows))
    return path


def test_unpublished_recompute_is_judged_at_least_memory(tmp_path: Path) -> None:
    published = {"recompute_granularity": None, "cpu_offloading_num_layers(activations)": None}
    runs = {r.id: r for r in load_runs(write(tmp_path, [
        row("silent"), row("none_published", recompute={"recompute_granularity": "selective",
                                                        "recompute_modules": ["core_attn"]}),
        row("granularity_none", recompute=published)]))}
    silent = runs["silent"]
    # Megatron-Bridge's performance scripts fix the main-grad dtype (BF16), not recompute or Adam's
    assert silent.unpublished == ("recompute", "optimizer_dtype")
    assert runs["granularity_none"].unpublished == silent.unpublished
    assert runs["none_published"].unpublished == ("optimizer_dtype",)
    assert silent.model and silent.cluster and silent.cand
    # at Megatron's defaults the 8k-token Llama-3.1-8B does not fit one H100 without recompute ...
    assert not account(silent.model, silent.cluster, silent.cand, silent.settings()).fits()
    rows = {r.id: r for r in validate_rows(list(runs.values()))}
    mem = rows["silent"].memory
    # ... but the run may have recomputed, so it is judged at full recompute and BF16 states
    assert mem is not None and mem.verdict == "fits" and mem.reading == "least memory"
    assert dict(mem.assumed) == {"recompute": "full(1,uniform)", "optimizer_dtype": "bf16"}
    assert mem.margin is not None and mem.margin > 0 and not mem.false_oom
    judged = to_json_rows([rows["silent"]])[0]["memory"]
    assert isinstance(judged, dict) and judged["reading"] == "least memory"
    assert judged["assumed"] == {"recompute": "full(1,uniform)", "optimizer_dtype": "bf16"}


def test_recompute_modules_reach_the_candidate(tmp_path: Path) -> None:
    rec = {"recompute_granularity": "selective", "recompute_modules": ["layernorm", "moe_act"]}
    run = load_runs(write(tmp_path, [row("mods", recompute=rec)]))[0]
    assert run.cand is not None and run.cand.recompute == Recompute("selective", modules=("layernorm", "moe_act"))
    bad = load_runs(write(tmp_path, [row("bad", recompute={**rec, "recompute_modules": ["everything"]})]))[0]
    assert "recompute" in bad.skip and "`everything`" in bad.skip


def test_false_ooms_are_judged_with_the_offloaded_layers(tmp_path: Path) -> None:
    # 70B weights alone exceed an 80 GB GPU at TP 1 (measured at a rate a 70B can run)
    huge = {"model_card": "llama3_1_70b", "measured": {"tokens_per_sec_per_gpu": 900}}
    offload = {"recompute_granularity": None, "cpu_offloading_num_layers(activations)": 40}
    rows = validate_rows(load_runs(write(tmp_path, [
        row("fits"), row("oom", **huge), row("offloaded", recompute=offload, **huge)])))
    by_id = {r.id: r for r in rows}
    assert by_id["oom"].memory is not None and by_id["oom"].memory.false_oom
    off = by_id["offloaded"].memory
    # the account holds the offloaded layers in host memory, and offloading does not save the weights
    assert off is not None and off.offload == 40 and off.verdict == "exceeds" and off.false_oom
    # megatron-core refuses recomputation beside offloading: the row is judged without it
    assert dict(off.assumed) == {"optimizer_dtype": "bf16"}
    s = summarize(rows)
    assert s["false_ooms"] == ["oom", "offloaded"]
    # each false OOM with what the account says exceeds: the shortfall and its largest terms
    why = s["false_oom_terms"]["oom"]  # type: ignore[index]
    assert why["over_bytes"] == -by_id["oom"].memory.spare_bytes > 0
    names = [name for name, _ in why["terms"]]
    assert len(names) == 3 and "parameters bf16" in names  # 70B at TP 1: its state is what exceeds
    assert s["memory_offloaded"] == 1 and s["memory_judged"] == 3
    assert list(s["tightest_memory_margins"]) == ["fits"]  # type: ignore[call-overload]


def test_torchtitan_op_level_checkpointing_fits_where_megatrons_selective_would_not(tmp_path: Path) -> None:
    """torchtitan_2412_001 of the published corpus: Llama 3.1 8B, FSDP 8 on 96 GB H100s, mbs 2, 8k,
    measured 82.4 GiB. Read as Megatron's selective (core_attn) it was a false OOM (102.9 GiB)."""
    titan = row("titan", framework="torchtitan", hardware={"gpu": "H100 96GB HBM2e (500W)"}, mbs=2, gbs=16,
                parallel={"tp": 1, "pp": 1, "cp": 1, "dp": 8, "fsdp": 8, "distributed_optimizer": None},
                recompute={"activation_checkpointing": "selective (op-level SAC per toml)"})
    h200 = row("h200", framework="torchtitan", recompute={"activation_checkpointing":
                                                            "selective (op) per llama3_8b.toml at e7c0cae"})
    asynctp = row("asynctp", framework="torchtitan", recompute={"activation_checkpointing": "per-op selective"})
    runs = {r.id: r for r in load_runs(write(tmp_path, [titan, h200, asynctp]))}
    assert all(r.cand is not None and r.cand.recompute == Recompute("op") for r in runs.values())
    rows = {r.id: r for r in validate_rows(list(runs.values()))}
    mem = rows["titan"].memory
    assert mem is not None and mem.verdict == "fits" and not mem.false_oom
    assert summarize(list(rows.values()))["false_ooms"] == []
    run = runs["titan"]
    assert run.model and run.cluster and run.cand
    as_megatron = run.cand.replace(recompute=Recompute("selective"), main_grad_dtype="bf16", optimizer_dtype="bf16")
    assert not account(run.model, run.cluster, as_megatron, run.settings()).fits()
