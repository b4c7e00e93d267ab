"""The CLI end to end, through a subprocess, on files in a temp folder."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from auditor import cli as cli_module


def _yaml(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "audit.yaml"
    p.write_text(text)
    return p


def test_clean_splits_exit_0_and_write_both_reports(tmp_path, clean_splits, write_splits, cli):
    write_splits(clean_splits)
    cfg = _yaml(tmp_path, "datasets: {train: train.parquet, test: test.parquet}\n"
                          "columns: {label: y, ids: [row_id]}\n")
    out = tmp_path / "out"
    r = cli("run", cfg, "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(out / "report.html")
    doc = json.loads((out / "report.json").read_text())
    assert doc["status"] == "pass"
    assert doc["datasets"]["train"]["rows"] == 800
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_planted_duplicates_exit_1(tmp_path, clean_splits, write_splits, cli):
    train, test = clean_splits["train"], clean_splits["test"]
    test = pl.concat([test, train.head(10).with_columns(pl.col("row_id") + 50_000)])
    paths = write_splits({"train": train, "test": test})
    out = tmp_path / "o"
    r = cli("run", "--train", paths["train"], "--test", paths["test"], "--label", "y",
            "--id", "row_id", "--out", out)
    assert r.returncode == 1, r.stderr
    assert "FAIL" in r.stderr
    doc = json.loads((out / "report.json").read_text())
    dup = next(c for c in doc["checks"] if c["id"] == "leakage.duplicates")
    assert dup["status"] == "fail"
    assert dup["findings"][0]["count"] == 10


def test_fail_on_warn_turns_a_warning_into_exit_1(tmp_path, clean_splits, write_splits, cli):
    train, test = clean_splits["train"], clean_splits["test"]
    test = pl.concat([test, train.head(10).with_columns(pl.col("row_id") + 50_000)])
    write_splits({"train": train, "test": test})
    # 10 of 210 rows (4.8%) copied: above warn_above (0) but below this fail_above (0.5)
    cfg = _yaml(tmp_path, "datasets: {train: train.parquet, test: test.parquet}\n"
                          "columns: {label: y, ids: [row_id]}\n"
                          "thresholds: {leakage.duplicates: {fail_above: 0.5}}\n")
    suite = tmp_path / "dups.yaml"  # the one check that warns (a clean run: tested elsewhere)
    suite.write_text("checks:\n  leakage.duplicates: {}\n")
    assert cli("run", cfg, "--suite", suite, "--out", tmp_path / "a", "--quiet").returncode == 0
    assert cli("run", cfg, "--suite", suite, "--out", tmp_path / "b", "--quiet", "--fail-on",
               "warn").returncode == 1
    doc = json.loads((tmp_path / "a" / "report.json").read_text())
    dup = next(c for c in doc["checks"] if c["id"] == "leakage.duplicates")
    assert dup["status"] == "warn" and dup["params"]["fail_above"] == 0.5


def test_missing_file_exit_2_one_line(tmp_path, cli):
    r = cli("run", "--train", tmp_path / "nope.parquet", "--test", tmp_path / "x.parquet")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1
    assert "nope.parquet: file not found" in r.stderr
    assert "Traceback" not in r.stderr


def test_unknown_yaml_key_exit_2_with_suggestion(tmp_path, clean_splits, write_splits, cli):
    write_splits(clean_splits)
    cfg = _yaml(tmp_path, "datasets: {train: train.parquet, test: test.parquet}\n"
                          "columns: {lable: y}\n")
    r = cli("run", cfg, "--out", tmp_path / "o")
    assert r.returncode == 2
    assert "columns.lable: unknown key (did you mean 'label'?)" in r.stderr
    assert not (tmp_path / "o" / "report.json").exists()


def test_missing_label_column_exit_2_names_file_and_column(tmp_path, clean_splits,
                                                           write_splits, cli):
    paths = write_splits({"train": clean_splits["train"],
                          "test": clean_splits["test"].drop("y")})
    r = cli("run", "--train", paths["train"], "--test", paths["test"], "--label", "y",
            "--out", tmp_path / "o")
    assert r.returncode == 2
    assert str(paths["test"]) in r.stderr and "label column 'y' not found" in r.stderr


def test_no_arguments_is_a_usage_error(cli):
    r = cli("run")
    assert r.returncode == 2
    assert "audit.yaml or at least --train" in r.stderr


def test_crashing_check_gives_exit_3_and_report(tmp_path, clean_splits, write_splits,
                                                monkeypatch, capsys):
    from auditor.detectors.duplicates import Duplicates

    def boom(self, engine, roles):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(Duplicates, "measure", boom)
    paths = write_splits(clean_splits)
    code = cli_module.main(["run", "--train", str(paths["train"]), "--test",
                            str(paths["test"]), "--label", "y", "--id", "row_id", "--out",
                            str(tmp_path / "o"), "--quiet"])
    assert code == 3
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    assert statuses["leakage.duplicates"] == "error"
    assert statuses["schema.consistency"] == "pass"
    assert next(c for c in doc["checks"]
                if c["id"] == "leakage.duplicates")["error"] == "RuntimeError: kaboom"


def test_demo_exits_1_and_prints_report_path(tmp_path, cli):
    out = tmp_path / "demo"
    r = cli("demo", "--out", out)
    assert r.returncode == 1, r.stderr
    assert r.stdout.split() == [str(out / "report.html"), str(out / "tokens" / "report.html")]
    assert "planted problems" in r.stderr
    tokens = json.loads((out / "tokens" / "report.json").read_text())
    assert tokens["status"] == "fail"
    assert {c["id"] for c in tokens["checks"] if c["status"] == "fail"} >= {
        "tokens.special_tokens", "tokens.contamination"}
    doc = json.loads((out / "report.json").read_text())
    dup = next(c for c in doc["checks"] if c["id"] == "leakage.duplicates")
    train_test = next(f for f in dup["findings"] if f["splits"] == ["train", "test"])
    assert train_test["count"] == 30 and train_test["severity"] == "fail"
    # sized for nightly retention: charts and their plotly.js (compressed) under 1 MB a report
    for page in (out / "report.html", out / "tokens" / "report.html"):
        assert 'class="chart"' in page.read_text() and page.stat().st_size < 1_000_000


def test_unwritable_output_dir_exit_2(tmp_path, clean_splits, write_splits, cli):
    paths = write_splits(clean_splits)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = cli("run", "--train", paths["train"], "--test", paths["test"], "--out",
            blocker / "sub")
    assert r.returncode == 2
    assert "output directory is not writable" in r.stderr


def test_cli_module_does_not_import_heavy_libraries():
    import subprocess
    import sys

    code = ("import sys, auditor.cli; heavy = [m for m in ('torch', 'sklearn', 'polars', "
            "'numpy', 'matplotlib', 'scipy') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]"


CORPUS = Path(__file__).parent / "codescan_corpus"


def test_scan_code_exit_codes_and_report(tmp_path, cli):
    leaky = cli("scan-code", CORPUS / "leak_scaler_before_split.py", "--out", tmp_path / "a",
                "--quiet")
    assert leaky.returncode == 1, leaky.stderr
    doc = json.loads((tmp_path / "a" / "report.json").read_text())
    (check,) = doc["checks"]
    assert check["id"] == "leakage.preprocessing" and check["status"] == "fail"
    assert check["findings"][0]["evidence"]["line"] == 12
    clean = cli("scan-code", CORPUS / "clean_pipeline_cross_val.py", "--out", tmp_path / "b",
                "--quiet")
    assert clean.returncode == 0, clean.stderr
    missing = cli("scan-code", tmp_path / "nope.py")
    assert missing.returncode == 2 and "nope.py: file not found" in missing.stderr


def test_pipeline_path_that_does_not_exist_is_a_config_error(tmp_path, cli):
    cfg = _yaml(tmp_path, "datasets: {train: a.parquet}\npipeline: [make_splits.py]\n")
    r = cli("run", cfg)
    assert r.returncode == 2
    assert "pipeline: " in r.stderr and "make_splits.py: file not found" in r.stderr


def test_tokenizer_that_cannot_load_is_an_input_error(tmp_path, cli):
    from auditor.loading.demo_tokens import write_token_demo

    cfg = write_token_demo(tmp_path / "tok")
    text = cfg.read_text()
    import re
    cfg.write_text(re.sub(r"tokenizer: .*", "tokenizer: missing/tokenizer.json", text))
    r = cli("run", cfg, "--out", tmp_path / "o")
    assert r.returncode == 2
    assert "tokens.tokenizer 'missing/tokenizer.json'" in r.stderr and "not found" in r.stderr


def test_write_clean_writes_the_uncontaminated_test_rows(tmp_path, cli):
    from auditor.loading.demo_tokens import write_token_demo

    cfg = write_token_demo(tmp_path / "tok")
    inputs = {p: p.read_bytes() for p in (tmp_path / "tok").rglob("*") if p.is_file()}
    r = cli("run", cfg, "--out", tmp_path / "o", "--write-clean", tmp_path / "clean",
            "--suite", "fast")
    assert r.returncode == 1, r.stderr
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    (f,) = next(c for c in doc["checks"] if c["id"] == "tokens.contamination")["findings"]
    import polars as pl
    clean = pl.read_parquet(tmp_path / "clean" / "test.parquet")
    total = f["evidence"]["rows_to_drop"]["total"]
    assert total == f["count"] > 0
    assert clean.height == pl.read_parquet(next((tmp_path / "tok").rglob("test*.parquet"))
                                           ).height - total
    assert "wrote the" in f["evidence"]["clean_subset"]
    assert all(p.read_bytes() == b for p, b in inputs.items())  # inputs untouched


def test_write_clean_without_tokens_or_without_the_check_is_a_usage_error(tmp_path, cli):
    from auditor.loading.demo_tokens import write_token_demo

    cfg = write_token_demo(tmp_path / "tok")
    suite = tmp_path / "suite.yaml"
    suite.write_text("checks: {tokens.lengths: {}}\n")
    r = cli("run", cfg, "--out", tmp_path / "o", "--write-clean", tmp_path / "c",
            "--suite", suite)
    assert r.returncode == 2 and "does not run tokens.contamination" in r.stderr
    r = cli("run", "--train", cfg.parent / "train.parquet", "--test",
            cfg.parent / "test.parquet", "--out", tmp_path / "o2", "--write-clean",
            tmp_path / "c")
    assert r.returncode == 2 and "--write-clean needs a tokens: section" in r.stderr
    assert not (tmp_path / "c").exists()
