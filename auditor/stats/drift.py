"""Per-column distribution comparison for the drift checks: samples, bins, statistics, charts.

Vectorised across columns: every numeric column of a split is cast to float, cleaned (NaN ->
missing) and sorted in one polars select (parallel over columns), once per split and run, and
reused by every comparison that split takes part in. From the sorted arrays follow, without
another pass over the data: the reference's quantile edges (indexing), the bin counts of both
splits (a binary search of the edges), and the KS statistic and Wasserstein distance (one merge
of the two sorted arrays, :func:`auditor.stats.numerics.ecdf_gap`). Categorical columns are
reduced to value counts once per split.

Binning for PSI (numeric): with at most ``n_bins`` distinct reference values, one bin per
reference value plus an "(unseen values)" bin for values the reference never had (listed by
value in ``new_categories``, like new categories). Otherwise edges are the reference's
inverted-CDF quantiles at j/n_bins (e_j = the smallest value with F_ref(e_j) >= j/n_bins,
j = 1..n_bins-1), deduplicated and with the reference maximum dropped; bins are
(-inf, e_1], (e_1, e_2], ..., (e_m, +inf). Each edge is a reference value and the top bin
holds the maximum, so no bin is empty in the reference by construction, whatever the ties.
Missing values (null, NaN) form one more bin.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np
import polars as pl

from auditor.loading.data import Kind
from auditor.stats.levels import (MISSING, OTHER_VALUES, LevelShift,
                                 contingency_test, level_shifts, one_off_sd, one_off_share,
                                 pool_rare_levels, psi_by_chance, unseen_by_chance_p)
from auditor.stats.numerics import (EcdfGap, clip_text, cramers_v, ecdf_gap, inverted_cdf,
                                    js_distance, ks_pvalue, map_columns, psi, run_starts)


LISTED_CATEGORIES = 100  # new / vanished categories kept per column (the counts are complete)
NUMERIC_KINDS = (Kind.NUMERIC, Kind.DATETIME)
CATEGORICAL_KINDS = (Kind.CATEGORICAL, Kind.BOOLEAN)


@dataclass
class Sample:
    """One column of one split, prepared for comparison: sorted non-missing values (numeric)
    or value counts (categorical: columns ``value`` (String) and ``n``)."""

    kind: Kind
    rows: int
    missing: int
    values: np.ndarray | None = None
    counts: pl.DataFrame | None = None


@dataclass
class ColumnDrift:
    """Every statistic of one column between a reference split and a compared split."""

    column: str
    kind: Kind
    ref_rows: int
    cur_rows: int
    ref_missing: int
    cur_missing: int
    bins: list[str]
    ref_counts: np.ndarray
    cur_counts: np.ndarray
    psi: float
    psi_terms: np.ndarray
    js: float
    chi2_p: float
    per_value: bool = False
    cramers_v: float | None = None
    gap: EcdfGap | None = None
    ks_p: float | None = None
    wasserstein: float | None = None
    unseen_rows: int | None = None
    new_categories: list[tuple[str, int]] = field(default_factory=list)       # largest first,
    vanished_categories: list[tuple[str, int]] = field(default_factory=list)  # capped at 100
    n_new: int = 0
    n_vanished: int = 0
    all_unique: bool = False  # every non-missing value occurs once per split, as in an id
    whole: bool = False  # a numeric column whose values are all whole numbers (an id may be;
    # a measurement with a fraction, unique on every row, is not)
    test: str = "chi-square"  # how chi2_p was computed (see contingency_test)
    psi_chance: float | None = None  # high-cardinality: PSI expected from sampling alone
    rare_levels: int = 0      # levels pooled into the RARE_LEVELS bin
    levels: list[LevelShift] = field(default_factory=list)  # per-level shifts, tested ones
    good_turing: float | None = None  # share of reference rows holding a one-off value
    good_turing_sd: float | None = None  # its standard error (Esty)
    unseen_p: float | None = None  # P(unseen rows >= observed) under random re-splits of the
    # pooled rows (:func:`~auditor.stats.levels.unseen_by_chance_p`), when values are counted
    variants: dict[str, str] = field(default_factory=dict)  # new value -> reference value it
    # equals up to case, whitespace and punctuation (schema.consistency's normalisation)
    chart: dict[str, Any] | None = None  # a chart measured elsewhere (the spark engine's
    # histogram from binned counts), used by the evidence instead of one drawn from values
    entity: str | None = None  # measured at one row per value of this column (an attribute
    # of the entity in a group split), not per row

    @property
    def null_rate_delta(self) -> float:
        return self.cur_missing / self.cur_rows - self.ref_missing / self.ref_rows

    @property
    def unseen_rate(self) -> float | None:
        return None if self.unseen_rows is None else self.unseen_rows / self.cur_rows


# ---------------------------------------------------------------------------------------------
# Preparing samples
# ---------------------------------------------------------------------------------------------

def _as_float(col: str, dtype: pl.DataType) -> pl.Expr:
    """A numeric, duration or datetime column as Float64 (datetimes: seconds since the epoch;
    durations: their integer ticks)."""
    expr = pl.col(col)
    if isinstance(dtype, (pl.Datetime, pl.Date)):
        return expr.dt.epoch("us").cast(pl.Float64) / 1e6
    if isinstance(dtype, pl.Duration):
        return expr.to_physical().cast(pl.Float64)
    return expr.cast(pl.Float64)


def prepare(df: pl.DataFrame, kinds: dict[str, Kind]) -> dict[str, Sample]:
    """Samples of every column in ``kinds`` for one split: numerics sorted in one select."""
    out: dict[str, Sample] = {}
    numeric = [c for c, k in kinds.items() if k in NUMERIC_KINDS]
    # Each column is read as its own one-column frame: ``df.schema`` and ``df.select`` cost
    # O(df's columns) per call, so on a wide table (the caller prepares a few columns at a
    # time) they made preparing quadratic in the columns (10,000 columns: ~80 s)
    if numeric:
        def ordered(c: str) -> Sample:
            # numpy's (SIMD) sort: 5x less CPU than polars' sort of a Float64 column at 1M
            # rows; same values in the same order (-0.0 and 0.0 may swap: they compare equal).
            # One column cast at a time (per worker), not a float64 frame of every column held
            # until the last is sorted: at 10M x 40 that frame doubled the samples' memory
            col = df.get_column(c)
            if col.dtype.is_numeric() and not col.dtype.is_decimal():  # as _as_float, in numpy:
                # a null becomes NaN (missing either way) and integers float64, as a polars
                # cast; no Series method, each of which runs a query (2 per column made a
                # 5,000-column table of 200 rows spend 9 of drift.features' 21 s in queries)
                a = col.to_numpy().astype(np.float64, copy=False)
                known = ~np.isnan(a)
                return Sample(kinds[c], df.height, int(len(a) - known.sum()),
                              values=np.sort(a[known]))
            s = col.to_frame().select(_as_float(c, col.dtype).fill_nan(None).alias(c)) \
                .to_series()
            return Sample(kinds[c], df.height, s.null_count(),
                          values=np.sort(s.drop_nulls().to_numpy()))

        # threads where the sorts are worth it (numpy frees the GIL), else no pool to start
        big = df.height * len(numeric) > 200_000
        for c, sample in zip(numeric, map_columns(ordered, numeric,
                                                  workers=None if big else 1)):
            out[c] = sample

    def counted(c: str) -> Sample:
        # group_by().len() runs on all cores: 1.6x (100k levels) to 5x (a few levels)
        # faster than Series.value_counts at 10M rows; the order is set by the caller
        col = df.get_column(c)
        counts = (col.to_frame().select(pl.col(c).drop_nulls().cast(pl.String).alias("value"))
                  .group_by("value").len(name="n").with_columns(pl.col("n").cast(pl.Int64)))
        return Sample(kinds[c], df.height, col.null_count(), counts=counts)

    categorical = [c for c, k in kinds.items() if k in CATEGORICAL_KINDS]
    # many small columns (a wide table): one column per task on polars' thread count, as a
    # group-by of a few thousand rows uses one core (same results, in column order)
    small = df.height < 200_000 and len(categorical) > 8
    for c, sample in zip(categorical, map_columns(counted, categorical,
                                                  workers=None if small else 1)):
        out[c] = sample
    return out


# ---------------------------------------------------------------------------------------------
# Comparing one column
# ---------------------------------------------------------------------------------------------

def fmt_value(x: float, kind: Kind) -> str:
    """A bin edge or value for display: ISO time for datetimes, 4 significant digits else."""
    if kind == Kind.DATETIME and math.isfinite(x):
        try:
            return datetime.fromtimestamp(x, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        except (OverflowError, OSError, ValueError):
            pass
    if math.isfinite(x) and x == round(x) and abs(x) < 1e15:
        return f"{int(x):,}" if abs(x) >= 1e4 else str(int(x))
    return f"{x:.4g}"


def distinct_sorted(a: np.ndarray) -> np.ndarray:
    """The distinct values of a sorted array, in order (one linear pass)."""
    return a[run_starts(a)]


def quantile_edges(a: np.ndarray, n_bins: int) -> np.ndarray:
    """Inner bin edges from the sorted reference ``a``: inverted-CDF quantiles at j/n_bins,
    deduplicated, without the maximum (see the module docstring)."""
    edges = np.unique(inverted_cdf(a, n_bins))
    return edges[edges < a[-1]]


def numeric_bins(a: np.ndarray, b: np.ndarray, n_bins: int, kind: Kind
                 ) -> tuple[list[str], np.ndarray, np.ndarray, bool, int | None]:
    """PSI bins for sorted samples ``a`` (reference) and ``b``: labels, counts of a and b,
    whether binned per value, and (per value) how many rows of b hold unseen values."""
    if len(a) == 0:
        return ["all values"], np.array([0]), np.array([len(b)]), False, None
    distinct = distinct_sorted(a) if len(a) <= 50 * n_bins else None
    if distinct is None:
        # cheap test first: a long array with few distinct values has them at the quantiles too
        probe = np.unique(a[np.linspace(0, len(a) - 1, 20 * n_bins).astype(np.int64)])
        distinct = distinct_sorted(a) if len(probe) <= n_bins else None
    if distinct is not None and len(distinct) <= n_bins:
        lo_a = np.searchsorted(a, distinct, "left")
        hi_a = np.searchsorted(a, distinct, "right")
        ca = hi_a - lo_a
        cb = np.searchsorted(b, distinct, "right") - np.searchsorted(b, distinct, "left")
        other = len(b) - int(cb.sum())
        labels = [fmt_value(v, kind) for v in distinct]
        if other:
            labels.append(OTHER_VALUES)
            ca = np.append(ca, 0)
            cb = np.append(cb, other)
        return labels, ca, cb, True, other
    edges = quantile_edges(a, n_bins)
    ca = np.diff(np.concatenate([[0], np.searchsorted(a, edges, "right"), [len(a)]]))
    cb = np.diff(np.concatenate([[0], np.searchsorted(b, edges, "right"), [len(b)]]))
    shown = [fmt_value(e, kind) for e in edges]
    if not len(edges):
        labels = ["all values"]
    else:
        labels = ([f"<= {shown[0]}"] + [f"({lo}, {hi}]" for lo, hi in zip(shown, shown[1:])]
                  + [f"> {shown[-1]}"])
    return labels, ca, cb, False, None


def sorted_quantile(a: np.ndarray, q: float) -> float:
    """Quantile of a sorted, non-empty array with linear interpolation (numpy's default
    method), by indexing instead of numpy.quantile's partition."""
    h = (len(a) - 1) * q
    lo = int(math.floor(h))
    hi = min(lo + 1, len(a) - 1)
    return float(a[lo] + (h - lo) * (a[hi] - a[lo]))


