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
from functools import partial
from typing import Any, ClassVar, NamedTuple

import numpy as np
import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.roles import Roles
from auditor.detectors.measured import judged
from auditor.engines.operations import Expansion, Operations
from auditor.detectors.token_findings import check_non_negative, check_shares, short
from auditor.errors import NotApplicable
from auditor.report.results import CleanSubset, Finding
from auditor.stats.numerics import fmt_count, fmt_share, grade, share
from auditor.stats.textnorm import (WORD_PY, collapse_whitespace, fold,
                                   rolling_ngram_hashes, word_hashes)

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


# an expanded row's kind; a band key's is BAND + its band; SHORT notes a document of fewer
# than 3 ngram words (a near-duplicate candidate whatever it shares)
SHORT, EXACT, NGRAM, BAND = -1, 0, 1, 2
EVAL_SCHEMA = (("kind", pl.Int32), ("h", pl.Int64), ("row", pl.Int64), ("pos", pl.Int64),
               ("words", pl.Int64))
BAND_SCHEMA = (("kind", pl.Int32), ("h", pl.Int64), ("row", pl.Int64))
TRAIN_SCHEMA = (("h", pl.Int64), ("train_row", pl.Int64))
NOTE = 0  # the key of a SHORT row: a note kept, never joined (a hash is 0 once in 2^64)
NORMALISED, TEXT = "normalised", "text"


@dataclass(frozen=True)
class Hashing:
    """What the batch functions of ``tokens.contamination`` hash, per document of a batch.
    First pass (:func:`train_rows` against :func:`eval_rows`):

    - the exact text (kind ``EXACT``): a 64-bit hash of the normalised text (empty: none);
    - word ``ngram``-grams (kind ``NGRAM``): their rolling hashes; the evaluation side keeps
      each one's position and the document's word count.

    Both sides also note (kind ``SHORT``, kept rather than joined) their documents of fewer
    than 3 ``ngram`` words. Second pass (:func:`band_rows` on both sides): MinHash signatures
    of ``num_perm`` hashes on word ``shingle``-grams, cut into ``bands`` band keys (kind
    ``BAND + band``), of the near-duplicate candidates only: documents that share an n-gram
    or are short (found by the first pass); every document when ``ngram`` is 0.

    Hashes are reinterpreted as signed 64-bit (engines without unsigned integers)."""

    column: str
    ngram: int
    seed: int
    exact: bool
    near: bool
    shingle: int
    num_perm: int
    bands: int
    skip: tuple[int, ...] = ()  # ids left out of a token-id column (padding, control tokens)


def document_texts(batch: pl.DataFrame, column: str, skip: tuple[int, ...] = ()) -> pl.Series:
    """The documents of ``column`` as text: the text itself, or for a column of token ids
    (no text column declared) its ids without ``skip`` written as words ("464 2068 7586"),
    so that exact copies, n-grams and shingles are of token ids."""
    if isinstance(batch.schema[column], (pl.List, pl.Array)):  # as the other checks read ids
        from auditor.detectors.token_measures import token_chunk

        drop = pl.lit(pl.Series(list(skip), dtype=pl.Int64)).implode()
        return token_chunk(batch, [column]).select(pl.col(column).list.eval(
            pl.element().filter(pl.element().is_not_null() & ~pl.element().is_in(drop))
            .cast(pl.String)).list.join(" ")).to_series()
    return batch.get_column(column).cast(pl.String)


