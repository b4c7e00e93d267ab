"""leakage.duplicates and the row checks on the Spark engine beyond the
conformance suite (tests/engines/test_conformance.py, which compares every check's measures
and verdicts on both engines on planted and honest splits): text columns left to polars, the
keyed rows of every row equal to polars' (``cat`` holds a non-ASCII level: NFKC changes it),
sampled memorisation, example rows by id, and Spark jobs that do not grow with the columns.
Skipped when pyspark or Java is missing (see conftest.py).
"""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

ROWS_SUITE = """
checks:
  leakage.duplicates: {}
  leakage.group_overlap: {}
  leakage.temporal: {}
  separability.memorisation: {}
"""
ROLES = dict(label="y", time="ts", ids=["row_id"])
UTC = pl.Datetime("us", "UTC")


def _part(rng: np.random.Generator, n: int, start: datetime, customers: range,
          first_id: int) -> pl.DataFrame:
    ts = pl.Series([start + timedelta(hours=6 * i) for i in range(n)],
                   dtype=pl.Datetime("us")).dt.replace_time_zone("UTC")
    return pl.DataFrame({
        "row_id": np.arange(n) + first_id,
        "customer_id": [f"c{i}" for i in rng.choice(np.array(customers), n)],
        "x1": rng.normal(size=n),
        "x2": rng.gamma(2.0, size=n),
        "cat": rng.choice(["Red", "green", "Blue sky", "Ünïcode  Ⅸ"], n),
        "ts": ts,
        "y": rng.integers(0, 2, n),
    }).with_columns(seen_at=pl.col("ts") - pl.duration(hours=1))


def planted_rows() -> dict[str, pl.DataFrame]:
    """train 400 / test 150 rows, test dated after train except the copies. Planted in test:
    10 near copies of train rows (x1 scaled by 1 + 1e-10, cat upper-cased with doubled
    spaces), 7 copies of train features with the other label, 6 rows whose seen_at is 2 days
    after their ts, 30 rows holding a train customer_id (undeclared key; with the 17 copies,
    47 test rows share one); in train: 5 rows repeated with the other label (5 conflicting
    groups, 10 rows)."""
    rng = np.random.default_rng(21)
    train = _part(rng, 395, datetime(2024, 1, 1), range(0, 200), 0)
    flipped = train.slice(50, 5).with_columns(pl.col("row_id") + 1000, (1 - pl.col("y")).alias("y"))
    train = pl.concat([train, flipped])
    test = _part(rng, 150 - 17, datetime(2024, 6, 1), range(1000, 1100), 5000)
    shared = pl.Series(train["customer_id"][:30].to_list() + [None] * (test.height - 30))
    test = test.with_columns(
        pl.when(pl.int_range(pl.len()) < 6).then(pl.col("ts") + pl.duration(days=2))
        .otherwise(pl.col("seen_at")).alias("seen_at"),
        pl.when(pl.int_range(pl.len()) < 30).then(pl.lit(shared))
        .otherwise(pl.col("customer_id")).alias("customer_id"))
    near = train.slice(100, 10).with_columns(
        pl.col("row_id") + 9000, pl.col("x1") * (1 + 1e-10),
        pl.col("cat").str.to_uppercase().str.replace(" ", "  "))
    conflict = train.slice(200, 7).with_columns(pl.col("row_id") + 9100,
                                                (1 - pl.col("y")).alias("y"))
    return {"train": train, "test": pl.concat([test, near, conflict])}


def honest_rows() -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(22)
    return {"train": _part(rng, 400, datetime(2024, 1, 1), range(0, 200), 0),
            "test": _part(rng, 150, datetime(2024, 6, 1), range(1000, 1100), 5000)}


def _spark_frames(spark, frames):
    return {k: spark.createDataFrame(v.to_arrow()).cache() for k, v in frames.items()}


def _audit(frames, engine, spark, tmp_path: Path, suite_text: str = ROWS_SUITE, **roles):
    from auditor.api import audit

    suite = tmp_path / f"suite_{engine}.yaml"
    suite.write_text(suite_text)
    if engine == "spark":
        frames = _spark_frames(spark, frames)
    return audit(train=frames["train"], test=frames["test"], suite=str(suite), engine=engine,
                 spark=spark, hash="fast", **(roles or ROLES))


