"""recoverTwoSlitPose and triangulateTwoSlitPoints against ground truth."""

import numpy as np
import pytest
from tolerances import (
    CLEAN_POSE_POINTS,
    CLEAN_POSE_ROTATION_DEG,
    CLEAN_POSE_TRANSLATION,
    TENSOR_RTOL,
    TRIANGULATION_EXACT,
)

import xslit
from xslit.geometry import matrix_from_rvec, rvec_from_matrix
from xslit.sfm import refine_metric_pose
from xslit.synthetic import random_two_view_scene
from xslit.testing import projective_distance


def _rot_err_deg(R, rvec_true):
    return float(np.degrees(np.linalg.norm(rvec_from_matrix(R.T @ matrix_from_rvec(rvec_true)))))


def test_calibrated_pose_exact_on_clean_data():
    s = random_two_view_scene(3, 100)
    F = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    retval, R, t, mask, X4 = xslit.recoverTwoSlitPose(F, s["points1"], s["points2"],
                                                      s["intrinsics1"], s["intrinsics2"])
    assert retval == 100 and mask.shape == (100, 1) and mask.dtype == np.uint8
    assert _rot_err_deg(R, s["rvec"]) < CLEAN_POSE_ROTATION_DEG
    np.testing.assert_allclose(t.ravel(), s["tvec"], atol=CLEAN_POSE_TRANSLATION)  # metric scale
    np.testing.assert_allclose((X4[:3] / X4[3]).T, s["X"], atol=CLEAN_POSE_POINTS)


def _pose_errors(seed):
    s = random_two_view_scene(seed, 300, sigma=0.5, outlier_ratio=0.3)
    F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], rng=seed)
    _, R, t, _, _ = xslit.recoverTwoSlitPose(F, s["points1"], s["points2"], s["intrinsics1"],
                                             s["intrinsics2"], mask=mask)
    # Yardstick: the same maximum-likelihood refinement from the truth, on the true inliers
    # among those findEpipolarTensor kept (what the data allow with a perfect classification;
    # the outliers a linear F absorbs can pull a refinement on its mask far off).
    inl = (mask[:, 0] == 1) & s["inliers"]
    rv, tv, _, _ = refine_metric_pose(s["intrinsics1"], s["intrinsics2"], s["rvec"],
                                      s["tvec"], s["points1"][inl], s["points2"][inl])
    return (_rot_err_deg(R, s["rvec"]), np.linalg.norm(t.ravel() - s["tvec"]),
            _rot_err_deg(matrix_from_rvec(rv), s["rvec"]), np.linalg.norm(tv - s["tvec"]))


def _check_pose_seeds(seeds):
    errs = np.array([_pose_errors(seed) for seed in seeds])
    rot, trans, rot_ml, trans_ml = errs.T
    # Within 1.5x of what the data allow (plus a floor far below the noise level).
    assert np.mean(rot) <= 1.5 * np.mean(rot_ml) + 1e-3, (rot, rot_ml)
    assert np.mean(trans) <= 1.5 * np.mean(trans_ml) + 1e-4, (trans, trans_ml)
    if len(errs) >= 20:  # the median of a few seeds is one seed's luck
        assert np.median(rot) <= 1.5 * np.median(rot_ml) + 1e-3


def test_calibrated_pose_near_ml_yardstick():
    _check_pose_seeds(range(5))


@pytest.mark.slow
def test_calibrated_pose_near_ml_yardstick_50_seeds():
    """Rotation and translation errors within 1.5x of ML from the true pose, 50 seeds."""
    _check_pose_seeds(range(50))


