"""Dagster: a blocking asset check that audits the training splits after they materialise.

``training_splits`` stands for your asset that writes the split files named in audit.yaml.
``audit_training_splits`` runs ``auditor run`` on them; exit code 0 passes the check, 1 fails
it (blocking: downstream assets do not materialise), 2 or 3 raise (a usage error or a crashed
check needs a person, not a retry). The reports of every run are kept under
``AUDIT_REPORTS/<run id>/`` (linked in the check's metadata) and appended to the ledger.

Set ``AUDIT_CONFIG`` (path of audit.yaml) and ``AUDIT_REPORTS`` (folder for reports and the
ledger) in the environment of the code location.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

from dagster import (AssetCheckExecutionContext, AssetCheckResult, AssetCheckSeverity,
                     AssetExecutionContext, Definitions,
                     Failure, MetadataValue, asset, asset_check)


def audit_config() -> Path:
    return Path(os.environ.get("AUDIT_CONFIG", "audit.yaml"))


def reports_dir() -> Path:
    return Path(os.environ.get("AUDIT_REPORTS", "reports"))


@asset
def training_splits(context: AssetExecutionContext) -> None:
    """Your asset that writes train/val/test (the files audit.yaml names)."""
    context.log.info(f"splits described by {audit_config()}")


@asset_check(asset=training_splits, blocking=True,
             description="auditor: leakage, drift and separability checks of the splits")
def audit_training_splits(context: AssetCheckExecutionContext) -> AssetCheckResult:
    out = reports_dir() / context.run.run_id
    command = [sys.executable, "-m", "auditor", "run", str(audit_config()), "--out", str(out),
               "--ledger", str(reports_dir() / "ledger.sqlite"), "--baseline", "last",
               "--junit", str(out / "junit.xml"), "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise Failure(description=f"auditor exited {done.returncode}: "
                                  f"{done.stderr.strip()[-2000:]}")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    failed = [c["id"] for c in report["checks"] if c["status"] == "fail"]
    return AssetCheckResult(
        passed=done.returncode == 0,
        severity=AssetCheckSeverity.ERROR,
        description=f"auditor status {report['status']}; failed checks: "
                    f"{', '.join(failed) or 'none'}",
        metadata={"status": report["status"], "exit_code": done.returncode,
                  "failed_checks": MetadataValue.json(failed),
                  "report": MetadataValue.path(str((out / "report.html").resolve()))})


defs = Definitions(assets=[training_splits], asset_checks=[audit_training_splits])
