"""The calibrated solver (xslit.sfm.calibrated) against ground truth."""

import numpy as np
import pytest

import xslit
from xslit.cameras import compose_camera
from xslit.epipolar import epipolar_tensor
from xslit.epipolar.linear import axis_normalization
from xslit.epipolar.tensor import sampson_distance
from xslit.geometry import matrix_from_rvec, rvec_from_matrix, skew
from xslit.sfm.calibrated import pose_tensors, relative_pose, rotation_grid, tensor_map
from xslit.synthetic import random_two_view_scene


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
        assert np.sum(sv > 1e-9 * sv[0]) == RANK[kind]
        R = matrix_from_rvec(rng.normal(size=3))
        t = rng.normal(size=3)
        c1 = compose_camera(s["intrinsics1"], np.zeros(3), np.zeros(3))
        c2 = compose_camera(s["intrinsics2"], rvec_from_matrix(R), t)
        F = epipolar_tensor(c1.A1, c1.A2, c2.A1, c2.A2).ravel()
        x = np.r_[R.ravel(), (skew(t) @ R).ravel()]
        np.testing.assert_allclose(Phi @ x, F, rtol=0, atol=1e-9 * np.abs(F).max())
        np.testing.assert_allclose(pose_tensors(Phi, R, t), F, rtol=0,
                                   atol=1e-9 * np.abs(F).max())


def test_rotation_grid_covers_so3():
    grid = rotation_grid(2000)
    np.testing.assert_allclose(grid @ np.swapaxes(grid, 1, 2), np.broadcast_to(np.eye(3),
                               grid.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(grid), 1.0, atol=1e-12)
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
    assert _rot_err_deg(res.R, matrix_from_rvec(s["rvec"])) < 1e-6
    np.testing.assert_allclose(res.t, s["tvec"], atol=1e-6)  # metric scale
    assert res.inliers.all() and res.rms < 1e-6


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
