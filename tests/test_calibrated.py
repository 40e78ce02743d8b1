"""The calibrated solver (xslit.sfm.calibrated) against ground truth."""

import numpy as np
import pytest
from tolerances import (
    CLEAN_POSE_POINTS,
    CLEAN_POSE_RMS_PX,
    CLEAN_POSE_ROTATION_DEG,
    CLEAN_SAMPSON_PX,
    ELIMINATED_ILL_CONDITIONED_RTOL,
    EXACT,
    NONZERO_RTOL,
    NORMAL_EQUATIONS_RTOL,
    TENSOR_MAP_RANK_RTOL,
    TENSOR_RTOL,
)

import xslit
from xslit.cameras import compose_camera
from xslit.epipolar import epipolar_tensor
from xslit.epipolar.linear import axis_normalization
from xslit.epipolar.tensor import sampson_distance
from xslit.geometry import matrix_from_rvec, rvec_from_matrix, skew
from xslit.sfm.calibrated import pose_tensors, relative_pose, rotation_grid, tensor_map
from xslit.synthetic import random_sweep_scene, random_two_view_scene, rotation_error_deg


def _rot_err_deg(R, R_true):
    return float(np.degrees(np.linalg.norm(rvec_from_matrix(R @ R_true.T))))


#: Rank of Phi: two two-slit cameras, a two-slit and a pushbroom camera, two pushbrooms.
RANK = {"two_slit": 14, "mixed": 13, "pushbroom": 11}


@pytest.mark.parametrize("kind", ["two_slit", "mixed", "pushbroom"])
def test_tensor_is_linear_in_pose(kind):
    """vec F = Phi [vec R, vec([t]x R)] on 200 seeded poses and intrinsics of each kind."""
    rng = np.random.default_rng(7)
    for seed in range(200):
        s = random_two_view_scene(seed, 20, kind=kind)
        Phi = tensor_map(s["intrinsics1"], s["intrinsics2"])
        p1, p2 = s["points1"], s["points2"]
        Ts = [axis_normalization(v) for v in (p1[:, 0], p1[:, 1], p2[:, 0], p2[:, 1])]
        sv = np.linalg.svd(tensor_map(s["intrinsics1"], s["intrinsics2"], Ts),
                           compute_uv=False)
        assert np.sum(sv > TENSOR_MAP_RANK_RTOL * sv[0]) == RANK[kind]
        R = matrix_from_rvec(rng.normal(size=3))
        t = rng.normal(size=3)
        c1 = compose_camera(s["intrinsics1"], np.zeros(3), np.zeros(3))
        c2 = compose_camera(s["intrinsics2"], rvec_from_matrix(R), t)
        F = epipolar_tensor(c1.A1, c1.A2, c2.A1, c2.A2).ravel()
        x = np.r_[R.ravel(), (skew(t) @ R).ravel()]
        np.testing.assert_allclose(Phi @ x, F, rtol=0, atol=TENSOR_RTOL * np.abs(F).max())
        np.testing.assert_allclose(pose_tensors(Phi, R, t), F, rtol=0,
                                   atol=TENSOR_RTOL * np.abs(F).max())


def test_rotation_grid_covers_so3():
    grid = rotation_grid(2000)
    np.testing.assert_allclose(grid @ np.swapaxes(grid, 1, 2), np.broadcast_to(np.eye(3),
                               grid.shape), atol=EXACT)
    np.testing.assert_allclose(np.linalg.det(grid), 1.0, atol=EXACT)
    rng = np.random.default_rng(0)
    probes = matrix_from_rvec(rng.normal(size=(200, 3)))
    cos = (np.einsum("pij,gij->pg", probes, grid) - 1) / 2
    worst = np.degrees(np.arccos(np.clip(cos.max(axis=1), -1, 1))).max()
    assert worst < 25.0  # every rotation is near a grid point


@pytest.mark.parametrize("kind", ["two_slit", "mixed", "pushbroom"])
@pytest.mark.parametrize("seed", range(4))
def test_exact_on_clean_data(kind, seed):
    s = random_two_view_scene(seed, 80, kind=kind)
    res = relative_pose(s["points1"], s["points2"], s["intrinsics1"], s["intrinsics2"],
                        threshold=1e-3)
    assert _rot_err_deg(res.R, matrix_from_rvec(s["rvec"])) < CLEAN_POSE_ROTATION_DEG
    np.testing.assert_allclose(res.t, s["tvec"], atol=CLEAN_POSE_POINTS)  # metric scale
    assert res.inliers.all() and res.rms < CLEAN_POSE_RMS_PX


def test_rejects_outliers_absorbed_by_a_linear_tensor():
    """Gross outliers in the starting set (as a linear F can keep) do not steer the pose."""
    s = random_two_view_scene(3, 300, sigma=0.5)
    rng = np.random.default_rng(1)
    p1, p2 = s["points1"].copy(), s["points2"].copy()
    cand = rng.choice(300, 40, replace=False)
    shifted = p2[cand] + rng.choice([-25.0, 25.0], size=(40, 2))
    F = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    gross = sampson_distance(F, p1[cand], shifted) > 5.0  # not along the epipolar curve
    bad = cand[gross][:8]
    assert len(bad) == 8
    p2[bad] = shifted[gross][:8]
    res = relative_pose(p1, p2, s["intrinsics1"], s["intrinsics2"], threshold=1.5, rng=rng)
    assert not res.inliers[bad].any()
    assert res.inliers.sum() >= 290
    assert _rot_err_deg(res.R, matrix_from_rvec(s["rvec"])) < 0.5
    assert np.linalg.norm(res.t - s["tvec"]) < 0.05


def test_too_few_correspondences():
    s = random_two_view_scene(0, 30)
    with pytest.raises(ValueError, match="inliers"):
        relative_pose(s["points1"], s["points2"], s["intrinsics1"], s["intrinsics2"],
                      np.arange(30) < 8)


# --------------------------------------------------------------------------------------
# calibrated_two_view: basins, status, covariance
# --------------------------------------------------------------------------------------

from xslit.sfm import calibrated_two_view, refine_metric_pose  # noqa: E402
from xslit.synthetic import random_rig_correspondences  # noqa: E402

#: The README's intrinsics (Proposition 1), with the slit distance d varied by the family.
README = {"fu": 800, "fv": 600, "u0": 320, "v0": 240, "theta": np.radians(80)}


def readme_scene(seed, n=300, *, sigma=0.5, outlier_ratio=0.0, d=1.5,
                 rvec=(0.02, -0.1, 0.01), tvec=(-0.8, 0.05, 0.1), depth=(4.0, 8.0),
                 half=(2.0, 1.5)):
    """Camera 1 at the origin, camera 2 at ``(rvec, tvec)``, both with the README's
    intrinsics; ``n`` points uniform in ``[-half, half] x depth``; outliers uniform in the
    640 x 480 image 2."""
    intr = xslit.TwoSlitIntrinsics.from_parameters(**README, d=d)
    rvec, tvec = np.asarray(rvec, float), np.asarray(tvec, float)
    cam1 = xslit.composeTwoSlitProjection(intr, np.zeros(3), np.zeros(3))
    cam2 = xslit.composeTwoSlitProjection(intr, rvec, tvec)
    s = random_rig_correspondences(cam1, cam2, n, [-half[0], -half[1], depth[0]],
                                   [half[0], half[1], depth[1]], sigma=sigma,
                                   outlier_ratio=outlier_ratio, rng=seed)
    return {"intr": intr, "cam1": cam1, "cam2": cam2, "rvec": rvec, "tvec": tvec, "X": s["X"],
            "p1": s["points1"], "p2": s["points2"], "inliers": s["inliers"]}


