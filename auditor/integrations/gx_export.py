"""A Great Expectations suite inferred from one split, for ``auditor export-expectations``: per
column its type, null share, range or quantile ranges and categories, each loosened by a slack so
that a later split drawn from the same distribution passes. Plain polars; GX is imported only to
build and serialise the suite."""
from __future__ import annotations

import math
from typing import Any

import polars as pl

from auditor.integrations.gx import ephemeral_context, import_gx

# ---------------------------------------------------------------------------------------------
# Inferring a suite from one split (export-expectations)
# ---------------------------------------------------------------------------------------------

NUMERIC_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float32", "float64"]  # integers with nulls arrive in pandas as float64
DATETIME_TYPES = ["datetime64[ns]", "datetime64[us]", "datetime64[ms]", "datetime64[s]"]
QUANTILES = [0.05, 0.25, 0.5, 0.75, 0.95]


def infer_suite(df: pl.DataFrame, *, name: str, ids: list[str] = (), fixed: list[str] = (),
                exclude: list[str] = (), null_slack: float = 0.01,
                quantile_slack: float = 0.05, max_categories: int = 50,
                min_eval_rows: int = 1000, source: str = "") -> dict[str, Any]:
    """A GX 1.x suite (JSON dict) describing ``df``, loose enough that another honest sample of
    the same population passes:

    - every column: ``expect_column_to_exist``; a type list for its kind (numbers: every int
      and float dtype, since nulls turn pandas ints into floats; text: ``str``; booleans;
      naive datetimes);
    - null-rate bounds ``p ± w`` around the split's null share p (NaN counts as null), with
      ``w = null_slack + 4 sqrt(p (1 - p) / min_eval_rows)``: four binomial standard errors of
      an evaluation split of ``min_eval_rows`` rows plus a fixed slack. As GX expectations:
      ``expect_column_values_to_not_be_null`` with ``mostly = 1 - p - w`` and, when
      ``p - w > 0``, ``expect_column_values_to_be_null`` with ``mostly = p - w``;
    - text, categorical and boolean columns with at most ``max_categories`` distinct values,
      and numeric columns with at most two: ``expect_column_values_to_be_in_set`` (the values
      seen);
    - other numeric columns: ``expect_column_quantile_values_to_be_between`` at the 5/25/50/
      75/95% quantiles, quantile q allowed between the split's quantiles at ``q - d`` and
      ``q + d`` with ``d = max(quantile_slack, 4 sqrt(q (1 - q) / min_eval_rows))`` (a
      distribution-free band: the empirical q-quantile of n rows sits at probability
      q ± sqrt(q (1 - q) / n); a shift a drift test calls large moves it further);
    - ``ids`` (declared identifiers): unique when they are unique here, no distribution;
    - ``fixed`` (group and time columns, free text): type and nulls only, since entities and
      time move between splits by design; ``exclude``: nothing.
    """
    gx = import_gx()
    ephemeral_context(gx)  # GX 1.x builds suites only with an active context
    E = gx.expectations
    suite = gx.ExpectationSuite(name=name, meta={"auditor": {
        "inferred_from": source or name, "rows": df.height, "null_slack": null_slack,
        "quantile_slack": quantile_slack, "max_categories": max_categories,
        "min_eval_rows": min_eval_rows}})
    n = df.height
    stats = _column_stats(df)
    for col, dtype in df.schema.items():
        if col in exclude:
            continue
        meta = {"auditor_rule": "schema"}
        suite.add_expectation(E.ExpectColumnToExist(column=col, meta=meta))
        types = _type_list(dtype)
        if types:
            suite.add_expectation(E.ExpectColumnValuesToBeInTypeList(
                column=col, type_list=types, meta=meta))
        nulls = stats[col]["nulls"] / n if n else 0.0
        width = null_slack + 4.0 * math.sqrt(nulls * (1.0 - nulls) / min_eval_rows)
        hi = min(1.0, nulls + width)
        suite.add_expectation(E.ExpectColumnValuesToNotBeNull(
            column=col, mostly=_round_down(1.0 - hi), meta={"auditor_rule": "null_rate",
                                                              "train_null_share": nulls}))
        if nulls - width > 0:
            suite.add_expectation(E.ExpectColumnValuesToBeNull(
                column=col, mostly=_round_down(nulls - width),
                meta={"auditor_rule": "null_rate", "train_null_share": nulls}))
        if col in ids:
            if stats[col]["distinct"] == n - stats[col]["nulls"]:
                suite.add_expectation(E.ExpectColumnValuesToBeUnique(
                    column=col, meta={"auditor_rule": "id"}))
            continue
        if col in fixed or n == stats[col]["nulls"]:
            continue
        values = df[col]
        is_text = dtype in (pl.String, pl.Categorical) or isinstance(dtype, (pl.Categorical,
                                                                               pl.Enum))
        is_number = dtype.is_numeric() and dtype != pl.Boolean
        if (is_text or dtype == pl.Boolean) and stats[col]["distinct"] <= max_categories or \
                is_number and stats[col]["distinct"] <= 2 and not _has_infinity(values):
            seen = values.drop_nulls()
            if seen.dtype.is_float():
                seen = seen.drop_nans()
            value_set = sorted(_plain(v) for v in seen.unique().to_list())
            suite.add_expectation(E.ExpectColumnValuesToBeInSet(
                column=col, value_set=value_set, meta={"auditor_rule": "category_set"}))
        elif is_number:
            ranges = _quantile_ranges(values, quantile_slack, min_eval_rows)
            if ranges is not None:
                suite.add_expectation(E.ExpectColumnQuantileValuesToBeBetween(
                    column=col, quantile_ranges=ranges,
                    meta={"auditor_rule": "quantile_range", "quantile_slack": quantile_slack}))
    return suite.to_json_dict()


