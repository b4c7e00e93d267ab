# expect: clean
"""Models are compared by cross-validation on train; only the winner is scored on test."""
import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_absolute_error
from sklearn.model_selection import cross_val_score, train_test_split

df = pd.read_csv("energy.csv")
X_train, X_test, y_train, y_test = train_test_split(
    df.drop(columns="load"), df["load"], test_size=0.2, random_state=0)
candidates = {"ridge": Ridge(), "forest": RandomForestRegressor(),
              "gbm": GradientBoostingRegressor()}
cv_scores = {}
for name, model in candidates.items():
    cv_scores[name] = np.mean(cross_val_score(model, X_train, y_train, cv=5,
                                              scoring="neg_mean_absolute_error"))
winner = max(cv_scores, key=cv_scores.get)
best = candidates[winner].fit(X_train, y_train)
print(winner, mean_absolute_error(y_test, best.predict(X_test)))
