"""A scheduled audit graded against its own history: the ledger's last runs.

A nightly pipeline's splits move a little every night (new rows, new days), and the design
null (:mod:`auditor.judging`) sees one night only. With a ledger, the split-level statistics
of :data:`STATISTICS` -- the PSI of every feature and of the label, the adversarial AUC -- are
also compared with the same statistic over the last :data:`RUNS` runs of the ledger (same
check, subject and splits): the robust z-score

    z = (x - median) / (c MAD),   MAD = median |x_i - median|,   c = 1 / Phi^-1(3/4) = 1.4826

(Iglewicz & Hoaglin's modified z; c MAD estimates the standard deviation of normal data,
and one unusual night does not widen it the way it widens a standard deviation). A fail
whose statistic has z <= :data:`Z_MAX` (3.5) is what this pipeline shows night after night
-- its normal movement, not news -- and warns instead: the finding says so, with the
history's median, MAD, z and how many runs. A statistic beyond that range keeps its grade.
With fewer than :data:`MIN_RUNS` earlier runs the history is too short to judge by, and the
report says so. A history with no spread (MAD 0: the same value every night) holds only an
equal value as normal.

Only these differences between splits are judged so: a leak found every night (a copied row,
a post-outcome column) stays a fail however often it repeats; waive it, or fix it. A ledger
is one pipeline's history: runs of other pipelines appended to the same ledger would count
as its past nights (give each pipeline its own ledger file or database).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from auditor.report.results import (CheckResult, Finding, Severity, status_from_findings,
                                    summarize)
from auditor.signoff.ledger import subject_text

RUNS = 20      # earlier runs a statistic is compared with
MIN_RUNS = 5   # fewer earlier runs: too short a history to judge by
Z_MAX = 3.5    # robust z at most this: the pipeline's normal night-to-night movement
MAD_SCALE = 1.482602218505602  # 1 / Phi^-1(3/4): c MAD estimates a normal sd
# per check: the statistic compared, as the ledger's metrics table names it (it keeps every
# feature's PSI each run), and its name in a message
STATISTICS = {"drift.features": ("psi", "PSI"), "drift.label": ("psi", "PSI"),
              "separability.adversarial": ("adversarial_auc", "adversarial AUC")}

Key = tuple[str, str, str]  # (check id, subject, splits joined by "→")


def history_from(ledger: Any, runs: int = RUNS) -> tuple[int, dict[Key, list[float]]]:
    """The number of earlier runs read (at most ``runs``, the newest) and, per (check,
    subject, splits), the statistic (:data:`STATISTICS`) of each of them that measured it,
    oldest first."""
    recent = ledger.runs()[-runs:]
    order = {r["run_id"]: i for i, r in enumerate(recent)}
    series: dict[Key, list[tuple[int, float]]] = {}
    for m in ledger.metrics(run_ids=list(order), check_ids=list(STATISTICS)):
        i = order.get(m["run_id"])
        stat = STATISTICS.get(m["check_id"])
        if i is None or stat is None or m["metric"] != stat[0] or m["value"] is None:
            continue
        series.setdefault((m["check_id"], m["subject"], m["splits"]), []).append(
            (i, float(m["value"])))
    return len(recent), {k: [v for _, v in sorted(pts)] for k, pts in series.items()}


def robust_z(x: float, history: list[float]) -> tuple[float, float, float]:
    """(median, MAD, robust z of ``x``) over ``history``; z is 0 for x equal to the median
    and infinite for any other x when the history has no spread."""
    h = np.asarray(history, dtype=float)
    med = float(np.median(h))
    mad = float(np.median(np.abs(h - med)))
    if mad > 0:
        return med, mad, (x - med) / (MAD_SCALE * mad)
    return med, mad, 0.0 if math.isclose(x, med, rel_tol=1e-9, abs_tol=1e-12) else math.inf


def _statistic(check_id: str, f: Finding) -> Any:
    """The finding's statistic compared with its history: a drift finding's raw PSI (its
    value may be an excess over the design's null), the adversarial AUC itself."""
    metric = STATISTICS[check_id][0]
    if check_id.startswith("drift."):
        return ((f.evidence or {}).get("statistics") or {}).get(metric)
    return f.value if f.metric == metric else None


def grade_against_history(results: list[CheckResult], runs: int,
                          history: dict[Key, list[float]]) -> str | None:
    """Lower every fail of :data:`STATISTICS` whose statistic lies within its history (in
    place, the check's status and summary regraded); every such finding with a history gets
    it as evidence. Returns the report's note: how many runs the history holds, or that it is
    too short."""
    if runs < MIN_RUNS:
        return (f"history: the ledger holds {runs} earlier run{'s' * (runs != 1)}, fewer than "
                f"{MIN_RUNS}: too short to tell a pipeline's normal night-to-night movement "
                "from news, so nothing is graded against it yet")
    lowered = 0
    for c in results:
        if c.id not in STATISTICS:
            continue
        name = STATISTICS[c.id][1]
        changed = False
        for f in c.findings:
            x = _statistic(c.id, f)
            past = history.get((c.id, subject_text(f.subject), "→".join(f.splits or [])), [])
            if not isinstance(x, (int, float)) or len(past) < MIN_RUNS:
                continue
            med, mad, z = robust_z(float(x), past)
            f.evidence = {**(f.evidence or {}), "history": {
                "statistic": name, "runs": len(past), "median": round(med, 6),
                "mad": round(mad, 6), "robust z": round(z, 3) if math.isfinite(z) else None,
                "z_max": Z_MAX}}
            if f.severity == Severity.FAIL and z <= Z_MAX:
                f.severity = Severity.WARN
                f.message += (f"; within this pipeline's own history: {name} {med:.4g} (median "
                              f"of the last {len(past)} runs, MAD {mad:.3g}), robust z "
                              f"{z:.2f} <= {Z_MAX}: its normal night-to-night movement, "
                              "reported as warn")
                lowered += 1
                changed = True
        if changed:
            c.status = status_from_findings(c.findings)
            c.summary = summarize(c.findings)
    return (f"history: drift and the adversarial AUC graded against the ledger's last {runs} "
            f"runs as well (robust z <= {Z_MAX} is normal movement); {lowered} fail"
            f"{'s' * (lowered != 1)} within it reported as warn")
