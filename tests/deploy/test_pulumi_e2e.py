"""End to end with the real Pulumi engine (scripts/setup builds it) against a digital twin of the lab's own.

The twin is named `pulumi_lab` (a copy of the lab spec with another cluster name), so it never collides with the
machine-wide "lab" twin; it is removed at the end whatever happens.  The stack uses a local file backend and the
passphrase secrets provider; the project folder links the repository's infra/ and scripts/ (the language host and
the provider are the project's own).  The tests run in order on one stack:

1. `pulumi up` converges a twin whose canary RTSW was edited by hand, `teton twin verify` is clean, nothing drifts;
2. `pulumi preview --expect-no-changes` passes;
3. draining one rack's switch in the spec previews that switch only, with its changed lines;
4. a bad config on the canary (a wrong remote AS in its rendered frr.conf) stops the rollout: the canary is rolled
   back, the later wave's switch is untouched, the twin verifies, the stack still shows both as pending;
5. `teton drift` names the switch edited by hand, `pulumi refresh` records it and the next `up` repairs it;
6. no secret value is in the exported stack, the state folder or any output of the engine and its plugins.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.helpers import LAB, ROOT

pytestmark = pytest.mark.root

TWIN = "pulumi_lab"
STACK = "twin"
SECRETS = {"bgp_backend": "bgp-Pul-s3cret%", "bgp_frontend": "bgp-fe-Pul-s3cret%", "ntp_key": "ntp-Pul-key",
           "aaa_key": "t@cacs-Pul-key", "breakglass_sha512": "$6$Pulsalt$hash",
           "snmpv3_auth": "auth-Pul-pass", "snmpv3_priv": "priv-Pul-pass", "munge_key": "munge-Pul-key"}
CANARY, LATER = "z01-r001-rtsw", "z02-r001-rtsw"


class Run:
    """The stack, and every output of every engine run (scanned for secrets at the end)."""

    def __init__(self, root: Path):
        from teton.deploy.engine import Engine

        self.root = root
        self.spec = root / "pulumi-lab.yaml"
        self.build = root / "build"
        self.project = root / "project"
        self.project.mkdir()
        shutil.copy(ROOT / "Pulumi.yaml", self.project / "Pulumi.yaml")
        (self.project / "infra").symlink_to(ROOT / "infra")
        (self.project / "scripts").symlink_to(ROOT / "scripts")
        self.engine = Engine(self.project, root / "state", "e2e-passphrase")
        self.outputs: list[str] = []

    def pulumi(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        res = self.engine.run(*args, "--stack", STACK, check=False)
        self.outputs += [res.stdout, res.stderr]
        if check and res.returncode != 0:
            raise AssertionError(f"pulumi {' '.join(args)}: rc {res.returncode}\n{res.stdout[-4000:]}\n"
                                 f"{res.stderr[-2000:]}")
        return res

    def render(self, data: dict) -> None:
        from teton.pipeline import build

        self.spec.write_text(yaml.safe_dump(data, sort_keys=False))
        build(self.spec, self.build, force=True)

    def running(self, switch: str) -> str:
        from teton.frr import vtysh as frr_push
        from teton.twin import service
        from teton.twin.runtime import Twin

        return frr_push.running_config(Twin.load(service.state_dir(TWIN) / "rt").node_dir(switch))


def _spec() -> dict:
    data = yaml.safe_load(LAB.read_text())
    data["name"] = "pulumi-lab"
    return data


def _changed_devices(preview_json: str) -> set[str]:
    """Switches and racks of hosts that a `pulumi preview --json` would change."""
    steps = json.loads(preview_json)["steps"]
    kinds = ("teton:index:Switch::", "teton:index:HostRack::")
    return {s["urn"].split("::")[-1] for s in steps if s["op"] != "same" and any(k in s["urn"] for k in kinds)}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from teton.twin import service

    r = Run(tmp_path_factory.mktemp("pulumi-e2e"))
    r.render(_spec())
    service.down(name=TWIN)
    service.up(str(r.build), secrets=SECRETS)
    try:
        r.engine.run("stack", "init", STACK, "--secrets-provider", "passphrase")
        for key, value in (("teton:spec", str(r.spec)), ("teton:build", str(r.build)), ("teton:target", "twin"),
                           ("teton:twin", TWIN), ("teton:checkTimeout", "20")):
            r.engine.config_set(STACK, key, value)
        for name, value in SECRETS.items():
            r.engine.config_set(STACK, f"teton:secrets.{name}", value, secret=True, path=True)
        yield r
    finally:
        service.down(name=TWIN)


def test_up_converges_the_twin_and_verify_is_clean(run):
    from teton.deploy.drift import twin_drift
    from teton.twin import service

    node = service.state_dir(TWIN) / "rt" / f"tt-{TWIN}-{CANARY}"
    subprocess.run(["vtysh", "--vty_socket", str(node), "-c", "configure", "-c", "router bgp 4201001001",
                    "-c", "timers bgp 3 9"], check=True, capture_output=True)       # a hand edit on the canary
    assert twin_drift(run.build, TWIN, SECRETS)["drifted"] == [CANARY]
    res = run.pulumi("up", "--yes", "--skip-preview")
    assert re.search(r"\+ +\d+ created", res.stdout), res.stdout[-2000:]
    report = service.verify(TWIN)
    assert report.ok, report
    assert twin_drift(run.build, TWIN, SECRETS)["drifted"] == []
    assert "timers bgp 1 3" in run.running(CANARY)


def test_preview_expect_no_changes_passes_after_up(run):
    run.pulumi("preview", "--expect-no-changes")


def test_a_one_rack_change_previews_only_that_racks_switch_with_its_lines(run):
    data = _spec()
    data["backend"]["drain"] = [LATER]
    run.render(data)
    res = run.pulumi("preview", "--json")
    assert _changed_devices(res.stdout) == {LATER}
    text = run.pulumi("preview", "--diff").stdout
    assert "set as-path prepend 4201002001 4201002001 4201002001" in text
    assert text.count("~ teton:index:Switch: (update)") == 1 and f"[id={LATER}]" in text, text[-3000:]


def test_a_bad_config_on_the_canary_stops_the_rollout_and_is_rolled_back(run):
    from teton.twin import service

    data = _spec()
    data["backend"]["drain"] = [LATER]
    run.render(data)
    frr = run.build / "devices" / CANARY / "frr.conf"
    frr.write_text(frr.read_text().replace("remote-as 4200000101", "remote-as 4200000999"))   # a renderer bug
    manifest = json.loads((run.build / "manifest.json").read_text())
    manifest["files"][f"devices/{CANARY}/frr.conf"]["sha256"] = hashlib.sha256(frr.read_bytes()).hexdigest()
    manifest["files"][f"devices/{CANARY}/frr.conf"]["bytes"] = frr.stat().st_size
    (run.build / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    canary_before, later_before = run.running(CANARY), run.running(LATER)

    res = run.pulumi("up", "--yes", "--skip-preview", check=False)
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert f"{CANARY} (wave 0): unhealthy after the push" in out, out[-3000:]
    assert "rolled back to its previous config (healthy again)" in out, out[-3000:]
    assert run.running(CANARY) == canary_before            # restored
    assert run.running(LATER) == later_before              # never touched: its wave comes after the failed gate
    assert "as-path prepend" not in run.running(LATER)
    assert service.verify(TWIN).ok
    pending = _changed_devices(run.pulumi("preview", "--json").stdout)
    assert pending == {CANARY, LATER}                      # the state still says neither was deployed

    data["backend"].pop("drain")                           # back to the good build
    run.render(data)
    run.pulumi("up", "--yes", "--skip-preview")
    run.pulumi("preview", "--expect-no-changes")


def test_refresh_records_drift_and_up_repairs_it(run):
    from teton.twin import service

    node = service.state_dir(TWIN) / "rt" / f"tt-{TWIN}-{LATER}"
    subprocess.run(["vtysh", "--vty_socket", str(node), "-c", "configure", "-c", "router bgp 4201002001",
                    "-c", "coalesce-time 500"], check=True, capture_output=True)
    drift = _teton_drift(run)
    assert drift.returncode == 1, drift.stderr
    assert f"{LATER}\n  - router bgp 4201002001 / coalesce-time 500" in drift.stdout
    assert "1 of 29 switches of twin pulumi_lab drifted" in drift.stderr      # backend 14, front end 15
    run.pulumi("refresh", "--yes", "--skip-preview")
    res = run.pulumi("preview", "--expect-no-changes", "--diff", check=False)
    assert res.returncode != 0 and "coalesce-time 500" in res.stdout
    run.pulumi("up", "--yes", "--skip-preview")
    run.pulumi("preview", "--expect-no-changes")
    assert "coalesce-time 10" in run.running(LATER)
    assert _teton_drift(run).returncode == 0


def _teton_drift(run: Run) -> subprocess.CompletedProcess[str]:
    """`teton drift BUILD --twin pulumi_lab` with the secrets in TETON_SECRET_<name> variables."""
    env = {**os.environ, **{f"TETON_SECRET_{k}": v for k, v in SECRETS.items()}}
    res = subprocess.run([str(ROOT / ".venv/bin/teton"), "drift", str(run.build), "--twin", TWIN], env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    run.outputs += [res.stdout, res.stderr]
    return res


def test_no_secret_value_in_the_stack_the_state_or_the_logs(run):
    export = run.pulumi("stack", "export").stdout
    assert "TETON_SECRET_bgp_backend" in export            # the state holds references ...
    state_files = "".join(p.read_text(errors="replace") for p in (run.root / "state").rglob("*") if p.is_file())
    logs = "\n".join(run.outputs)
    for name, value in SECRETS.items():                    # ... never a value
        assert value not in export, name
        assert value not in state_files, name
        assert value not in logs, name
