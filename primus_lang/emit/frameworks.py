"""Frameworks: what each node runs. One class per framework, capability flags first (sqlglot style).

A framework turns the candidate into settings (``arguments``), refuses what it cannot express, and
names the templates that render its program: the bash fragment defining ``WORKDIR``, ``SCRIPT`` and
``ARGS`` for the per-node script, plus any files of its own (Primus's experiment YAML).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import yaml

from primus_lang.diagnostics import CompileError
from primus_lang.emit.arguments import (
    Setting,
    Settings,
    entry_script,
    megatron_settings,
    model_feature_problems,
)
from primus_lang.emit.bridge import (
    ARCHITECTURE,
    BRIDGE_DEFAULTS,
    BRIDGE_MODELS,
    BRIDGE_SCRIPT,
    NEEDS,
    bridge_passthrough,
    hydra_text,
    hydra_value,
    keeps_precision_aware,
    overrides,
    paths,
    precision_name,
    precision_overrides,
    precision_repairs,
)
from primus_lang.emit.bridge_recipes import BridgeRecipe, recipes
from primus_lang.emit.context import VARIABLES, Variables
from primus_lang.emit.launch_rules import LeftOut, Unrun, settle
from primus_lang.emit.primus_configs import (
    DEEPEP_SWITCHES,
    GENERIC_CARD,
    PRIMUS_CARDS,
    PRIMUS_GPUS,
    TURBO_SWITCHES,
    overlaps_shared_experts,
)
from primus_lang.emit.profiles import Profile, format_setting, profile_for
from primus_lang.frameworks import bridge, megatron, megatron_of, primus, reading, spelling
from primus_lang.ir import Candidate, Cluster, Model, derived
from primus_lang.ir.model import card_fields
from primus_lang.ir.run import Run
from primus_lang.ir.site import Site

# a space's passthrough: settings carried to the launch files as written
Passthrough = tuple[tuple[str, bool | int | float | str], ...]

# Megatron's schedule in samples and its iteration-based counterparts, which validate_args refuses
# beside any of the first (megatron/training/arguments.py, core_v0.16.1)
SAMPLE_SCHEDULE = frozenset({"train_samples", "lr_decay_samples", "lr_warmup_samples"})
ITERATION_SCHEDULE = frozenset({"train_iters", "lr_decay_iters", "lr_warmup_iters"})
# where a Megatron-Bridge launch saves and loads checkpoints: the launch's own (`checkpoint_dir`, else none)
CHECKPOINT_FIELDS = ("checkpoint.save", "checkpoint.load")
CHECKPOINT_DESTS = ("save", "load")  # Megatron's names of the same
# Megatron's nargs='*' data paths; Primus splits these strings on whitespace itself
DATA_PATHS = frozenset({"data_path", "train_data_path", "valid_data_path", "test_data_path"})
# the schedules only Primus's patched pipeline runs, as its `pp_algorithm` names them
PRIMUS_PP_ALGORITHMS = {s: a for a, s in spelling.PRIMUS_SCHEDULES.items() if s in ("zero_bubble", "zbv")}


class Framework:
    NAME: ClassVar[str] = ""
    SUPPORTED_SCHEDULES: ClassVar[frozenset[str]] = frozenset({"1f1b", "interleaved"})
    SUPPORTED_ACTIVATIONS: ClassVar[frozenset[str]] = frozenset({"swiglu", "quick_geglu", "gelu", "squared_relu"})
    # Megatron's --disable-bias-linear covers every linear layer, router and experts included.
    SUPPORTS_SEPARATE_EXPERT_BIAS: ClassVar[bool] = False
    PROGRAM_TEMPLATE: ClassVar[str] = ""
    PREPARE_TEMPLATE: ClassVar[str] = ""  # run on each node in its WORKDIR before the launch ("" for none)
    # output path -> template, for files only this framework writes
    TEMPLATES: ClassVar[dict[str, str]] = {}
    # settings the framework reads itself, for one that hands Megatron the rest by argparse dest
    # (None: a command line of flags, each checked against the version's parser)
    OWN_SETTINGS: ClassVar[frozenset[str] | None] = None
    # whether the launch hands its settings to Megatron-LM's argument parser (whose flags and choices at
    # the version must then hold); Bridge writes megatron-core's config fields, checked against its own
    READS_MEGATRON_ARGUMENTS: ClassVar[bool] = True

    def __init__(self, model: Model, cluster: Cluster, cand: Candidate, variables: Variables,
                 run: Run | None = None, site: Site | None = None,
                 passthrough: Passthrough = (), primus_experiment: bool = False) -> None:
        self.model, self.cluster, self.cand, self.variables = model, cluster, cand, variables
        self.run, self.site = run, site
        # the space's recipe is a Primus experiment: its settings run over Primus's presets as they did
        self.primus_experiment = primus_experiment
        # an imported Bridge recipe's own settings (its name, its fields without a Megatron
        # argument) are the bridge framework's alone; the others are told so (W7020)
        self.bridge_only = tuple((k, v) for k, v in passthrough if bridge_passthrough(k) is not None)
        passthrough = tuple((k, v) for k, v in passthrough if bridge_passthrough(k) is None)
        self.profile: Profile = profile_for(self.megatron_version(variables))
        self.settings: Settings = self.preprocess(megatron_settings(model, cluster, cand, variables, run, site))
        if self.settings.get("tokenizer_type") == "NullTokenizer" and spelling.CARD["vocab"] in self.settings:
            # the card's vocabulary, less the end-of-document token this release's null tokenizer adds
            self.settings[spelling.CARD["vocab"]] = model.vocab - megatron.null_tokenizer_extra(self.megatron_version(variables))
        self.settings.update(self.profile.implied(self.settings))
        own = dict(self.settings)
        # a space's passthrough (an imported recipe's unmodelled settings) replaces what it names and
        # follows the rest, as the recipe wrote it
        self.settings.update(self.carried(dict(passthrough)))
        carried = {k for k, _ in passthrough}
        # where the launch saves and loads is its own (`checkpoint_dir`): a recipe's folder, named for its own
        # layout, would have the run save where it does not load from. But a recipe that fine-tunes loads its
        # pretrained weights from its `load` (`--finetune`: weights only, from iteration 0): that stays, and the
        # launch's folder is where it saves
        tunes = "load" in carried and self.settings.get("finetune") is True
        recipe_load = self.settings.get("load")
        self.settings.update({k: own[k] for k in (("save",) if tunes else (*CHECKPOINT_DESTS, "finetune")) if k in own})
        # a recipe's own `load` the launch's folder replaces: said (W7025), since the run then starts from that
        # folder, not from the checkpoint the recipe resumed (a re-trial's continued pretraining started afresh)
        replaced = [Unrun("load", recipe_load, "the launch saves and loads in its own `checkpoint_dir`, "
                          f"`{own['load']}`, and resumes from there, not from the recipe's folder (copy the recipe's "
                          "checkpoint there to continue it)", "docs/emit.md, checkpoint_dir")
                    ] if "load" in carried and not tunes and "load" in own and recipe_load != own["load"] else []
        self.recipe_checkpoints = frozenset(k for k in CHECKPOINT_DESTS if k in carried and k not in own)
        # what the user's own recipe carried: Primus drops a name Megatron lacks as the recipe's run did
        self.carried_keys = frozenset(carried)
        if DATA_PATHS & carried or (DATA_PATHS & set(own) and "mock_data" in carried):
            # the recipe's corpus, or the user's (`--var data_path`, the run block's) over the recipe's mock
            # data: Megatron-LM asserts a single data source
            self.settings.pop("mock_data", None)
        if carried & {"tokenizer_type", "tokenizer_model", "vocab_file"}:
            # the recipe's tokenizer, not the null tokenizer of the card's vocabulary; Megatron's
            # NullTokenizer has no vocabulary of its own and asserts one is given
            null = self.settings.get("tokenizer_type") == "NullTokenizer"
            for dest in ("tokenizer_type", "vocab_size"):
                if dest not in carried and not (dest == "vocab_size" and null):
                    self.settings.pop(dest, None)
            if null and own.get("tokenizer_model") and "tokenizer_type" in carried:
                # the user's tokenizer (`--var tokenizer_model`) over the recipe's null one, which reads no file
                # and, given a model, stops at start without a vocabulary
                self.settings["tokenizer_type"] = own["tokenizer_type"]
        if "wandb_project" in self.settings:
            self.settings.update(self.wandb())
        if carried & SAMPLE_SCHEDULE:
            # a recipe that counts training in samples: Megatron asserts no iteration-based setting
            # beside it ("expected sample-based training"), so the throughput run's are left out
            for dest in ITERATION_SCHEDULE - carried:
                self.settings.pop(dest, None)
        # a carried setting the framework itself refuses beside this candidate's (W7025, as below)
        self.left_unrun: list[Unrun] = replaced + self.unrun(frozenset(carried))
        # what the version's validate_args would stop at start: a carried setting it refuses beside this
        # candidate's is left out (W7025); primusc's own settings breaking a rule refuse the emission
        self.left_out: list[LeftOut] = []
        self.rule_problems: list[str] = []
        if self.READS_MEGATRON_ARGUMENTS:
            self.left_out, self.rule_problems = settle(self.settings, own, frozenset(carried), self.profile,
                                                       self.beneath())

    def setting_text(self, key: str, value: Setting) -> str:
        """A setting as this framework's launch writes it: a command line's flag (``--use-nccl-ub``,
        ``--ckpt-format fsdp_dtensor``)."""
        if isinstance(value, bool):
            return self.profile.switch(key, value) or f"{self.profile.flag(key)} {format_setting(value)}"
        return f"{self.profile.flag(key)} {format_setting(value)}"

    def wandb(self) -> Settings:
        """What a Weights & Biases project needs beside it: Megatron-LM stops at start on a project without an
        experiment name (global_vars.py, _set_wandb_writer); primusc names it after the job."""
        return {} if "wandb_exp_name" in self.settings else {"wandb_exp_name": self.variables.job_name}

    def beneath(self) -> dict[str, Any]:
        """What the framework sets where the launch does not (argparse dest -> value): nothing beyond
        Megatron-LM's own defaults for a command line."""
        return {}

    def unrun(self, carried: frozenset[str]) -> list[Unrun]:
        """Carried settings this framework refuses at start beside the candidate's, taken out of the launch
        (none but Primus's: ``Primus.unrun``)."""
        return []

    def megatron_version(self, variables: Variables) -> str:
        """The Megatron-LM whose flags this framework's launch hands on (frameworks.target)."""
        return megatron_of(self.NAME, variables.megatron_version, variables.bridge_version)

    def carried(self, passthrough: dict[str, bool | int | float | str]) -> Settings:
        # a multi-word value of a flag that takes a list (a data blend) is its several arguments; any
        # other flag's (a run name with spaces, a batch-size schedule) is one argument, as the recipe
        # quoted it
        lists = megatron.list_dests(self.profile.name)
        switches = megatron.switch_dests(self.profile.name)
        out: Settings = {}
        for k, v in passthrough.items():
            if k in switches and not isinstance(v, bool) and str(v).lower() in _TRUTH:
                out[k] = _TRUTH[str(v).lower()]  # a Primus YAML writes a switch as 0 or 1
            elif isinstance(v, str) and len(v.split()) > 1 and k in lists:
                out[k] = tuple(v.split())
            else:
                out[k] = v
        return out

    def preprocess(self, settings: Settings) -> Settings:
        return self.profile.complete(settings)

    @classmethod
    def model_problems(cls, model: Model, passthrough: Passthrough = ()) -> list[str]:
        """What this framework cannot build of the model whatever the candidate: ``plan`` asks
        before it searches, so a refused card costs no search."""
        out: list[str] = []
        if model.activation == "geglu" and "geglu" not in cls.SUPPORTED_ACTIVATIONS:
            # megatron-core builds it (gated_linear_unit with gelu, as Megatron-Bridge's Gemma providers do),
            # but Megatron-LM's command line gates only SiLU (--swiglu) and the sigmoid-approximated
            # quick GELU (--quick-geglu, gpt-oss's)
            out.append("`activation` = geglu: Megatron-LM's command line has --swiglu and --quick-geglu (a "
                       "sigmoid approximation of GELU), no flag for a gated tanh-GELU")
        elif model.activation not in cls.SUPPORTED_ACTIVATIONS:
            out.append(f"`activation` = {model.activation}: Megatron has no flag for this activation")
        out += model_feature_problems(model)
        moe = model.moe
        if moe is not None and not cls.SUPPORTS_SEPARATE_EXPERT_BIAS:
            for name, value in (("expert_bias", moe.expert_bias), ("router_bias", moe.router_bias)):
                if value != model.bias:
                    out.append(
                        f"`moe.{name}` = {str(value).lower()} with `bias` = {str(model.bias).lower()}: "
                        "Megatron gives experts and the router biases exactly when every linear has them"
                    )
        return out

    def repairs(self) -> dict[str, object]:
        """Knob values with which this framework would express the candidate where it cannot as it is,
        where one exists (a Bridge precision given by name gathers FP8 weights whatever the knob says):
        what ``emit.nearest_expressible`` tries. Empty: none known."""
        return {}

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
        if self.cand.precision == "fp8" and self.cand.fp8_recipe == "rowwise":
            # torchao's rowwise scaling (torchtitan); Transformer Engine, which Megatron, Primus and
            # Bridge train FP8 with, scales per tensor, per 1x128/128x128 block or per 32 values (MX)
            out.append(f"`fp8_recipe` = rowwise: torchao's rowwise FP8 recipe (torchtitan) has no "
                       f"Transformer Engine equivalent, which {self.NAME} trains FP8 with; use `blockwise` "
                       "(per-block scales) or `tensorwise`")
        out += self.model_problems(self.model, self.bridge_only)
        if self.READS_MEGATRON_ARGUMENTS:
            own = None if self.OWN_SETTINGS is None else self.OWN_SETTINGS | self.carried_keys
            out += self.rule_problems + self.profile.problems(self.settings, own)
        else:
            out += self.profile.rule_problems(self.settings)
        return list(dict.fromkeys(out))

    def render_values(self) -> dict[str, Any]:
        return {}

    def unknown_fields(self) -> list[str]:
        """Settings carried for this framework that name none of its fields (P7020)."""
        return []

    def deepep_on_amd(self) -> bool:
        """The flex dispatcher (written with the DeepEP backend) on an AMD cluster."""
        return self.cluster.gpu.vendor == "amd" and self.model.moe is not None and self.cand.moe_dispatcher == "flex"


