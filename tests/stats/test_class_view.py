"""The decisive cut and the class-conditional chart of a flagged feature."""
from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import roc_curve

from auditor.core.config import Columns
from auditor.detectors.single_feature_auc import SingleFeatureAUC
from auditor.loading.data import build_audit_data
from auditor.report.charts import figure
from auditor.stats.class_view import HIST_BINS, class_chart, decisive_cut

NAMES = ("class 'yes'", "class 'no'")


def _separated(n=2_000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    x = np.where(y, rng.normal(2.0, 1.0, n), rng.normal(0.0, 1.0, n))
    return x, y


def test_the_cut_of_a_numeric_column_is_youdens_j_of_its_roc_curve():
    x, y = _separated()
    cut = decisive_cut(pl.Series("x", x), y, NAMES)
    fpr, tpr, thresholds = roc_curve(y, x)
    j = tpr - fpr
    assert cut["j"] == pytest.approx(j.max(), abs=1e-4)
    best = thresholds[np.argmax(j)]  # sklearn: x >= best; ours: x > the value just below
    below = x[x < best].max()
    t = float(cut["table"][1]["rows"].removeprefix("> "))  # short, and between the values
    assert below <= t < x[x > below].min() and len(str(t)) <= 10
    above = x > below
    assert cut["table"][1]["class 'yes'"] == pytest.approx(above[y].mean(), abs=1e-4)
    assert cut["table"][1]["class 'no'"] == pytest.approx(above[~y].mean(), abs=1e-4)
    assert cut["statement"].startswith(f"x {cut['table'][1]['rows']} holds ")


def test_a_column_missing_for_one_class_is_cut_by_its_missingness():
    x, y = _separated()
    values = pl.Series("days", np.where(y, x, np.nan))  # NaN is missing, as null is
    cut = decisive_cut(values, y, NAMES)
    assert cut["statement"] == "days is missing in 100.0% of class 'no' rows and 0% of class " \
                               "'yes' rows"
    assert cut["j"] == 1.0
    assert cut["table"][-1] == {"rows": "missing", "class 'yes'": 0.0, "class 'no'": 1.0}
    chart = class_chart(values, y, NAMES, "days", "test")
    assert chart["xlabel"] == "days (missing: 0% of class 'yes', 100.0% of class 'no')"


def test_the_cut_of_a_categorical_column_is_the_set_of_levels_that_favour_the_class():
    rng = np.random.default_rng(1)
    y = rng.random(3_000) < 0.4
    level = np.where(y, rng.choice(["a", "b", "c"], 3_000, p=[0.6, 0.3, 0.1]),
                     rng.choice(["a", "b", "c", "d"], 3_000, p=[0.1, 0.2, 0.3, 0.4]))
    cut = decisive_cut(pl.Series("plan", level), y, NAMES)
    share_y = {v: (level[y] == v).mean() for v in "abcd"}
    share_n = {v: (level[~y] == v).mean() for v in "abcd"}
    favour = [v for v in "abcd" if share_y[v] > share_n[v]]
    assert favour == ["a", "b"]
    # chosen on one half, measured on the other: close to the in-sample J at 3,000 rows
    assert cut["j"] == pytest.approx(sum(share_y[v] - share_n[v] for v in favour), abs=0.05)
    assert cut["statement"].startswith("plan in {a, b} holds ")
    assert cut["statement"].endswith("(levels chosen on half of the rows, shares of the other "
                                     "half)")
    first = cut["table"][0]  # the level with the largest difference
    assert first["rows"] == "= a" and first["class 'yes'"] == pytest.approx(share_y["a"],
                                                                            abs=1e-4)


def test_no_cut_without_both_groups_or_without_any_variation():
    assert decisive_cut(pl.Series("x", [1.0, 2.0]), np.array([True, True]), NAMES) is None
    assert decisive_cut(pl.Series("x", [1.0, 1.0]), np.array([True, False]), NAMES) is None


def test_the_class_chart_draws_each_groups_shares_per_bin():
    x, y = _separated()
    spec = class_chart(pl.Series("x", x), y, NAMES, "x", "test")
    edges = np.linspace(x.min(), x.max(), HIST_BINS + 1)
    assert spec["edges"] == pytest.approx(edges)
    assert spec["series"]["class 'yes'"] == pytest.approx(np.histogram(x[y], edges)[0] / y.sum(),
                                                          abs=1e-5)
    assert spec["series"]["class 'no'"] == pytest.approx(
        np.histogram(x[~y], edges)[0] / (~y).sum(), abs=1e-5)
    assert figure(spec) is not None
    dates = pl.Series("when", [datetime(2024, 1, 1) + timedelta(hours=float(v) * 24)
                               for v in x])
    dated = class_chart(dates, y, NAMES, "when", "test")
    assert dated["x_unit"] == "epoch_seconds"
    assert dated["edges"][0] == pytest.approx((dates.min() - datetime(1970, 1, 1))
                                              .total_seconds())
    levels = class_chart(pl.Series("plan", np.where(y, "a", "b")), y, NAMES, "plan", "test")
    assert levels["type"] == "grouped_bar" and set(levels["categories"]) == {"a", "b"}


def test_a_flagged_feature_shows_its_cut_and_class_chart():
    rng = np.random.default_rng(5)
    n = 1_200
    y = rng.integers(0, 2, n)
    frame = pl.DataFrame({"honest": rng.normal(size=n) + 0.3 * y,
                          "leak": np.where(y == 1, rng.uniform(5, 9, n), rng.uniform(0, 5.5, n)),
                          "y": y})
    data = build_audit_data({"train": frame[:900], "test": frame[900:]},
                            columns=Columns(label="y"))
    f = next(f for f in SingleFeatureAUC().run(data)
             if f.subject == "leak" and f.severity != "info")
    test = frame[900:]
    cut = f.evidence["decisive_cut"]
    fpr, tpr, _ = roc_curve(test["y"], test["leak"])
    assert cut["j"] == pytest.approx((tpr - fpr).max(), abs=1e-4)
    assert cut["statement"].startswith("leak > ")
    assert f.evidence["charts"][0]["title"] == "leak in test by class"
    assert list(f.evidence["charts"][0]["series"]) == ["class 1", "class 0"]


def test_a_multiclass_column_is_shown_for_the_class_it_separates_best(monkeypatch):
    from auditor.stats import class_view

    rng = np.random.default_rng(2)
    codes = rng.integers(0, 3, 3_000)
    x = rng.normal(size=3_000) + 4.0 * (codes == 2)
    ev = class_view.class_evidence(pl.Series("x", x), codes, ["a", "b", "c"], binary=False,
                                   split="test")
    cut = ev["decisive_cut"]
    fpr, tpr, _ = roc_curve(codes == 2, x)
    assert cut["j"] == pytest.approx((tpr - fpr).max(), abs=1e-4)
    assert " of class 'c' rows and " in cut["statement"]
    assert cut["statement"].endswith(" of other-class rows")
    assert (cut["rows"], cut["sampled"]) == (3_000, False)
    assert ev["charts"][0]["title"] == "x in test by class"
    assert list(ev["charts"][0]["series"]) == ["class 'c'", "other-class"]
    monkeypatch.setattr(class_view, "MAX_ROWS", 1_000)  # a larger split: a seeded sample
    ev = class_view.class_evidence(pl.Series("x", x), codes, ["a", "b", "c"], binary=False,
                                   split="test")
    assert (ev["decisive_cut"]["rows"], ev["decisive_cut"]["sampled"]) == (1_000, True)
    assert ev["decisive_cut"]["j"] == pytest.approx(cut["j"], abs=0.05)


def test_an_id_column_does_not_cut_a_random_label():
    """Levels chosen and measured on the same rows would put every id's rows on the side of
    its own class (J = 1 for any label): measured on held-out rows, an id separates nothing."""
    rng = np.random.default_rng(4)
    y = rng.random(2_000) < 0.5
    ids = pl.Series("user", [f"u{i}" for i in range(2_000)])
    assert decisive_cut(ids, y, NAMES)["j"] < 0.05
    many = pl.Series("zip", rng.integers(0, 500, 2_000).astype(str))  # 500 noise levels
    assert decisive_cut(many, y, NAMES)["j"] < 0.15


def test_a_cut_is_written_so_that_every_row_stays_on_its_side():
    y = np.array([True] * 50 + [False] * 50)
    x = np.r_[np.full(50, 1234569.0), np.full(50, 1234570.5)]  # adjacent values 1.5 apart
    low, high = decisive_cut(pl.Series("fb", x), ~y, NAMES)["table"][:2]
    assert (low["rows"], high["rows"]) == ("<= 1234569", "> 1234569")
    x = np.r_[np.full(50, 0.1234561), np.full(50, 0.1234562)]
    assert decisive_cut(pl.Series("f", x), ~y, NAMES)["table"][0]["rows"] == "<= 0.1234561"
    flags = decisive_cut(pl.Series("b", y), y, NAMES)
    assert [r["rows"] for r in flags["table"]] == ["= False", "= True"]
    assert flags["statement"] == "b = True holds 100.0% of class 'yes' rows and 0% of class " \
                                 "'no' rows"