def scale_of(a: np.ndarray) -> float:
    """The reference's spread used to normalise Wasserstein: its interquartile range (linear
    interpolation, as numpy.quantile), or its standard deviation when the IQR is 0."""
    if len(a) == 0:
        return 0.0
    with np.errstate(invalid="ignore"):  # ±inf values: the scale is NaN, W1 goes unscaled
        iqr = sorted_quantile(a, 0.75) - sorted_quantile(a, 0.25)
        return iqr if iqr > 0 else float(np.std(a))


def compare_numeric(col: str, ref: Sample, cur: Sample, *, n_bins: int, epsilon: float,
                    seed: int = 0, min_level_rows: int = 30) -> ColumnDrift:
    a, b = ref.values, cur.values
    assert a is not None and b is not None
    labels, ca, cb, per_value, unseen = numeric_bins(a, b, n_bins, ref.kind)
    one_off = one_off_share(ca) if per_value else None  # before the missing bin, as categories
    one_off_err = one_off_sd(ca) if per_value else None
    if ref.missing or cur.missing:
        labels = labels + [MISSING]
        ca = np.append(ca, ref.missing)
        cb = np.append(cb, cur.missing)
    value, terms = psi(ca, cb, epsilon=epsilon)
    chi2_p, test = contingency_test(np.vstack([ca, cb]), seed)
    out = ColumnDrift(col, ref.kind, ref.rows, cur.rows, ref.missing, cur.missing, labels, ca,
                      cb, value, terms, js_distance(ca, cb), chi2_p, per_value=per_value,
                      unseen_rows=unseen, test=test, good_turing=one_off,
                      good_turing_sd=one_off_err)
    if per_value:
        out.levels = level_shifts(labels, ca, cb, min_rows=min_level_rows)
        if unseen:
            out.new_categories, out.n_new, held = unseen_values(a, b, ref.kind)
            seen = ca[:len(labels) - 1 - bool(ref.missing or cur.missing)]  # value bins
            out.unseen_p = unseen_by_chance_p(np.concatenate([seen + cb[:len(seen)], held]),
                                              ref.rows, cur.rows, unseen)
    out.all_unique = len(a) > 1 and len(b) > 1 and bool(
        (a[1:] != a[:-1]).all() and (b[1:] != b[:-1]).all())
    out.whole = ref.kind == Kind.NUMERIC and bool(np.all(a == np.round(a))
                                                  and np.all(b == np.round(b)))
    if len(a) and len(b):
        gap = ecdf_gap(a, b)
        out.gap = gap
        out.ks_p = ks_pvalue(gap.d, len(a), len(b), a, b)
        scale = scale_of(a)
        if scale > 0 and math.isfinite(gap.w1):
            out.wasserstein = gap.w1 / scale
        elif gap.w1 == 0:
            out.wasserstein = 0.0
    return out


