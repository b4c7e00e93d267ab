"""The Spark engine's ``fit_context`` operation (``leakage.preprocessing``'s measuring).

Every fingerprint of the check (scaling, mean/median imputation, one-hot / vocabulary columns,
target encoding) is measured with Spark aggregates through :class:`SparkContext`, the Spark
engine's :class:`auditor.stats.preprocessing.Context` (the same attributes and measuring
operations), and judged by the check's one judge:

- per-split summaries in one ``groupBy(split)`` pass over all numeric columns (count, mean,
  population and sample variance, min, max, max |x|, integral, non-zero and negative counts);
  the summaries of every union (train+val, train+val+test) are combined on the driver from the
  per-split sufficient statistics (counts, means, ``M2 = n var`` by the parallel formula,
  extremes), not re-scanned;
- rows at each split's min and max, and ``percentile_approx`` brackets of the quartiles of every
  float column for every union (a split's quartiles are read only once a union of the column
  matched robust scaling: measured exactly for those columns alone), in one more ``agg``;
- exact quantiles where a verdict depends on them (robust scaling, where a bracket admits median
  0 and IQR 1; the median of a union, the candidate of a median fill, where a value inside its
  bracket repeats ``min_imputed`` times; the medians and IQR in a fill's details): linear
  interpolation between the exact order statistics, found as the distinct values (with
  their counts) inside ``percentile_approx`` brackets of accuracy ``ACCURACY`` plus the exact
  count below the bracket (one ``agg`` and one ``groupBy``; a bracket that missed is widened
  and re-measured). Other quartiles are the ``percentile_approx`` values (rank error <=
  n / ``ACCURACY``); no verdict reads them (a robust-scaling verdict needs a bracket holding
  median 0 and IQR 1, and such columns are refined);
- fill candidates, neighbours and decimal grids of imputed columns, row sums of one-hot
  groups, and the target-encoding fits (per-level counts and label means, the smoothing's
  weighted median by a window, the weighted RMSE) as Spark aggregates: the driver holds 20
  example levels, never one row per level.

What the driver collects beyond aggregates: the distinct values (with counts) inside each
exact quantile's bracket, about ``6 n / ACCURACY`` per request (0.06% of the rows; widened 16x
and only then to the whole range when a bracket misses), and the six nearest distinct values
of a fill candidate.

Nothing is left out on spark: the same findings, subjects, statuses and (up to float rounding
of sums, ~1e-15 relative) values as on polars.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np

from auditor.core.roles import LabelKind, Roles
from auditor.stats.preprocessing import (combine_summaries, interpolate_quantile,
                                         linear_quantile, robust_possible)
from auditor.engines.spark_columns import col as _c  # user column names, literally

TAG = "__auditor_split"
ACCURACY = 10_000          # percentile_approx accuracy: rank error <= n / ACCURACY
_MARGIN = 3.0              # bracket half-width in units of 1 / ACCURACY
EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)
_QS = (0.25, 0.5, 0.75)


def _F() -> Any:
    from pyspark.sql import functions as F

    return F


def _is_float(data_type: Any) -> bool:
    from pyspark.sql import types as T

    return isinstance(data_type, (T.FloatType, T.DoubleType))


def _x(name: str, is_float: bool) -> Any:
    """The column as double, NaN as null (polars' ``fill_nan(None)``)."""
    F = _F()
    x = _c(name).cast("double")
    return F.when(F.isnan(x), None).otherwise(x) if is_float else x


@contextlib.contextmanager
def _wide_codegen(spark: Any) -> Any:
    """Whole-stage code generation for an aggregation wider than Spark's default
    ``spark.sql.codegen.maxFields`` (100): the summary's 9 aggregates per column exceed it
    from 12 columns on, and the interpreted hash aggregate cost ~1.6x the JVM CPU at 1M
    rows x 26 columns (10.4 vs 6.3 CPU-s). Spark still falls back to the interpreted plan
    when the generated code is too large; the session's setting is restored after."""
    key = "spark.sql.codegen.maxFields"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "100000")
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def _any(*conds: Any) -> Any:
    """``conds[0] | conds[1] | ...`` (a null condition counts as false in a filter)."""
    out = conds[0]
    for c in conds[1:]:
        out = out | c
    return out


def _in(fit_set: tuple[str, ...], names: list[str]) -> Any:
    F = _F()
    return F.col(TAG).isin([names.index(n) for n in fit_set])


# ---------------------------------------------------------------------------------------------
# exact order statistics
# ---------------------------------------------------------------------------------------------

