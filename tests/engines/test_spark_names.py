"""Column names Spark would parse (issue 15, review R2): a dot (struct field), a space, a
backtick and markup in a name must be taken literally by every Spark check. The default suite
on a planted frame whose columns are named ``a.b``, ``c d``, ``e`f``, ``<script>x</script>``
(label ``y.t``, group ``g.id``, time ``t.s``) must end with no ``error`` on Spark, and with
the polars status for every check both engines run."""
from __future__ import annotations

import sys

import numpy as np
import polars as pl

from auditor.engines import NOT_ON_SPARK

DRIFTED, LEAKY, COPY, HTML = "a.b", "c d", "e`f", "<script>x</script>"
LABEL, GROUP, TIME = "y.t", "g.id", "t.s"
STAMP = "s`t.amp"


def _split(rng: np.random.Generator, n: int, shift: float, group0: int,
           start: str) -> pl.DataFrame:
    y = rng.integers(0, 2, n)
    drifted = rng.normal(shift, 1.0, n)  # shifted by 3 sd in test: drift.features fails
    leaky = y * 10.0 + rng.normal(0, 0.01, n)  # separates the label: a leakage finding
    noise = rng.normal(0, 1, n)
    return pl.DataFrame({
        DRIFTED: drifted,
        LEAKY: leaky,
        COPY: leaky.copy(),  # an exact copy of another feature
        HTML: noise,
        GROUP: [f"g{group0 + i // 4}" for i in range(n)],
        STAMP: pl.datetime_range(pl.datetime(2019, 1, 1), pl.datetime(2019, 1, 1)
                                 + pl.duration(hours=n - 1), "1h", eager=True)
        .cast(pl.Datetime("us")),  # a datetime feature (Spark TimestampNTZ), backticked name
        TIME: pl.date_range(pl.date(*map(int, start.split("-"))), pl.date(2030, 1, 1),
                            eager=True)[:n],  # one day per row, test after train
        LABEL: y.astype(np.int64),
    })


def _frames() -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(7)
    train = _split(rng, 300, 0.0, 0, "2020-01-01")
    test = _split(rng, 200, 3.0, 70, "2021-01-01")  # groups g70..g74 also in train: a shared group
    # rows copied verbatim from train into test: exact duplicates across splits
    test = pl.concat([test.head(190), train.slice(10, 10)])
    return {"train": train, "test": test}


def test_dotted_backticked_and_markup_names_run_on_spark(spark):
    from auditor.api import audit

    frames = _frames()
    kw = dict(label=LABEL, groups=[GROUP], time=TIME, hash="fast", seed=0)
    polars = audit(**kw, splits=frames, engine="polars")
    from auditor.engines.spark_engine import col

    # the naive datetime as Spark's TimestampNTZ (as polars reads it; a SQL-string path)
    sframes = {k: spark.createDataFrame(v.to_arrow()).withColumn(
        STAMP, col(STAMP).cast("timestamp_ntz")) for k, v in frames.items()}
    assert sframes["train"].columns == frames["train"].columns  # names kept literally
    sparked = audit(**kw, splits=sframes, engine="spark", spark=spark)

    p = {c.id: c for c in polars.checks}
    s = {c.id: c for c in sparked.checks}
    assert set(p) == set(s)
    skipped = sorted(c for c in s if s[c].status == "skipped"
                     and NOT_ON_SPARK in (s[c].summary or ""))
    errors = {c: (s[c].error or "")[:400] for c in s if s[c].status == "error"}
    differ = {c: (p[c].status, s[c].status) for c in p
              if c not in skipped and p[c].status != s[c].status}
    print(f"not on spark: {skipped}; differ: {differ}; errors: {errors}; spark statuses: "
          f"{ {c: str(s[c].status) for c in s} }", file=sys.stderr)
    assert errors == {}
    assert differ == {}
    # the planted problems are found (on both engines, since the statuses are equal)
    for check in ("leakage.duplicates", "drift.features", "leakage.group_overlap",
                  "leakage.temporal", "leakage.single_feature_auc",
                  "leakage.feature_label_correlation"):
        assert p[check].status == "fail", (check, p[check].summary)
        assert s[check].status == "fail", (check, s[check].summary)
    # the planted columns are the failing subjects on spark, named literally
    def failing(check: str) -> set[str]:
        out: set[str] = set()
        for f in s[check].findings:
            if f.severity.value == "fail":
                out |= set(f.subject) if isinstance(f.subject, list) else {f.subject}
        return out

    assert DRIFTED in failing("drift.features"), failing("drift.features")
    assert {LEAKY, COPY} <= failing("leakage.single_feature_auc"), \
        failing("leakage.single_feature_auc")
    assert HTML not in failing("leakage.single_feature_auc")
    dup = [f for f in s["leakage.duplicates"].findings if f.metric == "duplicate_rows"]
    assert dup and max(f.count for f in dup) >= 10
    # the markup column name is escaped in the spark run's HTML report
    from auditor.report.render import render_html

    html = render_html(sparked.to_dict())
    assert HTML not in html and "&lt;script&gt;x&lt;/script&gt;" in html

