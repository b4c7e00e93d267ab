"""Render ``report.html`` from the report dict (the same content as ``report.json``).

Jinja2 with autoescape on: every data-derived string is escaped. Charts are inline SVG made by
:mod:`auditor.charts`; CSS and the small table-sorting script are inline. No external URL.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).resolve().parent / "templates"
MAX_TABLE_ROWS = 50
MAX_CHARTS = 60


def fmt_number(v: Any) -> str:
    """Compact human formatting for values and thresholds."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        if v == 0:
            return "0"
        if abs(v) >= 1e5 or abs(v) < 1e-3:
            return f"{v:.3g}"
        if abs(v) >= 100:
            return f"{v:,.1f}"
        return f"{v:.4g}"
    return str(v)


def render_html(report: dict[str, Any]) -> str:
    """The self-contained HTML page for one report dict."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from markupsafe import Markup

    from auditor.charts import render_chart

    budget = {"left": MAX_CHARTS}

    def chart(spec: Any) -> Markup:
        if not isinstance(spec, dict) or budget["left"] <= 0:
            return Markup("")
        budget["left"] -= 1
        try:
            return Markup(render_chart(spec))
        except Exception as err:  # a chart must never sink the report
            return Markup('<p class="muted">chart unavailable: {}</p>').format(str(err)[:200])

    env = Environment(loader=FileSystemLoader(str(TEMPLATES)),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = fmt_number
    env.globals.update(chart=chart, max_rows=MAX_TABLE_ROWS, table_columns=table_columns,
                       is_table=is_table, subject_text=subject_text)
    counts: dict[str, int] = {}
    for c in report.get("checks", []):
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    js = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    return env.get_template("report.html.j2").render(
        r=report, counts=counts, css=Markup(css), js=Markup(js))


def is_table(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def table_columns(rows: list[dict[str, Any]]) -> list[str]:
    cols: list[str] = []
    for row in rows[:MAX_TABLE_ROWS]:
        cols += [k for k in row if k not in cols]
    return cols


def subject_text(subject: Any) -> str:
    if isinstance(subject, list):
        return ", ".join(str(s) for s in subject)
    return str(subject) if subject else "(dataset)"
