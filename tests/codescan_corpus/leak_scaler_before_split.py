# expect: leak fit_before_split scaler line 12
"""Scales the whole table, then splits: the scaler saw the test rows."""
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("churn.csv")
X = df.drop(columns=["churned"])
y = df["churned"]
scaler = StandardScaler()
X = scaler.fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
model = LogisticRegression().fit(X_train, y_train)
print(model.score(X_test, y_test))
