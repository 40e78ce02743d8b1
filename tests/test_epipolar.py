"""The epipolar tensor: the paper's numbers, exact recovery, robust estimation, degeneracies."""

import logging

import numpy as np
import pytest

import xslit
from xslit.epipolar import (
    candidate_matrices,
    epipolar_tensor,
    matrix_from_cameras,
    normalize_matrix_gauge,
    principal_minor_tensor,
    recover_configurations,
    sampson_distance,
    solve_linear_batch,
)
from xslit.epipolar.estimate import estimate_epipolar_tensor
from xslit.robust import RobustOptions
from xslit.synthetic import (
    random_points_in_front,
    random_pushbroom_camera,
    random_two_slit_camera,
    random_two_view_scene,
)
from xslit.testing import projective_distance

# Appendix C, eq. example_two_slit_s
A1 = np.array([[-1, 7, 4, 0], [8, -1, 13, 4.0]])
A2 = np.array([[11, 6, -2, 4], [8, -1, 13, -5.0]])
B1 = np.array([[14, 9, -3, 8], [0, 0, 0, 1.0]])
B2 = np.array([[-3, 8, 10, 3], [6, 13, 5, 13.0]])
# eq. example_tensor_s: blocks (f_ijkl)_kl for (i, j) = (1,1), (1,2), (2,1), (2,2)
PRINTED_F = np.array([[[[0, 0], [21816, -25650]], [[1906, -2090], [-3642, 5510]]],
                      [[[880, 475], [18600, -11875]], [[97, -380], [-1259, 1425]]]])
# eq. example_canonical_s: the two configurations, rows of C (second rows of A1, A2, B1, B2)
PRINTED_C = [
    np.array([[-3.87, 1, 1, 1], [-14.22, 8.33, -6.67, -22.17], [0.44, -0.28, 0.27, 1.14],
              [-0.86, 0.26, 0.15, 0.88]]),
    np.array([[-3.87, 1, 1, 1], [-14.22, 8.33, 9.25, 4.24], [0.44, 0.20, 0.27, -0.07],
              [-0.86, -1.34, -2.26, 0.88]]),
]


def test_appendix_tensor_exact():
    """eq. entries_epipolar_tensor on the appendix cameras gives eq. example_tensor_s exactly."""
    F = xslit.computeEpipolarTensor(xslit.TwoSlitCamera(A1, A2), xslit.TwoSlitCamera(B1, B2))
    np.testing.assert_array_equal(np.round(F), PRINTED_F)
    np.testing.assert_allclose(F, PRINTED_F, atol=1e-9)


def test_appendix_configurations_to_printed_decimals():
    """From the printed F, the two printed canonical configurations to their two decimals."""
    configs, C, res = recover_configurations(PRINTED_F)
    assert res.max() < 1e-12
    for printed in PRINTED_C:
        assert any(np.abs(np.round(c, 2) - printed).max() < 0.011 for c in C), printed
    # The second printed pair is the original cameras (projectively).
    truth = matrix_from_cameras(A1, A2, B1, B2)
    np.testing.assert_allclose(truth, C[1], rtol=1e-9, atol=1e-9)
    # Both reproduce F (up to scale).
    for cams in configs:
        assert projective_distance(epipolar_tensor(*cams), PRINTED_F) < 1e-12


def test_principal_minors_identity():
    """f_ijkl = (-1)^|S| det C[S, S], S = positions with paper index 1 (MATH-NOTES)."""
    C = matrix_from_cameras(A1, A2, B1, B2)
    F = principal_minor_tensor(C)
    assert F[1, 1, 1, 1] == 1.0
    np.testing.assert_allclose(F[0, 1, 1, 1], -C[0, 0])
    np.testing.assert_allclose(F[0, 0, 1, 1], np.linalg.det(C[:2, :2]))
    np.testing.assert_allclose(F[0, 0, 0, 0], np.linalg.det(C))
    assert projective_distance(F, PRINTED_F) < 1e-12
    # C and C^T have the same principal minors: the two configurations of Theorem 1.
    np.testing.assert_allclose(principal_minor_tensor(C.T), F, atol=1e-9)


def test_eight_candidates_exactly_two_consistent():
    _, res = candidate_matrices(PRINTED_F)
    assert res.shape == (8,)
    assert np.sum(res < 1e-9) == 2
    assert np.sort(res)[2] > 1e-3


def _random_pair(rng, pushbroom):
    a = random_two_slit_camera(rng)
    b = random_pushbroom_camera(rng) if pushbroom else random_two_slit_camera(rng)
    return a, b


