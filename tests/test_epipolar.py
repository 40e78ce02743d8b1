"""The epipolar tensor: the paper's numbers, exact recovery, robust estimation, degeneracies."""

import logging

import numpy as np
import pytest
from tolerances import (
    APPENDIX_NOISY_C_RTOL,
    CANDIDATE_INCONSISTENT,
    CONFIGURATION_RTOL,
    DENSITY_TOP_INLIERS,
    EXACT,
    GRAM_PASS_RTOL,
    LEAST_EIGENVECTOR_COND_REGULAR,
    LEAST_EIGENVECTOR_COND_SINGULAR,
    LOG_BINOM_RTOL,
    ML_RMS_RTOL,
    ML_RMS_UNLUCKY_SCENE,
    ML_RMS_YARDSTICK_RTOL,
    MOMENT_RTOL,
    PRECISION_RECALL_GOOD_RUNS,
    PRECISION_RECALL_OF_CEILING,
    PRECISION_RECALL_RUN_FLOOR,
    PRINTED_TWO_DECIMALS,
    ROBUST_FALSE_INLIERS,
    ROBUST_MEDIAN_SAMPSON_PX,
    ROBUST_RECALL,
    SAME_FIT_RTOL,
    SAMPSON_TWO_ROUTES_PX,
    TAUBIN_EIGEN_RESIDUAL_RTOL,
    TENSOR_RTOL,
)

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

# Appendix C, eq. (49)
A1 = np.array([[-1, 7, 4, 0], [8, -1, 13, 4.0]])
A2 = np.array([[11, 6, -2, 4], [8, -1, 13, -5.0]])
B1 = np.array([[14, 9, -3, 8], [0, 0, 0, 1.0]])
B2 = np.array([[-3, 8, 10, 3], [6, 13, 5, 13.0]])
# eq. (50): blocks (f_ijkl)_kl for (i, j) = (1,1), (1,2), (2,1), (2,2)
PRINTED_F = np.array([[[[0, 0], [21816, -25650]], [[1906, -2090], [-3642, 5510]]],
                      [[[880, 475], [18600, -11875]], [[97, -380], [-1259, 1425]]]])
# eq. (51): the two configurations, rows of C (second rows of A1, A2, B1, B2)
PRINTED_C = [
    np.array([[-3.87, 1, 1, 1], [-14.22, 8.33, -6.67, -22.17], [0.44, -0.28, 0.27, 1.14],
              [-0.86, 0.26, 0.15, 0.88]]),
    np.array([[-3.87, 1, 1, 1], [-14.22, 8.33, 9.25, 4.24], [0.44, 0.20, 0.27, -0.07],
              [-0.86, -1.34, -2.26, 0.88]]),
]


def test_appendix_tensor_exact():
    """eq. (23) on the appendix cameras gives eq. (50) exactly."""
    F = xslit.computeEpipolarTensor(xslit.TwoSlitCamera(A1, A2), xslit.TwoSlitCamera(B1, B2))
    np.testing.assert_array_equal(np.round(F), PRINTED_F)
    np.testing.assert_allclose(F, PRINTED_F, atol=TENSOR_RTOL)


def test_appendix_configurations_to_printed_decimals():
    """From the printed F, the two printed canonical configurations to their two decimals."""
    configs, C, res = recover_configurations(PRINTED_F)
    assert res.max() < EXACT
    for printed in PRINTED_C:
        assert any(np.abs(np.round(c, 2) - printed).max() < PRINTED_TWO_DECIMALS
                   for c in C), printed
    # The second printed pair is the original cameras (projectively).
    truth = matrix_from_cameras(A1, A2, B1, B2)
    np.testing.assert_allclose(truth, C[1], rtol=TENSOR_RTOL, atol=TENSOR_RTOL)
    # Both reproduce F (up to scale).
    for cams in configs:
        assert projective_distance(epipolar_tensor(*cams), PRINTED_F) < EXACT


