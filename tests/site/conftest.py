"""The lab site (inventory/site-lab.yaml) rendered once for the session, and copies of it with three and four
clusters (a third and a fourth copy of inventory/lab.yaml with their own pools, ASNs and management network)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from teton.cli.app import main

ROOT = Path(__file__).resolve().parents[2]
LAB_SITE = ROOT / "inventory" / "site-lab.yaml"


def lab_copy(name: str, k: int) -> str:
    """Cluster `name`, copy k (3, 4 ...) of the lab: its pools, ASNs and management network moved by k."""
    return f"""  - name: {name}
    spec: lab.yaml
    overrides:
      backend:
        asn: {{atsw: 42{k}0000000, ctsw: 42{k}0000100, rtsw: 42{k}1000000, rtsw_zone_stride: 1000}}
        addressing:
          ipv4:
            {{loopbacks: 10.{2 * k + 1}.0.0/24, fabric_links: 10.{2 * k + 2}.0.0/24, host_links: 10.{64 + k}.0.0/24}}
          ipv6: {{loopbacks: "fd00:0:0:{k}1::/64", fabric_links: "fd00:0:0:{k}2::/64", host_links: "fd00:{k}::/56"}}
      frontend:
        addressing:
          ipv4:
            loopbacks: 10.{128 + 2 * k}.0.0/24
            fabric_links: 10.{129 + 2 * k}.0.0/24
            host_links: 10.{192 + 4 * k}.0.0/22
      management:
        network: 198.18.{k}.0/24
        gateway: 198.18.{k}.1
        prefixes: [198.18.{k}.0/24, 198.51.100.0/24]
        domain: {name}.example.net
"""


def site_with(extra: list[tuple[str, int]]) -> str:
    """The lab site's spec with more lab copies after its two clusters."""
    text = LAB_SITE.read_text()
    head, sep, tail = text.partition("bag:\n")
    return head + "".join(lab_copy(n, k) for n, k in extra) + sep + tail


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with lab.yaml, the lab site (site.yaml), and its three- and four-cluster versions."""
    d = tmp_path_factory.mktemp("site")
    shutil.copyfile(ROOT / "inventory" / "lab.yaml", d / "lab.yaml")
    shutil.copyfile(LAB_SITE, d / "site.yaml")
    (d / "site3.yaml").write_text(site_with([("lab-c", 3)]))
    (d / "site4.yaml").write_text(site_with([("lab-c", 3), ("lab-d", 4)]))
    return d


@pytest.fixture(scope="session")
def lab_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """inventory/site-lab.yaml rendered once (`teton render SITE -o OUT --merged OUT-merged`, in this process);
    OUT-merged is beside OUT, named `merged`."""
    d = tmp_path_factory.mktemp("lab-site")
    result = CliRunner().invoke(main, ["render", str(LAB_SITE), "-o", str(d / "out"), "--merged", str(d / "merged"),
                                       "--dask", "off"])
    assert result.exit_code == 0, result.output
    return d / "out"


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (not the publishers' lock files) by relative path, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")}
