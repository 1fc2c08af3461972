"""Frameworks: what each node runs. One class per framework, capability flags first (sqlglot style).

A framework turns the candidate into settings (``arguments``), refuses what it cannot express, and
names the templates that render its program: the bash fragment defining ``WORKDIR``, ``SCRIPT`` and
``ARGS`` for the per-node script, plus any files of its own (Primus's experiment YAML).
"""

from __future__ import annotations

from typing import Any, ClassVar

import yaml

from primus_lang.emit.arguments import Settings, entry_script, megatron_settings
from primus_lang.emit.context import Variables
from primus_lang.emit.profiles import PROFILES, Profile
from primus_lang.ir import Candidate, Cluster, Model
from primus_lang.ir.run import Run
from primus_lang.ir.site import Site

# Megatron's nargs='*' data paths; Primus splits these strings on whitespace itself
DATA_PATHS = frozenset({"data_path", "train_data_path", "valid_data_path", "test_data_path"})
# Primus pipeline algorithms (primus/configs/modules/megatron/primus_pipeline.yaml).
PRIMUS_PP_ALGORITHMS = {"zero_bubble": "zero-bubble", "zbv": "zbv-formatted"}


class Framework:
    NAME: ClassVar[str] = ""
    SUPPORTED_SCHEDULES: ClassVar[frozenset[str]] = frozenset({"1f1b", "interleaved"})
    SUPPORTED_ACTIVATIONS: ClassVar[frozenset[str]] = frozenset({"swiglu", "gelu", "squared_relu"})
    # Megatron's --disable-bias-linear covers every linear layer, router and experts included.
    SUPPORTS_SEPARATE_EXPERT_BIAS: ClassVar[bool] = False
    PROGRAM_TEMPLATE: ClassVar[str] = ""
    # output path -> template, for files only this framework writes
    TEMPLATES: ClassVar[dict[str, str]] = {}

    def __init__(self, model: Model, cluster: Cluster, cand: Candidate, variables: Variables,
                 run: Run | None = None, site: Site | None = None) -> None:
        self.model, self.cluster, self.cand, self.variables = model, cluster, cand, variables
        self.profile: Profile = PROFILES[variables.megatron_version]
        self.settings: Settings = self.preprocess(megatron_settings(model, cluster, cand, variables, run, site))

    def preprocess(self, settings: Settings) -> Settings:
        return self.profile.extras(settings)

    def unsupported(self) -> list[str]:
        """Why the candidate cannot be expressed exactly; empty when it can."""
        out: list[str] = []
        if self.cand.schedule not in self.SUPPORTED_SCHEDULES:
            others = [f.NAME for f in FRAMEWORKS.values() if self.cand.schedule in f.SUPPORTED_SCHEDULES]
            hint = f" ({', '.join(others)} does)" if others else ""
            out.append(f"`schedule` = {self.cand.schedule}: {self.NAME} has no such pipeline schedule{hint}")
        if self.cand.recompute.kind == "op":
            # Megatron checkpoints modules, not a save list of ops; no flag reproduces torchtitan's
            # policy. The account brackets it between two Megatron settings (docs/memory.md).
            out.append(
                "`recompute` = op: torchtitan's op-level selective activation checkpointing has no Megatron "
                "equivalent; the nearest settings bracket it: `selective(layernorm, mlp)` keeps less "
                "activation memory, `selective` (core_attn) keeps more"
            )
        if self.model.activation not in self.SUPPORTED_ACTIVATIONS:
            out.append(f"`activation` = {self.model.activation}: Megatron has no flag for this activation")
        moe = self.model.moe
        if moe is not None and not self.SUPPORTS_SEPARATE_EXPERT_BIAS:
            for name, value in (("expert_bias", moe.expert_bias), ("router_bias", moe.router_bias)):
                if value != self.model.bias:
                    out.append(
                        f"`moe.{name}` = {str(value).lower()} with `bias` = {str(self.model.bias).lower()}: "
                        "Megatron gives experts and the router biases exactly when every linear has them"
                    )
        out += self.profile.problems(self.settings)
        return list(dict.fromkeys(out))

    def render_values(self) -> dict[str, Any]:
        return {}

    def deepep_on_amd(self) -> bool:
        """The flex dispatcher (written with the DeepEP backend) on an AMD cluster."""
        return self.cluster.gpu.vendor == "amd" and self.model.moe is not None and self.cand.moe_dispatcher == "flex"


