"""Rows shared between splits: exact copies, near copies, copies with conflicting labels.

Measured once for every engine from keyed rows (:mod:`auditor.detectors.copy_keys`), judged
here.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from auditor.core.checks import Cost, Needs
from auditor.core.roles import Kind, LabelKind, Roles
from auditor.detectors.copy_keys import row_copies
from auditor.detectors.measured import judged
from auditor.engines.operations import CopySpec, Operations, PairCopies, RowCopies
from auditor.engines.polars_rows import cell
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import (check_params, fmt_count, fmt_rows, fmt_share, grade,
                                    is_share, share)


@dataclass(frozen=True, kw_only=True)
class Duplicates:
    """Rows of a later split that are exact or near copies of rows in an earlier split.

    A fail means the evaluation partly measures memorisation: the model saw those rows (with
    their labels) in training. Fix: deduplicate before splitting, or drop the copies from the
    later split. A row is compared on every column except declared ids and excluded columns
    (label included).

    - ``duplicate_rows`` (every pair of splits): rows of the later split that are exact copies
      of an earlier row / rows of the later split. Equality: null equals null, NaN equals NaN
      and -0.0 equals 0.0. Discrete data repeat by chance, so the share is compared with a
      chance baseline b = (earlier rows that repeat another earlier row) / (earlier rows)
      (:meth:`~auditor.detectors.copy_keys.KeyedRows.chance`), rows holding a *measured*
      value (a continuous column's value that no differing row shares: copied, not a
      coincidence) left out of it: the graded
      value is the excess max(0, share - b), flagged only when a one-sided z-test against the
      copies an honest random split of the two splits' rows makes gives p < ``chance_alpha``;
      with no row repeating in the two splits together (continuous data), the share itself.
      With at most 40 repeated patterns the test's null is drawn (100,000 draws: the normal z
      is anti-conservative there), and a p between ``chance_alpha`` and
      ``chance_warn_alpha`` (1%) warns: 5 of 20 test rows copied from discrete data with no
      other repeat happen by chance with probability 0.003 (each pair lands on both sides
      with probability 2 p (1 - p)), too often to fail on, too rarely to pass.
      A continuous value recurring under different rows (a plan's price) is a level, not a
      measurement. When measured records also repeat *within* the splits and the repeated
      ones are at most ``natural_repeats_below`` of the rows, the source holds duplicate
      records and their copies are weighed as chance too (a copied or oversampled table
      repeats far more, or only across). Graded by ``warn_above`` / ``fail_above``.
    - ``near_duplicate_rows`` (reported when found): later rows that are not exact copies but
      equal an earlier row after normalisation: floats rounded to ``significant_digits``
      significant digits, strings NFKC-normalised, case-folded and whitespace-collapsed. Free-
      text columns (``columns.text``) are not hashed: the other columns must be equal after
      normalisation and every text column must have word-trigram Jaccard >= ``text_jaccard``
      with the earlier row's: candidates from MinHash (128 permutations) and LSH bands chosen
      to find >= 95% of pairs exactly at the threshold (more above it), keyed by the other
      columns so only rows agreeing on them are compared; each candidate's exact Jaccard then
      decides. Graded by ``near_warn_above`` / ``near_fail_above``.
    - ``conflicting_labels`` (when a label is declared and conflicts exist): rows whose
      features (all compared columns but the label, floats exact -- rounding is for near
      copies, two draws agreeing to 6 digits are different rows --, strings normalised as
      above) equal another row's while the label differs. Across splits: later rows
      whose features occur in the earlier split with another label; within a split: every row
      of such a group. Rows with a null label are left out. They cap the achievable accuracy and,
      across splits, reward memorising the train label. Fix: adjudicate the label or drop the
      contradicting copies. Graded by ``conflict_warn_above`` / ``conflict_fail_above`` (share
      of the split's rows; by default any conflict warns and more than 5% fails, the point where
      label noise visibly caps the metric). Not leakage, so: info for a numeric label (a
      regression target varies among equal features), and at most warn when the split's rows
      repeat naturally (exact-copy share above ``within_warn_above``: discrete features, where
      equal features with different labels are irreducible error).
    - ``within_split_duplicates`` (when found): rows that exactly copy an earlier row of the
      same split / the split's rows; info, or warn above ``within_warn_above`` (never fail:
      repeated rows inflate weights but do not leak across splits); info when no compared
      column is continuous (at least half of its non-null values distinct): survey
      answers and other discrete rows repeat by chance. With a single split this
      and the conflicts are all the check reports.
    - ``reingested_rows`` (with a declared time column, when found): later rows equal to an
      earlier row in every compared column but the time column -- a declared time (like an
      id) is provenance, not content, and a pipeline that re-ingests rows stamps them anew --
      that are not exact copies (those are ``duplicate_rows``). Counted from the same keyed
      rows by a second whole-row key without the time (exact copies only) and graded as
      ``duplicate_rows`` against that comparison's own chance baseline: value = the share of
      later rows equal but for the time, minus the baseline when rows repeat naturally.
      Info when the rows beyond the exact copies are at most ``warn_above`` of the split.
    - ``columns_not_compared`` (info, when any): columns that rows cannot be compared on
      (missing from a split, nested in one) are named; columns of incompatible types across
      splits (a numeric column read as text in one CSV) are compared as text (cast to
      strings), never dropped silently.
    - Without any feature column (only ids, a time, groups and a label) rows are compared on
      those roles and every finding is info: equal (date, label) pairs are not copies.

    Measured once for every engine (:func:`auditor.detectors.copy_keys.row_copies`): each row
    reduced to 128-bit keys by one polars function of its batch, the keys counted by the
    engine (a false match has probability ~n^2 / 2^129); examples are the first rows by row
    number, named by row number and declared ids. Near copies on free-text columns are
    matched on polars only (MinHash); on Spark an info finding says so.
    """

    id: ClassVar[str] = "leakage.duplicates"
    title: ClassVar[str] = "Rows shared between splits"
    cost: ClassVar[Cost] = Cost.CHEAP
    needs: ClassVar[Needs] = Needs()
    warn_above: float = 0.0     # share of the later split's rows that are exact copies
    fail_above: float = 0.001
    near_warn_above: float = 0.0     # share of the later split's rows that are near copies
    near_fail_above: float = 0.001
    significant_digits: int = 6
    text_jaccard: float = 0.8
    conflict_warn_above: float = 0.0   # share of rows with a conflicting label
    conflict_fail_above: float = 0.05
    within_warn_above: float = 0.01    # share of a split's rows that copy a row of that split
    chance_alpha: float = 0.001        # copies above the chance baseline must be this unlikely
    chance_warn_alpha: float = 0.01    # to fail; this unlikely, to warn
    natural_repeats_below: float = 0.02  # measured records repeated in up to this share of rows,
    # some within a split, repeat naturally (source duplicates) and their copies may be chance
    max_examples: int = 20

    def __post_init__(self) -> None:
        check_params(self, ("warn_above", "fail_above", "near_warn_above", "near_fail_above",
                            "conflict_warn_above", "conflict_fail_above", "within_warn_above",
                            "text_jaccard", "natural_repeats_below"), is_share,
                     "a share in [0, 1]")
        check_params(self, ("chance_alpha", "chance_warn_alpha"), lambda v: 0 < v < 1,
                     "a number in (0, 1)")
        check_params(self, ("significant_digits",),
                     lambda v: isinstance(v, int) and 1 <= v <= 15, "an integer in [1, 15]")
        check_params(self, ("max_examples",), lambda v: v >= 0, ">= 0")

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    # -- measure -------------------------------------------------------------------------------
    def measure(self, engine: Operations, roles: Roles) -> "CopyMeasures":
        """What rows are compared on (from the roles), then their keyed counts."""
        cols = roles.duplicate_columns()
        as_text, left_out = columns_outside(roles)
        text_cols = [c for c in roles.columns.text if c in cols and roles.kinds.get(c) == Kind.TEXT]
        label = roles.label if roles.label in cols else None
        features = [c for c in cols if c != label]
        roles_only = not set(features) & (set(roles.features) | set(text_cols))
        if roles_only:
            features = []  # only roles (time, groups) left: equal dates are not equal features
        # the time column is provenance: rows equal but for it were re-ingested (compared
        # from the same keyed rows, sharing the continuity of the columns)
        time = roles.columns.time
        without = time if time in cols and len(roles.splits) > 1 and not roles_only else None
        spec = CopySpec(cols=tuple(cols), as_text=tuple(as_text), text_cols=tuple(text_cols),
                        features=tuple(features) if label else (), label=label,
                        digits=self.significant_digits, text_jaccard=self.text_jaccard,
                        near=len(roles.splits) > 1, max_examples=self.max_examples,
                        natural_repeats=self.natural_repeats_below, without=without)
        copies = row_copies(engine, roles, spec)
        untimed = copies.without
        return CopyMeasures(spec=spec, rows=dict(roles.rows), splits=list(roles.splits),
                            numeric_label=roles.label_kind == LabelKind.NUMERIC,
                            roles_only=roles_only and bool(cols), as_text=as_text,
                            left_out=left_out, copies=replace(copies, without=None),
                            time=time if untimed is not None else None, untimed=untimed)

    # -- judge ---------------------------------------------------------------------------------
    def _reingested(self, rows: dict[str, int], u: PairCopies, exact: int, earlier: str, later: str,
                    time: str) -> Finding:
        """``reingested_rows``: ``u.copies`` later rows equal an earlier row but for ``time``,
        ``exact`` of them in ``time`` too (graded as exact copies on u's chance baseline)."""
        beyond = u.copies - exact
        f = exact_copy_finding(
            self, rows, u.copies, earlier, later, u.chance, metric="reingested_rows",
            what=f"equal a {earlier} row in every compared column but the time column {time!r} "
                 f"({fmt_count(beyond)} of them with another {time}: re-ingested or re-stamped "
                 f"copies; {fmt_count(exact)} exact copies are counted above)")
        if u.copies:
            f.evidence["examples"] = u.examples
        if share(beyond, rows[later]) <= self.warn_above:
            f.severity = Severity.INFO
        return f

    def judge(self, m: "CopyMeasures") -> list[Finding]:
        spec, rows = m.spec, m.rows
        exact_f, near_f, conflict_f, within_f = [], [], [], []
        if m.copies.not_matched:
            near_f.append(Finding(
                severity=Severity.INFO, metric="not_computed_on_spark", value=None, count=0,
                subject=list(m.copies.not_matched),
                message="near-duplicate rows with free-text columns "
                        f"({', '.join(m.copies.not_matched)}: MinHash word-shingle matching) "
                        "are not yet implemented on the spark engine: only exact copies were "
                        "counted"))
        for (earlier, later), p in m.copies.pairs.items():
            f = exact_copy_finding(self, rows, p.copies, earlier, later, p.chance)
            if p.copies:
                f.evidence["examples"] = p.examples
            exact_f.append(f)
            if m.untimed is not None and m.time is not None:
                u = m.untimed.pairs[(earlier, later)]
                if u.copies > p.copies:
                    exact_f.append(self._reingested(rows, u, p.copies, earlier, later, m.time))
            if p.near:
                rule = near_rule(self, list(spec.text_cols))
                near_f.append(near_copy_finding(
                    self, rows, p.near, earlier, later, rule,
                    {"rule": rule, "examples": p.near_examples, **p.near_summary}))
            if p.conflicts:
                conflict_f.append(self._conflict_grade(m, conflict_across_finding(
                    self, rows, p.conflicts, earlier, later, str(spec.label),
                    p.conflict_examples), earlier))
        for split, s in m.copies.splits.items():
            if s.conflicts:
                conflict_f.append(self._conflict_grade(m, conflict_within_finding(
                    self, rows, s.conflicts, s.groups, split, str(spec.label),
                    s.conflict_examples), split))
            if s.repeated or len(m.splits) == 1:
                within_f.append(self._within(rows, split, s.repeated, bool(s.continuous),
                                             s.examples))
        notes = [self._left_out(m.as_text, m.left_out)] if m.as_text or m.left_out else []
        findings = exact_f + near_f + conflict_f + within_f
        if m.roles_only:  # rows that differ only by their id are not copies of anything
            for f in findings:
                f.severity = Severity.INFO
                f.message += (f" (no feature column: rows compared on "
                              f"{', '.join(spec.cols)} only, info)")
        return findings + notes

    def _conflict_grade(self, m: "CopyMeasures", f: Finding, split: str) -> Finding:
        s = m.copies.splits[split]
        return conflict_grade(self, m.rows, f, s.repeated, split, str(m.spec.label),
                              m.numeric_label,
                              bool(set(s.continuous or ()) & set(m.spec.features)))

    def _left_out(self, as_text: dict[str, dict[str, str]], left_out: dict[str, str]) -> Finding:
        parts = []
        if left_out:
            parts.append(f"{len(left_out)} column{'s' * (len(left_out) > 1)} left out of the "
                         "row comparison: " + "; ".join(f"{cell(c)} ({why})"
                                                         for c, why in left_out.items()))
        if as_text:
            parts.append(f"{len(as_text)} column{'s' * (len(as_text) > 1)} with different types "
                         "across splits compared as text: " + "; ".join(
                             f"{cell(c)} ({', '.join(f'{k}: {v}' for k, v in d.items())})"
                             for c, d in as_text.items()))
        return Finding(
            severity=Severity.INFO, subject=sorted([*left_out, *as_text]),
            metric="columns_not_compared", value=float(len(left_out)), count=len(left_out),
            message="; ".join(parts) + " (see schema.consistency)",
            evidence={"left_out": left_out, "compared_as_text": as_text})

    def _within(self, rows: dict[str, int], split: str, count: int, continuous: bool,
                examples: list[dict[str, Any]]) -> Finding:
        value = share(count, rows[split])
        severity = grade(value, warn=self.within_warn_above)
        message = (f"{fmt_rows(count, rows[split], f'{split} rows')} are exact copies of "
                   f"another {split} row")
        if severity != Severity.INFO and not continuous:
            severity = Severity.INFO
            message += (" (no continuous column: discrete rows repeat by chance, info)")
        return Finding(
            severity=severity if severity != Severity.FAIL else Severity.WARN,
            metric="within_split_duplicates", value=value, threshold=self.within_warn_above,
            count=count, splits=[split], message=message,
            evidence={"examples": examples})


@dataclass(frozen=True)
class CopyMeasures:
    """Everything :meth:`Duplicates.judge` grades: the comparison asked for (``spec``), rows
    per split, whether the label is numeric and only roles are compared, the columns compared
    as text (with their types per split, the engine's names) or left out (with why), and the
    engine's :class:`~auditor.engines.operations.RowCopies`."""

    ENGINE_NATIVE: ClassVar[tuple[str, ...]] = ("as_text",)

    spec: CopySpec
    rows: dict[str, int]
    splits: list[str]
    numeric_label: bool
    roles_only: bool
    as_text: dict[str, dict[str, str]]
    left_out: dict[str, str]
    copies: RowCopies
    time: str | None = None  # the declared time column, when rows were also compared without it
    untimed: RowCopies | None = None  # exact copies on every compared column but the time


def columns_outside(roles: Roles) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """Columns that the harmonised comparison would lose, so that none is dropped silently:
    (columns present in every split with incompatible types -> their type per split; they are
    compared as text), (columns left out -> why: missing from a split)."""
    skip = set(roles.columns.ids) | set(roles.columns.exclude)
    if roles.tokens:
        skip |= set(roles.tokens.columns())
    as_text: dict[str, dict[str, str]] = {}
    left_out: dict[str, str] = {}
    for issue in roles.schema_issues:
        c = issue.column
        if c in skip or c in roles.kinds or c in as_text or c in left_out:
            continue
        if issue.problem == "missing":
            left_out[c] = f"missing from {', '.join(issue.splits)}"
        elif issue.problem == "dtype":
            as_text[c] = {n: d for n, d in issue.dtypes.items() if n in roles.splits}
    return as_text, left_out


def exact_copy_finding(check: Any, rows: dict[str, int], count: int, earlier: str, later: str,
                       chance: dict[str, Any], *, metric: str = "duplicate_rows",
                       what: str | None = None) -> Finding:
    """The cross-split exact-copy finding from the copy count and the chance baseline of
    :func:`~auditor.stats.copies.chance_verdict` (the caller adds the examples); ``what``
    replaces the statement's head (what the ``count`` rows are)."""
    n = rows[later]
    observed = share(count, n)
    message = f"{fmt_rows(count, n, f'{later} rows')} " + \
        (what or f"are exact copies of {earlier} rows")
    evidence: dict[str, Any] = {}
    if "null_excess" in chance:  # rows repeat naturally: judged against an honest split
        value = chance.get("excess", max(0.0, observed - chance["baseline"]))
        severity = grade(value, warn=check.warn_above, fail=check.fail_above)
        unlikely = chance["p_value"] < check.chance_warn_alpha and severity != Severity.INFO
        if chance["p_value"] >= check.chance_alpha:  # possibly chance: at most a warn
            severity = Severity.WARN if unlikely else Severity.INFO
        why = (f"{fmt_share(chance['baseline'])} are expected by chance, since "
               f"{fmt_rows(chance['repeating'], rows[earlier], f'{earlier} rows')}"
               f" repeat another {earlier} row") if chance["baseline"] > 0 else (
               f"no {earlier} row repeats another, but rows repeated in the two splits "
               "together land on both sides of a random split by chance")
        message += f"; {why} (excess {fmt_share(value)}, p = {chance['p_value']:.2g})"
        if unlikely and chance["p_value"] >= check.chance_alpha:
            message += (f": unlikely by chance (p < {check.chance_warn_alpha:g}) but not beyond "
                        f"doubt (chance_alpha {check.chance_alpha:g}), so a warn")
        if chance.get("copies_with_a_continuous_value"):
            message += (f"; {chance['copies_with_a_continuous_value']:,} of the copies "
                        "hold a measured value (one of a continuous column no other row "
                        "holds), never a chance repeat")
        if chance.get("measured_repeats_within"):
            message += (f"; records holding a measured value repeat within the splits too "
                        f"({chance['measured_repeats_within']:,} rows: duplicates in the "
                        "source), so their copies are weighed as chance")
        evidence["chance_baseline"] = chance
    else:
        value = observed
        severity = grade(value, warn=check.warn_above, fail=check.fail_above)
    return Finding(
        severity=severity, metric=metric, value=value, threshold=check.fail_above,
        count=count, splits=[earlier, later], message=message, evidence=evidence)


def conflict_grade(check: Any, rows: dict[str, int], f: Finding, repeated: int, split: str,
                   label: str, numeric_label: bool, continuous: bool) -> Finding:
    """Conflicts are label noise, not leakage: for a numeric label (equal features, varying
    target is regression noise) they are info; when the rows of ``split`` repeat naturally
    (``repeated`` exact within-split copies, a share above ``within_warn_above``) and no
    feature is continuous (coarse, discrete features) they are at most a warn, since equal
    features with different labels is then irreducible error."""
    repeat = share(repeated, rows[split])
    if numeric_label:
        f.severity = Severity.INFO
        f.message += f" (a numeric {label} varies among equal features by nature: info)"
    elif f.severity == Severity.FAIL and repeat > check.within_warn_above and not continuous:
        f.severity = Severity.WARN
        f.message += (f" (capped at warn: {fmt_share(repeat)} of {split} rows repeat "
                      "another row, so the features are coarse and equal features with "
                      "different labels are expected)")
    return f


def near_rule(check: Any, text_cols: list[str]) -> str:
    """The near-copy rule as the finding states it."""
    rule = f"equal after rounding floats to {check.significant_digits} significant digits " \
           "and normalising strings"
    if text_cols:
        rule += f", with {', '.join(text_cols)} at word-shingle Jaccard >= " \
                f"{check.text_jaccard:g}"
    return rule


def near_copy_finding(check: Any, rows: dict[str, int], count: int, earlier: str, later: str,
                      rule: str, evidence: dict[str, Any]) -> Finding:
    """``near_duplicate_rows``: ``count`` later rows that are near but not exact copies."""
    value = share(count, rows[later])
    return Finding(
        severity=grade(value, warn=check.near_warn_above, fail=check.near_fail_above),
        metric="near_duplicate_rows", value=value, threshold=check.near_fail_above,
        count=count, splits=[earlier, later],
        message=f"{fmt_rows(count, rows[later], f'{later} rows')} are near copies "
                f"of {earlier} rows ({rule}) but not exact copies",
        evidence=evidence)


def conflict_across_finding(check: Any, rows: dict[str, int], count: int, earlier: str,
                            later: str, label: str, examples: list[dict[str, Any]]) -> Finding:
    """``conflicting_labels`` across a pair: ``count`` later rows whose features occur in
    ``earlier`` with another label (before :func:`conflict_grade`)."""
    value = share(count, rows[later])
    return Finding(
        severity=grade(value, warn=check.conflict_warn_above, fail=check.conflict_fail_above),
        metric="conflicting_labels", value=value, threshold=check.conflict_fail_above,
        count=count, splits=[earlier, later],
        message=f"{fmt_rows(count, rows[later], f'{later} rows')} have the same "
                f"features as a {earlier} row but a different {label}",
        evidence={"examples": examples})


def conflict_within_finding(check: Any, rows: dict[str, int], count: int, groups: int,
                            split: str, label: str, examples: list[dict[str, Any]]) -> Finding:
    """``conflicting_labels`` within a split: ``count`` rows in ``groups`` groups of equal
    features with more than one label (before :func:`conflict_grade`)."""
    value = share(count, rows[split])
    return Finding(
        severity=grade(value, warn=check.conflict_warn_above, fail=check.conflict_fail_above),
        metric="conflicting_labels", value=value, threshold=check.conflict_fail_above,
        count=count, splits=[split],
        message=f"{fmt_rows(count, rows[split], f'{split} rows')} share their "
                f"features with another {split} row that has a different {label} "
                f"({fmt_count(groups)} groups)",
        evidence={"examples": examples})
