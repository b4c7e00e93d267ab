# expect: clean
"""Train and test come from separate files; folds refit the scaler on their own train rows."""
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import KFold
from sklearn.preprocessing import StandardScaler

train_df = pd.read_csv("train.csv")
test_df = pd.read_csv("test.csv")
X, y = train_df.drop(columns="label").values, train_df["label"].values
X_test = test_df.drop(columns="label").values

fold_losses, test_pred = [], np.zeros(len(X_test))
for tr, va in KFold(n_splits=5, shuffle=True, random_state=0).split(X):
    scaler = StandardScaler().fit(X[tr])
    clf = LogisticRegression(max_iter=1000).fit(scaler.transform(X[tr]), y[tr])
    fold_losses.append(log_loss(y[va], clf.predict_proba(scaler.transform(X[va]))))
    test_pred += clf.predict_proba(scaler.transform(X_test))[:, 1] / 5
print("cv log loss", np.mean(fold_losses))
print("test log loss", log_loss(test_df["label"], test_pred))
