"""Bundled deterministic demo data with planted problems, and its audit.yaml.

A churn dataset (train / val / test in time order) generated from a fixed seed, with:
- 30 test rows that are exact copies of train rows (``leakage.duplicates``);
- 45 test customers who also appear in train (``leakage.group_overlap``);
- 60 test rows dated inside train's time range (``leakage.temporal``);
- ``days_since_cancel``, filled in only after a customer churned (``leakage.single_feature_auc``);
- ``monthly_spend`` shifted up 25% in test (``drift.features``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

SIZES = {"train": 6000, "val": 1500, "test": 1500}
PLANS = ["basic", "plus", "pro", "family"]
REGIONS = ["north", "south", "east", "west", "central"]
PHRASES = ["asked about pricing", "reported a billing issue", "upgraded last month",
           "called support twice", "happy with the service", "wants a discount",
           "moved to a new address", "complained about speed"]


def make_split(rng: np.random.Generator, n: int, start: str, end: str, id_offset: int,
               spend_scale: float = 1.0) -> pl.DataFrame:
    t0 = np.datetime64(start, "s").astype(np.int64)
    t1 = np.datetime64(end, "s").astype(np.int64)
    ts = np.sort(rng.integers(t0, t1, n))
    tenure = rng.integers(1, 72, n)
    spend = np.round(rng.gamma(4.0, 12.0, n) * spend_scale, 2)
    plan = rng.choice(PLANS, n, p=[0.4, 0.3, 0.2, 0.1])
    support = rng.poisson(1.2, n)
    logit = -1.2 - 0.03 * tenure + 0.35 * support + 0.01 * spend
    churned = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    days = np.where(churned == 1, rng.integers(0, 45, n).astype(float), np.nan)
    notes = [f"customer {PHRASES[i % len(PHRASES)]} and {PHRASES[(i * 3 + 1) % len(PHRASES)]}"
             for i in rng.integers(0, 10_000, n)]
    return pl.DataFrame({
        "row_id": np.arange(id_offset, id_offset + n),
        "customer_id": [f"C{id_offset + i:06d}" for i in range(n)],
        "signup_ts": (ts * 1_000_000).astype("datetime64[us]"),
        "age": rng.integers(18, 90, n),
        "tenure_months": tenure,
        "monthly_spend": spend,
        "plan": plan,
        "region": rng.choice(REGIONS, n),
        "support_calls": support,
        "days_since_cancel": pl.Series(days).fill_nan(None),
        "notes": notes,
        "churned": churned,
    })


def make_demo(seed: int = 7) -> dict[str, pl.DataFrame]:
    """The three splits, with every planted problem listed in the module docstring."""
    rng = np.random.default_rng(seed)
    train = make_split(rng, SIZES["train"], "2025-01-01", "2025-09-01", 0)
    val = make_split(rng, SIZES["val"], "2025-09-01", "2025-11-01", 100_000)
    test = make_split(rng, SIZES["test"], "2025-11-01", "2026-01-01", 200_000, spend_scale=1.25)
    # 45 test customers who also appear in train (different rows, same entity).
    idx_test = rng.choice(test.height, 45, replace=False)
    idx_train = rng.choice(train.height, 45, replace=False)
    cust = test["customer_id"].to_numpy().copy()
    cust[idx_test] = train["customer_id"].to_numpy()[idx_train]
    test = test.with_columns(pl.Series("customer_id", cust))
    # 60 test rows dated inside train's time range.
    late = rng.choice(test.height, 60, replace=False)
    ts = test["signup_ts"].to_numpy().copy()
    ts[late] = np.datetime64("2025-06-15T12:00:00", "us")
    test = test.with_columns(pl.Series("signup_ts", ts).cast(pl.Datetime("us")))
    # 30 exact copies of train rows in test (new row ids: ids are ignored by the check).
    src = rng.choice(train.height, 30, replace=False)
    dst = np.sort(rng.choice(test.height, 30, replace=False))
    copies = train[src].with_columns(pl.Series("row_id", test["row_id"].to_numpy()[dst]))
    keep = np.setdiff1d(np.arange(test.height), dst)
    test = pl.concat([test[keep], copies]).sort("row_id")
    return {"train": train, "val": val, "test": test}


AUDIT_YAML = """\
# Demo audit: a churn dataset with planted problems (see auditor/loading/demo.py).
datasets: {train: train.parquet, val: val.parquet, test: test.parquet}
columns:
  label: churned
  time: signup_ts
  groups: [customer_id]
  ids: [row_id]
  text: [notes]
suite: default
seed: 0
"""


def write_demo(folder: Path, seed: int = 7) -> Path:
    """Write the demo splits as Parquet plus ``audit.yaml`` into ``folder``; return the YAML."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, df in make_demo(seed).items():
        df.write_parquet(folder / f"{name}.parquet")
    path = folder / "audit.yaml"
    path.write_text(AUDIT_YAML, encoding="utf-8")
    return path
