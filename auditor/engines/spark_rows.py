"""Row-level checks on the spark engine: near copies and conflicting labels
(``leakage.duplicates``), undeclared entity keys (``leakage.group_overlap``), datetime features
from the future (``leakage.temporal``) and ``separability.memorisation``.

Measured with DataFrame built-ins over every row, judged by the polars detectors' own functions
(:mod:`auditor.detectors.duplicates`, :mod:`~auditor.detectors.groups`,
:mod:`~auditor.detectors.temporal`), so thresholds, statuses, values and messages equal polars:

- near copies: every compared column normalised by Spark expressions as
  :func:`auditor.detectors.near_duplicates.normalised_frame` does (floats and decimals rounded to
  ``significant_digits`` significant digits by :func:`round_significant_frame`, the same arithmetic
  as :func:`~auditor.detectors.near_duplicates.round_significant`: e = floor(log10|v|),
  k = digits - 1 - e, m = round-half-even(v * 10^k) with exact powers of ten, m / 10 when it
  reaches 10^digits; strings lowercased, whitespace runs collapsed to one space and the ends
  trimmed, and the rows holding a non-ASCII character NFKC-normalised and case-folded by a
  Python UDF, used only on string columns where an aggregate found such a character: Spark has
  no Unicode normalisation built-in; standard library only and without Arrow, so any executor
  Python 3 runs it; it agrees with polars on every code point but the ~150 that Unicode
  assigned after the executor Python's Unicode version). Later rows whose normalised row
  occurs in the earlier split
  (a null-safe key join, :meth:`~auditor.engines.spark_engine.SparkEngine.key_overlap`) minus
  the exact copies = ``near_duplicate_rows``. Free-text columns (``columns.text``, MinHash/LSH on
  polars) are not matched on Spark: with one declared, near copies are reported as not computed
  (an info finding), never silently.
- conflicting labels: features normalised with floats exact, the label normalised likewise
  (null and NaN are no label); across a pair, per feature key of the earlier split the smallest
  and largest label, joined to the later rows (a later row conflicts when its label differs from
  either); within a split, ``groupBy(features)`` with ``count_distinct(label) > 1`` (every row of
  such a group counts). Graded by :func:`~auditor.detectors.duplicates.conflict_grade` with the
  split's within-copies and continuous columns measured on Spark.
- entity-key suggestions: per split one aggregate with the distinct and non-null counts of every
  candidate column, one aggregate over the union of the splits for the distinct values (and the
  range of integer columns); the overlap of a pair (a key join) only for columns that look like
  keys; the first 1,000 sorted distinct values of a string column come to the driver only when
  the numbers-or-dates test needs them. Judged by :func:`~auditor.detectors.groups.candidate_why`
  and :func:`~auditor.detectors.groups.candidate_finding`.
- ``future_values``: per split one aggregate over all datetime features (rows with the feature
  after the row's own time, rows with both set, the largest lead), judged by
  :func:`~auditor.detectors.temporal.future_finding`; examples are the first rows Spark returns
  (no row numbers: a Spark DataFrame has no row order).
- ``separability.memorisation``: the polars detector on the seeded driver-side sample
  (:func:`on_sample` below), not an exact scan: an exact nearest-row
  search over every row has no cheap Spark join (a grid or LSH join finds close copies only,
  as :mod:`auditor.detectors.near_copies` says), so every finding states the sample's size and,
  when train itself is sampled, that a near copy counts only when its train twin is in the
  sample.
"""
from __future__ import annotations

from typing import Any, Callable

from auditor.engines import NOT_ON_SPARK
from auditor.engines.spark_engine import col as _c, quoted
from auditor.errors import NotApplicable
from auditor.loading.data import Kind
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import fmt_count

_NON_ASCII = "[^\\x00-\\x7F]"
EXAMPLE_COLUMNS = 8


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


