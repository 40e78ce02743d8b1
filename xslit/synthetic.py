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
    compose_camera,
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
    "random_two_view_scene",
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


def random_two_view_scene(rng=None, n: int = 300, *, image_size: int = 1000,
                          sigma: float = 0.0, outlier_ratio: float = 0.0,
                          kind: str = "two_slit", baseline: float = 1.0, depth: float = 5.0):
    """A calibrated stereo rig, points filling both images, noise and outliers.

    Camera 1 sits at the origin (its canonical frame); camera 2 is about ``baseline`` to the
    side, slightly rotated; the scene is a box about ``depth`` in front. Points are kept when
    in front of both cameras and inside both ``image_size`` squares.

    Parameters
    ----------
    kind : {"two_slit", "pushbroom", "mixed"}
        "mixed" makes camera 2 a pushbroom camera.

    Returns
    -------
    dict
        ``intrinsics1, intrinsics2, camera1, camera2, rvec, tvec`` (pose of camera 2),
        ``X`` (n, 3), ``points1, points2`` (n, 2) observed, ``inliers`` (n,) bool (False for
        the outliers, whose ``points2`` are uniform in the image).
    """
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    if kind not in ("two_slit", "pushbroom", "mixed"):
        raise ValueError(f"kind must be 'two_slit', 'pushbroom' or 'mixed', got {kind!r}")
    for _ in range(50):
        i1 = random_two_slit_intrinsics(rng) if kind != "pushbroom" else None
        if kind == "pushbroom":
            i1 = random_pushbroom_intrinsics(rng)
            i1 = PushbroomIntrinsics(np.diag([image_size / 4.0, 1.0]), i1.K2, i1.theta)
        i2 = (random_two_slit_intrinsics(rng) if kind == "two_slit" else
              PushbroomIntrinsics(np.diag([image_size / 4.0, 1.0]),
                                  random_pushbroom_intrinsics(rng).K2,
                                  np.radians(rng.uniform(60, 120))))
        cam1 = compose_camera(i1, np.zeros(3), np.zeros(3))
        rvec = rng.normal(scale=0.1, size=3)
        tvec = np.array([-baseline, 0.0, 0.0]) + rng.normal(scale=0.1 * baseline, size=3)
        tvec *= baseline / np.linalg.norm(tvec)
        cam2 = compose_camera(i2, rvec, tvec)
        X = rng.uniform(-2, 2, size=(40 * n, 3)) + np.array([0.0, 0.0, depth])
        p1, p2 = cam1.project(X), cam2.project(X)
        ok = cam1.in_front(X) & cam2.in_front(X)
        with np.errstate(invalid="ignore"):
            ok &= ((p1 >= 0) & (p1 < image_size)).all(1) & ((p2 >= 0) & (p2 < image_size)).all(1)
        if ok.sum() >= n:
            break
    else:
        raise ValueError("could not place a rig seeing n points; lower n or image_size")
    X, p1, p2 = X[ok][:n], p1[ok][:n], p2[ok][:n]
    q1 = p1 + rng.normal(scale=sigma, size=p1.shape) if sigma > 0 else p1.copy()
    q2 = p2 + rng.normal(scale=sigma, size=p2.shape) if sigma > 0 else p2.copy()
    inl = np.ones(n, bool)
    n_out = round(outlier_ratio * n)
    if n_out:
        idx = rng.choice(n, n_out, replace=False)
        q2[idx] = rng.uniform(0, image_size, size=(n_out, 2))
        inl[idx] = False
    return {"intrinsics1": i1, "intrinsics2": i2, "camera1": cam1, "camera2": cam2,
            "rvec": rvec, "tvec": tvec, "X": X, "points1": q1, "points2": q2, "inliers": inl}
