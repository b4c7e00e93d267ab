"""Documented leaks (and one documented labelling defect) in real data must FAIL the right
check on the right subject."""
from __future__ import annotations

import pytest

import auditor
from tests.realdata.cases import LEAKS, Case

XFAIL: dict[str, str] = {}


def params():
    for case in LEAKS:
        marks = ([pytest.mark.xfail(strict=False, reason=XFAIL[case.name])]
                 if case.name in XFAIL else [])
        yield pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", list(params()))
def test_documented_real_leak_fails_the_right_check(case: Case):
    report = auditor.audit(**case.build())
    (check,) = [c for c in report.checks if c.id == case.check]
    fails = [f for f in check.findings if f.severity == "fail"]
    subjects = {str(f.subject) for f in fails}
    assert check.status == "fail", (case.name, check.status, check.error,
                                     [f.message for f in check.findings])
    if case.subject is not None:
        assert case.subject in subjects, (case.name, subjects)
    if "rule" in case.extra:  # the rule that must explain it (evidence.grading.rule)
        rules = {f.evidence["grading"]["rule"] for f in fails if str(f.subject) == case.subject}
        assert case.extra["rule"] in rules, (case.name, rules)


def test_rows_reingested_with_a_new_time_are_copies_and_an_honest_time_split_has_none():
    """A declared time is provenance, not content: 20 train days loaded again into test with
    new dates are 0 exact copies (the dates differ) but re-ingested rows, a FAIL; the honest
    split of the same data holds one natural repeat (a day equal to a train day but for the
    date, 1.2% expected by chance), an info."""
    from tests.realdata.cases import seattle_restamped, seattle_weather

    def reingested(kw):
        report = auditor.audit(**kw, suite="fast")
        (dup,) = [c for c in report.checks if c.id == "leakage.duplicates"]
        found = {f.metric: f for f in dup.findings}
        assert found["duplicate_rows"].count == 0
        return found["reingested_rows"]

    honest = reingested(seattle_weather())
    assert (honest.severity, honest.count) == ("info", 1)
    planted = reingested(seattle_restamped())
    assert (planted.severity, planted.count, planted.splits) == ("fail", 21, ["train", "test"])
    assert "equal a train row in every compared column but the time column 'date'" in \
        planted.message and len(planted.evidence["examples"]) == 20  # max_examples
