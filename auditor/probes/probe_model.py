"""The tiny torch probe behind ``separability.label_probe``, and the scores it is judged by.

torch is an optional extra (``pip install 'auditor[probes]'``) and is imported inside the
functions that need it; the scores (:func:`rank_auc`, :func:`macro_auc`, :func:`r2`,
:func:`column_strengths`) are numpy only.

The probe is an MLP ``d -> hidden -> hidden -> outputs`` with ReLU, trained with Adam on
mini-batches drawn by a seeded permutation: one at a time (:func:`fit_probe`, with loss curves)
or several independent ones in one loop with stacked weights (:func:`fit_probes`, for the
permutation, holdout and ablation retrains). A fit draws its initial weights inside
``torch.random.fork_rng`` with ``torch.manual_seed(seed)`` (under a lock); its mini-batch order
comes from its own seeded generator, and it trains on one CPU thread per calling thread
(deterministic algorithms switched on too on a GPU; all restored afterwards), so the caller's
global torch state is untouched and two runs give identical numbers on the same machine, also
when two probes train on two threads at once. CPU by default; CUDA when
``torch.cuda.is_available()`` and ``device="auto"``.
"""
from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from auditor.errors import NotApplicable

BINARY, MULTICLASS, NUMERIC = "binary", "multiclass", "numeric"
METRIC = {BINARY: "auc", MULTICLASS: "macro_auc", NUMERIC: "r2"}
METRIC_TEXT = {BINARY: "AUC", MULTICLASS: "macro one-vs-rest AUC", NUMERIC: "R²"}


def import_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise NotApplicable("torch is not installed: pip install 'auditor[probes]'") from None
    return torch


def resolve_device(device: str) -> str:
    torch = import_torch()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


# ---------------------------------------------------------------------------------------------
# Scores
# ---------------------------------------------------------------------------------------------

