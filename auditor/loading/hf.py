"""Hugging Face ``datasets`` as splits: in-memory objects and ``save_to_disk`` folders.

What is accepted (the ``hf`` extra installs ``datasets``; reading folders needs only pyarrow):

- a ``datasets.Dataset`` handed to :func:`auditor.audit` (``train=ds``), and a ``DatasetDict``
  as ``splits=dd`` (its split names and order kept); an ``IterableDataset`` is refused (it
  would have to be streamed to the end: materialise it with ``Dataset.from_generator`` first);
- a ``Dataset.save_to_disk`` folder (``state.json`` + ``data-*-of-*.arrow``) as a split path;
- a ``DatasetDict.save_to_disk`` folder (``dataset_dict.json`` + one folder per split) as
  ``datasets: path/to/folder`` in audit.yaml, expanded to its splits in their saved order;
- a single Arrow *stream* file (what ``datasets`` writes, e.g. ``data-00000-of-00001.arrow``),
  told from an Arrow IPC *file* by its first bytes (a stream starts with the continuation
  marker 0xFFFFFFFF, an IPC file with ``ARROW1``).

Reading goes through Arrow without a pandas copy: the ``.arrow`` files are memory-mapped and read
with ``pyarrow.ipc.open_stream``, the table handed to ``polars.from_arrow``; an in-memory
``Dataset`` gives its Arrow table (with its indices mapping applied, e.g. after ``select`` or
``shuffle``). ``datasets`` and pyarrow are imported inside the functions that need them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from auditor.core.inputs import (DATASET_DICT, DATASET_INFO, DATASET_STATE,  # noqa: F401
                                 read_json, expand_dataset_dict, is_saved_dataset,  # noqa: F401
                                 is_saved_dataset_dict, saved_splits)
from auditor.errors import InputError

_STREAM_CONTINUATION = b"\xff\xff\xff\xff"  # every message of an Arrow (>= 0.15) stream


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else type(err).__name__


# ---------------------------------------------------------------------------------------------
# Folders and files written by datasets
# ---------------------------------------------------------------------------------------------

def is_arrow_stream(path: Path) -> bool:
    """True for an Arrow IPC *stream* file: it starts with a message's continuation marker
    (0xFFFFFFFF), where an IPC *file* starts with ``ARROW1``."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(_STREAM_CONTINUATION))
    except OSError:
        return False
    return head == _STREAM_CONTINUATION


def _stream_table(path: Path) -> Any:
    """The pyarrow Table of one Arrow stream file, memory-mapped (no copy of the buffers)."""
    import pyarrow as pa

    try:
        with pa.memory_map(str(path), "r") as source:
            return pa.ipc.open_stream(source).read_all()
    except Exception as err:  # ArrowInvalid and friends: one line for the user
        raise InputError(f"{path}: cannot read as an Arrow stream (the format datasets "
                         f"writes): {_first_line(err)}") from None


def _storage_only(table: Any) -> Any:
    """``table`` with Arrow extension columns (datasets' ``Array2D``..``Array5D``) replaced by
    their storage (nested lists), so polars sees plain types."""
    import pyarrow as pa

    if not any(isinstance(f.type, pa.ExtensionType) for f in table.schema):
        return table
    for i, f in enumerate(table.schema):
        if isinstance(f.type, pa.ExtensionType):
            col = table.column(i)
            storage = pa.chunked_array([c.storage for c in col.chunks], type=f.type.storage_type)
            table = table.set_column(i, pa.field(f.name, f.type.storage_type), storage)
    return table


def _to_polars(table: Any, where: str) -> pl.DataFrame:
    try:
        out = pl.from_arrow(_storage_only(table))
    except Exception as err:
        raise InputError(f"{where}: cannot convert the Arrow table to polars: "
                         f"{_first_line(err)}") from None
    if isinstance(out, pl.Series):  # from_arrow returns a Series for a bare array
        out = out.to_frame()
    return out


def read_arrow_stream(path: Path) -> pl.DataFrame:
    """One Arrow stream file as a DataFrame."""
    return _to_polars(_stream_table(path), str(path))


def _shard_names(path: Path) -> list[str]:
    """The shard file names ``state.json`` lists, in order (empty for a 0-row Dataset)."""
    state = read_json(path / DATASET_STATE)
    files = state.get("_data_files") if isinstance(state, dict) else None
    if not isinstance(files, list) or \
            not all(isinstance(f, dict) and isinstance(f.get("filename"), str) for f in files):
        raise InputError(f"{path / DATASET_STATE}: expected `_data_files` listing the Arrow "
                         "shards, as Dataset.save_to_disk writes it")
    if state.get("_indices_data_files"):
        raise InputError(f"{path}: saved with an indices mapping (an old datasets version); "
                         "re-save it with `ds.flatten_indices().save_to_disk(...)`")
    return [f["filename"] for f in files]