def unseen_values(a: np.ndarray, b: np.ndarray, kind: Kind
                  ) -> tuple[list[tuple[str, int]], int, np.ndarray]:
    """Values of sorted ``b`` that sorted ``a`` never has: (value shown, rows of b) for the
    most frequent (at most LISTED_CATEGORIES), how many distinct values there are, and the
    rows of b holding each."""
    distinct = distinct_sorted(a)
    pos = np.minimum(np.searchsorted(distinct, b), len(distinct) - 1)
    rest = b[distinct[pos] != b] if len(distinct) else b
    if not len(rest):
        return [], 0, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(run_starts(rest))
    counts = np.diff(np.append(starts, len(rest)))
    order = np.lexsort((starts, -counts))[:LISTED_CATEGORIES]
    return ([(fmt_value(float(rest[starts[i]]), kind), int(counts[i])) for i in order],
            len(starts), counts)


def compare_categorical(col: str, ref: Sample, cur: Sample, *, epsilon: float, seed: int = 0,
                        max_levels: int = 50, min_level_rows: int = 30, null: bool = False
                        ) -> ColumnDrift:
    """Per-category bins; above ``max_levels`` categories the levels too rare to compare are
    pooled (:func:`pool_rare_levels`) and PSI is judged net of chance (:func:`psi_by_chance`).
    ``null`` (a backtest of the design's null, read for its effect sizes only: PSI and PSI in
    excess of chance, Cramér's V, level folds): no contingency test (p = 1), no unseen-value
    p-value and no variants of new values."""
    assert ref.counts is not None and cur.counts is not None
    joined = (ref.counts.join(cur.counts, on="value", how="full", coalesce=True, suffix="_cur")
              .fill_null(0).sort("value"))
    values = joined["value"].to_list()
    ca = joined["n"].to_numpy().astype(np.int64)
    cb = joined["n_cur"].to_numpy().astype(np.int64)
    new = (ca == 0) & (cb > 0)
    vanished = (ca > 0) & (cb == 0)
    k = len(values)
    unique = k > 2 and int(max(ca.max(), cb.max())) == 1
    one_off = one_off_share(ca)
    one_off_sd_raw = one_off_sd(ca)

    def listed(mask: np.ndarray, counts: np.ndarray) -> list[tuple[str, int]]:
        idx = np.flatnonzero(mask)
        idx = idx[np.lexsort((idx, -counts[idx]))][:LISTED_CATEGORIES]
        return [(values[i], int(counts[i])) for i in idx]

    new_listed, vanished_listed = listed(new, cb), listed(vanished, ca)
    variants = new_value_variants(values, ca > 0, new) \
        if not null and new.any() and (ca > 0).any() else {}
    unseen_rows = int(cb[new].sum())
    unseen_p = unseen_by_chance_p(ca + cb, ref.rows, cur.rows, unseen_rows) \
        if unseen_rows and not null else None
    labels = list(values)
    if ref.missing or cur.missing:
        labels.append(MISSING)
        ca = np.append(ca, ref.missing)
        cb = np.append(cb, cur.missing)
    pooled, chance = 0, None
    if k > max_levels:
        labels, ca, cb, pooled = pool_rare_levels(labels, ca, cb, k)
        chance = psi_by_chance(int(((ca + cb) > 0).sum()), int(ca.sum()), int(cb.sum()))
    value, terms = psi(ca, cb, epsilon=epsilon)
    table = np.vstack([ca, cb])
    chi2_p, test = contingency_test(table, seed) if not null else (1.0, "not tested (null)")
    return ColumnDrift(col, ref.kind, ref.rows, cur.rows, ref.missing, cur.missing, labels, ca,
                       cb, value, terms, js_distance(ca, cb), chi2_p,
                       cramers_v=cramers_v(table), unseen_rows=unseen_rows,
                       new_categories=new_listed, vanished_categories=vanished_listed,
                       n_new=int(new.sum()), n_vanished=int(vanished.sum()),
                       all_unique=unique, test=test, psi_chance=chance, rare_levels=pooled,
                       levels=level_shifts(labels, ca, cb, min_rows=min_level_rows),
                       good_turing=one_off, good_turing_sd=one_off_sd_raw, variants=variants,
                       unseen_p=unseen_p)


