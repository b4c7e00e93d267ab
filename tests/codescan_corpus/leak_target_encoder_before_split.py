# expect: leak fit_before_split target_encoder line 13
"""Target-encodes high-cardinality columns with every row's label before splitting."""
import category_encoders as ce
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

frame = pd.read_parquet("transactions.parquet")
y = frame["is_fraud"]
X = frame.drop(columns=["is_fraud"])

encoder = ce.TargetEncoder(cols=["merchant_id", "card_bin"], smoothing=10)
X = encoder.fit_transform(X, y)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, test_size=0.25)
clf = LogisticRegression(max_iter=500).fit(X_train, y_train)
print(clf.score(X_test, y_test))
