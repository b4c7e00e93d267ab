"""Time the default suite (or some checks) on generated data; print per-check wall time,
total wall time and peak RSS as a table.

    python bench/run.py --sizes 100000 1000000            # full default suite
    python bench/run.py --sizes 1000000 --no-models       # without separability probes
    python bench/run.py --sizes 1000000 --checks drift.features drift.label
    python bench/run.py --sizes 1000000 --suite fast --save bench/results/run-1m-fast.txt

Each size runs in a fresh subprocess (so peak RSS is per size), wrapped in `/usr/bin/time -v`
when it is installed (Debian package `time`); the child also reports its own
`resource.getrusage` peak. Data come from bench/make_data.py (generated on first use).
On a shared machine compare the CPU seconds (user + system of the whole child process, from
`/usr/bin/time -v`, else `getrusage(RUSAGE_CHILDREN)`): wall times measure the neighbours too.
The load average is printed with each size.

``--like-for-like`` times the redesign of the engine boundary against a normal run of the code
before it (78edb5d): it switches off the largest parts of the work the precision issue added
after that commit, which the code before the redesign did not do at all (smaller ones stay
on: the split design's inference, ``natural_repeats``) -- the split design's null comparisons of
``drift.features`` and ``drift.label`` (time backtests, entity re-splits), and in
``leakage.duplicates`` the comparison without the time column and the measured-values chance
baseline. Its findings differ from a normal run's; use it only for that comparison.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def like_for_like() -> None:
    """Switch off the work added after the redesign's baseline (module docstring)."""
    import dataclasses

    from auditor.detectors import copy_keys, drift, duplicates

    drift.FeatureDrift._null = lambda self, *a, **k: {}  # type: ignore[method-assign]
    drift.LabelDrift._null = lambda self, *a, **k: {}  # type: ignore[method-assign]
    copy_keys.KeyedRows.measured = lambda self: None  # type: ignore[method-assign]
    counted = duplicates.row_copies
    duplicates.row_copies = lambda engine, roles, spec: counted(  # type: ignore[assignment]
        engine, roles, dataclasses.replace(spec, without=None))


def child(rows: int, checks: list[str] | None, no_models: bool, data_dir: Path,
          suite_name: str = "default", like: bool = False) -> None:
    """Run one audit in this process and print a JSON line with timings."""
    sys.path.insert(0, str(HERE))
    if like:
        like_for_like()
    from make_data import generate

    paths = generate(rows, data_dir)
    from auditor.core.allocator import tune_for_batch
    from auditor.api import run_audit

    tune_for_batch()  # as the auditor command does
    from auditor.core.config import parse_config
    from auditor.core.suites import read_suite

    suite = read_suite(suite_name)
    ids = [c for c in suite if (not checks or c in checks)
           and not (no_models and c.startswith("separability."))]
    suite_file = data_dir / f"bench-suite-{os.getpid()}.yaml"
    import yaml
    suite_file.write_text(yaml.safe_dump({"checks": {c: suite[c] for c in ids}}, sort_keys=False))
    cfg = parse_config({"datasets": {k: str(v) for k, v in paths.items()},
                        "columns": {"label": "label", "time": "event_ts", "groups": ["user_id"],
                                    "ids": ["row_id"], "text": ["notes"]},
                        "suite": str(suite_file)}, base_dir=data_dir, source="bench")
    t0 = time.perf_counter()
    report = run_audit(cfg)
    wall = time.perf_counter() - t0
    suite_file.unlink()
    t1 = time.perf_counter()
    report.to_html()
    render = time.perf_counter() - t1
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("BENCH " + json.dumps({
        "rows": rows, "wall_s": wall, "render_s": render, "peak_rss_mb": peak_kb / 1024,
        "checks": [{"id": c.id, "status": c.status, "s": c.duration_s,
                    "summary": c.summary[:90]} for c in report.checks]}))


