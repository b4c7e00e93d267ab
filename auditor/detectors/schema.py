"""Schema differences between splits that the audit survived."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from auditor.checks import Cost
from auditor.data import AuditData
from auditor.report import Finding, Severity


@dataclass(frozen=True, kw_only=True)
class SchemaConsistency:
    """Columns missing from a split or typed incompatibly across splits.

    A fail means a column the model sees in training is absent (or means something else) at
    evaluation time, and that column was left out of every cross-split check. Fix the export so
    every split has the same columns with the same types. Compatible differences (int vs float,
    different time zones) are harmonised and reported as info.
    """

    id: ClassVar[str] = "schema.consistency"
    title: ClassVar[str] = "Columns and types agree across splits"
    cost: ClassVar[Cost] = Cost.CHEAP
    missing_severity: Severity = Severity.FAIL
    dtype_severity: Severity = Severity.FAIL

    def run(self, data: AuditData) -> list[Finding]:
        findings = []
        for issue in data.schema_issues:
            severity = Severity(issue.severity)
            if issue.problem == "missing" and severity == Severity.FAIL:
                severity = self.missing_severity
            elif issue.problem == "dtype":
                severity = self.dtype_severity
            evidence = {"dtypes": issue.dtypes} if issue.dtypes else {}
            findings.append(Finding(severity=severity, message=issue.message,
                                    metric=f"schema_{issue.problem}", subject=issue.column,
                                    splits=issue.splits, evidence=evidence))
        n_feat = len(data.features)
        findings.append(Finding(
            severity=Severity.INFO, metric="features", value=float(n_feat),
            message=f"{n_feat:,} feature columns audited across {len(data.splits)} splits "
                    f"({', '.join(data.split_names)})",
            evidence={"roles": _roles_table(data)}))
        return findings


def _roles_table(data: AuditData) -> list[dict[str, str]]:
    roles = data.columns.declared()
    schema = dict(next(iter(data.splits.values())).schema)
    rows = []
    for col in list(schema)[:200]:
        role = roles.get(col) or ("feature" if col in data.features else "not audited")
        rows.append({"column": col, "role": role, "kind": str(data.kinds.get(col, "-")),
                     "dtype": str(schema[col])})
    return rows
