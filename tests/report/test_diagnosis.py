"""The diagnosis at the top of a report: problems ranked by effect, with measured inflation."""
from __future__ import annotations

import json
import re
from datetime import datetime

import jsonschema
import numpy as np
import polars as pl
import pytest
from sklearn.metrics import roc_auc_score

import auditor
from auditor.loading.demo import make_demo
from auditor.probes.label_probe import LeakRows, leak_rows, scores_without
from auditor.probes.probe_model import BINARY
from auditor.report.ci_outputs import summary_markdown
from auditor.report.diagnosis import diagnose, diagnosis_lines
from auditor.report.render import render_html
from tests.report.test_results import SCHEMA


@pytest.fixture(scope="module")
def demo_doc():
    """The demo's planted problems, audited once with the default suite (probe included)."""
    report = auditor.audit(**make_demo(), label="churned", time="signup_ts",
                           groups=["customer_id"], ids=["row_id"])
    return json.loads(report.to_json())


def test_demo_diagnosis_ranks_the_leak_first_with_its_measured_inflation(demo_doc):
    jsonschema.validate(demo_doc, SCHEMA)
    problems = demo_doc["diagnosis"]
    assert [p["rank"] for p in problems] == list(range(1, len(problems) + 1))
    assert [(p["kind"], p["severity"]) for p in problems] == [
        ("label_leak", "fail"), ("shared_rows", "fail"), ("shared_entities", "fail"),
        ("time_overlap", "fail"), ("shift", "warn")]
    leak = problems[0]
    assert leak["subjects"] == ["days_since_cancel"]
    assert leak["checks"] == ["leakage.single_feature_auc", "leakage.feature_label_correlation",
                              "separability.label_probe"]
    # the inflation is the probe's own ablation: retrained without the column
    probe = next(c for c in demo_doc["checks"] if c["id"] == "separability.label_probe")
    drops = [r for f in probe["findings"] if f["metric"] == "ablation_drop"
             and f["subject"] == "days_since_cancel" for r in f["evidence"]["ablation"]]
    best = max(drops, key=lambda r: r["drop"])
    assert leak["inflation"] == {"split": best["split"], "score": best["score"],
                                 "without": best["without_feature"], "change": best["drop"],
                                 "how": "the label probe retrained without days_since_cancel",
                                 "metric": "AUC"}
    assert leak["inflation"]["change"] > 0.2
    # the decisive cut leads the sentence: the column is missing for one class only
    assert leak["sentence"].startswith("days_since_cancel is missing in 100.0% of class 0 rows "
                                       "and 0% of class 1 rows (the decisive cut). ")
    assert leak["action"].startswith("Drop days_since_cancel")


def test_demo_copies_groups_and_dates_are_scored_without_their_rows(demo_doc):
    problems = {p["kind"]: p for p in demo_doc["diagnosis"]}
    test = make_demo()["test"]
    train = make_demo()["train"]
    # the counts the leakage checks report are the rows the probe leaves out
    assert problems["shared_rows"]["sentence"].startswith("30 of 1,500 test rows (2.0%)")
    assert problems["shared_rows"]["inflation"]["how"] == (
        "the label probe scored on test without the 30 rows that copy a train row")
    shared = test["customer_id"].is_in(train["customer_id"].implode()).sum()
    assert problems["shared_entities"]["inflation"]["how"] == (
        f"the label probe scored on test without the {shared} rows whose customer_id occurs "
        "in train")
    early = (test["signup_ts"] < train["signup_ts"].max()).sum()
    assert problems["time_overlap"]["inflation"]["how"] == (
        f"the label probe scored on test without the {early} rows dated before the end of "
        "train")
    for kind in ("shared_rows", "shared_entities", "time_overlap"):
        inf = problems[kind]["inflation"]
        assert inf["change"] == pytest.approx(inf["score"] - inf["without"], abs=1e-4)


