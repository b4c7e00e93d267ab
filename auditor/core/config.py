"""``audit.yaml`` (or CLI flags) parsed into validated, typed models.

Every mistake becomes one :class:`~auditor.errors.ConfigError` line naming the key, e.g.
``audit.yaml: columns.lable: unknown key (did you mean 'label'?)``.
"""
from __future__ import annotations

import difflib
import os
import re
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import (BaseModel, ConfigDict, Field, ValidationError, field_validator,
                      model_validator)

from auditor.errors import ConfigError

if TYPE_CHECKING:
    from auditor.report.results import Finding

# How splits can be made (``split:``; auditor.judging.design)
SplitDesignName = Literal["random", "stratified", "group", "time", "published", "unknown"]
SPLIT_DESIGNS: tuple[str, ...] = get_args(SplitDesignName)

# A split name becomes a file name (--write-clean writes DIR/<split>.parquet) and a report key:
# one plain name, never a path.
SPLIT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# Bounds on a config or suite file: its size, and the node count of the document with every
# YAML alias expanded (a "billion laughs" document of 644 bytes expands to billions of nodes).
MAX_YAML_BYTES = 1 << 20
MAX_YAML_NODES = 100_000
MAX_YAML_DEPTH = 64  # nesting levels; a deeper document would overflow the composer's stack
# Roles one column may hold at once; every other pair of roles is a contradiction (exit 2).
COMPATIBLE_ROLES = {frozenset({"group", "id"})}


