"""docs/recipes: the exact commands of the GitHub Actions workflow and the Airflow DAG,
extracted from the recipe files and run; the Dagster asset check run in-process."""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import clean_frame
from tests.workflow_fixtures import planted, suite_file

RECIPES = Path(__file__).resolve().parents[1] / "docs" / "recipes"
BIN = str(Path(sys.executable).parent)


def _project(folder: Path, frames) -> Path:
    """audit.yaml and its data in ``folder`` (as a user's repository would hold them)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, df in frames.items():
        df.write_parquet(folder / f"{name}.parquet")
    cfg = folder / "audit.yaml"
    cfg.write_text(json.dumps({"datasets": {k: f"{k}.parquet" for k in frames},
                               "columns": {"label": "y", "ids": ["row_id"]} if "row_id" in
                               frames["train"].columns else {"label": "y"},
                               "suite": str(suite_file(folder))}))
    return cfg


def _clean():
    return {"train": clean_frame(800, 1), "test": clean_frame(200, 2, offset=10_000)}


def _bash(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), **env}
    full.pop("CI", None)
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=600)


def _runs(ledger: Path) -> list[tuple[str]]:
    with sqlite3.connect(ledger) as con:
        return con.execute("SELECT status FROM runs ORDER BY recorded_at").fetchall()


def test_github_actions_audit_step_gates_on_the_exit_code_and_keeps_reports(tmp_path):
    workflow = yaml.safe_load((RECIPES / "github-actions.yml").read_text())
    steps = workflow["jobs"]["audit"]["steps"]
    (audit,) = [s for s in steps if s.get("id") == "audit"]
    kept = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
    assert kept and kept[0]["if"] == "always()" and kept[0]["with"]["path"] == "reports/"
    history = [s for s in steps if "auditor history" in s.get("run", "")]
    (latest,) = [s for s in steps if s.get("id") == "latest"]
    cached = [s["with"]["path"].split() for s in steps
              if s.get("uses", "").startswith("actions/cache/")]
    assert cached == [["reports/ledger.sqlite", "reports/latest/report.json"]] * 2
    results = {}
    repo, cache = tmp_path / "repo", {}
    for run_id, frames in (("1", planted()), ("2", _clean())):
        shutil.rmtree(repo, ignore_errors=True)  # every job starts from a fresh checkout
        _project(repo, frames)
        for path, data in cache.items():  # what actions/cache/restore brings back
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_bytes(data)
        script = audit["run"].replace("${{ github.run_id }}", run_id)
        summary = tmp_path / f"summary-{run_id}.md"
        results[run_id] = _bash(script, repo, GITHUB_STEP_SUMMARY=str(summary))
        assert (repo / "reports" / f"run-{run_id}" / "report.json").is_file()
        assert summary.read_text().startswith("## ")
        assert (repo / "reports" / "junit.xml").is_file()
        assert _bash(latest["run"].replace("${{ github.run_id }}", run_id), repo).returncode == 0
        assert (repo / "reports" / "latest" / "report.json").read_bytes() == \
            (repo / "reports" / f"run-{run_id}" / "report.json").read_bytes()
        cache = {path: (repo / path).read_bytes() for path in cached[0]}  # cache/save
    assert results["1"].returncode == 1, results["1"].stderr  # the job fails on findings
    assert results["2"].returncode == 0, results["2"].stderr  # and passes on clean splits
    second = json.loads((repo / "reports" / "run-2" / "report.json").read_text())
    # --baseline last in a new job: the report the cache carried over from job 1
    assert second["baseline"]["path"] == str((repo / "reports" / "latest" / "report.json")
                                             .resolve())
    assert second["baseline"]["resolved"] > 0 and second["baseline"]["status"] == "fail"
    assert _runs(repo / "reports" / "ledger.sqlite") == [("fail",), ("pass",)]
    page = _bash(history[0]["run"], repo)
    assert page.returncode == 0 and (repo / "reports" / "history" / "history.html").is_file()


def _airflow_command() -> str:
    tree = ast.parse((RECIPES / "airflow_dag.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "AUDIT_COMMAND" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("AUDIT_COMMAND not found in the Airflow recipe")


def test_airflow_task_command_fails_the_task_on_findings_and_keeps_reports(tmp_path):
    from jinja2 import Template

    command = _airflow_command()
    source = (RECIPES / "airflow_dag.py").read_text()
    assert "bash_command=AUDIT_COMMAND" in source and "audit >> train" in source
    codes = []
    for ds, frames in (("2026-11-23", _clean()), ("2026-11-24", planted())):
        _project(tmp_path, frames)
        rendered = Template(command).render(ds=ds)  # what Airflow's templating produces
        done = _bash(rendered, tmp_path)
        codes.append(done.returncode)
        assert (tmp_path / "reports" / ds / "report.html").is_file()
        assert (tmp_path / "reports" / ds / "junit.xml").is_file()
        assert (tmp_path / "reports" / ds / "summary.md").is_file()
    assert codes == [0, 1]  # BashOperator: exit 0 succeeds, any other code fails the task
    doc = json.loads((tmp_path / "reports" / "2026-11-24" / "report.json").read_text())
    assert doc["baseline"]["path"].endswith("2026-11-23/report.json")
    assert _runs(tmp_path / "reports" / "ledger.sqlite") == [("pass",), ("fail",)]


def _dagster_recipe():
    spec = importlib.util.spec_from_file_location("dagster_recipe",
                                                  RECIPES / "dagster_asset_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("clean", [True, False], ids=["clean", "planted"])
def test_dagster_blocking_asset_check_runs_the_audit(tmp_path, monkeypatch, clean):
    dagster = pytest.importorskip("dagster")
    cfg = _project(tmp_path / "data", _clean() if clean else planted())
    monkeypatch.setenv("AUDIT_CONFIG", str(cfg))
    monkeypatch.setenv("AUDIT_REPORTS", str(tmp_path / "reports"))
    recipe = _dagster_recipe()
    result = dagster.materialize([recipe.training_splits, recipe.audit_training_splits],
                                 instance=dagster.DagsterInstance.ephemeral(),
                                 raise_on_error=False)
    (evaluation,) = result.get_asset_check_evaluations()
    assert evaluation.passed is clean
    assert evaluation.metadata["exit_code"].value == (0 if clean else 1)
    report = Path(evaluation.metadata["report"].value)
    assert report.is_file() and report.parent.name == result.run_id
    failed = evaluation.metadata["failed_checks"].value
    assert failed == ([] if clean else ["leakage.duplicates", "leakage.single_feature_auc",
                                        "drift.features"])
    assert _runs(tmp_path / "reports" / "ledger.sqlite") == [("pass" if clean else "fail",)]
