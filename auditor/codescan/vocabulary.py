"""What the code scan recognises by name: split roles, and the sets of functions, methods
and classes that load, split, fit, apply, evaluate or combine data (see :mod:`auditor.codescan`)."""
from __future__ import annotations

import builtins
import re
from typing import Iterable

FULL, TRAIN, VAL, TEST, MIX = "full", "train", "val", "test", "mix"
SPLIT_ROLES = (TRAIN, VAL, TEST)
CHECK_ID = "leakage.preprocessing"


# -- vocabularies -----------------------------------------------------------------------------
_FAMILY_NAMES = {
    "scaler": "StandardScaler MinMaxScaler RobustScaler MaxAbsScaler QuantileTransformer "
              "PowerTransformer SplineTransformer Normalization",
    "discretizer": "KBinsDiscretizer Discretization",
    "imputer": "SimpleImputer KNNImputer IterativeImputer",
    "decomposition": "PCA KernelPCA IncrementalPCA TruncatedSVD FastICA NMF FactorAnalysis "
                     "LatentDirichletAllocation SparsePCA MiniBatchSparsePCA DictionaryLearning "
                     "UMAP TSNE Isomap LocallyLinearEmbedding GaussianRandomProjection "
                     "SparseRandomProjection",
    "selector": "SelectKBest SelectPercentile SelectFpr SelectFdr SelectFwe "
                "GenericUnivariateSelect SelectFromModel RFE RFECV VarianceThreshold "
                "SequentialFeatureSelector BorutaPy Boruta",
    "vectorizer": "TfidfVectorizer CountVectorizer TfidfTransformer DictVectorizer Tokenizer "
                  "TextVectorization StringLookup IntegerLookup",
    "encoder": "OneHotEncoder OrdinalEncoder BinaryEncoder CountEncoder BaseNEncoder "
               "HelmertEncoder SumEncoder BackwardDifferenceEncoder PolynomialEncoder",
    "target_encoder": "TargetEncoder CatBoostEncoder LeaveOneOutEncoder WOEEncoder "
                      "JamesSteinEncoder MEstimateEncoder GLMMEncoder QuantileEncoder "
                      "SummaryEncoder",
    "resampler": "SMOTE ADASYN BorderlineSMOTE SVMSMOTE SMOTENC SMOTEN KMeansSMOTE "
                 "RandomOverSampler RandomUnderSampler SMOTETomek SMOTEENN NearMiss TomekLinks "
                 "ClusterCentroids EditedNearestNeighbours",
    "clustering": "KMeans MiniBatchKMeans GaussianMixture BayesianGaussianMixture Birch",
}


FAMILY: dict[str, str] = {n: fam for fam, names in _FAMILY_NAMES.items() for n in names.split()}
STATELESS = set("Normalizer Binarizer FunctionTransformer PolynomialFeatures HashingVectorizer "
                "MissingIndicator LabelEncoder LabelBinarizer MultiLabelBinarizer FeatureHasher "
                "HashingEncoder".split())
PIPELINES = set("Pipeline make_pipeline ColumnTransformer make_column_transformer FeatureUnion "
                "make_union TransformedTargetRegressor".split())
SEARCHES = set("GridSearchCV RandomizedSearchCV HalvingGridSearchCV HalvingRandomSearchCV "
               "BayesSearchCV TuneSearchCV".split())
SPLITTERS = set("KFold StratifiedKFold GroupKFold StratifiedGroupKFold RepeatedKFold "
                "RepeatedStratifiedKFold ShuffleSplit StratifiedShuffleSplit GroupShuffleSplit "
                "TimeSeriesSplit LeaveOneOut LeavePOut LeaveOneGroupOut LeavePGroupsOut "
                "PredefinedSplit".split())
CV_FUNCS = set("cross_val_score cross_validate cross_val_predict learning_curve "
               "validation_curve permutation_test_score".split())
FIT_FUNCS = {"scale": "scaler", "minmax_scale": "scaler", "robust_scale": "scaler",
             "maxabs_scale": "scaler", "quantile_transform": "scaler",
             "power_transform": "scaler", "qcut": "discretizer"}
MODEL_RE = re.compile(r"(Classifier|Regressor|Regression|RegressionCV|Classification|SVC|SVR|"
                       r"NB|Ridge|RidgeCV|Lasso|LassoCV|ElasticNet|ElasticNetCV|Perceptron|"
                       r"Booster|Net|Model|Sequential|Forest|Tree|Trees|LGBM\w*|XGB\w*|"
                       r"CatBoost\w*|LinearSVC|NuSVC|NuSVR|KNN\w*|Lars|LarsCV|OneClassSVM)$")
FIT_METHODS = set("fit fit_transform fit_resample fit_sample partial_fit fit_predict "
                  "fit_on_texts fit_on_sequences adapt".split())
