"""--junit (parsed by junitparser), --summary-md, baseline changes and grouped findings in
every output."""
from __future__ import annotations

import json

import pytest

import auditor
from auditor.report.ci_outputs import junit_xml, md_escape, summary_markdown
from auditor.cli import main
from auditor.report.grouping import finding_lines, group_findings
from tests.workflow_fixtures import planted, suite_file


@pytest.fixture
def run_dir(tmp_path, write_splits):
    paths = write_splits(planted())
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(json.dumps({"datasets": {k: str(v) for k, v in paths.items()},
                               "columns": {"label": "y"}, "suite": str(suite_file(tmp_path))}))
    return cfg


def test_junit_has_one_case_per_check_and_failures_carry_the_summary(tmp_path, run_dir):
    junitparser = pytest.importorskip("junitparser")
    out, xml = tmp_path / "out", tmp_path / "ci" / "audit.xml"
    assert main(["run", str(run_dir), "--out", str(out), "--quiet", "--junit", str(xml)]) == 1
    doc = json.loads((out / "report.json").read_text())
    parsed = junitparser.JUnitXml.fromfile(str(xml))
    (suite,) = list(parsed)
    cases = {c.name: c for c in suite}
    assert list(cases) == [c["id"] for c in doc["checks"]]
    assert suite.tests == 3 and suite.failures == 3 and suite.errors == 0
    for c in doc["checks"]:
        (failure,) = cases[c["id"]].result
        assert isinstance(failure, junitparser.Failure)
        assert failure.message == c["summary"] and failure.type == "fail"
    drift = cases["drift.features"].result[0].text
    assert drift.count("\n") == 0 and drift.startswith("fail: 5 subjects flagged fail on psi")
    assert cases["drift.features"].classname == "auditor.drift"


def test_junit_passes_warnings_below_fail_on_and_reports_skips_and_errors():
    junitparser = pytest.importorskip("junitparser")
    doc = {"duration_s": 1.0, "started_at": "2026-01-01T00:00:00Z", "checks": [
        {"id": "a.warned", "status": "warn", "duration_s": 0.1, "summary": "W", "findings": [
            {"severity": "warn", "metric": "m", "subject": "c", "splits": [], "message": "M"}]},
        {"id": "a.skipped", "status": "skipped", "duration_s": 0, "summary": "S", "findings": []},
        {"id": "a.crashed", "status": "error", "duration_s": 0, "summary": "E",
         "error": "ValueError: x", "findings": []}]}
    for fail_on, failures in (("fail", 0), ("warn", 1)):
        suite = list(junitparser.JUnitXml.fromstring(junit_xml(doc, fail_on)))[0]
        assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (3, failures, 1, 1)
        warned, skipped, crashed = list(suite)
        assert warned.is_passed == (fail_on == "fail") and skipped.is_skipped
        assert isinstance(crashed.result[0], junitparser.Error)
        assert crashed.result[0].text == "ValueError: x"


def test_summary_markdown_verdict_table_groups_and_escaping(tmp_path, run_dir):
    md = tmp_path / "summary.md"
    assert main(["run", str(run_dir), "--out", str(tmp_path / "o"), "--quiet",
                 "--summary-md", str(md)]) == 1
    text = md.read_text()
    assert text.startswith("## ❌ Dataset audit: FAIL\n")
    assert "3 of 3 checks have findings at or above `fail`" in text
    assert "| ❌ fail | `drift.features` |" in text
    (drift,) = [line for line in text.splitlines() if line.startswith("- **fail** `drift.f")]
    assert "f0, f1, f4, f3, f2" in drift and "5 subjects flagged fail on psi" in drift
    assert md_escape("a|b <script> `x` [l](u)\nz") == \
        "a\\|b &lt;script&gt; \\`x\\` \\[l\\](u) z"
    assert len(text) < 5_000


def test_baseline_marks_new_persisting_and_resolved_in_json_html_md_and_terminal(
        tmp_path, capsys):
    suite = str(suite_file(tmp_path))
    first = auditor.audit(**planted(copies=12), label="y", suite=suite)
    frames = planted(copies=0)
    frames["test"] = frames["test"].with_columns(noise=frames["test"]["noise"] + 3)
    second = auditor.audit(**frames, label="y", suite=suite, baseline=first.to_dict())
    changes = {(c.id, str(f.subject), f.change) for c in second.checks for f in c.findings
               if f.change}
    assert ("drift.features", "f0", "persisting") in changes
    assert ("drift.features", "noise", "new") in changes
    assert ("leakage.duplicates", "", "resolved") in changes
    assert ("leakage.single_feature_auc", "balance", "persisting") in changes
    assert second.baseline == {"path": "<dict>", "started_at": first.started_at,
                               "status": "fail", "new": 1, "persisting": 6, "resolved": 1}
    resolved = [f for f in second.check("leakage.duplicates").findings
                if f.change == "resolved"][0]
    assert resolved.severity == "info" and resolved.count == 12
    assert second.check("leakage.duplicates").status == "pass"  # resolved never counts
    doc = second.to_dict()
    page = second.to_html()
    assert '<span class="badge resolved">resolved</span>' in page
    assert '<span class="badge new">new</span>' in page
    assert "1 new</strong>, 6 persisting and 1 resolved" in page
    md = summary_markdown(doc, "fail", 1)
    assert "1 new, 6 persisting, 1 resolved" in md and "- **resolved** `leakage.dup" in md
    lines = finding_lines(doc)
    assert any(line.strip().startswith("resolved  leakage.duplicates") for line in lines)
    assert any("drift.features [new]" in line for line in lines)
    from auditor.errors import InputError
    with pytest.raises(InputError, match="report not found"):
        auditor.audit(**frames, label="y", suite=suite, baseline=tmp_path / "none.json")


