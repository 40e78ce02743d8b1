r"""Intrinsic parameters of two-slit and pushbroom cameras (Propositions 1-2, appendix B).

Two-slit cameras (Proposition 1, eq. two_slit_decomposition_full):

.. math::

    A_1 = K_1 \begin{bmatrix} r_1^T & t_1 \\ r_3^T & t_3 \end{bmatrix},\quad
    A_2 = K_2 \begin{bmatrix} r_2^T & t_2 \\ r_3^T & t_4 \end{bmatrix},\quad
    K_1 = \begin{bmatrix} f_u & u_0 \\ 0 & 1 \end{bmatrix},\;
    K_2 = \begin{bmatrix} 2 f_v & v_0 \\ 0 & 1 \end{bmatrix},

with unit :math:`r_1, r_2, r_3`, :math:`r_3 \perp r_1, r_2`, slit angle
:math:`\theta = \arccos(r_1 \cdot r_2)` and slit distance :math:`|d| = |t_4 - t_3|`. For a
*parallel* camera (retinal plane parallel to the slits, eq. affine_two_slit) the :math:`K` are
upper triangular; for a general finite two-slit camera the appendix allows a non-zero lower-left
entry: :math:`r_3` spans the intersection of the row spaces of :math:`M_1, M_2` (6 analytic +
2 "3D" intrinsics + 6 extrinsics = 14).

Pushbroom cameras (Proposition 2): :math:`A_1 = K_1 [r_1^T\; t_1; 0\; 1]`,
:math:`A_2 = K_2 [r_2^T\; t_2; r_3^T\; t_3]` with :math:`K_1 = \mathrm{diag}(1/v, 1)`,
:math:`K_2 = [f\; u; 0\; 1]` when :math:`m_1 \perp m_3`, and general :math:`K_2` otherwise.

Pose convention (as cv2): a world point :math:`X` has camera coordinates
:math:`X_c = R X + t` with ``R = matrix_from_rvec(rvec)``. In its own frame the camera is the
canonical one of eq. matrices_finite_two_slit: ``r1 = e1``, ``r2 = (cos θ, sin θ, 0)``,
``r3 = e3``, first slit in the plane ``z = 0`` and the second in ``z = -d``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._checks import check_array, check_matrix
from ..geometry.projective import matrix_from_rvec, rvec_from_matrix, skew
from .pushbroom import PushbroomCamera
from .two_slit import TwoSlitCamera

__all__ = [
    "PushbroomDecomposition",
    "PushbroomIntrinsics",
    "TwoSlitDecomposition",
    "TwoSlitIntrinsics",
    "compose_camera",
    "compose_pushbroom",
    "compose_two_slit",
    "decompose_camera",
    "decompose_pushbroom",
    "decompose_two_slit",
    "project_points_with_pose",
]

_PARALLEL_TOL = 1e-9


def _real_scalar(name: str, value) -> float:
    a = check_array(name, value)
    if a.size != 1:
        raise ValueError(f"{name} must be a real scalar, got an array of shape {a.shape}")
    return float(a.reshape(()))


@dataclass(frozen=True)
class TwoSlitIntrinsics:
    """Intrinsics of a finite two-slit camera: ``K1``, ``K2`` (2x2, ``K[1, 1] = 1``), θ and d.

    ``d`` is signed: ``d > 0`` puts the second slit behind the first, seen from the scene.
    """

    K1: np.ndarray
    K2: np.ndarray
    theta: float
    d: float

    def __post_init__(self):
        K1 = check_matrix("K1", self.K1, (2, 2))
        K2 = check_matrix("K2", self.K2, (2, 2))
        for name, K in (("K1", K1), ("K2", K2)):
            if K[0, 0] <= 0 or K[1, 1] <= 0 or abs(np.linalg.det(K)) < 1e-14:
                raise ValueError(f"{name} must be invertible with a positive diagonal, got "
                                 f"{K.tolist()}")
        theta = _real_scalar("theta", self.theta)
        if not np.isfinite(theta) or abs(np.sin(theta)) < 1e-12:
            raise ValueError(f"theta must be a finite angle with sin(theta) != 0 (slits not "
                             f"parallel), got {self.theta}")
        d = _real_scalar("d", self.d)
        if not np.isfinite(d) or d == 0:
            raise ValueError(f"d must be a finite non-zero slit distance, got {self.d}")
        object.__setattr__(self, "K1", K1 / K1[1, 1])
        object.__setattr__(self, "K2", K2 / K2[1, 1])
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "d", d)

    @classmethod
    def from_parameters(cls, fu, fv, u0=0.0, v0=0.0, theta=np.pi / 2, d=1.0):
        """Parallel intrinsics from the magnifications and principal point of Proposition 1."""
        return cls(np.array([[fu, u0], [0.0, 1.0]]), np.array([[2.0 * fv, v0], [0.0, 1.0]]),
                   theta, d)

    @property
    def fu(self) -> float:
        return float(self.K1[0, 0])

    @property
    def fv(self) -> float:
        return float(self.K2[0, 0] / 2.0)

    @property
    def u0(self) -> float:
        return float(self.K1[0, 1])

    @property
    def v0(self) -> float:
        return float(self.K2[0, 1])

    @property
    def is_parallel(self) -> bool:
        """Whether both K are upper triangular (retinal plane parallel to the slits)."""
        return abs(self.K1[1, 0]) < _PARALLEL_TOL and abs(self.K2[1, 0]) < _PARALLEL_TOL

    def to_dict(self) -> dict:
        return {"model": "two_slit", "K1": self.K1.tolist(), "K2": self.K2.tolist(),
                "theta": self.theta, "d": self.d}


@dataclass(frozen=True)
class PushbroomIntrinsics:
    """Intrinsics of a pushbroom camera: ``K1 = diag(1/v, 1)``, ``K2`` (``K2[1, 1] = 1``), θ."""

    K1: np.ndarray
    K2: np.ndarray
    theta: float

    def __post_init__(self):
        K1 = check_matrix("K1", self.K1, (2, 2))
        K2 = check_matrix("K2", self.K2, (2, 2))
        if K1[0, 1] != 0 or K1[1, 0] != 0 or K1[1, 1] != 1 or K1[0, 0] <= 0:
            raise ValueError(f"K1 must be diag(1/v, 1) with v > 0, got {K1.tolist()}")
        if K2[0, 0] <= 0 or K2[1, 1] <= 0 or abs(np.linalg.det(K2)) < 1e-14:
            raise ValueError(f"K2 must be invertible with a positive diagonal, got {K2.tolist()}")
        theta = _real_scalar("theta", self.theta)
        if not np.isfinite(theta) or abs(np.sin(theta)) < 1e-12:
            raise ValueError(f"theta must be a finite angle with sin(theta) != 0, got {self.theta}")
        object.__setattr__(self, "K1", K1)
        object.__setattr__(self, "K2", K2 / K2[1, 1])
        object.__setattr__(self, "theta", theta)

    @classmethod
    def from_parameters(cls, v, f, u=0.0, theta=np.pi / 2):
        """Intrinsics from speed ``v``, magnification ``f`` and principal point ``u``."""
        if not v > 0:
            raise ValueError(f"v must be a positive speed, got {v}")
        return cls(np.diag([1.0 / v, 1.0]), np.array([[f, u], [0.0, 1.0]]), theta)

    @property
    def v(self) -> float:
        return float(1.0 / self.K1[0, 0])

    @property
    def f(self) -> float:
        return float(self.K2[0, 0])

    @property
    def u(self) -> float:
        return float(self.K2[0, 1])

    def to_dict(self) -> dict:
        return {"model": "pushbroom", "K1": self.K1.tolist(), "K2": self.K2.tolist(),
                "theta": self.theta}


class TwoSlitDecomposition(NamedTuple):
    """Result of :func:`decompose_two_slit`: eq. two_slit_decomposition_full plus the pose."""

    K1: np.ndarray
    K2: np.ndarray
    r1: np.ndarray
    r2: np.ndarray
    r3: np.ndarray
    t: np.ndarray  # (t1, t2, t3, t4)
    theta: float
    d: float
    rvec: np.ndarray
    tvec: np.ndarray

    @property
    def intrinsics(self) -> TwoSlitIntrinsics:
        return TwoSlitIntrinsics(self.K1, self.K2, self.theta, self.d)


class PushbroomDecomposition(NamedTuple):
    """Result of :func:`decompose_pushbroom` (Proposition 2 and its general form)."""

    K1: np.ndarray
    K2: np.ndarray
    r1: np.ndarray
    r2: np.ndarray
    r3: np.ndarray
    t: np.ndarray  # (t1, t2, t3)
    theta: float
    v: float
    f: float
    u: float
    rvec: np.ndarray
    tvec: np.ndarray

    @property
    def intrinsics(self) -> PushbroomIntrinsics:
        return PushbroomIntrinsics(self.K1, self.K2, self.theta)


def _unit(v):
    return v / np.linalg.norm(v)


def _pose(r1, r3, theta, t1, t2, t3):
    """Rotation ``[r1; r3 x r1; r3]`` and camera translation from the decomposition."""
    R = np.stack([r1, np.cross(r3, r1), r3])
    tvec = np.array([t1, (t2 - np.cos(theta) * t1) / np.sin(theta), t3])
    return rvec_from_matrix(R), tvec


def _angle(r1, r2, r3) -> float:
    th = np.arctan2(r2 @ np.cross(r3, r1), r1 @ r2)
    return float(th % (2 * np.pi))


def decompose_two_slit(camera: TwoSlitCamera) -> TwoSlitDecomposition:
    r"""Intrinsics and pose of a finite two-slit camera by RQ decomposition (Proposition 1).

    :math:`r_3` spans the intersection of the row spaces of :math:`M_1 = A_1[:, :3]` and
    :math:`M_2`; :math:`r_1, r_2` complete it in each row space; :math:`K_i = M_i [r_i, r_3]`.
    The decomposition is unique with positive diagonals; ``A2`` is negated first if needed
    (a change of scale, which does not change the camera).

    Parameters
    ----------
    camera : TwoSlitCamera
        With both slits finite (see :func:`decompose_pushbroom` otherwise).

    Returns
    -------
    TwoSlitDecomposition
        ``K1, K2, r1, r2, r3, t, theta, d, rvec, tvec``.

    Examples
    --------
    >>> cam = TwoSlitCamera([[1, 0, 0, 0], [0, 0, 1, 0]], [[0, 2, 0, 0], [0, 0, 1, 1]])
    >>> dec = decompose_two_slit(cam)
    >>> np.round(dec.K2, 12), float(round(np.degrees(dec.theta), 6)), dec.d
    (array([[2., 0.],
           [0., 1.]]), 90.0, 1.0)
    """
    if not isinstance(camera, TwoSlitCamera):
        raise ValueError(f"camera must be a TwoSlitCamera, got {type(camera).__name__}")
    A1, A2 = camera.A1.copy(), camera.A2.copy()
    M1, M2 = A1[:, :3], A2[:, :3]
    n1, n2 = np.cross(M1[0], M1[1]), np.cross(M2[0], M2[1])
    scale = np.linalg.norm(M1, axis=1).prod() + np.linalg.norm(M2, axis=1).prod()
    if (np.linalg.norm(n1) <= 1e-12 * np.linalg.norm(M1, axis=1).prod()
            or np.linalg.norm(n2) <= 1e-12 * np.linalg.norm(M2, axis=1).prod()):
        raise ValueError("camera has a slit at infinity (M1 or M2 has rank 1): it is a pushbroom "
                         "camera, use decomposePushbroomProjection")
    r3 = np.cross(n1, n2)
    if np.linalg.norm(r3) < 1e-12 * scale:
        raise ValueError("camera has parallel slits: no finite two-slit decomposition")
    r3 = _unit(r3)
    if M1[1] @ r3 < 0:
        r3 = -r3
    if M2[1] @ r3 < 0:
        A2 = -A2
        M2 = A2[:, :3]
    r1 = _unit(np.cross(n1, r3))
    r1 = r1 if M1[0] @ r1 > 0 else -r1
    r2 = _unit(np.cross(n2, r3))
    r2 = r2 if M2[0] @ r2 > 0 else -r2
    K1 = M1 @ np.stack([r1, r3], axis=1)
    K2 = M2 @ np.stack([r2, r3], axis=1)
    if K1[1, 1] <= 0 or K2[1, 1] <= 0:
        raise ValueError("camera: degenerate slit geometry (the shared row direction is "
                         "orthogonal to a denominator row)")
    A1 /= K1[1, 1]
    A2 /= K2[1, 1]
    K1 /= K1[1, 1]
    K2 /= K2[1, 1]
    t13 = np.linalg.solve(K1, A1[:, 3])
    t24 = np.linalg.solve(K2, A2[:, 3])
    t = np.array([t13[0], t24[0], t13[1], t24[1]])
    theta = _angle(r1, r2, r3)
    rvec, tvec = _pose(r1, r3, theta, t[0], t[1], t[2])
    return TwoSlitDecomposition(K1, K2, r1, r2, r3, t, theta, float(t[3] - t[2]), rvec, tvec)


def decompose_pushbroom(camera: PushbroomCamera) -> PushbroomDecomposition:
    r"""Intrinsics and pose of a pushbroom camera (Proposition 2, general form in appendix B).

    :math:`r_1 = m_1/\|m_1\|`, :math:`v = 1/\|m_1\|`; :math:`r_3` is the unit vector of the row
    space of :math:`M_2 = [m_2; m_3]` orthogonal to :math:`r_1`; :math:`K_2 = M_2 [r_2, r_3]`,
    upper triangular exactly when :math:`m_1 \perp m_3`.
    When the motion is orthogonal to the scanning planes (:math:`\theta = \pi/2`, :math:`m_1`
    normal to the row space of :math:`M_2`) every direction of that row space is orthogonal to
    :math:`r_1`, and :math:`r_3 = m_3/\|m_3\|` is taken (upper triangular :math:`K_2`, as in
    Proposition 2).

    Parameters
    ----------
    camera : PushbroomCamera

    Returns
    -------
    PushbroomDecomposition
        ``K1, K2, r1, r2, r3, t, theta, v, f, u, rvec, tvec``.
    """
    if not isinstance(camera, PushbroomCamera):
        if isinstance(camera, TwoSlitCamera):
            camera = PushbroomCamera.from_two_slit(camera)
        else:
            raise ValueError(f"camera must be a PushbroomCamera, got {type(camera).__name__}")
    A1, A2 = camera.A1.copy(), camera.A2.copy()
    m1 = A1[0, :3]
    M2 = A2[:, :3]
    if np.linalg.norm(m1) == 0:
        raise ValueError("camera: m1 = 0, the along-track coordinate does not vary")
    r1 = _unit(m1)
    v = 1.0 / np.linalg.norm(m1)
    n2 = np.cross(M2[0], M2[1])
    if np.linalg.norm(n2) <= 1e-12 * np.linalg.norm(M2[0]) * np.linalg.norm(M2[1]):
        raise ValueError("camera: m2 and m3 are parallel (the finite slit is at infinity)")
    r3 = np.cross(n2, r1)
    if np.linalg.norm(r3) < 1e-12 * np.linalg.norm(n2):
        # Motion orthogonal to the scanning planes (theta = pi / 2): every direction of the row
        # space of M2 is orthogonal to r1, and Proposition 2's choice is the one that makes K2
        # upper triangular, r3 along m3.
        r3 = M2[1]
    r3 = _unit(r3)
    if M2[1] @ r3 < 0:
        r3 = -r3
    r2 = _unit(np.cross(n2, r3))
    r2 = r2 if M2[0] @ r2 > 0 else -r2
    K2 = M2 @ np.stack([r2, r3], axis=1)
    if K2[1, 1] <= 0:
        A2, K2 = -A2, -K2
    A2 /= K2[1, 1]
    K2 /= K2[1, 1]
    K1 = np.diag([1.0 / v, 1.0])
    t1 = A1[0, 3] * v
    t23 = np.linalg.solve(K2, A2[:, 3])
    t = np.array([t1, t23[0], t23[1]])
    theta = _angle(r1, r2, r3)
    rvec, tvec = _pose(r1, r3, theta, t[0], t[1], t[2])
    return PushbroomDecomposition(K1, K2, r1, r2, r3, t, theta, float(v), float(K2[0, 0]),
                                  float(K2[0, 1]), rvec, tvec)


def _pose_rows(rvec, tvec, theta):
    R = matrix_from_rvec(check_matrix("rvec", np.ravel(check_array("rvec", rvec)), (3,)))
    t = check_matrix("tvec", np.ravel(check_array("tvec", tvec)), (3,))
    c, s = np.cos(theta), np.sin(theta)
    row1 = np.append(R[0], t[0])
    row2 = np.append(c * R[0] + s * R[1], c * t[0] + s * t[1])
    row3 = np.append(R[2], t[2])
    return row1, row2, row3


def compose_two_slit(intrinsics: TwoSlitIntrinsics, rvec, tvec) -> TwoSlitCamera:
    """The camera ``K1 [r1 t1; r3 t3], K2 [r2 t2; r3 t4]`` of intrinsics and a cv2 pose."""
    if not isinstance(intrinsics, TwoSlitIntrinsics):
        raise ValueError(f"intrinsics must be TwoSlitIntrinsics, got {type(intrinsics).__name__}")
    row1, row2, row3 = _pose_rows(rvec, tvec, intrinsics.theta)
    row4 = row3 + np.array([0, 0, 0, intrinsics.d])
    return TwoSlitCamera(intrinsics.K1 @ np.stack([row1, row3]),
                         intrinsics.K2 @ np.stack([row2, row4]))


def compose_pushbroom(intrinsics: PushbroomIntrinsics, rvec, tvec) -> PushbroomCamera:
    """The camera ``K1 [r1 t1; 0 1], K2 [r2 t2; r3 t3]`` of intrinsics and a cv2 pose."""
    if not isinstance(intrinsics, PushbroomIntrinsics):
        raise ValueError(f"intrinsics must be PushbroomIntrinsics, got "
                         f"{type(intrinsics).__name__}")
    row1, row2, row3 = _pose_rows(rvec, tvec, intrinsics.theta)
    return PushbroomCamera(intrinsics.K1 @ np.stack([row1, [0, 0, 0, 1.0]]),
                           intrinsics.K2 @ np.stack([row2, row3]))


def compose_camera(intrinsics, rvec, tvec):
    """:func:`compose_two_slit` or :func:`compose_pushbroom`, by the type of ``intrinsics``."""
    if isinstance(intrinsics, PushbroomIntrinsics):
        return compose_pushbroom(intrinsics, rvec, tvec)
    return compose_two_slit(intrinsics, rvec, tvec)


def decompose_camera(camera, kind):
    """:func:`decompose_two_slit` or :func:`decompose_pushbroom`; ``kind`` is an intrinsics
    object or class telling which model to read."""
    cls = kind if isinstance(kind, type) else type(kind)
    if issubclass(cls, PushbroomIntrinsics):
        return decompose_pushbroom(camera)
    return decompose_two_slit(camera)


def project_points_with_pose(X, rvec, tvec, intrinsics) -> np.ndarray:
    """Kernel of ``projectTwoSlitPoints`` on validated ``(N, 3)`` points; complex-step safe.

    ``rvec``, ``tvec`` are (3,) arrays and ``intrinsics`` a :class:`TwoSlitIntrinsics` or
    :class:`PushbroomIntrinsics` (or the tuple ``(kind, K1, K2, theta, d)`` of arrays, for
    differentiation).
    """
    kind, K1, K2, theta, d = _unpack(intrinsics)
    # Rodrigues' formula on the unit axis, not matrix_from_rvec's (1 - cos t) / t^2 form:
    # that quotient cancels for small angles, which costs digits in complex-step derivatives
    # (about 1e-8 at t = 3e-8), while the unit-axis form differentiates accurately.
    th2 = rvec @ rvec
    if th2.real < 1e-16:
        R = np.eye(3) + skew(rvec)
    else:
        th = np.sqrt(th2)
        Kx = skew(rvec / th)
        R = np.eye(3) + np.sin(th) * Kx + (1 - np.cos(th)) * (Kx @ Kx)
    c, s = np.cos(theta), np.sin(theta)
    # Rows of the two 2x4 matrices in camera coordinates, composed with the pose.
    w1 = R[0]
    w2 = c * R[0] + s * R[1]
    w3 = R[2]
    b1 = tvec[0]
    b2 = c * tvec[0] + s * tvec[1]
    b3 = tvec[2]
    x1 = X @ w1 + b1
    x2 = X @ w2 + b2
    z = X @ w3 + b3
    if kind == "pushbroom":
        u = K1[0, 0] * x1 + K1[0, 1]
        num, den = K2[0, 0] * x2 + K2[0, 1] * z, K2[1, 0] * x2 + K2[1, 1] * z
        v = num / den
    else:
        zd = z + d
        u = (K1[0, 0] * x1 + K1[0, 1] * z) / (K1[1, 0] * x1 + K1[1, 1] * z)
        v = (K2[0, 0] * x2 + K2[0, 1] * zd) / (K2[1, 0] * x2 + K2[1, 1] * zd)
    return np.stack([u, v], axis=1)


def _unpack(intr):
    if isinstance(intr, TwoSlitIntrinsics):
        return "two_slit", intr.K1, intr.K2, intr.theta, intr.d
    if isinstance(intr, PushbroomIntrinsics):
        return "pushbroom", intr.K1, intr.K2, intr.theta, 0.0
    if isinstance(intr, tuple) and len(intr) == 5 and intr[0] in ("two_slit", "pushbroom"):
        return intr
    raise ValueError("intrinsics must be TwoSlitIntrinsics or PushbroomIntrinsics, got "
                     f"{type(intr).__name__}")


def intrinsic_parameters(intr) -> tuple[str, np.ndarray]:
    """The free intrinsic parameters, in the Jacobian's column order.

    Two-slit: ``K1[0,0], K1[0,1], K1[1,0], K2[0,0], K2[0,1], K2[1,0], theta, d`` (8);
    pushbroom: ``K1[0,0], K2[0,0], K2[0,1], K2[1,0], theta`` (5).
    """
    kind, K1, K2, theta, d = _unpack(intr)
    if kind == "pushbroom":
        return kind, np.array([K1[0, 0], K2[0, 0], K2[0, 1], K2[1, 0], theta])
    return kind, np.array([K1[0, 0], K1[0, 1], K1[1, 0], K2[0, 0], K2[0, 1], K2[1, 0], theta, d])


def intrinsics_from_parameters(kind: str, p):
    """Inverse of :func:`intrinsic_parameters` (as a tuple, complex-step safe)."""
    one = np.ones((), dtype=np.asarray(p).dtype)
    if kind == "pushbroom":
        K1 = np.array([[p[0], 0 * one], [0 * one, one]])
        K2 = np.array([[p[1], p[2]], [p[3], one]])
        return (kind, K1, K2, p[4], 0.0)
    K1 = np.array([[p[0], p[1]], [p[2], one]])
    K2 = np.array([[p[3], p[4]], [p[5], one]])
    return (kind, K1, K2, p[6], p[7])
