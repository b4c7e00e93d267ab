"""tokens.benchmarks (written once: one ``map_batches`` over every split) on the spark engine
against the polars engine: HumanEval problems planted into real code (standard-library
functions) give equal findings on both engines, compared as text and as GPT-2 token ids; a
clean corpus gives no fail on either. Skipped when pyspark or Java is missing."""
from __future__ import annotations

import json
from dataclasses import asdict

import polars as pl
import pytest

from auditor.core.config import AuditConfig, Benchmark, Columns, Tokens
from auditor.detectors.token_benchmarks import BenchmarkContamination
from auditor.engines.spark_io import open_spark_splits
from auditor.loading.benchmarks import read_benchmark
from auditor.loading.data import build_audit_data, read_table
from auditor.loading.tokenizers import load_tokenizer
from auditor.report.results import Severity
from tests.tokenizer_fixtures import (build_gpt2, humaneval_path, humaneval_rows,
                                      stdlib_functions, token_data)


def _plain(findings):
    return [json.loads(json.dumps(asdict(f), default=str)) for f in findings]


@pytest.fixture(scope="module")
def corpus():
    code, rows = stdlib_functions(), humaneval_rows()
    train = list(code[:300])
    train[5] = rows[20]["prompt"]
    train[9] = "import math\n\n" + rows[0]["prompt"] + rows[0]["canonical_solution"]
    words = rows[33]["prompt"].split(" ")
    words[len(words) // 2] = "zebra"
    train[30] = " ".join(words)
    test = list(code[300:360])
    test[3] = "# from a blog post\n" + rows[50]["prompt"]
    return {"train": train, "test": test}, {"train": code[:300], "test": code[300:360]}


@pytest.fixture(scope="module")
def humaneval():
    return (read_benchmark("humaneval", Benchmark(path=humaneval_path()), read_table),)


def _spark(spark, frames, **cfg):
    config = AuditConfig(datasets={k: f"{k}.parquet" for k in frames}, **cfg)
    return open_spark_splits(config, {k: spark.createDataFrame(v.to_arrow()).cache()
                                      for k, v in frames.items()}, spark=spark)


@pytest.mark.parametrize("which", ["planted", "clean"])
def test_text_gives_the_same_findings_on_both_engines(spark, corpus, humaneval, which):
    texts = corpus[0] if which == "planted" else corpus[1]
    frames = {k: pl.DataFrame({"text": v}) for k, v in texts.items()}
    local = build_audit_data(frames, columns=Columns(text=["text"]))
    remote = _spark(spark, frames, columns=Columns(text=["text"]))
    local.benchmarks = remote.benchmarks = humaneval
    check = BenchmarkContamination(clean_dir="/tmp/unused")
    a, b = check.run(local), check.run(remote)
    assert _plain(a) == _plain(b)
    (f,) = b
    if which == "planted":
        assert (f.severity, f.count) == (Severity.FAIL, 3)
        assert f.evidence["rows_to_drop"]["rows"] == [5, 9, 30]
        assert b[0].clean is not None and b[0].clean.rows.tolist() == [5, 9, 30]
    else:
        assert (f.severity, f.count) == (Severity.INFO, 0)


def test_token_ids_give_the_same_findings_on_both_engines(spark, corpus, humaneval,
                                                          tmp_path):
    path = build_gpt2(tmp_path / "tokenizer.json")
    tok = load_tokenizer(str(path))
    frames = {k: pl.DataFrame({"input_ids": tok.encode_batch(v)},
                              schema={"input_ids": pl.List(pl.Int64)})
              for k, v in corpus[0].items()}
    local = token_data(frames, path, text=None, attention_mask=None, labels=None)
    remote = _spark(spark, frames, columns=Columns(), tokens=Tokens(
        tokenizer=str(path), text=None, attention_mask=None, labels=None))
    local.benchmarks = remote.benchmarks = humaneval
    a = BenchmarkContamination().run(local)
    b = BenchmarkContamination().run(remote)
    assert _plain(a) == _plain(b)
    assert (b[0].count, b[0].evidence["rows_to_drop"]["rows"]) == (3, [5, 9, 30])