def test_1000_noise_free_configurations():
    """F from 30 exact correspondences to 1e-9; one configuration equivalent to the truth."""
    rng = np.random.default_rng(20261121)
    n_cfg, n_pts = 1000, 30
    P1, P2, F_true, C_true = [], [], [], []
    for k in range(n_cfg):
        a, b = _random_pair(rng, pushbroom=bool(k % 2))
        X = random_points_in_front([a, b], n_pts, rng)
        P1.append(a.project(X))
        P2.append(b.project(X))
        F_true.append(epipolar_tensor(a.A1, a.A2, b.A1, b.A2))
        C_true.append(normalize_matrix_gauge(matrix_from_cameras(a.A1, a.A2, b.A1, b.A2)))
    F_est, _ = solve_linear_batch(np.stack(P1), np.stack(P2))
    F_true = np.stack(F_true)
    err = projective_distance(F_est.reshape(n_cfg, 16), F_true.reshape(n_cfg, 16), axis=-1)
    assert err.max() < 1e-9, err.max()
    n_equiv = 0
    for k in range(n_cfg):
        _, C, _ = recover_configurations(F_est[k])
        rel = [np.abs(normalize_matrix_gauge(c) - C_true[k]).max() / np.abs(C_true[k]).max()
               for c in C]
        n_equiv += min(rel) < 1e-6
    assert n_equiv == n_cfg


@pytest.mark.parametrize("method", [xslit.FM_LINEAR, xslit.FM_RANSAC, xslit.FM_LMEDS,
                                    xslit.USAC_DEFAULT, xslit.USAC_ACCURATE])
def test_find_exact_on_clean_data(method):
    s = random_two_view_scene(1, 100, kind="mixed")
    F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], method, rng=0)
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    assert projective_distance(F, F0) < 1e-9
    assert mask.shape == (100, 1) and mask.dtype == np.uint8
    assert mask.sum() == 100


def test_find_accepts_cv2_layout_and_usac_params():
    s = random_two_view_scene(2, 200, sigma=0.5, outlier_ratio=0.2)
    p1 = s["points1"][:, None, :].astype(np.float32)
    p2 = s["points2"][:, None, :].astype(np.float32)
    params = xslit.UsacParams(threshold=1.5, randomGeneratorState=7)
    F1, m1 = xslit.findEpipolarTensor(p1, p2, params)
    F2, m2 = xslit.findEpipolarTensor(p1, p2, params)
    np.testing.assert_array_equal(m1, m2)  # the seed makes it reproducible
    np.testing.assert_array_equal(F1, F2)
    assert m1[s["inliers"]].mean() > 0.98
    with pytest.raises(ValueError, match="UsacParams has no parameter"):
        params.treshold = 2.0


def _ceiling(F_true, s, thr):
    d = sampson_distance(F_true, s["points1"], s["points2"])
    within = d < thr
    truth = s["inliers"]
    return (within & truth).sum() / within.sum(), (within & truth).sum() / truth.sum()


@pytest.mark.parametrize("seed", range(6))
def test_robust_precision_recall_and_ml_rms(seed):
    """1000x1000 px, 300 matches, sigma 0.5 px, 30% outliers: precision and recall >= 0.99 of
    the noise ceiling; refined RMS within 10% of sigma sqrt((N - 13) / (4N))."""
    s = random_two_view_scene(seed, 300, sigma=0.5, outlier_ratio=0.3)
    thr = 1.5
    F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], xslit.USAC_DEFAULT, thr,
                                       rng=seed)
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    inl = mask[:, 0] == 1
    prec = (inl & s["inliers"]).sum() / inl.sum()
    rec = (inl & s["inliers"]).sum() / s["inliers"].sum()
    prec_ceil, rec_ceil = _ceiling(F0, s, thr)
    assert prec >= 0.99 * prec_ceil, (prec, prec_ceil)
    assert rec >= 0.99 * rec_ceil, (rec, rec_ceil)
    pairs = xslit.sfm.projective_pairs_from_tensor(F, s["points1"][inl], s["points2"][inl])
    n = inl.sum()
    expected = 0.5 * np.sqrt((n - 13) / (4 * n))
    assert pairs.refined
    assert abs(pairs.rms - expected) < 0.1 * expected, (pairs.rms, expected)
    # The refined tensor is on the variety: its two configurations reproduce it exactly.
    for cams in pairs.configurations:
        assert projective_distance(epipolar_tensor(*cams), pairs.F) < 1e-9


