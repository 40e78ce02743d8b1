r"""Samplers of the robust loop: which points each hypothesis is fitted to, and when to stop.

A sampler has one interface (:class:`Sampler`): ``draw(rng, batch)`` returns ``batch`` samples
of point indices, ``needed(inliers, chance)`` the number of samples after which the best
support so far is found with the required confidence. :class:`UniformSampler` is RANSAC's
(Fischler and Bolles 1981), :class:`ProsacSampler` the progressive sampling on a quality order
(PROSAC, Chum and Matas, CVPR 2005).
"""

from __future__ import annotations

import bisect
import functools
from typing import Protocol

import numpy as np

from .. import _jit
from .._checks import check_index_array, check_positive_int, check_probability, check_real

__all__ = [
    "ProsacSampler",
    "Sampler",
    "UniformSampler",
    "disjoint_samples",
    "log_binom",
    "log_binom_table",
    "required_iterations",
    "sample_indices",
]


class Sampler(Protocol):
    """What the loop needs from a sampler."""

    #: True for PROSAC: its termination needs the chance inlier ratio of each new best model,
    #: its batches start small and near-best models of a batch are also optimised.
    progressive: bool

    def first_batch(self, batch_size: int) -> int:
        """Size of the first batch of samples (later batches double up to ``batch_size``)."""

    def draw(self, rng: np.random.Generator, batch: int) -> np.ndarray:
        """``batch`` samples ``(batch, s)`` of distinct point indices."""

    def needed(self, inliers: np.ndarray, chance: float | None) -> float:
        """Samples needed for the support ``inliers`` ``(n,)`` bool; ``chance`` is the
        probability that a point fits by chance (only a progressive sampler uses it)."""


def _check_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _check_sample_args(n, s, batch) -> tuple[int, int, int]:
    n = check_positive_int("n", n)
    s = check_positive_int("s", s)
    batch = check_positive_int("batch", batch, minimum=0)
    if s > n:
        raise ValueError(f"s must be at most n = {n} (distinct indices), got {s}")
    return n, s, batch


def sample_indices(rng: np.random.Generator, n: int, s: int, batch: int) -> np.ndarray:
    """``batch`` samples of ``s`` distinct indices out of ``n``, vectorised: ``(batch, s)``.

    Examples
    --------
    >>> S = sample_indices(np.random.default_rng(0), 10, 3, 4)
    >>> S.shape, all(len(set(row)) == 3 for row in S)
    ((4, 3), True)
    """
    rng = _check_generator(rng)
    n, s, batch = _check_sample_args(n, s, batch)
    return _sample_pools(rng, np.full(batch, n), s)


def _sample_pools(rng: np.random.Generator, pools: np.ndarray, s: int) -> np.ndarray:
    """One sample of ``s`` distinct indices out of ``range(p)`` for each pool size ``p``.

    Small pools (or samples large enough for repeats to be likely: the birthday bound
    ``s^2 > p``) take the ``s`` smallest of random keys; large pools draw indices directly and
    redraw the rare rows with a repeat.
    """
    if _small_pool(int(pools.max(initial=s)), s):  # all of them (smaller pools are small)
        return _keyed_samples(rng, pools, s)
    small = _small_pool(pools, s)
    out = np.empty((len(pools), s), np.intp)
    if np.any(small):
        out[small] = _keyed_samples(rng, pools[small], s)
    rows = np.flatnonzero(~small)
    while len(rows):
        idx = (rng.random((len(rows), s)) * pools[rows, None]).astype(np.intp)
        srt = np.sort(idx, axis=1)
        ok = np.all(srt[:, 1:] != srt[:, :-1], axis=1)
        out[rows[ok]] = idx[ok]
        rows = rows[~ok]
    return out


def _small_pool(pools, s):
    """Whether :func:`_sample_pools` draws from pools of these sizes by random keys."""
    return (pools <= 512) | (pools <= 4 * s) | (s * s > pools)


def _keyed_samples(rng, pools, s):
    """:func:`_sample_pools` by random keys: the ``s`` least of ``max(pools)`` keys per row,
    those beyond a row's pool set above all others (only the rows shorter than the longest
    pool need it: in a batch of PROSAC's, at most one)."""
    top = int(pools.max(initial=s))  # pools hold at least s points
    keys = rng.random((len(pools), top))
    short = np.flatnonzero(pools < top)
    if len(short):
        keys[short] = np.where(np.arange(top) >= pools[short, None], 2.0, keys[short])
    return np.argpartition(keys, s - 1, axis=1)[:, :s]


