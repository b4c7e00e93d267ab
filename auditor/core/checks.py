"""What every check shares: its cost class and the protocol the runner relies on.

A check is a frozen, keyword-only dataclass (fields = parameters and thresholds) with class-level
``id``, ``title`` and ``cost`` and one pure ``run(data) -> list[Finding]``. There is no base
class: this module only names the shapes.
"""
from __future__ import annotations

import inspect
from dataclasses import fields, is_dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from auditor.loading.data import AuditData
    from auditor.report.results import Finding


class Cost(IntEnum):
    """Run order: hashing and counting, then statistics, then model training."""

    CHEAP = 0
    STATS = 1
    MODEL = 2


class Check(Protocol):
    id: ClassVar[str]
    title: ClassVar[str]
    cost: ClassVar[Cost]

    def run(self, data: "AuditData") -> list["Finding"]: ...


def describe(check: Any) -> str:
    """The first paragraph of a check's docstring: shown in the report next to its findings."""
    doc = inspect.getdoc(type(check)) or ""
    return doc.split("\n\n")[0].replace("\n", " ").strip()


def params_of(check: Any) -> dict[str, Any]:
    """A check's parameters (its dataclass fields) as a plain dict."""
    if not is_dataclass(check):
        return {}
    return {f.name: getattr(check, f.name) for f in fields(check)}
