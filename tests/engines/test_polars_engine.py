"""The polars engine's operations against plain numpy / Python references (no Spark needed)."""
from __future__ import annotations


import numpy as np
import pytest
import polars as pl

from auditor.engines import Engine
from auditor.engines.polars_engine import PolarsEngine
from auditor.core.checks import is_measured
from auditor.core.registry import CHECKS, load_check_class
from tests.engines.fixtures import planted


def _engine() -> PolarsEngine:
    return PolarsEngine(planted())


def test_polars_engine_satisfies_the_engine_protocol():
    assert isinstance(_engine(), Engine)


def test_every_registered_check_is_written_once_as_measure_and_judge():
    # no check keeps a per-engine twin: each measures through the operations on every engine
    assert [i for i in CHECKS if not is_measured(load_check_class(i)())] == []


def test_missing_keys_are_no_entity_and_negative_zero_is_zero():
    df = pl.DataFrame({"a": [1.0, float("nan"), float("nan"), None, None, -0.0, 0.0]})
    e = PolarsEngine({"s": df, "t": df.slice(4, 3)})
    ks = e.key_summaries(["a"])["s"]["a"]
    assert (ks.rows, ks.keyed_rows, ks.distinct, ks.repeated_rows) == (7, 3, 2, 1)
    assert ks.rows_in_repeated == 2 and ks.sum_squares == 1 + 4
    ko = e.key_overlaps(["a"], [("s", "t")])[("a", "s", "t")]
    assert (ko.shared, ko.rows_earlier, ko.rows_later) == (1, 2, 2)  # 0.0 in both


def test_stratified_sample():
    e = _engine()
    assert e.stratified_sample("test", 10_000).height == 150  # small splits come whole
    s1 = e.stratified_sample("train", 100, by="y", seed=1)
    assert s1.equals(e.stratified_sample("train", 100, by="y", seed=1))
    assert 60 <= s1.height <= 140


# ---------------------------------------------------------------------------------------------
# the batched operations (auditor.engines.operations), against brute force in plain Python
# ---------------------------------------------------------------------------------------------

def _ops_frames():
    from datetime import date

    rng = np.random.default_rng(4)
    n = 60
    x = rng.normal(size=n)
    x[:5] = np.nan
    a = pl.DataFrame({"x": x, "k": rng.choice(["p", "q", None, "r"], n).tolist(),
                      "d": [date(2024, 1, 1 + int(i)) for i in rng.integers(0, 28, n)],
                      "city": rng.choice(["New York", "new york", "Boston", "NEW-YORK"], n)})
    b = a.slice(0, 30).with_columns(pl.col("x") + 1.0)
    return {"a": a, "b": b}


def test_ranges_and_tallies_equal_brute_force():
    from datetime import datetime, timezone

    from auditor.engines.operations import Between, Exceeds, Num

    frames = _ops_frames()
    e = PolarsEngine(frames)
    r = e.ranges([Num("x"), Num("d")])
    for s, df in frames.items():
        xs = [v for v in df["x"].to_list() if v is not None and not np.isnan(v)]
        assert (r[s][Num("x")].present, r[s][Num("x")].missing) == (len(xs), df.height - len(xs))
        assert (r[s][Num("x")].min, r[s][Num("x")].max) == (min(xs), max(xs))
        midnight = [int(datetime(v.year, v.month, v.day, tzinfo=timezone.utc).timestamp())
                    * 1_000_000 for v in df["d"].to_list()]
        assert (r[s][Num("d")].min, r[s][Num("d")].max) == (min(midnight), max(midnight))
    t = e.tallies({"a": [Between(Num("x"), lo=-0.5, hi=0.5), Exceeds(Num("x"), Num("x", 1))],
                   "b": [Between(Num("x"), hi=1.0)]})
    xa = [v for v in frames["a"]["x"].to_list() if not np.isnan(v)]
    inside = [v for v in xa if -0.5 <= v < 0.5]
    assert (t["a"][0].hits, t["a"][0].compared) == (len(inside), len(xa))
    assert (t["a"][0].smallest, t["a"][0].largest) == (min(inside), max(inside))
    assert (t["a"][1].hits, t["a"][1].compared) == (0, len(xa))  # x > x + 1 never holds
    xb = [v for v in frames["b"]["x"].to_list() if not np.isnan(v)]
    assert t["b"][0].hits == sum(v < 1.0 for v in xb)
    ex = e.examples("a", Between(Num("x"), lo=0.0), [Num("x")], 3)
    first = [i for i, v in enumerate(frames["a"]["x"].to_list()) if not np.isnan(v) and v >= 0]
    assert ex.positions == first[:3]
    assert [v for (v,) in ex.values] == [frames["a"]["x"][i] for i in first[:3]]


