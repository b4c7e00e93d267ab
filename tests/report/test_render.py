"""report.html: self-contained, escaped, and showing what the JSON holds."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import auditor
from auditor.report.charts import BUNDLE, LOADER, figure, plotly_inline, plotly_js, script_safe
from auditor.report.render import TEMPLATES, render_html
from tests.browser import chromium, dump_dom

HOSTILE = "<script>alert(1)</script>"


def _hostile_report():
    rng = np.random.default_rng(0)
    n = 300
    train = pl.DataFrame({HOSTILE: rng.choice([HOSTILE, "a\"'&<b>", "😀"], n),
                          "x": rng.normal(size=n), "y": rng.integers(0, 2, n)})
    test = pl.concat([train.head(20), train.tail(100).with_columns(pl.col("x") + 5)])
    return auditor.audit(train=train, test=test, label="y")


def _without_plotly(page: str) -> str:
    """The page minus the inlined plotly.js bundle (third-party code, checked separately)."""
    bundle = plotly_inline()
    assert page.count(bundle) == 1
    return page.replace(bundle, "")


def test_html_escapes_data_strings_and_keeps_only_its_own_scripts():
    report = _hostile_report()
    page = report.to_html()
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    own = (TEMPLATES / "report.js").read_text()
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    assert scripts == [LOADER, own]  # plotly.js's loader once (the page has charts), then ours
    # and the compressed plotly.js itself, a data block the browser never runs
    assert re.findall(r"<script([^>]*)>", page, flags=re.I) == [
        ' type="application/gzip;base64" id="auditor-plotly"', "", ""]
    assert report.check("leakage.duplicates").findings[0].count == 20


def test_html_has_no_external_reference():
    page = _without_plotly(_hostile_report().to_html())
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(//|[a-z]+:)""", page, flags=re.I)
    assert not re.search(r"<(link|img|iframe|object)\b|@import|url\(", page, flags=re.I)


def test_plotly_bundle_is_the_basic_build_of_the_wheels_version_and_cannot_close_its_element():
    import base64
    import gzip

    import plotly

    shipped = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text()
    version = re.search(r"plotly\.js v(\S+)", shipped[:300]).group(1)
    assert plotly_js().startswith(f"/**\n* plotly.js (basic - minified) v{version}\n")
    assert 1_000_000 < len(plotly_js()) < len(shipped) / 3  # a partial bundle, not the 4.8 MB
    assert len(BUNDLE.read_bytes()) < 420_000  # stored gzip-compressed
    assert not re.search(r"</script|<script|<!--", plotly_js(), flags=re.I)  # nothing
    # that could end or confuse the inline <script> element (checked again on any upgrade)
    closing = 's = "</script>"; t = "</SCRIPT >"'
    assert script_safe(closing) == 's = "<\\/script>"; t = "<\\/SCRIPT >"'
    # the page carries the same bytes, base64 in a data block (nothing in it can close it)
    (data,) = re.findall(r'<script type="application/gzip;base64" id="auditor-plotly">'
                         r"([^<]*)</script>", plotly_inline())
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", data)
    assert script_safe(gzip.decompress(base64.b64decode(data)).decode()) == plotly_js()


def test_html_shows_verdict_summary_and_evidence():
    html = _hostile_report().to_html()
    assert 'class="verdict fail"' in html
    assert "20 of 120 test rows (16.7%) are exact copies of train rows" in html
    assert "train_row" in html and "test_row" in html


CHART_SPECS = [
    {"type": "bar", "labels": [HOSTILE, "b"], "values": [0.3, 0.05], "lines": [0.1, 0.25],
     "title": "T & <i>", "xlabel": "x", "ylabel": "y"},
    {"type": "bar", "labels": list("abcdefghij"), "values": [1, None, 3, 4, 5, 6, 7, 8, 9, 10],
     "horizontal": True, "log": True},
    {"type": "hist", "edges": [0, 1, 2, 4], "series": {"train": [1, 2, 3], "test": [3, 2, 1]}},
    {"type": "hist", "edges": [0.0, 86400.0, 172800.0], "series": {"a": [0.5, 0.5]},
     "x_unit": "epoch_seconds"},
    {"type": "roc", "curves": {"x": {"fpr": [0, 0.5, 1], "tpr": [0, 0.9, 1], "auc": 0.7}}},
    {"type": "ranges", "rows": [{"label": "train", "start": "2025-01-01T00:00:00",
                                 "end": "2025-06-01T00:00:00"},
                                {"label": "test", "start": "2025-05-01T00:00:00+02:00",
                                 "end": "2025-09-01T00:00:00Z"}],
     "lines": ["2025-06-01T00:00:00"]},
    {"type": "ranges", "rows": [{"label": "train", "start": 0.0, "end": 99.0}], "lines": [99.0]},
    {"type": "grouped_bar", "categories": ["a", "b"], "series": {"train": [1, 2],
                                                                "test": [2, 1]}},
    {"type": "lines", "x": [1, 2, 3], "series": {"loss": [1.0, float("nan"), 0.2]}},
]