def rank_auc(scores: np.ndarray, y01: np.ndarray) -> float:
    """ROC AUC by the Mann–Whitney rank formula with average ranks for ties:
    (sum of positive ranks - n1 (n1 + 1) / 2) / (n1 n0). NaN when a class is absent."""
    from scipy.stats import rankdata

    y01 = np.asarray(y01).astype(bool)
    n1 = int(y01.sum())
    n0 = y01.size - n1
    if n1 == 0 or n0 == 0:
        return float("nan")
    ranks = rankdata(np.asarray(scores, dtype=np.float64))
    return float((ranks[y01].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def column_ranks(X: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties averaged: scipy's ``rankdata(X, axis=0)``) of every
    column of a float matrix without NaN, by polars' multi-threaded rank: half the CPU time
    of scipy's on 10,000 x 1,500 and the same numbers."""
    import polars as pl

    if X.shape[1] == 0:
        return np.zeros(X.shape)
    return pl.DataFrame(X).select(pl.all().rank("average")).to_numpy().astype(np.float64)


def column_aucs(X: np.ndarray, y01: np.ndarray) -> np.ndarray:
    """:func:`rank_auc` of every column of ``X`` at once (missing values rank lowest)."""
    X = np.asarray(X, dtype=np.float64)
    y01 = np.asarray(y01).astype(bool)
    n1 = int(y01.sum())
    n0 = y01.size - n1
    if n1 == 0 or n0 == 0 or X.shape[1] == 0:
        return np.full(X.shape[1], np.nan)
    low = np.where(np.isnan(X).all(0), 0.0, np.nanmin(np.where(np.isnan(X), np.inf, X), 0))
    filled = np.where(np.isnan(X), low[None, :] - 1.0, X)
    ranks = column_ranks(filled)
    return (ranks[y01].sum(0) - n1 * (n1 + 1) / 2) / (n1 * n0)


def macro_auc(probs: np.ndarray, y: np.ndarray) -> float:
    """Unweighted mean over classes of the one-vs-rest AUC of that class's probability, over
    the classes present in ``y`` with at least one negative (sklearn's ``roc_auc_score(...,
    multi_class="ovr", average="macro")`` when every class is present)."""
    aucs = [rank_auc(probs[:, k], y == k) for k in range(probs.shape[1])]
    aucs = [a for a in aucs if not math.isnan(a)]
    return float(np.mean(aucs)) if aucs else float("nan")


def r2(pred: np.ndarray, y: np.ndarray) -> float:
    """Coefficient of determination 1 - sum (y - pred)^2 / sum (y - mean y)^2."""
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:  # a split without labelled rows
        return float("nan")
    sst = float(((y - y.mean()) ** 2).sum())
    if sst == 0:
        return float("nan")
    return float(1 - ((y - np.asarray(pred, dtype=np.float64)) ** 2).sum() / sst)


def score(task: str, out: np.ndarray, y: np.ndarray) -> float:
    """The probe's score of raw outputs ``out`` against targets ``y`` (see :data:`METRIC`)."""
    if task == BINARY:
        return rank_auc(out[:, 0], y)
    if task == MULTICLASS:
        return macro_auc(softmax(out), y)
    return r2(out[:, 0], y)


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def null_auc_sd(y01: np.ndarray) -> float:
    """Standard deviation of the AUC of a score independent of the label (Mann–Whitney null):
    sqrt((n0 + n1 + 1) / (12 n0 n1))."""
    y01 = np.asarray(y01).astype(bool)
    n1 = int(y01.sum())
    n0 = y01.size - n1
    return math.sqrt((n0 + n1 + 1) / (12 * n0 * n1)) if n0 and n1 else float("nan")


def column_strengths(task: str, num: np.ndarray, codes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """How well each column alone orders the label, in [0.5, 1] for classes (AUC folded as
    max(AUC, 1 - AUC); multiclass: its mean over one-vs-rest classes) and |Spearman rho| for a
    numeric label. Categorical columns are scored through their per-level label mean (in-sample
    target encoding over the capped vocabulary)."""
    targets = ([y == k for k in np.unique(y)] if task == MULTICLASS
               else [y.astype(np.float64)])
    out = np.zeros(num.shape[1] + codes.shape[1])
    for t in targets:
        cols = [num]
        if codes.shape[1]:
            enc = np.empty(codes.shape, dtype=np.float64)
            for j in range(codes.shape[1]):  # a loop over columns, vectorised over rows
                sums = np.bincount(codes[:, j], weights=t.astype(np.float64))
                counts = np.bincount(codes[:, j])
                enc[:, j] = (sums / np.maximum(counts, 1))[codes[:, j]]
            cols.append(enc)
        X = np.hstack(cols)
        if task == NUMERIC:
            from scipy.stats import rankdata

            filled = np.where(np.isnan(X), np.nanmin(np.where(np.isnan(X), np.inf, X), 0) - 1, X)
            rx = column_ranks(filled)
            ry = rankdata(t)
            rx -= rx.mean(0)
            ry -= ry.mean()
            denom = np.sqrt((rx ** 2).sum(0) * (ry ** 2).sum())
            out += np.abs(np.divide((rx * ry[:, None]).sum(0), denom, out=np.zeros(X.shape[1]),
                                    where=denom > 0))
        else:
            auc = column_aucs(X, t)
            out += np.maximum(auc, 1 - auc)
    return out / len(targets)


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Settings:
    hidden: int = 64
    epochs: int = 8
    batch_size: int = 256
    lr: float = 1e-3
    device: str = "cpu"


@dataclass
class Curves:
    """Loss at evenly spaced steps: the mean training loss since the previous point and the
    loss on a fixed subsample of each evaluation set."""

    steps: list[int] = field(default_factory=list)
    series: dict[str, list[float]] = field(default_factory=dict)


_RNG_LOCK = threading.RLock()   # the global CPU RNG: one seeded initialisation at a time
_THREADS_LOCK = threading.Lock()
_THREADS: dict[str, int] = {"inside": 0, "saved": 0}


@contextmanager
def seeded(torch: Any, seed: int, device: str = "cpu") -> Iterator[None]:
    """Fork the CPU RNG, seed it and use one CPU thread (see :func:`training`); restore all
    on exit. Probes draw only their initial weights from the global RNG (their shuffles come
    from their own generators), so :func:`fit_probe` and :func:`fit_probes` seed just the
    initialisation, holding a lock: probes may then train on several Python threads at once
    with the same numbers as one after the other."""
    with _RNG_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        with training(torch, device):
            yield


@contextmanager
def training(torch: Any, device: str = "cpu") -> Iterator[None]:
    """Use one CPU thread per calling thread (the probe's matrices are small: more threads
    only wait for each other; on two cores two probes train at once, each on its own thread,
    see ``run_label_probe``); on a GPU also switch deterministic algorithms on. The thread
    count is restored when the last of the threads inside leaves. The probe's CPU kernels
    (linear layers, ReLU, indexing, the losses, Adam) are deterministic on one thread
    already, and the switch costs 1.7 s the first time (it imports torch._inductor), so the
    CPU path leaves it alone."""
    prev = torch.are_deterministic_algorithms_enabled()
    gpu = not str(device).startswith("cpu")
    with _THREADS_LOCK:
        if _THREADS["inside"] == 0:
            _THREADS["saved"] = torch.get_num_threads()
        _THREADS["inside"] += 1
    if gpu:
        torch.use_deterministic_algorithms(True, warn_only=True)
    torch.set_num_threads(1)
    try:
        yield
    finally:
        if gpu:
            torch.use_deterministic_algorithms(prev)
        with _THREADS_LOCK:
            _THREADS["inside"] -= 1
            if _THREADS["inside"] == 0:
                torch.set_num_threads(_THREADS["saved"])


def adam(torch: Any, params: Any, lr: float) -> Any:
    """Adam with its fused kernel (one pass over each parameter tensor per step: measured
    10x faster than the default per-tensor loop on the stacked first-layer weights of a wide
    table, 12 ms -> 1.3 ms a step for 5 probes x 7,300 inputs), or the default where the
    installed torch has no fused kernel for the device."""
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(params, lr=lr)


def _mlp(torch: Any, d: int, hidden: int, n_out: int) -> Any:
    nn = torch.nn
    return nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, n_out))


def _targets(torch: Any, task: str, y: np.ndarray, device: str) -> Any:
    if task == MULTICLASS:
        return torch.as_tensor(y, dtype=torch.long, device=device)
    return torch.as_tensor(y, dtype=torch.float32, device=device)


def _loss(torch: Any, task: str, out: Any, t: Any) -> Any:
    F = torch.nn.functional
    if task == BINARY:
        return F.binary_cross_entropy_with_logits(out[:, 0], t)
    if task == MULTICLASS:
        return F.cross_entropy(out, t)
    return F.mse_loss(out[:, 0], t)


class Probe:
    """A fitted probe: ``predict(X)`` gives raw outputs (logits, or the standardised value)."""

    def __init__(self, model: Any, device: str) -> None:
        self.model = model
        self.device = device

    def predict(self, X: np.ndarray, batch: int = 65_536) -> np.ndarray:
        torch = import_torch()
        self.model.eval()
        outs = []
        with torch.no_grad():
            for i in range(0, max(len(X), 1), batch):
                xb = torch.as_tensor(X[i:i + batch], device=self.device)
                outs.append(self.model(xb).float().cpu().numpy())
        return np.concatenate(outs) if outs else np.zeros((0, 1), np.float32)


def fit_probe(X: np.ndarray, y: np.ndarray, task: str, n_out: int, settings: Settings,
              seed: int, curves_on: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
              points: int = 60) -> tuple[Probe, Curves]:
    """Train the MLP for ``settings.epochs`` epochs; record loss curves when ``curves_on``
    ({name: (X, y)} evaluation subsamples) is given, at most ``points`` points.

    The same training as :func:`fit_probes` gives each of its probes, kept as its own loop
    over an ``nn.Sequential``: for one probe, plain matrix products are ~1 s faster per label
    probe than the stacked ``baddbmm`` path (measured at 100k rows)."""
    torch = import_torch()
    dev = settings.device
    curves = Curves()
    with seeded(torch, seed, dev):
        model = _mlp(torch, X.shape[1], settings.hidden, n_out).to(dev)
    with training(torch, dev):
        opt = adam(torch, model.parameters(), settings.lr)
        Xt = torch.as_tensor(X, device=dev)
        yt = _targets(torch, task, y, dev)
        evals = {k: (torch.as_tensor(a, device=dev), _targets(torch, task, b, dev))
                 for k, (a, b) in (curves_on or {}).items()}
        n, bs = len(X), settings.batch_size
        total = settings.epochs * math.ceil(n / bs)
        every = max(1, math.ceil(total / points))
        gen = torch.Generator().manual_seed(seed)
        step, run_sum, run_n = 0, 0.0, 0
        for _ in range(settings.epochs):
            perm = torch.randperm(n, generator=gen).to(dev)
            model.train()
            for i in range(0, n, bs):
                idx = perm[i:i + bs]
                loss = _loss(torch, task, model(Xt[idx]), yt[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                step += 1
                if curves_on is not None:
                    run_sum += float(loss.detach())
                    run_n += 1
                    if step % every == 0 or step == total:
                        _record(torch, model, task, curves, step, run_sum / run_n, evals)
                        run_sum, run_n = 0.0, 0
    return Probe(model, dev), curves


class ProbeStack:
    """Probes trained together by :func:`fit_probes`: ``predict(Xs)`` gives each probe's raw
    outputs on its own input matrix (one array, or one per probe)."""

    def __init__(self, params: list[Any], device: str) -> None:
        self.params = params
        self.device = device

    def __len__(self) -> int:
        return int(self.params[0].shape[0])

    def predict(self, Xs: np.ndarray | list[np.ndarray], batch: int = 65_536,
                drop: list[np.ndarray] | None = None) -> list[np.ndarray]:
        """``drop``: per probe, boolean masks of the columns of the one shared ``Xs`` that
        probe sees as zero (as :func:`fit_probes`), without a copy of ``Xs`` per probe."""
        torch = import_torch()
        m = len(self)
        shared = not isinstance(Xs, list)
        keep = _keep_mask(torch, drop, shared, self.device)
        n = len(Xs) if shared else len(Xs[0])
        outs: list[list[np.ndarray]] = [[] for _ in range(m)]
        with torch.no_grad():
            for i in range(0, max(n, 1), batch):
                if shared:
                    xb = torch.as_tensor(Xs[i:i + batch], device=self.device).expand(m, -1, -1)
                    if keep is not None:
                        xb = torch.where(keep, xb, 0.0)
                else:
                    xb = torch.stack([torch.as_tensor(X[i:i + batch], device=self.device)
                                      for X in Xs])
                out = _stack_forward(torch, self.params, xb).float().cpu().numpy()
                for k in range(m):
                    outs[k].append(out[k])
        return [np.concatenate(o) if o else np.zeros((0, 1), np.float32) for o in outs]


def _stack_forward(torch: Any, params: list[Any], xb: Any) -> Any:
    """The MLP of :func:`_mlp` for M probes at once: xb (M, rows, d) -> (M, rows, outputs)."""
    w1, b1, w2, b2, w3, b3 = params
    h = torch.relu(torch.baddbmm(b1, xb, w1))
    h = torch.relu(torch.baddbmm(b2, h, w2))
    return torch.baddbmm(b3, h, w3)


def _keep_mask(torch: Any, drop: list[np.ndarray] | None, shared: bool, device: str) -> Any:
    """(M, 1, d) boolean tensor of the columns each probe keeps, or None without ``drop``."""
    if drop is None:
        return None
    if not shared:
        raise ValueError("column masks (drop) need one shared input matrix")
    return torch.as_tensor(~np.stack(drop), device=device)[:, None, :]


def fit_probes(Xs: np.ndarray | list[np.ndarray], ys: list[np.ndarray], task: str, n_out: int,
               settings: Settings, seeds: list[int],
               drop: list[np.ndarray] | None = None,
               rows: list[np.ndarray] | None = None) -> ProbeStack:
    """Train ``len(ys)`` independent probes in one loop: probe k on ``Xs[k]`` (or the one
    shared ``Xs``) and ``ys[k]``, initialised and shuffled as :func:`fit_probe` with
    ``seeds[k]`` does, so each equals ``fit_probe(Xs[k], ys[k], ..., seeds[k])`` up to the
    order of floating-point sums. Their weights are stacked and multiplied as batches
    (``torch.baddbmm``); the loss is the sum of the probes' mean losses, whose gradient for
    each probe's weights is that probe's own, and Adam is element-wise: M probes cost about
    one probe's Python overhead instead of M. All inputs must have the same number of rows.
    ``drop`` (with one shared ``Xs``): per probe, a boolean mask of the columns it sees as zero,
    applied to each mini-batch: the same numbers as a zeroed copy of ``Xs`` per probe, without
    the copies (an ablation retrain per feature on a wide table held M copies of the input).
    ``rows`` (with one shared ``Xs``): per probe, the row positions of ``Xs`` it trains on (all
    of the same length; ``ys[k]`` are those rows' targets): the same as ``Xs[rows[k]]``
    passed as a list, without the copies."""
    torch = import_torch()
    dev = settings.device
    shared = not isinstance(Xs, list)
    keep = _keep_mask(torch, drop, shared, dev)
    if rows is not None and (not shared or len({len(r) for r in rows}) > 1):
        raise ValueError("row subsets (rows) need one shared input matrix and equal lengths")
    n = (len(rows[0]) if rows is not None else len(Xs)) if shared else len(Xs[0])
    if not shared and any(len(X) != n for X in Xs):
        raise ValueError("fit_probes needs inputs with the same number of rows")
    d = Xs.shape[1] if shared else Xs[0].shape[1]
    layers: list[list[Any]] = [[] for _ in range(6)]
    for seed in seeds:  # each probe's initial weights exactly as fit_probe draws them
        with seeded(torch, seed, dev):
            mlp = _mlp(torch, d, settings.hidden, n_out)
        for i, lin in enumerate(mlp[j] for j in (0, 2, 4)):
            layers[2 * i].append(lin.weight.detach().T)
            layers[2 * i + 1].append(lin.bias.detach()[None, :])
    m = len(seeds)
    with training(torch, dev):
        params = [torch.stack(ws).to(dev).requires_grad_(True) for ws in layers]
        opt = adam(torch, params, settings.lr)
        X = (torch.as_tensor(Xs, device=dev) if shared
             else torch.stack([torch.as_tensor(x, device=dev) for x in Xs]))
        yt = torch.stack([_targets(torch, task, y, dev) for y in ys])
        gens = [torch.Generator().manual_seed(seed) for seed in seeds]
        rows_m = torch.arange(m, device=dev)[:, None]
        subset = (None if rows is None else
                  torch.stack([torch.as_tensor(np.asarray(r, dtype=np.int64)) for r in rows])
                  .to(dev))
        bs = settings.batch_size
        for _ in range(settings.epochs):
            perms = torch.stack([torch.randperm(n, generator=g) for g in gens]).to(dev)
            for i in range(0, n, bs):
                idx = perms[:, i:i + bs]
                xb = (X[idx] if subset is None else X[subset.gather(1, idx)]) if shared \
                    else X[rows_m, idx]
                if keep is not None:
                    xb = torch.where(keep, xb, 0.0)
                out = _stack_forward(torch, params, xb)
                loss = _stack_loss(torch, task, out, yt[rows_m, idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
    return ProbeStack([p.detach() for p in params], dev)


def _stack_loss(torch: Any, task: str, out: Any, t: Any) -> Any:
    """Sum over probes of each probe's mean loss (as :func:`_loss`): out (M, rows, outputs)."""
    F = torch.nn.functional
    if task == BINARY:
        per = F.binary_cross_entropy_with_logits(out[..., 0], t, reduction="none")
    elif task == MULTICLASS:
        per = F.cross_entropy(out.flatten(0, 1), t.flatten(), reduction="none").view(t.shape)
    else:
        per = F.mse_loss(out[..., 0], t, reduction="none")
    return per.mean(1).sum()


def _record(torch: Any, model: Any, task: str, curves: Curves, step: int, train_loss: float,
            evals: dict[str, tuple[Any, Any]]) -> None:
    curves.steps.append(step)
    curves.series.setdefault("train (running mean)", []).append(round(train_loss, 5))
    model.eval()
    with torch.no_grad():
        for name, (xe, ye) in evals.items():
            curves.series.setdefault(name, []).append(
                round(float(_loss(torch, task, model(xe), ye)), 5))
    model.train()


def overfit_batch(X: np.ndarray, y: np.ndarray, task: str, n_out: int, settings: Settings,
                  seed: int, steps: int, target: float, lr: float = 1e-2,
                  check_every: int = 10) -> tuple[float, int]:
    """Full-batch Adam on a few rows until the training accuracy (R² for a numeric label)
    reaches ``target`` or ``steps`` run out; returns (best score, steps used)."""
    torch = import_torch()
    dev = settings.device
    best = float("-inf")
    with seeded(torch, seed, dev):
        model = _mlp(torch, X.shape[1], settings.hidden, n_out).to(dev)
    with training(torch, dev):
        opt = adam(torch, model.parameters(), lr)
        Xt = torch.as_tensor(X, device=dev)
        yt = _targets(torch, task, y, dev)
        for step in range(1, steps + 1):
            out = model(Xt)
            loss = _loss(torch, task, out, yt)
            if not torch.isfinite(loss):
                return float("nan"), step
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if step % check_every == 0 or step == steps:
                with torch.no_grad():
                    o = model(Xt).float().cpu().numpy()
                best = max(best, batch_fit(task, o, y))
                if best >= target:
                    return best, step
    return best, steps


def batch_fit(task: str, out: np.ndarray, y: np.ndarray) -> float:
    """Training accuracy of raw outputs (R² for a numeric label)."""
    if task == BINARY:
        return float(((out[:, 0] > 0) == (y > 0.5)).mean())
    if task == MULTICLASS:
        return float((out.argmax(1) == y).mean())
    return r2(out[:, 0], y)
