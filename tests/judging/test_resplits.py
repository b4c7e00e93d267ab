"""Verdicts relative to a group design (issue 26, item 2, group part): attributes of the entity
compared at one row per entity, row measurements against entity re-splits of the same rows;
and what a time split of a panel shares by construction (entities, attributes of the period)."""
from __future__ import annotations

import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.detectors.drift import FeatureDrift, LabelDrift
from auditor.detectors.groups import GroupOverlap
from auditor.engines.selection import engine_of
from auditor.judging.resplits import RESPLITS, entity_views
from auditor.loading.data import build_audit_data
from auditor.report.results import Severity
from auditor.stats.drift import entity_columns, one_row_per
from tests.design_fixtures import entity_split, panel_split


def _data(frames, split=None, **columns):
    data = build_audit_data(frames, columns=Columns(**columns))
    data.declared_split = split
    return data


def _columns(findings):
    return {f.subject: f for f in findings if f.subject and f.metric != "unseen_share"}


def test_entity_columns_are_those_constant_within_every_entity():
    frames = {"a": pl.DataFrame({"u": [1, 1, 2, 2, None], "k": ["x", "x", "y", "y", "z"],
                                 "n": [None, None, 3.0, 3.0, 1.0], "r": [1, 2, 3, 3, 4]}),
              "b": pl.DataFrame({"u": [3, 3], "k": ["x", "x"], "n": [5.0, 5.0], "r": [7, 8]})}
    # k and n (null counts as a value) are attributes of u; r varies within user 1 and 3
    assert entity_columns(frames, "u", ["k", "n", "r"]) == ["k", "n"]
    # a frame whose entities never repeat: nothing can be told
    single = {"a": pl.DataFrame({"u": [1, 2, 3], "k": ["x", "y", "z"]})}
    assert entity_columns(single, "u", ["k"]) == []
    # 2 rows per entity in a and b: below a required 3
    assert entity_columns(frames, "u", ["k"], min_rows=3.0) == []
    one = one_row_per(frames["a"], "u")
    assert one.height == 3 and one["u"].to_list() == [1, 2, None]  # the null row kept


def test_an_attribute_of_the_entity_is_compared_at_one_row_per_entity():
    data = _data(entity_split(shift=1.0), groups=["user"], label="y")
    m = FeatureDrift().measure(engine_of(data), data.roles)
    plan = m.drifts["train", "test"]["plan"]
    assert plan.entity == "user" and (plan.ref_rows, plan.cur_rows) == (50, 10)
    assert m.drifts["train", "test"]["x"].entity is None  # a row measurement: per row
    (f,) = [f for f in FeatureDrift().judge(m) if f.subject == "plan"]
    assert f.severity == Severity.INFO
    assert "compared at one row per entity, 50 in train and 10 in test" in f.message
    assert "of 10 test `user` entities" in f.message
    # the same rows judged as rows drawn at random: the 10 rows of each user count as ten
    # observations, and the plan's shares (the same as per user) become significant, beyond
    # what one random re-split of the rows in twenty gives
    plan_random = _columns(FeatureDrift().run(_data(entity_split(shift=1.0), "random",
                                                    groups=["user"], label="y")))["plan"]
    st = plan_random.evidence["statistics"]
    assert plan_random.severity == Severity.WARN and st["p_adj"] < 0.05
    assert plan_random.metric.endswith("_beyond_random_resplits")
    assert st["psi"] == pytest.approx(f.evidence["statistics"]["psi"])


def test_row_measurements_are_judged_against_entity_resplits():
    found = _columns(FeatureDrift().run(_data(entity_split(), groups=["user"], label="y")))
    level = found["level"]  # PSI ~1 between 50 and 10 users, as any 10 users would give
    assert (level.severity, level.metric) == (Severity.INFO, "psi_beyond_entity_resplits")
    st = level.evidence["statistics"]
    assert st["entity re-splits"] == RESPLITS and st["re-split largest"] >= st["psi"]
    assert "split again 9 times by whole `user` entities at random" in level.message
    shifted = _columns(FeatureDrift().run(_data(entity_split(shift=1.0), groups=["user"],
                                                label="y")))
    assert shifted["x"].severity == Severity.FAIL
    assert shifted["x"].metric.endswith("_beyond_entity_resplits")
    assert shifted["level"].severity == Severity.INFO


