"""Drift of numeric and datetime columns on the spark engine (``drift.features``, a numeric
``drift.label``): measured from aggregates, judged by the polars checks' own code
(:func:`auditor.detectors.drift.grade_all`, :mod:`auditor.judging.drift_verdicts`).

Measuring, per split and for every numeric column at once (datetimes as seconds since the
epoch, NaN as missing, -0.0 as 0.0):

1. One ``agg``: rows, non-missing count, min, max, population std, an approximate distinct
   count, and ``percentile_approx`` at j/``KS_GRID`` and at j/``n_bins`` with accuracy
   ``QUANTILE_ACCURACY`` (rank error at most n / accuracy; exact -- numpy's inverted-CDF
   quantiles -- when the split has fewer non-missing values than the accuracy).
2. Columns with few distinct values (approximate count <= 2 n_bins + 10): their exact value
   counts, one ``groupBy`` over all such columns (at most that many rows per column reach
   the driver).
3. The fine grid of a column: the union over splits of those quantiles, min, max and exact
   values (finite values only). One pass of ``Bucketizer`` (binary search) over all columns
   puts each value in a cell: the grid point itself, or the open interval between two grid
   points; one ``groupBy`` gives the cell counts (at most 2 G + 1 per column).

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

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auditor.engines.spark_engine import col as _c, quoted
from auditor.errors import NotApplicable
from auditor.loading.data import Kind, LabelKind
from auditor.report.results import Finding, Severity

KS_GRID = 1000              # quantiles per split in a column's fine grid
QUANTILE_ACCURACY = 10_000  # percentile_approx accuracy: relative rank error 1e-4
UNSEEN_LISTED = 100         # unseen values listed per column (as LISTED_CATEGORIES)


@dataclass
class Profile:
    """One numeric column of one split: counts, range and quantile sketches."""

    rows: int
    missing: int
    lo: float | None
    hi: float | None
    std: float | None
    distinct: int
    grid_q: np.ndarray      # quantiles at j / KS_GRID and j / n_bins (sorted, j >= 1)
    bin_q: np.ndarray       # quantiles at j / n_bins, j = 1 .. n_bins - 1
    values: np.ndarray | None = None   # exact distinct values (few-valued columns)
    counts: np.ndarray | None = None   # their counts


@dataclass
class Cells:
    """A column's counts on its grid g_0 < ... < g_{G-1}: cell 2k is the open interval
    (g_{k-1}, g_k) (g_{-1} = -inf), cell 2k + 1 the point g_k, cell 2G the interval above."""

    grid: np.ndarray
    counts: np.ndarray

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def cdf_at_grid(self) -> np.ndarray:
        """Counts <= g_k for every grid point (exact)."""
        return np.cumsum(self.counts)[1::2]

    def count_le(self, x: np.ndarray) -> np.ndarray:
        """Counts <= x: exact at grid points and in empty intervals, linear inside others."""
        g, c = self.grid, self.counts
        cum = np.concatenate([[0], np.cumsum(c)]).astype(float)
        k = np.searchsorted(g, x, side="left")          # grid points < x
        on = (k < len(g)) & (g[np.minimum(k, len(g) - 1)] == x)
        below = cum[2 * k]                               # through the point g_{k-1}
        interval = c[2 * k].astype(float)
        lo = np.where(k > 0, g[np.maximum(k - 1, 0)], x)
        hi = np.where(k < len(g), g[np.minimum(k, len(g) - 1)], x)
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where((hi > lo) & np.isfinite(hi - lo), (x - lo) / (hi - lo), 0.5)
        frac = np.where(k == 0, 0.0, np.where(k == len(g), 1.0, frac))
        inside = below + np.clip(frac, 0, 1) * interval
        return np.where(on, cum[2 * k + 2], inside)

    def order_stat(self, r: float) -> float:
        """The value of 0-based rank ``r`` in sorted order (exact on a point cell)."""
        cum = np.cumsum(self.counts)
        c = int(np.searchsorted(cum, r, side="right"))
        c = min(c, len(self.counts) - 1)
        g = self.grid
        if c % 2 == 1:
            return float(g[c // 2])
        k = c // 2
        lo = g[k - 1] if k > 0 else g[0]
        hi = g[k] if k < len(g) else g[-1]
        before = cum[c] - self.counts[c]
        frac = (r - before + 0.5) / self.counts[c] if self.counts[c] else 0.5
        return float(lo + min(max(frac, 0.0), 1.0) * (hi - lo))

    def quantile(self, q: float) -> float:
        """numpy's default (linear) quantile, as :func:`auditor.stats.drift.sorted_quantile`."""
        h = (self.n - 1) * q
        lo = int(math.floor(h))
        hi = min(lo + 1, self.n - 1)
        a, b = self.order_stat(lo), self.order_stat(hi)
        return float(a + (h - lo) * (b - a))


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


