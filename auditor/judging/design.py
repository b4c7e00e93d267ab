"""How the splits were made: the split design every split-level verdict is relative to.

A difference between splits means something only against what an honest split of the same
data, made the same way, would show: a time split drifts with the calendar, a group split puts
new entities (with their own attributes) into test, a stratified split holds the class shares
fixed. The design is declared (``split:`` in audit.yaml, ``--split``) or inferred once per run
from the roles and the data, by engine operations (:func:`split_design`):

- **time**, by the declared time column, when every later split starts after the earlier
  splits: at most :data:`TIME_TOLERANCE` (5%) of a later split's timed rows lie before the
  latest time of any earlier split (:func:`time_splits`; overlaps are ``leakage.temporal``'s
  business);
- **group**, by a declared group column, when the splits (nearly) never share an entity: at
  most :data:`GROUP_TOLERANCE` (5%) of each later split's entities also occur in an earlier
  split (shared entities are ``leakage.group_overlap``'s business), and entities repeat;
- **stratified**, by the label, when every split holds each class in the pooled share of the
  labelled splits, to within one row: |n_k,s - N_k n_s / N| <= 1 for every class k (how a
  stratified splitter rounds). A random split meets it by chance with probability about
  1.2 / sd per class, sd the standard deviation of the class's rows in the smaller split
  (a balanced binary label: ~0.3 with 80 test rows, ~0.05 with 2,500): at small sizes a
  random split may be stated as stratified, which changes no verdict (both hold the label's
  distribution to what chance allows);
- **random** otherwise (rows drawn without a rule the audit can see).

The group rule needs entities that repeat (:data:`MIN_ROWS_PER_ENTITY` train rows per entity
on average): with one row per entity every random split is also "disjoint". Time wins over
group when both hold; the disjoint group column is kept either way (``entities``: a check
that holds out entities reads it). ``published`` (a publisher's fixed
split) is only declared; ``unknown`` is declared, or inferred for a single split and when the
measuring fails (its error then the reason, in every output).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.core.roles import LabelKind, Roles
from auditor.engines.operations import Between, Condition, Num, Operations
from auditor.stats.drift import NUMERIC_KINDS
from auditor.stats.numerics import fmt_share

TIME_TOLERANCE = 0.05   # share of a later split's timed rows allowed before an earlier split's end
GROUP_TOLERANCE = 0.05  # share of a later split's entities allowed in an earlier split
MIN_ROWS_PER_ENTITY = 1.1  # train rows per entity for a group split to differ from a random one
_TIMED = NUMERIC_KINDS  # a time column read as a number: numeric, date or datetime


@dataclass(frozen=True)
class SplitDesign:
    """How the run's splits were made: ``design`` (one of
    :data:`auditor.core.config.SPLIT_DESIGNS`), ``by`` the column the splits are cut by (time
    or group column; the label for a stratified split; None otherwise), ``declared``
    (audit.yaml / ``--split``) or inferred, ``reason``: what was measured (or that it was
    declared), and ``entities``: a declared group column whose entities the splits do not
    share (measured whatever the design: a time split of users who appear once per period is
    also one), else None."""

    design: str
    by: str | None
    declared: bool
    reason: str
    entities: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"design": self.design, "by": self.by, "declared": self.declared,
                "reason": self.reason, "entities": self.entities}


def split_design(engine: Operations, roles: Roles) -> SplitDesign:
    """The run's :class:`SplitDesign`, measured once per run and shared by every check. A
    measurement that fails gives design ``unknown`` with the error as its reason (cached too:
    every check then reads the same), so the header says it and no check judges by a guess."""
    def measure() -> SplitDesign:
        try:
            return _measure(engine, roles)
        except Exception as err:  # noqa: BLE001 -- stated in every output, never hidden
            return SplitDesign("unknown", None, False, f"the design could not be measured "
                               f"({type(err).__name__}: {str(err)[:200]})")

    design: SplitDesign = engine.cached(("split_design",), measure)
    return design


def _measure(engine: Operations, roles: Roles) -> SplitDesign:
    cols = roles.columns
    pairs = roles.pairs()
    entities = next((g for g in cols.groups if pairs and _disjoint(engine, g, pairs)[0]), None)
    declared = roles.split
    if declared is not None:
        by = {"time": cols.time, "group": entities or (cols.groups[0] if cols.groups else None),
              "stratified": cols.label}.get(declared)
        return SplitDesign(declared, by, True, "split: " + declared, entities)
    if not pairs:
        return SplitDesign("unknown", None, False, "a single split: nothing to compare")
    why: list[str] = []
    t = cols.time
    if t and roles.kinds.get(t) in _TIMED:
        cut = time_splits(engine, roles, pairs)
        if all(cut.values()):
            return SplitDesign("time", t, False, f"every later split starts after the earlier "
                               f"ones by `{t}` (at most {fmt_share(TIME_TOLERANCE)} of its "
                               "rows earlier)", entities)
        why.append(f"`{t}` does not order the splits")
    elif t:
        why.append(f"`{t}` is not read as a time")
    for g in cols.groups:
        disjoint, reason = _disjoint(engine, g, pairs)
        if disjoint:
            return SplitDesign("group", g, False, reason, entities)
        why.append(reason)
    if roles.label and roles.label_kind in (LabelKind.BINARY, LabelKind.MULTICLASS):
        stratified, reason = _stratified(engine, roles)
        if stratified:
            return SplitDesign("stratified", roles.label, False, reason, entities)
        why.append(reason)
    elif roles.label:
        why.append("the label is numeric (no class shares to hold)")
    return SplitDesign("random", None, False, "; ".join(why) if why else
                       "no time column, group column or label to tell another design",
                       entities)


def time_splits(engine: Operations, roles: Roles, pairs: list[tuple[str, str]],
                tolerance: float = TIME_TOLERANCE) -> dict[tuple[str, str], bool]:
    """Per pair, whether it is cut by the declared time column: at most ``tolerance`` of
    the later split's timed rows are earlier than the earlier split's latest time (overlaps
    are leakage.temporal's business). Decided per pair: a split without the time column makes
    only its own pairs "not a time split"."""
    t = roles.columns.time
    out = {pair: False for pair in pairs}
    if not t or roles.kinds.get(t) not in _TIMED:
        return out
    cut: dict[tuple[str, str], bool] = engine.cached(
        ("split_design.time_splits", t, tuple(pairs), tolerance),
        lambda: _time_cut(engine, roles, t, pairs, tolerance))
    return cut


def _time_cut(engine: Operations, roles: Roles, t: str, pairs: list[tuple[str, str]],
              tolerance: float) -> dict[tuple[str, str], bool]:
    out = {pair: False for pair in pairs}
    latest = {s: r[Num(t)].max for s, r in engine.ranges(
        [Num(t)], with_reference=roles.reference).items()}
    todo = [(a, b) for a, b in pairs if latest.get(a) is not None and b in latest]
    asked: dict[str, list[Condition]] = {}
    for a, b in todo:
        asked.setdefault(b, []).append(Between(Num(t), hi=latest[a]))
    got = engine.tallies(asked)
    seen: dict[str, int] = {}
    for a, b in todo:
        i = seen[b] = seen.get(b, -1) + 1
        tally = got[b][i]
        out[a, b] = bool(tally.compared) and tally.hits <= tolerance * tally.compared
    return out


def _disjoint(engine: Operations, column: str, pairs: list[tuple[str, str]]
              ) -> tuple[bool, str]:
    """Whether the splits were cut by the entities of ``column``, and why: each later split
    shares at most :data:`GROUP_TOLERANCE` of its distinct values with an earlier split, and
    the entities repeat (train holds at least :data:`MIN_ROWS_PER_ENTITY` rows per entity on
    average: when every entity has one row, any random split is also disjoint)."""
    def measure() -> tuple[bool, str]:
        summaries = engine.key_summaries([column])
        first = summaries[pairs[0][0]][column]
        if not first.distinct or first.keyed_rows < MIN_ROWS_PER_ENTITY * first.distinct:
            return False, (f"`{column}` entities do not repeat in {pairs[0][0]} "
                           f"({first.keyed_rows:,} rows, {first.distinct:,} entities)")
        overlaps = engine.key_overlaps([column], pairs, max_examples=0)
        worst = 0.0
        for a, b in pairs:
            keys = summaries[b][column].distinct
            if keys:
                worst = max(worst, overlaps[(column, a, b)].shared / keys)
        if worst <= GROUP_TOLERANCE:
            return True, (f"each later split shares at most {fmt_share(worst)} of its "
                          f"`{column}` entities with an earlier one "
                          f"({fmt_share(GROUP_TOLERANCE)} allowed)")
        return False, (f"a later split shares {fmt_share(worst)} of its `{column}` entities "
                       "with an earlier one")

    found: tuple[bool, str] = engine.cached(("split_design.disjoint", column), measure)
    return found


def _stratified(engine: Operations, roles: Roles) -> tuple[bool, str]:
    """Whether every labelled split holds each class in the pooled share of all labelled
    splits to within one row (|n_k,s - N_k n_s / N| <= 1, in integers: a stratified split
    rounds each class's rows of the pool), with at least two classes; and why."""
    label = roles.label
    assert label is not None
    counts = engine.value_counts([label], partial=True).get(label)
    if counts is None or counts.over or not counts.counts.height:
        return False, "the class counts are beyond what the driver holds"
    table: dict[str, dict[str, int]] = {}
    for split, value, n in counts.counts.select("split", "value", "n").iter_rows():
        table.setdefault(split, {})[value] = int(n)
    splits = [s for s in roles.labelled_splits() if s in table]
    pooled: dict[str, int] = {}
    for s in splits:
        for k, n in table[s].items():
            pooled[k] = pooled.get(k, 0) + n
    total = sum(pooled.values())
    if len(splits) < 2 or len(pooled) < 2:
        return False, ("one class: no class shares to hold" if len(pooled) < 2 else
                       "one labelled split: no class shares to compare")
    for s in splits:
        n_s = sum(table[s].values())
        if any(abs(table[s].get(k, 0) * total - n_k * n_s) > total for k, n_k in pooled.items()):
            return False, "the class shares differ between splits by more than one row"
    return True, "every split holds each class in the pooled share, to within one row"
