"""Entities (customers, patients, devices, ...) whose rows fall into more than one split."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.roles import ColumnType, Kind, Roles
from auditor.detectors.measured import judged
from auditor.engines import KeyOverlap, KeySummary
from auditor.engines.operations import Num, Operations, Range, RecordMatch
from auditor.errors import NotApplicable
from auditor.judging.design import split_design, time_splits
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import (check_params, clip_text, fmt_count, fmt_rows, grade, is_share,
                                    share)

CELL_CHARS = 60
PANEL_SHARE = 0.9  # an inferred time split shares entities by design when at least this share
# of the later split's entities recur (a panel); fewer: some entities leaked across the cut
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
    (default 0: any shared entity fails). In a time design (see ``split_design``) the pairs
    cut by the time column are info when the design is declared ``time``, or when it is
    inferred and at least ``PANEL_SHARE`` (90%) of the later split's entities recur: a time
    split of a panel (the same firms, states, customers every period) shares its entities by
    construction; declare ``split: group`` when a later split must hold new entities. Null
    values are not entities: they are never shared and are counted separately (info).
    Evidence: the most-affected entities with their rows in each split.

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
    needs: ClassVar[Needs] = Needs(splits=2)
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

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    # -- measure -------------------------------------------------------------------------------
    def measure(self, engine: Operations, roles: Roles) -> GroupMeasures:
        """Key summaries and pair overlaps of the declared groups and ids; for candidates
        (without groups), the facts :func:`candidate_why` reads, and overlaps of the columns
        that pass it."""
        groups = list(dict.fromkeys(roles.columns.groups))
        ids = [c for c in dict.fromkeys(roles.columns.ids) if c not in groups]
        pairs = roles.pairs()
        candidates = candidate_columns(roles) if not groups and self.suggest_candidates else []
        summaries = engine.key_summaries([*groups, *ids, *candidates])
        overlaps = engine.key_overlaps([*groups, *ids], pairs, max_examples=self.max_examples)
        ranges = engine.ranges([Num(c) for c in [*ids, *candidates]
                                if roles.types.get(c) == ColumnType.INTEGER])
        numbering = {c: all(_row_numbers(roles, summaries[s][c], ranges[s].get(Num(c)), c)
                            for s in roles.splits) for c in ids}
        first = {(c, s): ranges[s][Num(c)].min for c in ids if numbering[c]
                 for s in roles.splits}
        matches: dict[tuple[str, str, str], RecordMatch] = {}
        compare = roles.duplicate_columns()
        for c in ids:  # only where the id is shared: the evidence of a shared id
            shared_pairs = [(a, b) for a, b in pairs if overlaps[(c, a, b)].rows_later]
            if not numbering[c] and shared_pairs:
                matches |= {(c, a, b): m for (a, b), m in
                            engine.record_matches(c, compare, shared_pairs).items()}
        facts = {}
        if candidates:
            distinct = engine.distinct_values(candidates)
            for c in candidates:
                facts[c] = CandidateFacts(
                    distinct=distinct[c].distinct,
                    per_value={s: share(summaries[s][c].keyed_rows, summaries[s][c].distinct)
                               for s in roles.splits},
                    integer=roles.types.get(c) == ColumnType.INTEGER,
                    sparse=_sparse(ranges, roles, c, distinct[c].distinct),
                    rows=dict(roles.rows))
            strings = [c for c in candidates if not facts[c].integer
                       and facts[c].distinct >= self.candidate_min_distinct]
            for c, dv in engine.distinct_values(strings, limit=1000).items():
                facts[c] = replace(facts[c], numbers_or_dates=_numbers_or_dates(dv.first))
            keyed = [c for c in candidates if candidate_why(self, c, facts[c])]
            overlaps |= engine.key_overlaps(keyed, pairs, max_examples=self.max_examples)
        if not groups and not ids and not any(
                overlaps[(c, a, b)].rows_later for c in candidates
                if candidate_why(self, c, facts[c]) for a, b in pairs):
            raise NotApplicable("no group column declared (columns.groups), and no column looks "
                                "like an entity key shared across splits")
        timed: dict[tuple[str, str], str] = {}
        t = roles.columns.time
        design = split_design(engine, roles)
        if groups and t and design.design == "time":
            cut = time_splits(engine, roles, pairs)
            timed = {p: t for p in pairs if cut.get(p)}
            if not design.declared:  # inferred: only a panel (nearly every later entity
                timed = {(a, b): t for a, b in timed  # recurs) is a time split of entities
                         if all(overlaps[(g, a, b)].shared >= PANEL_SHARE
                                * summaries[b][g].distinct for g in groups)}
        return GroupMeasures(groups=groups, ids=ids, pairs=pairs, rows=dict(roles.rows),
                             summaries=summaries, overlaps=overlaps, numbering=numbering,
                             first_number=first, matches=matches, candidates=facts,
                             timed=timed)

    # -- judge ---------------------------------------------------------------------------------
    def judge(self, m: GroupMeasures) -> list[Finding]:
        findings: list[Finding] = []
        for col in m.groups:
            findings += self._declared(m, col)
        for col in m.ids:
            findings += self._ids(m, col)
        if m.groups:
            return findings
        for col, facts in m.candidates.items():
            why = candidate_why(self, col, facts)
            if why:
                f = candidate_finding(m, col, why, [
                    (a, b, m.overlaps[(col, a, b)]) for a, b in m.pairs])
                if f:
                    findings.append(f)
        return findings

    def _ids(self, m: GroupMeasures, col: str) -> list[Finding]:
        """A declared id shared by two splits is the same record in both (the id is never a
        feature, so leakage.duplicates cannot see it). Row numbers that restart in every split
        (0..n-1 or 1..n) are not record ids: their overlap is info."""
        numbering = m.numbering[col]
        out = []
        for earlier, later in m.pairs:
            ko = m.overlaps[(col, earlier, later)]
            rows, value = ko.rows_later, share(ko.rows_later, m.rows[later])
            message = (f"{fmt_rows(rows, m.rows[later], f'{later} rows')} carry a {col} that "
                       f"also occurs in {earlier} ({fmt_count(ko.shared)} of "
                       f"{fmt_count(m.summaries[later][col].distinct)} {later} {col} values)")
            if numbering and rows:
                severity = Severity.INFO
                message += (f"; {col} numbers the rows of each split from "
                            f"{int(m.first_number[(col, later)])} (a row number, not a record "
                            "id), so the overlap is info")
            else:
                severity = grade(value, warn=self.id_warn_above, fail=self.id_fail_above)
                if rows:
                    message += ": the same records are in both splits"
            evidence = overlap_evidence(ko, col, earlier, later) if rows else {}
            if rows and not numbering:
                match = m.matches[(col, earlier, later)]
                evidence["same_values"] = {
                    f"{later} rows with a shared {col}": match.keyed,
                    "equal in every other column": match.equal,
                    "different in some column": match.keyed - match.equal}
            out.append(Finding(
                severity=severity, subject=col, splits=[earlier, later], metric="id_overlap_rows",
                value=value, threshold=self.id_fail_above, count=rows, message=message,
                evidence=evidence))
        return out

    def _declared(self, m: GroupMeasures, col: str) -> list[Finding]:
        out = []
        for earlier, later in m.pairs:
            ko = m.overlaps[(col, earlier, later)]
            rows, value = ko.rows_later, share(ko.rows_later, m.rows[later])
            entities = m.summaries[later][col].distinct
            message = (f"{fmt_rows(rows, m.rows[later], f'{later} rows')} share a {col} with "
                       f"{earlier} ({fmt_count(ko.shared)} of {fmt_count(entities)} {later} "
                       f"{col} values also occur in {earlier})")
            severity = grade(value, warn=self.warn_above, fail=self.fail_above)
            t = m.timed.get((earlier, later))
            if t and rows:
                severity = Severity.INFO
                message += (f"; the splits are cut by time (`{t}`): {col} entities recurring "
                            f"in later periods is how a time split of them works, reported as "
                            f"info (declare split: group if {later} must hold new {col} "
                            "entities)")
            out.append(Finding(
                severity=severity,
                subject=col, splits=[earlier, later], metric="group_overlap_rows", value=value,
                threshold=self.fail_above, count=rows, message=message,
                evidence=overlap_evidence(ko, col, earlier, later) if rows else {}))
        for split, summaries in m.summaries.items():
            nulls = summaries[col].missing_rows
            if nulls:
                out.append(null_group_finding(m.rows[split], split, col, nulls))
        return out


@dataclass(frozen=True)
class CandidateFacts:
    """What decides whether an undeclared column looks like an entity key: distinct values
    over every split, mean rows per value in each split, whether it is an integer column and
    its distinct values fill under half of its range (``sparse``; True for strings), and
    whether its values are mostly numbers or dates written as text (strings only, measured
    when it has enough distinct values)."""

    distinct: int
    per_value: dict[str, float]
    integer: bool
    sparse: bool
    rows: dict[str, int]
    numbers_or_dates: bool = False


@dataclass(frozen=True)
class GroupMeasures:
    """Everything :meth:`GroupOverlap.judge` grades: rows per split, per column and split the
    key summary, per (column, earlier, later) the overlap; ids: whether they number the rows
    of every split (and from which number), and how many shared-id rows equal their earlier
    record; candidates: their :class:`CandidateFacts` (overlaps only for those that pass)."""

    groups: list[str]
    ids: list[str]
    pairs: list[tuple[str, str]]
    rows: dict[str, int]
    summaries: dict[str, dict[str, KeySummary]]
    overlaps: dict[tuple[str, str, str], KeyOverlap]
    numbering: dict[str, bool]
    first_number: dict[tuple[str, str], Any]  # (id column, split) -> its smallest value
    matches: dict[tuple[str, str, str], RecordMatch]
    candidates: dict[str, CandidateFacts]
    timed: dict[tuple[str, str], str] = field(default_factory=dict)  # pairs cut by time (a
    # time design): pair -> the time column; shared entities there are expected


def overlap_evidence(ko: KeyOverlap, col: str, earlier: str, later: str) -> dict[str, Any]:
    """The shared entities' totals and the most-affected ones with their rows in each split."""
    rows = [{col: _cell(e), f"rows in {earlier}": a, f"rows in {later}": b}
            for e, a, b in ko.top.select("key", "rows_earlier", "rows_later").iter_rows()]
    return {"shared": {"entities": ko.shared, f"{earlier} rows": ko.rows_earlier,
                       f"{later} rows": ko.rows_later}, "top_entities": rows}


