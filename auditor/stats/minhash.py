"""MinHash signatures and LSH candidate pairs for near-duplicate text, vectorised with numpy.

Shared by ``leakage.duplicates`` (free-text columns) and ``tokens.contamination``.

- Shingles: word k-grams of the normalised text (NFKC, lowercased, words = ``\\w+`` runs, and
  single characters in scripts written without spaces, so Chinese, Japanese or Thai text is
  shingled by character k-grams: :data:`auditor.stats.textnorm.WORD`); a document shorter than k
  words is one shingle. Words are hashed by polars, k-grams combined
  from the word hashes with prefix sums (:mod:`auditor.stats.textnorm`).
- Signature: for each of ``num_perm`` hash functions h_i(x) = (a_i * x + b_i mod 2^64) >> 32
  (multiply-shift, a_i odd), the minimum over the document's shingles. The share of equal
  signature entries of two documents estimates their Jaccard similarity |A ∩ B| / |A ∪ B|.
- LSH: signatures cut into ``bands`` bands of ``num_perm / bands`` rows; two documents are a
  candidate pair when any band is identical. With 128 permutations and 16 bands of 8 rows the
  S-curve midpoint (1/16)^(1/8) ≈ 0.71 lies below the default 0.8 threshold, so pairs at 0.8
  are found with probability 1 - (1 - 0.8^8)^16 ≈ 0.96 and at 0.9 with ≈ 1.0. Candidates are
  then kept only when their estimated Jaccard reaches the threshold.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from auditor.stats.textnorm import WORD, fold, rolling_ngram_hashes, word_hashes

EMPTY = np.uint64(np.iinfo(np.uint64).max)


@dataclass(frozen=True)
class Signatures:
    """MinHash signatures of a batch of documents: ``values[doc, perm]``; ``empty[doc]`` marks
    documents without any word (never matched)."""

    values: np.ndarray
    empty: np.ndarray


def shingle_hashes(texts: pl.Series, k: int = 3, seed: int = 0) -> pl.DataFrame:
    """Columns ``doc`` (row index into ``texts``) and ``h`` (u64 hash of each word k-gram),
    sorted by doc. Null and word-less documents produce no rows; a document of 1 to k-1 words
    is one shingle (the hash of its words joined by spaces)."""
    flat, lens = word_hashes(texts, seed)
    doc, _, h = rolling_ngram_hashes(flat, lens, k, seed, with_pos=False)
    short = np.flatnonzero((lens > 0) & (lens < k))
    if len(short):
        words = fold(texts.gather(short)).str.extract_all(WORD).list.join(" ")
        doc = np.concatenate([doc, short.astype(np.int64)])
        h = np.concatenate([h, words.hash(seed).to_numpy()])
        order = np.argsort(doc, kind="stable")
        doc, h = doc[order], h[order]
    return pl.DataFrame({"doc": doc, "h": h}, schema={"doc": pl.UInt32, "h": pl.UInt64})


def signatures(texts: pl.Series, *, num_perm: int = 128, k: int = 3, seed: int = 0,
               chunk: int = 200_000) -> Signatures:
    """MinHash signatures of every document in ``texts`` (processed in chunks of documents)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 2**63, num_perm, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 2**63, num_perm, dtype=np.uint64)
    n = texts.len()
    values = np.full((n, num_perm), EMPTY, dtype=np.uint64)
    for start in range(0, n, chunk):
        sh = shingle_hashes(texts.slice(start, chunk), k=k, seed=seed)
        if sh.height == 0:
            continue
        doc = sh["doc"].to_numpy()
        h = sh["h"].to_numpy()
        docs, starts = np.unique(doc, return_index=True)
        block = np.empty((len(docs), num_perm), dtype=np.uint64)
        with np.errstate(over="ignore"):
            for i in range(num_perm):  # a loop over hash functions, vectorised over shingles
                block[:, i] = np.minimum.reduceat((a[i] * h + b[i]) >> np.uint64(32), starts)
        values[start + docs] = block
    return Signatures(values=values, empty=(values[:, 0] == EMPTY))


def band_keys(sig: Signatures, bands: int, seed: int) -> pl.DataFrame:
    n, num_perm = sig.values.shape
    rows = num_perm // bands
    frames = []
    idx = np.flatnonzero(~sig.empty)
    for band in range(bands):
        block = sig.values[idx, band * rows:(band + 1) * rows]
        key = pl.DataFrame(block).hash_rows(seed=seed + band)
        frames.append(pl.DataFrame({"band": np.full(len(idx), band, dtype=np.int32),
                                    "key": key, "doc": idx.astype(np.int64)}))
    return pl.concat(frames) if frames else pl.DataFrame(
        {"band": [], "key": [], "doc": []},
        schema={"band": pl.Int32, "key": pl.UInt64, "doc": pl.Int64})


def near_duplicate_pairs(sig_a: Signatures, sig_b: Signatures, *, threshold: float = 0.8,
                         bands: int = 16, seed: int = 0) -> pl.DataFrame:
    """Pairs (``doc_a``, ``doc_b``, ``jaccard``: the signature estimate) with estimated Jaccard
    >= ``threshold``, for the best-matching ``doc_a`` of each ``doc_b``, sorted by ``doc_b``."""
    num_perm = sig_a.values.shape[1]
    if num_perm % bands:
        raise ValueError(f"num_perm ({num_perm}) must be a multiple of bands ({bands})")
    ka = band_keys(sig_a, bands, seed).rename({"doc": "doc_a"})
    kb = band_keys(sig_b, bands, seed).rename({"doc": "doc_b"})
    # one representative doc_a per (band, key) keeps the join linear in the number of documents
    ka = ka.group_by("band", "key").agg(pl.col("doc_a").min())
    cand = kb.join(ka, on=["band", "key"], how="inner").select("doc_a", "doc_b").unique()
    schema = {"doc_a": pl.Int64, "doc_b": pl.Int64, "jaccard": pl.Float64}
    if cand.height == 0:
        return pl.DataFrame({"doc_a": [], "doc_b": [], "jaccard": []}, schema=schema)
    ia, ib = cand["doc_a"].to_numpy(), cand["doc_b"].to_numpy()
    jac = np.empty(len(ia))
    step = 100_000
    for s in range(0, len(ia), step):  # bounded memory for the equality matrix
        jac[s:s + step] = (sig_a.values[ia[s:s + step]] == sig_b.values[ib[s:s + step]]).mean(1)
    return (pl.DataFrame({"doc_a": ia, "doc_b": ib, "jaccard": jac})
            .filter(pl.col("jaccard") >= threshold)
            .sort(["doc_b", "jaccard", "doc_a"], descending=[False, True, False])
            .unique("doc_b", keep="first", maintain_order=True))


def jaccard(a: str, b: str, k: int = 3) -> float:
    """Exact Jaccard similarity of two texts' word k-gram sets (reference for tests/evidence)."""
    sh = shingle_hashes(pl.Series([a, b]), k=k)
    sa = set(sh.filter(pl.col("doc") == 0)["h"].to_list())
    sb = set(sh.filter(pl.col("doc") == 1)["h"].to_list())
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)
