"""Waivers: matching, expiry, unmatched waivers, and their effect on statuses and exit codes."""
from __future__ import annotations

import json
from datetime import date

import pytest

import auditor
from auditor.report.results import CheckResult, Finding, Severity, Status
from auditor.signoff.waivers import CHECK_ID, apply_waivers, parse_waivers
from tests.workflow_fixtures import planted, suite_file

FUTURE, PAST = "2099-12-31", "2020-01-31"


def _w(**kw):
    base = {"check": "drift.features", "subject": "f0", "reason": "known seasonal shift",
            "owner": "data-team", "expires": FUTURE}
    return {**base, **kw}


def _audit(tmp_path, waivers, **kw):
    return auditor.audit(**planted(), label="y", suite=str(suite_file(tmp_path)),
                         waivers=waivers, **kw)


def test_waived_finding_keeps_its_numbers_and_stops_counting(tmp_path):
    plain = _audit(tmp_path, None)
    report = _audit(tmp_path, [_w(check="leakage.single_feature_auc", subject="balance",
                                  splits=["test", "train"])])
    before = plain.check("leakage.single_feature_auc").findings[0]
    (after, info) = report.check("leakage.single_feature_auc").findings
    assert before.severity == after.severity == Severity.FAIL and before.waived is None
    assert (after.subject, after.value, after.count) == ("balance", before.value, before.count)
    assert after.waived == {"reason": "known seasonal shift", "owner": "data-team",
                            "expires": FUTURE}
    assert plain.check("leakage.single_feature_auc").status == Status.FAIL
    assert report.check("leakage.single_feature_auc").status == Status.PASS
    assert "(1 waived finding)" in report.check("leakage.single_feature_auc").summary
    applied = report.check(CHECK_ID)
    assert applied.status == Status.PASS
    assert [(f.metric, f.count) for f in applied.findings] == [("waiver_applied", 1)]
    doc = report.to_dict()
    sfa = next(c for c in doc["checks"] if c["id"] == "leakage.single_feature_auc")
    assert sfa["findings"][0]["waived"]["owner"] == "data-team"
    assert "waived" not in sfa["findings"][1]  # unset marks are not serialised


def test_waiving_every_failure_makes_the_run_pass(tmp_path):
    waivers = [_w(subject=f"f{i}") for i in range(5)]
    waivers += [_w(check="leakage.single_feature_auc", subject="balance"),
                _w(check="leakage.duplicates", subject="", metric="duplicate_rows")]
    report = _audit(tmp_path, waivers)
    assert _audit(tmp_path, None).exit_code() == 1
    assert report.exit_code() == 0 and report.passed()
    assert report.status == Status.PASS
    assert sum(f.waived is not None for c in report.checks for f in c.findings) == 7


def test_expired_waiver_is_reported_and_its_finding_counts_again(tmp_path):
    report = _audit(tmp_path, [_w(check="leakage.single_feature_auc", subject="balance",
                                  expires=PAST)])
    finding = report.check("leakage.single_feature_auc").findings[0]
    assert finding.waived is None and finding.severity == Severity.FAIL
    (expired,) = report.check(CHECK_ID).findings
    assert expired.severity == Severity.WARN and expired.metric == "waiver_expired"
    assert expired.count == 1 and expired.subject == "balance"
    assert "expired on 2020-01-31" in expired.message
    assert report.check(CHECK_ID).status == Status.WARN and report.exit_code() == 1


@pytest.mark.parametrize("change", [{"subject": "nope"}, {"splits": ["train", "val"]},
                                    {"check": "leakage.group_overlap"},
                                    {"metric": "ks_d"}])
def test_waiver_that_matches_nothing_warns(tmp_path, change):
    report = _audit(tmp_path, [_w(**change)])
    (unmatched,) = report.check(CHECK_ID).findings
    assert unmatched.metric == "waiver_unmatched" and unmatched.severity == Severity.WARN
    assert report.check("drift.features").status == Status.FAIL  # nothing was waived
    assert not any(f.waived for c in report.checks for f in c.findings)


def _result(*findings: Finding) -> CheckResult:
    return CheckResult(id="drift.features", title="t", status=Status.FAIL, duration_s=0.0,
                       summary="s", findings=list(findings))