def run_size(rows: int, args: argparse.Namespace) -> dict:
    """One size in a fresh child process: its JSON line plus process wall, CPU, peak RSS."""
    cmd = [sys.executable, __file__, "--child", str(rows), "--data", str(args.data),
           "--suite", getattr(args, "suite", "default")]
    if args.checks:
        cmd += ["--checks", *args.checks]
    if args.no_models:
        cmd.append("--no-models")
    if args.like_for_like:
        cmd.append("--like-for-like")
    timer = "/usr/bin/time" if Path("/usr/bin/time").exists() else shutil.which("time")
    if timer:
        cmd = [timer, "-v", *cmd]
    load0 = os.getloadavg()[0]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    outer = time.perf_counter() - t
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH ")), None)
    if line is None:
        sys.exit(f"benchmark child failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    res = json.loads(line[6:])
    res["process_s"] = outer
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    res["time_v_peak_mb"] = int(m.group(1)) / 1024 if m else None
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)",
                                          proc.stderr))
    res["process_cpu_s"] = cpu or (ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime)
    res["loadavg"] = [round(load0, 1), round(os.getloadavg()[0], 1)]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description="auditor benchmark")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--checks", nargs="+")
    ap.add_argument("--no-models", action="store_true", help="skip separability.* checks")
    ap.add_argument("--suite", default="default", help="built-in suite name (default, fast)")
    ap.add_argument("--save", type=Path, help="also write the printed table to this file")
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--like-for-like", action="store_true",
                    help="switch off the work added after the redesign's baseline "
                         "(module docstring): for timing the redesign alone")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    # absolute: the config resolves relative dataset and suite paths against base_dir (this
    # directory) a second time (bench/data/bench/data/...)
    args.data = args.data.resolve()
    if args.child:
        child(args.child, args.checks, args.no_models, args.data, args.suite,
              args.like_for_like)
        return
    results = [run_size(n, args) for n in args.sizes]
    lines: list[str] = []

    def print(text: str = "") -> None:  # noqa: A001 - the table goes to stdout and --save
        lines.append(text)
        sys.stdout.write(text + "\n")

    ids = [c["id"] for c in results[0]["checks"]]
    what = (f"suite {args.suite}" + (" without separability.*" if args.no_models else "")
            + (", like for like (later work off)" if args.like_for_like else "")
            + (f", checks {' '.join(args.checks)}" if args.checks else ""))
    print(f"auditor bench/run.py, {what}, "
          f"measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
          f" on {os.cpu_count()} cores; per-check figures are wall seconds")
    head = f"{'check':32}" + "".join(f"{r['rows']:>14,}" for r in results)
    print(head)
    print("-" * len(head))
    for cid in ids:
        row = f"{cid:32}"
        for r in results:
            c = next((c for c in r["checks"] if c["id"] == cid), None)
            row += f"{(c['s'] if c else float('nan')):>13.2f}s"
        print(row)
    print("-" * len(head))
    for label, key, unit in (("audit wall (load + checks)", "wall_s", "s"),
                             ("html render", "render_s", "s"),
                             ("process wall (incl. startup)", "process_s", "s"),
                             ("process CPU (user + sys)", "process_cpu_s", "s"),
                             ("peak RSS (getrusage)", "peak_rss_mb", " MB"),
                             ("peak RSS (/usr/bin/time -v)", "time_v_peak_mb", " MB")):
        vals = "".join(f"{r[key]:>13.1f}{unit}" if r.get(key) is not None else f"{'n/a':>14}"
                       for r in results)
        print(f"{label:32}{vals}")
    print(f"{'load average (before, after)':32}" + "".join(
        f"{r['loadavg'][0]:>8.1f}/{r['loadavg'][1]:<5.1f}" for r in results))
    print()
    for r in results:
        print(f"status at {r['rows']:,} rows: " + ", ".join(
            f"{c['id']}={c['status']}" for c in r["checks"]))
    if args.save:
        args.save.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
