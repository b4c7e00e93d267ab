"""The bad-input catalogue: each input gets exit 2 with one line naming the file/column and
what was expected, or — where the audit can proceed — a complete report in which no check
crashed. Plus the properties: inputs never modified, determinism, atomic reports."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np
import polars as pl
import pytest

from auditor import cli
from tests.conftest import clean_frame


def _write(tmp: Path, name: str, df: pl.DataFrame) -> Path:
    path = tmp / name
    if name.endswith(".csv"):
        df.write_csv(path)
    elif name.endswith(".jsonl"):
        df.write_ndjson(path)
    else:
        df.write_parquet(path)
    return path


def _run(capsys, *args: str) -> tuple[int, str]:
    code = cli.main(["run", *map(str, args), "--quiet"])
    return code, capsys.readouterr().err


def _base(tmp: Path) -> dict[str, Path]:
    return {"train": _write(tmp, "train.parquet", clean_frame(300, 1)),
            "test": _write(tmp, "test.parquet", clean_frame(100, 2, 5000))}


# --- inputs that must be refused: exit 2, one line, naming what is wrong --------------------

def _missing(tmp):
    return ["--train", tmp / "absent.parquet", "--test", tmp / "absent.parquet"], \
        "absent.parquet: file not found"


def _empty_dir(tmp):
    (tmp / "d").mkdir()
    return ["--train", tmp / "d", "--test", tmp / "d"], "directory contains no Parquet files"


def _corrupt_parquet(tmp):
    (tmp / "c.parquet").write_bytes(b"PAR1" + b"\0" * 100)
    return ["--train", tmp / "c.parquet", "--test", tmp / "c.parquet"], \
        "c.parquet: cannot read as Parquet"


def _truncated_csv(tmp):
    p = tmp / "t.csv"
    p.write_text("a,b,y\n1,2,0\n3,4,1\n5,6")
    return ["--train", p, "--test", p, "--label", "y"], "t.csv: the file looks truncated"


def _wrong_delimiter(tmp):
    p = tmp / "s.csv"
    p.write_text("a;b;y\n1;2;0\n3;4;1\n")
    return ["--train", p, "--test", p], "s.csv: read one column named 'a;b;y'"


def _non_utf8_csv(tmp):
    p = tmp / "l.csv"
    p.write_bytes("a,b,y\n1,caf\xe9,0\n".encode("latin-1"))
    return ["--train", p, "--test", p], "l.csv: cannot read as CSV: invalid utf-8"


def _non_utf8_jsonl(tmp):
    p = tmp / "l.jsonl"
    p.write_bytes(b'{"a": 1, "b": "caf\xe9"}\n')
    return ["--train", p, "--test", p], "l.jsonl: cannot read as JSON Lines"


def _empty_split(tmp):
    b = _base(tmp)
    e = _write(tmp, "empty.parquet", clean_frame(10, 3).head(0))
    return ["--train", b["train"], "--test", e, "--label", "y"], \
        "empty.parquet: split 'test' has 0 rows"


def _duplicate_names(tmp):
    p = tmp / "dup.csv"
    p.write_text("a,a,y\n1,2,0\n3,4,1\n")
    return ["--train", p, "--test", p], "dup.csv: duplicate column name 'a'"


def _label_missing(tmp):
    b = _base(tmp)
    t = _write(tmp, "nolabel.parquet", clean_frame(50, 4).drop("y"))
    return ["--train", b["train"], "--test", t, "--label", "y"], \
        "nolabel.parquet: label column 'y' not found"


def _time_not_dates(tmp):
    df = clean_frame(50, 5).with_columns(ts=pl.lit("yesterday"))
    p = _write(tmp, "ts.parquet", df)
    return ["--train", p, "--test", p, "--time", "ts"], \
        "ts.parquet: time column 'ts' holds text that is not a date/time"


def _bad_yaml(tmp):
    p = tmp / "audit.yaml"
    p.write_text("datasets: {train: a.parquet\ncolumns: [\n")
    return [p], "audit.yaml: invalid YAML at line"


def _unknown_key(tmp):
    p = tmp / "audit.yaml"
    p.write_text("datasets: {train: a.parquet}\ncolums: {label: y}\n")
    return [p], "colums: unknown key (did you mean 'columns'?)"


def _unknown_check(tmp):
    b = _base(tmp)
    suite = tmp / "suite.yaml"
    suite.write_text("checks:\n  leakage.dupes: {}\n")
    return ["--train", b["train"], "--test", b["test"], "--suite", suite], \
        "unknown check id 'leakage.dupes' (did you mean 'leakage.duplicates'?)"


def _threshold_type(tmp):
    b = _base(tmp)
    p = tmp / "audit.yaml"
    p.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                 "thresholds: {leakage.duplicates: {fail_above: lots}}\n")
    return [p], "leakage.duplicates.fail_above: Input should be a valid number"


def _unwritable_out(tmp):
    b = _base(tmp)
    (tmp / "f").write_text("")
    return ["--train", b["train"], "--test", b["test"], "--out", tmp / "f" / "x"], \
        "output directory is not writable"


REFUSED: list[Callable] = [_missing, _empty_dir, _corrupt_parquet, _truncated_csv,
                           _wrong_delimiter, _non_utf8_csv, _non_utf8_jsonl, _empty_split,
                           _duplicate_names, _label_missing, _time_not_dates,
                           _bad_yaml, _unknown_key, _unknown_check, _threshold_type,
                           _unwritable_out]


@pytest.mark.parametrize("case", REFUSED, ids=lambda f: f.__name__.strip("_"))
def test_bad_input_is_refused_with_one_clear_line(case, tmp_path, capsys):
    args, expected = case(tmp_path)
    if "--out" not in map(str, args):
        args = [*args, "--out", tmp_path / "out"]
    code, err = _run(capsys, *args)
    assert code == 2, err
    assert err.startswith("auditor: error: ") and err.count("\n") == 1, err
    assert expected in err
    assert "Traceback" not in err
    assert not (tmp_path / "out" / "report.json").exists()


# --- inputs the audit survives: a complete report, no crashed check -------------------------

def _frames_missing_column():
    return clean_frame(300, 1), clean_frame(100, 2, 5000).drop("x2"), {}


def _frames_incompatible_dtype():
    return clean_frame(300, 1), clean_frame(100, 2, 5000).with_columns(
        pl.col("x2").cast(pl.String)), {}


def _frames_single_class():
    return clean_frame(300, 1).with_columns(y=pl.lit(1)), \
        clean_frame(100, 2, 5000).with_columns(y=pl.lit(1)), {}


def _frames_label_nulls():
    tr = clean_frame(300, 1)
    return tr.with_columns(pl.when(pl.col("row_id") % 7 == 0).then(None).otherwise(pl.col("y"))
                           .alias("y")), clean_frame(100, 2, 5000), {}


def _frames_odd_values():
    def odd(df):
        n = df.height
        return df.with_columns(
            all_null=pl.lit(None, dtype=pl.Float64), constant=pl.lit(3.0),
            weird=pl.Series([float("nan"), float("inf"), float("-inf"), 1.0] * (n // 4)
                            + [0.0] * (n % 4)),
            nested=pl.Series([[1, 2]] * n), st=pl.struct(a=pl.col("x1"), b=pl.col("cat")))
    return odd(clean_frame(300, 1)), odd(clean_frame(100, 2, 5000)), {}


def _frames_mixed_tz():
    tr = clean_frame(300, 1).with_columns(
        ts=pl.datetime_range(pl.datetime(2025, 1, 1), pl.datetime(2025, 6, 1), "12h",
                             eager=True).head(300))
    te = clean_frame(100, 2, 5000).with_columns(
        ts=pl.datetime_range(pl.datetime(2025, 7, 1, time_zone="Europe/Paris"),
                             pl.datetime(2025, 9, 1, time_zone="Europe/Paris"), "12h",
                             eager=True).head(100))
    return tr, te, {"time": "ts"}


def _frames_time_strings():
    tr, te, _ = _frames_mixed_tz()
    return (tr.with_columns(pl.col("ts").dt.strftime("%Y-%m-%dT%H:%M:%S")),
            te.with_columns(pl.col("ts").dt.convert_time_zone("UTC")
                            .dt.strftime("%Y-%m-%dT%H:%M:%SZ")), {"time": "ts"})


def _frames_hostile_names():
    names = ["<script>alert(1)</script>", 'quo"te\'s', "new\nline", "emoji 😀", "a&b"]
    def host(df):
        return df.with_columns(*[pl.lit(f"{n}-{i}").alias(n) if i % 2 else
                                 (pl.col("x1") * i).alias(n) for i, n in enumerate(names)])
    return host(clean_frame(300, 1)), host(clean_frame(100, 2, 5000)), {}


def _frames_high_cardinality():
    n = 200_000
    tr = pl.DataFrame({"key": [f"k{i}" for i in range(n)], "x": np.arange(n) % 97,
                       "y": np.arange(n) % 2})
    te = pl.DataFrame({"key": [f"k{i}" for i in range(n, n + 50_000)],
                       "x": np.arange(50_000) % 89, "y": np.arange(50_000) % 2})
    return tr, te, {}


def _frames_many_columns():
    rng = np.random.default_rng(0)
    def wide(n, seed):
        r = np.random.default_rng(seed)
        return pl.DataFrame(r.normal(size=(n, 5000)),
                            schema=[f"c{i}" for i in range(5000)]).with_columns(
            y=pl.Series(r.integers(0, 2, n)))
    del rng
    return wide(200, 1), wide(80, 2), {}


SURVIVED = [_frames_missing_column, _frames_incompatible_dtype, _frames_single_class,
            _frames_label_nulls, _frames_odd_values, _frames_mixed_tz, _frames_time_strings,
            _frames_hostile_names, _frames_high_cardinality, _frames_many_columns]


@pytest.mark.parametrize("case", SURVIVED, ids=lambda f: f.__name__.strip("_"))
def test_survivable_input_gives_a_complete_report(case, tmp_path, capsys):
    train, test, extra = case()
    p_tr, p_te = _write(tmp_path, "train.parquet", train), _write(tmp_path, "test.parquet",
                                                                     test)
    args = ["--train", p_tr, "--test", p_te, "--label", "y", "--out", tmp_path / "o"]
    if extra.get("time"):
        args += ["--time", extra["time"]]
    if "row_id" in train.columns:
        args += ["--id", "row_id"]
    code, err = _run(capsys, *args)
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    crashed = {c["id"]: c["error"] for c in doc["checks"] if c["status"] == "error"}
    assert not crashed, crashed
    assert code in (0, 1), err
    html = (tmp_path / "o" / "report.html").read_text()
    assert "<script>alert(1)</script>" not in html


def test_single_class_label_skips_label_checks_with_a_reason(tmp_path, capsys):
    train, test, _ = _frames_single_class()
    p_tr, p_te = _write(tmp_path, "a.parquet", train), _write(tmp_path, "b.parquet", test)
    _run(capsys, "--train", p_tr, "--test", p_te, "--label", "y", "--out", tmp_path / "o")
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    for c in doc["checks"]:
        if c["id"] in ("leakage.single_feature_auc", "leakage.feature_label_correlation"):
            assert c["status"] == "skipped" and "class" in c["summary"], c


# --- properties ---------------------------------------------------------------------------

def _digest(paths):
    return {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths}


def test_inputs_are_never_modified_and_runs_are_deterministic(tmp_path, capsys):
    from auditor.demo import write_demo
    cfg = write_demo(tmp_path / "data")
    files = sorted((tmp_path / "data").iterdir())
    before = _digest(files)
    docs = []
    for k in range(2):
        code = cli.main(["run", str(cfg), "--out", str(tmp_path / f"o{k}"), "--quiet"])
        assert code == 1
        doc = json.loads((tmp_path / f"o{k}" / "report.json").read_text())
        doc.pop("started_at"), doc.pop("duration_s")
        for c in doc["checks"]:
            c.pop("duration_s")
        docs.append(json.dumps(doc, sort_keys=True))
    assert _digest(files) == before
    assert docs[0] == docs[1]


def test_interrupted_render_leaves_no_report_html(tmp_path, monkeypatch, capsys):
    import auditor.render as render

    def interrupted(doc):
        raise KeyboardInterrupt

    monkeypatch.setattr(render, "render_html", interrupted)
    b = _base(tmp_path)
    code = cli.main(["run", "--train", str(b["train"]), "--test", str(b["test"]), "--out",
                     str(tmp_path / "o"), "--quiet"])
    assert code == 130
    assert not (tmp_path / "o" / "report.html").exists()
    assert not [p for p in (tmp_path / "o").iterdir() if p.name.startswith(".report")]


def test_data_beyond_the_memory_budget_are_sampled_and_the_report_says_so(tmp_path, capsys):
    train = clean_frame(20_000, 1)
    test = pl.concat([clean_frame(5_000, 2, 50_000), train.head(1000)
                      .with_columns(pl.col("row_id") + 90_000)])
    b = {"train": _write(tmp_path, "train.parquet", train),
         "test": _write(tmp_path, "test.parquet", test)}
    from auditor.data import WORKING_SET_FACTOR, estimate_bytes
    need = WORKING_SET_FACTOR * sum(estimate_bytes(p) for p in b.values())
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   "columns: {label: y, ids: [row_id]}\n"
                   f"memory_budget_gb: {need / 2 / 1024**3!r}\n")
    code = cli.main(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"])
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    assert code == 1
    assert "seeded uniform sample of 50.0% of its rows" in doc["notes"][0]
    rows = doc["datasets"]["train"]["rows"]
    assert 9_000 < rows < 11_000
    assert "seeded uniform sample" in (tmp_path / "o" / "report.html").read_text()


# =============================================================================================
# E2 "hardening-data" (issue 19, part 2): valid but unusual data. Each case: a complete report
# with no check in `error`, or exit 2 with one line naming the file, the column and what was
# expected.
# =============================================================================================

# every helper column name the checks use, and names polars gives its own outputs
_INTERNAL_NAMES = ["", "__row", "__auditor_label", "__auditor_row", "__auditor_n", "__y",
                   "len", "count", "literal", "row", "row_a", "row_b", "first_row", "h", "k",
                   "v", "d", "s", "q", "n", "w", "null", "value", "entity", "rows", "_key", "t",
                   "test_row", "train_row", "doc", "i", "index"]


def _hostile_named(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` plus one column per internal name: numbers with nulls and strings, alternately."""
    return df.with_columns(*[
        (pl.when(pl.col("row_id") % 9 == 0).then(None).otherwise(pl.col("x1") * (i + 1))
         if i % 2 else pl.col("cat")).alias(name) for i, name in enumerate(_INTERNAL_NAMES)])


