"""`teton validate --rendered DIR`: checks over a rendered build folder (the files, not the spec).

1. The manifest: every file it lists is there with its sha256 (a hand edit is reported), nothing unlisted.
2. fabric.json is read back into the Fabric the build was rendered from; its devices say which target owns which
   device's files.
3. Every target reads its files back into NOS-neutral views and runs its vendor's validation (SONiC YANG, pyavd, the
   EOS startup-config against its structured config).
4. The cross-device rules (`teton.validate.rules`) run over all views; plaintext secrets are searched in every file
   (`teton.validate.plaintext`).  A member's or the tier's build of a site counts its sessions to the site's other
   builds (neighbours on its `Fabric.externals`), which `teton verify` of the site proves.

Never raises on a corrupt or missing file: each is a finding naming the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from teton import targets
from teton.buildfolder import FABRIC_JSON, MANIFEST, BuildFileError, BuildFolder
from teton.fabric.externals import external_addresses
from teton.fabric.model import Fabric
from teton.fabric.serialize import FabricFormatError
from teton.findings import Finding
from teton.targets import DeviceView, RenderContext, reference_folders
from teton.targets.parallel import map_chunks
from teton.validate.plaintext import scan
from teton.validate.rules import (
    check_bgp_sessions,
    check_control_class,
    check_lossless_class,
    check_mtu,
    check_qos,
    check_router_ids,
    check_scheduling,
    external_sessions,
)

_NOT_SCANNED = frozenset({FABRIC_JSON, MANIFEST})


def check_files(build: BuildFolder) -> list[Finding]:
    """One pass over the folder, on all cores: every listed file exists with the listed sha256, every file is listed,
    and no file holds a secret in plaintext."""
    manifest = build.manifest()
    out: list[Finding] = []
    if manifest is None:
        out.append(Finding(MANIFEST, "", "missing or unreadable: is this a teton build folder?", rule="manifest"))
    listed = manifest["files"] if manifest is not None else None
    present = [rel for rel in build.paths() if rel != MANIFEST]
    for found in map_chunks(partial(_check_chunk, build, listed), present):
        out += found
    if listed is not None:
        out += [Finding(rel, "", "listed in manifest.json but missing", rule="manifest")
                for rel in sorted(set(listed) - set(present))]
    return out


def _check_chunk(build: BuildFolder, listed: dict[str, Any] | None, rels: Sequence[str]) -> list[Finding]:
    out: list[Finding] = []
    for rel in rels:
        try:
            data = build.bytes(rel)
        except BuildFileError as exc:
            out.append(Finding(rel, "", exc.problem, rule="io"))
            continue
        if listed is not None:
            entry = listed.get(rel)
            if entry is None:
                out.append(Finding(rel, "", "not listed in manifest.json: teton did not write it", rule="manifest"))
            elif not isinstance(entry, dict) or entry.get("sha256") != hashlib.sha256(data).hexdigest():
                out.append(Finding(rel, "", "changed since teton rendered it (its sha256 differs from manifest.json): "
                                   "render again rather than editing artifacts", rule="manifest"))
        if rel not in _NOT_SCANNED:
            try:
                out += scan(rel, data.decode("utf-8"))
            except UnicodeDecodeError:
                out.append(Finding(rel, "", "not UTF-8 text", rule="io"))
    return out


def read_views(source: BuildFolder, fabric: Fabric, ctx: RenderContext,
               vendor: bool = True) -> tuple[list[DeviceView], list[Finding]]:
    """Every target's read-back of its files: views of all devices, and the findings of the reading (and vendors)."""
    views: list[DeviceView] = []
    findings: list[Finding] = []
    for t in targets.targets():
        v, f = t.read_back(source, fabric, ctx, vendor)
        views += v
        findings += f
    views.sort(key=lambda v: v.kind != "switch")   # switches first: a finding about a link names the switch's file
    return views, findings


@dataclass
class Rendered:
    """What `validate --rendered` found, and the sessions it left to the site's verify (None: not a site's build)."""

    findings: list[Finding]
    site_sessions: int | None = None


def validate_rendered(build: Path, yang_dir: Path | None = None, vendor: bool = True) -> list[Finding]:
    """Every finding about the rendered build folder `build`."""
    return check_rendered(build, yang_dir, vendor).findings


def check_rendered(build: Path, yang_dir: Path | None = None, vendor: bool = True) -> Rendered:
    """`validate_rendered` with the count of the sessions to the site's other builds (a site's member or tier)."""
    if not Path(build).is_dir():
        return Rendered([Finding(str(build), "", "no such folder", rule="io")])
    source = BuildFolder(build)
    findings = check_files(source)
    try:
        fabric = source.fabric()
    except BuildFileError as exc:
        return Rendered(findings + [Finding(exc.path, "", exc.problem, rule="io")])
    except FabricFormatError as exc:
        return Rendered(findings + [Finding(FABRIC_JSON, "", str(exc), rule="io")])
    ctx = RenderContext(folders=reference_folders({"--yang-dir": yang_dir}), validate=vendor)
    views, found = read_views(source, fabric, ctx, vendor)
    findings += found
    externals = external_addresses(fabric)
    findings += check_bgp_sessions(views, externals)
    for rule in (check_mtu, check_qos, check_router_ids, check_scheduling):
        findings += rule(views)
    findings += check_lossless_class(views, fabric.qos)
    findings += check_control_class(views, fabric.qos)
    return Rendered(findings, external_sessions(views, externals) if fabric.externals else None)
