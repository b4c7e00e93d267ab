# expect: clean
"""Hyperparameters are chosen on a validation split; the test set is scored once at the end."""
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split

df = pd.read_csv("tickets.csv")
X, y = df.drop(columns="escalated"), df["escalated"]
X_temp, X_test, y_temp, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
X_train, X_val, y_train, y_val = train_test_split(X_temp, y_temp, test_size=0.25, random_state=0)

best_score, best_depth = -1.0, None
for depth in [4, 8, 16, None]:
    forest = RandomForestClassifier(max_depth=depth, random_state=0).fit(X_train, y_train)
    score = f1_score(y_val, forest.predict(X_val))
    if score > best_score:
        best_score, best_depth = score, depth

final = RandomForestClassifier(max_depth=best_depth, random_state=0)
final.fit(pd.concat([X_train, X_val]), pd.concat([y_train, y_val]))
print("test F1", f1_score(y_test, final.predict(X_test)))
