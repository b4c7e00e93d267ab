"""Provenance in report.json (inputs, config, versions) and `auditor verify`."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import jsonschema
import polars as pl
import pytest

import auditor
from auditor.cli import main
from auditor.signoff.provenance import content_hash
from tests.workflow_fixtures import planted, suite_file

SCHEMA = json.loads((Path(auditor.__file__).parent / "report" / "schema" / "report.schema.json")
                    .read_text())


def _run(tmp_path, paths, *extra):
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(json.dumps({"datasets": {k: str(v) for k, v in paths.items()},
                               "columns": {"label": "y"}, "suite": str(suite_file(tmp_path)),
                               "thresholds": {"drift.features": {"psi_fail_above": 0.3}}}))
    out = tmp_path / "out"
    code = main(["run", str(cfg), "--out", str(out), "--quiet", *extra])
    return code, out / "report.json"


def test_report_records_inputs_config_and_versions(tmp_path, write_splits):
    paths = write_splits(planted())
    code, report = _run(tmp_path, paths)
    assert code == 1
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, SCHEMA)
    train = doc["inputs"]["train"]
    raw = paths["train"].read_bytes()
    assert train["hash"] == "sha256:" + hashlib.sha256(raw).hexdigest()
    assert train["bytes"] == len(raw) and train["hash_mode"] == "full"
    assert train["path"] == str(paths["train"].resolve())
    assert train["rows"] == 600 and doc["inputs"]["test"]["rows"] == 212
    assert train["schema"]["balance"] == "Float64" and train["schema"]["y"] == "Int64"
    cfg = doc["config"]
    assert cfg["columns"]["label"] == "y" and cfg["waivers"] == []
    assert cfg["thresholds"] == {"drift.features": {"psi_fail_above": 0.3}}
    assert cfg["check_params"]["drift.features"]["psi_fail_above"] == 0.3
    assert cfg["check_params"]["leakage.duplicates"]["fail_above"] == 0.001
    import numpy
    assert doc["versions"]["numpy"] == numpy.__version__
    assert doc["versions"]["polars"] == pl.__version__


def test_fast_hash_reads_the_parquet_footer_size_and_mtime(tmp_path, write_splits):
    paths = write_splits(planted())
    path = paths["train"]
    fast, size = content_hash(path, "fast")
    full, _ = content_hash(path, "full")
    assert fast.startswith("fast:") and full.startswith("sha256:") and size == path.stat().st_size
    assert content_hash(path, "fast") == (fast, size)  # deterministic
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert content_hash(path, "fast")[0] != fast  # a touched file is a changed file
    assert content_hash(path, "full")[0] == full  # while its bytes are the same
    code, report = _run(tmp_path, paths, "--hash", "fast")
    doc = json.loads(report.read_text())
    assert doc["inputs"]["train"]["hash_mode"] == "fast"
    assert doc["inputs"]["train"]["hash"] == content_hash(path, "fast")[0]


def test_directory_of_parquet_files_hashes_every_file(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    df = planted()["train"]
    df.head(300).write_parquet(folder / "a.parquet")
    df.tail(300).write_parquet(folder / "b.parquet")
    before = content_hash(folder)
    assert before[1] == sum(p.stat().st_size for p in folder.iterdir())
    df.tail(299).write_parquet(folder / "b.parquet")
    assert content_hash(folder)[0] != before[0]


def test_verify_exit_codes_unchanged_modified_missing_unreadable(tmp_path, write_splits,
                                                                   capsys):
    paths = write_splits(planted())
    _, report = _run(tmp_path, paths)
    capsys.readouterr()
    assert main(["verify", str(report)]) == 0
    assert "all 2 recorded inputs unchanged" in capsys.readouterr().err
    df = pl.read_parquet(paths["test"])
    df.with_columns(pl.col("f0").fill_null(0) + 1e-9).write_parquet(paths["test"])
    assert main(["verify", str(report)]) == 1
    err = capsys.readouterr().err
    assert f"CHANGED test: {paths['test'].resolve()} changed since the audit" in err
    assert "train" not in err.split("CHANGED")[1]
    paths["train"].unlink()
    assert main(["verify", str(report)]) == 2
    assert f"{paths['train'].resolve()}: recorded input 'train' is missing" in \
        capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["verify", str(bad)]) == 2
    assert main(["verify", str(tmp_path / "none.json")]) == 2
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"checks": []}))
    assert main(["verify", str(old)]) == 2
    assert "records no inputs" in capsys.readouterr().err


def test_verify_in_a_subprocess_names_the_changed_file(tmp_path, write_splits, cli):
    paths = write_splits(planted())
    _, report = _run(tmp_path, paths, "--hash", "fast")
    assert cli("verify", report).returncode == 0
    planted(seed=1)["train"].write_parquet(paths["train"])
    r = cli("verify", report)
    assert r.returncode == 1 and str(paths["train"].resolve()) in r.stderr


def test_in_memory_splits_have_no_hash_and_the_api_hash_mode_is_validated(clean_splits):
    report = auditor.audit(**clean_splits, label="y", suite="fast")
    assert report.inputs["train"]["hash"] is None and report.inputs["train"]["rows"] == 800
    from auditor.errors import ConfigError
    with pytest.raises(ConfigError, match="hash must be one of full, fast"):
        auditor.audit(**clean_splits, label="y", hash="md5")


@pytest.mark.parametrize("inputs", [[1, 2], {"train": "x"},
                                    {"train": {"path": "a", "hash": "h", "hash_mode": "md5"}},
                                    {"train": {"path": 123, "hash": "h", "bytes": 1}},
                                    {"train": {"path": "a", "hash": "h", "bytes": None}},
                                    {"train": {"path": "a", "hash": ["h"], "bytes": 1}},
                                    {"train": {"path": None, "hash": None}}])
def test_verify_of_a_malformed_report_is_exit_2_with_one_line(tmp_path, capsys, inputs):
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"checks": [], "inputs": inputs}))
    assert main(["verify", str(report)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"auditor: error: {report}") and "\n" not in err


@pytest.mark.parametrize("hash_mode", ["full", "fast"])
def test_verify_sees_one_flipped_byte_of_the_same_size(tmp_path, write_splits, capsys,
                                                       hash_mode):
    paths = write_splits(planted())
    _, report = _run(tmp_path, paths, "--hash", hash_mode)
    assert main(["verify", str(report)]) == 0
    target = paths["test"]
    raw = bytearray(target.read_bytes())
    stat = target.stat()
    raw[len(raw) // 2] ^= 0x01  # a data page byte: the Parquet footer is unchanged
    target.write_bytes(bytes(raw))
    if hash_mode == "fast":  # fast mode relies on the mtime a rewrite moves
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    capsys.readouterr()
    assert main(["verify", str(report)]) == 1
    err = capsys.readouterr().err
    assert f"{target.resolve()} changed since the audit (same size, {hash_mode} hash " \
           "differs)" in err and "1 of " in err


def test_fast_hash_is_size_mtime_and_the_parquet_footer_or_head_and_tail(tmp_path,
                                                                         write_splits):
    import pyarrow.parquet as pq

    path = write_splits(planted())["train"]
    raw, st = path.read_bytes(), path.stat()
    n = int.from_bytes(raw[-8:-4], "little")
    footer = raw[-8 - n:-8]
    assert pq.ParquetFile(path).metadata.serialized_size == n  # what pyarrow calls the footer
    expected = hashlib.sha256(f"{st.st_size}:{st.st_mtime_ns}:".encode() + footer).hexdigest()
    assert content_hash(path, "fast") == (f"fast:{expected}", st.st_size)
    csv = tmp_path / "big.csv"
    csv.write_bytes(b"a,b\n" + b"1,2\n" * 50_000)
    raw, st = csv.read_bytes(), csv.stat()
    edge = 64 << 10
    expected = hashlib.sha256(f"{st.st_size}:{st.st_mtime_ns}:".encode() + raw[:edge]
                              + raw[-edge:]).hexdigest()
    assert content_hash(csv, "fast") == (f"fast:{expected}", st.st_size)


def test_inputs_are_hashed_as_loaded_not_after_the_checks(tmp_path, write_splits, monkeypatch):
    """A pipeline rewriting a split while the checks run: the report records the bytes that
    were read, so verify flags the rewrite instead of vouching for unaudited data."""
    import auditor.api as api

    paths = write_splits(planted())
    original = hashlib.sha256(paths["test"].read_bytes()).hexdigest()
    real = api.run_checks

    def rewrite_during_checks(*args, **kwargs):
        planted(seed=5)["test"].write_parquet(paths["test"])
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "run_checks", rewrite_during_checks)
    code, report = _run(tmp_path, paths)
    doc = json.loads(report.read_text())
    assert doc["inputs"]["test"]["hash"] == f"sha256:{original}"
    assert main(["verify", str(report)]) == 1


def test_background_hashes_equal_content_hash_and_leave_bad_paths_to_the_caller(tmp_path,
                                                                                write_splits):
    """Hashes taken on a thread while loading equal content_hash's, in both modes; a FIFO is
    never opened by the thread (it would block it forever) and a missing path raises in the
    caller, as content_hash does (the loader has refused it with its InputError before)."""
    from auditor.signoff.provenance import BackgroundHashes

    paths = write_splits(planted())
    folder = tmp_path / "folder"
    folder.mkdir()
    planted()["train"].write_parquet(folder / "a.parquet")
    planted(seed=3)["train"].write_parquet(folder / "b.parquet")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    missing = tmp_path / "missing.parquet"
    for mode in ("full", "fast"):
        given = [paths["train"], str(paths["test"]), folder]
        hashes = BackgroundHashes([*given, fifo, missing], mode)
        hashes._thread.join(30)  # a thread stuck on the FIFO would still be alive here
        assert not hashes._thread.is_alive()
        # the thread hashed exactly the readable paths (get() would re-hash any it missed)
        assert set(hashes._done) == {str(p) for p in given}
        for p in given:
            assert hashes._done[str(p)] == hashes.get(p) == content_hash(p, mode)
        assert hashes.get(paths["train"])[0].startswith("sha256:" if mode == "full" else "fast:")
        with pytest.raises(FileNotFoundError, match="missing.parquet"):
            hashes.get(missing)


def test_a_refused_input_cancels_the_background_hash(tmp_path, write_splits, monkeypatch):
    """When loading fails, the hashing thread stops between blocks instead of reading on: a
    stop event ends content_hash with HashCancelled, and run_audit cancels the thread before
    the InputError reaches the caller."""
    import threading

    import auditor.api as api
    from auditor.core.config import parse_config
    from auditor.errors import InputError
    from auditor.signoff.provenance import BackgroundHashes, HashCancelled

    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(3 << 20))
    stop = threading.Event()
    stop.set()
    with pytest.raises(HashCancelled):
        content_hash(big, "full", stop)
    assert content_hash(big, "fast", stop)[1] == 3 << 20  # fast reads kilobytes: not stopped

    paths = write_splits(planted())
    started: list[BackgroundHashes] = []

    class Recorded(BackgroundHashes):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    def refuse(cfg, frames=None):
        raise InputError(f"{paths['train']}: refused")

    monkeypatch.setattr("auditor.signoff.provenance.BackgroundHashes", Recorded)
    monkeypatch.setattr(api, "open_splits", refuse)
    cfg = parse_config({"datasets": {k: str(v) for k, v in paths.items()},
                        "columns": {"label": "y"}}, base_dir=tmp_path, source="t")
    with pytest.raises(InputError, match="refused"):
        api.run_audit(cfg)
    assert len(started) == 1
    assert started[0]._stop.is_set() and not started[0]._thread.is_alive()


def test_verify_reports_a_changed_config_or_waiver_list_and_finds_moved_inputs(tmp_path,
                                                                                capsys):
    import shutil

    data = tmp_path / "data"
    data.mkdir()
    paths = {}
    for name, df in planted().items():
        paths[name] = data / f"{name}.parquet"
        df.write_parquet(paths[name])
    _, report = _run(tmp_path, paths)
    cfg = tmp_path / "audit.yaml"
    capsys.readouterr()
    assert main(["verify", str(report), "--config", str(cfg)]) == 0
    assert "; the config is the one signed off" in capsys.readouterr().err
    doc = json.loads(cfg.read_text())
    doc["thresholds"] = {"drift.features": {"psi_fail_above": 0.5}}
    doc["waivers"] = [{"check": "drift.features", "subject": "f0", "reason": "seasonal",
                       "owner": "ds", "expires": "2099-01-01"}]
    doc["datasets"] = {k: f"elsewhere/{k}.parquet" for k in doc["datasets"]}  # not a rule
    cfg.write_text(json.dumps(doc))
    assert main(["verify", str(report), "--config", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert ("CHANGED config: waivers: 0 -> 1; added: drift.features / f0 (owner ds, until "
            "2099-01-01)") in err
    assert "CHANGED config: check parameters changed: drift.features" in err
    assert "CHANGED config: thresholds: " in err and "datasets" not in err
    assert "; the config changed (3 keys)" in err
    # the data moved to another folder: found with --root, refused without it
    moved = tmp_path / "archive" / "2026-11"
    shutil.copytree(data, moved)
    shutil.rmtree(data)
    assert main(["verify", str(report)]) == 2
    assert "(moved? --root DIR looks the inputs up under DIR)" in capsys.readouterr().err
    assert main(["verify", str(report), "--root", str(moved)]) == 0
    assert f"train: {moved / paths['train'].name} unchanged" in capsys.readouterr().err


def test_verify_compares_the_rules_not_a_run_s_suite_flag_and_skips_table_inputs(tmp_path,
                                                                                  write_splits,
                                                                                  capsys):
    paths = write_splits(planted())
    _, report = _run(tmp_path, paths, "--suite", "fast")
    capsys.readouterr()
    assert main(["verify", str(report), "--config", str(tmp_path / "audit.yaml")]) == 0
    assert "the config is the one signed off" in capsys.readouterr().err
    # a Spark report with a catalog table beside a file: the table is listed, not a crash
    doc = json.loads(report.read_text())
    doc["inputs"]["train"] = {"path": "table:db.train", "bytes": None, "hash": None,
                              "hash_mode": None, "rows": 10}
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps(doc))
    assert main(["verify", str(mixed)]) == 0
    assert "train: in memory when audited" in capsys.readouterr().err
