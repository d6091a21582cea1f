"""`teton ztp serve DIR`: hands each provisionable switch its own files of a ZTP folder over HTTP, and nothing else.

Only `GET`/`HEAD /devices/<name>/<file>` for a file the index lists for that device, asked by the device's designed
management address (unless `any_client`), is answered 200; every other path is a 404 (no listing, no manifest, no
index).  Each file is read when asked (no symlink followed, size-capped), checked against the manifest's sha256, and
its secret references are resolved in memory with its NOS target's resolver, from TETON_SECRET_<name> read once at
start.  Requests are bounded (head size, header count, time, concurrency) and no body is read.  One JSON line per
request goes to the log file; the bring-up's state to the status file and the terminal (`teton.ztp.status`).
"""

from __future__ import annotations

import ipaddress
import re
import signal
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from teton import environment
from teton.findings import TetonError
from teton.ztp.files import MAX_FILE, DeviceFiles, Refused, client_ip
from teton.ztp.index import ZtpDevice
from teton.ztp.status import LOG, PROVISIONED, BringUp, Output, RequestLog, Served, StatusFile, visible

MAX_HEAD = 8 * 1024            # request line and headers, bytes
MAX_HEADERS = 32
TIMEOUT_S = 10.0               # to read a request's head; each write of a response
MAX_CONCURRENT = 64            # requests in flight; more are answered 503 at once
_CHUNK = 64 * 1024
_REQUEST_LINE = re.compile(rb"([A-Z]{1,16}) (\S+) HTTP/1\.[01]\r?\n")


def parse_bind(bind: str) -> tuple[socket.AddressFamily, str, int]:
    """(family, address, port) of `ADDR:PORT` (IPv4) or `[ADDR]:PORT` (IPv6); TetonError otherwise."""
    m = re.fullmatch(r"\[([^\]]{1,64})\]:([0-9]{1,5})|([0-9.]{7,15}):([0-9]{1,5})", bind)
    try:
        if m is None:
            raise ValueError
        host, port = (m[1], int(m[2])) if m[1] is not None else (m[3], int(m[4]))
        addr = ipaddress.ip_address(host)
        if port > 65535 or (m[1] is not None) != (addr.version == 6):
            raise ValueError
    except ValueError:
        raise TetonError(f"--bind {bind[:80]!r}: expected ADDR:PORT with an IPv4 address or [ADDR]:PORT with an "
                         "IPv6 one, the port 0 to 65535 (e.g. 10.0.0.2:8080, [::]:8080)") from None
    return (socket.AF_INET6 if addr.version == 6 else socket.AF_INET), host, port


class ZtpServer:
    """The server of one ZTP folder: `start()` listens (port 0: an ephemeral one, `port` tells) and serves from a
    thread; `stop()` ends it.  `echo` gets a short line per request; `on_change` is called when a device's state
    changes."""

    def __init__(self, folder: Path, bind: str, *, any_client: bool = False, secrets: Mapping[str, str] | None = None,
                 log_file: Path | None = None, echo: Callable[[str], None] | None = None,
                 on_change: Callable[[], None] | None = None, max_concurrent: int = MAX_CONCURRENT,
                 max_file: int = MAX_FILE, timeout: float = TIMEOUT_S) -> None:
        self.family, self.host, self.port = parse_bind(bind)
        self.folder = folder
        self.files = DeviceFiles(folder, any_client=any_client,
                                 secrets=dict(secrets if secrets is not None else environment.secrets()),
                                 max_file=max_file)
        self.index = self.files.index
        self.bring_up = BringUp(self.index)
        self.max_concurrent, self.timeout = max_concurrent, timeout
        self.echo = echo or LOG.info
        self.on_change = on_change
        self._log = None if log_file is None else RequestLog(log_file)
        self._http: _HttpServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> int:
        """Listen and serve from a thread; the port."""
        try:
            self.files.open()
            self._http = _HttpServer(self.family, (self.host, self.port), self)
        except OSError as exc:
            self.stop()
            raise TetonError(f"cannot serve {self.folder} on {self.host} port {self.port}: "
                             f"{exc.strerror or exc}") from None
        self.port = int(self._http.server_address[1])
        self._thread = threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="ztp-http", daemon=True)
        self._thread.start()
        return self.port

    def stop(self) -> None:
        """Stop listening, let the requests in flight end (for at most the timeout), close the folder and the log."""
        if self._http is not None:
            if self._thread is not None:
                self._http.shutdown()
                self._thread.join()
            deadline, held = time.monotonic() + self.timeout, 0
            while held < self.max_concurrent and self._http.slots.acquire(
                    timeout=max(0.0, deadline - time.monotonic())):
                held += 1
            self._http.server_close()
            self._http = None
        self.files.close()
        if self._log is not None:
            self._log.close()

    def record(self, s: Served) -> None:
        """Log a request (JSON line, terse line) and count a fetch."""
        fetch = s.status == 200 and s.method == "GET" and s.reason is None and s.device is not None
        new = self.bring_up.fetched(s.device, s.file, s.time) if fetch and s.device and s.file else None
        if self._log is not None and (problem := self._log.write(s)) is not None:
            self.echo(problem)
        self.echo(s.line())
        if new == PROVISIONED:
            self.echo(f"{s.device} provisioned; {self.bring_up.summary()}")
        if fetch and self.on_change is not None:
            self.on_change()