def test_matching_rules_subject_lists_as_sets_info_never_waived_expiry_day_included():
    pair = Finding(severity=Severity.WARN, message="m", metric="m", subject=["a", "b"],
                   splits=["train", "test"])
    info = Finding(severity=Severity.INFO, message="m", metric="m", subject="c")
    (w_pair, w_info, w_today) = parse_waivers([
        _w(subject=["b", "a"]), _w(subject="c"), _w(subject=["a", "b"], expires="2026-05-01")])
    assert w_pair.matches("drift.features", pair) and not w_pair.matches("drift.label", pair)
    whole = Finding(severity=Severity.FAIL, message="m", metric="m", subject="")
    (w_empty, w_one) = parse_waivers([_w(subject=[]), _w(subject=["c"])])
    assert w_empty.matches("drift.features", whole)  # [] and "" both mean the dataset
    assert w_one.matches("drift.features", Finding(severity=Severity.WARN, message="m",
                                                   metric="m", subject="c"))
    assert not w_info.matches("drift.features", info)
    results = [_result(pair)]
    summary = apply_waivers(results, [w_today], today=date(2026, 5, 1))
    assert pair.waived is not None and results[0].status == Status.PASS  # valid on its date
    assert summary.findings[0].metric == "waiver_applied"
    pair.waived = None
    summary = apply_waivers([_result(pair)], [w_today], today=date(2026, 5, 2))
    assert pair.waived is None and summary.findings[0].metric == "waiver_expired"
    assert apply_waivers([_result(pair)], []) is None


@pytest.mark.parametrize("bad, where", [({"owner": ""}, "owner"), ({"expires": "soon"},
                                        "expires"), ({"reason": "   "}, "reason"),
                                       ({"colour": "red"}, "colour"),
                                       ({"check": "drift.feature"}, "check")])
def test_invalid_waiver_is_one_config_error(bad, where):
    from auditor.errors import ConfigError

    with pytest.raises(ConfigError, match=rf"waivers\.0\.{where}"):
        parse_waivers([_w(**bad)])


