"""auditor.codescan: static detection of preprocessing leaks in scripts and notebooks.

The corpus in tests/codescan_corpus/ holds small leaky and correct pipelines; each file declares
the findings it must produce in a header (``# expect: leak METRIC FAMILY line N``, notebooks
``... cell C line N``, or ``# expect: clean``) and the scan must match them exactly.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

import auditor
from auditor.api import scan_report
from auditor.codescan import expand_paths, load_source, role_hint, scan_paths
from auditor.errors import InputError
from auditor.report.results import Severity, Status

CORPUS = Path(__file__).parent / "codescan_corpus"
FILES = sorted(p for p in CORPUS.iterdir() if p.suffix in (".py", ".ipynb"))
SCHEMA = json.loads((Path(auditor.__file__).parent / "report" / "schema" / "report.schema.json")
                    .read_text())
_EXPECT = re.compile(r"expect:\s*(clean|leak\s+(\w+)\s+(\w+)(?:\s+cell\s+(\d+))?\s+line\s+(\d+))")

Key = tuple[str, str, "int | None", int]


def expectations(path: Path) -> set[Key] | None:
    """The findings a corpus file declares; None when it declares nothing (a broken file)."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        header = "".join(cells[0]["source"])
    else:
        header = "\n".join(line for line in path.read_text().splitlines()
                           if line.startswith("#"))
    found = _EXPECT.findall(header)
    if not found:
        return None
    if any(m[0] == "clean" for m in found):
        assert len(found) == 1, f"{path.name}: 'clean' excludes other expectations"
        return set()
    return {(metric, family, int(cell) if cell else None, int(line))
            for _, metric, family, cell, line in found}


def observed(path: Path) -> set[Key]:
    return {(f.metric, f.evidence["family"], f.evidence.get("cell"), f.evidence["line"])
            for f in scan_paths([path]) if f.severity == Severity.FAIL}


def test_corpus_has_leaky_and_clean_scripts_and_notebooks():
    kinds = {(p.name.split("_")[0], p.suffix) for p in FILES}
    assert kinds == {("leak", ".py"), ("clean", ".py"), ("leak", ".ipynb"),
                     ("clean", ".ipynb")}
    assert all(expectations(p) is not None for p in FILES)


def test_corpus_scripts_are_never_collected_by_pytest():
    assert not [p.name for p in FILES if p.name.startswith("test_")
                or p.name.endswith("_test.py")]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_corpus_file_gives_exactly_its_declared_findings(path):
    assert observed(path) == expectations(path)


def test_corpus_recall_is_complete_without_false_positives():
    expected = {(p.name, *k) for p in FILES for k in expectations(p) or set()}
    got = {(p.name, *k) for p in FILES for k in observed(p)}
    recall = len(expected & got) / len(expected)
    false_positives = len(got - expected)
    clean_files = [p for p in FILES if not expectations(p)]
    flagged_clean = [p.name for p in clean_files if observed(p)]
    print(f"\ncode scan corpus: {len(FILES)} files ({len(clean_files)} clean), "
          f"{len(expected)} planted leaks, recall {recall:.3f} "
          f"({len(expected & got)}/{len(expected)}), false positives {false_positives}, "
          f"clean files flagged {len(flagged_clean)}")
    assert recall == 1.0 and false_positives == 0 and not flagged_clean


def test_every_leak_pattern_of_the_issue_is_in_the_corpus():
    declared = {k[:2] for p in FILES for k in expectations(p) or set()}
    for family in ("scaler", "imputer", "decomposition", "selector", "vectorizer", "encoder",
                   "target_encoder"):
        assert ("fit_before_split", family) in declared
    for metric in ("fit_on_test", "fit_on_train_and_test", "test_reused_for_selection",
                   "global_statistic_before_split", "evaluated_on_training_rows",
                   "resampled_before_split"):
        assert any(m == metric for m, _ in declared)


