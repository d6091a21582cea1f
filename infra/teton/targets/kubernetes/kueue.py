"""Kueue's `Topology` and `ResourceFlavor` manifests, and their validation against Kueue's own CRD schemas.

The schemas are the OpenAPI v3 schemas of Kueue's CustomResourceDefinitions (`kueue.x-k8s.io_topologies.yaml` and
`kueue.x-k8s.io_resourceflavors.yaml` of kubernetes-sigs/kueue, one `openAPIV3Schema` per served version), never
copied into the repository.  `find_kueue_dir` looks, in this order: `explicit`, then $TETON_KUEUE_DIR, then the
`kueue` folder of the `shared` folder beside the repository (as the SONiC YANG models are found,
`teton.targets.sonic.yang`); each may be the folder holding `crd/` or `crd/` itself.

A manifest is checked against the schema of its `apiVersion` (every version the CRD serves: Kueue v0.19.2 serves
v1beta1, deprecated, and v1beta2, its storage version) with jsonschema, the `x-kubernetes-*` keys left out as the API
server's structural-schema checks are not JSON Schema; the CEL rules those keys hold that a new object can break are
checked here by hand (Topology: levels unique, `kubernetes.io/hostname` only as the lowest; ResourceFlavor: a
`topologyName` needs a node label), and so is the object's name (a DNS subdomain, which the API server requires).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from teton.targets.kubernetes.labels import HOSTNAME, name_problem
from teton.targets.reference import ReferenceData

GROUP = "kueue.x-k8s.io"
VERSION = "v1beta2"                  # what teton writes: Kueue's storage version (v0.15 on)
CRDS = {"Topology": "kueue.x-k8s.io_topologies.yaml", "ResourceFlavor": "kueue.x-k8s.io_resourceflavors.yaml"}

KUEUE_CRDS = ReferenceData(
    name="kueue", label="Kueue's CRDs", env="TETON_KUEUE_DIR", option=None, shared_subdir="kueue",
    usable=lambda folder: all((folder / name).is_file() for name in CRDS.values()),
    lacks=f"does not hold {' and '.join(CRDS.values())}", inside=("crd", ""), place="kueue/crd")
ENV_VAR = KUEUE_CRDS.env
SHARED_KUEUE_DIR = KUEUE_CRDS.shared


def find_kueue_dir(explicit: str | Path | None = None) -> Path | None:
    """The folder of Kueue's CRD files, or None when none of the places has them (`KUEUE_CRDS.locate`)."""
    return KUEUE_CRDS.locate(explicit)


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if not str(k).startswith("x-kubernetes-")}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


@cache
def schemas(folder: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """{(kind, apiVersion): JSON Schema} of every version each CRD serves."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for kind, name in CRDS.items():
        crd = yaml.safe_load((folder / name).read_text(encoding="utf-8"))
        group = crd["spec"]["group"]
        for v in crd["spec"]["versions"]:
            if v.get("served"):
                out[kind, f"{group}/{v['name']}"] = _strip(v["schema"]["openAPIV3Schema"])
    return out


def topology(name: str, level_keys: list[str], version: str = VERSION) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Topology",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "teton"}},
            "spec": {"levels": [{"nodeLabel": k} for k in level_keys]}}


def resource_flavor(name: str, topology_name: str, node_labels: dict[str, str],
                    version: str = VERSION) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "ResourceFlavor",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "teton"}},
            "spec": {"nodeLabels": dict(node_labels), "topologyName": topology_name}}


def _rules(doc: dict[str, Any]) -> list[str]:
    """The CEL rules of the CRDs a new object can break, and the API server's rule for names."""
    found = []
    name = (doc.get("metadata") or {}).get("name")
    if not isinstance(name, str) or (p := name_problem(name)) is not None:
        found.append(f"metadata.name: {p if isinstance(name, str) else 'missing'}")
    spec = doc.get("spec") or {}
    if doc.get("kind") == "Topology":
        keys = [lv.get("nodeLabel") for lv in spec.get("levels") or [] if isinstance(lv, dict)]
        if len(keys) != len(set(keys)):
            found.append("spec.levels: must be unique")
        if HOSTNAME in keys and keys[-1] != HOSTNAME:
            found.append("spec.levels: the kubernetes.io/hostname label can only be used at the lowest level")
    if doc.get("kind") == "ResourceFlavor" and "topologyName" in spec and not spec.get("nodeLabels"):
        found.append("spec: at least one nodeLabel is required when topology is set")
    return found


def validate(doc: dict[str, Any], folder: Path) -> list[str]:
    """Every problem of one manifest against its CRD's schema (path: message), [] when it is valid."""
    key = (str(doc.get("kind")), str(doc.get("apiVersion")))
    schema = schemas(folder).get(key)
    if schema is None:
        served = sorted(v for k, v in schemas(folder) if k == key[0])
        return [f"apiVersion/kind: {key[1]} {key[0]} is not served by the CRDs in {folder} (served: "
                f"{', '.join(served) or 'no such kind'})"]
    validator = jsonschema.Draft7Validator(schema)
    found = [f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
             for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]
    return found + _rules(doc)
