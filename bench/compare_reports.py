"""Compare two report.json files finding by finding: the check a redesign must pass ("the demo
and the benchmark data give the same findings as before").

    python bench/compare_reports.py BEFORE/report.json AFTER/report.json
    python bench/compare_reports.py A.json B.json --messages --evidence   # stricter
    python bench/compare_reports.py A.json B.json --rel 1e-6               # float tolerance

A finding is keyed by (check id, metric, subject, splits); when one key holds several
findings they are matched in report order. Compared: every check's status (and skip reason),
each finding's severity, count, value and threshold (floats to ``--rel``), and with
``--messages`` / ``--evidence`` its message and evidence too. Times, paths, versions and
hashes are never compared. Prints one line per difference and exits 1 when there is any, 0
when the two reports agree.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

Key = tuple[str, str, str, tuple[str, ...]]


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def findings_by_key(report: dict[str, Any]) -> dict[Key, list[dict[str, Any]]]:
    out: dict[Key, list[dict[str, Any]]] = defaultdict(list)
    for check in report.get("checks", []):
        for f in check.get("findings", []):
            subject = f.get("subject")
            subject = ",".join(subject) if isinstance(subject, list) else str(subject or "")
            out[(check["id"], f.get("metric") or "", subject,
                 tuple(f.get("splits") or ()))].append(f)
    return out


def same_value(a: Any, b: Any, rel: float) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel, abs_tol=rel * 1e-3)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k], rel) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y, rel) for x, y in zip(a, b))
    return bool(a == b)


def differences(before: dict[str, Any], after: dict[str, Any], *, rel: float = 1e-9,
                messages: bool = False, evidence: bool = False) -> list[str]:
    """Every difference between two reports, one line each (empty: they agree)."""
    out = []
    checks_a = {c["id"]: c for c in before.get("checks", [])}
    checks_b = {c["id"]: c for c in after.get("checks", [])}
    for cid in sorted(checks_a.keys() | checks_b.keys()):
        a, b = checks_a.get(cid), checks_b.get(cid)
        if a is None or b is None:
            out.append(f"{cid}: only in {'after' if a is None else 'before'}")
            continue
        if a["status"] != b["status"]:
            out.append(f"{cid}: status {a['status']} -> {b['status']}"
                       + (f" ({b.get('summary')})" if b["status"] in ("error", "skipped") else ""))
        elif a["status"] == "skipped" and a.get("summary") != b.get("summary"):
            out.append(f"{cid}: skipped for another reason: {a.get('summary')!r} -> "
                       f"{b.get('summary')!r}")
    fields = ["severity", "count", "value", "threshold"] + (["message"] if messages else []) \
        + (["evidence"] if evidence else [])
    fa, fb = findings_by_key(before), findings_by_key(after)
    for key in sorted(fa.keys() | fb.keys(), key=str):
        cid, metric, subject, splits = key
        name = f"{cid} {metric} [{subject}] {'/'.join(splits)}"
        xs, ys = fa.get(key, []), fb.get(key, [])
        if len(xs) != len(ys):
            out.append(f"{name}: {len(xs)} finding(s) -> {len(ys)}")
        for i, (x, y) in enumerate(zip(xs, ys)):
            for field in fields:
                if not same_value(x.get(field), y.get(field), rel):
                    def shown(v):
                        return json.dumps(v, default=str)[:160]
                    out.append(f"{name}{f' #{i + 1}' if len(xs) > 1 else ''}: {field} "
                               f"{shown(x.get(field))} -> {shown(y.get(field))}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rel", type=float, default=1e-9, help="relative tolerance of floats")
    ap.add_argument("--messages", action="store_true", help="compare messages too")
    ap.add_argument("--evidence", action="store_true", help="compare evidence too")
    args = ap.parse_args(argv)
    diffs = differences(load(args.before), load(args.after), rel=args.rel,
                        messages=args.messages, evidence=args.evidence)
    for line in diffs:
        print(line)
    n = sum(len(v) for v in findings_by_key(load(args.after)).values())
    print(f"{len(diffs)} difference(s); {n} findings in {args.after}", file=sys.stderr)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
