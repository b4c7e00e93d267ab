"""Headless Chromium for the tests that check what a page draws (skipped without it)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

DRAWN = 'data-drawn="1"'


def chromium() -> str | None:
    """The Chromium executable on PATH, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which(
        "google-chrome")


def dump_dom(page: Path, profile: Path, height: int, attempts: int = 3
             ) -> subprocess.CompletedProcess:
    """``page`` loaded in headless Chromium (5 s of virtual time for its scripts, a window
    ``height`` pixels tall so every chart is laid out), the DOM after its scripts on stdout
    and the browser's log on stderr.

    Headless Chromium on a busy machine sometimes dumps the page before any script has run
    (0 charts drawn; the same page passes alone; seen in CI on both drawing tests). So a
    dump in which no chart at all was drawn is retried, in a fresh profile, up to
    ``attempts`` times. A chart that fails to draw still fails: any dump with one drawn
    chart is returned as it is, and the caller counts them. The returned stderr holds every
    attempt's log, so a console error in a discarded attempt still reaches the caller."""
    exe = chromium()
    assert exe is not None, "needs a headless Chromium (apt-get install chromium)"
    logs = []
    for attempt in range(attempts):
        run = subprocess.run(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
             f"--window-size=1280,{height}", f"--user-data-dir={profile}-{attempt}",
             "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
        logs.append(run.stderr)
        if DRAWN in run.stdout:
            break
    run.stderr = "".join(logs)
    return run
