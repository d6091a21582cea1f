"""teton.targets.schedule.plan_tasks: the render's tasks from each target's estimate of its time, longest first, so
that the short ones end the render (on the 24k, the fabric-wide targets of 2 s used to start last, after every device
chunk: one core idle for their length); what would not pay for forking renders in place."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from teton import targets
from teton.fabric.model import Fabric
from teton.pipeline import Designed
from teton.targets import RenderContext
from teton.targets.base import DeviceTarget
from teton.targets.schedule import MIN_FORK_COST, plan_tasks


def _tasks(fabric: Fabric) -> list:
    return plan_tasks(fabric, RenderContext(folders={}), targets.targets(), 2)


def test_the_24k_tasks_are_longest_first_and_end_with_the_short_fabric_wide_ones(roce24k: Designed) -> None:
    tasks = _tasks(roce24k.fabric)
    costs = [t.cost for t in tasks]
    assert costs == sorted(costs, reverse=True)
    assert sum(costs) >= MIN_FORK_COST
    # the two longest fabric-wide targets start with the device chunks; the last tasks are the shortest ones
    first = [t.target for t in tasks[:4]]
    assert {"cabling", "monitoring"} <= set(first), first
    assert all(t.devices is None and t.cost < 0.5 for t in tasks[-3:]), tasks[-3:]
    # no chunk more than twice the mean: the workers end within about one chunk of each other
    chunks = [t.cost for t in tasks if t.devices is not None]
    assert max(chunks) <= 2 * sum(chunks) / len(chunks)
    # every device is in exactly one chunk of its target
    for t in targets.targets():
        if isinstance(t, DeviceTarget):
            got = [n for k in tasks if k.target == t.name for n in (k.devices or ())]
            assert sorted(got) == sorted(t.device_names(roce24k.fabric, RenderContext(folders={})))


def test_a_switch_with_more_interfaces_is_estimated_longer(roce24k: Designed) -> None:
    eos = targets.get("eos")
    assert isinstance(eos, DeviceTarget)
    by_size = sorted(roce24k.fabric.switches("eos"), key=lambda d: len(d.interfaces))
    assert eos.device_estimate(by_size[0]) < eos.device_estimate(by_size[-1])


def test_the_labs_fork_and_a_spec_of_a_few_devices_renders_in_place(lab_fabric: Fabric, lab_ib_fabric: Fabric,
                                                                     ) -> None:
    """The labs' render forks (the fabric's checks beside the EOS warm-ups, then two workers: measured faster than
    in place); a spec of a few devices does not."""
    assert sum(t.cost for t in _tasks(lab_fabric)) >= MIN_FORK_COST
    assert sum(t.cost for t in _tasks(lab_ib_fabric)) >= MIN_FORK_COST
    names = [d.name for d in lab_fabric.switches()][:3]
    few = replace(lab_fabric, devices=MappingProxyType({n: lab_fabric.devices[n] for n in names}), links=())
    assert sum(t.cost for t in _tasks(few)) < MIN_FORK_COST


def test_opensm_costs_nothing_without_a_subnet_manager(lab_fabric: Fabric, lab_ib_fabric: Fabric) -> None:
    opensm = targets.get("opensm")
    assert opensm.cost(lab_fabric) == 0.0 < opensm.cost(lab_ib_fabric)
