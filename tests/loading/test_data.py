"""Loading every supported format, dtype harmonisation, roles, and input errors."""
from __future__ import annotations

import gzip
import hashlib
import shutil

import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.loading.data import Kind, LabelKind, build_audit_data, read_table
from auditor.errors import InputError

FRAME = pl.DataFrame({"a": [1, 2, 3], "b": ["x", "y", None], "c": [0.5, None, 1.5]})


@pytest.mark.parametrize("name", ["t.parquet", "t.csv", "t.csv.gz", "t.csv.zst", "t.jsonl",
                                  "t.jsonl.gz", "t.arrow", "dir"])
def test_every_format_reads_the_same_frame(tmp_path, name):
    path = tmp_path / name
    if name == "dir":
        path.mkdir()
        FRAME.head(2).write_parquet(path / "part-0.parquet")
        FRAME.tail(1).write_parquet(path / "part-1.parquet")
    elif name.startswith("t.csv"):
        FRAME.write_csv(tmp_path / "t.csv")
    elif name.startswith("t.jsonl"):
        FRAME.write_ndjson(tmp_path / "t.jsonl")
    elif name == "t.parquet":
        FRAME.write_parquet(path)
    elif name == "t.arrow":
        FRAME.write_ipc(path)
    if name.endswith(".gz"):
        raw = (tmp_path / name[:-3]).read_bytes()
        path.write_bytes(gzip.compress(raw))
    if name.endswith(".zst"):
        import subprocess
        if shutil.which("zstd") is None:
            pytest.skip("zstd binary not available to make the fixture")
        subprocess.run(["zstd", "-q", "-f", str(tmp_path / "t.csv"), "-o", str(path)],
                       check=True)
    before = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    df = read_table(path)
    assert df.to_dicts() == FRAME.to_dicts()
    if before:
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_parquet_is_read_column_by_column_into_one_chunk_each(tmp_path):
    """Many row groups in two files: the frame equals a whole collect, names that read as
    patterns or are empty included, with one chunk per column."""
    import numpy as np

    rng = np.random.default_rng(0)
    n = 5_000
    frame = pl.DataFrame({"x": rng.normal(size=n), "": np.arange(n), "*": rng.integers(0, 9, n),
                          "^x$": [None if i % 7 == 0 else f"s{i % 13}" for i in range(n)],
                          "t": pl.datetime_range(pl.datetime(2024, 1, 1), pl.datetime(2024, 1, 1)
                                                 + pl.duration(seconds=n - 1), "1s",
                                                 eager=True)})
    (tmp_path / "d").mkdir()
    frame[:3000].write_parquet(tmp_path / "d" / "part-0.parquet", row_group_size=500)
    frame[3000:].write_parquet(tmp_path / "d" / "part-1.parquet", row_group_size=500)
    got = read_table(tmp_path / "d")
    assert got.columns == frame.columns and got.schema == frame.schema
    assert got.equals(frame)
    assert [got[c].n_chunks() for c in got.columns] == [1] * frame.width


@pytest.mark.parametrize("batch_bytes", [1, 2_000, 50_000, 10**9])
def test_parquet_batches_of_columns_read_the_same_frame(tmp_path, monkeypatch, batch_bytes):
    """Whatever the batch size (one column per batch up to the whole frame at once), the frame
    equals a whole collect: names ("", "a*", "^x$"), dtypes (text and lists measured as they
    are read), values, and one chunk per column."""
    import numpy as np

    from auditor.loading import data

    rng = np.random.default_rng(1)
    n = 2_000
    cols: dict[str, object] = {"": np.arange(n)}
    for j in range(30):
        cols[f"f{j}"] = rng.normal(size=n)
        cols[f"s{j}"] = [None if i % 11 == j % 11 else f"value {i % (j + 3)}" for i in range(n)]
    cols["a*"] = rng.integers(0, 9, n).astype(np.int8)
    cols["^x$"] = [[i, i + 1] if i % 5 else None for i in range(n)]
    cols["b"] = rng.random(n) < 0.5
    cols["nothing"] = pl.Series([None] * n, dtype=pl.Null)
    frame = pl.DataFrame(cols)
    frame.write_parquet(tmp_path / "t.parquet", row_group_size=300)
    monkeypatch.setattr(data, "BATCH_BYTES", batch_bytes)
    got = read_table(tmp_path / "t.parquet")
    assert got.columns == frame.columns and got.schema == frame.schema
    assert got.equals(frame)
    assert [got[c].n_chunks() for c in got.columns] == [1] * frame.width


