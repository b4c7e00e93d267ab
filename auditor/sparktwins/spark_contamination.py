"""``tokens.contamination`` on the spark engine: evaluation documents present in the training
split, measured over every row with the same hashing as the polars detector
(:class:`auditor.detectors.token_contamination.Contamination`) and judged by its ``judge``.

Measuring (Spark DataFrames; the driver holds counts and a capped list of example rows):

- one ``mapInArrow`` pass per split runs the polars numpy hashing per Arrow batch on the
  executors (:func:`~auditor.detectors.token_contamination.ngram_hashes_and_lengths`,
  :func:`~auditor.detectors.token_contamination.normalised_text`): per document its word count
  and normalised text with its hash (kind 0 rows), and every word n-gram hash with its position
  (kind 1 rows); persisted, the training split's reused for every later split;
- exact: evaluation hashes joined with the training table (hash -> first training row and its
  normalised text); a pair counts only when the normalised strings are equal (no hash
  collision can report a copy);
- n-gram overlap: training (hash, row) pairs semi-joined with the evaluation hashes, the first
  ``MAX_TRAIN_DOCS_PER_NGRAM`` training rows per hash kept (a window), joined with the
  evaluation n-grams; per evaluation document the distinct positions matched / its n-grams
  (the overlap ratio) and the training row sharing most positions (ties: the first row);
- near-duplicates: the MinHash signatures of the candidate documents (as on polars: documents
  sharing an n-gram or shorter than 3n words; all documents without the n-gram detector) by
  :func:`auditor.stats.minhash.signatures` per Arrow batch, the LSH band keys exploded to
  (band, key) rows, one representative training row (the first) per (band, key) joined with
  the evaluation keys, each candidate pair's estimated Jaccard (equal signature entries /
  ``num_perm``) computed with Spark array functions, the best training row per evaluation
  document kept at >= ``jaccard_at``;
- every evaluation document counts once, by the first detector in
  :data:`~auditor.detectors.token_contamination.KIND_ORDER` that matched it.

Row numbers are the stored order (partition offsets plus the position inside the partition).
``clean_dir``: the finding asks the run for each evaluation split minus its contaminated rows
(written after every check by :mod:`auditor.clean_subsets`).
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from auditor.errors import NotApplicable

ROW = "row"
_PASS_SCHEMA = "kind int, row long, pos long, h long, words long, norm string"
_SIG_SCHEMA = "row long, sig array<long>, keys array<long>"


def _numbered(data: Any, split: str, col: str) -> Any:
    """(row, text) of a split: stored row numbers counted per partition in ``mapInArrow``."""
    from pyspark.sql import types as T

    from auditor.engines.spark_engine import col as _c

    df = data.splits[split]
    text = _c(col) if isinstance(df.schema[col].dataType, T.StringType) else _c(col).cast(
        "string")
    offsets = _offsets(data, split)

    return df.select(text.alias("text")).mapInArrow(_with_row_numbers(offsets, ROW),
                                                    "row long, text string")


def _with_row_numbers(offsets: dict[int, int], name: str) -> Any:
    """A ``mapInArrow`` function that puts the stored row number (the partition's offset plus
    the row's place in it) in front of every batch's columns, as column ``name``."""
    def per_batch(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        at = offsets.get(TaskContext.get().partitionId(), 0)
        for batch in batches:
            n = batch.num_rows
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.arange(at, at + n, dtype=np.int64))] + batch.columns,
                names=[name] + list(batch.schema.names))
            at += n

    return per_batch


def _hash_pass(data: Any, split: str, col: str, n: int, seed: int, with_pos: bool) -> Any:
    """Per document (kind 0): words, normalised text, its hash (null when empty); per word
    n-gram (kind 1): row, position (``with_pos``) and hash. Persisted."""
    import pyarrow as pa
    import polars as pl
    from pyspark import StorageLevel

    from auditor.detectors.token_contamination import (ngram_hashes_and_lengths,
                                                       normalised_text)
    from auditor.stats.textnorm import fold

    fields = pa.schema([("kind", pa.int32()), (ROW, pa.int64()), ("pos", pa.int64()),
                        ("h", pa.int64()), ("words", pa.int64()), ("norm", pa.string())])

    def per_batch(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            if not batch.num_rows:
                continue
            rows = batch.column(0).to_numpy(zero_copy_only=False).astype(np.int64)
            text = pl.from_arrow(batch.column(1))
            assert isinstance(text, pl.Series)
            folded = fold(text.cast(pl.String))
            norm = normalised_text(folded, folded=True)
            h = pl.DataFrame({"n": norm, "h": norm.hash(seed).reinterpret(signed=True)}).select(
                pl.when(pl.col("n").str.len_bytes() > 0).then(pl.col("h")))["h"]
            if n:
                ng, lens = ngram_hashes_and_lengths(folded, n, seed, folded=True,
                                                    with_pos=with_pos)
            else:
                ng, lens = None, np.zeros(len(rows), dtype=np.int64)
            k = len(rows)
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.zeros(k, np.int32)), pa.array(rows), pa.nulls(k, pa.int64()),
                 h.to_arrow(), pa.array(np.asarray(lens, dtype=np.int64)), norm.to_arrow()],
                schema=fields)
            if ng is not None and ng.height:
                m = ng.height
                doc = ng["doc"].to_numpy()
                pos = ng["pos"].to_numpy() if with_pos else None
                yield pa.RecordBatch.from_arrays(
                    [pa.array(np.ones(m, np.int32)), pa.array(rows[doc]),
                     pa.array(pos) if pos is not None else pa.nulls(m, pa.int64()),
                     pa.array(ng["h"].to_numpy().view(np.int64)),
                     pa.nulls(m, pa.int64()), pa.nulls(m, pa.string())], schema=fields)

    return (_numbered(data, split, col).mapInArrow(per_batch, _PASS_SCHEMA)
            .persist(StorageLevel.MEMORY_AND_DISK))


def _signatures(check: Any, numbered: Any, rows: Any | None, seed: int,
                held: list[Any]) -> Any:
    """(row, band, key) and (row, sig) of the documents in ``rows`` (all when None), by the
    polars MinHash code per Arrow batch; word-less documents have no band keys. The persisted
    frame is appended to ``held`` (unpersisted when the split is judged)."""
    import pyarrow as pa
    import polars as pl
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from auditor.stats.minhash import _band_keys, signatures

    num_perm, k, bands = check.num_perm, check.shingle, check.bands
    src = numbered if rows is None else numbered.join(rows, ROW, "left_semi")

    def per_batch(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            if not batch.num_rows:
                continue
            rws = batch.column(0).to_numpy(zero_copy_only=False).astype(np.int64)
            text = pl.from_arrow(batch.column(1))
            assert isinstance(text, pl.Series)
            sig = signatures(text.cast(pl.String), num_perm=num_perm, k=k, seed=seed)
            keys = _band_keys(sig, bands, seed).sort(["doc", "band"])
            keep = ~sig.empty
            key_mat = keys["key"].to_numpy().view(np.int64).reshape(-1, bands) \
                if keys.height else np.zeros((0, bands), np.int64)
            vals = sig.values[keep].view(np.int64)
            yield pa.RecordBatch.from_arrays(
                [pa.array(rws[keep]),
                 pa.FixedSizeListArray.from_arrays(pa.array(vals.ravel()), num_perm).cast(
                     pa.list_(pa.int64())),
                 pa.FixedSizeListArray.from_arrays(pa.array(key_mat.ravel()), bands).cast(
                     pa.list_(pa.int64()))],
                names=[ROW, "sig", "keys"])

    out = src.mapInArrow(per_batch, _SIG_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
    held.append(out)
    keys = out.select(ROW, F.posexplode("keys").alias("band", "key"))
    return keys, out.select(ROW, "sig")


def _near(check: Any, data: Any, train: str, later: str, col: str, seed: int,
          cand_a: Any | None, cand_b: Any | None, held: list[Any]) -> Any:
    """(test_row, train_row, jaccard, kind, rk): the best near-duplicate training row per
    evaluation document, as :func:`auditor.stats.minhash.near_duplicate_pairs`."""
    from pyspark.sql import functions as F

    ka, sa = _signatures(check, data.cached(("spark.contamination.numbered", train),
                                            lambda: _numbered(data, train, col)),
                         cand_a, seed, held)
    kb, sb = _signatures(check, _numbered(data, later, col), cand_b, seed, held)
    rep = ka.groupBy("band", "key").agg(F.min(ROW).alias("train_row"))
    pairs = (kb.join(rep, ["band", "key"]).select("train_row", F.col(ROW).alias("test_row"))
             .distinct())
    eq = F.aggregate(F.zip_with("sa", "sb", lambda x, y: (x == y).cast("long")), F.lit(0).cast(
        "long"), lambda acc, x: acc + x)
    scored = (pairs.join(sa.select(F.col(ROW).alias("train_row"), F.col("sig").alias("sa")),
                         "train_row")
              .join(sb.select(F.col(ROW).alias("test_row"), F.col("sig").alias("sb")),
                    "test_row")
              .select("test_row", "train_row",
                      (eq.cast("double") / F.lit(float(check.num_perm))).alias("jaccard"))
              .where(F.col("jaccard") >= F.lit(float(check.jaccard_at))))
    best = scored.groupBy("test_row").agg(
        F.min(F.struct((-F.col("jaccard")).alias("nj"), F.col("train_row"))).alias("b"))
    return best.select("test_row", F.col("b.train_row").alias("train_row"),
                       (-F.col("b.nj")).alias("jaccard"))


def contamination(check: Any, data: Any) -> list[Any]:
    """tokens.contamination on Spark (see the module docstring)."""
    if data.tokens is None:
        raise NotApplicable("no tokens: section in the config")
    if not data.tokens.text:
        raise NotApplicable("no raw text column declared (tokens.text)")
    names = list(data.splits)
    if len(names) < 2:
        raise NotApplicable("only one split: nothing to compare with the training split")
    col, train = data.tokens.text, names[0]
    seed = data.seed % (2**32)
    return [_one(check, data, train, later, col, seed) for later in names[1:]]


def _one(check: Any, data: Any, train: str, later: str, col: str, seed: int) -> Any:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from auditor.detectors.token_contamination import KIND_ORDER, MAX_TRAIN_DOCS_PER_NGRAM

    n = check.ngram
    pa_ = data.cached(("spark.contamination.pass", train, n, seed),
                      lambda: _hash_pass(data, train, col, n, seed, with_pos=False))
    pb = _hash_pass(data, later, col, n, seed, with_pos=True)
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    frames = []
    held: list[Any] = [pb]
    dirty = None
    cand_a = cand_b = None
    docs_a, docs_b = pa_.where("kind = 0"), pb.where("kind = 0")
    if n:
        tg = pb.where("kind = 1").select(F.col(ROW).alias("doc"), "pos", "h")
        # the semi-join first: only training n-grams found in the evaluation split are made
        # distinct and ranked (a shuffle of the overlap, not of every training n-gram)
        ta = pa_.where("kind = 1").select(F.col(ROW).alias("train_row"), "h")
        hits = ta.join(tg.select("h").distinct(), "h", "left_semi").distinct()
        w = Window.partitionBy("h").orderBy("train_row")
        hits = (hits.withColumn("_r", F.row_number().over(w))
                .where(F.col("_r") <= MAX_TRAIN_DOCS_PER_NGRAM).drop("_r"))
        matched = tg.join(hits, "h").persist()
        held.append(matched)
        # a document's n-grams: one per word position from 0 to words - n (as on polars)
        total = docs_b.select(F.col(ROW).alias("doc"),
                              (F.col("words") - F.lit(n - 1)).alias("total"))
        covered = matched.groupBy("doc").agg(F.countDistinct("pos").alias("shared"))
        best = (matched.groupBy("doc", "train_row").agg(F.countDistinct("pos").alias("k"))
                .groupBy("doc").agg(F.max(F.struct(F.col("k"),
                                                   (-F.col("train_row")).alias("ntr")))
                                    .alias("b")))
        dirty = (covered.join(total, "doc").join(best, "doc")
                 .select(F.col("doc").alias("test_row"), (-F.col("b.ntr")).alias("train_row"),
                         (F.col("shared") / F.col("total")).cast("double").alias("overlap"))
                 .persist())
        frames.append(dirty.where(F.col("overlap") >= F.lit(float(check.ngram_ratio_at)))
                      .select("test_row", "train_row", F.lit(None).cast("double")
                              .alias("jaccard"), "overlap",
                              F.lit(rank["n-gram overlap"]).alias("rk")))
        short = 3 * n
        cand_a = (docs_a.where(F.col("words") < short).select(ROW)
                  .union(matched.select(F.col("train_row").alias(ROW))).distinct())
        cand_b = (docs_b.where(F.col("words") < short).select(ROW)
                  .union(matched.select(F.col("doc").alias(ROW))).distinct())
    if check.exact:
        # hash -> first training row (16 bytes a document shuffled), joined with the
        # evaluation hashes; the hits' normalised strings compared with their training rows'
        table = (docs_a.where(F.col("h").isNotNull()).groupBy("h")
                 .agg(F.min(ROW).alias("train_row")))
        hits_e = (docs_b.where(F.col("h").isNotNull()).join(table, "h")
                  .select(F.col(ROW).alias("test_row"), "train_row", "norm"))
        same = hits_e.join(docs_a.select(F.col(ROW).alias("train_row"),
                                         F.col("norm").alias("train_norm")), "train_row")
        frames.insert(0, same.where(F.col("norm") == F.col("train_norm"))
                      .select("test_row", "train_row",
                              F.lit(1.0).alias("jaccard"), F.lit(None).cast("double")
                              .alias("overlap"), F.lit(rank["exact"]).alias("rk")))
    if check.near_duplicates:
        near = _near(check, data, train, later, col, seed, cand_a, cand_b, held)
        frames.append(near.select("test_row", "train_row", "jaccard",
                                  F.lit(None).cast("double").alias("overlap"),
                                  F.lit(rank["near-duplicate"]).alias("rk")))
    m = None
    if frames:
        allm = frames[0]
        for f in frames[1:]:
            allm = allm.unionByName(f)
        m = allm.groupBy("test_row").agg(F.min(F.struct("rk", "train_row", "jaccard",
                                                        "overlap")).alias("s"))
        m = m.select("test_row", F.col("s.rk").alias("rk"), F.col("s.train_row")
                     .alias("train_row"), F.col("s.jaccard").alias("jaccard"),
                     F.col("s.overlap").alias("overlap"))
        if dirty is not None:
            m = m.join(dirty.select("test_row", F.col("overlap").alias("o2")), "test_row",
                       "left")
            m = m.withColumn("overlap", F.coalesce("overlap", "o2", F.lit(0.0))).drop("o2")
        else:
            m = m.withColumn("overlap", F.coalesce("overlap", F.lit(0.0)))
        m = m.persist()
    finding = _judge(check, data, train, later, col, m, dirty, rank)
    for frame in [m, dirty, *held]:
        if frame is not None:
            frame.unpersist()
    return finding


def _judge(check: Any, data: Any, train: str, later: str, col: str, m: Any, dirty: Any,
           rank: dict[str, int]) -> Any:
    """Counts, the overlap histogram, the first rows and the examples' texts to the driver;
    the polars detector's ``judge``."""
    import polars as pl
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from auditor.detectors.token_contamination import KIND_ORDER, OVERLAP_EDGES

    by_kind = {k: 0 for k in KIND_ORDER}
    rows: list[int] = []
    examples: list[dict[str, Any]] = []
    if m is not None:
        for r in m.groupBy("rk").count().collect():
            by_kind[KIND_ORDER[int(r["rk"])]] = int(r["count"])
    count = sum(by_kind.values())
    n_dirty, hist = 0, None
    if dirty is not None:
        inner = [float(e) for e in OVERLAP_EDGES[1:-1]]
        b = sum((F.col("overlap") >= F.lit(e)).cast("int") for e in inner)
        got = {int(r["b"]): int(r["count"]) for r in
               dirty.select(b.alias("b")).groupBy("b").count().collect()}
        n_dirty = sum(got.values())
        if n_dirty:
            hist = [got.get(i, 0) for i in range(len(OVERLAP_EDGES) - 1)]
    if count:
        rows = [int(r[0]) for r in m.select("test_row").orderBy("test_row")
                .limit(check.max_listed_rows).collect()]
        w = Window.partitionBy("rk").orderBy("test_row")
        ex = (m.withColumn("_i", F.row_number().over(w))
              .where(F.col("_i") <= check.max_examples).drop("_i").collect())
        small = pl.DataFrame(
            {"test_row": [int(r["test_row"]) for r in ex],
             "train_row": [int(r["train_row"]) for r in ex],
             "kind": [KIND_ORDER[int(r["rk"])] for r in ex],
             "jaccard": [r["jaccard"] for r in ex], "overlap": [r["overlap"] for r in ex]},
            schema={"test_row": pl.Int64, "train_row": pl.Int64, "kind": pl.String,
                    "jaccard": pl.Float64, "overlap": pl.Float64}).sort("test_row")
        texts_a = _texts(data, train, col, small["train_row"].unique().to_list())
        texts_b = _texts(data, later, col, small["test_row"].unique().to_list())
        examples = check._examples(train, later, texts_a, texts_b, small)
    finding = check.judge(col, train, later, data.rows(later), by_kind, n_dirty, hist, rows,
                          count, examples)
    if check.clean_dir is not None:  # every contaminated row, for the run's clean subset
        drop = ([int(r[0]) for r in m.select("test_row").collect()]
                if m is not None and count else [])
        finding = check.with_clean_subset(finding, later, drop)
    return finding


def _texts(data: Any, split: str, col: str, rows: list[int]) -> dict[int, str | None]:
    """The texts of a few rows by stored row number."""
    from pyspark.sql import functions as F

    if not rows:
        return {}
    got = _numbered(data, split, col).where(F.col(ROW).isin(rows)).collect()
    return {int(r[ROW]): r["text"] for r in got}


def _offsets(data: Any, split: str) -> dict[int, int]:
    """The first stored row number of each partition of a split (the engine's, kept per run)."""
    from auditor.engines.spark_engine import partition_offsets

    return data.engine.cached(("spark.offsets", split),
                              lambda: partition_offsets(data.splits[split]))
