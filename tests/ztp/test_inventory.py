"""A bad inventory line: exit 2, a message naming the file and the line (a control character shown escaped, never
raw), no traceback, and the ZTP folder already there left exactly as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ztp.helpers import cli, inventory_text, switches, tree

GOOD = "atsw01,02:7e:70:00:00:01"          # line 2 of every bad inventory, after the header


@pytest.fixture(scope="module")
def good(tmp_path_factory, lab_build: Path) -> tuple[Path, dict[str, bytes]]:
    """A ZTP folder written from a good inventory, and its bytes."""
    work = tmp_path_factory.mktemp("good")
    text, _ = inventory_text([d["name"] for d in switches(lab_build)][:5])
    (work / "inventory.csv").write_text(text)
    out = work / "ztp"
    assert cli("ztp", lab_build, "--inventory", work / "inventory.csv", "-o", out).exit_code == 0
    return out, tree(out)


def _host(build: Path) -> str:
    return next(d["name"] for d in json.loads((build / "fabric.json").read_text())["devices"] if d["role"] == "host")


# (name, the lines after the header and GOOD, {line number: what its message says})
CASES: list[tuple[str, list[str], dict[int, list[str]]]] = [
    ("duplicate MAC", ["atsw02,027E.7000.0001"], {3: ["MAC 02:7e:70:00:00:01 is listed twice", "also on line 2",
                                                       "for atsw01"]}),
    ("duplicate device", ["z01-ctsw01,02:7e:70:00:00:02", "atsw01,02:7e:70:00:00:03"],
     {4: ["atsw01 is listed twice (also on line 2)"]}),
    ("unknown device", ["nosuch-sw,02:7e:70:00:00:02"], {3: ["device 'nosuch-sw' is not in the build"]}),
    ("a host", ["HOST,02:7e:70:00:00:02"], {3: ["is a host, not a switch"]}),
    ("malformed MAC", ["atsw02,zz:00:00:00:00:02"], {3: ["'zz:00:00:00:00:02' is not a unicast MAC address"]}),
    ("multicast MAC", ["atsw02,01:00:5e:00:00:02"], {3: ["'01:00:5e:00:00:02' is not a unicast MAC address"]}),
    ("broadcast MAC", ["atsw02,ff:ff:ff:ff:ff:ff"], {3: ["is not a unicast MAC address"]}),
    ("short MAC", ["atsw02,02:7e:70:00:02"], {3: ["'02:7e:70:00:02' is not a unicast MAC address"]}),
    ("mixed separators", ["atsw02,02:7e-70:00:00:02"], {3: ["is not a unicast MAC address"]}),
    ("four fields", ["atsw02,02:7e:70:00:00:02,SN1,rack7"], {3: ["4 fields; a line is device,mac[,serial]"]}),
    ("one field", ["atsw02"], {3: ["line: 1 field; a line is device,mac[,serial]"]}),
    ("over-long line", ["atsw02,02:7e:70:00:00:02,S" + "N" * 1100], {3: ["longer than 1024 characters"]}),
    ("bad serial", ["atsw02,02:7e:70:00:00:02,S/N 7"], {3: ["serial 'S/N 7'"]}),
    ("escape in the name", ["ats\x1b[2Jw02,02:7e:70:00:00:02"], {3: [r"device 'ats\x1b[2Jw02' is not in the build"]}),
    ("NUL in the name", ["ats\x00w02,02:7e:70:00:00:02"], {3: [r"device 'ats\x00w02' is not in the build"]}),
    # a vertical tab or a form feed is no line break: the lines after keep their numbers
    ("vertical tab in the name", ["ats\x0bw02,02:7e:70:00:00:02", "nosuch-sw,02:7e:70:00:00:03",
                                  "ats\x0cw03,02:7e:70:00:00:04"],
     {3: [r"device 'ats\x0bw02'"], 4: ["device 'nosuch-sw'"], 5: [r"device 'ats\x0cw03'"]}),
    ("carriage return inside a line", ["atsw02,02:7e\r:70:00:00:02"], {3: ["a carriage return inside the line"]}),
]


@pytest.mark.parametrize(("lines", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_line_is_named_and_nothing_is_written(good, lab_build: Path, tmp_path, lines, expected):
    out, before = good
    inventory = tmp_path / "inventory.csv"
    body = [line.replace("HOST", _host(lab_build)) for line in lines]
    inventory.write_bytes("\n".join(["device,mac,serial", GOOD, *body, ""]).encode())
    result = cli("ztp", lab_build, "--inventory", inventory, "-o", out)
    assert result.exit_code == 2, result.output
    said = result.output
    assert not [c for c in said if ord(c) < 32 and c != "\n"], repr(said)      # nothing raw reaches a terminal
    for line, parts in expected.items():
        found = [x for x in said.splitlines() if x.startswith(f"error: {inventory}:{line}: ")]
        assert len(found) == 1, said
        assert all(p in found[0] for p in parts), (found[0], parts)
    assert said.count("error: ") == len(expected), said
    assert tree(out) == before


def test_json_findings_carry_file_line_and_rule(good, lab_build: Path, tmp_path):
    out, before = good
    inventory = tmp_path / "inventory.csv"
    inventory.write_text(f"{GOOD}\natsw02,01:00:5e:00:00:02\n\nnosuch,02:7e:70:00:00:09\n")
    result = cli("ztp", lab_build, "--inventory", inventory, "-o", out, "--json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["ok"] is False
    assert [(f["file"], f["line"], f["rule"]) for f in doc["findings"]] == [
        (str(inventory), 2, "ztp-inventory"), (str(inventory), 4, "ztp-inventory")]
    assert tree(out) == before


def test_a_file_that_is_not_utf8_is_named(good, lab_build: Path, tmp_path):
    out, before = good
    inventory = tmp_path / "inventory.csv"
    inventory.write_bytes(GOOD.encode() + b"\natsw02,02:7e:70:00:00:02,S\xffN\n")
    result = cli("ztp", lab_build, "--inventory", inventory, "-o", out)
    assert result.exit_code == 2 and f"{inventory}: not UTF-8 text" in result.output
    assert tree(out) == before


def test_mac_spellings_are_one_address(good, lab_build: Path, tmp_path):
    """A MAC written with hyphens, dots or nothing is the colon one: the same switch twice is caught whatever the
    spelling."""
    out, before = good
    for n, other in enumerate(("02-7E-70-00-00-01", "027e.7000.0001", "027E70000001"), start=2):
        inventory = tmp_path / f"inventory-{n}.csv"
        inventory.write_text(f"{GOOD}\natsw02,{other}\n")
        result = cli("ztp", lab_build, "--inventory", inventory, "-o", out)
        assert result.exit_code == 2 and f"{inventory}:2: " in result.output and "also on line 1" in result.output
    assert tree(out) == before
