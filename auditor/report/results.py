"""Plain result types of a run (``Finding``, ``CheckResult``, ``Report``) and their JSON form.

``report.json`` is canonical; ``report.html`` is rendered from the same dict. The JSON layout is
the contract of ``shared/DESIGN.md`` (schema_version 1) and is validated by
``auditor/report/schema/report.schema.json``.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import date, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from auditor.report.ranks import SEVERITY_RANK, STATUS_RANK

if TYPE_CHECKING:
    import polars as pl

SCHEMA_VERSION = 1


class Severity(StrEnum):
    INFO = "info"
    WARN = "warn"
    FAIL = "fail"


class Status(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIPPED = "skipped"
    ERROR = "error"


# How bad a status is when several are combined. A crash ranks below a data failure: exit code 1
# (the data failed) takes precedence over exit code 3 (the tool needs attention).



def summarize(findings: list[Finding]) -> str:
    """One line: the worst finding's message (+ how many more), or what was checked."""
    flagged = [f for f in findings if f.severity != Severity.INFO]
    if flagged:
        rank = {Severity.FAIL: 0, Severity.WARN: 1}
        worst = sorted(flagged, key=lambda f: rank[f.severity])[0]
        more = len(flagged) - 1
        return worst.message + (f" (+{more:,} more finding{'s' * (more > 1)})"
                                if more else "")
    if findings:
        return findings[0].message
    return "Nothing found above the thresholds."

@dataclass(frozen=True)
class CleanSubset:
    """A side effect a finding asks of the run, done after every check (never inside one):
    ``split`` written to ``folder``/<split>.parquet without the rows ``rows`` (0-based, stored
    order). Not part of report.json; the writer adds what it did to the finding's message and
    ``evidence.clean_subset``."""

    split: str
    rows: Any  # a numpy int64 array (a report copies it cheaply, unlike a tuple of ints)
    folder: str


@dataclass
class Finding:
    """One graded statement about the data, with the number that triggered it and evidence."""

    severity: Severity
    message: str
    metric: str
    value: float | None = None
    threshold: float | None = None
    count: int | None = None
    subject: str | list[str] = ""
    splits: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    # workflow marks (serialised only when set): an accepted finding and its waiver
    # {reason, owner, expires}; with a baseline report, "new", "persisting" or "resolved"
    waived: dict[str, Any] | None = None
    change: str | None = None
    # asked of the run after the checks (tokens.contamination's --write-clean); not serialised
    clean: CleanSubset | None = field(default=None, repr=False, compare=False,
                                      metadata={"serialised": False})


