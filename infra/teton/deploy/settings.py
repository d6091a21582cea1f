"""The stack's settings (Pulumi config, namespace `teton`), parsed and range-checked in one place before anything is
registered or pushed.

A stack's config is text a user typed (`pulumi config set`) or a file a colleague wrote, so every value is parsed
here and a bad one stops the program at its start with one line naming the setting (`config teton:checkTimeout:
...`), never a traceback and never after a canary was pushed.  Paths (`spec`, `build`, `playbooks`) resolve against
the project folder (where Pulumi.yaml is), not against the program's folder (`main: infra/`) the engine runs it in.

The provider (`teton.deploy.provider`) reads the same stack config through `Configure`; it uses the parsers below
for the settings it reads, so the program and the provider agree on every value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from teton.deploy.rollout import RolloutPolicy
from teton.findings import TetonError

Mode = Literal["twin", "live"]      # the deploy mode: push to the digital twin or to the live switches
TWIN_NAME = re.compile(r"[A-Za-z0-9_]{1,16}")          # as `teton.twin.plan` names a twin
DEVICE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")   # a switch's name as the naming module spells them
PROJECT_DIR_ENV = "TETON_PROJECT_DIR"   # set by the language host (teton.deploy.langhost): where Pulumi.yaml is
CHECK_TIMEOUT_MAX = 3600.0
MAX_WAVE_MAX = 1_000_000


class SettingError(TetonError):
    """A stack setting that does not parse or is out of range: its message is one line naming the setting."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"config teton:{key}: {problem}")
        self.key = key


@dataclass(frozen=True)
class StackSettings:
    """Every stack setting the program and the provider read, parsed."""

    spec: Path                       # absolute
    build: Path | None               # absolute; None: build/<cluster> in the project folder
    mode: Mode = "twin"
    twin: str | None = None
    policy: RolloutPolicy = RolloutPolicy()
    check_timeout: float = 30.0
    adopt: bool = False
    secrets: tuple[str, ...] = ()    # the names of the secrets the stack holds (never their values)


def project_folder(root_directory: str | None, cwd: Path) -> Path:
    """Where Pulumi.yaml is: the engine's root directory if it told the program, else the first folder from `cwd`
    upwards holding a Pulumi.yaml, else `cwd`."""
    if root_directory:
        return Path(root_directory).resolve()
    for folder in (cwd.resolve(), *cwd.resolve().parents):
        if (folder / "Pulumi.yaml").is_file():
            return folder
    return cwd.resolve()


def _text(key: str, raw: Any) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise SettingError(key, f"expected text, got {type(raw).__name__}")
    return raw


def path_setting(key: str, raw: Any, project: Path) -> Path | None:
    """A path, relative to the project folder unless absolute."""
    text = _text(key, raw)
    if text is None or text == "":
        return None
    if "\0" in text or "\n" in text:
        raise SettingError(key, "a path holds no NUL or newline")
    return (project / Path(text).expanduser()).resolve()


def number_setting(key: str, raw: Any, default: float, low: float, high: float, *, low_open: bool = True,
                   high_open: bool = False) -> float:
    """A finite number in (low, high] (or the bounds as asked); `raw` text or a number."""
    if raw is None or raw == "":
        return default
    try:
        value = float(raw) if not isinstance(raw, bool) else math.nan
    except (TypeError, ValueError):
        raise SettingError(key, f"{str(raw)[:40]!r} is not a number") from None
    below = value <= low if low_open else value < low
    above = value >= high if high_open else value > high
    if not math.isfinite(value) or below or above:
        raise SettingError(key, f"{str(raw)[:40]!r} is out of range: use a number in {'(' if low_open else '['}"
                                f"{low:g}, {high:g}{')' if high_open else ']'}")
    return value


def int_setting(key: str, raw: Any, default: int, low: int, high: int) -> int:
    """A whole number in [low, high]: `2.5`, `1e309`, `abc` are refused."""
    if raw is None or raw == "":
        return default
    text = str(raw).strip()
    if isinstance(raw, bool) or not re.fullmatch(r"[+-]?[0-9]{1,12}", text):
        raise SettingError(key, f"{text[:40]!r} is not a whole number")
    value = int(text)
    if not low <= value <= high:
        raise SettingError(key, f"{value} is out of range: use a whole number in [{low}, {high}]")
    return value


def bool_setting(key: str, raw: Any, default: bool = False) -> bool:
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text not in ("true", "false"):
        raise SettingError(key, f"{str(raw)[:40]!r} is not true or false")
    return text == "true"


