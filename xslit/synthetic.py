"""Seeded generators of synthetic cameras and scenes (``random_*``), used by tests and tools.

Every generator takes ``rng: None | int | numpy.random.Generator``.

:func:`random_sweep_scene` draws calibrated two-view scenes from a wide space (two-slit,
mixed and pushbroom pairs; slit distances, angles, focal lengths, principal points, coverage,
baselines, rotations, planar structure, noise, outliers, sizes); :func:`ml_from_truth` and
:func:`noise_ceiling` say what the data of a scene allow; :func:`sweep_two_view` and
:func:`summarize_sweep` measure an estimator against them over many seeded scenes, by region of
the scene space (``tools/sweep_two_view.py`` runs them on ``findEpipolarTensor`` and
``recoverTwoSlitPose``).
"""

from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass, field

import numpy as np

from ._checks import check_array, check_mask, check_matrix, check_positive_int, check_rng
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
from .epipolar import MIN_LINEAR_POINTS, epipolar_tensor, sampson_distance
from .epipolar.estimate import EpipolarProblem
from .epipolar.variety import refine_on_variety
from .geometry.projective import matrix_from_rvec, rvec_from_matrix, skew
from .robust import chance_inlier_ratio, chance_verdict, msac_loss
from .sfm import (
    fit_metric_pose_robust,
    pose_distances,
    refine_metric_pose,
    reprojection_residuals,
)
from .sfm.lm import numeric_block_jacobian

__all__ = [
    "DEGENERATE_SAME_FLIGHT_LINE",
    "DETERMINED_CONDITION",
    "DETERMINED_ROTATION_DEG",
    "DETERMINED_TRANSLATION_REL",
    "MIN_PUSHBROOM_ANGLE_DEG",
    "SAME_INTRINSICS_PROBABILITY",
    "SWEEP_BASELINES",
    "SWEEP_BINS",
    "SWEEP_KINDS",
    "SWEEP_RANGES",
    "MLYardstick",
    "NoiseCeiling",
    "SweepScene",
    "calibration_target_points",
    "ml_from_truth",
    "ml_within_threshold",
    "noise_ceiling",
    "pushbroom_at_sensor_angle",
    "random_along_track_pair",
    "random_calibration_views",
    "random_pinhole_camera",
    "random_points_in_front",
    "random_projective_transform",
    "random_projective_two_slit_cameras",
    "random_pushbroom_camera",
    "random_pushbroom_intrinsics",
    "random_resection_scene",
    "random_rig_correspondences",
    "random_rotation",
    "random_sweep_scene",
    "random_two_slit_camera",
    "random_two_slit_intrinsics",
    "random_two_view_scene",
    "rotation_error_deg",
    "score_two_view",
    "summarize_sweep",
    "sweep_two_view",
    "translation_errors",
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
    """Speed 0.005-0.05 units per line, magnification 300-1500 px, principal point 300-700 px,
    sensor line at 60-120 degrees to the flight line; with ``orthogonal=False`` the view is
    also tilted 0-17 degrees fore or aft (the motion is then not orthogonal to the optical
    axis)."""
    rng = check_rng(rng)
    f, u = rng.uniform(300, 1500), rng.uniform(300, 700)
    tilt = 0.0 if orthogonal else float(np.arctan(rng.uniform(-0.3, 0.3)))
    v = rng.uniform(0.005, 0.05)
    return pushbroom_at_sensor_angle(v, f, u, np.radians(rng.uniform(60, 120)), tilt)


def pushbroom_at_sensor_angle(v, f, u, theta, tilt=0.0) -> PushbroomIntrinsics:
    """Pushbroom intrinsics whose sensor line makes the angle ``theta`` with the flight line.

    The parameters of Proposition 2 (``theta``: angle between the slits, ``f``: the entry of
    ``K2``), as :class:`PushbroomIntrinsics` reads them: the magnification along the sensor
    is ``f sin(theta)`` and the yaw ``theta - pi/2``.
    """
    return PushbroomIntrinsics.from_parameters(v, f * np.sin(theta), u, theta - np.pi / 2, tilt)


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


def random_rig_correspondences(camera1, camera2, n: int, low, high, *, sigma: float = 0.0,
                                outlier_ratio: float = 0.0, image_size=(640, 480), rng=None):
    """Correspondences of a fixed rig: points uniform in the box ``[low, high]``, Gaussian
    noise of ``sigma`` pixels per coordinate, and a fraction of pairs whose second pixel is
    replaced by a uniform pixel of ``image_size`` (outliers).

    Parameters
    ----------
    camera1, camera2 : TwoSlitCamera
    n : int
    low, high : (3,) array_like
        Corners of the box, in world coordinates.
    sigma : float
    outlier_ratio : float in [0, 1]
    image_size : (width, height)
    rng : None, int or numpy.random.Generator

    Returns
    -------
    dict
        ``X`` (n, 3), ``points1``, ``points2`` (n, 2) and ``inliers`` (n,) bool.

    Examples
    --------
    >>> from xslit.cameras import TwoSlitCamera
    >>> a = TwoSlitCamera([[1, 0, 0, 0], [0, 0, 1, 0]], [[0, 2, 0, 0], [0, 0, 1, 1]])
    >>> b = TwoSlitCamera([[1, 0, 0, 1], [0, 0, 1, 0]], [[0, 1, 0, 0], [0, 0, 1, 2]])
    >>> s = random_rig_correspondences(a, b, 20, [-1, -1, 4], [1, 1, 8], rng=0)
    >>> bool(np.allclose(s["points1"], a.project(s["X"])))
    True
    """
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    low = check_array("low", low).reshape(3)
    high = check_array("high", high).reshape(3)
    if not np.all(np.isfinite(low) & np.isfinite(high) & (low <= high)):
        raise ValueError(f"low and high must be finite with low <= high, got {low} and {high}")
    if not 0.0 <= outlier_ratio <= 1.0:
        raise ValueError(f"outlier_ratio must be in [0, 1], got {outlier_ratio!r}")
    if not (np.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
    X = np.column_stack([rng.uniform(low[k], high[k], n) for k in range(3)])
    p1 = camera1.project(X) + rng.normal(scale=sigma, size=(n, 2))
    p2 = camera2.project(X) + rng.normal(scale=sigma, size=(n, 2))
    inliers = np.ones(n, bool)
    k = round(outlier_ratio * n)
    if k:
        idx = rng.choice(n, k, replace=False)
        p2[idx] = rng.uniform([0, 0], image_size, size=(k, 2))
        inliers[idx] = False
    return {"X": X, "points1": p1, "points2": p2, "inliers": inliers}


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
            i1 = PushbroomIntrinsics.from_parameters(4.0 / image_size, i1.f, i1.u, i1.yaw)
        if kind == "two_slit":
            i2 = random_two_slit_intrinsics(rng)
        else:
            # The entry K2[0, 0] of Proposition 2 and the principal point of one draw, the
            # sensor angle of another.
            drawn = random_pushbroom_intrinsics(rng)
            i2 = pushbroom_at_sensor_angle(4.0 / image_size, drawn.f / np.cos(drawn.yaw),
                                           drawn.u, np.radians(rng.uniform(60, 120)))
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


# -----------------------------------------------------------------------------------------
# Wide two-view scenes, the maximum-likelihood-from-truth yardstick, and sweeps over them.
# -----------------------------------------------------------------------------------------

#: Camera kinds of :func:`random_sweep_scene` and their probabilities in the default draw.
SWEEP_KINDS = ("two_slit", "mixed", "pushbroom")
_KIND_PROBABILITIES = (0.5, 0.25, 0.25)
#: Baseline directions in camera 1's frame: x (sideways), z (forward), y (vertical), random.
SWEEP_BASELINES = ("sideways", "forward", "vertical", "mixed")

#: Ranges of the default draw of :func:`random_sweep_scene` (``log`` marks log-uniform draws).
#: ``principal_point`` is in units of the image size (``-0.5`` is half an image left of the
#: image), ``coverage`` is the fraction of image 1's area that the points span, ``slit_ratio``
#: is ``|d| / depth``, ``baseline_ratio`` is ``|baseline| / depth``, ``depth_extent`` is the
#: depth of the box relative to ``depth``, ``convergence`` is how much of the turn towards the
#: scene centre camera 2 makes (0: no turn, 1: the scene centre at its image centre).
SWEEP_RANGES = {
    "n": (30, 10000, "log"),
    "image_width": (640, 2000, "uniform"),
    "slit_ratio": (0.005, 1.0, "log"),
    "slit_angle_deg": (20.0, 160.0, "uniform"),
    "pushbroom_angle_deg": (60.0, 120.0, "uniform"),
    "focal": (200.0, 3000.0, "log"),
    "principal_point": (-0.5, 1.5, "uniform"),
    "pushbroom_aspect": (0.5, 2.0, "log"),
    "coverage": (0.2, 1.0, "uniform"),
    "baseline_ratio": (0.02, 0.5, "log"),
    "rotation_deg": (0.0, 30.0, "uniform"),
    "convergence": (0.9, 1.0, "uniform"),
    "depth": (1.0, 50.0, "log"),
    "depth_extent": (0.1, 1.0, "uniform"),
    "plane_fraction": (0.0, 0.8, "uniform"),
    "plane_tilt_deg": (0.0, 60.0, "uniform"),
    "sigma": (0.1, 2.0, "log"),
    "outlier_ratio": (0.0, 0.7, "uniform"),
}

#: Probability that camera 2 has camera 1's intrinsics (a rig of two equal cameras) when both
#: have the same model; otherwise its intrinsics are drawn on their own.
SAME_INTRINSICS_PROBABILITY = 0.3
#: Pushbroom pairs whose along-track or flight directions are closer than this (degrees) are
#: redrawn in the default draw (at 0 the two cameras share a slit and the tensor is undetermined).
MIN_PUSHBROOM_ANGLE_DEG = 5.0
#: The explicit degenerate configuration that ``random_sweep_scene(degenerate=...)`` builds.
DEGENERATE_SAME_FLIGHT_LINE = "same flight line"
_MAX_ATTEMPTS = 500
#: Parameters drawn once per scene: a redraw (cameras not seeing the scene) changes the others.
_KEPT_ACROSS_DRAWS = ("kind", "pushbroom_first", "n", "baseline", "sigma", "outlier_ratio",
                      "plane_fraction", "same_intrinsics")
_ROTATION_SLACK_DEG = 0.0
_PILOT = 600
_MIN_VISIBLE = 0.03


@dataclass
class SweepScene:
    """A calibrated two-view scene with its ground truth (result of :func:`random_sweep_scene`).

    Attributes
    ----------
    camera1, camera2 : TwoSlitCamera
        Camera 1 in its canonical frame (zero pose); :class:`PushbroomCamera` for pushbroom.
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
    R : (3, 3) ndarray
    t : (3,) ndarray
        Pose of camera 2: ``X2 = R X1 + t`` (what calibrated ``recoverTwoSlitPose`` returns).
    F : (2, 2, 2, 2) ndarray
        The true epipolar tensor ``epipolar_tensor(camera1.A1, camera1.A2, camera2.A1,
        camera2.A2)``, unit Frobenius norm.
    X : (N, 3) ndarray
        Scene points in camera 1's frame; NaN on the outlier rows.
    points1, points2 : (N, 2) ndarray
        Observed pixels: noisy projections on inlier rows, random pixel pairs on outlier rows.
    inliers : (N,) bool ndarray
    sigma : float
        Standard deviation of the pixel noise (per coordinate).
    image_size : (int, int)
        ``(width, height)`` of both images; noise-free projections lie inside.
    params : dict
        The drawn parameters (scalars and strings; see :func:`random_sweep_scene`).
    seed : int or None
        The integer seed the scene was drawn from (None when a Generator was passed).
    """

    camera1: TwoSlitCamera
    camera2: TwoSlitCamera
    intrinsics1: object
    intrinsics2: object
    R: np.ndarray
    t: np.ndarray
    F: np.ndarray
    X: np.ndarray
    points1: np.ndarray
    points2: np.ndarray
    inliers: np.ndarray
    sigma: float
    image_size: tuple
    params: dict = field(default_factory=dict)
    seed: int | None = None


def _draw(rng, name):
    lo, hi, how = SWEEP_RANGES[name]
    if how == "log":
        return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
    return float(rng.uniform(lo, hi))


def _draw_parameters(rng) -> dict:
    """Every parameter, always drawn in the same order (overrides do not shift the stream)."""
    p = {"kind": str(rng.choice(SWEEP_KINDS, p=_KIND_PROBABILITIES)),
         "pushbroom_first": bool(rng.random() < 0.5),
         "n": round(_draw(rng, "n")),
         "image_width": int(rng.integers(640, 2001))}
    for k in (1, 2):
        p[f"slit_ratio{k}"] = _draw(rng, "slit_ratio")
        p[f"slit_sign{k}"] = float(rng.choice([-1.0, 1.0]))
        p[f"slit_angle{k}_deg"] = _draw(rng, "slit_angle_deg")
        p[f"pushbroom_angle{k}_deg"] = _draw(rng, "pushbroom_angle_deg")
        p[f"focal_u{k}"] = _draw(rng, "focal")
        p[f"focal_v{k}"] = _draw(rng, "focal")
        p[f"principal_u{k}"] = _draw(rng, "principal_point")
        p[f"principal_v{k}"] = _draw(rng, "principal_point")
    p["pushbroom_aspect"] = _draw(rng, "pushbroom_aspect")
    p["fill2"] = float(rng.uniform(0.5, 1.0))
    p["coverage"] = _draw(rng, "coverage")
    p["window_x"], p["window_y"] = (float(v) for v in rng.uniform(size=2))
    p["baseline"] = str(rng.choice(SWEEP_BASELINES))
    p["baseline_sign"] = float(rng.choice([-1.0, 1.0]))
    p["baseline_mixed"] = rng.normal(size=3)
    p["baseline_ratio"] = _draw(rng, "baseline_ratio")
    p["rotation_deg"] = _draw(rng, "rotation_deg")
    p["convergence"] = _draw(rng, "convergence")
    p["depth"] = _draw(rng, "depth")
    p["depth_extent"] = _draw(rng, "depth_extent")
    p["plane_fraction"] = _draw(rng, "plane_fraction")
    p["plane_tilt_deg"] = _draw(rng, "plane_tilt_deg")
    p["plane_azimuth"] = float(rng.uniform(0, 2 * np.pi))
    p["sigma"] = _draw(rng, "sigma")
    p["outlier_ratio"] = _draw(rng, "outlier_ratio")
    p["same_intrinsics"] = bool(rng.random() < SAME_INTRINSICS_PROBABILITY)
    return p


def _check_real(name, value, lo=-np.inf, hi=np.inf, *, lo_open=False, hi_open=False):
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
    if ok:
        ok = (value > lo if lo_open else value >= lo) and (value < hi if hi_open else value <= hi)
    if not ok:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        raise ValueError(f"{name} must be a real number in {left}{lo}, {hi}{right}, got {value!r}")
    return float(value)


def _apply_overrides(p: dict, overrides: dict) -> None:
    """Validate the user's overrides and write them into the drawn parameters ``p``."""
    scalar = {  # name: (lo, hi, lo_open, hi_open)
        "slit_ratio": (0.0, np.inf, True, True),
        "slit_angle_deg": (0.0, 180.0, True, True),
        "pushbroom_angle_deg": (0.0, 180.0, True, True),
        "focal": (0.0, np.inf, True, True),
        "coverage": (0.0, 1.0, True, False),
        "baseline_ratio": (0.0, np.inf, True, True),
        "rotation_deg": (0.0, 180.0, False, True),
        "convergence": (0.0, 1.0, False, False),
        "depth": (0.0, np.inf, True, True),
        "depth_extent": (0.0, 1.0, True, False),
        "plane_fraction": (0.0, 1.0, False, False),
        "plane_tilt_deg": (0.0, 80.0, False, False),
        "sigma": (0.0, np.inf, False, True),
        "outlier_ratio": (0.0, 1.0, False, True),
    }
    allowed = set(scalar) | {"kind", "n", "image_width", "principal_point", "baseline",
                             "pushbroom_first", "same_intrinsics", "degenerate"}
    for name, value in overrides.items():
        if name not in allowed:
            raise ValueError(f"{name} is not a parameter of random_sweep_scene; expected one of "
                             f"{', '.join(sorted(allowed))}")
        if name in scalar:
            v = _check_real(name, value, scalar[name][0], scalar[name][1],
                            lo_open=scalar[name][2], hi_open=scalar[name][3])
            if name in ("slit_ratio", "slit_angle_deg", "pushbroom_angle_deg"):
                stem = name[:-4] if name.endswith("_deg") else name
                for k in (1, 2):
                    p[f"{stem}{k}_deg" if name.endswith("_deg") else f"{stem}{k}"] = v
            elif name == "focal":
                for k in (1, 2):
                    p[f"focal_u{k}"] = p[f"focal_v{k}"] = v
            else:
                p[name] = v
        elif name == "kind":
            if value not in SWEEP_KINDS:
                raise ValueError(f"kind must be one of {SWEEP_KINDS}, got {value!r}")
            p["kind"] = value
        elif name == "baseline":
            if value not in SWEEP_BASELINES:
                raise ValueError(f"baseline must be one of {SWEEP_BASELINES}, got {value!r}")
            p["baseline"] = value
        elif name == "n":
            p["n"] = check_positive_int("n", value, minimum=15)
        elif name == "image_width":
            p["image_width"] = check_positive_int("image_width", value, minimum=64)
        elif name in ("pushbroom_first", "same_intrinsics"):
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be a bool, got {value!r}")
            p[name] = bool(value)
        elif name == "principal_point":
            pp = np.asarray(value, dtype=float) if np.ndim(value) == 1 else None
            if pp is None or pp.shape != (2,) or not np.all(np.isfinite(pp)):
                raise ValueError(f"principal_point must be a pair (u0, v0) of finite pixel "
                                 f"coordinates, got {value!r}")
            p["principal_point_px"] = pp
        elif name == "degenerate":
            if value not in (None, DEGENERATE_SAME_FLIGHT_LINE):
                raise ValueError(f"degenerate must be None or {DEGENERATE_SAME_FLIGHT_LINE!r}, "
                                 f"got {value!r}")
            if value is not None and overrides.get("kind", "pushbroom") != "pushbroom":
                raise ValueError(f"degenerate={value!r} needs kind='pushbroom', got kind="
                                 f"{overrides['kind']!r}")
            p["degenerate_request"] = value
            if value is not None:
                p["kind"] = "pushbroom"


def _axis_rotation(axis, angle) -> np.ndarray:
    """Rotations by ``angle`` (scalar or (K,)) about the unit ``axis``: (3, 3) or (K, 3, 3)."""
    angle = np.asarray(angle, dtype=float)
    return matrix_from_rvec(angle[..., None] * np.asarray(axis, dtype=float))


def _rotation_angle(R) -> np.ndarray:
    """Angle in radians of rotations ``(..., 3, 3)`` (atan2 of sine and cosine: accurate for
    small angles, where the arccos of the trace loses half the digits)."""
    c = (np.trace(R, axis1=-2, axis2=-1) - 1.0) / 2.0
    w = np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0],
                  R[..., 1, 0] - R[..., 0, 1]], axis=-1)
    return np.arctan2(0.5 * np.linalg.norm(w, axis=-1), c)


