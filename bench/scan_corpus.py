"""Precision and recall of ``auditor scan-code`` on a labelled corpus of real notebooks and
scripts (``bench/scan_corpus/*/labels.csv``), overall and by leak pattern.

    .venv/bin/python bench/scan_corpus.py                 # every labelled folder
    .venv/bin/python bench/scan_corpus.py --show-misses   # also each missed / false file

Each ``labels.csv`` row names a file of its folder and what a reader found in it (one line of
reason each): ``preprocessing`` (leak / clean; ``pattern`` for a leak: scaling, imputation,
encoding, vectorisation, binning, aggregation, selection, dimensionality, other; the lines of
the fit and of the split), and ``overlap``, ``resampling``, ``multitest`` (yes / no). A file
is flagged for preprocessing when the scan reports any of ``fit_before_split``,
``fit_on_train_and_test``, ``fit_on_test`` or ``global_statistic_before_split``; for multitest
when it reports ``test_reused_for_selection``; for resampling when it reports
``resampled_before_split``; for overlap when it reports ``evaluated_on_training_rows``. Precision =
flagged leaky files / flagged files, recall = flagged leaky files / leaky files; per pattern
the recall of that pattern's leaky files. Also: files scanned without the lines that do not
parse (a ``code_unparsed`` finding with ``skipped_lines``), files that did not scan (a
``code_unparsed`` finding or an exception) and the seconds per file.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

PREPROCESSING = {"fit_before_split", "fit_on_train_and_test", "fit_on_test",
                 "global_statistic_before_split"}


def read_labels(root: Path) -> list[dict[str, str]]:
    rows = []
    for labels in sorted(root.glob("*/labels.csv")):
        with labels.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                row["path"] = str(labels.parent / row["file"])
                rows.append(row)
    return rows


def flags(findings: list) -> dict[str, bool]:
    metrics = {f.metric for f in findings}
    resampled = "resampled_before_split" in metrics
    return {"preprocessing": bool(metrics & PREPROCESSING),
            "multitest": "test_reused_for_selection" in metrics,
            "resampling": resampled,
            "overlap": "evaluated_on_training_rows" in metrics,
            "unparsed": any(f.metric == "code_unparsed" and not f.evidence.get("skipped_lines")
                            for f in findings),
            "partial": any(f.metric == "code_unparsed" and f.evidence.get("skipped_lines")
                           for f in findings)}


def score(pairs: list[tuple[bool, bool]]) -> tuple[int, int, int, float, float]:
    """(true positives, flagged, positives, precision, recall) of (truth, flagged) pairs."""
    tp = sum(t and f for t, f in pairs)
    flagged = sum(f for _, f in pairs)
    pos = sum(t for t, _ in pairs)
    return tp, flagged, pos, tp / flagged if flagged else float("nan"), \
        tp / pos if pos else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=HERE / "scan_corpus")
    ap.add_argument("--show-misses", action="store_true")
    args = ap.parse_args()
    from auditor.codescan import scan_paths

    rows = read_labels(args.root)
    got: dict[str, dict[str, bool]] = {}
    failed, t0 = [], time.perf_counter()
    for row in rows:
        try:
            got[row["path"]] = flags(scan_paths([Path(row["path"])]))
        except Exception as err:  # noqa: BLE001 - counted, never hidden
            failed.append(f"{row['path']}: {type(err).__name__}: {err}")
            got[row["path"]] = {"preprocessing": False, "multitest": False,
                                "resampling": False, "overlap": False, "unparsed": True}
    per_file = (time.perf_counter() - t0) / max(1, len(rows))
    print(f"{len(rows)} labelled files under {args.root} "
          f"({Counter(r['preprocessing'] for r in rows)}), {per_file:.3f} s per file")
    print(f"{'finding':28}{'TP':>5}{'flagged':>9}{'leaky':>7}{'precision':>11}{'recall':>8}")
    for name, truth in (("preprocessing", lambda r: r["preprocessing"] == "leak"),
                        ("resampling", lambda r: r["resampling"] == "yes"),
                        ("multitest", lambda r: r["multitest"] == "yes"),
                        ("overlap", lambda r: r["overlap"] == "yes")):
        tp, fl, pos, p, r = score([(truth(row), got[row["path"]][name]) for row in rows])
        print(f"{name:28}{tp:>5}{fl:>9}{pos:>7}{p:>11.2f}{r:>8.2f}")
    print("recall of preprocessing leaks by pattern:")
    for pattern in sorted({r["pattern"] for r in rows if r["preprocessing"] == "leak"}):
        leaky = [r for r in rows if r["preprocessing"] == "leak" and r["pattern"] == pattern]
        found = sum(got[r["path"]]["preprocessing"] for r in leaky)
        print(f"  {pattern:26}{found:>3} of {len(leaky):<3}")
    unparsed = [p for p, g in got.items() if g["unparsed"]]
    partial = [p for p, g in got.items() if g.get("partial")]
    print(f"not scanned: {len(unparsed)}; scanned without lines that do not parse: "
          f"{len(partial)}; raised: {len(failed)}")
    for line in failed:
        print("  " + line)
    if args.show_misses:
        for row in rows:
            g = got[row["path"]]["preprocessing"]
            if g != (row["preprocessing"] == "leak"):
                kind = "missed" if not g else "false alarm"
                print(f"{kind:12} {row['path']}: {row['reason']}")


if __name__ == "__main__":
    main()
