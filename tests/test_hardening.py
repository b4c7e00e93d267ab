"""The bad-input catalogue: each input gets exit 2 with one line naming the file/column and
what was expected, or — where the audit can proceed — a complete report in which no check
crashed. Plus the properties: inputs never modified, determinism, atomic reports."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np
import polars as pl
import pytest

from auditor import cli
from tests.conftest import clean_frame


def _write(tmp: Path, name: str, df: pl.DataFrame) -> Path:
    path = tmp / name
    if name.endswith(".csv"):
        df.write_csv(path)
    elif name.endswith(".jsonl"):
        df.write_ndjson(path)
    else:
        df.write_parquet(path)
    return path


def _run(capsys, *args: str) -> tuple[int, str]:
    code = cli.main(["run", *map(str, args), "--quiet"])
    return code, capsys.readouterr().err


def _base(tmp: Path) -> dict[str, Path]:
    return {"train": _write(tmp, "train.parquet", clean_frame(300, 1)),
            "test": _write(tmp, "test.parquet", clean_frame(100, 2, 5000))}


# --- inputs that must be refused: exit 2, one line, naming what is wrong --------------------

def _missing(tmp):
    return ["--train", tmp / "absent.parquet", "--test", tmp / "absent.parquet"], \
        "absent.parquet: file not found"


def _empty_dir(tmp):
    (tmp / "d").mkdir()
    return ["--train", tmp / "d", "--test", tmp / "d"], "directory contains no Parquet files"


def _corrupt_parquet(tmp):
    (tmp / "c.parquet").write_bytes(b"PAR1" + b"\0" * 100)
    return ["--train", tmp / "c.parquet", "--test", tmp / "c.parquet"], \
        "c.parquet: cannot read as Parquet"


def _truncated_csv(tmp):
    p = tmp / "t.csv"
    p.write_text("a,b,y\n1,2,0\n3,4,1\n5,6")
    return ["--train", p, "--test", p, "--label", "y"], "t.csv: the file looks truncated"


def _wrong_delimiter(tmp):
    p = tmp / "s.csv"
    p.write_text("a;b;y\n1;2;0\n3;4;1\n")
    return ["--train", p, "--test", p], "s.csv: read one column named 'a;b;y'"


def _non_utf8_csv(tmp):
    p = tmp / "l.csv"
    p.write_bytes("a,b,y\n1,caf\xe9,0\n".encode("latin-1"))
    return ["--train", p, "--test", p], "l.csv: cannot read as CSV: invalid utf-8"


def _non_utf8_jsonl(tmp):
    p = tmp / "l.jsonl"
    p.write_bytes(b'{"a": 1, "b": "caf\xe9"}\n')
    return ["--train", p, "--test", p], "l.jsonl: cannot read as JSON Lines"


def _empty_split(tmp):
    b = _base(tmp)
    e = _write(tmp, "empty.parquet", clean_frame(10, 3).head(0))
    return ["--train", b["train"], "--test", e, "--label", "y"], \
        "empty.parquet: split 'test' has 0 rows"


def _duplicate_names(tmp):
    p = tmp / "dup.csv"
    p.write_text("a,a,y\n1,2,0\n3,4,1\n")
    return ["--train", p, "--test", p], "dup.csv: duplicate column name 'a'"


def _label_missing(tmp):
    b = _base(tmp)
    t = _write(tmp, "nolabel.parquet", clean_frame(50, 4).drop("y"))
    return ["--train", b["train"], "--test", t, "--label", "y"], \
        "nolabel.parquet: label column 'y' not found"


def _time_not_dates(tmp):
    df = clean_frame(50, 5).with_columns(ts=pl.lit("yesterday"))
    p = _write(tmp, "ts.parquet", df)
    return ["--train", p, "--test", p, "--time", "ts"], \
        "ts.parquet: time column 'ts' holds text that is not a date/time"


def _bad_yaml(tmp):
    p = tmp / "audit.yaml"
    p.write_text("datasets: {train: a.parquet\ncolumns: [\n")
    return [p], "audit.yaml: invalid YAML at line"


def _unknown_key(tmp):
    p = tmp / "audit.yaml"
    p.write_text("datasets: {train: a.parquet}\ncolums: {label: y}\n")
    return [p], "colums: unknown key (did you mean 'columns'?)"


def _unknown_check(tmp):
    b = _base(tmp)
    suite = tmp / "suite.yaml"
    suite.write_text("checks:\n  leakage.dupes: {}\n")
    return ["--train", b["train"], "--test", b["test"], "--suite", suite], \
        "unknown check id 'leakage.dupes' (did you mean 'leakage.duplicates'?)"


def _threshold_type(tmp):
    b = _base(tmp)
    p = tmp / "audit.yaml"
    p.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                 "thresholds: {leakage.duplicates: {fail_above: lots}}\n")
    return [p], "leakage.duplicates.fail_above: Input should be a valid number"


def _unwritable_out(tmp):
    b = _base(tmp)
    (tmp / "f").write_text("")
    return ["--train", b["train"], "--test", b["test"], "--out", tmp / "f" / "x"], \
        "output directory is not writable"


REFUSED: list[Callable] = [_missing, _empty_dir, _corrupt_parquet, _truncated_csv,
                           _wrong_delimiter, _non_utf8_csv, _non_utf8_jsonl, _empty_split,
                           _duplicate_names, _label_missing, _time_not_dates,
                           _bad_yaml, _unknown_key, _unknown_check, _threshold_type,
                           _unwritable_out]


@pytest.mark.parametrize("case", REFUSED, ids=lambda f: f.__name__.strip("_"))
def test_bad_input_is_refused_with_one_clear_line(case, tmp_path, capsys):
    args, expected = case(tmp_path)
    if "--out" not in map(str, args):
        args = [*args, "--out", tmp_path / "out"]
    code, err = _run(capsys, *args)
    assert code == 2, err
    assert err.startswith("auditor: error: ") and err.count("\n") == 1, err
    assert expected in err
    assert "Traceback" not in err
    assert not (tmp_path / "out" / "report.json").exists()


# --- inputs the audit survives: a complete report, no crashed check -------------------------

def _frames_missing_column():
    return clean_frame(300, 1), clean_frame(100, 2, 5000).drop("x2"), {}


def _frames_incompatible_dtype():
    return clean_frame(300, 1), clean_frame(100, 2, 5000).with_columns(
        pl.col("x2").cast(pl.String)), {}


def _frames_single_class():
    return clean_frame(300, 1).with_columns(y=pl.lit(1)), \
        clean_frame(100, 2, 5000).with_columns(y=pl.lit(1)), {}


def _frames_label_nulls():
    tr = clean_frame(300, 1)
    return tr.with_columns(pl.when(pl.col("row_id") % 7 == 0).then(None).otherwise(pl.col("y"))
                           .alias("y")), clean_frame(100, 2, 5000), {}


def _frames_odd_values():
    def odd(df):
        n = df.height
        return df.with_columns(
            all_null=pl.lit(None, dtype=pl.Float64), constant=pl.lit(3.0),
            weird=pl.Series([float("nan"), float("inf"), float("-inf"), 1.0] * (n // 4)
                            + [0.0] * (n % 4)),
            nested=pl.Series([[1, 2]] * n), st=pl.struct(a=pl.col("x1"), b=pl.col("cat")))
    return odd(clean_frame(300, 1)), odd(clean_frame(100, 2, 5000)), {}


def _frames_mixed_tz():
    tr = clean_frame(300, 1).with_columns(
        ts=pl.datetime_range(pl.datetime(2025, 1, 1), pl.datetime(2025, 6, 1), "12h",
                             eager=True).head(300))
    te = clean_frame(100, 2, 5000).with_columns(
        ts=pl.datetime_range(pl.datetime(2025, 7, 1, time_zone="Europe/Paris"),
                             pl.datetime(2025, 9, 1, time_zone="Europe/Paris"), "12h",
                             eager=True).head(100))
    return tr, te, {"time": "ts"}


def _frames_time_strings():
    tr, te, _ = _frames_mixed_tz()
    return (tr.with_columns(pl.col("ts").dt.strftime("%Y-%m-%dT%H:%M:%S")),
            te.with_columns(pl.col("ts").dt.convert_time_zone("UTC")
                            .dt.strftime("%Y-%m-%dT%H:%M:%SZ")), {"time": "ts"})


def _frames_hostile_names():
    names = ["<script>alert(1)</script>", 'quo"te\'s', "new\nline", "emoji 😀", "a&b"]
    def host(df):
        return df.with_columns(*[pl.lit(f"{n}-{i}").alias(n) if i % 2 else
                                 (pl.col("x1") * i).alias(n) for i, n in enumerate(names)])
    return host(clean_frame(300, 1)), host(clean_frame(100, 2, 5000)), {}


def _frames_high_cardinality():
    n = 200_000
    tr = pl.DataFrame({"key": [f"k{i}" for i in range(n)], "x": np.arange(n) % 97,
                       "y": np.arange(n) % 2})
    te = pl.DataFrame({"key": [f"k{i}" for i in range(n, n + 50_000)],
                       "x": np.arange(50_000) % 89, "y": np.arange(50_000) % 2})
    return tr, te, {}


def _frames_many_columns():
    rng = np.random.default_rng(0)
    def wide(n, seed):
        r = np.random.default_rng(seed)
        return pl.DataFrame(r.normal(size=(n, 2000)),
                            schema=[f"c{i}" for i in range(2000)]).with_columns(
            y=pl.Series(r.integers(0, 2, n)))
    del rng
    return wide(200, 1), wide(80, 2), {}


SURVIVED = [_frames_missing_column, _frames_incompatible_dtype, _frames_single_class,
            _frames_label_nulls, _frames_odd_values, _frames_mixed_tz, _frames_time_strings,
            _frames_hostile_names, _frames_high_cardinality, _frames_many_columns]


@pytest.mark.parametrize("case", SURVIVED, ids=lambda f: f.__name__.strip("_"))
def test_survivable_input_gives_a_complete_report(case, tmp_path, capsys):
    train, test, extra = case()
    p_tr, p_te = _write(tmp_path, "train.parquet", train), _write(tmp_path, "test.parquet",
                                                                     test)
    args = ["--train", p_tr, "--test", p_te, "--label", "y", "--out", tmp_path / "o"]
    if extra.get("time"):
        args += ["--time", extra["time"]]
    if "row_id" in train.columns:
        args += ["--id", "row_id"]
    code, err = _run(capsys, *args)
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    crashed = {c["id"]: c["error"] for c in doc["checks"] if c["status"] == "error"}
    assert not crashed, crashed
    assert code in (0, 1), err
    html = (tmp_path / "o" / "report.html").read_text()
    assert "<script>alert(1)</script>" not in html


def test_single_class_label_skips_label_checks_with_a_reason(tmp_path, capsys):
    train, test, _ = _frames_single_class()
    p_tr, p_te = _write(tmp_path, "a.parquet", train), _write(tmp_path, "b.parquet", test)
    _run(capsys, "--train", p_tr, "--test", p_te, "--label", "y", "--out", tmp_path / "o")
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    for c in doc["checks"]:
        if c["id"] in ("leakage.single_feature_auc", "leakage.feature_label_correlation"):
            assert c["status"] == "skipped" and "class" in c["summary"], c


# --- properties ---------------------------------------------------------------------------

def _digest(paths):
    return {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths}


def test_inputs_are_never_modified_and_runs_are_deterministic(tmp_path, capsys):
    from auditor.loading.demo import write_demo
    cfg = write_demo(tmp_path / "data")
    files = sorted((tmp_path / "data").iterdir())
    before = _digest(files)
    docs = []
    for k in range(2):
        code = cli.main(["run", str(cfg), "--out", str(tmp_path / f"o{k}"), "--quiet"])
        assert code == 1
        doc = json.loads((tmp_path / f"o{k}" / "report.json").read_text())
        doc.pop("started_at"), doc.pop("duration_s")
        for c in doc["checks"]:
            c.pop("duration_s")
        docs.append(json.dumps(doc, sort_keys=True))
    assert _digest(files) == before
    assert docs[0] == docs[1]


def test_interrupted_render_leaves_no_report_html(tmp_path, monkeypatch, capsys):
    import auditor.report.render as render

    def interrupted(doc):
        raise KeyboardInterrupt

    monkeypatch.setattr(render, "render_html", interrupted)
    b = _base(tmp_path)
    code = cli.main(["run", "--train", str(b["train"]), "--test", str(b["test"]), "--out",
                     str(tmp_path / "o"), "--quiet"])
    assert code == 130
    assert not (tmp_path / "o" / "report.html").exists()
    assert not [p for p in (tmp_path / "o").iterdir() if p.name.startswith(".report")]


def test_data_beyond_the_memory_budget_are_sampled_and_the_report_says_so(tmp_path, capsys):
    train = clean_frame(20_000, 1)
    test = pl.concat([clean_frame(5_000, 2, 50_000), train.head(1000)
                      .with_columns(pl.col("row_id") + 90_000)])
    b = {"train": _write(tmp_path, "train.parquet", train),
         "test": _write(tmp_path, "test.parquet", test)}
    from auditor.loading.data import WORKING_SET_FACTOR, estimate_bytes
    need = WORKING_SET_FACTOR * sum(estimate_bytes(p) for p in b.values())
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   "columns: {label: y, ids: [row_id]}\n"
                   f"memory_budget_gb: {need / 2 / 1024**3!r}\n")
    code = cli.main(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"])
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    assert code == 1
    assert "seeded uniform sample of 50.0% of its rows" in doc["notes"][0]
    rows = doc["datasets"]["train"]["rows"]
    assert 9_000 < rows < 11_000
    assert "seeded uniform sample" in (tmp_path / "o" / "report.html").read_text()


# =============================================================================================
# Issue 19, part 1 (E1 "hardening-io"): traversal, lost inputs, hangs, misleading messages.
# Each test reproduces one case of the second bad-input catalogue.
# =============================================================================================

CHEAP_SUITE = "checks:\n  leakage.duplicates: {}\n  schema.consistency: {}\n"


def _cheap_suite(tmp: Path) -> Path:
    p = tmp / "cheap.yaml"
    p.write_text(CHEAP_SUITE)
    return p


def _one_line_error(code: int, err: str, expected: str) -> None:
    assert code == 2, err
    assert err.startswith("auditor: error: ") and err.count("\n") == 1, err
    assert expected in err, err
    assert "Traceback" not in err


def _cli_or_hang(*args: object, timeout: float = 120) -> tuple[int, str]:
    """The CLI in a subprocess: a read that blocks (opening a FIFO waits for a writer forever,
    inside native code no signal interrupts) fails the test instead of hanging the suite."""
    import subprocess
    import sys

    try:
        r = subprocess.run([sys.executable, "-m", "auditor", *map(str, args), "--quiet"],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"auditor {' '.join(map(str, args))} blocked for {timeout:.0f} s")
    return r.returncode, r.stderr


# --- security / data loss ---------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../escaped", "a/b", "..", ".hidden", "", "x" * 65, "te st"])
def test_split_name_that_is_not_a_plain_name_is_refused(tmp_path, capsys, name):
    b = _base(tmp_path)
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(json.dumps({"datasets": {"train": str(b["train"]), name: str(b["test"])}}))
    code, err = _run(capsys, cfg, "--out", tmp_path / "o")
    _one_line_error(code, err, "is not a plain name")
    assert not (tmp_path / "escaped.parquet").exists()
    assert not (tmp_path / "o").exists()


def test_written_paths_are_proven_inside_their_folder(tmp_path):
    from auditor.errors import ConfigError
    from auditor.report.output import confined, write_parquet_atomic

    clean = tmp_path / "clean"
    assert confined(clean, "test.parquet") == clean / "test.parquet"
    for bad in ("../escaped.parquet", "a/b.parquet", "..", "."):
        with pytest.raises(ConfigError, match="refusing to write"):
            confined(clean, bad)
    df = pl.DataFrame({"a": [1, 2]})
    with pytest.raises(ConfigError, match="refusing to write"):
        write_parquet_atomic(df, clean / "../escaped.parquet", within=clean)
    clean.mkdir()
    (clean / "link.parquet").symlink_to(tmp_path / "elsewhere.parquet")
    with pytest.raises(ConfigError, match="outside the folder"):
        write_parquet_atomic(df, clean / "link.parquet", within=clean)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["clean", "link.parquet"]
    write_parquet_atomic(df, clean / "test.parquet", within=clean)
    assert pl.read_parquet(clean / "test.parquet").equals(df)


@pytest.mark.parametrize("case", ["jsonl_split", "config_file", "parquet_folder"])
def test_out_folder_holding_an_input_named_like_a_report_is_refused(tmp_path, capsys, case):
    b = _base(tmp_path)
    out = tmp_path / "o"
    out.mkdir()
    if case == "jsonl_split":  # a JSON Lines split literally named report.json
        victim = out / "report.json"
        victim.write_text(clean_frame(100, 2, 5000).write_ndjson())
        args = ["--train", b["train"], "--test", victim]
    elif case == "config_file":  # the audit.yaml itself, named report.html
        victim = out / "report.html"
        victim.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n")
        args = [victim]
    else:  # --out is the folder of a split given as a directory of Parquet files
        victim = out / "part-0.parquet"
        clean_frame(100, 2, 5000).write_parquet(victim)
        args = ["--train", b["train"], "--test", out]
    before = victim.read_bytes()
    code, err = _run(capsys, *args, "--out", out, "--suite", _cheap_suite(tmp_path))
    _one_line_error(code, err, "is an input of this audit")
    assert victim.read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == [victim.name]


def test_billion_laughs_config_is_refused_fast_with_a_bounded_message(tmp_path, capsys):
    import time

    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for k in range(1, 9):
        lines.append(f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 9)}]")
    lines.append("datasets: *a8")
    p = tmp_path / "audit.yaml"
    p.write_text("\n".join(lines) + "\n")
    assert p.stat().st_size < 700
    t0 = time.perf_counter()
    code, err = _run(capsys, p, "--out", tmp_path / "o")
    assert time.perf_counter() - t0 < 5
    _one_line_error(code, err, "YAML aliases expand the config to more than 100,000 values")
    assert len(err) < 400


def test_recursive_yaml_alias_and_huge_values_give_bounded_messages(tmp_path, capsys):
    p = tmp_path / "audit.yaml"
    p.write_text("datasets: &d {train: *d}\n")
    code, err = _run(capsys, p, "--out", tmp_path / "o")
    _one_line_error(code, err, "refers to its own anchor")
    p.write_text(f"datasets: {{train: a.parquet}}\nseed: {'9x' * 50_000}\n")
    code, err = _run(capsys, p, "--out", tmp_path / "o")
    _one_line_error(code, err, "seed: Input should be a valid integer")
    assert len(err) < 600
    p.write_text("datasets: {train: a.parquet}\n#" + "x" * (1 << 20) + "\n")
    code, err = _run(capsys, p, "--out", tmp_path / "o")
    _one_line_error(code, err, "at most 1,048,576 are read")


def test_suite_files_get_the_same_yaml_bounds(tmp_path):
    from auditor.errors import ConfigError
    from auditor.core.suites import read_suite

    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 10)}]" for k in range(1, 7)]
    p = tmp_path / "s.yaml"
    p.write_text("\n".join(lines) + "\ndescription: *a6\nchecks: {}\n")
    with pytest.raises(ConfigError, match="expand the suite to more than"):
        read_suite(str(p))


HOSTILE = "ev[/x]il\x1b[2J\x1b]0;pwned\x07"


def test_terminal_escapes_and_rich_markup_from_data_are_escaped_on_stderr(tmp_path, capsys):
    train = clean_frame(300, 1).with_columns(pl.col("x1").alias(HOSTILE))
    b = {"train": _write(tmp_path, "train.parquet", train),
         "test": _write(tmp_path, "test.parquet", clean_frame(100, 2, 5000))}
    code = cli.main(["run", "--train", str(b["train"]), "--test", str(b["test"]), "--out",
                     str(tmp_path / "o"), "--suite", str(_cheap_suite(tmp_path))])
    captured = capsys.readouterr()
    assert code == 1, captured.err  # schema.consistency: the column is missing from test
    assert "\x1b" not in captured.err and "\x07" not in captured.err
    assert "ev[/x]il\\x1b[2J\\x1b]0;pwned\\x07" in captured.err  # shown, escaped, not lost
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    subjects = [f["subject"] for c in doc["checks"] for f in c["findings"]]
    assert HOSTILE in subjects  # the report keeps the true name


def test_terminal_escapes_in_error_messages_are_escaped(tmp_path, capsys):
    bad = tmp_path / f"{HOSTILE}.parquet"
    code, err = _run(capsys, "--train", bad, "--test", bad, "--out", tmp_path / "o")
    _one_line_error(code, err, "file not found")
    assert "\x1b" not in err and "\\x1b[2J" in err


def test_terminal_safe_escapes_controls_and_markup():
    from auditor.report.output import terminal_safe

    assert terminal_safe("a\x1b[31mb\nc\rd\u202e") == "a\\x1b[31mb\\x0ac\\x0dd\\u202e"
    assert terminal_safe("[/x] [bold]", markup=True) == "\\[/x] \\[bold]"
    assert terminal_safe("plain text, 3.5%") == "plain text, 3.5%"


def _scan_round(tmp: Path, n: int, rnd: int) -> None:
    import subprocess
    import sys

    out = tmp / "shared"
    procs = []
    for i in range(n):
        script = tmp / f"pipe_{rnd}_{i}.py"
        script.write_text(f"x_{rnd}_{i} = 1\n")
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "auditor", "scan-code", str(script), "--out", str(out),
             "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    doc = json.loads((out / "report.json").read_text())
    scanned = [name for name in (f"pipe_{rnd}_{i}.py" for i in range(n))
               if name in json.dumps(doc)]
    assert len(scanned) == 1, scanned
    html = (out / "report.html").read_text()
    assert scanned[0] in html, "report.html and report.json come from different runs"
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


def test_concurrent_runs_into_one_folder_all_succeed_and_leave_a_consistent_pair(tmp_path):
    for rnd in range(2):
        _scan_round(tmp_path, 8, rnd)


def test_the_report_pair_is_renamed_under_the_folder_lock(tmp_path, monkeypatch):
    import fcntl
    import os

    from auditor.report import output

    seen = []
    real_replace = os.replace

    def replace(src, dst):  # while the pair is renamed, another locker must be shut out
        fd = os.open(tmp_path / output.LOCK_NAME, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append("unlocked")
        except BlockingIOError:
            seen.append("locked")
        finally:
            os.close(fd)
        real_replace(src, dst)

    monkeypatch.setattr(output.os, "replace", replace)
    output.write_files_together(tmp_path, {"report.json": "{}", "report.html": "<p>"})
    assert seen == ["locked", "locked"]
    assert (tmp_path / "report.json").read_text() == "{}"


# --- hangs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_fifo_given_as_a_split_is_refused_not_read(tmp_path, suffix):
    import os

    b = _base(tmp_path)
    fifo = tmp_path / f"pipe{suffix}"
    os.mkfifo(fifo)
    code, err = _cli_or_hang("run", "--train", b["train"], "--test", fifo, "--out",
                             tmp_path / "o")
    _one_line_error(code, err, f"pipe{suffix}: is a FIFO (named pipe); expected a regular file")


def test_fifo_inside_a_parquet_folder_is_skipped(tmp_path):
    import os

    b = _base(tmp_path)
    d = tmp_path / "d"
    d.mkdir()
    clean_frame(40, 2, 5000).write_parquet(d / "part-0.parquet")
    os.mkfifo(d / "part-1.parquet")
    code, err = _cli_or_hang("run", "--train", b["train"], "--test", d, "--out", tmp_path / "o",
                             "--suite", _cheap_suite(tmp_path))
    assert code == 0, err
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    assert doc["datasets"]["test"]["rows"] == 40


def test_fifo_given_to_scan_code_is_refused(tmp_path):
    import os

    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    code, err = _cli_or_hang("scan-code", fifo, "--out", tmp_path / "o")
    _one_line_error(code, err, "pipe.py: is a FIFO (named pipe)")
    d = tmp_path / "src"
    d.mkdir()
    (d / "ok.py").write_text("x = 1\n")
    os.mkfifo(d / "pipe.py")
    code, err = _cli_or_hang("scan-code", d, "--out", tmp_path / "o2")
    assert code == 0, err
    doc = json.loads((tmp_path / "o2" / "report.json").read_text())
    assert doc["checks"][0]["findings"][0]["count"] == 1  # ok.py only


def test_fifo_given_as_the_config_is_refused(tmp_path):
    import os

    fifo = tmp_path / "audit.yaml"
    os.mkfifo(fifo)
    code, err = _cli_or_hang("run", fifo, "--out", tmp_path / "o")
    _one_line_error(code, err, "audit.yaml: is a FIFO (named pipe)")


# --- misleading messages / behaviour ---------------------------------------------------------

def test_spark_temporary_success_and_hidden_files_are_skipped(tmp_path):
    from auditor.loading.data import estimate_bytes, read_table

    d = tmp_path / "train"
    (d / "_temporary" / "0" / "task_1").mkdir(parents=True)
    (d / "year=2025").mkdir()
    part = clean_frame(120, 1)
    part.write_parquet(d / "part-00000.parquet")
    clean_frame(30, 2).write_parquet(d / "year=2025" / "part-00001.parquet")
    part.write_parquet(d / "_temporary" / "0" / "task_1" / "part-00000.parquet")
    part.write_parquet(d / ".part-00000.parquet")
    part.write_parquet(d / "_committed_part.parquet")
    (d / "_SUCCESS").write_text("")
    (d / ".part-00000.parquet.crc").write_bytes(b"\0\1")
    assert read_table(d).height == 150
    import pyarrow.parquet as pq
    want = sum(pq.ParquetFile(f).metadata.row_group(0).total_byte_size
               for f in (d / "part-00000.parquet", d / "year=2025" / "part-00001.parquet"))
    assert estimate_bytes(d) == want


def test_suite_extends_resolves_against_the_suite_file(tmp_path, monkeypatch):
    from auditor.core.suites import load_checks

    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "b.yaml").write_text("checks:\n  leakage.duplicates: {fail_above: 0.25}\n")
    (suites / "a.yaml").write_text("extends: b.yaml\nchecks:\n  schema.consistency: {}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    checks = {c.id: c for c in load_checks(str(suites / "a.yaml"))}
    assert set(checks) == {"leakage.duplicates", "schema.consistency"}
    assert checks["leakage.duplicates"].fail_above == 0.25


@pytest.mark.parametrize("flags, expected", [
    (["--label", "y", "--group", "y"], "'y' is declared both as label and as group"),
    (["--label", "y", "--id", "y"], "'y' is declared both as label and as id"),
    (["--time", "x1", "--exclude", "x1"], "'x1' is declared both as time and as exclude"),
])
def test_conflicting_column_roles_are_refused(tmp_path, capsys, flags, expected):
    b = _base(tmp_path)
    code, err = _run(capsys, "--train", b["train"], "--test", b["test"], *flags,
                     "--out", tmp_path / "o")
    _one_line_error(code, err, expected)
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   "columns: {label: y, ids: [y]}\n")
    code, err = _run(capsys, cfg, "--out", tmp_path / "o")
    _one_line_error(code, err, "'y' is declared both as label and as id")


def test_group_that_is_also_an_id_is_accepted():
    from auditor.core.config import Columns

    assert Columns(groups=["user"], ids=["user"]).conflicts() == []
    assert Columns(label="y", text=["y"]).conflicts() == [("y", "label", "text")]


def test_symlink_loop_and_dangling_link_are_named_as_such(tmp_path, capsys):
    loop = tmp_path / "loop.parquet"
    loop.symlink_to(loop)
    code, err = _run(capsys, "--train", loop, "--test", loop, "--out", tmp_path / "o")
    _one_line_error(code, err, "loop.parquet: symbolic link loop")
    dangling = tmp_path / "gone.parquet"
    dangling.symlink_to(tmp_path / "deleted.parquet")
    code, err = _run(capsys, "--train", dangling, "--test", dangling, "--out", tmp_path / "o")
    _one_line_error(code, err, "gone.parquet: broken symbolic link")


def test_cr_only_csv_is_read_not_refused_for_a_duplicate_header(tmp_path):
    from auditor.loading.data import read_table

    p = tmp_path / "mac.csv"
    p.write_bytes(b"a,b,y\r1,2,0\r3,4,1\r1,2,0\r5,6,1")
    df = read_table(p)
    assert df.columns == ["a", "b", "y"]
    assert df.height == 4 and df["a"].to_list() == [1, 3, 1, 5]
    p.write_bytes(b"a,b,y\r1,2,0\r3,4,1\r5,6")
    with pytest.raises(Exception, match="looks truncated"):
        read_table(p)


def test_test_file_lacking_the_features_is_named(tmp_path, capsys):
    b = _base(tmp_path)
    lacking = _write(tmp_path, "lacking.parquet", clean_frame(100, 2, 5000).select("row_id", "y"))
    code = cli.main(["run", "--train", str(b["train"]), "--test", str(lacking), "--label", "y",
                     "--id", "row_id", "--out", str(tmp_path / "o"), "--quiet",
                     "--suite", str(_cheap_suite(tmp_path))])
    err = capsys.readouterr().err
    if code == 2:  # refused: the line must name the file that lacks them
        _one_line_error(code, err, "lacking.parquet")
        assert "train.parquet" not in err
    else:
        doc = json.loads((tmp_path / "o" / "report.json").read_text())
        schema = next(c for c in doc["checks"] if c["id"] == "schema.consistency")
        missing = [f for f in schema["findings"] if f["severity"] == "fail"]
        assert sorted(f["subject"] for f in missing) == ["cat", "x1", "x2"]
        assert all(f["splits"] == ["test"] and f"missing from test ({lacking})" in f["message"]
                   and "train.parquet" not in f["message"] for f in missing)


def test_stale_temp_files_of_killed_runs_are_cleaned_live_ones_kept(tmp_path):
    import os
    import subprocess
    import sys

    out = tmp_path / "o"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = [out / f".report.json.{dead.pid}.k1ll3d.tmp", out / f".report.html.{dead.pid}.x.tmp",
             out / f".write-test.{dead.pid}.y.tmp"]
    live = out / f".report.json.{os.getppid()}.alive.tmp"  # a concurrent run's file
    mine = out / "notes.tmp"  # not this tool's naming: never touched
    for p in [*stale, live, mine]:
        p.write_text("partial")
    b = _base(tmp_path)
    code = cli.main(["run", "--train", str(b["train"]), "--test", str(b["test"]), "--out",
                     str(out), "--quiet", "--suite", str(_cheap_suite(tmp_path))])
    assert code == 0
    assert not any(p.exists() for p in stale)
    assert live.exists() and mine.exists()
    assert (out / "report.json").exists() and (out / "report.html").exists()


def test_column_flags_next_to_an_audit_yaml_override_its_keys(tmp_path, capsys):
    from auditor.core.config import apply_column_flags, load_config

    b = _base(tmp_path)
    cfg_path = tmp_path / "audit.yaml"
    cfg_path.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                        "columns: {label: y, ids: [row_id], exclude: [cat]}\n")
    cfg = apply_column_flags(load_config(cfg_path), label="x2", exclude=["x1"])
    assert cfg.columns.label == "x2" and cfg.columns.exclude == ["x1"]
    assert cfg.columns.ids == ["row_id"]  # not given: the YAML's value stays
    code = cli.main(["run", str(cfg_path), "--exclude", "x1", "x2", "cat", "--out",
                     str(tmp_path / "o"), "--quiet", "--suite", str(_cheap_suite(tmp_path))])
    assert code == 0, capsys.readouterr().err
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    assert doc["config"]["columns"]["exclude"] == ["x1", "x2", "cat"]
    code, err = _run(capsys, cfg_path, "--id", "y", "--out", tmp_path / "o2")
    _one_line_error(code, err, "'y' is declared both as label and as id")


def _sampled_setup(tmp_path: Path) -> Path:
    from auditor.loading.data import WORKING_SET_FACTOR, estimate_bytes

    b = {"train": _write(tmp_path, "train.parquet", clean_frame(4_000, 1)),
         "test": _write(tmp_path, "test.parquet", clean_frame(1_000, 2, 50_000))}
    need = WORKING_SET_FACTOR * sum(estimate_bytes(p) for p in b.values())
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   "columns: {label: y, ids: [row_id]}\n"
                   f"memory_budget_gb: {need / 4 / 1024**3!r}\nsuite: {_cheap_suite(tmp_path)}\n")
    return cfg


def test_sampled_audit_says_so_on_stderr_even_when_quiet(tmp_path, capsys):
    cfg = _sampled_setup(tmp_path)
    code = cli.main(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0
    assert err.startswith("auditor: warning: The data need about") and err.count("\n") == 1
    assert "seeded uniform sample of 25.0% of its rows" in err
    code = cli.main(["run", str(cfg), "--out", str(tmp_path / "o2")])
    err = " ".join(capsys.readouterr().err.split())  # rich wraps long lines
    assert "SAMPLED: The data need about" in err
    assert "PASS: nothing at or above the --fail-on level. status=pass (on a sample of the " \
        "rows: counts are estimates)" in err


def test_no_sample_turns_data_beyond_the_budget_into_exit_2(tmp_path, capsys):
    cfg = _sampled_setup(tmp_path)
    code, err = _run(capsys, cfg, "--no-sample", "--out", tmp_path / "o")
    _one_line_error(code, err, "sampling is off (--no-sample)")
    assert not (tmp_path / "o").exists()


def test_clean_dir_and_default_reports_follow_the_yaml_file(tmp_path, monkeypatch, capsys):
    from auditor.core.config import load_config

    proj = tmp_path / "proj"
    proj.mkdir()
    b = _base(proj)
    cfg_path = proj / "audit.yaml"
    cfg_path.write_text("datasets: {train: train.parquet, test: test.parquet}\n"
                        "thresholds: {tokens.contamination: {clean_dir: clean}}\n"
                        f"suite: {_cheap_suite(tmp_path)}\n")
    del b
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    cfg = load_config("../proj/audit.yaml")
    assert Path(cfg.thresholds["tokens.contamination"]["clean_dir"]) == proj / "clean"
    code = cli.main(["run", "../proj/audit.yaml", "--quiet"])
    assert code == 0, capsys.readouterr().err
    runs = list((proj / "reports").iterdir())
    assert len(runs) == 1 and (runs[0] / "report.json").exists()
    assert list(elsewhere.iterdir()) == []


def test_thresholds_for_a_check_outside_the_suite_are_a_note(tmp_path, capsys):
    b = _base(tmp_path)
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   "thresholds: {separability.adversarial: {fail_above: 0.9}}\n")
    code = cli.main(["run", str(cfg), "--suite", str(_cheap_suite(tmp_path)), "--out",
                     str(tmp_path / "o"), "--quiet"])
    assert code == 0, capsys.readouterr().err
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    assert any("thresholds for separability.adversarial were not used" in n
               for n in doc["notes"])
    # still validated: a wrong parameter of that check is an error, an unknown id too
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   "thresholds: {separability.adversarial: {fail_abov: 0.9}}\n")
    code, err = _run(capsys, cfg, "--suite", _cheap_suite(tmp_path), "--out", tmp_path / "o")
    _one_line_error(code, err, "separability.adversarial.fail_abov: unknown parameter")


def test_default_output_folders_never_collide(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made = {cli.prepare_out_dir(None) for _ in range(5)}
    assert len(made) == 5 and all(p.is_dir() and p.parent == Path("reports") for p in made)
    stems = {p.name.split("Z")[0] for p in made}
    assert len(stems) <= 2  # same second (or two): the names still differ


def test_a_usage_error_leaves_no_empty_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    b = _base(tmp_path)
    code, err = _run(capsys, "--train", b["train"], "--test", b["test"], "--label", "nope")
    _one_line_error(code, err, "label column 'nope' not found")
    assert not (tmp_path / "reports").exists()
    code, err = _run(capsys, "--train", b["train"], "--test", b["test"], "--label", "nope",
                     "--out", tmp_path / "new" / "nested")
    _one_line_error(code, err, "label column 'nope' not found")
    assert not (tmp_path / "new").exists()


# =============================================================================================
# E2 "hardening-data" (issue 19, part 2): valid but unusual data. Each case: a complete report
# with no check in `error`, or exit 2 with one line naming the file, the column and what was
# expected.
# =============================================================================================

# every helper column name the checks use, and names polars gives its own outputs
_INTERNAL_NAMES = ["", "__row", "__auditor_label", "__auditor_row", "__auditor_n", "__y",
                   "len", "count", "literal", "row", "row_a", "row_b", "first_row", "h", "k",
                   "v", "d", "s", "q", "n", "w", "null", "value", "entity", "rows", "_key", "t",
                   "test_row", "train_row", "doc", "i", "index",
                   "*", "^x.*$"]   # pl.col reads these as a wildcard and a regex


def _hostile_named(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` plus one column per internal name: numbers with nulls and strings, alternately."""
    return df.with_columns(*[
        (pl.when(pl.col("row_id") % 9 == 0).then(None).otherwise(pl.col("x1") * (i + 1))
         if i % 2 else pl.col("cat")).alias(name) for i, name in enumerate(_INTERNAL_NAMES)])


