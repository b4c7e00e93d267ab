"""Feature and label drift between splits, or between every split and a reference snapshot.

Statistics and binning live in :mod:`auditor.stats.drift` (per column),
:mod:`auditor.stats.levels` (exact tests, rare levels, per-level shifts) and
:mod:`auditor.stats.numerics` (PSI, KS, chi-square, Jensen–Shannon, Benjamini–Hochberg);
grading one column, its sentence and evidence in :mod:`auditor.judging.drift_verdicts`; calendar
parts of the time column in :mod:`auditor.stats.calendar`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.roles import Kind, LabelKind, Roles
from auditor.detectors.measured import judged
from auditor.engines.operations import Operations
from auditor.core.roles import REFERENCE
from auditor.stats.drift_binned import Binned, binned_per_value, compare_binned, value_bins
from auditor.stats.drift import (CATEGORICAL_KINDS, LISTED_CATEGORIES, NUMERIC_KINDS,
                                 ColumnDrift, Sample, compare, entity_columns, fmt_value,
                                 numeric_chart, one_row_per)
from auditor.judging.nulls import null_views
from auditor.judging.design import split_design, time_splits
from auditor.judging.row_resplits import DESIGNS as RANDOM_DESIGNS, row_resplit_trend
from auditor.judging.drift_verdicts import (RANK, Trend, Verdict, describe_drift, evidence,
                                            fmt_effect, judge, name_list, rounded, statistics,
                                            table_row, unseen_finding)
from auditor.errors import NotApplicable
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import (bh_adjust, check_params, fmt_rows, fmt_share,
                                    map_columns)

_COLORS = {Severity.FAIL: "#C44E52", Severity.WARN: "#DD8452", Severity.INFO: "#4C72B0"}
DRIFT_KINDS = NUMERIC_KINDS + CATEGORICAL_KINDS


# ---------------------------------------------------------------------------------------------
# Shared by both checks
# ---------------------------------------------------------------------------------------------

def comparisons_of(names: list[str], reference: bool) -> list[tuple[str, str]]:
    """(reference, compared) pairs: with a reference dataset, (reference, split) for every
    split (scheduled mode); otherwise every later split against the first (train), plus each
    consecutive pair after the first (train, val, test -> train/val, train/test, val/test)."""
    if reference:
        return [(REFERENCE, s) for s in names]
    first = names[0]
    return [(first, s) for s in names[1:]] + [(names[i], names[i + 1])
                                              for i in range(1, len(names) - 1)]


def _validate(check: Any) -> None:
    if not isinstance(check.n_bins, int) or not 2 <= check.n_bins <= 1000:
        raise ValueError(f"n_bins must be an integer in [2, 1000]; got {check.n_bins!r}")
    if not 0 < check.epsilon < 0.01:
        raise ValueError(f"epsilon must be in (0, 0.01); got {check.epsilon!r}")
    if not 0 < check.alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {check.alpha!r}")
    for stat in ("psi", "ks", "cramers_v"):
        warn, fail = getattr(check, f"{stat}_warn_above"), getattr(check, f"{stat}_fail_above")
        for name, v in ((f"{stat}_warn_above", warn), (f"{stat}_fail_above", fail)):
            if not isinstance(v, (int, float)) or v < 0 or (stat != "psi" and v > 1):
                raise ValueError(f"{name} must be a number in [0, {'inf' if stat == 'psi' else 1}]"
                                 f"; got {v!r}")
        if warn > fail:
            raise ValueError(f"{stat}_warn_above must be <= {stat}_fail_above; got {warn!r} > "
                             f"{fail!r}")
    for name in ("top_categories", "hist_bins", "max_levels", "level_min_rows", "min_rows"):
        v = getattr(check, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a positive integer; got {v!r}")
    if check.hist_bins > 1000:  # the chart's bins are kept in the report (10**20 crashed)
        raise ValueError(f"hist_bins must be an integer in [1, 1000]; got {check.hist_bins!r}")
    v = check.level_fold_warn_above
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not v >= 1:
        raise ValueError(f"level_fold_warn_above must be a number >= 1; got {v!r}")
    warn, fail = check.unseen_warn_above, check.unseen_fail_above
    for name, v in (("unseen_warn_above", warn), ("unseen_fail_above", fail)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= 1:
            raise ValueError(f"{name} must be a share in [0, 1]; got {v!r}")
    if warn > fail:
        raise ValueError(f"unseen_warn_above must be <= unseen_fail_above; got {warn!r} > {fail!r}")


def compare_all(check: Any, columns: list[str], ref: dict[str, Sample],
                cur: dict[str, Sample], seed: int = 0, trend: Trend | None = None,
                design: str | None = None) -> list[tuple[ColumnDrift, Verdict]]:
    """Compare every column; adjust every p-value of the comparison together (BH), grade."""
    return grade_all(check, compare_columns(check, columns, ref, cur, seed), trend, design,
                     seed)


def compare_columns(check: Any, columns: list[str], ref: dict[str, Sample],
                    cur: dict[str, Sample], seed: int = 0, *, null: bool = False
                    ) -> list[ColumnDrift]:
    """:func:`~auditor.stats.drift.compare` of every column (threads), in column order
    (``null``: a comparison of the design's null, measured for its effect sizes only)."""
    def one(c: str) -> ColumnDrift:
        return compare(c, ref[c], cur[c], n_bins=check.n_bins, epsilon=check.epsilon,
                       seed=seed, max_levels=check.max_levels,
                       min_level_rows=check.level_min_rows, null=null)

    big = sum(len(v) for c in columns if (v := ref[c].values) is not None)
    return map_columns(one, columns, workers=None if big > 200_000 else 1)


def grade_all(check: Any, drifts: list[ColumnDrift], trend: Trend | None = None,
              design: str | None = None, seed: int = 0) -> list[tuple[ColumnDrift, Verdict]]:
    """Adjust the p-values of one comparison's columns together (BH over chi-square and KS;
    Bonferroni over every level tested), grade each column (:func:`judge`, against the time
    backtests or entity re-splits of ``trend`` when given; in a random or stratified
    ``design``, a column graded above info against random re-splits of its pooled rows:
    :mod:`auditor.judging.row_resplits`); in place on the levels."""
    family = [d.chi2_p for d in drifts] + [d.ks_p if d.ks_p is not None else math.nan
                                           for d in drifts]
    adjusted = bh_adjust(np.array(family, dtype=float))
    # per-level tests: Bonferroni over every level tested in the comparison (all columns), so
    # hundreds of levels of many columns do not produce a chance "fold" somewhere
    m = sum(len(d.levels) for d in drifts)
    for d in drifts:
        for lv in d.levels:
            lv.p_adj = min(1.0, lv.p * m)
    n = len(drifts)
    out = []
    for i, d in enumerate(drifts):
        ks_adj = None if d.ks_p is None else float(adjusted[n + i])
        v = judge(check, d, float(adjusted[i]), ks_adj,
                  trend.column(d.column) if trend else None)
        if design in RANDOM_DESIGNS and trend is None and v.raw != Severity.INFO:
            null = row_resplit_trend(d, seed, check.epsilon,
                                     tail=v.severity != Severity.INFO)
            if null is not None:
                v = judge(check, d, float(adjusted[i]), ks_adj, null)
        out.append((d, v))
    return out


# ---------------------------------------------------------------------------------------------
# drift.features
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class DriftThresholds:
    """Parameters shared by the drift checks: bins, effect-size thresholds (exceeded: value >
    threshold) and the significance level of the Benjamini-Hochberg-adjusted p-values."""

    n_bins: int = 10
    epsilon: float = 1e-4
    psi_warn_above: float = 0.1
    psi_fail_above: float = 0.25
    ks_warn_above: float = 0.1
    ks_fail_above: float = 0.2
    cramers_v_warn_above: float = 0.1
    cramers_v_fail_above: float = 0.25
    alpha: float = 0.05
    top_categories: int = 20    # categories in charts, rows in bin tables and example lists
    hist_bins: int = 30         # equal-width bins of the overlaid histogram
    max_levels: int = 50        # above: rare levels pooled, PSI judged net of chance
    level_min_rows: int = 30    # a level is tested on its own from this many rows in a split
    level_fold_warn_above: float = 1.5   # a level's share multiplied or divided by more: warn
    min_rows: int = 30          # a split with fewer rows: a drift warns at most
    unseen_warn_above: float = 0.01  # share of compared rows holding values unseen in the
    unseen_fail_above: float = 0.1   # reference, beyond the share expected by chance

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True, kw_only=True)
class FeatureDrift(DriftThresholds):
    """Features whose distribution moved between splits (or from the reference snapshot).

    A fail means a model trained on the first split is evaluated (or served) on data that
    looks different, so its metric may not carry over; a drifted feature can also reveal a
    broken pipeline (a unit change, a new category, a column filled differently). Fix: check
    the feature's extraction in the later split, retrain on recent data, or reweight.

    Compared: every later split against the first (train), and each consecutive pair after it
    (val against test); with ``reference:`` every split against the reference. Numeric
    features (datetimes as seconds since the epoch) and categorical/boolean features are
    compared; the declared time column (it moves by design), ids, groups, text and the label
    (see ``drift.label``) are not. Statistics per column:

    - PSI = sum_i (a_i - e_i) ln(a_i / e_i) over bins from the reference's quantiles
      (``n_bins``; one bin per value when it has at most ``n_bins`` distinct values, plus an
      "other values" bin), one bin per category for categoricals, and one bin for missing
      values (null, NaN); shares below ``epsilon`` (1e-4) are raised to it.
    - KS D = max |F_ref - F_cur| over non-missing values, p-value as
      ``scipy.stats.ks_2samp`` (exact up to 10,000 rows a side, asymptotic above).
    - chi-square test (no continuity correction) of the 2 x bins table of counts; its p-value
      qualifies PSI and Cramér's V (bias-corrected, categoricals only).
    - Jensen–Shannon distance (base 2) on the PSI bins; Wasserstein-1 distance between the
      non-missing values divided by the reference's IQR (its std when the IQR is 0);
      missing-rate delta; unseen rate (share of compared rows holding a category or, for
      per-value bins, a value the reference never had).

    Severity comes from effect sizes, since at a million rows every p-value is tiny: PSI > 0.1
    warns, > 0.25 fails (the usual credit-scoring bands; a normal mean shift of d standard
    deviations gives PSI about d^2, so 0.1 is about 0.3 sd and 0.25 about 0.5 sd); KS D > 0.1
    warns, > 0.2 fails (the CDFs differ by 10 / 20 percentage points somewhere: about a 0.25 /
    0.5 sd mean shift); Cramér's V > 0.1 warns, > 0.25 fails (Cohen's small and between small
    and medium effect). Each grade also needs its test's p-value, Benjamini–Hochberg adjusted
    over every test of the comparison (all columns, chi-square and KS together), below
    ``alpha``; a large but non-significant effect is reported as info.

    What keeps those verdicts honest on real data:

    - Small samples: when Cochran's rule fails (an expected count below 1, or more than 20%
      below 5) the chi-square p-value is replaced by Fisher's exact test (2 x 2) or a seeded
      Monte Carlo exact test (up to 50 bins); a split of fewer than ``min_rows`` (30) rows
      warns at most.
    - Rare levels: a level (category, class, or value of a per-value binned numeric) with at
      least ``level_min_rows`` rows whose share is multiplied or divided by more than
      ``level_fold_warn_above`` (1.5) warns when its own 2 x 2 test (Bonferroni over every
      level tested in the comparison, all columns) is below ``alpha``: a class doubling from
      1% to 2% barely moves PSI or V. Folds only warn: one level of many moving (an aircraft
      retired, a seasonal route) is worth a look, not a failed gate.
    - High cardinality (more than ``max_levels`` categories, e.g. 4,000 tail numbers): levels
      whose expected count in the smaller split is below 5 are pooled into one
      "(rare levels)" bin, and the PSI graded is the PSI in excess of chance,
      PSI - (B - 1)(1/n_ref + 1/n_cur) (the expectation of PSI over B bins with no drift), so
      sampling noise over thousands of sparse levels is not reported as drift.
    - Unseen values: rows of the compared split holding a category (or a per-value numeric's
      value) the reference never had are their own finding (metric ``unseen_share``, count =
      those rows, the values as evidence), graded on the share in excess of the Good–Turing
      expectation (share of reference rows holding a value seen once): > ``unseen_warn_above``
      (1%) warns, > ``unseen_fail_above`` (10%) fails. In a random split design a grade also
      needs the unseen rows to be unlikely when the same rows are dealt again at random
      (p below ``alpha`` over the columns compared): a small reference lacks common values
      by chance.
    - Time splits: a feature that is a calendar part of the declared time column (month, day,
      weekday, hour ... up to relabelling and a whole-hour offset, verified on 99% of rows, see
      :mod:`auditor.stats.calendar`) moves by design when the splits are cut by time (at most
      5% of a compared split earlier than the reference's end); its drift is reported as info
      with that reason, as is an attribute of the period in a panel (one value per time
      value: a national rate of the year). In a random split it is judged as any feature.
    - The split design's null (``split_design``): in a time design each pair cut by time is
      measured again as the later split against the earlier split's last rows and as
      backtests of that geometry inside the earlier split
      (:mod:`auditor.judging.backtest`); in a group design row measurements are measured on 9
      re-splits of the pair's rows by whole entities (:mod:`auditor.judging.resplits`) and
      attributes of the entity at one row per entity. Each statistic is then graded on its
      excess over the null's largest value (PSI as a shift, (sqrt(PSI) - sqrt(PSI_max))^2;
      KS D and Cramér's V by difference; a level fold by ratio), metric
      ``<statistic>_beyond_trend`` / ``<statistic>_beyond_entity_resplits``. In a random or
      stratified design a column graded above info is judged against 9,999 random
      re-splits of its pooled rows drawn from its binned counts (no data read again; a plain
      random re-split for a stratified design too, whose strata are the label's classes,
      :mod:`auditor.judging.row_resplits`): PSI, PSI beyond chance and Cramér's V of each
      re-split, KS D's Kolmogorov quantiles; graded on the excess over the null's median
      (sampling noise adds to every statistic) once past its 95% quantile, and a fail needs
      the 99.9% quantile too; metric ``<statistic>_beyond_random_resplits``. At thousands of
      rows the null is small (PSI's 99.9% quantile 0.006 at 5,000 rows) and a grade barely
      moves; a small split's heavy-tailed PSI (a 59-row split reaches 0.85 in one random
      re-split of a hundred, 1.2 in one of a thousand) warns instead of failing.
    - Messages name a value that moved beyond noise (largest standardised difference) with a
      non-zero count (a value that vanished is counted in the reference), never a pooled bin.
    - The summary lists every column that moved in its table and names the stable ones once.
    - Per comparison, the first ``detailed_info`` info findings of columns (largest PSI first)
      carry the chart and bin table; later ones carry the statistics only (a table of 10,000
      short columns moves most of them within chance: 9,800 charts made report.json 30 MB).
    """

    id: ClassVar[str] = "drift.features"
    title: ClassVar[str] = "Feature drift between splits"
    cost: ClassVar[Cost] = Cost.STATS
    needs: ClassVar[Needs] = Needs()  # two splits, or one and a reference (in measure)
    max_chart_features: int = 50
    detailed_info: int = 50  # info findings per comparison with a chart and bin table

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.max_chart_features, int) or self.max_chart_features < 1:
            raise ValueError("max_chart_features must be a positive integer; "
                             f"got {self.max_chart_features!r}")
        check_params(self, ("detailed_info",), lambda v: isinstance(v, int) and v >= 0,
                     "an integer >= 0")

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: Roles) -> FeatureMeasures:
        """Every compared column of every pair (:class:`FeatureMeasures`): categorical and
        boolean columns from their value counts; numeric and datetime columns from the
        engine's distributions, a batch of columns at a time (each batch compared on every
        pair, charts included, then dropped: exact sorted values cost as much memory as the
        data); the calendar parts of the time column on a seeded sample of at most
        ``SAMPLE_ROWS`` rows; whether each pair is cut by time."""
        pairs = comparisons_of(list(roles.splits), roles.reference)
        if not pairs:
            raise NotApplicable("only one split and no reference: nothing to compare")
        kinds = {c: roles.kinds[c] for c in roles.features if roles.kinds.get(c) in DRIFT_KINDS}
        if not kinds:
            raise NotApplicable("no numeric, datetime, categorical or boolean feature columns")
        got = self._drifts(engine, kinds, pairs, with_reference=roles.reference, seed=roles.seed)
        drifts, bounds, sketched, grid, over = got
        kinds = {c: k for c, k in kinds.items() if c not in over}
        if not kinds:
            raise NotApplicable("every feature column has more distinct values than the "
                                "engine's driver holds")
        attributes: set[str] = set()
        for pair, per_entity in self._per_entity(engine, roles, kinds, pairs).items():
            drifts[pair] = {c: per_entity.get(c, cd) for c, cd in drifts[pair].items()}
            for c in per_entity:
                bounds[pair].pop(c, None)
            attributes |= set(per_entity)
        calendar = self._calendar(engine, roles, kinds)
        periods = self._periods(engine, roles, [c for c in kinds if c not in calendar])
        graded = moved(self, drifts)
        time = roles.columns.time
        return FeatureMeasures(
            pairs=pairs, kinds=kinds, drifts=drifts, bounds=bounds, sketched=sketched,
            grid=grid, calendar=calendar, time=time, periods=periods,
            time_split=time_splits(engine, roles, pairs) if calendar or periods else {},
            not_compared=not_compared_columns(roles, kinds) + [
                {"column": c, "reason": over_budget_reason(*n)} for c, n in over.items()],
            over=over, trend=self._null(engine, roles, {
                c: k for c, k in kinds.items() if c not in attributes and c in graded},
                pairs), design=split_design(engine, roles).design, seed=roles.seed)

    def _drifts(self, engine: Operations, kinds: dict[str, Kind], pairs: list[tuple[str, str]],
                *, with_reference: bool, seed: int, charts: bool = True
                ) -> tuple[dict[tuple[str, str], dict[str, ColumnDrift]],
                           dict[tuple[str, str], dict[str, float | None]], dict[str, int], int,
                           dict[str, tuple[int, int]]]:
        """Every pair's :class:`ColumnDrift` of ``kinds`` (in column order, without the
        categorical columns whose counts the driver cannot hold: ``over``), with the sketch's
        bounds, accuracy per split and grid."""
        drifts: dict[tuple[str, str], dict[str, ColumnDrift]] = {pair: {} for pair in pairs}
        over = self._categorical(engine, kinds, pairs, drifts, with_reference, seed,
                                 null=not charts)
        numeric = {c: k for c, k in kinds.items() if k in NUMERIC_KINDS}
        bounds: dict[tuple[str, str], dict[str, float | None]] = {pair: {} for pair in pairs}
        sketched: dict[str, int] = {}
        grid = 0
        for batch in engine.numeric_distributions(numeric, n_bins=self.n_bins,
                                                  with_reference=with_reference):
            for ref, cur in pairs:
                exact = {s: {c: d for c, d in batch[s].items() if isinstance(d, Sample)}
                         for s in (ref, cur)}
                a, b = exact[ref], exact[cur]
                for cd in compare_columns(self, list(a), a, b, seed, null=not charts):
                    va, vb = a[cd.column].values, b[cd.column].values
                    assert va is not None and vb is not None  # numeric samples hold values
                    if charts:
                        cd.chart = numeric_chart(cd, va, vb, ref, cur, self.hist_bins,
                                                 self.top_categories)
                    drifts[ref, cur][cd.column] = cd
                sketch = {c: (x, y) for c, x in batch[ref].items()
                          if isinstance(x, Binned) and isinstance(y := batch[cur][c], Binned)}
                for c, (cd, bound) in self._binned(engine, sketch, ref, cur, seed).items():
                    drifts[ref, cur][c] = cd
                    bounds[ref, cur][c] = bound
                for x, y in sketch.values():
                    sketched.update({ref: x.accuracy, cur: y.accuracy})
                    grid = x.grid_size
            del batch
        drifts = {pair: {c: d[c] for c in kinds if c not in over} for pair, d in drifts.items()}
        if sketched:
            self._settle_unique(engine, drifts, numeric)
        return drifts, bounds, sketched, grid, over

    def _periods(self, engine: Operations, roles: Roles, columns: list[str]) -> list[str]:
        """In a time design of a panel (each time value on two rows or more on average, as
        firms x years), the columns that are attributes of the period: one value per time
        value (a national rate, an index of the year). Their later values are new by
        construction. On the engine's driver data."""
        t = roles.columns.time
        if not t or not columns or split_design(engine, roles).design != "time":
            return []
        frames = driver_frames(engine)
        names = [s for s in roles.splits if s in frames and t in frames[s].columns]
        return entity_columns({s: frames[s] for s in names}, t, columns, min_rows=2.0)

    def _per_entity(self, engine: Operations, roles: Roles, kinds: dict[str, Kind],
                    pairs: list[tuple[str, str]]
                    ) -> dict[tuple[str, str], dict[str, ColumnDrift]]:
        """In a group design, the columns that are attributes of the entity (one value per
        entity, :func:`~auditor.stats.drift.entity_columns`) compared at one row per entity:
        test entities are new entities, so their attributes differ as a sample of entities
        does, and counting each entity's rows as independent evidence would grade that as
        drift. On the engine's driver data (Spark: its driver-side sample)."""
        design = split_design(engine, roles)
        e = design.entities
        pairs = [p for p in pairs if REFERENCE not in p]
        if design.design != "group" or e is None or not pairs:
            return {}
        frames = driver_frames(engine)
        names = {s for p in pairs for s in p}
        if not names <= set(frames) or any(e not in frames[s].columns for s in names):
            return {}
        level = entity_columns({s: frames[s] for s in names}, e,
                               [c for c in kinds if c != e and all(
                                   c in frames[s].columns for s in names)])
        if not level:
            return {}
        from auditor.engines.polars_engine import PolarsEngine

        view = PolarsEngine({s: one_row_per(frames[s].select([e, *level]), e) for s in names},
                            seed=roles.seed)
        measured = self._drifts(view, {c: kinds[c] for c in level}, pairs,
                                with_reference=False, seed=roles.seed)[0]
        for d in measured.values():
            for cd in d.values():
                cd.entity = e
        return measured

    def _null(self, engine: Operations, roles: Roles, kinds: dict[str, Kind],
              pairs: list[tuple[str, str]]) -> dict[tuple[str, str], Trend]:
        """The same drifts measured on the split design's honest comparisons of every pair
        (:mod:`auditor.judging.nulls`: time backtests or entity re-splits), charts aside."""
        if not kinds:
            return {}
        nv = null_views(engine, roles, pairs, list(kinds), roles.seed)
        if nv is None:
            return {}
        measured = (self._drifts(nv.view, kinds, nv.comparisons(), with_reference=False,
                                 seed=roles.seed, charts=False)[0]
                    if nv.view is not None else {})
        return nv.trends(measured, list(kinds))

    def _categorical(self, engine: Operations, kinds: dict[str, Kind],
                     pairs: list[tuple[str, str]],
                     drifts: dict[tuple[str, str], dict[str, ColumnDrift]],
                     with_reference: bool, seed: int, null: bool = False
                     ) -> dict[str, tuple[int, int]]:
        """Categorical and boolean columns compared on every pair from one call of value
        counts; the columns whose counts the engine's driver cannot hold, with their count and
        the driver's budget."""
        cat = [c for c, k in kinds.items() if k in CATEGORICAL_KINDS]
        if not cat:
            return {}
        rows = engine.split_rows(with_reference=with_reference)
        counted = engine.value_counts(cat, with_reference=with_reference, partial=True)
        over = {c: (vc.over, vc.budget) for c, vc in counted.items() if vc.over}
        kept = [c for c in cat if c not in over]
        empty = pl.DataFrame(schema={"value": pl.String, "n": pl.Int64})
        samples: dict[str, dict[str, Sample]] = {s: {} for s in rows}
        for c in kept:
            by_split = counted[c].counts.partition_by("split", as_dict=True)
            for s, n in rows.items():
                part = by_split.get((s,))
                counts = empty if part is None else part.select("value", "n")
                samples[s][c] = Sample(kinds[c], n, n - int(counts["n"].sum() or 0),
                                       counts=counts)
        for ref, cur in pairs:
            for cd in compare_columns(self, kept, samples[ref], samples[cur], seed, null=null):
                drifts[ref, cur][cd.column] = cd
        return over

    def _binned(self, engine: Operations, sketch: dict[str, tuple[Binned, Binned]], ref: str,
                cur: str, seed: int) -> dict[str, tuple[ColumnDrift, float | None]]:
        """Sketched columns of one pair (:func:`~auditor.stats.drift_binned.compare_binned`),
        with the values of ``cur`` the reference never had for the per-value ones."""
        refs = {c: v for c, (a, b) in sketch.items() if (v := a.prof.values) is not None
                and binned_per_value(a, self.n_bins) and value_bins(a, b)[2]}
        kinds = {c: a.kind for c, (a, _) in sketch.items()}
        new = {c: ([(fmt_value(v, kinds[c]), n) for v, n in top], distinct)
               for c, (top, distinct) in engine.unseen_values(
                   cur, refs, kinds, limit=LISTED_CATEGORIES).items()} if refs else {}
        return {c: compare_binned(c, a, b, n_bins=self.n_bins, epsilon=self.epsilon, seed=seed,
                                  min_level_rows=self.level_min_rows, hist_bins=self.hist_bins,
                                  top=self.top_categories, ref_name=ref, cur_name=cur,
                                  unseen=new.get(c))
                for c, (a, b) in sketch.items()}

    def _settle_unique(self, engine: Operations,
                       drifts: dict[tuple[str, str], dict[str, ColumnDrift]],
                       numeric: dict[str, Kind]) -> None:
        """Sketched columns are only candidates for "every value unique": the exact distinct
        count is asked (one call per pair) for the candidates whose finding is written (raw
        grade above info: their message states it)."""
        for (ref, cur), d in drifts.items():
            graded = grade_all(self, list(d.values()))
            todo = {cd.column: numeric[cd.column] for cd, v in graded
                    if cd.column in numeric and cd.all_unique and v.raw != Severity.INFO}
            if not todo:
                continue
            u = engine.all_unique(todo, [ref, cur])
            for c in todo:
                d[c].all_unique = u[ref][c] and u[cur][c]

    def _calendar(self, engine: Operations, roles: Roles, kinds: dict[str, Kind]
                  ) -> dict[str, Any]:
        """Features that are calendar parts of the declared time column, on a seeded sample of
        every split (the match is checked on at most ``SAMPLE_ROWS`` rows anyway)."""
        from auditor.stats.calendar import SAMPLE_ROWS, calendar_features

        time = roles.columns.time
        cands = [c for c, k in kinds.items() if k != Kind.DATETIME]
        if not time or not cands:
            return {}
        data = engine.driver_data().data
        names = list(roles.splits)
        frames = [data.splits[n] for n in names]
        if roles.reference and data.reference is not None:
            frames = [data.reference] + frames
        if any(time not in f.columns for f in frames):
            return {}
        share = min(1.0, SAMPLE_ROWS / max(1, sum(f.height for f in frames)))
        parts = [f.select([time] + cands) for f in frames]
        if share < 1:
            parts = [p.sample(fraction=share, seed=roles.seed) for p in parts]
        try:
            both = pl.concat(parts, how="vertical_relaxed")
        except (pl.exceptions.PolarsError, TypeError):  # splits typed differently: first only
            both = parts[0]
        return calendar_features(both, time, cands, seed=roles.seed)

    def judge(self, m: FeatureMeasures) -> list[Finding]:
        findings: list[Finding] = []
        # (compared split, column) -> the unseen-values finding already written for it
        unseen: dict[tuple[str, str], Finding] = {}
        for i, (ref, cur) in enumerate(m.pairs):
            trend = m.trend.get((ref, cur))
            graded = grade_all(self, [m.drifts[ref, cur][c] for c in m.kinds], trend,
                               m.design, m.seed)
            if (m.calendar or m.periods) and m.time_split.get((ref, cur)):
                for cd, v in graded:
                    if cd.column in m.calendar:  # its unseen values too are by design
                        v.severity = Severity.INFO
                        match = m.calendar[cd.column]
                        v.reason = (f"{cd.column} is {match.describe(m.time)}"
                                    f" on {fmt_share(match.share)} of rows and the "
                                    f"splits are cut by {m.time}: calendar drift is "
                                    "expected in a time split, reported as info")
                    elif cd.column in m.periods:
                        v.severity = Severity.INFO
                        v.reason = (f"{cd.column} takes one value per {m.time} (an attribute "
                                    f"of the period, as a national rate of the year is) and the "
                                    f"splits are cut by {m.time}: later periods bring new values"
                                    " by construction, reported as info")
            if trend is not None and trend.design == "time":
                for cd, v in graded:
                    if v.trend is not None:
                        unstable(self, v, trend.nulls[cd.column], ref, cd.column)
            new = self._comparison_findings(graded, ref, cur, m.kinds,
                                            m.not_compared if i == 0 else [],
                                            random_design=m.design in RANDOM_DESIGNS)
            if trend is not None:
                backtests(new[0], trend)
            bounds = m.bounds[ref, cur]
            for f in new:
                if f.subject in bounds and f.metric != "unseen_share":
                    sketch_statement(f, bounds[f.subject], m, ref, cur)
            findings += self._unseen_once(new, m, ref, cur, unseen)
        return findings + [Finding(severity=Severity.INFO, metric="not_compared", subject=c,
                                   count=n, message=f"{c} was not compared: "
                                   f"{over_budget_reason(n, budget)}")
                           for c, (n, budget) in m.over.items()]

    @staticmethod
    def _unseen_once(new: list[Finding], m: FeatureMeasures, ref: str, cur: str,
                     unseen: dict[tuple[str, str], Finding]) -> list[Finding]:
        """``new`` without an unseen-values finding that an earlier pair already wrote for the
        same compared split and column with the same values, graded no higher (train -> test
        said them; val -> test would say them again): the earlier finding says they are unseen
        in ``ref`` too. Only when every unseen value is listed (at most 100) can that be
        told."""
        out = []
        for f in new:
            if f.metric != "unseen_share":
                out.append(f)
                continue
            cd = m.drifts[ref, cur][str(f.subject)]
            earlier = unseen.get((cur, str(f.subject)))
            listed = {v for v, _ in cd.new_categories}
            if earlier is not None and len(listed) == cd.n_new \
                    and RANK[f.severity] <= RANK[earlier.severity]:
                first = earlier.splits[0]
                before = m.drifts[first, cur][str(f.subject)]
                if len(before.new_categories) == before.n_new and listed == {
                        v for v, _ in before.new_categories}:
                    earlier.message += (f"; {'it is' if cd.n_new == 1 else 'they are'} "
                                        f"unseen in {ref} too")
                    continue
            unseen.setdefault((cur, str(f.subject)), f)
            out.append(f)
        return out

    def _comparison_findings(self, graded: list[tuple[ColumnDrift, Verdict]], ref: str,
                             cur: str, kinds: dict[str, Kind],
                             skipped: list[dict[str, str]], *, random_design: bool = False
                             ) -> list[Finding]:
        order = sorted(graded, key=lambda g: (-RANK[g[1].severity], -RANK[g[1].raw],
                                              -np.nan_to_num(g[0].psi, nan=-1.0), g[0].column))
        column_findings = []
        reported: set[str] = set()
        infos = 0  # info findings of columns so far, in report order
        for cd, v in order:
            quiet = (v.severity == Severity.INFO and v.metric.startswith("level_fold")
                     and not v.reason and v.trend is None)
            unseen = None
            if cd.n_new and cd.unseen_rows:
                # categories: always (a fact); values of a per-value binned numeric (a count
                # meeting 11 once) only when graded or explained
                f = unseen_finding(self, cd, ref, cur, reason=v.reason, tests=len(graded),
                                   resplit=random_design)
                if cd.kind in CATEGORICAL_KINDS or f.severity != Severity.INFO or v.reason:
                    unseen = f
            if v.raw != Severity.INFO and not quiet:
                message, count = describe_drift(cd, v, ref, cur, self.alpha,
                                                unseen_apart=unseen is not None)
                detailed = v.severity != Severity.INFO or infos < self.detailed_info
                infos += v.severity == Severity.INFO
                column_findings.append(Finding(
                    severity=v.severity, message=message, metric=v.metric, value=rounded(v.value),
                    threshold=v.threshold, count=count, subject=cd.column, splits=[ref, cur],
                    evidence=evidence(self, cd, v, ref, cur) if detailed else
                    {"statistics": statistics(cd, v, ref, cur)}))
            if unseen is not None:
                column_findings.append(unseen)
                reported.add(cd.column)
        flagged = [g for g in order if g[1].severity != Severity.INFO]
        n_fail = sum(g[1].severity == Severity.FAIL for g in flagged)
        worst = max(graded, key=lambda g: (np.nan_to_num(g[0].psi, nan=-1.0)))
        n = len(graded)
        message = (f"{fmt_rows(len(flagged), n, 'features')} drifted "
                   f"from {ref} to {cur} ({n_fail:,} fail, {len(flagged) - n_fail:,} warn); "
                   f"largest PSI {fmt_effect(worst[0].psi)} on {worst[0].column}")
        by_psi = sorted(graded, key=lambda g: (-np.nan_to_num(g[0].psi, nan=-1.0),
                                               g[0].column))[:self.max_chart_features]
        chart = {"type": "bar", "title": f"PSI per feature, {ref} → {cur}",
                 "labels": [g[0].column for g in by_psi],
                 "values": [rounded(g[0].psi) or 0.0 for g in by_psi],
                 "colors": [_COLORS[g[1].severity] for g in by_psi],
                 "lines": [self.psi_warn_above, self.psi_fail_above], "horizontal": True,
                 "xlabel": "PSI", "width": 7.0, "height": min(12.0, 1.2 + 0.22 * len(by_psi))}
        # the table lists the columns that moved (or have unseen values); the stable ones
        # (no effect size reaches a warn threshold) are named once, not a row each
        moved = [(cd, v) for cd, v in order if v.raw != Severity.INFO or cd.column in reported]
        moved_names = {cd.column for cd, _ in moved}
        stable = [cd.column for cd, _ in order if cd.column not in moved_names]
        ev: dict[str, Any] = {"chart": chart, "features": [
            table_row(cd, v, str(kinds[cd.column])) for cd, v in moved]}
        if stable:
            message += (f"; {len(stable):,} stable (no effect size above a warn threshold): "
                        f"{name_list(stable)}")
            ev["stable columns"] = [{"columns": name_list(stable, 200), "count": len(stable)}]
        if skipped:
            ev["not compared"] = skipped
        summary = Finding(severity=Severity.INFO, message=message, metric="drifted_features",
                          value=len(flagged) / n, count=len(flagged), subject="",
                          splits=[ref, cur], evidence=ev)
        return [summary] + column_findings


