"""`teton ztp serve`: each device gets its own files and nothing else, with its secrets resolved at fetch time; the
bring-up is counted and kept in the status file."""

from __future__ import annotations

import hashlib
import http.client
import io
import ipaddress
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from rich.console import Console

from teton import targets
from teton.findings import TetonError
from teton.manifest import MANIFEST
from teton.targets import DeviceTarget, Files
from teton.ztp.index import INDEX, ZtpDevice, ZtpIndex
from teton.ztp.serve import MAX_HEAD, MAX_HEADERS, ZtpServer, client_ip, parse_bind, serve
from teton.ztp.status import FETCHING, NOT_PROVISIONABLE, NOT_SEEN, PROVISIONED, LiveView

SECRET = "s3cr3t-Value"
FRR = "router bgp 65001\n neighbor 10.0.0.1 password TETON_SECRET_bgp_backend\n"
FILES = {
    "sw1": {"config_db.json": '{"DEVICE_METADATA": {"localhost": {"hostname": "sw1"}}}\n', "frr.conf": FRR,
            "ztp.json": '{"ztp": {"01-configdb-json": {"url": {"source": "http://x/devices/sw1/config_db.json"}}}}\n'},
    "sw2": {"config_db.json": '{"DEVICE_METADATA": {"localhost": {"hostname": "sw2"}}}\n', "frr.conf": FRR,
            "ztp.json": "{}\n"},
}
ADDRESSES = {"sw1": "127.0.0.1", "sw2": "10.9.9.9"}


def _device(name: str, zone: int, nos: str, files: dict[str, str]) -> ZtpDevice:
    return ZtpDevice(name, nos, "rtsw", zone, "backend", "aa:bb:cc:00:00:0" + name[-1], None, ADDRESSES[name],
                     "ztp.json", tuple(sorted(files)))


def write_folder(folder: Path, nos: str = "sonic", devices: dict[str, dict[str, str]] = FILES) -> Path:
    """A ZTP folder as `teton ztp` writes one: two provisionable SONiC switches and one without a MAC."""
    entries = {}
    for name, files in devices.items():
        (folder / "devices" / name).mkdir(parents=True)
        for file, text in files.items():
            (folder / "devices" / name / file).write_text(text)
            entries[f"devices/{name}/{file}"] = {"sha256": hashlib.sha256(text.encode()).hexdigest(),
                                                 "bytes": len(text), "target": "ztp" if file == "ztp.json" else "sonic"}
    (folder / MANIFEST).write_text(json.dumps({"generator": "teton", "format": 2, "files": entries, "plan": {}}))
    waiting = ZtpDevice("sw3", "sonic", "ctsw", None, "backend", None, None, None, None, ())
    index = ZtpIndex("lab", "http://127.0.0.1:8080", {n: _device(n, i + 1, nos, devices[n])
                                                      for i, n in enumerate(sorted(devices))}, {"sw3": waiting})
    (folder / INDEX).write_text(index.dumps())
    (folder / "kea-dhcp4.json").write_text("{}\n")
    return folder


