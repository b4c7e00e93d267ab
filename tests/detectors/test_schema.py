"""schema.consistency: missing and incompatible columns are findings; clean splits pass."""
from __future__ import annotations

import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.loading.data import build_audit_data
from auditor.detectors.schema import SchemaConsistency
from auditor.report.results import Severity
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


def _variant_data():
    train = pl.DataFrame({"city": ["New York"] * 30 + ["new york "] * 5 + ["Boston"] * 20
                          + ["Paris"] * 10 + [None] * 3, "x": list(range(68)),
                          "y": ["yes"] * 34 + ["no"] * 34})
    test = pl.DataFrame({"city": ["new york "] * 7 + ["Boston"] * 10 + ["boston"] * 2
                         + ["Paris"] * 3, "x": list(range(22)),
                         "y": ["Yes"] * 11 + ["no"] * 11})
    return build_audit_data({"train": train, "test": test}, columns=Columns(label="y"))


def test_variants_of_one_value_are_counted_within_and_across_splits():
    findings = {f.subject: f for f in SchemaConsistency().run(_variant_data())
                if f.metric == "value_variants"}
    city = findings["city"]
    # New York: 30 majority + 12 variant rows ('new york ': 5 train, 7 test); Boston: 2
    assert city.severity == Severity.WARN and city.count == 14
    assert city.value == round(14 / 87, 6) and city.splits == ["train", "test"]
    assert city.message.startswith(
        "city: 2 values are written in more than one form differing only by case, whitespace "
        "or punctuation ('New York' / 'new york '); 14 of 87 rows with a value (16.1%) hold a "
        "less frequent form")
    (ny, boston) = city.evidence["variants"]
    assert ny["rows by form"] == "30, 12" and ny["across splits"] is True
    assert ny["rows by split"] == "train: 'New York' 30, 'new york ' 5; test: 'new york ' 7"
    assert boston["rows by split"] == "train: 'Boston' 20; test: 'Boston' 10, 'boston' 2"
    # the label too: 'Yes' only in test, 'yes' only in train
    assert findings["y"].count == 11 and findings["y"].evidence["variants"][0]["across splits"]


def test_values_that_differ_by_more_than_case_whitespace_or_punctuation_are_not_variants():
    train = pl.DataFrame({"c": ["1.5", "15", "A-1", "B1", "north", "North-East"] * 10})
    data = build_audit_data({"train": train, "test": train}, columns=Columns())
    assert [f for f in SchemaConsistency().run(data) if f.metric == "value_variants"] == []


def test_variant_thresholds_grade_and_are_validated():
    f = [f for f in SchemaConsistency(variant_warn_above=0.2).run(_variant_data())
         if f.subject == "city"][0]
    assert f.severity == Severity.INFO
    f = [f for f in SchemaConsistency(variant_fail_above=0.1).run(_variant_data())
         if f.subject == "city"][0]
    assert f.severity == Severity.FAIL
    with pytest.raises(ValueError, match="variant_warn_above must be a share in"):
        SchemaConsistency(variant_warn_above=2)


def test_signs_that_make_a_category_are_not_punctuation_variants():
    # blood groups, credit ratings and signed codes: 'A+' / 'A-' / 'A' are three categories
    train = pl.DataFrame({"blood": ["A+", "A-", "AB+", "AB-", "O+", "O-"] * 10,
                          "rating": ["AA+", "AA", "AA-", "BB+", "BB", "BB-"] * 10,
                          "code": ["-1", "1", "+1", "-2", "2", "0"] * 10})
    data = build_audit_data({"train": train, "test": train}, columns=Columns())
    assert [f.subject for f in SchemaConsistency().run(data) if f.metric == "value_variants"] \
        == []
    # a hyphen joining words is still punctuation: 'New-York' is a form of 'new york'
    hyphen = pl.DataFrame({"city": ["New York"] * 20 + ["New-York"] * 3 + ["Paris"] * 9})
    (f,) = [f for f in SchemaConsistency().run(build_audit_data({"train": hyphen},
                                                                columns=Columns()))
            if f.metric == "value_variants"]
    assert (f.subject, f.count) == ("city", 3)


def test_variants_of_many_columns_are_found_per_column_in_column_order():
    # more than 8 string columns: checked on a thread pool, findings still in column order
    n = 200
    cols = {f"c{j:02d}": ["New York" if i % 4 else "new york" for i in range(n)]
            for j in range(12)}
    cols["c05"] = ["a"] * n  # no variants
    train = pl.DataFrame(cols)
    data = build_audit_data({"train": train, "test": train.head(40)}, columns=Columns())
    found = [f for f in SchemaConsistency().run(data) if f.metric == "value_variants"]
    assert [f.subject for f in found] == [f"c{j:02d}" for j in range(12) if j != 5]
    assert all(f.count == 60 and f.value == pytest.approx(60 / 240) for f in found)
