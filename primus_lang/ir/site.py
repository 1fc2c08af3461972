"""Site profiles: what every run on one cluster shares (scheduler, container, mounts, environment).

A site is written once per cluster and named by a space (``site = NAME``). It holds nothing about
the training run itself; the emitters read it, and a space without one emits as before.
"""

from __future__ import annotations

import re

from attrs import field, frozen

from primus_lang.ir.quantity import Kind, q
from primus_lang.ir.span import Span

RUNTIMES = ("none", "pyxis", "apptainer", "docker", "podman")
SLURM_GPU_REQUESTS = ("gpus_per_node", "gres", "none")
# set by the launch files themselves: the rendezvous, Megatron's required value, the test hook
RESERVED_ENV = frozenset({"MASTER_ADDR", "MASTER_PORT", "NNODES", "NODE_RANK", "GPUS_PER_NODE", "RANK",
                          "WORLD_SIZE", "LOCAL_RANK", "CUDA_DEVICE_MAX_CONNECTIONS", "PRIMUSC_TORCHRUN"})
# Variables that change how bash itself reads the launch script: SHELLOPTS and BASHOPTS are
# read-only (the export fails when the job starts), the rest re-split words, source files or
# redirect tracing in every later line.
SHELL_ENV = frozenset({"SHELLOPTS", "BASHOPTS", "BASH_ENV", "ENV", "IFS", "PS4", "BASH_XTRACEFD", "CDPATH",
                       "GLOBIGNORE", "POSIXLY_CORRECT"})


@frozen
class Mount:
    """One folder the containers see: a host folder (bind mount, Kubernetes hostPath) or a
    Kubernetes PersistentVolumeClaim, at ``path`` inside the container."""

    name: str = field(metadata=q(Kind.TEXT, "the mount's name (the Kubernetes volume name)"))
    path: str = field(metadata=q(Kind.TEXT, "where the container sees it (absolute)"))
    host: str = field(default="", metadata=q(Kind.TEXT, "host folder (absolute): a bind mount or hostPath"))
    claim: str = field(default="", metadata=q(Kind.TEXT, "Kubernetes PersistentVolumeClaim name"))
    read_only: bool = field(default=False, metadata=q(Kind.FLAG, "mounted read-only"))
    span: Span | None = field(default=None, eq=False, repr=False, metadata=q(Kind.TEXT, "definition site"))


@frozen
class EnvVar:
    """An environment variable of every rank: a value, or ``None`` to forward the submitter's."""

    name: str
    value: str | None
    span: Span | None = field(default=None, eq=False, repr=False)


@frozen
class Toleration:
    """A Kubernetes toleration, written as kubectl writes a taint: ``key[=value]:Effect``."""

    key: str
    value: str
    effect: str


# A container image as every runtime takes it: a registry reference (`nvcr.io/nvidia/nemo:25.09`),
# pyxis's `nvcr.io#nvidia/nemo:25.09`, apptainer's `docker://...` or an image file (`/shared/nemo.sqsh`).
# None of them holds a space, and one that starts with `-` would be read as an option of the runtime.
IMAGE = re.compile(r"[^\s-]\S{0,511}")
IMAGE_FORM = ("an image reference or image file without spaces, such as nvcr.io/nvidia/nemo:25.09 or "
              "/shared/images/nemo.sqsh")

# What a site's text fields may hold where they land in an `#SBATCH` line or a bind mount: a Slurm name,
# a node-feature expression as sbatch reads it (`a100&ib`, `[rack1|rack2]`), an absolute path without the
# `:` and `,` that separate pyxis's and docker's mount lists
SLURM_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,128}")
SLURM_NAME_FORM = "a Slurm name (letters, digits, `_.+-`)"
# sbatch takes a list of partitions and runs the job on the first that can start it
PARTITIONS = re.compile(r"[A-Za-z0-9_.+-]{1,128}(,[A-Za-z0-9_.+-]{1,128}){0,15}")
CONSTRAINT = re.compile(r"[A-Za-z0-9_.+\-&|*\[\]():,]{1,256}")
CONSTRAINT_FORM = "a Slurm feature expression (letters, digits, `&|*[]():,_.+-`)"
ABSOLUTE = re.compile(r"/[^\x00-\x1f\x7f:,]*")
MOUNT_NAME = re.compile(r"[a-z0-9]([a-z0-9_]{0,61}[a-z0-9])?")
SLURM_NAMES = ("partition", "account", "qos", "reservation")


