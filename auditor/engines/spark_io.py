"""Splits read by Spark: Parquet files or folders, CSV, JSON Lines, ``table:NAME`` catalog
tables, or Spark DataFrames given to the Python API; and :class:`SparkAuditData`, the Spark
counterpart of :class:`~auditor.loading.data.AuditData` (column roles, kinds, features, an engine).

Nothing here collects rows: the splits stay Spark DataFrames; the driver holds schemas, row
counts and whatever the checks' engine operations return.
"""
from __future__ import annotations

import os
import re
import sys
from functools import cached_property
from pathlib import Path
from typing import Any

from auditor.core.config import AuditConfig, Columns, CsvFormat, Tokens
from auditor.core.roles import (ColumnType, Kind, LabelKind, harmonise_types, label_kind_of,
                                resolve_features)
from auditor.core.splits import LoadedSplits, TokenType, check_declared_columns, check_token_types
from auditor.engines import NOT_ON_SPARK
from auditor.engines.spark_columns import col as column, unioned
from auditor.loading.data import to_polars, with_config
from auditor.errors import ConfigError, InputError

TABLE_PREFIX = "table:"
PARQUET = (".parquet", ".pq")
CSV = (".csv", ".csv.gz", ".tsv")
JSONL = (".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz", ".json.gz")


def local_cores(master: str | None) -> int | None:
    """Cores of a local master (``local`` 1, ``local[N]`` / ``local[N,F]`` N, ``local[*]`` the
    machine's); None for a cluster master (spark://, yarn, k8s://)."""
    text = (master or "local[*]").strip()
    if text == "local":
        return 1
    found = re.fullmatch(r"local\[(\*|\d+)(?:,\s*\d+)?\]", text)
    if found is None:
        return None
    return (os.cpu_count() or 1) if found.group(1) == "*" else max(int(found.group(1)), 1)


def session_defaults(master: str | None) -> dict[str, str]:
    """Settings the auditor starts Spark with unless ``conf`` names them.

    - ``spark.sql.adaptive.enabled`` (and partition coalescing): shuffles of small count
      tables collapse to a few partitions instead of 200 near-empty tasks.
    - ``spark.sql.shuffle.partitions``: 4 x cores for a local master (a local run is a few
      cores: 200 partitions cost more scheduling than work); cluster masters keep Spark's
      default and rely on AQE.
    - ``spark.sql.execution.arrow.pyspark.enabled``: the driver-side samples and small result
      tables travel as Arrow batches.
    - ``spark.driver.memory`` 2g for a local master (driver and executors share that JVM;
      the auditor's driver holds aggregates only, and a split that does not fit in memory
      spills to local disk). With 1g the JVM died at 1M bench rows while generating
      code for an aggregate (a heap-exhaustion stack; no kernel OOM kill), so 2g.
    """
    out = {"spark.sql.adaptive.enabled": "true",
           "spark.sql.adaptive.coalescePartitions.enabled": "true",
           "spark.sql.execution.arrow.pyspark.enabled": "true",
           "spark.sql.execution.arrow.pyspark.fallback.enabled": "true",
           "spark.ui.showConsoleProgress": "false"}
    cores = local_cores(master)
    if cores is not None:
        out["spark.sql.shuffle.partitions"] = str(4 * cores)
        out["spark.default.parallelism"] = str(2 * cores)
        out["spark.driver.memory"] = "2g"
    return out


def spark_session(master: str | None = None, conf: dict[str, str] | None = None) -> Any:
    """The active SparkSession, or a new one on ``master`` (default ``local[*]``) with
    :func:`session_defaults` overridden by ``conf`` (``spark.*`` keys passed through)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise ConfigError("engine spark needs pyspark (pip install 'auditor[spark]') and a Java "
                          "17 runtime") from None
    active = SparkSession.getActiveSession()
    if active is not None and master is None and not conf:
        return active
    builder = SparkSession.builder.appName("auditor").master(master or "local[*]")
    if (master or "local").startswith("local"):
        # local Python workers run this interpreter, and so see its packages (polars, ...)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    for key, value in {**session_defaults(master), **(conf or {})}.items():
        builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as err:  # no Java, a bad master URL: one line, exit 2
        raise ConfigError(f"cannot start Spark on {master or 'local[*]'}: "
                          f"{str(err).strip().splitlines()[0][:300]}") from None


def parse_conf(items: list[str] | None) -> dict[str, str]:
    """``KEY=VALUE`` strings (``--spark-conf``) as a dict; anything else is a ConfigError."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--spark-conf expects KEY=VALUE (e.g. spark.executor.memory=4g); "
                              f"got {item!r}")
        out[key.strip()] = value
    return out


