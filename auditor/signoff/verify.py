"""``auditor verify report.json``: are the inputs a report recorded still the same bytes?

Each recorded input is hashed again with the mode the report used (``full`` SHA-256 or
``fast``) and its size compared. Exit 0: every recorded file is unchanged; 1: at least one
changed (each named on stderr); 2: the report is unreadable, records no inputs, or a recorded
file is missing. In-memory splits (Python API) have no file to re-read and are listed as such;
a report whose inputs were all in memory verifies nothing and is exit 2, never a vacuous 0.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from auditor.errors import InputError


def verify_inputs(report_path: str | Path) -> tuple[list[str], list[str], list[str]]:
    """(unchanged, changed, not verifiable) descriptions; raises InputError for exit 2."""
    from auditor.report.results import read_report
    from auditor.signoff.provenance import content_hash

    doc = read_report(report_path)
    inputs: Any = doc.get("inputs") or {}
    if not isinstance(inputs, dict) or not all(isinstance(d, dict) for d in inputs.values()):
        raise InputError(f"{report_path}: 'inputs' is not a mapping of split -> "
                         "{path, bytes, hash, ...}; not a report.json written by auditor run")
    if not inputs:
        raise InputError(f"{report_path}: the report records no inputs (written by an older "
                         "auditor?); nothing to verify")
    ok, changed, unverifiable = [], [], []
    for name, d in inputs.items():
        path, mode = d.get("path"), d.get("hash_mode") or "full"
        if mode not in ("full", "fast"):
            raise InputError(f"{report_path}: inputs.{name}.hash_mode must be full or fast; "
                             f"got {mode!r}")
        if not path or not d.get("hash"):
            unverifiable.append(f"{name}: in memory when audited, no file to re-read")
            continue
        if not (isinstance(path, str) and isinstance(d["hash"], str)
                and type(d.get("bytes")) is int):
            raise InputError(f"{report_path}: inputs.{name} must hold a path (text), bytes "
                             "(an integer) and a hash (text); not a report.json written by "
                             "auditor run")
        p = Path(path)
        if not p.exists():
            raise InputError(f"{p}: recorded input {name!r} is missing")
        digest, size = content_hash(p, mode)
        if digest == d["hash"] and size == d.get("bytes"):
            ok.append(f"{name}: {p} unchanged ({size:,} bytes, {mode} hash)")
        else:
            what = (f"size {d.get('bytes'):,} -> {size:,} bytes" if size != d.get("bytes")
                    else f"same size, {mode} hash differs")
            changed.append(f"{name}: {p} changed since the audit ({what})")
    if not ok and not changed:
        raise InputError(f"{report_path}: every recorded input was in memory when audited "
                         "(Python API with DataFrames): no file to verify")
    return ok, changed, unverifiable
