"""Model-based probes: can a model tell the splits apart, and can it learn the label (not too
well)? ``separability.adversarial`` (gradient boosting, scikit-learn) and
``separability.label_probe`` (a tiny torch MLP; the model itself lives in
:mod:`auditor.probes.probe_model`)."""
from __future__ import annotations

import copy
import math
import os
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, ClassVar, Iterator

import numpy as np
import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.roles import Roles
from auditor.detectors.measured import judged, stated
from auditor.engines.operations import DriverData, Operations
from auditor.loading.data import AuditData
from auditor.errors import NotApplicable
from auditor.judging.design import SplitDesign, split_design
from auditor.judging.leak_rules import Rules
from auditor.probes.features import Encoder, model_features, sample_rows
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_count, grade, roc_auc

def _positive_int(obj: Any, *names: str) -> None:
    for name in names:
        v = getattr(obj, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a positive integer; got {v!r}")


def _share(obj: Any, *names: str) -> None:
    for name in names:
        v = getattr(obj, name)
        if not isinstance(v, (int, float)) or not 0 <= v <= 1:
            raise ValueError(f"{name} must be a number in [0, 1]; got {v!r}")


@lru_cache(maxsize=1)
def _threadpools() -> Any:
    """threadpoolctl's view of the loaded OpenMP runtimes, inspected once (a fresh
    ``threadpool_limits`` re-scans the process's libraries: ~4 ms a call). Created after
    scikit-learn is imported, so its OpenMP runtime is among them. OpenMP's thread count is
    per calling thread, so tasks on several threads each limit their own."""
    from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: F401  (loads OpenMP)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="openmp")


@contextmanager
def single_openmp_thread() -> Iterator[None]:
    """Run scikit-learn's gradient boosting on one OpenMP thread (of the calling thread). At
    the sampled sizes a fit takes about a second on one thread, while OpenMP threads competing
    with any other busy process were measured 35-60x slower (0.5 s vs 17-31 s for 67k rows x
    40 columns on 2 cores)."""
    with _threadpools().limit(limits=1):
        yield