def read_split(spark: Any, spec: str | Path, name: str, csv: Any = None) -> Any:
    """A split as a Spark DataFrame: ``table:NAME`` from the catalog, a folder of Parquet
    files, or a Parquet / CSV (header row, types inferred, ``csv``'s delimiter; Spark's
    reader has no decimal comma, so ``decimal: ','`` is refused) / JSON Lines file."""
    text = str(spec)
    if text.startswith(TABLE_PREFIX):
        table = text[len(TABLE_PREFIX):]
        try:
            return spark.table(table)
        except Exception as err:
            raise InputError(f"{name}: table {table!r} not found in the Spark catalog "
                             f"({str(err).strip().splitlines()[0][:200]})") from None
    path = Path(text)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder (split {name})")
    lower = path.name.lower()
    csv = csv or CsvFormat()
    if lower.endswith(CSV) and csv.decimal == ",":
        raise InputError(f"{path}: the spark engine's CSV reader has no decimal comma "
                         "(csv: decimal ','): convert the file to Parquet, or audit it with "
                         "engine: polars")
    try:
        if path.is_dir() or lower.endswith(PARQUET):
            return spark.read.parquet(str(path))
        if lower.endswith(CSV):
            return spark.read.csv(str(path), header=True, inferSchema=True,
                                  sep=csv.separator(path))
        if lower.endswith(JSONL):
            return spark.read.json(str(path))
    except Exception as err:
        raise InputError(f"{path}: Spark cannot read it as "
                         f"{'Parquet' if path.is_dir() else path.suffix[1:]} "
                         f"({str(err).strip().splitlines()[0][:200]})") from None
    raise InputError(f"{path}: unknown format for the spark engine; expected a Parquet file or "
                     "folder, .csv, .jsonl/.json (optionally .gz), or table:NAME")


def _spark_type_of(target: ColumnType) -> Any:
    """The Spark type a column of several compatible types is cast to."""
    from pyspark.sql import types as T

    return {ColumnType.INTEGER: T.LongType(), ColumnType.FLOAT: T.DoubleType(),
            ColumnType.BOOLEAN: T.BooleanType(), ColumnType.STRING: T.StringType(),
            ColumnType.DATE: T.DateType(), ColumnType.DATETIME: T.TimestampNTZType(),
            ColumnType.DATETIME_TZ: T.TimestampType(),
            ColumnType.DECIMAL: T.DoubleType(), ColumnType.DURATION: T.DoubleType()}[target]


def spark_type(data_type: Any) -> ColumnType:
    """A Spark type in the engine-free words of :class:`~auditor.core.roles.ColumnType` (as
    :func:`auditor.loading.data.type_of` for polars)."""
    from pyspark.sql import types as T

    for types, name in (((T.NullType,), ColumnType.NULL), ((T.BooleanType,), ColumnType.BOOLEAN),
                        ((T.IntegralType,), ColumnType.INTEGER),
                        ((T.FloatType, T.DoubleType), ColumnType.FLOAT),
                        ((T.DecimalType,), ColumnType.DECIMAL),
                        ((T.StringType,), ColumnType.STRING), ((T.DateType,), ColumnType.DATE),
                        ((T.TimestampNTZType,), ColumnType.DATETIME),
                        ((T.TimestampType,), ColumnType.DATETIME_TZ),
                        ((T.DayTimeIntervalType,), ColumnType.DURATION),
                        ((T.ArrayType, T.StructType, T.MapType), ColumnType.NESTED)):
        if isinstance(data_type, types):
            return name
    return ColumnType.OTHER


