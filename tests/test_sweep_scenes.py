"""The wide two-view scene generator, its yardstick and the sweep scoring, against ground truth."""

import numpy as np
import pytest
from tolerances import (
    EXACT,
    NONZERO_RTOL,
    RANK_DEFICIENT_SV,
    SAME_FIT_RTOL,
    SWEEP_ML_NOISE_FREE,
    SWEEP_ML_WITHIN_RTOL,
    SWEEP_NOISE_FREE_PX,
    SWEEP_ROTATION_SLACK_DEG,
    SWEEP_SAMPSON_NOISE_FREE_PX,
    SWEEP_SUPPORT_NEEDED_FRACTION,
    SWEEP_YARDSTICK_RMS_RTOL,
    ULP_RTOL,
)

from xslit.epipolar import design_matrix, epipolar_tensor, sampson_distance
from xslit.epipolar.variety import refine_on_variety
from xslit.geometry.projective import matrix_from_rvec, rvec_from_matrix
from xslit.sfm import pose_distances
from xslit.synthetic import (
    DEGENERATE_SAME_FLIGHT_LINE,
    MIN_PUSHBROOM_ANGLE_DEG,
    SWEEP_BASELINES,
    SWEEP_KINDS,
    SWEEP_RANGES,
    PushbroomIntrinsics,
    TwoSlitIntrinsics,
    ml_from_truth,
    ml_within_threshold,
    noise_ceiling,
    random_sweep_scene,
    score_two_view,
    summarize_sweep,
    sweep_two_view,
)

SEEDS = range(40)


@pytest.fixture(scope="module")
def drawn():
    """Default draws of 40 seeds, capped at 60 correspondences."""
    return [random_sweep_scene(seed, max_n=60) for seed in SEEDS]


def _in_range(value, name):
    lo, hi, _ = SWEEP_RANGES[name.removesuffix("_drawn")]
    return lo <= value <= hi