@dataclass(frozen=True)
class FeatureMeasures:
    """What :meth:`FeatureDrift.judge` grades: per (reference, compared) pair the
    :class:`~auditor.stats.drift.ColumnDrift` of every compared column (``kinds``, in column
    order); for columns measured from sketches, the bound on KS D's error per pair
    (``bounds``), the sketch's accuracy per split (``sketched``) and its grid's quantiles per
    split (``grid``); the features that are calendar parts of the time column and which pairs
    are cut by it; the columns not compared with the reason, and those left out because their
    counts exceed the engine's driver (``over``: column -> (split, value) counts)."""

    pairs: list[tuple[str, str]]
    kinds: dict[str, Kind]
    drifts: dict[tuple[str, str], dict[str, ColumnDrift]]
    bounds: dict[tuple[str, str], dict[str, float | None]]
    sketched: dict[str, int]
    grid: int
    calendar: dict[str, Any]
    time: str | None
    time_split: dict[tuple[str, str], bool]
    not_compared: list[dict[str, str]]
    periods: list[str]  # attributes of the time period (a panel's yearly national rates)
    over: dict[str, tuple[int, int]]
    trend: dict[tuple[str, str], Trend] = field(default_factory=dict)  # the design's null
    design: str = "unknown"  # the split design (random re-splits judge a random design)
    seed: int = 0