def _has_infinity(values: pl.Series) -> bool:
    """True when a float column holds +-inf (a value set cannot list it in JSON)."""
    return values.dtype.is_float() and bool(values.is_infinite().any())


def _column_stats(df: pl.DataFrame) -> dict[str, dict[str, int]]:
    """Null (and NaN) count and distinct non-null count of every column, in one query."""
    exprs = []
    for col, dtype in df.schema.items():
        missing = pl.col(col).is_null()
        if dtype.is_float():
            missing = missing | pl.col(col).is_nan()
        exprs.append(missing.sum().alias(f"n:{col}"))
        if not isinstance(dtype, (pl.List, pl.Array, pl.Struct, pl.Object)):
            exprs.append(pl.col(col).drop_nulls().n_unique().alias(f"d:{col}"))
    row = df.select(exprs).row(0, named=True) if exprs else {}
    return {c: {"nulls": int(row[f"n:{c}"]), "distinct": int(row.get(f"d:{c}", 10**12))}
            for c in df.columns}


def _type_list(dtype: pl.DataType) -> list[str] | None:
    if dtype == pl.Boolean:
        return ["bool", "boolean"]
    if dtype.is_numeric():
        return list(NUMERIC_TYPES)
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, (pl.Categorical, pl.Enum)):
        return ["str"]
    if isinstance(dtype, pl.Date) or (isinstance(dtype, pl.Datetime) and not dtype.time_zone):
        return list(DATETIME_TYPES)
    return None  # time-zone-aware datetimes, nested and binary: GX has no stable type name


def _quantile_ranges(values: pl.Series, slack: float, min_eval_rows: int
                     ) -> dict[str, Any] | None:
    s = values.drop_nulls()
    if s.dtype.is_float():
        s = s.drop_nans()
    if s.len() == 0:
        return None
    s = s.cast(pl.Float64)
    ranges = []
    for q in QUANTILES:
        d = max(slack, 4.0 * math.sqrt(q * (1.0 - q) / min_eval_rows))
        lo = s.quantile(max(0.0, q - d), interpolation="lower")
        hi = s.quantile(min(1.0, q + d), interpolation="higher")
        ranges.append([_bound(lo), _bound(hi)])
    return {"quantiles": list(QUANTILES), "value_ranges": ranges}


def _plain(v: Any) -> Any:
    """A JSON-friendly Python value (ints stay ints, whole floats from ints stay exact)."""
    if isinstance(v, float) and math.isfinite(v) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    return v


def _bound(v: Any) -> Any:
    """A quantile band's end; an infinite one (the split holds +-inf) is GX's None: unbounded
    (a suite is JSON, which has no infinity)."""
    return None if isinstance(v, float) and not math.isfinite(v) else _plain(v)


def _round_down(x: float, digits: int = 6) -> float:
    """``x`` rounded down to ``digits`` decimals, clipped to [0, 1] (a ``mostly``)."""
    return min(1.0, max(0.0, math.floor(x * 10**digits) / 10**digits))
