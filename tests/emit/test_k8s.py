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
