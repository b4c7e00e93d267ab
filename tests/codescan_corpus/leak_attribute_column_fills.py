# expect: leak global_statistic_before_split statistic line 10
# expect: leak global_statistic_before_split statistic line 11
"""Columns filled as attributes of the frame (X.Age = ..., X.Fare.fillna(..., inplace=True))
with statistics of every row, before the split."""
import pandas as pd
from sklearn.model_selection import train_test_split

X = pd.read_csv("passengers.csv")
y = X.pop("Survived")
X.Age = X.Age.fillna(X.Age.mean())
X.Fare.fillna(X.Fare.median(), inplace=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2)
