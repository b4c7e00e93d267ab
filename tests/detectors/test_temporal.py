"""leakage.temporal: split order in time, overlaps, reversed splits, short gaps, values from the
future, nulls, dates and time zones."""
from __future__ import annotations

from datetime import date, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from auditor.report.charts import figure
from auditor.core.config import Columns
from auditor.loading.data import AuditData, build_audit_data
from auditor.loading.demo import make_demo
from auditor.detectors.temporal import TemporalHoldout, parse_duration
from auditor.errors import NotApplicable
from auditor.report.results import Severity

T0 = datetime(2025, 1, 1)


def _data(frames, **roles) -> AuditData:
    return build_audit_data(frames, columns=Columns(**roles))


def _frame(start: datetime, days: float, n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    offsets = np.sort(rng.uniform(0, days * 86400, n))
    return pl.DataFrame({
        "ts": [start + timedelta(seconds=float(s)) for s in offsets],
        "x": rng.normal(size=n), "y": rng.integers(0, 2, n)})


def _by(findings, metric):
    return {tuple(f.splits): f for f in findings if f.metric == metric}


def test_durations_parse_to_microseconds():
    assert parse_duration("30d") == 30 * 86_400_000_000
    assert parse_duration("12h") == 12 * 3_600_000_000
    assert parse_duration("1w2d") == 9 * 86_400_000_000
    assert parse_duration("90m") == parse_duration("1.5h") == 5_400_000_000
    assert parse_duration("0s") == parse_duration("0") == 0
    for bad in ("30", "30 days", "-1d", "d", ""):
        with pytest.raises(ValueError, match="min_gap must be a duration"):
            TemporalHoldout(min_gap=bad)


def test_no_time_column_is_not_applicable(clean_splits):
    with pytest.raises(NotApplicable, match="no time column declared"):
        TemporalHoldout().run(_data(clean_splits, label="y"))


def test_a_time_split_with_a_gap_passes_and_draws_the_ranges():
    frames = {"train": _frame(T0, 200, 2000, 1), "val": _frame(T0 + timedelta(250), 40, 500, 2),
              "test": _frame(T0 + timedelta(320), 40, 500, 3)}
    findings = TemporalHoldout(min_gap="30d").run(_data(frames, label="y", time="ts"))
    assert all(f.severity == Severity.INFO for f in findings)
    assert [f.metric for f in findings] == ["time_range"] + ["rows_before_previous_end"] * 3
    assert all(f.count == 0 for f in findings[1:])
    chart = findings[0].evidence["chart"]
    assert chart["type"] == "ranges" and [r["label"] for r in chart["rows"]] == [
        "train", "val", "test"]
    assert datetime.fromisoformat(chart["rows"][0]["start"]) == frames["train"]["ts"].min()
    assert datetime.fromisoformat(chart["rows"][2]["end"]) == frames["test"]["ts"].max()
    assert figure(chart)["layout"]["xaxis"]["type"] == "date"


def test_later_rows_dated_inside_the_earlier_range_are_counted():
    train, test = _frame(T0, 200, 3000, 1), _frame(T0 + timedelta(210), 60, 1500, 2)
    inside = np.random.default_rng(9).choice(1500, 60, replace=False)
    ts = test["ts"].to_list()
    for i in inside:
        ts[i] = T0 + timedelta(days=100)
    test = test.with_columns(pl.Series("ts", ts))
    f = _by(TemporalHoldout().run(_data({"train": train, "test": test}, time="ts")),
            "rows_before_previous_end")[("train", "test")]
    expected = int((test["ts"] < train["ts"].max()).sum())
    assert f.count == expected == 60 and f.subject == "ts"
    assert f.value == pytest.approx(60 / 1500) and f.severity == Severity.FAIL
    assert f.message.startswith("60 of 1,500 test rows (4.0%) are dated before the end of train")
    assert f.evidence["offending"]["rows"] == 60
    assert [e["row"] for e in f.evidence["examples"]] == sorted(inside)[:20]
    assert f.evidence["chart"]["type"] == "ranges"
    # with a declared id the examples name the rows as the user does
    test = test.with_columns(pl.format("t-{}", pl.int_range(pl.len())).alias("rid"))
    train = train.with_columns(pl.format("r-{}", pl.int_range(pl.len())).alias("rid"))
    f = _by(TemporalHoldout().run(_data({"train": train, "test": test}, time="ts",
                                        ids=["rid"])), "rows_before_previous_end")[
        ("train", "test")]
    assert [e["rid"] for e in f.evidence["examples"]] == [f"t-{i}" for i in sorted(inside)[:20]]


def test_a_few_late_rows_warn_below_the_fail_share():
    train, test = _frame(T0, 100, 1000, 1), _frame(T0 + timedelta(110), 50, 1000, 2)
    test = test.with_columns(pl.when(pl.int_range(pl.len()) < 5).then(pl.lit(T0))
                             .otherwise(pl.col("ts")).alias("ts"))
    f = _by(TemporalHoldout().run(_data({"train": train, "test": test}, time="ts")),
            "rows_before_previous_end")[("train", "test")]
    assert f.count == 5 and f.severity == Severity.WARN


def test_reversed_splits_fail_once_per_pair():
    train = _frame(T0 + timedelta(100), 50, 500, 1)
    test = _frame(T0, 50, 300, 2)
    findings = TemporalHoldout().run(_data({"train": train, "test": test}, time="ts"))
    assert ("train", "test") not in _by(findings, "rows_before_previous_end")
    f = _by(findings, "reversed_splits")[("train", "test")]
    assert f.severity == Severity.FAIL and f.count == 300
    assert "the splits run backwards" in f.message


def test_a_gap_shorter_than_min_gap_fails_with_the_rows_inside_it():
    train, test = _frame(T0, 100, 1000, 1), _frame(T0 + timedelta(110), 60, 1000, 2)
    data = _data({"train": train, "test": test}, time="ts")
    assert not _by(TemporalHoldout(min_gap="5d").run(data), "gap_shorter_than_min_gap")
    f = _by(TemporalHoldout(min_gap="30d").run(data), "gap_shorter_than_min_gap")[
        ("train", "test")]
    end = train["ts"].max()
    expected = int(((test["ts"] >= end) & (test["ts"] < end + timedelta(days=30))).sum())
    assert f.count == expected > 0 and f.severity == Severity.FAIL
    gap = (test["ts"].min() - end).total_seconds() / 86400
    assert f.value == pytest.approx(gap) and f.threshold == 30.0


def test_null_times_are_reported_and_left_out_of_the_denominator():
    train, test = _frame(T0, 100, 100, 1), _frame(T0 + timedelta(50), 100, 100, 2)
    test = test.with_columns(pl.when(pl.int_range(pl.len()) % 4 == 0).then(None)
                             .otherwise(pl.col("ts")).alias("ts"))
    findings = TemporalHoldout().run(_data({"train": train, "test": test}, time="ts"))
    nulls = _by(findings, "null_time_rows")
    assert list(nulls) == [("test",)] and nulls[("test",)].count == 25
    assert nulls[("test",)].severity == Severity.INFO
    f = _by(findings, "rows_before_previous_end")[("train", "test")]
    expected = int((test["ts"].drop_nulls() < train["ts"].max()).sum())
    assert f.count == expected and f.value == pytest.approx(expected / 75)
    assert "of 75 test rows with a ts" in f.message


def test_an_all_null_time_column_is_not_applicable():
    frames = {s: _frame(T0, 10, 5, i).with_columns(pl.lit(None, dtype=pl.Datetime("us"))
                                                  .alias("ts"))
              for i, s in enumerate(("train", "test"))}
    with pytest.raises(NotApplicable, match="null in every row"):
        TemporalHoldout().run(_data(frames, time="ts"))


def test_one_split_reports_its_range_and_future_values_only():
    train = _frame(T0, 100, 200, 1)
    train = train.with_columns((pl.col("ts") + pl.duration(days=1)).alias("closed_at"))
    findings = TemporalHoldout().run(_data({"train": train}, time="ts"))
    assert [f.metric for f in findings] == ["time_range", "future_values"]
    assert findings[1].count == 200


def test_datetime_features_after_the_rows_own_time_are_information_from_the_future():
    train, test = _frame(T0, 100, 1000, 1), _frame(T0 + timedelta(120), 50, 500, 2)
    rng = np.random.default_rng(4)

    def with_cancel(df, n_after):
        lead = np.full(df.height, -3.0)
        lead[rng.choice(df.height, n_after, replace=False)] = 2.0
        cancel = [t + timedelta(days=float(d)) for t, d in zip(df["ts"], lead)]
        cancel[0] = None
        return df.with_columns(pl.Series("cancel_ts", cancel),
                               pl.Series("created", [t - timedelta(1) for t in df["ts"]]))

    train, test = with_cancel(train, 30), with_cancel(test, 12)
    findings = TemporalHoldout().run(_data({"train": train, "test": test}, label="y", time="ts"))
    future = {f.subject: f for f in findings if f.metric == "future_values"}
    expected = sum(int((d["cancel_ts"] > d["ts"]).sum()) for d in (train, test))
    f = future["cancel_ts"]
    assert f.count == expected and 40 <= expected <= 42 and f.severity == Severity.FAIL
    assert f.value == pytest.approx(expected / 1498)
    assert {r["split"]: r["rows after own time"] for r in f.evidence["per_split"]} == {
        "train": int((train["cancel_ts"] > train["ts"]).sum()),
        "test": int((test["cancel_ts"] > test["ts"]).sum())}
    assert future["created"].count == 0 and future["created"].severity == Severity.INFO


def test_a_date_time_column_covers_its_whole_day():
    train = pl.DataFrame({"day": [date(2025, 6, 15)] * 3,
                          "seen": [datetime(2025, 6, 15, 13), datetime(2025, 6, 16),
                                   datetime(2025, 6, 15, 23, 59, 59)]})
    test = pl.DataFrame({"day": [date(2025, 6, 15), date(2025, 6, 20)],
                         "seen": [datetime(2025, 6, 1), datetime(2025, 6, 21, 0, 0, 1)]})
    findings = TemporalHoldout().run(_data({"train": train, "test": test}, time="day"))
    assert _by(findings, "future_values")[("train", "test")].count == 2
    assert _by(findings, "rows_before_previous_end")[("train", "test")].count == 0
    assert findings[0].evidence["ranges"][0]["first"] == "2025-06-15"


def test_time_zones_are_compared_in_utc():
    # train ends 23:00 UTC; a test row at 00:30 Paris time (22:30 UTC) is earlier, although
    # its wall-clock date is later
    train = pl.DataFrame({"ts": [datetime(2025, 5, 1), datetime(2025, 5, 31, 23)],
                          "x": [1, 2]}).with_columns(pl.col("ts").dt.replace_time_zone("UTC"))
    test = pl.DataFrame({"ts": [datetime(2025, 6, 1, 0, 30), datetime(2025, 6, 5)],
                         "x": [1, 2]}).with_columns(
        pl.col("ts").dt.replace_time_zone("Europe/Paris"))
    findings = TemporalHoldout().run(_data({"train": train, "test": test}, time="ts"))
    assert _by(findings, "rows_before_previous_end")[("train", "test")].count == 1
    assert findings[0].evidence["ranges"][0]["last"] == "2025-05-31T23:00:00+00:00"


def test_a_numeric_time_column_is_compared_as_numbers():
    train = pl.DataFrame({"year": [2018, 2019, 2020], "x": [1, 2, 3]})
    test = pl.DataFrame({"year": [2019, 2021, 2022], "x": [1, 2, 3]})
    findings = TemporalHoldout(min_gap="1d").run(_data({"train": train, "test": test},
                                                       time="year"))
    assert _by(findings, "rows_before_previous_end")[("train", "test")].count == 1
    assert "min_gap (1d) is not applied" in findings[0].evidence["note"]


def test_a_boolean_time_column_is_not_applicable():
    frames = {"train": pl.DataFrame({"t": [True], "x": [1]}),
              "test": pl.DataFrame({"t": [False], "x": [2]})}
    with pytest.raises(NotApplicable, match="expected a date or datetime"):
        TemporalHoldout().run(_data(frames, time="t"))


def test_demo_flags_test_rows_dated_inside_train():
    frames = make_demo()
    data = _data(frames, label="churned", time="signup_ts", groups=["customer_id"],
                 ids=["row_id"], text=["notes"])
    f = _by(TemporalHoldout().run(data), "rows_before_previous_end")
    expected = int((frames["test"]["signup_ts"] < frames["train"]["signup_ts"].max()).sum())
    # 60 planted rows, 2 of them then overwritten by the 30 exact copies of train rows (which
    # carry train dates): 58 + 30 = 88.
    assert f[("train", "test")].count == expected == 88
    assert f[("train", "test")].severity == Severity.FAIL
    assert f[("val", "test")].count == 88 and f[("train", "val")].count == 0


def test_a_numeric_time_column_treats_nan_as_no_time_and_charts_numbers():
    train = pl.DataFrame({"t": np.arange(100.0), "x": np.arange(100)})
    test = pl.DataFrame({"t": np.r_[np.arange(50.0) + 80, np.nan], "x": np.arange(51)})
    findings = TemporalHoldout().run(_data({"train": train, "test": test}, time="t"))
    (nulls,) = [f for f in findings if f.metric == "null_time_rows"]
    assert nulls.count == 1 and nulls.splits == ["test"]
    (before,) = [f for f in findings if f.metric == "rows_before_previous_end"]
    assert before.count == 19 and before.message.startswith("19 of 50 test rows with a t (38.0%)")
    chart = before.evidence["chart"]
    assert chart["rows"][0] == {"label": "train", "start": 0.0, "end": 99.0}
    bars = figure(chart)["data"][0]
    assert chart["lines"] == [99.0] and (bars["base"][0], bars["x"][0]) == (0.0, 99.0)
    assert before.evidence["examples"][0] == {"row": 0, "t": 80.0}


def test_a_user_column_named_like_a_row_index_does_not_clash():
    """Example rows are found without a helper column (a split with a ``_row`` column crashed)."""
    from datetime import datetime

    from auditor.core.config import Columns
    from auditor.loading.data import build_audit_data

    train = pl.DataFrame({"t": [datetime(2024, 1, d) for d in (1, 2, 10)], "_row": [7, 8, 9]})
    test = pl.DataFrame({"t": [datetime(2024, 1, d) for d in (3, 11, 4, 12)],
                         "_row": [1, 2, 3, 4]})
    data = build_audit_data({"train": train, "test": test}, columns=Columns(time="t"))
    (f,) = [x for x in TemporalHoldout().run(data) if x.metric == "rows_before_previous_end"]
    assert f.count == 2 and [e["row"] for e in f.evidence["examples"]] == [0, 2]
