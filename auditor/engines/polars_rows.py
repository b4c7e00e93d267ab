"""``leakage.duplicates`` measured on polars (:meth:`PolarsOperations.row_copies`): exact copies
across and within splits with their chance baseline, near copies and label conflicts.

Candidates come from 64-bit row hashes joined across splits (linear in rows) and every candidate
pair is verified value by value, so a hash collision cannot create a match. Normalisation and
the MinHash matching of free text live in :mod:`auditor.engines.polars_near`; the chance
statistics in :mod:`auditor.stats.copies`. Columns whose types differ across splits are compared
as text (cast to strings).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from auditor.engines.operations import CopySpec, PairCopies, RowCopies, SplitCopies
from auditor.engines.polars_near import (conflicts_across, conflicts_within, first_copies,
                                         first_matches, frames_equal, near_matches,
                                         prepare_keys)
from auditor.loading.data import AuditData
from auditor.stats.copies import chance_from_counts, natural_repeats, no_chance
from auditor.stats.numerics import clip_text, share

CELL_CHARS = 60
EXAMPLE_COLUMNS = 8


def row_copies(data: AuditData, spec: CopySpec) -> RowCopies:
    """:class:`RowCopies` of ``data`` compared on ``spec`` (every pair verified)."""
    cols, as_text = list(spec.cols), list(spec.as_text)
    text_cols, features, label = list(spec.text_cols), list(spec.features), spec.label
    shown = cols + as_text
    limit = spec.max_examples
    variants: list[tuple[list[str], int | None]] = (
        [([c for c in cols if c not in text_cols], spec.digits)] if spec.near else [])
    if label and features:
        variants.append((features, None))
    for split in data.split_names:  # shared string columns normalised once per split
        prepare_keys(data, split, cols, variants)
    copies = {split: within_split_copies(data, split, cols, as_text)
              for split in data.split_names}
    continuous = {split: tuple(continuous_columns(data, split, shown))
                  if copies[split].height else None for split in data.split_names}
    pairs = {}
    for earlier, later in data.pairs():
        exact = exact_matches(data, earlier, later, cols, as_text)
        measured = continuous_columns(data, earlier, shown) \
            if copies[earlier].height or exact.height else ()
        chance = copy_chance(data, earlier, later, exact.height, cols, as_text,
                             copies[earlier], exact["row_b"], [c for c in measured if c in cols],
                             spec.natural_repeats)
        near_n: int | None = None
        near_ex: list[dict[str, Any]] = []
        summary: dict[str, Any] = {}
        conflicts, conflict_ex = 0, []
        if cols and spec.near:
            near = near_matches(data, earlier, later, cols, digits=spec.digits,
                                text_cols=text_cols, threshold=spec.text_jaccard)
            near = near.join(exact.select("row_b"), on="row_b", how="anti")
            near = also_equal(data, near, earlier, later, "row_a", "row_b", as_text)
            near_n = near.height
            near_ex, summary = near_examples(data, near, earlier, later, cols, text_cols, limit)
        if cols and label and features:
            conf = conflicts_across(data, earlier, later, features, label)
            conf = also_equal(data, conf, earlier, later, "row_a", "row_b", as_text)
            conflicts = conf.height
            conflict_ex = across_examples(data, conf, earlier, later, features, label, limit)
        pairs[(earlier, later)] = PairCopies(
            copies=exact.height, chance=chance, near=near_n, conflicts=conflicts,
            examples=examples(data, exact, earlier, later, shown, limit),
            near_examples=near_ex, near_summary=summary, conflict_examples=conflict_ex)
    splits = {}
    for split in data.split_names:
        count, groups, within_ex = 0, 0, []
        if cols and label and features:
            conf = conflicts_within(data, split, features, label)
            conf = also_equal(data, conf, split, split, "first_row", "row", as_text)
            count, groups = conf.height, (conf["first_row"].n_unique() if conf.height else 0)
            within_ex = within_examples(data, conf, split, features, label, limit)
        head = copies[split].head(limit)
        values = cells(data.splits[split].select(shown)[head["row"]], shown)
        ids, first_ids = (declared_ids(data, split, head["row"]),
                          declared_ids(data, split, head["first_row"]))
        splits[split] = SplitCopies(
            repeated=copies[split].height, conflicts=count, groups=groups,
            continuous=continuous[split],
            examples=[{"row": r, "copy_of_row": f,
                       **{(f"id {k}" if k in ("row", "copy_of_row", "values") else k): v[i]
                          for k, v in ids.items()},
                       **{f"copy_of {k}": v[i] for k, v in first_ids.items()}, "values": vals}
                      for i, (r, f, vals) in enumerate(zip(head["row"], head["first_row"],
                                                           values))],
            conflict_examples=within_ex)
    return RowCopies(splits=splits, pairs=pairs)


def exact_matches(data: AuditData, earlier: str, later: str, cols: list[str],
                  as_text: list[str] = ()) -> pl.DataFrame:  # type: ignore[assignment]
    """Rows of ``later`` with an exact copy in ``earlier``: columns ``row_a`` (first matching
    row of earlier) and ``row_b`` (row of later), sorted by ``row_b``.

    One candidate per later row (the first earlier row with the same hash), then verified.
    """
    if not cols and not as_text:
        return pl.DataFrame({"row_a": [], "row_b": []}, schema={"row_a": pl.UInt32,
                                                                "row_b": pl.UInt32})
    cand = first_matches(compared_hashes(data, earlier, cols, as_text),
                         compared_hashes(data, later, cols, as_text))
    if cand.height == 0:
        return cand
    equal = frames_equal(compared_frame(data, earlier, cols, as_text), cand["row_a"],
                         compared_frame(data, later, cols, as_text), cand["row_b"])
    return cand.filter(pl.Series(equal))


def within_split_copies(data: AuditData, split: str, cols: list[str],
                        as_text: list[str] = ()) -> pl.DataFrame:  # type: ignore[assignment]
    """Rows of ``split`` that exactly copy an earlier row of the same split: ``row`` and
    ``first_row`` (the first row with those values), verified, sorted by row."""
    if not cols and not as_text:
        return pl.DataFrame(schema={"row": pl.UInt32, "first_row": pl.UInt32})
    cand = first_copies(compared_hashes(data, split, cols, as_text))
    if cand.height == 0:
        return cand
    df = compared_frame(data, split, cols, as_text)
    return cand.filter(pl.Series(frames_equal(df, cand["first_row"], df, cand["row"])))


def rows_equal(fa: pl.DataFrame, ia: pl.Series, fb: pl.DataFrame, ib: pl.Series,
               cols: list[str]) -> np.ndarray:
    """Element-wise row equality of ``fa[ia]`` and ``fb[ib]`` over ``cols`` (null-safe)."""
    return frames_equal(fa.select(cols), ia, fb.select(cols), ib)


# -- examples ----------------------------------------------------------------------------------

def examples(data: AuditData, pairs: pl.DataFrame, earlier: str, later: str, cols: list[str],
             limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` matched row pairs with a short rendering of the shared values."""
    head = pairs.head(limit)
    if head.height == 0:
        return []
    values = cells(data.splits[later].select(cols)[head["row_b"]], cols)
    ids_a = declared_ids(data, earlier, head["row_a"])
    ids_b = declared_ids(data, later, head["row_b"])
    return [{f"{earlier}_row": ra, f"{later}_row": rb,
             **{f"{earlier} {k}": v[i] for k, v in ids_a.items()},
             **{f"{later} {k}": v[i] for k, v in ids_b.items()}, "values": vals}
            for i, ((ra, rb), vals) in enumerate(zip(head.select("row_a", "row_b").iter_rows(),
                                                     values))]


