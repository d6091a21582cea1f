"""Every rule id a finding of teton can carry (`Finding.rule`), with its meaning, severity, where it runs and its
heading in docs/rules.md.

`RULES` is the list; `as_json()` gives it as plain data, sorted by id, and `markdown()` renders docs/rules.md
(`python -m teton.rules > docs/rules.md`).  tests/test_rules.py scans the source of infra/teton and holds this list
to what the code emits, both ways.  The module imports nothing of teton: it sits in the lowest layer.
"""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "both"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "both")
DOC = "docs/rules.md"
WIDTH = 120

# Where a rule runs: key -> (heading of its section in docs/rules.md, short label, what that stage is).
AREAS: dict[str, tuple[str, str, str]] = {
    "load": ("Loading a spec", "load",
             "Reading the spec file and checking it against the spec's schema, before any rule runs: every command "
             "that takes a spec."),
    "spec": ("Spec rules", "spec",
             "Rules over the spec, before a fabric is designed (`teton validate`, and every command that designs one); "
             "they name the spec path to change. See [Checks](checks.md) and [InfiniBand](infiniband.md)."),
    "fabric": ("Fabric rules", "fabric",
               "Rules over the designed fabric (after the spec rules pass), and the one rule comparing the two "
               "(`drain`); they run wherever a fabric is designed."),
    "site": ("Site rules", "site",
             "Rules across the clusters of a site spec and its backend aggregation tier, before and after each "
             "cluster's design (`teton render|plan|diff SITE`); see [A site of clusters](site.md)."),
    "target": ("Target rules", "target",
               "What a target (a NOS, or a host or scheduler output) cannot spell of the designed fabric, asked of "
               "every target by `teton validate` and before every render."),
    "render": ("Render checks", "render",
               "Checks of the files a target writes, in `teton render`: an error leaves no build published."),
    "rendered": ("Rendered build checks", "rendered build",
                 "`teton validate --rendered`: a build folder read back device by device by its targets, then the "
                 "cross-device rules over what the files say (also run over a build assembled by `render --only`)."),
    "verify": ("Verify rules", "verify",
               "`teton verify`: the routing of every switch's rendered config, solved all at once; see "
               "[Verifying a build's routing](verify.md#rules)."),
    "twin": ("Digital twin", "twin",
             "Building the digital twin's plan from a build folder; see [Digital twin](twin.md)."),
    "ib-verify": ("InfiniBand verify", "ib verify",
                  "`teton ib verify`: an `ibnetdiscover` dump compared with the design."),
    "ztp": ("Zero-touch provisioning", "ztp",
            "`teton ztp`: the inventory of MAC addresses read against a build; see [Day 0](day0.md)."),
}


@dataclass(frozen=True)
class Rule:
    """One rule id: what it checks, how severe its findings are and where it runs (the first place is its section)."""

    id: str
    meaning: str
    severity: Severity
    where: tuple[str, ...]

    @property
    def anchor(self) -> str:
        """The heading of the rule in docs/rules.md, as GitHub anchors it (the id: lower case and hyphens)."""
        return self.id

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "meaning": self.meaning, "severity": self.severity,
                "where": [AREAS[w][1] for w in self.where], "anchor": self.anchor, "docs": f"{DOC}#{self.anchor}"}


def _r(rule_id: str, severity: Severity, where: str, meaning: str) -> Rule:
    return Rule(rule_id, meaning, severity, tuple(where.split()))


