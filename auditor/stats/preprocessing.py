"""The statistics behind ``leakage.preprocessing``'s fingerprints (the check and its
documentation are in :mod:`auditor.detectors.preprocessing`): per-column summaries of
each split and of the unions a preprocessing step could have been fitted on, fill-value
candidates, row structure, and target-encoding fits."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from auditor.loading.data import AuditData, LabelKind
from auditor.stats.numerics import clip_text


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


AGGS = ("n", "mean", "std0", "std1", "min", "max", "median", "q25", "q75", "maxabs",
         "integral", "nonzero", "negative", "n_at_min", "n_at_max")


def summarise(frame: pl.DataFrame, cols: list[str]) -> dict[str, dict[str, Any]]:
    """Per-column statistics in one polars select; nulls and NaN are ignored.

    Keys: n (non-null count), mean, std0/std1 (ddof 0/1), min, max, median, q25/q75 (linear
    interpolation, as numpy's default), maxabs, integral (every value a whole number),
    nonzero, negative, n_at_min and n_at_max (counts).
    """
    exprs = []
    schema = frame.schema  # built anew on every access: once, not once per column
    for i, c in enumerate(cols):
        dtype = schema[c]
        x = pl.col(c).cast(pl.Float64)
        if dtype.is_float():
            x = x.fill_nan(None)
        exprs += [x.count().alias(f"{i}|n"), x.mean().alias(f"{i}|mean"),
                  x.std(ddof=0).alias(f"{i}|std0"), x.std(ddof=1).alias(f"{i}|std1"),
                  x.min().alias(f"{i}|min"), x.max().alias(f"{i}|max"),
                  x.median().alias(f"{i}|median"),
                  x.quantile(0.25, interpolation="linear").alias(f"{i}|q25"),
                  x.quantile(0.75, interpolation="linear").alias(f"{i}|q75"),
                  x.abs().max().alias(f"{i}|maxabs"),
                  (x == x.round(0)).all().alias(f"{i}|integral"),
                  (x != 0).sum().alias(f"{i}|nonzero"), (x < 0).sum().alias(f"{i}|negative"),
                  (x == x.min()).sum().alias(f"{i}|n_at_min"),
                  (x == x.max()).sum().alias(f"{i}|n_at_max")]
    row = frame.select(exprs).row(0, named=True)
    out: dict[str, dict[str, Any]] = {}
    for i, c in enumerate(cols):
        d = {k: row[f"{i}|{k}"] for k in AGGS}
        for k in ("mean", "std0", "std1", "min", "max", "median", "q25", "q75", "maxabs"):
            d[k] = math.nan if d[k] is None else float(d[k])
        d["integral"] = bool(d["integral"]) if d["n"] else False
        out[c] = d
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
    exprs = [pl.col(g).cast(pl.Float64) for g in group]
    ok_one_hot, ok_l2, any_one = binary, True, False
    for frame in ctx.frames.values():
        sums = frame.select(pl.sum_horizontal(exprs).alias("s"),
                            pl.sum_horizontal([e * e for e in exprs]).alias("q"),
                            pl.any_horizontal([e.is_null() for e in exprs]).alias("null"))
        if sums["null"].any():
            return None
        if ok_one_hot:
            ok_one_hot = bool((sums["s"] == 1).all())
        q = sums["q"]
        ok_l2 = ok_l2 and bool((((q - 1).abs() <= 1e-6) | (q == 0)).all())
        any_one = any_one or bool(((q - 1).abs() <= 1e-6).any())
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
        j = mapping.join(lv, on="k", how="inner").sort("w", "k", descending=[True, False],
                                                      nulls_last=True)
        n, ybar, v, w = (j[x].to_numpy().astype(float) for x in ("n", "ybar", "v", "w"))
        rmse, m = best_smoothing(n, ybar, v, w, p)
        out["+".join(fs)] = {
            "rmse": rmse, "m": m, "levels": j.height, "rows": rows.height,
            "examples": [{"level": short(k), "value": vv, "label_mean": yb, "rows": int(nn)}
                         for k, vv, yb, nn in zip(j["k"].head(20).to_list(), v[:20], ybar[:20],
                                                  n[:20])]}
    return out


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

