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
from auditor.detectors.token_findings import (RowProblem, check_shares, ids_text, row_finding,
                                              short)
from auditor.detectors.token_layout import Flat, aligned_values
from auditor.detectors.token_measures import ids_of, layout_settings, token_chunk
from auditor.engines.operations import Operations
from auditor.errors import NotApplicable
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_count, grade, share

PARTS = {"part": pl.String, "test": pl.String, "row": pl.Int64, "offset": pl.Int64,
         "n": pl.Int64, "view": pl.String}
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
    ignore_index: int
    label_shift: int
    train_on: tuple[str, ...]
    limit: int


def _messages(value: Any) -> list[dict[str, Any]]:
    """A row's messages as plain dicts of role and content (None content: empty)."""
    return [{"role": str(m.get("role") or ""), "content": str(m.get("content") or "")}
            for m in (value or []) if isinstance(m, dict)]


def _stored(chunk: pl.DataFrame, spec: ChatSpec, at: np.ndarray
            ) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """The content ids of rows ``at`` (under the mask in rows whose mask is aligned with the
    ids, else without the leading and trailing runs of the pad id, unless it is BOS, or EOS,
    there) and their labels (None in a row whose labels are not aligned with its ids)."""
    f = Flat.of(chunk[spec.ids])
    row_of = np.repeat(np.arange(len(f.lens)), f.lens)
    masked = np.zeros(len(f.lens), dtype=bool)
    m = np.ones(len(f.values), dtype=np.int64)
    if spec.mask:
        m, masked = aligned_values(chunk, spec.ids, spec.mask)
    keep = np.ones(len(f.values), dtype=bool)
    if spec.pad is not None:  # a pad id that is also BOS (EOS) stays at the start (end)
        lead, trail = f.runs(f.values == spec.pad)
        lead = lead * (spec.pad != spec.bos)
        trail = trail * (spec.pad != spec.eos)
        keep = f.span(lead, f.lens - trail)
    keep = np.where(masked[row_of], m > 0, keep)  # the mask decides where it can be read
    lab, read = (aligned_values(chunk, spec.ids, spec.labels) if spec.labels
                 else (None, np.zeros(len(f.lens), dtype=bool)))
    ids, labels = [], []
    for i in at.tolist():
        lo, hi = int(f.offsets[i]), int(f.offsets[i] + f.lens[i])
        k = keep[lo:hi]
        ids.append(f.values[lo:hi][k])
        labels.append(lab[lo:hi][k] if lab is not None and read[i] else None)
    return ids, labels


def chat_parts(batch: pl.DataFrame, first_row: int, *, spec: ChatSpec,
               sample: np.ndarray | None) -> pl.DataFrame:
    """One batch: per test ("total": rows flagged; "row": the first ``spec.limit`` flagged rows
    with an offset and a view) and "checked" (rows drawn and rendered)."""
    from auditor.loading.chat_templates import TemplateError, render
    from auditor.loading.tokenizers import shared_tokenizer

    tok = shared_tokenizer(spec.tokenizer)
    specials = dict(spec.specials)
    rows = np.arange(first_row, first_row + batch.height, dtype=np.int64)
    at = np.flatnonzero(np.ones(batch.height, dtype=bool) if sample is None
                        else np.isin(rows, sample))
    chunk = token_chunk(batch, [c for c in (spec.ids, spec.labels, spec.mask) if c])
    stored, labels = _stored(chunk, spec, at)
    conversations = batch.get_column(spec.messages).gather(at).to_list()
    flags: dict[str, list[tuple[int, int, str]]] = {t: [] for t in TESTS}
    texts: list[str] = []
    plan: list[tuple[int, int, list[tuple[int, int]]]] = []  # (j, full text, turn texts)
    for j, value in enumerate(conversations):  # one render per conversation (bounded sample)
        msgs = _messages(value)
        row = int(rows[at[j]])
        try:
            full = render(spec.template, msgs, specials)
            cuts = [t for k, m in enumerate(msgs) if m["role"] in spec.train_on
                    for t in (render(spec.template, msgs[:k], specials, generation_prompt=True),
                              render(spec.template, msgs[:k + 1], specials))]
        except TemplateError as err:
            flags["refused"].append((row, 0, str(err)[:160]))
            continue
        dropped = [m["role"] for m in msgs if m["content"].strip()
                   and m["content"].strip() not in full]
        if dropped:
            flags["dropped_role"].append((row, 0, "dropped: " + ", ".join(dropped)))
        base = len(texts)  # texts: the full render, then (before, up to) per trained turn
        plan.append((j, base, [(base + 1 + q, base + 2 + q) for q in range(0, len(cuts), 2)]))
        texts += [full, *cuts]
    encoded = tok.encode_batch(texts) if texts else []

    def text(ids: np.ndarray) -> str:  # a few ids as the text they decode to, quoted
        return repr(short(tok.decode_batch([ids.tolist()])[0], 60))

    control = np.asarray(spec.control, dtype=np.int64)
    for j, first, turns in plan:
        row, s = int(rows[at[j]]), stored[j]
        e = np.asarray(encoded[first], dtype=np.int64)
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
        if lab is None:
            continue
        target = lab != spec.ignore_index
        if spec.label_shift == 1:  # pre-shifted: the label at t - 1 is the target of t
            target = np.concatenate([[False], target[:-1]])
        want = np.zeros(len(e), dtype=bool)
        free = np.zeros(len(e), dtype=bool)  # after a turn's end token: not judged
        ends: list[int] = []
        for a_i, b_i in turns:
            a, b = len(encoded[a_i]), len(encoded[b_i])
            inside = np.flatnonzero(np.isin(e[a:b], control))
            end = a + int(inside[-1]) if len(inside) else None
            want[a:(end + 1 if end is not None else b)] = True
            if end is not None:
                free[end + 1:b] = True
                ends.append(end)
        want, free = want[:len(s)], free[:len(s)]
        if not target.any():
            flags["no_supervised_token"].append((row, 0, f"{len(s)} tokens, none supervised"))
            continue
        extra = np.flatnonzero(target & ~want & ~free)
        if len(extra):
            flags["prompt_in_loss"].append((row, int(extra[0]), "supervised from "
                                            + text(s[extra[0]:extra[0] + 8])))
        masked = np.flatnonzero(~target & want & ~np.isin(np.arange(len(s)), ends))
        if len(masked):
            flags["assistant_masked"].append((row, int(masked[0]), "ignored from "
                                              + text(s[masked[0]:masked[0] + 8])))
        cut = [x for x in ends if x < len(s) and not target[x]]
        if cut:
            flags["end_not_in_labels"].append((row, cut[0], f"end token {int(s[cut[0]])} "
                                                            f"{text(s[cut[0]:cut[0] + 1])} "
                                                            "ignored"))
    parts = [{"part": "checked", "test": "", "row": -1, "offset": -1, "n": len(at), "view": ""}]
    for test, hits in flags.items():
        parts.append({"part": "total", "test": test, "row": -1, "offset": -1, "n": len(hits),
                      "view": ""})
        parts += [{"part": "row", "test": test, "row": r, "offset": o, "n": 1, "view": v}
                  for r, o, v in hits[:spec.limit]]
    return pl.DataFrame(parts, schema=PARTS)


