"""Entity re-splits: the null of a group design.

In a split by entity (users, patients, cows), the rows of one entity resemble each other, so a
later split holding other entities differs from train by more than rows drawn at random would:
a drift test that counts rows as independent evidence reads that clustering as drift. An
honest split of the same data made the same way shows how much: pool the two splits' rows,
assign whole entities at random to a pseudo-later split until it holds as many rows as the
real one (as a group splitter does), :data:`RESPLITS` times (seeded), and measure each
pseudo-pair as the real pair is measured. A drift is judged on how far the real pair's
statistic exceeds the largest re-split (about the 90th percentile of the null).

Rows without an entity are each their own. The pool is the engine's driver data (polars: the
loaded rows; Spark: the run's driver-side sample); beyond :data:`MAX_POOLED` pooled rows a
seeded sample of whole entities is re-split, and the real pair is measured on the same
sample, so both sides of the comparison see the same rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from auditor.core.roles import REFERENCE, Roles
from auditor.engines.operations import Operations

RESPLITS = 9        # re-splits per compared pair
MAX_POOLED = 100_000  # pooled rows re-split: whole entities beyond
_KEY = "__auditor_entity"


@dataclass(frozen=True)
class Resplits:
    """A pair's entity re-splits: the entity column, how many, and how they were made."""

    pair: tuple[str, str]
    entity: str
    n: int
    note: str


def entity_views(engine: Operations, roles: Roles, pairs: list[tuple[str, str]],
                 columns: list[str], seed: int
                 ) -> tuple[Operations | None, dict[tuple[str, str], list[tuple[str, str]]],
                            dict[tuple[str, str], Resplits]]:
    """In a group design (disjoint entities, ``split_design``), one polars engine holding,
    per pair, the real pair first and then each re-split's two sides as splits, with the
    ``columns`` both splits hold; per pair those comparisons' (ref, cur) names and its
    :class:`Resplits`. Nothing otherwise (nor for a pair whose splits have no rows in the
    driver data, or no driver data at all)."""
    from auditor.engines.polars_engine import PolarsEngine
    from auditor.errors import NotApplicable
    from auditor.judging.design import split_design

    design = split_design(engine, roles)
    e = design.entities
    pairs = [p for p in pairs if REFERENCE not in p]
    if design.design != "group" or e is None or not pairs:
        return None, {}, {}
    try:
        frames = engine.driver_data().data.splits
    except NotApplicable:
        return None, {}, {}
    rng = np.random.default_rng(seed)
    out: dict[str, pl.DataFrame] = {}
    names: dict[tuple[str, str], list[tuple[str, str]]] = {}
    made: dict[tuple[str, str], Resplits] = {}
    for p, (a, b) in enumerate(pairs):
        if a not in frames or b not in frames or not frames[a].height \
                or not frames[b].height:
            continue
        both = [c for c in dict.fromkeys([e, *columns])
                if c in frames[a].columns and c in frames[b].columns]
        if e not in both:
            continue
        ref, cur = _keyed(frames[a].select(both), e, a), _keyed(frames[b].select(both), e, b)
        try:
            pooled = pl.concat([ref, cur], how="vertical_relaxed")
        except (pl.exceptions.PolarsError, TypeError):  # types that do not pool: no null
            continue
        sizes = pooled.group_by(_KEY).len().sort(_KEY)
        keys, rows = sizes.get_column(_KEY), sizes.get_column("len").to_numpy()
        sampled = ""
        if pooled.height > MAX_POOLED:  # whole entities, each kept with the same probability
            keep = rng.random(len(keys)) < MAX_POOLED / pooled.height
            kept = keys.filter(pl.Series(keep))
            ref, cur = (f.filter(pl.col(_KEY).is_in(kept.implode())) for f in (ref, cur))
            pooled = pooled.filter(pl.col(_KEY).is_in(kept.implode()))
            keys, rows = keys.filter(pl.Series(keep)), rows[keep]
            sampled = f", on a seeded sample of {len(keys):,} entities ({pooled.height:,} rows)"
        target = cur.height
        names[a, b] = [(f"real{p}.ref", f"real{p}.cur")]
        out[f"real{p}.ref"], out[f"real{p}.cur"] = ref.drop(_KEY), cur.drop(_KEY)
        for k in range(RESPLITS):
            order = rng.permutation(len(keys))
            filled = np.cumsum(rows[order])
            take = keys.gather(order[:int(np.searchsorted(filled, target)) + 1])
            inside = pl.col(_KEY).is_in(take.implode())
            out[f"resplit{p}.{k}.ref"] = pooled.filter(~inside).drop(_KEY)
            out[f"resplit{p}.{k}.cur"] = pooled.filter(inside).drop(_KEY)
            names[a, b].append((f"resplit{p}.{k}.ref", f"resplit{p}.{k}.cur"))
        made[a, b] = Resplits((a, b), e, RESPLITS, (
            f"the {a} and {b} rows pooled and split again {RESPLITS} times by whole `{e}` "
            f"entities at random, {b}'s side filled to its {target:,} rows{sampled}"))
    if not out:
        return None, {}, {}
    return PolarsEngine(out, seed=seed), names, made


def _keyed(frame: pl.DataFrame, entity: str, split: str) -> pl.DataFrame:
    """``frame`` with the entity as text in :data:`_KEY` (a row without one: its own key)."""
    row = pl.lit(f"\x00{split} row ") + pl.int_range(pl.len()).cast(pl.String)
    return frame.with_columns(pl.coalesce(pl.col(entity).cast(pl.String), row).alias(_KEY))
