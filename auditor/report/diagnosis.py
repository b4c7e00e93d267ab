"""The diagnosis at the top of a report: the problems that make a metric computed on these
splits untrustworthy, ranked by their effect, each in one sentence with its evidence, the
estimated inflation of the metric where the run measured it, and one suggested fix.

Built from the report dict alone, after waivers and the baseline are applied, so report.json,
the HTML page, the Markdown summary and the terminal say the same thing. Each counted warn or
fail finding (not waived, not resolved) belongs to one problem:

- a feature that leaks the label, keyed by its column: ``leakage.single_feature_auc``,
  ``leakage.feature_label_correlation`` and the label probe's ``ablation_drop`` on that column
  are one problem (a probe score above ``suspicious_above`` joins the most severe such
  problem);
- rows, entities or dates shared between splits (``leakage.duplicates``,
  ``leakage.group_overlap``, ``leakage.temporal``), keyed by the pair of splits; rows repeated
  within a split, a feature dated after its row (``future_values``), and a random holdout
  that beats a latest-period one (the probe's ``time_holdout_gap``) are problems of their own;
  declared ids shared between splits (``id_overlap_rows``) are shared rows, labels that differ
  on identical inputs (``conflicting_labels``) a label-quality problem;
- documents shared between splits (``tokens.contamination``) as shared rows; a public
  benchmark found in the corpus (``tokens.benchmarks``), keyed by the benchmark;
- preprocessing fitted beyond train, memorised near-copies, distribution shift (``drift.*``,
  ``separability.adversarial``), schema; each token check, and any other check, one problem.

Inflation, the probe's score (AUC, or R² for a numeric label) with and without the problem:
for a leaking column, the label probe retrained without it (``ablation``); for shared rows,
entities and dates, the probe scored on the evaluation rows that share nothing of that kind
(``without_leaking_rows``: the model is not refitted; only for the pair the probe trained and
scored on); for a random holdout that beats a latest-period one, the gap between the two.
``change`` = score with - score without.

Ranking: failures before warnings; then the larger measured inflation; then the kind's order
below (leaks that inflate a metric first, distribution shift and schema last).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from auditor.report.grouping import counted, subject_text
from auditor.report.ranks import SEVERITY_RANK

# kind -> (headline, suggested fix), in rank order; ``{subject}``, ``{pair}`` and ``{check}``
# are filled in
KINDS: dict[str, tuple[str, str]] = {
    "label_leak": ("{subject} leaks the label",
                   "Drop {subject}, or rebuild it from what is known at prediction time; "
                   "then audit again."),
    "future_feature": ("{subject} holds values from after the row's own time",
                       "Rebuild {subject} from what was known at each row's time (an "
                       "as-of join), or drop it."),
    "shared_rows": ("Rows shared {pair}",
                    "Remove the copies from the later split (deduplicate before splitting) "
                    "and score again."),
    "benchmark": ("{subject} problems are in the training corpus",
                  "Drop the listed training documents (--write-clean DIR writes the training "
                  "split without them), or score {subject} on its clean problems only."),
    "shared_entities": ("Entities shared {pair}",
                        "Split by the entity ({subject}): every entity's rows in one split "
                        "(e.g. scikit-learn's GroupShuffleSplit)."),
    "time_overlap": ("Time overlap {pair}",
                     "Split by time: every evaluation row dated after the end of train."),
    "time_signal": ("A random holdout overstates the score {pair}",
                    "Evaluate on a later period (a split by time): rows close in time share "
                    "information a random split lets through."),
    "suspicious_label": ("The label is suspiciously easy to predict",
                         "Look for a feature computed after the label: the probe's ablation "
                         "and the single-feature checks name the candidates."),
    "preprocessing": ("Preprocessing fitted beyond train",
                      "Fit scalers, imputers and encoders on train only (inside a "
                      "scikit-learn Pipeline), then transform the other splits."),
    "memorisation": ("Evaluation rows that are near-copies of train rows",
                     "Remove the near-copies from the evaluation split, or split by the "
                     "entity the near-copies share."),
    "tokens": ("{token_problem}",
               "Fix the tokenization before training: the check's evidence shows the rows."),
    "label_quality": ("Labels that a model cannot learn as stored",
                      "Check the label's alignment with the features (a shifted join or "
                      "sort) and rows with the same inputs and different labels."),
    "repeated_rows": ("Rows repeated {pair}",
                      "Deduplicate the split: a repeated row weighs twice in training and in "
                      "evaluation."),
    "shift": ("Distribution shift between splits",
              "Check that the evaluation split stands for the data the model will serve; a "
              "metric on a shifted split measures the shift too."),
    "schema": ("Schema differences between splits",
               "Align the splits' columns and types before training."),
    "other": ("{check}", "See the check's evidence in the report."),
}
ORDER = list(KINDS)
TOKEN_PROBLEMS = {
    "tokens.special_tokens": "Special tokens, attention masks or labels are misplaced",
    "tokens.roundtrip": "Text does not survive the tokenizer, or stored ids are stale",
    "tokens.lengths": "Sequences are truncated or of unexpected length",
    "tokens.packing": "Packed rows break their packing (separators, positions, labels)",
    "tokens.chat": "Chat rows disagree with their template or loss mask",
}
METRIC_NAMES = {"probe_auc": "AUC", "probe_r2": "R²"}
DECISIVE = 0.5  # a cut leads a leak's sentence when it tells the class apart this well (J)


@dataclass
class Problem:
    """One ranked problem: ``sentence`` is the deciding finding's message; ``evidence`` the
    other findings behind it (one line each); ``inflation`` the measured effect, or None;
    ``change`` (a run with a baseline) "new" when any of its findings is new, "persisting"
    when all persist."""

    rank: int
    kind: str
    severity: str
    headline: str
    sentence: str
    action: str
    checks: list[str]
    subjects: list[str]
    splits: list[str]
    findings: int
    evidence: list[str] = field(default_factory=list)
    inflation: dict[str, Any] | None = None
    change: str | None = None  # against a baseline: "new" when any of its findings is new


    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _kind(check: str, f: dict[str, Any]) -> str:
    """The problem a finding is evidence of: by its metric first (one check finds several
    kinds of problem), then by its check."""
    metric = f.get("metric") or ""
    by_metric = {"future_values": "future_feature", "ablation_drop": "label_leak",
                 "within_split_duplicates": "repeated_rows", "conflicting_labels":
                 "label_quality", "id_overlap_rows": "shared_rows",
                 "time_holdout_gap": "time_signal"}
    if metric in by_metric:
        return by_metric[metric]
    if check in ("leakage.single_feature_auc", "leakage.feature_label_correlation"):
        return "label_leak"
    if check in ("leakage.duplicates", "tokens.contamination"):
        return "shared_rows"
    if check == "tokens.benchmarks":
        return "benchmark"
    if check == "leakage.group_overlap":
        return "shared_entities"
    if check == "leakage.temporal":
        return "time_overlap"
    if check == "separability.label_probe":
        verdict = ((f.get("evidence") or {}).get("result") or {}).get("verdict")
        return "suspicious_label" if verdict == "suspiciously good" else "label_quality"
    if check == "leakage.preprocessing":
        return "preprocessing"
    if check == "separability.memorisation":
        return "memorisation"
    if check.startswith("tokens."):
        return "tokens"
    if check.startswith("drift.") or check == "separability.adversarial":
        return "shift"
    if check == "schema.consistency":
        return "schema"
    return "other"


def _key(kind: str, check: str, f: dict[str, Any]) -> tuple[Any, ...]:
    pair = tuple(f.get("splits") or ())
    if kind in ("label_leak", "future_feature", "benchmark"):
        return kind, subject_text(f.get("subject"))
    if kind in ("shared_rows", "shared_entities", "repeated_rows"):
        return kind, pair
    if kind == "time_overlap":  # a time split's later splits: one overlap, whichever pair
        return (kind,)
    if kind in ("other", "tokens"):
        return kind, check
    return (kind,)


def _severity_rank(s: str) -> int:
    """0 for a fail, 1 for a warning: worst first."""
    return -SEVERITY_RANK.get(s, 0)


def pair_text(splits: list[str]) -> str:
    """'between train and test' for a pair of splits, 'in train' for one."""
    if len(splits) == 2:
        return f"between {splits[0]} and {splits[1]}"
    return f"in {', '.join(splits)}" if splits else "between splits"


def _probe(doc: dict[str, Any]) -> list[dict[str, Any]]:
    for c in doc.get("checks", []):
        if c.get("id") == "separability.label_probe":
            return list(c.get("findings", []))
    return []


def _probe_metric(probe: list[dict[str, Any]]) -> str:
    for f in probe:
        if f.get("metric") in METRIC_NAMES:
            return METRIC_NAMES[f["metric"]]
    return "score"


def _ablation(probe: list[dict[str, Any]], column: str) -> dict[str, Any] | None:
    """The probe's largest drop without ``column`` (retrained without it)."""
    best = None
    for f in probe:
        if f.get("metric") != "ablation_drop" or subject_text(f.get("subject")) != column:
            continue
        for row in (f.get("evidence") or {}).get("ablation") or []:
            if not isinstance(row, dict) or row.get("drop") is None:
                continue
            if best is None or row["drop"] > best["change"]:
                best = {"split": row.get("split"), "score": row.get("score"),
                        "without": row.get("without_feature"), "change": row["drop"],
                        "how": f"the label probe retrained without {column}"}
    return best


