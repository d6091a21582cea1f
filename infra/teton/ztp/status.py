"""The bring-up's state while `teton ztp serve` runs: per provisionable device `not seen` (none of its files fetched),
`fetching` (some) or `provisioned` (every one, at least once), beside the devices that are `not provisionable` (no
MAC known); counted by tier, by zone and in total.  `StatusFile` keeps it as JSON in a file (rewritten atomically, at
most twice a second, always on shutdown); `LiveView` draws it in a terminal.  `Served` is one request as the server
logs it, `RequestLog` the file of one JSON line per request."""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from teton.findings import TetonError
from teton.ztp.index import ZtpIndex

NOT_SEEN = "not seen"
FETCHING = "fetching"
PROVISIONED = "provisioned"
NOT_PROVISIONABLE = "not provisionable"
STATES = (NOT_SEEN, FETCHING, PROVISIONED, NOT_PROVISIONABLE)
LOG = logging.getLogger("teton.ztp")


def _when(t: float | None) -> str | None:
    return None if t is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _zone(zone: int | None) -> str:
    return "none" if zone is None else str(zone)


def _counts(states: Iterable[str]) -> dict[str, int]:
    out = dict.fromkeys(STATES, 0)
    for s in states:
        out[s] += 1
    return out


def visible(text: str, limit: int = 120) -> str:
    """Request data as a log may show it: printable ASCII, everything else as \\xNN, at most `limit` characters."""
    out = "".join(c if " " <= c <= "~" and c != "\\" else f"\\x{ord(c):02x}" for c in text[:limit])
    return out + ("..." if len(text) > limit else "")


@dataclass(frozen=True)
class Served:
    """One request, as the log records it (request data escaped)."""

    time: float
    client: str
    method: str
    path: str
    status: int
    bytes: int
    device: str | None = None
    file: str | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        r = asdict(self)
        r["time"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.time)) + f".{int(self.time % 1 * 1000):03d}Z"
        return r

    def line(self) -> str:
        what = f"{self.device}/{self.file}" if self.device else self.path
        return f"{self.status} {self.method} {what} from {self.client}" + (f": {self.reason}" if self.reason else
                                                                            f" ({self.bytes} B)")



class RequestLog:
    """Appends one JSON line per request to a file (thread-safe)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            self._file: IO[str] | None = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open until close()
        except OSError as exc:
            raise TetonError(f"{path}: cannot append the request log ({exc.strerror})") from None

    def write(self, s: Served) -> str | None:
        """Append `s`; what went wrong, or None."""
        with self._lock:
            if self._file is None:
                return None
            try:
                self._file.write(json.dumps(s.to_json(), sort_keys=True) + "\n")
                self._file.flush()
            except OSError as exc:
                return f"cannot append the request log {self.path}: {exc.strerror}"
        return None

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


class BringUp:
    """Which files each provisionable device has fetched (a 200 to a GET), and when it last fetched one.
    Thread-safe."""

    def __init__(self, index: ZtpIndex) -> None:
        self.index = index
        self._lock = threading.Lock()
        self._fetched: dict[str, set[str]] = {n: set() for n in index.devices}
        self._last: dict[str, float] = {}

    def fetched(self, device: str, file: str, when: float) -> str | None:
        """Count a fetch; the device's new state when this fetch changed it, else None."""
        d = self.index.devices.get(device)
        if d is None or file not in d.files:
            return None
        with self._lock:
            before = self._state(device)
            self._fetched[device].add(file)
            self._last[device] = when
            after = self._state(device)
        return after if after != before else None

    def state(self, device: str) -> str:
        if device in self.index.not_provisionable:
            return NOT_PROVISIONABLE
        with self._lock:
            return self._state(device)

    def _state(self, device: str) -> str:
        got = self._fetched[device]
        if not got:
            return NOT_SEEN
        return PROVISIONED if got >= set(self.index.devices[device].files) else FETCHING

    def counts(self) -> tuple[dict[str, int], dict[str, dict[str, int]], dict[str, dict[str, int]]]:
        """(total, by tier, by zone) of every state, every state present; zones by number, `none` last."""
        with self._lock:
            rows = [(d.tier, d.zone, self._state(n)) for n, d in self.index.devices.items()]
        rows += [(d.tier, d.zone, NOT_PROVISIONABLE) for d in self.index.not_provisionable.values()]
        tiers = {t: _counts(s for tt, _, s in rows if tt == t) for t in sorted({r[0] for r in rows})}
        zones = sorted({r[1] for r in rows}, key=lambda z: (z is None, z or 0))
        by_zone = {_zone(z): _counts(s for _, zz, s in rows if zz == z) for z in zones}
        return _counts(r[2] for r in rows), tiers, by_zone

    def to_json(self) -> dict[str, Any]:
        """The whole state, keys sorted: counts, then every device with what it fetched and when it last did."""
        total, tiers, zones = self.counts()
        with self._lock:
            devices = {n: {"state": self._state(n), "tier": d.tier, "zone": d.zone, "nos": d.nos,
                           "fetched": sorted(self._fetched[n]), "files": sorted(d.files),
                           "last_fetch": _when(self._last.get(n))}
                       for n, d in sorted(self.index.devices.items())}
        waiting = {n: {"tier": d.tier, "zone": d.zone, "nos": d.nos}
                   for n, d in sorted(self.index.not_provisionable.items())}
        return {"cluster": self.index.cluster, "total": total, "by_tier": tiers, "by_zone": zones,
                "devices": devices, "not_provisionable": waiting}

    def summary(self) -> str:
        """One line: the totals."""
        total, _, _ = self.counts()
        n = len(self.index.devices)
        return (f"{total[PROVISIONED]}/{n} provisioned, {total[FETCHING]} fetching, {total[NOT_SEEN]} not seen, "
                f"{total[NOT_PROVISIONABLE]} not provisionable")


