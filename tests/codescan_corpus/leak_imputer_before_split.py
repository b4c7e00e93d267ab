# expect: leak fit_before_split imputer line 11
"""Imputes with medians of all rows, then slices off the last 20% as the test set."""
import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer

data = np.load("features.npy")
labels = np.load("labels.npy")
n_train = int(0.8 * len(data))
imputer = SimpleImputer(strategy="median")
imputer.fit(data)
filled = imputer.transform(data)
X_train, X_test = filled[:n_train], filled[n_train:]
y_train, y_test = labels[:n_train], labels[n_train:]
clf = RandomForestClassifier(random_state=0).fit(X_train, y_train)
print(clf.score(X_test, y_test))