def test_text_columns_leave_near_copies_to_polars_with_a_reason(spark, tmp_path):
    frames = planted_rows()
    suite = "checks:\n  leakage.duplicates: {}\n"
    rs = _audit(frames, "spark", spark, tmp_path, suite, **ROLES, text=["cat"])
    notes = [f for f in rs.checks[0].findings if f.metric == "not_computed_on_spark"]
    assert len(notes) == 1 and notes[0].subject == ["cat"] and "MinHash" in notes[0].message
    assert not [f for f in rs.checks[0].findings if f.metric == "near_duplicate_rows"]
    conflicts = [f.count for f in rs.checks[0].findings if f.metric == "conflicting_labels"]
    assert sorted(conflicts) == [7, 10]


def test_spark_keys_every_row_as_polars_does(spark, codegen):
    """leakage.duplicates' keyed rows come from one polars function of each batch on both
    engines (with Spark's code generation on, as in production): Spark's Arrow batches give
    the very keys polars gives -- whole rows, normalised features (``cat`` holds a non-ASCII
    level NFKC changes, and an upper-cased near copy) and rounded near keys alike."""
    from auditor.core.config import Columns
    from auditor.detectors.copy_keys import KeyedRows
    from auditor.detectors.duplicates import Duplicates
    from auditor.detectors.measured import engine_of
    from auditor.engines.spark_io import SparkAuditData
    from auditor.loading.data import build_audit_data

    frames = planted_rows()
    frames["test"] = frames["test"].with_columns(
        pl.when(pl.col("row_id") % 7 == 0).then(-0.0).otherwise(pl.col("x2")).alias("x2"),
        pl.when(pl.col("row_id") % 11 == 0).then(float("nan")).otherwise(pl.col("x1"))
        .alias("x1"))
    columns = Columns(label="y", time="ts", ids=["row_id"])
    keyed = {}
    for name, data in (("polars", build_audit_data(frames, columns=columns)),
                       ("spark", SparkAuditData(_spark_frames(spark, frames), columns=columns))):
        roles, engine = data.roles, engine_of(data)
        spec = Duplicates().measure(engine, roles).spec
        table = KeyedRows(engine, roles, spec).table
        keyed[name] = table.sort("_s", "_r").collect().to_polars()
        engine.release()
    assert keyed["spark"].columns == keyed["polars"].columns
    assert {"_fh1", "_rh1", "_y"} <= set(keyed["spark"].columns)
    assert keyed["spark"].equals(keyed["polars"])


def test_memorisation_on_a_sampled_train_says_the_count_is_a_lower_bound(spark):
    """With at most 100 rows per split collected, train (400 rows) is sampled: the finding
    states the sample and that a near copy counts only when its train twin was drawn."""
    from auditor.core.config import Columns
    from auditor.detectors.memorisation import Memorisation
    from auditor.detectors.measured import judged
    from auditor.engines.spark_io import SparkAuditData

    frames = _spark_frames(spark, honest_rows())
    data = SparkAuditData(frames, columns=Columns(label="y", time="ts", ids=["row_id"]),
                          sample_rows=100)
    (f,) = judged(Memorisation(), data)
    kept = f.evidence["driver_sample"]["train"]["rows"]
    assert 50 <= kept < 400 and f.evidence["driver_sample"]["train"]["of"] == 400
    assert f"seeded driver-side sample of {kept} of 400 train rows" in f.message
    assert "train is sampled too" in f.message and "lower bound" in f.message


def _wide_rows(n_cols: int) -> dict[str, pl.DataFrame]:
    """train 300 / test 100 rows of ``n_cols`` columns (floats, low-cardinality strings) and a
    label; test holds 8 exact copies of train rows and 5 rows with train features and the
    other label."""
    rng = np.random.default_rng(9)

    def part(n: int) -> pl.DataFrame:
        cols = {f"x{i}": rng.normal(size=n) if i % 2 else rng.choice(["a", "b", "c"], n)
                for i in range(n_cols)}
        return pl.DataFrame(cols | {"y": rng.integers(0, 2, n)})

    train, test = part(300), part(87)
    flipped = train.slice(20, 5).with_columns((1 - pl.col("y")).alias("y"))
    return {"train": train, "test": pl.concat([test, train.slice(0, 8), flipped])}


