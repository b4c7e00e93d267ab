"""schema.consistency: missing and incompatible columns are findings; clean splits pass."""
from __future__ import annotations

import polars as pl

from auditor.config import Columns
from auditor.data import build_audit_data
from auditor.detectors.schema import SchemaConsistency
from auditor.report import Severity
from tests.conftest import clean_frame


def test_clean_splits_give_one_info_finding_listing_roles():
    data = build_audit_data({"train": clean_frame(50, 1), "test": clean_frame(20, 2, 100)},
                            columns=Columns(label="y", ids=["row_id"]))
    (f,) = SchemaConsistency().run(data)
    assert f.severity == Severity.INFO and f.value == 3.0
    roles = {r["column"]: r["role"] for r in f.evidence["roles"]}
    assert roles == {"row_id": "id", "x1": "feature", "x2": "feature", "cat": "feature",
                     "y": "label"}


def test_missing_and_incompatible_columns_fail_with_their_subject():
    train = clean_frame(50, 1).with_columns(extra=pl.lit(1.0))
    test = clean_frame(20, 2, 100).with_columns(pl.col("x2").cast(pl.String))
    data = build_audit_data({"train": train, "test": test}, columns=Columns(label="y"))
    findings = {(f.subject, f.metric): f for f in SchemaConsistency().run(data)}
    missing = findings[("extra", "schema_missing")]
    assert missing.severity == Severity.FAIL and missing.splits == ["test"]
    dtype = findings[("x2", "schema_dtype")]
    assert dtype.severity == Severity.FAIL
    assert dtype.evidence["dtypes"] == {"train": "Float64", "test": "String"}
    assert "x2" not in data.features and "extra" not in data.features


def test_severity_of_missing_columns_is_configurable():
    train = clean_frame(50, 1).with_columns(extra=pl.lit(1.0))
    data = build_audit_data({"train": train, "test": clean_frame(20, 2, 100)},
                            columns=Columns(label="y"))
    f = next(f for f in SchemaConsistency(missing_severity=Severity.WARN).run(data)
             if f.metric == "schema_missing")
    assert f.severity == Severity.WARN
