"""Great Expectations: a user's expectation suite run on every split, and a suite inferred
from one split (``auditor export-expectations``).

The suite is a GX 1.x expectation-suite JSON (``ExpectationSuite.to_json_dict()``; suites saved
by GX 0.x, with ``expectation_suite_name`` / ``expectation_type``, are read too), named in
audit.yaml as ``expectations: suite.json`` (relative to the YAML). Each split is validated by GX
itself: an ephemeral context (nothing written, analytics off), a pandas data source, one
whole-dataframe batch per split. Splits reach GX as pandas frames converted from polars once per
split, holding only the columns the suite names (the whole frame when an expectation is
table-level); text columns are handed over as ``object`` columns, as pandas 2 reads them, so
type expectations written against pandas behave the same under pandas 3.

``great_expectations`` (the ``gx`` extra) is imported only inside the functions that use it: it
takes ~2 s to import. Reading and checking the JSON needs no GX.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import polars as pl

from auditor.errors import ConfigError, InputError

INSTALL_HINT = "install the gx extra: pip install 'auditor[gx]' (great-expectations 1.x)"
_COLUMN_KEYS = ("column", "column_A", "column_B", "column_list")


# ---------------------------------------------------------------------------------------------
# Reading a suite file (no GX import)
# ---------------------------------------------------------------------------------------------

def read_suite(path: Path) -> dict[str, Any]:
    """The suite JSON at ``path`` as ``{"name", "path", "expectations": [{type, kwargs, meta,
    severity}]}``; anything else is an InputError naming the file and what was expected."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        first = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
        raise InputError(f"expectations: {path}: not a readable expectation suite JSON: "
                         f"{first}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("expectations"), list):
        raise InputError(f"{path}: expected a Great Expectations suite: a JSON object with an "
                         "\"expectations\" list (ExpectationSuite.to_json_dict())")
    out = []
    for i, e in enumerate(raw["expectations"]):
        kind = e.get("type") or e.get("expectation_type") if isinstance(e, dict) else None
        kwargs = e.get("kwargs", {}) if isinstance(e, dict) else None
        if not isinstance(kind, str) or not isinstance(kwargs, dict):
            raise InputError(f"{path}: expectations[{i}]: expected an object with \"type\" "
                             "(a GX expectation name) and \"kwargs\" (an object)")
        item: dict[str, Any] = {"type": kind, "kwargs": kwargs, "meta": e.get("meta") or {}}
        if e.get("severity"):
            item["severity"] = str(e["severity"])
        out.append(item)
    name = raw.get("name") or raw.get("expectation_suite_name") or Path(path).stem
    _check_buildable(path, out)
    return {"name": str(name), "path": str(path), "expectations": out}


def _check_buildable(path: Path, expectations: list[dict[str, Any]]) -> None:
    """An expectation GX cannot build (unknown type, bad kwargs, bad severity) is a mistake in
    the suite, not in the data: an InputError (exit 2) naming it, before any check runs. Without
    GX installed nothing is checked (schema.expectations is then skipped)."""
    try:
        gx = import_gx()
    except ImportError:
        return
    from great_expectations.expectations.expectation_configuration import \
        ExpectationConfiguration

    for i, e in enumerate(expectations):
        try:
            ExpectationConfiguration(**_gx_dict(e)).to_domain_obj()
        except Exception as err:
            reason = (f"not an expectation of great_expectations {gx.__version__}"
                      if type(err).__name__ == "ExpectationNotFoundError" else _one_line(err))
            raise InputError(f"expectations: {path}: expectations[{i}] {e['type']}: "
                             f"{reason}") from None


def columns_named(expectations: list[dict[str, Any]]) -> list[str] | None:
    """The columns the expectations refer to, or None when one is table-level (it needs every
    column)."""
    cols: list[str] = []
    for e in expectations:
        kw = e["kwargs"]
        named = [kw[k] for k in _COLUMN_KEYS if k in kw]
        if not named:
            return None
        for v in named:
            for c in (v if isinstance(v, list) else [v]):
                if isinstance(c, str) and c not in cols:
                    cols.append(c)
    return cols


# ---------------------------------------------------------------------------------------------
# Running a suite with GX
# ---------------------------------------------------------------------------------------------

def import_gx() -> Any:
    """``great_expectations``, with analytics off; ImportError carries the install hint.

    GX imports ``pyspark.sql.connect`` when pyspark is installed (the ``spark`` extra), which
    calls ``sys.exit(0)`` when ``__main__`` has neither ``__spec__`` nor ``__file__`` (it takes
    that for a doctest run): ``python -c "...auditor.audit(expectations=...)"`` would end with
    exit 0 before any check. ``__main__`` gets a ``__file__`` for the time of the import; the
    FutureWarning pyspark prints about pandas 3 is silenced with it."""
    import sys
    import warnings

    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    main = sys.modules.get("__main__")
    disguised = main is not None and getattr(main, "__spec__", None) is None \
        and not hasattr(main, "__file__")
    if disguised:
        main.__file__ = "<string>"
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=FutureWarning, module=r"pyspark\.")
            import great_expectations as gx
    except ImportError as err:
        raise ImportError(f"great_expectations is not installed ({err}); {INSTALL_HINT}") \
            from None
    finally:
        if disguised:
            del main.__file__
    return gx


