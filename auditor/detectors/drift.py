"""Feature and label drift between splits, or between every split and a reference snapshot.

Statistics and binning live in :mod:`auditor.stats.drift` (per column),
:mod:`auditor.stats.levels` (exact tests, rare levels, per-level shifts) and
:mod:`auditor.stats.numerics` (PSI, KS, chi-square, Jensen–Shannon, Benjamini–Hochberg);
grading one column, its sentence and evidence in :mod:`auditor.judging.drift_verdicts`; calendar
parts of the time column in :mod:`auditor.stats.calendar`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.roles import Kind, LabelKind, Roles
from auditor.detectors.measured import judged
from auditor.engines.operations import Operations
from auditor.loading.data import REFERENCE, AuditData
from auditor.stats.drift import (CATEGORICAL_KINDS, NUMERIC_KINDS, ColumnDrift, Sample,
                                 compare, numeric_chart, prepare)
from auditor.judging.drift_verdicts import (RANK, Verdict, describe_drift, evidence, fmt_effect,
                                            judge, name_list, rounded, table_row, unseen_finding)
from auditor.errors import NotApplicable
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import bh_adjust, fmt_rows, fmt_share, map_columns

_COLORS = {Severity.FAIL: "#C44E52", Severity.WARN: "#DD8452", Severity.INFO: "#4C72B0"}
DRIFT_KINDS = NUMERIC_KINDS + CATEGORICAL_KINDS
MEASURE_BATCH = 4  # numeric columns whose samples drift.features holds at a time


# ---------------------------------------------------------------------------------------------
# Shared by both checks
# ---------------------------------------------------------------------------------------------

def comparisons(data: AuditData) -> list[tuple[str, str]]:
    """The (reference, compared) pairs of :func:`comparisons_of` for loaded data."""
    return comparisons_of(data.split_names, data.reference is not None)


def comparisons_of(names: list[str], reference: bool) -> list[tuple[str, str]]:
    """(reference, compared) pairs: with a reference dataset, (reference, split) for every
    split (scheduled mode); otherwise every later split against the first (train), plus each
    consecutive pair after the first (train, val, test -> train/val, train/test, val/test)."""
    if reference:
        return [(REFERENCE, s) for s in names]
    first = names[0]
    return [(first, s) for s in names[1:]] + [(names[i], names[i + 1])
                                              for i in range(1, len(names) - 1)]


def frame_of(data: AuditData, name: str) -> pl.DataFrame:
    return data.reference if name == REFERENCE and data.reference is not None \
        else data.splits[name]


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
                cur: dict[str, Sample], seed: int = 0) -> list[tuple[ColumnDrift, Verdict]]:
    """Compare every column; adjust every p-value of the comparison together (BH), grade."""
    return grade_all(check, compare_columns(check, columns, ref, cur, seed))


def compare_columns(check: Any, columns: list[str], ref: dict[str, Sample],
                    cur: dict[str, Sample], seed: int = 0) -> list[ColumnDrift]:
    """:func:`~auditor.stats.drift.compare` of every column (threads), in column order."""
    def one(c: str) -> ColumnDrift:
        return compare(c, ref[c], cur[c], n_bins=check.n_bins, epsilon=check.epsilon,
                       seed=seed, max_levels=check.max_levels,
                       min_level_rows=check.level_min_rows)

    big = sum(len(ref[c].values if ref[c].values is not None else ()) for c in columns)
    return map_columns(one, columns, workers=None if big > 200_000 else 1)


def grade_all(check: Any, drifts: list[ColumnDrift]) -> list[tuple[ColumnDrift, Verdict]]:
    """Adjust the p-values of one comparison's columns together (BH over chi-square and KS;
    Bonferroni over every level tested), grade each column (:func:`judge`); in place on the
    levels. The spark engine calls it on drifts measured from aggregates."""
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
        out.append((d, judge(check, d, float(adjusted[i]), ks_adj)))
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
      (1%) warns, > ``unseen_fail_above`` (10%) fails.
    - Time splits: a feature that is a calendar part of the declared time column (month, day,
      weekday, hour ... up to relabelling and a whole-hour offset, verified on 99% of rows, see
      :mod:`auditor.stats.calendar`) moves by design when the splits are cut by time (at most
      5% of a compared split earlier than the reference's end); its drift is reported as info
      with that reason. In a random split it is judged as any feature.
    - Messages name a value that moved beyond noise (largest standardised difference) with a
      non-zero count (a value that vanished is counted in the reference), never a pooled bin.
    - The summary lists every column that moved in its table and names the stable ones once.
    """

    id: ClassVar[str] = "drift.features"
    title: ClassVar[str] = "Feature drift between splits"
    cost: ClassVar[Cost] = Cost.STATS
    max_chart_features: int = 50

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.max_chart_features, int) or self.max_chart_features < 1:
            raise ValueError("max_chart_features must be a positive integer; "
                             f"got {self.max_chart_features!r}")

    def run(self, data: AuditData) -> list[Finding]:
        pairs = comparisons(data)
        if not pairs:
            raise NotApplicable("only one split and no reference: nothing to compare")
        kinds = {c: data.kinds[c] for c in data.features if data.kinds.get(c) in DRIFT_KINDS}
        if not kinds:
            raise NotApplicable("no numeric, datetime, categorical or boolean feature columns")
        names = list(dict.fromkeys(n for pair in pairs for n in pair))
        drifts = self._measure(data, names, pairs, kinds)
        calendar = self._calendar(data, names, kinds)
        skipped = not_compared_columns(data, kinds)
        findings: list[Finding] = []
        samples: dict[str, dict[str, Sample]] = {}  # charts are measured: no sample is needed
        for i, (ref, cur) in enumerate(pairs):
            graded = grade_all(self, [drifts[ref, cur][c] for c in kinds])
            if calendar and time_split(data, ref, cur):
                for cd, v in graded:
                    if cd.column in calendar:  # its unseen values too are by design
                        v.severity = Severity.INFO
                        match = calendar[cd.column]
                        v.reason = (f"{cd.column} is {match.describe(data.columns.time)}"
                                    f" on {fmt_share(match.share)} of rows and the "
                                    f"splits are cut by {data.columns.time}: calendar drift is "
                                    "expected in a time split, reported as info")
            findings += self._comparison_findings(graded, ref, cur, samples, data,
                                                  skipped if i == 0 else [])
        return findings

    def _measure(self, data: AuditData, names: list[str], pairs: list[tuple[str, str]],
                 kinds: dict[str, Kind]) -> dict[tuple[str, str], dict[str, ColumnDrift]]:
        """Every column of every pair, compared; numeric columns MEASURE_BATCH at a time.

        A numeric column's sample is a sorted float64 copy of its values: every split's samples
        of every column held at once were as large as the numeric data (+3.2 GB at 10M + 2.5M
        x 40). A batch's samples are prepared, compared on every pair (charts included: the
        evidence needs no sample afterwards) and released before the next batch; the
        categorical columns (value counts) are one batch. Same drifts as comparing all at once.
        """
        numeric = [c for c, k in kinds.items() if k in NUMERIC_KINDS]
        numeric_set = set(numeric)  # once, not once per column (10,000 columns: 3 s)
        categorical = [c for c in kinds if c not in numeric_set]
        batches = [numeric[b:b + MEASURE_BATCH] for b in range(0, len(numeric), MEASURE_BATCH)]
        out: dict[tuple[str, str], dict[str, ColumnDrift]] = {pair: {} for pair in pairs}
        for batch in [*batches, categorical]:
            if not batch:
                continue
            sub = {c: kinds[c] for c in batch}
            samples = {n: prepare(frame_of(data, n), sub) for n in names}
            for ref, cur in pairs:
                a, b = samples[ref], samples[cur]
                for cd in compare_columns(self, batch, a, b, data.seed):
                    if cd.kind in NUMERIC_KINDS:
                        cd.chart = numeric_chart(cd, a[cd.column].values, b[cd.column].values,
                                                 ref, cur, self.hist_bins, self.top_categories)
                    out[ref, cur][cd.column] = cd
            del samples
        return out

    def _calendar(self, data: AuditData, names: list[str], kinds: dict[str, Kind]
                  ) -> dict[str, Any]:
        """Features that are calendar parts of the declared time column (on every split)."""
        from auditor.stats.calendar import SAMPLE_ROWS, calendar_features

        time = data.columns.time
        cands = [c for c, k in kinds.items() if k != Kind.DATETIME]
        frames = [frame_of(data, n) for n in names]
        if not time or not cands or any(time not in f.columns for f in frames):
            return {}
        # a seeded sample of each split (the match is checked on at most 20,000 rows anyway)
        share = min(1.0, SAMPLE_ROWS / max(1, sum(f.height for f in frames)))
        parts = [f.select([time] + cands) for f in frames]
        if share < 1:
            parts = [p.sample(fraction=share, seed=data.seed) for p in parts]
        try:
            both = pl.concat(parts, how="vertical_relaxed")
        except (pl.exceptions.PolarsError, TypeError):  # splits typed differently: first only
            both = parts[0]
        return calendar_features(both, time, cands, seed=data.seed)

    def _comparison_findings(self, graded: list[tuple[ColumnDrift, Verdict]], ref: str,
                             cur: str, samples: dict[str, dict[str, Sample]], data: AuditData,
                             skipped: list[dict[str, str]]) -> list[Finding]:
        order = sorted(graded, key=lambda g: (-RANK[g[1].severity], -RANK[g[1].raw],
                                              -np.nan_to_num(g[0].psi, nan=-1.0), g[0].column))
        column_findings = []
        reported: set[str] = set()
        for cd, v in order:
            quiet = v.severity == Severity.INFO and v.metric == "level_fold" and not v.reason
            if v.raw != Severity.INFO and not quiet:
                message, count = describe_drift(cd, v, ref, cur, self.alpha)
                column_findings.append(Finding(
                    severity=v.severity, message=message, metric=v.metric, value=rounded(v.value),
                    threshold=v.threshold, count=count, subject=cd.column, splits=[ref, cur],
                    evidence=evidence(self, cd, v, ref, cur, *(samples[n][cd.column]
                                                               if samples else None
                                                               for n in (ref, cur)))))
            if cd.n_new and cd.unseen_rows:
                # categories: always (a fact); values of a per-value binned numeric (a count
                # meeting 11 once) only when graded or explained
                f = unseen_finding(self, cd, ref, cur, reason=v.reason, tests=len(graded))
                if cd.kind in CATEGORICAL_KINDS or f.severity != Severity.INFO or v.reason:
                    column_findings.append(f)
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
            table_row(cd, v, str(data.kinds[cd.column])) for cd, v in moved]}
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


