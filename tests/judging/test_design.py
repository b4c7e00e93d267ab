"""The split design (issue 26, item 1): declared (``split:`` / ``--split``) or inferred from the
data, stated at the top of report.json, the HTML page, the terminal and the Markdown summary."""
from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from auditor.api import audit
from auditor.core.config import parse_config
from auditor.errors import ConfigError
from auditor.report.split_design import design_sentence
from tests.design_fixtures import DAY0, class_split, group_split, time_split

@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """A one-check suite: the design is measured before any check, whatever the suite."""
    path = tmp_path_factory.mktemp("suite") / "one.yaml"
    path.write_text("checks:\n  leakage.temporal: {}\n")
    return path


@pytest.fixture
def design(suite):
    def run(frames: dict[str, pl.DataFrame], **roles) -> dict:
        report = audit(splits=frames, suite=str(suite), **roles)
        assert report.split_design is not None
        return report.split_design
    return run


def test_an_ordered_time_column_is_a_time_split(design):
    d = design(time_split(), label="y", time="day")
    assert (d["design"], d["by"], d["declared"]) == ("time", "day", False)
    assert "starts after" in d["reason"]


def test_a_time_column_whose_splits_overlap_is_not_a_time_split(design):
    # 10 of 100 test rows (10% > 5%) dated inside train's range
    assert design(time_split(overlap=10), label="y", time="day")["design"] == "random"
    # 4 of 100 (4% <= 5%): still judged a time split; leakage.temporal reports the overlap
    assert design(time_split(overlap=4), label="y", time="day")["design"] == "time"


def test_disjoint_entities_are_a_group_split_and_shared_ones_are_not(design):
    d = design(group_split(), label="y", groups=["user"])
    assert (d["design"], d["by"]) == ("group", "user")
    assert "shares at most 0% of its `user` entities" in d["reason"]
    # 1 of 20 test users (5%) shared: still a group split (leakage.group_overlap reports it)
    assert design(group_split(shared=1), label="y", groups=["user"])["design"] == "group"
    # 2 of 20 (10%): not a group split
    assert design(group_split(shared=2), label="y", groups=["user"])["design"] != "group"


def test_class_shares_held_to_one_row_are_a_stratified_split(design):
    # train 50% positive; test 10 of 20 (exact) and 11 of 20 (one row off): stratified
    for pos in (10, 11):
        d = design(class_split(pos), label="y")
        assert (d["design"], d["by"]) == ("stratified", "y"), pos
    # 12 of 20 (two rows off): random
    d = design(class_split(12), label="y")
    assert (d["design"], d["by"]) == ("random", None)
    assert d["reason"] == "the class shares differ between splits by more than one row"


def test_a_declared_design_is_kept_and_said_declared(suite):
    frames = time_split()
    report = audit(splits=frames, label="y", time="day", suite=str(suite), split="published")
    assert report.split_design == {"design": "published", "by": None, "declared": True,
                                   "reason": "split: published", "entities": None}
    report = audit(splits=frames, label="y", time="day", suite=str(suite), split="random")
    assert report.split_design["design"] == "random" and report.split_design["declared"]


def test_a_single_split_has_no_design_to_infer(design):
    d = design({"train": time_split()["train"]}, label="y", time="day")
    assert d["design"] == "unknown" and "single split" in d["reason"]


def test_a_declared_time_split_without_a_time_column_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"split: time needs columns\.time"):
        parse_config({"datasets": {"train": "a.parquet"}, "split": "time"},
                     base_dir=tmp_path, source="audit.yaml")
    with pytest.raises(ConfigError,
                       match=r"audit.yaml: split: Input should be 'random'.*got 'nested'"):
        parse_config({"datasets": {"train": "a.parquet"}, "split": "nested"},
                     base_dir=tmp_path, source="audit.yaml")


def test_the_cli_states_the_design_in_every_output(tmp_path, cli, suite):
    frames = time_split()
    frames = {s: f.rename({"day": "<b>day</b>"}) for s, f in frames.items()}
    for s, f in frames.items():
        f.write_parquet(tmp_path / f"{s}.parquet")
    r = cli("run", "--train", tmp_path / "train.parquet", "--test", tmp_path / "test.parquet",
            "--label", "y", "--time", "<b>day</b>", "--suite", suite, "--out", tmp_path / "o",
            "--summary-md", tmp_path / "summary.md")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    assert doc["split_design"]["design"] == "time" and doc["split_design"]["by"] == "<b>day</b>"
    sentence = design_sentence(doc["split_design"])
    assert sentence.startswith("Judged as a time split by `<b>day</b>` (inferred: ")
    assert sentence in r.stderr
    html = (tmp_path / "o" / "report.html").read_text()
    assert "Judged as a time split by `&lt;b&gt;day&lt;/b&gt;`" in html and "<b>day" not in html
    assert "Judged as a time split by \\`&lt;b&gt;day&lt;/b&gt;\\`" in \
        (tmp_path / "summary.md").read_text()
    # declared on the command line; a design needing a column that is not declared: exit 2
    r = cli("run", "--train", tmp_path / "train.parquet", "--test", tmp_path / "test.parquet",
            "--label", "y", "--suite", suite, "--split", "group", "--out", tmp_path / "p")
    assert r.returncode == 2 and "--split: split: group needs columns.groups" in r.stderr


