"""A small tokenized demo dataset with planted problems, for ``auditor demo``.

Generated text (seeded) is tokenized by a byte-level BPE that is trained at demo time with HF
``tokenizers`` (the ``tokens`` extra) on the same text, so nothing is downloaded and the output
is deterministic. Rows are laid out like a causal-LM pipeline: ids + EOS, truncated to
``MAX_LENGTH``, right-padded with ``<pad>``, attention mask 1 on content, labels = ids
(``label_shift: 0``) with -100 on padding. Planted:

- 12 train rows with labels pre-shifted by one (the double-shift bug; ``tokens.special_tokens``,
  subject ``labels``);
- 9 train rows whose attention mask also covers the padding (subject ``attention_mask``);
- 4 train rows whose text contains ``<|endoftext|>`` typed by a user, encoded as the control
  token (special-token injection, subject ``text``);
- 5 test rows whose stored ids come from a different text (stale tokenization,
  ``tokens.roundtrip``);
- 15 test documents copied verbatim into train and 6 more copied with one word changed
  (``tokens.contamination``: 21 test documents);
- long documents cut at ``MAX_LENGTH`` lose their EOS (``tokens.lengths``).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

SIZES = {"train": 1500, "test": 300}
MAX_LENGTH = 96
PAD, EOS = "<pad>", "<|endoftext|>"
MASK_CANDIDATES = 40
PLANTED = {"double_shift": 12, "mask_covers_padding": 9, "injection": 4, "stale": 5,
           "copied_exact": 15, "copied_near": 6}

SUBJECTS = ["the council", "a spokesperson", "the minister", "local farmers", "the company",
            "researchers", "the committee", "residents", "the bank", "police", "the union",
            "engineers", "the court", "teachers", "the hospital", "investors", "the airline"]
VERBS = ["said", "announced", "reported", "confirmed", "denied", "warned", "expected",
         "proposed", "rejected", "approved", "estimated", "questioned", "welcomed"]
OBJECTS = ["a new plan for the river", "higher prices next year", "the budget for schools",
           "changes to the railway timetable", "a delay in the harvest", "record sales",
           "a review of safety rules", "the merger talks", "more rain in the north",
           "a shortage of nurses", "lower interest rates", "the opening of a bridge",
           "a strike at the port", "funding for the museum", "repairs to the main road"]
TAILS = ["on Monday", "after a long meeting", "in a statement", "despite the weather",
         "for the third time", "before the election", "at the annual conference",
         "according to officials", "in the capital", "late last night"]


def make_texts(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` short news-like documents of 2-9 sentences."""
    docs = []
    for _ in range(n):
        sentences = []
        for _ in range(int(rng.integers(2, 10))):
            s = (f"{SUBJECTS[rng.integers(len(SUBJECTS))]} {VERBS[rng.integers(len(VERBS))]} "
                 f"{OBJECTS[rng.integers(len(OBJECTS))]} {TAILS[rng.integers(len(TAILS))]}")
            if rng.random() < 0.3:
                s += f", with {int(rng.integers(2, 900))} people involved"
            sentences.append(s[0].upper() + s[1:] + ".")
        docs.append(" ".join(sentences))
    return docs


def train_tokenizer(texts: list[str], vocab_size: int = 800) -> object:
    """A byte-level BPE (lossless) trained on ``texts``; ids 0 = <pad>, 1 = <|endoftext|>."""
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError as err:  # the tokens extra is not installed
        raise ImportError("the tokenized demo needs the 'tokenizers' package "
                          "(pip install 'auditor[tokens]')") from err
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[PAD, EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer)
    return tok


def _layout(ids: list[list[int]], pad: int, eos: int) -> dict[str, list[list[int]]]:
    out: dict[str, list[list[int]]] = {"input_ids": [], "attention_mask": [], "labels": []}
    for row in ids:
        row = (list(row) + [eos])[:MAX_LENGTH]
        n_pad = MAX_LENGTH - len(row)
        out["input_ids"].append(row + [pad] * n_pad)
        out["attention_mask"].append([1] * len(row) + [0] * n_pad)
        out["labels"].append(row + [-100] * n_pad)
    return out