def eval_rows(batch: pl.DataFrame, first_row: int, *, hs: Hashing) -> pl.DataFrame:
    """The evaluation side of the first pass for one batch: (kind, h, row, pos, words),
    ``words`` the document's word count."""
    rows = np.arange(first_row, first_row + batch.height, dtype=np.int64)
    folded = fold(document_texts(batch, hs.column, hs.skip))
    parts = []
    lens = np.zeros(batch.height, dtype=np.int64)
    if hs.ngram:
        grams, lens = ngram_hashes_and_lengths(folded, hs.ngram, hs.seed, folded=True)
        doc = grams["doc"].to_numpy()
        parts.append(pl.DataFrame({"kind": np.full(grams.height, NGRAM, dtype=np.int32),
                                   "h": grams["h"].reinterpret(signed=True),
                                   "row": rows[doc], "pos": grams["pos"],
                                   "words": lens[doc]}))
    if hs.exact:
        norm = normalised_text(folded, folded=True)
        ex = pl.DataFrame({"n": norm, "row": rows, "words": lens})
        parts.append(ex.filter(pl.col("n").str.len_bytes() > 0).select(
            kind=pl.lit(EXACT, pl.Int32), h=pl.col("n").hash(hs.seed).reinterpret(signed=True),
            row="row", pos=pl.lit(None, pl.Int64), words="words"))
    if hs.near and hs.ngram:
        short = np.flatnonzero(lens < 3 * hs.ngram)
        parts.append(pl.DataFrame({"kind": np.full(len(short), SHORT, dtype=np.int32),
                                   "h": np.full(len(short), NOTE, dtype=np.int64),
                                   "row": rows[short], "words": lens[short]})
                     .select("kind", "h", "row", pos=pl.lit(None, pl.Int64), words="words"))
    return pl.concat(parts, how="vertical", rechunk=False) if parts else pl.DataFrame()


def train_rows(batch: pl.DataFrame, first_row: int, *, hs: Hashing) -> pl.DataFrame:
    """The training side of the first pass for one batch: (h, train_row), exact-text and
    n-gram hashes alike (the evaluation side's kind tells them apart; 64-bit hashes of the two
    never meet but by a 2^-64 chance, and an exact hit is verified on the text); a document's
    repeated n-gram repeats (the engine keeps distinct rows of what matches)."""
    folded = fold(document_texts(batch, hs.column, hs.skip))
    parts = []
    if hs.ngram:
        grams, lens = ngram_hashes_and_lengths(folded, hs.ngram, hs.seed, folded=True,
                                               with_pos=False)
        parts.append(grams.select(h=pl.col("h").reinterpret(signed=True),
                                  train_row=pl.col("doc") + first_row))
        if hs.near:
            short = np.flatnonzero(lens < 3 * hs.ngram).astype(np.int64)
            parts.append(pl.DataFrame({"h": np.full(len(short), NOTE, dtype=np.int64),
                                       "train_row": short + first_row}))
    if hs.exact:
        norm = normalised_text(folded, folded=True)
        ex = pl.DataFrame({"n": norm}).with_row_index("train_row", offset=first_row)
        parts.append(ex.filter(pl.col("n").str.len_bytes() > 0).select(
            h=pl.col("n").hash(hs.seed).reinterpret(signed=True),
            train_row=pl.col("train_row").cast(pl.Int64)))
    return pl.concat(parts, how="vertical", rechunk=False) if parts else pl.DataFrame()


def _picked(batch: pl.DataFrame, first_row: int, rows: np.ndarray) -> np.ndarray:
    """Positions in the batch of the stored ``rows`` (sorted) that fall inside it."""
    lo, hi = np.searchsorted(rows, [first_row, first_row + batch.height])
    return rows[lo:hi] - first_row


def band_rows(batch: pl.DataFrame, first_row: int, *, hs: Hashing, rows: np.ndarray | None,
              name: str) -> pl.DataFrame:
    """The second pass for one batch: MinHash band keys (kind BAND + band, h, ``name``) of
    the near-duplicate candidates in it, the stored ``rows`` (documents that share an n-gram
    or are short); every document when ``rows`` is None (no n-gram detector)."""
    from auditor.stats.minhash import band_keys, signatures

    pick = np.arange(batch.height) if rows is None else _picked(batch, first_row, rows)
    if not len(pick):
        return pl.DataFrame()
    sig = signatures(document_texts(batch, hs.column, hs.skip).gather(pick), num_perm=hs.num_perm,
                     k=hs.shingle, seed=hs.seed)
    keys = band_keys(sig, hs.bands, hs.seed)
    return pl.DataFrame({"kind": (keys["band"] + BAND).cast(pl.Int32),
                         "h": keys["key"].reinterpret(signed=True),
                         name: pick[keys["doc"].to_numpy()] + first_row})