def test_key_operations_equal_brute_force():
    from collections import Counter

    frames = _ops_frames()
    e = PolarsEngine(frames)
    ks = e.key_summaries(["k"])
    for s, df in frames.items():
        c = Counter(v for v in df["k"].to_list() if v is not None)
        assert (ks[s]["k"].keyed_rows, ks[s]["k"].distinct) == (sum(c.values()), len(c))
        assert ks[s]["k"].sum_squares == sum(v * v for v in c.values())
    ko = e.key_overlaps(["k"], [("a", "b")], max_examples=2)[("k", "a", "b")]
    ca = Counter(v for v in frames["a"]["k"].to_list() if v is not None)
    cb = Counter(v for v in frames["b"]["k"].to_list() if v is not None)
    shared = set(ca) & set(cb)
    assert (ko.shared, ko.rows_earlier, ko.rows_later) == (
        len(shared), sum(ca[k] for k in shared), sum(cb[k] for k in shared))
    assert ko.top.height == 2 and ko.top["rows_later"].to_list() == sorted(
        (cb[k] for k in shared), reverse=True)[:2]
    rm = e.record_matches("k", ["city"], [("a", "b")])[("a", "b")]
    pairs_a = set(zip(frames["a"]["k"].to_list(), frames["a"]["city"].to_list()))
    later = list(zip(frames["b"]["k"].to_list(), frames["b"]["city"].to_list()))
    assert rm.keyed == sum(k in ca for k, _ in later)
    assert rm.equal == sum(k in ca and (k, c) in pairs_a for k, c in later)


def test_value_counts_keep_only_values_sharing_a_key():
    from auditor.stats.textnorm import normalised

    frames = _ops_frames()
    e = PolarsEngine(frames)
    every = e.value_counts(["city"])["city"]
    assert every.rows == sum(df.height for df in frames.values())
    assert set(every.counts["value"]) == {"New York", "new york", "Boston", "NEW-YORK"}
    shared = e.value_counts(["city"], shared_key=normalised)["city"]
    assert shared.rows == every.rows
    assert set(shared.counts["value"]) == {"New York", "new york", "NEW-YORK"}  # not Boston
    a = shared.counts.filter(pl.col("split") == "a")
    assert dict(zip(a["value"], a["n"])) == {
        v: int((frames["a"]["city"] == v).sum()) for v in ("New York", "new york", "NEW-YORK")}


def test_value_counts_come_in_split_then_value_order_for_short_and_tall_splits():
    """Each column's counts are ordered by split (the engine's order) and then by value,
    whether a split is counted stacked (short) or a column at a time (tall), and after the
    shared-key filter: the order the callers' tables and examples rely on."""
    from auditor.engines.polars_engine import STACK_ROWS
    from auditor.stats.textnorm import normalised

    rng = np.random.default_rng(3)
    words = np.array(["b", "A", "a", "c c", "C  c", "d", "B"])
    frames = {name: pl.DataFrame({"w": rng.choice(words, n), "k": rng.integers(0, 40, n)})
              for name, n in (("tall", STACK_ROWS + 500), ("short", 300),
                              ("tall2", STACK_ROWS + 7))}
    e = PolarsEngine(frames)
    for shared in (None, normalised):
        got = e.value_counts(["w", "k"], shared_key=shared)
        for col in ("w", "k"):
            counts = got[col].counts
            order = {s: i for i, s in enumerate(frames)}
            want = counts.sort(pl.col("split").replace_strict(order), "value")
            assert counts.select("split", "value").equals(want.select("split", "value"))
            if shared is None or col == "w":  # no two numbers share a normalised key
                assert counts["split"].unique(maintain_order=True).to_list() == list(frames)
            else:
                assert counts.is_empty()
    k = e.value_counts(["k"])["k"].counts.filter(pl.col("split") == "short")
    assert dict(zip(k["value"], k["n"])) == {
        str(v): n for v, n in frames["short"]["k"].value_counts().iter_rows()}


