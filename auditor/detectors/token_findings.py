"""Shared pieces of the tokens.* findings: validation of parameters, rows flagged per split
with their denominators, one-sentence messages, and short renderings of ids and text."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_count, fmt_share, share

CELL_CHARS = 80


def short(s: str, n: int = CELL_CHARS) -> str:
    s = s.replace("\n", "\u21b5")
    return s if len(s) <= n else s[:n - 1] + "\u2026"


def ids_text(ids: Any, n: int = 8, tail: bool = False) -> str:
    """A list of ids shown compactly: its first (or last) ``n`` values."""
    ids = list(ids) if ids is not None else []
    if len(ids) <= n:
        return "[" + ", ".join(map(str, ids)) + "]"
    part = ids[-n:] if tail else ids[:n]
    body = ", ".join(map(str, part))
    return f"[…, {body}]" if tail else f"[{body}, …]"


def by_split_text(counts: dict[str, int]) -> str:
    """' (train 80, test 40)' when more than one split is involved, else ''."""
    if len(counts) < 2:
        return ""
    return " (" + ", ".join(f"{k} {v:,}" for k, v in counts.items()) + ")"


def check_shares(obj: Any, *names: str) -> None:
    for name in names:
        v = getattr(obj, name)
        if v is not None and not 0 <= v <= 1:
            raise ValueError(f"{name} must be a share in [0, 1]; got {v!r}")


def check_non_negative(obj: Any, *names: str) -> None:
    for name in names:
        v = getattr(obj, name)
        if v is not None and v < 0:
            raise ValueError(f"{name} must be >= 0; got {v!r}")


@dataclass
class RowProblem:
    """Rows flagged by one test, per split, with the denominator and a few example rows."""

    counts: dict[str, int]
    totals: dict[str, int]
    rows: dict[str, np.ndarray]

    @property
    def count(self) -> int:
        return sum(self.counts.values())

    @property
    def total(self) -> int:
        return sum(self.totals.values())

    def sentence(self, unit: str, what: str) -> str:
        return (f"{fmt_count(self.count)} of {fmt_count(self.total)} {unit} "
                f"({fmt_share(share(self.count, self.total))}) {what}"
                f"{by_split_text({k: v for k, v in self.counts.items() if v})}")

    def examples(self, limit: int) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        for name, rows in self.rows.items():
            out += [(name, int(r)) for r in rows[:max(0, limit - len(out))]]
        return out


def row_finding(problem: RowProblem, *, severity: Severity, metric: str, subject: str | list[str],
             message: str, threshold: float | None, evidence: dict[str, Any]) -> Finding:
    return Finding(severity=severity, metric=metric, subject=subject,
                   value=share(problem.count, problem.total), threshold=threshold,
                   count=problem.count, splits=[k for k, v in problem.counts.items() if v],
                   message=message, evidence=evidence)


# The long table a row-flagging batch function returns (tokens.packing, tokens.chat): counts
# (``part`` a total's name, ``test`` the test or column, ``n``) and the first flagged rows
# (``part`` "row": ``row``, ``offset`` in it, ``n`` events, ``view`` what is shown).
ROW_PARTS = {"part": pl.String, "test": pl.String, "row": pl.Int64, "offset": pl.Int64,
             "n": pl.Int64, "view": pl.String}


def part_total(parts: pl.DataFrame, part: str, test: str = "") -> int:
    """The sum of ``n`` over a split's :data:`ROW_PARTS` rows of ``part`` and ``test``."""
    return int(parts.filter((pl.col("part") == part) & (pl.col("test") == test))["n"].sum())


def part_rows(got: dict[str, pl.DataFrame], test: str, limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` flagged rows of ``test`` per split (splits in ``got``'s order, rows
    by number), each a dict of :data:`ROW_PARTS` with its ``split``."""
    return [{**r, "split": s} for s, g in got.items()
            for r in g.filter((pl.col("part") == "row") & (pl.col("test") == test))
            .sort("row").head(limit).iter_rows(named=True)]