def _complete(tmp_path: Path, *args, code_ok=(0, 1)) -> dict:
    """Run the default suite; the report must exist and hold no crashed check."""
    import sys
    from io import StringIO
    err = StringIO()
    old, sys.stderr = sys.stderr, err
    try:
        code = cli.main(["run", *map(str, args), "--out", str(tmp_path / "o"), "--quiet"])
    finally:
        sys.stderr = old
    assert code in code_ok, err.getvalue()
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    crashed = {c["id"]: c["error"] for c in doc["checks"] if c["status"] == "error"}
    assert not crashed, crashed
    return doc


def _check(doc: dict, check_id: str) -> dict:
    return next(c for c in doc["checks"] if c["id"] == check_id)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_user_columns_named_like_internal_columns_run_the_whole_suite(tmp_path, fmt):
    train = _hostile_named(clean_frame(300, 1))
    test = _hostile_named(clean_frame(100, 2, 5000))
    # planted: 10 exact copies of train rows, 4 with the label flipped, 5 near copies
    test = pl.concat([test,
                      train.head(10).with_columns(pl.col("row_id") + 9000),
                      train.slice(10, 4).with_columns(pl.col("row_id") + 9100,
                                                      y=1 - pl.col("y")),
                      train.slice(20, 5).with_columns(pl.col("row_id") + 9500,
                                                      pl.col("x1") + 1e-9)])
    p_tr, p_te = _write(tmp_path, f"train.{fmt}", train), _write(tmp_path, f"test.{fmt}", test)
    doc = _complete(tmp_path, "--train", p_tr, "--test", p_te, "--label", "y",
                    "--id", "row_id")
    renames = {f["subject"]: f["message"]
               for f in _check(doc, "schema.consistency")["findings"]
               if f["metric"] == "schema_renamed"}
    assert set(renames) == {"(unnamed column 6)", "_auditor_label", "_auditor_row",
                            "_auditor_n", "* (renamed)", "^x.*$ (renamed)"}, renames
    assert "column '' is audited as '(unnamed column 6)'" in renames["(unnamed column 6)"]
    dup = {f["metric"]: f for f in _check(doc, "leakage.duplicates")["findings"]}
    assert dup["duplicate_rows"]["count"] == 10
    assert dup["conflicting_labels"]["count"] == 4
    assert dup["near_duplicate_rows"]["count"] == 5
    # the coded label once overwrote a user column named __auditor_label: a fake V = 1.0
    corr = _check(doc, "leakage.feature_label_correlation")
    assert corr["status"] != "error"
    assert not [f for f in corr["findings"] if f["subject"] == "_auditor_label"
                and f["severity"] == "fail"]
    assert _check(doc, "leakage.single_feature_auc")["status"] in ("pass", "warn", "fail")