def order_stats(frame: Any, requests: list[tuple[Any, int, int, int]],
                lows: list[float] | None = None, highs: list[float] | None = None,
                margin: float = _MARGIN) -> list[tuple[float, float]]:
    """Exact order statistics ``(x_(k0), x_(k1))`` (0-based ranks, ``k0 <= k1`` close together)
    of each request ``(expr, n, k0, k1)``, ``expr`` a double column of ``frame`` (null: not a
    value) with ``n`` non-null values.

    One ``agg`` of ``percentile_approx`` brackets ``[lo, hi]`` around the two ranks (margin
    ``_MARGIN / ACCURACY``), then one ``agg`` counting values below ``lo`` and one ``groupBy``
    of the distinct values inside the bracket with their counts (about ``2 _MARGIN n /
    ACCURACY`` of them): the statistics are read off the cumulative counts. A bracket that
    missed (the sketch's guarantee failed, or given brackets were wrong) is re-measured with a
    16 times wider margin, and only past a margin of ``ACCURACY / 16`` (brackets of ~12% of
    the values) over the whole range: the driver holds about ``2 margin n / ACCURACY``
    distinct values per request, not the column."""
    F = _F()
    if not requests:
        return []
    if lows is None or highs is None:
        exprs = []
        for i, (e, n, k0, k1) in enumerate(requests):
            lo_p = max(0.0, (k0 + 1) / n - margin / ACCURACY)
            hi_p = min(1.0, (k1 + 1) / n + margin / ACCURACY)
            exprs.append(F.percentile_approx(e, [lo_p, hi_p], ACCURACY).alias(f"b{i}"))
        row = frame.agg(*exprs).collect()[0]
        lows = [float(row[f"b{i}"][0]) for i in range(len(requests))]
        highs = [float(row[f"b{i}"][1]) for i in range(len(requests))]
    below_exprs = [F.sum(F.when(e < lo, 1).otherwise(0)).alias(f"c{i}")
                   for i, ((e, *_), lo) in enumerate(zip(requests, lows))]
    row = frame.agg(*below_exprs).collect()[0]
    below = [int(row[f"c{i}"] or 0) for i in range(len(requests))]
    hits = F.array(*[F.struct(F.lit(i).alias("r"),
                              F.when((e >= lo) & (e <= hi), e).alias("v"))
                     for i, ((e, *_), lo, hi) in enumerate(zip(requests, lows, highs))])
    windows: dict[int, list[tuple[float, int]]] = {i: [] for i in range(len(requests))}
    # rows inside no bracket (nearly all) are dropped before the explode
    for r in (frame.where(_any(*[(e >= lo) & (e <= hi) for (e, *_), lo, hi
                                 in zip(requests, lows, highs)]))
              .select(F.explode(F.filter(hits, lambda s: s["v"].isNotNull())).alias("s"))
              .select("s.r", "s.v").groupBy("r", "v").count().collect()):
        windows[int(r["r"])].append((float(r["v"]), int(r["count"])))
    out: list[tuple[float, float] | None] = []
    retry = []
    for i, (_, n, k0, k1) in enumerate(requests):
        vals = sorted(windows[i])
        cum = below[i]
        found: dict[int, float] = {}
        for v, c in vals:
            for k in (k0, k1):
                if k not in found and cum <= k < cum + c:
                    found[k] = v
            cum += c
        if k0 in found and k1 in found:
            out.append((found[k0], found[k1]))
        else:
            out.append(None)
            retry.append(i)
    if retry and not math.isfinite(margin):  # every value seen: n or the ranks were wrong
        raise ValueError(f"order statistics {[requests[i][1:] for i in retry]} not found")
    if retry:
        again = [requests[i] for i in retry]
        if margin * 16 <= ACCURACY / 16:
            wide = order_stats(frame, again, margin=margin * 16)
        else:  # the last resort: every distinct value
            wide = order_stats(frame, again, [-math.inf] * len(retry), [math.inf] * len(retry),
                               margin=math.inf)
        for i, v in zip(retry, wide):
            out[i] = v
    return out  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# the context: summaries and the judge's measuring operations
# ---------------------------------------------------------------------------------------------