def _without_rows(probe: list[dict[str, Any]], splits: list[str], kind: str,
                  columns: list[str] | None = None) -> dict[str, Any] | None:
    """The probe's score on the later split's rows without the leaking rows of ``kind``
    (``copies``, ``group`` of one of ``columns``, ``time``; see
    :func:`auditor.probes.label_probe.leak_rows`): only for a problem between the split the
    probe trains on and that later split (the rows it leaves out share something with its
    training split, not with another one)."""
    for f in probe:
        if f.get("metric") not in METRIC_NAMES or list(f.get("splits") or []) != splits:
            continue
        for row in (f.get("evidence") or {}).get("without_leaking_rows") or []:
            if row.get("kind") == kind and row.get("change") is not None and (
                    columns is None or row.get("column") in columns):
                return {"split": splits[-1], "score": row["score_all_rows"],
                        "without": row["score_without"], "change": row["change"],
                        "how": f"the label probe scored on {splits[-1]} without the "
                               f"{row['rows']:,} {row['rows_left_out']}"}
    return None


def _time_gap(probe: list[dict[str, Any]]) -> dict[str, Any] | None:
    for f in probe:
        hold = (f.get("evidence") or {}).get("holdouts")
        if f.get("metric") == "time_holdout_gap" and hold and f.get("value") is not None:
            split = (f.get("splits") or [None])[0]
            return {"split": split, "score": hold["random_holdout_score"],
                    "without": hold["latest_holdout_score"], "change": f["value"],
                    "how": f"the label probe on a random holdout of {split} against its "
                           "latest period (same size)"}
    return None


