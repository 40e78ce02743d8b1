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

import numpy as np

from .._checks import check_array, check_finite, check_positive_int

__all__ = ["density_order"]


def density_order(data, rng, k: int = 3, n_candidates: int = 200,
                  n_reference: int = 600, grid: int = 3) -> np.ndarray:
    r"""Indices of the rows of ``data`` by decreasing local density (PROSAC order).

    The density is measured at ``n_candidates`` random rows as the distance to their ``k``-th
    nearest neighbour among ``n_reference`` random rows (all rows when there are fewer); the
    candidates come first, densest first, then the other rows in random order. The cost is a
    k-d tree of ``n_reference`` rows and ``n_candidates`` queries, independent of ``N`` beyond
    that.

    Parameters
    ----------
    data : (N, d) ndarray
        For correspondences, the joint coordinates ``[points1, points2]`` (N, 4) in pixels.
    rng : numpy.random.Generator
    k : int
        Neighbour whose distance measures the density.
    n_candidates, n_reference : int

    Returns
    -------
    order : (N,) int ndarray
        A permutation of ``range(N)``.
    """
    from scipy.spatial import cKDTree

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
    ref = data if n <= n_reference else data[perm[:n_reference]]
    # k + 1: a candidate in the reference set finds itself at distance 0.
    dist, _ = cKDTree(ref).query(data[cand], k=k + 1, eps=0.5)  # within 1.5x: enough to rank
    ranked = cand[np.argsort(dist[:, -1], kind="stable")]
    # The densest points bunch where the data are densest, and a sample from a small region
    # determines a model poorly. The denser half of the candidates (nearly all correct) goes
    # first in round-robin over a grid of the first two coordinates, densest first per cell.
    h = len(ranked) // 2
    if h >= 4 * grid * grid:
        half = ranked[:h]
        cells = np.zeros(h, np.intp)
        for axis in (0, 1):  # equal-count bins of each coordinate, from the ranks
            rank = np.empty(h, np.intp)
            rank[np.argsort(data[half, axis])] = np.arange(h)
            cells = cells * grid + rank * grid // h
        # Position of each point in its cell (half is densest first, the sort is stable),
        # then all cells' first points, all cells' second points, ...
        by_cell = np.argsort(cells, kind="stable")
        starts = np.searchsorted(cells[by_cell], np.arange(grid * grid))
        within = np.empty(h, np.intp)
        within[by_cell] = np.arange(h) - starts[cells[by_cell]]
        ranked[:h] = half[np.argsort(within * grid * grid + cells, kind="stable")]
    return np.concatenate([ranked, perm[len(cand):]])
