"""tokens.special_tokens: BOS/EOS/padding placement, attention mask, labels, vocabulary.

Reads the shared per-row layout of :mod:`auditor.detectors.token_layout` (computed once per
run, vectorised over flattened ids) and the tokenizer loaded once per run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost
from auditor.loading.data import AuditData
from auditor.detectors.token_findings import (RowProblem, by_split_text, check_non_negative,
                                              check_shares, require_tokens, row_examples,
                                              row_finding, short)
from auditor.detectors.token_layout import (AMBIGUOUS, MISALIGNED, NO_LABELS, Layout,
                                            layout_of, token_frame, tokenizer_of)
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_count, fmt_share, grade, share


# the layout keeps a boolean table of vocab_size entries: 2**24 ids (16 MiB) is far beyond any
# real vocabulary (the largest have a few hundred thousand ids)
MAX_VOCAB = 2**24


@dataclass(frozen=True, kw_only=True)
class SpecialTokens:
    """Token rows whose BOS/EOS/padding, attention mask or labels are laid out wrongly.

    A fail means the model trains on something other than intended: an attention mask that
    covers padding or hides content, labels that train on padding, labels shifted by the wrong
    amount (the double-shift bug: pre-shifted labels fed to a model that shifts again learns to
    predict two tokens ahead), or ids outside [0, vocab size) that overflow the embedding table.
    Warnings flag rows that deviate from the data's own BOS/EOS pattern, mixed padding sides,
    empty rows, a high UNK rate and special-token strings typed in raw text that were encoded as
    control tokens (injection). Fix the tokenization/collation step and re-tokenize.

    Padding = the leading/trailing runs of the pad id (see token_layout for pad == EOS).
    Label alignment (causal_lm): on content positions whose label is not ``ignore_index``, a row
    follows shift s when label[i] == input_ids[i + s] at every such position (the last s may
    fall off the row); rows matching several shifts (repeated tokens) are ambiguous and not
    counted, rows matching none are misaligned. Values are shares of rows (of content tokens for
    the UNK rate); ``*_above`` thresholds are strict.
    """

    id: ClassVar[str] = "tokens.special_tokens"
    title: ClassVar[str] = "Special tokens, attention mask and labels"
    cost: ClassVar[Cost] = Cost.CHEAP
    warn_above: float = 0.0            # mask / labels / label shift / out-of-vocabulary ids
    fail_above: float = 0.0
    pattern_warn_above: float = 0.0    # BOS/EOS deviations, mixed padding sides
    pattern_fail_above: float = 0.01
    empty_warn_above: float = 0.0
    empty_fail_above: float = 0.01
    unk_warn_above: float = 0.001      # share of content tokens
    unk_fail_above: float = 0.01
    injection_warn_above: float = 0.0
    injection_fail_above: float = 0.001
    vocab_size: int | None = None      # the model's embedding rows; default: the tokenizer's
    max_examples: int = 20

    def __post_init__(self) -> None:
        check_shares(self, "warn_above", "fail_above", "pattern_warn_above", "pattern_fail_above",
                "empty_warn_above", "empty_fail_above", "unk_warn_above", "unk_fail_above",
                "injection_warn_above", "injection_fail_above")
        check_non_negative(self, "max_examples")
        if self.vocab_size is not None and not (
                isinstance(self.vocab_size, int) and 1 <= self.vocab_size <= MAX_VOCAB):
            raise ValueError(f"vocab_size must be an integer in [1, {MAX_VOCAB:,}]; got "
                             f"{self.vocab_size!r}")

    def run(self, data: AuditData) -> list[Finding]:
        require_tokens(data)
        t = data.tokens
        assert t is not None
        lay = layout_of(data, self.vocab_size)
        findings = self.judge(measure_special(data, lay), t, tokenizer_of(data))
        if t.text:
            findings += self._injection(data, lay)
        return findings

    def judge(self, m: "SpecialMeasures", t: Any, tok: Any) -> list[Finding]:
        """The findings (all but special-token injection) from :class:`SpecialMeasures`,
        measured by either engine."""
        findings = [Finding(severity=Severity.INFO, metric="token_layout", subject=t.input_ids,
                            splits=m.splits, message=m.summary + f"tokenizer {tok.describe()}.",
                            count=m.rows, evidence={"how padding was found": m.how,
                                                    "by_split": m.by_split})]
        findings += self._oov(m)
        if t.attention_mask and m.mask is not None:
            findings += self._mask(m, t)
        if t.labels and m.labels is not None:
            findings += self._labels(m, t)
        findings += self._pattern(m, t)
        findings += self._empty(m, t)
        findings += self._unk(m, t, tok)
        return findings

    # -- out-of-vocabulary ids ---------------------------------------------------------------
    def _oov(self, m: "SpecialMeasures") -> list[Finding]:
        out = []
        for col, p, id_range in m.oov:
            sev = grade(share(p.count, p.total), warn=self.warn_above, fail=self.fail_above)
            ex = m.examples(p.examples(self.max_examples), [col], False)
            out.append(row_finding(
                p, severity=sev, metric="ids_out_of_vocab", subject=col,
                threshold=self.fail_above,
                message=p.sentence("rows", f"contain {col} outside [0, {m.vocab_size:,})"
                                   " (the embedding table): an index error, or silent garbage "
                                   "on some kernels"),
                evidence={"id range": id_range, "examples": ex}))
        return out

    # -- attention mask ------------------------------------------------------------------------
    def _mask(self, m: "SpecialMeasures", t: Any) -> list[Finding]:
        col = t.attention_mask
        p, parts = m.mask
        if not p.count:
            return []
        detail = ", ".join(f"{fmt_count(c)} {what}" for what, c in parts if c)
        verbs = {"cover": "covers", "hide": "hides", "have": "has", "differ": "differs"}
        parts = [("rows whose mask " + " ".join([verbs[w.split()[0]], *w.split()[1:]]), c)
                 for w, c in parts]
        sev = grade(share(p.count, p.total), warn=self.warn_above, fail=self.fail_above)
        return [row_finding(
            p, severity=sev, metric="attention_mask_vs_padding", subject=col,
            threshold=self.fail_above,
            message=p.sentence("rows", f"have an {col} that disagrees with the padding: "
                                       f"{detail}"),
            evidence={"by_problem": [{"problem": w, "rows": c} for w, c in parts],
                      "examples": m.examples(p.examples(self.max_examples),
                                             [t.input_ids, col], m.side != "left")})]

    # -- labels --------------------------------------------------------------------------------
    def _labels(self, m: "SpecialMeasures", t: Any) -> list[Finding]:
        out = []
        p = m.labels
        if p.count:
            sev = grade(share(p.count, p.total), warn=self.warn_above, fail=self.fail_above)
            out.append(row_finding(
                p, severity=sev, metric="labels_on_padding", subject=t.labels,
                threshold=self.fail_above,
                message=p.sentence("rows", f"have {t.labels} other than ignore_index "
                                   f"{t.ignore_index} on padding (or a length other than "
                                   f"{t.input_ids}'s): the loss trains the model to emit padding"),
                evidence={"examples": m.examples(p.examples(self.max_examples),
                                                 [t.input_ids, t.labels], m.side != "left")}))
        if t.objective == "causal_lm" and m.shift is not None:
            out += self._shift(m, t)
        return out

    def _shift(self, m: "SpecialMeasures", t: Any) -> list[Finding]:
        by_key, p = m.shift
        names = {0: "labels = input_ids (shift 0)", 1: "labels = next token (shift 1)",
                 2: "labels = token after next (shift 2)", AMBIGUOUS: "ambiguous (repeated tokens)",
                 MISALIGNED: "match input_ids at no shift 0-2"}
        table = [{"labels": what, "rows": by_key.get(k, 0),
                  "declared": k == t.label_shift} for k, what in names.items()]
        counts = {k: by_key.get(k, 0) for k in (0, 1, 2)}
        dominant = max(counts, key=counts.get) if any(counts.values()) else t.label_shift
        if not p.count:
            return []
        parts = [f"{fmt_count(c)} shifted by {k}" for k, c in counts.items()
                 if k != t.label_shift and c]
        mis = by_key.get(MISALIGNED, 0)
        if mis:
            parts.append(f"{fmt_count(mis)} matching no shift")
        why = ("an HF-style model shifts again and learns to predict the token after next "
               "(the double-shift bug)" if t.label_shift == 0 and counts[1] else
               "the model is taught a different target than the training loop expects")
        lead = (f"most rows follow label_shift {dominant}, not the declared {t.label_shift}; "
                if dominant != t.label_shift else "")
        sev = grade(share(p.count, p.total), warn=self.warn_above, fail=self.fail_above)
        return [row_finding(
            p, severity=sev, metric="label_shift", subject=t.labels, threshold=self.fail_above,
            message=p.sentence("rows with labels", f"do not follow the declared label_shift "
                               f"{t.label_shift} ({', '.join(parts)}): {lead}{why}"),
            evidence={"by_alignment": table,
                      "examples": m.examples(p.examples(self.max_examples),
                                             [t.input_ids, t.labels], False)})]

    # -- BOS/EOS pattern and padding side ------------------------------------------------------
    def _pattern(self, m: "SpecialMeasures", t: Any) -> list[Finding]:
        out = []
        for role, rid, expected, p in m.pattern:
            if not p.count:
                continue
            where = "start" if role == "BOS" else "end"
            what = (f"{'lack' if expected else 'have'} the {role} (id {rid}) at the {where} of "
                    f"their content, unlike the other rows")
            if role == "EOS":
                what += " (rows cut at max_length are not counted here: see tokens.lengths)"
            sev = grade(share(p.count, p.total), warn=self.pattern_warn_above,
                        fail=self.pattern_fail_above)
            out.append(row_finding(
                p, severity=sev, metric=f"{role.lower()}_pattern", subject=t.input_ids,
                threshold=self.pattern_fail_above,
                message=p.sentence("non-empty rows", what),
                evidence={"dominant": f"{'with' if expected else 'without'} {role}",
                          "examples": m.examples(p.examples(self.max_examples), [t.input_ids],
                                                 role == "EOS" and m.side != "left")}))
        if m.padding_side is not None:
            minority, other, p = m.padding_side
            sev = grade(share(p.count, p.total), warn=self.pattern_warn_above,
                        fail=self.pattern_fail_above)
            out.append(row_finding(
                p, severity=sev, metric="padding_side", subject=t.input_ids,
                threshold=self.pattern_fail_above,
                message=p.sentence("padded rows", f"are padded on the {minority} while the "
                                   f"others are padded on the {other}"),
                evidence={"examples": m.examples(p.examples(self.max_examples), [t.input_ids],
                                                 False)}))
        return out

    # -- empty rows, UNK rate ------------------------------------------------------------------
    def _empty(self, m: "SpecialMeasures", t: Any) -> list[Finding]:
        p = m.empty
        if not p.count:
            return []
        sev = grade(share(p.count, p.total), warn=self.empty_warn_above,
                    fail=self.empty_fail_above)
        return [row_finding(
            p, severity=sev, metric="empty_rows", subject=t.input_ids,
            threshold=self.empty_fail_above,
            message=p.sentence("rows", "are empty, all padding or only special tokens"),
            evidence={"examples": m.examples(p.examples(self.max_examples), [t.input_ids],
                                             False)})]

    def _unk(self, m: "SpecialMeasures", t: Any, tok: Any) -> list[Finding]:
        if m.unk is None:
            return []
        unk, n_unk, n_tok, p, by_split = m.unk
        if not n_unk:
            return []
        rate = share(n_unk, n_tok)
        sev = grade(rate, warn=self.unk_warn_above, fail=self.unk_fail_above)
        return [Finding(
            severity=sev, metric="unk_rate", subject=t.input_ids, value=rate,
            threshold=self.unk_fail_above, count=p.count,
            splits=[k for k, v in p.counts.items() if v],
            message=(f"{fmt_count(n_unk)} of {fmt_count(n_tok)} content tokens "
                     f"({fmt_share(rate)}) are {tok.token_strings([unk])[0]} (id {unk}), in "
                     f"{fmt_count(p.count)} of {fmt_count(p.total)} rows"
                     f"{by_split_text({k: v for k, v in p.counts.items() if v})}: that text is "
                     "invisible to the model"),
            evidence={"by_split": by_split})]

    # -- special-token strings typed in text --------------------------------------------------
    def _injection(self, data: AuditData, lay: Layout) -> list[Finding]:
        t = data.tokens
        strings = injection_strings(tokenizer_of(data))
        if not strings:
            return []
        flag, hits_by = {}, {}
        for name, df in data.splits.items():
            hits = injection_hits(df.select(pl.col(t.text).cast(pl.String).alias("t")),
                                  strings, lay.splits[name].specials_inside)
            hits_by[name] = hits
            f = np.zeros(lay.splits[name].rows, dtype=bool)
            f[hits["row"].unique().to_numpy()] = True
            flag[name] = f
        p = RowProblem.of(lay, flag)
        if not p.count:
            return []
        examples = []
        for name, hits in hits_by.items():
            for row, s, i in hits.select("row", "tok", "id").head(
                    max(0, self.max_examples - len(examples))).iter_rows():
                examples.append(injection_example(name, row, s, i,
                                                  data.splits[name][t.text][row] or ""))
        return self.injection_finding(p, examples, t)

    def injection_finding(self, p: RowProblem, examples: list[dict[str, Any]],
                          t: Any) -> list[Finding]:
        """The injection finding from its flagged rows and examples (both engines)."""
        sev = grade(share(p.count, p.total), warn=self.injection_warn_above,
                    fail=self.injection_fail_above)
        return [row_finding(
            p, severity=sev, metric="special_token_injection", subject=t.text,
            threshold=self.injection_fail_above,
            message=p.sentence("rows", "contain special-token strings typed in the text that "
                               "were encoded as control tokens: raw text can forge document "
                               "boundaries or chat roles (encode with special tokens disabled)"),
            evidence={"examples": examples})]


def injection_strings(tok: Any) -> dict[str, int]:
    """The tokenizer's special-token strings worth searching for in text (2+ characters)."""
    return {s: i for s, i in tok.special_tokens.items() if len(s.strip()) >= 2}


