"""Normalised row keys, near-duplicate matching (with MinHash on free text) and label conflicts.

Helpers of ``leakage.duplicates`` (:mod:`auditor.detectors.duplicates`). Every match found from a
hash is verified by comparing the normalised values themselves (and, for free text, the exact
word-shingle Jaccard), so a hash collision can never create a finding.

Normalisation (:func:`normalised_column`). Rows are keyed a batch at a time by
:func:`keys_of_frame` (seeded ``hash_rows`` of the normalised columns), the same on any engine;
the polars-only matching of free text normalises its candidate rows again to verify them,
numeric columns compared many at a time as numpy blocks of codes:
- floating-point (and decimal) columns are rounded to ``digits`` significant digits
  (:func:`round_significant`); integers, booleans, dates and durations are exact values and are
  kept as they are (rounding a 9-digit integer code would merge distinct codes);
- strings are NFKC-normalised, case-folded (Unicode full case folding, as ``str.casefold``),
  runs of whitespace collapsed to one space and the ends stripped.
"""
from __future__ import annotations

import sys
from functools import cache
from typing import Mapping, Sequence, cast

import numpy as np
import polars as pl

from auditor.loading.data import AuditData, Kind
from auditor.stats.textnorm import collapse_whitespace, fold
from auditor.stats.minhash import Signatures, near_duplicate_pairs, shingle_hashes, signatures
from auditor.stats.numerics import map_columns

SHINGLE_WORDS = 3      # word k-grams for free text
NUM_PERM = 128         # MinHash permutations per text column
LSH_RECALL = 0.95      # LSH bands chosen so a pair exactly at the threshold is found this often
CANDIDATE_SLACK = 0.1  # LSH estimate may be this far below the threshold; exact Jaccard decides
_U64 = np.uint64


# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------

