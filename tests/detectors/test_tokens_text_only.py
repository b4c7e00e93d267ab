"""A corpus stored as text only (signed off before tokenization): ``tokens: {input_ids:
null}`` runs the checks that need only the text and the tokenizer (round trip,
contamination) and skips the ones that read stored ids, saying why; on GPT-2's real BPE and
the Lee corpus."""
from __future__ import annotations

import json

import polars as pl

import auditor
from auditor.cli import main
from tests.tokenizer_fixtures import gpt2_json, lee_texts  # noqa: F401


def test_a_text_only_corpus_runs_round_trip_and_contamination(tmp_path, gpt2_json):
    texts = lee_texts()
    train = pl.DataFrame({"text": texts[:60]})
    test = pl.DataFrame({"text": texts[60:80] + texts[:3]})  # 3 documents copied from train
    report = auditor.audit(train=train, test=test,
                           tokens={"tokenizer": str(gpt2_json), "text": "text",
                                   "input_ids": None})
    status = {c.id: c.status for c in report.checks}
    skipped = {c.id: c.summary for c in report.checks if c.status == "skipped"}
    for check in ("tokens.special_tokens", "tokens.lengths"):
        assert "a text-only tokens: section (input_ids: null)" in skipped[check]
    assert status["tokens.roundtrip"] != "skipped" and status["tokens.roundtrip"] != "error"
    rt = report.check("tokens.roundtrip")
    assert not [f for f in rt.findings if f.metric == "stale_tokenization"]
    (loss,) = [f for f in rt.findings if f.metric == "roundtrip_loss"]
    assert loss.count == 0 and loss.severity == "info"  # byte-level BPE gives every text back
    assert rt.summary.startswith("All 83 checked rows survive decode(encode(text))")
    (f,) = [f for f in report.check("tokens.contamination").findings
            if f.metric == "contaminated_documents"]
    # the 3 planted copies, and one Lee document that shares its 13-grams with train
    assert f.severity == "fail" and f.count == 4 and f.splits == ["train", "test"]
    assert "3 exact copies (normalised text), 0 near-duplicates (Jaccard >= 0.8), 1 with >= " \
           "50% of their 13-grams in train" in f.message
    assert report.tokenizer is not None and report.tokenizer["vocab_size"] == 50257


def test_a_missing_input_ids_column_suggests_the_text_only_form(tmp_path, gpt2_json, capsys):
    pl.DataFrame({"text": lee_texts()[:20]}).write_parquet(tmp_path / "a.parquet")
    pl.DataFrame({"text": lee_texts()[20:30]}).write_parquet(tmp_path / "b.parquet")
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(json.dumps({"datasets": {"train": "a.parquet", "test": "b.parquet"},
                               "tokens": {"tokenizer": str(gpt2_json), "text": "text"}}))
    assert main(["run", str(cfg), "--out", str(tmp_path / "o")]) == 2
    assert "(a corpus stored as text only: set input_ids: null under tokens:)" in \
        capsys.readouterr().err


def test_a_tokens_section_without_ids_needs_text_and_no_mask_or_labels():
    import pytest

    from auditor.core.config import Tokens

    with pytest.raises(ValueError, match="declare input_ids with them"):
        Tokens(tokenizer="t.json", text="text", input_ids=None, labels="labels")
    with pytest.raises(ValueError, match="declare text, input_ids or both"):
        Tokens(tokenizer="t.json", input_ids=None)
    assert Tokens(tokenizer="t.json", text="text", input_ids=None).columns() == ["text"]


