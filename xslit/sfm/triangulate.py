r"""Triangulation of points seen by two or more two-slit cameras.

Each observation :math:`(u, v)` of a point :math:`X` in a camera :math:`(A_1, A_2)` gives two
planes containing :math:`X` (the planes whose meet is the viewing ray):

.. math:: (A_1[0] - u A_1[1])\, X = 0, \qquad (A_2[0] - v A_2[1])\, X = 0 .

The linear estimate is the least singular vector of the stacked (row-normalised) planes,
batched over points; the optional nonlinear step minimises the reprojection error of each
point by Gauss-Newton, all points at once.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import _jit
from .._checks import check_array, check_finite, check_image_points, check_positive_int

__all__ = ["reprojection_residuals", "triangulate_linear", "triangulate_nonlinear"]


def _check_views(cameras, points) -> tuple[list, list[np.ndarray]]:
    """Validate ``V >= 1`` two-slit cameras and their ``V`` pixel arrays of one length ``N``.

    Parameters
    ----------
    cameras : sequence of V TwoSlitCamera
        Objects with ``(2, 4)`` matrices ``A1`` and ``A2``.
    points : sequence of V (N, 2) array_like

    Returns
    -------
    cameras : list of V cameras
    points : list of V (N, 2) float64 ndarray

    Raises
    ------
    ValueError
        Naming ``cameras`` or ``points[i]``, what was expected and what came.
    """
    if not isinstance(cameras, (list, tuple)) or not cameras or not all(
            hasattr(c, "A1") and hasattr(c, "A2") for c in cameras):
        raise ValueError("cameras must be a non-empty list of two-slit cameras, got "
                         f"{type(cameras).__name__}")
    if isinstance(points, np.ndarray) and points.ndim == 3:
        points = list(points)
    if not isinstance(points, (list, tuple)) or len(points) != len(cameras):
        got = len(points) if isinstance(points, (list, tuple)) else type(points).__name__
        raise ValueError(f"points must be a list of {len(cameras)} (N, 2) arrays (one per "
                         f"camera), got {got}")
    pts = [check_image_points(f"points[{i}]", p) for i, p in enumerate(points)]
    if len({len(p) for p in pts}) > 1:
        raise ValueError("points must hold the same number of points in every view, got "
                         f"{[len(p) for p in pts]}")
    return list(cameras), pts


def _check_homogeneous(name: str, X, n: int) -> np.ndarray:
    X = check_array(name, X)
    if X.shape != (n, 4):
        raise ValueError(f"{name} must have shape ({n}, 4) (homogeneous points, one per "
                         f"correspondence), got {X.shape}")
    return check_finite(name, X)


def _planes(cameras, points):
    rows = []
    for cam, px in zip(cameras, points, strict=True):
        rows.append(cam.A1[0][None, :] - px[:, :1] * cam.A1[1][None, :])
        rows.append(cam.A2[0][None, :] - px[:, 1:2] * cam.A2[1][None, :])
    P = np.stack(rows, axis=1)  # (N, 2V, 4)
    return P / np.linalg.norm(P, axis=2, keepdims=True)


def triangulate_linear(cameras, points, *, backend: str = "auto") -> np.ndarray:
    """Linear triangulation.

    Parameters
    ----------
    cameras : sequence of V TwoSlitCamera
    points : sequence of V (N, 2) ndarray
    backend : {"auto", "numba", "numpy"}
        How the least right singular vectors of the ``(2V, 4)`` plane matrices are found:
        ``"numpy"`` by LAPACK's SVD of each (``numpy.linalg.svd``, batched), ``"numba"`` by a
        compiled one-sided Jacobi rotation of the four columns (Hestenes; as accurate, and
        about 3 times faster on 4 x 4 matrices, whose batched SVD costs about 4 us each in
        LAPACK's per-matrix overhead); ``"auto"`` is ``"numba"`` when numba is installed and
        the environment variable ``XSLIT_NO_NUMBA`` does not switch it off (:mod:`xslit._jit`).

    Returns
    -------
    X : (N, 4) ndarray of unit-norm homogeneous points, sign chosen with ``X[3] >= 0``.

    Raises
    ------
    ValueError
        On malformed input or an unknown ``backend`` (naming the argument).
    RuntimeError
        When ``backend="numba"`` and numba cannot be imported.
    """
    kernel = _jit.select_kernels(backend, _compiled, "triangulate_linear")
    P = _planes(*_check_views(cameras, points))
    if kernel is None:
        _, _, Vt = np.linalg.svd(P)
        X = Vt[:, -1, :]
    else:
        X = np.empty((len(P), 4))
        kernel(np.ascontiguousarray(P), X)
    X *= np.where(X[:, 3:] < 0, -1.0, 1.0)
    return X


def _nb_least_vectors(P, out):
    """The unit right singular vectors ``out`` (N, 4) of the least singular values of ``P``
    (N, m, 4), by one-sided Jacobi (Hestenes): plane rotations of pairs of columns until
    every pair is orthogonal to rounding; the rotations accumulated are the right singular
    vectors and the column norms the singular values."""
    N, m = P.shape[0], P.shape[1]
    A = np.empty((m, 4))
    V = np.empty((4, 4))
    for n in range(N):
        for k in range(m):
            for i in range(4):
                A[k, i] = P[n, k, i]
        for i in range(4):
            for j in range(4):
                V[i, j] = 1.0 if i == j else 0.0
        for _ in range(64):
            rotated = False
            for i in range(3):
                for j in range(i + 1, 4):
                    alpha = beta = gamma = 0.0
                    for k in range(m):
                        alpha += A[k, i] * A[k, i]
                        beta += A[k, j] * A[k, j]
                        gamma += A[k, i] * A[k, j]
                    if not abs(gamma) > _JACOBI_TOL * np.sqrt(alpha * beta):
                        continue
                    rotated = True
                    zeta = (beta - alpha) / (2.0 * gamma)
                    tan = (1.0 if zeta >= 0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                    c = 1.0 / np.sqrt(1.0 + tan * tan)
                    s = c * tan
                    for k in range(m):
                        a, b = A[k, i], A[k, j]
                        A[k, i], A[k, j] = c * a - s * b, s * a + c * b
                    for k in range(4):
                        a, b = V[k, i], V[k, j]
                        V[k, i], V[k, j] = c * a - s * b, s * a + c * b
            if not rotated:
                break
        least, size = 0, np.inf
        for i in range(4):
            norm = 0.0
            for k in range(m):
                norm += A[k, i] * A[k, i]
            if norm < size:
                least, size = i, norm
        for k in range(4):
            out[n, k] = V[k, least]


#: Pairs of columns count as orthogonal when their cosine is below this (a few units of
#: rounding): the Jacobi rotations then stop.
_JACOBI_TOL = 1e-15


@functools.cache
def _compiled():
    """The compiled :func:`_nb_least_vectors`, or None when numba cannot be imported (compiled
    on the first call, cached on disk)."""
    namespace = globals()
    if not _jit.compile_kernels(namespace, ("_nb_least_vectors",)):
        return None
    return namespace["_nb_least_vectors"]


def reprojection_residuals(cameras, points, X) -> np.ndarray:
    """Pixel residuals ``(N, 2V)`` of homogeneous points ``X`` (N, 4) in each camera.

    Parameters
    ----------
    cameras : sequence of V TwoSlitCamera
    points : sequence of V (N, 2) array_like
    X : (N, 4) array_like
    """
    cameras, points = _check_views(cameras, points)
    X = _check_homogeneous("X", X, len(points[0]))
    res = []
    for cam, px in zip(cameras, points, strict=True):
        a = X @ cam.A1.T
        b = X @ cam.A2.T
        with np.errstate(divide="ignore", invalid="ignore"):
            res.append(a[:, 0] / a[:, 1] - px[:, 0])
            res.append(b[:, 0] / b[:, 1] - px[:, 1])
    return np.stack(res, axis=1)


def triangulate_nonlinear(cameras, points, X0, iterations: int = 10) -> np.ndarray:
    """Refine finite points by batched Gauss-Newton on the reprojection error.

    Points with ``|X[3]|`` tiny (at or near infinity) are left as they are.

    Parameters
    ----------
    cameras : sequence of V TwoSlitCamera
    points : sequence of V (N, 2) array_like
    X0 : (N, 4) array_like
        Starting homogeneous points.
    iterations : int
        Gauss-Newton steps, >= 0.

    Returns
    -------
    X : (N, 4) ndarray, finite points with ``X[3] = 1`` where refined.
    """
    cameras, points = _check_views(cameras, points)
    X0 = _check_homogeneous("X0", X0, len(points[0]))
    iterations = check_positive_int("iterations", iterations, minimum=0)
    finite = np.abs(X0[:, 3]) > 1e-9 * np.linalg.norm(X0, axis=1)
    Y = X0[finite, :3] / X0[finite, 3:]
    pts = [p[finite] for p in points]
    def residual(Yc):
        Xh = np.concatenate([Yc, np.ones((len(Yc), 1))], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = reprojection_residuals(cameras, pts, Xh)
        return np.where(np.isfinite(r).all(axis=1), np.sum(r * r, axis=1), np.inf)

    cost = residual(Y)
    for _ in range(iterations):
        Xh = np.concatenate([Y, np.ones((len(Y), 1))], axis=1)
        J = []
        r = []
        with np.errstate(divide="ignore", invalid="ignore"):
            for cam, px in zip(cameras, pts, strict=True):
                for A, col in ((cam.A1, 0), (cam.A2, 1)):
                    num = Xh @ A[0]
                    den = Xh @ A[1]
                    val = num / den
                    r.append(val - px[:, col])
                    J.append((A[0][None, :3] - val[:, None] * A[1][None, :3]) / den[:, None])
        J = np.stack(J, axis=1)  # (n, 2V, 3)
        r = np.stack(r, axis=1)  # (n, 2V)
        JtJ = J.transpose(0, 2, 1) @ J
        JtJ += (1e-12 * np.trace(JtJ, axis1=1, axis2=2) + 1e-300)[:, None, None] * np.eye(3)
        Jtr = np.einsum("nki,nk->ni", J, r)
        ok = np.isfinite(JtJ).all(axis=(1, 2)) & np.isfinite(Jtr).all(axis=1)
        ok &= np.linalg.cond(np.where(ok[:, None, None], JtJ, np.eye(3))) < 1e12
        step = np.zeros_like(Y)
        step[ok] = np.linalg.solve(JtJ[ok], Jtr[ok][:, :, None])[:, :, 0]
        Y_new = Y - step
        cost_new = residual(Y_new)
        better = cost_new < cost  # accept per point only when the error decreases
        Y[better] = Y_new[better]
        cost[better] = cost_new[better]
        if not better.any() or np.abs(step[better]).max() < 1e-12 * (1 + np.abs(Y).max()):
            break
    out = X0.copy()
    out[finite] = np.concatenate([Y, np.ones((len(Y), 1))], axis=1)
    return out
