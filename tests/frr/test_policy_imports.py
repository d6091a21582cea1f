"""`teton.frr.policy.import_targets` looks a policy's neighbours up in one index per routing intent: the same
targets as the scan of every peer group per policy it replaced, on every lab device, a sample of the 24k reference's
and made-up intents where a group matches partly, twice or not at all."""

from __future__ import annotations

from dataclasses import replace

import pytest

from teton.fabric.intent import Accept, ImportPolicy, Routing
from teton.frr import policy
from teton.frr.policy import _groups_by_members, import_targets


def _scan(r: Routing, imp: ImportPolicy) -> tuple[str, ...]:
    """The former computation: every group, its members of the policy's family gathered again per policy."""
    mine = set(imp.neighbors)
    for g in r.groups:
        members = {n.address for n in r.neighbors if n.group == g.name and n.family == imp.family}
        if g.family == imp.family and members and members == mine:
            return (g.name,)
    return tuple(dict.fromkeys(imp.neighbors))


def _check(routings: list[Routing]) -> tuple[int, int]:
    """(policies checked, of which applied to a group)."""
    n = grouped = 0
    for r in routings:
        groups = _groups_by_members(r)
        for imp in r.imports:
            want = _scan(r, imp)
            assert import_targets(r, imp) == want
            assert import_targets(r, imp, groups) == want
            n += 1
            grouped += len(want) == 1 and want[0] in {g.name for g in r.groups}
    return n, grouped


def _variants(r: Routing) -> list[Routing]:
    """`r` with policies that hit each branch: a group's members exactly (in another order, with a repeat), all
    but one of them, none, and the members of one family asked for in the other."""
    out = [r]
    for g in r.groups:
        members = tuple(n.address for n in r.neighbors if n.group == g.name and n.family == g.family)
        other = "ipv6" if g.family == "ipv4" else "ipv4"
        imps = [ImportPolicy("X_ALL", g.family, tuple(reversed(members)) + members[:1], ()),
                ImportPolicy("X_SOME", g.family, members[1:], ()),
                ImportPolicy("X_NONE", g.family, (), ()),
                ImportPolicy("X_OTHER", other, members, ())]
        out.append(replace(r, imports=r.imports + tuple(imps)))
        out.append(replace(r, groups=r.groups + (g._replace(name=g.name + "_TWIN"),), imports=tuple(imps)))
    return out


def test_import_targets_are_the_scans_on_every_lab_device(lab_fabric):
    routings = [v for d in lab_fabric.devices.values() if d.routing is not None for v in _variants(d.routing)]
    n, grouped = _check(routings)
    assert n > 100 and 0 < grouped < n


@pytest.mark.scale24k
def test_import_targets_are_the_scans_on_a_sample_of_the_24k(roce24k):
    fabric = roce24k.fabric
    devices = [d for d in fabric.devices.values() if d.routing is not None]
    roles = {d.role for d in devices}
    sample = [d for role in sorted(roles) for d in [e for e in devices if e.role == role][::50]]
    assert {d.role for d in sample} == roles and len(sample) > 60
    n, grouped = _check([d.routing for d in sample if d.routing is not None])
    assert n > 1000 and 0 < grouped < n


def test_a_prefix_list_is_made_once_per_shared_accept_tuple_and_never_from_a_stale_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`_prefix_list` keys its memo by the accept tuple's identity (the design shares one per rack switch): the same
    tuple gives the same object, an equal tuple made anew an equal list, another content under the same name its own
    lines; the memo holds its keys' tuples (no id reused while an entry lives) and is dropped whole past its bound."""
    monkeypatch.setattr(policy, "_PREFIX_LISTS", {})
    monkeypatch.setattr(policy, "_PREFIX_LISTS_MAX", 4)
    shared = (Accept("10.0.0.0/31"), Accept("10.1.0.0/27"))
    first = policy._prefix_list("IMPORT_rtsw1_V4", shared)
    assert policy._prefix_list("IMPORT_rtsw1_V4", shared) is first
    assert [(e.seq, e.prefix, e.le, e.ge) for e in first.entries] == [(10, "10.0.0.0/31", None, None),
                                                                       (20, "10.1.0.0/27", None, None)]
    assert policy._prefix_list("IMPORT_rtsw1_V4", tuple(list(shared))) == first
    for k in range(20):      # fresh tuples, freed as they go: their ids come back, their content differs
        accept = (Accept(f"10.9.{k}.0/24", None, 32),)
        got = policy._prefix_list("IMPORT_x_V4", accept)
        assert [(e.prefix, e.le) for e in got.entries] == [(f"10.9.{k}.0/24", 32)]
        assert len(policy._PREFIX_LISTS) <= 4
        del accept, got
