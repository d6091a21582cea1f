"""A local HTTPS endpoint that implements the eAPI calls teton's client uses, to test the client (no EOS runs here).

It is a test double of the *protocol*, not of EOS: JSON-RPC 2.0 `runCmds` at /command-api with HTTP basic auth;
`enable`; `configure session NAME` (a session starts as a copy of the running config); `rollback clean-config`
(empties the session); config lines (appended; a line holding `bogus` is refused as EOS refuses an unknown command,
with error code 1002 and the per-command `errors` list in `data`); `commit`; `abort`; `show session-config diffs`;
`show running-config` (text); `show ip bgp summary` and `show ipv6 bgp summary` (JSON, peers as configured); `show ip
route PREFIX` and `show ipv6 route PREFIX` (JSON: the route to PREFIX with its vias as set, else the longest match
among the routes set, as EOS answers); `show lldp neighbors` (JSON, the neighbours as set).
"""

from __future__ import annotations

import base64
import difflib
import ipaddress
import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class Device:
    def __init__(self) -> None:
        self.running: list[str] = ["hostname old"]
        self.sessions: dict[str, list[str]] = {}
        self.peers: dict[str, dict[str, str]] = {"ipv4": {}, "ipv6": {}}
        self.routes: dict[str, list[dict[str, str]]] = {}        # prefix -> vias ({"nexthopAddr", "interface"})
        self.lldp: list[dict[str, Any]] = []                      # lldpNeighbors rows
        self.calls: list[list[str]] = []
        self.lock = threading.Lock()


def _result(cmd: str, dev: Device, session: str | None, fmt: str) -> tuple[Any, str | None]:
    """(result, session after the command); raises ValueError for a command EOS would refuse."""
    if cmd == "enable":
        return {}, session
    if cmd.startswith("configure session "):
        name = cmd.split()[-1]
        dev.sessions.setdefault(name, list(dev.running))
        return {}, name
    if cmd == "show running-config":
        return {"output": "\n".join(dev.running) + "\n"} if fmt == "text" else {}, session
    if cmd in ("show ip bgp summary", "show ipv6 bgp summary"):
        fam = "ipv6" if "ipv6" in cmd else "ipv4"
        return {"vrfs": {"default": {"peers": {p: {"peerState": s} for p, s in dev.peers[fam].items()}}}}, session
    if cmd.startswith(("show ip route ", "show ipv6 route ")):
        asked = ipaddress.ip_network(cmd.split()[-1])
        match = [p for p in dev.routes if asked.version == ipaddress.ip_network(p).version
                 and asked.subnet_of(ipaddress.ip_network(p))]            # type: ignore[arg-type]
        best = max(match, key=lambda p: ipaddress.ip_network(p).prefixlen, default=None)
        routes = {} if best is None else {best: {"routeType": "eBGP", "vias": dev.routes[best]}}
        return {"vrfs": {"default": {"routes": routes}}}, session
    if cmd == "show lldp neighbors":
        return {"tablesLastChangeTime": 0.0, "lldpNeighbors": list(dev.lldp)}, session
    if session is None:
        raise ValueError(f"% Invalid input (not in a configure session): {cmd}")
    if cmd == "rollback clean-config":
        dev.sessions[session] = []
    elif cmd == "commit":
        dev.running = dev.sessions.pop(session)
        return {}, None
    elif cmd == "abort":
        dev.sessions.pop(session, None)
        return {}, None
    elif cmd == "show session-config diffs":
        diff = difflib.unified_diff(dev.running, dev.sessions[session], "running-config", "session-config",
                                    lineterm="")
        return {"output": "\n".join(diff) + "\n"}, session
    elif "bogus" in cmd:
        raise ValueError("% Invalid input")
    else:
        dev.sessions[session].append(cmd)
    return {}, session


def make_handler(dev: Device, user: str, password: str) -> type[BaseHTTPRequestHandler]:
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            """Quiet: the test reads the calls, not a log."""

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/command-api":
                self.send_error(404)
                return
            if self.headers.get("Authorization") != expected:
                self.send_error(401, "Unauthorized")
                return
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            params = req["params"]
            results: list[Any] = []
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": req["id"]}
            with dev.lock:
                dev.calls.append(list(params["cmds"]))
                session = None
                for i, cmd in enumerate(params["cmds"]):
                    try:
                        out, session = _result(cmd, dev, session, params.get("format", "json"))
                    except ValueError as exc:
                        data = results + [{"errors": [str(exc)]}]
                        answer["error"] = {"code": 1002, "message": f"CLI command {i + 1} of "
                                           f"{len(params['cmds'])} '{cmd}' failed: invalid command", "data": data}
                        break
                    results.append(out)
                else:
                    answer["result"] = results
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A throwaway certificate for 127.0.0.1/localhost (with `cryptography`, which ansible-core already needs)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def serve(folder: Path, user: str, password: str) -> tuple[ThreadingHTTPServer, Device, Path]:
    dev = Device()
    cert, key = self_signed(folder)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(dev, user, password))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, dev, cert