def _power_table() -> Any:
    """The powers of :func:`_powers` as one array literal (one SQL expression: building it from
    401 ``F.lit`` calls per use costs seconds of driver round trips)."""
    from pyspark.sql import functions as F

    return F.expr("array(" + ", ".join(f"{v!r}D" for v in _powers()) + ")")


def _power(k: Any, table: Any) -> Any:
    """10^k (integer column, |k| <= 200) looked up in ``table`` (:func:`_power_table`)."""
    from pyspark.sql import functions as F

    return F.element_at(table, (k + _FAR + 1).cast("int"))


def _scale(v: Any, k: Any, table: Any) -> Any:
    """v * 10^k as :func:`auditor.detectors.near_duplicates._scale`: exact powers for |k| <= 22
    (multiply for k >= 0, divide by 10^-k for k < 0); beyond, v * 10^h * 10^(k - h),
    h = floor(k / 2), with numpy's powers."""
    from pyspark.sql import functions as F

    h = F.floor(k / 2)
    return (F.when(F.abs(k) > 22, v * _power(h, table) * _power(k - h, table))
            .when(k >= 0, v * _power(k, table))
            .otherwise(v / _power(-k, table)))


def round_significant_frame(df: Any, cols: list[str], digits: int) -> Any:
    """``df`` with ``cols`` (cast to double) rounded to ``digits`` significant digits, half to
    even on the scaled value (:func:`auditor.detectors.near_duplicates.round_significant` in
    Spark expressions): e = floor(log10|v|), k = digits - 1 - e, m = bround(v * 10^k); if
    |m| >= 10^digits then m = bround(m / 10), k = k - 1; result m * 10^-k. Null, NaN, +-inf and
    0 (also -0.0) are kept. ``bround`` of a double rounds its exact decimal expansion (ties are
    exact doubles), as numpy's ``round`` does. Three projections, so that no expression repeats
    another's logarithm (one nested expression overflows Spark's generated code)."""
    from pyspark.sql import functions as F

    if not cols:
        return df
    names = {c: f"__r{i}" for i, c in enumerate(cols)}
    table = _power_table()
    keep = [_c(c) for c in df.columns]
    step = df.select(*keep, *[
        F.when(_c(c).cast("double").isNotNull() & ~F.isnan(_c(c).cast("double"))
               & (_c(c).cast("double") != 0)
               & (F.abs(_c(c).cast("double")) != F.lit(float("inf"))),
               F.lit(digits - 1) - F.floor(F.log10(F.abs(_c(c).cast("double")))))
        .alias(f"{n}k") for c, n in names.items()])
    step = step.select(*keep, *[F.col(f"{n}k") for n in names.values()], *[
        F.bround(_scale(_c(c).cast("double"), F.col(f"{n}k"), table), 0).alias(f"{n}m")
        for c, n in names.items()])
    step = step.select(*keep, *[x for n in names.values() for x in (
        F.when(F.abs(F.col(f"{n}m")) >= F.lit(10.0 ** digits),
               F.bround(F.col(f"{n}m") / F.lit(10.0), 0)).otherwise(F.col(f"{n}m"))
        .alias(f"{n}m2"),
        F.when(F.abs(F.col(f"{n}m")) >= F.lit(10.0 ** digits), F.col(f"{n}k") - 1)
        .otherwise(F.col(f"{n}k")).alias(f"{n}k2"))])
    return step.select(*[
        F.when(F.col(f"{names[c]}k2").isNotNull(),
               _scale(F.col(f"{names[c]}m2"), -F.col(f"{names[c]}k2"), table))
        .otherwise(_c(c).cast("double")).alias(c) if c in names else _c(c)
        for c in df.columns])


