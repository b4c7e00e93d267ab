"""Charts for the HTML report: plotly.js figures, drawn in the browser from inline JSON.

Detectors put a chart *spec* (aggregates only: bin edges and counts, curve points) into a
finding's ``evidence["chart"]``; :func:`figure` turns a spec into a plotly.js figure
(``{"data": [...], "layout": {...}}``, the JSON schema of ``Plotly.newPlot``) and the report
inlines plotly.js once (:func:`plotly_inline`: plotly.js's basic bundle, gzip-compressed), so
the page works offline and the charts are interactive (hover values, zoom). Building a figure
is a few dict operations: no plotting library is imported at audit time. Supported ``type``s:

- ``bar``: ``labels``, ``values``, optional ``lines`` (reference lines), ``log``,
  ``horizontal``, ``colors``.
- ``grouped_bar``: ``categories`` and ``series`` {name: values} side by side.
- ``hist``: ``edges`` (n+1) and ``series`` {name: counts or shares}, overlaid bars per bin;
  ``x_unit: "epoch_seconds"`` draws the edges (seconds since 1970-01-01 UTC) on a date axis.
- ``roc``: ``curves`` {name: {"fpr": [...], "tpr": [...], "auc": x}}.
- ``ranges``: ``rows`` [{"label", "start", "end"}] as horizontal bars (numbers or ISO dates),
  optional ``lines``.
- ``lines``: ``x`` and ``series`` {name: ys}.

Optional everywhere: ``title``, ``xlabel``, ``ylabel``, ``width`` and ``height`` (inches, as
the specs have always given them; 100 px per inch; the width is the chart's maximum width,
see :func:`max_width_px`, since the chart follows the page width).

Escaping: plotly.js reads a few HTML-like tags (``<b>``, ``<a href>``...) in any text it draws,
so every string taken from a spec is HTML-escaped here (plotly shows ``&lt;`` as ``<``); the
report additionally escapes the whole JSON into an HTML attribute.
"""
from __future__ import annotations

import html
import math
import re
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable


PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3"]
REFERENCE = "#C44E52"
PX_PER_INCH = 100


def clip_text(v: object, limit: int = 60) -> str:
    """``str(v)`` cut to at most ``limit`` characters, the last one an ellipsis when cut (the
    report layer keeps its own copy so that it depends on nothing but the result types)."""
    s = str(v)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def figure(spec: dict[str, Any]) -> dict[str, Any] | None:
    """The plotly.js figure for one chart spec; ``None`` for an unknown type or a spec with
    nothing to draw."""
    build = _BUILDERS.get(str(spec.get("type")))
    if build is None:
        return None
    data, layout = build(spec)
    if not data:
        return None
    height = _num(spec.get("height")) or 3.0
    base: dict[str, Any] = {
        "height": int(round(height * PX_PER_INCH)), "autosize": True,
        "margin": {"l": 60, "r": 20, "t": 56 if spec.get("title") else 24, "b": 50},
        "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif",
                 "size": 11, "color": "#222"},
        "paper_bgcolor": "#fff", "plot_bgcolor": "#fff", "colorway": PALETTE,
        "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom",
                   "bgcolor": "rgba(255,255,255,0)"},
        "hoverlabel": {"namelength": -1}}
    if spec.get("title"):
        base["title"] = {"text": _text(spec["title"], 110), "x": 0, "xref": "paper",
                         "xanchor": "left", "y": 1, "yref": "container", "yanchor": "top",
                         "pad": {"t": 10}, "font": {"size": 13}}
    for axis, key in (("xaxis", "xlabel"), ("yaxis", "ylabel")):
        ax = layout.setdefault(axis, {})
        ax.setdefault("gridcolor", "#eee")
        ax.setdefault("zeroline", False)
        ax.setdefault("automargin", True)
        if spec.get(key):
            ax["title"] = {"text": _text(spec[key], 90)}
    return {"data": data, "layout": {**base, **layout}}


def max_width_px(spec: dict[str, Any]) -> int:
    """The widest a chart is drawn (CSS ``max-width``): the spec's ``width`` in pixels."""
    return int(round((_num(spec.get("width")) or 7.2) * PX_PER_INCH))


