"""leakage.single_feature_auc: AUC of each feature alone, fitted on train, missingness counted."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from auditor.core.config import Columns
from auditor.loading.data import AuditData, build_audit_data
from auditor.loading.demo import make_demo
from auditor.detectors.single_feature_auc import SingleFeatureAUC
from auditor.errors import NotApplicable
from auditor.stats.label import (encoded_figures, eval_ranked, eval_spearman, fit_ranked,
                                 fit_spearman, float_values, label_view,
                                 shared_rank_stats, spearman_aggs, target_encode, value_expr)
from auditor.engines.selection import engine_of
from auditor.report.results import Severity
from tests.conftest import clean_frame


def _data(frames, **roles) -> AuditData:
    return build_audit_data(frames, columns=Columns(**roles))


def _with_nulls(x: np.ndarray, mask: np.ndarray) -> pl.Series:
    return pl.Series(np.where(mask, np.nan, x)).fill_nan(None)


def _best_placement_auc(x: np.ndarray, pos: np.ndarray) -> float:
    """Brute force: the best AUC over both directions and every place of the missing block
    (below all values, between any two distinct values, above all), with sklearn."""
    miss = np.isnan(x)
    levels = np.unique(x[~miss])
    dense = np.searchsorted(levels, x[~miss]).astype(float)
    best = 0.0
    for place in np.arange(-0.5, levels.size, 1.0):
        s = np.empty(x.size)
        s[~miss], s[miss] = dense, place
        a = roc_auc_score(pos, s)
        best = max(best, a, 1 - a)
    return best


def _score_at(x: np.ndarray, cut: float, descending: bool) -> np.ndarray:
    """The score a fitted orientation gives: missing just above ``cut`` (NaN: below all)."""
    s = np.where(np.isnan(x), -np.inf if np.isnan(cut) else np.nextafter(cut, np.inf), x)
    return -s if descending else s


def _tied_with_nulls(rng, n, effect):
    y = rng.integers(0, 2, n)
    x = np.round(rng.normal(size=n) + effect * y, 1)
    miss = rng.random(n) < np.where(y == 1, 0.25, 0.05)
    return np.where(miss, np.nan, x), y


# --- the statistic against sklearn / scipy ------------------------------------------------

def test_binary_auc_matches_sklearn_over_every_missing_block_place_and_on_test():
    rng = np.random.default_rng(0)
    xtr, ytr = _tied_with_nulls(rng, 400, 0.6)
    xte, yte = _tied_with_nulls(rng, 200, 0.6)
    data = _data({"train": pl.DataFrame({"x": pl.Series(xtr).fill_nan(None), "y": ytr}),
                  "test": pl.DataFrame({"x": pl.Series(xte).fill_nan(None), "y": yte})},
                 label="y")
    view = label_view(data)
    st = {s: shared_rank_stats(data, view, s) for s in view.frames}
    train_auc, fit = fit_ranked(st["train"], view.targets)
    assert train_auc[0, 0] == pytest.approx(_best_placement_auc(xtr, ytr == 1), abs=1e-9)
    test_auc = eval_ranked(st["test"], view.targets, [xte], yte, 2, fit)
    expected = roc_auc_score(yte, _score_at(xte, fit.cut[0, 0], fit.descending[0, 0]))
    assert test_auc[0, 0] == pytest.approx(expected, abs=1e-9)


def test_without_missing_values_the_auc_is_direction_free_mann_whitney():
    rng = np.random.default_rng(1)
    x = np.round(rng.normal(size=300), 1)
    y = (rng.random(300) < 1 / (1 + np.exp(1.5 * x))).astype(int)  # lower x -> positive
    data = _data({"train": pl.DataFrame({"x": x, "y": y})}, label="y")
    view = label_view(data)
    auc, fit = fit_ranked(shared_rank_stats(data, view, "train"), view.targets)
    assert auc[0, 0] == pytest.approx(1 - roc_auc_score(y, x), abs=1e-9)
    assert fit.descending[0, 0] and np.isnan(fit.cut[0, 0])


def test_multiclass_macro_auc_is_the_mean_of_per_class_best_placements():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 450)
    x = np.round(rng.normal(size=450) + (y == 1) * 1.0 - (y == 2) * 0.5, 1)
    x[rng.random(450) < np.where(y == 2, 0.3, 0.05)] = np.nan
    data = _data({"train": pl.DataFrame({"x": pl.Series(x).fill_nan(None),
                                         "y": np.array(["a", "b", "c"])[y]})}, label="y")
    view = label_view(data)
    auc, _ = fit_ranked(shared_rank_stats(data, view, "train"), view.targets)
    expected = [_best_placement_auc(x, y == k) for k in range(3)]
    np.testing.assert_allclose(auc[:, 0], expected, atol=1e-9)


def test_numeric_label_spearman_matches_scipy_over_block_places_and_on_test():
    rng = np.random.default_rng(3)

    def split(n):
        y = rng.normal(size=n)
        x = np.round(y + rng.normal(size=n), 1)
        x[rng.random(n) < 0.15] = np.nan
        return x, y

    (xtr, ytr), (xte, yte) = split(300), split(150)
    data = _data({"train": pl.DataFrame({"x": pl.Series(xtr).fill_nan(None), "y": ytr}),
                  "test": pl.DataFrame({"x": pl.Series(xte).fill_nan(None), "y": yte})},
                 label="y")
    view = label_view(data)
    frames = view.frames
    aggs = {s: spearman_aggs(f, [value_expr("x", f.schema["x"])]) for s, f in frames.items()}
    rho, fit = fit_spearman(aggs["train"])
    miss = np.isnan(xtr)
    levels = np.unique(xtr[~miss])
    dense = np.searchsorted(levels, xtr[~miss]).astype(float)
    best = 0.0
    for place in np.arange(-0.5, levels.size, 1.0):
        s = np.empty(xtr.size)
        s[~miss], s[miss] = dense, place
        best = max(best, abs(spearmanr(s, ytr)[0]))
    assert rho[0, 0] == pytest.approx(best, abs=1e-9)
    got = eval_spearman(aggs["test"], [xte], fit)[0, 0]
    s = _score_at(xte, fit.cut[0, 0], fit.descending[0, 0])
    s = np.where(np.isinf(s), np.sign(s) * 1e300, s)
    assert got == pytest.approx(spearmanr(s, yte)[0], abs=1e-9)


def test_target_rate_encoding_matches_a_hand_computation_and_sklearn():
    rng = np.random.default_rng(4)
    levels = np.array(["a", "b", "c", "d", None], dtype=object)
    tr = rng.integers(0, 5, 500)
    ytr = (rng.random(500) < np.array([0.1, 0.3, 0.5, 0.7, 0.9])[tr]).astype(int)
    te = rng.integers(0, 5, 200)
    yte = (rng.random(200) < np.array([0.1, 0.3, 0.5, 0.7, 0.9])[te]).astype(int)
    test_vals = levels[te].copy()
    test_vals[:10] = "unseen"
    data = _data({"train": pl.DataFrame({"c": list(levels[tr]), "y": ytr}),
                  "test": pl.DataFrame({"c": list(test_vals), "y": yte})}, label="y")
    view = label_view(data)
    m, p = 20.0, ytr.mean()
    rate = {}
    for v in set(levels[tr]):
        sel = np.array([a == v for a in levels[tr]])
        rate[v] = (ytr[sel].sum() + m * p) / (sel.sum() + m)
    expected = np.array([rate.get(v, p) for v in test_vals])
    scores = target_encode(view, "c", smoothing=m, folds=5, seed=0)
    np.testing.assert_allclose(scores["test"].rows()[:, 0], expected, atol=1e-12)
    (auc,) = encoded_figures(view, "test", [scores["test"]])
    assert auc[0] == pytest.approx(roc_auc_score(yte, expected), abs=1e-9)
    # train: out-of-fold rates, same folds as the implementation (seeded)
    fold = np.random.default_rng([0, 7]).integers(0, 5, 500)
    codes = np.array([list(levels).index(v) for v in levels[tr]])
    oof = np.empty(500)
    for f in range(5):
        out = fold != f
        pf = ytr[out].mean()
        for k in range(5):
            sel = out & (codes == k)
            oof[(fold == f) & (codes == k)] = (ytr[sel].sum() + m * pf) / (sel.sum() + m)
    np.testing.assert_allclose(scores["train"].rows()[:, 0], oof, atol=1e-12)
    (auc,) = encoded_figures(view, "train", [scores["train"]])
    assert auc[0] == pytest.approx(roc_auc_score(ytr, oof), abs=1e-9)


def test_multiclass_encoding_auc_matches_sklearn_ovr_macro():
    rng = np.random.default_rng(5)
    def split(n):
        c = rng.integers(0, 6, n)
        y = np.where(rng.random(n) < 0.6, c % 3, rng.integers(0, 3, n))
        return pl.DataFrame({"c": np.array(list("pqrstu"))[c], "y": np.array(list("xyz"))[y]})
    data = _data({"train": split(600), "test": split(300)}, label="y")
    view = label_view(data)
    scores = target_encode(view, "c", smoothing=20.0, folds=5, seed=0)
    rows = scores["test"].rows()
    assert np.allclose(rows.sum(1), 1.0)  # smoothed class rates are probabilities
    (per_class,) = encoded_figures(view, "test", [scores["test"]])
    expected = roc_auc_score(view.y("test"), rows, multi_class="ovr", average="macro")
    assert per_class.mean() == pytest.approx(expected, abs=1e-9)


def test_float_values_read_datetimes_as_microseconds_and_nan_as_missing():
    f = pl.DataFrame({"t": pl.Series([0, None, 5_000_000], dtype=pl.Int64)
                      .cast(pl.Datetime("us")), "x": [1.0, float("nan"), None]})
    np.testing.assert_array_equal(float_values(f, "t"), [0.0, np.nan, 5e6])
    assert np.isnan(float_values(f, "x")[1:]).all()


# --- planted problems ---------------------------------------------------------------------

def _churn(n: int, seed: int, offset: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    df = clean_frame(n, seed, offset)
    y = df["y"].to_numpy()
    days = np.where(y == 1, rng.integers(0, 45, n).astype(float), np.nan)
    status = np.where((y == 1) & (rng.random(n) < 0.97), "cancelled",
                      rng.choice(["active", "paused", "trial"], n))
    hidden = np.where((y == 1) & (rng.random(n) < 0.9) | (rng.random(n) < 0.02), np.nan,
                      rng.normal(size=n))
    return df.with_columns(days_since_cancel=pl.Series(days).fill_nan(None),
                           status=pl.Series(status),
                           only_missing=pl.Series(hidden).fill_nan(None))


def test_planted_leaks_are_found_with_their_subject():
    data = _data({"train": _churn(3000, 1), "test": _churn(800, 2, 10_000)}, label="y",
                 ids=["row_id"])
    findings = SingleFeatureAUC().run(data)
    by = {f.subject: f for f in findings if f.subject}
    f = by["days_since_cancel"]
    assert f.severity == Severity.FAIL and f.value == pytest.approx(1.0, abs=1e-9)
    assert f.splits == ["train", "test"] and f.count == 800
    assert f.metric == "single_feature_auc" and f.threshold == 0.95
    assert "missing in" in f.message and f.message.startswith("days_since_cancel alone")
    assert by["status"].severity == Severity.FAIL and by["status"].value > 0.95
    assert by["only_missing"].severity in (Severity.WARN, Severity.FAIL)
    assert by["only_missing"].value > 0.9
    assert {"x2", "cat", "row_id"}.isdisjoint(by)  # uninformative columns are not flagged


def test_flagged_features_carry_a_ci_and_roc_curves_per_split():
    data = _data({"train": _churn(3000, 1), "val": _churn(500, 3, 5000),
                  "test": _churn(800, 2, 10_000)}, label="y")
    f = next(f for f in SingleFeatureAUC(n_boot=100).run(data) if f.subject == "status")
    rows = {r["split"]: r for r in f.evidence["splits"]}
    graded = rows[f.splits[-1]]
    assert graded["ci_low"] <= f.value + 1e-4 and graded["ci_high"] >= f.value - 0.02
    curves = f.evidence["chart"]["curves"]
    assert f.evidence["chart"]["type"] == "roc" and len(curves) == 3
    assert all(len(c["fpr"]) <= 200 and c["fpr"][0] == 0 for c in curves.values())


def test_an_id_sorted_by_label_warns_and_never_fails():
    train = clean_frame(2000, 1).sort("y").with_columns(row_id=pl.int_range(0, 2000))
    data = _data({"train": train, "test": clean_frame(500, 2, 10_000)}, label="y",
                 ids=["row_id"])
    f = next(f for f in SingleFeatureAUC().run(data) if f.subject == "row_id")
    assert f.severity == Severity.WARN and f.value == pytest.approx(1.0)
    assert f.splits == ["train"] and f.message.startswith("identifier row_id carries label")


def test_a_string_id_sorted_by_label_is_found_on_a_sample():
    def string_ids(df: pl.DataFrame) -> pl.DataFrame:
        return df.with_columns(row_id=pl.format("R{}", pl.int_range(0, df.height)
                                                .cast(pl.String).str.zfill(6)))
    train = string_ids(clean_frame(3000, 1).sort("y"))
    data = _data({"train": train, "test": string_ids(clean_frame(500, 2))}, label="y",
                 ids=["row_id"])
    f = next(f for f in SingleFeatureAUC(id_sample_rows=1000).run(data)
             if f.subject == "row_id")
    assert f.severity == Severity.WARN and f.count == 1000 and f.value > 0.99


def test_multiclass_and_numeric_labels_use_their_metrics():
    rng = np.random.default_rng(6)
    n = 1500
    cls = rng.integers(0, 3, n)
    # class "b" sits in the middle of the leak's range: binned encoding still separates it
    frame = pl.DataFrame({"x": rng.normal(size=n), "leak": cls * 2.0 + rng.normal(size=n) * 0.1,
                          "y": np.array(["a", "b", "c"])[cls]})
    f = next(f for f in SingleFeatureAUC().run(_data({"train": frame[:1000],
                                                      "test": frame[1000:]}, label="y"))
             if f.subject)
    assert (f.subject, f.metric, f.severity) == ("leak", "single_feature_macro_auc",
                                                 Severity.FAIL)
    y = rng.normal(size=n)
    frame = pl.DataFrame({"x": rng.normal(size=n), "leak": -y + rng.normal(size=n) * 0.01,
                          "y": y})
    f = next(f for f in SingleFeatureAUC().run(_data({"train": frame[:1000],
                                                      "test": frame[1000:]}, label="y"))
             if f.subject)
    assert (f.subject, f.metric, f.severity) == ("leak", "abs_spearman", Severity.FAIL)
    graded = next(r for r in f.evidence["splits"] if r["ci_low"] is not None)
    assert "chart" not in f.evidence and graded["ci_low"] > 0.99


def test_the_demo_days_since_cancel_fails():
    data = _data(make_demo(), label="churned", time="signup_ts", groups=["customer_id"],
                 ids=["row_id"], text=["notes"])
    failed = [f.subject for f in SingleFeatureAUC().run(data) if f.severity == Severity.FAIL]
    assert failed == ["days_since_cancel"]


# --- clean data ---------------------------------------------------------------------------

def _clean_mix(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    df = clean_frame(n, seed, seed * 100_000)
    return df.with_columns(
        heavy=pl.Series(rng.standard_cauchy(n)),
        many=pl.Series([f"u{v}" for v in rng.integers(0, 3000, n)]),
        holes=pl.Series(np.where(rng.random(n) < 0.05, np.nan, rng.normal(size=n)))
        .fill_nan(None),
        cat_holes=pl.Series(rng.choice(["a", "b", None], n, p=[0.5, 0.45, 0.05])),
        when=pl.datetime_range(pl.datetime(2025, 1, 1), pl.datetime(2025, 1, 1) +
                               pl.duration(minutes=n - 1), "1m", eager=True))


def test_clean_splits_raise_nothing_above_info():
    data = _data({"train": _clean_mix(4000, 1), "val": _clean_mix(1000, 2),
                  "test": _clean_mix(1000, 3)}, label="y", ids=["row_id"])
    findings = SingleFeatureAUC().run(data)
    assert [f.severity for f in findings] == [Severity.INFO]
    overview = findings[0]
    assert overview.metric == "max_single_feature_auc" and overview.count == 0
    assert overview.message.startswith("0 of 8 features (0%) alone reach AUC > 0.85")
    assert len(overview.evidence["top_features"]) == 8
    assert overview.evidence["chart"]["lines"] == [0.85, 0.95]


# --- edge cases ---------------------------------------------------------------------------

def test_constant_and_all_null_columns_score_one_half():
    def odd(df: pl.DataFrame) -> pl.DataFrame:
        return df.with_columns(const=pl.lit(3.0), empty=pl.lit(None, dtype=pl.Float64),
                               weird=pl.Series([float("nan"), float("inf"), float("-inf"),
                                                1.0] * (df.height // 4)))
    data = _data({"train": odd(clean_frame(500, 1)), "test": odd(clean_frame(200, 2, 1000))},
                 label="y")
    findings = SingleFeatureAUC().run(data)
    assert [f.severity for f in findings] == [Severity.INFO]
    table = {r["feature"]: r for r in findings[-1].evidence["top_features"]}
    assert table["const"]["train (in-train)"] == 0.5 and table["const"]["test"] == 0.5
    assert table["empty"]["train (in-train)"] == 0.5
    assert 0.4 < table["weird"]["test"] < 0.6


def test_single_class_and_missing_label_are_not_applicable():
    frame = clean_frame(100, 1).with_columns(y=pl.lit(1))
    with pytest.raises(NotApplicable, match=r"single class \(1\) in every split"):
        SingleFeatureAUC().run(_data({"train": frame, "test": frame}, label="y"))
    mixed = clean_frame(100, 2)
    with pytest.raises(NotApplicable, match="single class .* in train"):
        SingleFeatureAUC().run(_data({"train": frame, "test": mixed}, label="y"))
    with pytest.raises(NotApplicable, match="no label column declared"):
        SingleFeatureAUC().run(_data({"train": frame}))


def test_one_split_grades_the_in_train_figure():
    data = _data({"train": _churn(1000, 1)}, label="y")
    f = next(f for f in SingleFeatureAUC().run(data) if f.subject == "days_since_cancel")
    assert f.severity == Severity.FAIL and f.splits == ["train"]
    assert "in train (in-train)" in f.message


def test_runs_are_deterministic():
    frames = {"train": _churn(1500, 1), "test": _churn(400, 2, 9000)}
    a = SingleFeatureAUC(n_boot=50).run(_data(frames, label="y"))
    b = SingleFeatureAUC(n_boot=50).run(_data(frames, label="y"))
    assert a == b


def test_invalid_parameters_are_rejected():
    with pytest.raises(ValueError, match="fail_above must be an AUC in"):
        SingleFeatureAUC(fail_above=1.5)
    with pytest.raises(ValueError, match="warn_above must be <= fail_above"):
        SingleFeatureAUC(warn_above=0.99)
    with pytest.raises(ValueError, match=r"folds must be an integer in \[2, 100\]; got 1"):
        SingleFeatureAUC(folds=1)


# --- grading in context (auditor.judging.leak_rules) ----------------------------------------------

def _family(n: int, seed: int) -> pl.DataFrame:
    """Five noisy measurements of one latent size that drives the label (like breast cancer's
    radius / perimeter / area): each alone reaches AUC ~0.97, none is a leak."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-6 * z))).astype(np.int64)
    cols = {f"size_{k}": z + rng.normal(size=n) * 0.2 for k in range(5)}  # rho ~0.96: not copies
    return pl.DataFrame({**cols, "other": rng.normal(size=n), "y": y})


