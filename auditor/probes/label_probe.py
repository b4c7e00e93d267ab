"""The steps of ``separability.label_probe`` (the check's class and its documentation are in
:mod:`auditor.detectors.separability`): overfit one batch, train -> later splits against a
permuted-label chance band, time holdout vs random holdout, ablation of suspicious features."""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
import polars.selectors as cs

from auditor.loading.data import AuditData, LabelKind
from auditor.errors import NotApplicable
from auditor.judging.leak_rules import (Rules, Verdict, judge, missing_purity, peer_context,
                                        pure_region)
from auditor.probes.features import Encoder, model_features, numeric_expr, sample_rows
from auditor.probes.probe_model import (BINARY, METRIC, METRIC_TEXT, MULTICLASS, NUMERIC, Curves,
                                 Settings, column_strengths, fit_probe, fit_probes,
                                 import_torch, null_auc_sd, overfit_batch, resolve_device, score,
                                 training)
from auditor.report.results import Finding, Severity
from auditor.stats.label import YCOL
from auditor.stats.numerics import fmt_count, grade, grade_at_least

# The check object (auditor.detectors.separability.LabelProbe), typed loosely: the probes
# layer sits below the detectors and does not import them.
LabelProbe = Any

CURVE_ROWS = 2_000      # evaluation rows behind each loss curve ...
CURVE_CELLS = 2_000_000  # ... fewer on wide inputs (rows x inputs), at least MIN_CURVE_ROWS:
MIN_CURVE_ROWS = 500     # ~60 forward passes on them cost as much as a tenth of the training
PARALLEL_INPUTS = 256   # from this many encoded inputs the probe trains beside its null
                        # retrains on a second thread (below, Python overhead dominates a step)
BAND_LEVEL = 0.995      # one-sided quantile of the prediction interval (99% two-sided)
BAND_FLOOR = 0.005      # smallest null sd the band assumes
CONFLICT_CEILING_FLOOR = 0.9  # overfit one batch: below this reachable fit (accuracy or R²) the
                              # conflict allowance needs most input columns varying


@dataclass
class Prepared:
    task: str
    n_out: int
    first: str
    train_rows: int                       # train rows with a usable label
    sample: pl.DataFrame                  # the sampled train rows (features + time)
    encoder: Encoder
    X: np.ndarray
    y: np.ndarray
    evals: dict[str, tuple[np.ndarray, np.ndarray, int]]   # split -> (X, y, usable rows)
    leak_rows: dict[str, list["LeakRows"]]   # split -> rows sharing something with train


def label_task(data: AuditData) -> str:
    if not data.label:
        raise NotApplicable("no label column declared")
    return {LabelKind.BINARY: BINARY, LabelKind.MULTICLASS: MULTICLASS,
            LabelKind.NUMERIC: NUMERIC}[data.label_kind]  # type: ignore[index]


def time_order(frame: pl.DataFrame, col: str) -> np.ndarray:
    """Row positions with a known time, oldest first (stable)."""
    t = frame.select(numeric_expr(frame, col))[col].to_numpy()
    known = np.flatnonzero(~np.isnan(t))
    return known[np.argsort(t[known], kind="stable")]


def _label_values(frame: pl.DataFrame, y: str, task: str, classes: pl.Series | None,
                  center: float, scale: float) -> tuple[pl.DataFrame, np.ndarray]:
    """Rows with a usable label (known; a class seen in train) and the encoded targets: class
    index, or the label standardised with train's mean and sd."""
    if task == NUMERIC:
        v = frame.select(numeric_expr(frame, y).alias("__y"))["__y"]
        keep = v.is_not_null()
        return frame.filter(keep), ((v.filter(keep).to_numpy() - center) / scale)
    expr = pl.col(y)
    if frame.schema[y].is_float():
        expr = pl.when(expr.is_nan()).then(None).otherwise(expr)
    codes = frame.select(expr.replace_strict(classes, pl.Series(range(len(classes))),
                                             default=None, return_dtype=pl.Int64).alias(y))[y]
    keep = codes.is_not_null()
    return frame.filter(keep), codes.filter(keep).to_numpy()


