"""The engine boundary: the few measuring operations a detector needs over all rows.

A detector *measures* (reduces every row to a small aggregate) and then *judges* (grades the
aggregate into findings). The measuring half goes through the batched operations of
:class:`~auditor.engines.operations.Operations` (over many columns and every split at once),
implemented once per engine: :class:`~auditor.engines.polars_engine.PolarsEngine` (one machine,
the default) and :class:`~auditor.engines.spark_engine.SparkEngine` (Apache Spark). The judging
half is plain Python that never sees an engine. Every operation returns an aggregate whose size
does not depend on the row count (counts, key tables), except the capped example
lists (``max_examples``) and the stated sample of :meth:`Engine.stratified_sample`.

Semantics shared by both engines (the parity tests in ``tests/engines`` hold them to it):

- a *split* is one named table; operations name splits, never files;
- a float NaN is a missing value (counted with nulls) in every operation except row keys,
  where null equals null and NaN equals NaN (two rows are copies whatever they hold);
- keys compare by value with null-safe equality; ``-0.0`` equals ``0.0``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

import polars as pl

ENGINES = ("polars", "spark")
NOT_ON_SPARK = "not yet implemented on the spark engine"


@dataclass(frozen=True)
class KeySummary:
    """Per split and key column: ``rows`` of the split, ``keyed_rows`` holding a key (the
    column non-missing: null and NaN are no key), ``distinct`` keys among them and
    ``repeated_rows`` = keyed_rows - distinct (rows that repeat a key seen earlier in the
    split)."""

    rows: int
    keyed_rows: int
    distinct: int
    rows_in_repeated: int = 0  # rows whose key occurs at least twice in the split
    sum_squares: int = 0       # sum over keys of (rows per key) squared

    @property
    def repeated_rows(self) -> int:
        return self.keyed_rows - self.distinct

    @property
    def missing_rows(self) -> int:
        return self.rows - self.keyed_rows


@dataclass(frozen=True)
class KeyOverlap:
    """A semi-join of two splits on a key: ``shared`` keys present in both, the rows of each
    split that hold one (``rows_earlier``, ``rows_later``) and ``top``: at most ``max_examples``
    shared keys with their row counts (columns ``key``, ``rows_earlier``,
    ``rows_later``), most rows in the later split first, ties by rows in the earlier split, then
    by the key's text."""

    shared: int
    rows_earlier: int
    rows_later: int
    top: pl.DataFrame


@runtime_checkable
class Engine(Protocol):
    """An engine's named tables (``splits``) and its driver-side sample; the measuring
    operations are :class:`~auditor.engines.operations.Operations`."""

    name: str

    def split_names(self) -> list[str]:
        """The splits, in their declared order."""
        ...

    def columns(self, split: str) -> list[str]:
        """Column names of a split, in order."""
        ...

    def rows(self, split: str) -> int:
        """Row count of a split (a global count: one pass, no shuffle)."""
        ...

    def stratified_sample(self, split: str, rows: int, *, by: str | None = None,
                          seed: int = 0, columns: Sequence[str] | None = None) -> pl.DataFrame:
        """A seeded sample of about ``rows`` rows collected to the driver as polars, each value
        of ``by`` keeping its share (a per-stratum Bernoulli fraction rows/total; every row when
        the split has at most ``rows`` rows). The driver holds this sample, nothing else."""
        ...
