r"""Two-slit cameras as pairs of :math:`2 \times 4` matrices (paper section 3.1, eq. (11)).

A point :math:`x \in \mathbb{P}^3` maps to

.. math::

    u = \begin{bmatrix} (p_1^T x)(q_2^T x) \\ (p_2^T x)(q_1^T x) \\ (p_2^T x)(q_2^T x)
        \end{bmatrix}
      = \begin{bmatrix} p_1^T x / p_2^T x \\ q_1^T x / q_2^T x \\ 1 \end{bmatrix},
    \qquad A_1 = \begin{bmatrix} p_1^T \\ p_2^T \end{bmatrix},\;
           A_2 = \begin{bmatrix} q_1^T \\ q_2^T \end{bmatrix},

so pixel ``(u, v) = (A1[0] x / A1[1] x, A2[0] x / A2[1] x)``. The slits are the null spaces of
``A1`` and ``A2``; the viewing ray of pixel ``(u, v)`` is the meet of the planes
``A1[0] - u A1[1]`` and ``A2[0] - v A2[1]``.

Cheirality (which half of a ray the camera sees) is carried by the signs of ``A1`` and ``A2``,
as it is by the sign of a pinhole's :math:`3 \times 4` matrix: a finite point is *in front* when
``A1[1] x > 0`` and ``A2[1] x > 0`` (with ``x4 = 1``). All the models of the paper
(eqs. (15) and (18)) are written with this orientation.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_matrix, check_skew_lines
from ..geometry.plucker import (
    dual_matrix,
    line_from_planes,
    meet_line_plane,
    normalize_lines,
    origin_direction_from_line,
)
from .base import Camera, homogeneous_points

__all__ = ["TwoSlitCamera", "check_two_slit_matrices"]

#: Relative size of det([A1; A2]) under which the slits are taken to meet.
SKEW_TOL = 1e-12
#: Relative size under which a term of ``ray_grid`` is taken as ill-conditioned (a ray nearly
#: in a slit plane, a slit point nearly at infinity): the grid is then made by ``rays``.
GRID_TOL = 1e-9


def check_two_slit_matrices(A1, A2, name1: str = "A1", name2: str = "A2"):
    """Validate a pair of projection matrices and return them as float64 copies.

    Raises ValueError when a matrix is not a finite 2x4 of rank 2, or when the two slits meet
    (then ``det([A1; A2]) = 0`` and the camera is not a two-slit camera).
    """
    A1 = check_matrix(name1, A1, (2, 4)).copy()
    A2 = check_matrix(name2, A2, (2, 4)).copy()
    # The tests run on copies scaled to unit largest entry: each matrix is defined up to scale,
    # and at scales near 1e-200 or 1e200 the Pluecker products below under- or overflow.
    unit = []
    for name, A in ((name1, A1), (name2, A2)):
        peak = np.abs(A).max()
        if peak == 0:
            raise ValueError(f"{name} must have rank 2 (its null space is a slit), got zeros")
        A = A / peak
        s = np.linalg.svd(A, compute_uv=False)
        if s[1] / s[0] < 1e-12:
            raise ValueError(f"{name} must have rank 2 (its null space is a slit), got rank 1 "
                             f"(singular values {s[0]:.3g} and {s[1]:.3g} relative to its "
                             "largest entry)")
        unit.append(A)
    # det([A1; A2]) is the incidence l1 . l2* of the slits; relative to |l1| |l2| it does not
    # depend on the scales of the rows nor on a change of image coordinates (rows mixed).
    n1, n2 = unit
    l1 = line_from_planes(n1[0], n1[1])
    l2 = line_from_planes(n2[0], n2[1])
    rel = abs(np.linalg.det(np.vstack([n1, n2]))) / (np.linalg.norm(l1) * np.linalg.norm(l2))
    if not rel >= SKEW_TOL:
        raise ValueError(
            f"{name1} and {name2} have intersecting null spaces: the slits meet, so this is "
            f"not a two-slit camera (|l1 . l2*| / (|l1| |l2|) = {rel:.2e})"
        )
    return A1, A2


class TwoSlitCamera(Camera):
    r"""A projective two-slit camera :math:`(A_1, A_2)` (eq. (11)).

    Parameters
    ----------
    A1, A2 : (2, 4) array_like
        Linear projections :math:`\mathbb{P}^3 \dashrightarrow \mathbb{P}^1` onto the two image
        axes. Each is defined up to its own scale (7 + 7 = 14 degrees of freedom); the sign
        carries cheirality (see the module docstring).

    Examples
    --------
    The finite two-slit camera of Example 1, :math:`\psi(x) = (x_1(x_3+x_4), 2x_2x_3,
    x_3(x_3+x_4))`:

    >>> cam = TwoSlitCamera([[1, 0, 0, 0], [0, 0, 1, 0]], [[0, 2, 0, 0], [0, 0, 1, 1]])
    >>> cam.project([[1.0, 2.0, 1.0]])
    array([[1., 2.]])
    """

    model = "two_slit"

    def __init__(self, A1, A2):
        A1, A2 = check_two_slit_matrices(A1, A2)
        # Read-only: a camera is validated once, at construction; a changed camera is a new
        # object (writing NaN into cam.A1 would otherwise bypass every check).
        A1.setflags(write=False)
        A2.setflags(write=False)
        self.A1, self.A2 = A1, A2

    def __repr__(self) -> str:
        return f"{type(self).__name__}(A1={self.A1.tolist()!r}, A2={self.A2.tolist()!r})"

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_slits(cls, slit1, slit2, frame):
        r"""Camera from two skew slits and an intrinsic frame on a retinal plane.

        With the frame :math:`Y = [y_1, y_2, y_3]` where :math:`y_1 = l_2 \wedge \pi` and
        :math:`y_2 = l_1 \wedge \pi` (the *intrinsic* frame of section 3.1), the projection
        reduces to eq. (11) with

        .. math:: p_1 = l_1 \vee y_3,\; p_2 = -(l_1 \vee y_1),\;
                  q_1 = l_2 \vee y_3,\; q_2 = -(l_2 \vee y_2).

        Parameters
        ----------
        slit1, slit2 : (6,) array_like
            Plücker lines; they must be skew.
        frame : (4, 3) array_like
            Columns :math:`y_1, y_2, y_3` (with their relative scales) spanning the retinal
            plane, :math:`y_1` on ``slit2`` and :math:`y_2` on ``slit1``. For any other frame use
            :meth:`xslit.cameras.RationalCamera.two_slit`, which implements the general
            eq. (7).

        Examples
        --------
        Example 1 again: slits ``{x1 = x3 = 0}`` and ``{x2 = x3 + x4 = 0}``, plane
        ``x3 = x4`` with ``y1 = e1, y2 = e2, y3 = (0, 0, 1, 1)``:

        >>> from xslit.geometry import line_from_planes
        >>> l1 = line_from_planes([1, 0, 0, 0], [0, 0, 1, 0])
        >>> l2 = line_from_planes([0, 1, 0, 0], [0, 0, 1, 1])
        >>> Y = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]]
        >>> cam = TwoSlitCamera.from_slits(l1, l2, Y)
        >>> cam.project([[1.0, 2.0, 1.0]])
        array([[1., 2.]])
        """
        l1 = check_matrix("slit1", slit1, (6,))
        l2 = check_matrix("slit2", slit2, (6,))
        Y = check_matrix("frame", frame, (4, 3))
        check_skew_lines("slit1", l1, "slit2", l2, tol=SKEW_TOL)
        if not np.abs(Y).max() > 0 or np.linalg.matrix_rank(Y, tol=1e-12 * np.abs(Y).max()) < 3:
            raise ValueError("frame must have rank 3 (three independent points of a plane), "
                             f"got rank {np.linalg.matrix_rank(Y)}")
        y1, y2, y3 = Y.T
        P1, P2 = dual_matrix(l1), dual_matrix(l2)
        if _off_line(P2, y1) or _off_line(P1, y2):
            raise ValueError(
                "frame is not intrinsic: its first column must lie on slit2 and its second "
                "on slit1; use RationalCamera.two_slit for a general frame"
            )
        if np.linalg.norm(P1 @ y3) < 1e-12 * np.linalg.norm(y3) * np.linalg.norm(l1) or \
                np.linalg.norm(P2 @ y3) < 1e-12 * np.linalg.norm(y3) * np.linalg.norm(l2):
            raise ValueError("frame: the retinal plane contains a slit (y3 lies on a slit)")
        A1 = np.stack([P1 @ y3, -(P1 @ y1)])
        A2 = np.stack([P2 @ y3, -(P2 @ y2)])
        return cls(A1, A2)

    # -- geometry --------------------------------------------------------------------
    @property
    def slits(self) -> tuple[np.ndarray, np.ndarray]:
        """The two slits as unit-norm Plücker lines: null spaces of ``A1`` and ``A2``."""
        A1, A2 = _unit_scaled(self.A1), _unit_scaled(self.A2)
        return (normalize_lines(line_from_planes(A1[0], A1[1])),
                normalize_lines(line_from_planes(A2[0], A2[1])))

    @property
    def exceptional_line(self) -> np.ndarray:
        r"""The line :math:`\{p_2^T x = q_2^T x = 0\}` where the projection is undefined.

        It is :math:`y_1 \vee y_2`, a transversal to both slits, and every retinal plane of the
        camera contains it.
        """
        return normalize_lines(line_from_planes(_unit_scaled(self.A1)[1],
                                                _unit_scaled(self.A2)[1]))

    def retinal_frame(self, plane) -> np.ndarray:
        r"""Projective frame :math:`Y` on a retinal plane of this camera (proof of the Lemma).

        For a plane :math:`\pi` through the exceptional line, the viewing ray of :math:`u`
        meets :math:`\pi` at :math:`Y u` with

        .. math:: Y = [-(p_2 \wedge q_1 \wedge \pi),\; -(p_1 \wedge q_2 \wedge \pi),\;
                       p_1 \wedge q_1 \wedge \pi].

        Parameters
        ----------
        plane : (4,) array_like
            A plane containing :attr:`exceptional_line`.

        Returns
        -------
        Y : (4, 3) ndarray
        """
        pi = check_matrix("plane", plane, (4,))
        delta = self.exceptional_line
        off = np.abs(meet_line_plane(delta, pi)).max()
        if off > 1e-9 * np.linalg.norm(pi):
            raise ValueError("plane must contain the camera's exceptional line "
                             f"{{A1[1] x = A2[1] x = 0}}; it meets it in a point (residual {off:.2e})")
        p1, p2 = self.A1
        q1, q2 = self.A2
        cols = [-meet_line_plane(line_from_planes(p2, q1), pi),
                -meet_line_plane(line_from_planes(p1, q2), pi),
                meet_line_plane(line_from_planes(p1, q1), pi)]
        Y = np.stack(cols, axis=1)
        if np.linalg.matrix_rank(Y) < 3:
            raise ValueError("plane contains a slit, so it is not a valid retinal plane")
        return Y

    def transform(self, H) -> TwoSlitCamera:
        r"""The camera after the change of world coordinates :math:`x' = H x`: :math:`A H^{-1}`.

        Parameters
        ----------
        H : (4, 4) array_like, invertible
        """
        H = check_matrix("H", H, (4, 4))
        if abs(np.linalg.det(H)) <= 1e-12 * np.abs(H).max() ** 4:
            raise ValueError("H must be invertible, got a singular 4x4 matrix")
        Hinv = np.linalg.inv(H)
        A1, A2 = self.A1 @ Hinv, self.A2 @ Hinv
        try:
            return type(self)(A1, A2)
        except ValueError:  # e.g. a pushbroom moved by a non-affine H is a general two-slit
            return TwoSlitCamera(A1, A2)

    def in_front(self, points) -> np.ndarray:
        X = homogeneous_points("points", points)
        w = np.sign(X[:, 3:4])
        w[w == 0] = 1
        X = X * w
        return (X @ self.A1[1] > 0) & (X @ self.A2[1] > 0)

    # -- kernels ---------------------------------------------------------------------
    def _project_h(self, X):
        a = X @ self.A1.T  # (N, 2): p1.x, p2.x
        b = X @ self.A2.T  # (N, 2): q1.x, q2.x
        return np.stack([a[:, 0] * b[:, 1], a[:, 1] * b[:, 0], a[:, 1] * b[:, 1]], axis=1)

    def project(self, points):
        X = homogeneous_points("points", points)
        a = X @ self.A1.T
        b = X @ self.A2.T
        with np.errstate(divide="ignore", invalid="ignore"):
            px = np.stack([a[:, 0] / a[:, 1], b[:, 0] / b[:, 1]], axis=1)
        px[~np.isfinite(px).all(axis=1)] = np.nan
        return px

    project.__doc__ = Camera.project.__doc__

    def _rays_plucker(self, px):
        # The ray of (u, v) is (A1[0] - u A1[1]) ^ (A2[0] - v A2[1]), bilinear in (u, v):
        # four lines combined with the weights (1, u, v, uv), one small matrix product
        # instead of the meet of two planes per pixel (five times faster on a full image).
        a, b = self.A1
        c, e = self.A2
        basis = line_from_planes(np.stack([a, -b, a, -b]), np.stack([c, c, -e, -e]))
        u, v = px[:, 0], px[:, 1]
        return np.stack([np.ones_like(u), u, v, u * v], axis=1) @ basis

    def _rays(self, px):
        r"""Origin where the ray enters ``{A1[1] x >= 0, A2[1] x >= 0}``, direction into it.

        Along ``o + t d`` the denominators are affine in ``t`` with slopes
        ``s_k = A_k[1, :3] . d``. The direction is oriented so that the first non-zero slope
        is positive, and the origin is put at the largest zero-crossing with positive slope:
        beyond it, the camera sees the point.
        """
        o, d = origin_direction_from_line(self._rays_plucker(px))
        a1, a2 = self.A1[1], self.A2[1]
        s1 = d @ a1[:3]
        s2 = d @ a2[:3]
        # d is a unit vector: the slope s1 is zero to rounding below this.
        flip = np.where(np.abs(s1) > 1e-12 * np.linalg.norm(a1[:3]), s1 < 0, s2 < 0)
        sign = 1.0 - 2.0 * flip
        d *= sign[:, None]
        s1 *= sign
        s2 *= sign
        f1 = o @ a1[:3] + a1[3]
        f2 = o @ a2[:3] + a2[3]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.maximum(np.where(s1 > 0, -f1 / s1, -np.inf),
                           np.where(s2 > 0, -f2 / s2, -np.inf))
        t[~np.isfinite(t)] = 0.0
        out = np.empty((len(d), 6))
        np.multiply(d, t[:, None], out=out[:, :3])
        out[:, :3] += o
        out[:, 3:] = d
        return out

    def _grid_terms(self, x, y):
        r"""The rays of a grid as in ``_rays``, from one point per row and one per column.

        The ray of ``(u, v)`` meets slit 1 at :math:`a_v = l_1 \wedge (A_2[0] - v A_2[1])`
        and slit 2 at :math:`b_u = l_2 \wedge (A_1[0] - u A_1[1])`; each slit lies in its
        plane ``A_k[1]``, so these are the two crossings of ``_rays``. With
        :math:`f_k(p) = A_k[1] \cdot (p, 1)`, the slope of ``A1[1]`` along :math:`b_u - a_v`
        is :math:`f_1(b_u)` and that of ``A2[1]`` is :math:`-f_2(a_v)`: the direction is
        :math:`\sigma_u (b_u - a_v)` with :math:`\sigma_u = \operatorname{sign} f_1(b_u)`,
        and the origin, the later crossing with a positive slope, is :math:`b_u` when
        :math:`\sigma_u > 0` and :math:`f_2(a_v) < 0`, else :math:`a_v`. With slit 1 at
        infinity (pushbroom), :math:`a_v` is the direction of every ray of row ``v``,
        oriented by the slope of ``A2[1]``, and the origin is :math:`b_u`.
        """
        A1, A2 = _unit_scaled(self.A1), _unit_scaled(self.A2)
        p1 = meet_line_plane(line_from_planes(A1[0], A1[1]), A2[0] - y[:, None] * A2[1])
        p2 = meet_line_plane(line_from_planes(A2[0], A2[1]), A1[0] - x[:, None] * A1[1])
        a1, a2 = self.A1[1], self.A2[1]
        n1, n2 = np.linalg.norm(a1[:3]), np.linalg.norm(a2[:3])
        if not np.all(np.abs(p2[:, 3]) > GRID_TOL * np.linalg.norm(p2[:, :3], axis=1)):
            return None
        b = p2[:, :3] / p2[:, 3:]
        if n1 == 0:  # slit 1 at infinity: the rays of a row are parallel
            r = p1[:, :3]
            s2 = r @ a2[:3]
            if not np.all(np.abs(s2) > GRID_TOL * n2 * np.linalg.norm(r, axis=1)):
                return None
            return {"row_dir": r, "col_dir": None, "row_sign": np.where(s2 > 0, 1.0, -1.0),
                    "col_sign": None, "row_origin": None, "col_origin": b}
        if not np.all(np.abs(p1[:, 3]) > GRID_TOL * np.linalg.norm(p1[:, :3], axis=1)):
            return None
        a = p1[:, :3] / p1[:, 3:]
        f1 = b @ a1[:3] + a1[3]
        f2 = a @ a2[:3] + a2[3]
        # |b_u - a_v| is at most `span`: the unit slopes are at least |f_k| / span.
        span = np.linalg.norm(a, axis=1).max() + np.linalg.norm(b, axis=1).max()
        if not (np.all(np.abs(f1) > GRID_TOL * n1 * span)
                and np.all(np.abs(f2) > GRID_TOL * n2 * span)):
            return None
        return {"row_dir": -a, "col_dir": b, "row_sign": None,
                "col_sign": np.where(f1 > 0, 1.0, -1.0), "row_origin": a, "col_origin": b,
                "row_select": f2 < 0, "col_select": f1 > 0}

    # -- serialisation ---------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"model": self.model, "A1": self.A1.tolist(), "A2": self.A2.tolist()}


def _unit_scaled(A: np.ndarray) -> np.ndarray:
    """``A`` divided by its largest entry: the same projection (defined up to scale), with
    products of entries that neither under- nor overflow."""
    return A / np.abs(A).max()


def _off_line(Pstar, y) -> bool:
    """True when the point ``y`` is not on the line with dual Plücker matrix ``Pstar``."""
    return np.linalg.norm(Pstar @ y) > 1e-9 * np.linalg.norm(Pstar) * np.linalg.norm(y)
