"""The label operations of the Spark engine (:meth:`~auditor.engines.operations.Operations`
``class_ranks``, ``class_levels``, ``target_rate_aucs``) over every labelled row.

Ranked columns (``class_ranks``): the label is coded into class codes 0..K-1 (classes sorted,
as :func:`auditor.stats.label.label_view` does); every numeric, boolean and datetime column is
counted by (split, column, bin, class) together with per-class sums and sums of squares of its
values in ONE pass over the union of the splits (``mapInArrow``: per partition, numpy
``searchsorted`` + ``bincount`` over every column of each Arrow batch -- a histogram of
thousands of bins per column has no Spark built-in aggregate short of stacking the rows p
times; that and a ``percentile_approx`` pass cost 4x the CPU at 1M rows x 27 columns -- and one
``groupBy`` sums the partitions' non-zero cells; the Spark jobs do not grow with the number of
columns). Bins: in the same pass each partition keeps a column's distinct values with their
(split, class) counts while it holds at most ``MAX_EXACT`` of them; when the merged values over
all splits are at most ``MAX_EXACT`` the bins are those values, so every statistic is exact
(the polars figure); otherwise at most ``MAX_BINS`` bins cut at the train quantiles of the
driver-side sample (inverted CDF; no pass over the data), bin b holding the values in
(e_{b-1}, e_b]. The edges only decide the bins' widths: the error is measured from the counts
of every row.

The rank statistics are read off the counts by :mod:`auditor.stats.binned_ranks` (engine-free,
tested against the row-level statistics): ties inside a bin count half, the AUC's error is
at most sum_b H[b, 1] H[b, 0] / (2 n1 n0). Candidate cuts of the missing block are bin edges,
so the rows at or below a cut are exact cumulative counts. Class means and variances come
from the sums (values shifted by a central train quantile; Spark's units: dates in days,
timestamps in microseconds, booleans 0/1 -- the cuts are returned in the driver data's
physical units).

Level tables (``class_levels``, ``target_rate_aucs``): the (level, class) counts of the
columns come from one ``groupBy`` over the stacked columns (classes counted in columns of their
own), persisted, and stay in Spark: Cramér's V (chi2 = n (sum_l sum_k n_lk^2 / (n_l n_k) - 1))
and the held-out target-rate AUC are aggregated there, so the driver receives one row per
column however many levels a column has (an id-like string's levels grow with the rows).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from auditor.engines.operations import ClassLevels, ClassRanks, LevelStats
from auditor.engines.spark_columns import col as _c, map_in_arrow, quoted, to_polars
from auditor.stats.binned_ranks import ClassBins, below_at, bin_error, rank_stats
from auditor.errors import NotApplicable
from auditor.stats.numerics import cramers_v_from_chi2

MAX_EXACT = 2000  # distinct values (all splits) up to which the bins are the values
MAX_BINS = 2000   # quantile bins otherwise


# ---------------------------------------------------------------------------------------------
# the operations
# ---------------------------------------------------------------------------------------------

def class_ranks(ops: Any, label: str, classes: Sequence[Any], columns: Sequence[str]
                ) -> ClassRanks:
    cols = list(columns)
    b = binned(ops, label, cols)
    _same_classes(b.classes, classes)
    names = labelled_splits(ops, label)
    train = names[0]
    stats = {s: rank_stats(b, s) for s in names}
    scale = _physical_scales(ops, cols)
    edges: list[np.ndarray | None] = []
    below: dict[str, list[np.ndarray | None]] = {s: [] for s in names}
    for j in range(len(cols)):
        cut = stats[train]["cuts"][j]
        if cut is None:
            edges.append(None)
            for s in names:
                below[s].append(None)
            continue
        idx, cut_edges, _ = cut
        edges.append(cut_edges * scale[j])
        for s in names:
            h = b.hist[s][j]
            below[s].append(below_at(h[:-1], idx) if h[-1].sum() > 0 else None)
    for s in names:  # cuts as class_rank_stats gives them: (edges, below), physical units
        stats[s]["cuts"] = [None if c is None else (c[1] * scale[j], c[2])
                            for j, c in enumerate(stats[s]["cuts"])]
    bins = [0 if b.exact[j] else int(b.edges[j].size) + 1 for j in range(len(cols))]
    error = {s: [bin_error(b, s, j) if len(b.classes) == 2 else 0.0
                 for j in range(len(cols))] for s in names}
    return ClassRanks(cols, stats, edges, below, bins, error)


def class_levels(ops: Any, label: str, classes: Sequence[Any], columns: Sequence[str]
                 ) -> ClassLevels:
    got, n = class_counts(ops, label)
    _same_classes(got, classes)
    stats = level_measures(ops, label, list(columns), list(got))
    names = labelled_splits(ops, label)
    return ClassLevels({s: n[s] for s in names},
                       {s: {c: LevelStats(*t) for c, t in stats[s].items()} for s in names})


def target_rate_aucs(ops: Any, label: str, classes: Sequence[Any], columns: Sequence[str],
                     smoothing: float) -> dict[str, dict[str, float]]:
    got, _ = class_counts(ops, label)
    _same_classes(got, classes)
    return held_out_aucs(ops, label, list(columns), smoothing)


def labelled_splits(ops: Any, label: str) -> list[str]:
    """The splits with a labelled row (the first always: the polars label view's splits);
    an unlabelled evaluation split is left out of every label operation's result."""
    _, n = class_counts(ops, label)
    names = list(ops.frames)
    return [s for s in names if s == names[0] or n[s].sum() > 0]


def _same_classes(found: Sequence[Any], asked: Sequence[Any]) -> None:
    if list(found) != list(asked):
        raise NotApplicable(f"the label's classes differ between all rows {list(found)!r} and "
                            f"the driver sample {list(asked)!r}: a class too rare to sample")


# ---------------------------------------------------------------------------------------------
# ranked columns: one binned pass
# ---------------------------------------------------------------------------------------------

def _value_expr(df: Any, col: str) -> Any:
    """The column as a double, NaN as null; booleans 0/1, dates in days, timestamps in
    microseconds (the polars physical values of Date and Datetime[us])."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    dtype = df.schema[col].dataType
    c = _c(col)
    if isinstance(dtype, T.BooleanType):
        return c.cast("int").cast("double")
    if isinstance(dtype, T.DateType):
        return F.unix_date(c).cast("double")
    if isinstance(dtype, T.TimestampNTZType):
        return F.expr(f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', "
                      f"{quoted(col)})").cast("double")
    if isinstance(dtype, T.TimestampType):
        return F.unix_micros(c).cast("double")
    x = c.cast("double")
    return F.when(~F.isnan(x), x)


def _labelled(ops: Any, y: str, classes: list[Any] | None) -> Any:
    """The union of the splits' labelled rows: split index ``__s``, class code ``__y``."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    parts = []
    for i, (name, df) in enumerate(ops.frames.items()):
        ok = _c(y).isNotNull()
        if isinstance(df.schema[y].dataType, (T.FloatType, T.DoubleType)):
            ok = ok & ~F.isnan(_c(y))
        parts.append(df.where(ok).withColumn("__s", F.lit(i)))
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p, allowMissingColumns=True)
    if classes is not None:
        mapping = F.create_map(*[x for i, c in enumerate(classes) for x in (F.lit(c), F.lit(i))])
        out = out.withColumn("__y", mapping[_c(y)])
    return out


