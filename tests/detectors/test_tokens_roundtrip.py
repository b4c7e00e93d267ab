"""tokens.roundtrip: categories of decode(encode(text)) differences and stale stored ids, with
the lossless GPT-2 BPE, SentencePiece with byte fallback, and the lossy BERT WordPiece."""
from __future__ import annotations

import re

import pytest

from auditor.core.config import Columns
from auditor.loading.data import build_audit_data
from auditor.detectors.token_roundtrip import RoundTrip, char_diff
from auditor.errors import NotApplicable
from auditor.report.results import Severity
from auditor.loading.tokenizers import load_tokenizer
from tests.tokenizer_fixtures import (bert_json, gpt2_json, lee_train,  # noqa: F401
                                      sp_model, token_data, tokenized_frame, with_rows)

EOT = 50256


def _by_metric(findings):
    return {f.metric: f for f in findings}


def test_lossless_tokenizers_round_trip_every_real_document(gpt2_json, sp_model, lee_train):
    for path, kw, extra in ((gpt2_json, dict(eos=EOT, pad=EOT), dict(pad_id=EOT)),
                            (sp_model, dict(bos=1, eos=2), {})):
        tok = load_tokenizer(str(path))
        frames = {"train": tokenized_frame(tok, lee_train[:40], **kw),
                  "test": tokenized_frame(tok, lee_train[40:60], **kw)}
        f = _by_metric(RoundTrip().run(token_data(frames, path, **extra)))
        assert f["roundtrip_loss"].severity == Severity.INFO
        assert f["roundtrip_loss"].count == 0
        assert "60 identical" in f["roundtrip_loss"].message
        assert f["stale_tokenization"].count == 0
        assert "roundtrip_whitespace" not in f


def test_wordpiece_categories_equal_a_row_by_row_reference(bert_json, lee_train):
    bert = load_tokenizer(str(bert_json))
    texts = list(lee_train[:30])
    texts[0] = "already lowercase plain words"
    texts[1] = "Café in Zürich"                     # normaliser: lowercase + strip accents
    texts[2] = texts[2] + " 😀"                      # emoji -> [UNK]
    texts[3] = "spaces  inside,and punctuation"      # whitespace-only difference
    frame = tokenized_frame(bert, texts, bos=101, eos=102, pad=0)
    f = _by_metric(RoundTrip().run(token_data({"train": frame}, bert_json)))

    def category(text: str) -> str:
        ids = bert.encode_batch([text])[0]
        dec = bert.decode_batch([ids])[0]
        if dec == text:
            return "exact"
        if bert.normalise(dec) == bert.normalise(text):
            return "normalised"
        if 100 in ids:
            return "unk"
        squash = lambda s: re.sub(r"\s+", "", bert.normalise(s))  # noqa: E731
        return "whitespace" if squash(dec) == squash(text) else "other"

    ref = [category(t) for t in texts]
    assert ref[:4] == ["exact", "normalised", "unk", "whitespace"]
    table = f["roundtrip_loss"].evidence["by_split"][0]
    assert table["identical"] == ref.count("exact")
    assert table["equal after the tokenizer's normaliser"] == ref.count("normalised")
    assert table["characters lost to UNK"] == ref.count("unk")
    assert table["whitespace-only difference"] == ref.count("whitespace")
    assert f["roundtrip_loss"].count == ref.count("unk") + ref.count("other")
    assert f["roundtrip_loss"].severity == Severity.FAIL
    assert f["roundtrip_whitespace"].count == ref.count("whitespace")
    worst = f["roundtrip_loss"].evidence["worst examples"]
    assert worst[0]["category"] in ("other difference", "characters lost to UNK")


def test_stale_ids_from_another_text_are_counted_and_cut_rows_are_not(gpt2_json, lee_train):
    gpt2 = load_tokenizer(str(gpt2_json))
    frame = tokenized_frame(gpt2, lee_train[:50], eos=EOT, pad=EOT, max_length=200)
    width = len(frame["input_ids"][0])
    rows = (4, 8, 15, 23, 42)
    stale = {}
    for i in rows:  # ids of a lowercased text stored beside the original text
        ids = (gpt2.encode_batch([frame["text"][i].lower()])[0] + [EOT])[:200]
        stale[i] = ids + [EOT] * (width - len(ids))
    frame = with_rows(frame, "input_ids", stale)
    f = _by_metric(RoundTrip().run(token_data({"train": frame}, gpt2_json, pad_id=EOT,
                                              max_length=200, labels=None)))
    s = f["stale_tokenization"]
    assert (s.subject, s.count, s.severity) == ("input_ids", 5, Severity.FAIL)
    assert [e["row"] for e in s.evidence["examples"]] == list(rows)
    assert s.evidence["examples"][0]["first difference at"] == 0
    # rows cut at max_length only need to be a prefix of encode(text): many are, none flagged
    assert sum(len(r) >= 199 for r in gpt2.encode_batch(frame["text"].to_list())) > 5


