# expect: leak test_reused_for_selection model line 18
"""Tunes C on the test set, then reports the test accuracy of the chosen model."""
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("credit.csv")
X, y = df.drop(columns="default"), df["default"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=7)

best_acc, best_model = 0.0, None
for C in [0.01, 0.1, 1.0, 10.0, 100.0]:
    model = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=1000))
    model.fit(X_train, y_train)
    acc = accuracy_score(y_test, model.predict(X_test))
    if acc > best_acc:
        best_acc, best_model = acc, model

final = accuracy_score(y_test, best_model.predict(X_test))
print(f"test accuracy of the selected model: {final:.3f}")