@dataclass
class CheckResult:
    """The outcome of one check in one run."""

    id: str
    title: str
    status: Status
    duration_s: float
    summary: str
    error: str | None = None
    findings: list[Finding] = field(default_factory=list)
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Report:
    """Everything a run produced; ``to_dict`` is exactly what ``report.json`` holds."""

    status: Status
    started_at: str
    duration_s: float
    seed: int
    datasets: dict[str, dict[str, Any]]
    checks: list[CheckResult]
    tool_version: str = ""
    schema_version: int = SCHEMA_VERSION
    notes: list[str] = field(default_factory=list)
    # provenance and workflow (serialised only when set; see DESIGN.md "compatible additions")
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    baseline: dict[str, Any] | None = None
    # how the splits were made, declared or inferred (auditor.judging.design.SplitDesign)
    split_design: dict[str, Any] | None = None
    # the tokenizer of a tokens: section, with golden ids (auditor.signoff.tokenizer_record)
    tokenizer: dict[str, Any] | None = None
    # the benchmarks: read by tokens.benchmarks, by name: path, SHA-256, problems, fields
    benchmarks: dict[str, dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = json_safe(self)  # one pass (dataclasses.asdict deep-copies, then a second pass)
        ordered = {k: d[k] for k in ("schema_version", "tool_version", "status", "started_at",
                                      "duration_s", "seed", "datasets", "checks", "notes")}
        for c in ordered["checks"]:
            for f in c["findings"]:
                for key in ("waived", "change"):
                    if f[key] is None:
                        del f[key]
        for key in ("inputs", "config", "versions", "baseline", "split_design", "tokenizer",
                    "benchmarks"):
            if d[key]:
                ordered[key] = d[key]
        from auditor.report.diagnosis import diagnose

        # derived from the findings; every renderer derives it again (never a stale copy)
        diagnosis = [p.to_dict() for p in diagnose(ordered)]
        # after the checks: the documented keys keep their order (a compatible addition)
        return {**{k: ordered.pop(k) for k in ("schema_version", "tool_version", "status",
                                                "started_at", "duration_s", "seed",
                                                "datasets", "checks")},
                "diagnosis": diagnosis, **ordered}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> "Report":
        """The Report a ``report.json`` dict describes (the inverse of :meth:`to_dict`)."""
        finding_keys = {f.name for f in fields(Finding)} - {"clean"}
        check_keys = {f.name for f in fields(CheckResult)}
        checks = []
        for c in doc.get("checks", []):  # keys a later version may add are left out
            findings = [Finding(**{**{k: v for k, v in f.items() if k in finding_keys},
                                   "severity": Severity(f["severity"])})
                        for f in c.get("findings", [])]
            checks.append(CheckResult(**{**{k: v for k, v in c.items() if k in check_keys},
                                         "status": Status(c["status"]), "findings": findings}))
        known = {"status", "started_at", "duration_s", "seed", "datasets", "tool_version",
                 "schema_version", "notes", "inputs", "config", "versions", "baseline",
                 "split_design", "tokenizer", "benchmarks"}
        given = {k: v for k, v in doc.items() if k in known}
        given["status"] = Status(given["status"])
        return cls(checks=checks, **given)

    @classmethod
    def from_json(cls, path: str | Path) -> "Report":
        """Read a ``report.json`` written by ``auditor run`` (or :meth:`to_json`); a missing,
        unreadable or foreign file raises one :class:`~auditor.errors.InputError`."""
        from auditor.errors import InputError

        doc = read_report(path)
        try:
            return cls.from_dict(doc)
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"{path}: not an auditor report.json ({type(err).__name__}: "
                             f"{err})") from None

    def passed(self, fail_on: Severity | str = Severity.FAIL) -> bool:
        """True when no counted (unwaived) finding is at or above ``fail_on`` and no check
        crashed: the same verdict as exit code 0."""
        return self.exit_code(fail_on) == 0

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for c in self.checks:
            counts[c.status] = counts.get(c.status, 0) + 1
        parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        splits = ", ".join(f"{k}={v.get('rows', '?'):,}" if isinstance(v.get("rows"), int)
                           else k for k, v in self.datasets.items())
        return (f"<Report {str(self.status).upper()}: {len(self.checks)} checks ({parts}); "
                f"splits {splits}; {self.started_at}>")

    def _repr_html_(self) -> str:
        """Compact notebook view: verdict, one row per check, counted findings grouped."""
        from auditor.report.render import render_summary_html

        written = getattr(self, "_written", None)
        links = {"full report (report.html)": written.as_uri()} if written else None
        return render_summary_html(self.to_dict(), links)

    def to_json(self, indent: int | None = None) -> str:
        """The report.json text (:func:`report_json`'s layout; ``indent``: plain
        ``json.dumps`` with that indent instead)."""
        if indent is not None:
            return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False,
                              allow_nan=False)
        return report_json(self.to_dict())

    @overload
    def to_html(self, path: None = None) -> str: ...

    @overload
    def to_html(self, path: str | Path) -> Path: ...

    def to_html(self, path: str | Path | None = None) -> str | Path:
        """The HTML report: written atomically to ``path`` when given, returning the path
        (resolved; a notebook cell then echoes a path, not megabytes of HTML); else the
        HTML text."""
        from auditor.report.render import render_html
        from auditor.report.output import write_atomic

        html = render_html(self.to_dict())
        if path is None:
            return html
        write_atomic(Path(path), html)
        self._written = Path(path).resolve()  # linked from the notebook summary
        return self._written

    def findings(self, *, include_waived: bool = True) -> "pl.DataFrame":
        """Every finding of every check as one polars DataFrame (``.to_pandas()`` for pandas),
        in report order: ``check``, ``check_status``, ``severity``, ``subject`` (a list subject
        joined by ", "), ``splits`` (joined by " -> "), ``metric``, ``value``, ``threshold``,
        ``count``, ``message``, ``waived`` (the waiver's reason, or null) and ``change``
        (against a baseline: new, persisting or resolved; else null). ``include_waived=False``
        leaves out the findings a waiver accepted."""
        import polars as pl

        rows = [{"check": c.id, "check_status": str(c.status), "severity": str(f.severity),
                 "subject": f.subject if isinstance(f.subject, str) else ", ".join(f.subject),
                 "splits": " -> ".join(f.splits), "metric": f.metric,
                 "value": None if f.value is None else float(f.value),
                 "threshold": None if f.threshold is None else float(f.threshold),
                 "count": f.count, "message": f.message,
                 "waived": (f.waived or {}).get("reason") if f.waived is not None else None,
                 "change": f.change}
                for c in self.checks for f in c.findings
                if include_waived or f.waived is None]
        return pl.DataFrame(rows, schema={
            "check": pl.String, "check_status": pl.String, "severity": pl.String,
            "subject": pl.String, "splits": pl.String, "metric": pl.String,
            "value": pl.Float64, "threshold": pl.Float64, "count": pl.Int64,
            "message": pl.String, "waived": pl.String, "change": pl.String})

    def check(self, check_id: str) -> CheckResult:
        for c in self.checks:
            if c.id == check_id:
                return c
        raise KeyError(check_id)

    def exit_code(self, fail_on: Severity | str = Severity.FAIL) -> int:
        """0 nothing at or above ``fail_on``; 1 a finding at or above it; 3 a check crashed.
        ``fail_on="new"``: 1 only for a fail the baseline did not hold (:func:`gates`)."""
        return exit_code(self.checks, str(fail_on))


