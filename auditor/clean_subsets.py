"""The clean subsets a run writes after its checks (``--write-clean DIR``, or
``tokens.contamination``'s ``clean_dir``): each evaluation split without the rows a finding
names, next to the report and the CI outputs, never from inside a check.

A finding asks for one with :class:`~auditor.report.results.CleanSubset`; the engine holding
the data writes it (:meth:`~auditor.engines.operations.Operations.write_without`: polars one
Parquet file from the input file as stored, Spark a Parquet folder). Refused, with the reason
in the finding: a target that is an input of the audit (or inside an input folder), and splits
read as samples (a clean subset of a sample would lose rows).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from auditor.engines.selection import engine_of
from auditor.report.results import CheckResult, CleanSubset
from auditor.stats.numerics import fmt_count


def write_clean_subsets(results: list[CheckResult], data: Any) -> None:
    """Write every clean subset the findings of ``results`` ask for; each finding's message
    and ``evidence.clean_subset`` say what was written, or why not."""
    asked = [f for r in results for f in r.findings if f.clean is not None]
    if not asked:
        return
    engine = engine_of(data)
    inputs = {Path(p).resolve() for p in getattr(data, "paths", {}).values() if p}
    for f in asked:
        assert f.clean is not None
        note = _written(engine, f.clean, inputs, bool(getattr(data, "sampled", False)))
        f.message = f"{f.message}; {note}"
        f.evidence = {**f.evidence, "clean_subset": note}


def _written(engine: Any, clean: CleanSubset, inputs: set[Path], sampled: bool) -> str:
    folder = Path(clean.folder).expanduser()
    target = folder / f"{clean.split}.parquet"
    resolved = target.resolve()
    if sampled:
        return ("clean subset not written: the splits were read as samples (memory budget), "
                "and a clean subset of a sample would lose rows")
    if resolved in inputs or any(resolved.is_relative_to(p) for p in inputs if p.is_dir()):
        return f"clean subset not written: {target} is an input of this audit"
    total = engine.split_rows()[clean.split]
    try:
        kept = engine.write_without(clean.split, clean.rows, target, within=folder)
    except OSError as err:
        return f"clean subset not written to {target}: {err.strerror or err}"
    how = " (a Parquet folder written by Spark)" if engine.name == "spark" else ""
    return (f"wrote the {fmt_count(kept)} clean {clean.split} rows (of {fmt_count(total)}) "
            f"to {target}{how}")

