"""Drift graded against the ledger's own history (auditor.signoff.own_history): a steady
nightly drift stops failing once the history shows it is the pipeline's normal movement; a
night beyond that range still fails; the first nights say the history is too short."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import auditor
from auditor.report.results import CheckResult, Finding, Severity, Status
from auditor.signoff.own_history import MIN_RUNS, Z_MAX, grade_against_history, robust_z

SUITE = "checks:\n  drift.features: {}\n"


def _night(seed: int, shift: float) -> dict[str, pl.DataFrame]:
    """Train and a later split of one night: ``amount`` moved by ``shift`` sd in the later
    split (the pipeline's steady drift), ``steady`` not moved."""
    rng = np.random.default_rng(seed)
    part = {name: pl.DataFrame({"amount": rng.normal(shift if name == "test" else 0, 1, n),
                                "steady": rng.normal(size=n), "y": rng.integers(0, 2, n)})
            for name, n in (("train", 3000), ("test", 1000))}
    return part


def _amount(report):
    check = {c.id: c for c in report.checks}["drift.features"]
    return next(f for f in check.findings if f.subject == "amount"), check


def test_robust_z_matches_scipys_scaled_mad():
    from scipy.stats import median_abs_deviation

    h = [0.31, 0.35, 0.29, 0.4, 0.33, 0.36, 0.3]
    med, mad, z = robust_z(0.52, h)
    assert med == np.median(h) and mad == pytest.approx(median_abs_deviation(h))
    assert z == pytest.approx((0.52 - np.median(h)) / median_abs_deviation(h, scale="normal"))
    assert robust_z(0.3, [0.3] * 6)[2] == 0 and robust_z(0.31, [0.3] * 6)[2] == np.inf


def test_a_steady_nightly_drift_warns_once_the_history_shows_it_is_normal(tmp_path):
    suite = tmp_path / "drift.yaml"
    suite.write_text(SUITE)
    ledger = str(tmp_path / "ledger.sqlite")
    seen = []
    for night in range(MIN_RUNS + 2):  # 0.7 sd every night: PSI ~0.45, a fail on its own
        report = auditor.audit(**_night(night, 0.7), suite=str(suite), ledger=ledger)
        f, check = _amount(report)
        seen.append((f.severity, "history" in (f.evidence or {})))
        note = next(n for n in report.notes if n.startswith("history:"))
        if night < MIN_RUNS:
            assert (f.severity, check.status) == ("fail", "fail")
            assert f"holds {night} earlier run" in note and "too short" in note
    assert [s for s, _ in seen[:MIN_RUNS]] == ["fail"] * MIN_RUNS
    assert seen[MIN_RUNS:] == [("warn", True)] * 2
    h = f.evidence["history"]
    assert h["runs"] == MIN_RUNS + 1 and h["robust z"] <= Z_MAX and h["z_max"] == Z_MAX
    assert f"median of the last {MIN_RUNS + 1} runs" in f.message
    assert "its normal night-to-night movement, reported as warn" in f.message
    assert check.status == "warn" and "1 fail within it reported as warn" in note
    # a night that moves far more than any before (2 sd): news, still a fail
    report = auditor.audit(**_night(99, 2.0), suite=str(suite), ledger=ledger)
    f, check = _amount(report)
    assert f.severity == "fail" and check.status == "fail"
    assert f.evidence["history"]["robust z"] > Z_MAX


def test_without_a_ledger_nothing_is_graded_against_history(tmp_path):
    suite = tmp_path / "drift.yaml"
    suite.write_text(SUITE)
    report = auditor.audit(**_night(0, 0.7), suite=str(suite))
    f, _ = _amount(report)
    assert f.severity == "fail" and "history" not in (f.evidence or {})
    assert not [n for n in report.notes if n.startswith("history:")]


def test_the_adversarial_auc_is_judged_against_its_history_and_a_leak_is_not():
    def results(auc: float) -> list[CheckResult]:
        return [CheckResult(id=cid, title=cid, status=Status.FAIL, duration_s=0.0, summary="",
                            findings=[Finding(severity=Severity.FAIL, metric=metric,
                                              value=value, splits=["train", "test"],
                                              message="m")])
                for cid, metric, value in (("separability.adversarial", "adversarial_auc", auc),
                                           ("leakage.duplicates", "duplicate_rows", 0.02))]

    past = {("separability.adversarial", "", "train→test"): [0.81, 0.83, 0.8, 0.82, 0.84, 0.8],
            ("leakage.duplicates", "", "train→test"): [0.02] * 6}
    got = results(0.83)
    note = grade_against_history(got, 6, past)
    adv, dup = got
    assert (adv.status, adv.findings[0].severity) == (Status.WARN, Severity.WARN)
    assert adv.findings[0].evidence["history"]["statistic"] == "adversarial AUC"
    assert "adversarial AUC 0.815 (median of the last 6 runs" in adv.findings[0].message
    assert dup.findings[0].severity == Severity.FAIL  # a copy leak every night stays a fail
    assert "1 fail within it reported as warn" in note
    high = results(0.95)  # far beyond the nights before: news
    grade_against_history(high, 6, past)
    assert high[0].findings[0].severity == Severity.FAIL
    assert high[0].findings[0].evidence["history"]["robust z"] > Z_MAX
