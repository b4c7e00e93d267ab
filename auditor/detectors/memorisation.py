"""Near-copies across splits that hashing misses: evaluation rows unusually close to a train row."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable

import numpy as np
import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.roles import Roles
from auditor.detectors.measured import judged, stated
from auditor.engines.operations import DriverData, Operations
from auditor.loading.data import AuditData
from auditor.engines.polars_rows import declared_ids, rows_equal
from auditor.errors import NotApplicable
from auditor.probes.features import Encoder, model_features, sample_rows
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_count, fmt_share, grade

CHUNK_ROWS = 16_384     # reference rows per distance block (queries x chunk float32)
QUERY_ROWS = 2_048      # query rows per distance block (2,048 x 16,384 float32: 128 MB)
ENCODE_ROWS = 131_072   # reference rows encoded at a time (bounds memory at 1M+ rows)
ENCODE_CELLS = 1 << 26  # ... fewer on a wide table: rows x encoded width (256 MB float32)
CELL_CHARS = 40


def chance_share(q: float, m: int) -> float:
    """Probability that a distance exchangeable with ``m`` baseline distances falls below their
    interpolated ``q`` quantile: (1 + q (m - 1)) / (m + 1) (rank over m + 1 values)."""
    return (1.0 + q * (m - 1)) / (m + 1) if m else q


@dataclass(frozen=True, kw_only=True)
class Memorisation:
    """Rows of a later split lie far closer to a train row than train rows lie to each other.

    A fail means a share of the evaluation rows are near-copies of training rows — jittered or
    rounded copies, augmentations, oversampling (SMOTE) or interpolation done before the split —
    so the evaluation partly measures memorisation. Exact and hash-equal copies are left to
    ``leakage.duplicates``. Fix: deduplicate near-copies (or group them) before splitting, and
    augment or oversample only inside the training split.

    Features: numerics standardised with train's mean and sd (missing -> 0 plus an indicator),
    categoricals one-hot over train's ``max_levels`` most frequent levels scaled by 1/sqrt(2) (a
    level mismatch adds 1 to the squared distance, like one sd of a numeric column); the time
    column and ids are not features. Distance: Euclidean, to the nearest row of the reference
    (all of train up to ``max_reference_rows``, else a seeded sample). Baseline (chance): for up
    to ``baseline_rows`` train rows in the reference, the distance to the nearest *other*
    reference row; threshold = its ``baseline_quantile`` quantile. Every row of each later split
    is scanned (exact nearest neighbour by blocked matrix products) as long as rows x reference
    rows x encoded width stays within ``max_comparisons`` (1e10: a few seconds) and
    ``eval_rows``; beyond, a seeded sample of that many rows (at least 1,000) is scanned and the
    count is scaled to the split. A scanned row whose feature values all equal some train row's
    (64-bit hash of the feature columns, verified column by column) is an exact copy: it is
    excluded and counted in the evidence, as are baseline rows with an exact copy elsewhere in
    train. Near-copies = remaining scanned rows with distance < threshold (strictly, so
    discrete data on a grid stays quiet); when flagged, the evidence lists them as (train row,
    later row, distance) triples, up to ``max_pairs``, with their exact total. When a split is
    only sampled and (reference rows + its rows) x encoded width <= ``max_grid_cells`` (about
    5 s), every one of its rows is also searched by ``grid_tables`` shifted grids of
    cell width = threshold and a hash join (:mod:`auditor.detectors.near_copies`; linear cost,
    each candidate's exact distance decides): the pairs found over all rows are listed, complete
    for close copies (jitter), not for pairs near the threshold; the graded count stays the
    sample's.

    By chance a row falls below the threshold with probability c = (1 + q (m - 1)) / (m + 1),
    q = ``baseline_quantile``, m = baseline rows: the threshold is the interpolated order
    statistic at rank 1 + q (m - 1) of m exchangeable distances, and a new exchangeable distance
    lands below rank r with probability r / (m + 1). c ~ q for large m (0.011 at m = 1,000),
    but 0.049 for a 24-row train set, whose 1% quantile is its minimum. The graded value is the
    excess share, near-copy share minus c (warn above ``warn_above``, fail above
    ``fail_above``), and it is flagged only when the count is also significant under
    Binomial(rows, c) at ``alpha`` (the p-value qualifies, the effect size decides). The count
    scales to the whole split by its sampling fraction.
    """

    id: ClassVar[str] = "separability.memorisation"
    title: ClassVar[str] = "Near-copies of train rows (nearest-neighbour memorisation)"
    cost: ClassVar[Cost] = Cost.STATS
    needs: ClassVar[Needs] = Needs(splits=2)
    warn_above: float = 0.01
    fail_above: float = 0.05
    baseline_quantile: float = 0.01
    alpha: float = 0.001
    eval_rows: int = 200_000
    baseline_rows: int = 1_000
    max_reference_rows: int = 1_000_000
    max_comparisons: float = 1e10
    max_levels: int = 10
    max_examples: int = 20
    max_pairs: int = 1_000
    grid_tables: int = 2
    max_grid_cells: float = 2e8

    def __post_init__(self) -> None:
        for name in ("warn_above", "fail_above"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not 0 <= v <= 1:
                raise ValueError(f"{name} must be a share in [0, 1]; got {v!r}")
        for name in ("baseline_quantile", "alpha"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not 0 < v < 1:
                raise ValueError(f"{name} must be a number in (0, 1); got {v!r}")
        if not isinstance(self.grid_tables, int) or not 0 <= self.grid_tables <= 16:
            raise ValueError(f"grid_tables must be an integer in [0, 16]; got "
                             f"{self.grid_tables!r}")
        for name in ("eval_rows", "baseline_rows", "max_reference_rows", "max_levels",
                     "max_pairs"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        if not isinstance(self.max_comparisons, (int, float)) or self.max_comparisons < 1e6:
            raise ValueError(f"max_comparisons must be a number >= 1e6; got "
                             f"{self.max_comparisons!r}")
        if not isinstance(self.max_examples, int) or self.max_examples < 0:
            raise ValueError(f"max_examples must be >= 0; got {self.max_examples!r}")

    def run(self, data: AuditData) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: Roles) -> DriverData:
        """The splits' rows in this process (Spark: its seeded driver-side sample)."""
        return engine.driver_data()

    def judge(self, m: DriverData) -> list[Finding]:
        """Nearest-row distances on the rows ``m`` holds; when the first split itself is
        sampled, a near copy is found only when its twin was drawn, and the finding says
        its count is a lower bound."""
        findings = self._findings(m.data)
        first = next(iter(m.rows))
        if first in m.sampled:
            share = m.kept[first] / m.rows[first]
            for f in findings:
                f.message += (f"; {first} is sampled too ({fmt_share(share)} of its rows), so "
                              f"a near copy counts only when its {first} twin is in the "
                              "sample: the count is a lower bound")
        return stated(findings, m)

    def _findings(self, data: AuditData) -> list[Finding]:
        numeric, categorical = model_features(data)
        cols = numeric + categorical
        if not cols:
            raise NotApplicable("no feature columns to measure distances on")
        first, *later = data.split_names
        train = data.splits[first]
        if train.height < 3:
            raise NotApplicable(f"{first} has {train.height} rows; the chance baseline needs "
                                "at least 3")
        seed = data.seed
        ref_idx = sample_rows(train.height, self.max_reference_rows, seed + 11)
        reference = train.select(cols)[ref_idx] if len(ref_idx) < train.height \
            else train.select(cols)
        enc = Encoder.fit(reference, numeric, categorical, max_levels=self.max_levels)
        scale = 1 / math.sqrt(2)

        # Baseline: reference rows without an exact copy elsewhere in train.
        hashes = data.row_hashes(first, cols)
        dup_in_train = hashes.is_duplicated().to_numpy()[ref_idx]
        candidates = np.flatnonzero(~dup_in_train)
        if len(candidates) < 2:
            raise NotApplicable(f"every {first} row has an exact copy in {first} (discrete "
                                "features?): distances say nothing beyond leakage.duplicates")
        base_pos = candidates[sample_rows(len(candidates), self.baseline_rows, seed + 12)]
        queries = [enc.dense(reference[base_pos], onehot_scale=scale)]
        selves = [base_pos]
        plans = []
        width = enc.dense(reference[:1], onehot_scale=scale).shape[1] + 1
        affordable = int(self.max_comparisons // (len(ref_idx) * width * max(len(later), 1)))
        every_exact: dict[str, np.ndarray] = {}  # splits searched whole by the grid
        for i, name in enumerate(later):
            frame = data.splits[name]
            scan = min(self.eval_rows, max(affordable, 1_000))
            pick = sample_rows(frame.height, scan, seed + 13 + i)
            if self._grid_runs(len(pick), frame.height, len(ref_idx), width):
                every_exact[name] = _exact_copies(data, first, name, cols,
                                                  np.arange(frame.height))
                exact = every_exact[name][pick]
            else:
                exact = _exact_copies(data, first, name, cols, pick)
            keep = pick[~exact]
            plans.append((name, frame.height, pick, int(exact.sum()), keep, i))
            queries.append(enc.dense(frame.select(cols)[keep], onehot_scale=scale))
            selves.append(np.full(len(keep), -1))
        Q = np.vstack(queries)
        step = encode_rows(width)
        blocks = ((start, enc.dense(reference[start:start + step], onehot_scale=scale))
                  for start in range(0, reference.height, step))
        nearest = nearest_rows(Q, blocks, np.concatenate(selves))
        R_near = enc.dense(reference[nearest], onehot_scale=scale).astype(np.float64)
        dist = np.sqrt(((Q.astype(np.float64) - R_near) ** 2).sum(1))
        baseline = dist[:len(base_pos)]
        threshold = float(np.quantile(baseline, self.baseline_quantile))
        if not threshold > 0:  # no row can lie closer than 0: say why instead of "distance < 0"
            raise NotApplicable(
                f"{fmt_share(self.baseline_quantile)} of the {first} rows without an exact copy "
                f"lie at distance 0 from another {first} row (features that do not tell rows "
                "apart: discrete or few-valued?): distances say nothing beyond "
                "leakage.duplicates")
        findings = []
        offset = len(base_pos)
        for name, total, pick, n_exact, keep, i in plans:
            d = dist[offset:offset + len(keep)]
            nn = nearest[offset:offset + len(keep)]
            offset += len(keep)
            grid = None
            if name in every_exact:
                grid = self._grid(data, enc, reference, ref_idx, first, name, cols, threshold,
                                  seed + 31 + i, every_exact[name])
            findings.append(self._finding(data, first, name, total, len(pick), n_exact, keep,
                                          d, ref_idx[nn], baseline, threshold, len(ref_idx),
                                          train.height, cols, grid))
        return findings

    def _grid_runs(self, sampled: int, total: int, n_ref: int, width: int) -> bool:
        """Is a split only sampled and small enough for the shifted-grid search of all rows?"""
        return (sampled < total and bool(self.grid_tables)
                and (n_ref + total) * width <= self.max_grid_cells)

    def _grid(self, data: AuditData, enc: Encoder, reference: pl.DataFrame,
              ref_idx: np.ndarray, first: str, name: str, cols: list[str], threshold: float,
              seed: int, exact: np.ndarray) -> tuple[pl.DataFrame, str, int]:
        """Near-copy pairs over every row of ``name`` (exact copies, ``exact``, left out) by the
        shifted-grid hash join of :mod:`auditor.detectors.near_copies`: (pairs as train row,
        later row, distance; note; rows searched)."""
        from auditor.detectors.near_copies import grid_near_pairs

        frame = data.splits[name]
        rows = np.arange(frame.height)[~exact]
        found, note = grid_near_pairs(lambda f: enc.dense(f, onehot_scale=1 / math.sqrt(2)),
                                      reference, frame.select(cols), rows, threshold,
                                      tables=self.grid_tables, seed=seed)
        found = found.with_columns(pl.Series("ref", ref_idx[found["ref"].to_numpy()],
                                             dtype=pl.Int64))
        return found, note, len(rows)

    def _finding(self, data: AuditData, first: str, name: str, total: int, sampled: int,
                 n_exact: int, keep: np.ndarray, d: np.ndarray, train_rows: np.ndarray,
                 baseline: np.ndarray, threshold: float, n_ref: int, n_train: int,
                 cols: list[str], grid: tuple[pl.DataFrame, str, int] | None = None
                 ) -> Finding:
        from scipy.stats import binom

        n = len(keep)
        if n == 0 and sampled:  # every evaluated row is an exact copy: nothing to measure
            return Finding(
                severity=Severity.INFO, metric="near_copy_excess_share", value=0.0,
                threshold=self.fail_above, count=0, splits=[first, name],
                message=f"every {'' if sampled == total else 'sampled '}{name} row "
                        f"({fmt_count(sampled)}) is an exact copy of a {first} row "
                        "(leakage.duplicates counts them): no row is left to measure "
                        "near-copies on",
                evidence={"sampling": {f"{name}_rows_sampled": sampled, f"{name}_rows": total,
                                       "exact_copies_excluded": n_exact}})
        near = d < threshold
        count = int(near.sum())
        share = count / n if n else 0.0
        q = chance_share(self.baseline_quantile, len(baseline))
        excess = share - q
        p_value = float(binom.sf(count - 1, n, q)) if n else 1.0
        severity = grade(excess, warn=self.warn_above, fail=self.fail_above)
        if p_value >= self.alpha:
            severity = Severity.INFO
        estimate = int(round(share * total))
        every = sampled == total
        message = (f"{fmt_count(count)} of {fmt_count(n)} {'' if every else 'sampled '}{name} "
                   f"rows{' without an exact copy' if every and n_exact else ''} "
                   f"({fmt_share(share)}"
                   f"; {fmt_share(q)} expected by chance) lie closer to a {first} row than "
                   f"{fmt_share(1 - self.baseline_quantile)} of {first} rows lie to their "
                   f"nearest other {first} row "
                   f"(distance < {threshold:.3g})")
        if severity != Severity.INFO and every:
            message += ": near-copies that exact hashing misses (row pairs in the evidence)."
        elif severity != Severity.INFO:
            message += (f": near-copies that exact hashing misses, about {fmt_count(estimate)} "
                        f"of {fmt_count(total)} {name} rows.")
        else:
            message += ": no more near-copies than chance."
        order = np.argsort(d, kind="stable")
        flagged = order[:count][:self.max_examples]
        ev_hist = _histogram(baseline, d, first, name)
        evidence: dict[str, Any] = {
            "sampling": {f"{name}_rows_sampled": sampled, f"{name}_rows": total,
                         "exact_copies_excluded": n_exact,
                         f"{first}_reference_rows": n_ref, f"{first}_rows": n_train,
                         "baseline_rows": len(baseline), "baseline_quantile": q,
                         "distance_threshold": round(threshold, 6),
                         "binomial_p_value": p_value, "features": len(cols),
                         "columns_not_used": _unused(data, cols)},
            "chart": ev_hist}
        if n_exact:
            evidence["sampling"]["note"] = (f"{n_exact} sampled rows are exact copies of {first} "
                                            "rows (reported by leakage.duplicates)")
        if len(flagged):
            evidence["closest_pairs"] = _examples(data, first, name, cols, keep[flagged],
                                             train_rows[flagged], d[flagged])
        if grid is not None:
            pairs = pl.concat([
                grid[0].select(pl.col("ref").alias("a"), pl.col("row").cast(pl.Int64).alias("b"),
                               "distance"),
                pl.DataFrame({"a": train_rows[near].astype(np.int64),
                              "b": keep[near].astype(np.int64), "distance": d[near]})]) \
                .sort(["b", "distance"]).unique("b", keep="first", maintain_order=True)
            if pairs.height:
                evidence["near_copies"] = {
                    "rule": f"distance < {threshold:.6g} to a {first} row",
                    "method": (f"all {grid[2]:,} {name} rows without an exact copy searched by "
                               "shifted grids (complete for close copies such as jittered "
                               "ones, not for pairs near the threshold; chance pairs "
                               "included), plus the exhaustive scan of the sample"),
                    "pairs": pairs.height, "listed": min(pairs.height, self.max_pairs),
                    "rows": [{f"{first}_row": int(a), f"{name}_row": int(b),
                              "distance": round(float(x), 6)}
                             for a, b, x in pairs.head(self.max_pairs).iter_rows()]}
                if grid[1]:
                    evidence["near_copies"]["note"] = grid[1]
                message += (f" Over all {name} rows, {fmt_count(pairs.height)} near-copy pairs "
                            "are listed in the evidence.")
        elif count and severity != Severity.INFO:
            listed = np.sort(np.flatnonzero(near))[:self.max_pairs]
            evidence["near_copies"] = {
                "rule": f"distance < {threshold:.6g} to the nearest {first} row",
                "pairs": count, "listed": len(listed),
                "rows": [{f"{first}_row": int(train_rows[j]), f"{name}_row": int(keep[j]),
                          "distance": round(float(d[j]), 6)} for j in listed]}
        return Finding(severity=severity, metric="near_copy_excess_share",
                       value=round(excess, 6), threshold=self.fail_above, count=count,
                       splits=[first, name], message=message, evidence=evidence)


def encode_rows(width: int) -> int:
    """Reference rows encoded at a time: ``ENCODE_ROWS``, or fewer when ``width`` encoded
    columns would make a block larger than ``ENCODE_CELLS`` (a 100k x 3,500 block was 1.4 GB);
    a multiple of ``CHUNK_ROWS``, so :func:`nearest_rows` multiplies the same chunks and its
    result does not depend on it."""
    fit = ENCODE_CELLS // max(width, 1) // CHUNK_ROWS * CHUNK_ROWS
    return max(CHUNK_ROWS, min(ENCODE_ROWS, fit))


def nearest_rows(Q: np.ndarray, blocks: Iterable[tuple[int, np.ndarray]] | np.ndarray,
                 selves: np.ndarray) -> np.ndarray:
    """Index of the nearest reference row for each row of ``Q`` (squared Euclidean, float32);
    the reference is an array or an iterable of (first row index, block) so that it never has
    to be encoded whole; ``selves[i] >= 0`` excludes that reference row for query i.

    One matrix product per CHUNK_ROWS rows: [Q, 1] @ [-2 R, |R|^2]^T = |q - r|^2 - |q|^2, whose
    argmin over r is the nearest row (|q|^2 is constant per query)."""
    if isinstance(blocks, np.ndarray):
        blocks = [(0, blocks)]
    if len(Q) > QUERY_ROWS:  # bound the distance block (QUERY_ROWS x CHUNK_ROWS float32)
        blocks = list(blocks)
        return np.concatenate([nearest_rows(Q[i:i + QUERY_ROWS], blocks,
                                            selves[i:i + QUERY_ROWS])
                               for i in range(0, len(Q), QUERY_ROWS)])
    Qa = np.hstack([Q, np.ones((len(Q), 1), np.float32)]).astype(np.float32)
    best = np.full(len(Q), np.inf, np.float32)
    arg = np.zeros(len(Q), np.int64)
    rows = np.arange(len(Q))
    has_self = selves >= 0
    chunks = ((first + i, block[i:i + CHUNK_ROWS]) for first, block in blocks
              for i in range(0, len(block), CHUNK_ROWS))
    for start, C in chunks:
        Ca = np.hstack([-2 * C, (C.astype(np.float32) ** 2).sum(1, keepdims=True)])
        D = Qa @ Ca.T
        inside = has_self & (selves >= start) & (selves < start + len(C))
        D[rows[inside], selves[inside] - start] = np.inf
        a = D.argmin(1)
        v = D[rows, a]
        better = v < best
        best[better] = v[better]
        arg[better] = a[better] + start
    return arg


def _exact_copies(data: AuditData, first: str, later: str, cols: list[str],
                  pick: np.ndarray) -> np.ndarray:
    """For each picked row of ``later``: do its feature values equal some row of ``first``?"""
    ha = pl.DataFrame({"h": data.row_hashes(first, cols)}).with_row_index("row_a")
    hb = pl.DataFrame({"h": data.row_hashes(later, cols)[pick], "pos": np.arange(len(pick))})
    cand = hb.join(ha.group_by("h").agg(pl.col("row_a").min()), on="h", how="inner")
    out = np.zeros(len(pick), dtype=bool)
    if cand.height:
        rows_b = pl.Series(pick[cand["pos"].to_numpy()])
        equal = rows_equal(data.splits[first], cand["row_a"], data.splits[later], rows_b, cols)
        out[cand["pos"].to_numpy()[equal]] = True
    return out


def _unused(data: AuditData, cols: list[str]) -> dict[str, str]:
    """Columns that are not distance features, and why (none is dropped silently)."""
    used = set(cols)  # not ``c in cols``: a list scan per feature was quadratic in columns
    out = {c: "the time column" if c == data.columns.time else "free text"
           if c in data.columns.text else "not numeric or categorical"
           for c in data.features if c not in used}
    for issue in data.schema_issues:
        if issue.problem in ("missing", "dtype") and issue.column not in out:
            out[issue.column] = ("missing from a split" if issue.problem == "missing"
                                 else "types differ across splits")
    return out


def _histogram(baseline: np.ndarray, d: np.ndarray, first: str, name: str) -> dict[str, Any]:
    """Overlaid shares of log10 distances: the chance baseline vs the evaluation rows."""
    both = np.concatenate([baseline, d])
    pos = both[both > 0]
    lo = math.floor(np.log10(pos.min()) * 4) / 4 if pos.size else -3.0
    hi = math.ceil(np.log10(pos.max()) * 4) / 4 if pos.size else 1.0
    hi = max(hi, lo + 0.25)
    edges = np.linspace(lo, hi, min(40, int(round((hi - lo) * 8)) + 1) + 1)
    out = {}
    for label, v in ((f"chance: {first} → {first}", baseline), (f"{name} → {first}", d)):
        logs = np.log10(np.clip(v, 10 ** lo, None))
        counts, _ = np.histogram(logs, bins=edges)
        out[label] = [round(float(c) / max(len(v), 1), 5) for c in counts]
    return {"type": "hist", "edges": [round(float(e), 4) for e in edges], "series": out,
            "title": f"Distance to the nearest {first} row", "xlabel": "log10 distance",
            "ylabel": "share of rows"}


def _examples(data: AuditData, first: str, name: str, cols: list[str], rows_b: np.ndarray,
              rows_a: np.ndarray, d: np.ndarray) -> list[dict[str, Any]]:
    """Example pairs: row numbers (and the declared ids of both rows), distance and the
    values that differ (first few columns)."""
    a = data.splits[first].select(cols)[rows_a]
    b = data.splits[name].select(cols)[rows_b]
    ids_a = declared_ids(data, first, pl.Series(rows_a, dtype=pl.Int64))
    ids_b = declared_ids(data, name, pl.Series(rows_b, dtype=pl.Int64))
    out = []
    for i, (ra, rb, dist, row_a, row_b) in enumerate(zip(rows_a, rows_b, d, a.iter_rows(),
                                                         b.iter_rows())):
        diffs = [f"{c}: {_cell(x)} → {_cell(y)}" for c, x, y in zip(cols, row_a, row_b)
                 if x != y]
        text = "; ".join(diffs[:4]) + (f"; … (+{len(diffs) - 4})" if len(diffs) > 4 else "")
        out.append({f"{first}_row": int(ra), f"{name}_row": int(rb),
                    **{f"{first} {k}": v[i] for k, v in ids_a.items()},
                    **{f"{name} {k}": v[i] for k, v in ids_b.items()},
                    "distance": round(float(dist), 5), "differences": text or "(none)"})
    return out


def _cell(v: Any) -> str:
    s = f"{v:.6g}" if isinstance(v, float) else (repr(v) if isinstance(v, str) else str(v))
    return s if len(s) <= CELL_CHARS else s[:CELL_CHARS - 1] + "…"
