"""``auditor history``: one self-contained HTML page of the runs kept in a ledger.

Trends per check and metric (one line per subject and splits, over the runs' start times):
PSI per feature, duplicate shares, the AUC of the strongest single feature, ...; a grid of
every check's status per run; and a table of runs (time, status, config hash, input hashes,
report). Same offline style as report.html: inline CSS and script, plotly.js inlined once
(compressed).
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from auditor.signoff.ledger import Ledger, shown

MAX_TREND_CHARTS = 40
MAX_LINES_PER_CHART = 10


def rows_series(runs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, dict[str, float]]]:
    """The rows of each split per run (from the runs' recorded inputs), as a trend series:
    a split that shrinks or grows is the first thing to see beside any statistic."""
    lines: dict[str, dict[str, float]] = {}
    for r in runs:
        for split, d in (r.get("inputs") or {}).items():
            if isinstance(d, dict) and isinstance(d.get("rows"), int):
                lines.setdefault(split, {})[r["run_id"]] = float(d["rows"])
    return {("inputs", "rows"): lines} if lines else {}


def trend_figures(runs: list[dict[str, Any]], metrics: list[dict[str, Any]],
                  ran: dict[str, set[str]] | None = None) -> list[dict[str, Any]]:
    """``[{check, metric, figure}]``: the rows per split first, then one plotly figure per
    (check, metric), one line per (subject, splits), the lines with the largest last value
    first (at most 10 per chart; after a subject's first value, a run in which its check ran
    -- ``ran``: check id -> run ids -- or that recorded the metric for another subject, and
    that has no value for it, is a gap in its line), and the thresholds the findings stated
    as dashed lines
    (:func:`threshold_lines`). A (check, metric) whose every line holds one value over
    the runs (an internal count, a statistic that never moved) is not drawn: it is listed
    under the charts (``{check, metric, flat: True}``)."""
    from auditor.report.charts import PALETTE, REFERENCE

    when = {r["run_id"]: r["recorded_at"] for r in runs}  # microseconds: distinct points
    order = {r["run_id"]: i for i, r in enumerate(runs)}
    series: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    thresholds: dict[tuple[str, str], dict[str, set[float]]] = {}
    for m in metrics:
        if m["run_id"] not in when or m["value"] is None:
            continue
        if m.get("threshold") is not None:
            thresholds.setdefault((m["check_id"], m["metric"]), {}).setdefault(
                m["run_id"], set()).add(float(m["threshold"]))
        name = m["subject"] or "(dataset)"
        if m["splits"]:
            name += f" · {m['splits']}"
        series.setdefault((m["check_id"], m["metric"]), {}).setdefault(name, {})[
            m["run_id"]] = float(m["value"])
    out: list[dict[str, Any]] = []
    flat = []
    for (check, metric), lines in [*rows_series(runs).items(), *sorted(series.items())]:
        if len(runs) > 1 and all(len(set(p.values())) <= 1 for p in lines.values()) \
                and check != "inputs":
            flat.append({"check": check, "metric": metric, "flat": True})
            continue
        ranked = sorted(lines.items(), key=lambda kv: (
            -kv[1][max(kv[1], key=order.__getitem__)], kv[0]))[:MAX_LINES_PER_CHART]
        # every run in which the check ran (``ran``: its status was pass, warn or fail), or
        # else that recorded this metric: a subject without a value in one of them (no
        # finding that night) is a gap in its line, not a line drawn across it
        recorded = sorted({r for points in lines.values() for r in points}
                          | {r for r in (ran or {}).get(check, set()) if r in order},
                          key=order.__getitem__)
        data = []
        for i, (name, points) in enumerate(ranked):
            ids = recorded[recorded.index(min(points, key=order.__getitem__)):]
            data.append({"type": "scatter", "mode": "lines+markers",
                         "name": html.escape(name[:60]), "connectgaps": False,
                         "x": [when[r] for r in ids], "y": [points.get(r) for r in ids],
                         "line": {"color": PALETTE[i % len(PALETTE)], "width": 1.5},
                         "marker": {"size": 6}})
        for value, at in threshold_lines(thresholds.get((check, metric), {}), order).items():
            data.append({"type": "scatter", "mode": "lines", "name": f"threshold {value:g}",
                         "x": [when[r] for r in at], "y": [value] * len(at),
                         "line": {"color": REFERENCE, "width": 1.5, "dash": "dash"}})
        layout = {"height": 300, "autosize": True,
                  "margin": {"l": 60, "r": 20, "t": 20, "b": 50},
                  "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif",
                           "size": 11, "color": "#222"},
                  "paper_bgcolor": "#fff", "plot_bgcolor": "#fff",
                  "xaxis": {"type": "date", "gridcolor": "#eee", "automargin": True,
                            "title": {"text": "run (time recorded, UTC)"}},
                  "yaxis": {"title": {"text": html.escape(metric)}, "gridcolor": "#eee",
                            "automargin": True, "zeroline": False},
                  # a one-line chart keeps its legend: it names the subject
                  "showlegend": True, "legend": {"orientation": "h", "x": 0, "y": -0.3},
                  "hoverlabel": {"namelength": -1}}
        out.append({"check": check, "metric": metric, "lines": len(lines),
                    "figure": {"data": data, "layout": layout}})
        if len(out) >= MAX_TREND_CHARTS:
            break
    return out + flat


MAX_THRESHOLD_LINES = 4  # distinct thresholds drawn per chart (more: per-subject thresholds)


def threshold_lines(per_run: dict[str, set[float]], order: dict[str, int]
                    ) -> dict[float, list[str]]:
    """``threshold -> the runs (in order) whose findings stated it``, for one (check,
    metric): a check's warn and fail thresholds are two lines, a changed config a line that
    ends and another that starts; empty when the findings stated more than
    ``MAX_THRESHOLD_LINES`` distinct thresholds (thresholds per subject: nothing to draw)."""
    values = sorted({v for vs in per_run.values() for v in vs})
    if len(values) > MAX_THRESHOLD_LINES:
        return {}
    return {v: sorted((r for r, vs in per_run.items() if v in vs), key=order.__getitem__)
            for v in values}


def report_links(runs: list[dict[str, Any]], out: Path) -> None:
    """Set ``report_href`` of each run whose report.html still exists: a URL-quoted path
    relative to ``out`` (the page and the reports are uploaded together as one artifact)."""
    import os
    from urllib.parse import quote

    for r in runs:
        page = Path(r["report_path"]).with_name("report.html") if r.get("report_path") else None
        if page is not None and page.is_file():
            rel = Path(os.path.relpath(page, out.resolve())).as_posix()
            r["report_href"] = quote(rel)  # ':' quoted too: never read as a URL scheme


def render_history(ledger: Ledger, out: Path | None = None) -> str:
    """The HTML page for every run in ``ledger`` (reports linked relative to ``out``)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from markupsafe import Markup

    from auditor.report.charts import plotly_inline
    from auditor.report.render import TEMPLATES, fmt_number

    runs = ledger.runs()
    if out is not None:
        report_links(runs, out)
    checks = ledger.check_results()
    metrics = ledger.metrics()
    status: dict[str, dict[str, str]] = {}
    for c in checks:
        status.setdefault(c["check_id"], {})[c["run_id"]] = c["status"]
    ran = {}
    for c in checks:
        if c["status"] in ("pass", "warn", "fail"):
            ran.setdefault(c["check_id"], set()).add(c["run_id"])
    drawn = trend_figures(runs, metrics, ran)
    trends = [t for t in drawn if not t.get("flat")]
    flat = [t for t in drawn if t.get("flat")]
    for t in trends:
        t["payload"] = json.dumps(t["figure"], separators=(",", ":"), allow_nan=False)
    bundle = Markup("")
    if trends:
        try:
            bundle = Markup(plotly_inline())
        except OSError:
            pass
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = fmt_number
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    js = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    return env.get_template("history.html.j2").render(
        runs=runs, status=status, trends=trends, flat=flat, ledger=shown(ledger.target),
        css=Markup(css), js=Markup(js), plotly=bundle)


def write_history(target: str, out: Path) -> Path:
    """Write ``out/history.html`` (atomically) for the ledger at ``target``; its path."""
    from auditor.report.output import write_atomic

    page = out / "history.html"
    write_atomic(page, render_history(Ledger(target), out))
    return page
