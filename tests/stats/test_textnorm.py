"""auditor.stats.textnorm against plain-Python references (unicodedata, re, tuples of words)."""
from __future__ import annotations

import re
import unicodedata

import numpy as np
import polars as pl

from auditor.stats.textnorm import collapse_whitespace, fold, rolling_ngram_hashes, word_hashes

TEXTS = ["The ﬁrst  Ⅻ cat", None, "", "ascii only, Words: here", "Ｆｕｌｌ ｗｉｄｔｈ  ÉCOLE",
         "tab\tand\nnewline\u00a0nbsp  end ", "a b a b a b a b"]


def test_fold_equals_nfkc_then_lowercase_row_by_row():
    got = fold(pl.Series(TEXTS)).to_list()
    want = [None if t is None else unicodedata.normalize("NFKC", t).lower() for t in TEXTS]
    assert got == want


def test_collapse_whitespace_equals_the_plain_regex():
    s = fold(pl.Series(TEXTS))
    got = pl.DataFrame({"t": s}).select(collapse_whitespace(pl.col("t")))["t"].to_list()
    want = [None if t is None else re.sub(r"\s+", " ", t).strip() for t in s.to_list()]
    assert got == want


def test_word_hashes_count_the_words_and_hash_equal_words_alike():
    flat, lens = word_hashes(pl.Series(TEXTS), seed=3)
    words = [re.findall(r"\w+", unicodedata.normalize("NFKC", t).lower()) if t else []
             for t in TEXTS]
    assert lens.tolist() == [len(w) for w in words]
    flat_words = [w for ws in words for w in ws]
    assert len(flat) == len(flat_words)
    by_word: dict[str, set[int]] = {}
    for w, h in zip(flat_words, flat.tolist()):
        by_word.setdefault(w, set()).add(h)
    assert all(len(v) == 1 for v in by_word.values())
    assert len({next(iter(v)) for v in by_word.values()}) == len(by_word)


def test_rolling_ngram_hashes_give_one_hash_per_window_equal_iff_the_words_are_equal():
    rng = np.random.default_rng(0)
    docs = [" ".join(rng.choice(["a", "b", "c", "d"], size=rng.integers(0, 12)))
            for _ in range(300)]
    n = 3
    flat, lens = word_hashes(pl.Series(docs), seed=1)
    doc, pos, h = rolling_ngram_hashes(flat, lens, n, seed=1)
    want = [(d, p, tuple(t.split()[p:p + n])) for d, t in enumerate(docs)
            for p in range(len(t.split()) - n + 1)]
    assert list(zip(doc.tolist(), pos.tolist())) == [(d, p) for d, p, _ in want]
    by_gram: dict[tuple[str, ...], set[int]] = {}
    for (_, _, g), x in zip(want, h.tolist()):
        by_gram.setdefault(g, set()).add(x)
    assert all(len(v) == 1 for v in by_gram.values())           # equal windows, equal hash
    assert len({next(iter(v)) for v in by_gram.values()}) == len(by_gram)  # 64 distinct grams


def test_rolling_ngram_hashes_of_too_few_words_are_empty():
    flat, lens = word_hashes(pl.Series(["a b", "c"]), seed=0)
    doc, pos, h = rolling_ngram_hashes(flat, lens, 5, seed=0)
    assert len(doc) == len(pos) == len(h) == 0


def test_unspaced_scripts_are_split_into_characters_and_other_scripts_into_w_runs():
    from auditor.stats.textnorm import WORD, WORD_PY

    texts = ["这家餐厅的服务非常周到，价格合理。", "東京タワーに行きました、とても綺麗でした",
             "ภาษาไทยไม่มีช่องว่าง ok", "iPhone15的电池 café naïve", "한국어는 띄어쓰기를 합니다",
             "x_1 ・ ー々"]
    got = pl.Series(texts).str.extract_all(WORD).to_list()
    assert got == [re.findall(WORD_PY, t) for t in texts]
    assert got[0][:4] == ["这", "家", "餐", "厅"] and len(got[0]) == 15
    assert got[3] == ["iPhone15", "的", "电", "池", "café", "naïve"]
    assert got[4] == ["한국어는", "띄어쓰기를", "합니다"]  # Korean is written with spaces
    flat, lens = word_hashes(pl.Series(texts), seed=0)
    assert lens.tolist() == [len(re.findall(WORD_PY, unicodedata.normalize("NFKC", t).lower()))
                             for t in texts]
