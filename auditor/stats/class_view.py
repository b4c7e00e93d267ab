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
- a categorical column: the levels where the class's share exceeds the rest's (the best split
  of the levels into two sets), chosen on a seeded half of the rows; J and the shares are
  measured on the other half (on the rows they were chosen on, the levels of an id column
  would separate any label perfectly); the table lists the levels with the largest
  differences, on every row.

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


def _cut_text(values: pl.Series, x: np.ndarray, lo: float, hi: float) -> tuple[str, str]:
    """The two sides of a cut between adjacent distinct values ``lo`` < ``hi`` as a person
    reads them: ``("<= t", "> t")`` with t the value ``lo`` itself (a date, an integer) or,
    for floats, the shortest text t with lo <= t < hi (so that the text puts every row on
    the side it was counted on); a boolean's sides are ``= False`` and ``= True``."""
    if values.dtype == pl.Boolean:
        return "= False", "= True"
    if values.dtype.is_float():
        if lo.is_integer() and abs(lo) < 1e15:
            t = f"{lo:.0f}"
        else:
            for digits in range(6, 18):
                t = f"{lo:.{digits}g}"
                if lo <= float(t) < hi:
                    break
    else:
        t = str(values.filter(pl.Series(x == lo))[0])
    return f"<= {t}", f"> {t}"


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
            low, high = _cut_text(values, x, float(v[i]), float(v[i + 1]))
            table = [{"rows": low, c1: float(below1[i]), c0: float(below0[i])},
                     {"rows": high, c1: float(known1 - below1[i]),
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


def _level_codes(values: pl.Series) -> tuple[list[str], np.ndarray]:
    """The distinct levels (missing as "(missing)") and each row's index into them."""
    frame = pl.DataFrame({"level": values.cast(pl.String).fill_null("(missing)")})
    levels = frame.get_column("level").unique(maintain_order=True)
    codes = frame.select(pl.col("level").replace_strict(
        levels, pl.int_range(levels.len(), eager=True), return_dtype=pl.Int64)).to_series()
    return levels.to_list(), codes.to_numpy()


def _levels(values: pl.Series, pos: np.ndarray, n1: int, n0: int, names: tuple[str, str]
            ) -> dict[str, Any]:
    """The levels that favour the class, chosen on a seeded half of the rows and measured on
    the other half (the set's J and shares: chosen and measured on the same rows, the levels
    of an id column would hold 100% of one class and 0% of the other whatever the label);
    the table's per-level shares are of every row."""
    c1, c0 = names
    levels, codes = _level_codes(values)
    k = len(levels)

    def shares(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p, q = rows & pos, rows & ~pos
        return (np.bincount(codes[p], minlength=k) / max(int(p.sum()), 1),
                np.bincount(codes[q], minlength=k) / max(int(q.sum()), 1))

    s1, s0 = shares(np.ones(len(codes), dtype=bool))
    diff = s1 - s0
    order = np.argsort(-np.abs(diff), kind="stable")[:MAX_LEVELS]
    table = [{"rows": f"= {levels[i]}", c1: round(float(s1[i]), 4), c0: round(float(s0[i]), 4)}
             for i in order]
    half = np.random.default_rng(0).random(len(codes)) < 0.5
    a1, a0 = shares(half)
    b1, b0 = shares(~half)
    favoured = (a1 - a0) > 0
    share1, share0 = float(b1[favoured].sum()), float(b0[favoured].sum())
    shown = [levels[i] for i in np.argsort(-(a1 - a0), kind="stable") if favoured[i]][:5]
    more = int(favoured.sum()) - len(shown)
    listed = ", ".join(shown) + (f" and {more:,} more" if more > 0 else "")
    statement = (f"{values.name} in {{{listed}}} holds {fmt_share(share1)} of {c1} rows and "
                 f"{fmt_share(share0)} of {c0} rows (levels chosen on half of the rows, "
                 "shares of the other half)")
    return {"statement": statement, "j": round(max(share1 - share0, 0.0), 4), "table": table}


def class_separation(values: pl.Series, codes: np.ndarray, n_classes: int) -> np.ndarray:
    """Each class's in-sample J against the rest (the largest |P(region | class) -
    P(region | rest)| of a cut, or of the missing rows; the favoured levels of a categorical
    column): the distinct values or levels are found once, each class costs one bincount.
    Used to choose the class to show, not to grade."""
    out = np.zeros(n_classes)
    if _orderable(values.dtype):
        x = _floats(values)
        known = ~np.isnan(x)
        inv = np.unique(x[known], return_inverse=True)[1] if known.any() else np.zeros(0, int)
        total = np.bincount(inv)
        for k in range(n_classes):
            pos = codes == k
            n1, n0 = int(pos.sum()), int((~pos).sum())
            if not n1 or not n0:
                continue
            h1 = np.bincount(inv, weights=pos[known].astype(float), minlength=len(total))
            c1, c0 = np.cumsum(h1) / n1, np.cumsum(total - h1) / n0
            miss = abs((~known & pos).sum() / n1 - (~known & ~pos).sum() / n0)
            out[k] = max(float(np.abs(c1 - c0).max()) if len(c1) else 0.0, miss)
        return out
    _, lv = _level_codes(values)
    for k in range(n_classes):
        pos = codes == k
        n1, n0 = int(pos.sum()), int((~pos).sum())
        if n1 and n0:
            d = np.bincount(lv[pos], minlength=lv.max() + 1) / n1 - \
                np.bincount(lv[~pos], minlength=lv.max() + 1) / n0
            out[k] = float(d[d > 0].sum())
    return out


def class_chart(values: pl.Series, positive: np.ndarray, names: tuple[str, str], column: str,
                split: str, cut: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A chart spec of the column's distribution in the class and in the rest (shares of each
    group's rows): a histogram of ``HIST_BINS`` equal bins between the smallest and largest
    finite value (datetimes on a date axis; the missing shares in the x label), or bars of the
    ``MAX_LEVELS`` levels with the largest difference. None when the column has fewer than
    two distinct values. ``cut``: the column's :func:`decisive_cut` for the same class, when
    already computed (a categorical column's bars are its level table)."""
    pos = np.asarray(positive, dtype=bool)
    n1, n0 = int(pos.sum()), int((~pos).sum())
    if not n1 or not n0:
        return None
    c1, c0 = names
    title = f"{column} in {split} by class"
    if not _orderable(values.dtype):
        rows = (cut or _levels(values, pos, n1, n0, names))["table"]
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
    xlabel = column
    if miss1 or miss0:  # beside the axis: a long title runs under the chart's toolbar
        xlabel += f" (missing: {fmt_share(miss1)} of {c1}, {fmt_share(miss0)} of {c0})"
    spec: dict[str, Any] = {"type": "hist", "edges": [float(e) for e in edges],
                            "series": {c1: [round(float(v), 5) for v in h1 / n1],
                                       c0: [round(float(v), 5) for v in h0 / n0]},
                            "title": title, "xlabel": xlabel,
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
                f"class {classes[1 - k]!r}" if binary else "other-class")

    if binary:
        cls = 1
    sampled = len(values) > MAX_ROWS
    if sampled:  # shares to about +-0.3 points: a chart and a cut, not a count
        keep = np.sort(np.random.default_rng(0).choice(len(values), MAX_ROWS, replace=False))
        values, codes = values.gather(keep), np.asarray(codes)[keep]
    if cls is None:  # the class the column separates best, of the first MAX_CLASSES
        cls = int(np.argmax(class_separation(values, np.asarray(codes),
                                             min(len(classes), MAX_CLASSES))))
    cut = decisive_cut(values, codes == cls, names(cls))
    out: dict[str, Any] = {}
    if cut is not None:
        out["decisive_cut"] = dict(cut, rows=len(values), sampled=sampled)
    chart = class_chart(values, codes == cls, names(cls), str(values.name), split, cut)
    if chart is not None:
        out["charts"] = [chart]
    return out
