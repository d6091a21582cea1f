"""Attack: bad stack settings.  `teton:checkTimeout=abc` passed the preview and `pulumi up` pushed three canaries before
a ValueError; rolloutFraction/rolloutMaxWave of 0, -1, abc, nan, 1e309 and a malformed canary were 60-line
tracebacks; `canary: "z01-r001-rtsw"` was read letter by letter.  Every setting is parsed and range-checked when the
program starts: one line naming the setting, nothing registered."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.reliability.deploy.pulumi_project import engine_or_fail, make_project
from teton.deploy import settings

BAD = [("checkTimeout", v) for v in ("abc", "0", "-1", "nan", "inf", "1e309", "3601")] + \
      [("rolloutFraction", v) for v in ("0", "-1", "abc", "nan", "1e309", "1")] + \
      [("rolloutMaxWave", v) for v in ("0", "-1", "abc", "nan", "1e309", "2.5")] + \
      [("canary", v) for v in ("z01-r001-rtsw", '["z01-r001-rtsw"', "[1]", '{"a": 1}', '["a b"]', '["x", "x"]')] + \
      [("mode", "prod"), ("target", "prod"), ("adopt", "yes"), ("twin", "a/b"), ("twin", "x" * 17), ("secrets", "[1]"),
       ("secrets", '{"a": {"b": 1}}'), ("secrets", '{"../x": "v"}'), ("build", "a\nb"), ("eapiPort", "70000")]


@pytest.mark.parametrize(("key", "value"), BAD)
def test_a_bad_setting_is_one_line_naming_it(key, value):
    raw = {"spec": "inventory/lab.yaml", key: value}
    with pytest.raises(settings.SettingError) as err:
        settings.parse(raw.get, Path("/project"))
    assert str(err.value).startswith(f"config teton:{key}: ") and "\n" not in str(err.value)


def test_good_settings_parse_into_their_types():
    raw = {"spec": "inventory/lab.yaml", "build": "build/x", "canary": '["z01-r001-rtsw", "atsw01"]',
           "rolloutFraction": "0.5", "rolloutMaxWave": "8", "checkTimeout": "20", "adopt": "True",
           "mode": "live", "twin": "lab_2", "secrets": '{"bgp_backend": "pw"}'}
    s = settings.parse(raw.get, Path("/project"))
    assert s.spec == Path("/project/inventory/lab.yaml") and s.build == Path("/project/build/x")
    assert s.policy.canary == ("z01-r001-rtsw", "atsw01") and s.policy.fraction == 0.5 and s.policy.max_wave == 8
    assert (s.check_timeout, s.adopt, s.mode, s.twin, s.secrets) == (20.0, True, "live", "lab_2", ("bgp_backend",))
    defaults = settings.parse({"spec": "/abs/s.yaml"}.get, Path("/project"))
    assert defaults.build is None and defaults.policy.canary is None and defaults.check_timeout == 30.0


def test_the_deploy_mode_is_teton_mode_and_teton_target_its_older_spelling():
    def mode(**raw):
        return settings.parse({"spec": "s.yaml", **raw}.get, Path("/project")).mode
    assert (mode(), mode(mode="live"), mode(target="live"), mode(mode="live", target="live")) == \
        ("twin", "live", "live", "live")
    with pytest.raises(settings.SettingError, match="^config teton:target: 'twin' disagrees with teton:mode 'live'"):
        mode(mode="live", target="twin")


@pytest.mark.parametrize(("key", "value"), [("checkTimeout", "abc"), ("canary", "z01-r001-rtsw"),
                                            ("rolloutMaxWave", "1e309")])
def test_the_engine_stops_at_the_start_with_one_line(tmp_path, key, value):
    """With the real engine: the preview (so the update, which previews first) fails before registering anything."""
    engine_or_fail()
    project, env = make_project(tmp_path)
    env["PULUMI_CONFIG_PASSPHRASE"] = "attack"
    script = f"""set -e