@pytest.mark.parametrize("spec", CHART_SPECS, ids=lambda s: s["type"])
def test_chart_specs_become_valid_plotly_figures(spec):
    import plotly.graph_objects as go

    fig = figure(spec)
    go.Figure(fig)  # plotly's own schema validation: raises on any unknown property or value
    # every trace is one the report's plotly.js build holds (the basic bundle)
    assert {t.get("type", "scatter") for t in fig["data"]} <= {"bar", "scatter", "pie"}
    json.dumps(fig, allow_nan=False)  # NaN/inf never reach the page
    assert fig["data"] and fig["layout"]["height"] == 300


def test_chart_figures_carry_the_spec_values_with_labels_escaped():
    bar, hbar, hist, days, roc, dated, numbered, grouped, lines = map(figure, CHART_SPECS)
    assert bar["data"][0]["x"] == ["&lt;script&gt;alert(1)&lt;/script&gt;", "b"]
    assert bar["data"][0]["y"] == [0.3, 0.05]
    assert [s["y0"] for s in bar["layout"]["shapes"]] == [0.1, 0.25]
    assert bar["layout"]["title"]["text"] == "T &amp; &lt;i&gt;"
    assert hbar["data"][0]["orientation"] == "h" and hbar["data"][0]["x"][1] is None  # a gap
    assert hbar["layout"]["xaxis"]["type"] == "log"
    assert hbar["layout"]["yaxis"]["autorange"] == "reversed"  # first label on top
    assert hist["data"][0]["x"] == [0.5, 1.5, 3.0] and hist["data"][0]["width"] == [1, 1, 2]
    assert [t["name"] for t in hist["data"]] == ["train", "test"]
    assert days["layout"]["xaxis"]["type"] == "date"
    assert days["data"][0]["x"] == [43_200_000.0, 129_600_000.0]  # ms since the epoch
    assert days["data"][0]["customdata"][1] == ["1970-01-02 00:00:00", "1970-01-03 00:00:00"]
    assert roc["data"][0]["name"] == "x (AUC 0.700)" and roc["data"][-1]["name"] == "chance"
    bars = dated["data"][0]
    assert bars["base"] == ["2025-01-01T00:00:00", "2025-04-30T22:00:00"]  # zones -> UTC
    assert bars["x"][0] == 151 * 86_400_000  # Jan 1 -> Jun 1: 151 days in ms
    assert dated["layout"]["shapes"][0]["x0"] == "2025-06-01T00:00:00"
    assert numbered["data"][0]["base"] == [0.0] and numbered["data"][0]["x"] == [99.0]
    assert grouped["layout"]["barmode"] == "group" and len(grouped["data"]) == 2
    assert lines["data"][0]["y"] == [1.0, None, 0.2]
    assert figure({"type": "unknown"}) is None


def test_equal_category_labels_stay_separate_bars():
    fig = figure({"type": "bar", "labels": ["a" * 50 + "1", "a" * 50 + "2"], "values": [1, 2]})
    first, second = fig["data"][0]["x"]
    assert first != second and second.endswith("(2)")
    fig = figure({"type": "bar", "labels": ["a", "a", "a (2)"], "values": [1, 2, 3]})
    assert len(set(fig["data"][0]["x"])) == 3


def test_no_data_string_reaches_a_plotly_template_or_hover_unescaped():
    name = "%{y}<b>x</b>"
    figs = [figure({"type": "hist", "edges": [0, 1], "series": {name: [1]}}),
            figure({"type": "ranges", "rows": [{"label": name, "start": "<b>", "end": name}]}),
            figure({"type": "bar", "labels": [name], "values": [1], "title": name})]
    for fig in figs:
        for trace in fig["data"]:
            assert name not in trace.get("hovertemplate", "")
            assert "<b>" not in json.dumps(trace)  # names, labels and hover values escaped
    assert figs[1]["data"][0]["customdata"] == [["&lt;b&gt;", "%{y}&lt;b&gt;x&lt;/b&gt;"]]


