"""``leakage.duplicates`` measured on the spark engine (:meth:`SparkOperations.row_copies`,
:func:`row_copies`): exact copies across and within splits with their chance baseline, near
copies and conflicting labels, with DataFrame built-ins over every row; judged by the check's
one ``judge``:

- rows (:class:`RowTable`): one pass over the unioned splits gives every row a
  128-bit whole-row key (:func:`row_key`: two ``xxhash64`` over null masks and values), a
  feature key and a near key; one ``groupBy`` of the whole-row key is the persisted table every
  count is an aggregate of (no join on the compared columns, no exact distinct count per
  column: :func:`column_stats` sketches them and counts exactly only near the cut).
- near copies: every compared column normalised by Spark expressions as
  :func:`auditor.engines.polars_near.normalised_frame` does (floats and decimals rounded to
  ``significant_digits`` significant digits by :func:`round_significant_frame`, the same arithmetic
  as :func:`~auditor.engines.polars_near.round_significant`: e = floor(log10|v|),
  k = digits - 1 - e, m = round-half-even(v * 10^k) with exact powers of ten, m / 10 when it
  reaches 10^digits; strings lowercased, whitespace runs collapsed to one space and the ends
  trimmed, and the rows holding a non-ASCII character NFKC-normalised and case-folded by a
  Python UDF, used only on string columns where an aggregate found such a character: Spark has
  no Unicode normalisation built-in; standard library only and without Arrow, so any executor
  Python 3 runs it; it agrees with polars on every code point but the ~150 that Unicode
  assigned after the executor Python's Unicode version). Later rows whose near key occurs in
  the earlier split (a ``groupBy`` of the near key over the keyed table) minus the exact
  copies = ``near_duplicate_rows``. Free-text columns (``columns.text``, MinHash/LSH on
  polars) are not matched on Spark: with one declared, near copies are reported as not computed
  (an info finding), never silently.
- conflicting labels: features normalised with floats exact, the label normalised likewise
  (null and NaN are no label); ``groupBy`` (feature key, label) then feature key gives per split
  the labelled rows, the smallest and largest label and the number of distinct labels, and per
  pair the later rows whose label the earlier rows of the key hold: a later row conflicts when
  its label differs from the earlier rows' smallest or largest label (all of them when the
  earlier rows hold two labels, else those with another label); within a split, every row of a
  feature key holding two labels or more.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from auditor.core.roles import Kind
from auditor.engines.spark_columns import col as _c, quoted

_NON_ASCII = "[^\\x00-\\x7F]"


# ---------------------------------------------------------------------------------------------
# normalisation as Spark expressions
# ---------------------------------------------------------------------------------------------

def _is_float_type(dtype: Any) -> bool:
    from pyspark.sql import types as T

    return isinstance(dtype, (T.FloatType, T.DoubleType, T.DecimalType))


def _is_string(data: Any, dtype: Any, col: str) -> bool:
    from pyspark.sql import types as T

    return data.kinds.get(col) in (Kind.CATEGORICAL, Kind.TEXT) or isinstance(dtype,
                                                                             T.StringType)


def _powers() -> list[float]:
    """10^i for i in -200..200 as numpy computes them: exact literals for |i| <= 22 (as
    ``_POW10`` of the polars code) and ``np.power(10.0, i)`` beyond (its two-step scaling)."""
    import numpy as np

    return [float(np.power(10.0, i)) for i in range(-_FAR, _FAR + 1)]


_FAR = 200


def _power_table() -> str:
    """The powers of :func:`_powers` as one SQL array literal (building it from 401 ``F.lit``
    calls per use costs seconds of driver round trips)."""
    return "array(" + ", ".join(f"{v!r}D" for v in _powers()) + ")"


def _power(k: str, table: str) -> str:
    """SQL: 10^k (integer expression ``k``, |k| <= 200) looked up in ``table`` (the name of
    a column holding :func:`_power_table`)."""
    return f"element_at({table}, CAST(({k}) + {_FAR + 1} AS INT))"


def _scale(v: str, k: str, table: str) -> str:
    """SQL: v * 10^k as :func:`auditor.engines.polars_near._scale`: exact powers for |k| <= 22
    (multiply for k >= 0, divide by 10^-k for k < 0); beyond, v * 10^h * 10^(k - h),
    h = floor(k / 2), with numpy's powers."""
    h = f"floor(({k}) / 2)"
    return (f"CASE WHEN abs({k}) > 22 THEN ({v}) * {_power(h, table)} * "
            f"{_power(f'({k}) - {h}', table)} WHEN ({k}) >= 0 THEN ({v}) * {_power(k, table)} "
            f"ELSE ({v}) / {_power(f'-({k})', table)} END")