def test_appendix_noisy_experiment_refined():
    """70 points, sigma 1e-5, images about 100 px: C within 1e-3 relative after refinement
    (the paper's preliminary code was up to 7% off)."""
    rng = np.random.default_rng(70)
    a, b = xslit.TwoSlitCamera(A1, A2), xslit.TwoSlitCamera(B1, B2)
    X = rng.uniform(-1, 1, size=(20000, 3))
    p1, p2 = a.project(X), b.project(X)
    ok = (np.abs(p1) < 50).all(1) & (np.abs(p2) < 50).all(1)
    X, p1, p2 = X[ok][:70], p1[ok][:70], p2[ok][:70]
    assert len(X) == 70
    q1 = p1 + rng.normal(scale=1e-5, size=p1.shape)
    q2 = p2 + rng.normal(scale=1e-5, size=p2.shape)
    F, _ = xslit.findEpipolarTensor(q1, q2, xslit.FM_LINEAR)
    pairs = xslit.sfm.projective_pairs_from_tensor(F, q1, q2)
    C_true = matrix_from_cameras(A1, A2, B1, B2)
    best = np.inf
    for cams in pairs.configurations:
        C = matrix_from_cameras(*cams)
        best = min(best, np.max(np.abs(C - C_true) / np.abs(C_true)))
    assert best < 1e-3, best


def test_degenerate_inputs_fail_with_reason(caplog):
    a = random_two_slit_camera(3)
    b = random_two_slit_camera(4)
    rng = np.random.default_rng(5)
    X = random_points_in_front([a, b], 200, rng)
    opts = RobustOptions(threshold=1.5)
    # Fewer than 15 distinct correspondences (duplicates do not count).
    p1, p2 = a.project(X[:10]), b.project(X[:10])
    est = estimate_epipolar_tensor(np.vstack([p1, p1]), np.vstack([p2, p2]), opts, rng)
    assert est.F is None and "distinct" in est.reason
    # Identical cameras.
    est = estimate_epipolar_tensor(a.project(X), a.project(X), opts, rng)
    assert est.F is None and "determine" in est.reason
    # All scene points on one plane.
    Xp = X.copy()
    Xp[:, 2] = 0.3 * Xp[:, 0] - 0.2 * Xp[:, 1]
    ok = a.in_front(Xp) & b.in_front(Xp)
    est = estimate_epipolar_tensor(a.project(Xp[ok]), b.project(Xp[ok]), opts, rng)
    assert est.F is None and "coplanar" in est.reason
    # Points on a line.
    t = np.linspace(-0.5, 0.5, 60)[:, None]
    Xl = np.hstack([t, 0.5 * t, -0.3 * t])
    est = estimate_epipolar_tensor(a.project(Xl), b.project(Xl), opts, rng)
    assert est.F is None
    # 90% outliers: no confident wrong tensor.
    s = random_two_view_scene(6, 300, sigma=0.5, outlier_ratio=0.9)
    with caplog.at_level(logging.WARNING, logger="xslit"):
        F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], rng=0)
    assert F is None and mask.sum() == 0
    assert "chance" in caplog.text


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"points1": np.zeros((20, 3))}, "points1"),
        ({"points2": np.zeros((19, 2))}, "same number"),
        ({"points1": np.zeros((10, 2)), "points2": np.zeros((10, 2))}, "N >= 15"),
        ({"points1": np.full((20, 2), np.nan)}, "points1 must be finite"),
        ({"method": 99}, "method"),
        ({"ransacReprojThreshold": -1.0}, "ransacReprojThreshold"),
        ({"confidence": 1.5}, "confidence"),
        ({"maxIters": 0}, "maxIters"),
        ({"rng": "seed"}, "rng"),
    ],
)
def test_find_bad_input(kwargs, match):
    rng = np.random.default_rng(0)
    args = {"points1": rng.uniform(size=(20, 2)), "points2": rng.uniform(size=(20, 2))}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        xslit.findEpipolarTensor(**args)


def test_compute_bad_input():
    cam = random_two_slit_camera(0)
    with pytest.raises(ValueError, match="camera2"):
        xslit.computeEpipolarTensor(cam, np.eye(3))
    with pytest.raises(ValueError, match=r"params\.threshold"):
        xslit.findEpipolarTensor(np.zeros((20, 2)), np.zeros((20, 2)),
                                 xslit.UsacParams(threshold=0))