def test_principal_minors_identity():
    """f_ijkl = (-1)^|S| det C[S, S], S = positions with paper index 1 (the selection that the
    appendix algorithm and its printed example agree with; the sentence before it states it
    the other way round)."""
    C = matrix_from_cameras(A1, A2, B1, B2)
    F = principal_minor_tensor(C)
    assert F[1, 1, 1, 1] == 1.0
    np.testing.assert_allclose(F[0, 1, 1, 1], -C[0, 0])
    np.testing.assert_allclose(F[0, 0, 1, 1], np.linalg.det(C[:2, :2]))
    # The appendix's f_1111 vanishes: both sides are rounding noise of a 4x4 determinant.
    np.testing.assert_allclose(F[0, 0, 0, 0], np.linalg.det(C),
                               atol=EXACT * np.abs(C).max() ** 4)
    assert projective_distance(F, PRINTED_F) < EXACT
    # C and C^T have the same principal minors: the two configurations of Theorem 1.
    np.testing.assert_allclose(principal_minor_tensor(C.T), F, atol=TENSOR_RTOL)


def test_eight_candidates_exactly_two_consistent():
    _, res = candidate_matrices(PRINTED_F)
    assert res.shape == (8,)
    assert np.sum(res < TENSOR_RTOL) == 2
    assert np.sort(res)[2] > CANDIDATE_INCONSISTENT
    # Without the residuals: the same candidates.
    C, none = candidate_matrices(PRINTED_F, residuals=False)
    assert none is None
    np.testing.assert_array_equal(C, candidate_matrices(PRINTED_F)[0])


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
    assert err.max() < TENSOR_RTOL, err.max()
    n_equiv = 0
    for k in range(n_cfg):
        _, C, _ = recover_configurations(F_est[k])
        rel = [np.abs(normalize_matrix_gauge(c) - C_true[k]).max() / np.abs(C_true[k]).max()
               for c in C]
        n_equiv += min(rel) < CONFIGURATION_RTOL
    assert n_equiv == n_cfg


@pytest.mark.parametrize("method", [xslit.FM_LINEAR, xslit.FM_RANSAC, xslit.FM_LMEDS,
                                    xslit.USAC_DEFAULT, xslit.USAC_ACCURATE])
def test_find_exact_on_clean_data(method):
    s = random_two_view_scene(1, 100, kind="mixed")
    F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], method, rng=0)
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    assert projective_distance(F, F0) < TENSOR_RTOL
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
    assert m1[s["inliers"]].mean() > ROBUST_RECALL
    with pytest.raises(ValueError, match="UsacParams has no parameter"):
        params.treshold = 2.0


def _precision_recall_rms(method, seeds, streams=5):
    """1000x1000 px, 300 matches, sigma 0.5 px, 30% outliers, each scene with ``streams``
    random streams: precision and recall >= 0.99 of the noise ceiling summed over all runs;
    each run >= 0.9 of it and 85% of the runs >= 0.99; refined RMS (first stream) within 10%
    of sigma sqrt((N - 13) / (4N))."""
    thr = 1.5
    tp = found = true_within = within = 0
    worst = []
    for seed in seeds:
        s = random_two_view_scene(seed, 300, sigma=0.5, outlier_ratio=0.3)
        F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
        d0 = sampson_distance(F0, s["points1"], s["points2"]) < thr
        ceiling = (d0 & s["inliers"]).sum()
        prec_ceil, rec_ceil = ceiling / d0.sum(), ceiling / s["inliers"].sum()
        for stream in range(streams):
            F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], method, thr,
                                               rng=seed + 1000 * stream)
            inl = mask[:, 0] == 1
            hit = (inl & s["inliers"]).sum()
            prec, rec = hit / inl.sum(), hit / s["inliers"].sum()
            worst.append(min(prec / prec_ceil, rec / rec_ceil))
            assert worst[-1] >= PRECISION_RECALL_RUN_FLOOR, (seed, stream, prec, prec_ceil, rec,
                                                             rec_ceil)
            tp, found, true_within, within = (tp + hit, found + inl.sum(),
                                              true_within + ceiling, within + d0.sum())
            if stream:
                continue
            pairs = xslit.sfm.projective_pairs_from_tensor(F, s["points1"][inl],
                                                           s["points2"][inl])
            n = inl.sum()
            expected = 0.5 * np.sqrt((n - 13) / (4 * n))
            assert pairs.refined
            assert abs(pairs.rms - expected) < ML_RMS_RTOL * expected, (seed, pairs.rms, expected)
            # The refined tensor is on the variety: its two configurations reproduce it exactly.
            for cams in pairs.configurations:
                assert projective_distance(epipolar_tensor(*cams), pairs.F) < TENSOR_RTOL
    assert tp / found >= PRECISION_RECALL_OF_CEILING * true_within / within, (
        tp / found, true_within / within)
    assert tp >= PRECISION_RECALL_OF_CEILING * true_within, (tp, true_within)
    good = np.mean(np.array(worst) >= PRECISION_RECALL_OF_CEILING)
    assert good >= PRECISION_RECALL_GOOD_RUNS, sorted(worst)[:10]


