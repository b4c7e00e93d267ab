"""Spark twin of ``leakage.duplicates`` (exact copies, with the same chance baseline); measured with
:class:`~auditor.engines.Engine` operations and judged by the polars detectors' own functions.
Which check runs where on Spark: :mod:`auditor.sparktwins.spark_dispatch`.
"""
from __future__ import annotations

from typing import Any

from auditor.loading.data import Kind
from auditor.sparktwins.spark_rows import near_and_conflicts
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_rows, grade, share


# ---------------------------------------------------------------------------------------------
# leakage.duplicates
# ---------------------------------------------------------------------------------------------

def duplicates(check: Any, data: Any) -> list[Finding]:
    """Exact copies across and within splits, near copies and conflicting labels from one
    :class:`~auditor.sparktwins.spark_rows.RowTable` (a 128-bit key per row, one ``groupBy``);
    judged by the polars detector's functions."""
    from auditor.sparktwins.spark_rows import RowTable

    cols = data.duplicate_columns()
    text_cols = [c for c in data.columns.text if c in cols and data.kinds.get(c) == Kind.TEXT]
    label = data.label if data.label in cols else None
    features = [c for c in cols if c != label]
    roles_only = not set(features) & (set(data.features) | set(text_cols))
    table = RowTable(data, cols, [] if roles_only else features, label,
                     None if text_cols else check.significant_digits) if cols else None
    try:
        findings: list[Finding] = []
        if table is not None:
            findings += [_exact(check, data, table, earlier, later)
                         for earlier, later in data.pairs()]
            findings += near_and_conflicts(check, data, table, text_cols,
                                           [] if roles_only else features, label)
        single = len(data.splits) == 1
        for split in data.split_names:
            count = table.repeated_rows(split) if table is not None else 0
            if count or single:
                value = share(count, data.rows(split))
                severity = grade(value, warn=check.within_warn_above)
                message = (f"{fmt_rows(count, data.rows(split), f'{split} rows')} are exact "
                           f"copies of another {split} row")
                if severity != Severity.INFO and not (table and table.continuous[split]):
                    severity = Severity.INFO
                    message += " (no continuous column: discrete rows repeat by chance, info)"
                findings.append(Finding(
                    severity=severity if severity != Severity.FAIL else Severity.WARN,
                    metric="within_split_duplicates", value=value,
                    threshold=check.within_warn_above, count=count, splits=[split],
                    message=message))
    finally:
        if table is not None:
            table.close()
    if roles_only and cols:
        for f in findings:
            f.severity = Severity.INFO
            f.message += (f" (no feature column: rows compared on {', '.join(cols)} only, "
                          "info)")
    return findings


def _exact(check: Any, data: Any, table: Any, earlier: str, later: str) -> Finding:
    from auditor.detectors.duplicates import _cell, exact_copy_finding

    count = table.copies(earlier, later)
    f = exact_copy_finding(check, data, count, earlier, later, table.chance(earlier, later))
    if count:
        cols = table.cols
        shown = cols[:8]
        f.evidence["examples"] = [
            {"values": ", ".join(f"{c}={_cell(v)}" for c, v in zip(shown, values or ()))
             + (f", … (+{len(cols) - len(shown)} columns)" if len(cols) > len(shown) else ""),
             f"rows in {earlier}": a, f"rows in {later}": b}
            for values, a, b in table.copy_examples(earlier, later, check.max_examples)]
    return f
