"""Loading splits with polars, resolving column roles once, and caching shared work.

``open_splits`` turns file paths (or in-memory frames) into an :class:`AuditData`: every split
read with a lazy scan and collected once, dtypes harmonised across splits (so a row hashes the
same in train and in test), column roles resolved (label, time, groups, ids, text, features =
the rest), and schema differences recorded for the ``schema.consistency`` check. Problems that
make the audit impossible raise :class:`~auditor.errors.InputError` naming the file and column.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from auditor.core.config import AuditConfig, Columns, CsvFormat, Tokens
from auditor.core.roles import (REFERENCE, ColumnType, Kind, LabelKind, SchemaIssue,
                                harmonise_types, kind_of_type, label_kind_of, resolve_features)
from auditor.core.splits import (LoadedSplits, TokenType, check_declared_columns,
                                 check_token_types)
from auditor.errors import InputError



@dataclass
class SplitInfo:
    name: str
    path: str | None
    rows: int
    columns: int


# ---------------------------------------------------------------------------------------------
# Reading files
# ---------------------------------------------------------------------------------------------

_PARQUET = (".parquet", ".pq")
_CSV = (".csv", ".tsv", ".txt")
_JSONL = (".jsonl", ".ndjson", ".json")
_IPC = (".arrow", ".ipc", ".feather")
_COMPRESSED = (".gz", ".gzip", ".zst", ".zstd")


def _format_of(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    ext = suffixes[-1] if suffixes else ""
    for fmt, exts in (("parquet", _PARQUET), ("csv", _CSV), ("jsonl", _JSONL), ("ipc", _IPC)):
        if ext in exts:
            return fmt
    raise InputError(f"{path}: unsupported file type {ext or '(no extension)'!r}; expected "
                     "Parquet, CSV, JSON Lines, Arrow IPC (optionally .gz/.zst) or a directory "
                     "of Parquet files")


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else type(err).__name__


# Cells read as null in CSV/TSV files (every column): what R, pandas and spreadsheet exports
# write for a missing value. Without them five "NA" cells turn a numeric column into text.
# A category that is literally "NA", "None" or "-" is read as missing too.
CSV_NULL_VALUES = ["", "NA", "N/A", "n/a", "NaN", "nan", "null", "NULL", "None", "-"]


def scan_table(path: Path, csv: CsvFormat | None = None) -> pl.LazyFrame:
    """A lazy scan of one split file or a directory of Parquet files (skipping what Spark,
    Hive and pyarrow skip: path parts starting with ``.`` or ``_``); a CSV/TSV file with the
    delimiter and decimal mark of ``csv``. Anything that is not a regular file or directory
    (a FIFO would block forever) is refused."""
    from auditor.core.inputs import check_input_path, data_files

    check_input_path(path)
    if path.is_dir():
        from auditor.loading import hf  # a datasets save_to_disk folder (Arrow stream shards)
        if hf.is_saved_dataset(path) or hf.is_saved_dataset_dict(path):
            return hf.read_saved_dataset(path).lazy()
        files = data_files(path, _PARQUET)
        if not files:
            raise InputError(f"{path}: directory contains no Parquet files (*.parquet) and is "
                             "not a datasets save_to_disk folder (no state.json or "
                             "dataset_dict.json)")
        return pl.scan_parquet([str(p) for p in files])
    fmt = _format_of(path)
    if fmt == "parquet":
        return pl.scan_parquet(path)
    if fmt == "ipc":
        from auditor.loading import hf  # datasets writes Arrow *stream* files named *.arrow
        return hf.read_arrow_stream(path).lazy() if hf.is_arrow_stream(path) \
            else pl.scan_ipc(path)
    if fmt == "jsonl":
        return pl.scan_ndjson(path, infer_schema_length=10_000)
    csv = csv or CsvFormat()
    options = dict(separator=csv.separator(path), infer_schema_length=10_000,
                   try_parse_dates=True, null_values=CSV_NULL_VALUES,
                   decimal_comma=csv.decimal == ",")
    if path.suffix.lower() in _CSV and _cr_only_line_ends(path):
        import io  # classic-Mac line ends: polars would read one long header line

        text = path.read_bytes().replace(b"\r", b"\n")
        try:
            df = pl.read_csv(io.BytesIO(text), **options)  # type: ignore[arg-type]
        except Exception as err:
            raise InputError(f"{path}: cannot read as CSV (CR line ends): "
                             f"{_first_line(err)}") from None
        return df.lazy()
    return pl.scan_csv(path, **options)  # type: ignore[arg-type]


def _cr_only_line_ends(path: Path) -> bool:
    """True when the file's first 64 KiB hold a carriage return and no line feed."""
    with path.open("rb") as fh:
        head = fh.read(65536)
    return b"\r" in head and b"\n" not in head


_FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "jsonl": "JSON Lines", "ipc": "Arrow IPC"}


def read_table(path: Path, csv: CsvFormat | None = None) -> pl.DataFrame:
    """Read one split into memory (collect once); any reader error becomes one InputError."""
    lf = scan_table(path, csv)
    fmt = "parquet" if path.is_dir() else _format_of(path)
    try:
        df = _collect_columns(lf) if fmt == "parquet" else lf.collect()
    except InputError:
        raise
    except Exception as err:  # polars raises many types; the user needs one line
        reason = _first_line(err)
        if "utf-8" in reason.lower() or "utf8" in reason.lower():
            reason += " (expected UTF-8 text; re-encode the file, e.g. with iconv)"
        if fmt == "csv":
            reason += _delimiter_hint(path, (csv or CsvFormat()).separator(path))
        raise InputError(f"{path}: cannot read as {_FORMAT_NAMES[fmt]}: {reason}") from None
    if fmt == "csv":
        _check_csv_shape(path, df, (csv or CsvFormat()).separator(path))
        if csv is not None and csv.decimal == ",":
            df = thousands_to_numbers(df)
    # one chunk per column: a directory of files loads as many chunks, and every later
    # quantile, sort or gather would otherwise rechunk (copy) the columns it touches
    return df.rechunk() if df.n_chunks() > 1 else df