#: Scene 8's noise draws are small (empirical sigma 0.469 px on its inliers): maximum
#: likelihood from the true tensor on the true inliers gives 0.874 of the expected RMS, so no
#: estimator meets the 10% criterion there; test_ml_rms_reaches_the_yardstick covers it.
UNLUCKY_NOISE_SCENE = 8


@pytest.mark.parametrize("method", [xslit.USAC_DEFAULT, xslit.USAC_ACCURATE])
def test_robust_precision_recall_and_ml_rms(method):
    """11 scenes x 5 random streams. Summed over the runs both methods reach 0.998 of the
    ceiling; 93% of the runs reach 0.99 in each. Most of the others are scene 3, whose data
    leave two inlier sets nearly equally good: the linear fit on the true inliers has a
    truncated quadratic (MSAC) loss of 248.8, a fit bent towards 5 outliers (missing 4
    inliers) 248.5, and maximum likelihood on the variety from the bent fit stays there; which
    one a run finds depends on its stream (``tools/sweep_precision_recall.py --runs 10``: 10
    runs in 800 below 0.99, 7 of them scene 3; worst 0.905)."""
    _precision_recall_rms(method, [s for s in range(12) if s != UNLUCKY_NOISE_SCENE])


def test_ml_rms_reaches_the_yardstick():
    """On scene 8 the refined RMS is what maximum likelihood from the truth gives on the true
    inliers (within 1%), though both are 13% below the expectation."""
    s = random_two_view_scene(UNLUCKY_NOISE_SCENE, 300, sigma=0.5, outlier_ratio=0.3)
    p1, p2, truth = s["points1"], s["points2"], s["inliers"]
    F, mask = xslit.findEpipolarTensor(p1, p2, xslit.USAC_DEFAULT, 1.5,
                                       rng=UNLUCKY_NOISE_SCENE)
    inl = mask[:, 0] == 1
    ours = xslit.sfm.projective_pairs_from_tensor(F, p1[inl], p2[inl])
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    yardstick = xslit.sfm.projective_pairs_from_tensor(F0, p1[truth], p2[truth])
    assert abs(ours.rms - yardstick.rms) < ML_RMS_YARDSTICK_RTOL * yardstick.rms, (
        ours.rms, yardstick.rms)
    n = truth.sum()
    assert yardstick.rms < ML_RMS_UNLUCKY_SCENE * 0.5 * np.sqrt((n - 13) / (4 * n))


def test_ml_refinement_starts_from_both_configurations():
    """Scene 7: the refinement is started from both configurations and returns the better
    one, at the maximum-likelihood RMS. (From an algebraic linear tensor one of the starts
    stopped in a local minimum at 0.84 px; from the tensor polished on the variety both reach
    the optimum, and the returned pair is still the better of the two.)"""
    s = random_two_view_scene(7, 300, sigma=0.5, outlier_ratio=0.3)
    p1, p2 = s["points1"], s["points2"]
    F, mask = xslit.findEpipolarTensor(p1, p2, xslit.USAC_DEFAULT, 1.5, rng=7)
    inl = mask[:, 0] == 1
    q1, q2 = p1[inl], p2[inl]
    pairs = xslit.sfm.projective_pairs_from_tensor(F, q1, q2)
    n = inl.sum()
    expected = 0.5 * np.sqrt((n - 13) / (4 * n))
    assert abs(pairs.rms - expected) < ML_RMS_RTOL * expected
    # each start on its own (normalised coordinates, as the function does internally)
    from xslit.epipolar.linear import normalize_axes
    from xslit.epipolar.minors import recover_configurations
    from xslit.epipolar.tensor import contract_modes
    from xslit.sfm.two_view import refine_projective_pair

    Ts, (x, y, xp, yp) = normalize_axes(q1, q2)
    n1, n2 = np.stack([x, y], 1), np.stack([xp, yp], 1)
    assert all(np.array_equal(T, T_used) for T, T_used in zip(Ts, pairs.transforms, strict=True))
    _, Cs, _ = recover_configurations(contract_modes(F, *[np.linalg.inv(T) for T in Ts]))
    rms = sorted(refine_projective_pair(C, n1, n2, axis_scales=[1 / T[0, 0] for T in Ts]).rms
                 for C in Cs)
    assert rms[0] == pytest.approx(pairs.rms, rel=SAME_FIT_RTOL)
    assert rms[1] >= rms[0]


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
    assert best < APPENDIX_NOISY_C_RTOL, best


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
    # 90% outliers: no confident wrong tensor. The best support is at chance level; the test
    # against chance rejects it, or before it the polish, when outliers hold its linear fit
    # (which of the two depends on the random stream: seeds 1-3 give the first, 0 the second).
    s = random_two_view_scene(6, 300, sigma=0.5, outlier_ratio=0.9)
    with caplog.at_level(logging.WARNING, logger="xslit"):
        F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], rng=0)
    assert F is None and mask.sum() == 0
    assert "chance" in caplog.text or "no tensor of a camera pair fits" in caplog.text


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