def _singular(n: int, seed: int, effect: float = 3.2) -> pl.DataFrame:
    """One column (a departure delay for a very-late-arrival label) far above weak features;
    effect 3.2: AUC ~0.99 but no cut isolates 90% of a class at 1% of the other."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pl.DataFrame({"a": rng.normal(size=n) + 0.3 * y, "b": rng.normal(size=n) + 0.3 * y,
                         "c": rng.normal(size=n), "delay": rng.normal(size=n) + effect * y,
                         "y": y})


def test_a_family_of_strong_correlated_features_warns_and_says_why():
    data = _data({"train": _family(3000, 1), "test": _family(1000, 2)}, label="y")
    flagged = [f for f in SingleFeatureAUC(n_boot=50).run(data) if f.subject]
    assert sorted(f.subject for f in flagged) == [f"size_{k}" for k in range(5)]
    assert all(f.severity == Severity.WARN for f in flagged)
    assert max(f.value for f in flagged) > 0.95  # above fail_above, still only a warning
    g = flagged[0].evidence["grading"]
    assert g["rule"] == "strong_not_singular" and g["features_within_gap"] == 4
    assert g["pure_region"]["share"] < 0.9
    assert "strong but not singular: 4 other features reach AUC" in flagged[0].message
    assert flagged[0].message.endswith("graded warn")


def test_a_single_column_far_above_the_rest_fails_as_singular():
    data = _data({"train": _singular(3000, 1), "test": _singular(1000, 2)}, label="y")
    (f,) = [f for f in SingleFeatureAUC(n_boot=50).run(data) if f.subject]
    g = f.evidence["grading"]
    assert (f.subject, f.severity, g["rule"]) == ("delay", Severity.FAIL, "singular")
    assert 0.97 < f.value < 0.995 and g["pure_region"]["share"] < 0.9  # not near-deterministic
    assert g["runner_up"]["feature"] in ("a", "b") and f.value - g["runner_up"]["value"] > 0.15
    assert g["ci_low"] > 0.95 and "with 95% confidence" in f.message


def test_a_single_dominant_column_below_fail_above_only_warns():
    # one honest dominant predictor (Boston's lstat, OJ's brand loyalty) looks like this
    data = _data({"train": _singular(3000, 1, 1.9), "test": _singular(1000, 2, 1.9)},
                 label="y")
    (f,) = [f for f in SingleFeatureAUC(n_boot=50).run(data) if f.subject]
    assert (f.subject, f.severity, f.evidence["grading"]["rule"]) == (
        "delay", Severity.WARN, "singular")
    assert 0.9 < f.value < 0.95 and "but not above fail_above 0.95" in f.message


def test_a_leak_and_its_copy_are_one_signal_and_fail_as_singular():
    def with_copy(df: pl.DataFrame) -> pl.DataFrame:  # the same field twice (a monotone map)
        return df.with_columns(delay_hours=(pl.col("delay") / 60).exp())
    data = _data({"train": with_copy(_singular(3000, 1)), "test": with_copy(_singular(1000, 2))},
                 label="y")
    flagged = {f.subject: f for f in SingleFeatureAUC(n_boot=50).run(data) if f.subject}
    assert set(flagged) == {"delay", "delay_hours"}
    for name, other in (("delay", "delay_hours"), ("delay_hours", "delay")):
        f = flagged[name]
        assert f.severity == Severity.FAIL and f.evidence["grading"]["rule"] == "singular"
        assert f.evidence["grading"]["copies_not_counted"] == {other: 1.0}
        assert f"copies of it not counted: {other} (|rho| 1.000)" in f.message


def test_planted_leaks_are_graded_by_the_rule_that_explains_them():
    data = _data({"train": _churn(3000, 1), "test": _churn(800, 2, 10_000)}, label="y",
                 ids=["row_id"])
    by = {f.subject: f for f in SingleFeatureAUC(n_boot=50).run(data) if f.subject}
    days = by["days_since_cancel"].evidence["grading"]
    assert days["rule"] == "post_outcome_missingness"
    assert days["missing"] == {"class": "0", "share_of_class": 1.0,
                               "share_of_other_class": 0.0}
    status = by["status"].evidence["grading"]  # 'cancelled' only for churners
    assert status["rule"] == "near_deterministic" and status["pure_region"]["share"] > 0.95
    # only_missing's peers (days_since_cancel, status) are recodings of the label that say
    # nothing about it within a class: no family supports it
    assert by["only_missing"].evidence["grading"]["rule"] == "independent_peers"


def test_a_label_that_is_a_function_of_the_date_fails_on_the_time_column():
    rng = np.random.default_rng(4)
    n = 2000
    when = pl.datetime_range(pl.datetime(2024, 1, 1), pl.datetime(2024, 1, 1) +
                             pl.duration(hours=n - 1), "1h", eager=True)
    y = (np.arange(n) >= 1400).astype(np.int64)  # e.g. "after the policy change"
    frame = pl.DataFrame({"when": when, "x": rng.normal(size=n), "y": y})
    order = rng.permutation(n)  # a random split
    data = _data({"train": frame[order[:1500]], "test": frame[order[1500:]]}, label="y",
                 time="when")
    findings = SingleFeatureAUC(n_boot=50).run(data)
    (f,) = [f for f in findings if f.subject]
    assert (f.subject, f.severity, f.value) == ("when", Severity.FAIL, 1.0)
    assert f.message.startswith("time column when alone separates y=1 from 0 with AUC 1.000")
    assert "the label is nearly a function of the date" in f.message
    assert f.evidence["grading"]["rule"] == "time_column"
    assert "when" not in [r["feature"] for r in findings[-1].evidence["top_features"]]


def test_an_ordinary_trend_over_time_does_not_flag_the_time_column():
    rng = np.random.default_rng(5)
    n = 3000
    when = pl.datetime_range(pl.datetime(2024, 1, 1), pl.datetime(2024, 1, 1) +
                             pl.duration(hours=n - 1), "1h", eager=True)
    p = 0.3 + 0.3 * np.arange(n) / n  # the positive rate drifts from 30% to 60%
    frame = pl.DataFrame({"when": when, "x": rng.normal(size=n),
                          "y": (rng.random(n) < p).astype(np.int64)})
    data = _data({"train": frame[:2200], "test": frame[2200:]}, label="y", time="when")
    findings = SingleFeatureAUC(n_boot=50).run(data)
    assert [f.severity for f in findings] == [Severity.INFO]


def test_an_undeclared_identifier_in_outcome_order_fails_and_is_named_id_like():
    train = clean_frame(2000, 1).sort("y").with_columns(ref=pl.int_range(0, 2000))
    test = clean_frame(500, 2).sort("y").with_columns(ref=pl.int_range(5000, 5500))
    (f,) = [f for f in SingleFeatureAUC(n_boot=50).run(_data({"train": train, "test": test},
                                                             label="y")) if f.subject]
    assert (f.subject, f.severity) == ("ref", Severity.FAIL)
    assert f.evidence["grading"]["id_like"] is True
    assert "ref is unique per train row, like an identifier" in f.message


def test_a_multiclass_label_of_periods_fails_on_the_binned_time_column():
    # classes = early / middle / late period: one-vs-rest ranks miss the middle one, bins do not
    rng = np.random.default_rng(6)
    n = 1200
    when = pl.datetime_range(pl.datetime(2024, 1, 1), pl.datetime(2024, 1, 1) +
                             pl.duration(hours=n - 1), "1h", eager=True)
    frame = pl.DataFrame({"when": when, "x": rng.normal(size=n),
                          "y": np.array(["early", "middle", "late"])[np.arange(n) * 3 // n]})
    order = rng.permutation(n)
    data = _data({"train": frame[order[:900]], "test": frame[order[900:]]}, label="y",
                 time="when")
    (f,) = [f for f in SingleFeatureAUC(n_boot=30).run(data) if f.subject]
    assert (f.subject, f.severity, f.metric) == ("when", Severity.FAIL,
                                                 "single_feature_macro_auc")
    assert f.value > 0.99


def test_a_strong_trend_warns_on_the_time_column_and_says_whether_the_split_is_by_time():
    rng = np.random.default_rng(8)
    n = 3000
    when = pl.datetime_range(pl.datetime(2024, 1, 1), pl.datetime(2024, 1, 1) +
                             pl.duration(hours=n - 1), "1h", eager=True)
    p = 1 / (1 + np.exp(-8 * (np.arange(n) / n - 0.5)))  # a steep but noisy trend
    frame = pl.DataFrame({"when": when, "x": rng.normal(size=n),
                          "y": (rng.random(n) < p).astype(np.int64)})
    order = rng.permutation(n)
    for frames, tail in (({"train": frame[order[:2200]], "test": frame[order[2200:]]},
                          "; a random split hides it: prefer a split by time"),
                         ({"train": frame[:2200], "test": frame[2200:]},
                          "; the splits are cut by time, so later splits test the trend")):
        (f,) = [f for f in SingleFeatureAUC(n_boot=30).run(_data(frames, label="y",
                                                                  time="when")) if f.subject]
        assert (f.subject, f.severity) == ("when", Severity.WARN) and 0.85 < f.value <= 0.95
        assert f.message.endswith("a strong trend of the label over time" + tail)


# --- a cluster of leaks must not vouch for itself (independent_peers) ------------------------

def _leak_cluster(n: int, seed: int, effects=(2.7, 2.9, -2.8), honest: float = 0.0
                  ) -> pl.DataFrame:
    """Weak features, optionally a family of four honest measurements of one latent (AUC
    ~0.88 each), and post-outcome fields each computed from the label with its own noise
    (AUC 0.97-0.98 each, no cut isolating 90% of a class)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.int64)
    cols = {f"x{i}": rng.normal(size=n) + 0.3 * y * (i < 3) for i in range(6)}
    if honest:
        latent = rng.normal(size=n) + honest * y
        cols |= {f"honest{k}": latent + rng.normal(size=n) * 0.35 for k in range(4)}
    cols |= {f"leak{k}": rng.normal(size=n) + e * y for k, e in enumerate(effects)}
    return pl.DataFrame({**cols, "y": y})