def _elsewhere(url: str, host: str, port: int) -> str | None:
    """`url` when it names another port than `port`, or another address than `host` (unless that is a wildcard)."""
    try:
        u = urlsplit(url)
        other = (u.port or (443 if u.scheme == "https" else 80)) != port or (
            not ipaddress.ip_address(host).is_unspecified and client_ip(u.hostname or "") != client_ip(host))
    except ValueError:
        return url[:200]
    return url[:200] if other else None


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, family: socket.AddressFamily, address: tuple[str, int], app: ZtpServer) -> None:
        self.address_family = family
        self.app = app
        self.slots = threading.BoundedSemaphore(app.max_concurrent)
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        if self.address_family == socket.AF_INET6:   # [::] takes IPv4 clients too, as ::ffff:a.b.c.d
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        socketserver.TCPServer.server_bind(self)      # not HTTPServer's: no getfqdn (DNS) of the address
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            try:
                request.settimeout(1.0)
                request.sendall(_error(503, "busy, try again\n", {"Retry-After": "5"}))
            except OSError:
                pass
            self.shutdown_request(request)
            self.app.record(Served(time.time(), str(client_address[0]), "-", "", 503, 0,
                                   reason=f"busy: {self.app.max_concurrent} requests in flight"))
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        self.app.record(Served(time.time(), str(client_address[0]), "-", "", 500, 0,
                               reason=f"failed ({type(sys.exc_info()[1]).__name__})"))


def _error(status: int, body: str, headers: Mapping[str, str] | None = None) -> bytes:
    head = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Content-Type: text/plain; charset=utf-8",
            f"Content-Length: {len(body)}", "Connection: close", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    return ("\r\n".join(head) + "\r\n\r\n" + body).encode()