def prepare(check: "LabelProbe", data: AuditData, task: str) -> Prepared:
    numeric, categorical = model_features(data)
    if not numeric and not categorical:
        raise NotApplicable("no feature columns to train on")
    y = data.label
    assert y is not None
    first, *later = data.split_names
    train = data.splits[first]
    classes, center, scale = None, 0.0, 1.0
    if task == NUMERIC:
        v = train.select(numeric_expr(train, y))[y]
        center, sd = v.mean(), v.std(ddof=0)
        if not sd:
            raise NotApplicable(f"the label {y!r} is constant (or missing) in {first}: "
                                "nothing to learn")
        center, scale = float(center), float(sd)  # type: ignore[arg-type]
    else:
        col = train[y]
        if col.dtype.is_float():
            col = col.fill_nan(None)
        classes = col.drop_nulls().unique().sort()
        if len(classes) < 2:
            raise NotApplicable(f"the label {y!r} has a single class in {first}: nothing to "
                                "learn")
    cols = numeric + categorical + ([data.columns.time] if data.columns.time else [])
    usable, ytr = _label_values(train.select(list(dict.fromkeys(cols + [y]))), y, task,
                                classes, center, scale)
    idx = sample_rows(usable.height, check.train_rows, data.seed)
    sample = usable[idx]
    ytr = ytr[idx]
    enc = Encoder.fit(sample, numeric, categorical, max_levels=check.max_levels)
    evals, leaks = {}, {}
    keys = list(dict.fromkeys([*data.columns.groups, *([data.columns.time]
                                                       if data.columns.time else [])]))
    for i, name in enumerate(later):
        frame, ye = _label_values(
            data.splits[name].select(list(dict.fromkeys(numeric + categorical + [y] + keys))),
            y, task, classes, center, scale)
        pick = sample_rows(frame.height, check.eval_rows, data.seed + 1000 + i)
        evals[name] = (enc.dense(frame[pick]), ye[pick], frame.height)
        leaks[name] = leak_rows(train, frame[pick], first, numeric + categorical + [y],
                                list(data.columns.groups), data.columns.time)
    n_out = len(classes) if task == MULTICLASS else 1  # type: ignore[arg-type]
    return Prepared(task, n_out, first, usable.height, sample, enc, enc.dense(sample), ytr,
                    evals, leaks)


_ROW_SEED = 11  # any fixed seed: both sides of a comparison hash with it
_AS_TEXT = (cs.categorical() | cs.enum()).cast(pl.String)


@dataclass(frozen=True)
class LeakRows:
    """Evaluation rows that share something with train: ``kind`` is ``copies`` (the same
    features and label as a train row), ``group`` (``column``'s value occurs in train) or
    ``time`` (dated before train's latest); ``label`` reads after "without the N"."""

    kind: str
    column: str | None
    label: str
    mask: np.ndarray


def leak_rows(train: pl.DataFrame, rows: pl.DataFrame, first: str, copy_columns: list[str],
              groups: list[str], time: str | None) -> list[LeakRows]:
    """The evaluation ``rows`` that share something with the rows of ``train`` (all of
    them, not only its sample): the same features and label as a train row (nulls equal);
    a declared group's value that occurs in train; a time strictly before train's latest.
    The leakage checks count these rows; the probe scores the evaluation rows without them,
    which measures what they add to its score."""
    index = pl.int_range(pl.len()).alias("__auditor_row")

    def rows_in(cols: list[str], reference: pl.DataFrame) -> np.ndarray:
        # Only the reference rows whose 64-bit row hash some evaluation row shares can equal
        # one: a join on all of train's rows would build a hash table of every train row
        # (+4.5 GB and 9 s at 8M rows). The semi join on that superset then decides exactly
        # (a semi join keeps each left row once, however often its key repeats on the right).
        # Hashes equal where values are equal only for equal types (the loader gives a
        # column one type in every split; otherwise: the plain join), categories as text.
        mine, near = rows.select(cols), reference.select(cols)
        if mine.schema == near.schema:
            wanted = mine.with_columns(_AS_TEXT).hash_rows(seed=_ROW_SEED)
            near = near.filter(near.with_columns(_AS_TEXT).hash_rows(seed=_ROW_SEED)
                               .is_in(wanted.implode()))
        found = rows.select(*cols, index).join(near, on=cols, how="semi", nulls_equal=True)
        mask = np.zeros(rows.height, dtype=bool)
        mask[found["__auditor_row"].to_numpy()] = True
        return mask

    out = [LeakRows("copies", None, f"rows that copy a {first} row",
                    rows_in(copy_columns, train))]
    for g in groups:
        out.append(LeakRows("group", g, f"rows whose {g} occurs in {first}",
                            rows_in([g], train.select(g).drop_nulls())))
    if time:
        end = train.select(numeric_expr(train, time)).to_series().max()
        t = rows.select(numeric_expr(rows, time)).to_series().to_numpy()
        if end is not None:
            with np.errstate(invalid="ignore"):
                before = t < float(end)  # type: ignore[arg-type]
            out.append(LeakRows("time", time, f"rows dated before the end of {first}",
                                before))
    return out


