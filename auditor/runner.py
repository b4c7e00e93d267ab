"""Run checks cheapest first, each isolated and timed, and assemble their results.

A check that raises becomes status ``error`` with its message and the others still run; a check
that raises :class:`~auditor.errors.NotApplicable` becomes ``skipped`` with the reason.
"""
from __future__ import annotations

import logging
import sys
import time
import traceback
from typing import Any, Iterable

from auditor.core.checks import Cost, describe, is_measured, params_of
from auditor.detectors.measured import judged
from auditor.loading.data import AuditData
from auditor.engines import NOT_ON_SPARK
from auditor.errors import NotApplicable
from auditor.report.results import CheckResult, Status, status_from_findings, summarize

log = logging.getLogger("auditor")


def order_checks(checks: Iterable[Any]) -> list[Any]:
    """Cheapest first; suite order breaks ties (sorted is stable)."""
    return sorted(checks, key=lambda c: int(getattr(c, "cost", Cost.STATS)))


def _findings(check: Any, data: Any) -> list[Any]:
    """One path for every engine: ``judge(measure(engine, roles))``. A check with only a
    ``run(data)`` (a plugin not split in two) reads polars frames: on Spark it is skipped."""
    if is_measured(check):
        return judged(check, data)
    if getattr(data, "engine_name", "polars") == "spark":
        raise NotApplicable(NOT_ON_SPARK)
    return list(check.run(data))


def run_check(check: Any, data: AuditData) -> CheckResult:
    """Run one check in isolation: time it, capture skips and crashes."""
    title = getattr(check, "title", check.id)
    base = dict(id=check.id, title=title, description=describe(check), params=params_of(check))
    t0 = time.perf_counter()
    try:
        findings = _findings(check, data)
    except NotApplicable as reason:
        return CheckResult(status=Status.SKIPPED, duration_s=round(time.perf_counter() - t0, 4),
                           summary=f"Skipped: {reason}", **base)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as err:  # isolation is the point: one bad check must not sink the
        # run; BaseException too, since polars' Rust panics (PanicException) derive from it
        log.debug("check %s crashed:\n%s", check.id, traceback.format_exc())
        message = f"{type(err).__name__}: {err}".strip()
        return CheckResult(status=Status.ERROR, duration_s=round(time.perf_counter() - t0, 4),
                           summary=f"The check crashed: {message[:300]}", error=message[:2000],
                           **base)
    return CheckResult(status=status_from_findings(findings),
                       duration_s=round(time.perf_counter() - t0, 4), summary=summarize(findings),
                       findings=findings, **base)


def run_checks(checks: Iterable[Any], data: AuditData, *, progress: bool = False
               ) -> list[CheckResult]:
    """Run ``checks`` cheapest first; show a rich progress bar when ``progress``."""
    ordered = order_checks(checks)
    data.planned_checks = frozenset(c.id for c in ordered)  # a check may measure for a later one
    if not progress:
        return [run_check(c, data) for c in ordered]
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn)
    from rich.console import Console

    results = []
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(file=sys.stderr), transient=True) as bar:
        task = bar.add_task("auditing", total=len(ordered))
        for check in ordered:
            bar.update(task, description=check.id)
            results.append(run_check(check, data))
            bar.advance(task)
    return results
