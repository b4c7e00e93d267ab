"""Rank statistics of a column against a class label from binned counts: what an engine that
counts rows by (bin, class) in one pass (the Spark engine's ``class_ranks``) returns in the
form :func:`auditor.stats.label.class_rank_stats` gives from the rows themselves.

From the counts H[b, k] (rows of class k in bin b; missing values a block of their own):
average rank of bin b = rows in lower bins + (rows in b + 1) / 2; rank sum of class k =
sum_b H[b, k] rank_b; the rank variance adds, for a bin of t rows that are not all one value,
the within-bin term (t^2 - 1) / 12 of t distinct ranks. When the bins are a column's distinct
values (``exact``) every figure equals the row-level one; otherwise ties inside a bin count
half and the AUC's error is at most sum_b H[b, 1] H[b, 0] / (2 n1 n0) (:func:`bin_error`).
Class means and variances come from per-class sums and sums of squares of the values shifted
by ``center`` (a central value: no cancellation).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from auditor.stats.label import N_CUTS
from auditor.stats.numerics import inverted_cdf


@dataclass
class ClassBins:
    """Per column j: ``edges[j]`` the bins' upper edges (ascending), ``exact[j]`` whether they
    are every distinct value; ``hist[split][j]`` (B_j + 2, K) counts: bins 0..B_j - 1, bin
    B_j above the last edge, the last row missing values; ``sums[split]`` (p, K) and
    ``squares[split]`` (p, K): sums of (value - ``center[j]``) and of its square per class;
    ``n[split]`` (K,) labelled rows per class; ``approx_distinct[j]`` for a quantile-binned
    column, the engine's stand-in for its distinct values (more than it counts exactly)."""

    columns: list[str]
    classes: list[Any]
    edges: list[np.ndarray]
    exact: list[bool]
    center: np.ndarray
    hist: dict[str, list[np.ndarray]]
    sums: dict[str, np.ndarray]
    squares: dict[str, np.ndarray]
    n: dict[str, np.ndarray]
    approx_distinct: list[int]


def below_at(vals: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Per candidate cut (bins ``idx``, then +inf) the non-missing rows of each class at or
    below it."""
    return np.vstack([np.cumsum(vals, axis=0)[idx], vals.sum(0)[None, :]])


def rank_stats(b: ClassBins, split: str) -> dict[str, Any]:
    """:func:`auditor.stats.label.class_rank_stats` (with moments) of the binned columns in one
    split, from the counts (exact when a column's bins are its values); ``cuts[j]`` here is
    (bins of the candidate cuts, their edges in the engine's units, below) -- see
    :func:`candidate_cuts`."""
    k = len(b.classes)
    p = len(b.columns)
    out: dict[str, Any] = {"n": b.n[split].astype(float)}
    count, rsum, rvar = np.zeros((k, p)), np.zeros((k, p)), np.zeros((k, p))
    mean, var = np.zeros((k, p)), np.zeros((k, p))
    distinct = np.zeros(p, dtype=np.int64)
    cuts: list[Any] = []
    for j in range(p):
        h = b.hist[split][j]
        vals = h[:-1]
        cnt = vals.sum(0)
        tot = vals.sum(1)
        rank = np.cumsum(tot) - tot + (tot + 1) / 2
        count[:, j] = cnt
        safe = np.maximum(cnt, 1)
        rsum[:, j] = vals.T @ rank
        dev = (rank[:, None] - (rsum[:, j] / safe)[None, :]) ** 2
        within = 0.0 if b.exact[j] else ((tot ** 2 - 1) / 12)[:, None] * (tot > 0)[:, None]
        rvar[:, j] = ((vals * (dev + within)).sum(0)) / safe
        m = b.sums[split][j] / safe
        mean[:, j] = m
        var[:, j] = np.maximum(b.squares[split][j] / safe - m * m, 0.0)
        distinct[j] = int((tot > 0).sum()) if b.exact[j] else b.approx_distinct[j]
        cuts.append(candidate_cuts(b, j, vals, tot) if h[-1].sum() > 0 else None)
    out.update(count=count, rank_sum=rsum, rank_var=rvar, mean=mean, var=var,
               distinct=distinct, cuts=cuts)
    return out


def candidate_cuts(b: ClassBins, j: int, vals: np.ndarray, tot: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(idx, edges, below): the bins of the candidate cuts, and (edges, below) as
    :func:`auditor.stats.label.class_rank_stats` gives them: candidate cuts (values present:
    all when at most N_CUTS, else the inverted-CDF quantiles; +inf) and per class the
    non-missing rows at or below each."""
    present = np.flatnonzero(tot > 0)
    if present.size and present[-1] >= b.edges[j].size:  # values above the last edge
        present = present[:-1]
    idx = present
    if b.exact[j] and present.size > N_CUTS:
        cum = np.cumsum(tot)
        pos = inverted_cdf(np.arange(int(cum[-1])), N_CUTS)
        idx = np.unique(np.searchsorted(cum, pos, side="right"))
        idx = idx[idx < b.edges[j].size]  # a quantile among values above the last edge
    return idx, np.r_[b.edges[j][idx], np.inf], below_at(vals, idx)


def bin_error(b: ClassBins, split: str, j: int) -> float:
    """Bound on the AUC error from ties inside bins: sum_b H[b,1] H[b,0] / (2 n1 n0), 0 for
    exact bins (binary label)."""
    if b.exact[j]:
        return 0.0
    h = b.hist[split][j][:-1]
    n1, n0 = h[:, 1].sum(), h[:, 0].sum()
    return float((h[:, 1] * h[:, 0]).sum() / (2 * n1 * n0)) if n1 * n0 > 0 else 0.0
