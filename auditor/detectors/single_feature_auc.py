"""One feature alone predicting the label: its AUC fitted on train and evaluated on every split.

Rank-based and vectorised across columns (no model is fitted per column). Measured once for
every engine: for a binary label, numeric, datetime and boolean features from the engine's
per-class rank statistics over every labelled row (:meth:`Operations.class_ranks`, shared with
the association check) and categorical features' later splits from its level counts
(:meth:`Operations.target_rate_aucs`); what needs rows (categorical columns' cross-fitted
in-train figure, ids, the time column, a multiclass or numeric label's figures, and the
judging's CI, purest cut, peers and ROC curves) on the engine's driver data, which on polars
is every row.
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.roles import Kind, LabelKind, LoadedData, Roles
from auditor.detectors.measured import judged, stated
from auditor.engines.operations import ClassRanks, DriverData, Operations
from auditor.loading.data import AuditData
from auditor.errors import NotApplicable
from auditor.judging.leak_rules import (Rules, Verdict, judge, missing_purity, peer_context,
                                        pure_region)
from auditor.stats.class_view import class_evidence
from auditor.stats.label import (BINS, RANKED, YCOL, Encoded, LabelView, RankFit,
                                 class_rank_stats, encoded_figures, eval_counted, eval_ranked,
                                 eval_spearman, fit_ranked, fit_spearman, float_values,
                                 label_view, missing_count, oriented_scores, ranked_columns,
                                 shared_codes, shared_spearman_aggs, spearman_aggs,
                                 target_encode, value_expr)
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import (bootstrap_auc_ci, bootstrap_spearman_ci, check_params,
                                    fmt_count, fmt_rows, grade, roc_points)
from auditor.stats.numerics import round_finite as r4

@dataclass
class Scored:
    """One column's figures: per split the (macro) AUC or Spearman's rho and the per-class
    values; for a ranked column its fitted orientation (column ``index`` of ``fit``)."""

    column: str
    kind: str
    encoded: bool
    values: dict[str, float] = field(default_factory=dict)
    per_class: dict[str, np.ndarray] = field(default_factory=dict)
    fit: RankFit | None = None
    index: int = 0
    is_id: bool = False
    is_time: bool = False
    binned: bool = False

    def graded(self) -> tuple[float, str] | None:
        """The largest figure over splits and its split (a tie goes to the later split: a
        held-out figure is the stronger evidence)."""
        vals = [(v, i, s) for i, (s, v) in enumerate(self.values.items()) if math.isfinite(v)]
        if not vals:
            return None
        v, _, s = max(vals)
        return v, s


@dataclass
class AucMeasures:
    """What ``leakage.single_feature_auc`` measured: the ``driver`` data (the rows behind the
    CI, purest cut, peers and ROC curves), every ``scored`` column's figures per split, and
    the ranked columns the engine counted in quantile bins (``bins``: how many; every other
    figure is exact) with the bound on their AUC's error per split (``bin_error``)."""

    driver: DriverData
    scored: list[Scored]
    bins: dict[str, int]
    bin_error: dict[str, dict[str, float]]


