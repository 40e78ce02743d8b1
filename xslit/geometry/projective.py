"""Projective helpers: homogeneous coordinates, null spaces, Rodrigues vectors."""

from __future__ import annotations

import numpy as np

__all__ = [
    "euclidean_from_homogeneous",
    "homogeneous_from_euclidean",
    "matrix_from_rvec",
    "null_space",
    "rvec_from_matrix",
    "skew",
]


def homogeneous_from_euclidean(X) -> np.ndarray:
    """``(..., n)`` -> ``(..., n + 1)`` by appending ones."""
    X = np.asarray(X, dtype=float)
    return np.concatenate([X, np.ones((*X.shape[:-1], 1))], axis=-1)


def euclidean_from_homogeneous(x) -> np.ndarray:
    """``(..., n + 1)`` -> ``(..., n)``; points at infinity give inf or NaN, silently."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return x[..., :-1] / x[..., -1:]


def null_space(A, rank: int | None = None) -> np.ndarray:
    """Orthonormal basis of the right null space, as rows: ``(..., n - rank, n)``.

    With ``rank`` None the numerical rank is not estimated: the last singular vector is
    returned (the least-squares null vector), shape ``(..., 1, n)``.
    """
    A = np.asarray(A, dtype=float)
    _, _, Vt = np.linalg.svd(A)
    n = A.shape[-1]
    r = n - 1 if rank is None else rank
    return Vt[..., r:, :]


def _real_or_complex(a) -> np.ndarray:
    """``a`` as float64, or complex128 when complex (complex steps pass through)."""
    a = np.asarray(a)
    return a.astype(np.result_type(a.dtype, np.float64), copy=False)


def skew(v) -> np.ndarray:
    """Cross-product matrix ``[v]x`` of ``(..., 3)`` vectors, ``(..., 3, 3)`` (complex input
    stays complex).

    Examples
    --------
    >>> skew([1.0, 2.0, 3.0]) @ [4.0, 5.0, 6.0]
    array([-3.,  6., -3.])
    """
    v = _real_or_complex(v)
    if v.shape[-1:] != (3,):
        raise ValueError(f"v must have shape (..., 3), got {v.shape}")
    S = np.zeros((*v.shape[:-1], 3, 3), dtype=v.dtype)
    S[..., 0, 1], S[..., 0, 2] = -v[..., 2], v[..., 1]
    S[..., 1, 0], S[..., 1, 2] = v[..., 2], -v[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -v[..., 1], v[..., 0]
    return S


def matrix_from_rvec(rvec) -> np.ndarray:
    r"""Rotation matrix of a Rodrigues vector (as ``cv2.Rodrigues``), vectorised ``(..., 3)``.

    .. math:: R = I + \frac{\sin\theta}{\theta}[r]_\times
              + \frac{1-\cos\theta}{\theta^2}[r]_\times^2, \quad \theta = \|r\|

    Examples
    --------
    >>> R = matrix_from_rvec([0, 0, np.pi / 2])
    >>> np.round(R @ [1, 0, 0], 12)
    array([0., 1., 0.])
    """
    r = np.asarray(rvec, dtype=float)
    if r.shape == (3,):
        # One rotation (the inner loops of the pose refinements): the same operations on
        # the same shapes without the selections of the vectorised form, in half the time.
        th = np.sqrt(np.add.reduce(r * r, axis=-1))[..., None, None]
        if np.isfinite(th):
            x, y, z = r
            K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
            if th < 1e-8:
                a, b = 1.0 - th**2 / 6.0, 0.5 - th**2 / 24.0
            else:
                a, b = np.sin(th) / th, (1.0 - np.cos(th)) / th**2
            return np.eye(3) + a * K + b * (K @ K)
    if r.shape[-1:] != (3,):
        raise ValueError(f"rvec must have shape (..., 3), got {r.shape}")
    th = np.linalg.norm(r, axis=-1)[..., None, None]
    K = skew(r)
    small = th < 1e-8
    with np.errstate(invalid="ignore", divide="ignore"):
        a, b = np.sin(th) / th, (1.0 - np.cos(th)) / th**2
        if small.any():  # the series near 0 (the usual case has none: no selection to pay)
            a = np.where(small, 1.0 - th**2 / 6.0, a)
            b = np.where(small, 0.5 - th**2 / 24.0, b)
    return np.eye(3) + a * K + b * (K @ K)


def rvec_from_matrix(R) -> np.ndarray:
    """Rodrigues vector of a rotation matrix (inverse of :func:`matrix_from_rvec`), ``(..., 3)``."""
    from scipy.spatial.transform import Rotation

    R = np.asarray(R, dtype=float)
    shape = R.shape[:-2]
    return Rotation.from_matrix(R.reshape(-1, 3, 3)).as_rotvec().reshape((*shape, 3))
