"""SONiC's zero-touch provisioning of one switch (sonic-net/SONiC doc/ztp/ztp.md): DHCP option 67 names its
`ztp.json`, whose sections SONiC's ZTP service runs in lexical order:

1. `01-firmware` (only when the spec names an image): install the image, make it the default, reboot into it (ZTP
   resumes after the reboot);
2. `02-provisioning-script`: `frr.sh`, which fetches the switch's frr.conf into /etc/sonic/frr (the bgp container
   reads it there: docker_routing_config_mode split-unified);
3. `03-configdb-json`: the switch's config_db.json to /etc/sonic/config_db.json, which ZTP then loads (config
   reload restarts the bgp container on the frr.conf already in place).

Each section halts ZTP when it fails, so a switch never runs half its configuration.  ONIE, which installs SONiC on
a bare switch, is pointed at the image by option 114 (`ZeroTouch.onie_installer`).
"""

from __future__ import annotations

from teton.fabric.model import Device
from teton.targets.base import ZeroTouch
from teton.targets.jsontext import pretty_json

ZTP_JSON, FRR_SCRIPT = "ztp.json", "frr.sh"
CONFIG_DB_PATH, FRR_CONF_DIR = "/etc/sonic/config_db.json", "/etc/sonic/frr"


def frr_script(device: Device, url: str) -> str:
    # TETON_ZTP_ROOT: a folder standing for the switch's root file system (the end-to-end test runs the script in a
    # namespace of the twin); unset on a switch
    return f"""#!/bin/sh
# {device.name}: its FRR configuration, fetched by SONiC ZTP's provisioning-script section (teton ztp)
set -eu
dir="${{TETON_ZTP_ROOT:-}}{FRR_CONF_DIR}"
mkdir -p "$dir"
curl -fsS --retry 5 --max-time 60 -o "$dir/frr.conf.teton-new" '{url}frr.conf'
chmod 600 "$dir/frr.conf.teton-new"
mv "$dir/frr.conf.teton-new" "$dir/frr.conf"
"""


def sonic_zero_touch(device: Device, url: str, image: str | None) -> ZeroTouch:
    sections: dict[str, object] = {}
    if image is not None:
        sections["01-firmware"] = {"install": {"url": image, "set-default": True}, "reboot-on-success": True,
                                   "halt-on-failure": True}
    sections["02-provisioning-script"] = {"plugin": {"url": f"{url}{FRR_SCRIPT}"}, "halt-on-failure": True}
    sections["03-configdb-json"] = {"url": {"source": f"{url}config_db.json", "destination": CONFIG_DB_PATH},
                                    "halt-on-failure": True}
    doc = pretty_json({"ztp": sections}, indent=2, sort_keys=True) + "\n"
    return ZeroTouch(ZTP_JSON, {ZTP_JSON: doc, FRR_SCRIPT: frr_script(device, url)}, onie_installer=image)
