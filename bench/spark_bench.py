"""Time the auditor on both engines, on the same generated Parquet folders: wall time, CPU
seconds, peak resident memory (VmHWM) of the Python driver, of the driver JVM and of the
largest executor JVM, the load average, and both engines' statuses side by side. In local mode
(``local[N]``) driver and executors share one JVM; ``--master 'local-cluster[2,1,2048]'`` starts
two executor JVMs apart from the driver's, which is how the driver's own memory is measured.

    python bench/spark_bench.py --rows 10000000 [--master local[2]] [--driver-memory 2g]
    python bench/spark_bench.py --rows 50000000 --engines spark     # polars does not fit
    python bench/spark_bench.py --rows 1000000 --engines spark --master 'local-cluster[2,1,2048]'

Data: ``bench/make_data.py`` (train = rows, test = rows / 4, 40 columns, planted problems),
written once as Parquet folders under ``/tmp/auditor-bench/<rows>/`` and reused when present.
Each engine runs ``auditor run`` in a fresh process (so peaks are per run). ``--suite spark``
(default) runs the checks of the default suite written once as ``measure``/``judge`` (every
one of them since the last per-check twin was removed; read when the bench starts); ``--suite
default`` runs the whole default suite (Spark would skip a plugin with only ``run``). The process
tree is sampled every 0.5 s from /proc: VmHWM and utime + stime of the Python process and of
any java descendant. Writes ``bench/results/spark-<rows>.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = Path("/tmp/auditor-bench")
TICK = os.sysconf("SC_CLK_TCK")


def spark_suite() -> str:
    """YAML of the default suite's checks that run on Spark."""
    sys.path.insert(0, str(ROOT))
    import yaml

    from auditor.core.checks import is_measured
    from auditor.core.registry import load_check_class

    default = yaml.safe_load((ROOT / "checks" / "default.yaml").read_text())
    ids = [c for c in default["checks"] if is_measured(load_check_class(c)())]
    return yaml.safe_dump({"description": "the default suite's checks with a Spark "
                                          "implementation", "checks": {c: {} for c in ids}})


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _status_kb(pid: int, field: str = "VmHWM:") -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_s(pid: int) -> float:
    """utime + stime of the process (its own threads), seconds."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return 0.0


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def run_measured(cmd: list[str], log: Path) -> dict[str, float]:
    """Run ``cmd``; sample peak RSS (VmHWM) and CPU seconds of the Python process and of any
    java descendant (the last sample before each exits)."""
    t0 = time.perf_counter()
    load0 = os.getloadavg()
    with open(log, "wb") as errf:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=errf,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        peaks = {"python": 0, "java": 0, "executor": 0}
        cpu = {"python": 0.0, "java": {}}
        loads: list[float] = []
        done = threading.Event()

        def sample() -> None:
            # the driver JVM is the java process started by the Python driver; java processes
            # below it are executors (a local-cluster or standalone master started from it)
            while not done.is_set():
                peaks["python"] = max(peaks["python"], _status_kb(proc.pid))
                cpu["python"] = max(cpu["python"], _cpu_s(proc.pid))
                stack = [(c, False) for c in _children(proc.pid)]
                while stack:
                    pid, under_java = stack.pop()
                    is_java = _name(pid) == "java"
                    if is_java:
                        role = "executor" if under_java else "java"
                        peaks[role] = max(peaks[role], _status_kb(pid))
                        cpu["java"][pid] = max(cpu["java"].get(pid, 0.0), _cpu_s(pid))
                    stack += [(c, under_java or is_java) for c in _children(pid)]
                loads.append(os.getloadavg()[0])
                done.wait(0.5)

        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        proc.wait()
        done.set()
        thread.join()
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.stderr.write(log.read_text(errors="replace")[-3000:])
        raise SystemExit(f"{cmd[:4]}... exited {proc.returncode}")
    java_cpu = sum(cpu["java"].values())
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu["python"] + java_cpu, 1),
            "python_cpu_s": round(cpu["python"], 1), "jvm_cpu_s": round(java_cpu, 1),
            "python_peak_gb": round(peaks["python"] / 2**20, 2),
            "jvm_peak_gb": round(peaks["java"] / 2**20, 2),
            "executor_jvm_peak_gb": round(peaks["executor"] / 2**20, 2), "exit": proc.returncode,
            "load_avg_1m": {"start": round(load0[0], 2),
                            "mean": round(sum(loads) / max(len(loads), 1), 2),
                            "max": round(max(loads, default=0.0), 2)}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="2g")
    ap.add_argument("--executor-memory", default="2g",
                    help="spark.executor.memory for a cluster master "
                         "(e.g. local-cluster[2,1,2560]; 1g executors ran out of heap at 50M)")
    ap.add_argument("--engines", nargs="+", default=["polars", "spark"])
    ap.add_argument("--suite", default="spark", help="spark (default), default or fast")
    ap.add_argument("--data", type=Path, default=DATA,
                    help="where make_data.py keeps (or finds) the generated Parquet folders")
    ap.add_argument("--json", type=Path, default=None,
                    help="result file (default bench/results/spark-<rows>.json)")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    from make_data import generate

    t = time.perf_counter()
    paths = generate(args.rows, args.data)
    print(f"data: {paths['train'].parent} ({time.perf_counter() - t:.1f}s)", flush=True)
    tag = "" if args.master == "local[2]" else "-" + "".join(
        ch if ch.isalnum() else "-" for ch in args.master.split("[")[0])
    out = args.json or HERE / "results" / f"spark-{args.rows}{tag}.json"
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        suite = args.suite
        if suite == "spark":
            suite = str(Path(tmp) / "suite.yaml")
            Path(suite).write_text(spark_suite())
        for engine in args.engines:
            cmd = [sys.executable, "-m", "auditor", "run", "--train", str(paths["train"]),
                   "--test", str(paths["test"]), "--label", "label", "--time", "event_ts",
                   "--group", "user_id", "--id", "row_id", "--text", "notes",
                   "--suite", suite, "--out", str(Path(tmp) / engine), "-q",
                   "--hash", "fast", "--engine", engine]
            if engine == "spark":
                cmd += ["--spark-master", args.master,
                        "--spark-conf", f"spark.driver.memory={args.driver_memory}",
                        "--spark-conf", "spark.ui.enabled=false",
                        "--spark-conf", f"spark.local.dir={args.data / 'spark-tmp'}"]
                if not args.master.startswith("local["):
                    # a cluster master (local-cluster[W,C,MB], spark://): executors are separate
                    # JVMs, so the driver's own memory is measured apart from theirs
                    cmd += ["--spark-conf", f"spark.executor.memory={args.executor_memory}",
                            "--spark-conf", "spark.sql.shuffle.partitions=8"]
            res = run_measured(cmd, Path(tmp) / f"{engine}.log")
            doc = json.loads((Path(tmp) / engine / "report.json").read_text())
            res["statuses"] = {c["id"]: c["status"] for c in doc["checks"]}
            res["check_s"] = {c["id"]: c["duration_s"] for c in doc["checks"]}
            results[engine] = res
            print(f"{engine:>6}: {res['wall_s']:8.1f} s wall, {res['cpu_s']:.0f} CPU-s, python "
                  f"peak {res['python_peak_gb']:.2f} GB, driver JVM peak {res['jvm_peak_gb']:.2f} "
                  f"GB, executor JVM peak {res['executor_jvm_peak_gb']:.2f} GB, "
                  f"load {res['load_avg_1m']['mean']}", flush=True)
            out.write_text(json.dumps(_document(args, results), indent=2))
    doc = _document(args, results)
    out.write_text(json.dumps(doc, indent=2))
    ids = list(dict.fromkeys(c for r in results.values() for c in r["statuses"]))
    print(f"{'check':34s}" + "".join(f"{e:>10s}" for e in results))
    for c in ids:
        print(f"{c:34s}" + "".join(f"{r['statuses'].get(c, '-'):>10s}" for r in results.values()))
    print(f"verdicts differ where both ran: {doc['differ'] or 'none'}")
    print(f"written {out}")


def _document(args: argparse.Namespace, results: dict[str, dict]) -> dict:
    differ = []
    if {"polars", "spark"} <= set(results):
        p, s = results["polars"]["statuses"], results["spark"]["statuses"]
        differ = [c for c in p if c in s and "skipped" not in (p[c], s[c]) and p[c] != s[c]]
    return {"rows": args.rows, "test_rows": args.rows // 4, "columns": 40,
            "master": args.master, "driver_memory": args.driver_memory, "suite": args.suite,
            "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "results": results, "differ": differ}


if __name__ == "__main__":
    main()
