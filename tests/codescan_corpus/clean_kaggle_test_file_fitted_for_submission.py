# expect: clean
"""Kaggle's unlabelled test.csv gets its own imputer before the submission is written: a poor
habit, but no score is computed on those rows, so nothing is leaked into a reported number.
Separately, a model is trained on one half and scored on the other, both ways (two-fold)."""
import pandas as pd
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")
cols = ["Age", "Fare"]
X_train = SimpleImputer().fit_transform(train[cols])
X_test = SimpleImputer().fit_transform(test[cols])
model = LogisticRegression().fit(X_train, train["Survived"])
pd.DataFrame({"Survived": model.predict(X_test)}).to_csv("submission.csv", index=False)
labelled = pd.read_csv("labelled.csv")
X1, X2, y1, y2 = train_test_split(labelled[cols], labelled["y"], test_size=0.5)
print(LogisticRegression().fit(X1, y1).score(X2, y2),
      LogisticRegression().fit(X2, y2).score(X1, y1))
