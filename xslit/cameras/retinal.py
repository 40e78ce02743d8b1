r"""Changing the retinal plane of a two-slit camera (the Lemma of section 3, appendix B).

Two skew slits induce a homography between two retinal planes :math:`\pi, \pi'` that meet
along a transversal :math:`\delta` to the slits: :math:`f(y) = \lambda(y) \wedge \pi'`
(eq. (10)). For planes that do not meet along a transversal the change of
image coordinates is quadratic, and no homography exists.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_matrix, check_skew_lines
from ..geometry.plucker import (
    dual_matrix,
    line_from_planes,
    lines_intersect,
    meet_line_plane,
    normalize_lines,
)
from .two_slit import SKEW_TOL

__all__ = ["retinal_plane_homography"]


def _plane_of(Y):
    return np.array([(-1) ** i * np.linalg.det(np.delete(Y, i, axis=0)) for i in range(4)])


def retinal_plane_homography(slit1, slit2, frame1, frame2) -> np.ndarray:
    r"""The homography :math:`H` with :math:`u' \simeq H u` between two retinal frames.

    A pixel ``u`` in ``frame1`` (on :math:`\pi`) and ``u'`` in ``frame2`` (on :math:`\pi'`) see
    the same viewing ray. Requires the line :math:`\pi \cap \pi'` to meet both slits (Lemma).

    Parameters
    ----------
    slit1, slit2 : (6,) array_like
        Skew Plücker lines.
    frame1, frame2 : (4, 3) array_like
        Projective frames (columns ``y1, y2, y3``) of the two planes.

    Returns
    -------
    H : (3, 3) ndarray, scaled to unit Frobenius norm.

    Examples
    --------
    >>> from xslit.geometry import line_from_planes
    >>> l1 = line_from_planes([1, 0, 0, 0], [0, 0, 1, 0])
    >>> l2 = line_from_planes([0, 1, 0, 0], [0, 0, 1, 1])
    >>> Y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1.0]])
    >>> H = retinal_plane_homography(l1, l2, Y, 2 * Y)
    >>> np.allclose(H / H[2, 2], np.eye(3))
    True
    """
    l1 = check_matrix("slit1", slit1, (6,))
    l2 = check_matrix("slit2", slit2, (6,))
    Y1 = check_matrix("frame1", frame1, (4, 3))
    Y2 = check_matrix("frame2", frame2, (4, 3))
    check_skew_lines("slit1", l1, "slit2", l2, tol=SKEW_TOL)
    for name, Y in (("frame1", Y1), ("frame2", Y2)):
        if np.linalg.matrix_rank(Y) < 3:
            raise ValueError(f"{name} must have rank 3 (three independent points of a plane)")
    pi1, pi2 = _plane_of(Y1), _plane_of(Y2)
    P1, P2 = dual_matrix(l1), dual_matrix(l2)
    same = np.linalg.matrix_rank(np.stack([pi1, pi2]), tol=1e-10 * np.abs(pi1).max()) < 2
    if not same:
        delta = normalize_lines(line_from_planes(pi1, pi2))
        if not (lines_intersect(delta, l1, 1e-9) and lines_intersect(delta, l2, 1e-9)):
            raise ValueError("frame1 and frame2 must span planes that meet along a transversal "
                             "to the slits (Lemma); their common line misses a slit, so the "
                             "change of coordinates is quadratic, not a homography")
    # Closed form of the proof (appendix B): in the intrinsic frame [y1, y2, y3] of pi1
    # (y1 = l2 ^ pi1, y2 = l1 ^ pi1), the map is the identity onto the frame
    # Y' = [-(p2 ^ q1 ^ pi2), -(p1 ^ q2 ^ pi2), p1 ^ q1 ^ pi2] of pi2, so
    # H = (Y' in frame2) (intrinsic frame in frame1)^-1.
    y1 = meet_line_plane(l2, pi1)
    y2 = meet_line_plane(l1, pi1)
    for y, slit, l in ((y1, "slit2", l2), (y2, "slit1", l1)):
        if np.linalg.norm(y) <= 1e-12 * np.linalg.norm(pi1) * np.linalg.norm(l):
            raise ValueError(f"frame1 spans a plane that contains {slit}: not a retinal plane")
    # y3: the column of frame1 that makes the intrinsic frame best conditioned.
    unit = [v / np.linalg.norm(v) for v in (y1, y2)]
    best = max(range(3), key=lambda k: np.linalg.svd(
        np.stack([*unit, Y1[:, k] / np.linalg.norm(Y1[:, k])], axis=1), compute_uv=False)[-1])
    y3 = Y1[:, best]
    p1, p2 = P1 @ y3, -(P1 @ y1)
    q1, q2 = P2 @ y3, -(P2 @ y2)
    Yp = np.stack([-meet_line_plane(line_from_planes(p2, q1), pi2),
                   -meet_line_plane(line_from_planes(p1, q2), pi2),
                   meet_line_plane(line_from_planes(p1, q1), pi2)], axis=1)
    T1 = np.linalg.lstsq(Y1, np.stack([y1, y2, y3], axis=1), rcond=None)[0]
    T2 = np.linalg.lstsq(Y2, Yp, rcond=None)[0]
    s = np.linalg.svd(T2, compute_uv=False)
    if s[-1] <= 1e-12 * s[0]:
        raise ValueError("frame2 spans a plane that contains a slit: not a retinal plane")
    H = T2 @ np.linalg.inv(T1)
    return H / np.linalg.norm(H)
