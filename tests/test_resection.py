"""solveTwoSlitPnP and solveTwoSlitPnPRansac (xslit.sfm.resection) against ground truth."""

import logging

import numpy as np
import pytest

from xslit import PushbroomCamera, TwoSlitCamera
from xslit.api.resection import (
    SOLVEPNP_ITERATIVE,
    SOLVEPNP_LINEAR,
    solveTwoSlitPnP,
    solveTwoSlitPnPRansac,
)
from xslit.geometry import matrix_from_rvec
from xslit.sfm.resection import (
    FLAT_TOL,
    PoseProblem,
    ProjectiveResectionProblem,
    refine_pose,
    resect_pose,
    resect_projective,
)
from xslit.synthetic import random_resection_scene, rotation_error_deg

KINDS = [("two_slit", True), ("two_slit", False), ("pushbroom", True)]


def _errors(rvec, tvec, s):
    R = matrix_from_rvec(np.ravel(rvec))
    return (rotation_error_deg(R, matrix_from_rvec(s["rvec"])),
            float(np.linalg.norm(np.ravel(tvec) - s["tvec"])))


@pytest.mark.parametrize("planar", [False, True])
@pytest.mark.parametrize("model, parallel", KINDS)
def test_pose_exact_on_noise_free_scenes(model, parallel, planar, tol):
    for seed in range(25):
        s = random_resection_scene(seed, 30, model=model, parallel=parallel, planar=planar)
        ok, rvec, tvec = solveTwoSlitPnP(s["X"], s["pixels"], s["intrinsics"])
        assert ok, seed
        assert max(_errors(rvec, tvec, s)) < tol.RESECTION_EXACT_POSE, seed
        # The linear solver alone is exact too.
        ok, rvec, tvec = solveTwoSlitPnP(s["X"], s["pixels"], s["intrinsics"],
                                         flags=SOLVEPNP_LINEAR)
        assert ok and max(_errors(rvec, tvec, s)) < tol.RESECTION_EXACT_POSE, seed


@pytest.mark.parametrize("model, parallel", KINDS)
def test_projective_exact_on_noise_free_scenes(model, parallel, tol):
    for seed in range(25):
        s = random_resection_scene(seed, 30, model=model, parallel=parallel)
        ok, camera = solveTwoSlitPnP(s["X"], s["pixels"], model=model)
        assert ok, seed
        assert isinstance(camera, PushbroomCamera if model == "pushbroom" else TwoSlitCamera)
        assert np.abs(camera.project(s["X"]) - s["pixels"]).max() < tol.RESECTION_EXACT_PX
        # Oriented like the true camera: the points are in front.
        assert camera.in_front(s["X"]).all(), seed


def test_minimal_counts_are_exact(tol):
    for model, n in (("two_slit", 6), ("pushbroom", 7)):
        s = random_resection_scene(3, n, model=model)
        ok, rvec, tvec = solveTwoSlitPnP(s["X"], s["pixels"], s["intrinsics"])
        assert ok and max(_errors(rvec, tvec, s)) < tol.RESECTION_EXACT_POSE
    s = random_resection_scene(3, 5, planar=True)
    ok, rvec, tvec = solveTwoSlitPnP(s["X"], s["pixels"], s["intrinsics"])
    assert ok and max(_errors(rvec, tvec, s)) < tol.RESECTION_EXACT_POSE
    s = random_resection_scene(3, 7)
    ok, camera = solveTwoSlitPnP(s["X"], s["pixels"])
    assert ok and np.abs(camera.project(s["X"]) - s["pixels"]).max() < tol.RESECTION_EXACT_PX


def test_extrinsic_guess_is_refined(tol):
    s = random_resection_scene(5, 40, sigma=0.0)
    ok, rvec, tvec = solveTwoSlitPnP(s["X"], s["pixels"], s["intrinsics"],
                                     s["rvec"] + 0.02, s["tvec"] + 0.01, useExtrinsicGuess=True,
                                     flags=SOLVEPNP_ITERATIVE)
    assert ok and max(_errors(rvec, tvec, s)) < tol.RESECTION_EXACT_POSE


def _ransac_within_yardstick(model, seed, tol):
    s = random_resection_scene(seed, 100, model=model, sigma=0.5, outlier_ratio=0.3)
    ok, rvec, tvec, inliers = solveTwoSlitPnPRansac(
        s["X"], s["pixels"], s["intrinsics"], reprojectionError=tol.RESECTION_THRESHOLD_PX,
        rng=seed)
    if not ok:
        return False
    assert inliers.dtype == np.int32 and inliers.shape[1] == 1
    # Yardstick: maximum likelihood from the true pose on the true inliers (what the data
    # allow with a perfect classification).
    inl = s["inliers"]
    rv, tv, _ = refine_pose(s["X"][inl], s["pixels"][inl], s["intrinsics"], s["rvec"], s["tvec"])
    est, ml = _errors(rvec, tvec, s), _errors(rv, tv, s)
    return all(e <= tol.RESECTION_YARDSTICK_FACTOR * m for e, m in zip(est, ml, strict=True))