def test_a_corpus_stored_as_token_ids_only_is_checked_for_contamination_on_its_ids(gpt2_json):
    """No text column: documents compared as their token ids (padding and control tokens left
    out), exact copies and 13-token n-grams; the same documents as on the text."""
    from auditor.loading.tokenizers import load_tokenizer
    from tests.tokenizer_fixtures import tokenized_frame

    tok = load_tokenizer(str(gpt2_json))
    texts = lee_texts()
    train = tokenized_frame(tok, texts[:60], eos=50256, pad=50256)
    test = tokenized_frame(tok, texts[60:80] + texts[:3], eos=50256, pad=50256, pad_to=900)
    on_text = auditor.audit(train=train, test=test, tokens={
        "tokenizer": str(gpt2_json), "text": "text", "attention_mask": "attention_mask",
        "labels": "labels", "pad_id": 50256})
    on_ids = auditor.audit(train=train.drop("text"), test=test.drop("text"), tokens={
        "tokenizer": str(gpt2_json), "attention_mask": "attention_mask", "labels": "labels",
        "pad_id": 50256})

    def finding(report):
        (f,) = [f for f in report.check("tokens.contamination").findings
                if f.metric == "contaminated_documents"]
        return f

    text, ids = finding(on_text), finding(on_ids)
    assert ids.subject == "input_ids" and ids.count == text.count == 4
    assert ids.evidence["rows_to_drop"]["rows"] == text.evidence["rows_to_drop"]["rows"]
    # the 3 copies are equal id for id once the padding (different widths) is left out
    assert ids.message.startswith("4 of 23 test documents (17.4%) also occur in train: 3 exact "
                                  "copies (the same token ids)")
    assert "1 with >= 50% of their 13-grams of token ids in train" in ids.message
    # the shared ids shown as the text they encode
    first = next(e for e in ids.evidence["examples"] if e["detector"] == "exact")
    assert first["shared span"].startswith("(") and " tokens) " in first["shared span"]
    assert texts[first["train_row"]][:40] in first["shared span"]
    assert "jaccard (3-token shingles)" in first


def test_padding_with_an_ordinary_id_is_not_compared_as_content(gpt2_json):
    """Ids padded with 0 (an ordinary GPT-2 token, "!") and no pad_id declared: the layout
    reads the padding off the attention mask, and contamination leaves it out, so disjoint
    documents share nothing; float-typed ids are read as the other token checks read them."""
    from auditor.loading.tokenizers import load_tokenizer
    from tests.tokenizer_fixtures import tokenized_frame

    tok = load_tokenizer(str(gpt2_json))
    texts = lee_texts()
    train = tokenized_frame(tok, texts[:40], pad=0, pad_to=1200).drop("text", "labels")
    test = tokenized_frame(tok, texts[40:60], pad=0, pad_to=1200).drop("text", "labels")
    spec = {"tokenizer": str(gpt2_json), "attention_mask": "attention_mask"}
    report = auditor.audit(train=train, test=test, tokens=spec)
    (f,) = [f for f in report.check("tokens.contamination").findings
            if f.metric == "contaminated_documents"]
    assert f.count == 0 and f.severity == "info"
    as_float = {k: v.with_columns(pl.col("input_ids").cast(pl.List(pl.Float64)))
                for k, v in {"train": train, "test": test[:10].vstack(train[:2])}.items()}
    report = auditor.audit(**as_float, tokens=spec)
    (f,) = [f for f in report.check("tokens.contamination").findings
            if f.metric == "contaminated_documents"]
    assert report.check("tokens.contamination").status != "error" and f.count == 2


def test_write_clean_drops_the_documents_found_on_their_ids(tmp_path, gpt2_json, capsys):
    from auditor.loading.tokenizers import load_tokenizer
    from tests.tokenizer_fixtures import tokenized_frame

    tok = load_tokenizer(str(gpt2_json))
    texts = lee_texts()
    tokenized_frame(tok, texts[:40], eos=50256).drop("text").write_parquet(
        tmp_path / "train.parquet")
    tokenized_frame(tok, texts[40:55] + texts[:2], eos=50256).drop("text").write_parquet(
        tmp_path / "test.parquet")
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(json.dumps({"datasets": {"train": "train.parquet", "test": "test.parquet"},
                               "tokens": {"tokenizer": str(gpt2_json),
                                          "attention_mask": "attention_mask",
                                          "labels": "labels"}}))
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--suite", "fast",
                 "--write-clean", str(tmp_path / "clean"), "-q"]) == 1
    clean = pl.read_parquet(tmp_path / "clean" / "test.parquet")
    assert clean.height == 17 - 2  # the two copied documents, found on their ids
