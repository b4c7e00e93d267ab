"""The polars engine's operations on numeric values (:class:`~auditor.engines.operations.Values`)
and on levels, over the loaded frames: quantiles (exact), order statistics, the most repeated
value, distinct counts and level spreads (:class:`~auditor.engines.operations.Operations`).

Values are read as float64 with NaN as null, nulls dropped. Quantiles are linear (numpy's
default; for the median the midpoint of the two middle values). Quantiles of many columns over
the same splits are computed together: a tall frame :data:`QUANTILE_BATCH` columns per select,
each batch made contiguous first (a select runs its expressions in parallel, each holding a
sorted copy of its column); a short frame (at most :data:`LONG_ROWS` rows) in long form, the
columns stacked into (column, value) and the quantiles computed per column by one group-by,
:data:`LONG_CELLS` values at a time (a select costs ~50 us per expression whatever the rows:
10,000 columns of 100 rows took 9 s in selects, 0.3 s in long form; the values are identical).
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import polars as pl

from auditor.engines.operations import EXACT_BAND, Bracket, OrderStat, Values
from auditor.stats.long_form import COLUMN, LONG_ROWS, VALUE, floats, long_values

QUANTILE_BATCH = 4  # columns per select on a tall frame

Frames = Mapping[str, pl.DataFrame]


def values_of(frames: Frames, v: Values) -> pl.Series:
    """The values of ``v`` (nulls dropped, bounds applied), in stored order."""
    x = pl.concat([frames[s].select(floats(pl.col(v.column))).to_series() for s in v.splits])
    x = x.drop_nulls()
    keep = pl.lit(True)
    e = pl.col(v.column)
    if v.lo is not None:
        keep = keep & (e >= v.lo)
    if v.hi is not None:
        keep = keep & (e <= v.hi)
    if v.near is not None:
        keep = keep & ((e - v.at).abs() <= v.near)
    if v.far is not None:
        keep = keep & ((e - v.at).abs() > v.far)
    return x.to_frame(v.column).filter(keep).to_series()


def _bounded(v: Values) -> bool:
    return any(b is not None for b in (v.lo, v.hi, v.near, v.far))


def quantiles(frames: Frames, requests: Sequence[tuple[Values, int]], qs: Sequence[float]
              ) -> list[list[Bracket]]:
    """Exact linear quantiles: unbounded requests on the same splits computed together."""
    out: list[list[Bracket] | None] = [None] * len(requests)
    together: dict[tuple[str, ...], list[tuple[int, str]]] = {}
    for i, (v, _) in enumerate(requests):
        if _bounded(v):
            x = values_of(frames, v)
            out[i] = [_exact(x.quantile(q, "linear")) for q in qs]
        else:
            together.setdefault(v.splits, []).append((i, v.column))
    for splits, items in together.items():
        cols = list(dict.fromkeys(c for _, c in items))
        frame = pl.concat([frames[s].select(pl.col(cols)) for s in splits], rechunk=False)
        got = column_quantiles(frame, cols, qs)
        for i, c in items:
            out[i] = [_exact(q) for q in got[c]]
    return out  # type: ignore[return-value]


def _exact(q: float | None) -> Bracket:
    v = math.nan if q is None else float(q)
    return Bracket(v, v, v)


def column_quantiles(frame: pl.DataFrame, cols: list[str], qs: Sequence[float]
                     ) -> dict[str, list[float | None]]:
    """Per column of ``frame``, its linear quantiles at ``qs`` (None without a value)."""
    out: dict[str, list[float | None]] = {}
    if 0 < frame.height <= LONG_ROWS:
        for long in long_values(frame, cols):
            got = long.drop_nulls(VALUE).group_by(COLUMN, maintain_order=True).agg(
                pl.col(VALUE).quantile(q, "linear").alias(f"q{j}") for j, q in enumerate(qs))
            out.update({row[0]: list(row[1:]) for row in got.iter_rows()})
        return {c: out.get(c, [None] * len(qs)) for c in cols}
    for b in range(0, len(cols), QUANTILE_BATCH):
        part = cols[b:b + QUANTILE_BATCH]
        sel = frame.select(part)
        sel = sel.rechunk() if sel.n_chunks() > 1 else sel
        row = sel.select(floats(pl.col(c)).drop_nulls().quantile(q, "linear").alias(f"{i}|{j}")
                         for i, c in enumerate(part) for j, q in enumerate(qs)).row(0)
        k = len(qs)
        out.update({c: list(row[i * k:(i + 1) * k]) for i, c in enumerate(part)})
    return out


def order_statistics(frames: Frames, requests: Sequence[OrderStat]
                     ) -> list[tuple[float, float]]:
    out = []
    for r in requests:
        x = values_of(frames, r.values).sort()
        out.append((float(x[r.k0]), float(x[r.k1])))
    return out


def most_repeated(frames: Frames, values: Sequence[Values]) -> list[int]:
    out = []
    for v in values:
        x = values_of(frames, v)
        most = x.value_counts(name="n")["n"].max() if x.len() else 0
        out.append(int(most or 0))  # type: ignore[arg-type]
    return out


def _union(frames: Frames, cols: Sequence[str], splits: Sequence[str]) -> pl.DataFrame:
    """``cols`` of ``splits`` stacked, float NaN as null."""
    frame = pl.concat([frames[s].select(list(cols)) for s in splits], rechunk=False)
    return frame.with_columns(pl.col(c).fill_nan(None) for c, t in frame.schema.items()
                              if t.is_float())


def distinct_counts(frames: Frames, columns: Sequence[str], splits: Sequence[str], *,
                    missing_level: bool = False) -> dict[str, int]:
    cols = list(dict.fromkeys(columns))
    if not cols:
        return {}
    raw = pl.concat([frames[s].select(pl.col(cols)) for s in splits], rechunk=False)
    floats_ = {c for c, t in raw.schema.items() if t.is_float()}
    row = raw.select(
        *((pl.col(c).fill_nan(None) if c in floats_ else pl.col(c)).drop_nulls().n_unique()
          .alias(f"d{i}") for i, c in enumerate(cols)),
        *(pl.col(c).is_null().any().alias(f"m{i}") for i, c in enumerate(cols)),
        *((pl.col(c).is_nan().any() if c in floats_ else pl.lit(False)).alias(f"a{i}")
          for i, c in enumerate(cols))).row(0)
    k = len(cols)
    return {c: int(row[i]) + (int(bool(row[k + i])) + int(bool(row[2 * k + i]))
                              if missing_level else 0) for i, c in enumerate(cols)}


def level_spreads(frames: Frames, key: str, columns: Sequence[str], splits: Sequence[str]
                  ) -> dict[str, tuple[int, int]]:
    cols = [c for c in dict.fromkeys(columns) if c != key]
    if not cols:
        return {}
    frame = _union(frames, [key, *cols], splits)
    per = frame.group_by(key).agg(pl.col(c).drop_nulls().n_unique() for c in cols)
    groups = per.select((pl.col(c) >= 1).sum() for c in cols).row(0)
    most = per.select(pl.col(c).max() for c in cols).row(0)
    return {c: (int(g or 0), int(m or 0)) for c, g, m in zip(cols, groups, most)}


def continuous_columns(frame: pl.DataFrame, columns: Sequence[str], share: float
                       ) -> list[str]:
    """:meth:`~auditor.engines.operations.Operations.continuous_columns` of one frame: the
    ``columns`` (booleans never) with n > 1 non-null values, u >= ``share`` n of them
    distinct. u is sketched (``approx_n_unique``, HyperLogLog: ~0.8% relative error) and
    counted exactly where the sketch lies within ``EXACT_BAND`` of the cut, as on Spark:
    the decision is the exact one but for a sketch error beyond ten standard errors (exact
    counts of every column were a fifth of leakage.duplicates at 1M rows)."""
    schema = frame.schema  # built anew on every access: once, not once per column
    cand = [c for c in columns if schema[c] != pl.Boolean]
    if not cand:
        return []
    def distinct(c: str) -> pl.Expr:  # nested values have no sketch: counted exactly
        x = pl.col(c).drop_nulls()
        return x.n_unique() if schema[c].is_nested() else x.approx_n_unique()

    stats = frame.select(*(distinct(c).alias(f"u{i}") for i, c in enumerate(cand)),
                         *(pl.col(c).count().alias(f"n{i}") for i, c in enumerate(cand))).row(0)
    k = len(cand)
    u, n = list(stats[:k]), stats[k:]
    near = [i for i in range(k)
            if n[i] > 1 and abs(u[i] - share * n[i]) <= EXACT_BAND * share * n[i]]
    if near:
        exact = frame.select(pl.col(cand[i]).drop_nulls().n_unique() for i in near).row(0)
        for i, v in zip(near, exact):
            u[i] = v
    return [c for i, c in enumerate(cand) if n[i] > 1 and u[i] >= share * n[i]]
