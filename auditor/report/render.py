"""Render ``report.html`` from the report dict (the same content as ``report.json``).

Jinja2 with autoescape on: every data-derived string is escaped. Charts are plotly.js figures
(:mod:`auditor.report.charts`) stored as escaped JSON in a ``data-fig`` attribute and drawn by the
inline report script (those in view first, then the rest of the page a chart at a time, so that
a screenshot or a print shows every one); plotly.js itself is inlined once, compressed, only
when the report has a chart. CSS and scripts are inline: the page loads nothing from anywhere.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from auditor.report.charts import clip_text
from auditor.report.ranks import SEVERITY_RANK

TEMPLATES = Path(__file__).resolve().parent / "templates"
MAX_TABLE_ROWS = 50
MAX_CHARTS = 60
MAX_EVIDENCE = 100  # evidence blocks per check; the rest are in report.json


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

    from auditor.report.charts import figure, max_width_px
    from auditor.report.diagnosis import diagnose
    from auditor.report.grouping import group_findings, worst_first
    from auditor.report.split_design import design_sentence

    budget = {"left": MAX_CHARTS, "drawn": 0}

    def chart(spec: Any) -> Markup:
        if not isinstance(spec, dict) or budget["left"] <= 0:
            return Markup("")
        budget["left"] -= 1
        try:
            fig = figure(spec)
            if fig is None:
                return Markup("")
            payload = json.dumps(fig, separators=(",", ":"), allow_nan=False)
        except Exception as err:  # a chart must never sink the report
            return Markup('<p class="muted">chart unavailable: {}</p>').format(str(err)[:200])
        budget["drawn"] += 1
        return Markup('<div class="chart" style="height:{}px;max-width:{}px" '
                      'data-fig="{}"></div>').format(fig["layout"]["height"],
                                                     max_width_px(spec), payload)

    def plotly() -> Markup:
        """plotly.js, when the page drew a chart (call after the body is rendered)."""
        if not budget["drawn"]:
            return Markup("")
        from auditor.report.charts import plotly_inline
        try:
            return Markup(plotly_inline())
        except OSError:  # report.js then says so in place of each chart
            return Markup("")

    env = Environment(loader=FileSystemLoader(str(TEMPLATES)),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = fmt_number
    env.filters["design"] = design_sentence
    numbered = list(enumerate(report.get("checks", []), 1))  # anchors keep the run order
    anchors = {c["id"]: i for i, c in numbered}
    rank = {id(c): k for k, c in enumerate(worst_first([c for _, c in numbered]))}
    # from the findings (as report.json's copy was made): never stale, and a report.json
    # written before the diagnosis existed gets one
    problems = [p.to_dict() for p in diagnose(report)]
    env.globals.update(checks=sorted(numbered, key=lambda ic: rank[id(ic[1])]),
                       anchors=anchors, problems=problems,
                       inflation_chart=inflation_chart)
    env.globals.update(chart=chart, plotly=plotly, max_rows=MAX_TABLE_ROWS,
                       table_columns=table_columns, is_table=is_table, subject_text=subject_text,
                       rule_sentence=rule_sentence, grading_figures=grading_figures,
                       decided_by=group_decided_by,
                       group_findings=group_findings, evidence_shown=evidence_shown)
    counts: dict[str, int] = {}
    waived = 0  # findings accepted by waivers: said in the verdict, never silently
    for c in report.get("checks", []):
        counts[c["status"]] = counts.get(c["status"], 0) + 1
        waived += sum(f.get("waived") is not None for f in c.get("findings", []))
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    js = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    return env.get_template("report.html.j2").render(
        r=report, counts=counts, waived=waived, css=Markup(css), js=Markup(js))


def inflation_chart(problems: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Grouped bars of the label probe's score with and without each problem whose inflation
    the run measured (None when none was)."""
    measured = [p for p in problems if p.get("inflation")]
    if not measured:
        return None
    metric = measured[0]["inflation"]["metric"]
    short = {"shared_rows": "shared rows", "shared_entities": "shared entities",
             "time_overlap": "time overlap"}
    return {"type": "grouped_bar",
            "categories": [f"{p['rank']}. " + (", ".join(p["subjects"][:2])
                                               if p["kind"] == "label_leak" else
                                               short.get(p["kind"], p["kind"]))
                           for p in measured],
            "series": {"with the problem": [p["inflation"]["score"] for p in measured],
                       "without it": [p["inflation"]["without"] for p in measured]},
            "title": f"The label probe's {metric} with and without each problem",
            "ylabel": metric}


def _rule_name(rule: Any) -> str:
    return str(rule).replace("_", " ")


def decided_by(finding: dict[str, Any]) -> str | None:
    """The grading rule that set a finding's severity when it is not the plain comparison of
    its value with its threshold (a post-outcome missingness FAIL below ``fail_above``, a
    near-deterministic FAIL on the train figure, a strong-but-not-singular WARN above it),
    with the figure and threshold that rule compared: the findings table shows it beside the
    threshold, so that value, threshold and severity never read as a contradiction."""
    grading = (finding.get("evidence") or {}).get("grading")
    if not isinstance(grading, dict) or grading.get("rule") in (None, "threshold"):
        return None
    # the rule's own figure and threshold ("AUC 1.000 in train >= 0.995"), as the rule
    # states it in its evidence; the explanation stays in the evidence's sentence
    decision = grading.get("decision")
    name = _rule_name(grading["rule"])
    return clip_text(f"{name}: {decision}" if decision else name, 160)


