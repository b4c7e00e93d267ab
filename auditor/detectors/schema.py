"""Schema differences between splits that the audit survived."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import polars as pl

from auditor.core.checks import Cost, Needs
from auditor.core.roles import Kind, Roles, SchemaIssue
from auditor.detectors.measured import judged
from auditor.engines.operations import Operations, ValueCounts
from auditor.report.results import Finding, Severity
from auditor.stats.numerics import clip_text, fmt_rows, grade, is_share, map_columns
from auditor.stats.textnorm import normalised


@dataclass(frozen=True, kw_only=True)
class SchemaConsistency:
    """Columns missing from a split or typed incompatibly across splits.

    A fail means a column the model sees in training is absent (or means something else) at
    evaluation time, and that column was left out of every cross-split check. Fix the export so
    every split has the same columns with the same types. Compatible differences (int vs float,
    different time zones) are harmonised and reported as info.

    Also: **variants of one value** in a categorical column (features and label): distinct
    values equal after lowercasing, turning punctuation and symbols into spaces and collapsing
    and trimming whitespace ("New York", "new york ", "New-York"), within a split or across
    splits. A model sees them as different categories and every per-category statistic splits
    in two. One finding per column, count = rows holding a form other than the group's most
    frequent one, share = that count over the column's non-missing rows in all splits:
    > ``variant_warn_above`` (0: any) warns, > ``variant_fail_above`` (1: never, by default)
    fails. Fix: normalise the values at extraction.
    """

    id: ClassVar[str] = "schema.consistency"
    title: ClassVar[str] = "Columns and types agree across splits"
    cost: ClassVar[Cost] = Cost.CHEAP
    needs: ClassVar[Needs] = Needs()
    missing_severity: Severity = Severity.FAIL
    dtype_severity: Severity = Severity.FAIL
    variant_warn_above: float = 0.0
    variant_fail_above: float = 1.0
    max_examples: int = 20

    def __post_init__(self) -> None:
        for name in ("variant_warn_above", "variant_fail_above"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not is_share(v):
                raise ValueError(f"{name} must be a share in [0, 1]; got {v!r}")
        if self.variant_warn_above > self.variant_fail_above:
            raise ValueError("variant_warn_above must be <= variant_fail_above; got "
                             f"{self.variant_warn_above!r} > {self.variant_fail_above!r}")
        if isinstance(self.max_examples, bool) or not isinstance(self.max_examples, int) \
                or self.max_examples < 1:
            raise ValueError(f"max_examples must be a positive integer; got {self.max_examples!r}")

    def run(self, data: Any) -> list[Finding]:
        return judged(self, data)

    def measure(self, engine: Operations, roles: Roles) -> SchemaMeasures:
        """The loader's schema issues, rows per (split, value) of the categorical features and
        label for the values sharing a :func:`normalised` key, and the roles table's facts."""
        cols = variant_columns(roles)
        return SchemaMeasures(
            splits=list(roles.splits), issues=list(roles.schema_issues),
            variants=engine.value_counts(cols, shared_key=normalised) if cols else {},
            columns=[c for c, _ in roles.schema], declared=roles.columns.declared(),
            features=list(roles.features), kinds={c: str(k) for c, k in roles.kinds.items()},
            native_types=dict(roles.schema))

    def judge(self, m: SchemaMeasures) -> list[Finding]:
        findings = self.issue_findings(m.issues)
        cols = list(m.variants)
        # one column per task on polars' thread count (its group-bys release the GIL)
        for f in map_columns(lambda c: self.variant_finding(m.splits, c, m.variants[c].counts,
                                                            m.variants[c].rows),
                             cols, workers=None if len(cols) > 8 else 1):
            if f is not None:
                findings.append(f)
        findings.append(features_finding(m))
        return findings

    def issue_findings(self, issues: list[SchemaIssue]) -> list[Finding]:
        """The loader's schema issues (missing columns, incompatible types) as findings."""
        findings = []
        for issue in issues:
            severity = Severity(issue.severity)
            if issue.problem == "missing" and severity == Severity.FAIL:
                severity = self.missing_severity
            elif issue.problem == "dtype":
                severity = self.dtype_severity
            evidence = {"dtypes": issue.dtypes} if issue.dtypes else {}
            findings.append(Finding(severity=severity, message=issue.message,
                                    metric=f"schema_{issue.problem}", subject=issue.column,
                                    splits=issue.splits, evidence=evidence))
        return findings

    def variant_finding(self, split_names: list[str], col: str, counts: pl.DataFrame,
                        total: int) -> Finding | None:
        """The variants finding of ``col`` from rows per (split, value) -- every value, or only
        those whose normalised key has several forms -- and ``total``, the column's
        non-missing rows in all splits; None without variants."""
        groups = variant_groups(counts)
        if groups.is_empty():
            return None
        minority = int(groups["minority_rows"].sum())
        share = minority / total if total else 0.0
        severity = grade(share, warn=self.variant_warn_above, fail=self.variant_fail_above)
        n_groups = groups.height
        first = groups.row(0, named=True)
        shown = " / ".join(repr(clip_text(v, 30)) for v in first["forms"][:4])
        across = groups.filter(pl.col("across")).height
        message = (f"{col}: {n_groups:,} value{' is' if n_groups == 1 else 's are'} written in "
                   f"more than one form differing only by case, whitespace or punctuation "
                   f"({shown}); {fmt_rows(minority, total, 'rows with a value')} hold a less "
                   f"frequent form")
        if across:
            message += (f"; in {across:,} of them the splits use different forms, so the value "
                        "looks new in a later split")
        splits = sorted({s for row in groups["splits"].to_list() for s in row},
                        key=split_names.index)
        examples = [{"forms": " / ".join(repr(clip_text(v, 40)) for v in r["forms"][:6]),
                     "rows by form": ", ".join(f"{n:,}" for n in r["form_rows"][:6]),
                     "rows by split": r["by_split"], "across splits": r["across"]}
                    for r in groups.head(self.max_examples).iter_rows(named=True)]
        return Finding(severity=severity, message=message, metric="value_variants",
                       value=round(share, 6), threshold=self.variant_fail_above, count=minority,
                       subject=col, splits=splits, evidence={"variants": examples})