BUNDLE = Path(__file__).parent / "vendor" / "plotly-basic.min.js.gz"
"""plotly.js's basic bundle (bar, pie and scatter traces: every chart type here), v4.1.1 from
the npm package ``plotly.js-basic-dist-min`` (MIT, ``vendor/LICENSE-plotly.js.txt``), gzip
-9: 395 KB, where the full bundle inside the ``plotly`` wheel is 4.8 MB."""


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.js (the basic bundle, minified) as source text, safe inside a script element."""
    import gzip

    return script_safe(gzip.decompress(BUNDLE.read_bytes()).decode("utf-8"))


@lru_cache(maxsize=1)
def plotly_inline() -> str:
    """The HTML that carries plotly.js in a page: the gzip bundle in base64 (526 KB) inside a
    data block (``type="application/gzip;base64"``, never executed) that the page's script
    unpacks with the browser's ``DecompressionStream`` and runs (:data:`LOADER`). Base64
    holds no ``<``, so nothing in it can close the element."""
    import base64

    data = base64.b64encode(BUNDLE.read_bytes()).decode("ascii")
    return (f'<script type="application/gzip;base64" id="auditor-plotly">{data}</script>'
            f"<script>{LOADER}</script>")


LOADER = """window.auditorPlotly = (function () {
  var el = document.getElementById("auditor-plotly");
  if (!el) { return Promise.reject(new Error("plotly.js is not in this page")); }
  if (typeof DecompressionStream === "undefined") {
    return Promise.reject(new Error("this browser cannot unpack the inlined plotly.js"));
  }
  var bin = atob(el.textContent.trim()), bytes = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text().then(function (src) {
    var s = document.createElement("script");
    s.text = src;
    document.head.appendChild(s);
    return window.Plotly;
  });
})();"""


def script_safe(js: str) -> str:
    """JavaScript source that can sit inside an inline ``<script>`` element: ``</script``
    would end the element early, so it becomes ``<\\/script`` (the same text in a JS string or
    regular expression)."""
    return re.sub(r"</(script)", r"<\\/\1", js, flags=re.I)


# --- helpers --------------------------------------------------------------------------------

def _text(s: Any, n: int = 60) -> str:
    """Shortened to ``n`` characters, then HTML-escaped for plotly's pseudo-HTML text."""
    return html.escape(clip_text(s, n), quote=False)


def _labels(values: list[Any], n: int) -> list[str]:
    """Escaped, shortened category labels, made unique (a category axis merges equal ones)."""
    out: list[str] = []
    taken: set[str] = set()
    for v in values:
        t, k = _text(v, n), 1
        label = t
        while label in taken:
            k += 1
            label = f"{t} ({k})"
        taken.add(label)
        out.append(label)
    return out


def _num(v: Any) -> float | None:
    """A finite number or ``None`` (missing, NaN, inf, not a number)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _nums(vs: Any, missing: float | None = None) -> list[float | None]:
    return [missing if (x := _num(v)) is None else x for v in (vs or [])]


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _vline(x: Any) -> dict[str, Any]:
    return {"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
            "line": {"color": REFERENCE, "dash": "dash", "width": 1}}


def _hline(y: Any) -> dict[str, Any]:
    return {"type": "line", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": y, "y1": y,
            "line": {"color": REFERENCE, "dash": "dash", "width": 1}}


Built = tuple[list[dict[str, Any]], dict[str, Any]]


# --- chart types ----------------------------------------------------------------------------

def _bar(spec: dict[str, Any]) -> Built:
    labels = _labels(spec.get("labels", []), 40)
    values = _nums(spec.get("values"))  # a missing value is a gap, not a zero bar
    colors = spec.get("colors") or [PALETTE[0]] * len(values)
    horizontal = bool(spec.get("horizontal", len(labels) > 8))
    trace: dict[str, Any] = {"type": "bar", "marker": {"color": colors}, "showlegend": False}
    lines = [v for v in _nums(spec.get("lines")) if v is not None]
    log = "log" if spec.get("log") else "linear"
    if horizontal:
        trace.update(x=values, y=labels, orientation="h",
                     hovertemplate="%{y}: %{x}<extra></extra>")
        layout = {"yaxis": {"type": "category", "autorange": "reversed"},
                  "xaxis": {"type": log}, "shapes": [_vline(v) for v in lines]}
    else:
        trace.update(x=labels, y=values, hovertemplate="%{x}: %{y}<extra></extra>")
        layout = {"xaxis": {"type": "category", "tickangle": -30 if len(labels) > 4 else 0},
                  "yaxis": {"type": log}, "shapes": [_hline(v) for v in lines]}
    return [trace], layout


def _grouped_bar(spec: dict[str, Any]) -> Built:
    cats = _labels(spec.get("categories", []), 30)
    data = [{"type": "bar", "name": _text(name, 40), "x": cats, "y": _nums(vals, 0.0),
             "marker": {"color": _color(i)}}
            for i, (name, vals) in enumerate((spec.get("series") or {}).items())]
    return data, {"barmode": "group",
                  "xaxis": {"type": "category", "tickangle": -30 if len(cats) > 4 else 0}}


def _hist(spec: dict[str, Any]) -> Built:
    edges = _nums(spec.get("edges"))
    if any(e is None for e in edges) or len(edges) < 2:
        return [], {}
    dates = spec.get("x_unit") == "epoch_seconds"
    if dates:  # a plotly date axis reads numbers as milliseconds since the epoch
        edges = [e * 1000 for e in edges]
    centers = [(a + b) / 2 for a, b in zip(edges, edges[1:])]
    widths = [b - a for a, b in zip(edges, edges[1:])]
    if dates:
        ranges = [[_iso_ms(a), _iso_ms(b)] for a, b in zip(edges, edges[1:])]
        span = "%{customdata[0]} – %{customdata[1]}"
    else:
        ranges = [[a, b] for a, b in zip(edges, edges[1:])]
        span = "%{customdata[0]:.4g} – %{customdata[1]:.4g}"
    data = []
    for i, (name, vals) in enumerate((spec.get("series") or {}).items()):
        if len(vals) + 1 != len(edges):
            continue
        data.append({"type": "bar", "name": _text(name, 40), "x": centers, "y": _nums(vals),
                     "width": widths, "customdata": ranges, "opacity": 0.5,
                     "marker": {"color": _color(i), "line": {"color": _color(i), "width": 1}},
                     # the trace name shows beside the hover by itself: never put a data
                     # string into a template (plotly would evaluate "%{...}" in it)
                     "hovertemplate": f"{span}: %{{y:.4g}}"})
    return data, {"barmode": "overlay", "bargap": 0,
                  "xaxis": {"type": "date" if dates else "linear"}}


def _iso_ms(ms: float) -> str:
    """Milliseconds since the epoch as ISO text (UTC, to the second)."""
    try:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return f"{ms / 1000:g} s"


def _roc(spec: dict[str, Any]) -> Built:
    data = []
    for i, (name, c) in enumerate((spec.get("curves") or {}).items()):
        auc = _num(c.get("auc"))
        label = _text(name, 40) + (f" (AUC {auc:.3f})" if auc is not None else "")
        data.append({"type": "scatter", "mode": "lines", "name": label,
                     "x": _nums(c.get("fpr")), "y": _nums(c.get("tpr")),
                     "line": {"color": _color(i), "width": 2},
                     "hovertemplate": "FPR %{x:.3f}, TPR %{y:.3f}"})
    data.append({"type": "scatter", "mode": "lines", "x": [0, 1], "y": [0, 1],
                 "name": "chance", "hoverinfo": "skip",
                 "line": {"color": "#999", "dash": "dot", "width": 1}})
    return data, {"xaxis": {"range": [0, 1], "title": {"text": "false positive rate"}},
                  "yaxis": {"range": [0, 1.01], "title": {"text": "true positive rate"}}}


def _moment(v: Any) -> datetime | None:
    """An ISO date/time string as a naive UTC datetime (plotly's date axis has no zones)."""
    if not isinstance(v, str):
        return None
    try:
        t = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc).replace(tzinfo=None)
    return t


