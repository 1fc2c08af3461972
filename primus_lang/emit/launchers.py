"""Launchers: how the nodes of a job are started. One class per launcher, capability flags first.

Every launcher starts the same per-node script (``node.sh``), which runs torchrun for one node and
takes its node rank and rendezvous address from the environment the launcher provides.
"""

from __future__ import annotations

from typing import ClassVar

from primus_lang.emit.context import Variables
from primus_lang.ir import Cluster
from primus_lang.ir.site import Site


class Launcher:
    NAME: ClassVar[str] = ""
    MULTI_NODE: ClassVar[bool] = True
    CONTAINER_RUNTIMES: ClassVar[frozenset[str]] = frozenset({"none"})
    NEEDS_IMAGE: ClassVar[bool] = False
    TEMPLATES: ClassVar[dict[str, str]] = {}
    EXECUTABLE: ClassVar[frozenset[str]] = frozenset({"node.sh"})
    TIME_LIMITED: ClassVar[bool] = False  # the scheduler kills a job at the `time_limit` variable

    def __init__(self, cluster: Cluster, variables: Variables, site: Site | None = None) -> None:
        self.cluster, self.variables, self.site = cluster, variables, site

    def unsupported(self) -> list[str]:
        out = []
        if not self.MULTI_NODE and self.cluster.nodes > 1:
            out.append(f"cluster `{self.cluster.name}` has {self.cluster.nodes} nodes: the {self.NAME} launcher runs one")
        if self.variables.container not in self.CONTAINER_RUNTIMES:
            out.append(f"`container` = {self.variables.container}: the {self.NAME} launcher does not start one")
        return out

    def missing(self) -> list[str]:
        """Variables this launcher needs that are unset."""
        if self.NEEDS_IMAGE and not self.variables.container_image:
            return ["container_image"]
        return []


class Slurm(Launcher):
    NAME = "slurm"
    CONTAINER_RUNTIMES = frozenset({"none", "pyxis", "apptainer", "docker", "podman"})
    TEMPLATES: ClassVar[dict[str, str]] = {"launch.sbatch": "slurm/launch.sbatch.j2"}
    EXECUTABLE = frozenset({"node.sh", "launch.sbatch"})
    TIME_LIMITED = True

    def missing(self) -> list[str]:
        if self.variables.container != "none" and not self.variables.container_image:
            return ["container_image"]
        return []


class Kubernetes(Launcher):
    NAME = "k8s"
    NEEDS_IMAGE = True
    TEMPLATES: ClassVar[dict[str, str]] = {"pytorchjob.yaml": "k8s/pytorchjob.yaml.j2"}
    # The device plugins' resource names; other vendors have no agreed one.
    GPU_RESOURCES: ClassVar[dict[str, str]] = {"amd": "amd.com/gpu", "nvidia": "nvidia.com/gpu"}

    def unsupported(self) -> list[str]:
        out = super().unsupported()
        if self.site is not None and self.variables.container == self.site.runtime:
            # a site's runtime is how its Slurm starts the image; a pod runs the image itself
            out = [p for p in out if not p.startswith("`container`")]
        if self.cluster.gpu.vendor not in self.GPU_RESOURCES:
            out.append(f"GPU vendor `{self.cluster.gpu.vendor}`: no Kubernetes GPU resource name is known for it")
        return out


class Local(Launcher):
    NAME = "local"
    TEMPLATES: ClassVar[dict[str, str]] = {"launch.sh": "local/launch.sh.j2"}
    EXECUTABLE = frozenset({"node.sh", "launch.sh"})


LAUNCHERS: dict[str, type[Launcher]] = {launcher.NAME: launcher for launcher in (Slurm, Kubernetes, Local)}