def wait_until(cond: Callable[[], bool], timeout: float = 3.0) -> None:
    """The server logs a request just after answering it: wait (briefly) until it has."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class Client:
    """Requests to a server on 127.0.0.1, and the lines it logged."""

    def __init__(self, port: int, lines: list[str], server: ZtpServer | None = None) -> None:
        self.port, self.lines, self._server = port, lines, server

    @property
    def server(self) -> ZtpServer:
        assert self._server is not None
        return self._server

    def get(self, path: str, method: str = "GET") -> tuple[int, bytes]:
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            c.request(method, path)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def raw(self, data: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(data)
            out = b""
            while chunk := s.recv(65536):
                out += chunk
            return out


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_folder(tmp_path / "ztp")


@pytest.fixture
def start(folder: Path, tmp_path: Path) -> Iterator[Callable[..., Client]]:
    servers: list[ZtpServer] = []

    def run(**kw: object) -> Client:
        lines: list[str] = []
        server = ZtpServer(folder, "127.0.0.1:0", echo=lines.append, log_file=tmp_path / "requests.log",
                           **kw)
        servers.append(server)
        return Client(server.start(), lines, server)

    yield run
    for s in servers:
        s.stop()


@pytest.fixture
def client(start: Callable[..., Client], monkeypatch: pytest.MonkeyPatch) -> Client:
    monkeypatch.setenv("TETON_SECRET_bgp_backend", SECRET)
    return start()


def test_a_device_gets_its_file_with_the_secret_resolved_in_memory_only(client: Client, folder: Path) -> None:
    status, body = client.get("/devices/sw1/frr.conf")
    assert status == 200
    assert body.decode() == FRR.replace("TETON_SECRET_bgp_backend", SECRET)
    assert SECRET not in "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    status, body = client.get("/devices/sw1/ztp.json")
    assert status == 200 and body.decode() == FILES["sw1"]["ztp.json"]


def test_a_head_answers_without_a_body_and_counts_no_fetch(client: Client) -> None:
    status, body = client.get("/devices/sw1/frr.conf", "HEAD")
    assert status == 200 and body == b""
    assert client.server.bring_up.state("sw1") == NOT_SEEN


@pytest.mark.parametrize("path", [
    "/", "/manifest.json", "/ztp-index.json", "/kea-dhcp4.json", "/devices", "/devices/", "/devices/sw1",
    "/devices/sw1/", "/devices/../manifest.json", "/devices/%2e%2e/manifest.json", "/devices/%2e%2e/x",
    "/devices/sw1/%2e%2e/sw2/frr.conf", "/devices/sw1/frr%2econf", "/devices/sw1/frr.conf?x=1",
    "/devices/sw1/frr.conf#x", "//devices/sw1/frr.conf", "/devices/sw1//frr.conf", "/devices/sw1/frr.conf/",
    "/devices/sw1/missing.conf", "/devices/sw3/frr.conf", "/devices/nope/frr.conf", "/devices/sw1/.",
    "http://127.0.0.1/devices/sw1/frr.conf", "/./devices/sw1/frr.conf",
])
def test_nothing_but_a_device_file_is_served(client: Client, path: str) -> None:
    status, body = client.get(path)
    assert status == 404
    assert body == b"404 not found\n"


def test_another_devices_file_is_refused_to_this_client_and_the_refusal_says_why(client: Client) -> None:
    assert client.get("/devices/sw2/frr.conf")[0] == 404
    wait_until(lambda: any("sw2" in line for line in client.lines))
    assert any("client 127.0.0.1 is not sw2's address 10.9.9.9" in line for line in client.lines)


def test_any_client_hands_every_device_its_files(start: Callable[..., Client], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETON_SECRET_bgp_backend", SECRET)
    c = start(any_client=True)
    assert c.get("/devices/sw2/frr.conf")[0] == 200
    assert c.get("/devices/sw3/frr.conf")[0] == 404


def test_only_get_and_head(client: Client) -> None:
    for method in ("POST", "PUT", "DELETE", "OPTIONS"):
        assert client.get("/devices/sw1/frr.conf", method)[0] == 405
    reply = client.raw(b"POST /devices/sw1/frr.conf HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
    assert reply.startswith(b"HTTP/1.1 405 ") and b"Allow: GET, HEAD" in reply


def test_a_missing_secret_is_refused_and_logged_by_name(start: Callable[..., Client], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TETON_SECRET_bgp_backend", raising=False)
    monkeypatch.setenv("TETON_SECRET_other", SECRET)
    c = start()
    assert c.get("/devices/sw1/frr.conf")[0] == 503
    assert c.get("/devices/sw1/ztp.json")[0] == 200          # no reference: served as it is
    wait_until(lambda: len(c.lines) >= 2)
    refused = [line for line in c.lines if line.startswith("503")]
    assert refused and "sw1/frr.conf" in refused[0] and "'bgp_backend'" in refused[0]
    log = [json.loads(line) for line in (tmp_path / "requests.log").read_text().splitlines()]
    assert sorted(r["status"] for r in log) == [200, 503]
    entry = next(r for r in log if r["status"] == 503)
    assert entry["device"] == "sw1" and entry["file"] == "frr.conf" and "bgp_backend" in entry["reason"]
    assert SECRET not in (tmp_path / "requests.log").read_text() + "".join(c.lines)


def test_a_secret_of_the_wrong_kind_is_refused_without_its_value(start: Callable[..., Client],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    bad = "with space and #"
    monkeypatch.setenv("TETON_SECRET_bgp_backend", bad)
    c = start()
    assert c.get("/devices/sw1/frr.conf")[0] == 503
    wait_until(lambda: bool(c.lines))
    assert "BGP password" in c.lines[0] and bad not in c.lines[0]


def test_a_file_changed_after_writing_is_refused(client: Client, folder: Path) -> None:
    (folder / "devices/sw1/frr.conf").write_text(FRR + "neighbor 10.0.0.66 remote-as 666\n")
    assert client.get("/devices/sw1/frr.conf")[0] == 500
    wait_until(lambda: bool(client.lines))
    assert "changed after `teton ztp` wrote it" in client.lines[0]


def test_a_symlink_is_not_followed(client: Client, folder: Path) -> None:
    target = folder / "devices/sw1/ztp.json"
    (folder / "elsewhere.json").write_text(target.read_text())
    target.unlink()
    target.symlink_to(folder / "elsewhere.json")
    assert client.get("/devices/sw1/ztp.json")[0] == 500
    os.rename(folder / "devices/sw1", folder / "sw1-real")
    (folder / "devices/sw1").symlink_to(folder / "sw1-real")
    assert client.get("/devices/sw1/config_db.json")[0] == 500


def test_the_bring_up_moves_from_not_seen_to_fetching_to_provisioned(client: Client) -> None:
    up = client.server.bring_up
    assert up.state("sw1") == NOT_SEEN and up.state("sw3") == NOT_PROVISIONABLE
    client.get("/devices/sw1/ztp.json")
    wait_until(lambda: up.state("sw1") == FETCHING)
    client.get("/devices/sw1/config_db.json")
    client.get("/devices/sw1/config_db.json")
    wait_until(lambda: len(client.lines) >= 3)
    assert up.state("sw1") == FETCHING
    client.get("/devices/sw1/frr.conf")
    wait_until(lambda: any("sw1 provisioned" in line for line in client.lines))
    assert up.state("sw1") == PROVISIONED
    doc = up.to_json()
    assert doc["total"] == {NOT_SEEN: 1, FETCHING: 0, PROVISIONED: 1, NOT_PROVISIONABLE: 1}
    assert doc["by_tier"]["rtsw"][PROVISIONED] == 1 and doc["by_tier"]["ctsw"][NOT_PROVISIONABLE] == 1
    assert doc["by_zone"]["1"][PROVISIONED] == 1 and doc["by_zone"]["none"][NOT_PROVISIONABLE] == 1
    assert doc["devices"]["sw1"]["fetched"] == ["config_db.json", "frr.conf", "ztp.json"]
    assert doc["devices"]["sw1"]["last_fetch"] and doc["devices"]["sw2"]["last_fetch"] is None
    assert list(doc["devices"]) == ["sw1", "sw2"] and list(doc["not_provisionable"]) == ["sw3"]


def test_an_oversize_request_line_or_head_is_refused(client: Client) -> None:
    reply = client.raw(b"GET /" + b"a" * MAX_HEAD + b" HTTP/1.1\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 414 ")
    many = b"".join(b"X-%d: y\r\n" % i for i in range(MAX_HEADERS + 1))
    reply = client.raw(b"GET /devices/sw1/ztp.json HTTP/1.1\r\n" + many + b"\r\n")
    assert reply.startswith(b"HTTP/1.1 431 ")
    big = b"X-Big: " + b"y" * MAX_HEAD + b"\r\n"
    assert client.raw(b"GET /devices/sw1/ztp.json HTTP/1.1\r\n" + big + b"\r\n").startswith(b"HTTP/1.1 431 ")
    assert client.raw(b"\x16\x03\x01garbage\r\n\r\n").startswith(b"HTTP/1.1 400 ")


def test_request_data_is_logged_escaped(client: Client, tmp_path: Path) -> None:
    client.raw(b"GET /\x1b[31mred\xff HTTP/1.1\r\n\r\n")
    wait_until(lambda: bool(client.lines))
    assert "\x1b" not in client.lines[0] and "\\x1b[31mred\\xff" in client.lines[0]
    assert "\x1b" not in (tmp_path / "requests.log").read_text()


def test_more_requests_than_allowed_at_once_get_503(start: Callable[..., Client]) -> None:
    c = start(max_concurrent=1, timeout=2.0)
    with socket.create_connection(("127.0.0.1", c.port), timeout=5) as idle:   # holds the one slot
        idle.sendall(b"GET /devices/sw1/ztp.json HTTP/1.1\r\n")
        reply = c.raw(b"GET /devices/sw1/ztp.json HTTP/1.1\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 503 ") and b"Retry-After" in reply
        idle.sendall(b"\r\n")
        assert idle.recv(100).startswith(b"HTTP/1.1 200 ")


def test_a_bad_folder_or_bind_is_a_clear_error(tmp_path: Path, folder: Path) -> None:
    with pytest.raises(TetonError, match="not a ZTP folder"):
        ZtpServer(tmp_path / "nothing", "127.0.0.1:0")
    (folder / MANIFEST).write_text("{}")
    with pytest.raises(TetonError, match="manifest.json: missing or not a teton manifest"):
        ZtpServer(folder, "127.0.0.1:0")
    for bind in ("127.0.0.1", "localhost:80", "::1:80", "[127.0.0.1]:80", "1.2.3.4:70000", "[::1]80", ""):
        with pytest.raises(TetonError, match="--bind"):
            parse_bind(bind)
    assert parse_bind("[::]:8080") == (socket.AF_INET6, "::", 8080)
    assert parse_bind("10.0.0.2:0") == (socket.AF_INET, "10.0.0.2", 0)


def test_a_file_the_manifest_does_not_list_is_a_bad_folder(folder: Path) -> None:
    doc = json.loads((folder / MANIFEST).read_text())
    del doc["files"]["devices/sw2/ztp.json"]
    (folder / MANIFEST).write_text(json.dumps(doc))
    with pytest.raises(TetonError, match="no sha256 for devices/sw2/ztp.json"):
        ZtpServer(folder, "127.0.0.1:0")


def test_an_ipv4_client_of_a_dual_stack_socket_is_its_ipv4_address() -> None:
    assert client_ip("::ffff:127.0.0.1") == ipaddress.ip_address("127.0.0.1")
    assert client_ip("fe80::1%eth0") == ipaddress.ip_address("fe80::1")
    assert client_ip("nonsense") is None


def test_serves_on_ipv6_and_takes_ipv4_clients_on_any(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETON_SECRET_bgp_backend", SECRET)
    server = ZtpServer(folder, "[::]:0", echo=lambda _: None)
    port = server.start()        # this machine and CI have IPv6 (the loopback ::1): binding [::] must work
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)   # arrives as ::ffff:127.0.0.1
        c.request("GET", "/devices/sw1/ztp.json")
        assert c.getresponse().status == 200
        c.close()
    finally:
        server.stop()


def test_serve_keeps_the_status_file_and_flushes_it_on_stop(folder: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETON_SECRET_bgp_backend", SECRET)
    status_file = tmp_path / "status.json"
    stop, ports, lines = threading.Event(), [], []
    t = threading.Thread(target=serve, args=(folder, "127.0.0.1:0"),
                         kwargs={"status_file": status_file, "log_file": None, "any_client": False,
                                 "ready": ports.append, "stop": stop, "echo": lines.append})
    t.start()
    try:
        wait_until(lambda: bool(ports))
        assert json.loads(status_file.read_text())["total"][NOT_SEEN] == 2
        c = Client(ports[0], lines)
        for f in FILES["sw1"]:
            assert c.get(f"/devices/sw1/{f}")[0] == 200
    finally:
        stop.set()
        t.join(5)
    assert not t.is_alive()
    doc = json.loads(status_file.read_text())
    assert doc["devices"]["sw1"]["state"] == PROVISIONED and doc["total"][PROVISIONED] == 1
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert lines[0].startswith("serving 2 devices") and lines[-1].startswith("stopped; 1/2 provisioned")


class Derives(DeviceTarget):
    """A NOS that spells one file from another when its secrets are resolved (as EOS renders its startup-config
    from the resolved structured config)."""

    name = "test-derives"
    summary = "test"
    nos = "derives"
    files = ("config_db.json", "frr.conf")

    def resolve_secrets(self, files: Files, secrets: Mapping[str, str]) -> Files:
        out = super().resolve_secrets(files, secrets)
        return {p: ("derived " + out[p.replace("frr.conf", "config_db.json")]) if p.endswith("frr.conf") else t
                for p, t in out.items()}


def test_a_devices_build_files_are_resolved_together_by_its_nos_target(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETON_SECRET_bgp_backend", SECRET)
    files = {"config_db.json": '{"x": "TETON_SECRET_bgp_backend"}\n', "frr.conf": "no reference\n", "ztp.json": "{}"}
    folder = write_folder(tmp_path / "ztp", "derives", {"sw1": files, "sw2": files})
    targets.register(Derives())
    server = ZtpServer(folder, "127.0.0.1:0", echo=lambda _: None)
    try:
        c = Client(server.start(), [])
        assert c.get("/devices/sw1/frr.conf") == (200, f'derived {{"x": "{SECRET}"}}\n'.encode())
        assert c.get("/devices/sw1/ztp.json") == (200, b"{}")
    finally:
        server.stop()
        targets.unregister("test-derives")


def test_a_client_that_sends_no_whole_request_in_time_is_dropped(start: Callable[..., Client]) -> None:
    c = start(timeout=0.3)
    assert c.raw(b"GET /devices/sw1/ztp.json HTTP/1.1\r\n") == b""
    wait_until(lambda: bool(c.lines))
    assert c.lines[0].startswith("408 ") and "timed out" in c.lines[0]


def test_the_live_view_counts_by_tier_and_zone(client: Client) -> None:
    client.get("/devices/sw1/ztp.json")
    wait_until(lambda: client.server.bring_up.state("sw1") == FETCHING)
    console = Console(file=io.StringIO(), width=120)
    console.print(LiveView(client.server.bring_up, console).render())
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "rtsw" in text and "ctsw" in text and "not provisionable" in text
    assert "zone 1: 0/1 provisioned, 1 fetching, 0 not seen" in text
    assert "zone 2: 0/1 provisioned, 0 fetching, 1 not seen" in text
