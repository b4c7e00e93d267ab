# expect: leak fit_before_split vectorizer line 10
"""Builds the tf-idf vocabulary and idf weights from every review, then splits by date."""
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

reviews = pd.read_parquet("reviews.parquet").sort_values("posted_at")
cutoff = int(len(reviews) * 0.8)
vectorizer = TfidfVectorizer(min_df=2, ngram_range=(1, 2))
features = vectorizer.fit_transform(reviews["text"])
train_features, test_features = features[:cutoff], features[cutoff:]
train_labels, test_labels = reviews["stars"][:cutoff], reviews["stars"][cutoff:]
clf = LogisticRegression(max_iter=1000).fit(train_features, train_labels)
print(clf.score(test_features, test_labels))
