"""The abstract values the code scan tracks per variable (role, roots, taints, holdouts) and
the records it collects (see :mod:`auditor.codescan`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from auditor.codescan.vocabulary import FULL


# -- abstract values --------------------------------------------------------------------------
@dataclass(eq=False)
class Obj:
    """A constructed estimator/transformer/splitter (mutable: shared by its aliases)."""

    cls: str
    kind: str                      # transformer | model | splitter
    family: str
    stateless: bool = False
    search: bool = False
    early_stop: bool = False
    events: set[int] = field(default_factory=set)
    mix_fits: list[tuple[int, frozenset[int], str]] = field(default_factory=list)
    trained_on: tuple[int, frozenset[int], str] | None = None  # (line, roots, subject) of a
    # fit on unsplit rows, until it is fitted again
    inner: tuple[frozenset[int], int] | None = None  # (roots, event) of a fit on the training
    # part of a split: its output leaks into a later split of that part (inner CV)


@dataclass(frozen=True)
class Val:
    kind: str = "unknown"   # data stat score const object func module tuple dict iter unknown
    role: str = FULL
    roots: frozenset[int] = frozenset()
    taints: frozenset[int] = frozenset()
    holdouts: frozenset[int] = frozenset()
    evals: frozenset[int] = frozenset()
    subject: str = ""
    name: str = ""
    line: int = 0
    obj: Obj | None = None
    items: tuple["Val", ...] = ()
    keys: tuple[Any, ...] = ()
    node: Any = None
    split_part: bool = False
    index: bool = False
    from_split: bool = False   # role train/val/test given by a split, not only by a name
    subset: bool = False       # bound to a boolean-mask selection of rows (one class's rows)


UNKNOWN = Val()
CONST = Val("const")


@dataclass
class Event:
    metric: str
    family: str
    cls: str
    line: int
    subject: str
    roots: frozenset[int]
    reported: bool = False
    needs_concat: bool = False  # a subset drawn (DataFrame.sample): resampling only once it is
    # combined with other rows of the same data (a class drawn down and put back with the rest)


@dataclass
class Frame:
    start: int
    end: int
    fits: bool = False
    evals: list[int] = field(default_factory=list)
    compared: bool = False


@dataclass
class Selection:
    line: int
    subject: str
    holdouts: frozenset[int]
    evals: frozenset[int]
    how: str
    reported: bool = False
    early_stop: bool = False   # confirmed by a later test evaluation (loops: by a comparison)


@dataclass
class RawFinding:
    metric: str
    family: str
    cls: str
    line: int
    subject: str
    why: str
    split_line: int | None = None   # where the data it leaks into is split (or scored)
    path: tuple[str, ...] = ()      # the variables the fitted output passed through