# Bytes of one batch of columns read together: the batch is held twice while it is made one
# chunk per column (row-group chunks, then the contiguous copy), so this bounds what loading
# adds to the frame's own size.
BATCH_BYTES = 64 * 1024**2


def _fixed_width(dtype: pl.DataType) -> int | None:
    """Bytes per row of a fixed-width dtype (an upper bound), None for variable widths."""
    if dtype == pl.Null:
        return 0
    if dtype.is_decimal() or dtype in (pl.Int128, pl.UInt128):
        return 16
    if dtype.is_numeric() or dtype.is_temporal() or dtype == pl.Boolean:
        return 8
    return None


def _collect_columns(lf: pl.LazyFrame) -> pl.DataFrame:
    """A Parquet scan collected in batches of adjacent columns of about ``BATCH_BYTES``, each
    batch made one chunk per column before the next is read. Equal to
    ``lf.collect().rechunk()``, but that holds every column twice at once (the row-group
    chunks and the contiguous copy: 2.6x the frame's size at its peak) and costs more CPU;
    here the peak is the frame plus about two batches. Batches, not single columns: every
    collect parses the file's footer, so one collect per column made loading quadratic in
    the number of columns (10,000 columns of 50 rows: 79 s; one batch: 0.1 s).

    A batch's size is estimated before it is read: rows x width for fixed-width dtypes, and
    for a variable-width dtype (text, lists) the bytes per row measured on the columns of that
    dtype already read; a column of a dtype not yet measured is read alone."""
    schema = lf.collect_schema()
    names, dtypes = schema.names(), schema.dtypes()
    if not names:
        return lf.collect()
    rows = lf.select(pl.len()).collect().item()
    measured: dict[pl.DataType, tuple[int, int]] = {}  # dtype -> (bytes, columns) read so far

    def row_bytes(dtype: pl.DataType) -> float | None:
        width = _fixed_width(dtype)
        if width is None and dtype in measured:
            size, count = measured[dtype]
            width = size / (count * max(rows, 1))
        return width

    parts = []
    start = 0
    while start < len(names):  # by position: a name may read as a regex or wildcard
        stop, size = start, 0.0
        while stop < len(names):
            width = row_bytes(dtypes[stop])
            if stop > start and (width is None or size + width * rows > BATCH_BYTES):
                break
            size += (width or 0.0) * rows
            stop += 1
        part = lf.select(pl.nth(range(start, stop))).collect()
        part = part.rechunk() if part.n_chunks() > 1 else part
        for s in part.iter_columns():
            if _fixed_width(s.dtype) is None:
                size, count = measured.get(s.dtype, (0, 0))
                measured[s.dtype] = (size + s.estimated_size(), count + 1)
        parts.append(part)
        start = stop
    # horizontal concat keeps every name as read (a dict or list would rename "" columns)
    return parts[0] if len(parts) == 1 else pl.concat(parts, how="horizontal")


_GROUPED = r"^-?\d{1,3}(\.\d{3})+(,\d+)?$"  # 1.234,5: a '.' between groups of thousands
_PLAIN = r"^-?\d+(,\d+)?$"


def thousands_to_numbers(df: pl.DataFrame) -> pl.DataFrame:
    """Text columns of a decimal-comma file whose every value is a number, some written with
    '.' between groups of thousands (``1.234,5``: polars' decimal comma reads those as text),
    as Float64."""
    todo = []
    for c, dtype in df.schema.items():
        if dtype != pl.String:
            continue
        v = df[c].drop_nulls()
        if v.len() and bool(v.str.contains(_GROUPED).any()) and bool(
                (v.str.contains(_GROUPED) | v.str.contains(_PLAIN)).all()):
            todo.append(c)
    return df.with_columns(pl.col(c).str.replace_all(".", "", literal=True)
                           .str.replace(",", ".", literal=True).cast(pl.Float64)
                           for c in todo) if todo else df


def _delimiter_hint(path: Path, delimiter: str) -> str:
    """`` (the header ... set csv: ...)`` when the file's first line holds another usual
    delimiter and not the expected one (a ';' file with decimal commas fails in the reader
    itself: "found more fields than defined in 'Schema'"), else ``""``."""
    if path.suffix.lower() not in _CSV:
        return ""
    try:
        with path.open("rb") as fh:
            header = fh.readline(65536).decode("utf-8", "replace")
    except OSError:
        return ""
    for sep in (";", "\t", "|", ","):
        if sep != delimiter and sep in header and delimiter not in header:
            return (f" (the header is split by {sep!r}, not {delimiter!r}: set csv: "
                    f"{{delimiter: {sep!r}}} in audit.yaml, or --csv-delimiter {sep!r}; "
                    "add decimal: ',' for decimal commas)")
    return ""


