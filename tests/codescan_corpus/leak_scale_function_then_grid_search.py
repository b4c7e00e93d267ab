# expect: leak fit_before_split scaler line 10
"""sklearn.preprocessing.scale is a fit: applied to all rows before a grid search's folds."""
import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import scale
from sklearn.svm import SVR

X = np.genfromtxt("sensors.csv", delimiter=",", skip_header=1)[:, :-1]
y = np.genfromtxt("sensors.csv", delimiter=",", skip_header=1)[:, -1]
X = scale(X)
search = GridSearchCV(SVR(), {"C": [0.1, 1, 10], "gamma": ["scale", 0.1]}, cv=5)
search.fit(X, y)
print(search.best_score_)
