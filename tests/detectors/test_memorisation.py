"""separability.memorisation: evaluation rows far closer to a train row than chance."""
from __future__ import annotations

import json
import math
from dataclasses import asdict

import numpy as np
import polars as pl
import pytest
from scipy.spatial.distance import cdist

from auditor.core.config import Columns
from auditor.loading.data import build_audit_data
from auditor.detectors.memorisation import Memorisation, nearest_rows
from auditor.errors import NotApplicable
from auditor.probes.features import Encoder
from auditor.report.results import Severity, json_safe
from tests.conftest import clean_frame

COLS = [f"f{i}" for i in range(6)]


def _frame(n, seed, offset=0):
    rng = np.random.default_rng(seed)
    return pl.DataFrame({"row_id": np.arange(offset, offset + n),
                         **{c: rng.normal(size=n) for c in COLS},
                         "y": rng.integers(0, 2, n)})


def _jittered(rows: pl.DataFrame, seed, scale=0.002, offset=50_000):
    rng = np.random.default_rng(seed)
    return rows.with_columns([pl.col(c) + rng.normal(0, scale, rows.height) for c in COLS]
                             + [pl.col("row_id") + offset])


def _data(frames, **roles):
    roles.setdefault("label", "y")
    roles.setdefault("ids", ["row_id"])
    return build_audit_data(frames, columns=Columns(**roles))


def _reference_count(train: pl.DataFrame, test: pl.DataFrame, q=0.01):
    """Brute force with scipy: standardise on train, nearest-neighbour distances, threshold at
    the q-quantile of train's nearest-other distances, count test rows strictly below it."""
    a, b = train.select(COLS).to_numpy(), test.select(COLS).to_numpy()
    mean, sd = a.mean(0), a.std(0)
    a, b = (a - mean) / sd, (b - mean) / sd
    within = cdist(a, a)
    np.fill_diagonal(within, np.inf)
    threshold = np.quantile(within.min(1), q)
    return int((cdist(b, a).min(1) < threshold).sum()), threshold


def test_jittered_copies_of_train_rows_are_counted_against_the_chance_baseline():
    train = _frame(1000, 1)
    test = pl.concat([_frame(300, 2, 10_000), _jittered(train[200:240], 3)])
    f, = Memorisation().run(_data({"train": train, "test": test}))
    expected, threshold = _reference_count(train, test)
    assert f.count == expected and 40 <= f.count <= 46
    assert f.evidence["sampling"]["distance_threshold"] == pytest.approx(threshold, rel=1e-5)
    m = f.evidence["sampling"]["baseline_rows"]
    assert m == 1000
    assert f.value == pytest.approx(f.count / 340 - (1 + 0.01 * (m - 1)) / (m + 1))
    assert f.severity == Severity.FAIL and f.splits == ["train", "test"]
    assert f.metric == "near_copy_excess_share" and f.threshold == 0.05
    ex = f.evidence["closest_pairs"]
    assert len(ex) == 20 and all(e["test_row"] >= 300 for e in ex)  # the closest are the copies
    assert all(e["train_row"] == e["test_row"] - 100 for e in ex)
    assert "f0: " in ex[0]["differences"] and ex[0]["distance"] < 0.02
    assert f.message.startswith(f"{f.count} of 340 test rows (")
    assert "1.1% expected by chance" in f.message and "near-copies that exact hashing" in f.message
    chart = f.evidence["chart"]
    assert chart["type"] == "hist" and len(chart["edges"]) == len(
        next(iter(chart["series"].values()))) + 1


def test_closest_pairs_carry_the_declared_ids_of_both_rows():
    train = _frame(1000, 1)
    test = pl.concat([_frame(300, 2, 10_000), _jittered(train[200:240], 3)])
    f, = Memorisation().run(_data({"train": train, "test": test}))
    pairs = f.evidence["closest_pairs"]
    assert len(pairs) == 20
    for e in pairs:  # the copies: train's row_id is its position, a copy's 50,000 more
        assert e["train row_id"] == e["train_row"]
        assert e["test row_id"] == e["train_row"] + 50_000


def test_clean_splits_stay_quiet():
    for seed in (2, 5, 8):
        train, test = _frame(1000, 1), _frame(400, seed, 10_000)
        f, = Memorisation().run(_data({"train": train, "test": test}))
        assert f.severity == Severity.INFO
        assert f.count == _reference_count(train, test)[0]
        assert "no more near-copies than chance" in f.message


