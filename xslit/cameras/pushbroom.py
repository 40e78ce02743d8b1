r"""Linear pushbroom cameras (paper eq. (18), Gupta and Hartley 1997).

A pushbroom camera is a two-slit camera with one slit on the plane at infinity:

.. math::

    A_1 = \begin{bmatrix} m_1^T & t_1 \\ 0 & 1 \end{bmatrix},\quad
    A_2 = \begin{bmatrix} m_2^T & t_2 \\ m_3^T & t_3 \end{bmatrix},\qquad
    x \mapsto \left([m_1^T, t_1]\,x,\; \frac{[m_2^T, t_2]\,x}{[m_3^T, t_3]\,x}\right),

which is Gupta and Hartley's :math:`3 \times 4` matrix with rows :math:`[m_i^T, t_i]`
(eq. (19)). The first image coordinate is the along-track position (time), the
second the position on the linear sensor.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_matrix
from .two_slit import TwoSlitCamera

__all__ = ["PushbroomCamera"]


class PushbroomCamera(TwoSlitCamera):
    r"""A linear pushbroom camera: a :class:`TwoSlitCamera` with ``A1[1]`` equal to ``(0, 0, 0, 1)``.

    Parameters
    ----------
    A1, A2 : (2, 4) array_like
        ``A1``'s second row must be proportional to ``(0, 0, 0, 1)``; ``A1`` is rescaled so that
        it equals it (which fixes the scale of the along-track coordinate).

    Examples
    --------
    >>> P = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]
    >>> cam = PushbroomCamera.from_matrix(P)
    >>> cam.project([[2.0, 3.0, 4.0]])
    array([[2.  , 0.75]])
    >>> np.allclose(cam.matrix, P)
    True
    """

    model = "pushbroom"

    def __init__(self, A1, A2):
        A1 = check_matrix("A1", A1, (2, 4))
        row = A1[1]
        if np.abs(row[:3]).max() > 1e-12 * abs(row[3]) or row[3] == 0:
            raise ValueError("A1 of a pushbroom camera must have second row proportional to "
                             f"(0, 0, 0, 1) (one slit at infinity), got {row.tolist()}")
        A1 = A1 / row[3]
        A1[1] = (0.0, 0.0, 0.0, 1.0)
        super().__init__(A1, A2)

    @classmethod
    def from_matrix(cls, P) -> PushbroomCamera:
        """Camera from Gupta and Hartley's 3x4 matrix with rows ``[m1 t1], [m2 t2], [m3 t3]``."""
        P = check_matrix("P", P, (3, 4))
        if np.linalg.matrix_rank(P[:, :3]) < 3:
            raise ValueError("P must have an invertible left 3x3 block (m1, m2, m3 independent), "
                             f"got rank {np.linalg.matrix_rank(P[:, :3])}")
        return cls(np.vstack([P[0], [0, 0, 0, 1]]), P[1:])

    @classmethod
    def from_two_slit(cls, camera: TwoSlitCamera) -> PushbroomCamera:
        """View a two-slit camera whose first slit lies at infinity as a pushbroom camera."""
        if not isinstance(camera, TwoSlitCamera):
            raise ValueError("camera must be a TwoSlitCamera, got "
                             f"{type(camera).__name__}")
        return cls(camera.A1, camera.A2)

    @property
    def matrix(self) -> np.ndarray:
        """Gupta and Hartley's 3x4 matrix ``[m1 t1; m2 t2; m3 t3]``."""
        return np.vstack([self.A1[0], self.A2])

    def in_front(self, points) -> np.ndarray:
        from .base import homogeneous_points

        X = homogeneous_points("points", points)
        return X @ self.A2[1] * np.sign(X[:, 3]) > 0
