"""Splits made by a known design (time, group, stratified), each with a variant that is not:
shared by the split-design tests on polars (tests/judging/test_design.py) and on both engines
(tests/engines/test_conformance.py)."""
from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import polars as pl

DAY0 = date(2024, 1, 1)


def time_split(n_train: int = 300, n_test: int = 100, overlap: int = 0) -> dict[str, pl.DataFrame]:
    """Days 0..n_train-1 in train, the next n_test days in test (the first ``overlap`` test
    rows moved back into train's range); x noise, y a coin."""
    rng = np.random.default_rng(0)

    def part(days: np.ndarray) -> pl.DataFrame:
        return pl.DataFrame({"day": [DAY0 + timedelta(days=int(d)) for d in days],
                             "x": rng.normal(size=len(days)),
                             "y": rng.integers(0, 2, len(days))})

    test_days = np.arange(n_train, n_train + n_test)
    test_days[:overlap] = np.arange(overlap)
    return {"train": part(np.arange(n_train)), "test": part(test_days)}


def group_split(shared: int = 0) -> dict[str, pl.DataFrame]:
    """100 users of 4 rows each: users 0-79 in train, 80-99 in test (``shared`` test users
    replaced by train users)."""
    rng = np.random.default_rng(1)
    users = np.repeat(np.arange(100), 4)
    users_test = users[users >= 80].copy()
    users_test[: 4 * shared] = users[: 4 * shared]

    def part(u: np.ndarray) -> pl.DataFrame:
        return pl.DataFrame({"user": u, "x": rng.normal(size=len(u)),
                             "y": rng.integers(0, 2, len(u))})

    return {"train": part(users[users < 80]), "test": part(users_test)}


def class_split(test_pos: int) -> dict[str, pl.DataFrame]:
    """train: 80 rows, 40 positive; test: 20 rows, ``test_pos`` positive."""
    rng = np.random.default_rng(2)
    y_train = np.array([1] * 40 + [0] * 40)
    y_test = np.array([1] * test_pos + [0] * (20 - test_pos))
    return {s: pl.DataFrame({"x": rng.normal(size=len(y)), "y": y})
            for s, y in (("train", y_train), ("test", y_test))}


def trend_split(shift: float = 0.0, label_step: float = 0.0, years: bool = False
                ) -> dict[str, pl.DataFrame]:
    """400 days, one row a day (``years``: 20 "years" of 20 rows, the time an integer
    column), the last quarter in test. ``trend`` rises by 4 sd over the period (time alone
    moves it), ``x`` is stable noise moved by ``shift`` sd in test only, ``target`` a numeric
    label with the same trend plus ``label_step`` in test only, ``y`` a coin."""
    rng = np.random.default_rng(3)
    n = 400
    t = np.arange(n)
    trend = 4 * t / n + rng.normal(size=n)
    x = rng.normal(size=n)
    target = 4 * t / n + rng.normal(size=n)
    test = t >= 300
    x[test] += shift
    target[test] += label_step
    time = (1990 + t // 20) if years else [DAY0 + timedelta(days=int(d)) for d in t]
    df = pl.DataFrame({"day": time, "trend": trend, "x": x, "target": target,
                       "y": rng.integers(0, 2, n)})
    return {"train": df.filter(pl.Series(~test)), "test": df.filter(pl.Series(test))}


def entity_split(shift: float = 0.0) -> dict[str, pl.DataFrame]:
    """60 users of 10 rows each, users 0-49 in train and 50-59 in test. ``plan`` is an
    attribute of the user (one of three, the same on every row of a user), ``level`` a row
    measurement dominated by the user (user effect sd 1, row noise sd 0.2: the 10 rows of a
    user are nearly one observation), ``x`` row noise moved by ``shift`` sd in test, ``y`` a
    coin."""
    rng = np.random.default_rng(4)
    users = np.repeat(np.arange(60), 10)
    effect = rng.normal(size=60)
    plan = np.array(["basic", "plus", "pro"])[rng.integers(0, 3, 60)]
    df = pl.DataFrame({"user": users, "plan": plan[users],
                       "level": effect[users] + rng.normal(0, 0.2, len(users)),
                       "x": rng.normal(size=len(users)) + shift * (users >= 50),
                       "y": rng.integers(0, 2, len(users))})
    return {"train": df.filter(pl.col("user") < 50), "test": df.filter(pl.col("user") >= 50)}


def panel_split() -> dict[str, pl.DataFrame]:
    """12 firms x 20 years (2000-2019), the last 5 years in test. ``national`` is one value
    per year (a national rate, rising), ``size`` a firm measurement, ``y`` a coin."""
    rng = np.random.default_rng(5)
    years = np.repeat(np.arange(2000, 2020), 12)
    firms = np.tile(np.arange(12), 20)
    national = (np.arange(20) * 0.5 + rng.normal(0, 0.1, 20))[years - 2000]
    df = pl.DataFrame({"year": years, "firm": firms, "national": national,
                       "size": rng.normal(size=len(years)), "y": rng.integers(0, 2, len(years))})
    return {"train": df.filter(pl.col("year") < 2015), "test": df.filter(pl.col("year") >= 2015)}
