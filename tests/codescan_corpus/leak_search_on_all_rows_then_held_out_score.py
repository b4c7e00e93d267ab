# expect: leak evaluated_on_training_rows model line 17
"""The search is fitted on every row (its refit includes the test rows) and then scored on the
test part of the same rows."""
import pandas as pd
from sklearn.linear_model import Lasso
from sklearn.metrics import mean_absolute_error
from sklearn.model_selection import GridSearchCV, train_test_split

df = pd.read_csv("air_quality.csv")
X = df.drop(columns="aqi")
y = df["aqi"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=1)
search = GridSearchCV(Lasso(), {"alpha": [0.01, 0.1, 1.0]}, cv=5)
search.fit(X, y)
held_out = search.predict(X_test)
print(search.best_params_)
print("MAE", mean_absolute_error(y_test, held_out))