def text_rows(batch: pl.DataFrame, first_row: int, *, column: str, rows: np.ndarray,
              what: str, skip: tuple[int, ...] = ()) -> pl.DataFrame:
    """(row, value) of the stored ``rows`` in the batch: the text, or its normalised form."""
    pick = _picked(batch, first_row, rows)
    texts = document_texts(batch, column, skip).gather(pick)
    return pl.DataFrame({"row": pick + first_row,
                         "value": normalised_text(texts) if what == NORMALISED else texts})


def signature_rows(batch: pl.DataFrame, first_row: int, *, hs: Hashing, rows: np.ndarray
                   ) -> pl.DataFrame:
    """(row, sig) of the stored ``rows`` in the batch, ``sig`` the MinHash values as signed
    64-bit integers."""
    from auditor.stats.minhash import signatures

    pick = _picked(batch, first_row, rows)
    sig = signatures(document_texts(batch, hs.column, hs.skip).gather(pick), num_perm=hs.num_perm,
                     k=hs.shingle, seed=hs.seed)
    return pl.DataFrame({"row": pick + first_row,
                         "sig": pl.Series(sig.values.view(np.int64).tolist(),
                                          dtype=pl.List(pl.Int64))})


def read_rows(engine: Operations, split: str, column: str, rows: pl.Series, what: str,
              skip: tuple[int, ...] = ()) -> pl.DataFrame:
    """(row, value) of a few stored rows of ``split`` (:func:`text_rows`)."""
    want = np.unique(rows.to_numpy()).astype(np.int64)
    if not len(want):
        return pl.DataFrame(schema={"row": pl.Int64, "value": pl.String})
    fn = partial(text_rows, column=column, rows=want, what=what, skip=skip)
    return engine.map_batches([column], fn, {"row": pl.Int64, "value": pl.String},
                              splits=[split])[split]


