"""The registry, the detector classes and the default suite agree; every check honours the
contract (constructs with defaults, deterministic, JSON-serialisable findings)."""
from __future__ import annotations

import ast
import json
from dataclasses import asdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import auditor
from auditor.core.checks import Cost
from auditor.core.config import Columns
from auditor.loading.data import build_audit_data
from auditor.errors import NotApplicable
from auditor.core.registry import CHECKS, load_check_class
from auditor.report.results import json_safe
from auditor.core.suites import read_suite
from tests.conftest import gx_or_skip

DETECTORS = Path(auditor.__file__).parent / "detectors"


def _classes_with_id() -> dict[str, str]:
    found = {}
    for path in DETECTORS.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                            and stmt.target.id == "id" and isinstance(stmt.value, ast.Constant)):
                        found[stmt.value.value] = f"auditor.detectors.{path.stem}:{node.name}"
    return found


def test_registry_matches_the_detector_classes():
    assert _classes_with_id() == CHECKS


def test_default_suite_lists_every_registered_check():
    assert set(read_suite("default")) == set(CHECKS)


TOKEN_CHECKS = {"tokens.roundtrip", "tokens.special_tokens", "tokens.contamination",
                "tokens.lengths", "tokens.benchmarks", "tokens.packing", "tokens.chat"}


def _contract_data(check_id: str, clean_splits, tmp_path: Path) -> Any:
    """Data on which ``check_id`` is applicable (so the contract is exercised, never skipped):
    the clean splits with 3 train rows copied into test, a time column, and a GX suite for
    schema.expectations; tokenized Lee-corpus text with GPT-2 for the token checks."""
    if check_id in TOKEN_CHECKS:
        from tests.tokenizer_fixtures import build_gpt2, lee_texts, token_data, tokenized_frame

        from auditor.loading.tokenizers import load_tokenizer

        path = build_gpt2(tmp_path / "tokenizer.json")
        tok = load_tokenizer(str(path))
        texts = lee_texts("lee_background.cor")
        frames = {"train": tokenized_frame(tok, texts[:60]),
                  "test": tokenized_frame(tok, texts[60:80] + texts[:2])}
        extra: dict[str, Any] = {"packing": {}} if check_id == "tokens.packing" else {}
        if check_id == "tokens.chat":  # the Lee texts as one-message chats, ChatML template
            from tests.tokenizer_fixtures import CHATML

            (tmp_path / "chatml.jinja").write_text(CHATML)
            extra = {"chat": {"template": tmp_path / "chatml.jinja"}}
            frames = {k: v.with_columns(pl.col("text").map_elements(
                lambda x: [{"role": "user", "content": x}],
                return_dtype=pl.List(pl.Struct({"role": pl.String, "content": pl.String})))
                .alias("messages")) for k, v in frames.items()}
        data = token_data(frames, path, **extra)
        if check_id == "tokens.benchmarks":  # HumanEval looked for in the Lee corpus
            from tests.tokenizer_fixtures import humaneval_path

            from auditor.core.config import Benchmark
            from auditor.loading.benchmarks import read_benchmark
            from auditor.loading.data import read_table

            data.benchmarks = (read_benchmark("humaneval", Benchmark(path=humaneval_path()),
                                              read_table),)
        return data
    start = datetime(2024, 1, 1)
    train = clean_splits["train"].with_columns(
        pl.Series("ts", [start + timedelta(hours=i) for i in range(clean_splits["train"].height)]))
    test = pl.concat([clean_splits["test"], clean_splits["train"].head(3)])
    test = test.with_columns(
        pl.Series("ts", [start + timedelta(days=60, hours=i) for i in range(test.height)]))
    data = build_audit_data({"train": train, "test": test},
                            columns=Columns(label="y", ids=["row_id"], time="ts"))
    if check_id == "schema.expectations":
        gx_or_skip()
        from auditor.integrations.gx_export import infer_suite

        data.expectations = infer_suite(train, name="contract", ids=["row_id"])
    return data


@pytest.mark.parametrize("check_id", sorted(CHECKS))
def test_check_contract(check_id, clean_splits, tmp_path):
    """Every check constructs with defaults, applies to its fixture (NotApplicable fails the
    test), is deterministic and gives JSON-serialisable findings."""
    cls = load_check_class(check_id)
    assert cls.id == check_id
    assert isinstance(cls.cost, Cost) and cls.title
    assert cls.__doc__ and len(cls.__doc__.split("\n\n")[0]) > 20
    check = cls()
    try:
        first = check.run(_contract_data(check_id, clean_splits, tmp_path))
    except NotApplicable as why:
        pytest.fail(f"{check_id} is not applicable to its contract fixture: {why}")
    assert first, f"{check_id} returned no finding on its contract fixture"
    second = check.run(_contract_data(check_id, clean_splits, tmp_path))
    doc1 = json.dumps(json_safe([asdict(f) for f in first]), allow_nan=False)
    doc2 = json.dumps(json_safe([asdict(f) for f in second]), allow_nan=False)
    assert doc1 == doc2


def test_old_inclusive_threshold_names_are_read_as_their_above_counterparts():
    from auditor.core.suites import build_check

    drift = build_check("drift.features", {"psi_fail_at": 0.5, "ks_warn_at": 0.15}, "t")
    assert (drift.psi_fail_above, drift.ks_warn_above) == (0.5, 0.15)
    adv = build_check("separability.adversarial", {"warn_at": 0.7, "fail_at": 0.9}, "t")
    assert (adv.warn_above, adv.fail_above) == (0.7, 0.9)
    probe = build_check("separability.label_probe", {"suspicious_at": 0.99}, "t")
    assert probe.suspicious_above == 0.99


def test_every_grading_threshold_follows_the_above_below_convention():
    import dataclasses

    from auditor.core.registry import CHECKS, load_check_class

    for cid in CHECKS:
        names = [f.name for f in dataclasses.fields(load_check_class(cid))]
        assert not [n for n in names if n.endswith(("warn_at", "fail_at"))], cid


def test_an_old_name_in_audit_yaml_thresholds_overrides_the_suites_new_name():
    from auditor.core.suites import load_checks

    checks = {c.id: c for c in load_checks("default", {"drift.features": {"psi_fail_at": 0.6}})}
    assert checks["drift.features"].psi_fail_above == 0.6