def candidate_why(check: Any, col: str, facts: CandidateFacts) -> list[str]:
    """Why ``col`` looks like an undeclared entity key (empty: it does not), from its
    :class:`CandidateFacts` (see :class:`GroupOverlap`)."""
    if facts.distinct < check.candidate_min_distinct:
        return []
    by_name = bool(ENTITY_NAME.search(snake(col)))
    repeats = any(check.candidate_min_rows_per_value <= v <= check.candidate_max_rows_per_value
                  for v in facts.per_value.values()) and (
        not facts.integer or (facts.distinct >= check.candidate_min_integer_distinct
                              and facts.sparse)) and (
        facts.integer or not facts.numbers_or_dates)
    why = []
    if by_name:
        why.append("its name looks like an entity key")
    if repeats:
        largest = max(facts.per_value, key=lambda s: facts.rows[s])
        why.append(f"its values repeat ({facts.per_value[largest]:.1f} rows per value in the "
                   "largest split)")
    return why


def candidate_finding(m: GroupMeasures, col: str, why: list[str],
                      pairs: list[tuple[str, str, KeyOverlap]]) -> Finding | None:
    """The ``candidate_group_column`` info finding from the overlap of every pair, stated for
    the pair with the largest share of the later split's rows; None when no pair shares one."""
    best = None
    table = []
    for earlier, later, ko in pairs:
        value = share(ko.rows_later, m.rows[later])
        table.append({"splits": f"{earlier} → {later}", "later rows shared": ko.rows_later,
                      "share": round(value, 6), "entities shared": ko.shared})
        if ko.rows_later and (best is None or value > best[0]):
            best = (value, earlier, later, ko)
    if best is None:
        return None
    value, earlier, later, ko = best
    evidence = overlap_evidence(ko, col, earlier, later)
    evidence["why"] = " and ".join(why)
    evidence["pairs"] = table
    rows = ko.rows_later
    return Finding(
        severity=Severity.INFO, subject=col, splits=[earlier, later],
        metric="candidate_group_column", value=value, count=rows,
        message=f"{col} may be an undeclared entity key ({' and '.join(why)}): "
                f"{fmt_rows(rows, m.rows[later], f'{later} rows')} share a {col} with "
                f"{earlier}; declare it in columns.groups if one entity's rows must stay in "
                "one split",
        evidence=evidence)


