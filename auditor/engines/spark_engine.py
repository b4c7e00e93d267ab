"""The engine operations on Spark DataFrames, with DataFrame built-ins, and ``mapInArrow`` where
an operation runs a polars function given by a check (``value_counts``' ``shared_key``): the
executors need the same Python packages as the driver (polars, pyarrow, auditor).

What each operation costs on a cluster (n rows, k distinct keys, b bins):
- ``rows``: one count per split, kept.
- ``key_summaries``: per split and column one scan, one shuffle of the partial counts by key
  (size ~k), persisted; every total in one job, four numbers each to the driver.
- ``key_overlaps``: a sort-merge (or broadcast-hash, when one side is small) join of two
  splits' count tables per column and pair, every total in one job, and at most
  ``max_examples`` rows of a pair sharing keys to the driver (a top-k, no global sort).
- ``stratified_sample``: a seeded Bernoulli sample per partition, collected through Arrow:
  the only operation whose driver memory grows with its argument (``rows``), never with n.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import narwhals as nw
import numpy as np
import polars as pl

from auditor.core.roles import Kind
from auditor.engines import KeyOverlap, KeySummary
from auditor.errors import ConfigError, NotApplicable
from auditor.engines.spark_columns import (col, empty_polars, is_float, map_in_arrow, missing,
                                           plain, quoted, to_polars, unioned)
from auditor.engines.operations import (
    BatchFn, Buckets, ClassLevels, ClassRanks, Condition, CopySpec, DistinctValues, DriverData,
    Distribution, Examples, Exceeds, Expansion, FrameOps, Matches, Num, Range, RecordMatch,
    SortedValues, SuiteResults, Tally, ValueCounts, bucketed, conform, gx_results,
    summed_columns)
from auditor.engines import label_bins, label_levels, spark_sketch, spark_values
from auditor.stats.drift import Sample


# ---------------------------------------------------------------------------------------------
# The batched operations (auditor.engines.operations)
# ---------------------------------------------------------------------------------------------

def sql_literal(value: Any) -> str:
    """A number as a Spark SQL literal of its own type: ``12L`` (bigint), ``1.5D`` (double:
    a plain ``1.5`` would be a decimal), infinities and NaN by cast."""
    if isinstance(value, (bool, np.bool_, int, np.integer)):  # a bool compared as a number,
        return f"({int(value)}L)"  # as polars does
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        return f"CAST('{'NaN' if math.isnan(x) else ('Infinity' if x > 0 else '-Infinity')}'" \
               " AS DOUBLE)"
    return f"({x!r}D)"


def number(df: Any, spec: Num) -> str:
    """:class:`~auditor.engines.operations.Num` as Spark SQL text, the same numbers as the
    polars engine's: epoch microseconds (bigint) for dates and datetimes, double with NaN as
    null for anything else; plus the offset. Text, not ``Column`` objects: each ``Column``
    built costs a few round trips to the JVM (~0.3 ms each), which for a 200-condition tally
    was 40,000 round trips and 13 s of a 1 s query; the text is parsed in one."""
    from pyspark.sql import types as T

    dtype = df.schema[spec.column].dataType
    c = quoted(spec.column)
    if isinstance(dtype, T.DateType):
        expr = f"(CAST(unix_date({c}) AS BIGINT) * 86400000000L)"
    elif isinstance(dtype, T.TimestampNTZType):
        expr = f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', {c})"
    elif isinstance(dtype, T.TimestampType):
        expr = f"unix_micros({c})"
    else:
        x = f"CAST({c} AS DOUBLE)"
        expr = f"(CASE WHEN NOT isnan({x}) THEN {x} END)"
        return f"({expr} + {sql_literal(float(spec.offset))})" if spec.offset else expr
    return f"({expr} + {sql_literal(int(spec.offset))})" if spec.offset else expr


def condition(df: Any, cond: Condition) -> tuple[str, str, str]:
    """(rows meeting it, rows with every operand, the compared quantity) as Spark SQL text."""
    v = number(df, cond.value)
    if isinstance(cond, Exceeds):
        o = number(df, cond.other)
        return (f"coalesce({v} > {o}, false)", f"({v} IS NOT NULL AND {o} IS NOT NULL)",
                f"({v} - {o})")
    hit = [f"{v} IS NOT NULL"]
    if cond.lo is not None:
        hit.append(f"{v} >= {sql_literal(cond.lo)}")
    if cond.hi is not None:
        hit.append(f"{v} < {sql_literal(cond.hi)}")
    return f"coalesce({' AND '.join(hit)}, false)", f"({v} IS NOT NULL)", v


def _bucket_sql(v: str, bounds: Sequence[int | float], lo: int, hi: int) -> str:
    """The number of ``bounds[lo:hi]`` at most ``v``, plus ``lo``: a binary search written as
    nested CASE (about log2(len(bounds)) comparisons a row)."""
    if lo == hi:
        return str(lo)
    mid = (lo + hi) // 2
    return (f"CASE WHEN {v} < {sql_literal(bounds[mid])} THEN {_bucket_sql(v, bounds, lo, mid)}"
            f" ELSE {_bucket_sql(v, bounds, mid + 1, hi)} END")


def _buckets(df: Any, g: Buckets) -> Any:
    """The query of (bucket, rows, smallest, largest value) of each bucket of ``g`` holding
    rows: one group-by of the rows holding a value by their bucket."""
    from pyspark.sql import functions as F

    return (df.selectExpr(f"{number(df, g.value)} AS _v").where("_v IS NOT NULL")
            .selectExpr(f"{_bucket_sql('_v', g.bounds, 0, len(g.bounds))} AS _b", "_v")
            .groupBy("_b").agg(F.count(F.lit(1)).alias("n"), F.min("_v").alias("lo"),
                               F.max("_v").alias("hi")))


def _aggregate(df: Any, exprs: Mapping[str, str]) -> Any:
    """One global aggregation of SQL aggregate ``exprs`` (name -> text) as the struct ``_r``
    of a one-row DataFrame: one ``named_struct`` expression, so that building the query is one
    call to the JVM whatever the number of aggregates (a list of them costs one per item)."""
    fields = ", ".join(f"'{k}', {e}" for k, e in exprs.items())
    return df.selectExpr(f"named_struct({fields}) AS _r")


_UNION_CHUNK = 64  # queries collected per job (a plan of thousands is slow to plan)


def _gathered(queries: Sequence[Any]) -> list[list[Any]]:
    """The rows of each query, the queries of one schema collected :data:`_UNION_CHUNK` per
    job (a tagged union, built as a balanced tree: each ``unionByName`` is analysed whole);
    queries of other schemas are never unioned, so no value is widened to another type."""
    from pyspark.sql import functions as F

    out: list[list[Any]] = [[] for _ in queries]
    by_schema: dict[str, list[int]] = {}
    for i, q in enumerate(queries):
        by_schema.setdefault(q.schema.simpleString(), []).append(i)
    for same in by_schema.values():
        for start in range(0, len(same), _UNION_CHUNK):
            chunk = same[start:start + _UNION_CHUNK]
            level = [queries[i].withColumn("_i", F.lit(i)) for i in chunk]
            while len(level) > 1:
                odd = level[-1:] if len(level) % 2 else []
                level = [a.unionByName(b) for a, b in zip(level[::2], level[1::2])] + odd
            for r in level[0].collect():
                out[int(r["_i"])].append(r)
    return out


def _collected(rows: Sequence[Any]) -> list[Any]:
    """The single row of each one-row aggregate, in few jobs (:func:`_gathered`)."""
    return [got[0] for got in _gathered(rows)]


def _plain_number(value: Any) -> Any:
    """A value collected from Spark as the polars engine gives it (Decimal -> float)."""
    from decimal import Decimal

    return float(value) if isinstance(value, Decimal) else value


def _key_batches(shared_key: Callable[[pl.Expr], pl.Expr]) -> Callable[[Any], Any]:
    """The ``mapInArrow`` function adding ``_key = shared_key(value)`` to Arrow batches holding
    a ``value`` column: the polars expression runs on the executors, batch by batch."""
    def run(batches: Any) -> Any:
        for batch in batches:
            frame = pl.from_arrow(batch)
            assert isinstance(frame, pl.DataFrame)
            keyed = frame.with_columns(
                pl.col("value").cast(pl.String),
                shared_key(pl.col("value").cast(pl.String)).alias("_key"))
            yield from keyed.to_arrow().to_batches()
    return run


_SPARK_TYPES = {pl.Int64: "long", pl.Int32: "int", pl.Float64: "double", pl.Boolean: "boolean",
                pl.String: "string"}


def spark_type(dtype: Any) -> str:
    """The Spark DDL type of a polars type a ``map_batches`` function may return."""
    if isinstance(dtype, pl.List):
        return f"array<{spark_type(dtype.inner)}>"
    for polars_type, name in _SPARK_TYPES.items():
        if dtype == polars_type:
            return name
    raise TypeError(f"map_batches: no Spark type for {dtype}")


_PARTITION = "__auditor_partition"


def _batch_mapped(df: Any, columns: Sequence[str], fn: BatchFn, schema: dict[str, Any],
                  ddl: str, offsets: dict[int, int]) -> Any:
    """``fn`` on each Arrow batch of ``df``'s ``columns`` (``mapInArrow``, output ``ddl``),
    with the stored number of the batch's first row: its partition's offset plus the rows
    before. The partition's index is read as a column (:data:`_PARTITION`,
    ``spark_partition_id``, evaluated where the rows are read: a ``mapInArrow`` inside a union
    runs in a task whose ``TaskContext.partitionId`` is the union's partition, not the
    split's)."""
    from pyspark.sql import functions as F

    def run(batches: Any) -> Any:
        import pyarrow as pa

        at: int | None = None
        for batch in batches:
            n = batch.num_rows
            if not n:
                continue
            if at is None:
                at = offsets.get(int(batch.column(batch.num_columns - 1)[0].as_py()), 0)
            frame = pl.from_arrow(pa.RecordBatch.from_arrays(batch.columns[:-1],
                                                              names=batch.schema.names[:-1]))
            assert isinstance(frame, pl.DataFrame)
            out = conform(fn(frame, at), schema)
            at += n
            if out.height:
                yield from _spark_arrow(out.to_arrow()).to_batches()

    numbered = df.select(*[col(c) for c in columns], F.spark_partition_id().alias(_PARTITION))
    return map_in_arrow(numbered, run, ddl)


