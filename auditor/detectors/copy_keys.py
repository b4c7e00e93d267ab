"""``leakage.duplicates`` measured once for every engine: each row reduced to keys, the keys
counted by the engine (:func:`row_copies`).

One pass over every split (:class:`~auditor.engines.operations.Expansion`, kept by the engine:
:meth:`~auditor.engines.operations.Operations.kept`) gives each row, from a polars function of
its batch (the same code on every engine, so the engines cannot normalise apart):

- ``_s``/``_r``: the split's index and the stored row number;
- ``_h1``/``_h2``: a 128-bit key of the compared values as loaded (two seeded
  ``hash_rows``; null equals null, NaN equals NaN, -0.0 equals 0.0; columns compared as text
  cast to strings): two different rows share it with probability about 2^-128 per pair,
  n^2 / 2^129 over n rows (< 10^-20 at 10^9 rows), so counts of keys are counts of rows
  (with ``_uh``, each half hashes that half of ``_uh`` and the time, :func:`row_key`: two
  rows then share the key when ``_uh`` or the outer hash collides, about n^2 / 2^127, still
  < 10^-20 at 10^9 rows);
- ``_fh1``/``_fh2`` and ``_y`` (a label is declared and compared): two seeded ``hash_rows``
  of the features normalised (:func:`auditor.engines.polars_near.keys_of_frame`: strings
  NFKC-normalised, case-folded, whitespace-collapsed; floats exact), columns compared as
  text as they are, and a hash of the label normalised likewise (numbers as doubles; null
  and NaN: no label);
- ``_rh1``/``_rh2`` (near copies without free text): the compared columns normalised with
  floats rounded to ``significant_digits`` significant digits;
- ``_uh1``/``_uh2`` (``CopySpec.without``, the declared time): the whole-row key of every
  compared column but that one, counted as a second comparison (:meth:`KeyedRows.without`).

Columns compared as text (types differ across splits) are part of every key as strings, not
normalised: two rows that differ only there are different rows for conflicts and near copies
too (the polars path before counted a group's rows whose text equalled its first row's). The
earlier row an across-split conflict example shows is the first holding the smallest (or
largest) label *hash*, not value; counts do not depend on it.

Everything else is a query over those rows in the engine (narwhals: polars lazily, Spark on
its executors), one ``group_by`` of the whole-row key kept for the check: within-split copies
(rows minus distinct keys), shared keys per pair, the chance baseline's counts, near copies
(``group_by`` of the near key), conflicting labels (``group_by`` of the feature key), example
rows by row number (:meth:`~auditor.engines.operations.Operations.rows_at`). Near copies of
free text (MinHash) are an engine capability (:meth:`~auditor.engines.operations.Operations.
near_text_copies`); an engine without it names the columns in ``not_matched``.
"""
from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any, Callable, Mapping, Sequence

import narwhals as nw
import numpy as np
import polars as pl

from auditor.core.roles import Kind, Roles
from auditor.engines.operations import (CopySpec, Expansion, Operations, PairCopies, RowCopies,
                                        SplitCopies)
from auditor.engines.polars_near import keys_of_frame, normalise_value_column
from auditor.engines.polars_rows import cells, differences, json_value
from auditor.stats.copies import chance_from_counts, natural_repeats, no_chance

Lazy = nw.LazyFrame[Any]

_SEEDS = (0x2545F491, 0x5BD1E995)  # mixed into the run's seed: the key's two halves
_CONTINUOUS_SHARE = 0.5  # distinct share of a column's values from which it is continuous
MAX_SHIPPED = 1_000_000  # repeated keys' rows (or the keys, or their values) sent to the
# batches as a filter; beyond, every cell is kept and joined in the engine
MAX_PASSES = 8  # passes of at most MAX_SHIPPED values each before every cell is kept instead
# (at 50M rows, 125k copied rows held 3.1M values: every cell was over a billion rows, a
# 27.6 GB shuffle on Spark's local disks)


# ---------------------------------------------------------------------------------------------
# the keyed rows: one polars function of a batch, run by every engine
# ---------------------------------------------------------------------------------------------

def _signed(h: np.ndarray | pl.Series) -> pl.Series:
    """u64 hashes as Int64 (the same bits: Spark has no unsigned type)."""
    a = h.to_numpy() if isinstance(h, pl.Series) else h
    return pl.Series(np.ascontiguousarray(a, dtype=np.uint64).view(np.int64))


def _label_hash(frame: pl.DataFrame, label: str, kinds: Mapping[str, Kind], seed: int
                ) -> pl.Series:
    """A hash of each row's label normalised (strings as text is, numbers as they are: the
    loader gives a column one type in every split); null where there is no label (null,
    NaN)."""
    y = normalise_value_column(frame.get_column(label), label, kinds)
    if y.dtype.is_float():
        y = y.fill_nan(None)
    h = _signed(y.hash(seed=seed % (2**32)))
    return pl.select(pl.when(y.is_null()).then(None).otherwise(h)).to_series() \
        if y.null_count() else h


def row_key(frame: pl.DataFrame, cols: tuple[str, ...], as_text: tuple[str, ...], seed: int,
            without: str | None = None
            ) -> tuple[pl.DataFrame, list[pl.Series], list[pl.Series] | None]:
    """The columns compared as text (cast to strings) and the two halves of each row's
    whole-row key (seeded ``hash_rows`` of ``cols`` as loaded and the text columns). With
    ``without`` (one of ``cols``), also the halves of the key of every column but that one
    (``_uh``), and each half of the whole-row key is the seeded ``hash_rows`` of that half and
    the column: one pass over the row's values, not two (the time column is a small part of
    a row)."""
    texts = frame.select(pl.col(c).cast(pl.String) for c in as_text)
    compared = pl.concat([frame.select(cols), texts], how="horizontal")
    if without is None:
        return texts, _halves(compared, seed), None
    rest = _halves(compared.drop(without), seed)
    last = compared.get_column(without).alias("_t")
    whole = [_signed(pl.DataFrame([h.alias("_k"), last]).hash_rows(seed=(seed ^ s) % (2**32)))
             for h, s in zip(rest, _SEEDS)]
    return texts, whole, rest


