"""The label operations of the polars engine (:meth:`~auditor.engines.operations.Operations`
``class_ranks``, ``class_levels``, ``target_rate_aucs``) on the loaded data: exact, every
statistic from the labelled rows of :func:`auditor.stats.label.label_view`, shared with
whatever else of the run reads them (the rank statistics are cached per split and columns)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from auditor.engines.operations import ClassLevels, ClassRanks, LevelStats
from auditor.errors import NotApplicable
from auditor.stats.label import (YCOL, LabelView, counts_at, float_values, held_out_aucs,
                                 label_view, level_codes, missing_count, shared_codes,
                                 shared_rank_stats)
from auditor.stats.numerics import cramers_v

if TYPE_CHECKING:
    from auditor.loading.data import AuditData


def coded_view(data: "AuditData", label: str, classes: Sequence[Any]) -> LabelView:
    """The run's label view, checked to code ``label`` with ``classes``."""
    view = label_view(data)
    if view.column != label or list(view.classes) != list(classes):
        raise NotApplicable(f"the label's classes differ: {view.classes!r} in the data, "
                            f"{list(classes)!r} asked")
    return view


def class_ranks(data: "AuditData", label: str, classes: Sequence[Any], columns: Sequence[str]
                ) -> ClassRanks:
    view = coded_view(data, label, classes)
    cols = list(columns)
    stats = {s: shared_rank_stats(data, view, s, cols) for s in view.frames}
    train = view.train
    edges = [c[0] if c is not None else None for c in stats[train]["cuts"]]
    below: dict[str, list[np.ndarray | None]] = {
        train: [c[1] if c is not None else None for c in stats[train]["cuts"]]}
    for s in list(view.frames)[1:]:
        frame, st = view.frames[s], stats[s]
        y = frame[YCOL].to_numpy().astype(np.int64)
        missing = st["n"].sum() - st["count"].sum(0)
        below[s] = [counts_at(x, y, view.n_classes, e)
                    if e is not None and missing[j] > 0
                    and (x := float_values(frame, c)) is not None else None
                    for j, (c, e) in enumerate(zip(cols, edges))]
    p = len(cols)
    return ClassRanks(cols, stats, edges, below, [0] * p, {s: [0.0] * p for s in stats})


def class_levels(data: "AuditData", label: str, classes: Sequence[Any], columns: Sequence[str]
                 ) -> ClassLevels:
    view = coded_view(data, label, classes)
    k = view.n_classes
    rows: dict[str, np.ndarray] = {}
    stats: dict[str, dict[str, LevelStats]] = {}
    for s, frame in view.frames.items():
        y = frame[YCOL].to_numpy().astype(np.int64)
        rows[s] = np.bincount(y, minlength=k).astype(float)
        stats[s] = {}
        for c in columns:
            codes, n_levels = level_codes(frame[c])
            table = np.bincount(codes * k + y, minlength=n_levels * k).reshape(n_levels, k)
            stats[s][c] = LevelStats(n_levels, frame.height - missing_count(frame, c),
                                     cramers_v(table))
    return ClassLevels(rows, stats)


def target_rate_aucs(data: "AuditData", label: str, classes: Sequence[Any],
                     columns: Sequence[str], smoothing: float) -> dict[str, dict[str, float]]:
    view = coded_view(data, label, classes)
    return {c: held_out_aucs(view, c, smoothing, shared_codes(data, view, c)) for c in columns}
