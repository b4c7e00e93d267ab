"""``audit.yaml`` (or CLI flags) parsed into validated, typed models.

Every mistake becomes one :class:`~auditor.errors.ConfigError` line naming the key, e.g.
``audit.yaml: columns.lable: unknown key (did you mean 'label'?)``.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from auditor.errors import ConfigError
from auditor.waivers import Waiver


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


class Tokens(_Strict):
    """The ``tokens:`` section for tokenized-text datasets (see DESIGN.md)."""

    tokenizer: str
    text: str | None = None
    input_ids: str = "input_ids"
    attention_mask: str | None = None
    labels: str | None = None
    objective: Literal["causal_lm", "masked_lm", "none"] = "causal_lm"
    label_shift: Literal[0, 1] = 0
    ignore_index: int = -100
    max_length: int | None = None
    pad_id: int | None = None
    bos_id: int | None = None
    eos_id: int | None = None

    def columns(self) -> list[str]:
        return [c for c in (self.text, self.input_ids, self.attention_mask, self.labels) if c]


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
    waivers: list[Waiver] = Field(default_factory=list)  # accepted findings (auditor.waivers)
    ledger: str | None = None  # run history: SQLite file or SQLAlchemy URL (auditor.ledger)
    expectations: Path | None = None  # a Great Expectations suite JSON (schema.expectations)

    _pipeline = field_validator("pipeline", mode="before")(_as_list)

    @field_validator("datasets")
    @classmethod
    def _some_splits(cls, v: dict[str, Path]) -> dict[str, Path]:
        if not v:
            raise ValueError("at least one split is required, e.g. {train: train.parquet}")
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
    got_s = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    return f"{source}: {key}: {e['msg']}; got {got_s}"


def parse_config(raw: Any, *, base_dir: Path, source: str) -> AuditConfig:
    """Validate a raw mapping and resolve every path relative to ``base_dir``."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping of keys (datasets:, columns:, ...); "
                          f"got {type(raw).__name__}")
    if isinstance(raw.get("datasets"), (str, Path)):  # a DatasetDict.save_to_disk folder
        from auditor.hf import expand_dataset_dict
        folder = Path(raw["datasets"])
        raw = {**raw, "datasets": expand_dataset_dict(
            folder if folder.is_absolute() else base_dir / folder, source)}
    try:
        cfg = AuditConfig.model_validate(raw)
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, source)) from None

    def resolve(p: Path) -> Path:
        return p if p.is_absolute() else (base_dir / p)

    updates: dict[str, Any] = {
        "datasets": {k: resolve(v) for k, v in cfg.datasets.items()},
        "pipeline": [resolve(p) for p in cfg.pipeline],
    }
    if cfg.reference is not None:
        updates["reference"] = resolve(cfg.reference)
    if cfg.ledger and "://" not in cfg.ledger:  # a file path, not a SQLAlchemy URL
        updates["ledger"] = str(resolve(Path(cfg.ledger)))
    if cfg.expectations is not None:
        updates["expectations"] = resolve(cfg.expectations)
        if not updates["expectations"].is_file():
            raise ConfigError(f"{source}: expectations: {updates['expectations']}: "
                              "file not found (a Great Expectations suite JSON)")
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
    for p in updates["pipeline"]:
        if not p.exists():
            raise ConfigError(f"{source}: pipeline: {p}: file not found")
    return cfg.model_copy(update=updates)


def load_config(path: str | Path) -> AuditConfig:
    """Read and validate ``audit.yaml``; paths inside are relative to the file."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"{path}: invalid YAML{where}: {problem}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: config file is not UTF-8 text") from None
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