def round_significant_frame(df: Any, cols: list[str], digits: int) -> Any:
    """``df`` with ``cols`` (cast to double) rounded to ``digits`` significant digits, half to
    even on the scaled value (:func:`auditor.engines.polars_near.round_significant` in
    Spark SQL): e = floor(log10|v|), k = digits - 1 - e, m = bround(v * 10^k); if
    |m| >= 10^digits then m = bround(m / 10), k = k - 1; result m * 10^-k. Null, NaN, +-inf and
    0 (also -0.0) are kept. ``bround`` of a double rounds its exact decimal expansion (ties are
    exact doubles), as numpy's ``round`` does. Three projections, so that no expression repeats
    another's logarithm (one nested expression overflows Spark's generated code), each one
    ``selectExpr`` of SQL text: a driver round trip per column, not per operator (28 columns
    built operator by operator cost 8 s of round trips)."""
    if not cols:
        return df
    names = {c: f"__r{i}" for i, c in enumerate(cols)}
    # the powers as one column of the projections (parsed once: as a literal in every
    # expression, 28 columns parsed 170 arrays of 401 literals, 2.4 s of analysis)
    table = "__auditor_p10"
    top = f"{10.0 ** digits!r}D"
    keep = [quoted(c) for c in df.columns]
    x = {c: f"CAST({quoted(c)} AS DOUBLE)" for c in cols}
    step = df.selectExpr(*keep, f"{_power_table()} AS {table}", *[
        f"CASE WHEN {x[c]} IS NOT NULL AND NOT isnan({x[c]}) AND {x[c]} != 0 "
        f"AND abs({x[c]}) != CAST('Infinity' AS DOUBLE) "
        f"THEN {digits - 1} - floor(log10(abs({x[c]}))) END AS {n}k"
        for c, n in names.items()])
    step = step.selectExpr(*keep, table, *[f"{n}k" for n in names.values()], *[
        f"bround({_scale(x[c], f'{n}k', table)}, 0) AS {n}m" for c, n in names.items()])
    step = step.selectExpr(*keep, table, *[e for n in names.values() for e in (
        f"CASE WHEN abs({n}m) >= {top} THEN bround({n}m / 10.0D, 0) ELSE {n}m END AS {n}m2",
        f"CASE WHEN abs({n}m) >= {top} THEN {n}k - 1 ELSE {n}k END AS {n}k2")])
    return step.selectExpr(*[
        f"CASE WHEN {names[c]}k2 IS NOT NULL THEN "
        f"{_scale(f'{names[c]}m2', f'-{names[c]}k2', table)} ELSE {x[c]} END AS {quoted(c)}"
        if c in names else quoted(c) for c in df.columns])


def fold_function() -> Callable[[Any], Any]:
    """The Python twin of :func:`auditor.engines.polars_near.normalise_strings` for one
    value: NFKC, case-fold, whitespace runs (Unicode White_Space, as the Rust regex's ``\\s``)
    to one space, ends stripped. Defined in a closure with local imports, so it is pickled by
    value: the executors need the standard library only, not auditor."""
    def fold(s: Any) -> Any:
        import re
        import unicodedata

        if s is None:
            return None
        ws = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
        t = unicodedata.normalize("NFKC", s).lower().casefold()
        return re.sub(f"[{ws}]+", " ", t).strip(" ")

    return fold


def normalise_string(col: Any, non_ascii: bool) -> Any:
    """Lowercase, whitespace runs to one space, ends trimmed (Spark built-ins: exact for ASCII);
    rows with a non-ASCII character through :func:`fold_function` when ``non_ascii`` (some row of
    the column holds one)."""
    from pyspark.sql import functions as F

    s = col.cast("string")
    ascii_form = F.trim(F.regexp_replace(F.lower(s), r"\s\s+|[^\S ]", " "))
    if not non_ascii:
        return ascii_form
    udf = F.udf(fold_function(), "string", useArrow=False)  # executors may lack pyarrow
    return F.coalesce(udf(F.when(s.rlike(_NON_ASCII), s)), ascii_form)


# ---------------------------------------------------------------------------------------------
# leakage.duplicates: one keyed row table for exact copies, near copies and conflicting labels
# ---------------------------------------------------------------------------------------------

APPROX_RSD = 0.01   # relative standard error of the distinct-count sketch (HyperLogLog++)
EXACT_BAND = 0.10   # sketched counts within 10% of the continuity cut are counted exactly
_SALT = "auditor.row-key"


def row_key(names: list[str]) -> tuple[str, str]:
    """SQL: two 64-bit hashes of the columns ``names`` (a 128-bit row key): ``xxhash64`` over
    null masks (one bit per value, 62 values per long: ``xxhash64`` skips a null, so without the
    mask (1, null) and (null, 1) would hash alike) and the values, the second one salted.
    Equal values give equal keys, as ``groupBy`` compares them (-0.0 = 0.0, every NaN equal;
    Spark >= 3.2 hashes -0.0 as 0.0); two different rows share a key with probability about
    2^-128 per pair, n^2 / 2^129 over n rows (< 10^-20 at 10^9 rows), so counts of keys are
    counts of distinct rows."""
    args = ", ".join([*null_masks(names), *(quoted(n) for n in names)])
    return f"xxhash64({args})", f"xxhash64('{_SALT}', {args})"


def null_masks(names: list[str]) -> list[str]:
    """SQL: one long per 62 of the columns ``names``: bit j of long b set when column
    62 b + j is null."""
    return ["CAST(0 AS BIGINT)" + "".join(
        f" + CASE WHEN {quoted(n)} IS NULL THEN {1 << j}L ELSE 0L END"
        for j, n in enumerate(names[start:start + 62]))
        for start in range(0, len(names), 62)]