class Megatron(Framework):
    NAME = "megatron"
    PROGRAM_TEMPLATE = "megatron/program.sh.j2"

    def preprocess(self, settings: Settings) -> Settings:
        out = super().preprocess(settings)
        grads = spelling.PARTS["main_grad_dtype.megatron_fsdp"]
        if (out.get(spelling.PARTS["sharding.fsdp"]) is True and grads not in out
                and grads in megatron.by_dest(self.profile.name)
                and megatron.at_least(self.profile.name, megatron.FSDP_MAIN_GRADS_AS_GIVEN)):
            # From this release Megatron-FSDP keeps its gradients in the dtype its flag names, and its
            # default (`auto`) is the parameters' dtype, BF16, whatever FP32 accumulation says
            # (MixedPrecisionPolicy, _resolve_group_grad_dtype): the candidate's dtype is written out
            out[grads] = self.cand.main_grad_dtype
        return out

    def unsupported(self) -> list[str]:
        out = super().unsupported()
        if self.deepep_on_amd():
            # Megatron's flex dispatcher imports deep_ep, whose kernels are CUDA-only
            out.append("`moe_dispatcher` = flex on AMD: Megatron's DeepEP backend is CUDA-only; the primus "
                       "framework runs Primus Turbo's DeepEP on ROCm")
        lacks = megatron.tokenizer_lacks(self.settings)
        if lacks:
            files = " and ".join(f"`{d}`" for d in lacks)
            give = ("pass `--var tokenizer_model=...` with the tokenizer's name or file" if "tokenizer_model" in lacks
                    else f"give {files} in the space's passthrough")
            out.append(f"`tokenizer_type` {self.settings['tokenizer_type']} reads {files}, which the launch does not "
                       f"have: Megatron-LM stops at start building it (build_tokenizer); {give}, or leave "
                       "`tokenizer_type` unset for the null tokenizer of the card's vocabulary (mock data)")
        return out

    def render_values(self) -> dict[str, Any]:
        script = self.profile.hybrid_script if self.model.hybrid else entry_script(self.model)
        return {"args": self.profile.argv(self.settings), "script": script}


