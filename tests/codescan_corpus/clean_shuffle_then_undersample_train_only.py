# expect: clean
"""Rows shuffled (frac=1) before the split; the majority class of the training part only is
drawn down after the split, the test part keeps the real balance."""
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

cards = pd.read_csv("creditcard.csv").sample(frac=1, random_state=0)
train, test = train_test_split(cards, test_size=0.2, stratify=cards["Class"])
legit = train[train.Class == 0].sample(n=2000, random_state=1)
fraud = train[train.Class == 1]
train_balanced = pd.concat([legit, fraud])
model = LogisticRegression(max_iter=1000).fit(train_balanced.drop(columns="Class"),
                                              train_balanced["Class"])
print(model.score(test.drop(columns="Class"), test["Class"]))
