"""tokens.chat: chat / instruction rows against the chat template the model is served with.

Per sampled row (a seeded sample of ``sample_rows`` per split, the same rows on every engine;
one ``map_batches`` pass, the tokenizer and the compiled template loaded once per worker), the
row's ``messages`` are rendered by the template (:mod:`auditor.loading.chat_templates`) and
encoded in one batch call together with, per trained turn k, the conversation before it with
the generation prompt (where the turn's supervised tokens begin, ``a_k``) and the conversation
up to it (where it ends, ``b_k``). The stored content ids (under the mask; without padding)
are compared with the rendered ids:

- **template mismatch**: the ids differ (a stored row that is a prefix of the rendered one is
  truncated, not a mismatch), with the first differing position;
- **double BOS**: the row starts with BOS twice (the template adds one and so did the
  tokenizer);
- **dropped role**: a message whose content is not in the rendered text (a role the template
  silently drops, such as a system prompt), and **refused**: the template raises;
- with labels, on rows that match the template: **prompt in the loss** (a supervised token
  outside the trained turns), **assistant masked** (a trained turn's token in [a_k, e_k)
  ignored), **end token not in the labels** (the turn's end token e_k, the last special token
  of the turn, ignored), **no supervised token** (every label ignored, e.g. after
  truncation). Tokens after e_k inside the turn (a newline after ``<|im_end|>``) are not judged.

The loop over rows is per sampled row (a Jinja render is per conversation); it is bounded by
``sample_rows`` and every encode is one batch call.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.roles import Roles
from auditor.detectors.measured import judged
from auditor.detectors.token_findings import (ROW_PARTS, RowProblem, check_shares, ids_text,
                                              part_rows, part_total, row_finding, short)
from auditor.detectors.token_layout import Flat, aligned_values
from auditor.detectors.token_measures import ids_of, layout_settings, token_chunk
from auditor.engines.operations import Operations
from auditor.errors import NotApplicable
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_count, grade, share

PARTS = ROW_PARTS
TESTS = {  # test -> (metric, what the flagged rows do, graded as a warning only)
    "template_mismatch": ("chat_template_mismatch", "differ from their messages rendered by "
                                                    "the chat template", False),
    "double_bos": ("chat_double_bos", "start with BOS twice", False),
    "dropped_role": ("chat_dropped_role", "hold a message the template drops (its content is "
                                          "not in the rendered text)", True),
    "refused": ("chat_template_refused", "hold messages the template refuses", True),
    "prompt_in_loss": ("chat_prompt_in_loss", "supervise tokens outside the trained turns",
                       False),
    "assistant_masked": ("chat_assistant_masked", "ignore tokens of a trained turn", False),
    "end_not_in_labels": ("chat_end_not_in_labels", "ignore the end token of a trained turn",
                          False),
    "no_supervised_token": ("chat_no_supervised_token", "supervise no token at all", False),
}


@dataclass(frozen=True)
class ChatSpec:
    """What :func:`chat_parts` reads: the columns, the tokenizer spec, the template text and
    the special tokens' strings it is rendered with, the ids it judges by, the label
    convention, the trained roles, and how many example rows a batch keeps per test."""

    ids: str
    labels: str | None
    mask: str | None
    messages: str
    tokenizer: str
    template: str
    specials: tuple[tuple[str, str], ...]
    bos: int | None
    pad: int | None
    eos: int | None
    control: tuple[int, ...]
    ends: tuple[str, ...]  # the special tokens' strings, longest first (a turn's end)
    ignore_index: int
    label_shift: int
    train_on: tuple[str, ...]
    limit: int


def text_of(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts
    (multimodal messages: ``[{"type": "text", "text": ...}, ...]``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict))
    return ""


def _stored(chunk: pl.DataFrame, spec: ChatSpec, at: np.ndarray
            ) -> tuple[list[np.ndarray], list[np.ndarray | None], np.ndarray]:
    """The ids of rows ``at`` (under the mask in rows whose mask is aligned with the ids,
    else every id: padding is matched against the rendering), their labels (None in a row
    whose labels are not aligned with its ids) and whether each row's mask was read."""
    f = Flat.of(chunk[spec.ids])
    row_of = np.repeat(np.arange(len(f.lens)), f.lens)
    masked = np.zeros(len(f.lens), dtype=bool)
    keep = np.ones(len(f.values), dtype=bool)
    if spec.mask:
        m, masked = aligned_values(chunk, spec.ids, spec.mask)
        keep = np.where(masked[row_of], m > 0, True)
    lab, read = (aligned_values(chunk, spec.ids, spec.labels) if spec.labels
                 else (None, np.zeros(len(f.lens), dtype=bool)))
    ids, labels = [], []
    for i in at.tolist():
        lo, hi = int(f.offsets[i]), int(f.offsets[i] + f.lens[i])
        k = keep[lo:hi]
        ids.append(f.values[lo:hi][k])
        labels.append(lab[lo:hi][k] if lab is not None and read[i] else None)
    return ids, labels, masked[at]


