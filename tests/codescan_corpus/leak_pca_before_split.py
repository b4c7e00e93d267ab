# expect: leak fit_before_split decomposition line 12
"""Reduces dimensions with PCA on every row, then cross-validates by hand."""
import numpy as np
from sklearn.decomposition import PCA
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

X = np.loadtxt("expression.csv", delimiter=",")
y = np.loadtxt("labels.csv")
pca = PCA(n_components=20)
X_reduced = pca.fit_transform(X)

aucs = []
for train_idx, val_idx in StratifiedKFold(n_splits=5).split(X_reduced, y):
    model = SVC(probability=True).fit(X_reduced[train_idx], y[train_idx])
    aucs.append(roc_auc_score(y[val_idx], model.predict_proba(X_reduced[val_idx])[:, 1]))
print(np.mean(aucs))
