"""Hugging Face integration on real objects: ``datasets.Dataset`` / ``DatasetDict`` handed to
``auditor.audit()``, ``save_to_disk`` folders and Arrow stream files as split paths,
``datasets: FOLDER`` in audit.yaml, and tokenizers named by hub id from a local HF cache."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

datasets = pytest.importorskip("datasets")
datasets.disable_progress_bars()

import auditor  # noqa: E402
from auditor.core.config import load_config  # noqa: E402
from auditor.loading.data import open_splits, read_table  # noqa: E402
from auditor.errors import ConfigError, InputError  # noqa: E402
from auditor.loading.hf import from_hf, is_arrow_stream  # noqa: E402

from tests.conftest import clean_frame  # noqa: E402


def _ds(df: pl.DataFrame):
    """A real ``datasets.Dataset`` built the way users build one, from a dict of columns."""
    return datasets.Dataset.from_dict(df.to_dict(as_series=False))


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "auditor", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


def _planted_splits() -> dict[str, pl.DataFrame]:
    """train / validation / test with 7 test rows copied from train (new row ids)."""
    train, val, test = clean_frame(600, 1), clean_frame(200, 2, 10_000), clean_frame(200, 3, 20_000)
    copies = train[[5, 50, 100, 150, 200, 250, 300]].with_columns(
        pl.Series("row_id", np.arange(30_000, 30_007)))
    return {"train": train, "validation": val, "test": pl.concat([test, copies])}


# ---------------------------------------------------------------------------------------------
# in-memory objects
# ---------------------------------------------------------------------------------------------

def test_a_dataset_reads_through_arrow_with_its_indices_applied():
    df = clean_frame(50, 4)
    ds = _ds(df).shuffle(seed=3).select(range(10))
    ds.set_format("numpy", columns=["x1"])  # a display format must not hide columns
    out = from_hf(ds, "train")
    assert out.columns == df.columns
    expected = pl.DataFrame(ds.with_format(None)[:]).select(df.columns)
    assert out.equals(expected)
    assert out["row_id"].to_list() == [int(i) for i in ds.with_format(None)["row_id"]]


def test_a_dataset_is_never_copied_through_pandas(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("pandas copy")

    monkeypatch.setattr(datasets.Dataset, "to_pandas", boom)
    monkeypatch.setattr(pl, "from_pandas", boom)
    df = clean_frame(30, 5)
    assert from_hf(_ds(df), "train").equals(df)


def test_audit_takes_a_dataset_dict_and_keeps_its_split_names_and_order():
    frames = _planted_splits()
    dd = datasets.DatasetDict({k: _ds(v) for k, v in frames.items()})
    report = auditor.audit(splits=dd, label="y", ids=["row_id"],
                           suite=str(_suite(["leakage.duplicates"])))
    assert list(report.datasets) == ["train", "validation", "test"]
    assert [report.datasets[k]["rows"] for k in report.datasets] == [600, 200, 207]
    (finding,) = [f for f in report.check("leakage.duplicates").findings
                  if f.metric == "duplicate_rows" and f.splits == ["train", "test"]]
    assert (finding.count, finding.severity) == (7, "fail")


def test_audit_takes_datasets_as_train_and_test():
    report = auditor.audit(train=_ds(clean_frame(300, 1)), test=_ds(clean_frame(100, 2, 5000)),
                           label="y", ids=["row_id"], suite=str(_suite(["leakage.duplicates"])))
    assert report.status == "pass"
    assert report.datasets["test"]["rows"] == 100


def test_streaming_datasets_and_nested_dicts_are_refused_with_one_line():
    ids = datasets.IterableDataset.from_generator(lambda: iter([{"a": 1}]))
    with pytest.raises(InputError, match="streaming IterableDataset"):
        from_hf(ids, "train")
    dd = datasets.DatasetDict({"train": _ds(clean_frame(5, 1))})
    with pytest.raises(InputError, match="whole DatasetDict"):
        auditor.audit(train=dd, test=_ds(clean_frame(5, 2)))


# ---------------------------------------------------------------------------------------------
# save_to_disk folders and Arrow stream files
# ---------------------------------------------------------------------------------------------

def test_a_save_to_disk_folder_reads_its_shards_in_order(tmp_path):
    df = clean_frame(1000, 6)
    _ds(df).save_to_disk(str(tmp_path / "ds"), num_shards=3)
    shards = json.loads((tmp_path / "ds" / "state.json").read_text())["_data_files"]
    assert len(shards) == 3
    assert read_table(tmp_path / "ds").equals(df)


def test_an_arrow_stream_file_reads_and_an_arrow_ipc_file_still_does(tmp_path):
    df = clean_frame(40, 7)
    _ds(df).save_to_disk(str(tmp_path / "ds"))
    stream = tmp_path / "ds" / "data-00000-of-00001.arrow"
    assert is_arrow_stream(stream)
    assert read_table(stream).equals(df)
    df.write_ipc(tmp_path / "file.arrow")
    assert not is_arrow_stream(tmp_path / "file.arrow")
    assert read_table(tmp_path / "file.arrow").equals(df)


def test_datasets_folder_in_audit_yaml_expands_to_the_saved_splits(tmp_path):
    frames = _planted_splits()
    datasets.DatasetDict({k: _ds(v) for k, v in frames.items()}).save_to_disk(
        str(tmp_path / "splits"))
    (tmp_path / "audit.yaml").write_text(
        "datasets: splits\ncolumns: {label: y, ids: [row_id]}\n"
        f"suite: {_suite(['leakage.duplicates'], tmp_path)}\n")
    cfg = load_config(tmp_path / "audit.yaml")
    assert list(cfg.datasets) == ["train", "validation", "test"]  # saved order, not sorted
    data = open_splits(cfg)
    for name, df in frames.items():
        assert data.splits[name].equals(df)
    res = _cli("run", str(tmp_path / "audit.yaml"), "--out", str(tmp_path / "out"), "-q")
    assert res.returncode == 1, res.stderr
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["datasets"]["test"]["path"] == str(tmp_path / "splits" / "test")
    (dup,) = [f for c in doc["checks"] if c["id"] == "leakage.duplicates"
              for f in c["findings"] if f["metric"] == "duplicate_rows"
              and f["splits"] == ["train", "test"]]
    assert dup["count"] == 7


def test_a_dataset_folder_works_as_one_split_path(tmp_path):
    _ds(clean_frame(300, 1)).save_to_disk(str(tmp_path / "train"))
    _ds(clean_frame(100, 2, 5000)).save_to_disk(str(tmp_path / "test"))
    res = _cli("run", "--train", str(tmp_path / "train"), "--test", str(tmp_path / "test"),
               "--label", "y", "--id", "row_id", "--suite", str(_suite(["leakage.duplicates"],
                                                                          tmp_path)),
               "--out", str(tmp_path / "out"), "-q")
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert (doc["datasets"]["train"]["rows"], doc["datasets"]["test"]["rows"]) == (300, 100)


def test_hf_folder_mistakes_are_one_line_and_exit_2(tmp_path):
    dd = datasets.DatasetDict({"train": _ds(clean_frame(20, 1)), "test": _ds(clean_frame(20, 2))})
    dd.save_to_disk(str(tmp_path / "dd"))
    res = _cli("run", "--train", str(tmp_path / "dd"), "--test", str(tmp_path / "dd" / "test"),
               "--out", str(tmp_path / "o1"))
    assert res.returncode == 2
    assert "is a DatasetDict folder (splits train, test)" in res.stderr
    assert "Traceback" not in res.stderr
    (tmp_path / "a.yaml").write_text("datasets: dd/train\n")
    with pytest.raises(ConfigError, match="single Dataset folder"):
        load_config(tmp_path / "a.yaml")
    (tmp_path / "b.yaml").write_text("datasets: nowhere\n")
    with pytest.raises(ConfigError, match="folder not found"):
        load_config(tmp_path / "b.yaml")
    (tmp_path / "dd" / "test" / "data-00000-of-00001.arrow").write_bytes(b"\x00" * 64)
    with pytest.raises(InputError, match="cannot read as an Arrow stream"):
        read_table(tmp_path / "dd" / "test")
    (tmp_path / "neither").mkdir()
    (tmp_path / "neither" / "notes.txt").write_text("not data")
    res = _cli("run", "--train", str(tmp_path / "neither"), "--test", str(tmp_path / "dd" /
                                                                        "train"),
               "--out", str(tmp_path / "o2"))
    assert res.returncode == 2, res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert "neither: directory contains no Parquet files" in line
    assert "not a datasets save_to_disk folder" in line


def test_a_truncated_shard_is_exit_2_naming_it(tmp_path):
    _ds(clean_frame(400, 1)).save_to_disk(str(tmp_path / "train"))
    _ds(clean_frame(100, 2, 5000)).save_to_disk(str(tmp_path / "test"))
    shard = tmp_path / "test" / "data-00000-of-00001.arrow"
    shard.write_bytes(shard.read_bytes()[:-3000])
    res = _cli("run", "--train", str(tmp_path / "train"), "--test", str(tmp_path / "test"),
               "--out", str(tmp_path / "out"))
    assert res.returncode == 2, res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert f"{shard}: cannot read as an Arrow stream" in line
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------
# tokenizers by name from the local Hugging Face cache
# ---------------------------------------------------------------------------------------------

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _hub_cache(root: Path, repo: str, tokenizer_json: Path, commit: str = COMMIT,
               ref: str | None = "main") -> Path:
    """The hub cache layout huggingface_hub writes: blobs, snapshots/<commit>/, refs/<ref>."""
    folder = root / "hub" / ("models--" + repo.replace("/", "--"))
    (folder / "blobs").mkdir(parents=True, exist_ok=True)
    blob = folder / "blobs" / "tokenizerblob"
    blob.write_bytes(tokenizer_json.read_bytes())
    snap = folder / "snapshots" / commit
    snap.mkdir(parents=True, exist_ok=True)
    (snap / "tokenizer.json").symlink_to(os.path.relpath(blob, snap))
    if ref:
        (folder / "refs").mkdir(exist_ok=True)
        (folder / "refs" / ref).write_text(commit)
    return snap


@pytest.fixture
def gpt2_json(tmp_path):
    pytest.importorskip("tokenizers")
    from tests.tokenizer_fixtures import build_gpt2

    return build_gpt2(tmp_path / "gpt2-tokenizer.json")


def test_a_tokenizer_name_resolves_from_the_local_cache_without_network(
        tmp_path, monkeypatch, gpt2_json):
    from auditor.loading.tokenizers import load_tokenizer

    _hub_cache(tmp_path / "hf", "openai-community/gpt2", gpt2_json)
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))

    def no_network(*a, **k):
        raise AssertionError("network access")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    tok = load_tokenizer("openai-community/gpt2")
    by_path = load_tokenizer(str(gpt2_json))
    texts = ["Hello world", "The quick brown fox jumps over the lazy dog.\n  tabs\tand émoji 🙂"]
    assert tok.encode_batch(texts[:1]) == [[15496, 995]]  # GPT-2's published ids
    assert tok.encode_batch(texts) == by_path.encode_batch(texts)
    assert (tok.vocab_size, tok.eos_id, tok.name) == (50257, 50256, "openai-community/gpt2")
    assert load_tokenizer(f"openai-community/gpt2@{COMMIT}").vocab_size == 50257


def test_hub_cache_location_follows_huggingface_hub(tmp_path, monkeypatch):
    from auditor.loading.tokenizers import hub_cache_dir

    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hub_cache_dir() == tmp_path / ".cache" / "huggingface" / "hub"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert hub_cache_dir() == tmp_path / "x" / "huggingface" / "hub"
    monkeypatch.setenv("HF_HOME", str(tmp_path / "h"))
    assert hub_cache_dir() == tmp_path / "h" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "c"))
    assert hub_cache_dir() == tmp_path / "c"


def test_a_name_missing_from_the_cache_is_one_line_naming_where_it_looked(
        tmp_path, monkeypatch, gpt2_json):
    from auditor.loading.tokenizers import TokenizerError, load_tokenizer

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    with pytest.raises(TokenizerError, match=r"not in the Hugging Face cache \(looked for "
                                             r".*models--gpt2\)"):
        load_tokenizer("gpt2")
    _hub_cache(tmp_path / "hf", "gpt2", gpt2_json)
    with pytest.raises(TokenizerError, match="revision 'v2'"):
        load_tokenizer("gpt2@v2")
    with pytest.raises(TokenizerError, match="not found"):  # paths stay paths
        load_tokenizer("tok/tokenizer.json")


def test_token_demo_from_a_dataset_dict_folder_and_a_cached_tokenizer_name(tmp_path):
    """The tokenized demo saved with DatasetDict.save_to_disk and its tokenizer placed in an
    HF cache as ``auditor/demo-bpe``: the planted counts come out as from Parquet."""
    pytest.importorskip("tokenizers")
    from auditor.loading.demo_tokens import AUDIT_YAML, PLANTED, make_token_demo

    frames, tok = make_token_demo()
    datasets.DatasetDict({k: _ds(v) for k, v in frames.items()}).save_to_disk(
        str(tmp_path / "dd"))
    tok.save(str(tmp_path / "tok.json"))
    _hub_cache(tmp_path / "hf", "auditor/demo-bpe", tmp_path / "tok.json")
    yaml_text = AUDIT_YAML.replace("datasets: {train: train.parquet, test: test.parquet}",
                                   "datasets: dd").replace("tokenizer: tokenizer.json",
                                                           "tokenizer: auditor/demo-bpe")
    assert "datasets: dd" in yaml_text and "auditor/demo-bpe" in yaml_text
    (tmp_path / "audit.yaml").write_text(yaml_text)
    suite = _suite(["tokens.roundtrip", "tokens.contamination"], tmp_path)
    env = {"HF_HUB_CACHE": str(tmp_path / "hf" / "hub"), "HF_HUB_OFFLINE": "1"}
    res = _cli("run", str(tmp_path / "audit.yaml"), "--suite", str(suite), "--out",
               str(tmp_path / "out"), "-q", env=env)
    assert res.returncode == 1, res.stderr
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    found = {(c["id"], f["metric"]): f["count"] for c in doc["checks"] for f in c["findings"]}
    assert found[("tokens.roundtrip", "stale_tokenization")] == PLANTED["stale"]
    assert found[("tokens.contamination", "contaminated_documents")] == \
        PLANTED["copied_exact"] + PLANTED["copied_near"]
    missing = _cli("run", str(tmp_path / "audit.yaml"), "--suite", str(suite), "--out",
                   str(tmp_path / "out2"), env={"HF_HUB_CACHE": str(tmp_path / "empty")})
    assert missing.returncode == 2
    assert "auditor/demo-bpe" in missing.stderr and "Hugging Face cache" in missing.stderr
    assert "Traceback" not in missing.stderr


def _suite(ids: list[str], folder: Path | None = None) -> Path:
    """A suite file running only ``ids`` with their default parameters."""
    import tempfile

    folder = folder or Path(tempfile.mkdtemp())
    path = folder / f"suite-{'-'.join(i.replace('.', '_') for i in ids)}.yaml"
    path.write_text("checks:\n" + "".join(f"  {i}: {{}}\n" for i in ids))
    return path


def test_datasets_feature_types_arrive_as_plain_polars_types(tmp_path):
    from datasets import Array2D, ClassLabel, Features, Value

    features = Features({"pixels": Array2D(shape=(2, 2), dtype="float32"),
                         "label": ClassLabel(names=["neg", "pos"]), "text": Value("string")})
    ds = datasets.Dataset.from_dict({"pixels": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]],
                                     "label": [0, 1], "text": ["a", "b"]}, features=features)
    ds.save_to_disk(str(tmp_path / "ds"))
    for df in (from_hf(ds, "train"), read_table(tmp_path / "ds")):
        assert df.schema == pl.Schema({"pixels": pl.List(pl.List(pl.Float32)),
                                       "label": pl.Int64, "text": pl.String})
        assert df["pixels"].to_list()[1] == [[5.0, 6.0], [7.0, 8.0]]


def test_a_dataset_dict_loaded_from_disk_is_audited_like_the_in_memory_one(tmp_path):
    frames = _planted_splits()
    datasets.DatasetDict({k: _ds(v) for k, v in frames.items()}).save_to_disk(
        str(tmp_path / "dd"))
    dd = datasets.load_from_disk(str(tmp_path / "dd"))  # memory-mapped tables
    report = auditor.audit(splits=dd, label="y", ids=["row_id"],
                           suite=str(_suite(["leakage.duplicates"], tmp_path)))
    assert list(report.datasets) == ["train", "validation", "test"]
    (finding,) = [f for f in report.check("leakage.duplicates").findings
                  if f.metric == "duplicate_rows" and f.splits == ["train", "test"]]
    assert finding.count == 7


def test_a_zero_row_dataset_folder_reads_as_an_empty_frame_with_its_columns(tmp_path):
    df = clean_frame(20, 1)
    _ds(df).select([]).save_to_disk(str(tmp_path / "empty"))
    assert json.loads((tmp_path / "empty" / "state.json").read_text())["_data_files"] == []
    out = read_table(tmp_path / "empty")
    assert out.height == 0 and out.schema == df.schema


def test_verify_ignores_the_cache_files_datasets_writes_next_to_a_loaded_split(tmp_path):
    """``load_from_disk(...).map/.filter/.shuffle`` writes cache-*.arrow into the split's folder:
    the audited data is unchanged, so verify is exit 0; a changed shard is still exit 1."""
    frames = _planted_splits()
    datasets.DatasetDict({k: _ds(v) for k, v in frames.items()}).save_to_disk(
        str(tmp_path / "dd"))
    (tmp_path / "audit.yaml").write_text(
        "datasets: dd\ncolumns: {label: y, ids: [row_id]}\n"
        f"suite: {_suite(['leakage.duplicates'], tmp_path)}\n")
    res = _cli("run", str(tmp_path / "audit.yaml"), "--out", str(tmp_path / "out"), "-q")
    assert res.returncode == 1, res.stderr
    report = str(tmp_path / "out" / "report.json")
    train = datasets.load_from_disk(str(tmp_path / "dd"))["train"]
    train.map(lambda r: {"z": 1}).shuffle(seed=1).flatten_indices()
    caches = sorted(p.name for p in (tmp_path / "dd" / "train").glob("cache-*.arrow"))
    assert caches, "datasets wrote no cache file: the test would prove nothing"
    res = _cli("verify", report)
    assert res.returncode == 0, res.stderr
    shard = tmp_path / "dd" / "test" / "data-00000-of-00001.arrow"
    _ds(frames["test"].head(100)).save_to_disk(str(tmp_path / "other"))
    shard.write_bytes((tmp_path / "other" / "data-00000-of-00001.arrow").read_bytes())
    res = _cli("verify", report)
    assert res.returncode == 1 and "CHANGED test:" in res.stderr
    assert "CHANGED train" not in res.stderr and "1 of 3 inputs changed" in res.stderr


def test_datasets_folder_path_expands_the_home_directory(tmp_path, monkeypatch):
    datasets.DatasetDict({"train": _ds(clean_frame(20, 1)), "test": _ds(clean_frame(20, 2))}
                         ).save_to_disk(str(tmp_path / "home" / "dd"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "audit.yaml").write_text("datasets: ~/dd\n")
    cfg = load_config(tmp_path / "audit.yaml")
    assert cfg.datasets == {"train": tmp_path / "home" / "dd" / "train",
                            "test": tmp_path / "home" / "dd" / "test"}


def test_the_integrations_import_nothing_heavy_until_used():
    """``import auditor.cli`` and the integration modules stay light: datasets, Great
    Expectations and pyarrow are imported by the functions that read or validate."""
    code = ("import sys, auditor, auditor.cli, auditor.loading.hf, auditor.integrations.gx, "
            "auditor.loading.tokenizers, "
            "auditor.container, auditor.detectors.expectations, auditor.signoff.provenance; "
            "print([m for m in ('datasets', 'great_expectations', 'pyarrow', 'pandas', "
            "'tokenizers', 'pyspark') if m in sys.modules])")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_the_memory_estimate_of_a_dataset_folder_counts_its_shards_not_its_caches(tmp_path):
    from auditor.loading.data import estimate_bytes

    _ds(clean_frame(2000, 1)).save_to_disk(str(tmp_path / "train"), num_shards=2)
    shards = sorted((tmp_path / "train").glob("data-*.arrow"))
    expected = sum(p.stat().st_size for p in shards)
    ds = datasets.load_from_disk(str(tmp_path / "train"))
    ds.map(lambda r: {"z": r["x1"] * 2}).shuffle(seed=0).flatten_indices()
    assert list((tmp_path / "train").glob("cache-*.arrow"))
    assert estimate_bytes(tmp_path / "train") == expected
