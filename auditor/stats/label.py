"""Label preparation and vectorised per-feature statistics for the label-association checks
(``leakage.single_feature_auc`` and ``leakage.feature_label_correlation``).

Rows with a missing label are dropped and the label is coded once per run (:func:`label_view`).
The numeric-like features of a split are selected once with polars; each column's non-missing
values are then sorted once with numpy (in a thread pool: numpy sorts release the GIL, and no
Python loop touches rows) and reduced with bincounts to a few numbers per class: the count of
non-missing values, the sum and variance of their average ranks, the mean and variance of the
values, and class counts at candidate cut values (:func:`class_rank_stats`, cached per split
and shared by both checks; :func:`spearman_aggs` for a numeric label). The Mann–Whitney AUC,
Pearson's point-biserial r, Spearman's rho and the correlation ratio all follow from them.
Encoded (categorical, binned) columns need no sort at all: every row of a level shares one
score, so their AUC follows from per-level class counts (:func:`encoded_figures`).

Missing values are information: a column's missing rows form one tied block, and the block's
place in the column's order is fitted on train like the direction is (:func:`fit_ranked`):
below all values, above all values, or just above a candidate cut value (every distinct value
when there are at most ``N_CUTS``, else ``N_CUTS`` quantiles). For a cut v, with m1/m0 missing
positives/negatives, N1/N0 non-missing ones, U the Mann–Whitney count among non-missing rows
and D(v) = m1 #{negatives <= v} - m0 #{positives <= v}, the concordant pairs are
U + m0 N1 + m1 m0 / 2 + D(v) (ascending) or N1 N0 - U + m1 N0 + m1 m0 / 2 - D(v) (descending).
For Spearman's rho the same block shifts the ranks above it by M (see :func:`_rho`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from auditor.loading.data import AuditData, Kind, LabelKind
from auditor.errors import NotApplicable
from auditor.stats.numerics import inverted_cdf, map_columns, pearson, run_starts, tie_ranks

YCOL = "__auditor_label"
RANKED = (Kind.NUMERIC, Kind.DATETIME, Kind.BOOLEAN)
N_CUTS = 255
CUT_SAMPLE = 50_000  # values sampled for the quantile bins of bin_codes
BINS = 32


@dataclass(frozen=True)
class LabelView:
    """The labelled rows of every split with the label coded in column ``YCOL``: class codes
    0..K-1 (``classes`` in sorted order; for a binary label code 1 is the positive class) or,
    for a numeric label, the value as Float64."""

    column: str
    kind: LabelKind
    classes: list[Any]
    frames: dict[str, pl.DataFrame]
    dropped: dict[str, int]

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def train(self) -> str:
        return next(iter(self.frames))

    @property
    def targets(self) -> list[int]:
        """Classes scored one-vs-rest: the positive class of a binary label, every class of a
        multiclass label, one pseudo-class for a numeric label."""
        return [1] if self.kind == LabelKind.BINARY else list(range(max(self.n_classes, 1)))

    def y(self, split: str) -> np.ndarray:
        return self.frames[split][YCOL].to_numpy()


def label_view(data: AuditData) -> LabelView:
    """The shared :class:`LabelView` (cached per run); NotApplicable without a usable label."""
    return data.cached(("label_stats.label_view",), lambda: _make_label_view(data))


def _make_label_view(data: AuditData) -> LabelView:
    y = data.label
    if not y:
        raise NotApplicable("no label column declared")
    if y not in data.kinds or data.kinds[y] in (Kind.NESTED, Kind.NULL):
        raise NotApplicable(f"label {y!r} does not have one usable type in every split")
    frames, dropped = {}, {}
    for name, df in data.splits.items():
        ok = pl.col(y).is_not_null()
        if df.schema[y].is_float():
            ok = ok & pl.col(y).is_not_nan()
        dropped[name] = df.height - int(df.select(ok.sum()).item())
        frames[name] = df.filter(ok) if dropped[name] else df
    first = next(iter(frames))
    if frames[first].height == 0:
        raise NotApplicable(f"label {y!r} is missing in every {first} row")
    # an unlabelled later split (roles.unlabelled) has no label to measure: left out
    frames = {n: f for n, f in frames.items() if n == first or f.height}
    kind = data.label_kind
    if kind == LabelKind.NUMERIC:
        frames = {n: f.with_columns(pl.col(y).cast(pl.Float64).alias(YCOL))
                  for n, f in frames.items()}
        if frames[first][YCOL].n_unique() < 2:
            raise NotApplicable(f"label {y!r} is constant in {first}: nothing to associate")
        return LabelView(y, kind, [], frames, dropped)
    classes = pl.concat([f.select(pl.col(y)) for f in frames.values()])[y].unique().sort()
    classes = classes.to_list()
    if len(classes) < 2:
        raise NotApplicable(f"label {y!r} has a single class ({classes[0]!r}) in every split: "
                            "there is nothing to separate")
    frames = {n: f.with_columns(pl.col(y).replace_strict(classes, list(range(len(classes))),
                                                          return_dtype=pl.Int32).alias(YCOL))
              for n, f in frames.items()}
    present = frames[first][YCOL].unique().to_list()
    if len(present) < 2:
        raise NotApplicable(f"label {y!r} has a single class ({classes[present[0]]!r}) in "
                            f"{first}, the split models are fitted on: nothing to separate")
    return LabelView(y, kind or LabelKind.BINARY, classes, frames, dropped)


def ranked_columns(data: AuditData) -> list[str]:
    """Features ranked by the shared statistics: numeric, datetime and boolean."""
    return data.features_of(*RANKED)


def value_expr(col: str, dtype: pl.DataType) -> pl.Expr:
    """The column as an orderable expression: booleans as 0/1, dates, datetimes and durations
    as their integer representation, decimals as floats, NaN as missing; strings unchanged."""
    e = pl.col(col)
    if dtype == pl.Boolean:
        return e.cast(pl.Int8)
    if isinstance(dtype, (pl.Datetime, pl.Date, pl.Duration, pl.Time)):
        return e.to_physical()
    if isinstance(dtype, pl.Decimal):
        return e.cast(pl.Float64)
    if dtype.is_float():
        return e.fill_nan(None)
    return e


def float_values(frame: pl.DataFrame, col: str) -> np.ndarray | None:
    """The column as float64 with NaN for missing; None for a string column."""
    column = frame.get_column(col)  # not frame.schema nor frame.select: O(columns) per call
    if column.dtype == pl.String:
        return None
    s = column.to_frame().select(value_expr(col, column.dtype).cast(pl.Float64)).to_series()
    return s.fill_null(float("nan")).to_numpy()


def missing_count(frame: pl.DataFrame, col: str) -> int:
    s = frame[col]
    return int(s.null_count()) + (int(s.is_nan().sum()) if s.dtype.is_float() else 0)


def sorted_ranks(values: pl.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-missing values of a column in ascending order: (pos, v, r) with pos their row
    positions, v the values and r their average ranks (ties share the mean of their ranks).
    Numbers are sorted with numpy (which releases the GIL); strings are ranked by polars."""
    if values.dtype == pl.String:
        r = values.rank("average").cast(pl.Float64).fill_null(float("nan")).to_numpy()
        pos = np.flatnonzero(~np.isnan(r))
        order = np.argsort(r[pos], kind="stable")
        return pos[order], r[pos][order], r[pos][order]
    x = values.to_numpy()
    if x.dtype.kind == "f":
        pos = np.flatnonzero(~np.isnan(x))
        v = x[pos]
    else:
        pos, v = None, x
    order = np.argsort(v)
    v = v[order]
    pos = order if pos is None else pos[order]
    return pos, v, tie_ranks(v)


