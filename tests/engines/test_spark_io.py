"""Splits Spark reads (Parquet folder, CSV, JSON Lines, catalog tables), the session and its
settings. ``auditor run --engine spark`` end to end: tests/engines/test_spark_e2e.py."""
from __future__ import annotations

import pytest

from auditor.engines.spark_io import parse_conf, read_split
from auditor.errors import ConfigError, InputError
from tests.engines.fixtures import planted


def _write(tmp_path):
    frames = planted()
    folder = tmp_path / "train_parquet"
    folder.mkdir()
    train = frames["train"]
    train.slice(0, 200).write_parquet(folder / "part-0.parquet")
    train.slice(200).write_parquet(folder / "part-1.parquet")
    frames["test"].write_csv(tmp_path / "test.csv")
    frames["test"].write_ndjson(tmp_path / "test.jsonl")
    return frames


def test_spark_reads_parquet_folders_csv_jsonl_and_catalog_tables(spark, tmp_path):
    frames = _write(tmp_path)
    assert read_split(spark, tmp_path / "train_parquet", "train").count() == 406
    csv = read_split(spark, tmp_path / "test.csv", "test")
    assert csv.count() == 150 and dict(csv.dtypes)["flag"] == "boolean"
    assert read_split(spark, tmp_path / "test.jsonl", "test").count() == 150
    spark.createDataFrame(frames["test"].to_arrow()).createOrReplaceTempView("auditor_test_split")
    assert read_split(spark, "table:auditor_test_split", "test").count() == 150
    with pytest.raises(InputError, match="no_such_table"):
        read_split(spark, "table:no_such_table", "test")
    with pytest.raises(InputError, match="no such file"):
        read_split(spark, tmp_path / "missing.parquet", "test")
    (tmp_path / "x.xlsx").write_text("")
    with pytest.raises(InputError, match="unknown format"):
        read_split(spark, tmp_path / "x.xlsx", "test")


def test_spark_conf_must_be_key_value():
    assert parse_conf(["spark.executor.memory=4g", "a.b=c=d"]) == {
        "spark.executor.memory": "4g", "a.b": "c=d"}
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_conf(["spark.executor.memory"])


def test_cli_bad_spark_conf_exits_2(tmp_path, capsys):
    from auditor.cli import main

    frames = planted()
    frames["train"].write_parquet(tmp_path / "a.parquet")
    frames["test"].write_parquet(tmp_path / "b.parquet")
    code = main(["run", "--train", str(tmp_path / "a.parquet"), "--test",
                 str(tmp_path / "b.parquet"), "--engine", "spark", "--spark-conf", "oops",
                 "--out", str(tmp_path / "out"), "-q"])
    assert code == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_spark_dataframes_select_the_spark_engine(spark, tmp_path):
    from auditor.api import audit

    frames = planted()
    suite = tmp_path / "suite.yaml"
    suite.write_text("checks:\n  leakage.group_overlap: {}\n  leakage.single_feature_auc: {}\n")
    report = audit(train=spark.createDataFrame(frames["train"].to_arrow()),
                   test=spark.createDataFrame(frames["test"].to_arrow()), label="y",
                   groups="user", suite=str(suite))
    checks = {c.id: c for c in report.checks}
    overlap = checks["leakage.group_overlap"].findings[0]
    assert overlap.metric == "group_overlap_rows" and overlap.severity == "fail"
    # 9 planted test users from train's range, plus the 12 copied rows' users
    ref = frames["test"]["user"].is_in(frames["train"]["user"].implode()).sum()
    assert overlap.count == ref
    # measured on Spark through the label operations (was skipped before): it runs, no error
    assert checks["leakage.single_feature_auc"].status in ("pass", "warn", "fail")
    assert report.config["engine"] == "spark"


def test_session_defaults_scale_with_local_cores_and_conf_overrides_them():
    import os

    from auditor.engines.spark_io import local_cores, session_defaults

    assert local_cores("local") == 1 and local_cores("local[3]") == 3
    assert local_cores("local[4, 2]") == 4 and local_cores("local[*]") == os.cpu_count()
    assert local_cores(None) == os.cpu_count()  # the default master is local[*]
    assert local_cores("spark://host:7077") is None and local_cores("yarn") is None
    local = session_defaults("local[2]")
    assert local["spark.sql.shuffle.partitions"] == "8"
    assert local["spark.sql.adaptive.enabled"] == "true"
    assert local["spark.sql.execution.arrow.pyspark.enabled"] == "true"
    assert local["spark.driver.memory"] == "2g"
    cluster = session_defaults("yarn")  # cluster sizing is left to Spark and the cluster
    assert "spark.sql.shuffle.partitions" not in cluster
    assert "spark.driver.memory" not in cluster
    assert cluster["spark.sql.adaptive.enabled"] == "true"


