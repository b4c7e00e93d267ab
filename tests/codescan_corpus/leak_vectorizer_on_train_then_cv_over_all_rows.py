# expect: leak fit_before_split vectorizer line 12
"""The project's get_data() returns all rows and a train/test split of them; the vectorizer is
fitted on the training rows and then, reused, transforms every row for a 10-fold
cross-validation, whose validation folds hold rows the vocabulary was learned from."""
import data_cleaning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.feature_extraction.text import CountVectorizer

X, Y, X_train, X_test, y_train, y_test = data_cleaning.get_data()
vectorizer = CountVectorizer(lowercase=True, stop_words="english")
train_counts = vectorizer.fit_transform(X_train["sms"])
test_counts = vectorizer.transform(X_test["sms"])
print(LogisticRegression().fit(train_counts, y_train).score(test_counts, y_test))
X_all = vectorizer.transform(X["sms"])
print(cross_val_score(LogisticRegression(), X_all, Y, cv=StratifiedKFold(10)).mean())
