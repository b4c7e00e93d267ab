"""How one column splits the classes: the decisive cut and the class-conditional distribution
that the evidence of a flagged feature shows (engine-free, on the rows of one split).

Classes are one class against the rest (``positive``: a boolean mask of its rows; a binary
label's positive class, or the class a multiclass column separates best). For the other
rows ("the rest") and the class, shares are of that group's rows, so a rare class is drawn on
the same scale as a common one.

Decisive cut (``decisive_cut``), the one statement that best tells the class from the rest
(Youden's J: the largest difference between the class's share and the rest's share of one
region):

- a numeric, boolean or temporal column: the threshold c between two adjacent distinct values
  maximising |P(x > c | class) - P(x > c | rest)| over every row (missing rows on neither
  side), against missingness alone, |P(missing | class) - P(missing | rest)|; the larger is
  the decisive statement, the table shows both sides of the cut and the missing rows;
- a categorical column: the levels where the class's share exceeds the rest's, J = the sum of
  those differences (the best split of the levels into two sets); the table lists the levels
  with the largest differences.

J = 1: the region holds every row of one group and none of the other; J = 0: no region tells
them apart. J equals max(TPR - FPR) of the column's ROC curve (with missing rows placed
where they help least), so it grows with the single-feature AUC but names the values.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from auditor.stats.numerics import fmt_share

HIST_BINS = 30
MAX_LEVELS = 12  # levels in a categorical column's table and chart


def _orderable(dtype: pl.DataType) -> bool:
    return dtype.is_numeric() or dtype == pl.Boolean or dtype.is_temporal()


def _floats(values: pl.Series) -> np.ndarray:
    """float64 with NaN for missing; datetimes and dates as epoch seconds."""
    s = values
    if s.dtype == pl.Boolean:
        s = s.cast(pl.Int8)
    elif isinstance(s.dtype, (pl.Datetime, pl.Date)):
        s = s.dt.epoch("us").cast(pl.Float64) / 1e6
    elif s.dtype.is_temporal():
        s = s.to_physical()
    s = s.cast(pl.Float64)
    return s.fill_nan(None).fill_null(float("nan")).to_numpy()


def _text(values: pl.Series, mask: np.ndarray) -> str:
    """The first value of ``values`` where ``mask`` holds, as a person reads it."""
    v = values.filter(pl.Series(mask))[0]
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def decisive_cut(values: pl.Series, positive: np.ndarray, names: tuple[str, str]
                 ) -> dict[str, Any] | None:
    """``{"statement", "j", "table"}`` for one column (named by the Series) against one class
    (``names``: the class's and the rest's name): the statement is a sentence ("x > 3 holds
    97.9% of class 'yes' rows and 2% of class 'no' rows"), the table each region's share of
    both groups. None when either group has no row, or the column neither varies nor misses."""
    pos = np.asarray(positive, dtype=bool)
    n1, n0 = int(pos.sum()), int((~pos).sum())
    if not n1 or not n0:
        return None
    c1, c0 = names
    if not _orderable(values.dtype):
        return _levels(values, pos, n1, n0, names)
    x = _floats(values)
    miss = np.isnan(x)
    m1, m0 = miss[pos].sum() / n1, miss[~pos].sum() / n0
    known = ~miss
    table: list[dict[str, Any]] = []
    best_j, cut, above = 0.0, None, True
    if known.any():
        v, inv = np.unique(x[known], return_inverse=True)
        h1 = np.bincount(inv, weights=pos[known].astype(float), minlength=len(v))
        h0 = np.bincount(inv, minlength=len(v)) - h1
        if len(v) > 1:  # cut after value i: rows <= v[i] against rows > v[i]
            below1, below0 = np.cumsum(h1)[:-1] / n1, np.cumsum(h0)[:-1] / n0
            known1, known0 = h1.sum() / n1, h0.sum() / n0
            diff = (known1 - below1) - (known0 - below0)  # P(x > c | class) - P(x > c | rest)
            i = int(np.argmax(np.abs(diff)))
            best_j, above = float(abs(diff[i])), bool(diff[i] > 0)
            cut = i
            text = _text(values, known & (x == v[i]))
            table = [{"rows": f"<= {text}", c1: float(below1[i]), c0: float(below0[i])},
                     {"rows": f"> {text}", c1: float(known1 - below1[i]),
                      c0: float(known0 - below0[i])}]
    if miss.any():
        table.append({"rows": "missing", c1: float(m1), c0: float(m0)})
    miss_j = float(abs(m1 - m0))
    for row in table:
        row[c1], row[c0] = round(row[c1], 4), round(row[c0], 4)
    if cut is None and not miss.any():
        return None
    if miss_j >= best_j:
        more, less = (c1, c0) if m1 >= m0 else (c0, c1)
        share_more, share_less = max(m1, m0), min(m1, m0)
        statement = (f"{values.name} is missing in {fmt_share(share_more)} of {more} rows and "
                     f"{fmt_share(share_less)} of {less} rows")
        return {"statement": statement, "j": round(miss_j, 4), "table": table}
    side = table[1] if above else table[0]
    statement = (f"{values.name} {side['rows']} holds {fmt_share(side[c1])} of {c1} rows and "
                 f"{fmt_share(side[c0])} of {c0} rows")
    return {"statement": statement, "j": round(best_j, 4), "table": table}


def _levels(values: pl.Series, pos: np.ndarray, n1: int, n0: int, names: tuple[str, str]
            ) -> dict[str, Any]:
    c1, c0 = names
    counts = (pl.DataFrame({"level": values.cast(pl.String).fill_null("(missing)"), "p": pos})
              .group_by("level").agg(pl.col("p").sum().alias("k1"),
                                     (~pl.col("p")).sum().alias("k0")))
    s1 = counts["k1"].to_numpy() / n1
    s0 = counts["k0"].to_numpy() / n0
    diff = s1 - s0
    levels = counts["level"].to_list()
    favoured = diff > 0
    j = float(diff[favoured].sum())
    order = np.argsort(-np.abs(diff), kind="stable")[:MAX_LEVELS]
    table = [{"rows": f"= {levels[i]}", c1: round(float(s1[i]), 4), c0: round(float(s0[i]), 4)}
             for i in order]
    shown = [levels[i] for i in np.argsort(-diff, kind="stable") if favoured[i]][:5]
    more = int(favoured.sum()) - len(shown)
    listed = ", ".join(shown) + (f" and {more:,} more" if more > 0 else "")
    share1, share0 = float(s1[favoured].sum()), float(s0[favoured].sum())
    statement = (f"{values.name} in {{{listed}}} holds {fmt_share(share1)} of {c1} rows and "
                 f"{fmt_share(share0)} of {c0} rows")
    return {"statement": statement, "j": round(j, 4), "table": table}


def class_chart(values: pl.Series, positive: np.ndarray, names: tuple[str, str], column: str,
                split: str) -> dict[str, Any] | None:
    """A chart spec of the column's distribution in the class and in the rest (shares of each
    group's rows): a histogram of ``HIST_BINS`` equal bins between the smallest and largest
    finite value (datetimes on a date axis; the missing shares in the title), or bars of the
    ``MAX_LEVELS`` levels with the largest difference. None when the column has fewer than
    two distinct values."""
    pos = np.asarray(positive, dtype=bool)
    n1, n0 = int(pos.sum()), int((~pos).sum())
    if not n1 or not n0:
        return None
    c1, c0 = names
    title = f"{column} in {split}: {c1} rows against {c0} rows"
    if not _orderable(values.dtype):
        cut = _levels(values, pos, n1, n0, names)
        rows = cut["table"]
        if len(rows) < 2:
            return None
        return {"type": "grouped_bar", "categories": [r["rows"][2:] for r in rows],
                "series": {c1: [r[c1] for r in rows], c0: [r[c0] for r in rows]},
                "title": title, "ylabel": "share of the group's rows"}
    x = _floats(values)
    known = np.isfinite(x)  # +-inf: counted by the cut, not drawn
    if not known.any():
        return None
    lo, hi = float(x[known].min()), float(x[known].max())
    if not hi > lo or not np.isfinite(hi - lo):
        return None
    edges = np.linspace(lo, hi, HIST_BINS + 1)
    h1, _ = np.histogram(x[known & pos], bins=edges)
    h0, _ = np.histogram(x[known & ~pos], bins=edges)
    missing = np.isnan(x)
    miss1, miss0 = (missing & pos).sum() / n1, (missing & ~pos).sum() / n0
    if miss1 or miss0:
        title += f" (missing: {fmt_share(miss1)} of {c1}, {fmt_share(miss0)} of {c0})"
    spec: dict[str, Any] = {"type": "hist", "edges": [float(e) for e in edges],
                            "series": {c1: [round(float(v), 5) for v in h1 / n1],
                                       c0: [round(float(v), 5) for v in h0 / n0]},
                            "title": title, "xlabel": column,
                            "ylabel": "share of the group's rows"}
    if isinstance(values.dtype, (pl.Datetime, pl.Date)):
        spec["x_unit"] = "epoch_seconds"
    return spec


MAX_CLASSES = 50  # a multiclass label's classes tried one against the rest, at most
MAX_ROWS = 100_000  # rows behind the cut and the chart (a seeded sample of a larger split)


def class_evidence(values: pl.Series, codes: np.ndarray, classes: list[Any], *, binary: bool,
                   split: str, cls: int | None = None) -> dict[str, Any]:
    """``{"decisive_cut", "charts"}`` of a flagged column on one split (``codes``: each row's
    class code 0..K-1, ``classes`` their values): a binary label's positive class (code 1)
    against the other; for a multiclass label class ``cls`` against the rest, or when None,
    the class whose decisive cut is strongest (largest J; of the first ``MAX_CLASSES``). On
    a seeded sample of ``MAX_ROWS`` rows of a larger split (``rows`` and ``sampled`` say so):
    flagged columns of a wide table cost a fixed amount each."""
    def names(k: int) -> tuple[str, str]:
        return (f"class {classes[k]!r}",
                f"class {classes[1 - k]!r}" if binary else "other classes")

    if binary:
        cls = 1
    sampled = len(values) > MAX_ROWS
    if sampled:  # shares to about +-0.3 points: a chart and a cut, not a count
        keep = np.sort(np.random.default_rng(0).choice(len(values), MAX_ROWS, replace=False))
        values, codes = values.gather(keep), np.asarray(codes)[keep]
    if cls is None:
        cuts = {k: decisive_cut(values, codes == k, names(k))
                for k in range(min(len(classes), MAX_CLASSES))}
        found = {k: c for k, c in cuts.items() if c is not None}
        if not found:
            return {}
        cls = max(found, key=lambda k: found[k]["j"])
        cut: dict[str, Any] | None = found[cls]
    else:
        cut = decisive_cut(values, codes == cls, names(cls))
    out: dict[str, Any] = {}
    if cut is not None:
        out["decisive_cut"] = dict(cut, rows=len(values), sampled=sampled)
    chart = class_chart(values, codes == cls, names(cls), str(values.name), split)
    if chart is not None:
        out["charts"] = [chart]
    return out
