# expect: clean
"""Kaggle style: scaler and imputer fitted on train.csv, applied to test.csv; the training file
is never split here, so there is nothing for the fits to leak into."""
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import StandardScaler

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
cols = ["Age", "Fare"]
imputer = SimpleImputer(strategy="median").fit(train[cols])
scaler = StandardScaler().fit(imputer.transform(train[cols]))
train_mean_age = train["Age"].mean()
train["Age_filled"] = train["Age"].fillna(train_mean_age)
X = scaler.transform(imputer.transform(train[cols]))
X_test = scaler.transform(imputer.transform(test[cols]))
model = RandomForestClassifier().fit(X, train["Survived"])
pd.DataFrame({"Survived": model.predict(X_test)}).to_csv("submission.csv", index=False)