# --- PROSAC and the joint-density order ---------------------------------------------------


def test_sampson_rows_and_pairs_match_sampson_distance():
    from xslit.epipolar.tensor import SampsonRows, sampson_distance_pairs

    rng = np.random.default_rng(11)
    p1, p2 = rng.uniform(0, 900, (40, 2)), rng.uniform(0, 900, (30, 2))
    F = rng.normal(size=(3, 2, 2, 2, 2))
    rows = SampsonRows(p1[:30], p2)
    np.testing.assert_allclose(rows.distances(F), sampson_distance(F, p1[:30], p2), rtol=EXACT)
    np.testing.assert_allclose(rows.distances(F, signed=True)[0] * rows.distances(F)[0],
                               sampson_distance(F[0], p1[:30], p2) ** 2 *
                               np.sign(rows.distances(F, signed=True)[0]), rtol=EXACT)
    D = sampson_distance_pairs(F[0], p1, p2)
    i, j = np.meshgrid(np.arange(40), np.arange(30), indexing="ij")
    np.testing.assert_allclose(D.ravel(), sampson_distance(F[0], p1[i.ravel()], p2[j.ravel()]),
                               rtol=EXACT)


def test_density_order_ranks_correct_matches_first():
    from xslit.robust import density_order

    for seed in range(3):
        s = random_two_view_scene(seed, 1000, sigma=0.5, outlier_ratio=0.3)
        order = density_order(np.hstack([s["points1"], s["points2"]]), np.random.default_rng(0))
        assert np.array_equal(np.sort(order), np.arange(1000))
        assert s["inliers"][order[:100]].mean() >= DENSITY_TOP_INLIERS
        assert s["inliers"][order[:15]].all()


def test_prosac_schedule_and_termination():
    from xslit.robust import ProsacSampler

    rng = np.random.default_rng(0)
    order = rng.permutation(500)
    p = ProsacSampler(order, 15, 0.99)
    first = p.draw(rng, 20)
    assert set(first[0]) == set(order[:15])  # the first sample is the top 15
    # sample t holds the point of rank 15 + t - 1 (the growth is one point per sample here)
    for t in range(1, 20):
        assert order[14 + t] in first[t] and np.isin(first[t], order[:15 + t]).all()
    # all of the top 200 inliers: no more samples are needed, n* is where the support stops
    inl = np.zeros(500, bool)
    inl[order[:200]] = True
    assert p.needed(inl, 0.01) == 0
    # a shuffled order (every point an inlier with probability 0.7): RANSAC's count
    inl = rng.random(500) < 0.7
    k = p.needed(inl, 0.01)
    assert 200 < k < 3000


