"""Feature matrices for the model-based checks, fitted on one frame and applied to others.

An :class:`Encoder` is fitted on a reference frame (train, or the union of two splits for
adversarial validation) and turns any frame with the same columns into numpy arrays:

- numeric columns (numbers, booleans as 0/1, dates and datetimes as epoch seconds) standardised
  with the fitted mean and standard deviation (a constant column gets scale 1); NaN, +-inf and
  null are *missing*;
- categorical columns (strings) as integer codes over a fitted vocabulary: the ``max_levels``
  most frequent levels seen at least ``min_count`` times (ties broken by the level's text), then
  one code for every other level (rare or unseen) and one for missing.

``dense`` lays these out for distance- and gradient-based models: standardised numerics with
missing set to 0 (the fitted mean), one 0/1 missing-indicator column per numeric column that had
missing values in the fitted frame, and a one-hot block per categorical column. ``owners`` names
the source column of every dense column, so a model can be retrained without one feature.

Numerics are one polars ``select`` per frame (a few multi-column expressions) and numpy;
categoricals one vectorised Series operation per column.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
import polars as pl

from auditor.core.colnames import helper_name
from auditor.loading.data import AuditData, Kind

NUMERIC_KINDS = (Kind.NUMERIC, Kind.BOOLEAN, Kind.DATETIME)
Z_CLIP = 1e3  # standard deviations


def model_features(data: AuditData) -> tuple[list[str], list[str]]:
    """(numeric, categorical) feature columns for model-based checks: every feature except the
    declared time column (roles are never features), text and nested columns."""
    skip = {data.columns.time} if data.columns.time else set()
    numeric = [c for c in data.features_of(*NUMERIC_KINDS) if c not in skip]
    categorical = [c for c in data.features_of(Kind.CATEGORICAL) if c not in skip]
    return numeric, categorical


def numeric_expr(frame: pl.DataFrame, col: str) -> pl.Expr:
    """``col`` as Float64 with NaN, +-inf and null all null (datetimes as epoch seconds)."""
    return _known(_float_groups(frame, [col])[0]).alias(col)


def _known(expr: pl.Expr) -> pl.Expr:
    """``expr`` with NaN and +-inf made null (names kept, for multi-column expressions)."""
    return pl.when(expr.is_finite()).then(expr).name.keep()


def _float_groups(frame: pl.DataFrame, cols: list[str]) -> list[pl.Expr]:
    """``cols`` as Float64 (datetimes as epoch seconds, durations as seconds) in at most
    three multi-column expressions (plain, datetime, duration) whatever the number of
    columns: polars plans thousands of separate expressions slowly."""
    schema = frame.schema  # built on every access: once here, not once per column
    dates = [c for c in cols if isinstance(schema[c], (pl.Datetime, pl.Date))]
    spans = [c for c in cols if isinstance(schema[c], pl.Duration)]
    special = set(dates) | set(spans)
    plain = [c for c in cols if c not in special]
    exprs = []
    if plain:
        exprs.append(pl.col(plain).cast(pl.Float64))
    if dates:
        exprs.append(pl.col(dates).cast(pl.Datetime("us")).dt.epoch("us").cast(pl.Float64)
                     / 1e6)
    if spans:
        exprs.append(pl.col(spans).dt.total_microseconds().cast(pl.Float64) / 1e6)
    return exprs


def numeric_matrix(frame: pl.DataFrame, cols: Iterable[str]) -> np.ndarray:
    """float64 matrix of ``cols`` (as :func:`numeric_expr`), NaN where missing or non-finite."""
    cols = list(cols)
    if not cols:
        return np.zeros((frame.height, 0))
    out = frame.select(_float_groups(frame, cols)).select(cols).to_numpy().astype(np.float64)
    out[~np.isfinite(out)] = np.nan
    return out


def numeric_moments(frame: pl.DataFrame, cols: Iterable[str]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column of ``cols`` (as :func:`numeric_expr`: missing and non-finite values left
    out): the mean, the population standard deviation and the count of the known values
    (mean and sd 0 for a column with none). Aggregated by polars in place of a matrix copy,
    equal to numpy's two-pass ``mean`` / ``std`` on :func:`numeric_matrix` to rounding."""
    cols = list(cols)
    known = frame.select([_known(e) for e in _float_groups(frame, cols)]).select(cols)

    def agg(expr: pl.Expr) -> np.ndarray:
        row = known.select(expr).row(0) if cols else ()
        return np.array([0.0 if v is None else float(v) for v in row])

    return agg(pl.all().mean()), agg(pl.all().std(ddof=0)), agg(pl.all().count())