@pytest.mark.parametrize("kind", SWEEP_KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_noise_free_inliers_satisfy_the_true_tensor(kind, seed):
    s = random_sweep_scene(seed, max_n=300, kind=kind, sigma=0.0)
    d = sampson_distance(s.F, s.points1[s.inliers], s.points2[s.inliers])
    assert d.max() < SWEEP_SAMPSON_NOISE_FREE_PX
    # The recorded tensor is that of the recorded cameras, and camera 2 has the recorded pose.
    F = epipolar_tensor(s.camera1.A1, s.camera1.A2, s.camera2.A1, s.camera2.A2)
    np.testing.assert_allclose(s.F, F / np.linalg.norm(F), atol=EXACT)
    X2 = s.X[s.inliers] @ s.R.T + s.t
    assert np.all(np.isfinite(X2))
    np.testing.assert_allclose(s.R @ s.R.T, np.eye(3), atol=EXACT)


@pytest.mark.parametrize("kind", SWEEP_KINDS)
def test_points_in_front_of_both_cameras_and_inside_both_images(kind):
    for seed in range(6):
        s = random_sweep_scene(seed, max_n=400, kind=kind, sigma=0.0)
        W, H = s.image_size
        X = s.X[s.inliers]
        assert s.camera1.in_front(X).all() and s.camera2.in_front(X).all()
        for cam, obs in ((s.camera1, s.points1), (s.camera2, s.points2)):
            px = cam.project(X)
            np.testing.assert_allclose(obs[s.inliers], px, atol=SWEEP_NOISE_FREE_PX)
            assert (px >= 0).all() and (px[:, 0] <= W - 1).all() and (px[:, 1] <= H - 1).all()
        out = ~s.inliers
        assert np.isnan(s.X[out]).all()
        for obs in (s.points1[out], s.points2[out]):
            assert (obs >= 0).all() and (obs[:, 0] <= W - 1).all() and (obs[:, 1] <= H - 1).all()


def test_every_drawn_parameter_lies_in_its_range(drawn):
    kinds, baselines, outside = set(), set(), 0
    for s in drawn:
        p = s.params
        kinds.add(p["kind"])
        baselines.add(p["baseline"])
        W, H = s.image_size
        assert 640 <= W <= 2000 and H == round(0.75 * W)
        assert _in_range(p["n_requested"], "n") and p["n"] == min(p["n_requested"], 60)
        assert len(s.inliers) == p["n"]
        assert abs((~s.inliers).sum() - p["outlier_ratio"] * p["n"]) <= 0.5
        for name in ("coverage_drawn", "convergence", "depth", "depth_extent", "plane_fraction",
                     "sigma", "outlier_ratio", "pushbroom_aspect"):
            assert _in_range(p[name], name), (name, p[name])
        assert 0 <= p["rotation_deg"] <= SWEEP_RANGES["rotation_deg"][1] + SWEEP_ROTATION_SLACK_DEG
        assert np.degrees(np.arccos((np.trace(s.R) - 1) / 2)) == pytest.approx(p["rotation_deg"])
        assert p["sigma"] == s.sigma
        for intr in (s.intrinsics1, s.intrinsics2):
            if isinstance(intr, TwoSlitIntrinsics):
                assert _in_range(abs(intr.d) / p["depth"], "slit_ratio")
                assert _in_range(np.degrees(intr.theta), "slit_angle_deg")
                assert _in_range(intr.fu, "focal") and _in_range(2 * intr.fv, "focal")
                u0, v0 = intr.u0 / W, intr.v0 / H
                outside += not (0 <= u0 <= 1 and 0 <= v0 <= 1)
            else:
                assert isinstance(intr, PushbroomIntrinsics)
                # The sweep draws Proposition 2's angle and K2 entry (pushbroom_at_sensor_angle).
                assert _in_range(np.degrees(intr.yaw) + 90.0, "pushbroom_angle_deg")
                assert _in_range(intr.f / np.cos(intr.yaw), "focal")
                v0 = intr.u / H
            assert _in_range(v0, "principal_point")
        if p["kind"] == "pushbroom":
            assert p["degenerate"] is None and p["flight_angle_deg"] >= MIN_PUSHBROOM_ANGLE_DEG
        # The points span at most the drawn window of image 1; the realised coverage is the
        # smaller span of the two images.
        spans = [np.ptp(cam.project(s.X[s.inliers]), axis=0).prod() / ((W - 1) * (H - 1))
                 for cam in (s.camera1, s.camera2)]
        assert spans[0] <= p["coverage_drawn"] + 1e-9
        assert p["coverage"] == pytest.approx(min(spans))
    assert kinds == set(SWEEP_KINDS) and baselines == set(SWEEP_BASELINES)
    ns = [s.params["n_requested"] for s in drawn]
    assert min(ns) < 100 and max(ns) > 3000  # log-uniform over 30-10,000 before the cap
    assert outside > 0  # principal points outside the image are drawn


def test_same_seed_same_scene_and_the_cap_keeps_the_configuration():
    a = random_sweep_scene(7, max_n=200)
    b = random_sweep_scene(7, max_n=200)
    for name in ("points1", "points2", "inliers", "X", "R", "t", "F"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.params == b.params or all(
        a.params[k] == b.params[k] or (a.params[k] != a.params[k] and b.params[k] != b.params[k])
        for k in a.params)
    c = random_sweep_scene(7, max_n=100)
    np.testing.assert_array_equal(a.R, c.R)
    np.testing.assert_array_equal(a.t, c.t)
    assert a.params["sigma"] == c.params["sigma"] and a.params["kind"] == c.params["kind"]
    d = random_sweep_scene(8, max_n=200)
    assert not np.array_equal(a.R, d.R)
    g = random_sweep_scene(np.random.default_rng(7), max_n=200)
    assert g.seed is None and a.seed == 7


def test_overrides_are_honoured():
    s = random_sweep_scene(2, n=123, kind="mixed", sigma=0.0, outlier_ratio=0.0,
                           slit_ratio=0.01, focal=900.0, baseline="forward", depth=3.0,
                           pushbroom_first=True, plane_fraction=0.5, rotation_deg=12.0)
    p = s.params
    assert p["kind"] == "mixed" and p["n"] == 123 and s.inliers.all()
    assert isinstance(s.intrinsics1, PushbroomIntrinsics)
    assert isinstance(s.intrinsics2, TwoSlitIntrinsics)
    assert abs(s.intrinsics2.d) == pytest.approx(0.01 * 3.0)
    assert s.intrinsics2.fu == pytest.approx(900.0)
    assert s.intrinsics1.f / np.cos(s.intrinsics1.yaw) == pytest.approx(900.0)
    assert p["baseline"] == "forward" and p["plane_fraction"] == 0.5
    assert p["rotation_deg"] == pytest.approx(12.0, abs=SWEEP_ROTATION_SLACK_DEG)
    np.testing.assert_array_equal(s.points1, s.camera1.project(s.X))
    # Half of the points lie on one plane: the smallest singular value of the centred
    # coordinates of the best half-sized coplanar subset vanishes (checked with the plane
    # drawn through the scene centre with the drawn normal).
    n = np.array([np.sin(np.radians(p["plane_tilt_deg"])) * np.cos(p["plane_azimuth"]),
                  np.sin(np.radians(p["plane_tilt_deg"])) * np.sin(p["plane_azimuth"]),
                  np.cos(np.radians(p["plane_tilt_deg"]))])
    h = s.X @ n
    _, counts = np.unique(np.round(h, 9), return_counts=True)
    assert counts.max() == round(0.5 * 123)
    w = random_sweep_scene(2, image_width=800, principal_point=(-300.0, 900.0), kind="two_slit")
    assert w.image_size == (800, 600)
    assert (w.intrinsics1.u0, w.intrinsics1.v0) == (-300.0, 900.0)
    assert w.params["principal_offset"] > 1


@pytest.mark.parametrize("kind", ["two_slit", "pushbroom"])
def test_same_intrinsics_gives_a_rig_of_equal_cameras(kind):
    s = random_sweep_scene(4, max_n=100, kind=kind, same_intrinsics=True)
    assert s.params["same_intrinsics"] is True
    np.testing.assert_array_equal(s.intrinsics1.K2, s.intrinsics2.K2)
    if kind == "two_slit":
        assert s.intrinsics1.theta == s.intrinsics2.theta  # a pushbroom's speed is fitted to the scene
        np.testing.assert_array_equal(s.intrinsics1.K1, s.intrinsics2.K1)
        assert s.intrinsics1.d == s.intrinsics2.d
    else:
        assert s.intrinsics1.yaw == pytest.approx(s.intrinsics2.yaw, abs=ULP_RTOL)


def test_same_flight_line_is_flagged_and_undetermined():
    s = random_sweep_scene(0, max_n=300, degenerate=DEGENERATE_SAME_FLIGHT_LINE, sigma=0.0,
                           outlier_ratio=0.0)
    assert s.params["kind"] == "pushbroom"
    assert s.params["degenerate"] == DEGENERATE_SAME_FLIGHT_LINE
    # The tensor is not determined by the correspondences: the design matrix (pixels
    # normalised per axis) has a null space of dimension above one.
    p1 = (s.points1 - s.points1.mean(0)) / s.points1.std(0)
    p2 = (s.points2 - s.points2.mean(0)) / s.points2.std(0)
    sv = np.linalg.svd(design_matrix(p1, p2), compute_uv=False)
    assert sv[-2] < RANK_DEFICIENT_SV * sv[0]
    g = random_sweep_scene(0, max_n=300, kind="pushbroom", sigma=0.0, outlier_ratio=0.0)
    p1 = (g.points1 - g.points1.mean(0)) / g.points1.std(0)
    p2 = (g.points2 - g.points2.mean(0)) / g.points2.std(0)
    sv = np.linalg.svd(design_matrix(p1, p2), compute_uv=False)
    assert g.params["degenerate"] is None and sv[-2] > NONZERO_RTOL * sv[0]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"sigma": -1.0}, r"^sigma must be a real number in \[0"),
    ({"outlier_ratio": 1.0}, r"^outlier_ratio must"),
    ({"slit_ratio": 0.0}, r"^slit_ratio must"),
    ({"coverage": 1.5}, r"^coverage must"),
    ({"kind": "pinhole"}, r"^kind must be one of"),
    ({"baseline": "up"}, r"^baseline must be one of"),
    ({"n": 5}, r"^n must be an integer >= 15"),
    ({"max_n": 3}, r"^max_n must be an integer >= 15"),
    ({"principal_point": 3.0}, r"^principal_point must be a pair"),
    ({"colour": 1}, r"^colour is not a parameter of random_sweep_scene"),
    ({"degenerate": "same flight line", "kind": "two_slit"}, r"^degenerate="),
    ({"degenerate": "twisted"}, r"^degenerate must be None or"),
    ({"pushbroom_first": 1}, r"^pushbroom_first must be a bool"),
    ({"rng": "seed"}, r"^rng must be None"),
])
def test_bad_arguments_raise_naming_the_argument(kwargs, match):
    kwargs = dict(kwargs)
    rng = kwargs.pop("rng", 0)
    with pytest.raises(ValueError, match=match):
        random_sweep_scene(rng, **kwargs)


