"""Did-you-mean: a spelled-out parallelism name is its short knob, however far apart they are spelled."""

from __future__ import annotations

import pytest

from primus_lang.diagnostics.suggest import near_name, spelled_out
from primus_lang.ir import KNOBS

NAMES = [*KNOBS, "dp", "edp", "world", "microbatches"]


@pytest.mark.parametrize(("word", "meant"), [
    ("tensor_parallel", "tp"), ("tensor_model_parallel_size", "tp"), ("pipeline", "pp"), ("pipeline_parallel", "pp"),
    ("dp_size", "dp"), ("data_parallel", "dp"), ("micro_batch_size", "mbs"), ("global_batch_size", "gbs"),
    ("expert_tensor_parallel", "etp"), ("context_parallel_size", "cp"), ("virtual_pipeline_model_parallel_size", "vpp"),
    # the size left unsaid, a count's "num", and the GPU count this language calls `world`: spelling
    # distance had offered `microbatches` (another quantity) and `num_experts`
    ("micro_batch", "mbs"), ("global_batch", "gbs"), ("num_gpus", "world"), ("total_gpus", "world"),
    ("num_microbatches", "microbatches"),
])
def test_a_spelled_out_name_is_its_knob(word: str, meant: str) -> None:
    assert near_name(word, NAMES) == meant


def test_spelling_distance_still_finds_typos_and_nothing_is_invented() -> None:
    assert near_name("tpp", NAMES) == "tp" and near_name("sequence_paralel", NAMES) == "sequence_parallel"
    assert near_name("precission", NAMES) == "precision"
    assert spelled_out("tp", NAMES) is None and near_name("zzz", NAMES) is None


def test_a_megatron_setting_or_a_derived_value_written_as_a_knob_is_named_for_what_it_is() -> None:
    from primus_lang.lower.names import knob_hint

    assert knob_hint("fp8", KNOBS).startswith("did you mean `precision`?")
    assert knob_hint("use_distributed_optimizer", KNOBS).startswith("did you mean `sharding`?")
    assert knob_hint("dp", KNOBS).startswith("`dp` is not set but follows")
    assert knob_hint("data_parallel", KNOBS).startswith("`dp` is not set but follows")
    assert knob_hint("tensor_parallel", KNOBS) == "did you mean `tp`?"
