"""Import the heavy libraries of the later steps in a background thread while the data loads.

scikit-learn (with scipy.stats and pandas) takes ~1.2 s to import, torch ~1-2 s and matplotlib
~0.7 s: at 100k rows that is a third of an audit's wall time. Loading Parquet and the
statistics run in polars and numpy with the GIL released, so the imports overlap with them
almost for free.

Only the command line starts it (``start``), with the modules its suite will need. Code that
uses one of those modules calls ``wait(name)`` before importing it, so the main thread never
imports a module the background thread is in the middle of importing (no lock-order cycle
between the two threads). ``wait`` returns at once for a module nobody is pre-importing.
"""
from __future__ import annotations

import importlib
import threading

_ready: dict[str, threading.Event] = {}


def start(modules: list[str]) -> None:
    """Import ``modules`` in order on a daemon thread; failures are left for the real import
    to report."""
    todo = [m for m in modules if m not in _ready]
    if not todo:
        return
    for m in todo:
        _ready[m] = threading.Event()

    def work() -> None:
        for m in todo:
            try:
                importlib.import_module(m)
            except BaseException:  # noqa: BLE001 - the real import reports it
                pass
            finally:
                _ready[m].set()

    threading.Thread(target=work, name="auditor-prewarm", daemon=True).start()


def wait(*modules: str) -> None:
    """Block until the background thread is done with ``modules`` (no-op for others)."""
    for m in modules:
        event = _ready.get(m)
        if event is not None:
            event.wait()


SKLEARN = ["sklearn.ensemble", "sklearn.metrics", "sklearn.model_selection"]
TORCH = ["torch"]
CHARTS = ["matplotlib.figure", "matplotlib.backends.backend_svg", "matplotlib.dates"]


def for_checks(check_ids: list[str]) -> list[str]:
    """The modules a suite of ``check_ids`` will import, in the order the runner needs them
    (model probes run last, the report is rendered after them)."""
    out: list[str] = []
    if "separability.adversarial" in check_ids:
        out += SKLEARN
    if {"separability.label_probe", "separability.memorisation"} & set(check_ids):
        out += TORCH
    return out + CHARTS
