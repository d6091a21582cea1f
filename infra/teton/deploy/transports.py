"""The twin transport: how a switch's rendered files reach the digital twin (`teton twin up`), for any NOS with a
read-back.  A switch's own frr.conf (SONiC, and any NOS whose bgpd is FRR) or, for a NOS that cannot run here, the FRR
spelling of the routing its files read back into, goes into its twin FRR with frr-reload (`teton.frr.vtysh`).
Registered for every NOS of deploy mode `twin` (`deploy/modes.py`).  For `teton verify live` it is also every twin
switch's `Reader` and every server's `Pinger`: what `teton twin verify` asks (bgpd's sessions over its vty socket, the
kernel's next hops, pings in a server's namespace), and LLDP from lldpd in every namespace (`teton.twin.lldp`, as
`teton twin lldp` starts and collects it, once per transport, settled to the cables as they lie now).

The interface every transport has (`Device`, `Transport`) and the live transports are below the deploy layer:
`teton.targets.transports` and each NOS's own package (`teton.targets.<nos>.transport`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from teton import targets
from teton.expect import Sampling, wait_until_kept
from teton.findings import TetonError
from teton.frr import vtysh as frr_push
from teton.secrets import mask, resolve
from teton.targets import BuildFiles
from teton.targets.transports import Device, NotObserved, Transport, device_promise

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
        self._lock = threading.Lock()
        self._lldp: dict[str, Any] | None = None
        self.lldp_settled: bool | None = None      # whether lldpd's view matched the cables (None: not collected)

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

    # -------------------------------------------------------------------------------- reads (`teton verify live`)

    def established_peers(self, device: Device) -> frozenset[str]:
        self._dir(device)
        return frozenset(self.twin.established_peers(self.twin.bgp_summary(device.name)))

    def nexthops(self, device: Device, prefix: str) -> int:
        self._dir(device)
        return self.twin.kernel_nexthops(device.name, prefix)

    def lldp(self, device: Device) -> Any:
        """What lldpd in the device's namespace sees, from one collection of every namespace's (lldpd started where
        it does not run yet), made at the first call."""
        from teton.twin import lldp as twin_lldp

        with self._lock:
            if self._lldp is None:
                twin_lldp.start(self.twin)
                self._lldp, _, self.lldp_settled = twin_lldp.collect(self.twin)
        if device.name not in self._lldp:
            raise NotObserved(f"{device.name}: no lldpd of twin {self.name!r} speaks for it")
        return self._lldp[device.name]

    def reaches(self, host: Device, src: str, dst: str) -> bool:
        return self.twin.ping(host.name, src, dst, count=1, timeout=1.0)


TWIN_CHECK_ECMP = 64   # ECMP widths a switch's health check on the twin probes (towards other racks)
