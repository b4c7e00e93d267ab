"""Wide tables: time the default suite and ``--suite fast`` on a generated table with many
columns; print per-check wall time (``duration_s`` from report.json), total wall time and peak
RSS of the whole ``auditor run`` process.

    python bench/wide.py                                  # 10k x 1,500 and 100k x 1,000
    python bench/wide.py --shapes 10000x1500 --suites default
    python bench/wide.py --shapes 10000x1500 --save bench/results/wide-$(date -u +%F).txt
    python bench/wide.py --shapes 10000x1500 --cpu separability.label_probe   # CPU-s, in process
    python bench/wide.py --shapes 50x10000f --suites default   # wide and short, all floats

A shape is ``<rows>x<cols>`` (mixed types) or ``<rows>x<cols>f`` (floats only: the wide,
short tables of gene expression or spectra, e.g. ``50x10000f``, 10,000 float columns of 50
rows per split). Data (seeded, written once per shape to ``/tmp/auditor-wide/<shape>/``):
train has ``rows`` rows, test ``rows // 4`` (``rows`` for a float-only shape). Columns:
``row_id`` (id), ``label`` (binary, 30% positive), and ``cols`` features: 70% numeric
(normal, log-normal, integer counts; 3% nulls in every tenth), 20% low-cardinality strings
(3-12 levels), 10% high-cardinality strings (500-5,000 levels); a float-only shape has only
the numeric ones (integer counts stored as floats). Planted problems and the check expected
to flag them:

- ``leak_num``: the label plus small noise (``leakage.single_feature_auc``,
  ``leakage.feature_label_correlation``);
- ``drift_num``: shifted by +1 sd in test (``drift.features``, ``separability.adversarial``);
- 1% of test rows (at least one) are exact copies of train rows (``leakage.duplicates``).

Each run is ``python -m auditor run audit.yaml --suite S --out DIR -q`` in a subprocess under
``/usr/bin/time -v`` (peak RSS = "Maximum resident set size"; without it
``getrusage(RUSAGE_CHILDREN)``). Wall time is the whole process: interpreter start, imports,
loading, checks, report.json + report.html; CPU is user + system seconds of that process
(the figure to compare on a busy machine, where wall time depends on the other load).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PLANTED = {
    "leak": ("leak_num", {"leakage.single_feature_auc", "leakage.feature_label_correlation"}),
    "drift": ("drift_num", {"drift.features"}),
    "dup": ("", {"leakage.duplicates"}),
}


def parse_shape(shape: str) -> tuple[int, int, bool]:
    """``"10000x1500"`` -> (10000, 1500, False); ``"50x10000f"`` -> (50, 10000, True)."""
    m = re.fullmatch(r"(\d+)x(\d+)(f?)", shape.strip().lower())
    if not m:
        raise SystemExit(f"shape must be <rows>x<cols> or <rows>x<cols>f; got {shape!r}")
    return int(m.group(1)), int(m.group(2)), bool(m.group(3))


def n_test_rows(rows: int, float_only: bool) -> int:
    return rows if float_only else rows // 4


def describe(rows: int, cols: int, float_only: bool) -> str:
    return (f"{rows:,} train + {n_test_rows(rows, float_only):,} test rows x {cols:,} "
            f"{'float ' if float_only else ''}columns")


def generate(rows: int, cols: int, out: Path, seed: int = 0, float_only: bool = False) -> Path:
    """Write train/test Parquet + audit.yaml for one shape (once); return the audit.yaml."""
    import numpy as np
    import polars as pl

    done = out / ".complete"
    if done.exists():
        return out / "audit.yaml"
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    n_test = n_test_rows(rows, float_only)
    n = rows + n_test
    label = (rng.random(n) < 0.3).astype(np.int8)
    data: dict[str, object] = {"row_id": np.arange(n, dtype=np.int64), "label": label}
    n_num = cols - 2 if float_only else int(cols * 0.7) - 2
    n_low = 0 if float_only else int(cols * 0.2)
    n_high = cols - 2 - n_num - n_low
    for j in range(n_num):
        kind = j % 3
        if kind == 0:
            v = rng.normal(rng.uniform(-5, 5), rng.uniform(0.5, 3), n)
        elif kind == 1:
            v = rng.lognormal(0.0, 1.0, n)
        else:
            v = rng.poisson(rng.uniform(1, 20), n).astype(np.float64)
        s = pl.Series(f"num_{j:04d}", v)
        if j % 10 == 0:
            s = s.scatter(np.flatnonzero(rng.random(n) < 0.03), None)
        data[s.name] = s
    for j in range(n_low):
        k = 3 + j % 10
        levels = np.array([f"l{i}" for i in range(k)])
        data[f"cat_low_{j:04d}"] = levels[rng.integers(0, k, n)]
    for j in range(n_high):
        k = 500 + (j * 37) % 4500
        data[f"cat_high_{j:04d}"] = np.char.add("h", rng.integers(0, k, n).astype(str))
    data["leak_num"] = label + rng.normal(0, 0.05, n)
    drift = rng.normal(0, 1, n)
    drift[rows:] += 1.0
    data["drift_num"] = drift
    df = pl.DataFrame(data)
    train, test = df.head(rows), df.tail(n_test)
    # 1% of test rows: exact copies of train rows (row_id kept: ids are ignored by duplicates)
    k = max(1, n_test // 100)
    src = rng.choice(rows, k, replace=False)
    copies = train[src].with_columns(pl.Series("row_id", test["row_id"][:k].to_numpy()))
    # keep test's own drift on the copies' drift column so the copy is exact and drift stays
    test = pl.concat([copies, test.slice(k)])
    train.write_parquet(out / "train.parquet")
    test.write_parquet(out / "test.parquet")
    (out / "audit.yaml").write_text(
        "datasets: {train: train.parquet, test: test.parquet}\n"
        "columns: {label: label, ids: [row_id]}\nseed: 0\n")
    done.write_text("")
    return out / "audit.yaml"


def run_one(cfg: Path, suite: str, timeout: float) -> dict:
    out = Path(tempfile.mkdtemp(prefix="wide-report-"))
    cmd = [sys.executable, "-m", "auditor", "run", str(cfg), "--suite", suite,
           "--out", str(out), "-q"]
    timer = "/usr/bin/time" if Path("/usr/bin/time").exists() else shutil.which("time")
    if timer:
        cmd = [timer, "-v", *cmd]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    # own process group: on a timeout the auditor under /usr/bin/time is killed too
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        shutil.rmtree(out, ignore_errors=True)
        return {"suite": suite, "wall_s": None, "load": os.getloadavg()[0],
                "status": f"timeout > {timeout:.0f} s"}
    wall = time.perf_counter() - t
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    peak = int(m.group(1)) / 1024 if m else max(
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)",
                                          stderr)) or None
    rep_path = out / "report.json"
    if not rep_path.exists():
        return {"suite": suite, "wall_s": wall, "peak_mb": peak,
                "status": f"exit {proc.returncode}: {stderr[-800:]}"}
    rep = json.loads(rep_path.read_text())
    shutil.rmtree(out, ignore_errors=True)
    flags = sorted({f"{c['id']}:{f.get('subject')}" for c in rep["checks"]
                    for f in c.get("findings") or [] if f.get("severity") in ("warn", "fail")})
    planted = {}
    for short, (subject, checks) in PLANTED.items():
        planted[short] = any(
            c["id"] in checks and f.get("severity") in ("warn", "fail")
            and (f.get("subject") == subject or (subject and subject in str(f.get("subject"))))
            for c in rep["checks"] for f in c.get("findings") or [])
    return {"suite": suite, "wall_s": wall, "cpu_s": cpu, "peak_mb": peak,
            "load": os.getloadavg()[0], "status": rep["status"],
            "exit": proc.returncode, "audit_s": rep.get("duration_s"),
            "checks": [{"id": c["id"], "status": c["status"], "s": c.get("duration_s") or 0.0}
                       for c in rep["checks"]],
            "planted": planted, "flags": flags}


def cpu_checks(cfg: Path, ids: list[str]) -> dict:
    """Run the default suite's ``ids`` in this process on the table of ``cfg`` and return,
    per check, its process CPU seconds (user + system of every thread, ``time.process_time``:
    less noisy than wall time on a shared machine), wall seconds, status and findings."""
    import tempfile as tf

    import yaml

    sys.path.insert(0, str(ROOT))
    from auditor.api import load_checks
    from auditor.core.allocator import tune_for_batch
    from auditor.core.config import parse_config
    from auditor.core.suites import read_suite
    from auditor.loading.data import open_splits
    from auditor.runner import order_checks, run_check

    tune_for_batch()  # as the auditor command does
    raw = yaml.safe_load(cfg.read_text())
    suite = read_suite("default")
    with tf.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
        yaml.safe_dump({"checks": {c: suite[c] for c in ids}}, fh, sort_keys=False)
    raw["suite"] = fh.name
    raw["datasets"] = {k: str(cfg.parent / v) for k, v in raw["datasets"].items()}
    config = parse_config(raw, base_dir=cfg.parent, source="bench")
    built = load_checks(config.suite, config.thresholds, notes=[])
    os.unlink(fh.name)
    data = open_splits(config, None)
    out = {}
    for check in order_checks(built):
        c0, w0 = time.process_time(), time.perf_counter()
        res = run_check(check, data)
        out[check.id] = {"cpu_s": round(time.process_time() - c0, 2),
                         "wall_s": round(time.perf_counter() - w0, 2),
                         "load": round(os.getloadavg()[0], 1), "status": str(res.status),
                         "findings": [{"severity": str(f.severity), "subject": f.subject,
                                       "value": f.value} for f in res.findings]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="+", default=["10000x1500", "100000x1000"],
                    help="train rows x feature columns (test = rows // 4), e.g. 10000x1500; "
                         "a trailing f: floats only, test = rows (e.g. 50x10000f)")
    ap.add_argument("--suites", nargs="+", default=["default", "fast"])
    ap.add_argument("--data", type=Path, default=Path("/tmp/auditor-wide"))
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--save", type=Path, help="also write the printed table to this file")
    ap.add_argument("--json", type=Path, help="write the raw results as JSON")
    ap.add_argument("--cpu", nargs="+", metavar="CHECK",
                    help="instead: run these checks of the default suite in this process and "
                         "print each one's CPU seconds (user+sys, all threads) and wall time")
    args = ap.parse_args()
    lines: list[str] = []
    if args.cpu:
        for shape in args.shapes:
            rows, cols, floats = parse_shape(shape)
            res = cpu_checks(generate(rows, cols, args.data / shape.lower(), float_only=floats),
                             args.cpu)
            print(f"== {describe(rows, cols, floats)}, in process")
            for cid, r in res.items():
                print(f"  {cid:36} cpu {r['cpu_s']:7.2f} s  wall {r['wall_s']:7.2f} s  "
                      f"load {r['load']:4.1f}  {r['status']}")
            if args.json:
                args.json.write_text(json.dumps(res, indent=1, default=str))
        return

    def say(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    results = []
    for shape in args.shapes:
        rows, cols, floats = parse_shape(shape)
        cfg = generate(rows, cols, args.data / shape.lower(), float_only=floats)
        for suite in args.suites:
            r = run_one(cfg, suite, args.timeout)
            r["shape"] = shape
            results.append(r)
            say(f"== {describe(rows, cols, floats)}, --suite {suite}")
            for c in sorted(r.get("checks", []), key=lambda c: -c["s"]):
                say(f"  {c['id']:36} {c['s']:8.2f} s  {c['status']}")
            wall = f"{r['wall_s']:.1f} s" if r.get("wall_s") is not None else "n/a"
            say(f"  {'audit (report duration_s)':36} {r.get('audit_s') or float('nan'):8.2f} s")
            cpu = f"{r['cpu_s']:.1f} s" if r.get("cpu_s") else "n/a"
            say(f"  {'process wall':36} {wall:>10}   CPU (user+sys) {cpu}   peak RSS "
                f"{r.get('peak_mb', 0):,.0f} MB   status {r['status']}   load average "
                f"{r.get('load', os.getloadavg()[0]):.1f}")
            if "planted" in r:
                say("  planted flagged: " + ", ".join(
                    f"{k}={'yes' if v else 'NO'}" for k, v in r["planted"].items()))
                say(f"  warn/fail findings ({len(r['flags'])}): " + ", ".join(r["flags"][:30])
                    + (" ..." if len(r["flags"]) > 30 else ""))
            say()
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text("$ " + " ".join(["python", "bench/wide.py", *sys.argv[1:]])
                             + "\n\n" + "\n".join(lines) + "\n")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