def text_problem(name: str, value: str) -> str | None:
    """Why ``value`` cannot be the site's text field ``name`` (a Slurm name, the constraint, the image),
    as ``must be ...``; None when it can or the field is not one of those."""
    if not value:
        return None
    if name == "partition" and not PARTITIONS.fullmatch(value):
        return f"must be {SLURM_NAME_FORM}, or a comma-separated list of them"
    if name in SLURM_NAMES and name != "partition" and not SLURM_NAME.fullmatch(value):
        return f"must be {SLURM_NAME_FORM}"
    if name == "constraint" and not CONSTRAINT.fullmatch(value):
        return f"must be {CONSTRAINT_FORM}"
    if name == "image" and not IMAGE.fullmatch(value):
        return f"must be {IMAGE_FORM}"
    return None


# A launcher's name for a site field -> the field, where they differ: Slurm's `--time`, pyxis's
# `--container-image` and `--container-mounts`
LAUNCHER_NAMES: dict[str, str] = {"time": "time_limit", "container_image": "image", "container_mounts": "mounts"}


@frozen
class Site:
    name: str = field(metadata=q(Kind.TEXT, "the site's name"))
    # Slurm
    partition: str = field(default="", metadata=q(Kind.TEXT, "Slurm partition (empty: the cluster default)"))
    account: str = field(default="", metadata=q(Kind.TEXT, "Slurm account (empty: the user default)"))
    qos: str = field(default="", metadata=q(Kind.TEXT, "Slurm quality of service (empty: the default)"))
    reservation: str = field(default="", metadata=q(Kind.TEXT, "Slurm reservation (empty: none)"))
    time_limit: float = field(default=0.0, metadata=q(Kind.TIME, "Slurm time limit (0: one hour)"))
    exclusive: bool = field(default=True, metadata=q(Kind.FLAG, "whole nodes (`#SBATCH --exclusive`)"))
    gpu_request: str = field(default="gpus_per_node", metadata=q(
        Kind.ENUM, "how sbatch asks for GPUs", SLURM_GPU_REQUESTS))
    constraint: str = field(default="", metadata=q(Kind.TEXT, "Slurm node features (`#SBATCH --constraint`)"))
    sbatch_args: str = field(default="", metadata=q(
        Kind.TEXT, "more `#SBATCH` options, space-separated (`--mail-type=END --gres-flags=enforce-binding`)"))
    srun_args: str = field(default="", metadata=q(
        Kind.TEXT, "more srun options, space-separated (`--mpi=pmix --container-writable`)"))
    preamble: str = field(default="", metadata=q(
        Kind.TEXT, "a script the job sources before it launches (modules, environment), absolute path"))
    # containers
    runtime: str = field(default="none", metadata=q(
        Kind.TEXT, "container runtime on Slurm: none | pyxis | apptainer | docker | podman"))
    image: str = field(default="", metadata=q(Kind.TEXT, "container image (needed by every runtime and by k8s)"))
    mounts: tuple[Mount, ...] = field(default=(), metadata=q(Kind.BLOCK, "`mounts { NAME { path = ...; host = ... } }`"))
    env: tuple[EnvVar, ...] = field(default=(), metadata=q(
        Kind.BLOCK, "`env { NAME = \"value\" }`, or `NAME = forward` to pass the submitter's value"))
    infiniband: bool = field(default=False, metadata=q(
        Kind.FLAG, "docker/podman: pass /dev/infiniband with IPC_LOCK and unlimited locked memory (RDMA)"))
    # where things are inside the container
    megatron_dir: str = field(default="", metadata=q(Kind.TEXT, "Megatron-LM checkout (empty: /workspace/Megatron-LM)"))
    primus_dir: str = field(default="", metadata=q(Kind.TEXT, "Primus checkout (empty: /workspace/Primus)"))
    bridge_dir: str = field(default="", metadata=q(Kind.TEXT, "Megatron-Bridge checkout (empty: /opt/Megatron-Bridge)"))
    data_root: str = field(default="", metadata=q(Kind.TEXT, "folder relative data prefixes are read from"))
    checkpoint_root: str = field(default="", metadata=q(Kind.TEXT, "folder a relative checkpoint folder lies in"))
    # Kubernetes
    namespace: str = field(default="", metadata=q(Kind.TEXT, "Kubernetes namespace (empty: default)"))
    rdma_resource: str = field(default="", metadata=q(
        Kind.TEXT, "RDMA device-plugin resource per pod, e.g. rdma/rdma_shared_device_a (empty: none)"))
    rdma_count: int = field(default=1, metadata=q(Kind.COUNT, "how many of `rdma_resource` each pod asks for"))
    shm: int = field(default=0, metadata=q(Kind.BYTES, "size limit of the memory-backed /dev/shm (0: none)"))
    # without a CPU or memory request a pod is BestEffort, the first a node under memory pressure evicts (its
    # GPU limit does not count); none by default: Kueue refuses a workload asking for a resource its
    # ClusterQueue does not cover
    cpu_request: int = field(default=0, metadata=q(Kind.COUNT, "CPU cores each pod requests (0: none)"))
    memory_request: int = field(default=0, metadata=q(Kind.BYTES, "memory each pod requests (0: none)"))
    node_selector: str = field(default="", metadata=q(Kind.TEXT, "`key=value,key=value` the nodes must carry"))
    tolerations: str = field(default="", metadata=q(Kind.TEXT, "`key[=value]:Effect,...` taints the pods tolerate"))
    queue: str = field(default="", metadata=q(Kind.TEXT, "Kueue LocalQueue the job is admitted through (gang)"))
    cluster_queue: str = field(default="", metadata=q(
        Kind.TEXT, "Kueue ClusterQueue: also write the LocalQueue `queue` pointing at it"))
    priority_class: str = field(default="", metadata=q(Kind.TEXT, "Kueue WorkloadPriorityClass (empty: none)"))
    annotations: str = field(default="", metadata=q(
        Kind.TEXT, "`key=value,...` pod annotations (Multus: k8s.v1.cni.cncf.io/networks=...)"))
    image_pull_secret: str = field(default="", metadata=q(Kind.TEXT, "the Secret the pods pull the image with"))
    service_account: str = field(default="", metadata=q(Kind.TEXT, "the pods' ServiceAccount (empty: default)"))
    secrets: str = field(default="", metadata=q(
        Kind.TEXT, "`VAR=secret/key,...`: environment variables read from Kubernetes Secrets"))
    span: Span | None = field(default=None, eq=False, repr=False, metadata=q(Kind.TEXT, "definition site"))

    def sbatch_list(self) -> tuple[str, ...]:
        return tuple(self.sbatch_args.split())

    def srun_list(self) -> tuple[str, ...]:
        return tuple(self.srun_args.split())

    def forwarded(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.env if v.value is None)

    def values(self) -> tuple[tuple[str, str], ...]:
        return tuple((v.name, v.value) for v in self.env if v.value is not None)

    def annotation_list(self) -> tuple[tuple[str, str], ...]:
        """``annotations`` as pairs (lowering has checked its form; a value may hold `=`)."""
        return tuple(tuple(p.strip().split("=", 1)) for p in self.annotations.split(",") if p.strip())  # type: ignore[misc]

    def secret_list(self) -> tuple[tuple[str, str, str], ...]:
        """``secrets`` as (variable, Secret, key)."""
        out = []
        for part in (p.strip() for p in self.secrets.split(",") if p.strip()):
            name, _, ref = part.partition("=")
            secret, _, key = ref.partition("/")
            out.append((name, secret, key))
        return tuple(out)

    def labels(self) -> tuple[tuple[str, str], ...]:
        """``node_selector`` as pairs (lowering has checked its form)."""
        return tuple(tuple(p.strip().split("=", 1)) for p in self.node_selector.split(",") if p.strip())  # type: ignore[misc]

    def toleration_list(self) -> tuple[Toleration, ...]:
        out = []
        for part in (p.strip() for p in self.tolerations.split(",")):
            if part:
                taint, _, effect = part.rpartition(":")
                key, _, value = taint.partition("=")
                out.append(Toleration(key, value, effect))
        return tuple(out)


# a variable that holds a key, a token or a password (`WANDB_API_KEY`, `HF_TOKEN`): a space and its launch
# files are shared and committed, so its value stays in the environment that submits the job
_CREDENTIAL = re.compile(r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)(_|$)")


def credential(name: str) -> bool:
    """Whether an environment variable named ``name`` holds a credential."""
    return _CREDENTIAL.search(name.upper()) is not None


# which GPUs a process sees: the launch files' layout (GPUs per node, one process each) decides it, and a
# script's list for its own node count would hide GPUs from a plan on more
_DEVICE_LISTS = frozenset({"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"})


def carried_env(name: str) -> bool:
    """Whether a variable an imported script exports is carried to its site's environment: the launch files
    set the rendezvous, CUDA_DEVICE_MAX_CONNECTIONS (by the candidate's rule) and the visible devices, bash
    reads its own, and a credential is the submitting environment's, never written down."""
    return name not in RESERVED_ENV | SHELL_ENV | _DEVICE_LISTS and not credential(name)