def test_duplicates_jobs_do_not_grow_with_the_number_of_columns(spark):
    """Every row is reduced to keys in one pass and every count is an aggregate of the keyed
    table: 28 columns cost the Spark jobs 4 columns cost (up to 2 more: adaptive execution
    may plan an extra job depending on what the shared session ran before), with the same
    planted counts on both widths."""
    from auditor.core.config import Columns
    from auditor.detectors.duplicates import Duplicates
    from auditor.detectors.measured import judged
    from auditor.engines.spark_io import SparkAuditData

    sc = spark.sparkContext
    jobs = []
    for n_cols in (4, 28):
        frames = _spark_frames(spark, _wide_rows(n_cols))
        data = SparkAuditData(frames, columns=Columns(label="y"))
        for name in data.split_names:
            data.rows(name)  # row counts are the loader's, not the check's
        group = f"duplicates-{n_cols}"
        sc.setJobGroup(group, group)
        try:
            findings = judged(Duplicates(), data)
        finally:
            sc.setJobGroup("", "")
        jobs.append(len(sc.statusTracker().getJobIdsForGroup(group)))
        got = {(f.metric, tuple(f.splits)): f.count for f in findings}
        assert got[("duplicate_rows", ("train", "test"))] == 8
        assert got[("conflicting_labels", ("train", "test"))] == 5
    assert jobs[1] - jobs[0] <= 2, jobs


def test_duplicates_sketch_continuity_only_when_rows_repeat(spark, monkeypatch):
    """The stacked continuity sketch (``continuous_columns``) runs only when some key repeats
    or is shared: honest splits (unique row ids) leave it unmeasured and report no copies;
    planted copies measure it, and the chance baseline's measured values give the planted
    counts (8 copies, 5 conflicting labels)."""
    from auditor.core.config import Columns
    from auditor.detectors.duplicates import Duplicates
    from auditor.detectors.measured import judged
    from auditor.engines.spark_engine import SparkEngine
    from auditor.engines.spark_io import SparkAuditData

    calls = []
    real = SparkEngine.continuous_columns
    monkeypatch.setattr(SparkEngine, "continuous_columns",
                        lambda self, *a, **k: calls.append(a) or real(self, *a, **k))
    honest = SparkAuditData(_spark_frames(spark, honest_rows()),
                            columns=Columns(label="y", time="ts", ids=["row_id"]))
    found = judged(Duplicates(), honest)
    assert not calls
    assert all(f.count == 0 for f in found
               if f.metric in ("duplicate_rows", "within_split_duplicates"))
    planted = SparkAuditData(_spark_frames(spark, _wide_rows(6)), columns=Columns(label="y"))
    got = {(f.metric, tuple(f.splits)): f.count for f in judged(Duplicates(), planted)}
    assert len(calls) == 1
    assert got[("duplicate_rows", ("train", "test"))] == 8
    assert got[("conflicting_labels", ("train", "test"))] == 5


def test_held_values_in_passes_give_the_polars_findings_on_spark(spark, monkeypatch):
    """The measured values of the repeated keys searched for in passes of at most
    MAX_SHIPPED values (here 25 of 60: three passes, their cells put together in the engine)
    give, on Spark, the findings of one pass on polars."""
    from auditor.core.config import Columns
    from auditor.detectors import copy_keys
    from auditor.detectors.duplicates import Duplicates
    from auditor.detectors.measured import judged
    from auditor.engines.spark_io import SparkAuditData
    from auditor.loading.data import build_audit_data
    from tests.detectors.test_duplicates import _held_values_splits

    frames = _held_values_splits()

    def findings(data):
        return sorted((f.metric, str(f.severity), f.count, tuple(f.splits),
                       str(f.evidence.get("chance_baseline"))) for f in judged(Duplicates(), data))

    want = findings(build_audit_data(frames, columns=Columns(label="y")))
    passes = []
    real = copy_keys.KeyedRows._holding
    monkeypatch.setattr(copy_keys, "MAX_SHIPPED", 25)
    monkeypatch.setattr(copy_keys.KeyedRows, "_holding", staticmethod(
        lambda held, columns, cells: passes.append(held.height) or real(held, columns, cells)))
    got = findings(SparkAuditData(_spark_frames(spark, frames), columns=Columns(label="y")))
    assert passes == [60] and got == want
    assert any(m == "duplicate_rows" and c == 25 for m, _, c, _, _ in got)


@pytest.mark.parametrize("collect", [True, False])
def test_the_release_after_a_measure_collects_garbage_beyond_a_million_rows(
        spark, monkeypatch, collect):
    """Beyond COLLECT_ABOVE_ROWS rows (counted already: no job), the release that follows
    every check's measure (``judged``) collects Python's garbage and then the JVM's, so that
    Spark deletes the finished check's shuffle files (at 50M rows one check's 27.6 GB shuffle
    stayed on disk until the disk filled; a JVM collection alone freed nothing). Below, it
    does not."""
    import gc

    from auditor.core.config import Columns
    from auditor.engines import spark_engine
    from auditor.engines.spark_io import SparkAuditData
    from tests.detectors.test_duplicates import _held_values_splits

    monkeypatch.setattr(spark_engine, "COLLECT_ABOVE_ROWS", 600 if collect else 10**9)
    calls: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("python") or 0)
    data = SparkAuditData(_spark_frames(spark, _held_values_splits()), columns=Columns(label="y"))
    assert sum(data.engine.split_rows().values()) == 605  # > 600
    real = spark_engine.SparkEngine.collect_garbage

    def spied(self):
        real(self)  # the JVM's System.gc() runs
        calls.append("jvm")

    monkeypatch.setattr(spark_engine.SparkEngine, "collect_garbage", spied)
    data.engine.release()
    assert calls == (["python", "jvm"] if collect else [])


