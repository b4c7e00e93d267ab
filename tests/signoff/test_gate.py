"""The gate of a scheduled audit: ``--fail-on new`` against ``--baseline last`` (a known,
persisting failure does not keep the pipeline red; a new one does), and ``--no-ledger`` for an
ad-hoc run of a config that names a ledger."""
from __future__ import annotations

import json

import junitparser

from auditor.cli import main
from auditor.signoff.ledger import Ledger
from tests.signoff.test_ledger import _config
from tests.workflow_fixtures import planted


def _night(tmp_path, name, frames, *extra, waivers=None):
    cfg = _config(tmp_path, frames, ledger="reports/ledger.sqlite")
    if waivers:
        cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "waivers": waivers}))
    out = tmp_path / "reports" / name
    code = main(["run", str(cfg), "--out", str(out), "--quiet", "--baseline", "last",
                 "--junit", str(tmp_path / f"{name}.xml"),
                 "--summary-md", str(tmp_path / f"{name}.md"), *extra])
    doc = json.loads((out / "report.json").read_text())
    new = sorted((c["id"], str(f["subject"])) for c in doc["checks"] for f in c["findings"]
                 if f["severity"] == "fail" and f.get("change") == "new")
    failures = sum(case.result != [] for suite in junitparser.JUnitXml.fromfile(
        str(tmp_path / f"{name}.xml")) for case in suite if not case.is_skipped)
    return code, doc, new, failures, (tmp_path / f"{name}.md").read_text()


def test_fail_on_new_is_red_only_for_failures_the_baseline_did_not_hold(tmp_path, capsys):
    # night 1: copies and a leaky feature; nothing earlier, so every failure is new
    code, doc, new, failures, md = _night(tmp_path, "n1", planted(shift=0.0, seed=1),
                                          "--fail-on", "new")
    assert code == 1 and "baseline" not in doc and failures == 2
    assert "2 of 3 checks have failing findings that are new since the baseline" in md
    # night 2: the same problems again -> persisting: green under --fail-on new ...
    code, doc, new, failures, md = _night(tmp_path, "n2", planted(shift=0.0, seed=1),
                                          "--fail-on", "new")
    assert (code, new, failures) == (0, [], 0)
    assert doc["baseline"]["new"] == 0 and doc["baseline"]["persisting"] >= 2
    assert "No failing finding is new since the baseline" in md
    # ... and still red under the default gate, on the same data (an ad-hoc run: no ledger)
    code, *_ = _night(tmp_path, "adhoc", planted(shift=0.0, seed=1), "--no-ledger")
    assert code == 1
    # night 3: five features shift in test -> new drift failures turn the gate red again
    code, doc, new, failures, md = _night(tmp_path, "n3", planted(shift=1.5, seed=1),
                                          "--fail-on", "new")
    assert code == 1 and failures == 1
    assert {c for c, _ in new} == {"drift.features"}
    assert doc["baseline"]["path"].endswith("n2/report.json")  # the ledger's last run
    runs = Ledger(str(tmp_path / "reports" / "ledger.sqlite")).runs()
    assert [r["report_path"].split("/")[-2] for r in runs] == ["n1", "n2", "n3"]  # no adhoc


def test_fail_on_new_without_a_baseline_and_contradicting_ledger_flags_are_refused(tmp_path,
                                                                                    capsys):
    cfg = _config(tmp_path, planted(), ledger="reports/ledger.sqlite")
    out = tmp_path / "reports" / "x"
    assert main(["run", str(cfg), "--out", str(out), "--fail-on", "new"]) == 2
    err = capsys.readouterr().err
    assert "--fail-on new gates on the failing findings a baseline did not hold: add " \
           "--baseline last" in err and len(err.strip().splitlines()) == 1
    assert main(["run", str(cfg), "--out", str(out), "--ledger", "l.sqlite",
                 "--no-ledger"]) == 2
    assert "--ledger and --no-ledger contradict each other" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "reports" / "ledger.sqlite").exists()