def over_budget_reason(n: int, budget: int) -> str:
    return (f"{n:,} distinct (split, value) counts: more than the engine's driver holds "
            f"({budget:,} category counts in one operation, columns with fewer values first);"
            " a near-unique string such as an id or free text: declare it under columns.ids "
            "or columns.text")


def sketch_statement(f: Finding, bound: float | None, m: FeatureMeasures, ref: str,
                     cur: str) -> None:
    """The sketch's accuracy and KS D's error bound, in a sketched column's statistics."""
    stats = (f.evidence or {}).get("statistics")
    if stats is None or bound is None:
        return
    acc = m.sketched
    stats["ks_d error bound"] = float(f"{bound:.6g}")
    stats["spark quantiles"] = (f"percentile_approx, accuracy {acc[ref]:,} in {ref} and "
                                f"{acc[cur]:,} in {cur} (rank error <= n/accuracy); KS on a "
                                f"grid of {m.grid:,} quantiles per split, its error bound "
                                "measured from the counts between grid points")


def not_compared_columns(roles: Roles, kinds: dict[str, Kind]) -> list[dict[str, str]]:
    cols = roles.columns
    reasons = {}
    if cols.time:
        reasons[cols.time] = "declared time column: it moves between splits by design"
    if cols.label:
        reasons[cols.label] = "label: see drift.label"
    for c in cols.ids:
        reasons.setdefault(c, "declared id column")
    for c in cols.groups:
        reasons.setdefault(c, "declared group column")
    for c in cols.text:
        reasons.setdefault(c, "declared text column")
    for c in roles.features:
        if c not in kinds:
            reasons.setdefault(c, f"{roles.kinds.get(c)} column")
    return [{"column": c, "reason": r} for c, r in list(reasons.items())[:200]]


