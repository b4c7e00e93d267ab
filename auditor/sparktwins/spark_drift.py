"""Drift of numeric and datetime columns on the spark engine (``drift.features``, a numeric
``drift.label``): measured from aggregates, judged by the polars checks' own code
(:func:`auditor.detectors.drift.grade_all`, :mod:`auditor.judging.drift_verdicts`). The
comparison of one column from the aggregates (:class:`~auditor.stats.drift_binned.Profile`,
:class:`~auditor.stats.drift_binned.Cells`, :func:`~auditor.stats.drift_binned.compare_binned`)
is engine-free, in :mod:`auditor.stats.drift_binned`; this module measures them.

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

From the cell counts, on the driver: the ECDF at every grid point (exact), the PSI bins (the
reference's inverted-CDF quantiles at j/n_bins are grid points, so bin counts are exact for
those edges; one bin per value when the reference has at most n_bins distinct values, as the
polars engine), PSI / chi-square / Jensen-Shannon exactly as polars from those counts.

KS D is max |F_ref(g) - F_cur(g)| over the grid points g: a lower bound of the exact D, which
exceeds it by at most the largest share of either split inside one open interval between grid
points (the ECDFs are constant on every interval holding no value). That bound is stated in the
finding's evidence (``ks_d error bound``, 0 when every value is a grid point, so D is exact).
Each split's own quantiles at j/KS_GRID are grid points, so the bound is about 1/KS_GRID (plus
the sketch's rank error). The KS p-value is the polars one (:func:`~auditor.stats.numerics.
ks_pvalue`: scipy's exact distribution up to 10,000 rows a side, which depends on D and the
sizes only; asymptotic above). Wasserstein-1 and the reference's IQR come from the same cells
(exact when every value is a grid point; interpolated inside open intervals otherwise), and so
does the histogram chart (the 0.5% / 99.5% quantiles and equal-width bin shares). Unseen values
of a per-value binned column are listed by one ``groupBy`` of the compared split.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from auditor.engines.spark_engine import col as _c, quoted
from auditor.errors import NotApplicable
from auditor.loading.data import Kind
from auditor.stats.drift_binned import (Binned, Cells, Profile, binned_per_value, value_bins,
                                        compare_binned, grid_of)
from auditor.report.results import Finding, Severity

KS_GRID = 1000              # quantiles per split in a column's fine grid
QUANTILE_ACCURACY = 10_000  # percentile_approx accuracy: relative rank error 1e-4
GRID_ACCURACY = 2_000       # ... in a split that is never a reference (only its KS grid points)
UNSEEN_LISTED = 100         # unseen values listed per column (as LISTED_CATEGORIES)
DRIVER_LEVELS = 2_000_000   # category counts ((split, column, value) rows) held on the driver


# ---------------------------------------------------------------------------------------------
# Measuring on Spark
# ---------------------------------------------------------------------------------------------

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


def _union(data: Any, cols: list[str], splits: list[str] | None = None) -> Any:
    """Every split's numeric columns in one frame: ``_s`` (the split's position in
    ``data.split_names``) and ``_x{i}`` (:func:`numeric_expr` of ``cols[i]``), so one job
    measures all splits (grouped by ``_s``)."""
    from functools import reduce

    from pyspark.sql import functions as F

    names = data.split_names
    parts = []
    for s in splits or names:
        df = data.splits[s]
        parts.append(df.select(F.lit(names.index(s)).alias("_s"),
                               *[numeric_expr(df, c).alias(f"_x{i}")
                                 for i, c in enumerate(cols)]))
    return reduce(lambda a, b: a.unionByName(b), parts)


def _stack(df: Any, exprs: list[Any], split: Any = "_s") -> Any:
    """Rows (``_s`` = ``split``, c = column index, v = value) for every expression: one long
    frame, no job per column. Spark aggregates it map-side (partial HashAggregate) before the
    shuffle, so at most (splits x columns x distinct values) rows per partition move.
    ``split``: the name of the frame's split column, a split's position, or None (no ``_s``)."""
    from pyspark.sql import functions as F

    keep = ([] if split is None else
            [F.col(split) if isinstance(split, str) else F.lit(split).alias("_s")])
    wide = df.select(*keep, *[e.alias(f"_v{i}") for i, e in enumerate(exprs)])
    body = ", ".join(f"{i}, `_v{i}`" for i in range(len(exprs)))
    return wide.select(*(["_s"] if keep else []), F.expr(f"stack({len(exprs)}, {body}) as (c, v)"))


def profiles(data: Any, cols: list[str], n_bins: int) -> dict[str, dict[str, Profile]]:
    """Step 1 of the module docstring for every split at once: one ``groupBy(split).agg``."""
    from pyspark.sql import functions as F

    names = data.split_names
    # one sketch per column for both sets of quantiles (j / n_bins equals the same correctly
    # rounded double wherever it is also some j' / KS_GRID)
    probs = sorted(set(_probs(KS_GRID)) | set(_probs(n_bins)))
    at_bins = [probs.index(p) for p in _probs(n_bins)]
    array = F.array(*[F.lit(p) for p in probs])
    refs = list(range(len(names) - 1))  # every split but the last is some pair's reference
    is_ref = F.col("_s").isin(refs)
    aggs = [F.count(F.lit(1)).alias("rows")]
    for i in range(len(cols)):
        x = F.col(f"_x{i}")
        aggs += [F.count(x).alias(f"n{i}"), F.min(x).alias(f"lo{i}"),
                 F.max(x).alias(f"hi{i}"), F.stddev_pop(x).alias(f"sd{i}"),
                 F.approx_count_distinct(x, 0.01).alias(f"d{i}"),
                 F.percentile_approx(F.when(is_ref, x), array, QUANTILE_ACCURACY
                                     ).alias(f"q{i}"),
                 F.percentile_approx(F.when(~is_ref, x), array, GRID_ACCURACY
                                     ).alias(f"g{i}")]
    got = {int(r["_s"]): r for r in _union(data, cols).groupBy("_s").agg(*aggs).collect()}
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


def _value_counts(data: Any, todo: dict[str, list[str]], cap: int
                  ) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """Exact value counts of few-valued (split, column)s in one groupBy over all splits; a
    (split, column) with more than ``cap`` distinct values (the approximate count was low)
    gets none."""
    from pyspark.sql import functions as F

    names = data.split_names
    cols = list(todo)
    u = _union(data, cols)
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


def cells(data: Any, cols: list[str], grids: dict[str, np.ndarray]
          ) -> dict[str, dict[str, Cells]]:
    """Step 3 for every split at once: one Bucketizer pass over the union of the splits and
    one groupBy (split, column, cell), aggregated map-side; the counts reach the driver
    through Arrow (at most splits x columns x (2 G + 1) rows)."""
    from pyspark.ml.feature import Bucketizer
    from pyspark.sql import functions as F

    from auditor.engines.spark_engine import to_polars

    names = data.split_names
    out = {s: {c: Cells(grids[c], np.zeros(2 * len(grids[c]) + 1, dtype=np.int64))
               for c in cols} for s in names}
    usable = [c for c in cols if len(grids[c])]
    if not usable:
        return out
    bucketizer = Bucketizer(splitsArray=[_splits_array(grids[c]) for c in usable],
                            inputCols=[f"_x{i}" for i in range(len(usable))],
                            outputCols=[f"_b{i}" for i in range(len(usable))],
                            handleInvalid="keep")
    binned = bucketizer.transform(_union(data, usable))
    stacked = _stack(binned, [F.col(f"_b{i}").cast("int") for i in range(len(usable))])
    counts = to_polars(stacked.where(F.col("v").isNotNull()).groupBy("_s", "c", "v").count())
    for (o, i), part in counts.group_by(["_s", "c"]):
        target = out[names[int(o)]][usable[int(i)]].counts
        v = np.minimum(part["v"].to_numpy().astype(np.int64), len(target) - 1)
        np.add.at(target, v, part["count"].to_numpy().astype(np.int64))
    return out


def exact_unique(data: Any, splits: list[str], cols: list[str]) -> dict[str, dict[str, bool]]:
    """Whether every non-missing value occurs once, per split (exact distinct counts of all
    ``cols`` in all ``splits``: one groupBy(split).agg)."""
    from pyspark.sql import functions as F

    names = data.split_names
    if not cols:
        return {s: {} for s in splits}

    def measure() -> dict[str, dict[str, bool]]:
        u = _union(data, cols, splits)
        rows = u.groupBy("_s").agg(
            *[F.count_distinct(F.col(f"_x{i}")).alias(f"u{i}") for i in range(len(cols))],
            *[F.count(F.col(f"_x{i}")).alias(f"n{i}") for i in range(len(cols))]).collect()
        out = {s: {c: True for c in cols} for s in splits}  # an empty split: vacuously
        for r in rows:
            out[names[int(r["_s"])]] = {c: int(r[f"u{i}"]) == int(r[f"n{i}"])
                                        for i, c in enumerate(cols)}
        return out

    return data.cached(("spark.drift.unique", tuple(splits), tuple(cols)), measure)


def unseen_all(data: Any, split: str, refs: dict[str, np.ndarray], kinds: dict[str, Kind]
               ) -> dict[str, tuple[list[tuple[str, int]], int]]:
    """Values of ``split`` the reference never had, for every column of ``refs`` (column ->
    the reference's values) in one job: per column the most frequent (count, then value) and
    how many distinct, as :func:`auditor.stats.drift.unseen_values`."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from auditor.stats.drift import fmt_value

    cols = list(refs)
    if not cols:
        return {}
    u = _union(data, cols, [split])
    exprs = [F.when(~F.col(f"_x{i}").isin([float(v) for v in refs[c]]), F.col(f"_x{i}"))
             for i, c in enumerate(cols)]
    counts = (_stack(u, exprs, split=None).where(F.col("v").isNotNull())
              .groupBy("c", "v").count())
    w = Window.partitionBy("c")
    top = (counts.withColumn("rk", F.row_number().over(w.orderBy(F.desc("count"),
                                                                  F.asc("v"))))
           .withColumn("nd", F.count(F.lit(1)).over(w))
           .where(F.col("rk") <= UNSEEN_LISTED).collect())
    by: dict[int, list[Any]] = {}
    for r in top:
        by.setdefault(int(r["c"]), []).append(r)
    out = {}
    for i, c in enumerate(cols):
        got = sorted(by.get(i, []), key=lambda r: int(r["rk"]))
        out[c] = ([(fmt_value(float(r["v"]), kinds[c]), int(r["count"])) for r in got],
                  int(got[0]["nd"]) if got else 0)
    return out


def category_counts(data: Any, cols: list[str]) -> None:
    """Every split's category counts of every categorical column in one groupBy (split,
    column, value), stored in ``data``'s cache under the keys
    :func:`auditor.sparktwins.spark_checks._samples` reads (the same frames as
    ``SparkEngine.category_counts``: non-missing values as strings, sorted; missing = rows
    minus their total).

    The driver holds at most ``DRIVER_LEVELS`` such counts in a run, whatever the rows: the
    grouped counts are persisted on the executors, one small job counts them per column, and
    columns are brought over fewest counts first while the budget lasts. A column beyond it
    (a near-unique string such as an undeclared id, e-mail or free text: its values grow with
    the rows) is not brought over; :func:`levels_over_budget` names it with its count, and
    ``drift.features`` lists it as not compared (``schema.consistency`` judges its variants in
    Spark: only values with several forms reach the driver)."""
    import polars as pl
    from functools import reduce

    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from auditor.engines.spark_engine import missing, to_polars

    names = data.split_names
    have = data._cache
    todo = [c for c in cols if ("spark.category_levels_over", c) not in have
            and any(("spark.category_counts", s, c) not in have for s in names)]
    if not todo:
        return
    parts = []
    for o, s in enumerate(names):
        df = data.splits[s]
        exprs = [F.when(~missing(df, c), _c(c).cast("string")) for c in todo]
        parts.append(_stack(df, exprs, split=o))
    union = reduce(lambda a, b: a.unionByName(b), parts)
    grouped = (union.where(F.col("v").isNotNull()).groupBy("_s", "c", "v").count()
               .persist(StorageLevel.MEMORY_AND_DISK))
    try:
        per_col = {int(r["c"]): int(r["count"]) for r in grouped.groupBy("c").count().collect()}
        held = int(have.get("spark.category_levels_held", 0))
        kept: list[int] = []
        for i in sorted(range(len(todo)), key=lambda i: (per_col.get(i, 0), i)):
            n = per_col.get(i, 0)
            if held + n <= DRIVER_LEVELS:
                kept.append(i)
                held += n
            else:
                have[("spark.category_levels_over", todo[i])] = n
        have["spark.category_levels_held"] = held
        got = (to_polars(grouped.where(F.col("c").isin(kept))) if kept
               else pl.DataFrame(schema={"_s": pl.Int32, "c": pl.Int32, "v": pl.String,
                                         "count": pl.Int64}))
    finally:
        grouped.unpersist()
    empty = pl.DataFrame(schema={"value": pl.String, "n": pl.Int64})
    for o, s in enumerate(names):
        here = got.filter(pl.col("_s") == o) if got.height else got
        for i in kept:
            c = todo[i]
            part = (here.filter(pl.col("c") == i) if here.height else here)
            if part.height:
                frame = part.select(pl.col("v").cast(pl.String).alias("value"),
                                    pl.col("count").cast(pl.Int64).alias("n")).sort("value")
            else:
                frame = empty
            total = int(frame["n"].sum()) if frame.height else 0
            value = (frame, data.rows(s) - total)
            data.cached(("spark.category_counts", s, c), lambda value=value: value)


def levels_over_budget(data: Any) -> dict[str, int]:
    """Columns whose category counts :func:`category_counts` left on the executors (beyond
    ``DRIVER_LEVELS``), with how many (split, value) counts they have."""
    return {k[1]: n for k, n in data._cache.items()
            if isinstance(k, tuple) and k[0] == "spark.category_levels_over"}


# ---------------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------------

def measure_numeric(check: Any, data: Any, cols: list[str], kinds: dict[str, Kind]
                    ) -> dict[str, dict[str, Binned]]:
    """Every split's :class:`Binned` of every numeric column, in two jobs whatever the number
    of splits and columns: the profiles (:func:`profiles`) and the cell counts on the shared
    grid (:func:`cells`). A few-valued column (approximate distinct count <= 2 n_bins + 10)
    whose open cells are all empty has every value on the grid: its exact value counts are
    its point cells. Only a few-valued column with a value off the grid (rarer than one
    quantile step and not an extreme) costs two more jobs, for all such columns together: its
    exact value counts, then its cells on the grid with those values. ``unique`` is only a
    candidate (approximate distinct count >= 95% of the values, no grid point held twice):
    the exact distinct count is taken later, for the columns whose finding states it
    (:func:`settle_unique`)."""
    def measure() -> dict[str, dict[str, Binned]]:
        names = data.split_names
        n_bins = check.n_bins
        profs = profiles(data, cols, n_bins)
        grids = {c: grid_of([profs[s][c] for s in names]) for c in cols}
        cell = cells(data, cols, grids)
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
            for (s, c), (values, counts) in _value_counts(data, todo, cap).items():
                profs[s][c].values, profs[s][c].counts = values, counts
            redo = list(todo)
            again = cells(data, redo, {c: grid_of([profs[s][c] for s in names]) for c in redo})
            for s in names:
                cell[s].update(again[s])

        def maybe(s: str, c: str) -> bool:
            p, pts = profs[s][c], cell[s][c].counts[1::2]
            n = p.rows - p.missing
            return n > 1 and p.distinct >= 0.95 * n and (not len(pts) or int(pts.max()) <= 1)

        return {s: {c: Binned(kinds[c], profs[s][c], cell[s][c], maybe(s, c)) for c in cols}
                for s in names}

    return data.cached(("spark.drift.binned", tuple(cols), check.n_bins), measure)


def settle_unique(data: Any, graded: list[Any], numeric: list[str], ref: str, cur: str
                  ) -> None:
    """Exact "every value unique in both splits" (one count-distinct agg over both splits) for
    the numeric columns that are candidates and whose finding is written (raw grade above
    info); only their messages state it."""
    todo = [cd.column for cd, v in graded if cd.column in numeric and cd.all_unique
            and v.raw != Severity.INFO]
    if not todo:
        return
    u = exact_unique(data, [ref, cur], todo)
    for cd, _ in graded:
        if cd.column in todo:
            cd.all_unique = u[ref][cd.column] and u[cur][cd.column]


def _statement(f: Finding, bound: float | None, data: Any, ref: str, cur: str) -> None:
    stats = (f.evidence or {}).get("statistics")
    if stats is None or bound is None:
        return
    last = data.split_names[-1]
    acc = {s: GRID_ACCURACY if s == last else QUANTILE_ACCURACY for s in (ref, cur)}
    stats["ks_d error bound"] = float(f"{bound:.6g}")
    stats["spark quantiles"] = (f"percentile_approx, accuracy {acc[ref]:,} in {ref} and "
                                f"{acc[cur]:,} in {cur} (rank error <= n/accuracy); KS on a "
                                f"grid of {KS_GRID:,} quantiles per split, its error bound "
                                "measured from the counts between grid points")


def numeric_drifts(check: Any, data: Any, binned: dict[str, dict[str, Binned]],
                   cols: list[str], ref: str, cur: str) -> tuple[list[Any], dict[str, Any]]:
    """ColumnDrifts of the numeric columns for one pair, and their KS error bounds."""
    drifts, bounds = [], {}
    refs = {c: binned[ref][c].prof.values for c in cols
            if binned_per_value(binned[ref][c], check.n_bins)
            and value_bins(binned[ref][c], binned[cur][c])[2]}
    new = unseen_all(data, cur, refs, {c: binned[ref][c].kind for c in refs})
    for c in cols:
        cd, bound = compare_binned(
            c, binned[ref][c], binned[cur][c], n_bins=check.n_bins, epsilon=check.epsilon,
            seed=data.seed, min_level_rows=check.level_min_rows, hist_bins=check.hist_bins,
            top=check.top_categories, ref_name=ref, cur_name=cur, unseen=new.get(c))
        drifts.append(cd)
        bounds[c] = bound
    return drifts, bounds


def _calendar(data: Any, kinds: dict[str, Kind]) -> dict[str, Any]:
    """Calendar parts of the time column, on a seeded sample of at most SAMPLE_ROWS rows in all
    (as the polars check: the match is checked on at most that many rows)."""
    import polars as pl

    from auditor.engines.spark_engine import to_polars
    from auditor.stats.calendar import SAMPLE_ROWS, calendar_features

    time = data.columns.time
    cands = [c for c, k in kinds.items() if k != Kind.DATETIME]
    if not time or not cands or any(time not in df.columns for df in data.splits.values()):
        return {}
    total = sum(data.rows(s) for s in data.split_names)
    share = min(1.0, SAMPLE_ROWS / max(1, total))
    parts = []
    for df in data.splits.values():
        part = df.select(*[_c(c) for c in (time, *cands)])
        if share < 1:
            part = part.sample(withReplacement=False, fraction=share, seed=data.seed)
        parts.append(to_polars(part))
    try:
        both = pl.concat(parts, how="vertical_relaxed")
    except (pl.exceptions.PolarsError, TypeError):
        both = parts[0]
    return calendar_features(both, time, cands, seed=data.seed)


def time_splits(data: Any, pairs: list[tuple[str, str]], tolerance: float = 0.05
                ) -> dict[tuple[str, str], bool]:
    """As :func:`auditor.detectors.drift.time_split` for every pair, in two jobs: each split's
    latest time, then per pair the compared split's timed rows and how many are earlier than
    the reference's latest (a time split: at most ``tolerance`` of them)."""
    from functools import reduce

    from pyspark.sql import functions as F

    t = data.columns.time
    names = data.split_names
    out = {pair: False for pair in pairs}
    # decided per pair: a split without the time column makes only its own pairs "not a
    # time split"
    timed = [o for o, df in enumerate(data.splits.values()) if t and t in df.columns]
    if not t or not pairs or not timed:
        return out
    try:
        u = reduce(lambda a, b: a.unionByName(b),
                   [df.select(F.lit(o).alias("_s"), _c(t).alias("_t"))
                    for o, df in enumerate(data.splits.values()) if o in timed])
        latest = {int(r["_s"]): r["m"]
                  for r in u.groupBy("_s").agg(F.max("_t").alias("m")).collect()}
        todo = [(i, a, b) for i, (a, b) in enumerate(pairs)
                if latest.get(names.index(a)) is not None and names.index(b) in timed]
        if not todo:
            return out
        s = F.col("_s")
        row = u.agg(*[F.count(F.when(s == names.index(b), F.col("_t"))).alias(f"n{i}")
                      for i, _, b in todo],
                    *[F.count(F.when((s == names.index(b))
                                     & (F.col("_t") < F.lit(latest[names.index(a)])), 1)
                              ).alias(f"e{i}") for i, a, b in todo]).collect()[0]
    except Exception:  # incomparable types: not a time split
        return out
    for i, a, b in todo:
        timed = int(row[f"n{i}"] or 0)
        out[(a, b)] = bool(timed) and int(row[f"e{i}"] or 0) <= tolerance * timed
    return out


def feature_drift(check: Any, data: Any) -> list[Finding]:
    """``drift.features`` on Spark: categorical and boolean columns from category counts,
    numeric and datetime columns from the binned aggregates of this module; graded together
    (one BH family per comparison) by the polars check's code."""
    from auditor.detectors.drift import DRIFT_KINDS, not_compared_columns, grade_all
    from auditor.sparktwins.spark_checks import _comparisons, _samples
    from auditor.stats.drift import CATEGORICAL_KINDS, Sample, compare_categorical
    from auditor.stats.numerics import fmt_share

    pairs = _comparisons(data)
    if not pairs:
        raise NotApplicable("only one split and no reference: nothing to compare")
    kinds = {c: data.kinds[c] for c in data.features if data.kinds.get(c) in DRIFT_KINDS}
    if not kinds:
        raise NotApplicable("no numeric, datetime, categorical or boolean feature columns")
    cat = {c: k for c, k in kinds.items() if k in CATEGORICAL_KINDS}
    numeric = [c for c in kinds if c not in cat]
    skipped = not_compared_columns(data, kinds)
    not_compared: list[Finding] = []
    if cat:
        category_counts(data, list(cat))
        over = levels_over_budget(data)
        for c in [c for c in cat if c in over]:
            del cat[c], kinds[c]
            reason = (f"{over[c]:,} distinct (split, value) counts: more than the spark "
                      f"engine's driver holds ({DRIVER_LEVELS:,} category counts in a run, "
                      "columns with fewer values first); a near-unique string such as an id "
                      "or free text: declare it under columns.ids or columns.text")
            skipped.append({"column": c, "reason": reason})
            not_compared.append(Finding(
                severity=Severity.INFO, metric="not_compared", subject=c, count=over[c],
                message=f"{c} was not compared on the spark engine: {reason}"))
        if not kinds:
            raise NotApplicable("every feature column has more distinct values than the "
                                "spark engine's driver holds")
    samples = {n: _samples(data, n, cat) for n in data.split_names}
    binned = measure_numeric(check, data, numeric, kinds) if numeric else {}
    for n in data.split_names:
        for c in numeric:
            p = binned[n][c].prof
            samples[n][c] = Sample(kinds[c], p.rows, p.missing)
    calendar = _calendar(data, kinds) if numeric or cat else {}
    timed = time_splits(data, pairs) if calendar else {}
    findings: list[Finding] = []
    for i, (ref, cur) in enumerate(pairs):
        drifts = {c: compare_categorical(c, samples[ref][c], samples[cur][c],
                                         epsilon=check.epsilon, seed=data.seed,
                                         max_levels=check.max_levels,
                                         min_level_rows=check.level_min_rows) for c in cat}
        bounds: dict[str, Any] = {}
        if numeric:
            nd, bounds = numeric_drifts(check, data, binned, numeric, ref, cur)
            drifts.update({d.column: d for d in nd})
        graded = grade_all(check, [drifts[c] for c in kinds])
        settle_unique(data, graded, numeric, ref, cur)
        if calendar and timed[(ref, cur)]:
            for cd, v in graded:
                if cd.column in calendar:
                    v.severity = Severity.INFO
                    match = calendar[cd.column]
                    v.reason = (f"{cd.column} is {match.describe(data.columns.time)}"
                                f" on {fmt_share(match.share)} of rows and the "
                                f"splits are cut by {data.columns.time}: calendar drift is "
                                "expected in a time split, reported as info")
        new = check._comparison_findings(graded, ref, cur, samples, data,
                                         skipped if i == 0 else [])
        for f in new:
            if f.subject in bounds and f.metric != "unseen_share":
                _statement(f, bounds[f.subject], data, ref, cur)
        findings += new
    return findings + not_compared