def _check_csv_shape(path: Path, df: pl.DataFrame, delimiter: str = ",") -> None:
    """Catch what polars reads silently: a wrong delimiter, duplicate header names (renamed
    ``x_duplicated_0``), and a truncated last line (fewer fields than the header)."""
    if df.width == 1:
        name = df.columns[0]
        for sep in (";", "\t", "|", ","):
            if sep in name and sep != delimiter:
                raise InputError(f"{path}: read one column named {name[:60]!r}: the file seems "
                                 f"to use {sep!r} as delimiter, expected {delimiter!r} (set "
                                 f"csv: {{delimiter: {sep!r}}} in audit.yaml, or "
                                 f"--csv-delimiter {sep!r})")
    for col in df.columns:
        base, dup, _ = col.rpartition("_duplicated_")
        if dup and base in df.columns:
            raise InputError(f"{path}: duplicate column name {base!r} in the header")
    if path.suffix.lower() not in (".csv", ".tsv", ".txt"):
        return  # compressed: the reader already validated the stream
    size = path.stat().st_size
    with path.open("rb") as fh:
        fh.seek(max(0, size - 65536))
        tail = fh.read().replace(b"\r", b"\n")  # CR-only line ends count as line ends
    if tail and not tail.endswith(b"\n"):
        last = tail.rsplit(b"\n", 1)[-1]
        sep = delimiter.encode()
        if b'"' not in last and last.count(sep) + 1 < df.width:
            raise InputError(f"{path}: the file looks truncated: its last line has "
                             f"{last.count(sep) + 1} of {df.width} fields and no line end")


def _pandas_culprit(df: Any) -> str:
    """``column 'c' (object dtype holding int, str): `` for the first column polars cannot
    convert on its own (mixed Python types in an object column, most often), else ``""``."""
    for col in df.columns:
        try:
            pl.from_pandas(df[[col]])
        except Exception:
            s = df[col]
            kinds = sorted({type(v).__name__ for v in s.dropna().head(10_000)}) \
                if s.dtype == object else []
            held = f" holding {', '.join(kinds[:4])}" if kinds else ""
            return (f"column {str(col)[:60]!r} ({s.dtype} dtype{held}; cast it to one type, "
                    "e.g. .astype(str)): ")
    return ""


def to_polars(obj: Any, name: str) -> pl.DataFrame:
    """Accept a polars DataFrame/LazyFrame, a pandas DataFrame, or a path."""
    if isinstance(obj, pl.DataFrame):
        return obj
    if isinstance(obj, pl.LazyFrame):
        return obj.collect()
    if isinstance(obj, (str, Path)):
        return read_table(Path(obj))
    if type(obj).__module__.split(".", 1)[0] == "datasets":  # Hugging Face Dataset
        from auditor.loading.hf import from_hf
        return from_hf(obj, name)
    if type(obj).__module__.startswith("pandas"):
        seen: set[str] = set()  # polars names columns str(label): 0 and "0" would collide
        for col in getattr(obj, "columns", ()):
            if str(col) in seen:
                raise InputError(f"split {name!r}: column {str(col)[:60]!r} occurs twice in the "
                                 "pandas DataFrame (column labels compared as text); rename "
                                 "one of them")
            seen.add(str(col))
        try:
            return pl.from_pandas(obj)
        except Exception as err:
            raise InputError(f"split {name!r}: cannot convert pandas DataFrame: "
                             f"{_pandas_culprit(obj)}{_first_line(err)}") from None
    raise InputError(f"split {name!r}: expected a polars/pandas DataFrame or a file path; "
                     f"got {type(obj).__name__}")


# ---------------------------------------------------------------------------------------------
# Dtype harmonisation
# ---------------------------------------------------------------------------------------------

def kind_of(dtype: pl.DataType) -> Kind:
    """How a polars column is treated (:func:`auditor.core.roles.kind_of_type`)."""
    return kind_of_type(type_of(dtype))


def type_of(dtype: pl.DataType) -> ColumnType:
    """A polars dtype in the engine-free words of :class:`~auditor.core.roles.ColumnType`."""
    if dtype == pl.Null:
        return ColumnType.NULL
    if dtype == pl.Boolean:
        return ColumnType.BOOLEAN
    if dtype.is_integer():
        return ColumnType.INTEGER
    if dtype.is_float():
        return ColumnType.FLOAT
    if isinstance(dtype, pl.Decimal):
        return ColumnType.DECIMAL
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, (pl.Categorical, pl.Enum)):
        return ColumnType.STRING
    if isinstance(dtype, pl.Date):
        return ColumnType.DATE
    if isinstance(dtype, pl.Datetime):
        return ColumnType.DATETIME_TZ if dtype.time_zone else ColumnType.DATETIME
    if isinstance(dtype, pl.Duration):
        return ColumnType.DURATION
    if isinstance(dtype, (pl.List, pl.Array, pl.Struct)):
        return ColumnType.NESTED
    return ColumnType.OTHER


def _target_dtype(target: ColumnType, shared: bool, dtypes: list[pl.DataType]
                  ) -> pl.DataType:
    """The polars dtype of a column read as ``target`` (:func:`auditor.core.roles.
    harmonise_types`) whose per-split dtypes are ``dtypes``: strings (and categoricals) as
    String, else the dtype itself when every split that holds values has the same one
    (``shared``), else the common type as polars names it."""
    if target == ColumnType.STRING:
        return pl.String()
    if shared:
        return next(d for d in dtypes if d != pl.Null)
    return _POLARS_TYPE[target]