def test_uncalibrated_configurations():
    s = random_two_view_scene(4, 150, sigma=0.3, outlier_ratio=0.2)
    F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], rng=0)
    retval, configs, good = xslit.recoverTwoSlitPose(F, s["points1"], s["points2"], mask=mask)
    assert len(configs) == 2
    assert retval >= 0.95 * s["inliers"].sum()
    assert good[~s["inliers"], 0].sum() <= 2
    for cam1, cam2, X4 in configs:
        assert X4.shape == (4, 150)
        # Both configurations explain the same tensor (Theorem 1).
        Fc = xslit.computeEpipolarTensor(cam1, cam2)
        F0 = xslit.computeEpipolarTensor(configs[0][0], configs[0][1])
        assert projective_distance(Fc, F0) < TENSOR_RTOL


def test_triangulate_two_and_three_views():
    s = random_two_view_scene(5, 50)
    cam3 = xslit.composeTwoSlitProjection(s["intrinsics1"], [0.05, -0.1, 0.0], [0.5, 0.2, 0.1])
    cams = [s["camera1"], s["camera2"], cam3]
    pts = [c.project(s["X"]) for c in cams]
    for k in (2, 3):
        X4 = xslit.triangulateTwoSlitPoints(cams[:k], pts[:k])
        np.testing.assert_allclose((X4[:3] / X4[3]).T, s["X"], atol=TRIANGULATION_EXACT)
    rng = np.random.default_rng(0)
    noisy = [p + rng.normal(scale=0.5, size=p.shape) for p in pts]
    lin = xslit.triangulateTwoSlitPoints(cams, noisy, refine=False)
    ref = xslit.triangulateTwoSlitPoints(cams, noisy)

    def rep(X4):
        X = (X4[:3] / X4[3]).T
        return np.mean([np.sum((c.project(X) - p) ** 2) for c, p in zip(cams, noisy, strict=True)])

    assert rep(ref) <= rep(lin) + 1e-12


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"F": np.zeros((2, 2, 2))}, "F must have shape"),
        ({"F": np.zeros((2, 2, 2, 2))}, "F must not be zero"),
        ({"points2": np.zeros((10, 2))}, "same number"),
        ({"intrinsics1": "K"}, "intrinsics1 and intrinsics2 must be given together"),
        ({"mask": np.ones(7)}, "mask"),
        ({"mask": np.zeros(40)}, "at least 15"),
    ],
)
def test_recover_bad_input(kwargs, match):
    s = random_two_view_scene(6, 40)
    args = {"F": xslit.computeEpipolarTensor(s["camera1"], s["camera2"]),
            "points1": s["points1"], "points2": s["points2"]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        xslit.recoverTwoSlitPose(**args)


def test_recover_bad_intrinsics_type():
    s = random_two_view_scene(6, 40)
    F = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    with pytest.raises(ValueError, match="intrinsics2 must be"):
        xslit.recoverTwoSlitPose(F, s["points1"], s["points2"], s["intrinsics1"], np.eye(2))


def test_triangulate_linear_backends_agree(tol):
    """The compiled Jacobi rotations find the least singular vectors that LAPACK's SVD finds
    (two and three views, noisy and outlying correspondences, far sweep points)."""
    pytest.importorskip("numba")
    from xslit.sfm.triangulate import triangulate_linear
    from xslit.synthetic import random_sweep_scene

    s = random_two_view_scene(5, 400, outlier_ratio=0.3)
    cam3 = xslit.composeTwoSlitProjection(s["intrinsics1"], [0.05, -0.1, 0.0], [0.5, 0.2, 0.1])
    pts3 = cam3.project(s["X"])
    cases = [([s["camera1"], s["camera2"]], [s["points1"], s["points2"]]),
             ([s["camera1"], s["camera2"], cam3], [s["points1"], s["points2"], pts3])]
    for seed in (3, 7):
        sc = random_sweep_scene(seed, max_n=500)
        cases.append(([sc.camera1, sc.camera2], [sc.points1, sc.points2]))
    for cams, pts in cases:
        a = triangulate_linear(cams, pts, backend="numba")
        b = triangulate_linear(cams, pts, backend="numpy")
        np.testing.assert_allclose(a, b, rtol=0, atol=1e3 * tol.EXACT)
    with pytest.raises(ValueError, match=r"^backend must be"):
        triangulate_linear(*cases[0], backend="lapack")


def test_triangulate_bad_input():
    s = random_two_view_scene(7, 20)
    with pytest.raises(ValueError, match="cameras"):
        xslit.triangulateTwoSlitPoints([s["camera1"]], [s["points1"]])
    with pytest.raises(ValueError, match=r"cameras\[1\]"):
        xslit.triangulateTwoSlitPoints([s["camera1"], "cam"], [s["points1"], s["points2"]])
    with pytest.raises(ValueError, match="same N"):
        xslit.triangulateTwoSlitPoints([s["camera1"], s["camera2"]],
                                       [s["points1"], s["points2"][:5]])


@pytest.mark.parametrize("threshold", [-1.0, 0.0, np.nan, np.inf, "1.5", True])
@pytest.mark.parametrize("calibrated", [False, True])
def test_recover_bad_threshold(threshold, calibrated):
    s = random_two_view_scene(6, 60)
    F = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    intr = (s["intrinsics1"], s["intrinsics2"]) if calibrated else (None, None)
    with pytest.raises(ValueError, match=r"^reprojThreshold must be a finite positive number "
                                         r"of pixels, got"):
        xslit.recoverTwoSlitPose(F, s["points1"], s["points2"], *intr,
                                 reprojThreshold=threshold)


@pytest.mark.parametrize(
    ("mask", "match"),
    [
        (np.full(60, np.nan), r"^mask must be finite \(0 for outliers, non-zero for inliers\), "
                              r"got 60 non-finite entries"),
        (np.ones((6, 10)), r"^mask must have shape \(60,\) or \(60, 1\), got \(6, 10\)"),
        (np.ones((60, 2)), r"^mask must have shape \(60,\) or \(60, 1\), got \(60, 2\)"),
        (np.array(["a"] * 60), r"^mask must be an \(N,\) or \(N, 1\) array of numbers"),
    ],
)
def test_recover_bad_mask(mask, match):
    s = random_two_view_scene(6, 60)
    F = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    with pytest.raises(ValueError, match=match):
        xslit.recoverTwoSlitPose(F, s["points1"], s["points2"], s["intrinsics1"],
                                 s["intrinsics2"], mask=mask)


def test_recover_collinear_scene_raises_with_reason():
    """All points on one 3D line: the calibrated pose is undetermined, which the cv2 surface
    reports as ValueError with the reason (it used to return 60 of 60 inliers with the
    rotation 178 degrees off)."""
    s = random_two_view_scene(6, 60)
    lam = np.random.default_rng(0).uniform(-1, 1, 60)
    X = np.array([0.0, 0.1, 5.0]) + lam[:, None] * np.array([1.2, 0.5, 0.8])
    p1, p2 = s["camera1"].project(X), s["camera2"].project(X)
    F = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    with pytest.raises(ValueError, match=r"^recoverTwoSlitPose: the pose is undetermined: .*"
                                         r"do not determine the pose"):
        xslit.recoverTwoSlitPose(F, p1, p2, s["intrinsics1"], s["intrinsics2"],
                                 reprojThreshold=0.01)


def test_recover_calibrated_deterministic():
    s = random_two_view_scene(2, 200, sigma=0.5, outlier_ratio=0.3)
    F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], rng=0)
    a = xslit.recoverTwoSlitPose(F, s["points1"], s["points2"], s["intrinsics1"],
                                 s["intrinsics2"], mask=mask)
    b = xslit.recoverTwoSlitPose(F, s["points1"], s["points2"], s["intrinsics1"],
                                 s["intrinsics2"], mask=mask)
    assert a[0] == b[0]
    for x, y in zip(a[1:], b[1:], strict=True):
        np.testing.assert_array_equal(x, y)
