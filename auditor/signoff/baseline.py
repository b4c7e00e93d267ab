"""Compare a run with a previous report: each warn/fail finding is ``new`` or ``persisting``,
and each warn/fail finding of the baseline that is gone is listed as ``resolved``. A fail is
``persisting`` only when the baseline held it as an unwaived fail (a warn that became a fail,
or a fail whose waiver has gone, is ``new``).

Two findings are the same when they have the same check id, metric (``psi`` and
``psi_beyond_trend`` are one: see ``base_metric``), subject (a list compared as a set) and
splits. Resolved findings are added to their check as ``info`` findings marked
``change: resolved`` (with the baseline's value and message), so they never count for the exit
code. ``--baseline last`` takes the newest earlier run: the last run kept in the ledger when
there is one, else the newest ``*/report.json`` next to the output directory.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from auditor.core.config import base_metric
from auditor.report.results import CheckResult, Finding, Report, Severity, read_report  # noqa: F401 (read_report: public here too)


def finding_key(check_id: str, f: dict[str, Any] | Finding) -> tuple[Any, ...]:
    get = f.get if isinstance(f, dict) else (lambda k: getattr(f, k))
    subject = get("subject")
    subject = tuple(sorted(subject)) if isinstance(subject, list) else subject
    return (check_id, base_metric(get("metric")), subject, tuple(get("splits") or ()))


def latest_report(out: Path, ledger: str | None = None) -> Path | None:
    """The report ``--baseline last`` means (see the module docstring); ``None`` on a first
    run (nothing earlier): the run then says so in its notes instead of failing."""
    if ledger:
        from auditor.signoff.ledger import last_report_path

        found = last_report_path(ledger)
        if found is not None and Path(found).is_file():
            return Path(found)
    here = out.resolve()
    candidates = [p for p in here.parent.glob("*/report.json") if p.parent != here]
    if not candidates:
        return None
    return max(candidates, key=lambda p: (p.stat().st_mtime_ns, str(p)))


NO_BASELINE_NOTE = ("--baseline last: no earlier report was found (first run), so no finding "
                    "is marked new, persisting or resolved.")


def mark_changes(report: Report, baseline: dict[str, Any], source: str) -> None:
    """Mark ``report``'s warn/fail findings new/persisting and add the resolved ones."""
    before: dict[tuple[Any, ...], dict[str, Any]] = {}
    for c in baseline.get("checks", []):
        for f in c.get("findings", []):
            if f.get("severity") in ("warn", "fail") and f.get("change") != "resolved":
                before.setdefault(finding_key(c["id"], f), f)
    seen: set[tuple[Any, ...]] = set()
    by_id: dict[str, CheckResult] = {c.id: c for c in report.checks}
    for c in report.checks:
        for f in c.findings:
            if f.severity == Severity.INFO:
                continue
            key = finding_key(c.id, f)
            old = before.get(key)
            # a fail the baseline held only as a warn, or as an accepted (waived) finding, has
            # just become a failure: new (so that --fail-on new gates on it); one waived on
            # both nights persists (waived, it gates on nothing either way)
            held = old is not None and (f.severity != Severity.FAIL or (
                old.get("severity") == "fail" and (old.get("waived") is None
                                                   or f.waived is not None)))
            f.change = "persisting" if held else "new"
            seen.add(key)
    resolved = 0
    for key, old in before.items():
        check = by_id.get(key[0])
        if key in seen or check is None or check.status in ("error", "skipped"):
            continue  # a check that did not run this time resolves nothing
        check.findings.append(Finding(
            severity=Severity.INFO, metric=old.get("metric", ""), value=old.get("value"),
            threshold=old.get("threshold"), count=old.get("count"),
            subject=old.get("subject", ""), splits=list(old.get("splits") or []),
            message=f"Resolved since the baseline ({old.get('severity')} there): "
                    f"{old.get('message', '')}", change="resolved"))
        resolved += 1
    counts = {"new": 0, "persisting": 0}
    for c in report.checks:
        for f in c.findings:
            if f.change in counts:
                counts[f.change] += 1
    report.baseline = {"path": source, "started_at": baseline.get("started_at"),
                       "status": baseline.get("status"), **counts, "resolved": resolved}