_POLARS_TYPE: dict[ColumnType, pl.DataType] = {
    ColumnType.INTEGER: pl.Int64(), ColumnType.FLOAT: pl.Float64(),
    ColumnType.DECIMAL: pl.Float64(), ColumnType.DURATION: pl.Float64(),
    ColumnType.BOOLEAN: pl.Boolean(), ColumnType.STRING: pl.String(),
    ColumnType.DATE: pl.Date(), ColumnType.DATETIME: pl.Datetime("us"),
    ColumnType.DATETIME_TZ: pl.Datetime("us", "UTC")}


def _cast(src: pl.DataType, col: str, dtype: pl.DataType) -> pl.Expr:
    if isinstance(dtype, pl.Datetime) and dtype.time_zone and isinstance(src, pl.Datetime):
        if src.time_zone is None:
            return pl.col(col).dt.replace_time_zone("UTC").dt.cast_time_unit("us")
        return pl.col(col).dt.convert_time_zone("UTC").dt.cast_time_unit("us")
    if isinstance(dtype, pl.Datetime) and dtype.time_zone and isinstance(src, pl.Date):
        return pl.col(col).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    return pl.col(col).cast(dtype)


# ---------------------------------------------------------------------------------------------
# AuditData
# ---------------------------------------------------------------------------------------------

class AuditData(LoadedSplits):
    """The loaded splits as polars frames (in time order of use), their column roles and cached
    shared work.

    Detectors read from it and never mutate it. Cached work (row hashes) is shared by checks.
    """

    def __init__(self, splits: dict[str, pl.DataFrame], *, columns: Columns,
                 tokens: Tokens | None = None, paths: dict[str, str | None] | None = None,
                 reference: pl.DataFrame | None = None, reference_path: str | None = None,
                 seed: int = 0, kinds: dict[str, Kind] | None = None,
                 features: list[str] | None = None,
                 schema_issues: list[SchemaIssue] | None = None) -> None:
        super().__init__(splits, columns=columns, tokens=tokens, paths=paths, seed=seed,
                         kinds=kinds, features=features, schema_issues=schema_issues)
        self.splits: dict[str, pl.DataFrame] = splits
        self.reference: pl.DataFrame | None = reference
        self.reference_path = reference_path
        self.csv = CsvFormat()  # how its CSV split files are written (audit.yaml csv:)
        self._hash_cache: dict[tuple[str, tuple[str, ...]], pl.Series] = {}

    # -- structure -----------------------------------------------------------------------------
    def rows(self, split: str) -> int:
        return self.splits[split].height

    def first_schema(self) -> dict[str, tuple[ColumnType, str]]:
        return {c: (type_of(t), str(t))
                for c, t in next(iter(self.splits.values())).schema.items()}

    def info(self) -> dict[str, dict[str, Any]]:
        out = {name: {"path": self.paths.get(name), "rows": df.height, "columns": df.width}
               for name, df in self.splits.items()}
        if self.reference is not None:
            out[REFERENCE] = {"path": self.reference_path, "rows": self.reference.height,
                              "columns": self.reference.width, "role": "reference"}
        return out

    def _detect_label_kind(self) -> LabelKind | None:
        y = self.label
        if not y:
            return None
        values = pl.concat([df.select(pl.col(y)) for df in self.splits.values()])[y]
        if values.dtype.is_float():  # NaN is a missing label, not a class
            values = values.fill_nan(None)
        values = values.drop_nulls()
        return label_kind_of(values.n_unique(), numeric=values.dtype.is_numeric(),
                             fractional=values.dtype.is_float()
                             and not (values == values.round(0)).all())

    @cached_property
    def unlabelled(self) -> tuple[str, ...]:  # type: ignore[override]
        """The splits whose label is missing (null, or NaN) in every row."""
        y = self.label
        if not y:
            return ()
        return tuple(n for n, df in self.splits.items()
                     if y in df.columns and df.height and labelled_rows(df, y) == 0)

    # -- cached shared work -------------------------------------------------------------------
    def release(self, prefix: str) -> None:
        """Drop the cached entries whose key's first part starts with ``prefix``: a check's
        own intermediate results (``duplicates.``: normalised copies of every column), once
        no later check reads them, so that their memory serves the next checks instead of
        adding to the peak."""
        for key in [k for k in self._cache if isinstance(k, tuple) and k
                    and isinstance(k[0], str) and k[0].startswith(prefix)]:
            del self._cache[key]

    def row_hashes(self, split: str, columns: list[str]) -> pl.Series:
        """64-bit hash of each row over ``columns`` (seeded; same dtype -> same hash in every
        split). -0.0 and 0.0 hash alike, as do NaN and NaN, and null and null."""
        key = (split, tuple(columns))
        if key not in self._hash_cache:
            frame = self.splits[split].select(columns)
            self._hash_cache[key] = frame.hash_rows(seed=self.seed % (2**32))
        return self._hash_cache[key]


def _harmonise(frames: dict[str, pl.DataFrame], columns: Columns, tokens: Tokens | None,
               paths: dict[str, str | None]) -> tuple[dict[str, pl.DataFrame], dict[str, Kind],
                                                      list[SchemaIssue]]:
    """Cast each shared column to one dtype across splits (the engine-free rule of
    :func:`auditor.core.roles.harmonise_types`); record what could not be."""
    # polars builds a new Schema on every `.schema` access: read each split's once (a lookup
    # per column inside the loop would make loading quadratic in the number of columns)
    schemas = {n: dict(df.schema) for n, df in frames.items()}
    got = harmonise_types({n: {c: type_of(d) for c, d in sc.items()} for n, sc in schemas.items()},
                          {n: {c: str(d) for c, d in sc.items()} for n, sc in schemas.items()},
                          token_cols=set(tokens.columns()) if tokens else set(), paths=paths,
                          target_name=lambda t: str(_POLARS_TYPE[t]))
    to = {col: _target_dtype(target, shared, [sc[col] for sc in schemas.values()])
          for col, (target, shared) in got.targets.items()}
    out = {}
    for n, df in frames.items():
        casts = {col: _cast(schemas[n][col], col, t).alias(col) for col, t in to.items()
                 if schemas[n][col] != t}
        try:
            out[n] = df.with_columns(list(casts.values())) if casts else df
        except Exception as err:
            col = next(iter(casts))
            raise InputError(f"{paths.get(n) or n}: cannot convert column {col!r} to a type "
                             f"shared with the other splits: {_first_line(err)}") from None
    return out, got.kinds, got.issues