def injection_hits(texts: pl.DataFrame, strings: dict[str, int],
                   inside: pl.DataFrame) -> pl.DataFrame:
    """(row, tok, id) of rows of ``texts`` (one column ``t``) holding a special-token string
    whose id was also encoded inside the content (``inside``: (row, id) of control ids there),
    sorted by row and token. Also run per Arrow batch on Spark executors."""
    patterns = sorted(strings, key=len, reverse=True)
    ids = pl.DataFrame({"tok": list(strings), "id": list(strings.values())},
                       schema={"tok": pl.String, "id": pl.Int64})
    hits = (texts.with_row_index("row")
            .filter(pl.col("t").str.contains_any(patterns))
            .select(pl.col("row").cast(pl.Int64),
                    tok=pl.col("t").str.extract_many(patterns, leftmost=True))
            .explode("tok").drop_nulls("tok").unique(["row", "tok"])
            .join(ids, on="tok"))
    return hits.join(inside.select(pl.col("row").cast(pl.Int64), pl.col("id").cast(pl.Int64))
                     .unique(), on=["row", "id"], how="inner").sort("row", "tok")


def injection_example(split: str, row: int, s: str, i: int, text: str) -> dict[str, Any]:
    at = text.find(s)
    return {"split": split, "row": row, "token": s, "id": i,
            "text": short(text[max(0, at - 30):at + len(s) + 30])}


