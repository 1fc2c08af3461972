"""The ``cuda_graph`` knob as Megatron-LM flags and Primus overrides (megatron-core 0.16.1's
``--cuda-graph-impl``/``--cuda-graph-scope`` with the companions validate_args requires), accepted by
megatron-core's own TransformerConfig; targets that cannot express a value refuse it with P7001."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
import yaml

from primus_lang.diagnostics import CompileError
from primus_lang.emit import emit
from primus_lang.ir import Recompute
from tests.emit.harness import all_cases, context


def _argv(space: Any, cand: Any, **variables: str) -> list[str]:
    node = emit(space, cand, "megatron+local", context(**variables))["node.sh"]
    return shlex.split(node[node.index("ARGS=(") + len("ARGS=("):node.index("\n)\n")])


def _overrides(space: Any, cand: Any) -> dict[str, Any]:
    text = emit(space, cand, "primus+local", context())["experiment.yaml"]
    out: dict[str, Any] = yaml.safe_load(text)["modules"]["pre_trainer"]["overrides"]
    return out


def _flag_values(argv: list[str], flag: str) -> list[str]:
    i = argv.index(flag) + 1
    out = []
    while i < len(argv) and not argv[i].startswith("--"):
        out.append(argv[i])
        i += 1
    return out


def _megatron_config(argv: list[str]) -> Any:
    pytest.importorskip("torch")
    pytest.importorskip("megatron.core")
    from tests.emit.test_megatron_config import build_configs, parse_argv

    config, _, _ = build_configs(parse_argv(argv))
    return config


@pytest.fixture(autouse=True)
def _transformer_engine_present(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        from megatron.core.transformer import transformer_config
    except ImportError:
        return
    monkeypatch.setattr(transformer_config, "is_te_min_version", lambda *_a, **_k: True)


def test_none_emits_nothing() -> None:
    space, cand = all_cases()["mixtral_h100"]
    assert cand.cuda_graph == "none"
    assert not [a for a in _argv(space, cand) if "cuda-graph" in a or "rng-tracker" in a]
    assert not [k for k in _overrides(space, cand) if "cuda_graph" in k or "rng_tracker" in k]


def test_moe_attention_and_router_graphs() -> None:
    space, cand = all_cases()["mixtral_h100"]  # EP 8 with the EP overlap on, which these graphs allow
    cand = cand.replace(cuda_graph="attn_moe_router")
    argv = _argv(space, cand)
    assert _flag_values(argv, "--cuda-graph-impl") == ["transformer_engine"]
    assert _flag_values(argv, "--cuda-graph-scope") == ["attn", "moe_router", "moe_preprocess"]
    assert "--te-rng-tracker" in argv and "--no-check-for-nan-in-loss-and-grad" not in argv
    overrides = _overrides(space, cand)
    assert overrides["cuda_graph_impl"] == "transformer_engine"
    assert overrides["cuda_graph_scope"] == ["attn", "moe_router", "moe_preprocess"]
    assert overrides["te_rng_tracker"] is True
    config = _megatron_config(argv)
    if config is not None:
        from megatron.core.transformer.enums import CudaGraphScope

        assert config.cuda_graph_impl == "transformer_engine"
        assert config.cuda_graph_scope == [CudaGraphScope.attn, CudaGraphScope.moe_router,
                                           CudaGraphScope.moe_preprocess]


def test_moe_full_iteration_graph() -> None:
    """A MoE's whole iteration is graphed with HybridEP's static per-rank budget, as NVIDIA's recipes run it
    (P4047): Megatron-LM core_v0.16 has no budget, so the launch there is refused; core_v0.19 writes it."""
    space, cand = all_cases()["mixtral_h100"]
    cand = cand.replace(cuda_graph="full", ep_comm_overlap=False)  # P4034: no EP overlap with `full`
    assert cand.moe_dispatcher == "flex"
    with pytest.raises(CompileError) as err:
        _argv(space, cand)
    assert "P4047" in " ".join(str(d.notes) for d in err.value.diagnostics)
    from primus_lang.commands._options import launched_space

    newer = launched_space(space, "megatron+local", {"megatron_version": "core_v0.19"})
    argv = _argv(newer, cand, megatron_version="core_v0.19")
    assert _flag_values(argv, "--cuda-graph-impl") == ["full_iteration"]  # its own implementation in v0.19
    assert _flag_values(argv, "--moe-flex-dispatcher-backend") == ["hybridep"]  # on 8-GPU H100 nodes too
    assert _flag_values(argv, "--moe-expert-rank-capacity-factor") == ["1.5"]
    for flag in ("--te-rng-tracker", "--no-check-for-nan-in-loss-and-grad", "--use-transformer-engine-op-fuser"):
        assert flag in argv
    # the alltoall dispatcher copies its token counts to the host whatever the release
    with pytest.raises(CompileError):
        _argv(newer, cand.replace(moe_dispatcher="alltoall"), megatron_version="core_v0.19")
    # Primus hands the scope over as text, which Megatron's training loop does not recognise
    with pytest.raises(CompileError) as err:
        emit(space, cand, "primus+local", context())
    assert "P7001" in [d.code.id for d in err.value.diagnostics] or "P4047" in str(err.value.diagnostics[0].notes)


def test_bridge_graphs_a_moe_iteration_with_hybridep_budget() -> None:
    space, cand = all_cases()["example_gpt_oss_120b_b200"]
    cand = cand.replace(cuda_graph="full", moe_dispatcher="flex", ep_comm_overlap=False, precision="bf16")
    from primus_lang.commands._options import launched_space

    node = emit(launched_space(space, "bridge+local", {}), cand, "bridge+local", context())["node.sh"]
    for field in ("model.moe_flex_dispatcher_backend=hybridep", "model.moe_expert_rank_capacity_factor=1.5",
                  "model.use_transformer_engine_op_fuser=true"):
        assert field in node, field


def test_full_recompute_with_the_full_iteration_graph() -> None:
    space, cand = all_cases()["llama70b_mi325x"]  # full(4) recomputation
    cand = cand.replace(cuda_graph="full")
    argv = _argv(space, cand)
    assert "--moe-pad-experts-for-cuda-graph-inference" not in argv  # a dense model
    config = _megatron_config(argv)
    assert config.recompute_granularity == "full" and config.cuda_graph_impl == "local"


def test_dense_whole_layer_graph() -> None:
    space, cand = all_cases()["llama8b_h100_fsdp"]
    cand = cand.replace(cuda_graph="layer")
    argv = _argv(space, cand)
    assert _flag_values(argv, "--cuda-graph-impl") == ["transformer_engine"]
    assert "--cuda-graph-scope" not in argv  # Megatron's empty scope: the whole layer
    # Primus's trainer config says `full` (the deprecated alias): the override writes the empty scope
    assert _overrides(space, cand)["cuda_graph_scope"] == []
    config = _megatron_config(argv)
    assert (config.cuda_graph_impl, config.cuda_graph_scope) == ("transformer_engine", [])


@pytest.mark.parametrize("version", ["core_v0.12", "core_v0.14"])
@pytest.mark.parametrize("graph", ["attn", "attn_moe_router"])
def test_a_release_before_cuda_graph_impl_refuses_cuda_graphs(graph: str, version: str) -> None:
    """One refusal, the knob's: the scope beside it (`moe_router`, no choice of core_v0.12's
    --cuda-graph-scope) is not reported again."""
    space, cand = all_cases()["mixtral_h100"]
    cand = cand.replace(ep_comm_overlap=False, cuda_graph=graph)
    _argv(space, cand)  # core_v0.16 expresses it
    with pytest.raises(CompileError) as err:
        emit(space, cand, "megatron+local", context(megatron_version=version))
    assert [d.code.id for d in err.value.diagnostics] == ["P7001"]
    message = err.value.diagnostics[0].message
    assert "`cuda_graph_impl`" in message and "--enable-cuda-graph" in message
    assert f"Megatron-LM {version} has no `--cuda-graph-impl` (it arrived in core_v0.15)" in message


def test_every_legal_graph_builds_a_megatron_config() -> None:
    """What primusc calls legal for each graph value, megatron-core's TransformerConfig accepts."""
    from primus_lang.check import legality

    recomputes = [Recompute(), Recompute("selective"), Recompute("selective", modules=("mlp",)),
                  Recompute("selective", modules=("moe",)), Recompute("full", 1)]
    built = 0
    for case in ("mixtral_h100", "llama8b_h100_fsdp", "deepseek_v3_b200"):
        space, base = all_cases()[case]
        for graph in ("attn", "moe_router", "attn_moe_router", "layer", "full"):
            for overlap in (False, True):
                for rec in recomputes:
                    cand = base.replace(cuda_graph=graph, recompute=rec, ep_comm_overlap=overlap)
                    if legality(space, cand):
                        continue
                    config = _megatron_config(_argv(space, cand))
                    assert config.cuda_graph_impl in ("local", "transformer_engine")
                    built += 1
    assert built >= 20


def test_the_release_a_var_names_is_the_one_legality_judges() -> None:
    # `--var megatron_version=core_v0.19` launches on a release whose local graphs take the EP overlap (P4034
    # is a rule of the releases before core_v0.18): the check judges that release, as an `assume` would
    from primus_lang.check import legality
    from primus_lang.commands._options import launched_space

    space, cand = all_cases()["mixtral_h100"]
    cand = cand.replace(cuda_graph="full", ep_comm_overlap=True)
    assert "P4034" in {v.code for v in legality(space, cand)}
    newer = launched_space(space, "megatron+slurm", {"megatron_version": "core_v0.19"})
    assert newer.settings.megatron_version == "core_v0.19"
    assert "P4034" not in {v.code for v in legality(newer, cand)}
    with pytest.raises(CompileError, match=r"core_v0\.12"):
        launched_space(space, "megatron+slurm", {"megatron_version": "core_v9"})