def _check_roles(frames: dict[str, pl.DataFrame], columns: Columns, tokens: Tokens | None,
                 paths: dict[str, str | None]) -> None:
    """No split is empty and declared columns exist in every split (else the audit cannot run:
    exit 2; :func:`~auditor.core.splits.check_declared_columns`)."""
    for name, df in frames.items():
        if df.height == 0:  # an in-memory split was named twice: "split 'test': split 'test'"
            raise InputError(f"{paths[name]}: split {name!r} has 0 rows" if paths.get(name)
                             else f"split {name!r} has 0 rows")
    check_declared_columns({n: df.columns for n, df in frames.items()}, columns, tokens, paths)


def build_audit_data(frames: dict[str, pl.DataFrame], *, columns: Columns,
                     tokens: Tokens | None = None, paths: dict[str, str | None] | None = None,
                     reference: pl.DataFrame | None = None, reference_path: str | None = None,
                     seed: int = 0) -> AuditData:
    """Validate roles, harmonise dtypes across splits (and the reference), resolve features."""
    paths = dict(paths or {n: None for n in frames})
    if REFERENCE in frames:
        raise InputError(f"split name {REFERENCE!r} is reserved for the reference dataset")
    frames, reference, columns, tokens, renamed = _rename_reserved(frames, reference, columns,
                                                                   tokens)
    _check_roles(frames, columns, tokens, paths)
    frames = {n: _parse_time_strings(df, columns.time, paths.get(n) or n)
              for n, df in frames.items()}
    all_frames = dict(frames)
    if reference is not None:
        _check_roles({REFERENCE: reference}, columns, None, {REFERENCE: reference_path})
        reference = _parse_time_strings(reference, columns.time, reference_path or REFERENCE)
        all_frames[REFERENCE] = reference
        paths[REFERENCE] = reference_path
    all_frames, converted = _plain_types(all_frames, columns, paths)
    all_frames = _empty_label(all_frames, columns.label, paths)
    check_token_types({n: {c: (token_type(t), str(t)) for c, t in df.schema.items()}
                       for n, df in frames.items()}, tokens, paths)
    harmonised, kinds, issues = _harmonise(all_frames, columns, tokens, paths)
    _one_label_type(issues, columns.label, paths)
    ref = harmonised.pop(REFERENCE, None)
    _check_label(harmonised, columns, paths)
    first = dict(next(iter(harmonised.values())).schema)
    features = resolve_features(list(first), kinds, {c: str(d) for c, d in first.items()},
                                columns, tokens, issues)
    # No feature column is no reason to stop: duplicate, group, id, temporal and label checks
    # need none; the checks that do say so as ``skipped`` (NotApplicable).
    issues += _label_nulls(harmonised, columns.label)
    issues += renamed + converted
    return AuditData(harmonised, columns=columns, tokens=tokens, paths=paths, reference=ref,
                     reference_path=reference_path, seed=seed, kinds=kinds, features=features,
                     schema_issues=issues)


def _plain_types(frames: dict[str, pl.DataFrame], columns: Columns,
                 paths: dict[str, str | None]) -> tuple[dict[str, pl.DataFrame],
                                                        list[SchemaIssue]]:
    """Decimal columns are audited as Float64 and Duration columns as Float64 seconds (several
    checks cast, rank or print values, which polars does not do for every Decimal or Duration
    combination); a time, group or id column holding lists, structs or bytes is an input
    error: it cannot order rows or name an entity."""
    nested = (pl.List, pl.Array, pl.Struct, pl.Binary, pl.Object)
    roles = [("time", columns.time)] if columns.time else []
    roles += [("group", c) for c in columns.groups] + [("id", c) for c in columns.ids]
    done: dict[str, str] = {}
    out = {}
    for name, df in frames.items():
        for role, col in roles:
            dtype = df.schema.get(col)
            if dtype is not None and (isinstance(dtype, nested) or dtype in nested):
                want = ("dates, datetimes, numbers or ISO 8601 text" if role == "time" else
                        "values that name an entity (numbers, strings, dates)")
                raise InputError(f"{paths.get(name) or name}: {role} column {col!r} has type "
                                 f"{dtype}; expected {want}")
        casts = []
        for col, dtype in df.schema.items():
            if dtype.is_decimal():
                casts.append(pl.col(col).cast(pl.Float64))
                done.setdefault(col, f"column {col!r} ({dtype}) is audited as Float64")
            elif isinstance(dtype, pl.Duration):
                casts.append(pl.col(col).dt.total_microseconds().cast(pl.Float64) / 1e6)
                done.setdefault(col, f"column {col!r} ({dtype}) is audited as a number of "
                                     "seconds (Float64)")
        out[name] = df.with_columns(casts) if casts else df
    return out, [SchemaIssue("info", c, "converted", m) for c, m in done.items()]


