"""Judging one column's drift: the grade (:func:`judge`), the finding's sentence, evidence
and table row, and the unseen-values finding. Plain Python over the aggregates of
:mod:`auditor.stats.drift`; the checks in :mod:`auditor.detectors.drift` call these."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from auditor.core.roles import Kind
from auditor.stats.drift import (CATEGORICAL_KINDS, NUMERIC_KINDS, ColumnDrift, Sample,
                                 bins_table, category_chart, fmt_value, numeric_chart)
from auditor.stats.levels import MISSING, OTHER_VALUES, RARE_LEVELS, LevelShift
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import clip_text, fmt_rows, fmt_share, grade

RANK = {Severity.INFO: 0, Severity.WARN: 1, Severity.FAIL: 2}


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
    trend: "TrendNull | None" = None  # the design's null (time backtests, entity re-splits)
    # of the deciding statistic
    significant: bool = True          # its test's p-value below alpha


@dataclass(frozen=True)
class ColumnTrend:
    """One column's statistics (:func:`trend_values`) on the split design's honest
    comparisons (:mod:`auditor.judging.nulls`): ``recent``, the observed comparison (time: the
    compared split against the earlier split's last rows, described by ``against``; group:
    the pair on the pooled rows, ``against`` the entity column), and ``backtests``, the null's
    (time backtests inside the earlier split, or entity re-splits)."""

    against: str
    recent: dict[str, float]
    backtests: list[dict[str, float]]
    design: str = "time"
    # the null summarised per statistic, (median, 95% and 99.9% quantiles, comparisons), when
    # it is not a list of comparisons (random re-splits: :mod:`auditor.judging.row_resplits`;
    # no 99.9% quantile from the few draws of a column far inside the null)
    quantiles: dict[str, tuple[float, float, float | None, int]] = field(default_factory=dict)

    def null(self, metric: str) -> "TrendNull | None":
        """``metric``'s :class:`TrendNull` (PSI beyond chance falls back to PSI where a
        smaller window lacks it), None when the null lacks the statistic."""
        keys = (metric, "psi") if metric == "psi_excess" else (metric,)
        for i, key in enumerate(keys):
            if key not in self.recent:
                continue
            if key in self.quantiles:
                med, upper, fail_gate, n = self.quantiles[key]
                return TrendNull(key, self.recent[key], med, upper, n, self.against,
                                 self.design, fail_gate)
            vals = [b[key] for b in self.backtests if key in b]
            if vals and (i == len(keys) - 1 or len(vals) == len(self.backtests)):
                return TrendNull(key, self.recent[key], float(np.median(vals)), max(vals),
                                 len(vals), self.against, self.design)
        return None


@dataclass(frozen=True)
class Trend:
    """A pair's null of the split design (:mod:`auditor.judging.nulls`): how its honest
    comparisons were made (``note``), each time backtest described, ``against`` (see
    :class:`ColumnTrend`), and per column the statistics of the observed comparison
    (``recent``) and of each null comparison (``nulls``). None made: empty, the pair is
    judged as before."""

    note: str
    backtests: list[str]
    against: str
    recent: dict[str, dict[str, float]]
    nulls: dict[str, list[dict[str, float]]]
    design: str = "time"  # or "group": entity re-splits (:mod:`auditor.judging.resplits`),
    # ``against`` the entity column, ``recent`` the pair itself measured on the pooled rows

    def column(self, c: str) -> ColumnTrend | None:
        if not self.nulls.get(c) or c not in self.recent:
            return None
        return ColumnTrend(self.against, self.recent[c], self.nulls[c], self.design)


@dataclass(frozen=True)
class TrendNull:
    """One statistic against its backtests: observed, the backtests' median and largest value
    (the null's upper quantile), how many, and the excess graded (:attr:`excess`). Against
    random re-splits (design ``random``): ``upper`` is the null's 95% quantile and
    ``fail_gate`` its 99.9% quantile (:meth:`capped`)."""

    metric: str
    observed: float
    median: float
    upper: float
    n: int
    against: str = ""  # time: the earlier split's rows ``observed`` was measured against;
    # group: the entity column
    design: str = "time"
    fail_gate: float | None = None

    @property
    def suffix(self) -> str:
        return {"time": "_beyond_trend", "group": "_beyond_entity_resplits"}.get(
            self.design, "_beyond_random_resplits")

    @property
    def excess(self) -> float:
        """The observed statistic beyond the largest backtest, on the statistic's own scale:
        PSI on the scale of a shift, (sqrt(PSI) - sqrt(PSI_upper))^2 (a normal mean shift of
        d standard deviations gives PSI ~ d^2, so this is the PSI of the shift beyond the
        trend's; PSI saturates once distributions stop overlapping, 7 and 8 both meaning
        "disjoint", and a plain difference would grade that noise); KS D and Cramér's V by
        difference; a level fold by ratio (a fold 3 where time alone gives 2 is a fold 1.5
        beyond it). 0 (1 for a fold) when within the backtests.

        Against random re-splits of the same rows the null is sampling noise, which adds to
        every statistic (PSI's expectation is (bins - 1)(1/n_a + 1/n_b), as
        :func:`~auditor.stats.levels.psi_by_chance` subtracts), not a movement of its own:
        the excess is the statistic less the null's median (what chance adds), once the
        statistic is beyond the null's 95% quantile (else 0)."""
        o, u = self.observed, max(self.upper, 0.0)
        if self.design == "random":
            return max(0.0, o - self.median) if o > u else 0.0
        if self.metric.startswith("psi"):
            return max(0.0, math.sqrt(max(o, 0.0)) - math.sqrt(u)) ** 2
        if self.metric == "level_fold":
            return max(1.0, o / u) if u > 0 else o
        return max(0.0, o - u)

    @property
    def within(self) -> bool:
        """Whether the observed statistic lies within the null (no excess)."""
        return self.excess <= (1.0 if self.metric == "level_fold" else 0.0)

    def capped(self, severity: Severity) -> Severity:
        """A fail against random re-splits needs the statistic beyond the null's 99.9%
        quantile (``fail_gate``: fewer than one honest split in a thousand reaches it); below
        it, at most warn. Small splits make PSI heavy-tailed (a bin empty on one side adds a
        large term), so a figure one honest split in a hundred reaches is no failed gate."""
        if severity == Severity.FAIL and self.fail_gate is not None \
                and self.observed <= self.fail_gate:
            return Severity.WARN
        return severity


def trend_values(cd: ColumnDrift) -> dict[str, float]:
    """The statistics :func:`judge` grades, as one backtest measured them: PSI (and PSI in
    excess of chance), KS D, Cramér's V, the largest level fold."""
    out = {"psi": cd.psi}
    if cd.psi_chance is not None:
        out["psi_excess"] = max(0.0, cd.psi - cd.psi_chance)
    if cd.gap is not None:
        out["ks_d"] = cd.gap.d
    if cd.cramers_v is not None:
        out["cramers_v"] = cd.cramers_v
    if cd.levels:
        out["level_fold"] = max(lv.fold for lv in cd.levels)
    return {k: float(v) for k, v in out.items() if v is not None and math.isfinite(v)}


def judge(check: Any, cd: ColumnDrift, p_adj: float, ks_p_adj: float | None,
          trend: ColumnTrend | None = None) -> Verdict:
    """Grade by effect size (PSI, or for high-cardinality categoricals PSI in excess of
    chance; KS D for numerics; Cramér's V for categoricals; the largest per-level fold), each
    grade kept only if its test's p-value (BH-adjusted over the comparison; Bonferroni over the
    comparison's levels for folds) is below ``alpha``; the worst grade wins. A fail on a split of
    fewer than ``min_rows`` rows is lowered to warn.

    With time backtests (``trend``, a time design), each statistic is graded on the compared
    split against the earlier split's last rows, in excess of the largest backtest value
    (:attr:`TrendNull.excess`, metric ``<statistic>_beyond_trend``): the drift an honest split
    of the same data, cut the same way inside the earlier split, shows is expected. The raw
    grade stays the train -> test one, so a drift the trend explains is still reported (as
    info, with the backtests); the p-value requirement is the train -> test test's."""
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
        moved = [lv for lv in cd.levels if lv.p_adj < check.alpha]
        lv = max(moved or cd.levels, key=lambda s: (s.fold, -s.p))
        # warn only: one level of many moving (an aircraft retired, a seasonal route) is worth
        # a look, not a failed gate; whole-distribution effects (PSI, V) decide fails
        candidates.append(("level_fold", lv.fold, check.level_fold_warn_above, None,
                           lv.p_adj, lv))
    best: Verdict | None = None
    for metric, value, warn, fail, p, level in candidates:
        raw = grade(value, warn=warn, fail=fail)
        significant = p is not None and not math.isnan(p) and p < check.alpha
        # PSI beyond chance exists only over many levels: a smaller window may lack it
        null = trend.null(metric) if trend is not None and value is not None else None
        # the design's null only lowers a grade: the excess is measured on other rows (the
        # earlier split's last ones, the pooled rows), never above the observed grade
        graded = raw if null is None else null.capped(min(
            grade(null.excess, warn=warn, fail=fail), raw, key=RANK.__getitem__))
        eff = graded if significant else Severity.INFO
        key_ = (RANK[eff], RANK[raw])
        if best is None or key_ > (RANK[best.severity], RANK[best.raw]):
            best = Verdict(eff, raw, metric, value, warn if fail is None else fail, p_adj,
                           ks_p_adj, significant=significant)
            if null is not None:
                best.metric, best.value, best.trend = (null.metric + null.suffix, null.excess,
                                                       null)
    assert best is not None
    best.level = candidates[-1][5]  # the level shift considered, whichever metric decided
    if best.severity == Severity.FAIL and min(cd.ref_rows, cd.cur_rows) < check.min_rows:
        best.severity, best.capped, best.min_rows = Severity.WARN, True, check.min_rows
    return best


def fmt_effect(x: float | None) -> str:
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


def describe_drift(cd: ColumnDrift, v: Verdict, ref: str, cur: str, alpha: float,
                   unseen_apart: bool = False) -> tuple[str, int]:
    """The finding's sentence (count, denominator and share first) and its count. The count
    is never 0: a value that vanished is counted on the reference side. ``unseen_apart``: the
    unseen values are a finding of their own (:func:`unseen_finding`), so the sentence does
    not state them again."""
    col = cd.column
    unit = "rows" if cd.entity is None else f"`{cd.entity}` entities"
    ea = cd.ref_counts / max(cd.ref_counts.sum(), 1)
    top_term = int(np.nanargmax(cd.psi_terms)) if np.isfinite(cd.psi_terms).any() else 0
    per_bin = cd.kind in CATEGORICAL_KINDS or cd.per_value
    if v.level is not None and v.metric.startswith("level_fold"):
        lv = v.level
        i = cd.bins.index(lv.value)
    else:
        i = _lead_bin(cd) if per_bin else top_term
    if not per_bin and (cd.bins[top_term] == MISSING or cd.gap is None) and cd.cur_missing:
        count = cd.cur_missing
        lead = (f"{fmt_rows(count, cd.cur_rows, f'{cur} {unit}')} have {col} missing against "
                f"{fmt_share(cd.ref_missing / cd.ref_rows)} of {ref} {unit}")
    elif not per_bin and (cd.bins[top_term] == MISSING or cd.gap is None):
        count = cd.ref_missing
        lead = (f"{col} is missing in {fmt_rows(count, cd.ref_rows, f'{ref} {unit}')} and in none "
                f"of the {cd.cur_rows:,} {cur} {unit}")
    elif not per_bin and cd.gap is not None:
        n_b = cd.cur_rows - cd.cur_missing
        count = int(round(cd.gap.cdf_b * n_b))
        x = fmt_value(cd.gap.x, cd.kind)
        if count:
            lead = (f"{fmt_rows(count, n_b, f'non-missing {cur} {unit}')} have {col} <= {x} "
                    f"against {fmt_share(cd.gap.cdf_a)} of {ref} {unit}")
        else:  # no compared row at or below x: the rows above it are the ones counted
            count = n_b
            lead = (f"{fmt_rows(count, n_b, f'non-missing {cur} {unit}')} have {col} > {x} "
                    f"against {fmt_share(1 - cd.gap.cdf_a)} of {ref} {unit}")
    elif int(cd.cur_counts[i]) > 0:
        count = int(cd.cur_counts[i])
        lead = (f"{fmt_rows(count, cd.cur_rows, f'{cur} {unit}')} have {_bin_phrase(cd, i, ref)} "
                f"against {fmt_share(float(ea[i]))} of {ref} {unit}")
    else:
        count = int(cd.ref_counts[i])
        lead = (f"{_bin_phrase(cd, i, ref)} holds {fmt_rows(count, cd.ref_rows, f'{ref} {unit}')} "
                f"and none of the {cd.cur_rows:,} {cur} {unit}")
    if cd.psi_chance is not None:
        stats = (f"PSI {fmt_effect(cd.psi)} over {len(cd.bins):,} bins, "
                 f"{fmt_effect(cd.psi_chance)} of it "
                 f"expected by chance")
        if cd.rare_levels:
            stats += f", {cd.rare_levels:,} rare levels pooled"
    else:
        stats = f"PSI {fmt_effect(cd.psi)}"
    if cd.cramers_v is not None:
        stats += f", Cramér's V {fmt_effect(cd.cramers_v)}"
    stats += f", {cd.test} p_adj {_p(v.p_adj)}"
    if cd.gap is not None:
        stats += f"; KS D {fmt_effect(cd.gap.d)}, p_adj {_p(v.ks_p_adj)}"
    if v.level is not None and (v.metric.startswith("level_fold") or v.level.p_adj < alpha):
        lv = v.level
        more = lv.cur_share > lv.ref_share
        stats += (f"; {col} = {clip_text(lv.value, 40)!r} {_times(lv.fold)} times as "
                  f"{'common' if more else 'rare'} ({fmt_share(lv.ref_share)} -> "
                  f"{fmt_share(lv.cur_share)}, p_adj {_p(lv.p_adj)})")
    text = f"{col}: {lead} ({stats})"
    if cd.n_new and cd.unseen_rows and not unseen_apart:
        k, rows = cd.n_new, cd.unseen_rows
        text += (f"; {k:,} value{'' if k == 1 else 's'} unseen in {ref} "
                 f"hold{'s' if k == 1 else ''} "
                 f"{rows:,} {cur} rows ({fmt_share(rows / cd.cur_rows)})")
    if cd.n_vanished:
        k = cd.n_vanished
        text += f"; {k:,} {ref} value{' is' if k == 1 else 's are'} absent from {cur}"
    if cd.entity is not None:
        text += (f"; {col} is the same on every row of a `{cd.entity}` and the splits hold "
                 f"different `{cd.entity}` entities (a group split): compared at one row per "
                 f"entity, {cd.ref_rows:,} in {ref} and {cd.cur_rows:,} in {cur}")
    if cd.all_unique and (cd.kind in CATEGORICAL_KINDS or cd.whole):  # a measurement with a
        # fraction is unique on every row by nature: declaring it an id would hide its drift
        text += (f"; every {col} value is unique in both splits, as in an id: declare it under "
                 "columns.ids if it is not a feature")
    if v.trend is not None:
        text += "; " + trend_sentence(v, ref)
    if v.reason:
        text += f"; {v.reason}"
    elif v.raw != Severity.INFO and v.severity == Severity.INFO and not v.significant:
        text += f"; the shift is not significant after Benjamini–Hochberg (alpha {alpha:g})"
    if v.capped:
        text += f"; graded warn, not fail: a split has fewer than {v.min_rows:,} rows"
    return text, count


_STAT = {"psi": "PSI", "psi_excess": "PSI beyond chance", "ks_d": "KS D",
         "cramers_v": "Cramér's V", "level_fold": "the largest level fold"}


def trend_sentence(v: Verdict, ref: str) -> str:
    """How the statistic compares with the null of the design: the time backtests inside the
    earlier split, the entity re-splits of the pooled rows, or their random re-splits."""
    t = v.trend
    assert t is not None
    name = _STAT.get(t.metric, t.metric)
    excess = fmt_effect(t.excess)
    if t.design == "random":
        head = (f"dealt again at random into splits of the same sizes ({t.n:,} times), the "
                f"same rows give {name} {fmt_effect(t.median)} (median), "
                f"{fmt_effect(t.upper)} in one re-split of twenty")
        within = "no more than a random split of these rows shows"
        beyond = f"{excess} beyond the median, graded"
        if v.raw == Severity.FAIL and t.fail_gate is not None and t.observed <= t.fail_gate:
            beyond += (f" (a fail needs more than {fmt_effect(t.fail_gate)}, which one "
                       "re-split in a thousand reaches)")
    elif t.design == "group":
        head = (f"split again {t.n} times by whole `{t.against}` entities at random, the same "
                f"rows give {name} {fmt_effect(t.median)} (median) to {fmt_effect(t.upper)}")
        within, beyond = "no more than entities differ by chance", f"{excess} beyond them, graded"
    else:
        head = (f"against the last {t.against}, {name} is {fmt_effect(t.observed)}; cut the "
                f"same way by time inside {ref}, {t.n} honest backtests give "
                f"{fmt_effect(t.median)} (median) to {fmt_effect(t.upper)}")
        within = "the drift is what time alone moves in this data"
        beyond = f"{excess} beyond the trend, graded"
    if t.within:
        return f"{head}: {within}" + (", reported as info" if v.severity == Severity.INFO
                                      else "")
    return f"{head}: {beyond}"


def rounded(x: float | None, digits: int = 6) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


def statistics(cd: ColumnDrift, v: Verdict, ref: str, cur: str) -> dict[str, Any]:
    out: dict[str, Any] = {"psi": rounded(cd.psi), "chi2 p": rounded(cd.chi2_p),
                           "p_adj": rounded(v.p_adj)}
    if cd.gap is not None:
        out.update({"ks_d": rounded(cd.gap.d), "ks p": rounded(cd.ks_p),
                    "ks_p_adj": rounded(v.ks_p_adj),
                    "ks location": fmt_value(cd.gap.x, cd.kind) if cd.kind == Kind.DATETIME
                    else rounded(cd.gap.x, 10)})
    if cd.cramers_v is not None:
        out["cramers_v"] = rounded(cd.cramers_v)
    out["js"] = rounded(cd.js)
    if cd.kind in NUMERIC_KINDS:
        out["wasserstein"] = rounded(cd.wasserstein)
    out.update({
                f"{ref} missing rate": rounded(cd.ref_missing / cd.ref_rows),
                f"{cur} missing rate": rounded(cd.cur_missing / cd.cur_rows),
                "unseen_rate": rounded(cd.unseen_rate), "binning": (
                    "per category" if cd.kind in CATEGORICAL_KINDS else
                    "per reference value" if cd.per_value else "reference quantiles"),
                "test": cd.test})
    if cd.entity is not None:
        out["compared at"] = f"one row per `{cd.entity}` (an attribute of the entity)"
    if cd.psi_chance is not None:
        out.update({"psi by chance": rounded(cd.psi_chance),
                    "psi excess": rounded(max(0.0, cd.psi - cd.psi_chance)),
                    "rare levels pooled": cd.rare_levels})
    if v.trend is not None:
        t = v.trend
        if t.design == "time":
            out.update({"graded on": f"{t.metric} beyond the time trend", "recent rows": t.against,
                        f"{t.metric} against them": rounded(t.observed), "time backtests": t.n,
                        "backtest median": rounded(t.median),
                        "backtest largest": rounded(t.upper)})
        elif t.design == "random":
            out.update({"graded on": f"{t.metric} beyond random re-splits of the pooled rows",
                        "random re-splits": t.n, "re-split median": rounded(t.median),
                        "re-split 95% quantile": rounded(t.upper)})
            if t.fail_gate is not None:
                out["re-split 99.9% quantile"] = rounded(t.fail_gate)
        else:
            out.update({"graded on": f"{t.metric} beyond re-splits by `{t.against}`",
                        f"{t.metric} on the pooled rows": rounded(t.observed),
                        "entity re-splits": t.n, "re-split median": rounded(t.median),
                        "re-split largest": rounded(t.upper)})
        out["excess"] = rounded(t.excess)
    if v.level is not None:
        out.update({"largest level fold": rounded(v.level.fold),
                    "its level": clip_text(v.level.value), "its p_adj": rounded(v.level.p_adj)})
    return out


def evidence(check: Any, cd: ColumnDrift, v: Verdict, ref: str, cur: str,
             ref_s: Sample | None = None, cur_s: Sample | None = None) -> dict[str, Any]:
    """The finding's evidence: chart (measured with the drift, or drawn from the samples of a
    numeric column), statistics, bins, level shifts, new and vanished categories."""
    if cd.chart is not None:
        chart = cd.chart
    elif cd.kind in NUMERIC_KINDS:
        assert ref_s is not None and cur_s is not None
        assert ref_s.values is not None and cur_s.values is not None
        chart = numeric_chart(cd, ref_s.values, cur_s.values, ref, cur, check.hist_bins,
                              check.top_categories)
    else:
        chart = category_chart(cd, ref, cur, check.top_categories)
    ev: dict[str, Any] = {"chart": chart, "statistics": statistics(cd, v, ref, cur),
                          "bins": bins_table(cd, ref, cur, check.top_categories)}
    cap = check.top_categories
    moved = sorted((lv for lv in cd.levels if lv.p_adj < check.alpha),
                   key=lambda lv: (-lv.fold, lv.value))[:cap]
    if moved:
        ev["level shifts"] = [{"value": clip_text(lv.value), f"{ref} rows": lv.ref_count,
                               f"{cur} rows": lv.cur_count, f"{ref} share": rounded(lv.ref_share),
                               f"{cur} share": rounded(lv.cur_share), "fold": rounded(lv.fold),
                               "p_adj": rounded(lv.p_adj, 3)} for lv in moved]
    if cd.new_categories:
        ev["new categories"] = [{"value": clip_text(c), f"{cur} rows": n}
                                for c, n in cd.new_categories[:cap]]
    if cd.vanished_categories:
        ev["vanished categories"] = [{"value": clip_text(c), f"{ref} rows": n}
                                     for c, n in cd.vanished_categories[:cap]]
    return ev


def table_row(cd: ColumnDrift, v: Verdict, kind: str) -> dict[str, Any]:
    return {"column": cd.column, "kind": kind, "psi": rounded(cd.psi),
            "ks_d": rounded(cd.gap.d) if cd.gap else None, "p_adj": rounded(v.p_adj, 3),
            "ks_p_adj": rounded(v.ks_p_adj, 3), "cramers_v": rounded(cd.cramers_v),
            "js": rounded(cd.js),
            "wasserstein": rounded(cd.wasserstein), "null_rate_delta": rounded(cd.null_rate_delta),
            "unseen_rate": rounded(cd.unseen_rate), "verdict": str(v.severity)}


def name_list(cols: list[str], limit: int = 10) -> str:
    shown = ", ".join(clip_text(c, 40) for c in cols[:limit])
    return shown + (f", … ({len(cols) - limit:,} more)" if len(cols) > limit else "")


def unseen_finding(check: Any, cd: ColumnDrift, ref: str, cur: str, *, label: bool = False,
                   reason: str = "", tests: int = 1, resplit: bool = False) -> Finding:
    """Rows of the compared split holding values (categories, classes, values of a per-value
    binned numeric) the reference never had: a fact, not a statistic. Graded on the excess
    share = unseen share - the share of reference rows holding a value seen once there
    (Good–Turing: the share of unseen values to expect with no drift at all, near 0 for a
    column with few levels, large for thousands of levels sampled sparsely): > unseen_warn_above
    warns, > unseen_fail_above fails. An unseen label class warns at least.

    When chance expects unseen values (Good–Turing > 0), the excess must also exceed its
    sampling fluctuation under no drift: z = (share - GT) / sqrt(se_GT^2 + GT (1 - GT) / n_cur),
    se_GT by Esty's formula (:func:`~auditor.stats.levels.one_off_sd`); a z below the one-sided
    normal quantile at ``alpha`` / ``tests`` (Bonferroni over the columns compared) is info:
    150 random 500-5,000-level columns of 10k vs 2.5k rows gave 4 warns by chance without it.
    (One new value repeated on many rows is not chance: the null variance is that of rows
    drawing unseen values independently.)

    In a random split design (``resplit``) the rows themselves give the null: an honest split
    of the same rows leaves values unseen too (:attr:`ColumnDrift.unseen_p`, from the values'
    pooled counts), so a grade also needs that p-value below ``alpha`` / ``tests``. From the
    reference alone Good–Turing misses a common value absent from a small reference by chance
    (Poisson counts, 50 + 50 rows: 6 test rows of a value train lacks, z 5.6 against
    Good–Turing; dealt again at random, as many unseen rows or more in one split of 440)."""
    from scipy.stats import norm

    rows = cd.unseen_rows or 0
    share = rows / cd.cur_rows
    expected = cd.good_turing or 0.0
    excess = max(0.0, share - expected)
    severity = grade(excess, warn=check.unseen_warn_above, fail=check.unseen_fail_above)
    chance_note, resplit_note, stats_extra = "", "", {}
    if expected > 0 and not label:
        se = math.sqrt((cd.good_turing_sd or 0.0) ** 2
                       + expected * (1 - expected) / cd.cur_rows)
        z = (share - expected) / se if se > 0 else math.inf
        z_crit = float(norm.isf(check.alpha / max(tests, 1)))
        stats_extra = {"z": rounded(z), "z_critical": rounded(z_crit),
                       "good_turing_se": rounded(cd.good_turing_sd or 0.0)}
        if z < z_crit and severity != Severity.INFO:
            severity = Severity.INFO
            chance_note = (f"; within chance (z = {z:.2f} < {z_crit:.2f}, alpha "
                           f"{check.alpha:g} over {tests:,} columns)")
    if resplit and cd.unseen_p is not None and not label:
        gate = check.alpha / max(tests, 1)
        stats_extra["p unseen by random re-split"] = float(f"{cd.unseen_p:.3g}")
        if cd.unseen_p >= gate and severity != Severity.INFO:
            severity = Severity.INFO
            resplit_note = (f"; within chance: the same rows dealt again at random leave as many"
                            f" unseen in one split of {1 / max(cd.unseen_p, 1e-300):,.0f} (p "
                            f"{cd.unseen_p:.2g} >= alpha {check.alpha:g} over {tests:,} columns)")
    if label and severity == Severity.INFO:
        severity = Severity.WARN
    what = "class" if label else "value"
    k = cd.n_new
    shown = ", ".join(f"{clip_text(v, 30)!r} ({n:,})" for v, n in cd.new_categories[:5])
    more = "" if k <= 5 else f", … {k:,} in all"
    unit = "rows" if cd.entity is None else f"`{cd.entity}` entities"
    message = (f"{cd.column}: {fmt_rows(rows, cd.cur_rows, f'{cur} {unit}')} hold "
               f"{'a' if k == 1 else f'{k:,}'} {cd.column} "
               f"{what}{'' if k == 1 else 'es' if label else 's'}"
               f" unseen in {ref}: {shown}{more}")
    if expected > 0:
        message += (f"; {fmt_share(expected)} expected by chance ({ref} rows holding a value "
                    f"seen once there, Good–Turing), excess {fmt_share(excess)}{chance_note}")
    message += resplit_note
    if cd.variants:
        n_var = len(cd.variants)
        new_v, ref_v = next(iter(cd.variants.items()))
        message += (f"; {n_var:,} of them differ{'s' if n_var == 1 else ''} from a {ref} value "
                    "only by "
                    f"case, whitespace or punctuation ({clip_text(new_v, 30)!r} for "
                    f"{clip_text(ref_v, 30)!r}; see schema.consistency)")
    if label:
        message += "; a model trained on it cannot predict a class it never saw"
    if reason:
        severity = Severity.INFO
        message += f"; {reason}"
    return Finding(severity=severity, message=message, metric="unseen_share",
                   value=rounded(excess),
                   threshold=check.unseen_fail_above, count=rows, subject=cd.column,
                   splits=[ref, cur], evidence={
                       f"values unseen in {ref}": [
                           {"value": clip_text(v), f"{cur} {unit}": n}
                           | ({f"variant of a {ref} value": clip_text(cd.variants.get(v, ""))}
                              if cd.variants else {})
                           for v, n in cd.new_categories[:check.top_categories]],
                       "statistics": {"unseen share": rounded(share),
                                      "expected by chance": rounded(expected),
                                      "distinct unseen values": k} | stats_extra})
