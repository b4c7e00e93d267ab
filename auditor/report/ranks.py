"""How bad a severity or a status is, for ordering (worst highest). String keys: the
``Severity`` and ``Status`` enums are string enums and look the same values up."""
from __future__ import annotations

SEVERITY_RANK = {"info": 0, "warn": 1, "fail": 2}
STATUS_RANK = {"skipped": 0, "pass": 1, "warn": 2, "error": 3, "fail": 4}