def _one_label_type(issues: list[SchemaIssue], label: str | None,
                    paths: dict[str, str | None]) -> None:
    """A label typed incompatibly across splits (numbers in one, text in another) is an input
    error: every label check compares classes across splits."""
    bad = next((i for i in issues if label and i.column == label and i.problem == "dtype"),
               None)
    if bad is None:
        return
    first = next(iter(bad.dtypes))
    raise InputError(f"{paths.get(first) or first}: label column {label!r} has incompatible "
                     f"types across splits ({', '.join(f'{n}: {d}' for n, d in bad.dtypes.items())}"
                     "); a label needs one kind in every split: all numbers, all text or all "
                     "booleans")


def _empty_label(frames: dict[str, pl.DataFrame], label: str | None,
                 paths: dict[str, str | None]) -> dict[str, pl.DataFrame]:
    """A label with no value in a split (null or NaN in every row; an empty CSV column reads
    as text) is typed Null there, so it takes the other splits' type; a label empty in every
    split is an input error: nothing label-based can be audited."""
    if not label:
        return frames
    empty = {n for n, df in frames.items()
             if df[label].null_count() + (int(df[label].is_nan().sum())
                                          if df.schema[label].is_float() else 0) == df.height}
    if not empty:
        return frames
    if len(empty) == len(frames):
        name = next(iter(frames))
        raise InputError(f"{paths.get(name) or name}: label column {label!r} is empty (no "
                         f"value in any of its {frames[name].height:,} rows, nor in the other "
                         "splits); point the label at a column with values, or declare none")
    return {n: df.with_columns(pl.lit(None).alias(label)) if n in empty else df
            for n, df in frames.items()}


def token_type(dtype: pl.DataType) -> TokenType:
    """A polars type as the token checks see it (:func:`~auditor.core.splits.check_token_types`)."""
    inner = dtype.inner if isinstance(dtype, (pl.List, pl.Array)) else None
    if dtype == pl.Null:
        return TokenType.NULL
    if inner is not None and (inner.is_numeric() or inner in (pl.Boolean, pl.Null)):
        return TokenType.NUMBERS
    if isinstance(dtype, pl.List) and isinstance(inner, pl.Struct) \
            and {"role", "content"} <= {f.name for f in inner.fields}:
        return TokenType.MESSAGES
    return TokenType.TEXT if dtype == pl.String else TokenType.OTHER


def _rename_reserved(frames: dict[str, pl.DataFrame], reference: pl.DataFrame | None,
                     columns: Columns, tokens: Tokens | None) -> tuple[
                         dict[str, pl.DataFrame], pl.DataFrame | None, Columns, Tokens | None,
                         list[SchemaIssue]]:
    """User columns named "" or with the prefix of internal helper columns are renamed (see
    :mod:`auditor.core.colnames`); declared roles follow; each rename is reported."""
    from auditor.core.colnames import COLUMN_ROLES, TOKEN_ROLES, rename_map, renamed_roles

    everything = [*frames.values(), *([reference] if reference is not None else [])]
    mapping = rename_map(df.columns for df in everything)
    if not mapping:
        return frames, reference, columns, tokens, []

    def rename(df: pl.DataFrame) -> pl.DataFrame:
        return df.rename({k: v for k, v in mapping.items() if k in df.columns})

    issues = [SchemaIssue("info", new, "renamed",
                          f"column {old!r} is audited as {new!r}: names that are empty, start "
                          "with '__auditor_' (the auditor's own helper columns) or read as a "
                          "pattern ('*', '^...$') are renamed")
              for old, new in mapping.items()]
    return ({n: rename(df) for n, df in frames.items()},
            rename(reference) if reference is not None else None,
            renamed_roles(columns, mapping, COLUMN_ROLES),
            renamed_roles(tokens, mapping, TOKEN_ROLES), issues)


def labelled_rows(df: pl.DataFrame, label: str) -> int:
    """Rows of ``df`` whose label is neither null nor NaN."""
    n = df.height - df[label].null_count()
    if df.schema[label].is_float():
        n -= int(df[label].is_nan().sum())
    return n


def _label_nulls(frames: dict[str, pl.DataFrame], label: str | None) -> list[SchemaIssue]:
    if not label:
        return []
    out = []
    for name, df in frames.items():
        n = df.height - labelled_rows(df, label)
        if n and n == df.height and name != next(iter(frames)):
            out.append(SchemaIssue(  # a later split without labels: scored elsewhere, normal
                "info", label, "label_nulls",
                f"label {label!r} is missing in every {name} row ({n:,}): an unlabelled "
                f"split; label-based checks leave it out", splits=[name]))
        elif n:
            out.append(SchemaIssue(
                "warn", label, "label_nulls",
                f"label {label!r} is missing in {n:,} of {df.height:,} {name} rows "
                f"({100 * n / df.height:.1f}%); label-based checks use labelled rows only",
                splits=[name]))
    return out


# an ISO 8601 time of day followed by a zone designator (Z or an offset such as +01:00)
_ZONED = r"\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\s*(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$"