@cache
def _casefold_table() -> dict[str, str]:
    """lowercased char -> its full case folding, where the two differ (about 180 entries).

    Applied after ``to_lowercase``, it turns lowercasing into Python's ``str.casefold`` (ß -> ss,
    final sigma -> σ, Cherokee small letters -> capitals, ...). Built once per process.
    """
    table: dict[str, str] = {}
    for cp in range(sys.maxunicode + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        folded, lowered = c.casefold(), c.lower()
        if folded != lowered:
            table[lowered] = folded
    return table


def normalise_strings(s: pl.Series) -> pl.Series:
    """NFKC, case-fold, collapse whitespace runs to one space, strip the ends (null stays null).

    Columns with few distinct values are normalised once per distinct value."""
    s = s.cast(pl.String)
    if 4 * s.approx_n_unique() < s.len():  # the sketch decides only which way: both agree
        uniq = s.drop_nulls().unique()
        return s.replace_strict(uniq, _normalise_strings(uniq), default=None,
                                return_dtype=pl.String)
    return _normalise_strings(s)


def _normalise_strings(s: pl.Series) -> pl.Series:
    ascii_only = (s.str.len_bytes() == s.str.len_chars()).all()  # a count, not a regex scan
    if ascii_only:
        out = s.str.to_lowercase()
    else:
        out = fold(s)  # NFKC (on non-ASCII rows only) and lowercase
        out = out.str.replace_many(_casefold_table())
    # whitespace runs collapsed only where a row may hold one (in ASCII: a double space or a
    # tab-like character; two scans for bytes are a fifth of the cost of the regex replacement)
    if not ascii_only or out.str.contains("  ", literal=True).any() \
            or out.str.contains(_ASCII_SPACES).any():
        out = pl.DataFrame({"s": out}).select(collapse_whitespace(pl.col("s")))["s"]
    else:
        out = out.str.strip_chars()
    return out.alias(s.name)


_ASCII_SPACES = r"[\t\n\x0b\x0c\r]"  # ASCII whitespace but the space (Unicode White_Space)


_POW10 = np.array([10.0 ** i for i in range(23)])  # exact doubles 1 .. 1e22


def round_significant(x: np.ndarray, digits: int) -> np.ndarray:
    """``x`` rounded to ``digits`` significant digits (half to even on the scaled value).

    For finite non-zero v: e = floor(log10|v|), k = digits - 1 - e, m = round(v * 10^k); if
    |m| reaches 10^digits (9.9999996 -> 10.0000) then m /= 10, k -= 1, so each rounded decimal
    has one (m, k); the result m * 10^-k is a function of (m, k) alone, hence values that round
    to the same decimal get bit-identical results. It equals Python's ``float(f"{v:.{d-1}e}")``
    whenever |k| <= 22 (10^k exact) and v * 10^k does not land on a rounding tie by its own
    rounding error (rare for digits <= 12). 0, -0.0, NaN and ±inf are returned unchanged.
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):  # in place where possible: at 10M rows a temporary is 80 MB
        ok = np.isfinite(x)
        ok &= x != 0
        e = np.abs(x)
        np.log10(e, out=e)
        np.floor(e, out=e)
        np.subtract(digits - 1, e, out=e)
        e[~ok] = 0
        k = e.astype(np.int64)
        del e
        m = _scale(x, k)
        np.round(m, out=m)
        lim = 10.0 ** digits
        big = np.flatnonzero((m >= lim) | (m <= -lim))
        if big.size:
            m[big] = np.round(m[big] / 10.0)
            k[big] -= 1
        np.negative(k, out=k)
        out = _scale(m, k)
        np.copyto(out, x, where=~ok)
        return out


def _scale(v: np.ndarray, k: np.ndarray) -> np.ndarray:
    """v * 10^k; exact powers (|k| <= 22) give correctly rounded results, larger |k| use two
    steps so that 10^k stays finite (results then within a few ulps, still deterministic)."""
    kk = np.abs(k)
    far = np.flatnonzero(kk > 22)
    np.minimum(kk, 22, out=kk)
    p = _POW10[kk]
    del kk
    out = np.multiply(v, p)
    np.divide(v, p, out=out, where=k < 0)
    if far.size:
        kb = k[far]
        h = kb // 2
        out[far] = v[far] * np.power(10.0, h) * np.power(10.0, kb - h)
    return out


def round_significant_frame(df: pl.DataFrame, cols: list[str], digits: int) -> pl.DataFrame:
    """``cols`` of ``df`` as Float64 rounded by :func:`round_significant` (nulls kept)."""
    def one(c: str) -> pl.Series:
        s = df[c].cast(pl.Float64)
        r = pl.Series(c, round_significant(s.to_numpy(), digits))
        return r if not s.has_nulls() else \
            pl.select(pl.when(s.is_null()).then(None).otherwise(r)).to_series().alias(c)

    return pl.DataFrame(map_columns(one, cols))  # numpy releases the GIL


def _is_string(data: AuditData, dtype: pl.DataType, col: str) -> bool:
    return data.kinds.get(col) in (Kind.CATEGORICAL, Kind.TEXT) or dtype == pl.String


def _is_float(dtype: pl.DataType) -> bool:
    return dtype.is_float() or dtype.is_decimal()


def normalised_column(data: AuditData, split: str, col: str, digits: int | None,
                      rows: pl.Series | np.ndarray | None = None) -> pl.Series:
    """Column ``col`` of ``split`` (only ``rows`` of it when given) normalised for near-duplicate
    comparison: strings normalised, floats rounded to ``digits`` significant digits
    (``digits=None`` keeps them exact), anything else as it is. Element-wise, so normalising a
    gathered subset gives the same values as gathering from the normalised column."""
    s = data.splits[split][col]
    if rows is not None:
        s = s.gather(pl.Series(rows))
    return _normalise(data, s, col, digits)


KEY_CELLS = 1 << 20  # values (rows x columns) of numeric columns normalised at a time


def numeric_kind(dtype: pl.DataType) -> str | None:
    """``"float"`` or ``"int"`` (integers up to 64 bits signed, booleans, dates and times) for
    columns normalised and compared as numpy blocks of codes (:func:`value_codes`); None for
    the rest (strings, UInt64, nested, null), compared one column at a time."""
    if dtype in (pl.Float32, pl.Float64):
        return "float"
    if dtype == pl.Boolean or dtype.is_temporal() or (
            dtype.is_integer() and dtype not in (pl.UInt64, pl.Int128, pl.UInt128)):
        return "int"
    return None


def value_codes(frame: pl.DataFrame, kind: str, digits: int | None
                ) -> tuple[np.ndarray, np.ndarray]:
    """(codes, nulls): u64 codes and the null mask (rows x columns) of ``frame``'s columns, all
    of :func:`numeric_kind` ``kind``. Two values are equal as ``eq_missing`` compares them
    (null equals null, NaN equals NaN, -0.0 equals 0.0), after floats are rounded to
    ``digits`` significant digits (None: exact), exactly when their codes and null flags are:
    a float's code is the bits of its Float64 value with -0.0 made 0.0 and every NaN one NaN,
    an integer's its Int64 value (a date or time: its physical integer); a null's code is 0."""
    has_nulls = any(s.null_count() for s in frame.get_columns())
    nulls = (frame.select(pl.all().is_null()).to_numpy() if has_nulls
             else np.zeros(frame.shape, dtype=bool))
    if kind == "float":
        x = frame.select(pl.all().cast(pl.Float64)).to_numpy()  # nulls read as NaN, masked
        if digits is not None:
            x = round_significant(x.ravel(), digits).reshape(x.shape)
        x = x + 0.0  # -0.0 + 0.0 is 0.0
        x[np.isnan(x)] = np.nan
        codes = x.view(np.uint64)
    else:
        codes = frame.select(pl.all().to_physical().cast(pl.Int64).fill_null(0)
                             ).to_numpy().view(np.uint64)
    return (np.where(nulls, _U64(0), codes) if has_nulls else codes), nulls


def _normalise(data: AuditData, s: pl.Series, col: str, digits: int | None) -> pl.Series:
    if _is_string(data, s.dtype, col):
        return normalise_strings(s)
    if digits is not None and _is_float(s.dtype):
        return round_significant_frame(s.to_frame(), [col], digits)[col]
    return s


def normalised_frame(data: AuditData, split: str, cols: list[str],
                     digits: int | None) -> pl.DataFrame:
    """``cols`` of ``split`` normalised (:func:`normalised_column`). Not cached, and the check
    itself never builds it: at 10M rows the normalised copies of every column held GBs
    (:func:`keys_of_frame` hashes a batch of rows at a time instead)."""
    return pl.DataFrame([normalised_column(data, split, c, digits) for c in cols])


class _Batch:
    """A batch of rows read as the loaded data are (one split named ``b``): the column kinds
    :func:`_is_string` asks for."""

    def __init__(self, frame: pl.DataFrame, kinds: Mapping[str, Kind], seed: int) -> None:
        self.splits = {"b": frame}
        self.kinds = kinds
        self.seed = seed


def keys_of_frame(frame: pl.DataFrame, kinds: Mapping[str, Kind], seeds: Sequence[int],
                  order: list[str], variants: list[tuple[list[str], int | None]],
                  extra: pl.DataFrame | None = None) -> list[list[np.ndarray]]:
    """Per seed, a 64-bit key of each row of a batch (``kinds``: the run's column kinds) for
    each (columns, digits) variant: the seeded ``hash_rows`` of the variant's columns
    normalised (:func:`normalised_column`: strings normalised, floats rounded to ``digits``
    significant digits or exact when None, the rest as loaded) and the columns of ``extra``
    as they are (hash_rows: null equals null, NaN equals NaN, -0.0 equals 0.0). Rows equal
    after normalisation get equal keys. Element-wise, so a split's keys do not depend on how
    it is cut into batches (any engine's batches of the same column types give the same
    keys; a Float32 and a Float64 column hash apart, so keys are compared within a run). A
    string column is normalised, and a float column rounded, once for every variant and
    seed (NFKC and case folding were most of the cost; the per-column seeded codes mixed in
    numpy, which these keys replaced, took twice the CPU of the whole key at 1M rows)."""
    probe = cast(AuditData, _Batch(frame, kinds, 0))
    schema = frame.schema  # built anew on every access: once
    strings = {c: normalise_strings(frame.get_column(c)) for c in order
               if _is_string(probe, schema[c], c)}
    rounded: dict[tuple[str, int], pl.Series] = {}

    def normal(c: str, digits: int | None) -> pl.Series:
        if c in strings:
            return strings[c]
        if digits is None or not _is_float(schema[c]):
            return frame.get_column(c)
        if (c, digits) not in rounded:
            rounded[(c, digits)] = round_significant_frame(frame.select(c), [c], digits)[c]
        return rounded[(c, digits)]

    out: list[list[np.ndarray]] = [[] for _ in seeds]
    for cols, digits in variants:
        normalised = pl.DataFrame([normal(c, digits) for c in cols])
        if extra is not None and extra.width:
            normalised = normalised.hstack(extra)
        for keys, seed in zip(out, seeds):
            keys.append(row_keys(normalised, seed, frame.height).to_numpy())
    return out


def normalise_value_column(s: pl.Series, name: str, kinds: Mapping[str, Kind]) -> pl.Series:
    """A column normalised as :func:`normalised_column` with ``digits=None`` does (strings
    normalised, everything else as it is)."""
    return _normalise(cast(AuditData, _Batch(pl.DataFrame(), kinds, 0)), s, name, None)


def normalised_equal(data: AuditData, a: str, ia: pl.Series | np.ndarray, b: str,
                     ib: pl.Series | np.ndarray, cols: list[str],
                     digits: int | None) -> np.ndarray:
    """Element-wise equality of rows ``ia`` of split ``a`` and ``ib`` of split ``b`` over
    ``cols`` normalised (null equals null, NaN equals NaN, -0.0 equals 0.0); only those rows
    are normalised (:func:`_equal_rows`)."""
    schema = data.splits[a].schema
    strings = {c for c in cols if _is_string(data, schema[c], c)}
    return _equal_rows(data.splits[a].select(cols), ia, data.splits[b].select(cols), ib,
                       digits=digits, strings=strings)


def row_keys(frame: pl.DataFrame, seed: int, height: int) -> pl.Series:
    """64-bit hash of each row of ``frame``; ``height`` zeros when it has no columns."""
    if frame.width == 0:
        return pl.Series("h", np.zeros(height, dtype=np.uint64))
    return frame.hash_rows(seed=seed % (2**32))


def frames_equal(fa: pl.DataFrame, ia: pl.Series | np.ndarray, fb: pl.DataFrame,
                 ib: pl.Series | np.ndarray) -> np.ndarray:
    """Element-wise equality of rows ``fa[ia]`` and ``fb[ib]`` over every column of ``fa``
    (null equals null, NaN equals NaN, -0.0 equals 0.0)."""
    return _equal_rows(fa, ia, fb, ib)


def _equal_rows(fa: pl.DataFrame, ia: pl.Series | np.ndarray, fb: pl.DataFrame,
                ib: pl.Series | np.ndarray, *, digits: int | None = None,
                strings: set[str] | frozenset[str] = frozenset()) -> np.ndarray:
    """Element-wise equality of rows ``fa[ia]`` and ``fb[ib]`` over every column of ``fa``
    (null equals null, NaN equals NaN, -0.0 equals 0.0), floats rounded to ``digits``
    significant digits (None: exact) and the columns ``strings`` normalised as text first.
    Numeric columns are compared as blocks of codes (:func:`value_codes`, at most
    :data:`KEY_CELLS` values at a time), the others one column at a time."""
    ia, ib = pl.Series(ia), pl.Series(ib)
    mask = np.ones(len(ia), dtype=bool)
    if len(ia) == 0:
        return mask
    schema = fa.schema  # built anew on every access: once
    blocks: dict[str, list[str]] = {}
    for c in fa.columns:  # vectorised over rows
        kind = None if c in strings else numeric_kind(schema[c])
        if kind is not None:
            blocks.setdefault(kind, []).append(c)
            continue
        va, vb = fa[c].gather(ia), fb[c].gather(ib)
        if c in strings:
            va, vb = normalise_strings(va), normalise_strings(vb)
        elif digits is not None and _is_float(schema[c]):
            va = round_significant_frame(va.to_frame(), [c], digits)[c]
            vb = round_significant_frame(vb.to_frame(), [c], digits)[c]
        mask &= va.eq_missing(vb).fill_null(False).to_numpy()
    width = max(1, KEY_CELLS // len(ia))
    for kind, cs in blocks.items():
        d = digits if kind == "float" else None
        for b in range(0, len(cs), width):
            part = cs[b:b + width]  # the columns, not fa.select: O(fa's columns) per call
            ca, na = value_codes(pl.DataFrame({c: fa.get_column(c) for c in part})[ia], kind, d)
            cb, nb = value_codes(pl.DataFrame({c: fb.get_column(c) for c in part})[ib], kind, d)
            mask &= ((ca == cb) & (na == nb)).all(axis=1)
    return mask


_EMPTY_PAIRS = {"row_a": pl.UInt32, "row_b": pl.UInt32}


def _empty_pairs(text_cols: list[str]) -> pl.DataFrame:
    schema = dict(_EMPTY_PAIRS) | {f"jaccard_{c}": pl.Float64 for c in text_cols}
    return pl.DataFrame(schema=schema)


# ---------------------------------------------------------------------------------------------
# Near duplicates across two splits
# ---------------------------------------------------------------------------------------------

def near_matches(data: AuditData, earlier: str, later: str, cols: list[str], *, digits: int,
                 text_cols: list[str], threshold: float,
                 keys: dict[str, np.ndarray]) -> pl.DataFrame:
    """Rows of ``later`` equal to a row of ``earlier`` after normalisation: ``row_a``, ``row_b``
    and, per free-text column, ``jaccard_<col>`` (exact word-shingle Jaccard), sorted by row_b.

    The other columns must be equal after normalisation and every text column must reach
    ``threshold`` Jaccard; candidates come from MinHash/LSH whose signatures are keyed by the
    other columns' hash (only rows whose key occurs in both splits are signed), then are
    verified exactly. ``keys``: per split, any key of the other columns normalised (the keyed
    rows of leakage.duplicates, :func:`keys_of_frame`). (Near copies without free text are
    counted from keys on any engine: :mod:`auditor.detectors.copy_keys`.)
    """
    assert text_cols, "near_matches matches free text; other near copies are keyed rows"
    key_cols = [c for c in cols if c not in text_cols]
    ha, hb = (pl.Series("h", keys[s]) for s in (earlier, later))
    ka = pl.DataFrame({"h": ha}).with_row_index("row_a")
    kb = pl.DataFrame({"h": hb}).with_row_index("row_b")
    ra = ka.join(kb.select("h").unique(), on="h", how="semi")
    rb = kb.join(ka.select("h").unique(), on="h", how="semi")
    if ra.height == 0 or rb.height == 0:
        return _empty_pairs(text_cols)
    sig_a = _keyed_signatures(data.splits[earlier], ra, text_cols, data.seed)
    sig_b = _keyed_signatures(data.splits[later], rb, text_cols, data.seed)
    pairs = near_duplicate_pairs(sig_a, sig_b, threshold=max(0.0, threshold - CANDIDATE_SLACK),
                                 bands=lsh_bands(threshold) * len(text_cols), seed=data.seed)
    if pairs.height == 0:
        return _empty_pairs(text_cols)
    cand = pl.DataFrame({
        "row_a": ra["row_a"].gather(pairs["doc_a"]), "row_b": rb["row_b"].gather(pairs["doc_b"]),
    })
    keep = normalised_equal(data, earlier, cand["row_a"], later, cand["row_b"], key_cols, digits)
    for c in text_cols:
        jac = pair_jaccard(data.splits[earlier][c].gather(cand["row_a"]),
                           data.splits[later][c].gather(cand["row_b"]), seed=data.seed)
        cand = cand.with_columns(pl.Series(f"jaccard_{c}", jac))
        keep &= jac >= threshold
    return cand.filter(pl.Series(keep)).sort("row_b")


def lsh_bands(threshold: float) -> int:
    """The fewest LSH bands (of NUM_PERM / bands rows) that find a pair with Jaccard exactly
    ``threshold`` with probability >= LSH_RECALL: 1 - (1 - t^r)^b >= 0.95. With 128
    permutations: 8 bands of 16 rows from 0.95, 16 of 8 for 0.85-0.9, 32 of 4 for 0.6-0.8
    (0.999 at 0.8, where 16 of 8 would give 0.947), 64 of 2 below; fewer bands, fewer false
    candidates."""
    for bands in (8, 16, 32, 64):
        rows = NUM_PERM // bands
        if 1 - (1 - threshold ** rows) ** bands >= LSH_RECALL:
            return bands
    return 64


def _mix(v: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a bijection of uint64 that spreads every input bit."""
    with np.errstate(over="ignore"):
        v = (v ^ (v >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
        v = (v ^ (v >> _U64(27))) * _U64(0x94D049BB133111EB)
        return v ^ (v >> _U64(31))


def _keyed_signatures(df: pl.DataFrame, rows: pl.DataFrame, text_cols: list[str],
                      seed: int) -> Signatures:
    """MinHash signatures of each text column of ``rows`` side by side, every entry mixed with
    the row's key hash so that two rows share an LSH band only when their keys are equal too.
    A text without any word gets a constant signature: it matches other word-less texts."""
    idx = rows.columns[0]
    key = _mix(rows["h"].to_numpy().astype(np.uint64))
    blocks = []
    for c in text_cols:
        sig = signatures(df[c].gather(rows[idx]), num_perm=NUM_PERM, k=SHINGLE_WORDS, seed=seed)
        values = sig.values.copy()
        values[sig.empty] = 0
        blocks.append(values)
    values = _mix(np.hstack(blocks) ^ key[:, None])
    return Signatures(values=values, empty=np.zeros(len(values), dtype=bool))


def pair_jaccard(a: pl.Series, b: pl.Series, *, seed: int = 0) -> np.ndarray:
    """Exact Jaccard of word-shingle sets for each aligned pair (a[i], b[i]), vectorised.

    Same shingles as :func:`auditor.stats.minhash.jaccard`: two texts without words have Jaccard 1,
    one without words 0.
    """
    n = len(a)
    sa = shingle_hashes(a, k=SHINGLE_WORDS, seed=seed).unique()
    sb = shingle_hashes(b, k=SHINGLE_WORDS, seed=seed).unique()
    size_a = np.bincount(sa["doc"].to_numpy(), minlength=n)
    size_b = np.bincount(sb["doc"].to_numpy(), minlength=n)
    inter = np.bincount(sa.join(sb, on=["doc", "h"], how="inner")["doc"].to_numpy(),
                        minlength=n)
    union = size_a + size_b - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / np.maximum(union, 1), 1.0)