def test_text_splits_are_persisted_once_and_released_parquet_is_not(spark, tmp_path):
    from auditor.engines.spark_io import PERSIST_CONF, persist_splits

    _write(tmp_path)
    paths = {"train": str(tmp_path / "train_parquet"), "test": str(tmp_path / "test.csv")}

    def fresh():
        return {n: read_split(spark, p, n) for n, p in paths.items()}

    try:
        splits = fresh()
        done = persist_splits(spark, splits, paths)
        assert len(done) == 1 and done[0] is splits["test"]
        assert splits["test"].storageLevel.useDisk and splits["test"].storageLevel.useMemory
        assert not splits["train"].storageLevel.useMemory
        assert splits["test"].count() == 150
        for df in done:
            df.unpersist()
        spark.conf.set(PERSIST_CONF, "all")
        splits = fresh()
        done = persist_splits(spark, splits, paths)
        assert len(done) == 2
        assert persist_splits(spark, splits, paths) == []  # already cached: left alone
        for df in done:
            df.unpersist()
        spark.conf.set(PERSIST_CONF, "none")
        assert persist_splits(spark, fresh(), paths) == []
        spark.conf.set(PERSIST_CONF, "sometimes")
        with pytest.raises(ConfigError, match="auto, all or none"):
            persist_splits(spark, fresh(), paths)
    finally:
        spark.conf.unset(PERSIST_CONF)