MAX_PACKED_CLASSES = 16


def class_sorted(values: pl.Series, y: np.ndarray, n_classes: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-missing values of a column in ascending order with their classes: (yc, v, r),
    yc[i] the class code of the row holding v[i], r the average ranks. Same result as
    ``pos, v, r = sorted_ranks(values); yc = y[pos]`` up to the order of classes inside a
    run of tied values (which no statistic here depends on), computed by
    :func:`packed_class_sort` when it applies (about 5x faster at 10M rows), else by
    :func:`sorted_ranks`."""
    if values.dtype != pl.String and n_classes <= MAX_PACKED_CLASSES:
        fast = packed_class_sort(values.to_numpy(), y, n_classes)
        if fast is not None:
            return fast
    pos, v, r = sorted_ranks(values)
    return y[pos], v, r


def packed_class_sort(x: np.ndarray, y: np.ndarray, n_classes: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Sort values and class codes together as one 64-bit key: the value's order-preserving
    bits with the lowest b = bits(n_classes - 1) replaced by the class code, so one
    (SIMD) ``np.sort`` replaces an argsort and two gathers. Integers are offset by their
    minimum and shifted left by b, which is exact when max - min < 2^(63-b); floats (NaN =
    missing dropped, -0.0 made +0.0) map to unsigned keys whose order is the float order, and
    dropping b low bits is exact unless two distinct values differ only there: that is
    checked (distinct values of x vs distinct keys) and None returned, as for other dtypes,
    so the caller falls back to :func:`sorted_ranks`."""
    b = max(1, (n_classes - 1).bit_length())
    low = np.uint64((1 << b) - 1)
    if x.dtype.kind == "f":
        # in place wherever possible: at 10M rows every temporary is 80 MB of fresh memory
        keep = ~np.isnan(x)
        v = x[keep].astype(np.float64)          # a copy
        v += 0.0                                 # -0.0 + 0.0 is +0.0
        key = v.view(np.uint64).copy()
        sign = np.uint64(1 << 63)
        neg = key >= sign                        # order-preserving float -> uint64:
        np.invert(key, out=key, where=neg)       # negatives flipped entirely,
        np.bitwise_or(key, sign, out=key, where=~neg)  # positives get the sign bit
        del neg
        key &= ~low
        key |= y[keep].astype(np.uint64)
        key.sort()
        v.sort()
        distinct = int(run_starts(v).sum())
        codes = key & low
        key >>= np.uint64(b)
        if distinct != int(run_starts(key).sum()):
            return None                          # distinct values share a key: not exact
        del key
        return codes.view(np.int64), v, tie_ranks(v)  # codes < 2^b: the same integers
    yu = y.astype(np.uint64)
    if x.dtype.kind in "iu" and x.size:
        lo, hi = int(x.min()), int(x.max())
        if hi - lo >= 1 << (63 - b) or hi >= 1 << 63:
            return None
        key = ((x.astype(np.int64) - np.int64(lo)).astype(np.uint64) << np.uint64(b)) | yu
        key.sort()
        v = ((key >> np.uint64(b)).astype(np.int64) + np.int64(lo)).astype(x.dtype)
        return (key & low).astype(np.int64), v, tie_ranks(v)
    return None


def cut_edges(v: np.ndarray) -> np.ndarray:
    """Candidate cut values from sorted non-missing values: every distinct value when there
    are at most N_CUTS, else the inverted-CDF quantiles at N_CUTS even steps; +inf (the
    missing block above everything) is always a candidate."""
    if v.size == 0:
        return np.array([np.inf])
    distinct = v[run_starts(v)]
    if distinct.size > N_CUTS:  # the maximum is left out: a cut there equals +inf
        distinct = np.unique(inverted_cdf(v, N_CUTS))
    return np.r_[distinct.astype(float), np.inf]


PARALLEL_ROWS = 10_000  # columns at least this long are ranked on a thread pool


def class_rank_stats(frame: pl.DataFrame, exprs: list[pl.Expr], n_classes: int, *,
                     moments: bool) -> dict[str, Any]:
    """Per class (row k) and expression (column j), over the rows of ``frame``: ``n`` (K,)
    class sizes; ``count`` non-missing values; ``rank_sum`` the sum of their average ranks
    (ranked among the non-missing values of the whole frame); with ``moments`` also
    ``rank_var`` and, on the values shifted by their minimum, ``mean`` and ``var``
    (population variances, two-pass); ``distinct`` (p,) distinct non-missing values.
    ``cuts[j]``: for a column with missing values,
    (edges, below) with below[e, k] the non-missing rows of class k with value <= edges[e]
    (:func:`cut_edges`), else None. One polars select, then one numpy sort per column."""
    values = frame.select([e.alias(f"v{j}") for j, e in enumerate(exprs)])
    y = frame[YCOL].to_numpy().astype(np.int64)
    k = n_classes

    def one(j: int) -> tuple[np.ndarray, ...]:
        s = values.to_series(j)
        yc, v, r = class_sorted(s, y, k)
        count = np.bincount(yc, minlength=k).astype(float)
        rsum = np.bincount(yc, weights=r, minlength=k)
        out: list[Any] = [count, rsum]
        safe = np.maximum(count, 1)
        if moments:
            out.append(np.bincount(yc, weights=(r - (rsum / safe)[yc]) ** 2, minlength=k)
                       / safe)
            with np.errstate(invalid="ignore"):  # infinite values: moments are NaN
                xv = (v - v[0]).astype(float) if v.size else v.astype(float)
                xmean = np.bincount(yc, weights=xv, minlength=k) / safe
                out += [xmean,
                        np.bincount(yc, weights=(xv - xmean[yc]) ** 2, minlength=k) / safe]
        cuts = None
        if v.size < y.size and s.dtype != pl.String:
            edges = cut_edges(v)
            at = np.searchsorted(v, edges, side="right")
            seg = np.repeat(np.arange(edges.size + 1), np.diff(np.r_[0, at, v.size]))
            counts = np.bincount(seg * k + yc, minlength=(edges.size + 1) * k)
            cuts = (edges, np.cumsum(counts.reshape(edges.size + 1, k), axis=0)[:-1])
        distinct = int(run_starts(v).sum())
        return (*out, distinct, cuts)

    # threads pay off on long columns; on short ones (a wide table of a few hundred rows) the
    # pool's hand-offs cost more than the work (10,000 columns of 50 rows: 2.7 s -> 1.4 s)
    results = map_columns(one, range(len(exprs)),
                          workers=None if frame.height >= PARALLEL_ROWS else 1)
    keys = ["count", "rank_sum"] + (["rank_var", "mean", "var"] if moments else [])
    out: dict[str, Any] = {"n": np.bincount(y, minlength=k).astype(float)}
    for i, key in enumerate(keys):
        out[key] = (np.column_stack([res[i] for res in results]) if results
                    else np.zeros((k, 0)))
    out["distinct"] = np.array([res[-2] for res in results], dtype=np.int64)
    out["cuts"] = [res[-1] for res in results]
    return out


def shared_rank_stats(data: AuditData, view: LabelView, split: str,
                      columns: list[str] | None = None) -> dict[str, np.ndarray]:
    """:func:`class_rank_stats` with moments of ``columns`` (by default
    :func:`ranked_columns`) for a class label, computed once per split and run and shared by
    both checks."""
    cols = ranked_columns(data) if columns is None else list(columns)
    frame = view.frames[split]

    def compute() -> dict[str, np.ndarray]:
        schema = frame.schema  # built anew on every access: once, not once per column
        return class_rank_stats(frame, [value_expr(c, schema[c]) for c in cols],
                                view.n_classes, moments=True)
    return data.cached(("label_stats.rank_stats", split, tuple(cols)), compute)


def level_codes(series: pl.Series) -> tuple[np.ndarray, int]:
    """Dense integer codes 0..L-1 of a column's distinct values, missing (null, NaN) being
    one more level; returns (codes, L)."""
    s = series.fill_nan(None) if series.dtype.is_float() else series
    missing = s.is_null().to_numpy()
    if s.dtype == pl.String:
        raw = s.cast(pl.Categorical).to_physical().fill_null(0).to_numpy().astype(np.int64)
    else:
        raw = s.to_frame().select(value_expr(s.name, s.dtype).cast(pl.Float64)
                                  .fill_null(0.0)).to_series().to_numpy()
    codes = np.zeros(len(s), dtype=np.int64)
    n_levels = 0
    if (~missing).any():
        present = raw[~missing]
        if s.dtype == pl.String and present.max() < 4 * len(s) + 1024:
            # categorical codes are small integers: make them dense without sorting
            used = np.bincount(present) > 0
            inv = (np.cumsum(used) - 1)[present]
        else:
            _, inv = np.unique(present, return_inverse=True)
        codes[~missing] = inv
        n_levels = int(inv.max()) + 1
    if missing.any():
        codes[missing] = n_levels
        n_levels += 1
    return codes, n_levels


# ---------------------------------------------------------------------------------------------
# Ranked columns: orientation (direction and place of the missing block) fitted on train
# ---------------------------------------------------------------------------------------------

@dataclass
class RankFit:
    """Per target class (row) and column: ``descending`` order, and ``cut``: the missing block
    sorts just above this value (NaN: below every value, +inf: above every value)."""

    descending: np.ndarray
    cut: np.ndarray


def _auc_parts(st: dict[str, np.ndarray], targets: list[int]) -> dict[str, np.ndarray]:
    n_t = st["n"][targets][:, None]
    cnt = st["count"][targets]
    big_n = st["count"].sum(0)[None, :]
    n = st["n"].sum()
    m1 = n_t - cnt
    m0 = (n - big_n) - m1
    u = st["rank_sum"][targets] - cnt * (cnt + 1) / 2
    return {"n_t": n_t, "n": n, "n1": cnt, "n0": big_n - cnt, "m1": m1, "m0": m0, "u": u}


def _auc(parts: dict[str, np.ndarray], d: np.ndarray, descending: np.ndarray) -> np.ndarray:
    """AUC from the parts of :func:`_auc_parts` and D at the cut (see the module docstring)."""
    p = parts
    tie = p["m1"] * p["m0"] / 2
    asc = p["u"] + p["m0"] * p["n1"] + tie + d
    desc = p["n1"] * p["n0"] - p["u"] + p["m1"] * p["n0"] + tie - d
    denom = p["n_t"] * (p["n"] - p["n_t"])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, np.where(descending, desc, asc) / denom, np.nan)


