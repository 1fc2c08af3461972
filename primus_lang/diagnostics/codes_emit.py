"""P7: emission — turning a chosen candidate into launch files for a framework and a launcher."""

from primus_lang.diagnostics.core import register

UNSUPPORTED = register(
    "P7001",
    "unsupported-by-target",
    "the target framework or version cannot express a knob of the candidate",
    "Emission never silently runs something different from the chosen candidate. If the target cannot\n"
    "express a knob (the zero-bubble schedule on plain Megatron-LM, DeepEP under a Megatron version\n"
    "without it, a sliding window on core_v0.12), emission stops.\n\n"
    "    schedule : zero_bubble          # with  target megatron + slurm\n\n"
    "Fix: emit for a target that supports it (`--target primus+slurm`), pick another Megatron version\n"
    "profile (`--var megatron_version=core_v0.16`), or take the knob out of the space.",
)

UNKNOWN_TARGET = register(
    "P7002",
    "unknown-target",
    "the emission target is not `<framework>+<launcher>`",
    "Targets are a framework (megatron, primus, bridge) and a launcher (slurm, k8s, local) joined by `+`,\n"
    "for example `--target megatron+slurm` or `target primus + k8s` in the space.",
)

UNKNOWN_VARIABLE = register(
    "P7003",
    "unknown-variable",
    "an emission variable (`--var name=value`) is not one primusc knows",
    "Emission variables fill in what the space does not decide: data path, tokenizer, checkpoint\n"
    "folder, partition, account, time limit, container image, Megatron version profile. `primusc emit\n"
    "--help` and docs/emit.md list them. A misspelt name is refused rather than ignored.",
)

BAD_VARIABLE = register(
    "P7004",
    "invalid-variable",
    "an emission variable's value is not acceptable where it is used",
    "Some values land where quoting cannot protect them (an `#SBATCH` header line, a Kubernetes\n"
    "object name), or must be one of a few choices (the Megatron version profile, the container\n"
    "runtime). Control characters such as newlines are refused everywhere.\n\n"
    "    --var partition='gpu\\n#SBATCH --uid=0'      # refused\n\n"
    "Fix: pass a plain value of the documented form.",
)

ILLEGAL_CANDIDATE = register(
    "P7005",
    "illegal-candidate",
    "the candidate breaks a legality rule and is refused before emission",
    "primusc emits only candidates that pass the same legality rules the checker applies\n"
    "(divisibility of heads by TP, GBS by MBS x DP, pipeline splits...). The notes list each rule.\n"
    "Fix: choose another point, for example one that `primusc plan` ranked.",
)

OUTPUT_NOT_EMPTY = register(
    "P7006",
    "output-not-empty",
    "the output folder holds files primusc did not write",
    "`primusc emit --out DIR` (and `plan`) replace what they wrote there before, as its record\n"
    "`.primusc-written.json` lists it, and refuse to mix their files with others: a file they did not\n"
    "write, or one changed by hand since. Pass `--force` to replace such a file, or choose another folder.",
)

