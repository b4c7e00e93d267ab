# expect: leak evaluated_on_training_rows model line 14
# expect: leak evaluated_on_training_rows model line 15
"""The model is scored on the very rows it was fitted on, and that score is the result."""
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score

df = pd.read_csv("churn.csv")
X = df.drop(columns="churned")
y = df["churned"]
model = LogisticRegression(max_iter=1000)
model.fit(X, y)
predictions = model.predict(X)
print("accuracy", accuracy_score(y, predictions))
print("R^2-style score", model.score(X, y))
