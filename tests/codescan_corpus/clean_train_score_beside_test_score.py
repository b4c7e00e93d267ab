# expect: clean
"""Training accuracy printed beside the held-out one (a diagnostic of overfitting), a model
fitted on all rows only to predict new files, and predictions on training rows for a plot."""
import matplotlib.pyplot as plt
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

df = pd.read_csv("churn.csv")
X, y = df.drop(columns="churned"), df["churned"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
model = RandomForestClassifier(random_state=0).fit(X_train, y_train)
print("train", accuracy_score(y_train, model.predict(X_train)))
print("test", accuracy_score(y_test, model.predict(X_test)))
final = RandomForestClassifier(random_state=0)
final.fit(X, y)
plt.scatter(y, final.predict_proba(X)[:, 1])
new = pd.read_csv("new_customers.csv")
pd.Series(final.predict(new)).to_csv("scores.csv")