def test_wide_parquet_is_read_in_a_few_collects_not_one_per_column(tmp_path, monkeypatch):
    """2,000 columns of 50 rows: every collect parses the whole footer, so a collect per
    column made loading quadratic in the number of columns (10,000 columns: 79 s)."""
    import numpy as np

    rng = np.random.default_rng(2)
    frame = pl.DataFrame({f"g{j}": rng.normal(size=50) for j in range(2_000)}
                         | {"name": [f"r{i}" for i in range(50)]})
    frame.write_parquet(tmp_path / "wide.parquet")
    calls = []
    collect = pl.LazyFrame.collect

    def counted(self, *args, **kwargs):
        calls.append(1)
        return collect(self, *args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "collect", counted)
    got = read_table(tmp_path / "wide.parquet")
    assert got.equals(frame)
    assert len(calls) <= 4


@pytest.mark.parametrize("setup, expected", [
    (lambda p: None, "file not found"),
    (lambda p: p.mkdir(), "directory contains no Parquet files"),
    (lambda p: p.write_bytes(b"PAR1 this is not parquet"), "cannot read as Parquet"),
])
def test_unreadable_inputs_raise_one_line(tmp_path, setup, expected):
    path = tmp_path / ("d" if "directory" in expected else "x.parquet")
    setup(path)
    with pytest.raises(InputError) as err:
        read_table(path)
    assert expected in str(err.value) and str(path) in str(err.value)