RULES: tuple[Rule, ...] = (
    # loading a spec
    _r("io", "error", "load rendered verify twin",
       "A file cannot be read: the spec (missing, not UTF-8, too much for memory) or a file of a build folder "
       "(missing, unreadable, not JSON or YAML, not what teton writes)."),
    _r("yaml", "error", "load",
       "The YAML spec does not parse: bad syntax, a character YAML forbids, an empty file, a key that is not a "
       "string, a value that cannot be read."),
    _r("schema", "error", "load",
       "The spec does not fit the spec's model: a missing or unknown key, a wrong type, a value out of range (the "
       "rule of a finding that names none)."),
    _r("limit", "error", "load spec",
       "A size limit is passed: the spec file's bytes, YAML nesting, a Python spec's memory, the number of schema "
       "errors listed; and the cluster's devices or links (MAX_DEVICES, MAX_LINKS), a guard that stops the other "
       "spec rules."),
    _r("python", "error", "load",
       "A Python spec fails: it raises, does not compile, times out, exits early, or binds no teton.spec.Cluster to "
       "`cluster`."),
    # spec rules
    _r("unknown-model", "error", "spec",
       "A tier names a switch model the catalogue does not have, or an InfiniBand tier a model that is no "
       "InfiniBand switch."),
    _r("nos-unsupported", "error", "spec", "A tier's NOS is not one its switch model runs."),
    _r("nos-no-target", "error", "spec",
       "No target renders configs for a tier's NOS, so its switches would get no configuration."),
    _r("unknown-port-naming", "error", "spec",
       "A switch model names its ports with a naming that no NOS package registers."),
    _r("catalogue", "error", "spec",
       "A switch model contradicts itself: port lanes beyond its SerDes, a port speed its lanes cannot make, ports "
       "beyond its ASIC's bandwidth, or a front-panel map (box) that does not exist (a guard rule)."),
    _r("room", "error", "spec", "The cluster's room (the most it will grow to) is smaller than what the spec has now."),
    _r("ports-overcommitted", "error", "spec",
       "A tier's switch model has too few ports at the speeds the tier needs at the room, or too little ASIC "
       "bandwidth for them."),
    _r("pool-exhausted", "error", "spec",
       "An address pool (link, loopback, host, management) has no room for what the fabric needs at its room."),
    _r("pool-overlap", "error", "spec", "Two address pools overlap, so two uses would be given the same addresses."),
    _r("asn-clash", "both", "spec fabric",
       "The ASN plan gives two places the same ASN (zone strides too small, overlapping ranges) or leaves the private "
       "4-byte range (a warning for an ASN outside RFC 6996's); in a fabric, two devices share an ASN."),
    _r("mtu-mismatch", "error", "spec fabric rendered",
       "An MTU above its switch model's maximum (spec), or the two ends of a link with different MTUs (fabric, and "
       "the rendered configs)."),
    _r("speed-mismatch", "error", "spec fabric",
       "The two ends of a link run at different speeds; for InfiniBand, HCAs at another speed than the fabric's "
       "links."),
    _r("qos", "both", "spec",
       "The QoS settings contradict each other: RoCE, CNP and control traffic sharing a DSCP or a priority, or using "
       "class 0; ECN thresholds out of order; a priority a NOS would not schedule strict; no weight left for best "
       "effort."),
    _r("bgp-timers", "both", "spec",
       "BGP timers a NOS rejects or that drop sessions: a hold time of 1-2 s, a keepalive above the hold time, "
       "keepalives off with a hold time or the reverse; a warning for a keepalive above a third of the hold time."),
    _r("disconnected", "error", "spec",
       "Several zones and no aggregation switches: GPUs in different zones could not reach each other."),
    _r("management-redundancy", "warning", "spec",
       "A management service (NTP, syslog, AAA) has a single server, so one server down loses it."),
    _r("ztp-inventory", "error", "ztp",
       "A line of `teton ztp`'s inventory is not a switch of the build with a unicast MAC address, or repeats a "
       "device or a MAC address."),
    _r("ztp", "both", "spec",
       "Day 0's settings cannot work: provisioning without a management network, a quarantine pool outside it, "
       "upside down or over 4,096 addresses (an image for a NOS no tier runs is a warning)."),
    _r("racks", "error", "spec",
       "A per-rack host count is wrong: on a non-RoCE backend, for a rack the cluster does not have, or above "
       "hosts_per_rack."),
    _r("storage-share", "error", "spec",
       "A storage share or mount is inconsistent: named twice, mounted twice, or mounting an export or namespace no "
       "storage group serves."),
    _r("storage-load", "both", "spec",
       "A storage group's servers cannot hold the load its clients draw (each server's share of the hosts that mount "
       "it, times `client_gbps`, above its front-end NICs); a warning where the spec states no load per client."),
    _r("tectonic-client", "both", "spec",
       "A Tectonic share is mounted by hosts but no Tectonic client is named, so no mount is rendered (a warning: "
       "Meta has not published the client); a client named on a Hammerspace group (an error)."),
    _r("storage-volume", "error", "spec",
       "A storage group's data volume cannot be built from its drives (mdadm(8)): raid6 on fewer than 4 drives, "
       "raid10 or raid0 on fewer than 2; or an NFS setting (access, clients, failover address) on a Tectonic group."),
    _r("services", "error", "spec",
       "Service hosts are wrong: declared without a front end, named twice, or the scheduler's controller is no "
       "slurm-controller service host."),
    _r("frontend-edge", "error", "spec",
       "The front end's spines originate the default route but its edge switches give none."),
    _r("host-nic-unknown", "warning", "spec",
       "A host platform has no PCI address for a NIC in the host catalogue, so no .link file names it."),
    _r("fat-tree", "error", "spec",
       "The InfiniBand counts make no fat tree: an SU larger than a leaf, uplinks that do not divide, more than "
       "three levels."),
    _r("ib-hca", "error", "spec",
       "The InfiniBand HCA names are wrong: not one per backend NIC, not a verbs device name, or named twice."),
    _r("routing-engine", "both", "spec",
       "OpenSM's routing engine is unknown or not one for a fat tree; a warning for an engine upstream OpenSM lacks."),
    _r("guid-map", "both", "spec",
       "The InfiniBand GUID map does not read cleanly or lacks a node of the fabric (nodes the fabric lacks: a "
       "warning)."),
    _r("subnet-manager", "error", "spec",
       "The InfiniBand subnet managers cannot be placed: no InfiniBand backend, too few hosts or services of role "
       "subnet-manager, a tenant's host, priorities below 0, or no free leaf port."),
    _r("partition", "both", "spec",
       "InfiniBand partitions are wrong: a P_Key or name used twice, the scheduler's partition name, an SU or host "
       "the cluster lacks; a warning for a partition without members."),
    _r("ib-qos", "both", "spec",
       "InfiniBand QoS: high-priority service levels with fewer than two data VLs; a warning for GPU traffic on a "
       "high-priority SL."),
    _r("lid-space", "error", "spec",
       "The InfiniBand fabric needs more LIDs (HCA ports times 2^lmc, plus switches) than a subnet's unicast LIDs."),
    # fabric rules
    _r("duplicate-name", "error", "fabric", "The design gives two devices one name, or cables one port twice."),
    _r("loopback-clash", "error", "fabric",
       "Two devices share a loopback or a router-id, or a link address is another device's loopback."),
    _r("oversubscription", "error", "fabric",
       "A tier's oversubscription is more than 10 % off the ratio the spec asks for."),
    _r("buffer", "error", "fabric",
       "A switch needs more PFC headroom for its lossless ports than its headroom pool holds."),
    _r("rack-elevation", "error", "fabric",
       "A device runs past the top of its rack, or two devices overlap in a rack."),
    _r("rack-power", "error", "fabric", "A rack draws more power than its budget (floor.rack_power)."),
    _r("physical", "error", "fabric",
       "A cable's medium cannot join its two ends: cage speed, lanes and lane rate, reach, PMD, fibre type, "
       "connector or polish."),
    _r("drain", "error", "fabric", "A switch named for maintenance drain is no switch of the fabric."),
    _r("bgp-unprotected", "warning", "fabric",
       "A tier's BGP sessions have neither a password (TCP-MD5) nor GTSM (TTL security, RFC 5082): set the plane's "
       "`password_secret` or `ttl_security_hops`."),
    # site rules
    _r("site-plan", "error", "site",
       "A cluster's pools or ASNs of a site are outside the site's plan (`plan.backend`, `plan.frontend`, "
       "`plan.management`, `plan.asn_first`-`asn_last`), or overlap another cluster's or the tier's."),
    _r("site-names", "error", "load site",
       "Names a site must keep apart: a cluster named twice or with the site's own name (its build folder is the "
       "tier's), two clusters sharing a management domain, a cluster spec file outside the site spec's folder."),
    _r("site-room", "error", "load site",
       "The site's room is too small: more clusters than `room.clusters`, a cluster with more ATSWs than "
       "`room.atsw_per_cluster`, or BAG switches without the ports the room needs."),
    _r("site-tier", "error", "site",
       "The backend aggregation tier cannot join the clusters: a BAG model or NOS the catalogue does not have, more "
       "planes than switches, an InfiniBand cluster, clusters whose backend QoS or BGP session protection differ."),
    _r("site-oversubscription", "error", "site",
       "An ATSW's oversubscription into the backend aggregation tier (down:up) is more than 10 % off the site's "
       "goal (`bag.oversubscription`)."),
    # target rules
    _r("sonic", "both", "target",
       "Something SONiC cannot spell: a management VRF not named `mgmt`; warnings that BFD runs only on images "
       "whose bgp container starts bfdd, and that its syslog has no TLS."),
    _r("hash-entropy", "error", "target",
       "SONiC's ECMP hash would put every RoCE flow of a GPU pair on one path: no UDP source port in the hash, or one "
       "QP per GPU pair."),
    _r("fboss", "both", "target render",
       "Something FBOSS cannot spell: a default route, a model without an FBOSS platform; warnings for no BFD, no "
       "management plane in the agent config, and GTSM instead of a BGP session password (BGP++ has none)."),
    _r("fboss-ports", "error", "target render",
       "A port the design gives an FBOSS switch is not in its box's platform mapping, or has no profile at the "
       "link's speed."),
    _r("guid-clash", "error", "target", "Two InfiniBand nodes or ports have the same GUID."),
    _r("ansible-vars", "error", "target render rendered",
       "The Ansible inventory and host variables break their schema, lack a variable a role needs, or put two "
       "subnet manager instances on one host."),
    # render checks
    _r("live-guids", "error", "render",
       "A live build (`teton render --live`) of an InfiniBand fabric without a GUID map: every GUID would be "
       "synthetic."),
    _r("render", "error", "render",
       "A value a target cannot write as it is: a token of a line config, a Kubernetes label or a Kueue object, a "
       "Slurm partition name, a tenant P_Key not at index 0."),
    _r("sonic-yang", "error", "render rendered", "A SONiC config_db.json breaks SONiC's YANG models."),
    _r("avd-schema", "error", "render rendered", "An EOS structured config breaks pyavd's schema."),
    _r("fboss-schema", "error", "render rendered", "An FBOSS agent or BGP++ config breaks the pinned thrift IDL."),
    _r("fboss-xref", "error", "render rendered",
       "An FBOSS config refers to something it does not have (a port, a profile, a peer's port) where the IDL cannot "
       "say so."),
    _r("fboss-qos", "error", "render", "FBOSS has no lossless buffer profile for a port's speed and cable length."),
    _r("ansible-template", "error", "render rendered",
       "An Ansible variable holds a Jinja2 template mark: teton's variables are data, never templates."),
    _r("only", "error", "render",
       "A build assembled from `render --only` and the previous build's other targets fails the rendered checks, so "
       "nothing was published."),
    # rendered build checks
    _r("manifest", "error", "rendered",
       "The build folder and its manifest.json disagree: no manifest, a listed file missing, a file not listed, a file "
       "changed since render."),
    _r("plaintext-secret", "error", "rendered",
       "A build file holds a secret in plaintext instead of a TETON_SECRET_<name> reference."),
    _r("bgp-session", "error", "rendered verify",
       "A BGP session cannot come up: a neighbour address of no device, a remote AS that is not the peer's, no "
       "session back from the peer."),
    _r("router-id-clash", "error", "rendered", "Two rendered configs use the same router-id."),
    _r("qos-mismatch", "error", "rendered",
       "The lossless priorities or DSCP map differ between ports of one switch or between devices."),
    _r("qos-lossless", "error", "rendered",
       "RoCE's DSCP maps to a class without PFC, or the CNP's DSCP to a lossless class."),
    _r("qos-control", "error", "rendered",
       "The control DSCP does not go to the design's class and queue, or that queue is not strict priority."),
    _r("qos-scheduling", "error", "rendered",
       "A queue is scheduled differently (strict, or round robin with another weight) than everywhere else."),
    _r("sonic-frr-mismatch", "error", "rendered",
       "SONiC's config_db.json and frr.conf disagree: another ASN, a routing config mode that would not load frr.conf, "
       "BGP neighbours bgpcfgd would configure itself."),
    _r("startup-config", "error", "rendered",
       "An EOS startup-config differs from what pyavd renders from its structured config (edited by hand)."),
    _r("kubernetes", "both", "rendered",
       "The Kubernetes files read back are wrong: no Kueue Topology, node labels not the fabric's GPU hosts or bad, "
       "Kueue objects breaking the CRD schemas (a warning when the CRDs are not found)."),
    _r("ib-partitions", "error", "rendered",
       "OpenSM's partitions.conf, read as OpenSM reads it, does not give every HCA port the partitions the design "
       "gives it."),
    _r("ib-topology", "error", "rendered ib-verify",
       "An InfiniBand topology (topology.net read back, or an ibnetdiscover dump) differs from the design: a link "
       "missing, extra or miswired, or a file that does not parse."),
    # verify rules
    _r("verify-model", "warning", "verify",
       "Part of a rendered routing config the verify model does not model (taken as never applying)."),
    _r("rack-reach", "error", "verify",
       "A rack prefix does not reach every rack switch of its network that the design's routing reaches."),
    _r("ecmp-width", "error", "verify",
       "A switch has another ECMP width towards rack prefixes than the design promises."),
    _r("loopback-reach", "error", "verify",
       "A loopback is not reached at every switch the design reaches it at."),
    _r("frontend-reach", "error", "verify",
       "Over the front end, a GPU, storage or service rack switch has no route to another rack's prefixes."),
    _r("link-prefix", "error", "verify", "A link subnet (/31, /127) is in BGP beyond its two ends."),
    _r("valley", "error", "verify", "A path goes down a tier and up again."),
    _r("unexpected-prefix", "error", "verify",
       "A switch originates or sends a prefix (or a default route) the design does not have it originate."),
    _r("missing-origination", "error", "verify", "A switch does not originate a prefix the design has it announce."),
    _r("maximum-prefix", "error", "verify",
       "A session delivers more routes than its receiver's maximum-prefix, so it would be torn down."),
    _r("tier-transit", "error", "verify",
       "A switch of a site's aggregation tier holds a cluster's prefixes and does not pass them to a peer that takes "
       "them from it in the design (its route map out denies them, or the session is not up)."),
    # the twin, InfiniBand verify
    _r("twin", "error", "twin",
       "A build cannot run in the digital twin: a device without files, no routing read back, or an LLDP name "
       "lldpd cannot announce."),
    _r("ib", "error", "ib-verify", "`teton ib verify` on a spec whose backend is not InfiniBand."),
)

