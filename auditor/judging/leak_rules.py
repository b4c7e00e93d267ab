"""How a strong feature-label relation is graded: a leak, or a legitimately strong signal?

Shared by ``leakage.single_feature_auc`` and ``leakage.feature_label_correlation``. A column
whose figure (AUC, |rho|, association) is above the check's ``warn_above`` is judged with the
context the audit already has, in this order (the first rule that applies decides):

1. ``post_outcome_missingness`` (FAIL, binary label): the column is missing in at least
   ``pure_share`` of one class's train rows and in at most ``pure_tolerance`` of the other
   class's: a field filled in only for one outcome (a cancellation date that exists only for
   churners) is written after the outcome.
2. ``near_deterministic`` (FAIL): in train the figure is >= ``deterministic_above``, or (binary
   label) one cut of the column's train score puts at least ``pure_share`` of one class's rows
   beyond it with at most ``pure_tolerance`` of the other class's rows (an ROC point with
   TPR >= 0.9 at FPR <= 0.01, from either end: a value or range present almost only for one
   class and covering nearly all of it). Measured features of the world overlap between
   classes; a column that does not is a recoding of the label. The clean-cut test applies
   only when both classes hold at least ``min_pure_rows`` (30) train rows: on few rows a
   strong honest feature cuts cleanly by chance (a binormal feature of AUC 0.95 gives such a
   cut in 39% of samples of 14 + 10 rows, 9% of 30 + 30, 0.9% of 50 + 50; mtcars' weight vs
   transmission on 24 rows). The ``deterministic_above`` test has no such floor.
3. ``singular``: the column is stronger than every other feature by more than
   ``singular_gap``: one column far above a background of weak ones is the signature of a
   joined outcome field (arrival over an hour late predicted by the departure delay). It
   FAILS when the figure is also above ``fail_above`` (and the lower end of its 95% interval,
   where the check has one: the AUC's bootstrap, a numeric label's correlation by Fisher's
   z), and WARNS below: a single dominant honest predictor looks the
   same (Boston's lstat |rho| 0.87, orange-juice brand loyalty AUC 0.88, ToothGrowth's length
   0.86), and a verdict a team gates on must not fail those.
4. ``independent_peers``: other features come within ``singular_gap``, but every one of them
   is related to the column only through the label: their partial rank correlation given the
   label (:func:`label_free_relations`) is below ``family_above`` (0.1). Graded like rule 3
   (fails above ``fail_above``, with the CI's lower end where known; warns below). Why: real
   measurements are strong together because they measure the same thing, so they co-vary
   even among rows of one class (within benign tumours a larger radius still means a larger
   perimeter: breast cancer's strong family has within-class rho 0.84-0.96). Fields derived
   from the outcome (a cancellation date, a cancellation reason, a refund) each recode the
   label with their own noise: once the label is known they say nothing about each other
   (rho ~0; ordinal scores with a floor, MASS biopsy's cytology grades, relate at 0.13-0.17
   within a class, hence 0.1). Without this rule a cluster of two or three post-outcome
   fields would make each other look like a "family" and all only warn; with it, a leak at AUC
   0.96 next to honest features at 0.85-0.9 (unrelated to it) is graded on its own too. What it
   cannot tell:
   two leaks written by one process that co-vary within a class (a refund proportional to
   the days since cancelling) still look like a family, and warn.
5. ``strong_not_singular`` (WARN, also above ``fail_above``): at least one other feature within
   ``singular_gap`` is related to the column beyond the label (partial rho >= ``family_above``,
   or not measurable: a categorical peer of a label with more than 10 classes): a family of
   strong, correlated measurements (breast-cancer radius, perimeter and area) is what a real signal
   looks like, not a leak. Reported, not failed.
   A peer that is a copy of the column (|Spearman| >= ``copy_above``, 0.999, on train rows
   with both values: the same field twice, e.g. a date and the days since it, a monotone map
   of one another) is one signal, not support: it does not count for rules 3, 4 and 5.
   Separate measurements of one quantity are not copies: each carries its own measurement
   error (ggplot2 diamonds' weight and its three dimensions relate at |rho| 0.993-0.996),
   and together they are the family of rule 5 (with copy_above 0.98 they were "copies",
   carat stood "singular" and an honest split of diamonds failed).
6. ``threshold`` (plain ``warn_above``/``fail_above``): no other feature to compare with.

Every graded finding carries ``evidence["grading"]`` = {rule, reason, ...} so a reader sees which
rule decided and why.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from auditor.report.results import Severity
from auditor.stats.numerics import fmt_share, grade


@dataclass(frozen=True)
class Purity:
    """The largest share of one class isolated by one cut of a score: ``share`` of class
    ``cls`` lies beyond the cut (on ``side``) together with at most a ``tolerance`` share of
    the other class's rows (a point of the ROC curve with TPR >= share at FPR <= tolerance,
    read from either end and for either class: independent of the class balance)."""

    share: float
    cls: int
    side: str  # "high" | "low"
    rows: int | None = None  # train rows of the smaller class (None: not known)


@dataclass(frozen=True)
class Verdict:
    severity: Severity
    rule: str
    reason: str
    details: dict[str, Any] = field(default_factory=dict)

    def evidence(self) -> dict[str, Any]:
        return {"rule": self.rule, "reason": self.reason, **self.details}


def pure_region(scores: np.ndarray, y: np.ndarray, tolerance: float) -> Purity:
    """Largest share of one class (binary ``y`` in {0, 1}) beyond a single cut of ``scores``
    (ties kept together; NaN scores one tied block below all values) where the region holds
    at most ``tolerance`` of the other class's rows. Vectorised: distinct values, bincounts,
    cumulative sums from both ends."""
    s = np.where(np.isnan(scores), -np.inf, scores)
    if s.size == 0:
        return Purity(0.0, 1, "high", 0)
    _, inv = np.unique(s, return_inverse=True)
    pos = np.bincount(inv, weights=(y == 1).astype(float))
    neg = np.bincount(inv).astype(float) - pos
    rows = int(min(pos.sum(), neg.sum()))
    best = Purity(0.0, 1, "high", rows)
    for cls, a, b in ((1, pos, neg), (0, neg, pos)):
        n_a, n_b = a.sum(), b.sum()
        if n_a == 0 or n_b == 0:
            continue
        for side, order in (("high", slice(None, None, -1)), ("low", slice(None))):
            ca, cb = np.cumsum(a[order]) / n_a, np.cumsum(b[order]) / n_b
            ok = cb <= tolerance
            if ok.any() and ca[ok].max() > best.share:
                best = Purity(float(ca[ok].max()), cls, side, rows)
    return best


COPY_ROWS = 50_000  # rows (a seeded sample of larger splits) behind the copy test


def rank_copies(frame: pl.DataFrame, col: str, peers: list[str], above: float,
                max_rows: int = COPY_ROWS) -> dict[str, float]:
    """Peers whose |Spearman rho| with ``col`` on the rows where both have a value is >=
    ``above`` (numeric, boolean and datetime columns only; others are never copies), on at
    most ``max_rows`` rows (a seeded sample: a copy has rho ~1 on any sample)."""
    from auditor.stats.label import value_expr

    schema = frame.schema  # built anew on every access: once (10,000 columns: 1 ms each)

    def orderable(c: str) -> bool:
        dt = schema[c]
        return dt.is_numeric() or dt == pl.Boolean or dt.is_temporal()

    peers = [p for p in peers if p != col and orderable(p)]
    if not peers or not orderable(col):
        return {}
    if frame.height > max_rows:
        frame = frame.select(col, *peers).sample(n=max_rows, seed=0)

    def ranked(c: str) -> pl.Expr:
        return value_expr(c, schema[c]).cast(pl.Float64)

    # one select; polars' corr uses the rows where both values are present
    rhos = frame.select(pl.corr(ranked(col), ranked(p), method="spearman").alias(str(i))
                        for i, p in enumerate(peers)).row(0)
    return {p: round(abs(float(r)), 4) for p, r in zip(peers, rhos)
            if r is not None and np.isfinite(r) and abs(r) >= above}


CODED_CLASSES = 10  # a categorical column of a multiclass label: one coding per class, up to


def label_free_relations(frame: pl.DataFrame, col: str, peers: list[str], label: str,
                         numeric_label: bool, max_rows: int = COPY_ROWS) -> dict[str, float]:
    """|Partial Spearman correlation| of ``col`` with each peer given the label (column
    ``label`` of ``frame``: class codes, or the value of a numeric label), on at most
    ``max_rows`` rows (a seeded sample).

    Each column is turned into ranks (average ranks of its values; a categorical column by
    the mean label code of its level, missing a level: its positive rate for a binary label,
    its label mean for a numeric one; for a multiclass label of at most ``CODED_CLASSES``
    classes, once per class by the level's rate of that class, the relation being the largest
    over the codings; beyond that it is left out, i.e. not measurable). The ranks are
    residualised on the label: minus their class mean (class label: the pooled within-class
    correlation), or minus their least-squares line on the label's ranks (numeric label: the
    partial Spearman correlation (r_ab - r_ay r_by) / sqrt((1 - r_ay^2)(1 - r_by^2)) on
    complete rows). A missing value gets residual 0, so missingness adds nothing and shrinks
    the figure by the share missing. relation = sum(e_a e_b) / sqrt(sum(e_a^2) sum(e_b^2))
    over the rows. Two columns independent given the label are ~0 under every coding."""
    from auditor.stats.label import value_expr

    cols = [c for c in dict.fromkeys([col, *peers])]
    if frame.height > max_rows:
        frame = frame.select(*cols, label).sample(n=max_rows, seed=0)
    y = frame[label].to_numpy()
    classes = [] if numeric_label else [int(k) for k in np.unique(y)]
    exprs: list[pl.Expr] = []
    coded: dict[str, list[int]] = {}  # column -> its codings (columns of the rank matrix)
    schema = frame.schema
    for c in cols:
        dt = schema[c]
        if dt.is_numeric() or dt == pl.Boolean or dt.is_temporal():
            codings = [value_expr(c, dt).cast(pl.Float64)]
        elif numeric_label or len(classes) <= 2:
            codings = [pl.col(label).cast(pl.Float64).mean().over(c)]
        elif len(classes) <= CODED_CLASSES:
            codings = [(pl.col(label) == k).cast(pl.Float64).mean().over(c) for k in classes]
        else:
            continue
        coded[c] = list(range(len(exprs), len(exprs) + len(codings)))
        exprs += [e.rank("average").cast(pl.Float64).alias(str(len(exprs) + i))
                  for i, e in enumerate(codings)]
    if col not in coded:
        return {}
    r = frame.select(exprs).to_numpy().astype(float)  # nulls -> NaN
    ok = ~np.isnan(r)
    if numeric_label:
        ry = pl.Series(y).rank("average").to_numpy().astype(float)
        for j in range(r.shape[1]):  # a loop over the few columns, vectorised over rows
            m = ok[:, j]
            if m.sum() < 3:
                r[:, j] = 0.0
                continue
            a, b = r[m, j] - r[m, j].mean(), ry[m] - ry[m].mean()
            var = float(b @ b)
            r[m, j] = a - (float(a @ b) / var if var > 0 else 0.0) * b
    else:
        codes = y.astype(np.int64)
        k = int(codes.max()) + 1 if codes.size else 1
        for j in range(r.shape[1]):
            m = ok[:, j]
            sums = np.bincount(codes[m], weights=r[m, j], minlength=k)
            cnt = np.bincount(codes[m], minlength=k)
            r[m, j] -= np.divide(sums, cnt, out=np.zeros(k), where=cnt > 0)[codes[m]]
    r[~ok] = 0.0
    norms = np.sqrt((r * r).sum(0))
    den = np.outer(norms, norms)
    rel = np.abs(np.divide(r.T @ r, den, out=np.zeros_like(den), where=den > 0))
    mine = coded.pop(col)
    return {c: round(float(rel[np.ix_(mine, js)].max()), 4) for c, js in coded.items()}


def missing_purity(missing: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    """For a binary label: (coverage, other, cls) of the missing values: the share of class
    ``cls`` rows that are missing (the class where that share is larger) and the share of the
    other class's rows that are missing."""
    m = missing.astype(bool)
    n1 = int((y == 1).sum())
    n0 = y.size - n1
    if not m.any() or n1 == 0 or n0 == 0:
        return 0.0, 0.0, 1
    m1 = int((y[m] == 1).sum())
    r1, r0 = m1 / n1, (int(m.sum()) - m1) / n0
    return (r1, r0, 1) if r1 >= r0 else (r0, r1, 0)


