"""tokens.packing: documents packed into rows, checked against the packing's declaration.

Pre-training rows usually hold several documents of ``max_length`` tokens, separated by a
separator (EOS after each document, or BOS before it), sometimes with ``position_ids`` that
restart at 0 where a document starts and attention kept within each document. One
``map_batches`` pass (:func:`packing_parts`) flattens each batch's token lists into numpy
arrays and finds, vectorised over every token:

- a document start: with the separator at the ``end``, a content token right after a
  separator; at the ``start``, a separator that is not the row's first content token;
- with position ids, a restart (0 after the row's first content token): a restart without a
  separator is a **missing separator**; a separator without a restart, or a position that
  does not continue the previous one by +1 inside a document, is a **position mismatch**;
- with ``document_attention`` and labels, a label that asks a document to predict the next
  document's first token: labels[s] at a document start s (``label_shift: 0``, the model
  shifts) or labels[s-1] (``label_shift: 1``, pre-shifted) not ``ignore_index``;
- a row whose last content token is not the separator (``end``; its first, ``start``): the
  document runs on into the next row, a **split document** unless ``split_documents: true``.

Content tokens are those under the attention mask (when its lists have the ids' lengths),
without the pad id unless it is the separator itself. Each test returns per batch the rows it
flagged (a count), its events and the first ``limit`` flagged rows with the offset and a view
of the ids around it; merged by sums and by row number, so nothing depends on the batches.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.config import Packing
from auditor.core.roles import Roles
from auditor.detectors.measured import judged
from auditor.detectors.token_findings import (ROW_PARTS, RowProblem, check_shares, part_rows,
                                              part_total, row_finding)
from auditor.detectors.token_layout import Flat, aligned_values
from auditor.detectors.token_measures import ids_of, layout_settings, token_chunk
from auditor.engines.operations import Operations
from auditor.errors import NotApplicable
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_count, grade, share

PARTS = ROW_PARTS
TESTS = ("missing_separator", "position_mismatch", "cross_document_targets", "split_documents")
WINDOW = 4  # ids shown on either side of a flagged offset


@dataclass(frozen=True)
class PackSpec:
    """What :func:`packing_parts` reads: the columns, the separator and where it stands, the
    pad id, the label convention, and how many example rows a batch keeps per test."""

    ids: str
    positions: str | None
    labels: str | None
    mask: str | None
    separator: int
    at: str
    pad: int | None
    ignore_index: int
    label_shift: int
    document_attention: bool
    limit: int


def _view(values: np.ndarray, lo: int, offset: int, hi: int) -> str:
    """The values of one row around ``offset`` (an index into the flat array), the flagged
    one in brackets."""
    a, b = max(lo, offset - WINDOW), min(hi, offset + WINDOW + 1)
    cells = [f"[{v}]" if a + k == offset else str(v) for k, v in enumerate(values[a:b].tolist())]
    return ("… " if a > lo else "") + " ".join(cells) + (" …" if b < hi else "")


def _content(f: Flat, chunk: pl.DataFrame, spec: PackSpec, row_of: np.ndarray
             ) -> tuple[np.ndarray, int]:
    """Content tokens: under the mask in rows whose mask is aligned; elsewhere every token
    but the padding: the pad id's tokens, or, when the pad id is the separator or unknown, the
    separator's runs at the row's ends (empty documents) but the one separator a document
    needs there (the last of the leading run for a separator at the start, the first of the
    trailing run for one at the end). Also the rows whose mask could not be read."""
    ids, n_rows = f.values, len(f.lens)
    masked = np.zeros(n_rows, dtype=bool)
    content = np.ones(len(ids), dtype=bool)
    if spec.mask:
        m, masked = aligned_values(chunk, spec.ids, spec.mask)
        content = np.where(masked[row_of], m > 0, True)
    bare = ~masked[row_of]
    if spec.pad is not None and spec.pad != spec.separator:
        content &= ~(bare & (ids == spec.pad))
    else:  # padding with the separator (declared, or found as a run of empty documents)
        lead, trail = f.runs(ids == spec.separator)
        if spec.at == "end":
            trail = np.maximum(trail - 1, 0)
        else:
            lead = np.maximum(lead - 1, 0)
        content &= ~bare | f.span(lead, f.lens - trail)
    unread = int((~masked & (f.lens > 0)).sum()) if spec.mask else 0
    return content, unread


def packing_parts(batch: pl.DataFrame, first_row: int, *, spec: PackSpec) -> pl.DataFrame:
    """One batch: per test ("total": rows flagged, "events": tokens flagged, "row": the first
    ``spec.limit`` flagged rows with the offset of their first event, their event count and a
    view), the denominators ("rows": rows with content, "starts": document starts), and per
    column the rows whose list could not be read against the ids ("unaligned": null, or
    another length; those rows are not judged on that column)."""
    cols = [c for c in (spec.ids, spec.positions, spec.labels, spec.mask) if c]
    chunk = token_chunk(batch, cols)
    f = Flat.of(chunk[spec.ids])
    ids, p, n_rows = f.values, f.pos(), len(f.lens)
    row_of = np.repeat(np.arange(n_rows), f.lens)
    content, unread = _content(f, chunk, spec, row_of)
    unaligned = {"attention_mask": unread}
    lead, trail = f.runs(~content)
    filled = f.lens - lead - trail > 0  # rows with a content token
    inner = content & (p > lead[row_of])  # content after the row's first content token
    sep = content & (ids == spec.separator)
    before = np.zeros(len(ids), dtype=bool)  # the previous token (same row) is a separator
    before[1:] = sep[:-1]
    start = inner & (before if spec.at == "end" else sep)
    flags: dict[str, np.ndarray] = {}
    values = {t: ids for t in TESTS}
    if spec.positions:
        pos, ok = aligned_values(chunk, spec.ids, spec.positions)
        unaligned["position_ids"] = int((~ok & (f.lens > 0)).sum())
        read = inner & ok[row_of]
        reset = read & (pos == 0)
        step = np.ones(len(ids), dtype=bool)
        step[1:] = pos[1:] == pos[:-1] + 1
        flags["missing_separator"] = reset & ~start
        flags["position_mismatch"] = read & ((start & (pos != 0)) | (~reset & ~start & ~step))
        values["position_mismatch"] = pos
        start = start | reset
    if spec.document_attention and spec.labels:
        lab, ok = aligned_values(chunk, spec.ids, spec.labels)
        unaligned["labels"] = int((~ok & (f.lens > 0)).sum())
        target = lab != spec.ignore_index
        if spec.label_shift == 1:  # pre-shifted: the label at s-1 is the target of s
            shifted = np.zeros(len(ids), dtype=bool)
            shifted[1:] = target[:-1]
            target = shifted
        flags["cross_document_targets"] = start & target & ok[row_of]
        values["cross_document_targets"] = lab
    edge = (f.offsets + f.lens - 1 - trail) if spec.at == "end" else (f.offsets + lead)
    cut = np.zeros(len(ids), dtype=bool)
    ends = edge[filled]
    cut[ends[~sep[ends]]] = True
    flags["split_documents"] = cut
    parts = [{"part": "rows", "test": "", "row": -1, "offset": -1, "n": int(filled.sum()),
              "view": ""},
             {"part": "starts", "test": "", "row": -1, "offset": -1, "n": int(start.sum()),
              "view": ""}]
    parts += [{"part": "unaligned", "test": c, "row": -1, "offset": -1, "n": n, "view": ""}
              for c, n in unaligned.items()]
    for test, flag in flags.items():
        hit = np.flatnonzero(flag)
        per_row = np.bincount(row_of[hit], minlength=n_rows)
        rows = np.flatnonzero(per_row)
        parts += [{"part": "total", "test": test, "row": -1, "offset": -1, "n": len(rows),
                   "view": ""},
                  {"part": "events", "test": test, "row": -1, "offset": -1, "n": len(hit),
                   "view": ""}]
        firsts = hit[np.searchsorted(row_of[hit], rows[:spec.limit])]
        for r, i in zip(rows[:spec.limit].tolist(), firsts.tolist()):
            lo, hi = int(f.offsets[r]), int(f.offsets[r] + f.lens[r])
            parts.append({"part": "row", "test": test, "row": first_row + r,
                          "offset": int(i - lo), "n": int(per_row[r]),
                          "view": _view(values[test], lo, i, hi)})
    return pl.DataFrame(parts, schema=PARTS)


@dataclass(frozen=True)
class PackingMeasures:
    """Per split: rows with content (``rows``), document starts found (``starts``); per test
    and split: rows flagged, tokens flagged (``events``) and the first flagged rows (row,
    offset, events in the row, view). ``tests``: the tests the declaration allows."""

    ids: str
    positions: str | None
    labels: str | None
    packing: Packing
    separator: int
    rows: dict[str, int]
    starts: dict[str, int]
    flagged: dict[str, dict[str, int]]
    events: dict[str, dict[str, int]]
    examples: dict[str, list[tuple[str, int, int, int, str]]]
    tests: tuple[str, ...]
    # per role column, the rows whose list is null or not as long as the ids (not judged on it)
    unaligned: dict[str, dict[str, int]]


@dataclass(frozen=True, kw_only=True)
class PackingCheck:
    """Packed rows that break their packing: missing separators, position ids that disagree
    with them, labels that cross documents, documents split across rows.

    A fail means a row does not hold the documents the packing declares: a document boundary
    without its separator (the model never sees where one text ends), position ids that do not
    restart where documents start (or restart where none does), or, with per-document
    attention, labels that ask a document to predict the next document's first token, which
    the model cannot see. Fix: pack again, adding the separator after (or before) every
    document, restarting position ids at each, and setting the first label of each document to
    ignore_index. A document that runs on into the next row is a warning unless the packing
    declares ``split_documents: true`` (concatenate-and-chunk packing).

    Value = rows flagged / rows with content tokens, per test, graded against
    ``warn_above``/``fail_above`` (``split_warn_above``/``split_fail_above`` for split
    documents). The position tests need ``position_ids``; the label test needs ``labels`` and
    ``document_attention: true``.
    """

    id: ClassVar[str] = "tokens.packing"
    title: ClassVar[str] = "Packed sequences"
    cost: ClassVar[Cost] = Cost.CHEAP
    needs: ClassVar[Needs] = Needs(roles=("tokens",))
    warn_above: float = 0.0
    fail_above: float = 0.0
    split_warn_above: float = 0.0
    split_fail_above: float | None = None
    max_examples: int = 10

    def __post_init__(self) -> None:
        check_shares(self, "warn_above", "fail_above", "split_warn_above", "split_fail_above")

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    # -- measure -------------------------------------------------------------------------------
    def measure(self, engine: Operations, roles: Roles) -> PackingMeasures:
        """The separator resolved from the tokenizer's roles (``eos``/``bos``, overridden by
        ``eos_id``/``bos_id``), then one ``map_batches`` pass over every split."""
        t = roles.tokens
        assert t is not None  # needs: tokens
        if t.packing is None and not t.position_ids:
            raise NotApplicable("no tokens.packing section (nor position_ids) declared")
        pack = t.packing or Packing()
        ids = ids_of(t)
        _, settings = layout_settings(engine, t)
        r = settings.roles
        sep = pack.separator if isinstance(pack.separator, int) else (
            r.eos if pack.separator == "eos" else r.bos)
        if sep is None:
            raise NotApplicable(f"the tokenizer has no {pack.separator} token: declare "
                                f"tokens.packing.separator as an id (or tokens.{pack.separator}"
                                "_id)")
        spec = PackSpec(ids, t.position_ids, t.labels, t.attention_mask, int(sep), pack.at(),
                        r.pad, t.ignore_index, t.label_shift, pack.document_attention,
                        self.max_examples)
        got = engine.map_batches([c for c in (ids, t.position_ids, t.labels,
                                              t.attention_mask) if c],
                                 partial(packing_parts, spec=spec), PARTS)
        names = list(roles.splits)
        tests = [t_ for t_ in TESTS if (t_ != "missing_separator" and t_ != "position_mismatch"
                                        or t.position_ids)
                 and (t_ != "cross_document_targets" or (pack.document_attention and t.labels))]

        def total(s: str, part: str, test: str = "") -> int:
            return part_total(got[s], part, test)

        examples = {test: [(r["split"], r["row"], r["offset"], r["n"], r["view"])
                           for r in part_rows({s: got[s] for s in names}, test,
                                              self.max_examples)] for test in tests}
        read = {c: {s: total(s, "unaligned", c) for s in names}
                for c in ("attention_mask", "position_ids", "labels")}
        return PackingMeasures(
            ids, t.position_ids, t.labels, pack, int(sep),
            rows={s: total(s, "rows") for s in names},
            starts={s: total(s, "starts") for s in names},
            flagged={test: {s: total(s, "total", test) for s in names} for test in tests},
            events={test: {s: total(s, "events", test) for s in names} for test in tests},
            examples=examples, tests=tuple(tests),
            unaligned={c: v for c, v in read.items() if sum(v.values())})

    # -- judge ---------------------------------------------------------------------------------
    def judge(self, m: PackingMeasures) -> list[Finding]:
        """One finding per test that flagged a row, and one summary of the packing."""
        where = "after" if m.packing.at() == "end" else "before"
        sep = f"separator {m.separator} {where} each document"
        what = {
            "missing_separator": (m.ids, "packing_missing_separator",
                                  f"hold a document start (position ids restart at 0) without "
                                  f"the {sep}"),
            "position_mismatch": (m.positions, "packing_position_ids",
                                  "hold position ids that disagree with the separators (no "
                                  "restart after a separator, or a jump inside a document)"),
            "cross_document_targets": (m.labels, "packing_cross_document_targets",
                                       "ask a document to predict the next document's first "
                                       "token (a label at a document start is not "
                                       "ignore_index) although attention is per document"),
            "split_documents": (m.ids, "packing_split_documents",
                                "end inside a document (the document runs on into the next "
                                "row)" if m.packing.at() == "end" else
                                "start inside a document (continued from the previous row)"),
        }
        out = []
        for test in m.tests:
            problem = RowProblem(counts=m.flagged[test], totals=m.rows, rows={})
            if not problem.count:
                continue
            subject, metric, sentence = what[test]
            value = share(problem.count, problem.total)
            if test == "split_documents":
                declared = m.packing.split_documents
                sev = Severity.INFO if declared else grade(
                    value, warn=self.split_warn_above, fail=self.split_fail_above)
                sentence += (" as declared (split_documents: true)" if declared else
                             "; declare split_documents: true if the packing chunks a "
                             "concatenation")
                threshold = self.split_fail_above
            else:
                sev = grade(value, warn=self.warn_above, fail=self.fail_above)
                threshold = self.fail_above
            events = sum(m.events[test].values())
            evidence: dict[str, Any] = {
                "by_split": [{"split": s, "rows": m.rows[s], "rows flagged": m.flagged[test][s],
                              "tokens flagged": m.events[test][s],
                              "document starts": m.starts[s]} for s in m.rows],
                "examples": [{"split": s, "row": r, "offset": o, "in this row": k,
                              "around the offset": v} for s, r, o, k, v in m.examples[test]]}
            out.append(row_finding(
                problem, severity=sev, metric=metric, subject=subject or m.ids,
                message=problem.sentence("rows", sentence) + f" ({fmt_count(events)} places)",
                threshold=threshold, evidence=evidence))
        rows, starts = sum(m.rows.values()), sum(m.starts.values())
        checked = ", ".join(t.replace("_", " ") for t in m.tests)
        unread = "".join(f"; {fmt_count(sum(v.values()))} rows' {c} not as long as their ids "
                         "(not judged on it)" for c, v in m.unaligned.items())
        out.append(Finding(
            severity=Severity.INFO, metric="packed_documents", subject=m.ids, value=share(
                starts, rows), threshold=None, count=starts, splits=list(m.rows),
            message=(f"{fmt_count(rows)} packed rows hold {fmt_count(starts)} document starts "
                     f"after their first token ({share(starts, rows):.2f} per row; {sep}); "
                     f"checked: {checked}{unread}"),
            evidence={"packing": m.packing.model_dump(), "separator_id": m.separator,
                      **({"unaligned_rows": m.unaligned} if m.unaligned else {})}))
        return out