APPLY_METHODS = set("transform inverse_transform predict predict_proba predict_log_proba "
                    "decision_function score_samples texts_to_sequences texts_to_matrix "
                    "kneighbors apply sample".split())
EVAL_METHODS = {"score", "evaluate"}
METRIC_RE = re.compile(r"(_score|_error|_loss|_report|^confusion_matrix|^roc_curve|"
                        r"^precision_recall_curve|^accuracy|^auc|^r2|^rmse|^mae|^mse|^f1|"
                        r"^precision|^recall)$")
STAT_METHODS = set("mean std var median min max quantile mode sum nunique value_counts "
                   "describe agg aggregate sem skew kurt kurtosis nanmean nanstd nanmedian "
                   "percentile nanpercentile nanquantile ptp amin amax nanmin nanmax".split())
AGG_NAMES = {"mean", "median", "std", "var", "sum", "count", "min", "max", "size", "nunique",
             "first", "last", "sem", "skew", "prod"}
COMPARE_FUNCS = {"max", "min", "sorted", "argmax", "argmin", "argsort", "nanargmax",
                 "nanargmin", "idxmax", "idxmin", "nlargest", "nsmallest", "sort_values",
                 "sort", "rank", "amax", "amin"}
COMBINING_METHODS = {"append", "merge", "join", "concat", "combine_first", "vstack", "hstack",
                     "extend", "union", "update", "concatenate"}
ROW_METHODS = {"sample", "head", "tail", "query", "filter", "take", "truncate", "nsmallest",
               "nlargest", "drop"}
COSMETIC = {"reset_index", "copy", "to_numpy", "astype", "sort_index", "sort_values", "to_frame",
            "squeeze", "ravel", "reshape", "flatten", "tolist", "to_pandas", "collect",
            "dropna", "rename", "set_index"}
META_ATTRS = {"shape", "columns", "dtypes", "size", "ndim", "dtype", "name", "names"}
PASS_ATTRS = {"values", "T", "index", "loc", "iloc", "at", "iat", "str", "dt", "cat", "array",
              "data", "text", "target", "X", "y"}
CONST_FUNCS = set("len print isinstance issubclass type str repr hasattr getattr setattr "
                  "display open input id hash format range callable vars dir help super "
                  "Path bool".split())
LOADER_RE = re.compile(r"^(read_\w+|scan_\w+|load_\w+|fetch_\w+|get_\w*data\w*|"
                       r"make_(classification|regression|"
                       r"blobs|moons|circles|friedman\d|hastie_10_2|multilabel_classification|"
                       r"sparse_uncorrelated|swiss_roll|s_curve|gaussian_quantiles|"
                       r"low_rank_matrix|biclusters|checkerboard)|load|loadtxt|genfromtxt|"
                       r"DataFrame|Series|array|asarray|from_pandas|from_numpy|open_dataset|"
                       r"load_dataset)$")
BUILTINS = set(dir(builtins))
_TOKEN_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_TRAIN_T = {"train", "training", "trn", "xtrain", "ytrain", "xtr", "ytr", "dftrain",
            "trainset", "traindf", "trainx", "trainy"}
_TEST_T = {"test", "tests", "testing", "tst", "holdout", "xtest", "ytest", "xte", "yte",
           "dftest", "testset", "testdf", "testx", "testy"}
_VAL_T = {"val", "valid", "validation", "dev", "xval", "yval", "xvalid", "yvalid", "dfval",
          "valset", "valdf", "xdev", "ydev"}
_SHORT = {"tr": TRAIN, "te": TEST, "va": VAL, "vl": VAL}
_SHORT_COMPANIONS = {"x", "y", "df", "idx", "ind", "data", "d", "ds", "dl", "loader", "set",
                     "index", "indices", "ids", "mask", "frame"}


def role_hint(name: str) -> str | None:
    """train / val / test from a variable name (``X_train``, ``test_df``, ``Xte``), else None."""
    tokens = [t.lower() for part in re.split(r"[_\W]+", name) for t in _TOKEN_RE.findall(part)]
    found = set()
    for t in tokens:
        if t in _TRAIN_T or (t.startswith("train") and len(t) <= 12):
            found.add(TRAIN)
        elif t in _TEST_T or (t.startswith("test") and len(t) <= 10):
            found.add(TEST)
        elif t in _VAL_T or t.startswith("valid"):
            found.add(VAL)
        elif t in _SHORT and all(o in _SHORT_COMPANIONS or o.isdigit() or o == t
                                 for o in tokens):
            found.add(_SHORT[t])
    return found.pop() if len(found) == 1 else None


def combine_roles(roles: Iterable[str]) -> str:
    rs = set(roles)
    if MIX in rs or (TRAIN in rs and TEST in rs) or (VAL in rs and TEST in rs):
        return MIX
    for r in (TEST, VAL, TRAIN):
        if r in rs:
            return TRAIN if r == VAL and TRAIN in rs else r
    return FULL
