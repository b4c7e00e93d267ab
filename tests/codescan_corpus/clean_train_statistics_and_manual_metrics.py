# expect: clean
"""Fill values and scaling come from train; the test mean appears only inside a metric."""
import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split

prices = pd.read_csv("prices.csv")
test_size = 0.25
train, test = train_test_split(prices, test_size=test_size, random_state=0)
medians = train[["sqft", "rooms"]].median()
train = train.fillna(medians)
test = test.fillna(medians)
mu, sigma = train["sqft"].mean(), train["sqft"].std()
train["sqft"] = (train["sqft"] - mu) / sigma
test["sqft"] = (test["sqft"] - mu) / sigma

reg = LinearRegression().fit(train[["sqft", "rooms"]], train["price"])
pred = reg.predict(test[["sqft", "rooms"]])
y_test = test["price"].to_numpy()
r2 = 1 - np.sum((y_test - pred) ** 2) / np.sum((y_test - y_test.mean()) ** 2)
print(f"R2 {r2:.3f}")
