# expect: leak fit_before_split scaler line 12
"""The frame is read from train.csv and named train, yet the notebook splits it itself: the
scaler fitted on every row of it has seen the validation rows (a name does not make a split;
the train_test_split below does)."""
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

train = pd.read_csv("train.csv")
cols = ["Age", "Fare"]
train[cols] = StandardScaler().fit_transform(train[cols])
X_tr, X_val, y_tr, y_val = train_test_split(train[cols], train["Survived"], test_size=0.2)
print(LogisticRegression().fit(X_tr, y_tr).score(X_val, y_val))
