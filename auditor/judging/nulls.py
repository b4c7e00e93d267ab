"""The split design's null of every compared pair, as one engine view of honest comparisons:
time backtests in a time design (:mod:`auditor.judging.backtest`), entity re-splits in a group
design (:mod:`auditor.judging.resplits`). A check measures its statistic on every comparison of
the view the way it measures the real pair, and :meth:`NullViews.trend` turns the results into
the :class:`~auditor.judging.drift_verdicts.Trend` its judge grades against."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from auditor.core.roles import Roles
from auditor.engines.operations import Operations
from auditor.judging.backtest import time_backtests, views
from auditor.judging.drift_verdicts import Trend, trend_values
from auditor.judging.resplits import entity_views
from auditor.stats.drift import ColumnDrift


@dataclass(frozen=True)
class NullViews:
    """``view``: one engine whose splits are every pair's honest comparisons (None when no
    pair has any); ``names``: per pair, (ref, cur) split names of the view, the observed
    comparison first (time: the later split against the earlier split's last rows; group:
    the real pair on the pooled rows), then the null's; per pair ``notes`` (how they were
    made, or why there are none), each backtest described, and ``against`` (the earlier
    split's rows compared with; group: the entity column)."""

    design: str
    view: Operations | None
    names: dict[tuple[str, str], list[tuple[str, str]]]
    notes: dict[tuple[str, str], str]
    described: dict[tuple[str, str], list[str]]
    against: dict[tuple[str, str], str]

    def comparisons(self) -> list[tuple[str, str]]:
        return [p for ps in self.names.values() for p in ps]

    def trends(self, measured: Mapping[tuple[str, str], Mapping[str, ColumnDrift]],
               columns: list[str]) -> dict[tuple[str, str], Trend]:
        """Per pair, the :class:`Trend` of ``columns`` from the drifts ``measured`` on the
        view's comparisons (a pair without comparisons: only its note)."""
        out = {}
        for pair, note in self.notes.items():
            got = [measured[p] for p in self.names.get(pair, []) if p in measured]
            first, rest = (got[0], got[1:]) if got else ({}, [])
            out[pair] = Trend(note, self.described.get(pair, []), self.against.get(pair, ""),
                              {c: trend_values(first[c]) for c in columns if c in first},
                              {c: [trend_values(d[c]) for d in rest if c in d]
                               for c in columns}, design=self.design)
        return out


def null_views(engine: Operations, roles: Roles, pairs: list[tuple[str, str]],
               columns: list[str], seed: int) -> NullViews | None:
    """The design's honest comparisons of ``pairs`` holding ``columns`` (None: a design
    without one here, random or stratified, whose null is each test's own)."""
    plans = time_backtests(engine, roles, pairs)
    if plans:
        view, names = views(engine, plans, columns, seed)
        return NullViews("time", view, names, {p: bt.note for p, bt in plans.items()},
                         {p: [bt.describe(b) for b in bt.tests] for p, bt in plans.items()},
                         {p: bt.rows(bt.recent) for p, bt in plans.items()
                          if bt.recent is not None})
    view, names, made = entity_views(engine, roles, pairs, columns, seed)
    if view is None:
        return None
    return NullViews("group", view, names, {p: r.note for p, r in made.items()}, {},
                     {p: r.entity for p, r in made.items()})
