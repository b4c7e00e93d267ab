"""leakage.duplicates: exact copies across every pair of splits, verified, ids ignored."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from auditor.config import Columns
from auditor.data import AuditData, build_audit_data
from auditor.detectors.duplicates import Duplicates
from auditor.errors import NotApplicable
from auditor.report import Severity
from tests.conftest import clean_frame


def _data(frames, **roles) -> AuditData:
    return build_audit_data(frames, columns=Columns(**roles))


def test_clean_splits_have_no_duplicates():
    data = _data({"train": clean_frame(2000, 1), "val": clean_frame(500, 2, 5000),
                  "test": clean_frame(500, 3, 9000)}, label="y", ids=["row_id"])
    findings = Duplicates().run(data)
    assert [(f.splits, f.count, f.severity) for f in findings] == [
        (["train", "val"], 0, Severity.INFO), (["train", "test"], 0, Severity.INFO),
        (["val", "test"], 0, Severity.INFO)]


def test_planted_copies_are_counted_per_pair_with_ids_ignored():
    train, val, test = clean_frame(1000, 1), clean_frame(300, 2, 5000), clean_frame(400, 3, 9000)
    # 12 train rows copied into test and 5 into val (fresh ids), 7 val rows into test
    test = pl.concat([test, train[100:112].with_columns(pl.col("row_id") + 70_000),
                      val[:7].with_columns(pl.col("row_id") + 80_000)])
    val = pl.concat([val, train[500:505].with_columns(pl.col("row_id") + 60_000)])
    data = _data({"train": train, "val": val, "test": test}, label="y", ids=["row_id"])
    by_pair = {tuple(f.splits): f for f in Duplicates().run(data)}
    assert by_pair[("train", "val")].count == 5
    assert by_pair[("train", "test")].count == 12
    assert by_pair[("val", "test")].count == 7
    f = by_pair[("train", "test")]
    assert f.value == pytest.approx(12 / 419) and f.severity == Severity.FAIL
    assert f.threshold == 0.001 and f.metric == "duplicate_rows"
    ex = f.evidence["examples"]
    assert len(ex) == 12 and ex[0]["train_row"] == 100 and ex[0]["test_row"] == 400
    assert f.message == "12 of 419 test rows (2.9%) are exact copies of train rows"


def test_without_declared_ids_the_id_column_makes_rows_distinct():
    train, test = clean_frame(100, 1), clean_frame(100, 2, 500)
    test = pl.concat([test, train[:4].with_columns(pl.col("row_id") + 1000)])
    assert Duplicates().run(_data({"train": train, "test": test}, label="y"))[0].count == 0
    assert Duplicates().run(_data({"train": train, "test": test}, label="y",
                                  ids=["row_id"]))[0].count == 4


def test_label_is_part_of_the_row():
    train = pl.DataFrame({"x": [1.0, 2.0, 3.0], "y": [0, 1, 0]})
    test = pl.DataFrame({"x": [1.0, 2.0, 3.0], "y": [1, 1, 1]})
    assert Duplicates().run(_data({"train": train, "test": test}, label="y"))[0].count == 1


def test_negative_zero_nan_and_null_equal_themselves():
    train = pl.DataFrame({"x": [0.0, float("nan"), None, 1.0], "s": ["a", "b", None, "c"]})
    test = pl.DataFrame({"x": [-0.0, float("nan"), None, 2.0], "s": ["a", "b", None, "c"]})
    f = Duplicates().run(_data({"train": train, "test": test}))[0]
    assert f.count == 3
    assert [e["test_row"] for e in f.evidence["examples"]] == [0, 1, 2]


def test_hash_collisions_cannot_create_findings(monkeypatch):
    train, test = clean_frame(200, 1), clean_frame(200, 2, 1000)
    data = _data({"train": train, "test": test}, label="y", ids=["row_id"])
    monkeypatch.setattr(AuditData, "row_hashes",
                        lambda self, split, cols: pl.Series(np.zeros(self.rows(split),
                                                                     dtype=np.uint64)))
    assert Duplicates().run(data)[0].count == 0


def test_within_split_copies_count_each_later_row_once():
    train = pl.DataFrame({"x": [1, 1, 1, 2]})
    test = pl.DataFrame({"x": [1, 1, 3]})
    f = Duplicates().run(_data({"train": train, "test": test}))[0]
    assert f.count == 2 and f.evidence["examples"][0] == {"train_row": 0, "test_row": 0,
                                                           "values": "x=1"}


def test_one_split_is_not_applicable():
    with pytest.raises(NotApplicable, match="only one split"):
        Duplicates().run(_data({"train": clean_frame(10, 1)}))


def test_invalid_threshold_is_rejected():
    with pytest.raises(ValueError, match="fail_above must be a share in"):
        Duplicates(fail_above=1.5)
