"""The tokenizer recorded in report.json (files, pipeline, golden ids of fixed probes) and
``auditor verify`` failing when the tokenizer now encodes a probe differently, on GPT-2's real
byte-level BPE."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema

from auditor.cli import main
from auditor.loading.tokenizers import load_tokenizer
from auditor.signoff.tokenizer_record import PROBES, first_difference
from tests.report.test_results import SCHEMA
from tests.tokenizer_fixtures import gpt2_json, lee_texts, tokenized_frame  # noqa: F401

EOT = 50256


def _audited(tmp_path: Path, gpt2: Path) -> tuple[Path, Path]:
    """A tokenized corpus audited with a copy of GPT-2's tokenizer.json: (report, tokenizer)."""
    tok_path = tmp_path / "tok" / "tokenizer.json"
    tok_path.parent.mkdir()
    shutil.copy(gpt2, tok_path)
    tok = load_tokenizer(str(tok_path))
    texts = lee_texts()
    tokenized_frame(tok, texts[:30], eos=EOT).write_parquet(tmp_path / "train.parquet")
    tokenized_frame(tok, texts[30:45], eos=EOT).write_parquet(tmp_path / "test.parquet")
    cfg = tmp_path / "audit.yaml"
    cfg.write_text("datasets: {train: train.parquet, test: test.parquet}\n"
                   "tokens: {tokenizer: tok/tokenizer.json, text: text, input_ids: input_ids, "
                   "attention_mask: attention_mask, labels: labels}\n"
                   "suite: fast\n")
    assert main(["run", str(cfg), "--out", str(tmp_path / "r"), "-q"]) in (0, 1)
    return tmp_path / "r" / "report.json", tok_path


def test_the_report_records_the_tokenizer_with_golden_ids(tmp_path, gpt2_json):
    report, tok_path = _audited(tmp_path, gpt2_json)
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, SCHEMA)
    rec = doc["tokenizer"]
    assert (rec["spec"], rec["kind"], rec["vocab_size"]) == (str(tok_path), "tokenizers", 50257)
    tok = load_tokenizer(str(tok_path))
    assert [p["text"] for p in rec["probes"]] == list(PROBES)
    assert [p["ids"] for p in rec["probes"]] == tok.encode_batch(list(PROBES))
    assert rec["probes"][0]["ids"][:4] == [464, 2068, 7586, 21831]  # "The quick brown fox"
    assert rec["files_hash"].startswith("sha256:") and rec["pipeline_hash"].startswith("sha256:")


def test_verify_fails_when_the_tokenizer_encodes_a_probe_differently(tmp_path, gpt2_json,
                                                                      capsys):
    report, tok_path = _audited(tmp_path, gpt2_json)
    assert main(["verify", str(report)]) == 0
    err = capsys.readouterr().err
    assert (f"tokenizer: {tok_path} encodes the {len(PROBES)} recorded probes to the same ids "
            "(files unchanged)") in err
    # the same tokenizer written with another layout: its files changed, its ids did not
    doc = json.loads(tok_path.read_text())
    tok_path.write_text(json.dumps(doc, indent=4))
    assert main(["verify", str(report)]) == 0
    assert "its files changed, but every probe encodes to the recorded ids" in \
        capsys.readouterr().err
    # an upgrade that lowercases: "The" of the first probe is now "the"
    doc["normalizer"] = {"type": "Lowercase"}
    tok_path.write_text(json.dumps(doc))
    assert main(["verify", str(report)]) == 1
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if "CHANGED tokenizer" in x]
    assert line == (f"auditor: CHANGED tokenizer: {tok_path} encodes probe 0 'The quick brown "
                    "fox jumps over the lazy ' to other ids than when audited (at token 0: "
                    "464 -> 1169): the stored ids would now be different")
    # a moved tokenizer: --tokenizer names where it is now (the original bytes: unchanged)
    moved = tmp_path / "elsewhere.json"
    shutil.copy(gpt2_json, moved)
    assert main(["verify", str(report), "--tokenizer", str(moved)]) == 0
    assert "(files unchanged)" in capsys.readouterr().err
    # the end-of-text special token renamed: a new id, and the old spelling is plain text
    doc = json.loads(moved.read_text())
    eos = next(t for t in doc["added_tokens"] if t["content"] == "<|endoftext|>")
    eos["content"] = "<|end|>"
    moved.write_text(json.dumps(doc))
    assert main(["verify", str(report), "--tokenizer", str(moved)]) == 1
    changed = [x for x in capsys.readouterr().err.splitlines() if "CHANGED" in x]
    assert changed == [
        f"auditor: CHANGED tokenizer: {moved}: vocabulary size 50257 when audited, 50258 now",
        f"auditor: CHANGED tokenizer: {moved} encodes probe 10 '<|endoftext|> <s> </s> [CLS] "
        "[SEP] <pad>' to other ids than when audited (at token 0: 50256 -> 27): the stored ids "
        "would now be different"]


def test_verify_refuses_a_malformed_record_and_a_flag_without_a_record(tmp_path, gpt2_json,
                                                                      capsys):
    report, _ = _audited(tmp_path, gpt2_json)
    doc = json.loads(report.read_text())
    for bad in ({"spec": "x", "probes": []}, {"spec": "x", "probes": [{"text": "a",
                                                                       "ids": ["464"]}]}, 7):
        report.write_text(json.dumps({**doc, "tokenizer": bad}))
        assert main(["verify", str(report)]) == 2
        assert "tokenizer record must hold a spec (text) and probes" in capsys.readouterr().err
    report.write_text(json.dumps({k: v for k, v in doc.items() if k != "tokenizer"}))
    assert main(["verify", str(report), "--tokenizer", "t.json"]) == 2
    assert "--tokenizer: the report records no tokenizer" in capsys.readouterr().err
    # inputs all in memory (the Python API): the tokenizer alone is still verified
    report.write_text(json.dumps({**doc, "inputs": {"train": {"path": None, "hash": None}}}))
    assert main(["verify", str(report)]) == 0
    assert "encodes the 14 recorded probes to the same ids" in capsys.readouterr().err


def test_a_folder_without_tokenizer_json_records_no_pipeline_and_never_crashes(tmp_path):
    from auditor.signoff.tokenizer_record import _pipeline_hash, files_hash, local_files

    folder = tmp_path / "slow"
    folder.mkdir()
    (folder / "vocab.json").write_text(json.dumps({"model": 19849, "the": 1}))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    (folder / "spiece.model").write_bytes(b"\x00model")
    (folder / "notes.md").write_text("not a tokenizer file")
    files = local_files(str(folder))
    assert [f.name for f in files] == ["merges.txt", "spiece.model", "vocab.json"]
    assert _pipeline_hash(files) is None and files_hash(files).startswith("sha256:")
    assert local_files("tiktoken:cl100k_base") == [] and files_hash([]) is None


def test_first_difference_names_the_position_or_the_length():
    assert first_difference([1, 2, 3], [1, 5, 3]) == "at token 1: 2 -> 5"
    assert first_difference([1, 2], [1, 2, 9]) == "length 2 -> 3"
