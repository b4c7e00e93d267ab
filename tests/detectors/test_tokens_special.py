"""tokens.special_tokens on real tokenizers (GPT-2 BPE, SentencePiece, BERT WordPiece) and real
text (the Lee corpus): clean layouts pass; each planted bug is found with its subject and count."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.loading.data import build_audit_data
from auditor.detectors.tokens import SpecialTokens
from auditor.errors import NotApplicable
from auditor.report.results import Severity
from auditor.loading.tokenizers import load_tokenizer
from tests.tokenizer_fixtures import (bert_json, gpt2_json, lee_train,  # noqa: F401
                                      sp_model, token_data, tokenized_frame, with_rows)

EOT = 50256


@pytest.fixture(scope="module")
def gpt2(gpt2_json):
    return load_tokenizer(str(gpt2_json))


@pytest.fixture(scope="module")
def gpt2_splits(gpt2, lee_train):
    """GPT-2 rows as HF pipelines make them: ids + EOS, right-padded with EOS (pad == eos)."""
    kw = dict(eos=EOT, pad=EOT)
    return {"train": tokenized_frame(gpt2, lee_train[:60], **kw),
            "test": tokenized_frame(gpt2, lee_train[60:90], **kw)}


def _by_metric(findings):
    return {f.metric: f for f in findings}


def _problems(findings):
    return [f for f in findings if f.severity != Severity.INFO]


def layout_settings(data):
    """The layout settings a run learns (passes 0 and 1 of token_measures)."""
    from auditor.detectors.token_measures import layout_settings as learn
    from auditor.engines.selection import engine_of

    return learn(engine_of(data), data.tokens)[1]


def split_layout(data, name, st):
    """One split's per-row layout arrays and content-token counts, as a batch function
    computes them (the whole split as one batch)."""
    from auditor.detectors.token_layout import chunk_layout, chunk_runs
    from auditor.detectors.token_measures import token_chunk, token_columns

    t = data.tokens
    chunk = token_chunk(data.splits[name], token_columns(t))
    _, lead, trail, zl, zt = chunk_runs(chunk, t.input_ids, t.attention_mask, st.roles.pad)
    part, counts = chunk_layout(chunk, t, st.roles, (lead, trail, zl, zt), st.eos_kept,
                                st.bos_kept, st.side)
    part["content"] = part["length"] - part["pad_left"] - part["pad_right"]
    return part, counts[:st.roles.vocab_size]


def test_clean_gpt2_rows_padded_with_eos_have_no_problem(gpt2_splits, gpt2_json):
    data = token_data(gpt2_splits, gpt2_json, pad_id=EOT)
    findings = SpecialTokens().run(data)
    assert [f.metric for f in findings] == ["token_layout"]
    assert "'… EOS' with right padding" in findings[0].message
    st = layout_settings(data)
    assert st.eos_kept and st.side == "right"


def test_clean_sentencepiece_rows_with_bos_and_eos_have_no_problem(sp_model, lee_train):
    sp = load_tokenizer(str(sp_model))
    frames = {"train": tokenized_frame(sp, lee_train[:50], bos=1, eos=2),
              "test": tokenized_frame(sp, lee_train[50:70], bos=1, eos=2)}
    findings = SpecialTokens().run(token_data(frames, sp_model))
    assert [f.metric for f in findings] == ["token_layout"]
    assert "'BOS … EOS'" in findings[0].message


def test_layout_matches_a_row_by_row_reference(gpt2_splits, gpt2_json):
    data = token_data(gpt2_splits, gpt2_json, pad_id=EOT)
    st = layout_settings(data)
    for name, df in gpt2_splits.items():
        s, token_counts = split_layout(data, name, st)
        ids, mask = df["input_ids"].to_list(), df["attention_mask"].to_list()
        n_content = [sum(m) for m in mask]  # the fixture's mask is the truth
        assert s["content"].tolist() == n_content
        assert s["first"].tolist() == [r[0] for r in ids]
        assert s["last"].tolist() == [r[n - 1] for r, n in zip(ids, n_content)]
        assert s["pad_right"].tolist() == [len(r) - n for r, n in zip(ids, n_content)]
        counts = np.zeros(50257, dtype=np.int64)
        for r, n in zip(ids, n_content):
            np.add.at(counts, r[:n], 1)
        assert np.array_equal(token_counts, counts)


def test_pad_id_is_inferred_from_the_attention_mask_when_not_declared(gpt2_splits, gpt2_json):
    data = token_data(gpt2_splits, gpt2_json)
    assert layout_settings(data).roles.pad == EOT
    assert _problems(SpecialTokens().run(data)) == []


def test_pad_equal_to_eos_without_a_mask_keeps_the_eos_as_content(gpt2_splits, gpt2_json):
    frames = {k: v.drop("attention_mask") for k, v in gpt2_splits.items()}
    data = token_data(frames, gpt2_json, pad_id=EOT, attention_mask=None)
    assert layout_settings(data).eos_kept
    assert _problems(SpecialTokens().run(data)) == []


def _padded_rows(df: pl.DataFrame, k: int, skip: int = 0) -> list[int]:
    rows = [i for i, m in enumerate(df["attention_mask"].to_list()) if m[-1] == 0]
    assert len(rows) >= k + skip
    return rows[skip:skip + k]


def test_attention_mask_covering_padding_fails_with_subject_attention_mask(gpt2_splits,
                                                                           gpt2_json):
    train = gpt2_splits["train"]
    rows = _padded_rows(train, 7)
    width = len(train["input_ids"][0])
    train = with_rows(train, "attention_mask", {i: [1] * width for i in rows})
    f = _by_metric(SpecialTokens().run(token_data({**gpt2_splits, "train": train}, gpt2_json,
                                                  pad_id=EOT)))["attention_mask_vs_padding"]
    assert (f.subject, f.count, f.severity, f.splits) == ("attention_mask", 7, Severity.FAIL,
                                                          ["train"])
    assert f.value == pytest.approx(7 / 90)
    by = {r["problem"]: r["rows"] for r in f.evidence["by_problem"]}
    assert by["rows whose mask covers padding"] == 7
    assert [e["row"] for e in f.evidence["examples"]] == rows


def test_attention_mask_hiding_content_or_of_another_length_is_counted(gpt2_splits, gpt2_json):
    test = gpt2_splits["test"]
    masks = test["attention_mask"].to_list()
    hide = {i: [0] + masks[i][1:] for i in (2, 5, 9)}
    short = {i: masks[i][:-3] for i in (11, 12)}
    test = with_rows(test, "attention_mask", {**hide, **short})
    f = _by_metric(SpecialTokens().run(token_data({**gpt2_splits, "test": test}, gpt2_json,
                                                  pad_id=EOT)))["attention_mask_vs_padding"]
    assert (f.subject, f.count, f.splits) == ("attention_mask", 5, ["test"])
    by = {r["problem"]: r["rows"] for r in f.evidence["by_problem"]}
    assert by["rows whose mask hides content"] == 3
    assert by["rows whose mask differs in length from input_ids"] == 2
    assert "3 hide content, 2 differ in length from input_ids" in f.message


def test_a_row_without_its_eos_is_not_mistaken_for_a_mask_hiding_it(gpt2, gpt2_json,
                                                                    lee_train):
    texts = lee_train[:40]
    with_eos = tokenized_frame(gpt2, texts, eos=EOT, pad=EOT)
    width = len(with_eos["input_ids"][0])
    without = tokenized_frame(gpt2, texts[:6], eos=None, pad=EOT, pad_to=width)
    # keep the longest row (unpadded) intact so every planted row is padded
    rows = [i for i in range(6) if len(without["input_ids"][i]) == width
            and without["attention_mask"][i][-1] == 0]
    train = pl.concat([without[rows], with_eos[len(rows):]])
    findings = _by_metric(SpecialTokens().run(token_data({"train": train}, gpt2_json,
                                                         pad_id=EOT)))
    assert "attention_mask_vs_padding" not in findings
    f = findings["eos_pattern"]
    assert (f.subject, f.count) == ("input_ids", len(rows))


def test_double_shifted_labels_in_some_rows_fail_with_subject_labels(gpt2_splits, gpt2_json):
    train = gpt2_splits["train"]
    labels = train["labels"].to_list()
    rows = [3, 10, 11, 20, 31, 40, 41, 42, 50, 51, 57, 59]
    train = with_rows(train, "labels", {i: labels[i][1:] + [-100] for i in rows})
    f = _by_metric(SpecialTokens().run(token_data({**gpt2_splits, "train": train}, gpt2_json,
                                                  pad_id=EOT)))["label_shift"]
    assert (f.subject, f.count, f.severity) == ("labels", 12, Severity.FAIL)
    assert "12 shifted by 1" in f.message and "double-shift" in f.message
    assert [e["row"] for e in f.evidence["examples"]] == rows


def test_all_rows_pre_shifted_under_label_shift_0_name_the_dominant_shift(gpt2, gpt2_json,
                                                                         lee_train):
    frames = {"train": tokenized_frame(gpt2, lee_train[:40], eos=EOT, pad=EOT, label_shift=1)}
    f = _by_metric(SpecialTokens().run(token_data(frames, gpt2_json, pad_id=EOT)))[
        "label_shift"]
    assert f.count == 40 and f.value == 1.0
    assert "most rows follow label_shift 1, not the declared 0" in f.message
    ok = SpecialTokens().run(token_data(frames, gpt2_json, pad_id=EOT, label_shift=1))
    assert "label_shift" not in _by_metric(ok)


def test_labels_that_train_on_padding_are_counted(gpt2_splits, gpt2_json):
    train = gpt2_splits["train"]
    rows = _padded_rows(train, 5)
    ids = train["input_ids"].to_list()
    train = with_rows(train, "labels", {i: list(ids[i]) for i in rows})
    f = _by_metric(SpecialTokens().run(token_data({**gpt2_splits, "train": train}, gpt2_json,
                                                  pad_id=EOT)))["labels_on_padding"]
    assert (f.subject, f.count, f.severity) == ("labels", 5, Severity.FAIL)


def test_ids_outside_the_vocabulary_fail_unless_the_model_is_larger(gpt2_splits, gpt2_json):
    test = gpt2_splits["test"]
    ids = test["input_ids"].to_list()
    bad = {i: [50257 + i] + ids[i][1:] for i in (0, 4, 8, 16)}
    test = with_rows(test, "input_ids", bad)
    test = with_rows(test, "labels", {i: [50257 + i] + test["labels"][i].to_list()[1:]
                                      for i in bad})
    data = token_data({**gpt2_splits, "test": test}, gpt2_json, pad_id=EOT)
    f = [x for x in SpecialTokens().run(data) if x.metric == "ids_out_of_vocab"]
    assert [(x.subject, x.count, x.severity) for x in f] == [
        ("input_ids", 4, Severity.FAIL), ("labels", 4, Severity.FAIL)]
    assert "outside [0, 50,257)" in f[0].message
    every = [x for df in (gpt2_splits["train"], test) for r in df["input_ids"].to_list()
             for x in r]
    assert f[0].evidence["id range"] == f"{min(every)} … {max(every)}"
    assert max(every) == 50257 + 16
    bigger = SpecialTokens(vocab_size=50304).run(
        token_data({**gpt2_splits, "test": test}, gpt2_json, pad_id=EOT))
    assert "ids_out_of_vocab" not in _by_metric(bigger)


def test_rows_without_the_dominant_bos_are_counted(sp_model, lee_train):
    sp = load_tokenizer(str(sp_model))
    train = tokenized_frame(sp, lee_train[:50], bos=1, eos=2)
    rows = [1, 7, 30, 44]
    for col in ("input_ids", "labels"):
        train = with_rows(train, col, {i: train[col][i].to_list()[1:] for i in rows})
    train = with_rows(train, "attention_mask", {i: train["attention_mask"][i].to_list()[1:]
                                                for i in rows})
    f = _by_metric(SpecialTokens().run(token_data({"train": train}, sp_model)))["bos_pattern"]
    assert (f.subject, f.count, f.severity) == ("input_ids", 4, Severity.FAIL)
    assert f.evidence["dominant"] == "with BOS"


def test_left_padded_rows_among_right_padded_ones_are_counted(gpt2, gpt2_json, lee_train):
    texts = lee_train[:40]
    right = tokenized_frame(gpt2, texts, eos=EOT, pad=EOT)
    width = len(right["input_ids"][0])
    left = tokenized_frame(gpt2, texts[:5], eos=EOT, pad=EOT, side="left", pad_to=width)
    assert all(m[0] == 0 for m in left["attention_mask"].to_list())
    train = pl.concat([left, right[5:]])
    f = _by_metric(SpecialTokens().run(token_data({"train": train}, gpt2_json, pad_id=EOT)))[
        "padding_side"]
    assert (f.subject, f.count) == ("input_ids", 5)
    assert "padded on the left while the others are padded on the right" in f.message


def test_all_padding_rows_are_counted_as_empty(gpt2_splits, gpt2_json):
    test = gpt2_splits["test"]
    width = len(test["input_ids"][0])
    rows = (3, 6, 7)
    for col, v in (("input_ids", EOT), ("attention_mask", 0), ("labels", -100)):
        test = with_rows(test, col, {i: [v] * width for i in rows})
    f = _by_metric(SpecialTokens().run(token_data({**gpt2_splits, "test": test}, gpt2_json,
                                                  pad_id=EOT)))["empty_rows"]
    assert (f.subject, f.count, f.splits) == ("input_ids", 3, ["test"])
    assert f.severity == Severity.FAIL  # 3 / 90 > 1%


def test_unk_rate_of_the_lossy_wordpiece_equals_a_direct_count(bert_json, lee_train):
    bert = load_tokenizer(str(bert_json))
    texts = [t + (" 😀 ☕" if i % 4 == 0 else "") for i, t in enumerate(lee_train[:40])]
    frame = tokenized_frame(bert, texts, bos=101, eos=102, pad=0)
    f = _by_metric(SpecialTokens().run(token_data({"train": frame}, bert_json)))["unk_rate"]
    ids, mask = frame["input_ids"].to_list(), frame["attention_mask"].to_list()
    n_unk = sum(sum(1 for x, m in zip(r, mr) if m and x == 100) for r, mr in zip(ids, mask))
    n_tok = sum(sum(mr) for mr in mask)
    rows_with = sum(1 for r in ids if 100 in r)
    assert f.value == pytest.approx(n_unk / n_tok, abs=1e-12)
    assert (f.count, f.subject) == (rows_with, "input_ids")
    assert rows_with >= 10 and f.severity == Severity.WARN


def test_special_token_strings_typed_in_text_and_encoded_as_control_are_injection(
        gpt2, gpt2_json, sp_model, lee_train):
    texts = list(lee_train[:30])
    for i in (2, 9, 17):
        texts[i] = texts[i].replace(". ", ". <|endoftext|> ", 1)
    frame = tokenized_frame(gpt2, texts, eos=EOT, pad=EOT)
    f = _by_metric(SpecialTokens().run(token_data({"train": frame}, gpt2_json, pad_id=EOT)))[
        "special_token_injection"]
    assert (f.subject, f.count) == ("text", 3)
    assert [e["row"] for e in f.evidence["examples"]] == [2, 9, 17]
    assert f.evidence["examples"][0]["token"] == "<|endoftext|>"
    # SentencePiece encodes a typed '</s>' as text: no injection
    sp = load_tokenizer(str(sp_model))
    sp_texts = [t.replace(". ", ". </s> ", 1) for t in lee_train[:10]]
    sp_frame = tokenized_frame(sp, sp_texts, bos=1, eos=2)
    assert "special_token_injection" not in _by_metric(
        SpecialTokens().run(token_data({"train": sp_frame}, sp_model)))


def test_without_a_tokens_section_the_check_is_not_applicable(clean_splits):
    data = build_audit_data(clean_splits, columns=Columns(label="y", ids=["row_id"]))
    with pytest.raises(NotApplicable, match="no tokens: section"):
        SpecialTokens().run(data)


@pytest.mark.parametrize("bad", [dict(fail_above=1.5), dict(unk_warn_above=-0.1),
                                 dict(vocab_size=0), dict(max_examples=-1)])
def test_invalid_parameters_are_rejected(bad):
    with pytest.raises(ValueError, match="must be"):
        SpecialTokens(**bad)


def test_fixed_size_array_columns_are_read_like_lists(gpt2_splits, gpt2_json):
    width = len(gpt2_splits["train"]["input_ids"][0])
    train = gpt2_splits["train"].with_columns(
        pl.col(c).list.to_array(width) for c in ("input_ids", "attention_mask", "labels"))
    rows = _padded_rows(gpt2_splits["train"], 2)
    train = train.with_columns(pl.Series("attention_mask", [
        [1] * width if i in rows else m
        for i, m in enumerate(gpt2_splits["train"]["attention_mask"].to_list())],
        dtype=pl.Array(pl.Int64, width)))
    f = _by_metric(SpecialTokens().run(token_data({"train": train}, gpt2_json, pad_id=EOT)))
    assert f["attention_mask_vs_padding"].count == 2
    assert f["token_layout"].count == train.height
