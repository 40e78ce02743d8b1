"""The robust estimate with 13-point minimal samples (findEpipolarTensor(sampleSize=13)):
hypotheses in the problem's frame, exact recovery with outliers, agreement with 15-point
samples at noise, determinism, both path-tracking backends, malformed option values."""

import numpy as np
import pytest
import tolerances as tol

import xslit
from xslit.epipolar import minimal
from xslit.epipolar import minimal_sampling as ms
from xslit.epipolar.estimate import EpipolarProblem, estimate_epipolar_tensor
from xslit.epipolar.minimal_sampling import MinimalEpipolarProblem, epipolar_problem
from xslit.robust import RobustOptions
from xslit.synthetic import random_two_view_scene
from xslit.testing import projective_distance

#: Rounds of 16 samples: on these small scenes the loop stops after one or two rounds (the
#: numpy backend of the solver takes tens of milliseconds per sample).
FAST = dict(threshold=1.5, confidence=0.99, batch_size=16)


@pytest.fixture(params=["numpy", "numba"])
def backend(request, monkeypatch):
    """The solver's path tracking: numpy (numba hidden, as without the extra ``fast``) or the
    compiled kernel (skipped without numba)."""
    if request.param == "numba":
        pytest.importorskip("numba")
    else:
        monkeypatch.setattr(minimal, "HAVE_NUMBA", False)
    return request.param


def true_tensor(scene):
    return xslit.computeEpipolarTensor(scene["camera1"], scene["camera2"])


def test_minimal_samples_give_models_in_the_problem_frame(rng):
    s = random_two_view_scene(rng, 40)  # noise-free, no outliers
    problem = MinimalEpipolarProblem(s["points1"], s["points2"], rng=0)
    truth = problem.model_from_pixels(true_tensor(s))
    idx = np.stack([rng.choice(40, 13, replace=False) for _ in range(3)])
    # Seven distinct correspondences, some repeated: a null space of nine dimensions.
    repeated = np.concatenate([idx[0, :7], idx[0, :6]])
    models, owner = problem.fit_samples(np.vstack([idx, repeated]))
    assert set(owner.tolist()) == {0, 1, 2}
    assert np.all(np.diff(owner) >= 0)
    for b in range(3):
        mine = models[owner == b]
        d = projective_distance(mine, np.broadcast_to(truth, mine.shape), axis=(1, 2, 3, 4))
        assert d.min() < tol.MINIMAL_TRUTH_RTOL
        best = mine[np.argmin(d)]
        assert problem.residuals(best[None]).max() < tol.MINIMAL_NOISE_FREE_PX
    # Larger samples (local optimisation's) are the linear problem's.
    big = rng.choice(40, 30, replace=False)[None]
    linear = EpipolarProblem(s["points1"], s["points2"])
    np.testing.assert_array_equal(problem.fit_samples(big)[0], linear.fit_samples(big)[0])
    assert problem.sample_size == 13 and linear.sample_size == 15


def test_coplanar_minimal_samples_give_no_model(rng):
    # Scene points on one plane leave a null space of more than three dimensions.
    s = random_two_view_scene(rng, 40)
    xy = rng.uniform(-1.0, 1.0, (40, 2))
    X = np.column_stack([xy, 5.0 + 0.3 * xy[:, 0] - 0.2 * xy[:, 1]])
    problem = MinimalEpipolarProblem(s["camera1"].project(X), s["camera2"].project(X), rng=0)
    models, owner = problem.fit_samples(np.stack([rng.choice(40, 13, replace=False)
                                                  for _ in range(3)]))
    assert models.shape == (0, 2, 2, 2, 2) and owner.shape == (0,)


def test_noise_free_with_outliers_is_exact_and_deterministic(backend):
    s = random_two_view_scene(2, 40, outlier_ratio=0.1)
    args = (s["points1"], s["points2"], RobustOptions(**FAST), 5)
    est = estimate_epipolar_tensor(*args, sample_size=13)
    assert est.success, est.reason
    np.testing.assert_array_equal(est.inliers, s["inliers"])
    assert projective_distance(est.F, true_tensor(s)) < tol.MINIMAL_ROBUST_NOISE_FREE
    again = estimate_epipolar_tensor(*args, sample_size=13)
    np.testing.assert_array_equal(again.F, est.F)
    np.testing.assert_array_equal(again.inliers, est.inliers)
    assert again.iterations == est.iterations


