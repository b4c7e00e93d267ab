"""The per-check Spark twins of the checks not yet written as ``measure``/``judge``. A check
that is runs the same code on every engine through :func:`auditor.detectors.measured.judged`
and has no entry here: ``leakage.group_overlap``, ``leakage.temporal``,
``schema.consistency``, ``drift.label``, ``drift.features``, ``schema.expectations``
(``validate_suite``) and, on the driver-side sample (``driver_data``), ``separability.adversarial``,
``separability.label_probe`` and ``separability.memorisation``, through the label operations
(``class_ranks``, ``class_levels``, ``target_rate_aucs``: every labelled row) and the
driver-side sample ``leakage.single_feature_auc`` and ``leakage.feature_label_correlation``,
through ``fit_context`` ``leakage.preprocessing``, and through ``map_batches``
(a polars function per batch of rows, on the executors) ``tokens.lengths``,
``tokens.special_tokens`` and ``tokens.roundtrip``, and through ``matches`` (rows a polars
function makes of each batch, joined on the executors) ``tokens.contamination``.

- ``leakage.duplicates`` (:class:`auditor.sparktwins.spark_rows.RowTable`): every row of the
  unioned splits gets a 128-bit key (two ``xxhash64`` plus null masks) for the whole row, the
  features plus label and the normalised near-copy form, once; one ``groupBy`` of the keys
  gives a persisted count table from which exact copies across splits, within-split copies,
  the chance baseline (repeated-key counts and design effects), near copies and conflicting
  labels are aggregates (no joins on the columns). Continuous columns are decided by an HLL++
  distinct count (rsd 1%) with exact counts only near the cut. Not yet: near copies matched on
  free-text columns (MinHash; an info finding says so).

Every other check raises NotApplicable("not yet implemented on the spark engine"): the runner
reports it as ``skipped`` with that reason.
"""
from __future__ import annotations

from typing import Any, Callable

from auditor.engines import NOT_ON_SPARK
from auditor.sparktwins import spark_checks
from auditor.errors import NotApplicable
from auditor.report.results import Finding


def run_on_spark(check: Any, data: Any) -> list[Finding]:
    """The check's findings on the spark engine, or NotApplicable with the reason."""
    impl = SPARK_CHECKS.get(check.id)
    if impl is None:
        raise NotApplicable(NOT_ON_SPARK)
    return impl(check, data)


SPARK_CHECKS: dict[str, Callable[[Any, Any], list[Finding]]] = {
    "leakage.duplicates": spark_checks.duplicates,
}