def to_pandas_for_gx(df: pl.DataFrame, columns: list[str] | None) -> Any:
    """The split as GX's pandas engine sees it: the named columns present, text as object."""
    frame = df.select([c for c in columns if c in df.columns]) if columns is not None else df
    pdf = frame.to_pandas()
    for name, dtype in frame.schema.items():
        if dtype in (pl.String, pl.Categorical) or isinstance(dtype, (pl.Categorical, pl.Enum)):
            pdf[name] = pdf[name].astype(object)
    return pdf


class SuiteRunner:
    """One ephemeral GX context; ``validate(name, df)`` runs the suite on one split and returns
    GX's per-expectation results as JSON dicts (``ExpectationSuiteValidationResult``).

    Expectations that GX cannot build (unknown type, bad kwargs) are kept aside in
    ``unbuildable`` as (expectation, reason) and reported by the check instead of aborting."""

    def __init__(self, suite: dict[str, Any]) -> None:
        gx = import_gx()
        self.context = ephemeral_context(gx)
        self.source = self.context.data_sources.add_pandas("auditor")
        from great_expectations.expectations.expectation_configuration import \
            ExpectationConfiguration

        self.unbuildable: list[tuple[dict[str, Any], str]] = []
        built, kept = [], []
        for e in suite["expectations"]:
            try:
                built.append(ExpectationConfiguration(**_gx_dict(e)).to_domain_obj())
            except Exception as err:  # unknown name, bad kwargs: GX's own message
                self.unbuildable.append((e, _one_line(err)))
            else:
                kept.append(e)
        self.suite = gx.ExpectationSuite(name=suite["name"], expectations=built)
        self.columns = columns_named(kept)

    def validate(self, split: str, df: pl.DataFrame) -> list[dict[str, Any]]:
        if not self.suite.expectations:
            return []
        asset = self.source.add_dataframe_asset(name=f"split-{split}")
        batch_def = asset.add_batch_definition_whole_dataframe("whole")
        batch = batch_def.get_batch(batch_parameters={
            "dataframe": to_pandas_for_gx(df, self.columns)})
        result = batch.validate(self.suite, result_format="SUMMARY")
        return json.loads(json.dumps(result.to_json_dict()["results"], default=_json_default))


def _json_default(v: Any) -> Any:
    """numpy scalars (GX returns ``numpy.bool_`` successes) as Python values, else str."""
    item = getattr(v, "item", None)
    if callable(item):
        try:
            return item()
        except (TypeError, ValueError):
            pass
    return str(v)


