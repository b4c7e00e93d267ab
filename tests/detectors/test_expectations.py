"""schema.expectations: real Great Expectations suites validated by GX on every split, and the
suite ``auditor export-expectations`` infers from train (validated by GX on the demo)."""
from __future__ import annotations

import contextlib
import io
import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from auditor.core.config import Columns, load_config
from auditor.loading.data import build_audit_data, open_splits
from auditor.loading.demo import write_demo
from auditor.detectors.expectations import Expectations
from auditor.errors import InputError, NotApplicable
from auditor.integrations.gx import read_suite
from auditor.integrations.gx_export import infer_suite
from auditor.runner import run_check
from tests.conftest import clean_frame, gx_or_skip

gx = gx_or_skip()


def _cli(*args: str, own_process: bool = False) -> subprocess.CompletedProcess:
    """``auditor ARGS``, stdout and stderr captured: in this process (a fresh interpreter per
    call cost ~6 s of imports), or as a user runs it (``own_process``: what reaches the real
    stderr, warnings and logging included)."""
    from auditor.cli import main

    if own_process:
        return subprocess.run([sys.executable, "-m", "auditor", *args], capture_output=True,
                              text=True, timeout=300)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as stop:  # argparse's usage errors
            code = stop.code if isinstance(stop.code, int) else 2
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


def _data(frames: dict[str, pl.DataFrame], suite: dict | None):
    data = build_audit_data(frames, columns=Columns(label="y", ids=["row_id"]))
    data.expectations = suite
    return data


def _suite_file(tmp_path: Path, expectations: list, name: str = "team-rules") -> Path:
    """A suite written the way GX users write one: ExpectationSuite.to_json_dict()."""
    from auditor.integrations.gx import ephemeral_context

    ephemeral_context(gx)
    suite = gx.ExpectationSuite(name=name)
    for e in expectations:
        suite.add_expectation(e)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(suite.to_json_dict()))
    return path


@pytest.fixture
def planted():
    """train clean; test: 25 of 200 rows with an unseen category 'z', x2 shifted by +3."""
    train, test = clean_frame(800, 1), clean_frame(200, 2, offset=10_000)
    cat = test["cat"].to_numpy().copy()
    cat[np.arange(0, 200, 8)] = "z"
    test = test.with_columns(pl.Series("cat", cat), pl.col("x2") + 3.0)
    return {"train": train, "test": test}


def test_each_failed_expectation_is_a_finding_with_gx_numbers(tmp_path, planted):
    E = gx.expectations
    path = _suite_file(tmp_path, [
        E.ExpectColumnValuesToBeInSet(column="cat", value_set=["a", "b", "c", "d"],
                                      mostly=0.95),
        E.ExpectColumnMeanToBeBetween(column="x2", min_value=-0.5, max_value=0.5,
                                      severity="warning"),
        E.ExpectColumnValuesToNotBeNull(column="x1"),
        E.ExpectColumnToExist(column="y"),
    ])
    data = _data(planted, read_suite(path))
    findings = Expectations().run(data)
    failed = [f for f in findings if f.severity != "info"]
    assert [(f.subject, f.splits, f.severity) for f in failed] == [
        ("cat", ["test"], "fail"), ("x2", ["test"], "warn")]
    cat, x2 = failed
    unseen = int((planted["test"]["cat"] == "z").sum())
    assert unseen == 25 and cat.count == unseen
    assert cat.value == pytest.approx(unseen / 200) and cat.threshold == pytest.approx(0.05)
    assert cat.evidence["unexpected_values"] == ["z"]
    assert "25 of 200 rows (12.5%)" in cat.message and "5.0% allowed" in cat.message
    assert x2.value == pytest.approx(float(np.mean(planted["test"]["x2"].to_numpy())))
    assert x2.evidence["expectation"] == "expect_column_mean_to_be_between"
    met = {f.splits[0]: f.count for f in findings if f.metric == "expectations_met"}
    assert met == {"train": 4, "test": 2}
    json.dumps([f.__dict__ for f in findings])  # JSON-serialisable as the report needs


def test_a_clean_split_passes_a_suite_it_meets(tmp_path):
    E = gx.expectations
    path = _suite_file(tmp_path, [E.ExpectColumnValuesToBeInSet(column="cat",
                                                                value_set=["a", "b", "c", "d"]),
                                  E.ExpectColumnValuesToBeBetween(column="y", min_value=0,
                                                                  max_value=1)])
    result = run_check(Expectations(), _data(
        {"train": clean_frame(300, 1), "test": clean_frame(100, 2, 5000)}, read_suite(path)))
    assert result.status == "pass"
    assert not [f for f in result.findings if f.severity != "info"]