@pytest.mark.parametrize("sampler", ["adversarial", "user", "density"])
def test_prosac_recovers_the_tensor_whatever_the_order(sampler):
    s = random_two_view_scene(4, 400, sigma=0.5, outlier_ratio=0.3)
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    p1, p2, truth = s["points1"], s["points2"], s["inliers"]
    if sampler == "adversarial":  # outliers first: PROSAC must fall back towards RANSAC
        perm = np.argsort(truth, kind="stable")
    elif sampler == "user":  # a good user order (e.g. descriptor distances)
        perm = np.argsort(~truth, kind="stable")
    else:
        perm = np.arange(len(p1))
    params = xslit.UsacParams(threshold=1.5, randomGeneratorState=3,
                              sampler=xslit.SAMPLING_JOINT_DENSITY if sampler == "density"
                              else xslit.SAMPLING_PROSAC)
    F, mask = xslit.findEpipolarTensor(p1[perm], p2[perm], params)
    inl = mask[:, 0] == 1
    assert (inl & truth[perm]).sum() >= ROBUST_RECALL * truth.sum()
    assert (inl & ~truth[perm]).sum() <= ROBUST_FALSE_INLIERS
    d = sampson_distance(F0, p1[perm][inl], p2[perm][inl])
    assert np.median(d) < ROBUST_MEDIAN_SAMPSON_PX
    assert np.median(sampson_distance(F, p1[perm][inl], p2[perm][inl])) < ROBUST_MEDIAN_SAMPSON_PX


def test_prosac_optimises_only_models_supported_beyond_their_sample():
    """PROSAC's speculative local optimisation (of a batch's best below the best so far)
    counts only the support beyond a sample's own points: a polynomial of degree 9 through
    10 points fits them whatever they are, and a sample with outliers that also passes near
    a point or two was optimised in every batch when its 10 points counted (half the true
    support of 14; 78-101 refits in 2,000 samples over eight streams, 3-24 now)."""
    from xslit.robust import PROSAC, RobustProblemBase, robust_estimate

    x = np.linspace(-1.0, 1.0, 40)
    V = np.vander(x, 10)

    class Polynomial(RobustProblemBase):
        sample_size, n_points = 10, 40

        def __init__(self, y):
            self.y, self.refits = y, 0

        def fit_samples(self, samples, near=None):
            return (np.linalg.solve(V[samples], self.y[samples][..., None])[..., 0],
                    np.arange(len(samples)))

        def residuals(self, models, subset=None):
            return np.abs(models @ V.T - self.y)

        def refit(self, model, inliers, threshold, final=True):
            self.refits += 1
            return np.linalg.lstsq(V[inliers], self.y[inliers], rcond=None)[0]

    opt = RobustOptions(sampler=PROSAC, threshold=0.02, max_iterations=2000,
                        randomness_alpha=None)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        y = rng.uniform(-3.0, 3.0, 40)
        truth = np.zeros(40, bool)
        truth[rng.choice(40, 14, replace=False)] = True
        y[truth] = x[truth] ** 4 - x[truth]
        # The best points first, then the outliers: later samples mix both.
        order = np.concatenate([np.flatnonzero(truth)[:10], np.flatnonzero(~truth),
                                np.flatnonzero(truth)[10:]])
        problem = Polynomial(y)
        res = robust_estimate(problem, opt, rng, order=order)
        assert res.inliers[truth].all()
        assert problem.refits <= 40


def test_prosac_needs_an_order():
    from xslit.robust import PROSAC, RobustProblemBase, robust_estimate

    class Bare(RobustProblemBase):
        sample_size, n_points = 2, 10

    with pytest.raises(ValueError, match="order is required"):
        robust_estimate(Bare(), RobustOptions(sampler=PROSAC), np.random.default_rng(0))
    with pytest.raises(ValueError, match="sampler must be"):
        robust_estimate(Bare(), RobustOptions(sampler="napsac"), np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"params\.sampler must be"):
        s = random_two_view_scene(0, 50)
        xslit.findEpipolarTensor(s["points1"], s["points2"], xslit.UsacParams(sampler=1))


def test_sampson_rows_reuse_scratch_and_return_fresh_arrays():
    """Batches of different sizes through one evaluator (its scratch buffers are reused) give
    the distances and gradient norms of the (5, N, 16) operator, and results are never views
    of the scratch."""
    from xslit.epipolar.tensor import SampsonRows, sampson_distance_op, sampson_operator

    rng = np.random.default_rng(12)
    p1, p2 = rng.uniform(0, 900, (50, 2)), rng.uniform(0, 900, (50, 2))
    G = sampson_operator(p1, p2)
    rows = SampsonRows(p1, p2)
    first = None
    for m in (3, 1, 5, 2):
        F = rng.normal(size=(m, 2, 2, 2, 2))
        d, gn = rows.distances(F, norms=True)
        np.testing.assert_allclose(d, sampson_distance_op(G, F), rtol=EXACT)
        grad = np.einsum("knj,mj->kmn", G[1:], F.reshape(m, 16))
        np.testing.assert_allclose(gn, np.sqrt((grad ** 2).sum(0)), rtol=EXACT)
        if first is None:
            first, kept = (d, gn), (d.copy(), gn.copy())
    np.testing.assert_array_equal(first[0], kept[0])
    np.testing.assert_array_equal(first[1], kept[1])


