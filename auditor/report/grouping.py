"""Same-shaped findings of one check shown as one row: "30 columns ..." with its subjects.

Findings group when they share severity, metric, splits, waiver (none, or the same reason,
owner and expiry) and change (against a baseline). A group of one is the finding itself.
Every renderer (HTML, terminal, Markdown, JUnit) shows groups; report.json keeps every
finding.
"""
from __future__ import annotations

from typing import Any

from auditor.report.charts import clip_text
from auditor.report.ranks import SEVERITY_RANK, STATUS_RANK

MAX_SUBJECTS_SHOWN = 8


def worst_first(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Check dicts failing first, then crashed, warning, passing and skipped (stable)."""
    return sorted(checks, key=lambda c: -STATUS_RANK.get(str(c.get("status")), 0))


def subject_text(subject: Any) -> str:
    if isinstance(subject, list):
        return ", ".join(str(s) for s in subject)
    return str(subject) if subject else "(dataset)"


def _key(f: dict[str, Any], by_severity: bool = True) -> tuple[Any, ...]:
    waived = f.get("waived")  # the waiver itself: a group shows one reason, owner and date
    return (f.get("severity") if by_severity else None, f.get("metric"),
            tuple(f.get("splits") or ()),
            tuple(sorted((str(k), str(v)) for k, v in waived.items()))
            if isinstance(waived, dict) else waived is not None, f.get("change"))


def group_findings(findings: list[dict[str, Any]], *, by_severity: bool = True
                   ) -> list[dict[str, Any]]:
    """Groups in order of first appearance: ``{severity, metric, splits, subjects, findings,
    count, count_min, count_max, value_min, value_max, waived, change, message}``.

    ``by_severity=False`` (a log's lines): severity does not split a group, so one (metric,
    splits) is one line however its subjects are graded from night to night; the group's
    severity is its worst, its subjects sorted within each severity, worst first."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for f in findings:
        groups.setdefault(_key(f, by_severity), []).append(f)
    out = []
    for members in groups.values():
        if not by_severity:
            members = sorted(members, key=lambda f: (-SEVERITY_RANK.get(f.get("severity"), 0),
                                                     subject_text(f.get("subject"))))
        first = members[0]
        values = [f["value"] for f in members if isinstance(f.get("value"), (int, float))]
        counts = [f["count"] for f in members if isinstance(f.get("count"), int)]
        subjects = [subject_text(f.get("subject")) for f in members]
        out.append({
            "severity": first.get("severity"), "metric": first.get("metric"),
            "splits": list(first.get("splits") or []), "subjects": subjects,
            # count: the sum over the members (the same rows may count once per subject);
            # count_min/count_max: what a table shows, like value_min/value_max
            "findings": members, "count": sum(counts) if counts else None,
            "count_min": min(counts) if counts else None,
            "count_max": max(counts) if counts else None,
            "value_min": min(values) if values else None,
            "value_max": max(values) if values else None,
            "waived": first.get("waived"), "change": first.get("change"),
            "message": first.get("message", "") if len(members) == 1
            else group_message(members, subjects)})
    return out


def group_message(members: list[dict[str, Any]], subjects: list[str]) -> str:
    """'3 subjects flagged fail on psi (train → test): a, b, c. First: ...'; subjects of
    several severities (a log's group) are listed by severity: 'fail a; warn b, c'."""
    first = members[0]
    severities = list(dict.fromkeys(str(f.get("severity")) for f in members))
    splits = " → ".join(first.get("splits") or [])
    parts, left = [], MAX_SUBJECTS_SHOWN
    for sev in severities:
        names = [s for f, s in zip(members, subjects) if f.get("severity") == sev]
        shown = names[:max(left, 0)]
        more = len(names) - len(shown)
        text = ", ".join(shown) + (f" and {more:,} more" if more and shown else
                                   f"{more:,} more" if more else "")
        parts.append(text if len(severities) == 1 else f"{sev} {text}")
        left -= len(shown)
    flagged = f"flagged {severities[0]}" if len(severities) == 1 else "flagged"
    return (f"{len(members):,} subjects {flagged} on {first.get('metric')}"
            f"{f' ({splits})' if splits else ''}: {'; '.join(parts)}. "
            f"First: {first.get('message', '')}")


def counted(findings: list[dict[str, Any]], *, flagged: bool = True) -> list[dict[str, Any]]:
    """Findings that count (not waived, not resolved), only warn/fail when ``flagged``."""
    return [f for f in findings if f.get("waived") is None and f.get("change") != "resolved"
            and (not flagged or f.get("severity") in ("warn", "fail"))]


def printable(text: Any) -> str:
    """Text safe for a terminal: control characters (escape sequences) shown escaped."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in s)


def finding_lines(doc: dict[str, Any], *, limit: int = 20) -> list[str]:
    """Plain-text lines for the terminal: grouped warn/fail findings and resolved ones (one
    line per check, metric and splits whatever their severities, so that a subject crossing
    a threshold does not move to a line of its own; new, persisting and waived findings stay
    on lines of their own), then the waived findings in one line (accepted problems do not
    flood a nightly log; the report lists each with its waiver)."""
    lines: list[str] = []
    waived: list[str] = []
    for c in doc.get("checks", []):
        for g in group_findings([f for f in c.get("findings", [])
                                 if f.get("severity") in ("warn", "fail")
                                 or f.get("change") == "resolved"], by_severity=False):
            if g["waived"]:
                w = g["waived"]
                waived.append(f"{c['id']} {g['metric']} {', '.join(g['subjects'])} "
                              f"({w.get('owner')}, until {w.get('expires')}: "
                              f"{clip_text(w.get('reason'), 80)})")
                continue
            tag = "resolved" if g["change"] == "resolved" else g["severity"]
            change = f" [{g['change']}]" if g["change"] in ("new", "persisting") else ""
            lines.append(printable(f"{tag:>8}  {c['id']}{change}: {g['message']}"))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... and {len(lines) - limit:,} more (see the report)"]
    if waived:
        lines.append(printable(f"  waived  {len(waived):,} accepted by waivers: "
                               f"{'; '.join(waived)}"))
    return lines


def skipped_line(doc: dict[str, Any]) -> str | None:
    """The skipped checks in one line (their reasons are in the report), or None."""
    skipped = [c["id"] for c in doc.get("checks", []) if c.get("status") == "skipped"]
    if not skipped:
        return None
    return f"skipped {len(skipped):,} checks (reasons in the report): {', '.join(skipped)}"
