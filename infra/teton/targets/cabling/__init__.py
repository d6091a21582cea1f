"""The cabling target: what the people who build the cluster order, pull and check, from the Fabric's cables
(`teton.fabric.cables`) and expected neighbours (`teton.fabric.neighbours`).

- `cabling.csv`: the run list, one row per physical cable, A->Z once (the lower tier or the server at A): cable id,
  site, hall, row, rack and RU of both ends, device and port of both ends, form factor and transceiver of each end,
  medium, reach class, fibre, length and stock length class, twin-port and breakout notes (`runlist.COLUMNS`);
- `cabling/bom.csv`: the bill of materials (switches per model, transceivers per part class, DACs and fibres per
  length, NICs, GPUs, servers) and `cabling/rack-power.csv`, every rack's load against its budget;
- `cabling/neighbours.json`: every Ethernet port's expected LLDP neighbour (system name and port id as that NOS
  announces them) and cable, what `teton verify cabling` compares collected LLDP with;
- `cabling/topology.dot`, and on InfiniBand `cabling/ibdiagnet.topo`: the same cables for the vendors' validators.

The XLSX workbooks of the run list (a sheet per zone, one for the spines) and the BOM come from a build with
`teton sheets BUILD -o DIR` (a build holds text files only: docs/DESIGN.md).
"""

from __future__ import annotations

from teton.fabric.bom import BOM_COLUMNS, RACK_COLUMNS, bom, bom_rows, rack_loads, rack_rows
from teton.fabric.cables import cable_id, cables
from teton.fabric.model import Fabric
from teton.fabric.neighbours import NEIGHBOURS_FILE, neighbours_json
from teton.targets.base import Files, RenderContext, Target
from teton.targets.cabling.exports import dot, ibdiagnet_topo
from teton.targets.cabling.runlist import COLUMNS, csv_text, run_list_csv

__all__ = ["COLUMNS", "TARGET", "CablingTarget", "cable_id", "render_files"]

RUN_LIST = "cabling.csv"
BOM_FILE = "cabling/bom.csv"
RACK_POWER_FILE = "cabling/rack-power.csv"
DOT_FILE = "cabling/topology.dot"
IBDIAGNET_FILE = "cabling/ibdiagnet.topo"


def render_files(fabric: Fabric) -> Files:
    found = cables(fabric)
    files = {RUN_LIST: run_list_csv(found),
             BOM_FILE: csv_text(BOM_COLUMNS, bom_rows(bom(fabric, found))),
             RACK_POWER_FILE: csv_text(RACK_COLUMNS, rack_rows(rack_loads(fabric))),
             NEIGHBOURS_FILE: neighbours_json(fabric),
             DOT_FILE: dot(fabric, found)}
    if fabric.backend == "infiniband":
        files[IBDIAGNET_FILE] = ibdiagnet_topo(fabric, found)
    return files


class CablingTarget(Target):
    name = "cabling"
    cost_per_device = 0.0
    cost_per_link = 0.000035         # the 24k references: ~2 s (RoCE, 67,000 links) and ~4 s (InfiniBand, 89,000)
    summary = ("cabling.csv (the cable run list), cabling/: bill of materials, rack power, expected LLDP neighbours, "
               "DOT and ibdiagnet topologies")
    version = "2"

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        return render_files(fabric)


TARGET = CablingTarget()