# ---------------------------------------------------------------------------------------------
# drift.label
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class LabelDrift(DriftThresholds):
    """The label's distribution differs between splits (or from the reference snapshot).

    A fail means the class balance (or the target's distribution) the model is evaluated on is
    not the one it was trained on: accuracy-type metrics and calibration shift with it even for
    a perfect model, and a sudden change often means a labelling or join problem. Fix: check
    the labelling of the later split, report metrics per class, or resample/reweight.

    Same comparisons, statistics and thresholds as ``drift.features``: a binary or multiclass
    label is compared per class (PSI, chi-square with bias-corrected Cramér's V, Jensen–Shannon
    distance); a numeric label by PSI over the reference's quantile bins and KS D (plus
    Jensen–Shannon and normalised Wasserstein). Severity by effect size (PSI > 0.1 / 0.25,
    KS D > 0.1 / 0.2, Cramér's V > 0.1 / 0.25 warn / fail), each qualified by its
    Benjamini–Hochberg-adjusted p-value below ``alpha`` (adjusted over the comparison's tests),
    exact tests at small samples, and a rare class whose share is multiplied or divided by more
    than ``level_fold_warn_above`` warns (see ``drift.features``). A class of the compared split
    that the reference never had is its own finding (warn at least: a model cannot predict a
    class it never saw). Against the split design's null as ``drift.features`` is (time
    backtests, entity re-splits, random re-splits: a 59-row test split of ISLR Hitters'
    salaries reaches PSI 0.91 where one random re-split in a hundred reaches 0.85, and no
    longer fails); in a time design a label whose backtests move it by more
    than ``psi_fail_above`` (median) warns even within the trend: a moving target, or a
    labelling that changed partway (vega's seattle_weather relabels rain as fog in 2013).
    """

    id: ClassVar[str] = "drift.label"
    title: ClassVar[str] = "Label distribution shift"
    cost: ClassVar[Cost] = Cost.STATS
    needs: ClassVar[Needs] = Needs(roles=("label",))

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: Roles) -> LabelMeasures:
        """Per split (and the reference): a numeric label's sorted values, else its rows per
        class (NaN and null are no class)."""
        y = roles.label
        assert y is not None  # needs: label
        first = roles.splits[0]
        if first in roles.unlabelled and not roles.reference:
            raise NotApplicable(f"label {y!r} is missing in every {first} row: no label "
                                "distribution to compare against")
        pairs = comparisons_of(roles.labelled_splits(), roles.reference)
        if not pairs and roles.unlabelled:
            raise NotApplicable(f"label {y!r} is missing in every row of "
                                f"{', '.join(roles.unlabelled)} (unlabelled): no label "
                                "distribution to compare")
        if not pairs:
            raise NotApplicable("only one split and no reference: nothing to compare")
        numeric = roles.label_kind == LabelKind.NUMERIC
        samples = label_samples(engine, y, numeric, roles.reference)
        if not numeric:
            distinct = pl.concat([s.counts["value"] for s in samples.values()
                                  if s.counts is not None]).unique().sort()
            if distinct.len() == 0:
                raise NotApplicable(f"label {y!r} is missing in every row")
            if distinct.len() == 1:
                raise NotApplicable(f"label {y!r} has a single class ({distinct[0]!r}) in every "
                                    "split: no distribution to compare")
        return LabelMeasures(label=y, numeric=numeric, pairs=pairs, samples=samples,
                             seed=roles.seed, unlabelled=roles.unlabelled,
                             trend=self._null(engine, roles, pairs, numeric),
                             design=split_design(engine, roles).design)

    def _null(self, engine: Operations, roles: Roles, pairs: list[tuple[str, str]],
              numeric: bool) -> dict[tuple[str, str], Trend]:
        """The label's drift on the split design's honest comparisons of every pair
        (:mod:`auditor.judging.nulls`: time backtests or entity re-splits)."""
        y = roles.label
        assert y is not None
        nv = null_views(engine, roles, pairs, [y], roles.seed)
        if nv is None:
            return {}
        got = label_samples(nv.view, y, numeric, False) if nv.view is not None else {}
        measured = {(a, b): {y: compare_columns(self, [y], {y: got[a]}, {y: got[b]},
                                                roles.seed)[0]}
                    for a, b in nv.comparisons()}
        return nv.trends(measured, [y])

    def judge(self, m: LabelMeasures) -> list[Finding]:
        y = m.label
        findings = []
        for ref, cur in m.pairs:
            trend = m.trend.get((ref, cur))
            ((cd, v),) = compare_all(self, [y], {y: m.samples[ref]}, {y: m.samples[cur]}, m.seed,
                                     trend, m.design)
            cd.all_unique = False  # a continuous label is unique per row; it is not an id
            if trend is not None and v.trend is not None and trend.design == "time":
                unstable(self, v, trend.nulls[y], ref, "the label")
            classes_apart = bool(cd.n_new and cd.unseen_rows and not m.numeric)
            message, count = describe_drift(cd, v, ref, cur, self.alpha,
                                            unseen_apart=classes_apart)
            findings.append(Finding(
                severity=v.severity, message=message, metric=v.metric, value=rounded(v.value),
                threshold=v.threshold, count=count, subject=y, splits=[ref, cur],
                evidence=evidence(self, cd, v, ref, cur, m.samples[ref], m.samples[cur])))
            if trend is not None:
                backtests(findings[-1], trend)
            if classes_apart:  # the classes unseen in ref: their own finding, said once
                findings.append(unseen_finding(self, cd, ref, cur, label=True))
        for split in m.unlabelled:  # said, never compared: a missing label is not a drift
            findings.append(Finding(
                severity=Severity.INFO, metric="unlabelled_split", subject=y, splits=[split],
                count=m.samples[split].rows if split in m.samples else None,
                message=f"{split}: label {y!r} is missing in every row (an unlabelled split, "
                        "e.g. one scored elsewhere): its label distribution is not compared"))
        return findings


