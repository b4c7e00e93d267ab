"""What a check may know about the data without touching it: the splits, their sizes and the
columns' roles, kinds and types. Engine-free: the same :class:`Roles` describes polars frames
and Spark tables, so a check's ``measure`` and ``judge`` halves never ask which engine runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Callable, ClassVar, Protocol, Sequence

from auditor.core.config import Columns, Tokens


REFERENCE = "reference"  # the name of the reference snapshot among the tables (scheduled mode)


class Kind(StrEnum):
    """How a column is treated by detectors."""

    NUMERIC = "numeric"
    BOOLEAN = "boolean"
    CATEGORICAL = "categorical"
    DATETIME = "datetime"
    TEXT = "text"
    NESTED = "nested"
    NULL = "null"


class LabelKind(StrEnum):
    BINARY = "binary"
    MULTICLASS = "multiclass"
    NUMERIC = "numeric"


class ColumnType(StrEnum):
    """A column's physical type in words every engine maps its own types to (polars ``Int32``
    and Spark ``IntegerType`` are both ``integer``). A check that must know more than the
    :class:`Kind` (an integer id, a zoned timestamp) reads this."""

    INTEGER = "integer"
    FLOAT = "float"
    DECIMAL = "decimal"
    BOOLEAN = "boolean"
    STRING = "string"
    DATE = "date"
    DATETIME = "datetime"        # naive: read as UTC
    DATETIME_TZ = "datetime_tz"  # zoned: compared in UTC
    DURATION = "duration"
    NESTED = "nested"
    NULL = "null"
    OTHER = "other"


_NUMBERS = {ColumnType.INTEGER, ColumnType.FLOAT, ColumnType.DECIMAL, ColumnType.DURATION}
_TIMES = {ColumnType.DATE, ColumnType.DATETIME, ColumnType.DATETIME_TZ}


def common_type(types: Sequence[ColumnType]) -> ColumnType | None:
    """The type a column compared across splits is read as, from its type in each split; None
    when the types are incompatible. The rule every loader applies (each in its own types):

    - ``null`` (a column with no value in that split) joins any type; all ``null``: ``null``;
    - numbers with numbers or booleans: ``integer`` when every split holds integers or
      booleans, else ``float`` (a decimal, a float or a duration among them);
      booleans alone: ``boolean``;
    - dates and datetimes: one of them alone keeps it; mixed: ``datetime_tz`` when any split is
      zoned, else ``datetime``;
    - any other type only with itself (``string``; ``nested`` and ``other`` never)."""
    kinds = set(types) - {ColumnType.NULL}
    if not kinds:
        return ColumnType.NULL
    if len(kinds) == 1:
        (only,) = kinds
        return None if only in (ColumnType.NESTED, ColumnType.OTHER) else only
    if kinds <= _NUMBERS | {ColumnType.BOOLEAN} and kinds & _NUMBERS:
        return (ColumnType.INTEGER if kinds <= {ColumnType.INTEGER, ColumnType.BOOLEAN}
                else ColumnType.FLOAT)
    if kinds <= _TIMES:
        return ColumnType.DATETIME_TZ if ColumnType.DATETIME_TZ in kinds else \
            ColumnType.DATETIME
    return None


@dataclass
class SchemaIssue:
    """A difference between splits that the audit survived (reported by schema.consistency).
    ``dtypes`` and the ``message`` of a type issue name the engine's own types."""

    ENGINE_NATIVE: ClassVar[tuple[str, ...]] = ("message", "dtypes")

    severity: str  # info | warn | fail
    column: str
    problem: str  # missing | dtype | nested | null_type | cast
    message: str
    splits: list[str] = field(default_factory=list)
    dtypes: dict[str, str] = field(default_factory=dict)


def missing_column_issue(col: str, present: list[str], missing: list[str],
                         paths: dict[str, str | None], severity: str = "fail") -> SchemaIssue:
    """The issue of a column some splits lack (the file that lacks it is named); the same
    words on every engine."""
    return SchemaIssue(
        severity, col, "missing",
        f"column {col!r} is in {', '.join(present)} but missing from "
        f"{', '.join(f'{n} ({paths[n]})' if paths.get(n) else n for n in missing)}; "
        "it is left out of cross-split checks", splits=missing)


def incompatible_types_issue(col: str, dtypes: dict[str, str]) -> SchemaIssue:
    """The issue of a column whose types across splits cannot be harmonised (``dtypes``: the
    engine's own type names per split)."""
    return SchemaIssue(
        "fail", col, "dtype",
        f"column {col!r} has incompatible types across splits "
        f"({', '.join(f'{n}: {d}' for n, d in dtypes.items())}); it is left out "
        "of cross-split checks", splits=list(dtypes), dtypes=dict(dtypes))