def test_declared_roles_follow_a_renamed_column():
    from auditor.core.config import Columns
    from auditor.loading.data import build_audit_data

    def frame(seed):
        df = clean_frame(60, seed)
        return df.rename({"y": "__auditor_label", "row_id": "", "cat": "__auditor_g"})

    data = build_audit_data({"train": frame(1), "test": frame(2)},
                            columns=Columns(label="__auditor_label", ids=[""],
                                            groups=["__auditor_g"]))
    assert data.label == "_auditor_label"
    assert data.columns.ids == ["(unnamed column 1)"]
    assert data.columns.groups == ["_auditor_g"]
    assert data.splits["train"].columns == ["(unnamed column 1)", "x1", "x2", "_auditor_g",
                                            "_auditor_label"]
    assert sorted(data.features) == ["x1", "x2"]


def test_a_renamed_column_never_takes_an_existing_name():
    from auditor.core.colnames import rename_map
    assert rename_map([["__auditor_x", "_auditor_x", "_auditor_x (2)", ""],
                       ["", "b"]]) == {"__auditor_x": "_auditor_x (3)",
                                       "": "(unnamed column 4)"}
    assert rename_map([["*", "^a$", "^", "$", "a*", "^a$ (renamed)"]]) == {
        "*": "* (renamed)", "^a$": "^a$ (renamed) (2)"}


