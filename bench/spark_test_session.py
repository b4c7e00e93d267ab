"""How long the Spark side of the conformance cases takes under a test-session configuration.

The test suite runs on two xdist workers, each with its own Spark JVM, on two cores. This
script runs the same: two processes at once, each on half of the conformance cases
(tests/engines/test_conformance.py: load the splits with the Spark loader, measure, judge), and
prints each half's JVM start-up and case seconds. Compare configurations on an idle machine:

    python bench/spark_test_session.py                                   # the test session's
    python bench/spark_test_session.py --master 'local[2]' --conf spark.sql.shuffle.partitions=4 \\
        --java-options ''                                                # the session before

Session 28 (2026-11-30, one run each, slowest half): local[2] + 4 partitions + JVM defaults
225 s; 1 partition 213 s; SerialGC + C1 only 193 s; both 172 s; and local[1] 156 s.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _half(args: argparse.Namespace) -> None:
    from pyspark.sql import SparkSession

    start = time.time()
    builder = (SparkSession.builder.master(args.master).config("spark.ui.enabled", "false")
               .config("spark.default.parallelism", "2").config("spark.driver.memory", "2g")
               .config("spark.sql.adaptive.enabled", "false")
               .config("spark.sql.codegen.wholeStage", "false")
               .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
               .config("spark.sql.shuffle.partitions", "1")
               # as test_conformance sets it: small Arrow batches, cut elsewhere than polars'
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "37"))
    for item in args.conf:
        key, value = item.split("=", 1)
        builder = builder.config(key, value)
    if args.java_options:
        builder = builder.config("spark.driver.extraJavaOptions", args.java_options)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    up = time.time() - start

    from auditor.core.registry import load_check_class
    from auditor.engines.selection import engine_of
    from tests.engines import test_conformance as tc

    cases = 0.0
    for i, case in enumerate(tc.CASES):
        if i % 2 != args.half:
            continue
        check = load_check_class(case.check)(**case.params)
        frames = case.frames()
        with tempfile.TemporaryDirectory() as folder:
            t0 = time.time()
            data = tc._spark_data(spark, frames, case.roles, Path(folder),
                                  case.tokens() if case.tokens else None)
            check.judge(check.measure(engine_of(data), data.roles))
            data.engine.close()
            cases += time.time() - t0
    print(json.dumps({"half": args.half, "startup_s": round(up, 1), "cases_s": round(cases, 1)}),
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--master", default="local[1]")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="more session settings (default: one shuffle partition)")
    ap.add_argument("--java-options", default="-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
    ap.add_argument("--half", type=int, choices=(0, 1), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.half is not None:
        _half(args)
        return
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    cmd = [sys.executable, __file__, "--master", args.master, "--java-options",
           args.java_options, *[f"--conf={c}" for c in args.conf]]
    start = time.time()
    procs = [subprocess.Popen([*cmd, "--half", str(h)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT) for h in (0, 1)]
    halves = []
    for p in procs:
        out, err = p.communicate()
        if p.returncode:
            sys.exit(f"a half failed (exit {p.returncode}):\n{err[-3000:]}")
        halves.append(json.loads(out.strip().splitlines()[-1]))
    print(json.dumps({"master": args.master, "conf": args.conf, "java_options": args.java_options,
                      "halves": halves, "wall_s": round(time.time() - start, 1)}))


if __name__ == "__main__":
    main()
