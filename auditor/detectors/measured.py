"""The one path from data to findings for a check split into ``measure`` and ``judge``: its
needs checked once, then ``judge(measure(engine, roles))`` on whichever engine holds the data."""
from __future__ import annotations

from auditor.core.checks import MeasuredCheck
from auditor.core.roles import LoadedData
from auditor.engines.operations import DriverData
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


def stated(findings: list[Finding], m: DriverData, *, partly: str | None = None
           ) -> list[Finding]:
    """``findings`` measured on ``m``, with the sample stated when the engine sampled a split
    (Spark's driver-side sample): the rows kept per split, in the message and in
    ``evidence.driver_sample``. ``partly``: what of the findings the sample measured, when
    the engine measured the rest over every row."""
    from auditor.stats.numerics import fmt_count

    if not m.sampled:
        return findings
    kept = m.kept
    said = ", ".join(f"{fmt_count(kept[s])} of {fmt_count(n)} {s} rows"
                     for s, n in m.rows.items())
    for f in findings:
        f.message += (f" ({partly} measured on a seeded driver-side sample of {said}; every "
                      "other figure over every row)" if partly else
                      f" (measured on a seeded driver-side sample of {said})")
        f.evidence = {**(f.evidence or {}),
                      "driver_sample": {s: {"rows": kept[s], "of": n}
                                        for s, n in m.rows.items()}}
    return findings
