"""The engine-free binned class ranks (:mod:`auditor.engines.label_bins`, Spark's
``class_ranks``) run on the polars engine's operations: where a column's values are its bins
they equal polars' exact ranks, whatever the batches; beyond ``MAX_EXACT`` values they are
binned with the error bound they state. No Spark needed."""
from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.detectors.measured import engine_of
from auditor.engines import label_bins, operations
from auditor.loading.data import build_audit_data


def _frames(rng: np.random.Generator) -> dict[str, pl.DataFrame]:
    def part(n: int, shift: float) -> pl.DataFrame:
        y = rng.integers(0, 2, n)
        level = rng.integers(0, 40, n) + 3 * y  # 43 values: binned exactly
        x = np.where(rng.random(n) < 0.1, np.nan, level + shift)
        return pl.DataFrame({
            "level": level, "x": x,
            "flag": rng.random(n) < 0.3 + 0.2 * y,
            "day": [datetime(2024, 1, 1) + timedelta(days=int(d)) for d in level],
            "fine": rng.normal(size=n) + y,  # thousands of values: quantile bins
            "y": y})
    return {"train": part(3000, 0.0), "test": part(1000, 0.5)}


@pytest.mark.parametrize("batch", [operations.BATCH_ROWS, 333])
def test_binned_ranks_equal_the_exact_ranks_where_values_are_the_bins(monkeypatch, batch):
    monkeypatch.setattr(operations, "BATCH_ROWS", batch)
    from auditor.engines import polars_engine
    monkeypatch.setattr(polars_engine, "BATCH_ROWS", batch)
    data = build_audit_data(_frames(np.random.default_rng(5)), columns=Columns(label="y"))
    ops = engine_of(data)
    cols = ["level", "x", "flag", "day"]
    binned = label_bins.class_ranks(ops, "y", [0, 1], cols)
    exact = ops.class_ranks("y", [0, 1], cols)
    assert binned.bins == [0, 0, 0, 0]  # every column's values are its bins
    for s in ("train", "test"):
        b, e = binned.stats[s], exact.stats[s]
        for key in ("n", "count", "rank_sum", "rank_var", "distinct"):
            assert np.allclose(b[key], e[key]), (s, key)
        assert b["cuts"][0] is None and e["cuts"][0] is None  # no missing value: no cut
        (eb, bb), (ee, be) = b["cuts"][1], e["cuts"][1]
        assert np.array_equal(eb, ee) and np.array_equal(bb, be)
    # class means and variances: about the center instead of the minimum, the same spread
    assert np.allclose(binned.stats["test"]["var"], exact.stats["test"]["var"])
    assert binned.edges[1] is not None and np.array_equal(binned.edges[1], exact.edges[1])
    assert np.array_equal(binned.below["test"][1], exact.below["test"][1])


def test_a_column_beyond_the_exact_cap_is_binned_within_its_stated_error():
    data = build_audit_data(_frames(np.random.default_rng(6)), columns=Columns(label="y"))
    ops = engine_of(data)
    binned = label_bins.class_ranks(ops, "y", [0, 1], ["fine"])
    exact = ops.class_ranks("y", [0, 1], ["fine"])
    assert binned.bins[0] > 1
    # the counts per (bin, class): bin b holds (e_{b-1}, e_b], by numpy's digitize
    bins = label_bins.binned(ops, "y", ["fine"])
    for s, frame in data.splits.items():
        x, y = frame["fine"].to_numpy(), frame["y"].to_numpy()
        e = bins.edges[0]
        want = np.zeros((e.size + 2, 2))
        np.add.at(want, (np.digitize(x, e, right=True), y), 1)
        assert np.array_equal(bins.hist[s][0], want)
    for s in ("train", "test"):
        b, e = binned.stats[s], exact.stats[s]
        assert np.array_equal(b["count"], e["count"])
        n1, n0 = b["n"][1], b["n"][0]
        auc_b = (b["rank_sum"][1, 0] - n1 * (n1 + 1) / 2) / (n1 * n0)
        auc_e = (e["rank_sum"][1, 0] - n1 * (n1 + 1) / 2) / (n1 * n0)
        assert abs(auc_b - auc_e) <= binned.bin_error[s][0] + 1e-12
        assert 0 < binned.bin_error[s][0] < 0.01


def test_class_codes_and_values_read_missing_as_no_label_and_nan():
    codes = label_bins.class_codes(pl.Series([1.0, None, float("nan"), 0.0]), [0.0, 1.0])
    assert codes.tolist() == [1, -1, -1, 0]
    v = label_bins.values_of(pl.Series([datetime(1970, 1, 1, 0, 0, 1), None]).cast(
        pl.Datetime("ns")))
    assert v[0] == 1e6 and np.isnan(v[1])


@pytest.mark.parametrize("dtype", [pl.Int8, pl.Int16, pl.UInt8, pl.UInt64, pl.Float32,
                                   pl.Decimal(10, 2), pl.Boolean, pl.String, pl.Date,
                                   pl.Datetime("ns"), pl.Categorical])
def test_label_values_are_counted_in_a_type_every_engine_carries(dtype):
    """Spark's ``map_batches`` carries a few types only: a label of any other type (a short,
    a float, a date) is counted widened, its values unchanged."""
    from auditor.engines.spark_engine import spark_type

    wide = label_bins.label_dtype(dtype)
    assert spark_type(wide)
    s = pl.Series("y", [1, 0, 1, None]).cast(pl.String if dtype == pl.Categorical else pl.Int64)
    if dtype == pl.Date or isinstance(dtype, pl.Datetime):
        s = pl.Series("y", [10, 0, 10, None]).cast(dtype)
    else:
        s = s.cast(dtype)
    got = label_bins.label_counts(s.to_frame(), 0, label="y", dtype=wide).sort("y")
    assert got["n"].to_list() == [1, 2] and got["y"].dtype == wide
    if wide != pl.String:
        assert got["y"].to_list() == sorted(set(s.drop_nulls().to_list()))