def new_value_variants(values: list[str], seen: np.ndarray, new: np.ndarray) -> dict[str, str]:
    """New values that equal a reference value up to case, whitespace and punctuation
    ("new york " for "New York"), each mapped to the most frequent such reference value's
    first in sort order."""
    from auditor.stats.textnorm import normalised

    frame = pl.DataFrame({"value": values, "seen": seen, "new": new}).with_columns(
        normalised(pl.col("value")).alias("key")).filter(pl.col("key") != "")
    ref = frame.filter("seen").group_by("key").agg(pl.col("value").first().alias("ref"))
    hits = frame.filter("new").join(ref, on="key")
    return dict(zip(hits["value"].to_list(), hits["ref"].to_list()))


def compare(col: str, ref: Sample, cur: Sample, *, n_bins: int, epsilon: float, seed: int = 0,
            max_levels: int = 50, min_level_rows: int = 30, null: bool = False) -> ColumnDrift:
    """``null``: a comparison of the split design's null (a backtest), whose effect sizes are
    all that is read (categorical: no test, unseen-value p or variants)."""
    if ref.kind in NUMERIC_KINDS:
        return compare_numeric(col, ref, cur, n_bins=n_bins, epsilon=epsilon, seed=seed,
                               min_level_rows=min_level_rows)
    return compare_categorical(col, ref, cur, epsilon=epsilon, seed=seed, max_levels=max_levels,
                               min_level_rows=min_level_rows, null=null)


