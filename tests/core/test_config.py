"""audit.yaml parsing: typed models, relative paths, one clear line per mistake."""
from __future__ import annotations

from pathlib import Path

import pytest

from auditor.core.config import config_from_flags, load_config
from auditor.errors import ConfigError
from auditor.core.suites import load_checks


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "audit.yaml"
    p.write_text(text)
    return p


def test_paths_are_relative_to_the_yaml_file(tmp_path):
    sub = tmp_path / "cfg"
    sub.mkdir()
    cfg = load_config(_write(sub, "datasets: {train: ../a.parquet, test: b.parquet}\n"
                                  "columns: {label: y, groups: customer_id}\n"))
    assert cfg.datasets["train"] == sub / "../a.parquet"
    assert cfg.datasets["test"] == sub / "b.parquet"
    assert cfg.columns.groups == ["customer_id"]
    assert list(cfg.datasets) == ["train", "test"]


@pytest.mark.parametrize("text, expected", [
    ("datasets: {train: a.parquet}\ncolumn: {label: y}\n",
     "column: unknown key (did you mean 'columns'?)"),
    ("datasets: {train: a.parquet}\nseed: many\n", "seed: Input should be a valid integer"),
    ("columns: {label: y}\n", "datasets: required key is missing"),
    ("datasets: {}\n", "datasets: Value error, at least one split is required"),
    ("datasets: {train: a.parquet}\ntokens: {tokenizer: t.json, objective: gpt}\n",
     "tokens.objective: Input should be 'causal_lm', 'masked_lm' or 'none'"),
    ("datasets: [train: a\n", "invalid YAML at line"),
    ("- just\n- a list\n", "expected a mapping of keys"),
])
def test_config_errors_name_the_key(tmp_path, text, expected):
    with pytest.raises(ConfigError) as err:
        load_config(_write(tmp_path, text))
    assert expected in str(err.value)
    assert "\n" not in str(err.value)


def test_flags_build_the_same_model():
    cfg = config_from_flags(train="a.parquet", test="b.parquet", label="y", groups=["g"],
                            ids=["id"], time="ts")
    assert list(cfg.datasets) == ["train", "test"]
    assert cfg.columns.label == "y" and cfg.columns.time == "ts"
    assert cfg.columns.declared() == {"y": "label", "ts": "time", "g": "group", "id": "id"}


def test_threshold_override_applies_and_bad_ones_fail():
    checks = {c.id: c for c in load_checks("default",
                                           {"leakage.duplicates": {"fail_above": 0.2}})}
    assert checks["leakage.duplicates"].fail_above == 0.2
    with pytest.raises(ConfigError, match=r"leakage.duplicates.fail_abov: unknown parameter "
                                          r"\(did you mean 'fail_above'\?\)"):
        load_checks("default", {"leakage.duplicates": {"fail_abov": 0.2}})
    with pytest.raises(ConfigError, match="leakage.duplicates.fail_above: Input should be a "
                                          "valid number"):
        load_checks("default", {"leakage.duplicates": {"fail_above": "high"}})
    with pytest.raises(ConfigError, match="fail_above must be a share in"):
        load_checks("default", {"leakage.duplicates": {"fail_above": 5}})
    with pytest.raises(ConfigError, match="unknown check id 'leakage.duplicate'"):
        load_checks("default", {"leakage.duplicate": {}})


def test_unknown_suite_and_suite_file(tmp_path):
    with pytest.raises(ConfigError, match="unknown suite 'defualt' \\(did you mean 'default'"):
        load_checks("defualt")
    suite = tmp_path / "mine.yaml"
    suite.write_text("checks:\n  leakage.duplicates: {fail_above: 0.01}\n")
    (check,) = load_checks(str(suite))
    assert check.fail_above == 0.01
    suite.write_text("checks:\n  leakage.nope: {}\n")
    with pytest.raises(ConfigError, match="unknown check id 'leakage.nope'"):
        load_checks(str(suite))


def test_fast_suite_is_default_without_model_probes():
    from auditor.core.suites import read_suite
    default, fast = read_suite("default"), read_suite("fast")
    assert set(default) - set(fast) == {"separability.adversarial", "separability.label_probe",
                                        "separability.memorisation"}
    assert all(fast[k] == default[k] for k in fast)


def test_suite_extends_and_overrides(tmp_path):
    suite = tmp_path / "mine.yaml"
    suite.write_text("extends: fast\nexclude: [drift.label]\n"
                     "checks:\n  leakage.duplicates: {fail_above: 0.05}\n")
    checks = {c.id: c for c in load_checks(str(suite))}
    assert "drift.label" not in checks and "separability.label_probe" not in checks
    assert checks["leakage.duplicates"].fail_above == 0.05
    assert checks["leakage.duplicates"].warn_above == 0.0
    suite.write_text("extends: fast\nexclude: [separability.label_probe]\n")
    with pytest.raises(ConfigError, match="is not in suite 'fast'"):
        load_checks(str(suite))