def _halves(frame: pl.DataFrame, seed: int) -> list[pl.Series]:
    """The two seeded ``hash_rows`` of ``frame``: a row's 128-bit key."""
    return [_signed(frame.hash_rows(seed=(seed ^ s) % (2**32))) for s in _SEEDS]


def keyed_batch(frame: pl.DataFrame, first_row: int, *, split: int, cols: tuple[str, ...],
                as_text: tuple[str, ...], features: tuple[str, ...], label: str | None,
                near: tuple[str, ...], digits: int, kinds: Mapping[str, Kind], seed: int,
                without: str | None = None) -> pl.DataFrame:
    """The keyed rows (module docstring) of one batch of a split."""
    n = frame.height
    texts, whole, rest = row_key(frame, cols, as_text, seed, without)
    out: dict[str, pl.Series] = {
        "_s": pl.Series(np.full(n, split, dtype=np.int32)),
        "_r": pl.Series(np.arange(first_row, first_row + n, dtype=np.int64)),
        "_h1": whole[0], "_h2": whole[1]}
    if rest is not None:
        out |= {"_uh1": rest[0], "_uh2": rest[1]}
    variants: list[tuple[list[str], int | None]] = []
    if label is not None and features:
        variants.append((list(features), None))
    if near:
        variants.append((list(near), digits))
    if variants:
        # columns compared as text: equal as strings, not normalised
        halves = keys_of_frame(frame, kinds, [seed ^ s for s in _SEEDS], list(dict.fromkeys(
            c for v, _ in variants for c in v)), variants, extra=texts)
        for i, keys in enumerate(halves, start=1):
            for (names, d), k in zip(variants, keys):
                out[f"_{'r' if d is not None else 'f'}h{i}"] = _signed(k)
    if label is not None and features:
        out["_y"] = _label_hash(frame, label, kinds, seed)
    return pl.DataFrame(out)


