"""EOS's zero-touch provisioning of one switch: with no startup-config on flash, EOS boots into ZTP, asks DHCP,
fetches the file option 67 names and, when it is a script, runs it; once the script exits 0 the switch reboots with
what the script left on flash (Arista EOS manual, "Zero Touch Provisioning").

teton's `bootstrap` (Python 3, the standard library only) fetches the switch's startup-config to
/mnt/flash/startup-config and its structured config beside it (/mnt/flash/teton/, the record `teton drift` and an
audit compare with), each written whole or not at all; when the spec names an image, it first copies the image to
flash and points boot-config at it.  An Arista switch boots its image from flash (Aboot), so no ONIE installer.
"""

from __future__ import annotations

from teton.fabric.model import Device
from teton.targets.base import ZeroTouch

BOOTSTRAP = "bootstrap"
IMAGE_FILE = "teton-eos.swi"


def bootstrap(device: Device, url: str, image: str | None, files: tuple[tuple[str, str], ...]) -> str:
    """The script; `files`: (name in the device's folder, path under /mnt/flash) to fetch."""
    fetch = "\n".join(f"    fetch(SERVER + {name!r}, {dest!r})" for name, dest in files)
    image_step = "" if image is None else f"""    fetch({image!r}, {IMAGE_FILE!r})
    write("boot-config", "SWI=flash:{IMAGE_FILE}\\n")
"""
    # TETON_ZTP_ROOT: a folder standing for the switch's root file system (the end-to-end test runs the script in a
    # namespace of the twin); unset on a switch
    return f'''#!/usr/bin/env python3
"""{device.name}: EOS zero-touch bootstrap written by `teton ztp`.  Fetches the switch's files to flash and exits
0; ZTP then reboots the switch with its startup-config."""
import os
import shutil
import sys
import time
import urllib.request

SERVER = {url!r}
FLASH = os.environ.get("TETON_ZTP_ROOT", "") + "/mnt/flash"
TIMEOUT_S = 60
CHUNK = 1 << 20


def write(rel, data):
    """`data` (text, or a response streamed in chunks) to FLASH/rel, whole or not at all."""
    path = os.path.join(FLASH, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".teton-new"
    with open(tmp, "w" if isinstance(data, str) else "wb") as f:
        if isinstance(data, str):
            f.write(data)
        else:
            shutil.copyfileobj(data, f, CHUNK)     # an image is gigabytes: never whole in memory
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def fetch(url, rel):
    for attempt in range(5):
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT_S) as r:
                write(rel, r)
                return
        except OSError as exc:
            print(f"bootstrap: {{url}}: {{exc}} (attempt {{attempt + 1}} of 5)", file=sys.stderr)
            if attempt < 4:
                time.sleep(2 ** attempt)    # 1, 2, 4, 8 s: a server or a link still coming up (curl --retry's pace)
    sys.exit(f"bootstrap: could not fetch {{url}}")


def main():
{image_step}{fetch}


if __name__ == "__main__":
    main()
'''


def eos_zero_touch(device: Device, url: str, image: str | None, names: tuple[str, str]) -> ZeroTouch:
    """`names`: the target's structured config and startup-config file names."""
    structured, startup = names
    script = bootstrap(device, url, image, ((structured, f"teton/{structured}"), (startup, "startup-config")))
    return ZeroTouch(BOOTSTRAP, {BOOTSTRAP: script})