class SparkContext:
    """The Spark counterpart of :class:`auditor.stats.preprocessing.Context`: the same
    attributes (``roles``, ``eps``, ``names``, ``cols``, ``fit_sets``, ``per_split``,
    ``per_set``) and measuring operations, over a frame of every split's numeric columns
    tagged with the split's index (``__auditor_split``)."""

    def __init__(self, splits: dict[str, Any], roles: Roles, cols: list[str],
                 eps: dict[str, float], min_ties: int = 2) -> None:
        F = _F()
        self.min_ties = min_ties  # a union's median is refined when a value repeats this often
        self.splits = splits
        self.roles = roles
        self.eps = eps
        floats = set(eps)
        self.names = names = list(roles.splits)
        self.cols = cols
        self.floats = floats
        self.fit_sets = [names[:i] for i in range(len(names), 1, -1)]  # largest first
        self.exact_quantiles: set[tuple[str, tuple[str, ...], str]] = set()  # (col, target, q)
        parts = [splits[n].select(*[_x(c, c in floats).alias(c) for c in cols],
                                       F.lit(i).alias(TAG))
                 for i, n in enumerate(names)]
        tagged = parts[0]
        for p in parts[1:]:
            tagged = tagged.unionByName(p)
        self.tagged = tagged
        self._summarise()

    # -- summaries -----------------------------------------------------------------------------
    def _summarise(self) -> None:
        F = _F()
        names, cols = self.names, self.cols
        exprs = []
        for i, c in enumerate(cols):
            x = _c(c)
            integral = F.when(F.abs(x) == math.inf, 1).otherwise((x % 1 == 0).cast("int"))
            exprs += [F.count(x).alias(f"{i}|n"), F.avg(x).alias(f"{i}|mean"),
                      F.var_pop(x).alias(f"{i}|var0"), F.min(x).alias(f"{i}|min"),
                      F.max(x).alias(f"{i}|max"), F.max(F.abs(x)).alias(f"{i}|maxabs"),
                      F.min(integral).alias(f"{i}|integral"),
                      F.sum((x != 0).cast("int")).alias(f"{i}|nonzero"),
                      F.sum((x < 0).cast("int")).alias(f"{i}|negative")]
        with _wide_codegen(self.tagged.sparkSession):
            rows = {int(r[TAG]): r for r in self.tagged.groupBy(TAG).agg(*exprs).collect()}
        raw: dict[str, dict[str, dict[str, Any]]] = {}
        for t, n in enumerate(names):
            r = rows.get(t)
            raw[n] = {}
            for i, c in enumerate(cols):
                cnt = int(r[f"{i}|n"]) if r is not None else 0
                d: dict[str, Any] = {"n": cnt}
                for k in ("mean", "var0", "min", "max", "maxabs"):
                    v = r[f"{i}|{k}"] if r is not None and cnt else None
                    d[k] = math.nan if v is None else float(v)
                d["integral"] = bool(r[f"{i}|integral"]) if cnt else False
                d["nonzero"] = int(r[f"{i}|nonzero"] or 0) if cnt else 0
                d["negative"] = int(r[f"{i}|negative"] or 0) if cnt else 0
                raw[n][c] = d
        targets = [(n,) for n in names] + [tuple(s) for s in self.fit_sets]
        combined = {t: {c: combine_summaries([raw[n][c] for n in t]) for c in cols}
                    for t in targets}
        # rows at each split's extremes; quartile brackets of every float column and target
        exprs, spec = [], []
        for i, c in enumerate(cols):
            x = _c(c)
            for t, n in enumerate(names):
                d = raw[n][c]
                if d["n"]:
                    exprs += [F.sum(F.when((F.col(TAG) == t) & (x == d["min"]), 1)
                                    .otherwise(0)).alias(f"{i}|{t}|lo"),
                              F.sum(F.when((F.col(TAG) == t) & (x == d["max"]), 1)
                                    .otherwise(0)).alias(f"{i}|{t}|hi")]
            if c not in self.floats:
                continue
            for j, tgt in enumerate(targets):
                if len(tgt) == 1:  # a split's quartiles: read only for a robust column
                    continue
                n_t = combined[tgt][c]["n"]
                if not n_t:
                    continue
                ps = []
                for q in _QS:
                    k0, k1, _ = linear_quantile(n_t, q)
                    ps += [max(0.0, (k0 + 1) / n_t - _MARGIN / ACCURACY), q,
                           min(1.0, (k1 + 1) / n_t + _MARGIN / ACCURACY)]
                expr = x if len(tgt) == len(names) else F.when(_in(tgt, names), x)
                exprs.append(F.percentile_approx(expr, ps, ACCURACY).alias(f"{i}|q{j}"))
                spec.append((c, tgt, j, expr))
        row = self.tagged.agg(*exprs).collect()[0] if exprs else {}
        for i, c in enumerate(cols):
            for t, n in enumerate(names):
                d = raw[n][c]
                d["n_at_min"] = int(row[f"{i}|{t}|lo"]) if d["n"] else 0
                d["n_at_max"] = int(row[f"{i}|{t}|hi"]) if d["n"] else 0
        for tgt in targets:
            for c in cols:
                s = combined[tgt][c]
                parts = [raw[n][c] for n in tgt if raw[n][c]["n"]]
                s["n_at_min"] = sum(p["n_at_min"] for p in parts if p["min"] == s["min"])
                s["n_at_max"] = sum(p["n_at_max"] for p in parts if p["max"] == s["max"])
                for k in ("median", "q25", "q75"):
                    s[k] = math.nan
        brackets: dict[tuple[str, tuple[str, ...]], list[float]] = {}
        for c, tgt, j, _ in spec:
            vals = [float(v) for v in row[f"{cols.index(c)}|q{j}"]]
            brackets[(c, tgt)] = vals
            s = combined[tgt][c]
            s["q25"], s["median"], s["q75"] = vals[1], vals[4], vals[7]
            for i, q in enumerate(("q25", "median", "q75")):
                if vals[3 * i] == vals[3 * i + 2]:  # a collapsed bracket: exact already
                    self.exact_quantiles.add((c, tgt, q))
        self.per_split = {n: combined[(n,)] for n in names}
        self.per_set = {tuple(s): combined[tuple(s)] for s in self.fit_sets}
        # exact quartiles where a verdict reads them: robust scaling possible (a bracket holds
        # median 0 and an IQR of 1 is reachable) -> every target of that column; the median of
        # a union (a median fill's candidate)
        exact: list[tuple[str, tuple[str, ...], Any, str, list[float]]] = []
        maybe: list[tuple[str, tuple[str, ...], Any, str, list[float]]] = []
        # (only the unions are sketched: a split's quartiles are read by the verdict only
        # after a union of that column matched robust scaling, so they are measured exactly
        # for the robust columns alone, without a bracket)
        robust = {c for c, tgt, _, _ in spec if robust_possible(brackets[(c, tgt)])
                  and not combined[tgt][c]["integral"]}
        for c, tgt, _, expr in spec:
            b = brackets[(c, tgt)]
            if c in robust:
                exact += [(c, tgt, expr, q, b[3 * i:3 * i + 3])
                          for i, q in enumerate(("q25", "median", "q75"))]
            elif b[3] != b[5]:
                maybe.append((c, tgt, expr, "median", b[3:6]))
        for c in sorted(robust, key=cols.index):
            for t, n in enumerate(names):
                if combined[(n,)][c]["n"]:
                    expr = F.when(F.col(TAG) == t, _c(c))
                    exact += [(c, (n,), expr, q, None) for q in ("q25", "median", "q75")]
        # a union's median matters only as a median fill's candidate: a value repeated at
        # least min_ties (min_imputed) times; medians whose bracket holds none stay approximate
        # (count_near finds no candidate there either way) and cost no window collect
        exact += [t for t, ties in zip(maybe, self._ties(maybe)) if ties >= self.min_ties]
        self._exact(exact, combined)

    def _ties(self, todo: list[tuple[str, tuple[str, ...], Any, str, list[float]]]
              ) -> list[int]:
        """The largest count of one value inside each bracket (one groupBy, tiny collect)."""
        if not todo:
            return []
        F = _F()
        hits = F.array(*[F.struct(F.lit(i).alias("r"),
                                  F.when((e >= b[0]) & (e <= b[2]), e).alias("v"))
                         for i, (_, _, e, _, b) in enumerate(todo)])
        rows = (self.tagged.where(_any(*[(e >= b[0]) & (e <= b[2]) for _, _, e, _, b in todo]))
                .select(F.explode(F.filter(hits, lambda x: x["v"].isNotNull())).alias("s"))
                .select("s.r", "s.v").groupBy("r", "v").count()
                .groupBy("r").agg(F.max("count").alias("m")).collect())
        most = {int(r["r"]): int(r["m"]) for r in rows}
        return [most.get(i, 0) for i in range(len(todo))]

    def _exact(self, todo: list[tuple[str, tuple[str, ...], Any, str, list[float]]],
               combined: dict[tuple[str, ...], dict[str, dict[str, Any]]]) -> None:
        """Exact quartiles ``key`` of (column, target) from their brackets (the summary
        pass's ``percentile_approx`` values, reused), or, for a split's quartiles of a robust
        column (bracket None), sketched by :func:`order_stats` in one more pass."""
        if not todo:
            return
        requests, where = [], []
        for c, tgt, expr, key, _ in todo:
            n_t = combined[tgt][c]["n"]
            q = {"q25": 0.25, "median": 0.5, "q75": 0.75}[key]
            k0, k1, w = linear_quantile(n_t, q)
            requests.append((expr, n_t, k0, k1))
            where.append((c, tgt, key, w))
        given = [i for i, t in enumerate(todo) if t[4] is not None]
        free = [i for i, t in enumerate(todo) if t[4] is None]  # no bracket: sketched here
        stats: list[Any] = [None] * len(todo)
        for part, got in ((given, order_stats(self.tagged, [requests[i] for i in given],
                                              [todo[i][4][0] for i in given],  # type: ignore
                                              [todo[i][4][2] for i in given])),  # type: ignore
                          (free, order_stats(self.tagged, [requests[i] for i in free]))):
            for i, v in zip(part, got):
                stats[i] = v
        for (c, tgt, key, w), (a, b) in zip(where, stats):
            combined[tgt][c][key] = interpolate_quantile(a, b, w, key == "median")
            self.exact_quantiles.add((c, tgt, key))

    # -- the judge's measuring operations (see auditor.stats.preprocessing.Context) ------------
    def _values(self, splits: tuple[str, ...], c: str) -> Any:
        F = _F()
        return F.when(_in(tuple(splits), self.names), _c(c))

    def set_rows(self, fit_set: tuple[str, ...]) -> int:
        return sum(self.roles.rows[n] for n in fit_set)

    def count_near(self, fit_set: tuple[str, ...],
                   specs: list[tuple[str, str, float, float]]) -> dict[str, int]:
        F = _F()
        exprs = [F.sum(F.when(F.abs(self._values(fit_set, c) - v) <= tol, 1).otherwise(0))
                 .alias(f"e{i}") for i, (c, _, v, tol) in enumerate(specs)]
        row = self.tagged.agg(*exprs).collect()[0]
        return {f"{c}\x00{k}": int(row[f"e{i}"]) for i, (c, k, _, _) in enumerate(specs)}

    def fill_profile(self, fit_set: tuple[str, ...], c: str, v: float, tol: float,
                     median: bool) -> dict[str, Any]:
        F = _F()
        x = self._values(fit_set, c)
        near = F.abs(x - v) <= tol
        grid_exprs = []
        for d in range(7):
            y = x * 10.0 ** d
            on = F.abs(y - F.rint(y)) <= 64 * EPS64 * F.greatest(F.lit(1.0), F.abs(y))
            grid_exprs.append(F.min(F.when(~near, on.cast("int"))).alias(f"g{d}"))
        row = self.tagged.agg(F.count(x).alias("n"),
                              F.sum(F.when(near, 1).otherwise(0)).alias("within"),
                              *grid_exprs).collect()[0]
        n, n_others = int(row["n"]), int(row["n"]) - int(row["within"])
        within = (self.tagged.select(x.alias("v")).where(F.abs(F.col("v") - v) <= tol)
                  .groupBy("v").count().agg(F.max("count")).collect()[0][0])
        grid = None
        if n_others:
            grid = next((d for d in range(7) if row[f"g{d}"] == 1), None)
        window = -1.0
        if median and n_others:
            k25 = linear_quantile(n_others, 0.25)
            k75 = linear_quantile(n_others, 0.75)
            others = F.when(~near, x)
            (a25, b25), (a75, b75) = order_stats(self.tagged, [(others, n_others, *k25[:2]),
                                                               (others, n_others, *k75[:2])])
            window = 0.25 * (interpolate_quantile(a75, b75, k75[2], False)
                             - interpolate_quantile(a25, b25, k25[2], False))
        neighbour = 1
        if n_others:
            g = (self.tagged.select(x.alias("v")).where(F.abs(F.col("v") - v) > tol)
                 .groupBy("v").count().withColumn("d", F.abs(F.col("v") - v)))
            top = [int(r["count"]) for r in g.orderBy("d", "v").limit(6).collect()]
            if window >= 0:
                w = g.where(F.col("d") <= window).agg(F.max("count")).collect()[0][0]
                top.append(int(w or 0))
            neighbour = max(top) if top else 1
        return {"cnt": int(within or 0), "n": n, "grid": grid, "neighbour": neighbour}

    def fill_candidates_of(self, splits: tuple[str, ...], c: str, v: float, tol: float
                           ) -> tuple[int, dict[str, float]]:
        F = _F()
        x = self._values(tuple(splits), c)
        far = F.abs(x - v) > tol
        row = self.tagged.agg(F.count(x).alias("n"),
                              F.sum(F.when(far, 1).otherwise(0)).alias("m"),
                              F.avg(F.when(far, x)).alias("mean"),
                              F.sum(F.when(far & (x < v), 1).otherwise(0)).alias("b")
                              ).collect()[0]
        n, m = int(row["n"]), int(row["m"])
        if m == 0:
            return n, {}
        others = F.when(far, x)
        k0, k1, w = linear_quantile(m, 0.5)
        # the median with one copy of v: m + 1 values, v at rank b (after the b others < v)
        j0, j1, wj = linear_quantile(m + 1, 0.5)
        b = int(row["b"])
        ranks = sorted({k0, k1} | {r - (r > b) for r in (j0, j1) if r != b})
        stats = order_stats(self.tagged, [(others, m, r, r) for r in ranks])
        at = {r: s[0] for r, s in zip(ranks, stats)}

        def with_copy(r: int) -> float:
            return v if r == b else at[r - (r > b)]

        return n, {"mean": float(row["mean"]),
                   "median": interpolate_quantile(at[k0], at[k1], w, True),
                   "median_with_one_copy": interpolate_quantile(with_copy(j0), with_copy(j1),
                                                                wj, True)}

    def rows_near(self, c: str, v: float, tol: float) -> dict[str, int]:
        F = _F()
        # NaN counts as not near (polars compares NaN as false): the tagged column holds null
        rows = {int(r[TAG]): int(r["k"]) for r in self.tagged.groupBy(TAG).agg(
            F.sum(F.when(F.abs(_c(c) - v) <= tol, 1).otherwise(0)).alias("k")
        ).collect()}
        return {n: rows.get(i, 0) for i, n in enumerate(self.names)}

    def rows_any_near(self, fit_set: tuple[str, ...], specs: list[tuple[str, float, float]]
                      ) -> int:
        F = _F()
        cond = None
        for c, v, tol in specs:
            one = F.coalesce(F.abs(_c(c) - v) <= tol, F.lit(False))
            cond = one if cond is None else cond | one
        return int(self.tagged.where(_in(tuple(fit_set), self.names) & cond).count())

    def rows_any_nonzero(self, split: str, cols: list[str]) -> int:
        F = _F()
        cond = None
        for c in cols:
            one = F.coalesce(_c(c).cast("double"), F.lit(0.0)) != 0
            cond = one if cond is None else cond | one
        return int(self.splits[split].where(cond).count())

    def row_sums(self, group: list[str]) -> list[dict[str, bool]]:
        F = _F()
        xs = [_c(g).cast("double") for g in group]
        s = xs[0]
        q = xs[0] * xs[0]
        null = xs[0].isNull()
        for e in xs[1:]:
            s, q, null = s + e, q + e * e, null | e.isNull()
        stacked = None  # the raw columns (NaN kept, as polars sums them) of every split
        for i, n in enumerate(self.names):
            part = self.splits[n].select(s.alias("s"), q.alias("q"), null.alias("null"),
                                              F.lit(i).alias(TAG))
            stacked = part if stacked is None else stacked.unionByName(part)
        rows = {int(r[TAG]): r for r in stacked.groupBy(TAG).agg(
            F.max(F.col("null").cast("int")).alias("null"),
            F.min((F.col("s") == 1).cast("int")).alias("one_hot"),
            F.min(((F.abs(F.col("q") - 1) <= 1e-6) | (F.col("q") == 0)).cast("int")).alias("l2"),
            F.max((F.abs(F.col("q") - 1) <= 1e-6).cast("int")).alias("unit")).collect()}
        out = []
        for i, _ in enumerate(self.names):  # an empty split: all() True, any() False
            r = rows.get(i, {"null": None, "one_hot": None, "l2": None, "unit": None})
            out.append({"null": r["null"] == 1, "one_hot": r["one_hot"] in (1, None),
                        "l2": r["l2"] in (1, None), "unit": r["unit"] == 1})
        return out

    # -- target encoding -----------------------------------------------------------------------
    def _label(self, split: str) -> Any:
        """The label of ``split`` as a double column (binary non-numeric labels: 1 for the
        larger value), or None when it cannot be read as numbers."""
        F = _F()
        from pyspark.sql import types as T

        y = self.roles.label
        df = self.splits[split]
        dtype = df.schema[y].dataType
        col = _c(y)
        if isinstance(dtype, (T.NumericType, T.BooleanType)):
            x = col.cast("double")
            return F.when(F.isnan(x), None).otherwise(x) if _is_float(dtype) else x
        if self.roles.label_kind != LabelKind.BINARY:
            return None
        top = self._top_label()
        if top is None:
            return None
        return F.when(col.isNull(), None).otherwise((col.cast("string") == top).cast("double"))

    def _top_label(self) -> str | None:
        F = _F()
        y = self.roles.label
        tops = [r[0] for r in (self.splits[n].agg(F.max(_c(y).cast("string")))
                               .collect()[0] for n in self.names) if r[0] is not None]
        return max(tops) if tops else None

    def label_range(self) -> tuple[float, float] | None:
        F = _F()
        ys = {n: self._label(n) for n in self.names}
        if any(v is None for v in ys.values()):
            return None
        stacked = None  # every split's label, one pass (was one per split)
        for n, y in ys.items():
            part = self.splits[n].select(y.alias("y"))
            stacked = part if stacked is None else stacked.unionByName(part)
        r = stacked.agg(F.min("y"), F.max("y")).collect()[0]  # type: ignore[union-attr]
        return None if r[0] is None else (float(r[0]), float(r[1]))

    def _later(self, cols: list[str], raw: list[str] = ()) -> Any:
        """The later splits' ``cols`` (float NaN as null) and ``raw`` columns, stacked."""
        parts = [self.splits[n].select(
            *[_x(c, c in self.floats).alias(c) for c in cols],
            *[_c(k) for k in raw if k not in cols]) for n in self.names[1:]]
        out = parts[0]
        for p in parts[1:]:
            out = out.unionByName(p)
        return out

    def encoding_distincts(self, cols: list[str]
                           ) -> tuple[dict[str, int], dict[str, int], int]:
        F = _F()
        later = self._later(cols)
        r = later.agg(*[F.count_distinct(_c(c)).alias(f"d{i}")
                        for i, c in enumerate(cols)]).collect()[0]
        n_later = {c: int(r[f"d{i}"]) for i, c in enumerate(cols)}
        train = self.splits[self.names[0]]
        r = train.agg(*[(F.count_distinct(_c(c))
                         + F.max(_c(c).isNull().cast("int"))).alias(f"d{i}")
                        for i, c in enumerate(cols)]).collect()[0]
        n_train = {c: int(r[f"d{i}"] or 0) for i, c in enumerate(cols)}
        return n_later, n_train, sum(self.roles.rows[n] for n in self.names[1:])

    def level_keys(self, cols: list[str], keys: list[str]) -> dict[str, str | None]:
        """As :func:`auditor.stats.preprocessing.encoded_level_keys`: one ``groupBy`` per key
        over the later splits, for every column at once."""
        F = _F()
        out: dict[str, str | None] = {c: None for c in cols}
        if not cols or not keys:
            return out
        later = self._later(cols, keys)
        height = sum(self.roles.rows[n] for n in self.names[1:])
        r = later.agg(*[(F.count_distinct(_c(k))
                         + F.max(_c(k).isNull().cast("int"))).alias(f"k{i}")
                        for i, k in enumerate(keys)],
                      *[F.count_distinct(_c(c)).alias(f"c{i}")
                        for i, c in enumerate(cols)]).collect()[0]
        levels = [int(r[f"k{i}"] or 0) for i in range(len(keys))]
        values = {c: int(r[f"c{i}"]) for i, c in enumerate(cols)}
        for k, n_levels in zip(keys, levels):
            if not 2 <= n_levels <= height // 2:
                continue
            todo = [c for c in cols if out[c] is None and c != k and values[c] <= n_levels]
            if not todo:
                continue
            per = later.groupBy(_c(k)).agg(*[F.count_distinct(_c(c)).alias(f"u{i}")
                                                for i, c in enumerate(todo)])
            r = per.agg(*[F.sum((F.col(f"u{i}") >= 1).cast("int")).alias(f"g{i}")
                          for i in range(len(todo))],
                        *[F.max(f"u{i}").alias(f"m{i}") for i in range(len(todo))]).collect()[0]
            for i, c in enumerate(todo):
                if int(r[f"g{i}"] or 0) >= 2 and r[f"m{i}"] == 1:
                    out[c] = k
        return out

    def encoding_fits(self, c: str, key: str) -> dict[str, Any] | None:
        """As :func:`auditor.stats.preprocessing.encoding_fits`, with the per-level table
        (level, encoded value, later rows, labelled rows and mean label per fit set) left on
        the executors: :func:`_level_fit` fits it with Spark aggregates, so the driver holds
        a few numbers and 20 example levels however many levels the key has."""
        F = _F()
        names = self.names

        def frame(n: str) -> Any:
            y = self._label(n)
            return self.splits[n].select(_c(key).alias("k"),
                                              _x(c, True).alias("v"), y.alias("y"),
                                              F.lit(names.index(n)).alias(TAG))

        stacked = frame(names[0])
        for n in names[1:]:
            stacked = stacked.unionByName(frame(n))
        later = stacked.where((F.col(TAG) > 0) & F.col("v").isNotNull())
        train_levels = (stacked.where((F.col(TAG) == 0) & F.col("y").isNotNull())
                        .groupBy("k").agg(F.count(F.lit(1)).alias("nt")))
        mapping = (later.groupBy("k").agg(F.min("v").alias("v"), F.count(F.lit(1)).alias("w"))
                   .join(train_levels, on="k", how="inner"))
        if mapping.limit(2).count() < 2:
            return None
        out: dict[str, Any] = {}
        for fs in [[names[0]], *self.fit_sets]:
            rows = stacked.where(F.col(TAG).isin([names.index(n) for n in fs])
                                 & F.col("y").isNotNull())
            r = rows.agg(F.count(F.lit(1)).alias("rows"), F.avg("y").alias("p")).collect()[0]
            p = math.nan if r["p"] is None else float(r["p"])
            lv = rows.groupBy("k").agg(F.count(F.lit(1)).alias("n"), F.avg("y").alias("ybar"))
            out["+".join(fs)] = _level_fit(mapping.join(lv, on="k", how="inner"), p,
                                           int(r["rows"]))
        return out