def _below(x: np.ndarray | None, y: np.ndarray, n_classes: int, cut: float,
           nm_per_class: np.ndarray) -> np.ndarray:
    """Per class, the non-missing rows with value <= cut (0 for NaN, all for +inf). ``x`` is
    None when the split has no missing value: then D = 0 whatever these counts are."""
    if np.isnan(cut):
        return np.zeros(n_classes)
    if np.isposinf(cut) or x is None:
        return nm_per_class
    return np.bincount(y[x <= cut], minlength=n_classes).astype(float)


def fit_ranked(st: dict[str, Any], targets: list[int]) -> tuple[np.ndarray, RankFit]:
    """Train AUCs (K', p) of ranked columns, best over the direction and, for columns with
    missing values, the place of the missing block (every candidate cut of ``st["cuts"]``)."""
    parts = _auc_parts(st, targets)
    k, p = parts["u"].shape
    d_asc, d_desc = np.zeros((k, p)), np.zeros((k, p))
    cut_asc, cut_desc = np.full((k, p), np.nan), np.full((k, p), np.nan)
    for j, cuts in enumerate(st["cuts"]):  # columns with missing values; vectorised over cuts
        if cuts is None:
            continue
        edges, below = cuts
        for i, t in enumerate(targets):
            d = parts["m1"][i, j] * (below.sum(1) - below[:, t]) - parts["m0"][i, j] * below[:, t]
            hi, lo = int(np.argmax(d)), int(np.argmin(d))
            if d[hi] > 0:
                d_asc[i, j], cut_asc[i, j] = d[hi], edges[hi]
            if d[lo] < 0:
                d_desc[i, j], cut_desc[i, j] = d[lo], edges[lo]
    asc = _auc(parts, d_asc, np.zeros((k, p), bool))
    desc = _auc(parts, d_desc, np.ones((k, p), bool))
    use_desc = np.nan_to_num(desc, nan=-1) > np.nan_to_num(asc, nan=-1)
    fit = RankFit(use_desc, np.where(use_desc, cut_desc, cut_asc))
    return np.where(use_desc, desc, asc), fit


