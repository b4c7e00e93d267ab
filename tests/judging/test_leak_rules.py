"""auditor.judging.leak_rules: the purest cut against sklearn's ROC curve, and the order of the
rules."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_curve

from auditor.judging.leak_rules import Purity, Rules, judge, missing_purity, pure_region
from auditor.report.results import Severity

RULES = Rules(warn_above=0.85, fail_above=0.95, deterministic_above=0.995, singular_gap=0.15,
              pure_share=0.9, pure_tolerance=0.01)


def _reference(scores: np.ndarray, y: np.ndarray, tol: float) -> float:
    """max TPR at FPR <= tol over both classes and both ends, from sklearn's ROC curve."""
    s = np.where(np.isnan(scores), np.nanmin(scores) - 1, scores)  # missing: below all
    best = 0.0
    for pos in (y == 1, y == 0):
        for sign in (1, -1):
            fpr, tpr, _ = roc_curve(pos, sign * s, drop_intermediate=False)
            best = max(best, float(tpr[fpr <= tol + 1e-12].max()))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_pure_region_is_the_best_roc_point_under_the_tolerance(seed):
    rng = np.random.default_rng(seed)
    n = 600
    y = (rng.random(n) < [0.5, 0.1, 0.9, 0.3, 0.5, 0.02][seed]).astype(int)
    x = np.round(rng.normal(size=n) + (seed % 3) * y, 1)  # ties
    x[rng.random(n) < 0.1] = np.nan
    for tol in (0.0, 0.01, 0.05):
        assert pure_region(x, y, tol).share == pytest.approx(_reference(x, y, tol), abs=1e-12)


def test_pure_region_names_the_class_and_side():
    y = np.array([0] * 50 + [1] * 50)
    x = np.r_[np.linspace(0, 1, 50), np.linspace(0.9, 2, 50)]  # high tail: class 1 only
    p = pure_region(x, y, 0.0)
    assert (p.cls, p.side) == (1, "high") and p.share == pytest.approx(
        float((x[50:] > 1).mean()))


def test_missing_purity_measures_both_classes():
    y = np.array([1] * 10 + [0] * 30)
    miss = np.r_[np.zeros(10, bool), np.ones(27, bool), np.zeros(3, bool)]
    assert missing_purity(miss, y) == (0.9, 0.0, 0)


def test_rules_apply_in_order_and_say_why():
    others = [("b", 0.60), ("c", 0.55)]
    v = judge(RULES, value=0.97, train_value=0.97, others=others, name="a", what="AUC",
              missing=(0.95, 0.0, 0), purity=Purity(0.5, 1, "high"), classes=["no", "yes"])
    assert (v.severity, v.rule) == (Severity.FAIL, "post_outcome_missingness")
    assert "missing in 95.0% of class 'no' rows" in v.reason
    v = judge(RULES, value=0.97, train_value=0.997, others=[("b", 0.96)], name="a", what="AUC")
    assert (v.severity, v.rule) == (Severity.FAIL, "near_deterministic")
    v = judge(RULES, value=0.97, train_value=0.97, others=[("b", 0.96)], name="a", what="AUC",
              purity=Purity(0.93, 0, "low"))
    assert (v.severity, v.rule) == (Severity.FAIL, "near_deterministic")
    v = judge(RULES, value=0.97, train_value=0.97, others=others, name="a", what="AUC",
              purity=Purity(0.4, 1, "high"), ci_low=0.96)
    assert (v.severity, v.rule) == (Severity.FAIL, "singular")
    assert "0.370 above the strongest other feature (b, 0.600" in v.reason
    assert "with 95% confidence (CI low 0.960)" in v.reason
    # singular but not surely above fail_above: one dominant honest predictor looks the same
    for value, ci_low in ((0.90, None), (0.97, 0.94)):
        v = judge(RULES, value=value, train_value=value, others=others, name="a", what="AUC",
                  ci_low=ci_low)
        assert (v.severity, v.rule) == (Severity.WARN, "singular")
        assert "but not above fail_above 0.95" in v.reason
    v = judge(RULES, value=0.98, train_value=0.98, others=[("b", 0.9), ("c", 0.84)],
              name="a", what="AUC", purity=Purity(0.77, 1, "high"))
    assert (v.severity, v.rule) == (Severity.WARN, "strong_not_singular")
    assert v.reason.startswith("strong but not singular: 2 other features reach AUC >= 0.830")
    assert "at most 77.0% of one class" in v.reason
    assert v.evidence()["runner_up"] == {"feature": "b", "value": 0.9}
    v = judge(RULES, value=0.96, train_value=0.96, others=[], name="a", what="AUC")
    assert (v.severity, v.rule) == (Severity.FAIL, "threshold")


