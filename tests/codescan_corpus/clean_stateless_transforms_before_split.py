# expect: clean
"""Row-wise (stateless) transforms before the split are fine: they learn nothing from rows."""
import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import SGDClassifier
from sklearn.preprocessing import FunctionTransformer, LabelEncoder, normalize

posts = pd.read_json("posts.jsonl", lines=True)
posts["n_words"] = posts["body"].str.split().str.len()
posts["log_views"] = np.log1p(posts["views"])
posts["score"] = posts["score"].fillna(0)
posts["label"] = LabelEncoder().fit_transform(posts["subreddit"])
text_features = HashingVectorizer(n_features=2**18).fit_transform(posts["body"])
dense = normalize(FunctionTransformer(np.sqrt).fit_transform(posts[["n_words", "log_views"]]))
cutoff = posts["created"].max() - pd.Timedelta(days=30)
train_mask = posts["created"] < cutoff
X_train, X_test = text_features[train_mask.values], text_features[~train_mask.values]
y_train, y_test = posts["label"][train_mask], posts["label"][~train_mask]
clf = SGDClassifier(loss="log_loss").fit(X_train, y_train)
print(clf.score(X_test, y_test))