@dataclass
class SpecialMeasures:
    """What tokens.special_tokens judges (all but injection): the structure sentence and
    per-split table, and per test the flagged rows (RowProblem) with its small aggregates;
    ``examples(picks, columns, tail)`` renders example rows (engine-specific)."""

    splits: list[str]
    rows: int
    summary: str                  # "Rows follow the pattern ... rows; " (tokenizer appended)
    how: str
    side: str
    by_split: list[dict[str, Any]]
    vocab_size: int
    oov: list[tuple[str, RowProblem, str]]
    mask: tuple[RowProblem, list[tuple[str, int]]] | None
    labels: RowProblem | None
    shift: tuple[dict[int, int], RowProblem] | None
    pattern: list[tuple[str, int, bool, RowProblem]]
    padding_side: tuple[str, str, RowProblem] | None
    empty: RowProblem
    unk: tuple[int, int, int, RowProblem, list[dict[str, Any]]] | None
    examples: Any


def summary_sentence(bos: bool, eos: bool, side: str, padded: int, rows: int) -> str:
    pattern = f"{'BOS ' if bos else ''}…{' EOS' if eos else ''}"
    return (f"Rows follow the pattern '{pattern}' with {side} padding on "
            f"{fmt_count(padded)} of {fmt_count(rows)} rows; ")


