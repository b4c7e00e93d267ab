"""The batched measuring operations: each call covers many columns (or conditions) and every
split at once, so that a check measures in a few passes whatever the number of columns.

A check's ``measure(engine, roles)`` calls only these (and the key and histogram operations of
:class:`~auditor.engines.Engine`); both engines implement them with the same semantics, which the
conformance suite (``tests/engines/test_conformance.py``) holds them to by comparing the
``Measures`` every check gets on each engine.

Values are engine-free specifications, not engine expressions:

- :class:`Num` reads a column as a comparable number: a date as the epoch microseconds of its
  midnight, a datetime as epoch microseconds (UTC for zoned values, naive ones read as UTC),
  any numeric column as a float with NaN as missing; ``offset`` is added.
- :class:`Between` (``lo <= value < hi``; a bound of None is open) and :class:`Exceeds`
  (``value > other``) are conditions on such numbers; a row with a missing operand never
  meets one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import (TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Iterator, Mapping,
                    Protocol,
                    Sequence, Union, runtime_checkable)

import narwhals as nw
import numpy as np
import polars as pl

from auditor.core.roles import REFERENCE as REFERENCE  # re-exported: the reference's name
from auditor.core.roles import Kind
from auditor.engines import KeyOverlap, KeySummary
from auditor.stats.drift import Sample
from auditor.stats.drift_binned import Binned

if TYPE_CHECKING:
    from auditor.loading.data import AuditData


@dataclass(frozen=True)
class Num:
    """A column read as a number (see the module docstring), plus ``offset``."""

    column: str
    offset: int | float = 0


@dataclass(frozen=True)
class Between:
    """``lo <= value < hi`` (None: open)."""

    value: Num
    lo: int | float | None = None
    hi: int | float | None = None


@dataclass(frozen=True)
class Exceeds:
    """``value > other``."""

    value: Num
    other: Num


Condition = Union[Between, Exceeds]


@dataclass(frozen=True)
class Subset:
    """The rows of ``split`` meeting ``condition`` (None: every row): a split of
    :meth:`~auditor.engines.polars_engine.PolarsOperations.subsets`."""

    split: str
    condition: Condition | None


@dataclass(frozen=True)
class Range:
    """Rows of a split with the value (``present``) and without it (``missing``), and the
    smallest and largest value (None when no row has one). Dates and datetimes give ints."""

    present: int
    missing: int
    min: Any
    max: Any


@dataclass(frozen=True)
class Tally:
    """One condition over one split: ``hits`` rows meet it, ``compared`` rows have every
    operand; ``largest``/``smallest``: the extreme ``value`` (for :class:`Between`) or
    ``value - other`` (for :class:`Exceeds`) among the hits, None without hits."""

    hits: int
    compared: int
    largest: Any = None
    smallest: Any = None


BUCKETED = 8
"""Conditions :class:`Between` on one value from which ``tallies`` counts them by bucket (one
group-by of the rows by the interval between consecutive bounds, instead of four aggregates
per condition: a 200-point CDF, as the time backtests ask, cost 800)."""


@dataclass(frozen=True)
class Buckets:
    """Conditions of one ``tallies`` call that are :class:`Between` on the same ``value``:
    their positions ``at`` in the call and ``bounds``, the distinct finite bounds, sorted.
    Bucket ``i`` (0 .. len(bounds)) holds the rows with ``bounds[i-1] <= value < bounds[i]``
    (no lower bound for the first, no upper one for the last)."""

    value: Num
    at: tuple[int, ...]
    bounds: tuple[int | float, ...]

    def tallies(self, conds: Sequence[Condition],
                per_bucket: Iterable[tuple[int, int, Any, Any]]) -> list[Tally]:
        """The :class:`Tally` of each condition from ``per_bucket`` (bucket, rows with a
        value, smallest and largest value) of the buckets holding rows: the same figures as
        counting each condition on its own."""
        k = len(self.bounds) + 1
        rows = np.zeros(k, dtype=np.int64)
        lows: list[Any] = [None] * k
        highs: list[Any] = [None] * k
        for b, n, lo, hi in per_bucket:
            rows[b], lows[b], highs[b] = n, lo, hi
        compared = int(rows.sum())
        out = []
        for i in self.at:
            c = conds[i]
            assert isinstance(c, Between)
            first = 0 if c.lo is None else self.bounds.index(c.lo) + 1
            last = len(self.bounds) if c.hi is None else self.bounds.index(c.hi)
            inside = range(first, last + 1)
            hits = int(rows[first:last + 1].sum())
            big = [highs[b] for b in inside if highs[b] is not None]
            small = [lows[b] for b in inside if lows[b] is not None]
            out.append(Tally(hits, compared, max(big) if big else None,
                             min(small) if small else None))
        return out


def bucketed(conds: Sequence[Condition]) -> tuple[list[Buckets], list[int]]:
    """The conditions of a ``tallies`` call counted by bucket (:class:`Between` on a value that
    at least :data:`BUCKETED` of them share, with finite bounds), and the positions of the
    others."""
    by_value: dict[Num, list[int]] = {}
    for i, c in enumerate(conds):
        if isinstance(c, Between) and all(b is None or math.isfinite(b) for b in (c.lo, c.hi)):
            by_value.setdefault(c.value, []).append(i)
    groups, rest = [], set(range(len(conds)))
    for value, at in by_value.items():
        if len(at) < BUCKETED:
            continue
        bounds = sorted({b for i in at for b in (conds[i].lo, conds[i].hi)  # type: ignore
                         if b is not None})
        groups.append(Buckets(value, tuple(at), tuple(bounds)))
        rest -= set(at)
    return groups, sorted(rest)


@dataclass(frozen=True)
class Examples:
    """Up to ``limit`` rows meeting a condition, as lists of the asked values. An engine that
    keeps row order (polars) gives the first rows by position and their ``positions`` (row
    numbers from 0); one that does not (Spark) gives the rows with the smallest values and no
    positions. ``ids``: the raw values of the asked id columns of the same rows (the rows as
    the user names them, on every engine)."""

    values: list[tuple[Any, ...]]
    positions: list[int] | None = None
    ids: dict[str, list[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class RecordMatch:
    """Rows of a later split whose key also occurs in an earlier split (``keyed``), and those
    among them equal, in every compared column, to a row of the earlier split with that key
    (``equal``); null equals null, NaN equals NaN and -0.0 equals 0.0."""

    keyed: int
    equal: int


@dataclass(frozen=True)
class DistinctValues:
    """A column over the union of every split: distinct non-missing values (exact) and the
    first ``limit`` of them as text, sorted."""

    distinct: int
    first: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ValueCounts:
    """A text column over every split: ``rows`` non-missing rows in all splits, and ``counts``
    (columns ``split``, ``order`` (the split's position), ``value`` (String), ``n`` (Int64)),
    sorted by order then value; with a ``shared_key``, only the values whose key is shared by
    another distinct value (in any split). ``over``: asked with ``partial=True``, the number of
    (split, value) counts of a column the engine did not bring over (its ``counts`` empty)
    because they exceed what its driver holds; 0 when they are all here."""

    rows: int
    counts: pl.DataFrame
    over: int = 0
    budget: int = 0  # the driver's budget of counts, where ``over``


Distribution = Union[Sample, Binned]
"""A numeric column of one split as :meth:`Operations.numeric_distributions` gives it: every
non-missing value sorted (:class:`~auditor.stats.drift.Sample`), or quantile sketches and counts
on a grid of values (:class:`~auditor.stats.drift_binned.Binned`) when they do not fit."""


@dataclass(frozen=True)
class SortedValues:
    """A numeric column of one split: ``rows``, ``missing`` (null and NaN) and the other
    values as float64, sorted."""

    rows: int
    missing: int
    values: np.ndarray



@dataclass(frozen=True)
class Values:
    """The values of the numeric (or boolean) ``column`` over the rows of ``splits``, read as
    float64 (null and NaN are no value), kept where every bound given holds: ``lo <= x <= hi``,
    ``|x - at| <= near``, ``|x - at| > far``. What :meth:`Operations.quantiles`,
    :meth:`Operations.order_statistics` and :meth:`Operations.most_repeated` read."""

    column: str
    splits: tuple[str, ...]
    lo: float | None = None
    hi: float | None = None
    at: float = 0.0
    near: float | None = None
    far: float | None = None


@dataclass(frozen=True)
class Bracket:
    """A quantile (:meth:`Operations.quantiles`): ``value``, and ``[lo, hi]`` holding the exact
    linear quantile. ``lo == hi``: exact, ``value`` is the quantile; ``lo < hi`` (a sketch):
    the bracket also holds the two order statistics the quantile interpolates, the bracket
    :meth:`Operations.order_statistics` refines."""

    lo: float
    value: float
    hi: float

    @property
    def exact(self) -> bool:
        return self.lo == self.hi


@dataclass(frozen=True)
class OrderStat:
    """The order statistics ``x_(k0)`` and ``x_(k1)`` (0-based ranks, ``k0 <= k1`` close
    together) of ``values``, which hold ``n`` values; ``bracket`` ``(lo, hi)``: an interval
    known to hold both (a :class:`Bracket` of :meth:`Operations.quantiles`), or None."""

    values: Values
    n: int
    k0: int
    k1: int
    bracket: tuple[float, float] | None = None


@dataclass(frozen=True)
class DriverData:
    """The splits as polars frames in this process, for a check whose statistic needs rows
    (a model fitted, nearest rows searched): ``data`` holds them with the run's roles;
    ``rows`` are the splits' full row counts, so ``sampled`` names the splits of which
    ``data`` holds only a sample."""

    data: "AuditData"
    rows: dict[str, int]

    # the conformance suite compares ``data`` frame by frame
    ENGINE_NATIVE: ClassVar[tuple[str, ...]] = ("data",)

    @property
    def kept(self) -> dict[str, int]:
        """Rows per split in ``data``."""
        return {s: self.data.rows(s) for s in self.rows}

    @property
    def sampled(self) -> list[str]:
        """The splits of which ``data`` holds fewer rows than the split has."""
        kept = self.kept
        return [s for s, n in self.rows.items() if kept[s] < n]


@dataclass(frozen=True)
class ClassRanks:
    """Ranked columns (numeric, boolean, datetime) against a class label, per split, over
    every labelled row (:meth:`Operations.class_ranks`).

    ``stats[split]``: :func:`auditor.stats.label.class_rank_stats` with moments (``n`` class
    sizes; per class and column ``count``, ``rank_sum``, ``rank_var``, ``mean``, ``var``;
    ``distinct``; ``cuts``), cut values in the units of the driver data's physical values.
    ``edges[j]``: train's candidate cuts of column j (None when train has no missing value
    there, so no cut is fitted); ``below[split][j]`` (E, K): the split's non-missing rows of
    each class at or below each of those edges (None where the split has no missing value).
    ``bins[j]``: 0 when the figures rest on every distinct value (exact), else the number of
    quantile bins the engine counted in (Spark beyond its exact budget): ties inside a bin
    then count half, and ``bin_error[split][j]`` bounds the AUC's error from them (binary
    label: sum_b H[b,1] H[b,0] / (2 n1 n0))."""

    columns: list[str]
    stats: dict[str, dict[str, Any]]
    edges: list[np.ndarray | None]
    below: dict[str, list[np.ndarray | None]]
    bins: list[int]
    bin_error: dict[str, list[float]]


@dataclass(frozen=True)
class LevelStats:
    """One column in one split against a class label, by level (missing values a level of
    their own): the ``levels`` present, the rows ``with_value`` and the bias-corrected
    Cramér's V of the (level, class) table (:func:`auditor.stats.numerics.cramers_v`)."""

    levels: int
    with_value: int
    cramers_v: float


