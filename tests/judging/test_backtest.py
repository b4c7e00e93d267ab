"""Time backtests (issue 26, item 2, time part): the same time split made again inside the
earlier split, the null a time design's drift is judged against."""
from __future__ import annotations

import math
from datetime import date, timedelta

import numpy as np
import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.detectors.drift import FeatureDrift, LabelDrift
from auditor.engines.selection import engine_of
from auditor.judging import backtest
from auditor.judging.backtest import plan, time_backtests, views
from auditor.judging.drift_verdicts import TrendNull
from auditor.loading.data import build_audit_data
from auditor.report.results import Severity
from tests.design_fixtures import trend_split


def _plans(frames, **columns):
    data = build_audit_data(frames, columns=Columns(**columns))
    engine, roles = engine_of(data), data.roles
    return plan(engine, roles, roles.pairs()), engine, roles


def test_daily_backtests_slide_back_from_the_end_on_the_geometry_of_the_recent_rows():
    # train 300 days, test 100: test is compared with train's last R = (300 - 100) / 2 = 100
    # rows; each backtest compares 100 train rows with the 100 that follow, the windows'
    # ends sliding back over R rows in 8 steps (cuts on a grid of 200 times over 299 days:
    # within a day)
    plans, _, _ = _plans(trend_split(), time="day")
    bt = plans["train", "test"]
    assert bt.recent is not None and abs(bt.recent.rows - 100) <= 1 and bt.recent.hi is None
    assert len(bt.tests) == 8
    for b in bt.tests:
        assert abs(b.ref.rows - 100) <= 1 and abs(b.cur.rows - 100) <= 1
        assert b.ref.hi == b.cur.lo and b.ref.last < b.cur.last  # adjacent, in time order
    first, last = bt.tests[0], bt.tests[-1]
    assert first.cur.hi is None and last.ref.lo is None  # from the end back to the start
    ends = [math.inf if b.cur.hi is None else b.cur.hi for b in bt.tests]
    assert ends == sorted(ends, reverse=True) and len(set(ends)) == 8
    assert bt.describe(first) == ("train rows after 2024-04-08 through 2024-07-17 (100) "
                                  "against those after 2024-07-17 through 2024-10-26 (101, "
                                  "to the end)")
    assert bt.note.startswith("test is compared with the last ~100 rows of train (`day` "
                              "after 2024-07-17), and 8 backtests")


def test_each_comparison_is_a_seeded_sample_of_about_max_rows(monkeypatch):
    # the recent comparison (~100 + 100 rows) and train's windows (~100 + ~100): the pair's
    # splits sampled once at 120 / ~201 (seeded), each window a filter of the sample
    plans, engine, _ = _plans(trend_split(), time="day")
    monkeypatch.setattr(backtest, "MAX_ROWS", 120)
    view, names = views(engine, plans, ["x"], seed=5)
    assert view is not None and len(names["train", "test"]) == 9
    rows = view.split_rows()
    bt = plans["train", "test"]
    assert abs(rows["current0"] - 60) <= 1  # test's 100 rows sampled at ~0.6
    full = [(bt.recent.rows, 100)] + [(t.ref.rows, t.cur.rows) for t in bt.tests]
    for (ref, cur), (n_ref, n_cur) in zip(names["train", "test"], full):
        assert rows[ref] < n_ref and rows[cur] < n_cur  # sampled on both sides
        assert 85 <= rows[ref] + rows[cur] <= 155  # ~120: 60% of ~200, hypergeometric
    assert sum(rows[r] + rows[c] for r, c in names["train", "test"]) == pytest.approx(
        9 * 120, rel=0.08)
    # train sampled once: every train-side window holds rows of one 180-row sample (windows
    # sampled one by one would together hold nearly all 300 train rows)
    train_sides = [names["train", "test"][0][0]] + [n for pair in names["train", "test"][1:]
                                                     for n in pair]
    seen = pl.concat([view.frames[n].select("day") for n in train_sides]).unique()
    assert seen.height <= 181
    again, _ = views(engine, plans, ["x"], seed=5)
    assert again is not None
    for name in rows:
        assert again.frames[name]["x"].to_list() == view.frames[name]["x"].to_list()
    monkeypatch.setattr(backtest, "MAX_ROWS", 1_000)  # above every comparison: every row
    whole, _ = views(engine, plans, ["x"], seed=5)
    assert whole is not None
    assert whole.split_rows()["recent0"] == bt.recent.rows
    assert whole.split_rows()["current0"] == 100


