# expect: leak fit_before_split scaler line 10
"""A scaler hidden in a function that DataFrame.apply runs on each column of every row,
before the split."""
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler


def scale(col):
    return StandardScaler().fit_transform(col.values.reshape(-1, 1)).ravel()


df = pd.read_csv("sensors.csv")
df[["a", "b"]] = df[["a", "b"]].apply(scale)
X_train, X_test = train_test_split(df, test_size=0.25)
