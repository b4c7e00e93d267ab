"""The polars engine's operations against plain numpy / Python references (no Spark needed)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl

from auditor.engines import Engine, nearest_rank
from auditor.engines.polars_engine import PolarsEngine
from auditor.sparktwins.spark_dispatch import SPARK_CHECKS
from auditor.core.registry import CHECKS
from tests.engines.fixtures import planted


def _engine() -> PolarsEngine:
    return PolarsEngine(planted())


def test_polars_engine_satisfies_the_engine_protocol():
    assert isinstance(_engine(), Engine)


def test_spark_checks_are_registered_check_ids():
    assert set(SPARK_CHECKS) <= set(CHECKS)


def test_key_overlap_counts_shared_keys_and_rows_like_python_sets():
    e = _engine()
    frames = planted()
    tr, te = Counter(frames["train"]["user"].to_list()), Counter(frames["test"]["user"].to_list())
    shared = set(tr) & set(te)
    ko = e.key_overlap("train", "test", ["user"], max_examples=3)
    assert ko.shared == len(shared)
    assert ko.rows_earlier == sum(tr[k] for k in shared)
    assert ko.rows_later == sum(te[k] for k in shared)
    assert ko.top.height == 3
    assert ko.top["rows_later"].to_list() == sorted((te[k] for k in shared), reverse=True)[:3]


def test_whole_row_keys_treat_null_and_nan_as_values():
    df = pl.DataFrame({"a": [1.0, float("nan"), float("nan"), None, None, -0.0, 0.0],
                       "b": ["x", "y", "y", None, None, "z", "z"]})
    e = PolarsEngine({"s": df, "t": df.slice(1, 2)})
    ks = e.key_summary("s", ["a", "b"], nulls_are_keys=True)
    assert (ks.keyed_rows, ks.distinct, ks.repeated_rows) == (7, 4, 3)
    assert ks.rows_in_repeated == 6 and ks.sum_squares == 1 + 4 + 4 + 4
    assert ks.rows_in_repeated_null == 6  # null_in empty: every repeated row
    assert e.key_summary("s", ["a", "b"], nulls_are_keys=True,
                         null_in=["a"]).rows_in_repeated_null == 2
    assert e.key_summary("s", ["a", "b"]).keyed_rows == 3  # NaN and null are no entity
    assert e.key_overlap("s", "t", ["a", "b"], nulls_are_keys=True).rows_later == 2


def test_histogram_quantiles_and_profiles_match_numpy():
    e = _engine()
    x = planted()["train"]["x2"].to_numpy()
    edges = np.quantile(x, [0.2, 0.4, 0.6, 0.8])
    h = e.histogram("train", "x2", edges)
    ref = np.histogram(x, bins=np.concatenate([[-np.inf], edges, [np.inf]]))[0]
    # numpy's bins are [a, b) except the last; the engine's are [a, b) throughout: no value
    # sits exactly on +inf, so the two agree
    assert h.counts.tolist() == ref.tolist() and h.missing == 0
    probs = [0.0, 0.05, 0.5, 0.95, 1.0]
    assert e.quantiles("train", "x2", probs) == \
        np.quantile(x, probs, method="inverted_cdf").tolist()
    assert nearest_rank(np.array([]), 0.5) is None
    prof = e.column_profiles("train", ["x1", "cat"])
    x1 = planted()["train"]["x1"].to_numpy()
    assert prof["x1"].missing == 15 and prof["x1"].max == np.nanmax(x1)
    assert prof["cat"].missing == 20 and prof["cat"].min == "a"


def test_histogram_by_label_sums_to_the_plain_histogram():
    e = _engine()
    edges = [-1.0, 0.0, 1.0]
    by = e.histogram("train", "x1", edges, by="y")
    assert by.groups == ["0", "1"]
    assert by.counts.sum(axis=0).tolist() == e.histogram("train", "x1", edges).counts.tolist()


def test_category_counts_and_stratified_sample():
    e = _engine()
    counts, missing = e.category_counts("test", "cat")
    ref = planted()["test"]["cat"].value_counts().drop_nulls()
    assert missing == 0 and dict(counts.iter_rows()) == dict(ref.iter_rows())
    assert e.stratified_sample("test", 10_000).height == 150  # small splits come whole
    s1 = e.stratified_sample("train", 100, by="y", seed=1)
    assert s1.equals(e.stratified_sample("train", 100, by="y", seed=1))
    assert 60 <= s1.height <= 140
    assert e.count_between("train", "x2", lo=1.0, hi=2.0) == int(
        ((planted()["train"]["x2"] >= 1.0) & (planted()["train"]["x2"] < 2.0)).sum())
