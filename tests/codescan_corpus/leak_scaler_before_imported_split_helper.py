# expect: leak fit_before_split scaler line 11
"""The split is made by a helper imported from the project's own module (its code is not in
this file): what is bound to X_train/X_test are split parts, so the scaler fitted on every row
before it leaks; text helpers such as split_sentences are not splits."""
import pandas as pd
from sklearn.preprocessing import StandardScaler
from utils import split_data, split_sentences

df = pd.read_csv("creditcard.csv")
notes = split_sentences(df["note"])
df[["Amount"]] = StandardScaler().fit_transform(df[["Amount"]])
X_train, y_train, X_test, y_test = split_data(df, ["Amount", "V1"], "Class")