def group_decided_by(findings: list[dict[str, Any]]) -> str | None:
    """:func:`decided_by` for a findings-table row: a row of one finding states its rule's
    figure; a row grouping several names their rule when they share it (each subject's own
    figure is in its evidence), else nothing."""
    if len(findings) == 1:
        return decided_by(findings[0])
    rules = {str(((f.get("evidence") or {}).get("grading") or {}).get("rule"))
             for f in findings}
    if len(rules) != 1 or decided_by(findings[0]) is None:
        return None
    return _rule_name(rules.pop())


def rule_sentence(grading: dict[str, Any]) -> str:
    """The grading evidence as one sentence: 'Rule "strong not singular": <reason>.', or the
    reason alone when it opens with the rule's name ('post-outcome missingness: ...')."""
    reason = str(grading.get("reason", "")).rstrip(".")
    name = _rule_name(grading.get("rule"))
    if reason.replace("-", " ").lower().startswith(name):
        return f"{reason[:1].upper()}{reason[1:]}."
    return f"Rule \u201c{name}\u201d: {reason}."


def grading_figures(grading: dict[str, Any]) -> dict[str, Any]:
    """The grading evidence without the rule and reason the sentence already says."""
    return {k: v for k, v in grading.items() if k not in ("rule", "reason")}


def evidence_shown(findings: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The findings whose evidence a check's section shows: failures first, then warnings,
    then the rest, waived ones last (each in report order), at most MAX_EVIDENCE; and how many
    more have
    evidence. A table of 10,000 columns has 10,000 drift findings: their evidence stays in
    report.json, and the page stays readable and quick to write."""
    with_evidence = [f for f in findings if f.get("evidence")]
    ranked = sorted(with_evidence, key=lambda f: (f.get("waived") is not None,
                                                  -SEVERITY_RANK.get(f.get("severity"), -1)))
    return ranked[:MAX_EVIDENCE], max(len(ranked) - MAX_EVIDENCE, 0)


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


SUMMARY_STYLE = {"pass": "#1a7f37", "warn": "#b26b00", "fail": "#cf222e", "error": "#8250df",
                 "skipped": "#6e7781", "info": "#0969da"}
MAX_SUMMARY_GROUPS = 12


def render_summary_html(report: dict[str, Any], links: dict[str, str] | None = None) -> str:
    """A compact HTML summary (Jupyter's ``_repr_html_``): the verdict, the diagnosis (ranked
    problems, :mod:`auditor.report.diagnosis`), one row per check (failing first) and the
    counted warn/fail findings grouped per check; ``links`` (label -> href) are listed under
    the table (e.g. the written report.html)."""
    from markupsafe import Markup, escape

    from auditor.report.grouping import counted, group_findings, worst_first

    color = SUMMARY_STYLE
    status = report.get("status", "skipped")
    rows = []
    for c in worst_first(report.get("checks", [])):
        rows.append(Markup('<tr><td><b style="color:{}">{}</b></td><td><code>{}</code></td>'
                           '<td>{}</td></tr>').format(color.get(c["status"], "#333"),
                                                       c["status"], c["id"], c["summary"]))
    groups = []
    for c in report.get("checks", []):
        for g in group_findings(counted(c.get("findings", []))):
            groups.append(Markup("<li><b style=\"color:{}\">{}</b> <code>{}</code>: {}</li>")
                          .format(color.get(g["severity"], "#333"), g["severity"], c["id"],
                                  g["message"][:400]))
    more = len(groups) - MAX_SUMMARY_GROUPS
    datasets = ", ".join(f"{k}: {v.get('rows', 0):,} rows"
                         for k, v in report.get("datasets", {}).items())
    parts = [Markup('<div class="auditor-summary" style="font-family:sans-serif">'
                    '<div style="background:{};color:#fff;padding:6px 12px;border-radius:6px;'
                    'display:inline-block;font-weight:700">{}</div> <span>{} · auditor {} · {}'
                    ' s</span>').format(color.get(status, "#333"), str(status).upper(),
                                        datasets, report.get("tool_version", ""),
                                        report.get("duration_s", 0)),
             ]
    from auditor.report.diagnosis import diagnose, inflation_text

    problems = diagnose(report)
    if problems:  # what a notebook user investigating a score reads first
        items = []
        for p in problems[:MAX_SUMMARY_GROUPS]:
            inf = (Markup(" <i>Inflation: {}.</i>").format(
                inflation_text(p.inflation, p.inflation["metric"])) if p.inflation else "")
            items.append(Markup('<li><b style="color:{}">{}</b> <b>{}</b>: {}{}</li>').format(
                color.get(p.severity, "#333"), p.severity, p.headline, p.sentence[:300], inf))
        parts.append(Markup("<p><b>Diagnosis</b> (most harmful first)</p><ol>{}</ol>").format(
            Markup("").join(items)))
    parts.append(Markup('<table><thead><tr><th>status</th><th>check</th><th>summary</th></tr>'
                        '</thead><tbody>{}</tbody></table>').format(Markup("").join(rows)))
    if groups:
        parts.append(Markup("<details><summary>{} finding group(s) that count</summary><ul>{}"
                            "</ul>{}</details>").format(
            len(groups), Markup("").join(groups[:MAX_SUMMARY_GROUPS]),
            Markup("<p>... and {} more in the full report</p>").format(more) if more > 0
            else ""))
    waived = sum(f.get("waived") is not None for c in report.get("checks", [])
                 for f in c.get("findings", []))
    if waived:
        parts.append(Markup("<p>{} finding{} accepted by waivers (not counted; see "
                            "<code>audit.waivers</code>).</p>").format(
            waived, "s" if waived != 1 else ""))
    if links:
        parts.append(Markup("<p>{}</p>").format(Markup(" · ").join(
            Markup('<a href="{}" target="_blank">{}</a>').format(href, label)
            for label, href in links.items())))
    parts.append(Markup("</div>"))
    return str(escape(Markup("").join(parts)))