def candidate_columns(roles: Roles) -> list[str]:
    """Undeclared string or integer columns (the ones that could be entity keys)."""
    declared = roles.columns.declared()
    return [c for c in roles.common_columns() if c not in declared and (
        roles.kinds.get(c) == Kind.CATEGORICAL
        or (roles.kinds.get(c) == Kind.NUMERIC and roles.types.get(c) == ColumnType.INTEGER))]


def snake(name: str) -> str:
    """``customerID`` -> ``customer_id``; other separators become ``_``."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    name = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return re.sub(r"[^0-9a-zA-Z]+", "_", name).lower()


def _sparse(ranges: dict[str, dict[Num, Range]], roles: Roles, col: str, distinct: int) -> bool:
    """Strings pass; integers pass when their distinct values fill under half of their range
    over every split."""
    if roles.types.get(col) != ColumnType.INTEGER:
        return True
    lows = [r[Num(col)].min for r in ranges.values() if r[Num(col)].min is not None]
    highs = [r[Num(col)].max for r in ranges.values() if r[Num(col)].max is not None]
    if not lows:
        return False
    return distinct < 0.5 * (float(max(highs)) - float(min(lows)) + 1)


def _numbers_or_dates(first: list[str]) -> bool:
    """Strings that are mostly (>= 90% of the first 1,000 distinct values, sorted) numbers or
    dates: measurements or times written as text, not entity keys."""
    values = pl.Series(first, dtype=pl.String).str.strip_chars()
    if values.len() == 0:
        return False
    parsed = values.cast(pl.Float64, strict=False).is_not_null()
    try:  # the format is inferred from the values; none found means no dates
        parsed |= values.str.to_datetime(strict=False).is_not_null()
    except pl.exceptions.ComputeError:
        pass
    return (parsed.sum() or 0) >= 0.9 * parsed.len()


def _row_numbers(roles: Roles, summary: KeySummary, rng: Range | None, col: str) -> bool:
    """An integer column holding exactly 0..n-1 or 1..n (each once): a per-split row number."""
    if roles.types.get(col) != ColumnType.INTEGER or rng is None or rng.missing \
            or rng.min is None:
        return False
    n = summary.rows
    return rng.min in (0, 1) and rng.max - rng.min + 1 == n and summary.distinct == n


def _cell(v: Any) -> Any:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    return clip_text(v, CELL_CHARS)


def null_group_finding(total: int, split: str, col: str, nulls: int) -> Finding:
    """Info: rows of ``split`` (``total`` rows) without a ``col`` value are left out of the
    overlap."""
    return Finding(
        severity=Severity.INFO, subject=col, splits=[split], metric="null_group_rows",
        value=share(nulls, total), count=nulls,
        message=f"{fmt_rows(nulls, total, f'{split} rows')} have no {col} (null); "
                "they are not compared across splits")
