"""``leakage.preprocessing``'s measuring, written once over the engine operations: per-split
and per-union summaries of the numeric columns (:func:`fit_context`) and the queries its judge
asks as it goes (:class:`Context`: values near a fill candidate, row sums of a one-hot group,
target-encoding fits).

- Summaries: one :meth:`~auditor.engines.operations.Operations.map_batches` pass per split
  (:func:`summary_batch`: count, mean, population variance, extremes, max |x|, integral,
  non-zero and negative counts, rows at the extremes), merged over a split's batches by
  Chan's parallel formula (:func:`merge_parts`), and over the batches of the splits of each
  union a transform could have been fitted on (train+val, train+val+test): never re-read.
- Quartiles of every float column over every union (:meth:`~auditor.engines.operations.
  Operations.quantiles`: exact on polars, brackets on Spark), made exact where a verdict reads
  them (:meth:`~auditor.engines.operations.Operations.order_statistics`): every quartile of a
  column whose bracket admits robust scaling (median 0, IQR 1), and of its splits; the median
  of a union where a value inside its bracket repeats ``min_ties`` times (a median fill's
  candidate). Other quartiles stay the sketch's, which no verdict reads.
- The judge's queries: counts near a value, rows near any of several, non-zero rows, row sums
  and the label's range are :meth:`~auditor.engines.operations.Operations.map_batches`
  reductions (sums, extremes, all/any flags); a fill candidate's profile adds the most repeated
  value near it (:meth:`~auditor.engines.operations.Operations.most_repeated`), the six nearest
  distinct values (each batch's six nearest, summed: the overall six are among them with their
  full counts) and order statistics of the other values; target encoding reads distinct counts
  and level spreads, and per-level counts and label sums (``map_batches`` summed by level in the
  engine: the driver holds a row per level and split, up to :data:`MAX_LEVELS_HELD` levels).

Values are read as float64 with NaN as missing. Polars and Spark give the same findings: the
same counts, and values equal up to the order of float sums (~1e-15 relative).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import polars as pl

from auditor.core.roles import ColumnType, LabelKind, Roles
from auditor.engines.operations import OrderStat, Operations, Values
from auditor.stats.long_form import COLUMN, LONG_ROWS, VALUE, floats, long_values
from auditor.stats.preprocessing import (EPS32, EPS64, interpolate_quantile, level_fit,
                                         linear_quantile, on_grid, robust_possible)

QUARTILES = {"q25": 0.25, "median": 0.5, "q75": 0.75}
MAX_DECIMALS = 6  # the finest decimal grid of a fill's neighbourhood
NEIGHBOURS = 6  # a fill's nearest distinct values compared with it
MAX_LEVELS_HELD = 5_000_000  # a target encoding's levels the driver holds a row of, at most


# -- batch functions (picklable: run on Spark's executors as they are) --------------------------

STATS = ("n", "mean", "var0", "min", "max", "maxabs", "integral", "nonzero", "negative",
         "n_at_min", "n_at_max")
PARTS = {"column": pl.String, "bits": pl.Int64, "n": pl.Int64, "mean": pl.Float64,
         "var0": pl.Float64, "min": pl.Float64, "max": pl.Float64, "maxabs": pl.Float64,
         "integral": pl.Int64, "nonzero": pl.Int64, "negative": pl.Int64,
         "n_at_min": pl.Int64, "n_at_max": pl.Int64}


def _statistics(x: pl.Expr) -> list[pl.Expr]:
    """The :data:`STATS` of one column ``x`` (float64, NaN made null), in that order."""
    return [x.count(), x.mean(), x.var(ddof=0), x.min(), x.max(), x.abs().max(),
            (x == x.round(0)).all().cast(pl.Int64), (x != 0).sum(), (x < 0).sum(),
            (x == x.min()).sum(), (x == x.max()).sum()]


def frame_summary(frame: pl.DataFrame, cols: Sequence[str]) -> pl.DataFrame:
    """One row of :data:`STATS` per column of ``frame`` (nulls and NaN ignored). A tall frame in
    one select; a short one (at most :data:`~auditor.stats.long_form.LONG_ROWS` rows) in long
    form (:mod:`auditor.stats.long_form`), summarised by one group-by per long frame."""
    cols = list(cols)
    if frame.height <= LONG_ROWS:
        parts = [long.group_by(COLUMN, maintain_order=True).agg(
            e.alias(k) for k, e in zip(STATS, _statistics(pl.col(VALUE))))
            for long in long_values(frame, cols)]
        return pl.concat(parts).rename({COLUMN: "column"})
    row = frame.select(e.alias(f"{i}|{k}") for i, c in enumerate(cols)
                       for k, e in zip(STATS, _statistics(floats(pl.col(c))))).row(0)
    k = len(STATS)
    return pl.DataFrame({"column": cols, **{s: [row[i * k + j] for i in range(len(cols))]
                                            for j, s in enumerate(STATS)}})


def summary_batch(batch: pl.DataFrame, first_row: int, *, cols: tuple[str, ...]
                  ) -> pl.DataFrame:
    """:func:`frame_summary` of a batch, with each column's float width (``bits``: 64, 32,
    0 for a column that is not float)."""
    if batch.height == 0:
        return pl.DataFrame(schema=PARTS)
    bits = {c: 64 if t == pl.Float64 else 32 if t == pl.Float32 else 0
            for c, t in batch.schema.items()}
    got = frame_summary(batch, cols)
    return got.with_columns(pl.col("column").replace_strict(bits, return_dtype=pl.Int64)
                            .alias("bits")).select(pl.col(k).cast(t) for k, t in PARTS.items())


NEAR = {"i": pl.Int64, "n": pl.Int64}


def near_batch(batch: pl.DataFrame, first_row: int, *,
               specs: tuple[tuple[str, float, float], ...]) -> pl.DataFrame:
    """Per spec ``i`` (column, v, tol): the batch's values within ``tol`` of ``v``. A short
    batch in long form: its columns stacked, joined with the specs, counted by one group-by."""
    if batch.height == 0:
        return pl.DataFrame(schema=NEAR)
    if batch.height > LONG_ROWS:
        row = batch.select(((floats(pl.col(c)) - v).abs() <= tol).sum().alias(str(i))
                           for i, (c, v, tol) in enumerate(specs)).row(0)
        return pl.DataFrame({"i": range(len(specs)), "n": row}, schema=NEAR)
    cols = list(dict.fromkeys(c for c, _, _ in specs))
    wanted = pl.DataFrame({COLUMN: [c for c, _, _ in specs], "i": range(len(specs)),
                           "v": [float(v) for _, v, _ in specs],
                           "t": [float(t) for _, _, t in specs]},
                          schema={COLUMN: pl.String, "i": pl.Int64, "v": pl.Float64,
                                  "t": pl.Float64})
    return pl.concat([long.join(wanted, on=COLUMN).group_by("i").agg(
        ((pl.col(VALUE) - pl.col("v")).abs() <= pl.col("t")).sum().cast(pl.Int64).alias("n"))
        for long in long_values(batch, cols)])


def any_near_batch(batch: pl.DataFrame, first_row: int, *,
                   specs: tuple[tuple[str, float, float], ...]) -> pl.DataFrame:
    """Rows within ``tol`` of ``v`` in any (column, v, tol) of ``specs``."""
    hit = pl.any_horizontal([((pl.col(c).cast(pl.Float64) - v).abs() <= tol).fill_null(False)
                             for c, v, tol in specs])
    return batch.select(hit.sum().cast(pl.Int64).alias("n"))


def any_nonzero_batch(batch: pl.DataFrame, first_row: int, *, cols: tuple[str, ...]
                      ) -> pl.DataFrame:
    """Rows non-zero (not null) in any of ``cols``."""
    hit = pl.any_horizontal([pl.col(c).cast(pl.Float64).fill_null(0.0) != 0 for c in cols])
    return batch.select(hit.sum().cast(pl.Int64).alias("n"))


ROW_SUMS = {"null": pl.Int64, "one_hot": pl.Int64, "l2": pl.Int64, "unit": pl.Int64}


def row_sums_batch(batch: pl.DataFrame, first_row: int, *, group: tuple[str, ...]
                   ) -> pl.DataFrame:
    """Over the batch's rows of ``group``'s columns: a null in some row, row sums all exactly 1,
    squared sums all 0 or 1 within 1e-6, some squared sum 1 within 1e-6 (as 0/1)."""
    xs = [pl.col(g).cast(pl.Float64) for g in group]
    sums = batch.select(pl.sum_horizontal(xs).alias("s"),
                        pl.sum_horizontal([e * e for e in xs]).alias("q"),
                        pl.any_horizontal([e.is_null() for e in xs]).alias("null"))
    q = sums["q"]
    return pl.DataFrame({"null": [int(sums["null"].any())],
                         "one_hot": [int((sums["s"] == 1).all())],
                         "l2": [int((((q - 1).abs() <= 1e-6) | (q == 0)).all())],
                         "unit": [int(((q - 1).abs() <= 1e-6).any())]}, schema=ROW_SUMS)


AROUND = {"n": pl.Int64, "within": pl.Int64, "others": pl.Int64, "below": pl.Int64,
          "others_sum": pl.Float64, **{f"g{d}": pl.Int64 for d in range(MAX_DECIMALS + 1)}}


def around_batch(batch: pl.DataFrame, first_row: int, *, col: str, v: float, tol: float
                 ) -> pl.DataFrame:
    """Around a fill candidate ``v`` of ``col``: the values, those within ``tol``, the others,
    the others below ``v`` and their sum, and per d whether every other value is a multiple of
    10^-d (:func:`~auditor.stats.preprocessing.on_grid`)."""
    x = batch.select(floats(pl.col(col))).to_series().drop_nulls()
    near = (x - v).abs() <= tol
    others = x.filter(~near).to_numpy()
    grid = {f"g{d}": [int(bool(on_grid(others, d).all()))] for d in range(MAX_DECIMALS + 1)}
    return pl.DataFrame({"n": [x.len()], "within": [int(near.sum())], "others": [others.size],
                         "below": [int((others < v).sum())],
                         "others_sum": [float(others.sum())], **grid}, schema=AROUND)


NEAREST = {"value": pl.Float64, "count": pl.Int64}


def nearest_batch(batch: pl.DataFrame, first_row: int, *, col: str, v: float, tol: float,
                  k: int) -> pl.DataFrame:
    """The ``k`` distinct values of ``col`` farther than ``tol`` from ``v`` nearest to it
    (ties in distance by value), with their rows in the batch."""
    x = batch.select(floats(pl.col(col)).alias("value")).drop_nulls()
    counts = (x.filter((pl.col("value") - v).abs() > tol).group_by("value").agg(pl.len()
                                                                                  .alias("count")))
    return (counts.sort((pl.col("value") - v).abs(), pl.col("value")).head(k)
            .select("value", pl.col("count").cast(pl.Int64)))


def label_floats(s: pl.Series, top: str | None) -> pl.Series:
    """The label as floats: numbers and booleans as they are (NaN as null), text as 1.0 for
    ``top`` (a binary label's larger value) and 0.0 for the other."""
    if s.dtype.is_numeric() or s.dtype == pl.Boolean:
        return s.cast(pl.Float64).fill_nan(None)
    return (s.cast(pl.String) == top).cast(pl.Float64)


LABEL = {"numeric": pl.Int64, "n": pl.Int64, "lo": pl.Float64, "hi": pl.Float64,
         "smallest": pl.String, "largest": pl.String}


def label_batch(batch: pl.DataFrame, first_row: int, *, label: str) -> pl.DataFrame:
    """The label's labelled rows and range: as numbers (numeric and boolean labels) or as
    text (the smallest and largest value)."""
    s = batch[label]
    if s.dtype.is_numeric() or s.dtype == pl.Boolean:
        y = label_floats(s, None)
        return pl.DataFrame({"numeric": [1], "n": [y.count()], "lo": [y.min()], "hi": [y.max()],
                             "smallest": [None], "largest": [None]}, schema=LABEL)
    t = s.cast(pl.String).drop_nulls()
    return pl.DataFrame({"numeric": [0], "n": [t.len()], "lo": [None], "hi": [None],
                         "smallest": [t.min()], "largest": [t.max()]}, schema=LABEL)


def _levels(s: pl.Series, key_type: Any) -> pl.Series:
    """A key's values as levels of ``key_type`` (integers beyond Int64 wrap: still distinct)."""
    return s.cast(key_type, wrap_numerical=True)


def mapping_batch(batch: pl.DataFrame, first_row: int, *, key: str, value: str,
                  key_type: Any) -> pl.DataFrame:
    """Rows per (level of ``key``, value of ``value``) where the value is present."""
    return (pl.DataFrame({"k": _levels(batch[key], key_type),
                          "v": batch.select(floats(pl.col(value))).to_series()})
            .drop_nulls("v").group_by("k", "v").agg(pl.len().cast(pl.Int64).alias("w")))


LABEL_LEVELS = {"mapped": pl.Boolean, "n": pl.Int64, "sy": pl.Float64}


def label_levels_batch(batch: pl.DataFrame, first_row: int, *, key: str, label: str,
                       top: str | None, key_type: Any, levels: tuple[Any, ...],
                       null_level: bool) -> pl.DataFrame:
    """The labelled rows and the sum of their labels (as floats) per level of ``key`` among
    ``levels`` (a null key one of them when ``null_level``), and of the other rows together
    (``mapped`` false, ``k`` null)."""
    k = _levels(batch[key], key_type)
    mapped = k.is_in(pl.Series(levels, dtype=key_type).implode()).fill_null(False)
    if null_level:
        mapped = mapped | k.is_null()
    return (pl.DataFrame({"k": k, "mapped": mapped, "y": label_floats(batch[label], top)})
            .drop_nulls("y")
            .with_columns(pl.when(pl.col("mapped")).then(pl.col("k")).alias("k"))
            .group_by("k", "mapped").agg(pl.len().cast(pl.Int64).alias("n"),
                                         pl.col("y").sum().alias("sy")))


# -- merging on the driver ---------------------------------------------------------------------

def merge_parts(parts: pl.DataFrame, cols: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per column of ``cols``, the summary of the rows behind ``parts`` (batch summaries, of
    one split or of several): counts summed, extremes of extremes, rows at an extreme summed
    over the batches holding it, the mean weighted by counts, ``M2 = sum n_i var0_i + n_i
    (mean_i - mean)^2`` (Chan's parallel formula), std0 = sqrt(M2 / n), std1 = sqrt(M2 /
    (n - 1)); a column of one batch keeps its batch's mean and variance. The quartiles are
    NaN (measured apart); a column without a value has n 0, NaN statistics, integral False."""
    live = parts.filter(pl.col("n") > 0)
    n, mean = pl.col("n"), pl.col("mean")
    mu = pl.when(pl.len().over("column") == 1).then(mean) \
        .otherwise((n * mean).sum().over("column") / n.sum().over("column"))
    m2 = pl.when(pl.len() == 1).then(pl.col("var0").first() * n.first()) \
        .otherwise((n * pl.col("var0") + n * (mean - pl.col("mu")) ** 2).sum())
    g = (live.with_columns(mu.alias("mu")).group_by("column").agg(
        n.sum(), pl.col("mu").first().alias("mean"), m2.alias("m2"),
        pl.col("min").min(), pl.col("max").max(), pl.col("maxabs").max(),
        (pl.col("integral").min() == 1).alias("integral"), pl.col("nonzero").sum(),
        pl.col("negative").sum(),
        pl.col("n_at_min").filter(pl.col("min") == pl.col("min").min()).sum(),
        pl.col("n_at_max").filter(pl.col("max") == pl.col("max").max()).sum()))
    ok = pl.col("m2").is_finite() & (pl.col("m2") >= 0)
    g = g.with_columns(
        pl.when(ok).then((pl.col("m2") / pl.col("n")).sqrt()).otherwise(math.nan).alias("std0"),
        pl.when(ok & (pl.col("n") > 1)).then((pl.col("m2") / (pl.col("n") - 1)).sqrt())
        .otherwise(math.nan).alias("std1"),
        *(pl.lit(math.nan).alias(k) for k in QUARTILES)).drop("m2")
    out = {row.pop("column"): row for row in g.to_dicts()}
    return {c: out.get(c) or _empty() for c in cols}


def _empty() -> dict[str, Any]:
    return {"n": 0, **{k: math.nan for k in ("mean", "std0", "std1", "min", "max", "maxabs",
                                               *QUARTILES)},
            "integral": False, "nonzero": 0, "negative": 0, "n_at_min": 0, "n_at_max": 0}


def _key_type(t: ColumnType | None) -> Any:
    """The polars type a level key's values travel in."""
    return {ColumnType.INTEGER: pl.Int64, ColumnType.BOOLEAN: pl.Boolean,
            ColumnType.FLOAT: pl.Float64}.get(t, pl.String)  # type: ignore[arg-type]


# -- the context -------------------------------------------------------------------------------

def fit_context(ops: Operations, roles: Roles, cols: list[str], *, min_ties: int,
                robust_tolerance: Callable[[float, float], float]) -> "Context":
    """The :class:`Context` of ``cols``, summarised once per run (the measure and the judge
    read the same one); ``robust_tolerance(eps, max |quartile|)``: the judge's tolerance on a
    robust scaler's median and IQR (a column whose quartiles may match one within it has its
    quartiles measured exactly)."""
    return ops.cached(  # type: ignore[no-any-return]
        ("leakage.preprocessing.context", tuple(cols), min_ties, robust_tolerance),
        lambda: Context.build(ops, roles, cols, min_ties, robust_tolerance))


@dataclass
class Context:
    """Summaries per split (``per_split``) and per union of splits a transform could have been
    fitted on (``per_set``, keyed by the splits; ``fit_sets`` largest first), each a dict of
    n, mean, std0/std1 (ddof 0/1), min, max, maxabs, integral, nonzero, negative, n_at_min,
    n_at_max and the quartiles median, q25, q75 (NaN where not measured; exact where
    ``exact_quantiles`` holds (column, splits, quartile)); ``eps``: every float column's
    machine epsilon. Its methods are the judge's further queries."""

    ops: Operations
    roles: Roles
    names: list[str]
    cols: list[str]
    fit_sets: list[list[str]]
    per_split: dict[str, dict[str, dict[str, Any]]]
    per_set: dict[tuple[str, ...], dict[str, dict[str, Any]]]
    eps: dict[str, float]
    exact_quantiles: set[tuple[str, tuple[str, ...], str]] = field(default_factory=set)
    label_info: dict[str, Any] | None = None
    later_levels: dict[str, int] = field(default_factory=dict)  # a key's levels after train

    @classmethod
    def build(cls, ops: Operations, roles: Roles, cols: list[str], min_ties: int,
              robust_tolerance: Callable[[float, float], float] = lambda eps, q: 1e-6
              ) -> "Context":
        names = list(roles.splits)
        fit_sets = [names[:i] for i in range(len(names), 1, -1)]  # largest first
        got = ops.map_batches(cols, functools.partial(summary_batch, cols=tuple(cols)), PARTS)
        widths = pl.concat(list(got.values())).group_by("column").agg(pl.col("bits").max())
        bits = dict.fromkeys(cols, 0) | dict(widths.iter_rows())
        eps = {c: EPS32 if bits[c] == 32 else EPS64 for c in cols
               if bits[c] or roles.types.get(c) == ColumnType.FLOAT}
        # a union's summary is its splits' batches merged (never read again)
        combined = {t: merge_parts(pl.concat([got[n] for n in t]), cols)
                    for t in [(n,) for n in names] + [tuple(s) for s in fit_sets]}
        ctx = cls(ops, roles, names, cols, fit_sets, {n: combined[(n,)] for n in names},
                  {tuple(s): combined[tuple(s)] for s in fit_sets}, eps)
        ctx._quartiles(combined, min_ties, robust_tolerance)
        return ctx

    def _quartiles(self, combined: dict[tuple[str, ...], dict[str, dict[str, Any]]],
                   min_ties: int, robust_tolerance: Callable[[float, float], float]) -> None:
        """Quartiles of every float column over every union, exact where a verdict reads them
        (see the module docstring)."""
        spec = [(c, tuple(t)) for c in self.cols if c in self.eps for t in self.fit_sets
                if combined[tuple(t)][c]["n"]]
        got = self.ops.quantiles([(Values(c, t), combined[t][c]["n"]) for c, t in spec],
                                 list(QUARTILES.values()))
        brackets = dict(zip(spec, got))
        for (c, t), bs in brackets.items():
            for k, b in zip(QUARTILES, bs):
                combined[t][c][k] = b.value
                if b.exact:
                    self.exact_quantiles.add((c, t, k))
        robust = {c for (c, t), bs in brackets.items() if not combined[t][c]["integral"]
                  and robust_possible([x for b in bs for x in (b.lo, b.value, b.hi)],
                                      max(1e-6, robust_tolerance(
                                          self.eps[c], max(abs(bs[0].value), abs(bs[2].value)))))}
        todo: list[tuple[str, tuple[str, ...], str, tuple[float, float] | None]] = []
        maybe = []
        for (c, t), bs in brackets.items():
            if c in robust:
                todo += [(c, t, k, (q.lo, q.hi)) for k, q in zip(QUARTILES, bs) if not q.exact]
            elif not bs[1].exact:
                maybe.append((c, t, (bs[1].lo, bs[1].hi)))
        for c in (c for c in self.cols if c in robust):  # a split's quartiles: robust only
            todo += [(c, (n,), k, None) for n in self.names if combined[(n,)][c]["n"]
                     for k in QUARTILES]
        # a union's median matters only as a median fill's candidate: a value repeated at
        # least min_ties times; medians whose bracket holds none stay the sketch's
        ties = self.ops.most_repeated([Values(c, t, lo=b[0], hi=b[1]) for c, t, b in maybe])
        todo += [(c, t, "median", r) for (c, t, r), k in zip(maybe, ties) if k >= min_ties]
        requests, weights = [], []
        for c, t, key, r in todo:
            n = combined[t][c]["n"]
            k0, k1, w = linear_quantile(n, QUARTILES[key])
            requests.append(OrderStat(Values(c, t), n, k0, k1, r))
            weights.append(w)
        for (c, t, key, _), w, (lo, hi) in zip(todo, weights,
                                                self.ops.order_statistics(requests)):
            combined[t][c][key] = interpolate_quantile(lo, hi, w, key == "median")
            self.exact_quantiles.add((c, t, key))

    # -- the judge's queries -------------------------------------------------------------------
    def set_rows(self, fit_set: Sequence[str]) -> int:
        """Rows (with nulls) of the union of ``fit_set``."""
        return sum(self.roles.rows[n] for n in fit_set)

    def _near(self, splits: Sequence[str], specs: Sequence[tuple[str, float, float]]
              ) -> dict[str, np.ndarray]:
        cols = list(dict.fromkeys(c for c, _, _ in specs))
        got = self.ops.map_batches(cols, functools.partial(near_batch, specs=tuple(specs)),
                                   NEAR, sum_by=["i"], splits=list(splits))
        out = {}
        for s, frame in got.items():
            counts = np.zeros(len(specs), dtype=np.int64)
            counts[frame["i"].to_numpy()] = frame["n"].to_numpy()
            out[s] = counts
        return out

    def count_near(self, fit_set: Sequence[str], specs: list[tuple[str, str, float, float]]
                   ) -> dict[str, int]:
        """For each (column, key, v, tol): values of the union within ``tol`` of ``v``, keyed
        ``column\\x00key``."""
        got = self._near(fit_set, [(c, v, tol) for c, _, v, tol in specs])
        total = np.zeros(len(specs), dtype=np.int64)
        for counts in got.values():
            total += counts
        return {f"{c}\x00{k}": int(n) for (c, k, _, _), n in zip(specs, total)}

    def rows_near(self, c: str, v: float, tol: float) -> dict[str, int]:
        """Rows within ``tol`` of ``v`` per split."""
        got = self._near(self.names, [(c, v, tol)])
        return {n: int(got[n][0]) if n in got else 0 for n in self.names}

    def _summed(self, splits: Sequence[str], cols: Sequence[str], fn: Any) -> int:
        got = self.ops.map_batches(list(dict.fromkeys(cols)), fn, {"n": pl.Int64},
                                   splits=list(splits))
        return int(sum(int(f["n"].sum()) for f in got.values()))

    def rows_any_near(self, fit_set: Sequence[str], specs: list[tuple[str, float, float]]
                      ) -> int:
        """Rows of the union within ``tol`` of ``v`` in any (column, v, tol) of ``specs``."""
        return self._summed(fit_set, [c for c, _, _ in specs],
                            functools.partial(any_near_batch, specs=tuple(specs)))

    def rows_any_nonzero(self, split: str, cols: list[str]) -> int:
        """Rows of ``split`` non-zero (not null) in any of ``cols``."""
        return self._summed([split], cols, functools.partial(any_nonzero_batch,
                                                             cols=tuple(cols)))

    def row_sums(self, group: list[str]) -> list[dict[str, bool]]:
        """Per split, over the rows of ``group``'s columns: a null in some row (``null``), row
        sums all exactly 1 (``one_hot``), squared sums all 0 or 1 within 1e-6 (``l2``), some
        squared sum 1 within 1e-6 (``unit``); an empty split: all() true, any() false."""
        got = self.ops.map_batches(group, functools.partial(row_sums_batch, group=tuple(group)),
                                   ROW_SUMS)
        out = []
        for n in self.names:
            f = got[n]
            out.append({"null": bool(f["null"].max() or 0),
                        "one_hot": f.height == 0 or bool(f["one_hot"].min()),
                        "l2": f.height == 0 or bool(f["l2"].min()),
                        "unit": bool(f["unit"].max() or 0)})
        return out

    def _around(self, splits: Sequence[str], c: str, v: float, tol: float) -> dict[str, Any]:
        got = self.ops.map_batches([c], functools.partial(around_batch, col=c, v=v, tol=tol),
                                   AROUND, splits=list(splits))
        parts = pl.concat([f for f in got.values()]) if got else pl.DataFrame(schema=AROUND)
        out: dict[str, Any] = {k: int(parts[k].sum()) for k in ("n", "within", "others",
                                                                   "below")}
        out["others_sum"] = math.fsum(parts["others_sum"].to_list())
        live = parts.filter(pl.col("others") > 0)
        out["grid"] = next((d for d in range(MAX_DECIMALS + 1) if live[f"g{d}"].min() == 1),
                           None) if live.height else None
        return out

    def fill_profile(self, fit_set: Sequence[str], c: str, v: float, tol: float,
                     median: bool) -> dict[str, Any]:
        """What the imputation judge needs about ``v`` in column ``c`` over ``fit_set``: the
        count of the most frequent value within ``tol`` of ``v`` (``cnt``: a fill writes one
        value, and data at 1e-17 around 0 is within any tolerance of 0), the non-null values
        (``n``), the decimal grid of the other values (``grid``), and the largest count of a
        neighbouring distinct value (``neighbour``: the six nearest, and for the median every
        one within a quarter of the others' IQR, where natural modes gather)."""
        fit_set = tuple(fit_set)
        around = self._around(fit_set, c, v, tol)
        cnt = self.ops.most_repeated([Values(c, fit_set, at=v, near=tol)])[0]
        m = around["others"]
        neighbour = 1
        if m:
            others = Values(c, fit_set, at=v, far=tol)
            window = -1.0
            if median:
                ranks = [linear_quantile(m, q) for q in (0.25, 0.75)]
                (a25, b25), (a75, b75) = self.ops.order_statistics(
                    [OrderStat(others, m, k0, k1) for k0, k1, _ in ranks])
                window = 0.25 * (interpolate_quantile(a75, b75, ranks[1][2], False)
                                 - interpolate_quantile(a25, b25, ranks[0][2], False))
            got = self.ops.map_batches(
                [c], functools.partial(nearest_batch, col=c, v=v, tol=tol, k=NEIGHBOURS),
                NEAREST, sum_by=["value"], splits=list(fit_set))
            near = (pl.concat(list(got.values())).group_by("value").agg(pl.col("count").sum())
                    .sort((pl.col("value") - v).abs(), pl.col("value")).head(NEIGHBOURS))
            counts = near["count"].to_list()
            if window >= 0:
                counts += self.ops.most_repeated([Values(c, fit_set, at=v, near=window,
                                                         far=tol)])
            neighbour = max(counts) if counts else 1
        return {"cnt": cnt, "n": around["n"], "grid": around["grid"], "neighbour": neighbour}

    def fill_candidates_of(self, splits: Sequence[str], c: str, v: float, tol: float
                           ) -> tuple[int, dict[str, float]]:
        """(non-null values, what a mean or median imputer fitted on column ``c`` over
        ``splits`` would have filled): the mean and median of the values farther than ``tol``
        from ``v``, and their median with one copy of ``v`` kept (an observed value that was
        itself the median of an odd count: m + 1 values, ``v`` at rank b after the b others
        below it)."""
        around = self._around(splits, c, v, tol)
        n, m, b = around["n"], around["others"], around["below"]
        if m == 0:
            return n, {}
        k0, k1, w = linear_quantile(m, 0.5)
        j0, j1, wj = linear_quantile(m + 1, 0.5)
        ranks = sorted({k0, k1} | {r - (r > b) for r in (j0, j1) if r != b})
        others = Values(c, tuple(splits), at=v, far=tol)
        got = self.ops.order_statistics([OrderStat(others, m, r, r) for r in ranks])
        at = {r: s[0] for r, s in zip(ranks, got)}

        def with_copy(r: int) -> float:
            return v if r == b else at[r - (r > b)]

        return n, {"mean": around["others_sum"] / m,
                   "median": interpolate_quantile(at[k0], at[k1], w, True),
                   "median_with_one_copy": interpolate_quantile(with_copy(j0), with_copy(j1),
                                                                wj, True)}

    # -- the label and target encoding ---------------------------------------------------------
    def _label(self) -> dict[str, Any]:
        """The label as numbers: ``numeric``, ``n`` labelled rows, ``range`` (min, max) as
        floats or None, ``top`` (a text label's largest value)."""
        if self.label_info is None:
            y = self.roles.label
            got = self.ops.map_batches([y], functools.partial(label_batch, label=y),  # type: ignore
                                       LABEL)
            parts = pl.concat(list(got.values()))
            numeric = bool(parts["numeric"].max() or 0) if parts.height else False
            n = int(parts["n"].sum())
            info: dict[str, Any] = {"numeric": numeric, "n": n, "range": None, "top": None}
            if numeric and n:
                info["range"] = (float(parts["lo"].min()), float(parts["hi"].max()))  # type: ignore
            elif not numeric and n and self.roles.label_kind == LabelKind.BINARY:
                top, bottom = parts["largest"].max(), parts["smallest"].min()
                info["top"] = top
                info["range"] = (0.0 if bottom != top else 1.0, 1.0)
            self.label_info = info
        return self.label_info

    def label_range(self) -> tuple[float, float] | None:
        """(min, max) of the label as floats over every split (a binary text label: 1 for
        its larger value), or None when it cannot be read as numbers or holds no value."""
        got: tuple[float, float] | None = self._label()["range"]
        return got

    def encoding_distincts(self, cols: list[str]) -> tuple[dict[str, int], dict[str, int], int]:
        """Distinct values per column over the later splits, distinct values in train (a
        missing value one more), and the later splits' rows."""
        later = self.names[1:]
        return (self.ops.distinct_counts(cols, later),
                self.ops.distinct_counts(cols, self.names[:1], missing_level=True),
                self.set_rows(later))

    def level_keys(self, cols: list[str], keys: list[str]) -> dict[str, str | None]:
        """For each column of ``cols``, the first column of ``keys`` (not itself) of which it
        is a function in the later splits: every level of the key holding a value (not null,
        not NaN) of the column carries one value, over at least two levels. Keys with one
        level, or nearly one row per level (an undeclared id), are not used."""
        out: dict[str, str | None] = {c: None for c in cols}
        if not cols or not keys:
            return out
        later = self.names[1:]
        height = self.set_rows(later)
        levels = self.ops.distinct_counts(keys, later, missing_level=True)
        self.later_levels |= levels
        values = self.ops.distinct_counts(cols, later)
        for k in keys:
            if not 2 <= levels[k] <= height // 2:
                continue
            # a function of k takes at most one value per level of k
            todo = [c for c in cols if out[c] is None and c != k and values[c] <= levels[k]]
            if not todo:
                continue
            for c, (groups, most) in self.ops.level_spreads(k, todo, later).items():
                if groups >= 2 and most == 1:
                    out[c] = k
        return out

    def encoding_fits(self, c: str, key: str) -> dict[str, Any] | None:
        """Per fit set (train alone first), :func:`~auditor.stats.preprocessing.level_fit` of
        the encoded value of each level (its value in the later splits) against the fit set's
        per-level label means; None with fewer than two levels in both, or more levels than
        :data:`MAX_LEVELS_HELD`."""
        names, label = self.names, str(self.roles.label)
        if key not in self.later_levels:
            self.later_levels |= self.ops.distinct_counts([key], names[1:], missing_level=True)
        if self.later_levels[key] > MAX_LEVELS_HELD:
            return None
        key_type = _key_type(self.roles.types.get(key))
        got = self.ops.map_batches(
            list(dict.fromkeys([key, c])),
            functools.partial(mapping_batch, key=key, value=c, key_type=key_type),
            {"k": key_type, "v": pl.Float64, "w": pl.Int64}, sum_by=["k", "v"],
            splits=names[1:])
        mapping = (pl.concat(list(got.values())).group_by("k")
                   .agg(pl.col("v").min(), pl.col("w").sum()))
        levels = mapping["k"]
        per = self.ops.map_batches(
            [key, label], functools.partial(
                label_levels_batch, key=key, label=label, top=self._label()["top"],
                key_type=key_type, levels=tuple(levels.drop_nulls().to_list()),
                null_level=levels.null_count() > 0),
            {"k": key_type, **LABEL_LEVELS}, sum_by=["k", "mapped"])
        train_levels = per[names[0]].filter(pl.col("mapped") & (pl.col("n") > 0)).select("k")
        mapping = mapping.join(train_levels, on="k", how="inner")
        if mapping.height < 2:
            return None
        out: dict[str, Any] = {}
        for fs in [[names[0]], *self.fit_sets]:
            rows_of = pl.concat([per[n] for n in fs])
            rows = int(rows_of["n"].sum())  # every labelled row: the fit set's mean label
            p = float(rows_of["sy"].sum()) / rows if rows else math.nan
            lv = (rows_of.filter(pl.col("mapped")).group_by("k")
                  .agg(pl.col("n").sum(), pl.col("sy").sum()).filter(pl.col("n") > 0)
                  .select("k", "n", (pl.col("sy") / pl.col("n")).alias("ybar")))
            out["+".join(fs)] = level_fit(mapping, lv, p, rows)
        return out