def _parse_time_strings(df: pl.DataFrame, col: str | None, where: str) -> pl.DataFrame:
    """A declared time column stored as text is parsed (ISO 8601, offsets converted to UTC);
    a value that does not parse is an input error naming it."""
    if not col or df.schema[col] != pl.String:
        return df
    raw = df[col].str.strip_chars()
    raw = raw.set(raw == "", None)  # a blank cell is a missing time, not a bad one
    aware = raw.str.contains(_ZONED)
    if aware.any() and (~aware).any():
        a, b = raw.filter(aware)[0], raw.filter(~aware)[0]
        raise InputError(f"{where}: time column {col!r} mixes time-zone-aware values (e.g. "
                         f"{a[:40]!r}) with naive ones (e.g. {b[:40]!r}); make them "
                         "consistent: an offset (+01:00 or Z) on every value, or on none")
    parsed = None
    for kwargs in ({"time_zone": "UTC"}, {}):
        try:
            parsed = raw.str.to_datetime(strict=False, time_unit="us", **kwargs)
            break
        except Exception:
            continue
    if parsed is None or parsed.null_count() > raw.null_count():
        bad = raw.filter(raw.is_not_null() & (parsed.is_null() if parsed is not None
                                              else raw.is_not_null())).head(1)
        example = bad[0] if bad.len() else "?"
        raise InputError(f"{where}: time column {col!r} holds text that is not a date/time "
                         f"(e.g. {str(example)[:40]!r}); expected ISO 8601 such as "
                         "2025-01-31 or 2025-01-31T12:00:00Z")
    return df.with_columns(parsed.alias(col))


def _check_label(frames: dict[str, pl.DataFrame], columns: Columns,
                 paths: dict[str, str | None]) -> None:
    y = columns.label
    if not y:
        return
    for name, df in frames.items():
        if y not in df.columns:
            continue
        if kind_of(df.schema[y]) == Kind.NESTED:
            raise InputError(f"{paths.get(name) or name}: label column {y!r} has type "
                             f"{df.schema[y]}; expected numbers, strings or booleans")


# Peak memory of an audit relative to the in-memory size of its data (hashes, joins, the union
# of splits for preprocessing fingerprints, rank columns). Measured with bench/run.py.
WORKING_SET_FACTOR = 3.0


def estimate_bytes(path: Path) -> int:
    """In-memory size of a split estimated before reading it: Parquet footers give the
    uncompressed size; text formats count their bytes (x5 when compressed)."""
    from auditor.loading.hf import saved_dataset_files
    from auditor.core.inputs import data_files

    files = [path] if not path.is_dir() else (  # a datasets folder: its shards, not its caches
        [f for f in saved_dataset_files(path) or [] if f.suffix == ".arrow"]
        or data_files(path, _PARQUET + (".arrow",)))
    total = 0
    for f in files:
        try:
            if f.suffix.lower() in _PARQUET:
                import pyarrow.parquet as pq
                meta = pq.ParquetFile(f).metadata
                total += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
            else:
                size = f.stat().st_size
                total += size * (5 if f.suffix.lower() in _COMPRESSED else 1)
        except Exception:  # unreadable files are reported by read_table with a clear message
            continue
    return total