def _split_rows(order: np.ndarray, cuts: np.ndarray) -> list[np.ndarray]:
    bounds = [0, *cuts.tolist()]
    return [np.sort(order[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def make_token_demo(seed: int = 11) -> tuple[dict[str, pl.DataFrame], object]:
    """The tokenized splits (with every planted problem) and the trained tokenizer."""
    rng = np.random.default_rng(seed)
    texts = {name: make_texts(rng, n) for name, n in SIZES.items()}
    # Disjoint train rows for the planted problems, so each count is exact.
    order = rng.permutation(SIZES["train"])
    cuts = np.cumsum([PLANTED["injection"], PLANTED["double_shift"], MASK_CANDIDATES,
                      PLANTED["copied_exact"], PLANTED["copied_near"]])
    inject, shift_rows, mask_pool, exact_slots, near_slots = _split_rows(order, cuts)
    slots = np.concatenate([exact_slots, near_slots])
    # Users sometimes type a control string; HF tokenizers encode it as the control token.
    for i in inject:
        texts["train"][i] = texts["train"][i].replace(". ", f". {EOS} ", 1)
    # Test documents copied into train: verbatim, and with one word changed.
    exact = rng.choice(SIZES["test"], PLANTED["copied_exact"] + PLANTED["copied_near"],
                       replace=False)
    copies = []
    for k, i in enumerate(exact):
        doc = texts["test"][i]
        if k >= PLANTED["copied_exact"]:
            doc = doc[:doc.rstrip(".").rfind(" ")] + " meanwhile."
        copies.append(doc)
    for slot, doc in zip(slots, copies):
        texts["train"][slot] = doc
    tok = train_tokenizer(texts["train"] + texts["test"])
    pad, eos = tok.token_to_id(PAD), tok.token_to_id(EOS)
    frames = {}
    for name, docs in texts.items():
        enc = [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]
        if name == "test":  # stale: ids of another text stored beside this text
            for i in rng.choice(SIZES["test"], PLANTED["stale"], replace=False):
                enc[i] = tok.encode("Breaking: " + docs[i], add_special_tokens=False).ids
        cols = _layout(enc, pad, eos)
        if name == "train":
            for i in shift_rows:  # labels pre-shifted while label_shift: 0 is declared
                lab = cols["labels"][i]
                cols["labels"][i] = lab[1:] + [-100]
            # the mask bug needs padding to cover: the first padded rows of the pool
            padded = [i for i in mask_pool if cols["attention_mask"][i][-1] == 0]
            for i in padded[:PLANTED["mask_covers_padding"]]:
                cols["attention_mask"][i] = [1] * MAX_LENGTH
        frames[name] = pl.DataFrame({
            "doc_id": np.arange(len(docs)) + (0 if name == "train" else 100_000),
            "text": docs, **cols},
            schema={"doc_id": pl.Int64, "text": pl.String, "input_ids": pl.List(pl.Int32),
                    "attention_mask": pl.List(pl.Int8), "labels": pl.List(pl.Int32)})
    return frames, tok


AUDIT_YAML = f"""\
# Tokenized demo: a causal-LM dataset with planted problems (see auditor/loading/demo_tokens.py).
datasets: {{train: train.parquet, test: test.parquet}}
columns:
  ids: [doc_id]
tokens:
  tokenizer: tokenizer.json
  text: text
  input_ids: input_ids
  attention_mask: attention_mask
  labels: labels
  objective: causal_lm
  label_shift: 0
  ignore_index: -100
  max_length: {MAX_LENGTH}
suite: default
seed: 0
"""


def write_token_demo(folder: Path) -> Path:
    """Write the tokenized demo (Parquet splits, tokenizer.json, audit.yaml) into ``folder``;
    return the YAML path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    frames, tok = make_token_demo()
    for name, df in frames.items():
        df.write_parquet(folder / f"{name}.parquet")
    tok.save(str(folder / "tokenizer.json"))  # type: ignore[attr-defined]
    path = folder / "audit.yaml"
    path.write_text(AUDIT_YAML, encoding="utf-8")
    return path