def test_an_all_null_label_in_every_split_is_refused_with_one_line(tmp_path, capsys):
    for fmt in ("csv", "parquet"):
        train = clean_frame(300, 1).with_columns(y=pl.lit(None, dtype=pl.Int64))
        test = clean_frame(100, 2, 5000).with_columns(y=pl.lit(None, dtype=pl.Int64))
        p_tr = _write(tmp_path, f"train.{fmt}", train)
        p_te = _write(tmp_path, f"test.{fmt}", test)
        code, err = _run(capsys, "--train", p_tr, "--test", p_te, "--label", "y",
                         "--out", tmp_path / "o")
        assert code == 2, err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert f"train.{fmt}: label column 'y' is empty (no value in any of its 300 rows" in err
    # NaN is no value either
    nan = clean_frame(50, 1).with_columns(y=pl.lit(float("nan")))
    p = _write(tmp_path, "nan.parquet", nan)
    code, err = _run(capsys, "--train", p, "--test", p, "--label", "y", "--out", tmp_path / "o")
    assert code == 2 and "label column 'y' is empty" in err


def test_an_all_null_label_in_one_split_skips_label_checks_with_the_reason(tmp_path):
    # CSV reads an empty column as text: the label must still take test's integer type
    train = clean_frame(300, 1).with_columns(y=pl.lit(None, dtype=pl.Int64))
    p_tr = _write(tmp_path, "train.csv", train)
    p_te = _write(tmp_path, "test.csv", clean_frame(100, 2, 5000))
    doc = _complete(tmp_path, "--train", p_tr, "--test", p_te, "--label", "y",
                    "--id", "row_id")
    for cid in ("leakage.single_feature_auc", "leakage.feature_label_correlation",
                "drift.label"):  # drift.label used to fail on "100% of train rows missing"
        c = _check(doc, cid)
        assert c["status"] == "skipped" and "missing in every train row" in c["summary"], c
    nulls = [f for f in _check(doc, "schema.consistency")["findings"]
             if f["metric"] == "schema_label_nulls"]
    assert len(nulls) == 1 and "missing in 300 of 300 train rows (100.0%)" in \
        nulls[0]["message"]
    assert not [f for f in _check(doc, "schema.consistency")["findings"]
                if f["metric"] == "schema_dtype"]