@dataclass(frozen=True, kw_only=True)
class SingleFeatureAUC:
    """A fail means one column alone determines the label the way no honest measurement does:
    it is missing only for one outcome, it is near-deterministic (a cut isolates 90% of a
    class), or it stands far above every other feature. That is a field filled in after the
    outcome, a proxy of the label or a join artefact: drop it or rebuild it from what is known
    at prediction time. A strong column in a family of strong ones only warns. A failing time
    column means the label is nearly a function of the date; an id that warns means rows were
    exported in outcome order.

    Why: a cancellation date for churn, a status code written when the case closed, a column
    joined from the outcome table separate the classes almost perfectly and alone; real
    predictors overlap between classes and come in correlated families (breast cancer's
    radius, perimeter and area all reach AUC 0.95+ honestly). So a column above ``warn_above``
    is graded by :mod:`auditor.judging.leak_rules`, first rule that applies: post-outcome
    missingness (missing in >= ``pure_share`` of one class's train rows and <=
    ``pure_tolerance`` of the other's) fails; near-deterministic (train AUC >=
    ``deterministic_above``, or, binary label,
    a cut of its train score holding >= ``pure_share`` of one class and <= ``pure_tolerance``
    of the other: TPR >= 0.9 at FPR <= 0.01, counted only when both classes hold >=
    ``min_pure_rows`` train rows, as a clean cut on fewer rows is often chance) fails;
    singular (> ``singular_gap`` above the
    strongest other feature) fails above ``fail_above`` (the bootstrap CI's lower end too) and
    warns below, since one dominant honest predictor looks the same; independent peers (the
    features within the gap relate to it only through the label: partial rank correlation
    given the label < ``family_above``, so a cluster of post-outcome fields cannot vouch for
    itself) is graded like singular; otherwise strong but not singular (a family that co-varies
    beyond the label) warns, whatever its AUC; with no other feature, plain ``warn_above`` /
    ``fail_above``. The finding's ``evidence.grading`` names the rule, the runner-up feature
    and the purest cut. A declared
    id only warns (above ``id_warn_above``). The declared time column is scored like a
    feature against the label and graded by ``warn_above``/``fail_above`` alone: above 0.95
    the label is nearly a function of the date (fails); an ordinary trend stays silent. For a
    numeric label the fail threshold is ``deterministic_above``: a continuous quantity that
    trends (prices under inflation) reaches |rho| 0.95-0.98 with the date honestly; it warns.

    Per feature (numeric, boolean, datetime, categorical; text columns skipped) and split:
    AUC = (R1 - n1(n1+1)/2) / (n1 n0), R1 the sum of the positives' average ranks
    (Mann–Whitney U, ties counted half). Missing values are information: they form one tied
    block whose place (below all values, above all, or at a cut between values) is fitted on
    train with the direction and kept for the other splits; the in-train AUC of a numeric
    column is the best over both directions, i.e. max(AUC, 1 - AUC). Categorical columns:
    target-rate encoding fitted on train, rate_c = (positives_c + m p) / (n_c + m), m =
    ``smoothing``, p the train rate; missing is a level, unseen levels get p; the in-train AUC
    uses ``folds``-fold cross-fitted rates. Multiclass labels: macro mean of one-vs-rest AUCs;
    numeric columns are then cut into at most 32 train-quantile bins (missing a bin of its own)
    and encoded like categories, since the one-vs-rest ranks of a raw value cannot separate a
    class in the middle of the range. Numeric labels: Spearman's rho (metric abs_spearman: |rho| in
    train, in train's direction on later splits). The graded value is the largest figure over
    the splits (a leak in train only still misleads training); with one split, the in-train
    figure; it is graded as described above. Flagged columns get a percentile bootstrap 95% CI
    (``n_boot`` resamples of at most ``ci_rows`` sampled rows: conservative for larger splits)
    and ROC curves. A string id is ranked on a seeded sample of ``id_sample_rows`` rows.
    """

    id: ClassVar[str] = "leakage.single_feature_auc"
    title: ClassVar[str] = "Features that alone predict the label"
    cost: ClassVar[Cost] = Cost.STATS
    needs: ClassVar[Needs] = Needs(roles=("label",))
    warn_above: float = 0.85
    fail_above: float = 0.95
    id_warn_above: float = 0.85
    smoothing: float = 20.0
    folds: int = 5
    n_boot: int = 300
    ci_rows: int = 10_000
    id_sample_rows: int = 200_000
    top: int = 20
    deterministic_above: float = 0.995
    singular_gap: float = 0.15
    pure_share: float = 0.9
    pure_tolerance: float = 0.01
    copy_above: float = 0.999
    family_above: float = 0.1
    min_pure_rows: int = 30

    def __post_init__(self) -> None:
        check_params(self, ("min_pure_rows",), lambda v: isinstance(v, int) and v >= 1,
                     "an integer >= 1")
        check_params(self, ("warn_above", "fail_above", "id_warn_above",
                            "deterministic_above"),
                     lambda v: 0.5 <= v <= 1, "an AUC in [0.5, 1]")
        if self.warn_above > self.fail_above:
            raise ValueError(f"warn_above must be <= fail_above; got {self.warn_above!r} > "
                             f"{self.fail_above!r}")
        check_params(self, ("smoothing",), lambda v: v >= 0, ">= 0")
        check_params(self, ("singular_gap", "pure_share", "pure_tolerance", "copy_above",
                            "family_above"),
                     lambda v: 0 <= v <= 1, "a share in [0, 1]")
        for name, low in (("ci_rows", 100), ("id_sample_rows", 1000), ("top", 1)):
            check_params(self, (name,), _int_at_least(low), f"an integer >= {low}")
        # upper bounds: folds beyond int64 crashed the fold draw; n_boot resamples are held in
        # memory at once (n_boot x ci_rows counts)
        for name, low, high in (("folds", 2, 100), ("n_boot", 10, 10_000)):
            check_params(self, (name,), _int_within(low, high),
                         f"an integer in [{low}, {high:,}]")

    # -- measure and judge ---------------------------------------------------------------------
    def run(self, data: LoadedData) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: Roles) -> AucMeasures:
        """Every scored column's figures per split (:class:`AucMeasures`): for a binary
        label, numeric, boolean and datetime columns from the engine's rank statistics and
        categorical columns' later splits from its level counts, over every labelled row;
        the rest (in-train cross-fitted categorical figures, ids, the time column, every
        figure of a multiclass or numeric label) on the driver data (polars: every row)."""
        m = engine.driver_data()
        data = m.data
        view = label_view(data)
        ranks = None
        ranked = ranked_columns(data)
        if ranked and view.kind == LabelKind.BINARY:
            ranks = engine.class_ranks(view.column, view.classes, ranked)
        cats = data.features_of(Kind.CATEGORICAL)
        held: dict[str, dict[str, float]] = {}
        if cats and view.kind == LabelKind.BINARY and len(view.frames) > 1:
            held = engine.target_rate_aucs(view.column, view.classes, cats, self.smoothing)
        scored = self.score(data, view, ranks=ranks, held_out=held)
        bins, error = {}, {}
        if ranks is not None:
            for j, c in enumerate(ranks.columns):
                if ranks.bins[j]:
                    bins[c] = ranks.bins[j]
                    error[c] = {s: round(e[j], 6) for s, e in ranks.bin_error.items()}
        return AucMeasures(m, scored, bins, error)

    def judge(self, m: AucMeasures) -> list[Finding]:
        data = m.driver.data
        view = label_view(data)
        findings = self.judge_scored(data, view, m.scored)
        if m.bins:  # the overview states which figures rest on quantile bins, and how far
            findings[-1].evidence["bins"] = {c: f"{n:,} quantile bins" for c, n in m.bins.items()}
            findings[-1].evidence["auc_bin_error"] = m.bin_error
        partly = None
        if view.kind == LabelKind.BINARY:
            partly = ("the in-train AUC of categorical columns, ids, the time column, the CI, "
                      "purest cut, peers and ROC curves")
        return stated(findings, m.driver, partly=partly)

    def score(self, data: AuditData, view: LabelView, *, ranks: ClassRanks | None = None,
              held_out: dict[str, dict[str, float]] | None = None) -> list[Scored]:
        """Measuring: every scored column's figures per split (features, ids, the time
        column). ``ranks``: the engine's rank statistics of the ranked columns (binary
        label); ``held_out``: categorical columns' figures on later splits (binary label)."""
        feats = [c for c in data.features if data.kinds.get(c) in RANKED + (Kind.CATEGORICAL,)]
        ids = [c for c in data.columns.ids
               if data.kinds.get(c) not in (None, Kind.NESTED, Kind.NULL, Kind.TEXT)]
        time = data.columns.time
        if time and data.kinds.get(time) not in RANKED or time == data.label:
            time = None
        if not feats and not ids:
            raise NotApplicable("no numeric, boolean, categorical or datetime feature to test")
        scored: list[Scored] = []
        ranked = ranked_columns(data)
        kinds = [str(data.kinds[c]) for c in ranked]
        if ranked and view.kind == LabelKind.MULTICLASS:
            # one-vs-rest ranks of a raw value cannot separate a middle class: bin and encode
            scored += self._encoded(view, ranked, data.seed, binned=True, kinds=kinds)
        elif ranked and view.kind == LabelKind.NUMERIC:
            stats = {s: shared_spearman_aggs(data, view, s) for s in view.frames}
            scored += self._ranked(view, view.frames, ranked, stats, kinds)
        elif ranked:
            assert ranks is not None, "a binary label's ranked columns need the engine's ranks"
            scored += self._counted(view, ranks, kinds)
        cats = data.features_of(Kind.CATEGORICAL)
        if cats:
            scored += self._encoded(view, cats, data.seed, held_out=held_out, data=data)
        for c in ids:  # few; each on its own (a string id on a sample)
            frames = self._id_frames(view, c, data.seed)
            stats = ({} if view.kind == LabelKind.NUMERIC else
                     {s: class_rank_stats(f, [value_expr(c, f[c].dtype)], view.n_classes,
                                          moments=False) for s, f in frames.items()})
            (sc,) = self._ranked(view, frames, [c], stats, ["id"])
            sc.is_id = True
            scored.append(sc)
        if time:  # not a feature, but a label that is a function of the date is a leak
            frames = {s: f.select(time, YCOL) for s, f in view.frames.items()}
            if view.kind == LabelKind.MULTICLASS:  # a middle period's class needs bins
                (sc,) = self._encoded(view, [time], data.seed, binned=True, kinds=["time"])
            else:
                stats = ({} if view.kind == LabelKind.NUMERIC else
                         {s: class_rank_stats(f, [value_expr(time, f[time].dtype)],
                                              view.n_classes, moments=False)
                          for s, f in frames.items()})
                (sc,) = self._ranked(view, frames, [time], stats, ["time"])
            sc.is_time = True
            scored.append(sc)
        return scored

    def judge_scored(self, data: AuditData, view: LabelView, scored: list[Scored]
                     ) -> list[Finding]:
        """Judging: the findings of scored columns (``data``/``view``: the rows behind the
        CI, the purest cut, peers and ROC curves)."""
        features = [sc for sc in scored if not (sc.is_id or sc.is_time)]
        figures = {sc.column: g[0] for sc in features for g in [sc.graded()] if g is not None}
        out = [f for sc in scored for f in [self._finding(data, view, sc, figures)]
               if f is not None]
        out.sort(key=lambda f: ({"fail": 0, "warn": 1, "info": 2}[f.severity], -(f.value or 0)))
        out.append(self._overview(view, features))
        return out

    def _ranked(self, view: LabelView, frames: dict[str, pl.DataFrame], cols: list[str],
                stats: dict[str, dict[str, Any]], kinds: list[str]) -> list[Scored]:
        """Figures of ranked columns in every split, oriented on train."""
        train = view.train
        figures: dict[str, np.ndarray] = {}

        def values(split: str, fit: RankFit) -> list[np.ndarray | None]:
            """Float values where needed: a finite fitted cut and missing values here."""
            f = frames[split]
            need = (~np.isnan(fit.cut) & ~np.isposinf(fit.cut)).any(0)  # a cut among values
            return [float_values(f, c) if need[j] and missing_count(f, c) else None
                    for j, c in enumerate(cols)]

        if view.kind == LabelKind.NUMERIC:
            aggs = stats or {s: spearman_aggs(f, [value_expr(c, f[c].dtype) for c in cols])
                             for s, f in frames.items()}
            figures[train], fit = fit_spearman(aggs[train])
            for s in list(frames)[1:]:
                figures[s] = eval_spearman(aggs[s], values(s, fit), fit)
        else:
            figures[train], fit = fit_ranked(stats[train], view.targets)
            for s in list(frames)[1:]:
                figures[s] = eval_ranked(stats[s], view.targets, values(s, fit),
                                         frames[s][YCOL].to_numpy(), view.n_classes, fit)
        return _scored(cols, kinds, fit, figures)

    def _counted(self, view: LabelView, ranks: ClassRanks, kinds: list[str]) -> list[Scored]:
        """Figures of ranked columns from the engine's rank statistics, oriented on train."""
        train = view.train
        figures: dict[str, np.ndarray] = {}
        figures[train], fit = fit_ranked(ranks.stats[train], view.targets)
        for s in list(view.frames)[1:]:
            figures[s] = eval_counted(ranks.stats[s], view.targets, ranks.edges, ranks.below[s],
                                      fit)
        return _scored(ranks.columns, kinds, fit, figures)

    def _encoded(self, view: LabelView, cols: list[str], seed: int, binned: bool = False,
                 kinds: list[str] | None = None,
                 held_out: dict[str, dict[str, float]] | None = None,
                 data: AuditData | None = None) -> list[Scored]:
        """Target-rate encode columns (categorical levels, or train-quantile bins of numeric
        columns when ``binned``); their AUCs follow from per-level class counts. A column's
        later splits in ``held_out`` (measured by the engine) take those figures. ``data``:
        levels coded once per measuring (:func:`~auditor.stats.label.shared_codes`)."""
        out = []
        for j, c in enumerate(cols):  # a loop over columns, vectorised over rows
            codes = shared_codes(data, view, c) if data is not None and not binned else None
            enc = target_encode(view, c, smoothing=self.smoothing, folds=self.folds, seed=seed,
                                binned=binned, codes=codes)
            sc = Scored(c, kinds[j] if kinds else str(Kind.CATEGORICAL), encoded=True,
                        binned=binned)
            given = (held_out or {}).get(c, {})
            for s in view.frames:
                if s in given:
                    sc.per_class[s] = np.array([given[s]])
                else:
                    (sc.per_class[s],) = encoded_figures(view, s, [enc[s]])
                sc.values[s] = _macro(sc.per_class[s])
            out.append(sc)
        return out

    def _encode(self, view: LabelView, col: str, seed: int, binned: bool = False
                ) -> dict[str, Encoded]:
        return target_encode(view, col, smoothing=self.smoothing, folds=self.folds, seed=seed,
                             binned=binned)

    def _id_frames(self, view: LabelView, col: str, seed: int) -> dict[str, pl.DataFrame]:
        """Each split's id column and label; a string id is ranked on a seeded sample (string
        ranks are slow, and an id only ever warns)."""
        out = {}
        for s, f in view.frames.items():
            frame = f.select(col, YCOL)
            if f.height > self.id_sample_rows and frame.schema[col] == pl.String:
                frame = frame.sample(n=self.id_sample_rows, seed=seed)
            out[s] = frame
        return out

    # -- findings ----------------------------------------------------------------------------
    def _finding(self, data: AuditData, view: LabelView, sc: Scored,
                 figures: dict[str, float]) -> Finding | None:
        g = sc.graded()
        if g is None:
            return None
        value, split = g
        # a numeric label that trends (prices under inflation, a growing count) reaches
        # |rho| 0.95 with the date honestly: only a near-exact function of the date fails
        time_fail = (self.deterministic_above if sc.is_time and view.kind == LabelKind.NUMERIC
                     else self.fail_above)
        if sc.is_id:
            sev = grade(value, warn=self.id_warn_above)
            threshold = self.id_warn_above
        else:
            sev = grade(value, warn=self.warn_above,
                        fail=time_fail if sc.is_time else self.fail_above)
        if sev == Severity.INFO:
            return None
        frames = (self._id_frames(view, sc.column, data.seed) if sc.is_id
                  else {s: f.select(sc.column, YCOL) for s, f in view.frames.items()})
        if sc.encoded:
            scores = {s: e.rows() for s, e in
                      self._encode(view, sc.column, data.seed, sc.binned).items()}
        else:
            assert sc.fit is not None  # a ranked column is oriented on train
            fit = sc.fit
            scores = {s: oriented_scores(f, sc.column, fit, sc.index) for s, f in frames.items()}
        frame = frames[split]
        n = frame.height
        missing = missing_count(frame, sc.column)
        verdict = None
        ci = self._ci(view, frame, scores[split], sc, data.seed)
        if sc.is_time:
            threshold = time_fail if sev == Severity.FAIL else self.warn_above
        elif not sc.is_id:
            verdict = self._judge(view, sc, value, frames, scores, figures, ci[0])
            sev = verdict.severity
            threshold = {"strong_not_singular": self.warn_above,
                         "near_deterministic": self.deterministic_above}.get(
                             verdict.rule, self.fail_above if sev == Severity.FAIL
                             else self.warn_above)
        metric = {LabelKind.BINARY: "single_feature_auc",
                  LabelKind.MULTICLASS: "single_feature_macro_auc"}.get(view.kind,
                                                                        "abs_spearman")
        where = (f"in {split} (in-train{', cross-fitted' if sc.encoded else ''})"
                 if split == view.train else f"on {split} (fitted on {view.train})")
        if view.kind == LabelKind.BINARY:
            n1 = int((frame[YCOL] == 1).sum())
            what = (f"separates {view.column}={view.classes[1]!r} from {view.classes[0]!r} "
                    f"with AUC {value:.3f} {where}: {fmt_count(n)} rows, "
                    f"{fmt_rows(n1, n, 'positive')}")
        elif view.kind == LabelKind.MULTICLASS:
            what = (f"separates the {view.n_classes} classes of {view.column} with macro "
                    f"one-vs-rest AUC {value:.3f} {where}: {fmt_count(n)} labelled rows")
        else:
            what = (f"ranks {view.column} with |Spearman rho| {value:.3f} {where}: "
                    f"{fmt_count(n)} labelled rows")
        if missing:
            what += f"; {sc.column} is missing in {fmt_rows(missing, n, f'{split} rows')}"
        if sc.is_id:
            message = (f"identifier {sc.column} carries label information: alone it {what}; "
                       "exports sorted by outcome do this")
        elif sc.is_time:
            message = (f"time column {sc.column} alone {what}: "
                       + ("the label is nearly a function of the date (a label derived from "
                          "the date, or a period that holds one outcome); a model learns the "
                          "calendar, not the rows" if sev == Severity.FAIL else
                          "a strong trend of the label over time"
                          + ("; the splits are cut by time, so later splits test the trend"
                             if _time_ordered(frames, sc.column) else
                             "; a random split hides it: prefer a split by time")))
        else:
            assert verdict is not None  # every feature is judged
            message = f"{sc.column} alone {what}; {verdict.reason}; graded {sev.value}"
        evidence: dict[str, Any] = {"splits": self._split_rows(view, frames, sc, split, ci)}
        evidence["grading"] = (verdict.evidence() if verdict else
                               {"rule": "identifier" if sc.is_id else "time_column",
                                "reason": "identifiers warn above id_warn_above and never fail"
                                if sc.is_id else "the time column is graded by warn_above "
                                + ("and deterministic_above alone (a numeric label's trend "
                                   "is not a leak unless the date nearly fixes the label)"
                                   if view.kind == LabelKind.NUMERIC else
                                   "and fail_above alone")})
        if view.kind != LabelKind.NUMERIC:
            evidence["chart"] = self._roc_chart(view, frames, scores, sc, split)
            evidence.update(class_evidence(
                frame[sc.column], frame[YCOL].to_numpy(), view.classes,
                binary=view.kind == LabelKind.BINARY, split=split,
                cls=view.targets[self._best_class(view, sc, split)]))
        evidence["orientation"] = describe_orientation(view, sc)
        return Finding(severity=sev, metric=metric, value=r4(value), threshold=threshold,
                       count=n, subject=sc.column,
                       splits=[split] if split == view.train else [view.train, split],
                       message=message, evidence=evidence)

    def _judge(self, view: LabelView, sc: Scored, value: float,
               frames: dict[str, pl.DataFrame], scores: dict[str, np.ndarray],
               figures: dict[str, float], ci_low: float | None = None) -> Verdict:
        """The :mod:`auditor.judging.leak_rules` verdict of a flagged feature: its train figure,
        the other features' figures and, for a binary label, the purest cut of its train
        scores and the class balance of its missing values in train."""
        train = view.train
        purity = missing = None
        if view.kind == LabelKind.BINARY:
            y = frames[train][YCOL].to_numpy()
            purity = pure_region(scores[train][:, 0], y, self.pure_tolerance)
            col = frames[train][sc.column]
            miss = col.is_null().to_numpy()
            if col.dtype.is_float():
                miss = miss | col.is_nan().fill_null(False).to_numpy()
            missing = missing_purity(miss, y)
        name = "|Spearman rho|" if view.kind == LabelKind.NUMERIC else "AUC"
        rules = Rules(self.warn_above, self.fail_above, self.deterministic_above,
                      self.singular_gap, self.pure_share, self.pure_tolerance, self.copy_above,
                      self.family_above, self.min_pure_rows)
        close = [c for c, v in figures.items() if v >= value - self.singular_gap]
        copies, relations = peer_context(view.frames[train], sc.column, close, YCOL,
                                         view.kind == LabelKind.NUMERIC, self.copy_above)
        verdict = judge(rules, value=value, train_value=sc.values.get(train, float("nan")),
                        others=[(c, v) for c, v in figures.items() if c != sc.column],
                        name=sc.column, what=name, purity=purity, missing=missing,
                        classes=view.classes, copies=copies, ci_low=ci_low,
                        relations=relations)
        col = view.frames[train][sc.column]
        if ((col.dtype.is_integer() or col.dtype == pl.String) and col.len() >= 20
                and col.null_count() == 0 and col.n_unique() == col.len()):
            verdict = replace(verdict, reason=verdict.reason + (
                f"; {sc.column} is unique per {train} row, like an identifier: if it is one, "
                "declare it under columns.ids (an id that predicts the label means rows were "
                "exported in outcome order)"), details={**verdict.details, "id_like": True})
        return verdict

    def _ci(self, view: LabelView, frame: pl.DataFrame, scores: np.ndarray, sc: Scored,
            data_seed: int) -> tuple[float, float]:
        """Percentile bootstrap CI on at most ``ci_rows`` rows sampled without replacement,
        seeded by the run's seed and the column name."""
        seed = int(np.random.default_rng([data_seed, zlib.crc32(sc.column.encode())])
                   .integers(2**31))
        rng = np.random.default_rng(seed)
        idx = (np.sort(rng.choice(frame.height, self.ci_rows, replace=False))
               if frame.height > self.ci_rows else np.arange(frame.height))
        y, s = frame[YCOL].to_numpy()[idx], scores[idx]
        if view.kind == LabelKind.NUMERIC:
            return bootstrap_spearman_ci(s[:, 0], y, n_boot=self.n_boot, seed=seed)
        if view.kind == LabelKind.BINARY:
            return bootstrap_auc_ci(s[:, 0], y, 2, n_boot=self.n_boot, seed=seed)
        return bootstrap_auc_ci(s, y, view.n_classes, n_boot=self.n_boot, seed=seed)

    def _split_rows(self, view: LabelView, frames: dict[str, pl.DataFrame], sc: Scored,
                    graded: str, ci: tuple[float, float]) -> list[dict[str, Any]]:
        rows = []
        for s, f in frames.items():
            row: dict[str, Any] = {
                "split": s,
                "evaluated": ("in-train" + (", cross-fitted" if sc.encoded else "")
                              if s == view.train else f"fitted on {view.train}"),
                "value": r4(sc.values.get(s, float("nan"))),
                "ci_low": r4(ci[0]) if s == graded else None,
                "ci_high": r4(ci[1]) if s == graded else None,
                "rows": f.height, "missing": missing_count(f, sc.column)}
            if view.kind == LabelKind.BINARY:
                row["positives"] = int((f[YCOL] == 1).sum())
            rows.append(row)
        return rows

    @staticmethod
    def _best_class(view: LabelView, sc: Scored, graded: str) -> int:
        """The index into ``view.targets`` of the class the column separates best in the
        graded split (a binary label: its positive class)."""
        if view.kind != LabelKind.MULTICLASS:
            return 0
        pc = sc.per_class[graded]
        return int(np.argmax(np.where(np.isfinite(pc), pc, -np.inf)))

    def _roc_chart(self, view: LabelView, frames: dict[str, pl.DataFrame],
                   scores: dict[str, np.ndarray], sc: Scored, graded: str) -> dict[str, Any]:
        """One ROC curve per split (<= 200 points each); for a multiclass label, of the class
        the column separates best in the graded split, against the rest."""
        k = self._best_class(view, sc, graded)
        cls = view.targets[k]
        curves = {}
        for s, f in frames.items():
            fpr, tpr = roc_points(scores[s][:, k], f[YCOL].to_numpy() == cls, 200)
            if fpr:
                curves[s + (" (in-train)" if s == view.train else "")] = {
                    "fpr": fpr, "tpr": tpr, "auc": r4(float(sc.per_class[s][k]))}
        title = f"ROC of {sc.column} alone"
        if view.kind == LabelKind.MULTICLASS:
            title += f" (class {view.classes[cls]!r} vs rest)"
        return {"type": "roc", "title": title, "curves": curves}

    def _overview(self, view: LabelView, scored: list[Scored]) -> Finding:
        graded = sorted(((sc, g) for sc in scored for g in [sc.graded()] if g is not None),
                        key=lambda t: -t[1][0])
        flagged = sum(g[0] > self.warn_above for _, g in graded)
        metric = {LabelKind.BINARY: "max_single_feature_auc",
                  LabelKind.MULTICLASS: "max_single_feature_macro_auc"}.get(
                      view.kind, "max_abs_spearman")
        name = "|Spearman rho|" if view.kind == LabelKind.NUMERIC else "AUC"
        top = graded[: self.top]
        table = [{"feature": sc.column, "kind": sc.kind,
                  **{s + (" (in-train)" if s == view.train else ""): r4(v)
                     for s, v in sc.values.items()}} for sc, _ in top]
        strongest = (f"; strongest: {top[0][0].column} ({top[0][1][0]:.3f} on {top[0][1][1]})"
                     if top else "")
        chart = {"type": "bar", "title": f"Strongest single features for {view.column}",
                 "labels": [sc.column for sc, _ in top], "values": [r4(g[0]) for _, g in top],
                 "lines": [self.warn_above, self.fail_above], "horizontal": True,
                 "xlabel": f"{name}, max over splits (dashed: warn {self.warn_above}, "
                           f"fail {self.fail_above})",
                 "height": max(2.4, 0.28 * len(top) + 1.0)}
        return Finding(
            severity=Severity.INFO, metric=metric, value=r4(top[0][1][0]) if top else None,
            threshold=self.warn_above, count=flagged, subject="", splits=list(view.frames),
            message=f"{fmt_rows(flagged, len(scored), 'features')} alone reach {name} > "
                    f"{self.warn_above}{strongest}",
            evidence={"chart": chart, "top_features": table})


