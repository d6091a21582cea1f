"""Attack: text from data reached the terminal as it was.  An LLDP port id holding escape codes (cursor up, erase the
line) could hide a miswired line of `teton verify cabling`; `site: "hall [/bold]"` passed validate and crashed
`teton plan` (read as Rich markup).  The consoles of teton's command line write every control character out
("\\x1b"), and the plan's table shows its data as text, no markup read in it."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from tests.helpers import LAB
from teton.cli import main
from teton.cli.common import err, out, plain, visible
from teton.fabric.neighbours import NEIGHBOURS_FILE, load_neighbours

HIDE = "\x1b[1A\x1b[2K\r"        # cursor up, erase the line, back to its start


def _run(*args):
    result = CliRunner().invoke(main, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_a_port_id_with_escape_codes_cannot_hide_a_miswired_line(lab_build, tmp_path):
    expected = load_neighbours((lab_build / NEIGHBOURS_FILE).read_text())
    folder = tmp_path / "lldp"
    folder.mkdir()
    for device, ports in expected.items():
        seen = {p: (n.system, n.port_id) for p, n in ports.items()}
        if device == "z01-r001-h2":
            seen["fe0"] = ("z01-r002-frsw", f"Ethernet1/1{HIDE}")
        entries = [{port: {"via": "LLDP", "chassis": {system: {}}, "port": {"id": {"type": "local", "value": pid}}}}
                   for port, (system, pid) in sorted(seen.items())]
        (folder / f"{device}.json").write_text(json.dumps({"lldp": {"interface": entries}}))
    code, text = _run("verify", "cabling", str(lab_build), "--lldp", str(folder))
    assert code == 1
    assert "\x1b" not in text and "\r" not in text
    line = next(x for x in text.splitlines() if x.startswith("miswired"))
    assert "z01-r001-h2 fe0" in line and "Ethernet1/1\\x1b[1A\\x1b[2K\\x0d" in line


def test_a_site_that_looks_like_markup_is_shown_as_it_is(tmp_path):
    data = yaml.safe_load(LAB.read_text())
    data["site"] = "hall [/bold]"
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    code, _ = _run("validate", str(spec))
    assert code == 0
    code, text = _run("plan", str(spec))
    assert code == 0, text
    assert "lab (hall [/bold]), roce backend" in text


def test_the_consoles_write_control_characters_out(capsys):
    out.print(f"a{HIDE}b\u202ec [bold]d[/bold]", markup=True)
    err.print(plain("[red]e\x07[/red]"))
    captured = capsys.readouterr()
    assert captured.out == "a\\x1b[1A\\x1b[2K\\x0db\\u202ec d\n"
    assert captured.err == "[red]e\\x07[/red]\n"
    assert visible("tab\tand\nnewline") == "tab\tand\nnewline"