def profiles(data: Any, split: str, cols: list[str], n_bins: int) -> dict[str, Profile]:
    """Step 1 and 2 of the module docstring for one split (cached per split and columns)."""
    def measure() -> dict[str, Profile]:
        from pyspark.sql import functions as F

        df = data.splits[split]
        # one sketch per column for both sets of quantiles (j / n_bins equals the same
        # correctly rounded double wherever it is also some j' / KS_GRID)
        probs = sorted(set(_probs(KS_GRID)) | set(_probs(n_bins)))
        at_bins = [probs.index(p) for p in _probs(n_bins)]
        array = F.array(*[F.lit(p) for p in probs])
        aggs = [F.count(F.lit(1)).alias("rows")]
        for i, c in enumerate(cols):
            x = numeric_expr(df, c)
            aggs += [F.count(x).alias(f"n{i}"), F.min(x).alias(f"lo{i}"),
                     F.max(x).alias(f"hi{i}"), F.stddev_pop(x).alias(f"sd{i}"),
                     F.approx_count_distinct(x, 0.01).alias(f"d{i}"),
                     F.percentile_approx(x, array, QUANTILE_ACCURACY).alias(f"q{i}")]
        row = df.agg(*aggs).collect()[0]
        rows = int(row["rows"])
        out = {}
        for i, c in enumerate(cols):
            n = int(row[f"n{i}"])
            q = np.array(row[f"q{i}"] or [], dtype=float)
            out[c] = Profile(rows, rows - n, row[f"lo{i}"], row[f"hi{i}"], row[f"sd{i}"],
                             int(row[f"d{i}"]), q, q[at_bins] if len(q) else q)
        few = [c for c in cols
               if out[c].distinct <= 2 * n_bins + 10 and out[c].rows > out[c].missing]
        if few:
            for c, (values, counts) in _value_counts(df, few, 4 * n_bins + 20).items():
                out[c].values, out[c].counts = values, counts
        return out

    return data.cached(("spark.drift.profiles", split, tuple(cols), n_bins), measure)