def _roll_to_angle(Rk, n, alpha) -> float:
    r"""The roll :math:`\rho` about unit ``n`` whose ``Rot(n, rho) Rk`` has angle closest to
    ``alpha``, smallest in magnitude among the equally close ones.

    With Rodrigues' formula the trace is :math:`a + b \cos\rho + c \sin\rho`, where
    :math:`a = n^T R_k n`, :math:`b = \mathrm{tr} R_k - a`, :math:`c = \mathrm{tr}([n]_\times
    R_k)`; the angle is :math:`\arccos((\mathrm{tr} - 1) / 2)`.
    """
    a = n @ Rk @ n
    b = np.trace(Rk) - a
    c = np.trace(skew(n) @ Rk)
    amplitude, phase = np.hypot(b, c), np.arctan2(c, b)
    target = 1.0 + 2.0 * np.cos(alpha) - a
    if amplitude < 1e-15:
        return 0.0
    x = np.clip(target / amplitude, -1.0, 1.0)
    rolls = np.array([phase + np.arccos(x), phase - np.arccos(x)])
    rolls = (rolls + np.pi) % (2 * np.pi) - np.pi
    return float(rolls[np.argmin(np.abs(rolls))])


def _align(a, b):
    """Unit axis and angle of the smallest rotation taking unit ``a`` to unit ``b``."""
    axis = np.cross(a, b)
    s = np.linalg.norm(axis)
    angle = float(np.arctan2(s, a @ b))
    if s < 1e-15:
        axis = np.cross(a, [1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 1.0, 0.0])
        s = np.linalg.norm(axis)
    return axis / s, angle


def _backprojection(intr, pixels):
    """Affine parametrisation of the viewing rays of a camera in its own frame by depth.

    The ray of pixel ``(u, v)`` is ``X(z) = P0 + z P1`` (z: the camera's third coordinate).
    Two-slit: ``x = (u - u0) z / fu``, ``x2 = (v - v0)(z + d) / K2[0,0]`` with
    ``x2 = cos(theta) x + sin(theta) y``; pushbroom: ``x = u v`` and
    ``y - a x = (v - u_p)(z - b x) / f`` (:class:`PushbroomIntrinsics`).

    Returns
    -------
    P0, P1 : (N, 3) ndarray
    """
    u, v = pixels[:, 0], pixels[:, 1]
    zero = np.zeros_like(u)
    if isinstance(intr, PushbroomIntrinsics):
        # Imaged at line u, when the camera has moved by u * velocity: on the ray
        # (y - a x) = k (z - b x) with x = u v.
        a, b = intr.velocity[1:] / intr.v
        x = u * intr.v
        k = (v - intr.u) / intr.f
        P0 = np.stack([x, (a - k * b) * x, zero], axis=1)
        P1 = np.stack([zero, k, np.ones_like(u)], axis=1)
        return P0, P1
    c, s = np.cos(intr.theta), np.sin(intr.theta)
    x0, x1 = zero, (u - intr.K1[0, 1]) / intr.K1[0, 0]
    k = (v - intr.K2[0, 1]) / intr.K2[0, 0]
    a0, a1 = k * intr.d, k
    P0 = np.stack([x0, (a0 - c * x0) / s, zero], axis=1)
    P1 = np.stack([x1, (a1 - c * x1) / s, np.ones_like(u)], axis=1)
    return P0, P1


def _flight_direction(intr) -> np.ndarray:
    """Unit direction of a pushbroom camera's finite slit (the flight line) in its own frame,
    pointing against the motion."""
    return -np.sign(intr.v) * intr.velocity / np.linalg.norm(intr.velocity)


def _make_intrinsics(p, k, model, W, H, depth, speed=1.0):
    pp = p.get("principal_point_px")
    u0 = pp[0] if pp is not None else p[f"principal_u{k}"] * W
    v0 = pp[1] if pp is not None else p[f"principal_v{k}"] * H
    if model == "pushbroom":
        return pushbroom_at_sensor_angle(speed, p[f"focal_v{k}"], v0,
                                         np.radians(p[f"pushbroom_angle{k}_deg"]))
    d = p[f"slit_sign{k}"] * p[f"slit_ratio{k}"] * depth
    return TwoSlitIntrinsics.from_parameters(p[f"focal_u{k}"], p[f"focal_v{k}"] / 2.0, u0, v0,
                                             np.radians(p[f"slit_angle{k}_deg"]), d)


def _sweep_focal(intr) -> float:
    """The magnification the sweep draws for a pushbroom camera: the entry ``K2[0, 0]`` of
    Proposition 2 (see :func:`pushbroom_at_sensor_angle`; the sweep's views are not tilted)."""
    return intr.f / np.cos(intr.yaw)


def _principal_offset(intr, W, H) -> float:
    """Largest distance of a principal point from the image centre, in half image sizes."""
    if isinstance(intr, PushbroomIntrinsics):
        return abs(intr.u - H / 2) / (H / 2)
    return max(abs(intr.u0 - W / 2) / (W / 2), abs(intr.v0 - H / 2) / (H / 2))


def _shared_slits(cam1, cam2):
    """Which slits the cameras share: list of (slit of camera 1, slit of camera 2) indices."""
    from .testing import projective_distance

    out = []
    for i, a in enumerate(cam1.slits):
        for j, b in enumerate(cam2.slits):
            if projective_distance(a, b) < 1e-9:
                out.append((i, j))
    return out


def _visible(cam1, cam2, X, W, H):
    ok = cam1.in_front(X) & cam2.in_front(X)
    for cam in (cam1, cam2):
        px = cam.project(X)
        with np.errstate(invalid="ignore"):
            ok &= (px[:, 0] >= 0) & (px[:, 0] <= W - 1) & (px[:, 1] >= 0) & (px[:, 1] <= H - 1)
    return ok


