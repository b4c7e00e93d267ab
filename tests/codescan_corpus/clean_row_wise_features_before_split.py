# expect: clean
"""Features computed one row or one value at a time (or within a row, or within each user's
own earlier rows) before the split learn nothing from other rows; a subsample of one country
split on its own is no resampling; a library resample of audio is not sklearn's."""
import librosa
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

df = pd.read_csv("events.csv")
df["row_mean"] = df[["a", "b"]].apply(lambda row: row.mean(), axis=1)
df["emb_mean"] = df["emb"].map(lambda v: np.mean(v))
df["a_clip"] = df["a"].apply(lambda v: min(v, 3.0))
df["rank_in_row"] = df[["a", "b"]].rank(axis=1)["a"]
df["nth_event"] = df.groupby("user")["ts"].rank(method="first")
df["wave"] = df["clip"].apply(lambda c: librosa.resample(c, orig_sr=44100, target_sr=16000))
train, test = train_test_split(df, test_size=0.2)
us = df[df.country == "US"].sample(frac=0.1, random_state=0)
us_train, us_test = train_test_split(us, test_size=0.2)
