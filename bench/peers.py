"""Auditor against its closest peers on the same files, on the same machine, in one run.

    .venv/bin/python bench/peers.py --setup                    # once: peers' own virtualenvs
    .venv/bin/python bench/peers.py --sizes 100000 1000000     # generate data if missing, run

For each size, each tool runs in its own process under `/usr/bin/time -v` (wall clock and
peak RSS, the "Maximum resident set size" line):

- auditor           the full default suite (`auditor run audit.yaml`, report.json + report.html)
- auditor-drift     only drift.features + drift.label (the work Evidently's preset does)
- auditor-dc        the checks that cover what Deepchecks' train_test_validation suite does
                    (schema.consistency, drift.*, leakage.duplicates, leakage.temporal,
                    leakage.single_feature_auc, leakage.feature_label_correlation,
                    separability.adversarial), default parameters
- evidently         Evidently's DataDriftPreset, train as reference, test as current
                    (bench/peers_evidently.py inside bench/.venv-evidently)
- deepchecks        Deepchecks' train_test_validation suite
                    (bench/peers_deepchecks.py inside bench/.venv-deepchecks)

Every tool loads the Parquet files itself (peers with pandas) and writes its HTML and JSON
reports; all of it is inside the measured wall time. The table shows wall time, peak RSS, the
ratio peer time / auditor time (auditor-drift for Evidently, auditor-dc for Deepchecks, each
also against the full suite), and
which of the planted problems of bench/make_data.py each tool flags. Results are written as
JSON to bench/results/peers-<date>.json. Peers are optional and never dependencies of the
project: a peer whose virtualenv is missing is skipped with a message; one that crashes or runs
past --timeout is reported as such.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

PEERS: dict[str, dict[str, Any]] = {
    "evidently": {
        "venv": HERE / ".venv-evidently",
        "script": HERE / "peers_evidently.py",
        "requirements": ["evidently==0.7.23", "pandas==2.3.3", "pyarrow==26.0.1"],
        "what": "Evidently DataDriftPreset (reference=train, current=test)",
        "compare_with": "auditor-drift",
    },
    "deepchecks": {
        "venv": HERE / ".venv-deepchecks",
        "script": HERE / "peers_deepchecks.py",
        "requirements": ["deepchecks==0.19.1", "numpy==1.26.4", "pandas==2.2.3",
                         "scikit-learn==1.5.2", "category-encoders==2.6.4",
                         "pyarrow==21.0.0"],  # pyarrow 26 needs NumPy 2
        "what": "Deepchecks train_test_validation suite",
        "compare_with": "auditor-dc",
    },
    "alibi": {
        "venv": HERE / ".venv-alibi",
        "script": HERE / "peers_alibi.py",
        "module": "alibi_detect",
        # alibi-detect without its optional backends: no tensorflow, no torch (TabularDrift's
        # KS / chi-square tests are NumPy/SciPy); pyarrow 21 for NumPy 1.26, which it pins
        "requirements": ["alibi-detect==0.13.0", "numpy==1.26.4", "pandas==2.3.3",
                         "pyarrow==21.0.0"],
        "what": "alibi-detect TabularDrift (KS numeric, chi-square categorical, per feature)",
        "compare_with": "auditor-drift",
    },
    # the same without the three high-cardinality columns (10k-200k levels): TabularDrift
    # counts each level with its own pass over the rows (O(levels x rows)), which dominates
    # the run above; this variant shows its cost on the other 33 features
    "alibi-nohigh": {
        "venv": HERE / ".venv-alibi",
        "script": HERE / "peers_alibi.py",
        "args": ["--skip", "cat_high_0,cat_high_1,cat_high_2"],
        "module": "alibi_detect",
        "setup_with": "alibi",
        "what": "alibi-detect TabularDrift without cat_high_* (33 features)",
        "compare_with": "auditor-drift",
    },
}
VERSIONED = ("evidently", "deepchecks", "alibi-detect", "pandas", "numpy", "pyarrow",
             "scikit-learn", "scipy",
             "torch")

# The planted problems of bench/make_data.py and what counts as flagging each: a flag (a
# warn/fail finding, a drifted column, a failed or warning condition) from a check whose name
# starts with the pattern (both compared as lower-case words, punctuation dropped: "Date
# Train-Test Leakage (overlap)" matches "date train test leakage overlap") and, where a subject
# is given, about that column.
PLANTED: dict[str, tuple[str, list[tuple[str, str | None]]]] = {
    "duplicates": ("1% of test rows are exact copies of train rows", [
        ("leakage.duplicates", None), ("train test samples mix", None),
        # Deepchecks: test rows whose timestamp also occurs in train; with microsecond
        # timestamps those are exactly the copied rows
        ("date train test leakage duplicates", None)]),
    "group overlap": ("2% of test rows belong to train's users (user_id)", [
        ("leakage.group_overlap", "user_id")]),
    "temporal overlap": ("0.5% of test rows dated inside train's time range", [
        ("leakage.temporal", "event_ts"), ("date train test leakage overlap", None)]),
    "future datetime": ("last_login after event_ts in 3% of rows", [
        ("leakage.temporal", "last_login")]),
    "leaky feature": ("leak_days filled only for positives", [
        ("leakage.single_feature_auc", "leak_days"),
        ("leakage.feature_label_correlation", "leak_days"),
        ("separability.label_probe", "leak_days"),
        ("feature label correlation", "leak_days")]),
    "drift num_03": ("num_03 shifted by +0.5 sd in test", [
        ("drift.features", "num_03"), ("separability.adversarial", "num_03"),
        ("valuedrift", "num_03"), ("feature drift", "num_03"), ("tabulardrift", "num_03")]),
    "new category cat_low_2": ("cat_low_2 gains a new level in test", [
        ("drift.features", "cat_low_2"), ("schema.consistency", "cat_low_2"),
        ("valuedrift", "cat_low_2"), ("feature drift", "cat_low_2"),
        ("tabulardrift", "cat_low_2"),
        ("new category", "cat_low_2"), ("category mismatch", "cat_low_2")]),
    "preprocessing num_10": ("num_10 standardised on train+test together", [
        ("leakage.preprocessing", "num_10")]),
}
COLUMNS = (["row_id", "user_id", "event_ts", "label", "last_login", "notes", "is_member",
            "leak_days"] + [f"num_{i:02d}" for i in range(24)]
           + [f"cat_low_{j}" for j in range(5)] + [f"cat_high_{j}" for j in range(3)])
AUDIT_COLUMNS = {"label": "label", "time": "event_ts", "groups": ["user_id"], "ids": ["row_id"],
                 "text": ["notes"]}


# ---------------------------------------------------------------------------------------- setup

def setup(names: list[str]) -> int:
    """Create each peer's virtualenv under bench/ with its pinned set (never the project's)."""
    py = shutil.which("python3.11")
    if py is None:
        print("python3.11 not found on PATH; the peers' pins were checked with Python 3.11")
        return 2
    code = 0
    for name in dict.fromkeys(PEERS[n].get("setup_with", n) for n in names):
        peer = PEERS[name]
        venv: Path = peer["venv"]
        print(f"[{name}] creating {venv.relative_to(ROOT)} ...", flush=True)
        subprocess.run([py, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
               "-c", str(ROOT / "constraints.txt"), *peer["requirements"]]
        t = time.perf_counter()
        proc = subprocess.run(pip, capture_output=True, text=True)
        noise = ("WARNING: Location", "[notice]")
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines()
                 if ln.strip() and not ln.startswith(noise)]
        if proc.returncode != 0:
            print(f"[{name}] pip install failed:\n" + "\n".join(lines[-30:]))
            code = 1
            continue
        check = subprocess.run([str(venv / "bin" / "python"), "-c",
                                f"import pandas, pyarrow, {peer.get('module', name)}"],
                               capture_output=True,
                               text=True)
        if check.returncode != 0:
            print(f"[{name}] installed but does not import: {last_lines(check.stderr)}")
            code = 1
            continue
        versions = installed_versions(venv)
        print(f"[{name}] installed in {time.perf_counter() - t:.0f}s: "
              + ", ".join(f"{k}=={v}" for k, v in versions.items()))
        if "torch" in versions:
            print(f"[{name}] note: torch {versions['torch']} was pulled in (constrained by "
                  "constraints.txt)")
    return code


def installed_versions(venv: Path) -> dict[str, str]:
    code = ("import importlib.metadata as m, json, sys\nout = {}\n"
            "for n in sys.argv[1:]:\n"
            "    try: out[n] = m.version(n)\n"
            "    except m.PackageNotFoundError: pass\n"
            "print(json.dumps(out))")
    proc = subprocess.run([str(venv / "bin" / "python"), "-c", code, *VERSIONED],
                          capture_output=True, text=True)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {}


# ---------------------------------------------------------------------------------- measuring

def timed(cmd: list[str], timeout: float, cwd: Path | None = None) -> dict[str, Any]:
    """Run ``cmd`` under /usr/bin/time -v in its own process group; wall, peak RSS, output."""
    timer = "/usr/bin/time" if Path("/usr/bin/time").exists() else shutil.which("time")
    full = [timer, "-v", *cmd] if timer else cmd
    t = time.perf_counter()
    proc = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=cwd, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        out, err = stop(proc)
        timed_out = True
    wall = time.perf_counter() - t
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    # CPU time (user + system) of the tool: on a shared machine a steadier figure than wall
    cpu = [float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", err)]
    status = re.search(r"Command exited with non-zero status (\d+)", err)
    killed = re.search(r"Command terminated by signal (\d+)", err)
    rc = int(status.group(1)) if status else (-int(killed.group(1)) if killed else proc.returncode)
    tool_err = "\n".join(ln for ln in err.splitlines() if not ln.startswith("\t")
                         and not ln.startswith("Command "))
    return {"wall_s": wall, "peak_rss_mb": int(m.group(1)) / 1024 if m else None,
            "cpu_s": sum(cpu) if len(cpu) == 2 else None,
            "returncode": rc, "timed_out": timed_out, "stdout": out, "stderr": tool_err}


def stop(proc: subprocess.Popen) -> tuple[str, str]:
    """Kill the timed-out tool (the child of /usr/bin/time, so time still reports its peak
    RSS), then whatever is left of the process group we started (e.g. worker processes)."""
    try:
        kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    except OSError:
        kids = []
    for pid in kids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return out, err


def peer_line(stdout: str) -> dict[str, Any] | None:
    line = next((ln for ln in stdout.splitlines() if ln.startswith("PEER ")), None)
    return json.loads(line[5:]) if line else None


def last_lines(text: str, n: int = 3) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:])[-400:]


def subjects_of(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


# -------------------------------------------------------------------------------------- tools

def run_auditor(paths: dict[str, Path], suite: str, work: Path, timeout: float) -> dict:
    """``auditor run`` on an audit.yaml equivalent to bench/run.py's config."""
    import yaml

    out = work / "report"
    cfg = {"datasets": {k: str(v) for k, v in paths.items()}, "columns": AUDIT_COLUMNS,
           "suite": suite, "seed": 0}
    cfg_path = work / "audit.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    res = timed([sys.executable, "-m", "auditor", "run", str(cfg_path), "--out", str(out),
                 "--quiet"], timeout, cwd=ROOT)
    report = out / "report.json"
    if res["timed_out"]:
        return {**res, "status": f"timeout after {timeout:.0f}s"}
    if res["returncode"] not in (0, 1, 3) or not report.exists():
        return {**res, "status": f"crashed (exit {res['returncode']}): {last_lines(res['stderr'])}"}
    doc = json.loads(report.read_text())
    flags, errors = [], []
    for c in doc["checks"]:
        if c["status"] == "error":
            errors.append(f"{c['id']}: {(c.get('error') or '')[:200]}")
        for f in c["findings"]:
            if f["severity"] in ("warn", "fail"):
                flags.append({"check": c["id"], "subjects": subjects_of(f.get("subject")),
                              "severity": f["severity"], "metric": f.get("metric"),
                              "detail": (f.get("message") or "")[:200]})
    status = "ok" if not errors else f"ok, {len(errors)} check(s) crashed"
    return {**res, "status": status, "flags": flags, "check_errors": errors,
            "audit_s": doc.get("duration_s"),
            "checks": [{"id": c["id"], "status": c["status"], "s": c["duration_s"]}
                       for c in doc["checks"]]}