def yardstick(s):
    """Rotation (degrees) and translation errors of maximum likelihood started at the true
    pose on the true inliers: what the data allow."""
    rv, tv, _, _ = refine_metric_pose(s["intr"], s["intr"], s["rvec"], s["tvec"],
                                      s["p1"][s["inliers"]], s["p2"][s["inliers"]])
    return (_rot_err_deg(matrix_from_rvec(rv), matrix_from_rvec(s["rvec"])),
            float(np.linalg.norm(tv - s["tvec"])))


def errors(R, t, s):
    return (_rot_err_deg(R, matrix_from_rvec(s["rvec"])),
            float(np.linalg.norm(np.ravel(t) - s["tvec"])))


def test_readme_scene_not_trapped(tol):
    """The README's intrinsics and pose, 300 points, 0.5 px: the pose lands in the basin of
    maximum likelihood (the rotation search used to stop 31 degrees off, in the basin of a
    near-degenerate tensor with t near 0)."""
    s = readme_scene(0)
    F = xslit.computeEpipolarTensor(s["cam1"], s["cam2"])
    retval, R, t, _, _ = xslit.recoverTwoSlitPose(F, s["p1"], s["p2"], s["intr"], s["intr"])
    rot, trans = errors(R, t, s)
    rot_ml, trans_ml = yardstick(s)
    assert rot <= tol.CALIBRATED_YARDSTICK_FACTOR * rot_ml + tol.CALIBRATED_FLOOR_DEG
    assert trans <= tol.CALIBRATED_YARDSTICK_FACTOR * trans_ml + tol.CALIBRATED_FLOOR_M
    assert retval >= 0.99 * 300


def test_readme_scene_30_percent_outliers(tol):
    """The same scene with 30% outliers and F from findEpipolarTensor, 12 seeds (8 of them
    stopped 18-47 degrees off): at most one seed more than 1 degree worse than the
    yardstick, and the median rotation error within 1.5x of the yardstick's."""
    far, ratios = 0, []
    for seed in range(12):
        s = readme_scene(seed, outlier_ratio=0.3)
        _, mask = xslit.findEpipolarTensor(s["p1"], s["p2"], rng=seed)
        res = calibrated_two_view(s["p1"], s["p2"], s["intr"], s["intr"], mask)
        rot_ml, _ = yardstick(s)
        rot, _ = errors(res.R, res.t, s)
        far += rot > rot_ml + 1.0
        ratios.append(rot / rot_ml)
    assert far <= tol.CALIBRATED_README_FAR_SEEDS, ratios
    assert np.median(ratios) <= tol.CALIBRATED_YARDSTICK_FACTOR, ratios


def family_scene(seed):
    """A scene of the varied family: slit distance 0.05-2 (either sign), depth 2-50 (near
    plane 2-25, far plane twice as deep), 0-50% outliers, poses around the README's."""
    rng = np.random.default_rng(1000 + seed)
    d = float(np.exp(rng.uniform(np.log(0.05), np.log(2.0)))) * rng.choice([-1.0, 1.0])
    near = float(np.exp(rng.uniform(np.log(2.0), np.log(25.0))))
    return readme_scene(seed, d=d, outlier_ratio=float(rng.choice([0.0, 0.1, 0.3, 0.5])),
                        rvec=rng.normal(scale=0.1, size=3),
                        tvec=np.array([-0.8, 0.05, 0.1]) + rng.normal(scale=0.2, size=3),
                        depth=(near, 2 * near), half=(0.5 * near, 0.375 * near))


@pytest.mark.slow
def test_family_against_yardstick(tol):
    """40 seeded scenes: the median ratios of the rotation and translation errors to the
    yardstick's are within 1.5 over the scenes reported as determined, and at most
    ``CALIBRATED_FAMILY_FAR_SCENES`` of them end more than 1 degree worse than the yardstick
    (the search misses the basin of maximum likelihood there; 2 of 29 when measured)."""
    far, rot_ratio, trans_ratio = [], [], []
    for seed in range(40):
        s = family_scene(seed)
        F, mask = xslit.findEpipolarTensor(s["p1"], s["p2"], rng=seed)
        if F is None:
            continue
        res = calibrated_two_view(s["p1"], s["p2"], s["intr"], s["intr"], mask)
        if res.status not in ("ok", "ambiguous"):
            assert res.reason
            continue
        rot_ml, trans_ml = yardstick(s)
        rot, trans = errors(res.R, res.t, s)
        if rot > rot_ml + 1.0:
            far.append(seed)
        rot_ratio.append((rot + tol.CALIBRATED_FLOOR_DEG) / (rot_ml + tol.CALIBRATED_FLOOR_DEG))
        trans_ratio.append((trans + tol.CALIBRATED_FLOOR_M) / (trans_ml + tol.CALIBRATED_FLOOR_M))
    assert len(rot_ratio) >= tol.CALIBRATED_FAMILY_MIN_DETERMINED
    assert len(far) <= tol.CALIBRATED_FAMILY_FAR_SCENES, far
    assert np.median(rot_ratio) <= tol.CALIBRATED_YARDSTICK_FACTOR
    assert np.median(trans_ratio) <= tol.CALIBRATED_YARDSTICK_FACTOR


def test_family_poses_fit_as_well_as_robust_maximum_likelihood_from_the_truth(tol):
    """40 more scenes of the family (not drawn by the sweep's generator): maximum likelihood
    started at the true pose, with its inliers re-selected at the threshold
    (``fit_metric_pose_robust``), is what the data allow. Every pose returned "ok" or
    "ambiguous" fits all correspondences at least as well (truncated loss), and an "ok" pose
    lies within 1.5x of that fit's errors unless its loss is lower still (another optimum the
    data prefer). Measured: the "ok" poses within 1e-7 of its loss or below, 25 of 27 within
    1.5x."""
    thr, returned, ok = 1.5, 0, 0
    for seed in range(200, 240):
        s = family_scene(seed)
        F, mask = xslit.findEpipolarTensor(s["p1"], s["p2"], xslit.USAC_DEFAULT, thr, rng=seed)
        if F is None:
            continue
        res = calibrated_two_view(s["p1"], s["p2"], s["intr"], s["intr"], mask, threshold=thr)
        if res.status not in ("ok", "ambiguous"):
            assert res.reason
            continue
        truth = within_true_tensor(s, thr)
        best = xslit.sfm.fit_metric_pose_robust(s["intr"], s["intr"], s["rvec"], s["tvec"],
                                                s["p1"], s["p2"], truth, threshold=thr)
        loss = xslit.sfm.pose_distances(s["intr"], s["intr"], rvec_from_matrix(res.R), res.t,
                                        s["p1"], s["p2"], thr)[0]
        assert loss <= best.cost * (1.0 + tol.CALIBRATED_LOSS_RTOL), seed
        returned += 1
        if res.status == "ok":
            ok += 1
            rot, trans = errors(res.R, res.t, s)
            rot_ml, trans_ml = errors(matrix_from_rvec(best.rvec), best.tvec, s)
            within = (rot <= tol.CALIBRATED_YARDSTICK_FACTOR * rot_ml + tol.CALIBRATED_FLOOR_DEG
                      and trans <= tol.CALIBRATED_YARDSTICK_FACTOR * trans_ml
                      + tol.CALIBRATED_FLOOR_M)
            assert within or loss < best.cost * (1.0 - tol.CALIBRATED_LOSS_RTOL), seed
    assert ok >= tol.CALIBRATED_FAMILY_MIN_DETERMINED and returned >= ok


def within_true_tensor(s, threshold):
    """The correspondences within ``threshold`` of the true tensor (Sampson distance)."""
    F = xslit.computeEpipolarTensor(s["cam1"], s["cam2"])
    return np.abs(sampson_distance(F, s["p1"], s["p2"])) < threshold


