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