class _Attempt:
    """One placement of the two cameras and the scene for the drawn parameters."""

    def __init__(self, p):
        self.p = p
        kind = p["kind"]
        W = p["image_width"]
        H = round(0.75 * W)
        self.W, self.H = W, H
        D = p["depth"]
        models = {"two_slit": ("two_slit", "two_slit"), "pushbroom": ("pushbroom", "pushbroom"),
                  "mixed": (("pushbroom", "two_slit") if p["pushbroom_first"]
                            else ("two_slit", "pushbroom"))}[kind]
        self.models = models
        if models[0] == "pushbroom":
            speed1 = D / p["focal_v1"] * p["pushbroom_aspect"]
            intr1 = _make_intrinsics(p, 1, "pushbroom", W, H, D, speed1)
            z_near = 0.0
        else:
            intr1 = _make_intrinsics(p, 1, "two_slit", W, H, D)
            z_near = max(0.0, -intr1.d)
        self.zc = z_near + D
        # Window of image 1 that the points span.
        side = np.sqrt(p["coverage"])
        w, h = side * (W - 1), side * (H - 1)
        x0, y0 = p["window_x"] * (W - 1 - w), p["window_y"] * (H - 1 - h)
        self.window = (x0, y0, w, h)
        P0, P1 = _backprojection(intr1, np.array([[x0 + w / 2, y0 + h / 2]]))
        S = (P0 + self.zc * P1)[0]
        tilt, az = np.radians(p["plane_tilt_deg"]), p["plane_azimuth"]
        self.normal = np.array([np.sin(tilt) * np.cos(az), np.sin(tilt) * np.sin(az),
                                np.cos(tilt)])
        self.S = S
        self.intr1 = intr1
        self.cam1 = compose_camera(intr1, np.zeros(3), np.zeros(3))
        if models[0] == "pushbroom":
            f = _flight_direction(intr1)
            base = (S @ f) * f
        else:
            f, base = None, np.zeros(3)
        # Camera 2: intrinsics (a provisional speed for a pushbroom); its pose and
        # magnifications are fitted to the scene by fit_camera2.
        self.f, self.base = f, base
        self.same = bool(p["same_intrinsics"]) and models[0] == models[1]
        self.intr2 = intr1 if self.same else _make_intrinsics(p, 2, models[1], W, H, D)

    def _pose2(self, intr2):
        """Pose (R, t) of camera 2 for its intrinsics: baseline, partial turn and roll."""
        p, S, D = self.p, self.S, self.p["depth"]
        alpha = np.radians(p["rotation_deg"])
        if p.get("degenerate_request") == DEGENERATE_SAME_FLIGHT_LINE:
            f2 = _flight_direction(intr2)
            axis, angle = _align(self.f, f2)
            R = _axis_rotation(f2, alpha) @ _axis_rotation(axis, angle)
            C2 = self.base + p["baseline_sign"] * p["baseline_ratio"] * D * self.f
            return R, -R @ C2
        direction = {"sideways": np.array([1.0, 0.0, 0.0]),
                     "vertical": np.array([0.0, 1.0, 0.0]),
                     "forward": np.array([0.0, 0.0, 1.0]),
                     "mixed": p["baseline_mixed"] / np.linalg.norm(p["baseline_mixed"])
                     }[p["baseline"]]
        C2 = self.base + p["baseline_sign"] * p["baseline_ratio"] * D * direction
        if isinstance(intr2, TwoSlitIntrinsics) and intr2.d < 0:
            # Its second slit lies |d| in front of its frame origin: step back by as much, as
            # camera 1's scene is placed ``depth`` beyond its nearer slit.
            C2 = C2 - intr2.d * (C2 - S) / np.linalg.norm(C2 - S)
        Q0, Q1 = _backprojection(intr2, np.array([[(self.W - 1) / 2, (self.H - 1) / 2]]))
        dc = Q1[0] / np.linalg.norm(Q1[0])
        # The image-centre ray does not pass through the frame origin of a two-slit camera;
        # a pushbroom's passes through its flight line, on which the origin lies.
        offset = (np.zeros(3) if isinstance(intr2, PushbroomIntrinsics)
                  else Q0[0] - (Q0[0] @ dc) * dc)
        a = (S - C2) / np.linalg.norm(S - C2)
        axis, a0 = _align(a, dc)
        kappa = p["convergence"]
        Rk = _axis_rotation(axis, kappa * a0)
        R = _axis_rotation(dc, _roll_to_angle(Rk, dc, alpha)) @ Rk
        return R, -R @ C2 + kappa * offset

    def fit_camera2(self, pilot, fit_focal):
        """Pose of camera 2 and, with ``fit_focal``, magnifications that make the pilot points
        span about ``fill2`` of its image (clipped to the focal range)."""
        intr2 = self.intr2
        lo, hi, _ = SWEEP_RANGES["focal"]
        fill = self.p["fill2"]
        for it in range(4):
            R, t = self._pose2(intr2)
            if not fit_focal or it == 3:
                break
            cam = compose_camera(intr2, rvec_from_matrix(R), t)
            px = cam.project(pilot)
            ok = cam.in_front(pilot) & np.isfinite(px).all(axis=1)
            if ok.sum() < 10:
                break
            # Twice the interquartile range: the span of uniform points, robust to the few
            # points that project far out near a slit plane of camera 2.
            q = np.percentile(px[ok], [25.0, 75.0], axis=0)
            span = np.maximum(2.0 * (q[1] - q[0]), 1e-9)
            scale = fill * np.array([self.W - 1, self.H - 1]) / span
            if isinstance(intr2, PushbroomIntrinsics):
                intr2 = pushbroom_at_sensor_angle(
                    intr2.v, np.clip(_sweep_focal(intr2) * scale[1], lo, hi), intr2.u,
                    intr2.yaw + np.pi / 2)
            else:
                intr2 = TwoSlitIntrinsics.from_parameters(
                    np.clip(intr2.fu * scale[0], lo, hi),
                    np.clip(2 * intr2.fv * scale[1], lo, hi) / 2, intr2.u0, intr2.v0,
                    intr2.theta, intr2.d)
        self.R, self.t, self.intr2 = R, t, intr2

    def candidates(self, rng, count, plane):
        """``count`` candidate points seen in image 1's window (on the plane or in the box)."""
        x0, y0, w, h = self.window
        px = np.column_stack([x0 + w * rng.uniform(size=count), y0 + h * rng.uniform(size=count)])
        P0, P1 = _backprojection(self.intr1, px)
        D, ext = self.p["depth"], self.p["depth_extent"]
        if plane:
            with np.errstate(divide="ignore", invalid="ignore"):
                z = (self.normal @ self.S - P0 @ self.normal) / (P1 @ self.normal)
            keep = np.isfinite(z) & (np.abs(z - self.zc) <= 0.5 * D)
            z = np.where(keep, z, self.zc)
        else:
            z = self.zc + D * ext * rng.uniform(-0.5, 0.5, size=count)
            keep = np.ones(count, bool)
        return (P0 + z[:, None] * P1)[keep]

    def finish_camera2(self, pilot):
        """Speed and along-track offset of a pushbroom camera 2, fitted to the pilot points."""
        if self.models[1] != "pushbroom":
            self.cam2 = compose_camera(self.intr2, rvec_from_matrix(self.R), self.t)
            return True
        intr2 = self.intr2
        a, b = intr2.velocity[1:] / intr2.v
        Xc = pilot @ self.R.T + self.t
        with np.errstate(divide="ignore", invalid="ignore"):
            v = intr2.f * (Xc[:, 1] - a * Xc[:, 0]) / (Xc[:, 2] - b * Xc[:, 0]) + intr2.u
        seen = (Xc[:, 2] > 0) & (v >= 0) & (v <= self.H - 1)
        if seen.sum() < 10:
            return False
        along = Xc[seen, 0]
        extent = float(np.ptp(along))
        if extent <= 0:
            return False
        speed = extent / ((self.W - 1) * self.p["fill2"])
        delta = (self.W - 1) / 2 * speed - (along.max() + along.min()) / 2
        self.t = self.t + delta * np.array([1.0, a, b])
        self.intr2 = PushbroomIntrinsics.from_parameters(speed, intr2.f, intr2.u, intr2.yaw,
                                                         intr2.tilt)
        self.cam2 = compose_camera(self.intr2, rvec_from_matrix(self.R), self.t)
        return True


def _coverage(X, cam1, cam2, W, H) -> float:
    """Smaller of the two images' fractions of area inside the bounding box of the points."""
    spans = [np.ptp(cam.project(X), axis=0).prod() / ((W - 1) * (H - 1)) for cam in (cam1, cam2)]
    return float(min(spans)) if len(X) else 0.0


def _pushbroom_pair_angle(att) -> float:
    """Smallest angle (degrees) between the along-track or between the flight directions."""
    R = att.R
    r1a, r1b = np.array([1.0, 0.0, 0.0]), R.T @ np.array([1.0, 0.0, 0.0])
    fa, fb = _flight_direction(att.intr1), R.T @ _flight_direction(att.intr2)
    ang = [np.degrees(np.arccos(min(1.0, abs(a @ b)))) for a, b in ((r1a, r1b), (fa, fb))]
    return float(min(ang))