def declared_ids(data: AuditData, split: str, rows: pl.Series) -> dict[str, list[Any]]:
    """The declared id columns' values (``columns.ids``) of ``rows`` of ``split``: example
    rows named as the user names them, beside their positions."""
    frame = data.splits[split]
    ids = [c for c in data.columns.ids if c in frame.columns]
    if not ids:
        return {}
    got = frame.select(ids)[rows]
    return {c: got[c].to_list() for c in ids}


def near_examples(data: AuditData, pairs: pl.DataFrame, earlier: str, later: str,
                  cols: list[str], text_cols: list[str], limit: int
                  ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Up to ``limit`` near pairs with the columns whose raw values differ, and the Jaccard of
    each free-text column over every pair (min, median)."""
    if pairs.height == 0:
        return [], {}
    head = pairs.head(limit)
    a = data.splits[earlier].select(cols)[head["row_a"]]
    b = data.splits[later].select(cols)[head["row_b"]]
    ids_a = declared_ids(data, earlier, head["row_a"])
    ids_b = declared_ids(data, later, head["row_b"])
    rows = []
    for i, (ra, rb) in enumerate(zip(head["row_a"], head["row_b"])):
        row: dict[str, Any] = {f"{earlier}_row": ra, f"{later}_row": rb,
                               **{f"{earlier} {k}": v[i] for k, v in ids_a.items()},
                               **{f"{later} {k}": v[i] for k, v in ids_b.items()}}
        for c in text_cols:
            row[f"{c} Jaccard"] = round(float(head[f"jaccard_{c}"][i]), 4)
        row["differences"] = differences(a.row(i), b.row(i), cols)
        rows.append(row)
    summary = {}
    for c in text_cols:
        jac = pairs[f"jaccard_{c}"]
        summary[f"{c} Jaccard over all pairs"] = {
            "min": round(float(jac.min()), 4),  # type: ignore[arg-type]
            "median": round(float(jac.median()), 4)}  # type: ignore[arg-type]
    return rows, summary


def across_examples(data: AuditData, conf: pl.DataFrame, earlier: str, later: str,
                    features: list[str], label: str, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` later rows whose features occur in ``earlier`` with another label."""
    head = conf.head(limit)
    if head.height == 0:
        return []
    ya = data.splits[earlier][label].gather(head["row_a"]).to_list()
    yb = data.splits[later][label].gather(head["row_b"]).to_list()
    values = cells(data.splits[later].select(features)[head["row_b"]], features)
    return [{f"{earlier}_row": ra, f"{later}_row": rb, f"{label} in {earlier}": json_value(a),
             f"{label} in {later}": json_value(b), "features": v}
            for ra, rb, a, b, v in zip(head["row_a"], head["row_b"], ya, yb, values)]


def within_examples(data: AuditData, conf: pl.DataFrame, split: str, features: list[str],
                    label: str, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` rows of ``split`` in a group of equal features with another label."""
    head = conf.head(limit)
    if head.height == 0:
        return []
    y = data.splits[split][label]
    values = cells(data.splits[split].select(features)[head["row"]], features)
    return [{"row": r, "first_row_of_group": f, label: json_value(a),
             f"{label} of first row": json_value(b), "features": v}
            for r, f, a, b, v in zip(head["row"], head["first_row"],
                                     y.gather(head["row"]).to_list(),
                                     y.gather(head["first_row"]).to_list(), values)]


def cells(frame: pl.DataFrame, cols: list[str], shown: int = EXAMPLE_COLUMNS) -> list[str]:
    """One short ``col=value, ...`` rendering per row of ``frame`` (first ``shown`` columns)."""
    return [row_text(row, cols, shown) for row in frame.select(cols[:shown]).iter_rows()]


def row_text(values: tuple[Any, ...], cols: list[str], shown: int = EXAMPLE_COLUMNS) -> str:
    """``col=value, ...`` for the first ``shown`` of ``cols`` (``values`` in their order)."""
    text = ", ".join(f"{c}={cell(v)}" for c, v in zip(cols[:shown], values))
    if len(cols) > shown:
        text += f", … (+{len(cols) - shown} columns)"
    return text


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


def differences(a: tuple[Any, ...], b: tuple[Any, ...], cols: list[str], shown: int = 6) -> str:
    """``col: a → b; ...`` for the columns whose raw values differ between two rows."""
    diff = [f"{c}: {cell(x)} → {cell(y)}" for c, x, y in zip(cols, a, b) if not _same(x, y)]
    if len(diff) > shown:
        diff = diff[:shown] + [f"… (+{len(diff) - shown} columns)"]
    return "; ".join(diff) or "(identical)"


def json_value(v: Any) -> Any:
    """Numbers and booleans as they are (JSON-native), anything else as a short string."""
    return v if isinstance(v, (int, float, bool)) or v is None else cell(v)


def cell(v: Any) -> str:
    """A value as an example shows it: strings quoted, at most :data:`CELL_CHARS`."""
    return clip_text(repr(v) if isinstance(v, str) else v, CELL_CHARS)


# -- what rows are compared on -----------------------------------------------------------------

def compared_frame(data: AuditData, split: str, cols: list[str],
                   as_text: list[str] = ()) -> pl.DataFrame:  # type: ignore[assignment]
    """The values a row is compared on: ``cols`` as loaded, ``as_text`` cast to strings."""
    df = data.splits[split]
    return df.select(*cols, *(pl.col(c).cast(pl.String) for c in as_text))


def compared_hashes(data: AuditData, split: str, cols: list[str],
                    as_text: list[str] = ()) -> pl.Series:  # type: ignore[assignment]
    if not as_text:
        return data.row_hashes(split, cols)
    hashes: pl.Series = data.cached(("duplicates.hashes", split, tuple(cols), tuple(as_text)),
                                    lambda: compared_frame(data, split, cols, as_text)
                                    .hash_rows(seed=data.seed % (2**32)))
    return hashes


def copy_chance(data: AuditData, earlier: str, later: str, count: int, cols: list[str],
                as_text: list[str], earlier_copies: pl.DataFrame,
                copied: pl.Series, unique_cols: list[str], natural_below: float = 0.0
                ) -> dict[str, Any]:
    """The share of ``later`` rows expected to copy an ``earlier`` row by chance, and the
    one-sided p-value of the observed ``count`` against it.

    Discrete data repeat naturally (statsmodels ``fair``: 1,039 of 6,366 rows copy another), so
    an honest random split puts copies of train rows into test. A later row drawn from the same
    distribution as the earlier split matches an earlier row about as often as an earlier row
    matches *another* earlier row, so the chance baseline is

        b = R / n_a,   R = earlier rows whose values occur at least twice in the earlier split

    (verified copies, not hashes), leaving out rows holding a measured value
    (:func:`measured_rows`: a value of a continuous column, at least half of its values
    distinct, that no differing row shares): two rows sharing a measured value to the last
    digit are copies (oversampling, augmentation), not coincidence, so continuous data --
    also when rows were duplicated before the split -- have no chance copies, and every copy
    counts. The
    observed share s = C / n_b (C later rows that copy an earlier row) is compared with b by a
    one-sided z-test of D = s - b against its distribution under an honest random split of the
    pooled rows (:func:`~auditor.stats.copies.split_null_from_counts`; with few patterns
    drawn, :func:`~auditor.stats.copies.drawn_p`): each value pattern seen m times in
    earlier + later puts
    X ~ Binomial(m, n_a / (n_a + n_b)) rows in earlier, adding X 1[X >= 2] to R and
    (m - X) 1[X >= 1] to C, so D's null mean mu and variance v are sums over patterns
    (independent, then conditioned on the earlier split's size); z = (D - mu) / sqrt(v),
    p = 1 - Phi(z). (A plug-in variance from b itself was
    4x too wide at b = 0.7, missing 5% planted copies, and anti-conservative at b = 0.002, with
    1% of honest splits at p < 1e-4.) b = 0 does not end the test: a pattern seen twice
    in the two splits together (statsmodels ``anes96`` holds one such pair of answers) lands
    on both sides of a random split with probability 2 p (1 - p); only when no pattern
    repeats is there no chance copy. Graded value: the excess max(0, s - b). Copies planted
    into naturally repeating data show only once they exceed the chance fluctuation.
    In mixed data (a continuous column null on some rows), the ``copied`` later rows with a
    measured value (K of them) are never chance: they are left out of s and D and added to
    the excess, K / n_b + max(0, (C - K) / n_b - b), with p = 0 when K > 0 (before, 100
    copied measured rows hid in the fluctuation of 1,400 discrete chance copies). Unless the
    data repeat measured records by themselves (:func:`~auditor.stats.copies.natural_repeats`:
    some records repeat within a split, and the repeated ones are at most ``natural_below``
    of the two splits' rows): then a copy of them is what an honest split of these rows
    makes as well, and every row enters b and the null alike.
    """
    n_a, n_b = data.rows(earlier), data.rows(later)
    rows = pl.concat([earlier_copies["row"], earlier_copies["first_row"]]).unique() \
        if earlier_copies.height else pl.Series("row", [], dtype=pl.UInt32)
    known = measured_rows(data, cols, as_text, unique_cols) if unique_cols else {}
    natural: dict[str, int] = {}
    if known and copied.len() and known[later][copied].any():
        hashes = {s: compared_hashes(data, s, cols, as_text) for s in (earlier, later)}
        pooled_h = pl.concat(list(hashes.values()))
        natural = natural_repeats(
            sum(int((known[s] & hashes[s].is_duplicated()).sum()) for s in hashes),
            int((pl.concat([known[earlier], known[later]]) & pooled_h.is_duplicated()).sum()),
            n_a + n_b, natural_below)
        if natural:  # the data repeat measured records by themselves: judged as chance
            known = {}
    if known:  # equal measured values are no coincidence
        rows = rows.filter(~known[earlier][rows])
    repeating = rows.len()
    b = share(repeating, n_a)
    if not count and not repeating:  # nothing copied, nothing repeats: nothing to weigh
        return no_chance(count)
    pooled = []
    for split in (earlier, later):  # rows holding a measured value never count as chance
        h = compared_hashes(data, split, cols, as_text)
        pooled.append(h.filter(~known[split]) if known else h)
    m = pl.concat(pooled).value_counts()["count"].to_numpy()
    if not (m >= 2).any():  # no row repeats in the two splits together: no chance copy
        return no_chance(count)
    sizes, n_patterns = np.unique(m[m >= 2], return_counts=True)
    certain = int(known[later][copied].sum()) if known and copied.len() else 0
    return chance_from_counts(count, certain, n_a, n_b, b, repeating, sizes,
                              n_patterns) | natural


_HASH = "__auditor_h"
_COLUMNS_PER_QUERY = 500  # columns whose windows one query evaluates


def measured_rows(data: AuditData, cols: list[str], as_text: list[str],
                  unique_cols: list[str]) -> dict[str, pl.Series]:
    """Per split, whether each row holds a *measured* value: a value of a continuous column of
    ``unique_cols`` held, over all splits, only by rows equal in every compared column. Such a
    value repeated to the last digit means the row was copied (oversampling, augmentation);
    a continuous value that recurs under different rows (a plan's price shared by new accounts
    that differ elsewhere, a loyalty score of 0.5) is a level the data takes naturally, and a
    row holding only such values counts toward the chance baseline like discrete data.
    Only values of rows whose compared row repeats are looked up (rows of a single pattern
    never enter the baseline)."""
    # the windows below read "repeated" within each value of a column, which equals "repeated
    # in the whole frame" only because equal compared rows hold equal values of the column
    assert set(unique_cols) <= set(cols), "measured columns must be compared columns"

    def measure() -> dict[str, pl.Series]:
        names = data.split_names
        pooled = pl.concat([data.splits[s].select(unique_cols).with_columns(
            compared_hashes(data, s, cols, as_text).alias(_HASH))
            for s in names])
        repeated = pl.col(_HASH).is_duplicated()
        known = pl.repeat(False, pooled.height, eager=True)
        # per column, in one query of many columns: a row's value is shared when a repeated
        # row holds it too and rows of more than one compared row hold it (windows over the
        # column's values; a filter or join per column made 10,000 columns take minutes)
        for start in range(0, len(unique_cols), _COLUMNS_PER_QUERY):
            chunk = unique_cols[start:start + _COLUMNS_PER_QUERY]
            held = [pl.col(c).is_not_null() & ~(repeated.any().over(c)
                                                & (pl.col(_HASH).n_unique().over(c) > 1))
                    for c in chunk]
            known = known | pooled.select(pl.any_horizontal(held)).to_series()
        out, start = {}, 0
        for s in names:
            out[s] = known.slice(start, data.rows(s))
            start += data.rows(s)
        return out

    result: dict[str, pl.Series] = data.cached(
        ("duplicates.measured", tuple(cols), tuple(as_text), tuple(unique_cols)), measure)
    return result


def continuous_columns(data: AuditData, split: str, cols: list[str]) -> list[str]:
    """Columns of ``cols`` (any type but boolean) whose distinct non-null values number at least
    half of the split's non-null values: measurements, timestamps, free text, fine-grained
    codes, where two rows with equal values are copies, not coincidence (kept for the check)."""
    return list(data.cached(("duplicates.continuous", split, tuple(cols)),
                            lambda: _continuous_columns(data, split, cols)))


def _continuous_columns(data: AuditData, split: str, cols: list[str]) -> list[str]:
    df = data.splits[split]
    schema = df.schema  # built anew on every access: once, not once per column
    cand = [c for c in cols if schema[c] != pl.Boolean]
    if not cand:
        return []
    stats = df.select(*(pl.col(c).drop_nulls().n_unique().alias(f"u{i}")
                        for i, c in enumerate(cand)),
                      *(pl.col(c).count().alias(f"n{i}") for i, c in enumerate(cand))).row(0)
    k = len(cand)
    return [c for i, c in enumerate(cand)
            if stats[k + i] > 1 and stats[i] >= 0.5 * stats[k + i]]


def also_equal(data: AuditData, pairs: pl.DataFrame, a: str, b: str, col_a: str, col_b: str,
                as_text: list[str]) -> pl.DataFrame:
    """``pairs`` kept where the columns compared as text are equal too."""
    if not as_text or pairs.height == 0:
        return pairs
    fa = compared_frame(data, a, [], as_text)
    fb = compared_frame(data, b, [], as_text)
    return pairs.filter(pl.Series(frames_equal(fa, pairs[col_a], fb, pairs[col_b])))