def test_demo_diagnosis_is_at_the_top_of_every_output(demo_doc):
    page = render_html(demo_doc)
    assert page.index('class="card diagnosis fail"') < page.index("<h2>Datasets</h2>")
    assert "<strong>+0.3" in page  # the leak's inflation, bold
    # the check sections: every failing one before the first passing one
    statuses = re.findall(r'<section class="card" id="check-\d+" data-check-status="(\w+)"',
                          page)
    assert statuses.index("pass") > max(i for i, s in enumerate(statuses) if s == "fail")
    assert statuses == sorted(statuses, key=["fail", "error", "warn", "pass",
                                             "skipped"].index)
    # the rule that graded the leak, beside the threshold it overrode and as a sentence
    assert ('0.95<div class="waiver">decided by: post outcome missingness: missing in 100.0% '
            "of class 0 rows (&gt;= 90.0%) and 0% of the others (&lt;= 1.0%)</div>") in page
    assert ('<p class="rule">Post-outcome missingness: days_since_cancel is missing in 100.0% '
            "of class 0 rows") in page
    md = summary_markdown(demo_doc)
    assert md.index("### Diagnosis") < md.index("| status | check | summary |")
    assert "1. **fail** days\\_since\\_cancel leaks the label" in md
    lines = diagnosis_lines(demo_doc)
    assert lines[0].startswith("1. [fail] days_since_cancel leaks the label: ")
    assert "Inflation: AUC on test" in lines[0] or "Inflation: AUC on val" in lines[0]
    assert len(lines) == len(demo_doc["diagnosis"])


def _finding(severity, metric, subject=None, splits=("train", "test"), value=0.5,
             message="m", **extra):
    return {"severity": severity, "metric": metric, "subject": subject, "splits": list(splits),
            "value": value, "threshold": 0.1, "count": 1, "message": message,
            "evidence": {}, **extra}


def _doc(*checks):
    return {"checks": [{"id": cid, "status": "fail", "findings": list(fs)} for cid, fs in checks]}


def test_findings_group_into_problems_and_only_counted_ones_are_diagnosed():
    doc = _doc(
        ("leakage.single_feature_auc", [_finding("warn", "single_feature_auc", "a", value=0.9),
                                        _finding("fail", "single_feature_auc", "b", value=0.99),
                                        _finding("info", "max_single_feature_auc")]),
        ("leakage.feature_label_correlation", [_finding("fail", "association", "b")]),
        ("leakage.duplicates", [
            _finding("fail", "duplicate_rows"),
            _finding("fail", "duplicate_rows", splits=("val", "test"),
                     waived={"reason": "r", "owner": "o", "expires": "2030-01-01"}),
            _finding("fail", "duplicate_rows", splits=("train", "val"), change="resolved"),
            _finding("warn", "conflicting_labels")]),
        ("tokens.special_tokens", [_finding("fail", "label_shift")]),
        ("tokens.contamination", [_finding("fail", "contaminated_docs",
                                           splits=("train", "val"))]),
        ("separability.label_probe", [_finding("warn", "probe_auc",
                                               evidence={"result": {
                                                   "verdict": "suspiciously good"}})]),
        ("drift.features", [_finding("warn", "psi", "x"), _finding("warn", "psi", "z")]))
    problems = diagnose(doc)
    got = [(p.kind, p.severity, p.subjects, p.splits, p.findings) for p in problems]
    assert got == [
        ("label_leak", "fail", ["b"], ["train", "test"], 3),  # + the probe's too-good score
        ("shared_rows", "fail", [], ["train", "test"], 1),
        ("shared_rows", "fail", [], ["train", "val"], 1),     # documents, another pair
        ("tokens", "fail", [], ["train", "test"], 1),
        ("label_leak", "warn", ["a"], ["train", "test"], 1),
        ("label_quality", "warn", [], ["train", "test"], 1),
        ("shift", "warn", ["x", "z"], ["train", "test"], 2)]
    assert problems[0].checks == ["leakage.single_feature_auc",
                                  "leakage.feature_label_correlation",
                                  "separability.label_probe"]
    assert problems[3].headline == "Special tokens, attention masks or labels are misplaced"
    assert all(p.inflation is None for p in problems)  # no probe evidence to measure it by