def measure_special(data: AuditData, lay: Layout) -> SpecialMeasures:
    """:class:`SpecialMeasures` from the polars layout."""
    t = data.tokens
    r = lay.roles
    sp = lay.splits
    content = lay.concat("content")
    first, last = lay.concat("first"), lay.concat("last")
    nonempty = content > 0
    uncut = nonempty & (content < lay.max_length)
    bos = bool(r.bos is not None and nonempty.any() and np.mean(first[nonempty] == r.bos) >= 0.5)
    eos = bool(r.eos is not None and uncut.any() and np.mean(last[uncut] == r.eos) >= 0.5)
    padded = int(((lay.concat("pad_left") + lay.concat("pad_right")) > 0).sum())
    by_split = [{"split": n, "rows": s.rows,
                 "padded": int(((s.pad_left + s.pad_right) > 0).sum()),
                 "mean content length": round(float(s.content.mean()), 1) if s.rows else 0,
                 "max length": int(s.length.max()) if s.rows else 0}
                for n, s in sp.items()]
    oov = []
    for col, attr in ((t.input_ids, "oov"), (t.labels, "labels_oov")):
        if not col or getattr(next(iter(sp.values())), attr) is None:
            continue
        p = RowProblem.of(lay, {n: getattr(s, attr) > 0 for n, s in sp.items()})
        if not p.count:
            continue
        keep = pl.element().filter(pl.element() != t.ignore_index) if col == t.labels \
            else pl.element()
        ends = [v for n in sp
                for v in (token_frame(data, n)[col].list.eval(keep).list.min().min(),
                          token_frame(data, n)[col].list.eval(keep).list.max().max())
                if v is not None]
        oov.append((col, p, f"{min(ends)} … {max(ends)}" if ends else "–"))
    mask = None
    if t.attention_mask:
        kinds = {"cover padding": {n: s.mask_on_pad > 0 for n, s in sp.items()},
                 "hide content": {n: s.mask_off_content > 0 for n, s in sp.items()},
                 "have values other than 0/1": {n: s.mask_bad > 0 for n, s in sp.items()},
                 "differ in length from input_ids": {n: ~s.mask_aligned for n, s in sp.items()}}
        flag = {n: np.logical_or.reduce([k[n] for k in kinds.values()]) for n in sp}
        mask = (RowProblem.of(lay, flag),
                [(what, sum(int(v.sum()) for v in k.values())) for what, k in kinds.items()])
    labels = shift = None
    if t.labels:
        labels = RowProblem.of(lay, {n: (s.labels_on_pad > 0) | ~s.labels_aligned
                                     for n, s in sp.items()})
        sh = {n: s.shift for n, s in sp.items()}
        allv = np.concatenate(list(sh.values()))
        keys, cnt = np.unique(allv, return_counts=True)
        bad = {n: (v != t.label_shift) & (v != AMBIGUOUS) & (v != NO_LABELS)
               for n, v in sh.items()}
        shift = ({int(k): int(c) for k, c in zip(keys, cnt)},
                 RowProblem.of(lay, bad, among={n: v != NO_LABELS for n, v in sh.items()}))
    pattern = []
    ne = {n: s.content > 0 for n, s in sp.items()}
    unc = {n: ne[n] & (s.content < lay.max_length) for n, s in sp.items()}
    for role, attr, base in (("BOS", "first", ne), ("EOS", "last", unc)):
        rid = r.bos if role == "BOS" else r.eos
        if rid is None:
            continue
        has = {n: getattr(s, attr) == rid for n, s in sp.items()}
        n_base = sum(int(b.sum()) for b in base.values())
        n_has = sum(int((has[n] & base[n]).sum()) for n in sp)
        if not n_base:
            continue
        expected = n_has / n_base >= 0.5
        pattern.append((role, rid, expected,
                        RowProblem.of(lay, {n: has[n] != expected for n in sp}, among=base)))
    left = {n: (s.pad_left > 0) & (s.content > 0) for n, s in sp.items()}
    right = {n: (s.pad_right > 0) & (s.content > 0) for n, s in sp.items()}
    n_left = sum(int(v.sum()) for v in left.values())
    n_right = sum(int(v.sum()) for v in right.values())
    side = None
    if n_left and n_right:
        minority, other = ("left", "right") if n_left <= n_right else ("right", "left")
        side = (minority, other, RowProblem.of(lay, left if minority == "left" else right,
                                               among={n: left[n] | right[n] for n in sp}))
    specials = r.lookup(r.specials)
    v = r.vocab_size

    def only_special(s: Any) -> np.ndarray:
        f = specials[np.where((s.first >= 0) & (s.first < v), s.first, v)]
        la = specials[np.where((s.last >= 0) & (s.last < v), s.last, v)]
        return (s.content <= 2) & f & la

    empty = RowProblem.of(lay, {n: (s.content == 0) | only_special(s) for n, s in sp.items()})
    unk = None
    if r.unk is not None:
        unk = (r.unk, int(sum(int(s.unk.sum()) for s in sp.values())),
               int(sum(int(s.content.sum()) for s in sp.values())),
               RowProblem.of(lay, {n: s.unk > 0 for n, s in sp.items()}),
               [{"split": n, "unk tokens": int(s.unk.sum()),
                 "content tokens": int(s.content.sum())} for n, s in sp.items()])
    return SpecialMeasures(
        splits=list(sp), rows=len(content),
        summary=summary_sentence(bos, eos, lay.side, padded, len(content)), how=lay.how,
        side=lay.side, by_split=by_split, vocab_size=r.vocab_size, oov=oov, mask=mask,
        labels=labels, shift=shift, pattern=pattern, padding_side=side, empty=empty, unk=unk,
        examples=lambda picks, cols, tail: row_examples(data, picks, lay, cols, tail=tail))