@pytest.mark.parametrize("kind", SWEEP_KINDS)
def test_yardstick_returns_the_truth_on_noise_free_data(kind):
    for seed in range(3):
        s = random_sweep_scene(seed, max_n=150, kind=kind, sigma=0.0)
        y = ml_from_truth(s)
        assert y.rotation_error_deg < SWEEP_ML_NOISE_FREE
        assert y.translation_rel_error < SWEEP_ML_NOISE_FREE
        assert y.rms < SWEEP_ML_NOISE_FREE
        assert y.n_inliers == s.inliers.sum()
        assert y.determined == (y.condition < 1e10)


def test_yardstick_errors_follow_the_noise_and_flag_undetermined_scenes():
    s = random_sweep_scene(1, max_n=400, kind="two_slit", sigma=1.0, slit_ratio=0.3,
                           outlier_ratio=0.0, focal=1000.0, coverage=1.0, baseline_ratio=0.3,
                           depth_extent=1.0, plane_fraction=0.0)
    y = ml_from_truth(s)
    assert 0 < y.rotation_error_deg < 5 * y.rotation_std_deg
    # 4N residuals, 6 + 3N parameters: the RMS is about sigma sqrt((N - 6) / (4N)).
    assert y.rms == pytest.approx(s.sigma * np.sqrt((400 - 6) / 1600),
                                   rel=SWEEP_YARDSTICK_RMS_RTOL)
    assert y.determined
    weak = random_sweep_scene(5, n=30, kind="two_slit", sigma=2.0, slit_ratio=0.005,
                              outlier_ratio=0.0)
    assert not ml_from_truth(weak).determined
    with pytest.raises(ValueError, match=r"^scene must be a SweepScene"):
        ml_from_truth({"points1": s.points1})


