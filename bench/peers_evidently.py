"""Evidently's data-drift preset on bench data; run inside bench/.venv-evidently by bench/peers.py.

    bench/.venv-evidently/bin/python bench/peers_evidently.py TRAIN_DIR TEST_DIR OUT_DIR

Loads the Parquet directories with pandas (load time is part of the measured wall time, as the
auditor's own loading is), runs ``Report([DataDriftPreset()])`` with train as reference and test
as current, saves ``evidently.html`` and ``evidently.json`` in OUT_DIR, and prints one line
``PEER {json}`` with phase timings and the columns the preset reports as drifted.

Column roles are declared as they are for the auditor: row_id is the id, event_ts the timestamp,
label the target (Evidently has no binary-target role without predictions, so the label is
declared categorical and drift-tested, like auditor's drift.label), user_id is a group key and
not a feature (declared "unknown", so not drift-tested), notes is text. Everything else uses the
preset's defaults (its automatic choice of test per column and its thresholds).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

t_start = time.perf_counter()

import pandas as pd  # noqa: E402
from evidently import DataDefinition, Dataset, Report  # noqa: E402
from evidently.presets import DataDriftPreset  # noqa: E402

NUM = [f"num_{i:02d}" for i in range(24)] + ["leak_days"]
CAT = [f"cat_low_{j}" for j in range(5)] + [f"cat_high_{j}" for j in range(3)] + [
    "is_member", "label"]


def definition() -> DataDefinition:
    return DataDefinition(id_column="row_id", timestamp="event_ts", numerical_columns=NUM,
                          categorical_columns=CAT, text_columns=["notes"],
                          datetime_columns=["last_login"], unknown_columns=["user_id"],
                          list_columns=[])


# Evidently's tests whose score is a p-value (drift when score < threshold); every other test
# is a distance or a classifier AUC (drift when score >= threshold), see
# evidently/legacy/calculations/stattests/*.py.
P_VALUE_TESTS = {"Anderson-Darling", "Cramer-von Mises", "Epps-Singleton", "Fisher's Exact test",
                 "g_test", "Mann-Whitney U-rank test", "empirical_mmd", "t_test",
                 "Total-Variation-Distance", "Percentile text content drift"}


def drifted_columns(doc: dict) -> tuple[dict[str, dict], int | None]:
    """Per-column drift verdicts from the report dict (its ValueDrift metrics).

    A ValueDrift metric's value is the column's drift score; its config holds the test
    (``method``) and ``threshold``; the verdict follows the test's own rule (above). The
    DriftedColumnsCount metric's count is returned as a cross-check.
    """
    cols: dict[str, dict] = {}
    count = None
    for m in doc.get("metrics", []):
        cfg = m.get("config", {})
        kind = str(cfg.get("type", ""))
        if kind.endswith("ValueDrift"):
            col, score = cfg.get("column"), m.get("value")
            method, thr = str(cfg.get("method")), cfg.get("threshold")
            p_value = "p_value" in method or method in P_VALUE_TESTS
            drifted = None
            if isinstance(score, (int, float)) and isinstance(thr, (int, float)):
                drifted = bool(score < thr) if p_value else bool(score >= thr)
            cols[col] = {"method": method, "score": score, "threshold": thr,
                         "drifted": drifted}
        elif kind.endswith("DriftedColumnsCount"):
            val = m.get("value")
            count = val.get("count") if isinstance(val, dict) else None
    return cols, count


def main() -> None:
    train_dir, test_dir, out = (Path(a) for a in sys.argv[1:4])
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    ref = pd.read_parquet(train_dir)
    cur = pd.read_parquet(test_dir)
    t1 = time.perf_counter()
    report = Report([DataDriftPreset()])
    snapshot = report.run(reference_data=Dataset.from_pandas(ref, data_definition=definition()),
                          current_data=Dataset.from_pandas(cur, data_definition=definition()))
    t2 = time.perf_counter()
    snapshot.save_html(str(out / "evidently.html"))
    snapshot.save_json(str(out / "evidently.json"))
    t3 = time.perf_counter()
    doc = snapshot.dict()
    cols, count = drifted_columns(doc)
    print("PEER " + json.dumps({
        "import_s": t0 - t_start, "load_s": t1 - t0, "run_s": t2 - t1, "save_s": t3 - t2,
        "rows": {"train": len(ref), "test": len(cur)}, "columns": cols,
        "drifted": [c for c, v in cols.items() if v["drifted"]],
        "drifted_count": count}, default=str))


if __name__ == "__main__":
    main()