def cast_issue(col: str, dtypes: dict[str, str], target: str) -> SchemaIssue:
    """The note that a column's types differ across splits but are compatible (``dtypes``:
    the engine's own type names per split; ``target``: the type it is compared as)."""
    return SchemaIssue(
        "info", col, "cast",
        f"column {col!r} has compatible but different types across splits "
        f"({', '.join(f'{n}: {d}' for n, d in dtypes.items())}); compared as {target}",
        splits=list(dtypes), dtypes=dict(dtypes))


@dataclass(frozen=True)
class BenchmarkSet:
    """One public evaluation set of ``benchmarks:``
    (:func:`auditor.loading.benchmarks.read_benchmark`): its ``name``, ``path``, the text
    ``fields`` of a problem, per problem its id and the text of each field (``ids`` and
    ``texts`` in file order, ``texts[i][j]`` field j of problem i, None when missing), and the
    SHA-256 of the file (of its files in name order, for a folder): which version was read."""

    name: str
    path: str
    fields: tuple[str, ...]
    ids: tuple[str, ...]
    texts: tuple[tuple[str | None, ...], ...]
    sha256: str = ""


@dataclass(frozen=True)
class Roles:
    """The splits (in their declared order, which is their time order of use), rows per split,
    and per column its role (``columns``), kind and type. ``kinds`` and ``types`` hold the
    columns present in every split with one harmonised type; ``features`` are the columns in no
    declared role (nor token, nested or all-null columns)."""

    splits: tuple[str, ...]
    rows: dict[str, int]
    columns: Columns
    kinds: dict[str, Kind]
    types: dict[str, ColumnType]
    features: tuple[str, ...]
    label_kind: LabelKind | None = None
    tokens: Tokens | None = None
    seed: int = 0
    order: tuple[str, ...] = field(default=())  # the common columns in the first split's order
    # differences between splits the loader survived (reported by schema.consistency)
    schema_issues: tuple[SchemaIssue, ...] = ()
    # every column of the first split with the engine's own name of its type (shown, not judged)
    schema: tuple[tuple[str, str], ...] = ()
    reference: bool = False  # a reference snapshot (scheduled mode): every split is compared to it
    # the Great Expectations suite named by ``expectations:`` (read by auditor.integrations.gx)
    expectations: dict[str, Any] | None = None
    # pipeline code named by ``pipeline:`` (scanned by leakage.preprocessing)
    pipeline: tuple[str, ...] = ()
    # splits whose label is missing in every row (an unlabelled evaluation split, e.g. a
    # competition's test set): label-based checks leave them out and say so; without labels
    # in the first split (the one models are fitted on) they skip with the reason
    unlabelled: tuple[str, ...] = ()
    # the split design declared in audit.yaml (``split:``); None: inferred from the data
    # (auditor.judging.design.split_design)
    split: str | None = None
    # the public evaluation sets of ``benchmarks:`` (looked for by tokens.benchmarks)
    benchmarks: tuple[BenchmarkSet, ...] = ()

    @property
    def label(self) -> str | None:
        return self.columns.label

    def pairs(self) -> list[tuple[str, str]]:
        """Every (earlier, later) pair of splits in their declared order."""
        names = self.splits
        return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]

    def features_of(self, *kinds: Kind) -> list[str]:
        return [c for c in self.features if self.kinds.get(c) in kinds]

    def labelled_splits(self) -> list[str]:
        """The splits holding at least one labelled row, in their declared order (the first
        split's label view raises NotApplicable when it has none)."""
        return [s for s in self.splits if s not in self.unlabelled]

    def common_columns(self) -> list[str]:
        """Columns present in every split with a harmonised type, in the first split's order."""
        return list(self.order) if self.order else list(self.kinds)

    def duplicate_columns(self) -> list[str]:
        """Columns that define a row for duplicate detection: everything but ids, excluded,
        token and nested columns; a ``tokens:`` section's text column is the document, so it
        is compared (without it the rows of a token dataset were compared on what the
        tokenizer left over, a language tag: every row a "copy")."""
        skip = set(self.columns.ids) | set(self.columns.exclude)
        if self.tokens:
            skip |= set(self.tokens.columns()) - {self.tokens.text}
        return [c for c in self.common_columns() if c not in skip
                and self.kinds.get(c) != Kind.NESTED]


class LoadedData(Protocol):
    """What either engine's loaded data offers the runner: the engine-free :class:`Roles` and a
    per-run cache (polars :class:`~auditor.loading.data.AuditData`, Spark
    :class:`~auditor.engines.spark_io.SparkAuditData`)."""

    @property
    def roles(self) -> Roles: ...

    def cached(self, key: Any, factory: Callable[[], Any]) -> Any: ...
