"""auditor: audit ML dataset splits before you trust a metric trained on them.

The public Python API is :func:`audit` and :class:`Report` (``Report.from_json`` reads a
``report.json``); both are imported lazily so that ``import auditor`` and ``auditor --help``
stay fast (no polars/numpy/sklearn/torch at import time).
"""
from __future__ import annotations

import typing as _typing

__version__ = "0.1.0"
__all__ = ["audit", "Report", "__version__"]

if _typing.TYPE_CHECKING:  # pragma: no cover
    from auditor.report.results import Report


def audit(**kwargs: _typing.Any) -> "Report":
    """Audit splits given as polars or pandas DataFrames (or file paths); see
    :func:`auditor.api.audit`."""
    from auditor.api import audit as _audit

    return _audit(**kwargs)


def __getattr__(name: str) -> _typing.Any:
    """``auditor.Report``, imported on first use."""
    if name == "Report":
        from auditor.report.results import Report

        return Report
    raise AttributeError(f"module 'auditor' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names only (not the module's own imports)."""
    return sorted(__all__)