def _complete(tmp_path: Path, *args, code_ok=(0, 1)) -> dict:
    """Run the default suite; the report must exist and hold no crashed check."""
    import sys
    from io import StringIO
    err = StringIO()
    old, sys.stderr = sys.stderr, err
    try:
        code = cli.main(["run", *map(str, args), "--out", str(tmp_path / "o"), "--quiet"])
    finally:
        sys.stderr = old
    assert code in code_ok, err.getvalue()
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    crashed = {c["id"]: c["error"] for c in doc["checks"] if c["status"] == "error"}
    assert not crashed, crashed
    return doc


def _check(doc: dict, check_id: str) -> dict:
    return next(c for c in doc["checks"] if c["id"] == check_id)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_user_columns_named_like_internal_columns_run_the_whole_suite(tmp_path, fmt):
    train = _hostile_named(clean_frame(300, 1))
    test = _hostile_named(clean_frame(100, 2, 5000))
    # planted: 10 exact copies of train rows, 4 with the label flipped, 5 near copies
    test = pl.concat([test,
                      train.head(10).with_columns(pl.col("row_id") + 9000),
                      train.slice(10, 4).with_columns(pl.col("row_id") + 9100,
                                                      y=1 - pl.col("y")),
                      train.slice(20, 5).with_columns(pl.col("row_id") + 9500,
                                                      pl.col("x1") + 1e-9)])
    p_tr, p_te = _write(tmp_path, f"train.{fmt}", train), _write(tmp_path, f"test.{fmt}", test)
    doc = _complete(tmp_path, "--train", p_tr, "--test", p_te, "--label", "y",
                    "--id", "row_id")
    renames = {f["subject"]: f["message"]
               for f in _check(doc, "schema.consistency")["findings"]
               if f["metric"] == "schema_renamed"}
    assert set(renames) == {"(unnamed column 6)", "_auditor_label", "_auditor_row",
                            "_auditor_n"}, renames
    assert "column '' is audited as '(unnamed column 6)'" in renames["(unnamed column 6)"]
    dup = {f["metric"]: f for f in _check(doc, "leakage.duplicates")["findings"]}
    assert dup["duplicate_rows"]["count"] == 10
    assert dup["conflicting_labels"]["count"] == 4
    assert dup["near_duplicate_rows"]["count"] == 5
    # the coded label once overwrote a user column named __auditor_label: a fake V = 1.0
    corr = _check(doc, "leakage.feature_label_correlation")
    assert corr["status"] != "error"
    assert not [f for f in corr["findings"] if f["subject"] == "_auditor_label"
                and f["severity"] == "fail"]
    assert _check(doc, "leakage.single_feature_auc")["status"] in ("pass", "warn", "fail")


