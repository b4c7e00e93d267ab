# expect: leak resampled_before_split resampler line 13
"""The minority class is upsampled with replacement in one branch of an if; the other branch
does nothing. Either way the data reaching the split may hold duplicated minority rows."""
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import resample

wine = pd.read_csv("wine.csv")
majority = wine[wine["label"] == 1]
minority = wine[wine["label"] == 0]
if len(minority) > 0:
    minority_up = resample(
        minority, replace=True, n_samples=len(majority), random_state=42)
    balanced = pd.concat([majority, minority_up])
else:
    balanced = majority.copy()
X, y = balanced.drop("label", axis=1), balanced["label"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42)
print(DecisionTreeClassifier().fit(X_train, y_train).score(X_test, y_test))
