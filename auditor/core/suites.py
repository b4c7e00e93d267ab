"""Suites: YAML files in ``checks/`` naming which checks run and with which parameters.

```yaml
description: what this suite is for
checks:
  leakage.duplicates: {fail_above: 0.001}
  schema.consistency: {}
```
A suite may start from another (``extends: default``), drop checks (``exclude: [...]``) and
override parameters (``checks:``). A suite is a name (a file in the built-in ``checks/`` folder,
shipped inside the wheel as ``auditor/suites``) or a path. ``thresholds:`` in audit.yaml overrides
parameters by field name.
Unknown ids, unknown parameters and wrongly typed values fail here, before any data is loaded.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from auditor.core.checks import Cost
from auditor.core.config import short_repr
from auditor.errors import ConfigError
from auditor.core.registry import load_check_class


def builtin_suite_dirs() -> list[Path]:
    """Where built-in suites live: inside the installed package, or the repo's ``checks/``."""
    pkg = Path(__file__).resolve().parents[1]
    return [pkg / "suites", pkg.parent / "checks"]


def builtin_suites() -> list[str]:
    names: set[str] = set()
    for d in builtin_suite_dirs():
        if d.is_dir():
            names |= {p.stem for p in d.glob("*.yaml")}
    return sorted(names)


def suite_path(name: str, base_dir: Path | None = None) -> Path:
    """Resolve a suite name or path to a file; a relative path is taken from ``base_dir``
    (the folder of the suite that ``extends`` it), else from the working directory."""
    if name.endswith((".yaml", ".yml")) or "/" in name:
        path = Path(name).expanduser()
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        if not path.is_file():
            raise ConfigError(f"suite file {str(path)!r} not found")
        return path
    for d in builtin_suite_dirs():
        path = d / f"{name}.yaml"
        if path.is_file():
            return path
    known = builtin_suites()
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(f"unknown suite {name!r}{hint}; built-in suites: {', '.join(known)}")


def read_suite(name: str, _depth: int = 0,
               _base: Path | None = None) -> dict[str, dict[str, Any]]:
    """The suite's ``checks:`` mapping, id -> parameters (in file order). ``extends: b.yaml``
    is resolved relative to the extending suite's file."""
    from auditor.core.config import load_yaml_file

    path = suite_path(name, _base)
    raw = load_yaml_file(path, what="suite") or {}
    if not isinstance(raw, dict) or not isinstance(raw.get("checks", {}), dict):
        raise ConfigError(f"{path}: a suite needs a 'checks:' mapping of check id -> parameters")
    unknown = set(raw) - {"checks", "description", "extends", "exclude"}
    if unknown:
        raise ConfigError(f"{path}: unknown key {sorted(unknown)[0]!r}; a suite has "
                          "'description', 'extends', 'exclude' and 'checks'")
    out: dict[str, dict[str, Any]] = {}
    if raw.get("extends"):  # start from another suite, drop `exclude`, then apply `checks`
        if _depth > 5:
            raise ConfigError(f"{path}: 'extends' nests too deeply (a cycle?)")
        out = read_suite(str(raw["extends"]), _depth + 1, path.resolve().parent)
        for check_id in raw.get("exclude") or []:
            if check_id not in out:
                raise ConfigError(f"{path}: exclude: {check_id!r} is not in suite "
                                  f"{raw['extends']!r}")
            del out[check_id]
    raw.setdefault("checks", {})
    for check_id, params in raw["checks"].items():
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise ConfigError(f"{path}: checks.{check_id}: expected a mapping of parameters; "
                              f"got {short_repr(params)}")
        out[str(check_id)] = {**out.get(str(check_id), {}), **params}
    return out


# Parameters renamed to the warn_above / fail_above convention (value > threshold); the old
# inclusive *_at names are still accepted in suites and audit.yaml thresholds.
RENAMED = {"psi_warn_at": "psi_warn_above", "psi_fail_at": "psi_fail_above",
           "ks_warn_at": "ks_warn_above", "ks_fail_at": "ks_fail_above",
           "cramers_v_warn_at": "cramers_v_warn_above",
           "cramers_v_fail_at": "cramers_v_fail_above",
           "warn_at": "warn_above", "fail_at": "fail_above",
           "suspicious_at": "suspicious_above"}


def build_check(check_id: str, params: dict[str, Any], source: str) -> Any:
    """Construct a check from its id and parameters, with one clear error per mistake."""
    from pydantic import TypeAdapter, ValidationError

    try:
        cls = load_check_class(check_id)
    except ConfigError:
        raise
    except Exception as err:  # a broken check module must not sink the whole run
        return BrokenCheck(broken_id=check_id,
                           message=f"cannot import the check: {type(err).__name__}: {err}")
    names = [f.name for f in fields(cls)]
    params = {RENAMED.get(k, k) if k not in names and RENAMED.get(k) in names else k: v
              for k, v in params.items()}
    for key in params:
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1, cutoff=0.5)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{source}: {check_id}.{key}: unknown parameter{hint}; "
                              f"parameters are {', '.join(names)}")
    try:
        return TypeAdapter(cls).validate_python(params)
    except ValidationError as err:
        e = err.errors()[0]
        key = ".".join(str(p) for p in e["loc"])
        raise ConfigError(f"{source}: {check_id}.{key}: {e['msg'][:300]}; got "
                          f"{short_repr(e.get('input'))}") from None
    except (ValueError, TypeError) as err:
        raise ConfigError(f"{source}: {check_id}: {err}") from None


@dataclass(frozen=True, kw_only=True)
class BrokenCheck:
    """A check whose module failed to import; it reports ``error`` when run."""

    broken_id: str
    message: str
    title: ClassVar[str] = "Check that could not be loaded"
    cost: ClassVar[Cost] = Cost.CHEAP

    @property
    def id(self) -> str:
        return self.broken_id

    def run(self, data: Any) -> list[Any]:
        raise RuntimeError(self.message)


def load_checks(suite: str, overrides: dict[str, dict[str, Any]] | None = None,
                notes: list[str] | None = None) -> list[Any]:
    """Instantiate every check of ``suite`` with ``overrides`` applied (in suite order).

    Overrides of a check the suite does not run are not an error (one audit.yaml serves
    ``--suite fast`` and the default): they are validated like the others, and a note saying
    they were not used is appended to ``notes``. An unknown check id is an error."""
    spec = read_suite(suite)
    overrides = dict(overrides or {})
    for check_id in list(overrides):
        if not isinstance(overrides[check_id], dict):
            raise ConfigError(f"thresholds: {check_id}: expected a mapping of parameters")
        if check_id not in spec:
            load_check_class(check_id)  # unknown id -> ConfigError with a suggestion
            build_check(check_id, overrides.pop(check_id), source="thresholds")
            if notes is not None:
                notes.append(f"thresholds for {check_id} were not used: suite {suite!r} "
                             "does not run that check")
    return [build_check(cid, {**params, **overrides.get(cid, {})},
                        source=f"suite {suite!r}" if cid not in overrides else "thresholds")
            for cid, params in spec.items()]
