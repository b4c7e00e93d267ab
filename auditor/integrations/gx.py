"""Great Expectations: a user's expectation suite run on every split, and a suite inferred
from one split (``auditor export-expectations``, in :mod:`auditor.integrations.gx_export`).

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
import os
from pathlib import Path
from typing import Any

import polars as pl

from auditor.errors import InputError

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

    def __init__(self, suite: dict[str, Any], *, spark: bool = False) -> None:
        gx = import_gx()
        self.context = ephemeral_context(gx)
        self.spark = spark  # validate Spark DataFrames with GX's Spark execution engine
        self.source = (self.context.data_sources.add_spark("auditor") if spark
                       else self.context.data_sources.add_pandas("auditor"))
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
        if not self.spark:
            df = to_pandas_for_gx(df, self.columns)
        elif self.columns is not None:  # a Spark DataFrame: the named columns present
            df = df.select(*[f"`{c}`" for c in self.columns if c in df.columns])
        batch = batch_def.get_batch(batch_parameters={"dataframe": df})
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