def fold_function() -> Callable[[Any], Any]:
    """The Python twin of :func:`auditor.detectors.near_duplicates.normalise_strings` for one
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


def _non_ascii(data: Any, cols: list[str]) -> set[str]:
    """String columns among ``cols`` holding a non-ASCII character in some split (one
    aggregate per split)."""
    from pyspark.sql import functions as F

    def measure() -> set[str]:
        out: set[str] = set()
        for split, df in data.splits.items():
            strings = [c for c in cols if _is_string(data, df.schema[c].dataType, c)]
            if not strings:
                continue
            row = df.agg(*(F.max(_c(c).cast("string").rlike(_NON_ASCII).cast("int"))
                           .alias(f"n{i}") for i, c in enumerate(strings))).collect()[0]
            out |= {c for i, c in enumerate(strings) if row[f"n{i}"]}
        return out

    return data.cached(("spark.non_ascii", tuple(cols)), measure)


def normalised_frame(data: Any, split: str, cols: list[str], digits: int | None) -> Any:
    """``cols`` of ``split`` normalised as the polars engine's
    :func:`~auditor.detectors.near_duplicates.normalised_frame` (``digits=None``: floats
    exact), as a Spark DataFrame with the same column names."""
    df = data.splits[split]
    unicode = _non_ascii(data, data.duplicate_columns())
    floats = [c for c in cols if digits is not None and not _is_string(
        data, df.schema[c].dataType, c) and _is_float_type(df.schema[c].dataType)]
    exprs = []
    for c in cols:
        if _is_string(data, df.schema[c].dataType, c):
            exprs.append(normalise_string(_c(c), c in unicode).alias(c))
        else:
            exprs.append(_c(c))
    return round_significant_frame(df.select(*exprs), floats, digits or 0)


def _engine(data: Any, key: Any, frames: Callable[[], dict[str, Any]]) -> Any:
    from auditor.engines.spark_engine import SparkEngine

    return data.cached(("spark.rows.engine", key),
                       lambda: SparkEngine(frames(), seed=data.seed))


def _cells(row: Any, cols: list[str]) -> str:
    from auditor.detectors.duplicates import _cell

    shown = cols[:EXAMPLE_COLUMNS]
    text = ", ".join(f"{c}={_cell(v)}" for c, v in zip(shown, row))
    if len(cols) > len(shown):
        text += f", … (+{len(cols) - len(shown)} columns)"
    return text


# ---------------------------------------------------------------------------------------------
# leakage.duplicates: near copies and conflicting labels
# ---------------------------------------------------------------------------------------------

def near_and_conflicts(check: Any, data: Any, cols: list[str], exact: dict[tuple[str, str], int],
                       repeated: Callable[[str], int]) -> list[Finding]:
    """Near copies of every pair (``exact``: later rows that are exact copies, per pair) and
    conflicting labels across pairs and within splits, in the polars check's order (near, then
    conflicts); ``repeated(split)``: the split's exact within-split copies."""
    text_cols = [c for c in data.columns.text if c in cols and data.kinds.get(c) == Kind.TEXT]
    label = data.label if data.label in cols else None
    features = [c for c in cols if c != label]
    if not set(features) & (set(data.features) | set(text_cols)):
        features = []  # only roles left: equal dates are not equal features
    near: list[Finding] = []
    conflicts: list[Finding] = []
    if not cols:
        return []
    if text_cols:
        near.append(Finding(
            severity=Severity.INFO, metric="not_computed_on_spark", value=None, count=0,
            subject=text_cols,
            message=f"near-duplicate rows with free-text columns ({', '.join(text_cols)}: "
                    f"MinHash word-shingle matching) are {NOT_ON_SPARK}: only exact copies "
                    "were counted"))
    digits = check.significant_digits
    normalised = None if text_cols else _engine(data, ("near", tuple(cols), digits), lambda: {
        s: normalised_frame(data, s, cols, digits) for s in data.split_names})
    for earlier, later in data.pairs():
        if normalised is not None:
            f = near_copies(check, data, normalised, earlier, later, cols,
                            exact[(earlier, later)])
            if f is not None:
                near.append(f)
        if label and features:
            f = conflicts_across(check, data, earlier, later, features, label)
            if f is not None:
                conflicts.append(f)
    if normalised is not None:
        normalised.close()  # its persisted count tables serve no other check
    for split in data.split_names:
        if label and features:
            f = conflicts_within(check, data, split, features, label)
            if f is not None:
                conflicts.append(f)
    for f in conflicts:
        split = f.splits[0]
        _grade_conflict(check, data, f, split, features, repeated)
    return near + conflicts