def test_wrong_delimiter_is_named(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("a;b;c\n1;2;3\n4;5;6\n")
    with pytest.raises(InputError, match="';' as delimiter, expected ','.*set csv: "
                                         "{delimiter: ';'} in audit.yaml, or --csv-delimiter"):
        read_table(path)


SEMICOLONS = "city;price;y\nLyon;3,5;1\nNantes;1 200,25;0\nLille;-0,75;1\n"


def test_a_semicolon_file_with_decimal_commas_reads_as_numbers_when_declared(tmp_path):
    from auditor.core.config import CsvFormat

    path = tmp_path / "eu.csv"
    path.write_text(SEMICOLONS.replace("1 200,25", "1.200,25"))  # '.' between thousands
    with pytest.raises(InputError, match="the header is split by ';', not ',': set csv: "
                                         "{delimiter: ';'} in audit.yaml, or --csv-delimiter "
                                         "';'; add decimal: ',' for decimal commas"):
        read_table(path)  # the default (',' and '.') names the delimiter it saw
    df = read_table(path, CsvFormat(delimiter=";", decimal=","))
    assert df.schema["price"] == pl.Float64
    assert df["price"].to_list() == [3.5, 1200.25, -0.75]
    assert df["city"].to_list() == ["Lyon", "Nantes", "Lille"]
    # a truncated last line is counted with the declared delimiter
    path.write_text("city;price;y\nLyon;3,5;1\nNantes;1")
    with pytest.raises(InputError, match="last line has 2 of 3 fields"):
        read_table(path, CsvFormat(delimiter=";", decimal=","))


def test_csv_options_in_audit_yaml_and_flags_and_their_refusals(tmp_path, capsys):
    import json

    from auditor.cli import main
    from auditor.engines.spark_io import read_split
    from auditor.core.config import CsvFormat

    rows = "".join(f"{c};{p},{i % 10};{i % 2}\n" for i, (c, p) in
                   enumerate((["Lyon", "Nantes", "Lille"][i % 3], 10 + i % 7)
                             for i in range(120)))
    for name in ("train", "test"):
        (tmp_path / f"{name}.csv").write_text("city;price;y\n" + rows)
    cfg = tmp_path / "audit.yaml"
    doc = {"datasets": {"train": "train.csv", "test": "test.csv"}, "columns": {"label": "y"},
           "suite": "fast", "csv": {"delimiter": ";", "decimal": ","}}
    cfg.write_text(json.dumps(doc))
    assert main(["run", str(cfg), "--out", str(tmp_path / "a"), "-q"]) in (0, 1)
    report = json.loads((tmp_path / "a" / "report.json").read_text())
    assert report["datasets"]["train"]["columns"] == 3
    assert report["inputs"]["train"]["schema"]["price"] == "Float64"
    # the same through flags, on a config without csv:
    cfg.write_text(json.dumps({k: v for k, v in doc.items() if k != "csv"}))
    assert main(["run", str(cfg), "--out", str(tmp_path / "b"), "-q", "--csv-delimiter", ";",
                 "--csv-decimal", ","]) in (0, 1)
    assert json.loads((tmp_path / "b" / "report.json").read_text()) \
        ["inputs"]["test"]["schema"]["price"] == "Float64"
    capsys.readouterr()
    assert main(["run", str(cfg), "--out", str(tmp_path / "c"), "--csv-decimal", ","]) == 2
    assert "decimal ',' needs another delimiter (usually ';')" in capsys.readouterr().err
    assert main(["run", str(cfg), "--out", str(tmp_path / "c"), "--csv-delimiter", ";;"]) == 2
    assert "delimiter must be one ASCII character" in capsys.readouterr().err
    assert main(["run", str(cfg), "--out", str(tmp_path / "c"), "--csv-delimiter", "§"]) == 2
    assert CsvFormat(delimiter="\\t").delimiter == CsvFormat(delimiter="tab").delimiter == "\t"
    assert not (tmp_path / "c").exists()
    # export-expectations reads a CSV split with the same options (flags, or the yaml's csv:)
    suite = tmp_path / "suite.json"
    assert main(["export-expectations", "--train", str(tmp_path / "train.csv"), "--out",
                 str(suite), "--csv-delimiter", ";", "--csv-decimal", ","]) == 0
    kinds = {e["kwargs"]["column"]: e["kwargs"]["type_list"] for e in
             json.loads(suite.read_text())["expectations"]
             if e["type"] == "expect_column_values_to_be_in_type_list"}
    assert "float64" in kinds["price"] and kinds["city"] == ["str"]  # '10,5' read as a number
    cfg.write_text(json.dumps(doc))
    assert main(["export-expectations", str(cfg), "--out", str(suite)]) == 0
    assert main(["export-expectations", "--train", str(tmp_path / "train.csv"),
                 "--csv-delimiter", ";;"]) == 2
    assert "delimiter must be one ASCII character" in capsys.readouterr().err
    with pytest.raises(InputError, match="no decimal comma"):  # refused before Spark reads
        read_split(None, tmp_path / "train.csv", "train", CsvFormat(delimiter=";", decimal=","))


def test_unsupported_extension(tmp_path):
    path = tmp_path / "data.xlsx"
    path.write_bytes(b"x")
    with pytest.raises(InputError, match="unsupported file type '.xlsx'"):
        read_table(path)


def test_dtypes_are_harmonised_and_differences_recorded():
    train = pl.DataFrame({"n": [1, 2], "s": pl.Series(["a", "b"], dtype=pl.Categorical),
                          "only_train": [1, 2], "bad": [1, 2], "y": [0, 1]})
    test = pl.DataFrame({"n": [1.5, 2.5], "s": ["a", "c"], "bad": ["x", "y"], "y": [1, 0]})
    data = build_audit_data({"train": train, "test": test}, columns=Columns(label="y"))
    assert data.splits["train"].schema["n"] == pl.Float64
    assert data.splits["train"].schema["s"] == pl.String
    assert data.kinds["n"] == Kind.NUMERIC and data.kinds["s"] == Kind.CATEGORICAL
    assert data.features == ["n", "s"]
    problems = {(i.column, i.problem, i.severity) for i in data.schema_issues}
    assert ("only_train", "missing", "fail") in problems
    assert ("bad", "dtype", "fail") in problems
    assert ("n", "cast", "info") in problems
    assert data.label_kind == LabelKind.BINARY


def test_roles_are_not_features_and_mixed_time_zones_become_utc():
    ts = pl.Series([1_700_000_000_000_000, 1_700_000_100_000_000]).cast(pl.Datetime("us"))
    train = pl.DataFrame({"id": [1, 2], "g": ["u1", "u2"], "t": ts, "x": [0.1, 0.2],
                          "y": [0, 1]})
    test = train.with_columns(pl.col("t").dt.replace_time_zone("Europe/Paris"))
    data = build_audit_data({"train": train, "test": test},
                            columns=Columns(label="y", ids=["id"], groups=["g"], time="t"))
    assert data.features == ["x"]
    assert str(data.splits["train"].schema["t"]) == str(data.splits["test"].schema["t"])
    assert data.splits["test"].schema["t"].time_zone == "UTC"


@pytest.mark.parametrize("train, test, message", [
    (FRAME, FRAME.head(0), "split 'test' has 0 rows"),
    (FRAME, FRAME.drop("a"), "label column 'a' not found"),
])
def test_input_errors(train, test, message):
    with pytest.raises(InputError, match=message):
        build_audit_data({"train": train, "test": test}, columns=Columns(label="a"))


def test_label_kinds():
    def kind(values):
        df = pl.DataFrame({"x": range(len(values)), "y": values})
        return build_audit_data({"train": df}, columns=Columns(label="y")).label_kind
    assert kind(["yes", "no", "yes"]) == LabelKind.BINARY
    assert kind(["a", "b", "c"]) == LabelKind.MULTICLASS
    assert kind([0, 1, 2, 3]) == LabelKind.MULTICLASS
    assert kind([0.1 * i for i in range(40)]) == LabelKind.NUMERIC
    assert kind([0.0, 1.0, float("nan"), None]) == LabelKind.BINARY


def test_data_without_feature_columns_is_audited_and_feature_checks_are_skipped():
    import datetime as dt

    import numpy as np

    import auditor

    n = 600
    df = pl.DataFrame({"idx": np.arange(n),
                       "date": [dt.date(2020, 1, 1) + dt.timedelta(days=i // 3)
                                for i in range(n)],
                       "y": np.random.default_rng(0).integers(0, 2, n)})
    data = build_audit_data({"train": df[:400], "test": df[400:]},
                            columns=Columns(label="y", time="date", ids=["idx"]))
    assert data.features == []
    report = auditor.audit(train=df[:400], test=df[400:], label="y", time="date", ids=["idx"])
    status = {c.id: c for c in report.checks}
    for check in ("separability.memorisation", "separability.adversarial",
                  "separability.label_probe", "drift.features", "leakage.preprocessing"):
        assert status[check].status == "skipped" and "feature" in status[check].summary
    assert status["leakage.temporal"].status == "pass"
    assert status["drift.label"].status == "pass"
    dup = status["leakage.duplicates"]
    assert dup.status == "pass" and all(f.severity == "info" for f in dup.findings)
    assert "(no feature column: rows compared on date, y only, info)" in dup.findings[0].message


def test_common_csv_null_tokens_read_as_null_so_a_numeric_column_stays_numeric(tmp_path):
    tokens = ["NA", "n/a", "N/A", "null", "NaN", "None", "-", ""]
    rows = [f"{i},{i * 0.5},{tok},{i % 2}" for i, tok in enumerate(tokens)]
    rows += [f"{i},{i * 0.5},{i * 1.25},{i % 2}" for i in range(8, 20)]
    path = tmp_path / "t.csv"
    path.write_text("idx,x,z,y\n" + "\n".join(rows) + "\n")
    df = read_table(path)
    assert df.schema["z"] == pl.Float64 and df.schema["x"] == pl.Float64
    assert df["z"].null_count() == len(tokens)


def test_rows_differing_only_in_a_column_with_na_cells_are_not_copies(tmp_path):
    from auditor.detectors.duplicates import Duplicates

    train = "x,z,y\n" + "".join(f"{i},{i * 1.5},{i % 2}\n" for i in range(40))
    # test: the same x and y as train rows 0..9, but a different z (5 cells are "NA")
    test = "x,z,y\n" + "".join(f"{i},{'NA' if i < 5 else i * 1.5 + 100},{i % 2}\n"
                               for i in range(10))
    (tmp_path / "train.csv").write_text(train)
    (tmp_path / "test.csv").write_text(test)
    frames = {s: read_table(tmp_path / f"{s}.csv") for s in ("train", "test")}
    data = build_audit_data(frames, columns=Columns(label="y"))
    assert data.schema_issues == [] and data.features == ["x", "z"]
    exact = next(f for f in Duplicates().run(data) if f.metric == "duplicate_rows")
    assert exact.count == 0
