"""Per-check CPU time on bench data, and a before/after comparison of the findings.

    .venv/bin/python bench/cpu_checks.py --rows 1000000 --out before.json
    ... change the code ...
    .venv/bin/python bench/cpu_checks.py --rows 1000000 --out after.json --compare before.json
    .venv/bin/python bench/cpu_checks.py --rows 1000000 --checks drift.features \\
        --profile drift.features

On a shared machine wall time says more about the neighbours than about the code: this runs
the default suite (or ``--checks``) the way ``bench/run.py`` configures it, in one process,
and records for each check the process CPU time (user + system of every thread,
``time.process_time``) beside its wall time and the load average. ``--compare`` prints both
runs side by side and whether every check kept its status and its findings (severity,
subject, value and message, in order): a speed-up must not change a verdict.
``--profile ID`` writes a cProfile of that check (main thread) to ``/tmp/cpu_checks-ID.txt``.
Memory: each check's line also shows the process's peak RSS after it (``getrusage``; it only
grows) and how much that check raised it, so the check that sets the run's peak stands out.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def measure(rows: int, checks: list[str] | None, profile: list[str], data_dir: Path) -> dict:
    import yaml
    from make_data import generate

    from auditor.core.allocator import tune_for_batch
    from auditor.api import load_checks
    from auditor.core.config import parse_config
    from auditor.loading.data import open_splits
    from auditor.runner import order_checks, run_check
    from auditor.core.suites import read_suite

    tune_for_batch()  # as the auditor command does
    paths = generate(rows, data_dir)
    suite = read_suite("default")
    ids = [c for c in suite if not checks or c in checks]
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
        yaml.safe_dump({"checks": {c: suite[c] for c in ids}}, fh, sort_keys=False)
    cfg = parse_config({"datasets": {k: str(v) for k, v in paths.items()},
                        "columns": {"label": "label", "time": "event_ts", "groups": ["user_id"],
                                    "ids": ["row_id"], "text": ["notes"]},
                        "suite": fh.name, "seed": 0}, base_dir=data_dir, source="bench")
    c0, w0 = time.process_time(), time.perf_counter()
    built = load_checks(cfg.suite, cfg.thresholds, notes=[])
    data = open_splits(cfg, None)
    os.unlink(fh.name)
    out = {"rows": rows, "load": {"cpu_s": time.process_time() - c0,
                                  "wall_s": time.perf_counter() - w0,
                                  "loadavg": os.getloadavg()[0]}, "checks": []}
    print(f"{'load':36} {'':10} cpu {out['load']['cpu_s']:7.2f} s  wall "
          f"{out['load']['wall_s']:7.2f} s", flush=True)
    out["load"]["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for check in order_checks(built):
        peak0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        prof = cProfile.Profile() if check.id in profile else None
        c0, w0 = time.process_time(), time.perf_counter()
        if prof:
            prof.enable()
        res = run_check(check, data)
        if prof:
            prof.disable()
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if prof:
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(
                int(os.environ.get("PROFILE_LINES", "50")))
            Path(f"/tmp/cpu_checks-{check.id}.txt").write_text(text.getvalue())
        out["checks"].append({
            "id": check.id, "status": str(res.status), "cpu_s": round(cpu, 3),
            "wall_s": round(wall, 3), "loadavg": round(os.getloadavg()[0], 1),
            "peak_mb": round(peak), "peak_raised_mb": round(peak - peak0),
            "findings": [{"severity": str(f.severity), "subject": f.subject, "value": f.value,
                          "message": f.message} for f in res.findings]})
        print(f"{check.id:36} {str(res.status):10} cpu {cpu:7.2f} s  wall {wall:7.2f} s  "
              f"load {os.getloadavg()[0]:4.1f}  peak {peak:7.0f} MB (+{peak - peak0:.0f})",
              flush=True)
    return out


def compare(before: dict, after: dict) -> bool:
    """Print both runs per check; True when every check kept status and findings."""
    by_id = {c["id"]: c for c in after["checks"]}
    same_all = True
    print(f"\n{'check':36} {'status':>10} {'cpu before':>11} {'cpu after':>10} "
          f"{'peak MB before, after':>14}  findings")
    print(f"{'load':36} {'':>10} {before['load']['cpu_s']:>10.2f}s "
          f"{after['load']['cpu_s']:>9.2f}s")
    totals = [before["load"]["cpu_s"], after["load"]["cpu_s"]]
    for c in before["checks"]:
        d = by_id.get(c["id"])
        if d is None:
            print(f"{c['id']:36} missing after")
            same_all = False
            continue
        same = c["status"] == d["status"] and c["findings"] == d["findings"]
        same_all &= same
        totals[0] += c["cpu_s"]
        totals[1] += d["cpu_s"]
        peaks = "".join(f" {x['peak_mb']:>6}" if "peak_mb" in x else f" {'':>6}" for x in (c, d))
        print(f"{c['id']:36} {d['status']:>10} {c['cpu_s']:>10.2f}s {d['cpu_s']:>9.2f}s "
              f"{peaks}  {'same' if same else 'CHANGED'} ({len(c['findings'])})")
    print(f"{'total':36} {'':>10} {totals[0]:>10.2f}s {totals[1]:>9.2f}s")
    print("every status and finding unchanged" if same_all else "SOME FINDINGS CHANGED")
    return same_all


def main() -> None:
    ap = argparse.ArgumentParser(description="per-check CPU time on bench data")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--checks", nargs="+")
    ap.add_argument("--profile", nargs="+", default=[], metavar="ID")
    ap.add_argument("--out", type=Path, help="write the measurements as JSON")
    ap.add_argument("--compare", type=Path, help="an earlier --out file to compare with")
    ap.add_argument("--data", type=Path, default=HERE / "data")
    args = ap.parse_args()
    # through JSON, as the file compared with was (tuples become lists, values str'd alike)
    res = json.loads(json.dumps(measure(args.rows, args.checks, args.profile, args.data),
                                default=str))
    if args.out:
        args.out.write_text(json.dumps(res, indent=1, default=str) + "\n")
    if args.compare:
        sys.exit(0 if compare(json.loads(args.compare.read_text()), res) else 1)


if __name__ == "__main__":
    main()
