r"""Plücker line algebra in :math:`\mathbb{P}^3` (paper section 1.3, "Line geometry").

Conventions follow the paper exactly. A line through the points :math:`x, y` has the
Plücker coordinates

.. math::

    l = (l_{41}, l_{42}, l_{43}, l_{23}, l_{31}, l_{12}), \qquad l_{ij} = x_i y_j - x_j y_i ,

and its *dual* is :math:`l^* = (l_{23}, l_{31}, l_{12}, l_{41}, l_{42}, l_{43})`. For finite
points ``(X, 1)`` and ``(Y, 1)`` the first three coordinates are the direction ``Y - X`` and the
last three the moment ``X x Y``, so ``l[..., :3]`` is a direction and ``l[..., 3:]`` a moment.
Every real line satisfies the Klein relation :math:`l \cdot l^* = 0`, and two lines meet iff
:math:`l \cdot m^* = 0`.

The primal and dual Plücker matrices are :math:`L = x y^T - y x^T` and
:math:`L^* = u v^T - v u^T` for two planes ``u, v`` containing the line. The join of a line with
a point ``z`` is the plane :math:`L^* z`; the meet of a line with a plane ``w`` is the point
:math:`L w`.

All functions are vectorised: leading dimensions broadcast, lines are ``(..., 6)``, points and
planes ``(..., 4)``, Plücker matrices ``(..., 4, 4)``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "dual_line",
    "dual_matrix",
    "is_on_klein_quadric",
    "join_line_point",
    "klein_product",
    "line_from_origin_direction",
    "line_from_planes",
    "line_from_points",
    "lines_intersect",
    "meet_line_plane",
    "normalize_lines",
    "origin_direction_from_line",
    "primal_matrix",
]

# Index pairs (0-based) of the six coordinates: l41, l42, l43, l23, l31, l12.
_PAIRS = ((3, 0), (3, 1), (3, 2), (1, 2), (2, 0), (0, 1))
_I = np.array([p[0] for p in _PAIRS])
_J = np.array([p[1] for p in _PAIRS])


def _antisym_to_plucker(M: np.ndarray) -> np.ndarray:
    return M[..., _I, _J]


def line_from_points(x, y) -> np.ndarray:
    r"""Line :math:`x \vee y` through two points.

    Parameters
    ----------
    x, y : (..., 4) array_like
        Homogeneous points.

    Returns
    -------
    l : (..., 6) ndarray
        Plücker coordinates :math:`l_{ij} = x_i y_j - x_j y_i` (zero when ``x`` and ``y``
        coincide).

    Examples
    --------
    >>> line_from_points([0, 0, 0, 1], [1, 0, 0, 1])  # the x axis: direction e1, no moment
    array([1., 0., 0., 0., 0., 0.])
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    return x[..., _I] * y[..., _J] - x[..., _J] * y[..., _I]


def dual_line(l) -> np.ndarray:
    r"""Dual coordinates :math:`l^* = (l_{23}, l_{31}, l_{12}, l_{41}, l_{42}, l_{43})`."""
    l = np.asarray(l, dtype=float)
    return np.concatenate([l[..., 3:], l[..., :3]], axis=-1)


def line_from_planes(u, v) -> np.ndarray:
    r"""Line :math:`u \wedge v` where two planes meet.

    The plane-Plücker coordinates :math:`\pi_{ij} = u_i v_j - u_j v_i` are the dual
    coordinates of the line, so :math:`l = (\pi_{23}, \pi_{31}, \pi_{12}, \pi_{41}, \pi_{42},
    \pi_{43})`.

    Parameters
    ----------
    u, v : (..., 4) array_like
        Planes as row vectors ``(a, b, c, d)`` of ``a x1 + b x2 + c x3 + d x4 = 0``.

    Returns
    -------
    l : (..., 6) ndarray

    Examples
    --------
    >>> line_from_planes([0, 1, 0, 0], [0, 0, 1, 0])  # y = z = 0 is the x axis
    array([1., 0., 0., 0., 0., 0.])
    """
    return dual_line(line_from_points(u, v))


