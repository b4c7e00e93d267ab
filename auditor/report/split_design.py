"""report.json's ``split_design`` (how the splits were made, declared or inferred: see
:mod:`auditor.judging.design`) in words, for every output that states it."""
from __future__ import annotations

from typing import Any

DESIGN_WORDS = {"random": "a random split", "stratified": "a stratified split",
                "group": "a group split", "time": "a time split",
                "published": "a published split", "unknown": "a split of unknown design"}


def design_sentence(design: dict[str, Any] | None) -> str:
    """report.json's ``split_design`` in one line, e.g. "Judged as a time split by
    `signup_ts` (inferred: every later split starts after ...)"; "" without one."""
    if not design:
        return ""
    what = DESIGN_WORDS.get(str(design.get("design")), f"a {design.get('design')} split")
    by = f" by `{design['by']}`" if design.get("by") else ""
    how = "declared" if design.get("declared") else "inferred"
    return f"Judged as {what}{by} ({how}: {design.get('reason', '')})"