def test_yardstick_within_the_threshold_fits_what_an_estimator_can_select():
    """On the correspondences within the threshold of the true tensor: the yardstick on
    the true inliers when those are the same, else a fit of those correspondences (the
    one score_two_view's ratios divide by)."""
    s = random_sweep_scene(2, max_n=300, kind="two_slit", sigma=1.0, outlier_ratio=0.4)
    y = ml_from_truth(s)
    within = noise_ceiling(s, 3.0).within
    assert not np.array_equal(within, s.inliers)
    yd = ml_within_threshold(s, 3.0, yardstick=y)
    assert yd.n_inliers == within.sum()
    assert yd.rotation_error_deg == ml_from_truth(s, inliers=within).rotation_error_deg
    clean = random_sweep_scene(2, max_n=300, kind="two_slit", sigma=0.0, outlier_ratio=0.0)
    yc = ml_from_truth(clean)
    assert ml_within_threshold(clean, 1.0, yardstick=yc) is yc
    with pytest.raises(ValueError, match=r"^threshold must be"):
        ml_within_threshold(s, 0.0)


def test_noise_ceiling_and_score_against_ground_truth():
    s = random_sweep_scene(3, max_n=500, sigma=0.0, outlier_ratio=0.3)
    c = noise_ceiling(s, 1.5)
    assert c.recall == 1.0 and 0.9 < c.precision <= 1.0
    np.testing.assert_array_equal(c.within[s.inliers], True)
    with pytest.raises(ValueError, match=r"^threshold must"):
        noise_ceiling(s, 0.0)
    y = ml_from_truth(s)
    perfect = score_two_view(s, c.within, s.R, s.t, threshold=1.5, yardstick=y)
    assert perfect["precision_ratio"] == 1.0 and perfect["recall_ratio"] == 1.0
    # Noise-free, maximum likelihood is the truth: its mask is the ceiling's.
    assert perfect["ml_ceiling_ratio"] == 1.0
    assert summarize_sweep([dict(perfect, n_inliers=int(s.inliers.sum()))])["overall"][
        "ml_mask_0.99"] == 1.0
    assert perfect["rotation_error_deg"] < SWEEP_ML_NOISE_FREE and perfect["pose_within"]
    turned = matrix_from_rvec([0.0, np.radians(2.0), 0.0]) @ s.R
    half = s.inliers & (np.arange(len(s.inliers)) % 2 == 0)
    bad = score_two_view(s, half, turned, s.t, threshold=1.5, yardstick=y)
    assert bad["recall_ratio"] == pytest.approx(half.sum() / s.inliers.sum())
    assert bad["rotation_error_deg"] == pytest.approx(2.0) and not bad["pose_within"]
    with pytest.raises(ValueError, match=r"^mask must have"):
        score_two_view(s, np.ones(3), yardstick=y)