def _inflation(kind: str, subjects: list[str], splits: list[str],
               probe: list[dict[str, Any]]) -> dict[str, Any] | None:
    if kind == "label_leak" and subjects:
        found = [a for a in (_ablation(probe, s) for s in subjects) if a]
        return max(found, key=lambda a: a["change"]) if found else None
    if kind == "shared_rows":
        return _without_rows(probe, splits, "copies")
    if kind == "shared_entities":
        return _without_rows(probe, splits, "group", subjects)
    if kind == "time_overlap":
        return _without_rows(probe, splits, "time")
    if kind == "time_signal":
        return _time_gap(probe)
    return None


def _change(changes: list[Any]) -> str | None:
    if "new" in changes:
        return "new"
    return "persisting" if changes and all(c == "persisting" for c in changes) else None


def with_stop(text: str) -> str:
    """``text`` ending with a full stop (or the ellipsis of a clipped text)."""
    text = text.rstrip()
    return text if text.endswith((".", "…", "!", "?")) else text + "."


def inflation_text(inf: dict[str, Any], metric: str) -> str:
    """'AUC on test: 1.000 with, 0.693 without (+0.307; the label probe retrained ...)'."""
    return (f"{metric} on {inf['split']}: {inf['score']:.3f} with, {inf['without']:.3f} "
            f"without ({inf['change']:+.3f}; {inf['how']})")


