"""Seeded generators of synthetic cameras and scenes (``random_*``), used by tests and tools.

Every generator takes ``rng: None | int | numpy.random.Generator``.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_positive_int, check_rng
from .cameras import (
    PinholeCamera,
    PushbroomCamera,
    PushbroomIntrinsics,
    TwoSlitCamera,
    TwoSlitIntrinsics,
    compose_pushbroom,
    compose_two_slit,
)

__all__ = [
    "random_pinhole_camera",
    "random_points_in_front",
    "random_projective_transform",
    "random_pushbroom_camera",
    "random_pushbroom_intrinsics",
    "random_rotation",
    "random_two_slit_camera",
    "random_two_slit_intrinsics",
]


def random_rotation(rng=None) -> np.ndarray:
    """Uniformly random rotation matrix (QR of a Gaussian matrix), (3, 3)."""
    rng = check_rng(rng)
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    if np.linalg.det(Q) < 0:
        Q[:, 0] *= -1
    return Q


def random_two_slit_intrinsics(rng=None, *, parallel: bool = True) -> TwoSlitIntrinsics:
    """Plausible intrinsics: magnifications 300-1500 px, principal point near 500 px,
    slit angle 40-140 degrees, slit distance 0.2-2 (sign random)."""
    rng = check_rng(rng)
    fu, fv = rng.uniform(300, 1500, size=2)
    u0, v0 = rng.uniform(300, 700, size=2)
    theta = np.radians(rng.uniform(40, 140))
    d = rng.uniform(0.2, 2.0) * rng.choice([-1.0, 1.0])
    intr = TwoSlitIntrinsics.from_parameters(fu, fv, u0, v0, theta, d)
    if not parallel:
        K1, K2 = intr.K1.copy(), intr.K2.copy()
        K1[1, 0], K2[1, 0] = rng.uniform(-0.3, 0.3, size=2)
        intr = TwoSlitIntrinsics(K1, K2, theta, d)
    return intr


def random_pushbroom_intrinsics(rng=None, *, orthogonal: bool = True) -> PushbroomIntrinsics:
    """Speed 0.005-0.05 units per line, magnification 300-1500 px, angle 60-120 degrees."""
    rng = check_rng(rng)
    K2 = np.array([[rng.uniform(300, 1500), rng.uniform(300, 700)], [0.0, 1.0]])
    if not orthogonal:
        K2[1, 0] = rng.uniform(-0.3, 0.3)
    return PushbroomIntrinsics(np.diag([1.0 / rng.uniform(0.005, 0.05), 1.0]), K2,
                               np.radians(rng.uniform(60, 120)))


def _look_at_pose(rng, distance):
    """A pose looking at the origin from ``distance`` along a random direction."""
    R = random_rotation(rng)
    tvec = np.array([0.0, 0.0, distance]) + rng.normal(scale=0.1 * distance, size=3)
    tvec[2] = abs(tvec[2])
    from .geometry.projective import rvec_from_matrix

    return rvec_from_matrix(R), tvec


def random_two_slit_camera(rng=None, *, distance: float = 5.0, parallel: bool = True,
                           intrinsics: TwoSlitIntrinsics | None = None) -> TwoSlitCamera:
    """A finite two-slit camera a few units from the origin, seeing the origin in front.

    The slits lie at depths 0 and ``-d`` in camera coordinates, so the scene near the origin
    is in front of both when ``distance > |d|``.
    """
    rng = check_rng(rng)
    intr = intrinsics if intrinsics is not None else random_two_slit_intrinsics(
        rng, parallel=parallel)
    rvec, tvec = _look_at_pose(rng, max(distance, 2 * abs(intr.d) + 1.0))
    return compose_two_slit(intr, rvec, tvec)


def random_pushbroom_camera(rng=None, *, distance: float = 5.0, orthogonal: bool = True,
                            intrinsics: PushbroomIntrinsics | None = None) -> PushbroomCamera:
    """A pushbroom camera with its scanning planes about ``distance`` from the origin."""
    rng = check_rng(rng)
    intr = intrinsics if intrinsics is not None else random_pushbroom_intrinsics(
        rng, orthogonal=orthogonal)
    rvec, tvec = _look_at_pose(rng, distance)
    return compose_pushbroom(intr, rvec, tvec)


def random_pinhole_camera(rng=None, *, distance: float = 5.0) -> PinholeCamera:
    rng = check_rng(rng)
    f = rng.uniform(300, 1500)
    K = np.array([[f, 0, rng.uniform(300, 700)], [0, f, rng.uniform(300, 700)], [0, 0, 1]])
    rvec, tvec = _look_at_pose(rng, distance)
    return PinholeCamera.from_intrinsics(K, rvec, tvec)


def random_points_in_front(cameras, n: int, rng=None, *, radius: float = 1.0) -> np.ndarray:
    """``n`` points uniform in a ball of ``radius`` around the origin, in front of all cameras.

    Returns
    -------
    X : (n, 3) ndarray
    """
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    cams = cameras if isinstance(cameras, (list, tuple)) else [cameras]
    out = np.empty((0, 3))
    for _ in range(100):
        X = rng.normal(size=(4 * n, 3))
        X *= radius * rng.uniform(size=(4 * n, 1)) ** (1 / 3) / np.linalg.norm(X, axis=1,
                                                                               keepdims=True)
        ok = np.ones(len(X), bool)
        for cam in cams:
            ok &= cam.in_front(X)
        out = np.vstack([out, X[ok]])
        if len(out) >= n:
            return out[:n]
    raise ValueError("cameras: could not find points in front of every camera near the origin")


def random_projective_transform(rng=None) -> np.ndarray:
    """A well-conditioned random 4x4 projective transformation."""
    rng = check_rng(rng)
    H = np.eye(4) + 0.3 * rng.normal(size=(4, 4))
    return H