def test_measured_inflation_ranks_problems_of_one_severity():
    def probe(drop_a, drop_b, copies_change):
        rows = [{"rows_left_out": "rows that copy a train row", "kind": "copies",
                 "column": None, "rows": 5, "of": 100,
                 "score_all_rows": 0.9, "score_without": 0.9 - copies_change,
                 "change": copies_change}]
        return [_finding("info", "probe_auc", evidence={"result": {"verdict": "learnable"},
                                                        "without_leaking_rows": rows}),
                *[_finding("fail", "ablation_drop", col, evidence={"ablation": [
                    {"split": "test", "score": 0.9, "without_feature": 0.9 - d, "drop": d}]})
                  for col, d in (("a", drop_a), ("b", drop_b))]]
    doc = _doc(("leakage.duplicates", [_finding("fail", "duplicate_rows")]),
               ("separability.label_probe", probe(0.05, 0.2, 0.1)))
    ranked = [(p.kind, p.subjects, p.inflation["change"]) for p in diagnose(doc)]
    assert ranked == [("label_leak", ["b"], 0.2), ("shared_rows", [], 0.1),
                      ("label_leak", ["a"], 0.05)]


def test_leak_rows_mark_copies_shared_groups_and_earlier_dates():
    train = pl.DataFrame({"x": [1.0, 2.0, None, 4.0], "c": ["a", "b", "c", "d"],
                          "y": [0, 1, 0, 1], "g": [10, 11, None, 13],
                          "t": pl.datetime_range(datetime(2024, 1, 1), datetime(2024, 1, 4),
                                                 "1d", eager=True)})
    rows = pl.DataFrame({"x": [1.0, 2.0, None, 9.0, None], "c": ["a", "b", "c", "d", "c"],
                         "y": [0, 0, 0, 1, 0], "g": [99, 11, None, 12, 13],
                         "t": [datetime(2023, 12, 1), datetime(2024, 1, 4),
                               datetime(2024, 1, 3, 23), None, datetime(2025, 1, 1)]})
    leaks = leak_rows(train, rows, "train", ["x", "c", "y"], ["g"], "t")
    assert [(lk.kind, lk.column, lk.label, lk.mask.tolist()) for lk in leaks] == [
        # row 0 copies train row 0; row 1's label differs; rows 2 and 4 copy row 2 (nulls
        # equal)
        ("copies", None, "rows that copy a train row", [True, False, True, False, True]),
        # a missing group is no entity; 13 occurs in train
        ("group", "g", "rows whose g occurs in train", [False, True, False, False, True]),
        # strictly before train's latest time (a missing time is not)
        ("time", "t", "rows dated before the end of train", [True, False, True, False, False])]


def test_leak_rows_equal_a_semi_join_on_all_train_rows():
    # leak_rows joins only the train rows whose row hash an evaluation row shares; the result
    # must be a plain semi join's, with -0.0 = 0.0, NaN = -NaN and null = null as in a join,
    # categories compared by value
    rng = np.random.default_rng(5)
    n = 3_000
    x = rng.integers(0, 6, n).astype(float)
    x[rng.random(n) < 0.05] = np.nan
    x[rng.random(n) < 0.05] = -0.0
    x[rng.random(n) < 0.05] = -np.nan  # NaN with the sign bit set
    train = pl.DataFrame({"x": x, "c": pl.Series(rng.choice(["a", "b", None], n),
                                                 dtype=pl.Categorical),
                          "y": rng.integers(0, 2, n), "g": rng.integers(0, 2_000, n)})
    rows = train.sample(800, seed=1, with_replacement=True).with_columns(
        pl.when(pl.int_range(pl.len()) % 3 == 0).then(pl.col("y") + 1).otherwise("y")
        .alias("y"), (pl.col("g") + pl.int_range(pl.len()) % 2 * 1_000).alias("g"))
    leaks = leak_rows(train, rows, "train", ["x", "c", "y"], ["g"], None)

    def semi(cols: list[str]) -> list[bool]:
        found = rows.with_row_index("i").join(train.select(cols).unique(), on=cols,
                                              how="semi", nulls_equal=True)["i"]
        return np.isin(np.arange(rows.height), found.to_numpy()).tolist()

    assert leaks[0].mask.tolist() == semi(["x", "c", "y"])
    assert leaks[1].mask.tolist() == semi(["g"])
    assert 0 < leaks[0].mask.sum() < rows.height and 0 < leaks[1].mask.sum() < rows.height