def run_peer(name: str, paths: dict[str, Path], work: Path, timeout: float) -> dict:
    peer = PEERS[name]
    python = peer["venv"] / "bin" / "python"
    if not python.exists():
        return {"status": "not installed (run bench/peers.py --setup)", "skipped": True}
    out = work / name
    res = timed([str(python), str(peer["script"]), str(paths["train"]), str(paths["test"]),
                 str(out), *peer.get("args", [])], timeout, cwd=ROOT)
    if res["timed_out"]:
        return {**res, "status": f"timeout after {timeout:.0f}s"}
    info = peer_line(res["stdout"])
    if res["returncode"] != 0 or info is None:
        return {**res, "status": f"crashed (exit {res['returncode']}): {last_lines(res['stderr'])}"}
    flags, errors = {"evidently": evidently_flags, "alibi": alibi_flags,
                     "alibi-nohigh": alibi_flags,
                     "deepchecks": deepchecks_flags}[name](info)
    status = "ok" if not errors else "ok, " + "; ".join(errors)[:300]
    return {**res, "status": status, "flags": flags, "check_errors": errors,
            "phases": {k: info.get(k) for k in ("import_s", "load_s", "run_s", "save_s")}}


def evidently_flags(info: dict) -> tuple[list[dict], list[str]]:
    """One flag per column the preset marks as drifted."""
    flags = [{"check": "ValueDrift", "subjects": [col],
              "detail": f"{v['method']} = {v['score']:.4g} (threshold {v['threshold']})"}
             for col, v in info["columns"].items() if v.get("drifted")]
    errors = []
    if info.get("drifted_count") is not None and int(info["drifted_count"]) != len(flags):
        errors.append(f"drifted columns parsed ({len(flags)}) differ from Evidently's "
                      f"DriftedColumnsCount ({info['drifted_count']})")
    return flags, errors


