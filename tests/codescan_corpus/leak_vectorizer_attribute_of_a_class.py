# expect: leak fit_before_split vectorizer line 18
"""A class keeps its vectorizer on self (set in __init__); train() fits it on every email and
then cross-validates on the vectorised rows, so each validation fold's words shaped the
vocabulary the model was scored with."""
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score


class SpamModel:
    def __init__(self):
        self.vectorizer = TfidfVectorizer(max_features=5000)
        self.model = LogisticRegression(max_iter=1000)

    def train(self, texts, labels):
        y = np.array(labels)
        X = self.vectorizer.fit_transform(texts)
        scores = cross_val_score(self.model, X, y, cv=5, scoring="f1")
        return scores.mean()
