r"""Intrinsic parameters of two-slit and pushbroom cameras (Propositions 1-2, appendix B).

Two-slit cameras (Proposition 1, eq. (16)):

.. math::

    A_1 = K_1 \begin{bmatrix} r_1^T & t_1 \\ r_3^T & t_3 \end{bmatrix},\quad
    A_2 = K_2 \begin{bmatrix} r_2^T & t_2 \\ r_3^T & t_4 \end{bmatrix},\quad
    K_1 = \begin{bmatrix} f_u & u_0 \\ 0 & 1 \end{bmatrix},\;
    K_2 = \begin{bmatrix} 2 f_v & v_0 \\ 0 & 1 \end{bmatrix},

with unit :math:`r_1, r_2, r_3`, :math:`r_3 \perp r_1, r_2`, slit angle
:math:`\theta = \arccos(r_1 \cdot r_2)` and slit distance :math:`|d| = |t_4 - t_3|`. For a
*parallel* camera (retinal plane parallel to the slits, eq. (14)) the :math:`K` are
upper triangular; for a general finite two-slit camera the appendix allows a non-zero lower-left
entry: :math:`r_3` spans the intersection of the row spaces of :math:`M_1, M_2` (6 analytic +
2 "3D" intrinsics + 6 extrinsics = 14).

Pushbroom cameras (Proposition 2 and Gupta and Hartley's linear pushbroom model):
:math:`A_1 = \mathrm{diag}(1/v, 1) [r_1^T\; t_1; 0\; 1]`, :math:`A_2 = K_2 [r_2^T - a r_1^T\;
t_2 - a t_1; r_3^T - b r_1^T\; t_3 - b t_1]` with :math:`K_2 = [f\; u; 0\; 1]` and the sensor's
velocity :math:`v (1, a, b)` in camera coordinates (see :class:`PushbroomIntrinsics`, which
explains why this form replaces the proposition's general :math:`K_2`).

Pose convention (as cv2): a world point :math:`X` has camera coordinates
:math:`X_c = R X + t` with ``R = matrix_from_rvec(rvec)``. In its own frame the camera is the
canonical one of eq. (15): ``r1 = e1``, ``r2 = (cos θ, sin θ, 0)``,
``r3 = e3``, first slit in the plane ``z = 0`` and the second in ``z = -d``.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._checks import check_array, check_matrix, check_real, check_rvec, check_vector
from ..geometry.projective import matrix_from_rvec, rvec_from_matrix, skew
from .pushbroom import PushbroomCamera
from .two_slit import TwoSlitCamera

__all__ = [
    "PushbroomDecomposition",
    "PushbroomIntrinsics",
    "TwoSlitDecomposition",
    "TwoSlitIntrinsics",
    "camera_matrices",
    "checked_translation_length",
    "compose_camera",
    "compose_pushbroom",
    "compose_two_slit",
    "decompose_camera",
    "decompose_pushbroom",
    "decompose_two_slit",
    "project_points_with_pose",
    "project_points_with_poses",
]

_PARALLEL_TOL = 1e-9


def _real_scalar(name: str, value) -> float:
    return check_real(name, value, what="a finite real scalar")


def _read_only(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64)  # an owned copy
    a.setflags(write=False)
    return a


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
        if not 0 < theta < 2 * np.pi:
            # The decomposition returns the slit angle in (0, 2 pi); a value beyond is most
            # likely degrees passed as radians, which must not go unnoticed.
            raise ValueError(f"theta must be the slit angle in radians, in (0, 2 pi), got "
                             f"{self.theta} (degrees? pass np.radians({self.theta}))")
        d = _real_scalar("d", self.d)
        if not np.isfinite(d) or d == 0:
            raise ValueError(f"d must be a finite non-zero slit distance, got {self.d}")
        object.__setattr__(self, "K1", _read_only(K1 / K1[1, 1]))
        object.__setattr__(self, "K2", _read_only(K2 / K2[1, 1]))
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "d", d)

    @classmethod
    def from_parameters(cls, fu, fv, u0=0.0, v0=0.0, theta=np.pi / 2, d=1.0):
        """Parallel intrinsics from the magnifications and principal point of Proposition 1.

        ``K1 = [fu u0; 0 1]`` and ``K2 = [2 fv v0; 0 1]``: the factor 2 is the paper's (a
        camera whose two magnifications are equal far from the slits has ``K2[0, 0] = fu``,
        i.e. ``fv = fu / 2``). ``theta`` is the slit angle in radians (``np.radians(80)``),
        ``d`` the signed slit distance in world units.
        """
        fu = check_real("fu", fu, low=0, low_open=True, what="a finite positive magnification")
        fv = check_real("fv", fv, low=0, low_open=True, what="a finite positive magnification")
        u0 = check_real("u0", u0, what="a finite principal point coordinate")
        v0 = check_real("v0", v0, what="a finite principal point coordinate")
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
    r"""Intrinsics of a linear pushbroom camera: focal ``f``, principal point ``u`` and velocity.

    Gupta and Hartley's model: a 1D perspective sensor (focal ``f``, principal point ``u``
    on the sensor line) translates with constant velocity. In the camera frame at time 0
    (cv2 pose ``X_c = R X + t``), ``x`` is normal to the scanning plane, ``y`` runs along the
    sensor line and ``z`` along the optical axis, and the sensor moves by ``velocity =
    (v, v_y, v_z)`` per image line. A point ``X_c = (x, y, z)`` is imaged when the scanning
    plane sweeps over it, at line ``x / v``, where the camera has moved by ``(x / v) velocity``:

    .. math::

        A_1 = \begin{bmatrix} 1/v & 0 \\ 0 & 1 \end{bmatrix}
              \begin{bmatrix} r_1^T & t_1 \\ 0 & 1 \end{bmatrix},\quad
        A_2 = \begin{bmatrix} f & u \\ 0 & 1 \end{bmatrix}
              \begin{bmatrix} r_2^T - a\, r_1^T & t_2 - a\, t_1 \\
                              r_3^T - b\, r_1^T & t_3 - b\, t_1 \end{bmatrix},\qquad
        a = v_y / v,\; b = v_z / v,

    with ``R = [r1; r2; r3]``. Every physical pushbroom camera has this form, with finite
    parameters, whatever its view tilt (fore, aft, nadir, across-track) and sensor yaw: the
    standard along-track stereo instruments (sensor line perpendicular to the flight,
    ``v_y = 0``, looking fore or aft, ``v_z = v tan(tilt)``) are interior points of it.
    It is the canonical form of Proposition 2 rewritten: the proposition's cameras
    (``m_1 \perp m_3``, angle ``theta`` between the slits) are those with ``b = 0``,
    ``a = -cot(theta)`` and focal ``f sin(theta)``; its general form, a ``K_2`` with a non-zero
    lower-left entry, is singular for the standard instruments (``K_2[1, 1] = 0`` when the
    sensor is perpendicular to the flight direction and the view is tilted), which is why
    this one is used.

    The only degenerate configuration is motion within the scanning plane (``v = 0``): such a
    sensor images one plane only and is not a pushbroom camera. ``v`` is signed: a negative
    ``v`` is a camera moving against its ``x`` axis (the mirror image), which makes the
    decomposition unique with ``f > 0`` and a proper rotation.

    Parameters
    ----------
    velocity : (3,) array_like
        ``(v, v_y, v_z)`` in camera coordinates, world units per image line; ``v != 0``.
    f : float
        Magnification of the 1D projection, ``> 0``.
    u : float
        Principal point on the sensor line.

    Examples
    --------
    >>> intr = PushbroomIntrinsics.from_parameters(0.02, 900.0, 310.0, tilt=np.radians(18))
    >>> np.round(intr.velocity, 6).tolist(), round(float(np.degrees(intr.tilt)), 9)
    ([0.02, 0.0, 0.006498], 18.0)
    """

    velocity: np.ndarray
    f: float
    u: float = 0.0

    def __post_init__(self):
        vel = check_matrix("velocity", np.ravel(check_array("velocity", self.velocity)), (3,))
        if vel[0] == 0:
            raise ValueError("velocity must have a non-zero component v = velocity[0] normal to "
                             f"the scanning plane (a sensor moving within it images one plane), "
                             f"got {vel.tolist()}")
        f = _real_scalar("f", self.f)
        if not (np.isfinite(f) and f > 0):
            raise ValueError(f"f must be a finite positive magnification, got {self.f}")
        u = _real_scalar("u", self.u)
        if not np.isfinite(u):
            raise ValueError(f"u must be a finite principal point, got {self.u}")
        vel.setflags(write=False)
        object.__setattr__(self, "velocity", vel)
        object.__setattr__(self, "f", f)
        object.__setattr__(self, "u", u)

    @classmethod
    def from_parameters(cls, v, f, u=0.0, yaw=0.0, tilt=0.0):
        """Intrinsics from the speed ``v`` normal to the scanning plane, magnification ``f``,
        principal point ``u`` and the direction of motion.

        ``yaw`` and ``tilt`` are the angles of the velocity's projections on the camera's
        ``x-y`` and ``x-z`` planes, measured from ``x``: ``velocity = v (1, tan(yaw),
        tan(tilt))``. A sensor line perpendicular to the flight has ``yaw = 0``; a camera
        looking ``tilt`` ahead of or behind the perpendicular to the flight has that tilt
        (its sign tells fore from aft in the camera's frame).
        """
        v = _real_scalar("v", v)
        if not (np.isfinite(v) and v != 0):
            raise ValueError(f"v must be a finite non-zero speed, got {v}")
        angles = {}
        for name, value in (("yaw", yaw), ("tilt", tilt)):
            a = _real_scalar(name, value)
            if not (np.isfinite(a) and abs(a) < np.pi / 2):
                raise ValueError(f"{name} must be an angle in (-pi/2, pi/2), got {value}")
            angles[name] = a
        return cls(v * np.array([1.0, np.tan(angles["yaw"]), np.tan(angles["tilt"])]), f, u)

    @property
    def v(self) -> float:
        """Speed normal to the scanning plane (world units per image line), signed."""
        return float(self.velocity[0])

    @property
    def yaw(self) -> float:
        """Angle of the motion from the scanning plane's normal towards the sensor line."""
        return float(np.arctan(self.velocity[1] / self.velocity[0]))

    @property
    def tilt(self) -> float:
        """Angle of the motion from the scanning plane's normal towards the optical axis."""
        return float(np.arctan(self.velocity[2] / self.velocity[0]))

    @property
    def K1(self) -> np.ndarray:
        """``diag(1/v, 1)`` of Proposition 2."""
        return np.diag([1.0 / self.v, 1.0])

    @property
    def K2(self) -> np.ndarray:
        """``[[f, u], [0, 1]]``: the 1D perspective projection of the sensor."""
        return np.array([[self.f, self.u], [0.0, 1.0]])

    def to_dict(self) -> dict:
        return {"model": "pushbroom", "velocity": self.velocity.tolist(), "f": self.f,
                "u": self.u}


class TwoSlitDecomposition(NamedTuple):
    """Result of :func:`decompose_two_slit`: eq. (16) plus the pose."""

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
    """Result of :func:`decompose_pushbroom`: the intrinsics and the pose of the camera."""

    K1: np.ndarray
    K2: np.ndarray
    r1: np.ndarray
    r2: np.ndarray
    r3: np.ndarray
    t: np.ndarray  # (t1, t2, t3)
    velocity: np.ndarray
    v: float
    f: float
    u: float
    rvec: np.ndarray
    tvec: np.ndarray

    @property
    def intrinsics(self) -> PushbroomIntrinsics:
        return PushbroomIntrinsics(self.velocity, self.f, self.u)


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
    r"""Intrinsics and pose of a linear pushbroom camera (Proposition 2, Gupta and Hartley).

    Inverts :class:`PushbroomIntrinsics`' form. With ``A1`` scaled so that its second row is
    ``(0, 0, 0, 1)`` and :math:`m_1, m_2, m_3` the left 3-vectors of ``A1[0], A2[0], A2[1]``:
    the scanning planes are normal to :math:`m_1` and :math:`|v| = 1/\|m_1\|`; the optical
    axis :math:`r_3` is :math:`m_3` projected on the scanning plane, normalised, and
    :math:`\|P m_3\|` the scale of ``A2`` (kept positive, so that the points in front of the
    camera stay in front); the sensor line is :math:`r_2 = r_3 \times r_1`. The sign of
    :math:`r_1 = \pm m_1/\|m_1\|` (and of ``v``) is the one that makes ``f > 0``. Then
    ``u = m_2 . r_3 / ||P m_3||`` and the velocity components follow from the components of
    :math:`m_2, m_3` along :math:`r_1`. Every step is continuous and finite on all pushbroom
    cameras; the decomposition fails only where the camera is not a physical pushbroom.

    Parameters
    ----------
    camera : PushbroomCamera
        Or a :class:`TwoSlitCamera` with ``A1[1] ∝ (0, 0, 0, 1)``.

    Returns
    -------
    PushbroomDecomposition
        ``K1, K2, r1, r2, r3, t, velocity, v, f, u, rvec, tvec``, with
        ``compose_pushbroom(dec.intrinsics, dec.rvec, dec.tvec)`` equal to the camera.

    Raises
    ------
    ValueError
        When ``m1 = 0`` (the along-track coordinate does not vary), when ``m3`` is parallel
        to ``m1`` (no optical axis in the scanning plane) or when ``m2`` and ``m3`` restricted
        to the scanning plane are parallel (the motion lies in the scanning plane, or the
        sensor line is along the optical axis).

    Examples
    --------
    >>> intr = PushbroomIntrinsics.from_parameters(0.02, 900.0, 310.0, tilt=np.radians(18))
    >>> cam = compose_pushbroom(intr, [0.1, -0.2, 0.3], [0.5, 0.1, 6.0])
    >>> dec = decompose_pushbroom(cam)
    >>> round(dec.f, 9), round(dec.u, 9), round(float(np.degrees(dec.intrinsics.tilt)), 9)
    (900.0, 310.0, 18.0)
    """
    if not isinstance(camera, PushbroomCamera):
        if isinstance(camera, TwoSlitCamera):
            camera = PushbroomCamera.from_two_slit(camera)
        else:
            raise ValueError(f"camera must be a PushbroomCamera, got {type(camera).__name__}")
    A1, A2 = camera.A1, camera.A2
    m1, m2, m3 = A1[0, :3], A2[0, :3], A2[1, :3]
    norm1 = np.linalg.norm(m1)
    if norm1 == 0:
        raise ValueError("camera: m1 = 0, the along-track coordinate does not vary")
    n = m1 / norm1
    p3 = m3 - (m3 @ n) * n
    scale = np.linalg.norm(p3)
    if scale <= 1e-12 * np.linalg.norm(m3):
        raise ValueError("camera: m3 is parallel to m1, the denominator of the sensor "
                         "coordinate has no optical axis in the scanning plane")
    r3 = p3 / scale
    q2, q3, t23 = m2 / scale, m3 / scale, A2[:, 3] / scale
    sign = 1.0
    f = q2 @ np.cross(r3, n)
    if abs(f) <= 1e-12 * np.linalg.norm(q2):
        raise ValueError("camera: m2 and m3 are parallel within the scanning plane (the motion "
                         "lies in the scanning plane, or the sensor line is along the optical "
                         "axis): not a pushbroom camera")
    if f < 0:
        sign, f = -1.0, -f
    r1 = sign * n
    r2 = np.cross(r3, r1)
    u = q2 @ r3
    b = -(q3 @ r1)
    a = -(q2 @ r1 + u * b) / f
    v = sign / norm1
    t1 = v * A1[0, 3]
    t2 = (t23[0] - u * t23[1]) / f + a * t1
    t3 = t23[1] + b * t1
    t = np.array([t1, t2, t3])
    R = np.stack([r1, r2, r3])
    velocity = v * np.array([1.0, a, b])
    intr = PushbroomIntrinsics(velocity, f, u)
    return PushbroomDecomposition(intr.K1, intr.K2, r1, r2, r3, t, intr.velocity, float(v),
                                  float(f), float(u), rvec_from_matrix(R), t.copy())


def camera_matrices(intrinsics, R, t) -> tuple[np.ndarray, np.ndarray]:
    """The matrices ``(A1, A2)`` of :func:`compose_camera` for a rotation matrix ``R`` (3, 3)
    and a translation ``t`` (3,), unvalidated.

    For validated intrinsics and a rotation they are a camera's in exact arithmetic (see
    :func:`compose_two_slit`); loops over many poses of one camera (the steps of a
    pose refinement) validate the intrinsics once and build no camera objects. The entries
    are those of the camera that :func:`compose_camera` returns, bit for bit.
    """
    Rt = np.empty((3, 4))
    Rt[:, :3], Rt[:, 3] = R, t
    M1, M2 = np.empty((2, 4)), np.empty((2, 4))
    if isinstance(intrinsics, PushbroomIntrinsics):
        a, b = intrinsics.velocity[1:] / intrinsics.v
        M1[0], M1[1] = Rt[0], (0.0, 0.0, 0.0, 1.0)
        M2[0], M2[1] = Rt[1] - a * Rt[0], Rt[2] - b * Rt[0]
        # A1's second row is (0, 0, 0, 1) exactly (K1 = diag(1/v, 1)): PushbroomCamera's
        # rescaling leaves these entries as they are.
        return intrinsics.K1 @ M1, intrinsics.K2 @ M2
    c, s = np.cos(intrinsics.theta), np.sin(intrinsics.theta)
    M1[0], M1[1] = Rt[0], Rt[2]
    M2[0], M2[1] = c * Rt[0] + s * Rt[1], Rt[2] + (0.0, 0.0, 0.0, intrinsics.d)
    return intrinsics.K1 @ M1, intrinsics.K2 @ M2


def checked_translation_length(intrinsics) -> float:
    r"""A length of ``t`` up to which :func:`camera_matrices` of every rotation pass the checks
    of :func:`~xslit.cameras.check_two_slit_matrices` (loops over poses then need not run
    them); ``-1`` when there is none.

    With :math:`A_i = K_i M_i` and :math:`P = [M_1; M_2] = G\,[R\ t; 0\ 1]`, where :math:`G`
    (4 x 4) depends on the intrinsics only, the checked quantities have closed forms: with
    :math:`\kappa` the larger bound :math:`\|K_i\|_F^2 / |\det K_i|` on the condition numbers
    of the :math:`K_i`, each ratio :math:`s_1 / s_0` of an :math:`A_i` is at least
    :math:`1 / (2 \kappa q)`, the slits' incidence :math:`|\det[A_1; A_2]| / (\|l_1\| \|l_2\|)`
    is at least :math:`\rho / q`, and the condition number of :math:`[A_1; A_2]` with each
    matrix scaled to unit largest entry (as the check scales them) at most
    :math:`32 \kappa \kappa_G q^2` (:math:`\kappa_G = \|G\|_F \|G^{-1}\|_F`). Two-slit:
    :math:`q = 1 + (|t| + |d|)^2`, :math:`\rho = |d \sin\theta|` (:math:`M_i M_i^\top = I +
    \tau_i \tau_i^\top` with :math:`|\tau_1| \le |t|`, :math:`|\tau_2| \le |t| + |d|`, and
    :math:`|\det P| = |d \sin\theta|`); pushbroom: :math:`q = (1 + a^2 + b^2)(1 + |t|^2)`,
    :math:`\rho = 1`. The length keeps :math:`q \le 10^4`, the ratios and the incidence above
    :math:`10^{-10}` (the checks' tolerance is :math:`10^{-12}`; rounding moves the ratios by
    less than :math:`10^{-12}`) and the condition number below :math:`6 \cdot 10^{11}`, where
    rounding (of the composition and of the determinant's LU factorisation) changes the
    computed incidence by less than half.
    """
    if isinstance(intrinsics, PushbroomIntrinsics):
        # G = [e1; e4; e2 - a e1; e3 - b e1], G^-1 = [e1; a e1 + e3; b e1 + e4; e2]
        v, vy, vz = intrinsics.velocity.tolist()
        a, b = vy / v, vz / v
        kappa_g2 = (4.0 + a * a + b * b) ** 2
        rho, spread, offset = 1.0, 1.0 + a * a + b * b, 0.0
    else:
        # G = [e1; e3; c e1 + s e2; e3 + d e4], G^-1 = [e1; (e3 - c e1) / s; e2; (e4 - e2) / d]
        c, s, d = math.cos(intrinsics.theta), math.sin(intrinsics.theta), intrinsics.d
        kappa_g2 = (4.0 + d * d) * (2.0 + (1.0 + c * c) / (s * s) + 2.0 / (d * d))
        rho, spread, offset = abs(d * s), 1.0, abs(d)
    kappa = 0.0
    for K in (intrinsics.K1.tolist(), intrinsics.K2.tolist()):
        (k00, k01), (k10, k11) = K
        kappa = max(kappa, (k00 * k00 + k01 * k01 + k10 * k10 + k11 * k11)
                    / abs(k00 * k11 - k01 * k10))
    q = min(1e4, 5e9 / kappa, 1e10 * rho, math.sqrt(1.9e10 / (kappa * math.sqrt(kappa_g2))))
    if not q / spread >= 1.0:
        return -1.0
    length = math.sqrt(q / spread - 1.0) - offset
    return length if length >= 0 else -1.0


def compose_two_slit(intrinsics: TwoSlitIntrinsics, rvec, tvec) -> TwoSlitCamera:
    """The camera ``K1 [r1 t1; r3 t3], K2 [r2 t2; r3 t4]`` of intrinsics and a cv2 pose."""
    if not isinstance(intrinsics, TwoSlitIntrinsics):
        raise ValueError(f"intrinsics must be TwoSlitIntrinsics, got {type(intrinsics).__name__}")
    R = matrix_from_rvec(check_rvec("rvec", rvec))
    t = check_vector("tvec", tvec, 3)
    with _degenerate_pose_names_tvec(tvec):
        return TwoSlitCamera(*camera_matrices(intrinsics, R, t))


@contextlib.contextmanager
def _degenerate_pose_names_tvec(tvec):
    """Validated intrinsics and a rotation give full-rank, skew matrices in exact arithmetic;
    when the composed camera still fails its checks, the translation swamped the other entries
    in floating point, and the error names ``tvec``."""
    try:
        with np.errstate(over="raise", invalid="raise"):
            yield
    except (ValueError, FloatingPointError) as exc:
        raise ValueError(f"tvec must be small enough for the composed camera to stay a "
                         f"two-slit camera in floating point, got {np.ravel(tvec).tolist()} "
                         f"({exc})") from exc


def compose_pushbroom(intrinsics: PushbroomIntrinsics, rvec, tvec) -> PushbroomCamera:
    """The camera of :class:`PushbroomIntrinsics`' form for intrinsics and a cv2 pose:
    ``A1 = K1 [r1 t1; 0 1]``, ``A2 = K2 [r2 - a r1, t2 - a t1; r3 - b r1, t3 - b t1]``."""
    if not isinstance(intrinsics, PushbroomIntrinsics):
        raise ValueError(f"intrinsics must be PushbroomIntrinsics, got "
                         f"{type(intrinsics).__name__}")
    R = matrix_from_rvec(check_rvec("rvec", rvec))
    t = check_vector("tvec", tvec, 3)
    with _degenerate_pose_names_tvec(tvec):
        return PushbroomCamera(*camera_matrices(intrinsics, R, t))


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
    :class:`PushbroomIntrinsics` (or, for differentiation, the tuple that
    :func:`intrinsics_from_parameters` returns).
    """
    return project_points_with_poses(X[None], rvec[None], tvec[None], intrinsics)[0]


def project_points_with_poses(X, rvecs, tvecs, intrinsics) -> np.ndarray:
    """:func:`project_points_with_pose` for ``V`` views at once: points ``(V, N, 3)``, poses
    ``(V, 3)``, one set of intrinsics; returns ``(V, N, 2)``. Complex-step safe."""
    kind, p = _unpack(intrinsics)
    # Rodrigues' formula on the unit axis, not matrix_from_rvec's (1 - cos t) / t^2 form:
    # that quotient cancels for small angles, which costs digits in complex-step derivatives
    # (about 1e-8 at t = 3e-8), while the unit-axis form differentiates accurately.
    th2 = np.einsum("vi,vi->v", rvecs, rvecs)
    small = th2.real < 1e-16
    th = np.sqrt(np.where(small, 1.0, th2))
    Kx = skew(rvecs / th[:, None])
    sin = np.where(small, 0.0, np.sin(th))[:, None, None]
    cos1 = np.where(small, 0.0, 1 - np.cos(th))[:, None, None]
    R = np.eye(3) + sin * Kx + cos1 * (Kx @ Kx) + np.where(small[:, None, None], skew(rvecs), 0)
    Xc = X @ np.swapaxes(R, 1, 2) + tvecs[:, None, :]
    x, y, z = Xc[..., 0], Xc[..., 1], Xc[..., 2]
    if kind == "pushbroom":
        inv_v, f, u0, a, b = p
        return np.stack([inv_v * x, f * (y - a * x) / (z - b * x) + u0], axis=-1)
    k1, k2, theta, d = p[:4], p[4:8], p[8], p[9]
    c, s = np.cos(theta), np.sin(theta)
    x2 = c * x + s * y
    zd = z + d
    u = (k1[0] * x + k1[1] * z) / (k1[2] * x + k1[3] * z)
    v = (k2[0] * x2 + k2[1] * zd) / (k2[2] * x2 + k2[3] * zd)
    return np.stack([u, v], axis=-1)


def _unpack(intr):
    """``(kind, p)``: the model and its full parameter vector (two-slit: the entries of
    ``K1``, ``K2`` row by row, ``theta``, ``d``; pushbroom: ``1/v, f, u, v_y/v, v_z/v``)."""
    if isinstance(intr, TwoSlitIntrinsics):
        return "two_slit", np.concatenate([intr.K1.ravel(), intr.K2.ravel(), [intr.theta, intr.d]])
    if isinstance(intr, PushbroomIntrinsics):
        return "pushbroom", intrinsic_parameters(intr)[1]
    if isinstance(intr, tuple) and len(intr) == 2 and intr[0] in ("two_slit", "pushbroom"):
        return intr
    raise ValueError("intrinsics must be TwoSlitIntrinsics or PushbroomIntrinsics, got "
                     f"{type(intr).__name__}")


def intrinsic_parameters(intr) -> tuple[str, np.ndarray]:
    """The free intrinsic parameters, in the Jacobian's column order.

    Two-slit: ``K1[0,0], K1[0,1], K1[1,0], K2[0,0], K2[0,1], K2[1,0], theta, d`` (8);
    pushbroom: ``1/v, f, u, v_y/v, v_z/v`` (5; see :class:`PushbroomIntrinsics`).
    """
    if isinstance(intr, PushbroomIntrinsics):
        vel = intr.velocity
        return "pushbroom", np.array([1.0 / vel[0], intr.f, intr.u, vel[1] / vel[0],
                                      vel[2] / vel[0]])
    if isinstance(intr, TwoSlitIntrinsics):
        K1, K2 = intr.K1, intr.K2
        return "two_slit", np.array([K1[0, 0], K1[0, 1], K1[1, 0], K2[0, 0], K2[0, 1],
                                     K2[1, 0], intr.theta, intr.d])
    raise ValueError("intrinsics must be TwoSlitIntrinsics or PushbroomIntrinsics, got "
                     f"{type(intr).__name__}")


def intrinsics_from_parameters(kind: str, p):
    """Inverse of :func:`intrinsic_parameters`, as the ``(kind, p)`` tuple that
    :func:`project_points_with_pose` takes (complex-step safe: no validation, no casts)."""
    if kind == "pushbroom":
        return kind, p
    one = np.ones((), dtype=np.asarray(p).dtype)
    return kind, np.array([p[0], p[1], p[2], one, p[3], p[4], p[5], one, p[6], p[7]])


def intrinsics_object(kind: str, p):
    """The :class:`TwoSlitIntrinsics` or :class:`PushbroomIntrinsics` of real parameters
    ``p`` in :func:`intrinsic_parameters`' order (validated)."""
    p = np.asarray(p, dtype=float)
    if kind == "pushbroom":
        return PushbroomIntrinsics(np.array([1.0, p[3], p[4]]) / p[0], p[1], p[2])
    return TwoSlitIntrinsics([[p[0], p[1]], [p[2], 1.0]], [[p[3], p[4]], [p[5], 1.0]], p[6], p[7])