def unpadded(s: np.ndarray, e: np.ndarray, pad: int | None) -> tuple[np.ndarray, int]:
    """``s`` without the padding around the rendered ids ``e`` (runs of the pad id before or
    after them, which a row without a mask keeps), and how many ids were cut at its start.
    The runs are counted once on each side (the rendering's own pad ids at its ends, a BOS
    that is the pad id, stay), so a row costs one comparison."""
    if pad is None or len(s) <= len(e):
        return s, 0

    def runs(x: np.ndarray) -> tuple[int, int]:
        other = np.flatnonzero(x != pad)
        return (int(other[0]), len(x) - 1 - int(other[-1])) if len(other) else (len(x), 0)

    (lead_s, trail_s), (lead_e, _) = runs(s), runs(e)
    cut = lead_s - lead_e  # the pad ids before the rendering
    end = cut + len(e)
    if 0 <= cut and end <= len(s) and (s[end:] == pad).all() \
            and np.array_equal(s[cut:end], e):
        return s[cut:end], cut
    return (s[:len(s) - trail_s] if trail_s else s), 0


def turn_spans(full: str, msgs: list[dict[str, Any]], train_on: tuple[str, ...],
               ends: tuple[str, ...]) -> tuple[list[tuple[int, int, int]], list[str]]:
    """The trained turns in the rendered text ``full``: per message whose role is in
    ``train_on``, (start, end, free): its content's characters, extended by the special token
    (one of ``ends``, longest first) that follows it after optional whitespace (the turn's
    end), and ``free`` the end of the whitespace after that (not judged). Contents are found
    in message order (from the end of the previous one; anywhere, for a template that moves
    a message); a message whose content is not in the text is returned by role (dropped)."""
    spans, dropped, cursor = [], [], 0
    for m in msgs:
        role = str(m.get("role") or "")
        view = text_of(m.get("content"))
        if not view.strip():
            continue
        pos, n = -1, 0
        for v in (view, view.strip()):
            pos = full.find(v, cursor)
            if pos < 0:
                pos = full.find(v)
            if pos >= 0:
                n = len(v)
                break
        if pos < 0:
            dropped.append(role)
            continue
        end = pos + n
        cursor = max(cursor, end)
        if role not in train_on:
            continue
        j = end
        while j < len(full) and full[j].isspace():
            j += 1
        mark = next((t for t in ends if t and full.startswith(t, j)), None)
        stop = j + len(mark) if mark else end
        free = stop
        while free < len(full) and full[free].isspace():
            free += 1
        spans.append((pos, stop, free))
    return spans, dropped