def test_a_stratified_split_of_many_classes_in_halves_is_stratified(design):
    """sklearn's stratified 50/50 split of 6 classes holds the pooled shares to one row: the
    rule compares with the pooled share, not with train's (which differs from test's by up to
    twice the rounding)."""
    from sklearn.model_selection import train_test_split

    rng = np.random.default_rng(3)
    y = rng.choice(6, 901, p=[0.3, 0.25, 0.2, 0.1, 0.1, 0.05])
    frame = pl.DataFrame({"x": rng.normal(size=901), "y": y})
    hits = 0
    for seed in range(8):
        tr, te = train_test_split(np.arange(901), test_size=0.5, stratify=y, random_state=seed)
        d = design({"train": frame[tr], "test": frame[te]}, label="y")
        hits += d["design"] == "stratified"
    assert hits == 8


def test_entities_of_one_row_each_do_not_make_a_group_split(design):
    """400 users of one row, split at random: disjoint, as any split of them; not a group
    split (and the adversarial folds stay row folds)."""
    rng = np.random.default_rng(4)
    frame = pl.DataFrame({"user": np.arange(400), "x": rng.normal(size=400),
                          "y": rng.integers(0, 2, 400)})
    d = design({"train": frame[:300], "test": frame[300:]}, label="y", groups=["user"])
    assert d["design"] != "group" and d["entities"] is None
    assert "`user` entities do not repeat in train (300 rows, 300 entities)" in d["reason"]


def test_a_time_split_of_disjoint_users_names_the_users_as_entities(design):
    frames = group_split()
    days = {"train": 0, "test": 400}
    frames = {s: f.with_columns(day=pl.Series([DAY0 + timedelta(days=days[s] + i // 4)
                                               for i in range(f.height)]))
              for s, f in frames.items()}
    d = design(frames, label="y", time="day", groups=["user"])
    assert (d["design"], d["by"], d["entities"]) == ("time", "day", "user")


def test_the_reasons_say_what_was_measured(design):
    one_class = {s: f.with_columns(pl.lit(1).alias("y")) for s, f in class_split(10).items()}
    assert design(one_class, label="y")["reason"] == "one class: no class shares to hold"
    d = design(group_split(shared=2), label="y", groups=["user"], split="random")
    assert d["reason"] == "split: random" and d["entities"] is None
    shared = {s: f.with_columns(pl.lit(0).alias("y")) for s, f in group_split(shared=2).items()}
    shared["test"] = shared["test"].with_columns(pl.Series("y", [1] * 40 + [0] * 40))
    d = design(shared, label="y", groups=["user"])
    assert d["design"] == "random"
    assert d["reason"] == ("a later split shares 10.0% of its `user` entities with an earlier "
                           "one; the class shares differ between splits by more than one row")
    # an unlabelled test split: nothing to compare the class shares with
    unlabelled = class_split(10)
    unlabelled["test"] = unlabelled["test"].with_columns(pl.lit(None, pl.Int64).alias("y"))
    assert design(unlabelled, label="y")["reason"] == \
        "one labelled split: no class shares to compare"


def test_two_group_columns_the_disjoint_one_decides(design):
    frames = group_split()
    rng = np.random.default_rng(6)
    frames = {s: f.with_columns(store=pl.Series(rng.integers(0, 5, f.height)))
              for s, f in frames.items()}
    d = design(frames, label="y", groups=["store", "user"])
    assert (d["design"], d["by"], d["entities"]) == ("group", "user", "user")


def test_a_measuring_failure_is_design_unknown_with_the_error(monkeypatch, design):
    import auditor.judging.design as design_module

    def broken(*args, **kwargs):
        raise RuntimeError("engine lost")
    monkeypatch.setattr(design_module, "_time_cut", broken)
    d = design(time_split(), label="y", time="day")
    assert d["design"] == "unknown"
    assert d["reason"] == "the design could not be measured (RuntimeError: engine lost)"


def test_every_list_of_designs_agrees():
    import json as json_module

    import auditor
    from auditor.core.config import SPLIT_DESIGNS
    from auditor.report.split_design import DESIGN_WORDS

    schema = json_module.loads((Path(auditor.__file__).parent / "report" / "schema" /
                                "report.schema.json").read_text())
    enum = schema["properties"]["split_design"]["properties"]["design"]["enum"]
    assert tuple(enum) == SPLIT_DESIGNS == tuple(DESIGN_WORDS)


def test_a_reference_snapshot_is_not_a_split_of_the_design(design):
    frames = time_split()
    d = design(frames, label="y", time="day", reference=frames["train"].head(50))
    assert (d["design"], d["by"]) == ("time", "day")
