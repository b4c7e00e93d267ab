"""The ``tokens.*`` checks on the spark engine: ``tokens.special_tokens``, ``tokens.lengths``
and ``tokens.roundtrip`` (``tokens.contamination``: :mod:`auditor.sparktwins.spark_contamination`).

Measuring runs on the executors with ``mapInArrow``: every Arrow batch of a split's token
columns goes through the SAME numpy code the polars engine runs per chunk
(:func:`~auditor.detectors.token_layout.chunk_runs`,
:func:`~auditor.detectors.token_layout.chunk_layout`), so the per-row layout (padding, content,
first/last id, mask and label statistics) is equal by construction. Pass 1 returns one row of
mergeable aggregates per batch (the EOS/BOS-kept vote, padding-side counts, the longest row),
from which the driver learns the layout settings exactly as the polars engine does; pass 2
returns the per-row layout as a persisted Spark DataFrame (never collected). The checks reduce
it with Spark aggregates (counts, a content-length count table, token counts by a groupBy,
first example rows by ``orderBy().limit()``) and judge with the polars detectors' own judging
(``SequenceLengths.judge``, ``SpecialTokens.judge``, ``RoundTrip.judge``). Round-trip and
injection run the polars per-chunk functions per Arrow batch (``RoundTrip.chunk``,
``injection_hits``).

The tokenizer is loaded on the driver (roles, vocabulary) and shipped to the executors as its
spec string (a path, or an ``hf:``/``sentencepiece:``/tiktoken name), loaded once per Python
worker and kept in :data:`_WORKER_TOKENIZERS`; on a cluster the path must be readable by the
executors.

Row numbers (for example rows) are the stored order: each partition's offset (one count job
per split) plus the row's position inside its partition, counted inside ``mapInArrow``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from auditor.engines.spark_engine import col as _c, map_in_arrow
from auditor.errors import NotApplicable

ROW = "__row"
_WORKER_TOKENIZERS: dict[str, Any] = {}
LAYOUT_COLUMNS = ("length", "null", "pad_left", "pad_right", "first", "last", "unk", "oov")
MASK_COLUMNS = ("mask_aligned", "mask_bad", "mask_on_pad", "mask_off_content")
LABEL_COLUMNS = ("labels_aligned", "labels_on_pad", "labels_active", "labels_oov", "shift")
BOOL_COLUMNS = ("null", "mask_aligned", "labels_aligned")
_KEPT = ("rows", "voted", "voted_kept", "with_run", "with_run_min", "run_min", "run_one")


def worker_tokenizer(spec: str) -> Any:
    """The tokenizer of ``spec``, loaded once per Python worker process."""
    tok = _WORKER_TOKENIZERS.get(spec)
    if tok is None:
        from auditor.loading.tokenizers import load_tokenizer

        tok = _WORKER_TOKENIZERS[spec] = load_tokenizer(spec)
    return tok


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------

def polars_chunk(batch: Any, columns: list[str]) -> Any:
    """An Arrow batch of token columns as the polars frame ``token_frame`` would give."""
    import polars as pl

    from auditor.detectors.token_layout import _as_list

    df = pl.from_arrow(batch)
    assert isinstance(df, pl.DataFrame)
    return df.select([_as_list(df.schema[c], c) for c in columns])


# ---------------------------------------------------------------------------------------------
# Row numbers
# ---------------------------------------------------------------------------------------------

def partition_offsets(df: Any) -> dict[int, int]:
    """The first row number of every partition of ``df`` (stored order), from one count job."""
    from pyspark.sql import functions as F

    counts = sorted((int(r[0]), int(r[1])) for r in df.select(
        F.spark_partition_id().alias("p")).groupBy("p").count().collect())
    out, at = {}, 0
    for p, n in counts:
        out[p] = at
        at += n
    return out


def offsets_of(data: Any, split: str) -> dict[int, int]:
    """:func:`partition_offsets` of a split, computed once per run."""
    return data.cached(("spark.tokens.offsets", split),
                       lambda: partition_offsets(data.splits[split]))


# ---------------------------------------------------------------------------------------------
# The layout
# ---------------------------------------------------------------------------------------------

@dataclass
class SparkLayout:
    """The Spark counterpart of :class:`auditor.detectors.token_layout.Layout`: the learned
    settings on the driver, the per-row layout of every split as a persisted Spark DataFrame
    (column ``__row`` plus the :class:`SplitLayout` array names, and ``content``)."""

    roles: Any
    frames: dict[str, Any]
    rows: dict[str, int]
    side: str
    eos_kept: bool
    bos_kept: bool
    how: str
    max_length: int
    max_length_declared: bool


def layout_of(data: Any, vocab_size: int | None = None) -> SparkLayout:
    """The shared Spark layout (cached per run and vocabulary size)."""
    if data.tokens is None:
        raise NotApplicable("no tokens: section in the config")
    return data.cached(("spark.tokens.layout", vocab_size), lambda: _build(data, vocab_size))


def _token_cols(t: Any) -> list[str]:
    return [c for c in (t.input_ids, t.attention_mask, t.labels) if c]


def _build(data: Any, vocab_size: int | None) -> SparkLayout:
    from dataclasses import replace

    from pyspark.sql import types as T

    from auditor.detectors.token_layout import (CHUNK_ROWS, _as_list, learn_kept,
                                                pad_from_mask_chunk, roles_of)
    from auditor.engines.spark_engine import to_polars

    t = data.tokens
    for name, df in data.splits.items():
        dtype = df.schema[t.input_ids].dataType
        if not isinstance(dtype, T.ArrayType):
            raise NotApplicable(f"{t.input_ids!r} in {name} is {dtype.simpleString()}, not a "
                                "list of token ids")
    roles = roles_of(data, vocab_size)
    cols = _token_cols(t)
    inferred = ""
    if roles.pad is None and t.attention_mask:
        for df in data.splits.values():  # the same first chunk of rows as the polars engine
            head = to_polars(df.select(_c(t.input_ids), _c(t.attention_mask)).limit(CHUNK_ROWS))
            head = head.select([_as_list(head.schema[c], c) for c in head.columns])
            pad = pad_from_mask_chunk(head, t.input_ids, t.attention_mask) \
                if head.height else None
            if pad is not None:
                roles = replace(roles, pad=pad)
                inferred = (f"No pad id declared and none in the tokenizer: {pad} is taken as "
                            "the pad id, as the id under most attention-mask zeros.")
                break
    stats = _pass1(data, cols, roles.pad)
    eos_kept, how_e = learn_kept(roles.pad is not None and roles.pad == roles.eos,
                                 stats["eos"], "EOS", "trailing")
    bos_kept, how_b = learn_kept(roles.pad is not None and roles.pad == roles.bos,
                                 stats["bos"], "BOS", "leading")
    right = stats["right1" if eos_kept else "right0"]
    left = stats["left1" if bos_kept else "left0"]
    side = "none" if right == left == 0 else ("right" if right >= left else "left")
    how = " ".join(x for x in (
        inferred, "No pad id: every token is content." if roles.pad is None else
        f"Padding = runs of pad id {roles.pad} at the row ends.", how_e, how_b) if x)
    max_len = t.max_length or stats["max_len"]
    frames = {name: _pass2(df, t, roles, eos_kept, bos_kept, side, offsets_of(data, name))
              for name, df in data.splits.items()}
    persisted = getattr(data.engine, "persisted", None)
    if isinstance(persisted, list):  # unpersisted by engine.close() when the run ends
        persisted.extend(frames.values())
    return SparkLayout(roles=roles, frames=frames, rows={n: data.rows(n) for n in data.splits},
                       side=side, eos_kept=eos_kept, bos_kept=bos_kept, how=how,
                       max_length=int(max_len), max_length_declared=t.max_length is not None)


def _pass1(data: Any, cols: list[str], pad: int | None) -> dict[str, Any]:
    """One row of mergeable aggregates per Arrow batch (kept_stats of the trailing and the
    leading runs, padding-side counts for both kept settings, the longest row), merged here."""
    import pyarrow as pa

    from auditor.detectors.token_layout import chunk_runs, kept_stats

    t = data.tokens
    ids_col, mask_col = t.input_ids, t.attention_mask
    names = [f"{w}_{k}" for w in ("eos", "bos") for k in _KEPT] + [
        "right0", "right1", "left0", "left1", "max_len"]
    schema = pa.schema([(n, pa.int64()) for n in names])

    def per_batch(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            if not batch.num_rows:
                continue
            chunk = polars_chunk(batch, cols)
            lens, lead, trail, zl, zt = chunk_runs(chunk, ids_col, mask_col, pad)
            full = lead >= lens
            row = {**{f"eos_{k}": v for k, v in kept_stats(trail, zt, lens).items()},
                   **{f"bos_{k}": v for k, v in kept_stats(lead, zl, lens).items()},
                   "right0": int(((trail > 0) & ~full).sum()),
                   "right1": int(((trail - 1 > 0) & ~full).sum()),
                   "left0": int(((lead > 0) & ~full).sum()),
                   "left1": int(((lead - 1 > 0) & ~full).sum()),
                   "max_len": int(lens.max())}
            yield pa.RecordBatch.from_pylist([row], schema=schema)

    spark_schema = ", ".join(f"{n} long" for n in names)
    rows = []
    for df in data.splits.values():
        rows += [r.asDict() for r in map_in_arrow(df.select(*[_c(c) for c in cols]),
                                                  per_batch, spark_schema).collect()]
    out: dict[str, Any] = {k: sum(r[k] for r in rows) for k in
                           ("right0", "right1", "left0", "left1")}
    out["max_len"] = max((r["max_len"] for r in rows), default=0)
    for w in ("eos", "bos"):
        st = {k: sum(r[f"{w}_{k}"] for r in rows)
              for k in ("rows", "voted", "voted_kept", "with_run", "run_one")}
        st["with_run_min"] = min((r[f"{w}_with_run_min"] for r in rows
                                  if r[f"{w}_with_run"]), default=0)
        st["run_min"] = min((r[f"{w}_run_min"] for r in rows if r[f"{w}_rows"]), default=0)
        out[w] = st
    return out


def _pass2(df: Any, t: Any, roles: Any, eos_kept: bool, bos_kept: bool, side: str,
           offsets: dict[int, int]) -> Any:
    """The per-row layout of one split (persisted; ``__row`` = stored row number)."""
    import pyarrow as pa
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from auditor.detectors.token_layout import chunk_layout, chunk_runs

    cols = _token_cols(t)
    names = list(LAYOUT_COLUMNS) + (list(MASK_COLUMNS) if t.attention_mask else []) + (
        list(LABEL_COLUMNS) if t.labels else [])
    schema = pa.schema([(ROW, pa.int64())] + [
        (n, pa.bool_() if n in BOOL_COLUMNS else pa.int64()) for n in names])

    def per_batch(batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        at = offsets.get(TaskContext.get().partitionId(), 0)
        for batch in batches:
            n = batch.num_rows
            if not n:
                continue
            chunk = polars_chunk(batch, cols)
            _, lead, trail, zl, zt = chunk_runs(chunk, t.input_ids, t.attention_mask, roles.pad)
            part, _ = chunk_layout(chunk, t, roles, (lead, trail, zl, zt), eos_kept, bos_kept,
                                   side)
            arrays = [pa.array(np.arange(at, at + n, dtype=np.int64))] + [
                pa.array(np.asarray(part[k], dtype=bool if k in BOOL_COLUMNS else np.int64))
                for k in names]
            at += n
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    spark_schema = ", ".join([f"{ROW} long"] + [
        f"{n} {'boolean' if n in BOOL_COLUMNS else 'long'}" for n in names])
    out = map_in_arrow(df.select(*[_c(c) for c in cols]), per_batch, spark_schema).withColumn(
        "content", F.col("length") - F.col("pad_left") - F.col("pad_right"))
    return out.persist(StorageLevel.MEMORY_AND_DISK)


def token_counts(data: Any, lay: SparkLayout, split: str) -> np.ndarray:
    """Content-token counts over [0, vocab_size) of one split: per batch a sparse (id, n)
    table from the same chunk code, summed by a Spark groupBy (the driver holds at most one
    row per vocabulary id)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from auditor.detectors.token_layout import chunk_layout, chunk_runs

    t, roles = data.tokens, lay.roles
    eos_kept, bos_kept, side = lay.eos_kept, lay.bos_kept, lay.side
    cols = _token_cols(t)
    schema = pa.schema([("id", pa.int64()), ("n", pa.int64())])

    def per_batch(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            if not batch.num_rows:
                continue
            chunk = polars_chunk(batch, cols)
            _, lead, trail, zl, zt = chunk_runs(chunk, t.input_ids, t.attention_mask, roles.pad)
            _, counts = chunk_layout(chunk, t, roles, (lead, trail, zl, zt), eos_kept,
                                     bos_kept, side)
            nz = np.flatnonzero(counts)
            yield pa.RecordBatch.from_arrays([pa.array(nz.astype(np.int64)),
                                              pa.array(counts[nz].astype(np.int64))],
                                             schema=schema)

    rows = (map_in_arrow(data.splits[split].select(*[_c(c) for c in cols]), per_batch,
                         "id long, n long")
            .groupBy("id").agg(F.sum("n").alias("n")).collect())
    out = np.zeros(roles.vocab_size + 1, dtype=np.int64)
    for r in rows:
        out[int(r["id"])] += int(r["n"])
    return out[:roles.vocab_size]


def spark_engine_to_polars(df: Any) -> Any:
    """A (small) Spark DataFrame as polars (tests and example rows)."""
    from auditor.engines.spark_engine import to_polars

    return to_polars(df)


# ---------------------------------------------------------------------------------------------
# tokens.roundtrip
# ---------------------------------------------------------------------------------------------

_RT_COUNTS = ("n_exact", "n_normalised", "n_unk", "n_whitespace", "n_other", "n_stale",
              "n_checked", "n_drawn", "n_rewritten")
_RT_SCHEMA = ("kind int, row long, text string, dec string, cat string, rewritten boolean, "
              "d long, stored array<long>, encoded array<long>, "
              + ", ".join(f"{c} long" for c in _RT_COUNTS))
_SAMPLE_MIX = 0x9E3779B97F4A7C15


def _sampled(rows: np.ndarray, seed: int, split_index: int, fraction: float) -> np.ndarray:
    """A seeded Bernoulli draw of stored row numbers (splitmix64 of row, seed and split)."""
    with np.errstate(over="ignore"):
        z = rows.astype(np.uint64) + np.uint64((seed * 1_000_003 + split_index) & (2**63 - 1))
        z = z * np.uint64(_SAMPLE_MIX)
        z ^= z >> np.uint64(31)
        z = z * np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
    return (z >> np.uint64(11)).astype(np.float64) / float(1 << 53) < fraction


def _roundtrip_rows(check: Any, data: Any, lay: SparkLayout, name: str, index: int) -> Any:
    """One split through :meth:`RoundTrip.chunk` per Arrow batch on the executors: a row of
    counts per batch (kind 0), the candidate evidence rows (kind 1) and the first stale rows
    of the batch (kind 2); persisted, never collected whole."""
    import pyarrow as pa
    import polars as pl
    from pyspark import StorageLevel
    from pyspark.sql import types as T

    from auditor.detectors.token_layout import chunk_layout, chunk_runs
    from auditor.detectors.token_roundtrip import CATEGORIES

    t, roles = data.tokens, lay.roles
    spec, seed = t.tokenizer, data.seed
    eos_kept, bos_kept, side, max_length = lay.eos_kept, lay.bos_kept, lay.side, lay.max_length
    rows = lay.rows[name]
    fraction = 1.0 if check.sample_rows is None or rows <= check.sample_rows \
        else check.sample_rows / rows
    cols = _token_cols(t)
    df = data.splits[name]
    text_type = df.schema[t.text].dataType
    src = df.select(*[_c(c) for c in cols], (_c(t.text) if isinstance(text_type, T.StringType)
                            else _c(t.text).cast("string")).alias("__text"))
    offsets = offsets_of(data, name)
    fields = [("kind", pa.int32()), ("row", pa.int64()), ("text", pa.string()),
              ("dec", pa.string()), ("cat", pa.string()), ("rewritten", pa.bool_()),
              ("d", pa.int64()), ("stored", pa.list_(pa.int64())),
              ("encoded", pa.list_(pa.int64()))] + [(c, pa.int64()) for c in _RT_COUNTS]
    schema = pa.schema(fields)

    def per_batch(batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        tok = worker_tokenizer(spec)
        at = offsets.get(TaskContext.get().partitionId(), 0)
        for batch in batches:
            n = batch.num_rows
            if not n:
                continue
            chunk = polars_chunk(batch, cols)
            text_all = pl.from_arrow(batch.column(batch.schema.get_field_index("__text")))
            rc_all = np.arange(at, at + n, dtype=np.int64)
            at += n
            _, lead, trail, zl, zt = chunk_runs(chunk, t.input_ids, t.attention_mask, roles.pad)
            part, _ = chunk_layout(chunk, t, roles, (lead, trail, zl, zt), eos_kept, bos_kept,
                                   side)
            drawn = np.ones(n, dtype=bool) if fraction >= 1 else _sampled(
                rc_all, seed, index, fraction)
            pick = drawn & text_all.is_not_null().to_numpy()
            idx = np.flatnonzero(pick)
            rc = rc_all[idx]
            content = part["length"] - part["pad_left"] - part["pad_right"]
            cat, bad, ex, keep = check.chunk(
                tok, roles.specials, max_length, rc, text_all.gather(idx),
                chunk[t.input_ids].gather(idx), part["pad_left"][idx], content[idx],
                check.max_examples) if len(idx) else (
                np.array([], dtype=object), np.zeros(0, dtype=bool), [], None)
            counts = {f"n_{c}": int((cat == c).sum()) for c in CATEGORIES}
            counts.update(n_stale=int(bad.sum()), n_checked=len(idx), n_drawn=int(drawn.sum()),
                          n_rewritten=int(keep["rewritten"].sum()) if keep is not None else 0)
            out = [{"kind": 0, **counts}]
            if keep is not None and keep.height:
                keep = keep.with_columns(d=(pl.col("text").str.len_chars()
                                            - pl.col("dec").str.len_chars()).abs()
                                         .cast(pl.Int64))
                out += [{"kind": 1, **r} for r in keep.select(
                    "row", "text", "dec", "cat", "rewritten", "d").iter_rows(named=True)]
            out += [{"kind": 2, "row": r, "stored": s_ids, "encoded": e_ids}
                    for r, s_ids, e_ids in ex]
            yield pa.RecordBatch.from_pylist(out, schema=schema)

    return map_in_arrow(src, per_batch, _RT_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)


def roundtrip(check: Any, data: Any) -> list[Any]:
    """tokens.roundtrip: encode/decode on the executors (:meth:`RoundTrip.chunk` per Arrow
    batch, the tokenizer loaded once per Python worker), counts summed by Spark, the evidence
    candidates (the top ``max_examples`` rows of each ranking the judging uses, per split) and
    the rewritten characters from Spark aggregates; judged by :meth:`RoundTrip.judge`.
    With ``sample_rows`` set and a larger split, the sample is a seeded Bernoulli draw of about
    that many rows (not the polars engine's draw); the message states its size."""
    import polars as pl
    from pyspark.sql import functions as F

    from auditor.detectors.token_layout import tokenizer_of
    from auditor.detectors.token_roundtrip import (CATEGORIES, char_rewritten,
                                                   ranked_characters)

    if data.tokens is None:
        raise NotApplicable("no tokens: section in the config")
    if not data.tokens.text:
        raise NotApplicable("no raw text column declared (tokens.text)")
    tok = tokenizer_of(data)
    lay = layout_of(data)
    results: dict[str, dict[str, Any]] = {}
    rewritten_frames = []
    outs = []
    ranks = {"other": 0, "unk": 1, "whitespace": 2, "normalised": 3}
    for i, name in enumerate(data.splits):
        out = _roundtrip_rows(check, data, lay, name, i)
        outs.append(out)
        agg = out.where(F.col("kind") == 0).agg(*[F.sum(c).alias(c) for c in _RT_COUNTS]
                                                ).collect()[0]
        kept = out.where(F.col("kind") == 1)
        k = check.max_examples
        rk = F.coalesce(*[F.when(F.col("cat") == c, F.lit(v)) for c, v in ranks.items()],
                        F.lit(9))
        picks = []
        for cats, only in ((("other", "unk", "whitespace", "normalised"), False),
                           (("whitespace",), False), (("normalised",), True)):
            sel = kept.where(F.col("cat").isin(list(cats)))
            if only:
                sel = sel.where(F.col("rewritten"))
            picks.append(sel.orderBy(rk, F.col("d").desc(), F.col("row")).limit(k)
                         .select("row", "text", "dec", "cat", "rewritten"))
        got = spark_engine_to_polars(  # one job for the three rankings
            picks[0].unionByName(picks[1]).unionByName(picks[2])).unique("row")
        frame_pl = (got.sort("row") if got.height else pl.DataFrame(
            {"row": [], "text": [], "dec": [], "cat": [], "rewritten": []},
            schema={"row": pl.Int64, "text": pl.String, "dec": pl.String, "cat": pl.String,
                    "rewritten": pl.Boolean}))
        stale_ex = [(int(r["row"]), list(r["stored"] or []), list(r["encoded"] or []))
                    for r in out.where(F.col("kind") == 2).orderBy("row").limit(k).collect()]
        n_rewritten = int(agg["n_rewritten"] or 0)
        rewritten_frames.append(kept.where(F.col("rewritten")).select("text"))
        results[name] = {
            "rows": lay.rows[name], "drawn": int(agg["n_drawn"] or 0),
            "checked": int(agg["n_checked"] or 0), "frame": frame_pl,
            "counts": {c: int(agg[f"n_{c}"] or 0) for c in CATEGORIES},
            "stale": int(agg["n_stale"] or 0), "stale_examples": stale_ex,
            "rewritten": int(n_rewritten)}
    chars = None
    if sum(r["rewritten"] for r in results.values()):
        texts = rewritten_frames[0]
        for f in rewritten_frames[1:]:
            texts = texts.unionByName(f)
        chars = _rewritten_characters(texts, tok, check.max_examples, char_rewritten,
                                      ranked_characters)
    for out in outs:
        out.unpersist()
    return check.judge(data, tok, results, chars)


def _rewritten_characters(texts: Any, tok: Any, limit: int, rewritten: Any, ranked: Any
                          ) -> list[dict[str, Any]]:
    """:func:`auditor.detectors.token_roundtrip.rewritten_characters` with Spark aggregates:
    rows holding each distinct non-ASCII character (one explode + groupBy), rows holding each
    rewritten ASCII character (one aggregate)."""
    from pyspark.sql import functions as F

    per_char = (texts.select(F.explode(F.array_distinct(F.regexp_extract_all(
        F.col("text"), F.lit("([^\\x00-\\x7F])"), F.lit(1)))).alias("ch"))
        .groupBy("ch").count().collect())
    counts = {r["ch"]: int(r["count"]) for r in per_char if rewritten(tok, r["ch"])}
    ascii_ = [c for c in (chr(i) for i in range(32, 127)) if rewritten(tok, c)]
    if ascii_:
        row = texts.agg(*[F.sum(F.when(F.instr(F.col("text"), c) > 0, 1).otherwise(0))
                          .alias(f"a{ord(c)}") for c in ascii_]).collect()[0]
        counts.update({c: int(row[f"a{ord(c)}"] or 0) for c in ascii_})
    return ranked(counts, tok, limit)