def _value_counts(df: Any, cols: list[str], cap: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Exact value counts of few-valued columns in one groupBy; a column with more than
    ``cap`` distinct values (the approximate count was low) gets none."""
    from pyspark.sql import functions as F

    stacked = _stack(df, {c: numeric_expr(df, c) for c in cols})
    rows = (stacked.where(F.col("v").isNotNull()).groupBy("c", "v").count()
            .limit(len(cols) * (cap + 1)).collect())
    by: dict[int, list[tuple[float, int]]] = {}
    for r in rows:
        by.setdefault(int(r["c"]), []).append((float(r["v"]), int(r["count"])))
    out = {}
    for i, c in enumerate(cols):
        pairs = sorted(by.get(i, []))
        if 0 < len(pairs) <= cap:
            out[c] = (np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs],
                                                                dtype=np.int64))
    return out


def _stack(df: Any, exprs: dict[str, Any]) -> Any:
    """Rows (c = column index, v = value) for every column: one long frame, no job per column."""
    from pyspark.sql import functions as F

    names = list(exprs)
    wide = df.select(*[e.alias(f"_v{i}") for i, e in enumerate(exprs.values())])
    body = ", ".join(f"{i}, `_v{i}`" for i in range(len(names)))
    return wide.select(F.expr(f"stack({len(names)}, {body}) as (c, v)"))


def grid_of(profs: list[Profile]) -> np.ndarray:
    """The union of every split's quantiles, extremes and exact values (finite, sorted)."""
    parts = [np.asarray(v, dtype=float) for p in profs
             for v in (p.grid_q, p.bin_q, [x for x in (p.lo, p.hi) if x is not None],
                       p.values if p.values is not None else [])]
    g = np.unique(np.concatenate(parts) + 0.0) if parts else np.array([])
    return g[np.isfinite(g)]


def cells(data: Any, split: str, cols: list[str], grids: dict[str, np.ndarray]
          ) -> dict[str, Cells]:
    """Step 3: every column's cell counts in one Bucketizer pass and one groupBy."""
    key = ("spark.drift.cells", split, tuple(cols),
           tuple(hash(grids[c].tobytes()) for c in cols))

    def measure() -> dict[str, Cells]:
        from pyspark.ml.feature import Bucketizer
        from pyspark.sql import functions as F

        df = data.splits[split]
        usable = [c for c in cols if len(grids[c])]
        out = {c: Cells(grids[c], np.zeros(2 * len(grids[c]) + 1, dtype=np.int64))
               for c in cols}
        if not usable:
            return out
        wide = df.select(*[numeric_expr(df, c).alias(f"_x{i}") for i, c in enumerate(usable)])
        splits = []
        for c in usable:
            g = grids[c]
            nxt = np.nextafter(g, np.inf)
            s = np.empty(2 * len(g) + 2)
            s[0], s[-1] = -np.inf, np.inf
            s[1:-1:2], s[2:-1:2] = g, nxt
            s = s.tolist()
            if s[-2] == np.inf:  # the largest finite double is a grid point
                s.pop(-2)
            splits.append(s)
        bucketizer = Bucketizer(splitsArray=splits,
                                inputCols=[f"_x{i}" for i in range(len(usable))],
                                outputCols=[f"_b{i}" for i in range(len(usable))],
                                handleInvalid="keep")
        binned = bucketizer.transform(wide)
        stacked = _stack(binned, {c: F.col(f"_b{i}").cast("int") for i, c in enumerate(usable)})
        rows = stacked.where(F.col("v").isNotNull()).groupBy("c", "v").count().collect()
        for r in rows:
            c = usable[int(r["c"])]
            out[c].counts[min(int(r["v"]), len(out[c].counts) - 1)] += int(r["count"])
        return out

    return data.cached(key, measure)


def exact_unique(data: Any, split: str, cols: list[str]) -> dict[str, bool]:
    """Whether every non-missing value occurs once (exact distinct counts, one agg)."""
    def measure() -> dict[str, bool]:
        from pyspark.sql import functions as F

        if not cols:
            return {}
        df = data.splits[split]
        exprs = [numeric_expr(df, c) for c in cols]
        row = df.agg(*[F.count_distinct(e).alias(f"u{i}") for i, e in enumerate(exprs)],
                     *[F.count(e).alias(f"n{i}") for i, e in enumerate(exprs)]).collect()[0]
        return {c: int(row[f"u{i}"]) == int(row[f"n{i}"]) for i, c in enumerate(cols)}

    return data.cached(("spark.drift.unique", split, tuple(cols)), measure)


def unseen(data: Any, split: str, col: str, ref_values: np.ndarray, kind: Kind
           ) -> tuple[list[tuple[str, int]], int]:
    """Values of ``split`` the reference never had: the most frequent (count, then value) and
    how many distinct, as :func:`auditor.stats.drift.unseen_values`."""
    from pyspark.sql import functions as F

    from auditor.stats.drift import fmt_value

    df = data.splits[split]
    x = numeric_expr(df, col).alias("v")
    ref = [float(v) for v in ref_values]
    rest = df.select(x).where(F.col("v").isNotNull() & ~F.col("v").isin(ref))
    counts = rest.groupBy("v").count()
    top = counts.orderBy(F.desc("count"), F.asc("v")).limit(UNSEEN_LISTED).collect()
    n = counts.count() if len(top) >= UNSEEN_LISTED else len(top)
    return [(fmt_value(float(r["v"]), kind), int(r["count"])) for r in top], n


# ---------------------------------------------------------------------------------------------
# Comparing one column from aggregates
# ---------------------------------------------------------------------------------------------

@dataclass
class Binned:
    """One numeric column of one split as the comparison needs it."""

    kind: Kind
    prof: Profile
    cells: Cells
    unique: bool            # a candidate only (see measure_numeric)


def _ecdf_gap(a: Cells, b: Cells) -> tuple[Any, float]:
    """KS D on the grid points (the first largest gap, as ``ecdf_gap``), Wasserstein-1 from the
    grid, and the bound on D's error (largest share of either split in one open interval)."""
    from auditor.stats.numerics import EcdfGap

    na, nb = a.n, b.n
    fa, fb = a.cdf_at_grid() / na, b.cdf_at_grid() / nb
    gap = fa - fb
    i = int(np.argmax(np.abs(gap)))
    g = a.grid
    with np.errstate(invalid="ignore"):
        w1 = float(np.sum(np.abs(gap[:-1]) * np.diff(g)))
    bound = float(max((a.counts[0::2] / na).max(), (b.counts[0::2] / nb).max()))
    return EcdfGap(float(abs(gap[i])), float(g[i]), float(fa[i]), float(fb[i]), w1), bound


def _ks_p(gap: Any, na: int, nb: int) -> float:
    """The polars p-value for D: scipy's exact distribution depends on D and the sizes only, so
    two-valued samples with the same step reproduce it."""
    from auditor.stats.numerics import KS_EXACT_MAX_N, ks_pvalue

    if max(na, nb) <= KS_EXACT_MAX_N:
        ka, kb = int(round(gap.cdf_a * na)), int(round(gap.cdf_b * nb))
        a = np.repeat([0.0, 1.0], [ka, na - ka])
        b = np.repeat([0.0, 1.0], [kb, nb - kb])
        return ks_pvalue(gap.d, na, nb, a, b)
    return ks_pvalue(gap.d, na, nb)


def compare_binned(col: str, ref: Binned, cur: Binned, *, n_bins: int, epsilon: float,
                   seed: int, min_level_rows: int, hist_bins: int, top: int,
                   ref_name: str, cur_name: str, data: Any, cur_split: str
                   ) -> tuple[Any, float | None]:
    """:func:`auditor.stats.drift.compare_numeric` from aggregates: the ColumnDrift (with its
    chart) and the bound on KS D's error (None when a split has no value)."""
    from auditor.stats.drift import ColumnDrift, category_chart, fmt_value, _round_edges
    from auditor.stats.levels import (MISSING, OTHER_VALUES, contingency_test, level_shifts,
                                      one_off_sd, one_off_share)
    from auditor.stats.numerics import js_distance, psi

    kind = ref.kind
    pa, pb = ref.prof, cur.prof
    na, nb = pa.rows - pa.missing, pb.rows - pb.missing
    A, B = ref.cells, cur.cells
    per_value, unseen_rows, new, n_new = False, None, [], 0
    if na == 0:
        labels, ca, cb = ["all values"], np.array([0]), np.array([nb])
    elif pa.values is not None and len(pa.values) <= n_bins:
        per_value = True
        pos = np.searchsorted(A.grid, pa.values)
        ca = pa.counts.copy()
        cb = B.counts[2 * pos + 1].copy()
        other = nb - int(cb.sum())
        labels = [fmt_value(v, kind) for v in pa.values]
        if other:
            labels.append(OTHER_VALUES)
            ca, cb = np.append(ca, 0), np.append(cb, other)
            new, n_new = unseen(data, cur_split, col, pa.values, kind)
        unseen_rows = other
    else:
        edges = np.unique(pa.bin_q + 0.0)
        edges = edges[edges < pa.hi]
        pos = np.searchsorted(A.grid, edges)
        ca = np.diff(np.concatenate([[0], A.cdf_at_grid()[pos], [na]]))
        cb = np.diff(np.concatenate([[0], B.cdf_at_grid()[pos], [nb]]))
        shown = [fmt_value(e, kind) for e in edges]
        labels = (["all values"] if not len(edges) else
                  [f"<= {shown[0]}"] + [f"({lo}, {hi}]" for lo, hi in zip(shown, shown[1:])]
                  + [f"> {shown[-1]}"])
    one_off = one_off_share(ca) if per_value else None
    one_off_err = one_off_sd(ca) if per_value else None
    if pa.missing or pb.missing:
        labels = labels + [MISSING]
        ca, cb = np.append(ca, pa.missing), np.append(cb, pb.missing)
    value, terms = psi(ca, cb, epsilon=epsilon)
    chi2_p, test = contingency_test(np.vstack([ca, cb]), seed)
    out = ColumnDrift(col, kind, pa.rows, pb.rows, pa.missing, pb.missing, labels, ca, cb,
                      value, terms, js_distance(ca, cb), chi2_p, per_value=per_value,
                      unseen_rows=unseen_rows, test=test, good_turing=one_off,
                      good_turing_sd=one_off_err)
    if per_value:
        out.levels = level_shifts(labels, ca, cb, min_rows=min_level_rows)
        out.new_categories, out.n_new = new, n_new
    out.all_unique = na > 1 and nb > 1 and ref.unique and cur.unique
    bound = None
    if na and nb and len(A.grid):
        gap, bound = _ecdf_gap(A, B)
        out.gap = gap
        out.ks_p = _ks_p(gap, na, nb)
        with np.errstate(invalid="ignore"):
            iqr = A.quantile(0.75) - A.quantile(0.25)
        scale = iqr if iqr > 0 else float(pa.std or 0.0)
        if scale > 0 and math.isfinite(gap.w1):
            out.wasserstein = gap.w1 / scale
        elif gap.w1 == 0:
            out.wasserstein = 0.0
    # the evidence chart (numeric_chart's from cell counts)
    if per_value or not na or not nb or not len(A.grid):
        out.chart = category_chart(out, ref_name, cur_name, top)
    else:
        lo = min(A.quantile(0.005), B.quantile(0.005))
        hi = max(A.quantile(0.995), B.quantile(0.995))
        if not hi > lo:
            lo, hi = lo - 0.5, hi + 0.5
        e = np.linspace(lo, hi, hist_bins + 1)

        def hist(c: Cells) -> list[float]:
            counts = np.diff(np.concatenate([[0.0], c.count_le(e[1:-1]), [float(c.n)]]))
            return [round(float(v), 6) for v in counts / c.n]

        out.chart = {"type": "hist", "title": f"{col}: distribution of non-missing values",
                     "edges": _round_edges(e), "series": {ref_name: hist(A), cur_name: hist(B)},
                     "xlabel": col, "ylabel": "share of non-missing rows", "width": 7.0,
                     "height": 3.2}
        if kind == Kind.DATETIME:
            out.chart.update(xlabel=f"{col} (UTC)", x_unit="epoch_seconds")
    return out, bound


# ---------------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------------

def measure_numeric(check: Any, data: Any, cols: list[str], kinds: dict[str, Kind]
                    ) -> dict[str, dict[str, Binned]]:
    """Every split's :class:`Binned` of every numeric column: two passes per split (profile,
    cells) plus the exact value counts of few-valued columns. ``unique`` is only a candidate
    (approximate distinct count >= 95% of the values, no grid point held twice): the exact
    distinct count is taken later, for the columns whose finding states it
    (:func:`settle_unique`)."""
    names = data.split_names
    profs = {s: profiles(data, s, cols, check.n_bins) for s in names}
    grids = {c: grid_of([profs[s][c] for s in names]) for c in cols}
    cell = {s: cells(data, s, cols, grids) for s in names}

    def maybe(s: str, c: str) -> bool:
        p, pts = profs[s][c], cell[s][c].counts[1::2]
        n = p.rows - p.missing
        return n > 1 and p.distinct >= 0.95 * n and (not len(pts) or int(pts.max()) <= 1)

    return {s: {c: Binned(kinds[c], profs[s][c], cell[s][c], maybe(s, c)) for c in cols}
            for s in names}


def settle_unique(data: Any, graded: list[Any], numeric: list[str], ref: str, cur: str
                  ) -> None:
    """Exact "every value unique in both splits" (one count-distinct agg per split) for the
    numeric columns that are candidates and whose finding is written (raw grade above info);
    only their messages state it."""
    todo = [cd.column for cd, v in graded if cd.column in numeric and cd.all_unique
            and v.raw != Severity.INFO]
    if not todo:
        return
    ua, ub = exact_unique(data, ref, todo), exact_unique(data, cur, todo)
    for cd, _ in graded:
        if cd.column in ua:
            cd.all_unique = ua[cd.column] and ub[cd.column]


def _statement(f: Finding, bound: float | None) -> None:
    stats = (f.evidence or {}).get("statistics")
    if stats is None or bound is None:
        return
    stats["ks_d error bound"] = float(f"{bound:.6g}")
    stats["spark quantiles"] = (f"percentile_approx, accuracy {QUANTILE_ACCURACY:,} "
                                f"(rank error <= n/{QUANTILE_ACCURACY:,}); KS on a grid of "
                                f"{KS_GRID:,} quantiles per split")


def numeric_drifts(check: Any, data: Any, binned: dict[str, dict[str, Binned]],
                   cols: list[str], ref: str, cur: str) -> tuple[list[Any], dict[str, Any]]:
    """ColumnDrifts of the numeric columns for one pair, and their KS error bounds."""
    drifts, bounds = [], {}
    for c in cols:
        cd, bound = compare_binned(
            c, binned[ref][c], binned[cur][c], n_bins=check.n_bins, epsilon=check.epsilon,
            seed=data.seed, min_level_rows=check.level_min_rows, hist_bins=check.hist_bins,
            top=check.top_categories, ref_name=ref, cur_name=cur, data=data, cur_split=cur)
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


def time_split(data: Any, ref: str, cur: str, tolerance: float = 0.05) -> bool:
    """As :func:`auditor.detectors.drift.time_split`: at most ``tolerance`` of the compared
    split's timed rows are earlier than the reference's latest time."""
    from pyspark.sql import functions as F

    t = data.columns.time
    a, b = data.splits[ref], data.splits[cur]
    if not t or t not in a.columns or t not in b.columns:
        return False
    try:
        latest = a.agg(F.max(_c(t))).collect()[0][0]
        if latest is None:
            return False
        row = b.agg(F.count(_c(t)).alias("n"),
                    F.sum(F.when(_c(t) < F.lit(latest), 1).otherwise(0)).alias("e")
                    ).collect()[0]
    except Exception:  # incomparable types: not a time split
        return False
    timed = int(row["n"] or 0)
    return bool(timed) and int(row["e"] or 0) <= tolerance * timed


def feature_drift(check: Any, data: Any) -> list[Finding]:
    """``drift.features`` on Spark: categorical and boolean columns from category counts,
    numeric and datetime columns from the binned aggregates of this module; graded together
    (one BH family per comparison) by the polars check's code."""
    from auditor.detectors.drift import DRIFT_KINDS, _not_compared, grade_all
    from auditor.engines.spark_checks import _comparisons, _samples
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
    skipped = _not_compared(data, kinds)
    samples = {n: _samples(data, n, cat) for n in data.split_names}
    binned = measure_numeric(check, data, numeric, kinds) if numeric else {}
    for n in data.split_names:
        for c in numeric:
            p = binned[n][c].prof
            samples[n][c] = Sample(kinds[c], p.rows, p.missing)
    calendar = _calendar(data, kinds) if numeric or cat else {}
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
        if calendar and time_split(data, ref, cur):
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
                _statement(f, bounds[f.subject])
        findings += new
    return findings


def label_drift(check: Any, data: Any) -> list[Finding]:
    """``drift.label`` on Spark: a numeric label from the binned aggregates (as a numeric
    feature), any other label by the category counts of :mod:`auditor.engines.spark_checks`."""
    from auditor.detectors.drift import grade_all
    from auditor.engines.spark_checks import _comparisons
    from auditor.engines.spark_checks import label_drift as categorical_label_drift
    from auditor.judging.drift_verdicts import describe_drift, evidence, rounded
    from auditor.stats.drift import Sample

    y = data.label
    if not y or data.label_kind != LabelKind.NUMERIC:
        return categorical_label_drift(check, data)
    pairs = _comparisons(data)
    if not pairs:
        raise NotApplicable("only one split and no reference: nothing to compare")
    binned = measure_numeric(check, data, [y], {y: Kind.NUMERIC})
    profs = [binned[s][y].prof for s in data.split_names]
    valued = [p for p in profs if p.rows > p.missing]
    if not valued:
        raise NotApplicable(f"label {y!r} is missing in every row")
    lo, hi = min(p.lo for p in valued), max(p.hi for p in valued)
    if lo == hi:
        from pyspark.sql import types as T

        integral = isinstance(next(iter(data.splits.values())).schema[y].dataType,
                              T.IntegralType)
        shown = str(int(lo)) if integral else str(float(lo))
        raise NotApplicable(f"label {y!r} has a single class ({shown!r}) in every "
                            "split: no distribution to compare")
    samples = {s: {y: Sample(Kind.NUMERIC, binned[s][y].prof.rows, binned[s][y].prof.missing)}
               for s in data.split_names}
    findings = []
    for ref, cur in pairs:
        (cd,), bounds = numeric_drifts(check, data, binned, [y], ref, cur)
        ((cd, v),) = grade_all(check, [cd])
        cd.all_unique = False
        message, count = describe_drift(cd, v, ref, cur, check.alpha)
        f = Finding(severity=v.severity, message=message, metric=v.metric,
                    value=rounded(v.value), threshold=v.threshold, count=count, subject=y,
                    splits=[ref, cur],
                    evidence=evidence(check, cd, v, ref, cur, samples[ref][y], samples[cur][y]))
        _statement(f, bounds[y])
        findings.append(f)
    return findings


# ---------------------------------------------------------------------------------------------
# schema.consistency
# ---------------------------------------------------------------------------------------------

VARIANT_ROWS = 200_000  # (split, value) rows of multi-form keys collected to the driver, at most


def spark_normalised(value: Any) -> Any:
    """:func:`auditor.stats.textnorm.normalised` in Spark SQL (Java regex, Unicode classes):
    lowercase, a hyphen between word characters as a space (twice, for "a-b-c"), punctuation
    and symbols other than + and - as spaces, whitespace collapsed and trimmed. Only selects
    candidates: the groups are formed again on the driver by the polars code."""
    from pyspark.sql import functions as F

    x = F.lower(value)
    x = F.regexp_replace(x, r"(?U)(\w)-(\w)", "$1 $2")
    x = F.regexp_replace(x, r"(?U)(\w)-(\w)", "$1 $2")
    x = F.regexp_replace(x, r"[\p{P}\p{S}&&[^+\-]]", " ")
    x = F.regexp_replace(x, r"(?U)\s+", " ")
    return F.trim(x)


def schema_consistency(check: Any, data: Any) -> list[Finding]:
    """``schema.consistency`` on Spark: the loader's schema issues, value variants and the
    features finding, judged by the polars check's functions. Variants: rows per (split,
    column, value) of every string column in one groupBy, their normalised keys, and only the
    keys with more than one distinct form (with their rows per split) reach the driver (at most
    VARIANT_ROWS rows; beyond, an info finding says the listing was cut)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    import polars as pl

    from auditor.detectors.schema import features_finding, variant_columns

    findings = check.issue_findings(data)
    names = data.split_names
    cols = [c for c in variant_columns(data)
            if all(isinstance(df.schema[c].dataType, T.StringType)
                   for df in data.splits.values() if c in df.columns)]
    if cols:
        parts, totals = [], {c: 0 for c in cols}
        for order, (name, df) in enumerate(data.splits.items()):
            here = [c for c in cols if c in df.columns]
            if not here:
                continue
            row = df.agg(*[F.count(_c(c)).alias(f"n{i}") for i, c in enumerate(here)]
                         ).collect()[0]
            for i, c in enumerate(here):
                totals[c] += int(row[f"n{i}"])
            idx = {c: cols.index(c) for c in here}
            body = ", ".join(f"{idx[c]}, {quoted(c)}" for c in here)
            parts.append(df.select(F.expr(f"stack({len(here)}, {body}) as (c, v)"))
                         .where(F.col("v").isNotNull()).withColumn("o", F.lit(order)))
        stacked = parts[0]
        for p in parts[1:]:
            stacked = stacked.unionByName(p)
        counts = stacked.groupBy("o", "c", "v").count()
        keyed = counts.withColumn("k", spark_normalised(F.col("v"))).where(F.col("k") != "")
        multi = (keyed.groupBy("c", "k")
                 .agg(F.collect_list(F.struct("o", "v", "count")).alias("r"),
                      F.count_distinct("v").alias("forms"))
                 .where(F.col("forms") > 1))
        rows = (multi.select("c", F.explode("r").alias("r"))
                .select("c", "r.o", "r.v", "r.count").limit(VARIANT_ROWS + 1).collect())
        cut = len(rows) > VARIANT_ROWS
        rows = rows[:VARIANT_ROWS]
        by: dict[int, list[Any]] = {}
        for r in rows:
            by.setdefault(int(r["c"]), []).append(r)
        for i, c in enumerate(cols):
            got = by.get(i)
            if not got:
                continue
            frame = pl.DataFrame({
                "value": [r["v"] for r in got],
                "n": pl.Series([int(r["count"]) for r in got], dtype=pl.Int64),
                "split": [names[int(r["o"])] for r in got],
                "order": pl.Series([int(r["o"]) for r in got], dtype=pl.Int32)})
            f = check.variant_finding(data, c, frame, totals[c])
            if f is not None:
                findings.append(f)
        if cut:
            findings.append(Finding(
                severity=Severity.INFO, metric="variants_cut", value=None, count=VARIANT_ROWS,
                message=f"value variants: more than {VARIANT_ROWS:,} (split, value) rows of "
                        "values with several forms; the first were judged, the rest not"))
    first = next(iter(data.splits.values()))
    declared = data.columns.declared()
    roles = [{"column": f.name,
              "role": declared.get(f.name) or ("feature" if f.name in data.features
                                               else "not audited"),
              "kind": str(data.kinds.get(f.name, "-")), "dtype": f.dataType.simpleString()}
             for f in first.schema.fields[:200]]
    findings.append(features_finding(data, roles))
    return findings
