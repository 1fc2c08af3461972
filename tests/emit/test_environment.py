"""Vendor presets and REFERENCE.md's CUDA_DEVICE_MAX_CONNECTIONS rule, as the scripts export them."""

from __future__ import annotations

import pytest

from primus_lang.emit.environment import device_max_connections, environment
from primus_lang.ir import Candidate
from tests.emit.ir_cases import B200, H100, MI325X, cluster


@pytest.mark.parametrize(
    ("gpu", "cand", "expected"),
    [
        (H100, Candidate(tp=2), "1"),
        (H100, Candidate(cp=2), "1"),
        (MI325X, Candidate(tp=8), "1"),  # ROCm reports compute capability 9.x: the rule applies
        (H100, Candidate(), False),  # nothing requires a value: the caller's stands
        (B200, Candidate(tp=2), False),  # Blackwell lifted the requirement
        (H100, Candidate(tp=2, sharding="fsdp"), None),  # FSDP wants more than one queue: unset
        (H100, Candidate(ep=8, ep_comm_overlap=True), "8"),  # the expert all-to-all overlap wants more queues
        # DeepEP's dispatcher and Blackwell take 32, as Megatron-Bridge v0.6's performance launcher sets them
        (H100, Candidate(ep=8, ep_comm_overlap=True, moe_dispatcher="flex"), "32"),
        (B200, Candidate(ep=8, ep_comm_overlap=True), "32"),
    ],
)
def test_device_max_connections(gpu: object, cand: Candidate, expected: str | bool | None) -> None:
    assert device_max_connections(cluster(gpu, 1), cand) == expected  # type: ignore[arg-type]


def test_amd_gets_rccl_presets_nvidia_does_not() -> None:
    amd = dict(environment(cluster(MI325X, 1), Candidate(tp=2)))
    nvidia = dict(environment(cluster(H100, 1), Candidate(tp=2)))
    assert amd["GPU_MAX_HW_QUEUES"] == "2" and "GPU_MAX_HW_QUEUES" not in nvidia
    assert amd["CUDA_DEVICE_MAX_CONNECTIONS"] == nvidia["CUDA_DEVICE_MAX_CONNECTIONS"] == "1"


def test_scripts_unset_it_under_fsdp() -> None:
    from primus_lang.emit import emit
    from tests.emit.harness import all_cases, context

    space, cand = all_cases()["llama8b_h100_fsdp"]
    text = emit(space, cand.replace(tp=2), "megatron+local", context())["node.sh"]
    assert "unset CUDA_DEVICE_MAX_CONNECTIONS" in text
    assert "--use-megatron-fsdp" in text and "--ckpt-format fsdp_dtensor" in text
    assert "--no-gradient-accumulation-fusion" in text


def test_a_value_nothing_requires_is_left_to_the_caller() -> None:
    """A Primus re-trial: at TP 1 and CP 1 node.sh unset the variable, throwing a user's own value away (and
    Primus then set 1)."""
    from primus_lang.emit import emit
    from tests.emit.harness import all_cases, context

    space, cand = all_cases()["llama8b_h100_fsdp"]
    text = emit(space, cand.replace(sharding="dist_opt", tp=1), "megatron+local", context())["node.sh"]
    assert "CUDA_DEVICE_MAX_CONNECTIONS" not in text


def test_amd_gets_the_presets_primus_runs_with() -> None:
    amd = dict(environment(cluster(MI325X, 1), Candidate(tp=2)))
    # Primus v26.5.1 runner/helpers/envs/base_env.sh: scratch reclaim off, or MoE training can crash
    assert amd["HSA_NO_SCRATCH_RECLAIM"] == "1" and amd["NCCL_P2P_NET_CHUNKSIZE"] == "524288"
    assert "PRIMUS_TURBO_DEEPEP_TIMEOUT" not in amd
    assert dict(environment(cluster(MI325X, 1), Candidate(moe_dispatcher="flex")))["PRIMUS_TURBO_DEEPEP_TIMEOUT"] == "600"


def test_an_architecture_before_blackwell_that_is_not_named_gets_the_rule() -> None:
    """A re-trial: an Ada profile (`arch = "ada"`) had been taken for Blackwell, and Megatron asserts the value."""
    import attrs

    ada = attrs.evolve(H100, name="l40s_like", arch="ada")
    blackwell = attrs.evolve(H100, name="my_part", arch="blackwell")
    assert device_max_connections(cluster(ada, 1), Candidate(tp=2)) == "1"  # type: ignore[arg-type]
    assert device_max_connections(cluster(blackwell, 1), Candidate(tp=2)) is False  # type: ignore[arg-type]


@pytest.mark.parametrize(("setting", "target"), [("deterministic_mode", "megatron+slurm"),
                                                 ("bridge__model__deterministic_mode", "bridge+slurm"),
                                                 (None, "megatron+slurm")])
def test_deterministic_mode_gets_the_environment_its_checks_read(setting: str | None, target: str) -> None:
    """Megatron-Bridge v0.6 (and Megatron-LM before core_v0.19) assert NCCL_ALGO at start in deterministic
    mode: a Bridge `--deterministic` line imported and launched without it stopped before its first step."""
    from primus_lang.check import legal_points
    from primus_lang.emit import emit
    from primus_lang.lower import loads_program

    carried = f"passthrough {{ {setting} = true }}" if setting else ""
    space = loads_program("import clusters.nvidia (h100_x8)\nimport models.llama3 (llama3_1_8b)\n"
                          f"space x on h100_x8 {{ model = llama3_1_8b; gbs = 512; {carried} }}\n", "d.prx").spaces[0]
    sh = emit(space, next(iter(legal_points(space))), target)["node.sh"]
    wanted = ("export NCCL_ALGO=${NCCL_ALGO:-Ring}", "export CUBLAS_WORKSPACE_CONFIG=${CUBLAS_WORKSPACE_CONFIG:-:4096:8}",
              "export NVTE_ALLOW_NONDETERMINISTIC_ALGO=${NVTE_ALLOW_NONDETERMINISTIC_ALGO:-0}")
    assert all((line in sh) == (setting is not None) for line in wanted), sh


def test_a_deterministic_mode_the_launch_leaves_out_exports_no_environment_for_it() -> None:
    """On the primus target Megatron-LM refuses deterministic mode beside the flash attention Primus runs
    (W7025 leaves it out): its environment was exported all the same."""
    from primus_lang.check import legal_points
    from primus_lang.emit import emit
    from primus_lang.lower import loads_program

    space = loads_program("import clusters.amd (mi300x_x8)\nimport models.llama3 (llama3_1_8b)\n"
                          "space x on mi300x_x8 { model = llama3_1_8b; gbs = 512; tp = 2; "
                          "passthrough { deterministic_mode = true } }\n", "d.prx").spaces[0]
    cand = next(iter(legal_points(space)))
    primus = emit(space, cand, "primus+slurm")["node.sh"]
    megatron = emit(space, cand, "megatron+slurm")["node.sh"]
    assert "NCCL_ALGO" not in primus and "export NCCL_ALGO=${NCCL_ALGO:-Ring}" in megatron