def eval_ranked(st: dict[str, np.ndarray], targets: list[int], xs: list[np.ndarray | None],
                y: np.ndarray, n_classes: int, fit: RankFit) -> np.ndarray:
    """AUCs (K', p) of ranked columns in another split under the orientation fitted on train;
    ``xs[j]`` is needed only where a fitted cut is finite."""
    return _eval_at(st, targets, fit, lambda j, cut: _below(xs[j], y, n_classes, cut,
                                                            st["count"][:, j]))


def eval_counted(st: dict[str, np.ndarray], targets: list[int], edges: list[np.ndarray | None],
                 below: list[np.ndarray | None], fit: RankFit) -> np.ndarray:
    """:func:`eval_ranked` from counts instead of values: ``below[j][e, k]`` the split's
    non-missing rows of class k with value <= ``edges[j][e]``, the candidate cuts of train
    (:func:`counts_at`; None where the split has no missing value, so that D = 0)."""
    def at(j: int, cut: float) -> np.ndarray:
        if np.isnan(cut):
            return np.zeros(st["n"].size)
        table, cuts = below[j], edges[j]
        if table is None or cuts is None:
            return st["count"][:, j]
        return table[int(np.searchsorted(cuts, cut))]
    return _eval_at(st, targets, fit, at)


def _eval_at(st: dict[str, np.ndarray], targets: list[int], fit: RankFit,
             below: Any) -> np.ndarray:
    parts = _auc_parts(st, targets)
    d = np.zeros_like(parts["u"])
    for j in range(d.shape[1]):
        for i, t in enumerate(targets):
            if np.isnan(fit.cut[i, j]):
                continue
            b = below(j, fit.cut[i, j])
            d[i, j] = parts["m1"][i, j] * (b.sum() - b[t]) - parts["m0"][i, j] * b[t]
    return _auc(parts, d, fit.descending)