@pytest.mark.parametrize("k", [2, 3])
def test_two_or_three_label_derived_columns_all_fail_though_each_has_strong_peers(k):
    # before the independent_peers rule each leak counted the others as its "family" and
    # all of them only warned as strong_not_singular
    effects = (2.7, 2.9, -2.8)[:k]
    data = _data({"train": _leak_cluster(4000, 1, effects), "test":
                  _leak_cluster(1300, 2, effects)}, label="y")
    flagged = {f.subject: f for f in SingleFeatureAUC(n_boot=50).run(data) if f.subject}
    assert sorted(flagged) == [f"leak{j}" for j in range(k)]
    for f in flagged.values():
        g = f.evidence["grading"]
        assert (f.severity, g["rule"]) == (Severity.FAIL, "independent_peers"), f.message
        assert 0.96 < f.value < 0.99 and g["pure_region"]["share"] < 0.9
        assert g["features_within_gap"] == k - 1 and g["related_within_gap"] == 0
        assert max(g["relations"].values()) < 0.1 and g["ci_low"] > 0.95
        assert "to it only through the label (|partial rho| given the label" in f.message


def test_a_leak_above_an_honest_family_fails_and_the_family_only_warns():
    data = _data({"train": _leak_cluster(4000, 3, (2.6,), honest=1.7),
                  "test": _leak_cluster(1300, 4, (2.6,), honest=1.7)}, label="y")
    flagged = {f.subject: f for f in SingleFeatureAUC(n_boot=50).run(data) if f.subject}
    leak = flagged.pop("leak0")
    g = leak.evidence["grading"]
    assert (leak.severity, g["rule"]) == (Severity.FAIL, "independent_peers"), leak.message
    assert g["features_within_gap"] >= 1 and g["related_within_gap"] == 0  # gap < 0.15
    assert sorted(flagged) == [f"honest{k}" for k in range(4)]
    for f in flagged.values():  # each has three honest relatives within the gap
        g = f.evidence["grading"]
        assert (f.severity, g["rule"]) == (Severity.WARN, "strong_not_singular")
        assert g["related_within_gap"] == 3 and 0.85 < f.value < 0.92


