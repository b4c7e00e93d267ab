"""Charts for the HTML report: matplotlib figures rendered to inline SVG (offline, no JS).

Detectors put a chart *spec* (aggregates only: bin edges and counts, curve points) into a
finding's ``evidence["chart"]``; this module turns a spec into SVG markup. Supported ``type``s:

- ``bar``: ``labels``, ``values``, optional ``lines`` (horizontal reference lines), ``log``.
- ``grouped_bar``: ``categories`` and ``series`` {name: values} side by side.
- ``hist``: ``edges`` (n+1) and ``series`` {name: counts or shares}, overlaid steps.
- ``roc``: ``curves`` {name: {"fpr": [...], "tpr": [...], "auc": x}}.
- ``ranges``: ``rows`` [{"label", "start", "end"}] as horizontal bars (numbers or ISO dates).
- ``lines``: ``x`` and ``series`` {name: ys}.

Text is emitted as SVG ``<text>`` (escaped by matplotlib's XML writer); comments, metadata and
namespace URLs are stripped so the page carries no external reference.
"""
from __future__ import annotations

import io
import re
from datetime import datetime
from typing import Any

PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3"]
_RC = {"svg.fonttype": "none", "svg.hashsalt": "auditor", "font.size": 9,
       "font.family": "sans-serif", "axes.spines.top": False, "axes.spines.right": False}


def render_chart(spec: dict[str, Any]) -> str:
    """SVG markup for one chart spec; an unknown type or bad spec yields an empty string."""
    import matplotlib
    from matplotlib.figure import Figure

    kind = spec.get("type")
    draw = _DRAWERS.get(str(kind))
    if draw is None:
        return ""
    import warnings

    with matplotlib.rc_context(_RC), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. glyphs missing from the font: text stays text
        fig = Figure(figsize=(spec.get("width", 6.4), spec.get("height", 3.0)), dpi=100)
        ax = fig.add_subplot(1, 1, 1)
        draw(ax, spec)
        if spec.get("title"):
            ax.set_title(_short(spec["title"], 90), fontsize=10, loc="left")
        if spec.get("xlabel"):
            ax.set_xlabel(_short(spec["xlabel"], 80))
        if spec.get("ylabel"):
            ax.set_ylabel(_short(spec["ylabel"], 60))
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return clean_svg(buf.getvalue())


def clean_svg(svg: str) -> str:
    """Strip the XML prolog, DOCTYPE, comments, metadata and namespace declarations."""
    svg = re.sub(r"<\?xml.*?\?>", "", svg, flags=re.S)
    svg = re.sub(r"<!DOCTYPE.*?>", "", svg, flags=re.S)
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r'<svg([^>]*?)\swidth="[^"]*"\s+height="[^"]*"', r'<svg\1 class="chart"',
                 svg, count=1)
    return svg.strip()


def _short(s: Any, n: int) -> str:
    s = str(s)
    return s if len(s) <= n else s[: n - 1] + "…"


def _bar(ax: Any, spec: dict[str, Any]) -> None:
    labels = [_short(x, 28) for x in spec.get("labels", [])]
    values = [v if v is not None else 0 for v in spec.get("values", [])]
    colors = spec.get("colors") or [PALETTE[0]] * len(values)
    if spec.get("horizontal", len(labels) > 8):
        pos = range(len(labels))
        ax.barh(list(pos), values, color=colors)
        ax.set_yticks(list(pos), labels)
        ax.invert_yaxis()
        for y in spec.get("lines", []):
            ax.axvline(y, color="#C44E52", linestyle="--", linewidth=1)
    else:
        ax.bar(range(len(labels)), values, color=colors)
        ax.set_xticks(range(len(labels)), labels, rotation=30 if len(labels) > 4 else 0,
                      ha="right" if len(labels) > 4 else "center")
        for y in spec.get("lines", []):
            ax.axhline(y, color="#C44E52", linestyle="--", linewidth=1)
    if spec.get("log"):
        ax.set_xscale("log") if spec.get("horizontal") else ax.set_yscale("log")


def _grouped_bar(ax: Any, spec: dict[str, Any]) -> None:
    cats = [_short(c, 20) for c in spec.get("categories", [])]
    series = spec.get("series", {})
    n = max(len(series), 1)
    width = 0.8 / n
    for i, (name, vals) in enumerate(series.items()):
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(cats))]
        ax.bar(xs, [v or 0 for v in vals], width=width, label=_short(name, 30),
               color=PALETTE[i % len(PALETTE)])
    ax.set_xticks(range(len(cats)), cats, rotation=30 if len(cats) > 4 else 0,
                  ha="right" if len(cats) > 4 else "center")
    ax.legend(frameon=False)


def _hist(ax: Any, spec: dict[str, Any]) -> None:
    edges = spec.get("edges", [])
    for i, (name, vals) in enumerate(spec.get("series", {}).items()):
        if len(vals) + 1 != len(edges):
            continue
        ax.stairs([v or 0 for v in vals], edges, label=_short(name, 30), fill=True, alpha=0.35,
                  color=PALETTE[i % len(PALETTE)])
        ax.stairs([v or 0 for v in vals], edges, color=PALETTE[i % len(PALETTE)], linewidth=1.2)
    ax.legend(frameon=False)


def _roc(ax: Any, spec: dict[str, Any]) -> None:
    for i, (name, c) in enumerate(spec.get("curves", {}).items()):
        auc = c.get("auc")
        label = _short(name, 30) + (f" (AUC {auc:.3f})" if isinstance(auc, (int, float)) else "")
        ax.plot(c.get("fpr", []), c.get("tpr", []), label=label, color=PALETTE[i % 7])
    ax.plot([0, 1], [0, 1], color="#999", linestyle=":", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.legend(frameon=False, loc="lower right")


def _as_number(v: Any) -> Any:
    if isinstance(v, str):
        try:
            import matplotlib.dates as mdates
            return mdates.date2num(datetime.fromisoformat(v.replace("Z", "+00:00")))
        except ValueError:
            return float("nan")
    return v


def _ranges(ax: Any, spec: dict[str, Any]) -> None:
    rows = spec.get("rows", [])
    dates = any(isinstance(r.get("start"), str) for r in rows)
    for i, r in enumerate(rows):
        s, e = _as_number(r.get("start")), _as_number(r.get("end"))
        ax.barh(i, (e - s) if e != s else 0.0, left=s, color=PALETTE[i % len(PALETTE)],
                height=0.5)
        ax.plot([s, e], [i, i], "|", color="#333", markersize=14)
    ax.set_yticks(range(len(rows)), [_short(r.get("label", ""), 24) for r in rows])
    ax.invert_yaxis()
    if dates:
        import matplotlib.dates as mdates
        loc = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(loc)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
    for x in spec.get("lines", []):
        ax.axvline(_as_number(x), color="#C44E52", linestyle="--", linewidth=1)


def _lines(ax: Any, spec: dict[str, Any]) -> None:
    xs = spec.get("x")
    for i, (name, ys) in enumerate(spec.get("series", {}).items()):
        ax.plot(xs if xs is not None else range(len(ys)), ys, label=_short(name, 30),
                color=PALETTE[i % len(PALETTE)])
    ax.legend(frameon=False)


_DRAWERS = {"bar": _bar, "grouped_bar": _grouped_bar, "hist": _hist, "roc": _roc,
            "ranges": _ranges, "lines": _lines}
