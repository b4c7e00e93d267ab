"""tokens.contamination: evaluation documents present in the training split.

Three detectors, each vectorised over documents:
- exact: a 64-bit hash of the normalised text (NFKC, lowercased, whitespace runs collapsed,
  trimmed), joined across splits and verified by comparing the normalised strings;
- near-duplicate: MinHash signatures and LSH banding on word shingles (auditor.stats.minhash; in
  Chinese, Japanese, Thai and other scripts written without spaces every character is a word,
  so shingles and n-grams there are character k-grams: auditor.stats.textnorm.WORD);
- long n-gram overlap (GPT-3 style): every word n-gram (n = 13) hashed, the hashes of the
  evaluation split joined with the training split's, and per evaluation document the share of
  its n-grams that occur in training (the overlap ratio).
"""
from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import polars as pl

from auditor.core.checks import Cost
from auditor.loading.data import AuditData
from auditor.detectors.token_findings import short
from auditor.errors import NotApplicable
from auditor.report.results import CleanSubset, Finding
from auditor.stats.numerics import fmt_count, fmt_share, grade, share
from auditor.stats.textnorm import (WORD_PY, collapse_whitespace, fold, rolling_ngram_hashes,
                              word_hashes)

_WORD_RE = re.compile(WORD_PY)
KIND_ORDER = ("exact", "near-duplicate", "n-gram overlap")
MAX_TRAIN_DOCS_PER_NGRAM = 4   # an n-gram shared by many train documents names only a few
OVERLAP_EDGES = np.linspace(0, 1, 11)   # bins of the overlap-ratio chart


def normalised_text(texts: pl.Series, *, folded: bool = False) -> pl.Series:
    """NFKC, lowercase, whitespace runs collapsed to one space, trimmed. ``folded``: the texts
    already are NFKC-lowercased (:func:`auditor.stats.textnorm.fold`)."""
    return pl.DataFrame({"t": texts if folded else fold(texts)}).select(
        collapse_whitespace(pl.col("t")))["t"]


def ngram_hashes(texts: pl.Series, n: int, seed: int) -> pl.DataFrame:
    """Columns ``doc`` (row index into ``texts``), ``pos`` (word position) and ``h`` (a 64-bit
    hash of the word n-gram starting there, :func:`auditor.stats.textnorm.rolling_ngram_hashes`).
    Documents shorter than n words give no row."""
    return ngram_hashes_and_lengths(texts, n, seed)[0]


def ngram_hashes_and_lengths(texts: pl.Series, n: int, seed: int, *, folded: bool = False,
                             with_pos: bool = True) -> tuple[pl.DataFrame, np.ndarray]:
    """:func:`ngram_hashes` (without ``pos`` unless ``with_pos``) and every document's number
    of words."""
    flat, lens = word_hashes(texts, seed, folded=folded)
    doc, pos, h = rolling_ngram_hashes(flat, lens, n, seed, with_pos=with_pos)
    cols = {"doc": doc, **({"pos": pos} if with_pos else {}), "h": h}
    schema = {"doc": pl.Int64, **({"pos": pl.Int64} if with_pos else {}), "h": pl.UInt64}
    return pl.DataFrame(cols, schema=schema), lens