def random_sweep_scene(rng=None, *, max_n: int | None = None, **overrides) -> SweepScene:
    r"""A calibrated two-view scene drawn from a wide space of configurations.

    Camera 1 sits at the origin in its canonical frame; camera 2 is placed at a baseline in
    a chosen direction, turned towards the scene centre (``convergence`` of the turn that
    brings the scene centre to the centre of its image) and rolled about its central ray, so
    that the relative rotation comes as close to the drawn angle as that turn allows. Its
    magnifications (and a pushbroom's speed) are scaled so that the scene spans a drawn
    fraction ``fill2`` of 50-100% of its image, within the focal range (unless ``focal`` is
    given or camera 2 has camera 1's intrinsics, ``same_intrinsics``). Scene points are drawn in
    a window of image 1 (``coverage`` of its area), at depths in a box or on one tilted plane
    (``plane_fraction`` of them), and kept when they lie in front of both cameras and project
    inside both images (noise-free). Inlier observations get Gaussian noise of ``sigma``
    pixels per coordinate; outliers are random pixel pairs, uniform in the images.

    Every parameter is drawn from :data:`SWEEP_RANGES` unless given as a keyword override
    (a scalar applies to both cameras). Parameters are drawn in a fixed order and the points
    come from a separate stream, so a seed gives the same configuration whatever ``max_n``
    and the other overrides are. A draw whose cameras do not see enough of the scene, whose
    turn towards the scene exceeds 30 degrees (principal points far apart make the central
    rays of the two images diverge), or, for a pushbroom pair, whose cameras nearly share a
    slit, is redrawn, keeping the kind, ``n``, the baseline direction, ``sigma``,
    ``outlier_ratio``, ``plane_fraction`` and ``same_intrinsics`` of the first draw (so that
    their distributions stay as drawn); ``params["attempts"]`` counts the draws.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
    max_n : int, optional
        Cap on the number of correspondences (the drawn ``n`` is log-uniform in 30-10,000).
    **overrides
        ``kind`` ("two_slit", "mixed": one pushbroom camera, "pushbroom"), ``n``,
        ``image_width`` (height is 3/4 of it), ``slit_ratio`` (``|d| / depth``, depth measured
        from the slit nearer the scene), ``slit_angle_deg``, ``pushbroom_angle_deg``,
        ``focal`` (pixels, every magnification), ``principal_point`` ((u0, v0) pixels for both
        cameras), ``coverage``, ``baseline`` ("sideways", "forward", "vertical", "mixed"),
        ``baseline_ratio``, ``rotation_deg``, ``convergence``, ``depth``, ``depth_extent``,
        ``plane_fraction``, ``plane_tilt_deg``, ``sigma``, ``outlier_ratio``,
        ``pushbroom_first`` (mixed kind: which camera is the pushbroom), ``same_intrinsics``
        (camera 2 gets camera 1's intrinsics when both have one model), ``degenerate``
        (``"same flight line"``: a pushbroom pair flying along one line, where the tensor is
        undetermined; never drawn by default).

    Returns
    -------
    SweepScene
        ``params`` holds, besides every drawn value: ``kind``, ``n`` (after the cap),
        ``n_requested``, ``image_width``, ``image_height``, ``coverage`` (as realised: the
        smaller of the two images' area fractions in the bounding box of the inliers; the
        drawn value, the window of image 1, is ``coverage_drawn``; camera 2 may see only a
        part of it), ``slit_ratio`` (largest over the
        two-slit cameras, NaN for a pushbroom pair), ``slit_obliquity_deg`` (largest
        ``|theta - 90|`` of the two-slit cameras), ``focal_min``, ``principal_offset``
        (largest distance of a principal point from the image centre, in half image sizes:
        above 1 it is outside), ``baseline_ratio`` (realised, between the frame origins or, for a pushbroom camera, the
        point of its flight line nearest the scene centre) and ``rotation_deg`` (realised),
        ``flight_angle_deg`` (pushbroom pairs: the smaller of the angles between the along-track
        directions and between the flight directions), ``degenerate`` (None or a description
        of the slit the cameras share), and
        ``attempts``.

    Raises
    ------
    ValueError
        For an unknown override or a value outside its domain (naming it), or when no
        placement of the cameras sees the scene after many draws.

    Examples
    --------
    >>> scene = random_sweep_scene(3, max_n=200, kind="two_slit", outlier_ratio=0.0)
    >>> scene.points1.shape, bool(scene.inliers.all())
    ((200, 2), True)
    """
    seed = int(rng) if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) else None
    rng = check_rng(rng)
    if max_n is not None:
        max_n = check_positive_int("max_n", max_n, minimum=15)
    if "degenerate" in overrides and overrides["degenerate"] is not None and \
            "kind" in overrides and overrides["kind"] != "pushbroom":
        raise ValueError(f"degenerate={overrides['degenerate']!r} needs kind='pushbroom', got "
                         f"kind={overrides['kind']!r}")
    point_rng = np.random.default_rng(rng.integers(2**63))
    first = None
    for attempt in range(1, _MAX_ATTEMPTS + 1):  # noqa: B007 (recorded in params)
        p = _draw_parameters(rng)
        if first is None:
            first = {k: p[k] for k in _KEPT_ACROSS_DRAWS}
        p.update(first)  # redraws keep the kind and the data's parameters: no bias on them
        _apply_overrides(p, overrides)
        try:
            att = _Attempt(p)
        except ValueError:  # e.g. a principal point override that leaves no valid camera
            continue
        use_plane = p["plane_fraction"] > 0
        pilot_box = att.candidates(rng, _PILOT, plane=False)
        pilot_plane = att.candidates(rng, _PILOT, plane=True) if use_plane else pilot_box
        att.fit_camera2(np.vstack([pilot_box, pilot_plane]),
                        "focal" not in overrides and not att.same)
        if not att.finish_camera2(np.vstack([pilot_box, pilot_plane])):
            continue
        if not (_visible(att.cam1, att.cam2, pilot_box, att.W, att.H).mean() >= _MIN_VISIBLE
                and len(pilot_plane) > 0.2 * _PILOT
                and _visible(att.cam1, att.cam2, pilot_plane, att.W, att.H).mean()
                >= _MIN_VISIBLE):
            continue
        if (p.get("degenerate_request") is None and np.degrees(_rotation_angle(att.R))
                > SWEEP_RANGES["rotation_deg"][1] + _ROTATION_SLACK_DEG):
            continue  # turning towards the scene needs more than the range of rotations
        flight_angle = np.nan
        if att.models == ("pushbroom", "pushbroom"):
            flight_angle = _pushbroom_pair_angle(att)
            if p.get("degenerate_request") is None and flight_angle < MIN_PUSHBROOM_ANGLE_DEG:
                continue
        break
    else:
        raise ValueError(f"could not place two cameras seeing a scene in {_MAX_ATTEMPTS} draws "
                         f"with overrides {sorted(overrides)}; relax them")
    n_requested = p["n"]
    n = min(n_requested, max_n) if max_n is not None else n_requested
    n_plane = round(p["plane_fraction"] * n)
    parts = []
    for count, plane in ((n - n_plane, False), (n_plane, True)):
        got = np.empty((0, 3))
        for _ in range(1000):
            if len(got) >= count:
                break
            X = att.candidates(point_rng, max(int(2 * (count - len(got)) / _MIN_VISIBLE), 256),
                               plane=plane)
            got = np.vstack([got, X[_visible(att.cam1, att.cam2, X, att.W, att.H)]])
        if len(got) < count:
            raise ValueError("could not draw enough visible points; lower n or relax overrides")
        parts.append(got[:count])
    X = np.vstack(parts)
    X = X[point_rng.permutation(n)]
    cam1, cam2 = att.cam1, att.cam2
    p1, p2 = cam1.project(X), cam2.project(X)
    sigma = p["sigma"]
    q1 = p1 + point_rng.normal(scale=sigma, size=p1.shape) if sigma > 0 else p1.copy()
    q2 = p2 + point_rng.normal(scale=sigma, size=p2.shape) if sigma > 0 else p2.copy()
    inliers = np.ones(n, bool)
    n_out = round(p["outlier_ratio"] * n)
    if n_out:
        idx = point_rng.choice(n, n_out, replace=False)
        size = np.array([att.W - 1, att.H - 1], float)
        q1[idx] = point_rng.uniform(size=(n_out, 2)) * size
        q2[idx] = point_rng.uniform(size=(n_out, 2)) * size
        inliers[idx] = False
        X = X.copy()
        X[idx] = np.nan
    F = epipolar_tensor(cam1.A1, cam1.A2, cam2.A1, cam2.A2)
    F = F / np.linalg.norm(F)
    # The parameters that describe the scene, for grouping results by region.
    intrs = (att.intr1, att.intr2)
    two_slit = [i for i in intrs if isinstance(i, TwoSlitIntrinsics)]
    shared = _shared_slits(cam1, cam2)
    degenerate = None
    if shared:
        finite = any(i == 1 and j == 1 for i, j in shared)
        degenerate = DEGENERATE_SAME_FLIGHT_LINE if finite else "shared slit at infinity"
    focals = [v for i in intrs for v in ((_sweep_focal(i),) if isinstance(i, PushbroomIntrinsics)
                                         else (i.fu, 2 * i.fv))]
    C2 = -att.R.T @ att.t
    base1, base2 = np.zeros(3), C2
    if att.models[0] == "pushbroom":  # the points of the flight lines nearest the scene
        fdir = _flight_direction(att.intr1)
        base1 = (att.S @ fdir) * fdir
    if att.models[1] == "pushbroom":
        fdir = att.R.T @ _flight_direction(att.intr2)
        base2 = C2 + ((att.S - C2) @ fdir) * fdir
    out = {k: v for k, v in p.items() if k not in ("baseline_mixed", "principal_point_px",
                                                  "degenerate_request")}
    out.update({
        "n": n, "n_requested": n_requested, "image_height": att.H,
        "slit_ratio1": (abs(att.intr1.d) / p["depth"] if att.models[0] == "two_slit"
                        else float("nan")),
        "slit_ratio2": (abs(att.intr2.d) / p["depth"] if att.models[1] == "two_slit"
                        else float("nan")),
        "slit_ratio": (max(abs(i.d) for i in two_slit) / p["depth"] if two_slit
                       else float("nan")),
        "slit_obliquity_deg": (max(abs(np.degrees(i.theta) - 90.0) for i in two_slit)
                               if two_slit else float("nan")),
        "focal_min": float(min(focals)),
        "principal_offset": float(max(_principal_offset(i, att.W, att.H) for i in intrs)),
        "baseline_ratio": float(np.linalg.norm(base2 - base1) / p["depth"]),
        "rotation_deg": float(np.degrees(_rotation_angle(att.R))),
        "coverage_drawn": p["coverage"],
        "coverage": _coverage(X[inliers] if inliers.any() else X, cam1, cam2, att.W, att.H),
        "flight_angle_deg": flight_angle,
        "degenerate": degenerate,
        "attempts": attempt,
    })
    for k, intr in ((1, att.intr1), (2, att.intr2)):  # magnifications as realised
        pushbroom = isinstance(intr, PushbroomIntrinsics)
        out[f"focal_u{k}"] = float("nan") if pushbroom else intr.fu
        out[f"focal_v{k}"] = _sweep_focal(intr) if pushbroom else 2 * intr.fv
    return SweepScene(cam1, cam2, att.intr1, att.intr2, att.R.copy(), att.t.copy(), F, X, q1,
                      q2, inliers, float(sigma), (att.W, att.H), out, seed)


#: A scene is *determined* (its data fix the pose) when the maximum-likelihood fit started from
#: the truth has predicted standard deviations (``sigma^2`` times the inverse of the pose block of
#: the Gauss-Newton matrix, the points eliminated) and actual errors below these, and that
#: block's condition number (after scaling it to a unit diagonal) is below the last.
DETERMINED_ROTATION_DEG = 1.0
DETERMINED_TRANSLATION_REL = 0.1
DETERMINED_CONDITION = 1e10


def rotation_error_deg(R, R_true) -> float:
    """Angle in degrees of ``R R_true^T`` for (3, 3) rotations."""
    R = np.asarray(R, dtype=float)
    return float(np.degrees(_rotation_angle(R @ np.asarray(R_true, dtype=float).T)))


def translation_errors(t, t_true) -> tuple[float, float]:
    """``(|t - t_true|, |t - t_true| / |t_true|)`` for (3,) or (3, 1) translations."""
    t = np.ravel(np.asarray(t, dtype=float))
    t_true = np.ravel(np.asarray(t_true, dtype=float))
    err = float(np.linalg.norm(t - t_true))
    return err, err / float(np.linalg.norm(t_true))


@dataclass
class MLYardstick:
    """Result of :func:`ml_from_truth`: what the data of a scene allow.

    Attributes
    ----------
    R : (3, 3) ndarray
    t : (3,) ndarray
        The maximum-likelihood pose of camera 2 (``X2 = R X1 + t``).
    rotation_error_deg, translation_error, translation_rel_error : float
        Its errors against the truth (degrees, scene units, relative to ``|t|``).
    rms : float
        Reprojection RMS per coordinate on the true inliers (pixels).
    rotation_std_deg, translation_std : float
        Predicted standard deviations (root of the trace of the covariance blocks) at the
        scene's ``sigma``.
    condition : float
        Condition number of the pose block of the Gauss-Newton matrix scaled to a unit
        diagonal (inf when singular).
    determined : bool
        See :data:`DETERMINED_ROTATION_DEG`.
    n_inliers : int
    """

    R: np.ndarray
    t: np.ndarray
    rotation_error_deg: float
    translation_error: float
    translation_rel_error: float
    rms: float
    rotation_std_deg: float
    translation_std: float
    condition: float
    determined: bool
    n_inliers: int


def _check_scene(scene):
    if not isinstance(scene, SweepScene):
        raise ValueError(f"scene must be a SweepScene (from random_sweep_scene), got "
                         f"{type(scene).__name__}")
    return scene


def ml_from_truth(scene, *, inliers=None, threshold: float | None = None,
                  max_iterations: int = 50) -> MLYardstick:
    r"""Maximum-likelihood pose and points from the true pose, on the true inliers (or on
    ``inliers``).

    Starting from the true pose and the points triangulated with it,
    :func:`xslit.sfm.refine_metric_pose` minimises the reprojection error over the pose (6)
    and the points (3N). Its errors against the truth are what the data allow: an estimator
    that reaches the same minimum has the same errors. The predicted covariance of the pose
    is

    .. math:: \Sigma = \sigma^2 (U - W V^{-1} W^T)^{-1}

    with ``U, V, W`` the pose, point and cross blocks of :math:`J^T J` at the minimum
    (forward differences); see :data:`DETERMINED_ROTATION_DEG` for when a scene counts as
    determined.

    On the true inliers the yardstick knows which correspondences are outliers; an
    estimator cannot tell the outliers that fall within its threshold of the true pose from
    inliers (on 2,000 correspondences with 60% outliers, 4-9 of them at a 3 sigma threshold,
    which move the least-squares pose by 2-3 of its standard deviations). With ``inliers``
    the correspondences within the threshold of the true tensor (the noise ceiling's
    ``within``), the yardstick is what the data allow without knowing the labels.

    With ``threshold``, the fit maximises the likelihood of inliers and outliers together
    (the truncated quadratic loss that robust estimators minimise) from the truth: after the
    fit on ``inliers``, the correspondences within the threshold of the fitted pose are
    re-selected among all and the pose refitted while the loss falls
    (:func:`xslit.sfm.fit_metric_pose_robust`). A few correspondences near the threshold
    can move a pose by several standard deviations (on sweep scenes, one correspondence
    exchanged for another moved the rotation from 0.16 to 0.56 degrees); which of them are
    inliers is for the data to decide, and this is the pose a robust estimator started at
    the truth reaches. Its predicted deviations are those of its own inliers.

    Parameters
    ----------
    scene : SweepScene
    inliers : (N,) bool array_like, optional
        The correspondences to fit (default ``scene.inliers``).
    threshold : float, optional
        Re-select the inliers at this threshold (pixels), as above.
    max_iterations : int

    Returns
    -------
    MLYardstick

    Examples
    --------
    >>> scene = random_sweep_scene(1, max_n=100, kind="two_slit", sigma=0.0)
    >>> bool(ml_from_truth(scene).rotation_error_deg < 1e-6)
    True
    """
    scene = _check_scene(scene)
    max_iterations = check_positive_int("max_iterations", max_iterations)
    inl = scene.inliers if inliers is None else check_mask("inliers", inliers,
                                                           len(scene.inliers))
    if inl.sum() < 6:
        raise ValueError(f"inliers must select at least 6 correspondences, got {inl.sum()}")
    intr1, intr2 = scene.intrinsics1, scene.intrinsics2
    rvec0 = rvec_from_matrix(scene.R)
    if threshold is None:
        p1, p2 = scene.points1[inl], scene.points2[inl]
        rvec, tvec, X, rms = refine_metric_pose(intr1, intr2, rvec0, scene.t, p1, p2,
                                                max_iterations=max_iterations)
    else:
        fit = fit_metric_pose_robust(intr1, intr2, rvec0, scene.t, scene.points1,
                                     scene.points2, inl, threshold=threshold,
                                     max_iterations=max_iterations)
        rvec, tvec, X, inl, rms = fit.rvec, fit.tvec, fit.points, fit.inliers, None
        p1, p2 = scene.points1[inl], scene.points2[inl]
    R = matrix_from_rvec(rvec)
    rot_err = rotation_error_deg(R, scene.R)
    t_err, t_rel = translation_errors(tvec, scene.t)
    cam1 = compose_camera(intr1, np.zeros(3), np.zeros(3))
    ones = np.ones((len(X), 1))

    def fun(g, pts):
        cam2 = compose_camera(intr2, g[:3], g[3:])
        return reprojection_residuals([cam1, cam2], [p1, p2],
                                      np.concatenate([pts, ones], axis=1))

    g = np.concatenate([rvec, tvec])
    if rms is None:  # the robust fit's reprojection RMS per coordinate on its inliers
        rms = float(np.sqrt(np.mean(fun(g, X) ** 2)))
    Jg, Jp = numeric_block_jacobian(fun, g, X)
    U = np.einsum("nmi,nmj->ij", Jg, Jg)
    V = np.einsum("nmi,nmj->nij", Jp, Jp)
    Wb = np.einsum("nmi,nmj->nij", Jg, Jp)
    cond, rot_std, t_std = np.inf, np.inf, np.inf
    try:
        # A point the data leave free (e.g. sent towards infinity) carries no pose information:
        # the pseudo-inverse drops its null directions instead of failing.
        S = U - np.einsum("nik,nkl,njl->ij", Wb, np.linalg.pinv(V, rcond=1e-12), Wb)
        scale = 1.0 / np.sqrt(np.abs(np.diag(S)))
        Sn = S * scale[:, None] * scale[None, :]
        cond = float(np.linalg.cond(Sn))
        if np.isfinite(cond) and cond < 1e15:
            cov = scene.sigma**2 * (np.linalg.inv(Sn) * scale[:, None] * scale[None, :])
            rot_std = float(np.degrees(np.sqrt(max(np.trace(cov[:3, :3]), 0.0))))
            t_std = float(np.sqrt(max(np.trace(cov[3:, 3:]), 0.0)))
    except np.linalg.LinAlgError:
        pass
    tnorm = float(np.linalg.norm(scene.t))
    determined = bool(cond < DETERMINED_CONDITION
                      and rot_std <= DETERMINED_ROTATION_DEG
                      and t_std <= DETERMINED_TRANSLATION_REL * tnorm
                      and rot_err <= DETERMINED_ROTATION_DEG
                      and t_rel <= DETERMINED_TRANSLATION_REL)
    return MLYardstick(R, np.asarray(tvec, float), rot_err, t_err, t_rel, rms, rot_std, t_std,
                       cond, determined, int(inl.sum()))


