"""The tokenizer a tokenized dataset was audited with, recorded for ``auditor verify``.

A tokenizer upgrade can change the ids a text encodes to without any file of the dataset
changing. report.json therefore records, beside the inputs, ``tokenizer``:

- ``spec``, ``kind``, ``name``, ``vocab_size`` and the special ids (bos, eos, pad, unk);
- ``files_hash``: SHA-256 over the tokenizer's local files (a tokenizer.json, a SentencePiece
  model, or the tokenizer files of a folder or of a cached Hub snapshot: name and bytes of
  each, in name order); None for a tiktoken encoding (no file of its own);
- ``pipeline_hash``: SHA-256 of an HF tokenizer.json's normaliser, pre-tokeniser, model type,
  post-processor, decoder and added tokens (the steps around the vocabulary, not the file's
  formatting; recorded for a reader, not compared: the probes are);
- ``probes``: :data:`PROBES` with the ids each encodes to (golden ids), and their hash.

``auditor verify`` loads the tokenizer again, re-encodes the recorded probe texts and fails
(exit 1) when an id differs, naming the first probe and position that changed, or when the
vocabulary size or a special id differs; files that changed but encode every probe as before
are said, not failed.
"""
from __future__ import annotations

import hashlib
import json
import re
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
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                   "added_tokens.json", "vocab.json", "merges.txt", "vocab.txt")
_SP_MODEL = re.compile(r"\.model(\.[\w.]+)?$")  # tokenizer.model, spiece.model, *.model.v3
PIPELINE_KEYS = ("normalizer", "pre_tokenizer", "post_processor", "decoder", "added_tokens")


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def local_files(spec: str) -> list[Path]:
    """The tokenizer's local files, in name order: the file itself, or a folder's (or a
    cached Hub snapshot's) tokenizer files and SentencePiece models (``*.model``,
    ``*.model.v3``); [] for tiktoken or what cannot be found."""
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
    return sorted((p for p in path.iterdir() if p.is_file() and (
        p.name in TOKENIZER_FILES or _SP_MODEL.search(p.name))), key=lambda p: p.name)


def files_hash(files: list[Path]) -> str | None:
    """SHA-256 over the bytes of each file (a folder's: with each name, in name order); None
    without a file. A single file is its bytes alone: the same tokenizer copied elsewhere
    under another name hashes the same."""
    if not files:
        return None
    if len(files) == 1:
        return _sha(files[0].read_bytes())
    digest = hashlib.sha256()
    for p in files:
        digest.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def _pipeline_hash(files: list[Path]) -> str | None:
    """The hash of an HF tokenizer.json's pipeline (the first file that is one)."""
    for p in files:
        if not p.name.endswith(".json"):
            continue
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("model"), dict):
            part = {k: doc.get(k) for k in PIPELINE_KEYS}
            part["model_type"] = doc["model"].get("type")
            return _sha(json.dumps(part, sort_keys=True).encode())
    return None


def tokenizer_record(spec: str, tok: Any) -> dict[str, Any]:
    """The ``tokenizer`` entry of report.json for the adapter ``tok`` loaded from ``spec``
    (files that cannot be read are recorded as no hash, never an error)."""
    try:
        files = local_files(spec)
        f_hash, p_hash = files_hash(files), _pipeline_hash(files)
    except OSError:
        f_hash = p_hash = None
    ids = tok.encode_batch(list(PROBES))
    probes = [{"text": t, "ids": [int(i) for i in row]} for t, row in zip(PROBES, ids)]
    return {"spec": spec, "kind": tok.kind, "name": tok.name, "vocab_size": tok.vocab_size,
            "special": _special(tok), "files_hash": f_hash, "pipeline_hash": p_hash,
            "probes": probes,
            "probes_hash": _sha(json.dumps([p["ids"] for p in probes]).encode())}


def _special(tok: Any) -> dict[str, int | None]:
    return {"bos": tok.bos_id, "eos": tok.eos_id, "pad": tok.pad_id, "unk": tok.unk_id}


def first_difference(was: list[int], now: list[int]) -> str:
    """'at token 3: 1234 -> 5678' (or a length change) between two id lists."""
    for j, (a, b) in enumerate(zip(was, now)):
        if a != b:
            return f"at token {j}: {a} -> {b}"
    return f"length {len(was)} -> {len(now)}"


def verify_tokenizer(recorded: Any, spec: str | None = None) -> tuple[list[str], list[str]]:
    """(unchanged, changed) lines for the recorded tokenizer, loaded again from ``spec``
    (default: the recorded one): changed when a probe encodes to other ids, or the vocabulary
    size or a special id (bos, eos, pad, unk) differs -- the stored ids hold them. Raises
    InputError (exit 2) for a malformed record or a tokenizer that cannot be loaded."""
    from auditor.errors import InputError
    from auditor.loading.tokenizers import load_tokenizer

    bad = InputError("the report's tokenizer record must hold a spec (text) and probes "
                     "[{text, ids (integers)}]; not a report.json written by auditor run")
    if not isinstance(recorded, dict):
        raise bad
    spec = spec or recorded.get("spec")
    probes = recorded.get("probes")
    if not isinstance(spec, str) or not isinstance(probes, list) or not probes or not all(
            isinstance(p, dict) and isinstance(p.get("text"), str)
            and isinstance(p.get("ids"), list)
            and all(type(i) is int for i in p["ids"]) for p in probes):
        raise bad
    try:
        tok = load_tokenizer(spec)
    except InputError as err:
        raise InputError(f"the recorded tokenizer cannot be loaded ({err}); --tokenizer SPEC "
                         "names where it is now") from None
    changed = []
    for name, was, now in (("vocabulary size", recorded.get("vocab_size"), tok.vocab_size),
                           *((f"{role} id", (recorded.get("special") or {}).get(role), v)
                             for role, v in _special(tok).items())):
        if was != now:
            changed.append(f"tokenizer: {spec}: {name} {was} when audited, {now} now")
    for i, (p, ids) in enumerate(zip(probes, tok.encode_batch([p["text"] for p in probes]))):
        ids = [int(x) for x in ids]
        if ids != p["ids"]:
            changed.append(f"tokenizer: {spec} encodes probe {i} {p['text'][:40]!r} to other "
                           f"ids than when audited ({first_difference(p['ids'], ids)}): the "
                           "stored ids would now be different")
            break  # the first difference names the change; the rest follow from it
    if changed:
        return [], changed
    recorded_hash = recorded.get("files_hash")
    try:
        now_hash = files_hash(local_files(spec))
    except OSError:
        now_hash = None
    note = ("no tokenizer files were recorded" if recorded_hash is None else
            "files unchanged" if now_hash == recorded_hash else
            "its files changed, but every probe encodes to the recorded ids")
    return [f"tokenizer: {spec} encodes the {len(probes)} recorded probes to the same ids "
            f"({note})"], []