def test_missing_columns_are_findings_and_a_legacy_suite_reads(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"expectation_suite_name": "legacy", "expectations": [
        {"expectation_type": "expect_column_values_to_not_be_null", "kwargs": {"column": "x1"}},
        {"expectation_type": "expect_column_values_to_be_unique",
         "kwargs": {"column": "not_there"}}]}))
    suite = read_suite(path)
    assert suite["name"] == "legacy"  # GX 0.x layout read too
    findings = Expectations().run(_data({"train": clean_frame(50, 1)}, suite))
    by_metric = {}
    for f in findings:
        by_metric.setdefault(f.metric, []).append(f)
    (error,) = by_metric["expectation_error"]
    assert error.subject == "not_there" and error.severity == "fail"
    assert by_metric["expectations_met"][0].count == 1


@pytest.mark.parametrize("entry, says", [
    ({"type": "expect_column_to_be_magic", "kwargs": {"column": "x1"}},
     "expectations[1] expect_column_to_be_magic: not an expectation of great_expectations"),
    ({"type": "expect_column_values_to_be_between",
      "kwargs": {"column": "x1", "min_value": "low", "max_value": 5}},
     "expectations[1] expect_column_values_to_be_between: "),
    ({"type": "expect_column_to_exist", "kwargs": {"column": "x1"}, "severity": "bogus"},
     "Invalid severity 'bogus'"),
])
def test_an_expectation_gx_cannot_build_is_exit_2_naming_it(tmp_path, write_splits, entry,
                                                            says):
    """A typo in the suite is the suite's fault, not the data's: no report, exit 2, one line
    (a fail finding would make a pipeline reject good data)."""
    paths = write_splits({"train": clean_frame(50, 1)})
    (tmp_path / "suite.json").write_text(json.dumps({"name": "s", "expectations": [
        {"type": "expect_column_to_exist", "kwargs": {"column": "x1"}}, entry]}))
    with pytest.raises(InputError, match=re.escape(says)):
        read_suite(tmp_path / "suite.json")
    (tmp_path / "audit.yaml").write_text(
        f"datasets: {{train: {paths['train'].name}}}\nexpectations: suite.json\n")
    res = _cli("run", str(tmp_path / "audit.yaml"), "--out", str(tmp_path / "out"),
               own_process=entry["type"] == "expect_column_to_be_magic")
    assert res.returncode == 2, res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert "suite.json" in line and says in line
    assert not (tmp_path / "out").exists()


def test_an_empty_suite_skips_with_the_reason_instead_of_crashing(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"name": "nothing-yet", "expectations": []}))
    result = run_check(Expectations(), _data({"train": clean_frame(50, 1)}, read_suite(path)))
    assert result.status == "skipped", result.error
    assert "'nothing-yet'" in result.summary and "holds no expectations" in result.summary


def test_gx_import_does_not_end_a_python_c_run():
    """pyspark (imported by GX when installed) exits 0 from a ``python -c`` program."""
    code = ("from auditor.integrations.gx import import_gx; gx = import_gx(); "
            "print('still running', gx.__version__)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0 and "still running" in res.stdout, res.stderr
    assert "FutureWarning" not in res.stderr


def test_no_suite_named_skips_with_the_reason():
    result = run_check(Expectations(), _data({"train": clean_frame(50, 1)}, None))
    assert result.status == "skipped" and "expectations: suite.json" in result.summary


def test_without_great_expectations_the_check_is_skipped_with_the_install_hint(
        tmp_path, monkeypatch):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"name": "s", "expectations": [
        {"type": "expect_column_to_exist", "kwargs": {"column": "x1"}}]}))
    monkeypatch.setitem(sys.modules, "great_expectations", None)  # import raises ImportError
    with pytest.raises(NotApplicable, match=r"pip install 'auditor\[gx\]'"):
        Expectations().run(_data({"train": clean_frame(50, 1)}, read_suite(path)))
    result = run_check(Expectations(), _data({"train": clean_frame(50, 1)}, read_suite(path)))
    assert result.status == "skipped" and "auditor[gx]" in result.summary


def test_a_malformed_suite_file_is_an_input_error(tmp_path, write_splits):
    paths = write_splits({"train": clean_frame(50, 1)})
    (tmp_path / "suite.json").write_text('{"expectations": {"oops": 1}}')
    (tmp_path / "audit.yaml").write_text(
        f"datasets: {{train: {paths['train'].name}}}\nexpectations: suite.json\n")
    with pytest.raises(InputError, match=r"suite.json: expected a Great Expectations suite"):
        open_splits(load_config(tmp_path / "audit.yaml"))
    res = _cli("run", str(tmp_path / "audit.yaml"), "--out", str(tmp_path / "out"),
               own_process=True)
    assert res.returncode == 2 and "Traceback" not in res.stderr