def test_both_loaders_resolve_kinds_features_and_schema_issues_alike(spark):
    """One rule (``auditor.core.roles.harmonise_types`` / ``resolve_features``) on both
    engines: the same kinds, features and schema issues (severity, column, problem, splits;
    the messages name each engine's types) for a column missing from test, one of list type
    (not a feature: info), one null everywhere (warn), integers in train and floats in test
    (cast to one type: info), incompatible types (fail), a declared text column and a string
    column typed categorical. Spark reported neither the nested nor the all-null column
    before its loader applied the shared rule."""
    import polars as pl

    from auditor.core.config import Columns
    from auditor.core.roles import Kind
    from auditor.engines.spark_io import SparkAuditData
    from auditor.loading.data import build_audit_data

    def frame(n: int, test: bool) -> pl.DataFrame:
        cols: dict[str, pl.Series] = {
            "y": pl.Series([i % 2 for i in range(n)]),
            "x": pl.Series([float(i) for i in range(n)]),
            "mixed": pl.Series([i * 1.5 for i in range(n)]) if test
            else pl.Series(list(range(n))),
            "clash": pl.Series([f"v{i}" for i in range(n)]) if test
            else pl.Series(list(range(n))),
            "tags": pl.Series([[i, i + 1] for i in range(n)]),
            "empty": pl.Series([None] * n, dtype=pl.Null),
            "note": pl.Series([f"text {i}" for i in range(n)]),
            "city": pl.Series(["Oslo", "Lima"] * (n // 2)),
        }
        if not test:
            cols["train_only"] = pl.Series(list(range(n)))
        return pl.DataFrame(cols)

    frames = {"train": frame(20, False), "test": frame(10, True)}
    columns = Columns(label="y", text=["note"])
    polars_data = build_audit_data(dict(frames), columns=columns)
    spark_data = SparkAuditData({k: spark.createDataFrame(v.to_arrow()) for k, v in
                                 frames.items()}, columns=columns)

    def issues(data):
        return [(i.severity, i.column, i.problem, list(i.splits)) for i in data.schema_issues]

    assert issues(spark_data) == issues(polars_data) == [
        ("info", "mixed", "cast", ["train", "test"]),
        ("fail", "clash", "dtype", ["train", "test"]),
        ("fail", "train_only", "missing", ["test"]),
        ("info", "tags", "nested", []),
        ("warn", "empty", "null_type", []),
    ]
    assert spark_data.features == polars_data.features == ["x", "mixed", "city"]
    assert spark_data.kinds == polars_data.kinds
    assert polars_data.kinds["note"] == Kind.TEXT and polars_data.kinds["mixed"] == Kind.NUMERIC


def test_both_loaders_read_the_label_kind_by_one_rule(spark):
    """``auditor.core.roles.label_kind_of`` on both engines: two values binary; up to 20 whole
    numbers (integers or floats) multiclass, more, or a fraction, numeric; strings and dates
    multiclass however many; NaN is no value."""
    import datetime as dt

    import polars as pl

    from auditor.core.config import Columns
    from auditor.core.roles import LabelKind
    from auditor.engines.spark_io import SparkAuditData
    from auditor.loading.data import build_audit_data

    n = 60
    labels = {
        "yes/no": (["yes", "no"] * (n // 2), LabelKind.BINARY),
        "5 ints": ([i % 5 for i in range(n)], LabelKind.MULTICLASS),
        "30 ints": ([i % 30 for i in range(n)], LabelKind.NUMERIC),
        "5 whole floats, NaN": ([float(i % 5) if i % 7 else float("nan") for i in range(n)],
                                LabelKind.MULTICLASS),
        "3 floats, a fraction": ([(i % 3) + 0.5 for i in range(n)], LabelKind.NUMERIC),
        "25 strings": ([f"c{i % 25}" for i in range(n)], LabelKind.MULTICLASS),
        "dates": ([dt.date(2024, 1, 1 + i % 25) for i in range(n)], LabelKind.MULTICLASS),
    }
    for name, (values, expected) in labels.items():
        frames = {"train": pl.DataFrame({"x": range(n), "y": values}),
                  "test": pl.DataFrame({"x": range(n), "y": values})}
        polars_kind = build_audit_data(dict(frames), columns=Columns(label="y")).label_kind
        spark_kind = SparkAuditData({k: spark.createDataFrame(v.to_arrow())
                                     for k, v in frames.items()},
                                    columns=Columns(label="y")).label_kind
        assert polars_kind == spark_kind == expected, name


def test_spark_splits_get_the_polars_loaders_column_checks(spark):
    """Declared columns and repeated names are checked by the code both loaders share: a Spark
    frame with a name twice (which Spark allows) is an input error, not a failing check."""
    from auditor.core.config import AuditConfig
    from auditor.engines.spark_io import open_spark_splits

    frames = planted()
    train = spark.createDataFrame(frames["train"].to_arrow())
    test = spark.createDataFrame(frames["test"].to_arrow())
    cfg = AuditConfig(datasets={"train": "train", "test": "test"}, columns={"label": "y"})
    twice = test.toDF(*["x1" if c == "x2" else c for c in test.columns])
    with pytest.raises(InputError, match="^split 'test': duplicate column name 'x1'$"):
        open_spark_splits(cfg, {"train": train, "test": twice}, spark=spark)
    cased = test.withColumnRenamed("x2", "X1")
    with pytest.raises(InputError, match="^split 'test': column names 'x1' and 'X1' differ "
                                         r"only in case, which Spark does not tell apart"):
        open_spark_splits(cfg, {"train": train, "test": cased}, spark=spark)
    renamed = test.withColumnRenamed("y", "yy")
    with pytest.raises(InputError, match=r"label column 'y' not found \(did you mean "
                                         r"'yy'\?\)"):
        open_spark_splits(cfg, {"train": train, "test": renamed}, spark=spark)


def test_kept_tables_go_to_local_disk_beyond_the_row_budget_or_when_asked(spark, monkeypatch):
    """``spark.auditor.keep``: auto keeps tables in memory (spilling to disk) up to
    KEEP_IN_MEMORY_ROWS rows in all splits and on disk only beyond; memory / disk force one;
    anything else is a configuration error before any check runs."""
    import narwhals as nw
    from pyspark import StorageLevel

    import auditor.engines.spark_engine as se
    from auditor.core.config import AuditConfig
    from auditor.engines.spark_io import open_spark_splits

    frames = {k: spark.createDataFrame(v.to_arrow()) for k, v in planted().items()}
    cfg = AuditConfig(datasets={"train": "train", "test": "test"}, columns={"label": "y"})

    def level() -> StorageLevel:
        engine = open_spark_splits(cfg, frames, spark=spark).engine
        kept = engine.keep(nw.from_native(frames["test"].select("x1"))).to_native()
        level = kept.storageLevel
        engine.release()
        engine.close()
        return level

    assert level() == StorageLevel.MEMORY_AND_DISK  # 556 rows
    monkeypatch.setattr(se, "KEEP_IN_MEMORY_ROWS", 500)
    assert level() == StorageLevel.DISK_ONLY
    spark.conf.set("spark.auditor.keep", "memory")
    assert level() == StorageLevel.MEMORY_AND_DISK
    monkeypatch.setattr(se, "KEEP_IN_MEMORY_ROWS", 10**9)
    spark.conf.set("spark.auditor.keep", "disk")
    assert level() == StorageLevel.DISK_ONLY
    spark.conf.set("spark.auditor.keep", "ram")
    with pytest.raises(ConfigError, match="spark.auditor.keep must be auto, memory or disk"):
        open_spark_splits(cfg, frames, spark=spark)