def test_scratch_views_share_a_growing_buffer():
    from xslit._scratch import Scratch

    s = Scratch()
    a = s.get("t", (2, 3))
    assert a.shape == (2, 3) and a.flags.c_contiguous
    b = s.get("t", (3,))
    assert np.shares_memory(a, b)  # smaller request: the same buffer
    c = s.get("t", (4, 5))
    assert c.shape == (4, 5) and not np.shares_memory(a, c)  # grown
    assert not np.shares_memory(c, s.get("other", (4, 5)))


def test_scratch_buffers_are_reused_after_release_but_never_under_a_live_view():
    """A large buffer of a released Scratch serves the next Scratch of the thread (no new pages
    to map); one that a view still refers to is not handed out; small ones are not pooled. In
    a new thread, whose pool starts empty."""
    import gc
    import threading

    from xslit._scratch import POOLED_MIN_BYTES, Scratch

    def check():
        n = POOLED_MIN_BYTES // 8 + 17
        first = Scratch()
        address = first.get("t", (n,)).__array_interface__["data"][0]
        del first
        gc.collect()
        second = Scratch()
        reused = second.get("u", (n - 10,))
        assert reused.__array_interface__["data"][0] == address
        kept = reused  # a view outlives its Scratch
        del second, reused
        gc.collect()
        third = Scratch()
        assert not np.shares_memory(third.get("v", (n,)), kept)
        assert Scratch().get("w", (10,)).base.size == 10
        results.append(True)

    results = []
    worker = threading.Thread(target=check)
    worker.start()
    worker.join()
    assert results == [True]


def test_disjoint_samples_are_uniform_and_disjoint_per_permutation():
    from xslit.robust import disjoint_samples

    rng = np.random.default_rng(5)
    n, s = 50, 12
    counts = np.zeros(n)
    for _ in range(400):
        S = disjoint_samples(rng, n, s, 6)
        assert S.shape == (6, s)
        for chunk in (S[:4], S[4:]):  # 50 // 12 = 4 samples per permutation
            assert len(np.unique(chunk)) == chunk.size
        counts += np.bincount(S.ravel(), minlength=n)
    expected = 400 * 6 * s / n
    # every index drawn as often as the others (binomial spread about sqrt(expected) = 19)
    assert np.abs(counts - expected).max() < 6 * np.sqrt(expected)


def test_problem_refit_exact_on_clean_data_and_cached_residuals():
    """The final refit recovers F exactly; an intermediate (annealing) refit, the Gram pass
    alone, to about eps cond^2; residuals of one model are cached, read-only and equal to a
    fresh evaluation."""
    from xslit.epipolar.estimate import EpipolarProblem

    s = random_two_view_scene(3, 200, kind="mixed")
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    problem = EpipolarProblem(s["points1"], s["points2"])
    rng = np.random.default_rng(0)
    # The problem's models are tensors of the pixels centred on their medians.
    model0 = problem.model_from_pixels(F0)
    start = model0 + 1e-3 * rng.normal(size=F0.shape)
    inliers = np.ones(200, bool)
    F = problem.refit(start, inliers, 1.0)
    assert projective_distance(problem.pixels_from_model(F), F0) < TENSOR_RTOL
    gram_pass = problem.refit(start, inliers, 4.0, final=False)
    assert projective_distance(gram_pass, model0) < GRAM_PASS_RTOL
    r = problem.residuals(F[None])
    assert not r.flags.writeable
    np.testing.assert_array_equal(r, problem.residuals(F[None].copy()))
    np.testing.assert_allclose(r[0], sampson_distance(problem.pixels_from_model(F), s["points1"],
                                                      s["points2"]), atol=SAMPSON_TWO_ROUTES_PX)
    assert problem.refit(start, np.arange(200) < 14, 1.0) is None  # fewer than 15 rows


