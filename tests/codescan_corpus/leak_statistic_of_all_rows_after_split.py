# expect: leak global_statistic_before_split statistic line 9
"""Computes fill values on the whole frame, then applies them to the split parts."""
import pandas as pd
from sklearn.model_selection import train_test_split

loans = pd.read_csv("loans.csv")
train_df, test_df = train_test_split(loans, test_size=0.2, random_state=0)
# fill values computed on every row, including the test rows
fill_values = loans[["income", "debt_ratio"]].median()
train_df = train_df.fillna(fill_values)
test_df = test_df.fillna(fill_values)
