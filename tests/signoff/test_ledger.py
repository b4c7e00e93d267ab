"""The run ledger across runs, `auditor history` (opened in headless Chromium), and
`--baseline last`."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from auditor.cli import main
from auditor.signoff.ledger import Ledger, headline_metrics
from tests.browser import chromium, dump_dom
from tests.workflow_fixtures import planted, suite_file


def _config(tmp_path, frames, ledger=None):
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    paths = {}
    for name, df in frames.items():
        paths[name] = data / f"{name}.parquet"
        df.write_parquet(paths[name])
    cfg = tmp_path / "audit.yaml"
    doc = {"datasets": {k: str(v) for k, v in paths.items()}, "columns": {"label": "y"},
           "suite": str(suite_file(tmp_path))}
    if ledger:
        doc["ledger"] = ledger
    cfg.write_text(json.dumps(doc))
    return cfg


def _three_runs(tmp_path, capsys):
    """Nightly runs with a growing shift; the ledger named in audit.yaml (relative path)."""
    outs = []
    for night, shift in enumerate([0.0, 0.5, 1.5], start=1):
        cfg = _config(tmp_path, planted(shift=shift, copies=4 * night, seed=night),
                      ledger="reports/ledger.sqlite")
        out = tmp_path / "reports" / f"night-{night}"
        main(["run", str(cfg), "--out", str(out), "--quiet"])
        outs.append(out)
    capsys.readouterr()
    return tmp_path / "reports" / "ledger.sqlite", outs


def test_ledger_keeps_three_runs_with_checks_inputs_and_headline_metrics(tmp_path, capsys):
    ledger, outs = _three_runs(tmp_path, capsys)
    store = Ledger(str(ledger))
    runs = store.runs()
    assert len(runs) == 3
    assert [r["report_path"] for r in runs] == [str((o / "report.json").resolve())
                                                for o in outs]
    assert len({r["config_hash"] for r in runs}) == 1  # same config, different data
    assert len({r["inputs"]["test"]["hash"] for r in runs}) == 3
    docs = [json.loads((o / "report.json").read_text()) for o in outs]
    assert [r["status"] for r in runs] == [d["status"] for d in docs]
    checks = store.check_results()
    assert len(checks) == 3 * 3
    metrics = store.metrics()
    psi = {(m["run_id"], m["subject"]): m["value"] for m in metrics
           if m["metric"] == "psi"}
    for run, doc in zip(runs, docs):
        drift = next(c for c in doc["checks"] if c["id"] == "drift.features")
        chart = drift["findings"][0]["evidence"]["chart"]
        table = dict(zip(chart["labels"], chart["values"]))
        table.update({r["column"]: r["psi"] for r in drift["findings"][0]["evidence"]["features"]})
        assert {s: psi[(run["run_id"], s)] for s in table} == table  # every feature, every run
    dup = [m["value"] for m in metrics if m["metric"] == "duplicate_rows"]
    assert dup == pytest.approx([4 / 204, 8 / 208, 12 / 212])
    assert psi[(runs[2]["run_id"], "f0")] > psi[(runs[0]["run_id"], "f0")]


def test_history_page_draws_every_trend_without_script_errors(tmp_path, capsys):
    ledger, _ = _three_runs(tmp_path, capsys)
    assert main(["history", "--ledger", str(ledger), "--out", str(tmp_path / "hist")]) == 0
    page = tmp_path / "hist" / "history.html"
    assert capsys.readouterr().out.strip() == str(page)
    html = page.read_text()
    charts = html.count('<div class="chart"')
    assert charts >= 4 and "drift.features · psi" in html
    assert "inputs · rows" in html  # the rows per split, first
    assert html.index("inputs · rows") < html.index("drift.features · psi")
    assert "leakage.duplicates · duplicate_rows" in html
    assert "leakage.single_feature_auc · max_single_feature_auc" in html
    assert html.count("<tr><td class=\"num\">") == 3  # the runs table
    own = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    assert len(own) == 2  # plotly.js's loader once, then the page script
    assert len(html) < 1_000_000  # plotly.js's basic bundle, compressed (the full one: 4.8 MB)
    if chromium() is None:
        pytest.skip("needs a headless Chromium (apt-get install chromium)")
    run = dump_dom(page, tmp_path / "profile", 20_000)
    dom = run.stdout
    assert dom.count('data-drawn="1"') == charts, run.stderr[-2000:]
    assert dom.count('class="main-svg"') >= charts
    assert 'class="chart unavailable"' not in dom
    assert [line for line in run.stderr.splitlines() if ":CONSOLE" in line] == []


def test_history_without_a_ledger_is_exit_2(tmp_path, capsys):
    assert main(["history", "--ledger", str(tmp_path / "none.sqlite")]) == 2
    assert "ledger not found" in capsys.readouterr().err


def test_baseline_last_uses_the_ledgers_newest_run(tmp_path, capsys):
    ledger, outs = _three_runs(tmp_path, capsys)
    cfg = _config(tmp_path, planted(shift=1.5, copies=0, seed=3))
    out = tmp_path / "elsewhere" / "run"
    assert main(["run", str(cfg), "--out", str(out), "--quiet", "--ledger", str(ledger),
                 "--baseline", "last"]) == 1
    doc = json.loads((out / "report.json").read_text())
    assert doc["baseline"]["path"] == str((outs[2] / "report.json").resolve())
    dup = next(c for c in doc["checks"] if c["id"] == "leakage.duplicates")
    (resolved,) = [f for f in dup["findings"] if f.get("change")]
    assert resolved["change"] == "resolved" and resolved["severity"] == "info"
    assert resolved["count"] == 12 and resolved["metric"] == "duplicate_rows"
    assert len(Ledger(str(ledger)).runs()) == 4


def test_sqlalchemy_url_ledger_and_sqlite_path_imports_no_sqlalchemy(tmp_path, capsys):
    pytest.importorskip("sqlalchemy")
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    cfg = _config(tmp_path, planted())
    assert main(["run", str(cfg), "--out", str(tmp_path / "a"), "--quiet", "--ledger",
                 url]) == 1
    doc = json.loads((tmp_path / "a" / "report.json").read_text())
    store = Ledger(url)
    (run,) = store.runs()
    assert run["status"] == "fail" and run["inputs"]["train"]["rows"] == 600
    assert len(store.metrics()) == len(headline_metrics(doc))
    from sqlalchemy.pool import NullPool
    assert isinstance(store._engine.pool, NullPool)  # no idle connections left open
    code = ("import sys, json\nfrom auditor.signoff.ledger import Ledger\n"
            f"s = Ledger({str(tmp_path / 'plain.sqlite')!r}); s.append(json.load(open("
            f"{str(tmp_path / 'a' / 'report.json')!r})), None)\n"
            "print(len(s.runs()), 'sqlalchemy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == ["1", "False"], out.stderr


def test_unwritable_ledger_fails_before_the_run(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cfg = _config(tmp_path, planted())
    out = tmp_path / "never"
    assert main(["run", str(cfg), "--out", str(out), "--ledger",
                 str(blocker / "ledger.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "cannot open the ledger" in err and len(err.strip().splitlines()) == 1
    assert not (out / "report.json").exists()


def test_unusable_baseline_refuses_the_run_before_the_ledger_or_the_folder_exists(tmp_path,
                                                                                  capsys):
    cfg = _config(tmp_path, planted())
    bad = tmp_path / "garbage.json"
    bad.write_text("not json")
    out, ledger = tmp_path / "never", tmp_path / "l" / "ledger.sqlite"
    assert main(["run", str(cfg), "--out", str(out), "--ledger", str(ledger), "--baseline",
                 str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: not a readable report.json" in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and not ledger.parent.exists()


def test_baseline_last_on_a_first_run_is_a_note_not_an_error(tmp_path, capsys):
    cfg = _config(tmp_path, planted())
    out = tmp_path / "reports" / "first"
    assert main(["run", str(cfg), "--out", str(out), "--quiet", "--baseline", "last"]) == 1
    doc = json.loads((out / "report.json").read_text())
    assert "baseline" not in doc
    assert any(n.startswith("--baseline last: no earlier report") for n in doc["notes"])
    assert not any("change" in f for c in doc["checks"] for f in c["findings"])
    second = tmp_path / "reports" / "second"
    assert main(["run", str(cfg), "--out", str(second), "--quiet", "--baseline", "last"]) == 1
    doc = json.loads((second / "report.json").read_text())
    assert doc["baseline"]["path"] == str((out / "report.json").resolve())
    assert doc["baseline"]["new"] == 0 and doc["baseline"]["resolved"] == 0
    assert doc["baseline"]["persisting"] == 7


def test_cli_and_package_import_no_workflow_backends():
    code = ("import sys, auditor, auditor.cli; auditor.cli.build_parser(); print([m for m in "
            "('sqlalchemy', 'junitparser', 'dagster', 'sqlite3', 'jinja2') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_api_ledger_and_history_escape_data_strings(tmp_path):
    import auditor
    from auditor.signoff.history import render_history

    hostile = "<script>alert(1)</script>"
    ledger = tmp_path / "api.sqlite"
    for seed in (1, 2):  # two nights of other rows: the trends move, so they are drawn
        frames = {k: v.rename({"f0": hostile}) for k, v in planted(seed=seed).items()}
        auditor.audit(**frames, label="y", suite=str(suite_file(tmp_path)), ledger=ledger)
    store = Ledger(str(ledger))
    assert [r["report_path"] for r in store.runs()] == [None, None]
    assert {m["subject"] for m in store.metrics()} >= {hostile}
    page = render_history(store)
    body = page.replace(re.findall(r"<script>(.*?)</script>", page, flags=re.S)[0], "")
    assert hostile not in body
    assert "&amp;lt;script&amp;gt;alert(1)" in body  # escaped for plotly, then the attribute
    # the compressed plotly.js (a data block), the emptied loader tag and the page's own
    assert len(re.findall(r"<script", body)) == 3


def test_config_hash_ignores_data_paths_but_not_thresholds_and_history_marks_changes(tmp_path):
    from auditor.signoff.history import render_history
    from auditor.signoff.provenance import config_hash

    base = {"datasets": {"train": "/a/2026-11-23/train.parquet"}, "columns": {"label": "y"},
            "thresholds": {}, "waivers": []}
    nightly = {**base, "datasets": {"train": "/a/2026-11-24/train.parquet"}}
    tuned = {**base, "thresholds": {"drift.features": {"psi_fail_above": 0.3}}}
    assert config_hash(base) == config_hash(nightly) != config_hash(tuned)
    store = Ledger(str(tmp_path / "l.sqlite"))
    doc = {"started_at": "2026-11-24T00:00:00Z", "status": "pass", "checks": []}
    for cfg in (base, nightly, tuned):
        store.append({**doc, "config": cfg}, None)
    page = render_history(store)
    assert page.count('<span class="badge warn" title="roles, suite, thresholds or waivers '
                      'differ from the run before">changed</span>') == 1


def test_one_line_trend_keeps_its_legend_naming_the_subject_and_the_axis_says_utc():
    from auditor.signoff.history import trend_figures

    runs = [{"run_id": f"r{i}", "recorded_at": f"2026-11-2{i} 01:00:00.000000"}
            for i in range(1, 4)]
    metrics = [{"run_id": f"r{i}", "check_id": "leakage.single_feature_auc",
                "subject": "balance", "metric": "single_feature_auc", "splits": "train→test",
                "value": 0.9 + i / 100} for i in range(1, 4)]
    (trend,) = trend_figures(runs, metrics)
    fig = trend["figure"]
    assert fig["layout"]["showlegend"] is True
    assert [d["name"] for d in fig["data"]] == ["balance · train→test"]
    assert fig["data"][0]["y"] == pytest.approx([0.91, 0.92, 0.93])
    assert "UTC" in fig["layout"]["xaxis"]["title"]["text"]


_APPEND = """
import json, sys
from auditor.signoff.ledger import Ledger
doc = json.loads(sys.argv[2])
for i in range(int(sys.argv[3])):
    Ledger(sys.argv[1]).append({**doc, "started_at": f"2026-11-24T00:00:{i:02d}Z"}, None)