def diagnose(doc: dict[str, Any]) -> list[Problem]:
    """The ranked problems of a report dict (see the module docstring)."""
    groups: dict[tuple[Any, ...], list[tuple[str, dict[str, Any]]]] = {}
    for c in doc.get("checks", []):
        for f in counted(c.get("findings", [])):
            kind = _kind(c["id"], f)
            groups.setdefault(_key(kind, c["id"], f), []).append((c["id"], f))
    leaks = [k for k in groups if k[0] == "label_leak"]
    easy = groups.get(("suspicious_label",))
    if easy and leaks:  # the probe's too-good score is evidence of the strongest leak
        groups[min(leaks, key=lambda k: min(_severity_rank(f["severity"])
                                            for _, f in groups[k]))] += groups.pop(
            ("suspicious_label",))
    probe = _probe(doc)
    metric = _probe_metric(probe)
    problems = []
    for key, members in groups.items():
        kind = key[0]
        members.sort(key=lambda cf: (_severity_rank(cf[1]["severity"]),
                                     -(cf[1].get("value") or 0)
                                     if isinstance(cf[1].get("value"), (int, float)) else 0))
        check, top = members[0]
        subjects = list(dict.fromkeys(subject_text(f.get("subject")) for _, f in members
                                      if f.get("subject")))
        splits = list(top.get("splits") or [])
        names = {"subject": ", ".join(subjects[:3]) or "(dataset)",
                 "pair": pair_text(splits), "check": check,
                 "token_problem": TOKEN_PROBLEMS.get(check, check)}
        headline, action = (t.format(**names) for t in KINDS[kind])
        evidence = []
        for c_id, f in members[1:]:
            line = f"{c_id}: {f.get('message', '')}"
            if line not in evidence:
                evidence.append(line)
        inf = _inflation(kind, subjects, splits, probe)
        if inf and (inf.get("score") is None or inf.get("without") is None):
            inf = None
        sentence = top.get("message", "")
        cut = next((f["evidence"]["decisive_cut"] for _, f in members
                    if isinstance((f.get("evidence") or {}).get("decisive_cut"), dict)), None)
        if kind == "label_leak" and cut and cut["j"] >= DECISIVE:  # what a person checks first
            sentence = f"{cut['statement']} (the decisive cut). {sentence}"
        problems.append(Problem(
            rank=0, kind=kind, severity=top["severity"], headline=headline,
            sentence=sentence, action=action,
            checks=list(dict.fromkeys(c for c, _ in members)), subjects=subjects,
            splits=splits, findings=len(members), evidence=evidence[:6],
            inflation=dict(inf, metric=metric) if inf else None,
            change=_change([f.get("change") for _, f in members])))
    problems.sort(key=lambda p: (_severity_rank(p.severity),
                                 -(p.inflation or {}).get("change", 0.0),
                                 ORDER.index(p.kind)))
    for i, p in enumerate(problems, 1):
        p.rank = i
    return problems


def diagnosis_lines(doc: dict[str, Any], *, limit: int = 8, width: int = 200) -> list[str]:
    """Plain text for a terminal or a log: one numbered line per problem (its headline, the
    deciding sentence clipped to ``width``, the inflation), at most ``limit``."""
    from auditor.report.charts import clip_text

    problems = [p.to_dict() for p in diagnose(doc)]  # from the findings: never a stale copy
    lines = []
    for p in problems[:limit]:
        change = f" [{p['change']}]" if p.get("change") else ""
        line = with_stop(f"{p['rank']}. [{p['severity']}]{change} {p['headline']}: "
                         f"{clip_text(p['sentence'], width)}")
        if p.get("inflation"):
            line += (f" Inflation: "
                     f"{inflation_text(p['inflation'], p['inflation']['metric'])}.")
        lines.append(line)
    if len(problems) > limit:
        lines.append(f"... and {len(problems) - limit:,} more problems (see the report)")
    return lines
