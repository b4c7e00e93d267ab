"""auditor.controls.shuffled_label_control: a user's pipeline on permuted labels."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
from scipy.stats import t as student
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline

import auditor
from auditor.controls import CONTROL_ID, shuffled_label_control
from auditor.report.results import Severity, Status

CV = StratifiedKFold(5, shuffle=True, random_state=0)


@pytest.fixture(scope="module")
def noise():
    """100 rows x 5,000 pure-noise features and a random binary label."""
    rng = np.random.default_rng(0)
    return rng.normal(size=(100, 5000)), rng.integers(0, 2, 100)


def select_then_cross_validate(X, y):
    """The classic mistake: feature selection sees every row's label before CV."""
    Xs = SelectKBest(f_classif, k=20).fit_transform(X, y)
    return cross_val_score(LogisticRegression(), Xs, y, cv=CV, scoring="roc_auc").mean()


def select_inside_the_pipeline(X, y):
    pipe = make_pipeline(SelectKBest(f_classif, k=20), LogisticRegression())
    return cross_val_score(pipe, X, y, cv=CV, scoring="roc_auc").mean()


def test_selection_before_cross_validation_is_caught(noise):
    report = shuffled_label_control(select_then_cross_validate, *noise)
    assert report.status == Status.FAIL and report.exit_code() == 1
    (check,) = report.checks
    assert check.id == CONTROL_ID
    (f,) = check.findings
    assert f.severity == Severity.FAIL and f.evidence["verdict"] == "leaks labels"
    assert f.value > 0.8 and f.value > f.threshold and f.count == 5
    assert "leaks labels into evaluation" in f.message


def test_the_same_selection_inside_a_pipeline_stays_at_chance(noise):
    report = shuffled_label_control(select_inside_the_pipeline, *noise)
    (f,) = report.checks[0].findings
    assert report.status == Status.PASS and f.severity == Severity.INFO
    lo, hi = f.evidence["chance_band"]
    assert lo <= f.value <= hi and f.evidence["verdict"] == "at chance"


def test_band_and_mean_follow_the_documented_formula():
    scores = iter([0.52, 0.47, 0.55, 0.50, 0.49, 0.61])
    report = shuffled_label_control(lambda X, y: next(scores), np.zeros((10, 2)),
                                    np.arange(10) % 2, tolerance=0.0)
    (f,) = report.checks[0].findings
    perm = [0.52, 0.47, 0.55, 0.50, 0.49]
    w = student.ppf(0.99, 4) * np.std(perm, ddof=1) / math.sqrt(5)
    assert f.evidence["permuted_label_scores"] == perm
    assert f.evidence["true_label_score"] == 0.61
    assert f.value == pytest.approx(np.mean(perm))
    assert f.evidence["chance_band"] == pytest.approx([0.5 - w, 0.5 + w], abs=1e-6)


def test_the_pipeline_gets_unchanged_features_and_a_permutation_of_the_labels():
    X = pd.DataFrame({"a": range(12)})
    y = pd.Series(np.arange(12) % 3, index=range(100, 112), name="target")
    seen = []

    def record(Xa, ya):
        seen.append((Xa, ya))
        return 0.5
    shuffled_label_control(record, X, y, permutations=3, true_score=False)
    assert len(seen) == 3
    for Xa, ya in seen:
        assert Xa is X
        assert isinstance(ya, pd.Series) and ya.name == "target"
        assert list(ya.index) == list(y.index)
        assert sorted(ya.tolist()) == sorted(y.tolist())
    assert any(ya.tolist() != y.tolist() for _, ya in seen)
    shuffled_label_control(lambda Xa, ya: seen.append(ya) or 0.5, X,
                           pl.Series("t", np.arange(12)), permutations=2, true_score=False)
    assert isinstance(seen[-1], pl.Series) and seen[-1].name == "t"


def test_below_chance_warns():
    report = shuffled_label_control(lambda X, y: 0.2, np.zeros((10, 1)), np.arange(10) % 2)
    (f,) = report.checks[0].findings
    assert f.severity == Severity.WARN and f.evidence["verdict"] == "below chance"
    assert "check that chance=0.5 is right" in f.message


def test_runs_are_deterministic(noise):
    a = shuffled_label_control(select_inside_the_pipeline, *noise, permutations=2, seed=3)
    b = shuffled_label_control(select_inside_the_pipeline, *noise, permutations=2, seed=3)
    assert (a.checks[0].findings[0].evidence["permuted_label_scores"]
            == b.checks[0].findings[0].evidence["permuted_label_scores"])


def test_the_report_serialises_like_an_audit(tmp_path: Path):
    import jsonschema

    report = shuffled_label_control(lambda X, y: float(np.mean(y[:5])), np.zeros((20, 3)),
                                    np.arange(20) % 2, name="my pipeline")
    doc = json.loads(report.to_json())
    schema = json.loads((Path(auditor.__file__).parent / "report" / "schema" /
                         "report.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["datasets"] == {"data": {"path": None, "rows": 20, "columns": 3}}
    html = report.to_html(tmp_path / "report.html").read_text()
    assert "my pipeline: scores on permuted labels" in html and '<div class="chart"' in html


@pytest.mark.parametrize("kwargs, message", [
    (dict(permutations=1), "permutations must be an integer >= 2"),
    (dict(tolerance=1.5), "tolerance must be a number in"),
])
def test_bad_arguments_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        shuffled_label_control(lambda X, y: 0.5, np.zeros((4, 1)), [0, 1, 0, 1], **kwargs)