def test_a_spec_with_nothing_to_draw_gives_no_chart_and_no_bundle():
    assert figure({"type": "hist", "edges": [0, None, 2], "series": {"a": [1, 2]}}) is None
    assert figure({"type": "grouped_bar", "categories": ["a"], "series": {}}) is None
    doc = {"schema_version": 1, "tool_version": "t", "status": "warn", "started_at": "s",
           "duration_s": 1.0, "seed": 0, "datasets": {}, "checks": [{
               "id": "a.b", "title": "T", "status": "warn", "duration_s": 0.1, "summary": "S",
               "error": None, "findings": [{
                   "severity": "warn", "subject": "c", "splits": [], "metric": "m",
                   "value": 0.2, "threshold": 0.1, "count": 3, "message": "M",
                   "evidence": {"chart": {"type": "hist", "edges": [None, 1],
                                          "series": {"a": [1]}}}}]}]}
    page = render_html(doc)
    assert 'class="chart"' not in page and len(page) < 100_000


def test_a_missing_plotly_bundle_still_renders_the_report(monkeypatch):
    import auditor.report.charts as charts

    def missing():
        raise FileNotFoundError(charts.BUNDLE)

    monkeypatch.setattr(charts, "plotly_inline", missing)
    page = _hostile_report().to_html()
    assert 'class="chart"' in page and "Dataset audit" in page
    assert len(page) < 1_000_000  # no bundle: report.js shows "chart unavailable" instead


def test_chart_embedded_in_evidence_is_rendered():
    doc = {"schema_version": 1, "tool_version": "t", "status": "warn", "started_at": "s",
           "duration_s": 1.0, "seed": 0, "datasets": {}, "checks": [{
               "id": "a.b", "title": "T", "status": "warn", "duration_s": 0.1, "summary": "S",
               "error": None, "findings": [{
                   "severity": "warn", "subject": "c", "splits": ["train", "test"],
                   "metric": "m", "value": 0.2, "threshold": 0.1, "count": 3, "message": "M",
                   "evidence": {"chart": {"type": "bar", "labels": ["p"], "values": [1]}}}]}]}
    page = render_html(doc)
    (attr,) = re.findall(r'<div class="chart"[^>]*data-fig="([^"]*)"', page)
    fig = json.loads(html.unescape(attr))
    assert fig["data"][0]["x"] == ["p"] and fig["data"][0]["y"] == [1]
    assert page.count(plotly_inline()) == 1
    doc["checks"][0]["findings"][0]["evidence"] = {"rows": 3}
    plain = render_html(doc)
    assert "auditor-plotly" not in plain and len(plain) < 100_000  # no chart, no bundle


@pytest.mark.skipif(chromium() is None, reason="needs a headless Chromium (apt-get install "
                    "chromium)")
def test_every_chart_draws_in_a_headless_browser_without_script_errors(tmp_path):
    findings = [{"severity": "warn", "subject": spec["type"], "splits": [], "metric": "m",
                 "value": 1.0, "threshold": None, "count": None, "message": "M",
                 "evidence": {"chart": spec}} for spec in CHART_SPECS]
    doc = {"schema_version": 1, "tool_version": "t", "status": "warn", "started_at": "s",
           "duration_s": 1.0, "seed": 0, "datasets": {}, "checks": [{
               "id": "a.b", "title": "T", "status": "warn", "duration_s": 0.1, "summary": "S",
               "error": None, "findings": findings}]}
    page = tmp_path / "report.html"
    # evidence is in closed <details> (drawn when opened); open them all for the browser
    page.write_text(render_html(doc).replace("<details>", "<details open>"))
    run = dump_dom(page, tmp_path / "profile", 12_000)
    dom = run.stdout
    assert dom.count('data-drawn="1"') == len(CHART_SPECS), run.stderr[-2000:]
    assert dom.count('class="main-svg"') >= len(CHART_SPECS)  # plotly drew an SVG each
    assert 'class="chart unavailable"' not in dom
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom  # the label, drawn as text
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