class Waiver(BaseModel):
    """One accepted finding: ``{check, subject, splits?, metric?, reason, owner, expires}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    check: str = Field(min_length=1)
    subject: str | list[str]
    splits: list[str] | None = None
    metric: str | None = None
    reason: str = Field(min_length=1)
    owner: str = Field(min_length=1)
    expires: date

    @field_validator("check")
    @classmethod
    def _known_check(cls, v: str) -> str:
        import difflib

        from auditor.core.registry import CHECKS

        if v not in CHECKS:
            close = difflib.get_close_matches(v, list(CHECKS), n=1, cutoff=0.6)
            raise ValueError(f"unknown check id {v!r}"
                             + (f" (did you mean {close[0]!r}?)" if close else ""))
        return v

    @field_validator("subject", mode="before")
    @classmethod
    def _numeric_name(cls, v: Any) -> Any:  # YAML reads `subject: 2024` as a number
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        if isinstance(v, list):
            return [str(x) if isinstance(x, int) and not isinstance(x, bool) else x
                    for x in v]
        return v

    @field_validator("reason", "owner")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v

    def label(self) -> str:
        subject = ", ".join(self.subject) if isinstance(self.subject, list) else self.subject
        where = f" on {' → '.join(self.splits)}" if self.splits else ""
        metric = f" ({self.metric})" if self.metric else ""
        return f"{self.check} / {subject or '(dataset)'}{metric}{where}"

    def matches(self, check_id: str, finding: Finding) -> bool:
        """Same check, a subject the waiver covers (:meth:`covers`), and when given the same
        splits (as a set) and metric (:func:`base_metric`: ``psi`` waives
        ``psi_beyond_trend``); only warn/fail findings are waived."""
        if check_id != self.check or finding.severity == "info":  # Severity.INFO
            return False
        if not self.covers(finding.subject):
            return False
        if self.splits is not None and set(self.splits) != set(finding.splits):
            return False
        return self.metric is None or base_metric(self.metric) == base_metric(finding.metric)

    def covers(self, subject: str | list[str]) -> bool:
        """Whether the waiver's subject covers a finding's: the same subject (a list compared
        as a set); a list waiver covers each of its names (``[carat, x, y, z]`` waives the
        four columns' findings, one per column, and a finding on any of them together); a
        name with ``*`` is a glob (``amount_*``; ``?`` and ``[`` stay literal, as column names
        hold them)."""
        from fnmatch import fnmatchcase

        key = _subject_key(subject)
        if key == _subject_key(self.subject):
            return True
        names = [self.subject] if isinstance(self.subject, str) else list(self.subject)
        theirs = [subject] if isinstance(subject, str) else list(subject)
        if not theirs or theirs == [""] or not any(names):  # the dataset: only "" covers it
            return False
        return all(any(n == t or ("*" in n and fnmatchcase(t, n)) for n in names)
                   for t in theirs)

    def mark(self) -> dict[str, Any]:
        return {"reason": self.reason, "owner": self.owner, "expires": self.expires.isoformat()}


NULL_SUFFIXES = ("_beyond_trend", "_beyond_entity_resplits", "_beyond_random_resplits")


def base_metric(metric: str | None) -> str | None:
    """``metric`` without the suffix of the split design's null (``psi_beyond_trend`` ->
    ``psi``): a waiver, a baseline or a ledger series of ``psi`` keeps matching the finding
    when a time or group design grades the same statistic against its null."""
    if metric is None:
        return None
    for suffix in NULL_SUFFIXES:
        if metric.endswith(suffix):
            return metric[:-len(suffix)]
    return metric


def _subject_key(subject: str | list[str]) -> frozenset[str] | str:
    if isinstance(subject, list):  # [] is the dataset as a whole, like ""
        return "" if not subject else subject[0] if len(subject) == 1 else frozenset(subject)
    return subject


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _as_list(v: Any) -> Any:
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    return v


class Columns(_Strict):
    """Column roles. Features are every other column (minus ``exclude`` and token columns)."""

    label: str | None = None
    time: str | None = None
    groups: list[str] = Field(default_factory=list)
    ids: list[str] = Field(default_factory=list)
    text: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)

    _lists = field_validator("groups", "ids", "text", "exclude", mode="before")(_as_list)

    def declared(self) -> dict[str, str]:
        """Every declared column name -> its role (label, time, group, id, text, exclude)."""
        roles: dict[str, str] = {}
        if self.label:
            roles[self.label] = "label"
        if self.time:
            roles[self.time] = "time"
        for role, names in (("group", self.groups), ("id", self.ids), ("text", self.text),
                            ("exclude", self.exclude)):
            for n in names:
                roles.setdefault(n, role)
        return roles

    def conflicts(self) -> list[tuple[str, str, str]]:
        """(column, role, other role) for every column declared in two roles that contradict
        each other (a label that is also an id, a feature both excluded and grouped, ...).
        Only group + id may coincide (an entity key that is also a row identifier)."""
        seen: dict[str, str] = {}
        out = []
        for role, names in (("label", [self.label] if self.label else []),
                            ("time", [self.time] if self.time else []),
                            ("group", self.groups), ("id", self.ids), ("text", self.text),
                            ("exclude", self.exclude)):
            for n in dict.fromkeys(names):
                first = seen.setdefault(n, role)
                if first != role and frozenset({first, role}) not in COMPATIBLE_ROLES:
                    out.append((n, first, role))
        return out


class Packing(_Strict):
    """``tokens.packing``: how documents are packed into rows (checked by ``tokens.packing``).
    ``separator``: the id between documents (an integer, or ``eos``/``bos``: the tokenizer's,
    overridden by ``eos_id``/``bos_id``); ``separator_at``: ``end`` (a document ends with it,
    the default for ``eos`` and integers) or ``start`` (a document starts with it, the default
    for ``bos``); ``document_attention``: the model attends within each document only
    (per-document masks or position-restarting flash attention), so no label may ask a
    document to predict the next one's first token; ``split_documents``: a document may run on
    into the next row (concatenate-and-chunk packing)."""

    separator: int | Literal["eos", "bos"] = "eos"
    separator_at: Literal["end", "start"] | None = None
    document_attention: bool = False
    split_documents: bool = False

    def at(self) -> str:
        """Where the separator stands: ``end`` or ``start``."""
        return self.separator_at or ("start" if self.separator == "bos" else "end")


class Chat(_Strict):
    """``tokens.chat``: chat / instruction rows (checked by ``tokens.chat``). ``messages``: a
    column of lists of {role, content}; ``template``: a Jinja chat-template file (default: the
    tokenizer's own ``chat_template``, from the ``tokenizer_config.json`` beside or inside the
    tokenizer); ``train_on``: the roles whose tokens are supervised (in the labels)."""

    messages: str = "messages"
    template: Path | None = None
    train_on: list[str] = Field(default_factory=lambda: ["assistant"], min_length=1)

    _train_on = field_validator("train_on", mode="before")(_as_list)


class Tokens(_Strict):
    """The ``tokens:`` section for tokenized-text datasets (see DESIGN.md)."""

    tokenizer: str
    text: str | None = None
    # null: a corpus stored as text only (signed off before tokenization): the checks that
    # need only text and the tokenizer run, those reading stored ids skip with the reason
    input_ids: str | None = "input_ids"
    attention_mask: str | None = None
    labels: str | None = None
    objective: Literal["causal_lm", "masked_lm", "none"] = "causal_lm"
    label_shift: Literal[0, 1] = 0
    # ids are compared with int64 arrays: they must fit one (a huge id crashed three checks)
    ignore_index: int = Field(default=-100, ge=-2**63, lt=2**63)
    max_length: int | None = Field(default=None, ge=1, lt=2**63)
    pad_id: int | None = Field(default=None, ge=-2**63, lt=2**63)
    bos_id: int | None = Field(default=None, ge=-2**63, lt=2**63)
    eos_id: int | None = Field(default=None, ge=-2**63, lt=2**63)
    # packed rows: the column of position ids (restarting at 0 where a document starts) and
    # the packing's declaration (tokens.packing)
    position_ids: str | None = None
    packing: Packing | None = None
    chat: Chat | None = None  # chat rows: their messages column and template (tokens.chat)

    @model_validator(mode="after")
    def _something_to_audit(self) -> "Tokens":
        if not self.input_ids and (self.attention_mask or self.labels or self.position_ids
                                   or self.packing or self.chat):
            raise ValueError("attention_mask, labels, position_ids, packing and chat describe "
                             "stored token ids: declare input_ids with them (input_ids: null "
                             "is a corpus stored as text only)")
        if not self.input_ids and not self.text:
            raise ValueError("declare text, input_ids or both (input_ids: null needs a text "
                             "column)")
        return self

    def columns(self) -> list[str]:
        return [c for c in (self.text, self.input_ids, self.attention_mask, self.labels,
                            self.position_ids, self.chat.messages if self.chat else None) if c]


class Benchmark(_Strict):
    """One public evaluation set of ``benchmarks:`` (checked by ``tokens.benchmarks``): a
    file (JSON Lines, gzip or not, Parquet, CSV, Arrow IPC), or a folder of such files, of one
    problem per row. ``text``: the fields whose text is looked for in the corpus, each on its
    own (default: every text field but ``id``); ``id``: the field naming a problem
    (default: ``task_id``, ``id``, ``question_id`` or ``idx`` when present, else the row
    number). Written as a bare path, the defaults apply."""

    path: Path
    text: list[str] = Field(default_factory=list)
    id: str | None = None

    _text = field_validator("text", mode="before")(_as_list)


class CsvFormat(_Strict):
    """How CSV/TSV split files are written: ``delimiter`` (one character; default ``,``, a
    tab for ``.tsv``) and ``decimal`` (``.`` or ``,``: ``3,5`` read as 3.5, as European
    spreadsheets export with a ``;`` delimiter)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    delimiter: str | None = None
    decimal: Literal[".", ","] = "."

    @field_validator("delimiter", mode="before")
    @classmethod
    def _one_character(cls, v: Any) -> Any:
        if v in ("\\t", "tab"):  # a shell gives --csv-delimiter '\t' as two characters
            return "\t"
        if v is not None and (not isinstance(v, str) or len(v.encode()) != 1
                              or v in "\r\n\""):
            raise ValueError(f"delimiter must be one ASCII character (not a quote or line "
                             f"end; '\\t' or tab for a tab); got {v!r}")
        return v

    @model_validator(mode="after")
    def _decimal_not_delimiter(self) -> "CsvFormat":
        if self.decimal == "," and (self.delimiter or ",") == ",":
            raise ValueError("decimal ',' needs another delimiter (usually ';'): "
                             "csv: {delimiter: ';', decimal: ','}")
        return self

    def separator(self, path: Any) -> str:
        """The delimiter of ``path``: the declared one, else a tab for .tsv, else a comma."""
        if self.delimiter:
            return self.delimiter
        return "\t" if ".tsv" in [x.lower() for x in Path(str(path)).suffixes] else ","


# numpy, scikit-learn (random_state), torch and polars' hashes all take a seed in [0, 2**32)
MAX_SEED = 2**32 - 1


SEED_RANGE = f"must be an integer in [0, {MAX_SEED}] (the random generators' range)"


def check_seed(seed: Any, source: str) -> int:
    """A seed outside [0, MAX_SEED] (or not an integer) is a ConfigError naming ``source``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"{source}: seed {SEED_RANGE}; got {str(seed)[:40]}")
    return seed


class AuditConfig(_Strict):
    """A whole audit: which splits, which roles, which suite, which overrides."""

    datasets: dict[str, Path]
    columns: Columns = Field(default_factory=Columns)
    tokens: Tokens | None = None
    reference: Path | None = None
    suite: str = "default"
    seed: int = 0
    thresholds: dict[str, dict[str, Any]] = Field(default_factory=dict)
    pipeline: list[Path] = Field(default_factory=list)
    memory_budget_gb: float | None = Field(default=None, gt=0)
    csv: CsvFormat = Field(default_factory=CsvFormat)  # delimiter and decimal of CSV splits
    sample: bool = True   # False (--no-sample): data beyond the memory budget are an error
    expectations: Path | None = None  # a Great Expectations suite JSON (schema.expectations)
    # accepted findings (auditor.signoff.waivers)
    waivers: list[Waiver] = Field(default_factory=list)
    ledger: str | None = None  # run history: SQLite file or SQLAlchemy URL (auditor.signoff.ledger)
    engine: Literal["polars", "spark"] = "polars"  # spark: auditor.engines (pyspark extra)
    spark_master: str | None = None  # e.g. local[4], spark://host:7077, yarn (engine: spark)
    spark_conf: dict[str, str] = Field(default_factory=dict)  # spark.* settings passed through
    spark_sample_rows: int = Field(default=50_000, ge=100)  # rows per split for model probes
    # how the splits were made (auditor.judging.design); inferred from the data when absent
    split: SplitDesignName | None = None
    # public evaluation sets looked for in the corpus (tokens.benchmarks), by name
    benchmarks: dict[str, Benchmark] = Field(default_factory=dict)

    _pipeline = field_validator("pipeline", mode="before")(_as_list)

    @field_validator("seed")
    @classmethod
    def _seed_in_range(cls, v: int) -> int:
        if not 0 <= v <= MAX_SEED:
            raise ValueError(SEED_RANGE)
        return v

    @field_validator("benchmarks", mode="before")
    @classmethod
    def _benchmark_paths(cls, v: Any) -> Any:
        if isinstance(v, dict):  # a bare path: {humaneval: evals/humaneval.jsonl}
            return {k: {"path": b} if isinstance(b, (str, Path)) else b for k, b in v.items()}
        return v

    @field_validator("benchmarks")
    @classmethod
    def _benchmark_names(cls, v: dict[str, Benchmark]) -> dict[str, Benchmark]:
        for name in v:
            if not SPLIT_NAME.match(str(name)):
                raise ValueError(f"benchmark name {short_repr(name)} is not a plain name "
                                 "(letters, digits, '_', '-', '.', starting with a letter or "
                                 "digit, at most 64 characters)")
        return v

    @field_validator("datasets")
    @classmethod
    def _some_splits(cls, v: dict[str, Path]) -> dict[str, Path]:
        if not v:
            raise ValueError("at least one split is required, e.g. {train: train.parquet}")
        if isinstance(v, dict):
            for name in v:
                if not SPLIT_NAME.match(str(name)):
                    raise ValueError(f"split name {short_repr(name)} is not a plain name "
                                     "(letters, digits, '_', '-', '.', starting with a "
                                     "letter or digit, at most 64 characters): it names "
                                     "output files")
        return v


def _suggest(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class owning the field at ``loc`` (for suggesting valid keys)."""
    model: type[BaseModel] | None = AuditConfig
    for part in loc[:-1]:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return None
        ann = model.model_fields[part].annotation
        model = next((a for a in getattr(ann, "__args__", (ann,))
                      if isinstance(a, type) and issubclass(a, BaseModel)), None)
    return model


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters: messages stay one bounded line whatever
    the input (a huge or deeply aliased YAML value is never printed whole)."""
    if isinstance(value, (dict, list, tuple, set)):
        return f"a {type(value).__name__} of {len(value)} item{'s' * (len(value) != 1)}"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_validation_error(err: ValidationError, source: str) -> str:
    """The first pydantic error as one line: ``source: key.path: what was expected``."""
    e = err.errors()[0]
    loc = tuple(e["loc"])
    key = ".".join(str(p) for p in loc) or "(top level)"
    if e["type"] == "extra_forbidden":
        model = _model_at(loc)
        hint = _suggest(str(loc[-1]), list(model.model_fields)) if model else ""
        return f"{source}: {key}: unknown key{hint}"
    if e["type"] == "missing":
        return f"{source}: {key}: required key is missing"
    got = e.get("input")
    got_s = short_repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    return f"{source}: {key}: {e['msg'][:300]}; got {got_s}"


def check_roles(columns: Columns, source: str) -> None:
    """A column declared in two contradicting roles is a ConfigError (exit 2)."""
    for col, first, second in columns.conflicts():
        raise ConfigError(f"{source}: columns: {col!r} is declared both as {first} and as "
                          f"{second}; a column has one role (only group and id may "
                          "coincide)")


def check_split(cfg: AuditConfig, source: str) -> None:
    """A declared split design needs the column it is cut by (exit 2 otherwise)."""
    need = {"time": ("time", cfg.columns.time), "group": ("groups", cfg.columns.groups),
            "stratified": ("label", cfg.columns.label)}.get(cfg.split or "")
    if need is not None and not need[1]:
        raise ConfigError(f"{source}: split: {cfg.split} needs columns.{need[0]} (the column "
                          f"the splits are cut by); declare it, or leave split: out to have "
                          "the design inferred")


def parse_config(raw: Any, *, base_dir: Path, source: str) -> AuditConfig:
    """Validate a raw mapping and resolve every path relative to ``base_dir``."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping of keys (datasets:, columns:, ...); "
                          f"got {type(raw).__name__}")
    if isinstance(raw.get("datasets"), (str, Path)):  # a DatasetDict.save_to_disk folder
        from auditor.core.inputs import expand_dataset_dict
        folder = Path(raw["datasets"]).expanduser()  # as every other path of the YAML
        raw = {**raw, "datasets": expand_dataset_dict(
            folder if folder.is_absolute() else base_dir / folder, source)}
    try:
        cfg = AuditConfig.model_validate(raw)
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, source)) from None

    check_roles(cfg.columns, source)
    check_split(cfg, source)

    def resolve(p: Path) -> Path:
        p = p.expanduser()
        return p if p.is_absolute() else (base_dir / p)

    updates: dict[str, Any] = {
        "datasets": {k: v if str(v).startswith("table:") else resolve(v)  # Spark catalog
                     for k, v in cfg.datasets.items()},
        "pipeline": [resolve(p) for p in cfg.pipeline],
    }
    if cfg.reference is not None:
        updates["reference"] = resolve(cfg.reference)
    if cfg.benchmarks:
        updates["benchmarks"] = {k: b.model_copy(update={"path": resolve(b.path)})
                                 for k, b in cfg.benchmarks.items()}
    if cfg.expectations is not None:  # read when the data are opened (export writes it)
        updates["expectations"] = resolve(cfg.expectations)
    if cfg.ledger and "://" not in cfg.ledger:  # a file path, not a SQLAlchemy URL
        updates["ledger"] = str(resolve(Path(cfg.ledger)))
    if cfg.tokens is not None and cfg.tokens.chat is not None and cfg.tokens.chat.template:
        chat = cfg.tokens.chat.model_copy(update={"template": resolve(cfg.tokens.chat.template)})
        cfg = cfg.model_copy(update={"tokens": cfg.tokens.model_copy(update={"chat": chat})})
    if cfg.tokens is not None:
        kind, sep, rest = cfg.tokens.tokenizer.partition(":")
        prefixed = sep and kind in ("sentencepiece", "hf", "tokenizers", "transformers")
        local = Path(rest if prefixed else cfg.tokens.tokenizer)
        if not local.is_absolute() and (prefixed or not sep) and resolve(local).exists():
            spec = f"{kind}:{resolve(local)}" if prefixed else str(resolve(local))
            updates["tokens"] = cfg.tokens.model_copy(update={"tokenizer": spec})
    suite_path = Path(cfg.suite)
    if cfg.suite.endswith((".yaml", ".yml")) and not suite_path.is_absolute():
        updates["suite"] = str(resolve(suite_path))
    thresholds = dict(cfg.thresholds)
    for check_id, params in cfg.thresholds.items():  # output folders follow the YAML too
        if isinstance(params, dict) and isinstance(params.get("clean_dir"), str):
            thresholds[check_id] = {**params,
                                    "clean_dir": str(resolve(Path(params["clean_dir"])))}
    updates["thresholds"] = thresholds
    from auditor.errors import InputError
    from auditor.core.inputs import check_input_path

    for p in updates["pipeline"]:  # a FIFO here would block the code scan forever
        try:
            check_input_path(p)
        except InputError as err:
            raise ConfigError(f"{source}: pipeline: {err}") from None
    tok = updates.get("tokens", cfg.tokens)
    if tok is not None:  # a local tokenizer file: a FIFO would block the loader forever
        kind, sep, rest = tok.tokenizer.partition(":")
        local = Path(rest if sep and kind in ("sentencepiece", "hf", "tokenizers",
                                              "transformers") else tok.tokenizer).expanduser()
        if local.is_absolute() and os.path.lexists(local):
            try:
                check_input_path(local, what="tokenizer")
            except InputError as err:
                raise ConfigError(f"{source}: tokens.tokenizer: {err}") from None
    for name, b in updates.get("benchmarks", {}).items():  # a FIFO would block the reader
        try:
            check_input_path(b.path, what="benchmark")
        except InputError as err:
            raise ConfigError(f"{source}: benchmarks.{name}: {err}") from None
    exp = updates.get("expectations")
    if exp is not None and os.path.lexists(exp):  # absent: export-expectations writes it
        try:
            check_input_path(exp)
        except InputError as err:
            raise ConfigError(f"{source}: expectations: {err}") from None
    return cfg.model_copy(update=updates)


