"""The catalogue's FBOSS port table (`teton/catalogue/fboss_ports.yaml`) and the spec rule that a tier's ports fit it.

The table lists, per FBOSS platform, every port FBOSS's platform mapping has: its name, logical id, the speeds its
profiles run at and, for a port sharing a controlling port's lanes (a breakout, or Minipack2's even cages), that
port.  It is derived from the pinned platform mappings by `python -m teton.targets.fboss.catalogue [FBOSS_DIR]` and
committed, so the spec rule needs no reference files;
tests/targets/test_fboss_catalogue.py checks that it still says what the mappings say.

The rule (`fboss-ports`, run by `teton validate` and every render): every port the design gives an FBOSS switch is a
port of its box and has a profile at the link's speed; a model running FBOSS has an FBOSS platform and port naming.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import NamedTuple

import yaml

import teton.catalogue
from teton.fabric.model import Fabric
from teton.fabric.physical import tier_path
from teton.findings import Finding

TABLE = Path(teton.catalogue.__file__).with_name("fboss_ports.yaml")
__all__ = ["check_ports", "port_table", "table_yaml", "tier_path"]


class TablePort(NamedTuple):
    id: int
    gbps: tuple[int, ...]      # speeds its profiles run at, fastest first


@cache
def port_table() -> dict[str, dict[str, TablePort]]:
    """{FBOSS platform: {port name: (logical id, speeds)}} from the catalogue's table."""
    data = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    return {platform: {name: TablePort(int(e["id"]), tuple(int(g) for g in e["gbps"]))
                       for name, e in ports.items()} for platform, ports in data["platforms"].items()}


def check_ports(fabric: Fabric, nos: str, file: str) -> Iterator[Finding]:
    """Rule fboss-ports: each FBOSS switch's ports exist on its box and run the link's speed (one finding per tier,
    model and problem, with a count and an example)."""
    table = port_table()
    problems: dict[tuple[str, str], list[str]] = defaultdict(list)
    for d in fabric.switches(nos):
        path = tier_path(d.role)
        model = fabric.models[d.model]
        platform = model.platform.get(nos)
        if platform is None or platform not in table:
            problems[(f"{path}.model", f"{d.model} has no FBOSS platform teton knows (platform.fboss "
                      f"{platform!r}; known: {', '.join(sorted(table))})")].append(d.name)
            continue
        if nos not in model.nos_port_naming:
            problems[(f"{path}.model", f"{d.model} has no FBOSS port naming (nos_port_naming.fboss): its ports "
                      "would carry another NOS's names")].append(d.name)
            continue
        ports = table[platform]
        for i in d.interfaces:
            entry = ports.get(i.name)
            if entry is None:
                problems[(f"{path}.model", f"port {i.name} is not a front-panel port of {platform} in FBOSS's "
                          "platform mapping")].append(f"{d.name} {i.name}")
            elif i.speed_gbps not in entry.gbps:
                problems[(f"{path}.model", f"{platform} port {i.name} has no profile at {i.speed_gbps}G (it runs "
                          f"{', '.join(f'{g}G' for g in entry.gbps)})")].append(f"{d.name} {i.name}")
    for (where, message), who in sorted(problems.items()):
        more = f" and {len(who) - 1} more" if len(who) > 1 else ""
        yield Finding(file, where, f"{who[0]}{more}: {message}", rule="fboss-ports")


def table_yaml(fboss_dir: Path) -> str:
    """The catalogue table, derived from the platform mappings under `fboss_dir`."""
    from teton.targets.fboss.data import PINNED_COMMIT, PLATFORMS, platform_mapping
    from teton.targets.fboss.idl import cached_schema
    from teton.targets.fboss.platform import platform_map

    names = cached_schema(str(fboss_dir / "idl")).enums["switch_config.PortProfileID"]
    lines = ["# FBOSS's ports per platform, from FBOSS's platform mappings (facebook/fboss@"
             f"{PINNED_COMMIT[:12]}, fboss/agent/",
             "# platforms/common/<box>/*PlatformMapping.cpp): each port's logical id, the speeds (Gb/s) its profiles",
             "# run at, the ASIC's SerDes lanes at its top speed (core id x 8 + lane), the lanes of its cage at that",
             "# speed, and `of`: the controlling port of one that shares its lanes (a breakout, an even fuji cage).",
             "# teton.catalogue.boxes reads it as the box's front-panel map for every NOS.",
             "# Generated: python -m teton.targets.fboss.catalogue [FBOSS_DIR]; tests/targets/test_fboss_catalogue.py",
             "# checks it against the mappings.  The rule fboss-ports (teton.targets.fboss.catalogue) reads it.",
             "platforms:"]
    for platform in sorted(PLATFORMS):
        pm = platform_map(platform, platform_mapping(str(fboss_dir), platform), names)
        lines.append(f"  {platform}:")
        for p in sorted(pm.by_id.values(), key=lambda p: [int(x) for x in p.name.removeprefix("eth").split("/")]):
            under = "" if p.controlling == p.id else f", of: {pm.by_id[p.controlling].name}"
            top = pm.fastest(p)
            lanes = p.lanes.get(top, ()) if top is not None else ()
            tcvr = p.transceiver.get(top, 0) if top is not None else 0
            lines.append(f"    {p.name}: {{id: {p.id}, gbps: [{', '.join(str(g) for g in pm.speeds(p))}], "
                         f"lanes: [{', '.join(str(x) for x in lanes)}], cage_lanes: {tcvr}{under}}}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    from teton.targets.fboss.data import find_fboss_dir

    TABLE.write_text(table_yaml(find_fboss_dir(argv[0] if argv else None)), encoding="utf-8")
    print(f"wrote {TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
