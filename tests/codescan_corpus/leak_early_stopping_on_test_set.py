# expect: leak test_reused_for_selection model line 14
"""Early-stops the booster on the test set, then reports the score on that same test set."""
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from xgboost import XGBClassifier

events = pd.read_parquet("events.parquet")
X = events.drop(columns=["converted"])
y = events["converted"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

booster = XGBClassifier(n_estimators=2000, learning_rate=0.05, early_stopping_rounds=50)
booster.fit(X_train, y_train, eval_set=[(X_test, y_test)], verbose=False)
print("test AUC", roc_auc_score(y_test, booster.predict_proba(X_test)[:, 1]))
