"""The public evaluation sets of ``benchmarks:`` read into memory, one problem per row:
its id and the text ``tokens.benchmarks`` looks for in the corpus.

A benchmark is small (HumanEval 164 problems, GSM8K 1,319, MMLU 14,042): it is read on the
driver and its hashes travel with the batch function to wherever the corpus is (polars
batches, Spark executors). Any reader error, a missing field or an empty file is one
InputError naming the file and the field (exit 2)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping

import polars as pl

from auditor.core.config import Benchmark
from auditor.core.roles import BenchmarkSet
from auditor.errors import InputError

ID_FIELDS = ("task_id", "id", "question_id", "idx")  # the default id field, first present


Reader = Callable[[Path], pl.DataFrame]


def read_benchmarks(specs: Mapping[str, Benchmark], read: Reader) -> tuple[BenchmarkSet, ...]:
    """Every benchmark of ``specs`` read (:func:`read_benchmark`), in declared order."""
    return tuple(read_benchmark(name, spec, read) for name, spec in specs.items())


def read_benchmark(name: str, spec: Benchmark, read: Reader) -> BenchmarkSet:
    """The problems of one benchmark file: the text of ``spec.text`` fields (default every
    String field but the id), ids from ``spec.id`` (which must be scalar, present and unique;
    default the first of :data:`ID_FIELDS` that is, else the row number)."""
    path = Path(spec.path)
    where = f"{path} (benchmark {name!r})"
    try:
        df = _read(path, read)
    except InputError as err:
        raise InputError(f"benchmark {name!r}: {err}") from None
    if df.height == 0:
        raise InputError(f"{where}: no problems (the file has no rows)")
    if spec.id and spec.id not in df.columns:
        raise InputError(f"{where}: id field {spec.id!r} not found; fields: "
                         f"{', '.join(df.columns[:20])}")
    id_field = spec.id or next((f for f in ID_FIELDS if f in df.columns
                                and _usable_ids(df[f])), None)
    if spec.id and not _usable_ids(df[spec.id]):
        col = df[spec.id]
        why = (f"holds {col.dtype}, expected text or integers" if col.dtype.is_nested()
               else "has missing values" if col.null_count() else "repeats values, e.g. "
               f"{col.filter(col.is_duplicated())[0]!r}")
        raise InputError(f"{where}: id field {spec.id!r} {why}: every problem needs its own "
                         "id (leave id: out to number the problems)")
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
    ids = (df[id_field].cast(pl.String) if id_field
           else pl.Series([str(i) for i in range(df.height)]))
    return BenchmarkSet(name, str(path), tuple(fields), tuple(ids.to_list()), tuple(texts),
                        benchmark_sha256(path))


def _read(path: Path, read: Reader) -> pl.DataFrame:
    """A benchmark file, or a folder of them (JSON Lines, CSV, Parquet, Arrow IPC; gzip or
    zstd) read in name order and stacked, fields matched by name."""
    if not path.is_dir():
        return read(path)
    files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(("_", "."))
                   and any(x in {".jsonl", ".json", ".ndjson", ".csv", ".tsv", ".parquet",
                                 ".arrow", ".ipc", ".feather"} for x in map(str.lower,
                                                                           p.suffixes)))
    if not files:
        raise InputError(f"{path}: no benchmark file in the folder (JSON Lines, CSV, Parquet "
                         "or Arrow IPC)")
    return pl.concat([read(f) for f in files], how="diagonal_relaxed")


def _usable_ids(col: pl.Series) -> bool:
    """A scalar column without missing or repeated values."""
    return not col.dtype.is_nested() and not col.null_count() and col.n_unique() == col.len()


def benchmark_sha256(path: Path) -> str:
    """SHA-256 of the file, or of a folder's files (each name and content) in name order (a
    benchmark is small)."""
    import hashlib

    digest = hashlib.sha256()
    if not path.is_dir():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(f.relative_to(path)).encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()
