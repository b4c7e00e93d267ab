"""The engine operations on polars DataFrames (one machine; the default engine)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import narwhals as nw
import numpy as np
import polars as pl

from auditor.core.roles import Kind
from auditor.engines import KeyOverlap, KeySummary
from auditor.engines.operations import (
    BATCH_ROWS, REFERENCE, BatchFn, Buckets, ClassLevels, ClassRanks, Condition, CopySpec,
    DistinctValues, Distribution, DriverData, Examples, Exceeds, Expansion, FrameOps, Matches,
    Num, Range, RecordMatch, SortedValues, Subset, SuiteResults, Tally, ValueCounts, bucketed,
    conform, gx_results, summed_columns)
from auditor.engines import polars_values
from auditor.stats.numerics import map_columns
from auditor.stats.drift import prepare


def _plain(col: str, dtype: pl.DataType) -> pl.Expr:
    """The column with NaN as null (floats), for min/max/quantiles/counts of values."""
    return pl.col(col).fill_nan(None) if dtype.is_float() else pl.col(col)


# ---------------------------------------------------------------------------------------------
# The batched operations (auditor.engines.operations)
# ---------------------------------------------------------------------------------------------

def number(spec: Num, schema: Mapping[str, pl.DataType]) -> pl.Expr:
    """:class:`~auditor.engines.operations.Num` as a polars expression: epoch microseconds for
    dates and datetimes (Int64), Float64 with NaN as null for anything else; plus the offset."""
    dtype = schema[spec.column]
    c = pl.col(spec.column)
    if isinstance(dtype, (pl.Date, pl.Datetime)):
        if isinstance(dtype, pl.Date):
            c = c.cast(pl.Datetime("us"))
        expr = c.dt.epoch("us").cast(pl.Int64)
        return expr + int(spec.offset) if spec.offset else expr
    expr = c.cast(pl.Float64).fill_nan(None)
    return expr + float(spec.offset) if spec.offset else expr


def condition(cond: Condition, schema: Mapping[str, pl.DataType]) -> tuple[pl.Expr, pl.Expr,
                                                                             pl.Expr]:
    """(rows meeting it, rows with every operand, the compared quantity) as expressions."""
    v = number(cond.value, schema)
    if isinstance(cond, Exceeds):
        o = number(cond.other, schema)
        return (v > o).fill_null(False), v.is_not_null() & o.is_not_null(), v - o
    hit = v.is_not_null()
    if cond.lo is not None:
        hit = hit & (v >= cond.lo)
    if cond.hi is not None:
        hit = hit & (v < cond.hi)
    return hit.fill_null(False), v.is_not_null(), v


def _buckets(df: pl.DataFrame, g: Buckets) -> list[tuple[int, int, Any, Any]]:
    """(bucket, rows, smallest, largest value) of each bucket of ``g`` holding rows (see
    :class:`Buckets`)."""
    x = df.select(number(g.value, df.schema).alias("v")).to_series().drop_nulls()
    # integers (epoch microseconds) against integer bounds compare exactly; float64 would
    # merge values beyond 2^53 (a 9999-12-31 sentinel) as the per-condition path does not
    exact = x.dtype.is_integer() and all(isinstance(b, int) for b in g.bounds)
    kind = np.int64 if exact else np.float64
    at = np.searchsorted(np.asarray(g.bounds, dtype=kind), x.cast(
        pl.Int64 if exact else pl.Float64).to_numpy(), side="right")
    return list(pl.DataFrame({"b": at, "v": x}).group_by("b")
                .agg(pl.len(), pl.col("v").min().alias("lo"), pl.col("v").max().alias("hi"))
                .iter_rows())


if TYPE_CHECKING:
    from auditor.loading.data import AuditData

STACK_CELLS = 2_000_000  # values stacked into one group-by by value_counts
STACK_ROWS = 5_000  # splits taller than this are counted a column at a time
NUMERIC_BATCH = 4  # numeric columns whose sorted values numeric_distributions holds at a time


class PolarsOperations(FrameOps):
    """:class:`~auditor.engines.operations.Operations` on named polars DataFrames; each
    operation is one query per split (many columns or conditions in one ``select``); the
    value operations exact (:mod:`auditor.engines.polars_values`)."""

    name = "polars"
    value_ops = polars_values
    frames: dict[str, pl.DataFrame]

    def __init__(self, frames: dict[str, pl.DataFrame],
                 reference: pl.DataFrame | None = None, data: "AuditData | None" = None
                 ) -> None:
        self.frames = frames
        self.reference = reference
        self.data = data

    def _tables(self, with_reference: bool) -> dict[str, pl.DataFrame]:
        if with_reference and self.reference is not None:
            return {REFERENCE: self.reference, **self.frames}
        return self.frames

    def release(self) -> None:
        self.__dict__.pop("_entity_cache", None)
        self.__dict__.pop("_expansions", None)
        if self.data is not None:  # a check's level codes of every row (label operations),
            self.data.release("label_stats.codes")  # normalised copies and hashes (row_copies):
            self.data.release("duplicates.")  # no later check reads them; at 10M rows, GBs

    def map_batches(self, columns: Sequence[str], fn: BatchFn, schema: Mapping[str, Any], *,
                    sum_by: Sequence[str] | None = None, splits: Sequence[str] | None = None
                    ) -> dict[str, pl.DataFrame]:
        """``fn`` on slices of :data:`~auditor.engines.operations.BATCH_ROWS` rows (zero-copy
        views of the loaded frames)."""
        out = {}
        for split, df in self.frames.items():
            if splits is not None and split not in splits:
                continue
            sel = df.select(pl.col(list(columns)))  # one expression, not one per column
            parts = [conform(fn(sel.slice(start, BATCH_ROWS), start), schema)
                     for start in range(0, sel.height, BATCH_ROWS)]
            got = pl.concat(parts) if parts else conform(pl.DataFrame(), schema)
            if sum_by is not None:
                got = got.group_by(list(sum_by)).agg(
                    pl.col(c).sum() for c in summed_columns(schema, sum_by)).select(list(schema))
            out[split] = got
        return out

    def split_rows(self, *, with_reference: bool = False) -> dict[str, int]:
        return {s: df.height for s, df in self._tables(with_reference).items()}

    def _batches(self, e: Expansion) -> tuple[Callable[[int], pl.DataFrame], range]:
        """The expansion's batch maker (first row -> its conformed rows) and first rows."""
        sel = self.frames[e.split].select(list(e.columns))
        step = e.batch_rows or BATCH_ROWS
        return (lambda start: conform(e.fn(sel.slice(start, step), start), e.types),
                range(0, sel.height, step))

    def _expanded(self, e: Expansion) -> Iterator[pl.DataFrame]:
        make, starts = self._batches(e)
        return map(make, starts)  # a batch at a time

    def _held(self, e: Expansion) -> pl.DataFrame:
        def make() -> pl.DataFrame:
            # batches on polars' threads where the expansion allows it (numpy and most polars
            # calls release the GIL: leakage.duplicates' keyed rows)
            batch, starts = self._batches(e)
            parts = map_columns(batch, starts, workers=None if e.concurrent else 1)
            return pl.concat(parts) if parts else conform(pl.DataFrame(), e.types)

        if e.key is None:
            return make()
        held: dict[Any, pl.DataFrame] = self.__dict__.setdefault("_expansions", {})
        if e.key not in held:
            held[e.key] = make()
        return held[e.key]

    def matches(self, left: Expansion, right: Expansion, on: Sequence[str], *, order: str,
                limit: int, keep: tuple[str, Any] | None = None) -> Matches:
        """``right`` whole; ``left`` a batch at a time, semi-joined with ``right``'s keys."""
        keys = list(on)
        r = self._held(right)
        kept_r = r.filter(pl.col(keep[0]) == keep[1]) if keep else r.clear()
        if keep:
            r = r.filter(pl.col(keep[0]) != keep[1])
        wanted = r.select(keys).unique()
        hits, kept_l = [], []
        for part in self._expanded(left):
            if keep:
                kept_l.append(part.filter(pl.col(keep[0]) == keep[1]))
            hits.append(part.join(wanted, on=keys, how="semi").unique())
        empty = conform(pl.DataFrame(), left.types)
        got = pl.concat(hits).unique() if hits else empty
        others = [c for c in got.columns if c not in keys and c != order]
        got = (got.sort([order, *others]).group_by(keys, maintain_order=True).head(limit))
        return Matches(r.join(got, on=keys, how="inner"),
                       pl.concat(kept_l) if kept_l else empty, kept_r)

    def write_without(self, split: str, rows: np.ndarray, target: Path, *, within: Path
                      ) -> int:
        from auditor.loading.data import read_table
        from auditor.report.output import write_parquet_atomic

        source = self.data.paths.get(split) if self.data is not None else None
        df = read_table(Path(source), self.data.csv) if source and self.data is not None \
            else self.frames[split]
        drop = pl.Series(np.unique(rows), dtype=pl.Int64)
        clean = df.filter(~pl.int_range(pl.len()).is_in(drop.implode()))
        write_parquet_atomic(clean, target, within=within)
        return clean.height

    def validate_suite(self, suite: dict[str, Any]) -> SuiteResults:
        """GX's pandas execution engine (each split as pandas) on every split."""
        return gx_results(suite, self.frames, self.split_rows(), spark=False)

    def driver_data(self) -> DriverData:
        """The loaded data itself (an engine made from bare frames wraps them, with no roles
        declared)."""
        data = self.data
        if data is None:
            from auditor.core.config import Columns
            from auditor.loading.data import build_audit_data

            data = self.data = build_audit_data(dict(self.frames), columns=Columns(),
                                                seed=getattr(self, "seed", 0))
        return DriverData(data, self.split_rows())

    def sorted_values(self, columns: Sequence[str], *, with_reference: bool = False
                      ) -> dict[str, dict[str, SortedValues]]:
        out: dict[str, dict[str, SortedValues]] = {c: {} for c in columns}
        for split, df in self._tables(with_reference).items():
            for c in columns:
                s = df.select(pl.col(c).cast(pl.Float64).fill_nan(None)).to_series()
                out[c][split] = SortedValues(df.height, s.null_count(),
                                             np.sort(s.drop_nulls().to_numpy()))
        return out

    def ranges(self, values: Sequence[Num], *, with_reference: bool = False
               ) -> dict[str, dict[Num, Range]]:
        out: dict[str, dict[Num, Range]] = {}
        for split, df in self._tables(with_reference).items():
            if not values:
                out[split] = {}
                continue
            schema = df.schema
            exprs = []
            for i, v in enumerate(values):
                x = number(v, schema)
                exprs += [x.null_count().alias(f"m{i}"), x.min().alias(f"lo{i}"),
                          x.max().alias(f"hi{i}")]
            row = df.select(exprs).row(0)
            out[split] = {v: Range(df.height - int(row[3 * i]), int(row[3 * i]), row[3 * i + 1],
                                   row[3 * i + 2]) for i, v in enumerate(values)}
        return out

    def tallies(self, conditions: Mapping[str, Sequence[Condition]]
                ) -> dict[str, list[Tally]]:
        out: dict[str, list[Tally]] = {}
        tables = self._tables(REFERENCE in conditions)
        for split, conds in conditions.items():
            df = tables[split]
            if not conds:
                out[split] = []
                continue
            schema = df.schema
            groups, rest = bucketed(conds)
            got: list[Tally | None] = [None] * len(conds)
            for g in groups:
                for i, t in zip(g.at, g.tallies(conds, _buckets(df, g))):
                    got[i] = t
            exprs = []
            for i in rest:
                hit, both, q = condition(conds[i], schema)
                exprs += [hit.sum().alias(f"h{i}"), both.sum().alias(f"b{i}"),
                          q.filter(hit).max().alias(f"x{i}"), q.filter(hit).min().alias(f"n{i}")]
            row = df.select(exprs).row(0, named=True) if exprs else {}
            for i in rest:
                got[i] = Tally(int(row[f"h{i}"] or 0), int(row[f"b{i}"] or 0), row[f"x{i}"],
                               row[f"n{i}"])
            out[split] = got  # type: ignore[assignment]
        return out

    def subsets(self, parts: Mapping[str, Subset], *, seed: int = 0) -> "PolarsEngine":
        """A polars engine whose splits are ``parts`` (name -> :class:`Subset`): rows of these
        frames meeting a condition; no driver data or reference comes with it. For statistics
        of honest splits of the same data made the same way, on rows this process holds (the
        time backtests of :mod:`auditor.judging.backtest`, on any engine's driver data)."""
        frames = {}
        for name, part in parts.items():
            df = self.frames[part.split]
            if part.condition is not None:
                df = df.filter(condition(part.condition, df.schema)[0])
            frames[name] = df
        return PolarsEngine(frames, seed=seed)

    def examples(self, split: str, condition_: Condition, values: Sequence[Num],
                 limit: int, *, ids: Sequence[str] = ()) -> Examples:
        df = self.frames[split]
        schema = df.schema
        hit, _, _ = condition(condition_, schema)
        rows = df.select(hit.arg_true().head(limit).alias("r")).to_series()  # no helper column
        got = df.select(*(number(v, schema).alias(f"v{i}") for i, v in enumerate(values))) \
            .gather(rows) if len(values) else pl.DataFrame()
        named = df.select(list(ids)).gather(rows) if ids else pl.DataFrame()
        return Examples([tuple(r) for r in got.iter_rows()] if len(values)
                        else [() for _ in rows], [int(r) for r in rows.to_list()],
                        {c: named[c].to_list() for c in ids})

    def _entity_counts(self, split: str, col: str) -> pl.DataFrame:
        """Rows per key of ``col`` in ``split``: columns ``_k`` (the key; -0.0 is 0.0, NaN and
        null are no key) and ``_n``; internal names, so that no user column can clash. Kept
        for the run: the summary and the overlaps of a key group its rows once."""
        cache: dict[tuple[str, str], pl.DataFrame] = self.__dict__.setdefault("_entity_cache", {})
        if (split, col) not in cache:
            s = self.frames[split].get_column(col)
            if s.dtype.is_float():
                s = (s + 0.0).fill_nan(None)
            cache[(split, col)] = (pl.DataFrame({"_k": s}).drop_nulls()
                                   .group_by("_k").agg(pl.len().cast(pl.Int64).alias("_n")))
        return cache[(split, col)]

    def key_summaries(self, columns: Sequence[str]) -> dict[str, dict[str, KeySummary]]:
        out: dict[str, dict[str, KeySummary]] = {}
        for split, df in self.frames.items():
            out[split] = {}
            for col in columns:
                n = pl.col("_n")
                row = self._entity_counts(split, col).select(
                    n.sum().alias("k"), pl.len().alias("d"), n.filter(n >= 2).sum().alias("r"),
                    (n * n).sum().alias("q")).row(0)
                out[split][col] = KeySummary(df.height, int(row[0] or 0), int(row[1]),
                                             int(row[2] or 0), int(row[3] or 0))
        return out

    def key_overlaps(self, columns: Sequence[str], pairs: Sequence[tuple[str, str]], *,
                     max_examples: int = 20) -> dict[tuple[str, str, str], KeyOverlap]:
        out: dict[tuple[str, str, str], KeyOverlap] = {}
        for col in columns:
            for earlier, later in pairs:
                a = self._entity_counts(earlier, col).rename({"_n": "_earlier"})
                b = self._entity_counts(later, col).rename({"_n": "_later"})
                if a.schema["_k"] != b.schema["_k"]:
                    a, b = (f.with_columns(pl.col("_k").cast(pl.String)) for f in (a, b))
                shared = a.join(b, on="_k", how="inner")
                top = (shared.with_columns(pl.col("_k").cast(pl.String).alias("_text"))
                       .sort(["_later", "_earlier", "_text"], descending=[True, True, False])
                       .head(max_examples)
                       .select(pl.col("_k").alias("key"), pl.col("_earlier").alias("rows_earlier"),
                               pl.col("_later").alias("rows_later")))
                out[(col, earlier, later)] = KeyOverlap(
                    shared.height, int(shared["_earlier"].sum() or 0),
                    int(shared["_later"].sum() or 0), top)
        return out

    def record_matches(self, key: str, compare: Sequence[str],
                       pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], RecordMatch]:
        out = {}
        cols = [key, *[c for c in compare if c != key]]
        for earlier, later in pairs:
            a, b = (self._normal(s, cols) for s in (earlier, later))
            a_keys = a.select(key).drop_nulls().unique()
            keyed = b.join(a_keys, on=key, how="semi")
            # only the earlier rows of shared keys are compared (not every row made unique)
            a = a.join(keyed.select(key).unique(), on=key, how="semi")
            equal = keyed.join(a.unique(), on=cols, how="semi", nulls_equal=True)
            out[(earlier, later)] = RecordMatch(keyed.height, equal.height)
        return out

    def _normal(self, split: str, cols: Sequence[str]) -> pl.DataFrame:
        """``cols`` with -0.0 as 0.0 (NaN stays NaN: equal to NaN in joins), but a NaN key
        (the first column) is no key, as in the key operations."""
        df = self.frames[split].select(cols)
        floats = [c for c, t in df.schema.items() if t.is_float()]
        df = df.with_columns([(pl.col(c) + 0.0) for c in floats])
        return df.with_columns(pl.col(cols[0]).fill_nan(None)) if cols[0] in floats else df

    def value_counts(self, columns: Sequence[str], *,
                     shared_key: Callable[[pl.Expr], pl.Expr] | None = None,
                     with_reference: bool = False, partial: bool = False
                     ) -> dict[str, ValueCounts]:
        """Every count is held (``partial`` leaves nothing out). Short splits (at most
        ``STACK_ROWS`` rows): columns stacked (unpivoted) in batches of about ``STACK_CELLS``
        values, one group-by per batch, since a query costs ~50 us per expression whatever
        the rows and thousands of short columns should not be thousands of queries; taller
        splits: one group-by per column."""
        tables = self._tables(with_reference)
        pieces: dict[int, list[tuple[int, pl.DataFrame]]] = {}  # column -> (order, counts)
        tall, tall_at = [], []
        for order, (split, df) in enumerate(tables.items()):
            schema = df.schema  # once: O(columns) each time it is built
            if df.height > STACK_ROWS:  # tall: a group-by per column, run concurrently
                tall += [df.lazy().select(_plain(c, schema[c]).cast(pl.String).alias("value"))
                         .drop_nulls().group_by("value").len(name="n").sort("value")
                         .select(pl.lit(split).alias("split"), pl.lit(order).alias("order"),
                                 "value", pl.col("n").cast(pl.Int64))
                         for c in columns]
                tall_at += [(i, order) for i in range(len(columns))]
                continue
            step = max(1, STACK_CELLS // max(df.height, 1))
            for lo in range(0, len(columns), step):
                batch = list(columns[lo:lo + step])
                wide = df.select([_plain(c, schema[c]).cast(pl.String).alias(str(i))
                                  for i, c in enumerate(batch, start=lo)])
                part = (wide.unpivot(variable_name="_c", value_name="value")
                        .drop_nulls("value").group_by("_c", "value").len(name="n")
                        .sort("_c", "value")
                        .select(pl.col("_c").cast(pl.Int64), pl.lit(split).alias("split"),
                                pl.lit(order).alias("order"), "value",
                                pl.col("n").cast(pl.Int64)))
                for (i,), counts in part.partition_by("_c", as_dict=True,
                                                      include_key=False).items():
                    pieces.setdefault(int(i), []).append((order, counts))
        # at 1M rows x 10 columns, concurrently 0.86 -> 0.50 s
        for (i, order), counts in zip(tall_at, pl.collect_all(tall) if tall else []):
            pieces.setdefault(i, []).append((order, counts))
        empty = pl.DataFrame(schema={"split": pl.String, "order": pl.Int32, "value": pl.String,
                                     "n": pl.Int64})
        # each (column, split) is one part, already in value order: the parts of a column
        # joined in split order (one sort of every part's strings at once took 0.9 s of 1.1
        # for the time backtests' windows at 1M rows; a stable sort of the stacked parts
        # and a partition, 0.05 s of 0.2 for nine text columns)
        by_column = {i: pl.concat([c for _, c in sorted(fs, key=lambda p: p[0])])
                     for i, fs in pieces.items()}
        totals = {i: int(c["n"].sum() or 0) for i, c in by_column.items()}
        if shared_key is not None and by_column:  # every column at once: (column, value)
            stacked = pl.concat([c.with_columns(pl.lit(i, dtype=pl.Int64).alias("_c"))
                                 for i, c in by_column.items()])  # pairs sharing a key
            keys = (stacked.select("_c", "value").unique()
                    .with_columns(shared_key(pl.col("value")).alias("_key")))
            shared = keys.filter(pl.len().over("_c", "_key") > 1).select("_c", "value")
            kept = stacked.join(shared, on=["_c", "value"], how="semi", maintain_order="left")
            parts = kept.partition_by("_c", as_dict=True, include_key=False)
            by_column = {i: parts.get((i,), c.clear()) for i, c in by_column.items()}
        return {col: ValueCounts(totals.get(i, 0), by_column.get(i, empty.clear()))
                for i, col in enumerate(columns)}

    def numeric_distributions(self, kinds: Mapping[str, Kind], *, n_bins: int,
                              with_reference: bool = False
                              ) -> Iterator[dict[str, dict[str, Distribution]]]:
        """Exact: :data:`NUMERIC_BATCH` columns at a time, each split's values sorted
        (:func:`~auditor.stats.drift.prepare`; a sorted float64 copy of every numeric column of
        every split at once was as large as the data: +3.2 GB at 10M + 2.5M rows x 40)."""
        tables = self._tables(with_reference)
        cols = list(kinds)
        for lo in range(0, len(cols), NUMERIC_BATCH):
            sub = {c: kinds[c] for c in cols[lo:lo + NUMERIC_BATCH]}
            yield {s: dict(prepare(df, sub)) for s, df in tables.items()}

    def _values(self, split: str, kinds: Mapping[str, Kind]) -> dict[str, np.ndarray]:
        df = self._tables(split == REFERENCE)[split]
        return {c: v.values for c, v in prepare(df, dict(kinds)).items()
                if v.values is not None}

    def unseen_values(self, split: str, refs: Mapping[str, np.ndarray], kinds: Mapping[str, Kind],
                      *, limit: int) -> dict[str, tuple[list[tuple[float, int]], int]]:
        values = self._values(split, {c: kinds[c] for c in refs})
        out = {}
        for c, ref in refs.items():
            new = values[c][~np.isin(values[c], ref)]
            vals, counts = np.unique(new, return_counts=True)
            order = np.lexsort((vals, -counts))[:limit]
            out[c] = ([(float(vals[i]), int(counts[i])) for i in order], len(vals))
        return out

    def all_unique(self, kinds: Mapping[str, Kind], splits: Sequence[str]
                   ) -> dict[str, dict[str, bool]]:
        out = {}
        for split in splits:
            values = self._values(split, kinds)
            out[split] = {c: bool(len(v) == 0 or np.all(np.diff(v) != 0))
                          for c, v in values.items()}
        return out

    def distinct_values(self, columns: Sequence[str], *, limit: int = 0
                        ) -> dict[str, DistinctValues]:
        """From the per-split key tables (the distinct values only are cast to text)."""
        out = {}
        for col in columns:
            keys = [self._entity_counts(s, col).get_column("_k") for s in self.frames]
            if len({k.dtype for k in keys}) > 1:
                keys = [k.cast(pl.String) for k in keys]
            values = pl.concat(keys).unique()  # typed: text only for the first ``limit``
            first = values.cast(pl.String).sort().head(limit).to_list() if limit else []
            out[col] = DistinctValues(values.len(), first)
        return out

    def kept(self, expansions: Sequence[Expansion], *, persist: bool = True
             ) -> "nw.LazyFrame[Any]":
        parts = [self._held(e) for e in expansions]
        return nw.from_native(pl.concat(parts, how="vertical").lazy())

    def keep(self, frame: "nw.LazyFrame[Any]", *, run: bool = False) -> "nw.LazyFrame[Any]":
        held: pl.DataFrame = frame.collect().to_native()
        return nw.from_native(held.lazy())

    def rows_at(self, split: str, rows: np.ndarray, columns: Sequence[str]) -> pl.DataFrame:
        df = self.frames[split].select(list(columns))
        return df[np.asarray(rows, dtype=np.int64)] if len(rows) else df.clear()

    def continuous_columns(self, columns: Sequence[str], splits: Sequence[str], *,
                           share: float = 0.5) -> dict[str, list[str]]:
        return {s: polars_values.continuous_columns(self.frames[s], columns, share)
                for s in splits}

    def near_text_copies(self, earlier: str, later: str, spec: CopySpec,
                         exact_rows: Callable[[], np.ndarray],
                         near_keys: Callable[[str], np.ndarray]
                         ) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
        """:func:`auditor.engines.polars_rows.near_text_copies` on the loaded data."""
        from auditor.engines.polars_rows import near_text_copies

        keys = {s: near_keys(s) for s in (earlier, later)}
        return near_text_copies(self.driver_data().data, earlier, later, spec, exact_rows(),
                                keys)

    def class_ranks(self, label: str, classes: Sequence[Any], columns: Sequence[str]
                    ) -> ClassRanks:
        from auditor.engines import polars_label

        return polars_label.class_ranks(self.driver_data().data, label, classes, columns)

    def class_levels(self, label: str, classes: Sequence[Any], columns: Sequence[str]
                     ) -> ClassLevels:
        from auditor.engines import polars_label

        return polars_label.class_levels(self.driver_data().data, label, classes, columns)

    def target_rate_aucs(self, label: str, classes: Sequence[Any], columns: Sequence[str],
                         smoothing: float) -> dict[str, dict[str, float]]:
        from auditor.engines import polars_label

        return polars_label.target_rate_aucs(self.driver_data().data, label, classes, columns,
                                             smoothing)


class PolarsEngine(PolarsOperations):
    """Named polars DataFrames; every operation is one lazy query collected once."""

    name = "polars"

    def __init__(self, frames: dict[str, pl.DataFrame], *, seed: int = 0,
                 reference: pl.DataFrame | None = None, data: "AuditData | None" = None
                 ) -> None:
        self.frames = frames
        self.reference = reference
        self.data = data
        self.seed = seed

    def rows(self, split: str) -> int:
        return self.frames[split].height

    def stratified_sample(self, split: str, rows: int, *, by: str | None = None,
                          seed: int = 0, columns: Sequence[str] | None = None) -> pl.DataFrame:
        df = self.frames[split]
        if columns is not None:
            df = df.select(list(columns))
        if df.height <= rows:
            return df
        fraction = rows / df.height
        rng = np.random.default_rng(seed)
        keep = rng.random(df.height) < fraction  # Bernoulli per row: each stratum keeps its share
        return df.filter(pl.Series(keep))