@dataclass(frozen=True)
class Encoder:
    """Standardisation and vocabularies fitted on one frame; see the module docstring."""

    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    missing: tuple[str, ...]             # numeric columns with missing values when fitted
    levels: dict[str, tuple[str, ...]]

    @classmethod
    def fit(cls, frame: pl.DataFrame, numeric: Iterable[str], categorical: Iterable[str], *,
            max_levels: int = 20, min_count: int = 1) -> "Encoder":
        numeric, categorical = tuple(numeric), tuple(categorical)
        mean = np.zeros(len(numeric))
        scale = np.ones(len(numeric))
        missing: tuple[str, ...] = ()
        if numeric:
            mean, sd, count = numeric_moments(frame, numeric)
            scale = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
            missing = tuple(c for c, k in zip(numeric, count) if k < frame.height)
        levels = {}
        for c in categorical:  # a loop over columns; each value_counts is vectorised
            n = helper_name("n", [c])  # a user column may be called "len"
            counts = (frame.select(pl.col(c).cast(pl.String)).drop_nulls()
                      .group_by(c).agg(pl.len().alias(n))
                      .filter(pl.col(n) >= min_count)
                      .sort([n, c], descending=[True, False]).head(max_levels))
            levels[c] = tuple(counts[c].to_list())
        return cls(numeric, categorical, mean, scale, missing, levels)

    # -- transforms -------------------------------------------------------------------------
    def numeric_values(self, frame: pl.DataFrame) -> np.ndarray:
        """Standardised numerics, shape (rows, len(numeric)), NaN where missing."""
        if not self.numeric:
            return np.zeros((frame.height, 0))
        with np.errstate(over="ignore", invalid="ignore"):
            return (numeric_matrix(frame, self.numeric) - self.mean) / self.scale

    def codes(self, frame: pl.DataFrame) -> np.ndarray:
        """Categorical codes, shape (rows, len(categorical)): a level's index, then
        ``len(levels)`` for any other level, ``len(levels) + 1`` for missing."""
        if not self.categorical:
            return np.zeros((frame.height, 0), dtype=np.int32)
        out = np.empty((frame.height, len(self.categorical)), dtype=np.int32)
        for j, c in enumerate(self.categorical):  # per column: one vectorised Series op each
            lv = self.levels[c]
            s = frame[c].cast(pl.String)
            code = s.replace_strict(list(lv), list(range(len(lv))), default=len(lv),
                                    return_dtype=pl.Int32)
            out[:, j] = code.to_numpy()
            out[s.is_null().to_numpy(), j] = len(lv) + 1
        return out

    def block_sizes(self) -> list[int]:
        return [len(self.levels[c]) + 2 for c in self.categorical]

    def owners(self) -> list[str]:
        """The source column of each column of :meth:`dense`."""
        out = list(self.numeric) + list(self.missing)
        for c, size in zip(self.categorical, self.block_sizes()):
            out += [c] * size
        return out

    def dense(self, frame: pl.DataFrame, onehot_scale: float = 1.0) -> np.ndarray:
        """float32 matrix: standardised numerics (missing -> 0, clipped to ±Z_CLIP so that a
        value far outside the fitted range stays finite in float32), missing indicators, one-hot
        blocks scaled by ``onehot_scale`` (1/sqrt(2) makes a level mismatch add 1 to a squared
        Euclidean distance, like one standard deviation of a numeric column)."""
        num = self.numeric_values(frame)
        k, n_miss = len(self.numeric), len(self.missing)
        out = np.zeros((frame.height, k + n_miss + sum(self.block_sizes())), dtype=np.float32)
        if n_miss:  # each block written in place (no hstack copy of the whole matrix)
            index = {c: j for j, c in enumerate(self.numeric)}
            out[:, k:k + n_miss] = np.isnan(num[:, [index[c] for c in self.missing]])
        if self.categorical:
            offsets = k + n_miss + np.cumsum([0] + self.block_sizes()[:-1])
            cols = self.codes(frame) + offsets[None, :]
            rows = np.repeat(np.arange(frame.height), len(self.categorical))
            out[rows, cols.ravel()] = onehot_scale
        if k:
            np.nan_to_num(num, copy=False, nan=0.0)
            out[:, :k] = np.clip(num, -Z_CLIP, Z_CLIP, out=num)  # cast to float32 on write
        return out

    def tree_matrix(self, frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(X, categorical mask) for HistGradientBoosting: numerics (NaN missing), then the
        categorical codes as floats with missing as NaN (so the model's native missing-value
        handling applies to both)."""
        num = self.numeric_values(frame)
        codes = self.codes(frame).astype(np.float64)
        for j, c in enumerate(self.categorical):
            codes[codes[:, j] == len(self.levels[c]) + 1, j] = np.nan
        mask = np.array([False] * len(self.numeric) + [True] * len(self.categorical))
        return np.hstack([num, codes]), mask


def sample_rows(n: int, k: int, seed: int) -> np.ndarray:
    """Sorted indices of min(n, k) rows drawn without replacement (all rows when n <= k)."""
    if n <= k:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=k, replace=False))
