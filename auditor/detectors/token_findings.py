"""Shared pieces of the tokens.* findings: validation of parameters, rows flagged per split
with their denominators, one-sentence messages, and short renderings of ids and text."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from auditor.loading.data import AuditData
from auditor.detectors.token_layout import Layout, token_frame
from auditor.errors import NotApplicable
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


def require_tokens(data: AuditData) -> None:
    if data.tokens is None:
        raise NotApplicable("no tokens: section in the config")


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

    @classmethod
    def of(cls, layout: Layout, flag: dict[str, np.ndarray],
           among: dict[str, np.ndarray] | None = None) -> "RowProblem":
        counts, totals, rows = {}, {}, {}
        for name, s in layout.splits.items():
            base = among[name] if among is not None else np.ones(s.rows, dtype=bool)
            hit = flag[name] & base
            counts[name] = int(hit.sum())
            totals[name] = int(base.sum())
            rows[name] = np.flatnonzero(hit)
        return cls(counts, totals, rows)

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


def row_examples(data: AuditData, picks: list[tuple[str, int]], layout: Layout,
                  columns: list[str], tail: bool = False, n: int = 8) -> list[dict[str, Any]]:
    """Short views of example rows: split, row, lengths and the first/last ids of columns."""
    out = []
    for split, row in picks:
        s = layout.splits[split]
        rec: dict[str, Any] = {"split": split, "row": row, "length": int(s.length[row]),
                               "content": int(s.content[row]),
                               "padding": f"{int(s.pad_left[row])} left, "
                                          f"{int(s.pad_right[row])} right"}
        values = token_frame(data, split).select(columns).row(row)
        for col, v in zip(columns, values):
            rec[f"{col} ({'last' if tail else 'first'} {n})"] = ids_text(v, n, tail=tail)
        out.append(rec)
    return out
