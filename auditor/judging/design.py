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
  split (shared entities are ``leakage.group_overlap``'s business);
- **stratified**, by the label, when every later split holds each class in the share train
  does, to within one row: |n_k,later - p_k n_later| <= 1 for every class k (a random split
  of 100 rows per split meets this by chance for a balanced binary label with probability
  ~0.16, of 1,000 rows ~0.05; above 2 classes or more rows, far less);
- **random** otherwise (rows drawn without a rule the audit can see).

Time wins over group when both hold (a split by time usually also separates entities that
appear once). ``published`` (a publisher's fixed split) and ``unknown`` are only declared.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.core.roles import LabelKind, Roles
from auditor.engines.operations import Between, Condition, Num, Operations
from auditor.report.split_design import design_sentence
from auditor.stats.drift import NUMERIC_KINDS
from auditor.stats.numerics import fmt_share

DESIGNS = ("random", "stratified", "group", "time", "published", "unknown")
TIME_TOLERANCE = 0.05   # share of a later split's timed rows allowed before an earlier split's end
GROUP_TOLERANCE = 0.05  # share of a later split's entities allowed in an earlier split
_TIMED = NUMERIC_KINDS  # a time column read as a number: numeric, date or datetime


@dataclass(frozen=True)
class SplitDesign:
    """The design the run's verdicts are relative to: ``design`` (one of :data:`DESIGNS`),
    ``by`` the column the splits are cut by (time or group column; the label for a
    stratified split; None otherwise), ``declared`` (audit.yaml / ``--split``) or inferred,
    and ``reason``: what was measured (or that it was declared)."""

    design: str
    by: str | None
    declared: bool
    reason: str

    def sentence(self) -> str:
        """One line for the report's header (:func:`auditor.report.results.design_sentence`),
        e.g. "Judged as a time split by `signup_ts` (inferred: ...)"."""
        return design_sentence(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return {"design": self.design, "by": self.by, "declared": self.declared,
                "reason": self.reason}


def split_design(engine: Operations, roles: Roles) -> SplitDesign:
    """The run's :class:`SplitDesign` (measured once per run, shared by every check)."""
    design: SplitDesign = engine.cached(("split_design",), lambda: _measure(engine, roles))
    return design


def _measure(engine: Operations, roles: Roles) -> SplitDesign:
    declared = roles.split
    cols = roles.columns
    if declared is not None:
        by = {"time": cols.time, "group": cols.groups[0] if cols.groups else None,
              "stratified": cols.label}.get(declared)
        return SplitDesign(declared, by, True, "split: " + declared)
    pairs = roles.pairs()
    if not pairs:
        return SplitDesign("unknown", None, False, "a single split: nothing to compare")
    t = cols.time
    if t and roles.kinds.get(t) in _TIMED:
        cut = time_splits(engine, roles, pairs)
        if cut and all(cut.values()):
            return SplitDesign("time", t, False, f"every later split starts after the earlier "
                               f"ones by `{t}` (at most {fmt_share(TIME_TOLERANCE)} of its "
                               "rows earlier)")
    for g in cols.groups:
        shared = _shared_entities(engine, g, pairs)
        if shared is not None and shared <= GROUP_TOLERANCE:
            return SplitDesign("group", g, False, f"each later split shares at most "
                               f"{fmt_share(shared)} of its `{g}` entities with an earlier one "
                               f"({fmt_share(GROUP_TOLERANCE)} allowed)")
    if roles.label and roles.label_kind in (LabelKind.BINARY, LabelKind.MULTICLASS) \
            and _stratified(engine, roles):
        return SplitDesign("stratified", roles.label, False,
                           "every later split holds each class in train's share, to within "
                           "one row")
    why = [f"`{c}` does not order the splits" for c in [t] if c] + \
        [f"the splits share more than {fmt_share(GROUP_TOLERANCE)} of their `{g}` entities"
         for g in cols.groups]
    if roles.label:
        why.append("the class shares are not held fixed" if roles.label_kind != LabelKind.NUMERIC
                   else "the label is numeric")
    return SplitDesign("random", None, False, "; ".join(why) if why else
                       "no time column, group column or label to tell another design")


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


def _shared_entities(engine: Operations, column: str, pairs: list[tuple[str, str]]
                     ) -> float | None:
    """The largest share, over the pairs, of the later split's distinct ``column`` values that
    also occur in the earlier split; None when a later split has no value."""
    summaries = engine.key_summaries([column])
    overlaps = engine.key_overlaps([column], pairs, max_examples=0)
    worst = 0.0
    for a, b in pairs:
        keys = summaries[b][column].distinct
        if not keys:
            return None
        worst = max(worst, overlaps[(column, a, b)].shared / keys)
    return worst


def _stratified(engine: Operations, roles: Roles) -> bool:
    """Every later labelled split holds each class in the first split's share to within one
    row (|n_k - p_k n| <= 1), and the splits have at least two classes."""
    label = roles.label
    assert label is not None
    counts = engine.value_counts([label]).get(label)
    if counts is None or not counts.counts.height:
        return False
    table: dict[str, dict[str, int]] = {}
    for split, value, n in counts.counts.select("split", "value", "n").iter_rows():
        table.setdefault(split, {})[value] = int(n)
    first, *later = [s for s in roles.labelled_splits() if s in table]
    ref = table[first]
    total = sum(ref.values())
    if not later or len(ref) < 2 or not total:
        return False
    for s in later:
        n = sum(table[s].values())
        if set(table[s]) - set(ref):
            return False
        if any(abs(table[s].get(k, 0) - ref[k] / total * n) > 1 for k in ref):
            return False
    return True