@dataclass
class NoiseCeiling:
    """Result of :func:`noise_ceiling`: what the true tensor, and the maximum-likelihood
    tensor started from it, keep at a threshold.

    Attributes
    ----------
    within : (N,) bool ndarray
        Correspondences whose Sampson distance to the true tensor is below the threshold.
    precision, recall : float
        Of ``within`` against the true inliers (NaN when undefined).
    ml_within : (N,) bool ndarray
        The inlier mask of the maximum-likelihood tensor: the true tensor polished on the
        variety (:func:`~xslit.epipolar.variety.refine_on_variety`) on ``within``. An
        estimate cannot know the true tensor; the model that fits the noisy data best keeps
        these.
    ml_precision, ml_recall : float
        Of ``ml_within`` against the true inliers.
    support_needed : int
        Support a model needs so that chance explains it with probability below ``alpha``
        over ``hypotheses`` hypotheses (the non-randomness test of the robust loop, with the
        chance inlier ratio of the true tensor on wrongly paired points).
    decidable : bool
        ``within`` reaches ``support_needed``: the data can tell the true inliers from
        chance. Otherwise no robust estimator can, and a failure with that reason is the
        right answer.
    ml_loss : float
        Truncated quadratic loss (MSAC: the sum over all correspondences of the squared
        Sampson distance capped at the squared threshold) of the maximum-likelihood tensor,
        in pixels squared: the loss that
        robust estimators minimise. An estimate with no higher loss fits the data at least as
        well as the truth's optimum, whatever its mask.
    """

    within: np.ndarray
    precision: float
    recall: float
    ml_within: np.ndarray
    ml_precision: float
    ml_recall: float
    support_needed: int
    decidable: bool
    ml_loss: float = float("nan")


def _precision_recall(mask, inliers) -> tuple[float, float]:
    hit = int((mask & inliers).sum())
    precision = hit / mask.sum() if mask.any() else float("nan")
    recall = hit / inliers.sum() if inliers.any() else float("nan")
    return float(precision), float(recall)


