"""Attack: read the twin's resolved secrets off its disk.  `/run/teton/twin/<name>/rt/*/frr.conf` (the BGP password in
clear, as FRR needs it) was 0644 in 0755 folders and stayed there after a failed `up`; the resolved files are 0600 in
0700 folders (owner frr, the daemons' user), the twin's state file (it holds the plan) 0600, and a failed `up` leaves
no resolved config behind.

The `up` here fails on purpose where it would create the namespaces (nothing machine-wide is touched), after every
config was written: no namespace, no daemon, no twin flock needed."""

from __future__ import annotations

import stat
import tempfile
from pathlib import Path

import pytest
import yaml

from tests.helpers import LAB
from teton.pipeline import build
from teton.twin import runtime, service

pytestmark = pytest.mark.root("network namespaces, FRR daemons and the twin's files given to user frr")

SECRET = "Att4ck-bgp-s3cret"
SECRETS = {"bgp_backend": SECRET, "bgp_frontend": SECRET, "ntp_key": "n",
           "aaa_key": "k", "breakglass_sha512": "$6$s$h", "snmpv3_auth": "a",
           "snmpv3_priv": "p", "munge_key": "m"}


def test_resolved_configs_are_private_and_gone_after_a_failed_up(tmp_path, monkeypatch):
    data = yaml.safe_load(LAB.read_text())
    data["name"] = "attack-secrets"          # its own twin name: never the machine-wide lab twin
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "build"
    build(spec, out, force=True)
    root = Path(tempfile.mkdtemp(prefix="teton-attack-", dir="/tmp"))     # frr must traverse to it
    monkeypatch.setattr(service, "STATE_ROOT", root)
    monkeypatch.setattr(runtime.sysctl, "raise_neigh_thresholds", lambda needed: False)
    monkeypatch.setattr(runtime.sysctl, "restore_neigh_thresholds_if_idle", lambda: False)
    seen: dict[str, int] = {}

    def fail_here(plan, ns, batch):          # every config is written by now: record the modes, then fail
        for p in (root / "attack_secrets" / "rt").rglob("*"):
            seen[str(p.relative_to(root))] = p.stat().st_mode
        return ["injected failure"]

    monkeypatch.setattr(runtime.ns_ops, "make_namespaces", fail_here)
    try:
        with pytest.raises(runtime.TwinError, match="injected failure"):
            service.up(str(out), secrets=SECRETS)
        confs = {p: m for p, m in seen.items() if p.endswith(".conf")}
        assert any(p.endswith("/frr.conf") for p in confs) and any(p.endswith("/bgpd.conf") for p in confs)
        loose = {p: stat.filemode(m) for p, m in seen.items()
                 if (stat.S_ISDIR(m) and stat.S_IMODE(m) != 0o700) or
                    (stat.S_ISREG(m) and (p.endswith(".conf") or p.endswith(".json")) and stat.S_IMODE(m) != 0o600)}
        assert loose == {}, f"resolved files readable by others: {sorted(loose.items())[:5]}"
        left = [p for p in root.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
        assert left == [], f"resolved secrets left after the failed up: {left[:5]}"
    finally:
        import shutil

        shutil.rmtree(root, ignore_errors=True)
