"""docs/checks.md is the generated check reference and stays in step with the checks."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from auditor.core.registry import CHECKS, load_check_class
from auditor.report.reference import COMMAND, check_reference

CHECKS_MD = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def test_docs_checks_md_is_the_generated_reference():
    assert CHECKS_MD.read_text(encoding="utf-8") == check_reference(), (
        f"docs/checks.md is out of date with the checks' docstrings or parameters; "
        f"regenerate it: {COMMAND}")


def test_every_registered_check_has_a_heading():
    for text in (check_reference(), CHECKS_MD.read_text(encoding="utf-8")):
        headings = re.findall(r"^## (\S+)$", text, flags=re.MULTILINE)
        assert headings == list(CHECKS)


def test_every_parameter_of_every_check_is_a_table_row():
    text = check_reference()
    for check_id in CHECKS:
        section = text.split(f"\n## {check_id}\n", 1)[1].split("\n## ", 1)[0]
        rows = re.findall(r"^\| `(\w+)` \| `.+` \| `.*` \|$", section, flags=re.MULTILINE)
        assert rows == [f.name for f in dataclasses.fields(load_check_class(check_id))], check_id