def apply_column_flags(cfg: AuditConfig, *, label: str | None = None,
                       time: str | None = None, groups: list[str] | None = None,
                       ids: list[str] | None = None, text: list[str] | None = None,
                       exclude: list[str] | None = None) -> AuditConfig:
    """Command-line column flags next to an audit.yaml override the YAML's keys: ``--label``
    and ``--time`` replace the YAML's column; ``--group``/``--id``/``--text``/``--exclude``
    replace the YAML's list. Flags not given leave the YAML's value."""
    update: dict[str, Any] = {k: v for k, v in (("label", label), ("time", time),
                                                ("groups", groups), ("ids", ids),
                                                ("text", text), ("exclude", exclude)) if v}
    if not update:
        return cfg
    try:
        columns = Columns.model_validate({**cfg.columns.model_dump(), **update})
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, "command line")) from None
    check_roles(columns, "command line (flags over audit.yaml)")
    return cfg.model_copy(update={"columns": columns})


def _expanded_nodes(node: Any, limit: int, source: str) -> int:
    """Node count of a composed YAML document with every alias expanded (a node shared by
    several aliases counts once per use), stopping as soon as it passes ``limit``."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(n: Any) -> int:
        key = id(n)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise ConfigError(f"{source}: a YAML alias refers to its own anchor (a recursive "
                              "structure); a config is a tree")
        active.add(key)
        total = 1
        if isinstance(n.value, list):
            for item in n.value:
                total += sum(size(x) for x in item) if isinstance(item, tuple) else size(item)
                if total > limit:
                    break
        active.discard(key)
        sizes[key] = min(total, limit + 1)
        return sizes[key]

    return size(node)


def _check_duplicate_keys(node: Any, source: str) -> None:
    """A key given twice in one mapping is a ConfigError naming it and its line: YAML
    loaders keep the last silently (``datasets: {train: a, test: b, train: c}`` audited c
    against b). Merge keys (``<<``) are not keys."""
    seen_nodes: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen_nodes or not isinstance(n.value, list):
            continue
        seen_nodes.add(id(n))
        keys: set[tuple[str, str]] = set()
        for item in n.value:
            if not isinstance(item, tuple):
                stack.append(item)
                continue
            k, v = item
            stack += [k, v]
            if isinstance(k.value, str) and not k.tag.endswith(":merge"):
                if (k.tag, k.value) in keys:
                    raise ConfigError(f"{source}: duplicate key {short_repr(k.value)} at line "
                                      f"{k.start_mark.line + 1}; each key may appear once in "
                                      "a mapping")
                keys.add((k.tag, k.value))


def _check_depth(yaml: Any, loader_cls: Any, text: str, source: str) -> None:
    """Refuse a document nested deeper than MAX_YAML_DEPTH, from the parser's event stream
    (a state machine, no recursion): composing ``[[[[...]]]]`` 50,000 levels deep recurses
    once per level and overflows the C stack (a segfault, not an exception)."""
    def refuse(line: int) -> ConfigError:
        return ConfigError(f"{source}: the YAML nests deeper than {MAX_YAML_DEPTH} levels "
                           f"(line {line}); refused")

    depth = 0
    opening = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    closing = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    try:
        for event in yaml.parse(text, Loader=loader_cls):
            if isinstance(event, opening):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise refuse(event.start_mark.line + 1)
            elif isinstance(event, closing):
                depth -= 1
    except yaml.YAMLError as err:
        # PyYAML >= 6.0.4 stops deep flow collections in its own parser ("exceeded maximum
        # nesting depth", a limit above ours): the same refusal, in the same words
        if "nesting depth" not in str(getattr(err, "problem", "") or err):
            raise
        mark = getattr(err, "problem_mark", None)
        raise refuse(mark.line + 1 if mark else 1) from None


def load_yaml_file(path: Path, *, what: str = "config") -> Any:
    """Parse a config or suite file with bounds: at most MAX_YAML_BYTES bytes and
    MAX_YAML_NODES values with aliases expanded (a "billion laughs" file is refused in
    milliseconds instead of growing past gigabytes). Errors are one bounded ConfigError."""
    import yaml

    try:
        size = path.stat().st_size
        if size > MAX_YAML_BYTES:
            raise ConfigError(f"{path}: {what} file is {size:,} bytes; at most "
                              f"{MAX_YAML_BYTES:,} are read (a config names files, it does "
                              "not hold data)")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: {what} file is not UTF-8 text") from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read {what} file: {err.strerror or err}") from None
    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_cls(text)
    try:
        _check_depth(yaml, loader_cls, text, str(path))
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_nodes(node, MAX_YAML_NODES, str(path)) > MAX_YAML_NODES:
            raise ConfigError(f"{path}: YAML aliases expand the {what} to more than "
                              f"{MAX_YAML_NODES:,} values (nested anchors and aliases, a "
                              "'billion laughs' document?); refused")
        _check_duplicate_keys(node, str(path))
        return loader.construct_document(node)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"{path}: invalid YAML{where}: {str(problem)[:200]}") from None
    except RecursionError:
        raise ConfigError(f"{path}: the YAML nests too deeply") from None
    finally:
        loader.dispose()


def load_config(path: str | Path) -> AuditConfig:
    """Read and validate ``audit.yaml``; paths inside are relative to the file."""
    from auditor.errors import InputError
    from auditor.core.inputs import check_input_path

    path = Path(path)
    try:
        check_input_path(path, what="config file")
    except InputError as err:
        raise ConfigError(str(err)) from None
    if path.is_dir():
        raise ConfigError(f"{path}: is a directory; expected an audit.yaml file")
    raw = load_yaml_file(path)
    return parse_config(raw, base_dir=path.resolve().parent, source=str(path))


def config_from_flags(*, train: str | None, test: str | None, val: str | None = None,
                      label: str | None = None, time: str | None = None,
                      groups: list[str] | None = None, ids: list[str] | None = None,
                      text: list[str] | None = None, exclude: list[str] | None = None,
                      suite: str | None = None, seed: int = 0) -> AuditConfig:
    """The config the CLI flags describe (paths relative to the working directory)."""
    datasets = {k: v for k, v in (("train", train), ("val", val), ("test", test)) if v}
    if not datasets:
        raise ConfigError("give an audit.yaml or at least --train (and usually --test)")
    raw: dict[str, Any] = {
        "datasets": datasets,
        "columns": {"label": label, "time": time, "groups": groups or [], "ids": ids or [],
                    "text": text or [], "exclude": exclude or []},
        "seed": seed,
    }
    if suite:
        raw["suite"] = suite
    return parse_config(raw, base_dir=Path.cwd(), source="command line")
