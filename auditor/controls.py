"""Controls that test a user's own training pipeline rather than the data.

``shuffled_label_control(fit_score, X, y)`` runs the whole evaluation pipeline — feature
selection, encoding, fitting, cross-validation, scoring — on permuted labels, several times.
With the labels permuted there is nothing to learn, so an honest pipeline scores at chance; a
score clearly above chance means information about the evaluation labels reaches the fitted
model: feature selection or target encoding fitted on all rows before the split, test rows used
in fitting, oversampling before cross-validation. No data check can see these leaks, because
they happen in code.

Example (the classic wrong way to cross-validate, and the right way)::

    from sklearn.feature_selection import SelectKBest
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline

    def leaky(X, y):          # selection sees every row's label, then CV
        Xs = SelectKBest(k=20).fit_transform(X, y)
        return cross_val_score(LogisticRegression(), Xs, y, cv=5, scoring="roc_auc").mean()

    def honest(X, y):         # selection refitted inside each training fold
        pipe = make_pipeline(SelectKBest(k=20), LogisticRegression())
        return cross_val_score(pipe, X, y, cv=5, scoring="roc_auc").mean()

    report = shuffled_label_control(leaky, X, y)     # status "fail"
"""
from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from typing import Any, Callable

import numpy as np

from auditor.report.results import CheckResult, Finding, Report, Severity, status_from_findings

CONTROL_ID = "control.shuffled_labels"