def check_timeout(raw: Any) -> float:
    """`teton:checkTimeout`: seconds a device may take to become healthy after a push."""
    return number_setting("checkTimeout", raw, 30.0, 0.0, CHECK_TIMEOUT_MAX)


def adopt(raw: Any) -> bool:
    """`teton:adopt`: record the build as deployed, touching no device."""
    return bool_setting("adopt", raw)


def _json(key: str, raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return _NOT_JSON


_NOT_JSON = object()


def canary(raw: Any) -> tuple[str, ...] | None:
    """`teton:canary`: a list of switch names (a YAML or JSON list); a bare name is refused, not read letter by
    letter."""
    if raw is None or raw == "":
        return None
    value = _json("canary", raw)
    if not isinstance(value, list):
        shown = raw if isinstance(raw, str) else type(raw).__name__
        raise SettingError("canary", f"{str(shown)[:60]!r} is not a list of switch names: set it as a list, e.g. "
                                     "pulumi config set --path 'teton:canary[0]' z01-r001-rtsw")
    names = []
    for i, name in enumerate(value):
        if not isinstance(name, str) or not DEVICE_NAME.fullmatch(name):
            raise SettingError("canary", f"item {i} ({str(name)[:40]!r}) is not a switch name")
        names.append(name)
    if len(set(names)) != len(names):
        raise SettingError("canary", "names a switch twice")
    return tuple(names)


def secret_names(raw: Any) -> tuple[str, ...]:
    """`teton:secrets`: an object {name: value}; only the names are kept here (values stay with the provider)."""
    if raw is None or raw == "":
        return ()
    value = _json("secrets", raw)
    if not isinstance(value, dict):
        raise SettingError("secrets", "must be an object {name: value} (pulumi config set --secret --path "
                                      "'teton:secrets.<name>' ...)")
    for name, v in value.items():
        if not re.fullmatch(r"[A-Za-z0-9_]{1,64}", str(name)):
            raise SettingError("secrets", f"{str(name)[:40]!r} is not a secret name (letters, digits, _)")
        if isinstance(v, dict | list) or v is None:
            raise SettingError("secrets", f"{name}: the value must be text")
    return tuple(sorted(str(n) for n in value))


def deploy_mode(mode: Any, target: Any) -> Mode:
    """`teton:mode`, `twin` (the default) or `live`; `teton:target` is its older spelling, still read (both set: they
    must agree)."""
    key, raw = ("mode", mode) if mode is not None else ("target", target)
    text = _text(key, raw) or "twin"
    if text not in ("twin", "live"):
        raise SettingError(key, f"{text[:40]!r}: use 'twin' or 'live'")
    if mode is not None and target is not None and _text("target", target) != text:
        raise SettingError("target", f"{str(target)[:40]!r} disagrees with teton:mode {text!r}: set only teton:mode")
    return "live" if text == "live" else "twin"


def secret_values(raw: Any) -> dict[str, str]:
    """`teton:secrets` as {name: value}, checked as `secret_names` checks it (values as text, as the provider reads
    them): for the program's check of every secret the build references before anything is registered."""
    secret_names(raw)
    value = _json("secrets", raw) if raw not in (None, "") else {}
    return {str(k): str(v) for k, v in value.items()}


def parse(get: Callable[[str], Any], project: Path) -> StackSettings:
    """Every setting from `get` (the raw value of `teton:<key>`, or None), checked; raises SettingError on the first
    bad one."""
    spec = path_setting("spec", get("spec"), project)
    if spec is None:
        raise SettingError("spec", "missing: pulumi config set teton:spec <spec file>")
    mode = deploy_mode(get("mode"), get("target"))
    twin = _text("twin", get("twin")) or None
    if twin is not None and not TWIN_NAME.fullmatch(twin):
        raise SettingError("twin", f"{twin[:40]!r} is not a twin name (1 to 16 letters, digits, _)")
    fraction = number_setting("rolloutFraction", get("rolloutFraction"), 0.25, 0.0, 1.0, high_open=True)
    max_wave = int_setting("rolloutMaxWave", get("rolloutMaxWave"), 64, 1, MAX_WAVE_MAX)
    policy = RolloutPolicy(fraction=fraction, max_wave=max_wave, canary=canary(get("canary")))
    path_setting("playbooks", get("playbooks"), project)
    int_setting("eapiPort", get("eapiPort"), 443, 1, 65535)
    return StackSettings(spec=spec, build=path_setting("build", get("build"), project),
                         mode=mode, twin=twin, policy=policy,
                         check_timeout=check_timeout(get("checkTimeout")), adopt=adopt(get("adopt")),
                         secrets=secret_names(get("secrets")))
