"""Near-copies over every evaluation row at linear cost: shifted grids and a hash join.

Helper of ``separability.memorisation`` (:mod:`auditor.detectors.memorisation`) for splits too
large for an exhaustive nearest-neighbour scan. Rows are encoded as the check encodes them
(standardised numerics, scaled one-hot levels), each coordinate is cut into cells of width
G = the check's distance threshold t, and a row's key is the hash of its cell vector. Two rows
share a key only when every coordinate falls in the same cell; ``tables`` grids with seeded
random offsets are used, so a pair whose coordinates differ by d_i is found with probability
1 - (1 - prod_i (1 - d_i / G))^tables: a copy jittered by 0.1% of the threshold in each of
40 coordinates is found with probability 0.96 by one grid and 0.998 by two (1% jitter: 0.67
and 0.89), a pair just under the threshold rarely. Every
candidate's exact distance decides (< t), so the listed pairs are all true near-copies; the
list is complete for very close copies, not for pairs near the threshold (the graded count
comes from the exhaustive scan of a sample).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

ENCODE_ROWS = 131_072
ENCODE_CELLS = 1 << 26     # rows x encoded width per encoded block (256 MB float32)
CELLS_PER_PASS = 1 << 22   # rows x encoded width per pass of cell_keys
PAIR_ROWS = 200_000


def cell_keys(X: np.ndarray, offsets: np.ndarray, width: float,
              weights: np.ndarray) -> np.ndarray:
    """One key per row and grid (rows x grids, uint64): the cell vector
    c = floor(x / width + offset / width) projected on random weights, c . w (float64, summed
    row by row in one fixed order, numpy's pairwise sum, so equal cell vectors get equal keys
    whichever rows are keyed with them; distinct vectors collide only by rounding
    coincidence, and every candidate pair is verified by its distance anyway). A BLAS
    matrix-vector product rounded a row's sum differently by the row's place in the matrix,
    which separated about 1 in 1,000 rows from their identical copy keyed in another call.
    Rows go in passes of ~4M cells (the temporaries of one pass over a 100k x 3,500 block
    were ~7 GB)."""
    out = np.empty((len(X), len(offsets)), dtype=np.float64)
    shifts = [(off / width).astype(np.float32) for off in offsets]
    step = max(1, CELLS_PER_PASS // max(X.shape[1], 1))
    for lo in range(0, len(X), step):
        scaled = X[lo:lo + step] / np.float32(width)
        for t, shift in enumerate(shifts):
            cells = np.floor(scaled + shift).astype(np.float64)
            cells *= weights[t]
            out[lo:lo + step, t] = cells.sum(axis=1)
    return out.view(np.uint64)


def grid_near_pairs(encode: Any, reference: pl.DataFrame, later: pl.DataFrame,
                    rows: np.ndarray, threshold: float, *, tables: int = 2, seed: int = 0,
                    max_candidates: int = 5_000_000) -> tuple[pl.DataFrame, str]:
    """Pairs (``ref``: position in ``reference``, ``row``: row of ``later`` among ``rows``,
    ``distance``) with distance < ``threshold``, nearest found per later row, sorted by row;
    and a note (empty, or why the search stopped short). ``encode(frame)`` gives the float32
    matrix the distances are measured in."""
    empty = pl.DataFrame(schema={"ref": pl.Int64, "row": pl.Int64, "distance": pl.Float64})
    if threshold <= 0 or not len(rows) or reference.height == 0:
        return empty, ""
    width = encode(reference[:1]).shape[1]
    rng = np.random.default_rng(seed)
    offsets = rng.uniform(0, threshold, size=(tables, width))
    weights = rng.uniform(1.0, 2.0, size=(tables, width)) * np.exp2(rng.integers(
        0, 20, size=(tables, width)))

    # rows encoded at a time: fewer on a wide table (a row's key does not depend on its block)
    step = max(1_024, min(ENCODE_ROWS, ENCODE_CELLS // max(width, 1)))

    def keys(frame: pl.DataFrame, index: np.ndarray) -> np.ndarray:
        """Cell keys of ``frame[index]``: rows x tables (uint64), encoded in blocks."""
        return np.vstack([cell_keys(encode(frame[index[s:s + step]]), offsets,
                                    threshold, weights)
                          for s in range(0, len(index), step)])

    ref_idx = np.arange(reference.height)
    rows = np.asarray(rows, dtype=np.int64)
    kr, kl = keys(reference, ref_idx), keys(later, rows)
    # One single-key (u64) hash join per grid: the reference rows are first cut down to the
    # keys some later row has, so only the (few) matching cells are grouped and counted.
    per_table = []
    for t in range(tables):
        left = pl.DataFrame({"row": rows, "h": kl[:, t]})
        right = pl.DataFrame({"ref": ref_idx, "h": kr[:, t]}).join(left.select("h"), on="h",
                                                                     how="semi")
        sizes = (right.group_by("h").len("a")
                 .join(left.group_by("h").len("b"), on="h")
                 .with_columns(pairs=pl.col("a").cast(pl.Int64) * pl.col("b").cast(pl.Int64)))
        per_table.append((left, right, sizes))
    note = ""
    if sum(int(s["pairs"].sum()) for _, _, s in per_table if s.height) > max_candidates:
        per_table = [(left, right, s.filter(pl.col("pairs") <= 64))  # dense cells: discrete
                     for left, right, s in per_table]
        note = ("cells holding many rows (discrete values on a grid) were skipped: the pair "
                "list can miss copies among them")
    cand = (pl.concat([right.join(s.select("h"), on="h", how="semi").join(left, on="h")
                       .select("ref", "row") for left, right, s in per_table])
            .unique().sort("row", "ref"))
    if cand.height > max_candidates:
        cand = cand.head(max_candidates)
        note = f"the search stopped at {max_candidates:,} candidate pairs"
    if cand.height == 0:
        return empty, note
    dist = np.empty(cand.height)
    for s in range(0, cand.height, PAIR_ROWS):
        part = cand[s:s + PAIR_ROWS]
        a = encode(reference[part["ref"].to_numpy()]).astype(np.float64)
        b = encode(later[part["row"].to_numpy()]).astype(np.float64)
        dist[s:s + PAIR_ROWS] = np.sqrt(((a - b) ** 2).sum(1))
    found = (cand.with_columns(pl.Series("distance", dist))
             .filter(pl.col("distance") < threshold)
             .sort(["row", "distance", "ref"])
             .unique("row", keep="first", maintain_order=True))
    return found, note
