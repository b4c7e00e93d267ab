"""The level tables of the label operations (``class_levels``, ``target_rate_aucs``) through
the engine operations only (engine-free): the Spark engine's implementation (the polars engine
codes every level of the loaded data exactly, :mod:`auditor.engines.polars_label`).

One :meth:`~auditor.engines.operations.Operations.kept` expansion per labelled split counts
each batch's labelled rows per column and level (:func:`level_cells`, a polars function of a
batch, the same code on every engine): the column's position ``j``, its level ``v`` (a
64-bit key of the value: strings hashed, anything else its value as a double with -0.0 as
0.0; null for a missing value -- null or NaN -- which is a level of its own, as
:func:`auditor.stats.label.level_codes` forms levels) and the row's split and class. One
``group_by(j, v)`` sums each (split, class) in a column of its own; that count table is kept
for the run (a later check asking for the same columns reads it) and stays in the engine: Cramér's V
(chi2 = n (sum_k S_k / n_k - 1), S_k = sum_l n_lk^2 / n_l) and the held-out target-rate AUC are
aggregated there, so one row per column reaches the driver however many levels a column has
(an id-like string's levels grow with the rows).
"""
from __future__ import annotations

from functools import partial
from typing import Any, Sequence

import narwhals as nw
import numpy as np
import polars as pl

from auditor.engines.label_bins import (class_codes, class_counts, label_dtype,
                                        labelled_splits, same_classes, values_of)
from auditor.engines.operations import ClassLevels, Expansion, LevelStats, Operations
from auditor.stats.numerics import cramers_v_from_chi2

BLOCK_CELLS = 1 << 22  # (row, column) cells of a batch keyed at a time (about 80 MB)
CELLS: dict[str, pl.DataType] = {"j": pl.Int32(), "v": pl.Int64(), "s": pl.Int32(),
                                 "y": pl.Int32(), "n": pl.Int64()}