def test_collinear_points_undetermined():
    """Points on one 3D line do not determine the pose: reported as undetermined, with the
    reason (the maximum-likelihood Jacobian loses rank without noise)."""
    s = readme_scene(0, 60)
    lam = np.random.default_rng(1).uniform(-1, 1, 60)
    X = np.array([0.1, -0.2, 6.0]) + lam[:, None] * np.array([1.5, 0.8, 1.0])
    p1, p2 = s["cam1"].project(X), s["cam2"].project(X)
    res = calibrated_two_view(p1, p2, s["intr"], s["intr"], threshold=0.01)
    assert res.status == "undetermined"
    assert "rank" in res.reason and "do not determine the pose" in res.reason
    noisy = np.random.default_rng(2).normal(scale=0.5, size=(2, 60, 2))
    res = calibrated_two_view(p1 + noisy[0], p2 + noisy[1], s["intr"], s["intr"])
    assert res.status == "undetermined" and "do not determine the pose" in res.reason


@pytest.mark.parametrize("seed", range(3))
def test_planar_points_never_silently_wrong(seed):
    """A plane of points does not make the calibrated two-slit pose degenerate (noise-free it
    is recovered exactly); the result is either exact or not reported as ok."""
    s = readme_scene(seed, 60, sigma=0.0)
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(-2, 2, 60), rng.uniform(-1.5, 1.5, 60), np.zeros(60)])
    X = X @ matrix_from_rvec(rng.normal(scale=0.3, size=3)).T + [0.0, 0.0, 6.0]
    p1, p2 = s["cam1"].project(X), s["cam2"].project(X)
    res = calibrated_two_view(p1, p2, s["intr"], s["intr"], threshold=0.01)
    assert res.reason
    if res.status == "ok":
        assert _rot_err_deg(res.R, matrix_from_rvec(s["rvec"])) < CLEAN_POSE_ROTATION_DEG
        np.testing.assert_allclose(res.t, s["tvec"], atol=CLEAN_POSE_POINTS)


def test_covariance_predicts_the_spread(tol):
    """Over 12 noise draws of one scene, the squared Mahalanobis distance of the estimate to
    the truth under the reported covariance averages about 6 (chi-square with 6 degrees of
    freedom): the covariance is neither optimistic nor pessimistic by more than ~2.5x."""
    d2 = []
    for seed in range(12):
        s = readme_scene(seed, 200, d=1.5, depth=(3.0, 6.0))
        res = calibrated_two_view(s["p1"], s["p2"], s["intr"], s["intr"])
        assert res.status == "ok", res.reason
        assert res.covariance.shape == (6, 6)
        np.testing.assert_allclose(res.covariance, res.covariance.T, atol=0)
        assert np.all(np.linalg.eigvalsh(res.covariance) > 0)
        e = np.concatenate([res.rvec - s["rvec"], res.t - s["tvec"]])
        d2.append(e @ np.linalg.solve(res.covariance, e))
    assert tol.CALIBRATED_CHI2_MEAN_RANGE[0] <= np.mean(d2) <= tol.CALIBRATED_CHI2_MEAN_RANGE[1]


#: Sweep scenes (seed: kind) whose calibrated pose the search left in another basin, 3 to 44
#: degrees off (the tensor's mask was fine): the projection of the linear rotation was far
#: from the rotations of the grid's translations (103), the Sampson fit in least squares on
#: the mask followed the absorbed outliers (108, 178), a pushbroom pair's grid of lengths
#: was 0.125-32 units for a 17.5-unit baseline (238).
SWEEP_BASIN_SEEDS = {103: "two_slit", 108: "mixed", 178: "two_slit", 238: "pushbroom"}


def sweep_pipeline(seed, rng=None):
    """Sweep scene ``seed``, its threshold (3 sigma) and calibrated_two_view on the mask of
    findEpipolarTensor, as tools/sweep_two_view.py runs them."""
    sc = random_sweep_scene(seed, max_n=2000)
    thr = 3 * sc.sigma
    _, mask = xslit.findEpipolarTensor(sc.points1, sc.points2, xslit.USAC_DEFAULT, thr,
                                       rng=seed)
    res = calibrated_two_view(sc.points1, sc.points2, sc.intrinsics1, sc.intrinsics2, mask,
                              threshold=thr, rng=rng)
    return sc, thr, res


@pytest.mark.parametrize("seed", sorted(SWEEP_BASIN_SEEDS))
def test_sweep_scene_in_the_basin_of_maximum_likelihood(seed, tol):
    """findEpipolarTensor then calibrated_two_view at 3 sigma, as tools/sweep_two_view.py
    runs them: the pose is within 1.5x of the maximum-likelihood-from-truth yardstick."""
    from xslit.synthetic import ml_from_truth, rotation_error_deg

    sc, _, res = sweep_pipeline(seed)
    assert sc.params["kind"] == SWEEP_BASIN_SEEDS[seed]
    y = ml_from_truth(sc)
    assert y.determined
    rot = rotation_error_deg(res.R, sc.R)
    trans = float(np.linalg.norm(res.t - sc.t))
    assert rot <= tol.CALIBRATED_YARDSTICK_FACTOR * max(y.rotation_error_deg,
                                                        y.rotation_std_deg)
    assert trans <= tol.CALIBRATED_YARDSTICK_FACTOR * max(y.translation_error, y.translation_std)


