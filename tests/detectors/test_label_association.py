"""leakage.feature_label_correlation: per-type association measures and train-only leaks."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import chi2_contingency, pearsonr, spearmanr

from auditor.core.config import Columns
from auditor.loading.data import AuditData, build_audit_data
from auditor.loading.demo import make_demo
from auditor.detectors.label_association import FeatureLabelAssociation
from auditor.errors import NotApplicable
from auditor.stats.label import label_view, level_codes
from auditor.stats.numerics import cramers_v, cramers_v_interval, ratio_interval
from auditor.report.results import Severity
from auditor.engines.selection import engine_of
from tests.conftest import clean_frame


def _data(frames, **roles) -> AuditData:
    return build_audit_data(frames, columns=Columns(**roles))


def _measures(data: AuditData, split: str = "train", check=None):
    """One split's measures, as the check measures them on the polars engine."""
    check = check or FeatureLabelAssociation()
    return check.measure(engine_of(data), data.roles).per_split[split]


def _v_reference(a, b) -> float:
    """Bias-corrected Cramér's V from scipy's chi-square (no continuity correction)."""
    _, ia = np.unique(np.asarray(a, dtype=str), return_inverse=True)
    _, ib = np.unique(np.asarray(b, dtype=str), return_inverse=True)
    table = np.zeros((ia.max() + 1, ib.max() + 1))
    np.add.at(table, (ia, ib), 1)
    chi2 = chi2_contingency(table, correction=False)[0]
    n = table.sum()
    r, k = table.shape
    phi2c = max(0.0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
    rc, kc = r - (r - 1) ** 2 / (n - 1), k - (k - 1) ** 2 / (n - 1)
    return float(np.sqrt(phi2c / min(rc - 1, kc - 1)))


def _eta_reference(groups, values) -> float:
    groups, values = np.asarray(groups, dtype=str), np.asarray(values, dtype=float)
    mean = values.mean()
    between = sum((groups == g).sum() * (values[groups == g].mean() - mean) ** 2
                  for g in np.unique(groups))
    return float(np.sqrt(between / ((values - mean) ** 2).sum()))


# --- measures against scipy ---------------------------------------------------------------

def test_binary_label_pearson_spearman_missingness_and_cramers_v_match_scipy():
    rng = np.random.default_rng(0)
    n = 400
    y = rng.integers(0, 2, n)
    x = np.round(rng.normal(size=n) + 0.8 * y, 1)
    x[rng.random(n) < np.where(y == 1, 0.3, 0.1)] = np.nan
    ts = (1_700_000_000_000_000 + rng.integers(0, 10**9, n) + y * 10**8).astype("datetime64[us]")
    cat = rng.choice(["a", "b", "c", None], n)
    data = _data({"train": pl.DataFrame({"x": pl.Series(x).fill_nan(None), "ts": ts,
                                         "cat": list(cat), "y": y})}, label="y")
    m = _measures(data)
    ok = ~np.isnan(x)
    assert m["x"]["pearson"] == pytest.approx(pearsonr(x[ok], y[ok])[0], abs=1e-9)
    assert m["x"]["spearman"] == pytest.approx(spearmanr(x[ok], y[ok])[0], abs=1e-9)
    assert m["x"]["missingness"] == pytest.approx(_v_reference(np.isnan(x), y), abs=1e-9)
    assert m["x"]["with_value"] == ok.sum() and m["x"]["rows"] == n
    t = ts.astype(np.int64).astype(float)
    assert m["ts"]["pearson"] == pytest.approx(pearsonr(t, y)[0], abs=1e-9)
    assert m["ts"]["spearman"] == pytest.approx(spearmanr(t, y)[0], abs=1e-9)
    assert m["cat"]["cramers_v"] == pytest.approx(_v_reference(cat, y), abs=1e-9)


def test_multiclass_label_eta_and_cramers_v_match_hand_computations():
    rng = np.random.default_rng(1)
    n = 500
    y = rng.choice(["p", "q", "r"], n)
    x = rng.normal(size=n) + (y == "q") * 0.7
    few = rng.integers(0, 4, n) + (y == "r")  # numeric with 5 levels: measured as levels too
    cat = np.where(rng.random(n) < 0.3, y, rng.choice(["p", "q", "r", "s"], n))
    data = _data({"train": pl.DataFrame({"x": x, "few": few, "cat": cat, "y": y})}, label="y")
    m = _measures(data)
    assert m["x"]["eta"] == pytest.approx(_eta_reference(y, x), abs=1e-9)
    assert m["few"]["cramers_v"] == pytest.approx(_v_reference(few, y), abs=1e-9)
    assert m["few"]["eta"] == pytest.approx(_eta_reference(y, few), abs=1e-9)
    assert m["cat"]["cramers_v"] == pytest.approx(_v_reference(cat, y), abs=1e-9)
    assert "pearson" not in m["x"]


def test_numeric_label_pearson_spearman_eta_and_missingness_match_scipy():
    rng = np.random.default_rng(2)
    n = 300
    y = rng.standard_t(3, n)
    x = np.round(y + rng.normal(size=n), 1)
    x[rng.random(n) < 0.2] = np.nan
    cat = rng.choice(["a", "b", None], n)
    flag = rng.random(n) < 0.4
    data = _data({"train": pl.DataFrame({"x": pl.Series(x).fill_nan(None), "cat": list(cat),
                                         "flag": flag, "y": y})}, label="y")
    m = _measures(data)
    ok = ~np.isnan(x)
    assert m["x"]["pearson"] == pytest.approx(pearsonr(x[ok], y[ok])[0], abs=1e-9)
    assert m["x"]["spearman"] == pytest.approx(spearmanr(x[ok], y[ok])[0], abs=1e-9)
    assert m["x"]["missingness"] == pytest.approx(abs(pearsonr(np.isnan(x), y)[0]), abs=1e-9)
    assert m["cat"]["eta"] == pytest.approx(_eta_reference(cat, y), abs=1e-9)
    assert m["flag"]["eta"] == pytest.approx(abs(pearsonr(flag, y)[0]), abs=1e-9)


def test_level_codes_are_dense_with_missing_as_its_own_level():
    codes, n = level_codes(pl.Series(["b", None, "a", "b"]))
    assert n == 3 and codes[0] == codes[3] and codes[1] == 2 and len(set(codes)) == 3
    codes, n = level_codes(pl.Series([1.5, float("nan"), None, 1.5]))
    assert n == 2 and list(codes) == [0, 1, 1, 0]


# --- planted problems ---------------------------------------------------------------------

def _frame(n: int, seed: int, leak_in: bool, offset: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    df = clean_frame(n, seed, offset)
    y = df["y"].to_numpy()
    days = np.where(y == 1, rng.integers(0, 45, n).astype(float), np.nan)
    code = np.where(rng.random(n) < 0.95, np.where(y == 1, "closed", "open"), "pending")
    resolution = (y + rng.normal(size=n) * 0.05) if leak_in else rng.normal(size=n)
    return df.with_columns(days_since_cancel=pl.Series(days).fill_nan(None),
                           status=pl.Series(code), resolution=pl.Series(resolution))


def test_planted_associations_are_found_with_their_subject_and_measure():
    data = _data({"train": _frame(3000, 1, True), "test": _frame(1000, 2, False, 10_000)},
                 label="y", ids=["row_id"])
    findings = FeatureLabelAssociation().run(data)
    strong = {f.subject: f for f in findings if f.metric == "association"}
    f = strong["days_since_cancel"]
    assert f.severity == Severity.FAIL and f.value == pytest.approx(1.0, abs=1e-3)
    # missingness V 1.0 in both splits: the figure with the most rows behind it (train) is
    # graded, the test figure being no larger beyond doubt
    assert f.splits == ["train"] and f.message.startswith("days_since_cancel is associated")
    assert "missingness" in f.message and f.count == int(data.splits["train"]["y"].eq(0).sum())
    assert strong["status"].severity == Severity.FAIL and "Cramér's V" in strong["status"].message
    assert strong["status"].evidence["levels"][0]["level"] in ("closed", "open")
    assert strong["resolution"].splits == ["train"]
    assert set(strong) == {"days_since_cancel", "status", "resolution"}


def test_a_leak_in_train_only_is_flagged_as_an_association_drop():
    data = _data({"train": _frame(3000, 1, True), "val": _frame(800, 3, True, 5000),
                  "test": _frame(1000, 2, False, 10_000)}, label="y")
    drops = [f for f in FeatureLabelAssociation().run(data) if f.metric == "association_drop"]
    assert [(f.subject, f.splits, f.severity) for f in drops] == [
        ("resolution", ["train", "test"], Severity.FAIL)]
    f = drops[0]
    assert f.value > 0.8 and f.count == 1000 and f.threshold == 0.5
    assert "leakage in train only" in f.message
    assert [r["split"] for r in f.evidence["splits"]] == ["train", "val", "test"]


def test_the_demo_days_since_cancel_fails():
    data = _data(make_demo(), label="churned", time="signup_ts", groups=["customer_id"],
                 ids=["row_id"], text=["notes"])
    failed = [f.subject for f in FeatureLabelAssociation().run(data)
              if f.severity == Severity.FAIL]
    assert failed == ["days_since_cancel"]


# --- clean data ---------------------------------------------------------------------------

def _clean_mix(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return clean_frame(n, seed, seed * 100_000).with_columns(
        heavy=pl.Series(rng.standard_cauchy(n)),
        many=pl.Series([f"u{v}" for v in rng.integers(0, 3000, n)]),
        holes=pl.Series(np.where(rng.random(n) < 0.05, np.nan, rng.normal(size=n)))
        .fill_nan(None),
        flag=pl.Series(rng.random(n) < 0.5))


def test_clean_splits_raise_nothing_above_info_and_chart_the_top_associations():
    data = _data({"train": _clean_mix(4000, 1), "val": _clean_mix(600, 2),
                  "test": _clean_mix(600, 3)}, label="y", ids=["row_id"])
    findings = FeatureLabelAssociation().run(data)
    assert [f.severity for f in findings] == [Severity.INFO]
    overview = findings[0]
    chart = overview.evidence["chart"]
    assert chart["type"] == "bar" and chart["lines"] == [0.7, 0.9]
    assert len(chart["labels"]) == 7 and chart["values"] == sorted(chart["values"], reverse=True)
    assert overview.message.startswith("0 of 7 features (0%) are associated with y above 0.7")


# --- edge cases ---------------------------------------------------------------------------

def test_constant_and_all_null_columns_do_not_flag():
    weird = pl.Series([float("nan"), float("inf"), float("-inf"), 1.0] * 125)
    frame = clean_frame(500, 1).with_columns(const=pl.lit(2.0),
                                             empty=pl.lit(None, dtype=pl.Float64),
                                             one=pl.lit("k"), weird=weird)
    data = _data({"train": frame, "test": frame}, label="y")
    findings = FeatureLabelAssociation().run(data)
    assert [f.severity for f in findings] == [Severity.INFO]
    m = _measures(data)
    assert m["const"].get("pearson") is None and m["empty"]["with_value"] == 0
    assert m["one"]["cramers_v"] == 0.0
    assert m["weird"]["with_value"] == 375 and np.isfinite(m["weird"]["spearman"])


def test_single_class_label_is_not_applicable_with_a_reason():
    frame = clean_frame(100, 1).with_columns(y=pl.lit(0))
    with pytest.raises(NotApplicable, match="single class"):
        FeatureLabelAssociation().run(_data({"train": frame, "test": frame}, label="y"))
    with pytest.raises(NotApplicable, match="no label column declared"):
        FeatureLabelAssociation().run(_data({"train": frame}))


def test_one_split_measures_train_and_reports_no_drop():
    findings = FeatureLabelAssociation().run(_data({"train": _frame(1000, 1, True)},
                                                   label="y"))
    assert {f.metric for f in findings} == {"association", "max_association"}
    assert all(f.splits == ["train"] for f in findings if f.subject)


def test_a_small_later_split_is_not_compared():
    data = _data({"train": _frame(2000, 1, True), "test": _frame(30, 2, False, 10_000)},
                 label="y")
    assert not [f for f in FeatureLabelAssociation().run(data)
                if f.metric == "association_drop"]


def test_invalid_parameters_are_rejected():
    with pytest.raises(ValueError, match="fail_above must be in"):
        FeatureLabelAssociation(fail_above=2)
    with pytest.raises(ValueError, match="warn_above must be <= fail_above"):
        FeatureLabelAssociation(warn_above=0.95)
    with pytest.raises(ValueError, match="min_rows must be an integer >= 1"):
        FeatureLabelAssociation(min_rows=0)


def test_level_table_breaks_a_tie_between_top_classes_by_the_first_class():
    from auditor.detectors.label_association import level_table

    cat = ["a"] * 4 + ["b"] * 2 + ["c"] * 6
    y = ["z", "y", "z", "y", "x", "x", "x", "y", "z", "z", "y", "y"]  # a: y and z tie
    data = _data({"train": pl.DataFrame({"cat": cat, "y": y})}, label="y")
    view = label_view(data)
    rows = {r["level"]: r for r in level_table(view, view.frames["train"]["cat"],
                                                view.frames["train"]["__auditor_label"])}
    assert (rows["a"]["top_class"], rows["a"]["top_class_share"]) == ("y", 0.5)
    assert (rows["c"]["top_class"], rows["c"]["top_class_share"]) == ("y", 0.5)


# --- grading in context (auditor.judging.leak_rules) ----------------------------------------------

def _numeric_family(n: int, seed: int) -> pl.DataFrame:
    """Four noisy measurements of one latent quantity z that also drives a numeric target,
    each correlated ~0.93 with it: a strong legitimate signal, not a copy of the label. They
    share z beyond the target (partial rho given y ~0.8), as real measurements do."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    y = z + rng.normal(size=n) * 0.3
    cols = {f"m{k}": z + rng.normal(size=n) * 0.25 for k in range(4)}
    return pl.DataFrame({**cols, "noise": rng.normal(size=n), "y": y})


def _recodings(n: int, seed: int) -> pl.DataFrame:
    """Three fields each computed from the numeric target with their own noise (post-outcome
    fields: the final invoice, the refund, the adjusted total): associated ~0.93 each, and
    related to one another only through the target."""
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    cols = {f"r{k}": y + rng.normal(size=n) * 0.4 for k in range(3)}
    return pl.DataFrame({**cols, "noise": rng.normal(size=n), "y": y})


def test_a_cluster_of_label_recodings_fails_though_each_has_strong_peers():
    # before the independent_peers rule every one of them only warned as "strong but not
    # singular": a cluster of post-outcome fields hid behind itself
    data = _data({"train": _recodings(3000, 1), "test": _recodings(1000, 2)}, label="y")
    strong = [f for f in FeatureLabelAssociation().run(data) if f.metric == "association"]
    assert sorted(f.subject for f in strong) == ["r0", "r1", "r2"]
    for f in strong:
        g = f.evidence["grading"]
        assert (f.severity, g["rule"]) == (Severity.FAIL, "independent_peers"), f.message
        assert f.value > 0.9 and g["features_within_gap"] == 2
        assert max(g["relations"].values()) < 0.1 and g["related_within_gap"] == 0
        assert "to it only through the label (|partial rho| given the label" in f.message


def test_a_family_of_strong_features_warns_even_above_fail_above():
    data = _data({"train": _numeric_family(3000, 1), "test": _numeric_family(1000, 2)},
                 label="y")
    strong = [f for f in FeatureLabelAssociation().run(data) if f.metric == "association"]
    assert sorted(f.subject for f in strong) == ["m0", "m1", "m2", "m3"]
    assert all(f.severity == Severity.WARN and f.value > 0.9 for f in strong)
    for f in strong:
        ref = abs(pearsonr(data.splits[f.splits[0]][f.subject].to_numpy(),
                           data.splits[f.splits[0]]["y"].to_numpy())[0])
        assert f.value >= round(ref, 4) - 1e-9  # the strongest measure (>= Pearson)
        assert f.evidence["grading"]["rule"] == "strong_not_singular"
        assert "strong but not singular: 3 other features reach association" in f.message


def test_one_column_far_above_the_others_fails_as_singular():
    rng = np.random.default_rng(7)
    n = 3000
    y = rng.normal(size=n)
    for noise, severity in ((0.4, Severity.FAIL), (0.7, Severity.WARN)):
        frame = pl.DataFrame({"a": y * 0.2 + rng.normal(size=n), "b": rng.normal(size=n),
                              "proxy": y + rng.normal(size=n) * noise, "y": y})
        data = _data({"train": frame[:2200], "test": frame[2200:]}, label="y")
        (f,) = [f for f in FeatureLabelAssociation().run(data) if f.metric == "association"]
        assert (f.subject, f.severity, f.evidence["grading"]["rule"]) == (
            "proxy", severity, "singular")
        # fails only above fail_above 0.9; a dominant honest predictor at 0.82 warns
        assert (f.value > 0.9) == (severity == Severity.FAIL) and f.value < 0.99


def test_planted_associations_are_graded_by_the_rule_that_explains_them():
    data = _data({"train": _frame(3000, 1, True), "test": _frame(1000, 2, False, 10_000)},
                 label="y", ids=["row_id"])
    strong = {f.subject: f for f in FeatureLabelAssociation().run(data)
              if f.metric == "association"}
    assert strong["days_since_cancel"].evidence["grading"]["rule"] == "post_outcome_missingness"
    status = strong["status"].evidence["grading"]  # 'closed' only for positives
    assert status["rule"] == "near_deterministic" and status["pure_region"]["share"] > 0.9
    assert strong["resolution"].evidence["grading"]["rule"] == "near_deterministic"


def test_many_small_levels_with_a_rare_label_are_not_near_deterministic():
    # 1% positives and a zip-like column of ~7-row levels: most levels hold no positive by
    # chance; raw level rates would make a "pure" region of 93% of negatives, cross-fitted
    # rates do not
    rng = np.random.default_rng(11)
    n = 14_000
    y = (rng.random(n) < 0.01).astype(np.int64)
    frame = pl.DataFrame({"zip": [f"z{v}" for v in rng.integers(0, 2000, n)],
                          "x": rng.normal(size=n), "y": y})
    data = _data({"train": frame[:10_000], "test": frame[10_000:]}, label="y")
    check = FeatureLabelAssociation()
    view = label_view(data)
    best = {"zip": (0.75, "cramers_v", "train"), "x": (0.1, "pearson", "train")}
    verdict = check._judge(view, "zip", 0.75, True, best, {"zip": {"cramers_v": 0.75}}, 0)
    assert verdict.rule != "near_deterministic"
    assert verdict.details["pure_region"]["share"] < 0.5


def _tiny_class_outliers(seed: int = 3) -> dict[str, pl.DataFrame]:
    """Three classes; in train x relates weakly to the class; the 60-row test split holds
    class 'c' in 4 rows whose x are far out (one class mean from 4 values: MASS fgl's barium)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(["a", "b", "c"], 100)
    train = pl.DataFrame({"x": rng.normal(size=300) + 0.5 * (y == "c"),
                          "w": rng.normal(size=300), "y": y})
    ty = np.r_[np.repeat(["a", "b"], 28), np.repeat("c", 4)]
    tx = np.r_[rng.normal(size=56), np.full(4, 40.0)]
    test = pl.DataFrame({"x": tx, "w": rng.normal(size=60), "y": ty})
    return {"train": train, "test": test}


def test_a_later_split_with_a_tiny_class_is_not_graded():
    frames = _tiny_class_outliers()
    data = _data(frames, label="y")
    test_eta = _eta_reference(frames["test"]["y"], frames["test"]["x"])
    assert test_eta > 0.95  # the 4 outliers set the test figure (60 rows >= min_rows 50)
    # counting that split (min_class_rows 1: the old behaviour) fails x as singular
    old = {f.subject: f for f in FeatureLabelAssociation(min_class_rows=1).run(data)
           if f.metric == "association"}
    assert old["x"].severity == Severity.FAIL and old["x"].value == pytest.approx(test_eta,
                                                                                  abs=1e-4)
    # by default a split with a class of 4 rows (< min_class_rows 10) is not graded: x is
    # judged on train alone, where its eta is weak
    findings = FeatureLabelAssociation().run(data)
    assert not [f for f in findings if f.metric == "association"]
    (overview,) = [f for f in findings if f.metric == "max_association"]
    train_eta = _eta_reference(frames["train"]["y"], frames["train"]["x"])
    assert overview.value == pytest.approx(train_eta, abs=1e-4) and train_eta < 0.7
    with pytest.raises(ValueError, match="min_class_rows must be an integer >= 1"):
        FeatureLabelAssociation(min_class_rows=0)
    with pytest.raises(ValueError, match="min_pure_rows must be an integer >= 1"):
        FeatureLabelAssociation(min_pure_rows=0)


def test_a_label_unique_per_row_skips_the_check_instead_of_failing_noise():
    # every class holds one row: any feature's correlation ratio is 1 by construction
    rng = np.random.default_rng(0)
    train = pl.DataFrame({"x1": rng.normal(size=300), "x2": rng.normal(size=300),
                          "y": [f"id{i}" for i in range(300)]})
    test = pl.DataFrame({"x1": rng.normal(size=100), "x2": rng.normal(size=100),
                         "y": [f"id{i}" for i in range(300, 400)]})
    data = build_audit_data({"train": train, "test": test}, columns=Columns(label="y"))
    with pytest.raises(NotApplicable, match="300 classes over 300 labelled train rows"):
        FeatureLabelAssociation().run(data)


@pytest.mark.parametrize("classes", [2, 12])
def test_class_label_measures_of_every_column_at_once_equal_each_column_alone(classes):
    """The moments of all ranked columns are turned into measures in one call (10,000 columns:
    40,000 calls of the moments functions took seconds): the same floats as one column at a
    time, also for more than 8 classes (summed per column, not across rows of columns)."""
    from auditor.detectors.label_association import _scalar, class_label_measures
    from auditor.loading.data import Kind, LabelKind
    from auditor.stats.numerics import (correlation_ratio_from_moments, cramers_v,
                                        point_biserial_from_moments)

    rng = np.random.default_rng(classes)
    p, k = 500, classes
    ranked = [f"c{j}" for j in range(p)]
    kinds = {c: Kind.BOOLEAN if j % 50 == 0 else Kind.NUMERIC for j, c in enumerate(ranked)}
    n = rng.integers(5, 40, k).astype(float)
    count = np.minimum(n[:, None], rng.integers(0, 40, (k, p))).astype(float)
    st = {"n": n, "count": count, "mean": rng.normal(0, 1e3, (k, p)),
          "var": rng.random((k, p)) * 1e4, "rank_sum": count * rng.random((k, p)) * 50,
          "rank_var": rng.random((k, p)) * 100}
    kind = LabelKind.BINARY if k == 2 else LabelKind.MULTICLASS
    got = class_label_measures(kind, st, ranked, kinds, int(n.sum()))
    assert list(got) == [c for c in ranked if kinds[c] != Kind.BOOLEAN]
    for j, c in enumerate(ranked):
        if kinds[c] == Kind.BOOLEAN:
            continue
        cnt = count[:, j]
        want = {"rows": int(n.sum()), "with_value": int(cnt.sum())}
        if kind == LabelKind.BINARY:
            want["pearson"] = _scalar(point_biserial_from_moments(
                cnt[:, None], st["mean"][:, [j]], st["var"][:, [j]]))
            rank_mean = np.divide(st["rank_sum"][:, j], cnt, out=np.zeros(2), where=cnt > 0)
            want["spearman"] = _scalar(point_biserial_from_moments(
                cnt[:, None], rank_mean[:, None], st["rank_var"][:, [j]]))
        else:
            want["eta"] = _scalar(correlation_ratio_from_moments(
                cnt[:, None], st["mean"][:, [j]], st["var"][:, [j]]))
        if (n - cnt).sum() > 0:
            want["missingness"] = cramers_v(np.vstack([cnt, n - cnt]))
        assert got[c] == want, c


# -- small splits: the figure with the most rows behind it, with its interval (issue 26, 4) --

def test_the_association_interval_is_fishers_z_as_scipy_computes_it():
    from auditor.detectors.label_association import association_interval

    rng = np.random.default_rng(5)
    x = rng.normal(size=60)
    y = x + rng.normal(0, 0.8, 60)
    r = pearsonr(x, y)
    lo, hi = association_interval(abs(r.statistic), "pearson", 60)
    want = r.confidence_interval(0.95)  # scipy: Fisher's z, se 1 / sqrt(n - 3)
    assert lo == pytest.approx(want.low, abs=2e-4) and hi == pytest.approx(want.high, abs=2e-4)
    # Spearman: Bonett & Wright's se sqrt((1 + rho^2 / 2) / (n - 3)); rho 0.8, n 28: z
    # 1.0986, se 0.2298, so tanh(1.0986 -+ 0.4504)
    lo, hi = association_interval(0.8, "spearman", 28)
    assert lo == pytest.approx(np.tanh(np.arctanh(0.8) - 1.96 * np.sqrt(1.32 / 25)), abs=1e-12)
    assert (round(lo, 4), round(hi, 4)) == (0.5705, 0.9136)
    assert association_interval(0.9, "cramers_v", 500) is None  # its table's shape unknown
    assert association_interval(0.9, "pearson", 3) is None
    # a class label: the point-biserial r is a correlation ratio over 2 groups
    assert association_interval(0.9, "pearson", 500, numeric_label=False) == ratio_interval(
        0.9, 500, 2)
    assert association_interval(0.5, "cramers_v", 300, False, (4, 3)) == cramers_v_interval(
        0.5, 300, 4, 3)


def _coverage(interval, draw, truth: float, reps: int = 300) -> float:
    rng = np.random.default_rng(17)
    hits = 0
    for _ in range(reps):
        lo, hi = interval(draw(rng))
        hits += lo <= truth <= hi
    return hits / reps


def test_the_noncentral_intervals_cover_the_true_association_95_percent_of_the_time():
    # eta of 3 normal groups (means 0, 0.5, 1; sd 1; 20 rows each): the population eta is
    # sqrt(var of means / total var) = sqrt(1/6 / (1 + 1/6))
    means = np.repeat([0.0, 0.5, 1.0], 20)
    groups = np.repeat([0, 1, 2], 20)
    truth = float(np.sqrt((1 / 6) / (1 + 1 / 6)))

    def eta_of(rng):
        x = means + rng.normal(size=60)
        between = sum(20 * (x[groups == g].mean() - x.mean()) ** 2 for g in range(3))
        return float(np.sqrt(between / ((x - x.mean()) ** 2).sum()))

    cov = _coverage(lambda e: ratio_interval(e, 60, 3), eta_of, truth)
    assert 0.92 <= cov <= 0.98, cov
    # Cramér's V of a 3 x 2 table of 150 rows (class shares 0.2 / 0.5 / 0.8 per level); the
    # population V from the cell probabilities (bias correction aims at it)
    p = np.array([[0.2, 0.8], [0.5, 0.5], [0.8, 0.2]]) / 3
    e = np.outer(p.sum(1), p.sum(0))
    truth_v = float(np.sqrt(((p - e) ** 2 / e).sum() / 1))

    def v_of(rng):
        t = rng.multinomial(150, p.ravel()).reshape(3, 2)
        return cramers_v(t)

    cov = _coverage(lambda v: cramers_v_interval(v, 150, 3, 2), v_of, truth_v)
    assert 0.92 <= cov <= 0.98, cov


def test_the_graded_figure_is_the_one_with_most_rows_unless_another_is_larger_beyond_doubt():
    from auditor.detectors.label_association import graded_figure

    # an honest measurement: 0.944 on 80 test rows is within train's interval (0.918, 240)
    assert graded_figure([(0.918, "pearson", "train", 240), (0.944, "pearson", "test", 80)]) \
        == (0.918, "pearson", "train")
    # a leak only the test split holds: 0.99 on 400 rows lies above train's interval
    assert graded_figure([(0.6, "pearson", "train", 1000), (0.99, "pearson", "test", 400)]) \
        == (0.99, "pearson", "test")
    # Cramér's V of an unknown table shape: no interval, the largest figure (ties to the
    # later split)
    assert graded_figure([(0.5, "cramers_v", "train", 900), (0.7, "cramers_v", "test", 60)]) \
        == (0.7, "cramers_v", "test")
    # a figure without an interval wins when it lies above the most-rows interval
    assert graded_figure([(0.6, "pearson", "train", 1000), (0.99, "missingness", "test", 400)]) \
        == (0.99, "missingness", "test")
    assert graded_figure([(0.6, "pearson", "train", 1000), (0.62, "missingness", "test", 400)]) \
        == (0.6, "pearson", "train")
    # a class label: the point-biserial r's noncentral F interval, the same conclusion
    assert graded_figure([(0.918, "pearson", "train", 240), (0.944, "pearson", "test", 80)],
                         numeric_label=False) == (0.918, "pearson", "train")


def test_a_strong_honest_predictor_on_a_small_test_split_warns_instead_of_failing():
    """y = x + noise: |r| 0.918 on 240 train rows, 0.944 on 80 test rows. The test figure
    FAILed (singular, above 0.9); the train figure's interval reaches below 0.9: warn."""
    rng = np.random.default_rng(2)

    def part(n):
        x = rng.normal(size=n)
        y = x + rng.normal(0, 0.42, n)
        return pl.DataFrame({"x": x, "w1": rng.normal(size=n), "w2": rng.normal(size=n),
                             "y": y})

    frames = {"train": part(240), "test": part(80)}
    assert abs(pearsonr(frames["test"]["x"], frames["test"]["y"]).statistic) > 0.94
    findings = FeatureLabelAssociation().run(_data(frames, label="y"))
    (f,) = [f for f in findings if f.metric == "association"]
    assert (f.subject, f.splits, f.severity) == ("x", ["train"], Severity.WARN)
    assert f.value == pytest.approx(abs(pearsonr(frames["train"]["x"],
                                                 frames["train"]["y"]).statistic), abs=1e-4)
    grading = f.evidence["grading"]
    assert grading["rule"] == "singular" and grading["ci_low"] < 0.9 < grading["value"]
    assert "not above fail_above 0.9 with 95% confidence" in f.message


def test_intervals_of_a_recoded_label_and_of_level_tables_with_missing_values():
    from auditor.detectors.label_association import figure_interval

    assert ratio_interval(1.0, 2000, 2) == (1.0, 1.0)  # the groups explain every value
    lo, hi = ratio_interval(0.99999999, 2000, 2)
    assert lo <= 0.99999999 <= hi
    lo, hi = ratio_interval(0.999999, 100_000, 2)
    assert lo <= 0.999999 <= hi and hi - lo < 1e-6
    # a level table counts every row (missing values are a level): 1,000 rows, not the 400
    # with a value
    m = {"rows": 1000, "with_value": 400, "levels": 3, "classes": 2, "cramers_v": 0.3}
    assert figure_interval(0.3, m, "cramers_v", False) == cramers_v_interval(0.3, 1000, 3, 2)
    assert figure_interval(0.3, m | {"eta": 0.3}, "eta", True) == ratio_interval(0.3, 1000, 3)
    assert figure_interval(0.3, m, "eta", False) == ratio_interval(0.3, 400, 2)
