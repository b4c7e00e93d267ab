"""Waivers: accepted findings, each with a reason, an owner and an expiry date.

A waiver names a check id, a subject (a column name, a list of names, a glob, or ``""`` for the
dataset as a whole) and optionally the splits and the metric; it also covers the findings on
the columns that a matched finding names as copies of its subject. Every warn/fail finding it
matches keeps its numbers and is marked ``waived: {reason, owner, expires}``; a waived finding
does not count for the exit code nor for the check's and the report's status. So that waivers
cannot rot silently, the run reports them in a check of their own, ``audit.waivers``:

- ``warn`` for a waiver past its expiry date (its findings count again from that day on; a
  waiver holds through its ``expires`` date, compared with today's date in UTC);
- ``warn`` for a waiver that matched no warn/fail finding (the problem is gone, or the waiver
  names the wrong check, subject or splits: delete or fix it; or its check crashed, was
  skipped or is not in the suite, which the message says);
- ``info`` for each waiver applied, with the number of findings it covers.
"""
from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any

from auditor.core.config import Waiver
from auditor.report.results import (CheckResult, Finding, Severity, Status, status_from_findings,
                                    summarize)

CHECK_ID = "audit.waivers"


def parse_waivers(raw: Any) -> list[Waiver]:
    """Validate a list of waiver mappings (as the Python API receives them)."""
    from pydantic import TypeAdapter, ValidationError

    from auditor.errors import ConfigError

    try:
        return TypeAdapter(list[Waiver]).validate_python(raw or [])
    except ValidationError as err:
        e = err.errors()[0]
        key = "".join(f".{p}" for p in e["loc"] if p not in ("str", "list[str]"))
        msg = str(e["msg"]).removeprefix("Value error, ")
        if e["loc"][-1:] in (("str",), ("list[str]",)):
            msg = "must be a column name, a list of column names, or \"\" for the dataset"
        raise ConfigError(f"waivers{key}: {msg}") from None


def _with_copies(w: Waiver, results: list[CheckResult],
                 hits: list[tuple[CheckResult, Finding]]) -> list[tuple[CheckResult, Finding]]:
    """``hits`` and the findings of the same check on the columns a hit names as copies of
    its subject (``evidence.grading.copies_not_counted``: the same field written twice, such
    as ``balance`` and ``2 * balance + 1``), matched as the waiver matches otherwise (splits,
    metric): accepting a column accepts what its own finding calls its copies."""
    from auditor.core.config import base_metric

    # (copy, splits, metric) of each hit that names copies: a copy is one on those splits only
    copies = {(c, tuple(sorted(f.splits)), base_metric(f.metric)) for _, f in hits
              for c in ((f.evidence.get("grading") or {}).get("copies_not_counted") or {})}
    if not copies:
        return hits
    taken = {id(f) for _, f in hits}
    return hits + [(c, f) for c in results if c.id == w.check for f in c.findings
                   if id(f) not in taken and isinstance(f.subject, str)
                   and (f.subject, tuple(sorted(f.splits)), base_metric(f.metric)) in copies
                   and w.model_copy(update={"subject": f.subject}).matches(c.id, f)]


def _closest(w: Waiver, check: CheckResult) -> str:
    """`` (the closest finding: ...)``: a warn/fail finding of the waiver's check on a subject
    it covers, whose splits or metric differ from the waiver's (a waiver pinned to train ->
    test when the finding is now on train -> val), else ``""``."""
    from auditor.core.config import base_metric

    near = [f for f in check.findings if f.severity != Severity.INFO and w.covers(f.subject)]
    if not near:
        return ""
    f = near[0]
    differ = [what for what, off in (
        (f"splits {' → '.join(f.splits)}", w.splits is not None
         and set(w.splits) != set(f.splits)),
        (f"metric {f.metric}", w.metric is not None
         and base_metric(w.metric) != base_metric(f.metric))) if off]
    return (f" (the closest finding: {f.severity} on {w.check} / "
            f"{', '.join(f.subject) if isinstance(f.subject, list) else f.subject or '(dataset)'}"
            f" with {' and '.join(differ)}: the waiver's "
            f"{' and '.join(d.split()[0] for d in differ)} differ)") if differ else ""


