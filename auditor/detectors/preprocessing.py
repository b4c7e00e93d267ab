"""Preprocessing fitted on more than train: exact fingerprints in the data, leaks in the code.

A transform fitted on train alone leaves exact statistics on train (mean 0 and std 1 after a
standard scaler, min 0 and max 1 after a min-max scaler, ...); fitted on train+val+test before
the split, it leaves them exact on the union of the splits instead. This module looks for those
exact statistics per numeric column, with tolerances derived from floating-point precision and
sample size, and (when ``pipeline:`` names scripts or notebooks) runs the static code scan of
:mod:`auditor.codescan` and reports its findings in the same check.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar


from auditor.core.checks import Cost, Needs
from auditor.core.roles import Kind, LabelKind, LoadedData, Roles
from auditor.detectors.measured import judged
from auditor.engines.operations import Operations
from auditor.errors import InputError, NotApplicable
from auditor.report.results import Finding, Severity
from auditor.judging.preprocessing_groups import group_categories, group_imputations, group_scalings
from auditor.detectors.preprocessing_context import Context, fit_context
from auditor.stats.preprocessing import EPS64, closest_to_one, finite, fmt_g, on_grid, sd_of
from auditor.stats.numerics import check_params, fmt_count, fmt_rows, fmt_share, is_share, share

_SEPARATORS = "_=:.- "
QUANTILES = ("median", "q25", "q75")


@dataclass
class PrepMeasures:
    """What ``leakage.preprocessing`` measured: the ``roles``, the code scan's findings
    (``scan``; ``pipeline`` files named, ``scanned`` read), the numeric ``columns``, their
    per-split ``summaries`` (counts, moments and extremes; the quartiles, which an engine may
    measure only where a verdict reads them, stay in the context) and the engine's
    ``context`` (None with fewer than two splits or
    no numeric column), which the judge queries further."""

    # the context is the engine's own object (compared through its summaries and verdicts)
    ENGINE_NATIVE: ClassVar[tuple[str, ...]] = ("context",)
    CONTEXT: ClassVar[tuple[str, ...]] = ("roles",)  # given by the run, not measured

    roles: Roles
    scan: list[Finding]
    pipeline: int
    scanned: int
    columns: list[str]
    summaries: dict[str, dict[str, dict[str, Any]]]
    context: Any


@dataclass(frozen=True, kw_only=True)
class PreprocessingFit:
    """Columns whose scaling, imputation or encoding was fitted on rows of later splits (val,
    test), and pipeline code that fits or resamples before the split, fits on test data, scores
    a model on its training rows, or reuses the test set for model selection.

    A fail means the evaluation is optimistic: statistics of the evaluation rows (their mean,
    range, missing-value fill, categories or labels) went into the features the model was
    trained and scored on. Fix: split first, fit every transformer on train only (a sklearn
    ``Pipeline`` inside cross-validation does this), then apply it to val and test.

    Fingerprints, per numeric column, over the union ``F`` of train with the later splits (every
    prefix train+val, train+val+test; a fit set that includes the last split fails, one that
    stops earlier warns) against train alone; ``eps`` is the machine epsilon of the column's
    dtype (2^-52 Float64, 2^-23 Float32), ``k = ulp_slack``, ``C = max_centre_ratio``, ``n`` the
    non-null rows, ``zmax`` the largest ``|x|``:

    - standard scaling: ``|mean_F| <= k (eps (C + zmax) + eps64 zmax sqrt(n))`` and
      ``|std_F - 1| <= k (eps (1 + zmax) + eps64 zmax^2 sqrt(n))`` for ddof 0 or 1, while train
      exceeds its own tolerances. The eps·C term covers rounding of the fitted centre (up to
      ``|mu|/sigma = C`` of the raw column), eps·zmax the rounding of stored values, the sqrt(n)
      terms float64 accumulation. Sampling puts a train-only fit's union mean about
      ``sqrt(n_later)/n`` from 0 and a union fit's train mean about
      ``sd sqrt(1 - n_train/n) / sqrt(n_train)`` from 0 (reported as ``train_z``): both are many
      orders of magnitude above these tolerances, so near-standardised data never matches.
    - min-max scaling: ``F``'s min and max equal (0, 1) or (-1, 1) within
      ``k (eps + eps64 C)``, each held by at most ``max_bound_rows`` rows (a scaler maps one
      row to each bound; a naturally bounded rate, share or tf-idf weight piles rows up at 0
      or 1), while train's range is not that.
    - robust scaling: ``F``'s median is 0 and IQR (linear quantiles) is 1 within
      ``k (eps (C + max|q|) + eps64 C)``, with the median strictly inside the IQR; train's
      are not.
      Scaling fingerprints skip integer-valued columns (a natural integer column can have
      median 0 and IQR 1).
    - mean/median imputation: a value ``v`` (one float, repeated) held by at least
      ``min_imputed`` rows and ``spike_ratio`` times more than any of its neighbours (its six
      nearest distinct values; for the median also every value within a quarter of the
      others' IQR) equals the mean or median of ``F``'s other values (within
      ``k (eps max(1,|v|) + eps64 zmax sqrt(n))``) but not train's. When the other values lie
      on a decimal grid (integers, cents: multiples of 10^-d, d <= 6), a mean ``v`` on that
      grid is a natural value and never reported, and ``v`` finer than 10^-(d+1) (a mean
      filled into integer ages: 53.3291...) is a fill whatever its ratio to its neighbours.
      Filling with the mean (median) leaves ``v`` the mean (median) of the whole column, which
      is how candidates are found. Skipped for integer-valued columns (a natural mode) and, for the
      median, when ``v`` holds half the rows (it is then the median anyway).
    - one-hot / vocabulary: a non-negative column that is 0 in every train row and non-zero in a
      later split. Fails when it belongs to a name-prefix group whose rows sum to exactly 1
      (one-hot) or have an L2 norm of 0 or 1 (tf-idf). Random assignment leaves all its ``m``
      non-zero rows out of train with chance ``p = (1 - n_train/n)^m``: warns when
      ``p < one_hot_chance``, or when it has two or more siblings (its name-prefix group of
      ``g`` columns) non-zero in train and ``p g < family_chance`` (Bonferroni over the
      group: in a thousand sparse fingerprint bits, some rare ones fall in test only).
    - target encoding (binary or numeric label): a float column within the label's range whose
      values repeat in the later splits (at most one distinct value per two rows); levels are
      the values of a raw column (categorical or integer) it is a function of there, at any
      number of levels (a 4,000-level ``tailnum``), else its own values when it has at most
      ``max_levels`` distinct values in train and in the later splits. Cost: one group_by per
      raw column over the later splits for all candidate columns at once, and one group_by
      per fit set per candidate: linear in rows whatever the cardinality. The encoded value of
      each level is fitted as ``(n ybar + m p) / (n + m)`` (per-level count and label mean over the
      fit set, ``p`` its label mean, ``m`` >= 0 the smoothing, estimated); fails when the fit on
      ``F`` leaves a weighted RMSE within float tolerance or below ``encoding_rmse_ratio`` times
      the fit on train (an encoding fitted on an outside population fits both about equally).

    Columns scaled the same way (same scaler and range, same fit set), columns filled with
    the same statistic (mean or median) over the same fit set, and new categories of one
    one-hot / vocabulary group are one finding
    (:mod:`auditor.judging.preprocessing_groups`): its subject is the list of their names, its
    evidence one row per column (the first ``max_examples``), its value the deviation of the column
    farthest from an exact fit relative to its tolerance, with that tolerance as threshold;
    an imputation (category) group counts the rows holding a fill (a non-zero value) in any of
    its columns.

    With ``pipeline:`` scripts or notebooks in audit.yaml, the static scan of
    :func:`auditor.codescan.scan_paths` adds one finding per leak in the code
    (``fit_before_split``, ``fit_on_test``, ``fit_on_train_and_test``,
    ``test_reused_for_selection``, ``global_statistic_before_split``,
    ``evaluated_on_training_rows``) with file, line (and cell), snippet and why;
    ``extra_fitters`` names more transformer classes or fit functions.
    """

    id: ClassVar[str] = "leakage.preprocessing"
    title: ClassVar[str] = "Preprocessing fitted before the split"
    cost: ClassVar[Cost] = Cost.STATS
    needs: ClassVar[Needs] = Needs()
    ulp_slack: float = 16.0           # k: multiples of the float error bounds
    max_centre_ratio: float = 1000.0  # C: largest |mean|/sd of a raw column covered
    min_rows: int = 20                # rows needed in train and in the fit set
    min_imputed: int = 5              # a fill value repeated at least this often
    spike_ratio: float = 5.0          # ... and this many times more often than its neighbours
    one_hot_chance: float = 0.001     # chance a column is all-zero in train by random assignment
    family_chance: float = 0.05       # ... times the columns of its name-prefix group
    max_bound_rows: int = 2           # min-max: rows allowed at each exact bound (ties)
    max_levels: int = 200             # target encoding by its own values (no raw level column)
    encoding_rmse_ratio: float = 0.1  # fit on F explains the encoding this much better than train
    extra_fitters: tuple[str, ...] = ()  # code scan: more transformer classes or fit functions
    max_examples: int = 20

    def __post_init__(self) -> None:
        number = (int, float)
        check_params(self, ("ulp_slack", "spike_ratio"),
                     lambda v: isinstance(v, number) and v >= 1, "a number >= 1")
        check_params(self, ("max_centre_ratio",), lambda v: isinstance(v, number) and v >= 0,
                     "a number >= 0")
        check_params(self, ("one_hot_chance", "family_chance", "encoding_rmse_ratio"),
                     lambda v: isinstance(v, number) and is_share(v), "a share in [0, 1]")
        check_params(self, ("max_bound_rows",), lambda v: isinstance(v, int) and v >= 1,
                     "an integer >= 1")
        check_params(self, ("min_rows", "min_imputed", "max_levels"),
                     lambda v: isinstance(v, int) and v >= 2, "an integer >= 2")
        check_params(self, ("max_examples",), lambda v: isinstance(v, int) and v >= 0,
                     "an integer >= 0")
        fitters = self.extra_fitters
        if isinstance(fitters, str) or not all(isinstance(f, str) and f.isidentifier()
                                                for f in fitters):
            raise ValueError(f"extra_fitters must be a list of Python names; got {fitters!r}")
        object.__setattr__(self, "extra_fitters", tuple(fitters))

    # ------------------------------------------------------------------------------------------
    def run(self, data: LoadedData) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: Roles) -> PrepMeasures:
        """The pipeline code scanned (``roles.pipeline``), and with two splits or more the
        :func:`~auditor.detectors.preprocessing_context.fit_context` of the numeric and
        boolean features (its summaries made here, its other queries by the judge)."""
        scan: list[Finding] = []
        pipeline = list(roles.pipeline)
        scanned = 0
        if pipeline:
            from auditor.codescan import scan_paths

            try:
                scan += scan_paths([Path(p) for p in pipeline], self.extra_fitters)
                scanned = len(pipeline)
            except InputError as err:
                scan.append(Finding(
                    severity=Severity.WARN, metric="pipeline_unreadable", message=str(err),
                    evidence={"files": [str(p) for p in pipeline]}))
        cols = roles.features_of(Kind.NUMERIC, Kind.BOOLEAN)
        context = None
        if len(roles.splits) < 2:
            if not pipeline:
                raise NotApplicable("only one split and no pipeline code: nothing can have "
                                    "been fitted across splits")
        elif not roles.features:
            if not pipeline:
                raise NotApplicable("no feature columns: no fitted transform to fingerprint")
        elif cols:
            context = fit_context(engine, roles, cols, min_ties=self.min_imputed,
                                  robust_tolerance=self.tol_robust)
        summaries = ({} if context is None else
                     {s: {c: {k: v for k, v in got.items() if k not in QUANTILES}
                          for c, got in per.items()} for s, per in context.per_split.items()})
        return PrepMeasures(roles, scan, len(pipeline), scanned, cols, summaries, context)

    def judge(self, m: PrepMeasures) -> list[Finding]:
        findings = list(m.scan)
        if m.context is not None:
            findings += self.judge_context(m.context, m.context.eps)
        if not any(f.severity != Severity.INFO for f in findings):
            several = len(m.roles.splits) > 1
            scanned = (f" and scanned {m.scanned} pipeline file{'s' * (m.scanned > 1)}"
                       if m.scanned else "")
            findings.append(Finding(
                severity=Severity.INFO, metric="columns_checked", value=0.0,
                count=len(m.columns) if several else 0,
                message=f"0 of {fmt_count(len(m.columns))} numeric columns carry the fingerprint "
                        f"of a scaler, imputer or encoder fitted beyond train{scanned}; nothing "
                        "found." if several else
                        f"Scanned {m.pipeline} pipeline file(s); nothing found."))
        return findings

    def judge_context(self, ctx: Context, eps: dict[str, float]) -> list[Finding]:
        """The fingerprints' findings from ``ctx`` (its summaries and measuring queries) and
        the machine epsilon ``eps`` of every float column, in column order."""
        names = ctx.names
        scaled: list[Finding] = []
        for c in ctx.cols:
            if c in eps:
                scaling = self._scaling(ctx, c, eps[c])
                if scaling:
                    scaled.append(scaling)
        findings = group_scalings(scaled, names[0], self.max_examples)
        findings += group_imputations(ctx, self._imputations(ctx, eps), self.max_examples)
        findings += group_categories(ctx, self._zero_in_train(ctx), self.max_examples)
        findings += self._target_encoding(ctx, eps)
        return findings

    # -- tolerances ----------------------------------------------------------------------------
    def tol_mean(self, eps: float, zmax: float, n: int) -> float:
        return self.ulp_slack * (eps * (self.max_centre_ratio + zmax)
                                 + EPS64 * zmax * math.sqrt(n))

    def tol_std(self, eps: float, zmax: float, n: int) -> float:
        return self.ulp_slack * (eps * (1 + zmax) + EPS64 * zmax ** 2 * math.sqrt(n))

    def tol_minmax(self, eps: float) -> float:
        return self.ulp_slack * (eps + EPS64 * self.max_centre_ratio)

    def tol_robust(self, eps: float, qmax: float) -> float:
        return self.ulp_slack * (eps * (self.max_centre_ratio + qmax)
                                 + EPS64 * self.max_centre_ratio)

    # -- scaling -------------------------------------------------------------------------------
    def _standard(self, s: dict[str, Any], eps: float) -> tuple[bool, float, float]:
        """(matches, |mean|, tolerance on the mean) for one summary."""
        n, zmax = int(s["n"]), float(s["maxabs"])
        tm, ts = self.tol_mean(eps, zmax, n), self.tol_std(eps, zmax, n)
        dev_std = min(abs(s["std0"] - 1), abs(s["std1"] - 1))
        return abs(s["mean"]) <= tm and dev_std <= ts, abs(s["mean"]), tm

    def _minmax(self, s: dict[str, Any], eps: float
                ) -> tuple[bool, float, float, tuple[float, float]]:
        tol = self.tol_minmax(eps)
        best = (False, math.inf, tol, (0.0, 1.0))
        for lo, hi in ((0.0, 1.0), (-1.0, 1.0)):
            dev = max(abs(s["min"] - lo), abs(s["max"] - hi))
            if dev <= tol:
                return True, dev, tol, (lo, hi)
            if dev < best[1]:
                best = (False, dev, tol, (lo, hi))
        return best

    def _robust(self, s: dict[str, Any], eps: float) -> tuple[bool, float, float]:
        tol = self.tol_robust(eps, max(abs(s["q25"]), abs(s["q75"])))
        dev = max(abs(s["median"]), abs(s["q75"] - s["q25"] - 1))
        # a scaled column's median lies inside its IQR; median = q25 = 0 and q75 = 1 is a
        # sparse natural column (mostly 0, then 1, ...), not a robust scaler's output
        inside = s["q25"] + tol < s["median"] < s["q75"] - tol
        return dev <= tol and inside, dev, tol

    def _scaling(self, ctx: Context, c: str, eps: float) -> Finding | None:
        train = ctx.per_split[ctx.names[0]][c]
        if train["n"] < self.min_rows or not train["std0"] > 0:
            return None
        for fit_set in ctx.fit_sets:
            s = ctx.per_set[tuple(fit_set)][c]
            if s["n"] < self.min_rows or s["integral"] or not finite(s):
                continue
            ok, dev, tol = self._standard(s, eps)
            if ok and not self._standard(train, eps)[0]:
                return self._scaling_finding(ctx, c, fit_set, "standard", dev, tol, eps)
            ok, dev, tol, rng = self._minmax(s, eps)
            ok = ok and max(s["n_at_min"], s["n_at_max"]) <= self.max_bound_rows
            if ok and not (self._minmax(train, eps)[0]
                           and self._minmax(train, eps)[3] == rng):
                return self._scaling_finding(ctx, c, fit_set, "minmax", dev, tol, eps, rng)
            ok, dev, tol = self._robust(s, eps)
            if ok and not self._robust(train, eps)[0]:
                return self._scaling_finding(ctx, c, fit_set, "robust", dev, tol, eps)
        return None

    def _scaling_finding(self, ctx: Context, c: str, fit_set: list[str], kind: str,
                         dev: float, tol: float, eps: float,
                         rng: tuple[float, float] = (0.0, 1.0)) -> Finding:
        s = ctx.per_set[tuple(fit_set)][c]
        train_name = ctx.names[0]
        t = ctx.per_split[train_name][c]
        later = fit_set[1:]
        n_later = int(s["n"] - t["n"])
        label = "+".join(fit_set)
        dev_fn: Callable[[dict[str, Any]], float]
        extra: dict[str, Any]
        if kind == "standard":
            what, metric = "standard scaler", "standard_scaling_fit"
            sd = sd_of(s)
            se = sd * math.sqrt(max(0.0, 1 - t["n"] / s["n"])) / math.sqrt(t["n"])
            stats = {"mean": "mean", "std (ddof 0)": "std0", "std (ddof 1)": "std1"}
            over = (f"standardised over {label} (mean {fmt_g(s['mean'])}, std "
                    f"{fmt_g(closest_to_one(s))} over {fmt_count(int(s['n']))} rows)")
            train_txt = (f"over {train_name} alone it is not (mean {fmt_g(t['mean'])}, std "
                         f"{fmt_g(closest_to_one(t))})")
            extra = {"train_z": t["mean"] / se if se > 0 else None,
                     "random_subset_sd_of_train_mean": se,
                     "tolerance_std": self.tol_std(eps, s["maxabs"], int(s["n"]))}
            dev_fn = lambda x: abs(x["mean"])  # noqa: E731
        elif kind == "minmax":
            what, metric = "min-max scaler", "minmax_scaling_fit"
            stats = {"min": "min", "max": "max"}
            over = (f"scaled to [{fmt_g(rng[0])}, {fmt_g(rng[1])}] over {label} (min "
                    f"{fmt_g(s['min'])}, max {fmt_g(s['max'])} over {fmt_count(int(s['n']))} rows)")
            train_txt = (f"over {train_name} alone the range is [{fmt_g(t['min'])}, "
                         f"{fmt_g(t['max'])}]")
            extra = {"range": list(rng)}
            dev_fn = lambda x: max(abs(x["min"] - rng[0]), abs(x["max"] - rng[1]))  # noqa: E731
        else:
            what, metric = "robust scaler", "robust_scaling_fit"
            stats = {"median": "median", "q25": "q25", "q75": "q75"}
            over = (f"robust-scaled over {label} (median {fmt_g(s['median'])}, IQR "
                    f"{fmt_g(s['q75'] - s['q25'])} over {fmt_count(int(s['n']))} rows)")
            train_txt = (f"over {train_name} alone it is not (median {fmt_g(t['median'])}, IQR "
                         f"{fmt_g(t['q75'] - t['q25'])})")
            extra = {}
            dev_fn = lambda x: max(abs(x["median"]), abs(x["q75"] - x["q25"] - 1))  # noqa: E731
        table = {name: {k: ctx.per_split[name][c][v] for k, v in stats.items()}
                 | {"rows": int(ctx.per_split[name][c]["n"])} for name in ctx.names}
        table[label] = {k: s[v] for k, v in stats.items()} | {"rows": int(s["n"])}
        labels = list(ctx.names) + [label]
        devs = [dev_fn(ctx.per_split[n][c]) for n in ctx.names] + [dev_fn(s)]
        chart = {"type": "bar", "log": True, "labels": labels,
                 "values": [max(d, 1e-18) for d in devs], "lines": [tol],
                 "title": f"{c}: distance from an exact {what} fit (dashed: tolerance)",
                 "ylabel": "|deviation|", "colors": ["#4C72B0"] * len(ctx.names) + ["#C44E52"]}
        return Finding(
            severity=self._severity(ctx, fit_set), metric=metric, value=dev, threshold=tol,
            count=n_later, subject=c, splits=list(fit_set),
            message=f"{c} is {over}, but {train_txt}: the {what} was fitted with "
                    f"{fmt_count(n_later)} {'+'.join(later)} rows "
                    f"({fmt_share(share(n_later, int(s['n'])))} of its rows).",
            evidence={"fit_set": label, "statistics": table, "tolerance": tol,
                      "dtype_eps": eps, **extra, "chart": chart})

    def _severity(self, ctx: Context, fit_set: list[str]) -> Severity:
        return Severity.FAIL if fit_set[-1] == ctx.names[-1] else Severity.WARN

    # -- imputation ----------------------------------------------------------------------------
    def tol_fill(self, eps: float, s: dict[str, Any], v: float) -> float:
        return float(self.ulp_slack * (eps * max(1.0, abs(v))
                                       + EPS64 * s["maxabs"] * math.sqrt(s["n"])))

    def _imputations(self, ctx: Context, eps: dict[str, float]) -> list[Finding]:
        """Mean/median fill values of a fit beyond train.

        Filling missing values with ``v`` = the mean (median) of the observed values leaves
        ``v`` the mean (median) of the filled column, so candidates are found in one select per
        fit set: how many values lie within tolerance of the set's mean and median. Only
        candidates are then checked in detail (neighbour counts, others' median, train).
        """
        cols = [c for c in eps if not ctx.per_set[tuple(ctx.fit_sets[0])][c]["integral"]]
        findings: dict[str, Finding] = {}
        for fit_set in ctx.fit_sets:  # largest first: report the widest fit
            stats = ctx.per_set[tuple(fit_set)]
            todo = [c for c in cols if c not in findings and stats[c]["n"] >= self.min_rows
                    and finite(stats[c]) and stats[c]["std0"] > 0]
            if not todo:
                continue
            row = ctx.count_near(tuple(fit_set), [
                (c, k, stats[c][k], self.tol_fill(eps[c], stats[c], stats[c][k]))
                for c in todo for k in ("mean", "median")])
            for c in todo:
                for k in ("mean", "median"):
                    cnt = int(row[f"{c}\x00{k}"])
                    if cnt >= self.min_imputed and c not in findings:
                        f = self._imputation(ctx, c, eps[c], fit_set, k)
                        if f is not None:
                            findings[c] = f
        return [findings[c] for c in cols if c in findings]

    def _imputation(self, ctx: Context, c: str, eps: float, fit_set: list[str], stat: str
                    ) -> Finding | None:
        s = ctx.per_set[tuple(fit_set)][c]
        v = float(s[stat])
        tol = self.tol_fill(eps, s, v)
        # a fill writes one value: the count of the most frequent value within tolerance, not
        # of every distinct value there (data at 1e-17 around 0 is within any tolerance of 0)
        profile = ctx.fill_profile(tuple(fit_set), c, v, tol, stat == "median")
        cnt = profile["cnt"]
        if cnt < self.min_imputed:
            return None
        if stat == "median" and 2 * cnt >= profile["n"]:
            return None  # a value held by half the rows is the median whatever was filled
        grid = profile["grid"]
        if stat == "mean" and grid is not None and bool(on_grid(v, grid)):
            # the mean of values on a grid lands on it by coincidence (values {0, 4.5}: 4);
            # a natural mode there (a count, a price) is no evidence of a fit
            return None
        # the only value finer than the column's grid (a mean filled into integer ages) is a
        # fill whatever its ratio to its neighbours, and never an observed value
        off_grid = grid is not None and not bool(on_grid(v, grid + 1))
        # neighbours: the six nearest distinct values, and for the median (where natural modes
        # gather) every distinct value within a quarter of the others' IQR
        neighbour = profile["neighbour"]
        if cnt < self.spike_ratio * neighbour and not off_grid:
            return None
        fit_stats = ctx.fill_candidates_of(tuple(fit_set), c, v, tol)[1]
        if off_grid:
            fit_stats.pop("median_with_one_copy", None)
        if not fit_stats:
            return None
        if stat == "median" and min(abs(v - fit_stats["median"]),
                                    abs(v - fit_stats.get("median_with_one_copy", math.inf))
                                    ) > tol:
            return None  # a natural spike that happens to sit at the median
        n_train, train_stats = ctx.fill_candidates_of((ctx.names[0],), c, v, tol)
        if n_train < self.min_rows:
            return None
        if off_grid:
            train_stats.pop("median_with_one_copy", None)
        if not train_stats or any(abs(v - x) <= tol for x in train_stats.values()):
            return None  # fitted on train: correct
        return self._imputation_finding(ctx, c, fit_set, v, cnt, stat, fit_stats, train_stats,
                                        tol, neighbour)

    def _imputation_finding(self, ctx: Context, c: str, fit_set: list[str], v: float,
                            cnt: int, stat: str, stats: dict[str, float],
                            train_stats: dict[str, float], tol: float,
                            neighbour: int) -> Finding:
        label = "+".join(fit_set)
        train_name = ctx.names[0]
        n_set = int(ctx.per_set[tuple(fit_set)][c]["n"])
        per_split = ctx.rows_near(c, v, tol)
        hit = stat if stat == "mean" or abs(v - stats["median"]) <= tol \
            else "median_with_one_copy"
        return Finding(
            severity=self._severity(ctx, fit_set), metric="imputation_fit",
            value=abs(v - stats[hit]), threshold=tol, count=cnt, subject=c,
            splits=list(fit_set),
            message=f"{fmt_rows(cnt, n_set, f'{label} rows')} hold {c} = {fmt_g(v)}, the {stat} "
                    f"of the column's other values over {label} ({fmt_g(stats[hit])}), not over "
                    f"{train_name} ({fmt_g(train_stats[hit])}): the {stat} imputer was fitted "
                    f"with the {'+'.join(fit_set[1:])} rows.",
            evidence={"fill_value": v, "statistic": stat, "rows_with_value": per_split,
                      "fit_set": label, f"{label}_statistics": stats,
                      f"{train_name}_statistics": train_stats,
                      "largest_neighbour_count": neighbour, "tolerance": tol})

    # -- one-hot / vocabulary columns ----------------------------------------------------------
    def _zero_in_train(self, ctx: Context) -> list[Finding]:
        train_name = ctx.names[0]
        later = ctx.names[1:]
        union = ctx.per_set[tuple(ctx.names)]
        findings = []
        cache: dict[tuple[str, ...], str | None] = {}
        for c in ctx.cols:
            t = ctx.per_split[train_name][c]
            if t["n"] == 0 or t["nonzero"] > 0 or union[c]["negative"] > 0:
                continue
            nonzero = {n: int(ctx.per_split[n][c]["nonzero"]) for n in later}
            m = sum(nonzero.values())
            if m == 0:
                continue
            structure, group = self._group_structure(ctx, c, cache)
            chance = (1 - t["n"] / union[c]["n"]) ** m
            siblings = [g for g in group if g != c
                        and ctx.per_split[train_name][g]["nonzero"] > 0]
            # in a family of sparse columns (fingerprint bits, rare words) some are 0 in train
            # by chance: the chance is corrected for the number of columns (Bonferroni)
            family = len(siblings) >= 2 and chance * len(group) < self.family_chance
            if structure:
                severity = Severity.FAIL
            elif family or chance < self.one_hot_chance:
                severity = Severity.WARN
            else:
                continue
            hit = [n for n in later if nonzero[n] > 0]
            n_hit = sum(ctx.roles.rows[n] for n in hit)
            why = {"one_hot": "it belongs to a one-hot group whose columns sum to 1 in every "
                              "row: the encoder learned this category from later splits",
                   "l2": "it belongs to a group of columns with unit L2 norm per row "
                         "(tf-idf): the vocabulary was learned from later splits",
                   None: f"a column zero in every {train_name} row is what an encoder or "
                         "vocabulary fitted on later splits produces"}[structure]
            findings.append(Finding(
                severity=severity, metric="category_from_later_split",
                value=share(m, n_hit), threshold=0.0, count=m, subject=c,
                splits=[train_name, *later],
                message=f"{c} is 0 in all {fmt_count(int(t['n']))} {train_name} rows but "
                        f"non-zero in {fmt_rows(m, n_hit, '+'.join(hit) + ' rows')}; {why}.",
                evidence={"nonzero_rows": {train_name: 0, **nonzero},
                          "group": group[:self.max_examples], "structure": structure,
                          "chance_under_random_split": chance}))
        return findings

    def _group_structure(self, ctx: Context, c: str, cache: dict[tuple[str, ...], str | None]
                         ) -> tuple[str | None, list[str]]:
        """The strongest structure of a name-prefix group containing ``c``: ``one_hot`` (0/1
        columns summing to 1 per row), ``l2`` (non-negative, unit L2 norm per row) or None."""
        union = ctx.per_set[tuple(ctx.names)]
        best: list[str] = []
        for i in sorted((i for i, ch in enumerate(c) if ch in _SEPARATORS and 0 < i), reverse=True):
            prefix = c[:i + 1]
            group = [g for g in ctx.cols if g.startswith(prefix)]
            if len(group) < 2:
                continue
            if len(group) > len(best):
                best = group
            key = tuple(group)
            if key not in cache:
                cache[key] = row_structure(ctx, group, union)
            if cache[key]:
                return cache[key], group
        return None, best

    # -- target encoding -----------------------------------------------------------------------
    def _target_encoding(self, ctx: Context, eps_of: dict[str, float]) -> list[Finding]:
        roles = ctx.roles
        y = roles.label
        if not y or roles.label_kind not in (LabelKind.BINARY, LabelKind.NUMERIC):
            return []
        names = ctx.names
        label_range = ctx.label_range()
        if label_range is None:
            return []
        ylo, yhi = label_range
        ymax = max(abs(ylo), abs(yhi), 1.0)
        keys = [k for k in roles.features_of(Kind.CATEGORICAL, Kind.NUMERIC, Kind.BOOLEAN)
                if k not in eps_of]  # eps_of: every float column
        inside = []  # float columns within the label's range: could hold a target encoding
        for c in ctx.cols:
            s = ctx.per_set[tuple(names)][c]
            if c not in eps_of or s["integral"] or not finite(s):
                continue
            if s["min"] < ylo - 1e-9 * ymax or s["max"] > yhi + 1e-9 * ymax:
                continue
            inside.append(c)
        if not inside:
            return []
        # distinct values in the later splits and in train, all columns in one select each
        n_later, n_train, later_rows = ctx.encoding_distincts(inside)
        # a value repeated within the later splits (at most one distinct value per two rows)
        encoded = [c for c in inside if 2 <= n_later[c] <= later_rows // 2]
        level_keys = ctx.level_keys(encoded, keys)
        findings = []
        for c in encoded:
            eps = eps_of[c]
            # a raw level column: examined at any number of levels (group_by, linear cost)
            candidates = [k for k in (level_keys[c],) if k]
            if n_later[c] <= self.max_levels and n_train[c] <= self.max_levels:
                candidates.append(c)  # levels = the encoded values (no cross-fitting on train)
            fit, key = None, c
            for key in candidates:
                fit = ctx.encoding_fits(c, key)
                if fit is not None:
                    break
            if fit is None:
                continue
            rmse_train = fit[names[0]]["rmse"]
            n_max = max(f["rows"] for f in fit.values())
            tol = self.ulp_slack * ymax * (eps + EPS64 * math.sqrt(n_max))
            if rmse_train <= tol:
                continue
            for fit_set in ctx.fit_sets:
                f = fit["+".join(fit_set)]
                exact = f["rmse"] <= tol
                if exact or f["rmse"] <= self.encoding_rmse_ratio * rmse_train:
                    findings.append(self._encoding_finding(ctx, c, key, fit_set, fit, tol,
                                                           exact))
                    break
        return findings

    def _encoding_finding(self, ctx: Context, c: str, key: str, fit_set: list[str],
                          fit: dict[str, Any], tol: float, exact: bool) -> Finding:
        label = "+".join(fit_set)
        train_name = ctx.names[0]
        f, t = fit[label], fit[train_name]
        n_later = sum(ctx.roles.rows[n] for n in fit_set[1:])
        levels = f["levels"]
        if exact:
            how = (f"{c} equals the per-level mean label over {label} exactly (RMSE "
                   f"{fmt_g(f['rmse'])} across {levels} levels of {key}) but not over {train_name} "
                   f"(RMSE {fmt_g(t['rmse'])})")
        else:
            how = (f"{c} matches the per-level mean label over {label} far more closely (RMSE "
                   f"{fmt_g(f['rmse'])}) than over {train_name} (RMSE {fmt_g(t['rmse'])}) across "
                   f"{levels} levels of {key}")
        return Finding(
            severity=self._severity(ctx, fit_set), metric="target_encoding_fit",
            value=f["rmse"], threshold=tol if exact else self.encoding_rmse_ratio * t["rmse"],
            count=n_later, subject=c, splits=list(fit_set),
            message=f"{how}: the target encoding used the labels of "
                    f"{fmt_count(n_later)} {'+'.join(fit_set[1:])} rows "
                    f"({fmt_share(share(n_later, n_later + ctx.roles.rows[train_name]))} of "
                    "its rows).",
            evidence={"level_key": key, "levels": levels, "fit_set": label,
                      "rmse": {label: f["rmse"], train_name: t["rmse"]},
                      "smoothing_m": {label: f["m"], train_name: t["m"]},
                      "tolerance": tol, "examples": f["examples"][:self.max_examples]})


def row_structure(ctx: Context, group: list[str], union: dict[str, dict[str, Any]]
                  ) -> str | None:
    """``one_hot`` when ``group``'s columns are 0/1 and sum to 1 in every row of every split,
    ``l2`` when they are non-negative with squared row sums 0 or 1 (some 1) and not all 0/1,
    else None (also with a negative value, an empty column or a null in a row)."""
    if any(union[g]["negative"] > 0 or union[g]["n"] == 0 for g in group):
        return None
    binary = all(union[g]["integral"] and union[g]["max"] <= 1 for g in group)
    ok_one_hot, ok_l2, any_one = binary, True, False
    for sums in ctx.row_sums(group):
        if sums["null"]:
            return None
        if ok_one_hot:
            ok_one_hot = sums["one_hot"]
        ok_l2 = ok_l2 and sums["l2"]
        any_one = any_one or sums["unit"]
    if ok_one_hot:
        return "one_hot"
    if ok_l2 and any_one and not binary:
        return "l2"
    return None