def keyed_schema(spec: CopySpec, near: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {"_s": pl.Int32, "_r": pl.Int64, "_h1": pl.Int64, "_h2": pl.Int64}
    if spec.without is not None:
        schema |= {"_uh1": pl.Int64, "_uh2": pl.Int64}
    if spec.label is not None and spec.features:
        schema |= {"_fh1": pl.Int64, "_fh2": pl.Int64}
    if near:
        schema |= {"_rh1": pl.Int64, "_rh2": pl.Int64}
    if spec.label is not None and spec.features:
        schema["_y"] = pl.Int64
    return schema


def _member(pool: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Whether each of ``x`` is in ``pool`` (polars ``is_in``: a hash set, 4x a binary
    search's speed on 65,536 values)."""
    if not pool.size:
        return np.zeros(x.size, dtype=bool)
    return pl.Series(x).is_in(pl.Series(pool).implode()).to_numpy()


def cells_batch(frame: pl.DataFrame, first_row: int, *, cols: tuple[str, ...],
                as_text: tuple[str, ...], measured: tuple[str, ...], seed: int,
                keys: tuple[np.ndarray, np.ndarray] | None = None,
                values: tuple[np.ndarray, ...] | None = None, without: str | None = None,
                rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                ) -> pl.DataFrame:
    """Per row and value of the ``measured`` columns (non-null): the whole-row key, the
    column's position ``j`` and a hash ``v`` of the value (-0.0 as 0.0, every NaN one value);
    only the rows whose key is among ``keys`` (first halves sorted and unique, second halves
    beside them) or, with ``values`` (per measured column, the hashes to keep), the cells
    whose hash is among their column's (the cells of every value of every row held 600 MB at
    1M rows). Every column at once: one select of the value hashes (or of their membership),
    numpy after it (a loop over 10,000 columns took 35 s); rows are keyed only where a cell
    is kept (hash_rows of every row was most of a pass). With ``rows`` (the split's stored
    row numbers, sorted, and their keys' halves, read from the keyed rows), only those rows,
    keyed as given: nothing is hashed but their values."""
    at = np.arange(frame.height)
    present: np.ndarray | None = None
    if rows is not None:
        r, k1, k2 = rows
        lo, hi = np.searchsorted(r, [first_row, first_row + frame.height])
        at = r[lo:hi] - first_row
        h1, h2 = k1[lo:hi], k2[lo:hi]
    elif keys is not None:
        h1, h2 = (h.to_numpy() for h in row_key(frame, cols, as_text, seed, without)[1])
        first, second = keys
        hit = _member(first, h1)
        hit[hit] = second[np.searchsorted(first, h1[hit])] == h2[hit]
        at = at[hit]
        h1, h2 = h1[at], h2[at]
    elif values is not None:
        masks = frame.select(
            (pl.col(c).is_not_null() & pl.col(c).hash(seed=seed % (2**32)).is_in(
                pl.Series(np.asarray(values[j]).view(np.uint64)).implode())).alias(f"m{j}")
            if len(values[j]) else pl.repeat(False, pl.len()).alias(f"m{j}")  # nothing held
            for j, c in enumerate(measured))
        at = masks.select(pl.any_horizontal(pl.all())).to_series().arg_true().to_numpy() \
            if masks.width else at[:0]
        present = masks[at].to_numpy()
    part = frame if keys is None and values is None and rows is None else frame[at]
    if rows is None and (values is not None or keys is None):
        h1, h2 = (h.to_numpy() for h in row_key(part, cols, as_text, seed, without)[1])
    if not part.height or not measured:
        return pl.DataFrame(schema=CELLS_SCHEMA)
    part = part.select(measured)
    hashed = part.select(pl.col(c).hash(seed=seed % (2**32)) for c in measured)
    v = np.ascontiguousarray(hashed.to_numpy(), dtype=np.uint64).view(np.int64)
    if present is None:
        present = ~part.select(pl.all().is_null()).to_numpy()
    rr, jj = np.nonzero(present)
    return pl.DataFrame({"_h1": h1[rr], "_h2": h2[rr], "j": jj.astype(np.int32),
                         "v": v[rr, jj]}, schema=CELLS_SCHEMA)


CELLS_SCHEMA = {"_h1": pl.Int64, "_h2": pl.Int64, "j": pl.Int32, "v": pl.Int64}


# ---------------------------------------------------------------------------------------------
# the counts
# ---------------------------------------------------------------------------------------------

def _one(frame: Lazy) -> dict[str, Any]:
    """The single row of an aggregate, as a dict (nulls of empty sums as 0)."""
    row = frame.collect().to_polars().row(0, named=True)
    return {k: (0 if v is None else v) for k, v in row.items()}


def _count(frame: Lazy) -> int:
    """Rows of a query (counted in the engine)."""
    return int(_one(frame.select(nw.len().alias("n")))["n"])


ONE = nw.lit(1, dtype=nw.Int64)  # counted as 64-bit (an Int32 sum wraps at 2^31 keys)


def _when(cond: Any, value: Any) -> Any:
    return nw.when(cond).then(value).otherwise(nw.lit(0, dtype=nw.Int64))


def _rows_by_split(rows: pl.DataFrame, splits: int
                   ) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per split index, the sorted row numbers ``_r`` of ``rows`` and their ``_h1``/``_h2``
    (empty arrays for a split without rows): :func:`cells_batch`'s ``rows``."""
    parts = rows.sort("_s", "_r").partition_by("_s", as_dict=True)
    empty = pl.DataFrame(schema={"_r": pl.Int64, "_h1": pl.Int64, "_h2": pl.Int64})
    out = {}
    for i in range(splits):
        part = parts.get((i,), empty)
        out[i] = (part["_r"].to_numpy(), part["_h1"].to_numpy(), part["_h2"].to_numpy())
    return out


class KeyedRows:
    """The keyed rows of every split and the counts of :func:`row_copies` read from them."""

    def __init__(self, engine: Operations, roles: Roles, spec: CopySpec,
                 table: Lazy | None = None) -> None:
        self.engine, self.spec = engine, spec
        self.names = list(roles.splits)
        self.rows = dict(roles.rows)
        self.cols = tuple(spec.cols)
        self.as_text = tuple(spec.as_text)
        self.compared = [*self.cols, *self.as_text]
        self.labelled = spec.label is not None and bool(spec.features)
        # near copies: keyed on the compared columns but free text (with free text, the key
        # gives the text matching its candidates: rows equal in every other column)
        self.near = tuple(c for c in spec.cols if c not in spec.text_cols) if spec.near else ()
        self.text_near = spec.near and bool(spec.text_cols)
        self.seed = roles.seed
        self.kinds = dict(roles.kinds)
        self.pair_idx = [(self.names.index(a), self.names.index(b)) for a, b in roles.pairs()]
        schema = keyed_schema(spec, bool(self.near))
        read = list(dict.fromkeys([*self.compared, *(spec.features or ()),
                                   *([spec.label] if self.labelled and spec.label else [])]))
        # ``table``: keyed rows made already (the rows without a column: a view of the
        # keyed rows of every column, :meth:`without`)
        self.table = table if table is not None else engine.kept([Expansion(
            split=s, columns=tuple(read), schema=tuple(schema.items()),
            fn=partial(keyed_batch, split=i, cols=self.cols, as_text=self.as_text,
                       features=tuple(spec.features), label=spec.label
                       if self.labelled else None, near=self.near, digits=spec.digits,
                       kinds=self.kinds, seed=self.seed, without=spec.without),
            concurrent=True) for i, s in enumerate(self.names)])
        n = [(nw.col("_s") == i).cast(nw.Int64).sum().alias(f"_n{i}")
             for i in range(len(self.names))]
        carried = [c for c in ("_rh1", "_rh2") if c in schema]  # near copies group by them
        self.keys = engine.keep(self.table.group_by("_h1", "_h2").agg(
            *n, *[nw.col(c).max() for c in carried]))
        self._summary: dict[str, int] | None = None
        self._continuous: dict[str, list[str]] | None = None
        self._measured: Lazy | None = None
        self._conflicts: dict[int, tuple[int, int]] | None = None

    def without(self) -> tuple[CopySpec, Lazy] | None:
        """What the rows compared on every column but ``spec.without`` are counted from
        (exact copies only): their spec and the keyed rows' view with ``_uh1``/``_uh2`` as the
        whole-row key, for a second :class:`KeyedRows`; None when no column is left."""
        c = self.spec.without
        if c is None:
            return None
        spec = replace(self.spec, cols=tuple(x for x in self.spec.cols if x != c),
                       as_text=tuple(x for x in self.spec.as_text if x != c),
                       text_cols=tuple(x for x in self.spec.text_cols if x != c), features=(),
                       label=None, near=False, without=None)
        if not spec.cols and not spec.as_text:
            return None
        return spec, self.table.select("_s", "_r", nw.col("_uh1").alias("_h1"),
                                       nw.col("_uh2").alias("_h2"))

    # -- per split and pair --------------------------------------------------------------------
    def summary(self) -> dict[str, int]:
        """One aggregate of the keys: per split i the distinct rows ``d{i}`` and the rows in
        repeated keys ``r{i}``; per pair the later split's rows in keys the earlier split holds
        ``rl`` (the exact copies)."""
        if self._summary is None:
            n = {i: nw.col(f"_n{i}") for i in range(len(self.names))}
            exprs = []
            for i in n:
                exprs += [_when(n[i] > 0, ONE).sum().alias(f"d{i}"),
                          _when(n[i] >= 2, n[i]).sum().alias(f"r{i}")]
            for e, l in self.pair_idx:
                both = (n[e] > 0) & (n[l] > 0)
                exprs.append(_when(both, n[l]).sum().alias(f"rl{e}_{l}"))
            self._summary = {k: int(v) for k, v in _one(self.keys.select(*exprs)).items()}
        return self._summary

    def repeated(self, i: int) -> int:
        return int(self.rows[self.names[i]] - self.summary()[f"d{i}"])

    def copies(self, e: int, l: int) -> int:
        return self.summary()[f"rl{e}_{l}"]

    def continuous(self) -> dict[str, list[str]]:
        """Per split its continuous compared columns (not boolean; n > 1 values of which at
        least half distinct): measured on first use, only when a grade reads it."""
        if self._continuous is None:
            cand = [c for c in self.compared if self.kinds.get(c) != Kind.BOOLEAN]
            # per column, the splits it is continuous in: shared by the run's keyed rows (the
            # rows without their time column ask for the same columns but one)
            known: dict[str, set[str]] = self.engine.cached(
                ("duplicates.continuous", tuple(self.names)), dict)
            todo = [c for c in cand if c not in known]
            if todo:
                got = self.engine.continuous_columns(todo, self.names, share=_CONTINUOUS_SHARE)
                for c in todo:
                    known[c] = set()
                for s in self.names:
                    for c in got[s]:
                        known[c].add(s)
            self._continuous = {s: [c for c in cand if s in known[c]] for s in self.names}
        return self._continuous

    # -- the chance baseline -------------------------------------------------------------------
    def measured_columns(self) -> tuple[str, ...]:
        """The compared columns (as loaded) continuous in some split, in compared order:
        position ``j`` of :meth:`measured`'s cells."""
        continuous = {c for cs in self.continuous().values() for c in cs}
        return tuple(c for c in self.cols if c in continuous)

    def measured(self) -> Lazy | None:
        """The (key, column j) of *measured* values (a continuous compared column's value --
        continuous in some split, compared as loaded -- that only rows of one key hold) of the
        keys seen at least twice: the values of repeated keys, the distinct keys holding each,
        kept for the check; None when no column is continuous."""
        cont = self.measured_columns()
        if not cont:
            return None
        if self._measured is None:
            seen = sum((nw.col(f"_n{i}") for i in range(1, len(self.names))), nw.col("_n0"))
            repeated = self.keys.filter(seen >= 2).select("_h1", "_h2")

            def cells(keys: tuple[np.ndarray, np.ndarray] | None = None,
                      values: tuple[np.ndarray, ...] | None = None,
                      rows: Mapping[int, tuple[np.ndarray, np.ndarray, np.ndarray]] | None
                      = None) -> Lazy:
                return self.engine.kept([Expansion(
                    split=s, columns=tuple(self.compared), schema=tuple(CELLS_SCHEMA.items()),
                    fn=partial(cells_batch, cols=self.cols, as_text=self.as_text,
                               measured=cont, seed=self.seed, keys=keys, values=values,
                               without=self.spec.without,
                               rows=None if rows is None else rows[i]),
                    concurrent=True) for i, s in enumerate(self.names)])
            everywhere = mine = None
            # the cells of repeated keys, then every cell of a value they hold: two passes,
            # never every cell of every row. The repeated keys' rows are read off the keyed
            # rows (their row numbers and keys shipped: no row is hashed again) up to
            # MAX_SHIPPED rows; beyond, their keys are shipped and every row is keyed again
            counts = _one(self.keys.filter(seen >= 2).select(  # one aggregate of the keys
                nw.len().alias("keys"), seen.sum().alias("rows")))
            if counts["rows"] <= MAX_SHIPPED:
                held_rows = (self.table.join(repeated, on=["_h1", "_h2"], how="semi")
                             .select("_s", "_r", "_h1", "_h2").collect().to_polars())
                mine = cells(rows=_rows_by_split(held_rows, len(self.names)))
            elif counts["keys"] <= MAX_SHIPPED:
                got = repeated.sort("_h1").collect().to_polars()
                first = got["_h1"].to_numpy()
                if np.all(first[1:] != first[:-1]):  # first halves unique (else: every cell)
                    mine = cells(keys=(first, got["_h2"].to_numpy()))
            if mine is not None:
                held = mine.select("j", "v").unique()
                if _count(held) <= MAX_SHIPPED * MAX_PASSES:
                    everywhere = self._holding(held.collect().to_polars(), len(cont), cells)
            if everywhere is None:
                everywhere = cells()
            if mine is None:
                mine = everywhere.join(repeated, on=["_h1", "_h2"], how="semi")
            shared = (everywhere.join(mine.select("j", "v").unique(), on=["j", "v"], how="semi")
                      .unique().group_by("j", "v").agg(nw.len().alias("k"))
                      .filter(nw.col("k") > 1).select("j", "v"))
            self._measured = self.engine.keep(
                mine.join(shared, on=["j", "v"], how="anti").select("_h1", "_h2", "j").unique()
                .with_columns(nw.col("j").cast(nw.Int64)))
        return self._measured

    @staticmethod
    def _holding(held: pl.DataFrame, columns: int, cells: Callable[..., Lazy]) -> Lazy:
        """The cells holding a ``held`` value (``j``, ``v``) of their column: one pass per
        :data:`MAX_SHIPPED` values (in column order, so a pass hashes only its columns), the
        passes' cells together (each cell is in one pass: the passes' values are disjoint)."""
        held = held.sort("j", "v")
        empty = np.zeros(0, dtype=np.int64)
        passes = []
        for lo in range(0, max(held.height, 1), MAX_SHIPPED):
            pairs = held.slice(lo, MAX_SHIPPED).partition_by("j", as_dict=True)
            passes.append(cells(values=tuple(pairs[(j,)]["v"].to_numpy() if (j,) in pairs
                                             else empty for j in range(columns))))
        return passes[0] if len(passes) == 1 else nw.concat(passes, how="vertical")

    def _known(self, i: int) -> Lazy | None:
        """The keys holding a measured value in a column continuous in split ``i``."""
        m = self.measured()
        mine = set(self.continuous()[self.names[i]])
        js = [j for j, c in enumerate(self.measured_columns()) if c in mine] \
            if m is not None else []
        if m is None or not js:
            return None
        return m.filter(nw.col("j").is_in(js)).select("_h1", "_h2").unique()

    def _flagged(self, i: int) -> Lazy:
        """The keys with ``known``: 1 when the key holds a measured value of split ``i``."""
        known = self._known(i)
        if known is None:
            return self.keys.with_columns(nw.lit(0).alias("known"))
        return self.keys.join(known.with_columns(nw.lit(1).alias("known")),
                              on=["_h1", "_h2"], how="left").with_columns(
            nw.col("known").fill_null(0))

    def chance(self, e: int, l: int) -> dict[str, Any]:
        """The chance baseline of pair (``e``, ``l``): the share of later rows expected to
        copy an earlier row by chance, and the one-sided p-value of the observed count against
        it, read off the key counts.

        Discrete data repeat naturally (statsmodels ``fair``: 1,039 of 6,366 rows copy
        another), so an honest random split puts copies of train rows into test. A later row
        drawn from the same distribution as the earlier split matches an earlier row about as
        often as an earlier row matches *another* earlier row, so the chance baseline is

            b = R / n_a,   R = earlier rows whose values occur at least twice in the earlier split

        (rows of a repeated key), leaving out rows holding a measured value (:meth:`measured`:
        a value of a continuous column that no differing row shares): two rows sharing a
        measured value to the last digit are copies (oversampling, augmentation), not
        coincidence, so continuous data -- also when rows were duplicated before the split --
        have no chance copies, and every copy counts. The observed share s = C / n_b (C later
        rows that copy an earlier row) is compared with b by a one-sided z-test of D = s - b
        against its distribution under an honest random split of the pooled rows
        (:func:`~auditor.stats.copies.split_null_from_counts`; with few patterns drawn,
        :func:`~auditor.stats.copies.drawn_p`): each value pattern seen m times in earlier +
        later puts X ~ Binomial(m, n_a / (n_a + n_b)) rows in earlier, adding X 1[X >= 2] to R
        and (m - X) 1[X >= 1] to C, so D's null mean mu and variance v are sums over patterns
        (independent, then conditioned on the earlier split's size); z = (D - mu) / sqrt(v),
        p = 1 - Phi(z). (A plug-in variance from b itself was 4x too wide at b = 0.7, missing
        5% planted copies, and anti-conservative at b = 0.002, with 1% of honest splits at
        p < 1e-4.) b = 0 does not end the test: a pattern seen twice in the two splits together
        (statsmodels ``anes96`` holds one such pair of answers) lands on both sides of a random
        split with probability 2 p (1 - p); only when no pattern repeats is there no chance
        copy. Graded value: the excess max(0, s - b).

        In mixed data (a continuous column null on some rows), copied later rows with a
        measured value (K of them, ``certain``) are never chance: they are left out of s and D
        and added to the excess, K / n_b + max(0, (C - K) / n_b - b), with p = 0 when K > 0
        (before, 100 copied measured rows hid in the fluctuation of 1,400 discrete chance
        copies). Unless the data repeat measured records by themselves
        (:func:`~auditor.stats.copies.natural_repeats`: some records repeat within a split, and
        the repeated ones are at most ``natural_repeats`` of the two splits' rows): then a copy
        of them is what an honest split of these rows makes as well, and every key enters b
        and the null alike.
        """
        s = self.summary()
        count = self.copies(e, l)
        if not count and not s[f"r{e}"]:  # nothing copied, nothing repeats: nothing to weigh
            return no_chance(count)
        ne, nl = nw.col(f"_n{e}"), nw.col(f"_n{l}")
        flagged = self._flagged(e)
        got = _one(flagged.select(
            _when((ne >= 2) & (nw.col("known") == 0), ne).sum().alias("rn"),
            _when((ne > 0) & (nl > 0) & (nw.col("known") == 1), nl).sum().alias("certain")))
        repeating, certain = int(got["rn"]), int(got["certain"])
        natural: dict[str, int] = {}
        if certain:  # do the data repeat measured records by themselves?
            row = _one(flagged.filter(nw.col("known") == 1).select(
                (_when(ne >= 2, ne) + _when(nl >= 2, nl)).sum().alias("within"),
                _when(ne + nl >= 2, ne + nl).sum().alias("pooled")))
            n_a, n_b = self.rows[self.names[e]], self.rows[self.names[l]]
            natural = natural_repeats(int(row["within"]), int(row["pooled"]), n_a + n_b,
                                      self.spec.natural_repeats)
        if natural:
            flagged = self.keys.with_columns(nw.lit(0).alias("known"))
            certain, repeating = 0, s[f"r{e}"]
        if not count and not repeating:
            return no_chance(count)
        n_a, n_b = self.rows[self.names[e]], self.rows[self.names[l]]
        m = (flagged.filter(nw.col("known") == 0).select((ne + nl).alias("m"))
             .filter(nw.col("m") >= 2).group_by("m").agg(nw.len().alias("k"))
             .collect().to_polars())
        if not m.height:  # no row repeats in the two splits together: no chance copy
            return no_chance(count)
        m = m.sort("m")
        b = repeating / n_a if n_a else 0.0
        return chance_from_counts(count, certain, n_a, n_b, b, repeating,
                                  m["m"].to_numpy().astype(np.int64),
                                  m["k"].to_numpy().astype(np.int64)) | natural

    # -- near copies ---------------------------------------------------------------------------
    def near_rows(self, e: int, l: int) -> int:
        """Later rows whose near key occurs in the earlier split (exact copies included)."""
        near = self.keys.group_by("_rh1", "_rh2").agg(nw.col(f"_n{e}").sum().alias("a"),
                                                     nw.col(f"_n{l}").sum().alias("b"))
        return int(_one(near.select(_when((nw.col("a") > 0) & (nw.col("b") > 0),
                                          nw.col("b")).sum().alias("n")))["n"])

    # -- conflicting labels --------------------------------------------------------------------
    def _labelled(self, i: int) -> Lazy:
        return self.table.filter((nw.col("_s") == i) & ~nw.col("_y").is_null())

    def within_conflicts(self, i: int) -> tuple[int, int]:
        """Rows of split ``i`` (labelled) in groups of equal features holding two labels or
        more, and the number of such groups (every split's in one query)."""
        if self._conflicts is None:
            groups = (self.table.filter(~nw.col("_y").is_null())
                      .group_by("_s", "_fh1", "_fh2")
                      .agg(nw.len().alias("t"), nw.col("_y").n_unique().alias("L"))
                      .filter(nw.col("L") > 1))
            got = groups.group_by("_s").agg(nw.col("t").sum().alias("rows"),
                                             nw.len().alias("groups")).select(
                "_s", "rows", "groups").collect().to_polars()
            self._conflicts = {int(s): (int(r), int(g)) for s, r, g in got.iter_rows()}
        return self._conflicts.get(i, (0, 0))

    @staticmethod
    def _ends(a: Lazy) -> Lazy:
        """Per feature key of labelled rows ``a``: the smallest and largest label hash and the
        first row holding each."""
        ends = a.group_by("_fh1", "_fh2").agg(nw.col("_y").min().alias("lo_y"),
                                              nw.col("_y").max().alias("hi_y"))
        first = a.group_by("_fh1", "_fh2", "_y").agg(nw.col("_r").min().alias("_first"))
        return (ends.join(first.rename({"_y": "lo_y", "_first": "lo_row"}),
                          on=["_fh1", "_fh2", "lo_y"], how="inner")
                .join(first.rename({"_y": "hi_y", "_first": "hi_row"}),
                      on=["_fh1", "_fh2", "hi_y"], how="inner"))

    def across(self, e: int, l: int) -> Lazy:
        """Later labelled rows whose features occur in the earlier split with another label
        (all of them when the earlier rows hold two labels): ``_r``, the feature key and
        ``_y``. One ``group_by`` of the earlier rows (the smallest and largest label hash per
        feature key) and a join: which earlier row holds the other label is looked up for the
        examples only (:meth:`across_examples`)."""
        ends = self._labelled(e).group_by("_fh1", "_fh2").agg(
            nw.col("_y").min().alias("lo_y"), nw.col("_y").max().alias("hi_y"))
        return (self._labelled(l).join(ends, on=["_fh1", "_fh2"], how="inner")
                .filter((nw.col("_y") != nw.col("lo_y")) | (nw.col("_y") != nw.col("hi_y")))
                .select("_r", "_fh1", "_fh2", "_y"))

    def across_examples(self, e: int, l: int, limit: int) -> pl.DataFrame:
        """The first ``limit`` rows of :meth:`across` by row number, with ``row_a``: the
        first earlier row holding the smallest label hash of their features when their label
        differs from it, else the first holding the largest (the earlier rows of their feature
        keys alone are grouped)."""
        head = self.head(self.across(e, l), limit)
        a = self._labelled(e).filter(nw.col("_fh1").is_in(head["_fh1"].unique().to_list()))
        ends = self._ends(a).collect().to_polars()
        got = head.join(ends, on=["_fh1", "_fh2"], how="inner")
        return got.select("_r", pl.when(pl.col("_y") != pl.col("lo_y")).then(pl.col("lo_row"))
                          .otherwise(pl.col("hi_row")).alias("row_a")).sort("_r")

    def column(self, name: str, split: int, copied_from: int | None = None) -> np.ndarray:
        """A keyed column of split ``split`` in row order (of its rows copying a row of
        ``copied_from`` exactly, when given): brought here, for the polars engine's MinHash
        matching of free text."""
        rows = self.table.filter(nw.col("_s") == split)
        if copied_from is not None:
            rows = rows.join(self.firsts(copied_from, ("_h1", "_h2")), on=["_h1", "_h2"],
                             how="semi")
        return rows.sort("_r").select(name).collect().to_polars()[name].to_numpy()

    # -- example rows --------------------------------------------------------------------------
    def firsts(self, i: int, key: tuple[str, str]) -> Lazy:
        """Per ``key`` of split ``i``: its first row ``row_a``."""
        return (self.table.filter(nw.col("_s") == i).group_by(*key)
                .agg(nw.col("_r").min().alias("row_a")))

    def head(self, frame: Lazy, limit: int) -> pl.DataFrame:
        return frame.sort("_r").head(limit).collect().to_polars()


# ---------------------------------------------------------------------------------------------
# the operation
# ---------------------------------------------------------------------------------------------

def _ids(roles: Roles, engine: Operations, split: str) -> list[str]:
    have = set(engine.columns(split))
    return [c for c in dict.fromkeys(roles.columns.ids) if c in have]


class _Asked:
    """Rows of one split asked for by :class:`_Rows`: read after :meth:`_Rows.fetch`."""

    def __init__(self, rows: "_Rows", split: str, at: np.ndarray, wanted: list[str],
                 ids: list[str]) -> None:
        self.source, self.split, self.at, self.wanted, self.ids = rows, split, at, wanted, ids

    def frame(self) -> pl.DataFrame:
        """``wanted`` (the columns asked and the declared ids) of the rows, in the order
        asked."""
        if not self.wanted:
            return pl.DataFrame()
        rows, frame = self.source.got[self.split]
        return frame[np.searchsorted(rows, self.at)].select(self.wanted)


class _Rows:
    """The example rows :func:`row_copies` shows, asked for while it counts and fetched once
    at the end: one :meth:`~auditor.engines.operations.Operations.rows_at` per split with
    every row and column asked (on Spark each is a scan of the split; asked one by one they
    were 8-10 scans)."""

    def __init__(self, engine: Operations, roles: Roles) -> None:
        self.engine, self.roles = engine, roles
        self.asked: dict[str, tuple[list[np.ndarray], dict[str, None]]] = {}
        self.got: dict[str, tuple[np.ndarray, pl.DataFrame]] = {}

    def ask(self, split: str, rows: pl.Series | Sequence[int], columns: Sequence[str]
            ) -> _Asked:
        """``columns`` and the declared ids of ``rows`` of ``split``."""
        ids = _ids(self.roles, self.engine, split)
        wanted = list(dict.fromkeys([*columns, *ids]))
        at = np.asarray(rows, dtype=np.int64)
        if wanted:
            held, cols = self.asked.setdefault(split, ([], {}))
            held.append(at)
            cols.update(dict.fromkeys(wanted))
        return _Asked(self, split, at, wanted, ids)

    def fetch(self) -> None:
        for split, (held, cols) in self.asked.items():
            rows = np.unique(np.concatenate(held))
            self.got[split] = (rows, self.engine.rows_at(split, rows, list(cols)))


def _named(ids: list[str], got: pl.DataFrame, i: int, prefix: str) -> dict[str, Any]:
    return {f"{prefix}{k}": got[k][i] for k in ids}


def row_copies(engine: Operations, roles: Roles, spec: CopySpec) -> RowCopies:
    """:class:`~auditor.engines.operations.RowCopies` of the roles' splits compared on
    ``spec`` (module docstring), on any engine; with ``spec.without``, also the exact copies
    on every column but that one (:attr:`~auditor.engines.operations.RowCopies.without`),
    counted from the same keyed rows."""
    if not spec.cols and not spec.as_text:
        empty = SplitCopies(repeated=0, conflicts=0, groups=0, continuous=None)
        return RowCopies(splits={s: empty for s in roles.splits},
                         pairs={p: PairCopies(copies=0, chance=no_chance(0), near=None,
                                              conflicts=0) for p in roles.pairs()})
    try:
        t = KeyedRows(engine, roles, spec)
        copies = _counted(engine, roles, spec, t)
        rest = t.without()
        # its counts go (on polars, GBs at 10M rows); the rest reads the keyed rows alone. On
        # Spark what it persisted stays until the release below (on disk beyond 20M rows)
        del t
        if rest is not None:
            copies = replace(copies, without=_counted(
                engine, roles, rest[0], KeyedRows(engine, roles, rest[0], table=rest[1]),
                beyond={p: c.copies for p, c in copies.pairs.items()}))
        return copies
    finally:
        engine.release()


def _counted(engine: Operations, roles: Roles, spec: CopySpec, t: KeyedRows,
             beyond: Mapping[tuple[str, str], int] | None = None) -> RowCopies:
    """:func:`row_copies` read from the keyed rows ``t``. With ``beyond`` (the rows compared
    without a column, :attr:`~auditor.engines.operations.RowCopies.without`: what the judge
    reads is the pairs whose copies exceed the exact copies), the splits' counts only, and a
    pair's chance baseline and examples only where its copies exceed ``beyond``'s count for
    it (elsewhere ``no_chance`` and none: nothing beyond the exact copies to grade)."""
    names = list(roles.splits)
    limit = spec.max_examples
    shown = t.compared
    label = spec.label
    features = list(spec.features)
    rows = _Rows(engine, roles)
    todo: list[Callable[[], None]] = []  # examples built once their rows are fetched
    splits = {}
    for i, split in enumerate(names):
        repeated = t.repeated(i)
        if beyond is not None:
            splits[split] = SplitCopies(repeated=repeated, conflicts=0, groups=0,
                                        continuous=None)
            continue
        within, groups = t.within_conflicts(i) if t.labelled else (0, 0)
        examples: list[dict[str, Any]] = []
        if repeated and limit:
            first = t.firsts(i, ("_h1", "_h2"))
            head = t.head(t.table.filter(nw.col("_s") == i)
                          .join(first, on=["_h1", "_h2"], how="inner")
                          .filter(nw.col("_r") > nw.col("row_a")), limit)
            copy = rows.ask(split, head["_r"], shown)
            todo.append(partial(_copy_examples, examples, head, copy,
                                rows.ask(split, head["row_a"], copy.ids), shown))
        conflict_ex: list[dict[str, Any]] = []
        if within and limit and label is not None:
            first = t._labelled(i).group_by("_fh1", "_fh2").agg(
                nw.col("_r").min().alias("row_a"), nw.col("_y").n_unique().alias("L"))
            head = t.head(t._labelled(i).join(first.filter(nw.col("L") > 1),
                                              on=["_fh1", "_fh2"], how="inner"), limit)
            todo.append(partial(_conflict_examples, conflict_ex, head,
                                rows.ask(split, head["_r"], [*features, label]),
                                rows.ask(split, head["row_a"], [label]), features, label))
        splits[split] = SplitCopies(
            repeated=repeated, conflicts=within, groups=groups,
            continuous=tuple(t.continuous()[split]) if repeated else None,
            examples=examples, conflict_examples=conflict_ex)
    pairs = {}
    for (earlier, later), (e, l) in zip(roles.pairs(), t.pair_idx):
        copies = t.copies(e, l)
        pair_ex: list[dict[str, Any]] = []
        if beyond is not None and copies <= beyond[(earlier, later)]:
            pairs[(earlier, later)] = PairCopies(copies=copies, chance=no_chance(copies),
                                                 near=None, conflicts=0)
            continue
        if copies and limit:
            head = t.head(t.table.filter(nw.col("_s") == l).join(
                t.firsts(e, ("_h1", "_h2")), on=["_h1", "_h2"], how="inner"), limit)
            todo.append(partial(_pair_examples, pair_ex, head, earlier, later,
                                rows.ask(later, head["_r"], shown),
                                rows.ask(earlier, head["row_a"], []), shown))
        near: int | None = None
        near_ex: list[dict[str, Any]] = []
        summary: dict[str, Any] = {}
        if t.near and not t.text_near:
            near = max(0, t.near_rows(e, l) - copies)
            if near and limit:
                exact = t.firsts(e, ("_h1", "_h2")).select("_h1", "_h2")
                head = t.head(t.table.filter(nw.col("_s") == l)
                              .join(exact, on=["_h1", "_h2"], how="anti")
                              .join(t.firsts(e, ("_rh1", "_rh2")), on=["_rh1", "_rh2"],
                                    how="inner"), limit)
                cols = list(spec.cols)
                todo.append(partial(_near_examples, near_ex, head, earlier, later,
                                    rows.ask(earlier, head["row_a"], cols),
                                    rows.ask(later, head["_r"], cols), cols))
        elif t.text_near:
            try:
                near, near_ex, summary = engine.near_text_copies(
                    earlier, later, spec, partial(t.column, "_r", l, copied_from=e),
                    lambda split: t.column("_rh1", names.index(split)))
            except NotImplementedError:
                near = None
        conflicts = 0
        across_ex: list[dict[str, Any]] = []
        if t.labelled and label is not None:
            conflicts = _count(t.across(e, l))
            if conflicts and limit:
                head = t.across_examples(e, l, limit)
                todo.append(partial(_across_examples, across_ex, head, earlier, later,
                                    rows.ask(later, head["_r"], [*features, label]),
                                    rows.ask(earlier, head["row_a"], [label]), features,
                                    label))
        pairs[(earlier, later)] = PairCopies(
            copies=copies, chance=t.chance(e, l), near=near, conflicts=conflicts,
            examples=pair_ex, near_examples=near_ex, near_summary=summary,
            conflict_examples=across_ex)
    rows.fetch()
    for build in todo:
        build()
    not_matched = tuple(spec.text_cols) if spec.near and spec.text_cols and any(
        p.near is None for p in pairs.values()) else ()
    return RowCopies(splits=splits, pairs=pairs, not_matched=not_matched)


def _copy_examples(out: list[dict[str, Any]], head: pl.DataFrame, copy: _Asked, first: _Asked,
                   shown: list[str]) -> None:
    """Within-split copies: the later row and the first row it copies, with their ids."""
    got, firsts, ids = copy.frame(), first.frame(), copy.ids
    values = cells(got, shown)
    out += [{"row": r, "copy_of_row": f,
             **{(f"id {k}" if k in ("row", "copy_of_row", "values") else k): got[k][j]
                for k in ids},
             **_named(ids, firsts, j, "copy_of "), "values": values[j]}
            for j, (r, f) in enumerate(zip(head["_r"], head["row_a"]))]


def _conflict_examples(out: list[dict[str, Any]], head: pl.DataFrame, row: _Asked,
                       first: _Asked, features: list[str], label: str) -> None:
    """Conflicting labels within a split: a row and the first row of its group."""
    got, firsts = row.frame(), first.frame()
    values = cells(got, features)
    out += [{"row": r, "first_row_of_group": f, label: json_value(got[label][j]),
             f"{label} of first row": json_value(firsts[label][j]), "features": values[j]}
            for j, (r, f) in enumerate(zip(head["_r"], head["row_a"]))]


def _pair_examples(out: list[dict[str, Any]], head: pl.DataFrame, earlier: str, later: str,
                   copy: _Asked, source: _Asked, shown: list[str]) -> None:
    """Exact copies across a pair: the later row and the earlier row it copies."""
    got_b, got_a = copy.frame(), source.frame()
    values = cells(got_b, shown)
    out += [{f"{earlier}_row": ra, f"{later}_row": rb,
             **_named(source.ids, got_a, j, f"{earlier} "),
             **_named(copy.ids, got_b, j, f"{later} "), "values": values[j]}
            for j, (ra, rb) in enumerate(zip(head["row_a"], head["_r"]))]


def _across_examples(out: list[dict[str, Any]], head: pl.DataFrame, earlier: str, later: str,
                     row: _Asked, source: _Asked, features: list[str], label: str) -> None:
    """Conflicting labels across a pair: the later row and an earlier row of other label."""
    got_b, got_a = row.frame(), source.frame()
    values = cells(got_b, features)
    out += [{f"{earlier}_row": ra, f"{later}_row": rb,
             f"{label} in {earlier}": json_value(got_a[label][j]),
             f"{label} in {later}": json_value(got_b[label][j]), "features": values[j]}
            for j, (ra, rb) in enumerate(zip(head["row_a"], head["_r"]))]


def _near_examples(out: list[dict[str, Any]], head: pl.DataFrame, earlier: str, later: str,
                   first: _Asked, second: _Asked, cols: list[str]) -> None:
    """Near pairs (``row_a``, ``_r``) with the columns whose raw values differ."""
    a, b = first.frame(), second.frame()
    out += [{f"{earlier}_row": ra, f"{later}_row": rb,
             **_named(first.ids, a, j, f"{earlier} "), **_named(second.ids, b, j, f"{later} "),
             "differences": differences(a.select(cols).row(j), b.select(cols).row(j), cols)}
            for j, (ra, rb) in enumerate(zip(head["row_a"], head["_r"]))]
