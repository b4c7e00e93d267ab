"""tokens.lengths: sequence lengths, truncation, EOS cut by truncation, length and token drift."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from auditor.core.checks import Cost, Needs
from auditor.core.roles import Roles as RunRoles
from auditor.detectors.measured import judged
from auditor.detectors.token_findings import (RowProblem, check_non_negative, check_shares,
                                              row_finding, short)
from auditor.detectors.token_measures import TokenLayout, ids_of, token_layout, tokenizer_for
from auditor.engines.operations import Operations
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import chi2_test, fmt_count, grade, js_distance, psi, share


@dataclass(frozen=True, kw_only=True)
class SequenceLengths:
    """Sequence lengths: truncation at max_length, EOS cut by truncation, and length drift.

    A warning means many rows hit max_length (long documents are cut, and where rows end with
    EOS the cut rows lose it, so the model rarely learns to stop on long inputs), or the length
    distribution (content tokens, padding excluded) differs between splits (PSI over the first
    split's deciles: 0.1 moderate, 0.25 large). Token-frequency drift (Jensen–Shannon distance,
    base 2, of the content-token distributions) is reported as information with the tokens
    whose share moved most. Fix: raise max_length, chunk long documents with EOS per chunk, or
    rebalance the splits.

    Truncated = content length >= max_length (declared in tokens:, else the longest stored row).
    EOS cut = truncated rows without the EOS at the end, counted only when most uncut rows end
    with EOS. PSI = sum (a_i - e_i) ln(a_i / e_i) over bins (auditor.stats.numerics.psi); the effect
    size decides and significance qualifies: a PSI above a threshold whose chi-square test of
    homogeneity on the same 2 x bins table has p >= ``alpha`` (small splits, where empty bins
    inflate PSI) is reported as information.
    """

    id: ClassVar[str] = "tokens.lengths"
    title: ClassVar[str] = "Sequence lengths and truncation"
    cost: ClassVar[Cost] = Cost.CHEAP
    needs: ClassVar[Needs] = Needs(roles=("tokens",))
    truncation_warn_above: float = 0.05
    truncation_fail_above: float | None = None
    eos_cut_warn_above: float = 0.0
    eos_cut_fail_above: float | None = None
    psi_warn_above: float = 0.1
    psi_fail_above: float = 0.25
    alpha: float = 0.01                # a PSI above a threshold must also be significant
    bins: int = 10
    top_tokens: int = 15

    def __post_init__(self) -> None:
        check_shares(self, "truncation_warn_above", "truncation_fail_above", "eos_cut_warn_above",
                "eos_cut_fail_above")
        check_non_negative(self, "psi_warn_above", "psi_fail_above", "top_tokens")
        check_shares(self, "alpha")
        if self.bins < 2:
            raise ValueError(f"bins must be >= 2; got {self.bins!r}")

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: RunRoles) -> "LengthMeasures":
        """The shared token layout (:mod:`~auditor.detectors.token_measures`), reduced to
        content-length tables, token counts and the truncated rows."""
        assert roles.tokens is not None  # needs: tokens
        return measure_lengths(token_layout(engine, roles), tokenizer_for(engine, roles.tokens),
                               ids_of(roles.tokens))

    def judge(self, m: "LengthMeasures") -> list[Finding]:
        """The findings from the aggregates of :class:`LengthMeasures` (both engines)."""
        col, tok = m.column, m.tokenizer
        findings = [self._distribution(m, col)]
        limit = (f"max_length {m.max_length:,}" if m.max_length_declared else
                 f"the longest stored row ({m.max_length:,} tokens; max_length not declared)")
        p = m.truncated
        if p.count:
            sev = grade(share(p.count, p.total), warn=self.truncation_warn_above,
                        fail=self.truncation_fail_above)
            findings.append(row_finding(p, severity=sev, metric="truncated_rows", subject=col,
                                     threshold=self.truncation_warn_above,
                                     message=p.sentence("rows", f"reach {limit}: they were "
                                                        "probably truncated"), evidence={}))
        q = m.eos_cut
        if q is not None and q.count:
            sev = grade(share(q.count, q.total), warn=self.eos_cut_warn_above,
                        fail=self.eos_cut_fail_above)
            findings.append(row_finding(
                q, severity=sev, metric="eos_cut", subject=col,
                threshold=self.eos_cut_warn_above,
                message=q.sentence("rows", f"lost their EOS (id {m.eos}) to truncation at "
                                   f"{limit}, while the other rows end with it"),
                evidence={"examples": [{"split": s, "row": r} for s, r in
                                       q.examples(20)]}))
        findings += self._drift(m, col, tok)
        return findings

    def _distribution(self, m: "LengthMeasures", col: str) -> Finding:
        content = m.lengths
        rows = {n: int(c.sum()) for n, (_, c) in content.items()}
        hi = max((int(v[-1]) for v, _ in content.values() if len(v)), default=0)
        lo = min((int(v[0]) for v, _ in content.values() if len(v)), default=0)
        edges = np.unique(np.linspace(lo, hi + 1, min(31, hi - lo + 2)).round())
        series = {n: (np.histogram(v, bins=edges, weights=c)[0] / max(rows[n], 1))
                  .round(6).tolist() for n, (v, c) in content.items()}
        table = [{"split": n, "rows": rows[n],
                  "mean": round(table_mean(v, c), 1) if rows[n] else 0,
                  "p50": int(table_quantile(v, c, 0.5)) if rows[n] else 0,
                  "p95": int(table_quantile(v, c, 0.95)) if rows[n] else 0,
                  "max": int(v[-1]) if rows[n] else 0} for n, (v, c) in content.items()]
        desc = "; ".join(f"{r['split']} median {r['p50']:,}, p95 {r['p95']:,}" for r in table)
        return Finding(severity=Severity.INFO, metric="length_distribution", subject=col,
                       splits=list(content), count=sum(rows.values()),
                       message=f"Content length in tokens (padding excluded): {desc}.",
                       evidence={"chart": {"type": "hist", "edges": edges.tolist(),
                                           "series": series, "xlabel": "content tokens",
                                           "ylabel": "share of rows",
                                           "title": "Sequence length per split"},
                                 "by_split": table})

    def _drift(self, m: "LengthMeasures", col: str, tok: Any) -> list[Finding]:
        names = list(m.lengths)
        if len(names) < 2:
            return []
        bv, bc = m.lengths[names[0]]
        b_rows = int(bc.sum())
        qs = table_quantile(bv, bc, np.linspace(0, 1, self.bins + 1)[1:-1]) \
            if b_rows else np.array([])
        edges = np.concatenate([[-np.inf], np.unique(qs), [np.inf]])
        e_counts = np.histogram(bv, bins=edges, weights=bc)[0].astype(np.int64)
        out = []
        for later in names[1:]:
            sv, sc = m.lengths[later]
            s_rows = int(sc.sum())
            a_counts = np.histogram(sv, bins=edges, weights=sc)[0].astype(np.int64)
            value, _ = psi(e_counts, a_counts)
            _, pvalue = chi2_test(np.vstack([e_counts, a_counts]))
            sev = grade(value, warn=self.psi_warn_above, fail=self.psi_fail_above)
            note = ""
            if sev != Severity.INFO and not pvalue < self.alpha:
                sev, note = Severity.INFO, (f"; not significant at this sample size "
                                            f"(p = {pvalue:.2g} >= {self.alpha})")
            m_a = table_mean(bv, bc) if b_rows else 0.0
            m_b = table_mean(sv, sc) if s_rows else 0.0
            out.append(Finding(
                severity=sev, metric="length_psi", subject=col, value=value,
                threshold=self.psi_fail_above, count=s_rows, splits=[names[0], later],
                message=(f"Length PSI {names[0]} → {later} is {value:.3f} (mean content length "
                         f"{m_a:,.1f} → {m_b:,.1f} tokens over {fmt_count(s_rows)} {later} rows)"
                         f"{note}"),
                evidence={"p-value": pvalue, "bins": [
                    {"content length": _bin_label(edges, i), names[0]: int(e_counts[i]),
                     later: int(a_counts[i])} for i in range(len(e_counts))]}))
            base_tc, s_tc = m.token_counts[names[0]], m.token_counts[later]
            js = js_distance(base_tc, s_tc)
            pa = base_tc / max(base_tc.sum(), 1)
            pb = s_tc / max(s_tc.sum(), 1)
            diff = pb - pa
            top = np.argsort(-np.abs(diff), kind="stable")[:self.top_tokens]
            top = top[np.abs(diff[top]) > 0]
            names_ = tok.token_strings(top.tolist())
            rows = [{"id": int(i), "token": short(repr(sv_), 40),
                     f"{names[0]} share": round(float(pa[i]), 6),
                     f"{later} share": round(float(pb[i]), 6)} for i, sv_ in zip(top, names_)]
            out.append(Finding(
                severity=Severity.INFO, metric="token_frequency_js", subject=col, value=js,
                count=int(s_tc.sum()), splits=[names[0], later],
                message=(f"Token-frequency Jensen–Shannon distance {names[0]} → {later} is "
                         f"{js:.3f} over {fmt_count(int(s_tc.sum()))} {later} content "
                         "tokens (0 = same distribution, 1 = disjoint)"),
                evidence={"tokens whose share moved most": rows}))
        return out


@dataclass
class LengthMeasures:
    """What tokens.lengths judges, per split: the table of content lengths (sorted distinct
    lengths and their row counts), the content-token counts over the vocabulary, the truncated
    rows and (when most uncut rows end with the EOS) the truncated rows without it; with the
    ids column's name and the run's tokenizer (for token strings), which are not measured."""

    lengths: dict[str, tuple[np.ndarray, np.ndarray]]
    token_counts: dict[str, np.ndarray]
    truncated: RowProblem
    eos_cut: RowProblem | None
    eos: int | None
    max_length: int
    max_length_declared: bool
    column: str
    tokenizer: Any

    # not measured: the same on every engine by construction (the conformance suite skips it)
    CONTEXT: ClassVar[tuple[str, ...]] = ("tokenizer",)


def measure_lengths(lay: TokenLayout, tok: Any, column: str) -> LengthMeasures:
    """:class:`LengthMeasures` from the merged token layout."""
    st = lay.settings
    p = lay.problem("trunc")
    eos = st.roles.eos
    q = None
    uncut = lay.total("uncut")
    if eos is not None and uncut and lay.total("eos") / uncut >= 0.5 and p.count:
        q = lay.problem("cut")
    return LengthMeasures(
        lengths=lay.lengths,
        token_counts=lay.token_counts if len(lay.splits) > 1 else {},
        truncated=p, eos_cut=q, eos=eos, max_length=st.max_length,
        max_length_declared=st.max_length_declared, column=column, tokenizer=tok)


def table_mean(values: np.ndarray, counts: np.ndarray) -> float:
    """The mean of integer values given as a count table (exact sum, one division: equal to
    ``np.mean`` of the expanded integers)."""
    return float(int((values.astype(np.int64) * counts.astype(np.int64)).sum())
                 / int(counts.sum()))


def table_quantile(values: np.ndarray, counts: np.ndarray, q: Any) -> Any:
    """``np.quantile(np.repeat(values, counts), q)`` (method 'linear') without expanding the
    table: the order statistics at floor((n-1)q) and the next one, interpolated with numpy's
    own formula."""
    qs = np.atleast_1d(np.asarray(q, dtype=np.float64))
    n = int(counts.sum())
    ends = np.cumsum(counts)
    vi = (n - 1) * qs
    prev = np.floor(vi)
    gamma = vi - prev
    lo = prev.astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    a = values[np.searchsorted(ends, lo, side="right")]
    b = values[np.searchsorted(ends, hi, side="right")]
    diff = np.subtract(b, a)
    out = np.asanyarray(np.add(a, diff * gamma))
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out if np.ndim(q) else out[0]


def _bin_label(edges: np.ndarray, i: int) -> str:
    lo, hi = edges[i], edges[i + 1]
    if not np.isfinite(lo):
        return f"< {hi:g}"
    if not np.isfinite(hi):
        return f">= {lo:g}"
    return f"[{lo:g}, {hi:g})"
