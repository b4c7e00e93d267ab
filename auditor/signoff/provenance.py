"""Provenance: what a run audited, recorded in ``report.json`` so it can be verified later.

``inputs`` holds, per split (and the reference), the path, its size in bytes, a content hash,
the row count and the schema (column -> dtype) of what was read. Two hash modes:

- ``full`` (default): SHA-256 of every byte, streamed in 1 MiB blocks (a directory of Parquet
  files: SHA-256 over each file's relative path and bytes, in sorted order). Any change is seen.
- ``fast``: SHA-256 of the size, the modification time and, for Parquet, the footer (the
  schema, row-group statistics and offsets, which change with any rewrite of the data); for
  other formats the first and last 64 KiB. Reads kilobytes instead of the whole file: a
  change that keeps size, mtime and footer (or head and tail) is not seen.

``config`` is the resolved audit.yaml (column roles, suite, thresholds, waivers) plus every
check's resolved parameters; ``versions`` the tool's and its key dependencies' versions.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import threading
from pathlib import Path
from typing import Any, Iterable

HASH_MODES = ("full", "fast")
BLOCK = 1 << 20
EDGE = 64 << 10


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        # state.json + shards, not datasets' caches
        from auditor.loading.hf import saved_dataset_files

        saved = saved_dataset_files(path)
        if saved is not None:
            return saved
        return sorted(p for p in path.rglob("*") if p.is_file() and not any(
            part.startswith(".") for part in p.relative_to(path).parts))
    return [path]


class HashCancelled(Exception):
    """Raised inside :func:`content_hash` when its ``stop`` event is set."""


def _full(h: Any, path: Path, stop: threading.Event | None = None) -> None:
    with open(path, "rb") as fh:
        while block := fh.read(BLOCK):
            if stop is not None and stop.is_set():
                raise HashCancelled(str(path))
            h.update(block)


def _fast(h: Any, path: Path) -> None:
    st = path.stat()
    h.update(f"{st.st_size}:{st.st_mtime_ns}:".encode())
    with open(path, "rb") as fh:
        if st.st_size >= 12:
            fh.seek(-8, os.SEEK_END)
            tail = fh.read(8)
            if tail[4:] == b"PAR1":  # Parquet: 4-byte little-endian footer length, magic
                n = int.from_bytes(tail[:4], "little")
                if 0 < n <= st.st_size - 8:
                    fh.seek(-(8 + n), os.SEEK_END)
                    h.update(fh.read(n))
                    return
        fh.seek(0)
        h.update(fh.read(EDGE))
        if st.st_size > EDGE:
            fh.seek(max(EDGE, st.st_size - EDGE))
            h.update(fh.read(EDGE))


def content_hash(path: str | Path, mode: str = "full", stop: threading.Event | None = None
                 ) -> tuple[str, int]:
    """``("sha256:<hex>" or "fast:<hex>", total bytes)`` of a file or a directory of files;
    a set ``stop`` event ends a full hash between 1 MiB blocks (:class:`HashCancelled`)."""
    if mode not in HASH_MODES:
        from auditor.errors import ConfigError
        raise ConfigError(f"--hash must be one of {', '.join(HASH_MODES)}; got {mode!r}")
    path = Path(path)
    files = _files(path)
    h = hashlib.sha256()
    size = 0
    for f in files:
        if path.is_dir():
            h.update(f.relative_to(path).as_posix().encode() + b"\0")
        if mode == "full":
            _full(h, f, stop)
        else:
            _fast(h, f)
        size += f.stat().st_size
    return f"{'sha256' if mode == 'full' else 'fast'}:{h.hexdigest()}", size


class BackgroundHashes:
    """:func:`content_hash` of input paths, computed on a thread while the files are read.

    ``hashlib`` and file reads release the GIL, and so does polars' Parquet reader, so the
    hash of a split overlaps its loading instead of following it (a full SHA-256 of the 1M-row
    benchmark's files is ~0.3 s of one core). A path that is not a regular file or directory
    (a FIFO would block the thread forever) is not started; a path whose hash fails is left
    out. Either is hashed again by :meth:`get`, in the caller's thread, where its error
    surfaces as it would without the thread. :meth:`cancel` (the loader failed) stops the
    thread between 1 MiB blocks instead of letting it read the rest of the files.

    The hashes are taken while the files are read, before the checks run (minutes later): a
    file rewritten during its own read may be hashed before or after the rewrite, exactly as
    a hash taken right after loading could be."""

    def __init__(self, paths: Iterable[str | Path], mode: str) -> None:
        from auditor.core.inputs import check_input_path

        self.mode = mode
        self._done: dict[str, tuple[str, int]] = {}
        self._stop = threading.Event()
        todo = []
        for p in paths:
            try:
                check_input_path(p)
            except Exception:  # noqa: BLE001 - the loader reports it, with its own message
                continue
            todo.append(str(Path(p)))
        self._thread = threading.Thread(target=self._run, args=(todo,), daemon=True,
                                        name="provenance hashes")
        self._thread.start()

    def _run(self, paths: list[str]) -> None:
        for p in paths:
            if self._stop.is_set():
                return
            try:
                self._done[p] = content_hash(p, self.mode, self._stop)
            except Exception:  # noqa: BLE001 - hashed again by get(), which raises it there
                pass

    def cancel(self) -> None:
        """Stop hashing (between blocks) and wait for the thread to end."""
        self._stop.set()
        self._thread.join()

    def get(self, path: str | Path) -> tuple[str, int]:
        """The hash of ``path`` (waiting for the thread), or computed now if it has none."""
        self._thread.join()
        got = self._done.get(str(Path(path)))  # keys as Path spells them
        return got if got is not None else content_hash(path, self.mode)


def describe_inputs(data: Any, mode: str = "full", hashes: BackgroundHashes | None = None
                    ) -> dict[str, dict[str, Any]]:
    """``inputs`` of report.json for the loaded :class:`~auditor.loading.data.AuditData`;
    ``hashes`` (started with the same ``mode`` before loading) supplies hashes already taken."""
    from auditor.loading.data import REFERENCE

    frames = dict(data.splits)
    paths = dict(data.paths)
    if data.reference is not None:
        frames[REFERENCE] = data.reference
        paths[REFERENCE] = data.reference_path
    out: dict[str, dict[str, Any]] = {}
    for name, df in frames.items():
        path = paths.get(name)
        entry: dict[str, Any] = {"path": path, "bytes": None, "hash": None, "hash_mode": None}
        if path is not None and Path(path).exists():
            digest, size = (hashes.get(path) if hashes is not None and hashes.mode == mode
                            else content_hash(path, mode))
            entry.update(path=str(Path(path).resolve()), bytes=size, hash=digest,
                         hash_mode=mode)
        entry["rows"] = df.height
        entry["schema"] = {c: str(t) for c, t in df.schema.items()}
        if getattr(data, "sampled", False) and path is not None:
            entry["sampled"] = True
        out[name] = entry
    return out


KEY_PACKAGES = ("polars", "numpy", "scipy", "pyarrow", "pydantic", "jinja2")
IF_IMPORTED = ("sklearn", "torch", "tokenizers", "sentencepiece", "tiktoken", "datasets",
               "great_expectations", "sqlalchemy", "pandas")


def versions(extra: Iterable[str] = ()) -> dict[str, str]:
    """The tool's, Python's and key dependencies' versions (optional ones when imported)."""
    from importlib import metadata

    from auditor import __version__

    out = {"auditor": __version__, "python": platform.python_version(),
           "platform": f"{platform.system()}-{platform.machine()}"}
    dist = {"sklearn": "scikit-learn", "great_expectations": "great_expectations"}
    for name in (*KEY_PACKAGES, *[m for m in IF_IMPORTED if m in sys.modules], *extra):
        try:
            out[name] = metadata.version(dist.get(name, name))
        except metadata.PackageNotFoundError:
            continue
    return out


def is_url(target: str) -> bool:
    return "://" in target


def shown(target: str) -> str:
    """The ledger's name for messages and pages: a URL's password replaced by ``***`` (error
    lines and history.html end up in CI logs and uploaded artifacts)."""
    import re

    return re.sub(r"^([^:/?#]+://[^/?#@]*?:)[^/?#@]*@", r"\1***@", target) \
        if is_url(target) else target


def resolved_config(cfg: Any, checks: list[Any]) -> dict[str, Any]:
    """The resolved audit.yaml as JSON (paths absolute) plus each check's parameters."""
    from auditor.core.checks import params_of

    doc = cfg.model_dump(mode="json")
    if isinstance(doc.get("ledger"), str):  # a database URL's password stays out of reports
        doc["ledger"] = shown(doc["ledger"])
    doc["check_params"] = {c.id: params_of(c) for c in checks}
    return doc


CONFIG_HASH_IGNORES = ("datasets", "reference")


def config_hash(config: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a resolved config without the data paths (a nightly
    snapshot has new paths by design; the inputs are recorded on their own): the ledger's way
    to tell runs under the same roles, suite, thresholds and waivers."""
    kept = {k: v for k, v in config.items() if k not in CONFIG_HASH_IGNORES}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()