def _union(data: Any, cols: list[str], ids: Sequence[str] = ()) -> Any:
    """Every split's ``cols`` as ``c0..`` under a split index ``_s`` (one frame, so that every
    aggregate is one job over all splits, and a column typed int in one split and long in
    another is widened alike before it is hashed), and the id columns ``ids`` as ``i0..``
    (carried to the example rows, never hashed)."""
    parts = [df.selectExpr(f"{i} AS _s", *[f"{quoted(c)} AS c{j}" for j, c in enumerate(cols)],
                           *[f"{quoted(c)} AS i{k}" for k, c in enumerate(ids)])
             for i, df in enumerate(data.splits.values())]
    out = parts[0]
    for p in parts[1:]:
        out = out.unionByName(p)
    return out


def non_ascii_columns(data: Any, cols: list[str]) -> set[str]:
    """The string columns of ``cols`` holding a non-ASCII character in some split: one row-wise
    aggregate (``max`` of a regex flag per string column) over the unioned splits."""
    from pyspark.sql import functions as F

    def measure() -> set[str]:
        u = _union(data, cols)
        schema = u.schema
        strings = [j for j, c in enumerate(cols)
                   if _is_string(data, schema[f"c{j}"].dataType, c)]
        if not strings:
            return set()
        row = u.agg(*[F.max(F.col(f"c{j}").cast("string").rlike(_NON_ASCII).cast("int"))
                      .alias(f"a{j}") for j in strings]).collect()[0]
        return {cols[j] for j in strings if row[f"a{j}"]}

    found: set[str] = data.cached(("spark.non_ascii", tuple(cols)), measure)
    return found


