"""bench/compare_reports.py: two report.json files compared finding by finding."""
from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("compare_reports",
                                               ROOT / "bench" / "compare_reports.py")
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)

REPORT = {"checks": [
    {"id": "leakage.duplicates", "status": "fail", "findings": [
        {"severity": "fail", "subject": "", "splits": ["train", "test"],
         "metric": "duplicate_rows", "value": 0.0203, "threshold": 0.001, "count": 2031,
         "message": "2,031 of 100,000 test rows (2.03%) are exact copies of train rows",
         "evidence": {"examples": [{"train_row": 17, "test_row": 912}]}}]},
    {"id": "leakage.temporal", "status": "skipped", "summary": "Skipped: no time column",
     "findings": []}]}


def test_identical_reports_agree():
    assert compare.differences(REPORT, copy.deepcopy(REPORT), messages=True,
                               evidence=True) == []


def test_a_changed_count_severity_status_or_skip_reason_is_reported():
    after = copy.deepcopy(REPORT)
    f = after["checks"][0]["findings"][0]
    f["count"], f["severity"] = 2030, "warn"
    after["checks"][0]["status"] = "warn"
    after["checks"][1]["summary"] = "Skipped: other"
    diffs = compare.differences(REPORT, after)
    assert len(diffs) == 4
    assert "leakage.duplicates: status fail -> warn" in diffs
    assert any("count 2031 -> 2030" in d for d in diffs)


def test_floats_within_the_tolerance_agree_and_beyond_it_do_not():
    after = copy.deepcopy(REPORT)
    after["checks"][0]["findings"][0]["value"] = 0.0203 * (1 + 1e-12)
    assert compare.differences(REPORT, after) == []
    after["checks"][0]["findings"][0]["value"] = 0.0204
    assert len(compare.differences(REPORT, after)) == 1


def test_messages_and_evidence_are_compared_only_when_asked():
    after = copy.deepcopy(REPORT)
    after["checks"][0]["findings"][0]["message"] = "other"
    after["checks"][0]["findings"][0]["evidence"] = {}
    assert compare.differences(REPORT, after) == []
    assert len(compare.differences(REPORT, after, messages=True, evidence=True)) == 2


def test_a_missing_finding_is_reported_and_the_exit_code_is_1(tmp_path):
    import json

    after = copy.deepcopy(REPORT)
    after["checks"][0]["findings"] = []
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(REPORT))
    b.write_text(json.dumps(after))
    assert compare.main([str(a), str(b)]) == 1
    assert compare.main([str(a), str(a)]) == 0
