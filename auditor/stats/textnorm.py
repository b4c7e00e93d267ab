"""Text normalisation and word n-gram hashing shared by the text detectors, vectorised.

- :func:`fold`: NFKC then lowercase. NFKC is the expensive step (~1 s per 100 MB of text) and
  leaves ASCII unchanged, so it runs only on the rows holding a non-ASCII character.
- :func:`collapse_whitespace`: whitespace runs to one space, ends trimmed.
- :func:`word_hashes`: 64-bit polars hashes of the words of folded text, flat, with each
  document's word count. A word is a ``\\w+`` run, except in scripts written without spaces
  (Chinese, Japanese kana, Thai, Lao, Khmer, Myanmar: :data:`UNSPACED`), where every character
  is a word of its own: a Chinese sentence is one ``\\w+`` run, so word k-grams of it would be
  the whole sentence and near-duplicate Jaccard would degrade to exact matching, while its
  character k-grams are the usual CJK shingles.
- :func:`rolling_ngram_hashes`: one 64-bit hash per window of n consecutive words of each
  document, computed over the flat word hashes of all documents at once with prefix sums.
"""
from __future__ import annotations

import numpy as np
import polars as pl

# Code-point ranges of scripts written without spaces between words: CJK ideographs (with
# extension A, compatibility ideographs, extensions B-H and the iteration/numeral marks),
# Hiragana, Katakana and its phonetic extensions (without the punctuation ゠ and ・), Thai, Lao,
# Khmer and Myanmar letters, vowel signs and digits (without their punctuation). Every code
# point in these ranges is a word of its own (a combining vowel sign too: Python's ``\\w``
# excludes marks that the Rust regex's includes, explicit ranges make both engines agree).
UNSPACED = ("\\u3005-\\u3007\\u3021-\\u3029\\u3041-\\u309F\\u30A1-\\u30FA\\u30FC-\\u30FF"
            "\\u31F0-\\u31FF\\u3400-\\u4DBF\\u4E00-\\u9FFF\\uF900-\\uFAFF"
            "\\U00020000-\\U0003134F\\u0E01-\\u0E3A\\u0E40-\\u0E4E\\u0E50-\\u0E59"
            "\\u0E81-\\u0EDF\\u1780-\\u17D3\\u17D7\\u17DC\\u17DD\\u17E0-\\u17E9"
            "\\u1000-\\u1049\\u1050-\\u109F")
WORD = rf"[{UNSPACED}]|[\w--[{UNSPACED}]]+"          # polars (Rust regex: class difference)
WORD_PY = rf"[{UNSPACED}]|(?:(?![{UNSPACED}])\w)+"   # the same words for Python's re
_NON_ASCII = r"[^\x00-\x7F]"


def normalised(value: pl.Expr) -> pl.Expr:
    """The key two variants share: lowercase, punctuation and symbols as spaces, whitespace
    collapsed and trimmed; except the signs ``+`` and ``-`` that are not a hyphen between two
    word characters ('A+' / 'A-' / 'A' are three blood groups, '-1' is not '1', 'New-York'
    is 'new york')."""
    return (value.str.to_lowercase().str.replace_all(r"(\w)-(\w)", "$1 $2")
            .str.replace_all(r"(\w)-(\w)", "$1 $2")  # again for overlapping "a-b-c"
            .str.replace_all(r"[[\p{P}\p{S}]--[+\-]]", " ")
            .str.replace_all(r"\s+", " ").str.strip_chars())


def fold(texts: pl.Series) -> pl.Series:
    """NFKC-normalised, lowercased ``texts`` (null stays null)."""
    s = texts.cast(pl.String)
    mask = s.str.contains(_NON_ASCII).fill_null(False)
    if mask.any():
        idx = mask.arg_true()
        s = s.clone().scatter(idx, s.gather(idx).str.normalize("NFKC"))
    return s.str.to_lowercase()