def test_robust_sampson_fit_ignores_absorbed_outliers(tol):
    """From the true pose, on a mask holding outliers within reach of a linear tensor, the
    Cauchy fit stays by the truth where least squares walks off (sweep scene 178: the
    least-squares fit of the mask moves the rotation by more than a degree)."""
    from xslit.sfm.calibrated import PoseSampson, refine_pose_sampson
    from xslit.synthetic import random_sweep_scene, rotation_error_deg

    sc = random_sweep_scene(178, max_n=2000)
    thr = 3 * sc.sigma
    rng = np.random.default_rng(0)
    out = np.flatnonzero(~sc.inliers)
    mask = sc.inliers.copy()
    mask[rng.choice(out, len(out) // 10, replace=False)] = True
    Phi = tensor_map(sc.intrinsics1, sc.intrinsics2)
    sampson = PoseSampson(Phi, sc.points1[mask], sc.points2[mask])
    R_ls, _, _ = refine_pose_sampson(sampson, sc.R[None], sc.t[None])
    R_c, _, _ = refine_pose_sampson(sampson, sc.R[None], sc.t[None], scale=thr)
    err_ls, err_c = rotation_error_deg(R_ls[0], sc.R), rotation_error_deg(R_c[0], sc.R)
    assert err_ls > tol.CALIBRATED_ROBUST_FIT_GAIN * err_c
    assert err_c < tol.CALIBRATED_ROBUST_FIT_DEG


def test_calibrated_two_view_deterministic():
    s = readme_scene(3, outlier_ratio=0.3)
    a = calibrated_two_view(s["p1"], s["p2"], s["intr"], s["intr"])
    b = calibrated_two_view(s["p1"], s["p2"], s["intr"], s["intr"])
    assert a.status == b.status and a.reason == b.reason
    np.testing.assert_array_equal(a.R, b.R)
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.inliers, b.inliers)
    np.testing.assert_array_equal(a.covariance, b.covariance)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"threshold": 0.0}, r"^threshold must be a finite positive number of pixels, got 0\.0"),
        ({"threshold": np.nan}, r"^threshold must be a finite positive"),
        ({"inliers": np.full(60, np.nan)}, r"^inliers must be finite"),
        ({"inliers": np.ones((6, 10))}, r"^inliers must have shape \(60,\) or \(60, 1\), got "
                                        r"\(6, 10\)"),
        ({"intrinsics2": np.eye(2)}, r"^intrinsics2 must be TwoSlitIntrinsics"),
    ],
)
def test_calibrated_two_view_bad_input(kwargs, match):
    s = readme_scene(0, 60)
    args = {"points1": s["p1"], "points2": s["p2"], "intrinsics1": s["intr"],
            "intrinsics2": s["intr"]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        calibrated_two_view(**args)


@pytest.mark.parametrize("n", [12, 15, 20, 30])
def test_small_pushbroom_pose_is_never_confidently_wrong(n):
    """A pushbroom pair (sweep scene 47) with only its first ``n`` true inliers: the search
    may end in a wrong basin (90 degrees off with 15 or 30 points when measured), but then the
    status says the pose is not determined; an "ok" pose lies within three standard
    deviations of its covariance of the truth."""
    scene = random_sweep_scene(47, max_n=2000)
    mask = scene.inliers.copy()
    mask[np.flatnonzero(mask)[n:]] = False
    res = calibrated_two_view(scene.points1, scene.points2, scene.intrinsics1,
                              scene.intrinsics2, mask, threshold=3 * scene.sigma, rng=0)
    if res.status == "ok":
        sd = np.degrees(np.sqrt(np.linalg.eigvalsh(res.covariance[:3, :3])[-1]))
        assert rotation_error_deg(res.R, scene.R) <= 3 * sd, (res.reason, sd)
    else:
        assert res.status in ("undetermined", "ambiguous") and res.reason


def test_pose_that_explains_too_few_of_the_tensors_inliers_is_searched_again():
    """Pushbroom sweep scene 179, all 56 correspondences of its tensor's mask true inliers:
    the first search ended 26 degrees off in a basin that explains 46 of them; a pose in the
    right basin explains nearly all, so the wider search runs and finds it."""
    scene = random_sweep_scene(179, max_n=2000)
    res = calibrated_two_view(scene.points1, scene.points2, scene.intrinsics1,
                              scene.intrinsics2, scene.inliers, threshold=3 * scene.sigma,
                              rng=179)
    assert res.status == "ok"
    assert np.count_nonzero(res.inliers & scene.inliers) >= 0.9 * scene.inliers.sum()
    assert rotation_error_deg(res.R, scene.R) < 1.0



#: Sweep scenes (seed: kind) whose calibrated pose came back "ok" in another basin than the
#: maximum-likelihood one, whose truncated Sampson cost is lower on all correspondences (the
#: data decide, the search missed it). 735: a pushbroom pair, 31.7 degrees off, 194 inliers
#: (the default grid of translations had no start in the right basin; the wider one has).
#: 770: a nearly central mixed pair (slit distance 0.009 of the depth), 14.7 degrees off
#: (found only by the thorough search). 804: a mixed pair with 59 correspondences, 60%
#: outliers, 31.7 degrees off; the tensor's mask held 4 outliers among 26, which led every
#: search into a basin that fits 21 of them as well as the truth would. Its true inliers (24)
#: only just reach the support that chance cannot give (24); the tensor's mask now holds 5
#: outliers among 27, and the pose fails with its reason (its maximum-likelihood fit explains
#: only 4 correspondences) instead of returning the wrong basin.
SWEEP_WRONG_BASIN_SEEDS = {735: "pushbroom", 770: "mixed", 804: "mixed"}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [735, 770, 804])
def test_sweep_scene_never_confidently_in_a_wrong_basin(seed, tol):
    """findEpipolarTensor then calibrated_two_view at 3 sigma, as tools/sweep_two_view.py runs
    them: the pose is in the basin of the maximum-likelihood-from-truth yardstick (within
    CALIBRATED_BASIN_FACTOR of its errors), or its status is not "ok" and says why (a
    failure returns no pose)."""
    from xslit.synthetic import score_two_view

    sc, thr, res = sweep_pipeline(seed, rng=0)
    assert sc.params["kind"] == SWEEP_WRONG_BASIN_SEEDS[seed]
    if res.status == "ok":
        score = score_two_view(sc, res.inliers.astype(np.uint8), res.R, res.t, threshold=thr,
                               factor=tol.CALIBRATED_BASIN_FACTOR)
        assert score["determined"]
        assert score["pose_within"], (score["rotation_ratio"], score["translation_ratio"])
    elif res.status == "failed":
        assert res.R is None and res.t is None and res.reason
    else:
        assert res.status in ("undetermined", "ambiguous") and res.reason


@pytest.mark.parametrize("seed", [1, 2])
def test_along_track_pair_not_an_unbounded_translation(seed):
    # A fore/aft pushbroom pair also fits, nearly as well, poses 40 degrees off whose
    # translation grows without bound (the tensor tends to a limit that depends only on the
    # rotation and the direction of t). On these seeds the search's candidates all slid down
    # that family and the pose came back "ok" 40 degrees off with |t| of 10,000 units
    # (true 112): an "ok" pose must be the maximum-likelihood one.
    from tolerances import ALONG_TRACK_ROTATION_DEG

    from xslit.synthetic import random_along_track_pair

    s = random_along_track_pair(seed)
    res = calibrated_two_view(s["points1"], s["points2"], s["intrinsics1"], s["intrinsics2"])
    assert res.status == "ok", res.reason
    assert rotation_error_deg(res.R, matrix_from_rvec(s["rvec"])) < ALONG_TRACK_ROTATION_DEG
    assert np.linalg.norm(res.t - s["tvec"]) < 0.05 * np.linalg.norm(s["tvec"])


def test_eliminated_information_is_the_schur_complement_and_stays_positive():
    """The information with the points eliminated equals the Schur complement of J^T J on
    well-conditioned blocks; with points nearly unobserved along one direction (singular
    values down to 1e-9 of the largest, as far points give) it stays positive semi-definite
    and matches the exact projection computed from the dense Jacobian's null spaces, where the
    Schur complement loses its smallest eigenvalues in cancellation."""
    from xslit.sfm.lm import eliminated_information, reduced_normal_equations

    rng = np.random.default_rng(3)
    Jg, Jp = rng.normal(size=(60, 4, 6)), rng.normal(size=(60, 4, 3))
    np.testing.assert_allclose(eliminated_information(Jg, Jp),
                               reduced_normal_equations(Jg, Jp)[0], rtol=NORMAL_EQUATIONS_RTOL,
                               atol=NORMAL_EQUATIONS_RTOL)
    U, _, Vt = np.linalg.svd(Jp, full_matrices=False)
    weak = np.array([1e3, 1.0, 1e-9])  # each point nearly free along one direction
    Jp_bad = U * weak[None, None, :] @ Vt
    S = eliminated_information(Jg, Jp_bad)
    exact = np.zeros((6, 6))
    for g, p in zip(Jg, Jp_bad, strict=True):
        Ub = np.linalg.svd(p, full_matrices=True)[0]
        N = Ub[:, 2:]  # the residual directions the point cannot absorb (two of rank 2)
        exact += (N.T @ g).T @ (N.T @ g)
    np.testing.assert_allclose(S, exact, rtol=ELIMINATED_ILL_CONDITIONED_RTOL,
                               atol=ELIMINATED_ILL_CONDITIONED_RTOL)
    assert np.linalg.eigvalsh(S)[0] >= -NORMAL_EQUATIONS_RTOL * np.linalg.eigvalsh(S)[-1]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [37, 246])
