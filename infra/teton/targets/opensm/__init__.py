"""The InfiniBand subnet manager's files under `ib/`, spelled from the Fabric (OpenSM; NVIDIA's UFM reads the same):

- `opensm.conf` (the master) and `opensm-standby<k>.conf`: routing engine, root GUID file, LMC, SM_Key (a secret
  reference), priorities and polling of the HA group, QoS (SL to VL, VL arbitration), the files below;
- `partitions.conf`: the default partition 0x7fff and the tenants' P_Keys with their members' port GUIDs;
- `root_guids.conf`, `node-name-map`;
- `topology.net`: the expected topology in the ibnetdiscover format (ibsim loads it; `teton ib verify` compares a dump
  with it), and read back to check it says what the design does;
- `nccl.env`: what every GPU host sets for NCCL over InfiniBand.

An InfiniBand switch's `nos` is `opensm`: what configures it is the subnet manager (its forwarding tables, P_Key
tables, SL2VL), so this is the target that "renders" those switches.  GUID clashes (a GUID map that gives two nodes
one GUID) are refused here, as intents this target cannot spell.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from teton.catalogue.naming import PortPlace
from teton.fabric.model import Fabric
from teton.fabric.subnet import SubnetManager
from teton.findings import Finding
from teton.targets.base import BuildFileError, BuildFiles, DeviceView, Files, RenderContext, Target
from teton.targets.opensm.files import nccl_env, node_name_map, opensm_confs, partitions_conf, root_guids
from teton.targets.opensm.partitions import PartitionsError
from teton.targets.opensm.partitions import check as check_partitions
from teton.targets.opensm.topology import TopologyError, topology_net
from teton.targets.opensm.verify import compare
from teton.targets.transports import register_transport

TOPOLOGY = "ib/topology.net"
PARTITIONS = "ib/partitions.conf"


def _guids(f: Fabric) -> Iterator[tuple[str, str]]:
    """(GUID, what has it) of every node and port GUID of the subnet."""
    for d in f.devices.values():
        if "guid" in d.attrs and d.nos is not None:
            yield d.attrs["guid"], d.name
        for hca, g in d.attrs.get("hca_guids", {}).items():
            yield g, f"{d.name} {hca}"
            port = d.attrs["port_guids"][hca]
            if port != g:
                yield port, f"{d.name} {hca} port 1"


def ib_port_name(p: PortPlace) -> str:
    """An InfiniBand switch's ports as cage/port pairs of a QM9700: 1/<cage>/<n>."""
    return f"1/{p.index // 2 + 1}/{p.index % 2 + 1}"


class OpensmTarget(Target):
    name = "opensm"
    cost_per_device = 0.00006
    summary = "ib/: OpenSM files (HA pair, routing, partitions, QoS), expected topology, NCCL settings"
    nos = "opensm"
    port_namings = {"ib": ib_port_name}

    def cost(self, fabric: Fabric) -> float:
        return super().cost(fabric) if fabric.subnet_manager is not None else 0.0

    def check(self, fabric: Fabric, file: str) -> Iterator[Finding]:
        if fabric.subnet_manager is None:
            return
        owners: dict[str, list[str]] = defaultdict(list)
        for guid, what in _guids(fabric):
            owners[guid].append(what)
        for guid, who in sorted(owners.items()):
            if len(who) > 1:
                yield Finding(file, "backend.guid_map", f"GUID {guid} is {' and '.join(repr(w) for w in who)}'s: "
                              "every node and port needs its own", rule="guid-clash")

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        sm = fabric.subnet_manager
        if sm is None:
            return {}
        files = opensm_confs(fabric, sm)
        files.update({PARTITIONS: partitions_conf(fabric, sm), "ib/root_guids.conf": root_guids(fabric, sm),
                      "ib/node-name-map": node_name_map(fabric), TOPOLOGY: topology_net(fabric),
                      "ib/nccl.env": nccl_env(fabric, sm)})
        return files

    def read_back(self, source: BuildFiles, fabric: Fabric, ctx: RenderContext,
                  vendor: bool = True) -> tuple[list[DeviceView], list[Finding]]:
        """topology.net read back: every link of the design, on the ports the design gives it, and nothing else;
        partitions.conf read as OpenSM reads it: every HCA port ends in the partitions the intent gives it."""
        sm = fabric.subnet_manager
        if sm is None:
            return [], []
        return [], self._topology(source, fabric) + self._partitions(source, fabric, sm)

    def _partitions(self, source: BuildFiles, fabric: Fabric, sm: SubnetManager) -> list[Finding]:
        try:
            return [Finding(PARTITIONS, "", problem, rule="ib-partitions", line=line)
                    for line, problem in check_partitions(fabric, sm, source.text(PARTITIONS))]
        except BuildFileError as exc:
            return [Finding(exc.path, "", exc.problem, rule="io")]
        except PartitionsError as exc:
            return [Finding(PARTITIONS, "", exc.message, rule="ib-partitions", line=exc.line)]

    def _topology(self, source: BuildFiles, fabric: Fabric) -> list[Finding]:
        try:
            report = compare(fabric, source.text(TOPOLOGY))
        except BuildFileError as exc:
            return [Finding(exc.path, "", exc.problem, rule="io")]
        except TopologyError as exc:
            return [Finding(TOPOLOGY, "", exc.message, rule="ib-topology", line=exc.line)]
        findings = [Finding(TOPOLOGY, "", f"link {a} <-> {b} of the design is missing", rule="ib-topology")
                    for a, b in report.missing]
        findings += [Finding(TOPOLOGY, "", f"link {a} <-> {b} is not in the design", rule="ib-topology")
                     for a, b in report.extra]
        findings += [Finding(TOPOLOGY, "", f"expected {m['expected']}, found {m['found']}", rule="ib-topology")
                     for m in report.miswired]
        return findings


TARGET = OpensmTarget()
register_transport("live", "opensm", "teton.targets.opensm.transport:live_transport")   # imported when a deploy asks