def test_pose_scored_by_the_loss_the_data_allow_and_by_its_reported_uncertainty():
    """The yardstick's own pose fits the data as well as the yardstick (loss ratio 1); a pose
    turned by 2 degrees fits worse and is not as good as the data allow. Returned with status
    "ok" and a covariance of 0.1 degree it is a confident wrong answer; with a covariance of
    10 degrees, or with status "ambiguous", it carries its uncertainty."""
    s = random_sweep_scene(3, max_n=500, sigma=0.5, outlier_ratio=0.3)
    thr = 1.5
    y = ml_from_truth(s)
    yd = ml_from_truth(s, inliers=noise_ceiling(s, thr).within)
    best = score_two_view(s, s.inliers, yd.R, yd.t, threshold=thr, yardstick=y)
    assert best["pose_loss_ratio"] == pytest.approx(1.0, rel=SAME_FIT_RTOL)
    assert best["pose_within"] and best["pose_fits_as_ml"] and "pose_reported" not in best
    turned = matrix_from_rvec([0.0, np.radians(2.0), 0.0]) @ s.R
    tight = np.diag([np.radians(0.1) ** 2] * 3 + [1e-6] * 3)
    loose = np.diag([np.radians(10.0) ** 2] * 3 + [1e-6] * 3)
    bad = score_two_view(s, s.inliers, turned, s.t, threshold=thr, yardstick=y, status="ok",
                         covariance=tight)
    assert bad["pose_loss_ratio"] > 1.01 and not bad["pose_fits_as_ml"]
    assert bad["pose_status"] == "ok" and not bad["pose_reported"]
    assert score_two_view(s, s.inliers, turned, s.t, threshold=thr, yardstick=y, status="ok",
                          covariance=loose)["pose_reported"]
    assert score_two_view(s, s.inliers, turned, s.t, threshold=thr, yardstick=y,
                          status="ambiguous", covariance=tight)["pose_reported"]
    # Tallied on scenes whose yardstick is not determined: a failure, a reported uncertainty
    # or a pose as good as the data allow is honest, the confident wrong pose is not.
    rec = {"n_inliers": 100, "params": {}, "decidable": True, "pose_judged": False,
           "determined": False, "precision_ratio": 1.0, "recall_ratio": 1.0}
    records = [dict(rec, failure="pose: undetermined"), dict(rec, pose_reported=True),
               dict(rec, pose_reported=False, pose_fits_as_ml=True),
               dict(rec, pose_reported=False, pose_fits_as_ml=False)]
    tally = summarize_sweep(records)["overall"]
    assert tally["undetermined"] == 4
    assert tally["undetermined_honest"] == pytest.approx(3 / 4)
    # Judged scenes whose pose is beyond the factor: failed, or carrying its uncertainty.
    judged = dict(rec, pose_judged=True, determined=True)
    records = [dict(judged, pose_within=True), dict(judged, failure="pose: failed"),
               dict(judged, pose_within=False, pose_reported=True),
               dict(judged, pose_within=False, pose_reported=False)]
    tally = summarize_sweep(records)["overall"]
    assert tally["determined"] == 4 and tally["pose_beyond"] == 3
    assert tally["pose_beyond_reported"] == pytest.approx(2 / 3)


