r"""Quality orderings of data points for PROSAC, computed from the data alone.

Correct correspondences of a rigid scene lie on a 3-dimensional variety of the 4-dimensional
joint image space :math:`(x, y, x', y')` (the image of the scene under the two cameras, for any
camera model), while gross outliers scatter over all four dimensions. Near a correct
correspondence the joint space is therefore much denser than near a wrong one: the distance
to the :math:`k`-th nearest neighbour in joint space ranks correspondences by how likely they
are correct, with no descriptor scores. This is the idea behind neighbourhood-consensus match
filters (GMS, Bian et al., CVPR 2017; LPM, Ma et al., IJCV 2019), used here only to order the
points for PROSAC's progressive sampling (Chum and Matas, CVPR 2005), which falls back to
uniform sampling when the ordering is uninformative.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import _jit
from .._checks import check_array, check_finite, check_positive_int

__all__ = ["density_order"]

#: The compiled density order's neighbour search (:func:`_nb_density_ranks`) takes data of
#: up to this many coordinates (the joint image space of correspondences has four) and keeps
#: this many least distances per candidate (``k`` up to three); other data and ``k`` take the
#: k-d tree.
COMPILED_DIMS = 4
COMPILED_NEAREST = 4


def density_order(data, rng, k: int = 3, n_candidates: int = 200,
                  n_reference: int = 600, grid: int = 3) -> np.ndarray:
    r"""Indices of the rows of ``data`` by decreasing local density (PROSAC order).

    The density is measured at ``n_candidates`` random rows as the distance to their ``k``-th
    nearest neighbour among ``n_reference`` random rows (all rows when there are fewer); the
    candidates come first, densest first, then the other rows in random order. The cost is a
    nearest-neighbour search of ``n_candidates`` rows among ``n_reference``, independent of
    ``N`` beyond that.

    The densest points bunch where the data are densest, and a sample from a small region
    determines a model poorly: the denser half of the candidates (nearly all correct) goes
    first in round-robin over a ``grid`` x ``grid`` grid of equal-count bins of the first two
    coordinates, densest first per cell.

    Parameters
    ----------
    data : (N, d) ndarray
        For correspondences, the joint coordinates ``[points1, points2]`` (N, 4) in pixels.
    rng : numpy.random.Generator
    k : int
        Neighbour whose distance measures the density.
    n_candidates, n_reference : int
    grid : int

    Returns
    -------
    order : (N,) int ndarray
        A permutation of ``range(N)``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> line = np.outer(rng.uniform(size=60), [1.0, 2.0])  # dense: 60 points on a segment
    >>> data = np.vstack([line, rng.uniform(-50, 50, size=(20, 2))])  # sparse: 20 around it
    >>> order = density_order(data, rng, n_candidates=80)
    >>> bool(np.all(order[:40] < 60))
    True
    """
    data = check_array("data", data)
    if data.ndim != 2 or data.shape[1] < 1:
        raise ValueError(f"data must have shape (N, d) with d >= 1, got {data.shape}")
    check_finite("data", data)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    k = check_positive_int("k", k)
    n_candidates = check_positive_int("n_candidates", n_candidates)
    n_reference = check_positive_int("n_reference", n_reference)
    grid = check_positive_int("grid", grid)
    n = len(data)
    if n <= k + 1:
        return rng.permutation(n)
    perm = rng.permutation(n)
    cand = perm[:min(n_candidates, n)]
    ref = np.arange(n) if n <= n_reference else perm[:n_reference]
    if (data.shape[1] <= COMPILED_DIMS and k < COMPILED_NEAREST and _jit.USE_NUMBA
            and _compiled_ranks()):  # the same steps in one compiled call
        ranked = np.empty(len(cand), np.intp)
        _nb_density_ranks(np.ascontiguousarray(data), cand, ref, k, grid, ranked)
    else:
        ranked = _density_ranks(data, cand, ref, k, grid)
    return np.concatenate([ranked, perm[len(cand):]])


def _density_ranks(data, cand, ref, k, grid) -> np.ndarray:
    """The candidates ``cand`` (indices) ranked by the distance to their ``k``-th nearest
    neighbour among the rows ``ref``, the denser half in round-robin over the grid cells
    (:func:`density_order`)."""
    from scipy.spatial import cKDTree

    # k + 1: a candidate in the reference set finds itself at distance 0.
    dist, _ = cKDTree(data[ref]).query(data[cand], k=k + 1)
    ranked = cand[np.argsort(dist[:, -1], kind="stable")]
    h = len(ranked) // 2
    if h >= 4 * grid * grid:
        half = ranked[:h]
        cells = np.zeros(h, np.intp)
        for axis in range(min(2, data.shape[1])):  # equal-count bins, from the ranks
            rank = np.empty(h, np.intp)
            rank[np.argsort(data[half, axis], kind="stable")] = np.arange(h)
            cells = cells * grid + rank * grid // h
        # Position of each point in its cell (half is densest first, the sort is stable),
        # then all cells' first points, all cells' second points, ...
        by_cell = np.argsort(cells, kind="stable")
        starts = np.searchsorted(cells[by_cell], np.arange(grid * grid))
        within = np.empty(h, np.intp)
        within[by_cell] = np.arange(h) - starts[cells[by_cell]]
        ranked[:h] = half[np.argsort(within * grid * grid + cells, kind="stable")]
    return ranked


def _nb_density_ranks(data, cand, ref, k, grid, ranked):  # pragma: no cover - compiled
    """:func:`_density_ranks` into ``ranked`` (for numba, :func:`_compiled_ranks`) for data of
    at most :data:`COMPILED_DIMS` coordinates and ``k < COMPILED_NEAREST``: the exact ``k``-th
    neighbour distances by brute force (the candidate itself is one of the ``k + 1`` nearest
    rows; squared distances summed over the coordinates in order, as the k-d tree does, the
    missing coordinates adding zeros), then the same ranking.

    Each reference row updates the four least squared distances of every candidate by a
    network of minima and maxima, one pass over the candidates without a branch: the
    insertion of a distance into a sorted list branches on the data, and mispredicts so often
    on fresh data that it cost twice its time in a loop on one data set."""
    n_dim, n_cand = data.shape[1], len(cand)
    q = np.zeros((COMPILED_DIMS, n_cand))
    for c in range(n_dim):
        for i in range(n_cand):
            q[c, i] = data[cand[i], c]
    q0, q1, q2, q3 = q[0], q[1], q[2], q[3]
    n0, n1, n2, n3 = (np.full(n_cand, np.inf), np.full(n_cand, np.inf),
                      np.full(n_cand, np.inf), np.full(n_cand, np.inf))
    row = np.zeros(COMPILED_DIMS)
    for j in range(len(ref)):
        for c in range(n_dim):
            row[c] = data[ref[j], c]
        r0, r1, r2, r3 = row[0], row[1], row[2], row[3]
        for i in range(n_cand):
            e = r0 - q0[i]
            s = e * e
            e = r1 - q1[i]
            s += e * e
            e = r2 - q2[i]
            s += e * e
            e = r3 - q3[i]
            s += e * e
            a = n0[i]
            n0[i] = s if s < a else a
            s = a if s < a else s
            a = n1[i]
            n1[i] = s if s < a else a
            s = a if s < a else s
            a = n2[i]
            n2[i] = s if s < a else a
            s = a if s < a else s
            a = n3[i]
            n3[i] = s if s < a else a
    nearest = (n0, n1, n2, n3)[k]
    dist = np.sqrt(nearest)
    ranked[:] = cand[np.argsort(dist, kind="mergesort")]
    h = len(ranked) // 2
    if h >= 4 * grid * grid:
        half = ranked[:h].copy()
        cells = np.zeros(h, np.intp)
        for axis in range(min(2, n_dim)):
            by_axis = np.argsort(data[half, axis], kind="mergesort")
            for rank in range(h):
                cells[by_axis[rank]] = cells[by_axis[rank]] * grid + rank * grid // h
        seen = np.zeros(grid * grid, np.intp)
        key = np.empty(h, np.intp)
        for i in range(h):
            key[i] = seen[cells[i]] * grid * grid + cells[i]
            seen[cells[i]] += 1
        ranked[:h] = half[np.argsort(key, kind="mergesort")]


@functools.cache
def _compiled_ranks() -> bool:
    """Compile :func:`_nb_density_ranks` (the module's name then holds the compiled kernel);
    False when numba cannot be imported."""
    return _jit.compile_kernels(globals(), ("_nb_density_ranks",))
