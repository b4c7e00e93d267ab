"""One finding per group of columns fitted the same way, for ``leakage.preprocessing`` (the
check and its documentation are in :mod:`auditor.detectors.preprocessing`): a scaler or an
imputer applied to 30 columns is one leak, reported once with the list of its columns as the
subject and per-column evidence capped at ``max_examples``."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from auditor.stats.preprocessing import fmt_g
from auditor.report.results import Finding
from auditor.stats.numerics import fmt_count, fmt_rows, fmt_share, share

if TYPE_CHECKING:  # the measuring context (above the judges; annotations only)
    from auditor.detectors.preprocessing_context import Context


def _relative(f: Finding) -> float:
    """A finding's deviation relative to its tolerance (infinite without one)."""
    return float(f.value or 0.0) / f.threshold if f.threshold else math.inf

_FITTED = {"standard_scaling_fit": ("standardised (mean 0, std 1)", "standard scaler"),
           "minmax_scaling_fit": ("scaled to [{lo}, {hi}]", "min-max scaler"),
           "robust_scaling_fit": ("robust-scaled (median 0, IQR 1)", "robust scaler")}


def group_scalings(findings: list[Finding], train_name: str, max_examples: int
                   ) -> list[Finding]:
    """One finding per group of per-column scaling findings fitted the same way (metric, range
    and fit set), in column order; a group of one stays as it is."""
    groups: dict[tuple[Any, ...], list[Finding]] = {}
    for f in findings:
        key = (f.metric, tuple(f.splits), tuple(f.evidence.get("range", ())))
        groups.setdefault(key, []).append(f)
    out = []
    for (metric, splits, rng), group in groups.items():
        if len(group) == 1:
            out.append(group[0])
            continue
        label = "+".join(splits)
        worst = max(group, key=_relative)
        names = [str(f.subject) for f in group]
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        state, what = _FITTED[metric]
        state = state.format(lo=fmt_g(rng[0]), hi=fmt_g(rng[1])) if rng else state
        n_later = int(worst.count or 0)
        n_set = int(worst.evidence["statistics"][label]["rows"])
        rows = []
        for f in group[:max_examples]:
            st = f.evidence["statistics"]
            rows.append({"column": f.subject, "deviation": f.value, "tolerance": f.threshold,
                         **{f"{label} {k}": v for k, v in st[label].items() if k != "rows"},
                         **{f"{train_name} {k}": v for k, v in st[train_name].items()
                            if k != "rows"},
                         **({"train_z": f.evidence["train_z"]} if "train_z" in f.evidence
                            else {})})
        out.append(Finding(
            severity=worst.severity, metric=metric, value=worst.value,
            threshold=worst.threshold, count=n_later, subject=names, splits=list(splits),
            message=f"{len(names)} columns ({shown}) are {state} over {label} but not over "
                    f"{train_name} alone: the {what} was fitted with {fmt_count(n_later)} "
                    f"{'+'.join(splits[1:])} rows ({fmt_share(share(n_later, n_set))} of its "
                    f"{fmt_count(n_set)} rows).",
            evidence={"fit_set": label, "columns": len(names), "per_column": rows,
                      "loosest_match": worst.subject}))
    return out


def group_imputations(ctx: Context, findings: list[Finding], max_examples: int
                      ) -> list[Finding]:
    """One finding per group of imputation findings with the same statistic and fit set;
    its count is the rows holding a fill value in any of the columns (one select)."""
    groups: dict[tuple[str, tuple[str, ...]], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.evidence["statistic"], tuple(f.splits)), []).append(f)
    out = []
    train_name = ctx.names[0]
    for (stat, fit_set), group in groups.items():
        if len(group) == 1:
            out.append(group[0])
            continue
        label = "+".join(fit_set)
        filled = ctx.rows_any_near(fit_set, [(str(f.subject), f.evidence["fill_value"],
                                              float(f.threshold or 0.0)) for f in group])
        names = [str(f.subject) for f in group]
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more"
                                        if len(names) > 5 else "")
        worst = max(group, key=_relative)
        rows = [{"column": f.subject, "fill_value": f.evidence["fill_value"],
                 "rows_with_value": f.count,
                 f"{label} {stat}": f.evidence[f"{label}_statistics"][stat],
                 f"{train_name} {stat}": f.evidence[f"{train_name}_statistics"][stat]}
                for f in group[:max_examples]]
        out.append(Finding(
            severity=worst.severity, metric="imputation_fit", value=worst.value,
            threshold=worst.threshold, count=int(filled), subject=names,
            splits=list(fit_set),
            message=f"{fmt_rows(int(filled), ctx.set_rows(fit_set), f'{label} rows')} hold a fill "
                    f"value in one of {len(names)} columns ({shown}) equal to the column's "
                    f"{stat} over {label}, not over {train_name}: the {stat} imputer was "
                    f"fitted with the {'+'.join(fit_set[1:])} rows.",
            evidence={"fit_set": label, "columns": len(names), "per_column": rows,
                      "loosest_match": worst.subject}))
    return out


_WHY_MANY = {"one_hot": "they belong to a one-hot group whose columns sum to 1 in every row: the "
                        "encoder learned these categories from later splits",
             "l2": "they belong to a group of columns with unit L2 norm per row (tf-idf): the "
                   "vocabulary was learned from later splits"}


def group_categories(ctx: Context, findings: list[Finding], max_examples: int
                     ) -> list[Finding]:
    """One finding per name-prefix group (same structure and severity) of columns that are 0
    in every train row and non-zero later; its count is the later rows non-zero in any of them
    (one select per later split). Columns outside a prefix group stay one finding each."""
    groups: dict[tuple[Any, ...], list[Finding]] = {}
    for i, f in enumerate(findings):
        prefix_group = tuple(f.evidence.get("group") or ())
        key = (f.severity, f.evidence.get("structure"), prefix_group) if prefix_group else (i,)
        groups.setdefault(key, []).append(f)
    train_name, later = ctx.names[0], ctx.names[1:]
    out = []
    for group in groups.values():
        if len(group) == 1:
            out.append(group[0])
            continue
        names = [str(f.subject) for f in group]
        per_split = {n: ctx.rows_any_nonzero(n, names) for n in later}
        m = sum(per_split.values())
        hit = [n for n in later if per_split[n]]
        n_hit = sum(ctx.roles.rows[n] for n in hit)
        n_train = int(ctx.per_split[train_name][names[0]]["n"])
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        structure = group[0].evidence.get("structure")
        why = _WHY_MANY.get(str(structure), f"columns zero in every {train_name} row are what an "
                                       "encoder or vocabulary fitted on later splits produces")
        rows = [{"column": f.subject, **{f"{n} rows non-zero": f.evidence["nonzero_rows"][n]
                                         for n in later}}
                for f in group[:max_examples]]
        out.append(Finding(
            severity=group[0].severity, metric="category_from_later_split",
            value=share(m, n_hit), threshold=0.0, count=m, subject=names,
            splits=[train_name, *later],
            message=f"{len(names)} columns ({shown}) are 0 in all {fmt_count(n_train)} "
                    f"{train_name} rows but non-zero in "
                    f"{fmt_rows(m, n_hit, '+'.join(hit) + ' rows')}; {why}.",
            evidence={"nonzero_rows": {train_name: 0, **per_split}, "columns": len(names),
                      "per_column": rows, "group": group[0].evidence["group"],
                      "structure": structure}))
    return out
