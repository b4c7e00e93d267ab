"""Outputs for CI systems: a JUnit XML file and a Markdown verdict.

JUnit (``--junit PATH``): one ``testsuite`` named ``auditor``, one ``testcase`` per check
(classname ``auditor.<family>``, name the check id, time its duration). A check whose counted
findings reach ``--fail-on`` carries a ``<failure>`` with its summary as message and its grouped
findings as text; a crashed check an ``<error>``; a skipped check ``<skipped>``; everything else
passes (warnings below ``--fail-on``, waived findings and resolved findings go to
``<system-out>``). Written with the standard library; CI servers (GitLab, Jenkins, GitHub
test reporters) read it.

Markdown (``--summary-md PATH``): the verdict, the diagnosis (ranked problems, see
:mod:`auditor.report.diagnosis`), a table of checks failing first and the grouped findings, small
enough for ``$GITHUB_STEP_SUMMARY`` or a merge-request comment. Data-derived text is escaped
(HTML special characters, table pipes, backticks, newlines).
"""
from __future__ import annotations

import re
from typing import Any

from auditor.report.grouping import counted, group_findings, worst_first
from auditor.report.diagnosis import diagnose, inflation_text, with_stop
from auditor.report.ranks import SEVERITY_RANK
from auditor.report.results import gates
from auditor.report.split_design import design_sentence

MAX_MD_GROUPS = 30


def _fails(c: dict[str, Any], fail_on: str) -> list[dict[str, Any]]:
    return [f for f in counted(c.get("findings", []))
            if gates(f["severity"], f.get("waived"), f.get("change"), fail_on)]


def _group_lines(findings: list[dict[str, Any]]) -> list[str]:
    out = []
    for g in group_findings(findings):
        tag = "waived " + g["severity"] if g["waived"] else (
            "resolved" if g["change"] == "resolved" else g["severity"])
        change = f" [{g['change']}]" if g["change"] in ("new", "persisting") else ""
        out.append(f"{tag}{change}: {g['message']}")
    return out


def junit_xml(doc: dict[str, Any], fail_on: str = "fail") -> str:
    """The JUnit XML document (a string) for one report dict."""
    import xml.etree.ElementTree as ET

    checks = doc.get("checks", [])
    failures = sum(bool(_fails(c, fail_on)) for c in checks)
    errors = sum(c["status"] == "error" for c in checks)
    skipped = sum(c["status"] == "skipped" for c in checks)
    root = ET.Element("testsuites", name="auditor", tests=str(len(checks)),
                      failures=str(failures), errors=str(errors),
                      time=f"{doc.get('duration_s', 0):.3f}")
    suite = ET.SubElement(root, "testsuite", name="auditor", tests=str(len(checks)),
                          failures=str(failures), errors=str(errors), skipped=str(skipped),
                          time=f"{doc.get('duration_s', 0):.3f}",
                          timestamp=str(doc.get("started_at", "")).rstrip("Z"))
    props = ET.SubElement(suite, "properties")
    for name, d in (doc.get("inputs") or {}).items():
        ET.SubElement(props, "property", name=f"input.{name}",
                      value=f"{d.get('path')} {d.get('hash')}")
    ET.SubElement(props, "property", name="fail_on", value=fail_on)
    for c in checks:
        case = ET.SubElement(suite, "testcase", classname=f"auditor.{c['id'].split('.')[0]}",
                             name=c["id"], time=f"{c.get('duration_s', 0):.3f}")
        bad = _fails(c, fail_on)
        if c["status"] == "error":
            el = ET.SubElement(case, "error", message=c.get("summary", ""), type="error")
            el.text = c.get("error") or ""
        elif c["status"] == "skipped":
            ET.SubElement(case, "skipped", message=c.get("summary", ""))
        elif bad:
            worst = max((f["severity"] for f in bad), key=SEVERITY_RANK.__getitem__)
            el = ET.SubElement(case, "failure", message=c.get("summary", ""), type=worst)
            el.text = "\n".join(_group_lines(bad))
        rest = [f for f in c.get("findings", []) if f not in bad and (
            f.get("severity") != "info" or f.get("change") == "resolved")]
        if rest or not bad:
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join([c.get("summary", "")] + _group_lines(rest))
    for el in root.iter():  # data-derived text may hold characters XML 1.0 cannot carry
        el.text = xml_safe(el.text) if el.text else el.text
        el.attrib = {k: xml_safe(v) for k, v in el.attrib.items()}
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """Text XML 1.0 can carry: control characters (and lone surrogates), which no JUnit
    reader parses, shown as escapes (``\\x01``)."""
    return _XML_INVALID.sub(lambda m: repr(m.group())[1:-1], text)


