# expect: clean
"""Row-wise statistics (a row's max, its missing count), a missing-value table printed, one
loop over both parts, a dict keyed 'train', and train/test rows cut back out of a
concatenation (by position and by an is_train flag) before anything is fitted on them."""
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("readings.csv")
df["best"] = df[["a", "b", "c"]].max(axis=1)
df["n_missing"] = df.isnull().sum(axis=1)
print(df.isnull().sum())
train, test = train_test_split(df, test_size=0.2)
for part in (train, test):
    part["ratio"] = part["a"] / part["b"]
parts = {"train": train, "test": test}
scaler = StandardScaler().fit(parts["train"][["a"]])
print(scaler.transform(parts["test"][["a"]]))

kaggle_train = pd.read_csv("train.csv")
kaggle_test = pd.read_csv("test.csv")
n_train = len(kaggle_train)
combined = pd.concat([kaggle_train, kaggle_test])
combined["length"] = combined["text"].str.len()
train_rows = combined[:n_train]
test_rows = combined[n_train:]
lengths = StandardScaler().fit(train_rows[["length"]])
print(lengths.transform(test_rows[["length"]]))
flagged = combined[combined.is_train == 1]
print(StandardScaler().fit(flagged[["length"]]).mean_)