def test_problem_refit_thins_many_inliers(monkeypatch):
    """Beyond REFIT_ROWS inliers a refit fits every k-th of them (at most that many): the same
    tensor as the refit of those rows alone; without thinning, all of them."""
    from xslit.epipolar import estimate
    from xslit.epipolar.estimate import EpipolarProblem

    s = random_two_view_scene(6, 300, sigma=0.5)
    problem = EpipolarProblem(s["points1"], s["points2"])
    start = problem.model_from_pixels(xslit.computeEpipolarTensor(s["camera1"], s["camera2"]))
    inliers = np.arange(300) % 5 > 0  # 240 inliers
    whole = problem.refit(start, inliers, 2.0)
    monkeypatch.setattr(estimate, "REFIT_ROWS", 100)
    thinned = np.zeros(300, bool)
    thinned[np.flatnonzero(inliers)[::3]] = True  # 80 rows: every 3rd of 240
    np.testing.assert_array_equal(problem.refit(start, inliers, 2.0),
                                  problem.refit(start, thinned, 2.0))
    np.testing.assert_array_equal(problem.refit(start, inliers, 2.0, thin=False), whole)


def test_least_eigenvector_and_inverse_iteration_match_eigh():
    """The partial eigensolvers of the intermediate fits: the least eigenvector as ``eigh``
    gives it; the conditioning bound within a factor 4 below ``s_1 / s_15``; inverse iteration
    exact also on singular (noise-free) Gram matrices, and from a distant start."""
    from xslit.epipolar.estimate import EpipolarProblem
    from xslit.epipolar.linear import inverse_iteration, least_eigenvector

    s = random_two_view_scene(4, 300, sigma=0.5)
    problem = EpipolarProblem(s["points1"], s["points2"])
    rng = np.random.default_rng(1)
    D = problem.design[rng.permutation(300)[:240].reshape(2, 120)]
    G = np.swapaxes(D, 1, 2) @ D
    w, V = np.linalg.eigh(G)
    for b in range(2):
        v, cond = least_eigenvector(G[b])
        assert abs(abs(v @ V[b, :, 0]) - 1) < EXACT
        true = np.sqrt(w[b, 1] / w[b, 15])
        assert true / 4 <= cond <= true
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    start = F0.reshape(16) @ problem.normalized_from_model
    for x0 in (start / np.linalg.norm(start), np.ones(16) / 4):  # near, and far (no prior)
        v = inverse_iteration(G, x0)
        np.testing.assert_allclose(np.abs(np.einsum("bi,bi->b", v, V[:, :, 0])), 1.0,
                                   atol=EXACT)
    # noise-free rows: G is singular, the null vector is exact; from the all-ones start too
    clean = random_two_view_scene(5, 300, kind="mixed")
    exact = EpipolarProblem(clean["points1"], clean["points2"])
    Dc = exact.design[rng.permutation(300)[:240].reshape(2, 120)]
    v = inverse_iteration(np.swapaxes(Dc, 1, 2) @ Dc, np.ones(16) / 4, steps=6)
    residual = np.linalg.norm(Dc @ v[..., None], axis=(1, 2)) / np.linalg.norm(Dc, axis=(1, 2))
    assert np.all(residual < EXACT)
    # a rank-deficient Gram matrix (two null vectors): no conditioning left
    u = rng.normal(size=16)
    u -= (u @ v[0]) * v[0]
    u /= np.linalg.norm(u)
    Dd = Dc[0] - np.outer(Dc[0] @ u, u)  # null vectors v[0] and u
    assert least_eigenvector(Dd.T @ Dd)[1] < LEAST_EIGENVECTOR_COND_SINGULAR
    assert least_eigenvector(Dc[0].T @ Dc[0])[1] > LEAST_EIGENVECTOR_COND_REGULAR


def test_taubin_matrices_from_design_equal_a_pass_over_the_points():
    """Taubin's moment matrices of a subset from its rows of the design matrix (a gather and
    one product) equal those of a pass over its normalised coordinates, for a mask and for
    indices."""
    from xslit.epipolar.estimate import EpipolarProblem
    from xslit.epipolar.linear import taubin_matrices, taubin_matrices_from_design

    s = random_two_view_scene(4, 300, sigma=0.5)
    problem = EpipolarProblem(s["points1"], s["points2"])
    scales = problem.frame[:, 0, 0]
    mask = np.random.default_rng(2).random(300) < 0.7
    expected = taubin_matrices(problem.normalized[:, mask], scales)
    for rows in (mask, np.flatnonzero(mask)):
        for got, want in zip(taubin_matrices_from_design(problem.design, rows, scales),
                             expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=0,
                                       atol=MOMENT_RTOL * np.abs(want).max())


