"""The tokenizer a tokenized dataset was audited with, recorded for ``auditor verify``.

A tokenizer upgrade can change the ids a text encodes to without any file of the dataset
changing. report.json therefore records, beside the inputs, ``tokenizer``:

- ``spec``, ``kind``, ``name``, ``vocab_size`` and the special ids (bos, eos, pad, unk);
- ``files_hash``: SHA-256 over the tokenizer's local files (a tokenizer.json, a SentencePiece
  model, or the tokenizer files of a folder or of a cached Hub snapshot: name and bytes of
  each, in name order); None for a tiktoken encoding (no file of its own);
- ``pipeline_hash``: SHA-256 of an HF tokenizer.json's normaliser, pre-tokeniser, model type,
  post-processor, decoder and added tokens (what decides the ids, not the file's formatting);
- ``probes``: :data:`PROBES` with the ids each encodes to (golden ids), and their hash.

``auditor verify`` loads the tokenizer again, re-encodes the recorded probe texts and fails
(exit 1) when an id differs, naming the first probe and position that changed; files that
changed but encode every probe as before are said, not failed.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

# Fixed probe texts: ASCII prose, case, digits, whitespace runs, accents (composed and
# decomposed), CJK, emoji, code, a URL and the special-token spellings a corpus may hold.
PROBES = (
    "The quick brown fox jumps over the lazy dog.",
    "THE QUICK BROWN FOX, the Quick Brown Fox.",
    "In 2024, 3.14159 and 1,000,000 were 42% of 0x1F.",
    "two  spaces,\ttab,\nnewline and   trailing   ",
    "naïve café résumé über façade",
    "nai\u0308ve cafe\u0301",
    "東京は日本の首都です。北京是中国的首都。",
    "emoji 😀 🚀 👩‍💻 and symbols © ™ → ≤",
    "def f(x):\n    return x ** 2  # square",
    "https://example.com/path?q=1&r=two#frag",
    "<|endoftext|> <s> </s> [CLS] [SEP] <pad> <|im_start|>",
    "Ünïcödé ÀÉÎÕÜ ßtraße İstanbul",
    "don't won't it's y'all'd've",
    "",
)
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tokenizer_config.json",
                   "special_tokens_map.json", "vocab.json", "merges.txt", "vocab.txt")
PIPELINE_KEYS = ("normalizer", "pre_tokenizer", "post_processor", "decoder", "added_tokens")


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def local_files(spec: str) -> list[Path]:
    """The tokenizer's local files, in name order ([] for tiktoken or an unknown spec)."""
    kind, sep, rest = spec.partition(":")
    if sep and kind == "tiktoken":
        return []
    path = Path(rest if sep and kind in ("sentencepiece", "hf", "tokenizers", "transformers")
                else spec).expanduser()
    if not path.exists():
        from auditor.loading.tokenizers import cached_snapshot

        try:
            path = cached_snapshot(spec)
        except Exception:
            return []
    if path.is_file():
        return [path]
    return sorted((p for p in path.iterdir() if p.name in TOKENIZER_FILES), key=lambda p: p.name)


def files_hash(files: list[Path]) -> str | None:
    """SHA-256 over the name and bytes of each file, in order; None without a file."""
    if not files:
        return None
    digest = hashlib.sha256()
    for p in files:
        digest.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def _pipeline_hash(files: list[Path]) -> str | None:
    found = [p for p in files if p.name.endswith(".json") and p.name != "tokenizer_config.json"
             and p.name != "special_tokens_map.json"]
    for p in found:
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and "model" in doc:
            part = {k: doc.get(k) for k in PIPELINE_KEYS}
            part["model_type"] = (doc.get("model") or {}).get("type")
            return _sha(json.dumps(part, sort_keys=True).encode())
    return None


def tokenizer_record(spec: str, tok: Any) -> dict[str, Any]:
    """The ``tokenizer`` entry of report.json for the adapter ``tok`` loaded from ``spec``."""
    files = local_files(spec)
    ids = tok.encode_batch(list(PROBES))
    probes = [{"text": t, "ids": [int(i) for i in row]} for t, row in zip(PROBES, ids)]
    return {"spec": spec, "kind": tok.kind, "name": tok.name, "vocab_size": tok.vocab_size,
            "special": {"bos": tok.bos_id, "eos": tok.eos_id, "pad": tok.pad_id,
                        "unk": tok.unk_id},
            "files_hash": files_hash(files),
            "pipeline_hash": _pipeline_hash(files),
            "probes": probes,
            "probes_hash": _sha(json.dumps([p["ids"] for p in probes]).encode())}


def first_difference(was: list[int], now: list[int]) -> str:
    """'at token 3: 1234 -> 5678' (or a length change) between two id lists."""
    for j, (a, b) in enumerate(zip(was, now)):
        if a != b:
            return f"at token {j}: {a} -> {b}"
    return f"length {len(was)} -> {len(now)}"


def verify_tokenizer(recorded: Any, spec: str | None = None) -> tuple[list[str], list[str]]:
    """(unchanged, changed) lines for the recorded tokenizer, loaded again from ``spec``
    (default: the recorded one). Raises InputError (exit 2) when it cannot be loaded."""
    from auditor.errors import InputError
    from auditor.loading.tokenizers import load_tokenizer

    if not isinstance(recorded, dict):
        raise InputError("the report's tokenizer record is not a mapping; not a report.json "
                         "written by auditor run")
    spec = spec or recorded.get("spec")
    probes = recorded.get("probes")
    if not isinstance(spec, str) or not isinstance(probes, list) or not all(
            isinstance(p, dict) and isinstance(p.get("text"), str)
            and isinstance(p.get("ids"), list) for p in probes):
        raise InputError("the report's tokenizer record must hold a spec (text) and probes "
                         "[{text, ids}]; not a report.json written by auditor run")
    tok = load_tokenizer(spec)
    now = tok.encode_batch([p["text"] for p in probes])
    changed = []
    for i, (p, ids) in enumerate(zip(probes, now)):
        ids = [int(x) for x in ids]
        if ids != p["ids"]:
            changed.append(f"tokenizer: {spec} encodes probe {i} {p['text'][:40]!r} to other "
                           f"ids than when audited ({first_difference(p['ids'], ids)}): the "
                           "stored ids would now be different")
            break  # the first difference names the change; the rest follow from it
    same_files = files_hash(local_files(spec)) == recorded.get("files_hash")
    if changed:
        return [], changed
    note = ("files unchanged" if same_files else
            "its files changed, but every probe encodes to the recorded ids")
    return [f"tokenizer: {spec} encodes the {len(probes)} recorded probes to the same ids "
            f"({note})"], []
