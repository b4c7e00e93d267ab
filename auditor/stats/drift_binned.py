"""Comparing one numeric column of two splits from binned aggregates rather than sorted values:
what a distributed engine measures when a column's values do not fit in this process (the Spark
engine's quantile sketches and grid-cell counts). Engine-free: numpy over the counts.

A column of one split is a :class:`Profile` (counts, extremes, quantile sketches, exact values
of a few-valued column) and its counts on a shared grid of values (:class:`Cells`: every grid
point and every open interval between two). :func:`compare_binned` gives the same
:class:`~auditor.stats.drift.ColumnDrift` as :func:`~auditor.stats.drift.compare` on sorted
values: PSI, chi-square and Jensen-Shannon exactly on the reference's quantile bins (which are
grid points), KS D on the grid points (a lower bound of the exact D, exceeding it by at most the
largest share of either split inside one open interval, which it returns), Wasserstein-1 and
the IQR from the cells (exact when every value is a grid point).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from auditor.core.roles import Kind


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


def grid_of(profs: list[Profile]) -> np.ndarray:
    """The union of every split's quantiles, extremes and exact values (finite, sorted)."""
    parts = [np.asarray(v, dtype=float) for p in profs
             for v in (p.grid_q, p.bin_q, [x for x in (p.lo, p.hi) if x is not None],
                       p.values if p.values is not None else [])]
    g = np.unique(np.concatenate(parts) + 0.0) if parts else np.array([])
    finite: np.ndarray = g[np.isfinite(g)]
    return finite


@dataclass
class Binned:
    """One numeric column of one split as the comparison needs it."""

    kind: Kind
    prof: Profile
    cells: Cells
    unique: bool            # a candidate only: the exact count is asked when a message states it
    accuracy: int = 0       # the quantile sketch's accuracy (rank error <= n / accuracy)
    grid_size: int = 0      # quantiles per split in the column's grid


def ecdf_gap_binned(a: Cells, b: Cells) -> tuple[Any, float]:
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


def ks_p_binned(gap: Any, na: int, nb: int) -> float:
    """The polars p-value for D: scipy's exact distribution depends on D and the sizes only, so
    two-valued samples with the same step reproduce it."""
    from auditor.stats.numerics import KS_EXACT_MAX_N, ks_pvalue

    if max(na, nb) <= KS_EXACT_MAX_N:
        ka, kb = int(round(gap.cdf_a * na)), int(round(gap.cdf_b * nb))
        a = np.repeat([0.0, 1.0], [ka, na - ka])
        b = np.repeat([0.0, 1.0], [kb, nb - kb])
        return ks_pvalue(gap.d, na, nb, a, b)
    return ks_pvalue(gap.d, na, nb)


def binned_per_value(ref: Binned, n_bins: int) -> bool:
    """Binned per value, as the polars engine: the reference has at most n_bins values."""
    p = ref.prof
    return p.rows > p.missing and p.values is not None and len(p.values) <= n_bins


def value_bins(ref: Binned, cur: Binned) -> tuple[np.ndarray, np.ndarray, int]:
    """Counts of the reference's values in both splits, and the compared split's other rows.
    A finite value is a grid point (cell 2i + 1); the grid holds finite values only, so -inf
    is counted from the cell below the grid and +inf from the cell above it (every compared
    value beyond the reference's finite extremes)."""
    pa, pb = ref.prof, cur.prof
    assert pa.values is not None and pa.counts is not None  # binned_per_value(ref)
    grid = ref.cells.grid
    pos = np.searchsorted(grid, pa.values)
    cell = np.where(np.isposinf(pa.values), 2 * len(grid),
                    np.where(np.isneginf(pa.values), 0, 2 * pos + 1))
    ca, cb = pa.counts.copy(), cur.cells.counts[cell].copy()
    return ca, cb, (pb.rows - pb.missing) - int(cb.sum())


def compare_binned(col: str, ref: Binned, cur: Binned, *, n_bins: int, epsilon: float,
                   seed: int, min_level_rows: int, hist_bins: int, top: int,
                   ref_name: str, cur_name: str,
                   unseen: tuple[list[tuple[str, int]], int] | None = None
                   ) -> tuple[Any, float | None]:
    """:func:`auditor.stats.drift.compare_numeric` from aggregates: the ColumnDrift (with its
    chart) and the bound on KS D's error (None when a split has no value). ``unseen``: the
    compared split's values the reference never had (:func:`unseen_all`), for a per-value
    column with such rows."""
    from auditor.stats.drift import ColumnDrift, category_chart, fmt_value, round_edges
    from auditor.stats.levels import (MISSING, OTHER_VALUES, contingency_test, level_shifts,
                                      one_off_sd, one_off_share)
    from auditor.stats.numerics import js_distance, psi

    kind = ref.kind
    pa, pb = ref.prof, cur.prof
    na, nb = pa.rows - pa.missing, pb.rows - pb.missing
    A, B = ref.cells, cur.cells
    per_value, unseen_rows, n_new = False, None, 0
    new: list[tuple[str, int]] = []
    if na == 0:
        labels, ca, cb = ["all values"], np.array([0]), np.array([nb])
    elif binned_per_value(ref, n_bins):
        per_value = True
        ca, cb, other = value_bins(ref, cur)
        assert pa.values is not None  # binned_per_value(ref)
        labels = [fmt_value(v, kind) for v in pa.values]
        if other:
            labels.append(OTHER_VALUES)
            ca, cb = np.append(ca, 0), np.append(cb, other)
            new, n_new = unseen if unseen is not None else ([], 0)
        unseen_rows = other
    else:
        edges = np.unique(pa.bin_q + 0.0)
        edges = edges[edges < (pa.hi if pa.hi is not None else np.inf)]
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
        gap, bound = ecdf_gap_binned(A, B)
        out.gap = gap
        out.ks_p = ks_p_binned(gap, na, nb)
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
                     "edges": round_edges(e), "series": {ref_name: hist(A), cur_name: hist(B)},
                     "xlabel": col, "ylabel": "share of non-missing rows", "width": 7.0,
                     "height": 3.2}
        if kind == Kind.DATETIME:
            out.chart.update(xlabel=f"{col} (UTC)", x_unit="epoch_seconds")
    return out, bound
