"""Time backtests: the same time split made again inside the earlier split, the null of a
time design.

In a split by time, train -> test drift mixes what time moves by itself (prices with
inflation, a sport's rules, a sensor's ageing) with what is wrong. An honest split of the same
data made the same way shows the first part. Train -> test cannot be made again inside train
(train is all the earlier history there is), so the comparison is made on one geometry:
the last R rows of the earlier split against the compared split (``recent``), and, for the
null, R rows of the earlier split against its w rows that follow a gap of g rows, at
:data:`POSITIONS` positions stepping back from its end (w = the compared split's rows, g = the
rows of the splits between them, e.g. val when train is compared with test; R = half of the
n - w - g rows left, so the positions slide over R rows). Every comparison then spans the
same rows and the same lag; a drift is judged on how far the recent one exceeds the largest
backtest. When w + g is more than half of the earlier split, both are shrunk in proportion to
half of it.

Placement is in rows, turned into cuts of the time column by the earlier split's empirical
CDF on a grid of :data:`GRID` equally spaced times between its first and last time (one
``tallies`` pass; when the rows between the 0.5% and 99.5% ranks span less than
:data:`CORE_SPAN` of the range, as a far-off sentinel time makes happen, a second pass places
the grid between them): each row target goes to the grid time whose rows-before is closest, so a
coarse time (years) gives whole periods. Backtests whose cuts coincide are made once; one
with fewer than :data:`MIN_ROWS` rows on a side is not made; fewer than two left, the pair has
no null (the note says why) and is judged as before. Each comparison is measured on about
:data:`MAX_ROWS` rows at most (the pair's splits sampled beyond, :func:`views`): the null's
sampling noise at that size (PSI ~ (bins - 1)(1 / n_ref + 1 / n_cur) ~ 7e-4 over 10 bins;
KS D by chance ~ 0.87 sqrt(1 / n_ref + 1 / n_cur) ~ 0.008) is far below any threshold.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import numpy as np
import polars as pl

from auditor.core.roles import REFERENCE, Kind, Roles
from auditor.engines.operations import Between, Num, Operations, Subset

POSITIONS = 8      # backtests per compared pair, at most
GRID = 200         # time points of the earlier split's CDF the cuts are chosen from
CORE_SPAN = 0.5    # 99% of the rows within less of the time range: the grid is refined once
MIN_ROWS = 20      # rows a backtest needs on each side
MAX_ROWS = 50_000  # rows of one honest comparison (both sides), a seeded sample beyond


@dataclass(frozen=True)
class Window:
    """Rows of ``split`` with ``time`` from ``lo`` to before ``hi`` (None: open), ``rows`` of
    them; ``after`` / ``last``: the last time before ``lo`` (None: from the start) and the last
    time in the window. Times as :class:`~auditor.engines.operations.Num` reads them."""

    split: str
    time: str
    lo: float | None
    hi: float | None
    rows: int
    after: float | None
    last: float

    def subset(self, frame: str) -> Subset:
        """The window's rows of ``frame`` (this split's rows, or a sample of them)."""
        return Subset(frame, Between(Num(self.time), lo=self.lo, hi=self.hi))


@dataclass(frozen=True)
class Backtest:
    """One honest comparison inside the earlier split: ``ref`` rows against the ``cur`` rows
    that follow them after the gap."""

    ref: Window
    cur: Window


@dataclass(frozen=True)
class Backtests:
    """The backtests of one compared pair (``tests``, possibly empty) on time column ``time``
    of kind ``kind``; ``recent``: the earlier split's last rows the compared split is measured
    against on the same geometry; ``note``: how they were placed, or why there are none."""

    pair: tuple[str, str]
    time: str
    kind: Kind | None
    tests: list[Backtest]
    note: str
    recent: Window | None = None

    def describe(self, b: Backtest) -> str:
        """``train rows after 1940 through 1944 (50) against those after 1944 through 1949
        (50, to the end)``."""
        return f"{self.rows(b.ref)} against those {self.span(b.cur)}"

    def rows(self, w: Window) -> str:
        return f"{w.split} rows {self.span(w)}"

    def span(self, w: Window) -> str:
        start = "from the start" if w.after is None else f"after {fmt_time(w.after, self.kind)}"
        end = ", to the end" if w.hi is None else ""
        return f"{start} through {fmt_time(w.last, self.kind)} ({w.rows:,}{end})"


def fmt_time(x: float, kind: Kind | None) -> str:
    """A cut as the time column reads: dates and datetimes from epoch microseconds."""
    if kind == Kind.DATETIME:
        t = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=float(x))
        return t.strftime("%Y-%m-%d %H:%M:%S").removesuffix(" 00:00:00")
    return f"{x:.6g}"


def plan(engine: Operations, roles: Roles, pairs: list[tuple[str, str]]
         ) -> dict[tuple[str, str], Backtests]:
    """The backtests of every pair whose earlier split is a split (not the reference
    snapshot), by the declared time column (one ``ranges`` and one ``tallies`` pass)."""
    t = roles.columns.time
    pairs = [p for p in pairs if p[0] != REFERENCE]
    if not t or not pairs:
        return {}
    kind = roles.kinds.get(t)
    names = list(roles.splits)
    rows = engine.split_rows()
    earlier = sorted({a for a, _ in pairs})
    ranges = engine.ranges([Num(t)])
    grids: dict[str, np.ndarray] = {}
    asked = {}
    for a in earlier:
        r = ranges[a][Num(t)]
        if r.min is None or r.max is None or not float(r.max) > float(r.min):
            continue
        grids[a] = np.linspace(float(r.min), float(r.max), GRID + 1)[1:]
        asked[a] = [Between(Num(t), hi=float(g)) for g in grids[a]]
    tallied = engine.tallies(asked) if asked else {}
    # a few far-off times (a 1970 or 2099 sentinel) squeeze the rows into a few cells of the
    # equal grid: it is made again between the cells holding the 0.5% and 99.5% ranks
    again = {}
    for a, hits in tallied.items():
        timed = hits[0].compared
        cdf = np.array([0] + [h.hits for h in hits])
        edges = np.concatenate([[float(ranges[a][Num(t)].min)], grids[a]])
        lo = int(np.searchsorted(cdf, 0.005 * timed, side="right")) - 1
        hi = int(np.searchsorted(cdf, 0.995 * timed, side="left"))
        lo_t, hi_t = edges[max(lo, 0)], edges[min(hi, len(edges) - 1)]
        if timed and lo_t < hi_t and hi_t - lo_t < CORE_SPAN * (edges[-1] - edges[0]):
            grids[a] = np.concatenate([np.linspace(lo_t, hi_t, GRID + 1)[1:], [edges[-1]]])
            again[a] = [Between(Num(t), hi=float(g)) for g in grids[a]]
    if again:
        tallied |= engine.tallies(again)
    out = {}
    for a, b in pairs:
        if a not in grids:
            out[a, b] = Backtests((a, b), t, kind, [], f"`{t}` takes one value in {a}: no "
                                  "earlier and later rows to backtest")
            continue
        hits = tallied[a]
        timed = hits[0].compared
        cdf = np.array([0] + [h.hits for h in hits[:-1]] + [timed], dtype=float)
        cuts = np.concatenate([[-math.inf], grids[a][:-1], [math.inf]])
        last = [math.nan] + [math.nan if h.largest is None else float(h.largest)
                             for h in hits[:-1]] + [float(ranges[a][Num(t)].max)]
        gap = sum(rows[s] for s in names[names.index(a) + 1:names.index(b)]) \
            if a in names and b in names else 0
        out[a, b] = _place((a, b), t, kind, timed, rows[b], gap,
                           _Grid(a, t, cdf, cuts, np.array(last)))
    return out


@dataclass(frozen=True)
class _Grid:
    """An earlier split's candidate cuts: per cut, the rows before it and the last time
    before it (index 0: the start, -inf; the last: the end, +inf)."""

    split: str
    time: str
    cdf: np.ndarray
    cuts: np.ndarray
    last: np.ndarray

    def at(self, r: float) -> int:
        """The cut whose rows-before is closest to ``r`` (the earlier one on a tie)."""
        return int(np.argmin(np.abs(self.cdf - r)))

    def window(self, i: int, k: int) -> Window:
        lo, hi = self.cuts[i], self.cuts[k]
        return Window(self.split, self.time, None if math.isinf(lo) else float(lo),
                      None if math.isinf(hi) else float(hi), int(self.cdf[k] - self.cdf[i]),
                      None if i == 0 else float(self.last[i]), float(self.last[k]))


def _place(pair: tuple[str, str], t: str, kind: Kind | None, n: int, w: float, g: float,
           grid: _Grid) -> Backtests:
    """Backtests of an earlier split of ``n`` timed rows for a compared split of ``w`` rows
    after a gap of ``g`` rows (see the module docstring)."""
    a, b = pair
    shrunk = w + g > n / 2
    if shrunk:
        w, g = w * n / 2 / (w + g), g * n / 2 / (w + g)
    r = (n - w - g) / 2
    ends = [n - r * k / (POSITIONS - 1) for k in range(POSITIONS)]
    tests, seen = [], set()
    for e in ends:
        cut = (grid.at(e - w - g - r), grid.at(e - w - g), grid.at(e - w), grid.at(e))
        if cut in seen or not cut[0] < cut[1] <= cut[2] < cut[3]:
            continue
        seen.add(cut)
        bt = Backtest(grid.window(cut[0], cut[1]), grid.window(cut[2], cut[3]))
        if bt.ref.rows >= MIN_ROWS and bt.cur.rows >= MIN_ROWS:
            tests.append(bt)
    end = len(grid.cdf) - 1
    recent = grid.window(grid.at(n - r), end)
    if len(tests) < 2 or recent.rows < MIN_ROWS:
        return Backtests(pair, t, kind, [], f"{a} has too few distinct `{t}` periods for "
                         f"two backtests of {b}'s size ({len(tests)} made)")
    how = (f"{b} is compared with the last ~{r:,.0f} rows of {a} (`{t}` after "
           f"{fmt_time(recent.after, kind) if recent.after is not None else 'its start'}), and "
           f"{len(tests)} backtests inside {a} compare ~{r:,.0f} rows with the ~{w:,.0f} that "
           f"follow them" + (f" after a gap of ~{g:,.0f} rows" if g else "")
           + (f" (shrunk in proportion: {b} and the splits between hold more than half as many "
              f"rows as {a})" if shrunk else f" (as many as {b}"
              + (", the gap as many as the splits between" if g else "") + ")"))
    return Backtests(pair, t, kind, tests, how, recent)


def views(engine: Operations, plans: dict[tuple[str, str], Backtests], columns: list[str],
          seed: int) -> tuple[Operations | None, dict[tuple[str, str], list[tuple[str, str]]]]:
    """One polars engine holding, per pair with backtests, its recent comparison first and
    then each backtest's two sides as splits (``columns`` and the time column only); and per
    pair those comparisons' (ref, cur) names. The rows are the engine's driver data (polars:
    the loaded data; Spark: the run's seeded driver-side sample, collected once): the windows
    are filters of rows already in this process, so a pair's nine comparisons cost no scan of
    the data. Each pair's two splits are sampled once (seeded) at the rate that leaves its
    largest comparison about :data:`MAX_ROWS` rows (every comparison of a pair spans about the
    same rows; a smaller one is thinned at the same rate), and the windows filter the samples:
    at 1M train rows 17 filters of 80,000 rows instead of 1M. A pair whose splits have no rows
    there (or an engine without driver data) gets none."""
    from auditor.engines.polars_engine import PolarsEngine
    from auditor.errors import NotApplicable

    try:
        driver = engine.driver_data()
    except NotApplicable:
        return None, {}
    kept = driver.kept
    wanted = list(dict.fromkeys([*{bt.time for bt in plans.values()}, *columns]))
    frames = {s: f.select([c for c in wanted if c in f.columns])
              for s, f in driver.data.splits.items()}
    keep = {s: kept[s] / n if n else 1.0 for s, n in driver.rows.items()}
    pool: dict[str, pl.DataFrame] = {}
    parts: dict[str, Subset] = {}
    names: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for p, (pair, bt) in enumerate(plans.items()):
        a, b = pair
        if not bt.tests or bt.recent is None or a not in frames or b not in frames \
                or not kept[a] or not kept[b] or bt.time not in frames[a].columns:
            continue
        largest = max([bt.recent.rows * keep[a] + kept[b]]
                      + [(t.ref.rows + t.cur.rows) * keep[a] for t in bt.tests])
        frac = min(1.0, MAX_ROWS / max(1.0, largest))
        early, late = f"{a}@{p}", f"{b}@{p}"
        for name, s in ((early, a), (late, b)):
            pool[name] = frames[s].sample(fraction=frac, seed=seed) if frac < 1 else frames[s]
        parts[f"recent{p}"] = bt.recent.subset(early)
        parts[f"current{p}"] = Subset(late, None)
        names[pair] = [(f"recent{p}", f"current{p}")]
        for k, t in enumerate(bt.tests):
            ref, cur = f"backtest{p}.{k}.ref", f"backtest{p}.{k}.cur"
            parts[ref], parts[cur] = t.ref.subset(early), t.cur.subset(early)
            names[pair].append((ref, cur))
    if not parts:
        return None, {}
    return PolarsEngine(pool, seed=seed).subsets(parts, seed=seed), names


def time_backtests(engine: Operations, roles: Roles, pairs: list[tuple[str, str]]
                   ) -> dict[tuple[str, str], Backtests]:
    """:func:`plan` for the pairs cut by the time column (:func:`~auditor.judging.design.
    time_splits`) when the run's split design is time (declared or inferred); none
    otherwise. Planned once per run and pairs."""
    from auditor.judging.design import split_design, time_splits

    if split_design(engine, roles).design != "time":
        return {}
    cut = time_splits(engine, roles, pairs)
    todo = [p for p in pairs if cut.get(p) and p[0] != REFERENCE]
    if not todo:
        return {}
    plans: dict[tuple[str, str], Backtests] = engine.cached(
        ("backtest.plan", tuple(todo)), lambda: plan(engine, roles, todo))
    return plans
