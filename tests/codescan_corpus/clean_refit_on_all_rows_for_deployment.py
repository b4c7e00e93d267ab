# expect: clean
"""Evaluate once on test, then refit the whole pipeline on every row for deployment."""
import joblib
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("machines.csv")
X, y = df.drop(columns="fault"), df["fault"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
pipe = make_pipeline(StandardScaler(), RandomForestClassifier(random_state=0))
pipe.fit(X_train, y_train)
print("held-out accuracy", pipe.score(X_test, y_test))

production = make_pipeline(StandardScaler(), RandomForestClassifier(random_state=0))
production.fit(pd.concat([X_train, X_test]), pd.concat([y_train, y_test]))
joblib.dump(production, "model.joblib")
