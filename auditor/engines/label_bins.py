"""Per-class binned counts of ranked columns over every labelled row, through the engine
operations only (engine-free): the Spark engine's ``class_ranks`` (the polars engine ranks
every row exactly, :mod:`auditor.engines.polars_label`).

Ranked columns (numeric, boolean, datetime): the label is coded into class codes 0..K-1
(classes sorted over every split, as :func:`auditor.stats.label.label_view` does); every
column is counted by (column, bin, class) with per-class sums and sums of squares of its
values in ONE ``map_batches`` pass per split (:func:`class_cells`: numpy ``searchsorted`` +
``bincount`` over every column of a batch; a histogram of thousands of bins per column has no
Spark built-in aggregate short of stacking the rows p times), the partials summed in the
engine (``sum_by``). Bins: each batch also keeps a column's distinct values with their class
counts while it holds at most ``MAX_EXACT`` of them; when the merged values over all splits are
at most ``MAX_EXACT`` the bins are those values, so every statistic is exact (the polars
figure); otherwise at most ``MAX_BINS`` bins cut at the train quantiles of the driver-side
sample (inverted CDF; no pass over the data), bin b holding the values in (e_{b-1}, e_b]. The
edges only decide the bins' widths: the error is measured from the counts of every row.

The rank statistics are read off the counts by :mod:`auditor.stats.binned_ranks` (engine-free,
tested against the row-level statistics): ties inside a bin count half, the AUC's error is at
most sum_b H[b, 1] H[b, 0] / (2 n1 n0). Candidate cuts of the missing block are bin edges, so
the rows at or below a cut are exact cumulative counts. Class means and variances come from the
sums (values shifted by a central train quantile). Values are read in fixed units (dates in
days, datetimes in microseconds, booleans 0/1) and the cuts returned in the driver data's
physical units.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Sequence

import numpy as np
import polars as pl

from auditor.engines.operations import ClassRanks, Operations
from auditor.errors import NotApplicable
from auditor.stats.binned_ranks import ClassBins, below_at, bin_error, rank_stats

MAX_EXACT = 2000  # distinct values (all splits) up to which the bins are the values
MAX_BINS = 2000   # quantile bins otherwise
CELLS = {"kind": pl.Int32, "j": pl.Int32, "key": pl.Float64, "y": pl.Int32, "n": pl.Int64,
         "w1": pl.Float64, "w2": pl.Float64}
"""The cells :func:`class_cells` returns, summed by (kind, j, key, y): kind 0, key = bin b of
the quantile edges ((e_{b-1}, e_b]; B above the last edge; B + 1 missing); kind 1, key = a
distinct value (while a batch holds at most ``cap`` of them); kind 2, the column had more in
some batch (no exact cells); kind 3, the sums ``w1`` and ``w2`` of value - center and its
square (missing as 0)."""
SUMMED = ("kind", "j", "key", "y")


def values_of(s: pl.Series) -> np.ndarray:
    """A column as doubles, missing (null, NaN) as NaN: booleans 0/1, dates in days,
    datetimes in microseconds."""
    if s.dtype == pl.Boolean:
        s = s.cast(pl.Float64)
    elif isinstance(s.dtype, pl.Datetime):
        s = s.dt.cast_time_unit("us").to_physical().cast(pl.Float64)
    elif s.dtype.is_temporal():
        s = s.to_physical().cast(pl.Float64)
    return s.cast(pl.Float64).fill_null(float("nan")).to_numpy()


def class_codes(s: pl.Series, classes: Sequence[Any]) -> np.ndarray:
    """Each row's class code (position in ``classes``), -1 without a label (null, NaN)."""
    if s.dtype.is_float():
        s = s.fill_nan(None)
    return s.replace_strict(list(classes), list(range(len(classes))), default=-1,
                            return_dtype=pl.Int64).to_numpy()


