"""The Python API: ``audit(...)`` on DataFrames or files, and ``run_audit(config)``.

Both return the same :class:`~auditor.report.Report` the CLI serialises.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from auditor import __version__
from auditor.config import AuditConfig, Columns, Tokens, parse_config
from auditor.data import open_splits
from auditor.report import Report, overall_status
from auditor.runner import run_checks
from auditor.suites import load_checks


def run_audit(cfg: AuditConfig, *, frames: dict[str, Any] | None = None,
              suite: str | None = None, progress: bool = False) -> Report:
    """Build the suite's checks (fails fast on config errors), load the data, run, report."""
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    checks = load_checks(suite or cfg.suite, cfg.thresholds)
    data = open_splits(cfg, frames)
    results = run_checks(checks, data, progress=progress)
    return Report(status=overall_status(results),
                  started_at=started.strftime("%Y-%m-%dT%H:%M:%SZ"),
                  duration_s=round(time.perf_counter() - t0, 3), seed=cfg.seed,
                  datasets=data.info(), checks=results, tool_version=__version__,
                  notes=list(data.notes))


def audit(*, train: Any = None, test: Any = None, val: Any = None,
          splits: dict[str, Any] | None = None, label: str | None = None,
          time: str | None = None, groups: list[str] | str | None = None,
          ids: list[str] | str | None = None, text: list[str] | str | None = None,
          exclude: list[str] | str | None = None, tokens: dict[str, Any] | None = None,
          reference: Any = None, suite: str = "default",
          thresholds: dict[str, dict[str, Any]] | None = None, seed: int = 0,
          progress: bool = False) -> Report:
    """Audit splits given as polars/pandas DataFrames or file paths.

    ``splits`` (an ordered mapping name -> frame) replaces ``train``/``val``/``test`` when you
    have other split names. Column roles and thresholds mean the same as in audit.yaml.
    """
    given = splits if splits is not None else {
        k: v for k, v in (("train", train), ("val", val), ("test", test)) if v is not None}
    in_memory = {k: v for k, v in given.items() if not isinstance(v, (str, Path))}
    raw: dict[str, Any] = {
        "datasets": {k: (str(v) if isinstance(v, (str, Path)) else f"<in-memory {k}>")
                     for k, v in given.items()},
        "columns": Columns(label=label, time=time, groups=groups or [], ids=ids or [],
                           text=text or [], exclude=exclude or []).model_dump(),
        "suite": suite, "seed": seed, "thresholds": thresholds or {},
    }
    if tokens is not None:
        raw["tokens"] = Tokens.model_validate(tokens).model_dump()
    if reference is not None:
        if isinstance(reference, (str, Path)):
            raw["reference"] = str(reference)
        else:
            in_memory["reference"] = reference
    cfg = parse_config(raw, base_dir=Path.cwd(), source="audit()")
    return run_audit(cfg, frames=in_memory, progress=progress)
