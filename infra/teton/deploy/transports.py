"""The twin transport: how a switch's rendered files reach the digital twin (`teton twin up`), for any NOS with a
read-back.  A switch's own frr.conf (SONiC, and any NOS whose bgpd is FRR) or, for a NOS that cannot run here, the FRR
spelling of the routing its files read back into, goes into its twin FRR with frr-reload (`teton.frr.vtysh`).
Registered for every NOS of deploy mode `twin` (`deploy/modes.py`).

The interface every transport has (`Device`, `Transport`) and the live transports are below the deploy layer:
`teton.targets.transports` and each NOS's own package (`teton.targets.<nos>.transport`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from teton import targets
from teton.expect import Sampling, wait_until_kept
from teton.findings import TetonError
from teton.frr import vtysh as frr_push
from teton.secrets import mask, resolve
from teton.targets import BuildFiles
from teton.targets.transports import Device, Transport, device_promise

__all__ = ["TWIN_CHECK_ECMP", "Device", "Transport", "TwinTransport", "twin_frr_conf"]


# ------------------------------------------------------------------------------------------------------ the twin

def twin_frr_conf(device: Device) -> str:
    """What the twin runs for `device` (secret references unresolved): a SONiC switch's own frr.conf; for a NOS
    that cannot run here, the FRR spelling of the routing its files read back into (as `teton twin up` does)."""
    from teton.twin.artifacts import switch_frr_conf

    target = targets.nos_target(device.nos)
    if target is None or device.fabric is None:
        raise TetonError(f"{device.name}: no target for NOS {device.nos!r} or no fabric")
    view, findings = target.read_device(BuildFiles(files=device.build_files()),      # type: ignore[attr-defined]
                                        device.fabric.devices[device.name], None)
    if view is None:
        raise TetonError(f"{device.name}: its files cannot be read back: {'; '.join(map(str, findings))}")
    return switch_frr_conf(view, device.fabric)


class TwinTransport:
    """The digital twin named `twin` (`teton twin up`): one FRR per switch in a network namespace."""

    def __init__(self, twin: str, secrets: Mapping[str, str]):
        from teton.twin.service import load_twin

        self.name = twin
        self.secrets = dict(secrets)
        self.twin = load_twin(twin)

    def _dir(self, device: Device) -> Path:
        if device.name not in set(self.twin.switches):
            raise TetonError(f"{device.name} is not a switch of twin {self.name!r}")
        return self.twin.node_dir(device.name)

    def _config(self, device: Device) -> str:
        try:
            return resolve(twin_frr_conf(device), self.secrets)
        except KeyError as exc:
            raise TetonError(f"{device.name}: {exc.args[0]}") from None

    def snapshot(self, device: Device) -> str:
        return frr_push.running_config(self._dir(device))

    def push(self, device: Device) -> None:
        try:
            frr_push.reload(self._dir(device), self._config(device))
        except frr_push.PushError as exc:
            raise TetonError(f"{device.name}: {exc}: {self.masked(exc.output)[-600:]}") from None

    def restore(self, device: Device, snapshot: Any) -> None:
        try:
            frr_push.reload(self._dir(device), str(snapshot))
        except frr_push.PushError as exc:
            raise TetonError(f"{device.name}: rollback failed: {exc}: {self.masked(exc.output)[-600:]}") from None

    def masked(self, text: str) -> str:
        return mask(text, self.secrets.items())

    def check(self, device: Device, timeout: float) -> list[str]:
        """What the design promises this switch shows (`teton.expect`): its sessions Established, and the kernel's
        ECMP width towards a sample of the other racks; waits up to `timeout` seconds for both."""
        from teton.twin.service import TwinObserver

        sampling = Sampling(ecmp=TWIN_CHECK_ECMP, pings=0, ecmp_from=(device.name,), reach=0)
        report = wait_until_kept(device_promise(device, sampling), TwinObserver(self.twin), timeout)
        return report.problems(named=False)

    def drift(self, device: Device) -> list[str]:
        running = frr_push.running_config(self._dir(device))
        return [self.masked(x) for x in frr_push.delta(running, self._config(device), hostname=device.name).lines()]


TWIN_CHECK_ECMP = 64   # ECMP widths a switch's health check on the twin probes (towards other racks)