# --- E2: token columns with ids out of range or of the wrong type ---------------------------

from tests.tokenizer_fixtures import (gpt2_json, lee_texts, tokenized_frame,  # noqa: E402,F401
                                      with_rows)

_EOT = 50256


def _token_run(tmp_path: Path, gpt2: Path, train: pl.DataFrame, test: pl.DataFrame):
    train.write_parquet(tmp_path / "ttrain.parquet")
    test.write_parquet(tmp_path / "ttest.parquet")
    cfg = tmp_path / "tok.yaml"
    cfg.write_text("datasets: {train: ttrain.parquet, test: ttest.parquet}\n"
                   f"tokens: {{tokenizer: {gpt2}, text: text, input_ids: input_ids, "
                   "attention_mask: attention_mask, labels: labels, pad_id: 50256}\n")
    return cfg


def _token_frames(gpt2: Path):
    from auditor.loading.tokenizers import load_tokenizer
    tok = load_tokenizer(str(gpt2))
    texts = lee_texts()
    return (tokenized_frame(tok, texts[:40], eos=_EOT, pad=_EOT),
            tokenized_frame(tok, texts[40:60], eos=_EOT, pad=_EOT))


def test_negative_and_huge_token_ids_are_findings_not_crashes(tmp_path, gpt2_json):
    train, test = _token_frames(gpt2_json)
    ids = test["input_ids"].to_list()
    test = with_rows(test, "input_ids", {0: [-5] + ids[0][1:], 1: [60_000, 10**12] + ids[1][2:]})
    doc = _complete(tmp_path, _token_run(tmp_path, gpt2_json, train, test))
    oov = [f for f in _check(doc, "tokens.special_tokens")["findings"]
           if f["metric"] == "out_of_vocabulary" or "outside [0, 50,257)" in f["message"]]
    assert len(oov) == 1 and oov[0]["count"] == 2, oov
    assert oov[0]["severity"] == "fail"
    stale = [f for f in _check(doc, "tokens.roundtrip")["findings"]
             if f["metric"] == "stale_tokenization"]
    assert stale[0]["count"] == 2


def test_uint64_token_ids_beyond_int64_are_out_of_vocabulary(tmp_path, gpt2_json):
    train, test = _token_frames(gpt2_json)
    as_u64 = pl.List(pl.UInt64)
    train = train.with_columns(pl.col("input_ids").cast(as_u64))
    test = with_rows(test.with_columns(pl.col("input_ids").cast(as_u64)), "input_ids",
                     {3: [2**64 - 1, 5]})
    doc = _complete(tmp_path, _token_run(tmp_path, gpt2_json, train, test))
    oov = [f for f in _check(doc, "tokens.special_tokens")["findings"]
           if "outside [0, 50,257)" in f["message"]]
    assert len(oov) == 1 and oov[0]["count"] == 1, oov


@pytest.mark.parametrize("role,value,shown", [
    ("labels", pl.col("text"), "String"),
    ("labels", pl.col("text").str.split(" "), "List(String)"),
    ("attention_mask", pl.col("text").str.split(" "), "List(String)"),
    ("input_ids", pl.struct(a=pl.col("text")), "Struct"),
])
def test_token_columns_of_the_wrong_type_are_refused_with_one_line(tmp_path, capsys, gpt2_json,
                                                                   role, value, shown):
    train, test = _token_frames(gpt2_json)
    cfg = _token_run(tmp_path, gpt2_json, train.with_columns(value.alias(role)),
                     test.with_columns(value.alias(role)))
    code = cli.main(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"ttrain.parquet: tokens.{role} column '{role}' has type {shown}" in err
    assert "expected a list of" in err


def test_ci_outputs_that_resolve_to_an_input_are_refused(tmp_path, capsys):
    b = _base(tmp_path)
    before = b["test"].read_bytes()
    code, err = _run(capsys, "--train", b["train"], "--test", b["test"], "--junit", b["test"],
                     "--out", tmp_path / "o")
    _one_line_error(code, err, "is an input of this audit")
    assert b["test"].read_bytes() == before and not (tmp_path / "o").exists()


# --- E2: seed and memory budget -----------------------------------------------------------

@pytest.mark.parametrize("where,seed", [("yaml", "-1"), ("yaml", "99999999999999999999"),
                                        ("flag", "-1"), ("flag", "99999999999999999999"),
                                        ("flags-only", "-1")])
def test_a_seed_outside_the_generators_range_is_refused_with_one_line(tmp_path, capsys,
                                                                      where, seed):
    b = _base(tmp_path)
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   f"seed: {seed if where == 'yaml' else 3}\n")
    if where == "flags-only":
        args = ["--train", b["train"], "--test", b["test"], f"--seed={seed}"]
    else:
        args = [cfg] + ([f"--seed={seed}"] if where == "flag" else [])
    code, err = _run(capsys, *args, "--out", tmp_path / "o")
    assert code == 2, err
    assert err.startswith("auditor: error: ") and err.count("\n") == 1, err
    assert "seed" in err and seed in err and "4294967295" in err
    assert not (tmp_path / "o" / "report.json").exists()


def test_the_largest_seed_runs(tmp_path):
    b = _base(tmp_path)
    doc = _complete(tmp_path, "--train", b["train"], "--test", b["test"], "--label", "y",
                    "--id", "row_id", "--seed", str(2**32 - 1))
    assert doc["seed"] == 2**32 - 1


def test_an_infinite_memory_budget_means_no_limit(tmp_path):
    b = _base(tmp_path)
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   "columns: {label: y, ids: [row_id]}\nmemory_budget_gb: .inf\n")
    doc = _complete(tmp_path, cfg)
    assert doc["datasets"]["train"]["rows"] == 300 and not doc.get("notes")


def test_a_budget_that_samples_a_split_to_nothing_blames_the_budget(tmp_path, capsys):
    b = _base(tmp_path)
    cfg = tmp_path / "audit.yaml"
    for budget in ("1e-12", "1e-7"):
        cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                       f"memory_budget_gb: {budget}\n")
        code, err = _run(capsys, cfg, "--out", tmp_path / "o")
        assert code == 2, err
        assert err.count("\n") == 1
        assert f"train.parquet: the memory budget of {float(budget):.3g} GB leaves 0 of its " \
               "300 rows in the sample" in err
        assert "raise memory_budget_gb" in err and "has 0 rows" not in err


def test_sampling_reads_files_with_columns_named_like_its_row_index(tmp_path):
    def named(df):
        return df.with_columns(pl.col("x1").alias("__row"), pl.col("x2").alias("__auditor_row"))
    train, test = named(clean_frame(4000, 1)), named(clean_frame(1000, 2, 50_000))
    b = {"train": _write(tmp_path, "train.parquet", train),
         "test": _write(tmp_path, "test.parquet", test)}
    from auditor.loading.data import WORKING_SET_FACTOR, estimate_bytes
    need = WORKING_SET_FACTOR * sum(estimate_bytes(p) for p in b.values())
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   "columns: {label: y, ids: [row_id]}\n"
                   f"memory_budget_gb: {need / 2 / 1024**3!r}\n")
    doc = _complete(tmp_path, cfg)
    assert "seeded uniform sample of 50.0% of its rows" in doc["notes"][0]
    assert 1_700 < doc["datasets"]["train"]["rows"] < 2_300
    assert doc["datasets"]["train"]["columns"] == train.width