def alibi_flags(info: dict) -> tuple[list[dict], list[str]]:
    """One flag per feature TabularDrift marks as drifted (its per-feature p-value below its
    threshold)."""
    flags = [{"check": "TabularDrift", "subjects": [col],
              "detail": f"{v['test']} p = {v['p_val']:.3g} (threshold {v['threshold']:.3g})"}
             for col, v in info["columns"].items() if v["drifted"]]
    return flags, []


def deepchecks_flags(info: dict) -> tuple[list[dict], list[str]]:
    """One flag per column named by a condition that did not pass (or one without subject)."""
    flags, errors = [], []
    for c in info["checks"]:
        if "error" in c:
            errors.append(f"{c['check']}: {c['error'][:200]}")
            continue
        for cond in c["conditions"]:
            if cond["category"] in ("WARN", "FAIL"):
                for col in columns_in(cond["details"]) or [None]:
                    flags.append({"check": c["check"], "subjects": [col] if col else [],
                                  "severity": cond["category"].lower(),
                                  "detail": f"{cond['name']}: {cond['details']}"[:300]})
    return flags, errors


def columns_in(text: str) -> list[str]:
    """Bench column names mentioned in a peer's free-text condition details."""
    return [c for c in COLUMNS if re.search(rf"(?<![\w]){re.escape(c)}(?![\w])", text)]