def test_validation_makes_no_network_call(tmp_path, planted, monkeypatch):
    path = _suite_file(tmp_path, [gx.expectations.ExpectColumnToExist(column="x1")])

    def no_network(*a, **k):
        raise AssertionError("network access")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    findings = Expectations().run(_data(planted, read_suite(path)))
    assert [f.count for f in findings] == [1, 1]


# ---------------------------------------------------------------------------------------------
# export-expectations
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_suite(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gxdemo")
    config = write_demo(folder)
    res = _cli("export-expectations", str(config), "--from", "train", "--out",
               str(folder / "suite.json"))
    assert res.returncode == 0, res.stderr
    with config.open("a") as fh:
        fh.write("expectations: suite.json\n")
    return folder, config


def test_the_exported_suite_passes_val_and_flags_only_the_planted_drift_in_test(demo_suite):
    folder, config = demo_suite
    doc = json.loads((folder / "suite.json").read_text())
    kinds = {(e["type"], e["kwargs"].get("column")) for e in doc["expectations"]}
    assert ("expect_column_values_to_be_in_set", "plan") in kinds
    assert ("expect_column_quantile_values_to_be_between", "age") in kinds
    assert ("expect_column_values_to_be_unique", "row_id") in kinds
    assert ("expect_column_quantile_values_to_be_between", "signup_ts") not in kinds  # time
    data = open_splits(load_config(config))
    findings = Expectations().run(data)
    failed = [(f.splits, f.subject, f.evidence["expectation"]) for f in findings
              if f.severity != "info"]
    # val is an honest sample of train's population: no false failure on any column; test
    # has monthly_spend scaled by 1.25 (auditor/loading/demo.py)
    assert failed == [(["test"], "monthly_spend", "expect_column_quantile_values_to_be_between")]
    (spend,) = [f for f in findings if f.subject == "monthly_spend"]
    import re

    assert re.search(r"q0\.5=[\d.]+ outside \[[\d.]+, [\d.]+\]", spend.message)
    observed = spend.evidence["observed_value"]
    assert observed["values"][2] == pytest.approx(
        float(data.splits["test"]["monthly_spend"].quantile(0.5)), rel=0.02)


def test_inferred_bands_follow_the_documented_formulas():
    rng = np.random.default_rng(0)
    x = rng.normal(size=4000)
    x[rng.random(4000) < 0.3] = np.nan
    df = pl.DataFrame({"x": x, "c": rng.choice(["u", "v"], 4000)})
    doc = infer_suite(df, name="t", null_slack=0.01, quantile_slack=0.05, min_eval_rows=1000)
    by = {(e["type"], e["kwargs"]["column"]): e["kwargs"] for e in doc["expectations"]}
    p = float(np.isnan(x).mean())
    w = 0.01 + 4 * np.sqrt(p * (1 - p) / 1000)
    assert by[("expect_column_values_to_not_be_null", "x")]["mostly"] == pytest.approx(
        1 - p - w, abs=1e-6)
    assert by[("expect_column_values_to_be_null", "x")]["mostly"] == pytest.approx(
        p - w, abs=1e-6)
    q = by[("expect_column_quantile_values_to_be_between", "x")]["quantile_ranges"]
    finite = np.sort(x[~np.isnan(x)])
    d = max(0.05, 4 * np.sqrt(0.25 / 1000))
    lo, hi = q["value_ranges"][q["quantiles"].index(0.5)]
    assert lo == pytest.approx(np.quantile(finite, 0.5 - d, method="lower"))
    assert hi == pytest.approx(np.quantile(finite, 0.5 + d, method="higher"))
    assert by[("expect_column_values_to_be_in_set", "c")]["value_set"] == ["u", "v"]


def test_export_expectations_usage_errors_exit_2(demo_suite, tmp_path):
    folder, config = demo_suite
    res = _cli("export-expectations", str(config), "--from", "holdout")
    assert res.returncode == 2 and "not a split" in res.stderr and "train, val, test" in res.stderr
    res = _cli("export-expectations")
    assert res.returncode == 2 and "--train PATH" in res.stderr
    res = _cli("export-expectations", str(config), "--min-eval-rows", "0")
    assert res.returncode == 2 and "--min-eval-rows must be an integer >= 1" in res.stderr
    res = _cli("export-expectations", "--train", str(folder / "data" / "nope.parquet")
               if (folder / "data").exists() else str(tmp_path / "nope.parquet"))
    assert res.returncode == 2 and "not found" in res.stderr


def test_a_split_holding_infinities_exports_a_json_suite_it_passes(tmp_path):
    """JSON has no infinity: an infinite quantile is an open band end (None), a two-valued
    column holding inf gets quantiles, not a value set."""
    from auditor.integrations.gx import SuiteRunner

    x = np.r_[np.linspace(0, 1, 180), [np.inf] * 15, [-np.inf] * 5]
    df = pl.DataFrame({"x": x, "two": [np.inf, 1.0] * 100})
    df.write_parquet(tmp_path / "inf.parquet")
    res = _cli("export-expectations", "--train", str(tmp_path / "inf.parquet"))
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    bands = {e["kwargs"]["column"]: e["kwargs"]["quantile_ranges"]["value_ranges"]
             for e in doc["expectations"]
             if e["type"] == "expect_column_quantile_values_to_be_between"}
    assert bands["x"][0][0] is None and bands["x"][-1][1] is None  # -inf / +inf ends
    d = max(0.05, 4 * np.sqrt(0.25 / 1000))
    assert bands["x"][2] == [pytest.approx(np.quantile(x, 0.5 - d, method="lower")),
                             pytest.approx(np.quantile(x, 0.5 + d, method="higher"))]
    assert "two" in bands
    runner = SuiteRunner({"name": "t", "expectations": doc["expectations"]})
    assert [r["expectation_config"]["type"] for r in runner.validate("train", df)
            if not r["success"]] == []


def test_export_from_a_file_writes_the_suite_to_stdout(tmp_path, write_splits):
    paths = write_splits({"train": clean_frame(300, 1)})
    res = _cli("export-expectations", "--train", str(paths["train"]), "--id", "row_id")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["name"] == "auditor-train"
    kinds = {(e["type"], e["kwargs"].get("column")) for e in doc["expectations"]}
    assert ("expect_column_values_to_be_unique", "row_id") in kinds
    assert ("expect_column_quantile_values_to_be_between", "row_id") not in kinds


def test_cli_run_with_the_exported_suite_fails_on_the_drifted_column_only(demo_suite, tmp_path):
    folder, config = demo_suite
    suite = tmp_path / "only.yaml"
    suite.write_text("checks:\n  schema.expectations: {}\n")
    res = _cli("run", str(config), "--suite", str(suite), "--out", str(tmp_path / "out"), "-q")
    assert res.returncode == 1, res.stderr
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    (check,) = doc["checks"]
    assert check["status"] == "fail"
    failed = [(f["subject"], f["splits"]) for f in check["findings"] if f["severity"] == "fail"]
    assert failed == [("monthly_spend", ["test"])]
    assert "monthly_spend" in (tmp_path / "out" / "report.html").read_text()


def test_the_python_api_takes_an_expectations_path(tmp_path, planted):
    import auditor

    path = _suite_file(tmp_path, [gx.expectations.ExpectColumnValuesToBeInSet(
        column="cat", value_set=["a", "b", "c", "d"])])
    suite = tmp_path / "only.yaml"
    suite.write_text("checks:\n  schema.expectations: {}\n")
    report = auditor.audit(train=planted["train"], test=planted["test"], label="y",
                           ids=["row_id"], expectations=path, suite=str(suite))
    (finding,) = [f for f in report.check("schema.expectations").findings
                  if f.severity == "fail"]
    assert (finding.subject, finding.count, finding.splits) == ("cat", 25, ["test"])


def test_a_suite_inferred_from_a_split_passes_that_split_whatever_its_dtypes():
    """Type lists must match what polars -> pandas gives GX: ints with nulls (float64), booleans
    with nulls (object), categoricals, dates, naive and zoned datetimes, lists, small ints."""
    from auditor.integrations.gx import SuiteRunner

    rng = np.random.default_rng(0)
    n = 500
    df = pl.DataFrame({
        "i": rng.integers(0, 100, n),
        "i_null": pl.Series([None if k % 7 == 0 else k for k in range(n)]),
        "f": rng.normal(size=n),
        "b": rng.random(n) < 0.3,
        "b_null": pl.Series([None if k % 5 == 0 else bool(k % 2) for k in range(n)]),
        "s": rng.choice(["x", "y", "z"], n),
        "s_null": pl.Series([None if k % 3 == 0 else f"v{k % 4}" for k in range(n)]),
        "cat": pl.Series(rng.choice(["p", "q"], n)).cast(pl.Categorical),
        "d": pl.Series(rng.integers(0, 1000, n)).cast(pl.Date),
        "t": pl.Series(rng.integers(0, 10**12, n)).cast(pl.Datetime("us")),
        "tz": pl.Series(rng.integers(0, 10**12, n)).cast(pl.Datetime("us", "UTC")),
        "l": [[k, 1] for k in range(n)],
        "u8": pl.Series(rng.integers(0, 5, n)).cast(pl.UInt8),
    })
    doc = infer_suite(df, name="self")
    runner = SuiteRunner({"name": "self", "expectations": doc["expectations"]})
    assert runner.unbuildable == []
    results = runner.validate("train", df)
    assert len(results) == len(doc["expectations"]) > 3 * df.width
    assert [r["expectation_config"] for r in results if not r["success"]] == []