def _spark_arrow(table: Any) -> Any:
    """An Arrow table from polars with its large lists as lists (Spark reads no LargeList;
    large strings it reads)."""
    import pyarrow as pa

    def small(t: Any) -> Any:
        return pa.list_(small(t.value_type)) if pa.types.is_large_list(t) else t

    target = pa.schema([pa.field(f.name, small(f.type)) for f in table.schema])
    return table if target == table.schema else table.cast(target)


# values one operation may bring to the driver ((split, value) counts, or a column's values);
# beyond it the operation raises NotApplicable with the count (the check is skipped, the driver
# never runs out of memory). The polars engine has no such budget: its data is in memory.
DRIVER_VALUES = 2_000_000


# rows of all splits beyond which the tables a run keeps are persisted on local disk only
# (SparkEngine._persisted; spark.auditor.keep)
KEEP_IN_MEMORY_ROWS = 20_000_000
# beyond this many rows in all, every release also collects garbage (Python's, then the JVM's),
# so that Spark deletes the shuffle files of the finished check's stages
COLLECT_ABOVE_ROWS = 1_000_000
KEEP_CONF = "spark.auditor.keep"

# numeric values numeric_distributions collects and sorts exactly; more are sketched
NUMERIC_VALUES = 2_000_000


def _row_numbered(df: Any, offsets: dict[int, int], name: str) -> Any:
    """``df`` with the stored row number (the partition's offset plus the row's place in it)
    in front of its columns, as column ``name`` (``mapInArrow``)."""
    from pyspark.sql import types as T

    def per_batch(batches: Any) -> Any:
        import pyarrow as pa
        from pyspark import TaskContext

        at = offsets.get(TaskContext.get().partitionId(), 0)
        for batch in batches:
            n = batch.num_rows
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.arange(at, at + n, dtype=np.int64))] + batch.columns,
                names=[name] + list(batch.schema.names))
            at += n

    schema = T.StructType([T.StructField(name, T.LongType())] + list(df.schema.fields))
    return map_in_arrow(df, per_batch, schema)


