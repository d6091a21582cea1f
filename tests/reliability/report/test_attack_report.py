"""Attack: `teton docs` on a crafted build folder.  `cabling/bom.csv` was read with a plain read: a symlink to
/proc/self/environ (or /etc/passwd, or the render-cache key) put that file, TETON_SECRET_* values included, into the
HTML report, and a 50 GB sparse bom.csv was a MemoryError traceback.  A device's `ru` of
`<img src=x onerror=...>` was written into the page unescaped, and the crafted build passed `validate --rendered`
once its manifest hash was updated; `zone: "z1"` or a string `ru` were tracebacks in `verify` and `docs`.  The report
reads the build through the BuildFolder (bounded, confined: the section says why it is not shown), every value of
the page is escaped, and fabric.json is checked by type on load (exit 2 naming the file and the JSON path)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.helpers import LAB, ROOT
from teton.buildfolder import FABRIC_JSON, MANIFEST
from teton.pipeline import build

TETON = ROOT / ".venv" / "bin" / "teton"
SECRET = "S3cret-from-the-environment"


@pytest.fixture(scope="module")
def lab_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("report-attack") / "build"
    build(LAB, out, force=True)
    return out


def _copy(lab_build, tmp_path):
    folder = tmp_path / "b"
    shutil.copytree(lab_build, folder)
    return folder


def _teton(*args, timeout=120):
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'infra'}:{ROOT}", "TETON_CACHE": "off",
           "TETON_SECRET_bgp_backend": SECRET}
    return subprocess.run([sys.executable, str(TETON), *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=timeout)


def _rehash(folder, rel):
    """The manifest's record of `rel` made to match the file again (what an attacker does to pass validate)."""
    manifest = json.loads((folder / MANIFEST).read_text())
    data = (folder / rel).read_bytes()
    manifest["files"][rel].update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def _environ(folder, tmp_path):
    (folder / "cabling/bom.csv").unlink()
    (folder / "cabling/bom.csv").symlink_to("/proc/self/environ")


def _outside_file(folder, tmp_path):
    secret = tmp_path / "cache.key"
    secret.write_text(f"key,{SECRET}\n")
    (folder / "cabling/bom.csv").unlink()
    (folder / "cabling/bom.csv").symlink_to(secret)


def _sparse(folder, tmp_path):
    with open(folder / "cabling/bom.csv", "r+b") as f:
        f.truncate(50 * 1024**3)


@pytest.mark.parametrize("attack", [_environ, _outside_file, _sparse],
                         ids=["proc-self-environ", "file-outside-the-build", "50GB-sparse"])
def test_docs_reads_the_bill_of_materials_through_the_build_folder(lab_build, tmp_path, attack):
    folder = _copy(lab_build, tmp_path)
    attack(folder, tmp_path)
    res = _teton("docs", folder, "-o", tmp_path / "r", "--no-verify")
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    page = (tmp_path / "r" / "index.html").read_text()
    assert SECRET not in page and "TETON_SECRET" not in page
    assert f"{folder}/cabling/bom.csv: " in page        # the section says which file, and why it is not shown


def test_docs_still_shows_the_bill_of_materials(lab_build, tmp_path):
    res = _teton("docs", lab_build, "-o", tmp_path / "r", "--no-verify")
    assert res.returncode == 0, res.stderr
    page = (tmp_path / "r" / "index.html").read_text()
    assert "from cabling/bom.csv" in page


def _device_field(folder, field, value):
    data = json.loads((folder / FABRIC_JSON).read_text())
    data["devices"][0][field] = value
    (folder / FABRIC_JSON).write_text(json.dumps(data))
    _rehash(folder, FABRIC_JSON)


XSS = "<img src=x onerror=document.body.id='PWN'>"


@pytest.mark.parametrize(("field", "value"), [("ru", XSS), ("ru", "7"), ("zone", "z1"), ("ru", True),
                                              ("prefixes4", [1])])
@pytest.mark.parametrize("command", ["validate", "verify", "docs"])
def test_a_fabric_json_field_of_the_wrong_type_is_refused_naming_its_path(lab_build, tmp_path, field, value,
                                                                           command):
    folder = _copy(lab_build, tmp_path)
    _device_field(folder, field, value)
    args = {"validate": ("validate", "--rendered", folder), "verify": ("verify", folder),
            "docs": ("docs", folder, "-o", tmp_path / "r", "--no-verify")}[command]
    res = _teton(*args)
    assert res.returncode == 2, res.stdout + res.stderr
    said = res.stdout + res.stderr
    assert "Traceback" not in said
    assert f"devices[0].{field}: expected" in said and "fabric.json" in said, said
    assert not (tmp_path / "r" / "index.html").exists()


def test_every_value_of_the_page_is_escaped(lab_build, tmp_path):
    """A string field (a rack's name) holding markup is text on the page, in the table and in the drawings."""
    folder = _copy(lab_build, tmp_path)
    data = json.loads((folder / FABRIC_JSON).read_text())
    rack = data["devices"][-1]["rack"]
    (folder / FABRIC_JSON).write_text((folder / FABRIC_JSON).read_text().replace(f'"{rack}"', json.dumps(XSS)))
    res = _teton("docs", folder, "-o", tmp_path / "r", "--no-verify")
    assert res.returncode == 0, res.stderr
    page = (tmp_path / "r" / "index.html").read_text()
    assert "<img" not in page and "onerror=document" in page


def test_deploys_placements_check_the_types_too(lab_build, tmp_path):
    """Deploy reads only the devices' placements (not the whole Fabric): a wrong type is refused there as well."""
    from teton.buildfolder import BuildFileError, BuildFolder

    folder = _copy(lab_build, tmp_path)
    _device_field(folder, "zone", "z1")
    with pytest.raises(BuildFileError, match=r"devices\[0\]\.zone: expected int or null, got str 'z1'"):
        BuildFolder(folder).placements()
