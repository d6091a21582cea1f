"""The built-in transports, registered by deploy mode and NOS (`teton.targets.transports`).

The transport classes still live in `teton.deploy.transports`; a NOS package that brings its own registers it the
same way (`register_transport("live", "<nos>", factory)`), and the provider resolves every push through the registry.
"""

from __future__ import annotations

from teton.deploy.transports import EosTransport, SonicSshTransport, TwinTransport
from teton.targets.transports import ANY_NOS, TransportSettings, register_transport


def _twin(s: TransportSettings) -> TwinTransport:
    return TwinTransport(s.twin, s.secrets)


def _eos(s: TransportSettings) -> EosTransport:
    verify = s.config.get("eapiVerify", True)
    verify = False if str(verify).lower() == "false" else True if str(verify).lower() == "true" else verify
    creds = (s.secrets.get("eapi_user", "admin"), s.secrets.get("eapi_password", ""))
    return EosTransport(s.secrets, creds, verify=verify, port=int(s.config.get("eapiPort", 443)))


def _sonic(s: TransportSettings) -> SonicSshTransport:
    return SonicSshTransport(s.secrets, user=s.secrets.get("ssh_user", "admin"))


register_transport("twin", ANY_NOS, _twin)
register_transport("live", "eos", _eos)
register_transport("live", "sonic", _sonic)