def near_copies(check: Any, data: Any, eng: Any, earlier: str, later: str, cols: list[str],
                exact_rows: int) -> Finding | None:
    """``near_duplicate_rows``: later rows whose normalised row (``eng``: an engine over the
    normalised splits) occurs in ``earlier``, minus the ``exact_rows`` exact copies (an exact
    copy is also a near match); None when there are none, as on polars."""
    from auditor.detectors.duplicates import near_copy_finding, near_rule

    ko = eng.key_overlap(earlier, later, cols, nulls_are_keys=True,
                         max_examples=check.max_examples)
    count = ko.rows_later - exact_rows
    if count <= 0:
        return None
    rule = near_rule(check, [])
    top = [{"normalised values": _cells(row[:len(cols)], cols),
            f"rows in {earlier}": row[-2], f"rows in {later}": row[-1]}
           for row in ko.top.iter_rows()]
    evidence = {"rule": rule, "normalised_rows_shared": {
        "rows": ko.rows_later, "of which exact copies": exact_rows, "examples": top}}
    return near_copy_finding(check, data, count, earlier, later, rule, evidence)


def _labelled(data: Any, split: str, features: list[str], label: str) -> Any:
    """Features (floats exact, strings normalised) as ``f0..``, the normalised label as ``_y``;
    rows without a label (null, NaN) left out."""
    from pyspark.sql import functions as F

    frame = normalised_frame(data, split, [*features, label], None)
    y = _c(label)
    if _is_float_type(frame.schema[label].dataType):
        y = F.when(~F.isnan(y), y)
    return frame.select(*[_c(c).alias(f"f{i}") for i, c in enumerate(features)],
                        y.alias("_y")).where(F.col("_y").isNotNull())


def conflicts_across(check: Any, data: Any, earlier: str, later: str, features: list[str],
                     label: str) -> Finding | None:
    """Later rows whose features occur in ``earlier`` with another label: per earlier feature
    key its smallest and largest label, a null-safe join, a later row conflicts when its label
    differs from either; one aggregate (examples only when there are conflicts)."""
    from pyspark.sql import functions as F

    from auditor.detectors.duplicates import _value, conflict_across_finding

    keys = [f"f{i}" for i in range(len(features))]
    a = (_labelled(data, earlier, features, label).groupBy(*keys)
         .agg(F.min("_y").alias("lo"), F.max("_y").alias("hi")))
    a = a.select(*[F.col(k).alias(f"a{k}") for k in keys], "lo", "hi")
    b = _labelled(data, later, features, label)
    cond = [a[f"a{k}"].eqNullSafe(b[k]) for k in keys]
    conf = (b.join(a, on=cond, how="inner")
            .where((F.col("_y") != F.col("lo")) | (F.col("_y") != F.col("hi")))
            .select(*keys, F.when(F.col("_y") != F.col("lo"), F.col("lo"))
                    .otherwise(F.col("hi")).alias("ya"), "_y")).persist()
    try:  # the conflicting rows only: the count and the examples read them once
        count = int(conf.count())
        rows = conf.limit(check.max_examples).collect() if count else []
    finally:
        conf.unpersist()
    if not count:
        return None
    examples = [{f"{label} in {earlier}": _value(r["ya"]), f"{label} in {later}": _value(r["_y"]),
                 "features": _cells([r[k] for k in keys], features)} for r in rows]
    return conflict_across_finding(check, data, count, earlier, later, label, examples)