def test_resplits_fill_the_later_side_with_whole_entities_to_its_rows():
    data = _data(entity_split(), groups=["user"], label="y")
    engine = engine_of(data)
    view, names, made = entity_views(engine, data.roles, [("train", "test")],
                                     ["plan", "level", "x"], seed=0)
    assert view is not None and len(names["train", "test"]) == 1 + RESPLITS
    rows = view.split_rows()
    for ref, cur in names["train", "test"][1:]:
        assert rows[cur] == 100 and rows[ref] == 500  # 10 whole users of 10 rows
        a = set(view.frames[ref]["user"].to_list())
        b = set(view.frames[cur]["user"].to_list())
        assert not a & b and len(b) == 10
    assert "pooled and split again 9 times by whole `user` entities" in \
        made["train", "test"].note
    # not a group design: nothing
    other = _data(entity_split(), "random", groups=["user"], label="y")
    assert entity_views(engine_of(other), other.roles, [("train", "test")], ["x"], 0)[0] \
        is None


def test_a_label_clustered_by_entity_is_judged_against_entity_resplits():
    frames = {s: f.rename({"level": "target"}) for s, f in entity_split().items()}
    (f,) = [f for f in LabelDrift().run(_data(frames, groups=["user"], label="target"))
            if f.subject == "target"]
    assert f.severity == Severity.INFO and f.metric.endswith("_beyond_entity_resplits")


def test_a_time_split_of_a_panel_shares_its_entities_and_period_attributes_by_construction():
    data = _data(panel_split(), groups=["firm"], time="year", label="y")
    (overlap,) = [f for f in GroupOverlap().run(data) if f.metric == "group_overlap_rows"]
    assert overlap.severity == Severity.INFO and overlap.count == 60
    assert "the splits are cut by time (`year`)" in overlap.message
    found = _columns(FeatureDrift().run(_data(panel_split(), groups=["firm"], time="year",
                                              label="y")))
    national = found["national"]  # one value a year: every test value is new
    assert national.severity == Severity.INFO
    assert "national takes one value per year" in national.message
    # declared a random split, the same entities are a leak and the yearly values drift
    random = _data(panel_split(), "random", groups=["firm"], time="year", label="y")
    (shared,) = [f for f in GroupOverlap().run(random) if f.metric == "group_overlap_rows"]
    assert shared.severity == Severity.FAIL
    assert _columns(FeatureDrift().run(_data(panel_split(), "random", groups=["firm"],
                                             time="year", label="y")))["national"].severity \
        == Severity.FAIL


def test_splits_holding_columns_in_another_order_or_set_are_pooled_on_the_shared_ones():
    frames = entity_split(shift=1.0)
    test = frames["test"]
    frames["test"] = test.select(list(reversed(test.columns))).with_columns(
        y=pl.lit(None, dtype=pl.Int64))  # columns in another order, an unlabelled test
    found = _columns(FeatureDrift().run(_data(frames, groups=["user"], label="y")))
    assert found["x"].severity == Severity.FAIL
    assert found["x"].metric.endswith("_beyond_entity_resplits")


def test_a_waiver_baseline_or_ledger_series_of_a_statistic_keeps_matching_its_graded_null():
    from auditor.core.config import Waiver, base_metric
    from auditor.report.results import Finding
    from auditor.signoff.baseline import finding_key

    assert base_metric("psi_beyond_trend") == "psi"
    assert base_metric("ks_d_beyond_entity_resplits") == "ks_d"
    assert base_metric("unseen_share") == "unseen_share"
    f = Finding(severity=Severity.FAIL, message="m", metric="psi_beyond_trend", subject="x",
                splits=["train", "test"])
    w = Waiver(check="drift.features", subject="x", metric="psi", reason="known",
               owner="me", expires="2099-01-01")
    assert w.matches("drift.features", f)
    old = {"metric": "psi", "subject": "x", "splits": ["train", "test"]}
    assert finding_key("drift.features", f) == finding_key("drift.features", old)
