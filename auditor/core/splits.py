"""The loaded splits as every engine holds them: :class:`LoadedSplits`, the part of polars'
:class:`~auditor.loading.data.AuditData` and Spark's
:class:`~auditor.engines.spark_io.SparkAuditData` that does not depend on the engine (structure,
roles, the per-run cache), and the input checks both loaders run on the declared columns, in
the engines' types mapped to words (:class:`TokenType`).
"""
from __future__ import annotations

import difflib
from enum import Enum
from typing import Any, Callable, Mapping, Sequence

from auditor.core.config import Columns, Tokens
from auditor.core.roles import BenchmarkSet, ColumnType, Kind, LabelKind, Roles, SchemaIssue
from auditor.errors import InputError


class LoadedSplits:
    """Splits (in their declared order, which is their time order of use), column roles, kinds,
    features and the work checks share. An engine's subclass says how many rows a split has,
    what its first split's schema is, and how the label's kind and unlabelled splits are
    counted."""

    engine_name = "polars"
    declared_split: str | None = None  # ``split:`` of audit.yaml (set by the loader's caller)

    def __init__(self, splits: dict[str, Any], *, columns: Columns, tokens: Tokens | None = None,
                 paths: dict[str, str | None] | None = None, seed: int = 0,
                 kinds: dict[str, Kind] | None = None, features: list[str] | None = None,
                 schema_issues: list[SchemaIssue] | None = None) -> None:
        self.splits = splits
        self.columns = columns
        self.tokens = tokens
        self.paths = paths or {k: None for k in splits}
        self.seed = seed
        self.kinds = kinds or {}
        self.features = features or []
        self.schema_issues = schema_issues or []
        self.reference: Any = None  # a reference snapshot (scheduled mode; polars only)
        self.reference_path: str | None = None
        self.pipeline: list[Any] = []  # pipeline code for leakage.preprocessing's scan
        self.expectations: dict[str, Any] | None = None  # a GX suite (schema.expectations)
        self.benchmarks: tuple[BenchmarkSet, ...] = ()  # benchmarks: (tokens.benchmarks)
        self.notes: list[str] = []
        self.sampled = False  # True when the loader read samples to fit the memory budget
        # ids of the checks this run will run (set by the runner), so a check may measure once
        # for a later one
        self.planned_checks: frozenset[str] = frozenset()
        self._cache: dict[Any, Any] = {}
        self._label_kind: LabelKind | None | bool = False

    # -- what an engine's subclass tells -------------------------------------------------------
    def rows(self, split: str) -> int:
        raise NotImplementedError

    def split_rows(self) -> dict[str, int]:
        return {n: self.rows(n) for n in self.splits}

    def first_schema(self) -> dict[str, tuple[ColumnType, str]]:
        """Every column of the first split: its type in words and the engine's name of it."""
        raise NotImplementedError

    def _detect_label_kind(self) -> LabelKind | None:
        raise NotImplementedError

    @property
    def unlabelled(self) -> tuple[str, ...]:
        """The splits whose label is missing (null, or NaN) in every row."""
        raise NotImplementedError

    # -- structure -----------------------------------------------------------------------------
    @property
    def split_names(self) -> list[str]:
        return list(self.splits)

    def pairs(self) -> list[tuple[str, str]]:
        """Every (earlier, later) pair of splits in their declared order."""
        names = self.split_names
        return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]

    @property
    def label(self) -> str | None:
        return self.columns.label

    def features_of(self, *kinds: Kind) -> list[str]:
        return [c for c in self.features if self.kinds.get(c) in kinds]

    def common_columns(self) -> list[str]:
        """Columns present in every split with a harmonised type, in the first split's order."""
        return [c for c in self.first_schema() if c in self.kinds]

    @property
    def label_kind(self) -> LabelKind | None:
        """binary (2 distinct values), multiclass (strings/booleans or <= 20 integer values),
        numeric (anything else numeric); None without a label
        (:func:`~auditor.core.roles.label_kind_of`)."""
        if self._label_kind is False:
            self._label_kind = self._detect_label_kind()
        return self._label_kind  # type: ignore[return-value]

    @property
    def roles(self) -> Roles:
        """The engine-free view of the splits that checks measure and judge with."""
        schema = self.first_schema()
        common = self.common_columns()
        return Roles(splits=tuple(self.splits), rows=self.split_rows(), columns=self.columns,
                     kinds=dict(self.kinds), types={c: schema[c][0] for c in common},
                     features=tuple(self.features), label_kind=self.label_kind,
                     tokens=self.tokens, seed=self.seed, order=tuple(common),
                     schema_issues=tuple(self.schema_issues),
                     schema=tuple((c, name) for c, (_, name) in schema.items()),
                     reference=self.reference is not None, expectations=self.expectations,
                     benchmarks=self.benchmarks, pipeline=tuple(str(p) for p in self.pipeline),
                     unlabelled=self.unlabelled, split=self.declared_split)

    # -- cached shared work -------------------------------------------------------------------
    def cached(self, key: Any, factory: Callable[[], Any]) -> Any:
        """Compute ``factory()`` once per run and share it between checks (e.g. a loaded
        tokenizer, per-column ranks). ``key`` must be hashable and name what is computed."""
        if key not in self._cache:
            self._cache[key] = factory()
        return self._cache[key]