# --- E2: scan-code on notebooks that are not notebooks ---------------------------------------

@pytest.mark.parametrize("content,expected", [
    ('{"cells": 5}', "'cells' is a number; expected a list of cells"),
    ('{"cells": {"a": 1}}', "'cells' is an object; expected a list of cells"),
    ("[" * 100_000 + "]" * 100_000, "its JSON is nested too deeply to read"),
    ("[1, 2]", "the file holds a list; expected a JSON object with a 'cells' list"),
    ('{"worksheets": [5]}', "no 'cells' list (nbformat 4) and no 'worksheets' list"),
    ('{"cells": [{"cell_type": "code", "source": [1, 2]}]}',
     "the source of cell 1 is a list; expected a string or a list of strings"),
    ("not json", "not a Jupyter notebook: invalid JSON"),
])
def test_scan_code_refuses_a_malformed_notebook_with_one_line(tmp_path, capsys, content,
                                                              expected):
    nb = tmp_path / "nb.ipynb"
    nb.write_text(content)
    code = cli.main(["scan-code", str(nb), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("auditor: error: ") and err.count("\n") == 1, err
    assert f"nb.ipynb: not a Jupyter notebook: {expected}" in err or expected in err
    assert "nb.ipynb: not a Jupyter notebook" in err


def test_scan_code_skips_code_nested_too_deeply_with_a_note(tmp_path, capsys):
    deep = "y = " + "-" * 300_000 + "1"   # the parser's stack overflows (MemoryError)
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps({"cells": [
        {"cell_type": "code", "source": deep}, None, 5,
        {"cell_type": "code", "source": "from sklearn.preprocessing import StandardScaler\n"
                                        "X = StandardScaler().fit_transform(X)\n"}]}))
    script = tmp_path / "deep.py"
    script.write_text(deep + "\n")
    code = cli.main(["scan-code", str(nb), str(script), "--out", str(tmp_path / "o"),
                     "--quiet"])
    assert code in (0, 1), capsys.readouterr().err
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    assert [n for n in doc["notes"]
            if n.endswith("nb.ipynb: cell 1 skipped: nested too deeply to parse")]
    check = doc["checks"][0]
    assert check["status"] != "error"
    unparsed = [f["message"] for f in check["findings"] if f["metric"] == "code_unparsed"]
    assert len(unparsed) == 1, unparsed
    assert unparsed[0].startswith(("deep.py: cannot parse (MemoryError",
                                   "deep.py: cannot parse (RecursionError")), unparsed


# --- E2: time columns mixing zone-aware and naive text ---------------------------------------

def test_a_time_column_mixing_aware_and_naive_values_says_what_is_mixed(tmp_path, capsys):
    def timed(df, stamps):
        return df.with_columns(ts=pl.Series(stamps * (df.height // len(stamps))))
    train = timed(clean_frame(300, 1), ["2024-01-01T00:00:00+01:00", "2024-01-02T00:00:00"])
    test = timed(clean_frame(100, 2, 5000), ["2024-03-01T00:00:00Z"])
    p_tr, p_te = _write(tmp_path, "train.csv", train), _write(tmp_path, "test.csv", test)
    code, err = _run(capsys, "--train", p_tr, "--test", p_te, "--label", "y", "--time", "ts",
                     "--out", tmp_path / "o")
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert ("train.csv: time column 'ts' mixes time-zone-aware values (e.g. "
            "'2024-01-01T00:00:00+01:00') with naive ones (e.g. '2024-01-02T00:00:00'); make "
            "them consistent") in err
    assert "not a date/time" not in err


def test_time_text_with_blank_cells_and_offsets_parses_to_utc():
    from auditor.loading.data import _parse_time_strings
    df = pl.DataFrame({"ts": ["2024-01-01T00:00:00+01:00", " ", None, "2024-01-02T00:00:00-05",
                              "2024-01-03T00:00:00Z"]})
    out = _parse_time_strings(df, "ts", "f.csv")["ts"]
    assert out.dtype == pl.Datetime("us", "UTC")
    assert out.to_list()[1:3] == [None, None]
    assert [d.isoformat() for d in out.drop_nulls().dt.replace_time_zone(None).to_list()] == \
        ["2023-12-31T23:00:00", "2024-01-02T05:00:00", "2024-01-03T00:00:00"]
    # a date alone has no zone: with zoned values it is a mix, said as such
    with pytest.raises(Exception, match="mixes time-zone-aware values"):
        _parse_time_strings(pl.DataFrame({"ts": ["2024-01-01", "2024-01-02T00:00:00Z"]}),
                            "ts", "f.csv")


def test_fifo_given_as_a_pipeline_script_is_refused(tmp_path):
    import os

    b = _base(tmp_path)
    os.mkfifo(tmp_path / "make_splits.py")
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   "pipeline: [make_splits.py]\n")
    code, err = _cli_or_hang("run", cfg, "--out", tmp_path / "o")
    _one_line_error(code, err, "pipeline: ")
    assert "make_splits.py: is a FIFO (named pipe)" in err


# --- E2: odd dtypes through the whole default suite ----------------------------------------

def _odd_dtypes(df: pl.DataFrame) -> pl.DataFrame:
    """Decimal, Duration, Time, Date, lists, arrays, structs, Categorical, Enum, binary,
    UInt64 beyond int64, all-NaN, +-inf, Int8, Float32, Boolean and Null columns."""
    import datetime as dt
    from decimal import Decimal
    r = np.arange(df.height)
    return df.with_columns(
        dec=pl.Series([Decimal(f"{i % 50}.25") for i in r], dtype=pl.Decimal(10, 2)),
        dur=pl.Series([dt.timedelta(seconds=int(i % 97)) for i in r]),
        tod=pl.Series([dt.time(int(i) % 24, int(i) % 60) for i in r]),
        dte=pl.Series([dt.date(2020, 1, 1) + dt.timedelta(days=int(i)) for i in r]),
        lst=pl.Series([[int(i) % 3, 1] for i in r]),
        arr=pl.Series([[float(i), 2.0] for i in r], dtype=pl.Array(pl.Float64, 2)),
        stc=pl.struct(a=pl.col("x1"), b=pl.col("cat")),
        catg=pl.col("cat").cast(pl.Categorical),
        enm=pl.col("cat").cast(pl.Enum(["a", "b", "c", "d"])),
        bin=pl.Series([bytes([int(i) % 256]) for i in r]),
        big=pl.Series([2**64 - 1 - int(i % 5) for i in r], dtype=pl.UInt64),
        nanc=pl.lit(float("nan")),
        infc=pl.Series([float("inf") if i % 3 else -float("inf") for i in r]),
        i8=pl.Series((r % 100).astype(np.int8)),
        f32=pl.Series(r.astype(np.float32) / 7),
        bl=pl.Series(r % 2 == 0),
        nul=pl.lit(None))


@pytest.mark.parametrize("variant", ["time_date", "decimal_label", "duration_label",
                                     "one_row_test", "one_class"])
def test_odd_dtypes_give_a_complete_report(tmp_path, variant):
    train, test = _odd_dtypes(clean_frame(300, 1)), _odd_dtypes(clean_frame(100, 2, 5000))
    label, extra = "y", []
    if variant == "time_date":
        extra = ["--time", "dte"]
    elif variant == "decimal_label":
        train, test = (f.with_columns(pl.col("y").cast(pl.Decimal(5, 1))) for f in (train, test))
    elif variant == "duration_label":
        label = "dur"
    elif variant == "one_row_test":
        test = test.head(1)
    elif variant == "one_class":
        train, test = (f.with_columns(y=pl.lit(1)) for f in (train, test))
    p_tr, p_te = _write(tmp_path, "train.parquet", train), _write(tmp_path, "test.parquet", test)
    doc = _complete(tmp_path, "--train", p_tr, "--test", p_te, "--label", label,
                    "--id", "row_id", *extra)
    converted = {f["subject"]: f["message"]
                 for f in _check(doc, "schema.consistency")["findings"]
                 if f["metric"] == "schema_converted"}
    assert set(converted) == {"dec", "dur"} | ({"y"} if variant == "decimal_label" else set())
    assert "column 'dur' (Duration(time_unit='us')) is audited as a number of seconds" in \
        converted["dur"]
    if variant == "decimal_label":
        assert _check(doc, "leakage.single_feature_auc")["status"] in ("pass", "warn", "fail")


def test_decimal_and_duration_values_are_converted_to_numbers_and_seconds():
    import datetime as dt
    from decimal import Decimal
    from auditor.core.config import Columns
    from auditor.loading.data import build_audit_data
    df = pl.DataFrame({"d": pl.Series([Decimal("1.25"), Decimal("-3.50"), None],
                                      dtype=pl.Decimal(6, 2)),
                       "t": pl.Series([dt.timedelta(minutes=2), dt.timedelta(microseconds=5),
                                       None]),
                       "x": [1.0, 2.0, 3.0]})
    data = build_audit_data({"train": df, "test": df}, columns=Columns())
    assert data.splits["train"]["d"].to_list() == [1.25, -3.5, None]
    t = data.splits["train"]["t"].to_list()
    assert t[0] == 120.0 and t[1] == pytest.approx(5e-06, rel=1e-12) and t[2] is None
    assert data.features == ["d", "t", "x"]


@pytest.mark.parametrize("role,col,shown", [("--time", "lst", "List(Int64)"),
                                            ("--group", "stc", "Struct"),
                                            ("--id", "arr", "Array(Float64"),
                                            ("--group", "bin", "Binary")])
def test_a_role_column_of_nested_type_is_refused_with_one_line(tmp_path, capsys, role, col,
                                                               shown):
    train, test = _odd_dtypes(clean_frame(60, 1)), _odd_dtypes(clean_frame(30, 2, 5000))
    p_tr, p_te = _write(tmp_path, "train.parquet", train), _write(tmp_path, "test.parquet", test)
    code, err = _run(capsys, "--train", p_tr, "--test", p_te, "--label", "y", role, col,
                     "--out", tmp_path / "o")
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"train.parquet: {role[2:]} column '{col}' has type {shown}" in err


def test_a_pandas_object_column_of_mixed_types_is_named():
    import pandas as pd
    from auditor.loading.data import to_polars
    from auditor.errors import InputError
    df = pd.DataFrame({"ok": [1, 2, 3], "mixed": [1, "a", 2.5]})
    with pytest.raises(InputError, match=r"split 'train': cannot convert pandas DataFrame: "
                                         r"column 'mixed' \(object dtype holding float, int, "
                                         r"str; cast it to one type"):
        to_polars(df, "train")


def test_a_reference_with_time_as_text_is_parsed_like_the_splits(tmp_path):
    import datetime as dt

    def timed(df, start):
        return df.with_columns(ts=pl.datetime_range(
            start, start + dt.timedelta(hours=df.height - 1), "1h", eager=True)
            .dt.strftime("%Y-%m-%dT%H:%M:%S"))
    paths = {n: _write(tmp_path, f"{n}.parquet", timed(clean_frame(h, s, 1000 * s), start))
             for n, h, s, start in (("train", 200, 1, dt.datetime(2024, 1, 1)),
                                    ("test", 80, 2, dt.datetime(2024, 3, 1)),
                                    ("ref", 150, 3, dt.datetime(2023, 1, 1)))}
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {paths['train']}, test: {paths['test']}}}\n"
                   f"reference: {paths['ref']}\ncolumns: {{label: y, ids: [row_id], time: ts}}\n")
    doc = _complete(tmp_path, cfg)
    dtype_issues = [f for f in _check(doc, "schema.consistency")["findings"]
                    if f["metric"] == "schema_dtype"]
    assert not dtype_issues, dtype_issues