def words(name: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9_]+", " ", name.lower()).split()) + " "


def matches(flag: dict, rules: list[tuple[str, str | None]]) -> bool:
    name = words(flag["check"])
    return any(name.startswith(words(pat)) and (subj is None or subj in flag["subjects"])
               for pat, subj in rules)


def planted_flagged(flags: list[dict]) -> dict[str, list[str]]:
    """Planted problem -> the checks that flagged it (empty list: missed)."""
    return {key: sorted({f["check"] for f in flags if matches(f, rules)})
            for key, (_, rules) in PLANTED.items()}


def other_flags(flags: list[dict]) -> list[str]:
    """Flags that match no planted problem, as 'check:subject' (true or false positives)."""
    return sorted({f"{f['check']}:{','.join(f['subjects']) or '-'}" for f in flags
                   if not any(matches(f, rules) for _, rules in PLANTED.values())})


# ------------------------------------------------------------------------------------ driving

# auditor's counterpart of each check of Deepchecks' train_test_validation suite (0.19):
# DatasetsSizeComparison, NewLabelTrainTest -> schema.consistency / drift.label;
# CategoryMismatchTrainTest, StringMismatchComparison, FeatureDrift -> drift.features;
# LabelDrift -> drift.label; DateTrainTestLeakageDuplicates/Overlap -> leakage.temporal (and
# leakage.duplicates); IndexTrainTestLeakage, TrainTestSamplesMix -> leakage.duplicates;
# FeatureLabelCorrelationChange (PPS) -> leakage.single_feature_auc and
# leakage.feature_label_correlation; MultivariateDrift (domain classifier) ->
# separability.adversarial.
SUBSETS = {
    "auditor-drift": ("drift only", ("drift.features", "drift.label")),
    "auditor-dc": ("the checks Deepchecks' train_test_validation shares", (
        "schema.consistency", "drift.features", "drift.label", "leakage.duplicates",
        "leakage.temporal", "leakage.single_feature_auc", "leakage.feature_label_correlation",
        "separability.adversarial")),
}