def primal_matrix(l) -> np.ndarray:
    r"""Primal Plücker matrix :math:`L` with :math:`L_{ij} = l_{ij}` (so :math:`L = xy^T - yx^T`).

    Parameters
    ----------
    l : (..., 6) array_like

    Returns
    -------
    L : (..., 4, 4) ndarray, antisymmetric
    """
    l = np.asarray(l, dtype=float)
    L = np.zeros((*l.shape[:-1], 4, 4))
    L[..., _I, _J] = l
    L[..., _J, _I] = -l
    return L


def dual_matrix(l) -> np.ndarray:
    r"""Dual Plücker matrix :math:`L^* = u v^T - v u^T` for any two planes through the line.

    Parameters
    ----------
    l : (..., 6) array_like

    Returns
    -------
    Lstar : (..., 4, 4) ndarray, antisymmetric, with :math:`L^* L = 0`.
    """
    return primal_matrix(dual_line(l))


def join_line_point(l, z) -> np.ndarray:
    r"""Plane :math:`l \vee z = L^* z` through a line and a point, ``(..., 4)``.

    Zero when ``z`` lies on ``l``.
    """
    return np.einsum("...ij,...j->...i", dual_matrix(l), np.asarray(z, dtype=float))


def meet_line_plane(l, w) -> np.ndarray:
    r"""Point :math:`l \wedge w = L w` where a line meets a plane, ``(..., 4)``.

    Zero when ``l`` lies in ``w``.
    """
    return np.einsum("...ij,...j->...i", primal_matrix(l), np.asarray(w, dtype=float))


def klein_product(l, m) -> np.ndarray:
    r"""Bilinear form :math:`l \cdot m^*`; zero iff the lines meet (or are equal)."""
    l = np.asarray(l, dtype=float)
    m = np.asarray(m, dtype=float)
    return np.sum(l * dual_line(m), axis=-1)


def normalize_lines(l) -> np.ndarray:
    """Scale each line to unit Euclidean norm of its six coordinates."""
    l = np.asarray(l, dtype=float)
    n = np.linalg.norm(l, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return l / n


def is_on_klein_quadric(l, tol: float = 1e-9) -> np.ndarray:
    r"""Whether six-vectors are lines: :math:`|l \cdot l^*| \le tol\,\|l\|^2`."""
    l = np.asarray(l, dtype=float)
    return np.abs(klein_product(l, l)) <= tol * np.sum(l * l, axis=-1)


def lines_intersect(l, m, tol: float = 1e-9) -> np.ndarray:
    r"""Whether two lines meet: :math:`|l \cdot m^*| \le tol\,\|l\|\,\|m\|`."""
    l = np.asarray(l, dtype=float)
    m = np.asarray(m, dtype=float)
    scale = np.linalg.norm(l, axis=-1) * np.linalg.norm(m, axis=-1)
    return np.abs(klein_product(l, m)) <= tol * scale


def origin_direction_from_line(l) -> tuple[np.ndarray, np.ndarray]:
    r"""Point closest to the world origin and unit direction of finite lines.

    With direction :math:`d = l_{:3}` and moment :math:`m = l_{3:}`, the closest point is
    :math:`d \times m / \|d\|^2`. Lines at infinity (``d = 0``) give NaN.

    Returns
    -------
    origin, direction : (..., 3) ndarray
    """
    l = np.asarray(l, dtype=float)
    d0, d1, d2, m0, m1, m2 = np.moveaxis(l, -1, 0)
    dd = d0 * d0 + d1 * d1 + d2 * d2
    # Component by component: on a render's millions of rays this avoids np.cross's copies.
    with np.errstate(invalid="ignore", divide="ignore"):
        inv = 1.0 / dd  # inf for lines at infinity: NaN below, as promised
        scale = np.sqrt(inv)
        origin = np.stack([(d1 * m2 - d2 * m1) * inv, (d2 * m0 - d0 * m2) * inv,
                           (d0 * m1 - d1 * m0) * inv], axis=-1)
        direction = np.stack([d0 * scale, d1 * scale, d2 * scale], axis=-1)
    bad = dd == 0
    if np.any(bad):
        origin[bad] = np.nan
        direction[bad] = np.nan
    return origin, direction


def line_from_origin_direction(origin, direction) -> np.ndarray:
    """Plücker line ``(d, o x d)`` through ``origin`` with ``direction`` (both ``(..., 3)``)."""
    o = np.asarray(origin, dtype=float)
    d = np.asarray(direction, dtype=float)
    return np.concatenate([d, np.cross(o, d)], axis=-1)