def test_far_points_do_not_make_a_determined_pose_undetermined(seed, tol):
    """Sweep scenes whose inliers include points nearly unobserved in depth (condition
    numbers of their blocks near 1e10): the Schur complement of the pose information went
    indefinite and the pose was reported as of rank 5, "undetermined", though it was 0.07
    and 0.19 degrees off with a standard deviation of 0.03 and 0.04 degrees."""
    sc, _, res = sweep_pipeline(seed, rng=0)
    assert res.status == "ok", res.reason
    assert np.all(np.linalg.eigvalsh(res.covariance) > 0)
    # The reported uncertainty covers the error (Mahalanobis distance of the pose error
    # within the 0.999 quantile of chi-square with 6 degrees of freedom).
    err = np.concatenate([rvec_from_matrix(res.R) - rvec_from_matrix(sc.R), res.t - sc.t])
    assert err @ np.linalg.solve(res.covariance, err) < tol.CALIBRATED_COVERAGE_CHI2
    assert rotation_error_deg(res.R, sc.R) < 1.0


@pytest.mark.slow
def test_thorough_search_on_part_of_many_correspondences(monkeypatch, tol):
    """On more correspondences than THOROUGH_MAX_POINTS the thorough search runs on a random
    part of them (its memory grows with its candidates times N: about 16 GiB at a million)
    and its pose is fitted to all: forced to run on half of a 2,000-correspondence sweep
    scene, it returns the pose of the maximum-likelihood basin with its inliers among all."""
    import xslit.sfm.calibrated as calibrated
    from xslit.synthetic import score_two_view

    monkeypatch.setattr(calibrated, "MODEL_FIT_RETRY", 1e-12)  # the search always runs
    monkeypatch.setattr(calibrated, "THOROUGH_MAX_POINTS", 1000)
    sc = random_sweep_scene(1, max_n=2000)
    thr = 3 * sc.sigma
    _, mask = xslit.findEpipolarTensor(sc.points1, sc.points2, xslit.USAC_DEFAULT, thr, rng=1)
    res = calibrated_two_view(sc.points1, sc.points2, sc.intrinsics1, sc.intrinsics2, mask,
                              threshold=thr, rng=0)
    assert res.status == "ok", res.reason
    assert len(res.inliers) == len(sc.inliers)
    assert np.count_nonzero(res.inliers & sc.inliers) >= 0.99 * sc.inliers.sum()
    score = score_two_view(sc, res.inliers.astype(np.uint8), res.R, res.t, threshold=thr,
                           factor=tol.CALIBRATED_BASIN_FACTOR)
    assert score["pose_within"], (score["rotation_ratio"], score["translation_ratio"])


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_rotations": -1}, r"^n_rotations must be an integer >= 0"),
    ({"n_rotations": None}, r"^n_rotations must be"),
    ({"n_directions": 0}, r"^n_directions must be an integer >= 1"),
    ({"n_subsets": 2.5}, r"^n_subsets must be"),
    ({"n_starts": True}, r"^n_starts must be"),
    ({"n_candidates": -2}, r"^n_candidates must be"),
    ({"lo_iterations": 0}, r"^lo_iterations must be an integer >= 1"),
    ({"retry": None}, r"^retry must be True or False"),
])
def test_relative_pose_refuses_bad_sizes_by_name(kwargs, match):
    s = random_two_view_scene(0, 60)
    with pytest.raises(ValueError, match=match):
        relative_pose(s["points1"], s["points2"], s["intrinsics1"], s["intrinsics2"], **kwargs)
    with pytest.raises(ValueError, match=r"^intrinsics2 must be TwoSlitIntrinsics"):
        relative_pose(s["points1"], s["points2"], s["intrinsics1"], "x")


@pytest.mark.parametrize(("transforms", "match"), [
    (np.full((4, 2, 2), np.nan), r"^transforms must be four finite"),
    (np.zeros((3, 2, 2)), r"^transforms must be four finite \(2, 2\) matrices, got shape"),
    (np.ones((4, 2, 2), bool), r"^transforms must be a real numeric array"),
    ("x", r"^transforms must be a real numeric array"),
])
def test_tensor_map_refuses_bad_transforms_by_name(transforms, match):
    s = random_two_view_scene(0, 20)
    with pytest.raises(ValueError, match=match):
        tensor_map(s["intrinsics1"], s["intrinsics2"], transforms)
    with pytest.raises(ValueError, match=r"^intrinsics1 must be TwoSlitIntrinsics"):
        tensor_map(None, s["intrinsics2"])


def _random_poses(scene, count, rng):
    """Poses around a scene's true pose (rotations up to about 20 degrees off)."""
    R = matrix_from_rvec(rng.normal(scale=0.2, size=(count, 3))) @ matrix_from_rvec(
        scene["rvec"])
    t = scene["tvec"] + rng.normal(scale=0.3, size=(count, 3))
    return R, t


@pytest.mark.parametrize("kind", ["two_slit", "mixed", "pushbroom"])
def test_blocked_sampson_distances_match_the_pose_tensor(kind, tol):
    """PoseSampson's distances, in blocks of every size, are those of sampson_distance on
    the tensor of each pose (random poses, all correspondences)."""
    from xslit.sfm.calibrated import PoseSampson

    rng = np.random.default_rng(3)
    s = random_two_view_scene(5, 700, kind=kind, outlier_ratio=0.3)
    Phi = tensor_map(s["intrinsics1"], s["intrinsics2"])
    R, t = _random_poses(s, 9, rng)
    F = pose_tensors(Phi, R, t).reshape(-1, 2, 2, 2, 2)
    want = sampson_distance(F, s["points1"], s["points2"])
    for block in (1, 300, 5000, 2**17):
        got = PoseSampson(Phi, s["points1"], s["points2"], block=block).distances(R, t)
        np.testing.assert_allclose(np.abs(got), want, rtol=tol.EXACT, atol=tol.EXACT)


def test_block_size_does_not_change_the_reductions(tol):
    """Scores, masks, costs and normal equations are the same whatever the block size
    (sums over blocks differ by rounding only), also for poses on their own subsets."""
    from xslit.cameras import compose_camera
    from xslit.sfm.calibrated import PoseSampson

    rng = np.random.default_rng(4)
    s = random_two_view_scene(6, 900, kind="two_slit", outlier_ratio=0.3)
    Phi = tensor_map(s["intrinsics1"], s["intrinsics2"])
    p1, p2 = s["points1"], s["points2"]
    rays = tuple(compose_camera(i, np.zeros(3), np.zeros(3)).rays(p) for i, p in
                 ((s["intrinsics1"], p1), (s["intrinsics2"], p2)))
    R, t = _random_poses(s, 7, rng)
    w, scale = rng.random((7, 900)), rng.uniform(0.5, 3.0, 7)
    rows = np.stack([rng.choice(900, 200, replace=False) for _ in range(7)])
    out = []
    for block in (1, 777, 2**17):
        ps = PoseSampson(Phi, p1, p2, rays, block=block, backend="numpy")
        out.append((*ps.score(R, t, 2.0), ps.cost(R, t, weights=w, scale=scale),
                    *ps.normal_equations(R, t, weights=w, scale=scale),
                    *ps.subsets(rows).normal_equations(R, t)))
        # Fewer poses make other blocks of the same evaluator: the same results.
        few = ps.score(R[:2], t[:2], 2.0)
        np.testing.assert_array_equal(few[1], out[-1][1][:2])
        np.testing.assert_allclose(few[0], out[-1][0][:2], rtol=tol.EXACT)
    for other in out[:-1]:
        for a, b in zip(other, out[-1], strict=True):
            if a.dtype == bool:
                np.testing.assert_array_equal(a, b)
            else:
                np.testing.assert_allclose(a, b, rtol=tol.EXACT, atol=0)
    # A pose on its own subset is that pose on that subset.
    H, g = PoseSampson(Phi, p1[rows[2]], p2[rows[2]]).normal_equations(R[2:3], t[2:3])
    np.testing.assert_allclose(out[-1][-2][2], H[0], rtol=tol.EXACT)
    np.testing.assert_allclose(out[-1][-1][2], g[0], rtol=tol.EXACT)