def test_exact_copies_are_left_to_leakage_duplicates():
    train = _frame(800, 1)
    clean = _frame(300, 2, 10_000)
    copies = train[10:15].with_columns(pl.col("row_id") + 90_000, pl.col("y") * 0 + 1)
    base, = Memorisation().run(_data({"train": train, "test": clean}))
    f, = Memorisation().run(_data({"train": train, "test": pl.concat([clean, copies])}))
    assert f.evidence["sampling"]["exact_copies_excluded"] == 5
    assert f.count == base.count and "leakage.duplicates" in f.evidence["sampling"]["note"]


def test_an_evaluation_split_made_only_of_exact_copies_says_so_not_0_of_0():
    train = _frame(800, 1)
    copies = train[100:160].with_columns(pl.col("row_id") + 90_000)
    f, = Memorisation().run(_data({"train": train, "test": copies}))
    assert (f.severity, f.count) == (Severity.INFO, 0)
    assert f.message == ("every test row (60) is an exact copy of a train row "
                         "(leakage.duplicates counts them): no row is left to measure "
                         "near-copies on")
    assert "distance <" not in f.message and "0 of 0" not in f.message


def test_features_that_leave_most_rows_at_distance_0_are_not_applicable():
    """Rows unique only through a rare level of a column the encoder folds away: the nearest
    other train row lies at distance 0 for most rows, so no near copy can be told from chance
    (the finding used to read "distance < 0")."""
    rng = np.random.default_rng(8)

    def frame(n, offset):
        return pl.DataFrame({"row_id": np.arange(offset, offset + n),
                             "grade": rng.choice(["a", "b"], n),
                             "code": [f"c{i}" for i in range(offset, offset + n)],
                             "y": rng.integers(0, 2, n)})
    with pytest.raises(NotApplicable, match="lie at distance 0 from another train row"):
        Memorisation(max_levels=2).run(_data({"train": frame(600, 0),
                                              "test": frame(200, 10_000)}))


def test_nearest_rows_matches_brute_force_and_excludes_self():
    rng = np.random.default_rng(0)
    R = rng.normal(size=(40_000, 5)).astype(np.float32)  # more than one block
    Q = np.vstack([rng.normal(size=(30, 5)), R[[3, 20_000, 39_999]]]).astype(np.float32)
    selves = np.r_[np.full(30, -1), [3, 20_000, 39_999]]
    got = nearest_rows(Q, R, selves)
    d = cdist(Q.astype(np.float64), R.astype(np.float64))
    d[np.arange(30, 33), selves[30:]] = np.inf
    assert got.tolist() == d.argmin(1).tolist()


def test_one_hot_levels_add_one_to_the_squared_distance():
    frame = pl.DataFrame({"x": [0.0, 2.0], "c": ["a", "b"]})
    enc = Encoder.fit(frame, ["x"], ["c"])
    X = enc.dense(frame, onehot_scale=1 / math.sqrt(2))
    assert ((X[0] - X[1]) ** 2).sum() == pytest.approx(4 / 1 + 1)  # (2 / sd 1)^2 + 1


def test_discrete_features_on_a_grid_stay_quiet():
    rng = np.random.default_rng(4)

    def frame(n, levels=(60, 40)):
        return pl.DataFrame({"a": rng.integers(0, levels[0], n),
                             "b": rng.choice(["u", "v", "w"], n),
                             "c": rng.integers(0, levels[1], n), "y": rng.integers(0, 2, n)})
    f, = Memorisation().run(build_audit_data({"train": frame(800), "test": frame(300)},
                                             columns=Columns(label="y")))
    assert f.severity == Severity.INFO and f.count == 0
    assert f.evidence["sampling"]["exact_copies_excluded"] > 0
    coarse = {"train": frame(800, (3, 3)), "test": frame(300, (3, 3))}
    with pytest.raises(NotApplicable, match="every train row has an exact copy in train"):
        Memorisation().run(build_audit_data(coarse, columns=Columns(label="y")))


def test_missing_values_and_categoricals_are_handled_and_runs_are_deterministic():
    train, test = clean_frame(600, 1), clean_frame(300, 2, 10_000)
    train = train.with_columns(pl.when(pl.col("x2") > 1).then(None).otherwise(pl.col("x2"))
                               .alias("x2"))
    frames = {"train": train, "val": test.head(150), "test": test.tail(150)}
    first = Memorisation().run(_data(frames))
    second = Memorisation().run(_data(frames))
    assert [f.splits for f in first] == [["train", "val"], ["train", "test"]]
    dump = [json.dumps(json_safe([asdict(f) for f in r]), allow_nan=False)
            for r in (first, second)]
    assert dump[0] == dump[1]


