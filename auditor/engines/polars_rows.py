"""Rows on the polars engine: near copies with free-text columns (MinHash word-shingle
matching, :meth:`PolarsOperations.near_text_copies`, which the Spark engine lacks), value-by-value
row equality, and how example rows are shown (``col=value`` cells, differences, declared ids).
Everything else ``leakage.duplicates`` measures is engine-free (:mod:`auditor.detectors.copy_keys`).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from auditor.engines.operations import CopySpec
from auditor.engines.polars_near import frames_equal, near_matches
from auditor.loading.data import AuditData
from auditor.stats.numerics import clip_text

CELL_CHARS = 60
EXAMPLE_COLUMNS = 8


def near_text_copies(data: AuditData, earlier: str, later: str, spec: CopySpec,
                     exact_rows: np.ndarray, keys: dict[str, np.ndarray]
                     ) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    """Near copies with free-text columns (:func:`auditor.engines.polars_near.near_matches`:
    MinHash/LSH candidates, exact Jaccard), later rows among ``exact_rows`` left out, columns
    compared as text equal as strings; examples and the Jaccard summary. ``keys``: per split
    the rows' keys of the other columns normalised (the keyed rows')."""
    text_cols = list(spec.text_cols)
    near = near_matches(data, earlier, later, list(spec.cols), digits=spec.digits,
                        text_cols=text_cols, threshold=spec.text_jaccard, keys=keys)
    near = near.filter(~pl.col("row_b").is_in(pl.Series(exact_rows, dtype=pl.UInt32).implode()))
    near = also_equal(data, near, earlier, later, "row_a", "row_b", list(spec.as_text))
    shown, summary = near_examples(data, near, earlier, later, list(spec.cols), text_cols,
                                   spec.max_examples)
    return near.height, shown, summary


def rows_equal(fa: pl.DataFrame, ia: pl.Series, fb: pl.DataFrame, ib: pl.Series,
               cols: list[str]) -> np.ndarray:
    """Element-wise row equality of ``fa[ia]`` and ``fb[ib]`` over ``cols`` (null-safe)."""
    return frames_equal(fa.select(cols), ia, fb.select(cols), ib)


# -- examples ----------------------------------------------------------------------------------

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


def also_equal(data: AuditData, pairs: pl.DataFrame, a: str, b: str, col_a: str, col_b: str,
                as_text: list[str]) -> pl.DataFrame:
    """``pairs`` kept where the columns compared as text are equal too."""
    if not as_text or pairs.height == 0:
        return pairs
    fa = compared_frame(data, a, [], as_text)
    fb = compared_frame(data, b, [], as_text)
    return pairs.filter(pl.Series(frames_equal(fa, pairs[col_a], fb, pairs[col_b])))
