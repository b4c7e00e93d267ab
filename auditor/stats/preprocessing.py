"""The statistics behind ``leakage.preprocessing``'s fingerprints (the check and its
documentation are in :mod:`auditor.detectors.preprocessing`): per-column summaries of
each split and of the unions a preprocessing step could have been fitted on, fill-value
candidates, row structure, and target-encoding fits."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from auditor.core.roles import Roles
from auditor.loading.data import AuditData, LabelKind
from auditor.stats.numerics import clip_text

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)


def fit_context(data: AuditData, roles: Roles, cols: list[str]) -> "Context":
    """The polars :class:`Context` of ``cols``: the splits' columns and their unions are views
    of the loaded chunks (``pl.concat`` without rechunk; :func:`summarise` makes a few columns
    contiguous at a time: 10M + 2.5M x 40 rechunked at once cost +2.2 GB), summarised per
    split and per union a transform could have been fitted on (largest first)."""
    names = list(roles.splits)
    frames = {n: data.splits[n].select(cols) for n in names}
    fit_sets = [names[:i] for i in range(len(names), 1, -1)]  # largest first
    unions = {tuple(s): pl.concat([frames[n] for n in s], rechunk=False) for s in fit_sets}
    per_split = {n: summarise(frames[n], cols) for n in names}
    per_set = {s: summarise(u, cols) for s, u in unions.items()}
    schema = data.splits[names[0]].schema  # built anew on every access: once
    eps = {c: EPS32 if schema[c] == pl.Float32 else EPS64 for c in cols
           if schema[c].is_float()}
    return Context(data, names, cols, frames, fit_sets, unions, per_split, per_set, roles, eps)


@dataclass
class Context:
    data: AuditData
    names: list[str]
    cols: list[str]
    frames: dict[str, pl.DataFrame]
    fit_sets: list[list[str]]
    unions: dict[tuple[str, ...], pl.DataFrame]
    per_split: dict[str, dict[str, dict[str, Any]]]
    per_set: dict[tuple[str, ...], dict[str, dict[str, Any]]]
    roles: Roles
    eps: dict[str, float]  # every float column's machine epsilon
    ys: dict[str, pl.Series | None] = field(default_factory=dict)

    # -- measuring operations of the judge beyond the summaries (polars; the spark engine's
    # counterpart is auditor.engines.spark_prep.SparkContext, same names and results) ---------
    def set_rows(self, fit_set: tuple[str, ...]) -> int:
        """Rows (with nulls) of the union of ``fit_set``."""
        return self.unions[tuple(fit_set)].height

    def count_near(self, fit_set: tuple[str, ...],
                   specs: list[tuple[str, str, float, float]]) -> dict[str, int]:
        """For each (column, key, v, tol): values of the union within ``tol`` of ``v``
        (keyed ``column\x00key``), in one select; a short union (at most :data:`LONG_ROWS`
        rows) in long form, by one join and group-by (as :func:`summarise`)."""
        frame = self.unions[tuple(fit_set)]
        if 0 < frame.height <= LONG_ROWS:
            return _count_near_long(frame, specs)
        exprs = []
        for c, k, v, tol in specs:
            x = pl.col(c).cast(pl.Float64).fill_nan(None)
            exprs.append(((x - v).abs() <= tol).sum().alias(f"{c}\x00{k}"))
        row = frame.select(exprs).row(0, named=True)
        return {k: int(v) for k, v in row.items()}

    def _values(self, splits: tuple[str, ...], c: str) -> pl.Series:
        frame = self.unions[tuple(splits)] if len(splits) > 1 else self.frames[splits[0]]
        return frame[c].cast(pl.Float64).fill_nan(None).drop_nulls()

    def fill_profile(self, fit_set: tuple[str, ...], c: str, v: float, tol: float,
                     median: bool) -> dict[str, Any]:
        """What the imputation judge needs about ``v`` in column ``c`` over ``fit_set``: the
        count of the most frequent value within ``tol`` of ``v`` (``cnt``), the non-null values
        (``n``), the decimal grid of the other values (``grid``), the largest count of a
        neighbouring distinct value (the six nearest, and for the median every one within a
        quarter of the others' IQR: ``neighbour``)."""
        values = self._values(fit_set, c)
        n, d = "__auditor_n", "__auditor_d"  # never a user column name (auditor.core.colnames)
        # a fill writes one value: count the most frequent value within tolerance, not every
        # distinct value there (data at 1e-17 around 0 is within any tolerance of a mean 0)
        within = values.filter((values - v).abs() <= tol).value_counts(name=n)
        cnt = int(within.sort([n, c], descending=[True, False])[n][0]) if within.height else 0
        others = values.filter((values - v).abs() > tol)
        grid = decimal_grid(others.to_numpy())
        # neighbours: the six nearest distinct values, and for the median (where natural modes
        # gather) every distinct value within a quarter of the others' IQR (value_counts comes
        # in no fixed order: ties in the distance are broken by the value)
        window = 0.25 * float((others.quantile(0.75, "linear") or 0.0)
                              - (others.quantile(0.25, "linear") or 0.0)) if median else -1.0
        near = (others.value_counts(name=n).with_columns((pl.col(c) - v).abs().alias(d))
                .sort([d, c]).filter((pl.int_range(pl.len()) < 6) | (pl.col(d) <= window)))
        neighbour = int(near[n].max() or 1) if near.height else 1
        return {"cnt": cnt, "n": values.len(), "grid": grid, "neighbour": neighbour}

    def fill_candidates_of(self, splits: tuple[str, ...], c: str, v: float, tol: float
                           ) -> tuple[int, dict[str, float]]:
        """(non-null values, :func:`fill_candidates`) of column ``c`` over ``splits``."""
        values = self._values(tuple(splits), c).to_numpy()
        return len(values), fill_candidates(values, v, tol)

    def rows_near(self, c: str, v: float, tol: float) -> dict[str, int]:
        """Rows within ``tol`` of ``v`` per split."""
        return {n: int(((self.frames[n][c].cast(pl.Float64) - v).abs() <= tol).sum())
                for n in self.names}

    def rows_any_near(self, fit_set: tuple[str, ...], specs: list[tuple[str, float, float]]
                      ) -> int:
        """Rows of the union within ``tol`` of ``v`` in any (column, v, tol) of ``specs``."""
        return int(self.unions[tuple(fit_set)].select(pl.any_horizontal([
            ((pl.col(c).cast(pl.Float64) - v).abs() <= tol).fill_null(False)
            for c, v, tol in specs]).sum()).item())

    def rows_any_nonzero(self, split: str, cols: list[str]) -> int:
        """Rows of ``split`` non-zero (not null) in any of ``cols``."""
        nonzero = [(pl.col(c).cast(pl.Float64).fill_null(0.0) != 0) for c in cols]
        return int(self.frames[split].select(pl.any_horizontal(nonzero).sum()).item())

    def row_sums(self, group: list[str]) -> list[dict[str, bool]]:
        """Per split, over the rows of ``group``'s columns: a null in some row (``null``), row
        sums all exactly 1 (``one_hot``), squared sums all 0 or 1 within 1e-6 (``l2``), some
        squared sum 1 within 1e-6 (``unit``)."""
        exprs = [pl.col(g).cast(pl.Float64) for g in group]
        out = []
        for frame in self.frames.values():
            sums = frame.select(pl.sum_horizontal(exprs).alias("s"),
                                pl.sum_horizontal([e * e for e in exprs]).alias("q"),
                                pl.any_horizontal([e.is_null() for e in exprs]).alias("null"))
            q = sums["q"]
            out.append({"null": bool(sums["null"].any()), "one_hot": bool((sums["s"] == 1).all()),
                        "l2": bool((((q - 1).abs() <= 1e-6) | (q == 0)).all()),
                        "unit": bool(((q - 1).abs() <= 1e-6).any())})
        return out

    def label_values(self, split: str) -> pl.Series | None:
        if split not in self.ys:
            self.ys[split] = label_values(self.data, split)
        return self.ys[split]

    def label_range(self) -> tuple[float, float] | None:
        """(min, max) of the label as floats over every split, or None when it cannot be
        read as numbers or holds no value."""
        ys = {n: self.label_values(n) for n in self.names}
        if any(v is None for v in ys.values()):
            return None
        yall = pl.concat([ys[n] for n in self.names]).drop_nulls()  # type: ignore[misc]
        if yall.len() == 0:
            return None
        return float(yall.min()), float(yall.max())  # type: ignore[arg-type]

    def encoding_distincts(self, cols: list[str]
                           ) -> tuple[dict[str, int], dict[str, int], int]:
        """Distinct non-null values per column over the later splits (NaN as null), distinct
        values (null and NaN included) in train, and the later splits' rows."""
        later = pl.concat([self.data.splits[n].select(cols) for n in self.names[1:]]) \
            .with_columns(pl.all().fill_nan(None))
        n_later = dict(zip(cols, later.select(pl.all().drop_nulls().n_unique()).row(0)))
        n_train = dict(zip(cols, self.data.splits[self.names[0]].select(cols)
                           .select(pl.all().n_unique()).row(0)))
        return n_later, n_train, later.height

    def level_keys(self, cols: list[str], keys: list[str]) -> dict[str, str | None]:
        return encoded_level_keys(self.data, cols, keys, self.names)

    def encoding_fits(self, c: str, key: str) -> dict[str, Any] | None:
        ys = {n: self.label_values(n) for n in self.names}
        return encoding_fits(self.data, c, key, ys, self.names, self.fit_sets)  # type: ignore


AGGS = ("n", "mean", "std0", "std1", "min", "max", "median", "q25", "q75", "maxabs",
         "integral", "nonzero", "negative", "n_at_min", "n_at_max")


SUMMARY_BATCH = 4  # columns summarised (made contiguous, cast, sorted) at a time
LONG_ROWS = 5_000  # frames up to this many rows are summarised in long form (column, value)
LONG_CELLS = 1 << 21  # values summarised per long-form batch
# the long form's column and value names: never a user column (auditor.core.colnames)
_COLUMN, _VALUE = "__auditor_column", "__auditor_value"


def summarise(frame: pl.DataFrame, cols: list[str]) -> dict[str, dict[str, Any]]:
    """Per-column statistics; nulls and NaN are ignored.

    Keys: n (non-null count), mean, std0/std1 (ddof 0/1), min, max, median, q25/q75 (linear
    interpolation, as numpy's default), maxabs, integral (every value a whole number),
    nonzero, negative, n_at_min and n_at_max (counts).

    Tall frames: :data:`SUMMARY_BATCH` columns per polars select (each batch made contiguous
    first: quantiles on a many-chunk column rechunk it per expression). A select runs its
    expressions in parallel, each holding a float64 copy and a sorted copy of its column;
    batching bounds that to a few columns instead of all of them (the values are the same:
    every statistic is of one column). Short frames (at most :data:`LONG_ROWS` rows): the
    columns stacked into one long (column, value) frame and the same statistics computed per
    column by one group-by, :data:`LONG_CELLS` values at a time: a select costs ~50 us per
    expression whatever the rows, 15 per column (10,000 columns of 100 rows: 9 s a call in
    selects, 0.3 s in long form; the values are identical).
    """
    if 0 < frame.height <= LONG_ROWS:
        step = max(1, LONG_CELLS // frame.height)
        out: dict[str, dict[str, Any]] = {}
        for b in range(0, len(cols), step):
            out.update(_summarise_long(frame, cols[b:b + step]))
        return out
    out = {}
    for b in range(0, len(cols), SUMMARY_BATCH):
        batch = cols[b:b + SUMMARY_BATCH]
        out.update(_summarise(one_chunk(frame.select(batch)), batch))
    return out


def _statistics(x: pl.Expr) -> list[pl.Expr]:
    """The :data:`AGGS` of one column ``x`` (Float64, NaN made null), in that order."""
    # quantiles of a column holding nulls (or NaN made null) cost 8x more per call at 1M
    # rows, 5% nulls, than on the nulls dropped first (same values: nulls are ignored)
    xq = x.drop_nulls()
    return [x.count(), x.mean(), x.std(ddof=0), x.std(ddof=1), x.min(), x.max(),
            xq.median(), xq.quantile(0.25, interpolation="linear"),
            xq.quantile(0.75, interpolation="linear"), x.abs().max(),
            (x == x.round(0)).all(), (x != 0).sum(), (x < 0).sum(),
            (x == x.min()).sum(), (x == x.max()).sum()]


def _summary(values: dict[str, Any]) -> dict[str, Any]:
    """One column's :data:`AGGS` as polars returns them -> floats (NaN for none), a bool."""
    d = dict(values)
    for k in ("mean", "std0", "std1", "min", "max", "median", "q25", "q75", "maxabs"):
        d[k] = math.nan if d[k] is None else float(d[k])
    d["integral"] = bool(d["integral"]) if d["n"] else False
    return d


def _summarise(frame: pl.DataFrame, cols: list[str]) -> dict[str, dict[str, Any]]:
    """:func:`summarise` of ``cols`` in one select."""
    exprs = []
    schema = frame.schema  # built anew on every access: once, not once per column
    for i, c in enumerate(cols):
        x = pl.col(c).cast(pl.Float64)
        if schema[c].is_float():
            x = x.fill_nan(None)
        exprs += [e.alias(f"{i}|{k}") for k, e in zip(AGGS, _statistics(x))]
    row = frame.select(exprs).row(0, named=True)
    return {c: _summary({k: row[f"{i}|{k}"] for k in AGGS}) for i, c in enumerate(cols)}


def _summarise_long(frame: pl.DataFrame, cols: list[str]) -> dict[str, dict[str, Any]]:
    """:func:`summarise` of ``cols`` by one group-by over their values stacked in long form
    (the same statistics as :func:`_summarise`, so the same values)."""
    c, v = _COLUMN, _VALUE
    long = (frame.select(cols).cast(pl.Float64).unpivot(variable_name=c, value_name=v)
            .with_columns(pl.col(v).fill_nan(None)))
    stats = long.group_by(c, maintain_order=True).agg(
        e.alias(k) for k, e in zip(AGGS, _statistics(pl.col(v))))
    return {row[0]: _summary(dict(zip(AGGS, row[1:]))) for row in stats.iter_rows()}


def _count_near_long(frame: pl.DataFrame, specs: list[tuple[str, str, float, float]]
                     ) -> dict[str, int]:
    """:meth:`Context.count_near` of a short frame: its columns stacked in long form, joined
    with the specs, values within tolerance counted per (column, key), :data:`LONG_CELLS`
    values at a time (the same comparisons, so the same counts)."""
    out = {f"{c}\x00{k}": 0 for c, k, _, _ in specs}
    cols = list(dict.fromkeys(c for c, _, _, _ in specs))
    step = max(1, LONG_CELLS // frame.height)
    for b in range(0, len(cols), step):
        batch = set(cols[b:b + step])
        part = [sp for sp in specs if sp[0] in batch]
        wanted = pl.DataFrame({_COLUMN: [sp[0] for sp in part], "k": [sp[1] for sp in part],
                               "v": [float(sp[2]) for sp in part],
                               "t": [float(sp[3]) for sp in part]},
                              schema={_COLUMN: pl.String, "k": pl.String, "v": pl.Float64,
                                      "t": pl.Float64})
        long = (frame.select(cols[b:b + step]).cast(pl.Float64)
                .unpivot(variable_name=_COLUMN, value_name=_VALUE)
                .with_columns(pl.col(_VALUE).fill_nan(None)))
        counts = long.join(wanted, on=_COLUMN).group_by(_COLUMN, "k").agg(
            ((pl.col(_VALUE) - pl.col("v")).abs() <= pl.col("t")).sum().alias("n"))
        out.update({f"{c}\x00{k}": int(n) for c, k, n in counts.iter_rows()})
    return out


def one_chunk(frame: pl.DataFrame) -> pl.DataFrame:
    """Quantiles on a many-chunk frame rechunk per expression: do it once."""
    return frame.rechunk() if frame.n_chunks() > 1 else frame


def finite(s: dict[str, Any]) -> bool:
    return all(math.isfinite(s[k]) for k in ("mean", "std0", "min", "max", "maxabs"))


def sd_of(s: dict[str, Any]) -> float:
    return s["std1"] if math.isfinite(s["std1"]) else s["std0"]


def closest_to_one(s: dict[str, Any]) -> float:
    return min((s["std0"], s["std1"]), key=lambda v: abs(v - 1) if math.isfinite(v) else 9e9)


def fmt_g(x: float) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return str(x)
    if x == 0:
        return "0"
    return f"{x:.4g}" if 1e-3 <= abs(x) < 1e6 else f"{x:.3g}"


def fill_candidates(values: np.ndarray, v: float, tol: float = 0.0) -> dict[str, float]:
    """What a mean or median imputer fitted on ``values`` would have filled: the mean and median
    of the values other than ``v`` (farther than ``tol``), and the median with one copy of ``v``
    kept (an observed value that was itself the median of an odd count)."""
    others = values[np.abs(values - v) > tol]
    if others.size == 0:
        return {}
    return {"mean": float(others.mean()), "median": float(np.median(others)),
            "median_with_one_copy": float(np.median(np.append(others, v)))}


def on_grid(x: Any, decimals: int) -> np.ndarray:
    """Whether each value of ``x`` is a multiple of 10^-decimals, to float precision (64 ulps
    of the scaled value: 58.765229 * 10^6 is 58765229 up to rounding, 794141628.51 is not
    an integer)."""
    y = np.asarray(x, dtype=np.float64) * 10.0 ** decimals
    return np.abs(y - np.round(y)) <= 64 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(y))


def decimal_grid(x: np.ndarray, max_decimals: int = 6) -> int | None:
    """The fewest decimals ``d <= max_decimals`` such that every value of ``x`` is a multiple of
    10^-d (counts: 0, prices: 2, values typed or rounded by people or upstream code), or None
    for full-precision values (measurements, computed features)."""
    if x.size == 0:
        return None
    for d in range(max_decimals + 1):
        if bool(on_grid(x, d).all()):
            return d
    return None


def row_structure(ctx: Context, group: list[str], union: dict[str, dict[str, Any]]
                   ) -> str | None:
    if any(union[g]["negative"] > 0 or union[g]["n"] == 0 for g in group):
        return None
    binary = all(union[g]["integral"] and union[g]["max"] <= 1 for g in group)
    ok_one_hot, ok_l2, any_one = binary, True, False
    for sums in ctx.row_sums(group):
        if sums["null"]:
            return None
        if ok_one_hot:
            ok_one_hot = sums["one_hot"]
        ok_l2 = ok_l2 and sums["l2"]
        any_one = any_one or sums["unit"]
    if ok_one_hot:
        return "one_hot"
    if ok_l2 and any_one and not binary:
        return "l2"
    return None


def label_values(data: AuditData, split: str) -> pl.Series | None:
    """The label as floats (binary non-numeric labels: 1 for the larger value)."""
    y = data.splits[split][data.label]  # type: ignore[index]
    if y.dtype.is_numeric() or y.dtype == pl.Boolean:
        out = y.cast(pl.Float64)
        return out.fill_nan(None) if y.dtype.is_float() else out
    if data.label_kind != LabelKind.BINARY:
        return None
    label = str(data.label)
    values = sorted(pl.concat([data.splits[n][label].drop_nulls().cast(pl.String)
                               for n in data.split_names]).unique().to_list())
    if not values:  # no labelled row in any split
        return None
    return (y.cast(pl.String) == values[-1]).cast(pl.Float64)


def encoded_level_keys(data: AuditData, cols: list[str], keys: list[str], names: list[str]
                ) -> dict[str, str | None]:
    """For each column of ``cols``, the first raw column of ``keys`` (not itself) of which it
    is a function in the later splits: every level of the key holding a value (not null, not
    NaN) of the column carries one value, over at least two levels. Keys with one level, or
    nearly one row per level (an undeclared id), are not used. One group_by per key, over all
    columns at once."""
    out: dict[str, str | None] = {c: None for c in cols}
    if not cols or not keys:
        return out
    later = pl.concat([data.splits[n].select(list(dict.fromkeys([*keys, *cols])))
                       for n in names[1:]]).with_columns(pl.col(cols).fill_nan(None))
    levels = later.select(pl.col(k).n_unique() for k in keys).row(0)
    values = dict(zip(cols, later.select(pl.col(c).drop_nulls().n_unique() for c in cols).row(0)))
    for k, n_levels in zip(keys, levels):
        if not 2 <= n_levels <= later.height // 2:
            continue
        # a function of k takes at most one value per level of k
        todo = [c for c in cols if out[c] is None and c != k and values[c] <= n_levels]
        if not todo:
            continue
        # distinct non-null values per level, for every column at once (one expression)
        per = later.select(k, *todo).group_by(k).agg(pl.exclude(k).drop_nulls().n_unique())
        groups = per.select((pl.exclude(k) >= 1).sum()).row(0)  # levels holding a value
        most = per.select(pl.exclude(k).max()).row(0)
        for c, g, u in zip(todo, groups, most):
            if g >= 2 and u == 1:
                out[c] = k
    return out


def encoding_fits(data: AuditData, c: str, key: str, ys: dict[str, pl.Series],
                   names: list[str], fit_sets: list[list[str]]) -> dict[str, Any] | None:
    """Weighted RMSE of ``v = (n ybar + m p)/(n + m)`` per level, for train and every fit set."""
    def frame(n: str) -> pl.DataFrame:
        f = data.splits[n]
        return pl.DataFrame({"k": f[key], "v": f[c].cast(pl.Float64).fill_nan(None),
                             "y": ys[n]})

    later = pl.concat([frame(n) for n in names[1:]]).drop_nulls("v")
    mapping = later.group_by("k").agg(pl.col("v").first(), pl.len().alias("w"))
    out: dict[str, Any] = {}
    train_levels = frame(names[0]).drop_nulls("y").group_by("k").agg(pl.len().alias("nt"))
    mapping = mapping.join(train_levels, on="k", how="inner")
    if mapping.height < 2:
        return None
    for fs in [[names[0]], *fit_sets]:
        rows = pl.concat([frame(n) for n in fs]).drop_nulls("y")
        p = float(rows["y"].mean())
        lv = rows.group_by("k").agg(pl.len().alias("n"), pl.col("y").mean().alias("ybar"))
        out["+".join(fs)] = level_fit(mapping, lv, p, rows.height)
    return out


def level_fit(mapping: pl.DataFrame, lv: pl.DataFrame, p: float, rows: int) -> dict[str, Any]:
    """One fit set's encoding fit from per-level aggregates: ``mapping`` (k: level, v: the
    encoded value, w: its later rows) and ``lv`` (k, n: labelled rows, ybar: their mean label)
    over the fit set, ``p`` its mean label over ``rows`` labelled rows."""
    j = mapping.join(lv, on="k", how="inner").sort("w", "k", descending=[True, False],
                                                  nulls_last=True)
    n, ybar, v, w = (j[x].to_numpy().astype(float) for x in ("n", "ybar", "v", "w"))
    rmse, m = best_smoothing(n, ybar, v, w, p)
    return {"rmse": rmse, "m": m, "levels": j.height, "rows": rows,
            "examples": [{"level": short(k), "value": vv, "label_mean": yb, "rows": int(nn)}
                         for k, vv, yb, nn in zip(j["k"].head(20).to_list(), v[:20], ybar[:20],
                                                  n[:20])]}


def best_smoothing(n: np.ndarray, ybar: np.ndarray, v: np.ndarray, w: np.ndarray,
                    p: float) -> tuple[float, float]:
    """Smallest weighted RMSE of ``v - (n ybar + m p)/(n + m)`` over m in {0, m_hat}, where
    m_hat is the weighted median of the per-level implied ``m = n (ybar - v)/(v - p)``."""
    def rmse(m: float) -> float:
        fitted = (n * ybar + m * p) / (n + m)
        return float(math.sqrt(np.sum(w * (v - fitted) ** 2) / np.sum(w)))

    best = (rmse(0.0), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        implied = n * (ybar - v) / (v - p)
    ok = np.isfinite(implied) & (implied >= 0)
    if ok.any():
        order = np.argsort(implied[ok])
        cw = np.cumsum(w[ok][order])
        m_hat = float(implied[ok][order][np.searchsorted(cw, cw[-1] / 2)])
        r = rmse(m_hat)
        if r < best[0]:
            best = (r, m_hat)
    return best


def short(v: Any, n: int = 40) -> Any:
    return clip_text(v, n) if isinstance(v, str) else v


# summaries combined, quantiles by rank (an engine that summarises each split once)

def linear_quantile(n: int, q: float) -> tuple[int, int, float]:
    """Ranks ``(k0, k1)`` and weight of numpy's / polars' linear quantile ``q`` of ``n``."""
    h = (n - 1) * q
    k0 = int(math.floor(h))
    return k0, min(k0 + 1, n - 1), h - k0


def interpolate_quantile(a: float, b: float, w: float, median: bool) -> float:
    """The quantile between order statistics ``a`` <= ``b`` at weight ``w``: linear, or for a
    median polars' midpoint of the two middle values."""
    if median:
        return (a + b) / 2 if w else a
    return a + w * (b - a)


def combine_summaries(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """A union's :func:`summarise` keys (n, mean, std0, std1, min, max, maxabs, integral,
    nonzero, negative) from its splits' summaries (n, mean, var0 the population variance,
    min, max, maxabs, integral, nonzero, negative), not from the rows: counts, extremes and
    flags combine directly; the mean is the count-weighted mean; M2 = sum over parts of
    n_i var0_i + n_i (mean_i - mean)^2 (Chan's parallel formula), std0 = sqrt(M2 / n),
    std1 = sqrt(M2 / (n - 1)). Quantiles do not combine (the engine measures them)."""
    live = [p for p in parts if p["n"]]
    n = sum(p["n"] for p in live)
    s: dict[str, Any] = {"n": n}
    if not n:
        return s | {k: math.nan for k in ("mean", "std0", "std1", "min", "max", "maxabs")} | {
            "integral": False, "nonzero": 0, "negative": 0}
    if len(live) == 1:
        mean = live[0]["mean"]
        m2 = live[0]["var0"] * n
    else:
        mean = sum(p["n"] * p["mean"] for p in live) / n
        m2 = sum(p["var0"] * p["n"] + p["n"] * (p["mean"] - mean) ** 2 for p in live)
    s["mean"] = mean
    s["std0"] = math.sqrt(m2 / n) if math.isfinite(m2) and m2 >= 0 else math.nan
    s["std1"] = math.sqrt(m2 / (n - 1)) if n > 1 and math.isfinite(m2) and m2 >= 0 \
        else math.nan
    s["min"] = min(p["min"] for p in live)
    s["max"] = max(p["max"] for p in live)
    s["maxabs"] = max(p["maxabs"] for p in live)
    s["integral"] = all(p["integral"] for p in live)
    s["nonzero"] = sum(p["nonzero"] for p in live)
    s["negative"] = sum(p["negative"] for p in live)
    return s


def robust_possible(b: list[float]) -> bool:
    """Whether quartile brackets ``[q25 lo, q25, q25 hi, median lo, median, median hi, q75 lo,
    q75, q75 hi]`` admit an exact median 0 and IQR 1 (with room for float tolerances)."""
    slack = 1e-6
    if not b[3] - slack <= 0.0 <= b[5] + slack:
        return False
    return b[6] - b[2] - slack <= 1.0 <= b[8] - b[0] + slack
