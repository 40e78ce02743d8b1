r"""General rational cameras with a retinal plane (paper section 2.2).

A rational camera is the composition of an *essential map* :math:`\lambda_L` of a
:math:`(1, \beta)` line congruence :math:`L` (a point to the unique ray of :math:`L` through
it) with the linear map :math:`N` of a retinal plane :math:`\pi` with projective frame
:math:`Y = [y_1, y_2, y_3]` (eq. (2)):

.. math::

    N = \begin{bmatrix} (y_2 \vee y_3)^{*T} \\ (y_3 \vee y_1)^{*T} \\ (y_1 \vee y_2)^{*T}
        \end{bmatrix}, \qquad
    \psi(x) = N\,\lambda_L(x) \;\;\text{(eq. (4))}, \qquad
    \chi(u) = \lambda_L(Y u) \;\;\text{(eq. (5))}.

The coordinates of :math:`\psi` are forms of degree :math:`\beta + 1`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._checks import check_array, check_matrix, check_positive_int, check_skew_lines
from ..geometry.plucker import (
    dual_line,
    dual_matrix,
    line_from_planes,
    line_from_points,
    origin_direction_from_line,
    primal_matrix,
)
from .base import Camera

__all__ = ["RationalCamera", "plane_projection_matrix"]


def plane_projection_matrix(frame) -> np.ndarray:
    r"""The :math:`3 \times 6` matrix :math:`N` of a retinal frame (eq. (2)).

    Parameters
    ----------
    frame : (4, 3) array_like
        Columns :math:`y_1, y_2, y_3`.

    Returns
    -------
    N : (3, 6) ndarray
        ``N @ l`` are the coordinates in the frame of the point where line ``l`` meets the
        plane.

    Examples
    --------
    Example 1 of the paper: plane ``x3 - x4 = 0``, ``y1 = e1, y2 = e2, y3 = (0, 0, 1, 1)``:

    >>> plane_projection_matrix([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]]).astype(int)
    array([[ 1,  0,  0,  0, -1,  0],
           [ 0,  1,  0,  1,  0,  0],
           [ 0,  0,  1,  0,  0,  0]])
    """
    Y = check_matrix("frame", frame, (4, 3))
    y1, y2, y3 = Y.T
    return np.stack([dual_line(line_from_points(y2, y3)),
                     dual_line(line_from_points(y3, y1)),
                     dual_line(line_from_points(y1, y2))])


def _binary_form(coeffs: np.ndarray, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Evaluate ``sum_i c_i s^(k-i) t^i`` (degree ``k = len(c) - 1``) on arrays ``s, t``."""
    k = len(coeffs) - 1
    out = np.zeros(np.broadcast(s, t).shape)
    for i, c in enumerate(coeffs):
        if c != 0:
            out = out + c * s ** (k - i) * t**i
    return out


