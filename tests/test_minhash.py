"""MinHash/LSH: estimates track exact Jaccard; edited copies are found, unrelated texts not."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from auditor.minhash import jaccard, near_duplicate_pairs, shingle_hashes, signatures

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
         "rho sigma tau upsilon phi chi psi omega").split()


def _doc(rng, n=60):
    return " ".join(rng.choice(WORDS, n))


def test_shingles_are_word_trigrams_and_short_docs_are_one_shingle():
    sh = shingle_hashes(pl.Series(["a b c d", "Hello,  WORLD", None, ""]), k=3)
    assert sh.group_by("doc").len().sort("doc").rows() == [(0, 2), (1, 1)]
    assert jaccard("a b c d", "A b, c d") == 1.0
    assert jaccard("a b c d", "a b c e") == pytest.approx(1 / 3)


def test_signature_estimate_tracks_exact_jaccard():
    rng = np.random.default_rng(0)
    base = [_doc(rng) for _ in range(30)]
    edited = [" ".join(d.split()[: 60 - 2 * i]) + " " + _doc(rng, 2 * i) for i, d in
              enumerate(base)]
    sa = signatures(pl.Series(base), num_perm=256)
    sb = signatures(pl.Series(edited), num_perm=256)
    est = (sa.values == sb.values).mean(1)
    exact = np.array([jaccard(a, b) for a, b in zip(base, edited)])
    assert np.abs(est - exact).max() < 0.12
    assert np.corrcoef(est, exact)[0, 1] > 0.97


def test_lsh_finds_lightly_edited_copies_only():
    rng = np.random.default_rng(1)
    train = [_doc(rng, 80) for _ in range(500)]
    test = [_doc(rng, 80) for _ in range(200)]
    for i in range(10):  # 10 copies with one word replaced
        words = train[i * 7].split()
        words[40] = "CHANGED"
        test[i * 3] = " ".join(words)
    pairs = near_duplicate_pairs(signatures(pl.Series(train)), signatures(pl.Series(test)),
                                 threshold=0.8)
    assert pairs["doc_b"].to_list() == [i * 3 for i in range(10)]
    assert pairs["doc_a"].to_list() == [i * 7 for i in range(10)]
    assert (pairs["jaccard"] >= 0.8).all()


def test_empty_documents_never_match():
    sa = signatures(pl.Series(["", None, "some words here"]))
    sb = signatures(pl.Series(["", None]))
    assert sa.empty.tolist() == [True, True, False]
    assert near_duplicate_pairs(sa, sb).height == 0
