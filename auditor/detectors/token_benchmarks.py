"""tokens.benchmarks: public evaluation sets (``benchmarks:``) found in the corpus.

The benchmark is small and read on the driver; its hashes travel with one batch function
that the engine maps over every split (``map_batches``: polars batches, Spark executors), so
the corpus is read once, whatever the number of benchmarks. Per corpus document of a batch:

- exact: a 64-bit hash of the normalised text (NFKC, lowercased, whitespace collapsed),
  joined with the problems' and verified on the strings;
- n-gram (GPT-3 and lm-evaluation-harness convention, n = 13 words by default): the
  document's word n-grams joined with the problems'; a problem is matched by a document
  holding at least ``ngram_ratio_at`` of its n-grams (its n-gram positions found in that one
  document / its n-gram positions), and is "dirty" (GPT-3's looser set) when any document
  shares any n-gram with it;
- near-duplicate: MinHash signatures of word shingles with LSH banding
  (:func:`near_pairs`), Jaccard >= ``jaccard_at``, on the
  documents that share an n-gram with a problem (and the short ones, when a problem is short:
  two texts of 3n words or more that are near-duplicates share an n-gram, see
  ``tokens.contamination``).

Without a text column (a corpus stored as token ids) the problems are encoded with the
tokenizer and both sides compared as token ids, the special ids left out.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.roles import BenchmarkSet, Roles
from auditor.detectors.measured import judged
from auditor.detectors.token_contamination import (TEXT, Documents, Hashing, TextMatching,
                                                   document_texts, documents_of,
                                                   longest_shared_span,
                                                   ngram_hashes_and_lengths, normalised_text,
                                                   read_rows)
from auditor.detectors.token_findings import check_non_negative, check_shares, short
from auditor.engines.operations import Operations
from auditor.errors import NotApplicable
from auditor.report.results import CleanSubset, Finding, Severity
from auditor.stats.numerics import fmt_count, fmt_share, grade, share
from auditor.stats.textnorm import fold

EXACT, NEAR, NGRAM, DIRTY = 0, 1, 2, 3  # kinds of a batch's rows
KINDS = {EXACT: "exact", NEAR: "near-duplicate", NGRAM: "n-gram overlap"}  # detector order
HITS = {"kind": pl.Int32, "row": pl.Int64, "bdoc": pl.Int64, "value": pl.Float64}


@dataclass(frozen=True)
class Settings:
    """What the batch function hashes (``hs``, as ``tokens.contamination`` hashes: the
    document column, n-gram size, seed, detectors on, shingles and MinHash) and the shares it
    keeps a match at."""

    hs: Hashing
    ratio_at: float
    jaccard_at: float


@dataclass(frozen=True)
class Reference:
    """The fields looked for (:class:`Passages`, numbered 0.. as ``bdoc``): their n-grams
    (``grams``: distinct (h, bdoc, pos)), n-gram positions per field (``totals``),
    normalised-text hashes (``exact``: h, bdoc, norm), MinHash signatures (``sig``) and
    whether a field has fewer than 3n words (``short``)."""

    grams: pl.DataFrame
    totals: pl.DataFrame
    exact: pl.DataFrame
    sig: Any
    short: bool


def reference(texts: pl.Series, st: Settings) -> Reference:
    """The hashes of the fields ``texts`` (already as the corpus is read: text, or token ids
    written as words)."""
    from auditor.stats.minhash import signatures

    folded = fold(texts)
    grams, lens = ngram_hashes_and_lengths(folded, st.hs.ngram or 1, st.hs.seed, folded=True)
    grams = grams.select(h=pl.col("h").reinterpret(signed=True), bdoc="doc", pos="pos").unique()
    totals = pl.DataFrame({"bdoc": np.arange(len(lens), dtype=np.int64),
                           "total": np.maximum(lens - (st.hs.ngram - 1), 0).astype(np.int64)})
    norm = normalised_text(folded, folded=True)
    exact = (pl.DataFrame({"norm": norm}).with_row_index("bdoc")
             .filter(pl.col("norm").str.len_bytes() > 0)
             .select(h=pl.col("norm").hash(st.hs.seed).reinterpret(signed=True),
                     bdoc=pl.col("bdoc").cast(pl.Int64), norm="norm"))
    sig = (signatures(texts, num_perm=st.hs.num_perm, k=st.hs.shingle, seed=st.hs.seed)
           if st.hs.near else None)
    return Reference(grams if st.hs.ngram else grams.clear(), totals, exact, sig,
                     bool((lens < 3 * st.hs.ngram).any()) if st.hs.ngram else True)


def corpus_hits(batch: pl.DataFrame, first_row: int, *, ref: Reference, st: Settings
                ) -> pl.DataFrame:
    """One batch of corpus documents against every field: rows (kind, row, bdoc, value) --
    EXACT (value 1), NGRAM (value: the share of the field's n-grams in the document, kept
    at >= ``ratio_at``), NEAR (value: the Jaccard estimate, every field at >= ``jaccard_at``),
    and DIRTY (row -1: the field shares an n-gram with a document of the batch)."""
    texts = document_texts(batch, st.hs.column, st.hs.skip)
    folded = fold(texts)
    rows = np.arange(first_row, first_row + batch.height, dtype=np.int64)
    parts: list[pl.DataFrame] = []
    candidates = np.arange(batch.height)
    if st.hs.ngram:
        grams, lens = ngram_hashes_and_lengths(folded, st.hs.ngram, st.hs.seed, folded=True,
                                               with_pos=False)
        per = (grams.select("doc", h=pl.col("h").reinterpret(signed=True))
               .join(ref.grams, on="h").select("doc", "bdoc", "pos").unique()
               .group_by("doc", "bdoc").agg(k=pl.len())
               .join(ref.totals, on="bdoc")
               .select("doc", "bdoc", value=pl.col("k") / pl.col("total")))
        parts.append(per.filter(pl.col("value") >= st.ratio_at).select(
            kind=pl.lit(NGRAM, pl.Int32), row=pl.col("doc") + first_row, bdoc="bdoc",
            value="value"))
        parts.append(per.select("bdoc").unique().select(
            kind=pl.lit(DIRTY, pl.Int32), row=pl.lit(-1, pl.Int64), bdoc="bdoc",
            value=pl.lit(1.0)))
        candidates = np.union1d(per["doc"].unique().to_numpy(),
                                np.flatnonzero(lens < 3 * st.hs.ngram) if ref.short
                                else np.empty(0, dtype=np.int64))
    if st.hs.exact and ref.exact.height:
        norm = normalised_text(folded, folded=True)
        parts.append(pl.DataFrame({"norm": norm, "row": rows})
                     .filter(pl.col("norm").str.len_bytes() > 0)
                     .with_columns(h=pl.col("norm").hash(st.hs.seed).reinterpret(signed=True))
                     .join(ref.exact, on="h", suffix="_b")
                     .filter(pl.col("norm") == pl.col("norm_b"))
                     .select(kind=pl.lit(EXACT, pl.Int32), row="row", bdoc="bdoc",
                             value=pl.lit(1.0)))
    if st.hs.near and ref.sig is not None and len(candidates):
        from auditor.stats.minhash import signatures

        pick = candidates.astype(np.int64)
        sig = signatures(texts.gather(pick), num_perm=st.hs.num_perm, k=st.hs.shingle,
                         seed=st.hs.seed)
        pairs = near_pairs(ref, sig, st)
        parts.append(pl.DataFrame({
            "kind": np.full(pairs.height, NEAR, dtype=np.int32),
            "row": rows[pick[pairs["doc_b"].to_numpy()]],
            "bdoc": pairs["doc_a"].to_numpy(), "value": pairs["jaccard"].to_numpy()}))
    parts = [p.cast(HITS) for p in parts if p.height]  # type: ignore[arg-type]
    return pl.concat(parts) if parts else pl.DataFrame(schema=HITS)


def near_pairs(ref: Reference, sig: Any, st: Settings) -> pl.DataFrame:
    """Every (field ``doc_a``, document ``doc_b``) pair sharing an LSH band key whose
    signature estimate of Jaccard similarity is >= ``jaccard_at``, with it (``jaccard``). Every
    field of a band key is kept (the fields are few): two benchmarks holding the same problem,
    or a problem repeated, are each matched (the train-vs-evaluation search keeps one
    representative per key, :func:`auditor.stats.minhash.near_duplicate_pairs`)."""
    from auditor.stats.minhash import band_keys

    keys = band_keys(ref.sig, st.hs.bands, st.hs.seed).rename({"doc": "doc_a"})
    cand = (band_keys(sig, st.hs.bands, st.hs.seed).rename({"doc": "doc_b"})
            .join(keys, on=["band", "key"]).select("doc_a", "doc_b").unique())
    ia, ib = cand["doc_a"].to_numpy(), cand["doc_b"].to_numpy()
    jac = (ref.sig.values[ia] == sig.values[ib]).mean(1) if len(ia) else np.empty(0)
    return (pl.DataFrame({"doc_a": ia, "doc_b": ib, "jaccard": jac},
                         schema={"doc_a": pl.Int64, "doc_b": pl.Int64, "jaccard": pl.Float64})
            .filter(pl.col("jaccard") >= st.jaccard_at))


@dataclass(frozen=True)
class Passages:
    """The texts looked for: one per (problem, text field) of every benchmark, numbered 0..
    (``bdoc``) in declared order, with at least ``min_words`` words. ``problem`` is a
    problem's number over all benchmarks (the benchmarks' problems in order), ``field`` the
    field's position in its benchmark's ``fields``."""

    texts: list[str]
    problem: np.ndarray
    field: np.ndarray


def passages(benchmarks: tuple[BenchmarkSet, ...]) -> Passages:
    """Every non-empty field of every problem of ``benchmarks``."""
    texts, problem, field = [], [], []
    first = 0
    for b in benchmarks:  # the benchmarks' problems, a few thousand: read on the driver
        for i, row in enumerate(b.texts):
            for j, t in enumerate(row):
                if t:
                    texts.append(t)
                    problem.append(first + i)
                    field.append(j)
        first += len(b.ids)
    return Passages(texts, np.asarray(problem, dtype=np.int64),
                    np.asarray(field, dtype=np.int64))


def at_least(ps: Passages, min_words: int, seed: int) -> Passages:
    """``ps`` without the texts of fewer than ``min_words`` words."""
    from auditor.stats.textnorm import word_hashes

    _, lens = word_hashes(pl.Series(ps.texts, dtype=pl.String), seed)
    keep = np.flatnonzero(lens >= min_words)
    return Passages([ps.texts[k] for k in keep], ps.problem[keep], ps.field[keep])


@dataclass(frozen=True)
class BenchmarkMeasures:
    """Every split against every benchmark on the document ``column``: the matches (split,
    row, problem, field, kind, value; per (document, problem) the first detector of
    :data:`KINDS` that matched one of its fields), the dirty problems (split, problem: one of
    its fields shares an n-gram with a document), the problems searched (a field of
    ``min_words`` words or more), and example pairs. Problems are numbered over
    ``benchmarks`` in order."""

    column: str
    splits: tuple[str, ...]
    benchmarks: tuple[BenchmarkSet, ...]
    matches: pl.DataFrame
    dirty: pl.DataFrame
    searched: np.ndarray
    examples: list[dict[str, Any]]
    ids: bool = False


@dataclass(frozen=True, kw_only=True)
class BenchmarkContamination(TextMatching):
    """Problems of public evaluation sets (the benchmarks: section) present in the corpus.

    A fail means a benchmark score of a model trained on this corpus partly measures
    memorisation: those problems (exactly, nearly, or most of a field's text) are in the
    training split. Fix: drop the matching training documents (listed in the evidence;
    ``--write-clean DIR`` writes the training split without them), or report the benchmark on
    its clean problems only.

    Each text field of a problem (a prompt, a solution, a test) is looked for on its own, so
    that a long field the corpus lacks does not hide one it holds; fields of fewer than
    ``min_words`` words (an entry-point name, a one-letter answer) are not. A problem counts
    once per split, by the first detector that matches one of its fields: exact (a document's
    normalised text equal to the field's), near-duplicate (Jaccard similarity of word
    ``shingle``-grams >= ``jaccard_at``, from MinHash signatures of ``num_perm`` hashes in
    ``bands`` LSH bands), n-gram (one document holds at least ``ngram_ratio_at`` of the
    field's word ``ngram``-grams; 13 as GPT-3 and the lm-evaluation-harness; problems sharing
    any n-gram, GPT-3's looser 'dirty' set, are reported too). Value = problems found in the
    training split (the first split) / problems of the benchmark, graded against
    ``warn_above``/``fail_above`` (default: any problem fails). Later splits are reported (a
    split x benchmark table), not graded: an evaluation split may hold a benchmark on purpose.
    """

    id: ClassVar[str] = "tokens.benchmarks"
    title: ClassVar[str] = "Public benchmarks present in the corpus"
    cost: ClassVar[Cost] = Cost.STATS
    needs: ClassVar[Needs] = Needs(roles=("benchmarks", "tokens|text"))
    warn_above: float = 0.0
    fail_above: float = 0.0
    min_words: int = 8                 # shorter fields are not looked for
    max_examples: int = 20
    max_listed: int = 1_000            # problem ids and document rows listed per split
    clean_dir: str | None = None       # write the training split without the matching rows

    def __post_init__(self) -> None:
        check_shares(self, "warn_above", "fail_above")
        self.check_matching()
        check_non_negative(self, "max_examples", "max_listed")
        if self.min_words < 1:
            raise ValueError(f"min_words must be >= 1; got {self.min_words!r}")
        if not (self.exact or self.near_duplicates or self.ngram):
            raise ValueError("every detector is off: set exact, near_duplicates or ngram")

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    # -- measure -------------------------------------------------------------------------------
    def measure(self, engine: Operations, roles: Roles) -> BenchmarkMeasures:
        """One ``map_batches`` pass over every split (:func:`corpus_hits`), then the texts
        of the examples read by row number."""
        docs = self._documents(engine, roles)
        st = Settings(self.hashing(docs.column, roles.seed, docs.skip), self.ngram_ratio_at,
                      self.jaccard_at)
        ps = passages(roles.benchmarks)
        if docs.decode is not None:  # compared as token ids: the problems encoded
            ids = document_texts(pl.DataFrame({"ids": self._encode(engine, roles, ps.texts)},
                                      schema={"ids": pl.List(pl.Int64)}), "ids", docs.skip)
            ps = Passages(ids.to_list(), ps.problem, ps.field)
        ps = at_least(ps, self.min_words, st.hs.seed)
        if not ps.texts:
            raise NotApplicable(f"no benchmark field has {self.min_words} words or more "
                                "(min_words)")
        ref = reference(pl.Series(ps.texts, dtype=pl.String), st)
        got = engine.map_batches([docs.column], partial(corpus_hits, ref=ref, st=st), HITS)
        names = tuple(roles.splits)
        hits = pl.concat([got[s].with_columns(split=pl.lit(s)) for s in names])
        owner = pl.DataFrame({"bdoc": np.arange(len(ps.texts), dtype=np.int64),
                              "problem": ps.problem, "field": ps.field})
        matches = (hits.filter(pl.col("kind").is_in(list(KINDS))).join(owner, on="bdoc")
                   .sort(["split", "problem", "row", "kind", "field"])
                   .unique(["split", "problem", "row"], keep="first", maintain_order=True)
                   .select("split", "row", "problem", "field", "bdoc", "kind", "value"))
        dirty = (hits.filter(pl.col("kind") == DIRTY).join(owner, on="bdoc")
                 .select("split", "problem").unique().sort("split", "problem"))
        searched = np.unique(ps.problem)
        examples = self._examples(engine, docs, roles.benchmarks, ps.texts, matches, names)
        return BenchmarkMeasures(docs.column, names, roles.benchmarks, matches, dirty,
                                 searched, examples, ids=docs.decode is not None)

    @staticmethod
    def _documents(engine: Operations, roles: Roles) -> Documents:
        """The tokens: section's documents, else the first declared text column."""
        if roles.tokens is not None:
            return documents_of(engine, roles.tokens)
        text = [c for c in roles.columns.text if c in roles.kinds]
        if not text:
            raise NotApplicable("no text column present in every split")
        return Documents(text[0])

    @staticmethod
    def _encode(engine: Operations, roles: Roles, texts: list[str]) -> list[list[int]]:
        from auditor.detectors.token_measures import tokenizer_for

        assert roles.tokens is not None
        ids: list[list[int]] = tokenizer_for(engine, roles.tokens).encode_batch(texts)
        return ids

    def _examples(self, engine: Operations, docs: Documents,
                  benchmarks: tuple[BenchmarkSet, ...], texts: list[str],
                  matches: pl.DataFrame, names: tuple[str, ...]) -> list[dict[str, Any]]:
        """The first ``max_examples`` matched problems per split and benchmark (one document
        each, the first detector's), with the longest span the document and the problem's
        field (``texts`` by ``bdoc``: as the documents are read, text or ids as words) share."""
        if not matches.height:
            return []
        owner = [(b, i) for b in benchmarks for i in b.ids]
        bench = np.repeat(np.arange(len(benchmarks)), [len(b.ids) for b in benchmarks])
        shown = (matches.sort(["split", "problem", "kind", "row"])
                 .unique(["split", "problem"], keep="first", maintain_order=True)
                 .with_columns(b=pl.lit(pl.Series(bench)).gather(pl.col("problem")))
                 .group_by("split", "b", maintain_order=True).head(self.max_examples))
        out = []
        unit = "tokens" if docs.decode is not None else "words"
        for s in names:
            part = shown.filter(pl.col("split") == s)
            if not part.height:
                continue
            read = dict(read_rows(engine, s, docs.column, part["row"], TEXT,
                                  docs.skip).iter_rows())
            for r in part.iter_rows(named=True):
                span, n = longest_shared_span(read.get(r["row"]) or "", texts[r["bdoc"]])
                if docs.decode is not None and span:
                    span = docs.decode([[int(i) for i in span.split()]])[0]
                b, pid = owner[r["problem"]]
                out.append({"benchmark": b.name, "problem": pid, "field": b.fields[r["field"]],
                            "split": s, "row": r["row"], "detector": KINDS[r["kind"]],
                            "score": round(float(r["value"]), 3),
                            "shared span": f"({n} {unit}) {short(span, 160)}"})
        return out

    # -- judge ---------------------------------------------------------------------------------
    def judge(self, m: BenchmarkMeasures) -> list[Finding]:
        """One finding per benchmark, graded on the training split (the first); the split x
        benchmark table and chart on the first finding; the training documents matching any
        problem of any benchmark dropped from one clean subset (with ``clean_dir``)."""
        train = m.splits[0]
        first = (m.matches.sort(["split", "problem", "kind", "row"])
                 .unique(["split", "problem"], keep="first", maintain_order=True))
        out, matrix, lo = [], [], 0
        for b in m.benchmarks:
            hi = lo + len(b.ids)
            inside = (pl.col("problem") >= lo) & (pl.col("problem") < hi)
            f = self._finding(m, b, lo, first.filter(inside), m.matches.filter(inside),
                              m.dirty.filter(inside))
            searched = int(((m.searched >= lo) & (m.searched < hi)).sum())
            matrix.append({"benchmark": b.name, "problems searched": searched,
                           **{f"found in {r['split']}": r["problems found"]
                              for r in f.evidence.get("by_split", [])}})
            out.append(f)
            lo = hi
        out[0].evidence["split_x_benchmark"] = matrix
        out[0].evidence["chart"] = {
            "type": "grouped_bar", "categories": [b.name for b in m.benchmarks],
            "series": {s: [round(share(r.get(f"found in {s}", 0), r["problems searched"]), 4)
                           for r in matrix] for s in m.splits},
            "ylabel": "share of the problems searched",
            "title": "Benchmark problems found in each split"}
        if self.clean_dir is not None:  # written even when nothing matched: a pipeline reads it
            drop = np.unique(m.matches.filter(pl.col("split") == train)["row"].to_numpy())
            out[0].clean = CleanSubset(train, drop.astype(np.int64), self.clean_dir)
        return out

    def _finding(self, m: BenchmarkMeasures, b: BenchmarkSet, lo: int, first: pl.DataFrame,
                 matches: pl.DataFrame, dirty: pl.DataFrame) -> Finding:
        train, total = m.splits[0], len(b.ids)
        n = int(((m.searched >= lo) & (m.searched < lo + total)).sum())
        where = {"benchmark": {"name": b.name, "path": b.path, "sha256": b.sha256,
                               "problems": total, "searched": n, "fields": list(b.fields)}}
        if not n:
            return Finding(severity=Severity.INFO, metric="benchmark_problems", subject=b.name,
                           value=None, threshold=None, count=0, splits=list(m.splits),
                           message=(f"{b.name} was not searched: none of its {fmt_count(total)} "
                                    f"problems has a field of {self.min_words} words or more "
                                    "(min_words)"), evidence=where)
        of_ids = " of token ids" if m.ids else ""
        labels = {"exact": "exact copies" + (" (the same token ids)" if m.ids else ""),
                  "near-duplicate": f"near-duplicates (Jaccard >= {self.jaccard_at:g})",
                  "n-gram overlap": f"with >= {self.ngram_ratio_at:.0%} of a field's "
                                    f"{self.ngram}-grams{of_ids} in one document"}
        enabled = self.detectors_on()
        table, found = [], {}
        for s in m.splits:
            mine = first.filter(pl.col("split") == s)
            found[s] = mine
            row: dict[str, Any] = {"split": s, "problems found": mine.height,
                                   "share": round(share(mine.height, n), 4)}
            for code, k in KINDS.items():
                if enabled[k]:
                    row[labels[k]] = int((mine["kind"] == code).sum())
            if self.ngram:
                row[f"sharing any {self.ngram}-gram ('dirty')"] = int(
                    (dirty["split"] == s).sum())
            row["documents matching"] = int(
                matches.filter(pl.col("split") == s)["row"].n_unique())
            table.append(row)
        count = found[train].height
        value = share(count, n)
        sev = grade(value, warn=self.warn_above, fail=self.fail_above)
        message = (f"{fmt_count(count)} of {fmt_count(n)} {b.name} problems "
                   f"({fmt_share(value)}) occur in {train}")
        if count:
            short_labels = {"exact": "exact", "near-duplicate": f"near-duplicate (Jaccard >= "
                                                               f"{self.jaccard_at:g})",
                            "n-gram overlap": f">= {self.ngram_ratio_at:.0%} of a field's "
                                              f"{self.ngram}-grams{of_ids} in one document"}
            parts = "; ".join(f"{short_labels[k]}: {fmt_count(table[0][labels[k]])}"
                              for k in KINDS.values() if enabled[k])
            docs = table[0]["documents matching"]
            message += f", in {fmt_count(docs)} document{'s' * (docs != 1)} ({parts})"
        later = [f"{fmt_count(r['problems found'])} in {r['split']}" for r in table[1:]
                 if r["problems found"]]
        if later:
            message += f" (also {', '.join(later)}: reported, not graded)"
        if n < total:
            message += (f"; {fmt_count(total - n)} of its {fmt_count(total)} problems have no "
                        f"field of {self.min_words} words or more and were not searched")
        evidence: dict[str, Any] = {**where, "by_split": table}
        if matches.height:
            evidence["problems_found"] = {
                s: [b.ids[i - lo] for i in found[s]["problem"].head(self.max_listed).to_list()]
                for s in m.splits if found[s].height}
            evidence["examples"] = [e for e in m.examples if e["benchmark"] == b.name]
        rows = np.unique(matches.filter(pl.col("split") == train)["row"].to_numpy())
        if len(rows):
            more = f" (the first {self.max_listed:,})" if len(rows) > self.max_listed else ""
            evidence["rows_to_drop"] = {
                "split": train, "rows": rows[:self.max_listed].tolist(), "total": int(len(rows)),
                "how": (f"0-based row indices of {train} in stored order{more} of the documents "
                        f"holding a {b.name} problem; "
                        + ("the clean training split is written after the run."
                           if self.clean_dir is not None else
                           "--write-clean DIR writes the training split without them."))}
        return Finding(severity=sev, metric="benchmark_problems", subject=b.name, value=value,
                       threshold=self.fail_above, count=count, splits=list(m.splits),
                       message=message, evidence=evidence)

