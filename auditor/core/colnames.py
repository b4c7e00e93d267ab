"""Internal helper column names, kept apart from the user's column names in one place.

Checks add helper columns to copies of the user's frames (the coded label of
:mod:`auditor.stats.label`, a row index while sampling, counts in value tables). Every such
name starts with :data:`RESERVED` (``"__auditor_"``). So that no user column can collide with
one, the loader renames, before anything else looks at the data:

- a column whose name starts with ``RESERVED``: ``__auditor_label`` becomes ``_auditor_label``
  (one leading underscore dropped);
- a column with the empty name ``""`` (a CSV header with an empty field, a pandas frame built
  from a dict with key ``""``), which polars itself renames ``column_0`` in some constructors:
  it becomes ``(unnamed column N)``, N its 1-based position in the first split holding it;
- a column whose name polars reads as a pattern in ``pl.col(name)``: ``*`` (every column) or
  ``^...$`` (a regular expression): ``(renamed)`` is appended, ``^x$`` becomes ``^x$ (renamed)``.

A new name that is already taken gets `` (2)``, `` (3)``, ... appended. Declared roles
(label, time, groups, ids, text, exclude, and the token columns) follow the rename, and
``schema.consistency`` reports every rename (info) so that the report's subjects can be
traced back to the file's header.
"""
from __future__ import annotations

from typing import Any, Iterable

RESERVED = "__auditor_"


def helper_name(stem: str, taken: Iterable[str]) -> str:
    """``RESERVED + stem``, extended with ``_`` until it is not in ``taken``.

    For helper columns added to a frame whose columns were not renamed on load (a file read
    again, a single-column frame named after a user column)."""
    taken = set(taken)
    name = RESERVED + stem
    while name in taken:
        name += "_"
    return name


def needs_rename(name: str) -> bool:
    return name == "" or name.startswith(RESERVED) or is_pattern(name)


def is_pattern(name: str) -> bool:
    """True when ``pl.col(name)`` selects by wildcard or regular expression, not by name."""
    return name == "*" or (len(name) > 1 and name.startswith("^") and name.endswith("$"))


def rename_map(column_lists: Iterable[list[str]]) -> dict[str, str]:
    """Old -> new name for every column that :func:`needs_rename`, the same in every split.

    ``column_lists`` are the column names of each split (and the reference) in split order."""
    lists = list(column_lists)
    taken: set[str] = set()
    for cols in lists:
        taken.update(cols)
    out: dict[str, str] = {}
    for cols in lists:
        for pos, name in enumerate(cols):
            if name in out or not needs_rename(name):
                continue
            base = (f"(unnamed column {pos + 1})" if name == "" else
                    f"{name} (renamed)" if is_pattern(name) else name[1:])
            new, k = base, 1
            while new in taken or needs_rename(new):
                k += 1
                new = f"{base} ({k})"
            out[name] = new
            taken.add(new)
    return out


def renamed_roles(model: Any, mapping: dict[str, str], fields: tuple[str, ...]) -> Any:
    """A copy of the pydantic model ``model`` (Columns or Tokens) whose column-name ``fields``
    (strings or lists of strings) follow ``mapping``; ``model`` itself when nothing changes."""
    if model is None or not mapping:
        return model
    update: dict[str, Any] = {}
    for f in fields:
        v = getattr(model, f)
        if isinstance(v, str) and v in mapping:
            update[f] = mapping[v]
        elif isinstance(v, list) and any(x in mapping for x in v):
            update[f] = [mapping.get(x, x) for x in v]
    return model.model_copy(update=update) if update else model


COLUMN_ROLES = ("label", "time", "groups", "ids", "text", "exclude")
TOKEN_ROLES = ("text", "input_ids", "attention_mask", "labels", "position_ids")