def check_declared_columns(names: Mapping[str, Sequence[str]], columns: Columns,
                           tokens: Tokens | None, paths: Mapping[str, str | None], *,
                           fold_case: bool = False) -> None:
    """Every split's column names (``names``) are unique (``fold_case``: also ignoring case, as
    Spark resolves names by default) and hold every declared column (roles but ``exclude``, and
    a ``tokens:`` section's columns); else one InputError naming the file, the column and its
    role, with the closest name when one is close."""
    required = [(c, r) for c, r in columns.declared().items() if r != "exclude"]
    if tokens:
        required += [(c, f"tokens.{role}") for role, c in token_roles(tokens)]
    for name, cols in names.items():
        where = paths.get(name) or f"split {name!r}"
        seen: set[str] = set()
        folded: dict[str, str] = {}
        for col in cols:
            if col in seen:
                raise InputError(f"{where}: duplicate column name {col!r}")
            other = folded.setdefault(col.casefold(), col)
            if fold_case and other != col:
                raise InputError(f"{where}: column names {other!r} and {col!r} differ only in "
                                 "case, which Spark does not tell apart "
                                 "(spark.sql.caseSensitive=false)")
            seen.add(col)
        for col, role in required:
            if col in seen:
                continue
            close = difflib.get_close_matches(col, list(cols), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            if not close and tokens is not None and col == tokens.input_ids \
                    and tokens.text in seen:
                hint = " (a corpus stored as text only: set input_ids: null under tokens:)"
            raise InputError(f"{where}: {role} column {col!r} not found{hint}; columns are "
                             f"{', '.join(map(repr, list(cols)[:12]))}"
                             f"{' ...' if len(cols) > 12 else ''}")


def token_roles(tokens: Tokens) -> list[tuple[str, str]]:
    """(role, column) of every column a ``tokens:`` section names."""
    roles = [(r, getattr(tokens, r)) for r in ("text", "input_ids", "attention_mask", "labels",
                                               "position_ids")]
    roles.append(("chat.messages", tokens.chat.messages if tokens.chat else None))
    return [(r, c) for r, c in roles if c]


class TokenType(Enum):
    """A column's type as the token checks need it, whatever the engine calls it."""

    NULL = "null"  # no value at all (any use is fine)
    NUMBERS = "numbers"  # a list or array of numbers or booleans
    MESSAGES = "messages"  # a list of {role, content} structs
    TEXT = "text"
    OTHER = "other"


_TOKEN_LISTS = (("input_ids", "token ids"), ("attention_mask", "0/1 mask values"),
                ("labels", "label token ids"), ("position_ids", "positions"))


def check_token_types(types: Mapping[str, Mapping[str, tuple[TokenType, str]]],
                      tokens: Tokens | None, paths: Mapping[str, str | None]) -> None:
    """Declared token columns hold lists of numbers (booleans for the mask), the chat column
    lists of {role, content} messages: else one InputError naming the split's file, the column,
    its type (``types[split][column]``: the type in words and the engine's name of it) and what
    was expected."""
    if tokens is None:
        return
    for name, fields in types.items():
        where = paths.get(name) or name
        for role, what in _TOKEN_LISTS:
            col = getattr(tokens, role)
            if not col or col not in fields or fields[col][0] in (TokenType.NULL,
                                                                  TokenType.NUMBERS):
                continue
            kind, type_name = fields[col]
            hint = " (text cannot hold lists: store them as Parquet or JSON Lines lists)" \
                if kind == TokenType.TEXT else ""
            raise InputError(f"{where}: tokens.{role} column {col!r} has type {type_name}; "
                             f"expected a list of {what} (list<int>){hint}")
        chat = tokens.chat.messages if tokens.chat else None
        if chat and chat in fields and fields[chat][0] not in (TokenType.NULL,
                                                               TokenType.MESSAGES):
            raise InputError(f"{where}: tokens.chat.messages column {chat!r} has type "
                             f"{fields[chat][1]}; expected a list of {{role, content}} messages")
