"""alibi-detect's TabularDrift on bench data; run inside bench/.venv-alibi by bench/peers.py.

    bench/.venv-alibi/bin/python bench/peers_alibi.py TRAIN_DIR TEST_DIR OUT_DIR [--skip a,b]

Loads the Parquet directories with pandas (load time is part of the measured wall time, as the
auditor's own loading is), turns them into the one numeric matrix TabularDrift takes, fits
``TabularDrift(x_ref=train)`` (two-sample Kolmogorov-Smirnov per numeric feature,
chi-square per categorical feature) and tests ``test`` against it per feature
(``drift_type="feature"``, its default ``p_val=0.05``), saves ``alibi.json`` (per-feature test,
statistic, p-value, verdict) in OUT_DIR and prints one line ``PEER {json}`` with phase timings
and the features it reports as drifted. alibi-detect writes no report of its own: the JSON is
the whole output.

Features, with the roles the auditor and the other peers are given: numeric ``num_*``,
``leak_days`` and ``last_login`` (as epoch microseconds); categorical ``cat_low_*``,
``cat_high_*``, ``is_member`` and ``label`` (drift-tested as a categorical, like auditor's
drift.label), each encoded with codes shared by both splits (a level only in test gets its own
code, so the chi-square test sees it). Not features: ``row_id`` (id), ``event_ts`` (time),
``user_id`` (group key), ``notes`` (TabularDrift has no text test). TabularDrift needs a
matrix without missing values (SciPy's KS propagates NaN into the p-value), so a missing
numeric value is replaced by the column's train median, the usual preprocessing of its users;
the encoding and imputation are inside the measured time. ``--skip`` leaves the named columns
out (peers.py's ``alibi-nohigh`` drops ``cat_high_*``: TabularDrift counts every level of a
categorical with its own pass over the rows, ``(x[:, f] == v).sum()`` per level in
``TabularDrift._get_counts``, O(levels x rows), which dominates its run on 10k-200k levels).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

t_start = time.perf_counter()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from alibi_detect.cd import TabularDrift  # noqa: E402

NUM = [f"num_{i:02d}" for i in range(24)] + ["leak_days", "last_login"]
CAT = [f"cat_low_{j}" for j in range(5)] + [f"cat_high_{j}" for j in range(3)] + [
    "is_member", "label"]


def matrices(ref: pd.DataFrame, cur: pd.DataFrame, num: list[str], cat: list[str]
             ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Float matrices (``num`` then ``cat`` columns) and TabularDrift's
    ``categories_per_feature`` (number of levels, codes shared by both splits)."""
    n = len(ref)
    x_ref = np.empty((n, len(num) + len(cat)), dtype=np.float64)
    x_cur = np.empty((len(cur), x_ref.shape[1]), dtype=np.float64)
    for j, col in enumerate(num):
        r, c = ref[col], cur[col]
        if pd.api.types.is_datetime64_any_dtype(r):
            r = r.astype("int64").where(r.notna())
            c = c.astype("int64").where(c.notna())
        r = r.astype("float64")
        c = c.astype("float64")
        med = float(r.median())
        x_ref[:, j] = r.fillna(med).to_numpy()
        x_cur[:, j] = c.fillna(med).to_numpy()
    cats = {}
    for k, col in enumerate(cat):
        j = len(num) + k
        codes, levels = pd.factorize(pd.concat([ref[col], cur[col]], ignore_index=True),
                                     use_na_sentinel=False)
        x_ref[:, j] = codes[:n]
        x_cur[:, j] = codes[n:]
        cats[j] = len(levels)
    return x_ref, x_cur, cats


def main() -> None:
    train_dir, test_dir, out = (Path(a) for a in sys.argv[1:4])
    skip = set(sys.argv[5].split(",")) if sys.argv[4:5] == ["--skip"] else set()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    ref = pd.read_parquet(train_dir)
    cur = pd.read_parquet(test_dir)
    t1 = time.perf_counter()
    x_ref, x_cur, cats = matrices(ref, cur, [c for c in NUM if c not in skip],
                                  [c for c in CAT if c not in skip])
    cd = TabularDrift(x_ref, p_val=0.05, categories_per_feature=cats)
    pred = cd.predict(x_cur, drift_type="feature", return_p_val=True, return_distance=True)
    t2 = time.perf_counter()
    d = pred["data"]
    names = [c for c in NUM + CAT if c not in skip]
    thr = float(np.atleast_1d(d["threshold"])[0])
    cols = {name: {"test": "chi2" if j in cats else "ks", "stat": float(d["distance"][j]),
                   "p_val": float(d["p_val"][j]), "threshold": thr,
                   "drifted": bool(d["is_drift"][j])}
            for j, name in enumerate(names)}
    (out / "alibi.json").write_text(json.dumps({"meta": pred.get("meta"), "columns": cols},
                                               indent=1, default=str))
    t3 = time.perf_counter()
    print("PEER " + json.dumps({
        "import_s": t0 - t_start, "load_s": t1 - t0, "run_s": t2 - t1, "save_s": t3 - t2,
        "rows": {"train": len(ref), "test": len(cur)}, "columns": cols,
        "drifted": [c for c, v in cols.items() if v["drifted"]]}, default=str))


if __name__ == "__main__":
    main()
