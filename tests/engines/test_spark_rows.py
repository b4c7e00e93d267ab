"""The Spark engine's row operations (:mod:`auditor.engines.spark_rows`) beyond the
conformance suite (tests/engines/test_conformance.py, which compares every check's measures
and verdicts on both engines on planted and honest splits): text columns left to polars, the
normalisation expressions value by value against the polars functions (``cat`` holds a
non-ASCII level: NFKC changes it), sampled memorisation, and Spark jobs that do not grow with
the columns. Skipped when pyspark or Java is missing (see conftest.py).
"""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

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


def test_round_significant_matches_numpy(spark, codegen):
    """With Spark's code generation on (as in production; the other engine tests run
    interpreted plans): the SQL text of the rounding compiles and gives numpy's values."""
    from auditor.engines.polars_near import round_significant as reference
    from auditor.engines.spark_rows import round_significant_frame

    rng = np.random.default_rng(3)
    x = np.concatenate([
        rng.normal(size=2000) * 10.0 ** rng.integers(-30, 30, 2000),
        [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-310, 1e300, 999999.5, 9.9999996, 0.1 + 0.2,
         2.5, 1234565.0, 1234575.0, -1234565.0, 1e22, 1e23, 123456789012.0]])
    df = spark.createDataFrame(pl.DataFrame({"i": np.arange(len(x)), "x": x}).to_arrow())
    for digits in (1, 6, 12):
        got = (round_significant_frame(df, ["x"], digits).orderBy("i")
               .toPandas()["x"].to_numpy())
        want = reference(x, digits)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (digits, x[~same][:5], got[~same][:5], want[~same][:5])


def test_string_normalisation_matches_polars(spark):
    from pyspark.sql import functions as F

    from auditor.engines.polars_near import normalise_strings
    from auditor.engines.spark_rows import fold_function, normalise_string

    values = ["  Hello   World ", "A\tb\nc", "MiXeD", "Straße", "ＡＢＣ ｆｕｌｌ", "ΟΔΟΣ",
              "x\u00a0\u2003y", "İstanbul", "ﬁne", None, "", "   "]
    df = spark.createDataFrame(pl.DataFrame({"i": np.arange(len(values)),
                                             "s": values}).to_arrow())
    got = [r["n"] for r in df.select("i", normalise_string(F.col("s"), True).alias("n"))
           .orderBy("i").collect()]
    want = normalise_strings(pl.Series(values)).to_list()
    assert got == want
    assert fold_function()("ＡＢＣ\u3000Straße") == "abc strasse"


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


def test_duplicates_sketch_continuity_only_when_rows_repeat(spark):
    """The stacked continuity sketch (column_stats) runs only when some key repeats or is
    shared: honest splits (unique row ids) leave it unmeasured and report no copies; planted
    copies measure it, and the chance baseline's measured-value flags (RowTable.flagged)
    give the planted counts (8 copies, 5 conflicting labels)."""
    from auditor.core.config import Columns
    from auditor.detectors.duplicates import Duplicates
    from auditor.detectors.measured import judged
    from auditor.engines.spark_io import SparkAuditData

    honest = SparkAuditData(_spark_frames(spark, honest_rows()),
                            columns=Columns(label="y", time="ts", ids=["row_id"]))
    found = judged(Duplicates(), honest)
    assert not [k for k in honest.engine.__dict__.get("_memo", {}) if k[0] == "spark.column_stats"]
    assert all(f.count == 0 for f in found
               if f.metric in ("duplicate_rows", "within_split_duplicates"))
    planted = SparkAuditData(_spark_frames(spark, _wide_rows(6)), columns=Columns(label="y"))
    got = {(f.metric, tuple(f.splits)): f.count for f in judged(Duplicates(), planted)}
    assert [k for k in planted.engine.__dict__.get("_memo", {}) if k[0] == "spark.column_stats"]
    assert got[("duplicate_rows", ("train", "test"))] == 8
    assert got[("conflicting_labels", ("train", "test"))] == 5


def test_copy_examples_name_a_copied_row_by_its_declared_id(spark, tmp_path):
    """Spark shows a shared row as its values and counts, and, like polars, the declared id
    of a row that carries it in the later split."""
    from tests.engines.fixtures import planted

    frames = planted()
    suite = "checks:\n  leakage.duplicates: {}\n"
    found = {}
    for engine in ("polars", "spark"):
        report = _audit(frames, engine, spark, tmp_path, suite, label="y", ids=["row_id"])
        f = next(f for f in report.checks[0].findings if f.metric == "duplicate_rows"
                 and f.splits == ["train", "test"])
        found[engine] = [e["test row_id"] for e in f.evidence["examples"]]
    assert len(found["polars"]) == 12 and len(found["spark"]) == 12
    assert set(found["spark"]) == set(found["polars"])  # the 12 copies, each by its own id
    # an id typed differently in one split cannot be carried through the union: left out,
    # the check still runs
    frames["test"] = frames["test"].with_columns(pl.col("row_id").cast(pl.String))
    report = _audit(frames, "spark", spark, tmp_path, suite, label="y", ids=["row_id"])
    assert report.checks[0].status != "error"
    f = next(f for f in report.checks[0].findings if f.metric == "duplicate_rows"
             and f.splits == ["train", "test"])
    assert f.count == 12 and all("test row_id" not in e for e in f.evidence["examples"])