def test_waivers_in_audit_yaml_show_in_json_html_and_terminal(tmp_path, write_splits, capsys):
    from auditor.cli import main

    paths = write_splits(planted())
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(json.dumps({
        "datasets": {k: str(v) for k, v in paths.items()}, "columns": {"label": "y"},
        "suite": str(suite_file(tmp_path)),
        "waivers": [_w(check="leakage.single_feature_auc", subject="balance",
                       reason="<b>legit</b> until the new schema")]}))
    assert main(["run", str(cfg), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "waived" in err and "<b>legit</b> until the new schema" in err
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["config"]["waivers"][0]["owner"] == "data-team"
    page = (tmp_path / "out" / "report.html").read_text()
    assert '<span class="badge waived">waived</span>' in page
    assert "1 finding accepted by waivers (not counted" in page  # said in the verdict
    assert "&lt;b&gt;legit&lt;/b&gt; until the new schema" in page and "<b>legit" not in page


def test_bad_waiver_in_yaml_exits_2(tmp_path, write_splits, cli):
    paths = write_splits(planted())
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(json.dumps({"datasets": {k: str(v) for k, v in paths.items()},
                               "waivers": [{"check": "drift.features", "subject": "f0"}]}))
    r = cli("run", cfg, "--out", tmp_path / "out")
    assert r.returncode == 2 and "waivers.0.reason" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_misspelt_check_id_suggests_the_right_one():
    from auditor.errors import ConfigError

    with pytest.raises(ConfigError, match=r"waivers\.0\.check: .*unknown check id "
                                          r"'drift.feature' \(did you mean 'drift.features'\?\)"):
        parse_waivers([_w(check="drift.feature")])


def test_waiver_of_a_crashed_skipped_or_absent_check_says_why_it_matched_nothing():
    from auditor.report.results import exit_code

    crashed = CheckResult(id="drift.features", title="t", status=Status.ERROR, duration_s=0.0,
                          summary="crashed", error="ValueError: boom")
    skipped = CheckResult(id="leakage.temporal", title="t", status=Status.SKIPPED,
                          duration_s=0.0, summary="no time column")
    waivers = parse_waivers([_w(), _w(check="leakage.temporal", subject="ts"),
                             _w(check="leakage.group_overlap", subject="user_id")])
    summary = apply_waivers([crashed, skipped], waivers, today=date(2026, 5, 1))
    messages = [f.message for f in summary.findings]
    assert [f.metric for f in summary.findings] == ["waiver_unmatched"] * 3
    assert "drift.features crashed in this run, so the waiver could not be checked" \
        in messages[0]
    assert "leakage.temporal was skipped in this run" in messages[1]
    assert "the suite does not run that check" in messages[2]
    assert crashed.status == Status.ERROR and skipped.status == Status.SKIPPED
    assert exit_code([crashed, skipped, summary], Severity.FAIL) == 3  # still the tool's error


def test_expired_waiver_counts_days_in_words():
    pair = Finding(severity=Severity.FAIL, message="m", metric="m", subject="f0")
    (w,) = parse_waivers([_w(expires="2026-04-30")])
    one = apply_waivers([_result(pair)], [w], today=date(2026, 5, 1)).findings[0]
    many = apply_waivers([_result(pair)], [w], today=date(2026, 5, 31)).findings[0]
    assert "expired on 2026-04-30, 1 day ago" in one.message and one.value == 1.0
    assert "31 days ago" in many.message and pair.waived is None


def test_numeric_column_names_from_yaml_are_names_and_bad_subjects_say_what_is_expected():
    from auditor.errors import ConfigError

    (w,) = parse_waivers([_w(subject=2024)])  # YAML: `subject: 2024`
    assert w.subject == "2024"
    assert w.matches("drift.features", Finding(severity=Severity.FAIL, message="m",
                                               metric="psi", subject="2024"))
    assert parse_waivers([_w(subject=[7, "b"])])[0].subject == ["7", "b"]
    with pytest.raises(ConfigError, match=r'^waivers\.0\.subject: must be a column name, a '
                                          r'list of column names, or "" for the dataset$'):
        parse_waivers([_w(subject={"a": 1})])
    with pytest.raises(ConfigError, match=r"^waivers: "):
        parse_waivers({"check": "drift.features"})


def test_a_list_or_glob_subject_waives_each_columns_finding(tmp_path):
    """The five shifted features fail one finding each: a list waiver names them once, a glob
    ``f*`` too; a list missing one of them leaves that one counting."""
    plain = _audit(tmp_path, None)
    failing = sorted(f.subject for f in plain.check("drift.features").findings
                     if f.severity == Severity.FAIL)
    assert failing == ["f0", "f1", "f2", "f3", "f4"]
    for subject in (failing, "f*"):
        report = _audit(tmp_path, [_w(subject=subject)])
        waived = sorted(f.subject for f in report.check("drift.features").findings
                        if f.waived is not None)
        assert waived == failing, subject
        assert report.check("drift.features").status != Status.FAIL
    partial = _audit(tmp_path, [_w(subject=["f0", "f1", "f2", "f3"])])
    left = [f.subject for f in partial.check("drift.features").findings
            if f.severity == Severity.FAIL and f.waived is None]
    assert left == ["f4"]
    # a dataset-level finding is covered by "" only, never by a glob
    from auditor.core.config import Waiver
    w = Waiver(**_w(subject="*"))
    assert not w.covers("") and w.covers("f0") and w.covers(["f0", "x"])
    literal = Waiver(**_w(subject="is_active?"))  # '?' is part of column names: not a glob
    assert literal.covers("is_active?") and not literal.covers("is_actives")


def test_an_unmatched_waiver_pinned_to_other_splits_names_the_closest_finding(tmp_path):
    report = _audit(tmp_path, [_w(check="leakage.single_feature_auc", subject="balance",
                                  splits=["train", "val"])])
    (unmatched,) = [f for f in report.check(CHECK_ID).findings
                    if f.metric == "waiver_unmatched"]
    assert unmatched.message.endswith(
        "the problem is gone or the waiver names the wrong check, subject or splits; delete "
        "or fix it (the closest finding: fail on leakage.single_feature_auc / balance with "
        "splits train → test: the waiver's splits differ).")


def test_a_waiver_on_a_column_covers_the_copies_its_finding_names(tmp_path):
    """``balance_x2 = 2 * balance + 1`` is the same field written twice: the single-feature
    finding on balance names it as a copy, so waiving balance accepts both findings."""
    import polars as pl

    frames = {k: v.with_columns((pl.col("balance") * 2 + 1).alias("balance_x2"))
              for k, v in planted().items()}
    report = auditor.audit(**frames, label="y", suite=str(suite_file(tmp_path)), waivers=[
        _w(check="leakage.single_feature_auc", subject="balance")])
    auc = report.check("leakage.single_feature_auc")
    found = {f.subject: f for f in auc.findings if f.severity == Severity.FAIL}
    assert set(found) == {"balance", "balance_x2"}
    assert found["balance"].evidence["grading"]["copies_not_counted"] == {"balance_x2": 1.0}
    assert all(f.waived is not None for f in found.values()) and auc.status == Status.PASS
    (applied,) = report.check(CHECK_ID).findings
    assert applied.metric == "waiver_applied" and applied.count == 2