"""


def test_concurrent_appends_keep_every_run_whole_and_strings_are_parameters(tmp_path):
    """Processes appending at once (two nightly jobs) lose no run and write no half run; a
    subject that looks like SQL is stored as text (parameterised statements)."""
    ledger = tmp_path / "shared.sqlite"
    sql = "x'); DROP TABLE runs; --"
    doc = {"status": "fail", "duration_s": 1.0, "checks": [
        {"id": "drift.features", "status": "fail", "summary": sql, "findings": [
            {"severity": "fail", "metric": "psi", "subject": sql, "splits": ["train", "test"],
             "value": 0.5, "message": "m"}]},
        {"id": "leakage.duplicates", "status": "pass", "summary": "ok", "findings": []}]}
    procs = [subprocess.Popen([sys.executable, "-c", _APPEND, str(ledger), json.dumps(doc),
                               "12"]) for _ in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0] * 4
    store = Ledger(str(ledger))
    runs = store.runs()
    assert len(runs) == 48 and len({r["run_id"] for r in runs}) == 48
    per_run = {}
    for c in store.check_results():
        per_run[c["run_id"]] = per_run.get(c["run_id"], 0) + 1
    assert per_run == {r["run_id"]: 2 for r in runs}
    metrics = store.metrics()
    assert len(metrics) == 48 and {m["subject"] for m in metrics} == {sql}
    assert {c["summary"] for c in store.check_results()} == {sql, "ok"}


def test_a_database_password_never_reaches_messages_pages_or_reports(tmp_path, write_splits):
    from auditor.errors import InputError
    from auditor.signoff.history import render_history
    from auditor.signoff.ledger import shown

    assert shown("postgresql+psycopg://audit:s3cret@db:5432/runs") == \
        "postgresql+psycopg://audit:***@db:5432/runs"
    assert shown("postgresql://audit@db/runs") == "postgresql://audit@db/runs"
    assert shown("reports/ledger.sqlite") == "reports/ledger.sqlite"
    with pytest.raises(InputError) as err:
        Ledger("sqlite+nodriver://audit:s3cret@db/runs")
    assert "s3cret" not in str(err.value) and "audit:***@db" in str(err.value)
    store = Ledger(str(tmp_path / "l.sqlite"))
    store.append({"started_at": "2026-11-24T00:00:00Z", "status": "pass", "checks": []}, None)

    class Shared:  # the same runs, named as a shared database would be
        target = "postgresql://audit:s3cret@db/runs"
        runs, check_results, metrics = store.runs, store.check_results, store.metrics

    page = render_history(Shared())
    assert "s3cret" not in page and "postgresql://audit:***@db/runs" in page
    paths = write_splits(planted())
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(json.dumps({"datasets": {k: str(v) for k, v in paths.items()},
                               "columns": {"label": "y"}, "suite": str(suite_file(tmp_path)),
                               "ledger": "postgresql://audit:s3cret@db/runs"}))
    from auditor.api import run_audit
    from auditor.core.config import load_config

    report = run_audit(load_config(cfg))  # the ledger itself is opened by the CLI only
    assert report.config["ledger"] == "postgresql://audit:***@db/runs"
    assert "s3cret" not in report.to_json()


def test_history_links_each_kept_report_relative_to_the_page(tmp_path, capsys):
    ledger, outs = _three_runs(tmp_path, capsys)
    (outs[1] / "report.html").unlink()  # a report that was not kept is not linked
    odd = tmp_path / "reports" / "javascript:alert(1)"  # a folder name is never a URL scheme
    odd.mkdir()
    for name in ("report.json", "report.html"):
        (odd / name).write_bytes((outs[0] / name).read_bytes())
    Ledger(str(ledger)).append(json.loads((odd / "report.json").read_text()),
                               odd / "report.json")
    assert main(["history", "--ledger", str(ledger), "--out",
                 str(tmp_path / "reports" / "history")]) == 0
    html = (tmp_path / "reports" / "history" / "history.html").read_text()
    hrefs = re.findall(r'<a href="([^"]*)">report.html</a>', html)
    assert sorted(hrefs) == ["../javascript%3Aalert%281%29/report.html",
                             "../night-1/report.html", "../night-3/report.html"]


def test_history_leaves_series_that_never_moved_out_of_the_charts(tmp_path, capsys):
    """Two runs on the same data: every statistic holds one value, so no trend is drawn but
    the rows per split; the unchanged series are named in one line instead."""
    from auditor.signoff.history import trend_figures

    cfg = _config(tmp_path, planted(), ledger="reports/ledger.sqlite")
    for night in (1, 2):
        main(["run", str(cfg), "--out", str(tmp_path / "reports" / f"n{night}"), "--quiet"])
    store = Ledger(str(tmp_path / "reports" / "ledger.sqlite"))
    figures = trend_figures(store.runs(), store.metrics())
    drawn = [(t["check"], t["metric"]) for t in figures if not t.get("flat")]
    flat = [(t["check"], t["metric"]) for t in figures if t.get("flat")]
    assert drawn == [("inputs", "rows")]
    assert ("drift.features", "psi") in flat and len(flat) >= 3
    assert main(["history", "--ledger", str(tmp_path / "reports" / "ledger.sqlite"), "--out",
                 str(tmp_path / "h")]) == 0
    page = (tmp_path / "h" / "history.html").read_text()
    assert page.count('<div class="chart"') == 1
    assert "Unchanged in every run, not drawn:" in page and "drift.features · psi" in page


def _doc(started, value, threshold, *, extra_threshold=None):
    findings = [{"severity": "warn", "metric": "duplicate_rows", "subject": None,
                 "splits": ["train", "test"], "value": value, "threshold": threshold,
                 "count": 1, "message": "m", "evidence": {}}]
    if extra_threshold is not None:  # a second subject with a threshold of its own
        findings.append(dict(findings[0], subject="x", threshold=extra_threshold))
    return {"started_at": started, "status": "warn", "duration_s": 1.0,
            "checks": [{"id": "leakage.duplicates", "status": "warn", "summary": "s",
                        "findings": findings}]}


def test_thresholds_are_kept_and_drawn_as_lines_even_in_an_older_ledger(tmp_path):
    import sqlite3

    from auditor.signoff.history import trend_figures

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)  # a ledger written before thresholds were recorded
    con.execute("CREATE TABLE metrics (run_id VARCHAR(64) NOT NULL, check_id VARCHAR(128) "
                "NOT NULL, subject TEXT NOT NULL, metric VARCHAR(128) NOT NULL, splits TEXT "
                "NOT NULL, value FLOAT, severity VARCHAR(8), waived INTEGER)")
    con.execute("INSERT INTO metrics VALUES ('old', 'leakage.duplicates', '', 'duplicate_rows',"
                " 'train→test', 0.5, 'fail', 0)")
    con.commit()
    con.close()
    store = Ledger(str(path))
    for i, (value, threshold) in enumerate([(0.01, 0.02), (0.03, 0.02), (0.04, 0.05)]):
        store.append(_doc(f"2026-01-0{i + 1}T00:00:00Z", value, threshold), None)
    rows = store.metrics()
    assert [m["threshold"] for m in rows] == [None, 0.02, 0.02, 0.05]  # the old row: NULL
    figure = next(t for t in trend_figures(store.runs(), rows)
                  if t["metric"] == "duplicate_rows")["figure"]
    when = [r["recorded_at"] for r in store.runs()]
    lines = {d["name"]: (d["x"], d["y"]) for d in figure["data"] if d["name"].startswith("thr")}
    assert lines == {"threshold 0.02": (when[:2], [0.02, 0.02]),  # a config change: one
                     "threshold 0.05": (when[2:], [0.05])}        # line ends, another starts
    # a night stating a warn and a fail threshold of one metric: a line for each
    store.append(_doc("2026-01-04T00:00:00Z", 0.02, 0.05, extra_threshold=0.3), None)
    figure = next(t for t in trend_figures(store.runs(), store.metrics())
                  if t["metric"] == "duplicate_rows")["figure"]
    names = [d["name"] for d in figure["data"] if d["name"].startswith("thr")]
    assert names == ["threshold 0.02", "threshold 0.05", "threshold 0.3"]


def test_an_older_ledger_that_cannot_gain_the_column_is_still_read_and_written(tmp_path,
                                                                               monkeypatch):
    """A read-only role on a shared database cannot ALTER: the threshold reads NULL and a run
    is appended without it, instead of the ledger becoming unusable."""
    import sqlite3

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE metrics (run_id VARCHAR(64) NOT NULL, check_id VARCHAR(128) "
                "NOT NULL, subject TEXT NOT NULL, metric VARCHAR(128) NOT NULL, splits TEXT "
                "NOT NULL, value FLOAT, severity VARCHAR(8), waived INTEGER)")
    con.commit()
    con.close()
    execute = Ledger._execute

    def refuse_alter(self, statements):
        if any(sql.startswith("ALTER") for sql, _ in statements):
            raise sqlite3.OperationalError("permission denied")
        return execute(self, statements)

    monkeypatch.setattr(Ledger, "_execute", refuse_alter)
    store = Ledger(str(path))
    assert store.absent == {"threshold"}
    store.append(_doc("2026-01-01T00:00:00Z", 0.01, 0.02), None)
    assert [(m["value"], m["threshold"]) for m in store.metrics()] == [(0.01, None)]
    monkeypatch.setattr(Ledger, "_execute", execute)  # a later run with the rights: migrated
    assert Ledger(str(path)).absent == set()
    assert [m["threshold"] for m in Ledger(str(path)).metrics()] == [None]


def test_a_subject_missing_from_a_night_is_a_gap_in_its_line(tmp_path):
    from auditor.signoff.history import trend_figures

    def doc(day, subjects):
        return {"started_at": f"2026-01-0{day}T00:00:00Z", "status": "warn", "duration_s": 1.0,
                "checks": [{"id": "leakage.single_feature_auc", "status": "warn",
                            "summary": "s", "findings": [
                                {"severity": "warn", "metric": "single_feature_auc",
                                 "subject": s, "splits": ["train", "test"], "value": v,
                                 "threshold": 0.9, "count": 1, "message": "m", "evidence": {}}
                                for s, v in subjects]}]}

    store = Ledger(str(tmp_path / "l.sqlite"))
    for day, subjects in enumerate([[("a", 0.91), ("b", 0.93)], [("a", 0.92)],
                                    [("a", 0.95), ("b", 0.94)], [("c", 0.96)]], start=1):
        store.append(doc(day, subjects), None)
    figure = next(t for t in trend_figures(store.runs(), store.metrics())
                  if t["metric"] == "single_feature_auc")["figure"]
    lines = {d["name"].split(" ·")[0]: d["y"] for d in figure["data"]
             if not d["name"].startswith("threshold")}
    # b had no finding on night 2 and 4, a none on night 4; c starts on night 4
    assert lines == {"a": [0.91, 0.92, 0.95, None], "b": [0.93, None, 0.94, None], "c": [0.96]}
    drawn = [d for d in figure["data"] if not d["name"].startswith("threshold")]
    assert len(drawn) == 3 and all(d["connectgaps"] is False for d in drawn)
    # a night on which the check ran and flagged nothing: a gap in every line
    store.append({**doc(5, []), "checks": [{"id": "leakage.single_feature_auc",
                                            "status": "pass", "summary": "s",
                                            "findings": []}]}, None)
    ran = {}
    for c in store.check_results():
        ran.setdefault(c["check_id"], set()).add(c["run_id"])
    figure = next(t for t in trend_figures(store.runs(), store.metrics(), ran)
                  if t["metric"] == "single_feature_auc")["figure"]
    lines = {d["name"].split(" ·")[0]: d["y"] for d in figure["data"]
             if not d["name"].startswith("threshold")}
    assert lines == {"a": [0.91, 0.92, 0.95, None, None], "b": [0.93, None, 0.94, None, None],
                     "c": [0.96, None]}
