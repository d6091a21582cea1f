"""EOS's live transport: the whole startup-config over eAPI (`teton.targets.eos.eapi`) in a configure session,
committed, or aborted with the running config untouched; and what a switch shows, read over eAPI for `teton verify
live` (`Reader`: its Established peers, the vias of a route, `show lldp neighbors`).  Registered by the package for
deploy mode `live` (`teton.targets.transports`); stack config `teton:eapiPort` (443) and `teton:eapiVerify` (a CA
file, or `false`), secrets `eapi_user` (admin) and `eapi_password`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from teton.buildfolder import device_path
from teton.targets.transports import Device, TransportSettings, live_check, resolve_files

if TYPE_CHECKING:
    from teton.targets.eos.eapi import EapiClient


class EosTransport:
    """Arista EOS over eAPI: the startup-config replaces the running config in one session."""

    def __init__(self, secrets: Mapping[str, str], credentials: tuple[str, str], verify: str | bool = True,
                 port: int = 443):
        self.secrets = dict(secrets)
        self.credentials, self.verify, self.port = credentials, verify, port

    def _client(self, device: Device) -> EapiClient:
        from teton.targets.eos.eapi import EapiClient  # urllib and ssl only when a live deploy needs them

        return EapiClient(device.management_host(), self.credentials, verify=self.verify, port=self.port)

    def _startup(self, device: Device) -> str:
        return resolve_files(device.nos, device.build_files(), self.secrets)[
            device_path(device.name, "startup-config")]

    def snapshot(self, device: Device) -> str:
        return self._client(device).running_config()

    def push(self, device: Device) -> None:
        self._client(device).replace_config(self._startup(device), session=f"teton-{device.name}")

    def restore(self, device: Device, snapshot: Any) -> None:
        self._client(device).replace_config(str(snapshot), session=f"teton-rollback-{device.name}")

    def check(self, device: Device, timeout: float) -> list[str]:
        return live_check(device, self._client(device).established_peers, timeout)

    def drift(self, device: Device) -> list[str]:
        return self._client(device).session_diff(self._startup(device), masked=self.secrets)

    def established_peers(self, device: Device) -> frozenset[str]:
        return self._client(device).peers()

    def nexthops(self, device: Device, prefix: str) -> int:
        return self._client(device).route_vias(prefix)

    def lldp(self, device: Device) -> Any:
        return self._client(device).lldp_neighbors()


def live_transport(s: TransportSettings) -> EosTransport:
    """The `live` factory: eAPI settings from the stack config, credentials from the secrets."""
    verify: Any = s.config.get("eapiVerify", True)
    verify = False if str(verify).lower() == "false" else True if str(verify).lower() == "true" else verify
    creds = (s.secrets.get("eapi_user", "admin"), s.secrets.get("eapi_password", ""))
    return EosTransport(s.secrets, creds, verify=verify, port=int(s.config.get("eapiPort", 443)))