def on_one_thread(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` wrapped to run under :func:`single_openmp_thread` (for a pool worker: OpenMP's
    thread count is per calling thread)."""
    def run(*args: Any) -> Any:
        with single_openmp_thread():
            return fn(*args)

    return run


def model_columns(model: Any, p: int) -> np.ndarray:
    """where[j] = the column of the fitted HistGradientBoostingClassifier's own input matrix
    that holds input column j: given ``categorical_features``, scikit-learn ordinal-encodes
    the categorical columns and puts them first (its ColumnTransformer), and the trees'
    ``feature_idx`` index that matrix."""
    pre = getattr(model, "_preprocessor", None)
    if pre is None:
        return np.arange(p)
    where = np.arange(p)
    for name, _, sel in pre.transformers_:
        if name not in pre.output_indices_ or name == "remainder":
            continue
        idx = np.arange(p)[np.asarray(sel)] if len(np.atleast_1d(sel)) else np.arange(0)
        out = pre.output_indices_[name]
        where[idx] = np.arange(out.start, out.stop)
    return where


def encoded_model(model: Any, X: np.ndarray) -> tuple[Any, np.ndarray]:
    """(predictor, Z): ``predictor.predict_proba(Z)`` equals ``model.predict_proba(X)`` and so
    does it for Z with rows of a column permuted and X with the same rows of the same column
    permuted (the ordinal encoding is value by value), column j of X being column
    ``model_columns(model)[j]`` of Z. With categorical columns scikit-learn re-encodes them on
    every predict (a per-column Python loop: ~3 s for 15,000 rows x 450 categorical columns);
    encoding once and predicting through a shallow copy without the preprocessor avoids it."""
    pre = getattr(model, "_preprocessor", None)
    if pre is None:
        return model, X
    fast = copy.copy(model)
    fast._preprocessor = None
    return fast, np.ascontiguousarray(pre.transform(X), dtype=np.float64)


def split_gain_importance(model: Any, p: int) -> np.ndarray:
    """Total split gain per column of a fitted scikit-learn HistGradientBoostingClassifier:
    gain[j] = sum over every tree's inner nodes splitting on column j of the node's gain (the
    loss reduction the grower computed). A column with gain 0 is never used by a split, so
    the model's predictions do not depend on it and its permutation importance is exactly 0.
    Read from the fitted trees (one array per tree), so it costs nothing next to a predict."""
    gain = np.zeros(p)
    for trees in model._predictors:
        for tree in trees:
            nodes = tree.nodes
            inner = nodes[nodes["is_leaf"] == 0]
            np.add.at(gain, inner["feature_idx"].astype(np.int64), inner["gain"])
    ordered: np.ndarray = gain[model_columns(model, p)]  # the trees index the model's own order
    return ordered


def importance_candidates(model: Any, p: int, k: int) -> np.ndarray | None:
    """The columns worth permuting: the ``k`` columns with the largest split gain among those
    the model splits on (ties by column index), sorted; ``None`` (every column) when the model
    uses at most ``k`` columns -- the others' permutation drop is exactly 0."""
    gain = split_gain_importance(model, p)
    used = np.flatnonzero(gain > 0)
    if p <= k:
        return None
    if len(used) <= k:
        return used
    order = np.argsort(-gain, kind="stable")[:k]
    return np.sort(order)


def start_permutation_auc_drops(pool: Executor, model: Any, X: np.ndarray,
                                positive: np.ndarray, repeats: int,
                                seed: int, columns: np.ndarray | None = None
                                ) -> Callable[[], np.ndarray]:
    """Permutation importance (Breiman 2001) on held-out rows: drops[j, r] = AUC(X) -
    AUC(X with column j permuted, repeat r), the AUC of ``model.predict_proba(.)[:, 1]`` for
    the boolean ``positive``. The permutations are drawn from ``seed`` up front (for every
    column, so a column's permutations do not depend on ``columns``); the repeats of a column
    are scored in one predict call, one ``pool`` task per column. Only ``columns`` (default
    all) are permuted; the others' drops are 0 (exact for a column the model never splits
    on, see :func:`importance_candidates`). Each worker thread permutes one column at a time
    in its own stacked copy of ``X`` and restores it (one copy per thread, not per column:
    with 1,500 columns a copy per column was most of the check's time). Returns a function
    that waits for the tasks and gives the (columns x repeats) array."""
    rng = np.random.default_rng([seed % 2**32, 2])
    n, p = X.shape
    perms = [[rng.permutation(n) for _ in range(repeats)] for _ in range(p)]
    predictor, Z = encoded_model(model, X)
    where = model_columns(model, p)
    with single_openmp_thread():
        base = roc_auc(predictor.predict_proba(Z)[:, 1], positive)
    local = threading.local()

    def column(j: int) -> np.ndarray:
        stacked = getattr(local, "stacked", None)
        if stacked is None:
            stacked = local.stacked = np.tile(Z, (repeats, 1))
        k = where[j]
        for r in range(repeats):
            stacked[r * n:(r + 1) * n, k] = Z[perms[j][r], k]
        try:
            scores = predictor.predict_proba(stacked)[:, 1]
        finally:
            for r in range(repeats):
                stacked[r * n:(r + 1) * n, k] = Z[:, k]
        return np.array([base - roc_auc(scores[r * n:(r + 1) * n], positive)
                         for r in range(repeats)])

    todo = range(p) if columns is None else [int(j) for j in columns]
    tasks = {j: pool.submit(on_one_thread(column), j) for j in todo}

    def gather() -> np.ndarray:
        drops = np.zeros((p, repeats))
        for j, t in tasks.items():
            drops[j] = t.result()
        return drops

    return gather


def permutation_auc_drops(model: Any, X: np.ndarray, positive: np.ndarray, repeats: int,
                          seed: int, workers: int | None = None,
                          columns: np.ndarray | None = None) -> np.ndarray:
    """:func:`start_permutation_auc_drops` on a pool of ``workers`` threads (default
    ``cpu_count``), waited for."""
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        return start_permutation_auc_drops(pool, model, X, positive, repeats, seed,
                                           columns)()


# =============================================================================================
# separability.adversarial
# =============================================================================================

@dataclass(frozen=True)
class AdversarialMeasures:
    """What ``separability.adversarial`` judges: the rows (:class:`DriverData`) and the run's
    split design (:func:`auditor.judging.design.split_design`)."""

    driver: DriverData
    design: SplitDesign


def cv_folds(folds: int, seed: int, y: np.ndarray, entities: pl.Series | None = None
             ) -> tuple[list[tuple[np.ndarray, np.ndarray]], bool]:
    """(train, held-out) row indices of ``folds`` folds stratified by ``y``, and whether they
    are grouped: with ``entities`` (one value per row) every entity's rows fall in one fold
    (scikit-learn's ``StratifiedGroupKFold``), when each class holds at least ``folds``
    entities; else plain stratified folds."""
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

    if entities is not None:
        codes = np.unique(entities.fill_null("").to_numpy(), return_inverse=True)[1]
        nulls = entities.is_null().to_numpy()  # a row without an entity is an entity alone
        codes[nulls] = codes.max(initial=-1) + 1 + np.arange(int(nulls.sum()))
        if all(np.unique(codes[y == c]).size >= folds for c in (0, 1)):
            cv = StratifiedGroupKFold(folds, shuffle=True, random_state=seed % 2**32)
            return list(cv.split(np.zeros(len(y)), y, codes)), True
    plain = StratifiedKFold(folds, shuffle=True, random_state=seed % 2**32)
    return list(plain.split(np.zeros(len(y)), y)), False


@dataclass(frozen=True, kw_only=True)
class AdversarialValidation:
    """A classifier can tell a later split's rows from train's rows: the splits differ jointly.

    A fail means the evaluation set is not drawn from the training distribution, so its metric
    does not estimate performance on the data the model was built for — even when every column
    looks fine on its own (a shift in the joint distribution). Fix: split at random (or by
    group) from one pool, or read the driving features: an undeclared id or timestamp, a
    changed pipeline, a different population.

    Method: for train and each later split, up to ``max_rows`` rows per split are sampled
    (seeded, uniform) and labelled 0 (train) / 1 (later). Categorical columns become ordinal
    codes over the levels of the sampled union (the ``max_levels`` most frequent levels seen at
    least ``min_level_count`` times; the rest grouped as one "other" level) and use the model's
    native categorical support; missing values stay missing. A scikit-learn
    HistGradientBoostingClassifier (``max_iter`` 40 trees, ``learning_rate`` 0.2: the same
    AUC to 0.001 as 60 trees at 0.15 on a strong shift, a joint shift with equal marginals
    and a 0.1 sd mean shift, in two thirds of the time) is cross-validated over ``folds``
    stratified folds -- when the splits hold disjoint entities of a group column (the split
    design's ``entities``, :mod:`auditor.judging.design`) grouped by it
    (``StratifiedGroupKFold``: an entity's rows are held out together; with row folds
    an attribute of the entity, constant within it, lets the model recognise each split's
    entities: AUC 0.99 on an honest split of 300 users, 0.44 with grouped folds); the value is
    the mean held-out ROC AUC and its 95% interval
    mean ± 1.96 sd/sqrt(folds) over folds (fold-to-fold variation only; the folds share
    training rows, so it is approximate). When
    flagged, permutation importance (held-out AUC drop, ``importance_repeats`` repeats on at
    most ``importance_rows`` rows of the first held-out fold) names the driving features --
    on a wide table only the ``importance_columns`` (50) columns with the largest split gain
    in the fitted model are permuted (a column the model never splits on has a drop of exactly
    0; one predict per permuted column, so the cost no longer grows with the width) -- and
    the first fold is refitted without the top feature (on a wide table: without it among
    those ``importance_columns`` columns, so this refit costs the same at any width) and on it
    alone: alone it keeps most of
    the AUC -> that column's own shift (drift.features sees it too); alone near chance but
    without it the rest cannot separate -> a joint shift (marginals equal, relations changed);
    neither -> spread over several columns. Gradient boosting runs on one OpenMP thread per
    task (see ``single_openmp_thread``), the folds and the explanation as parallel tasks.

    Thresholds (exceeded: AUC > threshold): ``warn_above`` 0.65, ``fail_above`` 0.8. In a
    random split the expected AUC is 0.5 with standard error sqrt((n0 + n1 + 1) / (12 n0 n1))
    (about 0.003 with 25,000 rows per split, 0.02 with 500), so 0.65 is a real shift affecting
    a noticeable share of rows and 0.8 means most rows are distinguishable; ``max_rows`` 25,000
    measures either to +-0.005 (on the benchmark data, 50,000 rows per split gave the same
    AUC, 0.995, and the same drivers in 1.3x the time). A fail needs the folds' 95% CI
    (mean +- 1.96 sd / sqrt(folds)) above ``fail_above``; one reaching below warns (a few
    entities per fold: R's Theoph, 12 subjects, AUC 0.83 with CI 0.51-1.16). A declared time
    column makes some separability between periods expected (seasonality, slow drift): the
    message says so and the grade is capped at warn unless ``fail_with_time_column``. The time
    column itself is never a feature. The default sizes keep the check to about two seconds on
    two cores, whatever the number of rows (40 columns).
    """

    id: ClassVar[str] = "separability.adversarial"
    title: ClassVar[str] = "Adversarial validation: can a model tell the splits apart?"
    cost: ClassVar[Cost] = Cost.MODEL
    needs: ClassVar[Needs] = Needs(splits=2)
    warn_above: float = 0.65
    fail_above: float = 0.8
    fail_with_time_column: bool = False
    max_rows: int = 25_000
    folds: int = 3
    max_iter: int = 40
    learning_rate: float = 0.2
    max_levels: int = 64
    min_level_count: int = 20
    importance_rows: int = 5_000
    importance_repeats: int = 3
    top_features: int = 10
    importance_columns: int = 50

    def __post_init__(self) -> None:
        _share(self, "warn_above", "fail_above", "learning_rate")
        if self.warn_above > self.fail_above:
            raise ValueError(f"warn_above must be <= fail_above; got {self.warn_above!r} > "
                             f"{self.fail_above!r}")
        _positive_int(self, "max_rows", "max_iter", "min_level_count", "importance_rows",
                      "importance_repeats", "top_features", "importance_columns")
        if not isinstance(self.folds, int) or self.folds < 2:
            raise ValueError(f"folds must be an integer >= 2; got {self.folds!r}")
        if not isinstance(self.max_levels, int) or not 1 <= self.max_levels <= 250:
            raise ValueError(f"max_levels must be an integer in [1, 250]; got "
                             f"{self.max_levels!r}")

    def run(self, data: AuditData) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: Roles) -> "AdversarialMeasures":
        """The splits' rows in this process (Spark: its seeded driver-side sample) and the
        run's split design (a group split's folds hold out entities)."""
        return AdversarialMeasures(engine.driver_data(), split_design(engine, roles))

    def judge(self, m: "AdversarialMeasures") -> list[Finding]:
        """The classifier's cross-validated AUC per pair, on the rows ``m`` holds."""
        return stated(self._pairs(m.driver.data, m.design.entities), m.driver)

    def _pairs(self, data: AuditData, group: str | None = None) -> list[Finding]:
        numeric, categorical = model_features(data)
        if not numeric and not categorical:
            raise NotApplicable("no feature columns to train on")
        first, *later = data.split_names
        small = [s for s in [first, *later] if data.rows(s) < 2 * self.folds]
        if small:
            raise NotApplicable(f"split {small[0]!r} has {data.rows(small[0])} rows; "
                                f"{self.folds}-fold cross-validation needs at least "
                                f"{2 * self.folds}")
        return [self._pair(data, first, other, numeric, categorical, k, group)
                for k, other in enumerate(later)]

    def _fit(self, mask: np.ndarray, seed: int, X: np.ndarray, y: np.ndarray) -> Any:
        """Fit the classifier. A column with no known value in these rows (possible in a small
        fold) is set to 0 here: scikit-learn cannot bin an all-missing column."""
        from sklearn.ensemble import HistGradientBoostingClassifier

        empty = np.isnan(X).all(0)
        if empty.any():
            X = X.copy()
            X[:, empty] = 0.0
        model = HistGradientBoostingClassifier(
            max_iter=self.max_iter, learning_rate=self.learning_rate,
            categorical_features=mask if mask.any() else None, random_state=seed % 2**32)
        return model.fit(X, y)

    def _pair(self, data: AuditData, first: str, later: str, numeric: list[str],
              categorical: list[str], k: int, group: str | None = None) -> Finding:
        seed = data.seed + 7919 * k
        cols = numeric + categorical
        a, b = data.splits[first], data.splits[later]
        rows_a = sample_rows(a.height, self.max_rows, seed)
        rows_b = sample_rows(b.height, self.max_rows, seed + 1)
        fa, fb = a.select(cols)[rows_a], b.select(cols)[rows_b]
        union = pl.concat([fa, fb])
        enc = Encoder.fit(union, numeric, categorical, max_levels=self.max_levels,
                          min_count=self.min_level_count)
        X, mask = enc.tree_matrix(union)
        y = np.r_[np.zeros(fa.height, np.int8), np.ones(fb.height, np.int8)]
        entities = None
        if group is not None:  # the design's disjoint group column: in every split
            entities = pl.concat([a[group][rows_a].cast(pl.String),
                                  b[group][rows_b].cast(pl.String)])
        splits, grouped = cv_folds(self.folds, seed, y, entities)
        fit = on_one_thread(lambda m, Xf, yf: self._fit(m, seed, Xf, yf))
        # One pool for every fit and prediction of the pair: each task on one OpenMP thread,
        # as many tasks at once as cores (scikit-learn's tree code releases the GIL). With 3
        # folds on 2 cores one core would idle during the last fold, so the explanation starts
        # on the first fold's model as soon as it scores above the warning level: the refits
        # for the top column of a quick permutation pass (almost always the full ranking's
        # top; redone if not) and the full permutation ranking. The mean over all folds
        # decides whether they are used; unneeded tasks are cancelled. Results are the same
        # as computed one after the other.
        pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
        try:
            tasks = [pool.submit(fit, mask, X[tr], y[tr]) for tr, _ in splits]
            aucs: list[float] = []
            drivers: Callable[[], tuple[list[dict[str, Any]], int]] | None = None
            refits: dict[int, dict[str, tuple[list[int], Future[Any]]]] = {}
            for task, (_, te) in zip(tasks, splits):
                model = task.result()
                with single_openmp_thread():
                    aucs.append(float(roc_auc(model.predict_proba(X[te])[:, 1], y[te] == 1)))
                if len(aucs) == 1:
                    first_fold = (model, *splits[0])
                    if aucs[0] > self.warn_above:
                        guess = self._quick_top(model, X, y, splits[0][1], seed)
                        refits = {guess: self._start_refits(pool, fit, X, y, mask,
                                                            splits[0][0], guess, model)}
                        drivers = self._start_drivers(pool, model, X, y, splits[0][1], cols,
                                                      seed)
            mean = float(np.mean(aucs))
            half = 1.96 * float(np.std(aucs, ddof=1)) / math.sqrt(len(aucs))
            severity = grade(mean, warn=self.warn_above, fail=self.fail_above)
            if severity != Severity.INFO and drivers is None:
                drivers = self._start_drivers(pool, first_fold[0], X, y, splits[0][1], cols,
                                              seed)
            time_col = data.columns.time
            capped = severity == Severity.FAIL and time_col and not self.fail_with_time_column
            if capped:
                severity = Severity.WARN
            unsure = severity == Severity.FAIL and mean - half <= self.fail_above
            if unsure:  # too few rows or entities for the folds to agree: the CI reaches below
                severity = Severity.WARN
            evidence: dict[str, Any] = {"cross_validation": {
                "folds": len(aucs), "fold_aucs": [round(v, 4) for v in aucs],
                "mean_auc": round(mean, 4),
                "ci95": [round(mean - half, 4), round(mean + half, 4)],
                f"{first}_rows_sampled": fa.height, f"{first}_rows": a.height,
                f"{later}_rows_sampled": fb.height, f"{later}_rows": b.height,
                "model": f"HistGradientBoostingClassifier(max_iter={self.max_iter}, "
                         f"learning_rate={self.learning_rate}, early stopping when > 10,000 "
                         "rows)",
                "features": len(cols)}}
            if grouped:
                evidence["cross_validation"]["grouped_by"] = group
            head = (f"A classifier tells {later} rows from {first} rows with cross-validated "
                    f"AUC {mean:.3f} (95% CI {mean - half:.3f}–{mean + half:.3f}; {len(aucs)} "
                    f"folds on {fmt_count(fa.height)} {first} + {fmt_count(fb.height)} {later} "
                    f"sampled rows, {len(cols)} features)")
            if severity == Severity.INFO:
                message = head + f": no joint shift at the {self.warn_above} warning level."
            else:
                assert drivers is not None  # started above whenever the grade is not info
                message = head + self._explain(pool, fit, drivers, refits, X, y, mask,
                                               first_fold, aucs[0], cols, first, later,
                                               evidence)
        finally:  # unneeded (speculative) or orphaned (an error) tasks are dropped
            pool.shutdown(wait=True, cancel_futures=True)
        if grouped:
            message += (f" The splits hold disjoint {group!r} entities: each fold holds out "
                        "whole entities, so "
                        "a column constant within an entity (an attribute of the entity) "
                        "separates only as far as the entities of the two splits differ.")
        elif group is not None:
            message += (f" The splits hold disjoint {group!r} entities, but too few for "
                        f"{self.folds} grouped folds: the folds split rows, so an attribute of "
                        "the entities can separate the splits without any shift.")
        if unsure:
            message += (f" Graded warn, not fail: the folds disagree, their 95% CI reaching "
                        f"below fail_above ({self.fail_above}) (few rows or entities).")
        if time_col:
            message += (f" A time column ({time_col!r}) is declared, so some separability "
                        "between periods is expected (drift, seasonality)")
            message += ("; the grade is capped at warn (fail_with_time_column=false)."
                        if capped else ".")
        return Finding(severity=severity, metric="adversarial_auc", value=round(mean, 6),
                       threshold=self.fail_above, count=fb.height, splits=[first, later],
                       message=message, evidence=evidence)

    def _explain(self, pool: Executor, fit: Callable[..., Any],
                 drivers: Callable[[], tuple[list[dict[str, Any]], int]],
                 refits: dict[int, dict[str, tuple[list[int], Future[Any]]]], X: np.ndarray,
                 y: np.ndarray, mask: np.ndarray, first_fold: Any, fold_auc: float,
                 cols: list[str], first: str, later: str, evidence: dict[str, Any]) -> str:
        """Drivers by permutation importance, then the first fold refitted without the top
        feature and on the top feature alone: alone near the full AUC -> that column's own
        shift; alone near chance but without it near chance -> a joint shift involving it;
        otherwise spread over several columns."""
        _, tr, te = first_fold
        ranked, top = drivers()
        evidence["drivers"] = ranked
        evidence["chart"] = {
            "type": "bar", "horizontal": True,
            "labels": [d["feature"] for d in ranked],
            "values": [d["auc_drop"] for d in ranked],
            "title": f"What tells {later} from {first}: permutation importance",
            "xlabel": "held-out AUC drop when the column is shuffled"}
        for guess, tasks in refits.items():
            if guess != top:
                for _, task in tasks.values():
                    task.cancel()
        tasks = refits.get(top) or self._start_refits(pool, fit, X, y, mask, tr, top,
                                                      first_fold[0])
        without = tasks.get("without")
        if without is not None and len(without[0]) < X.shape[1] - 1:
            evidence["refit_columns"] = {
                "without_top": len(without[0]), "of": X.shape[1],
                "note": "the refit without the top feature uses the importance_columns "
                        "columns with the largest split gain (a wide table)"}
        refit = {"without": 0.5, "alone": 0.5}
        for name, (use, task) in tasks.items():
            m = task.result()
            with single_openmp_thread():
                refit[name] = float(roc_auc(m.predict_proba(X[np.ix_(te, use)])[:, 1],
                                            y[te] == 1))
        evidence["top_feature"] = {"feature": cols[top], "fold_auc": round(fold_auc, 4),
                                   "auc_without_it": round(refit["without"], 4),
                                   "auc_with_it_alone": round(refit["alone"], 4)}
        excess = max(fold_auc - 0.5, 1e-9)
        if (refit["alone"] - 0.5) >= 0.5 * excess:
            how = f"{cols[top]!r} shifted on its own explains most of it (see drift.features)"
        elif (fold_auc - refit["without"]) >= 0.5 * excess:
            how = (f"{cols[top]!r} alone shows little, yet without it the rest cannot separate "
                   "the splits: the shift lies in the joint distribution of "
                   f"{cols[top]!r} with other columns")
        else:
            how = "the shift is spread over several columns"
        restricted = ""
        if "refit_columns" in evidence:
            restricted = (f" (refit on the {evidence['refit_columns']['without_top']:,} "
                          f"largest-gain of {X.shape[1]:,} columns)")
        return (f": the splits differ jointly. Strongest driver: {cols[top]!r} (first fold: AUC "
                f"{fold_auc:.3f}, {refit['without']:.3f} without it{restricted}, "
                f"{refit['alone']:.3f} with it alone); {how}.")

    def _quick_top(self, model: Any, X: np.ndarray, y: np.ndarray, te: np.ndarray,
                   seed: int) -> int:
        """The top column of a one-repeat permutation pass on 1,000 held-out rows: a guess
        of the full ranking's top, so its refits can start early."""
        sub = te[sample_rows(len(te), min(1_000, self.importance_rows), seed + 3)]
        # one thread: the pool's workers are busy with the other folds meanwhile
        drops = permutation_auc_drops(model, X[sub], y[sub] == 1, 1, seed + 3, workers=1,
                                      columns=self._candidates(model, X.shape[1]))
        return int(np.argmax(drops[:, 0]))

    def _candidates(self, model: Any, p: int) -> np.ndarray | None:
        """Columns to permute: the ``importance_columns`` with the largest split gain in the
        fitted model (all of them when the table has no more columns than that)."""
        return importance_candidates(model, p, max(self.importance_columns, self.top_features))

    def _start_refits(self, pool: Executor, fit: Callable[..., Any], X: np.ndarray,
                      y: np.ndarray, mask: np.ndarray, tr: np.ndarray, top: int, model: Any
                      ) -> dict[str, tuple[list[int], Future[Any]]]:
        """Start the first fold's refits without column ``top`` and on it alone (a single
        column has no "without" refit): name -> (columns used, task). On a table wider than
        ``importance_columns`` the refit without ``top`` uses only the other columns among
        the first fold model's ``importance_columns`` largest split gains (the columns that
        matter, found at no cost): a fit costs in proportion to its columns."""
        cand = self._candidates(model, X.shape[1])
        pool_cols = range(X.shape[1]) if cand is None else sorted({int(j) for j in cand} |
                                                                  {top})
        keep = [j for j in pool_cols if j != top]
        uses = {name: use for name, use in (("without", keep), ("alone", [top])) if use}
        return {name: (use, pool.submit(fit, mask[use], X[np.ix_(tr, np.asarray(use))], y[tr]))
                for name, use in uses.items()}

    def _start_drivers(self, pool: Executor, model: Any, X: np.ndarray, y: np.ndarray,
                       te: np.ndarray, cols: list[str], seed: int
                       ) -> Callable[[], tuple[list[dict[str, Any]], int]]:
        """Start permutation importance on ``pool``; the returned function waits and gives
        the ``top_features`` drivers (mean AUC drop, sd over repeats) and the top column."""
        sub = te[sample_rows(len(te), self.importance_rows, seed + 2)]
        gather = start_permutation_auc_drops(pool, model, X[sub], y[sub] == 1,
                                             self.importance_repeats, seed,
                                             self._candidates(model, X.shape[1]))

        def ranked() -> tuple[list[dict[str, Any]], int]:
            drops = gather()
            mean, sd = drops.mean(1), drops.std(1)
            order = np.argsort(-mean, kind="stable")
            return [{"feature": cols[j], "auc_drop": round(float(mean[j]), 4),
                     "sd": round(float(sd[j]), 4)}
                    for j in order[:self.top_features]], int(order[0])

        return ranked


# =============================================================================================
# separability.label_probe
# =============================================================================================

@dataclass(frozen=True, kw_only=True)
class LabelProbe:
    """A tiny model trained on train cannot learn the label, or learns it suspiciously well.

    A fail means the inputs or labels are broken (the probe cannot even memorise 32 training
    rows), or that one feature alone carries a suspiciously good score (a leak: computed after
    the label, or from the future). A warning means the label does not generalise from train to
    a later split (test score inside the chance band: labels misaligned with features, or no
    signal), scores worse than chance, is suspiciously good, or that a latest-period holdout
    inside train scores far below a random holdout (temporal leakage).

    The probe is an MLP (two hidden layers of ``hidden`` units) over numerics standardised on
    train (missing -> 0 plus an indicator column) and one-hot categoricals (train vocabulary,
    ``max_levels`` levels per column). Steps, in the order a person debugging a model takes them:

    1. Overfit one batch: ``overfit_rows`` train rows, full-batch Adam (lr 0.01) for at most
       ``overfit_steps`` steps, must reach ``overfit_min_accuracy`` training accuracy (R² for a
       numeric label). Rows repeating another row's inputs with another label cap what any
       model can reach (accuracy: the sum over distinct inputs of their majority label's count,
       over the rows; R²: 1 - SS_within / SS_total of the distinct inputs' mean labels); when
       that cap is below 1 (such rows are natural in discrete data, in coarse survey data
       many of them) and varying inputs can beat a constant prediction, the requirement is
       ``overfit_min_accuracy`` times the cap; below a cap of 0.9 (``CONFLICT_CEILING_FLOOR``)
       only when at most half of the input columns are constant in the batch (collapsed
       inputs are a broken pipeline, not coarse data).
       It fails (broken inputs or labels) on a non-finite loss, inputs that
       are all constant in the batch, or rows with identical inputs and different labels. When
       none of these holds, the same batch is fitted once more with its labels shuffled: if
       that control cannot be memorised either, the inputs are too poor to memorise arbitrary
       labels (one noise column, say) and the test is inconclusive (info) -- features without
       signal are not a broken pipeline; the chance band of step 3 then speaks. Only when the
       shuffled labels can be memorised and the true ones cannot does it fail.
    2. Train on up to ``train_rows`` sampled train rows for ``epochs`` epochs, score up to
       ``eval_rows`` rows of each later split: ROC AUC (binary), macro one-vs-rest AUC
       (multiclass), R² (numeric). Loss curves are evidence.
    3. Chance band: the same probe retrained ``permutations`` times on permuted train labels,
       each scored against a permutation of the evaluation labels — a draw from the null
       "features carry no information about the label" (Ojala & Garriga's permutation test).
       (Scored against the true evaluation labels instead, a model fitted to noise is a random
       function of the features, and when a few features determine the label its score lands
       anywhere from 0.1 to 0.9: a band too wide to judge anything.)
       Band = null mean ± q · s · sqrt(1 + 1/P), a 99% prediction interval for one more null
       retrain. For an AUC the null sd is known — permuting the evaluation labels gives the
       Mann–Whitney sd sqrt((n0 + n1 + 1) / (12 n0 n1)) (binary; the root mean square over
       classes / sqrt(classes) for macro AUC) — so s = max(measured sd, that sd) and
       q = z(0.995) = 2.576; for R² s = max(measured sd, 0.005) and q = t(0.995, P - 1), so at
       least 3 permutations (5 by default). Verdicts:
       "> suspicious_above" suspiciously good (warn), above the band learnable (pass), inside it
       not learnable (warn), below it worse than chance (warn: label coding differs?).
    4. With a declared time column: inside the train sample, a random ``time_holdout_share``
       holdout vs the latest period of the same size; random minus latest score above
       ``time_gap_warn`` warns.
    5. When a split is suspiciously good: the ``ablate_top`` features with the strongest single-
       feature score (folded AUC, or |Spearman| for a numeric label, on the train sample) are
       each removed (their input columns zeroed) and the probe retrained; a drop of at least
       ``ablation_fail_drop`` fails with that feature as subject -- unless the leakage checks'
       rules (:mod:`auditor.judging.leak_rules`, ``leakage.single_feature_auc``'s thresholds)
       judge the feature's single-feature score, among its peers' on the train sample, a
       strong measurement of a related family (``strong_not_singular``) whose score is not
       above their ``fail_above``: then it warns, as they do (palmerpenguins' bill length: the
       probe drops 0.089 without it, and four related body measurements score within 0.15).
       On a table with more than ``ablation_columns`` (50) features the columns that matter
       are found cheaply first: the retrains, and a reference probe they are compared with,
       see only the inputs of the ``ablation_columns`` features with the strongest
       single-feature scores (stated in the message and the evidence), so the ablation costs
       the same at 50 or 1,500 columns.

    The retrains of steps 3-5 are trained together, their weights stacked (see
    :func:`auditor.probes.probe_model.fit_probes`): the same probes as one by one, for about the
    Python overhead of one. On wide inputs (256 encoded inputs or more) with two or more cores,
    the probe of step 2 trains beside the null retrains of step 3 on a second thread (the
    same numbers), and its loss curves use fewer evaluation rows (rows x inputs <= 2e6, at
    least 500).

    Runs on CPU, or CUDA when available (``device="auto"``); seeded from the run's seed and
    deterministic. Needs torch (``pip install 'auditor[probes]'``).

    Cost (a budget, measured in ``docs/performance.md``): about 3 s to import torch once per
    process, then training that grows with the rows up to ``train_rows`` and ``eval_rows``
    and no further -- about 0.2 s at 1,300 rows and 2 s at 20,000 rows or more (8 features,
    CPU).
    """

    id: ClassVar[str] = "separability.label_probe"
    title: ClassVar[str] = "Label probe: learnable, not too well"
    cost: ClassVar[Cost] = Cost.MODEL
    needs: ClassVar[Needs] = Needs(splits=2, roles=("label",))
    suspicious_above: float = 0.97
    permutations: int = 5
    train_rows: int = 20_000
    eval_rows: int = 20_000
    epochs: int = 8
    batch_size: int = 256
    hidden: int = 64
    learning_rate: float = 0.001
    overfit_rows: int = 32
    overfit_steps: int = 500
    overfit_min_accuracy: float = 0.99
    time_holdout_share: float = 0.2
    time_gap_warn: float = 0.05
    ablate_top: int = 3
    ablation_fail_drop: float = 0.05
    ablation_columns: int = 50
    max_levels: int = 20
    device: str = "auto"

    def __post_init__(self) -> None:
        _share(self, "suspicious_above", "overfit_min_accuracy", "time_gap_warn",
               "ablation_fail_drop", "learning_rate")
        _positive_int(self, "train_rows", "eval_rows", "epochs", "batch_size", "hidden",
                      "overfit_steps", "max_levels", "ablation_columns")
        if self.hidden > 4096:  # two hidden layers of hidden x hidden weights (10**20 crashed)
            raise ValueError(f"hidden must be an integer in [1, 4,096]; got {self.hidden!r}")
        if not isinstance(self.permutations, int) or self.permutations < 3:
            raise ValueError(f"permutations must be an integer >= 3; got {self.permutations!r}")
        if not isinstance(self.overfit_rows, int) or self.overfit_rows < 2:
            raise ValueError(f"overfit_rows must be an integer >= 2; got {self.overfit_rows!r}")
        if not isinstance(self.ablate_top, int) or self.ablate_top < 0:
            raise ValueError(f"ablate_top must be an integer >= 0; got {self.ablate_top!r}")
        if not 0 < self.time_holdout_share < 1:
            raise ValueError(f"time_holdout_share must be a share in (0, 1); got "
                             f"{self.time_holdout_share!r}")
        if self.device not in ("auto", "cpu", "cuda") and not str(self.device).startswith(
                "cuda:"):
            raise ValueError(f"device must be auto, cpu or cuda; got {self.device!r}")

    def run(self, data: AuditData) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: Roles) -> DriverData:
        """The splits' rows in this process (Spark: its seeded driver-side sample)."""
        return engine.driver_data()

    def family_rules(self) -> Rules:
        """The leakage checks' rules (``leakage.single_feature_auc``'s defaults: thresholds a
        run sets for that check do not reach the probe), by which an ablation FAIL is weighed
        against the column's peers."""
        from auditor.detectors.single_feature_auc import SingleFeatureAUC

        a = SingleFeatureAUC()
        return Rules(a.warn_above, a.fail_above, a.deterministic_above, a.singular_gap,
                     a.pure_share, a.pure_tolerance, a.copy_above, a.family_above,
                     a.min_pure_rows)

    def judge(self, m: DriverData) -> list[Finding]:
        """The probe trained on the first split's rows in ``m`` and scored on the others."""
        from auditor.probes.label_probe import run_label_probe

        return stated(run_label_probe(self, m.data), m)
