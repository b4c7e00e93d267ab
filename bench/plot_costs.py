"""Cost of the default suite against rows and against columns, as JSON and two SVG plots.

    .venv/bin/python bench/plot_costs.py            # 100k/300k/1M/3M x 40; 250..1,500 cols x 10k
    .venv/bin/python bench/plot_costs.py --quick    # tiny sizes, to check the script works
    .venv/bin/python bench/plot_costs.py --plot-only  # redraw the SVGs from the saved JSON

Rows: the full default suite on bench/make_data.py's tables (train ``rows`` + test
``rows // 4``, 40 columns, planted problems), one fresh process per size through
``bench/run.py`` (in-process audit time, process CPU user + system, peak RSS, per-check wall
seconds). Columns: the default suite through the ``auditor run`` command on bench/wide.py's
generated tables (10k train + 2.5k test rows; process wall, CPU, peak RSS, per-check seconds).
Results go to ``bench/results/costs.json`` and the plots to ``docs/img/cost-vs-rows.svg`` and
``docs/img/cost-vs-columns.svg`` (``--quick``: under ``/tmp/auditor-costs-quick/`` instead, so
the committed figures are not overwritten by a smoke run). Needs matplotlib (the ``bench``
extra: ``pip install -e .[bench]``).

Run the full sizes on an idle machine (the 3M size takes a few minutes and ~5 GB); each point
records the load average, and CPU seconds are drawn beside wall seconds because they depend
less on other load.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

ROWS = [100_000, 300_000, 1_000_000, 3_000_000]
COLUMNS = [250, 500, 1_000, 1_500]
WIDE_ROWS = 10_000
QUICK_ROWS = [5_000, 20_000]
QUICK_COLUMNS = [50, 100]
QUICK_WIDE_ROWS = 2_000
TOP_CHECKS = 5   # per-check lines drawn: the costliest at the largest size


def measure_rows(sizes: list[int], data: Path) -> list[dict]:
    """Full default suite per row count (bench/run.py's child process)."""
    import run

    out = []
    for n in sizes:
        args = argparse.Namespace(data=data, checks=None, no_models=False, suite="default")
        r = run.run_size(n, args)
        point = {"rows": n, "columns": 40, "audit_s": r["wall_s"],
                 "process_s": r["process_s"], "cpu_s": r["process_cpu_s"],
                 "peak_mb": r["time_v_peak_mb"] or r["peak_rss_mb"],
                 "loadavg": r["loadavg"],
                 "checks": {c["id"]: {"s": c["s"], "status": c["status"]}
                            for c in r["checks"]}}
        out.append(point)
        print(f"rows {n:>10,}: audit {point['audit_s']:7.1f} s  cpu {point['cpu_s']:7.1f} s  "
              f"peak {point['peak_mb']:7.0f} MB  load {point['loadavg']}", flush=True)
    return out


def measure_columns(columns: list[int], rows: int, data: Path, timeout: float) -> list[dict]:
    """Default suite per column count (bench/wide.py's generator and ``auditor run``)."""
    import wide

    out = []
    for k in columns:
        cfg = wide.generate(rows, k, data / f"{rows}x{k}")
        load0 = os.getloadavg()[0]
        r = wide.run_one(cfg, "default", timeout)
        if r.get("wall_s") is None or "checks" not in r:
            sys.exit(f"columns {k}: the audit did not finish: {r.get('status')}")
        point = {"rows": rows, "columns": k, "process_s": r["wall_s"], "cpu_s": r["cpu_s"],
                 "audit_s": r.get("audit_s"), "peak_mb": r["peak_mb"],
                 "loadavg": [round(load0, 1), round(r["load"], 1)],
                 "checks": {c["id"]: {"s": c["s"], "status": c["status"]}
                            for c in r["checks"]}}
        out.append(point)
        print(f"columns {k:>6,}: process {point['process_s']:7.1f} s  cpu "
              f"{point['cpu_s'] or float('nan'):7.1f} s  peak {point['peak_mb']:7.0f} MB  "
              f"load {point['loadavg']}", flush=True)
    return out


def plot(points: list[dict], x: str, xlabel: str, title: str, path: Path) -> None:
    """Wall and CPU seconds of the whole run, peak RSS (right axis) and the costliest checks'
    wall seconds against ``x``; log-log for rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "auditor-costs"  # stable ids: diffable SVG
    xs = [p[x] for p in points]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(xs, [p["process_s"] for p in points], "o-", color="black", lw=2,
            label="whole process, wall")
    if all(p.get("cpu_s") for p in points):
        ax.plot(xs, [p["cpu_s"] for p in points], "s--", color="black", lw=1.5,
                label="whole process, CPU (user + sys)")
    last = points[-1]["checks"]
    top = sorted(last, key=lambda c: -(last[c]["s"] or 0.0))[:TOP_CHECKS]
    for cid in top:
        ax.plot(xs, [p["checks"].get(cid, {}).get("s") or float("nan") for p in points],
                ".-", lw=1, alpha=0.8, label=f"{cid}, wall")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("seconds")
    if x == "rows":
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.grid(True, which="major", alpha=0.3)
    ax2 = ax.twinx()
    ax2.plot(xs, [p["peak_mb"] / 1024 for p in points], "^:", color="tab:red",
             label="peak RSS (right axis)")
    ax2.set_ylabel("peak RSS, GB", color="tab:red")
    ax2.set_ylim(bottom=0)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16),
              ncol=2, frameon=False)
    loads = [v for p in points for v in p.get("loadavg") or []]
    ax.set_title(f"{title}\n(load average {min(loads):.1f}-{max(loads):.1f} while measured)"
                 if loads else title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"rows {QUICK_ROWS}, columns {QUICK_COLUMNS} at {QUICK_WIDE_ROWS:,} "
                         "rows; output under /tmp/auditor-costs-quick/")
    ap.add_argument("--rows", type=int, nargs="+", help=f"row counts (default {ROWS})")
    ap.add_argument("--columns", type=int, nargs="+",
                    help=f"column counts (default {COLUMNS})")
    ap.add_argument("--wide-rows", type=int, help=f"rows of the wide tables ({WIDE_ROWS:,})")
    ap.add_argument("--json", type=Path, help="results file (bench/results/costs.json)")
    ap.add_argument("--img", type=Path, help="folder of the SVGs (docs/img)")
    ap.add_argument("--data", type=Path, default=HERE / "data", help="bench/make_data.py data")
    ap.add_argument("--wide-data", type=Path, default=Path("/tmp/auditor-wide"))
    ap.add_argument("--timeout", type=float, default=1800.0, help="per wide run, seconds")
    ap.add_argument("--plot-only", action="store_true", help="redraw from the JSON file")
    args = ap.parse_args()
    quick_dir = Path("/tmp/auditor-costs-quick")
    json_path = args.json or (quick_dir / "costs.json" if args.quick
                              else HERE / "results" / "costs.json")
    img = args.img or (quick_dir if args.quick else ROOT / "docs" / "img")
    if args.plot_only:
        res = json.loads(json_path.read_text())
    else:
        rows = args.rows or (QUICK_ROWS if args.quick else ROWS)
        cols = args.columns or (QUICK_COLUMNS if args.quick else COLUMNS)
        wide_rows = args.wide_rows or (QUICK_WIDE_ROWS if args.quick else WIDE_ROWS)
        res = {"measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "cores": os.cpu_count(), "suite": "default",
               "rows": measure_rows(rows, args.data),
               "columns": measure_columns(cols, wide_rows, args.wide_data, args.timeout)}
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(res, indent=1) + "\n")
    width = res["rows"][0]["columns"] if res["rows"] else 40
    wide_rows = res["columns"][0]["rows"] if res["columns"] else WIDE_ROWS
    if res["rows"]:
        plot(res["rows"], "rows", "train rows (test = rows / 4)",
             f"auditor default suite vs rows ({width} columns)", img / "cost-vs-rows.svg")
    if res["columns"]:
        plot(res["columns"], "columns", "feature columns",
             f"auditor default suite vs columns ({wide_rows:,} train rows)",
             img / "cost-vs-columns.svg")
    print(f"wrote {json_path}, {img / 'cost-vs-rows.svg'}, {img / 'cost-vs-columns.svg'}")


if __name__ == "__main__":
    main()