def md_escape(text: Any) -> str:
    """Text safe inside a Markdown table cell or paragraph (no HTML, no table breaks)."""
    s = str(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = s.replace("|", "\\|").replace("`", "\\`").replace("*", "\\*").replace("_", "\\_")
    s = re.sub(r"[\r\n]+", " ", s)
    return s.replace("[", "\\[").replace("]", "\\]")


ICONS = {"pass": "✅", "warn": "⚠️", "fail": "❌", "error": "💥", "skipped": "⏭️"}


def summary_markdown(doc: dict[str, Any], fail_on: str = "fail", exit_code: int | None = None
                     ) -> str:
    """The compact Markdown verdict for one report dict."""
    status = doc.get("status", "")
    checks = doc.get("checks", [])
    n_bad = sum(bool(_fails(c, fail_on)) for c in checks)
    verdict = ("PASS" if exit_code == 0 else "FAIL" if exit_code == 1 else
               "ERROR" if exit_code == 3 else str(status).upper())
    lines = [f"## {ICONS.get(verdict.lower(), '')} Dataset audit: {verdict}", ""]
    words = {"PASS": f"Nothing at or above `{fail_on}`.",
             "FAIL": f"{n_bad:,} of {len(checks):,} checks have findings at or above "
                     f"`{fail_on}`: do not trust a metric computed on these splits yet.",
             **({"PASS": "No failing finding is new since the baseline (`--fail-on new`).",
                 "FAIL": f"{n_bad:,} of {len(checks):,} checks have failing findings that are "
                         "new since the baseline (`--fail-on new`)."}
                if fail_on == "new" else {}),
             "ERROR": "The data passed, but a check crashed: the tool needs attention."}
    lines.append(f"{words.get(verdict, '')} Report status `{md_escape(status)}`, "
                 f"{doc.get('duration_s', 0):.1f} s, auditor {md_escape(doc.get('tool_version'))}"
                 f", started {md_escape(doc.get('started_at'))}.")
    if doc.get("split_design"):
        lines += ["", md_escape(design_sentence(doc["split_design"])) + "."]
    base = doc.get("baseline")
    if base:
        lines += ["", f"Against the baseline of {md_escape(base.get('started_at'))}: "
                      f"{base.get('new', 0):,} new, {base.get('persisting', 0):,} persisting, "
                      f"{base.get('resolved', 0):,} resolved findings."]
    problems = [p.to_dict() for p in diagnose(doc)]  # from the findings: never a stale copy
    if problems:
        lines += ["", "### Diagnosis", ""]
        for p in problems[:MAX_MD_GROUPS]:
            change = f" ({p['change']})" if p.get("change") else ""
            text = with_stop(f"{p['rank']}. **{p['severity']}**{change} "
                             f"{md_escape(p['headline'])}: {md_escape(p['sentence'])}")
            if p.get("inflation"):
                text += (" Inflation: "
                         f"{md_escape(inflation_text(p['inflation'], p['inflation']['metric']))}.")
            lines.append(text + f" _Fix: {md_escape(p['action'])}_")
        if len(problems) > MAX_MD_GROUPS:
            lines.append(f"{len(problems) - MAX_MD_GROUPS:,} more problems in the report.")
    lines += ["", "| status | check | summary |", "|---|---|---|"]
    checks = worst_first(checks)
    for c in checks:
        lines.append(f"| {ICONS.get(c['status'], '')} {c['status']} | `{c['id']}` | "
                     f"{md_escape(c.get('summary', ''))} |")
    shown = 0
    details: list[str] = []
    for c in checks:
        groups = group_findings([f for f in c.get("findings", [])
                                 if f.get("severity") in ("warn", "fail")
                                 or f.get("change") == "resolved"])
        for g in groups:
            if shown >= MAX_MD_GROUPS:
                break
            shown += 1
            tag = ("waived" if g["waived"] else "resolved" if g["change"] == "resolved"
                   else g["severity"])
            change = f" ({g['change']})" if g["change"] in ("new", "persisting") else ""
            subjects = ", ".join(g["subjects"][:8]) + (
                f" and {len(g['subjects']) - 8:,} more" if len(g["subjects"]) > 8 else "")
            text = f"- **{tag}**{change} `{c['id']}` {md_escape(subjects)}: " \
                   f"{md_escape(g['message'])}"
            if g["waived"]:
                w = g["waived"]
                text += (f" _(waived by {md_escape(w.get('owner'))} until "
                         f"{md_escape(w.get('expires'))}: {md_escape(w.get('reason'))})_")
            details.append(text)
    if details:
        lines += ["", "### Findings", ""] + details
    inputs = doc.get("inputs") or {}
    if inputs:
        lines += ["", "<details><summary>Inputs</summary>", "",
                  "| split | path | rows | hash |", "|---|---|---|---|"]
        for name, d in inputs.items():
            h = str(d.get("hash") or "").replace("`", "")[:23]
            lines.append(f"| {md_escape(name)} | {md_escape(d.get('path') or '(in memory)')} "
                         f"| {d.get('rows', 0):,} | {f'`{h}`' if h else '–'} |")
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"