@pytest.mark.parametrize("model", ["two_slit", "pushbroom"])
def test_ransac_near_ml_yardstick_100_seeds(model, tol):
    """sigma = 0.5 px, 30% outliers: within 1.5x of ML from the truth in >= 99 of 100 seeds."""
    good = sum(_ransac_within_yardstick(model, seed, tol) for seed in range(100))
    assert good >= tol.RESECTION_YARDSTICK_MIN_SEEDS


def test_projective_ransac_finds_the_inliers():
    for model in ("two_slit", "pushbroom"):
        s = random_resection_scene(7, 150, model=model, sigma=0.5, outlier_ratio=0.3)
        ok, camera, inliers = solveTwoSlitPnPRansac(s["X"], s["pixels"], model=model,
                                                    reprojectionError=2.0, rng=0)
        assert ok and isinstance(camera, TwoSlitCamera)
        found = np.zeros(150, bool)
        found[inliers.ravel()] = True
        assert not np.any(found & ~s["inliers"])
        assert found.sum() >= 0.97 * s["inliers"].sum()


def test_ransac_is_deterministic_with_a_seed():
    s = random_resection_scene(2, 80, sigma=0.5, outlier_ratio=0.3)
    a = solveTwoSlitPnPRansac(s["X"], s["pixels"], s["intrinsics"], rng=3)
    b = solveTwoSlitPnPRansac(s["X"], s["pixels"], s["intrinsics"], rng=3)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[3], b[3])


# -- degenerate configurations ---------------------------------------------------------
def test_coplanar_target_fails_the_projective_resection_at_realistic_noise(caplog):
    s = random_resection_scene(4, 60, planar=True, sigma=0.5)
    rng = np.random.default_rng(0)
    X = s["X"] + 1e-6 * rng.normal(size=s["X"].shape)  # a measured board, not exactly flat
    res = resect_projective(X, s["pixels"])
    assert not res.success and "coplanar" in res.reason
    with caplog.at_level(logging.WARNING, logger="xslit"):
        ok, camera = solveTwoSlitPnP(X, s["pixels"])
    assert not ok and camera is None and "coplanar" in caplog.text
    ok, camera, inliers = solveTwoSlitPnPRansac(X, s["pixels"], rng=0)
    assert not ok and camera is None and inliers is None
    # The pose with known intrinsics is determined by the same board.
    assert resect_pose(X, s["pixels"], s["intrinsics"]).success


def test_nearly_flat_target_is_told_from_a_flat_one():
    s = random_resection_scene(4, 60)
    assert ProjectiveResectionProblem(s["X"], s["pixels"]).frame.kind == "general"
    flat = s["X"].copy()
    flat[:, 2] = 0.5 * FLAT_TOL * (flat[:, 2] - flat[:, 2].mean()) / flat[:, 2].std()
    flat[:, :2] *= 1 / flat[:, :2].std(axis=0)
    assert ProjectiveResectionProblem(flat, s["pixels"]).frame.kind == "planar"


@pytest.mark.parametrize("case, word", [("collinear", "collinear"), ("identical", "identical")])
def test_degenerate_points_fail_with_their_reason(case, word):
    s = random_resection_scene(1, 20)
    t = np.linspace(-1, 1, 20)[:, None]
    X = t * [1.0, 2.0, 0.5] + [0, 0, 3] if case == "collinear" else np.tile([0.1, 0.2, 3.0],
                                                                           (20, 1))
    for res in (resect_pose(X, s["pixels"], s["intrinsics"]), resect_projective(X, s["pixels"])):
        assert not res.success and word in res.reason
    assert solveTwoSlitPnP(X, s["pixels"], s["intrinsics"]) == (False, None, None)
    assert solveTwoSlitPnPRansac(X, s["pixels"], s["intrinsics"], rng=0)[0] is False


def test_too_few_non_coplanar_points_for_the_linear_pose():
    s = random_resection_scene(1, 5)
    res = resect_pose(s["X"], s["pixels"], s["intrinsics"])
    assert not res.success and "needs 6" in res.reason


def test_problems_expose_sample_sizes():
    s = random_resection_scene(1, 20)
    assert PoseProblem(s["X"], s["pixels"], s["intrinsics"]).sample_size == 6
    s = random_resection_scene(1, 20, model="pushbroom")
    assert PoseProblem(s["X"], s["pixels"], s["intrinsics"]).sample_size == 7
    s = random_resection_scene(1, 20, planar=True)
    assert PoseProblem(s["X"], s["pixels"], s["intrinsics"]).sample_size == 5
    assert ProjectiveResectionProblem(s["X"], s["pixels"]).sample_size == 7