def chat_parts(batch: pl.DataFrame, first_row: int, *, spec: ChatSpec,
               sample: np.ndarray | None) -> pl.DataFrame:
    """One batch: per test ("total": rows flagged; "row": the first ``spec.limit`` flagged
    rows with an offset and a view), "checked" (rows drawn), "skipped" by reason (no
    messages, no ids), "labels_unread" (rows whose labels are not aligned with their ids),
    "trained" (rows holding a message of a trained role) and "role" (rows per role seen)."""
    from auditor.loading.chat_templates import TemplateError, render
    from auditor.loading.tokenizers import shared_tokenizer

    tok = shared_tokenizer(spec.tokenizer)
    specials = dict(spec.specials)
    rows = np.arange(first_row, first_row + batch.height, dtype=np.int64)
    at = np.flatnonzero(np.ones(batch.height, dtype=bool) if sample is None
                        else np.isin(rows, sample))
    chunk = token_chunk(batch, [c for c in (spec.ids, spec.labels, spec.mask) if c])
    stored, labels, masked = _stored(chunk, spec, at)
    conversations = batch.get_column(spec.messages).gather(at).to_list()
    flags: dict[str, list[tuple[int, int, str]]] = {t: [] for t in TESTS}
    counts = {"no_messages": 0, "no_ids": 0, "labels_unread": 0, "trained": 0}
    roles: dict[str, int] = {}
    texts: list[str] = []
    plan: list[tuple[int, list[tuple[int, int, int]], bool]] = []
    for j, value in enumerate(conversations):  # one render per conversation (bounded sample)
        msgs = [m for m in (value or []) if isinstance(m, dict)]  # the row's dicts, unchanged
        row = int(rows[at[j]])
        if not msgs:
            counts["no_messages"] += 1
            continue
        if not len(stored[j]):
            counts["no_ids"] += 1
            continue
        seen = {str(m.get("role") or "") for m in msgs}
        for r in seen:
            roles[r] = roles.get(r, 0) + 1
        counts["trained"] += bool(seen & set(spec.train_on))
        if spec.labels and labels[j] is None:
            counts["labels_unread"] += 1
        try:
            full = render(spec.template, msgs, specials)
        except TemplateError as err:
            flags["refused"].append((row, 0, str(err)[:160]))
            continue
        spans, dropped = turn_spans(full, msgs, spec.train_on, spec.ends)
        if dropped:
            flags["dropped_role"].append((row, 0, "dropped: " + ", ".join(dropped)))
        plan.append((j, spans, not (set(dropped) & set(spec.train_on))))
        texts.append(full)
    encoded = tok.encode_offsets(texts) if texts else []
    assert encoded is not None  # measure: a backend without offsets is not applicable

    def text(ids: np.ndarray) -> str:  # a few ids as the text they decode to, quoted
        return repr(short(tok.decode_batch([ids.tolist()])[0], 60))

    for (j, spans, located), (e_ids, offsets) in zip(plan, encoded):
        row = int(rows[at[j]])
        e = np.asarray(e_ids, dtype=np.int64)
        s, cut = (stored[j], 0) if masked[j] else unpadded(stored[j], e, spec.pad)
        n = min(len(s), len(e))
        if len(s) >= 2 and spec.bos is not None and s[0] == s[1] == spec.bos:
            flags["double_bos"].append((row, 1, f"{ids_text(s.tolist(), 4)} {text(s[:4])}"))
        differ = np.flatnonzero(s[:n] != e[:n])
        if len(differ) or len(s) > len(e):
            d = int(differ[0]) if len(differ) else n
            flags["template_mismatch"].append(
                (row, d, f"stored {ids_text(s[d:].tolist(), 6)} {text(s[d:d + 8])}; rendered "
                         f"{ids_text(e[d:].tolist(), 6)} {text(e[d:d + 8])}"))
            continue
        lab = labels[j]
        if lab is None or not located:
            continue
        lab = lab[cut:cut + len(s)]
        target = lab != spec.ignore_index
        if spec.label_shift == 1:  # pre-shifted: the label at t - 1 is the target of t
            target = np.concatenate([[False], target[:-1]])
        off = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)[:len(s)]
        want = np.zeros(len(s), dtype=bool)
        free = np.zeros(len(s), dtype=bool)  # straddling a turn's edge, or after its end
        ends: list[int] = []
        for a, b, c in spans:
            inside = (off[:, 0] >= a) & (off[:, 1] <= b)
            want |= inside
            free |= ~inside & (off[:, 1] > a) & (off[:, 0] < c)
            last = np.flatnonzero(inside)
            if len(last) and int(e[last[-1]]) in spec.control:
                ends.append(int(last[-1]))
        if not target.any():
            flags["no_supervised_token"].append((row, 0, f"{len(s)} tokens, none supervised"))
            continue
        extra = np.flatnonzero(target & ~want & ~free)
        if len(extra):
            flags["prompt_in_loss"].append((row, int(extra[0]), "supervised from "
                                            + text(s[extra[0]:extra[0] + 8])))
        masked_out = np.flatnonzero(~target & want & ~np.isin(np.arange(len(s)), ends))
        if len(masked_out):
            flags["assistant_masked"].append((row, int(masked_out[0]), "ignored from "
                                              + text(s[masked_out[0]:masked_out[0] + 8])))
        missed = [x for x in ends if not target[x]]
        if missed:
            flags["end_not_in_labels"].append((row, missed[0], f"end token {int(s[missed[0]])} "
                                                               f"{text(s[missed[0]:missed[0] + 1])}"
                                                               " ignored"))
    parts = [{"part": "checked", "test": "", "row": -1, "offset": -1, "n": len(at), "view": ""}]
    parts += [{"part": k, "test": "", "row": -1, "offset": -1, "n": v, "view": ""}
              for k, v in counts.items()]
    parts += [{"part": "role", "test": r, "row": -1, "offset": -1, "n": v, "view": ""}
              for r, v in roles.items()]
    for test, hits in flags.items():
        parts.append({"part": "total", "test": test, "row": -1, "offset": -1, "n": len(hits),
                      "view": ""})
        parts += [{"part": "row", "test": test, "row": r, "offset": o, "n": 1, "view": v}
                  for r, o, v in hits[:spec.limit]]
    return pl.DataFrame(parts, schema=PARTS)