def test_noise_ceiling_maximum_likelihood_mask_and_decidability():
    """Noise-free: the maximum-likelihood tensor is the truth and keeps the same mask. With
    noise it keeps about as many points. A scene whose true inliers are fewer than chance
    would give among 70% outliers is undecidable; a clean one is decidable, with a support
    needed well below its inliers."""
    s = random_sweep_scene(3, max_n=500, sigma=0.0, outlier_ratio=0.3)
    c = noise_ceiling(s, 1.5)
    np.testing.assert_array_equal(c.ml_within, c.within)
    assert (c.ml_precision, c.ml_recall) == (c.precision, c.recall)
    assert c.decidable and c.support_needed < SWEEP_SUPPORT_NEEDED_FRACTION * s.inliers.sum()
    noisy = random_sweep_scene(3, max_n=500, sigma=0.5, outlier_ratio=0.3)
    c = noise_ceiling(noisy, 1.5)
    differ = abs(int(c.ml_within.sum()) - int(c.within.sum()))
    assert differ <= SWEEP_ML_WITHIN_RTOL * c.within.sum()
    few = random_sweep_scene(5, max_n=40, n=40, outlier_ratio=0.7, sigma=1.0)
    c = noise_ceiling(few, 3.0)
    assert not c.decidable and c.within.sum() < c.support_needed
    with pytest.raises(ValueError, match=r"^alpha must"):
        noise_ceiling(s, 1.5, alpha=0.0)
    with pytest.raises(ValueError, match=r"^hypotheses must"):
        noise_ceiling(s, 1.5, hypotheses=0)



def test_tensor_fits_as_well_as_the_maximum_likelihood_tensor():
    """The maximum-likelihood tensor itself scores a loss ratio of 1 and fits as well as the
    data allow; the true tensor turned by a few pixels' worth fits worse and does not (its
    mask keeps fewer inliers and its truncated loss is higher); a malformed F is refused."""
    s = random_sweep_scene(3, max_n=500, sigma=0.5, outlier_ratio=0.3)
    thr = 1.5
    c = noise_ceiling(s, thr)
    ml = refine_on_variety(s.F, s.points1, s.points2, c.within, thr, rng=0)
    y = ml_from_truth(s)
    best = score_two_view(s, ml.inliers, threshold=thr, yardstick=y, F=ml.F)
    assert best["tensor_loss_ratio"] == pytest.approx(1.0, rel=SAME_FIT_RTOL) and best["fits_as_ml"]
    F_off = s.F + 0.02 * np.random.default_rng(0).normal(size=(2, 2, 2, 2)) * np.abs(s.F).max()
    m_off = sampson_distance(F_off, s.points1, s.points2) < thr
    off = score_two_view(s, m_off, threshold=thr, yardstick=y, F=F_off)
    assert off["tensor_loss_ratio"] > 1.01 and not off["fits_as_ml"]
    with pytest.raises(ValueError, match=r"^F must have shape"):
        score_two_view(s, ml.inliers, threshold=thr, yardstick=y, F=np.ones(16))


def test_pose_yardstick_on_the_correspondences_within_the_threshold():
    """With outliers inside the threshold the pose is judged against the larger of the errors
    of maximum likelihood on the true inliers and on the within-threshold correspondences
    (the oracle ratios keep the first alone); ml_from_truth fits the inliers it is given,
    and refuses fewer than six. An undecidable scene's pose is not judged."""
    s = random_sweep_scene(8, max_n=2000, outlier_ratio=0.6, sigma=1.0)
    c = noise_ceiling(s, 3.0)
    assert np.count_nonzero(c.within & ~s.inliers) > 0
    y = ml_from_truth(s)
    y_data = ml_from_truth(s, inliers=c.within)
    assert y_data.n_inliers == c.within.sum() != y.n_inliers
    rec = score_two_view(s, c.within, y_data.R, y_data.t, threshold=3.0, yardstick=y)
    assert rec["rotation_ratio"] <= min(1.0 + SAME_FIT_RTOL, rec["oracle_rotation_ratio"])
    assert rec["pose_judged"] == (rec["determined"] and rec["decidable"])
    with pytest.raises(ValueError, match=r"^inliers must select at least 6"):
        ml_from_truth(s, inliers=np.arange(len(s.inliers)) < 5)
    few = random_sweep_scene(5, max_n=40, n=40, outlier_ratio=0.7, sigma=1.0)
    assert not score_two_view(few, np.zeros(40), threshold=3.0)["pose_judged"]

