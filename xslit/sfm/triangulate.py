r"""Triangulation of points seen by two or more two-slit cameras.

Each observation :math:`(u, v)` of a point :math:`X` in a camera :math:`(A_1, A_2)` gives two
planes containing :math:`X` (the planes whose meet is the viewing ray):

.. math:: (A_1[0] - u A_1[1])\, X = 0, \qquad (A_2[0] - v A_2[1])\, X = 0 .

The linear estimate is the least singular vector of the stacked (row-normalised) planes,
batched over points; the optional nonlinear step minimises the reprojection error of each
point by Gauss-Newton, all points at once.
"""

from __future__ import annotations

import numpy as np

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


def triangulate_linear(cameras, points) -> np.ndarray:
    """Linear triangulation.

    Parameters
    ----------
    cameras : sequence of V TwoSlitCamera
    points : sequence of V (N, 2) ndarray

    Returns
    -------
    X : (N, 4) ndarray of unit-norm homogeneous points, sign chosen with ``X[3] >= 0``.
    """
    P = _planes(*_check_views(cameras, points))
    _, _, Vt = np.linalg.svd(P)
    X = Vt[:, -1, :]
    X *= np.where(X[:, 3:] < 0, -1.0, 1.0)
    return X


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