@dataclass(frozen=True)
class ClassLevels:
    """:meth:`Operations.class_levels`: ``rows[split]`` (K,) labelled rows per class;
    ``stats[split][column]`` its :class:`LevelStats`."""

    rows: dict[str, np.ndarray]
    stats: dict[str, dict[str, LevelStats]]


@dataclass(frozen=True)
class SuiteResults:
    """A Great Expectations suite validated on every split by GX's own engine for the data
    (pandas for polars frames, GX's Spark execution engine on Spark: every row, no sample):
    ``unbuildable`` the expectations GX could not build, with its reason; ``results`` per
    split GX's per-expectation results as JSON (``ExpectationSuiteValidationResult``);
    ``rows`` per split."""

    unbuildable: list[tuple[dict[str, Any], str]]
    results: dict[str, list[dict[str, Any]]]
    rows: dict[str, int]


ROW_POSITIONS = ("partial_unexpected_index_list", "unexpected_index_list",
                 "unexpected_index_query")


def gx_results(suite: dict[str, Any], frames: Mapping[str, Any], rows: dict[str, int], *,
               spark: bool) -> SuiteResults:
    """``suite`` validated by GX on every frame (polars frames through GX's pandas engine,
    Spark DataFrames through its Spark engine): the one implementation of
    :meth:`Operations.validate_suite`; NotApplicable when GX is not installed."""
    from auditor.errors import NotApplicable
    from auditor.integrations.gx import SuiteRunner

    try:
        runner = SuiteRunner(suite, spark=spark)
    except ImportError as err:
        raise NotApplicable(str(err)) from None
    return SuiteResults(runner.unbuildable,
                        {s: without_row_positions(runner.validate(s, df))
                         for s, df in frames.items()}, rows)


