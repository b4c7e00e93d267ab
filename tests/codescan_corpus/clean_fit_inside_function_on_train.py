# expect: clean
"""The preprocessing is fitted inside a helper that is only ever called on the train part."""
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.impute import SimpleImputer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OrdinalEncoder, StandardScaler


def fit_preprocessing(frame, numeric, categorical):
    imputer = SimpleImputer(strategy="median").fit(frame[numeric])
    scaler = StandardScaler().fit(imputer.transform(frame[numeric]))
    encoder = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    encoder.fit(frame[categorical])
    return imputer, scaler, encoder


def apply_preprocessing(frame, steps, numeric, categorical):
    imputer, scaler, encoder = steps
    out = frame.copy()
    out[numeric] = scaler.transform(imputer.transform(frame[numeric]))
    out[categorical] = encoder.transform(frame[categorical])
    return out


orders = pd.read_parquet("orders.parquet")
numeric, categorical = ["basket_value", "items"], ["country", "channel"]
train_orders, test_orders = train_test_split(orders, test_size=0.2, random_state=0)
steps = fit_preprocessing(train_orders, numeric, categorical)
X_train = apply_preprocessing(train_orders, steps, numeric, categorical)
X_test = apply_preprocessing(test_orders, steps, numeric, categorical)
model = HistGradientBoostingClassifier().fit(X_train[numeric + categorical], X_train["returned"])
print(model.score(X_test[numeric + categorical], X_test["returned"]))