# ---------------------------------------------------------------------------------------------
# Evidence: bins table and charts (aggregates only)
# ---------------------------------------------------------------------------------------------

def _shares(counts: np.ndarray) -> np.ndarray:
    total = counts.sum()
    return counts / total if total else np.zeros(len(counts))


def bins_table(cd: ColumnDrift, ref: str, cur: str, limit: int) -> list[dict[str, Any]]:
    """Per-bin shares and PSI terms; the ``limit`` largest terms, the rest summed in one row."""
    ea, eb = _shares(cd.ref_counts), _shares(cd.cur_counts)
    order = np.arange(len(cd.bins))
    if len(order) > limit:
        order = np.lexsort((order, -np.nan_to_num(cd.psi_terms)))[:limit]
        order.sort()
    rows = [{"bin": clip_text(cd.bins[i]), f"{ref} share": round(float(ea[i]), 6),
             f"{cur} share": round(float(eb[i]), 6), "psi term": round(float(cd.psi_terms[i]), 6)}
            for i in order]
    rest = np.setdiff1d(np.arange(len(cd.bins)), order)
    if len(rest):
        rows.append({"bin": f"(other {len(rest):,} bins)",
                     f"{ref} share": round(float(ea[rest].sum()), 6),
                     f"{cur} share": round(float(eb[rest].sum()), 6),
                     "psi term": round(float(np.nansum(cd.psi_terms[rest])), 6)})
    return rows


def category_chart(cd: ColumnDrift, ref: str, cur: str, top: int) -> dict[str, Any]:
    """Side-by-side shares of the ``top`` largest bins (by the larger of the two shares) plus
    one "other" bar for the rest."""
    ea, eb = _shares(cd.ref_counts), _shares(cd.cur_counts)
    biggest = np.maximum(ea, eb)
    order = np.lexsort((np.arange(len(biggest)), -biggest))
    keep, rest = order[:top], order[top:]
    cats = [cd.bins[i] for i in keep]
    sa, sb = [round(float(ea[i]), 6) for i in keep], [round(float(eb[i]), 6) for i in keep]
    if len(rest):
        cats.append(f"other ({len(rest):,})")
        sa.append(round(float(ea[rest].sum()), 6))
        sb.append(round(float(eb[rest].sum()), 6))
    return {"type": "grouped_bar", "title": f"{cd.column}: share of rows per value",
            "categories": cats, "series": {ref: sa, cur: sb}, "ylabel": "share of rows",
            "width": 7.0, "height": 3.2}


