"""Numeric distributions on Spark when their values do not fit the driver: quantile sketches
and grid-cell counts (:class:`~auditor.stats.drift_binned.Binned`), the Spark side of
:meth:`~auditor.engines.operations.Operations.numeric_distributions`. The comparison from these
aggregates is engine-free (:func:`auditor.stats.drift_binned.compare_binned`).

Measuring, for every split and every numeric column at once (the splits unioned with a split
column ``_s``, grouped by it; datetimes as seconds since the epoch, NaN as missing, -0.0 as
0.0), in two Spark jobs whatever the number of splits and columns (two more only for
few-valued columns with a value off the grid, all such columns together):

1. One ``groupBy(_s).agg``: rows, non-missing count, min, max, population std, an approximate
   distinct count, and ``percentile_approx`` at j/``KS_GRID`` and at j/``n_bins`` with accuracy
   ``QUANTILE_ACCURACY`` in a reference split (one whose PSI edges are used), ``GRID_ACCURACY``
   in the last split, which only adds KS grid points (the sketch's cost grows with its
   accuracy) (rank error at most n / accuracy; exact -- numpy's inverted-CDF
   quantiles -- when the split has fewer non-missing values than the accuracy).
2. The fine grid of a column: the union over splits of those quantiles, min and max (finite
   values only). One pass of ``Bucketizer`` (binary search) over all columns
   puts each value in a cell: the grid point itself, or the open interval between two grid
   points; one ``groupBy`` gives the cell counts (at most 2 G + 1 per column).
3. Columns with few distinct values (approximate count <= 2 n_bins + 10): when no value falls
   between grid points, their exact value counts are the point cells (no job); otherwise one
   ``groupBy`` gives the exact value counts of all such columns, which join the grid, and
   step 2 runs again for them.

KS D from these cells is max |F_ref(g) - F_cur(g)| over the grid points g: a lower bound of the
exact D, which exceeds it by at most the largest share of either split inside one open interval
between grid points (stated in the finding's evidence, 0 when every value is a grid point).
Each split's own quantiles at j/KS_GRID are grid points, so the bound is about 1/KS_GRID (plus
the sketch's rank error). Also here: the values of a split its reference never had
(:func:`unseen_values`) and exact "every value unique" (:func:`all_unique`), asked only for the
columns whose finding states them.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from auditor.core.roles import Kind
from auditor.engines.spark_columns import col as _c, quoted, to_polars, unioned
from auditor.stats.drift_binned import Binned, Cells, Profile, grid_of

KS_GRID = 1000              # quantiles per split in a column's fine grid
QUANTILE_ACCURACY = 10_000  # percentile_approx accuracy: relative rank error 1e-4
GRID_ACCURACY = 2_000       # ... in a split that is never a reference (only its KS grid points)
DISTINCT_RSD = 0.05         # approx_count_distinct's relative error in the profiles (HLL++ with
# 512 registers: at 0.01 each column's sketch is ~1,600 aggregation fields, and 14 columns took
# 20 s to aggregate 5,000 rows); counts this near a decision are counted exactly
DISTINCT_BAND = 0.3         # sketched counts within 30% (six standard errors) of the cut


def numeric_expr(df: Any, col: str) -> Any:
    """The column as a double (datetimes: seconds since the epoch, as polars' ``_as_float``),
    NaN as null and -0.0 as 0.0."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    dtype = df.schema[col].dataType
    c = _c(col)
    if isinstance(dtype, T.DateType):
        x = F.unix_date(c).cast("double") * F.lit(86_400.0)
    elif isinstance(dtype, T.TimestampNTZType):
        x = F.expr(f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', "
                   f"{quoted(col)})").cast("double") / F.lit(1e6)
    elif isinstance(dtype, T.TimestampType):
        x = F.unix_micros(c).cast("double") / F.lit(1e6)
    else:
        x = c.cast("double")
    return F.when(~F.isnan(x), x + F.lit(0.0))


def _probs(steps: int) -> list[float]:
    return [j / steps for j in range(1, steps)]


def union(frames: dict[str, Any], cols: list[str], splits: Sequence[str] | None = None
           ) -> Any:
    """Every split's numeric columns in one frame: ``_s`` (the split's position in
    ``frames``) and ``_x{i}`` (:func:`numeric_expr` of ``cols[i]``), so one job
    measures all splits (grouped by ``_s``)."""
    from pyspark.sql import functions as F

    names = list(frames)
    return unioned(frames[s].select(F.lit(names.index(s)).alias("_s"),
                                    *[numeric_expr(frames[s], c).alias(f"_x{i}")
                                      for i, c in enumerate(cols)]) for s in splits or names)


def _stack(df: Any, exprs: list[Any], split: bool = True) -> Any:
    """Rows (``_s`` the frame's split column, kept with ``split``; c = column index, v = value)
    for every expression: one long frame, no job per column. Spark aggregates it map-side
    (partial HashAggregate) before the shuffle, so at most (splits x columns x distinct values)
    rows per partition move."""
    from pyspark.sql import functions as F

    keep = ["_s"] if split else []
    wide = df.select(*keep, *[e.alias(f"_v{i}") for i, e in enumerate(exprs)])
    body = ", ".join(f"{i}, `_v{i}`" for i in range(len(exprs)))
    return wide.select(*keep, F.expr(f"stack({len(exprs)}, {body}) as (c, v)"))


def profiles(frames: dict[str, Any], cols: list[str], n_bins: int) -> dict[str, dict[str, Profile]]:
    """Step 1 of the module docstring for every split at once: one ``groupBy(split).agg``."""
    from pyspark.sql import functions as F

    names = list(frames)
    # one sketch per column for both sets of quantiles (j / n_bins equals the same correctly
    # rounded double wherever it is also some j' / KS_GRID)
    probs = sorted(set(_probs(KS_GRID)) | set(_probs(n_bins)))
    at_bins = [probs.index(p) for p in _probs(n_bins)]
    array = F.expr("array(" + ", ".join(f"{p!r}D" for p in probs) + ")")  # one literal, not
    # ~1,000 ``F.lit`` round trips to the JVM
    refs = list(range(len(names) - 1))  # every split but the last is some pair's reference
    is_ref = F.col("_s").isin(refs)
    aggs = [F.count(F.lit(1)).alias("rows")]
    for i in range(len(cols)):
        x = F.col(f"_x{i}")
        aggs += [F.count(x).alias(f"n{i}"), F.min(x).alias(f"lo{i}"),
                 F.max(x).alias(f"hi{i}"), F.stddev_pop(x).alias(f"sd{i}"),
                 F.approx_count_distinct(x, DISTINCT_RSD).alias(f"d{i}"),
                 F.percentile_approx(F.when(is_ref, x), array, QUANTILE_ACCURACY
                                     ).alias(f"q{i}"),
                 F.percentile_approx(F.when(~is_ref, x), array, GRID_ACCURACY
                                     ).alias(f"g{i}")]
    got = {int(r["_s"]): r.asDict() for r in union(frames, cols).groupBy("_s").agg(*aggs)
           .collect()}
    cut = 2 * n_bins + 10  # few-valued at or below it (:func:`binned`): decided exactly
    near = sorted({i for r in got.values() for i in range(len(cols))
                   if abs(r[f"d{i}"] - cut) <= DISTINCT_BAND * cut})
    if near:
        for r in union(frames, [cols[i] for i in near]).groupBy("_s").agg(
                *[F.count_distinct(f"_x{j}").alias(f"d{j}") for j in range(len(near))]
                ).collect():
            got[int(r["_s"])].update({f"d{i}": r[f"d{j}"] for j, i in enumerate(near)})
    out: dict[str, dict[str, Profile]] = {}
    for o, s in enumerate(names):
        row = got.get(o)
        out[s] = {}
        for i, c in enumerate(cols):
            if row is None:  # an empty split has no group
                out[s][c] = Profile(0, 0, None, None, None, 0, np.array([]), np.array([]))
                continue
            rows, n = int(row["rows"]), int(row[f"n{i}"])
            q = np.array(row[f"q{i}" if o in refs else f"g{i}"] or [], dtype=float)
            out[s][c] = Profile(rows, rows - n, row[f"lo{i}"], row[f"hi{i}"], row[f"sd{i}"],
                                int(row[f"d{i}"]), q, q[at_bins] if len(q) else q)
    return out


def _value_counts(frames: dict[str, Any], todo: dict[str, list[str]], cap: int
                  ) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """Exact value counts of few-valued (split, column)s in one groupBy over all splits; a
    (split, column) with more than ``cap`` distinct values (the approximate count was low)
    gets none."""
    from pyspark.sql import functions as F

    names = list(frames)
    cols = list(todo)
    u = union(frames, cols)
    exprs = [F.when(F.col("_s").isin([names.index(s) for s in todo[c]]), F.col(f"_x{i}"))
             for i, c in enumerate(cols)]
    pairs = sum(len(v) for v in todo.values())
    rows = (_stack(u, exprs).where(F.col("v").isNotNull()).groupBy("_s", "c", "v").count()
            .limit(pairs * (cap + 1)).collect())
    by: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for r in rows:
        by.setdefault((int(r["_s"]), int(r["c"])), []).append((float(r["v"]), int(r["count"])))
    out = {}
    for (o, i), got in by.items():
        got.sort()
        if len(got) <= cap:
            out[(names[o], cols[i])] = (np.array([p[0] for p in got]),
                                        np.array([p[1] for p in got], dtype=np.int64))
    return out


def _splits_array(g: np.ndarray) -> list[float]:
    """Bucketizer splits putting a grid point g_k in bucket 2k + 1 and the open interval
    (g_{k-1}, g_k) in bucket 2k: -inf, g_0, next(g_0), g_1, next(g_1), ..., inf."""
    nxt = np.nextafter(g, np.inf)
    s = np.empty(2 * len(g) + 2)
    s[0], s[-1] = -np.inf, np.inf
    s[1:-1:2], s[2:-1:2] = g, nxt
    out = s.tolist()
    if out[-2] == np.inf:  # the largest finite double is a grid point
        out.pop(-2)
    return out


def bucketized(df: Any, splits: list[list[float]], inputs: list[str], outputs: list[str]
               ) -> Any:
    """``df`` with Spark ML's ``Bucketizer`` (binary search per value, invalid values kept in
    an extra bucket) applied to ``inputs``. The splits reach the JVM as one JSON string
    decoded by the parameter itself (``-Inf``/``Inf`` as strings): pyspark's wrapper sends
    every split value through its own py4j call, 4 s for 20 columns of 1,000 points."""
    import json

    def encoded(v: float) -> Any:
        return "Inf" if v == np.inf else "-Inf" if v == -np.inf else v

    session = df.sparkSession
    jb = session._jvm.org.apache.spark.ml.feature.Bucketizer()
    jb.setSplitsArray(jb.splitsArray().jsonDecode(
        json.dumps([[encoded(v) for v in s] for s in splits])))
    jb.setInputCols(jb.inputCols().jsonDecode(json.dumps(inputs)))
    jb.setOutputCols(jb.outputCols().jsonDecode(json.dumps(outputs)))
    jb.setHandleInvalid("keep")
    try:
        from pyspark.sql.classic.dataframe import DataFrame
    except ImportError:  # pyspark < 4
        from pyspark.sql import DataFrame  # type: ignore[assignment]
    return DataFrame(jb.transform(df._jdf), session)


def cells(frames: dict[str, Any], cols: list[str], grids: dict[str, np.ndarray]
          ) -> dict[str, dict[str, Cells]]:
    """Step 3 for every split at once: one Bucketizer pass over the union of the splits and
    one groupBy (split, column, cell), aggregated map-side; the counts reach the driver
    through Arrow (at most splits x columns x (2 G + 1) rows)."""
    from pyspark.sql import functions as F

    names = list(frames)
    out = {s: {c: Cells(grids[c], np.zeros(2 * len(grids[c]) + 1, dtype=np.int64))
               for c in cols} for s in names}
    usable = [c for c in cols if len(grids[c])]
    if not usable:
        return out
    binned = bucketized(union(frames, usable), [_splits_array(grids[c]) for c in usable],
                        [f"_x{i}" for i in range(len(usable))],
                        [f"_b{i}" for i in range(len(usable))])
    stacked = _stack(binned, [F.col(f"_b{i}").cast("int") for i in range(len(usable))])
    counts = to_polars(stacked.where(F.col("v").isNotNull()).groupBy("_s", "c", "v").count())
    for (o, i), part in counts.group_by(["_s", "c"]):
        target = out[names[int(o)]][usable[int(i)]].counts
        v = np.minimum(part["v"].to_numpy().astype(np.int64), len(target) - 1)
        np.add.at(target, v, part["count"].to_numpy().astype(np.int64))
    return out


def all_unique(frames: dict[str, Any], splits: Sequence[str], cols: list[str]
               ) -> dict[str, dict[str, bool]]:
    """Whether every non-missing value occurs once, per split (exact distinct counts of all
    ``cols`` in all ``splits``: one groupBy(split).agg)."""
    from pyspark.sql import functions as F

    names = list(frames)
    out = {s: {c: True for c in cols} for s in splits}  # an empty split: vacuously
    if not cols:
        return out
    u = union(frames, cols, splits)
    rows = u.groupBy("_s").agg(
        *[F.count_distinct(F.col(f"_x{i}")).alias(f"u{i}") for i in range(len(cols))],
        *[F.count(F.col(f"_x{i}")).alias(f"n{i}") for i in range(len(cols))]).collect()
    for r in rows:
        out[names[int(r["_s"])]] = {c: int(r[f"u{i}"]) == int(r[f"n{i}"])
                                    for i, c in enumerate(cols)}
    return out


def unseen_values(frames: dict[str, Any], split: str, refs: dict[str, np.ndarray], limit: int
                  ) -> dict[str, tuple[list[tuple[float, int]], int]]:
    """Values of ``split`` the reference never had, for every column of ``refs`` (column ->
    the reference's values) in one job: per column the ``limit`` most frequent (count, then
    value) with their rows, and how many distinct."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    cols = list(refs)
    if not cols:
        return {}
    u = union(frames, cols, [split])
    exprs = [F.when(~F.col(f"_x{i}").isin([float(v) for v in refs[c]]), F.col(f"_x{i}"))
             for i, c in enumerate(cols)]
    counts = (_stack(u, exprs, split=False).where(F.col("v").isNotNull())
              .groupBy("c", "v").count())
    w = Window.partitionBy("c")
    top = (counts.withColumn("rk", F.row_number().over(w.orderBy(F.desc("count"),
                                                                  F.asc("v"))))
           .withColumn("nd", F.count(F.lit(1)).over(w))
           .where(F.col("rk") <= limit).collect())
    by: dict[int, list[Any]] = {}
    for r in top:
        by.setdefault(int(r["c"]), []).append(r)
    out = {}
    for i, c in enumerate(cols):
        got = sorted(by.get(i, []), key=lambda r: int(r["rk"]))
        out[c] = ([(float(r["v"]), int(r["count"])) for r in got],
                  int(got[0]["nd"]) if got else 0)
    return out


def binned(frames: dict[str, Any], cols: list[str], kinds: dict[str, Kind], n_bins: int
           ) -> dict[str, dict[str, Binned]]:
    """Every split's :class:`Binned` of every numeric column, in two jobs whatever the number
    of splits and columns: the profiles (:func:`profiles`) and the cell counts on the shared
    grid (:func:`cells`). A few-valued column (distinct count <= 2 n_bins + 10: sketched,
    counted exactly within :data:`DISTINCT_BAND` of the cut)
    whose open cells are all empty has every value on the grid: its exact value counts are
    its point cells. Only a few-valued column with a value off the grid (rarer than one
    quantile step and not an extreme) costs two more jobs, for all such columns together: its
    exact value counts, then its cells on the grid with those values. ``unique`` is only a
    candidate (sketched distinct count >= 70% of the values, no grid point held twice):
    the exact count is :func:`all_unique`'s, asked for the columns whose finding states it."""
    names = list(frames)
    profs = profiles(frames, cols, n_bins)
    grids = {c: grid_of([profs[s][c] for s in names]) for c in cols}
    cell = cells(frames, cols, grids)
    cap = 4 * n_bins + 20
    todo: dict[str, list[str]] = {}
    for s in names:
        for c in cols:
            p, counts = profs[s][c], cell[s][c].counts
            if p.distinct > 2 * n_bins + 10 or p.rows == p.missing:
                continue
            if counts[0::2].any():
                todo.setdefault(c, []).append(s)
                continue
            on = counts[1::2] > 0
            if int(on.sum()) <= cap:
                p.values, p.counts = grids[c][on].copy(), counts[1::2][on].copy()
    if todo:
        for (s, c), (values, counts) in _value_counts(frames, todo, cap).items():
            profs[s][c].values, profs[s][c].counts = values, counts
        redo = list(todo)
        again = cells(frames, redo, {c: grid_of([profs[s][c] for s in names]) for c in redo})
        for s in names:
            cell[s].update(again[s])

    def maybe(s: str, c: str) -> bool:
        p, pts = profs[s][c], cell[s][c].counts[1::2]
        n = p.rows - p.missing
        return (n > 1 and p.distinct >= (1 - DISTINCT_BAND) * n
                and (not len(pts) or int(pts.max()) <= 1))

    last = names[-1]
    return {s: {c: Binned(kinds[c], profs[s][c], cell[s][c], maybe(s, c),
                          accuracy=GRID_ACCURACY if s == last else QUANTILE_ACCURACY,
                          grid_size=KS_GRID)
                for c in cols} for s in names}
