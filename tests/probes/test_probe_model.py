"""The probe trainer (stacked weights, several probes in one loop) equals a plain torch
training loop run once per probe."""
from __future__ import annotations

import numpy as np
import pytest

from auditor.probes.probe_model import (BINARY, MULTICLASS, NUMERIC, Settings, _loss, _mlp,
                                        _targets, fit_probe, fit_probes, seeded)

SETTINGS = Settings(hidden=16, epochs=3, batch_size=64, lr=1e-2)


def _reference_fit(X, y, task, n_out, seed):
    """One probe the textbook way: nn.Sequential, Adam, seeded shuffles; predictions on X."""
    import torch

    with seeded(torch, seed):
        model = _mlp(torch, X.shape[1], SETTINGS.hidden, n_out)
        opt = torch.optim.Adam(model.parameters(), lr=SETTINGS.lr)
        Xt, yt = torch.as_tensor(X), _targets(torch, task, y, "cpu")
        gen = torch.Generator().manual_seed(seed)
        for _ in range(SETTINGS.epochs):
            perm = torch.randperm(len(X), generator=gen)
            for i in range(0, len(X), SETTINGS.batch_size):
                idx = perm[i:i + SETTINGS.batch_size]
                loss = _loss(torch, task, model(Xt[idx]), yt[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
    return lambda Z: model(torch.as_tensor(Z)).detach().numpy()


def _data(task: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)).astype(np.float32)
    z = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n)
    if task == BINARY:
        return X, (z > 0).astype(np.float32), 1
    if task == MULTICLASS:
        return X, np.digitize(z, [-0.5, 0.5]).astype(np.int64), 3
    return X, z.astype(np.float32), 1


@pytest.mark.parametrize("task", [BINARY, MULTICLASS, NUMERIC])
def test_probes_trained_together_equal_probes_trained_one_by_one(task):
    X, y, n_out = _data(task, 300, 1)
    rng = np.random.default_rng(2)
    ys = [y, rng.permutation(y), rng.permutation(y)]
    seeds = [5, 6, 7]
    together = fit_probes(X, ys, task, n_out, SETTINGS, seeds).predict(X)
    for k in range(3):
        want = _reference_fit(X, ys[k], task, n_out, seeds[k])(X)
        np.testing.assert_allclose(together[k], want, rtol=1e-4, atol=1e-4)
    assert not np.allclose(together[0], together[1])  # really different probes
    alone, curves = fit_probe(X, ys[1], task, n_out, SETTINGS, seeds[1], {"x": (X, ys[1])})
    np.testing.assert_allclose(alone.predict(X), together[1], rtol=1e-5, atol=1e-5)
    assert len(curves.steps) == len(curves.series["x"]) > 3


def test_probes_on_different_inputs_each_see_their_own_rows():
    X, y, n_out = _data(BINARY, 400, 3)
    parts = [np.arange(0, 300), np.arange(100, 400)]
    stack = fit_probes([X[i] for i in parts], [y[i] for i in parts], BINARY, n_out, SETTINGS,
                       [9, 9])
    outs = stack.predict([X[:50], X[50:100]])
    for k, i in enumerate(parts):
        want = _reference_fit(X[i], y[i], BINARY, n_out, 9)([X[:50], X[50:100]][k])
        np.testing.assert_allclose(outs[k], want, atol=1e-4)
    with pytest.raises(ValueError, match="same number of rows"):
        fit_probes([X[:10], X[:20]], [y[:10], y[:20]], BINARY, n_out, SETTINGS, [1, 2])


def test_a_zeroed_input_column_plays_no_part_in_the_probe():
    import torch

    X, y, n_out = _data(BINARY, 300, 4)
    Z = X.copy()
    Z[:, 0] = 0.0
    stack = fit_probes([Z], [y], BINARY, n_out, SETTINGS, [3])
    with seeded(torch, 3):
        initial = _mlp(torch, 5, SETTINGS.hidden, n_out)[0].weight.detach().T
    learned = stack.params[0][0]
    assert torch.equal(learned[0], initial[0])  # the zeroed column's weights got no gradient
    assert not torch.allclose(learned[1:], initial[1:])  # the others trained


@pytest.mark.parametrize("task", [BINARY, MULTICLASS, NUMERIC])
def test_column_masks_on_a_shared_input_equal_zeroed_copies_exactly(task):
    """The ablation retrains: ``drop`` masks on one shared matrix give bit for bit the probes
    (and predictions) of a zeroed copy of the matrix per probe."""
    X, y, n_out = _data(task, 300, 5)
    drop = [np.arange(5) == 0, np.arange(5) >= 3, np.zeros(5, dtype=bool)]

    def zeroed(A, mask):
        out = A.copy()
        out[:, mask] = 0.0
        return out

    copies = fit_probes([zeroed(X, m) for m in drop], [y] * 3, task, n_out, SETTINGS, [4] * 3)
    masked = fit_probes(X, [y] * 3, task, n_out, SETTINGS, [4] * 3, drop=drop)
    E = X[::-1].copy()
    want = copies.predict([zeroed(E, m) for m in drop])
    got = masked.predict(E, drop=drop)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    assert not np.array_equal(got[0], got[2])  # the masks took effect
    with pytest.raises(ValueError, match="shared input"):
        fit_probes([X, X], [y, y], task, n_out, SETTINGS, [1, 2], drop=drop[:2])


def test_row_subsets_of_a_shared_input_equal_copies_of_the_rows_exactly():
    """The time-holdout retrains: ``rows`` on one shared matrix give bit for bit the probes
    trained on copies of those rows."""
    X, y, n_out = _data(BINARY, 400, 6)
    rng = np.random.default_rng(7)
    subsets = [np.sort(rng.choice(400, 300, replace=False)), np.arange(100, 400)]
    copies = fit_probes([X[r] for r in subsets], [y[r] for r in subsets], BINARY, n_out,
                        SETTINGS, [8, 8])
    shared = fit_probes(X, [y[r] for r in subsets], BINARY, n_out, SETTINGS, [8, 8],
                        rows=subsets)
    for w, g in zip(copies.predict(X), shared.predict(X)):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="equal lengths"):
        fit_probes(X, [y[:10], y[:20]], BINARY, n_out, SETTINGS, [1, 2],
                   rows=[np.arange(10), np.arange(20)])


def test_column_ranks_equal_scipy_average_ranks_with_ties_and_infinities():
    from scipy.stats import rankdata

    from auditor.probes.probe_model import column_ranks

    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 7))
    X[:, 1] = np.round(X[:, 1])            # many ties
    X[:, 2] = 3.0                          # one value
    X[::7, 3] = np.inf                     # an all-missing column's fill is inf
    ranks = column_ranks(X)
    np.testing.assert_array_equal(ranks, rankdata(X, axis=0))
    assert ranks.dtype == np.float64 and column_ranks(X[:, :0]).shape == (500, 0)
