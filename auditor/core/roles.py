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


def label_kind_of(distinct: int, *, numeric: bool, fractional: bool) -> LabelKind:
    """The rule both loaders apply to a label's values (null and NaN left out): binary with at
    most 2 distinct values; numeric when the values are numbers and some hold a fraction or
    more than 20 are distinct; multiclass otherwise (strings, booleans, up to 20 whole
    numbers)."""
    if distinct <= 2:
        return LabelKind.BINARY
    if numeric and (fractional or distinct > 20):
        return LabelKind.NUMERIC
    return LabelKind.MULTICLASS


_KIND_OF_TYPE = {ColumnType.NULL: Kind.NULL, ColumnType.BOOLEAN: Kind.BOOLEAN,
                 ColumnType.INTEGER: Kind.NUMERIC, ColumnType.FLOAT: Kind.NUMERIC,
                 ColumnType.DECIMAL: Kind.NUMERIC, ColumnType.DURATION: Kind.NUMERIC,
                 ColumnType.STRING: Kind.CATEGORICAL, ColumnType.DATE: Kind.DATETIME,
                 ColumnType.DATETIME: Kind.DATETIME, ColumnType.DATETIME_TZ: Kind.DATETIME}


def kind_of_type(t: ColumnType) -> Kind:
    """How a column of type ``t`` is treated: numbers (decimals and durations too) numeric,
    strings categorical, dates and times datetime, anything else (lists, structs, binary,
    times of day) nested."""
    return _KIND_OF_TYPE.get(t, Kind.NESTED)


@dataclass
class Harmonised:
    """The loaders' reading of the splits' column types (:func:`harmonise_types`): each
    column's kind, the type each compared column is read as in every split (``targets``:
    its common type, and whether the splits holding values share one engine type, which is
    then kept) and the issues of the columns some splits lack or whose types differ."""

    kinds: dict[str, Kind]
    targets: dict[str, tuple[ColumnType, bool]]
    issues: list[SchemaIssue]


def harmonise_types(types: dict[str, dict[str, ColumnType]], names: dict[str, dict[str, str]],
                    *, token_cols: set[str], paths: dict[str, str | None],
                    target_name: Callable[[ColumnType], str]) -> Harmonised:
    """The rule both loaders apply, in every engine's types: ``types`` per split and column
    (a column with no value in a split read as ``null``), ``names`` the engine's own type
    names; columns in the first split's order, then the others'. A column missing from some
    split is left out (a ``fail`` issue; ``warn`` when only the reference snapshot lacks it);
    a token column keeps its kind; types that :func:`common_type` cannot join are left out
    (``fail``) unless nested somewhere (then nested); a column null everywhere is ``null``;
    otherwise it is read as its common type, an ``info`` issue naming every split's type when
    the splits holding values differ (``target_name``: the engine's name of the type a common
    type is cast to)."""
    splits = list(types)
    order = list(dict.fromkeys(c for n in splits for c in types[n]))
    kinds: dict[str, Kind] = {}
    targets: dict[str, tuple[ColumnType, bool]] = {}
    issues: list[SchemaIssue] = []
    for col in order:
        present = [n for n in splits if col in types[n]]
        missing = [n for n in splits if n not in present]
        if missing:
            issues.append(missing_column_issue(col, present, missing, paths,
                                               "warn" if REFERENCE in missing else "fail"))
            continue
        per_split = {kind_of_type(types[n][col]) for n in splits}
        target = common_type([types[n][col] for n in splits])
        if col in token_cols or (target is None and Kind.NESTED in per_split):
            kinds[col] = Kind.NESTED if Kind.NESTED in per_split else per_split.pop()
            continue
        if target is None:
            issues.append(incompatible_types_issue(col, {n: names[n][col] for n in splits}))
            continue
        if target == ColumnType.NULL:
            kinds[col] = Kind.NULL
            continue
        shared = len({names[n][col] for n in splits if types[n][col] != ColumnType.NULL}) == 1
        targets[col] = (target, shared)
        if not shared:
            issues.append(cast_issue(col, {n: names[n][col] for n in splits},
                                     target_name(target)))
        kinds[col] = kind_of_type(target)
    return Harmonised(kinds, targets, issues)


def resolve_features(order: Sequence[str], kinds: dict[str, Kind], names: dict[str, str],
                     columns: Columns, tokens: Tokens | None, issues: list[SchemaIssue]
                     ) -> list[str]:
    """The feature columns (in ``order``, the first split's): the harmonised columns that
    are no declared role nor token column, neither nested (an ``info`` issue) nor null in every
    split (a ``warn`` issue); declared text columns become :attr:`Kind.TEXT`. ``names``: the
    first split's engine type names."""
    roles = columns.declared()
    token_cols = set(tokens.columns()) if tokens else set()
    features = []
    for col in order:
        if col not in kinds or col in roles or col in token_cols:
            continue
        if kinds[col] == Kind.NESTED:
            issues.append(SchemaIssue("info", col, "nested",
                                      f"column {col!r} is a nested/binary type "
                                      f"({names[col]}); it is not audited as a feature"))
            continue
        if kinds[col] == Kind.NULL:
            issues.append(SchemaIssue("warn", col, "null_type",
                                      f"column {col!r} is null in every split; it carries no "
                                      "information and is not audited"))
            continue
        features.append(col)
    for col in columns.text:
        kinds[col] = Kind.TEXT if kinds.get(col) == Kind.CATEGORICAL else kinds.get(col, Kind.TEXT)
    return features


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
