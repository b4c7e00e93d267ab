"""Static scan of ML pipeline code for preprocessing fitted before the split (no execution).

``scan_paths`` parses ``.py`` scripts and ``.ipynb`` notebooks (code cells concatenated in
order; IPython magics blanked; every line mapped back to its cell) with :mod:`ast` and walks
the statements in order, tracking an abstract value per variable through assignments,
function calls (user functions are analysed with their arguments bound), loops and
comprehensions. A data value carries its *role* (``full`` = not yet split, ``train``, ``val``,
``test``, ``mix`` = train and test combined), its *roots* (where it was loaded), its *taints*
(fits on unsplit data whose output it contains) and its *holdouts* (which test set it is).

Findings (metric, what triggers it):

- ``fit_before_split``: a transformer (scaler, imputer, decomposition, feature selector,
  vectorizer, encoder, target encoder, resampler, clustering, or a name in ``extra_fitters``)
  is fitted on unsplit data and either its output flows into ``train_test_split``, a
  ``KFold``-style ``.split``, ``cross_val_*``/``*SearchCV``, or is sliced into variables named
  train/val/test; or the fitted transformer is later applied to split parts of the same data.
- ``fit_on_test``: a transformer or model is fitted on test data that is then evaluated (a
  metric or ``.score`` of that test set, with what the fit made); fitting on an unlabelled
  ``test.csv`` for a submission, or training on one half and scoring on the other, is not.
- ``fit_on_train_and_test``: a transformer is fitted on a concatenation of train and test (a
  model only when it is then evaluated on that test set); also a statistic of such a
  concatenation applied to data.
- ``test_reused_for_selection``: inside a loop that fits models, scores on the test set are
  compared to pick among them (an ``if``/conditional comparison in the loop, or
  ``max``/``argmax``/``sorted``/``idxmax`` over the scores afterwards); or test data drives
  early stopping (``eval_set``/``validation_data`` with early stopping) and the same test set
  is then evaluated again. A loop that only reports test scores (seeds, a table) is not
  flagged.
- ``global_statistic_before_split``: a pandas/numpy statistic of unsplit data (``mean``,
  ``std``, ``median``, ``min``/``max``, ``quantile``, ``value_counts``, group aggregates) fills
  or scales data that is split afterwards, or is applied to the split parts.
- ``resampled_before_split``: a resampler (SMOTE and its kin, ``RandomOverSampler``,
  ``RandomUnderSampler``, sklearn's ``resample`` with ``n_samples``/``replace``/``stratify``,
  ``DataFrame.sample`` of a row subset such as one class's rows once it is put back with other
  rows of the data -- not a shuffle, ``frac=1``, nor a subsample alone) draws the rows of
  unsplit data that is split afterwards: the evaluation rows then hold copies or
  interpolations of training rows and the resampled class balance.
- ``fit_before_inner_split`` (warn): a transformer fitted on the whole training part of a
  split whose output is split again (cross-validation or a search inside that part): the inner
  scores are optimistic; a supervised fit there (selection, target encoding) is
  ``fit_before_split``.
- ``evaluated_on_training_rows``: a model fitted on unsplit rows is scored on rows it was
  trained on: ``.score`` of those rows, or its predictions of them reaching a metric
  (``accuracy_score``, ``mean_absolute_error``, ...) -- all of them, or the test part of a
  split of the same data (a search fitted on every row, then scored on ``X_test``). Reported
  at the scoring line, naming the fit. A training score of a model fitted on the train part
  of a split (printed beside the test score) and predictions that reach no metric are not.

Roles come from the split calls themselves (``train_test_split`` outputs alternate train,
test; ``KFold.split`` yields train and validation indices) and, for data loaded or sliced into
a variable, from its name (``X_train``, ``test_df``, ``X_val``, ``Xte``). A name's train role
is provisional: a fit or statistic on rows named train that no split made (``train.csv``)
is reported when those rows are split afterwards by the code itself (its own validation
split or cross-validation), and not when they are only applied to a separate test file.
Columns written as attributes (``X.Age = ...``, ``X.Age.fillna(..., inplace=True)``) are
writes of the frame; bins learned from the rows (``pd.qcut``, ``pd.cut`` with a bin count)
are fits. A lambda or function handed to ``apply``/``transform``/``agg``/``pipe`` is followed
with the receiver's rows (``groupby(...).transform(lambda s: s.fillna(s.mean()))``), and a
class's methods share what they bind to ``self``. Data written to a file and read back from
the same path is the same rows. ``Series.rank`` is learned from the rows ranked; row-wise statistics
(``axis=1``) are not column statistics; rows cut back out of a train+test concatenation into a
train/test name (``combined[:n_train]``) or by an ``is_train`` flag are that part again; an
in-place fill (``fillna(..., inplace=True)``) is a write. Stateless transforms
(``Normalizer``, ``HashingVectorizer``, ``FunctionTransformer``, ``PolynomialFeatures``,
``LabelEncoder``, ``pd.get_dummies`` on unsplit data) are not fits. The analysis is
flow-sensitive but path-insensitive (both branches of an ``if`` are walked; a loop body once).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Sequence

from auditor.codescan.scanner import Scanner
from auditor.codescan.sources import Source, expand_paths, load_source
from auditor.codescan.vocabulary import role_hint
from auditor.report.results import Finding, Severity

# The package: vocabulary (names it recognises), values (what it tracks), sources (reading
# scripts and notebooks), scanner (the abstract interpreter); the entry points are here.
__all__ = ["expand_paths", "load_source", "role_hint", "scan_paths",
           "scan_source"]

_TITLES = {
    "fit_before_split": "fitted before the split",
    "fit_on_test": "fitted on test data",
    "fit_on_train_and_test": "fitted on train and test combined",
    "test_reused_for_selection": "test set used for model selection and final evaluation",
    "global_statistic_before_split": "global statistic applied before the split",
    "evaluated_on_training_rows": "scored on rows the model was trained on",
    "resampled_before_split": "resampled before the split",
    "fit_before_inner_split": "fitted before an inner split of the training part",
}
_WARN_ONLY = {"fit_before_inner_split"}  # a mild leak: the inner scores only


_FIXES = {
    "fit_before_split": "fit it on the training part only, after the split, and apply it to "
                        "the other parts (or put it in a Pipeline, which cross-validation "
                        "refits in every fold)",
    "resampled_before_split": "split first, then resample the training part only (imblearn's "
                              "Pipeline resamples inside each fold)",
    "global_statistic_before_split": "split first, compute the statistic on the training part "
                                     "and fill or scale every part with that value",
    "fit_on_test": "fit on the training part and only transform or score the test set",
    "fit_on_train_and_test": "fit on the training rows only and apply the fit to the test rows",
    "test_reused_for_selection": "select on a validation split or by cross-validation on the "
                                 "training part; score the test set once, at the end",
    "evaluated_on_training_rows": "score on a held-out split or by cross-validation",
    "fit_before_inner_split": "put the transformer in a Pipeline with the model, so the inner "
                              "cross-validation refits it in every fold",
}


def scan_source(src: Source, extra_fitters: Sequence[str] = ()) -> list[Finding]:
    """Findings for one loaded source (a syntax error is one warn finding)."""
    try:
        tree = ast.parse(src.text, filename=str(src.path))
    except (RecursionError, MemoryError, ValueError) as err:  # too deep (the parser's stack
        # overflow is a MemoryError), NUL bytes
        return [Finding(severity=Severity.WARN, metric="code_unparsed", subject="",
                        message=f"{src.path.name}: cannot parse ({type(err).__name__}); the "
                                "file was not scanned",
                        evidence={"file": str(src.path), "why": str(err)[:200]})]
    except SyntaxError as err:
        loc = src.where(err.lineno or 1)
        recovered = _without_broken_lines(src.text)
        unparsed = Finding(severity=Severity.WARN, metric="code_unparsed", subject="",
                           message=f"{_loc(src, err.lineno or 1)}: cannot parse ({err.msg}); "
                                   "the file was not scanned",
                           evidence={"file": str(src.path), **loc, "why": err.msg})
        if recovered is None:
            return [unparsed]
        tree, skipped = recovered
        shown = ", ".join(str(n) for n in skipped)
        unparsed.message = (f"{_loc(src, err.lineno or 1)}: cannot parse ({err.msg}); line"
                            f"{'s' * (len(skipped) > 1)} {shown} skipped, the rest of the file "
                            "scanned")
        unparsed.evidence["skipped_lines"] = skipped
        return [unparsed] + _scanned(src, tree, extra_fitters)
    return _scanned(src, tree, extra_fitters)


MAX_SKIPPED_LINES = 10  # lines of a script that does not parse blanked before giving up


def _without_broken_lines(text: str) -> tuple[ast.Module, list[int]] | None:
    """The module parsed with each line a syntax error points at replaced by ``pass`` at its
    indentation (a notebook export keeping one invalid line, a stray ``a[][0]``), and those
    line numbers; None when that does not make it parse within MAX_SKIPPED_LINES lines."""
    lines = text.split("\n")
    skipped: list[int] = []
    while len(skipped) < MAX_SKIPPED_LINES:
        try:
            return ast.parse("\n".join(lines)), skipped
        except SyntaxError as err:
            n = err.lineno
            if n is None or not 1 <= n <= len(lines) or n in skipped:
                return None
            line = lines[n - 1]
            lines[n - 1] = line[:len(line) - len(line.lstrip())] + "pass"
            skipped.append(n)
        except (RecursionError, MemoryError, ValueError):
            return None
    return None


def _scanned(src: Source, tree: ast.Module, extra_fitters: Sequence[str]) -> list[Finding]:
    """The findings of a parsed module."""
    try:
        raw = Scanner(extra_fitters, loc=lambda line: _loc(src, line, short=True)).scan(tree)
    except RecursionError:
        return [Finding(severity=Severity.WARN, metric="code_unparsed", subject="",
                        message=f"{src.path.name}: expressions nested too deeply to follow; "
                                "the file was not scanned",
                        evidence={"file": str(src.path), "why": "recursion limit"})]
    findings = []
    for f in sorted(raw, key=lambda f: (f.line, f.metric)):
        evidence = {"file": str(src.path), **src.where(f.line), "snippet": src.snippet(f.line),
                    "why": f.why, "kind": _TITLES[f.metric], "family": f.family,
                    "transformer": f.cls or None, "fix": _FIXES[f.metric]}
        if f.split_line is not None:
            evidence["split"] = {**src.where(f.split_line), "snippet": src.snippet(f.split_line)}
        if f.path:
            evidence["path"] = list(f.path)
        findings.append(Finding(
            severity=Severity.WARN if f.metric in _WARN_ONLY else Severity.FAIL,
            metric=f.metric, subject=f.subject, count=None,
            message=f"{_loc(src, f.line)}: {f.why}.", evidence=evidence))
    return findings


def _loc(src: Source, line: int, short: bool = False) -> str:
    w = src.where(line)
    if short:
        return f"cell {w['cell']} line {w['line']}" if "cell" in w else f"line {line}"
    if "cell" in w:
        return f"{src.path.name} cell {w['cell']} line {w['line']}"
    return f"{src.path.name}:{line}"


def scan_paths(paths: list[Path], extra_fitters: Sequence[str] = ()) -> list[Finding]:
    """Scan scripts/notebooks (directories: every ``*.py``/``*.ipynb`` below) for preprocessing
    leaks; one Finding per leak, ``subject`` = the variable or column, evidence = file, line
    (and cell for notebooks), snippet, why. Raises InputError for a missing or unsupported
    file."""
    findings: list[Finding] = []
    for p in expand_paths(paths):
        findings += scan_source(load_source(p), extra_fitters)
    return findings
