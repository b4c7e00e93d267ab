# expect: leak fit_before_split scaler line 10
"""The scaled frame is written to a file and read back before the split: the same rows, so
the scaler fitted on all of them still leaks into the validation part."""
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

houses = pd.read_csv("houses.csv")
cols = ["LotArea", "GrLivArea"]
houses[cols] = MinMaxScaler().fit_transform(houses[cols])
houses.to_csv("houses_scaled.csv", index=False)
scaled = pd.read_csv("houses_scaled.csv")
X_tr, X_val, y_tr, y_val = train_test_split(scaled[cols], scaled["SalePrice"], test_size=0.3)
