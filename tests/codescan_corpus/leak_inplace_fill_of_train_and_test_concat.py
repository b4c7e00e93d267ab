# expect: leak fit_on_train_and_test statistic line 9
"""Kaggle's train and test files concatenated and a column filled in place with the median of
both, then cut back into the two parts: the training rows were filled with a test statistic."""
import pandas as pd

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
full = pd.concat([train, test])
full["Age"].fillna(full["Age"].median(), inplace=True)
train = full[:len(train)]
test = full[len(train):]