def worst_severity(findings: list[Finding]) -> Severity:
    """The worst severity among the findings that count (waived findings do not)."""
    return max((f.severity for f in findings if f.waived is None),
               key=SEVERITY_RANK.__getitem__, default=Severity.INFO)


def status_from_findings(findings: list[Finding]) -> Status:
    return {Severity.INFO: Status.PASS, Severity.WARN: Status.WARN,
            Severity.FAIL: Status.FAIL}[worst_severity(findings)]


def overall_status(checks: list[CheckResult]) -> Status:
    """The worst check status; ``skipped`` only when every check was skipped."""
    if not checks:
        return Status.SKIPPED
    return max((c.status for c in checks), key=STATUS_RANK.__getitem__)


NEW = "new"
"""``--fail-on new``: the gate of a scheduled audit compared with a baseline."""
FAIL_ON = ("info", "warn", "fail", NEW)


def gates(severity: str, waived: Any, change: str | None, fail_on: str) -> bool:
    """Whether a finding makes the exit code 1 under ``fail_on``: not waived, and at or above
    ``fail_on`` (``warn`` or ``fail``); under ``new``, a ``fail`` that the baseline did not
    already hold (``change`` is not ``persisting``: a known, persisting problem does not keep
    the pipeline red; without a baseline every fail is new)."""
    if waived is not None:
        return False
    if fail_on == NEW:
        return severity == Severity.FAIL and change != "persisting"
    return SEVERITY_RANK[Severity(severity)] >= SEVERITY_RANK[Severity(fail_on)]


def exit_code(checks: list[CheckResult], fail_on: str) -> int:
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    for c in checks:
        if any(gates(f.severity, f.waived, f.change, fail_on) for f in c.findings):
            return 1
    if any(c.status == Status.ERROR for c in checks):
        return 3
    return 0


def report_json(doc: dict[str, Any]) -> str:
    """report.json's text: one line per top-level key, per check (its fields) and per finding.
    A finding per line keeps the file greppable (``grep '"severity": "fail"'``) and is written
    by json's C encoder: an indented dump goes through the pure-Python encoder, ~10 s for the
    10,000 findings of a 10,000-column table. Values must already be JSON-native
    (:func:`json_safe`)."""
    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    def check_line(check: dict[str, Any]) -> str:  # its keys in order, findings one per line
        items = []
        for k, v in check.items():
            if k == "findings" and isinstance(v, list) and v:
                lines = ",\n".join(f"   {dump(f)}" for f in v)
                items.append(f'{dump(k)}: [\n{lines}\n  ]')
            else:
                items.append(f"{dump(k)}: {dump(v)}")
        return "  {" + ", ".join(items) + "}"

    parts = []
    for key, value in doc.items():
        if key == "checks" and isinstance(value, list) and value:
            parts.append(' "checks": [\n' + ",\n".join(map(check_line, value)) + "\n ]")
        elif key == "diagnosis" and isinstance(value, list) and value:
            parts.append(' "diagnosis": [\n' + ",\n".join(f"  {dump(p)}" for p in value)
                         + "\n ]")
        else:
            parts.append(f" {dump(key)}: {dump(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def json_safe(obj: Any) -> Any:
    """Recursively convert to JSON-native types: NaN/inf -> None, numpy scalars -> Python,
    dataclasses -> dicts of their fields (in order; a field with ``metadata={"serialised":
    False}`` is left out)."""
    kind = type(obj)
    if kind is str or kind is int or kind is bool or obj is None:  # the common leaves first
        return obj
    if kind is float:
        return obj if math.isfinite(obj) else None
    if is_dataclass(obj) and not isinstance(obj, type):  # fields marked not serialised: left out
        return {f.name: json_safe(getattr(obj, f.name)) for f in fields(obj)
                if f.metadata.get("serialised", True)}
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, StrEnum):
        return str(obj)
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, (datetime, date)):
        return obj.isoformat()
    if hasattr(obj, "tolist"):  # numpy scalar or array, polars Series
        return json_safe(obj.tolist())
    if isinstance(obj, Path):
        return str(obj)
    return str(obj)


def read_report(path: str | Path) -> dict[str, Any]:
    """A report.json as a dict; one clear InputError when it cannot be used."""
    from auditor.core.inputs import check_input_path
    from auditor.errors import InputError

    path = Path(path)
    check_input_path(path, what="report")  # a FIFO would block the read forever
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: report not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"{path}: not a readable report.json ({err})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("checks"), list):
        raise InputError(f"{path}: not an auditor report.json (no 'checks' list)")
    return doc