def time_split(data: AuditData, ref: str, cur: str, tolerance: float = 0.05) -> bool:
    """Whether the pair is cut by the declared time column: at most ``tolerance`` (5%) of the
    compared split's timed rows are earlier than the reference's latest time (overlaps are
    leakage.temporal's business)."""
    t = data.columns.time
    a, b = frame_of(data, ref), frame_of(data, cur)
    if not t or t not in a.columns or t not in b.columns:
        return False
    try:
        latest = a[t].max()
        timed = b[t].drop_nulls()
        if latest is None or not timed.len():
            return False
        earlier = int((timed < latest).sum())
    except (pl.exceptions.PolarsError, TypeError):
        return False
    return earlier <= tolerance * timed.len()


def not_compared_columns(data: AuditData, kinds: dict[str, Kind]) -> list[dict[str, str]]:
    cols = data.columns
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
    for c in data.features:
        if c not in kinds:
            reasons.setdefault(c, f"{data.kinds.get(c)} column")
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
    class it never saw).
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
        pairs = comparisons_of(list(roles.splits), roles.reference)
        if not pairs:
            raise NotApplicable("only one split and no reference: nothing to compare")
        numeric = roles.label_kind == LabelKind.NUMERIC
        samples: dict[str, Sample] = {}
        if numeric:
            for split, sv in engine.sorted_values([y], with_reference=roles.reference)[y].items():
                samples[split] = Sample(Kind.NUMERIC, sv.rows, sv.missing, values=sv.values)
            classes = 3  # a numeric label has more than two values (label_kind)
        else:
            rows = engine.split_rows(with_reference=roles.reference)
            vc = engine.value_counts([y], with_reference=roles.reference)[y]
            for split, n in rows.items():
                counts = vc.counts.filter(pl.col("split") == split).select("value", "n")
                samples[split] = Sample(Kind.CATEGORICAL, n, n - int(counts["n"].sum() or 0),
                                        counts=counts)
            distinct = vc.counts["value"].unique().sort()
            classes = distinct.len()
            if classes == 0:
                raise NotApplicable(f"label {y!r} is missing in every row")
            if classes == 1:
                raise NotApplicable(f"label {y!r} has a single class ({distinct[0]!r}) in every "
                                    "split: no distribution to compare")
        return LabelMeasures(label=y, numeric=numeric, pairs=pairs, samples=samples,
                             seed=roles.seed)

    def judge(self, m: LabelMeasures) -> list[Finding]:
        y = m.label
        findings = []
        for ref, cur in m.pairs:
            ((cd, v),) = compare_all(self, [y], {y: m.samples[ref]}, {y: m.samples[cur]}, m.seed)
            cd.all_unique = False  # a continuous label is unique per row; it is not an id
            message, count = describe_drift(cd, v, ref, cur, self.alpha)
            findings.append(Finding(
                severity=v.severity, message=message, metric=v.metric, value=rounded(v.value),
                threshold=v.threshold, count=count, subject=y, splits=[ref, cur],
                evidence=evidence(self, cd, v, ref, cur, m.samples[ref], m.samples[cur])))
            if cd.n_new and cd.unseen_rows and not m.numeric:
                findings.append(unseen_finding(self, cd, ref, cur, label=True))
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
