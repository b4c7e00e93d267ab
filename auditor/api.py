"""The Python API: ``audit(...)`` on DataFrames or files, and ``run_audit(config)``.

Both return the same :class:`~auditor.report.results.Report` the CLI serialises.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from auditor import __version__
from auditor.core.config import AuditConfig, Tokens, parse_config
from auditor.engines.selection import engine_of
from auditor.judging.design import split_design
from auditor.loading.data import input_files, open_splits
from auditor.report.results import Report, overall_status
from auditor.runner import run_checks
from auditor.core.suites import load_checks


def run_audit(cfg: AuditConfig, *, frames: dict[str, Any] | None = None,
              suite: str | None = None, progress: bool = False, hash_mode: str = "full",
              baseline: str | Path | dict[str, Any] | None = None, spark: Any = None,
              history: Any = None) -> Report:
    """Build the suite's checks (fails fast on config errors), load the data, run, grade the
    drift against the ``history`` ledger's last runs (:mod:`auditor.signoff.own_history`),
    apply the config's waivers, record provenance (``inputs`` hashed with ``hash_mode``,
    ``config``, ``versions``) and, with a ``baseline`` report (path or dict), mark what
    changed."""
    from auditor.signoff.provenance import (HASH_MODES, BackgroundHashes, describe_inputs,
                                            resolved_config, versions)
    from auditor.signoff.waivers import apply_waivers

    if hash_mode not in HASH_MODES:
        from auditor.errors import ConfigError
        raise ConfigError(f"hash must be one of {', '.join(HASH_MODES)}; got {hash_mode!r}")
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    base_doc, base_source = None, None
    if baseline is not None:  # read before the run: an unusable baseline is a usage error
        from auditor.report.results import read_report

        base_doc = baseline if isinstance(baseline, dict) else read_report(baseline)
        base_source = "<dict>" if isinstance(baseline, dict) else str(Path(baseline).resolve())
    unused: list[str] = []  # thresholds of checks the suite does not run: a note, not an error
    checks = load_checks(suite or cfg.suite, cfg.thresholds, notes=unused)
    if cfg.engine == "spark":  # splits stay Spark DataFrames (auditor.engines)
        from auditor.engines.spark_io import open_spark_splits
        data: Any = open_spark_splits(cfg, frames, spark=spark)
        inputs = data.describe_inputs()
    else:
        # hashed while loading, not after the checks (minutes later): the recorded hashes
        # describe the bytes that were read, even if a pipeline rewrites a file during the run
        hashes = BackgroundHashes(input_files(cfg, frames).values(), hash_mode)
        try:
            data = open_splits(cfg, frames)
        except BaseException:  # refused input: stop reading the files for nothing
            hashes.cancel()
            raise
        inputs = describe_inputs(data, hash_mode, hashes)
    data.declared_split = cfg.split
    try:
        # the split design, measured once before the checks (they read the engine's cache)
        design = split_design(engine_of(data), data.roles)
        results = run_checks(checks, data, progress=progress)
        from auditor.clean_subsets import write_clean_subsets

        write_clean_subsets(results, data)  # side effects after every check, never in one
    finally:
        if cfg.engine == "spark":
            data.engine.close()
    history_note = None
    if history is not None:  # before the waivers: a waiver still covers a lowered finding
        from auditor.signoff.own_history import grade_against_history, history_from

        history_note = grade_against_history(results, *history_from(history))
    waived = apply_waivers(results, list(cfg.waivers))
    if waived is not None:
        results.append(waived)
    config = resolved_config(cfg, checks)
    if suite:
        config["suite"] = suite
    tokenizer = None
    if cfg.tokens is not None:  # the tokenizer as audited: golden ids for auditor verify
        from auditor.loading.tokenizers import load_tokenizer
        from auditor.signoff.tokenizer_record import tokenizer_record

        spec = cfg.tokens.tokenizer
        try:
            tokenizer = tokenizer_record(spec, data.cached(("tokens.tokenizer", spec),
                                                           lambda: load_tokenizer(spec)))
        except Exception as err:  # the audit stands; only verify's tokenizer check is lost
            data.notes.append(f"the tokenizer could not be recorded for auditor verify "
                              f"({type(err).__name__}: {str(err)[:200]})")
    benchmarks = {b.name: {"path": b.path, "sha256": b.sha256, "problems": len(b.ids),
                           "fields": list(b.fields)}
                  for b in getattr(data, "benchmarks", ())} or None  # for auditor verify
    report = Report(status=overall_status(results),
                    started_at=started.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    duration_s=0.0, seed=cfg.seed,
                    datasets=data.info(), checks=results, tool_version=__version__,
                    notes=[*data.notes, *unused, *([history_note] if history_note else [])],
                    inputs=inputs,
                    config=config, versions=versions(),
                    split_design=design.to_dict(), tokenizer=tokenizer,
                    benchmarks=benchmarks)
    if base_doc is not None:
        from auditor.signoff.baseline import mark_changes

        mark_changes(report, base_doc, base_source or "")
    report.duration_s = round(time.perf_counter() - t0, 3)
    return report


def _name(v: Any) -> Any:
    """A column name given as a pandas label (int, tuple) as polars names it: ``str(v)``."""
    return str(v) if isinstance(v, (int, tuple)) and not isinstance(v, bool) else v


def _names(v: Any) -> Any:
    """Column names (a list or tuple of them, or one name) as :func:`_name` spells each."""
    return [_name(x) for x in v] if isinstance(v, (list, tuple)) else _name(v)


def audit(*, train: Any = None, test: Any = None, val: Any = None,
          splits: dict[str, Any] | None = None, label: str | None = None,
          time: str | None = None, groups: list[str] | str | None = None,
          ids: list[str] | str | None = None, text: list[str] | str | None = None,
          exclude: list[str] | str | None = None, tokens: dict[str, Any] | None = None,
          reference: Any = None, suite: str = "default",
          thresholds: dict[str, dict[str, Any]] | None = None, seed: int = 0,
          progress: bool = False, waivers: list[dict[str, Any]] | None = None,
          hash: str = "full", baseline: str | Path | dict[str, Any] | None = None,
          ledger: str | Path | None = None, expectations: str | Path | None = None,
          engine: str | None = None, spark: Any = None, split: str | None = None,
          csv: dict[str, Any] | None = None,
          benchmarks: dict[str, str | Path | dict[str, Any]] | None = None) -> Report:
    """Audit splits given as polars/pandas DataFrames or file paths.

    ``splits`` (an ordered mapping name -> frame) replaces ``train``/``val``/``test`` when you
    have other split names; a Hugging Face ``DatasetDict`` is such a mapping, and a
    ``datasets.Dataset`` is a frame (read through Arrow, see ``auditor.loading.hf``);
    ``expectations`` is a Great Expectations suite JSON run by ``schema.expectations``. Column
    roles, thresholds and ``waivers`` (a list of
    ``{check, subject, splits?, metric?, reason, owner, expires}``) mean the same as in
    audit.yaml. ``hash`` is the provenance hash mode (``full`` or ``fast``), ``baseline`` a
    previous report (path or dict) to mark findings new/persisting/resolved against, and
    ``ledger`` a SQLite path or SQLAlchemy URL the run is appended to. ``engine="spark"``
    measures on Apache Spark (splits may then be Spark DataFrames, paths Spark reads or
    ``table:NAME``); ``spark`` is the SparkSession to use (default: the active one). Without
    ``engine``, Spark DataFrames among the splits select the spark engine, else polars.
    ``csv`` (``{"delimiter": ";", "decimal": ","}``) says how CSV split files are written.
    ``benchmarks`` names public evaluation sets looked for in the corpus by
    ``tokens.benchmarks`` (``{"humaneval": "HumanEval.jsonl.gz"}``, or per name
    ``{"path": ..., "text": [fields], "id": field}``, as ``benchmarks:`` in audit.yaml).
    ``split`` declares how the splits were made (``random``, ``stratified``, ``group``,
    ``time``, ``published``, ``unknown``; as ``split:`` in audit.yaml): inferred when None.
    """
    given = splits if splits is not None else {
        k: v for k, v in (("train", train), ("val", val), ("test", test)) if v is not None}
    in_memory = {k: v for k, v in given.items() if not isinstance(v, (str, Path))}
    if engine is None:
        engine = "spark" if any(type(v).__module__.startswith("pyspark.sql")
                                for v in in_memory.values()) else "polars"
    raw: dict[str, Any] = {
        "datasets": {k: (str(v) if isinstance(v, (str, Path)) else f"<in-memory {k}>")
                     for k, v in given.items()},
        # validated by parse_config (a wrong type is a ConfigError); pandas column labels such
        # as 4 or ("a", "y") are named str(label) once converted, so they are accepted as such
        "columns": {"label": _name(label), "time": _name(time),
                    "groups": _names(groups) or [], "ids": _names(ids) or [],
                    "text": _names(text) or [], "exclude": _names(exclude) or []},
        "suite": suite, "seed": seed, "thresholds": thresholds or {},
        "waivers": [dict(w) for w in waivers or []],
        "engine": engine, "split": split,
    }
    if tokens is not None:
        raw["tokens"] = Tokens.model_validate(tokens).model_dump()
    if csv is not None:  # {delimiter, decimal} of split files given as CSV paths
        raw["csv"] = dict(csv)
    if expectations is not None:
        raw["expectations"] = str(expectations)
    if benchmarks is not None:
        raw["benchmarks"] = {k: str(v) if isinstance(v, (str, Path)) else dict(v)
                             for k, v in benchmarks.items()}
    if reference is not None:
        if isinstance(reference, (str, Path)):
            raw["reference"] = str(reference)
        else:
            in_memory["reference"] = reference
    cfg = parse_config(raw, base_dir=Path.cwd(), source="audit()")
    if ledger is not None:
        from auditor.signoff.ledger import Ledger

        store = Ledger(str(ledger))  # opened (and created) before the run: fail fast
    report = run_audit(cfg, frames=in_memory, progress=progress, hash_mode=hash,
                       baseline=baseline, spark=spark,
                       history=store if ledger is not None else None)
    if ledger is not None:
        store.append(report.to_dict(), report_path=None)
    return report


def scan_report(paths: list[Path], extra_fitters: Sequence[str] = ()) -> Report:
    """A complete Report (one ``leakage.preprocessing`` check) for ``auditor scan-code``: the
    static scan of :mod:`auditor.codescan` judged as the check in
    :mod:`auditor.detectors.preprocessing`."""
    from auditor.core.checks import describe
    from auditor.detectors.preprocessing import PreprocessingFit
    from auditor.codescan import expand_paths, load_source, scan_source
    from auditor.report.results import (CheckResult, Finding, Severity, overall_status,
                                        status_from_findings, summarize)
    from auditor.codescan.vocabulary import CHECK_ID

    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    files = expand_paths(paths)
    findings: list[Finding] = []
    notes = []
    lines = 0
    for p in files:
        src = load_source(p)
        lines += len(src.text.splitlines())
        findings += scan_source(src, extra_fitters)
        notes += [f"{p}: {n}" for n in src.notes]
    if not any(f.severity != Severity.INFO for f in findings):
        findings.append(Finding(
            severity=Severity.INFO, metric="files_scanned", value=float(len(files)),
            count=len(files),
            message=f"0 of {len(files)} file{'s' * (len(files) != 1)} ({lines:,} lines) fit a "
                    "transformer before the split, on test data, reuse the test set for "
                    "model selection, or score a model on rows it was trained on."))
    check = PreprocessingFit(extra_fitters=tuple(extra_fitters))
    duration = round(time.perf_counter() - t0, 4)
    result = CheckResult(id=CHECK_ID, title=PreprocessingFit.title,
                         status=status_from_findings(findings), duration_s=duration,
                         summary=summarize(findings), findings=findings,
                         description=describe(check),
                         params={"extra_fitters": list(extra_fitters)})
    shown = ", ".join(p.name for p in files[:5])
    more = f" and {len(files) - 5} more" if len(files) > 5 else ""
    notes.insert(0, f"Static scan of {len(files)} file{'s' * (len(files) != 1)} "
                    f"({lines:,} lines of code, nothing executed): {shown}{more}.")
    return Report(status=overall_status([result]),
                  started_at=started.strftime("%Y-%m-%dT%H:%M:%SZ"), duration_s=duration,
                  seed=0, datasets={}, checks=[result], tool_version=__version__, notes=notes)