def _ranges(spec: dict[str, Any]) -> Built:
    rows = spec.get("rows", [])
    labels = _labels([r.get("label", "") for r in rows], 30)
    dates = any(isinstance(r.get("start"), str) for r in rows)
    base, length, ends = [], [], []
    for r in rows:
        if dates:
            s, e = _moment(r.get("start")), _moment(r.get("end"))
            if s is None or e is None:
                base.append(None), length.append(None), ends.append((None, None))
                continue
            base.append(s.isoformat())
            length.append((e - s).total_seconds() * 1000)  # a date axis measures in ms
            ends.append((s.isoformat(), e.isoformat()))
        else:
            s, e = _num(r.get("start")), _num(r.get("end"))
            base.append(s)
            length.append(None if s is None or e is None else e - s)
            ends.append((s, e))
    bars = {"type": "bar", "orientation": "h", "y": labels, "x": length, "base": base,
            "marker": {"color": [_color(i) for i in range(len(rows))]}, "width": 0.5,
            "customdata": [[_text(v, 40) if isinstance(v, str) else _num(v)
                             for v in (r.get("start"), r.get("end"))] for r in rows],
            "hovertemplate": "%{y}: %{customdata[0]} – %{customdata[1]}<extra></extra>",
            "showlegend": False}
    ticks = {"type": "scatter", "mode": "markers", "showlegend": False, "hoverinfo": "skip",
             "x": [x for s, e in ends for x in (s, e)],
             "y": [label for label in labels for _ in range(2)],
             "marker": {"symbol": "line-ns-open", "size": 14, "color": "#333",
                        "line": {"width": 2}}}
    if dates:
        lines = [m.isoformat() for x in spec.get("lines", []) if (m := _moment(x)) is not None]
    else:
        lines = [v for v in _nums(spec.get("lines")) if v is not None]
    return [bars, ticks], {"yaxis": {"type": "category", "autorange": "reversed"},
                           "xaxis": {"type": "date" if dates else "linear"},
                           "shapes": [_vline(x) for x in lines]}


def _lines(spec: dict[str, Any]) -> Built:
    xs = spec.get("x")
    data = []
    for i, (name, ys) in enumerate((spec.get("series") or {}).items()):
        y = _nums(ys)
        data.append({"type": "scatter", "mode": "lines", "name": _text(name, 40),
                     "x": _nums(xs) if xs is not None else list(range(len(y))), "y": y,
                     "line": {"color": _color(i), "width": 1.5}})
    return data, {}


_BUILDERS: dict[str, Callable[[dict[str, Any]], Built]] = {
    "bar": _bar, "grouped_bar": _grouped_bar, "hist": _hist, "roc": _roc, "ranges": _ranges,
    "lines": _lines}