@functools.cache
def _pretrainer() -> dict[str, Any]:
    """Primus's pre-trainer preset at the release its launches run (read once: every launch asks)."""
    return primus.preset("modules", primus.PRETRAINER, primus.DEFAULT_VERSION) or {}


CONSOLE_LEVEL = "stderr_sink_level"
WORK_GROUP = "primusc"  # the experiment's work group and user name, which Primus's paths hold


class Primus(Framework):
    NAME = "primus"
    SUPPORTED_SCHEDULES = frozenset({"1f1b", "interleaved", "zero_bubble", "zbv"})
    PROGRAM_TEMPLATE = "primus/program.sh.j2"
    PREPARE_TEMPLATE = "primus/prepare.sh.j2"
    TEMPLATES: ClassVar[dict[str, str]] = {"experiment.yaml": "primus/experiment.yaml.j2"}
    # Primus's own settings: what its presets define beyond Megatron's arguments (frameworks/primus)
    OWN_SETTINGS = frozenset(_pretrainer()) | {"model_type"}

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
        out.update(self.turbo_switches())
        # Primus binds print() to DEBUG-level logging (primus/core/runtime/logging.py, debug_rank_all) and
        # its console sink logs from INFO (module_base.yaml's stderr_sink_level): Megatron's arguments
        # block and iteration lines would reach only each rank's debug.log, not the job's output that
        # `learn` and `calibrate-log` read. Primus's own example experiments set DEBUG; a recipe's own
        # level, carried, replaces this.
        out[CONSOLE_LEVEL] = "DEBUG"
        if out.get(spelling.CARD["position"]) not in (None, "rope"):
            # Primus's generic card turns the legacy switch off (language_model.yaml, add_position_embedding:
            # false), and Megatron-LM refuses it beside any position type but RoPE ("--no-position-embedding is
            # deprecated", validate_args at the commits Primus pins): a Mamba hybrid's `none` needs it on, as
            # Primus's own hybrid cards set it
            out["add_position_embedding"] = True
        if "save" in out:
            # Megatron's --exit-on-missing-checkpoint is on in Primus's trainer preset (trainer_base.yaml):
            # the first run of a launch that loads where it saves would exit before training, as 0
            out["exit_on_missing_checkpoint"] = False
        if overlaps_shared_experts(primus_card(self.model)):
            # The card overlaps the shared experts with the dispatch, which megatron-core allows only
            # with the alltoall dispatcher and without EP overlap or shared-expert recomputation, and
            # which Primus Turbo's DeepEP refuses; primusc's account and projection run them in line.
            out["moe_shared_expert_overlap"] = False
        if self.cand.sharding == "fsdp":
            out = self.torch_fsdp2(out)
        if "cuda_graph_impl" in out and "cuda_graph_scope" not in out:
            # Primus's trainer config sets the scope to `full`; the whole layer is written as Megatron's
            # empty scope instead of relying on its deprecated alias
            out["cuda_graph_scope"] = ()
        return out

    def unrun(self, carried: frozenset[str]) -> list[Unrun]:
        return self._unrun_deepep(carried) + self._unrun_listed_recompute(carried)

    def _unrun_deepep(self, carried: frozenset[str]) -> list[Unrun]:
        """A recipe's switches that turn Primus Turbo's DeepEP on, for a candidate of another dispatcher where
        Primus would run it: at TP 1 with Primus Turbo on, Primus swaps in DeepEP and the flex dispatcher beside
        `use_turbo_deepep` whatever `moe_token_dispatcher_type` says, and sync-free MoE from stage 2 sets
        `use_turbo_deepep` itself (rocm_arg_validation.py), so the launch would run flex. DeepEP is switched
        off and the stage lowered to 1, which keeps its fused router and permutation (they need no DeepEP);
        DeepEP's other settings do nothing without it and stay as the recipe wrote them."""
        def on(key: str) -> bool:
            return _TRUTH.get(str(self.settings.get(key)).lower(), False)  # a Primus YAML writes 1 or true

        if (self.model.moe is None or self.cand.moe_dispatcher == "flex" or self.cand.tp != 1
                or not on("enable_primus_turbo")):
            return []
        where = "primus/backends/megatron/patches/turbo/moe_dispatcher_patches.py (v26.5.1)"
        why = f"Primus would run Primus Turbo's DeepEP (the flex dispatcher), where this candidate's `moe_dispatcher` is " \
              f"{self.cand.moe_dispatcher}"
        out = []
        if "use_turbo_deepep" in carried and on("use_turbo_deepep"):
            self.settings["use_turbo_deepep"] = False
            out.append(Unrun("use_turbo_deepep", True, why, where))
        stage = self.settings.get("turbo_sync_free_moe_stage")
        if "turbo_sync_free_moe_stage" in carried and isinstance(stage, int) and stage >= 2:
            self.settings["turbo_sync_free_moe_stage"] = 1
            out.append(Unrun("turbo_sync_free_moe_stage", stage, why + " (stage 1 is written: its fused router and "
                             "permutation need no DeepEP)", "primus/backends/megatron/patches/args/"
                             "rocm_arg_validation.py (v26.5.1): stages 2 and 3 set use_turbo_deepep"))
        return out

    def _unrun_listed_recompute(self, carried: frozenset[str]) -> list[Unrun]:
        """A recipe's listed recomputation (``recompute_layer_ids``) runs where the candidate recomputes what
        the list reads as (``reading.listed_recompute``): Primus asserts no method beside it and reads no count
        (recompute_layer_patches.py, v26.5.1; its preset leaves both unset). A candidate that recomputes
        otherwise runs its own recomputation, and the list, which Primus would refuse beside it, is left out."""
        listed = spelling.PARTS["recompute.layer_ids"]
        if listed not in carried:
            return []
        chunks = self.cand.pp * derived.virtual_stages(self.cand.schedule, self.cand.vpp)
        try:
            ids = reading.listed_layers(self.settings[listed])
        except reading.Unread:
            ids = ()
        if not ids:  # an empty list is Primus's null: the recipe's method and count ran
            self.settings.pop(listed)
            return []
        reads_as = reading.listed_recompute(ids, chunks)[0]
        if self.cand.recompute == reads_as:
            for part in ("recompute.method", "recompute.layers"):
                self.settings.pop(spelling.PARTS[part], None)
            return []
        value = self.settings.pop(listed)
        return [Unrun(listed, value,
                      f"the list reads as `recompute = {reads_as}`, not this candidate's `{self.cand.recompute}`, "
                      f"and Primus refuses it beside any other recomputation",
                      "primus/backends/megatron/patches/recompute_layer_patches.py (v26.5.1)")]

    def torch_fsdp2(self, settings: Settings) -> Settings:
        """FSDP as Primus's own example configs run it (examples/megatron/configs/MI300X/
        llama3.1_70B-BF16-pretrain.yaml and the other 70B/32B ones): torch FSDP2 rather than
        Megatron-FSDP, with what megatron/training/arguments.py (core_v0.16.1) asserts beside it: no
        distributed optimizer (so no parameter-gather overlap), no gradient-accumulation fusion, and a
        torch_dist or torch_dcp checkpoint."""
        out: Settings = {}
        for dest, value in settings.items():
            if dest == "use_megatron_fsdp":
                out["use_torch_fsdp2"] = True
            elif dest != "data_parallel_sharding_strategy":  # a Megatron-FSDP setting
                out[dest] = value
        out["use_distributed_optimizer"] = False
        out["overlap_param_gather"] = False
        out["gradient_accumulation_fusion"] = False
        out["ckpt_format"] = "torch_dcp" if self.run is not None and self.run.ckpt_format == "torch_dcp" \
            else "torch_dist"
        return out

    def turbo_switches(self) -> Settings:
        """The Primus Turbo switches Primus's own example sets for this GPU, model card and precision
        (primus_configs.TURBO_SWITCHES), where the candidate runs what they switch."""
        family = gpu_family(self.cluster.gpu.name)
        if self.cluster.gpu.vendor != "amd" or family is None:
            return {}
        entry = TURBO_SWITCHES.get((family, primus_card(self.model), self.cand.precision))
        if entry is None:
            return {}
        deepep = self.deepep_on_amd()
        out: Settings = {}
        for switch, value in entry[1].items():
            if switch in DEEPEP_SWITCHES and not deepep:
                continue
            if switch == "use_turbo_attention" and value and self.cand.attention != "flash":
                # Turbo's attention is a flash kernel; the unfused path keeps the scores the account counts
                continue
            if switch == "turbo_deepep_num_cu" and self.cand.ep >= 16:
                # Primus's validation allows at most 32 CUs (its default) for DeepEP at EP >= 16
                continue
            out[switch] = value
        return out

    def unsupported(self) -> list[str]:
        out = super().unsupported()
        kind = self.settings.get("tokenizer_type")
        if kind in primus.REUSED_TOKENIZER_NAMES and not self.primus_experiment:
            out.append(f"`tokenizer_type` = {kind}: Megatron-LM's own tokenizer of that name (the recipe's), which "
                       "Primus reads as a Hugging Face tokenizer of `tokenizer_model`; the megatron framework runs "
                       "it, or give Primus a Hugging Face tokenizer (`tokenizer_type = \"HuggingFaceTokenizer\"`)")
        if self.deepep_on_amd() and self.cand.tp > 1:
            out.append("`moe_dispatcher` = flex on AMD with TP > 1: Primus Turbo's DeepEP dispatcher runs only "
                       "at tensor-parallel size 1")
        if self.cand.sharding == "fsdp" and self.cand.fp8_param_gather:
            # Megatron-LM's validate_args (arguments.py, the commit Primus v26.5.1 pins, in its
            # use_torch_fsdp2 block) turns it off with a warning on Transformer Engine >= 2.0, which every
            # Primus image runs: the launch would gather BF16 weights the projection had counted as FP8
            out.append("`fp8_param_gather` = true with `sharding` = fsdp: Primus runs FSDP as torch FSDP2, where "
                       "Megatron-LM turns FP8 parameter gathers off on Transformer Engine 2.0 and later (and gathers "
                       "BF16 weights); set `fp8_param_gather = false`, or shard with `dist_opt`")
        if self.cand.cuda_graph == "full" and self.settings.get("cuda_graph_impl") != "full_iteration":
            # Primus hands YAML values to Megatron's namespace unconverted: the scope stays the string
            # "full_iteration", and megatron/training/training.py (core_v0.16.1) wraps the iteration
            # only when it finds CudaGraphScope.full_iteration there, so no graph would be captured.
            # core_v0.19 names it by --cuda-graph-impl full_iteration, a string it compares as such.
            out.append(
                "`cuda_graph` = full: Primus passes `cuda_graph_scope` to Megatron as text, and the Megatron-LM "
                "Primus pins captures the full-iteration graph only for its enum value; use "
                "`attn_moe_router`/`attn`, or the megatron framework (`--var megatron_version=core_v0.19`)"
            )
        return out

    def carried(self, passthrough: dict[str, bool | int | float | str]) -> Settings:
        # a command line's value is text; Primus hands YAML values to Megatron as they are, so a
        # number or a flag goes in typed, as the experiment would write it, a list flag's words as a
        # list, and a list the recipe wrote in brackets as that list
        lists = megatron.list_dests(self.profile.name)
        out: Settings = {}
        for k, v in passthrough.items():
            if isinstance(v, str) and k in lists:
                # a corpus blend stays text: its weights and paths are words of one string (below)
                out[k] = tuple(v.split()) if k in DATA_PATHS else tuple(_typed(w) for w in v.split())
                continue
            typed = _yaml_value(v) if isinstance(v, str) and v.strip() else v
            if isinstance(typed, list) and all(isinstance(x, (bool, int, float, str)) for x in typed):
                out[k] = tuple(typed)
            else:
                out[k] = typed if isinstance(typed, (bool, int, float)) else v
        return out

    def overrides(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for dest, setting in self.settings.items():
            # Primus sets Megatron's parsed arguments by dest, dropping other names: `--norm-epsilon` is read as
            # `layernorm_epsilon` by the Megatron-LM Primus pins, a recipe's `--no-gradient-accumulation-fusion`
            # as `gradient_accumulation_fusion` false
            stored = self.profile.argument(dest, setting)
            key, kept = stored if stored is not None else (self.profile.dest(dest), setting)
            value: Any = kept
            if dest == "window_size" and isinstance(setting, str):
                # On the command line Megatron parses "(127,0)"; Primus hands YAML values to it as
                # they are, so the pair goes in as a list (as Primus's gpt-oss configs write it).
                value = [int(part) for part in setting.strip("()").split(",")]
            elif dest in DATA_PATHS and isinstance(setting, tuple):
                value = " ".join(map(str, setting))
            elif isinstance(setting, tuple):
                value = list(setting)
            # Primus's trainer config names the training corpus train_data_path.
            out["train_data_path" if key == "data_path" else key] = value
        if self.model.hybrid:
            # Primus runs pretrain_mamba's model and data providers for model_type mamba
            out["model_type"] = "mamba"
        # a recipe counted in samples leaves out the iteration settings Primus's preset would give it
        out.update(self.unset_by_samples())
        return out

    def unset_by_samples(self) -> dict[str, Any]:
        """The iteration settings (``train_iters``, ...) Primus's pre-trainer preset gives, which a recipe that
        counts training in samples must not have (Megatron asserts "expected sample-based training"): the
        experiment writes each at Megatron-LM's own default (``train_iters`` null, ``lr_warmup_iters`` 0),
        since Primus hands a null on as None."""
        if not self.carried_keys & SAMPLE_SCHEDULE:
            return {}
        preset = _pretrainer()
        dests = megatron.by_dest(self.profile.name)
        out = {}
        for dest in sorted(ITERATION_SCHEDULE - self.carried_keys):
            default = dests[dest][0].default if dest in dests else None
            if preset.get(dest) != default:
                out[dest] = default
        return out

    def beneath(self) -> dict[str, Any]:
        """Primus's pre-trainer preset, which its launch merges under the experiment's overrides, with what
        the experiment writes in its place (``unset_by_samples``)."""
        return {**_pretrainer(), **self.unset_by_samples()}

    def setting_text(self, key: str, value: Setting) -> str:
        """An experiment's override: ``ckpt_format: fsdp_dtensor``."""
        return f"{self.profile.dest(key)}: {format_setting(value)}"

    def wandb(self) -> Settings:
        """A W&B project is logged to: Primus's preset turns W&B off (``disable_wandb``) unless the experiment
        says otherwise, and names the run after the experiment itself. A Primus experiment's own project stays
        as it ran: off where it did not say, since its preset's default held."""
        from_experiment = self.primus_experiment and "wandb_project" in self.carried_keys
        return {} if "disable_wandb" in self.carried_keys or from_experiment else {"disable_wandb": False}

    def experiment(self) -> dict[str, Any]:
        overrides = self.overrides()
        workspace = "./output"
        saved = overrides.get("save")
        resumes = overrides.get("load") == saved
        if isinstance(saved, str) and saved and (resumes or overrides.get("finetune") is True):
            # Primus saves under <workspace>/<work_group>/<user_name>/<exp_name>/checkpoints whatever `save`
            # says (checkpoint_path_patches.py; launcher/config.py): the workspace is the checkpoint folder, so
            # the checkpoints land there (a container's mount, not its own ./output), and a run that resumes
            # loads where Primus saves; one that fine-tunes keeps loading its pretrained weights
            workspace = saved
            where = f"{saved.rstrip('/')}/{WORK_GROUP}/{WORK_GROUP}/{self.variables.job_name}/checkpoints"
            overrides["save"] = where
            if resumes and "load" not in self.recipe_checkpoints:
                # the launch's own folder (`checkpoint_dir`); an imported experiment's `load` is read as Primus
                # reads it, where its checkpoints already are
                overrides["load"] = where
        return {
            "work_group": WORK_GROUP,
            "user_name": WORK_GROUP,
            "exp_name": self.variables.job_name,
            "workspace": workspace,
            "modules": {
                "pre_trainer": {
                    "framework": "megatron",
                    "config": primus.PRETRAINER,
                    # The model's own Primus card where there is one (it brings what primusc does not
                    # say: norm_epsilon, init_method_std...), else the generic decoder card; every
                    # architecture field is overridden below either way.
                    "model": primus_card(self.model),
                    "overrides": overrides,
                }
            },
        }

    def render_values(self) -> dict[str, Any]:
        text = yaml.safe_dump(self.experiment(), sort_keys=False, allow_unicode=False, width=10**6)
        return {"experiment_yaml": text}


class Bridge(Framework):
    """Megatron-Bridge's recipe entry point with the candidate as ConfigContainer overrides
    (emit/bridge.py holds the mapping, its source and the recorded fields)."""

    NAME = "bridge"
    READS_MEGATRON_ARGUMENTS = False
    PROGRAM_TEMPLATE = "bridge/program.sh.j2"

    @property
    def version(self) -> str:
        return self.variables.bridge_version

    def recorded(self) -> BridgeRecipe | None:
        return recipes(self.version).get(self.recipe())

    def model_class(self) -> str | None:
        recorded = self.recorded()
        return recorded.model_class if recorded is not None else None

    def preprocess(self, settings: Settings) -> Settings:
        # Bridge pins its own megatron-core: the Megatron-LM flag profiles do not apply, only the rules
        # its megatron-core asserts whatever the launcher (Framework.__init__: Profile.implied)
        out = dict(settings)
        if self.run is None:
            # A throughput run writes Megatron's optimizer defaults out for Megatron and Primus to
            # agree; Bridge's recipe has its own optimizer and schedule, which stand unless the
            # user gave a learning rate (`--var lr`)
            for dest in ("weight_decay", "lr_warmup_iters"):
                out.pop(dest, None)
            if self.variables.lr == VARIABLES["lr"].default:
                out.pop("lr", None)
        return out

    def card(self) -> str | None:
        """The stdlib card the space's model is, as written (its sequence length aside), when
        Bridge has a recipe for it."""
        return bridge_card(self.model)

    def recipe(self) -> str:
        return self.recipe_of(self.model, self.bridge_only)

    @staticmethod
    def recipe_of(model: Model, passthrough: Passthrough) -> str:
        """The recipe a launch names: an imported recipe's own, else the card's."""
        for key, value in passthrough:
            if bridge_passthrough(key) == "":
                return str(value)
        card = bridge_card(model)
        return f"{BRIDGE_MODELS[card]}_pretrain_config" if card is not None else ""

    def overrides(self) -> tuple[list[str], list[str]]:
        """The ``section.field=value`` words, each path as the recipe's model class takes it at the Bridge
        release (frameworks.bridge.spelled), and why a setting cannot be written (P7001)."""
        from primus_lang.emit.arguments import model_settings

        recorded = self.recorded()
        precision = recorded.settings.get("mixed_precision") if recorded is not None else None
        raw = bridge.recipe(recorded.name, self.version) if recorded is not None else None  # its every field
        switch = spelling.PARTS["optimizer_dtype.precision_aware"]
        kept = frozenset({switch}) if raw is not None and keeps_precision_aware(raw.settings) else frozenset()
        # every setting that describes the model is the recipe's (model_settings: whatever the card
        # says, today and as the card grows), beside the routing ARCHITECTURE lists
        architecture = ARCHITECTURE | frozenset(model_settings(self.model, self.cand.seq_len)) - {"seq_length"}
        written, problems = overrides(self.settings, precision if isinstance(precision, str) else None, architecture,
                                      comm_overlap=bool(recorded is not None and recorded.comm_overlap),
                                      version=self.version, kept=kept)
        # the precision's own fields are written by precision_overrides, which knows whether they can be
        written = [(p, v) for p, v in written if not p.startswith("mixed_precision.")]
        if self.cand.pipeline_layout:
            # a layout's stages count the virtual stages, and Megatron-LM takes one of the two; Bridge reads
            # both, and its CommOverlapConfig (EP overlap's assert, the p2p settings) reads the count before
            # megatron-core works it out of the layout: null there had stopped DeepSeek-V3's recipes at start
            vpp = set(paths(spelling.KNOBS["vpp"], self.version))
            written = [(p, hydra_value(self.cand.vpp) if p in vpp and self.cand.vpp > 1 else v)
                       for p, v in written]
        if recorded is not None:
            named, is_config, fields = self.launched_precision(recorded)
            extra, why = precision_overrides(self.settings, named or str(precision), is_config, fields)
            written += extra + self.resets(recorded, raw)
            problems += why
        passed = {bridge_passthrough(key) for key, _ in self.bridge_only}
        if ("tokenizer.tokenizer_type", "NullTokenizer") in written and "tokenizer.vocab_size" not in passed:
            # mock data's tokenizer needs a vocabulary: the card's, which the model's (its Hugging Face
            # config's) is not smaller than, less the end-of-document token its release's null tokenizer adds
            eod = megatron.null_tokenizer_extra(bridge.megatron_version(self.version))
            written.append(("tokenizer.vocab_size", hydra_value(self.model.vocab - eod)))
        if not set(CHECKPOINT_FIELDS) & {p for p, _ in written}:
            # no checkpoint folder: none. The library recipes save under ./nemo_experiments/default/checkpoints
            # every few hundred iterations and at the run's end, and load from there at start (recipes/common.py,
            # training/train.py and setup.py at v0.6.0): a throughput run would end on a save no projection
            # holds, and the next launch from the checkout would resume past its last iteration (an audit's find)
            written += [(field, "null") for field in CHECKPOINT_FIELDS]
        out: list[str] = []
        for path, value in written:
            spelled = path if "=" in path or path == "mixed_precision" else \
                bridge.spelled(path, self.version, self.model_class())
            if spelled is None:
                problems.append(f"`{path}`: Megatron-Bridge {self.version} has no such field for "
                                f"`{self.recipe()}`'s model ({self.model_class() or 'its model'})")
                continue
            out.append(f"{spelled}={value}")
        own = {p for p, _ in written}
        for key, carried in self.bridge_only:
            field = bridge_passthrough(key)
            if field in CHECKPOINT_FIELDS and field in own:
                # the launch's own checkpoint folder (`checkpoint_dir`) over the script's (Framework.__init__)
                continue
            if field and field.startswith("train.") and f"validation.{field[6:]}" in own:
                # TrainingConfig's deprecated copy of a ValidationConfig field is set over it at start
                # (ConfigContainer.validate): a script's train.eval_iters would undo the launch's
                continue
            where = bridge.spelled(field, self.version, self.model_class()) if field else None
            if where is not None:
                out.append(f"{where}={hydra_text(carried)}")
        return out, problems

    def launched_precision(self, recorded: BridgeRecipe) -> tuple[str | None, bool, Mapping[str, object]]:
        """The registered precision the launch names over the recipe's (None: it names none, the recipe's own
        stands), whether the one it runs is the recipe's own config (whose fields a launch overrides), and
        that precision's fields."""
        held = recorded.settings.get("mixed_precision")
        own = held if isinstance(held, str) else None
        name = precision_name(self.settings, self.version, own)
        named = name if name is not None and name != own else None  # bridge.overrides writes it then
        fields = recorded.precision if named is None else bridge.precisions(self.version).get(named, {})
        return named, recorded.precision_is_config and named is None, fields

    def repairs(self) -> dict[str, object]:
        recorded = self.recorded()
        if recorded is None:
            return {}
        _named, is_config, fields = self.launched_precision(recorded)
        # a precision given by name takes no field overrides; the recipe's own config does
        return {} if is_config else precision_repairs(self.settings, fields)

    def resets(self, recorded: BridgeRecipe, raw: bridge.Recipe | None) -> list[tuple[str, str]]:
        """Megatron's default for each knob the candidate leaves at it, where the launched recipe holds
        another (a recipe may keep its main gradients in BF16 or split attention over CP with a2a); and
        what the recipe sets that needs a setting the candidate turns off (``NEEDS``). ``raw``: the recipe's every
        field (``frameworks.bridge.recipe``), not only those primusc reads."""
        out: list[tuple[str, str]] = []
        for dest, off in BRIDGE_DEFAULTS.items():
            path = paths(dest, self.version)[0]
            held = recorded.settings.get(path)
            if dest not in self.settings and held is not None and hydra_value(held) != off:
                out.append((path, off))
        for dest, (path, off) in NEEDS.items():
            if raw is not None and self.settings.get(dest) is False and raw.settings.get(path) not in (None, False):
                out.append((path, off))
        if raw is not None and self.settings.get(spelling.KNOBS["recompute"]) == "selective":
            # megatron-core refuses a layer count beside selective recomputation ("recompute_num_layers must be
            # None"): a recipe's full recomputation (Llama 3's H100 recipes: block, 5) leaves both behind
            for dest in (spelling.PARTS["recompute.layers"], spelling.PARTS["recompute.method"]):
                path = paths(dest, self.version)[0]
                if dest not in self.settings and raw.settings.get(path) is not None:
                    out.append((path, "null"))
        return out

    def unknown_fields(self) -> list[str]:
        return [f"passthrough `{key}` names `{path}`, which is no field of Megatron-Bridge {self.version}'s "
                "ConfigContainer for the recipe's model"
                for key, _ in self.bridge_only if (path := bridge_passthrough(key))
                and bridge.spelled(path, self.version, self.model_class()) is None]

    @classmethod
    def model_problems(cls, model: Model, passthrough: Passthrough = ()) -> list[str]:
        # A library recipe's model is built by Bridge's provider for it, not from Megatron-LM's flags
        # (Gemma 2's gated GELU, soft-capping and post-norms: models/gemma/gemma2_provider.py), so
        # Megatron-LM's reasons never apply here: a card without a recipe gets that reason alone
        card = bridge_card(model)
        recipe = cls.recipe_of(model, passthrough)
        if card is None and not recipe:
            known = ", ".join(sorted(BRIDGE_MODELS))
            megatron = "" if Megatron.model_problems(model) else \
                "; the megatron framework builds this card (`--target megatron+...`)"
            return [f"model `{model.name}`: Bridge builds the model from its recipe, and primusc knows Bridge "
                    f"recipes only for these stdlib cards as written (sequence length aside): {known}{megatron}"]
        if card is None:
            return [f"model `{model.name}`: the recipe `{recipe}` builds its own model; a card "
                    "changed in the space cannot be written as its overrides"]
        return cls.recipe_problems(card, recipe)

    @staticmethod
    def recipe_problems(card: str, recipe: str) -> list[str]:
        """Why a recipe named in the passthrough does not train the space's card (it would launch
        another model than the one projected)."""
        library = f"{BRIDGE_MODELS[card]}_pretrain_config"
        # any release's: whether the launch's release has it is Bridge.unsupported's question
        known = _every_release_recipes()
        recorded = known.get(recipe)
        if recipe == library or (recorded is not None and recorded.card == card):
            return []
        mine = [library, *sorted({r.name for r in known.values() if r.card == card} - {library})]
        whose = f"trains `{recorded.card}`" if recorded is not None else \
            f"is no pretraining recipe of Megatron-Bridge {', '.join(bridge.version_names())}"
        shown = ", ".join(mine[:6]) + (f" and {len(mine) - 6} more" if len(mine) > 6 else "")
        return [f"passthrough `bridge__recipe` = {recipe}: the recipe {whose}, not the space's model "
                f"`{card}`, so the launch would train another model; recipes for `{card}`: {shown}"]

    def unsupported(self) -> list[str]:
        out = super().unsupported()
        if self.deepep_on_amd():
            # the flex dispatcher's DeepEP backend is megatron-core's, whose kernels are CUDA-only
            out.append("`moe_dispatcher` = flex on AMD: Megatron's DeepEP backend is CUDA-only")
        if self.recorded() is None and self.card() is not None:
            named = [r.name for r in _every_release_recipes().values() if r.card == self.card()]
            if self.recipe() not in _every_release_recipes() and named:
                # GPT-3 175B: Bridge has performance recipes of it, and no library recipe the card's stem names
                out.append(f"`{self.card()}` without an imported recipe: Megatron-Bridge has no library recipe "
                           f"`{self.recipe()}`; import one of its recipes (`primusc import-recipe` on a "
                           f"`run_recipe.py --recipe {named[0]}` line), whose launch names it")
            else:
                out.append(f"`bridge__recipe` = {self.recipe()}: Megatron-Bridge {self.version} has no such recipe "
                           f"(`--var bridge_version=` names the release; {', '.join(bridge.version_names())} are "
                           "read)")
        out += self.overrides()[1]
        return list(dict.fromkeys(out))

    def render_values(self) -> dict[str, Any]:
        release = next(v.ref for v in bridge.versions() if v.name == self.version)
        return {"recipe": self.recipe(), "overrides": self.overrides()[0], "script": BRIDGE_SCRIPT,
                "release": release if release.startswith("v") else release[:10]}



FRAMEWORKS: dict[str, type[Framework]] = {f.NAME: f for f in (Megatron, Primus, Bridge)}


_TRUTH = {"true": True, "false": False, "1": True, "0": False}

# Megatron-LM's Weights & Biases settings: a project without an experiment name stops the run at start
# (global_vars._set_wandb_writer, "Please specify the wandb experiment name!")
WANDB_SETTINGS = ("wandb_project", "wandb_exp_name", "wandb_save_dir")


def wandb_disabled(passthrough: Passthrough, primus_experiment: bool = False) -> bool:
    """Whether a Primus experiment turns Weights & Biases off: its own ``disable_wandb``, else (an experiment
    that does not say) the pre-trainer preset's, which is on at every release primusc has read. Its
    `wandb_project` then logs nothing under Primus, and another target leaves it out."""
    written = [v for k, v in passthrough if k == "disable_wandb"]
    if written:
        return _TRUTH.get(str(written[-1]).lower()) is True
    return primus_experiment and _pretrainer().get("disable_wandb") is True


def _yaml_value(text: str) -> Any:
    """``text`` as YAML reads it (a number, a flag, a bracketed list), or the text where YAML cannot."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _typed(word: str) -> bool | int | float | str:
    value = _yaml_value(word)
    return value if isinstance(value, (bool, int, float, str)) else word


@functools.lru_cache(maxsize=256)
def bridge_card(model: Model) -> str | None:
    """The stdlib card with a Bridge recipe that ``model`` is, field for field (name, sequence
    length and provenance aside), else None (cached: a search asks it of every candidate's model,
    which is the space's one)."""
    mine = card_fields(model)
    mine.pop("seq_len", None)
    cards = _bridge_cards()
    # the card of the model's own name first: llama3_1_8b and llama3_8b may agree field for field
    for card, stdlib in sorted(cards.items(), key=lambda item: item[0] != model.name):
        theirs = card_fields(stdlib)
        theirs.pop("seq_len", None)
        if theirs == mine:
            return card
    return None


@functools.cache
def _every_release_recipes() -> dict[str, BridgeRecipe]:
    """The recipes of every release read, by name (a later release's where two have one): built once,
    not per candidate a search or an emission checks (read only)."""
    return {name: r for version in bridge.version_names() for name, r in recipes(version).items()}


@functools.cache
def _bridge_cards() -> dict[str, Model]:
    from primus_lang.lower import stdlib_cards

    cards = stdlib_cards()
    return {name: cards[name][1] for name in BRIDGE_MODELS if name in cards}


def gpu_family(name: str) -> str | None:
    """The Primus example folder's GPU for a profile name (`mi325x`, `mi325x_calibrated`, `mi325x_spec`)."""
    return next((f for f in PRIMUS_GPUS if name == f or name.startswith(f + "_")), None)


def primus_card(model: Model) -> str:
    """Primus's card for the model: its own (primus_configs.PRIMUS_CARDS) when the model is that
    stdlib card as written, its training sequence length aside; else the generic decoder card. A
    card changed in the space (`llama3_1_70b { num_layers = 40 }` keeps the name) gets the generic
    one, since the named card's extra settings would describe another model."""
    card = PRIMUS_CARDS.get(model.name)
    span = model.span
    if card is None or span is None or not span.file.startswith("<stdlib>/"):
        return GENERIC_CARD
    module = span.file.removeprefix("<stdlib>/").removesuffix(".prx").replace("/", ".")
    pristine = _stdlib_model(module, model.name)
    if pristine is None or attrs.evolve(pristine, name=model.name, seq_len=model.seq_len) != model:
        return GENERIC_CARD
    return card


@functools.cache
def _stdlib_model(module: str, name: str) -> Model | None:
    from primus_lang.lower import loads_program

    try:
        program = loads_program(f"import {module} ({name})\nmodel stdlib_card = {name} {{ }}\n", "<primusc>")
    except CompileError:
        return None
    return program.models[0] if program.models else None
