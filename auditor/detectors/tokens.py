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
        findings = [self._summary(data, lay)]
        findings += self._oov(data, lay)
        if t.attention_mask:
            findings += self._mask(data, lay)
        if t.labels:
            findings += self._labels(data, lay)
        findings += self._pattern(data, lay)
        findings += self._empty(data, lay)
        findings += self._unk(data, lay)
        if t.text:
            findings += self._injection(data, lay)
        return findings

    # -- the structure, stated once --------------------------------------------------------
    def _summary(self, data: AuditData, lay: Layout) -> Finding:
        r = lay.roles
        content = lay.concat("content")
        first, last = lay.concat("first"), lay.concat("last")
        nonempty = content > 0
        uncut = nonempty & (content < lay.max_length)
        bos = bool(r.bos is not None and nonempty.any()
                   and np.mean(first[nonempty] == r.bos) >= 0.5)
        eos = bool(r.eos is not None and uncut.any() and np.mean(last[uncut] == r.eos) >= 0.5)
        pattern = f"{'BOS ' if bos else ''}…{' EOS' if eos else ''}"
        padded = int(((lay.concat("pad_left") + lay.concat("pad_right")) > 0).sum())
        message = (f"Rows follow the pattern '{pattern}' with {lay.side} padding on "
                   f"{fmt_count(padded)} of {fmt_count(len(content))} rows; tokenizer "
                   f"{tokenizer_of(data).describe()}.")
        per_split = [{"split": n, "rows": s.rows,
                      "padded": int(((s.pad_left + s.pad_right) > 0).sum()),
                      "mean content length": round(float(s.content.mean()), 1) if s.rows else 0,
                      "max length": int(s.length.max()) if s.rows else 0}
                     for n, s in lay.splits.items()]
        return Finding(severity=Severity.INFO, metric="token_layout", subject=data.tokens.input_ids,
                       splits=list(lay.splits), message=message, count=len(content),
                       evidence={"how padding was found": lay.how, "by_split": per_split})

    # -- out-of-vocabulary ids ---------------------------------------------------------------
    def _oov(self, data: AuditData, lay: Layout) -> list[Finding]:
        t = data.tokens
        out = []
        for col, attr in ((t.input_ids, "oov"), (t.labels, "labels_oov")):
            if not col or getattr(next(iter(lay.splits.values())), attr) is None:
                continue
            p = RowProblem.of(lay, {n: getattr(s, attr) > 0 for n, s in lay.splits.items()})
            if not p.count:
                continue
            sev = grade(share(p.count, p.total), warn=self.warn_above, fail=self.fail_above)
            keep = pl.element().filter(pl.element() != t.ignore_index) if col == t.labels \
                else pl.element()
            ends = [v for n in lay.splits
                    for v in (token_frame(data, n)[col].list.eval(keep).list.min().min(),
                              token_frame(data, n)[col].list.eval(keep).list.max().max())
                    if v is not None]
            ex = row_examples(data, p.examples(self.max_examples), lay, [col])
            out.append(row_finding(
                p, severity=sev, metric="ids_out_of_vocab", subject=col,
                threshold=self.fail_above,
                message=p.sentence("rows", f"contain {col} outside [0, {lay.roles.vocab_size:,})"
                                   " (the embedding table): an index error, or silent garbage "
                                   "on some kernels"),
                evidence={"id range": f"{min(ends)} … {max(ends)}" if ends else "–",
                          "examples": ex}))
        return out

    # -- attention mask ------------------------------------------------------------------------
    def _mask(self, data: AuditData, lay: Layout) -> list[Finding]:
        col = data.tokens.attention_mask
        sp = lay.splits
        kinds = {"cover padding": {n: s.mask_on_pad > 0 for n, s in sp.items()},
                 "hide content": {n: s.mask_off_content > 0 for n, s in sp.items()},
                 "have values other than 0/1": {n: s.mask_bad > 0 for n, s in sp.items()},
                 "differ in length from input_ids": {n: ~s.mask_aligned for n, s in sp.items()}}
        flag = {n: np.logical_or.reduce([k[n] for k in kinds.values()]) for n in sp}
        p = RowProblem.of(lay, flag)
        if not p.count:
            return []
        parts = [(what, sum(int(v.sum()) for v in k.values())) for what, k in kinds.items()]
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
                      "examples": row_examples(data, p.examples(self.max_examples), lay,
                                                [data.tokens.input_ids, col],
                                                tail=lay.side != "left")})]

    # -- labels --------------------------------------------------------------------------------
    def _labels(self, data: AuditData, lay: Layout) -> list[Finding]:
        t = data.tokens
        sp = lay.splits
        out = []
        flag = {n: (s.labels_on_pad > 0) | ~s.labels_aligned for n, s in sp.items()}
        p = RowProblem.of(lay, flag)
        if p.count:
            sev = grade(share(p.count, p.total), warn=self.warn_above, fail=self.fail_above)
            out.append(row_finding(
                p, severity=sev, metric="labels_on_padding", subject=t.labels,
                threshold=self.fail_above,
                message=p.sentence("rows", f"have {t.labels} other than ignore_index "
                                   f"{t.ignore_index} on padding (or a length other than "
                                   f"{t.input_ids}'s): the loss trains the model to emit padding"),
                evidence={"examples": row_examples(data, p.examples(self.max_examples), lay,
                                                    [t.input_ids, t.labels],
                                                    tail=lay.side != "left")}))
        if t.objective == "causal_lm":
            out += self._shift(data, lay)
        return out

    def _shift(self, data: AuditData, lay: Layout) -> list[Finding]:
        t = data.tokens
        sp = lay.splits
        shift = {n: s.shift for n, s in sp.items()}
        labelled = {n: (v != NO_LABELS) for n, v in shift.items()}
        allv = np.concatenate(list(shift.values()))
        names = {0: "labels = input_ids (shift 0)", 1: "labels = next token (shift 1)",
                 2: "labels = token after next (shift 2)", AMBIGUOUS: "ambiguous (repeated tokens)",
                 MISALIGNED: "match input_ids at no shift 0-2"}
        table = [{"labels": what, "rows": int((allv == k).sum()),
                  "declared": k == t.label_shift} for k, what in names.items()]
        counts = {k: int((allv == k).sum()) for k in (0, 1, 2)}
        dominant = max(counts, key=counts.get) if any(counts.values()) else t.label_shift
        bad = {n: (v != t.label_shift) & (v != AMBIGUOUS) & (v != NO_LABELS)
               for n, v in shift.items()}
        p = RowProblem.of(lay, bad, among=labelled)
        if not p.count:
            return []
        parts = [f"{fmt_count(c)} shifted by {k}" for k, c in counts.items()
                 if k != t.label_shift and c]
        mis = int((allv == MISALIGNED).sum())
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
                      "examples": row_examples(data, p.examples(self.max_examples), lay,
                                                [t.input_ids, t.labels])})]

    # -- BOS/EOS pattern and padding side ------------------------------------------------------
    def _pattern(self, data: AuditData, lay: Layout) -> list[Finding]:
        r = lay.roles
        sp = lay.splits
        out = []
        nonempty = {n: s.content > 0 for n, s in sp.items()}
        uncut = {n: nonempty[n] & (s.content < lay.max_length) for n, s in sp.items()}
        for role, attr, base in (("BOS", "first", nonempty), ("EOS", "last", uncut)):
            rid = r.bos if role == "BOS" else r.eos
            if rid is None:
                continue
            has = {n: getattr(s, attr) == rid for n, s in sp.items()}
            n_base = sum(int(b.sum()) for b in base.values())
            n_has = sum(int((has[n] & base[n]).sum()) for n in sp)
            if not n_base:
                continue
            expected = n_has / n_base >= 0.5
            dev = {n: has[n] != expected for n in sp}
            p = RowProblem.of(lay, dev, among=base)
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
                p, severity=sev, metric=f"{role.lower()}_pattern", subject=data.tokens.input_ids,
                threshold=self.pattern_fail_above,
                message=p.sentence("non-empty rows", what),
                evidence={"dominant": f"{'with' if expected else 'without'} {role}",
                          "examples": row_examples(data, p.examples(self.max_examples), lay,
                                                    [data.tokens.input_ids],
                                                    tail=role == "EOS" and lay.side != "left")}))
        left = {n: (s.pad_left > 0) & (s.content > 0) for n, s in sp.items()}
        right = {n: (s.pad_right > 0) & (s.content > 0) for n, s in sp.items()}
        n_left = sum(int(v.sum()) for v in left.values())
        n_right = sum(int(v.sum()) for v in right.values())
        if n_left and n_right:
            minority, other = ("left", "right") if n_left <= n_right else ("right", "left")
            flag = left if minority == "left" else right
            padded = {n: left[n] | right[n] for n in sp}
            p = RowProblem.of(lay, flag, among=padded)
            sev = grade(share(p.count, p.total), warn=self.pattern_warn_above,
                        fail=self.pattern_fail_above)
            out.append(row_finding(
                p, severity=sev, metric="padding_side", subject=data.tokens.input_ids,
                threshold=self.pattern_fail_above,
                message=p.sentence("padded rows", f"are padded on the {minority} while the "
                                   f"others are padded on the {other}"),
                evidence={"examples": row_examples(data, p.examples(self.max_examples), lay,
                                                    [data.tokens.input_ids])}))
        return out

    # -- empty rows, UNK rate ------------------------------------------------------------------
    def _empty(self, data: AuditData, lay: Layout) -> list[Finding]:
        specials = lay.roles.lookup(lay.roles.specials)
        v = lay.roles.vocab_size

        def only_special(s: Any) -> np.ndarray:
            f = specials[np.where((s.first >= 0) & (s.first < v), s.first, v)]
            la = specials[np.where((s.last >= 0) & (s.last < v), s.last, v)]
            return (s.content <= 2) & f & la

        flag = {n: (s.content == 0) | only_special(s) for n, s in lay.splits.items()}
        p = RowProblem.of(lay, flag)
        if not p.count:
            return []
        sev = grade(share(p.count, p.total), warn=self.empty_warn_above,
                    fail=self.empty_fail_above)
        return [row_finding(
            p, severity=sev, metric="empty_rows", subject=data.tokens.input_ids,
            threshold=self.empty_fail_above,
            message=p.sentence("rows", "are empty, all padding or only special tokens"),
            evidence={"examples": row_examples(data, p.examples(self.max_examples), lay,
                                                [data.tokens.input_ids])})]

    def _unk(self, data: AuditData, lay: Layout) -> list[Finding]:
        unk = lay.roles.unk
        if unk is None:
            return []
        n_unk = int(sum(int(s.unk.sum()) for s in lay.splits.values()))
        if not n_unk:
            return []
        n_tok = int(sum(int(s.content.sum()) for s in lay.splits.values()))
        rate = share(n_unk, n_tok)
        p = RowProblem.of(lay, {n: s.unk > 0 for n, s in lay.splits.items()})
        sev = grade(rate, warn=self.unk_warn_above, fail=self.unk_fail_above)
        tok = tokenizer_of(data)
        return [Finding(
            severity=sev, metric="unk_rate", subject=data.tokens.input_ids, value=rate,
            threshold=self.unk_fail_above, count=p.count,
            splits=[k for k, v in p.counts.items() if v],
            message=(f"{fmt_count(n_unk)} of {fmt_count(n_tok)} content tokens "
                     f"({fmt_share(rate)}) are {tok.token_strings([unk])[0]} (id {unk}), in "
                     f"{fmt_count(p.count)} of {fmt_count(p.total)} rows"
                     f"{by_split_text({k: v for k, v in p.counts.items() if v})}: that text is "
                     "invisible to the model"),
            evidence={"by_split": [{"split": n, "unk tokens": int(s.unk.sum()),
                                    "content tokens": int(s.content.sum())}
                                   for n, s in lay.splits.items()]})]

    # -- special-token strings typed in text --------------------------------------------------
    def _injection(self, data: AuditData, lay: Layout) -> list[Finding]:
        t = data.tokens
        tok = tokenizer_of(data)
        strings = {s: i for s, i in tok.special_tokens.items() if len(s.strip()) >= 2}
        if not strings:
            return []
        patterns = sorted(strings, key=len, reverse=True)
        ids = pl.DataFrame({"tok": list(strings), "id": list(strings.values())},
                           schema={"tok": pl.String, "id": pl.Int64})
        flag, hits_by = {}, {}
        for name, df in data.splits.items():
            hits = (df.select(pl.col(t.text).cast(pl.String).alias("t")).with_row_index("row")
                    .filter(pl.col("t").str.contains_any(patterns))
                    .select(pl.col("row").cast(pl.Int64),
                            tok=pl.col("t").str.extract_many(patterns, leftmost=True))
                    .explode("tok").drop_nulls("tok").unique(["row", "tok"])
                    .join(ids, on="tok"))
            inside = lay.splits[name].specials_inside
            hits = hits.join(inside, on=["row", "id"], how="inner").sort("row")
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
                text = data.splits[name][t.text][row] or ""
                at = text.find(s)
                examples.append({"split": name, "row": row, "token": s, "id": i,
                                 "text": short(text[max(0, at - 30):at + len(s) + 30])})
        sev = grade(share(p.count, p.total), warn=self.injection_warn_above,
                    fail=self.injection_fail_above)
        return [row_finding(
            p, severity=sev, metric="special_token_injection", subject=t.text,
            threshold=self.injection_fail_above,
            message=p.sentence("rows", "contain special-token strings typed in the text that "
                               "were encoded as control tokens: raw text can forge document "
                               "boundaries or chat roles (encode with special tokens disabled)"),
            evidence={"examples": examples})]