def write_atomic(path: Path, text: str) -> None:
    """`text` into `path` through a temporary file in the same folder and os.replace (readers never see half)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class StatusFile:
    """Keeps `snapshot()` as JSON in `path`: rewritten after `changed()`, at most once per `interval` seconds, and
    once more on `stop()`.  A failed write is reported to `on_error` (once until a write succeeds again)."""

    def __init__(self, path: Path, snapshot: Callable[[], dict[str, Any]], *, interval: float = 0.5,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.path = path
        self._snapshot = snapshot
        self._interval = interval
        self._on_error = on_error
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._write_lock = threading.Lock()
        self._failing = False
        self._started = False
        self._thread = threading.Thread(target=self._run, name="ztp-status", daemon=True)

    def start(self) -> None:
        """Write the file once now (TetonError if it cannot be written), then keep it current."""
        try:
            self._write()
        except OSError as exc:
            raise TetonError(f"{self.path}: cannot write the status file ({exc.strerror or exc})") from None
        self._started = True
        self._thread.start()

    def changed(self) -> None:
        self._dirty.set()

    def stop(self) -> None:
        """Stop the writer and write the last state (when it was started)."""
        if not self._started:
            return
        self._stop.set()
        self._dirty.set()
        if self._thread.is_alive():
            self._thread.join()
        self._write_quietly()

    def _run(self) -> None:
        while True:
            self._dirty.wait()
            if self._stop.is_set():
                return
            self._dirty.clear()
            self._write_quietly()
            if self._stop.wait(self._interval):
                return

    def _write(self) -> None:
        text = json.dumps(self._snapshot(), indent=1, sort_keys=True) + "\n"
        with self._write_lock:
            write_atomic(self.path, text)

    def _write_quietly(self) -> None:
        try:
            self._write()
            self._failing = False
        except OSError as exc:
            if not self._failing and self._on_error is not None:
                self._on_error(f"cannot write the status file {self.path}: {exc.strerror or exc}")
            self._failing = True


class LiveView:
    """The bring-up in a terminal: a table of tiers (rows) by state (columns), a line per zone, and the server's
    lines printed above them."""

    def __init__(self, bring_up: BringUp, console: Console | None = None) -> None:
        self._bring_up = bring_up
        self._console = console or Console(stderr=True, highlight=False)
        self._live = Live(console=self._console, get_renderable=self.render, refresh_per_second=2,
                          redirect_stdout=False, redirect_stderr=False)

    def start(self) -> None:
        self._live.start()

    def stop(self) -> None:
        if self._live.is_started:
            self._live.refresh()
            self._live.stop()

    def line(self, text: str) -> None:
        """One of the server's lines, as text (no markup read in it), above the table."""
        self._live.console.print(Text(text))

    def render(self) -> RenderableType:
        total, tiers, zones = self._bring_up.counts()
        table = Table(title=f"{self._bring_up.index.cluster}: zero-touch provisioning", title_justify="left")
        table.add_column("tier")
        for s in STATES:
            table.add_column(s, justify="right")
        for tier, c in tiers.items():
            table.add_row(tier, *(str(c[s]) for s in STATES))
        table.add_row(Text("total", style="bold"), *(Text(str(total[s]), style="bold") for s in STATES))
        lines = [Text(f"zone {z}: {c[PROVISIONED]}/{c[NOT_SEEN] + c[FETCHING] + c[PROVISIONED]} provisioned, "
                      f"{c[FETCHING]} fetching, {c[NOT_SEEN]} not seen, {c[NOT_PROVISIONABLE]} not provisionable")
                 for z, c in zones.items()]
        return Group(table, *lines)


class Output:
    """Where the server's terse lines go: above a `LiveView` (`live`: stderr is a terminal), else to the `teton.ztp`
    logger at INFO, which writes to stderr while logging is not configured otherwise."""

    def __init__(self, bring_up: BringUp, live: bool) -> None:
        self.view = LiveView(bring_up) if live else None
        self._level = LOG.level
        self._handler: logging.Handler | None = None
        if self.view is None:
            LOG.setLevel(logging.INFO)
            if not LOG.handlers and not logging.getLogger().handlers:
                self._handler = logging.StreamHandler(sys.stderr)
                self._handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
                LOG.addHandler(self._handler)

    def line(self, text: str) -> None:
        if self.view is not None:
            self.view.line(text)
        else:
            LOG.info("%s", text)

    def start(self) -> None:
        """Draw the live view (from now on, until `close`)."""
        if self.view is not None:
            self.view.start()

    def close(self) -> None:
        if self.view is not None:
            self.view.stop()
        else:
            LOG.setLevel(self._level)
            if self._handler is not None:
                LOG.removeHandler(self._handler)