def ephemeral_context(gx: Any) -> Any:
    """A GX context that writes nothing, sends no analytics and draws no progress bars."""
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    try:
        context.enable_analytics(False)
    except Exception:  # older 1.x: the environment variable set by import_gx is enough
        pass
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context


def _gx_dict(e: dict[str, Any]) -> dict[str, Any]:
    out = {"type": e["type"], "kwargs": e["kwargs"], "meta": e.get("meta") or {}}
    if e.get("severity"):
        out["severity"] = e["severity"]
    return out


def _one_line(err: BaseException, limit: int = 300) -> str:
    """A multi-line library message as one line (pydantic lists one error per line)."""
    text = "; ".join(line.strip() for line in str(err).splitlines() if line.strip())
    return (text or type(err).__name__)[:limit]


def exception_of(result: dict[str, Any]) -> str | None:
    """The exception message GX recorded for one result (its shape varies by GX version)."""
    info = result.get("exception_info") or {}
    entries = [info] if "raised_exception" in info else list(info.values())
    for entry in entries:
        if isinstance(entry, dict) and entry.get("raised_exception"):
            msg = entry.get("exception_message") or "exception"
            return str(msg).strip().splitlines()[0][:300] if str(msg).strip() else "exception"
    return None


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


def export_command(args: Any) -> int:
    """``auditor export-expectations``: infer a suite from one split and write it (JSON)."""
    from auditor.core.config import load_config
    from auditor.loading.data import read_table

    if args.config and args.train:
        raise ConfigError("give either an audit.yaml (with --from SPLIT) or --train PATH")
    for flag, value, ok, what in (
            ("--null-slack", args.null_slack, 0 <= args.null_slack <= 1, "a share in [0, 1]"),
            ("--quantile-slack", args.quantile_slack, 0 <= args.quantile_slack <= 0.5,
             "a probability in [0, 0.5]"),
            ("--max-categories", args.max_categories, args.max_categories >= 0,
             "an integer >= 0"),
            ("--min-eval-rows", args.min_eval_rows, args.min_eval_rows >= 1, "an integer >= 1")):
        if not ok:
            raise ConfigError(f"export-expectations {flag} must be {what}; got {value!r}")
    ids, fixed, exclude = list(args.id), list(args.group) + ([args.time] if args.time else []), \
        list(args.exclude)
    if args.config:
        cfg = load_config(args.config)
        split = args.from_split or next(iter(cfg.datasets))
        if split not in cfg.datasets:
            raise ConfigError(f"--from {split!r}: not a split of {args.config} (splits: "
                              f"{', '.join(cfg.datasets)})")
        path = Path(cfg.datasets[split])
        cols = cfg.columns
        ids += list(cols.ids)
        fixed += list(cols.groups) + list(cols.text) + ([cols.time] if cols.time else [])
        exclude += list(cols.exclude)
        if cfg.tokens is not None:
            fixed += cfg.tokens.columns()
    elif args.train:
        split, path = args.from_split or "train", Path(args.train)
    else:
        raise ConfigError("give an audit.yaml (export-expectations audit.yaml --from train) "
                          "or --train PATH")
    df = read_table(path)
    try:
        doc = infer_suite(df, name=args.name or f"auditor-{split}", ids=ids, fixed=fixed,
                          exclude=exclude, null_slack=args.null_slack,
                          quantile_slack=args.quantile_slack,
                          max_categories=args.max_categories,
                          min_eval_rows=args.min_eval_rows, source=str(path))
    except ImportError as err:
        raise ConfigError(str(err)) from None
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if args.out:
        from auditor.report.output import output_errors, refuse_overwriting_inputs, write_atomic

        refuse_overwriting_inputs([Path(args.out)],  # never the split or the audit.yaml
                                  [path] + ([Path(args.config)] if args.config else []))
        with output_errors(args.out):
            write_atomic(Path(args.out), text)
        n = len(doc["expectations"])
        print(f"{n:,} expectations inferred from {split} ({df.height:,} rows) written to "
              f"{args.out}", flush=True)
    else:
        print(text, end="")
    return 0
