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


def on_grid(x: Any, decimals: int) -> np.ndarray:
    """Whether each value of ``x`` is a multiple of 10^-decimals, to float precision (64 ulps
    of the scaled value: 58.765229 * 10^6 is 58765229 up to rounding, 794141628.51 is not
    an integer)."""
    y = np.asarray(x, dtype=np.float64) * 10.0 ** decimals
    return np.abs(y - np.round(y)) <= 64 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(y))


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


# quantiles by rank (exact order statistics read by rank)

def linear_quantile(n: int, q: float) -> tuple[int, int, float]:
    """Ranks ``(k0, k1)`` and weight of numpy's / polars' linear quantile ``q`` of ``n``."""
    h = (n - 1) * q
    k0 = int(math.floor(h))
    return k0, min(k0 + 1, n - 1), h - k0


def interpolate_quantile(a: float, b: float, w: float, median: bool) -> float:
    """The quantile between order statistics ``a`` <= ``b`` at weight ``w``: linear, or for a
    median the midpoint of the two middle values, (a + b) / 2 (numpy's; polars computes
    a + (b - a) / 2, at most an ulp away)."""
    if median:
        return (a + b) / 2 if w else a
    return a + w * (b - a)


def robust_possible(b: list[float], slack: float = 1e-6) -> bool:
    """Whether quartile brackets ``[q25 lo, q25, q25 hi, median lo, median, median hi, q75 lo,
    q75, q75 hi]`` admit a median 0 and an IQR 1 within ``slack`` (the judge's tolerance)."""
    if not b[3] - slack <= 0.0 <= b[5] + slack:
        return False
    return b[6] - b[2] - slack <= 1.0 <= b[8] - b[0] + slack
