# expect: clean
"""Variable names that merely contain "test" or "train" letters must not confuse the scan."""
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

latest = pd.read_parquet("latest_snapshot.parquet")
contest_entries = latest[latest["kind"] == "contest"]
X, y = contest_entries.drop(columns="won"), contest_entries["won"]
X_train, X_holdout, y_train, y_holdout = train_test_split(X, y, random_state=0)
scaler = StandardScaler().fit(X_train)
model = LogisticRegression().fit(scaler.transform(X_train), y_train)
print(model.score(scaler.transform(X_holdout), y_holdout))
