"""Every check id -> ``"module:Class"``. Modules are imported only when their check runs.

Explicit and lazy: no decorators, metaclasses or import side effects. The order here is the
tie-break after cost when the runner orders checks. ``tests/core/test_registry.py`` asserts that
this dict, the classes in ``auditor/detectors/`` and their ``id``s agree.
"""
from __future__ import annotations

import importlib
from typing import Any

from auditor.errors import ConfigError

CHECKS: dict[str, str] = {
    "schema.consistency": "auditor.detectors.schema:SchemaConsistency",
    "schema.expectations": "auditor.detectors.expectations:Expectations",
    "leakage.duplicates": "auditor.detectors.duplicates:Duplicates",
    "leakage.group_overlap": "auditor.detectors.groups:GroupOverlap",
    "leakage.temporal": "auditor.detectors.temporal:TemporalHoldout",
    "leakage.single_feature_auc": "auditor.detectors.single_feature_auc:SingleFeatureAUC",
    "leakage.feature_label_correlation":
        "auditor.detectors.label_association:FeatureLabelAssociation",
    "leakage.preprocessing": "auditor.detectors.preprocessing:PreprocessingFit",
    "drift.features": "auditor.detectors.drift:FeatureDrift",
    "drift.label": "auditor.detectors.drift:LabelDrift",
    "separability.adversarial": "auditor.detectors.separability:AdversarialValidation",
    "separability.label_probe": "auditor.detectors.separability:LabelProbe",
    "separability.memorisation": "auditor.detectors.memorisation:Memorisation",
    "tokens.roundtrip": "auditor.detectors.token_roundtrip:RoundTrip",
    "tokens.special_tokens": "auditor.detectors.tokens:SpecialTokens",
    "tokens.contamination": "auditor.detectors.token_contamination:Contamination",
    "tokens.lengths": "auditor.detectors.token_lengths:SequenceLengths",
    "tokens.chat": "auditor.detectors.token_chat:ChatCheck",
    "tokens.packing": "auditor.detectors.token_packing:PackingCheck",
    "tokens.benchmarks": "auditor.detectors.token_benchmarks:BenchmarkContamination",
}


def load_check_class(check_id: str) -> type[Any]:
    """Import and return the class registered for ``check_id``."""
    try:
        target = CHECKS[check_id]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(check_id, list(CHECKS), n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"unknown check id {check_id!r}{hint}; known ids: "
                          f"{', '.join(CHECKS)}") from None
    module, _, cls = target.partition(":")
    found: type[Any] = getattr(importlib.import_module(module), cls)
    return found