def _int_at_least(low: int) -> Any:
    return lambda v: isinstance(v, int) and v >= low


def _int_within(low: int, high: int) -> Any:
    return lambda v: isinstance(v, int) and low <= v <= high


def _scored(cols: list[str], kinds: list[str], fit: RankFit, figures: dict[str, np.ndarray]
            ) -> list[Scored]:
    out = []
    for j, c in enumerate(cols):
        sc = Scored(c, kinds[j], encoded=False, fit=fit, index=j)
        for s, a in figures.items():
            sc.per_class[s] = a[:, j]
            sc.values[s] = _macro(a[:, j])
        out.append(sc)
    return out


def describe_orientation(view: LabelView, sc: Scored) -> str:
    """How the column was turned into a score on train, in words."""
    if sc.binned:
        return (f"cut into at most {BINS} train-quantile bins (missing values a bin of their "
                "own), each bin target-rate encoded on train; higher rate = more likely class")
    if sc.encoded:
        return ("target-rate encoding fitted on train (missing values a level of their own, "
                "unseen levels at the train rate); higher rate = more positive")
    assert sc.fit is not None
    parts = []
    for i, k in enumerate(view.targets[:5]):
        who = "the label" if view.kind == LabelKind.NUMERIC else f"class {view.classes[k]!r}"
        desc, cut = bool(sc.fit.descending[i, sc.index]), float(sc.fit.cut[i, sc.index])
        place = ("below every value" if math.isnan(cut) else "above every value"
                 if math.isinf(cut) and cut > 0 else f"just above {cut:.6g}")
        parts.append(f"{who}: {'lower' if desc else 'higher'} values score higher; missing "
                     f"values rank {place} in the value order")
    return "; ".join(parts) + (" …" if len(view.targets) > 5 else "")



def _time_ordered(frames: dict[str, pl.DataFrame], col: str) -> bool:
    """Every split starts at or after the end of the one before (a split by time)."""
    bounds = [f.select(pl.col(col).min().alias("lo"), pl.col(col).max().alias("hi")).row(0)
              for f in frames.values()]
    return all(a[1] is not None and b[0] is not None and b[0] >= a[1]
               for a, b in zip(bounds, bounds[1:]))


def _macro(per_class: np.ndarray) -> float:
    finite = per_class[np.isfinite(per_class)]
    return float(finite.mean()) if finite.size else float("nan")