@dataclass(frozen=True)
class LabelMeasures:
    """What :meth:`LabelDrift.judge` compares: per split (and ``reference``) the label's
    :class:`~auditor.stats.drift.Sample` (sorted values of a numeric label, rows per class
    otherwise), the (reference, compared) pairs, and the run's seed."""

    label: str
    numeric: bool
    pairs: list[tuple[str, str]]
    samples: dict[str, Sample]
    seed: int
    unlabelled: tuple[str, ...] = ()  # splits without a labelled row: said, not compared
    trend: dict[tuple[str, str], Trend] = field(default_factory=dict)  # the design's null
    design: str = "unknown"  # the split design (random re-splits judge a random design)


def label_samples(engine: Operations, y: str, numeric: bool, with_reference: bool
                  ) -> dict[str, Sample]:
    """Per split (and the reference when asked): a numeric label's sorted values, else its
    rows per class (NaN and null are no class)."""
    samples: dict[str, Sample] = {}
    if numeric:
        for split, sv in engine.sorted_values([y], with_reference=with_reference)[y].items():
            samples[split] = Sample(Kind.NUMERIC, sv.rows, sv.missing, values=sv.values)
        return samples
    rows = engine.split_rows(with_reference=with_reference)
    vc = engine.value_counts([y], with_reference=with_reference)[y]
    for split, n in rows.items():
        counts = vc.counts.filter(pl.col("split") == split).select("value", "n")
        samples[split] = Sample(Kind.CATEGORICAL, n, n - int(counts["n"].sum() or 0),
                                counts=counts)
    return samples