class _Handler(BaseHTTPRequestHandler):
    """One request per connection, read and answered within the server's bounds."""

    server: _HttpServer
    server_version = "teton-ztp"

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.app.timeout)

    def handle(self) -> None:
        app = self.server.app
        client = str(self.client_address[0])
        method, path, sent, status = "-", "", 0, 0
        d: ZtpDevice | None = None
        file: str | None = None
        try:
            line = self._read_head()
            if line is None:
                return                                      # closed before a byte: nothing to answer
            m = _REQUEST_LINE.fullmatch(line)
            if m is None:
                raise Refused(400, "not an HTTP/1 request line")
            method, path = visible(m[1].decode("latin-1"), 16), m[2].decode("latin-1")
            if method not in ("GET", "HEAD"):
                raise Refused(405, f"method {method}")
            d, file = app.files.device_file(path, client)
            body = app.files.content(d, file)
            status = 200
            self._write(self._head(200, len(body), file))
            if method == "GET":
                for i in range(0, len(body), _CHUNK):
                    self._write(body[i:i + _CHUNK])
                sent = len(body)
            app.record(Served(time.time(), client, method, visible(path), 200, sent, d.name, file))
        except Refused as r:
            text = f"{r.status} {HTTPStatus(r.status).phrase.lower()}\n"
            try:
                self._write(_error(r.status, text, {"Allow": "GET, HEAD"} if r.status == 405 else None))
            except OSError:
                pass
            app.record(Served(time.time(), client, method, visible(path), r.status, len(text), r.device, r.file,
                              r.reason))
            try:
                self._linger()
            except OSError:
                pass
        except OSError as exc:
            late = isinstance(exc, TimeoutError)
            app.record(Served(time.time(), client, method, visible(path), status or (408 if late else 400), sent,
                              d.name if d else None, file,
                              f"connection {'timed out' if late else f'failed ({type(exc).__name__})'}"))

    def _read_head(self) -> bytes | None:
        """The request line, after reading the headers (counted, not kept) within MAX_HEAD bytes and the timeout;
        None when the client sent nothing; Refused on a head too large."""
        deadline = time.monotonic() + self.server.app.timeout
        first: bytes | None = None
        total = headers = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self.connection.settimeout(left)
            line = self.rfile.readline(MAX_HEAD - total + 1)
            total += len(line)
            if total > MAX_HEAD:
                raise Refused(414 if first is None else 431, f"request head over {MAX_HEAD} bytes")
            if not line.endswith(b"\n"):
                if first is None and not line:
                    return None
                raise Refused(400, "incomplete request")
            if first is None:
                first = line
            elif line in (b"\r\n", b"\n"):
                return first
            else:
                headers += 1
                if headers > MAX_HEADERS:
                    raise Refused(431, f"more than {MAX_HEADERS} headers")

    def _head(self, status: int, length: int, file: str) -> bytes:
        kind = "application/json" if file.endswith(".json") else "application/octet-stream"
        return (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nServer: {self.server_version}\r\n"
                f"Date: {self.date_time_string()}\r\nContent-Type: {kind}\r\nContent-Length: {length}\r\n"
                "Cache-Control: no-store\r\nConnection: close\r\n\r\n").encode()

    def _write(self, data: bytes) -> None:
        self.connection.settimeout(self.server.app.timeout)
        self.wfile.write(data)

    def _linger(self) -> None:
        """After an error, read (and drop) what the client still sends, briefly, so that closing does not reset
        the connection before the client has read the answer."""
        self.connection.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + 1.0
        for _ in range(16):
            self.connection.settimeout(max(0.01, deadline - time.monotonic()))
            if not self.connection.recv(4096):
                return


def serve(folder: Path, bind: str, *, status_file: Path | None, log_file: Path | None, any_client: bool,
          ready: Callable[[int], None] | None = None, stop: threading.Event | None = None,
          echo: Callable[[str], None] | None = None, live: bool | None = None) -> None:
    """Serve `folder` on `bind` until SIGINT or SIGTERM (or `stop` is set); `ready(port)` once listening.  `echo`
    gets the terse lines (default: above the live view when stderr is a terminal and `live` is not False, else the
    `teton.ztp` logger); the status file is written on every change (at most twice a second) and on shutdown."""
    stop = stop or threading.Event()
    server = ZtpServer(folder, bind, any_client=any_client, log_file=log_file, echo=echo)
    out = Output(server.bring_up, live=live if live is not None else sys.stderr.isatty()) if echo is None else None
    if out is not None:
        server.echo = out.line
    status = None if status_file is None else StatusFile(status_file, server.bring_up.to_json, on_error=server.echo)
    previous: dict[int, Any] = {}
    try:
        if status is not None:
            status.start()
            server.on_change = status.changed
        port = server.start()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, lambda *_: stop.set())
        if out is not None:
            out.start()
        server.echo(f"serving {len(server.index.devices)} devices' files from {folder} on {server.host} port {port}"
                    f"{' to any client' if any_client else ''}; {server.bring_up.summary()}")
        if (where := _elsewhere(server.index.server, server.host, port)) is not None:
            server.echo(f"warning: the provisioning files point at {where}; this server listens on {server.host} "
                        f"port {port}")
        if ready is not None:
            ready(port)
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        server.echo(f"stopped; {server.bring_up.summary()}")
        if status is not None:
            status.stop()
        if out is not None:
            out.close()
        for signum, h in previous.items():
            signal.signal(signum, h)