def test_two_label_derived_columns_of_a_multiclass_label_fail():
    rng = np.random.default_rng(5)

    def frame(n):
        y = rng.integers(0, 3, n)
        return pl.DataFrame({"x": rng.normal(size=n), "s1": rng.normal(size=n) + 2.5 * y,
                             "s2": rng.normal(size=n) - 2.5 * y,
                             "y": np.array(["a", "b", "c"])[y]})
    data = _data({"train": frame(4000), "test": frame(1300)}, label="y")
    flagged = {f.subject: f for f in SingleFeatureAUC(n_boot=50).run(data) if f.subject}
    assert sorted(flagged) == ["s1", "s2"]
    assert all(f.severity == Severity.FAIL and f.evidence["grading"]["rule"] ==
               "independent_peers" for f in flagged.values())



def _prices(n: int, seed: int, noise: float) -> pl.DataFrame:
    """House sales over 20 years: price = size * 1.08^years * lognormal noise; ``size`` is
    the honest feature, and inflation makes the sale date rank the price at |rho| ~0.97."""
    rng = np.random.default_rng(seed)
    days = np.sort(rng.integers(0, 365 * 20, n))
    size = rng.normal(100, 10, n)
    price = size * 1.08 ** (days / 365) * np.exp(rng.normal(0, noise, n))
    return pl.DataFrame({"days": days, "size": size, "price": price}).select(
        (pl.datetime(2000, 1, 1) + pl.duration(days=pl.col("days"))).alias("sold"),
        "size", "price")