def test_large_splits_are_sampled_and_the_message_says_so(gpt2_json, lee_train):
    gpt2 = load_tokenizer(str(gpt2_json))
    frame = tokenized_frame(gpt2, lee_train[:80], eos=EOT, pad=EOT)
    data = token_data({"train": frame}, gpt2_json, pad_id=EOT)
    first = RoundTrip(sample_rows=25).run(data)
    f = _by_metric(first)["roundtrip_loss"]
    assert "a seeded sample: 25 of 80 train rows" in f.message
    assert f.evidence["by_split"][0]["checked"] == 25
    again = RoundTrip(sample_rows=25).run(token_data({"train": frame}, gpt2_json, pad_id=EOT))
    assert [x.message for x in again] == [x.message for x in first]


def test_char_diff_shows_the_first_difference_with_context():
    d = char_diff("The café opened in 2001.", "the cafe opened in 2001.")
    assert d["diff"] == "replace 'T' → 't' at 0; replace 'é' → 'e' at 7"
    assert char_diff("same", "same")["diff"] == "(none)"


def test_without_a_text_column_the_check_is_not_applicable(gpt2_json, lee_train):
    gpt2 = load_tokenizer(str(gpt2_json))
    frame = tokenized_frame(gpt2, lee_train[:5], eos=EOT, pad=EOT).drop("text")
    with pytest.raises(NotApplicable, match="tokens.text"):
        RoundTrip().run(token_data({"train": frame}, gpt2_json, text=None))


def test_without_a_tokens_section_the_check_is_not_applicable(clean_splits):
    data = build_audit_data(clean_splits, columns=Columns(label="y", ids=["row_id"]))
    with pytest.raises(NotApplicable, match="no tokens: section"):
        RoundTrip().run(data)


@pytest.mark.parametrize("bad", [dict(sample_rows=0), dict(lossy_fail_above=2.0),
                                 dict(max_examples=-1)])
def test_invalid_parameters_are_rejected(bad):
    with pytest.raises(ValueError, match="must be"):
        RoundTrip(**bad)