@dataclass(frozen=True)
class SchemaMeasures:
    """What :meth:`SchemaConsistency.judge` grades: the loader's schema issues, per
    categorical column its :class:`~auditor.engines.operations.ValueCounts` (values sharing a
    normalised key only), and for the roles table the first split's columns, their declared
    roles, the features and kinds. ``native_types`` (the engine's own type names, shown in
    the roles table) is the one field that differs between engines."""

    ENGINE_NATIVE: ClassVar[tuple[str, ...]] = ("native_types",)

    splits: list[str]
    issues: list[SchemaIssue]
    variants: dict[str, ValueCounts]
    columns: list[str]
    declared: dict[str, str]
    features: list[str]
    kinds: dict[str, str]
    native_types: dict[str, str]


def variant_columns(roles: Roles) -> list[str]:
    """Categorical features and label, whose values are checked for variants."""
    return [c for c in dict.fromkeys([*roles.features, *([roles.label] if roles.label else [])])
            if roles.kinds.get(c) == Kind.CATEGORICAL]


def features_finding(m: SchemaMeasures) -> Finding:
    """The info finding counting the audited feature columns, with the roles table (the first
    200 columns of the first split)."""
    n_feat = len(m.features)
    features = set(m.features)
    roles = [{"column": col,
              "role": m.declared.get(col) or ("feature" if col in features else "not audited"),
              "kind": m.kinds.get(col, "-"), "dtype": m.native_types[col]}
             for col in m.columns[:200]]
    return Finding(
        severity=Severity.INFO, metric="features", value=float(n_feat),
        message=f"{n_feat:,} feature columns audited across {len(m.splits)} splits "
                f"({', '.join(m.splits)})",
        evidence={"roles": roles})


def variant_groups(counts: pl.DataFrame) -> pl.DataFrame:
    """Groups of distinct values sharing a :func:`normalised` key, largest minority first:
    ``forms`` (most rows first), ``form_rows``, ``minority_rows`` (rows not in the most
    frequent form), ``splits`` holding any form, ``by_split`` ("train: 'a' 3; test: 'b' 2")
    and ``across`` (some split never uses a form another split uses, so forms are not shared)."""
    per_value = (counts.group_by("value").agg(pl.col("n").sum())
                 .with_columns(normalised(pl.col("value")).alias("key"))
                 .filter(pl.col("key") != ""))
    multi = per_value.group_by("key").agg(pl.len().alias("k")).filter(pl.col("k") > 1)
    if multi.is_empty():
        return pl.DataFrame()
    forms = (per_value.join(multi.select("key"), on="key")
             .sort(["key", "n", "value"], descending=[False, True, False]))
    grouped = forms.group_by("key", maintain_order=True).agg(
        pl.col("value").alias("forms"), pl.col("n").alias("form_rows"),
        (pl.col("n").sum() - pl.col("n").max()).alias("minority_rows"))
    by_split = (counts.join(forms.select("value", "key"), on="value")
                .sort(["key", "order", "n"], descending=[False, False, True])
                .with_columns(pl.format("'{}' {}", pl.col("value").str.slice(0, 30),
                                        pl.col("n")).alias("cell"))
                .group_by("key", "split", maintain_order=True)
                .agg(pl.col("cell").str.join(", "), pl.len().alias("used")))
    summary = by_split.group_by("key", maintain_order=True).agg(
        pl.col("split").alias("splits"),
        pl.format("{}: {}", pl.col("split"), pl.col("cell")).str.join("; ").alias("by_split"),
        pl.col("used").min().alias("min_used"))
    out = grouped.join(summary, on="key").with_columns(
        ((pl.col("splits").list.len() > 1) & (pl.col("min_used") < pl.col("forms").list.len()))
        .alias("across"))
    return out.sort(["minority_rows", "key"], descending=[True, False]).drop("min_used")