def conflicts_within(check: Any, data: Any, split: str, features: list[str],
                     label: str) -> Finding | None:
    """Rows of ``split`` in a group of equal features holding more than one label:
    ``groupBy(features)`` with ``count_distinct(label) > 1``, rows and groups summed."""
    from pyspark.sql import functions as F

    from auditor.detectors.duplicates import conflict_within_finding

    keys = [f"f{i}" for i in range(len(features))]
    groups = (_labelled(data, split, features, label).groupBy(*keys)
              .agg(F.count(F.lit(1)).alias("n"), F.count_distinct("_y").alias("labels"))
              .where(F.col("labels") > 1)).persist()
    try:  # the conflicting groups only: totals and the largest groups read them once
        row = groups.agg(F.sum("n").alias("rows"),
                         F.count(F.lit(1)).alias("groups")).collect()[0]
        count = int(row["rows"] or 0)
        sample = groups.orderBy(F.col("n").desc()).limit(check.max_examples).collect() \
            if count else []
    finally:
        groups.unpersist()
    if not count:
        return None
    examples = [{"rows": int(r["n"]), f"distinct {label} values": int(r["labels"]),
                 "features": _cells([r[k] for k in keys], features)} for r in sample]
    return conflict_within_finding(check, data, count, int(row["groups"]), split, label,
                                   examples)


def _grade_conflict(check: Any, data: Any, f: Finding, split: str, features: list[str],
                    repeated: Callable[[str], int]) -> None:
    from pyspark.sql.types import BooleanType

    from auditor.detectors.duplicates import conflict_grade

    def continuous() -> bool:
        df = data.splits[split]
        cand = [c for c in features if not isinstance(df.schema[c].dataType, BooleanType)]
        counts = data.cached(("spark.rows.distinct", split, tuple(cand)),
                             lambda: data.engine.distinct_counts(split, cand))
        return any(n > 1 and u >= 0.5 * n for u, n in counts.values())

    conflict_grade(check, data, f, repeated(split), split, continuous)


# ---------------------------------------------------------------------------------------------
# leakage.group_overlap: undeclared entity keys
# ---------------------------------------------------------------------------------------------

def candidate_columns(data: Any) -> list[str]:
    """Undeclared string or integer columns (as :func:`auditor.detectors.groups.
    candidate_columns`)."""
    from pyspark.sql.types import IntegralType

    roles = data.columns.declared()
    schema = next(iter(data.splits.values())).schema
    return [c for c in data.common_columns() if c not in roles and (
        data.kinds.get(c) == Kind.CATEGORICAL
        or (data.kinds.get(c) == Kind.NUMERIC and isinstance(schema[c].dataType, IntegralType)))]


