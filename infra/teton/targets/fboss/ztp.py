"""FBOSS's day 0.  Meta publishes no zero-touch provisioning for FBOSS, so teton writes what a site runs itself:
`fetch.sh`, run on the switch's Linux host (by hand, or by the site's own first-boot hook, which DHCP option 67 can
point at), fetches the switch's agent.conf and bgpcpp.conf to the paths FBOSS reads them from (the ones the live
transport pushes to), each written whole or not at all, then has the agent read its config again and restarts
BGP++.  ONIE, which installs the switch's Linux image, is pointed at the image by option 114 when the spec names one.
"""

from __future__ import annotations

from teton.fabric.model import Device
from teton.targets.base import ZeroTouch
from teton.targets.fboss.transport import AGENT_CONF, AGENT_RELOAD, BGP_CONF, BGP_RELOAD

FETCH = "fetch.sh"


def fetch_script(device: Device, url: str, files: tuple[tuple[str, str], ...]) -> str:
    steps = "\n".join(f"get '{url}{name}' \"${{TETON_ZTP_ROOT:-}}{dest}\"" for name, dest in files)
    # TETON_ZTP_ROOT: a folder standing for the switch's root file system (a test runs the script there); unset on a
    # switch, where the reloads run too
    return f"""#!/bin/sh
# {device.name}: its FBOSS files, written by `teton ztp` (FBOSS has no published zero-touch provisioning: run this
# on the switch's Linux host, or from the site's first-boot hook)
set -eu
get() {{
    mkdir -p "$(dirname "$2")"
    curl -fsS --retry 5 --max-time 60 -o "$2.teton-new" "$1"
    chmod 600 "$2.teton-new"
    mv "$2.teton-new" "$2"
}}
{steps}
if [ -z "${{TETON_ZTP_ROOT:-}}" ]; then
    {AGENT_RELOAD}
    {BGP_RELOAD}
fi
"""


def fboss_zero_touch(device: Device, url: str, image: str | None, names: tuple[str, str]) -> ZeroTouch:
    """`names`: the target's agent config and BGP++ config file names."""
    agent, bgp = names
    return ZeroTouch(FETCH, {FETCH: fetch_script(device, url, ((agent, AGENT_CONF), (bgp, BGP_CONF)))},
                     onie_installer=image)