def _level_fit(j: Any, p: float, rows: int) -> dict[str, Any]:
    """:func:`auditor.stats.preprocessing.level_fit` over the joined per-level Spark frame
    ``j`` (k, v, w, n, ybar): the weighted RMSE of ``v - (n ybar + m p)/(n + m)`` at ``m = 0``
    and at ``m_hat``, the weighted median of the implied ``m = n (ybar - v)/(v - p)`` (the
    first in ascending order whose cumulative weight reaches half the total, as numpy's
    ``searchsorted``), all as Spark aggregates (the cumulative weight by a window on the
    executors); the 20 heaviest levels as examples."""
    from pyspark.sql import Window

    F = _F()
    n, ybar, v, w = (F.col(x).cast("double") for x in ("n", "ybar", "v", "w"))
    implied = F.when(v - F.lit(p) != 0, n * (ybar - v) / (v - F.lit(p)))
    ok = implied.isNotNull() & ~F.isnan(implied) & (F.abs(implied) != math.inf) & (implied >= 0)
    j = j.select("k", n.alias("n"), ybar.alias("ybar"), v.alias("v"), w.alias("w"),
                 F.when(ok, implied).alias("implied"))

    def sse(m: Any) -> Any:
        fitted = (F.col("n") * F.col("ybar") + m * F.lit(p)) / (F.col("n") + m)
        return F.sum(F.col("w") * (F.col("v") - fitted) ** 2)

    r = j.agg(F.count(F.lit(1)).alias("levels"), F.sum("w").alias("sw"),
              sse(F.lit(0.0)).alias("sse0"),
              F.sum(F.when(F.col("implied").isNotNull(), F.col("w"))).alias("half")).collect()[0]
    sw = float(r["sw"] or 0.0)

    def rmse(total: Any) -> float:
        return float(math.sqrt(float(total) / sw)) if sw and total is not None else math.nan

    best = (rmse(r["sse0"]), 0.0)
    if r["half"]:
        cum = F.sum("w").over(Window.orderBy("implied").rowsBetween(
            Window.unboundedPreceding, Window.currentRow))
        m_hat = (j.where(F.col("implied").isNotNull()).select("implied", cum.alias("cw"))
                 .where(F.col("cw") >= float(r["half"]) / 2).agg(F.min("implied"))
                 .collect()[0][0])
        m_hat = float(m_hat)
        got = rmse(j.agg(sse(F.lit(m_hat))).collect()[0][0])
        if got < best[0]:
            best = (got, m_hat)
    from auditor.stats.preprocessing import short

    top = j.orderBy(F.col("w").desc(), F.col("k").asc_nulls_last()).limit(20).collect()
    return {"rmse": best[0], "m": best[1], "levels": int(r["levels"]), "rows": rows,
            "examples": [{"level": short(e["k"]), "value": float(e["v"]),
                          "label_mean": float(e["ybar"]), "rows": int(e["n"])} for e in top]}


# ---------------------------------------------------------------------------------------------
# the checks
# ---------------------------------------------------------------------------------------------