def driver_frames(engine: Operations) -> dict[str, pl.DataFrame]:
    """The engine's driver data as frames by split; none when it has no driver data (a
    Spark engine not opened by the loader): the design's refinements are then left out."""
    try:
        return engine.driver_data().data.splits
    except NotApplicable:
        return {}


def moved(check: Any, drifts: dict[tuple[str, str], dict[str, ColumnDrift]]) -> set[str]:
    """The columns whose drift grades above info in some pair: the only ones the design's
    null is measured for (it can only lower a grade; a stable column needs none)."""
    return {cd.column for d in drifts.values() for cd, v in grade_all(check, list(d.values()))
            if v.raw != Severity.INFO}


def unstable(check: Any, v: Verdict, null: list[dict[str, float]], ref: str, what: str
             ) -> None:
    """A drift the time trend explains still warns when the column moves that much inside
    the earlier split: the backtests' median PSI above ``psi_fail_above`` (a target or a
    feature whose distribution keeps moving, or whose recording changed partway: vega's
    seattle_weather relabels rain as fog in 2013, inside train; a unit switched in mid-train
    looks the same). ``what``: "the label" or the column's name."""
    psis = [b["psi"] for b in null if "psi" in b]
    if not psis or v.severity != Severity.INFO or v.raw == Severity.INFO \
            or not v.significant or v.reason:
        return
    inside = float(np.median(psis))
    if inside > check.psi_fail_above:
        v.severity = Severity.WARN
        v.reason = (f"{what} moves over time inside {ref} as well (median PSI "
                    f"{fmt_effect(inside)} between its earlier rows and a later window, above "
                    f"{check.psi_fail_above:g}): a moving target; look at how it was collected "
                    "or recorded over time")


def backtests(f: Finding, trend: Trend) -> None:
    """A pair's null of the design in its finding's evidence: the time backtests (how they
    were placed, each one) or how the entity re-splits were made."""
    ev = f.evidence if f.evidence is not None else {}
    if trend.design == "group":
        ev["entity re-splits"] = trend.note
    else:
        ev["time backtests"] = ([{"backtest": d} for d in trend.backtests]
                                or [{"note": trend.note}])
        if trend.backtests:
            ev["time backtests placed"] = trend.note
    f.evidence = ev