@dataclass(frozen=True, kw_only=True)
class Contamination:
    """Evaluation documents (val, test) that also occur in the training split.

    A fail means the evaluation partly measures memorisation: those documents, exactly, nearly,
    or as long passages, were in the training data, so the scores on them are inflated. Fix:
    drop the listed rows from the evaluation split (the evidence lists their row indices), or
    deduplicate the corpus before splitting.

    A document of a later split counts once, by the first detector that matches: exact
    (normalised text equal to a training document's), near-duplicate (Jaccard similarity of
    word ``shingle``-gram sets >= ``jaccard_at``, estimated from MinHash signatures of
    ``num_perm`` hashes with LSH in ``bands`` bands), or n-gram overlap (at least
    ``ngram_ratio_at`` of its word ``ngram``-grams occur in the training split; documents with
    any shared n-gram, GPT-3's 'dirty' set, are reported too). Value = contaminated documents /
    documents of the later split. The training split is the first split declared.

    With the n-gram detector on, MinHash runs only on documents that share an n-gram with the
    other split or have fewer than 3n words: two documents of 3n words or more with Jaccard
    >= 0.8 on 3-word shingles differ in at most 1/9 of their shingles, so their edits lie at
    least ~27 words apart on average and leave unchanged 13-word runs between them. This keeps
    the near-duplicate search proportional to the overlap instead of to the corpus.
    """

    id: ClassVar[str] = "tokens.contamination"
    title: ClassVar[str] = "Evaluation documents present in training"
    cost: ClassVar[Cost] = Cost.STATS
    warn_above: float = 0.0
    fail_above: float = 0.001
    exact: bool = True
    near_duplicates: bool = True
    jaccard_at: float = 0.8
    shingle: int = 3
    num_perm: int = 128
    bands: int = 16
    ngram: int = 13                    # 0 turns the n-gram detector off
    ngram_ratio_at: float = 0.5
    # training documents hashed at a time: the n-gram pass of a chunk holds ~6 KB per
    # 200-word document (bench/tokens_bench.py data: 50,000 -> 0.3 GB less RSS than 100,000
    # whatever the corpus size, CPU +5%, within the noise of the shared machine)
    chunk_docs: int = 50_000
    max_examples: int = 20
    max_listed_rows: int = 1_000
    clean_dir: str | None = None       # write each evaluation split minus its contaminated rows

    def __post_init__(self) -> None:
        for name in ("warn_above", "fail_above", "jaccard_at", "ngram_ratio_at"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ValueError(f"{name} must be a share in [0, 1]; got {v!r}")
        for name in ("shingle", "num_perm", "bands", "chunk_docs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)!r}")
        for name in ("ngram", "max_examples", "max_listed_rows"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0; got {getattr(self, name)!r}")
        if self.num_perm % self.bands:
            raise ValueError(f"num_perm must be a multiple of bands ({self.bands}); "
                             f"got {self.num_perm!r}")

    def run(self, data: AuditData) -> list[Finding]:
        if data.tokens is None:
            raise NotApplicable("no tokens: section in the config")
        if not data.tokens.text:
            raise NotApplicable("no raw text column declared (tokens.text)")
        if len(data.splits) < 2:
            raise NotApplicable("only one split: nothing to compare with the training split")
        col = data.tokens.text
        names = list(data.splits)
        train_name = names[0]
        train = data.splits[train_name][col].cast(pl.String)
        seed = data.seed % (2**32)
        shared: dict[str, Any] = {}
        findings = []
        for later in names[1:]:
            test = data.splits[later][col].cast(pl.String)
            matches, dirty = self._matches(train, test, seed, shared)
            finding = self._finding(data, train_name, later, train, test, matches, dirty)
            findings.append(self.with_clean_subset(finding, later, matches["test_row"]))
        return findings

    def with_clean_subset(self, finding: Finding, split: str, rows: Any) -> Finding:
        """With ``clean_dir``: ``finding`` asking the run to write ``split`` without the
        contaminated ``rows`` once every check has run (:mod:`auditor.clean_subsets`)."""
        if self.clean_dir is None:
            return finding
        drop = np.unique(np.asarray(rows, dtype=np.int64))
        finding.clean = CleanSubset(split, drop, self.clean_dir)
        return finding

    # -- detectors -----------------------------------------------------------------------------
    def _matches(self, train: pl.Series, test: pl.Series, seed: int,
                 shared: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
        """One row per contaminated test document: test_row, train_row, kind, jaccard,
        overlap; and the n-gram overlap ratio of every test document with any shared n-gram."""
        frames = []
        schema = {"test_row": pl.Int64, "train_row": pl.Int64, "kind": pl.String,
                  "jaccard": pl.Float64, "overlap": pl.Float64}
        test_f = fold(test)
        dirty = pl.DataFrame(schema={"test_row": pl.Int64, "train_row": pl.Int64,
                                     "overlap": pl.Float64})
        cand_a = cand_b = None
        if self.ngram:  # one pass over train's chunks, which also hashes them for `exact`
            dirty, cand_a, cand_b = self._ngram(train, test_f, seed, shared)
            frames.append(dirty.filter(pl.col("overlap") >= self.ngram_ratio_at)
                          .with_columns(kind=pl.lit("n-gram overlap"),
                                        jaccard=pl.lit(None, pl.Float64)))
        if self.exact:
            frames.insert(0, self._exact(train, test_f, seed, shared))
        if self.near_duplicates:
            frames.append(self._near(train, test, seed, shared, cand_a, cand_b))
        rank = {k: i for i, k in enumerate(KIND_ORDER)}
        frames = [f.select(list(schema)).cast(schema) for f in frames]  # type: ignore[arg-type]
        allm = pl.concat(frames) if frames else pl.DataFrame(schema=schema)
        allm = (allm.with_columns(rk=pl.col("kind").replace_strict(rank, return_dtype=pl.Int64))
                .sort(["test_row", "rk"]).unique("test_row", keep="first", maintain_order=True)
                .drop("rk"))
        # every kept row also shows its n-gram overlap, whichever detector matched it
        allm = allm.join(dirty.select("test_row", pl.col("overlap").alias("o2")), on="test_row",
                         how="left").with_columns(
            overlap=pl.coalesce("overlap", "o2", pl.lit(0.0))).drop("o2")
        return allm, dirty

    def _exact(self, train: pl.Series, test_f: pl.Series, seed: int,
               shared: dict[str, Any]) -> pl.DataFrame:
        """Equal normalised text: hashes joined (train's table of hash -> first row is built
        once, chunk by chunk, usually by the n-gram pass), then the matched pairs' normalised
        strings compared, so a hash collision cannot report a copy."""
        if "exact" not in shared:
            parts = [self._exact_hashes(fold(train.slice(start, self.chunk_docs)), start, seed)
                     for start in range(0, train.len(), self.chunk_docs)]
            shared["exact"] = self._exact_table(parts)
        tb = (pl.DataFrame({"m": normalised_text(test_f, folded=True)})
              .with_row_index("test_row")
              .select(pl.col("test_row").cast(pl.Int64), "m")
              .filter(pl.col("m").str.len_bytes() > 0).with_columns(h=pl.col("m").hash(seed)))
        hits = tb.join(shared["exact"], on="h")
        same = (normalised_text(train.gather(hits["train_row"])) == hits["m"]).fill_null(False)
        return (hits.filter(same)
                .select("test_row", "train_row", kind=pl.lit("exact"), jaccard=pl.lit(1.0),
                        overlap=pl.lit(None, pl.Float64)))

    @staticmethod
    def _exact_hashes(folded: pl.Series, start: int, seed: int) -> pl.DataFrame:
        """(h, train_row) of a chunk of folded training text; empty documents left out."""
        return (pl.DataFrame({"n": normalised_text(folded, folded=True)})
                .with_row_index("train_row", offset=start)
                .filter(pl.col("n").str.len_bytes() > 0)
                .select(pl.col("train_row").cast(pl.Int64), h=pl.col("n").hash(seed)))

    @staticmethod
    def _exact_table(parts: list[pl.DataFrame]) -> pl.DataFrame:
        schema = {"train_row": pl.Int64, "h": pl.UInt64}
        return (pl.concat(parts) if parts else pl.DataFrame(schema=schema)).group_by("h").agg(
            pl.col("train_row").min())

    def _near(self, train: pl.Series, test: pl.Series, seed: int, shared: dict[str, Any],
              cand_a: np.ndarray | None, cand_b: np.ndarray | None) -> pl.DataFrame:
        """MinHash/LSH near-duplicates among the candidate documents (all when None)."""
        from auditor.stats.minhash import near_duplicate_pairs, signatures

        def sig(texts: pl.Series, rows: np.ndarray | None) -> Any:
            part = texts if rows is None else texts.gather(rows)
            return signatures(part, num_perm=self.num_perm, k=self.shingle, seed=seed)

        if cand_a is None:
            if "sig" not in shared:
                shared["sig"] = sig(train, None)
            sig_a = shared["sig"]
        else:
            sig_a = sig(train, cand_a)
        sig_b = sig(test, cand_b)
        pairs = near_duplicate_pairs(sig_a, sig_b, threshold=self.jaccard_at,
                                     bands=self.bands, seed=seed)
        a, b = pairs["doc_a"].to_numpy(), pairs["doc_b"].to_numpy()
        return pl.DataFrame({
            "test_row": b if cand_b is None else cand_b[b],
            "train_row": a if cand_a is None else cand_a[a],
            "kind": "near-duplicate", "jaccard": pairs["jaccard"],
            "overlap": pl.Series([None] * len(a), dtype=pl.Float64)},
            schema={"test_row": pl.Int64, "train_row": pl.Int64, "kind": pl.String,
                    "jaccard": pl.Float64, "overlap": pl.Float64})

    def _ngram(self, train: pl.Series, test_f: pl.Series, seed: int,
               shared: dict[str, Any] | None = None
               ) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
        """Per test document with any n-gram in train: its overlap ratio and the train document
        sharing most of its n-grams. Also the near-duplicate candidates: documents (train and
        test) that share an n-gram or have fewer than 3n words (see ``_near_candidates``).
        ``test_f`` is folded (:func:`auditor.stats.textnorm.fold`); ``train`` is raw text, folded
        chunk by chunk (never all at once), and while a chunk is folded its exact-match hashes
        go to ``shared["exact"]`` when the exact detector has not built them yet."""
        n = self.ngram
        short = 3 * n
        tg, lens_b = ngram_hashes_and_lengths(test_f, n, seed, folded=True)
        out_schema = {"test_row": pl.Int64, "train_row": pl.Int64, "overlap": pl.Float64}
        wanted = tg.select("h").unique()
        want_exact = shared is not None and self.exact and "exact" not in shared
        hits, short_a, exact_parts = [], [], []
        for start in range(0, train.len(), self.chunk_docs):
            chunk = fold(train.slice(start, self.chunk_docs))
            if want_exact:
                exact_parts.append(self._exact_hashes(chunk, start, seed))
            ag, lens_a = ngram_hashes_and_lengths(chunk, n, seed, folded=True, with_pos=False)
            del chunk
            short_a.append(np.flatnonzero(lens_a < short) + start)
            hits.append(ag.join(wanted, on="h", how="semi")
                        .select("h", (pl.col("doc") + start).alias("train_row")).unique())
            del ag  # not alive while the next chunk is hashed (16 bytes per n-gram)
        if want_exact:
            shared["exact"] = self._exact_table(exact_parts)
        train_hits = (pl.concat(hits).sort("train_row")
                      .group_by("h", maintain_order=True).head(MAX_TRAIN_DOCS_PER_NGRAM))
        matched = tg.join(train_hits, on="h")
        cand_a = np.union1d(np.concatenate(short_a) if short_a else np.zeros(0, np.int64),
                            matched["train_row"].unique().to_numpy()).astype(np.int64)
        cand_b = np.union1d(np.flatnonzero(lens_b < short),
                            matched["doc"].unique().to_numpy()).astype(np.int64)
        if matched.height == 0:
            return pl.DataFrame(schema=out_schema), cand_a, cand_b
        per_doc = tg.group_by("doc").agg(total=pl.len())
        covered = matched.group_by("doc").agg(shared=pl.col("pos").n_unique())
        best = (matched.group_by("doc", "train_row").agg(k=pl.col("pos").n_unique())
                .sort(["doc", "k", "train_row"], descending=[False, True, False])
                .unique("doc", keep="first", maintain_order=True))
        dirty = (covered.join(per_doc, on="doc").join(best, on="doc")
                 .select(pl.col("doc").alias("test_row"), "train_row",
                         overlap=pl.col("shared") / pl.col("total"))
                 .sort("test_row"))
        return dirty, cand_a, cand_b

    # -- the finding ---------------------------------------------------------------------------
    def _finding(self, data: AuditData, train_name: str, later: str, train: pl.Series,
                 test: pl.Series, m: pl.DataFrame, dirty: pl.DataFrame) -> Finding:
        by_kind = {k: int((m["kind"] == k).sum()) for k in KIND_ORDER}
        hist = (np.histogram(dirty["overlap"].to_numpy(), bins=OVERLAP_EDGES)[0].tolist()
                if dirty.height else None)
        examples = self._examples(train_name, later, train, test, m) if m.height else []
        rows = m["test_row"].sort().head(self.max_listed_rows).to_list()
        assert data.tokens is not None and data.tokens.text
        return self.judge(data.tokens.text, train_name, later, test.len(), by_kind,
                          dirty.height, hist, rows, m.height, examples)

    def judge(self, subject: str, train_name: str, later: str, n_docs: int,
              by_kind: dict[str, int], n_dirty: int, overlap_hist: list[int] | None,
              rows: list[int], count: int, examples: list[dict[str, Any]]) -> Finding:
        """The finding of one evaluation split from aggregates (both engines): contaminated
        documents per detector (``by_kind``, ``count`` in all), documents sharing any n-gram
        (``n_dirty``) and their overlap ratios counted in :data:`OVERLAP_EDGES` bins, the first
        ``max_listed_rows`` contaminated rows in order and the evidence examples."""
        value = share(count, n_docs)
        sev = grade(value, warn=self.warn_above, fail=self.fail_above)
        labels = {"exact": "exact copies (normalised text)",
                  "near-duplicate": f"near-duplicates (Jaccard >= {self.jaccard_at:g})",
                  "n-gram overlap": f"with >= {self.ngram_ratio_at:.0%} of their "
                                    f"{self.ngram}-grams in {train_name}"}
        enabled = {"exact": self.exact, "near-duplicate": self.near_duplicates,
                   "n-gram overlap": bool(self.ngram)}
        parts = ", ".join(f"{fmt_count(by_kind[k])} {labels[k]}" for k in KIND_ORDER
                          if enabled[k])
        message = (f"{fmt_count(count)} of {fmt_count(n_docs)} {later} documents "
                   f"({fmt_share(value)}) also occur in {train_name}: {parts}")
        table = [{"detector": labels[k], "documents": by_kind[k]} for k in KIND_ORDER
                 if enabled[k]]
        if self.ngram:
            table.append({"detector": f"any {self.ngram}-gram shared (GPT-3 'dirty')",
                          "documents": n_dirty})
        evidence: dict[str, Any] = {"by_detector": table}
        if overlap_hist is not None:
            evidence["chart"] = {"type": "hist", "edges": OVERLAP_EDGES.round(2).tolist(),
                                 "series": {later: list(overlap_hist)},
                                 "xlabel": f"share of the document's {self.ngram}-grams found in "
                                           f"{train_name}",
                                 "ylabel": "documents",
                                 "title": f"{self.ngram}-gram overlap of {later} documents "
                                          "that share any"}
        if count:
            evidence["examples"] = examples
            first = (f" (the first {self.max_listed_rows:,})"
                     if count > self.max_listed_rows else "")
            evidence["rows_to_drop"] = {
                "split": later, "rows": rows[:self.max_listed_rows], "total": count,
                "how": (f"0-based row indices of {later} in stored order{first}"
                        f"; report.json lists them under this key. Drop them with e.g. "
                        f"df.with_row_index('i').filter(~pl.col('i').is_in(rows)).drop('i'). "
                        + ("" if self.clean_dir is not None else
                           "The audit itself never writes data unless asked: "
                           "--write-clean DIR (clean_dir) writes the clean subset."))}
        return Finding(severity=sev, metric="contaminated_documents", subject=subject,
                       value=value, threshold=self.fail_above, count=count,
                       splits=[train_name, later], message=message, evidence=evidence)

    def _examples(self, train_name: str, later: str, train: Any, test: Any,
                  m: pl.DataFrame) -> list[dict[str, Any]]:
        """Up to max_examples pairs, taking the detectors in turn, with the longest shared span.
        ``train``/``test``: the texts by row number (a Series, or a dict of the rows of ``m``
        holding each detector's first ``max_examples`` rows, on Spark)."""
        by_kind = {k: m.filter(pl.col("kind") == k).head(self.max_examples) for k in KIND_ORDER}
        picked: list[tuple[Any, ...]] = []
        i = 0
        while len(picked) < min(self.max_examples, m.height):
            for k in KIND_ORDER:
                if i < by_kind[k].height and len(picked) < self.max_examples:
                    picked.append(by_kind[k].row(i))
            i += 1
        from auditor.stats.minhash import jaccard

        cols = m.columns
        out = []
        for row in picked:
            r = dict(zip(cols, row))
            a, b = train[r["train_row"]] or "", test[r["test_row"]] or ""
            span, n_words = longest_shared_span(b, a)
            out.append({f"{later}_row": r["test_row"], f"{train_name}_row": r["train_row"],
                        "detector": r["kind"],
                        f"jaccard ({self.shingle}-word shingles)": round(
                            jaccard(a, b, k=self.shingle), 3),
                        f"{self.ngram}-gram overlap": round(r["overlap"] or 0.0, 3),
                        "shared span": f"({n_words} words) {short(span, 160)}"})
        return out


def longest_shared_span(a: str, b: str, max_words: int = 5_000) -> tuple[str, int]:
    """The longest run of words (NFKC-lowercased :data:`auditor.stats.textnorm.WORD_PY`) that ``a``
    and ``b`` share, shown as the text of ``a`` from its first to its last word, and its
    length in words."""
    na = unicodedata.normalize("NFKC", a).lower()
    nb = unicodedata.normalize("NFKC", b).lower()
    ma = list(_WORD_RE.finditer(na))[:max_words]
    wb = _WORD_RE.findall(nb)[:max_words]
    wa = [x.group() for x in ma]
    sm = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    i, _, size = sm.find_longest_match(0, len(wa), 0, len(wb))
    if not size:
        return "", 0
    return na[ma[i].start():ma[i + size - 1].end()], size