@pytest.fixture(scope="module")
def nfkc_json(tmp_path_factory, lee_train):
    """A byte-level BPE trained here on the Lee corpus with an NFKC normaliser (as many
    multilingual tokenizers have): lossless up to NFKC."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(lee_train, trainers.BpeTrainer(
        vocab_size=2000, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"], show_progress=False))
    path = tmp_path_factory.mktemp("nfkc") / "tokenizer.json"
    tok.save(str(path))
    return path


FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def test_an_nfkc_normaliser_rewriting_full_width_and_ligatures_warns_with_the_characters(
        nfkc_json, lee_train):
    import unicodedata

    tok = load_tokenizer(str(nfkc_json))
    texts = list(lee_train[:100])
    # 27 of 100 documents typed with full-width digits or the "ﬁ" ligature (as text pasted
    # from PDFs and East Asian keyboards is)
    with_digits = [i for i, t in enumerate(texts) if re.search(r"\d", t)][:15]
    with_fi = [i for i, t in enumerate(texts) if "fi" in t and i not in with_digits][:12]
    for i in with_digits:
        texts[i] = texts[i].translate(FULL_WIDTH)
    for i in with_fi:
        texts[i] = texts[i].replace("fi", "ﬁ")
    frames = {"train": tokenized_frame(tok, texts[:80], eos=0, pad=0),
              "test": tokenized_frame(tok, texts[80:], eos=0, pad=0)}
    f = _by_metric(RoundTrip().run(token_data(frames, nfkc_json, pad_id=0)))

    def squash(s: str) -> str:
        return re.sub(r"\s+", "", s).lower()

    ref = [i for i, t in enumerate(texts)
           if squash(unicodedata.normalize("NFKC", t)) != squash(t)]
    assert len(with_digits) + len(with_fi) == 27 and ref == sorted(with_digits + with_fi)
    n = f["normaliser_rewrites"]
    assert (n.subject, n.count, n.severity) == ("text", 27, Severity.WARN)
    assert n.value == pytest.approx(0.27)
    assert n.message.startswith("27 of 100 rows (27.0%) hold characters the tokenizer's "
                                "normaliser rewrites beyond case and whitespace")
    chars = {c["character"]: c for c in n.evidence["characters"]}
    assert chars["ﬁ"]["becomes"] == "fi" and chars["ﬁ"]["rows"] == len(with_fi)
    assert chars["１"]["becomes"] == "1" and chars["１"]["code point"] == "U+FF11"
    assert chars["１"]["rows"] == sum("１" in texts[i] for i in with_digits)
    assert {e["row"] for e in n.evidence["examples"] if e["split"] == "train"} <= set(ref)
    # lossless up to NFKC: nothing lost, nothing stale
    assert f["roundtrip_loss"].count == 0 and f["stale_tokenization"].count == 0
    # the same text without the rewritten characters: no finding
    clean = {"train": tokenized_frame(tok, list(lee_train[:80]), eos=0, pad=0)}
    assert "normaliser_rewrites" not in _by_metric(
        RoundTrip().run(token_data(clean, nfkc_json, pad_id=0)))


def test_a_lowercasing_normaliser_alone_is_no_rewrite_finding(bert_json, lee_train):
    bert = load_tokenizer(str(bert_json))
    texts = [t for t in lee_train[:60] if t.isascii()][:30]
    frame = tokenized_frame(bert, texts, bos=101, eos=102, pad=0)
    f = _by_metric(RoundTrip().run(token_data({"train": frame}, bert_json)))
    assert f["roundtrip_loss"].evidence["by_split"][0][
        "equal after the tokenizer's normaliser"] > 0
    assert "normaliser_rewrites" not in f


def test_every_row_is_checked_by_default_and_chunking_changes_nothing(gpt2_json, lee_train,
                                                                     monkeypatch):
    """Whole corpus by default; the flattened-array stale comparison finds exactly the planted
    rows (other text's ids, a dropped token, a changed id inside a row cut at max_length, null
    ids), and chunks of 7 rows give the same findings as one chunk."""
    import auditor.detectors.token_roundtrip as rt

    gpt2 = load_tokenizer(str(gpt2_json))
    frame = tokenized_frame(gpt2, lee_train[:60], eos=EOT, pad=EOT, max_length=120)
    ids = frame["input_ids"].to_list()
    lens = [len(r) for r in gpt2.encode_batch(frame["text"].to_list())]
    cut = next(i for i, n in enumerate(lens) if n >= 120 and i not in (3, 4, 30, 33))
    short = next(i for i, n in enumerate(lens) if n < 110 and i not in (3, 4, 30, 33))
    width = len(ids[0])

    def padded(row):
        return row + [EOT] * (width - len(row))

    content = ids[short][:lens[short]]
    changed = list(ids[cut])
    changed[50] = (changed[50] + 1) % 50_000
    frame = with_rows(frame, "input_ids", {3: ids[4], short: padded(content[:-1] + [EOT]),
                                           cut: changed, 30: None})
    frame = with_rows(frame, "text", {33: None})
    data = token_data({"train": frame}, gpt2_json, pad_id=EOT, max_length=120, labels=None)
    whole = RoundTrip().run(data)
    f = _by_metric(whole)
    s = f["stale_tokenization"]
    assert (s.count, s.severity) == (4, Severity.FAIL)
    assert [e["row"] for e in s.evidence["examples"]] == sorted([3, short, cut, 30])
    assert f["roundtrip_loss"].evidence["by_split"][0]["checked"] == 59
    assert "59 checked rows" in f["roundtrip_loss"].message
    assert "(1 row without text, not checked)" in f["roundtrip_loss"].message
    assert "seeded sample" not in f["roundtrip_loss"].message
    assert sum(n >= 120 for n in lens) > 3  # other cut rows: prefixes, not flagged
    monkeypatch.setattr(rt, "BATCH", 7)
    chunked = RoundTrip().run(token_data({"train": frame}, gpt2_json, pad_id=EOT,
                                         max_length=120, labels=None))
    assert [(x.metric, x.count, x.message, x.evidence) for x in chunked] == \
        [(x.metric, x.count, x.message, x.evidence) for x in whole]
