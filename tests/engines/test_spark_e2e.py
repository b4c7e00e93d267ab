"""End to end (issue 15, "done when"): ``auditor run <audit.yaml> --engine spark`` gives the
same verdicts as the polars engine on the demo data (tabular and tokenized) and on a small
version of the benchmark data (bench/make_data.py). A check the spark engine skips is listed,
never compared; every check it runs must reach the polars status."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from auditor.engines import NOT_ON_SPARK

# the demos run the whole pipeline with Spark's code generation on, as in production (the
# other Spark tests, the bench data's here among them, run interpreted plans:
# tests/engines/conftest.py)
CODEGEN = pytest.mark.usefixtures("codegen")

ROOT = Path(__file__).resolve().parents[2]
# checks with a Spark implementation since the engine landed: they must run, not skip (since
# every check is written once as measure/judge, no check may skip as "not on spark" at all)
CORE = ("leakage.duplicates", "leakage.group_overlap", "leakage.temporal", "drift.label",
        "drift.features")


def _run(args: list[str], out: Path) -> tuple[int, dict]:
    from auditor.cli import main

    code = main(["run", *args, "--out", str(out), "-q", "--hash", "fast"])
    assert code in (0, 1), f"auditor run {' '.join(args[-2:])} exited {code}"
    return code, json.loads((out / "report.json").read_text())


def _verdicts(config_args: list[str], tmp_path: Path, spark_args: tuple[str, ...] = ()
              ) -> tuple[dict, dict, list[str]]:
    code_p, polars = _run([*config_args, "--engine", "polars"], tmp_path / "polars")
    code_s, spark = _run([*config_args, "--engine", "spark", *spark_args], tmp_path / "spark")
    p = {c["id"]: c for c in polars["checks"]}
    s = {c["id"]: c for c in spark["checks"]}
    assert set(p) == set(s)  # the same suite on both
    not_on_spark = sorted(c for c in s if s[c]["status"] == "skipped"
                          and NOT_ON_SPARK in (s[c].get("summary") or ""))
    differ = {c: (p[c]["status"], s[c]["status"]) for c in p
              if c not in not_on_spark and p[c]["status"] != s[c]["status"]}
    errors = {c: (s[c].get("error") or "")[:300] for c in differ if s[c]["status"] == "error"}
    print(f"not on spark: {not_on_spark}; differ: {differ}; spark errors: {errors}; "
          f"spark check seconds: { {c: s[c]['duration_s'] for c in s} }", file=sys.stderr)
    assert not_on_spark == []  # every check measures through the engine operations
    return p, s, not_on_spark


@CODEGEN
def test_demo_verdicts_equal_on_both_engines(spark, tmp_path):
    from auditor.loading.demo import write_demo

    config = write_demo(tmp_path / "data")
    # --spark-conf makes the run apply the session defaults, adaptive execution on among them;
    # the test session keeps it off (a tiny job's adaptive re-planning costs more than it saves)
    p, s, skipped = _verdicts([str(config)], tmp_path,
                              ("--spark-conf", "spark.sql.shuffle.partitions=2",
                               "--spark-conf", "spark.sql.adaptive.enabled=false"))
    # the Spark run's report: its engine, the engine's note, the rows, the HTML beside it
    doc = json.loads((tmp_path / "spark" / "report.json").read_text())
    assert doc["config"]["engine"] == "spark"
    assert any("spark engine" in n for n in doc["notes"])
    assert doc["datasets"]["train"]["rows"] == json.loads(
        (tmp_path / "polars" / "report.json").read_text())["datasets"]["train"]["rows"] > 0
    assert (tmp_path / "spark" / "report.html").stat().st_size > 0
    for check in CORE:
        assert check not in skipped, f"{check} does not run on spark"
    differ = {c: (p[c]["status"], s[c]["status"]) for c in p
              if c not in skipped and p[c]["status"] != s[c]["status"]}
    assert differ == {}
    # the planted problems, counted the same on both engines
    for check, metric in (("leakage.duplicates", "duplicate_rows"),
                          ("leakage.group_overlap", "group_overlap_rows")):
        def counts(doc):
            return sorted((tuple(f["splits"]), f["count"], f["severity"])
                          for f in doc[check]["findings"] if f["metric"] == metric)
        assert counts(s) == counts(p) and any(c[2] == "fail" for c in counts(p))
    assert s["leakage.duplicates"]["status"] == "fail"


@CODEGEN
def test_token_demo_with_names_spark_would_parse_gives_the_polars_verdicts(spark, tmp_path):
    """The token demo with its columns renamed (``input.ids``, ``attn`mask``, ``la bels``,
    ``te.xt``, ``doc.id``): every tokens.* check runs on Spark (``mapInArrow`` resolves its
    input by name; see ``spark_engine.map_in_arrow``), without an error, and reaches the
    polars status."""
    pytest.importorskip("tokenizers")
    import polars as pl

    from auditor.loading.demo_tokens import write_token_demo

    config = write_token_demo(tmp_path / "data")
    names = {"text": "te.xt", "input_ids": "input.ids", "attention_mask": "attn`mask",
             "labels": "la bels", "doc_id": "doc.id"}
    for split in ("train", "test"):
        path = config.parent / f"{split}.parquet"
        frame = pl.read_parquet(path)
        frame.rename({k: v for k, v in names.items() if k in frame.columns}).write_parquet(path)
    text = config.read_text()
    for old, new in (("[doc_id]", "[doc.id]"), ("text: text", "text: te.xt"),
                     ("input_ids: input_ids", "input_ids: input.ids"),
                     ("attention_mask: attention_mask", 'attention_mask: "attn`mask"'),
                     ("labels: labels", "labels: la bels")):
        assert old in text, old
        text = text.replace(old, new)
    config.write_text(text)
    p, s, skipped = _verdicts([str(config)], tmp_path)
    assert {c: s[c].get("error") for c in s if s[c]["status"] == "error"} == {}
    assert {c: (p[c]["status"], s[c]["status"]) for c in p
            if p[c]["status"] != s[c]["status"]} == {}
    ran = [c for c in s if c.startswith("tokens.") and s[c]["status"] != "skipped"]
    assert len(ran) == 4, ran  # special_tokens, lengths, roundtrip, contamination
    assert s["tokens.special_tokens"]["status"] == "fail"  # the demo's planted problems


def test_bench_data_verdicts_equal_on_both_engines(spark, tmp_path):
    """bench/make_data.py at 5,000 + 1,250 rows (the generator of the 10M / 50M benchmark),
    the default suite."""
    sys.path.insert(0, str(ROOT / "bench"))
    from make_data import generate

    paths = generate(5_000, tmp_path / "data")
    args = ["--train", str(paths["train"]), "--test", str(paths["test"]), "--label", "label",
            "--time", "event_ts", "--group", "user_id", "--id", "row_id", "--text", "notes"]
    p, s, skipped = _verdicts(args, tmp_path)
    for check in CORE:
        assert check not in skipped, f"{check} does not run on spark"
    # the planted problems of make_data.py fail on both engines
    for check in ("leakage.duplicates", "leakage.group_overlap", "leakage.temporal"):
        assert p[check]["status"] == s[check]["status"] == "fail"
    differ = {c: (p[c]["status"], s[c]["status"]) for c in p
              if c not in skipped and p[c]["status"] != s[c]["status"]}
    assert differ == {}
