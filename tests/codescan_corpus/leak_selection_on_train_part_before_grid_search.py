# expect: leak fit_before_split selector line 13
"""Features are selected with the label on the whole training part, then a grid search
cross-validates inside that part: every inner validation fold took part in choosing the
features, so the search's scores (and its choice) are optimistic."""
import pandas as pd
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.svm import SVC

df = pd.read_csv("genes.csv")
X, y = df.drop(columns="label"), df["label"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
X_train_sel = SelectKBest(f_classif, k=20).fit_transform(X_train, y_train)
search = GridSearchCV(SVC(), {"C": [0.1, 1, 10]}, cv=5).fit(X_train_sel, y_train)
print(search.best_score_)
