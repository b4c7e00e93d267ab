"""The run ledger: every run appended to a database, for trends and ``--baseline last``.

A plain path is an embedded SQLite file (stdlib ``sqlite3``); a SQLAlchemy URL
(``postgresql://...``, ``sqlite:///...``: anything with ``://``) is a shared database, and
SQLAlchemy is imported only then. The same portable SQL runs on both. Tables:

- ``runs``: run id, start time, time recorded (UTC, microseconds: orders runs of one
  second), status, duration, config hash, the inputs (path, bytes, hash, rows per split, as
  JSON), the tool version and where report.json was written;
- ``check_results``: per run and check, its status and summary;
- ``metrics``: per run, check, subject, metric and splits, the headline value, severity and
  threshold of every finding with a value (waived or not), and the PSI of every compared
  feature and of the label from the drift checks' evidence (so a trend shows features that
  have not drifted yet, and :mod:`auditor.signoff.own_history` grades a night against the
  earlier ones).
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from auditor.core.config import base_metric
from auditor.errors import InputError
from auditor.signoff.provenance import is_url, shown  # noqa: F401 (shown: used by history)

DEFAULT_LEDGER = "reports/ledger.sqlite"

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS runs (
        run_id VARCHAR(64) PRIMARY KEY, started_at VARCHAR(32) NOT NULL,
        status VARCHAR(16) NOT NULL, duration_s FLOAT, config_hash VARCHAR(64),
        inputs TEXT, tool_version VARCHAR(32), report_path TEXT,
        recorded_at VARCHAR(32) NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS check_results (
        run_id VARCHAR(64) NOT NULL, check_id VARCHAR(128) NOT NULL,
        status VARCHAR(16) NOT NULL, summary TEXT)""",
    """CREATE TABLE IF NOT EXISTS metrics (
        run_id VARCHAR(64) NOT NULL, check_id VARCHAR(128) NOT NULL, subject TEXT NOT NULL,
        metric VARCHAR(128) NOT NULL, splits TEXT NOT NULL, value FLOAT,
        severity VARCHAR(8), waived INTEGER, threshold FLOAT)""",
)
# columns added since a ledger's tables were first created: added in place when missing
ADDED_COLUMNS = (("metrics", "threshold", "FLOAT"),)
# per-feature headline columns read from evidence tables (rows naming a "column")
TABLE_METRICS = {"drift.features": ("psi",), "drift.label": ("psi",)}


def subject_text(subject: Any) -> str:
    return ", ".join(map(str, subject)) if isinstance(subject, list) else str(subject or "")


