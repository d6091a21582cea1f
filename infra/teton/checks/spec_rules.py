"""Rules over the Spec: what must hold before a Fabric can be designed.  Each rule is a small named function."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from teton.catalogue import catalogue_for
from teton.design.addressing import PoolExhausted, host_block_plen, pools
from teton.design.builder import PortOverflow, Ports
from teton.design.frontend import fe_counts, fe_rack_ports
from teton.design.management import FIRST_HOST, mgmt_capacity
from teton.design.roce import RoceShape
from teton.findings import Finding
from teton.spec.model import Cluster, RoceBackend, SwitchModel

SpecRule = Callable[[Cluster, str], Iterator[Finding]]
PRIVATE_ASN = (4200000000, 4294967294)


def _tiers(c: Cluster) -> Iterator[tuple[str, str, str]]:
    """(spec path, model name, nos) of every switch tier in the spec."""
    if isinstance(c.backend, RoceBackend):
        for t in ("rtsw", "ctsw", "atsw"):
            tier = getattr(c.backend, t)
            yield f"backend.{t}", tier.model, tier.nos
    if c.frontend is not None:
        yield "frontend.rsw", c.frontend.rsw.model, c.frontend.rsw.nos
        yield "frontend.fsw", c.frontend.fsw.model, c.frontend.fsw.nos


def unknown_model(c: Cluster, file: str) -> Iterator[Finding]:
    models = catalogue_for(c)
    for path, model, _ in _tiers(c):
        if model not in models:
            yield Finding(file, f"{path}.model", f"unknown switch model {model!r}; known: {', '.join(sorted(models))}",
                          rule="unknown-model")


def nos_unsupported(c: Cluster, file: str) -> Iterator[Finding]:
    models = catalogue_for(c)
    for path, model, nos in _tiers(c):
        m = models.get(model)
        if m is not None and nos not in m.nos:
            yield Finding(file, f"{path}.nos", f"{model} does not run {nos!r} (it runs: {', '.join(m.nos) or 'none'})",
                          rule="nos-unsupported")


def backend_unsupported(c: Cluster, file: str) -> Iterator[Finding]:
    if not isinstance(c.backend, RoceBackend):
        yield Finding(file, "backend.kind", f"backend {c.backend.kind!r} is reserved but not designed yet",
                      rule="backend-unsupported")


def _demands(c: Cluster) -> Iterator[tuple[str, str, list[tuple[int, int]]]]:
    """(spec path, model, [(ports, speed)...]) that one device of each tier asks of its model, in allocation order."""
    if isinstance(c.backend, RoceBackend):
        be, s = c.backend, RoceShape.of(c)
        yield "backend.rtsw", be.rtsw.model, [(s.rtsw_down, be.rtsw.downlink_speed_gbps),
                                             (s.rtsw_up, be.rtsw.uplink_speed_gbps)]
        yield "backend.ctsw", be.ctsw.model, [(s.ctsw_down, be.rtsw.uplink_speed_gbps),
                                             (s.ctsw_up, be.ctsw.uplink_speed_gbps)]
        yield "backend.atsw", be.atsw.model, [(s.atsw_down, be.ctsw.uplink_speed_gbps)]
    fe = c.frontend
    if fe is not None:
        counts = fe_counts(c)
        for path, n, speed in fe_rack_ports(c):
            yield path, fe.rsw.model, [(n, speed), (counts["rsw_up"], fe.uplink_speed_gbps)]
        yield "frontend.fsw", fe.fsw.model, [(counts["fsw_down"], fe.uplink_speed_gbps)]


def ports_overcommitted(c: Cluster, file: str) -> Iterator[Finding]:
    """A tier asks a model for more ports (at a speed) than it has, or more bandwidth than its ASIC switches."""
    models = catalogue_for(c)
    for path, name, demand in _demands(c):
        model = models.get(name)
        if model is None:
            continue
        ports = Ports(path, model)
        asked = sum(n for n, _ in demand)
        try:
            for n, speed in demand:
                for _ in range(n):
                    ports.take(speed)
        except PortOverflow as exc:
            yield Finding(file, path, f"{name} has {model.ports} ports; this tier needs {asked} "
                          f"({', '.join(f'{n}x{s}G' for n, s in demand)}); no free {exc.speed}G port is left",
                          rule="ports-overcommitted")
            continue
        gbps = sum(n * s for n, s in demand)
        if gbps > model.asic_tbps * 1000:
            yield Finding(file, path, f"{name}'s {model.asic} switches {model.asic_tbps} Tb/s; this tier uses "
                          f"{gbps / 1000:g} Tb/s of ports", rule="ports-overcommitted")


def pool_exhausted(c: Cluster, file: str) -> Iterator[Finding]:
    """An address pool is too small for what the design takes from it, or no family gives a needed pool."""
    plans: list[tuple[str, object, dict[str, int], dict[str, tuple[int, int]]]] = []
    if isinstance(c.backend, RoceBackend):
        s = RoceShape.of(c)
        plans.append(("backend.addressing", c.backend.addressing,
                      {"loopbacks": s.switches, "fabric_links": s.fabric_links, "host_links": s.racks},
                      {"loopbacks": (32, 128), "fabric_links": (31, 127),
                       "host_links": (host_block_plen(4, s.rtsw_down), 64)}))
    if c.frontend is not None:
        n = fe_counts(c)
        plans.append(("frontend.addressing", c.frontend.addressing,
                      {k: n[k] for k in ("loopbacks", "fabric_links", "host_links")},
                      {"loopbacks": (32, 128), "fabric_links": (31, 127),
                       "host_links": (host_block_plen(4, n["max_host_ports"]), 64)}))
    switches = sum(demand["loopbacks"] for _, _, demand, _ in plans)
    if c.management.network is not None and mgmt_capacity(c.management.network) < switches:
        yield Finding(file, "management.network", f"{c.management.network} has room for "
                      f"{mgmt_capacity(c.management.network)} switch addresses (from .{FIRST_HOST}) but the cluster "
                      f"has {switches} switches", rule="pool-exhausted")
    for base, addressing, demand, plens in plans:
        for which, needed in demand.items():
            v4p, v6p = plens[which]
            try:
                v4, v6 = pools(addressing, which, v4_plen=v4p, v6_plen=v6p)  # type: ignore[arg-type]
            except PoolExhausted as exc:
                plen = v4p if "ipv4" in exc.pool else v6p
                yield Finding(file, f"{base}.{exc.pool}", f"{exc.network} is smaller than one /{plen} block",
                              rule="pool-exhausted")
                continue
            if v4 is None and v6 is None:
                yield Finding(file, f"{base}", f"neither ipv4 nor ipv6 gives a {which} pool", rule="pool-exhausted")
            for fam, pool in (("ipv4", v4), ("ipv6", v6)):
                if pool is not None and pool.capacity < needed:
                    yield Finding(file, f"{base}.{fam}.{which}", f"{pool.network} holds {pool.capacity} /{pool.plen} "
                                  f"blocks but the fabric needs {needed}", rule="pool-exhausted")


def asn_plan_clash(c: Cluster, file: str) -> Iterator[Finding]:
    """ASN ranges of the tiers overlap, a stride is too small for the racks, or an ASN leaves the 32-bit space."""
    ranges: list[tuple[str, int, int]] = []
    if isinstance(c.backend, RoceBackend):
        a = c.backend.asn
        ranges += [("backend.asn.atsw", a.atsw, a.atsw), ("backend.asn.ctsw", a.ctsw + 1, a.ctsw + c.zones),
                   ("backend.asn.rtsw", a.rtsw + a.rtsw_zone_stride + 1,
                    a.rtsw + c.zones * a.rtsw_zone_stride + c.racks_per_zone)]
        if a.rtsw_zone_stride <= c.racks_per_zone:
            yield Finding(file, "backend.asn.rtsw_zone_stride", f"stride {a.rtsw_zone_stride} must exceed "
                          f"racks_per_zone ({c.racks_per_zone}), or RTSWs of two zones share an ASN", rule="asn-clash")
    if c.frontend is not None:
        f = c.frontend.asn
        racks = max([c.racks_per_zone] + [sum(s.racks for s in c.storage)])
        ranges += [("frontend.asn.fsw", f.fsw, f.fsw + c.zones),
                   ("frontend.asn.rsw", f.rsw + 1, f.rsw + c.zones * f.rsw_zone_stride + racks)]
        if f.rsw_zone_stride <= racks:
            yield Finding(file, "frontend.asn.rsw_zone_stride", f"stride {f.rsw_zone_stride} must exceed the racks "
                          f"of a zone ({racks})", rule="asn-clash")
    for i, (p1, lo1, hi1) in enumerate(ranges):
        if hi1 > PRIVATE_ASN[1]:
            yield Finding(file, p1, f"ASNs run up to {hi1}, past the largest private 4-byte ASN {PRIVATE_ASN[1]}",
                          rule="asn-clash")
        elif lo1 < PRIVATE_ASN[0]:
            yield Finding(file, p1, f"ASN {lo1} is not a private 4-byte ASN (RFC 6996: {PRIVATE_ASN[0]}-"
                          f"{PRIVATE_ASN[1]})", rule="asn-clash", severity="warning")
        for p2, lo2, hi2 in ranges[i + 1:]:
            if lo1 <= hi2 and lo2 <= hi1:
                yield Finding(file, p2, f"ASNs {lo2}-{hi2} overlap {p1} ({lo1}-{hi1})", rule="asn-clash")


def mtu_out_of_range(c: Cluster, file: str) -> Iterator[Finding]:
    """The spec's MTU is more than a tier's model (and so its NOS) accepts."""
    models = catalogue_for(c)
    checks: list[tuple[str, int, str]] = []
    if isinstance(c.backend, RoceBackend):
        checks += [("backend.mtu", c.backend.mtu, f"backend.{t}") for t in ("rtsw", "ctsw", "atsw")]
    if c.frontend is not None:
        checks += [("frontend.mtu", c.frontend.mtu, f"frontend.{t}") for t in ("rsw", "fsw")]
    for path, mtu, tier in checks:
        name = dict((p, m) for p, m, _ in _tiers(c)).get(tier)
        m: SwitchModel | None = models.get(name or "")
        if m is not None and mtu > m.mtu_max:
            yield Finding(file, path, f"MTU {mtu} is above {m.name}'s maximum {m.mtu_max} ({tier})",
                          rule="mtu-mismatch")


SPEC_RULES: tuple[SpecRule, ...] = (backend_unsupported, unknown_model, nos_unsupported, ports_overcommitted,
                                    pool_exhausted, asn_plan_clash, mtu_out_of_range)
