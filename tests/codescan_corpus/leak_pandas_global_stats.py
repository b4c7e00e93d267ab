# expect: leak global_statistic_before_split statistic line 9
# expect: leak global_statistic_before_split statistic line 10
# expect: leak global_statistic_before_split statistic line 12
import pandas as pd
from sklearn.ensemble import RandomForestRegressor
from sklearn.model_selection import train_test_split

houses = pd.read_csv("houses.csv")
houses["lot_area"] = houses["lot_area"].fillna(houses["lot_area"].median())
houses["year_built"].fillna(houses["year_built"].mean(), inplace=True)
for col in ["living_area", "garage_area"]:
    houses[col] = (houses[col] - houses[col].mean()) / houses[col].std()
train, test = train_test_split(houses, test_size=0.25, random_state=3)
model = RandomForestRegressor().fit(train.drop(columns="price"), train["price"])
print(model.score(test.drop(columns="price"), test["price"]))
