"""The runner: cheapest first, isolation of crashes, skips with reasons, timing."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import polars as pl

from auditor.core.checks import Cost
from auditor.core.config import Columns
from auditor.loading.data import build_audit_data
from auditor.errors import NotApplicable
from auditor.report.results import Finding, Severity, Status
from auditor.runner import run_checks


@dataclass(frozen=True, kw_only=True)
class _Crash:
    """A check that always crashes (test double for the runner's isolation)."""
    id: ClassVar[str] = "test.crash"
    title: ClassVar[str] = "crash"
    cost: ClassVar[Cost] = Cost.CHEAP

    def run(self, data):
        raise ZeroDivisionError("division by zero")


@dataclass(frozen=True, kw_only=True)
class _Skip:
    """A check that is never applicable (test double)."""
    id: ClassVar[str] = "test.skip"
    title: ClassVar[str] = "skip"
    cost: ClassVar[Cost] = Cost.CHEAP

    def run(self, data):
        raise NotApplicable("no time column declared")


@dataclass(frozen=True, kw_only=True)
class _Count:
    """Counts rows of train (test double)."""
    id: ClassVar[str] = "test.count"
    title: ClassVar[str] = "count"
    cost: ClassVar[Cost] = Cost.MODEL
    warn_above: int = 1

    def run(self, data):
        n = data.rows("train")
        return [Finding(severity=Severity.WARN if n > self.warn_above else Severity.INFO,
                        message=f"{n} rows", metric="rows", value=n, count=n)]


def _data():
    df = pl.DataFrame({"x": [1, 2, 3], "y": [0, 1, 0]})
    return build_audit_data({"train": df, "test": df}, columns=Columns(label="y"))


def test_crash_becomes_error_and_others_still_run():
    results = run_checks([_Count(), _Crash(), _Skip()], _data())
    assert [r.id for r in results] == ["test.crash", "test.skip", "test.count"]  # cheap first
    crash, skip, count = results
    assert crash.status == Status.ERROR and crash.error == "ZeroDivisionError: division by zero"
    assert skip.status == Status.SKIPPED and skip.summary == "Skipped: no time column declared"
    assert count.status == Status.WARN and count.findings[0].count == 3
    assert count.summary == "3 rows"
    assert all(r.duration_s >= 0 for r in results)
    assert count.params == {"warn_above": 1}
    assert crash.description.startswith("A check that always crashes")


def test_a_check_module_that_fails_to_import_becomes_an_error(monkeypatch):
    from auditor.core import registry
    from auditor.core.suites import load_checks

    monkeypatch.setitem(registry.CHECKS, "leakage.duplicates",
                        "auditor.detectors.no_such_module:Nothing")
    checks = load_checks("default")
    results = {r.id: r for r in run_checks(checks, _data())}
    broken = results["leakage.duplicates"]
    assert broken.status == Status.ERROR
    assert "cannot import the check: ModuleNotFoundError" in broken.error
    assert results["schema.consistency"].status != Status.ERROR


def test_a_rust_panic_style_base_exception_is_contained():
    class PanicLike(BaseException):
        pass

    @dataclass(frozen=True, kw_only=True)
    class _Panics:
        """A check whose library panics (polars raises PanicException, a BaseException)."""
        id: ClassVar[str] = "test.panic"
        title: ClassVar[str] = "panic"
        cost: ClassVar[Cost] = Cost.CHEAP

        def run(self, data):
            raise PanicLike("out of range datetime")

    (result,) = run_checks([_Panics()], _data())
    assert result.status == Status.ERROR and result.error == "PanicLike: out of range datetime"