def peer_context(frame: pl.DataFrame, col: str, close: list[str], label: str,
                 numeric_label: bool, copy_above: float
                 ) -> tuple[dict[str, float], dict[str, float] | None]:
    """What :func:`judge` weighs ``col`` against among the peers within the gap (``close``):
    their copies of it (:func:`rank_copies`) and the other peers' label-free relations with
    it (:func:`label_free_relations`; None without peers), on ``frame`` (holding ``label``)
    narrowed to the compared columns first (the rules read the frame's schema once per peer:
    10,000 columns, 2,350 schemas of every column, took 69 s)."""
    near = frame.select(list(dict.fromkeys([col, *close, label])))
    copies = rank_copies(near, col, close, copy_above)
    peers = [c for c in close if c != col and c not in copies]
    relations = (label_free_relations(near, col, peers, label, numeric_label)
                 if peers else None)
    return copies, relations


@dataclass(frozen=True)
class Rules:
    """The thresholds of the judgement (fields of the checks that use it)."""

    warn_above: float
    fail_above: float
    deterministic_above: float
    singular_gap: float
    pure_share: float
    pure_tolerance: float
    copy_above: float = 0.999
    family_above: float = 0.1
    min_pure_rows: int = 30


def judge(rules: Rules, *, value: float, train_value: float, others: list[tuple[str, float]],
          name: str, what: str, purity: Purity | None = None,
          missing: tuple[float, float, int] | None = None,
          classes: list[Any] | None = None, copies: dict[str, float] | None = None,
          ci_low: float | None = None, relations: dict[str, float] | None = None) -> Verdict:
    """Grade one column's figure ``value`` (already above ``warn_above``) in its context.

    ``others``: (column, figure) of every other feature; ``what``: the figure's name ("AUC");
    ``purity``/``missing``: binary-label evidence from :func:`pure_region` and
    :func:`missing_purity` (None when not measured); ``classes``: the label's classes by code;
    ``copies``: peers that are copies of the column (:func:`rank_copies`), not counted;
    ``ci_low``: the lower end of the figure's 95% confidence interval, when known;
    ``relations``: |partial rho| given the label of the column with peers within the gap
    (:func:`label_free_relations`); a peer missing from it counts as related (support).
    """
    def cls_name(k: int) -> str:
        return repr(classes[k]) if classes and k < len(classes) else str(k)

    copies = copies or {}
    others = sorted((t for t in others if t[0] not in copies), key=lambda t: -t[1])
    runner = others[0] if others else None
    close = [c for c, v in others if v >= value - rules.singular_gap]
    details: dict[str, Any] = {
        "value": round(value, 4), "train_value": round(train_value, 4),
        "runner_up": ({"feature": runner[0], "value": round(runner[1], 4)} if runner else None),
        "features_within_gap": len(close), "singular_gap": rules.singular_gap,
        "deterministic_above": rules.deterministic_above, "pure_share": rules.pure_share}
    if copies:
        details["copies_not_counted"] = copies
    if purity is not None:
        details["pure_region"] = {"share": round(purity.share, 4),
                                  "class": cls_name(purity.cls), "side": purity.side,
                                  "smaller_class_rows": purity.rows,
                                  "min_pure_rows": rules.min_pure_rows}
    few = (purity is not None and purity.rows is not None
           and purity.rows < rules.min_pure_rows)
    tol = rules.pure_tolerance
    if missing is not None:
        coverage, other, cls = missing
        details["missing"] = {"class": cls_name(cls), "share_of_class": round(coverage, 4),
                              "share_of_other_class": round(other, 4)}
        if other <= tol and coverage >= rules.pure_share:
            details["decision"] = (f"missing in {fmt_share(coverage)} of class {cls_name(cls)} "
                                   f"rows (>= {fmt_share(rules.pure_share)}) and "
                                   f"{fmt_share(other)} of the others (<= {fmt_share(tol)})")
            return Verdict(Severity.FAIL, "post_outcome_missingness",
                           f"post-outcome missingness: {name} is missing in "
                           f"{fmt_share(coverage)} of class {cls_name(cls)} rows and in "
                           f"{fmt_share(other)} of the others: a field filled in only for one "
                           "outcome is written after it", details)
    if train_value >= rules.deterministic_above:
        details["decision"] = (f"{what} {train_value:.3f} in train >= "
                               f"{rules.deterministic_above}")
        return Verdict(Severity.FAIL, "near_deterministic",
                       f"near-deterministic: {what} {train_value:.3f} in train (>= "
                       f"{rules.deterministic_above})", details)
    if purity is not None and purity.share >= rules.pure_share and not few:
        details["decision"] = (f"one cut isolates {fmt_share(purity.share)} of class "
                               f"{cls_name(purity.cls)} rows (>= {fmt_share(rules.pure_share)})")
        return Verdict(Severity.FAIL, "near_deterministic",
                       f"near-deterministic: one cut isolates {fmt_share(purity.share)} of "
                       f"class {cls_name(purity.cls)} rows with at most {fmt_share(tol)} of the "
                       f"other class's rows (>= {fmt_share(rules.pure_share)} fails)", details)
    copied = ("; copies of it not counted: " + ", ".join(
        f"{c} (|rho| {r:.3f})" for c, r in list(copies.items())[:5]) if copies else "")
    no_cut = (f"; no near-deterministic cut (at most {fmt_share(purity.share)} of one class "
              f"beyond a cut with <= {fmt_share(tol)} of the other)" if purity is not None
              else "")
    if few and purity is not None and purity.share >= rules.pure_share:
        no_cut = (f"; a cut isolates {fmt_share(purity.share)} of class {cls_name(purity.cls)} "
                  f"rows with <= {fmt_share(tol)} of the other's, but the smaller class has "
                  f"{purity.rows} train rows (< min_pure_rows {rules.min_pure_rows}): too few "
                  "for a clean cut to be evidence of a recoding")
    if runner is None:
        sev = grade(value, warn=rules.warn_above, fail=rules.fail_above)
        details["decision"] = (f"{what} {value:.3f} against warn {rules.warn_above} / fail "
                               f"{rules.fail_above}")
        return Verdict(sev, "threshold", f"no other feature to compare with; {what} "
                       f"{value:.3f} against warn {rules.warn_above} / fail "
                       f"{rules.fail_above}{no_cut}", details)
    related = close
    if relations is not None and close:
        related = [c for c in close if relations.get(c, 1.0) >= rules.family_above]
        details["family_above"] = rules.family_above
        details["related_within_gap"] = len(related)
        details["relations"] = {c: relations[c] for c in close[:10] if c in relations}
    if close and not related:
        top = max(relations[c] for c in close) if relations else 0.0
        one = len(close) == 1
        head = (f"strong, and {'the only feature' if one else f'the {len(close)} features'} "
                f"within {rules.singular_gap} of it ({', '.join(close[:3])}"
                f"{', ...' if len(close) > 3 else ''}; strongest {runner[0]} {runner[1]:.3f}) "
                f"relate{'s' if one else ''} to it only through the label (|partial rho| given "
                "the label at most "
                f"{top:.2f} < family_above {rules.family_above}): separate recodings of the "
                "outcome, not a family of measurements")
        return _standout(rules, "independent_peers", f"{head}; {what} {value:.3f}", value,
                         ci_low, copied + no_cut, "", details)
    if not close:
        head = (f"singular: {what} {value:.3f}, {value - runner[1]:.3f} above the strongest "
                f"other feature ({runner[0]}, {runner[1]:.3f}; gap >= {rules.singular_gap})")
        return _standout(rules, "singular", head, value, ci_low, copied + no_cut,
                         ": a single dominant honest predictor looks like this too", details,
                         joins=(" and", ", but"))
    details["decision"] = (f"{len(close)} other feature{'s' if len(close) != 1 else ''} "
                           f"within {rules.singular_gap} of {what} {value:.3f} (warns at most)")
    family = ("" if related is close else
              f", {len(related)} of them related to it beyond the label (|partial rho| >= "
              f"{rules.family_above})")
    return Verdict(Severity.WARN, "strong_not_singular",
                   f"strong but not singular: {len(close)} other feature"
                   f"{'s' if len(close) != 1 else ''} reach {what} >= "
                   f"{value - rules.singular_gap:.3f} (within {rules.singular_gap}; strongest "
                   f"{runner[0]} {runner[1]:.3f}){family}{copied}{no_cut}", details)


