"""What every check shares: its cost class, what it needs, and the protocol the runner relies on.

A check is a frozen, keyword-only dataclass (fields = parameters and thresholds) with class-level
``id``, ``title``, ``cost`` and ``needs``, and two pure halves:

- ``measure(engine, roles) -> Measures``: every row reduced to a plain dataclass of aggregates,
  only through the batched operations of :mod:`auditor.engines` (so it runs unchanged on
  polars and on Spark);
- ``judge(measures) -> list[Finding]``: grading, messages and evidence, with no engine and no
  I/O (a test plants measures and asserts the verdict).

The runner checks ``needs`` once, then calls ``judge(measure(engine, roles))`` for every
engine. A check may instead have only ``run(data) -> list[Finding]`` on polars frames (a
plugin): it runs on polars and is skipped on Spark. There is no base class: this module only
names the shapes.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, fields, is_dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from auditor.core.roles import Roles
    from auditor.engines.operations import Operations
    from auditor.report.results import Finding


class Cost(IntEnum):
    """Run order: hashing and counting, then statistics, then model training."""

    CHEAP = 0
    STATS = 1
    MODEL = 2


@dataclass(frozen=True)
class Needs:
    """What a check needs to be applicable, checked once by the runner before it measures:
    at least ``splits`` splits, and each of ``roles`` declared (``label``, ``time``,
    ``groups``, ``ids``, ``text``, ``tokens``, ``benchmarks``; several names in one string
    separated by ``|``:
    any one of them). Unmet, the check is ``skipped`` with the reason."""

    splits: int = 1
    roles: tuple[str, ...] = ()

    def unmet(self, roles: "Roles") -> str | None:
        """Why the check cannot run on ``roles``, or None."""
        if len(roles.splits) < self.splits:
            return ("only one split: nothing to compare across splits" if len(roles.splits) == 1
                    else f"needs {self.splits} splits; got {len(roles.splits)}")
        for need in self.roles:
            options = need.split("|")
            if not any(_declared(roles, r) for r in options):
                if options == ["tokens"]:
                    return "no tokens: section in the config"
                if options == ["benchmarks"]:
                    return "no benchmarks: section in the config (public evaluation sets)"
                return f"no {' or '.join(_ROLE_WORDS.get(r, r) for r in options)} declared"
        return None


_ROLE_WORDS = {"label": "label column", "time": "time column", "groups": "group column",
               "ids": "id column", "text": "text column", "tokens": "tokens section"}


def _declared(roles: "Roles", role: str) -> bool:
    if role == "tokens":
        return roles.tokens is not None
    if role == "benchmarks":
        return bool(roles.benchmarks)
    return bool(getattr(roles.columns, role))


class Check(Protocol):
    id: ClassVar[str]
    title: ClassVar[str]
    cost: ClassVar[Cost]


class MeasuredCheck(Check, Protocol):
    """A check written once for every engine (see the module docstring)."""

    needs: ClassVar[Needs]

    def measure(self, engine: "Operations", roles: "Roles") -> Any: ...

    def judge(self, measures: Any) -> list["Finding"]: ...


def is_measured(check: Any) -> bool:
    """True for a check split into ``measure`` and ``judge``."""
    return callable(getattr(check, "measure", None)) and callable(getattr(check, "judge", None))


def describe(check: Any) -> str:
    """The first paragraph of a check's docstring: shown in the report next to its findings."""
    doc = inspect.getdoc(type(check)) or ""
    return doc.split("\n\n")[0].replace("\n", " ").strip()


def params_of(check: Any) -> dict[str, Any]:
    """A check's parameters (its dataclass fields) as a plain dict."""
    if not is_dataclass(check):
        return {}
    return {f.name: getattr(check, f.name) for f in fields(check)}