def test_sampling_is_stated_and_scaled_to_the_split():
    train = _frame(1000, 1)
    test = pl.concat([_frame(900, 2, 10_000), _jittered(train[:300], 3)])
    f, = Memorisation(eval_rows=400, baseline_rows=500).run(_data({"train": train,
                                                                   "test": test}))
    s = f.evidence["sampling"]
    assert s["test_rows_sampled"] == 400 and s["test_rows"] == 1200 and s["baseline_rows"] == 500
    estimate = round(f.count / 400 * 1200)
    assert f"about {estimate:,} of 1,200 test rows" in f.message


def test_memorisation_is_not_applicable_without_two_splits_or_features():
    with pytest.raises(NotApplicable, match="only one split"):
        Memorisation().run(_data({"train": _frame(50, 1)}))
    data = _data({"train": _frame(50, 1), "test": _frame(50, 2)})
    data.features = []
    with pytest.raises(NotApplicable, match="no feature columns"):
        Memorisation().run(data)


@pytest.mark.parametrize("kwargs, message", [
    (dict(fail_above=2.0), "fail_above must be a share in"),
    (dict(baseline_quantile=0.0), "baseline_quantile must be a number in"),
    (dict(eval_rows=0), "eval_rows must be a positive integer"),
])
def test_memorisation_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Memorisation(**kwargs)


def test_near_copies_are_found_over_every_evaluation_row_with_their_row_pairs():
    train = _frame(4000, 1)
    planted = np.arange(100, 4000, 65)[:60]  # 60 train rows (2% of test) copied with jitter
    test = pl.concat([_frame(2940, 2, 10_000),
                      _jittered(train[planted], 3, scale=1e-3)])
    # the chance baseline over every train row, as the brute-force reference computes it
    f, = Memorisation(baseline_rows=4000).run(_data({"train": train, "test": test}))
    expected, threshold = _reference_count(train, test)
    assert f.count == expected and f.evidence["sampling"]["test_rows_sampled"] == 3000
    assert f.message.startswith(f"{expected} of 3,000 test rows (")
    near = f.evidence["near_copies"]
    assert near["pairs"] == expected and near["listed"] == expected
    pairs = {(r["train_row"], r["test_row"]) for r in near["rows"]}
    assert {(int(a), 2940 + i) for i, a in enumerate(planted)} <= pairs
    assert all(r["distance"] < threshold for r in near["rows"])
    assert f.severity == Severity.WARN


def test_the_scan_is_bounded_by_max_comparisons():
    train = _frame(2000, 1)
    test = _frame(3000, 2, 10_000)
    f, = Memorisation(max_comparisons=1e7).run(_data({"train": train, "test": test}))
    s = f.evidence["sampling"]
    assert s["test_rows_sampled"] == 1000 and s["test_rows"] == 3000
    assert "sampled test rows" in f.message


def test_a_sampled_split_still_lists_the_jittered_copies_among_all_its_rows():
    train = _frame(4000, 1)
    planted = np.arange(100, 4000, 65)[:60]
    test = pl.concat([_frame(2940, 2, 10_000), _jittered(train[planted], 3, scale=1e-3)])
    f, = Memorisation(baseline_rows=4000, max_comparisons=1e7).run(
        _data({"train": train, "test": test}))
    assert f.evidence["sampling"]["test_rows_sampled"] == 1000  # the graded count: a sample
    near = f.evidence["near_copies"]
    pairs = {(r["train_row"], r["test_row"]) for r in near["rows"]}
    assert {(int(a), 2940 + i) for i, a in enumerate(planted)} <= pairs  # every planted copy
    # every listed pair is a true near-copy: brute force over all rows
    _, threshold = _reference_count(train, test)
    a, b = train.select(COLS).to_numpy(), test.select(COLS).to_numpy()
    mean, sd = a.mean(0), a.std(0)
    dist = cdist((b - mean) / sd, (a - mean) / sd)
    for r in near["rows"]:
        assert dist[r["test_row"], r["train_row"]] == pytest.approx(r["distance"], abs=1e-4)
        assert r["distance"] < threshold
    truly_near = set(np.flatnonzero(dist.min(1) < threshold).tolist())
    assert {r["test_row"] for r in near["rows"]} <= truly_near
    assert near["pairs"] == len(near["rows"]) and "Over all test rows" in f.message


