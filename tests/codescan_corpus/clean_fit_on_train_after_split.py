# expect: clean
"""Split first; every transformer is fitted on the training part and applied to the rest."""
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("sensors.csv")
X = df.drop(columns=["failure"]).values
y = df["failure"].values
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y)

imputer = SimpleImputer(strategy="mean").fit(X_train)
scaler = StandardScaler()
X_train = scaler.fit_transform(imputer.transform(X_train))
X_test = scaler.transform(imputer.transform(X_test))
pca = PCA(n_components=10)
X_train = pca.fit_transform(X_train)
X_test = pca.transform(X_test)

clf = LogisticRegression(max_iter=1000).fit(X_train, y_train)
print("test AUC", roc_auc_score(y_test, clf.predict_proba(X_test)[:, 1]))
