"""Seeded splits with planted problems, and an honest pair, shared by the engine tests."""
from __future__ import annotations

import numpy as np
import polars as pl


def planted() -> dict[str, pl.DataFrame]:
    """train 400 / test 150 rows. Planted: 12 test rows are exact copies of train rows (new
    row_id), 6 train rows are copied within train, 9 test users also occur in train (plus the
    copied rows' users), ``cat`` shifts from mostly a/b to mostly c, the label's positive share
    from 30% to 60%; ``x1`` has 15 NaN in train, ``cat`` 20 nulls."""
    rng = np.random.default_rng(7)
    n_tr, n_te = 400, 150
    train = pl.DataFrame({
        "row_id": np.arange(n_tr),
        "user": [f"u{i}" for i in rng.integers(0, 200, n_tr)],
        "x1": rng.normal(size=n_tr),
        "x2": rng.gamma(2.0, size=n_tr),
        "cat": rng.choice(["a", "b", "c"], n_tr, p=[0.45, 0.45, 0.10]),
        "flag": rng.random(n_tr) < 0.5,
        "y": (rng.random(n_tr) < 0.3).astype(np.int64),
    })
    train = train.with_columns(
        pl.when(pl.int_range(pl.len()) < 15).then(float("nan")).otherwise(pl.col("x1"))
        .alias("x1"),
        pl.when(pl.int_range(pl.len()).is_between(20, 39)).then(None).otherwise(pl.col("cat"))
        .alias("cat"))
    dup = train.slice(100, 6).with_columns(pl.col("row_id") + 1000)
    train = pl.concat([train, dup])
    test = pl.DataFrame({
        "row_id": np.arange(n_te - 12) + 5000,
        "user": [f"u{i}" for i in rng.integers(300, 500, n_te - 12 - 9)]
        + [f"u{i}" for i in rng.integers(0, 200, 9)],
        "x1": rng.normal(size=n_te - 12),
        "x2": rng.gamma(2.0, size=n_te - 12),
        "cat": rng.choice(["a", "b", "c", "d"], n_te - 12, p=[0.15, 0.15, 0.6, 0.1]),
        "flag": rng.random(n_te - 12) < 0.5,
        "y": (rng.random(n_te - 12) < 0.6).astype(np.int64),
    })
    copies = train.slice(200, 12).with_columns(pl.col("row_id") + 9000)
    test = pl.concat([test, copies])
    return {"train": train, "test": test}


def honest() -> dict[str, pl.DataFrame]:
    """One population split at random by user: no copies, no shared users, no shift."""
    rng = np.random.default_rng(11)
    n = 600
    df = pl.DataFrame({
        "row_id": np.arange(n),
        "user": [f"u{i}" for i in rng.integers(0, 300, n)],
        "x1": rng.normal(size=n),
        "x2": rng.gamma(2.0, size=n),
        "cat": rng.choice(["a", "b", "c"], n, p=[0.4, 0.4, 0.2]),
        "flag": rng.random(n) < 0.5,
        "y": (rng.random(n) < 0.4).astype(np.int64),
    })
    users = df["user"].unique().sort()
    test_users = users.sample(fraction=0.25, seed=3)
    is_test = df["user"].is_in(test_users.implode())
    return {"train": df.filter(~is_test), "test": df.filter(is_test)}


def numeric_drift(n_train: int = 2_000, n_test: int = 800, seed: int = 21
                  ) -> dict[str, pl.DataFrame]:
    """Numeric drift planted in ``shift`` (mean +0.6 sd in test) and ``few`` (five values, 0
    goes from 40% to 15% of rows); ``same`` (normal, with NaN, nulls and -0.0) and ``when``
    (datetimes over the same year) do not move; the numeric label ``target`` moves by +1."""
    from datetime import datetime, timedelta

    rng = np.random.default_rng(seed)

    def part(n: int, shifted: bool) -> pl.DataFrame:
        same = np.round(rng.normal(size=n), 2)
        same[:7] = -0.0
        same[7:12] = np.nan
        p = [0.15, 0.3, 0.25, 0.2, 0.1] if shifted else [0.4, 0.2, 0.2, 0.1, 0.1]
        start = datetime(2024, 1, 1)
        return pl.DataFrame({
            "shift": rng.normal(loc=0.6 if shifted else 0.0, size=n),
            "same": same,
            "few": rng.choice(5, n, p=p).astype(np.int64),
            "when": [start + timedelta(minutes=int(m)) for m in rng.integers(0, 525_600, n)],
            "target": rng.gamma(2.0, size=n) + (1.0 if shifted else 0.0),
        }).with_columns(pl.when(pl.int_range(pl.len()) % 97 == 3).then(None)
                        .otherwise(pl.col("same")).alias("same"))

    return {"train": part(n_train, False), "test": part(n_test, True)}
