"""Deterministic benchmark data: train + test (25% of train) x 40 mixed-type columns, with
planted problems, written as directories of Parquet files (one file per chunk of rows).

    python bench/make_data.py --rows 1000000 [--out bench/data]

Columns: row_id (id), user_id (group), event_ts (time), num_00..num_23 (normal, log-normal
heavy tails, uniform, integer counts, 5% nulls in some), cat_low_0..4 (3-12 levels),
cat_high_0..2 (10k-200k levels), last_login (datetime feature), notes (text), is_member (bool),
leak_days (leaky), label (binary).

Planted problems (what a good auditor should flag):
- 1% of test rows are exact copies of train rows                      -> leakage.duplicates
- 2% of test rows belong to users who also appear in train            -> leakage.group_overlap
- 0.5% of test rows are dated inside train's time range               -> leakage.temporal
- last_login after event_ts in 3% of rows                             -> leakage.temporal (future)
- leak_days: filled only for positives                                -> leakage.single_feature_auc
- num_03 shifted by +0.5 sd and cat_low_2 gains a new level in test   -> drift.features
- num_10 standardised on train+test together (fitted before the split) -> leakage.preprocessing
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import polars as pl

CHUNK = 1_000_000
T0 = np.datetime64("2024-01-01T00:00:00", "us").astype(np.int64)
DAY_US = 86_400 * 1_000_000
WORDS = np.array(("account billing cancel discount upgrade support call slow fast happy "
                  "angry refund price plan family travel mobile data roaming contract "
                  "renewal offer loyal switch competitor network outage email chat").split())


def _text_pool(rng: np.random.Generator, n: int = 5000) -> pl.Series:
    words = rng.choice(WORDS, size=(n, 8))
    return pl.Series("notes", [" ".join(w) for w in words])


def make_chunk(rng: np.random.Generator, n: int, start_id: int, day0: float, day1: float,
               user_base: int, n_users: int, pool: pl.Series, is_test: bool) -> pl.DataFrame:
    cols: dict[str, object] = {}
    cols["row_id"] = np.arange(start_id, start_id + n, dtype=np.int64)
    cols["user_id"] = user_base + rng.integers(0, n_users, n)
    days = rng.uniform(day0, day1, n)
    ts = T0 + (days * DAY_US).astype(np.int64)
    cols["event_ts"] = ts
    z = rng.normal(size=(n, 8))
    for i in range(24):
        kind = i % 4
        if kind == 0:
            v = z[:, i % 8] + 0.1 * rng.normal(size=n)
        elif kind == 1:
            v = rng.lognormal(0, 1.2, n)
        elif kind == 2:
            v = rng.uniform(-5, 5, n)
        else:
            v = rng.poisson(3, n).astype(np.float64)
        if i in (3,) and is_test:
            v = v + 0.5
        if i % 6 == 5:
            v = np.where(rng.random(n) < 0.05, np.nan, v)
        cols[f"num_{i:02d}"] = v
    logit = 0.8 * z[:, 0] - 0.6 * z[:, 1] + 0.4 * z[:, 2] - 1.0
    label = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int8)
    cols["label"] = label
    for j, k in enumerate((3, 5, 8, 10, 12)):
        levels = k + (1 if (j == 2 and is_test) else 0)
        p = np.ones(levels) / levels
        cols[f"cat_low_{j}"] = rng.choice(levels, n, p=p).astype(np.int32)
    for j, k in enumerate((10_000, 50_000, 200_000)):
        cols[f"cat_high_{j}"] = rng.integers(0, k, n).astype(np.int64)
    login = ts - (rng.exponential(20, n) * DAY_US).astype(np.int64)
    future = rng.random(n) < 0.03
    login[future] = ts[future] + (rng.uniform(1, 10, future.sum()) * DAY_US).astype(np.int64)
    cols["last_login"] = login
    cols["is_member"] = rng.random(n) < 0.3
    cols["leak_days"] = np.where(label == 1, rng.integers(0, 60, n), np.nan)
    df = pl.DataFrame(cols)
    note_idx = pl.Series(rng.integers(0, pool.len(), n))
    return df.with_columns(
        pl.col("event_ts").cast(pl.Datetime("us")),
        pl.col("last_login").cast(pl.Datetime("us")),
        pool.gather(note_idx).alias("notes"),
        *[("L" + pl.col(f"cat_low_{j}").cast(pl.String)).alias(f"cat_low_{j}")
          for j in range(5)],
        *[("H" + pl.col(f"cat_high_{j}").cast(pl.String)).alias(f"cat_high_{j}")
          for j in range(3)],
    )


def generate(rows: int, out: Path, seed: int = 0) -> dict[str, Path]:
    """Write train (``rows``) and test (``rows // 4``) under ``out/<rows>/``; idempotent."""
    root = out / str(rows)
    done = root / ".complete"
    paths = {"train": root / "train", "test": root / "test"}
    if done.exists():
        return paths
    rng = np.random.default_rng(seed)
    pool = _text_pool(rng)
    n_test = rows // 4
    n_users_train = max(rows // 5, 10)
    for p in paths.values():
        p.mkdir(parents=True, exist_ok=True)
        for old in p.glob("*.parquet"):
            old.unlink()
    t = time.perf_counter()
    # train: days 0..300, users [0, n_users_train)
    sample_rows = []
    for k, start in enumerate(range(0, rows, CHUNK)):
        n = min(CHUNK, rows - start)
        chunk = make_chunk(rng, n, start, 0, 300, 0, n_users_train, pool, False)
        if k == 0:
            sample_rows.append(chunk)
        chunk.write_parquet(paths["train"] / f"part-{k:04d}.parquet")
    # test: days 310..400, new users; then plants
    train_head = sample_rows[0]
    for k, start in enumerate(range(0, n_test, CHUNK)):
        n = min(CHUNK, n_test - start)
        chunk = make_chunk(rng, n, 10**12 + start, 310, 400, 10**9, max(n // 5, 10), pool,
                           True)
        n_dup, n_grp, n_time = n // 100, n // 50, n // 200
        # group overlap: users taken from train
        idx = rng.choice(n, n_grp, replace=False)
        users = chunk["user_id"].to_numpy().copy()
        users[idx] = rng.integers(0, n_users_train, n_grp)
        ts = chunk["event_ts"].cast(pl.Int64).to_numpy().copy()
        idx_t = rng.choice(n, n_time, replace=False)
        ts[idx_t] = T0 + (rng.uniform(0, 300, n_time) * DAY_US).astype(np.int64)
        chunk = chunk.with_columns(pl.Series("user_id", users),
                                   pl.Series("event_ts", ts).cast(pl.Datetime("us")))
        # exact copies of train rows (fresh row ids)
        src = rng.choice(train_head.height, n_dup, replace=False)
        copies = train_head[src].with_columns(
            pl.Series("row_id", np.arange(2 * 10**12 + start, 2 * 10**12 + start + n_dup)))
        keep = np.sort(rng.choice(n, n - n_dup, replace=False))
        chunk = pl.concat([chunk[keep], copies.select(chunk.columns)])
        chunk.write_parquet(paths["test"] / f"part-{k:04d}.parquet")
    _standardise_on_union(paths, "num_10")
    done.write_text(f"generated in {time.perf_counter() - t:.1f}s\n")
    return paths


def _standardise_on_union(paths: dict[str, Path], col: str) -> None:
    """Plant preprocessing leakage: z-score ``col`` with the mean/std of train+test together."""
    union = pl.concat([pl.scan_parquet(p / "*.parquet").select(col) for p in paths.values()])
    stats = union.select(pl.col(col).mean().alias("m"), pl.col(col).std().alias("s")).collect()
    m, s = stats["m"][0], stats["s"][0]
    for p in paths.values():
        for f in sorted(p.glob("*.parquet")):
            df = pl.read_parquet(f).with_columns(((pl.col(col) - m) / s).alias(col))
            df.write_parquet(f)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[100_000])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    for rows in args.rows:
        t = time.perf_counter()
        paths = generate(rows, args.out, args.seed)
        print(f"{rows:>11,} rows -> {paths['train'].parent}  ({time.perf_counter() - t:.1f}s)")


if __name__ == "__main__":
    main()