def signature_table(engine: Operations, hs: Hashing, split: str, rows: pl.Series
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Rows (sorted) and their MinHash signatures (one row of the matrix each)."""
    want = np.unique(rows.to_numpy()).astype(np.int64)
    got = engine.map_batches([hs.column], partial(signature_rows, hs=hs, rows=want),
                             {"row": pl.Int64, "sig": pl.List(pl.Int64)},
                             splits=[split])[split].sort("row")
    values = np.array(got["sig"].to_list(), dtype=np.int64).reshape(got.height, hs.num_perm)
    return got["row"].to_numpy(), values


def _layout_pad(engine: Operations, t: Any) -> int | None:
    """The pad id the token layout found (declared, the tokenizer's, or read off the
    attention mask: padding with an ordinary id such as 0 is still padding), or None."""
    from auditor.detectors.token_measures import layout_settings

    try:
        _, settings = layout_settings(engine, t)
    except NotApplicable:
        return None
    pad = settings.roles.pad
    return int(pad) if pad is not None else None


class Documents(NamedTuple):
    """The column a text check reads documents from: the text, or with no text column the
    token ids written as words (``skip``: the ids left out; ``decode``: the tokenizer's
    ``decode_batch``, which shows shared ids as text)."""

    column: str
    skip: tuple[int, ...] = ()
    decode: Any = None


def documents_of(engine: Operations, t: Any) -> Documents:
    """The documents of a ``tokens:`` section: its text column, else its token ids without
    the special ids, the declared pad/BOS/EOS and the padding the layout found (a mask, an
    ordinary id)."""
    if t.text:
        return Documents(t.text)
    from auditor.detectors.token_measures import tokenizer_for

    assert t.input_ids  # a tokens: section declares text, input_ids or both (its validator)
    tok = tokenizer_for(engine, t)
    pad = _layout_pad(engine, t)
    skip = tuple(sorted({*tok.special_ids, *(i for i in (t.pad_id, t.bos_id, t.eos_id, pad)
                                             if i is not None)}))
    return Documents(t.input_ids, skip, tok.decode_batch)


def ngram_overlap(grams: pl.DataFrame, n: int) -> pl.DataFrame:
    """Per evaluation document sharing an n-gram: the share of its n-grams (words - n + 1)
    found in training, and the training row sharing most of them (ties: the first)."""
    if grams.height == 0:
        return pl.DataFrame(schema={"test_row": pl.Int64, "train_row": pl.Int64,
                                    "overlap": pl.Float64})
    covered = grams.group_by("row").agg(shared=pl.col("pos").n_unique(),
                                        total=pl.col("words").first() - (n - 1))
    best = (grams.group_by("row", "train_row").agg(k=pl.col("pos").n_unique())
            .sort(["row", "k", "train_row"], descending=[False, True, False])
            .unique("row", keep="first", maintain_order=True))
    return (covered.join(best, on="row")
            .select(pl.col("row").alias("test_row"), "train_row",
                    overlap=pl.col("shared") / pl.col("total"))
            .sort("test_row"))


def first_detector(frames: list[pl.DataFrame], dirty: pl.DataFrame) -> pl.DataFrame:
    """One row per contaminated document, by the first detector of :data:`KIND_ORDER` that
    matched it (test_row, train_row, kind, jaccard, overlap), with its n-gram overlap
    whichever detector matched it."""
    schema = {"test_row": pl.Int64, "train_row": pl.Int64, "kind": pl.String,
              "jaccard": pl.Float64, "overlap": pl.Float64}
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    parts = [f.select(list(schema)).cast(schema) for f in frames]  # type: ignore[arg-type]
    allm = pl.concat(parts) if parts else pl.DataFrame(schema=schema)
    allm = (allm.with_columns(rk=pl.col("kind").replace_strict(rank, return_dtype=pl.Int64))
            .sort(["test_row", "rk"]).unique("test_row", keep="first", maintain_order=True)
            .drop("rk"))
    return allm.join(dirty.select("test_row", pl.col("overlap").alias("o2")), on="test_row",
                     how="left").with_columns(
        overlap=pl.coalesce("overlap", "o2", pl.lit(0.0))).drop("o2")


@dataclass(frozen=True)
class SplitContamination:
    """One evaluation split against train: contaminated documents per detector (``count``
    in all), documents sharing any n-gram (``n_dirty``) and their overlap ratios counted in
    :data:`OVERLAP_EDGES` bins, the first ``max_listed_rows`` contaminated rows, the evidence
    examples, and every contaminated row (``drop``, for a clean subset)."""

    later: str
    n_docs: int
    by_kind: dict[str, int]
    n_dirty: int
    overlap_hist: list[int] | None
    rows: list[int]
    count: int
    examples: list[dict[str, Any]]
    drop: np.ndarray


@dataclass(frozen=True)
class ContaminationMeasures:
    """Every later split measured against the first (``train``) on the text ``column``."""

    column: str
    train: str
    splits: list[SplitContamination]
    ids: bool = False  # compared on token ids (no text column declared)


@dataclass(frozen=True, kw_only=True)
class TextMatching:
    """The document-matching parameters ``tokens.contamination`` and ``tokens.benchmarks``
    share (each check's docstring says what they mean there), validated once, and the
    :class:`Hashing` they make."""

    exact: bool = True
    near_duplicates: bool = True
    jaccard_at: float = 0.8
    shingle: int = 3
    num_perm: int = 128
    bands: int = 16
    ngram: int = 13                    # 0 turns the n-gram detector off
    ngram_ratio_at: float = 0.5

    def check_matching(self) -> None:
        """ValueError naming the first parameter out of its range."""
        check_shares(self, "jaccard_at", "ngram_ratio_at")
        check_non_negative(self, "ngram")
        for name in ("shingle", "num_perm", "bands"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)!r}")
        if self.num_perm % self.bands:
            raise ValueError(f"num_perm ({self.num_perm}) must be a multiple of bands "
                             f"({self.bands})")

    def hashing(self, column: str, seed: int, skip: tuple[int, ...]) -> Hashing:
        """What the batch functions hash of ``column`` (``skip``: ids left out)."""
        return Hashing(column, self.ngram, seed % (2**32), self.exact, self.near_duplicates,
                       self.shingle, self.num_perm, self.bands, skip)

    def detectors_on(self) -> dict[str, bool]:
        """Whether each detector runs, by the name the evidence gives it."""
        return {"exact": self.exact, "near-duplicate": self.near_duplicates,
                "n-gram overlap": bool(self.ngram)}


@dataclass(frozen=True, kw_only=True)
class Contamination(TextMatching):
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
    needs: ClassVar[Needs] = Needs(roles=("tokens",))
    warn_above: float = 0.0
    fail_above: float = 0.001
    # training documents hashed at a time where the engine cuts the batches (polars; Spark
    # hashes its Arrow batches): each batch's n-grams are semi-joined with the evaluation
    # split's before the next, ~6 KB per 200-word document (bench/tokens_bench.py data:
    # 50,000 -> 0.3 GB less RSS than 100,000, CPU +5%)
    chunk_docs: int = 50_000
    max_examples: int = 20
    max_listed_rows: int = 1_000
    clean_dir: str | None = None       # write each evaluation split minus its contaminated rows

    def __post_init__(self) -> None:
        check_shares(self, "warn_above", "fail_above")
        self.check_matching()
        if self.chunk_docs < 1:
            raise ValueError(f"chunk_docs must be >= 1; got {self.chunk_docs!r}")
        check_non_negative(self, "max_examples", "max_listed_rows")

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    # -- measure -------------------------------------------------------------------------------
    def measure(self, engine: Operations, roles: Roles) -> ContaminationMeasures:
        """Per later split, against the first (train), with two ``matches`` of the engine
        (see :class:`Hashing`): the first streams train once, its exact-text and n-gram
        hashes against the later split's; the second (near-duplicates) the MinHash band keys
        of both sides' candidates. The rest reads a few rows by number: normalised texts of
        exact hits (a hash collision cannot report a copy), signatures of candidate pairs,
        texts of the examples."""
        t = roles.tokens
        assert t is not None  # needs: tokens
        col, skip, decode = documents_of(engine, t)
        names = list(roles.splits)
        if len(names) < 2:
            raise NotApplicable("only one split: nothing to compare with the training split")
        train = names[0]
        hs = self.hashing(col, roles.seed, skip)
        rows = engine.split_rows()
        return ContaminationMeasures(col, train, [
            self._measure_split(engine, hs, train, later, rows[later], decode)
            for later in names[1:]],
            ids=col != t.text)

    def _measure_split(self, engine: Operations, hs: Hashing, train: str, later: str,
                       n_docs: int, decode: Any = None) -> SplitContamination:
        right = Expansion(later, (hs.column,), partial(eval_rows, hs=hs), EVAL_SCHEMA,
                          key=("tokens.contamination", later, hs))
        left = Expansion(train, (hs.column,), partial(train_rows, hs=hs), TRAIN_SCHEMA,
                         batch_rows=self.chunk_docs)
        found = engine.matches(left, right, ["h"], order="train_row",
                               limit=MAX_TRAIN_DOCS_PER_NGRAM, keep=("h", NOTE))
        got = found.joined
        frames = []
        dirty = pl.DataFrame(schema={"test_row": pl.Int64, "train_row": pl.Int64,
                                     "overlap": pl.Float64})
        grams = got.filter(pl.col("kind") == NGRAM)
        if self.ngram:
            dirty = ngram_overlap(grams, self.ngram)
            frames.append(dirty.filter(pl.col("overlap") >= self.ngram_ratio_at)
                          .with_columns(kind=pl.lit("n-gram overlap"),
                                        jaccard=pl.lit(None, pl.Float64)))
        if self.exact:
            frames.insert(0, self._exact(engine, hs, train, later,
                                         got.filter(pl.col("kind") == EXACT)))
        if self.near_duplicates:
            frames.append(self._near(engine, hs, train, later, grams,
                                     found.left["train_row"], found.right["row"]))
        m = first_detector(frames, dirty)
        texts_a, texts_b = self._example_texts(engine, hs, train, later, m)
        examples = self._examples(train, later, texts_a, texts_b, m, decode) if m.height else []
        return SplitContamination(
            later=later, n_docs=n_docs,
            by_kind={k: int((m["kind"] == k).sum()) for k in KIND_ORDER},
            n_dirty=dirty.height,
            overlap_hist=(np.histogram(dirty["overlap"].to_numpy(), bins=OVERLAP_EDGES)[0]
                          .tolist() if dirty.height else None),
            rows=m["test_row"].sort().head(self.max_listed_rows).to_list(), count=m.height,
            examples=examples, drop=np.unique(m["test_row"].to_numpy()).astype(np.int64))

    def _exact(self, engine: Operations, hs: Hashing, train: str, later: str,
               hits: pl.DataFrame) -> pl.DataFrame:
        """Equal normalised text: per evaluation row the first training row with its hash,
        kept when the two normalised strings are equal."""
        pairs = hits.group_by("row").agg(pl.col("train_row").min()).rename({"row": "test_row"})
        norm_a = read_rows(engine, train, hs.column, pairs["train_row"], NORMALISED, hs.skip)
        norm_b = read_rows(engine, later, hs.column, pairs["test_row"], NORMALISED, hs.skip)
        same = (pairs.join(norm_b.rename({"row": "test_row", "value": "b"}), on="test_row")
                .join(norm_a.rename({"row": "train_row", "value": "a"}), on="train_row")
                .filter(pl.col("a") == pl.col("b")))
        return same.select("test_row", "train_row", kind=pl.lit("exact"), jaccard=pl.lit(1.0),
                           overlap=pl.lit(None, pl.Float64)).sort("test_row")

    def _near(self, engine: Operations, hs: Hashing, train: str, later: str,
              grams: pl.DataFrame, short_a: pl.Series, short_b: pl.Series) -> pl.DataFrame:
        """MinHash/LSH near-duplicates among the candidates (as
        :func:`auditor.stats.minhash.near_duplicate_pairs`): the band keys of both sides'
        candidates (:func:`band_rows`: documents that share an n-gram or have fewer than 3n
        words; all without the n-gram detector), one representative training row (the first)
        per key joined with the evaluation keys; each pair's Jaccard estimated from the
        signatures; the best training row per document kept at >= ``jaccard_at``."""
        cand_a = cand_b = None
        if self.ngram:
            cand_a = np.union1d(grams["train_row"].to_numpy(), short_a.to_numpy()
                                ).astype(np.int64)
            cand_b = np.union1d(grams["row"].to_numpy(), short_b.to_numpy()).astype(np.int64)
        left = Expansion(train, (hs.column,),
                         partial(band_rows, hs=hs, rows=cand_a, name="train_row"),
                         TRAIN_SCHEMA)
        right = Expansion(later, (hs.column,),
                          partial(band_rows, hs=hs, rows=cand_b, name="row"), BAND_SCHEMA)
        # band keys of different bands are hashed with different seeds: the key alone joins
        got = engine.matches(left, right, ["h"], order="train_row", limit=1).joined
        pairs = got.select("train_row", pl.col("row").alias("test_row")).unique()
        schema = {"test_row": pl.Int64, "train_row": pl.Int64, "kind": pl.String,
                  "jaccard": pl.Float64, "overlap": pl.Float64}
        if pairs.height == 0:
            return pl.DataFrame(schema=schema)
        sig_a = signature_table(engine, hs, train, pairs["train_row"])
        sig_b = signature_table(engine, hs, later, pairs["test_row"])
        ia = np.searchsorted(sig_a[0], pairs["train_row"].to_numpy())
        ib = np.searchsorted(sig_b[0], pairs["test_row"].to_numpy())
        jac = (sig_a[1][ia] == sig_b[1][ib]).mean(1)
        return (pairs.with_columns(jaccard=pl.Series(jac))
                .filter(pl.col("jaccard") >= self.jaccard_at)
                .sort(["test_row", "jaccard", "train_row"], descending=[False, True, False])
                .unique("test_row", keep="first", maintain_order=True)
                .select("test_row", "train_row", kind=pl.lit("near-duplicate"),
                        jaccard="jaccard", overlap=pl.lit(None, pl.Float64)))

    def _example_texts(self, engine: Operations, hs: Hashing, train: str, later: str,
                       m: pl.DataFrame) -> tuple[dict[int, Any], dict[int, Any]]:
        """The texts of the rows :meth:`_examples` shows (each detector's first
        ``max_examples``)."""
        if not m.height:
            return {}, {}
        shown = pl.concat([m.filter(pl.col("kind") == k).head(self.max_examples)
                           for k in KIND_ORDER])
        a = read_rows(engine, train, hs.column, shown["train_row"], TEXT, hs.skip)
        b = read_rows(engine, later, hs.column, shown["test_row"], TEXT, hs.skip)
        return dict(a.iter_rows()), dict(b.iter_rows())

    # -- the finding ---------------------------------------------------------------------------
    def judge(self, m: ContaminationMeasures) -> list[Finding]:
        return [self.with_clean_subset(
            self.split_finding(m.column, m.train, s.later, s.n_docs, s.by_kind, s.n_dirty,
                               s.overlap_hist, s.rows, s.count, s.examples, ids=m.ids),
            s.later, s.drop) for s in m.splits]

    def split_finding(self, subject: str, train_name: str, later: str, n_docs: int,
              by_kind: dict[str, int], n_dirty: int, overlap_hist: list[int] | None,
              rows: list[int], count: int, examples: list[dict[str, Any]], *,
              ids: bool = False) -> Finding:
        """The finding of one evaluation split from aggregates (both engines): contaminated
        documents per detector (``by_kind``, ``count`` in all), documents sharing any n-gram
        (``n_dirty``) and their overlap ratios counted in :data:`OVERLAP_EDGES` bins, the first
        ``max_listed_rows`` contaminated rows in order and the evidence examples."""
        value = share(count, n_docs)
        sev = grade(value, warn=self.warn_above, fail=self.fail_above)
        of_ids = " of token ids" if ids else ""
        labels = {"exact": "exact copies (the same token ids)" if ids else
                           "exact copies (normalised text)",
                  "near-duplicate": f"near-duplicates (Jaccard >= {self.jaccard_at:g})",
                  "n-gram overlap": f"with >= {self.ngram_ratio_at:.0%} of their "
                                    f"{self.ngram}-grams{of_ids} in {train_name}"}
        enabled = self.detectors_on()
        parts = ", ".join(f"{fmt_count(by_kind[k])} {labels[k]}" for k in KIND_ORDER
                          if enabled[k])
        message = (f"{fmt_count(count)} of {fmt_count(n_docs)} {later} documents "
                   f"({fmt_share(value)}) also occur in {train_name}: {parts}")
        table = [{"detector": labels[k], "documents": by_kind[k]} for k in KIND_ORDER
                 if enabled[k]]
        if self.ngram:
            table.append({"detector": f"any {self.ngram}-gram{of_ids} shared (GPT-3 'dirty')",
                          "documents": n_dirty})
        evidence: dict[str, Any] = {"by_detector": table}
        if overlap_hist is not None:
            evidence["chart"] = {"type": "hist", "edges": OVERLAP_EDGES.round(2).tolist(),
                                 "series": {later: list(overlap_hist)},
                                 "xlabel": f"share of the document's {self.ngram}-grams"
                                           f"{of_ids} found in {train_name}",
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

    def with_clean_subset(self, finding: Finding, split: str, rows: Any) -> Finding:
        """With ``clean_dir``: ``finding`` asking the run to write ``split`` without the
        contaminated ``rows`` once every check has run (:mod:`auditor.clean_subsets`)."""
        if self.clean_dir is None:
            return finding
        drop = np.unique(np.asarray(rows, dtype=np.int64))
        finding.clean = CleanSubset(split, drop, self.clean_dir)
        return finding

    def _examples(self, train_name: str, later: str, train: Any, test: Any,
                  m: pl.DataFrame, decode: Any = None) -> list[dict[str, Any]]:
        """Up to max_examples pairs, taking the detectors in turn, with the longest shared span.
        ``train``/``test``: the texts by row number (a Series, or a dict of the rows of ``m``
        holding each detector's first ``max_examples`` rows, on Spark). ``decode``: documents
        compared as token ids ("464 2068 ..."): the tokenizer's ``decode_batch``, which shows
        the shared ids as text."""
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
            unit = "words"
            if decode is not None:  # the shared ids as the text they encode
                span = decode([[int(i) for i in span.split()]])[0]
                unit = "tokens"
            out.append({f"{later}_row": r["test_row"], f"{train_name}_row": r["train_row"],
                        "detector": r["kind"],
                        f"jaccard ({self.shingle}-{unit[:-1]} shingles)": round(
                            jaccard(a, b, k=self.shingle), 3),
                        f"{self.ngram}-gram overlap": round(r["overlap"] or 0.0, 3),
                        "shared span": f"({n_words} {unit}) {short(span, 160)}"})
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