@dataclass(frozen=True)
class ChatMeasures:
    """Per split: rows, rows drawn (the sample); per test and split: rows flagged and the
    first flagged rows (split, row, offset in the row's content, view); over every split: the
    rows not judged by reason (no messages, no ids; labels not aligned with the ids), the
    rows holding a trained role, and the rows per role seen."""

    ids: str
    messages: str
    labels: str | None
    source: str
    train_on: tuple[str, ...]
    rows: dict[str, int]
    checked: dict[str, int]
    flagged: dict[str, dict[str, int]]
    examples: dict[str, list[tuple[str, int, int, str]]]
    skipped: dict[str, int]
    roles: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class ChatCheck:
    """Chat rows whose ids, special tokens or loss mask disagree with the chat template.

    A fail means the model is fine-tuned on ids it will not be served with (the stored ids
    differ from the messages rendered by the template: another template, a changed
    tokenizer), on a doubled BOS (the template adds one and the tokenizer added another), or
    with a loss mask that teaches the prompt, hides part of the answer, leaves out the turn's
    end token (the model never learns to stop) or supervises nothing (truncation cut the
    answer). A role the template drops (a system prompt rendered to nothing) or refuses is a
    warning. Fix: tokenize with ``apply_chat_template`` of the serving tokenizer, without
    adding special tokens again, and build the labels from the template's turns (assistant
    turns only by default: ``train_on``).

    Value = rows flagged / rows checked, per test, graded against ``warn_above`` and
    ``fail_above`` (dropped or refused roles: warnings at most). Rows are a seeded sample of
    ``sample_rows`` per split (None: every row).
    """

    id: ClassVar[str] = "tokens.chat"
    title: ClassVar[str] = "Chat rows against their template"
    cost: ClassVar[Cost] = Cost.STATS
    needs: ClassVar[Needs] = Needs(roles=("tokens",))
    warn_above: float = 0.0
    fail_above: float = 0.0
    sample_rows: int | None = 5_000
    max_examples: int = 10

    def __post_init__(self) -> None:
        check_shares(self, "warn_above", "fail_above")
        if self.sample_rows is not None and self.sample_rows < 1:
            raise ValueError(f"sample_rows must be >= 1; got {self.sample_rows!r}")

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    # -- measure -------------------------------------------------------------------------------
    def measure(self, engine: Operations, roles: Roles) -> ChatMeasures:
        from auditor.loading.chat_templates import special_strings, template_text

        t = roles.tokens
        assert t is not None  # needs: tokens
        if t.chat is None:
            raise NotApplicable("no tokens.chat section declared")
        ids = ids_of(t)
        tok, settings = layout_settings(engine, t)
        if tok.encode_offsets([""]) is None:
            raise NotApplicable(f"the {tok.kind} tokenizer reads a template's special-token "
                                "strings as plain text: tokens.chat needs a Hugging Face "
                                "tokenizer (tokenizer.json, or a fast transformers one)")
        r = settings.roles
        text, source = template_text(t.chat.template, t.tokenizer)
        named = {"bos_token": r.bos, "eos_token": r.eos, "pad_token": r.pad, "unk_token": r.unk}
        specials = special_strings(t.tokenizer, {
            k: tok.token_strings([v])[0] if v is not None else "" for k, v in named.items()})
        control = tuple(sorted(int(i) for i in tok.special_ids))
        ends = tuple(sorted({x for x in tok.token_strings(list(control)) if x and x != "?"},
                            key=len, reverse=True))
        spec = ChatSpec(ids, t.labels, t.attention_mask, t.chat.messages, t.tokenizer, text,
                        tuple(specials.items()), r.bos, r.pad, r.eos, control, ends,
                        t.ignore_index, t.label_shift, tuple(t.chat.train_on),
                        self.max_examples)
        counts = engine.split_rows()
        names = list(roles.splits)
        got = {}
        for i, name in enumerate(names):
            sample = None
            if self.sample_rows is not None and counts[name] > self.sample_rows:
                rng = np.random.default_rng([roles.seed, i])
                sample = np.sort(rng.choice(counts[name], self.sample_rows, replace=False))
            cols = [c for c in (ids, t.labels, t.attention_mask, t.chat.messages) if c]
            got[name] = engine.map_batches(cols, partial(chat_parts, spec=spec, sample=sample),
                                           PARTS, splits=[name])[name]

        def total(s: str, part: str, test: str = "") -> int:
            return part_total(got[s], part, test)

        examples = {test: [(x["split"], x["row"], x["offset"], x["view"])
                           for x in part_rows(got, test, self.max_examples)] for test in TESTS}
        seen = pl.concat([got[s].filter(pl.col("part") == "role") for s in names])
        return ChatMeasures(ids, t.chat.messages, t.labels, source, tuple(t.chat.train_on),
                            dict(counts), {s: total(s, "checked") for s in names},
                            {test: {s: total(s, "total", test) for s in names} for test in TESTS},
                            examples,
                            {k: sum(total(s, k) for s in names) for k in (
                                "no_messages", "no_ids", "labels_unread", "trained")},
                            {r_: int(n) for r_, n in seen.group_by("test").agg(pl.col("n").sum())
                             .sort("test").iter_rows()})

    # -- judge ---------------------------------------------------------------------------------
    def judge(self, m: ChatMeasures) -> list[Finding]:
        """One finding per test that flagged a row, and a summary of what was checked."""
        out = []
        for test, (metric, what, warn_only) in TESTS.items():
            problem = RowProblem(counts=m.flagged[test], totals=m.checked, rows={})
            if not problem.count:
                continue
            value = share(problem.count, problem.total)
            sev = grade(value, warn=self.warn_above,
                        fail=None if warn_only else self.fail_above)
            subject = m.labels if test in ("prompt_in_loss", "assistant_masked",
                                            "end_not_in_labels", "no_supervised_token") \
                and m.labels else (m.messages if test in ("dropped_role", "refused") else m.ids)
            out.append(row_finding(
                problem, severity=sev, metric=metric, subject=subject,
                message=problem.sentence("rows checked", what),
                threshold=None if warn_only else self.fail_above,
                evidence={"template": m.source, "examples": [
                    {"split": s, "row": r, "offset": o, "detail": v}
                    for s, r, o, v in m.examples[test]]}))
        checked, rows = sum(m.checked.values()), sum(m.rows.values())
        sk = m.skipped
        judged_rows = checked - sk["no_messages"] - sk["no_ids"]
        if judged_rows and m.labels and not sk["trained"]:
            out.append(Finding(
                severity=Severity.WARN, metric="chat_train_on_unmatched", subject=m.labels,
                value=None, threshold=None, count=judged_rows, splits=list(m.rows),
                message=(f"no checked row holds a message of role {', '.join(m.train_on)} "
                         f"(train_on); roles seen: {', '.join(m.roles) or 'none'}"),
                evidence={"train_on": list(m.train_on), "roles": m.roles}))
        sampled = "" if checked == rows else f" (a seeded sample of {fmt_count(rows)} rows)"
        labels = (f"; labels checked against the {', '.join(m.train_on)} turns" if m.labels
                  else "; no labels declared")
        notes = ", ".join(f"{fmt_count(sk[k])} {what}" for k, what in (
            ("no_messages", "rows without messages"), ("no_ids", "rows without ids"),
            ("labels_unread", "rows' labels (not as long as their ids)")) if sk[k])
        out.append(Finding(
            severity=Severity.INFO, metric="chat_rows_checked", subject=m.messages,
            value=share(checked, rows), threshold=None, count=checked, splits=list(m.rows),
            message=(f"{fmt_count(checked)} chat rows{sampled} rendered with the template of "
                     f"{m.source}{labels}" + (f"; not judged: {notes}" if notes else "")),
            evidence={"template": m.source, "train_on": list(m.train_on), "roles": m.roles,
                      "not_judged": {k: v for k, v in sk.items() if k != "trained"}}))
        return out