class SparkAuditData(LoadedSplits):
    """The splits as Spark DataFrames with their roles; measuring goes through ``engine``
    (every check's ``measure`` asks its operations; a plugin with only ``run(data)`` is
    skipped with the reason "not yet implemented on the spark engine")."""

    engine_name = "spark"

    def __init__(self, splits: dict[str, Any], *, columns: Columns, tokens: Tokens | None = None,
                 paths: dict[str, str | None] | None = None, seed: int = 0,
                 sample_rows: int = 50_000) -> None:
        from auditor.engines.spark_engine import SparkEngine

        if len(splits) == 0:
            raise ConfigError("at least one split is required")
        super().__init__(splits, columns=columns, tokens=tokens, paths=paths, seed=seed)
        self.sample_rows = sample_rows
        self.notes = [
            "Measured on the spark engine: checks without a Spark implementation are skipped "
            "(\"not yet implemented on the spark engine\"); model probes ran on a seeded "
            "driver-side sample whose size their findings state."]
        self.engine = SparkEngine(splits, seed=seed)
        self.engine.driver = self.driver_sample
        fold = next(iter(splits.values())).sparkSession.conf.get(
            "spark.sql.caseSensitive", "false").strip().lower() != "true"
        check_declared_columns({n: df.columns for n, df in splits.items()}, columns, tokens,
                               self.paths, fold_case=fold)
        self.kinds, self.features = self._resolve()

    def driver_sample(self) -> Any:
        """The seeded driver-side sample of every split, stratified by the label, at most
        ``sample_rows`` rows per split, as polars :class:`~auditor.loading.data.AuditData` with
        the run's roles (the token and raw-text columns of a ``tokens:`` section are not
        features, as on polars); collected once per run."""
        from auditor.loading.data import build_audit_data

        def collect() -> Any:
            frames = {s: self.engine.stratified_sample(s, self.sample_rows, by=self.label,
                                                       seed=self.seed)
                      for s in self.split_names}
            return build_audit_data(frames, columns=self.columns, tokens=self.tokens,
                                    seed=self.seed)

        return self.cached(("spark.driver_sample", self.sample_rows), collect)

    # -- structure (as AuditData) --------------------------------------------------------------
    def rows(self, split: str) -> int:
        return self.engine.rows(split)

    def first_schema(self) -> dict[str, tuple[ColumnType, str]]:
        return {f.name: (spark_type(f.dataType), f.dataType.simpleString())
                for f in next(iter(self.splits.values())).schema.fields}

    def info(self) -> dict[str, dict[str, Any]]:
        rows = self.split_rows()
        return {n: {"path": self.paths.get(n), "rows": rows[n], "columns": len(df.columns)}
                for n, df in self.splits.items()}

    def describe_inputs(self) -> dict[str, dict[str, Any]]:
        """``inputs`` of report.json: path, rows, schema (no content hash: a Spark input may be
        a table or a folder of any size)."""
        rows = self.split_rows()  # with the label's aggregate: one job
        return {n: {"path": self.paths.get(n), "bytes": None, "hash": None, "hash_mode": None,
                    "rows": rows[n],
                    "schema": {f.name: f.dataType.simpleString() for f in df.schema.fields}}
                for n, df in self.splits.items()}

    @cached_property
    def unlabelled(self) -> tuple[str, ...]:  # type: ignore[override]
        """The splits whose label is missing (null, or NaN) in every row (counted in the label
        kind's aggregate, :meth:`_label_summary`)."""
        summary = self._label_summary()
        if summary is None:
            return ()
        rows = self.engine.split_rows()
        return tuple(n for n in self.splits if not summary["labelled"][n] and rows[n])

    def _detect_label_kind(self) -> LabelKind | None:
        """As :meth:`auditor.loading.data.AuditData.label_kind`, from :meth:`_label_summary`."""
        summary = self._label_summary()
        if summary is None:
            return None
        return label_kind_of(summary["distinct"],
                             numeric=self.kinds.get(self.label) == Kind.NUMERIC,
                             fractional=bool(summary["frac"]))

    def _label_summary(self) -> dict[str, Any] | None:
        """One aggregate over the splits' label values (null and NaN left out): distinct
        values, values with a fraction (floats), labelled rows per split, and every split's
        rows (handed to the engine: the loader needs no other job to count them); None without
        a label. Kept for the run."""
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        y = self.label
        if not y:
            return None

        def measure() -> dict[str, Any]:
            names = list(self.splits)
            union = unioned(df.select(F.lit(i).alias("_s"), column(y).alias("_y"))
                            for i, df in enumerate(self.splits.values()))
            col = F.col("_y")
            is_float = isinstance(union.schema["_y"].dataType,
                                  (T.FloatType, T.DoubleType, T.DecimalType))
            valued = col.isNotNull() & (~F.isnan(col) if is_float else F.lit(True))
            aggs = [F.count_distinct(F.when(valued, col)).alias("n"),
                    *[F.sum(F.when(valued & (F.col("_s") == i), 1).otherwise(0)).alias(f"r{i}")
                      for i in range(len(names))],
                    *[F.sum(F.when(F.col("_s") == i, 1).otherwise(0)).alias(f"a{i}")
                      for i in range(len(names))]]
            if is_float:
                aggs.append(F.sum(F.when(valued & (col != F.round(col, 0)), 1).otherwise(0))
                            .alias("frac"))
            row = union.agg(*aggs).collect()[0]
            self.engine.counted({n: int(row[f"a{i}"] or 0) for i, n in enumerate(names)})
            return {"distinct": int(row["n"]),
                    "frac": row["frac"] if is_float else 0,
                    "labelled": {n: int(row[f"r{i}"] or 0) for i, n in enumerate(names)}}
        summary: dict[str, Any] = self.cached(("spark.label_summary", y), measure)
        return summary

    def split_rows(self) -> dict[str, int]:
        """Counted with the label's aggregate when there is a label (one job for both)."""
        self._label_summary()
        return self.engine.split_rows()

    # -- loading -------------------------------------------------------------------------------
    def _resolve(self) -> tuple[dict[str, Kind], list[str]]:
        """Kinds and features by the polars loader's rule (:func:`auditor.core.roles.
        harmonise_types`, :func:`~auditor.core.roles.resolve_features`) in Spark's types: a
        column with no value in a split is read as null there (:meth:`_all_null`), each
        compared column cast to one type across splits (Spark's type names in the issues)."""
        fields = {n: {f.name: f.dataType for f in df.schema.fields}
                  for n, df in self.splits.items()}
        token_cols = set(self.tokens.columns()) if self.tokens else set()
        empty = self._all_null(fields, token_cols)
        types = {n: {c: ColumnType.NULL if (n, c) in empty else spark_type(t)
                     for c, t in f.items()} for n, f in fields.items()}
        got = harmonise_types(
            types,
            {n: {c: "void" if (n, c) in empty else t.simpleString() for c, t in f.items()}
             for n, f in fields.items()},
            token_cols=token_cols, paths=self.paths,
            target_name=lambda t: _spark_type_of(t).simpleString())
        self.schema_issues += got.issues
        to = {c: next(fields[m][c] for m in fields if types[m][c] != ColumnType.NULL)
              if shared else _spark_type_of(target) for c, (target, shared) in got.targets.items()}
        for n, f in fields.items():
            todo = {c: column(c).cast(t) for c, t in to.items() if f[c] != t}
            if todo:
                self.splits[n] = self.splits[n].withColumns(todo)
        first = fields[next(iter(fields))]
        features = resolve_features(list(first), got.kinds,
                                    {c: t.simpleString() for c, t in first.items()},
                                    self.columns, self.tokens, self.schema_issues)
        return got.kinds, features

    def _all_null(self, fields: dict[str, dict[str, Any]], token_cols: set[str]
                  ) -> set[tuple[str, str]]:
        """(split, column) pairs of the columns whose type differs across splits that hold no
        value in that split: a file format may store such a column with any type (Parquet
        written from an all-null polars column reads as int), which says nothing about the
        column, as polars' ``Null`` type. One count per split, only when a type differs."""
        from pyspark.sql import functions as F

        names = list(fields)
        differ = [c for c in fields[names[0]] if c not in token_cols
                  and all(c in fields[n] for n in names)
                  and len({fields[n][c].simpleString() for n in names}) > 1]
        if not differ:
            return set()
        out = set()
        for n in names:
            row = self.splits[n].agg(*[F.count(column(c)).alias(f"c{i}")
                                       for i, c in enumerate(differ)]).collect()[0]
            out |= {(n, c) for i, c in enumerate(differ) if row[f"c{i}"] == 0}
        return out