def test_compiled_and_numpy_sampson_kernels_agree(tol):
    """The compiled reductions of PoseSampson (distances, scores and inlier masks with and
    without the cheirality test, costs and normal equations with weights and Cauchy scales,
    on shared correspondences and on each pose's own subset) are those of the numpy blocks,
    a pose that is not finite included."""
    pytest.importorskip("numba")
    from xslit.cameras import compose_camera
    from xslit.sfm.calibrated import PoseSampson

    rng = np.random.default_rng(8)
    s = random_two_view_scene(9, 600, kind="mixed", outlier_ratio=0.3)
    Phi = tensor_map(s["intrinsics1"], s["intrinsics2"])
    rays = tuple(compose_camera(i, np.zeros(3), np.zeros(3)).rays(p) for i, p in
                 ((s["intrinsics1"], s["points1"]), (s["intrinsics2"], s["points2"])))
    R, t = _random_poses(s, 6, rng)
    R[0], t[0] = matrix_from_rvec(s["rvec"]), s["tvec"]
    t[4] = np.nan
    w, scale = rng.random((6, 600)), rng.uniform(0.5, 3.0, 6)
    rows = np.stack([rng.choice(600, 150, replace=False) for _ in range(6)])
    out = {}
    for backend in ("numba", "numpy"):
        ps = PoseSampson(Phi, s["points1"], s["points2"], backend=backend)
        with_rays = PoseSampson(Phi, s["points1"], s["points2"], rays, backend=backend)
        sub = ps.subsets(rows)
        out[backend] = [ps.distances(R, t), *ps.score(R, t, 2.0), *with_rays.score(R, t, 2.0),
                        ps.cost(R, t), ps.cost(R, t, weights=w, scale=scale),
                        *ps.normal_equations(R, t), *ps.normal_equations(R, t, scale=scale),
                        *ps.normal_equations(R, t, weights=w), sub.cost(R, t, scale=scale),
                        *sub.normal_equations(R, t, scale=scale),
                        *sub.poses([1, 3]).normal_equations(R[[1, 3]], t[[1, 3]])]
    assert out["numpy"][4][0].sum() > 300  # the true pose's inliers
    for a, b in zip(out["numba"], out["numpy"], strict=True):
        # Sums in another order: rounding relative to the largest entry.
        size = np.abs(b[np.isfinite(b)]).max(initial=1.0)
        np.testing.assert_allclose(a, b, rtol=tol.EXACT, atol=tol.EXACT * size)


def test_chi2_quantiles_are_scipys():
    """The quantiles of the ambiguity and model-fit tests are scipy.stats.chi2's, exactly."""
    from scipy.stats import chi2

    from xslit.sfm.calibrated import (
        AMBIGUITY_LEVEL,
        MODEL_FIT_LEVEL,
        MODEL_FIT_RETRY,
        _chi2_quantile,
    )

    for p, dof in ((AMBIGUITY_LEVEL, 6), (MODEL_FIT_LEVEL, 7), (MODEL_FIT_RETRY, 7), (0.5, 1)):
        assert _chi2_quantile(p, dof) == float(chi2.ppf(p, dof))


