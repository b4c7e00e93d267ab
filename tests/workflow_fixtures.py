"""Shared data for the workflow tests (waivers, provenance, ledger, CI outputs, recipes)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

SUITE = """description: quick suite for workflow tests
checks:
  leakage.duplicates: {}
  leakage.single_feature_auc: {}
  drift.features: {}
"""


def suite_file(folder: Path) -> Path:
    path = folder / "suite.yaml"
    path.write_text(SUITE)
    return path


def planted(n: int = 600, seed: int = 0, shift: float = 1.5, copies: int = 12
            ) -> dict[str, pl.DataFrame]:
    """train/test with ``copies`` test rows copied from train, a leaky feature ``balance``
    (AUC ~1) and five features shifted by ``shift`` in test (PSI fail, one finding each)."""
    rng = np.random.default_rng(seed)

    def frame(m: int, offset: float) -> pl.DataFrame:
        y = rng.integers(0, 2, m)
        cols = {f"f{i}": rng.normal(size=m) + offset for i in range(5)}
        return pl.DataFrame({**cols, "noise": rng.normal(size=m),
                             "balance": y * 3.0 + rng.normal(scale=0.1, size=m), "y": y})

    train = frame(n, 0.0)
    test = pl.concat([frame(n // 3, shift), train.head(copies)])
    return {"train": train, "test": test}
