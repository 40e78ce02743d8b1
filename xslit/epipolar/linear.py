r"""Linear estimation of the epipolar tensor from :math:`N \ge 15` correspondences (section 4).

Each correspondence gives one linear equation in the 16 entries of :math:`F` (eq. linF); the
estimate is the right singular vector of least singular value of the design matrix, computed
on pixels normalised per axis (:math:`x \mapsto s(x - m)` separately for
:math:`x, y, x', y'`, which keeps the model: it is a :math:`2 \times 2` change of each
:math:`A`) and de-normalised by contracting each tensor mode with its :math:`2 \times 2`
matrix.
"""

from __future__ import annotations

import numpy as np

from .tensor import contract_modes, design_matrix

__all__ = ["MIN_LINEAR_POINTS", "axis_normalization", "solve_linear", "solve_linear_batch"]

#: Correspondences needed by the linear solver (15 equations for 16 unknowns up to scale).
MIN_LINEAR_POINTS = 15


def axis_normalization(values) -> np.ndarray:
    r"""The :math:`2 \times 2` matrix ``T`` with ``T @ [v, 1] = [s (v - m), 1]``.

    ``m`` is the mean and ``s`` makes the mean absolute deviation 1, for ``values`` of shape
    ``(..., N)`` (batched: result ``(..., 2, 2)``).
    """
    v = np.asarray(values, dtype=float)
    m = v.mean(axis=-1)
    s = 1.0 / np.maximum(np.abs(v - m[..., None]).mean(axis=-1), 1e-12)
    T = np.zeros((*v.shape[:-1], 2, 2))
    T[..., 0, 0] = s
    T[..., 0, 1] = -s * m
    T[..., 1, 1] = 1.0
    return T


def _normalized(points1, points2):
    """Normalising matrices for the four axes and the normalised coordinates, batched."""
    cols = [points1[..., 0], points1[..., 1], points2[..., 0], points2[..., 1]]
    Ts = [axis_normalization(c) for c in cols]
    normed = [T[..., 0, 0, None] * c + T[..., 0, 1, None] for T, c in zip(Ts, cols, strict=True)]
    return Ts, normed


def solve_linear_batch(points1, points2) -> tuple[np.ndarray, np.ndarray]:
    """Linear tensors of a batch of samples: stacked SVDs, no per-sample Python loop.

    Parameters
    ----------
    points1, points2 : (B, n, 2) ndarray, n >= 15

    Returns
    -------
    F : (B, 2, 2, 2, 2) ndarray
        Unit Frobenius norm, in the original pixel coordinates.
    conditioning : (B,) ndarray
        ``s_15 / s_1`` of the normalised design matrix (the second smallest singular value
        relative to the largest): near zero when the sample does not determine ``F``.
    """
    B, n, _ = points1.shape
    Ts, (x, y, xp, yp) = _normalized(points1, points2)
    one = np.ones_like(x)
    a = np.stack([x, one], -1)
    b = np.stack([y, one], -1)
    c = np.stack([xp, one], -1)
    d = np.stack([yp, one], -1)
    D = np.einsum("bni,bnj,bnk,bnl->bnijkl", a, b, c, d).reshape(B, n, 16)
    if n < 16:  # pad to a square system so the SVD returns the null vector
        D = np.concatenate([D, np.zeros((B, 16 - n, 16))], axis=1)
    _, s, Vt = np.linalg.svd(D)
    Fn = Vt[:, -1, :].reshape(B, 2, 2, 2, 2)
    F = np.einsum("zabcd,zai,zbj,zck,zdl->zijkl", Fn, *Ts, optimize=True)
    F /= np.linalg.norm(F.reshape(B, 16), axis=1)[:, None, None, None, None]
    cond = s[:, 14] / s[:, 0]
    return F, cond


def solve_linear(points1, points2, weights=None) -> tuple[np.ndarray, float]:
    """Linear (optionally weighted) least-squares tensor from all correspondences.

    Parameters
    ----------
    points1, points2 : (N, 2) ndarray, N >= 15
    weights : (N,) ndarray, optional
        Non-negative row weights (for iteratively reweighted refits).

    Returns
    -------
    F : (2, 2, 2, 2) ndarray of unit norm
    conditioning : float
        ``s_15 / s_1`` of the normalised design matrix.
    """
    Ts, (x, y, xp, yp) = _normalized(points1, points2)
    D = design_matrix(np.stack([x, y], 1), np.stack([xp, yp], 1))
    if weights is not None:
        D = D * np.asarray(weights, dtype=float)[:, None]
    if len(D) < 16:
        D = np.vstack([D, np.zeros((16 - len(D), 16))])
    _, s, Vt = np.linalg.svd(D, full_matrices=False)
    F = contract_modes(Vt[-1].reshape(2, 2, 2, 2), *Ts)
    return F / np.linalg.norm(F), float(s[14] / s[0])