def saved_dataset_files(path: Path) -> list[Path] | None:
    """What a ``Dataset.save_to_disk`` folder's content is: ``state.json``, its listed shards
    and ``dataset_info.json`` (the features, the column types of a 0-row split); not the
    ``cache-*.arrow`` files ``datasets`` adds next to them whenever a loaded dataset is mapped,
    filtered or shuffled. None for any other folder or an unreadable state. Provenance hashes
    these, so ``auditor verify`` sees the data read, nothing else."""
    if not is_saved_dataset(path) or is_saved_dataset_dict(path):
        return None
    try:
        names = _shard_names(path)
    except InputError:
        return None
    info = [path / DATASET_INFO] if (path / DATASET_INFO).is_file() else []
    return [path / DATASET_STATE, *(path / n for n in names if (path / n).is_file()), *info]


def _empty_table(path: Path) -> Any:
    """A 0-row Dataset's table: ``save_to_disk`` writes no shard, only the features (in
    ``dataset_info.json``), which ``datasets`` turns into the Arrow schema."""
    info = read_json(path / DATASET_INFO) if (path / DATASET_INFO).is_file() else None
    features = info.get("features") if isinstance(info, dict) else None
    if not isinstance(features, dict):
        raise InputError(f"{path}: a Dataset saved with 0 rows and no features in "
                         "dataset_info.json: no columns to audit")
    try:
        from datasets import Features
    except ImportError:
        raise InputError(f"{path}: a Dataset saved with 0 rows; reading its columns from "
                         "dataset_info.json needs the hf extra: pip install "
                         "'auditor[hf]'") from None
    try:
        return Features.from_dict(features).arrow_schema.empty_table()
    except Exception as err:
        raise InputError(f"{path / DATASET_INFO}: unreadable features: "
                         f"{_first_line(err)}") from None


def read_saved_dataset(path: Path) -> pl.DataFrame:
    """A ``Dataset.save_to_disk`` folder as one DataFrame: its shards in ``state.json`` order.

    A ``DatasetDict`` folder is refused with the audit.yaml form that reads it.
    """
    if is_saved_dataset_dict(path):
        splits = ", ".join(saved_splits(path))
        raise InputError(f"{path}: is a DatasetDict folder (splits {splits}), not one split; "
                         f"use `datasets: {path}` in audit.yaml for all its splits, or "
                         f"{path}/<split> for one")
    names = _shard_names(path)
    if not names:
        return _to_polars(_empty_table(path), str(path))
    tables = []
    for name in names:
        shard = path / name
        if not shard.is_file():
            raise InputError(f"{shard}: shard listed in {DATASET_STATE} not found")
        tables.append(_stream_table(shard))
    import pyarrow as pa

    try:
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    except Exception as err:
        raise InputError(f"{path}: its shards do not share one schema: "
                         f"{_first_line(err)}") from None
    return _to_polars(table, str(path))


# ---------------------------------------------------------------------------------------------
# In-memory datasets objects
# ---------------------------------------------------------------------------------------------

def is_hf_object(obj: Any) -> bool:
    """A ``datasets`` object (checked by module, so ``datasets`` need not be imported)."""
    return type(obj).__module__.split(".", 1)[0] == "datasets"


def from_hf(obj: Any, name: str) -> pl.DataFrame:
    """A ``datasets.Dataset`` as a DataFrame through its Arrow table (indices applied)."""
    kind = type(obj).__name__
    if kind in ("IterableDataset", "IterableDatasetDict"):
        raise InputError(f"split {name!r}: a streaming {kind} cannot be audited as it is; "
                         "materialise it first (e.g. Dataset.from_generator or "
                         "load_dataset(..., streaming=False))")
    if kind == "DatasetDict":
        raise InputError(f"split {name!r}: got a whole DatasetDict "
                         f"({', '.join(map(str, obj))}); pass it as "
                         "audit(splits=dataset_dict) or pick one split")
    if not hasattr(obj, "with_format") or not hasattr(obj, "num_rows"):
        raise InputError(f"split {name!r}: expected a datasets.Dataset; got {kind}")
    try:
        # the arrow formatter applies the indices mapping (select/shuffle/filter) and returns
        # the underlying table slices; every column, whatever set_format chose to show
        table = obj.with_format("arrow")[:]
    except Exception as err:
        raise InputError(f"split {name!r}: cannot read the Dataset's Arrow table: "
                         f"{_first_line(err)}") from None
    return _to_polars(table, f"split {name!r}")