def test_sorted_values_drop_nan_and_reference_is_asked_for():
    frames = _ops_frames()
    ref = frames["a"].head(10)
    e = PolarsEngine(frames, reference=ref)
    got = e.sorted_values(["x"])["x"]
    assert set(got) == {"a", "b"}
    xs = np.sort(frames["a"]["x"].to_numpy()[~np.isnan(frames["a"]["x"].to_numpy())])
    assert np.array_equal(got["a"].values, xs) and got["a"].missing == 5
    assert set(e.sorted_values(["x"], with_reference=True)["x"]) == {"reference", "a", "b"}
    assert e.split_rows(with_reference=True) == {"reference": 10, "a": 60, "b": 30}


def test_bucketed_tallies_compare_integer_times_exactly_beyond_2_53():
    """Epoch microseconds of a 9999-12-31 sentinel exceed 2^53: the bucketed count compares
    them as integers, as each condition on its own does (float64 would merge neighbours)."""
    from datetime import datetime

    from auditor.engines.operations import Between, Num

    sentinel = datetime(9999, 12, 31)
    frame = pl.DataFrame({"t": [datetime(2024, 1, d) for d in range(1, 21)] + [sentinel] * 3})
    us = int((sentinel - datetime(1970, 1, 1)).total_seconds()) * 1_000_000
    assert us > 2 ** 53
    conds = [Between(Num("t"), hi=int((datetime(2024, 1, d) - datetime(1970, 1, 1))
                                      .total_seconds()) * 1_000_000) for d in range(2, 10)]
    conds += [Between(Num("t"), lo=us, hi=us + 1), Between(Num("t"), lo=us - 1, hi=us)]
    got = PolarsEngine({"a": frame}).tallies({"a": conds})["a"]
    assert [t.hits for t in got] == list(range(1, 9)) + [3, 0]
    assert got[-2].largest == got[-2].smallest == us


@pytest.mark.parametrize("band", [0.10, 0.0])
def test_continuous_columns_sketch_and_recount_near_the_cut(monkeypatch, band):
    """polars' continuity sketches the distinct counts (HyperLogLog) and recounts exactly the
    columns within ``EXACT_BAND`` of the cut (u >= n / 2): with 995-999 distinct of 2,000
    values the sketch says > 1,000 for some (continuous by the sketch alone, band 0), which
    the recount corrects; 5% and 100% distinct, a constant, nulls and a boolean are decided
    by the sketch."""
    from auditor.engines import polars_values

    monkeypatch.setattr(polars_values, "EXACT_BAND", band)
    n = 2000
    near = {f"k{k}": (np.arange(n) % k) * 0.5 for k in range(995, 1001)}
    frame = pl.DataFrame({
        **near, "c05": np.arange(n) % 100, "c100": np.arange(n) * 1.5, "constant": np.ones(n),
        "nulls": pl.Series([None, 1.5, 2.5] + [None] * (n - 3), dtype=pl.Float64),
        "flag": np.arange(n) % 2 == 0})
    exact = [c for c in frame.columns if c != "flag" and (x := frame[c].drop_nulls()).len() > 1
             and x.n_unique() >= 0.5 * x.len()]
    assert exact == ["k1000", "c100", "nulls"]
    # beyond the cut by the sketch (one exactly at it is recounted even with band 0)
    sketched = [c for c in near if frame.select(pl.col(c).drop_nulls().approx_n_unique()).item()
                > n / 2]
    assert set(sketched) > {"k1000"}  # the sketch alone misjudges at least one column
    got = PolarsEngine({"train": frame}).continuous_columns(frame.columns, ["train"])["train"]
    assert got == (exact if band else [*sketched, "c100", "nulls"])
