# expect: leak resampled_before_split resampler line 10
"""Oversamples the minority class before splitting: synthetic test rows copy train rows."""
import pandas as pd
from imblearn.over_sampling import SMOTE
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split

claims = pd.read_csv("claims.csv")
X, y = claims.drop(columns="fraud"), claims["fraud"]
X_res, y_res = SMOTE(random_state=0).fit_resample(X, y)
X_train, X_test, y_train, y_test = train_test_split(X_res, y_res, test_size=0.2)
forest = RandomForestClassifier(n_estimators=500).fit(X_train, y_train)
print(forest.score(X_test, y_test))