def _days(delta: Any) -> str:
    return f"{delta.days:,} day{'s' * (delta.days != 1)}"


def today_utc() -> date:
    return datetime.now(timezone.utc).date()


def apply_waivers(results: list[CheckResult], waivers: list[Waiver], *,
                  today: date | None = None) -> CheckResult | None:
    """Mark the findings the live waivers match (in place), regrade the affected checks, and
    return the ``audit.waivers`` check describing every waiver (``None`` without waivers)."""
    if not waivers:
        return None

    today = today or today_utc()
    findings: list[Finding] = []
    for w in waivers:
        hits = _with_copies(w, results, [(c, f) for c in results for f in c.findings
                                         if w.matches(c.id, f)])
        subject = w.subject
        if w.expires < today:
            findings.append(Finding(
                severity=Severity.WARN, metric="waiver_expired", subject=subject,
                splits=list(w.splits or []), count=len(hits),
                value=float((today - w.expires).days),
                message=f"The waiver for {w.label()} (owner {w.owner}) expired on "
                        f"{w.expires.isoformat()}, {_days(today - w.expires)} ago; "
                        + (f"the {len(hits):,} finding{'s' * (len(hits) != 1)} it matches "
                           f"count{'s' * (len(hits) == 1)} again" if hits else
                           "it matches no warn/fail finding of this run either")
                        + ". Fix the data, or renew the waiver with a new date.",
                evidence={"waiver": {**w.mark(), "check": w.check}}))
            continue
        if not hits:
            ran = next((c for c in results if c.id == w.check), None)
            why = ("the suite does not run that check; delete the waiver or run a suite that "
                   "has it" if ran is None else
                   f"{w.check} {'crashed' if ran.status == Status.ERROR else 'was skipped'} "
                   "in this run, so the waiver could not be checked; it applies again when "
                   "the check runs" if ran.status in (Status.ERROR, Status.SKIPPED) else
                   "the problem is gone or the waiver names the wrong check, subject or "
                   "splits; delete or fix it" + _closest(w, ran))
            findings.append(Finding(
                severity=Severity.WARN, metric="waiver_unmatched", subject=subject,
                splits=list(w.splits or []), count=0, value=0.0,
                message=f"The waiver for {w.label()} (owner {w.owner}) matched 0 warn/fail "
                        f"findings of this run: {why}.",
                evidence={"waiver": {**w.mark(), "check": w.check}}))
            continue
        for c, f in hits:
            f.waived = w.mark()
        findings.append(Finding(
            severity=Severity.INFO, metric="waiver_applied", subject=subject,
            splits=list(w.splits or []), count=len(hits), value=float(len(hits)),
            message=f"The waiver for {w.label()} covers {len(hits):,} finding"
                    f"{'s' * (len(hits) != 1)} (owner {w.owner}, until "
                    f"{w.expires.isoformat()}): {w.reason}",
            evidence={"waived": [{"check": c.id, "severity": str(f.severity),
                                  "metric": f.metric, "value": f.value,
                                  "message": f.message} for c, f in hits[:20]]}))
    for c in results:
        if c.status in (Status.ERROR, Status.SKIPPED) or not any(f.waived for f in c.findings):
            continue
        c.status = status_from_findings(c.findings)
        counted = [f for f in c.findings if f.waived is None]
        n = len(c.findings) - len(counted)
        c.summary = (summarize(counted) if any(f.severity != Severity.INFO for f in counted)
                     else "No finding that counts is above the thresholds.") + \
            f" ({n:,} waived finding{'s' * (n != 1)})"
    return CheckResult(
        id=CHECK_ID, title="Waivers (accepted findings)", status=status_from_findings(findings),
        duration_s=0.0, summary=summarize(findings) if any(
            f.severity != Severity.INFO for f in findings)
        else f"{len(waivers):,} waiver{'s' * (len(waivers) != 1)} applied, none expired "
             "or unmatched.",
        findings=findings, description=(__doc__ or "").split("\n\n")[1].replace("\n", " "))
