"""The numerics behind ``leakage.preprocessing``'s fingerprints (the check and its
documentation are in :mod:`auditor.detectors.preprocessing`, its measuring in
:mod:`auditor.detectors.preprocessing_context`): summaries of a union combined from its splits',
quantiles by rank, fill-value candidates, decimal grids and target-encoding fits."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from auditor.stats.numerics import clip_text

EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)


def finite(s: dict[str, Any]) -> bool:
    return all(math.isfinite(s[k]) for k in ("mean", "std0", "min", "max", "maxabs"))


def sd_of(s: dict[str, Any]) -> float:
    return float(s["std1"] if math.isfinite(s["std1"]) else s["std0"])


def closest_to_one(s: dict[str, Any]) -> float:
    return float(min((s["std0"], s["std1"]),
                     key=lambda v: abs(v - 1) if math.isfinite(v) else 9e9))


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