def test_scores_without_leaking_rows_equal_sklearn_on_the_kept_rows():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    out = (y + rng.normal(0, 1.2, 400))[:, None]
    a = rng.random(400) < 0.1
    b = rng.random(400) < 0.2
    leaks = [LeakRows("copies", None, "copies", a), LeakRows("group", "g", "groups", b),
             LeakRows("time", "t", "none", np.zeros(400, bool))]
    rows = scores_without(BINARY, out, y, leaks, roc_auc_score(y, out[:, 0]))
    assert [(r["rows_left_out"], r["kind"], r["column"]) for r in rows] == [
        ("copies", "copies", None), ("groups", "group", "g"),
        ("rows of any of these kinds", "any", None)]
    for r, mask in zip(rows, (a, b, a | b)):
        keep = ~mask
        assert r["rows"] == int(mask.sum()) and r["of"] == 400
        assert r["score_without"] == pytest.approx(roc_auc_score(y[keep], out[keep, 0]),
                                                   abs=1e-4)
        assert r["change"] == pytest.approx(r["score_all_rows"] - r["score_without"], abs=2e-4)
    # too few rows left (a random split's "dated before the end of train" is nearly every
    # row), or too few of a class: no estimate rather than the score of a handful of rows
    most = np.arange(400) >= 30
    one_class = y == 1
    rows = scores_without(BINARY, out, y, [LeakRows("time", "t", "most", most),
                                           LeakRows("copies", None, "ones", one_class)],
                          0.8)
    assert [r["score_without"] for r in rows[:2]] == [None, None]
    assert all(r["change"] is None for r in rows)


def test_data_strings_in_the_diagnosis_are_escaped():
    hostile = "<script>alert(1)</script>"
    doc = _doc(("leakage.single_feature_auc", [
        _finding("fail", "single_feature_auc", hostile, message=f"{hostile} leaks")]))
    doc.update(status="fail", datasets={})
    page = render_html(doc)
    assert hostile not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; leaks the label" in page
    assert diagnose(doc)[0].action.startswith(f"Drop {hostile}")


def test_each_kind_of_finding_names_its_own_problem_and_fix():
    doc = _doc(
        ("leakage.temporal", [_finding("fail", "future_values", "paid_at",
                                       splits=("train", "val", "test"))]),
        ("leakage.duplicates", [_finding("warn", "within_split_duplicates", splits=("train",))]),
        ("leakage.group_overlap", [_finding("fail", "id_overlap_rows", "row_id")]),
        ("schema.expectations", [_finding("fail", "expectation_failed", "age")]),
        ("separability.label_probe", [_finding("warn", "time_holdout_gap",
                                               splits=("train",))]))
    got = {p.kind: (p.headline, p.action.split(":")[0].split(" (")[0]) for p in diagnose(doc)}
    assert got == {
        "future_feature": ("paid_at holds values from after the row's own time",
                           "Rebuild paid_at from what was known at each row's time"),
        "shared_rows": ("Rows shared between train and test",
                        "Remove the copies from the later split"),
        "repeated_rows": ("Rows repeated in train", "Deduplicate the split"),
        "time_signal": ("A random holdout overstates the score in train",
                        "Evaluate on a later period"),
        "other": ("schema.expectations", "See the check's evidence in the report.")}


