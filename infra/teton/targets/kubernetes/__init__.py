"""The scheduler's view of the network for a Kubernetes cluster: node labels and Kueue's topology.

- `kubernetes/node-labels.yaml`: one partial Node per GPU host (its name and its labels only, `teton.targets.
  kubernetes.labels`), for `kubectl apply --server-side --field-manager=teton -f`: server-side apply sets these labels
  and owns them, and leaves every other field of the Node (kubelet's) alone.
- `kubernetes/kueue.yaml`: Kueue's `Topology` (the label levels, top to bottom, `kubernetes.io/hostname` last) and a
  `ResourceFlavor` naming it (`topologyName`), selecting the cluster's GPU hosts by `teton.dev/cluster`: what a
  ClusterQueue of Kueue's Topology Aware Scheduling (beta, on by default since Kueue v0.14) takes.

Render refuses a host name that is no Node name and a label Kubernetes would refuse; it validates the manifests
against Kueue's own CRD schemas where they are found (`teton.targets.kubernetes.kueue`), and so does the read-back
(`teton validate --rendered`), which also checks that every GPU host of the Fabric has every level's label.
"""

from __future__ import annotations

from typing import Any

import yaml

from teton.fabric.model import Fabric
from teton.findings import Finding, SpecError
from teton.targets.base import BuildFileError, BuildFiles, DeviceView, Files, RenderContext, Target
from teton.targets.kubernetes import kueue
from teton.targets.kubernetes.labels import CLUSTER, levels, name_problem, node_labels, problems

DIR = "kubernetes"
NODE_LABELS = f"{DIR}/node-labels.yaml"
KUEUE = f"{DIR}/kueue.yaml"


def object_name(cluster: str) -> str:
    """The cluster's name as a Kubernetes object name: lower case, '_' as '-'."""
    return cluster.lower().replace("_", "-").strip("-.")


def _dump(docs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False, width=120, explicit_start=True)


def manifests(fabric: Fabric) -> list[dict[str, Any]]:
    """The Topology and the ResourceFlavor (Kueue's storage version)."""
    name = object_name(fabric.name)
    return [kueue.topology(name, [lv.key for lv in levels(fabric)]),
            kueue.resource_flavor(f"{name}-gpu", name, {CLUSTER: fabric.name})]


def _node(host: str, labels: dict[str, str]) -> str:
    """One partial Node as YAML, written by hand (safe_dump takes 2 s for the 24k cluster's 3,072): every name, key and
    value double-quoted, which Kubernetes' syntax (checked before) never needs to escape."""
    lines = ["---", "apiVersion: v1", "kind: Node", "metadata:", f'  name: "{host}"', "  labels:"]
    lines += [f'    "{k}": "{v}"' for k, v in labels.items()]
    return "\n".join(lines) + "\n"


class KubernetesTarget(Target):
    name = "kubernetes"
    cost_per_device = 0.00005
    summary = ("kubernetes/node-labels.yaml, kueue.yaml: each GPU host's zone, rack and rail-switch labels, Kueue's "
               "Topology and ResourceFlavor")
    reference = (kueue.KUEUE_CRDS,)

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        labels = node_labels(fabric)
        if not labels:
            return {}
        lv = levels(fabric)
        docs = manifests(fabric)
        found = [Finding(NODE_LABELS, host, p, rule="render") for host, p in problems(labels, [x.key for x in lv])]
        found += [Finding(KUEUE, "cluster.name", p, rule="render") for p in
                  [name_problem(d["metadata"]["name"]) for d in docs] if p is not None]
        if not found and ctx.validate and (folder := kueue.find_kueue_dir(ctx.folder(kueue.KUEUE_CRDS))) is not None:
            found += [Finding(KUEUE, f"{d['kind']}/{d['metadata']['name']}", f"Kueue CRD schema: {p}", rule="render")
                      for d in docs for p in kueue.validate(d, folder)]
        if found:
            raise SpecError(found)
        order = "\n".join(f"#   {i + 1}. {x.key}: the {x.what}" for i, x in enumerate(lv))
        head = (f"# Node labels of cluster {fabric.name}'s GPU hosts, rendered by teton from the Fabric: where each "
                "sits in the network.\n# Apply: kubectl apply --server-side --field-manager=teton -f "
                "node-labels.yaml (sets these labels, leaves the rest of\n# each Node alone).  Kueue's Topology levels "
                f"(kueue.yaml), top to bottom:\n{order}\n")
        kueue_head = (f"# Kueue Topology Aware Scheduling for cluster {fabric.name}, rendered by teton: the Topology's "
                      "levels are the node labels of\n# node-labels.yaml, top to bottom; the ResourceFlavor selects "
                      f"the GPU hosts ({CLUSTER}) and names the Topology.\n# {kueue.GROUP}/{kueue.VERSION}: Kueue "
                      ">= v0.15 (v0.19.2 also serves v1beta1, deprecated); validated against Kueue's CRD schemas\n# "
                      "where teton finds them (teton validate --rendered).\n")
        return {NODE_LABELS: head + "".join(_node(h, labels[h]) for h in sorted(labels)),
                KUEUE: kueue_head + _dump(docs)}

    def read_back(self, source: BuildFiles, fabric: Fabric, ctx: RenderContext,
                  vendor: bool = True) -> tuple[list[DeviceView], list[Finding]]:
        hosts = {d.name for d in fabric.by_role("host")}
        if not hosts:
            return [], []
        found: list[Finding] = []
        try:
            nodes = [d for d in yaml.safe_load_all(source.text(NODE_LABELS)) if d]
            docs = [d for d in yaml.safe_load_all(source.text(KUEUE)) if d]
        except BuildFileError as exc:
            return [], [Finding(exc.path, "", exc.problem, rule="io")]
        except yaml.YAMLError as exc:
            return [], [Finding(DIR, "", f"is not valid YAML: {exc}", rule="io")]
        labels = {str(n.get("metadata", {}).get("name")): dict(n.get("metadata", {}).get("labels") or {})
                  for n in nodes if isinstance(n, dict)}
        topo = next((d for d in docs if isinstance(d, dict) and d.get("kind") == "Topology"), None)
        keys = [str(x.get("nodeLabel")) for x in (topo or {}).get("spec", {}).get("levels", [])]
        if topo is None:
            found.append(Finding(KUEUE, "", "holds no Kueue Topology", rule="kubernetes"))
        if set(labels) != hosts:
            missing, extra = sorted(hosts - set(labels)), sorted(set(labels) - hosts)
            found.append(Finding(NODE_LABELS, "", f"labels {len(labels)} nodes, the Fabric has {len(hosts)} GPU "
                                 f"hosts (missing: {', '.join(missing[:5]) or '-'}; not hosts: "
                                 f"{', '.join(extra[:5]) or '-'})", rule="kubernetes"))
        found += [Finding(NODE_LABELS, host, p, rule="kubernetes") for host, p in problems(labels, keys)]
        if vendor:
            folder = kueue.find_kueue_dir(ctx.folder(kueue.KUEUE_CRDS))
            if folder is None:
                found.append(Finding(KUEUE, "", "not checked against Kueue's CRD schemas: none found (set "
                                     f"{kueue.ENV_VAR}, or place kueue/crd in the shared folder beside the repository)",
                                     rule="kubernetes", severity="warning"))
            else:
                found += [Finding(KUEUE, f"{d.get('kind')}/{(d.get('metadata') or {}).get('name')}",
                                  f"Kueue CRD schema: {p}", rule="kubernetes")
                          for d in docs if isinstance(d, dict) for p in kueue.validate(d, folder)]
        return [], found


TARGET = KubernetesTarget()