def test_taubin_basis_holds_the_least_generalised_eigenvectors():
    """Taubin's basis: each vector solves the generalised eigenproblem with its eigenvalue
    (the constant entry eliminated), the first is Taubin's fit, and the eigenvalues ascend."""
    from xslit.epipolar.estimate import EpipolarProblem
    from xslit.epipolar.linear import taubin_basis, taubin_fit, taubin_matrices_from_design

    s = random_two_view_scene(4, 300, sigma=0.5)
    problem = EpipolarProblem(s["points1"], s["points2"])
    M, N = taubin_matrices_from_design(problem.design, np.ones(300, bool),
                                       problem.frame[:, 0, 0])
    basis, ratios = taubin_basis(M, N, 3)
    f, fit_ratios = taubin_fit(M, N)
    np.testing.assert_array_equal(basis[0], f)
    np.testing.assert_array_equal(ratios, fit_ratios)
    assert np.all(np.diff(ratios[:15]) >= 0) and np.isinf(ratios[15])
    np.testing.assert_allclose(np.linalg.norm(basis, axis=1), 1.0, rtol=EXACT)
    for v, lam in zip(basis, ratios, strict=False):
        # M v = lam N v on the 15 entries with a gradient; the constant row is the
        # elimination itself (M v)[15] = 0.
        residual = M @ v - lam * N @ v
        assert np.abs(residual).max() <= TAUBIN_EIGEN_RESIDUAL_RTOL * np.abs(M).max()


def test_lo_inner_fits_from_a_nearby_model_equal_the_eigh_fits():
    """Local optimisation's inner fits by inverse iteration from the model whose inliers
    they sample agree with the SVD of their rows, as the Gram-pass fits do."""
    from xslit.epipolar.estimate import EpipolarProblem
    from xslit.epipolar.linear import denormalize_with

    s = random_two_view_scene(6, 300, sigma=0.5, outlier_ratio=0.3)
    problem = EpipolarProblem(s["points1"], s["points2"])
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    inl = np.flatnonzero(s["inliers"])
    picks = inl[np.random.default_rng(2).permutation(len(inl))[:200].reshape(2, 100)]
    near, _ = problem.fit_samples(picks, near=F0)
    full, _ = problem.fit_samples(picks)  # first Gram pass of eigh, no start
    for a, b, sample in zip(near, full, picks, strict=True):
        svd = denormalize_with(np.linalg.svd(problem.design[sample])[2][-1], problem.model_from_normalized)
        assert projective_distance(a, svd) < TENSOR_RTOL
        assert projective_distance(b, svd) < TENSOR_RTOL


def test_log_binomial_table():
    from scipy.special import gammaln

    from xslit.robust import log_binom_table

    n = np.arange(15, 100001, dtype=float)
    expected = gammaln(n + 1) - gammaln(n - 14) - gammaln(16.0)
    np.testing.assert_allclose(log_binom_table(100000, 15), expected, rtol=LOG_BINOM_RTOL,
                               atol=LOG_BINOM_RTOL)


def test_flags_keep_cv2_values_and_refuse_cv2_objects():
    # Code written for cv2 keeps its meaning: the linear solver is cv2.FM_8POINT's value, the
    # minimal solver cv2.FM_7POINT's; a cv2.UsacParams is refused with a pointer to xslit's.
    cv2 = pytest.importorskip("cv2")
    assert xslit.FM_LINEAR == cv2.FM_8POINT and xslit.FM_13POINT == cv2.FM_7POINT
    assert (xslit.FM_RANSAC, xslit.FM_LMEDS) == (cv2.FM_RANSAC, cv2.FM_LMEDS)
    assert (xslit.USAC_DEFAULT, xslit.USAC_ACCURATE) == (cv2.USAC_DEFAULT, cv2.USAC_ACCURATE)
    p = np.random.default_rng(0).uniform(0, 100, (30, 2))
    with pytest.raises(ValueError, match=r"^method must be .* xslit.UsacParams"):
        xslit.findEpipolarTensor(p, p, cv2.UsacParams())
    with pytest.raises(ValueError, match=r"^method must be an xslit flag"):
        xslit.findEpipolarTensor(p, p, True)