def level_cells(frame: pl.DataFrame, first_row: int, *, split: int, label: str,
                classes: tuple[Any, ...], cols: tuple[str, ...]) -> pl.DataFrame:
    """The labelled rows of a batch per (column, level, split, class) and their count ``n``
    (module docstring): the columns in blocks of at most :data:`BLOCK_CELLS` cells (numbers
    as one float block, strings hashed in one select), each block counted before the next
    (a few rows per level and batch leave the engine; a batch of 10,000 columns is not held
    as one array)."""
    raw = frame.get_column(label)
    y = class_codes(raw.cast(label_dtype(raw.dtype)), classes)  # as class_counts read them
    rows = np.flatnonzero(y >= 0)
    part = frame.select(cols)[rows] if rows.size < frame.height else frame.select(cols)
    schema = part.schema
    width = max(1, BLOCK_CELLS // max(1, part.height))
    counted = [_block_counts(part, [(j, cols[j]) for j in range(b, min(b + width, len(cols)))],
                             schema, y[rows].astype(np.int32))
               for b in range(0, len(cols), width)]
    out = pl.concat(counted) if counted else pl.DataFrame(
        schema={"j": pl.Int32, "v": pl.Int64, "y": pl.Int32, "n": pl.UInt32})
    return out.with_columns(pl.lit(split).alias("s")).select(list(CELLS)).cast(pl.Schema(CELLS))


def _block_counts(part: pl.DataFrame, block: list[tuple[int, str]], schema: pl.Schema,
                  y: np.ndarray) -> pl.DataFrame:
    """(j, v, y, n) of a block of (position, column)s of the labelled rows ``part``."""
    text = [(j, c) for j, c in block if schema[c] in (pl.String, pl.Categorical)
            or isinstance(schema[c], (pl.Categorical, pl.Enum))]
    numbers = [(j, c) for j, c in block if (j, c) not in set(text)]
    n, p = part.height, len(block)
    keys = np.zeros((n, p), dtype=np.int64)
    missing = np.zeros((n, p), dtype=bool)
    at = {c: i for i, (_, c) in enumerate(block)}
    if text:
        idx = [at[c] for _, c in text]
        hashed = part.select(pl.col(c).cast(pl.String).hash(0) for _, c in text)
        keys[:, idx] = np.ascontiguousarray(hashed.to_numpy(), dtype=np.uint64).view(np.int64)
        missing[:, idx] = part.select(pl.col(c).is_null() for _, c in text).to_numpy()
    if numbers:
        idx = [at[c] for _, c in numbers]
        x = np.column_stack([values_of(part.get_column(c)) for _, c in numbers]) + 0.0  # -0.0
        missing[:, idx] = np.isnan(x)
        keys[:, idx] = np.where(np.isnan(x), 0.0, x).view(np.int64)
    out = pl.DataFrame({"j": np.tile(np.array([j for j, _ in block], dtype=np.int32), n),
                        "v": keys.ravel(), "y": np.repeat(y, p)})
    if missing.any():  # a missing value: the null level
        out = out.with_columns(pl.when(pl.lit(pl.Series(missing.ravel()))).then(None)
                               .otherwise(pl.col("v")).alias("v"))
    return out.group_by("j", "v", "y").agg(pl.len().alias("n"))


def _to_driver(frame: "nw.LazyFrame[Any]") -> pl.DataFrame:
    """Every row that reaches the driver from the level tables comes through here (a test
    counts them: one per column, never one per level)."""
    return frame.collect().to_polars()


def _cell(s: int, y: int) -> str:
    """The count table's column of split ``s``'s rows of class ``y``."""
    return f"c{s}_{y}"


def level_counts(ops: Operations, label: str, cols: list[str], classes: list[Any]
                 ) -> "nw.LazyFrame[Any]":
    """Per (column ``j``, level ``v``): the rows of each labelled split and class, in
    ``c<s>_<y>`` (split s's position among the splits), kept for the run."""
    names = list(ops.split_rows())
    splits = labelled_splits(ops, label)

    def make() -> "nw.LazyFrame[Any]":
        cells = ops.kept([Expansion(
            split=s, columns=tuple(dict.fromkeys([label, *cols])), schema=tuple(CELLS.items()),
            fn=partial(level_cells, split=names.index(s), label=label, classes=tuple(classes),
                       cols=tuple(cols))) for s in splits], persist=False)  # read once
        k = len(classes)
        return ops.keep(cells.group_by("j", "v").agg(*[
            nw.when((nw.col("s") == names.index(s)) & (nw.col("y") == y)).then(nw.col("n"))
            .otherwise(0).sum().alias(_cell(names.index(s), y))
            for s in splits for y in range(k)]), run=True)
    counts: nw.LazyFrame[Any] = ops.cached(("label_levels.counts", label, tuple(cols)), make)
    return counts


def class_levels(ops: Operations, label: str, classes: Sequence[Any], columns: Sequence[str]
                 ) -> ClassLevels:
    """Per labelled split and column: the levels present (missing one of its own), the rows
    with a value and the bias-corrected Cramér's V of the (level, class) table --
    :func:`auditor.stats.numerics.cramers_v` of the table -- aggregated in the engine from
    :func:`level_counts`: n_l the level's rows in the split, class totals n_k,
    S_k = sum_l n_lk^2 / n_l, chi2 = n (sum_k S_k / n_k - 1) over the classes present."""
    got, n = class_counts(ops, label)
    same_classes(got, classes)
    cols, k = list(columns), len(got)
    names = list(ops.split_rows())
    splits = labelled_splits(ops, label)
    table = level_counts(ops, label, cols, list(got))
    aggs = []
    for s in splits:
        i = names.index(s)
        n_l = sum((nw.col(_cell(i, y)) for y in range(1, k)), nw.col(_cell(i, 0)))
        here = n_l > 0
        aggs += [here.cast(nw.Int64).sum().alias(f"r{i}"),
                 nw.when(here & ~nw.col("v").is_null()).then(n_l).otherwise(0).sum()
                 .alias(f"w{i}"),
                 *[nw.col(_cell(i, y)).sum().alias(f"n{i}_{y}") for y in range(k)],
                 *[nw.when(here).then(nw.col(_cell(i, y)) ** 2 / n_l).otherwise(0.0).sum()
                   .alias(f"q{i}_{y}") for y in range(k)]]
    rows = _to_driver(table.group_by("j").agg(*aggs))
    stats: dict[str, dict[str, LevelStats]] = {s: {c: LevelStats(0, 0, 0.0) for c in cols}
                                               for s in splits}
    for r in rows.iter_rows(named=True):
        for s in splits:
            i = names.index(s)
            nk = np.array([r[f"n{i}_{y}"] for y in range(k)], dtype=float)
            q = np.array([r[f"q{i}_{y}"] for y in range(k)], dtype=float)
            present = nk > 0
            tot = float(nk.sum())
            chi2 = tot * (float((q[present] / nk[present]).sum()) - 1.0) if tot else 0.0
            levels = int(r[f"r{i}"])
            stats[s][cols[r["j"]]] = LevelStats(
                levels, int(r[f"w{i}"]), cramers_v_from_chi2(chi2, tot, levels,
                                                             int(present.sum())))
    return ClassLevels({s: n[s] for s in splits}, stats)


def target_rate_aucs(ops: Operations, label: str, classes: Sequence[Any],
                     columns: Sequence[str], smoothing: float) -> dict[str, dict[str, float]]:
    """Binary label: the AUC of the columns on every later split over all its rows, scored
    by the smoothed target rate fitted on all train rows (as
    :func:`auditor.stats.label.target_encode` scores held-out splits: (positives_l + m p) /
    (n_l + m), p the train positive rate, unseen levels at p -- 0 when m = 0 -- missing a
    level; every level by the same arithmetic), in the engine: each level's score from its
    train counts in its row of :func:`level_counts`; levels grouped by (column, score) with
    each later split's (P_g, N_g); AUC = sum_g P_g (N_<g + N_g / 2) / (P N), N_<g a cumulative
    sum over the column's scores (a window per column) --
    :func:`auditor.stats.label.auc_from_groups` of the same counts."""
    got, n = class_counts(ops, label)
    same_classes(got, classes)
    cols = list(columns)
    names = list(ops.split_rows())
    later = [(names.index(s), s) for s in labelled_splits(ops, label)[1:]]
    train = names[0]
    m = float(smoothing)
    n_tr = float(n[train].sum())
    prior = float(n[train][1] / n_tr) if n_tr else 0.0
    table = level_counts(ops, label, cols, list(got))
    pos0, neg0 = nw.col(_cell(0, 1)), nw.col(_cell(0, 0))
    # every level by polars' arithmetic (an unseen one: m p / m, 0 when m = 0), so that equal
    # scores tie alike on both engines
    score = ((pos0 + m * prior) / nw.max_horizontal(neg0 + pos0 + m, nw.lit(1e-300))
             ).alias("score")
    groups = table.with_columns(score).group_by("j", "score").agg(
        *[nw.col(_cell(i, y)).sum().alias(f"{x}{i}") for i, _ in later
          for y, x in ((1, "P"), (0, "N"))])
    terms = groups.select("j", *[nw.col(f"{x}{i}") for i, _ in later for x in "PN"], *[
        (nw.col(f"P{i}") * (nw.col(f"N{i}").cum_sum().over("j", order_by="score")
                            - nw.col(f"N{i}") / 2)).alias(f"t{i}") for i, _ in later])
    rows = _to_driver(terms.group_by("j").agg(*[nw.col(f"{x}{i}").sum().alias(f"{x}{i}")
                                                for i, _ in later for x in "tPN"]))
    out: dict[str, dict[str, float]] = {c: {} for c in cols}
    for r in rows.iter_rows(named=True):
        for i, s in later:
            p_, q_ = r[f"P{i}"], r[f"N{i}"]
            if p_ + q_ > 0:  # the split has rows of this column
                out[cols[r["j"]]][s] = float(r[f"t{i}"] / (p_ * q_)) if p_ * q_ > 0 \
                    else float("nan")
    return out
