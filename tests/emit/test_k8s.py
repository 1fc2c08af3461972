"""Kubernetes manifests validate against schemas of their kinds; GPUs are requested by vendor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from referencing import Registry, Resource

from tests.emit.harness import IMAGE, all_cases, emissions

SCHEMAS = Path(__file__).parent / "schemas"


def _registry() -> Registry:
    resources = []
    for path in SCHEMAS.glob("*.json"):
        resources.append((path.name, Resource.from_contents(json.loads(path.read_text()))))
    return Registry().with_resources(resources)


REGISTRY = _registry()
KINDS = {"ConfigMap": "configmap.json", "PyTorchJob": "pytorchjob.json"}


def validate(doc: dict[str, Any]) -> None:
    schema = json.loads((SCHEMAS / KINDS[doc["kind"]]).read_text())
    jsonschema.Draft202012Validator(schema, registry=REGISTRY).validate(doc)


MANIFESTS = [
    pytest.param(c, f["pytorchjob.yaml"], id=f"{c}-{t}") for c, t, f in emissions() if t.endswith("+k8s")
]


@pytest.mark.parametrize(("case", "text"), MANIFESTS)
def test_manifest_validates(case: str, text: str) -> None:
    docs = list(yaml.safe_load_all(text))
    assert [d["kind"] for d in docs] == ["ConfigMap", "PyTorchJob"]
    for doc in docs:
        validate(doc)
    space, _ = all_cases()[case]
    replicas = docs[1]["spec"]["pytorchReplicaSpecs"]
    assert sum(r["replicas"] for r in replicas.values()) == space.cluster.nodes
    resource = {"amd": "amd.com/gpu", "nvidia": "nvidia.com/gpu"}[space.cluster.gpu.vendor]
    for spec in replicas.values():
        container = spec["template"]["spec"]["containers"][0]
        assert container["resources"]["limits"] == {resource: space.cluster.gpus_per_node}
        assert container["image"] == IMAGE


# the Kubernetes release whose published schemas the core objects are held to (kubernetes-validate's bundle)
K8S_RELEASE = "1.33"


def validate_core(doc: dict[str, Any]) -> None:
    """A manifest's core/v1 parts against the Kubernetes API's own schemas, strictly (an unknown field
    fails): a ConfigMap whole, and each PyTorchJob replica's pod template as a PodTemplate. The custom
    resources' envelopes (PyTorchJob, Kueue's LocalQueue) are held to the schemas beside this file."""
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is in the `test` extra")
    if doc["kind"] == "ConfigMap":
        kv.validate(doc, K8S_RELEASE, strict=True)
    elif doc["kind"] == "PyTorchJob":
        for role, spec in doc["spec"]["pytorchReplicaSpecs"].items():
            template = {"apiVersion": "v1", "kind": "PodTemplate", "template": spec["template"],
                        "metadata": {"name": f"{doc['metadata']['name']}-{role.lower()}",
                                     "namespace": doc["metadata"]["namespace"]}}
            kv.validate(template, K8S_RELEASE, strict=True)


@pytest.mark.parametrize(("case", "text"), MANIFESTS)
def test_manifest_core_objects_validate_against_the_kubernetes_schemas(case: str, text: str) -> None:
    for doc in yaml.safe_load_all(text):
        validate_core(doc)


def test_the_kubernetes_schemas_catch_a_misspelt_field() -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is in the `test` extra")
    text = next(f["pytorchjob.yaml"] for _, t, f in emissions() if t.endswith("+k8s"))
    job = [d for d in yaml.safe_load_all(text)][1]
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    with pytest.raises(kv.ValidationError):
        validate_core(job)


def test_schema_catches_mistakes() -> None:
    text = next(f["pytorchjob.yaml"] for _, t, f in emissions() if t.endswith("+k8s"))
    job = list(yaml.safe_load_all(text))[1]
    job["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = 2
    with pytest.raises(jsonschema.ValidationError):
        validate(job)
    job = list(yaml.safe_load_all(text))[1]
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["name"] = "trainer"
    with pytest.raises(jsonschema.ValidationError):
        validate(job)
    job = list(yaml.safe_load_all(text))[1]
    job["spec"]["pytorchReplicaSpec"] = job["spec"].pop("pytorchReplicaSpecs")
    with pytest.raises(jsonschema.ValidationError):
        validate(job)