class RationalCamera(Camera):
    r"""A rational camera :math:`\psi = N \circ \lambda_L` (eq. (4)).

    Parameters
    ----------
    essential_map : callable
        :math:`\lambda_L`: ``(M, 4)`` homogeneous points to ``(M, 6)`` Plücker lines.
    frame : (4, 3) array_like
        The retinal frame :math:`Y` (its columns span the retinal plane).
    beta : int
        Class of the congruence; ``psi`` has degree ``beta + 1``.

    Use the constructors :meth:`pinhole`, :meth:`two_slit` and :meth:`transversal`.
    """

    model = "rational"

    def __init__(self, essential_map: Callable[[np.ndarray], np.ndarray], frame, beta: int):
        if not callable(essential_map):
            raise ValueError("essential_map must be callable ((N, 4) points to (N, 2) "
                             f"coordinates on the retinal plane), got {type(essential_map).__name__}")
        self.frame = check_matrix("frame", frame, (4, 3)).copy()
        if np.linalg.matrix_rank(self.frame) < 3:
            raise ValueError("frame must have rank 3 (three independent points of a plane)")
        self.frame.setflags(write=False)  # validated once; a changed camera is a new object
        self.essential_map = essential_map
        self.beta = check_positive_int("beta", beta, minimum=0)
        self.N = plane_projection_matrix(self.frame)
        self._spec: dict = {}

    def __repr__(self) -> str:
        return f"RationalCamera(beta={self.beta}, {self._spec.get('kind', 'custom')})"

    # -- constructors ----------------------------------------------------------------
    @classmethod
    def pinhole(cls, center, frame) -> RationalCamera:
        r"""The bundle through ``center`` (:math:`\beta = 0`): :math:`\lambda(x) = x \vee c`."""
        c = check_matrix("center", center, (4,))

        def lam(X):
            return line_from_points(X, c)

        cam = cls(lam, frame, 0)
        cam._spec = {"kind": "pinhole", "center": c.tolist()}
        return cam

    @classmethod
    def two_slit(cls, slit1, slit2, frame) -> RationalCamera:
        r"""Two slits (:math:`\beta = 1`) with *any* frame (eq. (6)).

        :math:`\lambda(x) = (x \vee l_1) \wedge (x \vee l_2)`, and the projection equals
        eq. (7), :math:`u_k = x^T P_1^* S_k P_2^* x` (see
        :attr:`quadratic_forms`).
        """
        from .two_slit import SKEW_TOL

        l1 = check_matrix("slit1", slit1, (6,))
        l2 = check_matrix("slit2", slit2, (6,))
        check_skew_lines("slit1", l1, "slit2", l2, tol=SKEW_TOL)
        P1, P2 = dual_matrix(l1), dual_matrix(l2)

        def lam(X):
            return line_from_planes(X @ P1.T, X @ P2.T)

        cam = cls(lam, frame, 1)
        cam._spec = {"kind": "two_slit", "slit1": l1.tolist(), "slit2": l2.tolist()}
        return cam

    @classmethod
    def transversal(cls, f, g, h, frame) -> RationalCamera:
        r"""Transversals to a curve :math:`\gamma` of degree :math:`\beta` and a line
        :math:`\delta = \{x_1 = x_2 = 0\}` meeting it in :math:`\beta - 1` points
        (section 2.1):

        .. math:: \lambda_L(x) = x \vee (x_1 f, x_2 f, g, h)(x_1, x_2),

        with binary forms :math:`f, g, h` of degrees :math:`\beta - 1, \beta, \beta`.

        Parameters
        ----------
        f : (beta,) array_like
            Coefficients of :math:`f = \sum_i f_i x_1^{\beta-1-i} x_2^i`.
        g, h : (beta + 1,) array_like
            Coefficients of :math:`g` and :math:`h`, same convention.
        frame : (4, 3) array_like
        """
        f = check_array("f", f).ravel()
        g = check_array("g", g).ravel()
        h = check_array("h", h).ravel()
        beta = len(g) - 1
        if beta < 1 or len(h) != beta + 1 or len(f) != beta:
            raise ValueError("f, g, h must have beta, beta + 1 and beta + 1 coefficients with "
                             f"beta >= 1, got {len(f)}, {len(g)} and {len(h)}")
        for name, c in (("f", f), ("g", g), ("h", h)):
            if not np.all(np.isfinite(c)) or not np.any(c):
                raise ValueError(f"{name} must be finite and not identically zero")

        def gamma(s, t):
            fv = _binary_form(f, s, t)
            return np.stack([s * fv, t * fv, _binary_form(g, s, t), _binary_form(h, s, t)],
                            axis=-1)

        def lam(X):
            return line_from_points(X, gamma(X[:, 0], X[:, 1]))

        cam = cls(lam, frame, beta)
        cam.curve = gamma
        cam._spec = {"kind": "transversal", "f": f.tolist(), "g": g.tolist(), "h": h.tolist()}
        return cam

    # -- geometry --------------------------------------------------------------------
    @property
    def retinal_plane(self) -> np.ndarray:
        """The plane spanned by the frame, as a unit (4,) vector (sign from the cofactors)."""
        Y = self.frame
        pi = np.array([(-1) ** i * np.linalg.det(np.delete(Y, i, axis=0)) for i in range(4)])
        return pi / np.linalg.norm(pi)

    @property
    def quadratic_forms(self) -> np.ndarray:
        r"""For two-slit cameras, :math:`P_1^* S_k P_2^*` of eq. (7), (3, 4, 4)."""
        if self._spec.get("kind") != "two_slit":
            raise ValueError("quadratic_forms exist only for RationalCamera.two_slit cameras")
        P1 = dual_matrix(np.array(self._spec["slit1"]))
        P2 = dual_matrix(np.array(self._spec["slit2"]))
        y1, y2, y3 = self.frame.T
        S = primal_matrix(np.stack([line_from_points(y2, y3), line_from_points(y3, y1),
                                    line_from_points(y1, y2)]))
        return P1 @ S @ P2

    # -- kernels ---------------------------------------------------------------------
    def _project_h(self, X):
        return self.essential_map(X) @ self.N.T

    def _rays_plucker(self, px):
        u = np.concatenate([px, np.ones((len(px), 1))], axis=1)
        return self.essential_map(u @ self.frame.T)

    def _rays(self, px):
        """Origin on the retinal plane (at the pixel), direction along the plane normal."""
        u = np.concatenate([px, np.ones((len(px), 1))], axis=1)
        y = u @ self.frame.T
        _, d = origin_direction_from_line(self.essential_map(y))
        n = self.retinal_plane[:3]
        d = d * np.where(d @ n < 0, -1.0, 1.0)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            o = y[:, :3] / y[:, 3:]
        return np.concatenate([o, d], axis=1)

    def in_front(self, points) -> np.ndarray:
        from .base import homogeneous_points

        X = homogeneous_points("points", points)
        return (X @ self.retinal_plane) * np.sign(X[:, 3]) > 0

    def to_dict(self) -> dict:
        if not self._spec:
            raise ValueError("a RationalCamera with a custom essential map cannot be serialised")
        return {"model": self.model, "frame": self.frame.tolist(), **self._spec}