def _truth_estimator(scenes):
    """A stand-in estimator returning the truth (mask from the true tensor), or raising."""

    def estimate(p1, p2, intr1, intr2, threshold):
        s = scenes[p1.tobytes()]
        if s.params["kind"] == "pushbroom":
            raise RuntimeError("no pushbroom pairs here")
        return {"mask": noise_ceiling(s, threshold).within, "R": s.R, "t": s.t}

    return estimate


def test_sweep_records_failures_and_goes_on():
    seeds = range(10, 18)
    scenes = {s.points1.tobytes(): s for s in (random_sweep_scene(k, max_n=80) for k in seeds)}
    records = sweep_two_view(_truth_estimator(scenes), seeds, max_n=80)
    again = sweep_two_view(_truth_estimator(scenes), seeds, max_n=80)
    assert [r["seed"] for r in records] == list(seeds)
    assert [r.get("rotation_error_deg") for r in records] == \
        [r.get("rotation_error_deg") for r in again]
    kinds = [r["params"]["kind"] for r in records]
    assert "pushbroom" in kinds and "two_slit" in kinds
    for r in records:
        if r["params"]["kind"] == "pushbroom":
            assert r["failure"] == "RuntimeError: no pushbroom pairs here"
            assert r["precision_ratio"] == 0.0 and "rotation_error_deg" not in r
        else:
            assert r["failure"] is None and r["recall_ratio"] == 1.0
            assert r["precision_ratio"] == 1.0 and r["pose_within"]
    summary = summarize_sweep(records)
    o = summary["overall"]
    assert o["scenes"] == 8
    assert o["failures"] == sum(r["params"]["kind"] == "pushbroom" for r in records)
    kinds = summary["regions"]["kind"]
    assert sum(v["scenes"] for v in kinds.values()) == 8
    only = sweep_two_view(_truth_estimator(scenes), seeds, max_n=80,
                          region={"kind": "two_slit", "sigma": (0.1, 1.0)})
    assert all(r["params"]["kind"] == "two_slit" and r["params"]["sigma"] < 1.0 for r in only)
    with pytest.raises(ValueError, match=r"^estimate must be callable"):
        sweep_two_view(None, seeds)


def test_robust_yardstick_lets_the_data_choose_the_inliers_near_the_threshold():
    """On sweep scene 382 (2,000 correspondences, 57% outliers) four of the correspondences
    within the threshold of the true tensor are beyond it for the pose maximum likelihood
    fits to them: re-selected, the truncated loss falls and the rotation moves by three of
    its standard deviations. That pose is what the data allow a robust estimator, so a pose
    there is within the yardstick, though not within maximum likelihood on the fixed
    correspondences alone."""
    s = random_sweep_scene(382, max_n=2000)
    thr = 3.0 * s.sigma
    c = noise_ceiling(s, thr)
    fixed = ml_from_truth(s, inliers=c.within)
    robust = ml_from_truth(s, inliers=c.within, threshold=thr)

    def loss(y):
        return pose_distances(s.intrinsics1, s.intrinsics2, rvec_from_matrix(y.R), y.t,
                              s.points1, s.points2, thr)

    (l_fixed, _, _), (l_robust, e, _) = loss(fixed), loss(robust)
    assert l_robust < l_fixed
    assert robust.n_inliers == np.count_nonzero(e <= thr**2) != c.within.sum()
    assert robust.rotation_error_deg > fixed.rotation_error_deg + 2 * robust.rotation_std_deg
    rec = score_two_view(s, e <= thr**2, robust.R, robust.t, threshold=thr)
    assert rec["pose_within"] and not rec["pose_within_mask"]
    assert rec["mask_rotation_ratio"] > rec["rotation_ratio"]
    assert rec["ml_robust_rotation_error_deg"] == pytest.approx(robust.rotation_error_deg)
    assert rec["pose_loss_ratio"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"^threshold must be"):
        ml_from_truth(s, inliers=c.within, threshold=-1.0)
