"""Time the checks the spark engine runs, on both engines, on the same generated Parquet files:
wall time, peak RSS of the Python driver and of the Spark JVM (local mode: driver and
executors in one JVM).

    python bench/spark_bench.py --rows 10000000 [--master local[2]] [--driver-memory 2g]

Data: ``bench/make_data.py`` (train = rows, test = rows / 4, 40 columns, planted problems),
generated once under ``bench/data/<rows>/``. Each engine runs ``auditor run`` in a fresh
process (so peaks are per run) with a suite of the checks that have a Spark implementation;
the process tree's resident memory is sampled every 0.2 s from /proc (Python driver and JVM
separately). Prints one row per engine and writes ``bench/results/spark-<rows>.json``.
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
SUITE = """description: the checks with a spark implementation (auditor/engines/spark_checks.py)
checks:
  leakage.duplicates: {}
  leakage.group_overlap: {}
  leakage.temporal: {}
  drift.label: {}
  drift.features: {}
  separability.adversarial: {}
"""


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def run_measured(cmd: list[str]) -> dict[str, float]:
    """Run ``cmd``; sample RSS of the Python process and of any java descendant."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    peaks = {"python": 0, "java": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peaks["python"] = max(peaks["python"], _rss_kb(proc.pid))
            stack, java = _children(proc.pid), 0
            while stack:
                pid = stack.pop()
                if _name(pid) == "java":
                    java += _rss_kb(pid)
                stack += _children(pid)
            peaks["java"] = max(peaks["java"], java)
            time.sleep(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    out, err = proc.communicate()
    done.set()
    thread.join()
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.stderr.write(err.decode()[-3000:])
        raise SystemExit(f"{cmd[:4]}... exited {proc.returncode}")
    return {"wall_s": round(wall, 1), "python_peak_gb": round(peaks["python"] / 2**20, 2),
            "jvm_peak_gb": round(peaks["java"] / 2**20, 2), "exit": proc.returncode}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="2g")
    ap.add_argument("--engines", nargs="+", default=["polars", "spark"])
    ap.add_argument("--data", type=Path, default=HERE / "data",
                    help="where make_data.py keeps (or finds) the generated files")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    from make_data import generate

    t = time.perf_counter()
    paths = generate(args.rows, args.data)
    print(f"data: {paths['train'].parent} ({time.perf_counter() - t:.1f}s)")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite.yaml"
        suite.write_text(SUITE)
        for engine in args.engines:
            cmd = [sys.executable, "-m", "auditor", "run", "--train", str(paths["train"]),
                   "--test", str(paths["test"]), "--label", "label", "--time", "event_ts",
                   "--group", "user_id", "--id", "row_id", "--text", "notes",
                   "--suite", str(suite), "--out", str(Path(tmp) / engine), "-q",
                   "--engine", engine]
            if engine == "spark":
                cmd += ["--spark-master", args.master,
                        "--spark-conf", f"spark.driver.memory={args.driver_memory}",
                        "--spark-conf", "spark.ui.enabled=false",
                        "--spark-conf", "spark.ui.showConsoleProgress=false"]
            res = run_measured(cmd)
            doc = json.loads((Path(tmp) / engine / "report.json").read_text())
            res["statuses"] = {c["id"]: c["status"] for c in doc["checks"]}
            res["check_s"] = {c["id"]: c["duration_s"] for c in doc["checks"]}
            results[engine] = res
            print(f"{engine:>6}: {res['wall_s']:8.1f} s wall, python peak "
                  f"{res['python_peak_gb']:.2f} GB, JVM peak {res['jvm_peak_gb']:.2f} GB; "
                  + ", ".join(f"{k} {v}" for k, v in res["statuses"].items()))
    out = HERE / "results" / f"spark-{args.rows}.json"
    out.write_text(json.dumps({"rows": args.rows, "master": args.master,
                               "driver_memory": args.driver_memory, "results": results},
                              indent=2))
    print(f"written {out}")


if __name__ == "__main__":
    main()