BY_ID: dict[str, Rule] = {r.id: r for r in RULES}


def as_json() -> list[dict[str, object]]:
    """Every rule as plain data, sorted by id."""
    return [r.as_dict() for r in sorted(RULES, key=lambda r: r.id)]


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, break_on_hyphens=False, break_long_words=False)


def _where(r: Rule) -> str:
    return ", ".join(AREAS[w][1] for w in r.where)


def markdown() -> str:
    """docs/rules.md: an index of every rule, then a section per place a rule first runs, a heading per rule."""
    out = ["# Rules", ""]
    out += _wrap("Back to the [README](../README.md) and [Checks](checks.md). Every finding teton reports carries a "
                 "rule id, at the end of its line (`[rack-power]`) and as `rule` in JSON output. This page lists "
                 f"all {len(RULES)} of them: what each checks, its severity (an error fails the command, a warning "
                 "is reported and the command goes on; both: some findings are errors, some warnings) and where it "
                 "runs. It is generated from `infra/teton/rules.py` by `python -m teton.rules`; do not edit it by "
                 "hand.")
    out += ["", "| Rule | Severity | Runs in |", "|---|---|---|"]
    out += [f"| [`{r.id}`](#{r.anchor}) | {r.severity} | {_where(r)} |" for r in sorted(RULES, key=lambda r: r.id)]
    for key, (heading, _, intro) in AREAS.items():
        mine = sorted((r for r in RULES if r.where[0] == key), key=lambda r: r.id)
        if not mine:
            continue
        out += ["", f"## {heading}", "", *_wrap(intro)]
        for r in mine:
            out += ["", f"### {r.id}", "", *_wrap(f"{r.meaning} *{r.severity}; {_where(r)}*")]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    """`python -m teton.rules [--json]`: docs/rules.md, or the rules as JSON."""
    if argv == ["--json"]:
        print(json.dumps(as_json(), indent=2))
    elif not argv:
        sys.stdout.write(markdown())
    else:
        print("usage: python -m teton.rules [--json]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
