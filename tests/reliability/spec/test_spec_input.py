"""Hostile and careless spec files: each is a finding (exit 2) with a clear message, never a traceback, a hang or a
blow-up of memory.  The memory-heavy cases also run the real CLI in a subprocess under a 2 GiB address-space limit."""

from __future__ import annotations

import codecs
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import INVENTORY, LAB, write_spec
from teton import limits
from teton.cli import main
from teton.findings import SpecError
from teton.spec.load import load_spec

LAB_PY = INVENTORY / "lab.py"
GIB = 1 << 30


def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stdout+stderr) of the CLI run in this process."""
    result = CliRunner().invoke(main, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    out = result.stdout + result.stderr
    assert "Traceback" not in out
    return result.exit_code, result.stdout, out


def cli_subprocess(*args: str) -> tuple[int, str]:
    """(exit code, stdout+stderr) of `python -m teton.cli ...` under RLIMIT_AS = 2 GiB and a 30 s timeout."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * GIB, 2 * GIB))

    proc = subprocess.run([sys.executable, "-m", "teton.cli", *args], preexec_fn=limit, capture_output=True,
                          text=True, timeout=30)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out
    return proc.returncode, out


def validate(spec: Path, fragment: str, heavy: bool = False) -> str:
    """Validate `spec` through the CLI, expecting exit 2 and `fragment`; under a memory limit too if `heavy`."""
    code, _, out = cli("validate", str(spec))
    assert code == 2 and fragment in out, out
    if heavy:
        code, out_sub = cli_subprocess("validate", str(spec))
        assert code == 2 and fragment in out_sub, out_sub
    return out


def lab_data() -> dict:
    return yaml.safe_load(LAB.read_text())


# --------------------------------------------------------------------------------------------- 1. size and aliases


def test_billion_laughs_stops_at_max_yaml_nodes(tmp_path):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    spec = write_spec(tmp_path, "\n".join(lines) + "\n")
    assert spec.stat().st_size < 600
    t0 = time.monotonic()
    out = validate(spec, f"MAX_YAML_NODES = {limits.MAX_YAML_NODES:,}", heavy=True)
    assert "[limit]" in out
    assert time.monotonic() - t0 < 15


def test_file_over_the_size_limit_is_refused(tmp_path):
    spec = write_spec(tmp_path, LAB.read_text() + "#" * limits.MAX_SPEC_BYTES + "\n")
    validate(spec, f"MAX_SPEC_BYTES = {limits.MAX_SPEC_BYTES:,}")


# --------------------------------------------------------------------------------------------- 2. nesting


@pytest.mark.parametrize("text", ["[" * 5000 + "]" * 5000, "a: " + "{a: " * 5000 + "1" + "}" * 5000,
                                  "".join("  " * i + "a:\n" for i in range(100)) + "  " * 100 + "1\n"],
                         ids=["sequences", "flow-mappings", "block-mappings"])
def test_deep_nesting_is_a_finding_naming_max_yaml_depth(tmp_path, text):
    spec = write_spec(tmp_path, text)
    out = validate(spec, f"MAX_YAML_DEPTH = {limits.MAX_YAML_DEPTH}", heavy=text.startswith("["))
    assert "RecursionError" not in out


def test_recursive_alias_is_a_finding(tmp_path):
    validate(write_spec(tmp_path, "name: &a [*a]\n"), "MAX_YAML_DEPTH")


# --------------------------------------------------------------------------------------------- 3. decoding


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_spec_is_not_utf8(tmp_path, encoding):
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(LAB.read_text().encode(encoding))
    out = validate(spec, "the spec is not UTF-8 text")
    assert "UTF-16" in out


def test_latin1_bytes_name_offset_and_line(tmp_path):
    text = LAB.read_text().replace("site: lab-hall-1", "site: Zürich-hall-1", 1)
    assert "Zürich" in text
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(text.encode("latin-1"))
    line = text.splitlines().index("site: Zürich-hall-1") + 1
    offset = text.encode("latin-1").index(b"\xfc")
    out = validate(spec, "the spec is not UTF-8 text")
    assert f"spec.yaml:{line}:" in out and f"offset {offset:,}" in out and "0xFC" in out