def _standout(rules: Any, rule: str, head: str, value: float, ci_low: float | None,
              tail: str, warn_note: str, details: dict[str, Any],
              joins: tuple[str, str] = ("", "")) -> Verdict:
    """A column that no family of measurements backs (``singular``, ``independent_peers``):
    FAIL when ``value`` > ``fail_above`` and, with an interval (``ci_low``), its low end too; else
    WARN. The reason reads ``head`` + the comparison with fail_above + ``tail``."""
    details["ci_low"] = None if ci_low is None else round(ci_low, 4)
    sure = value > rules.fail_above and (ci_low is None or ci_low > rules.fail_above)
    details["decision"] = (f"{value:.3f} {'>' if value > rules.fail_above else '<='} fail_above "
                           f"{rules.fail_above}" + (f", CI low {ci_low:.3f}" if ci_low is not None
                                                    else ""))
    if sure:
        return Verdict(Severity.FAIL, rule,
                       head + f"{joins[0]} above fail_above {rules.fail_above}"
                       + (f" with 95% confidence (CI low {ci_low:.3f})"
                          if ci_low is not None else "") + tail, details)
    return Verdict(Severity.WARN, rule,
                   head + f"{joins[1]} not above fail_above {rules.fail_above}"
                   + (" with 95% confidence" if value > rules.fail_above else "")
                   + (f" (CI low {ci_low:.3f})" if ci_low is not None else "")
                   + warn_note + tail, details)