def test_finding_evidence_names_file_line_snippet_and_why():
    path = CORPUS / "leak_scaler_before_split.py"
    (f,) = scan_paths([path])
    assert f.severity == Severity.FAIL and f.subject == "X"
    assert f.evidence["file"] == str(path) and f.evidence["line"] == 12
    assert f.evidence["snippet"] == "X = scaler.fit_transform(X)"
    assert f.evidence["transformer"] == "StandardScaler"
    assert "train_test_split at line 13" in f.evidence["why"]
    assert f.message.startswith("leak_scaler_before_split.py:12: StandardScaler is fitted on X")


def test_notebook_findings_map_back_to_cell_and_line():
    path = CORPUS / "leak_notebook_scaler_before_split.ipynb"
    (f,) = scan_paths([path])
    assert (f.evidence["cell"], f.evidence["line"]) == (5, 3)
    assert f.evidence["snippet"] == "X_scaled = StandardScaler().fit_transform(X)"
    assert "cell 6 line 2" in f.evidence["why"]


def test_notebook_magics_are_blanked_and_broken_cells_skipped(tmp_path):
    nb = {"cells": [
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import pandas as pd\n",
                                         "files = !ls data\n", "df = pd.read_csv('a.csv')"]},
        {"cell_type": "code", "source": "%%bash\necho hi"},
        {"cell_type": "code", "source": "def broken(:\n    pass"},
        {"cell_type": "markdown", "source": "# notes"},
        {"cell_type": "code", "source": "%%time\nx = df.mean()\ndf.describe?"}],
        "nbformat": 4, "nbformat_minor": 5, "metadata": {}}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    src = load_source(path)
    lines = src.text.splitlines()
    assert lines[:4] == ["", "import pandas as pd", "files = None", "df = pd.read_csv('a.csv')"]
    assert src.cells[4:6] == [(2, 1), (2, 2)] and lines[4:6] == ["", ""]  # %%bash cell
    assert src.cells[6] == (3, 1) and lines[6] == ""          # broken cell blanked
    assert src.cells[9] == (5, 2) and lines[9] == "x = df.mean()"
    assert src.notes == ["cell 3 skipped: invalid syntax at line 1"]
    assert scan_paths([path]) == []


def test_directories_are_expanded_and_bad_paths_rejected(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "b.ipynb").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    assert expand_paths([tmp_path]) == [tmp_path / "pkg" / "a.py"]
    with pytest.raises(InputError, match="file not found"):
        scan_paths([tmp_path / "missing.py"])
    with pytest.raises(InputError, match="unsupported file type '.txt'"):
        scan_paths([tmp_path / "notes.txt"])
    (tmp_path / "bad.ipynb").write_text("not json")
    with pytest.raises(InputError, match="not a Jupyter notebook"):
        scan_paths([tmp_path / "bad.ipynb"])