def test_rank_copies_match_scipy_spearman_on_rows_with_both_values():
    import polars as pl
    from scipy.stats import spearmanr

    from auditor.judging.leak_rules import rank_copies

    rng = np.random.default_rng(2)
    x = rng.normal(size=500)
    near = np.where(rng.random(500) < 0.1, np.nan, np.exp(x) + rng.normal(size=500) * 0.01)
    frame = pl.DataFrame({"x": x, "near": near, "loose": x + rng.normal(size=500),
                          "cat": rng.choice(["a", "b"], 500)}).with_columns(
                              pl.col("near").fill_nan(None))
    ok = ~np.isnan(near)
    ref = abs(spearmanr(x[ok], near[ok])[0])
    got = rank_copies(frame, "x", ["near", "loose", "cat", "x"], 0.98)
    assert set(got) == {"near"} and got["near"] == pytest.approx(ref, abs=1e-4)
    assert rank_copies(frame, "x", ["near"], 0.9999) == {}


def test_label_free_relations_match_scipy_partial_spearman_and_within_class_rho():
    import polars as pl
    from scipy.stats import rankdata, spearmanr

    from auditor.judging.leak_rules import label_free_relations

    rng = np.random.default_rng(3)
    n = 800
    z = rng.normal(size=n)
    y = z + rng.normal(size=n)
    a, b, c = z + rng.normal(size=n), z + rng.normal(size=n), y + rng.normal(size=n)
    frame = pl.DataFrame({"a": a, "b": b, "c": c, "y": y})
    rel = label_free_relations(frame, "a", ["b", "c"], "y", numeric_label=True)
    for name, v in (("b", b), ("c", c)):
        r_ab, r_ay, r_by = (spearmanr(a, v)[0], spearmanr(a, y)[0], spearmanr(v, y)[0])
        ref = (r_ab - r_ay * r_by) / np.sqrt((1 - r_ay ** 2) * (1 - r_by ** 2))
        assert rel[name] == pytest.approx(abs(ref), abs=1e-4)
    # class label: the pooled within-class correlation of the (whole-sample) ranks
    cls = (y > 0.3).astype(np.int64)
    frame = frame.with_columns(k=pl.Series(cls))
    rel = label_free_relations(frame, "a", ["b", "c"], "k", numeric_label=False)
    ra = rankdata(a)
    for name, v in (("b", b), ("c", c)):
        rv = rankdata(v)
        ea, ev = ra.copy(), rv.copy()
        for k in (0, 1):
            ea[cls == k] -= ra[cls == k].mean()
            ev[cls == k] -= rv[cls == k].mean()
        ref = ea @ ev / np.sqrt((ea @ ea) * (ev @ ev))
        assert rel[name] == pytest.approx(abs(ref), abs=1e-4)
    assert rel["b"] > 0.3  # a shared latent: related beyond the label


def test_independent_peers_fail_only_above_fail_above_and_related_peers_warn():
    others = [("b", 0.96), ("c", 0.6)]
    v = judge(RULES, value=0.97, train_value=0.97, others=others, name="a", what="AUC",
              relations={"b": 0.03}, ci_low=0.955)
    assert (v.severity, v.rule) == (Severity.FAIL, "independent_peers")
    assert ("the only feature within 0.15 of it (b; strongest b 0.960) relates to it only "
            "through the label") in v.reason
    v = judge(RULES, value=0.97, train_value=0.97, others=others, name="a", what="AUC",
              relations={"b": 0.03}, ci_low=0.94)  # CI reaches below fail_above
    assert (v.severity, v.rule) == (Severity.WARN, "independent_peers")
    v = judge(RULES, value=0.97, train_value=0.97, others=others, name="a", what="AUC",
              relations={"b": 0.5}, ci_low=0.955)
    assert (v.severity, v.rule) == (Severity.WARN, "strong_not_singular")
    v = judge(RULES, value=0.97, train_value=0.97, others=others, name="a", what="AUC",
              relations={}, ci_low=0.955)  # not measurable: counted as support
    assert (v.severity, v.rule) == (Severity.WARN, "strong_not_singular")


def test_pure_region_reports_the_smaller_class_rows():
    y = np.array([0] * 14 + [1] * 10)
    x = np.r_[np.linspace(0, 1, 14), np.linspace(2, 3, 10)]
    assert pure_region(x, y, 0.01) == Purity(1.0, 1, "high", 10)


def test_a_clean_cut_on_few_rows_is_not_near_deterministic():
    # mtcars' weight vs transmission on 24 train rows: 92.9% of 14 automatics beyond a cut
    # holding none of 10 manuals, AUC 0.964 among strong peers: not evidence of a recoding
    few = Purity(0.929, 0, "low", rows=10)
    v = judge(RULES, value=0.964, train_value=0.964, others=[("gear", 1.0), ("drat", 0.9)],
              name="wt", what="AUC", purity=few)
    assert (v.severity, v.rule) == (Severity.WARN, "strong_not_singular")
    assert "the smaller class has 10 train rows (< min_pure_rows 30)" in v.reason
    assert v.details["pure_region"]["smaller_class_rows"] == 10
    enough = Purity(0.929, 0, "low", rows=30)
    v = judge(RULES, value=0.964, train_value=0.964, others=[("gear", 1.0)], name="wt",
              what="AUC", purity=enough)
    assert (v.severity, v.rule) == (Severity.FAIL, "near_deterministic")
    # the deterministic_above test has no row floor
    v = judge(RULES, value=1.0, train_value=1.0, others=[("gear", 1.0)], name="wt",
              what="AUC", purity=few)
    assert (v.severity, v.rule) == (Severity.FAIL, "near_deterministic")
