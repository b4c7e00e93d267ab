"""The engine-free level tables (:mod:`auditor.engines.label_levels`, Spark's ``class_levels``
and ``target_rate_aucs``) run on the polars engine's operations: equal to polars' exact level
codes (levels, rows with a value, Cramér's V; the held-out target-rate AUC) for strings,
categoricals, integers, floats with NaN and -0.0, booleans, dates and nulls, a level unseen
in train, a split without labels; whatever the batches and blocks of columns. Cramér's V
checked against scipy's chi2. No Spark needed."""
from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import polars as pl
import pytest
from scipy.stats import chi2_contingency

from auditor.core.config import Columns
from auditor.detectors.measured import engine_of
from auditor.engines import label_levels, operations
from auditor.loading.data import build_audit_data
from auditor.stats.numerics import cramers_v_from_chi2

COLS = ["city", "code", "amount", "flag", "day", "ref", "cat"]


def _frames(rng: np.random.Generator) -> dict[str, pl.DataFrame]:
    def part(n: int, first_ref: int, labelled: bool = True) -> pl.DataFrame:
        y = rng.integers(0, 2, n)
        code = rng.integers(0, 12, n) + 4 * y
        amount = np.where(rng.random(n) < 0.1, np.nan, (code % 5) * 1.5)
        amount[rng.random(n) < 0.05] = -0.0
        city = rng.choice(["Oslo", "Lima", "Pune", None], n).tolist()
        return pl.DataFrame({
            "city": city, "code": code, "amount": amount,
            "flag": rng.random(n) < 0.3 + 0.3 * y,
            "day": [date(2024, 1, 1) + timedelta(days=int(c)) for c in code],
            "ref": [f"r{first_ref + i % 200}" for i in range(n)],  # levels unseen in train
            "cat": pl.Series(rng.choice(["a", "b", "c"], n)).cast(pl.Categorical),
            "y": pl.Series(y if labelled else [None] * n, dtype=pl.Int64)})
    return {"train": part(1500, 0), "val": part(500, 100), "test": part(600, 150),
            "holdout": part(300, 0, labelled=False)}


@pytest.mark.parametrize("batch", [operations.BATCH_ROWS, 257])
def test_level_tables_equal_polars_exact_levels(monkeypatch, batch):
    from auditor.engines import polars_engine

    monkeypatch.setattr(operations, "BATCH_ROWS", batch)
    monkeypatch.setattr(polars_engine, "BATCH_ROWS", batch)
    if batch != operations.BATCH_ROWS:  # and blocks of one or two columns
        monkeypatch.setattr(label_levels, "BLOCK_CELLS", 400)
    frames = _frames(np.random.default_rng(8))
    data = build_audit_data(frames, columns=Columns(label="y"))
    ops = engine_of(data)
    got = label_levels.class_levels(ops, "y", [0, 1], COLS)
    exact = ops.class_levels("y", [0, 1], COLS)
    assert list(got.rows) == list(exact.rows) == ["train", "val", "test"]
    for s in exact.rows:
        assert np.array_equal(got.rows[s], exact.rows[s])
        for c in COLS:
            g, e = got.stats[s][c], exact.stats[s][c]
            assert (g.levels, g.with_value) == (e.levels, e.with_value), (s, c)
            assert g.cramers_v == pytest.approx(e.cramers_v, abs=1e-12), (s, c)
    # Cramér's V against scipy's chi2 of the (level, class) table (missing a level)
    test = frames["test"]
    table = test.group_by("city", "y").len().pivot("y", index="city", values="len").fill_null(0)
    counts = table.select("0", "1").to_numpy()
    want = cramers_v_from_chi2(chi2_contingency(counts, correction=False)[0],
                               float(counts.sum()), *counts.shape)
    assert got.stats["test"]["city"].cramers_v == pytest.approx(want, abs=1e-12)
    assert got.stats["test"]["city"].levels == 4  # three cities and the missing level
    assert got.stats["test"]["amount"].levels == exact.stats["test"]["amount"].levels
    aucs = label_levels.target_rate_aucs(ops, "y", [0, 1], COLS, 20.0)
    want_aucs = ops.target_rate_aucs("y", [0, 1], COLS, 20.0)
    assert aucs.keys() == want_aucs.keys()
    for c in COLS:
        assert aucs[c].keys() == want_aucs[c].keys() == {"val", "test"}, c
        for s in aucs[c]:
            assert aucs[c][s] == pytest.approx(want_aucs[c][s], abs=1e-12), (c, s)
    unsmoothed = label_levels.target_rate_aucs(ops, "y", [0, 1], ["ref"], 0.0)
    assert unsmoothed["ref"]["test"] == pytest.approx(
        ops.target_rate_aucs("y", [0, 1], ["ref"], 0.0)["ref"]["test"], abs=1e-12)


def test_level_cells_key_every_value_once_missing_as_null():
    frame = pl.DataFrame({"x": [0.0, -0.0, float("nan"), None, 2.5],
                          "s": ["a", None, "a", "b", "b"], "y": [1, 0, None, 1, 0]})
    cells = label_levels.level_cells(frame, 0, split=2, label="y", classes=(0, 1),
                                     cols=("x", "s"))
    assert cells["n"].sum() == 8  # 4 labelled rows x 2 columns
    x = cells.filter(pl.col("j") == 0).sort("y", "n")
    # 0.0 (y 1) and -0.0 (y 0) one level; null (row 4, y 1) the missing one; 2.5 (y 0)
    zero = x.filter(pl.col("v").is_not_null()).group_by("v").agg(pl.col("n").sum())
    assert sorted(zero["n"].to_list()) == [1, 2] and x["v"].null_count() == 1
    s = cells.filter(pl.col("j") == 1)
    assert s.filter(pl.col("v").is_null())["n"].to_list() == [1]  # row 1's missing value
    assert s.filter(pl.col("v").is_not_null()).group_by("v").agg(pl.col("n").sum())[
        "n"].sort().to_list() == [1, 2]  # "a" once labelled, "b" twice
    assert cells["s"].unique().to_list() == [2] and cells.schema == label_levels.CELLS