@pytest.mark.parametrize("opening, closing", [("[", "]"), ("{a: ", "}")])
def test_deeply_nested_yaml_is_refused_not_a_crash(tmp_path, opening, closing):
    p = tmp_path / "audit.yaml"  # 50,000 levels: composing it would overflow the C stack
    p.write_text(f"datasets: {opening * 50_000}1{closing * 50_000}\n")
    code, err = _cli_or_hang("run", p, "--out", tmp_path / "o")  # a subprocess: may segfault
    _one_line_error(code, err, "the YAML nests deeper than 64 levels (line 1)")
    p.write_text("datasets: {train: a.parquet}\n" + "".join(
        f"a{k}: &a{k} [*a{k - 1}]\n" if k else "a0: &a0 [1]\n" for k in range(5_000)))
    code, err = _cli_or_hang("run", p, "--out", tmp_path / "o")  # long alias chains too
    _one_line_error(code, err, "YAML aliases expand the config to more than 100,000 values")


def test_a_label_typed_differently_across_splits_is_refused_with_one_line(tmp_path, capsys):
    p_tr = _write(tmp_path, "train.parquet", clean_frame(300, 1))
    p_te = _write(tmp_path, "test.parquet", clean_frame(100, 2, 5000).with_columns(
        pl.col("y").cast(pl.String)))
    code, err = _run(capsys, "--train", p_tr, "--test", p_te, "--label", "y",
                     "--out", tmp_path / "o")
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert ("train.parquet: label column 'y' has incompatible types across splits (train: "
            "Int64, test: String); a label needs one kind in every split") in err


def test_uint64_values_beyond_int64_against_int64_are_one_clear_line(tmp_path, capsys):
    train = clean_frame(300, 1).with_columns(b=pl.col("row_id").cast(pl.UInt64) + 2**63)
    test = clean_frame(100, 2, 5000).with_columns(b=pl.col("row_id"))
    p_tr, p_te = _write(tmp_path, "train.parquet", train), _write(tmp_path, "test.parquet", test)
    code, err = _run(capsys, "--train", p_tr, "--test", p_te, "--label", "y",
                     "--out", tmp_path / "o")
    assert code == 2, err
    assert err.count("\n") == 1
    assert "train.parquet: cannot convert column 'b' to a type shared with the other splits" \
        in err


# --- E2: token settings beyond int64 or the vocabulary table -------------------------------

@pytest.mark.parametrize("setting,expected", [
    ("pad_id: 100000000000000000000", "tokens.pad_id: Input should be less than"),
    ("bos_id: -100000000000000000000", "tokens.bos_id: Input should be greater than or equal"),
    ("max_length: 0", "tokens.max_length: Input should be greater than or equal to 1"),
    ("ignore_index: 100000000000000000000", "tokens.ignore_index: Input should be less than"),
])
def test_token_ids_that_cannot_be_compared_with_int64_are_refused(tmp_path, capsys, gpt2_json,
                                                                   setting, expected):
    train, test = _token_frames(gpt2_json)
    cfg = _token_run(tmp_path, gpt2_json, train, test)
    cfg.write_text(cfg.read_text().replace("pad_id: 50256}", f"pad_id: 50256, {setting}}}")
                   if not setting.startswith("pad_id") else
                   cfg.read_text().replace("pad_id: 50256", setting))
    code = cli.main(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and expected in err


def test_a_vocab_size_beyond_any_vocabulary_is_refused_before_loading():
    from auditor.detectors.tokens import MAX_VOCAB, SpecialTokens
    assert SpecialTokens(vocab_size=MAX_VOCAB).vocab_size == MAX_VOCAB
    for bad in (0, MAX_VOCAB + 1, 10**20, 2.5):
        with pytest.raises(ValueError, match=r"vocab_size must be an integer in \[1, "):
            SpecialTokens(vocab_size=bad)


# =============================================================================================
# Review of E1 (issue 19, part 1): defects found attacking the hardened CLI as a hostile user.
# =============================================================================================

def test_stale_temp_sweep_never_removes_a_users_file_named_like_a_temp_file(tmp_path, capsys):
    import subprocess
    import sys

    out = tmp_path / "o"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    # ".<name>.<digits>.<word>.tmp" with a dead "pid": the sweep of the --out folder deleted them
    users = [out / ".draft.2023.final.tmp", out / f".model.ckpt.{dead.pid}.step_2.tmp"]
    for p in users:
        p.write_text("a user's file")
    stale = out / f".report.json.{dead.pid}.k1ll3d00.tmp"  # this tool's own: still cleaned
    stale.write_text("partial")
    b = _base(tmp_path)
    code, err = _run(capsys, "--train", b["train"], "--test", b["test"], "--out", out,
                     "--suite", _cheap_suite(tmp_path))
    assert code == 0, err
    assert all(p.read_text() == "a user's file" for p in users)
    assert not stale.exists()


@pytest.mark.parametrize("flags,expected", [
    (["--junit", "{o}/report.json"], "--junit and report.json would both be written there"),
    (["--summary-md", "{o}/report.html"], "--summary-md and report.html would both be"),
    (["--junit", "{t}/ci.txt", "--summary-md", "{t}/ci.txt"], "--summary-md and --junit"),
    (["--ledger", "{o}/report.json"], "--ledger and report.json would both be written"),
])
def test_outputs_of_one_run_that_resolve_to_one_file_are_refused(tmp_path, capsys, flags,
                                                                expected):
    b = _base(tmp_path)
    out = tmp_path / "o"
    flags = [f.format(o=out, t=tmp_path) for f in flags]
    code, err = _run(capsys, "--train", b["train"], "--test", b["test"], "--out", out,
                     "--suite", _cheap_suite(tmp_path), *flags)
    _one_line_error(code, err, expected)  # was exit 0 with JUnit XML as report.json
    assert not out.exists()


def test_a_ledger_that_is_an_input_is_refused_before_it_is_created(tmp_path, capsys):
    b = _base(tmp_path)
    script = tmp_path / "prep.py"
    script.write_text("")  # an empty pipeline script: SQLite turned it into a database
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   f"pipeline: [prep.py]\nledger: prep.py\nsuite: {_cheap_suite(tmp_path)}\n")
    code, err = _run(capsys, cfg, "--out", tmp_path / "o")
    _one_line_error(code, err, "prep.py: refusing to write there: it is an input")
    assert script.read_bytes() == b""


def test_ci_outputs_onto_the_expectation_suite_or_tokenizer_are_refused(tmp_path, capsys):
    b = _base(tmp_path)
    exp = tmp_path / "exp.json"
    exp.write_text('{"name": "s", "expectations": []}')
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
                   f"expectations: exp.json\nsuite: {_cheap_suite(tmp_path)}\n")
    code, err = _run(capsys, cfg, "--out", tmp_path / "o", "--junit", exp)
    _one_line_error(code, err, "exp.json: refusing to write there: it is an input")
    assert exp.read_text() == '{"name": "s", "expectations": []}'


def test_the_history_page_never_replaces_its_ledger(tmp_path, capsys):
    b = _base(tmp_path)
    ledger = tmp_path / "h" / "history.html"  # the ledger named like the page, --out its folder
    ledger.parent.mkdir()
    code, err = _run(capsys, "--train", b["train"], "--test", b["test"], "--out", tmp_path / "o",
                     "--suite", _cheap_suite(tmp_path), "--ledger", ledger)
    assert code == 0, err
    before = ledger.read_bytes()
    code = cli.main(["history", "--ledger", str(ledger), "--out", str(ledger.parent)])
    _one_line_error(code, capsys.readouterr().err, "history.html: refusing to write there")
    assert ledger.read_bytes() == before


def test_export_expectations_never_overwrites_its_split_or_config(tmp_path, capsys):
    b = _base(tmp_path)
    split = tmp_path / "train.csv"
    clean_frame(100, 1).write_csv(split)
    before = split.read_bytes()
    code = cli.main(["export-expectations", "--train", str(split), "--out", str(split)])
    _one_line_error(code, capsys.readouterr().err, "train.csv: refusing to write there")
    assert split.read_bytes() == before
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(f"datasets: {{train: {b['train']}, test: {b['test']}}}\n")
    text = cfg.read_text()
    code = cli.main(["export-expectations", str(cfg), "--out", str(cfg)])
    _one_line_error(code, capsys.readouterr().err, "audit.yaml: refusing to write there")
    assert cfg.read_text() == text


