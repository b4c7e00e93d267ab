# expect: leak fit_on_test scaler line 16
"""Fits the scaler on train, then re-fits it on the test set (a classic slip)."""
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import MinMaxScaler

data = pd.read_csv("wine.csv")
X = data.drop(columns="quality")
y = data["quality"] >= 7
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=42)

scaler = MinMaxScaler()
X_train = scaler.fit_transform(X_train)
knn = KNeighborsClassifier(n_neighbors=7).fit(X_train, y_train)
X_test = scaler.fit_transform(X_test)
print(knn.score(X_test, y_test))
