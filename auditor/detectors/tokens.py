"""tokens.special_tokens: BOS/EOS/padding placement, attention mask, labels, vocabulary.

Reads the shared per-row layout of :mod:`auditor.detectors.token_layout` (computed once per
run, vectorised over flattened ids) and the tokenizer loaded once per run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


from auditor.core.checks import Cost, Needs
from auditor.core.config import Tokens
from auditor.core.roles import Roles as RunRoles
from auditor.detectors.measured import judged
from auditor.detectors.token_findings import (RowProblem, by_split_text, check_non_negative,
                                              check_shares, row_finding)
from auditor.detectors.token_layout import AMBIGUOUS, MISALIGNED
from auditor.detectors.token_measures import (SHIFT_KEYS, VIEW_IDS, TokenLayout, ids_of,
                                              token_layout, tokenizer_for)
from auditor.engines.operations import Operations
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
    needs: ClassVar[Needs] = Needs(roles=("tokens",))
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

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: RunRoles) -> "SpecialMeasures":
        """The shared token layout (:mod:`~auditor.detectors.token_measures`) reduced to the
        structure and, per test, the flagged rows."""
        assert roles.tokens is not None  # needs: tokens
        lay = token_layout(engine, roles, vocab_size=self.vocab_size, limit=self.max_examples)
        return measure_special(lay, roles.tokens, tokenizer_for(engine, roles.tokens))

    def judge(self, m: "SpecialMeasures") -> list[Finding]:
        """The findings from :class:`SpecialMeasures`, measured by either engine."""
        t, tok = m.tokens, m.tokenizer
        findings = [Finding(severity=Severity.INFO, metric="token_layout", subject=ids_of(t),
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
        if m.injection is not None and m.injection[0].count:
            findings += self.injection_finding(*m.injection, t)
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
        assert m.mask is not None
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
        assert p is not None
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
        assert m.shift is not None
        by_key, p = m.shift
        names = {0: "labels = input_ids (shift 0)", 1: "labels = next token (shift 1)",
                 2: "labels = token after next (shift 2)", AMBIGUOUS: "ambiguous (repeated tokens)",
                 MISALIGNED: "match input_ids at no shift 0-2"}
        table = [{"labels": what, "rows": by_key.get(k, 0),
                  "declared": k == t.label_shift} for k, what in names.items()]
        counts = {k: by_key.get(k, 0) for k in (0, 1, 2)}
        dominant = max(counts, key=lambda k: counts[k]) if any(counts.values()) else t.label_shift
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


@dataclass
class SpecialMeasures:
    """What tokens.special_tokens judges: the structure sentence and per-split table, and per
    test the flagged rows (RowProblem) with its small aggregates; ``views`` the example rows'
    short views (``examples`` renders them); ``injection`` the rows holding special-token
    strings typed in the text, with the first hits (None without a text column). ``tokens``
    (the config section) and ``tokenizer`` are the run's, not measured."""

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
    views: dict[tuple[str, int], dict[str, Any]]
    injection: tuple[RowProblem, list[dict[str, Any]]] | None
    tokens: Tokens
    tokenizer: Any

    CONTEXT: ClassVar[tuple[str, ...]] = ("tokenizer",)

    def examples(self, picks: list[tuple[str, int]], columns: list[str], tail: bool
                 ) -> list[dict[str, Any]]:
        """Short views of the picked rows: lengths, padding, the first (or last) ids."""
        out = []
        for split, row in picks:
            v = self.views[(split, row)]
            rec: dict[str, Any] = {"split": split, "row": row, "length": v["length"],
                                   "content": v["content"],
                                   "padding": f"{v['pad_left']} left, {v['pad_right']} right"}
            end = "last" if tail else "first"
            for col in columns:
                rec[f"{col} ({end} {VIEW_IDS})"] = v[f"{col}|{end}"]
            out.append(rec)
        return out


def summary_sentence(bos: bool, eos: bool, side: str, padded: int, rows: int) -> str:
    pattern = f"{'BOS ' if bos else ''}…{' EOS' if eos else ''}"
    return (f"Rows follow the pattern '{pattern}' with {side} padding on "
            f"{fmt_count(padded)} of {fmt_count(rows)} rows; ")


MASK_KINDS = ("cover padding", "hide content", "have values other than 0/1",
              "differ in length from input_ids")


def measure_special(lay: TokenLayout, t: Tokens, tok: Any) -> SpecialMeasures:
    """:class:`SpecialMeasures` from the merged token layout
    (:class:`~auditor.detectors.token_measures.TokenLayout`)."""
    st = lay.settings
    r = st.roles
    rows = lay.total("rows")
    nonempty, uncut = lay.total("nonempty"), lay.total("uncut")
    bos = bool(r.bos is not None and nonempty and lay.total("bos") / nonempty >= 0.5)
    eos = bool(r.eos is not None and uncut and lay.total("eos") / uncut >= 0.5)
    by_split = [{"split": s, "rows": lay.sums[s].get("rows", 0),
                 "padded": lay.sums[s].get("padded", 0),
                 "mean content length": round(lay.sums[s]["content"] / lay.sums[s]["rows"], 1)
                 if lay.sums[s].get("rows") else 0,
                 "max length": lay.longest[s]} for s in lay.splits]
    oov = []
    for col, test in ((t.input_ids, "oov"), (t.labels, "labels_oov")):
        if col and lay.problem(test).count:
            oov.append((col, lay.problem(test), lay.id_range.get(col, "–")))
    mask = None
    if t.attention_mask:
        mask = (lay.problem("mask"),
                [(what, lay.problem(f"mask{i}").count) for i, what in enumerate(MASK_KINDS)])
    labels = shift = None
    if t.labels:
        labels = lay.problem("labels")
        shift = ({k: lay.total(f"shift{k}") for k in SHIFT_KEYS if lay.total(f"shift{k}")},
                 lay.problem("shift"))
    pattern = []
    for role, rid, base in (("BOS", r.bos, nonempty), ("EOS", r.eos, uncut)):
        if rid is None or not base:
            continue
        expected = lay.total(role.lower()) / base >= 0.5
        pattern.append((role, rid, expected,
                        lay.problem(f"{role.lower()}_{'lacks' if expected else 'has'}")))
    side = None
    n_left, n_right = lay.problem("left").count, lay.problem("right").count
    if n_left and n_right:
        minority, other = ("left", "right") if n_left <= n_right else ("right", "left")
        side = (minority, other, lay.problem(minority))
    unk = None
    if r.unk is not None:
        unk = (r.unk, lay.total("unk"), lay.total("content"), lay.problem("unk"),
               [{"split": s, "unk tokens": lay.sums[s].get("unk", 0),
                 "content tokens": lay.sums[s].get("content", 0)} for s in lay.splits])
    injection = None
    if t.text:
        injection = (lay.problem("injection"), lay.injection)
    return SpecialMeasures(
        splits=list(lay.splits), rows=rows,
        summary=summary_sentence(bos, eos, st.side, lay.total("padded"), rows), how=st.how,
        side=st.side, by_split=by_split, vocab_size=r.vocab_size, oov=oov, mask=mask,
        labels=labels, shift=shift, pattern=pattern, padding_side=side,
        empty=lay.problem("empty"), unk=unk, views=lay.views, injection=injection, tokens=t,
        tokenizer=tok)
