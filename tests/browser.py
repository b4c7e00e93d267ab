"""Headless Chromium for the tests that check what a page draws (skipped without it)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def chromium() -> str | None:
    """The Chromium executable on PATH, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which(
        "google-chrome")


def dump_dom(page: Path, profile: Path, height: int) -> subprocess.CompletedProcess:
    """``page`` loaded in headless Chromium (5 s of virtual time for its scripts, a window
    ``height`` pixels tall so every chart is laid out), the DOM after its scripts on stdout
    and the browser's log on stderr."""
    exe = chromium()
    assert exe is not None, "needs a headless Chromium (apt-get install chromium)"
    return subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
         f"--window-size=1280,{height}", f"--user-data-dir={profile}",
         "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