class Megatron(Framework):
    NAME = "megatron"
    PROGRAM_TEMPLATE = "megatron/program.sh.j2"

    def unsupported(self) -> list[str]:
        out = super().unsupported()
        if self.deepep_on_amd():
            # Megatron's flex dispatcher imports deep_ep, whose kernels are CUDA-only
            out.append("`moe_dispatcher` = flex on AMD: Megatron's DeepEP backend is CUDA-only; the primus "
                       "framework runs Primus Turbo's DeepEP on ROCm")
        return out

    def render_values(self) -> dict[str, Any]:
        return {"args": self.profile.argv(self.settings), "script": entry_script(self.model)}


class Primus(Framework):
    NAME = "primus"
    SUPPORTED_SCHEDULES = frozenset({"1f1b", "interleaved", "zero_bubble", "zbv"})
    PROGRAM_TEMPLATE = "primus/program.sh.j2"
    TEMPLATES: ClassVar[dict[str, str]] = {"experiment.yaml": "primus/experiment.yaml.j2"}

    def preprocess(self, settings: Settings) -> Settings:
        out = super().preprocess(settings)
        algorithm = PRIMUS_PP_ALGORITHMS.get(self.cand.schedule)
        if algorithm is not None:
            out["patch_primus_pipeline"] = True
            out["pp_algorithm"] = algorithm
            if self.cand.schedule == "zbv":
                # ZBV places two model chunks per rank in a V (Primus: VPP must be 2).
                out["num_virtual_stages_per_pipeline_rank"] = 2
        if self.deepep_on_amd():
            # Primus swaps in Primus Turbo's ROCm DeepEP only when both switches are on, and that
            # dispatcher needs an FP32 router (primus/backends/megatron/patches/turbo)
            out["enable_primus_turbo"] = True
            out["use_turbo_deepep"] = True
            out["moe_router_dtype"] = "fp32"
        if "cuda_graph_impl" in out and "cuda_graph_scope" not in out:
            # Primus's trainer config sets the scope to `full`; the whole layer is written as Megatron's
            # empty scope instead of relying on its deprecated alias
            out["cuda_graph_scope"] = ()
        return out

    def unsupported(self) -> list[str]:
        out = super().unsupported()
        if self.deepep_on_amd() and self.cand.tp > 1:
            out.append("`moe_dispatcher` = flex on AMD with TP > 1: Primus Turbo's DeepEP dispatcher runs only "
                       "at tensor-parallel size 1")
        if self.cand.cuda_graph == "full":
            # Primus hands YAML values to Megatron's namespace unconverted: the scope stays the string
            # "full_iteration", and megatron/training/training.py (core_v0.16.1) wraps the iteration
            # only when it finds CudaGraphScope.full_iteration there, so no graph would be captured.
            out.append(
                "`cuda_graph` = full: Primus passes `cuda_graph_scope` to Megatron as text, and Megatron's "
                "training loop captures the full-iteration graph only for its enum value; use "
                "`attn_moe_router`/`attn`, or the megatron framework"
            )
        return out

    def overrides(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for dest, setting in self.settings.items():
            key = self.profile.dest(dest)
            value: Any = setting
            if dest == "window_size" and isinstance(setting, str):
                # On the command line Megatron parses "(127,0)"; Primus hands YAML values to it as
                # they are, so the pair goes in as a list (as Primus's gpt-oss configs write it).
                value = [int(part) for part in setting.strip("()").split(",")]
            elif dest in DATA_PATHS and isinstance(setting, tuple):
                value = " ".join(setting)
            elif isinstance(setting, tuple):
                value = list(setting)
            # Primus's trainer config names the training corpus train_data_path.
            out["train_data_path" if key == "data_path" else key] = value
        if self.model.hybrid:
            # Primus runs pretrain_mamba's model and data providers for model_type mamba
            out["model_type"] = "mamba"
        return out

    def experiment(self) -> dict[str, Any]:
        return {
            "work_group": "primusc",
            "user_name": "primusc",
            "exp_name": self.variables.job_name,
            "workspace": "./output",
            "modules": {
                "pre_trainer": {
                    "framework": "megatron",
                    "config": "pre_trainer.yaml",
                    # Primus's generic decoder card; every architecture field is overridden below.
                    "model": "language_model.yaml",
                    "overrides": self.overrides(),
                }
            },
        }

    def render_values(self) -> dict[str, Any]:
        text = yaml.safe_dump(self.experiment(), sort_keys=False, allow_unicode=False, width=10**6)
        return {"experiment_yaml": text}


FRAMEWORKS: dict[str, type[Framework]] = {f.NAME: f for f in (Megatron, Primus)}