def open_spark_splits(cfg: AuditConfig, frames: dict[str, Any] | None = None, *,
                      spark: Any = None) -> SparkAuditData:
    """Every split of ``cfg`` as a Spark DataFrame (``frames`` may hold Spark DataFrames, or
    polars/pandas frames that are handed to Spark through Arrow)."""
    frames = frames or {}
    if cfg.reference is not None or "reference" in frames:
        raise ConfigError("a reference dataset is " + NOT_ON_SPARK + "; run the scheduled "
                          "comparison with engine: polars, or give the reference as a split")
    if spark is None:
        given = next((f for f in frames.values() if _is_spark_frame(f)), None)
        spark = given.sparkSession if given is not None else spark_session(
            cfg.spark_master, cfg.spark_conf)
    splits: dict[str, Any] = {}
    paths: dict[str, str | None] = {}
    for name, spec in cfg.datasets.items():
        if name in frames:
            splits[name] = frames[name] if _is_spark_frame(frames[name]) else \
                spark.createDataFrame(to_polars(frames[name], name).to_arrow())
            paths[name] = None
        else:
            splits[name] = read_split(spark, spec, name, cfg.csv)
            paths[name] = str(spec)
    persisted = persist_splits(spark, splits, paths)
    data = SparkAuditData(splits, columns=cfg.columns, tokens=cfg.tokens, paths=paths,
                          seed=cfg.seed, sample_rows=cfg.spark_sample_rows)
    data.engine.persisted = persisted  # unpersisted by engine.close() at the end of the run
    if cfg.tokens is not None:  # token columns of the wrong type: input errors (exit 2)
        check_token_types({n: {f.name: (token_type(f.dataType), f.dataType.simpleString())
                               for f in df.schema.fields} for n, df in splits.items()},
                          cfg.tokens, paths)
    with_config(data, cfg)
    return data


