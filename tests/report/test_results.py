"""report.json: the DESIGN.md contract, validated against the packaged JSON Schema."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import jsonschema
import numpy as np
import polars as pl
import pytest

import auditor
from auditor.report.output import write_atomic
from auditor.report.results import (CheckResult, Finding, Report, Severity, Status, exit_code,
                            json_safe, overall_status)

SCHEMA = json.loads((Path(auditor.__file__).parent / "report" / "schema" / "report.schema.json")
                    .read_text())


def test_real_report_validates_against_the_schema(clean_splits):
    test = pl.concat([clean_splits["test"], clean_splits["train"].head(5)])
    report = auditor.audit(train=clean_splits["train"], test=test, label="y", ids=["row_id"])
    doc = json.loads(report.to_json())
    jsonschema.validate(doc, SCHEMA)
    assert doc["split_design"]["declared"] is False  # inferred; validated by the schema
    assert list(doc)[:8] == ["schema_version", "tool_version", "status", "started_at",
                             "duration_s", "seed", "datasets", "checks"]
    assert doc["status"] == "fail" and report.status == Status.FAIL


def test_demo_report_validates(tmp_path):
    from auditor.cli import main
    assert main(["demo", "--out", str(tmp_path), "--quiet"]) == 1
    jsonschema.validate(json.loads((tmp_path / "report.json").read_text()), SCHEMA)


def test_json_safe_turns_nan_inf_and_numpy_into_json():
    doc = json_safe({"a": float("nan"), "b": np.float32(1.5), "c": np.int64(3),
                     "d": [float("inf"), np.arange(2)], "e": Severity.FAIL})
    assert doc == {"a": None, "b": 1.5, "c": 3, "d": [None, [0, 1]], "e": "fail"}
    json.dumps(doc, allow_nan=False)


def _check(status: Status, *severities: Severity) -> CheckResult:
    return CheckResult(id="x.y", title="t", status=status, duration_s=0.0, summary="",
                       findings=[Finding(severity=s, message="m", metric="m")
                                 for s in severities])


def test_status_and_exit_codes():
    ok, warn, fail = (_check(Status.PASS, Severity.INFO), _check(Status.WARN, Severity.WARN),
                      _check(Status.FAIL, Severity.FAIL))
    err, skip = _check(Status.ERROR), _check(Status.SKIPPED)
    assert overall_status([ok, skip]) == Status.PASS
    assert overall_status([skip]) == Status.SKIPPED
    assert overall_status([ok, warn, err]) == Status.ERROR
    assert overall_status([fail, err]) == Status.FAIL
    assert exit_code([ok, warn], Severity.FAIL) == 0
    assert exit_code([ok, warn], Severity.WARN) == 1
    assert exit_code([ok, err], Severity.FAIL) == 3
    assert exit_code([fail, err], Severity.FAIL) == 1


def test_write_atomic_leaves_no_partial_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "report.html"
    write_atomic(target, "old")

    class Boom(str):
        pass

    import os
    real_fsync = os.fsync

    def failing_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OSError):
        write_atomic(target, "new content")
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_report_to_html_writes_file(tmp_path, clean_splits):
    report = auditor.audit(train=clean_splits["train"], test=clean_splits["test"], label="y")
    written = report.to_html(tmp_path / "r.html")
    # the path comes back (a notebook cell echoes it, not the page); the page is to_html()'s
    assert written == (tmp_path / "r.html").resolve()
    assert written.read_text() == report.to_html()
    assert math.isfinite(report.duration_s)


def test_the_package_exports_report_and_only_its_public_names(tmp_path, clean_splits):
    import subprocess
    import sys

    assert dir(auditor) == ["Report", "__version__", "audit"]
    report = auditor.audit(train=clean_splits["train"], test=clean_splits["test"], label="y")
    (tmp_path / "report.json").write_text(report.to_json())
    again = auditor.Report.from_json(tmp_path / "report.json")
    assert again.to_dict() == report.to_dict()
    with pytest.raises(AttributeError, match="no attribute 'Reprot'"):
        auditor.Reprot  # noqa: B018
    # importing the package stays light: Report (and polars) load on first use only
    code = ("import sys, auditor; assert 'polars' not in sys.modules; auditor.Report; "
            "assert 'auditor.report.results' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_findings_as_a_dataframe_one_row_per_finding_in_report_order(clean_splits):
    train = clean_splits["train"]
    test = pl.concat([clean_splits["test"], train.head(12)])  # 12 test rows copied from train
    report = auditor.audit(train=train, test=test, label="y")
    table = report.findings()
    assert table.columns == ["check", "check_status", "severity", "subject", "splits", "metric",
                             "value", "threshold", "count", "message", "waived", "change"]
    every = [(c.id, f.metric, f.message) for c in report.checks for f in c.findings]
    assert list(zip(table["check"], table["metric"], table["message"])) == every
    dup = table.filter((pl.col("check") == "leakage.duplicates")
                       & (pl.col("metric") == "duplicate_rows"))
    assert dup.select("splits", "count", "severity").rows() == [("train -> test", 12, "fail")]
    assert report.findings().to_pandas().shape == table.shape


def test_findings_leave_out_waived_ones_when_asked(clean_splits):
    train = clean_splits["train"]
    test = pl.concat([clean_splits["test"], train.head(12)])
    first = auditor.audit(train=train, test=test, label="y")
    subject = next(f.subject for f in first.check("leakage.duplicates").findings
                   if f.metric == "duplicate_rows")
    report = auditor.audit(train=train, test=test, label="y", waivers=[{
        "check": "leakage.duplicates", "subject": subject, "metric": "duplicate_rows",
        "reason": "known re-export", "owner": "me", "expires": "2099-01-01"}])
    table = report.findings()
    waived = table.filter(pl.col("waived").is_not_null())
    assert waived.select("check", "metric", "waived").unique().rows() == [
        ("leakage.duplicates", "duplicate_rows", "known re-export")]
    kept = report.findings(include_waived=False)
    assert kept.height == table.height - waived.height
    assert kept["waived"].null_count() == kept.height


def test_pandas_frames_are_accepted(clean_splits):
    pd = pytest.importorskip("pandas")
    train = clean_splits["train"].to_pandas()
    test = pd.concat([clean_splits["test"].to_pandas(), train.head(3)])
    report = auditor.audit(train=train, test=test, label="y", ids="row_id")
    finding = report.check("leakage.duplicates").findings[0]
    assert finding.count == 3


# -- workflow additions: Report.from_json, passed, notebook views, schema of new fields -----

def _workflow_report(tmp_path):
    from tests.workflow_fixtures import planted, suite_file

    suite = str(suite_file(tmp_path))
    first = auditor.audit(**planted(), label="y", suite=suite)
    return auditor.audit(**planted(copies=0), label="y", suite=suite, baseline=first.to_dict(),
                         waivers=[{"check": "drift.features", "subject": "f0", "reason": "r",
                                   "owner": "o", "expires": "2099-01-01"}])


def test_report_from_json_round_trips_and_validates_with_workflow_fields(tmp_path):
    report = _workflow_report(tmp_path)
    path = tmp_path / "report.json"
    write_atomic(path, report.to_json())
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert any("waived" in f for c in doc["checks"] for f in c["findings"])
    changes = {f.get("change") for c in doc["checks"] for f in c["findings"]}
    assert {"persisting", "resolved"} <= changes and doc["baseline"]["resolved"] == 1
    again = Report.from_json(path)
    assert again.to_dict() == doc
    assert "1 finding accepted by waivers" in again._repr_html_()
    assert again.exit_code() == report.exit_code() == 1
    assert again.check("drift.features").findings[1].waived == {
        "reason": "r", "owner": "o", "expires": "2099-01-01"}


def test_passed_follows_the_exit_code_and_ignores_waived_findings():
    waived = Finding(severity=Severity.FAIL, message="m", metric="m",
                     waived={"reason": "r", "owner": "o", "expires": "2099-01-01"})
    warn = Finding(severity=Severity.WARN, message="m", metric="m")
    check = CheckResult(id="x.y", title="t", status=Status.WARN, duration_s=0.0, summary="",
                        findings=[waived, warn])
    report = Report(status=Status.WARN, started_at="s", duration_s=0.0, seed=0, datasets={},
                    checks=[check])
    assert report.passed() and report.passed("fail") and not report.passed(fail_on="warn")
    assert exit_code([check], Severity.FAIL) == 0
    assert overall_status([check]) == Status.WARN


def test_notebook_views_are_compact_and_escaped(tmp_path):
    hostile = "<img src=x onerror=alert(1)>"
    train = pl.DataFrame({hostile: np.arange(200.0), "y": np.arange(200) % 2})
    report = auditor.audit(train=train, test=train.head(50), label="y", suite="fast")
    text = repr(report)
    assert text.startswith("<Report FAIL: ") and len(text) < 300
    assert "train=200, test=50" in text
    html_view = report._repr_html_()
    assert len(html_view) < 20_000 and "FAIL" in html_view
    assert hostile not in html_view and "&lt;img src=x onerror=alert(1)&gt;" in html_view
    assert html_view.count("<tr>") == len(report.checks) + 1
    assert "report.html" not in html_view
    # the diagnosis first: the 50 test rows are copies of train rows
    assert html_view.index("<b>Diagnosis</b>") < html_view.index("<table>")
    assert "<b>Rows shared between train and test</b>: 50 of 50 test rows" in html_view
    report.to_html(tmp_path / "r.html")
    assert (tmp_path / "r.html").resolve().as_uri() in report._repr_html_()


@pytest.mark.parametrize("text", ["{not json", "[1]", '{"checks": []}',
                                  '{"checks": [{"id": "x"}], "status": "fail"}'])
def test_from_json_of_a_foreign_file_is_one_input_error(tmp_path, text):
    from auditor.errors import InputError

    path = tmp_path / "report.json"
    path.write_text(text)
    with pytest.raises(InputError, match=rf"^{re.escape(str(path))}: not "):
        Report.from_json(path)


def test_a_clean_subset_request_is_not_part_of_report_json():
    """``Finding.clean`` (rows a run writes a split without, after its checks) stays in the
    process: report.json has no such key, and a report read back has none."""
    from auditor.report.results import CleanSubset

    f = Finding(severity=Severity.FAIL, message="m", metric="contaminated_documents", count=2,
                clean=CleanSubset("test", np.array([3, 9]), "/tmp/clean"))
    check = CheckResult(id="tokens.contamination", title="t", status=Status.FAIL,
                        duration_s=0.0, summary="", findings=[f])
    doc = Report(status=Status.FAIL, started_at="s", duration_s=0.0, seed=0, datasets={},
                 checks=[check]).to_dict()
    (got,) = doc["checks"][0]["findings"]
    assert "clean" not in got and got["count"] == 2
    back = Report.from_dict(doc).checks[0].findings[0]
    assert back.clean is None and back.count == 2
    assert f.clean is not None and f.clean.rows.tolist() == [3, 9]  # the run's copy untouched
