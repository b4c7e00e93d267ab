"""The spark engine's row checks that predate the family modules -- ``leakage.group_overlap``
(declared groups and ids), ``leakage.duplicates`` (exact copies, with the same chance baseline),
``leakage.temporal`` (time ranges) -- and the categorical part of ``drift.label``; measured with
:class:`~auditor.engines.Engine` operations and judged by the polars detectors' own functions.
Which check runs where on Spark: :mod:`auditor.sparktwins.spark_dispatch`.
"""
from __future__ import annotations

from typing import Any

from auditor.loading.data import Kind, LabelKind
from auditor.engines import NOT_ON_SPARK
from auditor.sparktwins.spark_rows import _clock, future_values, near_and_conflicts
from auditor.errors import NotApplicable
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_count, fmt_rows, grade, share


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


# ---------------------------------------------------------------------------------------------
# drift.label, drift.features (categorical and boolean columns)
# ---------------------------------------------------------------------------------------------

def _samples(data: Any, split: str, kinds: dict[str, Kind]) -> dict[str, Any]:
    from auditor.stats.drift import Sample

    out = {}
    for col, kind in kinds.items():
        counts, missing = data.cached(("spark.category_counts", split, col),
                                      lambda: data.engine.category_counts(split, col))
        out[col] = Sample(kind, data.rows(split), missing, counts=counts)
    return out


def _comparisons(data: Any) -> list[tuple[str, str]]:
    names = data.split_names
    first = names[0]
    return [(first, s) for s in names[1:]] + [(names[i], names[i + 1])
                                              for i in range(1, len(names) - 1)]


def label_drift(check: Any, data: Any) -> list[Finding]:
    from auditor.detectors.drift import compare_all
    from auditor.judging.drift_verdicts import describe_drift, evidence, rounded, unseen_finding

    y = data.label
    if not y:
        raise NotApplicable("no label column declared")
    pairs = _comparisons(data)
    if not pairs:
        raise NotApplicable("only one split and no reference: nothing to compare")
    if data.label_kind == LabelKind.NUMERIC:
        raise NotApplicable("drift of a numeric label (exact KS over every value) is "
                            + NOT_ON_SPARK)
    kind = Kind.CATEGORICAL
    samples = {n: _samples(data, n, {y: kind}) for n in data.split_names}
    distinct = sorted(set().union(*(s[y].counts["value"].to_list() for s in samples.values())))
    if not distinct:
        raise NotApplicable(f"label {y!r} is missing in every row")
    if len(distinct) == 1:
        raise NotApplicable(f"label {y!r} has a single class ({distinct[0]!r}) in every "
                            "split: no distribution to compare")
    findings = []
    for ref, cur in pairs:
        ((cd, v),) = compare_all(check, [y], samples[ref], samples[cur], data.seed)
        cd.all_unique = False
        message, count = describe_drift(cd, v, ref, cur, check.alpha)
        findings.append(Finding(
            severity=v.severity, message=message, metric=v.metric, value=rounded(v.value),
            threshold=v.threshold, count=count, subject=y, splits=[ref, cur],
            evidence=evidence(check, cd, v, ref, cur, samples[ref][y], samples[cur][y])))
        if cd.n_new and cd.unseen_rows:
            findings.append(unseen_finding(check, cd, ref, cur, label=True))
    return findings


# ---------------------------------------------------------------------------------------------
# leakage.temporal
# ---------------------------------------------------------------------------------------------

def temporal(check: Any, data: Any) -> list[Finding]:
    """Ranges, rows dated before the previous split's end, reversed splits, short gaps: from
    per-split min/max/null counts and range counts of the time column (datetime features'
    ``future_values`` and the example rows are not yet computed on Spark)."""
    from auditor.detectors.temporal import (DAY_US, null_time_findings, parse_duration,
                                           reversed_finding)
    from auditor.engines.spark_engine import SparkEngine

    col = data.columns.time
    if not col:
        raise NotApplicable("no time column declared")
    clock, expr = _clock(data, col)
    eng = SparkEngine({s: df.select(expr.alias("t")) for s, df in data.splits.items()})
    prof = {s: eng.column_profiles(s, ["t"])["t"] for s in data.split_names}
    if all(p.missing == p.rows for p in prof.values()):
        raise NotApplicable(f"time column {col!r} is null in every row")
    num = (lambda v: v) if not clock.is_time else (lambda v: None if v is None else int(v))
    ranges = {s: (num(p.min), num(p.max), p.rows - p.missing, p.missing) for s, p in prof.items()}
    gap_us = parse_duration(check.min_gap)
    findings = [check._ranges(data, col, clock, ranges, gap_us),
                *null_time_findings(data, col, clock, ranges)]
    for earlier, later in data.pairs():
        lo_a, hi_a, n_a, _ = ranges[earlier]
        lo_b, hi_b, n_b, _ = ranges[later]
        if not n_a or not n_b:
            continue
        if hi_b < lo_a:
            findings.append(reversed_finding(col, clock, earlier, later, ranges))
        else:
            count = eng.count_between(later, "t", hi=hi_a)
            value = share(count, n_b)
            of = f"{later} rows" + (f" with a {col}" if n_b < data.rows(later) else "")
            evidence: dict[str, Any] = {}
            if count:
                evidence["offending"] = {"rows": count, f"{earlier} ends": clock.text(hi_a)}
            findings.append(Finding(
                severity=grade(value, warn=check.warn_above, fail=check.fail_above), subject=col,
                splits=[earlier, later], metric="rows_before_previous_end", value=value,
                threshold=check.fail_above, count=count,
                message=f"{fmt_rows(count, n_b, of)} are dated before the end of {earlier} "
                        f"({clock.text(hi_a)})", evidence=evidence))
        if gap_us > 0 and clock.is_time and lo_b - hi_a < gap_us:
            count = eng.count_between(later, "t", lo=hi_a, hi=hi_a + gap_us)
            if count or lo_b >= hi_a:
                gap = lo_b - hi_a
                start = (f"{later} starts {clock.span(gap)} after the end of {earlier}"
                         if gap >= 0 else
                         f"{later} starts {clock.span(-gap)} before the end of {earlier}")
                findings.append(Finding(
                    severity=Severity.FAIL, subject=col, splits=[earlier, later],
                    metric="gap_shorter_than_min_gap", value=gap / DAY_US,
                    threshold=gap_us / DAY_US, count=count,
                    message=f"{start}, less than min_gap {check.min_gap}: "
                            f"{fmt_rows(count, n_b, f'{later} rows')} are dated within "
                            f"{check.min_gap} after {earlier} ends ({clock.text(hi_a)})"))
    return findings + future_values(check, data, col, clock, expr)


# ---------------------------------------------------------------------------------------------
# model probes on a driver-side sample
# ---------------------------------------------------------------------------------------------