def test_declared_roles_follow_a_renamed_column():
    from auditor.config import Columns
    from auditor.data import build_audit_data

    def frame(seed):
        df = clean_frame(60, seed)
        return df.rename({"y": "__auditor_label", "row_id": "", "cat": "__auditor_g"})

    data = build_audit_data({"train": frame(1), "test": frame(2)},
                            columns=Columns(label="__auditor_label", ids=[""],
                                            groups=["__auditor_g"]))
    assert data.label == "_auditor_label"
    assert data.columns.ids == ["(unnamed column 1)"]
    assert data.columns.groups == ["_auditor_g"]
    assert data.splits["train"].columns == ["(unnamed column 1)", "x1", "x2", "_auditor_g",
                                            "_auditor_label"]
    assert sorted(data.features) == ["x1", "x2"]


def test_a_renamed_column_never_takes_an_existing_name():
    from auditor.colnames import rename_map
    assert rename_map([["__auditor_x", "_auditor_x", "_auditor_x (2)", ""],
                       ["", "b"]]) == {"__auditor_x": "_auditor_x (3)",
                                       "": "(unnamed column 4)"}


def test_an_all_null_label_in_every_split_is_refused_with_one_line(tmp_path, capsys):
    for fmt in ("csv", "parquet"):
        train = clean_frame(300, 1).with_columns(y=pl.lit(None, dtype=pl.Int64))
        test = clean_frame(100, 2, 5000).with_columns(y=pl.lit(None, dtype=pl.Int64))
        p_tr = _write(tmp_path, f"train.{fmt}", train)
        p_te = _write(tmp_path, f"test.{fmt}", test)
        code, err = _run(capsys, "--train", p_tr, "--test", p_te, "--label", "y",
                         "--out", tmp_path / "o")
        assert code == 2, err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert f"train.{fmt}: label column 'y' is empty (no value in any of its 300 rows" in err
    # NaN is no value either
    nan = clean_frame(50, 1).with_columns(y=pl.lit(float("nan")))
    p = _write(tmp_path, "nan.parquet", nan)
    code, err = _run(capsys, "--train", p, "--test", p, "--label", "y", "--out", tmp_path / "o")
    assert code == 2 and "label column 'y' is empty" in err


def test_an_all_null_label_in_one_split_skips_label_checks_with_the_reason(tmp_path):
    # CSV reads an empty column as text: the label must still take test's integer type
    train = clean_frame(300, 1).with_columns(y=pl.lit(None, dtype=pl.Int64))
    p_tr = _write(tmp_path, "train.csv", train)
    p_te = _write(tmp_path, "test.csv", clean_frame(100, 2, 5000))
    doc = _complete(tmp_path, "--train", p_tr, "--test", p_te, "--label", "y",
                    "--id", "row_id")
    for cid in ("leakage.single_feature_auc", "leakage.feature_label_correlation"):
        c = _check(doc, cid)
        assert c["status"] == "skipped" and "missing in every train row" in c["summary"], c
    nulls = [f for f in _check(doc, "schema.consistency")["findings"]
             if f["metric"] == "schema_label_nulls"]
    assert len(nulls) == 1 and "missing in 300 of 300 train rows (100.0%)" in \
        nulls[0]["message"]
    assert not [f for f in _check(doc, "schema.consistency")["findings"]
                if f["metric"] == "schema_dtype"]