def shuffled_label_control(fit_score: Callable[[Any, Any], float], X: Any, y: Any, *,
                           permutations: int = 5, chance: float = 0.5,
                           tolerance: float = 0.02, alpha: float = 0.01,
                           true_score: bool = True, seed: int = 0,
                           name: str = "pipeline") -> Report:
    """Run ``fit_score`` on permuted labels and report whether it scores above chance.

    Parameters
    ----------
    fit_score
        ``fit_score(X, y) -> float``: the user's whole evaluation pipeline. It receives the
        features unchanged and the labels (permuted, in the same container type as ``y``: a
        pandas Series keeps its index, a polars Series its name), does everything the real
        pipeline does — preprocessing, selection, fitting, cross-validation or a holdout — and
        returns one score where higher is better (AUC, accuracy, R², ...).
    X, y
        The data as the pipeline expects it (numpy, pandas, polars, ...). Only ``y`` is
        permuted; ``X`` is passed through as is.
    permutations
        How many permuted-label runs (>= 2). Each uses a fresh permutation drawn from ``seed``.
    chance
        The score of a pipeline that learned nothing: 0.5 for ROC AUC, the majority-class share
        for accuracy, 0 for R².
    tolerance
        The smallest excess over chance that counts as a leak (an effect size: a tiny but
        consistent excess is not worth a failure).
    alpha
        Significance of the one-sided t-test that the mean permuted score exceeds ``chance``.
    true_score
        Also run once on the true labels, for context (not graded).

    Verdict
    -------
    With permuted scores s_1..s_P (mean m, sd s), the chance band is
    ``chance ± w`` with ``w = max(tolerance, t(1 - alpha, P - 1) · s / sqrt(P))``: the region
    where a mean permuted score is consistent with chance. ``m > chance + w`` fails (the
    pipeline leaks labels into evaluation); ``m < chance - w`` warns (below chance: is
    ``chance`` right for this metric, or is the score oriented so that lower is better?);
    otherwise the pipeline passes.

    Returns a :class:`~auditor.report.results.Report` with one check, ``control.shuffled_labels``,
    that serialises (``to_json``, ``to_html``) like any audit.
    """
    from scipy.stats import t as student

    if not isinstance(permutations, int) or permutations < 2:
        raise ValueError(f"permutations must be an integer >= 2; got {permutations!r}")
    for label, v in (("tolerance", tolerance), ("alpha", alpha)):
        if not isinstance(v, (int, float)) or not 0 <= v < 1:
            raise ValueError(f"{label} must be a number in [0, 1); got {v!r}")
    if not callable(fit_score):
        raise ValueError(f"fit_score must be callable; got {type(fit_score).__name__}")
    values = _values(y)
    n = len(values)
    if n < 2:
        raise ValueError(f"y must have at least 2 values; got {n}")
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    rng = np.random.default_rng([seed, 4242])
    scores = [float(fit_score(X, _like(y, values[rng.permutation(n)])))
              for _ in range(permutations)]
    true = float(fit_score(X, y)) if true_score else None
    duration = time.perf_counter() - t0

    arr = np.array(scores)
    mean = float(arr.mean())
    sd = float(arr.std(ddof=1)) if np.isfinite(arr).all() else float("nan")
    w = max(tolerance, float(student.ppf(1 - alpha, permutations - 1)) * sd /
            math.sqrt(permutations)) if math.isfinite(sd) else float("nan")
    lo, hi = chance - w, chance + w
    if not math.isfinite(mean) or not math.isfinite(w):
        severity, verdict = Severity.WARN, "not scored"
        message = f"The {name} returned a non-finite score on permuted labels: {scores}."
    elif mean > hi:
        severity, verdict = Severity.FAIL, "leaks labels"
        message = (f"On permuted labels the {name} still scores {mean:.3f} on average over "
                   f"{permutations} runs, above the chance band [{lo:.3f}, {hi:.3f}] around "
                   f"{chance}: it leaks labels into evaluation (selection or encoding fitted on "
                   "all rows, evaluation rows used in fitting); no score it reports can be "
                   "trusted.")
    elif mean < lo:
        severity, verdict = Severity.WARN, "below chance"
        message = (f"On permuted labels the {name} scores {mean:.3f} on average over "
                   f"{permutations} runs, below the chance band [{lo:.3f}, {hi:.3f}] around "
                   f"{chance}: check that chance={chance} is right for this metric and that "
                   "higher scores are better.")
    else:
        severity, verdict = Severity.INFO, "at chance"
        message = (f"On permuted labels the {name} scores {mean:.3f} on average over "
                   f"{permutations} runs, inside the chance band [{lo:.3f}, {hi:.3f}] around "
                   f"{chance}: no sign that labels leak into evaluation.")
    evidence: dict[str, Any] = {
        "verdict": verdict, "permuted_label_scores": [round(s, 6) for s in scores],
        "mean": round(mean, 6), "sd": round(sd, 6) if math.isfinite(sd) else None,
        "chance": chance, "chance_band": [round(lo, 6), round(hi, 6)],
        "true_label_score": round(true, 6) if true is not None else None,
        "rows": n, "permutations": permutations, "seed": seed,
        "chart": {"type": "bar",
                  "labels": [f"perm {i + 1}" for i in range(permutations)]
                  + (["true labels"] if true is not None else []),
                  "values": scores + ([true] if true is not None else []),
                  "lines": [chance, hi], "title": f"{name}: scores on permuted labels",
                  "ylabel": "score"}}
    finding = Finding(severity=severity, metric="permuted_label_score", value=round(mean, 6),
                      threshold=round(hi, 6) if math.isfinite(hi) else None,
                      count=permutations, subject="", splits=[], message=message,
                      evidence=evidence)
    result = CheckResult(
        id=CONTROL_ID, title="Shuffled-label control of the training pipeline",
        status=status_from_findings([finding]), duration_s=round(duration, 4),
        summary=message, findings=[finding],
        description="The user's pipeline, run on permuted labels, must score at chance; above "
                    "chance it leaks labels into evaluation.",
        params={"permutations": permutations, "chance": chance, "tolerance": tolerance,
                "alpha": alpha, "seed": seed})
    from auditor import __version__

    return Report(status=result.status, started_at=started.strftime("%Y-%m-%dT%H:%M:%SZ"),
                  duration_s=round(duration, 3), seed=seed,
                  datasets={"data": {"path": None, "rows": n, "columns": _width(X)}},
                  checks=[result], tool_version=__version__)


def _values(y: Any) -> np.ndarray:
    if hasattr(y, "to_numpy"):
        return np.asarray(y.to_numpy())
    return np.asarray(y)


def _like(y: Any, values: np.ndarray) -> Any:
    """``values`` in the container type of ``y``."""
    module = type(y).__module__
    if module.startswith("pandas"):
        import pandas as pd

        return pd.Series(values, index=y.index, name=getattr(y, "name", None))
    if module.startswith("polars"):
        import polars as pl

        return pl.Series(getattr(y, "name", ""), values)
    if isinstance(y, list):
        return values.tolist()
    return values


def _width(X: Any) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) > 1:
        return int(shape[1])
    return 1
