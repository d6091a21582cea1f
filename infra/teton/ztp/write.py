"""`teton ztp BUILD --inventory FILE -o DIR`: a build folder and the MAC addresses of its switches -> what DHCP and
zero-touch provisioning need, published atomically into DIR (the build's own publishing, `teton.pipeline.output`).

DIR holds `kea-dhcp4.json` (or `kea-dhcp6.json`: the management network's family), `ztp-index.json` (what the
server hands to whom, `teton.ztp.index`), a manifest like a build's, and per provisionable switch its folder
`devices/<name>/`: copies of its build files (secret references, never values) and the files its NOS's provisioning
fetches first (`DeviceTarget.zero_touch`: SONiC's ztp.json and frr.sh, EOS's bootstrap, FBOSS's fetch.sh).  The
inventory is read whole before anything is written, so a bad line leaves DIR as it was.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from teton import targets
from teton.buildfolder import BuildFolder, device_path
from teton.fabric.model import Device, Fabric
from teton.findings import Finding, SpecError, TetonError
from teton.manifest import manifest_text, read_manifest
from teton.pipeline.output import publish
from teton.targets import DeviceTarget, ZeroTouch
from teton.ztp.index import INDEX, ZtpDevice, ZtpIndex
from teton.ztp.inventory import InventoryRow, read_inventory
from teton.ztp.kea import Reservation, dump, kea_dhcp4, kea_dhcp6

GENERATOR_TARGET = "ztp"      # the manifest's `target` of what `teton ztp` writes itself
VERSION = "1"
KEA4, KEA6 = "kea-dhcp4.json", "kea-dhcp6.json"


@dataclass
class ZtpSummary:
    folder: Path
    kea: str
    provisionable: dict[str, int] = field(default_factory=dict)        # by tier
    not_provisionable: dict[str, list[str]] = field(default_factory=dict)   # by tier: the switches without a MAC

    def to_json(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "kea": self.kea, "provisionable": dict(sorted(self.provisionable.items())),
                "not_provisionable": {t: sorted(v) for t, v in sorted(self.not_provisionable.items())}}

    def text(self) -> str:
        n = sum(self.provisionable.values())
        waiting = sum(len(v) for v in self.not_provisionable.values())
        lines = [f"wrote {self.folder}: {n} switches provisionable ({self.kea}: {n} reservations)"]
        if waiting:
            lines.append(f"not yet provisionable (no MAC in the inventory): {waiting}")
            for tier, names in sorted(self.not_provisionable.items()):
                shown = ", ".join(sorted(names)[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
                lines.append(f"  {tier}: {shown}")
        return "\n".join(lines)


@dataclass(frozen=True)
class _Plan:
    device: Device
    row: InventoryRow | None
    zero: ZeroTouch | None


def _plan(fabric: Fabric, rows: list[InventoryRow], inventory: Path) -> list[_Plan]:
    """Every switch of the fabric with its inventory row and its NOS's provisioning; SpecError naming the line of a
    switch that cannot be provisioned."""
    m = fabric.management
    assert m is not None and m.ztp is not None
    images = dict(m.ztp.images)
    by_device = {r.device: r for r in rows}
    out: list[_Plan] = []
    problems: list[Finding] = []
    for d in fabric.switches():
        row = by_device.get(d.name)
        target = targets.nos_target(str(d.nos))
        url = f"{m.ztp.server.rstrip('/')}/{device_path(d.name, '')}"
        zero = target.zero_touch(d, url, images.get(str(d.nos))) if isinstance(target, DeviceTarget) else None
        if row is not None and zero is None:
            problems.append(Finding(str(inventory), "", f"{d.name} runs {d.nos}, for which teton writes no zero-touch "
                                    "provisioning", rule="ztp-inventory", line=row.line))
        elif row is not None and d.mgmt is None:
            problems.append(Finding(str(inventory), "", f"{d.name} has no management address in the design",
                                    rule="ztp-inventory", line=row.line))
        out.append(_Plan(d, row, zero))
    if problems:
        raise SpecError(problems)
    return out


def write_ztp(build: Path, inventory: Path, out: Path) -> ZtpSummary:
    folder = BuildFolder.open(build)
    fabric = folder.fabric()
    m = fabric.management
    if m is None or m.network is None or m.ztp is None:
        raise TetonError(f"{build}: the build's spec has no `ztp:` section (where the switches fetch their files) or "
                         "no management.network; add them and render again (docs/day0.md)")
    z, mgmt = m.ztp, m
    _refuse_output(build, out)
    rows = read_inventory(inventory, fabric)
    plans = _plan(fabric, rows, inventory)
    v6 = ipaddress.ip_network(m.network).version == 6
    summary = ZtpSummary(out, KEA6 if v6 else KEA4)

    def fill(tmp: Path) -> None:
        entries: dict[str, dict[str, Any]] = {}

        def put(rel: str, text: str, target: str) -> None:
            data = text.encode("utf-8")
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            entries[rel] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "target": target}

        ready: dict[str, ZtpDevice] = {}
        waiting: dict[str, ZtpDevice] = {}
        reservations: list[Reservation] = []
        for p in plans:
            d = p.device
            if p.row is None or p.zero is None:
                waiting[d.name] = ZtpDevice(d.name, str(d.nos), d.role, d.zone, d.plane, None, None, None, None, ())
                summary.not_provisionable.setdefault(d.role, []).append(d.name)
                continue
            own = folder.device_files(d.name)
            clash = sorted(set(own) & set(p.zero.files))
            if clash:
                raise TetonError(f"{d.name}: the provisioning file {clash[0]!r} would replace a build file")
            for name, text in sorted(own.items()):
                put(device_path(d.name, name), text, str(d.nos))
            for name, text in sorted(p.zero.files.items()):
                put(device_path(d.name, name), text, GENERATOR_TARGET)
            address = str(d.mgmt).split("/", 1)[0]
            ready[d.name] = ZtpDevice(d.name, str(d.nos), d.role, d.zone, d.plane, p.row.mac, p.row.serial, address,
                                      p.zero.entry, tuple(sorted({*own, *p.zero.files})))
            reservations.append(Reservation(d.name, p.row.mac, address, f"{z.server.rstrip('/')}/"
                                            f"{device_path(d.name, p.zero.entry)}", p.zero.onie_installer))
            summary.provisionable[d.role] = summary.provisionable.get(d.role, 0) + 1
        kea = (kea_dhcp6 if v6 else kea_dhcp4)(mgmt, z, z.interface, reservations)
        put(summary.kea, dump(kea), GENERATOR_TARGET)
        put(INDEX, ZtpIndex(fabric.name, z.server, ready, waiting).dumps(), GENERATOR_TARGET)
        figures = {"switches": len(plans), "provisionable": len(ready), "not_provisionable": len(waiting)}
        build_manifest = (build / "manifest.json").read_bytes()
        source = {"cluster": fabric.name, "build_manifest_sha256": hashlib.sha256(build_manifest).hexdigest()}
        (tmp / "manifest.json").write_text(manifest_text(entries, figures, {GENERATOR_TARGET: VERSION}, source))

    publish(out, fill)
    return summary


def _refuse_output(build: Path, out: Path) -> None:
    """DIR may not be the build, lie inside it, or be a build folder (a ZTP folder is replaced, a build is not)."""
    real_out, real_build = Path(os.path.realpath(out)), Path(os.path.realpath(build))
    if real_out == real_build or real_out.is_relative_to(real_build) or real_build.is_relative_to(real_out):
        raise TetonError(f"{out}: the ZTP folder must be outside the build folder {build}")
    existing = read_manifest(out) if out.is_dir() else None
    if existing is not None and set(existing.get("targets", {})) != {GENERATOR_TARGET}:
        raise TetonError(f"{out} is a build folder, not one `teton ztp` wrote; refusing to replace it")