def label_dtype(dtype: Any) -> Any:
    """The type a label's values are counted in: integers as Int64, floats and decimals as
    Float64, booleans as they are, anything else as text (a type every engine carries; the
    values, and so the classes, stay equal)."""
    if dtype.is_integer():
        return pl.Int64
    if dtype.is_float() or dtype.is_decimal():
        return pl.Float64
    return pl.Boolean if dtype == pl.Boolean else pl.String


def label_counts(frame: pl.DataFrame, first_row: int, *, label: str, dtype: pl.DataType
                 ) -> pl.DataFrame:
    """Rows per label value of a batch (null and NaN: no label), the values in ``dtype``."""
    y = frame.get_column(label).cast(dtype)
    if y.dtype.is_float():
        y = y.fill_nan(None)
    return y.drop_nulls().value_counts(name="n")


def class_counts(ops: Operations, label: str) -> tuple[list[Any], dict[str, np.ndarray]]:
    """The label's classes (sorted, over all splits) and labelled rows per class per split:
    one ``map_batches`` with the counts summed in the engine (kept for the run)."""
    def measure() -> tuple[list[Any], dict[str, np.ndarray]]:
        dtype = label_dtype(next(iter(ops.driver_data().data.splits.values())).schema[label])
        got = ops.map_batches([label], partial(label_counts, label=label, dtype=dtype),
                              {label: dtype, "n": pl.Int64}, sum_by=[label])
        classes = sorted({v for t in got.values() for v in t[label].to_list()})
        out = {}
        for s, t in got.items():
            n = np.zeros(len(classes))
            codes = class_codes(t[label], classes)
            np.add.at(n, codes, t["n"].to_numpy())
            out[s] = n
        return classes, out
    counted: tuple[list[Any], dict[str, np.ndarray]] = ops.cached(
        ("label_bins.class_counts", label), measure)
    return counted


def labelled_splits(ops: Operations, label: str) -> list[str]:
    """The splits with a labelled row (the first always: the polars label view's splits);
    an unlabelled evaluation split is left out of every label operation's result."""
    _, n = class_counts(ops, label)
    names = list(n)
    return [s for s in names if s == names[0] or n[s].sum() > 0]


def same_classes(found: Sequence[Any], asked: Sequence[Any]) -> None:
    if list(found) != list(asked):
        raise NotApplicable(f"the label's classes differ between all rows {list(found)!r} and "
                            f"the driver sample {list(asked)!r}: a class too rare to sample")


def class_cells(frame: pl.DataFrame, first_row: int, *, label: str, classes: tuple[Any, ...],
                cols: tuple[str, ...], edges: tuple[np.ndarray, ...], center: np.ndarray,
                cap: int) -> pl.DataFrame:
    """The non-zero :data:`CELLS` of one batch."""
    k = len(classes)
    raw = frame.get_column(label)
    y = class_codes(raw.cast(label_dtype(raw.dtype)), classes)  # as class_counts read them
    keep = y >= 0
    y = y[keep]
    out: dict[str, list[np.ndarray]] = {c: [] for c in CELLS}

    def emit(kind: int, j: int, key: np.ndarray, yy: np.ndarray, n: np.ndarray,
             a: np.ndarray, b: np.ndarray) -> None:
        m = key.size
        out["kind"].append(np.full(m, kind, np.int32))
        out["j"].append(np.full(m, j, np.int32))
        out["key"].append(key.astype(np.float64))
        out["y"].append(yy.astype(np.int32))
        out["n"].append(n.astype(np.int64))
        out["w1"].append(a.astype(np.float64))
        out["w2"].append(b.astype(np.float64))

    if y.size:
        every = np.arange(k)
        for j, c in enumerate(cols):
            x = values_of(frame.get_column(c))[keep]
            miss = np.isnan(x)
            e = edges[j]
            nb = e.size + 2
            b = np.where(miss, nb - 1, np.searchsorted(e, x, side="left"))
            h = np.bincount(b * k + y, minlength=nb * k).reshape(-1, k)
            hb, hc = np.nonzero(h)
            z = np.zeros(hb.size)
            emit(0, j, hb, hc, h[hb, hc], z, z)
            xv = np.where(miss, 0.0, x - center[j])
            emit(3, j, np.zeros(k), every, np.zeros(k), np.bincount(y, xv, minlength=k),
                 np.bincount(y, xv * xv, minlength=k))
            u, inv = np.unique(x[~miss], return_inverse=True)
            if u.size > cap:
                emit(2, j, np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1))
                continue
            cv = np.bincount(inv.ravel() * k + y[~miss], minlength=u.size * k).reshape(-1, k)
            v, cy = np.nonzero(cv)
            z = np.zeros(v.size)
            emit(1, j, u[v], cy, cv[v, cy], z, z)
    if not out["kind"]:
        return pl.DataFrame(schema=CELLS)
    return pl.DataFrame({c: np.concatenate(out[c]) for c in CELLS})