def noise_ceiling(scene, threshold: float, *, alpha: float = 1e-6,
                  hypotheses: int = 10000) -> NoiseCeiling:
    r"""What the data allow an inlier mask to be at ``threshold`` (pixels).

    No estimator can do better on average than the true tensor's mask: with noise, some true
    inliers fall outside the threshold (the Sampson distance is distributed as
    :math:`\sigma |N(0, 1)|`) and some outliers fall inside it by chance. The mask of the
    maximum-likelihood tensor (the truth polished on the data) is what a perfect estimator
    returns; on few correspondences it differs from the truth's by the points near the
    threshold. And when the true tensor's own support is no more than chance would give, the
    inliers cannot be told from outliers at all.

    Parameters
    ----------
    scene : SweepScene
    threshold : float
        Positive, on the Sampson distance, as given to ``findEpipolarTensor``.
    alpha : float
        Significance of the non-randomness test (the robust loop's default).
    hypotheses : int
        Hypotheses the test is corrected for (Bonferroni; at most ``C(n, 15)``): the loop's
        largest number of iterations by default.

    Returns
    -------
    NoiseCeiling
    """
    scene = _check_scene(scene)
    threshold = _check_real("threshold", threshold, 0.0, np.inf, lo_open=True, hi_open=True)
    alpha = _check_real("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    hypotheses = check_positive_int("hypotheses", hypotheses)
    p1, p2, inliers = scene.points1, scene.points2, scene.inliers
    d = sampson_distance(scene.F, p1, p2)
    within = d < threshold
    ml_within = within
    if within.sum() > MIN_LINEAR_POINTS:
        fit = refine_on_variety(scene.F, p1, p2, within, threshold, rng=0)
        ml_within, d = fit.inliers, fit.distances
    # The robust loop's test, with the true tensor's chance inlier ratio on wrong pairs.
    problem = EpipolarProblem(p1, p2)
    p0 = chance_inlier_ratio(problem, problem.model_from_pixels(scene.F), threshold,
                             np.random.default_rng(0))
    needed, _ = chance_verdict(problem, within, p0, hypotheses, alpha)
    return NoiseCeiling(within, *_precision_recall(within, inliers), ml_within,
                        *_precision_recall(ml_within, inliers), needed,
                        bool(within.sum() >= needed), float(msac_loss(d, threshold)))


def ml_within_threshold(scene, threshold: float, *,
                        yardstick: MLYardstick | None = None) -> MLYardstick:
    """Maximum likelihood from the truth on the correspondences within ``threshold`` of the
    true tensor (the noise ceiling's ``within``): what the data allow a pose to be without
    knowing which correspondences are outliers (the yardstick of :func:`score_two_view`).

    The yardstick on the true inliers (``yardstick``, computed when omitted) is returned
    when those are the same correspondences, or when the ones within the threshold are too
    few (under 6) or make no camera pair.

    Parameters
    ----------
    scene : SweepScene
    threshold : float
        Pixels.
    yardstick : MLYardstick, optional
        :func:`ml_from_truth` on the true inliers.

    Returns
    -------
    MLYardstick

    Examples
    --------
    >>> scene = random_sweep_scene(1, max_n=100, kind="two_slit", sigma=0.0)
    >>> bool(ml_within_threshold(scene, 1.0).rotation_error_deg < 1e-6)
    True
    """
    scene = _check_scene(scene)
    threshold = _check_real("threshold", threshold, 0.0, np.inf, lo_open=True, hi_open=True)
    y = yardstick if yardstick is not None else ml_from_truth(scene)
    return _ml_within(scene, noise_ceiling(scene, threshold), y)


def _ml_within(scene, ceiling: NoiseCeiling, y: MLYardstick) -> MLYardstick:
    """:func:`ml_within_threshold` with the scene's noise ceiling and true-inlier yardstick."""
    if ceiling.within.sum() >= 6 and not np.array_equal(ceiling.within, scene.inliers):
        try:
            return ml_from_truth(scene, inliers=ceiling.within)
        except ValueError:  # the within-threshold points make no camera pair
            pass
    return y


def score_two_view(scene, mask, R=None, t=None, *, threshold: float = 1.5,
                   yardstick: MLYardstick | None = None, factor: float = 1.5,
                   F=None, status: str | None = None, covariance=None) -> dict:
    r"""Score an estimate of a scene: inlier mask and pose against the noise ceiling and ML.

    Precision and recall ratios divide the mask's precision and recall (against the true
    inliers) by those of :func:`noise_ceiling` at ``threshold``. Pose errors are compared with
    the yardstick of :func:`ml_from_truth` through

    .. math:: \rho = \frac{e}{\max(e_{ML}, s_{ML})}

    (``s_ML`` its predicted standard deviation, so that a yardstick that is lucky on one
    scene does not make the ratio meaningless; on noise-free data the denominators are at
    least 1e-6 degrees and 1e-6 ``|t|``); the pose is *within* when both ratios are at most
    ``factor``. Maximum likelihood on the true inliers uses labels no estimator knows (the
    ``oracle_*`` ratios); the ratios that decide ``pose_within`` divide by the larger of its
    error, that of maximum likelihood on the correspondences within the threshold of the
    true tensor (what the data allow without the labels) and that of the robust maximum
    likelihood from the truth (``ml_from_truth`` with ``threshold``: the data, not the true
    tensor, decide which correspondences near the threshold are inliers), and by its
    predicted deviation; ``mask_rotation_ratio``, ``mask_translation_ratio`` and
    ``pose_within_mask`` leave the robust one out. Poses are judged on scenes both
    determined and decidable (``pose_judged``): on an undecidable scene the only right
    answer is a failure.

    With the estimated tensor ``F``, ``tensor_loss_ratio`` is its truncated quadratic loss
    over all correspondences divided by that of the maximum-likelihood tensor, and
    ``fits_as_ml`` says that the estimate is as good as the data allow: its mask keeps at
    least 0.99 of the precision and recall of the maximum-likelihood tensor's mask, or it
    fits the data at least as well (a loss ratio of at most 1.001; with few
    correspondences another mask can fit better than the truth's optimum, and no estimator
    could prefer the truth's).

    With a pose, ``pose_loss_ratio`` is the truncated quadratic loss of all correspondences'
    Sampson distances to the pose's tensor (the known intrinsics and ``R, t``; a
    correspondence whose point lies behind a camera counts as an outlier) divided by the
    lower of those of the yardsticks' poses on the correspondences within the threshold
    (fixed, and re-selected by the robust fit), and
    ``pose_fits_as_ml`` says that the pose is as good as the data allow: within ``factor``,
    or fitting the data at least as well as maximum likelihood from the truth (a ratio of at
    most 1.001). Outliers within the threshold of another pose can give the data a second
    optimum of lower loss, which no estimator could reject for the truth's; whether the
    estimator reports it as uncertain is another question.

    With the estimator's ``status`` (:class:`xslit.sfm.CalibratedTwoView`'s) and the
    ``covariance`` of its ``[rvec, t]``, ``pose_reported`` says that the estimate carries its
    uncertainty: the status is ``"ambiguous"`` or ``"undetermined"``, or the error
    ``[rvec - rvec_true, t - t_true]`` lies within the 0.999 quantile of chi-square with 6
    degrees of freedom in the covariance's metric. On a scene the data do not determine, that
    is the honest answer when a pose is returned.

    Parameters
    ----------
    scene : SweepScene
    mask : (N,) or (N, 1) array_like
        Non-zero for the correspondences the estimator kept.
    R : (3, 3) array_like, optional
    t : (3,) or (3, 1) array_like, optional
        The estimated pose; None when the pose was not estimated.
    threshold : float
    yardstick : MLYardstick, optional
        Computed when omitted.
    factor : float
    F : (2, 2, 2, 2) array_like, optional
        The estimated tensor.
    status : str, optional
    covariance : (6, 6) array_like, optional
        The pose estimator's status and covariance of ``[rvec, t]`` (rotation vector in
        radians).

    Returns
    -------
    dict
        ``precision``, ``recall``, ``ceiling_precision``, ``ceiling_recall``,
        ``precision_ratio``, ``recall_ratio``, ``ml_precision_ratio``, ``ml_recall_ratio``
        (against the maximum-likelihood tensor's mask), ``ml_ceiling_ratio`` (the smaller of
        that mask's precision and recall against the ceiling: what the data allow the
        ratios to be), ``support_needed``, ``decidable``
        (see :func:`noise_ceiling`), ``n_mask``, the yardstick's figures
        (``ml_*``, on the true inliers), ``determined``, ``pose_judged``, with ``F``
        ``tensor_loss_ratio`` and ``fits_as_ml``, and with a pose ``rotation_error_deg``,
        ``translation_error``, ``translation_rel_error``, ``rotation_ratio``,
        ``translation_ratio`` (against the yardstick on the correspondences within the
        threshold), ``mask_rotation_ratio``, ``mask_translation_ratio``,
        ``pose_within_mask`` (without the robust yardstick), ``ml_robust_rotation_error_deg``,
        ``ml_robust_translation_error``, ``oracle_rotation_ratio``,
        ``oracle_translation_ratio`` (on the true inliers), ``pose_within``,
        ``pose_loss_ratio``, ``pose_fits_as_ml``, and with a
        ``status`` ``pose_status`` and ``pose_reported``.
    """
    scene = _check_scene(scene)
    n = len(scene.inliers)
    m = check_mask("mask", mask, n)
    factor = _check_real("factor", factor, 0.0, np.inf, lo_open=True, hi_open=True)
    ceiling = noise_ceiling(scene, threshold)
    precision, recall = _precision_recall(m, scene.inliers)
    y = yardstick if yardstick is not None else ml_from_truth(scene)
    rec = {
        "n_mask": int(m.sum()), "precision": float(precision), "recall": float(recall),
        "ceiling_precision": ceiling.precision, "ceiling_recall": ceiling.recall,
        "precision_ratio": float(precision / ceiling.precision) if m.any() else 0.0,
        "recall_ratio": float(recall / ceiling.recall),
        "ml_precision_ratio": float(precision / ceiling.ml_precision) if m.any() else 0.0,
        "ml_recall_ratio": float(recall / ceiling.ml_recall),
        "ml_ceiling_ratio": float(min(ceiling.ml_precision / ceiling.precision,
                                      ceiling.ml_recall / ceiling.recall)),
        "support_needed": ceiling.support_needed, "decidable": ceiling.decidable,
        "ml_rotation_error_deg": y.rotation_error_deg, "ml_translation_error": y.translation_error,
        "ml_translation_rel_error": y.translation_rel_error, "ml_rms": y.rms,
        "ml_rotation_std_deg": y.rotation_std_deg, "ml_translation_std": y.translation_std,
        "ml_condition": y.condition, "determined": y.determined,
        "pose_judged": bool(y.determined and ceiling.decidable),
    }
    if F is not None:
        F = check_array("F", F)
        if F.shape != (2, 2, 2, 2):
            raise ValueError(f"F must have shape (2, 2, 2, 2), got {F.shape}")
        ratio = float(msac_loss(sampson_distance(F, scene.points1, scene.points2), threshold)
                      / max(ceiling.ml_loss, 1e-300))
        rec["tensor_loss_ratio"] = ratio
        rec["fits_as_ml"] = bool(ratio <= 1.001 or min(rec["ml_precision_ratio"],
                                                       rec["ml_recall_ratio"]) >= 0.99)
    if R is not None and t is not None:
        rot = rotation_error_deg(check_matrix("R", R, (3, 3)), scene.R)
        t_err, t_rel = translation_errors(check_array("t", t), scene.t)
        tnorm = float(np.linalg.norm(scene.t))

        def ratios(rot_ml, t_ml):
            return (rot / max(rot_ml, y.rotation_std_deg, 1e-6),
                    t_err / max(t_ml, y.translation_std, 1e-6 * tnorm))

        y_data = _ml_within(scene, ceiling, y)
        y_robust = None
        if ceiling.within.sum() >= 8:
            try:
                y_robust = ml_from_truth(scene, inliers=ceiling.within, threshold=threshold)
            except ValueError:  # no pose within the threshold of the truth's fit
                y_robust = None
        # The predicted deviations are the true inliers' (an outlier fitted by a point at a
        # wild depth inflates the information of the other fit).
        rr_mask, tr_mask = ratios(max(y.rotation_error_deg, y_data.rotation_error_deg),
                                  max(y.translation_error, y_data.translation_error))
        rr, tr = rr_mask, tr_mask
        yard_loss = _pose_loss(scene, y_data.R, y_data.t, threshold)
        if y_robust is not None:
            rr, tr = ratios(max(y.rotation_error_deg, y_data.rotation_error_deg,
                                y_robust.rotation_error_deg),
                            max(y.translation_error, y_data.translation_error,
                                y_robust.translation_error))
            yard_loss = min(yard_loss, _pose_loss(scene, y_robust.R, y_robust.t, threshold))
            rec.update({"ml_robust_rotation_error_deg": y_robust.rotation_error_deg,
                        "ml_robust_translation_error": y_robust.translation_error})
        ro, to = ratios(y.rotation_error_deg, y.translation_error)
        within = bool(rr <= factor and tr <= factor)
        loss_ratio = _pose_loss(scene, R, t, threshold) / max(yard_loss, 1e-300)
        rec.update({"rotation_error_deg": rot, "translation_error": t_err,
                    "translation_rel_error": t_rel, "rotation_ratio": float(rr),
                    "translation_ratio": float(tr), "oracle_rotation_ratio": float(ro),
                    "oracle_translation_ratio": float(to),
                    "mask_rotation_ratio": float(rr_mask),
                    "mask_translation_ratio": float(tr_mask),
                    "pose_within_mask": bool(rr_mask <= factor and tr_mask <= factor),
                    "pose_within": within,
                    "pose_loss_ratio": float(loss_ratio),
                    "pose_fits_as_ml": bool(within or loss_ratio <= 1.001)})
        if status is not None:
            rec["pose_status"] = str(status)
            rec["pose_reported"] = bool(status in ("ambiguous", "undetermined")
                                        or _covers(covariance, R, t, scene))
    return rec


def _covers(covariance, R, t, scene) -> bool:
    """Whether the error of ``R, t`` lies within the 0.999 quantile of chi-square(6) in the
    metric of ``covariance`` (6, 6) of ``[rvec, t]``; False without a finite one."""
    from scipy.stats import chi2

    if covariance is None:
        return False
    C = np.asarray(covariance, dtype=float)
    if C.shape != (6, 6) or not np.all(np.isfinite(C)):
        return False
    e = np.concatenate([rvec_from_matrix(np.asarray(R, dtype=float)) - rvec_from_matrix(scene.R),
                        np.ravel(np.asarray(t, dtype=float)) - scene.t])
    return bool(e @ np.linalg.pinv(C) @ e <= chi2.ppf(0.999, 6))


def _pose_loss(scene, R, t, threshold) -> float:
    """Truncated quadratic loss of the Sampson distances of all of a scene's correspondences
    to the tensor of the pose ``R, t`` of camera 2, a correspondence whose point lies behind
    a camera counting as an outlier (:func:`xslit.sfm.pose_distances`, the cost by which
    the calibrated pose ranks its basins). Without cheirality, outliers of a nearly central
    pair that lie on the curves of a pose, with their rays meeting behind the cameras, made
    the yardstick's pose look better than estimates that rightly leave them out (on a sweep
    scene of 1,711 correspondences the truth's pose gained 20 px^2 from four such
    correspondences)."""
    return pose_distances(scene.intrinsics1, scene.intrinsics2,
                          rvec_from_matrix(np.asarray(R, dtype=float)),
                          np.ravel(np.asarray(t, dtype=float)), scene.points1, scene.points2,
                          threshold)[0]


def _region_match(params, region) -> bool:
    for name, want in region.items():
        v = params.get(name)
        if isinstance(want, tuple):
            if v is None or isinstance(v, str) or not (want[0] <= v < want[1]):
                return False
        elif v != want:
            return False
    return True


def sweep_two_view(estimate, seeds, *, max_n: int | None = None, threshold: float = 1.5,
                   threshold_sigmas: float | None = None, overrides: dict | None = None,
                   region: dict | None = None, factor: float = 1.5, count: int | None = None,
                   clock=None) -> list[dict]:
    """Run an estimator on seeded :func:`random_sweep_scene` scenes and score each one.

    Parameters
    ----------
    estimate : callable
        ``estimate(points1, points2, intrinsics1, intrinsics2, threshold) -> dict`` with keys
        ``mask`` ((N,) or (N, 1)), ``R``, ``t`` (None when not estimated) and ``failure``
        (None or the reason). An exception it raises is caught and recorded as the failure.
    seeds : iterable of int
        One scene per seed, in order.
    max_n : int, optional
        Cap on the number of correspondences of each scene.
    threshold : float
        Pixels, passed to ``estimate`` and used for the noise ceiling.
    threshold_sigmas : float, optional
        When given, each scene's threshold is this multiple of its noise ``sigma`` instead.
    overrides : dict, optional
        Passed to :func:`random_sweep_scene`.
    region : dict, optional
        Keep only scenes whose ``params[name]`` equals a value or lies in a ``(lo, hi)``
        interval (half open), for every item.
    factor : float
        Pose tolerance relative to the yardstick (see :func:`score_two_view`).
    count : int, optional
        Stop after this many kept scenes.
    clock : callable, optional
        Returns seconds (e.g. ``time.perf_counter``); when given, ``time_s`` records the time
        ``estimate`` took. Without it the records hold no timing and are reproducible.

    Returns
    -------
    list of dict
        One record per kept scene: ``seed``, ``params``, ``threshold``, ``failure``,
        ``n``, ``n_inliers``, the figures of :func:`score_two_view` (without a mask:
        ``precision_ratio`` and ``recall_ratio`` are 0), and ``time_s``.
    """
    if not callable(estimate):
        raise ValueError(f"estimate must be callable, got {type(estimate).__name__}")
    overrides = dict(overrides or {})
    region = dict(region or {})
    if count is not None:
        count = check_positive_int("count", count)
    threshold = _check_real("threshold", threshold, 0.0, np.inf, lo_open=True, hi_open=True)
    if threshold_sigmas is not None:
        threshold_sigmas = _check_real("threshold_sigmas", threshold_sigmas, 0.0, np.inf,
                                       lo_open=True, hi_open=True)
    records = []
    for seed in seeds:
        if count is not None and len(records) >= count:
            break
        seed = check_positive_int("seeds", seed, minimum=0)
        try:
            scene = random_sweep_scene(seed, max_n=max_n, **overrides)
        except ValueError as exc:
            if not region:
                records.append({"seed": seed, "params": {}, "failure": f"scene: {exc}"})
            continue
        if not _region_match(scene.params, region):
            continue
        thr = threshold if threshold_sigmas is None else max(threshold_sigmas * scene.sigma,
                                                             1e-6)
        rec = {"seed": seed, "params": scene.params, "threshold": thr,
               "n": len(scene.inliers), "n_inliers": int(scene.inliers.sum())}
        out, failure = {}, None
        start = clock() if clock is not None else 0.0
        try:
            out = estimate(scene.points1, scene.points2, scene.intrinsics1, scene.intrinsics2,
                           thr) or {}
            failure = out.get("failure")
        except Exception as exc:  # one scene never stops the sweep; the reason is recorded
            failure = f"{type(exc).__name__}: {exc}"
        if clock is not None:
            rec["time_s"] = clock() - start
        mask = out.get("mask")
        if mask is None:
            mask = np.zeros(len(scene.inliers))
        y = ml_from_truth(scene)
        rec.update(score_two_view(scene, mask, out.get("R"), out.get("t"), threshold=thr,
                                  yardstick=y, factor=factor, F=out.get("F"),
                                  status=out.get("status"), covariance=out.get("covariance")))
        rec["failure"] = failure
        records.append(rec)
    return records


#: Bins of :func:`summarize_sweep`: edges for numbers (the last bin is closed), None for a
#: parameter whose values are categories.
SWEEP_BINS = {
    "kind": None,
    "baseline": None,
    "degenerate": None,
    "n": (30, 100, 300, 1000, 3000, 10000),
    "slit_ratio": (0.005, 0.02, 0.05, 0.2, 1.0),
    "slit_obliquity_deg": (0, 20, 45, 70),
    "focal_min": (200, 400, 800, 1600, 3000),
    "principal_offset": (0, 0.5, 1, 2, 3),
    "coverage": (0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0),
    "baseline_ratio": (0.0, 0.05, 0.1, 0.2, 0.5, np.inf),
    "rotation_deg": (0, 5, 10, 20, 30),
    "depth_extent": (0.1, 0.4, 0.7, 1.0),
    "plane_fraction": (0, 0.2, 0.4, 0.6, 0.8),
    "sigma": (0.1, 0.3, 0.6, 1.2, 2.0),
    "outlier_ratio": (0, 0.2, 0.4, 0.55, 0.7),
}


def _bin_label(value, edges):
    """Label and sort key of the bin of ``value``."""
    if edges is None:
        return str(value), (0, str(value))
    if value is None or not np.isfinite(value):
        return "n/a", (2, 0.0)
    for lo, hi in itertools.pairwise(edges):
        if lo <= value < hi or (hi == edges[-1] and value == hi):
            return (f"[{lo:g}, {hi:g}]" if hi == edges[-1] else f"[{lo:g}, {hi:g})"), (1, lo)
    if value < edges[0]:
        return f"< {edges[0]:g}", (0, -np.inf)
    return f"> {edges[-1]:g}", (1, np.inf)


def _fraction(values, level) -> float:
    return float(np.mean(values >= level)) if len(values) else float("nan")


def _tally(records, factor):
    ok = [r for r in records if "precision_ratio" in r and r["n_inliers"] >= MIN_LINEAR_POINTS]
    pr = np.array([min(r["precision_ratio"], r["recall_ratio"]) for r in ok])
    decidable = [r for r in ok if r.get("decidable", True)]
    undecidable = [r for r in ok if not r.get("decidable", True)]
    pr_dec = np.array([min(r["precision_ratio"], r["recall_ratio"]) for r in decidable])
    ml = np.array([min(r.get("ml_precision_ratio", np.nan), r.get("ml_recall_ratio", np.nan))
                   for r in decidable])
    det = [r for r in ok if r.get("pose_judged", r["determined"])]
    within = [r for r in det if r.get("pose_within")]
    within_mask = [r for r in det if r.get("pose_within_mask", r.get("pose_within"))]
    pose_fits = [r for r in det if r.get("pose_fits_as_ml")]
    # Judged poses beyond the factor: a failure with its reason, or a pose that carries its
    # uncertainty (a status that says so, or a covariance that covers the error).
    beyond = [r for r in det if not r.get("pose_within")]
    beyond_reported = [r for r in beyond if r.get("failure") or r.get("pose_reported")]
    # Decidable scenes whose yardstick is not determined: a failure, a pose that carries its
    # uncertainty, or one as good as maximum likelihood from the truth is an honest answer; a
    # confident pose outside its uncertainty that fits worse than the truth's is not.
    loose = [r for r in decidable if not r.get("pose_judged", r["determined"])]
    honest = [r for r in loose
              if r.get("failure") or r.get("pose_reported") or r.get("pose_fits_as_ml")]
    ml_mask = np.array([r.get("ml_ceiling_ratio", np.nan) for r in decidable])
    fits = np.array([bool(r.get("fits_as_ml")) for r in decidable])
    rot = np.array([r["rotation_error_deg"] for r in ok if "rotation_error_deg" in r])
    return {
        "scenes": len(records),
        "too_few_inliers": sum(1 for r in records
                               if r.get("n_inliers", MIN_LINEAR_POINTS) < MIN_LINEAR_POINTS),
        "failures": sum(1 for r in records if r.get("failure")),
        "pr_0.99": _fraction(pr, 0.99),
        "pr_0.95": _fraction(pr, 0.95),
        "pr_median": float(np.median(pr)) if len(pr) else float("nan"),
        "decidable": len(decidable),
        "decidable_pr_0.99": _fraction(pr_dec, 0.99),
        "decidable_pr_0.95": _fraction(pr_dec, 0.95),
        "decidable_ml_0.99": _fraction(ml, 0.99),
        "decidable_ml_0.95": _fraction(ml, 0.95),
        "ml_mask_0.99": _fraction(ml_mask, 0.99),
        "ml_mask_0.95": _fraction(ml_mask, 0.95),
        "decidable_fits_ml": float(fits.mean()) if len(fits) else float("nan"),
        "undecidable_failed": sum(1 for r in undecidable if r.get("failure")),
        "undecidable_returned": sum(1 for r in undecidable if not r.get("failure")),
        "determined": len(det),
        "pose_within": float(len(within) / len(det)) if det else float("nan"),
        "pose_within_mask": float(len(within_mask) / len(det)) if det else float("nan"),
        "pose_fits_ml": float(len(pose_fits) / len(det)) if det else float("nan"),
        "pose_beyond": len(beyond),
        "pose_beyond_reported": (float(len(beyond_reported) / len(beyond)) if beyond
                                 else float("nan")),
        "undetermined": len(loose),
        "undetermined_honest": float(len(honest) / len(loose)) if loose else float("nan"),
        "rotation_median_deg": float(np.median(rot)) if len(rot) else float("nan"),
        "rotation_max_deg": float(np.max(rot)) if len(rot) else float("nan"),
        "factor": factor,
    }


def summarize_sweep(records, *, factor: float = 1.5, bins: dict | None = None) -> dict:
    """Aggregate :func:`sweep_two_view` records overall and per region of the scene space.

    Parameters
    ----------
    records : list of dict
    factor : float
        The pose tolerance the records were scored with (reported).
    bins : dict, optional
        Parameter name to bin edges or None (categories); :data:`SWEEP_BINS` by default.

    Returns
    -------
    dict
        ``overall`` and ``regions[name][label]``, each with ``scenes``, ``too_few_inliers``
        (scenes with fewer true inliers than the linear solver needs, left out of the
        fractions), ``failures``, ``pr_0.99`` and ``pr_0.95`` (fractions of scenes whose
        precision and recall are both at least that fraction of the ceiling), ``pr_median``
        (median of the smaller of the two ratios), ``decidable`` (scenes whose true tensor's
        support is more than chance gives, :func:`noise_ceiling`), ``decidable_pr_0.99`` and
        ``decidable_pr_0.95`` (the fractions on those scenes, a failure counting as 0),
        ``decidable_ml_0.99`` and ``decidable_ml_0.95`` (the same against the mask of the
        maximum-likelihood tensor), ``ml_mask_0.99`` and ``ml_mask_0.95`` (fractions of
        the decidable scenes whose maximum-likelihood tensor's own mask reaches that fraction
        of the ceiling: what the data allow ``decidable_pr_*`` to be),
        ``undecidable_failed`` and ``undecidable_returned`` (the
        other scenes, failed with a reason or answered), ``decidable_fits_ml`` (fraction of
        the decidable scenes whose tensor is as good as the data allow, ``fits_as_ml`` of
        :func:`score_two_view`; a failure counts as not), ``determined`` (count of the scenes
        whose pose is judged: determined and decidable), ``pose_within`` (fraction of them
        whose pose is within ``factor`` of the yardstick), ``pose_within_mask`` (the same
        without the robust yardstick, ``pose_within_mask`` of :func:`score_two_view`),
        ``pose_fits_ml`` (fraction of
        them whose pose is as good as the data allow, ``pose_fits_as_ml`` of
        :func:`score_two_view`), ``pose_beyond`` (count of them whose pose is not within),
        ``pose_beyond_reported`` (fraction of those that failed with a reason or carry their
        uncertainty, ``pose_reported``), ``undetermined`` (count of the decidable scenes whose
        yardstick is not determined), ``undetermined_honest`` (fraction of them that failed
        with a reason, whose pose carries its uncertainty, ``pose_reported``, or is as good as
        the data allow, ``pose_fits_as_ml``: where the first-order covariance of maximum
        likelihood from the truth does not cover its own error either),
        ``rotation_median_deg`` and ``rotation_max_deg``.
    """
    bins = SWEEP_BINS if bins is None else bins
    regions = {}
    for name, edges in bins.items():
        groups, keys = {}, {}
        for r in records:
            if name in r.get("params", {}):
                label, key = _bin_label(r["params"][name], edges)
                groups.setdefault(label, []).append(r)
                keys[label] = key
        regions[name] = {label: _tally(groups[label], factor)
                         for label in sorted(groups, key=lambda lb: keys[lb])}
    return {"overall": _tally(records, factor), "regions": regions}


@dataclass(frozen=True)
class ProjectiveTwoSlitCameras:
    """Ground truth of :func:`random_projective_two_slit_cameras`, as plain arrays.

    ``euclidean`` are the true cameras' matrices ``(n, 2, 2, 4)`` (``[i, 0]`` is ``A1``,
    ``[i, 1]`` is ``A2``); ``cameras = euclidean Q^-1`` with noise, the projective
    reconstruction; ``points_euclidean`` ``(m, 3)`` and ``points = Q [X; 1]`` ``(m, 4)``.
    """

    euclidean: np.ndarray
    intrinsics: list
    rvecs: np.ndarray
    tvecs: np.ndarray
    Q: np.ndarray
    cameras: np.ndarray
    points_euclidean: np.ndarray
    points: np.ndarray


def random_projective_two_slit_cameras(n: int, rng=None, *, noise: float = 0.0,
                                       magnifications=(200.0, 3000.0),
                                       theta_deg=(20.0, 160.0), d_range=(0.1, 2.0),
                                       distance: float = 5.0, motion: str = "general",
                                       n_points: int = 0) -> ProjectiveTwoSlitCameras:
    """Parallel finite two-slit cameras with zero principal points under a random projective
    frame: the setting of the appendix's self-calibration experiment.

    Each camera has ``K1 = diag(fu, 1)``, ``K2 = diag(2 fv, 1)`` with magnifications uniform in
    ``magnifications``, slit angle uniform in ``theta_deg``, slit distance uniform in
    ``d_range`` with a random sign, and looks at the origin from about ``distance``. The
    projective frame ``Q`` is a Gaussian 4x4 matrix of condition number below 30 (as the
    appendix's printed ``Q``); the projective cameras are ``A Q^-1``, each matrix of unit norm
    (a scale keeps K), each row perturbed by ``noise`` times its norm in a random direction
    (``noise`` is the relative error of each row).

    Parameters
    ----------
    n : int
        Number of cameras.
    rng : None, int or numpy.random.Generator
    noise : float
        Relative perturbation of every row of the projective cameras.
    magnifications, theta_deg, d_range : (2,) float
        Ranges of ``fu, fv``, of the slit angle (degrees) and of ``|d|``.
    distance : float
        Distance from the origin to the cameras.
    motion : {"general", "translation"}
        ``"translation"``: every camera has the first one's rotation (a degenerate motion for
        self-calibration).
    n_points : int
        Number of scene points near the origin.

    Returns
    -------
    ProjectiveTwoSlitCameras
    """
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    n_points = check_positive_int("n_points", n_points, minimum=0)
    if motion not in ("general", "translation"):
        raise ValueError(f"motion must be 'general' or 'translation', got {motion!r}")
    if not (np.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
    lo_f, hi_f = magnifications
    intrinsics, rvecs, tvecs, E = [], [], [], []
    R0 = random_rotation(rng)
    for _ in range(n):
        fu, fv = rng.uniform(lo_f, hi_f, size=2)
        theta = np.radians(rng.uniform(*theta_deg))
        d = rng.uniform(*d_range) * rng.choice([-1.0, 1.0])
        intr = TwoSlitIntrinsics.from_parameters(fu, fv, 0.0, 0.0, theta, d)
        R = R0 if motion == "translation" else random_rotation(rng)
        tvec = np.array([0.0, 0.0, max(distance, 2 * abs(d) + 1.0)]) + rng.normal(
            scale=0.2 * distance, size=3)
        cam = compose_two_slit(intr, rvec_from_matrix(R), tvec)
        intrinsics.append(intr)
        rvecs.append(rvec_from_matrix(R))
        tvecs.append(tvec)
        E.append([cam.A1, cam.A2])
    E = np.asarray(E)
    while True:
        Q = rng.normal(size=(4, 4))
        if np.linalg.cond(Q) < 30:
            break
    A = E @ np.linalg.inv(Q)
    A /= np.linalg.norm(A, axis=(-2, -1), keepdims=True)
    if noise:
        A = A + noise * np.linalg.norm(A, axis=-1, keepdims=True) * rng.normal(size=A.shape) / 2
    X = rng.uniform(-1.0, 1.0, size=(n_points, 3))
    Xp = np.hstack([X, np.ones((n_points, 1))]) @ Q.T
    return ProjectiveTwoSlitCameras(E, intrinsics, np.asarray(rvecs), np.asarray(tvecs), Q, A, X,
                                    Xp)


def random_resection_scene(rng=None, n: int = 100, *, model: str = "two_slit",
                           parallel: bool = True, planar: bool = False, sigma: float = 0.0,
                           outlier_ratio: float = 0.0, image_size: int = 1000) -> dict:
    """A camera with known pose and ``n`` 2D-3D correspondences filling its image.

    Drawn from a wide family: two-slit magnifications ``fu`` and ``2 fv`` log-uniform in
    200-3000 px, principal points uniform in ``[-0.5, 1.5] * image_size`` (inside the image
    or not), slit angles 20-160 degrees, slit distance over scene depth log-uniform in
    0.005-1 (either sign); pushbroom magnification 200-3000 px, principal point as above, a
    speed that spreads the scene over the image's lines. The rotation is uniform (angles up
    to 180 degrees), the world origin anywhere near the scene. Pixels are drawn uniformly in
    the image and their rays cut at depths 0.7-1.3 from the nearer slit plane, or by a plane
    tilted up to 60 degrees from the image plane (``planar``).

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
    n : int
    model : {"two_slit", "pushbroom"}
    parallel : bool
        Two-slit only: False draws general finite two-slit intrinsics (non-zero lower-left
        entries of ``K1``, ``K2``, uniform in +-0.3).
    planar : bool
        All points on one plane (a calibration board).
    sigma : float
        Gaussian noise of the inliers' pixels (per coordinate).
    outlier_ratio : float in [0, 1]
        Fraction of the correspondences whose pixel is replaced by a uniform pixel of the
        image.
    image_size : int

    Returns
    -------
    dict
        ``intrinsics``, ``rvec``, ``tvec`` (``X_c = R X + t``), ``camera``, ``X`` (n, 3),
        ``pixels`` (n, 2) observed, ``pixels_true`` (n, 2), ``inliers`` (n,) bool, and the
        drawn ``slit_ratio`` (signed slit distance over depth; 0 for pushbroom).

    Examples
    --------
    >>> s = random_resection_scene(0, 30)
    >>> bool(np.allclose(s["camera"].project(s["X"]), s["pixels"]))
    True
    """
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    W = float(check_positive_int("image_size", image_size))
    if model not in ("two_slit", "pushbroom"):
        raise ValueError(f"model must be 'two_slit' or 'pushbroom', got {model!r}")
    if not 0.0 <= outlier_ratio <= 1.0:
        raise ValueError(f"outlier_ratio must be in [0, 1], got {outlier_ratio!r}")
    if not (np.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")

    def log_uniform(lo, hi):
        return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))

    u0, v0 = rng.uniform(-0.5 * W, 1.5 * W, size=2)
    if model == "two_slit":
        ratio = log_uniform(0.005, 1.0) * rng.choice([-1.0, 1.0])
        intr = TwoSlitIntrinsics.from_parameters(
            log_uniform(200, 3000), log_uniform(200, 3000) / 2.0, u0, v0,
            np.radians(rng.uniform(20, 160)), ratio)
        if not parallel:
            K1, K2 = intr.K1.copy(), intr.K2.copy()
            K1[1, 0], K2[1, 0] = rng.uniform(-0.3, 0.3, size=2)
            intr = TwoSlitIntrinsics(K1, K2, intr.theta, intr.d)
        near = max(0.0, -ratio)  # depth of the nearer slit plane in front of the first slit
    else:
        ratio, near = 0.0, 0.0
        intr = PushbroomIntrinsics.from_parameters(rng.uniform(0.5, 2.0) / W,
                                                   log_uniform(200, 3000), u0)
    cam0 = compose_camera(intr, np.zeros(3), np.zeros(3))
    o_c, d_c = np.split(cam0.rays([[W / 2, W / 2]])[0], 2)
    out = np.empty((0, 3))
    for _ in range(20):  # a plane that the image's rays do not meet in front is drawn again
        if planar:  # through the central pixel's ray, tilted up to 60 degrees from facing it
            anchor = o_c + (near + 1.0) * d_c
            phi = rng.uniform(0, 2 * np.pi)
            axis = np.cross(d_c, [np.cos(phi), np.sin(phi), 0.0])
            normal = _axis_rotation(axis / np.linalg.norm(axis),
                                    np.radians(rng.uniform(0, 60))) @ d_c
        out = np.empty((0, 3))
        for _ in range(20):
            px = rng.uniform(0, W, size=(4 * n, 2))
            o, d = np.split(cam0.rays(px), 2, axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                if planar:
                    lam = ((anchor - o) @ normal) / (d @ normal)
                else:
                    lam = (near + rng.uniform(0.7, 1.3, 4 * n) - o[:, 2]) / d[:, 2]
            Xc = o + lam[:, None] * d
            ok = (np.isfinite(Xc).all(axis=1) & (lam > 0) & cam0.in_front(np.nan_to_num(Xc))
                  & (np.abs(Xc) < 100.0).all(axis=1))
            out = np.vstack([out, Xc[ok]])
            if len(out) >= n:
                break
        if len(out) >= n:
            break
    if len(out) < n:
        raise ValueError("could not draw points in front of the camera inside the image")
    Xc = out[:n]
    R = random_rotation(rng)
    t = rng.normal(size=3)
    X = (Xc - t) @ R  # R^T (X_c - t), row by row
    rvec = rvec_from_matrix(R)
    camera = compose_camera(intr, rvec, t)
    true = camera.project(X)
    pixels = true + rng.normal(scale=sigma, size=(n, 2)) if sigma > 0 else true.copy()
    inliers = np.ones(n, bool)
    bad = rng.choice(n, round(outlier_ratio * n), replace=False)
    inliers[bad] = False
    pixels[bad] = rng.uniform(0, W, size=(len(bad), 2))
    return {"intrinsics": intr, "rvec": rvec, "tvec": t, "camera": camera, "X": X,
            "pixels": pixels, "pixels_true": true, "inliers": inliers, "slit_ratio": ratio}


def calibration_target_points(planes: int = 3, squares=(8, 8), square_size: float = 0.1):
    """Inner corners of the target of :func:`xslit.render.make_calibration_target`.

    Boards on the planes ``z = 0``, ``x = 0`` and ``y = 0`` (the first ``planes``), each with
    ``(rows - 1) * (cols - 1)`` corners, row by row as ``cv2.findChessboardCorners`` orders
    them on the board's texture.

    Returns
    -------
    (planes * (rows - 1) * (cols - 1), 3) ndarray
    """
    rows, cols = squares
    e = np.eye(3)
    jj, ii = np.meshgrid(np.arange(1, cols), np.arange(1, rows))
    axes = [(e[0], e[1]), (e[1], e[2]), (e[0], e[2])][:planes]
    return np.vstack([jj.reshape(-1, 1) * square_size * eu
                      + (rows - ii.reshape(-1, 1)) * square_size * ev for eu, ev in axes])


def random_calibration_views(intrinsics, n_views: int, rng=None, *, sigma: float = 0.0,
                             object_points=None, image_size=(640, 480),
                             distance=None, max_tries: int = 200) -> dict:
    """Views of a calibration target by one camera: random viewpoints that see every point.

    Each viewpoint sees the target's centre (give or take 3% of its size) at the image
    centre, from a random direction in the octant that faces all three boards of
    :func:`calibration_target_points`, from ``distance`` (world units) along the centre's
    ray, with a random roll; a viewpoint is kept when all points are in front of the camera
    and inside the image.

    Parameters
    ----------
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics
    n_views : int
    rng : None, int or numpy.random.Generator
    sigma : float
        Gaussian pixel noise.
    object_points : (N, 3) array_like, optional
        Default: :func:`calibration_target_points`.
    image_size : (width, height)
    distance : (float, float), optional
        Range of the viewpoint's distance to the target's centre. Default: where the target
        would span 40-60% of the image at the largest magnification (moved back when it
        does not fit).
    max_tries : int

    Returns
    -------
    dict
        ``object_points``, ``image_points`` (noisy), ``image_points_true``: lists of one
        array per view; ``rvecs``, ``tvecs`` (V, 3); ``intrinsics``.
    """
    rng = check_rng(rng)
    n_views = check_positive_int("n_views", n_views)
    X = calibration_target_points() if object_points is None else check_array(
        "object_points", object_points)
    centre = X.mean(axis=0)
    size = float(np.ptp(X, axis=0).max())
    W, H = image_size
    if distance is None:
        f = float(max(intrinsics.K1[0, 0] if isinstance(intrinsics, TwoSlitIntrinsics) else 0,
                      intrinsics.K2[0, 0]))
        distance = f * size / min(W, H) * np.array([1 / 0.6, 1 / 0.4])
    # The ray of the image centre in the camera's own frame: the target's centre is put on it.
    o, dc = np.split(compose_camera(intrinsics, np.zeros(3), np.zeros(3)).rays(
        [[(W - 1) / 2, (H - 1) / 2]])[0], 2)
    rvecs, tvecs, true = [], [], []
    grow = 1.0  # moved back by 3% after each viewpoint that does not fit the image
    for _ in range(max_tries):
        if len(rvecs) == n_views:
            break
        d = np.abs(rng.normal(size=3)) + 0.3
        w = -d / np.linalg.norm(d)  # viewing direction, from the viewpoint to the target
        axis, angle = _align(w, dc)
        R = _axis_rotation(dc, rng.uniform(-np.pi, np.pi)) @ _axis_rotation(axis, angle)
        rvec = rvec_from_matrix(R)
        tvec = o + grow * rng.uniform(*distance) * dc - R @ (centre + rng.normal(scale=0.03 * size,
                                                                         size=3))
        cam = compose_camera(intrinsics, rvec, tvec)
        px = cam.project(X)
        if (cam.in_front(X).all() and np.isfinite(px).all() and (px >= 0).all()
                and (px[:, 0] <= W - 1).all() and (px[:, 1] <= H - 1).all()):
            rvecs.append(rvec)
            tvecs.append(tvec)
            true.append(px)
        else:
            grow *= 1.03
    if len(rvecs) < n_views:
        raise ValueError(f"found {len(rvecs)} of n_views = {n_views} viewpoints that see the "
                         f"target inside a {W}x{H} image: widen distance or the image")
    noisy = [p + rng.normal(scale=sigma, size=p.shape) if sigma > 0 else p.copy() for p in true]
    return {"object_points": [X.copy() for _ in true], "image_points": noisy,
            "image_points_true": true, "rvecs": np.array(rvecs), "tvecs": np.array(tvecs),
            "intrinsics": intrinsics}


def random_along_track_pair(rng=None, n: int = 600, *, size: int = 600, sigma: float = 0.15,
                            tilt_deg: float = 20.0, pass_offset: float = 25.0,
                            altitude: float = 150.0, extent: float = 100.0) -> dict:
    r"""Along-track pushbroom stereo: two passes over a gently rolling terrain.

    The instrument of satellite along-track stereo (SPOT HRS, PRISM): a linear sensor across
    the flight line (+x at ``altitude``), the view tilted ``tilt_deg`` fore on the first pass
    and aft on a second pass flown ``pass_offset`` to the side, each strip ``size`` lines of
    ``size`` pixels over the terrain ``[-extent/2, extent/2]^2`` (heights of a few units).
    The relative pose is a rotation of ``2 tilt_deg`` about the sensor line and a baseline
    comparable with the strip; such a pair also fits, nearly as well, poses about
    :math:`2\,\mathrm{tilt}` degrees off whose translation grows without bound.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
    n : int
        Correspondences (terrain points seen by both strips).
    size : int
        Lines and sensor pixels of each strip.
    sigma : float
        Standard deviation of the pixel noise.

    Returns
    -------
    dict
        ``points1``, ``points2`` ``(n, 2)`` noisy pixels, ``points`` ``(n, 3)`` in the world,
        ``intrinsics1``, ``intrinsics2`` (:class:`~xslit.cameras.PushbroomIntrinsics`) and the
        pose of camera 2 relative to camera 1, ``rvec``, ``tvec``.
    """
    rng = check_rng(rng)
    n = check_positive_int("n", n)
    setups = []
    for tilt, offset in ((tilt_deg, 0.0), (-tilt_deg, pass_offset)):
        tau = np.radians(tilt)
        axis = np.array([np.sin(tau), 0.0, -np.cos(tau)])
        sensor = np.array([0.0, -1.0, 0.0])
        R = np.stack([np.cross(sensor, axis), sensor, axis])  # world to camera
        margin = 1.1 * extent
        origin = np.array([-margin / 2 - altitude * np.tan(tau), offset, altitude])
        f = (size / 2) / (0.55 * extent * np.cos(tau) / altitude)
        intr = PushbroomIntrinsics(R @ np.array([margin / size, 0.0, 0.0]), f, (size - 1) / 2)
        setups.append((intr, R, -R @ origin))
    cams = [compose_camera(i, rvec_from_matrix(R), t) for i, R, t in setups]
    xy = rng.uniform(-extent / 2, extent / 2, (4 * n, 2))
    h = 3.0 * np.sin(xy[:, 0] / 9.0) * np.cos(xy[:, 1] / 13.0) + rng.normal(0.0, 1.0, 4 * n)
    X = np.column_stack([xy, h])
    q1, q2 = cams[0].project(X), cams[1].project(X)
    seen = np.all((q1 > 0) & (q1 < size - 1) & (q2 > 0) & (q2 < size - 1), axis=1)
    if seen.sum() < n:
        raise ValueError(f"n must be at most {int(seen.sum())} for these strips, got {n}")
    keep = np.flatnonzero(seen)[:n]
    (i1, R1, t1), (i2, R2, t2) = setups
    R = R2 @ R1.T
    return {"points1": q1[keep] + rng.normal(0.0, sigma, (n, 2)),
            "points2": q2[keep] + rng.normal(0.0, sigma, (n, 2)),
            "points": X[keep], "intrinsics1": i1, "intrinsics2": i2,
            "rvec": rvec_from_matrix(R), "tvec": t2 - R @ t1}
