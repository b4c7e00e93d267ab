"""Deepchecks' train_test_validation suite on bench data; run inside bench/.venv-deepchecks by
bench/peers.py.

    bench/.venv-deepchecks/bin/python bench/peers_deepchecks.py TRAIN_DIR TEST_DIR OUT_DIR

Loads the Parquet directories with pandas (load time is part of the measured wall time, as the
auditor's own loading is), builds tabular ``Dataset`` objects with the same roles the auditor is
given (label, index = row_id, datetime = event_ts, categorical features declared; user_id is a
group key, not a feature), runs the suite with its defaults (including its own sampling), saves
``deepchecks.html`` and ``deepchecks.json`` in OUT_DIR, and prints one line ``PEER {json}`` with
phase timings and, per check, its conditions (name, category, details) and any error.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

t_start = time.perf_counter()

import pandas as pd  # noqa: E402
from deepchecks.tabular import Dataset  # noqa: E402
from deepchecks.tabular.suites import train_test_validation  # noqa: E402

CAT = [f"cat_low_{j}" for j in range(5)] + [f"cat_high_{j}" for j in range(3)] + [
    "is_member", "notes"]
NOT_FEATURES = {"row_id", "event_ts", "label", "user_id"}


def dataset(df: pd.DataFrame, name: str) -> Dataset:
    features = [c for c in df.columns if c not in NOT_FEATURES]
    return Dataset(df, label="label", features=features, cat_features=CAT, index_name="row_id",
                   datetime_name="event_ts", label_type="binary", dataset_name=name)


def short(value, limit: int = 300) -> str:
    if isinstance(value, pd.DataFrame):
        return f"DataFrame {value.shape}"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def summarise(result) -> list[dict]:
    """One entry per check: header, conditions (name, category, details), a short repr of
    the check's value (what it measured, whether or not a condition failed), or the error."""
    out = []
    for r in result.results:
        entry: dict = {"check": r.get_header()}
        if hasattr(r, "exception"):
            entry["error"] = f"{type(r.exception).__name__}: {r.exception}"[:500]
        else:
            entry["conditions"] = [
                {"name": getattr(c, "name", ""), "category": c.category.value,
                 "details": str(c.details)[:2000]}
                for c in r.conditions_results]
            entry["value"] = short(r.value)
        out.append(entry)
    return out


def main() -> None:
    train_dir, test_dir, out = (Path(a) for a in sys.argv[1:4])
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    train = pd.read_parquet(train_dir)
    test = pd.read_parquet(test_dir)
    t1 = time.perf_counter()
    suite = train_test_validation()
    result = suite.run(train_dataset=dataset(train, "train"), test_dataset=dataset(test, "test"))
    t2 = time.perf_counter()
    # static HTML: the widget form needs ipywidgets/anywidget, which the pinned set lacks
    result.save_as_html(str(out / "deepchecks.html"), as_widget=False)
    checks = summarise(result)
    (out / "deepchecks.json").write_text(json.dumps(checks, indent=1, default=str))
    t3 = time.perf_counter()
    print("PEER " + json.dumps({
        "import_s": t0 - t_start, "load_s": t1 - t0, "run_s": t2 - t1, "save_s": t3 - t2,
        "rows": {"train": len(train), "test": len(test)}, "checks": checks}, default=str))


if __name__ == "__main__":
    main()