def test_coarse_times_give_whole_periods_and_identical_cuts_are_made_once():
    # "years" of 20 rows, 1990-2004 in train, 2005-2009 in test: every window is 5 whole
    # years; the 8 positions land on 6 distinct pairs of cuts
    plans, _, _ = _plans(trend_split(years=True), time="day")
    bt = plans["train", "test"]
    assert [(b.ref.rows, b.cur.rows) for b in bt.tests] == [(100, 100)] * 6
    assert [(int(b.ref.last), int(b.cur.last)) for b in bt.tests] == [
        (1999, 2004), (1998, 2003), (1997, 2002), (1996, 2001), (1995, 2000), (1994, 1999)]
    assert bt.rows(bt.recent) == "train rows after 1999 through 2004 (100, to the end)"


def test_too_few_periods_make_no_backtest_and_say_why():
    frames = {"train": pl.DataFrame({"t": [1, 1, 1, 2, 2, 2], "x": [0.0] * 6}),
              "test": pl.DataFrame({"t": [3, 3, 3], "x": [1.0] * 3})}
    plans, _, _ = _plans(frames, time="t")
    bt = plans["train", "test"]
    assert bt.tests == [] and "too few distinct `t` periods" in bt.note


def test_a_test_split_larger_than_train_shrinks_the_window_in_proportion():
    # test 200 rows, train 100: window and gap shrunk to half of train (50), R = 25
    days = [date(2024, 1, 1) + timedelta(days=i) for i in range(300)]
    df = pl.DataFrame({"d": days, "x": np.random.default_rng(0).normal(size=300)})
    plans, _, _ = _plans({"train": df[:100], "test": df[100:]}, time="d")
    bt = plans["train", "test"]
    assert "shrunk in proportion" in bt.note
    assert [(b.ref.rows, b.cur.rows) for b in bt.tests] == [(25, 50)] * 8


def test_a_gap_as_large_as_the_splits_between_separates_each_backtest():
    # train 600, val 100, test 100: train -> test is measured on train's last 200 rows, the
    # backtests compare 200 rows with the 100 that follow a gap of 100
    days = [date(2024, 1, 1) + timedelta(days=i) for i in range(800)]
    df = pl.DataFrame({"d": days, "x": np.random.default_rng(0).normal(size=800)})
    frames = {"train": df[:600], "val": df[600:700], "test": df[700:]}
    plans, _, _ = _plans(frames, time="d")
    bt = plans["train", "test"]
    gapped = bt.tests[0]
    assert abs(bt.recent.rows - 200) <= 3
    assert abs(gapped.ref.rows - 200) <= 3 and abs(gapped.cur.rows - 100) <= 3
    assert (gapped.cur.after - gapped.ref.last) / 86_400e6 == pytest.approx(100, abs=3)
    assert "after a gap of ~100 rows" in bt.note and "gap" not in plans["train", "val"].note


def test_backtests_only_in_a_time_design():
    data = build_audit_data(trend_split(), columns=Columns(time="day"))
    engine, roles = engine_of(data), data.roles
    assert set(time_backtests(engine, roles, roles.pairs())) == {("train", "test")}
    data = build_audit_data(trend_split(), columns=Columns(time="day"))
    data.declared_split = "random"  # the same rows, declared a random split: no backtest
    engine, roles = engine_of(data), data.roles
    assert time_backtests(engine, roles, roles.pairs()) == {}


@pytest.mark.parametrize("metric,observed,upper,excess", [
    ("psi", 8.30642, 7.07909, (math.sqrt(8.30642) - math.sqrt(7.07909)) ** 2),  # ~0.05
    ("psi", 1.0, 0.01, 0.81),       # a 1 sd shift where time moves 0.1 sd: 0.9 sd beyond
    ("psi", 0.2, 0.3, 0.0),         # within the backtests
    ("ks_d", 0.5, 0.3, 0.2),
    ("cramers_v", 0.1, 0.4, 0.0),
    ("level_fold", 3.0, 2.0, 1.5),  # by ratio
    ("level_fold", 1.5, 2.0, 1.0),
])
def test_the_excess_is_measured_on_each_statistics_scale(metric, observed, upper, excess):
    assert TrendNull(metric, observed, 0.0, upper, 5).excess == pytest.approx(excess)


# -- the verdicts ---------------------------------------------------------------------------

