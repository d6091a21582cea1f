"""The slower half of `test_qos_spellings`: every queue of every backend switch of the 24k RoCE reference (1,536
SONiC rack switches, 128 CTSWs and 28 ATSWs on EOS), read back from both spellings, is scheduled as the intent says
with the same numbers."""

from __future__ import annotations

import pytest

from tests.targets.qos_readback import check_every_queue

pytestmark = pytest.mark.scale24k


def test_every_queue_of_the_24k_reference_agrees_across_nos(roce24k_network_build):
    fabric, build = roce24k_network_build      # the session's SONiC and EOS files of the 24k reference
    assert fabric.qos is not None and fabric.qos.ecn is None           # PFC only, as Meta ran 400G
    ports = sum(len(d.interfaces) for d in fabric.devices.values() if d.plane == "backend" and d.nos is not None)
    assert check_every_queue(build, fabric) == 8 * ports
