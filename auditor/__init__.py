"""auditor: audit ML dataset splits before you trust a metric trained on them.

The public Python API is :func:`audit`; it is imported lazily so that ``import auditor``
and ``auditor --help`` stay fast (no polars/numpy/sklearn/torch at import time).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["audit", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from auditor.report.results import Report


def audit(**kwargs: Any) -> "Report":
    """Audit splits given as polars or pandas DataFrames (or file paths); see
    :func:`auditor.api.audit`."""
    from auditor.api import audit as _audit

    return _audit(**kwargs)