def numeric_chart(cd: ColumnDrift, a: np.ndarray, b: np.ndarray, ref: str, cur: str,
                  n_bins: int, top: int) -> dict[str, Any]:
    """Overlaid histogram (shares of non-missing rows) over ``n_bins`` equal-width bins between
    the 0.5% and 99.5% quantiles of both samples' finite values; values beyond (±inf too) fall
    in the end bins. Columns binned per value get a side-by-side bar chart instead."""
    fa, fb = _finite_part(a), _finite_part(b)  # ±inf would make the edges inf or NaN
    if cd.per_value or len(fa) == 0 or len(fb) == 0:
        return category_chart(cd, ref, cur, top)
    lo = min(sorted_quantile(fa, 0.005), sorted_quantile(fb, 0.005))
    hi = max(sorted_quantile(fa, 0.995), sorted_quantile(fb, 0.995))
    if not hi > lo:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, n_bins + 1)
    inner = edges[1:-1]

    def hist(x: np.ndarray) -> list[float]:
        counts = np.diff(np.concatenate([[0], np.searchsorted(x, inner, "right"), [len(x)]]))
        return [round(float(v), 6) for v in counts / len(x)]

    spec = {"type": "hist", "title": f"{cd.column}: distribution of non-missing values",
            "edges": round_edges(edges), "series": {ref: hist(a), cur: hist(b)},
            "xlabel": cd.column, "ylabel": "share of non-missing rows", "width": 7.0,
            "height": 3.2}
    if cd.kind == Kind.DATETIME:  # edges are seconds since the epoch: drawn on a date axis
        spec.update(xlabel=f"{cd.column} (UTC)", x_unit="epoch_seconds")
    return spec


def round_edges(edges: np.ndarray) -> list[float]:
    """Bin edges rounded to 1/10,000 of a bin: short in the JSON, never merging two edges
    (a fixed number of significant digits would, for a narrow range far from zero such as
    a few seconds of epoch time)."""
    step = float(edges[1] - edges[0])
    places = max(0, 4 - math.floor(math.log10(step))) if step > 0 and math.isfinite(step) else 10
    return [round(float(e), places) for e in edges]


def _finite_part(a: np.ndarray) -> np.ndarray:
    """The finite values of a sorted float array (a contiguous slice: -inf first, +inf last)."""
    return a[np.searchsorted(a, -np.inf, side="right"):np.searchsorted(a, np.inf)]


def entity_columns(frames: dict[str, pl.DataFrame], entity: str, columns: list[str],
                   min_rows: float = 1.0) -> list[str]:
    """The ``columns`` that are attributes of the entity column ``entity``: one value (null
    counting as a value) on every row of each entity, in every frame; only where some entity
    has more than one row and each frame holds at least ``min_rows`` rows per entity on
    average (else any column qualifies by chance, and none is reported)."""
    counted = [(f.get_column(entity).drop_nulls(), f) for f in frames.values() if f.height]
    distinct = [e.n_unique() for e, _ in counted] if columns else []  # one pass per frame
    if not columns or not any(u < e.len() for u, (e, _) in zip(distinct, counted)) or any(
            e.len() < min_rows * u for u, (e, _) in zip(distinct, counted)):
        return []
    keep = set(columns)
    for _, f in counted:
        if not keep:
            break
        counts = (f.filter(pl.col(entity).is_not_null()).group_by(entity)
                  .agg([pl.col(c).n_unique().alias(c) for c in keep])
                  .select([pl.col(c).max() for c in keep]).row(0, named=True))
        keep = {c for c in keep if (counts[c] or 0) <= 1}
    return [c for c in columns if c in keep]


def one_row_per(frame: pl.DataFrame, entity: str) -> pl.DataFrame:
    """The first row of every entity (rows without one kept as they are, each its own)."""
    known = pl.col(entity).is_not_null()
    return pl.concat([frame.filter(known).unique(subset=[entity], keep="first",
                                                 maintain_order=True),
                      frame.filter(~known)])
