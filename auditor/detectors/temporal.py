"""Time order of the splits: overlapping or reversed ranges, short gaps, values from the future."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar


from auditor.core.checks import Cost, Needs
from auditor.core.roles import ColumnType, Kind, Roles
from auditor.detectors.measured import judged
from auditor.engines.operations import (Between, Condition, Examples, Exceeds, Num, Operations,
                                        Tally)
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
    needs: ClassVar[Needs] = Needs(roles=("time",))
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

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    # -- measure -------------------------------------------------------------------------------
    def measure(self, engine: Operations, roles: Roles) -> TemporalMeasures:
        """Per split the time range; per pair the later rows before the earlier end (and the
        in-order rest), rows inside ``min_gap``; per datetime feature the rows after their
        own time. Example rows only where something is flagged."""
        col = roles.columns.time
        assert col is not None  # needs: time
        clock = Clock.of(roles, col)
        t = Num(col)
        got = engine.ranges([t])
        ranges = {s: (r[t].min, r[t].max, r[t].present, r[t].missing) for s, r in got.items()}
        if all(n == 0 for _, _, n, _ in ranges.values()):
            raise NotApplicable(f"time column {col!r} is null in every row")
        gap_us = parse_duration(self.min_gap)
        asked: dict[str, list[Condition]] = {s: [] for s in roles.splits}
        index: dict[tuple[str, str, str], int] = {}

        def ask(split: str, what: str, pair: tuple[str, str], cond: Condition) -> None:
            index[(what, *pair)] = len(asked[split])
            asked[split].append(cond)

        for earlier, later in roles.pairs():
            lo_a, hi_a, n_a, _ = ranges[earlier]
            lo_b, _, n_b, _ = ranges[later]
            if not n_a or not n_b:
                continue
            ask(later, "before", (earlier, later), Between(t, hi=hi_a))
            ask(later, "after", (earlier, later), Between(t, lo=hi_a))
            if gap_us > 0 and clock.is_time and lo_b - hi_a < gap_us:
                ask(later, "gap", (earlier, later), Between(t, lo=hi_a, hi=hi_a + gap_us))
        features = roles.features_of(Kind.DATETIME) if clock.is_time else []
        own_end = Num(col, DAY_US - 1 if clock.is_date else 0)
        for f in features:
            for split in roles.splits:
                ask(split, "future", (f, split), Exceeds(Num(f), own_end))
        tallies = engine.tallies(asked)

        def tally(what: str, a: str, b: str) -> Tally | None:
            key = (what, a, b)
            if key not in index:
                return None
            return tallies[b if what != "future" else b][index[key]]

        pairs: dict[tuple[str, str], PairTimes] = {}
        examples: dict[tuple[str, str, str], Examples] = {}
        ids = [c for c in dict.fromkeys(roles.columns.ids) if c in roles.kinds]
        for earlier, later in roles.pairs():
            before = tally("before", earlier, later)
            if before is None:
                continue
            gap, after = tally("gap", earlier, later), tally("after", earlier, later)
            assert after is not None  # asked with "before"
            pairs[(earlier, later)] = PairTimes(before, after, gap)
            hi_a = ranges[earlier][1]
            if before.hits and ranges[later][1] >= ranges[earlier][0]:
                examples[("before", earlier, later)] = engine.examples(
                    later, Between(t, hi=hi_a), [t], self.max_examples, ids=ids)
            if gap is not None and gap.hits:
                examples[("gap", earlier, later)] = engine.examples(
                    later, Between(t, lo=hi_a, hi=hi_a + gap_us), [t], self.max_examples,
                    ids=ids)
        future: dict[str, list[tuple[str, Tally]]] = {}
        for f in features:
            future[f] = [(s, tally("future", f, s)) for s in roles.splits]  # type: ignore[misc]
            left = self.max_examples
            for s, tl in future[f]:
                if tl.hits and left > 0:
                    ex = engine.examples(s, Exceeds(Num(f), own_end), [t, Num(f)], left,
                                         ids=ids)
                    examples[("future", f, s)] = ex
                    left -= len(ex.values)
        return TemporalMeasures(
            column=col, clock=clock, splits=list(roles.splits), rows=dict(roles.rows),
            ranges=ranges, pairs=pairs, future=future, examples=examples,
            feature_clocks={f: Clock.of(roles, f) for f in features},
            datetime_features=bool(roles.features_of(Kind.DATETIME)))

    # -- judge ---------------------------------------------------------------------------------
    def judge(self, m: TemporalMeasures) -> list[Finding]:
        col, clock, ranges = m.column, m.clock, m.ranges
        gap_us = parse_duration(self.min_gap)
        findings = [self._ranges(m, gap_us), *null_time_findings(m.rows, col, clock, ranges)]
        for (earlier, later), times in m.pairs.items():
            lo_a, hi_a, _, _ = ranges[earlier]
            lo_b, hi_b, n_b, _ = ranges[later]
            if hi_b < lo_a:
                findings.append(reversed_finding(col, clock, earlier, later, ranges))
            else:
                findings.append(self._before(m, earlier, later, times))
            if times.gap is not None and (times.gap.hits or lo_b >= hi_a):
                findings.append(self._gap(m, earlier, later, times.gap, gap_us))
        for feature, counts in m.future.items():
            examples: list[dict[str, Any]] = []
            for split, _ in counts:
                ex = m.examples.get(("future", feature, split))
                if ex is not None:
                    examples += [{"split": split} | r for r in _rows(
                        ex, [clock, m.feature_clocks[feature]])]
            findings.append(future_finding(
                self, m.splits, col, clock, feature,
                [(s, t.hits, t.compared, t.largest) for s, t in counts],
                examples[:self.max_examples]))
        return findings

    # -- findings ------------------------------------------------------------------------------
    def _ranges(self, m: TemporalMeasures, gap_us: int) -> Finding:
        col, clock, ranges = m.column, m.clock, m.ranges
        rows = [clock.range_row(s, lo, hi) | {"rows with a time": n, "null rows": nulls}
                for s, (lo, hi, n, nulls) in ranges.items() if n]
        spans = "; ".join(f"{r['split']} {r['first']} → {r['last']}" for r in rows)
        gaps = []
        for i, a in enumerate(m.splits):
            for b in m.splits[i + 1:]:
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
        if not clock.is_time and m.datetime_features:
            notes.append(f"datetime features are not compared with {col}: it holds numbers")
        if notes:
            evidence["note"] = "; ".join(notes)
        return Finding(severity=Severity.INFO, subject=col, splits=list(m.splits),
                       metric="time_range", count=sum(r[2] for r in ranges.values()),
                       message=f"{col} ranges per split: {spans}", evidence=evidence)

    def _before(self, m: TemporalMeasures, earlier: str, later: str,
                times: PairTimes) -> Finding:
        col, clock = m.column, m.clock
        lo_a, hi_a, _, _ = m.ranges[earlier]
        n_b = m.ranges[later][2]
        hits = times.before
        count = hits.hits
        value = share(count, n_b)
        of = f"{later} rows" + (f" with a {col}" if n_b < m.rows[later] else "")
        evidence: dict[str, Any] = {}
        if count:
            bars = [(earlier, lo_a, hi_a)]
            if times.after.hits:
                bars.append((f"{later}, in order", times.after.smallest, times.after.largest))
            bars.append((f"{later}, before {earlier} ends", hits.smallest, hits.largest))
            evidence["chart"] = {
                "type": "ranges", "title": f"{col}: {later} against the end of {earlier}",
                "rows": [clock.bar(s, lo, hi) for s, lo, hi in bars],
                "lines": [clock.cell(hi_a)], "height": _chart_height(len(bars))}
            evidence["offending"] = {"rows": count, "earliest": clock.text(hits.smallest),
                                     "latest": clock.text(hits.largest),
                                     f"{earlier} ends": clock.text(hi_a)}
            evidence["examples"] = _rows(m.examples[("before", earlier, later)], [clock])
        return Finding(
            severity=grade(value, warn=self.warn_above, fail=self.fail_above), subject=col,
            splits=[earlier, later], metric="rows_before_previous_end", value=value,
            threshold=self.fail_above, count=count,
            message=f"{fmt_rows(count, n_b, of)} are dated before the end of {earlier} "
                    f"({clock.text(hi_a)})",
            evidence=evidence)

    def _gap(self, m: TemporalMeasures, earlier: str, later: str, tally: Tally,
             gap_us: int) -> Finding:
        clock = m.clock
        hi_a = m.ranges[earlier][1]
        lo_b, n_b = m.ranges[later][0], m.ranges[later][2]
        gap = lo_b - hi_a
        count = tally.hits
        start = (f"{later} starts {clock.span(gap)} after the end of {earlier}" if gap >= 0
                 else f"{later} starts {clock.span(-gap)} before the end of {earlier}")
        return Finding(
            severity=Severity.FAIL, subject=m.column, splits=[earlier, later],
            metric="gap_shorter_than_min_gap", value=gap / DAY_US, threshold=gap_us / DAY_US,
            count=count,
            message=f"{start}, less than min_gap {self.min_gap}: "
                    f"{fmt_rows(count, n_b, f'{later} rows')} are dated within {self.min_gap} "
                    f"after {earlier} ends ({clock.text(hi_a)})",
            evidence={"examples": _rows(m.examples[("gap", earlier, later)], [clock])}
            if count else {})


@dataclass(frozen=True)
class PairTimes:
    """One (earlier, later) pair: later rows dated before the earlier end (``before``), at
    or after it (``after``), and within ``min_gap`` after it (``gap``, when asked)."""

    before: Tally
    after: Tally
    gap: Tally | None


@dataclass(frozen=True)
class TemporalMeasures:
    """Everything :meth:`TemporalHoldout.judge` grades. ``ranges``: per split (first time,
    last time, rows with a time, rows without) in clock units; ``pairs``: the pairs whose
    splits both hold times; ``future``: per datetime feature and split the rows after their
    own time; ``examples`` keyed by (what, pair or feature, split)."""

    column: str
    clock: Clock
    splits: list[str]
    rows: dict[str, int]
    ranges: dict[str, tuple[Any, Any, int, int]]
    pairs: dict[tuple[str, str], PairTimes]
    future: dict[str, list[tuple[str, Tally]]]
    examples: dict[tuple[str, str, str], Examples]
    feature_clocks: dict[str, Clock]
    datetime_features: bool


def _rows(examples: Examples, clocks: list[Clock]) -> list[dict[str, Any]]:
    """Example rows for the evidence: the row number where the engine keeps row order, the
    declared ids (every engine), then each clock's value as text (rendered from epoch
    numbers: no Python datetime can overflow)."""
    taken = {"row", *(k.col for k in clocks)}
    out = []
    for i, values in enumerate(examples.values):
        row: dict[str, Any] = {"row": examples.positions[i]} if examples.positions else {}
        row |= {(f"id {c}" if c in taken else c): v[i] for c, v in examples.ids.items()}
        out.append(row | {k.col: k.cell(v) for k, v in zip(clocks, values)})
    return out


@dataclass(frozen=True)
class Clock:
    """How a time-like column becomes comparable numbers (epoch microseconds, UTC for zoned
    values, a date as its midnight; or the numbers of a numeric column) and back into text."""

    col: str
    is_time: bool
    is_date: bool = False
    zoned: bool = False

    @staticmethod
    def of(roles: Roles, col: str) -> Clock:
        if col not in roles.kinds:
            raise NotApplicable(f"column {col!r} has incompatible types across splits (see "
                                "schema.consistency)")
        kind, ctype = roles.kinds[col], roles.types.get(col)
        if kind == Kind.DATETIME:
            return Clock(col, True, ctype == ColumnType.DATE, ctype == ColumnType.DATETIME_TZ)
        if kind == Kind.NUMERIC and ctype != ColumnType.DURATION:
            return Clock(col, False)
        if kind == Kind.NULL:
            raise NotApplicable(f"time column {col!r} is null in every row")
        raise NotApplicable(f"time column {col!r} has type {ctype}; expected a date or "
                            "datetime (or numbers)")

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


def null_time_findings(rows: dict[str, int], col: str, clock: Any,
                       ranges: dict[str, tuple[Any, Any, int, int]]) -> list[Finding]:
    """One info finding per split with rows lacking a time (``ranges``: split -> (min, max,
    rows with a time, rows without))."""
    return [Finding(
        severity=Severity.INFO, subject=col, splits=[split], metric="null_time_rows",
        value=share(nulls, rows[split]), count=nulls,
        message=f"{fmt_rows(nulls, rows[split], f'{split} rows')} have no "
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


def future_finding(check: Any, split_names: list[str], col: str, clock: Any, feature: str,
                   counts: list[tuple[str, int, int, Any]],
                   examples: list[dict[str, Any]]) -> Finding:
    """``future_values`` of one datetime feature from per-split counts (split, rows with the
    feature after their own time, rows with both set, largest lead in clock units or None):
    value = rows after / rows with both over all splits, graded by ``future_warn_above`` /
    ``future_fail_above``."""
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
    splits = [r["split"] for r in per_split] or list(split_names)
    both = f"rows with both {feature} and {col}"
    return Finding(
        severity=grade(value, warn=check.future_warn_above, fail=check.future_fail_above),
        subject=feature, splits=splits, metric="future_values", value=value,
        threshold=check.future_fail_above, count=after_total,
        message=f"{fmt_rows(after_total, compared_total, both)} have {feature} after their "
                f"own {col} (information from the future)",
        evidence={"per_split": per_split, "examples": examples} if after_total else {})
