# expect: leak global_statistic_before_split statistic line 9
# expect: leak global_statistic_before_split statistic line 10
"""Fills written inside functions handed to pandas: each column's mode in an apply lambda,
each group's mean in a groupby transform, both over every row before the split."""
import pandas as pd
from sklearn.model_selection import train_test_split

loans = pd.read_csv("loans.csv")
cats = loans[["Gender", "Married"]].apply(lambda x: x.fillna(x.value_counts().index[0]))
loans["Income"] = loans.groupby("Area")["Income"].transform(lambda s: s.fillna(s.mean()))
X = pd.concat([cats, loans[["Income"]]], axis=1)
X_train, X_test, y_train, y_test = train_test_split(X, loans["Status"], test_size=0.2)