# -- bad input --------------------------------------------------------------------------
@pytest.fixture
def scene():
    return random_resection_scene(0, 20)


def test_bad_point_shapes_and_values(scene):
    X, px, intr = scene["X"], scene["pixels"], scene["intrinsics"]
    with pytest.raises(ValueError, match=r"^objectPoints must have shape \(N, 3\), got \(20, 2\)"):
        solveTwoSlitPnP(X[:, :2], px, intr)
    with pytest.raises(ValueError, match=r"^imagePoints must have shape \(N, 2\), got \(20, 3\)"):
        solveTwoSlitPnP(X, X, intr)
    with pytest.raises(ValueError, match=r"^objectPoints must have shape \(N, 3\) with N >= 7"):
        solveTwoSlitPnP(X[:6], px[:6])
    with pytest.raises(ValueError, match=r"N >= 5 points, got \(4, 3\)"):
        solveTwoSlitPnP(X[:4], px[:4], intr)
    with pytest.raises(ValueError, match=r"^objectPoints and imagePoints must have the same "
                                         r"number of points, got 20 and 19"):
        solveTwoSlitPnPRansac(X, px[:19], intr)
    bad = px.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"^imagePoints must be finite, got 1 NaN"):
        solveTwoSlitPnP(X, bad, intr)
    with pytest.raises(ValueError, match=r"^objectPoints must be a real numeric array, got an "
                                         r"array of booleans"):
        solveTwoSlitPnP(X > 0, px, intr)
    with pytest.raises(ValueError, match=r"^imagePoints must be a real numeric array"):
        solveTwoSlitPnP(X, (px > 0).tolist(), intr)
    # OpenCV's (N, 1, d) layout is accepted.
    assert solveTwoSlitPnP(X[:, None], px[:, None], intr)[0]


def test_bad_intrinsics_flags_and_options(scene):
    X, px, intr = scene["X"], scene["pixels"], scene["intrinsics"]
    with pytest.raises(ValueError, match=r"^intrinsics must be None, TwoSlitIntrinsics or "
                                         r"PushbroomIntrinsics, got ndarray"):
        solveTwoSlitPnP(X, px, np.eye(3))
    with pytest.raises(ValueError, match=r"^flags must be SOLVEPNP_ITERATIVE"):
        solveTwoSlitPnP(X, px, intr, flags=7)
    with pytest.raises(ValueError, match=r"^model is 'pushbroom' but intrinsics are "
                                         r"TwoSlitIntrinsics"):
        solveTwoSlitPnP(X, px, intr, model="pushbroom")
    with pytest.raises(ValueError, match=r"^model must be None, 'two_slit' or 'pushbroom'"):
        solveTwoSlitPnP(X, px, model="pinhole")
    with pytest.raises(ValueError, match=r"^useExtrinsicGuess needs rvec and tvec"):
        solveTwoSlitPnP(X, px, intr, useExtrinsicGuess=True)
    with pytest.raises(ValueError, match=r"^rvec must have shape \(3,\), got \(2,\)"):
        solveTwoSlitPnP(X, px, intr, [0, 0], [0, 0, 1], useExtrinsicGuess=True)
    with pytest.raises(ValueError, match=r"^rvec, tvec and useExtrinsicGuess need intrinsics"):
        solveTwoSlitPnP(X, px, None, [0, 0, 0], [0, 0, 1], useExtrinsicGuess=True)
    with pytest.raises(ValueError, match=r"^reprojectionError must be a finite positive"):
        solveTwoSlitPnPRansac(X, px, intr, reprojectionError=-1)
    with pytest.raises(ValueError, match=r"^confidence must be a number in \(0, 1\), got 1.5"):
        solveTwoSlitPnPRansac(X, px, intr, confidence=1.5)
    with pytest.raises(ValueError, match=r"^iterationsCount must be an integer >= 1, got 0"):
        solveTwoSlitPnPRansac(X, px, intr, iterationsCount=0)
    with pytest.raises(ValueError, match=r"^rng must be None, an int seed"):
        solveTwoSlitPnPRansac(X, px, intr, rng="seed")
    with pytest.raises(ValueError, match=r"^flags must be SOLVEPNP_ITERATIVE \(0\) for "
                                         r"solveTwoSlitPnPRansac"):
        solveTwoSlitPnPRansac(X, px, intr, flags=SOLVEPNP_LINEAR)
    with pytest.raises(ValueError, match=r"^intrinsics must be TwoSlitIntrinsics or "
                                         r"PushbroomIntrinsics, got str"):
        PoseProblem(X, px, "intrinsics")