def test_same_shaped_findings_group_into_one_row_listing_the_subjects():
    f = [{"severity": "fail", "metric": "psi", "splits": ["train", "test"], "subject": f"c{i}",
          "value": v, "count": 10 * (i + 1), "message": f"m{i}"}
         for i, v in enumerate([0.3, 0.9, 0.5])]
    other = {"severity": "warn", "metric": "psi", "splits": ["train", "test"], "subject": "d",
             "value": 0.15, "count": 4, "message": "single"}
    waived = dict(f[0], subject="w", waived={"reason": "r", "owner": "o", "expires": "x"})
    groups = group_findings(f + [other, waived])
    assert [g["subjects"] for g in groups] == [["c0", "c1", "c2"], ["d"], ["w"]]
    first = groups[0]
    assert (first["value_min"], first["value_max"], first["count"]) == (0.3, 0.9, 60)
    assert (first["count_min"], first["count_max"]) == (10, 30)
    assert first["message"].startswith("3 subjects flagged fail on psi (train → test): c0, "
                                       "c1, c2. First: m0")
    assert groups[1]["message"] == "single"
    from auditor.report.render import render_html

    doc = {"schema_version": 1, "tool_version": "t", "status": "fail", "started_at": "s",
           "duration_s": 1.0, "seed": 0, "datasets": {}, "checks": [{
               "id": "drift.features", "title": "T", "status": "fail", "duration_s": 0.1,
               "summary": "S", "error": None, "findings": f + [other]}]}
    page = render_html(doc)
    assert page.count("<summary>3 subjects</summary>c0, c1, c2</details>") == 1
    assert "0.3 – 0.9" in page and "<li>m1</li>" in page
    assert '<td class="num">10 – 30</td>' in page  # rows per subject, not a sum over them