@dataclass(frozen=True)
class ChatMeasures:
    """Per split: rows, rows checked (the sample); per test and split: rows flagged and the
    first flagged rows (split, row, offset, view). ``labelled``: the label tests ran."""

    ids: str
    messages: str
    labels: str | None
    source: str
    train_on: tuple[str, ...]
    rows: dict[str, int]
    checked: dict[str, int]
    flagged: dict[str, dict[str, int]]
    examples: dict[str, list[tuple[str, int, int, str]]]


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
        from auditor.loading.chat_templates import template_text

        t = roles.tokens
        assert t is not None  # needs: tokens
        if t.chat is None:
            raise NotApplicable("no tokens.chat section declared")
        ids = ids_of(t)
        tok, settings = layout_settings(engine, t)
        r = settings.roles
        text, source = template_text(t.chat.template, t.tokenizer)
        named = {"bos_token": r.bos, "eos_token": r.eos, "pad_token": r.pad, "unk_token": r.unk}
        specials = tuple((k, tok.token_strings([v])[0] if v is not None else "")
                         for k, v in named.items())
        spec = ChatSpec(ids, t.labels, t.attention_mask, t.chat.messages, t.tokenizer, text,
                        specials, r.bos, r.pad, r.eos, tuple(int(i) for i in tok.special_ids),
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
            g = got[s]
            return int(g.filter((pl.col("part") == part) & (pl.col("test") == test))["n"].sum())

        examples = {test: [(s, x["row"], x["offset"], x["view"]) for s in names
                           for x in got[s].filter((pl.col("part") == "row")
                                                  & (pl.col("test") == test))
                           .sort("row").head(self.max_examples).iter_rows(named=True)]
                    for test in TESTS}
        return ChatMeasures(ids, t.chat.messages, t.labels, source, tuple(t.chat.train_on),
                            dict(counts), {s: total(s, "checked") for s in names},
                            {test: {s: total(s, "total", test) for s in names} for test in TESTS},
                            examples)

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
        sampled = "" if checked == rows else f" (a seeded sample of {fmt_count(rows)} rows)"
        labels = (f"; labels checked against the {', '.join(m.train_on)} turns" if m.labels
                  else "; no labels declared")
        out.append(Finding(
            severity=Severity.INFO, metric="chat_rows_checked", subject=m.messages,
            value=share(checked, rows), threshold=None, count=checked, splits=list(m.rows),
            message=(f"{fmt_count(checked)} chat rows{sampled} rendered with the template of "
                     f"{m.source}{labels}"),
            evidence={"template": m.source, "train_on": list(m.train_on)}))
        return out
