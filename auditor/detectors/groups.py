"""Entities (customers, patients, devices, ...) whose rows fall into more than one split."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost
from auditor.loading.data import AuditData, Kind
from auditor.errors import NotApplicable
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import check_params, clip_text, fmt_count, fmt_rows, grade, is_share, share

CELL_CHARS = 60
ENTITY_NAME = re.compile(
    r"(^|_)(id|ids|key|uuid|guid|user|customer|client|patient|account|member|device|session|"
    r"subject|person|household|visitor|player|driver)(_|$)")


@dataclass(frozen=True, kw_only=True)
class GroupOverlap:
    """Entities (customers, patients, ...) of a declared group column present in several splits.

    A fail means the evaluation rewards recognising entities seen in training rather than
    generalising to new ones: a model scores higher on returning customers than it will on new
    customers. Fix: split by the group key (e.g. ``GroupShuffleSplit``/``GroupKFold``), or drop
    the shared entities from the later split.

    For each column in ``columns.groups`` and each pair of splits (earlier, later): value = rows
    of the later split whose entity also occurs in the earlier split / rows of the later split
    (``group_overlap_rows``, count = those rows); graded by ``warn_above`` / ``fail_above``
    (default 0: any shared entity fails). Null values are not entities: they are never shared
    and are counted separately (info). Evidence: the most-affected entities with their rows in
    each split.

    Declared ids (``columns.ids``) get the same overlap count (``id_overlap_rows``): a record id
    present in two splits is the same record in both, which ``leakage.duplicates`` cannot see
    (ids are not compared there). Graded by ``id_warn_above`` / ``id_fail_above`` (default 0:
    any shared id fails); the evidence says how many of the shared ids carry equal values in
    every other compared column. Exception: when the id numbers the rows of every split from 0
    or 1 (values exactly 0..n-1 or 1..n), it is a row number, not a record id, and its overlap
    is info.

    Without declared groups, columns that look like undeclared entity keys are suggested (info,
    never a fail, metric ``candidate_group_column``). A column must look like a key, not a
    measurement: not declared in any role, values shared across splits, at least
    ``candidate_min_distinct`` distinct values, and either
    - a name that looks like a key (``customer_id``, ``userKey``, ``session``, ...) on a string
      or integer column, or
    - a string column whose values repeat within a split (mean rows per value between
      ``candidate_min_rows_per_value`` and ``candidate_max_rows_per_value``) and are not
      numbers or dates written as text, or
    - an integer column with such repeats, at least ``candidate_min_integer_distinct``
      distinct values, and gaps over half of its range (ids are sparse and numerous).
    Floats are never suggested, nor integers with a few hundred values (months, ages,
    counts: measurements repeat too, but they are not entities).
    """

    id: ClassVar[str] = "leakage.group_overlap"
    title: ClassVar[str] = "Entities shared between splits"
    cost: ClassVar[Cost] = Cost.CHEAP
    warn_above: float = 0.0     # share of the later split's rows
    fail_above: float = 0.0
    max_examples: int = 20
    suggest_candidates: bool = True
    candidate_min_distinct: int = 20
    candidate_min_rows_per_value: float = 1.5
    candidate_max_rows_per_value: float = 100.0
    candidate_min_integer_distinct: int = 1000
    id_warn_above: float = 0.0  # share of the later split's rows whose declared id is shared
    id_fail_above: float = 0.0

    def __post_init__(self) -> None:
        check_params(self, ("warn_above", "fail_above", "id_warn_above", "id_fail_above"),
                     is_share, "a share in [0, 1]")
        check_params(self, ("candidate_min_integer_distinct",),
                     lambda v: isinstance(v, int) and v >= 2, "an integer >= 2")
        check_params(self, ("max_examples",), lambda v: v >= 0, ">= 0")
        check_params(self, ("candidate_min_distinct",), lambda v: isinstance(v, int) and v >= 2,
                     "an integer >= 2")
        if not 1 <= self.candidate_min_rows_per_value <= self.candidate_max_rows_per_value:
            raise ValueError("candidate_min_rows_per_value must be >= 1 and <= "
                             "candidate_max_rows_per_value; got "
                             f"{self.candidate_min_rows_per_value!r}")

    def run(self, data: AuditData) -> list[Finding]:
        if len(data.splits) < 2:
            raise NotApplicable("only one split: entities cannot cross splits")
        groups = list(dict.fromkeys(data.columns.groups))
        ids = [c for c in dict.fromkeys(data.columns.ids) if c not in groups]
        findings: list[Finding] = []
        for col in groups:
            findings += self._declared(data, col)
        for col in ids:
            findings += self._ids(data, col)
        if groups:
            return findings
        if self.suggest_candidates:
            findings += [f for col in candidate_columns(data) if (f := self._candidate(data, col))]
        if not findings:
            raise NotApplicable("no group column declared (columns.groups), and no column looks "
                                "like an entity key shared across splits")
        return findings

    # -- declared ids ------------------------------------------------------------------------
    def _ids(self, data: AuditData, col: str) -> list[Finding]:
        """A declared id shared by two splits is the same record in both (the id is never a
        feature, so leakage.duplicates cannot see it). Row numbers that restart in every split
        (0..n-1 or 1..n) are not record ids: their overlap is info."""
        counts = entity_counts(data, col)
        numbering = all(_row_numbers(data.splits[s][col]) for s in data.split_names)
        out = []
        for earlier, later in data.pairs():
            shared, rows, value = overlap(data, counts, earlier, later)
            message = (f"{fmt_rows(rows, data.rows(later), f'{later} rows')} carry a {col} that "
                       f"also occurs in {earlier} ({fmt_count(shared.height)} of "
                       f"{fmt_count(counts[later].height)} {later} {col} values)")
            if numbering and rows:
                severity = Severity.INFO
                message += (f"; {col} numbers the rows of each split from "
                            f"{int(data.splits[later][col].min())} (a row number, not a record "
                            "id), so the overlap is info")
            else:
                severity = grade(value, warn=self.id_warn_above, fail=self.id_fail_above)
                if rows:
                    message += ": the same records are in both splits"
            evidence = self._evidence(shared, col, earlier, later) if rows else {}
            if rows and not numbering:
                evidence["same_values"] = _same_record_rows(data, col, shared, earlier, later)
            out.append(Finding(
                severity=severity, subject=col, splits=[earlier, later], metric="id_overlap_rows",
                value=value, threshold=self.id_fail_above, count=rows, message=message,
                evidence=evidence))
        return out

    # -- declared groups -----------------------------------------------------------------------
    def _declared(self, data: AuditData, col: str) -> list[Finding]:
        counts = entity_counts(data, col)
        out = []
        for earlier, later in data.pairs():
            shared, rows, value = overlap(data, counts, earlier, later)
            entities = counts[later].height
            message = (f"{fmt_rows(rows, data.rows(later), f'{later} rows')} share a {col} with "
                       f"{earlier} ({fmt_count(shared.height)} of {fmt_count(entities)} {later} "
                       f"{col} values also occur in {earlier})")
            out.append(Finding(
                severity=grade(value, warn=self.warn_above, fail=self.fail_above),
                subject=col, splits=[earlier, later], metric="group_overlap_rows", value=value,
                threshold=self.fail_above, count=rows, message=message,
                evidence=self._evidence(shared, col, earlier, later) if rows else {}))
        for split in data.split_names:
            nulls = data.rows(split) - int(counts[split]["rows"].sum())
            if nulls:
                out.append(null_group_finding(data, split, col, nulls))
        return out

    def _evidence(self, shared: pl.DataFrame, col: str, earlier: str,
                  later: str) -> dict[str, Any]:
        top = shared.head(self.max_examples)
        rows = [{col: _cell(e), f"rows in {earlier}": a, f"rows in {later}": b}
                for e, a, b in top.select("entity", "rows_earlier", "rows_later").iter_rows()]
        return {
            "shared": {"entities": shared.height,
                       f"{earlier} rows": int(shared["rows_earlier"].sum()),
                       f"{later} rows": int(shared["rows_later"].sum())},
            "top_entities": rows}

    # -- suggestions ---------------------------------------------------------------------------
    def _candidate(self, data: AuditData, col: str) -> Finding | None:
        counts = entity_counts(data, col)
        distinct = pl.concat([c.select("entity") for c in counts.values()]).n_unique()
        per_value = {s: share(int(c["rows"].sum()), c.height) for s, c in counts.items()}
        why = candidate_why(self, data, col, distinct, per_value,
                            sparse=lambda: _sparse_if_integer(data, col),
                            numbers_or_dates=lambda: _numbers_or_dates(counts))
        if not why:
            return None
        pairs = []
        for earlier, later in data.pairs():
            shared, rows, value = overlap(data, counts, earlier, later)
            pairs.append((earlier, later, shared.height, rows, value,
                          lambda shared=shared, earlier=earlier, later=later:
                          self._evidence(shared, col, earlier, later)))
        return candidate_finding(data, col, why, pairs)


def candidate_why(check: Any, data: Any, col: str, distinct: int, per_value: dict[str, float],
                  *, sparse: Callable[[], bool], numbers_or_dates: Callable[[], bool]
                  ) -> list[str]:
    """Why ``col`` looks like an undeclared entity key (empty: it does not), from aggregates:
    ``distinct`` values over all splits, ``per_value`` = mean rows per value in each split;
    ``sparse()`` and ``numbers_or_dates()`` are asked only when needed (see
    :class:`GroupOverlap`). Shared by the polars check and the Spark engine."""
    if distinct < check.candidate_min_distinct:
        return []
    by_name = bool(ENTITY_NAME.search(snake(col)))
    integer = data.kinds.get(col) == Kind.NUMERIC
    repeats = any(check.candidate_min_rows_per_value <= v <= check.candidate_max_rows_per_value
                  for v in per_value.values()) and (
        not integer or (distinct >= check.candidate_min_integer_distinct
                        and sparse())) and (
        integer or not numbers_or_dates())
    why = []
    if by_name:
        why.append("its name looks like an entity key")
    if repeats:
        mean = per_value[max(per_value, key=lambda s: data.rows(s))]
        why.append(f"its values repeat ({mean:.1f} rows per value in the largest split)")
    return why


def candidate_finding(data: Any, col: str, why: list[str],
                      pairs: list[tuple[str, str, int, int, float, Callable[[], dict]]]
                      ) -> Finding | None:
    """The ``candidate_group_column`` info finding from the overlap of every pair (earlier,
    later, shared entities, later rows sharing one, their share, evidence of the shared
    entities), stated for the pair with the largest share; None when no pair shares one."""
    best = None
    table = []
    for earlier, later, entities, rows, value, evidence in pairs:
        table.append({"splits": f"{earlier} → {later}", "later rows shared": rows,
                      "share": round(value, 6), "entities shared": entities})
        if rows and (best is None or value > best[0]):
            best = (value, earlier, later, rows, evidence)
    if best is None:
        return None
    value, earlier, later, rows, make_evidence = best
    evidence = make_evidence()
    evidence["why"] = " and ".join(why)
    evidence["pairs"] = table
    return Finding(
        severity=Severity.INFO, subject=col, splits=[earlier, later],
        metric="candidate_group_column", value=value, count=rows,
        message=f"{col} may be an undeclared entity key ({' and '.join(why)}): "
                f"{fmt_rows(rows, data.rows(later), f'{later} rows')} share a {col} with "
                f"{earlier}; declare it in columns.groups if one entity's rows must stay in "
                "one split",
        evidence=evidence)


def entity_counts(data: AuditData, col: str) -> dict[str, pl.DataFrame]:
    """Per split: ``entity`` (non-null values of ``col``; NaN counts as null) and ``rows``
    (rows per entity)."""
    same_type = col in data.kinds
    out = {}
    for split, df in data.splits.items():
        s = df[col] if same_type else df[col].cast(pl.String)
        if s.dtype.is_float():
            s = s.fill_nan(None)
        out[split] = (pl.DataFrame({"entity": s}).drop_nulls()
                      .group_by("entity").agg(pl.len().cast(pl.Int64).alias("rows")))
    return out


def overlap(data: AuditData, counts: dict[str, pl.DataFrame], earlier: str, later: str
            ) -> tuple[pl.DataFrame, int, float]:
    """The shared entities of a pair (:func:`shared_entities`), the later split's rows that
    hold one, and their share of the later split's rows."""
    shared = shared_entities(counts, earlier, later)
    rows = int(shared["rows_later"].sum()) if shared.height else 0
    return shared, rows, share(rows, data.rows(later))


