# expect: leak fit_on_train_and_test imputer line 14
# expect: leak fit_on_train_and_test scaler line 16
"""Train and test arrive as separate files and are concatenated to fit the preprocessing."""
import numpy as np
import pandas as pd
from sklearn.impute import KNNImputer
from sklearn.preprocessing import RobustScaler

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
features = [c for c in train.columns if c != "target"]
both = pd.concat([train[features], test[features]], axis=0)
imputer = KNNImputer(n_neighbors=5)
imputer.fit(both)
scaler = RobustScaler()
scaler.fit(np.vstack([imputer.transform(train[features]), imputer.transform(test[features])]))
X_train = scaler.transform(imputer.transform(train[features]))
X_test = scaler.transform(imputer.transform(test[features]))