SITE_UNSUPPORTED = register(
    "P7013",
    "site-not-expressible",
    "the space's site profile asks for something the target's launcher cannot do",
    "A site is written once per cluster, so it may hold settings for another launcher; what the\n"
    "chosen launcher would have to drop is refused instead: a volume claim (`claim`) or forwarded\n"
    "variable on Slurm or a single node, a container runtime with the local launcher.\n"
    "Fix: emit for the launcher the site describes, or give the mount a `host` folder.",
)
NULL_TOKENIZER = register(
    "P7014",
    "null-tokenizer-with-data",
    "`--var data_path` names real data while the tokenizer stays NullTokenizer",
    "With real data the run needs the tokenizer the corpus was made with: `--var tokenizer_model=...`\n"
    "(HuggingFaceTokenizer) or `--var tokenizer_type=...`. A `run { ... }` block is checked the same\n"
    "way where it is written (P3038).",
)
PRIMUS_ON_NVIDIA = register(
    "W7001",
    "primus-on-nvidia",
    "the Primus target is chosen for a cluster of NVIDIA GPUs",
    "Primus is built for AMD GPUs on ROCm: its README lists ROCm-compatible AMD GPUs and the ROCm\n"
    "drivers among its prerequisites, ships its runtime as `rocm/primus` images, and its Turbo\n"
    "kernels, DeepEP and argument checks are ROCm's (AMD-AGI/Primus fd1eeab). The launch files are\n"
    "written as asked, but nothing says Primus runs on the NVIDIA nodes they name.\n\n"
    "    target primus + slurm          # on an H100 cluster\n\n"
    "Fix: emit for Megatron-LM on NVIDIA clusters (`--target megatron+slurm`), or target an AMD cluster.",
)
BRIDGE_UNKNOWN_FIELD = register(
    "P7020",
    "bridge-unknown-field",
    "a space's passthrough names a Megatron-Bridge field the recorded ConfigContainer lacks",
    "A passthrough setting `bridge__section__field = value` is written to the bridge target as the\n"
    "override `section.field=value`. Bridge refuses a key its ConfigContainer lacks, so emission\n"
    "checks the field against the fields the recipe's model class has at the launch's Bridge release\n"
    "(frameworks/bridge/recipes.json, read by Bridge's own code) and stops on one that is not there.\n\n"
    "    passthrough { bridge__model__moe_hybridep_num_sms = 32 }\n\n"
    "Fix: correct the field's name, or remove the setting.",
)
BRIDGE_ONLY_DROPPED = register(
    "W7020",
    "bridge-only-setting-dropped",
    "a space imported from a Megatron-Bridge recipe carries settings only Bridge can take",
    "`import-recipe` of a Bridge launch keeps the recipe's name (`bridge__recipe`) and its overrides of\n"
    "fields no Megatron-LM argument holds (`bridge__comm_overlap__...`) in the space's passthrough.\n"
    "The megatron and primus targets write the candidate and the Megatron settings but not these; the\n"
    "warning lists them so the launch is not mistaken for the recipe in every detail.\n\n"
    "Fix: emit with `--target bridge+...` to keep them, or accept the list as what changes.",
)
BRIDGE_ON_AMD = register(
    "W7021",
    "bridge-on-amd",
    "the Megatron-Bridge target is chosen for a cluster of AMD GPUs",
    "Megatron-Bridge's launch scripts and performance recipes run in NVIDIA's NeMo containers\n"
    "(`nvcr.io/nvidia/nemo`, scripts/performance/README.md at Megatron-Bridge 067f987), and its\n"
    "performance recipes are written for H100, B200, B300, GB200 and GB300 GPUs. The launch files are\n"
    "written as asked, but nothing says Bridge runs on the AMD nodes they name.\n\n"
    "    target bridge + slurm          # on an MI325X cluster\n\n"
    "Fix: emit for Primus on AMD clusters (`--target primus+slurm`), or target an NVIDIA cluster.",
)
TIME_LIMIT_SHORT = register(
    "W7022",
    "time-limit-short",
    "the launch's iterations are projected to take longer than the scheduler's time limit",
    "A Slurm job is killed at its time limit (`time_limit`, `#SBATCH --time`), and the work since its last\n"
    "checkpoint is lost with it. `plan` compares the launch's iterations (`train_iters`) at the winner's\n"
    "projected step time, with the start-up allowance, against the limit. Every Slurm launch also tells the\n"
    "framework to stop by itself before the kill (Megatron-LM's and Primus's `exit_duration_in_mins`,\n"
    "Megatron-Bridge's `train.exit_duration_in_mins`): a tenth of the limit (1 to 15 minutes) before it.\n\n"
    "    --var train_iters=2000 --var time_limit=02:00:00   # 2,000 x 5.34 s is about 3 h\n\n"
    "Fix: raise the time limit, lower `train_iters`, or save checkpoints (`--var checkpoint_dir=...`) and\n"
    "run the job again from them.",
)
PRIMUS_ONLY_DROPPED = register(
    "W7024",
    "primus-only-setting-dropped",
    "a space imported from a Primus experiment carries settings only Primus reads",
    "`import-recipe` of a Primus experiment carries its overrides, Primus's own among them: its logging\n"
    "(`stderr_sink_level`), checkpointing (`disable_last_saving`) and Primus Turbo's kernel switches\n"
    "(`use_turbo_attention`, ...), settings Primus's module presets hold and no Megatron-LM parser has.\n"
    "The megatron and bridge targets write the candidate and the Megatron settings but not these; the\n"
    "warning lists them so the launch is not mistaken for the experiment in every detail.\n\n"
    "Fix: emit with `--target primus+...` to keep them, or accept the list as what changes.",
)
SITE_UNEXPANDED = register(
    "W7023",
    "site-path-unexpanded",
    "a site's path holds a shell variable, which the launch files write as it is",
    "Every value primusc writes into a launch file is single-quoted, so nothing in it expands: a mount\n"
    "`host = \"/lustre/$USER/data\"` reaches the container runtime as the folder named `$USER`, which does\n"
    "not exist. The warning names each such path.\n\n"
    "    mounts { data { host = \"/lustre/$USER/data\"; path = \"/data\" } }\n\n"
    "Fix: write the path itself, or give it per user with `--var` where a variable holds it.",
)
RULE_LEFT_OUT = register(
    "W7025",
    "recipe-setting-left-out",
    "an imported recipe's setting that the launch's Megatron-LM or framework refuses beside this candidate is left out",
    "An imported recipe carries its settings to every candidate of its space, and some hold only beside\n"
    "what the recipe itself ran: Megatron-FSDP's `--ckpt-format fsdp_dtensor` and `--fsdp-manual-registration`\n"
    "beside `--use-megatron-fsdp`, a batch-size ramp-up under an iteration count. Megatron-LM's\n"
    "`validate_args` stops such a run at start. `emit` checks the launch's settings against the asserts of\n"
    "the Megatron-LM version it targets (frameworks/megatron/rules.json, read from arguments.py), leaves\n"
    "out the carried setting a broken rule reads, and names the rule, its message and its line.\n\n"
    "    --ckpt-format fsdp_dtensor   # the recipe's, left out for a `sharding = dist_opt` candidate\n\n"
    "Primus's own start-up checks count too: its listed recomputation (`recompute_layer_ids`) runs only\n"
    "where the candidate recomputes what the list reads as, since Primus refuses a method beside it.\n\n"
    "Fix: nothing, if the candidate is the one meant; a setting primusc's own settings break is refused\n"
    "instead (P7001).",
)
RECIPE_EXIT_REPLACED = register(
    "W7026",
    "recipe-exit-replaced",
    "the recipe's own exit time is later than the scheduler's time limit allows: the launch exits earlier",
    "A Slurm launch tells the framework to stop by itself a tenth of the time limit before the scheduler's\n"
    "kill (`exit_duration_in_mins`, docs/emit.md). An imported recipe's own exit stands where it comes\n"
    "first; where it comes after the kill (a 235-minute exit under the default limit of an hour) the\n"
    "launch's replaces it, and the warning names both.\n\n"
    "    --exit-duration-in-mins 235   # the recipe's; the launch writes 54 under time_limit 01:00:00\n\n"
    "Fix: give the run its time: `--var time_limit=04:30:00` (or the site's), which keeps the recipe's exit.",
)
HUB_TOKENIZER_NO_TOKEN = register(
    "W7027",
    "hub-tokenizer-without-token",
    "the launch's processes download the tokenizer from the Hugging Face Hub with no token to show",
    "A `tokenizer_model` written `org/name` (`meta-llama/Llama-3.1-8B`) is read by Hugging Face's\n"
    "`from_pretrained` as a Hub repository unless a folder of that name exists where the run starts, so\n"
    "every rank fetches it at start. A gated repository (Llama's, Gemma's, Mistral's) refuses a download\n"
    "without a token, and the run stops before its first step. On Kubernetes a pod has no environment of\n"
    "the submitter's, and a Docker or Podman container has only the variables it is given (`-e`): the\n"
    "warning is given when the site passes neither `HF_TOKEN` nor `HF_HUB_OFFLINE` to them.\n\n"
    "    run { tokenizer_model = \"meta-llama/Llama-3.1-8B\" }   # on a site without secrets\n\n"
    "Fix: give the pods the token from a Secret (`secrets = \"HF_TOKEN=hf-token/token\"`; on Slurm\n"
    "containers `env { HF_TOKEN = forward }`), or point `tokenizer_model` at a folder on a mounted volume.",
)
PASSTHROUGH_UNKNOWN = register(
    "W7028",
    "passthrough-setting-unknown",
    "a passthrough setting is no Megatron-LM argument of any release primusc has read, nor a Primus setting",
    "A space's `passthrough { name = value }` reaches the launch as written. A name no Megatron-LM release\n"
    "has as a flag (core_v0.12 on, frameworks/megatron/arguments.json) and no Primus preset holds is most\n"
    "likely mistyped: Megatron-LM stops at start on an argument it does not know, and Primus's argument\n"
    "builder drops a setting Megatron does not have without a word. The warning names the nearest known\n"
    "setting.\n\n"
    "    passthrough { turbo_deepep_num_cus = 64 }   # Primus's is turbo_deepep_num_cu\n\n"
    "Fix: correct the name; a setting of a Megatron-LM fork of your own is written as it is, and the\n"
    "warning can be ignored.",
)
K8S_NO_RDMA = register(
    "W7029",
    "k8s-multinode-without-rdma",
    "a Kubernetes job of several nodes asks for no RDMA device and names no RDMA network",
    "A pod sees the node's InfiniBand or RoCE NICs only through a device plugin's resource (the\n"
    "site's `rdma_resource`, e.g. `rdma/rdma_shared_device_a`) or a secondary network (Multus's\n"
    "`k8s.v1.cni.cncf.io/networks` annotation). Without either, NCCL and RCCL find no RDMA device in the\n"
    "pod and carry every gradient reduction and pipeline send between nodes over TCP sockets: the job\n"
    "runs, many times slower across nodes than the projection, which assumes the cluster's NICs.\n\n"
    "    site k { scheduler = k8s }   # 8 nodes: no rdma_resource, no annotations\n\n"
    "Fix: give the site its device plugin's resource (`rdma_resource = \"rdma/rdma_shared_device_a\"`,\n"
    "`rdma_count`) or its network annotation. A cluster whose pods reach the NICs another way (host\n"
    "networking set by a policy) can ignore the warning.",
)
