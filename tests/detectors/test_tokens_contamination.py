"""tokens.contamination on the Lee corpus (train = lee_background, test = lee): no natural
overlap; planted exact copies, near-duplicates and embedded passages are found, each by the
right detector, and the n-gram overlap ratio equals a set-based reference."""
from __future__ import annotations

import re
import unicodedata

import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.loading.data import build_audit_data
from auditor.detectors.token_contamination import (Contamination, longest_shared_span,
                                                   ngram_hashes)
from auditor.errors import NotApplicable
from auditor.report.results import Severity
from tests.tokenizer_fixtures import lee_test, lee_train, token_data  # noqa: F401


def _frame(texts: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"text": texts, "input_ids": [[0]] * len(texts)})


def _data(train: list[str], *evals: list[str]):
    frames = {"train": _frame(train)}
    for name, texts in zip(("val", "test"), evals) if len(evals) == 2 else \
            zip(("test",), evals):
        frames[name] = _frame(texts)
    return token_data(frames, "unused", attention_mask=None, labels=None)


def _words(s: str) -> list[str]:
    return re.findall(r"\w+", unicodedata.normalize("NFKC", s).lower())


@pytest.fixture(scope="module")
def planted(lee_train, lee_test):
    """lee.cor with rows 0-2 exact copies (case/spacing changed), 3-4 one word changed,
    5-6 a 60-word passage of a train document inside new text."""
    test = list(lee_test)
    test[0] = "  " + lee_train[10].upper() + "  "
    test[1] = lee_train[20].replace(" ", "   ")
    test[2] = lee_train[30]
    for i, src in ((3, 40), (4, 50)):
        w = lee_train[src].split()
        w[len(w) // 2] = "zebra"
        test[i] = " ".join(w)
    for i, src in ((5, 60), (6, 70)):
        test[i] = ("An unrelated opening sentence about gardens. "
                   + " ".join(lee_train[src].split()[:60]) + " Then a different ending.")
    return test


def test_the_lee_corpus_test_documents_are_not_in_its_training_documents(lee_train, lee_test):
    (f,) = Contamination().run(_data(lee_train, lee_test))
    assert (f.count, f.severity, f.splits) == (0, Severity.INFO, ["train", "test"])
    assert f.message.startswith("0 of 50 test documents (0%) also occur in train")


def test_planted_copies_are_found_by_the_right_detector(lee_train, planted):
    (f,) = Contamination().run(_data(lee_train, planted))
    assert (f.subject, f.count, f.severity) == ("text", 7, Severity.FAIL)
    assert f.value == pytest.approx(7 / 50)
    by = {r["detector"]: r["documents"] for r in f.evidence["by_detector"]}
    assert by == {"exact copies (normalised text)": 3, "near-duplicates (Jaccard >= 0.8)": 2,
                  "with >= 50% of their 13-grams in train": 2,
                  "any 13-gram shared (GPT-3 'dirty')": 7}
    assert f.evidence["rows_to_drop"]["rows"] == [0, 1, 2, 3, 4, 5, 6]
    ex = {e["test_row"]: e for e in f.evidence["examples"]}
    assert ex[0]["train_row"] == 10 and ex[0]["detector"] == "exact"
    assert ex[3]["train_row"] == 40 and ex[3]["detector"] == "near-duplicate"
    assert ex[5]["train_row"] == 60 and ex[5]["detector"] == "n-gram overlap"
    passage = _words(" ".join(lee_train[60].split()[:60]))
    assert ex[5]["shared span"].startswith(f"({len(passage)} words) {' '.join(passage[:3])}")


def test_each_detector_can_be_turned_off(lee_train, planted):
    (f,) = Contamination(exact=False, near_duplicates=False).run(_data(lee_train, planted))
    assert f.count == 7  # the n-gram detector alone sees every planted document
    (g,) = Contamination(ngram=0).run(_data(lee_train, planted))
    assert g.count == 5 and "dirty" not in str(g.evidence["by_detector"])


def test_ngram_overlap_ratio_equals_a_set_based_reference(lee_train, planted):
    n = 13
    train_grams = set()
    for t in lee_train:
        w = _words(t)
        train_grams |= {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}
    ref = {}
    for j, t in enumerate(planted):
        w = _words(t)
        grams = [tuple(w[i:i + n]) for i in range(len(w) - n + 1)]
        hit = sum(g in train_grams for g in grams)
        if hit:
            ref[j] = hit / len(grams)
    from functools import partial

    from auditor.detectors.token_contamination import (NGRAM, TRAIN_SCHEMA, EVAL_SCHEMA,
                                                       Hashing, eval_rows, ngram_overlap,
                                                       train_rows)
    from auditor.engines.operations import Expansion
    from auditor.engines.selection import engine_of

    engine = engine_of(_data(lee_train, planted))
    hs = Hashing("text", n, 0, exact=False, near=False, shingle=3, num_perm=128, bands=16)
    got = engine.matches(Expansion("train", ("text",), partial(train_rows, hs=hs), TRAIN_SCHEMA),
                         Expansion("test", ("text",), partial(eval_rows, hs=hs), EVAL_SCHEMA),
                         ["h"], order="train_row", limit=4).joined
    dirty = ngram_overlap(got.filter(pl.col("kind") == NGRAM), n)
    assert dict(zip(dirty["test_row"].to_list(), dirty["overlap"].to_list())) == \
        pytest.approx(ref)


def test_the_ngram_prefilter_finds_the_same_near_duplicates_as_minhash_over_everything(
        lee_train, planted):
    """With the n-gram detector on, MinHash compares only documents that share an n-gram or
    are short: the same near-duplicates (rows 0-4: 0-2 exact copies, 3-4 one word changed)
    as MinHash over every document (the n-gram detector off)."""
    from auditor.engines.selection import engine_of

    data = _data(lee_train, planted)

    def near(check):
        (m,) = check.measure(engine_of(data), data.roles).splits
        return m.by_kind["near-duplicate"], [(e["test_row"], e["train_row"])
                                             for e in m.examples
                                             if e["detector"] == "near-duplicate"]

    filtered = near(Contamination(exact=False, ngram_ratio_at=1.0))
    everything = near(Contamination(exact=False, ngram=0))
    assert filtered == everything
    assert [r for r, _ in filtered[1]] == [0, 1, 2, 3, 4]


def test_ngram_hashes_give_one_hash_per_window_and_equal_windows_hash_alike():
    texts = pl.Series(["a b c d e", "x a b c d", "short", None])
    g = ngram_hashes(texts, 3, seed=0)
    assert g.group_by("doc").len().sort("doc").rows() == [(0, 3), (1, 3)]
    h = {(d, p): x for d, p, x in g.iter_rows()}
    assert h[(0, 0)] == h[(1, 1)] and h[(0, 1)] == h[(1, 2)]  # "a b c", "b c d"
    assert h[(0, 0)] != h[(0, 1)]


def test_val_and_test_are_each_compared_with_train(lee_train, planted, lee_test):
    findings = Contamination().run(_data(lee_train, planted, lee_test))
    assert [(f.splits, f.count) for f in findings] == [(["train", "val"], 7),
                                                       (["train", "test"], 0)]


def test_the_longest_shared_span_is_shown_from_the_evaluation_text():
    span, n = longest_shared_span("Intro. The quick brown Fox jumps!", "a quick brown fox b")
    assert (span, n) == ("quick brown fox", 3)


def test_one_split_or_no_text_is_not_applicable(lee_train, clean_splits):
    with pytest.raises(NotApplicable, match="only one split"):
        Contamination().run(token_data({"train": _frame(lee_train[:5])}, "unused",
                                       attention_mask=None, labels=None))
    with pytest.raises(ValueError, match="declare text, input_ids or both"):  # refused early
        token_data({"train": _frame(lee_train[:5]), "test": _frame(lee_train[5:9])},
                   "unused", text=None, input_ids=None, attention_mask=None, labels=None)
    with pytest.raises(NotApplicable, match="no tokens: section"):
        Contamination().run(build_audit_data(clean_splits, columns=Columns(label="y")))


@pytest.mark.parametrize("bad", [dict(jaccard_at=1.2), dict(num_perm=100, bands=16),
                                 dict(ngram=-1), dict(shingle=0)])
def test_invalid_parameters_are_rejected(bad):
    with pytest.raises(ValueError, match="must be"):
        Contamination(**bad)


def _written(check, data):
    """``check`` run on ``data``, then the clean subsets its findings ask for written, as a run
    writes them after every check (:func:`auditor.clean_subsets.write_clean_subsets`)."""
    from auditor.clean_subsets import write_clean_subsets
    from auditor.report.results import CheckResult, Status

    findings = check.run(data)
    write_clean_subsets([CheckResult(check.id, check.title, Status.PASS, 0.0, "",
                                     findings=findings)], data)
    return findings


def test_clean_dir_writes_the_test_split_without_its_contaminated_rows(lee_train, planted,
                                                                       tmp_path):
    check = Contamination(clean_dir=str(tmp_path / "clean"))
    (f,) = check.run(_data(lee_train, planted))
    assert not (tmp_path / "clean").exists()  # a check never writes: the run does, after it
    (f,) = _written(check, _data(lee_train, planted))
    clean = pl.read_parquet(tmp_path / "clean" / "test.parquet")
    assert f.count == 7 and clean.height == len(planted) - 7
    assert clean["text"].to_list() == planted[7:]  # rows 0-6 planted, order kept
    assert clean.columns == ["text", "input_ids"]
    assert "wrote the 43 clean test rows (of 50)" in f.evidence["clean_subset"]
    assert not list((tmp_path / "clean").glob(".*tmp"))  # no temporary file left behind


def test_clean_dir_never_writes_over_an_input_or_from_a_sample(lee_train, planted, tmp_path):
    data = _data(lee_train, planted)
    target = tmp_path / "test.parquet"
    target.write_bytes(b"input")
    data.paths = {"train": str(tmp_path / "train.parquet"), "test": str(target)}
    (f,) = _written(Contamination(clean_dir=str(tmp_path)), data)
    assert target.read_bytes() == b"input" and "is an input of this audit" in f.message
    data = _data(lee_train, planted)
    data.sampled = True
    (g,) = _written(Contamination(clean_dir=str(tmp_path / "out")), data)
    assert not (tmp_path / "out").exists() and "read as samples" in g.message


def test_clean_subset_keeps_the_input_files_dtypes_and_survives_a_failed_write(
        lee_train, planted, tmp_path):
    data = _data(lee_train, planted)
    stored = data.splits["test"].with_columns(k=pl.int_range(pl.len(), dtype=pl.Int32))
    stored.write_parquet(tmp_path / "test_in.parquet")
    data.splits["test"] = stored.with_columns(pl.col("k").cast(pl.Float64))  # as harmonised
    data.paths = {"train": None, "test": str(tmp_path / "test_in.parquet")}
    (f,) = _written(Contamination(clean_dir=str(tmp_path / "clean")), data)
    clean = pl.read_parquet(tmp_path / "clean" / "test.parquet")
    assert clean.schema["k"] == pl.Int32 and clean["k"].to_list() == list(range(7, 50))
    blocker = tmp_path / "file"
    blocker.write_text("x")  # a file where the folder should be: the write fails
    (g,) = _written(Contamination(clean_dir=str(blocker / "sub")), data)
    assert g.count == 7 and "clean subset not written to" in g.message


def test_edited_chinese_reviews_are_near_duplicates_and_unrelated_ones_are_not(lee_train):
    from tests.stats.test_minhash import EDITS_ZH, REVIEWS_ZH, UNRELATED_ZH

    # Chinese has no spaces: shingles are character trigrams (a review was 5-6 \w+ "words")
    train = lee_train[:40] + REVIEWS_ZH
    test = [EDITS_ZH[i] for i in sorted(EDITS_ZH)] + UNRELATED_ZH + lee_train[100:104]
    (f,) = Contamination().run(_data(train, test))
    assert (f.count, f.severity) == (4, Severity.FAIL)
    by = {r["detector"]: r["documents"] for r in f.evidence["by_detector"]}
    assert by["near-duplicates (Jaccard >= 0.8)"] == 4
    assert f.evidence["rows_to_drop"]["rows"] == [0, 1, 2, 3]
    assert sorted((e["test_row"], e["train_row"]) for e in f.evidence["examples"]) == [
        (j, 40 + i) for j, i in enumerate(sorted(EDITS_ZH))]


def test_training_documents_hashed_in_chunks_give_the_same_finding(lee_train, planted):
    """``chunk_docs`` sets how many training documents one batch hashes (polars): chunks of 7
    documents (an n-gram's first four training rows found across many chunks) give the
    finding of the default chunks."""
    from dataclasses import asdict

    data = _data(lee_train, planted)
    small = [asdict(f) for f in Contamination(chunk_docs=7).run(data)]
    assert small == [asdict(f) for f in Contamination().run(data)]
    assert small[0]["count"] == 7
