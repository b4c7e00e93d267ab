"""Time order of the splits: overlapping or reversed ranges, short gaps, values from the future."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost
from auditor.loading.data import AuditData, Kind
from auditor.errors import NotApplicable
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import check_params, fmt_count, fmt_rows, grade, is_share, share

US = {"w": 7 * 86_400_000_000, "d": 86_400_000_000, "h": 3_600_000_000, "m": 60_000_000,
      "s": 1_000_000}
DAY_US = US["d"]
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([wdhms])")
_EPOCH = datetime(1970, 1, 1)


def parse_duration(text: str) -> int:
    """``"30d"``, ``"12h"``, ``"1w2d"``, ``"90m"``, ``"0s"`` (or ``"0"``) -> microseconds."""
    s = str(text).strip().lower()
    if s == "0":
        return 0
    parts = _DURATION.findall(s)
    if not parts or _DURATION.sub("", s).strip():
        raise ValueError(f"min_gap must be a duration like '30d', '12h', '2w' or '0s' "
                         f"(units w, d, h, m, s); got {text!r}")
    return round(sum(float(n) * US[u] for n, u in parts))


@dataclass(frozen=True, kw_only=True)
class TemporalHoldout:
    """Later splits that are not strictly later in time than earlier splits (by the time column).

    A fail means the later split is not a true holdout from the future: the model trains on
    rows from the period it is evaluated on (or after it), so the score overstates performance
    on tomorrow's data. Fix: split by time (train before val before test, in the declared
    order), leave a gap of at least the label horizon, and drop rows dated out of order.

    Per split: the time range (chart) and rows with a null time (info). Per pair (earlier,
    later), over rows with a time:
    - ``rows_before_previous_end``: later rows dated strictly before the earlier split's last
      time / later rows; graded by ``warn_above`` / ``fail_above``.
    - ``reversed_splits`` (always fail): the later split ends before the earlier one begins.
    - ``gap_shorter_than_min_gap`` (fail, when ``min_gap`` > 0): later min - earlier max <
      ``min_gap`` (e.g. "30d" for a 30-day label horizon; units w, d, h, m, s); value and
      threshold in days; count = later rows dated within ``min_gap`` after the earlier end.
    - ``future_values`` (per datetime feature): rows whose feature value lies after the row's
      own time (information from the future) / rows where both are set; graded by
      ``future_warn_above`` / ``future_fail_above``.
    Defaults: any out-of-order row warns and more than 1% fails (a handful of late-arriving
    rows with skewed clocks is common; a percent is a leak); a reversed pair or a gap below
    ``min_gap`` always fails. Time zones follow data loading (mixed zones compared in UTC;
    naive times read as UTC). A date time column covers its whole day: a feature is from the
    future when it is later than the end of that day; a date feature counts from the start of
    its day. A numeric time column compares numbers (NaN counts as no time).
    """

    id: ClassVar[str] = "leakage.temporal"
    title: ClassVar[str] = "Time order of the splits"
    cost: ClassVar[Cost] = Cost.CHEAP
    warn_above: float = 0.0     # share of the later split's rows dated before the earlier end
    fail_above: float = 0.01
    min_gap: str = "0s"
    future_warn_above: float = 0.0   # share of rows with a datetime feature after their time
    future_fail_above: float = 0.01
    max_examples: int = 20

    def __post_init__(self) -> None:
        check_params(self, ("warn_above", "fail_above", "future_warn_above", "future_fail_above"),
                     is_share, "a share in [0, 1]")
        parse_duration(self.min_gap)
        check_params(self, ("max_examples",), lambda v: v >= 0, ">= 0")

    def run(self, data: AuditData) -> list[Finding]:
        col = data.columns.time
        if not col:
            raise NotApplicable("no time column declared")
        clock = Clock.of(data, col)
        times = {s: clock.values(df) for s, df in data.splits.items()}
        if all(t.null_count() == t.len() for t in times.values()):
            raise NotApplicable(f"time column {col!r} is null in every row")
        ranges = {s: (t.min(), t.max(), t.len() - t.null_count(), t.null_count())
                  for s, t in times.items()}
        gap_us = parse_duration(self.min_gap)
        findings = [self._ranges(data, col, clock, ranges, gap_us),
                    *null_time_findings(data, col, clock, ranges)]
        for earlier, later in data.pairs():
            lo_a, hi_a, n_a, _ = ranges[earlier]
            lo_b, hi_b, n_b, _ = ranges[later]
            if not n_a or not n_b:
                continue
            t = times[later]
            if hi_b < lo_a:
                findings.append(reversed_finding(col, clock, earlier, later, ranges))
            else:
                findings.append(self._before(data, col, clock, earlier, later, times[earlier], t,
                                             hi_a, n_b))
            if gap_us > 0 and clock.is_time and lo_b - hi_a < gap_us:
                gap = self._gap(data, col, clock, earlier, later, t, hi_a, lo_b, n_b, gap_us)
                if gap.count or lo_b >= hi_a:  # an overlap alone is rows_before_previous_end
                    findings.append(gap)
        if clock.is_time:
            for feature in data.features_of(Kind.DATETIME):
                findings.append(self._future(data, col, clock, feature))
        return findings

    # -- findings ------------------------------------------------------------------------------
    def _ranges(self, data: AuditData, col: str, clock: Clock,
                ranges: dict[str, tuple[Any, Any, int, int]], gap_us: int) -> Finding:
        rows = [clock.range_row(s, lo, hi) | {"rows with a time": n, "null rows": nulls}
                for s, (lo, hi, n, nulls) in ranges.items() if n]
        spans = "; ".join(f"{r['split']} {r['first']} → {r['last']}" for r in rows)
        gaps = []
        for a, b in data.pairs():
            if ranges[a][2] and ranges[b][2]:
                gaps.append({"splits": f"{a} → {b}",
                             "gap (later first - earlier last)": clock.span(
                                 ranges[b][0] - ranges[a][1])})
        evidence: dict[str, Any] = {
            "chart": {"type": "ranges", "title": f"{col} range per split", "rows": [
                clock.bar(s, lo, hi) for s, (lo, hi, n, _) in ranges.items() if n],
                "height": _chart_height(len(rows))},
            "ranges": rows}
        if gaps:
            evidence["gaps"] = gaps
        notes = []
        if gap_us > 0 and not clock.is_time:
            notes.append(f"min_gap ({self.min_gap}) is not applied: {col} holds numbers, not "
                         "dates")
        if not clock.is_time and data.features_of(Kind.DATETIME):
            notes.append(f"datetime features are not compared with {col}: it holds numbers")
        if notes:
            evidence["note"] = "; ".join(notes)
        return Finding(severity=Severity.INFO, subject=col, splits=data.split_names,
                       metric="time_range", count=sum(r[2] for r in ranges.values()),
                       message=f"{col} ranges per split: {spans}", evidence=evidence)

    def _before(self, data: AuditData, col: str, clock: Clock, earlier: str, later: str,
                t_a: pl.Series, t: pl.Series, hi_a: Any, n_b: int) -> Finding:
        mask = (t < hi_a).fill_null(False)
        count = int(mask.sum())
        value = share(count, n_b)
        of = f"{later} rows" + (f" with a {col}" if n_b < data.rows(later) else "")
        evidence: dict[str, Any] = {}
        if count:
            hits = t.filter(mask)
            rest = t.filter(~mask).drop_nulls()
            bars = [(earlier, t_a.min(), hi_a)]
            if rest.len():
                bars.append((f"{later}, in order", rest.min(), rest.max()))
            bars.append((f"{later}, before {earlier} ends", hits.min(), hits.max()))
            evidence["chart"] = {
                "type": "ranges", "title": f"{col}: {later} against the end of {earlier}",
                "rows": [clock.bar(s, lo, hi) for s, lo, hi in bars],
                "lines": [clock.cell(hi_a)], "height": _chart_height(len(bars))}
            evidence["offending"] = {"rows": count, "earliest": clock.text(hits.min()),
                                     "latest": clock.text(hits.max()),
                                     f"{earlier} ends": clock.text(hi_a)}
            evidence["examples"] = self._rows(data, later, clock, mask)
        return Finding(
            severity=grade(value, warn=self.warn_above, fail=self.fail_above), subject=col,
            splits=[earlier, later], metric="rows_before_previous_end", value=value,
            threshold=self.fail_above, count=count,
            message=f"{fmt_rows(count, n_b, of)} are dated before the end of {earlier} "
                    f"({clock.text(hi_a)})",
            evidence=evidence)

    def _gap(self, data: AuditData, col: str, clock: Clock, earlier: str, later: str,
             t: pl.Series, hi_a: Any, lo_b: Any, n_b: int, gap_us: int) -> Finding:
        gap = lo_b - hi_a
        mask = ((t >= hi_a) & (t < hi_a + gap_us)).fill_null(False)
        count = int(mask.sum())
        start = (f"{later} starts {clock.span(gap)} after the end of {earlier}" if gap >= 0
                 else f"{later} starts {clock.span(-gap)} before the end of {earlier}")
        return Finding(
            severity=Severity.FAIL, subject=col, splits=[earlier, later],
            metric="gap_shorter_than_min_gap", value=gap / DAY_US, threshold=gap_us / DAY_US,
            count=count,
            message=f"{start}, less than min_gap {self.min_gap}: "
                    f"{fmt_rows(count, n_b, f'{later} rows')} are dated within {self.min_gap} "
                    f"after {earlier} ends ({clock.text(hi_a)})",
            evidence={"examples": self._rows(data, later, clock, mask)} if count else {})

    def _future(self, data: AuditData, col: str, clock: Clock, feature: str) -> Finding:
        counts, examples = [], []
        fclock = Clock.of(data, feature)
        for split, df in data.splits.items():
            own_end = clock.values(df) + (DAY_US - 1 if clock.is_date else 0)
            f = fclock.values(df)
            both = own_end.is_not_null() & f.is_not_null()
            mask = (f > own_end).fill_null(False)
            after, compared = int(mask.sum()), int(both.sum())
            lead = int((f - own_end).filter(mask).max()) if after else None
            counts.append((split, after, compared, lead))
            if after and len(examples) < self.max_examples:
                examples += [{"split": split} | r for r in self._rows(
                    data, split, clock, mask, extra=fclock)][:self.max_examples - len(examples)]
        return future_finding(self, data, col, clock, feature, counts, examples)

    def _rows(self, data: AuditData, split: str, clock: Clock, mask: pl.Series,
              extra: Clock | None = None) -> list[dict[str, Any]]:
        """The first ``max_examples`` rows of ``mask``: row number and the time (and feature)
        as text (rendered from epoch numbers: no Python datetime can overflow)."""
        df = data.splits[split]
        rows = np.flatnonzero(mask.fill_null(False).to_numpy())[:self.max_examples]
        clocks = [clock] + ([extra] if extra else [])
        values = [k.values(df).gather(rows).to_list() for k in clocks]
        return [{"row": int(r)} | {k.col: k.cell(v[i]) for k, v in zip(clocks, values)}
                for i, r in enumerate(rows)]


@dataclass(frozen=True)
class Clock:
    """How a time-like column becomes comparable numbers (epoch microseconds, UTC for zoned
    values, a date as its midnight; or the numbers of a numeric column) and back into text."""

    col: str
    is_time: bool
    is_date: bool = False
    zoned: bool = False

    @staticmethod
    def of(data: AuditData, col: str) -> Clock:
        if col not in data.kinds:
            raise NotApplicable(f"column {col!r} has incompatible types across splits (see "
                                "schema.consistency)")
        dtype = next(iter(data.splits.values())).schema[col]
        kind = data.kinds[col]
        if kind == Kind.DATETIME:
            return Clock(col, True, isinstance(dtype, pl.Date),
                         bool(getattr(dtype, "time_zone", None)))
        if kind == Kind.NUMERIC and not isinstance(dtype, pl.Duration):
            return Clock(col, False)
        if kind == Kind.NULL:
            raise NotApplicable(f"time column {col!r} is null in every row")
        raise NotApplicable(f"time column {col!r} has type {dtype}; expected a date or datetime "
                            "(or numbers)")

    def values(self, df: pl.DataFrame) -> pl.Series:
        """The column as Int64 epoch microseconds (dates and datetimes) or Float64 numbers
        (NaN as null: a NaN time is no time)."""
        c = pl.col(self.col)
        if not self.is_time:
            return df.select(c.cast(pl.Float64).fill_nan(None)).to_series()
        if self.is_date:
            c = c.cast(pl.Datetime("us"))
        return df.select(c.dt.epoch("us").cast(pl.Int64)).to_series()

    def text(self, v: Any) -> str:
        """An ISO string for a value of :meth:`values` (a plain number for numeric time)."""
        if v is None:
            return "–"
        if not self.is_time:
            return f"{v:g}"
        try:
            moment = _EPOCH + timedelta(microseconds=int(v))
        except OverflowError:  # beyond Python's years 1-9999
            return f"{int(v) / (365.2425 * DAY_US):+,.0f} years from 1970-01-01"
        if self.is_date:
            return moment.date().isoformat()
        if self.zoned:
            return moment.replace(tzinfo=timezone.utc).isoformat()
        return moment.isoformat()

    def span(self, v: Any) -> str:
        """A difference of two :meth:`values` in words: ``12d 3h 4m``, ``-2d``, ``0s``."""
        if not self.is_time:
            return f"{v:g}"
        sign, us = ("-" if v < 0 else ""), abs(int(v))
        parts = []
        for unit in ("d", "h", "m", "s"):
            n, us = divmod(us, US[unit])
            if n:
                parts.append(f"{n}{unit}")
        if us and not parts:
            parts.append(f"{us}us")
        return sign + (" ".join(parts[:3]) or "0s")

    def range_row(self, split: str, lo: Any, hi: Any) -> dict[str, Any]:
        return {"split": split, "first": self.text(lo), "last": self.text(hi)}

    def cell(self, v: Any) -> Any:
        """A value for an evidence table: ISO text for times, the number itself else."""
        return self.text(v) if self.is_time or v is None else v

    def bar(self, label: str, lo: Any, hi: Any) -> dict[str, Any]:
        """A row of a ``ranges`` chart: ISO text for times (the chart reads them as dates),
        numbers for a numeric time column (text would not parse as a date)."""
        return {"label": label, "start": self.cell(lo), "end": self.cell(hi)}


def _chart_height(bars: int) -> float:
    return round(1.1 + 0.4 * bars, 2)


def null_time_findings(data: Any, col: str, clock: Any,
                       ranges: dict[str, tuple[Any, Any, int, int]]) -> list[Finding]:
    """One info finding per split with rows lacking a time (``ranges``: split -> (min, max,
    rows with a time, rows without)); shared by the polars check and the Spark engine."""
    return [Finding(
        severity=Severity.INFO, subject=col, splits=[split], metric="null_time_rows",
        value=share(nulls, data.rows(split)), count=nulls,
        message=f"{fmt_rows(nulls, data.rows(split), f'{split} rows')} have no "
                f"{col} (null{', NaN' if not clock.is_time else ''}); they are left "
                "out of the time comparisons")
        for split, (_, _, _, nulls) in ranges.items() if nulls]


def reversed_finding(col: str, clock: Any, earlier: str, later: str,
                     ranges: dict[str, tuple[Any, Any, int, int]]) -> Finding:
    """FAIL: every dated row of ``later`` lies before ``earlier`` begins (the splits run
    backwards); shared by the polars check and the Spark engine."""
    lo_a, hi_a, _, _ = ranges[earlier]
    lo_b, hi_b, n_b, _ = ranges[later]
    return Finding(
        severity=Severity.FAIL, subject=col, splits=[earlier, later],
        metric="reversed_splits", value=1.0, count=n_b,
        message=f"all {fmt_count(n_b)} {later} rows with a {col} are dated before "
                f"{earlier} begins ({later} ends {clock.text(hi_b)}, {earlier} "
                f"starts {clock.text(lo_a)}): the splits run backwards",
        evidence={"chart": {
            "type": "ranges", "title": f"{col}: {later} against {earlier}",
            "rows": [clock.bar(s, lo, hi)
                     for s, lo, hi in ((earlier, lo_a, hi_a), (later, lo_b, hi_b))],
            "height": _chart_height(2)},
            "ranges": [clock.range_row(earlier, lo_a, hi_a),
                       clock.range_row(later, lo_b, hi_b)]})


def future_finding(check: Any, data: Any, col: str, clock: Any, feature: str,
                   counts: list[tuple[str, int, int, Any]],
                   examples: list[dict[str, Any]]) -> Finding:
    """``future_values`` of one datetime feature from per-split counts (split, rows with the
    feature after their own time, rows with both set, largest lead in clock units or None):
    value = rows after / rows with both over all splits, graded by ``future_warn_above`` /
    ``future_fail_above`` (shared by the polars check and the Spark engine)."""
    per_split = []
    after_total = compared_total = 0
    for split, after, compared, lead in counts:
        after_total += after
        compared_total += compared
        if after:
            per_split.append({"split": split, "rows compared": compared,
                              "rows after own time": after,
                              "share": round(share(after, compared), 6),
                              "largest lead": clock.span(int(lead))})
    value = share(after_total, compared_total)
    splits = [r["split"] for r in per_split] or data.split_names
    both = f"rows with both {feature} and {col}"
    return Finding(
        severity=grade(value, warn=check.future_warn_above, fail=check.future_fail_above),
        subject=feature, splits=splits, metric="future_values", value=value,
        threshold=check.future_fail_above, count=after_total,
        message=f"{fmt_rows(after_total, compared_total, both)} have {feature} after their "
                f"own {col} (information from the future)",
        evidence={"per_split": per_split, "examples": examples} if after_total else {})