def sample_edges(sample: Any, col: str) -> np.ndarray:
    """Train quantile edges (``MAX_BINS`` bins, inverted CDF, distinct, finite) of ``col`` on
    the driver sample, in :func:`values_of`'s units."""
    v = values_of(sample.splits[sample.split_names[0]][col])
    v = v[np.isfinite(v)]
    if not v.size:
        return np.array([])
    probs = np.arange(1, MAX_BINS) / MAX_BINS
    return np.unique(np.quantile(v, probs, method="inverted_cdf"))


def physical_scale(sample: Any, col: str) -> float:
    """Factor from :func:`values_of`'s units to the driver data's physical value."""
    dtype = next(iter(sample.splits.values())).schema[col]
    if isinstance(dtype, pl.Datetime):
        return {"ns": 1000.0, "us": 1.0, "ms": 0.001}[dtype.time_unit]
    return 1.0


def binned(ops: Operations, label: str, cols: list[str]) -> ClassBins:
    """Bins and per-class counts of ``cols`` in every split (kept for the run)."""
    got: ClassBins = ops.cached(("label_bins.binned", label, tuple(cols)),
                                lambda: _binned(ops, label, cols))
    return got


def _binned(ops: Operations, label: str, cols: list[str]) -> ClassBins:
    classes, n = class_counts(ops, label)
    k = len(classes)
    names = list(n)
    sk = len(names) * k
    p = len(cols)
    # quantile edges from the driver sample's train rows (no pass over the data: the bins'
    # error is measured from the counts, whatever the edges)
    sample = ops.driver_data().data
    q_edges = [sample_edges(sample, c) for c in cols]
    center = np.array([e[e.size // 2] if e.size else 0.0 for e in q_edges])
    got = ops.map_batches([*dict.fromkeys([label, *cols])], partial(
        class_cells, label=label, classes=tuple(classes), cols=tuple(cols),
        edges=tuple(q_edges), center=center, cap=MAX_EXACT), CELLS, sum_by=SUMMED)
    t = pl.concat([got[s].with_columns(pl.lit(i, dtype=pl.Int32).alias("s"))
                   for i, s in enumerate(names)])
    # a column whose exact cells overflow (in a batch: kind 2; merged: more than MAX_EXACT *
    # splits * classes cells) keeps its quantile bins only
    over = t.group_by("j").agg(((pl.col("kind") == 2).any()
                                | ((pl.col("kind") == 1).sum() > MAX_EXACT * sk)).alias("ovf"))
    t = t.join(over, on="j").filter(~((pl.col("kind") == 1) & pl.col("ovf"))).sort("j")
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
        if not overflow.any() and values.size <= MAX_EXACT:
            e, exact[j] = values[np.isfinite(values)], True
            src = (ex, np.searchsorted(e, key[ex], side="left"))
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


def class_ranks(ops: Operations, label: str, classes: Sequence[Any], columns: Sequence[str]
                ) -> ClassRanks:
    """:meth:`~auditor.engines.operations.Operations.class_ranks` from :func:`binned`."""
    cols = list(columns)
    b = binned(ops, label, cols)
    same_classes(b.classes, classes)
    names = labelled_splits(ops, label)
    train = names[0]
    stats = {s: rank_stats(b, s) for s in names}
    sample = ops.driver_data().data
    scale = np.array([physical_scale(sample, c) for c in cols])
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
