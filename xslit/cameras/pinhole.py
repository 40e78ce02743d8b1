r"""Pinhole (central) cameras :math:`P = K[R \mid t]`, for comparison and for rendering videos."""

from __future__ import annotations

import numpy as np

from .._checks import check_matrix, check_rvec, check_vector
from ..geometry.plucker import line_from_origin_direction
from ..geometry.projective import matrix_from_rvec
from .base import Camera, homogeneous_points

__all__ = ["PinholeCamera"]


class PinholeCamera(Camera):
    r"""A finite pinhole camera given by its :math:`3 \times 4` matrix :math:`P`.

    Pixels are ``(P[0] x / P[2] x, P[1] x / P[2] x)``; a point is in front when
    ``sign(det M) * P[2] x > 0`` with ``M = P[:, :3]`` (Hartley and Zisserman, 6.2.3).

    Parameters
    ----------
    P : (3, 4) array_like, with ``P[:, :3]`` invertible.

    Examples
    --------
    >>> cam = PinholeCamera.from_intrinsics([[100, 0, 50], [0, 100, 50], [0, 0, 1]])
    >>> cam.project([[0.1, 0.2, 1.0]])
    array([[60., 70.]])
    """

    model = "pinhole"

    def __init__(self, P):
        P = check_matrix("P", P, (3, 4)).copy()
        s = np.linalg.svd(P[:, :3], compute_uv=False)
        if s[0] == 0 or s[2] / s[0] < 1e-12:
            raise ValueError("P must have an invertible left 3x3 block (a finite camera), "
                             "got a singular one")
        P.setflags(write=False)  # validated once; a changed camera is a new object
        self.P = P

    def __repr__(self) -> str:
        return f"PinholeCamera(P={self.P.tolist()!r})"

    @classmethod
    def from_intrinsics(cls, K, rvec=(0.0, 0.0, 0.0), tvec=(0.0, 0.0, 0.0)) -> PinholeCamera:
        """``P = K [R | t]`` with the pose given as cv2 does (Rodrigues ``rvec``, ``tvec``)."""
        K = check_matrix("K", K, (3, 3))
        s = np.linalg.svd(K, compute_uv=False)
        if not s[0] > 0 or s[2] / s[0] < 1e-12:
            raise ValueError(f"K must be an invertible 3x3 intrinsic matrix, got {K.tolist()}")
        R = matrix_from_rvec(check_rvec("rvec", rvec))
        t = check_vector("tvec", tvec, 3)
        return cls(K @ np.hstack([R, t[:, None]]))

    @property
    def center(self) -> np.ndarray:
        """Camera centre ``-M^{-1} p4``, (3,)."""
        return -np.linalg.solve(self.P[:, :3], self.P[:, 3])

    def transform(self, H) -> PinholeCamera:
        H = check_matrix("H", H, (4, 4))
        if abs(np.linalg.det(H)) <= 1e-12 * np.abs(H).max() ** 4:
            raise ValueError("H must be invertible, got a singular 4x4 matrix")
        return PinholeCamera(self.P @ np.linalg.inv(H))

    def in_front(self, points) -> np.ndarray:
        X = homogeneous_points("points", points)
        s = np.sign(np.linalg.det(self.P[:, :3]))
        return s * (X @ self.P[2]) * np.sign(X[:, 3]) > 0

    def _project_h(self, X):
        return X @ self.P.T

    def _directions(self, px):
        u = np.concatenate([px, np.ones((len(px), 1))], axis=1)
        d = np.linalg.solve(self.P[:, :3], u.T).T * np.sign(np.linalg.det(self.P[:, :3]))
        return d / np.linalg.norm(d, axis=1, keepdims=True)

    def _rays_plucker(self, px):
        return line_from_origin_direction(np.broadcast_to(self.center, (len(px), 3)),
                                          self._directions(px))

    def _rays(self, px):
        d = self._directions(px)
        return np.concatenate([np.broadcast_to(self.center, d.shape), d], axis=1)

    def _grid_terms(self, x, y):
        # M^-1 (u, v, 1) = u M^-1 e1 + (v M^-1 e2 + M^-1 e3): a column term plus a row term.
        M = self.P[:, :3]
        Minv = np.linalg.inv(M) * np.sign(np.linalg.det(M))
        return {"row_dir": y[:, None] * Minv[:, 1] + Minv[:, 2],
                "col_dir": x[:, None] * Minv[:, 0], "row_sign": None, "col_sign": None,
                "row_origin": np.broadcast_to(self.center, (len(y), 3)), "col_origin": None}

    def to_dict(self) -> dict:
        return {"model": self.model, "P": self.P.tolist()}