def _within_budget(n: int, what: str) -> None:
    if n > DRIVER_VALUES:
        raise NotApplicable(f"{what}: {n:,} values, more than the spark engine's driver holds "
                            f"({DRIVER_VALUES:,} values in one operation)")


class SparkEngine(FrameOps):
    """:class:`~auditor.engines.operations.Operations` on named Spark DataFrames: one
    aggregate (one scan, one row to the driver) per split for tallies, one job for every
    split's ranges; key operations through persisted count tables, their totals in one job;
    ``percentile_approx`` brackets (:mod:`auditor.engines.spark_values`). Row counts are
    computed once and kept."""

    name = "spark"
    value_ops = spark_values
    driver: Callable[[], Any] | None = None  # the run's driver-side sample (spark_io)

    def __init__(self, frames: dict[str, Any], *, seed: int = 0) -> None:
        self.frames = frames
        self.seed = seed
        self._rows: dict[str, int] = {}
        self._counts: dict[tuple[Any, ...], Any] = {}  # persisted count tables, reused
        self.persisted: list[Any] = []  # splits persisted by spark_io.persist_splits

    def driver_data(self) -> DriverData:
        """The seeded, label-stratified driver-side sample the loader collects once per run
        (:meth:`~auditor.engines.spark_io.SparkAuditData.driver_sample`)."""
        if self.driver is None:
            raise NotApplicable("no driver-side sample: the splits were not opened by the "
                                "spark loader")
        return DriverData(self.driver(), self.split_rows())

    def map_batches(self, columns: Sequence[str], fn: BatchFn, schema: Mapping[str, Any], *,
                    sum_by: Sequence[str] | None = None, splits: Sequence[str] | None = None
                    ) -> dict[str, pl.DataFrame]:
        """``fn`` per Arrow batch on the executors (``mapInArrow``); row numbers are each
        partition's offset (one count job per split, kept for the run) plus the position in
        it. The outputs are collected through Arrow."""
        schema = dict(schema)
        ddl = ", ".join(f"{quoted(c)} {spark_type(t)}" for c, t in schema.items())
        out = {}
        for split, df in self.frames.items():
            if splits is not None and split not in splits:
                continue
            mapped = _batch_mapped(df, columns, fn, schema, ddl, self._offsets(split))
            if sum_by is not None:
                from pyspark.sql import functions as F

                mapped = mapped.groupBy(*[col(c) for c in sum_by]).agg(
                    *[F.sum(col(c)).alias(c) for c in summed_columns(schema, sum_by)])
            out[split] = conform(to_polars(mapped), schema)
        return out

    def validate_suite(self, suite: dict[str, Any]) -> SuiteResults:
        """GX's Spark execution engine (every row of each split) on every split."""
        return gx_results(suite, self.frames, self.split_rows(), spark=True)

    def release(self) -> None:
        """Unpersist the key count tables and kept expansions (the splits stay persisted
        until ``close``)."""
        for name in ("_counts", "_expansions"):
            held: dict[Any, Any] = getattr(self, name, {})
            for table in held.values():
                table.unpersist()
            held.clear()
        for frame in self.__dict__.pop("_kept", []):
            frame.unpersist()
        if sum(self._rows.values()) > COLLECT_ABOVE_ROWS:  # the rows counted (no job here)
            self.collect_garbage()

    def collect_garbage(self) -> None:
        """Python's reference cycles first, then a JVM garbage collection. A DataFrame a
        finished check left in a Python cycle keeps its plan alive in the JVM (py4j), and
        Spark's ContextCleaner deletes a shuffle's files only once its plan is collected: at
        50M rows the 27.6 GB shuffle of one check stayed on the executors' disks for the rest
        of the run (a JVM collection alone freed nothing) until the disk filled."""
        import gc

        gc.collect()
        frame = next(iter(self.frames.values()), None)
        if frame is not None:
            frame.sparkSession.sparkContext._jvm.System.gc()

    def _expanded(self, e: Expansion) -> Any:
        """The expansion as a Spark DataFrame (``mapInArrow``; persisted when keyed)."""
        schema = e.types
        ddl = ", ".join(f"{quoted(c)} {spark_type(t)}" for c, t in schema.items())
        made = _batch_mapped(self.frames[e.split], e.columns, e.fn, schema, ddl,
                             self._offsets(e.split))
        if e.key is None:
            return made
        held: dict[Any, Any] = self.__dict__.setdefault("_expansions", {})
        if e.key not in held:
            held[e.key] = self._persisted(made)
        return held[e.key]

    def matches(self, left: Expansion, right: Expansion, on: Sequence[str], *, order: str,
                limit: int, keep: tuple[str, Any] | None = None) -> Matches:
        """``left`` semi-joined with ``right``'s distinct keys, ranked per key by a window
        (``row_number`` over ``order`` and the rest of the row), joined with ``right``: one
        shuffle of the matches, not of ``left``; collected through Arrow."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        keys = [col(c) for c in on]
        r, base = self._expanded(right), self._expanded(left)
        kept_l = kept_r = None
        l_ = base
        if keep:
            if left.key is None:  # read twice (kept rows, join): made once
                base = l_ = self._persisted(base)
            mark = col(keep[0]) == F.lit(keep[1])
            kept_l, kept_r = l_.where(mark), r.where(mark)
            l_, r = l_.where(~mark), r.where(~mark)
        hits = l_.join(r.select(*keys).distinct(), list(on), "left_semi").distinct()
        others = [c for c in left.types if c not in on and c != order]
        w = Window.partitionBy(*keys).orderBy(col(order), *[col(c) for c in others])
        kept = (hits.withColumn("_rank", F.row_number().over(w))
                .where(F.col("_rank") <= limit).drop("_rank"))
        joined = r.join(kept, list(on), "inner")
        schema = {**{c: right.types[c] for c in on},
                  **{c: t for c, t in right.types.items() if c not in on},
                  **{c: t for c, t in left.types.items() if c not in on}}

        def kept(frame: Any, types: dict[str, Any]) -> pl.DataFrame:
            if frame is None:
                return pl.DataFrame(schema=types)
            return conform(to_polars(frame.select(*[col(c) for c in types])), types)

        try:
            return Matches(kept(joined, schema), kept(kept_l, left.types),
                           kept(kept_r, right.types))
        finally:
            if keep and left.key is None:
                base.unpersist()

    def write_without(self, split: str, rows: np.ndarray, target: Path, *, within: Path
                      ) -> int:
        """The split as loaded, its stored row numbers added per partition (``mapInArrow``),
        the dropped rows removed by an anti-join, written by Spark in row order as a Parquet
        folder under a temporary name, renamed over ``target`` when complete."""
        import os
        import shutil
        import uuid

        from auditor.report.output import confined

        df = self.frames[split]
        key = "_row__clean"
        numbered = _row_numbered(df, self._offsets(split), key)
        drop = np.unique(np.asarray(rows, dtype=np.int64))
        if len(drop):
            gone = df.sparkSession.createDataFrame([(int(r),) for r in drop], f"{key} long")
            numbered = numbered.join(gone, key, "left_anti")
        target = confined(within, target.name)
        within.mkdir(parents=True, exist_ok=True)
        tmp = within / f".{target.name}.{uuid.uuid4().hex}.tmp"
        try:
            numbered.orderBy(key).drop(key).write.parquet(str(tmp))
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            os.replace(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return self.rows(split) - len(drop)

    def split_rows(self, *, with_reference: bool = False) -> dict[str, int]:
        """The splits not yet counted are counted in one job. (The spark engine has no
        reference snapshot.)"""
        from pyspark.sql import functions as F

        todo = [s for s in self.frames if s not in self._rows]
        got = _collected([self.frames[s].agg(F.count(F.lit(1)).alias("n")) for s in todo])
        self._rows |= {s: int(r["n"]) for s, r in zip(todo, got)}
        return {s: self._rows[s] for s in self.frames}

    def sorted_values(self, columns: Sequence[str], *, with_reference: bool = False
                      ) -> dict[str, dict[str, SortedValues]]:
        """One query per split collecting the columns through Arrow (the driver holds every
        value of them), sorted on the driver."""

        out: dict[str, dict[str, SortedValues]] = {c: {} for c in columns}
        for split, df in self.frames.items():
            counted = _aggregate(df, {f"c{i}": f"count({number(df, Num(c))})"
                                      for i, c in enumerate(columns)}).collect()[0]["_r"]
            _within_budget(sum(int(v) for v in counted), f"{', '.join(columns)} in {split}")
            got = to_polars(df.selectExpr(*[f"{number(df, Num(c))} AS v{i}"
                                            for i, c in enumerate(columns)]))
            n = self.rows(split)
            for i, c in enumerate(columns):
                s = got[f"v{i}"].cast(pl.Float64) if got.height else pl.Series([], dtype=pl.Float64)
                out[c][split] = SortedValues(n, s.null_count(), np.sort(s.drop_nulls().to_numpy()))
        return out

    def ranges(self, values: Sequence[Num], *, with_reference: bool = False
               ) -> dict[str, dict[Num, Range]]:
        """Every split's counts, minima and maxima in one job. (The spark engine has no
        reference snapshot.)"""
        if not values:
            return {split: {} for split in self.frames}
        aggregates = []  # one struct type in every split: the loader gave each column one type
        for df in self.frames.values():
            exprs = {"_n": "count(1)"}
            for i, v in enumerate(values):
                x = number(df, v)
                exprs |= {f"p{i}": f"count({x})", f"lo{i}": f"min({x})", f"hi{i}": f"max({x})"}
            aggregates.append(_aggregate(df, exprs))
        out: dict[str, dict[Num, Range]] = {}
        for split, got in zip(self.frames, _collected(aggregates)):
            row, n = got["_r"], int(got["_r"]["_n"])
            out[split] = {v: Range(int(row[f"p{i}"]), n - int(row[f"p{i}"]),
                                   _plain_number(row[f"lo{i}"]), _plain_number(row[f"hi{i}"]))
                          for i, v in enumerate(values)}
        return out

    def tallies(self, conditions: Mapping[str, Sequence[Condition]]
                ) -> dict[str, list[Tally]]:
        """Every split's conditions in one job (a bucketed group's per split and column in
        one more, :func:`_gathered`)."""
        queries: list[Any] = []
        asked: list[tuple[str, Buckets | None, list[int]]] = []  # (split, group, conditions)
        for split, conds in conditions.items():
            df = self.frames[split]
            groups, rest = bucketed(conds) if conds else ([], [])
            for g in groups:
                queries.append(_buckets(df, g))
                asked.append((split, g, list(g.at)))
            exprs = {}
            for i in rest:
                hit, both, q = condition(df, conds[i])
                exprs |= {f"h{i}": f"sum(CASE WHEN {hit} THEN 1 ELSE 0 END)",
                          f"b{i}": f"sum(CASE WHEN {both} THEN 1 ELSE 0 END)",
                          f"x{i}": f"max(CASE WHEN {hit} THEN {q} END)",
                          f"n{i}": f"min(CASE WHEN {hit} THEN {q} END)"}
            if exprs:
                queries.append(_aggregate(df, exprs))
                asked.append((split, None, list(rest)))
        out: dict[str, list[Any]] = {s: [None] * len(c) for s, c in conditions.items()}
        for (split, g, at), rows in zip(asked, _gathered(queries)):
            if g is not None:
                per_bucket = [(int(r["_b"]), int(r["n"]), _plain_number(r["lo"]),
                               _plain_number(r["hi"])) for r in rows]
                for i, t in zip(at, g.tallies(conditions[split], per_bucket)):
                    out[split][i] = t
                continue
            row = rows[0]["_r"]
            for i in at:
                out[split][i] = Tally(int(row[f"h{i}"] or 0), int(row[f"b{i}"] or 0),
                                      _plain_number(row[f"x{i}"]), _plain_number(row[f"n{i}"]))
        return out

    def examples(self, split: str, condition_: Condition, values: Sequence[Num],
                 limit: int, *, ids: Sequence[str] = ()) -> Examples:
        df = self.frames[split]
        hit, _, _ = condition(df, condition_)
        cols = [f"{number(df, v)} AS v{i}" for i, v in enumerate(values)]
        cols += [f"{quoted(c)} AS i{j}" for j, c in enumerate(ids)]
        got = (df.where(hit).selectExpr(*cols).orderBy(*[f"v{i}" for i in range(len(values))])
               .limit(limit).collect())
        return Examples([tuple(_plain_number(r[f"v{i}"]) for i in range(len(values)))
                         for r in got], None,
                        {c: [r[f"i{j}"] for r in got] for j, c in enumerate(ids)})

    def key_summaries(self, columns: Sequence[str]) -> dict[str, dict[str, KeySummary]]:
        """Every (split, column)'s counts per key (persisted for ``key_overlaps``), their
        totals in one job."""
        from pyspark.sql import functions as F

        asked = [(s, c) for s in self.frames for c in columns]
        n = F.col("count")
        got = _collected([self._key_counts(s, c).agg(
            F.sum(n).alias("rows"), F.count(F.lit(1)).alias("keys"),
            F.sum(F.when(n >= 2, n).otherwise(0)).alias("r"), F.sum(n * n).alias("sq"))
            for s, c in asked])
        out: dict[str, dict[str, KeySummary]] = {s: {} for s in self.frames}
        for (s, c), row in zip(asked, got):
            r = int(row["r"] or 0)
            out[s][c] = KeySummary(self.rows(s), int(row["rows"] or 0),
                                   int(row["keys"]), r, int(row["sq"] or 0))
        return out

    def key_overlaps(self, columns: Sequence[str], pairs: Sequence[tuple[str, str]], *,
                     max_examples: int = 20) -> dict[tuple[str, str, str], KeyOverlap]:
        """Per column and pair: the inner join of the two splits' count tables; every pair's
        totals in one job, then the ``max_examples`` top keys of each pair sharing any (a
        top-k, no global sort)."""
        from pyspark.sql import functions as F

        shared = {}
        for c in columns:
            for a, b in pairs:
                x = self._key_counts(a, c).withColumnRenamed("count", "rows_earlier")
                y = (self._key_counts(b, c).withColumnRenamed("_k", "_l")
                     .withColumnRenamed("count", "rows_later"))
                shared[(c, a, b)] = x.join(y, x["_k"].eqNullSafe(y["_l"]), "inner").select(
                    F.col("_k").alias("key"), F.col("rows_earlier").cast("long"),
                    F.col("rows_later").cast("long"))
        totals = _collected([j.agg(F.count(F.lit(1)).alias("n"), F.sum("rows_earlier")
                                   .alias("re"), F.sum("rows_later").alias("rl"))
                             for j in shared.values()])
        out = {}
        for (k, j), tot in zip(shared.items(), totals):
            top = j.orderBy(F.col("rows_later").desc(), F.col("rows_earlier").desc(),
                            F.col("key").cast("string").asc())
            out[k] = KeyOverlap(int(tot["n"]), int(tot["re"] or 0), int(tot["rl"] or 0),
                                to_polars(top.limit(max_examples)) if tot["n"] and max_examples
                                else empty_polars(top))
        return out

    def record_matches(self, key: str, compare: Sequence[str],
                       pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], RecordMatch]:
        from pyspark.sql import functions as F

        cols = [key, *[c for c in compare if c != key]]
        out = {}
        for earlier, later in pairs:
            a, b = (self._normal(s, cols) for s in (earlier, later))
            a_keys = a.select("c0").where(F.col("c0").isNotNull()).distinct()
            keyed = b.join(a_keys, on="c0", how="left_semi")
            a_rows = a.distinct()
            cond = [keyed[f"c{i}"].eqNullSafe(a_rows[f"c{i}"]) for i in range(len(cols))]
            equal = keyed.join(a_rows, on=cond, how="left_semi")
            out[(earlier, later)] = RecordMatch(int(keyed.count()), int(equal.count()))
        return out

    def _normal(self, split: str, cols: Sequence[str]) -> Any:
        """``cols`` under positional names ``c0..``, floats with -0.0 as 0.0 and one NaN (a NaN
        in the key, the first column, as null)."""
        from pyspark.sql import functions as F

        df = self.frames[split]
        out = []
        for i, c in enumerate(cols):
            x = col(c)
            if is_float(df, c) and i == 0:  # a NaN key is no key, as in the key operations
                x = F.when(~F.isnan(x), x + F.lit(0.0))
            elif is_float(df, c):
                x = F.when(F.isnan(x), F.lit(float("nan"))).otherwise(x + F.lit(0.0))
            out.append(x.alias(f"c{i}"))
        return df.select(*out)

    def value_counts(self, columns: Sequence[str], *,
                     shared_key: Callable[[pl.Expr], pl.Expr] | None = None,
                     with_reference: bool = False, partial: bool = False
                     ) -> dict[str, ValueCounts]:
        """Every column stacked in one union (split, order, column index, value): one
        ``groupBy`` for all columns, one job for the row totals and one for the kept counts,
        whatever the number of columns. The grouped counts stay persisted on the executors
        until the driver knows how many there are: with ``partial``, per column (one small
        job), and columns are brought over fewest counts first while ``DRIVER_VALUES`` lasts
        (a near-unique string, such as an undeclared id or free text, stays behind)."""
        from pyspark.sql import functions as F

        if not columns:
            return {}
        union = unioned(
            df.select(F.lit(split).alias("split"), F.lit(order).alias("order"),
                      F.lit(i).alias("column"), plain(df, c).cast("string").alias("value"))
            for order, (split, df) in enumerate(self.frames.items())
            for i, c in enumerate(columns))
        counts = self._persisted(union.where(F.col("value").isNotNull())
                                 .groupBy("column", "split", "order", "value").count())
        kept = counts
        try:
            totals = {int(r[0]): int(r[1] or 0)
                      for r in counts.groupBy("column").agg(F.sum("count")).collect()}
            if shared_key is not None:
                keyed = map_in_arrow(counts.select("column", "value").distinct(),
                                     _key_batches(shared_key),
                                     "column int, value string, _key string")
                multi = (keyed.groupBy("column", "_key").count().where(F.col("count") > 1)
                         .select("column", "_key"))
                keep = keyed.join(multi, on=["column", "_key"]).select("column", "value")
                kept = counts.join(keep, on=["column", "value"], how="left_semi")
            kept = self._persisted(kept)  # counted, then collected: mapInArrow runs once
            over: dict[int, int] = {}
            if partial:
                per = {int(r[0]): int(r[1])
                       for r in kept.groupBy("column").count().collect()}
                held, chosen = 0, []
                for i in sorted(per, key=lambda i: (per[i], i)):
                    if held + per[i] <= DRIVER_VALUES:
                        chosen.append(i)
                        held += per[i]
                    else:
                        over[i] = per[i]
                if over:
                    kept = kept.where(F.col("column").isin(chosen))
            else:
                _within_budget(int(kept.count()),
                               f"{', '.join(columns)}: distinct (split, value) counts")
            got = to_polars(kept.select("column", "split", "order", "value",
                                        F.col("count").alias("n")))
        finally:
            kept.unpersist()
            counts.unpersist()
        schema = {"column": pl.Int32, "split": pl.String, "order": pl.Int32, "value": pl.String,
                  "n": pl.Int64}
        got = pl.DataFrame(schema=schema) if got.height == 0 else got.cast(schema)
        return {c: ValueCounts(totals.get(i, 0),
                               got.filter(pl.col("column") == i).drop("column")
                               .sort("order", "value"), over.get(i, 0),
                               DRIVER_VALUES if i in over else 0)
                for i, c in enumerate(columns)}

    def numeric_distributions(self, kinds: Mapping[str, Kind], *, n_bins: int,
                              with_reference: bool = False
                              ) -> Iterator[dict[str, dict[str, Distribution]]]:
        """One batch of every column: their non-missing values counted in one job; at most
        ``NUMERIC_VALUES`` in all splits are collected through Arrow and sorted here (exact),
        more are measured as sketches on the executors
        (:func:`auditor.engines.spark_sketch.binned`: two jobs whatever the columns)."""
        from pyspark.sql import functions as F

        cols = list(kinds)
        if not cols:
            return
        union = spark_sketch.union(self.frames, cols)
        counted = union.agg(*[F.count(F.col(f"_x{i}")).alias(f"n{i}")
                              for i in range(len(cols))]).collect()[0]
        if sum(int(counted[f"n{i}"]) for i in range(len(cols))) > NUMERIC_VALUES:
            yield dict(spark_sketch.binned(self.frames, cols, dict(kinds), n_bins))
            return
        got = to_polars(union)
        out: dict[str, dict[str, Distribution]] = {}
        for o, split in enumerate(self.frames):
            rows = got.filter(pl.col("_s") == o) if got.height else got
            n = self.rows(split)
            out[split] = {}
            for i, c in enumerate(cols):
                v = (rows[f"_x{i}"].cast(pl.Float64) if rows.height
                     else pl.Series([], dtype=pl.Float64))
                out[split][c] = Sample(kinds[c], n, v.null_count(),
                                       values=np.sort(v.drop_nulls().to_numpy()))
        yield out

    def unseen_values(self, split: str, refs: Mapping[str, np.ndarray], kinds: Mapping[str, Kind],
                      *, limit: int) -> dict[str, tuple[list[tuple[float, int]], int]]:
        return spark_sketch.unseen_values(self.frames, split, dict(refs), limit)

    def all_unique(self, kinds: Mapping[str, Kind], splits: Sequence[str]
                   ) -> dict[str, dict[str, bool]]:
        return spark_sketch.all_unique(self.frames, splits, list(kinds))

    def distinct_values(self, columns: Sequence[str], *, limit: int = 0
                        ) -> dict[str, DistinctValues]:
        from pyspark.sql import functions as F

        out = {}
        for c in columns:
            union = unioned(df.select(plain(df, c).cast("string").alias("v"))
                            for df in self.frames.values())
            values = self._persisted(union.where(F.col("v").isNotNull()).distinct())
            try:
                distinct = int(values.count())
                first = [r["v"] for r in values.orderBy("v").limit(limit).collect()] \
                    if limit else []
            finally:
                values.unpersist()
            out[c] = DistinctValues(distinct, first)
        return out

    def kept(self, expansions: Sequence[Expansion], *, persist: bool = True
             ) -> "nw.LazyFrame[Any]":
        """The expansions' ``mapInArrow`` outputs, unioned and persisted until ``release``
        (with ``persist``)."""
        union = unioned(self._expanded(e) for e in expansions)
        return self.keep(nw.from_native(union)) if persist else nw.from_native(union)

    def keep(self, frame: "nw.LazyFrame[Any]", *, run: bool = False) -> "nw.LazyFrame[Any]":
        native = self._persisted(frame.to_native())
        self.__dict__.setdefault("persisted" if run else "_kept", []).append(native)
        return nw.from_native(native)

    def rows_at(self, split: str, rows: np.ndarray, columns: Sequence[str]) -> pl.DataFrame:
        """One scan of the split, its stored row numbers added per partition
        (``mapInArrow``), filtered to ``rows``."""
        wanted = [int(r) for r in np.asarray(rows, dtype=np.int64)]
        df = self.frames[split].select(*[col(c) for c in columns])
        if not wanted:
            return pl.DataFrame(schema={c: t for c, t in to_polars(df.limit(0)).schema.items()})
        key = "__auditor_row"
        got = to_polars(_row_numbered(df, self._offsets(split), key)
                        .where(col(key).isin(sorted(set(wanted)))))
        order = pl.DataFrame({key: wanted}, schema={key: pl.Int64})
        return order.join(got, on=key, how="left", maintain_order="left").drop(key)

    def continuous_columns(self, columns: Sequence[str], splits: Sequence[str], *,
                           share: float = 0.5) -> dict[str, list[str]]:
        return spark_values.continuous_columns(self.frames, columns, splits, share)

    def near_text_copies(self, earlier: str, later: str, spec: CopySpec,
                         exact_rows: Callable[[], np.ndarray],
                         near_keys: Callable[[str], np.ndarray]
                         ) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
        raise NotImplementedError("MinHash near copies of free text are polars-only")

    def class_ranks(self, label: str, classes: Sequence[Any], columns: Sequence[str]
                    ) -> ClassRanks:
        return label_bins.class_ranks(self, label, classes, columns)

    def class_levels(self, label: str, classes: Sequence[Any], columns: Sequence[str]
                     ) -> ClassLevels:
        return label_levels.class_levels(self, label, classes, columns)

    def target_rate_aucs(self, label: str, classes: Sequence[Any], columns: Sequence[str],
                         smoothing: float) -> dict[str, dict[str, float]]:
        return label_levels.target_rate_aucs(self, label, classes, columns, smoothing)

    def close(self) -> None:
        """Release the persisted count tables and splits (the run is over)."""
        for table in [*self._counts.values(), *self.persisted]:
            table.unpersist()
        self._counts.clear()
        self.persisted = []

    def counted(self, rows: Mapping[str, int]) -> None:
        """Row counts of splits a caller already has (the loader's label aggregate)."""
        self._rows.update(rows)

    def rows(self, split: str) -> int:
        if split not in self._rows:
            self._rows[split] = int(self.frames[split].count())
        return self._rows[split]

    def _persisted(self, df: Any) -> Any:
        """``df`` persisted for reuse within the run, at the storage level of
        ``spark.auditor.keep`` (``--spark-conf``): ``memory`` (memory, spilling to disk),
        ``disk`` (the executors' local disks only), or ``auto`` (default): ``disk`` when the
        splits hold more than :data:`KEEP_IN_MEMORY_ROWS` rows in all. Tables cached in
        memory are built as columnar batches on the executors' heap: at 50M rows the count
        table of a unique id and the keyed rows of leakage.duplicates ran 2 GB and 3 GB
        executors out of heap."""
        from pyspark import StorageLevel

        mode = self.cached(KEEP_CONF, lambda: (df.sparkSession.conf.get(KEEP_CONF, "auto")
                                                or "auto").strip().lower())
        if mode not in ("auto", "memory", "disk"):
            raise ConfigError(f"{KEEP_CONF} must be auto, memory or disk; got {mode!r}")
        disk = mode == "disk" or (mode == "auto"
                                  and sum(self.split_rows().values()) > KEEP_IN_MEMORY_ROWS)
        return df.persist(StorageLevel.DISK_ONLY if disk else StorageLevel.MEMORY_AND_DISK)

    def _offsets(self, split: str) -> dict[int, int]:
        """The first stored row number of every partition of ``split``; on the first call
        every split's, from one job (kept for the run). The splits must be persisted or read
        from files, as the loader leaves them: on a DataFrame made from local rows Spark
        evaluates ``spark_partition_id`` on the driver (partition 0 for every row) while
        ``mapInArrow`` runs on its real partitions."""
        from pyspark.sql import functions as F

        memo: dict[str, dict[int, int]] = self.cached("spark.offsets", dict)
        if split not in memo:
            todo = [s for s in self.frames if s not in memo]
            for s, rows in zip(todo, _gathered([self.frames[s].select(
                    F.spark_partition_id().alias("p")).groupBy("p").count() for s in todo])):
                memo[s], at = {}, 0
                for p, n in sorted((int(r["p"]), int(r["count"])) for r in rows):
                    memo[s][p], at = at, at + n
        return memo[split]

    def _key_counts(self, split: str, column: str) -> Any:
        """Rows per value ``_k`` of ``column`` (``count``; a missing value is no key), computed
        once per (split, column) and persisted on the executors (memory and disk), so that the
        summary and the overlaps of a key shuffle the rows once."""
        if (split, column) not in self._counts:
            df = self.frames[split]
            self._counts[(split, column)] = self._persisted(
                df.where(~missing(df, column)).select(col(column).alias("_k"))
                .groupBy("_k").count())
        return self._counts[(split, column)]

    def stratified_sample(self, split: str, rows: int, *, by: str | None = None,
                          seed: int = 0, columns: Sequence[str] | None = None) -> pl.DataFrame:
        df = self.frames[split]
        if columns is not None:
            df = df.select(*[col(c) for c in columns])
        n = self.rows(split)
        if n > rows:
            fraction = rows / n
            if by is None:
                df = df.sample(withReplacement=False, fraction=fraction, seed=seed)
            else:
                levels = [r[0] for r in df.select(col(by)).distinct().collect()]
                df = df.sampleBy(col(by), {v: fraction for v in levels if v is not None}, seed=seed)
        return to_polars(df)

