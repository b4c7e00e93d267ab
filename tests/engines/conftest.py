"""One local SparkSession for the whole test session (start-up takes 10-50 s on a loaded
machine); tests that need it are skipped with the reason when pyspark or Java is missing."""
from __future__ import annotations

import os
import shutil
import sys

import pytest


def _why_no_spark() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'auditor[spark]')"
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        return "no Java runtime (java not on PATH and JAVA_HOME unset); Spark needs Java 17"
    return None


@pytest.fixture(scope="session")
def spark():
    reason = _why_no_spark()
    if reason:
        pytest.skip(reason)
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Python workers: this venv
    # Tiny data: one task thread and one shuffle partition (two xdist workers share two cores;
    # split frames still arrive in two partitions: default.parallelism), and a JVM that
    # compiles little (C1 only) with the serial collector. Against local[2], 4 partitions and
    # the JVM's defaults, the conformance cases' Spark side took 156 s instead of 225 s
    # (bench/spark_test_session.py). The e2e demo runs 2 partitions (--spark-conf).
    session = (SparkSession.builder.master("local[1]").appName("auditor-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.default.parallelism", "2")
               .config("spark.driver.extraJavaOptions",
                       "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
               .config("spark.driver.memory", "2g")  # 1g ran out of heap once (shared session)
               .config("spark.sql.adaptive.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               # tiny test data: interpreted plans, no generated code to compile per job (the
               # Spark conformance cases ran 19% faster); the end-to-end tests switch code
               # generation back on (``codegen`` below), as the auditor runs in production
               .config("spark.sql.codegen.wholeStage", "false")
               .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _spark_conf_restored(request):
    """A test that runs the auditor on the shared session (a CLI run with ``--spark-conf``, the
    session defaults) changes its runtime SQL settings for every later test: with adaptive
    execution switched on, a later test counted twice the Spark jobs. Each Spark test leaves
    the settings as it found them."""
    if "spark" not in request.fixturenames:
        yield
        return
    session = request.getfixturevalue("spark")
    before = dict(session.conf.getAll)
    yield
    after = dict(session.conf.getAll)
    for key in after.keys() - before.keys():
        try:
            session.conf.unset(key)
        except Exception:  # a static setting cannot change anyway
            pass
    for key, value in before.items():
        if after.get(key) != value:
            try:
                session.conf.set(key, value)
            except Exception:
                pass


@pytest.fixture
def codegen(spark):
    """Spark's code generation as in production (whole-stage and expression code) for one
    test; the session's interpreted setting is restored after it by ``_spark_conf_restored``."""
    spark.conf.set("spark.sql.codegen.wholeStage", "true")
    spark.conf.set("spark.sql.codegen.factoryMode", "FALLBACK")
    yield spark
