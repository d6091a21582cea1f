"""What the end-to-end tests share: one twin of the lab for the tests of the services the host roles set up (storage,
the scheduler), brought up once per session under its own name, so that it lives beside the twins other modules
bring up and tear down as `lab`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.helpers import LAB, write_spec

# Another name (TETON_SERVICES_TWIN) lets two checkouts run these tests on one machine at once: a twin's kernel
# objects and state folder are named after it, and the fixture takes down a twin of its name before it starts.
SERVICES_TWIN = os.environ.get("TETON_SERVICES_TWIN", "svc")


@dataclass(frozen=True)
class ServicesTwin:
    spec: Path          # the lab spec as the twin runs it (cluster name `svc`)
    build: Path         # the build folder the twin deployed (its Ansible inventory, Slurm files ...)
    report: object      # teton.twin.service.TwinUp
    name: str = SERVICES_TWIN   # the twin's name, for teton.twin.service's verbs (fail, restore)

    def netns(self, node: str) -> str:
        from teton.twin.plan import netns_name

        return netns_name(SERVICES_TWIN, node)


@pytest.fixture(scope="session")
def services_twin(tmp_path_factory) -> Iterator[ServicesTwin]:
    """The lab (PFC only) as a twin named `svc`, up for the whole session: the hosts' services run in its
    namespaces over its front end.  A test that fails links restores them before it ends."""
    from teton.twin import service

    data = yaml.safe_load(LAB.read_text())
    data["name"] = SERVICES_TWIN
    spec = write_spec(tmp_path_factory.mktemp("svc-spec"), data, "svc.yaml")
    service.down(SERVICES_TWIN)
    report = service.up(str(spec))
    try:
        yield ServicesTwin(spec, service.state_dir(SERVICES_TWIN) / "build", report)
    finally:
        service.down(SERVICES_TWIN)
