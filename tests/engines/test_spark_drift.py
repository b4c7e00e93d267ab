"""drift.features / drift.label on numeric and datetime columns: one check, measured on the
spark engine and on the polars engine (sorted values). Below the Spark engine's
``NUMERIC_VALUES`` the values are collected and sorted on the driver: everything equals polars.
Above it (tests set the budget to 0 with the ``sketched`` fixture) they are quantile sketches
and binned counts (:mod:`auditor.engines.spark_sketch`): same statuses and counts; PSI equal
within 1e-9 (the sketch is exact below QUANTILE_ACCURACY rows, so the bin edges are equal); KS
D from the grid never above the exact D and within the stated error bound; everything equal
when every value is a grid point (fewer rows than KS_GRID). Skipped when pyspark or Java is
missing (see conftest.py)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

from auditor.report.results import Severity
from tests.engines.fixtures import numeric_drift

SUITE = "checks:\n  drift.features: {}\n  drift.label: {}\n"


@pytest.fixture
def sketched(monkeypatch):
    """The Spark engine sketches every numeric column (no value collected exactly)."""
    from auditor.engines import spark_engine

    monkeypatch.setattr(spark_engine, "NUMERIC_VALUES", 0)


def _audit(frames, engine, spark, tmp_path: Path, **roles):
    from auditor.api import audit

    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    if engine == "spark":
        frames = {k: spark.createDataFrame(v.to_arrow()).cache() for k, v in frames.items()}
    return audit(train=frames["train"], test=frames["test"], suite=str(suite), engine=engine,
                 spark=spark, hash="fast", **roles)


def _by_subject(result, cid):
    check = {c.id: c for c in result.checks}[cid]
    return check, {(f.metric, str(f.subject)): f for f in check.findings if f.subject}


def _agree(p, s, exact: bool):
    """Column findings of both engines: same keys, statuses, counts; PSI within 1e-9; KS D
    within the stated bound (equal when exact)."""
    assert p[0].status == s[0].status, (p[0].summary, s[0].summary)
    fp, fs = p[1], s[1]
    assert set(fp) == set(fs), set(fp) ^ set(fs)
    for k in fp:
        a, b = fp[k], fs[k]
        assert (a.severity, a.count) == (b.severity, b.count), (k, a.message, b.message)
        sa, sb = a.evidence.get("statistics"), b.evidence.get("statistics")
        if sa is None:
            continue
        assert math.isclose(sa["psi"], sb["psi"], rel_tol=1e-9, abs_tol=1e-9), k
        if "ks_d" in sa:
            bound = sb.get("ks_d error bound", 0.0)  # absent when measured exactly
            assert sb["ks_d"] <= sa["ks_d"] + 1e-9 and sa["ks_d"] - sb["ks_d"] <= bound + 1e-9
            assert bound <= 3.0 / 1000 + 1e-9  # one grid interval of either split (K = 1000)
            if exact:
                assert bound == 0 and sa["ks_d"] == sb["ks_d"] and sa["ks p"] == sb["ks p"]
                assert math.isclose(sa["wasserstein"], sb["wasserstein"], rel_tol=1e-9)
                assert a.message == b.message, (a.message, b.message)
                assert a.evidence["chart"] == b.evidence["chart"]
        assert a.evidence["bins"] == b.evidence["bins"], k


@pytest.mark.parametrize("sizes", [(2_000, 800), (300, 120)], ids=["grid", "exact"])
def test_numeric_drift_agrees_with_polars(spark, tmp_path, sizes, sketched):
    frames = numeric_drift(*sizes)
    roles = dict(label="target")
    rp = _audit(frames, "polars", spark, tmp_path, **roles)
    rs = _audit(frames, "spark", spark, tmp_path, **roles)
    exact = sizes[0] < 1000
    p, s = _by_subject(rp, "drift.features"), _by_subject(rs, "drift.features")
    _agree(p, s, exact)
    severity = {k[1]: f.severity for k, f in s[1].items() if k[0] != "unseen_share"}
    # a 0.6 sd shift fails at 800 test rows; at 120 its PSI is what one random re-split of
    # the rows in a thousand reaches by chance: a warn
    assert severity.get("shift") == ("fail" if sizes[1] > 500 else "warn")
    assert severity.get("few") in ("warn", "fail")
    # stable columns: no warn or fail (at most an info finding of a non-significant effect)
    assert severity.get("same", "info") == "info" and severity.get("when", "info") == "info"
    summary = next(f for f in s[0].findings if f.metric == "drifted_features")
    assert summary.count == 2  # shift and few; nothing listed as "not compared" on spark
    assert not any(r["column"] in ("shift", "same", "few", "when")
                   for r in summary.evidence.get("not compared", []))
    # the planted shift's KS against scipy on the raw values
    d = stats.ks_2samp(frames["train"]["shift"].to_numpy(), frames["test"]["shift"].to_numpy())
    got = next(f for (metric, subject), f in s[1].items() if subject == "shift")
    st = got.evidence["statistics"]
    assert -1e-6 <= d.statistic - st["ks_d"] <= st["ks_d error bound"] + 1e-6  # 6 digits
    # few: binned per value, counts equal to numpy's
    few = s[1][next(k for k in s[1] if k[1] == "few")]
    shares = {r["bin"]: r["train share"] for r in few.evidence["bins"]}
    ref = np.bincount(frames["train"]["few"].to_numpy(), minlength=5) / sizes[0]
    assert [shares[str(v)] for v in range(5)] == [round(float(x), 6) for x in ref]
    # numeric label: written once (drift.label measures the sorted values on both engines),
    # so the two agree exactly, not within a sketch's bound
    lp, ls = _by_subject(rp, "drift.label"), _by_subject(rs, "drift.label")
    _agree(lp, ls, True)
    assert ls[0].status == "fail"


def test_honest_numeric_splits_do_not_fail(spark, tmp_path, sketched):
    rng = np.random.default_rng(4)
    df = pl.DataFrame({"a": rng.normal(size=3_000), "b": rng.exponential(size=3_000),
                       "c": rng.integers(0, 4, 3_000), "y": rng.normal(size=3_000)})
    frames = {"train": df.slice(0, 2_000), "test": df.slice(2_000)}
    rp = _audit(frames, "polars", spark, tmp_path, label="y")
    rs = _audit(frames, "spark", spark, tmp_path, label="y")
    for cid in ("drift.features", "drift.label"):
        p, s = _by_subject(rp, cid), _by_subject(rs, cid)
        _agree(p, s, exact=False)
        assert s[0].status != "fail" and p[0].status != "fail"


def _both_engines(train, test, spark, tmp_path: Path, *checks: str) -> dict[str, dict]:
    """``checks`` on both engines: {engine: {check id: CheckResult}}."""
    from auditor.api import audit

    suite = tmp_path / "suite.yaml"
    suite.write_text("checks:\n" + "".join(f"  {c}: {{}}\n" for c in checks))
    got = {}
    for engine in ("polars", "spark"):
        frames = {"train": train, "test": test}
        if engine == "spark":
            frames = {k: spark.createDataFrame(v.to_arrow()) for k, v in frames.items()}
        got[engine] = {c.id: c for c in audit(train=frames["train"], test=frames["test"],
                                              suite=str(suite), engine=engine, spark=spark,
                                              hash="fast").checks}
    return got


def test_schema_value_variants_agree_with_polars(spark, tmp_path):
    """``city`` is written "New York" (60 train rows), "new york " (5 train rows) and
    "New-York" (12 test rows): 17 of the 160 non-missing rows hold a less frequent form, and the
    splits use different forms; ``blood`` 'A+' / 'A-' / 'a' are not variants (signs kept)."""

    train = pl.DataFrame({"city": ["New York"] * 60 + ["new york "] * 5 + ["Boston"] * 25
                          + [None] * 10,
                          "blood": ["A+", "A-", "a", "B"] * 25, "x": np.arange(100.0)})
    test = pl.DataFrame({"city": ["New-York"] * 12 + ["Boston"] * 58,
                         "blood": ["A+", "B"] * 35, "x": np.arange(70.0)})
    results = {e: c["schema.consistency"] for e, c in _both_engines(
        train, test, spark, tmp_path, "schema.consistency").items()}
    p, s = results["polars"], results["spark"]
    assert p.status == s.status == "warn"
    fp = {f.metric: f for f in p.findings}
    fs = {f.metric: f for f in s.findings}
    assert set(fp) == set(fs) == {"value_variants", "features"}
    a, b = fp["value_variants"], fs["value_variants"]
    assert (b.subject, b.count, b.value) == ("city", 17, round(17 / 160, 6))
    assert (a.severity, a.count, a.value, a.message, a.evidence, a.splits) == \
        (b.severity, b.count, b.value, b.message, b.evidence, b.splits)
    assert "splits use different forms" in b.message
    assert fp["features"].message == fs["features"].message


def test_schema_value_variants_group_non_ascii_forms_as_polars_does(spark, tmp_path):
    """``mood`` is "ok" (60 train rows) and "OK\U0001FAE8" (6 train rows; U+1FAE8 SHAKING FACE
    is a symbol of Unicode 15, which Java 17's regex classes do not know): the polars key
    folds both to "ok". The Spark engine used to form its candidate keys with Java regexes
    ("ok\U0001FAE8" stayed apart) and missed the variant; the key is now the polars code's,
    computed on the executors."""

    train = pl.DataFrame({"mood": ["ok"] * 60 + ["OK\U0001FAE8"] * 6 + ["sad"] * 34,
                          "x": np.arange(100.0)})
    test = pl.DataFrame({"mood": ["ok"] * 40 + ["sad"] * 30, "x": np.arange(70.0)})
    results = {e: c["schema.consistency"] for e, c in _both_engines(
        train, test, spark, tmp_path, "schema.consistency").items()}
    fp = {f.metric: f for f in results["polars"].findings}
    fs = {f.metric: f for f in results["spark"].findings}
    a, b = fp["value_variants"], fs.get("value_variants")
    assert (a.subject, a.count) == ("mood", 6)
    assert b is not None, [f.message for f in fs.values()]
    assert (a.severity, a.count, a.value, a.message, a.evidence) == \
        (b.severity, b.count, b.value, b.message, b.evidence)


def _wide_splits(n_cols: int) -> dict[str, pl.DataFrame]:
    """train 3,000 / val 1,000 / test 1,000 rows; per group of three columns a numeric one
    (shifted by +0.5 in test), a five-valued integer one (value 4 only in val and test: unseen)
    and a string one; ``rare`` has 0 / 2 in half the train rows each (in a fifth / four fifths
    of the other splits' rows: drift binned per value) and the value 1 in one train
    row (rank 1,501 of 3,000: no quantile at j/1000 lands on it, so the exact value counts are
    measured), ``t`` is a time column cutting the splits in order."""
    from datetime import datetime, timedelta

    rng = np.random.default_rng(9)
    sizes = {"train": 3_000, "val": 1_000, "test": 1_000}
    out, start = {}, 0
    for name, n in sizes.items():
        cols: dict[str, object] = {}
        for i in range(n_cols):
            if i % 3 == 0:
                cols[f"c{i}"] = rng.normal(loc=0.5 if name == "test" else 0.0, size=n)
            elif i % 3 == 1:
                cols[f"c{i}"] = rng.integers(0, 5 if name != "train" else 4, n)
            else:
                cols[f"c{i}"] = rng.choice(["a", "b", "c"], n).tolist()
        rare = np.where(np.arange(n) < (n // 2 if name == "train" else n // 5), 0, 2)
        if name == "train":
            rare[n // 2] = 1
        cols["rare"] = rare
        cols["t"] = [datetime(2024, 1, 1) + timedelta(hours=int(h))
                     for h in range(start, start + n)]
        start += n
        out[name] = pl.DataFrame(cols)
    return out


def test_feature_drift_jobs_do_not_grow_with_the_number_of_columns(spark, sketched):
    """3 splits: drift.features on 5 and on 20 columns runs the same number of Spark jobs
    (the count of numeric values, profiles, cells, the exact value counts and cells again of
    ``rare``, category counts (totals, counts per column, collect), one unseen-values job per
    pair, the time column's range per split and one tally per compared split, the calendar
    sample; the splits are cut by time, so also the time backtests: the time column's range
    and a 200-point CDF tally per earlier split, and the driver-side sample they are measured
    on), and its findings
    equal the polars engine's (statuses, counts, KS within the stated bound); schema.consistency
    (written once, through the engine's value counts) runs a number of jobs that does not grow
    with the columns and gives the polars engine's findings."""
    from auditor.core.config import Columns
    from auditor.detectors.drift import FeatureDrift
    from auditor.detectors.schema import SchemaConsistency
    from auditor.detectors.measured import judged
    from auditor.engines.spark_io import SparkAuditData
    from auditor.loading.data import build_audit_data

    sc = spark.sparkContext

    def jobs_of(group: str, run):
        sc.setJobGroup(group, group)
        try:
            got = run()
        finally:
            sc.setJobGroup("", "")
        return got, len(sc.statusTracker().getJobIdsForGroup(group))

    jobs, schema_jobs = [], []
    for n_cols in (5, 20):
        frames = _wide_splits(n_cols)
        columns = Columns(time="t")
        polars_data = build_audit_data(frames, columns=columns)

        def fresh() -> SparkAuditData:
            data = SparkAuditData({k: spark.createDataFrame(v.to_arrow()).cache()
                                   for k, v in frames.items()}, columns=columns)
            for name in data.split_names:
                data.rows(name)  # row counts (and the cache) are the loader's
            return data

        data = fresh()
        found, n = jobs_of(f"drift-{n_cols}", lambda: judged(FeatureDrift(), data))
        jobs.append(n)
        expected = {(f.metric, str(f.subject)): f for f in FeatureDrift().run(polars_data)}
        got = {(f.metric, str(f.subject)): f for f in found}
        assert set(got) == set(expected), set(got) ^ set(expected)
        for k, f in expected.items():
            g = got[k]
            assert (g.severity, g.count) == (f.severity, f.count), (k, f.message, g.message)
            sa, sb = f.evidence.get("statistics"), g.evidence.get("statistics")
            if sa and "ks_d" in sa:
                assert 0 <= sa["ks_d"] - sb["ks_d"] <= sb["ks_d error bound"] + 1e-9, k
            if sa and "psi" in sa:
                assert math.isclose(sa["psi"], sb["psi"], rel_tol=1e-9, abs_tol=1e-9), k
        shifted = [f"c{i}" for i in range(0, n_cols, 3)]
        assert {s for m, s in got if m != "unseen_share"
                and got[(m, s)].severity in (Severity.WARN, Severity.FAIL)} >= set(shifted)
        unseen = {s: f.count for (m, s), f in got.items() if m == "unseen_share"}
        assert set(unseen) >= {f"c{i}" for i in range(1, n_cols, 3)}
        rare = next(f for (m, s), f in got.items() if s == "rare" and m != "unseen_share")
        assert [r["bin"] for r in rare.evidence["bins"]] == ["0", "1", "2"]  # per value, exact
        other = fresh()
        by_itself, alone = jobs_of(f"schema-{n_cols}",
                                   lambda: judged(SchemaConsistency(), other))
        schema_jobs.append(alone)
        assert ([(f.severity, f.metric, f.subject, f.count, f.value) for f in by_itself]
                == [(f.severity, f.metric, f.subject, f.count, f.value)
                    for f in SchemaConsistency().run(polars_data)])
    assert jobs[0] == jobs[1] and jobs[1] <= 26, jobs
    # value counts of all columns stacked: row totals, the kept counts (cached), their count
    # and collect, whatever the number of columns
    assert schema_jobs[0] == schema_jobs[1] <= 8, schema_jobs


def test_time_splits_are_decided_per_pair(spark):
    """Whether a pair is cut by time is decided per pair (ranges, then one tally per compared
    split): ``extra`` lies inside train's time range (not a time split), test after it."""
    import datetime as dt

    from auditor.core.config import Columns
    from auditor.judging.design import time_splits
    from auditor.engines.selection import engine_of
    from auditor.engines.spark_io import SparkAuditData

    day = dt.datetime(2024, 1, 1)
    train = spark.createDataFrame([(day + dt.timedelta(days=i), i) for i in range(20)],
                                  "t timestamp, x long")
    test = spark.createDataFrame([(day + dt.timedelta(days=30 + i), i) for i in range(10)],
                                 "t timestamp, x long")
    extra = spark.createDataFrame([(day + dt.timedelta(days=i), i) for i in range(5)],
                                  "t timestamp, x long")
    data = SparkAuditData({"train": train, "test": test, "extra": extra},
                          columns=Columns(time="t"))
    got = time_splits(engine_of(data), data.roles, [("train", "test"), ("train", "extra")])
    assert got == {("train", "test"): True, ("train", "extra"): False}


def test_a_few_valued_column_holding_infinities_is_compared_not_an_error(spark, tmp_path,
                                                                         sketched):
    """A per-value column whose values include +-inf (the grid holds finite values only) is
    counted from the cells beyond the grid: same counts and status as polars (it raised an
    IndexError, so drift.features ended in error)."""
    rng = np.random.default_rng(7)
    values = np.array([-np.inf, 0.0, 1.0, 2.0, np.inf])
    frames = {"train": pl.DataFrame({"v": rng.choice(values, 2_000, p=[.1, .3, .3, .2, .1]),
                                     "x": rng.normal(size=2_000)}),
              "test": pl.DataFrame({"v": rng.choice(values, 800, p=[.05, .2, .3, .2, .25]),
                                    "x": rng.normal(size=800)})}
    rp = _audit(frames, "polars", spark, tmp_path)
    rs = _audit(frames, "spark", spark, tmp_path)
    p, s = _by_subject(rp, "drift.features"), _by_subject(rs, "drift.features")
    assert s[0].status == p[0].status != "error", s[0].summary
    fp = next(f for (m, c), f in p[1].items() if c == "v")
    fs = next(f for (m, c), f in s[1].items() if c == "v")
    assert fs.severity == fp.severity
    assert fs.value == pytest.approx(fp.value, abs=1e-9)


def test_category_counts_beyond_the_driver_budget_stay_on_the_executors(spark, tmp_path,
                                                                         monkeypatch):
    """The driver holds at most DRIVER_VALUES category counts in one operation, fewest first: with a
    budget of 30, ``city`` (3 values x 2 splits = 6 counts) and ``shift`` (2 x 2 = 4) are
    brought over and compared exactly as on polars, ``order_ref`` (80 train + 40 test unique
    strings: 120 counts) is not: an info finding and the "not compared" table say so with its
    count, and its counts never reach the driver's cache. schema.consistency still finds the
    variants of every column (``order_ref``'s "A-1" / "a 1" in Spark)."""
    from auditor.engines import spark_engine

    monkeypatch.setattr(spark_engine, "DRIVER_VALUES", 30)
    rng = np.random.default_rng(3)
    train = pl.DataFrame({"city": rng.choice(["Oslo", "Rome", "Lima"], 80).tolist(),
                          "shift": rng.choice(["day", "night"], 80).tolist(),
                          "order_ref": ["A-1"] + [f"R{i:04d}" for i in range(79)],
                          "x": rng.normal(size=80)})
    test = pl.DataFrame({"city": rng.choice(["Oslo", "Rome", "Lima"], 40).tolist(),
                         "shift": rng.choice(["day", "night"], 40, p=[0.1, 0.9]).tolist(),
                         "order_ref": ["a 1"] + [f"T{i:04d}" for i in range(39)],
                         "x": rng.normal(size=40)})
    got = _both_engines(train, test, spark, tmp_path, "schema.consistency", "drift.features")
    p, s = got["polars"]["drift.features"], got["spark"]["drift.features"]
    assert s.status != "error", s.summary
    fs = {(f.metric, str(f.subject)): f for f in s.findings if f.subject}
    fp = {(f.metric, str(f.subject)): f for f in p.findings if f.subject}
    note = fs.pop(("not_compared", "order_ref"))
    assert note.severity == Severity.INFO and note.count == 120
    assert "30 category counts" in note.message and "columns.ids" in note.message
    assert {k for k in fp if k[1] != "order_ref"} == set(fs)
    for k, f in fs.items():  # p_adj differ: Benjamini-Hochberg over one test less
        assert (f.severity, f.count, f.value) == (fp[k].severity, fp[k].count, fp[k].value)
    table = next(f for f in s.findings if f.metric == "drifted_features").evidence
    assert any(r["column"] == "order_ref" and "columns.ids" in r["reason"]
               for r in table["not compared"])
    listed = str(table.get("stable columns")) + str(table["features"])
    assert "order_ref" not in listed and all(c in listed for c in ("city", "shift", "x"))
    vp = {f.subject: f.count for f in got["polars"]["schema.consistency"].findings
          if f.metric == "value_variants"}
    vs = {f.subject: f.count for f in got["spark"]["schema.consistency"].findings
          if f.metric == "value_variants"}
    assert vp == vs and vp.get("order_ref") == 1


def test_a_categorical_label_beyond_the_driver_budget_is_skipped_not_collected(spark,
                                                                               monkeypatch):
    """drift.label goes through the same budget: a label with 120 (split, value) counts and a
    budget of 30 is not brought to the driver; the check is skipped with the count."""
    from auditor.core.config import Columns
    from auditor.detectors.drift import LabelDrift
    from auditor.detectors.measured import judged
    from auditor.engines import spark_engine
    from auditor.engines.spark_io import SparkAuditData
    from auditor.errors import NotApplicable

    monkeypatch.setattr(spark_engine, "DRIVER_VALUES", 30)
    frames = {"train": pl.DataFrame({"ref": [f"R{i}" for i in range(80)],
                                     "x": np.arange(80.0)}),
              "test": pl.DataFrame({"ref": [f"T{i}" for i in range(40)],
                                    "x": np.arange(40.0)})}
    data = SparkAuditData({k: spark.createDataFrame(v.to_arrow()) for k, v in frames.items()},
                          columns=Columns(label="ref"))
    with pytest.raises(NotApplicable, match=r"120 values, more than .*\(30 values"):
        judged(LabelDrift(), data)



def test_numeric_operations_agree_between_engines(spark):
    """The operations drift.features measures numeric columns with, on both engines: exact
    distributions (datetimes as seconds since the epoch, NaN missing), the values of test
    train never had (most frequent first, ties by value) and "every value unique"."""
    from datetime import datetime

    from auditor.core.roles import Kind
    from auditor.engines.polars_engine import PolarsOperations
    from auditor.engines.spark_engine import SparkEngine

    frames = {"train": pl.DataFrame({"v": [1.0, 2.0, 2.0, float("nan"), 3.0],
                                     "u": [5.0, 1.0, 2.0, 3.0, 4.0],
                                     "t": [datetime(2024, 1, d) for d in (1, 2, 3, 4, 5)]}),
              "test": pl.DataFrame({"v": [2.0, 7.0, 7.0, 9.0, None],
                                    "u": [1.0, 1.0, 2.0, 3.0, 4.0],
                                    "t": [datetime(2024, 2, d) for d in (1, 2, 3, 4, 5)]})}
    kinds = {"v": Kind.NUMERIC, "u": Kind.NUMERIC, "t": Kind.DATETIME}
    polars_ops = PolarsOperations(frames)
    spark_ops = SparkEngine({k: spark.createDataFrame(v.to_arrow()) for k, v in frames.items()})
    try:
        for ops in (polars_ops, spark_ops):
            (batch,) = list(ops.numeric_distributions({"t": Kind.DATETIME}, n_bins=10))
            assert batch["train"]["t"].values[0] == datetime(2024, 1, 1).timestamp()
            dist = {s: {c: d for b in ops.numeric_distributions(kinds, n_bins=10)
                        for c, d in b[s].items()} for s in frames}
            assert dist["train"]["v"].missing == 1 and dist["test"]["v"].missing == 1
            assert dist["test"]["v"].values.tolist() == [2.0, 7.0, 7.0, 9.0]
            new = ops.unseen_values("test", {"v": np.array([1.0, 2.0, 3.0])}, kinds, limit=1)
            assert new == {"v": ([(7.0, 2)], 2)}
            assert ops.all_unique(kinds, ["train", "test"]) == {
                "train": {"v": False, "u": True, "t": True},
                "test": {"v": False, "u": False, "t": True}}
    finally:
        spark_ops.close()
