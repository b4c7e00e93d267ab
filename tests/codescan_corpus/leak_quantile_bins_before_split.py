# expect: leak fit_before_split discretizer line 10
# expect: leak fit_before_split discretizer line 11
"""Bins learned from every row: quantile bins (qcut) and five equal-width bins between the
minimum and maximum of all rows (cut with a bin count); bins given as edges learn nothing."""
import pandas as pd
from sklearn.model_selection import train_test_split

df = pd.read_csv("hospital.csv")
X, y = df.drop(columns="los"), df["los"]
X["charge_bin"] = pd.qcut(X["Total_Charges"], q=5, labels=False)
X["age_bin"] = pd.cut(X["Age"], 5, labels=False)
X["band"] = pd.cut(X["Age"], bins=[0, 18, 65, 120], labels=False)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25)
