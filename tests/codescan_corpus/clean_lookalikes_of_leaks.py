# expect: clean
"""Code that looks like a leak and is not: audio resampled to a sample rate, a tensor split
into column halves, X and y split apart, functions run on each row or value, a subsample of one
country (not put back with the rest), ranks within a row or within each user's own rows, and
an anomaly detector scored on the rows it was fitted on (how unsupervised models are judged),
and an image's colours quantised with KMeans and plotted. A scaler is fitted on all rows
throughout, but nothing here splits the rows afterwards."""
import librosa
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import tensorflow as tf
from sklearn.cluster import KMeans
from sklearn.ensemble import IsolationForest
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler
from utils import split_X_y

df = pd.read_csv("events.csv")
df[["a", "b"]] = StandardScaler().fit_transform(df[["a", "b"]])
wave = librosa.resample(np.load("clip.npy"), orig_sr=44100, target_sr=16000)
left, right = tf.split(df[["a", "b"]].values, 2, axis=1)
X, y = split_X_y(df)
df["row_mean"] = df[["a", "b"]].apply(lambda row: row.mean(), axis=1)
df["emb_mean"] = df["emb"].map(lambda v: np.mean(v))
df["a_clip"] = df["a"].apply(lambda v: min(v, 3.0))
us = df[df.country == "US"].sample(frac=0.1, random_state=0)
df["rank_in_row"] = df[["a", "b"]].rank(axis=1)["a"]
df["nth_event"] = df.groupby("user")["ts"].rank(method="first")
iso = IsolationForest(random_state=0).fit(X)
print(roc_auc_score(y, -iso.score_samples(X)))
pixels = np.load("photo.npy").reshape(-1, 3)
palette = KMeans(n_clusters=16, random_state=0).fit(pixels)
plt.imshow(palette.cluster_centers_[palette.predict(pixels)].reshape(480, 640, 3))
