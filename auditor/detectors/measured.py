"""The one path from data to findings for a check split into ``measure`` and ``judge``: its
needs checked once, then ``judge(measure(engine, roles))`` on whichever engine holds the data."""
from __future__ import annotations

from auditor.core.checks import MeasuredCheck
from auditor.core.roles import LoadedData
from auditor.engines.selection import engine_of
from auditor.errors import NotApplicable
from auditor.report.results import Finding


def judged(check: MeasuredCheck, data: LoadedData) -> list[Finding]:
    """The findings of ``check`` on ``data`` (polars :class:`~auditor.loading.data.AuditData`
    or the Spark engine's data); NotApplicable with the reason when its needs are unmet."""
    roles = data.roles
    why = check.needs.unmet(roles)
    if why:
        raise NotApplicable(why)
    engine = engine_of(data)
    try:
        measures = check.measure(engine, roles)
    finally:
        engine.release()
    return list(check.judge(measures))
