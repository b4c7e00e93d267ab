# expect: leak fit_before_split scaler line 9
# expect: leak global_statistic_before_split statistic line 10
"""Percentile ranks over every row, and a hand-written target encoder (each city's mean price
over every row, mapped back), both before the split."""
import pandas as pd
from sklearn.model_selection import train_test_split

homes = pd.read_csv("homes.csv")
homes["income_rank"] = homes["income"].rank(pct=True)
city_means = homes.groupby("city")["price"].mean()
homes["city_enc"] = homes["city"].map(city_means)
X_train, X_test = train_test_split(homes, test_size=0.2)