def counts_at(x: np.ndarray, y: np.ndarray, n_classes: int, edges: np.ndarray) -> np.ndarray:
    """(E, K): per edge e (ascending) and class k, the rows of class k whose value (NaN:
    missing, never counted) is <= ``edges[e]``; one searchsorted and one bincount."""
    nm = ~np.isnan(x)
    seg = np.searchsorted(edges, x[nm], side="left")
    k = n_classes
    counts = np.bincount(seg * k + y[nm], minlength=(edges.size + 1) * k)
    return np.cumsum(counts.reshape(edges.size + 1, k), axis=0)[:-1].astype(float)


def spearman_aggs(frame: pl.DataFrame, exprs: list[pl.Expr], *, moments: bool = False
                  ) -> dict[str, Any]:
    """For a numeric label, per expression: C = sum r q_c, SR = sum r^2 (r the average ranks
    among non-missing values), Q = sum of q_c over non-missing rows, N non-missing; and n,
    SSQ = sum q_c^2, ``qc`` the label's centred average ranks per row. ``cuts[j]`` for a column
    with missing values: (edges, j, acc), the non-missing rows with value <= each edge and
    their sum of q_c. With ``moments``, on rows with a value: ``pearson``, ``spearman`` (the
    label re-ranked among those rows) and ``missingness`` (eta of the label over the missing
    indicator)."""
    values = frame.select([e.alias(f"v{j}") for j, e in enumerate(exprs)])
    n = frame.height
    y = frame[YCOL].to_numpy().astype(float)
    qpos, _, qr = sorted_ranks(frame[YCOL])
    qc = np.empty(n)
    qc[qpos] = qr - (n + 1) / 2
    yc = y - (y.mean() if n else 0.0)  # a split without labelled rows: no mean, no warning
    ss_y = float(yc @ yc)

    def one(j: int) -> tuple[Any, ...]:
        s = values.to_series(j)
        pos, v, r = sorted_ranks(s)
        q = qc[pos]
        cuts = None
        if pos.size < n and s.dtype != pl.String:
            edges = cut_edges(v)
            at = np.searchsorted(v, edges, side="right")
            cuts = (edges, at.astype(float), np.r_[0.0, np.cumsum(q)][at])
        extra = (np.nan, np.nan, np.nan)
        if moments and pos.size >= 3:
            ys = y[pos]
            if pos.size == n:  # the label's ranks as they are
                ry = q + (n + 1) / 2
            else:  # the label re-ranked among the rows with a value
                p2, _, r2 = sorted_ranks(pl.Series(ys))
                ry = np.empty(ys.size)
                ry[p2] = r2
            missing = np.nan
            if 0 < pos.size < n:
                s_nm = float(yc[pos].sum())
                missing = np.sqrt(min(1.0, (s_nm ** 2 / pos.size + s_nm ** 2 / (n - pos.size))
                                      / ss_y)) if ss_y > 0 else np.nan
            with np.errstate(invalid="ignore"):  # infinite values: Pearson is NaN
                extra = (pearson((v - v[0]).astype(float), ys), pearson(r, ry), missing)
        return float(r @ q), float(r @ r), float(q.sum()), float(pos.size), cuts, *extra

    res = map_columns(one, range(len(exprs)), workers=None if n >= PARALLEL_ROWS else 1)
    col = lambda i: np.array([x[i] for x in res], dtype=float)  # noqa: E731
    out = {"c": col(0), "sr": col(1), "q": col(2), "nn": col(3), "n": float(n),
           "ssq": float(qc @ qc), "qc": qc, "cuts": [x[4] for x in res]}
    if moments:
        out.update(pearson=col(5), spearman=col(6), missingness=col(7))
    return out