@pytest.mark.parametrize("where", ["expectations", "tokenizer", "baseline", "verify"])
def test_fifo_as_expectations_tokenizer_baseline_or_report_is_refused(tmp_path, where):
    import os

    b = _base(tmp_path)
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    cfg = tmp_path / "audit.yaml"
    head = f"datasets: {{train: {b['train']}, test: {b['test']}}}\n"
    suite = f"suite: {_cheap_suite(tmp_path)}\n"
    if where == "expectations":
        cfg.write_text(head + suite + "expectations: pipe.json\n")
        args = ["run", cfg, "--out", tmp_path / "o"]
    elif where == "tokenizer":
        cfg.write_text(head + suite + "tokens: {tokenizer: pipe.json, text: text}\n")
        args = ["run", cfg, "--out", tmp_path / "o"]
    elif where == "baseline":
        args = ["run", "--train", b["train"], "--test", b["test"], "--suite",
                _cheap_suite(tmp_path), "--out", tmp_path / "o", "--baseline", fifo]
    else:
        args = ["verify", fifo]
    code, err = _cli_or_hang(*args, timeout=60)
    _one_line_error(code, err, "pipe.json: is a FIFO (named pipe)")


@pytest.mark.parametrize("text,expected", [
    ("datasets: {train: a.parquet, test: b.parquet, train: b.parquet}\n", "duplicate key 'train'"),
    ("datasets: {train: a.parquet}\ncolumns: {label: y}\ncolumns: {label: z}\n",
     "duplicate key 'columns' at line 3"),
])
def test_a_key_given_twice_in_the_yaml_is_refused(tmp_path, capsys, text, expected):
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(text)  # the last one was kept silently: train audited against itself
    code, err = _run(capsys, cfg, "--out", tmp_path / "o")
    _one_line_error(code, err, expected)


def test_yaml_merge_keys_are_not_duplicates(tmp_path):
    from auditor.core.config import load_yaml_file

    p = tmp_path / "s.yaml"
    p.write_text("base: &b {fail_above: 0.1, max_examples: 5}\n"
                 "checks:\n  leakage.duplicates: {<<: *b, fail_above: 0.2}\n")
    assert load_yaml_file(p)["checks"]["leakage.duplicates"] == {"fail_above": 0.2,
                                                                 "max_examples": 5}


def test_writing_the_report_on_a_full_disk_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    import errno
    import os

    from auditor.report import output

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    b = _base(tmp_path)
    monkeypatch.setattr(output.os, "fsync", full)
    code, err = _run(capsys, "--train", b["train"], "--test", b["test"], "--out", tmp_path / "o",
                     "--suite", _cheap_suite(tmp_path))
    _one_line_error(code, err, "report.json: cannot write: No space left on device")
    assert not (tmp_path / "o").exists()  # was exit 3 "internal error: OSError"


def test_a_directory_in_the_way_of_the_lock_file_is_one_line_exit_2(tmp_path, capsys):
    from auditor.report.output import LOCK_NAME

    b = _base(tmp_path)
    (tmp_path / "o" / LOCK_NAME).mkdir(parents=True)
    code, err = _run(capsys, "--train", b["train"], "--test", b["test"], "--out", tmp_path / "o",
                     "--suite", _cheap_suite(tmp_path))
    _one_line_error(code, err, f"{LOCK_NAME}: cannot write: Is a directory")
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [LOCK_NAME]


def test_temp_files_of_another_host_sharing_the_folder_are_never_swept(tmp_path):
    """A pid means something only where it was issued: a run on another machine (or in another
    container) writing into a shared --out has pids this host does not know; its file being
    written was taken for a dead run's and deleted, failing that run's rename."""
    import os
    import subprocess
    import sys
    import tempfile

    from auditor.report import output

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    other = tmp_path / f".report.json.{output._host()}x-{dead.pid}.abcdefgh.tmp"
    mine = tmp_path / f".report.json.{output._host()}-{dead.pid}.abcdefgh.tmp"
    for p in (other, mine):
        p.write_text("partial")
    assert output.clean_stale_temp_files(tmp_path) == [mine]
    assert other.exists()
    fd, made = tempfile.mkstemp(prefix=output._tmp_prefix("report.json"), suffix=".tmp",
                                dir=tmp_path)  # the names this tool makes carry its host
    os.close(fd)
    m = output._TMP.match(Path(made).name)
    assert (m["target"], m["host"], int(m["pid"])) == ("report.json", output._host(), os.getpid())


def test_out_naming_a_file_says_so(tmp_path, capsys):
    b = _base(tmp_path)
    before = b["train"].read_bytes()
    code, err = _run(capsys, "--train", b["train"], "--test", b["test"], "--out", b["train"],
                     "--suite", _cheap_suite(tmp_path))
    _one_line_error(code, err, "train.parquet: is a file, not a directory")
    assert b["train"].read_bytes() == before


# =============================================================================================
# Review of E2 (issue 19, part 2): an adversarial pass over the same kind of data, through the
# CLI and the Python API (polars and pandas frames).
# =============================================================================================

@pytest.mark.parametrize("param,value,expected", [
    ("folds", 10**20, "folds must be an integer in [2, 100]; got 100000000000000000000"),
    ("folds", 1, "folds must be an integer in [2, 100]; got 1"),
    ("n_boot", 10**9, "n_boot must be an integer in [10, 10,000]; got 1000000000")])
def test_single_feature_auc_refuses_unbounded_folds_and_resamples(param, value, expected):
    # folds=10**20 crashed the check (fold draw beyond int64); n_boot resamples are held at once
    from auditor import audit
    from auditor.errors import ConfigError
    with pytest.raises(ConfigError) as err:
        audit(train=clean_frame(60, 1), test=clean_frame(30, 2, 500), label="y",
              thresholds={"leakage.single_feature_auc": {param: value}})
    assert expected in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("labels", [["row_id", "x1", "x1", "cat", "y"],
                                    ["row_id", "x1", 0, "0", "y"]])
def test_pandas_frames_with_duplicate_column_labels_are_one_line_input_errors(labels):
    # duplicate labels crashed the culprit search (AttributeError: 'DataFrame' has no 'dtype')
    from auditor import audit
    from auditor.errors import InputError
    frames = []
    for df in (clean_frame(60, 1), clean_frame(30, 2, 500)):
        pdf = df.to_pandas()
        pdf.columns = labels
        frames.append(pdf)
    with pytest.raises(InputError) as err:
        audit(train=frames[0], test=frames[1], label="y")
    dup = "x1" if labels[2] == "x1" else "0"
    assert str(err.value) == (f"split 'train': column {dup!r} occurs twice in the pandas "
                              "DataFrame (column labels compared as text); rename one of them")


def test_pandas_column_labels_that_are_not_strings_can_be_declared_as_they_are():
    # label=4 / label=("a", "y") raised pydantic's ValidationError (a traceback, not an error
    # of the audit); polars names those columns str(label), so they are accepted as such
    import pandas as pd

    from auditor import audit
    from auditor.errors import ConfigError
    tr, te = clean_frame(120, 1).to_pandas(), clean_frame(60, 2, 500).to_pandas()
    by_int = [d.set_axis(range(d.shape[1]), axis=1) for d in (tr, te)]
    report = audit(train=by_int[0], test=by_int[1], label=4, ids=[0])
    assert report.config["columns"]["label"] == "4"
    assert report.config["columns"]["ids"] == ["0"]
    assert not [c.id for c in report.checks if c.status == "error"]
    by_tuple = [d.set_axis(pd.MultiIndex.from_tuples([("a", c) for c in d.columns]), axis=1)
                for d in (tr, te)]
    report = audit(train=by_tuple[0], test=by_tuple[1], label=("a", "y"),
                   ids=[("a", "row_id")], groups=(("a", "x1"), ("a", "x2")))
    assert report.config["columns"]["label"] == "('a', 'y')"
    assert report.config["columns"]["groups"] == ["('a', 'x1')", "('a', 'x2')"]
    assert not [c.id for c in report.checks if c.status == "error"]
    with pytest.raises(ConfigError, match=r"^audit\(\): columns.label: .*; got 4.5$"):
        audit(train=tr, test=te, label=4.5)


def test_ci_outputs_into_a_fifo_or_through_a_symlink_are_written_not_replaced(tmp_path):
    """``--summary-md /dev/stdout`` or ``--junit /dev/null``: the rename of an atomic write put
    a regular file in place of the device (as root, /dev/null itself) or of the link."""
    import os
    import stat

    from auditor.report.output import write_atomic

    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_atomic(fifo, "## verdict\n")
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        assert os.read(reader, 100) == b"## verdict\n"
    finally:
        os.close(reader)
    with pytest.raises(OSError):  # no reader: an error at once, not a hang
        write_atomic(fifo, "x")
    target = tmp_path / "real.md"
    target.write_text("old")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    write_atomic(link, "new")
    assert link.is_symlink() and target.read_text() == "new"


def test_an_empty_split_is_named_once(tmp_path, capsys):
    # an in-memory split was named twice ("split 'test': split 'test' has 0 rows"); a file's
    # message keeps its path
    import pandas as pd

    from auditor import audit
    from auditor.errors import InputError
    train = clean_frame(60, 1)
    for empty in (train.head(0), train.head(0).to_pandas(), pd.DataFrame()):
        with pytest.raises(InputError) as err:
            audit(train=train, test=empty, label="y")
        assert str(err.value) == "split 'test' has 0 rows"
    p_tr = _write(tmp_path, "train.parquet", train)
    p_te = _write(tmp_path, "test.csv", train.head(0))
    code, err = _run(capsys, "--train", p_tr, "--test", p_te, "--label", "y",
                     "--out", tmp_path / "o")
    assert code == 2 and err == f"auditor: error: {p_te}: split 'test' has 0 rows\n", err


@pytest.mark.parametrize("check_id,param,expected", [
    ("drift.features", "hist_bins", "hist_bins must be an integer in [1, 1000]"),
    ("separability.label_probe", "hidden", "hidden must be an integer in [1, 4,096]")])
def test_sizes_beyond_reason_are_config_errors_not_crashed_checks(check_id, param, expected):
    # 10**20 was accepted and crashed the check: numpy "Maximum allowed size exceeded",
    # torch "Overflow when unpacking long long"
    from auditor import audit
    from auditor.errors import ConfigError
    with pytest.raises(ConfigError) as err:
        audit(train=clean_frame(60, 1), test=clean_frame(30, 2, 500), label="y",
              thresholds={check_id: {param: 10**20}})
    assert f"{expected}; got 100000000000000000000" in str(err.value)