def test_a_trending_numeric_label_warns_on_the_time_column_and_never_fails():
    # before: |rho| 0.96-0.98 > fail_above 0.95 failed "the label is nearly a function of the
    # date" for an ordinary inflation trend, in a time split and in a random split
    frame = _prices(3000, 9, 0.0)
    rng = np.random.default_rng(1)
    order = rng.permutation(frame.height)
    for frames in ({"train": frame[:2250], "test": frame[2250:]},
                   {"train": frame[order[:2250]], "test": frame[order[2250:]]}):
        (f,) = [f for f in SingleFeatureAUC(n_boot=30).run(_data(frames, label="price",
                                                                  time="sold")) if f.subject]
        assert (f.subject, f.severity, f.metric) == ("sold", Severity.WARN, "abs_spearman")
        assert 0.95 < f.value < 0.995
        ref = abs(spearmanr(frames["train"]["sold"].to_physical(),
                            frames["train"]["price"])[0])
        assert f.evidence["splits"][0]["value"] == pytest.approx(ref, abs=1e-4)
        assert "deterministic_above" in f.evidence["grading"]["reason"]


def test_a_numeric_label_fixed_by_the_date_fails_on_the_time_column():
    # a label computed from the date (days of tenure at the export date, an index level)
    frame = _prices(3000, 10, 0.0).with_columns(
        price=pl.col("sold").dt.epoch("d").cast(pl.Float64) * 2.0 + 5)
    order = np.random.default_rng(2).permutation(frame.height)
    data = _data({"train": frame[order[:2250]], "test": frame[order[2250:]]}, label="price",
                 time="sold")
    (f,) = [f for f in SingleFeatureAUC(n_boot=30).run(data) if f.subject]
    assert (f.subject, f.severity, f.threshold) == ("sold", Severity.FAIL, 0.995)
    assert f.value == pytest.approx(1.0) and "nearly a function of the date" in f.message