def headline_metrics(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows for the ``metrics`` table from one report dict: the value of every finding, and
    for the drift checks the PSI of every compared feature (from the evidence table and chart;
    a PSI finding only sets its row's severity and waived flag). The workflow's own checks
    (``audit.*``: waiver bookkeeping) have no trend worth drawing and are left out."""
    rows: list[dict[str, Any]] = []
    for c in doc.get("checks", []):
        if c["id"].startswith("audit."):
            continue
        fields = TABLE_METRICS.get(c["id"], ())
        per_feature: dict[tuple[str, str, str], dict[str, Any]] = {}
        for f in c.get("findings", []):
            splits = "→".join(f.get("splits") or [])
            for field in fields:
                values = _feature_values(f.get("evidence") or {}, field)
                stat = ((f.get("evidence") or {}).get("statistics") or {}).get(field)
                if f.get("subject") and isinstance(stat, (int, float)):  # a column's finding
                    values.setdefault(subject_text(f["subject"]), (float(stat), None))
                for column, (v, verdict) in values.items():
                    per_feature[(column, field, splits)] = {
                        "check_id": c["id"], "subject": column, "metric": field,
                        "splits": splits, "value": v, "severity": verdict, "waived": 0,
                        "threshold": None}
        for f in c.get("findings", []):
            if f.get("change") == "resolved":
                continue
            value = f.get("value")
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            row = {"check_id": c["id"], "subject": subject_text(f.get("subject")),
                   "metric": f.get("metric", ""), "splits": "→".join(f.get("splits") or []),
                   "value": float(value), "severity": f.get("severity"),
                   "waived": int("waived" in f), "threshold": _number(f.get("threshold"))}
            key = (row["subject"], base_metric(row["metric"]) or "", row["splits"])
            if key in per_feature:
                per_feature[key].update(severity=row["severity"], waived=row["waived"])
            else:
                rows.append(row)
        rows += per_feature.values()
    return rows


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _feature_values(evidence: dict[str, Any], field: str
                    ) -> dict[str, tuple[float, str | None]]:
    """``column -> (value, verdict)`` of ``field`` from an evidence table of rows naming a
    ``column``, completed from the evidence chart ("PSI per feature": labels and values) for
    the columns the table leaves out (drift lists stable columns by name only)."""
    out: dict[str, tuple[float, str | None]] = {}
    for row in evidence.get("features") or []:
        v = row.get(field) if isinstance(row, dict) else None
        if isinstance(v, (int, float)) and row.get("column") is not None:
            out[str(row["column"])] = (float(v), row.get("verdict"))
    chart = evidence.get("chart")
    if isinstance(chart, dict) and str(chart.get("title", "")).lower().startswith(
            f"{field} per feature"):
        for label, v in zip(chart.get("labels") or [], chart.get("values") or []):
            if isinstance(v, (int, float)) and str(label) not in out:
                out[str(label)] = (float(v), None)
    return out


class Ledger:
    """An open ledger; tables are created on first use. Errors are one-line InputErrors."""

    def __init__(self, target: str) -> None:
        self.target = str(target)
        self._engine: Any = None
        try:
            if is_url(self.target):
                from sqlalchemy import create_engine
                from sqlalchemy.pool import NullPool

                # a ledger writes once per run: no pool keeping idle connections to a shared
                # database open in long-lived processes (notebooks, Dagster code servers)
                self._engine = create_engine(self.target, poolclass=NullPool)
            else:
                Path(self.target).parent.mkdir(parents=True, exist_ok=True)
            for statement in SCHEMA:
                self._execute([(statement, {})])
            self._add_missing_columns()
        except InputError:
            raise
        except Exception as err:
            first = str(err).splitlines()[0] if str(err) else ""
            raise InputError(f"{shown(self.target)}: cannot open the ledger ("
                             f"{type(err).__name__}: "
                             f"{first.replace(self.target, shown(self.target))})") from None

    def _add_missing_columns(self) -> None:
        """``ALTER TABLE ... ADD COLUMN`` for each column of :data:`ADDED_COLUMNS` that a ledger
        written by an earlier version lacks (its older rows read NULL there). A column another
        process added meanwhile is fine; one that cannot be added (a read-only role on a shared
        database) is read as NULL and not written (``self.absent``)."""
        self.absent: set[str] = set()
        for table, column, kind in ADDED_COLUMNS:
            if column in self._columns(table):
                continue
            try:
                self._execute([(f"ALTER TABLE {table} ADD COLUMN {column} {kind}", {})])
            except Exception:
                if column not in self._columns(table):
                    self.absent.add(column)

    def _columns(self, table: str) -> set[str]:
        """The column names of ``table`` (SQLAlchemy's inspector, or SQLite's table_info)."""
        if self._engine is not None:
            from sqlalchemy import inspect

            return {c["name"] for c in inspect(self._engine).get_columns(table)}
        return {r["name"] for r in self._query(f"PRAGMA table_info({table})")}

    # -- the two drivers behind one interface ---------------------------------------------------
    def _execute(self, statements: list[tuple[str, Any]]) -> None:
        """Run statements (each with a dict or a list of dicts of named parameters) in one
        transaction."""
        if self._engine is not None:
            from sqlalchemy import text

            with self._engine.begin() as conn:
                for sql, params in statements:
                    if isinstance(params, list) and not params:
                        continue
                    conn.execute(text(sql), params)
            return
        import sqlite3

        con = sqlite3.connect(self.target, timeout=30)
        try:
            with con:
                for sql, params in statements:
                    if isinstance(params, list):
                        con.executemany(sql, params)
                    else:
                        con.execute(sql, params)
        finally:
            con.close()

    def _query(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        if self._engine is not None:
            from sqlalchemy import text

            with self._engine.connect() as conn:
                return [dict(r._mapping) for r in conn.execute(text(sql), params or {})]
        import sqlite3

        con = sqlite3.connect(self.target, timeout=30)
        con.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in con.execute(sql, params or {})]
        finally:
            con.close()

    # -- writing and reading ----------------------------------------------------------------
    def append(self, doc: dict[str, Any], report_path: str | Path | None) -> str:
        """Append one report dict as a run; returns its run id."""
        from auditor.signoff.provenance import config_hash

        from datetime import datetime, timezone

        run_id = uuid.uuid4().hex
        recorded = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
        inputs = {k: {f: v.get(f) for f in ("path", "bytes", "hash", "rows")}
                  for k, v in (doc.get("inputs") or {}).items()}
        run = {"run_id": run_id, "started_at": doc.get("started_at", ""),
               "status": doc.get("status", ""), "duration_s": doc.get("duration_s"),
               "config_hash": config_hash(doc["config"]) if doc.get("config") else None,
               "inputs": json.dumps(inputs, sort_keys=True),
               "tool_version": doc.get("tool_version"),
               "report_path": str(Path(report_path).resolve()) if report_path else None,
               "recorded_at": recorded}
        checks = [{"run_id": run_id, "check_id": c["id"], "status": c["status"],
                   "summary": c.get("summary", "")} for c in doc.get("checks", [])]
        metrics = [{"run_id": run_id, **m} for m in headline_metrics(doc)]
        threshold = "" if "threshold" in self.absent else ", threshold"
        try:
            self._execute([
                ("INSERT INTO runs (run_id, started_at, status, duration_s, config_hash, "
                 "inputs, tool_version, report_path, recorded_at) VALUES (:run_id, "
                 ":started_at, :status, :duration_s, :config_hash, :inputs, :tool_version, "
                 ":report_path, :recorded_at)", run),
                ("INSERT INTO check_results (run_id, check_id, status, summary) VALUES "
                 "(:run_id, :check_id, :status, :summary)", checks),
                ("INSERT INTO metrics (run_id, check_id, subject, metric, splits, value, "
                 f"severity, waived{threshold}) VALUES (:run_id, :check_id, :subject, :metric, "
                 f":splits, :value, :severity, :waived{threshold and ', :threshold'})",
                 metrics)])
        except Exception as err:
            raise InputError(f"{shown(self.target)}: cannot append to the ledger "
                             f"({type(err).__name__}: "
                             f"{str(err).replace(self.target, shown(self.target))})") from None
        return run_id

    def runs(self) -> list[dict[str, Any]]:
        """Every run, oldest first, with ``inputs`` decoded."""
        rows = self._query("SELECT run_id, started_at, status, duration_s, config_hash, inputs,"
                           " tool_version, report_path, recorded_at FROM runs"
                           " ORDER BY started_at, recorded_at")
        for r in rows:
            r["inputs"] = json.loads(r["inputs"]) if r.get("inputs") else {}
        return rows

    def check_results(self) -> list[dict[str, Any]]:
        return self._query("SELECT run_id, check_id, status, summary FROM check_results")

    def metrics(self, run_ids: list[str] | None = None, check_ids: list[str] | None = None
                ) -> list[dict[str, Any]]:
        """Every metric row, or those of ``run_ids`` and ``check_ids`` only."""
        where, params = [], {}
        for column, values in (("run_id", run_ids), ("check_id", check_ids)):
            if values is None:
                continue
            if not values:
                return []
            names = [f"{column}{i}" for i in range(len(values))]
            where.append(f"{column} IN ({', '.join(':' + n for n in names)})")
            params.update(zip(names, values))
        threshold = "NULL AS threshold" if "threshold" in self.absent else "threshold"
        return self._query("SELECT run_id, check_id, subject, metric, splits, value, severity,"
                           f" waived, {threshold} FROM metrics" + (" WHERE " + " AND ".join(where)
                                                     if where else ""), params)


def last_report_path(target: str) -> str | None:
    """The report.json of the newest run in the ledger that recorded one."""
    if not is_url(target) and not Path(target).exists():
        return None
    for run in reversed(Ledger(target).runs()):
        if run.get("report_path"):
            return str(run["report_path"])
    return None