def class_counts(ops: Any, label: str) -> tuple[list[Any], dict[str, np.ndarray]]:
    """The label's classes (sorted, over all splits) and labelled rows per class per split:
    one ``groupBy`` (kept for the run)."""
    names = list(ops.frames)

    def measure() -> tuple[list[Any], dict[str, np.ndarray]]:
        rows = _labelled(ops, label, None).groupBy("__s", _c(label)).count().collect()
        classes = sorted({r[1] for r in rows})
        idx = {c: i for i, c in enumerate(classes)}
        out = {s: np.zeros(len(classes)) for s in names}
        for r in rows:
            out[names[r[0]]][idx[r[1]]] += r[2]
        return classes, out
    counted: tuple[list[Any], dict[str, np.ndarray]] = ops.cached(
        ("spark.label.class_counts", label), measure)
    return counted


def binned(ops: Any, label: str, cols: list[str]) -> ClassBins:
    """Bins and per-class counts of ``cols`` in every split (kept for the run)."""
    got: ClassBins = ops.cached(("spark.label.binned", label, tuple(cols)),
                                lambda: _binned(ops, label, cols))
    return got


def _binned(ops: Any, label: str, cols: list[str]) -> ClassBins:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    classes, n = class_counts(ops, label)
    k = len(classes)
    names = list(ops.frames)
    sk = len(names) * k
    frame = _labelled(ops, label, classes)
    first = next(iter(ops.frames.values()))
    p = len(cols)
    vals = frame.select(F.col("__s").cast("int").alias("__s"),
                        F.col("__y").cast("int").alias("__y"),
                        *[_value_expr(first, c).alias(f"v{j}") for j, c in enumerate(cols)])
    # quantile edges from the driver sample's train rows (no pass over the data: the bins'
    # error is measured from the counts, whatever the edges)
    sample = ops.driver_data().data
    q_edges = [_sample_edges(sample, c) for c in cols]
    center = np.array([e[e.size // 2] if e.size else 0.0 for e in q_edges])
    # the one pass: per partition, numpy counts by (column, bin, split, class), the distinct
    # values of columns with at most MAX_EXACT of them, sums; summed by one groupBy
    cells = map_in_arrow(vals, _PartitionCounts(q_edges, center, k, sk, MAX_EXACT),
                         _cells_schema())
    summed = (cells.groupBy("kind", "j", "key", "s", "y")
              .agg(F.sum("n").alias("n"), F.sum("w1").alias("w1"), F.sum("w2").alias("w2")))
    by_col = Window.partitionBy("j")
    over = F.max(F.when(F.col("kind") == 2, 1).otherwise(0)).over(by_col)
    exact_cells = F.sum(F.when(F.col("kind") == 1, 1).otherwise(0)).over(by_col)
    # a column whose exact cells overflow (in a partition: kind 2; merged over partitions:
    # more than MAX_EXACT * sk cells) keeps its quantile bins only; every row it keeps carries
    # the flag, so the driver never mistakes a column stripped of its exact cells for an exact
    # one with no values
    ovf = (over == 1) | (exact_cells > MAX_EXACT * sk)
    t = to_polars(summed.withColumn("ovf", ovf).where(~((F.col("kind") == 1) & F.col("ovf"))))
    t = t.sort("j")  # each column's cells are one slice: O(cells) in all, not columns x cells
    bounds = np.searchsorted(t["j"].to_numpy(), np.arange(p + 1), side="left")
    hist: dict[str, list[np.ndarray]] = {s: [] for s in names}
    sums = {s: np.zeros((p, k)) for s in names}
    squares = {s: np.zeros((p, k)) for s in names}
    edges: list[np.ndarray] = []
    exact = [False] * p
    for j in range(p):
        tj = t.slice(int(bounds[j]), int(bounds[j + 1] - bounds[j]))
        kind, key = tj["kind"].to_numpy(), tj["key"].to_numpy()
        ss, yy, cnt = (tj[c].to_numpy() for c in ("s", "y", "n"))
        w1, w2, overflow = tj["w1"].to_numpy(), tj["w2"].to_numpy(), tj["ovf"].to_numpy()
        at = kind == 3
        for s_i, s in enumerate(names):
            here = at & (ss == s_i)
            np.add.at(sums[s][j], yy[here], w1[here])
            np.add.at(squares[s][j], yy[here], w2[here])
        ex = kind == 1
        values = np.unique(key[ex])
        if not (overflow.any() or (kind == 2).any()) and values.size <= MAX_EXACT:
            e, exact[j] = values[np.isfinite(values)], True
            b = np.searchsorted(e, key[ex], side="left")
            src = (ex, b)
        else:
            e = q_edges[j]
            qb = (kind == 0) & (key < e.size + 1)
            src = (qb, key[qb].astype(np.int64))
        edges.append(e)
        miss = (kind == 0) & (key == q_edges[j].size + 1)
        for s_i, s in enumerate(names):
            h = np.zeros((e.size + 2, k))
            sel, b = src
            here = ss[sel] == s_i
            np.add.at(h, (b[here], yy[sel][here]), cnt[sel][here])
            m = miss & (ss == s_i)
            np.add.at(h[-1], yy[m], cnt[m])
            hist[s].append(h)
    distinct_floor = [MAX_EXACT + 1] * p  # quantile-binned: more than MAX_EXACT values
    return ClassBins(cols, classes, edges, exact, center, hist, sums, squares, n,
                     distinct_floor)


def _sample_edges(sample: Any, col: str) -> np.ndarray:
    """Train quantile edges (MAX_BINS bins, inverted CDF, distinct, finite) of ``col`` on the
    driver sample, in Spark's units (:func:`_value_expr`: days, microseconds, 0/1)."""
    import polars as pl

    s = sample.splits[sample.split_names[0]][col]
    if s.dtype == pl.Boolean:
        x = s.cast(pl.Float64)
    elif s.dtype.is_temporal():
        x = s.to_physical().cast(pl.Float64) / _physical_scale(sample, col)
    else:
        x = s.cast(pl.Float64)
    v = x.drop_nulls().to_numpy()
    v = v[np.isfinite(v)]
    if not v.size:
        return np.array([])
    probs = np.arange(1, MAX_BINS) / MAX_BINS
    return np.unique(np.quantile(v, probs, method="inverted_cdf"))


def _cells_schema() -> Any:
    from pyspark.sql import types as T

    return T.StructType([T.StructField("kind", T.IntegerType()),
                         T.StructField("j", T.IntegerType()),
                         T.StructField("key", T.DoubleType()),
                         T.StructField("s", T.IntegerType()),
                         T.StructField("y", T.IntegerType()),
                         T.StructField("n", T.LongType()),
                         T.StructField("w1", T.DoubleType()),
                         T.StructField("w2", T.DoubleType())])


class _PartitionCounts:
    """mapInArrow function over (``__s``, ``__y``, v0..v{p-1}) batches: per partition, emits
    the non-zero cells of kind 0 (key = bin b of the quantile edges, (e_{b-1}, e_b]; B above
    the last edge; B + 1 missing), kind 1 (key = a distinct value, while the column holds at
    most ``cap`` of them in the partition), kind 2 (the column has more: no exact cells) and
    kind 3 (sums ``w1`` and ``w2`` of value - center and its square, missing as 0), each by
    (column j, split s, class y)."""

    def __init__(self, edges: list[np.ndarray], center: np.ndarray, k: int, sk: int,
                 cap: int):
        self.edges, self.center, self.k, self.sk, self.cap = edges, center, k, sk, cap

    def __call__(self, batches: Any) -> Any:
        import pyarrow as pa

        p = len(self.edges)
        k = self.k
        # per column, None until a batch adds to it (ev/ec: None once over the cap)
        qh: list[Any] = [None] * p
        w1: list[Any] = [None] * p
        w2: list[Any] = [None] * p
        ev: list[Any] = [np.array([]) for _ in range(p)]
        ec: list[Any] = [None] * p
        sk = self.sk
        for batch in batches:
            s = batch.column(0).to_numpy(zero_copy_only=False).astype(np.int64)
            y = batch.column(1).to_numpy(zero_copy_only=False).astype(np.int64)
            if not s.size:
                continue
            code = s * k + y
            for j in range(p):
                x = batch.column(2 + j).to_numpy(zero_copy_only=False).astype(np.float64)
                miss = np.isnan(x)
                e = self.edges[j]
                nb = e.size + 2
                b = np.where(miss, nb - 1, np.searchsorted(e, x, side="left"))
                h = np.bincount(b * sk + code, minlength=nb * sk)
                qh[j] = h if qh[j] is None else qh[j] + h
                xv = np.where(miss, 0.0, x - self.center[j])
                a1 = np.bincount(code, weights=xv, minlength=sk)
                a2 = np.bincount(code, weights=xv * xv, minlength=sk)
                w1[j] = a1 if w1[j] is None else w1[j] + a1
                w2[j] = a2 if w2[j] is None else w2[j] + a2
                if ev[j] is None:
                    continue
                u, inv = np.unique(x[~miss], return_inverse=True)
                merged = np.union1d(ev[j], u)
                if merged.size > self.cap:
                    ev[j], ec[j] = None, None
                    continue
                c = np.zeros((merged.size, sk), dtype=np.int64)
                if ec[j] is not None:
                    c[np.searchsorted(merged, ev[j])] += ec[j]
                pos = np.searchsorted(merged, u)[inv.ravel()]
                c += np.bincount(pos * sk + code[~miss],
                                 minlength=merged.size * sk).reshape(-1, sk)
                ev[j], ec[j] = merged, c
        out: dict[str, list[np.ndarray]] = {c: [] for c in
                                            ("kind", "j", "key", "s", "y", "n", "w1", "w2")}

        def emit(kind: int, j: int, key: np.ndarray, code: np.ndarray, n: np.ndarray,
                 a: np.ndarray, b: np.ndarray) -> None:
            m = key.size
            out["kind"].append(np.full(m, kind, np.int32))
            out["j"].append(np.full(m, j, np.int32))
            out["key"].append(key.astype(np.float64))
            out["s"].append((code // k).astype(np.int32))
            out["y"].append((code % k).astype(np.int32))
            out["n"].append(n.astype(np.int64))
            out["w1"].append(a.astype(np.float64))
            out["w2"].append(b.astype(np.float64))

        for j in range(p):
            if qh[j] is None:
                continue
            h = qh[j].reshape(-1, sk)
            hb, hc = np.nonzero(h)
            z = np.zeros(hb.size)
            emit(0, j, hb, hc, h[hb, hc], z, z)
            every = np.arange(sk)
            emit(3, j, np.zeros(sk), every, np.zeros(sk), w1[j][every], w2[j][every])
            if ev[j] is None:
                emit(2, j, np.zeros(1), np.zeros(1, np.int64), np.zeros(1), np.zeros(1),
                     np.zeros(1))
            elif ec[j] is not None:
                v, cv = np.nonzero(ec[j])
                z = np.zeros(v.size)
                emit(1, j, ev[j][v], cv, ec[j][v, cv], z, z)
        if out["kind"]:
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.concatenate(out[c])) for c in out], names=list(out))


def _physical_scales(ops: Any, cols: list[str]) -> np.ndarray:
    """Per column, the factor from Spark's units to the driver data's physical values."""
    sample = ops.driver_data().data
    return np.array([_physical_scale(sample, c) for c in cols])


def _physical_scale(sample: Any, col: str) -> float:
    """Factor from Spark's units (days, microseconds) to the sample's polars physical value."""
    import polars as pl

    dtype = next(iter(sample.splits.values())).schema[col]
    if isinstance(dtype, pl.Datetime):
        return {"ns": 1000.0, "us": 1.0, "ms": 0.001}[dtype.time_unit]
    return 1.0


# ---------------------------------------------------------------------------------------------
# level tables: kept in Spark
# ---------------------------------------------------------------------------------------------

def held_out_aucs(ops: Any, label: str, cats: list[str], smoothing: float
                  ) -> dict[str, dict[str, float]]:
    """Binary label: the AUC of the columns on every later split over all its rows,
    scored by the smoothed target rate fitted on all train rows (as
    :func:`auditor.stats.label.target_encode` scores held-out splits: (positives_l + m p) /
    (n_l + m), p the train positive rate, unseen levels at p; missing is a level), computed
    inside Spark (the driver holds one row per column, whatever the levels): each level's
    score from its train counts in the same row of :func:`level_frame` (no join); levels
    grouped by (column, score) with every later split's (P_g, N_g); AUC = sum_g P_g (N_<g +
    N_g / 2) / (P N), N_<g a cumulative sum over the column's distinct scores (a window per
    column) -- the figure of :func:`auditor.stats.label.auc_from_groups` on the same counts."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    classes, n = class_counts(ops, label)
    names = list(ops.frames)
    train = names[0]
    later = list(enumerate(names))[1:]
    m = float(smoothing)
    n_tr = float(n[train].sum())
    prior = float(n[train][1] / n_tr) if n_tr else 0.0
    lv = level_frame(ops, label, cats, classes)
    pos0, neg0 = F.col(_cell(0, 1)), F.col(_cell(0, 0))
    rate = (pos0 + F.lit(m * prior)) / F.greatest(neg0 + pos0 + F.lit(m), F.lit(1e-300))
    # an unseen level: (0 + m p) / m = p, and 0 when m = 0 (polars' arithmetic)
    unseen = prior if m > 0 else 0.0
    score = F.when(neg0 + pos0 > 0, rate).otherwise(F.lit(unseen)).alias("score")
    groups = lv.groupBy("j", score).agg(
        *[F.sum(_cell(i, y)).alias(f"{x}{i}") for i, _ in later for y, x in ((1, "P"), (0, "N"))])
    upto = Window.partitionBy("j").orderBy("score").rowsBetween(Window.unboundedPreceding,
                                                                Window.currentRow)
    terms = groups.select("j", *[F.col(f"{x}{i}") for i, _ in later for x in "PN"], *[
        (F.col(f"P{i}") * (F.sum(f"N{i}").over(upto) - F.col(f"N{i}") / 2)).alias(f"t{i}")
        for i, _ in later])
    rows = _to_driver(terms.groupBy("j").agg(*[F.sum(f"{x}{i}").alias(f"{x}{i}")
                                               for i, _ in later for x in "tPN"]))
    out: dict[str, dict[str, float]] = {c: {} for c in cats}
    for r in rows:
        for i, s in later:
            p_, q_ = r[f"P{i}"], r[f"N{i}"]
            if p_ + q_ > 0:  # the split has rows of this column
                out[cats[r["j"]]][s] = float(r[f"t{i}"] / (p_ * q_)) if p_ * q_ > 0 \
                    else float("nan")
    return out


def _to_driver(df: Any) -> list[Any]:
    """Every row that reaches the driver from the level tables goes through here (a test
    counts them: one per (split, column), never one per level)."""
    rows: list[Any] = df.collect()
    return rows


def level_frame(ops: Any, label: str, cats: list[str], classes: list[Any]) -> Any:
    """The (level, class) counts of the columns as a Spark DataFrame (never collected): one
    row per (column index ``j``, level ``v``, the value as text, NaN missing, -0.0 as 0.0;
    missing a level of its own, null), split s's labelled rows of class y in ``c<s>_<y>``
    (doubles, 0 where the split lacks the level); one ``groupBy`` over the stacked columns
    counting each (split, class) in a column of its own. Persisted on the executors
    (memory and disk; unpersisted with the run's other frames by ``engine.close()``): both
    checks read it, so the data are stacked and grouped once."""
    from pyspark import StorageLevel

    def make() -> Any:
        frame = _level_frame(ops, label, cats, classes).persist(StorageLevel.MEMORY_AND_DISK)
        held = getattr(ops, "persisted", None)
        if held is not None:
            held.append(frame)
        return frame
    return ops.cached(("spark.label.level_frame", label, tuple(cats)), make)


def _cell(s: int, y: int) -> str:
    """The column of :func:`level_frame` counting split ``s``'s rows of class ``y``."""
    return f"c{s}_{y}"


def _level_frame(ops: Any, label: str, cats: list[str], classes: list[Any]) -> Any:
    from pyspark.sql import functions as F

    frame = _labelled(ops, label, classes)
    stacked = frame.select((F.col("__s") * len(classes) + F.col("__y")).alias("__sy"),
                           F.explode(F.array(*[
                               F.struct(F.lit(j).alias("j"), _level(frame, c).alias("v"))
                               for j, c in enumerate(cats)])).alias("t"))
    k, n_s = len(classes), len(ops.frames)
    # conditional counts rather than ``pivot`` (which plans two aggregations, two shuffles)
    return stacked.groupBy(F.col("t.j").alias("j"), F.col("t.v").alias("v")).agg(*[
        F.count(F.when(F.col("__sy") == s * k + y, 1)).cast("double").alias(_cell(s, y))
        for s in range(n_s) for y in range(k)])


def _level(frame: Any, name: str) -> Any:
    """A column's value as a text level: floats with NaN as null and -0.0 as 0.0 (levels as
    :func:`auditor.stats.label.level_codes` forms them)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    dtype = frame.schema[name].dataType
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        x = _c(name)
        return F.when(~F.isnan(x), x + F.lit(0.0)).cast("string")
    if isinstance(dtype, T.NumericType):  # integers and decimals read as doubles, as polars
        return (_c(name).cast("double") + F.lit(0.0)).cast("string")  # reads them
    return _c(name).cast("string")


def level_measures(ops: Any, label: str, cats: list[str], classes: list[Any]
                   ) -> dict[str, dict[str, tuple[int, int, float]]]:
    """Per split and column: (levels, rows with a value, bias-corrected Cramér's V
    of the (level, class) table) -- :func:`auditor.stats.numerics.cramers_v` of the table --
    aggregated inside Spark from :func:`level_frame` (the driver receives one row per column,
    whatever the number of levels): r levels present in the split (missing one of its own),
    class totals n_k, S_k = sum_l n_lk^2 / n_l, so chi2 = n (sum_k S_k / n_k - 1) over the
    classes present."""
    from pyspark.sql import functions as F

    def measure() -> dict[str, dict[str, tuple[int, int, float]]]:
        k = len(classes)
        lv = level_frame(ops, label, cats, classes)
        names = list(ops.frames)
        aggs = []
        for i in range(len(names)):
            n_l = sum((F.col(_cell(i, y)) for y in range(1, k)), F.col(_cell(i, 0)))
            here = n_l > 0
            aggs += [F.sum(F.when(here, 1).otherwise(0)).alias(f"r{i}"),
                     F.sum(F.when(here & F.col("v").isNotNull(), n_l).otherwise(0.0))
                     .alias(f"w{i}"),
                     *[F.sum(_cell(i, y)).alias(f"n{i}_{y}") for y in range(k)],
                     *[F.sum(F.when(here, F.col(_cell(i, y)) * F.col(_cell(i, y)) / n_l)
                             .otherwise(0.0)).alias(f"q{i}_{y}") for y in range(k)]]
        rows = _to_driver(lv.groupBy("j").agg(*aggs))
        out = {s: {c: (0, 0, 0.0) for c in cats} for s in names}
        for r in rows:
            for i, s in enumerate(names):
                nk = np.array([r[f"n{i}_{y}"] for y in range(k)], dtype=float)
                q = np.array([r[f"q{i}_{y}"] for y in range(k)], dtype=float)
                present = nk > 0
                tot = float(nk.sum())
                chi2 = tot * (float((q[present] / nk[present]).sum()) - 1.0) if tot else 0.0
                v = cramers_v_from_chi2(chi2, tot, int(r[f"r{i}"]), int(present.sum()))
                out[s][cats[r["j"]]] = (int(r[f"r{i}"]), int(r[f"w{i}"]), v)
        return out
    got: dict[str, dict[str, tuple[int, int, float]]] = ops.cached(
        ("spark.label.level_measures", label, tuple(cats)), measure)
    return got