def _run(check, frames, **columns):
    return [f for f in check.run(build_audit_data(frames, columns=Columns(**columns)))
            if f.subject]


def test_a_feature_that_moves_with_time_warns_as_a_moving_target_in_a_time_split():
    # trend rises 4 sd over the period: train -> test PSI ~2 (a FAIL judged as random rows),
    # but each backtest inside train shows as much: not beyond the trend; the feature moves
    # inside train too (median backtest PSI above 0.25), so it warns as a moving target
    (f,) = [f for f in _run(FeatureDrift(), trend_split(), time="day") if f.subject == "trend"]
    assert (f.severity, f.metric) == (Severity.WARN, "psi_beyond_trend")
    st = f.evidence["statistics"]
    assert st["psi"] > 1.0 and st["time backtests"] == 8  # train -> test
    assert st["backtest largest"] >= st["psi against them"] and st["excess"] == 0
    assert "against the last train rows after 2024-07-17 through 2024-10-26 (101, to the " \
        "end), PSI is" in f.message and "8 honest backtests give" in f.message
    assert "what time alone moves in this data; trend moves over time inside train as " \
        "well" in f.message
    # the same rows declared a random split: judged as before
    data = build_audit_data(trend_split(), columns=Columns(time="day"))
    data.declared_split = "random"
    (g,) = [f for f in FeatureDrift().run(data) if f.subject == "trend"]
    assert (g.severity, g.metric) == (Severity.FAIL, "psi_beyond_random_resplits")


def test_a_unit_switched_inside_train_warns_and_one_at_the_split_fails():
    # x doubles from day 200 (inside train, before test's day 300): train -> test PSI is
    # large, the recent train rows match test, the backtests straddling the switch move it:
    # a warning that it moves inside train, not a fail between train and test
    frames = trend_split()
    frames = {s: f.with_columns(x=pl.when(pl.col("day") >= date(2024, 7, 19))
                                .then(pl.col("x") * 3 + 4).otherwise(pl.col("x")))
              for s, f in frames.items()}
    (f,) = [f for f in _run(FeatureDrift(), frames, time="day") if f.subject == "x"]
    assert f.severity == Severity.WARN and "x moves over time inside train as well" in f.message
    assert f.evidence["statistics"]["excess"] == 0 and f.evidence["statistics"]["psi"] > 1


def test_a_sudden_shift_at_the_time_split_fails_beyond_the_trend():
    found = {f.subject: f for f in _run(FeatureDrift(), trend_split(shift=1.0), time="day")}
    x = found["x"]
    assert x.severity == Severity.FAIL and x.metric.endswith("_beyond_trend")
    assert x.evidence["statistics"]["backtest largest"] < 0.25
    assert "beyond the trend, graded" in x.message
    assert found["trend"].severity == Severity.WARN  # a moving target, not beyond it
    summary = [f for f in FeatureDrift().run(build_audit_data(
        trend_split(shift=1.0), columns=Columns(time="day"))) if f.subject == ""][0]
    assert len(summary.evidence["time backtests"]) == 8
    assert "8 backtests inside train" in summary.evidence["time backtests placed"]


def test_a_label_that_trends_warns_as_a_moving_target_and_a_step_at_the_split_fails():
    (f,) = _run(LabelDrift(), trend_split(), time="day", label="target")
    assert f.severity == Severity.WARN and f.metric == "psi_beyond_trend"
    assert "the label moves over time inside train as well" in f.message
    (g,) = _run(LabelDrift(), trend_split(label_step=1.5), time="day", label="target")
    assert g.severity == Severity.FAIL and g.metric == "psi_beyond_trend"
    assert g.value > 0.25


def test_a_far_off_sentinel_time_does_not_squeeze_the_backtests_into_one_cell():
    # one train row dated 1970-01-01 (a missing date written as epoch 0): on an equal grid
    # from 1970 to 2024 every other row falls into the last cell; the grid is made again
    # between the 0.5% and 99.5% ranks, and the backtests are the daily ones
    frames = trend_split()
    train = frames["train"]
    frames["train"] = pl.concat([train.head(1).with_columns(day=pl.lit(date(1970, 1, 1))),
                                 train.slice(1)])
    plans, _, _ = _plans(frames, time="day")
    bt = plans["train", "test"]
    assert len(bt.tests) == 8
    assert all(abs(b.cur.rows - 100) <= 2 for b in bt.tests)
