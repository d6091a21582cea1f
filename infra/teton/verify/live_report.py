"""What `teton verify live` found, by promise and by device: its JSON (`LiveReport.to_json`, what `--json` prints)
and its lines (what the command prints).

By promise:
- `sessions`: every designed session not Established, from the switch that reports it (port, family, the peer's
  address, device and port), and the switches whose BGP did not answer (each with its designed sessions' count);
- `ecmp`: every sampled width off the design as (switch, destination rack switch, prefix, expected, seen), split into
  `fell` (fewer next hops), `wider` and `unanswered`;
- `lldp`: `teton verify cabling`'s comparison of what the switches' LLDP saw (crossed cables by their two cable ids
  and the four ends' views, miswired, missing and extra ones);
- `same_rail` and `reach`: the pings that failed (backend same-rail pairs; GPU hosts to storage and service hosts over
  the front end).

By device: one line per problem, under every device it concerns.  `unobserved` lists the reads a transport does not
make (device, what, why); `errors` what a device answered instead (it failed what it was asked).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from teton.expect import EcmpMismatch, PingProbe, Report
from teton.targets.cabling.verify import CablingReport


@dataclass(frozen=True)
class Unobserved:
    device: str
    what: str            # "sessions", "ECMP widths", "LLDP", "pings"
    why: str
    reads: int = 1       # how many reads of it were not made


def _ecmp(m: EcmpMismatch) -> dict[str, Any]:
    return {"switch": m.probe.switch, "towards": m.probe.towards, "prefix": m.probe.prefix,
            "expected": m.probe.width, "seen": m.got}


def _ping(p: PingProbe) -> dict[str, str]:
    return {"from": p.host, "src": p.src, "to": p.peer, "dst": p.dst}


@dataclass(frozen=True)
class LiveReport:
    where: str                                 # "twin NAME" or "live"
    only: str | None                           # the role the check was narrowed to
    switches: tuple[str, ...]                  # the switches asked
    report: Report                             # `teton.expect.check`'s
    cabling: CablingReport | None              # None: no switch's LLDP was read
    lldp_read: tuple[str, ...]                 # the switches whose LLDP was read
    unobserved: tuple[Unobserved, ...]
    errors: dict[str, str]                     # device -> what it answered instead
    seconds: dict[str, float]
    remarks: tuple[str, ...] = ()              # about the answers as a whole (a twin's LLDP that did not settle)

    @property
    def ok(self) -> bool:
        """Every promise kept, every device answered, and some session was checked."""
        return (self.report.ok and not self.errors and (self.cabling is None or self.cabling.ok)
                and sum(self.report.promise.sessions.values()) > 0)

    # ------------------------------------------------------------------------------------------------- by promise

    def sessions(self) -> dict[str, Any]:
        mismatched = self.report.sessions
        down = [{"switch": m.switch, "port": n.interface, "family": n.family, "address": n.address,
                 "peer": n.peer.partition(":")[0], "peer_port": n.peer.partition(":")[2]}
                for m in mismatched if m.established >= 0 for n in m.down]
        expected = self.report.promise.sessions
        return {"ok": not mismatched, "switches": len(expected), "expected": sum(expected.values()),
                "established": self.report.established, "down": down,
                "unanswered": [{"switch": m.switch, "sessions": m.expected, "error": self.errors.get(m.switch, "")}
                               for m in mismatched if m.established < 0]}

    def ecmp(self) -> dict[str, Any]:
        m = self.report.ecmp
        checked = len(self.report.promise.ecmp) - sum(u.reads for u in self.unobserved if u.what == "ECMP widths")
        return {"ok": not m, "checked": checked,
                "fell": [_ecmp(x) for x in m if 0 <= x.got < x.probe.width],
                "wider": [_ecmp(x) for x in m if x.got > x.probe.width],
                "unanswered": [_ecmp(x) for x in m if x.got < 0]}

    def lldp(self) -> dict[str, Any]:
        if self.cabling is None:
            return {"ok": True, "devices": 0, "ports": 0, "as_designed": 0, "swapped": [], "miswired": [],
                    "missing": [], "extra": [], "one_way": []}
        out = self.cabling.as_dict()
        out.pop("not_collected")
        return out

    def pings(self) -> dict[str, Any]:
        p = self.report.promise
        return {"same_rail": {"ok": not self.report.pings, "pinged": len(p.pings), "of": p.pings_total,
                              "failed": [_ping(x) for x in self.report.pings]},
                "reach": {"ok": not self.report.reach, "pinged": len(p.reach), "of": p.reach_total,
                          "failed": [_ping(x) for x in self.report.reach]}}

    # -------------------------------------------------------------------------------------------------- by device

    def by_device(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}

        def add(device: str, line: str) -> None:
            out.setdefault(device, []).append(line)

        s = self.sessions()
        for u in s["unanswered"]:
            add(u["switch"], f"BGP does not answer: its {u['sessions']} designed sessions not seen")
        for d in s["down"]:
            add(d["switch"], f"session {d['port']} {d['family']} to {d['peer']} {d['peer_port']} ({d['address']}) "
                             "not Established")
        e = self.ecmp()
        for key, how in (("fell", "fell"), ("wider", "wider than designed"), ("unanswered", "not answered")):
            for x in e[key]:
                add(x["switch"], f"ECMP towards {x['towards']} ({x['prefix']}): {max(x['seen'], 0)} next hops, the "
                                 f"design has {x['expected']} ({how})")
        for line, devices in self._lldp_lines():
            for device in devices:
                add(device, line)
        for kind, probes in (("backend, same rail", self.report.pings), ("front end", self.report.reach)):
            for p in probes:
                add(p.host, f"{p.src} does not reach {p.peer} ({p.dst}) over the {kind}")
        for u in self.unobserved:
            add(u.device, f"{u.what} not observed: {u.why}")
        for device, error in self.errors.items():
            add(device, f"did not answer: {error}")
        return {d: out[d] for d in sorted(out)}

    def _lldp_lines(self) -> list[tuple[str, list[str]]]:
        """One line per cabling problem, with the devices it concerns."""
        c = self.cabling
        if c is None:
            return []
        out = [(f"cables {' and '.join(x['cables'])} crossed: {'; '.join(x['ends'])}",
                sorted({e.split()[0] for e in x["ends"]})) for x in c.swapped]
        out += [(f"{m['port']} (cable {m['cable']}) sees {m['found']}, expected {m['expected']}", [m["device"]])
                for m in c.miswired]
        out += [(f"cable {m['cable']} missing: {m['a']} <-> {m['b']}", sorted({m["a"].split()[0], m["b"].split()[0]}))
                for m in c.missing]
        out += [(f"{x['port']} sees {x['found']}, where the design has no cable"
                 if not x.get("beside") else f"{x['port']} sees {x['found']} beside {x['beside']}", [x["device"]])
                for x in c.extra]
        return out

    # ------------------------------------------------------------------------------------------------ output

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "where": self.where, "only": self.only, "switches": len(self.switches),
                "lldp_read": len(self.lldp_read), "unchecked": list(self.report.unchecked),
                "promises": {"sessions": self.sessions(), "ecmp": self.ecmp(), "lldp": self.lldp(), **self.pings()},
                "by_device": self.by_device(),
                "unobserved": [{"device": u.device, "what": u.what, "why": u.why, "reads": u.reads}
                               for u in self.unobserved],
                "errors": self.errors, "remarks": list(self.remarks), "seconds": self.seconds}

    def lines(self) -> list[str]:
        """One line per problem, device by device, then the remarks."""
        return [f"{device}: {line}" for device, lines in self.by_device().items() for line in lines] + [
            f"remark: {r}" for r in self.remarks]

    def summary(self) -> str:
        s, e, c, p = self.sessions(), self.ecmp(), self.lldp(), self.pings()
        checked = (f"{len(self.switches):,} switches ({self.only or 'every tier'}): {s['established']:,} of "
                   f"{s['expected']:,} designed sessions seen, {e['checked']:,} ECMP widths, {c['ports']:,} LLDP ports "
                   f"of {len(self.lldp_read):,} switches, {p['same_rail']['pinged']:,} same-rail and "
                   f"{p['reach']['pinged']:,} front-end pings checked in {self.seconds.get('total', 0):.1f} s")
        wrong = [f"{n:,} {one if n == 1 else many}" for n, one, many in (
            (len(s["down"]), "session down", "sessions down"),
            (len(s["unanswered"]), "switch without BGP", "switches without BGP"),
            (len(e["fell"]), "ECMP width fell", "ECMP widths fell"),
            (len(e["wider"]) + len(e["unanswered"]), "other ECMP width off", "other ECMP widths off"),
            (len(c["swapped"]), "pair of crossed cables", "pairs of crossed cables"),
            (len(c["miswired"]) + len(c["missing"]) + len(c["extra"]), "other cabling fault", "other cabling faults"),
            (len(p["same_rail"]["failed"]), "same-rail ping failed", "same-rail pings failed"),
            (len(p["reach"]["failed"]), "front-end ping failed", "front-end pings failed"),
            (len(self.errors), "device did not answer", "devices did not answer")) if n]
        reads, devices = sum(u.reads for u in self.unobserved), len({u.device for u in self.unobserved})
        gaps = f"; not observed: {reads:,} reads of {devices:,} devices (see by device)" if self.unobserved else ""
        verdict = "; ".join(wrong) if wrong else "every promise kept" if self.ok else "nothing to check"
        return f"{self.where}: {checked}; {verdict}{gaps}"