def test_find_tensor_draws_minimal_samples(monkeypatch):
    s = random_two_view_scene(2, 40, outlier_ratio=0.1)
    shapes = []

    def spy(points1, points2, samples, **kwargs):
        shapes.append(np.shape(samples))
        return minimal.minimal_hypotheses(points1, points2, samples, **kwargs)

    monkeypatch.setattr(ms, "minimal_hypotheses", spy)
    F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], sampleSize=13)
    assert shapes and all(shape[1:] == (13,) for shape in shapes)
    np.testing.assert_array_equal(mask[:, 0] == 1, s["inliers"])
    assert projective_distance(F, true_tensor(s)) < tol.MINIMAL_ROBUST_NOISE_FREE
    # The keyword applies to UsacParams too.
    shapes.clear()
    params = xslit.UsacParams(threshold=1.5, maxIterations=32)
    F_params, mask_params = xslit.findEpipolarTensor(s["points1"], s["points2"], params,
                                                     sampleSize=13)
    assert shapes and all(shape[1:] == (13,) for shape in shapes)
    np.testing.assert_array_equal(mask_params, mask)
    assert projective_distance(F_params, F) < tol.MINIMAL_ROBUST_NOISE_FREE
    # The default draws 15-point samples: the minimal solver is not called.
    shapes.clear()
    F15, mask15 = xslit.findEpipolarTensor(s["points1"], s["points2"])
    assert not shapes
    np.testing.assert_array_equal(mask15, mask)
    assert projective_distance(F15, F) < tol.MINIMAL_ROBUST_NOISE_FREE


@pytest.mark.parametrize("seed", [0, 2, 4])
def test_noise_agrees_with_linear_samples(seed):
    s = random_two_view_scene(seed, 50, sigma=0.5, outlier_ratio=0.1)
    F0 = true_tensor(s)
    est15 = estimate_epipolar_tensor(s["points1"], s["points2"], RobustOptions(**FAST), seed)
    est13 = estimate_epipolar_tensor(s["points1"], s["points2"], RobustOptions(**FAST), seed,
                                     sample_size=13)
    assert est13.success and est15.success
    gap = projective_distance(est13.F, est15.F)
    assert gap <= tol.MINIMAL_ROBUST_AGREEMENT * projective_distance(est15.F, F0)
    assert np.count_nonzero(est13.inliers != est15.inliers) <= tol.MINIMAL_ROBUST_MASK_DIFF


@pytest.mark.parametrize("bad", [14, 12, 16, 0, 13.0, 13.5, True, np.bool_(True), "13", None,
                                 [13], np.nan])
def test_malformed_sample_size(bad):
    p = np.random.default_rng(0).uniform(0, 100, (20, 2))
    with pytest.raises(ValueError, match=r"^sampleSize must be 13 \(minimal samples\) or 15 "):
        xslit.findEpipolarTensor(p, p + 1, sampleSize=bad)
    with pytest.raises(ValueError, match=r"^sample_size must be 13 \(minimal samples\) or 15 "):
        estimate_epipolar_tensor(p, p + 1, sample_size=bad)
    with pytest.raises(ValueError, match=r"^sample_size must be 13 "):
        epipolar_problem(p, p + 1, bad)


@pytest.mark.parametrize("method", [xslit.FM_LINEAR, xslit.FM_13POINT])
def test_sample_size_needs_a_robust_method(method):
    p = np.random.default_rng(0).uniform(0, 100, (20, 2))
    with pytest.raises(ValueError, match=r"^sampleSize must be 15 with FM_LINEAR and FM_13POINT"):
        xslit.findEpipolarTensor(p, p + 1, method, sampleSize=13)
    assert ms.check_sample_size("sampleSize", np.int64(13)) == 13  # numpy integers are ints


def test_support_is_tested_against_every_hypothesis(backend):
    """The non-randomness test counts the models the best was chosen from: about 11 per
    13-point sample, one per 15-point sample (degenerate samples give none, and the samples
    drawn bound it from below)."""
    from xslit.robust import robust_estimate

    s = random_two_view_scene(3, 60, outlier_ratio=0.2)
    opt = RobustOptions(**FAST)
    res13 = robust_estimate(MinimalEpipolarProblem(s["points1"], s["points2"], rng=0), opt,
                            np.random.default_rng(0))
    res15 = robust_estimate(EpipolarProblem(s["points1"], s["points2"]), opt,
                            np.random.default_rng(0))
    assert res13.success and res15.success
    assert res13.history["hypotheses"] > 2 * res13.iterations
    assert res15.history["hypotheses"] == res15.iterations
