"""report.html: self-contained, escaped, and showing what the JSON holds."""
from __future__ import annotations

import re

import numpy as np
import polars as pl

import auditor
from auditor.charts import render_chart
from auditor.render import render_html

HOSTILE = "<script>alert(1)</script>"


def _hostile_report():
    rng = np.random.default_rng(0)
    n = 300
    train = pl.DataFrame({HOSTILE: rng.choice([HOSTILE, "a\"'&<b>", "😀"], n),
                          "x": rng.normal(size=n), "y": rng.integers(0, 2, n)})
    test = pl.concat([train.head(20), train.tail(100).with_columns(pl.col("x") + 5)])
    return auditor.audit(train=train, test=test, label="y")


def test_html_escapes_data_strings_and_keeps_only_its_own_script():
    report = _hostile_report()
    html = report.to_html()
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert len(re.findall(r"<script", html, flags=re.I)) == 1  # the report's own sorter
    assert report.check("leakage.duplicates").findings[0].count == 20


def test_html_has_no_external_reference():
    html = _hostile_report().to_html()
    assert "http://" not in html and "https://" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(//|[a-z]+:)""", html, flags=re.I)


def test_html_shows_verdict_summary_and_evidence():
    html = _hostile_report().to_html()
    assert 'class="verdict fail"' in html
    assert "20 of 120 test rows (16.7%) are exact copies of train rows" in html
    assert "train_row" in html and "test_row" in html


def test_charts_render_offline_svg_with_escaped_labels():
    specs = [
        {"type": "bar", "labels": [HOSTILE, "b"], "values": [0.3, 0.05], "lines": [0.1, 0.25]},
        {"type": "hist", "edges": [0, 1, 2, 3], "series": {"train": [1, 2, 3],
                                                           "test": [3, 2, 1]}},
        {"type": "roc", "curves": {"x": {"fpr": [0, 0.5, 1], "tpr": [0, 0.9, 1], "auc": 0.7}}},
        {"type": "ranges", "rows": [{"label": "train", "start": "2025-01-01T00:00:00",
                                     "end": "2025-06-01T00:00:00"},
                                    {"label": "test", "start": "2025-05-01T00:00:00",
                                     "end": "2025-09-01T00:00:00"}]},
        {"type": "grouped_bar", "categories": ["a", "b"], "series": {"train": [1, 2],
                                                                    "test": [2, 1]}},
        {"type": "lines", "x": [1, 2, 3], "series": {"loss": [1.0, 0.5, 0.2]}},
    ]
    for spec in specs:
        svg = render_chart(spec)
        assert svg.startswith("<svg") and svg.endswith("</svg>"), spec["type"]
        assert "http" not in svg and "<script" not in svg.lower()
    assert "&lt;script&gt;" in render_chart(specs[0])
    assert render_chart({"type": "unknown"}) == ""


def test_chart_embedded_in_evidence_is_rendered():
    doc = {"schema_version": 1, "tool_version": "t", "status": "warn", "started_at": "s",
           "duration_s": 1.0, "seed": 0, "datasets": {}, "checks": [{
               "id": "a.b", "title": "T", "status": "warn", "duration_s": 0.1, "summary": "S",
               "error": None, "findings": [{
                   "severity": "warn", "subject": "c", "splits": ["train", "test"],
                   "metric": "m", "value": 0.2, "threshold": 0.1, "count": 3, "message": "M",
                   "evidence": {"chart": {"type": "bar", "labels": ["p"], "values": [1]}}}]}]}
    html = render_html(doc)
    assert html.count("<svg") == 1