def test_compiled_and_numpy_pose_fits_agree(tol):
    """refine_pose_sampson's compiled loop (one start at a time) takes the steps of the
    batched Levenberg--Marquardt on the numpy blocks: least squares and Cauchy costs,
    weights, each start on its own subset, and a start that is not finite (which stays as it
    is: no step lowers its cost)."""
    pytest.importorskip("numba")
    from xslit.sfm.calibrated import PoseSampson, refine_pose_sampson

    rng = np.random.default_rng(10)
    s = random_two_view_scene(10, 300, kind="mixed", outlier_ratio=0.2)
    Phi = tensor_map(s["intrinsics1"], s["intrinsics2"])
    R = matrix_from_rvec(s["rvec"] + rng.normal(scale=0.05, size=(6, 3)))
    t = s["tvec"] * rng.uniform(0.7, 1.4, (6, 1)) + rng.normal(scale=0.05, size=(6, 3))
    t[5] = np.nan
    w = (rng.random((6, 300)) > 0.3).astype(float)
    rows = np.stack([rng.choice(300, 80, replace=False) for _ in range(6)])
    out = {}
    for backend in ("numba", "numpy"):
        ps = PoseSampson(Phi, s["points1"], s["points2"], backend=backend)
        out[backend] = [*refine_pose_sampson(ps, R, t, iterations=20, scale=2.0),
                        *refine_pose_sampson(ps, R, t, w, iterations=12, rel_tol=1e-4),
                        *refine_pose_sampson(ps.subsets(rows), R, t, iterations=15),
                        *refine_pose_sampson(ps, R[:1], t[:1],
                                             s["inliers"][None].astype(float))]
    for a, b in zip(out["numba"], out["numpy"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e3 * tol.EXACT, atol=1e3 * tol.EXACT)
    assert np.isnan(out["numba"][1][5]).all()
    assert np.all(out["numba"][2][:5] < np.sqrt(np.mean(PoseSampson(
        Phi, s["points1"], s["points2"]).distances(R[:5], t[:5]) ** 2, axis=1)))


@pytest.mark.parametrize("kind", ["two_slit", "pushbroom"])
def test_compiled_and_numpy_rotation_descents_agree(kind, monkeypatch, tol):
    """The descent on SO(3) of rotations_for_translations takes the same steps in its compiled
    loop (one rotation at a time) as in the batched one: the rotations of a translation grid
    agree to the rounding of eight steps."""
    pytest.importorskip("numba")
    from xslit import _jit
    from xslit.sfm.calibrated import _whitening, rotations_for_translations, translation_grid

    s = random_two_view_scene(3, 300, kind=kind)
    Phi = tensor_map(s["intrinsics1"], s["intrinsics2"])
    M, _ = _whitening(s["points1"], s["points2"])
    grid = translation_grid(np.linalg.norm(s["tvec"]), 24)
    out = []
    for compiled in (True, False):
        monkeypatch.setattr(_jit, "USE_NUMBA", compiled)
        out.append(rotations_for_translations(Phi, M, grid))
    np.testing.assert_allclose(out[0], out[1], rtol=0, atol=tol.DESCENT_ATOL)
    np.testing.assert_allclose(out[0] @ np.swapaxes(out[0], 1, 2), np.broadcast_to(
        np.eye(3), out[0].shape), atol=1e3 * tol.EXACT)


@pytest.mark.parametrize("backend", ["auto", "numpy"])
def test_fused_cost_and_normal_equations_take_the_same_steps(backend, tol):
    """The Levenberg--Marquardt of refine_pose_sampson, fed the cost with the normal
    equations (cost_and_normal_equations), reaches the poses it reaches with them apart (the
    tensors of the cost alone are another matrix product: equal to rounding, which can turn
    the acceptance of a step that changes the cost by a few units of rounding)."""
    from xslit.sfm.calibrated import PoseSampson
    from xslit.sfm.lm import batch_levenberg_marquardt_normal

    rng = np.random.default_rng(9)
    s = random_two_view_scene(10, 300, kind="two_slit", outlier_ratio=0.2)
    ps = PoseSampson(tensor_map(s["intrinsics1"], s["intrinsics2"]), s["points1"],
                     s["points2"], backend=backend)
    R = matrix_from_rvec(s["rvec"] + rng.normal(scale=0.05, size=(5, 3)))
    t = s["tvec"] * rng.uniform(0.7, 1.4, (5, 1)) + rng.normal(scale=0.05, size=(5, 3))
    scale = np.full(5, 2.0)

    def retract(state, d):
        return matrix_from_rvec(d[:, :3]) @ state[0], state[1] + d[:, 3:]

    apart = batch_levenberg_marquardt_normal(
        lambda st, k: ps.cost(*st, scale=scale[k]),
        lambda st, k: ps.normal_equations(*st, scale=scale[k]), retract, (R, t),
        iterations=20, rel_tol=1e-8)
    fused = batch_levenberg_marquardt_normal(
        None, None, retract, (R, t), iterations=20, rel_tol=1e-8,
        fused=lambda st, k: ps.cost_and_normal_equations(*st, scale=scale[k]))
    for a, b in zip((*apart[0], apart[1]), (*fused[0], fused[1]), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e3 * tol.EXACT, atol=1e3 * tol.EXACT)


def test_pose_sampson_refuses_an_unknown_backend():
    from xslit.sfm.calibrated import PoseSampson

    s = random_two_view_scene(0, 20)
    with pytest.raises(ValueError, match=r"^backend must be"):
        PoseSampson(tensor_map(s["intrinsics1"], s["intrinsics2"]), s["points1"],
                    s["points2"], backend="fortran")


@pytest.mark.parametrize("backend", ["auto", "numpy"])
@pytest.mark.parametrize("robust", [False, True])
def test_pose_sampson_normal_equations_are_those_of_the_residuals(robust, backend, tol):
    """J J^T and J r of PoseSampson against central differences of the residuals along the
    retraction R <- exp([w]x) R, t <- t + v (least squares and the Cauchy roots)."""
    from xslit.sfm.calibrated import PoseSampson

    rng = np.random.default_rng(5)
    s = random_two_view_scene(7, 300, kind="mixed", outlier_ratio=0.2)
    Phi = tensor_map(s["intrinsics1"], s["intrinsics2"])
    ps = PoseSampson(Phi, s["points1"], s["points2"], backend=backend)
    R, t = _random_poses(s, 4, rng)
    w = rng.random((4, 300))
    scale = rng.uniform(0.5, 3.0, 4) if robust else None

    def residuals(R, t):
        d = ps.distances(R, t)
        if robust:
            u = d / scale[:, None]
            d = np.sign(d) * scale[:, None] * np.sqrt(np.log1p(u * u))
        return d * w

    r = residuals(R, t)
    np.testing.assert_allclose(ps.cost(R, t, weights=w, scale=scale), np.sum(r * r, axis=1),
                               rtol=tol.EXACT)
    J = np.zeros((4, 6, 300))
    h = 1e-6
    for a in range(6):
        step = np.zeros((4, 6))
        step[:, a] = h
        plus = residuals(matrix_from_rvec(step[:, :3]) @ R, t + step[:, 3:])
        minus = residuals(matrix_from_rvec(-step[:, :3]) @ R, t - step[:, 3:])
        J[:, a] = (plus - minus) / (2 * h)
    H, g = ps.normal_equations(R, t, weights=w, scale=scale)
    H_fd, g_fd = J @ np.swapaxes(J, 1, 2), (J @ r[..., None])[..., 0]
    scale_H = np.abs(H_fd).max(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(H / scale_H, H_fd / scale_H, rtol=0, atol=tol.JACOBIAN_RTOL)
    scale_g = np.abs(g_fd).max(axis=1, keepdims=True)
    np.testing.assert_allclose(g / scale_g, g_fd / scale_g, rtol=0, atol=tol.JACOBIAN_RTOL)


@pytest.mark.parametrize(("call", "match"), [
    (lambda ps, R, t: type(ps)(np.zeros((16, 17)), *ps_points()), r"^Phi must"),
    (lambda ps, R, t: type(ps)(ps.Phi, np.zeros((5, 2)), np.zeros((6, 2))), r"points"),
    (lambda ps, R, t: type(ps)(ps.Phi, *ps_points(), block=0), r"^block must"),
    (lambda ps, R, t: ps.subsets(np.zeros(4, int)), r"^rows must"),
])
def test_pose_sampson_refuses_bad_input_by_name(call, match):
    from xslit.sfm.calibrated import PoseSampson

    s = random_two_view_scene(0, 20)
    ps = PoseSampson(tensor_map(s["intrinsics1"], s["intrinsics2"]), *ps_points())
    with pytest.raises(ValueError, match=match):
        call(ps, None, None)


def ps_points():
    """Twenty correspondences of scene 0, for the bad-input checks."""
    s = random_two_view_scene(0, 20)
    return s["points1"], s["points2"]


def test_refine_pose_sampson_refuses_bad_input_by_name():
    from xslit.sfm.calibrated import PoseSampson, refine_pose_sampson

    s = random_two_view_scene(0, 20)
    Phi = tensor_map(s["intrinsics1"], s["intrinsics2"])
    R, t = matrix_from_rvec(s["rvec"])[None], s["tvec"][None]
    ps = PoseSampson(Phi, s["points1"], s["points2"])
    with pytest.raises(ValueError, match=r"^sampson must be a PoseSampson"):
        refine_pose_sampson(Phi, R, t)
    with pytest.raises(ValueError, match=r"^weights must"):
        refine_pose_sampson(ps, R, t, np.ones((1, 19)))
    with pytest.raises(ValueError, match=r"^sampson must hold correspondences for 1 starts"):
        refine_pose_sampson(ps.subsets(np.zeros((2, 5), int)), R, t)


def test_refine_pose_sampson_recovers_the_pose_from_nearby_starts(tol):
    """From starts a few degrees off, least squares of the Sampson distances on noise-free
    correspondences returns the true pose, for shared and per-start correspondences."""
    from xslit.sfm.calibrated import PoseSampson, refine_pose_sampson

    rng = np.random.default_rng(8)
    s = random_two_view_scene(2, 200, sigma=0.0)
    Phi = tensor_map(s["intrinsics1"], s["intrinsics2"])
    ps = PoseSampson(Phi, s["points1"], s["points2"])
    R0 = matrix_from_rvec(rng.normal(scale=0.03, size=(3, 3))) @ matrix_from_rvec(s["rvec"])
    t0 = s["tvec"] + rng.normal(scale=0.02, size=(3, 3))
    rows = np.stack([rng.choice(200, 60, replace=False) for _ in range(3)])
    for sampson in (ps, ps.subsets(rows)):
        R, t, rms = refine_pose_sampson(sampson, R0, t0, iterations=50)
        for k in range(3):
            assert _rot_err_deg(R[k], matrix_from_rvec(s["rvec"])) < CLEAN_POSE_ROTATION_DEG
            np.testing.assert_allclose(t[k], s["tvec"],
                                       atol=CLEAN_POSE_POINTS * np.linalg.norm(s["tvec"]))
        assert np.all(rms < CLEAN_POSE_RMS_PX)


def test_pose_distances_count_points_behind_a_camera_as_outliers():
    """Noise-free correspondences lie on the pose's tensor (distance 0, cost 0); the point
    -X, through the origin of camera 1's frame, projects onto the same curves (its Sampson distance is
    0) but its point lies behind the cameras, and counts as an outlier at the threshold."""
    s = random_two_view_scene(0, 30)
    i1, i2, rv, t = s["intrinsics1"], s["intrinsics2"], s["rvec"], s["tvec"]
    cost, e, X = xslit.sfm.pose_distances(i1, i2, rv, t, s["points1"], s["points2"], 1.0)
    assert cost < EXACT and np.all(e < EXACT)
    np.testing.assert_allclose(X[:, :3] / X[:, 3:], s["X"], atol=CLEAN_POSE_POINTS)
    cam1 = compose_camera(i1, np.zeros(3), np.zeros(3))
    cam2 = compose_camera(i2, rv, t)
    behind = -s["X"][:1]  # on the far side of the origin: behind camera 1
    q1, q2 = cam1.project(behind), cam2.project(behind)
    F = epipolar_tensor(cam1.A1, cam1.A2, cam2.A1, cam2.A2)
    assert abs(sampson_distance(F, q1, q2)[0]) < CLEAN_SAMPSON_PX
    p1, p2 = np.r_[s["points1"], q1], np.r_[s["points2"], q2]
    cost, e, _ = xslit.sfm.pose_distances(i1, i2, rv, t, p1, p2, 2.0)
    assert np.isinf(e[-1]) and cost == pytest.approx(4.0, abs=CLEAN_SAMPSON_PX)


def test_leverages_sum_to_the_pose_parameters_and_mark_a_lone_witness():
    """The leverages of metric_pose_information lie in [0, 1] and sum to the rank of the
    pose information (6); a correspondence whose point lies far from the others (here at a
    tenth of the depth, the only one near the cameras) carries more of it than any other.
    With noise, the sandwich covariance's middle term is about the model-based information
    times the noise variance (no correspondence dominates)."""
    from xslit.sfm import metric_pose_information

    s = readme_scene(4, 80)
    X = s["X"].copy()
    X[0] = X[0] * 0.1
    p1, p2 = s["cam1"].project(X), s["cam2"].project(X)
    S, _, h, M = metric_pose_information(s["intr"], s["intr"], s["rvec"], s["tvec"], p1, p2,
                                         X, influence=True)
    assert np.all((h >= 0) & (h <= 1))
    assert h.sum() == pytest.approx(6.0, abs=NONZERO_RTOL)
    assert np.argmax(h) == 0
    # Noise-free: the residuals, and so the sandwich estimate's middle term, vanish.
    assert np.abs(M).max() < EXACT * np.abs(S).max()
    S0, _ = metric_pose_information(s["intr"], s["intr"], s["rvec"], s["tvec"], p1, p2, X)
    np.testing.assert_array_equal(S, S0)
    rng = np.random.default_rng(0)
    sigma = 0.5
    s = readme_scene(0, 400)
    p1, p2 = s["cam1"].project(s["X"]), s["cam2"].project(s["X"])
    q1, q2 = p1 + sigma * rng.normal(size=p1.shape), p2 + sigma * rng.normal(size=p2.shape)
    rv, tv, Xr, _ = refine_metric_pose(s["intr"], s["intr"], s["rvec"], s["tvec"], q1, q2)
    S, sigma2, h, M = metric_pose_information(s["intr"], s["intr"], rv, tv, q1, q2, Xr,
                                              influence=True)
    from scipy.linalg import eigh

    ratio = eigh(M, S * sigma2, eigvals_only=True)
    assert ratio.mean() == pytest.approx(1.0, rel=0.3), ratio
    assert 0.4 < ratio.min() and ratio.max() < 2.5, ratio


def test_eliminated_rows_sum_to_the_information():
    from xslit.sfm.lm import eliminated_information, eliminated_rows

    rng = np.random.default_rng(3)
    Jg, Jp = rng.normal(size=(40, 4, 6)), rng.normal(size=(40, 4, 3))
    Jp[5] = 0.0  # a point that observes nothing absorbs nothing
    A = eliminated_rows(Jg, Jp)
    np.testing.assert_allclose(np.einsum("nmi,nmj->ij", A, A), eliminated_information(Jg, Jp),
                               rtol=EXACT, atol=EXACT)
    np.testing.assert_allclose(np.einsum("mi,mj->ij", A[5], A[5]), Jg[5].T @ Jg[5],
                               rtol=EXACT, atol=EXACT)


def test_pose_resting_on_an_unverifiable_correspondence_is_reported():
    """Sweep scene 592 (871 correspondences, 26% outliers, 1 px noise): one outlier, 11.6 px
    from the true tensor, lies 0.67 px from the pose that fits it and carries 0.94 of the
    information of one direction of the pose, which it moves by 2.4 of its standard
    deviations. The data cannot tell whether it is an inlier: the pose of lowest truncated
    cost is returned, reported ambiguous with the pose fitted without it as the rival, and
    the covariance covers the error (it was 23 times too small in that direction)."""
    from scipy.stats import chi2

    sc, thr, res = sweep_pipeline(592)
    assert res.status == "ambiguous"
    assert "leverage" in res.reason and "778" in res.reason
    assert res.inliers[778] and not sc.inliers[778]
    from xslit.sfm import pose_distances

    e = np.concatenate([rvec_from_matrix(res.R) - rvec_from_matrix(sc.R), res.t - sc.t])
    assert e @ np.linalg.solve(res.covariance, e) <= chi2.ppf(0.999, 6)
    # No pose returned fits worse than maximum likelihood from the truth.
    from xslit.synthetic import ml_from_truth, noise_ceiling

    y = ml_from_truth(sc, inliers=noise_ceiling(sc, thr).within)

    def loss(R, t):
        return pose_distances(sc.intrinsics1, sc.intrinsics2, rvec_from_matrix(R), t,
                              sc.points1, sc.points2, thr)[0]

    assert loss(res.R, res.t) <= loss(y.R, y.t)


def test_robust_metric_fit_recovers_the_pose_and_reselects_its_inliers(tol):
    """Noise-free: from a nearby start, the robust fit returns the true pose and every
    correspondence. Started from part of the inliers and three outliers (40 px off, 4.5-5.7
    px from the pose's curves), the fit
    on them is pulled away; re-selected within the threshold of that fit, the inliers are the
    true ones and the pose returns to the truth."""
    s = random_two_view_scene(3, 80)
    i1, i2, p1, p2 = s["intrinsics1"], s["intrinsics2"], s["points1"], s["points2"]
    fit = xslit.sfm.fit_metric_pose_robust(i1, i2, s["rvec"] + 1e-3, s["tvec"] * 1.01, p1, p2,
                                           threshold=1.0)
    assert fit.inliers.all() and fit.converged and fit.cost < EXACT
    np.testing.assert_allclose(fit.tvec, s["tvec"], atol=tol.SWEEP_ML_NOISE_FREE)
    q1 = np.r_[p1, p1[:3]]
    q2 = np.r_[p2, p2[:3] + np.array([0.0, -40.0])]
    start = (np.arange(len(q1)) < 50) | (np.arange(len(q1)) >= len(p1))
    fit = xslit.sfm.fit_metric_pose_robust(i1, i2, s["rvec"], s["tvec"], q1, q2, start,
                                           threshold=1.0)
    true = np.arange(len(q1)) < len(p1)
    np.testing.assert_array_equal(fit.distances <= 1.0, true)
    assert fit.inliers.sum() >= 75 and not np.any(fit.inliers & ~true)
    np.testing.assert_allclose(fit.tvec, s["tvec"], atol=tol.SWEEP_ML_NOISE_FREE)
    assert fit.cost == pytest.approx(3 * 1.0, abs=CLEAN_POSE_RMS_PX)


@pytest.mark.parametrize("kwargs, match", [
    ({"threshold": 0.0}, r"^threshold must be"),
    ({"inliers": np.ones(5, bool)}, r"^inliers must"),
    ({"inliers": np.arange(80) < 7}, r"^inliers must select at least 8 correspondences, got 7"),
    ({"rvec0": np.zeros(4)}, r"^rvec0 must"),
    ({"max_iterations": 0}, r"^max_iterations must"),
])
def test_robust_metric_fit_refuses_bad_input_by_name(kwargs, match):
    s = random_two_view_scene(3, 80)
    args = {"rvec0": s["rvec"], "tvec0": s["tvec"], **kwargs}
    with pytest.raises(ValueError, match=match):
        xslit.sfm.fit_metric_pose_robust(s["intrinsics1"], s["intrinsics2"], args.pop("rvec0"),
                                         args.pop("tvec0"), s["points1"], s["points2"], **args)