def test_grid_search_finds_close_pairs_verified_and_skips_dense_cells_with_a_note():
    from auditor.detectors.near_copies import grid_near_pairs

    rng = np.random.default_rng(7)
    ref = pl.DataFrame({"a": rng.normal(size=3000), "b": rng.normal(size=3000)})
    later = pl.concat([pl.DataFrame({"a": rng.normal(size=500), "b": rng.normal(size=500)}),
                       ref[:40].with_columns(pl.col("a") + 1e-5)])

    def encode(f: pl.DataFrame) -> np.ndarray:
        return f.to_numpy().astype(np.float32)
    found, note = grid_near_pairs(encode, ref, later, np.arange(later.height), 0.01, seed=1)
    d = cdist(later.to_numpy(), ref.to_numpy())
    assert note == "" and set(range(500, 540)) <= set(found["row"].to_list())
    for r, row, dist in found.iter_rows():
        assert dist < 0.01 and dist == pytest.approx(d[row, r], abs=1e-5)
    grid = pl.DataFrame({"a": rng.integers(0, 3, 3000).astype(float),
                         "b": rng.integers(0, 3, 3000).astype(float)})
    _, note = grid_near_pairs(encode, grid, grid, np.arange(3000), 0.5, max_candidates=10_000)
    assert "cells holding many rows" in note


def test_chance_share_is_the_probability_an_exchangeable_distance_falls_below_the_quantile():
    """(1 + q(m-1)) / (m+1) against a simulation of m + 1 exchangeable draws: the 1% quantile of
    24 baseline distances is their minimum, so chance is ~4.9%, not 1%."""
    from auditor.detectors.memorisation import chance_share

    rng = np.random.default_rng(0)
    for m in (24, 200):
        draws = rng.exponential(size=(40_000, m + 1))
        thresholds = np.quantile(draws[:, :m], 0.01, axis=1)
        simulated = float((draws[:, m] < thresholds).mean())
        assert chance_share(0.01, m) == pytest.approx(simulated, abs=0.004)
    assert chance_share(0.01, 24) == pytest.approx(1.23 / 25)
    assert chance_share(0.01, 1000) == pytest.approx(10.99 / 1001)


def test_grid_keys_of_a_row_do_not_depend_on_the_rows_keyed_with_it():
    """Equal cell vectors get equal keys in any call (reference and later split are keyed
    separately): a row keyed alone, in a subset, reversed or among 12k wide rows gets the
    same key (a BLAS matrix-vector product separated ~1 in 1,000 rows from their copy)."""
    from auditor.detectors.near_copies import cell_keys

    rng = np.random.default_rng(3)
    for n, w in ((12_345, 333), (7_001, 777), (4_099, 1_500)):
        X = rng.normal(size=(n, w)).astype(np.float32)
        offsets = rng.uniform(0, 0.5, size=(2, w))
        weights = rng.uniform(1, 2, size=(2, w)) * np.exp2(rng.integers(0, 20, size=(2, w)))
        whole = cell_keys(X, offsets, 0.5, weights)
        sub = np.sort(rng.choice(n, 777, replace=False))
        np.testing.assert_array_equal(cell_keys(X[sub], offsets, 0.5, weights), whole[sub])
        rev = cell_keys(np.ascontiguousarray(X[sub][::-1]), offsets, 0.5, weights)[::-1]
        np.testing.assert_array_equal(rev, whole[sub])
        np.testing.assert_array_equal(cell_keys(X[sub[:1]], offsets, 0.5, weights),
                                      whole[sub[:1]])
        assert len(np.unique(whole[:, 0])) == n  # distinct random rows: distinct keys


def test_findings_do_not_depend_on_how_many_reference_rows_are_encoded_at_a_time(monkeypatch):
    """A wide table encodes the reference in smaller blocks (ENCODE_CELLS); the blocks are
    multiples of the distance chunk, so the nearest rows, distances and findings are the
    same as with one block (here: blocks of 64 rows against one block of 4,000)."""
    import auditor.detectors.memorisation as mem
    import auditor.detectors.near_copies as nc

    train = _frame(4000, 1)
    planted = np.arange(100, 4000, 65)[:60]
    test = pl.concat([_frame(2940, 2, 10_000), _jittered(train[planted], 3, scale=1e-3)])
    data = _data({"train": train, "test": test})
    check = Memorisation(baseline_rows=1000, max_comparisons=2e7)  # sampled + grid search
    whole = check.run(data)
    monkeypatch.setattr(mem, "CHUNK_ROWS", 64)
    monkeypatch.setattr(mem, "ENCODE_CELLS", 64 * 8)
    monkeypatch.setattr(nc, "ENCODE_CELLS", 8)
    assert mem.encode_rows(7) == 64 and mem.encode_rows(10**6) == 64
    small = check.run(data)
    assert [json.dumps(json_safe(asdict(f)), sort_keys=True) for f in small] == \
        [json.dumps(json_safe(asdict(f)), sort_keys=True) for f in whole]
    assert whole[0].count > 0 and "near_copies" in whole[0].evidence
