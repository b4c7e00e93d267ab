"""Where one check spends its time: calls, wall and process CPU of named functions inside it.

    .venv/bin/python bench/check_sections.py --rows 1000000 --check drift.features
    .venv/bin/python bench/check_sections.py --rows 1000000 --check leakage.duplicates \\
        --wrap auditor.detectors.copy_keys:cells_batch

``bench/cpu_checks.py --profile`` shows the main thread only; this wraps the named functions
(``module:attribute`` or ``module:Class.method``) so that work on polars' and the check's own
threads is counted where it was asked for. Each line is the sum over the calls of a function:
wall seconds, and process CPU seconds (``time.process_time``: every thread of the process, so
a function running beside another one on a second thread is charged for both). Functions
nest: ``_categorical`` includes the ``value_counts`` it calls. Calls made (from the same
thread) while a function marked as a context (``--context``) runs are listed under its name,
so the design's null comparisons of ``drift.features`` (``_null``) show apart from the real
pairs. Use it to say which part of a check a
change made cheaper; measure speed itself with ``bench/run.py`` on an idle machine.
"""
from __future__ import annotations

import argparse
import collections
import functools
import importlib
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

# per check, the functions worth seeing (``--wrap`` adds to them)
DEFAULTS = {
    "drift.features": [
        "auditor.detectors.drift:FeatureDrift._categorical",
        "auditor.detectors.drift:compare_columns",
        "auditor.detectors.drift:FeatureDrift._binned",
        "auditor.detectors.drift:FeatureDrift._per_entity",
        "auditor.detectors.drift:FeatureDrift._calendar",
        "auditor.detectors.drift:FeatureDrift._periods",
        "auditor.detectors.drift:split_design",
        "auditor.engines.polars_engine:PolarsEngine.value_counts",
        "auditor.engines.polars_engine:PolarsEngine.subsets",
        "auditor.engines.polars_engine:prepare",
        "auditor.judging.nulls:views",
    ],
    "leakage.duplicates": [
        "auditor.detectors.copy_keys:keyed_batch",
        "auditor.detectors.copy_keys:cells_batch",
        "auditor.detectors.copy_keys:KeyedRows.__init__",
        "auditor.detectors.copy_keys:KeyedRows.chance",
        "auditor.detectors.copy_keys:KeyedRows.within_conflicts",
        "auditor.detectors.copy_keys:KeyedRows.continuous",
        "auditor.detectors.copy_keys:KeyedRows.head",
        "auditor.detectors.copy_keys:_counted",
        "auditor.detectors.copy_keys:keys_of_frame",  # the name keyed_batch calls
        "auditor.engines.polars_near:normalise_strings",
        "auditor.engines.polars_near:round_significant_frame",
        "auditor.engines.polars_engine:PolarsEngine.near_text_copies",
    ],
}
CONTEXTS = {"drift.features": ["auditor.detectors.drift:FeatureDrift._null"]}


def _resolve(target: str) -> tuple[Any, str]:
    module, _, attr = target.partition(":")
    owner: Any = importlib.import_module(module)
    *path, name = attr.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, name


def main() -> None:
    ap = argparse.ArgumentParser(description="time the named parts of one check")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--check", required=True)
    ap.add_argument("--wrap", nargs="*", default=[], metavar="MODULE:NAME")
    ap.add_argument("--context", nargs="*", default=None, metavar="MODULE:NAME")
    ap.add_argument("--data", type=Path, default=HERE / "data")
    args = ap.parse_args()
    import cpu_checks

    totals: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    lock = threading.Lock()
    context = threading.local()

    def wrap(target: str, as_context: bool) -> None:
        owner, name = _resolve(target)
        fn = getattr(owner, name)
        module, _, attr = target.partition(":")
        label = f"{module.rsplit('.', 1)[-1]}:{attr}"  # two modules' same name stay apart

        @functools.wraps(fn)
        def timed(*a: Any, **k: Any) -> Any:
            where = getattr(context, "name", "check")
            if as_context:
                context.name = label
            c0, w0 = time.process_time(), time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                with lock:
                    t = totals[(where, label)]
                    t[0] += 1
                    t[1] += time.perf_counter() - w0
                    t[2] += time.process_time() - c0
                if as_context:
                    context.name = where

        setattr(owner, name, timed)

    for target in DEFAULTS.get(args.check, []) + args.wrap:
        wrap(target, False)
    for target in CONTEXTS.get(args.check, []) if args.context is None else args.context:
        wrap(target, True)
    cpu_checks.measure(args.rows, [args.check], [], args.data)
    print(f"\n{'inside':34} {'function':54} {'calls':>5} {'wall s':>7} {'cpu s':>7}")
    rows = sorted(totals.items(), key=lambda x: (x[0][0] != "check", x[0][0], -x[1][1]))
    for (where, label), (n, wall, cpu) in rows:
        print(f"{where:34} {label:54} {int(n):5d} {wall:7.2f} {cpu:7.2f}")


if __name__ == "__main__":
    main()
