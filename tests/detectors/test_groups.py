"""leakage.group_overlap: entities of declared group columns shared across splits, and
suggestions of undeclared entity keys."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.loading.data import AuditData, Kind, build_audit_data
from auditor.loading.demo import make_demo
from auditor.detectors.groups import GroupOverlap, snake
from auditor.errors import NotApplicable
from auditor.report.results import Severity


def _data(frames, **roles) -> AuditData:
    return build_audit_data(frames, columns=Columns(**roles))


def _frame(customers, seed: int, offset: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n = len(customers)
    return pl.DataFrame({"row_id": np.arange(offset, offset + n), "customer_id": customers,
                         "x": rng.normal(size=n), "y": rng.integers(0, 2, n)})


def _planted():
    """train: 400 customers x 3 rows; val: 1,200 rows, 37 of them from 12 train customers
    (C0 has 8 val rows, C1..C9 three each, C10 two), the rest new customers."""
    train = _frame([f"C{i}" for i in range(400) for _ in range(3)], 1)
    shared = ["C0"] * 8 + [f"C{i}" for i in range(1, 11) for _ in range(3)][:29]
    fresh = [f"N{i}" for i in range(1200 - len(shared))]
    val = _frame(shared + fresh, 2, 10_000)
    return train, val


def test_group_overlap_counts_rows_of_the_later_split_not_entities():
    train, val = _planted()
    (f,) = [x for x in GroupOverlap().run(_data({"train": train, "val": val}, label="y",
                                                 ids=["row_id"], groups=["customer_id"]))
            if x.metric == "group_overlap_rows"]
    expected = sum(c in set(train["customer_id"]) for c in val["customer_id"])
    assert f.count == expected == 37
    assert (f.subject, f.splits, f.metric) == ("customer_id", ["train", "val"],
                                               "group_overlap_rows")
    assert f.severity == Severity.FAIL and f.value == pytest.approx(37 / 1200)
    assert f.message == ("37 of 1,200 val rows (3.1%) share a customer_id with train "
                         "(11 of 1,174 val customer_id values also occur in train)")
    top = f.evidence["top_entities"]
    assert top[0] == {"customer_id": "C0", "rows in train": 3, "rows in val": 8}
    assert len(top) == 11 and f.evidence["shared"] == {"entities": 11, "train rows": 33,
                                                       "val rows": 37}


def test_a_split_by_group_has_no_overlap():
    rng = np.random.default_rng(3)
    customers = rng.integers(0, 2000, 6000)
    bucket = (customers * 2654435761 % 2**32) % 10 // 4  # 0-3 train, 4-7 val, 8-9 test
    split = np.array(["train", "val", "test"])[bucket]
    frames = {s: _frame(customers[split == s], i) for i, s in enumerate(("train", "val", "test"))}
    findings = GroupOverlap().run(_data(frames, label="y", groups=["customer_id"]))
    assert [(f.splits, f.count, f.severity) for f in findings] == [
        (["train", "val"], 0, Severity.INFO), (["train", "test"], 0, Severity.INFO),
        (["val", "test"], 0, Severity.INFO)]


def test_every_pair_of_splits_is_compared():
    train = _frame([f"A{i}" for i in range(100)], 1)
    val = _frame([f"A{i}" for i in range(5)] + [f"B{i}" for i in range(95)], 2)
    test = _frame([f"B{i}" for i in range(7)] + [f"A{i}" for i in range(50, 52)] +
                  [f"C{i}" for i in range(91)], 3)
    counts = {tuple(f.splits): f.count for f in GroupOverlap().run(
        _data({"train": train, "val": val, "test": test}, groups=["customer_id"]))}
    assert counts == {("train", "val"): 5, ("train", "test"): 2, ("val", "test"): 7}


def test_null_groups_are_never_shared_and_are_counted_as_info():
    train = _frame(["a", "b", None, None], 1)
    test = _frame([None, "a", None, "c", "d"], 2)
    findings = GroupOverlap().run(_data({"train": train, "test": test}, groups=["customer_id"]))
    overlap = [f for f in findings if f.metric == "group_overlap_rows"]
    nulls = {f.splits[0]: f for f in findings if f.metric == "null_group_rows"}
    assert [f.count for f in overlap] == [1]
    assert {k: (f.count, f.severity) for k, f in nulls.items()} == {
        "train": (2, Severity.INFO), "test": (2, Severity.INFO)}
    assert nulls["test"].message == ("2 of 5 test rows (40.0%) have no customer_id (null); they "
                                     "are not compared across splits")


def test_an_all_null_group_column_shares_nothing():
    train = _frame([None] * 10, 1).with_columns(pl.col("customer_id").cast(pl.String))
    test = _frame([None] * 4, 2).with_columns(pl.col("customer_id").cast(pl.String))
    findings = GroupOverlap().run(_data({"train": train, "test": test}, groups=["customer_id"]))
    assert [(f.metric, f.count) for f in findings] == [
        ("group_overlap_rows", 0), ("null_group_rows", 10), ("null_group_rows", 4)]


def test_integer_group_keys_and_a_warn_only_threshold():
    train = _frame(list(range(100)), 1)
    test = _frame(list(range(95, 195)), 2)
    (f,) = GroupOverlap(fail_above=0.1).run(_data({"train": train, "test": test},
                                                  groups=["customer_id"]))
    assert f.count == 5 and f.severity == Severity.WARN
    assert f.evidence["top_entities"][0] == {"customer_id": 95, "rows in train": 1,
                                             "rows in test": 1}


def test_one_split_is_not_applicable():
    with pytest.raises(NotApplicable, match="only one split"):
        GroupOverlap().run(_data({"train": _frame(["a"], 1)}, groups=["customer_id"]))


# ---------------------------------------------------------------------------------------------
# Suggestions when no group is declared
# ---------------------------------------------------------------------------------------------

def _undeclared(seed: int, n: int, pool: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({
        "row_id": np.arange(n) + seed * 100_000,
        "accountNo": [f"A{i}" for i in rng.integers(0, pool, n)],       # name + repeats
        "household": rng.integers(0, pool, n) * 7919,                     # name only
        "ref": [f"R{i}" for i in rng.integers(0, pool, n)],               # repeats only
        "age": rng.integers(18, 90, n),                                   # dense integers
        "plan": rng.choice(["a", "b", "c"], n),                           # low cardinality
        "score": rng.normal(size=n),                                      # floats
        "y": rng.integers(0, 2, n),
    })


def test_undeclared_entity_keys_are_suggested_as_info_only():
    data = _data({"train": _undeclared(1, 3000, 800), "test": _undeclared(2, 1000, 800)},
                 label="y", ids=["row_id"])
    findings = [f for f in GroupOverlap().run(data) if f.metric != "id_overlap_rows"]
    assert [f.subject for f in findings] == ["accountNo", "household", "ref"]
    assert all(f.severity == Severity.INFO and f.metric == "candidate_group_column"
               for f in findings)
    ref = findings[2]
    expected = sum(v in set(data.splits["train"]["ref"]) for v in data.splits["test"]["ref"])
    assert ref.count == expected and ref.splits == ["train", "test"]
    assert "values repeat" in ref.evidence["why"] and "name" not in ref.evidence["why"]
    assert "name looks like an entity key" in findings[1].evidence["why"]


def test_candidates_must_overlap_across_splits():
    train, test = _undeclared(1, 500, 300), _undeclared(2, 500, 300)
    test = test.with_columns(("T" + pl.col("accountNo")).alias("accountNo"),
                             ("T" + pl.col("ref")).alias("ref"), pl.col("household") + 1)
    with pytest.raises(NotApplicable, match="no column looks like an entity key"):
        GroupOverlap().run(_data({"train": train, "test": test}, label="y",
                                 exclude=["row_id"]))


def test_without_groups_or_candidates_the_check_is_not_applicable(clean_splits):
    with pytest.raises(NotApplicable, match="no group column declared"):
        GroupOverlap().run(_data(clean_splits, label="y", exclude=["row_id"]))


def test_entity_like_names_are_recognised_in_any_case_style():
    assert snake("customerID") == "customer_id" and snake("UserKey") == "user_key"
    assert snake("patient-no") == "patient_no"


def test_invalid_thresholds_are_rejected():
    with pytest.raises(ValueError, match="fail_above must be a share in"):
        GroupOverlap(fail_above=-0.1)


def test_demo_flags_test_customers_seen_in_train():
    frames = make_demo()
    data = _data(frames, label="churned", time="signup_ts", groups=["customer_id"],
                 ids=["row_id"], text=["notes"])
    by_pair = {tuple(f.splits): f for f in GroupOverlap().run(data)
               if f.metric == "group_overlap_rows"}
    train_ids = set(frames["train"]["customer_id"])
    expected = sum(c in train_ids for c in frames["test"]["customer_id"])
    # 45 planted customers, 3 of whose rows were then overwritten by the 30 exact copies of
    # train rows (which carry their train customer_id): 42 + 30 = 72.
    assert by_pair[("train", "test")].count == expected == 72
    assert by_pair[("train", "test")].severity == Severity.FAIL
    assert by_pair[("train", "val")].count == by_pair[("val", "test")].count == 0


def test_nan_group_values_are_missing_not_a_shared_entity():
    train = pl.DataFrame({"g": [1.0, 2.0, np.nan, np.nan], "x": [1, 2, 3, 4]})
    test = pl.DataFrame({"g": [np.nan, 3.0, 1.0], "x": [5, 6, 7]})
    findings = GroupOverlap().run(_data({"train": train, "test": test}, groups=["g"]))
    (f,) = [f for f in findings if f.metric == "group_overlap_rows"]
    assert (f.count, f.evidence["shared"]["entities"]) == (1, 1)
    nulls = {f.splits[0]: f.count for f in findings if f.metric == "null_group_rows"}
    assert nulls == {"train": 2, "test": 1}


# ---------------------------------------------------------------------------------------------
# Declared ids
# ---------------------------------------------------------------------------------------------

def test_a_record_id_in_two_splits_is_reported_as_id_overlap():
    train, test = _frame([f"C{i}" for i in range(500)], 1), _frame(
        [f"N{i}" for i in range(200)], 2, 10_000)
    # 6 train records re-appear in test with their id (4 unchanged, 2 with an updated x)
    again = pl.concat([train[10:14], train[20:22].with_columns(pl.col("x") + 1)])
    test = pl.concat([test, again])
    findings = GroupOverlap().run(_data({"train": train, "test": test}, label="y",
                                        ids=["row_id"], groups=["customer_id"]))
    (f,) = [x for x in findings if x.metric == "id_overlap_rows"]
    assert (f.subject, f.count, f.severity) == ("row_id", 6, Severity.FAIL)
    assert f.value == pytest.approx(6 / 206)
    assert f.message == ("6 of 206 test rows (2.9%) carry a row_id that also occurs in train "
                         "(6 of 206 test row_id values): the same records are in both splits")
    assert f.evidence["same_values"] == {"test rows with a shared row_id": 6,
                                         "equal in every other column": 4,
                                         "different in some column": 2}
    assert f.evidence["shared"]["entities"] == 6


def test_row_numbers_restarting_in_every_split_are_not_record_ids():
    train, test = _frame([f"C{i}" for i in range(300)], 1), _frame(
        [f"N{i}" for i in range(100)], 2)  # row_id 0..299 and 0..99
    (f,) = GroupOverlap().run(_data({"train": train, "test": test}, label="y",
                                    ids=["row_id"]))
    assert (f.metric, f.count, f.severity) == ("id_overlap_rows", 100, Severity.INFO)
    assert "a row number, not a record id" in f.message


def test_measurements_are_not_suggested_as_entity_keys():
    def frame(n: int, seed: int) -> pl.DataFrame:
        r = np.random.default_rng(seed)
        return pl.DataFrame({"months": r.integers(0, 120, n) * 3,   # sparse, repeating integers
                             "amount": r.gamma(2.0, 50.0, n).round(0),
                             "y": r.integers(0, 2, n)})
    data = _data({"train": frame(3000, 1), "test": frame(1000, 2)}, label="y")
    with pytest.raises(NotApplicable, match="no column looks like an entity key"):
        GroupOverlap().run(data)
    # an integer key with thousands of sparse values still is suggested
    keyed = {s: d.with_columns(pl.Series("acct", np.random.default_rng(i).integers(
        0, 2500, d.height) * 13)) for i, (s, d) in enumerate(data.splits.items())}
    (f,) = GroupOverlap(candidate_min_integer_distinct=1000).run(_data(keyed, label="y"))
    assert f.subject == "acct" and f.metric == "candidate_group_column"


def test_numbers_and_dates_written_as_text_are_not_suggested_as_entity_keys():
    def frame(n: int, seed: int) -> pl.DataFrame:
        r = np.random.default_rng(seed)
        days = r.integers(0, 300, n)
        return pl.DataFrame({
            "visit": [f"2024-{1 + d // 28:02d}-{1 + d % 28:02d}" for d in days],  # dates
            "weight": [f"{w:.1f}" for w in r.integers(400, 900, n) / 10],      # numbers
            "y": r.integers(0, 2, n)})
    data = _data({"train": frame(3000, 1), "test": frame(1000, 2)}, label="y")
    assert data.kinds["visit"] == data.kinds["weight"] == Kind.CATEGORICAL
    with pytest.raises(NotApplicable, match="no column looks like an entity key"):
        GroupOverlap().run(data)


def test_group_columns_named_like_internal_columns_still_work():
    """The key tables use internal names: a group named ``rows`` or ``_text`` is a key like any
    other (review of the engine boundary: both crashed)."""
    for name in ("rows", "_text", "_k", "_n", "rows_later"):
        train = pl.DataFrame({name: ["a", "b", "c"], "x": [1.0, 2.0, 3.0]})
        test = pl.DataFrame({name: ["c", "d"], "x": [4.0, 5.0]})
        (f,) = [x for x in GroupOverlap().run(_data({"train": train, "test": test},
                                                    groups=[name]))
                if x.metric == "group_overlap_rows"]
        assert (f.count, f.severity) == (1, Severity.FAIL)
        assert f.evidence["top_entities"] == [{name: "c", "rows in train": 1, "rows in test": 1}]


def test_a_nan_record_id_is_no_id_in_the_overlap_and_in_its_evidence():
    train = pl.DataFrame({"rid": [1.0, float("nan"), 2.0], "x": [5, 6, 7]})
    test = pl.DataFrame({"rid": [1.0, float("nan")], "x": [5, 9]})
    (f,) = [x for x in GroupOverlap().run(_data({"train": train, "test": test}, ids=["rid"]))
            if x.metric == "id_overlap_rows"]
    assert f.count == 1
    assert f.evidence["same_values"] == {"test rows with a shared rid": 1,
                                         "equal in every other column": 1,
                                         "different in some column": 0}


def test_row_numbers_are_stated_from_the_later_splits_own_first_number():
    frames = {"train": pl.DataFrame({"n": [0, 1, 2], "x": [1.0, 2.0, 3.0]}),
              "val": pl.DataFrame({"n": [1, 2], "x": [1.0, 2.0]}),
              "test": pl.DataFrame({"n": [0, 1], "x": [1.0, 2.0]})}
    found = {tuple(f.splits): f for f in GroupOverlap().run(_data(frames, ids=["n"]))
             if f.metric == "id_overlap_rows"}
    assert "numbers the rows of each split from 1" in found[("train", "val")].message
    assert "numbers the rows of each split from 0" in found[("train", "test")].message