def test_terminal_shows_grouped_findings_escaped(tmp_path, run_dir, capsys):
    assert main(["run", str(run_dir), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "drift.features: 5 subjects flagged fail on psi" in err
    doc = {"checks": [{"id": "a.b", "findings": [
        {"severity": "warn", "metric": "m", "subject": "x", "splits": [],
         "message": "col \x1b[31mred[/bold]"}]}]}
    (line,) = finding_lines(doc)
    assert "\x1b" not in line and "\\x1b[31mred[/bold]" in line


def test_a_log_gets_one_line_per_check_and_one_for_the_skipped_and_the_waived(tmp_path, capsys):
    """stderr that is not a terminal (a CI or cron log): table rows are not wrapped at 80
    columns, the skipped checks are one line, the waived findings another."""
    from tests.workflow_fixtures import planted

    frames = planted()
    data = tmp_path / "data"
    data.mkdir()
    for k, v in frames.items():
        v.write_parquet(data / f"{k}.parquet")
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(json.dumps({
        "datasets": {k: str(data / f"{k}.parquet") for k in frames}, "columns": {"label": "y"},
        "waivers": [{"check": "leakage.single_feature_auc", "subject": "balance",
                     "reason": "a known proxy", "owner": "ds-team", "expires": "2099-01-01"}]}))
    assert main(["run", str(cfg), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.splitlines()
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    skipped = [c["id"] for c in doc["checks"] if c["status"] == "skipped"]
    ran = [c for c in doc["checks"] if c["status"] != "skipped"]
    assert skipped and len(ran) >= 5
    (line,) = [x for x in err if x.startswith("skipped ")]
    assert line == (f"skipped {len(skipped)} checks (reasons in the report): "
                    + ", ".join(skipped))
    width = max(len(c["id"]) for c in ran)
    for c in ran:  # a line each, the whole summary on it
        assert f"{c['status']:>8}  {c['id']:<{width}}  {c['duration_s']:7.2f}s  " \
               f"{c['summary']}" in err
    # failing checks first, then warnings and passes (run order within a status)
    order = ["fail", "error", "warn", "pass"]
    lines = [x for x in err if x[:8].strip() in order and x[10:].split(" ")[0] in
             {c["id"] for c in ran}]
    assert [x[:8].strip() for x in lines] == sorted((c["status"] for c in ran), key=order.index)
    assert not any(x.split()[:2] == ["skipped", s] for s in skipped for x in err)
    (waived,) = [x for x in err if x.lstrip().startswith("waived")]
    assert waived.strip() == ("waived  1 accepted by waivers: leakage.single_feature_auc "
                              "single_feature_auc balance (ds-team, until 2099-01-01: a known "
                              "proxy)")


def test_junit_carries_control_characters_of_the_data_as_escapes():
    junitparser = pytest.importorskip("junitparser")
    doc = {"duration_s": 1.0, "started_at": "2026-01-01T00:00:00Z", "checks": [
        {"id": "drift.features", "status": "fail", "duration_s": 0.1,
         "summary": "level 'a\x0bb' of c\x01 drifted", "findings": [
             {"severity": "fail", "metric": "psi", "subject": "c\x01", "splits": ["train"],
              "message": "c\x01 = 'a\x0bb' <&> drifted"}]}]}
    text = junit_xml(doc)
    (case,) = list(list(junitparser.JUnitXml.fromstring(text))[0])
    (failure,) = case.result
    assert failure.message == "level 'a\\x0bb' of c\\x01 drifted"
    assert failure.text == "fail: c\\x01 = 'a\\x0bb' <&> drifted"


def test_markdown_tables_keep_their_columns_whatever_the_column_names():
    import re

    hostile = "<script>alert(1)</script> a|b `c` d\ne"
    doc = {"status": "fail", "duration_s": 1.0, "started_at": "2026-01-01T00:00:00Z",
           "tool_version": "t", "checks": [
               {"id": "drift.features", "status": "fail", "summary": f"{hostile} drifted",
                "findings": [{"severity": "fail", "metric": "psi", "subject": hostile,
                              "splits": ["train", "test"], "message": f"{hostile} moved",
                              "waived": None}]}],
           "inputs": {"train": {"path": f"/data/{hostile}.parquet", "rows": 3,
                                "hash": "sha256:ab"}}}
    md = summary_markdown(doc, "fail", 1)
    assert "<script" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    rows = [line for line in md.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + 1 + 2 + 1  # two tables: header, rule, one row each
    unescaped = [len(re.findall(r"(?<!\\)\|", line)) for line in rows]
    assert unescaped == [4, 4, 4, 5, 5, 5]
    (finding,) = [line for line in md.splitlines() if line.startswith("- **fail**")]
    assert "a\\|b \\`c\\` d e moved" in finding  # one line: the newline folded


def test_markdown_inputs_of_in_memory_splits_show_a_dash_not_an_empty_code_span():
    doc = {"status": "pass", "checks": [], "inputs": {
        "train": {"path": None, "rows": 5, "hash": None},
        "test": {"path": "/a", "rows": 7, "hash": "sha256:" + "a" * 64}}}
    md = summary_markdown(doc, "fail", 0)
    assert "| train | (in memory) | 5 | – |" in md
    assert "| test | /a | 7 | `sha256:aaaaaaaaaaaaaaaa` |" in md and "``" not in md


def test_findings_waived_by_different_waivers_never_share_a_group():
    base = {"severity": "fail", "metric": "psi", "splits": ["train", "test"], "value": 0.5,
            "count": 3, "message": "m"}
    a = {"reason": "seasonal", "owner": "team-a", "expires": "2027-01-01"}
    b = {"reason": "new source", "owner": "team-b", "expires": "2027-02-01"}
    groups = group_findings([dict(base, subject="f0", waived=a), dict(base, subject="f1",
                             waived=b), dict(base, subject="f2", waived=dict(a))])
    assert [(g["subjects"], g["waived"]["owner"]) for g in groups] == [
        (["f0", "f2"], "team-a"), (["f1"], "team-b")]


def test_a_logs_lines_keep_one_line_per_metric_and_splits_from_night_to_night():
    """Severity no longer splits a log's group: subjects that cross a threshold one night do
    not move to a line of their own; subjects are sorted within each severity."""
    def finding(sev, subject):
        return {"severity": sev, "metric": "psi", "splits": ["train", "test"],
                "subject": subject, "value": 0.3, "count": 1, "message": f"{subject} drifted"}

    nights = [[finding("warn", "z"), finding("fail", "x"), finding("warn", "carat"),
               finding("warn", "y")],
              [finding("warn", s) for s in ("y", "x", "z", "carat")]]
    lines = [finding_lines({"checks": [{"id": "drift.features", "findings": n}]})
             for n in nights]
    assert lines == [
        ["    fail  drift.features: 4 subjects flagged on psi (train → test): fail x; warn "
         "carat, y, z. First: x drifted"],
        ["    warn  drift.features: 4 subjects flagged warn on psi (train → test): carat, x, y, "
         "z. First: carat drifted"]]


def test_a_long_mixed_group_counts_the_subjects_it_does_not_name():
    from auditor.report.grouping import group_message

    members = [{"severity": "fail", "metric": "psi", "splits": ["a", "b"], "message": "m"}] * 10 \
        + [{"severity": "warn", "metric": "psi", "splits": ["a", "b"], "message": "m"}] * 3
    names = [f"f{i:02d}" for i in range(10)] + ["w0", "w1", "w2"]
    assert group_message(members, names) == (
        "13 subjects flagged on psi (a → b): fail f00, f01, f02, f03, f04, f05, f06, f07 and "
        "2 more; warn 3 more. First: m")
