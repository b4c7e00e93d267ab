# expect: leak fit_before_split encoder line 12
"""Learns the category list from all rows, splits, then encodes each part with it."""
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder

df = pd.read_csv("listings.csv")
categorical = ["city", "property_type", "host_id"]
target = df.pop("booked")
encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
encoder.fit(df[categorical])
train_df, test_df, y_train, y_test = train_test_split(df, target, random_state=1)
X_train = encoder.transform(train_df[categorical])
X_test = encoder.transform(test_df[categorical])
model = GradientBoostingClassifier().fit(X_train, y_train)
print(model.score(X_test, y_test))
