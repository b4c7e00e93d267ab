# expect: leak resampled_before_split resampler line 11
"""The majority class is drawn down to the minority's size before the split: the test set
gets the artificial 50/50 balance, not the 0.2% fraud rate the model will meet."""
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

cards = pd.read_csv("creditcard.csv")
legit = cards[cards.Class == 0]
legit_sample = legit.sample(n=492, random_state=1)
fraud = cards[cards.Class == 1]
balanced = pd.concat([legit_sample, fraud], axis=0)
X, y = balanced.drop(columns="Class"), balanced["Class"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y)
model = LogisticRegression(max_iter=1000).fit(X_train, y_train)
print(accuracy_score(y_test, model.predict(X_test)))