def _coded(n: int, seed: int, shared: bool) -> pl.DataFrame:
    """Two status codes of a three-class label (three levels per class, 8% of rows any
    level). ``shared``: the second code is the first one's sub-level relabelled (one process,
    a family beyond the label); else each code picks its sub-level on its own (two fields
    written from the outcome)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)

    def code(prefix: str, sub: np.ndarray) -> np.ndarray:
        levels = np.array([[f"{prefix}{k}{j}" for j in range(3)] for k in range(3)])
        noise = rng.random(n) < 0.08
        return np.where(noise, levels[rng.integers(0, 3, n), rng.integers(0, 3, n)],
                        levels[y, sub])
    sub = rng.integers(0, 3, n)
    return pl.DataFrame({"x": rng.normal(size=n), "code_a": code("a", sub),
                         "code_b": code("b", sub if shared else rng.integers(0, 3, n)),
                         "y": np.array(["p", "q", "r"])[y]})


def test_two_categorical_codes_of_a_multiclass_label_are_judged_by_their_relation():
    # before, a categorical peer of a multiclass label was "not measurable" and counted as
    # support: two status codes written from the outcome vouched for one another and warned
    data = _data({"train": _coded(4000, 1, False), "test": _coded(1300, 2, False)}, label="y")
    flagged = {f.subject: f for f in SingleFeatureAUC(n_boot=50).run(data) if f.subject}
    assert sorted(flagged) == ["code_a", "code_b"]
    for f in flagged.values():
        g = f.evidence["grading"]
        assert g["rule"] == "independent_peers" and max(g["relations"].values()) < 0.1
    assert Severity.FAIL in {f.severity for f in flagged.values()}
    # the same codes sharing their sub-level (one process): a family, warn
    data = _data({"train": _coded(4000, 1, True), "test": _coded(1300, 2, True)}, label="y")
    flagged = {f.subject: f for f in SingleFeatureAUC(n_boot=50).run(data) if f.subject}
    for f in flagged.values():
        g = f.evidence["grading"]
        assert (f.severity, g["rule"]) == (Severity.WARN, "strong_not_singular")
        assert max(g["relations"].values()) > 0.3


def test_a_clean_cut_on_a_small_class_is_not_near_deterministic():
    # like mtcars' weight vs transmission (24 rows): 13 of 14 class-0 rows below a cut that
    # holds no class-1 row, AUC 0.957 next to a related peer: chance on this few rows
    x = np.r_[np.arange(1, 14), 20, np.arange(14, 20), np.arange(21, 25)].astype(float)
    y = np.r_[np.zeros(14, int), np.ones(10, int)]
    p = x + np.random.default_rng(0).normal(0, 4, 24)
    data = _data({"train": pl.DataFrame({"x": x, "p": p, "y": y})}, label="y")

    def graded(check):
        return {f.subject: f for f in check.run(data) if f.subject in ("x", "p")}

    old = graded(SingleFeatureAUC(min_pure_rows=1))["x"]  # no row floor: the old verdict
    assert old.value == pytest.approx(roc_auc_score(y, x), abs=1e-4)
    assert (old.severity, old.evidence["grading"]["rule"]) == (Severity.FAIL,
                                                                "near_deterministic")
    assert old.evidence["grading"]["pure_region"]["share"] == pytest.approx(13 / 14, abs=1e-4)
    new = graded(SingleFeatureAUC())  # default min_pure_rows 30 > the 10 class-1 rows
    assert {k: (f.severity, f.evidence["grading"]["rule"]) for k, f in new.items()} == {
        "x": (Severity.WARN, "strong_not_singular"), "p": (Severity.WARN, "strong_not_singular")}
    assert "smaller class has 10 train rows (< min_pure_rows 30)" in new["x"].message
    with pytest.raises(ValueError, match="min_pure_rows must be an integer >= 1"):
        SingleFeatureAUC(min_pure_rows=0)


def test_a_missing_block_fitted_at_minus_infinity_scores_rows_as_the_auc_counts_them():
    """Negatives hold -inf in 30% of rows and most missing values: the missing block is best
    placed just above -inf. The test AUC (from counts at train's cuts), the per-row scores
    behind the CI and ROC (oriented_scores) and sklearn on those scores must agree -- an
    infinite cut once meant "above every value" whatever its sign in the scores, which left
    the CI far from the figure it bounds."""
    from auditor.stats.label import YCOL, oriented_scores

    def part(n: int, seed: int) -> pl.DataFrame:
        rng = np.random.default_rng(seed)
        y = (rng.random(n) < 0.5).astype(np.int64)
        x = rng.normal(size=n) + 0.3 * y
        x[(y == 0) & (rng.random(n) < 0.3)] = -np.inf
        x[rng.random(n) < np.where(y == 1, 0.03, 0.3)] = np.nan
        return pl.DataFrame({"x": x, "y": y})

    data = _data({"train": part(2000, 1), "test": part(1000, 2)}, label="y")
    check = SingleFeatureAUC(n_boot=50, warn_above=0.7, fail_above=0.99)
    measures = check.measure(engine_of(data), data.roles)
    (sc,) = [s for s in measures.scored if s.column == "x"]
    assert sc.fit.cut[0, 0] == -np.inf
    view = label_view(data)
    for split in ("train", "test"):
        frame = view.frames[split]
        scores = oriented_scores(frame, "x", sc.fit, sc.index)[:, 0]
        assert sc.values[split] == pytest.approx(
            roc_auc_score(frame[YCOL].to_numpy(), scores), abs=1e-9), split
    (f,) = [f for f in check.judge(measures) if f.subject == "x"]
    row = next(r for r in f.evidence["splits"] if r["ci_low"] is not None)
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