def column_stats(data: Any, cols: list[str]) -> dict[str, list[str]]:
    """Per split the continuous columns of ``cols`` (as :func:`auditor.engines.polars_rows.
    continuous_columns`: not boolean, n > 1 non-null values of which u >= n / 2 distinct); one
    aggregate over all splits with the columns stacked (a row per value: its hash; partial
    aggregation leaves one sketch per split and column to shuffle). u is sketched
    (``approx_count_distinct``, HyperLogLog++ with relative standard error :data:`APPROX_RSD`); a
    column whose sketch lies within :data:`EXACT_BAND` of the cut
    (u in [0.45 n, 0.55 n], ten standard errors) is counted exactly in a second aggregate, so
    the decision is the exact one but for a sketch error beyond ten standard errors. An exact
    distinct count of every column (40 of them: Spark expands each row 40 times) was the most
    expensive part of the check."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    def measure() -> dict[str, list[str]]:
        u = _union(data, cols)
        schema = u.schema
        cand = [j for j in range(len(cols)) if not isinstance(schema[f"c{j}"].dataType,
                                                                BooleanType)]
        items = [f"named_struct('j', {j}, 'h', CASE WHEN c{j} IS NOT NULL THEN xxhash64(c{j}) "
                 f"END)" for j in cand]
        rows: dict[int, dict[str, Any]] = {}
        if items:  # one sketch per (split, column): a row-wise sketch of 40 columns would be a
            # 64k-field aggregation buffer (slow code generation, 10+ MB task binaries)
            stacked = u.selectExpr("_s", f"explode(array({', '.join(items)})) AS v").select(
                "_s", "v.j", "v.h")
            for r in stacked.groupBy("_s", "j").agg(
                    F.approx_count_distinct("h", APPROX_RSD).alias("u"),
                    F.count("h").alias("n")).collect():
                rows.setdefault(r["_s"], {}).update(
                    {f"u{r['j']}": r["u"], f"n{r['j']}": r["n"]})
        exact = sorted({j for r in rows.values() for j in cand if r[f"n{j}"] > 1
                        and abs(r[f"u{j}"] - 0.5 * r[f"n{j}"]) <= EXACT_BAND * 0.5 * r[f"n{j}"]})
        if exact:
            for r in u.groupBy("_s").agg(*[F.count_distinct(f"c{j}").alias(f"u{j}")
                                           for j in exact]).collect():
                rows[r["_s"]].update({f"u{j}": r[f"u{j}"] for j in exact})
        continuous = {}
        for i, split in enumerate(data.split_names):
            r = rows.get(i)
            continuous[split] = [] if r is None else [
                cols[j] for j in cand if r[f"n{j}"] > 1 and r[f"u{j}"] >= 0.5 * r[f"n{j}"]]
        return continuous

    stats: dict[str, list[str]] = data.cached(("spark.column_stats", tuple(cols)), measure)
    return stats


class RowTable:
    """The rows of every split reduced once to keys, for ``leakage.duplicates``.

    One pass over the splits (unioned, split index ``_s``) computes per row: the whole-row key
    (:func:`row_key` over the values as loaded, nulls and NaN as values), the feature key over
    the features normalised as polars' ``normalised_frame(..., digits=None)`` does (strings
    lowercased and whitespace-collapsed, floats exact) with the normalised label ``_y`` (null
    and NaN: no label), the near key over every compared column normalised with floats
    rounded to ``digits`` significant digits. ``groupBy`` of the whole-row key (one shuffle of
    two longs and a few flags per row) gives the persisted table ``keys``: rows per split
    ``_n{i}`` and the row's other keys. Everything else is an aggregate of ``keys`` (no job
    reads the 40 columns again, no join on 40 columns): within-split copies, shared rows of
    every pair, the chance baseline's counts (with :meth:`flagged`'s measured values, read
    only when some key repeats or is shared), near copies (``groupBy`` of the near key),
    conflicting labels (``groupBy`` of (feature key, label), then of the feature key). Example
    rows are fetched by key from one split, only when there is something to show. The number
    of Spark jobs does not depend on the number of columns."""

    def __init__(self, data: Any, cols: list[str], features: list[str], label: str | None,
                 digits: int | None, never_chance: tuple[str, ...] = (),
                 natural_below: float = 0.0, ids: Sequence[str] = ()
                 ) -> None:
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        self.data, self.cols, self.features, self.label = data, cols, features, label
        self.ids = list(ids)  # declared id columns: carried to the example rows
        self.never_chance = set(never_chance)  # columns the chance baseline's continuity skips
        self.natural_below = natural_below  # CopySpec.natural_repeats
        self.names = data.split_names
        self._continuous: dict[str, list[str]] | None = None
        non_ascii = non_ascii_columns(data, cols)
        u = _union(data, cols, self.ids)
        schema = u.schema
        raw = [f"c{j}" for j in range(len(cols))]
        strings = [j for j in range(len(cols))
                   if _is_string(data, schema[raw[j]].dataType, cols[j])]
        # SQL text (one driver round trip per column, not one per operator); the string
        # columns normalised as expressions (their UDF cannot be named in SQL text)
        step = u.selectExpr("_s", *raw, *[f"i{k}" for k in range(len(self.ids))],
                            *[f"{raw[j]} AS f{j}" for j in range(len(cols)) if j not in strings])
        if strings:
            step = step.withColumns({f"f{j}": normalise_string(F.col(raw[j]), cols[j] in non_ascii)
                                     for j in strings})
        self.near = digits is not None
        if self.near:
            floats = [f"r{j}" for j in range(len(cols)) if j not in strings
                      and _is_float_type(schema[raw[j]].dataType)]
            step = round_significant_frame(
                step.selectExpr("*", *[f"f{j} AS r{j}" for j in range(len(cols))]),
                floats, digits or 0)
        h1, h2 = row_key(raw)
        extra = [f"{h1} AS _h1", f"{h2} AS _h2"]
        self.fidx = [cols.index(c) for c in features]
        if label is not None and features:
            y = f"f{cols.index(label)}"
            if _is_float_type(schema[f"c{cols.index(label)}"].dataType):
                y = f"CASE WHEN NOT isnan({y}) THEN {y} END"
            f1, f2 = row_key([f"f{j}" for j in self.fidx])
            extra += [f"{f1} AS _fh1", f"{f2} AS _fh2", f"{y} AS _y"]
        if self.near:
            n1, n2 = row_key([f"r{j}" for j in range(len(cols))])
            extra += [f"{n1} AS _rh1", f"{n2} AS _rh2"]
        self.rows = step.selectExpr("*", *extra)  # per row, not persisted: examples read it
        carried = [c for c in ("_fh1", "_fh2", "_y", "_rh1", "_rh2") if c in self.rows.columns]
        self.keys = (self.rows.groupBy("_h1", "_h2").agg(
            *[F.expr(f"CAST(sum(CASE WHEN _s = {i} THEN 1 ELSE 0 END) AS BIGINT) AS _n{i}")
              for i in range(len(self.names))],
            *[F.expr(f"max({c}) AS {c}") for c in carried])
            .persist(StorageLevel.MEMORY_AND_DISK))
        self._conflicts: Any = None
        self._flagged: Any = None
        self._summary: dict[str, int] | None = None
        self._counts: dict[str, int] | None = None

    @property
    def continuous(self) -> dict[str, list[str]]:
        """Per split its continuous columns (:func:`column_stats`), measured on first use: the
        stacked sketch is needed only when some key repeats or is shared."""
        if self._continuous is None:
            self._continuous = column_stats(self.data, self.cols)
        return self._continuous

    def _measured(self) -> list[int]:
        """Indices of the columns continuous in some split (the chance baseline's candidates)."""
        return sorted({self.cols.index(c) for cs in self.continuous.values() for c in cs
                       if c not in self.never_chance})  # as polars: compared columns only

    def flagged(self) -> Any:
        """``keys`` with ``_p{b}`` (bit j of long b: the key holds a *measured* value in column
        62 b + j, one no key with other values holds: :func:`auditor.engines.polars_rows.
        measured_rows`), for the keys seen at least twice (the others never enter the chance
        baseline). One stacked pass of (column, value, key) cells of the continuous columns:
        the values of repeated keys, the distinct keys holding each of them, the keys holding
        a value no other key holds; persisted on first use."""
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        cont = self._measured()
        if self._flagged is None and cont:
            seen = sum(F.col(f"_n{i}") for i in range(len(self.names)))
            repeated = self.keys.where(seen >= 2).select("_h1", "_h2")
            schema = self.rows.schema

            def value(j: int) -> Any:  # -0.0 is 0.0 (as polars and the row key compare)
                c = F.col(f"c{j}")
                return (c + F.lit(0.0) if _is_float_type(schema[f"c{j}"].dataType)
                        else c).cast("string")

            cells = (self.rows.select("_h1", "_h2", F.explode(F.array(*[
                F.struct(F.lit(j).alias("j"), value(j).alias("v")) for j in cont]))
                .alias("x")).select("_h1", "_h2", "x.j", "x.v").where(F.col("v").isNotNull()))
            mine = cells.join(repeated, ["_h1", "_h2"], "left_semi")
            shared = (cells.join(mine.select("j", "v").distinct(), ["j", "v"], "left_semi")
                      .distinct().groupBy("j", "v").count().where(F.col("count") > 1))
            blocks = range(max(cont) // 62 + 1)
            bits = (mine.join(shared, ["j", "v"], "left_anti").groupBy("_h1", "_h2").agg(*[
                F.expr(f"bit_or(CASE WHEN j >= {62 * b} AND j < {62 * (b + 1)} "
                       f"THEN shiftleft(1L, j - {62 * b}) ELSE 0L END) AS _p{b}")
                for b in blocks]))
            self._flagged = (self.keys.join(bits, ["_h1", "_h2"], "left")
                             .fillna(0, subset=[f"_p{b}" for b in blocks])
                             .persist(StorageLevel.MEMORY_AND_DISK))
        return self._flagged if cont else self.keys

    def _known(self, i: int) -> Any:
        """1 when the key holds a measured value in a continuous column of split ``i``, else 0
        (an expression over :meth:`flagged`)."""
        from pyspark.sql import functions as F

        known = F.lit(False)
        mine = set(self.cols.index(c) for c in self.continuous[self.names[i]])
        cont = [j for j in self._measured() if j in mine]
        for b in range(max(cont) // 62 + 1 if cont else 0):
            bits = sum(1 << (j - 62 * b) for j in cont if 62 * b <= j < 62 * (b + 1))
            if bits:
                known = known | (F.col(f"_p{b}").bitwiseAND(F.lit(bits).cast("long")) != 0)
        return known.cast("int")

    def close(self) -> None:
        self.keys.unpersist()
        if self._flagged is not None:
            self._flagged.unpersist()
        if self._conflicts is not None:
            self._conflicts.unpersist()

    def _i(self, split: str) -> int:
        return int(self.names.index(split))

    # -- exact copies --------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """One aggregate of ``keys``: per split the distinct rows, rows in repeated keys and of
        those the rows without a value in the split's continuous columns; per pair the shared
        keys, the rows of each split holding one, and the later rows holding one with a
        continuous value of the earlier split (never chance copies)."""
        from pyspark.sql import functions as F

        def measure() -> dict[str, Any]:
            n = {i: F.col(f"_n{i}") for i in range(len(self.names))}
            exprs = []
            for i in n:
                exprs += [F.count(F.when(n[i] > 0, 1)).alias(f"d{i}"),
                          F.sum(F.when(n[i] >= 2, n[i]).otherwise(0)).alias(f"r{i}")]
            for e, l in self._pairs():
                both = (n[e] > 0) & (n[l] > 0)
                exprs += [F.count(F.when(both, 1)).alias(f"sh{e}_{l}"),
                          F.sum(F.when(both, n[e]).otherwise(0)).alias(f"re{e}_{l}"),
                          F.sum(F.when(both, n[l]).otherwise(0)).alias(f"rl{e}_{l}")]
            row = self.keys.agg(*exprs).collect()[0].asDict()
            out = {key: int(v or 0) for key, v in row.items()}
            need = [i for i in n if out[f"r{i}"]]
            pairs = [(e, l) for e, l in self._pairs() if out[f"sh{e}_{l}"]]
            # continuity only when some key repeats in a split or is shared by a pair (as the
            # polars detector, which surveys the columns only then): else both counts are 0
            out.update({f"rn{i}": 0 for i in n})
            out.update({f"ce{e}_{l}": 0 for e, l in self._pairs()})
            if need or pairs:
                k = {i: self._known(i) for i in set(need) | {e for e, _ in pairs}}
                more = [F.sum(F.when((n[i] >= 2) & (k[i] == 0), n[i]).otherwise(0))
                        .alias(f"rn{i}") for i in need]
                more += [F.sum(F.when((n[e] > 0) & (n[l] > 0) & (k[e] == 1), n[l])
                               .otherwise(0)).alias(f"ce{e}_{l}") for e, l in pairs]
                row = self.flagged().agg(*more).collect()[0].asDict()
                out.update({key: int(v or 0) for key, v in row.items()})
            return out

        if self._summary is None:
            self._summary = measure()
        return self._summary

    def _pairs(self) -> list[tuple[int, int]]:
        return [(self._i(a), self._i(b)) for a, b in self.data.pairs()]

    def repeated_rows(self, split: str) -> int:
        """Rows that repeat an earlier row of the split (rows minus distinct rows)."""
        i = self._i(split)
        return int(self.data.rows(split) - self.summary()[f"d{i}"])

    def copies(self, earlier: str, later: str) -> int:
        e, l = self._i(earlier), self._i(later)
        return int(self.summary()[f"rl{e}_{l}"])

    def chance(self, earlier: str, later: str) -> dict[str, Any]:
        """:func:`auditor.engines.polars_rows.copy_chance` from the key counts: R = earlier
        rows in a repeated key holding no measured value of ``earlier``'s continuous columns;
        the null distribution of D from the counts of counts m = rows of both splits per key
        (keys holding a measured value left out); later copies holding one counted in full --
        unless the data repeat measured records by themselves (then every key counts)."""
        import numpy as np
        from pyspark.sql import functions as F

        from auditor.stats.copies import chance_from_counts, natural_repeats, no_chance

        e, l = self._i(earlier), self._i(later)
        s = self.summary()
        n_a, n_b = self.data.rows(earlier), self.data.rows(later)
        count, certain = s[f"rl{e}_{l}"], s[f"ce{e}_{l}"]
        if not count and not s[f"rn{e}"]:  # nothing copied, nothing repeats: as polars
            return no_chance(count)
        known = self._known(e)
        natural: dict[str, int] = {}
        if certain:  # do the data repeat measured records by themselves? (as polars)
            ne, nl = F.col(f"_n{e}"), F.col(f"_n{l}")
            row = self.flagged().where(known == 1).agg(
                F.sum(F.when(ne >= 2, ne).otherwise(0) + F.when(nl >= 2, nl).otherwise(0)),
                F.sum(F.when(ne + nl >= 2, ne + nl).otherwise(0))).collect()[0]
            natural = natural_repeats(int(row[0] or 0), int(row[1] or 0), n_a + n_b,
                                      self.natural_below)
            if natural:
                known, certain = F.lit(0), 0
        repeating = s[f"r{e}"] if natural else s[f"rn{e}"]
        b = repeating / n_a if n_a else 0.0
        m = (self.flagged().where(known == 0)
             .select((F.col(f"_n{e}") + F.col(f"_n{l}")).alias("m")).where(F.col("m") >= 2)
             .groupBy("m").count().collect())
        if not m:  # no row repeats in the two splits together: no chance copy
            return no_chance(count)
        sizes = np.array([int(r["m"]) for r in m], dtype=np.int64)
        n_patterns = np.array([int(r["count"]) for r in m], dtype=np.int64)
        return chance_from_counts(count, certain, n_a, n_b, b, repeating, sizes,
                                  n_patterns) | natural

    def copy_examples(self, earlier: str, later: str, limit: int
                      ) -> list[tuple[Any, int, int, tuple[Any, ...]]]:
        """At most ``limit`` shared rows (values, rows in earlier, rows in later, the declared
        ids of one of its rows in the later split), most copied first (ties by key): the top
        keys, then their values from the later split."""
        from pyspark.sql import functions as F

        e, l = self._i(earlier), self._i(later)
        if limit <= 0 or not self.copies(earlier, later):
            return []
        top = (self.keys.where((F.col(f"_n{e}") > 0) & (F.col(f"_n{l}") > 0))
               .orderBy(F.col(f"_n{l}").desc(), F.col(f"_n{e}").desc(), "_h1", "_h2")
               .select("_h1", "_h2", f"_n{e}", f"_n{l}").limit(limit).collect())
        values = self._values(l, "_h1", "_h2", [r[0] for r in top],
                              [f"c{j}" for j in range(len(self.cols))],
                              smallest=[f"i{k}" for k in range(len(self.ids))])
        n = len(self.cols)
        out = []
        for r in top:
            got = values.get((r[0], r[1]))
            out.append((got[:n] if got else None, int(r[2]), int(r[3]),
                        tuple(got[n:]) if got else ()))
        return out

    def _values(self, split: int, k1: str, k2: str, firsts: list[int], columns: list[str],
                where: Any = None, smallest: Sequence[str] = ()
                ) -> dict[tuple[int, int], tuple[Any, ...]]:
        """``columns`` of one row per key (``k1``, ``k2``) of ``split`` whose first hash is in
        ``firsts``, then ``smallest``'s values of the row with the smallest of them (the same
        row from run to run: the declared ids of a repeated value): one scan of that split,
        one row per key to the driver."""
        from pyspark.sql import functions as F

        if not firsts:
            return {}
        cond = (F.col("_s") == split) & F.col(k1).isin(firsts)
        if where is not None:
            cond = cond & where
        rows = self.rows.where(cond)
        if not smallest:
            got = rows.dropDuplicates([k1, k2]).select(k1, k2, *columns).collect()
            return {(r[0], r[1]): tuple(r[2:]) for r in got}
        got = rows.groupBy(k1, k2).agg(*[F.first(c).alias(c) for c in columns],
                                       F.min(F.struct(*smallest)).alias("_least")).collect()
        return {(r[0], r[1]): (*[r[c] for c in columns], *r["_least"]) for r in got}

    # -- near copies ---------------------------------------------------------------------------
    def near_copies(self, earlier: str, later: str, limit: int) -> tuple[int, list[Any]]:
        """Later rows whose near key occurs in ``earlier`` (exact copies included), and at most
        ``limit`` examples (normalised values, rows in earlier, rows in later)."""
        from pyspark.sql import functions as F

        e, l = self._i(earlier), self._i(later)
        near = self.keys.groupBy("_rh1", "_rh2").agg(
            F.sum(f"_n{e}").alias("a"), F.sum(f"_n{l}").alias("b"))
        shared = near.where((F.col("a") > 0) & (F.col("b") > 0))
        rows = int(shared.agg(F.sum("b").alias("n")).collect()[0]["n"] or 0)
        if rows <= self.copies(earlier, later) or limit <= 0:
            return rows, []
        top = (shared.orderBy(F.col("b").desc(), F.col("a").desc(), "_rh1", "_rh2")
               .limit(limit).collect())
        values = self._values(l, "_rh1", "_rh2", [r["_rh1"] for r in top],
                              [f"r{j}" for j in range(len(self.cols))])
        return rows, [(values.get((r["_rh1"], r["_rh2"])), int(r["a"]), int(r["b"]))
                      for r in top]

    # -- conflicting labels --------------------------------------------------------------------
    def conflict_table(self) -> Any:
        """Per feature key: per split i the labelled rows ``t{i}``, smallest and largest label
        ``lo{i}``/``hi{i}`` and the number of distinct labels ``L{i}``; per pair the later rows
        whose label occurs among the earlier rows of the key ``ag{e}_{l}`` (persisted: one
        shuffle by feature key serves both aggregations)."""
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        if self._conflicts is None:
            ns = range(len(self.names))
            by_label = (self.keys.where(F.col("_y").isNotNull())
                        .repartition("_fh1", "_fh2")
                        .groupBy("_fh1", "_fh2", "_y")
                        .agg(*[F.sum(f"_n{i}").alias(f"_n{i}") for i in ns]))
            exprs = []
            for i in ns:
                has = F.col(f"_n{i}") > 0
                exprs += [F.sum(f"_n{i}").alias(f"t{i}"),
                          F.min(F.when(has, F.col("_y"))).alias(f"lo{i}"),
                          F.max(F.when(has, F.col("_y"))).alias(f"hi{i}"),
                          F.count(F.when(has, 1)).alias(f"L{i}")]
            for e, l in self._pairs():
                exprs.append(F.sum(F.when(F.col(f"_n{e}") > 0, F.col(f"_n{l}")).otherwise(0))
                             .alias(f"ag{e}_{l}"))
            self._conflicts = (by_label.groupBy("_fh1", "_fh2").agg(*exprs)
                               .persist(StorageLevel.MEMORY_AND_DISK))
        return self._conflicts

    def _across(self, e: int, l: int) -> Any:
        """Later rows per feature key that conflict with the earlier split: all of them when
        the earlier rows hold two labels or more, else those with another label."""
        from pyspark.sql import functions as F

        return F.when(F.col(f"t{e}") > 0, F.when(F.col(f"L{e}") > 1, F.col(f"t{l}"))
                      .otherwise(F.col(f"t{l}") - F.col(f"ag{e}_{l}"))).otherwise(0)

    def conflict_counts(self) -> dict[str, int]:
        """One aggregate: per split the rows and groups of feature keys with two labels or
        more; per pair the conflicting later rows."""
        from pyspark.sql import functions as F

        def measure() -> dict[str, int]:
            t = self.conflict_table()
            exprs = []
            for i in range(len(self.names)):
                many = F.col(f"L{i}") > 1
                exprs += [F.sum(F.when(many, F.col(f"t{i}")).otherwise(0)).alias(f"wr{i}"),
                          F.count(F.when(many, 1)).alias(f"wg{i}")]
            for e, l in self._pairs():
                exprs.append(F.sum(self._across(e, l)).alias(f"x{e}_{l}"))
            row = t.agg(*exprs).collect()[0].asDict()
            return {key: int(v or 0) for key, v in row.items()}

        if self._counts is None:
            self._counts = measure()
        return self._counts

    def across_examples(self, earlier: str, later: str, limit: int) -> list[tuple[Any, ...]]:
        """At most ``limit`` conflicting later rows: (earlier label, later label, features)."""
        from pyspark.sql import functions as F

        e, l = self._i(earlier), self._i(later)
        if limit <= 0:
            return []
        keys = (self.conflict_table().where(self._across(e, l) > 0)
                .orderBy("_fh1", "_fh2").select("_fh1", "_fh2", f"lo{e}", f"hi{e}")
                .limit(limit).collect())
        cond = F.lit(False)
        for k1, k2, lo, hi in keys:
            cond = cond | ((F.col("_fh1") == k1) & (F.col("_fh2") == k2)
                           & ((F.col("_y") != F.lit(lo)) | (F.col("_y") != F.lit(hi))))
        bounds = {(k1, k2): (lo, hi) for k1, k2, lo, hi in keys}
        got = (self.rows.where((F.col("_s") == l) & F.col("_fh1").isin([k[0] for k in keys])
                               & cond)
               .select("_fh1", "_fh2", "_y", *[f"f{j}" for j in self.fidx])
               # rows of one (features key, label) are the same row: this order makes the
               # examples the same on every run (DESIGN: deterministic evidence)
               .orderBy("_fh1", "_fh2", "_y").limit(limit).collect())
        out = []
        for r in got:
            lo, hi = bounds[(r[0], r[1])]
            out.append((lo if r[2] != lo else hi, r[2], tuple(r[3:])))
        return out

    def within_examples(self, split: str, limit: int) -> list[tuple[Any, ...]]:
        """At most ``limit`` feature groups of ``split`` with two labels or more, largest
        first: (rows, distinct labels, features)."""
        from pyspark.sql import functions as F

        i = self._i(split)
        if limit <= 0:
            return []
        top = (self.conflict_table().where(F.col(f"L{i}") > 1)
               .orderBy(F.col(f"t{i}").desc(), "_fh1", "_fh2")
               .select("_fh1", "_fh2", f"t{i}", f"L{i}").limit(limit).collect())
        values = self._values(i, "_fh1", "_fh2", [r[0] for r in top],
                              [f"f{j}" for j in self.fidx], F.col("_y").isNotNull())
        return [(int(r[2]), int(r[3]), values.get((r[0], r[1]))) for r in top]


class _Splits:
    """What :class:`RowTable` reads of a run: the engine's frames (columns compared as text
    cast to strings), the roles' splits, kinds and pairs, the engine's row counts and cache."""

    def __init__(self, engine: Any, roles: Any, as_text: tuple[str, ...]) -> None:

        self.engine, self.roles = engine, roles
        self.splits = {s: (df.withColumns({c: _c(c).cast("string") for c in as_text})
                           if as_text else df) for s, df in engine.frames.items()}
        self.split_names = list(roles.splits)
        self.kinds = roles.kinds

    def pairs(self) -> list[tuple[str, str]]:
        return list(self.roles.pairs())

    def rows(self, split: str) -> int:
        return int(self.engine.rows(split))

    def cached(self, key: Any, compute: Callable[[], Any]) -> Any:
        return self.engine.cached(key, compute)


def carried_ids(engine: Any, roles: Any, cols: list[str]) -> list[str]:
    """The declared id columns an example row can carry: present in every split with one
    Spark type that is not nested (a union of the splits needs one type per column)."""
    out = []
    for c in dict.fromkeys(roles.columns.ids):
        if c in cols or roles.kinds.get(c) in (None, Kind.NESTED):
            continue
        types = {df.schema[c].dataType.simpleString() if c in df.columns else None
                 for df in engine.frames.values()}
        if len(types) == 1 and None not in types:
            out.append(c)
    return out


def row_copies(engine: Any, roles: Any, spec: Any) -> Any:
    """:class:`~auditor.engines.operations.RowCopies` from one :class:`RowTable` (every row;
    columns compared as text are cast to strings and then compared as strings are: near
    copies and conflicts normalise them too, where polars requires the cast strings to be
    equal; their continuity counts for within-split grading, not for the chance baseline, as on
    polars). Free-text columns are not matched for near copies (MinHash is polars-only):
    ``not_matched`` names them and ``near`` is None."""
    from auditor.engines.operations import PairCopies, RowCopies, SplitCopies
    from auditor.engines.polars_rows import json_value, row_text
    from auditor.stats.copies import no_chance

    cols = list(spec.cols) + list(spec.as_text)
    data = _Splits(engine, roles, spec.as_text)
    features = list(spec.features) + list(spec.as_text) if spec.features else []
    label = spec.label if features else None
    text = list(spec.text_cols)
    limit = spec.max_examples
    if not cols:
        empty = SplitCopies(repeated=0, conflicts=0, groups=0, continuous=None)
        return RowCopies(splits={s: empty for s in roles.splits},
                         pairs={p: PairCopies(copies=0, chance=no_chance(0), near=None,
                                              conflicts=0) for p in roles.pairs()})
    ids = carried_ids(engine, roles, cols)
    table = RowTable(data, cols, features, label,
                     spec.digits if spec.near and not text else None,
                     never_chance=spec.as_text, natural_below=spec.natural_repeats, ids=ids)
    try:
        counts = table.conflict_counts() if label else {}
        splits = {}
        for split in roles.splits:
            i = table._i(split)
            repeated = table.repeated_rows(split)
            within = counts.get(f"wr{i}", 0)
            splits[split] = SplitCopies(
                repeated=repeated, conflicts=within, groups=counts.get(f"wg{i}", 0),
                continuous=tuple(table.continuous[split]) if repeated else None,
                conflict_examples=[
                    {"rows": n, f"distinct {label} values": k,
                     "features": row_text(v or (), features)}
                    for n, k, v in table.within_examples(split, limit)] if within else [])
        pairs = {}
        for earlier, later in roles.pairs():
            e, l = table._i(earlier), table._i(later)
            copies = table.copies(earlier, later)
            near: int | None = None
            near_ex: list[dict[str, Any]] = []
            if table.near:
                rows, top = table.near_copies(earlier, later, limit)
                near = max(0, rows - copies)
                near_ex = [{"normalised values": row_text(v or (), cols),
                            f"rows in {earlier}": a, f"rows in {later}": b}
                           for v, a, b in top] if near > 0 else []
            across = counts.get(f"x{e}_{l}", 0)
            pairs[(earlier, later)] = PairCopies(
                copies=copies, chance=table.chance(earlier, later), near=near,
                conflicts=across,
                examples=[{"values": row_text(v or (), cols), f"rows in {earlier}": a,
                           f"rows in {later}": b,
                           **{f"{later} {c}": x for c, x in zip(ids, named)}}
                          for v, a, b, named in table.copy_examples(earlier, later, limit)],
                near_examples=near_ex,
                conflict_examples=[
                    {f"{label} in {earlier}": json_value(ya), f"{label} in {later}": json_value(yb),
                     "features": row_text(v, features)}
                    for ya, yb, v in table.across_examples(earlier, later, limit)]
                if across else [])
    finally:
        table.close()
    return RowCopies(splits=splits, pairs=pairs,
                     not_matched=tuple(text) if spec.near and text else ())