def without_row_positions(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """GX's results without the row positions GX's pandas engine adds to a row-wise result
    (``partial_unexpected_index_list``...): an engine without row order has none, so no
    check may read them."""
    return [{**r, "result": {k: v for k, v in (r.get("result") or {}).items()
                             if k not in ROW_POSITIONS}} if "result" in r else r
            for r in results]


BatchFn = Callable[[pl.DataFrame, int], pl.DataFrame]
"""A function of a batch of rows (a polars frame) and the stored number of its first row,
returning a (small) polars frame: see :meth:`Operations.map_batches`."""

# rows per batch of ``map_batches`` on polars (Spark's batches are its Arrow batches)
EXACT_BAND = 0.10   # continuous_columns: sketched distinct counts within 10% of the cut are
# counted exactly (on either engine)
BATCH_ROWS = 65_536


@dataclass(frozen=True)
class CopySpec:
    """What ``leakage.duplicates`` compares rows on (:func:`auditor.detectors.copy_keys.
    row_copies`).

    ``cols``: compared as loaded (every role but ids, excluded, token and nested columns);
    ``as_text``: compared cast to strings (types differ across splits); ``text_cols``: free
    text, matched by word-shingle Jaccard >= ``text_jaccard`` for near copies; ``features``
    (empty when no label or only roles are compared): the columns a label conflict is read
    on, with ``label``; ``digits``: significant digits floats are rounded to for near copies;
    ``near``: whether near copies are measured (more than one split); ``max_examples``: rows
    kept per example list; ``natural_repeats``: the share of rows up to which records holding
    a measured value may repeat naturally (:func:`auditor.stats.copies.natural_repeats`);
    ``without``: a compared column (the declared time) the rows are also compared without,
    exact copies only (:attr:`RowCopies.without`), keyed in the same pass."""

    cols: tuple[str, ...]
    as_text: tuple[str, ...]
    text_cols: tuple[str, ...]
    features: tuple[str, ...]
    label: str | None
    digits: int
    text_jaccard: float
    near: bool
    max_examples: int
    natural_repeats: float = 0.0
    without: str | None = None


@dataclass(frozen=True)
class PairCopies:
    """One (earlier, later) pair of :class:`RowCopies`: ``copies`` later rows that exactly
    copy an earlier row and the chance baseline of that count (``chance``:
    :func:`auditor.stats.copies.chance_verdict`, or ``{"baseline": 0.0, ...}`` when the
    earlier rows do not repeat naturally); ``near`` later rows that are near but not exact
    copies (None when not measured); ``conflicts`` later rows whose features occur in the
    earlier split with another label. ``*_examples``: at most ``max_examples`` rows each, the
    first later rows by row number, named by their row numbers and declared ids (the same on
    every engine); ``near_summary``: the Jaccard of the free-text columns over every near pair
    (polars)."""

    copies: int
    chance: dict[str, Any]
    near: int | None
    conflicts: int
    examples: list[dict[str, Any]] = field(default_factory=list)
    near_examples: list[dict[str, Any]] = field(default_factory=list)
    near_summary: dict[str, Any] = field(default_factory=dict)
    conflict_examples: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class SplitCopies:
    """One split of :class:`RowCopies`: ``repeated`` rows that exactly copy another row of
    the split; ``conflicts`` rows in ``groups`` groups of equal features holding more than one
    label; ``continuous``: the compared columns that are continuous in the split (not boolean,
    at least half of the non-null values distinct), measured only where a grade reads it
    (some row repeats or conflicts), else None."""

    repeated: int
    conflicts: int
    groups: int
    continuous: tuple[str, ...] | None
    examples: list[dict[str, Any]] = field(default_factory=list)
    conflict_examples: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class RowCopies:
    """:func:`auditor.detectors.copy_keys.row_copies`: per split and per (earlier, later) pair
    of the roles' splits; ``not_matched``: the free-text columns the engine did not match
    near copies on (Spark: MinHash is polars-only), empty when it did; ``without``: the
    copies of the rows compared without ``CopySpec.without`` (when set): its splits' counts
    only, and a pair's chance baseline and examples only where it copies more later rows than
    the exact copies do (what the judge grades)."""

    splits: dict[str, SplitCopies]
    pairs: dict[tuple[str, str], PairCopies]
    not_matched: tuple[str, ...] = ()
    without: "RowCopies | None" = None  # exact copies on every column but ``spec.without``


@dataclass(frozen=True)
class Matches:
    """What :meth:`Operations.matches` returns: the joined rows, and the rows of each side
    that ``keep`` named."""

    joined: pl.DataFrame
    left: pl.DataFrame
    right: pl.DataFrame


@dataclass(frozen=True)
class Expansion:
    """The rows ``fn`` makes of each batch of ``split``'s ``columns`` (called as in
    :meth:`Operations.map_batches`, cast to ``schema``), which the engine keeps rather than
    bringing here: one side of :meth:`Operations.matches`. ``key``: when given, the engine
    makes the rows once and keeps them until :meth:`Operations.release` (a side matched
    twice, such as an evaluation split's hashes)."""

    split: str
    columns: tuple[str, ...]
    fn: BatchFn
    schema: tuple[tuple[str, Any], ...]
    key: Any = None
    # rows per batch where the engine cuts its own batches (polars; Spark's are its Arrow
    # batches): what one call of ``fn`` may hold (None: the engine's BATCH_ROWS)
    batch_rows: int | None = None
    # whether batches may be made at the same time (polars: on its threads; Spark's executors
    # always do): for a ``fn`` whose temporaries are small next to its batch (row keys)
    concurrent: bool = False

    @property
    def types(self) -> dict[str, Any]:
        return dict(self.schema)


def conform(frame: pl.DataFrame, schema: Mapping[str, Any]) -> pl.DataFrame:
    """``frame`` with exactly ``schema``'s columns, in its order and types (a column the frame
    lacks is null)."""
    if not frame.width:
        return pl.DataFrame(schema=dict(schema))
    return frame.select([(pl.col(c) if c in frame.columns else pl.lit(None)).cast(t).alias(c)
                         for c, t in schema.items()])


def summed_columns(schema: Mapping[str, Any], sum_by: Sequence[str]) -> list[str]:
    """The columns ``map_batches`` sums under ``sum_by``: every other one, each numeric."""
    out = [c for c in schema if c not in sum_by]
    bad = [c for c in out if not schema[c].is_numeric()]
    if bad:
        raise ValueError(f"map_batches: sum_by leaves non-numeric columns to sum: {bad}")
    return out


class RunMemo:
    """:meth:`Operations.cached` for an engine object that lives for one run."""

    def cached(self, key: Any, compute: Callable[[], Any]) -> Any:
        memo: dict[Any, Any] = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            memo[key] = compute()
        return memo[key]


class ValueOps(Protocol):
    """An engine's value operations as functions of its frames by split: the modules
    :mod:`auditor.engines.polars_values` and :mod:`auditor.engines.spark_values`."""

    def quantiles(self, frames: Any, requests: Sequence[tuple[Values, int]],
                  qs: Sequence[float]) -> list[list[Bracket]]: ...

    def order_statistics(self, frames: Any, requests: Sequence[OrderStat]
                         ) -> list[tuple[float, float]]: ...

    def most_repeated(self, frames: Any, values: Sequence[Values]) -> list[int]: ...

    def distinct_counts(self, frames: Any, columns: Sequence[str], splits: Sequence[str], *,
                        missing_level: bool = False) -> dict[str, int]: ...

    def level_spreads(self, frames: Any, key: str, columns: Sequence[str],
                      splits: Sequence[str]) -> dict[str, tuple[int, int]]: ...


class FrameOps(RunMemo):
    """What every engine answers the same way from ``frames`` (split -> its table): the split
    names, their columns, and the value operations of its :class:`ValueOps` module."""

    frames: Mapping[str, Any]
    value_ops: ValueOps

    def split_names(self) -> list[str]:
        return list(self.frames)

    def columns(self, split: str) -> list[str]:
        return list(self.frames[split].columns)

    def quantiles(self, values: Sequence[tuple[Values, int]], qs: Sequence[float]
                  ) -> list[list[Bracket]]:
        return self.value_ops.quantiles(self.frames, values, qs)

    def order_statistics(self, requests: Sequence[OrderStat]) -> list[tuple[float, float]]:
        return self.value_ops.order_statistics(self.frames, requests)

    def most_repeated(self, values: Sequence[Values]) -> list[int]:
        return self.value_ops.most_repeated(self.frames, values)

    def distinct_counts(self, columns: Sequence[str], splits: Sequence[str], *,
                        missing_level: bool = False) -> dict[str, int]:
        return self.value_ops.distinct_counts(self.frames, columns, splits,
                                              missing_level=missing_level)

    def level_spreads(self, key: str, columns: Sequence[str], splits: Sequence[str]
                      ) -> dict[str, tuple[int, int]]:
        return self.value_ops.level_spreads(self.frames, key, columns, splits)


@runtime_checkable
class Operations(Protocol):
    """The batched operations (every split in one call)."""

    name: str

    def release(self) -> None:
        """Drop what the operations kept for reuse within one check's measure (key tables);
        called after every measure, so that their memory serves the next check."""
        ...

    def cached(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per run, shared by the checks that ask for the same ``key``
        (small results several checks read, such as the token layout's aggregates)."""
        ...

    def map_batches(self, columns: Sequence[str], fn: BatchFn, schema: Mapping[str, Any], *,
                    sum_by: Sequence[str] | None = None, splits: Sequence[str] | None = None
                    ) -> dict[str, pl.DataFrame]:
        """Per split (of ``splits`` when given, else every split): ``fn(batch, first_row)``
        on the split's ``columns`` in batches of rows (``first_row``: the batch's first stored
        row number, from 0), the returned frames cast to ``schema`` (a dict of polars types)
        and concatenated; a split without rows gives an empty frame. With ``sum_by``, rows
        equal in those columns are merged into one whose other (numeric) columns are summed
        (null keys are equal), the row order then being unspecified: on Spark the merge runs
        on the executors before anything is collected.
        The engine brings every returned row to this process, so ``fn`` must reduce:
        partial aggregates a check merges (sums, count tables), a few flagged rows.
        Batch boundaries are the engine's (polars: :data:`BATCH_ROWS`; Spark: its Arrow
        batches), so what a check merges must not depend on them. On Spark ``fn`` runs on the
        executors (``mapInArrow``): it must be picklable (a module-level function, or a
        ``functools.partial`` of one over picklable arguments). Token columns arrive as the
        engine holds them (a polars ``Array`` or ``List``; Spark gives ``List``)."""
        ...

    def write_without(self, split: str, rows: np.ndarray, target: Path, *, within: Path
                      ) -> int:
        """Write ``split`` without the rows ``rows`` (0-based stored row numbers), in stored
        order, to ``target`` (Parquet, confined to the folder ``within``, atomically: a
        temporary name renamed when complete); the rows written. Polars writes one file from
        the input file read again as stored (the loaded frame has harmonised types; a split
        given in memory is written as given); Spark writes a Parquet folder. Raises OSError."""
        ...

    def matches(self, left: Expansion, right: Expansion, on: Sequence[str], *, order: str,
                limit: int, keep: tuple[str, Any] | None = None) -> Matches:
        """The rows of ``right`` joined with the distinct rows of ``left`` that hold the same
        ``on`` values, of which only the ``limit`` smallest in ``left``'s column ``order`` per
        key (ties broken by the rest of the row) are joined: columns ``on``, then ``right``'s
        others, then ``left``'s others (their names must differ). ``keep`` (column, value):
        the rows of either side holding that value come back as they are instead (facts a
        function notes about its documents in the same pass). What comes here is the matches
        and the kept rows, never a side whole: polars makes ``left`` a batch at a time, each
        semi-joined with ``right``'s keys at once (the n-grams of a training split are never
        all held); Spark joins on the executors and collects the result."""
        ...

    def split_rows(self, *, with_reference: bool = False) -> dict[str, int]:
        """Rows per split (and of the reference snapshot, named ``reference``, when asked and
        present)."""
        ...

    def driver_data(self) -> DriverData:
        """Every split as polars frames in this process (see :class:`DriverData`): on polars
        the loaded data itself (nothing copied); on Spark a seeded sample stratified by the
        label, at most the engine's driver budget of rows per split (``spark_sample_rows``),
        collected once per run."""
        ...

    def validate_suite(self, suite: dict[str, Any]) -> SuiteResults:
        """``suite`` (as :func:`auditor.integrations.gx.read_suite` reads it) validated by
        Great Expectations on every split; NotApplicable when GX is not installed."""
        ...

    def ranges(self, values: Sequence[Num], *, with_reference: bool = False
               ) -> dict[str, dict[Num, Range]]:
        """Per split (and the reference when asked) and value: present and missing rows, min
        and max (one pass per split)."""
        ...

    def tallies(self, conditions: Mapping[str, Sequence[Condition]]
                ) -> dict[str, list[Tally]]:
        """Per split (``reference`` names the reference snapshot), one :class:`Tally` per
        condition asked for it (one pass per split)."""
        ...

    def examples(self, split: str, condition: Condition, values: Sequence[Num],
                 limit: int, *, ids: Sequence[str] = ()) -> Examples:
        """Rows of ``split`` meeting ``condition``, with the raw values of the columns
        ``ids`` (see :class:`Examples`)."""
        ...

    def key_summaries(self, columns: Sequence[str]) -> dict[str, dict[str, KeySummary]]:
        """Per split and single-column key: rows, rows with the key, distinct keys (a missing
        value is no key; NaN is missing)."""
        ...

    def key_overlaps(self, columns: Sequence[str], pairs: Sequence[tuple[str, str]], *,
                     max_examples: int = 20) -> dict[tuple[str, str, str], KeyOverlap]:
        """Per (column, earlier, later): the keys of ``later`` also in ``earlier`` (a missing
        value is no key; -0.0 is 0.0), the rows holding them in each split, and the
        ``max_examples`` keys with the most later rows (then the most earlier rows, then by
        text); the ``top`` frame's columns are ``key``, ``rows_earlier`` and ``rows_later``
        whatever the column is called."""
        ...

    def record_matches(self, key: str, compare: Sequence[str],
                       pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], RecordMatch]:
        """Per pair: later rows sharing a ``key`` value with earlier, and those equal to such
        an earlier row in every ``compare`` column (see :class:`RecordMatch`)."""
        ...

    def distinct_values(self, columns: Sequence[str], *, limit: int = 0
                        ) -> dict[str, DistinctValues]:
        """Per column over the union of the splits (see :class:`DistinctValues`); NaN is
        missing."""
        ...

    def sorted_values(self, columns: Sequence[str], *, with_reference: bool = False
                      ) -> dict[str, dict[str, SortedValues]]:
        """Per column and split, every non-missing value sorted (as float64; the driver holds
        them all: for columns whose exact distribution a verdict reads, such as a numeric
        label)."""
        ...

    def numeric_distributions(self, kinds: Mapping[str, Kind], *, n_bins: int,
                              with_reference: bool = False
                              ) -> Iterator[dict[str, dict[str, Distribution]]]:
        """Numeric and datetime columns (``kinds``: column -> kind) of every split (and the
        reference when asked), in batches of columns the engine chooses: each item maps split
        -> column -> :data:`Distribution`; the caller drops a batch before asking the next, so
        the engine holds one batch's values at a time. Values are read as float64: datetimes
        as seconds since the epoch, durations as their ticks; null and NaN are missing, -0.0
        is 0.0. Exact sorted values where they fit in this process (polars: always, a few
        columns at a time); otherwise sketches whose PSI bins are the reference's exact
        quantiles at j / ``n_bins`` up to the sketch's rank error (Spark beyond its driver
        budget, every column in one batch)."""
        ...

    def unseen_values(self, split: str, refs: Mapping[str, np.ndarray], kinds: Mapping[str, Kind],
                      *, limit: int) -> dict[str, tuple[list[tuple[float, int]], int]]:
        """Per column of ``refs`` (column -> the reference's distinct values), the values of
        ``split`` not among them, read as :meth:`numeric_distributions` reads them: the
        ``limit`` most frequent (rows, then value) with their rows, and how many distinct."""
        ...

    def all_unique(self, kinds: Mapping[str, Kind], splits: Sequence[str]
                   ) -> dict[str, dict[str, bool]]:
        """Per split and column: whether every non-missing value occurs once (exact; values
        read as :meth:`numeric_distributions` reads them)."""
        ...

    def class_ranks(self, label: str, classes: Sequence[Any], columns: Sequence[str]
                    ) -> ClassRanks:
        """Rank statistics of ``columns`` against the class label ``label`` (``classes``:
        its classes, sorted, as the driver data codes them; NotApplicable when every row's
        classes differ, a class too rare for the driver's sample) in every split, over every
        labelled row: exact on polars; on Spark exact while a column's distinct values fit
        the engine's budget, else counted in quantile bins with the error bound stated."""
        ...

    def class_levels(self, label: str, classes: Sequence[Any], columns: Sequence[str]
                     ) -> ClassLevels:
        """Per split and column, the (level, class) table's :class:`LevelStats` over every
        labelled row (values read as text levels; NaN missing, -0.0 as 0.0); the tables stay
        in the engine, so a column of a million levels costs the driver one row."""
        ...

    def target_rate_aucs(self, label: str, classes: Sequence[Any], columns: Sequence[str],
                         smoothing: float) -> dict[str, dict[str, float]]:
        """Binary label: per column and later split, the AUC of the split's labelled rows
        scored by the column's smoothed target rate fitted on every train row ((positives_l
        + m p) / (n_l + m), m = ``smoothing``, p the train positive rate; unseen levels at
        p, or 0 when m = 0; missing a level): :func:`auditor.stats.label.held_out_aucs`."""
        ...

    def columns(self, split: str) -> list[str]:
        """Column names of a split, in order."""
        ...

    def kept(self, expansions: Sequence[Expansion], *, persist: bool = True
             ) -> "nw.LazyFrame[Any]":
        """The rows each :class:`Expansion` makes of its split, stacked (the schemas must be
        equal), kept by the engine until :meth:`release` and handed back as a narwhals lazy
        frame to query there (polars: in memory; Spark: persisted on the executors): rows
        reduced to keys once, then counted as often as a check asks. Without ``persist`` a
        lazy engine computes them for the one query that reads them."""
        ...

    def keep(self, frame: "nw.LazyFrame[Any]", *, run: bool = False) -> "nw.LazyFrame[Any]":
        """``frame`` (a query over :meth:`kept` rows) computed once and kept until
        :meth:`release` (with ``run``: until the run ends, for the checks after this one to
        read through :meth:`cached`), for several queries to read."""
        ...

    def rows_at(self, split: str, rows: np.ndarray, columns: Sequence[str]) -> pl.DataFrame:
        """``columns`` of the rows ``rows`` (stored row numbers, from 0) of ``split``, in
        the order asked (a few example rows: Spark scans the split once)."""
        ...

    def continuous_columns(self, columns: Sequence[str], splits: Sequence[str], *,
                           share: float = 0.5) -> dict[str, list[str]]:
        """Per split, the ``columns`` with n > 1 non-null values of which at least ``share`` n
        are distinct (NaN a value): measurements, timestamps, free text, fine-grained codes.
        Both engines sketch the distinct counts (HyperLogLog) and count exactly the columns
        whose sketch lies within :data:`EXACT_BAND` of the cut (on Spark, one stacked
        aggregate)."""
        ...

    def near_text_copies(self, earlier: str, later: str, spec: CopySpec,
                         exact_rows: Callable[[], np.ndarray],
                         near_keys: Callable[[str], np.ndarray]
                         ) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
        """Near copies with free-text columns (``spec.text_cols``: word-shingle MinHash, LSH
        and exact Jaccard >= ``spec.text_jaccard``, the other columns equal after
        normalisation): later rows near an earlier row, not among ``exact_rows()`` (the later
        rows copying an earlier one exactly); examples and the Jaccard summary.
        ``near_keys(split)``: the key of the other columns normalised, per row of a split
        (the candidates' blocks; verified value by value). Polars only: Spark raises
        NotImplementedError (the check says so)."""
        ...

    def quantiles(self, values: Sequence[tuple[Values, int]], qs: Sequence[float]
                  ) -> list[list[Bracket]]:
        """Per request ``(values, n)`` (``n``: how many values it holds, > 0), the linear
        quantile at each of ``qs`` as a :class:`Bracket`: exact on polars; on Spark a
        ``percentile_approx`` sketch (rank error <= n / 10,000) with a bracket a few rank
        errors wide around the two order statistics, refined by :meth:`order_statistics`
        where a verdict reads it (one pass over the splits for every request)."""
        ...

    def order_statistics(self, requests: Sequence[OrderStat]) -> list[tuple[float, float]]:
        """Per :class:`OrderStat`, its two order statistics, exact (Spark: the distinct values
        inside a bracket with their counts and the exact count below it, the bracket widened
        when it missed; the driver holds a few rank errors' worth of values per request)."""
        ...

    def most_repeated(self, values: Sequence[Values]) -> list[int]:
        """Per request, the rows of the value held most often among ``values`` (0 when none);
        the counts stay in the engine."""
        ...

    def distinct_counts(self, columns: Sequence[str], splits: Sequence[str], *,
                        missing_level: bool = False) -> dict[str, int]:
        """Per column, its distinct values over the rows of ``splits`` (null and NaN are
        missing), plus one when ``missing_level`` and some row is missing (one pass)."""
        ...

    def level_spreads(self, key: str, columns: Sequence[str], splits: Sequence[str]
                      ) -> dict[str, tuple[int, int]]:
        """Per column, over the rows of ``splits`` grouped by ``key`` (null a level of its
        own): the levels holding a value of the column (null and NaN are none) and the most
        distinct values one level holds (1 everywhere: the column is a function of the key).
        The groups stay in the engine."""
        ...

    def value_counts(self, columns: Sequence[str], *,
                     shared_key: Callable[[pl.Expr], pl.Expr] | None = None,
                     with_reference: bool = False, partial: bool = False
                     ) -> dict[str, ValueCounts]:
        """Rows per (split, value) of columns read as text (NaN is missing, as null); the
        reference snapshot is a split named ``reference`` when asked and present (see
        :class:`ValueCounts`). Counts beyond what the engine's driver holds raise
        NotApplicable, or with ``partial`` leave out whole columns, those with the most
        counts first, each with its ``over`` count. ``shared_key``
        is a polars expression function of the value (a module-level function: Spark ships it
        to its workers and runs it on Arrow batches of the distinct values), so the driver
        receives only the values that share a key, not every distinct value."""
        ...