def test_a_script_that_does_not_parse_is_one_warning(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("import pandas as pd\ndef f(:\n")
    (f,) = scan_paths([path])
    assert f.severity == Severity.WARN and f.metric == "code_unparsed"
    assert f.evidence["line"] == 2 and "broken.py:2: cannot parse" in f.message


def test_pathologically_nested_code_is_a_warning_not_a_crash(tmp_path):
    path = tmp_path / "deep.py"
    path.write_text("x = " + " + ".join(["a"] * 3000) + "\n")
    (f,) = scan_paths([path])
    assert (f.severity, f.metric) == (Severity.WARN, "code_unparsed")


def test_extra_fitters_name_custom_transformer_classes_and_functions(tmp_path):
    path = tmp_path / "custom.py"
    path.write_text(
        "from mylib import WinsorScaler, rank_gauss\n"
        "from sklearn.model_selection import train_test_split\n"
        "X = load_features()\n"
        "X = WinsorScaler(0.01).fit_transform(X)\n"
        "Z = rank_gauss(load_other())\n"
        "a, b = train_test_split(X)\n"
        "c, d = train_test_split(Z)\n")
    assert scan_paths([path]) == []
    found = scan_paths([path], extra_fitters=["WinsorScaler", "rank_gauss"])
    assert [(f.metric, f.evidence["family"], f.evidence["line"], f.evidence["transformer"])
            for f in found] == [("fit_before_split", "custom", 4, "WinsorScaler"),
                                ("fit_before_split", "custom", 5, "rank_gauss")]


@pytest.mark.parametrize("name, role", [
    ("X_train", "train"), ("Xtrain", "train"), ("train_df", "train"), ("x_tr", "train"),
    ("X_test", "test"), ("dfTest", "test"), ("y_te", "test"), ("X_holdout", "test"),
    ("X_val", "val"), ("validation_frame", "val"), ("dev_df", "val"),
    ("latest", None), ("contest_entries", None), ("cat_te", None), ("train_test", None),
    ("interval", None), ("X", None)])
def test_role_hints_come_from_name_tokens(name, role):
    assert role_hint(name) == role


def test_fit_on_a_split_index_selection_is_train_only(tmp_path):
    path = tmp_path / "idx.py"
    path.write_text(
        "import numpy as np\n"
        "from sklearn.model_selection import train_test_split\n"
        "from sklearn.preprocessing import StandardScaler\n"
        "X = np.load('x.npy')\n"
        "idx_train, idx_test = train_test_split(np.arange(len(X)))\n"
        "scaler = StandardScaler().fit(X[idx_train])\n"
        "Z = scaler.transform(X[idx_test])\n"
        "bad = StandardScaler().fit(X[idx_test])\n")
    # a fit on the test rows that nothing evaluates on is no leak yet
    assert scan_paths([path]) == []
    path.write_text(path.read_text() + (
        "from sklearn.linear_model import Ridge\n"
        "y = np.load('y.npy')\n"
        "model = Ridge().fit(scaler.transform(X[idx_train]), y[idx_train])\n"
        "print(model.score(bad.transform(X[idx_test]), y[idx_test]))\n"))
    assert [(f.metric, f.evidence["line"]) for f in scan_paths([path])] == [("fit_on_test", 8)]


def test_model_trained_on_train_plus_test_is_flagged_only_when_then_scored_on_test(tmp_path):
    body = ("import pandas as pd\n"
            "from sklearn.linear_model import Ridge\n"
            "train, test = pd.read_csv('train.csv'), pd.read_csv('test.csv')\n"
            "m = Ridge().fit(pd.concat([train, test])[['a']], pd.concat([train, test])['y'])\n")
    path = tmp_path / "refit.py"
    path.write_text(body)
    assert scan_paths([path]) == []
    path.write_text(body + "print(m.score(test[['a']], test['y']))\n")
    assert [(f.metric, f.evidence["family"], f.evidence["line"])
            for f in scan_paths([path])] == [("fit_on_train_and_test", "model", 4)]


def test_scan_is_deterministic():
    first = [f.message for f in scan_paths([CORPUS])]
    assert first == [f.message for f in scan_paths([CORPUS])] and len(first) >= 20


def test_scan_report_is_a_valid_report_that_fails_on_a_leak():
    report = scan_report([CORPUS / "leak_fit_on_test_data.py",
                          CORPUS / "clean_pipeline_cross_val.py"])
    doc = json.loads(report.to_json())
    jsonschema.validate(doc, SCHEMA)
    (check,) = report.checks
    assert check.id == "leakage.preprocessing" and check.status == Status.FAIL
    assert report.status == Status.FAIL and report.exit_code() == 1
    assert check.summary.startswith("leak_fit_on_test_data.py:16: MinMaxScaler is fitted on X_test")
    assert report.datasets == {} and "Static scan of 2 files" in report.notes[0]


def test_scan_report_of_clean_code_passes_with_one_summary_finding():
    path = CORPUS / "clean_fit_on_train_after_split.py"
    report = scan_report([path], extra_fitters=["MyScaler"])
    n_lines = len(path.read_text().splitlines())
    (check,) = report.checks
    assert check.status == Status.PASS and report.exit_code() == 0
    (f,) = check.findings
    assert f.severity == Severity.INFO and f.count == 1
    assert f.message.startswith(f"0 of 1 file ({n_lines} lines) fit a transformer before the "
                                "split")
    assert check.params == {"extra_fitters": ["MyScaler"]}


def test_a_script_with_an_invalid_line_is_scanned_without_it(tmp_path):
    # a notebook export that kept one invalid line (``a[][0]``) inside a loop: the line is
    # replaced by ``pass`` at its indentation, the rest is scanned, and the warning says so
    path = tmp_path / "export.py"
    path.write_text(
        "import pandas as pd\n"
        "from sklearn.feature_extraction.text import TfidfVectorizer\n"
        "from sklearn.model_selection import train_test_split\n"
        "reviews = pd.read_csv('reviews.csv')\n"
        "for a in [[1]]:\n"
        "    a[][0]\n"
        "X = TfidfVectorizer().fit_transform(reviews['text'])\n"
        "X_train, X_test = train_test_split(X)\n")
    warn, leak = scan_paths([path])
    assert (warn.severity, warn.metric, warn.evidence["skipped_lines"]) == (
        Severity.WARN, "code_unparsed", [6])
    assert "line 6 skipped, the rest of the file scanned" in warn.message
    assert (leak.metric, leak.evidence["line"]) == ("fit_before_split", 7)
    path.write_text("def f(:\n    x = 1\n  y = 2\n z = 3\n")  # beyond repair: not scanned
    (only,) = scan_paths([path])
    assert only.metric == "code_unparsed" and "the file was not scanned" in only.message


def test_findings_point_at_the_fit_the_split_the_path_and_a_fix():
    # the fit's line (the finding's), where the leaked rows are split, the variables the fitted
    # output passed through, and one suggested fix
    (f,) = scan_paths([CORPUS / "leak_scaled_then_saved_and_read_back.py"])
    assert f.evidence["line"] == 10 and f.evidence["split"]["line"] == 13
    assert f.evidence["split"]["snippet"].startswith("X_tr, X_val, y_tr, y_val = train_test_split(")
    assert f.evidence["path"] == ["houses", "scaled"]
    assert f.evidence["fix"].startswith("fit it on the training part only, after the split")
    (nb,) = scan_paths([CORPUS / "leak_notebook_scaler_before_split.ipynb"])
    assert {"cell", "line"} <= set(nb.evidence["split"]) and nb.evidence["path"]


def test_an_unsupervised_fit_before_an_inner_cross_validation_warns(tmp_path):
    # PCA fitted on the whole training part, then a grid search cross-validates inside it:
    # the inner folds shaped the components (a warn, the test score is unaffected); the same
    # PCA applied to the test part only, or refitted inside a Pipeline, says nothing
    path = tmp_path / "inner.py"
    path.write_text(
        "import pandas as pd\n"
        "from sklearn.decomposition import PCA\n"
        "from sklearn.linear_model import LogisticRegression\n"
        "from sklearn.model_selection import GridSearchCV, train_test_split\n"
        "df = pd.read_csv('d.csv')\n"
        "X_train, X_test, y_train, y_test = train_test_split(df.drop(columns='y'), df['y'])\n"
        "pca = PCA(n_components=10).fit(X_train)\n"
        "Z_train, Z_test = pca.transform(X_train), pca.transform(X_test)\n"
        "search = GridSearchCV(LogisticRegression(), {'C': [0.1, 1]}, cv=5)\n"
        "search.fit(Z_train, y_train)\n"
        "print(search.score(Z_test, y_test))\n")
    (f,) = scan_paths([path])
    assert (f.severity, f.metric, f.evidence["line"]) == (
        Severity.WARN, "fit_before_inner_split", 7)
    assert f.evidence["split"]["line"] == 10 and "Pipeline" in f.evidence["fix"]
    path.write_text(path.read_text().replace("search.fit(Z_train, y_train)",
                                             "search.fit(X_train, y_train)"))
    assert scan_paths([path]) == []
