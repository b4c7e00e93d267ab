"""A user's Great Expectations suite, run by GX on every split."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from auditor.core.checks import Cost, Needs
from auditor.core.roles import LoadedData, Roles
from auditor.detectors.measured import judged
from auditor.engines.operations import Operations, SuiteResults
from auditor.errors import ConfigError, NotApplicable
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import clip_text, fmt_count, fmt_share

_SEVERITIES = ("fail", "warn", "info")


@dataclass(frozen=True, kw_only=True)
class Expectations:
    """The expectation suite named by ``expectations:`` in audit.yaml, validated by Great
    Expectations on every split; each failed expectation is a finding.

    A fail means a split breaks a rule your team wrote down (or that ``auditor
    export-expectations`` inferred from train): a new category, a null rate or a quantile out
    of its band, a type that changed. The finding names the expectation, the column, GX's
    observed value and, for row-wise expectations, the unexpected share = unexpected rows /
    non-missing rows (GX's ``unexpected_percent``); the threshold is ``1 - mostly``, the share
    the expectation tolerates. GX judges success itself; the expectation's ``severity``
    (critical / warning / info, GX 1.x) maps to ``critical_severity`` / ``warning_severity`` /
    info. An expectation GX cannot evaluate on a split (a missing column) is reported with
    ``critical_severity`` and GX's message; one it cannot build (unknown name, bad kwargs) is
    refused with the suite file (exit 2). Skipped when no suite is named, the suite is empty or
    GX (the ``gx`` extra) is not installed. Fix the data, or the suite when the rule is wrong.
    """

    id: ClassVar[str] = "schema.expectations"
    title: ClassVar[str] = "Great Expectations suite on every split"
    cost: ClassVar[Cost] = Cost.STATS
    needs: ClassVar[Needs] = Needs()
    critical_severity: str = "fail"   # severity of a failed GX "critical" expectation
    warning_severity: str = "warn"    # severity of a failed GX "warning" expectation
    max_examples: int = 20            # unexpected values kept per finding

    def __post_init__(self) -> None:
        for name in ("critical_severity", "warning_severity"):
            if getattr(self, name) not in _SEVERITIES:
                raise ConfigError(f"{self.id}.{name} must be one of {', '.join(_SEVERITIES)}; "
                                  f"got {getattr(self, name)!r}")
        if not isinstance(self.max_examples, int) or self.max_examples < 0:
            raise ConfigError(f"{self.id}.max_examples must be an integer >= 0; "
                              f"got {self.max_examples!r}")

    def run(self, data: LoadedData) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: Roles) -> "SuiteMeasures":
        """GX's results of the named suite on every split (every row, on either engine)."""
        suite = roles.expectations
        if not suite:
            raise NotApplicable("no expectation suite named (set `expectations: suite.json` "
                                "in audit.yaml; `auditor export-expectations` writes one)")
        if not suite["expectations"]:
            raise NotApplicable(f"expectation suite {suite['name']!r} ({suite.get('path')}) "
                                "holds no expectations")
        return SuiteMeasures(suite["name"], suite.get("path"), len(suite["expectations"]),
                             engine.validate_suite(suite))

    def judge(self, m: "SuiteMeasures") -> list[Finding]:
        """A finding per failed expectation and split, and the share met per split."""
        got = m.results
        findings = [self._unbuildable(e, reason, list(got.rows))
                    for e, reason in got.unbuildable]
        for split, results in got.results.items():
            failed = [self._finding(r, split, got.rows[split]) for r in results
                      if not r.get("success")]
            findings += failed
            met = len(results) - len(failed)
            findings.append(Finding(
                severity=Severity.INFO, metric="expectations_met", value=met / m.total,
                count=met, splits=[split],
                message=f"{met:,} of {m.total:,} expectations of suite {m.suite!r} "
                        f"({fmt_share(met / m.total)}) are met on {split}",
                evidence={"suite": m.suite, "path": m.path}))
        return findings

    # -- judging ---------------------------------------------------------------------------
    def _severity(self, declared: Any) -> Severity:
        level = str(declared or "critical").lower()
        if level == "info":
            return Severity.INFO
        return Severity(self.warning_severity if level == "warning" else self.critical_severity)

    def _unbuildable(self, e: dict[str, Any], reason: str, splits: list[str]) -> Finding:
        col = _subject(e["kwargs"])
        return Finding(
            severity=Severity(self.critical_severity), metric="expectation_invalid",
            subject=col, splits=list(splits),
            message=f"{e['type']}{_on(col)} cannot be built by Great Expectations: {reason}",
            evidence={"expectation": e["type"], "kwargs": e["kwargs"]})

    def _finding(self, r: dict[str, Any], split: str, rows: int) -> Finding:
        from auditor.integrations.gx import exception_of

        cfg = r.get("expectation_config") or {}
        kind = cfg.get("type") or cfg.get("expectation_type") or "expectation"
        kwargs = {k: v for k, v in (cfg.get("kwargs") or {}).items() if k != "batch_id"}
        col = _subject(kwargs)
        res = r.get("result") or {}
        severity = self._severity(cfg.get("severity"))
        evidence: dict[str, Any] = {"expectation": kind, "kwargs": _clip(kwargs)}
        error = exception_of(r)
        mostly = kwargs.get("mostly")
        threshold = 1.0 - float(mostly) if isinstance(mostly, (int, float)) else None
        if error is not None:
            evidence["error"] = error
            return Finding(severity=Severity(self.critical_severity), metric="expectation_error",
                           subject=col, splits=[split], evidence=evidence,
                           message=f"{kind}{_on(col)} could not be evaluated on {split} by "
                                   f"Great Expectations: {error}")
        if "unexpected_count" in res:
            bad = int(res["unexpected_count"] or 0)
            denom = int(res.get("element_count") or rows) - int(res.get("missing_count") or 0)
            share = float(res.get("unexpected_percent") or 0.0) / 100.0
            # GX's partial list: the first unexpected values met (its counts cover only them)
            seen: list[str] = []
            for v in res.get("partial_unexpected_list") or []:
                text = clip_text(v, 80)
                if text not in seen and len(seen) < self.max_examples:
                    seen.append(text)
            evidence["unexpected_values"] = seen
            allowed = f", {fmt_share(threshold)} allowed" if threshold else ""
            return Finding(severity=severity, metric="expectation_failed", value=share,
                           threshold=threshold, count=bad, subject=col, splits=[split],
                           evidence=evidence,
                           message=f"{kind}{_on(col)} failed on {split}: {fmt_count(bad)} of "
                                   f"{fmt_count(denom)} rows ({fmt_share(share)}) are "
                                   f"unexpected{allowed}")
        observed = res.get("observed_value")
        evidence["observed_value"] = _clip(observed)
        if "details" in res:
            evidence["details"] = _clip(res["details"])
        value = float(observed) if isinstance(observed, (int, float)) and \
            not isinstance(observed, bool) else None
        return Finding(severity=severity, metric="expectation_failed", value=value,
                       subject=col, splits=[split], evidence=evidence,
                       message=f"{kind}{_on(col)} failed on {split} ({fmt_count(rows)} rows): "
                               f"observed "
                               f"{clip_text(_describe(observed, kwargs, res), 200)}")


def _subject(kwargs: dict[str, Any]) -> str | list[str]:
    column = kwargs.get("column")
    if isinstance(column, str):
        return column
    cols = [kwargs[k] for k in ("column_A", "column_B") if isinstance(kwargs.get(k), str)]
    if isinstance(kwargs.get("column_list"), list):
        cols += [c for c in kwargs["column_list"] if isinstance(c, str)]
    return cols if cols else ""


def _on(col: str | list[str]) -> str:
    if not col:
        return ""
    return f" on {col!r}" if isinstance(col, str) else f" on {', '.join(map(repr, col))}"


def _describe(observed: Any, kwargs: dict[str, Any], res: dict[str, Any]) -> str:
    """GX's observed value in words; for quantile ranges, the quantiles outside their band."""
    if isinstance(observed, dict) and "quantiles" in observed and "values" in observed:
        ok = (res.get("details") or {}).get("success_details") or []
        bands = (kwargs.get("quantile_ranges") or {}).get("value_ranges") or []
        parts = []
        for i, (q, v) in enumerate(zip(observed["quantiles"], observed["values"])):
            if i < len(ok) and ok[i] is False and i < len(bands):
                parts.append(f"q{q:g}={v} outside [{bands[i][0]}, {bands[i][1]}]")
        return "; ".join(parts) if parts else ", ".join(
            f"q{q:g}={v}" for q, v in zip(observed["quantiles"], observed["values"]))
    return str(observed)


def _clip(v: Any, limit: int = 50) -> Any:
    """Bound evidence size: long lists cut to ``limit`` items, long strings to 200 chars."""
    if isinstance(v, str):
        return clip_text(v, 200)
    if isinstance(v, list):
        return [_clip(x, limit) for x in v[:limit]]
    if isinstance(v, dict):
        return {str(k): _clip(x, limit) for k, x in list(v.items())[:limit]}
    return v


@dataclass(frozen=True)
class SuiteMeasures:
    """The suite's name, file and number of expectations, and GX's results per split."""

    suite: str
    path: str | None
    total: int
    results: SuiteResults
