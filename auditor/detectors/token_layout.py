"""The per-row structure of tokenized rows, computed per batch of rows by the functions the
``tokens.*`` checks map over every split (:mod:`auditor.detectors.token_measures`): where
padding is, what the content starts and ends with, how the attention mask and the labels line
up with it, and token counts.

Padding is found from the ids: the leading and trailing runs of ``pad_id``. When the pad id is
also the EOS (GPT-2 pipelines pad with ``<|endoftext|>``) or the BOS, the first token of such a
run may be a real EOS/BOS. Whether it is, is learned once from the data (``eos_kept``,
``bos_kept``): with an attention mask, the majority of rows vote (mask 1 on the first token of
the run means it is content); without one, the EOS is taken as content when the shortest
trailing run is one token long or most runs are exactly one token long. A row whose mask is 0 on
exactly the whole run, or on all of it but its first token, follows its mask (so a row that
lacks its EOS is told apart from one whose mask hides it); a mask that is 1 on more of the run
is a mask covering padding. Everything is
vectorised over the flattened ids of a chunk of rows (offsets + ``reduceat``), never per row.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

# Classification of a row's labels against its ids (the per-row ``shift``).
NO_LABELS, AMBIGUOUS, MISALIGNED = -1, -2, -3
SHIFTS = (0, 1, 2)


@dataclass(frozen=True)
class Roles:
    """The ids the checks rely on: tokenizer values, overridden by the tokens: section."""

    vocab_size: int
    pad: int | None
    bos: int | None
    eos: int | None
    unk: int | None
    specials: np.ndarray  # sorted control ids

    def lookup(self, ids: list[int] | np.ndarray) -> np.ndarray:
        """A boolean table over [0, vocab_size] (the last slot is 'outside the vocabulary')."""
        table = np.zeros(self.vocab_size + 1, dtype=bool)
        ids = np.asarray(ids, dtype=np.int64)
        table[ids[(ids >= 0) & (ids < self.vocab_size)]] = True
        return table


def roles_from(t: Any, tok: Any, vocab_size: int | None = None) -> Roles:
    """The ids of the ``tokens:`` section ``t``, defaulting to the tokenizer ``tok``'s."""
    def pick(override: int | None, default: int | None) -> int | None:
        return override if override is not None else default

    roles = dict(pad=pick(t.pad_id, tok.pad_id), bos=pick(t.bos_id, tok.bos_id),
                 eos=pick(t.eos_id, tok.eos_id), unk=tok.unk_id)
    specials = set(tok.special_ids) | {v for v in roles.values() if v is not None}
    return Roles(vocab_size=int(vocab_size or tok.vocab_size),
                 specials=np.array(sorted(specials), dtype=np.int64), **roles)


# ---------------------------------------------------------------------------------------------
# Flattened chunks
# ---------------------------------------------------------------------------------------------