PERSIST_CONF = "spark.auditor.persist"


def persist_splits(spark: Any, splits: dict[str, Any], paths: dict[str, str | None]) -> list[Any]:
    """Persist (memory and disk) the splits whose every pass would otherwise re-parse or
    re-compute them, and return the persisted frames (unpersisted when the run ends).

    ``spark.auditor.persist`` (``--spark-conf``): ``auto`` (default) persists CSV / JSON Lines
    files and frames handed over from Python (re-parsing text or re-serialising a local frame
    costs more than reading the cache), not Parquet files or catalog tables (a pass reads only
    the columns it needs from Parquet, while a cache spilled to disk is read back whole);
    ``all`` persists every split; ``none`` none. A Spark DataFrame the caller already cached
    is left as it is."""
    from pyspark import StorageLevel

    from auditor.engines.spark_engine import KEEP_CONF

    mode = (spark.conf.get(PERSIST_CONF, "auto") or "auto").strip().lower()
    if mode not in ("auto", "all", "none"):
        raise ConfigError(f"{PERSIST_CONF} must be auto, all or none; got {mode!r}")
    keep = (spark.conf.get(KEEP_CONF, "auto") or "auto").strip().lower()
    if keep not in ("auto", "memory", "disk"):  # read by SparkEngine._persisted
        raise ConfigError(f"{KEEP_CONF} must be auto, memory or disk; got {keep!r}")
    out = []
    for name, df in list(splits.items()):
        path = paths.get(name)
        columnar = path is not None and (path.startswith(TABLE_PREFIX) or Path(path).is_dir()
                                         or path.lower().endswith(PARQUET))
        if mode == "none" or (mode == "auto" and columnar) or df.storageLevel.useMemory \
                or df.storageLevel.useDisk:
            continue
        splits[name] = df.persist(StorageLevel.MEMORY_AND_DISK)
        out.append(splits[name])
    return out


def _is_spark_frame(obj: Any) -> bool:
    return type(obj).__module__.startswith("pyspark.sql") and hasattr(obj, "sparkSession")


def token_type(data_type: Any) -> TokenType:
    """A Spark type as the token checks see it (:func:`~auditor.core.splits.check_token_types`)."""
    from pyspark.sql import types as T

    inner = data_type.elementType if isinstance(data_type, T.ArrayType) else None
    if isinstance(data_type, T.NullType):
        return TokenType.NULL
    if isinstance(inner, (T.NumericType, T.BooleanType, T.NullType)):
        return TokenType.NUMBERS
    if isinstance(inner, T.StructType) and {"role", "content"} <= set(inner.fieldNames()):
        return TokenType.MESSAGES
    return TokenType.TEXT if isinstance(data_type, T.StringType) else TokenType.OTHER