def subset_suite(tool: str, work: Path) -> Path:
    """A suite of the ``SUBSETS[tool]`` checks with the default suite's parameters."""
    import yaml

    sys.path.insert(0, str(ROOT))
    from auditor.core.suites import read_suite

    default = read_suite("default")
    what, ids = SUBSETS[tool]
    checks = {c: default.get(c, {}) for c in ids}
    path = work / f"{tool}-suite.yaml"
    path.write_text(yaml.safe_dump({"description": f"bench: {what}", "checks": checks},
                                   sort_keys=False))
    return path


def run_size(rows: int, tools: list[str], args: argparse.Namespace) -> dict[str, dict]:
    sys.path.insert(0, str(HERE))
    from make_data import generate

    t = time.perf_counter()
    paths = generate(rows, args.data)
    print(f"\n== {rows:,} train rows (+{rows // 4:,} test): data ready in "
          f"{time.perf_counter() - t:.1f}s at {paths['train'].parent}", flush=True)
    work = Path(tempfile.mkdtemp(prefix=f"peers-{rows}-"))
    results: dict[str, dict] = {}
    try:
        for tool in tools:
            print(f"   {tool:14} ... ", end="", flush=True)
            tdir = work / tool
            tdir.mkdir()
            if tool == "auditor":
                res = run_auditor(paths, "default", tdir, args.timeout)
            elif tool in SUBSETS:
                res = run_auditor(paths, str(subset_suite(tool, tdir)), tdir, args.timeout)
            else:
                res = run_peer(tool, paths, tdir, args.timeout)
            if "flags" in res:
                res["planted"] = planted_flagged(res["flags"])
                res["other"] = other_flags(res["flags"])
            for k in ("stdout", "stderr"):
                res.pop(k, None)
            results[tool] = res
            shown = (f"{res['wall_s']:.1f}s, {res['peak_rss_mb']:.0f} MB"
                     if res.get("peak_rss_mb") else "")
            if res.get("cpu_s") is not None:
                shown += f", CPU {res['cpu_s']:.1f}s (load {os.getloadavg()[0]:.1f})"
            print(f"{res['status']}  {shown}", flush=True)
    finally:
        if args.keep:
            print(f"   outputs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return results


def ratio(results: dict[str, dict], tool: str) -> str:
    """Peer wall time / the wall time of the auditor run doing comparable work."""
    if tool not in PEERS:
        return ""
    b = results.get(tool, {})
    if not (("flags" in b) or b.get("timed_out")):
        return ""
    more = ">" if b.get("timed_out") else ""
    out = []
    for base in dict.fromkeys((PEERS[tool]["compare_with"], "auditor")):
        a = results.get(base, {})
        if "flags" in a:
            out.append(f"{more}{b['wall_s'] / a['wall_s']:.1f}x vs {base}")
    return ", ".join(out)


def print_table(all_results: dict[int, dict[str, dict]]) -> None:
    keys = list(PLANTED)
    short = {"duplicates": "dup", "group overlap": "grp", "temporal overlap": "tmp",
             "future datetime": "fut", "leaky feature": "leak", "drift num_03": "n03",
             "new category cat_low_2": "c2new", "preprocessing num_10": "n10"}
    head = (f"{'tool':14}{'size':>11}{'wall s':>9}{'peak MB':>9}  {'ratio':<40}"
            + " ".join(f"{short[k]:>5}" for k in keys) + "  flagged")
    print("\n" + head)
    print("-" * len(head))
    for rows, results in all_results.items():
        for tool, r in results.items():
            if "flags" not in r:
                wall = f"{'>' + format(r['wall_s'], '.0f'):>9}" if r.get("timed_out") else ""
                peak = f"{r['peak_rss_mb']:>9.0f}" if r.get("peak_rss_mb") else ""
                print(f"{tool:14}{rows:>11,}{wall}{peak}  {ratio(results, tool):<40}"
                      f"{r['status']}")
                continue
            marks = " ".join(f"{('yes' if r['planted'][k] else '-'):>5}" for k in keys)
            n = sum(bool(v) for v in r["planted"].values())
            print(f"{tool:14}{rows:>11,}{r['wall_s']:>9.1f}{r['peak_rss_mb'] or 0:>9.0f}  "
                  f"{ratio(results, tool):<40}{marks}  {n}/{len(keys)}")
    print("\nratio = peer wall time / auditor wall time (Evidently against auditor-drift, the "
          "same drift work; Deepchecks against auditor-dc, the checks its suite shares; both "
          "also against the full default suite). Wall time includes process "
          "start, imports, loading the Parquet files and writing the reports.")
    print("planted: " + "; ".join(f"{short[k]} = {k} ({PLANTED[k][0]})" for k in keys))
    for rows, results in all_results.items():
        for tool, r in results.items():
            if r.get("other"):
                print(f"other flags, {tool} at {rows:,}: {', '.join(r['other'])}")
            for e in r.get("check_errors", []):
                print(f"errors, {tool} at {rows:,}: {e}")


def slim(r: dict) -> dict:
    """A tool's result for the JSON file: flags as 'check:subject' strings (small files)."""
    out = {k: v for k, v in r.items() if k != "flags"}
    if "flags" in r:
        out["flags"] = sorted({f"{f['check']}:{','.join(f['subjects']) or '-'}"
                               for f in r["flags"]})
    for k in ("wall_s", "peak_rss_mb", "audit_s", "cpu_s"):
        if isinstance(out.get(k), float):
            out[k] = round(out[k], 2)
    return out


def machine() -> dict[str, Any]:
    mem = None
    try:
        kb = next(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines()
                  if ln.startswith("MemTotal"))
        mem = round(kb / 1024 ** 2, 1)
    except (OSError, StopIteration, ValueError):
        pass
    return {"cpus": os.cpu_count(), "mem_gb": mem, "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None}


def main() -> None:
    ap = argparse.ArgumentParser(description="auditor vs Evidently and Deepchecks")
    ap.add_argument("--setup", action="store_true",
                    help="create the peers' virtualenvs under bench/ and exit")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--tools", nargs="+", default=["auditor", *SUBSETS, *PEERS],
                    choices=["auditor", *SUBSETS, *PEERS])
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per tool and size")
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--results", type=Path, default=HERE / "results",
                    help="folder for peers-<date>.json")
    ap.add_argument("--keep", action="store_true", help="keep every tool's reports (temp dir)")
    args = ap.parse_args()
    if args.setup:
        sys.exit(setup([t for t in args.tools if t in PEERS] or list(PEERS)))
    started = datetime.now(timezone.utc)
    peers = {name: installed_versions(PEERS[name]["venv"])
             for name in PEERS if (PEERS[name]["venv"] / "bin" / "python").exists()}
    for name in PEERS:
        if name in args.tools and name not in peers:
            print(f"{name}: not installed, skipped (run: .venv/bin/python bench/peers.py --setup)")
    all_results = {rows: run_size(rows, args.tools, args) for rows in args.sizes}
    print_table(all_results)
    args.results.mkdir(parents=True, exist_ok=True)
    out = args.results / f"peers-{started:%Y-%m-%d}.json"
    run = {"started_at": started.strftime("%Y-%m-%dT%H:%M:%SZ"), "machine": machine(),
           "command": " ".join(["python", *sys.argv]), "peer_versions": peers,
           "results": {str(rows): {tool: slim(r) for tool, r in res.items()}
                       for rows, res in all_results.items()}}
    doc = {"planted": {k: v[0] for k, v in PLANTED.items()}, "runs": []}
    if out.exists():  # several runs on one day: append
        try:
            doc["runs"] = json.loads(out.read_text()).get("runs", [])
        except (json.JSONDecodeError, AttributeError):
            pass
    doc["runs"].append(run)
    out.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    print(f"\nresults: {out}")


if __name__ == "__main__":
    main()