class Flat:
    """A chunk of list rows flattened: ``values`` (all elements), ``lens`` and ``offsets``.
    Positions and spans are built with cumulative sums over the flat array, not per row."""

    def __init__(self, values: np.ndarray, lens: np.ndarray, null: np.ndarray) -> None:
        self.values = values
        self.lens = lens
        self.null = null
        self.offsets = np.zeros(len(lens), dtype=np.int64)
        np.cumsum(lens[:-1], out=self.offsets[1:])
        self.nonempty = lens > 0
        self._pos: np.ndarray | None = None

    @classmethod
    def of(cls, s: pl.Series) -> "Flat":
        lens = s.list.len().fill_null(0).to_numpy().astype(np.int64)
        flat = s.explode(empty_as_null=False, keep_nulls=False)
        if flat.null_count():  # a null inside a list: never a valid id (-1 is out of vocab)
            flat = flat.fill_null(-1)
        if not (flat.dtype.is_integer() or flat.dtype == pl.Boolean):
            flat = flat.cast(pl.Int64, strict=False).fill_null(-1)
        return cls(flat.to_numpy(), lens, s.is_null().to_numpy())

    def __len__(self) -> int:
        return len(self.values)

    def pos(self) -> np.ndarray:
        """Each element's position inside its row (int32, cached)."""
        if self._pos is None:
            step = np.ones(len(self.values), dtype=np.int32)
            ne = self.nonempty
            starts, lens = self.offsets[ne], self.lens[ne]
            if len(starts):
                step[starts[0]] = 0
                step[starts[1:]] = 1 - lens[:-1]
            self._pos = np.cumsum(step, dtype=np.int32)
        return self._pos

    def span(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Elements whose position in their row lies in [lo, hi) of that row."""
        lo = np.clip(lo, 0, self.lens)
        hi = np.clip(hi, lo, self.lens)
        counts = np.stack([lo, hi - lo, self.lens - hi], axis=1).ravel()
        pattern = np.tile(np.array([False, True, False]), len(self.lens))
        return np.repeat(pattern, counts)

    def within(self, k: int) -> np.ndarray:
        """Elements whose row continues for at least ``k`` more elements."""
        return self.span(np.zeros(len(self.lens), np.int64), np.maximum(self.lens - k, 0)) \
            if k else np.ones(len(self.values), dtype=bool)

    def row_sum(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self.lens), dtype=np.int64)
        if self.nonempty.any():
            out[self.nonempty] = np.add.reduceat(x, self.offsets[self.nonempty],
                                                 dtype=np.int64)
        return out

    def rows_of(self, idx: np.ndarray) -> np.ndarray:
        """The row of each flat element index in ``idx``."""
        return np.searchsorted(self.offsets, idx, side="right") - 1

    def runs(self, flag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Length of the leading and of the trailing run of ``flag`` in every row."""
        lead = np.zeros(len(self.lens), dtype=np.int64)
        trail = np.zeros(len(self.lens), dtype=np.int64)
        ne = self.nonempty
        if not ne.any():
            return lead, trail
        pos = self.pos()
        big = np.iinfo(np.int32).max
        first = np.minimum.reduceat(np.where(flag, big, pos), self.offsets[ne])
        last = np.maximum.reduceat(np.where(flag, -1, pos), self.offsets[ne])
        lens = self.lens[ne]
        lead[ne] = np.where(first == big, lens, first)
        trail[ne] = lens - 1 - last
        return lead, trail


def aligned(df: pl.DataFrame, ids: str, other: str) -> np.ndarray:
    """Rows whose ``other`` list has the same length as the ids list (and is not null)."""
    return df.select((pl.col(other).list.len() == pl.col(ids).list.len()).fill_null(False)
                     )[:, 0].to_numpy()


def aligned_values(chunk: pl.DataFrame, ids: str, col: str) -> tuple[np.ndarray, np.ndarray]:
    """The flat values of ``col`` aligned with the flat ids (-1 in the rows whose ``col`` list
    is null or of another length than the ids) and, per row, whether it was aligned."""
    ok = aligned(chunk, ids, col)
    fixed = chunk.select(pl.when(pl.Series(ok)).then(pl.col(col).cast(pl.List(pl.Int64)))
                         .otherwise(pl.col(ids).list.eval(pl.lit(-1, pl.Int64))))
    return Flat.of(fixed.to_series()).values, ok


def _as_list(dtype: pl.DataType, col: str) -> pl.Expr:
    """A token column as a list of Int64 (or booleans for a mask): arrays become lists; UInt64
    and float elements are cast with overflowing, fractional-NaN or missing values as null,
    which :meth:`Flat.of` counts as out of the vocabulary (the loader already refused
    non-numeric token columns)."""
    e = pl.col(col).arr.to_list() if isinstance(dtype, pl.Array) else pl.col(col)
    inner = getattr(dtype, "inner", None)
    if dtype == pl.Null or inner is not None and (inner == pl.UInt64 or inner.is_float()
                                                  or inner == pl.Null):
        e = e.cast(pl.List(pl.Int64), strict=False)
    return e


def chunk_runs(chunk: pl.DataFrame, ids_col: str, mask_col: str | None, pad: int | None
               ) -> tuple[np.ndarray, ...]:
    """Pass 1 over a chunk of rows: list lengths, leading and trailing runs of the pad id, and
    leading and trailing runs of mask zeros (-1 where the mask is missing or misaligned)."""
    f = Flat.of(chunk[ids_col])
    lead, trail = f.runs(f.values == pad) if pad is not None else (
        np.zeros(len(f.lens), np.int64), np.zeros(len(f.lens), np.int64))
    zl = np.full(len(f.lens), -1, np.int64)
    zt = np.full(len(f.lens), -1, np.int64)
    if mask_col:
        ok = aligned(chunk, ids_col, mask_col)
        if ok.any():
            m = Flat.of(chunk.filter(pl.Series(ok))[mask_col])
            zl[ok], zt[ok] = m.runs(m.values == 0)
    return f.lens, lead, trail, zl, zt


def kept_stats(run: np.ndarray, mask_zeros: np.ndarray, lens: np.ndarray) -> dict[str, int]:
    """The aggregates :func:`learn_kept` decides from (the spark engine computes the same ones
    with one Spark aggregate): rows, rows whose mask votes and how many vote 'kept', rows with
    a run, the shortest run among them, the shortest run, runs of exactly one token."""
    cand = (run >= 1) & (run < lens)
    voted = cand & (mask_zeros >= 0)
    with_run = run[run >= 1]
    return {"rows": len(run), "voted": int(voted.sum()),
            "voted_kept": int((voted & (run - mask_zeros >= 1)).sum()),
            "with_run": len(with_run),
            "with_run_min": int(with_run.min()) if len(with_run) else 0,
            "run_min": int(run.min()) if len(run) else 0,
            "run_one": int((run == 1).sum())}


def learn_kept(applies: bool, st: dict[str, int], what: str, where: str) -> tuple[bool, str]:
    """Whether the first pad token of a run is a real BOS/EOS, from :func:`kept_stats`."""
    if not applies:
        return False, ""
    if st["voted"]:
        kept = bool(st["voted_kept"] / st["voted"] >= 0.5)
        return kept, (f"pad id = {what}: the attention mask of most rows "
                      f"{'keeps' if kept else 'does not keep'} the first {where} pad token, so it "
                      f"is taken as {'a real ' + what if kept else 'padding'}.")
    if not st["rows"]:
        return False, ""
    kept = bool(st["with_run"] and (st["with_run_min"] == 1 and st["run_min"] >= 1
                                    or st["run_one"] / st["rows"] >= 0.5))
    return kept, (f"pad id = {what} and no attention mask: the first {where} pad token is taken "
                  f"as {'a real ' + what if kept else 'padding'} (inferred from run lengths).")


def chunk_layout(chunk: pl.DataFrame, t: Any, roles: Roles, runs: tuple[np.ndarray, ...],
                 eos_kept: bool, bos_kept: bool, side: str
                 ) -> tuple[dict[str, Any], np.ndarray]:
    """Pass 2 over a chunk of rows: the per-row arrays (rows of
    ``specials_inside`` numbered within the chunk) and the chunk's content-token counts over
    [0, vocab_size] (the last slot: outside the vocabulary). ``runs``: the chunk's (lead, trail,
    mask-zero lead, mask-zero trail) of pass 1. Also called per Arrow batch on Spark executors."""
    n = chunk.height
    special = roles.lookup(roles.specials)
    f = Flat.of(chunk[t.input_ids])
    lead, trail, zl, zt = runs
    full = (lead >= f.lens) & (f.lens > 0)
    pad_l = np.maximum(lead - bos_kept, 0)
    pad_r = np.maximum(trail - eos_kept, 0)
    # pad == EOS (BOS): where the mask settles whether the run's first token is content
    # (mask zeros on exactly the run, or on all of it but that token), follow the mask
    if roles.pad is not None and roles.pad == roles.eos:
        pad_r = np.where((trail >= 1) & ((zt == trail) | (zt == trail - 1)), zt, pad_r)
    if roles.pad is not None and roles.pad == roles.bos:
        pad_l = np.where((lead >= 1) & ((zl == lead) | (zl == lead - 1)), zl, pad_l)
    pad_l = np.where(full, f.lens if side == "left" else 0, pad_l)
    pad_r = np.where(full, 0 if side == "left" else f.lens, pad_r)
    content_n = f.lens - pad_l - pad_r
    content = f.span(pad_l, f.lens - pad_r)
    interior = f.span(pad_l + 1, f.lens - pad_r - 1)
    x = f.values
    in_vocab = (x >= 0) & (x < roles.vocab_size)
    xc = np.where(in_vocab, x, roles.vocab_size)
    has = content_n > 0
    first = np.full(n, -1, np.int64)
    last = np.full(n, -1, np.int64)
    first[has] = x[(f.offsets + pad_l)[has]]
    last[has] = x[(f.offsets + f.lens - pad_r - 1)[has]]
    counts = np.bincount(np.where(content, xc, roles.vocab_size),
                         minlength=roles.vocab_size + 1)
    inner = np.flatnonzero(interior & special[xc])
    part: dict[str, Any] = dict(
        length=f.lens, null=f.null, pad_left=pad_l, pad_right=pad_r, first=first, last=last,
        unk=(f.row_sum(content & (x == roles.unk)) if roles.unk is not None
             else np.zeros(n, np.int64)),
        oov=f.row_sum(~in_vocab),
        specials_inside=pl.DataFrame({"row": f.rows_of(inner),
                                      "id": x[inner].astype(np.int64)}))
    if t.attention_mask:
        part.update(_mask_stats(chunk, t.input_ids, t.attention_mask, f, content))
    if t.labels:
        part.update(_label_stats(chunk, t, f, content, roles))
    return part, counts


def _subset(chunk: pl.DataFrame, ok: np.ndarray, ids_col: str, f: Flat,
            content: np.ndarray) -> tuple[Flat, np.ndarray, pl.DataFrame]:
    """The ids and content flags restricted to rows ``ok`` (no copy when every row is ok)."""
    if ok.all():
        return f, content, chunk
    sub = chunk.filter(pl.Series(ok))
    keep = f.span(np.zeros(len(ok), np.int64), np.where(ok, f.lens, 0))
    fs = Flat.of(sub[ids_col])
    return fs, content[keep], sub


def _mask_stats(chunk: pl.DataFrame, ids_col: str, mask_col: str, f: Flat,
                content: np.ndarray) -> dict[str, np.ndarray]:
    n = chunk.height
    ok = aligned(chunk, ids_col, mask_col)
    out = {k: np.zeros(n, np.int64) for k in ("mask_bad", "mask_on_pad", "mask_off_content")}
    out["mask_aligned"] = ok
    if ok.any():
        fs, cont, sub = _subset(chunk, ok, ids_col, f, content)
        m = Flat.of(sub[mask_col]).values
        out["mask_bad"][ok] = fs.row_sum((m != 0) & (m != 1))
        out["mask_on_pad"][ok] = fs.row_sum(~cont & (m != 0))
        out["mask_off_content"][ok] = fs.row_sum(cont & (m == 0))
    return out


def _label_stats(chunk: pl.DataFrame, t: Any, f: Flat, content: np.ndarray,
                 roles: Roles) -> dict[str, np.ndarray]:
    n = chunk.height
    ok = aligned(chunk, t.input_ids, t.labels)
    zeros = {k: np.zeros(n, np.int64) for k in ("labels_on_pad", "labels_active", "labels_oov")}
    out: dict[str, np.ndarray] = dict(labels_aligned=ok, shift=np.full(n, NO_LABELS, np.int64),
                                      **zeros)
    if not ok.any():
        return out
    fs, cont, sub = _subset(chunk, ok, t.input_ids, f, content)
    x = fs.values
    lab = Flat.of(sub[t.labels]).values
    active = (lab != t.ignore_index) & cont
    n_active = fs.row_sum(active)
    out["labels_on_pad"][ok] = fs.row_sum(~cont & (lab != t.ignore_index))
    out["labels_active"][ok] = n_active
    out["labels_oov"][ok] = fs.row_sum(active & ((lab < 0) | (lab >= roles.vocab_size)))
    follows = []
    for s in SHIFTS:
        eq = np.zeros(len(x), dtype=bool)
        if s < len(x):
            eq[:len(x) - s] = lab[:len(x) - s] == x[s:]
        match = fs.row_sum(active & fs.within(s) & eq)
        follows.append((n_active > s) & (match >= n_active - s))
    follows_arr = np.stack(follows, axis=1)
    k = follows_arr.sum(axis=1)
    shift = np.where(k == 1, np.argmax(follows_arr, axis=1), np.where(k > 1, AMBIGUOUS,
                                                                      MISALIGNED))
    shift = np.where(n_active == 0, NO_LABELS, shift)
    out["shift"][ok] = shift
    return out
