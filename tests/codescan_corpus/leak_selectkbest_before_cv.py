# expect: leak fit_before_split selector line 11
"""Selects the 10 best features on all rows, then cross-validates: optimistic by design."""
from sklearn.datasets import make_classification
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score

X, y = make_classification(n_samples=200, n_features=5000, n_informative=5, random_state=0)
selector = SelectKBest(f_classif, k=10)
# the selector sees the labels of every row, including each fold's validation rows
X_selected = selector.fit_transform(X, y)
scores = cross_val_score(LogisticRegression(max_iter=1000), X_selected, y, cv=5)
print(f"accuracy {scores.mean():.3f}")