def shared_spearman_aggs(data: AuditData, view: LabelView, split: str) -> dict[str, Any]:
    """:func:`spearman_aggs` with moments of :func:`ranked_columns` for a numeric label,
    computed once per split and run and shared by both checks."""
    cols = ranked_columns(data)
    frame = view.frames[split]

    def compute() -> dict[str, Any]:
        schema = frame.schema  # built anew on every access: once, not once per column
        return spearman_aggs(frame, [value_expr(c, schema[c]) for c in cols], moments=True)
    return data.cached(("label_stats.spearman_aggs", split, tuple(cols)), compute)


def _rho(a: dict[str, Any], j: np.ndarray | float, acc: np.ndarray | float,
         col: int | slice = slice(None)) -> np.ndarray:
    """Spearman's rho with the missing block after the j lowest non-missing values (acc =
    their sum of q_c): R = r below the block, r + M above, j + (M+1)/2 in it."""
    c, sr, q, nn = a["c"][col], a["sr"][col], a["q"][col], a["nn"][col]
    n, ssq = a["n"], a["ssq"]
    m = n - nn
    block = j + (m + 1) / 2
    cov = c + m * (q - acc) - block * q
    ssr = (sr + 2 * m * (nn * (nn + 1) / 2 - j * (j + 1) / 2) + m * m * (nn - j)
           + m * block * block - n * ((n + 1) / 2) ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        den = np.sqrt(np.maximum(ssr, 0) * ssq)
        return np.where(den > 0, cov / den, np.nan)


def fit_spearman(a: dict[str, Any]) -> tuple[np.ndarray, RankFit]:
    """Train rho (1, p) in the best direction and, for columns with missing values, the best
    place of the missing block among the candidate cuts (cf. :func:`fit_ranked`)."""
    p = a["c"].size
    vals, desc, cuts = np.zeros(p), np.zeros(p, bool), np.full(p, np.nan)
    for j, cut in enumerate(a["cuts"]):
        rho = float(_rho(a, 0.0, 0.0, j))
        hi, cut_hi, lo, cut_lo = rho, np.nan, rho, np.nan
        if cut is not None:
            edges, jj, acc = cut
            rhos = _rho(a, jj, acc, j)
            rhos = np.where(np.isfinite(rhos), rhos, np.nan_to_num(rho))
            i_hi, i_lo = int(np.argmax(rhos)), int(np.argmin(rhos))
            if rhos[i_hi] > hi or not np.isfinite(hi):
                hi, cut_hi = float(rhos[i_hi]), edges[i_hi]
            if rhos[i_lo] < lo or not np.isfinite(lo):
                lo, cut_lo = float(rhos[i_lo]), edges[i_lo]
        desc[j] = np.nan_to_num(-lo, nan=-2) > np.nan_to_num(hi, nan=-2)
        vals[j] = -lo if desc[j] else hi
        cuts[j] = cut_lo if desc[j] else cut_hi
    return vals[None, :], RankFit(desc[None, :], cuts[None, :])


def eval_spearman(a: dict[str, Any], xs: list[np.ndarray | None], fit: RankFit
                  ) -> np.ndarray:
    """rho (1, p) in another split under the train orientation (signed: negative when the
    relation reverses)."""
    p = a["c"].size
    out = np.zeros(p)
    for j in range(p):
        cut, x = fit.cut[0, j], xs[j]
        if np.isnan(cut):
            jj, acc = 0.0, 0.0
        elif np.isposinf(cut) or x is None:
            jj, acc = a["nn"][j], a["q"][j]
        else:
            below = x <= cut
            jj, acc = float(below.sum()), float(a["qc"][below].sum())
        rho = float(_rho(a, jj, acc, j))
        out[j] = -rho if fit.descending[0, j] else rho
    return out[None, :]


def oriented_scores(frame: pl.DataFrame, col: str, fit: RankFit, j: int) -> np.ndarray:
    """(n, K') per-row scores of ranked column j under its fitted orientation: the average
    rank among non-missing values, the missing block at (values <= cut) + 1/2, negated when
    descending."""
    dtype = frame.get_column(col).dtype
    pos, _, ranks = sorted_ranks(frame.select(value_expr(col, dtype)).to_series())
    r = np.full(frame.height, np.nan)
    r[pos] = ranks
    x = float_values(frame, col)
    nm = ~np.isnan(r)
    out = np.empty((r.size, fit.cut.shape[0]))
    for i in range(fit.cut.shape[0]):
        cut = fit.cut[i, j]
        below = (0 if np.isnan(cut) else int(nm.sum()) if np.isposinf(cut) or x is None
                 else int((x <= cut).sum()))
        base = np.where(nm, r, below + 0.5)
        out[:, i] = -base if fit.descending[i, j] else base
    return out


# ---------------------------------------------------------------------------------------------
# Categorical columns: target-rate encoding fitted on train
# ---------------------------------------------------------------------------------------------

def bin_codes(view: LabelView, col: str, seed: int, n_bins: int = BINS
              ) -> tuple[np.ndarray, int]:
    """Codes of a numeric column cut at train quantiles (at most ``n_bins`` bins, edges from
    a seeded sample), missing values in a bin of their own; all splits concatenated."""
    x = np.concatenate([float_values(f, col) for f in view.frames.values()])
    tr = float_values(view.frames[view.train], col)
    tr = tr[~np.isnan(tr)]
    if tr.size > CUT_SAMPLE:
        tr = np.random.default_rng([seed, 13]).choice(tr, CUT_SAMPLE, replace=False)
    edges = (np.unique(np.quantile(tr, np.linspace(0, 1, n_bins + 1)[1:-1],
                                   method="inverted_cdf")) if tr.size else np.array([]))
    codes = np.searchsorted(edges, x, side="right")
    codes[np.isnan(x)] = edges.size + 1
    return codes, edges.size + 2


@dataclass
class Encoded:
    """The scores of an encoded column in one split: row i scores ``table[group[i]]`` (one
    column per target class). Held-out splits group by level, train by (level, fold)."""

    group: np.ndarray
    table: np.ndarray

    def rows(self) -> np.ndarray:
        return self.table[self.group]


def target_encode(view: LabelView, col: str, *, smoothing: float, folds: int, seed: int,
                  binned: bool = False, codes: Codes | None = None) -> dict[str, Encoded]:
    """Per split the :class:`Encoded` scores of a column: smoothed target rates fitted on
    train, (sum_c + m prior) / (n_c + m) (class indicators; the centred label for a numeric
    label), missing a level of its own, unseen levels at the prior; train itself gets rates
    cross-fitted over ``folds`` random folds (out-of-fold sums and prior). ``binned``: the
    levels are the train-quantile bins of a numeric column (:func:`bin_codes`). ``codes``:
    the column's :func:`train_codes`, when already made."""
    codes, n_levels, bounds, t = codes or train_codes(view, col, seed, binned)
    splits = list(view.frames)
    targets = _targets(view)
    full = _full_rates(t, targets, smoothing, n_levels)
    n, m, f = t.size, smoothing, folds
    fold = np.random.default_rng([seed, 7]).integers(0, f, n)
    key = t * f + fold
    cnt = np.bincount(t, minlength=n_levels).astype(float)
    cnt_f = np.bincount(key, minlength=n_levels * f).astype(float).reshape(n_levels, f)
    fold_n = np.bincount(fold, minlength=f).astype(float)
    oof = np.empty((n_levels * f, len(targets)))
    for k, w in enumerate(targets):
        sums = np.bincount(t, weights=w, minlength=n_levels)
        sums_f = np.bincount(key, weights=w, minlength=n_levels * f).reshape(n_levels, f)
        prior_f = (w.sum() - np.bincount(fold, weights=w, minlength=f)) / np.maximum(
            n - fold_n, 1)
        oof[:, k] = ((sums[:, None] - sums_f + m * prior_f[None, :])
                     / np.maximum(cnt[:, None] - cnt_f + m, 1e-300)).ravel()
    out = {view.train: Encoded(key, oof)}
    for i, s in enumerate(splits[1:], start=1):
        out[s] = Encoded(codes[bounds[i]: bounds[i + 1]], full)
    return out


Codes = tuple[np.ndarray, int, np.ndarray, np.ndarray]


def train_codes(view: LabelView, col: str, seed: int, binned: bool) -> Codes:
    """Level codes of every split's rows (concatenated), the number of levels, the splits'
    bounds and train's codes."""
    codes, n_levels = (bin_codes(view, col, seed) if binned else
                level_codes(pl.concat([view.frames[s][col] for s in view.frames])))
    bounds = np.cumsum([0] + [f.height for f in view.frames.values()])
    return codes, n_levels, bounds, codes[: bounds[1]]


def _targets(view: LabelView) -> list[np.ndarray]:
    """What a level's rate averages over train rows: per target class its indicator, or the
    centred label for a numeric label."""
    y = view.y(view.train)
    return ([(y - y.mean()).astype(float)] if view.kind == LabelKind.NUMERIC
            else [(y == k).astype(float) for k in view.targets])


def _full_rates(t: np.ndarray, targets: list[np.ndarray], m: float, n_levels: int
                ) -> np.ndarray:
    """(L, K') smoothed rates fitted on every train row: (sum_l + m prior) / (n_l + m)."""
    cnt = np.bincount(t, minlength=n_levels).astype(float)
    full = np.empty((n_levels, len(targets)))
    for k, w in enumerate(targets):
        sums = np.bincount(t, weights=w, minlength=n_levels)
        full[:, k] = (sums + m * w.mean()) / np.maximum(cnt + m, 1e-300)
    return full


def shared_codes(data: AuditData, view: LabelView, col: str) -> Codes:
    """:func:`train_codes` of a categorical column, made once while a check measures (kept in
    ``data``'s cache under ``label_stats.codes``, which the polars engine's ``release`` drops:
    the codes of every row of every split)."""
    return data.cached(("label_stats.codes", col), lambda: train_codes(view, col, 0, False))


def held_out_aucs(view: LabelView, col: str, smoothing: float, codes: Codes | None = None
                  ) -> dict[str, float]:
    """Binary label: per later split, the AUC of its rows scored by ``col``'s smoothed target
    rate fitted on every train row (the held-out figures of :func:`target_encode`, without
    the cross-fitting of train); ``codes`` as in :func:`target_encode`."""
    codes, n_levels, bounds, t = codes or train_codes(view, col, 0, False)
    full = _full_rates(t, _targets(view), smoothing, n_levels)
    out = {}
    for i, s in enumerate(list(view.frames)[1:], start=1):
        (auc,) = encoded_figures(view, s, [Encoded(codes[bounds[i]: bounds[i + 1]], full)])
        out[s] = float(auc[0])
    return out


def auc_from_groups(score: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> float:
    """AUC when every row of group g scores ``score[g]``, with ``pos[g]``/``neg[g]`` rows of
    each class: groups of equal score merged, AUC = sum_l P_l (N_<l + N_l / 2) / (P N)."""
    keep = (pos + neg) > 0
    _, inv = np.unique(score[keep], return_inverse=True)
    p = np.bincount(inv, weights=pos[keep])
    q = np.bincount(inv, weights=neg[keep])
    denom = p.sum() * q.sum()
    return float((p * (np.cumsum(q) - q / 2)).sum() / denom) if denom > 0 else float("nan")


def _group_spearman(score: np.ndarray, n_g: np.ndarray, q_g: np.ndarray, n: float,
                    ssq: float) -> float:
    """Spearman's rho of group scores with the label (centred label ranks summed per group
    in ``q_g``): rows of a group share the average rank of their score."""
    keep = n_g > 0
    _, inv = np.unique(score[keep], return_inverse=True)
    nm = np.bincount(inv, weights=n_g[keep])
    qm = np.bincount(inv, weights=q_g[keep])
    r = np.cumsum(nm) - nm + (nm + 1) / 2
    den = (float((nm * r * r).sum()) - n * ((n + 1) / 2) ** 2) * ssq
    return float((r * qm).sum() / np.sqrt(den)) if den > 0 else float("nan")


def encoded_figures(view: LabelView, split: str, encs: list[Encoded]) -> list[np.ndarray]:
    """Per encoded column, the per-target-class AUCs (or Spearman's rho, numeric label) in one
    split, from per-group class counts (bincounts; no row is sorted)."""
    y = view.y(split)
    out = []
    if view.kind == LabelKind.NUMERIC:
        pos, _, r = sorted_ranks(view.frames[split][YCOL])
        qc = np.empty(y.size)
        qc[pos] = r - (y.size + 1) / 2
        ssq = float(qc @ qc)
        for e in encs:
            g = e.table.shape[0]
            out.append(np.array([_group_spearman(
                e.table[:, 0], np.bincount(e.group, minlength=g).astype(float),
                np.bincount(e.group, weights=qc, minlength=g), float(y.size), ssq)]))
        return out
    k = view.n_classes
    for e in encs:
        g = e.table.shape[0]
        counts = np.bincount(e.group * k + y, minlength=g * k).reshape(g, k).astype(float)
        total = counts.sum(1)
        out.append(np.array([auc_from_groups(e.table[:, i], counts[:, t], total - counts[:, t])
                             for i, t in enumerate(view.targets)]))
    return out