def collapse_whitespace(col: pl.Expr) -> pl.Expr:
    """Every whitespace run replaced by one space, ends trimmed. The pattern only matches runs of
    two or more and single non-space whitespace, so ordinary single spaces cost nothing."""
    return col.str.replace_all(r"\s\s+|[^\S ]", " ").str.strip_chars()


def word_hashes(texts: pl.Series, seed: int, *, folded: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
    """Flat u64 hashes of the words (:data:`WORD`: ``\\w+`` runs, single characters of
    unspaced scripts) of :func:`fold` ed text of every document in order, and each document's
    word count (0 for null). ``folded``: the texts already are."""
    words = pl.DataFrame({"t": texts if folded else fold(texts)}).lazy().select(
        w=pl.col("t").str.extract_all(WORD)).select(
        n=pl.col("w").list.len().fill_null(0).cast(pl.Int64),
        h=pl.col("w").list.eval(pl.element().hash(seed))).collect()
    lens = words["n"].to_numpy()
    flat = words["h"].explode(empty_as_null=False, keep_nulls=False).to_numpy()
    return flat.astype(np.uint64, copy=False), lens


def rolling_ngram_hashes(flat: np.ndarray, lens: np.ndarray, n: int, seed: int, *,
                         with_pos: bool = True
                         ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Hashes of every window of ``n`` consecutive words inside each document.

    With word hashes w_t (flat over all documents) and a random odd base B (mod 2^64), the
    prefix sums P_k = sum_{t<k} w_t B^t give the window at t as
    h_t = (P_{t+n} - P_t) * B^-t = sum_j w_{t+j} B^j, so all windows cost a few array passes
    whatever n is; h is then mixed (xor-shift, odd multiply) so that its high bits depend on all
    words. Windows that cross a document boundary are dropped. Returns (doc, pos, h): the
    document index, the window's first word position in it (None unless ``with_pos``), and
    the hash; documents with fewer than n words give no window."""
    total = len(flat)
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint64))
    if total < n or n < 1:
        return empty
    rng = np.random.default_rng([seed, n])
    base, mix = (rng.integers(1, 2**63, 2, dtype=np.uint64) | np.uint64(1))
    inv = _inverse_mod_2_64(int(base))
    with np.errstate(over="ignore"):
        powers = np.empty(total, dtype=np.uint64)
        powers[0] = 1
        powers[1:] = base
        np.cumprod(powers, out=powers)                       # B^t
        prefix = np.zeros(total + 1, dtype=np.uint64)
        np.multiply(flat, powers, out=prefix[1:])
        np.cumsum(prefix[1:], out=prefix[1:])                # P_k
        m = total - n + 1
        powers[0] = 1
        powers[1:m] = np.uint64(inv)
        np.cumprod(powers[:m], out=powers[:m])               # B^-t
        h = prefix[n:n + m] - prefix[:m]
        del prefix  # temporaries freed as soon as possible: the peak is a few word arrays
        h *= powers[:m]
        del powers
        h ^= h >> np.uint64(31)
        h *= mix
        h ^= h >> np.uint64(29)
    # the windows inside a document: document d, at flat word s_d, has max(len_d - n + 1, 0)
    # of them, at flat positions s_d, s_d + 1, ...; built from per-document runs directly
    count = np.maximum(np.asarray(lens, dtype=np.int64) - n + 1, 0)
    starts = np.cumsum(lens, dtype=np.int64) - lens
    idx = np.arange(int(count.sum()), dtype=np.int64)
    idx += np.repeat(starts - (np.cumsum(count) - count), count)
    doc = np.repeat(np.arange(len(lens), dtype=np.int64), count)
    pos = idx - np.repeat(starts, count) if with_pos else None
    return doc, pos, h[idx]


def _inverse_mod_2_64(b: int) -> int:
    """The multiplicative inverse of odd ``b`` modulo 2^64."""
    return pow(b, -1, 1 << 64)