def run_label_probe(check: "LabelProbe", data: AuditData) -> list[Finding]:
    task = label_task(data)
    if len(data.splits) < 2:
        raise NotApplicable("only one split: the probe trains on train and is scored on a "
                            "later split")
    p = prepare(check, data, task)
    if len(p.y) < check.overfit_rows:
        raise NotApplicable(f"{p.first} has {len(p.y)} rows with a label; the probe needs at "
                            f"least {check.overfit_rows}")
    import_torch()
    settings = Settings(hidden=check.hidden, epochs=check.epochs, batch_size=check.batch_size,
                        lr=check.learning_rate, device=resolve_device(check.device))
    seed = data.seed
    overfit = _overfit_finding(check, p, settings, seed)
    findings = [overfit]
    fits_batch = overfit.evidence["batch"]["verdict"]

    rows = max(MIN_CURVE_ROWS, min(CURVE_ROWS, CURVE_CELLS // max(p.X.shape[1], 1)))
    curve_sets = {s: (X[:rows], y[:rows]) for s, (X, y, _) in p.evals.items()}
    # Null retrains: permuted train labels, scored against permuted evaluation labels (see the
    # LabelProbe docstring for why the evaluation labels are permuted too).
    # All retrains are trained together (fit_probes: one loop, stacked weights).
    rng = np.random.default_rng([seed, 2])
    null_ys = [rng.permutation(p.y) for _ in range(check.permutations)]
    null_seeds = [seed + 100 + k for k in range(check.permutations)]
    torch = import_torch()
    if settings.device == "cpu" and (os.cpu_count() or 1) > 1 and \
            p.X.shape[1] >= PARALLEL_INPUTS:
        # wide inputs: the probe and the null retrains train at once on two threads (each
        # on one torch thread; torch's kernels release the GIL), the same numbers as one
        # after the other (see probe_model.seeded)
        with training(torch), ThreadPoolExecutor(max_workers=1) as pool:
            task_main = pool.submit(fit_probe, p.X, p.y, task, p.n_out, settings, seed + 1,
                                    curve_sets)
            null_probes = fit_probes(p.X, null_ys, task, p.n_out, settings, null_seeds)
            probe, curves = task_main.result()
    else:
        probe, curves = fit_probe(p.X, p.y, task, p.n_out, settings, seed + 1, curve_sets)
        null_probes = fit_probes(p.X, null_ys, task, p.n_out, settings, null_seeds)
    outs = {s: probe.predict(X) for s, (X, _, _) in p.evals.items()}
    scores = {s: score(task, outs[s], y) for s, (_, y, _) in p.evals.items()}
    null_outs = {s: null_probes.predict(X) for s, (X, _, _) in p.evals.items()}
    nulls: dict[str, list[float]] = {s: [] for s in p.evals}
    for k in range(check.permutations):
        for s, (_, y, _) in p.evals.items():
            nulls[s].append(score(task, null_outs[s][k], rng.permutation(y)))

    info = {f"{p.first}_rows_used": len(p.y), f"{p.first}_rows": p.train_rows,
            "epochs": check.epochs, "batch_size": check.batch_size,
            "hidden_units": [check.hidden, check.hidden], "learning_rate": check.learning_rate,
            "permutations": check.permutations, "device": settings.device,
            "inputs": p.X.shape[1]}
    suspicious = []
    for i, s in enumerate(p.evals):
        f = _split_finding(check, p, s, scores[s], nulls[s], info, fits_batch)
        if i == 0:
            f.evidence["chart"] = _curve_chart(curves, task, p.first)
        without = scores_without(task, outs[s], p.evals[s][1], p.leak_rows[s], scores[s])
        if without:
            f.evidence["without_leaking_rows"] = without
        findings.append(f)
        if f.evidence["result"]["verdict"] == "suspiciously good":
            suspicious.append(s)
    if data.columns.time:
        findings.append(_time_finding(check, p, settings, seed, data.columns.time))
    if suspicious and check.ablate_top:
        findings += _ablation_findings(check, p, settings, seed, scores, suspicious)
    return findings


# ---------------------------------------------------------------------------------------------
# Steps
# ---------------------------------------------------------------------------------------------

def _overfit_finding(check: "LabelProbe", p: Prepared, settings: Settings,
                     seed: int) -> Finding:
    rng = np.random.default_rng([seed, 1])
    idx = np.sort(rng.choice(len(p.y), size=check.overfit_rows, replace=False))
    Xb, yb = p.X[idx], p.y[idx]
    n = len(idx)
    conflicting, ceiling = _conflicts(Xb, yb, p.task)
    owners = np.array(p.encoder.owners())
    varying = {str(o) for o in owners[np.ptp(Xb, axis=0) > 0]} if Xb.size else set()
    names = list(p.encoder.numeric) + list(p.encoder.categorical)
    constant = [c for c in names if c not in varying]
    # Rows repeating another row's inputs with another label cannot all be fitted: the most
    # any model reaches is ``ceiling``. A few such rows are natural in discrete data (two
    # passengers of the same class, sex and age who fared differently; two pupils of the same
    # school, class type and background with different scores; in coarse survey data 13 of 32
    # rows, a ceiling of 0.78), so the probe must reach ``overfit_min_accuracy`` of it (for
    # accuracy: every row but those) when the inputs vary and can beat a constant prediction
    # (the majority class's share; R² 0): constant or all-zero inputs with an imbalanced label
    # (30 of 32 negatives: reachable 0.94 by predicting the majority) keep the full
    # requirement and fail. Below a ceiling of CONFLICT_CEILING_FLOOR the allowance also needs
    # most input columns to vary in the batch: inputs collapsed to a constant (2 of 3
    # columns constant, a random label: ceiling 0.6) are a broken pipeline, not coarse data.
    required = check.overfit_min_accuracy
    collapsed = 2 * len(constant) >= len(names)
    if (ceiling < 1.0 and varying and ceiling > _constant_fit(yb, p.task)
            and (ceiling >= CONFLICT_CEILING_FLOOR or not collapsed)):
        required = check.overfit_min_accuracy * ceiling
    fit, used = overfit_batch(Xb, yb, p.task, p.n_out, settings, seed, check.overfit_steps,
                              required)
    what = "R²" if p.task == NUMERIC else "training accuracy"
    ok = not math.isnan(fit) and fit >= required
    batch: dict[str, Any] = {"rows": n, "steps_used": used, "step_budget": check.overfit_steps,
                             "fit": round(fit, 4) if not math.isnan(fit) else None,
                             "required": required,
                             "measure": what, "learning_rate": 0.01, "verdict": "fits",
                             "rows_with_identical_inputs_and_different_labels": conflicting,
                             "reachable": ceiling}
    evidence: dict[str, Any] = {"batch": batch}
    if ok:
        because = ""
        if required < check.overfit_min_accuracy:
            because = (f"; {conflicting} of its rows share their inputs with a row of another "
                       f"label, so {what} {_fit(p.task, ceiling)} is the most any model can "
                       f"reach, and {_fit(p.task, required)} is "
                       f"{check.overfit_min_accuracy:.0%} of it")
        message = (f"The probe fits a {n}-row {p.first} batch ({what} {_fit(p.task, fit)} >= "
                   f"{_fit(p.task, required)}{because}) in {used} of {check.overfit_steps} "
                   "steps: inputs and labels are wired so that a model can learn them.")
        return Finding(severity=Severity.INFO, metric="overfit_one_batch", value=fit,
                       threshold=required, count=n, splits=[p.first],
                       message=message, evidence=evidence)
    batch.update({"constant_input_columns": constant[:20]})
    got = "a non-finite loss" if math.isnan(fit) else f"{what} {_fit(p.task, fit)}"
    if not math.isnan(fit) and varying and (conflicting == 0 or p.task == NUMERIC):
        # Control: the same batch with its labels shuffled. A probe that cannot memorise
        # shuffled labels either is limited by these inputs (few, low-dimensional columns:
        # memorising 32 arbitrary labels along one noise column needs many sign changes), not
        # fed broken labels; features without signal are not a broken pipeline. A numeric
        # label on a few discrete inputs (a panel's age and sex: 8 distinct inputs) repeats
        # inputs with other values by nature, and gets the control too.
        control, _ = overfit_batch(Xb, np.random.default_rng([seed, 3]).permutation(yb),
                                   p.task, p.n_out, settings, seed, check.overfit_steps,
                                   required)
        batch["shuffled_label_fit"] = None if math.isnan(control) else round(control, 4)
        if math.isnan(control) or control < required:
            batch["verdict"] = "inconclusive"
            message = (f"The probe reaches only {got} on a {n}-row {p.first} batch after "
                       f"{used} steps (needs {_fit(p.task, required)}), and "
                       f"{what} {_fit(p.task, control) if not math.isnan(control) else 'n/a'} "
                       "with the batch's labels shuffled: on these inputs "
                       f"({len(varying)} varying of {len(names)} columns, {p.X.shape[1]} "
                       "encoded inputs) the probe cannot memorise arbitrary labels"
                       + (f" ({conflicting} of the {n} rows repeat inputs with another label "
                          f"value: at most {what} {_fit(p.task, ceiling)} is reachable)"
                          if conflicting else "")
                       + ", so the sanity test is inconclusive — not evidence of broken "
                       "labels or inputs.")
            return Finding(severity=Severity.INFO, metric="overfit_one_batch", value=fit,
                           threshold=required, count=n, splits=[p.first],
                           message=message, evidence=evidence)
    batch["verdict"] = "broken"
    message = (f"The probe reaches only {got} on a {n}-row {p.first} batch after {used} steps "
               f"(needs {_fit(p.task, required)}): the labels or inputs are "
               "broken — "
               f"label/feature misalignment, constant inputs ({len(constant)} of {len(names)} "
               f"columns constant in the batch), or identical inputs with different labels "
               f"({conflicting} of {n} rows); no score of a model trained on them can be "
               "trusted.")
    return Finding(severity=Severity.FAIL, metric="overfit_one_batch",
                   value=None if math.isnan(fit) else fit,
                   threshold=required, count=n, splits=[p.first],
                   message=message, evidence=evidence)


def _constant_fit(y: np.ndarray, task: str) -> float:
    """The fit of one constant prediction: the majority class's share (R² 0 for a number)."""
    if task == NUMERIC or len(y) == 0:
        return 0.0
    return float(np.bincount(y.astype(np.int64)).max() / len(y))


def _conflicts(X: np.ndarray, y: np.ndarray, task: str) -> tuple[int, float]:
    """(rows whose exact inputs occur in the batch with another label value, the best fit any
    model can reach when equal inputs must get equal outputs). Classification: the training
    accuracy sum over distinct inputs of their most common label's count / rows. Numeric: the
    R² of predicting each distinct input's mean label, 1 - SS_within / SS_total (1.0 for a
    constant label)."""
    if len(y) == 0:
        return 0, 1.0
    _, inv = np.unique(X, axis=0, return_inverse=True)
    inv = inv.ravel()
    numeric = task == NUMERIC
    yv = np.asarray(y, dtype=np.float64 if numeric else np.int64)
    pairs, counts = np.unique(np.c_[inv, yv], axis=0, return_counts=True)
    owner = pairs[:, 0].astype(np.int64)  # the distinct input of each (input, label) pair
    conflicting = int((np.bincount(owner, minlength=inv.max() + 1)[inv] > 1).sum())
    if numeric:
        total = float(((yv - yv.mean()) ** 2).sum())
        if total <= 0:
            return conflicting, 1.0
        means = np.bincount(inv, weights=yv) / np.bincount(inv)
        return conflicting, float(1.0 - ((yv - means[inv]) ** 2).sum() / total)
    best = np.zeros(inv.max() + 1, dtype=np.int64)
    np.maximum.at(best, owner, counts)
    return conflicting, float(best.sum() / len(y))


def _fit(task: str, v: float) -> str:
    return f"{v:.3f}" if task == NUMERIC else f"{v:.0%}"


def chance_band(task: str, null: list[float], y: np.ndarray) -> tuple[float, float]:
    """Null mean ± q · s · sqrt(1 + 1/P) (see LabelProbe): for AUCs s = max(measured sd,
    Mann–Whitney sd) and q = z(0.995); for R² s = max(measured sd, 0.005) and
    q = t(0.995, P - 1)."""
    from scipy.stats import norm
    from scipy.stats import t as student

    vals = np.array([v for v in null if not math.isnan(v)])
    if len(vals) < 2:
        return float("nan"), float("nan")
    floor = BAND_FLOOR
    q = float(student.ppf(BAND_LEVEL, len(vals) - 1))
    if task == BINARY:
        floor = max(floor, null_auc_sd(y))
        q = float(norm.ppf(BAND_LEVEL))
    elif task == MULTICLASS:
        sds = [null_auc_sd(y == k) for k in np.unique(y)]
        sds = [v for v in sds if not math.isnan(v)]
        if sds:
            floor = max(floor, math.sqrt(np.mean(np.square(sds)) / len(sds)))
            q = float(norm.ppf(BAND_LEVEL))
    sd = max(float(vals.std(ddof=1)), floor)
    half = q * sd * math.sqrt(1 + 1 / len(vals))
    return float(vals.mean() - half), float(vals.mean() + half)


def _split_finding(check: "LabelProbe", p: Prepared, s: str, value: float, null: list[float],
                   info: dict[str, Any], fits_batch: str) -> Finding:
    X, y, usable = p.evals[s]
    metric_text = METRIC_TEXT[p.task]
    lo, hi = chance_band(p.task, null, y)
    probe = dict(info, **{f"{s}_rows_used": len(y), f"{s}_rows": usable})
    base = (f"The probe trained on {p.first} scores {metric_text} {value:.3f} on "
            f"{fmt_count(len(y))} {s} rows (chance band [{lo:.3f}, {hi:.3f}] from "
            f"{len(null)} permuted-label retrains)")
    if math.isnan(value) or math.isnan(lo):
        return Finding(severity=Severity.INFO, metric=f"probe_{METRIC[p.task]}", value=None,
                       threshold=None, count=len(y), splits=[p.first, s],
                       message=f"The probe cannot be scored on {fmt_count(len(y))} {s} rows "
                               "(one class only, or a constant label).",
                       evidence={"result": {"verdict": "not scored"}, "probe": probe})
    if value > check.suspicious_above:
        verdict, sev, threshold = "suspiciously good", Severity.WARN, check.suspicious_above
        tail = (f": above {check.suspicious_above} it is suspiciously good — a feature may "
                "leak the label (see the ablation findings).")
    elif value > hi:
        verdict, sev, threshold = "learnable", Severity.INFO, hi
        tail = f": above the band, the label is learnable from {p.first} and generalises to {s}."
    elif value >= lo:
        verdict, sev, threshold = "not learnable", Severity.WARN, hi
        why = ("although the probe fits a single batch, so the inputs and labels are "
               "readable: labels misaligned with features (a shifted join or sort), no signal "
               f"in the features, or too few {s} rows to tell (band ±{(hi - lo) / 2:.3f})"
               if fits_batch == "fits" else
               "and the probe cannot even fit a single batch (see the overfit finding)"
               if fits_batch == "broken" else
               "and the probe cannot memorise even shuffled labels on these inputs: most "
               f"likely the features carry no signal about the label (or too few {s} rows "
               f"to tell, band ±{(hi - lo) / 2:.3f})")
        tail = f": inside the band, the labels do not generalise from {p.first} to {s}, {why}."
    else:
        verdict, sev, threshold = "worse than chance", Severity.WARN, lo
        tail = (f": below the band, the probe does worse than chance on {s} — the label coding "
                "may differ between splits (flipped or re-mapped classes) or the relation "
                "reversed.")
    evidence = {"result": {"verdict": verdict, "score": round(value, 4),
                           "chance_band": [round(lo, 4), round(hi, 4)],
                           "permuted_label_scores": [round(v, 4) for v in null]},
                "probe": probe}
    return Finding(severity=sev, metric=f"probe_{METRIC[p.task]}", value=round(value, 6),
                   threshold=round(threshold, 6), count=len(y), splits=[p.first, s],
                   message=base + tail, evidence=evidence)


MIN_SCORED_ROWS = 50   # evaluation rows left to score without the leaking ones, at least ...
MIN_CLASS_ROWS = 10    # ... and of each class (a binary or multiclass label): fewer say nothing


def scores_without(task: str, out: np.ndarray, y: np.ndarray, leaks: list[LeakRows],
                   score_all: float) -> list[dict[str, Any]]:
    """The probe's score on the evaluation rows without each kind of leaking row
    (:func:`leak_rows`), and without all of them at once when there are several: ``change``
    = score on every row - score without them, an estimate of how much those rows inflate
    the score (the model is not refitted: what the rows add at evaluation). A kind no row
    has is left out; the score is None (no estimate) when fewer than ``MIN_SCORED_ROWS``
    rows are left, or fewer than ``MIN_CLASS_ROWS`` of a class (a random split's "rows
    dated before the end of train" are nearly all of them: the few left score anything)."""
    found = [lk for lk in leaks if lk.mask.any()]
    if len(found) > 1:
        found.append(LeakRows("any", None, "rows of any of these kinds",
                              np.logical_or.reduce([lk.mask for lk in found])))
    rows = []
    full = None if task == NUMERIC else np.bincount(y.astype(np.int64))
    for lk in found:
        keep = ~lk.mask
        enough = keep.sum() >= MIN_SCORED_ROWS
        if enough and full is not None:  # each class as many rows as it has, up to the floor
            kept = np.bincount(y[keep].astype(np.int64), minlength=len(full))
            enough = bool((kept >= np.minimum(full, MIN_CLASS_ROWS)).all())
        s = score(task, out[keep], y[keep]) if enough else float("nan")
        ok = not math.isnan(s) and not math.isnan(score_all)
        rows.append({"rows_left_out": lk.label, "kind": lk.kind, "column": lk.column,
                     "rows": int(lk.mask.sum()), "of": len(lk.mask),
                     "score_all_rows": round(score_all, 4) if not math.isnan(score_all)
                     else None, "score_without": round(s, 4) if ok else None,
                     "change": round(score_all - s, 4) if ok else None})
    return rows


def _curve_chart(curves: Curves, task: str, first: str) -> dict[str, Any]:
    loss = {BINARY: "binary cross-entropy", MULTICLASS: "cross-entropy",
            NUMERIC: "mean squared error (standardised label)"}[task]
    return {"type": "lines", "x": curves.steps, "series": curves.series,
            "title": f"Probe loss while training on {first}", "xlabel": "training step",
            "ylabel": loss}


def _time_finding(check: "LabelProbe", p: Prepared, settings: Settings, seed: int,
                  tcol: str) -> Finding:
    order = time_order(p.sample, tcol)
    h = int(round(len(order) * check.time_holdout_share))
    share_txt = f"{check.time_holdout_share:.0%}"
    if h < 10 or len(order) - h < check.overfit_rows:
        return Finding(severity=Severity.INFO, metric="time_holdout_gap", value=None,
                       threshold=check.time_gap_warn, count=h, splits=[p.first],
                       message=f"Too few {p.first} rows with a known {tcol!r} "
                               f"({fmt_count(len(order))}) to compare holdouts.")
    rng = np.random.default_rng([seed, 3])
    shuffled = rng.permutation(order)
    holdouts = {"random": (shuffled[h:], shuffled[:h]), "latest": (order[:-h], order[-h:])}
    probes = fit_probes(p.X, [p.y[fit] for fit, _ in holdouts.values()], p.task, p.n_out,
                        settings, [seed + 200] * len(holdouts),
                        rows=[fit for fit, _ in holdouts.values()])  # no copies of the rows
    outs = probes.predict([p.X[hold] for _, hold in holdouts.values()])
    out = {name: score(p.task, o, p.y[hold])
           for (name, (_, hold)), o in zip(holdouts.items(), outs)}
    gap = out["random"] - out["latest"]
    metric_text = METRIC_TEXT[p.task]
    evidence = {"holdouts": {"random_holdout_score": round(out["random"], 4),
                             "latest_holdout_score": round(out["latest"], 4),
                             "holdout_rows": h, "fit_rows": len(order) - h,
                             "time_column": tcol},
                "chart": {"type": "bar", "labels": [f"random {share_txt}",
                                                    f"latest {share_txt} by {tcol}"],
                          "values": [out["random"], out["latest"]],
                          "title": f"Probe {metric_text} inside {p.first}",
                          "ylabel": metric_text}}
    if math.isnan(gap):
        return Finding(severity=Severity.INFO, metric="time_holdout_gap", value=None,
                       threshold=check.time_gap_warn, count=h, splits=[p.first],
                       message=f"The {share_txt} holdouts inside {p.first} cannot be scored "
                               "(one class only).", evidence=evidence)
    sev = grade(gap, warn=check.time_gap_warn)
    tail = ("a random split overstates performance: rows close in time share information "
            "(temporal leakage, repeated entities, or drift) — evaluate on a later period."
            if sev != Severity.INFO else "no temporal leakage signal.")
    message = (f"Inside {p.first}, the probe scores {metric_text} {out['random']:.3f} on a "
               f"random {share_txt} holdout ({fmt_count(h)} rows) and {out['latest']:.3f} on "
               f"the latest {share_txt} by {tcol!r} (gap {gap:+.3f}, warn above "
               f"{check.time_gap_warn}): {tail}")
    return Finding(severity=sev, metric="time_holdout_gap", value=round(gap, 6),
                   threshold=check.time_gap_warn, count=h, splits=[p.first], message=message,
                   evidence=evidence)


def family_verdict(rules: Rules, p: Prepared, names: list[str], strengths: np.ndarray,
                   j: int) -> Verdict | None:
    """The leakage checks' verdict (:func:`auditor.judging.leak_rules.judge`) of feature
    ``j``'s single-feature score among the other features' scores, on the train sample:
    copies and label-free relations of the peers within ``singular_gap``, and for a binary
    label the purest cut and the missingness of a numeric feature. None -- the drop stands --
    when the score is not above ``warn_above`` (nothing to weigh: the drop is a joint
    effect), when it is above ``fail_above`` (a feature that strong and that much of the
    probe's score is a leak even among related peers: x + 1.5 y + noise scores AUC 0.98 beside
    its honest source x at 0.86), or for a non-numeric feature of a binary label (categorical,
    boolean, temporal: its cut is not measured here). Scores are the probe's (in-sample
    target rates for categories), not the leakage checks' cross-fitted ones."""
    value = float(strengths[j])
    feat = names[j]
    col = p.sample[feat]
    if not rules.warn_above < value <= rules.fail_above or (
            p.task == BINARY and not col.dtype.is_numeric()):
        return None
    others = [(names[i], float(strengths[i])) for i in range(len(names)) if i != j]
    close = [c for c, v in others if v >= value - rules.singular_gap]
    copies, relations = peer_context(p.sample.with_columns(pl.Series(YCOL, p.y)), feat, close,
                                     YCOL, p.task == NUMERIC, rules.copy_above)
    purity = missing = None
    if p.task == BINARY:
        x = col.cast(pl.Float64)
        purity = pure_region(x.to_numpy(), p.y, rules.pure_tolerance)
        missing = missing_purity((x.is_null() | x.is_nan().fill_null(False)).to_numpy(), p.y)
    return judge(rules, value=value, train_value=value, others=others, name=feat,
                 what="|Spearman rho|" if p.task == NUMERIC else "AUC", purity=purity,
                 missing=missing, copies=copies, relations=relations)


def _ablation_findings(check: "LabelProbe", p: Prepared, settings: Settings, seed: int,
                       scores: dict[str, float], suspicious: list[str]) -> list[Finding]:
    enc = p.encoder
    strengths = column_strengths(p.task, enc.numeric_values(p.sample), enc.codes(p.sample),
                                 p.y)
    names = list(enc.numeric) + list(enc.categorical)
    owners = np.array(enc.owners())
    top = np.argsort(-strengths, kind="stable")[:check.ablate_top]
    metric_text = METRIC_TEXT[p.task]
    alone = "|Spearman ρ|" if p.task == NUMERIC else "AUC"
    findings = []
    # the retrains without each feature are trained together: the feature's input columns
    # are zeroed (a zero input adds nothing and its weights get no gradient, so the probe
    # uses the other columns only; the initial weights are drawn for the full width), by
    # column masks on the shared inputs (no copy of the inputs per ablated feature)
    ablated = [j for j in top if (owners != names[j]).any()]
    X, evals, base, restricted = p.X, {s: p.evals[s][0] for s in suspicious}, scores, None
    width = max(check.ablation_columns, check.ablate_top)
    if len(names) > width and ablated:
        # A wide table: the retrains see only the inputs of the ablation_columns strongest
        # features (found cheaply by their single-feature scores), beside a reference probe
        # on the same inputs, so a drop compares like with like at a fraction of the cost.
        keep_feats = {names[j] for j in
                      np.argsort(-strengths, kind="stable")[:width]}
        cols = np.flatnonzero(np.isin(owners, list(keep_feats)))
        X, owners = p.X[:, cols], owners[cols]
        evals = {s: p.evals[s][0][:, cols] for s in suspicious}
        restricted = len(keep_feats)
    drop_masks = [owners == names[j] for j in ablated]
    if restricted is not None:
        drop_masks = [np.zeros(len(owners), dtype=bool)] + drop_masks
    probes = fit_probes(X, [p.y] * len(drop_masks), p.task, p.n_out, settings,
                        [seed + 1] * len(drop_masks), drop=drop_masks) if ablated else None
    outs = {s: probes.predict(evals[s], drop=drop_masks)
            for s in suspicious} if probes is not None else {}
    if restricted is not None:
        base = {s: score(p.task, outs[s][0], p.evals[s][1]) for s in suspicious}
        outs = {s: o[1:] for s, o in outs.items()}
    for i, j in enumerate(ablated):
        feat = names[j]
        after = {s: score(p.task, outs[s][i], p.evals[s][1]) for s in suspicious}
        drops = {s: base[s] - after[s] for s in suspicious}
        s = max(drops, key=lambda k: drops[k])
        drop = drops[s]
        sev = grade_at_least(drop, fail=check.ablation_fail_drop)
        family = family_verdict(check.family_rules(), p, names, strengths, j) \
            if sev == Severity.FAIL else None
        if family is not None and family.rule != "strong_not_singular":
            family = None  # the drop stands: no grading to show
        if family is not None:
            sev = Severity.WARN
            tail = (f": {feat!r} carries part of the score, but the leakage checks' rules see "
                    f"a family of related measurements ({family.reason}): a strong honest "
                    "feature looks like this too.")
        elif sev == Severity.FAIL:
            tail = (f": {feat!r} carries the suspiciously good score — check whether it is "
                    "computed after the label, from the future, or from the evaluation rows.")
        else:
            tail = ": the score does not hinge on it."
        on = (f" (retrained on the {restricted} strongest of {len(names)} features)"
              if restricted is not None else "")
        message = (f"Without {feat!r} the probe's {metric_text}{on} on {s} goes from "
                   f"{base[s]:.3f} to {after[s]:.3f} (drop {drop:.3f}, fail at "
                   f"{check.ablation_fail_drop}); alone, {feat!r} scores {alone} "
                   f"{strengths[j]:.3f} on {p.first}{tail}")
        evidence: dict[str, Any] = {
            "single_feature_score": round(float(strengths[j]), 4),
            "ablation": [{"split": k, "score": round(base[k], 4),
                          "without_feature": round(after[k], 4), "drop": round(drops[k], 4)}
                         for k in suspicious]}
        if family is not None:
            evidence["grading"] = family.evidence()
        if restricted is not None:
            evidence["ablation_inputs"] = {
                "features": restricted, "of_features": len(names),
                "note": "the reference probe and the retrains without each feature see only "
                        f"the {restricted} features with the strongest single-feature scores "
                        "(ablation_columns)"}
        if not findings:  # the ranking once, with the first (strongest) feature
            evidence["strongest_features"] = [
                {"feature": names[i], "single_feature_score": round(float(strengths[i]), 4)}
                for i in np.argsort(-strengths, kind="stable")[:10]]
        findings.append(Finding(severity=sev, metric="ablation_drop", value=round(drop, 6),
                                threshold=check.ablation_fail_drop, count=len(p.evals[s][1]),
                                subject=feat, splits=[p.first, s], message=message,
                                evidence=evidence))
    return findings