export PATH=~/.cache/teton/pulumi/v3.274.1/bin:$PATH
mkdir -p ~/.state && pulumi login file://$HOME/.state
.venv/bin/teton render inventory/lab.yaml >/dev/null
pulumi stack init lab --secrets-provider passphrase
pulumi config set teton:spec inventory/lab.yaml
pulumi config set -- teton:{key} '{value}'
pulumi preview --non-interactive
"""
    res = subprocess.run(["bash", "-c", script], cwd=project, env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    assert f"config teton:{key}: " in out and "Traceback" not in out, out[-3000:]
    assert "teton:index:Switch" not in out, "a switch was registered before the settings were checked"


SECRET_LINE = "pw\n network 203.0.113.0/24"


def test_every_referenced_secret_is_checked_before_anything_registers(tmp_path):
    """Attack: `bgp_backend=$'pw\\n network 203.0.113.0/24'` was substituted raw into the pushed frr.conf, and only a
    push found a missing or refused secret (after the canaries).  The program checks every secret the plan's files
    reference, each against its kind, at its start: one line naming the secret and a device, never the value."""
    from tests.helpers import LAB
    from teton.deploy.program import Settings, check_secrets, plan_stack
    from teton.findings import TetonError
    from teton.pipeline import build

    out = tmp_path / "b"
    build(LAB, out, force=True)
    plan = plan_stack(Settings(out))
    good = {"bgp_backend": "bgp-s3cret%", "bgp_frontend": "bgp-fe-s3cret%", "ntp_key": "ntp-s3cret",
            "aaa_key": "t@cacs-key", "breakglass_sha512": "$6$salt$hash"}
    check_secrets(plan, good)
    for name, value, said in [("bgp_backend", SECRET_LINE, "(BGP password) must be"),
                              ("bgp_backend", 'pw" x', "(BGP password) must be"),
                              ("breakglass_sha512", "plain", "(break-glass SHA-512 crypt hash) must be"),
                              ("aaa_key", None, "is referenced but not provided")]:
        secrets = {k: v for k, v in {**good, name: value}.items() if v is not None}
        with pytest.raises(TetonError) as err:
            check_secrets(plan, secrets)
        msg = str(err.value)
        assert msg.startswith(f"config teton:secrets: secret '{name}' {said}") and "(used by " in msg, msg
        assert "\n" not in msg and (value is None or value not in msg)


@pytest.mark.parametrize("bad", ["newline", "missing"])
def test_the_engine_refuses_a_bad_secret_before_registering_a_switch(tmp_path, bad):
    """With the real engine: the preview stops at the program's start on a secret the build references that is
    missing or not a value of its kind; no Switch is registered and the value is never printed."""
    engine_or_fail()
    project, env = make_project(tmp_path)
    env["PULUMI_CONFIG_PASSPHRASE"] = "attack"
    env["BAD_SECRET"] = SECRET_LINE
    bgp = 'pulumi config set --secret --path teton:secrets.bgp_backend "$BAD_SECRET"' if bad == "newline" else ""
    script = f"""set -e
export PATH=~/.cache/teton/pulumi/v3.274.1/bin:$PATH
mkdir -p ~/.state && pulumi login file://$HOME/.state
.venv/bin/teton render inventory/lab.yaml >/dev/null
pulumi stack init lab --secrets-provider passphrase
pulumi config set teton:spec inventory/lab.yaml
pulumi config set --secret --path teton:secrets.aaa_key 't@cacs-key'
pulumi config set --secret --path teton:secrets.breakglass_sha512 '$6$salt$hash'
{bgp}
pulumi preview --non-interactive
"""
    res = subprocess.run(["bash", "-c", script], cwd=project, env=env, capture_output=True, text=True, timeout=600,
                         check=False)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-3000:]
    said = "(BGP password) must be" if bad == "newline" else "is referenced but not provided"
    assert f"config teton:secrets: secret 'bgp_backend' {said}" in out and "Traceback" not in out, out[-3000:]
    assert "teton:index:Switch" not in out, "a switch was registered before the secrets were checked"
    assert "203.0.113.0/24" not in out