def available_memory_bytes() -> int:
    """MemAvailable from /proc/meminfo (Linux), else total physical memory."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    import os
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def memory_budget_bytes(budget_gb: float | None) -> int:
    """The configured budget (``.inf``: no limit), or 60% of the memory available now."""
    if budget_gb is not None:
        return int(min(budget_gb * 1024**3, 2.0**62))
    return int(0.6 * available_memory_bytes())


def read_sample(path: Path, fraction: float, seed: int, csv: CsvFormat | None = None
                ) -> pl.DataFrame:
    """A seeded uniform sample of about ``fraction`` of the rows, read with streaming so the
    whole file never sits in memory."""
    from auditor.core.colnames import helper_name

    lf = scan_table(path, csv)
    try:
        row = helper_name("row", lf.collect_schema().names())
    except Exception:
        row = helper_name("row", [])  # the collect below reports the reader's error
    keep = (pl.col(row).hash(seed) % 1_000_000) < int(fraction * 1_000_000)
    try:
        got = lf.with_row_index(row).filter(keep).drop(row).collect(engine="streaming")
        return thousands_to_numbers(got) if csv is not None and csv.decimal == "," else got
    except Exception as err:
        fmt = "parquet" if path.is_dir() else _format_of(path)
        raise InputError(f"{path}: cannot read as {_FORMAT_NAMES[fmt]}: "
                         f"{_first_line(err)}") from None


# how the note of a sampled audit starts (the CLI repeats that note on stderr)
SAMPLED_NOTE_START = "The data need"


MIN_SAMPLE_ROWS = 100


def _enough_sampled(path: Path, df: pl.DataFrame, fraction: float, budget_gb: float,
                    need: float, csv: CsvFormat | None = None) -> pl.DataFrame:
    """A sample with fewer than MIN_SAMPLE_ROWS rows (or than the file, if smaller) says more
    about the budget than about the data: an input error naming the budget, not the split."""
    if df.height >= MIN_SAMPLE_ROWS:
        return df
    try:
        total = int(scan_table(path, csv).select(pl.len()).collect(engine="streaming").item())
    except Exception:  # unreadable: read_sample has already read it, so this is rare
        total = df.height
    if df.height >= min(total, MIN_SAMPLE_ROWS):
        return df
    raise InputError(f"{path}: the memory budget of {budget_gb:.3g} GB leaves {df.height:,} of "
                     f"its {total:,} rows in the sample ({100 * fraction:.3g}%), too few to "
                     f"audit; raise memory_budget_gb (about {need / 1024**3:.3g} GB reads "
                     "every row)")


def _import_in_background(module: str) -> Any:
    """Start importing ``module`` on a thread and return the thread (join it before use), or
    None when it is imported already.

    The statistics of nearly every check import ``scipy.stats`` (~0.35 s of bytecode, the
    largest import of a drift-only run); imported while the files are read (polars reads
    without holding the GIL) it overlaps the read: bench 1M drift-only, load + checks on the
    2-core machine (whose read already keeps both cores busy) 1.85-2.0 -> 1.8 s; on more cores
    the whole import is hidden. An import error is left to the check that imports it."""
    import importlib
    import sys
    import threading

    if module in sys.modules:
        return None

    def run() -> None:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - reported where the module is used
            pass

    thread = threading.Thread(target=run, name=f"import {module}", daemon=True)
    thread.start()
    return thread


def input_files(cfg: AuditConfig, frames: dict[str, Any] | None = None) -> dict[str, Path]:
    """The files ``open_splits`` reads: each split (and the reference) not given in
    ``frames``, by name."""
    frames = frames or {}
    files = {name: Path(p) for name, p in cfg.datasets.items() if name not in frames}
    if cfg.reference is not None and REFERENCE not in frames:
        files[REFERENCE] = Path(cfg.reference)
    return files


def open_splits(cfg: AuditConfig, frames: dict[str, Any] | None = None) -> AuditData:
    """Read every split of ``cfg`` into AuditData; ``frames`` supplies in-memory splits (and
    optionally the reference, under the key ``"reference"``) instead of files.

    Before reading, the working set (in-memory size x WORKING_SET_FACTOR) is compared with the
    memory budget (``memory_budget_gb``, default 60% of available RAM); beyond it every file is
    read as a seeded uniform sample that fits, and the report says so in its notes.
    """
    frames = frames or {}
    files = input_files(cfg, frames)
    from auditor.core.inputs import check_input_path

    for path in files.values():  # before estimate_bytes opens them: a FIFO would block
        check_input_path(path)
    need = WORKING_SET_FACTOR * sum(estimate_bytes(p) for p in files.values())
    budget = memory_budget_bytes(cfg.memory_budget_gb)
    fraction = min(1.0, budget / need) if need else 1.0
    notes: list[str] = []
    if fraction < 1.0 and not cfg.sample:
        raise InputError(f"{', '.join(map(str, files.values()))}: the data need about "
                         f"{need / 1024**3:.1f} GB of memory to audit, above the budget of "
                         f"{budget / 1024**3:.1f} GB, and sampling is off (--no-sample); "
                         "raise memory_budget_gb or allow sampling")
    if fraction < 1.0:
        notes.append(f"{SAMPLED_NOTE_START} about {need / 1024**3:.1f} GB of memory to "
                     f"audit, above the budget of {budget / 1024**3:.1f} GB: every split file "
                     f"was read as a seeded uniform sample of {fraction:.1%} of its rows, and "
                     "every count in this report refers to those samples. Set "
                     "memory_budget_gb in audit.yaml to change the budget (--no-sample makes "
                     "this an error).")

    def load(path: Path) -> pl.DataFrame:
        if fraction >= 1.0:
            return read_table(path, cfg.csv)
        return _enough_sampled(path, read_sample(path, fraction, cfg.seed, cfg.csv), fraction,
                               cfg.memory_budget_gb or budget / 1024**3, need, cfg.csv)

    loaded: dict[str, pl.DataFrame] = {}
    paths: dict[str, str | None] = {}
    prefetch = _import_in_background("scipy.stats") if files else None
    try:
        for name, path in cfg.datasets.items():
            if name in frames:
                loaded[name] = to_polars(frames[name], name)
                paths[name] = None
            else:
                loaded[name] = load(Path(path))
                paths[name] = str(path)
        reference = None
        if REFERENCE in frames:
            reference = to_polars(frames[REFERENCE], REFERENCE)
        elif cfg.reference is not None:
            reference = load(Path(cfg.reference))
    finally:  # done before any check runs: no two threads importing the same modules then
        if prefetch is not None:
            prefetch.join()
    data = build_audit_data(loaded, columns=cfg.columns, tokens=cfg.tokens, paths=paths,
                            reference=reference,
                            reference_path=(None if REFERENCE in frames
                                            else str(cfg.reference) if cfg.reference else None),
                            seed=cfg.seed)
    with_config(data, cfg)
    data.csv = cfg.csv  # a split file read again (tokens.contamination's clean splits)
    data.notes = notes
    data.sampled = fraction < 1.0
    return data


def with_config(data: LoadedSplits, cfg: AuditConfig) -> None:
    """What the loaders of both engines read beside the splits: the pipeline code, benchmark
    sets, a GX suite and a ``tokens:`` section's tokenizer and chat template (a benchmark, suite,
    tokenizer or template that cannot be read is an input error: exit 2)."""
    data.pipeline = list(cfg.pipeline)  # leakage.preprocessing's code scan
    if cfg.benchmarks:
        from auditor.loading.benchmarks import read_benchmarks
        data.benchmarks = read_benchmarks(cfg.benchmarks, read_table)
    if cfg.expectations is not None:
        from auditor.integrations.gx import read_suite
        data.expectations = read_suite(cfg.expectations)
    if cfg.tokens is not None:
        from auditor.loading.tokenizers import load_tokenizer

        spec = cfg.tokens.tokenizer
        data.cached(("tokens.tokenizer", spec), lambda: load_tokenizer(spec))
        check_chat_template(cfg.tokens)


def check_chat_template(tokens: Tokens) -> None:
    """A ``tokens.chat`` section's template must be found and compile (InputError, exit 2)."""
    if tokens.chat is not None:
        from auditor.loading.chat_templates import compiled, template_text

        compiled(*template_text(tokens.chat.template, tokens.tokenizer))
