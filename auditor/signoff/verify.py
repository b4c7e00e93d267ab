"""``auditor verify report.json``: are the inputs a report recorded still the same bytes?

Each recorded input is hashed again with the mode the report used (``full`` SHA-256 or
``fast``) and its size compared. Exit 0: every recorded file is unchanged; 1: at least one
changed (each named on stderr); 2: the report is unreadable, records no inputs, or a recorded
file is missing. In-memory splits (Python API) have no file to re-read and are listed as such;
a report whose inputs were all in memory verifies nothing and is exit 2, never a vacuous 0.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from auditor.errors import InputError


def verify_inputs(report_path: str | Path, root: str | Path | None = None, *,
                  more: bool = False) -> tuple[list[str], list[str], list[str]]:
    """(unchanged, changed, not verifiable) descriptions; raises InputError for exit 2 --
    also when no recorded input is a file, unless ``more`` (something else is verified: the
    tokenizer).
    ``root``: the inputs were moved (another machine, a restored archive): each recorded
    path is looked up under ``root`` at its place relative to the folder that held every
    recorded input (``/data/2026-11/train.parquet`` -> ``root/train.parquet``)."""
    from auditor.report.results import read_report
    from auditor.signoff.provenance import content_hash

    doc = read_report(report_path)
    inputs: Any = doc.get("inputs") or {}
    if not isinstance(inputs, dict) or not all(isinstance(d, dict) for d in inputs.values()):
        raise InputError(f"{report_path}: 'inputs' is not a mapping of split -> "
                         "{path, bytes, hash, ...}; not a report.json written by auditor run")
    if not inputs and not more:
        raise InputError(f"{report_path}: the report records no inputs (written by an older "
                         "auditor?); nothing to verify")
    ok, changed, unverifiable = [], [], []
    base = ""
    if root is not None:  # the folder that held every recorded file (absolute paths)
        recorded = [d["path"] for d in inputs.values() if isinstance(d.get("path"), str)
                    and d.get("hash") and Path(d["path"]).is_absolute()]
        if not recorded:
            raise InputError(f"{report_path}: --root: the report records no input file path")
        base = os.path.commonpath([str(Path(p).parent) for p in recorded])
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
        if root is not None:
            p = Path(root) / os.path.relpath(path, base)
        if not p.exists():
            raise InputError(f"{p}: recorded input {name!r} is missing"
                             + ("" if root is not None else
                                " (moved? --root DIR looks the inputs up under DIR)"))
        digest, size = content_hash(p, mode)
        if digest == d["hash"] and size == d.get("bytes"):
            ok.append(f"{name}: {p} unchanged ({size:,} bytes, {mode} hash)")
        else:
            what = (f"size {d.get('bytes'):,} -> {size:,} bytes" if size != d.get("bytes")
                    else f"same size, {mode} hash differs")
            changed.append(f"{name}: {p} changed since the audit ({what})")
    if not ok and not changed and not more:
        raise InputError(f"{report_path}: every recorded input was in memory when audited "
                         "(Python API with DataFrames): no file to verify")
    return ok, changed, unverifiable


# keys of a recorded config that are not the audit's rules: where the data, the ledger and
# other files are (a moved folder is not a changed rule), the engine that measured
NOT_RULES = ("datasets", "reference", "ledger", "pipeline", "expectations", "engine",
             "spark_master", "spark_conf", "spark_sample_rows")


def _rules(config: dict[str, Any]) -> dict[str, Any]:
    """A recorded config without :data:`NOT_RULES`, the tokenizer's path, the output folder
    of ``--write-clean`` (``clean_dir``), and with the waivers in a fixed order."""
    out = {k: v for k, v in config.items() if k not in NOT_RULES}
    if isinstance(out.get("tokens"), dict):
        out["tokens"] = {k: v for k, v in out["tokens"].items() if k != "tokenizer"}
    for key in ("thresholds", "check_params"):
        if isinstance(out.get(key), dict):
            out[key] = {c: {p: v for p, v in (ps or {}).items() if p != "clean_dir"}
                        for c, ps in out[key].items()}
            out[key] = {c: ps for c, ps in out[key].items() if ps or key == "check_params"}
    if isinstance(out.get("waivers"), list):
        out["waivers"] = sorted(out["waivers"], key=lambda w: json.dumps(w, sort_keys=True,
                                                                         default=str))
    return out


def config_changes(report_path: str | Path, config_path: str | Path) -> list[str]:
    """What differs between the config a report recorded and ``config_path`` now (roles,
    suite, thresholds and every check parameter, waivers...; not the data paths): one line
    per changed key, waivers added and removed named. A key the report did not record (an
    older auditor) is not compared."""
    from auditor.core.config import load_config
    from auditor.core.suites import load_checks
    from auditor.report.results import read_report
    from auditor.signoff.provenance import resolved_config

    doc = read_report(report_path)
    before = doc.get("config")
    if not isinstance(before, dict):
        raise InputError(f"{report_path}: the report records no config (written by the Python "
                         "API with frames, or an older auditor): nothing to compare")
    cfg = load_config(config_path)
    try:
        checks = load_checks(str(before.get("suite") or cfg.suite), cfg.thresholds, notes=[])
    except Exception:  # a suite path typed relative to where the run was: the YAML's own
        checks = load_checks(cfg.suite, cfg.thresholds, notes=[])
    now = json.loads(json.dumps(resolved_config(cfg, checks), default=str))  # as recorded
    now["suite"] = before.get("suite")  # the suite's content is compared as check_params
    before = _rules(before)
    now = _rules(now)
    out = []
    for key in sorted(set(before)):
        old, new = before.get(key), now.get(key)
        if old == new:
            continue
        if key == "waivers":
            added = [_waiver(w) for w in new or [] if w not in (old or [])]
            removed = [_waiver(w) for w in old or [] if w not in (new or [])]
            out.append(f"waivers: {len(old or []):,} -> {len(new or []):,}"
                       + (f"; added: {'; '.join(added)}" if added else "")
                       + (f"; removed: {'; '.join(removed)}" if removed else ""))
        elif key == "check_params":
            moved = sorted(c for c in set(old or {}) | set(new or {})
                           if (old or {}).get(c) != (new or {}).get(c))
            out.append(f"check parameters changed: {', '.join(moved)}")
        else:
            out.append(f"{key}: {json.dumps(old, default=str)[:120]} -> "
                       f"{json.dumps(new, default=str)[:120]}")
    return out


def _waiver(w: dict[str, Any]) -> str:
    return (f"{w.get('check')} / {w.get('subject')!s} (owner {w.get('owner')}, until "
            f"{w.get('expires')})")


def verify_benchmarks(recorded: Any) -> tuple[list[str], list[str]]:
    """(unchanged, changed) descriptions of the benchmarks a report recorded (``benchmarks``:
    name -> {path, sha256, ...}), each file or folder hashed again; a missing one is
    changed."""
    from auditor.loading.benchmarks import benchmark_sha256

    if not isinstance(recorded, dict) or not all(
            isinstance(d, dict) and isinstance(d.get("path"), str)
            and isinstance(d.get("sha256"), str) for d in recorded.values()):
        raise InputError("report.json: 'benchmarks' is not a mapping of name -> {path, sha256, "
                         "...}; not a report.json written by auditor run")
    ok, changed = [], []
    for name, d in recorded.items():
        p = Path(d["path"])
        if not p.exists():
            changed.append(f"benchmark {name}: {p} is missing")
        elif benchmark_sha256(p) == d["sha256"]:
            ok.append(f"benchmark {name}: {p} unchanged (SHA-256)")
        else:
            changed.append(f"benchmark {name}: {p} changed since the audit (SHA-256 differs)")
    return ok, changed