def shared_entities(counts: dict[str, pl.DataFrame], earlier: str, later: str) -> pl.DataFrame:
    """Entities in both splits: ``entity``, ``rows_earlier``, ``rows_later``; most-affected
    first (rows in the later split, then in the earlier split, then the entity's text)."""
    a = counts[earlier].rename({"rows": "rows_earlier"})
    b = counts[later].rename({"rows": "rows_later"})
    return (a.join(b, on="entity", how="inner")
            .with_columns(pl.col("entity").cast(pl.String).alias("_key"))
            .sort(["rows_later", "rows_earlier", "_key"], descending=[True, True, False])
            .drop("_key"))


def candidate_columns(data: AuditData) -> list[str]:
    """Undeclared string or integer columns (the ones that could be entity keys)."""
    roles = data.columns.declared()
    schema = next(iter(data.splits.values())).schema  # built anew on every access: once
    out = []
    for col in data.common_columns():
        if col in roles:
            continue
        kind = data.kinds.get(col)
        dtype = schema[col]
        if kind == Kind.CATEGORICAL or (kind == Kind.NUMERIC and dtype.is_integer()):
            out.append(col)
    return out


def snake(name: str) -> str:
    """``customerID`` -> ``customer_id``; other separators become ``_``."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    name = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return re.sub(r"[^0-9a-zA-Z]+", "_", name).lower()


def _sparse_if_integer(data: AuditData, col: str) -> bool:
    """Strings pass; integers pass when their distinct values fill under half of their range."""
    values = pl.concat([df.select(pl.col(col)) for df in data.splits.values()])[col].drop_nulls()
    if not values.dtype.is_integer():
        return True
    lo, hi = values.min(), values.max()
    if lo is None or hi is None:
        return False
    return values.n_unique() < 0.5 * (float(hi) - float(lo) + 1)


def _numbers_or_dates(counts: dict[str, pl.DataFrame]) -> bool:
    """Strings that are mostly (>= 90% of up to 1,000 distinct values) numbers or dates:
    measurements or times written as text, not entity keys."""
    values = pl.concat([c["entity"] for c in counts.values()]).cast(pl.String).unique()
    values = values.sort().head(1000).str.strip_chars()
    if values.len() == 0:
        return False
    parsed = values.cast(pl.Float64, strict=False).is_not_null()
    try:  # the format is inferred from the values; none found means no dates
        parsed |= values.str.to_datetime(strict=False).is_not_null()
    except pl.exceptions.ComputeError:
        pass
    return float(parsed.mean()) >= 0.9


def _row_numbers(s: pl.Series) -> bool:
    """An integer column holding exactly 0..n-1 or 1..n (each once): a per-split row number."""
    if not s.dtype.is_integer() or s.null_count():
        return False
    lo, hi = s.min(), s.max()
    return lo in (0, 1) and hi - lo + 1 == s.len() and s.n_unique() == s.len()


def _same_record_rows(data: AuditData, col: str, shared: pl.DataFrame, earlier: str,
                      later: str) -> dict[str, int]:
    """Of the shared ids, how many rows of ``later`` equal their ``earlier`` row (first with
    that id) in every other compared column (those of leakage.duplicates)."""
    from auditor.detectors.near_duplicates import frames_equal

    cols = data.duplicate_columns()
    ids = shared.select("entity")
    a = (data.splits[earlier].select(pl.col(col).alias("entity")).with_row_index("row_a")
         .join(ids, on="entity").group_by("entity").agg(pl.col("row_a").min()))
    b = (data.splits[later].select(pl.col(col).alias("entity")).with_row_index("row_b")
         .join(a, on="entity"))
    equal = frames_equal(data.splits[earlier].select(cols), b["row_a"],
                         data.splits[later].select(cols), b["row_b"]) if cols else \
        np.ones(b.height, dtype=bool)
    return {f"{later} rows with a shared {col}": b.height,
            "equal in every other column": int(equal.sum()),
            "different in some column": int(b.height - equal.sum())}


def _cell(v: Any) -> Any:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    return clip_text(v, CELL_CHARS)


def null_group_finding(data: Any, split: str, col: str, nulls: int) -> Finding:
    """Info: rows of ``split`` without a ``col`` value are left out of the overlap (shared by
    the polars check and the Spark engine)."""
    total = data.rows(split)
    return Finding(
        severity=Severity.INFO, subject=col, splits=[split], metric="null_group_rows",
        value=share(nulls, total), count=nulls,
        message=f"{fmt_rows(nulls, total, f'{split} rows')} have no {col} (null); "
                "they are not compared across splits")
