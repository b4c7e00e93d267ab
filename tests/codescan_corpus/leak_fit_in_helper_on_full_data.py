# expect: leak fit_before_split scaler line 12
"""A helper fits the preprocessing; it is called on the full table before the split."""
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC


def standardise(frame, columns):
    out = frame.copy()
    scaler = StandardScaler()
    out[columns] = scaler.fit_transform(frame[columns])
    return out


patients = pd.read_csv("patients.csv")
numeric = ["age", "bmi", "systolic_bp"]
patients = standardise(patients, numeric)
train, test = train_test_split(patients, test_size=0.2, stratify=patients["outcome"])
svm = SVC().fit(train[numeric], train["outcome"])
print(svm.score(test[numeric], test["outcome"]))
