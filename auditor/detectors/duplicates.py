"""Rows shared between splits (exact copies), found by hashing and verified by comparison."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.checks import Cost
from auditor.data import AuditData
from auditor.errors import NotApplicable
from auditor.report import Finding
from auditor.stats import fmt_count, fmt_share, grade, share

CELL_CHARS = 60


@dataclass(frozen=True, kw_only=True)
class Duplicates:
    """Rows of a later split that are exact copies of rows in an earlier split.

    A fail means the evaluation partly measures memorisation: the model saw those rows (with
    their labels) in training. Fix: deduplicate before splitting, or drop the copies from the
    later split. A row is compared on every column except declared ids and excluded columns
    (label included). Value = copied rows of the later split / its rows. Equality: null equals
    null, NaN equals NaN and -0.0 equals 0.0. Candidates come from a 64-bit row hash and every
    candidate pair is verified column by column, so a hash collision cannot create a finding.
    """

    id: ClassVar[str] = "leakage.duplicates"
    title: ClassVar[str] = "Rows shared between splits"
    cost: ClassVar[Cost] = Cost.CHEAP
    warn_above: float = 0.0     # share of the later split's rows
    fail_above: float = 0.001
    max_examples: int = 20

    def __post_init__(self) -> None:
        for name in ("warn_above", "fail_above"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ValueError(f"{name} must be a share in [0, 1]; got {v!r}")
        if self.max_examples < 0:
            raise ValueError(f"max_examples must be >= 0; got {self.max_examples!r}")

    def run(self, data: AuditData) -> list[Finding]:
        if len(data.splits) < 2:
            raise NotApplicable("only one split: nothing to compare across splits")
        cols = data.duplicate_columns()
        findings = []
        for earlier, later in data.pairs():
            pairs = exact_matches(data, earlier, later, cols)
            count = pairs.height
            value = share(count, data.rows(later))
            severity = grade(value, warn=self.warn_above, fail=self.fail_above)
            findings.append(Finding(
                severity=severity, metric="duplicate_rows", value=value,
                threshold=self.fail_above, count=count, splits=[earlier, later],
                message=f"{fmt_count(count)} of {fmt_count(data.rows(later))} {later} rows "
                        f"({fmt_share(value)}) are exact copies of {earlier} rows",
                evidence={"examples": examples(data, pairs, earlier, later, cols,
                                               self.max_examples)} if count else {}))
        return findings


def exact_matches(data: AuditData, earlier: str, later: str, cols: list[str]) -> pl.DataFrame:
    """Rows of ``later`` with an exact copy in ``earlier``: columns ``row_a`` (first matching
    row of earlier) and ``row_b`` (row of later), sorted by ``row_b``.

    One candidate per later row (the first earlier row with the same hash), then verified.
    """
    if not cols:
        return pl.DataFrame({"row_a": [], "row_b": []}, schema={"row_a": pl.UInt32,
                                                                "row_b": pl.UInt32})
    ha = pl.DataFrame({"h": data.row_hashes(earlier, cols)}).with_row_index("row_a")
    hb = pl.DataFrame({"h": data.row_hashes(later, cols)}).with_row_index("row_b")
    first_a = ha.group_by("h").agg(pl.col("row_a").min())
    cand = hb.join(first_a, on="h", how="inner").select("row_a", "row_b").sort("row_b")
    if cand.height == 0:
        return cand
    equal = rows_equal(data.splits[earlier], cand["row_a"], data.splits[later], cand["row_b"],
                       cols)
    return cand.filter(pl.Series(equal))


def rows_equal(fa: pl.DataFrame, ia: pl.Series, fb: pl.DataFrame, ib: pl.Series,
               cols: list[str]) -> np.ndarray:
    """Element-wise row equality of ``fa[ia]`` and ``fb[ib]`` over ``cols`` (null-safe)."""
    a = fa.select(cols)[ia]
    b = fb.select(cols)[ib]
    mask = np.ones(len(ia), dtype=bool)
    for c in cols:  # a loop over columns, vectorised over rows
        mask &= a[c].eq_missing(b[c]).fill_null(False).to_numpy()
    return mask


def examples(data: AuditData, pairs: pl.DataFrame, earlier: str, later: str, cols: list[str],
             limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` matched row pairs with a short rendering of the shared values."""
    head = pairs.head(limit)
    if head.height == 0:
        return []
    shown = cols[:8]
    values = data.splits[later].select(shown)[head["row_b"]]
    out = []
    for (ra, rb), row in zip(head.iter_rows(), values.iter_rows()):
        cells = ", ".join(f"{c}={_cell(v)}" for c, v in zip(shown, row))
        if len(cols) > len(shown):
            cells += f", … (+{len(cols) - len(shown)} columns)"
        out.append({f"{earlier}_row": ra, f"{later}_row": rb, "values": cells})
    return out


def _cell(v: Any) -> str:
    s = repr(v) if isinstance(v, str) else str(v)
    return s if len(s) <= CELL_CHARS else s[:CELL_CHARS - 1] + "…"