def disjoint_samples(rng: np.random.Generator, n: int, s: int, batch: int) -> np.ndarray:
    """``batch`` samples ``(batch, s)`` of ``s`` distinct indices out of ``n`` (``s <= n``):
    consecutive chunks of random permutations, so the samples cut from one permutation are
    disjoint.

    Each sample is uniform; for local optimisation's large inner samples (``s^2 > n``, where
    rejection would mostly redraw) one permutation serves ``n // s`` of them.

    Examples
    --------
    >>> S = disjoint_samples(np.random.default_rng(0), 10, 5, 2)
    >>> sorted(S.ravel().tolist()) == list(range(10))
    True
    """
    rng = _check_generator(rng)
    n = check_positive_int("n", n)
    s = check_positive_int("s", s)
    batch = check_positive_int("batch", batch)
    if s > n:
        raise ValueError(f"s must be at most n = {n}, got {s}")
    per = n // s
    perms = rng.permuted(np.tile(np.arange(n), (-(-batch // per), 1)), axis=1)
    return perms[:, :per * s].reshape(-1, s)[:batch]


def log_binom_table(n_max: int, k: int) -> np.ndarray:
    """``log C(n, k)`` for ``n = k .. n_max`` (``(n_max - k + 1,)``), from the recurrence
    ``C(n, k) = C(n - 1, k) n / (n - k)`` as one cumulative sum of logarithms.

    Examples
    --------
    >>> np.round(np.exp(log_binom_table(6, 2)), 9)
    array([ 1.,  3.,  6., 10., 15.])
    """
    n_max = check_positive_int("n_max", n_max, minimum=0)
    k = check_positive_int("k", k, minimum=0)
    if n_max < k:
        raise ValueError(f"n_max must be at least k = {k}, got {n_max}")
    return _log_binom_table(n_max, k).copy()


def log_binom(n: int, k: int) -> float:
    """``log C(n, k)``: the last entry of :func:`log_binom_table` (the same number), from the
    remembered table.

    Examples
    --------
    >>> round(float(np.exp(log_binom(6, 2))), 9)
    15.0
    """
    n = check_positive_int("n", n, minimum=0)
    k = check_positive_int("k", k, minimum=0)
    if n < k:
        raise ValueError(f"n must be at least k = {k}, got {n}")
    return float(_log_binom_table(n, k)[-1])


@functools.lru_cache(maxsize=8)
def _log_binom_table(n_max: int, k: int) -> np.ndarray:
    """:func:`log_binom_table` of valid arguments, read-only and remembered: one robust
    estimate asks for the table of its ``(N, s)`` three times (the PROSAC schedule and two
    tests against chance), and repeated estimates on as many points ask for it again."""
    n = np.arange(k + 1, n_max + 1, dtype=float)
    table = np.concatenate([[0.0], np.cumsum(np.log(n) - np.log(n - k))])
    table.flags.writeable = False
    return table


@functools.lru_cache(maxsize=8)
def _prosac_schedule(n: int, s: int, t_total: float) -> tuple[np.ndarray, np.ndarray, tuple]:
    """PROSAC's growth function ``T'_n`` (n = s..N) for ``T_N = t_total``, the sizes ``n``
    and ``T'_n`` as a tuple, read-only and remembered (repeated estimates on as many points
    draw by the same schedule; building it is most of a sampler's set-up)."""
    log_binom = _log_binom_table(n, s)
    # T_n = T_N C(n, s) / C(N, s), in logarithms (no overflow for large N).
    log_t = np.log(t_total) + log_binom - log_binom[-1]
    steps = np.maximum(np.ceil(np.diff(np.exp(log_t))), 1.0)
    grow = np.concatenate([[1.0], 1.0 + np.cumsum(steps)])
    sizes = np.arange(s, n + 1)
    grow.flags.writeable = sizes.flags.writeable = False
    return grow, sizes, tuple(grow.tolist())


def required_iterations(inlier_ratio: float, s: int, confidence: float) -> float:
    r"""RANSAC's number of samples: with probability ``confidence`` one of them is all
    inliers,

    .. math:: k = \frac{\log(1 - p)}{\log(1 - w^s)} ,

    0 when every point is an inlier and infinite when none is.

    Examples
    --------
    >>> round(required_iterations(0.5, 4, 0.99))
    71
    """
    inlier_ratio = check_probability("inlier_ratio", inlier_ratio, open_low=False,
                                     open_high=False)
    s = check_positive_int("s", s)
    confidence = check_probability("confidence", confidence)
    w = inlier_ratio**s
    if w <= 0:
        return np.inf
    if w >= 1:
        return 0
    return np.log(1 - confidence) / np.log1p(-w)


class UniformSampler:
    """RANSAC's sampling: every sample uniform over all ``n`` points, the classical
    termination (:func:`required_iterations`).

    Parameters
    ----------
    n : int
        Number of points.
    s : int
        Points per sample.
    confidence : float
        Probability that the search does not miss a better model.
    """

    progressive = False

    def __init__(self, n: int, s: int, confidence: float):
        n, s, _ = _check_sample_args(n, s, 0)
        self.n, self.s = n, s
        self.confidence = check_probability("confidence", confidence)

    def first_batch(self, batch_size: int) -> int:
        return batch_size

    def draw(self, rng: np.random.Generator, batch: int) -> np.ndarray:
        return _sample_pools(rng, np.full(batch, self.n), self.s)

    def needed(self, inliers: np.ndarray, chance: float | None = None) -> float:
        w = float(np.mean(inliers)) ** self.s
        if w <= 0:
            return np.inf
        return 0 if w >= 1 else np.log(1 - self.confidence) / np.log1p(-w)


class ProsacSampler:
    """PROSAC's progressive sampling and termination (Chum and Matas, CVPR 2005).

    Sample ``t`` is drawn from the ``n(t)`` points of best quality, ``n`` growing on the
    schedule ``T'_n`` that makes the first ``T_N`` samples match, in expectation, the samples
    of RANSAC that lie in the top ``n`` (so PROSAC falls back to RANSAC when the order is
    uninformative). Termination: the smallest number of samples over the prefix sizes ``n``
    whose support is non-random, for the confidence that no better model exists among the top
    ``n`` (maximality); the pool then stops growing at the best ``n``. Prefixes shorter than
    ``min_length`` are not considered (the paper's minimum is the sample size): a locally
    optimised model that explains the few best points but misses many inliers elsewhere must
    not end the search.

    Parameters
    ----------
    order : (N,) int array_like
        Point indices by decreasing quality.
    s : int
        Points per sample.
    confidence : float
    t_total : float
        ``T_N``, the number of samples after which PROSAC draws from all points.
    min_length : int
        Shortest prefix considered by the termination.
    """

    progressive = True

    def __init__(self, order, s: int, confidence: float, t_total: float = 200000.0,
                 min_length: int = 100):
        order = check_index_array("order", order)
        n = len(order)
        if order.ndim != 1 or n < 1:
            raise ValueError(f"order must have shape (N,) with N >= 1, got {order.shape}")
        if order.min() < 0 or order.max() >= n:
            raise ValueError(f"order must hold indices in [0, {n}), got [{order.min()}, "
                             f"{order.max()}]")
        s = check_positive_int("s", s)
        if s > n:
            raise ValueError(f"s must be at most the {n} points of order, got {s}")
        confidence = check_probability("confidence", confidence)
        t_total = check_real("t_total", t_total, low=1.0, what="a finite number >= 1")
        min_length = check_positive_int("min_length", min_length)
        self.order, self.s, self.n, self.confidence = np.asarray(order), s, n, confidence
        self.min_length = min(max(min_length, s), n)
        self.log_binom_sizes = _log_binom_table(n, s)  # log C(n, s), n = s..N (read-only)
        # T'_n, n = s..N, the sizes n, and T'_n as a tuple for bisect (the schedule of a
        # batch in two look-ups); all read-only and shared by the samplers of one (N, s).
        self.grow, self.sizes, self._grow = _prosac_schedule(n, s, float(t_total))
        self.pool = s
        self.max_pool = n
        self.drawn = 0

    def first_batch(self, batch_size: int) -> int:
        # The first samples are the most likely to be all inliers: batches start small.
        return min(batch_size, 16)

    def draw(self, rng: np.random.Generator, batch: int) -> np.ndarray:
        s, cap, t0 = self.s, max(self.max_pool, self.pool), self.drawn + 1.0
        first = min(s + bisect.bisect_right(self._grow, t0) - 1, cap)
        if first == min(s + bisect.bisect_right(self._grow, t0 + batch - 1) - 1, cap):
            # One pool for the whole batch (nearly always: it grows every few hundred samples
            # or more), found by two bisections of the schedule instead of one per sample.
            pool = np.full(batch, first)
            k = int(self._grow[first - s] - t0)  # the sample at t = T'_n, if in the batch
            newest = np.array([k] if first > s and 0 <= k < batch else [], np.intp)
        else:
            t = t0 + np.arange(batch)
            pool = np.minimum(s + np.searchsorted(self.grow, t, side="right") - 1, cap)
            newest = np.flatnonzero((self.grow[pool - s] == t) & (pool > s))
        self.drawn += batch
        self.pool = int(pool[-1])
        # At t = T'_n the sample holds the n-th point and s - 1 of the better ones.
        pool[newest] -= 1
        idx = _sample_pools(rng, pool, s)
        idx[newest, -1] = pool[newest]
        return self.order[idx]

    def needed(self, inliers: np.ndarray, chance: float | None) -> float:
        """Samples needed for the support ``inliers`` (bool, all points); sets ``n*``."""
        s = self.s
        # Termination lengths below min_length are not considered: a model that explains the
        # few best points but is wrong elsewhere would stop the search at once.
        first = self.min_length - s
        sizes = self.sizes[first:]
        beta = min(max(chance, 1e-9), 1.0 - 1e-9)
        if _jit.USE_NUMBA and _compiled_needed():  # one compiled pass, the same operations
            k, i = _nb_prosac_needed(np.ascontiguousarray(inliers[self.order]), s,
                                     self.min_length, beta, self.confidence,
                                     self.log_binom_sizes)
            if i >= 0:
                self.max_pool = int(sizes[i])
            return k
        support = np.cumsum(inliers[self.order])[self.min_length - 1:]  # I_n, n = min_length..N
        # Non-randomness: I_n above the 95% quantile of chance support (normal approximation
        # of the binomial, as in the paper), beta the probability that a point fits by chance.
        extra = sizes - s
        minimum = s + beta * extra + 1.645 * np.sqrt(beta * (1.0 - beta) * extra)
        # Probability that a sample from the top n is all inliers: C(I_n, s) / C(n, s).
        good = np.where(support >= s, np.exp(self.log_binom_sizes[np.maximum(support - s, 0)]
                                             - self.log_binom_sizes[first:]), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.where(good >= 1.0, 0.0,
                         np.log(1.0 - self.confidence) / np.log1p(-np.minimum(good, 1.0)))
        k = np.where(support >= minimum, np.nan_to_num(k, nan=np.inf), np.inf)
        i = int(np.argmin(k))
        if np.isfinite(k[i]):
            self.max_pool = int(sizes[i])
        return float(k[i])


def _nb_prosac_needed(inliers, s, min_length, beta, confidence,
                      log_binom):  # pragma: no cover - compiled
    """:meth:`ProsacSampler.needed` of the ordered ``inliers`` (N,) bool in one pass over the
    prefix sizes ``n = min_length .. N`` (for numba, :func:`_compiled_needed`), with its
    operations (``nan_to_num``'s replacements included): the least number of samples, and
    the index of its prefix among them (-1 when none is finite)."""
    n_all = inliers.shape[0]
    numerator = np.log(1.0 - confidence)
    largest = np.finfo(np.float64).max
    best, best_i = np.inf, -1
    support = 0
    for n in range(n_all):
        support += inliers[n]
        size = n + 1
        if size < min_length:
            continue
        extra = size - s
        minimum = s + beta * extra + 1.645 * np.sqrt(beta * (1.0 - beta) * extra)
        if support >= s:
            good = np.exp(log_binom[max(support - s, 0)] - log_binom[size - s])
        else:
            good = 0.0
        if good >= 1.0:
            k = 0.0
        else:
            k = numerator / np.log1p(-min(good, 1.0))
            if k != k:
                k = np.inf
            elif k == np.inf:
                k = largest
            elif k == -np.inf:
                k = -largest
        if not support >= minimum:
            k = np.inf
        if k < best:
            best, best_i = k, size - min_length
    return best, best_i


@functools.cache
def _compiled_needed() -> bool:
    """Compile :func:`_nb_prosac_needed` (the module's name then holds the compiled kernel);
    False when numba cannot be imported."""
    return _jit.compile_kernels(globals(), ("_nb_prosac_needed",))
