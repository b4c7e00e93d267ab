"""Feature and label drift between splits, or between every split and a reference snapshot.

Statistics and binning live in :mod:`auditor.drift_stats` (per column) and
:mod:`auditor.stats` (PSI, KS, chi-square, Jensen–Shannon, Benjamini–Hochberg).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.checks import Cost
from auditor.data import REFERENCE, AuditData, Kind, LabelKind
from auditor.drift_stats import (CATEGORICAL_KINDS, MISSING, NUMERIC_KINDS, OTHER_VALUES,
                                 RARE_LEVELS, ColumnDrift, LevelShift, Sample, bins_table,
                                 category_chart, compare, fmt_value, numeric_chart, prepare)
from auditor.errors import NotApplicable
from auditor.report import Finding, Severity
from auditor.stats import (bh_adjust, clip_text, fmt_rows, fmt_share, grade,
                           map_columns)

_RANK = {Severity.INFO: 0, Severity.WARN: 1, Severity.FAIL: 2}
_COLORS = {Severity.FAIL: "#C44E52", Severity.WARN: "#DD8452", Severity.INFO: "#4C72B0"}
DRIFT_KINDS = NUMERIC_KINDS + CATEGORICAL_KINDS


# ---------------------------------------------------------------------------------------------
# Shared by both checks
# ---------------------------------------------------------------------------------------------

def comparisons(data: AuditData) -> list[tuple[str, str]]:
    """(reference, compared) pairs: with a reference dataset, (reference, split) for every
    split (scheduled mode); otherwise every later split against the first (train), plus each
    consecutive pair after the first (train, val, test -> train/val, train/test, val/test)."""
    names = data.split_names
    if data.reference is not None:
        return [(REFERENCE, s) for s in names]
    first = names[0]
    return [(first, s) for s in names[1:]] + [(names[i], names[i + 1])
                                              for i in range(1, len(names) - 1)]


def frame_of(data: AuditData, name: str) -> pl.DataFrame:
    return data.reference if name == REFERENCE and data.reference is not None \
        else data.splits[name]


@dataclass
class Verdict:
    """How one column is graded: the statistic that decided, and whether it was significant."""

    severity: Severity
    raw: Severity          # the effect-size grade before the p-value requirement
    metric: str
    value: float | None
    threshold: float
    p_adj: float | None
    ks_p_adj: float | None
    level: LevelShift | None = None   # the level whose fold decided or was considered
    capped: bool = False              # a fail lowered to warn: too few rows to fail on
    reason: str = ""                  # why a drift is reported as info by design
    min_rows: int = 0                 # the limit that capped it


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
            raise ValueError(f"{stat}_warn_above must be <= {stat}_fail_above; got {warn!r} > {fail!r}")
    for name in ("top_categories", "hist_bins", "max_levels", "level_min_rows", "min_rows"):
        v = getattr(check, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a positive integer; got {v!r}")
    v = check.level_fold_warn_above
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not v >= 1:
        raise ValueError(f"level_fold_warn_above must be a number >= 1; got {v!r}")
    warn, fail = check.unseen_warn_above, check.unseen_fail_above
    for name, v in (("unseen_warn_above", warn), ("unseen_fail_above", fail)):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= 1:
            raise ValueError(f"{name} must be a share in [0, 1]; got {v!r}")
    if warn > fail:
        raise ValueError(f"unseen_warn_above must be <= unseen_fail_above; got {warn!r} > {fail!r}")


def judge(check: Any, cd: ColumnDrift, p_adj: float, ks_p_adj: float | None) -> Verdict:
    """Grade by effect size (PSI, or for high-cardinality categoricals PSI in excess of
    chance; KS D for numerics; Cramér's V for categoricals; the largest per-level fold), each
    grade kept only if its test's p-value (BH-adjusted over the comparison; Bonferroni over the
    comparison's levels for folds) is below ``alpha``; the worst grade wins. A fail on a split of
    fewer than ``min_rows`` rows is lowered to warn."""
    psi_metric, psi_value = "psi", cd.psi
    if cd.psi_chance is not None:
        psi_metric, psi_value = "psi_excess", max(0.0, cd.psi - cd.psi_chance)
    candidates: list[tuple[str, float | None, float, float | None, float | None,
                           LevelShift | None]] = [
        (psi_metric, psi_value, check.psi_warn_above, check.psi_fail_above, p_adj, None)]
    if cd.gap is not None:
        candidates.append(("ks_d", cd.gap.d, check.ks_warn_above, check.ks_fail_above,
                           ks_p_adj, None))
    if cd.cramers_v is not None:
        candidates.append(("cramers_v", cd.cramers_v, check.cramers_v_warn_above,
                           check.cramers_v_fail_above, p_adj, None))
    if cd.levels:
        significant = [lv for lv in cd.levels if lv.p_adj < check.alpha]
        lv = max(significant or cd.levels, key=lambda s: (s.fold, -s.p))
        # warn only: one level of many moving (an aircraft retired, a seasonal route) is worth
        # a look, not a failed gate; whole-distribution effects (PSI, V) decide fails
        candidates.append(("level_fold", lv.fold, check.level_fold_warn_above, None,
                           lv.p_adj, lv))
    best: Verdict | None = None
    for metric, value, warn, fail, p, level in candidates:
        raw = grade(value, warn=warn, fail=fail)
        significant = p is not None and not math.isnan(p) and p < check.alpha
        eff = raw if significant else Severity.INFO
        key = (_RANK[eff], _RANK[raw])
        if best is None or key > (_RANK[best.severity], _RANK[best.raw]):
            best = Verdict(eff, raw, metric, value, warn if fail is None else fail, p_adj,
                           ks_p_adj)
    assert best is not None
    best.level = candidates[-1][5]  # the level shift considered, whichever metric decided
    if best.severity == Severity.FAIL and min(cd.ref_rows, cd.cur_rows) < check.min_rows:
        best.severity, best.capped, best.min_rows = Severity.WARN, True, check.min_rows
    return best


def compare_all(check: Any, columns: list[str], ref: dict[str, Sample],
                cur: dict[str, Sample], seed: int = 0) -> list[tuple[ColumnDrift, Verdict]]:
    """Compare every column; adjust every p-value of the comparison together (BH), grade."""
    def one(c: str) -> ColumnDrift:
        return compare(c, ref[c], cur[c], n_bins=check.n_bins, epsilon=check.epsilon,
                       seed=seed, max_levels=check.max_levels,
                       min_level_rows=check.level_min_rows)

    big = sum(len(ref[c].values if ref[c].values is not None else ()) for c in columns)
    drifts = map_columns(one, columns, workers=None if big > 200_000 else 1)
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


def _num(x: float | None) -> str:
    """An effect size for a message: 4 significant digits, so 0.2498 does not read as 0.25."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.4g}"


def _times(x: float) -> str:
    """A fold for a message: 2.038, 15.6, 218, 12,610."""
    return f"{x:.4g}" if x < 100 else f"{x:,.0f}"


def _p(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return "< 1e-300" if x == 0 else f"{x:.2g}"


def _lead_bin(cd: ColumnDrift) -> int:
    """The bin that moved most beyond sampling noise: largest |standardised difference|
    |b_i - a_i| / sqrt(p_i (1 - p_i) (1/n_a + 1/n_b)) (p_i the pooled share), the rarer
    reference share first among ties (a binary column: the minority class). The pooled
    rare-levels bin is chosen only when nothing else moved."""
    ca, cb = cd.ref_counts.astype(float), cd.cur_counts.astype(float)
    na, nb = ca.sum(), cb.sum()
    ea, eb = ca / na, cb / nb
    pooled = (ca + cb) / (na + nb)
    se = np.sqrt(pooled * (1 - pooled) * (1 / na + 1 / nb))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, np.abs(eb - ea) / se, 0.0)
    z = np.round(z, 9)
    z[[i for i, b in enumerate(cd.bins) if b == RARE_LEVELS]] = -1.0
    return int(np.lexsort((ea, -z))[0])


def _bin_phrase(cd: ColumnDrift, i: int, ref: str) -> str:
    col, b = cd.column, cd.bins[i]
    if b == MISSING:
        return f"{col} missing"
    if b == OTHER_VALUES:
        shown = ", ".join(clip_text(v, 20) for v, _ in cd.new_categories[:3])
        more = "" if cd.n_new <= 3 else f", … {cd.n_new:,} in all"
        return f"a {col} value unseen in {ref} ({shown}{more})"
    if b == RARE_LEVELS:
        return f"one of {cd.rare_levels:,} {col} values too rare to compare one by one"
    return f"{col} = {clip_text(b, 40)!r}"


def describe_drift(cd: ColumnDrift, v: Verdict, ref: str, cur: str, alpha: float
                   ) -> tuple[str, int]:
    """The finding's sentence (count, denominator and share first) and its count. The count
    is never 0: a value that vanished is counted on the reference side."""
    col = cd.column
    ea = cd.ref_counts / max(cd.ref_counts.sum(), 1)
    top_term = int(np.nanargmax(cd.psi_terms)) if np.isfinite(cd.psi_terms).any() else 0
    per_bin = cd.kind in CATEGORICAL_KINDS or cd.per_value
    if v.level is not None and v.metric == "level_fold":
        lv = v.level
        i = cd.bins.index(lv.value)
    else:
        i = _lead_bin(cd) if per_bin else top_term
    if not per_bin and (cd.bins[top_term] == MISSING or cd.gap is None):
        count = cd.cur_missing
        lead = (f"{fmt_rows(count, cd.cur_rows, f'{cur} rows')} have {col} missing against "
                f"{fmt_share(cd.ref_missing / cd.ref_rows)} of {ref} rows")
    elif not per_bin and cd.gap is not None:
        n_b = cd.cur_rows - cd.cur_missing
        count = int(round(cd.gap.cdf_b * n_b))
        lead = (f"{fmt_rows(count, n_b, f'non-missing {cur} rows')} have {col} <= "
                f"{fmt_value(cd.gap.x, cd.kind)} against {fmt_share(cd.gap.cdf_a)} of {ref} rows")
    elif int(cd.cur_counts[i]) > 0:
        count = int(cd.cur_counts[i])
        lead = (f"{fmt_rows(count, cd.cur_rows, f'{cur} rows')} have {_bin_phrase(cd, i, ref)} "
                f"against {fmt_share(float(ea[i]))} of {ref} rows")
    else:
        count = int(cd.ref_counts[i])
        lead = (f"{_bin_phrase(cd, i, ref)} holds {fmt_rows(count, cd.ref_rows, f'{ref} rows')} "
                f"and none of the {cd.cur_rows:,} {cur} rows")
    if cd.psi_chance is not None:
        stats = (f"PSI {_num(cd.psi)} over {len(cd.bins):,} bins, {_num(cd.psi_chance)} of it "
                 f"expected by chance")
        if cd.rare_levels:
            stats += f", {cd.rare_levels:,} rare levels pooled"
    else:
        stats = f"PSI {_num(cd.psi)}"
    if cd.cramers_v is not None:
        stats += f", Cramér's V {_num(cd.cramers_v)}"
    stats += f", {cd.test} p_adj {_p(v.p_adj)}"
    if cd.gap is not None:
        stats += f"; KS D {_num(cd.gap.d)}, p_adj {_p(v.ks_p_adj)}"
    if v.level is not None and (v.metric == "level_fold" or v.level.p_adj < alpha):
        lv = v.level
        more = lv.cur_share > lv.ref_share
        stats += (f"; {col} = {clip_text(lv.value, 40)!r} {_times(lv.fold)} times as "
                  f"{'common' if more else 'rare'} ({fmt_share(lv.ref_share)} -> "
                  f"{fmt_share(lv.cur_share)}, p_adj {_p(lv.p_adj)})")
    text = f"{col}: {lead} ({stats})"
    if cd.n_new and cd.unseen_rows:
        k, rows = cd.n_new, cd.unseen_rows
        text += (f"; {k:,} value{'' if k == 1 else 's'} unseen in {ref} "
                 f"hold{'s' if k == 1 else ''} "
                 f"{rows:,} {cur} rows ({fmt_share(rows / cd.cur_rows)})")
    if cd.n_vanished:
        k = cd.n_vanished
        text += f"; {k:,} {ref} value{' is' if k == 1 else 's are'} absent from {cur}"
    if cd.all_unique:
        text += (f"; every {col} value is unique in both splits, as in an id: declare it under "
                 "columns.ids if it is not a feature")
    if v.reason:
        text += f"; {v.reason}"
    elif v.raw != Severity.INFO and v.severity == Severity.INFO:
        text += f"; the shift is not significant after Benjamini–Hochberg (alpha {alpha:g})"
    if v.capped:
        text += f"; graded warn, not fail: a split has fewer than {v.min_rows:,} rows"
    return text, count


def _r(x: float | None, digits: int = 6) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


def statistics(cd: ColumnDrift, v: Verdict, ref: str, cur: str) -> dict[str, Any]:
    out: dict[str, Any] = {"psi": _r(cd.psi), "chi2 p": _r(cd.chi2_p), "p_adj": _r(v.p_adj)}
    if cd.gap is not None:
        out.update({"ks_d": _r(cd.gap.d), "ks p": _r(cd.ks_p), "ks_p_adj": _r(v.ks_p_adj),
                    "ks location": fmt_value(cd.gap.x, cd.kind) if cd.kind == Kind.DATETIME
                    else _r(cd.gap.x, 10)})
    if cd.cramers_v is not None:
        out["cramers_v"] = _r(cd.cramers_v)
    out["js"] = _r(cd.js)
    if cd.kind in NUMERIC_KINDS:
        out["wasserstein"] = _r(cd.wasserstein)
    out.update({
                f"{ref} missing rate": _r(cd.ref_missing / cd.ref_rows),
                f"{cur} missing rate": _r(cd.cur_missing / cd.cur_rows),
                "unseen_rate": _r(cd.unseen_rate), "binning": (
                    "per category" if cd.kind in CATEGORICAL_KINDS else
                    "per reference value" if cd.per_value else "reference quantiles")})
    return out


def evidence(check: Any, cd: ColumnDrift, v: Verdict, ref: str, cur: str,
             ref_s: Sample, cur_s: Sample) -> dict[str, Any]:
    if cd.kind in NUMERIC_KINDS:
        assert ref_s.values is not None and cur_s.values is not None
        chart = numeric_chart(cd, ref_s.values, cur_s.values, ref, cur, check.hist_bins,
                              check.top_categories)
    else:
        chart = category_chart(cd, ref, cur, check.top_categories)
    ev: dict[str, Any] = {"chart": chart, "statistics": statistics(cd, v, ref, cur),
                          "bins": bins_table(cd, ref, cur, check.top_categories)}
    cap = check.top_categories
    if cd.new_categories:
        ev["new categories"] = [{"value": clip_text(c), f"{cur} rows": n}
                                for c, n in cd.new_categories[:cap]]
    if cd.vanished_categories:
        ev["vanished categories"] = [{"value": clip_text(c), f"{ref} rows": n}
                                     for c, n in cd.vanished_categories[:cap]]
    return ev


def table_row(cd: ColumnDrift, v: Verdict, kind: str) -> dict[str, Any]:
    return {"column": cd.column, "kind": kind, "psi": _r(cd.psi),
            "ks_d": _r(cd.gap.d) if cd.gap else None, "p_adj": _r(v.p_adj, 3),
            "ks_p_adj": _r(v.ks_p_adj, 3), "cramers_v": _r(cd.cramers_v), "js": _r(cd.js),
            "wasserstein": _r(cd.wasserstein), "null_rate_delta": _r(cd.null_rate_delta),
            "unseen_rate": _r(cd.unseen_rate), "verdict": str(v.severity)}


# ---------------------------------------------------------------------------------------------
# drift.features
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class DriftThresholds:
    """Parameters shared by the drift checks: bins, effect-size thresholds (exceeded: value > threshold) and the
    significance level of the Benjamini-Hochberg-adjusted p-values."""

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
      :mod:`auditor.calendar_parts`) moves by design when the splits are cut by time (at most
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
        samples: dict[str, dict[str, Sample]] = {}
        for name in names:
            samples[name] = prepare(frame_of(data, name), kinds)
        calendar = self._calendar(data, names, kinds)
        skipped = _not_compared(data, kinds)
        findings: list[Finding] = []
        for i, (ref, cur) in enumerate(pairs):
            graded = compare_all(self, list(kinds), samples[ref], samples[cur], data.seed)
            if calendar and time_split(data, ref, cur):
                for cd, v in graded:
                    if cd.column in calendar and v.raw != Severity.INFO:
                        v.severity = Severity.INFO
                        match = calendar[cd.column]
                        v.reason = (f"{cd.column} is {match.describe(data.columns.time)}"
                                    f" on {fmt_share(match.share)} of rows and the "
                                    f"splits are cut by {data.columns.time}: calendar drift is "
                                    "expected in a time split, reported as info")
            findings += self._comparison_findings(graded, ref, cur, samples, data,
                                                  skipped if i == 0 else [])
        return findings

    def _calendar(self, data: AuditData, names: list[str], kinds: dict[str, Kind]
                  ) -> dict[str, Any]:
        """Features that are calendar parts of the declared time column (on every split)."""
        from auditor.calendar_parts import SAMPLE_ROWS, calendar_features

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
        order = sorted(graded, key=lambda g: (-_RANK[g[1].severity], -_RANK[g[1].raw],
                                              -np.nan_to_num(g[0].psi, nan=-1.0), g[0].column))
        column_findings = []
        reported: set[str] = set()
        for cd, v in order:
            quiet = v.severity == Severity.INFO and v.metric == "level_fold" and not v.reason
            if v.raw != Severity.INFO and not quiet:
                message, count = describe_drift(cd, v, ref, cur, self.alpha)
                column_findings.append(Finding(
                    severity=v.severity, message=message, metric=v.metric, value=_r(v.value),
                    threshold=v.threshold, count=count, subject=cd.column, splits=[ref, cur],
                    evidence=evidence(self, cd, v, ref, cur, samples[ref][cd.column],
                                      samples[cur][cd.column])))
            if cd.n_new and cd.unseen_rows:
                # categories: always (a fact); values of a per-value binned numeric (a count
                # meeting 11 once) only when graded or explained
                f = unseen_finding(self, cd, ref, cur, reason=v.reason)
                if cd.kind in CATEGORICAL_KINDS or f.severity != Severity.INFO or v.reason:
                    column_findings.append(f)
                    reported.add(cd.column)
        flagged = [g for g in order if g[1].severity != Severity.INFO]
        n_fail = sum(g[1].severity == Severity.FAIL for g in flagged)
        worst = max(graded, key=lambda g: (np.nan_to_num(g[0].psi, nan=-1.0)))
        n = len(graded)
        message = (f"{fmt_rows(len(flagged), n, 'features')} drifted "
                   f"from {ref} to {cur} ({n_fail:,} fail, {len(flagged) - n_fail:,} warn); "
                   f"largest PSI {_num(worst[0].psi)} on {worst[0].column}")
        by_psi = sorted(graded, key=lambda g: (-np.nan_to_num(g[0].psi, nan=-1.0),
                                               g[0].column))[:self.max_chart_features]
        chart = {"type": "bar", "title": f"PSI per feature, {ref} → {cur}",
                 "labels": [g[0].column for g in by_psi],
                 "values": [_r(g[0].psi) or 0.0 for g in by_psi],
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
                        f"{_names(stable)}")
            ev["stable columns"] = [{"columns": _names(stable, 200), "count": len(stable)}]
        if skipped:
            ev["not compared"] = skipped
        summary = Finding(severity=Severity.INFO, message=message, metric="drifted_features",
                          value=len(flagged) / n, count=len(flagged), subject="",
                          splits=[ref, cur], evidence=ev)
        return [summary] + column_findings


def _names(cols: list[str], limit: int = 10) -> str:
    shown = ", ".join(clip_text(c, 40) for c in cols[:limit])
    return shown + (f", … ({len(cols) - limit:,} more)" if len(cols) > limit else "")


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


def unseen_finding(check: Any, cd: ColumnDrift, ref: str, cur: str, *, label: bool = False,
                   reason: str = "") -> Finding:
    """Rows of the compared split holding values (categories, classes, values of a per-value
    binned numeric) the reference never had: a fact, not a statistic. Graded on the excess
    share = unseen share - the share of reference rows holding a value seen once there
    (Good–Turing: the share of unseen values to expect with no drift at all, near 0 for a
    column with few levels, large for thousands of levels sampled sparsely): > unseen_warn_above
    warns, > unseen_fail_above fails. An unseen label class warns at least."""
    rows = cd.unseen_rows or 0
    share = rows / cd.cur_rows
    expected = cd.good_turing or 0.0
    excess = max(0.0, share - expected)
    severity = grade(excess, warn=check.unseen_warn_above, fail=check.unseen_fail_above)
    if label and severity == Severity.INFO:
        severity = Severity.WARN
    what = "class" if label else "value"
    k = cd.n_new
    shown = ", ".join(f"{clip_text(v, 30)!r} ({n:,})" for v, n in cd.new_categories[:5])
    more = "" if k <= 5 else f", … {k:,} in all"
    message = (f"{cd.column}: {fmt_rows(rows, cd.cur_rows, f'{cur} rows')} hold "
               f"{'a' if k == 1 else k} {cd.column} "
               f"{what}{'' if k == 1 else 'es' if label else 's'}"
               f" unseen in {ref}: {shown}{more}")
    if expected > 0:
        message += (f"; {fmt_share(expected)} expected by chance ({ref} rows holding a value "
                    f"seen once there, Good–Turing), excess {fmt_share(excess)}")
    if cd.variants:
        v = len(cd.variants)
        new_v, ref_v = next(iter(cd.variants.items()))
        message += (f"; {v:,} of them differ{'s' if v == 1 else ''} from a {ref} value only by "
                    f"case, whitespace or punctuation ({clip_text(new_v, 30)!r} for "
                    f"{clip_text(ref_v, 30)!r}; see schema.consistency)")
    if label:
        message += "; a model trained on it cannot predict a class it never saw"
    if reason:
        severity = Severity.INFO
        message += f"; {reason}"
    return Finding(severity=severity, message=message, metric="unseen_share", value=_r(excess),
                   threshold=check.unseen_fail_above, count=rows, subject=cd.column,
                   splits=[ref, cur], evidence={
                       f"values unseen in {ref}": [
                           {"value": clip_text(v), f"{cur} rows": n}
                           | ({f"variant of a {ref} value": clip_text(cd.variants.get(v, ""))}
                              if cd.variants else {})
                           for v, n in cd.new_categories[:check.top_categories]],
                       "statistics": {"unseen share": _r(share), "expected by chance": _r(expected),
                                      "distinct unseen values": k}})


def _not_compared(data: AuditData, kinds: dict[str, Kind]) -> list[dict[str, str]]:
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

    def run(self, data: AuditData) -> list[Finding]:
        y = data.label
        if not y:
            raise NotApplicable("no label column declared")
        pairs = comparisons(data)
        if not pairs:
            raise NotApplicable("only one split and no reference: nothing to compare")
        kind = Kind.NUMERIC if data.label_kind == LabelKind.NUMERIC else Kind.CATEGORICAL
        frames = {n: frame_of(data, n) for n in dict.fromkeys(n for p in pairs for n in p)}
        values = pl.concat([f.select(y) for f in frames.values()])[y]
        if values.dtype.is_float():
            values = values.fill_nan(None)  # NaN is a missing label, not a class
        distinct = values.drop_nulls().unique().sort().cast(pl.String)
        if distinct.len() == 0:
            raise NotApplicable(f"label {y!r} is missing in every row")
        if distinct.len() == 1:
            raise NotApplicable(f"label {y!r} has a single class ({distinct[0]!r}) in every "
                                "split: no distribution to compare")
        samples = {n: prepare(f, {y: kind}) for n, f in frames.items()}
        findings = []
        for ref, cur in pairs:
            ((cd, v),) = compare_all(self, [y], samples[ref], samples[cur], data.seed)
            cd.all_unique = False  # a continuous label is unique per row; it is not an id
            message, count = describe_drift(cd, v, ref, cur, self.alpha)
            findings.append(Finding(
                severity=v.severity, message=message, metric=v.metric, value=_r(v.value),
                threshold=v.threshold, count=count, subject=y, splits=[ref, cur],
                evidence=evidence(self, cd, v, ref, cur, samples[ref][y], samples[cur][y])))
            if cd.n_new and cd.unseen_rows and kind == Kind.CATEGORICAL:
                findings.append(unseen_finding(self, cd, ref, cur, label=True))
        return findings