def test_binary_file_is_not_utf8(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    out = validate(spec, "the spec is not UTF-8 text")
    assert "NUL byte" in out


def test_utf8_with_a_bom_is_fine(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(codecs.BOM_UTF8 + LAB.read_bytes())
    code, _, out = cli("validate", str(spec))
    assert code == 0, out


# --------------------------------------------------------------------------------------------- 4. keys


@pytest.mark.parametrize("text,line", [("name: lab\n? [a, b]\n: 1\n", 2), ("name: lab\nsite: {[1,2]: x}\n", 2),
                                       ("name: lab\n? {a: 1}\n: 1\n", 2)])
def test_complex_keys_are_findings_with_a_line(tmp_path, text, line):
    out = validate(write_spec(tmp_path, text), "keys must be strings")
    assert f"spec.yaml:{line}:" in out


@pytest.mark.parametrize("key,path", [("1", "backend.1"), ("on", "backend.on"), ("~", "backend.~"),
                                      ("null", "backend.null")])
def test_non_string_keys_name_their_path(tmp_path, key, path):
    text = LAB.read_text().replace("backend:\n", f"backend:\n  {key}: 3\n", 1)
    out = validate(write_spec(tmp_path, text), "keys must be strings")
    assert f": {path}: " in out


# --------------------------------------------------------------------------------------------- 6. the model


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan"])
def test_inf_and_nan_are_not_numbers(tmp_path, value):
    text = LAB.read_text().replace("oversubscription: 4.0", f"oversubscription: {value}", 1)
    assert value in text
    out = validate(write_spec(tmp_path, text), "finite number")
    assert "backend.rtsw.oversubscription" in out


@pytest.mark.parametrize("where", ["bgp", "aaa", "snmp_auth", "snmp_priv"])
def test_secret_name_with_a_hyphen_or_space(tmp_path, where):
    data = lab_data()
    if where == "bgp":
        data["backend"]["bgp"]["password_secret"], path = "bgp-backend", "backend.bgp.password_secret"
    elif where == "aaa":
        data["management"]["aaa_key_secret"], path = "aaa key", "management.aaa_key_secret"
    else:
        field = f"snmpv3_{where.split('_')[1]}_secret"
        data["management"][field], path = "snmp-v3", f"management.{field}"
    out = validate(write_spec(tmp_path, data), "secret names are letters, digits and '_'")
    assert path in out


def test_switch_model_of_50_million_ports_fails_fast_and_small(tmp_path):
    data = lab_data()
    data["switch_models"] = [{"name": "huge", "vendor": "acme", "asic": "x", "asic_tbps": 51.2, "port_naming": "sonic",
                              "nos": ["sonic"], "port_groups": [{"count": 50_000_000, "speed_gbps": 400, "lanes": 8,
                                                                 "form_factor": "OSFP"}]}]
    data["backend"]["rtsw"]["model"] = "huge"
    spec = write_spec(tmp_path, data)
    assert spec.stat().st_size < 3000          # the lab spec itself is ~2.7 KB (shares, spines, services, servers)
    t0 = time.monotonic()
    out = validate(spec, f"MAX_PORTS_PER_MODEL = {limits.MAX_PORTS_PER_MODEL:,}")
    assert time.monotonic() - t0 < 2
    assert "switch_models[0].port_groups[0].count" in out
    validate(spec, "MAX_PORTS_PER_MODEL", heavy=True)


def test_ports_of_all_groups_together_are_bounded(tmp_path):
    data = lab_data()
    group = {"count": 4000, "speed_gbps": 400, "lanes": 8, "form_factor": "OSFP"}
    data["switch_models"] = [{"name": "wide", "vendor": "acme", "asic": "x", "asic_tbps": 51.2, "port_naming": "sonic",
                              "port_groups": [group, group]}]
    out = validate(write_spec(tmp_path, data), "at most MAX_PORTS_PER_MODEL = 4,096 ports; 'wide' has 8,000")
    assert "switch_models[0]" in out


@pytest.mark.parametrize("where,value,fragment", [
    (("backend", "ctsw", "per_zone"), 5000, "MAX_CTSW_PER_ZONE = 1,024"),
    (("storage", 0, "racks"), 10_001, "MAX_STORAGE_RACKS = 10,000"),
    (("host", "gpus"), 65, "MAX_PER_HOST = 64"),
    (("management", "ntp_servers"), ["192.0.2.1"] * 65, "MAX_MANAGEMENT_ENTRIES = 64"),
])
def test_counts_that_size_work_are_bounded_and_name_their_limit(tmp_path, where, value, fragment):
    data = lab_data()
    node = data
    for step in where[:-1]:
        node = node.setdefault(step, {}) if isinstance(step, str) else node[step]
    node[where[-1]] = value
    validate(write_spec(tmp_path, data), fragment)


# --------------------------------------------------------------------------------------------- 5. Python specs


def py_spec(tmp_path: Path, text: str, name: str = "spec.py") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_endless_python_spec_is_stopped_at_the_timeout(tmp_path):
    pids = tmp_path / "pids"
    spec = py_spec(tmp_path, f"import os, subprocess\n"
                             f"child = subprocess.Popen(['sleep', '60'])\n"
                             f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
                             f"while True:\n    pass\n")
    t0 = time.monotonic()
    code, _, out = cli("validate", str(spec), env={"TETON_SPEC_TIMEOUT": "2"})
    elapsed = time.monotonic() - t0
    assert code == 2 and "did not finish within 2 s" in out and "PYTHON_SPEC_TIMEOUT_S" in out, out
    assert elapsed < 8
    deadline = time.monotonic() + 2
    while any(_alive(int(p)) for p in pids.read_text().split()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(int(p)) for p in pids.read_text().split())  # the spec and what it started


def test_timeout_that_is_not_a_number_is_a_finding(tmp_path):
    code, _, out = cli("validate", str(LAB_PY), env={"TETON_SPEC_TIMEOUT": "soon"})
    assert code == 2 and "TETON_SPEC_TIMEOUT must be a number of seconds" in out, out


def test_timeout_argument_of_load_spec(tmp_path):
    spec = py_spec(tmp_path, "import time\ntime.sleep(30)\n")
    t0 = time.monotonic()
    with pytest.raises(SpecError) as exc:
        load_spec(spec, timeout=0.5)
    assert time.monotonic() - t0 < 5
    assert "did not finish within 0.5 s" in exc.value.findings[0].message


def test_sys_exit_before_binding_cluster(tmp_path):
    spec = py_spec(tmp_path, "import sys\nsys.exit(0)\n")
    validate(spec, "the Python spec exited with code 0 before binding `cluster`")


def test_os_exit_and_signals_are_findings(tmp_path):
    with pytest.raises(SpecError) as exc:
        load_spec(py_spec(tmp_path, "import os\nos._exit(5)\n"))
    assert "exited with code 5 before binding `cluster`" in exc.value.findings[0].message
    with pytest.raises(SpecError) as exc:
        load_spec(py_spec(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "k.py"))
    assert "killed by SIGKILL" in exc.value.findings[0].message


def test_printing_spec_does_not_break_plan_json(tmp_path):
    spec = py_spec(tmp_path, "import sys\nprint('hello from the spec')\nprint('to stderr', file=sys.stderr)\n"
                   + LAB_PY.read_text())
    code, stdout, out = cli("plan", "--json", str(spec))
    assert code == 0, out
    assert json.loads(stdout)["cluster"] == "lab"
    assert "hello from the spec" not in out


def test_failing_spec_quotes_the_tail_of_its_stderr(tmp_path):
    spec = py_spec(tmp_path, "import sys\nprint('custom diagnostic', file=sys.stderr)\nraise RuntimeError('boom')\n")
    out = validate(spec, "RuntimeError: boom")
    assert "custom diagnostic" in out and "spec.py:3:" in out


def test_exception_carries_the_line_in_the_spec(tmp_path):
    spec = py_spec(tmp_path, "from teton.spec import Cluster\n\n\ndef f(x):\n    return x\n\n"
                             "broken = f(1) / 0\n")
    out = validate(spec, "spec.py:7:")
    assert "ZeroDivisionError: division by zero" in out and "[python]" in out


def test_exception_in_a_helper_beside_the_spec_points_at_the_calling_line(tmp_path):
    (tmp_path / "helpers_of_spec.py").write_text("def make():\n    raise ValueError('no such zone')\n")
    spec = py_spec(tmp_path, "import helpers_of_spec\n\ncluster = helpers_of_spec.make()\n")
    out = validate(spec, "spec.py:3:")
    assert "ValueError: no such zone" in out and "raised in helpers_of_spec.py:2" in out


def test_validation_error_of_the_spec_has_path_and_line(tmp_path):
    spec = py_spec(tmp_path, "from teton.spec import RtswTier\n\ntier = RtswTier(model='minipack2', nos='Jun OS',\n"
                             "                uplinks_per_ctsw=65)\n")
    out = validate(spec, "spec.py:3: nos: RtswTier(...)")
    assert "spec.py:3: uplinks_per_ctsw:" in out and "MAX_PARALLEL_LINKS = 64" in out


def test_model_construct_cannot_skip_validation(tmp_path):
    spec = py_spec(tmp_path, f"from teton.spec import Cluster\nfrom teton.spec.load import load_spec\n\n"
                             f"good = load_spec({str(LAB)!r})\n"
                             f"cluster = Cluster.model_construct(**{{**dict(good), 'name': '../../..'}})\n")
    out = validate(spec, "String should match pattern")
    assert "spec.py:5: name:" in out and "'../../..'" in out
    code, _, out = cli("render", str(spec), "-o", str(tmp_path / "out"))
    assert code == 2 and not (tmp_path / "out").exists()


def test_model_construct_with_deep_data_is_bounded(tmp_path):
    spec = py_spec(tmp_path, "from teton.spec import Cluster\nsite = []\nfor _ in range(200):\n    site = [site]\n"
                             "cluster = Cluster.model_construct(name='lab', site=site)\n")
    validate(spec, "MAX_YAML_DEPTH")


def test_spec_that_binds_cluster_to_something_else(tmp_path):
    validate(py_spec(tmp_path, "cluster = 3\n"), "a Python spec must bind `cluster` to a teton.spec.Cluster")


def test_spec_memory_is_bounded(tmp_path):
    with pytest.raises(SpecError) as exc:
        load_spec(py_spec(tmp_path, f"x = bytearray({limits.PYTHON_SPEC_MEMORY_BYTES + GIB})\n"))
    (f,) = exc.value.findings
    assert f.rule == "limit" and "PYTHON_SPEC_MEMORY_BYTES" in f.message and f.line == 1


def test_python_and_yaml_lab_are_the_same_model_after_the_json_round_trip():
    t0 = time.monotonic()
    from_py = load_spec(LAB_PY)
    assert time.monotonic() - t0 < 3
    assert from_py == load_spec(LAB)
    assert from_py.model_dump() == load_spec(LAB).model_dump()


def test_python_spec_runs_in_a_child_process(tmp_path):
    pid = tmp_path / "pid"
    spec = py_spec(tmp_path, f"import os\nopen({str(pid)!r}, 'w').write(str(os.getpid()))\n" + LAB_PY.read_text())
    assert load_spec(spec) == load_spec(LAB)
    assert int(pid.read_text()) != os.getpid()


@pytest.mark.parametrize("text", ["!!python/object:os.system x\n", "name: 2024-13-45\n", f"zones: {'9' * 5000}\n",
                                  "", "- 1\n", "\x01\x02", "a: [1, 2\n"])
def test_odd_yaml_gives_findings_only(tmp_path, text):
    with pytest.raises(SpecError):
        load_spec(write_spec(tmp_path, text))