def test_copy_examples_name_a_copied_row_by_its_declared_id(spark, tmp_path):
    """Spark names a copied row by its row numbers and declared ids, as polars does (the same
    examples on both engines), also when the id is typed differently in one split (each
    split's rows are fetched from that split)."""
    from tests.engines.fixtures import planted

    frames = planted()
    suite = "checks:\n  leakage.duplicates: {}\n"
    found = {}
    for engine in ("polars", "spark"):
        report = _audit(frames, engine, spark, tmp_path, suite, label="y", ids=["row_id"])
        f = next(f for f in report.checks[0].findings if f.metric == "duplicate_rows"
                 and f.splits == ["train", "test"])
        found[engine] = [e["test row_id"] for e in f.evidence["examples"]]
    assert len(found["polars"]) == 12 and found["spark"] == found["polars"]
    assert len(set(found["spark"])) == 12  # the 12 copies, each by its own id
    frames["test"] = frames["test"].with_columns(pl.col("row_id").cast(pl.String))
    report = _audit(frames, "spark", spark, tmp_path, suite, label="y", ids=["row_id"])
    assert report.checks[0].status != "error"
    f = next(f for f in report.checks[0].findings if f.metric == "duplicate_rows"
             and f.splits == ["train", "test"])
    assert f.count == 12
    assert [e["test row_id"] for e in f.evidence["examples"]] == [str(i) for i in found["polars"]]


@pytest.mark.parametrize("band", [0.10, 0.0, 10.0])
def test_continuous_columns_decide_as_polars_around_the_cut(spark, monkeypatch, band):
    """Spark's continuity (one sketch job over every split, exact distinct counts of the
    columns within ten standard errors of the cut) decides as polars' exact counts: columns
    with 40-60% distinct values (the exact recount), 5% and 100% (the sketch alone), a
    constant, nulls, a boolean; three splits whose shares differ. A column is continuous at
    u >= n / 2 of its non-null values. ``band``: the default; no recount (the sketch alone,
    which misjudges ``c50``); every (split, column) recounted exactly."""
    from auditor.engines import spark_values
    from auditor.engines.polars_engine import PolarsEngine
    from auditor.engines.spark_values import continuous_columns

    monkeypatch.setattr(spark_values, "EXACT_BAND", band)

    def frame(n: int, shares: dict[str, float]) -> pl.DataFrame:
        cols: dict[str, object] = {
            name: np.arange(n) % max(1, round(share * n)) for name, share in shares.items()}
        cols["constant"] = np.ones(n)
        cols["nulls"] = pl.Series([None, 1.5, 2.5] + [None] * (n - 3), dtype=pl.Float64)
        cols["flag"] = np.arange(n) % 2 == 0
        return pl.DataFrame(cols).with_columns(pl.col("c45").cast(pl.String),
                                               pl.col("c51") * 0.5)
    shares = {"c40": 0.40, "c45": 0.45, "c49": 0.49, "c50": 0.50, "c51": 0.51, "c55": 0.55,
              "c05": 0.05, "c100": 1.0}
    frames = {"train": frame(2000, shares),
              "val": frame(1000, {k: min(1.0, v + 0.02) for k, v in shares.items()}),
              "test": frame(600, {k: max(0.0, v - 0.02) for k, v in shares.items()})}
    columns = [*shares, "constant", "nulls", "flag"]
    expected = {s: [c for c in columns if c != "flag" and (x := df[c].drop_nulls()).len() > 1
                    and x.n_unique() >= 0.5 * x.len()] for s, df in frames.items()}
    assert expected["train"] == ["c50", "c51", "c55", "c100", "nulls"]
    assert PolarsEngine(frames).continuous_columns(columns, list(frames), share=0.5) == expected
    got = continuous_columns(_spark_frames(spark, frames), columns, list(frames), 0.5)
    if band == 0.0:  # the sketch alone misjudges a column at the cut: the recount decides
        assert got != expected and got["train"] == ["c51", "c55", "c100", "nulls"]
    else:
        assert got == expected