def test_a_fail_that_was_a_warn_or_waived_in_the_baseline_is_new():
    """--fail-on new must turn red when a known warn becomes a fail, or when the waiver of a
    known fail is gone; a fail the baseline held as an unwaived fail, a warn that stays a
    warn, and a fail waived on both nights persist."""
    from auditor.report.results import CheckResult, Finding, Report, Severity, Status
    from auditor.signoff.baseline import mark_changes

    def finding(subject, severity):
        return Finding(severity=Severity(severity), message=subject, metric="psi",
                       subject=subject, splits=["train", "test"])

    now = Report(status=Status.FAIL, started_at="t", duration_s=1.0, seed=0, datasets={},
                 checks=[CheckResult(id="drift.features", title="T", status=Status.FAIL,
                                     duration_s=0.1, summary="S", findings=[
                                         finding("escalated", "fail"), finding("kept", "fail"),
                                         finding("unwaived", "fail"), finding("warned", "warn"),
                                         finding("still waived", "fail")])])
    now.checks[0].findings[-1].waived = {"reason": "r", "owner": "o", "expires": "2099-01-01"}
    before = {"checks": [{"id": "drift.features", "findings": [
        {"severity": "warn", "metric": "psi", "subject": "escalated", "splits": ["train", "test"]},
        {"severity": "fail", "metric": "psi", "subject": "kept", "splits": ["train", "test"]},
        {"severity": "fail", "metric": "psi", "subject": "unwaived", "splits": ["train", "test"],
         "waived": {"reason": "r", "owner": "o", "expires": "2020-01-01"}},
        {"severity": "warn", "metric": "psi", "subject": "warned", "splits": ["train", "test"]},
        {"severity": "fail", "metric": "psi", "subject": "still waived",
         "splits": ["train", "test"],
         "waived": {"reason": "r", "owner": "o", "expires": "2099-01-01"}}]}]}
    mark_changes(now, before, "<dict>")
    assert {f.subject: f.change for f in now.checks[0].findings} == {
        "escalated": "new", "kept": "persisting", "unwaived": "new", "warned": "persisting",
        "still waived": "persisting"}  # waived on both nights: not news
    assert now.exit_code("new") == 1
    for f in now.checks[0].findings:
        if f.subject in ("escalated", "unwaived"):
            f.change = "persisting"
    assert now.exit_code("new") == 0 and now.exit_code("fail") == 1


def test_six_nights_of_a_scheduled_audit(tmp_path, capsys):
    """Six nightly runs gated with --fail-on new against --baseline last: known problems
    persist without turning the gate red, a drifting group of columns is new once and then
    waived as a group (one waiver with a glob subject), a fixed problem is resolved, and its
    return is new again. Exit codes, the Markdown verdict, the diagnosis and the history."""
    waiver = [{"check": "drift.features", "subject": "f*", "owner": "data-team",
               "reason": "the new market's population", "expires": "2099-12-31"}]

    def night(name, frames, waive=False):
        return _night(tmp_path, name, frames, "--fail-on", "new",
                      waivers=waiver if waive else None)

    runs = [night("n1", planted(shift=0.0, seed=1)),                 # copies + a leak: new
            night("n2", planted(shift=0.0, seed=1)),                 # the same: persisting
            night("n3", planted(shift=1.5, seed=1)),                 # five columns drift
            night("n4", planted(shift=1.5, seed=1), waive=True),     # the drift accepted
            night("n5", planted(shift=1.5, seed=1, copies=0), waive=True),  # copies removed
            night("n6", planted(shift=1.5, seed=1), waive=True)]     # the copies are back
    assert [r[0] for r in runs] == [1, 0, 1, 0, 0, 1]
    assert [sorted({c for c, _ in r[2]}) for r in runs] == [
        [], [], ["drift.features"], [], [],  # night 1: no baseline, every fail gates
        ["leakage.duplicates"]]
    # night 3: the drifting columns are one grouped line of the log and of the Markdown
    doc3, md3 = runs[2][1], runs[2][4]
    assert sum("5 subjects flagged fail on psi" in line for line in md3.splitlines()) == 1
    assert [p["kind"] for p in doc3["diagnosis"]] == ["label_leak", "shared_rows", "shift"]
    # night 4: one waiver covers the five findings; the diagnosis leaves them out
    doc4 = runs[3][1]
    drift = next(c for c in doc4["checks"] if c["id"] == "drift.features")
    waived = [f for f in drift["findings"] if f.get("waived")]
    assert sorted(f["subject"] for f in waived) == [f"f{i}" for i in range(5)]
    assert "shift" not in [p["kind"] for p in doc4["diagnosis"]]
    assert ("| ✅ pass | `drift.features` | No finding that counts is above the thresholds. "
            "(5 waived findings) |") in runs[3][4]
    assert "2. **fail** (persisting) Rows shared between train and test: 12 of 212" in runs[3][4]
    # night 5: the copies are gone -> resolved, and no longer a problem
    doc5, md5 = runs[4][1], runs[4][4]
    assert doc5["baseline"]["resolved"] >= 1 and "- **resolved** `leakage.duplicates`" in md5
    assert [p["kind"] for p in doc5["diagnosis"]] == ["label_leak"]
    # night 6: the copies return: new against night 5, the gate is red again
    md6 = runs[5][4]
    assert "1 of 4 checks have failing findings that are new since the baseline" in md6
    assert "2. **fail** (new) Rows shared between train and test: 12 of 212" in md6
    assert main(["history", "--ledger", str(tmp_path / "reports" / "ledger.sqlite"), "--out",
                 str(tmp_path / "history")]) == 0
    page = (tmp_path / "history" / "history.html").read_text()
    # the duplicates chart carries its threshold (0.001) as a dashed line
    assert page.count("&#34;name&#34;:&#34;threshold 0.001&#34;") == 1
