"""The level-table label operations of the Spark engine (:meth:`~auditor.engines.operations.
Operations` ``class_levels``, ``target_rate_aucs``) over every labelled row; ``class_ranks`` is
engine-free (:mod:`auditor.engines.label_bins`).

The (level, class) counts of the columns come from one ``groupBy`` over the stacked columns
(classes counted in columns of their own), persisted, and stay in Spark: Cramér's V
(chi2 = n (sum_l sum_k n_lk^2 / (n_l n_k) - 1)) and the held-out target-rate AUC are aggregated
there, so the driver receives one row per column however many levels a column has (an id-like
string's levels grow with the rows).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from auditor.engines.label_bins import class_counts, labelled_splits, same_classes
from auditor.engines.operations import ClassLevels, LevelStats
from auditor.engines.spark_columns import col as _c
from auditor.stats.numerics import cramers_v_from_chi2


# ---------------------------------------------------------------------------------------------
# the operations
# ---------------------------------------------------------------------------------------------

def class_levels(ops: Any, label: str, classes: Sequence[Any], columns: Sequence[str]
                 ) -> ClassLevels:
    got, n = class_counts(ops, label)
    same_classes(got, classes)
    stats = level_measures(ops, label, list(columns), list(got))
    names = labelled_splits(ops, label)
    return ClassLevels({s: n[s] for s in names},
                       {s: {c: LevelStats(*t) for c, t in stats[s].items()} for s in names})


def target_rate_aucs(ops: Any, label: str, classes: Sequence[Any], columns: Sequence[str],
                     smoothing: float) -> dict[str, dict[str, float]]:
    got, _ = class_counts(ops, label)
    same_classes(got, classes)
    return held_out_aucs(ops, label, list(columns), smoothing)


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
