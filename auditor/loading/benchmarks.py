"""The public evaluation sets of ``benchmarks:`` read into memory, one problem per row:
its id and the text ``tokens.benchmarks`` looks for in the corpus.

A benchmark is small (HumanEval 164 problems, GSM8K 1,319, MMLU 14,042): it is read on the
driver and its hashes travel with the batch function to wherever the corpus is (polars
batches, Spark executors). Any reader error, a missing field or an empty file is one
InputError naming the file and the field (exit 2)."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import polars as pl

from auditor.core.config import Benchmark
from auditor.core.roles import BenchmarkSet
from auditor.errors import InputError

ID_FIELDS = ("task_id", "id", "question_id", "idx")  # the default id field, first present


def read_benchmarks(specs: Mapping[str, Benchmark]) -> tuple[BenchmarkSet, ...]:
    """Every benchmark of ``specs`` read (:func:`read_benchmark`), in declared order."""
    return tuple(read_benchmark(name, spec) for name, spec in specs.items())


def read_benchmark(name: str, spec: Benchmark) -> BenchmarkSet:
    """The problems of one benchmark file: the text of ``spec.text`` fields (default every
    String field but the id), ids from ``spec.id`` (default the first of :data:`ID_FIELDS`
    present, else the row number)."""
    from auditor.loading.data import read_table

    path = Path(spec.path)
    df = read_table(path)
    where = f"{path} (benchmark {name!r})"
    if df.height == 0:
        raise InputError(f"{where}: no problems (the file has no rows)")
    id_field = spec.id or next((f for f in ID_FIELDS if f in df.columns), None)
    if spec.id and spec.id not in df.columns:
        raise InputError(f"{where}: id field {spec.id!r} not found; fields: "
                         f"{', '.join(df.columns[:20])}")
    fields = list(spec.text) or [c for c, t in df.schema.items()
                                 if t == pl.String and c != id_field]
    missing = [f for f in fields if f not in df.columns]
    if missing:
        raise InputError(f"{where}: text field {missing[0]!r} not found; fields: "
                         f"{', '.join(df.columns[:20])}")
    if not fields:
        raise InputError(f"{where}: no text field (no String column besides the id); name "
                         "them with benchmarks: {" + name + ": {path: ..., text: [field]}}")
    bad = [f for f in fields if df.schema[f] != pl.String]
    if bad:
        raise InputError(f"{where}: text field {bad[0]!r} holds {df.schema[bad[0]]}, "
                         "expected text")
    texts = df.select(fields).rows()
    ids = (df[id_field].cast(pl.String).fill_null("") if id_field
           else pl.Series([str(i) for i in range(df.height)]))
    return BenchmarkSet(name, str(path), tuple(fields), tuple(ids.to_list()), tuple(texts),
                        _sha256(path))


def _sha256(path: Path) -> str:
    """SHA-256 of the file, or of a folder's files in name order (a benchmark is small)."""
    import hashlib

    digest = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]:
        digest.update(f.read_bytes())
    return digest.hexdigest()