def test_inflation_is_only_read_for_the_pair_the_probe_was_scored_on():
    def without(kind, column, label):
        return {"rows_left_out": label, "kind": kind, "column": column, "rows": 5, "of": 100,
                "score_all_rows": 0.9, "score_without": 0.8, "change": 0.1}

    probe = [_finding("info", "probe_auc", evidence={"result": {"verdict": "learnable"},
                                                     "without_leaking_rows": [
        without("copies", None, "rows that copy a train row"),
        without("group", "shop", "rows whose shop occurs in train"),
        without("group", "user", "rows whose user occurs in train")]})]
    doc = _doc(("leakage.duplicates", [_finding("fail", "duplicate_rows", splits=("val", "test")),
                                       _finding("fail", "duplicate_rows")]),
               ("leakage.group_overlap", [_finding("fail", "group_overlap_rows", "user")]),
               ("separability.label_probe", probe))
    got = {(p.kind, tuple(p.splits)): p.inflation and p.inflation["how"] for p in diagnose(doc)}
    assert got == {
        ("shared_rows", ("train", "test")):
            "the label probe scored on test without the 5 rows that copy a train row",
        ("shared_rows", ("val", "test")): None,  # the probe's copies are copies of train rows
        ("shared_entities", ("train", "test")):  # the flagged group's rows, not another's
            "the label probe scored on test without the 5 rows whose user occurs in train"}


def test_the_rule_that_decided_states_its_own_figure_and_threshold():
    from auditor.judging.leak_rules import Purity, Rules, judge
    from auditor.report.render import group_decided_by, rule_sentence

    rules = Rules(0.85, 0.95, 0.995, 0.15, 0.9, 0.01, 0.995, 0.1, 30)
    det = judge(rules, value=0.9905, train_value=1.0, others=[("b", 0.6)], name="a",
                what="AUC").evidence()
    f = {"severity": "fail", "value": 0.9905, "threshold": 0.995, "evidence": {"grading": det}}
    # a column named "a" and the rule's figure, not the test value against the threshold
    assert group_decided_by([f]) == "near deterministic: AUC 1.000 in train >= 0.995"
    assert rule_sentence(det) == "Near-deterministic: AUC 1.000 in train (>= 0.995)."
    strong = judge(rules, value=0.9, train_value=0.9, others=[("b", 0.88), ("c", 0.86)],
                   name="x", what="AUC").evidence()
    g = {"evidence": {"grading": strong}}
    assert group_decided_by([g]) == ("strong not singular: 2 other features within 0.15 of AUC "
                                     "0.900 (warns at most)")
    lone = judge(rules, value=0.97, train_value=0.97, others=[("b", 0.6)], name="x",
                 what="AUC", ci_low=0.93, purity=Purity(0.5, 1, "high", 400)).evidence()
    assert group_decided_by([{"evidence": {"grading": lone}}]) == (
        "singular: 0.970 > fail_above 0.95, CI low 0.930")
    # a row grouping subjects: their shared rule, not the first subject's figure
    assert group_decided_by([g, g]) == "strong not singular"
    assert group_decided_by([g, f]) is None
    assert group_decided_by([{"evidence": {"grading": {"rule": "threshold"}}}]) is None
    assert group_decided_by([{"evidence": {}}]) is None


def test_the_report_schema_lists_every_problem_kind():
    """report.schema.json's diagnosis kinds are the kinds the diagnosis can give (a kind
    added to one and not the other made a valid report fail its own schema)."""
    from auditor.report.diagnosis import ORDER

    kinds = SCHEMA["properties"]["diagnosis"]["items"]["properties"]["kind"]["enum"]
    assert kinds == ORDER
