"""The check reference (docs/checks.md), generated from the checks themselves.

Each check registered in ``auditor.core.registry.CHECKS`` gets a section: its id and ``title``,
its cost class, its whole docstring (the one source of a check's text: its first paragraph is
also what the report shows) and a table of its parameters (the dataclass fields: name, type,
default). Regenerate after changing a check:

    python -m auditor.report.reference > docs/checks.md

``tests/report/test_reference.py`` fails while docs/checks.md differs from this output.
Importing a check class is cheap: the checks import their heavy libraries inside functions.
"""
from __future__ import annotations

import dataclasses
import enum
import inspect
import re
from typing import Any

from auditor.core.registry import CHECKS, load_check_class

COMMAND = "python -m auditor.report.reference > docs/checks.md"


def check_reference() -> str:
    """Markdown reference of every registered check, in registry order."""
    lines = [
        "# Check reference",
        "",
        "Generated from the checks' docstrings and parameters; do not edit by hand (a test",
        "fails when this file and the code disagree). Regenerate with",
        "",
        f"    {COMMAND}",
        "",
        "Checks run cheapest first: `CHEAP` (hashing and counting), then `STATS` (statistics),",
        "then `MODEL` (model training). Every parameter can be set in a suite or under",
        "`thresholds:` in audit.yaml (see [configuration](configuration.md#suites)).",
        "",
        "| id | title | cost |",
        "|---|---|---|",
    ]
    classes = {check_id: load_check_class(check_id) for check_id in CHECKS}
    for check_id, cls in classes.items():
        lines.append(f"| [`{check_id}`](#{_anchor(check_id)}) | {_cell(cls.title)} "
                     f"| {cls.cost.name} |")
    for check_id, cls in classes.items():
        lines += ["", *_section(check_id, cls)]
    return "\n".join(lines) + "\n"


def _section(check_id: str, cls: type[Any]) -> list[str]:
    lines = [f"## {check_id}", "", f"**{cls.title}** · cost: `{cls.cost.name}` · "
             f"class `{cls.__module__}.{cls.__qualname__}`", ""]
    doc = inspect.getdoc(cls) or "(no docstring)"
    # a docstring line opening with ">" (a threshold) is text, not a Markdown quote
    lines += [re.sub(r"^>", r"\\>", doc, flags=re.MULTILINE), ""]
    fields = dataclasses.fields(cls)
    if not fields:
        return lines + ["No parameters."]
    lines += ["| parameter | type | default |", "|---|---|---|"]
    for f in fields:
        lines.append(f"| `{f.name}` | `{_cell(_type_name(f.type))}` | `{_cell(_default(f))}` |")
    return lines


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, str):  # annotations are strings under `from __future__`
        return annotation
    return getattr(annotation, "__name__", repr(annotation))


def _default(f: dataclasses.Field[Any]) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return "(required)"
    return repr(value.value) if isinstance(value, enum.Enum) else repr(value)


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _anchor(check_id: str) -> str:
    """The anchor GitHub gives the heading ``## <check_id>``."""
    return "".join(c for c in check_id.lower() if c.isalnum() or c in "-_ ").replace(" ", "-")


if __name__ == "__main__":
    print(check_reference(), end="")
