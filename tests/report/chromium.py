"""Debian's Chromium, headless, on a local page: a screenshot, or the DOM after the page has loaded and how long that
took (browser start included).  Root runs it without its sandbox (Chromium refuses to start as root otherwise)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _args(profile: str) -> list[str]:
    assert CHROMIUM is not None
    args = [CHROMIUM, "--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
            f"--user-data-dir={profile}"]
    return args + (["--no-sandbox"] if os.geteuid() == 0 else [])


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 1400, timeout: float = 120) -> None:
    with tempfile.TemporaryDirectory(prefix="tt-chromium-") as profile:
        subprocess.run([*_args(profile), f"--window-size={width},{height}", f"--screenshot={png}",
                        page.resolve().as_uri()], check=True, capture_output=True, timeout=timeout)


def dump_dom(page: Path, timeout: float = 120) -> tuple[str, float]:
    """(the DOM once the page has loaded, the seconds from starting Chromium to having it)."""
    with tempfile.TemporaryDirectory(prefix="tt-chromium-") as profile:
        t0 = time.perf_counter()
        res = subprocess.run([*_args(profile), "--dump-dom", page.resolve().as_uri()], check=True,
                             capture_output=True, text=True, timeout=timeout)
        return res.stdout, time.perf_counter() - t0