def suggestions(check: Any, data: Any) -> list[Finding]:
    """``candidate_group_column`` info findings: per split one aggregate (distinct and non-null
    counts of every candidate column), one over the union of the splits (distinct values, and
    min/max of integer columns); pair overlaps only for the columns that look like keys."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegralType

    from auditor.detectors.groups import _numbers_or_dates, candidate_finding, candidate_why
    from auditor.stats.numerics import share
    from auditor.engines.spark_engine import to_polars

    cols = candidate_columns(data)
    if not cols:
        return []
    per_split = {s: data.engine.distinct_counts(s, cols) for s in data.split_names}
    frames = list(data.splits.values())
    union = frames[0].select(*[_c(c) for c in cols])
    for df in frames[1:]:
        union = union.unionByName(df.select(*[_c(c) for c in cols]))
    schema = frames[0].schema
    ints = [c for c in cols if isinstance(schema[c].dataType, IntegralType)]
    total = union.agg(*(F.count_distinct(_c(c)).alias(f"u{i}") for i, c in enumerate(cols)),
                      *(F.min(_c(c)).alias(f"lo{c_i}") for c_i, c in enumerate(ints)),
                      *(F.max(_c(c)).alias(f"hi{c_i}") for c_i, c in enumerate(ints))).collect()[0]
    findings = []
    for i, col in enumerate(cols):
        distinct = int(total[f"u{i}"])

        def sparse(col: str = col, distinct: int = distinct) -> bool:
            if col not in ints:
                return True
            j = ints.index(col)
            lo, hi = total[f"lo{j}"], total[f"hi{j}"]
            if lo is None or hi is None:
                return False
            return distinct < 0.5 * (float(hi) - float(lo) + 1)

        def numbers_or_dates(col: str = col) -> bool:
            first = to_polars(union.select(_c(col).cast("string").alias("entity"))
                              .where(F.col("entity").isNotNull()).distinct()
                              .orderBy("entity").limit(1000))
            return _numbers_or_dates({"all": first})

        per_value = {s: share(per_split[s][col][1], per_split[s][col][0])
                     for s in data.split_names}
        why = candidate_why(check, data, col, distinct, per_value, sparse=sparse,
                            numbers_or_dates=numbers_or_dates)
        if not why:
            continue
        pairs = []
        for earlier, later in data.pairs():
            ko = data.cached(("spark.key_overlap", earlier, later, col),
                             lambda e=earlier, l=later: data.engine.key_overlap(
                                 e, l, [col], max_examples=check.max_examples))
            value = share(ko.rows_later, data.rows(later))
            pairs.append((earlier, later, ko.shared, ko.rows_later, value,
                          lambda ko=ko, e=earlier, l=later: _evidence(ko, col, e, l)))
        f = candidate_finding(data, col, why, pairs)
        if f is not None:
            findings.append(f)
    return findings


# ---------------------------------------------------------------------------------------------
# leakage.temporal: datetime features from the future
# ---------------------------------------------------------------------------------------------

def future_values(check: Any, data: Any, col: str, clock: Any, time_expr: Any) -> list[Finding]:
    """One ``future_values`` finding per datetime feature: per split one aggregate over every
    feature (rows with the feature after the row's own time -- the end of its day for a date
    time column --, rows with both set, the largest lead), judged by
    :func:`auditor.detectors.temporal.future_finding`."""
    from pyspark.sql import functions as F

    from auditor.detectors.temporal import DAY_US, future_finding

    features = data.features_of(Kind.DATETIME)
    if not clock.is_time or not features:
        return []
    own = time_expr + F.lit(DAY_US - 1 if clock.is_date else 0)
    fclocks = {f: _clock(data, f) for f in features}
    stats = {}
    for split, df in data.splits.items():
        exprs = []
        for i, f in enumerate(features):
            fx = fclocks[f][1]
            after = fx > own
            exprs += [F.sum(F.when(after, 1).otherwise(0)).alias(f"a{i}"),
                      F.sum(F.when(fx.isNotNull() & own.isNotNull(), 1).otherwise(0))
                      .alias(f"b{i}"),
                      F.max(F.when(after, fx - own)).alias(f"l{i}")]
        stats[split] = df.agg(*exprs).collect()[0]
    findings = []
    for i, f in enumerate(features):
        fclock, fx = fclocks[f]
        counts, examples = [], []
        for split, df in data.splits.items():
            row = stats[split]
            after = int(row[f"a{i}"] or 0)
            counts.append((split, after, int(row[f"b{i}"] or 0), row[f"l{i}"]))
            if after and len(examples) < check.max_examples:
                got = (df.where(fx > own).select(time_expr.alias("t"), fx.alias("f"))
                       .limit(check.max_examples - len(examples)).collect())
                examples += [{"split": split, col: clock.cell(r["t"]), f: fclock.cell(r["f"])}
                             for r in got]
        findings.append(future_finding(check, data, col, clock, f, counts, examples))
    return findings


# ---------------------------------------------------------------------------------------------
# separability.memorisation
# ---------------------------------------------------------------------------------------------

def memorisation(check: Any, data: Any) -> list[Finding]:
    """The polars detector on the seeded driver-side sample (see the module docstring for why
    not an exact scan on Spark); when the first split is sampled, the finding says that a near
    copy is found only when its twin is in the sampled rows."""
    from auditor.stats.numerics import fmt_share

    findings = on_sample(check, data)
    first = data.split_names[0]
    for f in findings:
        kept = (f.evidence or {}).get("driver_sample", {}).get(first, {}).get(
            "rows", data.rows(first))
        if kept < data.rows(first):
            f.message += (f"; {first} is sampled too ({fmt_share(kept / data.rows(first))} "
                          f"of its rows), so a near copy counts only when its {first} twin is "
                          "in the sample: the count is a lower bound")
    return findings


def _evidence(ko: Any, col: str, earlier: str, later: str) -> dict[str, Any]:
    from auditor.detectors.groups import _cell

    rows = [{col: _cell(e), f"rows in {earlier}": a, f"rows in {later}": b}
            for e, a, b in ko.top.select(col, "rows_earlier", "rows_later").iter_rows()]
    return {"shared": {"entities": ko.shared, f"{earlier} rows": ko.rows_earlier,
                       f"{later} rows": ko.rows_later}, "top_entities": rows}


def _clock(data: Any, col: str) -> tuple[Any, Any]:
    """The polars detector's :class:`~auditor.detectors.temporal.Clock` for a Spark column, and
    an expression giving the same numbers (epoch microseconds, or floats with NaN as null)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from auditor.detectors.temporal import Clock

    if col not in data.kinds:
        raise NotApplicable(f"column {col!r} has incompatible types across splits (see "
                            "schema.consistency)")
    dtype = next(iter(data.splits.values())).schema[col].dataType
    c = _c(col)
    if isinstance(dtype, T.DateType):
        return Clock(col, True, True), F.unix_date(c).cast("long") * F.lit(86_400_000_000)
    if isinstance(dtype, T.TimestampNTZType):
        return Clock(col, True), F.expr(
            f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', {quoted(col)})")
    if isinstance(dtype, T.TimestampType):
        return Clock(col, True, zoned=True), F.unix_micros(c)
    if data.kinds[col] == Kind.NUMERIC:
        x = c.cast("double")
        return Clock(col, False), F.when(~F.isnan(x), x)
    if data.kinds[col] == Kind.NULL:
        raise NotApplicable(f"time column {col!r} is null in every row")
    raise NotApplicable(f"time column {col!r} has type {dtype.simpleString()}; expected a date "
                        "or datetime (or numbers)")


def driver_sample(data: Any) -> Any:
    """The seeded driver-side sample of every split (stratified by the label) as polars
    :class:`~auditor.loading.data.AuditData`, collected once per run and shared by the model
    probes, memorisation and the row-level parts of the association checks."""
    from auditor.loading.data import build_audit_data

    def collect() -> Any:
        frames = {s: data.engine.stratified_sample(s, data.sample_rows, by=data.label,
                                                   seed=data.seed)
                  for s in data.split_names}
        # with the tokens: section, so token and raw-text columns are not features (as polars)
        return build_audit_data(frames, columns=data.columns, tokens=data.tokens,
                                seed=data.seed)

    return data.cached(("spark.driver_sample", data.sample_rows), collect)


def on_sample(check: Any, data: Any) -> list[Finding]:
    """Run the polars detector on a seeded sample of every split collected to the driver
    (stratified by the label when there is one); every finding states the sample's size."""
    sample = driver_sample(data)
    sizes = {s: (sample.rows(s), data.rows(s)) for s in data.split_names}
    whole = all(a == b for a, b in sizes.values())
    stated = ", ".join(f"{fmt_count(a)} of {fmt_count(b)} {s} rows" for s, (a, b) in sizes.items())
    findings = check.run(sample)
    for f in findings:
        f.message += (f" (spark engine: measured on every row collected to the driver: {stated})"
                      if whole else f" (spark engine: measured on a seeded driver-side sample "
                      f"of {stated})")
        f.evidence = {**(f.evidence or {}),
                      "driver_sample": {s: {"rows": a, "of": b} for s, (a, b) in sizes.items()}}
    return findings
