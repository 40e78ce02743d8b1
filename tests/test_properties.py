"""Properties of the public API, checked on generated input (Hypothesis).

For every name in ``xslit.__all__``: valid input gives a finite result consistent with the
ground truth it was made from; malformed input raises a ValueError whose message starts with the
argument's name; nothing raises another exception type, warns (pytest runs with warnings as
errors) or returns NaN silently. ``test_every_public_name_has_a_property`` keeps the list
complete: a new public name fails it until a property covers it.

Examples are derandomized (profiles in ``conftest.py``): "quick" by default, "thorough" in the
slow run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import strategies as S
from hypothesis import assume, event, example, given, settings
from hypothesis import strategies as st
from tolerances import (
    CHANCE_RATIO_MAX,
    EXACT,
    HOMOGRAPHY_RTOL,
    PROJECTION_RTOL,
    PROPERTY_CALIBRATION_PX,
    PROPERTY_CALIBRATION_RTOL,
    PROPERTY_CURVE_DISTANCE,
    PROPERTY_NOISE_FREE,
    PROPERTY_NOISE_FREE_COST,
    PROPERTY_RAY_DISTANCE,
    PROPERTY_ROUNDTRIP_RTOL,
    PROPERTY_SHIFT_MATCH_PX,
    PROPERTY_SOLVER_RTOL,
    ROBUST_LOCATION_ATOL,
    TENSOR_RESIDUAL_RTOL,
    TENSOR_RTOL,
)

import xslit
from xslit.epipolar.curves import curve_distance

COVERED: set[str] = set()


def covers(*names):
    """Record that the decorated property exercises ``names`` of ``xslit.__all__``."""
    COVERED.update(names)
    return lambda f: f


def raises_named(name: str):
    """``pytest.raises`` for a ValueError whose message starts with the argument's name."""
    return pytest.raises(ValueError, match=rf"^{name} ")


def rel_err(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def _nan_free(*arrays):
    for a in arrays:
        assert np.all(np.isfinite(np.asarray(a, float)))


def _ray_distance(camera, X):
    """Distance from each point to the viewing ray of its own projection."""
    px = camera.project(X)
    rays = camera.rays(px)
    d = X - rays[:, :3]
    return np.linalg.norm(np.cross(d, rays[:, 3:]), axis=1)


# -- cameras -----------------------------------------------------------------------------------

@covers("TwoSlitCamera", "PushbroomCamera", "Camera", "composeTwoSlitProjection",
        "composePushbroomProjection", "projectTwoSlitPoints")
@given(S.posed_scenes())
def test_projection_is_finite_and_points_lie_on_their_rays(scene):
    intr, rvec, tvec, cam, X = scene
    assert isinstance(cam, xslit.Camera)
    px = cam.project(X)
    _nan_free(px)
    assert np.max(_ray_distance(cam, X)) < PROPERTY_RAY_DISTANCE * (1 + np.abs(X).max())
    if isinstance(intr, xslit.TwoSlitIntrinsics):
        cv_px, _ = xslit.projectTwoSlitPoints(X, rvec, tvec, intr)
        assert rel_err(cv_px.reshape(-1, 2), px) < PROJECTION_RTOL


@covers("TwoSlitCamera")
@given(S.two_slit_cameras(), S.scales(), S.scales(), S.camera_points(1, 10))
def test_two_slit_camera_is_invariant_to_the_scale_of_its_matrices(cam, s1, s2, Xc):
    scaled = xslit.TwoSlitCamera(cam.A1 * s1, cam.A2 * s2)
    X = np.vstack([Xc, cam.rays([[0.0, 0.0]])[:, :3] + cam.rays([[0.0, 0.0]])[:, 3:]])
    assert rel_err(scaled.project(X), cam.project(X)) < PROJECTION_RTOL


@covers("TwoSlitCamera", "PushbroomCamera", "PinholeCamera", "TwoSlitIntrinsics",
        "PushbroomIntrinsics")
@given(S.posed_scenes(1, 1))
def test_camera_and_intrinsics_arrays_are_read_only(scene):
    intr, _, _, cam, _ = scene
    pin = xslit.PinholeCamera.from_intrinsics(np.diag([500.0, 500, 1]))
    owners = [(cam, "A1"), (cam, "A2"), (intr, "K1"), (intr, "K2"), (pin, "P")]
    owners += [(intr, "velocity")] if isinstance(intr, xslit.PushbroomIntrinsics) else []
    for obj, attr in owners:
        before = np.array(getattr(obj, attr))
        a = getattr(obj, attr)
        try:
            a[(0,) * a.ndim] = np.nan
        except ValueError as exc:
            assert "read-only" in str(exc)
        # Either refused, or a fresh copy (a derived property): the object is unchanged.
        np.testing.assert_array_equal(getattr(obj, attr), before)


@covers("TwoSlitCamera")
@given(S.malformed_arrays((2, 4)), st.sampled_from(["A1", "A2"]))
def test_two_slit_camera_refuses_malformed_matrices(bad, which):
    A1 = np.array([[1.0, 0, 0, 0], [0, 0, 1, 0]])
    A2 = np.array([[0.0, 2, 0, 0], [0, 0, 1, 1]])
    with raises_named(which):
        xslit.TwoSlitCamera(*((bad, A2) if which == "A1" else (A1, bad)))


@covers("TwoSlitCamera")
@given(S.two_slit_cameras(), st.data())
def test_matrices_in_other_layouts_give_the_same_camera(cam, data):
    A1 = data.draw(S.array_layouts(np.array(cam.A1)))
    other = xslit.TwoSlitCamera(A1, cam.A2)
    np.testing.assert_array_equal(other.A1, cam.A1)


@covers("Camera", "TwoSlitCamera", "PinholeCamera")
@given(S.malformed_arrays((5, 3), allow_empty=True))
def test_project_refuses_malformed_points(bad):
    cam = xslit.TwoSlitCamera([[1.0, 0, 0, 0], [0, 0, 1, 0]], [[0.0, 2, 0, 0], [0, 0, 1, 1]])
    pin = xslit.PinholeCamera.from_intrinsics(np.diag([500.0, 500, 1]))
    for c in (cam, pin):
        with raises_named("points"):
            c.project(bad)


@covers("PushbroomCamera")
@given(S.posed_scenes(1, 10, pushbroom=True))
def test_pushbroom_from_its_matrix_and_from_two_slit_agree(scene):
    _, _, _, cam, X = scene
    again = xslit.PushbroomCamera.from_matrix(cam.matrix)
    assert rel_err(again.project(X), cam.project(X)) < PROJECTION_RTOL
    view = xslit.PushbroomCamera.from_two_slit(xslit.TwoSlitCamera(cam.A1, cam.A2))
    assert rel_err(view.project(X), cam.project(X)) < PROJECTION_RTOL


@covers("PushbroomCamera")
@given(st.sampled_from([None, "cam", np.eye(3), {"A1": 1}]))
def test_pushbroom_from_two_slit_refuses_non_cameras(bad):
    with raises_named("camera"):
        xslit.PushbroomCamera.from_two_slit(bad)


@covers("PinholeCamera")
@given(S.vectors(3, 200, 2000), S.poses(), S.camera_points(1, 10))
def test_pinhole_projects_k_r_t(f, pose, Xc):
    rvec, tvec = pose
    K = np.array([[f[0], 0, f[2] / 4], [0, f[1], f[2] / 5], [0, 0, 1]])
    cam = xslit.PinholeCamera.from_intrinsics(K, rvec, tvec)
    X = S.world_from_camera(Xc, rvec, tvec)
    u = Xc @ K.T
    assert rel_err(cam.project(X), u[:, :2] / u[:, 2:]) < PROJECTION_RTOL
    assert np.max(_ray_distance(cam, X)) < PROPERTY_RAY_DISTANCE * (1 + np.abs(X).max())


@covers("PinholeCamera")
@given(S.malformed_arrays((3, 3)) | st.just(np.zeros((3, 3))))
def test_pinhole_refuses_malformed_k(bad):
    with raises_named("K"):
        xslit.PinholeCamera.from_intrinsics(bad)


@covers("RationalCamera")
@given(S.two_slit_cameras(), S.camera_points(1, 10))
def test_rational_two_slit_camera_sees_along_the_slits(cam, Xc):
    # In the camera's own frame the slits lie in z = 0 and z = -d: z = 1 is a retinal plane.
    intr = xslit.decomposeTwoSlitProjection(cam).intrinsics
    cam = xslit.composeTwoSlitProjection(intr, np.zeros(3), np.zeros(3))
    l1, l2 = cam.slits
    Y = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]])
    rat = xslit.RationalCamera.two_slit(l1, l2, Y)
    X = Xc + np.array([0.0, 0.0, 0.5])
    px = rat.project(X)
    ok = np.isfinite(px).all(axis=1)
    assume(ok.any())
    assert np.max(_ray_distance(rat, X[ok])) < PROPERTY_RAY_DISTANCE * (1 + np.abs(X).max())


@covers("RationalCamera")
@given(st.sampled_from(["a", None, 1.5, True, -1, [1]]))
def test_rational_camera_refuses_a_bad_class(beta):
    Y = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]])
    with raises_named("beta"):
        xslit.RationalCamera(lambda X: X, Y, beta)


@covers("TwoSlitIntrinsics")
@given(st.sampled_from(["fu", "fv", "u0", "v0", "theta", "d"]),
       S.malformed_scalars(allow_zero=True))
def test_two_slit_intrinsics_refuse_malformed_scalars(name, bad):
    args = {"fu": 800.0, "fv": 600.0, "u0": 320.0, "v0": 240.0, "theta": 1.2, "d": 0.5}
    if isinstance(bad, float) and bad == 0.0 and name in ("u0", "v0"):
        return  # a principal point may be 0
    args[name] = bad
    with raises_named(name):
        xslit.TwoSlitIntrinsics.from_parameters(**args)


@covers("PushbroomIntrinsics")
@given(st.sampled_from(["v", "f", "u", "yaw", "tilt"]), S.malformed_scalars())
def test_pushbroom_intrinsics_refuse_malformed_scalars(name, bad):
    args = {"v": 0.02, "f": 800.0, "u": 300.0, "yaw": 0.1, "tilt": 0.2}
    args[name] = bad
    with raises_named(name):
        xslit.PushbroomIntrinsics.from_parameters(**args)


@covers("decomposeTwoSlitProjection", "decomposePushbroomProjection", "composeTwoSlitProjection",
        "composePushbroomProjection")
@given(S.posed_scenes(1, 1))
def test_decomposition_recovers_intrinsics_and_pose(scene):
    intr, rvec, tvec, cam, _ = scene
    if isinstance(intr, xslit.PushbroomIntrinsics):
        out = xslit.decomposePushbroomProjection(cam)
        again = xslit.composePushbroomProjection(out.intrinsics, out.rvec, out.tvec)
    else:
        out = xslit.decomposeTwoSlitProjection(cam)
        again = xslit.composeTwoSlitProjection(out.intrinsics, out.rvec, out.tvec)
    # A point on the second slit (at depth 4 for d = -4) projects to NaN in both cameras: the
    # recomposed camera has the same exceptional locus, and the same pixels elsewhere.
    X = S.world_from_camera(np.array([[0.3, -0.2, 4.0], [1, 1, 6], [-0.4, 0.5, 5.3]]), rvec,
                            tvec)
    a, b = again.project(X), cam.project(X)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    finite = ~np.isnan(b).any(axis=1)
    assert finite.any() and rel_err(a[finite], b[finite]) < PROPERTY_ROUNDTRIP_RTOL


@covers("decomposeTwoSlitProjection", "decomposePushbroomProjection")
@given(st.sampled_from([None, "camera", np.zeros((2, 4)), 3.0]))
def test_decomposition_refuses_non_cameras(bad):
    for f in (xslit.decomposeTwoSlitProjection, xslit.decomposePushbroomProjection):
        with raises_named("camera"):
            f(bad)


@covers("composeTwoSlitProjection", "composePushbroomProjection", "projectTwoSlitPoints")
@given(S.malformed_arrays((3,)) | st.just(np.array([0.0, 0, 1e300])),
       st.sampled_from(["rvec", "tvec"]), st.booleans())
@example(np.array([0.0, 0, 1e12]), "tvec", False)
def test_pose_arguments_are_named(bad, which, pushbroom):
    intr = (xslit.PushbroomIntrinsics.from_parameters(0.02, 800, 300) if pushbroom
            else xslit.TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, 1.4, 1.5))
    pose = {"rvec": np.zeros(3), "tvec": np.array([0, 0, 5.0]), which: bad}
    compose = xslit.composePushbroomProjection if pushbroom else xslit.composeTwoSlitProjection
    if isinstance(bad, np.ndarray) and bad.dtype == float and bad.shape == (3,) and \
            np.isfinite(bad).all():
        # Any finite rotation vector is a rotation; a far translation is a far camera, or an
        # error naming tvec once it swamps the other entries in floating point.
        try:
            compose(intr, **pose)
        except ValueError as exc:
            assert str(exc).startswith(f"{which} ")
        return
    with raises_named(which):
        compose(intr, **pose)
    if not pushbroom:
        with raises_named(which):
            xslit.projectTwoSlitPoints(np.ones((2, 3)), pose["rvec"], pose["tvec"], intr)


@covers("camera_from_dict")
@given(S.posed_scenes(1, 5))
def test_camera_dict_round_trip(scene):
    _, _, _, cam, X = scene
    again = xslit.camera_from_dict(json.loads(json.dumps(cam.to_dict())))
    assert type(again) is type(cam)
    assert rel_err(again.project(X), cam.project(X)) < EXACT


@covers("camera_from_dict")
@given(st.sampled_from([None, "x", {}, {"model": "two_slit"}, {"model": "nope"},
                        {"model": "two_slit", "A1": [[True] * 4] * 2, "A2": [[1] * 4] * 2},
                        {"model": "pinhole", "P": "abc"}]))
def test_camera_from_dict_refuses_malformed_dicts(bad):
    with pytest.raises(ValueError):
        xslit.camera_from_dict(bad)


@covers("retinal_plane_homography")
@given(S.floats(0.5, 3.0))
def test_retinal_homography_of_a_frame_and_its_multiple(s):
    from xslit.geometry import line_from_planes

    l1 = line_from_planes([1, 0, 0, 0], [0, 0, 1, 0])
    l2 = line_from_planes([0, 1, 0, 0], [0, 0, 1, 1])
    Y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1.0]])
    H = xslit.retinal_plane_homography(l1, l2, Y, s * Y)
    np.testing.assert_allclose(H / H[2, 2], np.eye(3), atol=HOMOGRAPHY_RTOL)
    with raises_named("frame2"):
        xslit.retinal_plane_homography(l1, l2, Y, Y != 0)


# -- epipolar geometry -------------------------------------------------------------------------

@st.composite
def two_views(draw, n_min=20, n_max=40):
    intr1, r1, t1, cam1, X = draw(S.posed_scenes(n_min, n_max, pushbroom=False))
    dr, dt = draw(S.vectors(3, -0.3, 0.3)), draw(S.vectors(3, -1.0, 1.0))
    assume(np.linalg.norm(dt) > 0.2)  # a baseline: identical cameras see no depth
    rvec2, tvec2 = r1 + dr, t1 + dt
    cam2 = xslit.composeTwoSlitProjection(intr1, rvec2, tvec2)
    p1, p2 = cam1.project(X), cam2.project(X)
    ok = np.isfinite(p1).all(axis=1) & np.isfinite(p2).all(axis=1)
    assume(ok.sum() >= n_min)
    return cam1, cam2, X[ok], p1[ok], p2[ok]


def _epipolar_residual(F, p1, p2):
    a = np.concatenate([p1, np.ones((len(p1), 1))], axis=1)
    b = np.concatenate([p2, np.ones((len(p2), 1))], axis=1)
    x, y = a[:, [0, 2]], a[:, [1, 2]]
    xp, yp = b[:, [0, 2]], b[:, [1, 2]]
    r = np.einsum("ijkl,ni,nj,nk,nl->n", F, x, y, xp, yp)
    scale = np.linalg.norm(F) * np.prod([np.linalg.norm(v, axis=1) for v in (x, y, xp, yp)],
                                        axis=0)
    return np.abs(r) / scale


@covers("computeEpipolarTensor", "computeCorrespondEpilines")
@given(two_views(5, 20))
def test_epipolar_tensor_of_two_cameras_holds_on_their_matches(views):
    cam1, cam2, _, p1, p2 = views
    F = xslit.computeEpipolarTensor(cam1, cam2)
    _nan_free(F)
    assert np.max(_epipolar_residual(F, p1, p2)) < TENSOR_RESIDUAL_RTOL
    curves = xslit.computeCorrespondEpilines(p1, 1, F)
    _nan_free(curves)
    d = curve_distance(curves, p2)
    # First-order distance: infinite where the curve's gradient vanishes at the point.
    d = d[np.isfinite(d)]
    assert np.all(d < PROPERTY_CURVE_DISTANCE * (1 + np.abs(p2).max()))


@covers("computeEpipolarTensor")
@given(st.sampled_from([None, "cam", np.zeros((2, 4)), 1.0]), st.booleans())
def test_epipolar_tensor_refuses_non_cameras(bad, first):
    cam = xslit.TwoSlitCamera([[1.0, 0, 0, 0], [0, 0, 1, 0]], [[0.0, 2, 0, 0], [0, 0, 1, 1]])
    with raises_named("camera1" if first else "camera2"):
        xslit.computeEpipolarTensor(*((bad, cam) if first else (cam, bad)))


@covers("computeCorrespondEpilines")
@given(S.malformed_arrays((4, 2), allow_empty=True))
def test_epilines_refuse_malformed_points(bad):
    F = np.zeros((2, 2, 2, 2))
    F[0, 1, 1, 0] = 1.0
    with raises_named("points"):
        xslit.computeCorrespondEpilines(bad, 1, F)


@covers("computeCorrespondEpilines")
@given(st.sampled_from([0, 3, True, None, "1", 1.5]))
def test_epilines_refuse_a_bad_image_index(which):
    F = np.zeros((2, 2, 2, 2))
    F[0, 1, 1, 0] = 1.0
    with raises_named("whichImage"):
        xslit.computeCorrespondEpilines(np.ones((3, 2)), which, F)


@covers("findEpipolarTensor", "FM_LINEAR", "UsacParams")
@given(two_views(20, 30))
def test_estimated_tensor_holds_on_noise_free_matches(views):
    _cam1, _cam2, _, p1, p2 = views
    F, mask = xslit.findEpipolarTensor(p1, p2, xslit.FM_LINEAR)
    assert mask.shape == (len(p1), 1) and mask.dtype == np.uint8
    if F is not None:  # a degenerate draw is reported as None with its reason logged
        _nan_free(F)
        assert np.median(_epipolar_residual(F, p1, p2)) < PROPERTY_NOISE_FREE
    params = xslit.UsacParams()
    params.maxIterations = 50
    _F2, mask2 = xslit.findEpipolarTensor(p1, p2, params)
    assert mask2.shape == (len(p1), 1)


@covers("findEpipolarTensor", "UsacParams")
@given(S.malformed_arrays((20, 2)), st.sampled_from(["points1", "points2"]))
def test_find_tensor_refuses_malformed_points(bad, which):
    good = np.random.default_rng(0).uniform(0, 100, (20, 2))
    args = (bad, good) if which == "points1" else (good, bad)
    with pytest.raises(ValueError, match=rf"^({which}|points1 and points2) "):
        xslit.findEpipolarTensor(*args)
    params = xslit.UsacParams()
    with pytest.raises(ValueError, match=r"^UsacParams has no parameter"):
        params.treshold = 1.0


@covers("findEpipolarTensor")
@given(S.malformed_scalars(allow_zero=False, allow_negative=False))
def test_find_tensor_refuses_a_malformed_threshold(bad):
    p = np.random.default_rng(0).uniform(0, 100, (20, 2))
    with raises_named("ransacReprojThreshold"):
        xslit.findEpipolarTensor(p, p + 1, xslit.FM_RANSAC, bad)


@covers("triangulateTwoSlitPoints")
@given(two_views(3, 10))
def test_triangulation_recovers_the_points(views):
    cam1, cam2, X, p1, p2 = views
    X4 = xslit.triangulateTwoSlitPoints([cam1, cam2], [p1, p2])
    _nan_free(X4)
    Xe = (X4[:3] / X4[3]).T
    assert rel_err(Xe, X) < PROPERTY_SOLVER_RTOL


@covers("triangulateTwoSlitPoints")
@given(S.malformed_arrays((4, 2)))
def test_triangulation_refuses_malformed_points(bad):
    cam = xslit.TwoSlitCamera([[1.0, 0, 0, 0], [0, 0, 1, 0]], [[0.0, 2, 0, 0], [0, 0, 1, 1]])
    with pytest.raises(ValueError, match=r"^points"):
        xslit.triangulateTwoSlitPoints([cam, cam], [np.ones((4, 2)), bad])


@covers("recoverTwoSlitPose")
@given(S.malformed_arrays((2, 2, 2, 2)))
def test_recover_pose_refuses_a_malformed_tensor(bad):
    p = np.random.default_rng(0).uniform(0, 100, (20, 2))
    with raises_named("F"):
        xslit.recoverTwoSlitPose(bad, p, p + 1)


@covers("recoverTwoSlitPose")
@given(S.malformed_arrays((20, 2)), st.sampled_from(["points1", "points2"]))
def test_recover_pose_refuses_malformed_points(bad, which):
    F = np.zeros((2, 2, 2, 2))
    F[0, 1, 1, 0] = 1.0
    good = np.random.default_rng(0).uniform(0, 100, (20, 2))
    args = (bad, good) if which == "points1" else (good, bad)
    with pytest.raises(ValueError, match=rf"^({which}|points1 and points2) "):
        xslit.recoverTwoSlitPose(F, *args)


# Noise-free recovery against the truth: the generators' data are exact, so a pose or an
# intrinsic matrix that is returned must match to rounding; anything else is reported as a
# failure whose reason names what the data do not determine.

#: Rotation entries, translation and points (relative to the scene's size) of a noise-free pose.
POSE_TOL = 1e-6
#: Self-calibrated magnifications and slit angle (relative) and principal point (in units of
#: the magnification), noise-free.
SELFCAL_TOL = 1e-6
#: Words of the reasons that the pose and self-calibration give for data that do not determine
#: them (xslit.sfm.calibrated_two_view, xslit.sfm.self_calibrate_two_slit).
DEGENERACY_WORDS = ("collinear", "coplanar", "rank", "do not determine", "standard deviation",
                    "another basin", "too few equations", "parallel", "degenerate")


def _names_a_degeneracy(reason: str) -> bool:
    return any(word in reason for word in DEGENERACY_WORDS)


def _fewer_examples(k: int):
    """The profile's number of examples divided by ``k`` (at least 2): for properties whose
    every example costs about a second (the calibrated pose searches grids of starts)."""
    return settings(max_examples=max(2, settings().max_examples // k))


def _calibrated_pose(F, p1, p2, i1, i2, threshold=1.5):
    """``(R, t, X)`` of calibrated recoverTwoSlitPose, or the reason of its failure."""
    try:
        ret, R, t, mask, X4 = xslit.recoverTwoSlitPose(F, p1, p2, i1, i2,
                                                       reprojThreshold=threshold)
    except ValueError as exc:
        assert str(exc).startswith("recoverTwoSlitPose: the pose is "), str(exc)
        assert _names_a_degeneracy(str(exc)), str(exc)
        event("calibrated pose: a named failure")
        return str(exc)
    event("calibrated pose: returned")
    _nan_free(R, t, X4)
    assert ret == len(p1) and mask.shape == (len(p1), 1) and mask.all()
    return R, t.ravel(), (X4[:3] / X4[3]).T


def _true_pose(scene):
    from xslit.geometry.projective import matrix_from_rvec

    return matrix_from_rvec(scene["rvec"]), scene["tvec"]


@covers("recoverTwoSlitPose", "computeEpipolarTensor")
@_fewer_examples(5)
@given(S.two_view_scenes(20, 40), st.integers(0, 3).map(lambda k: k == 0))
def test_calibrated_pose_is_the_truth_or_a_named_degeneracy(scene, collinear):
    """Noise-free correspondences of the generator's rigs give the true pose and points;
    points on one line (which cannot determine a pose) give a failure naming the degeneracy."""
    cam1, cam2, X = scene["camera1"], scene["camera2"], scene["X"]
    if collinear:
        X = X[0] + np.linspace(-1.0, 1.0, len(X))[:, None] * (X[1] - X[0])
    p1, p2 = cam1.project(X), cam2.project(X)
    F = xslit.computeEpipolarTensor(cam1, cam2)
    out = _calibrated_pose(F, p1, p2, scene["intrinsics1"], scene["intrinsics2"])
    if collinear:
        assert isinstance(out, str), "points on a line gave a pose"
        return
    assert not isinstance(out, str), out  # the generator's rigs determine their pose
    R, t, Xr = out
    R_true, t_true = _true_pose(scene)
    assert np.abs(R - R_true).max() < POSE_TOL
    assert np.abs(t - t_true).max() < POSE_TOL * np.linalg.norm(t_true)
    assert rel_err(Xr, X) < POSE_TOL


@covers("recoverTwoSlitPose", "computeEpipolarTensor")
@_fewer_examples(10)
@given(S.two_view_scenes(20, 40))
def test_swapping_the_views_gives_the_inverse_pose(scene):
    """Camera 2 seen from camera 1 (R, t) and camera 1 from camera 2 (R^T, -R^T t): the
    tensor of the swapped pair is the transposed tensor, and the poses are inverse."""
    from xslit.testing import projective_distance

    cam1, cam2 = scene["camera1"], scene["camera2"]
    p1, p2 = scene["points1"], scene["points2"]
    F = xslit.computeEpipolarTensor(cam1, cam2)
    assert projective_distance(xslit.computeEpipolarTensor(cam2, cam1),
                               F.transpose(2, 3, 0, 1)) < EXACT
    forward = _calibrated_pose(F, p1, p2, scene["intrinsics1"], scene["intrinsics2"])
    backward = _calibrated_pose(F.transpose(2, 3, 0, 1), p2, p1, scene["intrinsics2"],
                                scene["intrinsics1"])
    assert not isinstance(forward, str), forward
    assert not isinstance(backward, str), backward
    (R, t, _), (Rb, tb, Xb) = forward, backward
    assert np.abs(Rb - R.T).max() < POSE_TOL
    assert np.abs(tb + R.T @ t).max() < POSE_TOL * np.linalg.norm(t)
    X2 = scene["X"] @ R.T + t  # the points in camera 2's frame
    assert rel_err(Xb, X2) < POSE_TOL


@covers("recoverTwoSlitPose", "composeTwoSlitProjection")
@_fewer_examples(10)
@given(S.two_view_scenes(20, 40, kinds=("two_slit",)), S.floats(0.05, 20.0))
def test_scaling_pixels_with_the_intrinsics_keeps_the_pose(scene, s):
    """Pixels ``s x`` with magnifications and principal points times ``s`` (and the threshold
    times ``s``) are the same rig: the same pose, to rounding."""
    def scaled(intr):
        return xslit.TwoSlitIntrinsics.from_parameters(s * intr.fu, s * intr.fv, s * intr.u0,
                                                       s * intr.v0, intr.theta, intr.d)

    i1, i2 = scaled(scene["intrinsics1"]), scaled(scene["intrinsics2"])
    cam1 = xslit.composeTwoSlitProjection(i1, np.zeros(3), np.zeros(3))
    cam2 = xslit.composeTwoSlitProjection(i2, scene["rvec"], scene["tvec"])
    p1, p2 = cam1.project(scene["X"]), cam2.project(scene["X"])
    # The scaled rig is the scaled pixels.
    assert rel_err(p1, s * scene["points1"]) < PROJECTION_RTOL
    assert rel_err(p2, s * scene["points2"]) < PROJECTION_RTOL
    F = xslit.computeEpipolarTensor(scene["camera1"], scene["camera2"])
    base = _calibrated_pose(F, scene["points1"], scene["points2"], scene["intrinsics1"],
                            scene["intrinsics2"])
    again = _calibrated_pose(xslit.computeEpipolarTensor(cam1, cam2), p1, p2, i1, i2,
                             threshold=1.5 * s)
    assert not isinstance(base, str), base
    assert not isinstance(again, str), again
    assert np.abs(again[0] - base[0]).max() < POSE_TOL
    assert np.abs(again[1] - base[1]).max() < POSE_TOL * np.linalg.norm(base[1])


@covers("recoverTwoSlitPose", "computeEpipolarTensor")
@given(S.two_view_scenes(15, 40))
def test_uncalibrated_configurations_explain_the_tensor_and_every_match(scene):
    """Both projective configurations have the given tensor (up to scale) and reproject every
    noise-free correspondence; the swapped views give configurations of the transposed
    tensor."""
    from xslit.testing import projective_distance

    p1, p2 = scene["points1"], scene["points2"]
    F = xslit.computeEpipolarTensor(scene["camera1"], scene["camera2"])
    for G, q1, q2 in ((F, p1, p2), (F.transpose(2, 3, 0, 1), p2, p1)):
        ret, configurations, mask = xslit.recoverTwoSlitPose(G, q1, q2)
        assert ret == len(q1) and mask.all() and len(configurations) == 2
        for c1, c2, X4 in configurations:
            _nan_free(X4)
            assert projective_distance(xslit.computeEpipolarTensor(c1, c2), G) < POSE_TOL
            X = (X4[:3] / X4[3]).T
            assert rel_err(c1.project(X), q1) < POSE_TOL
            assert rel_err(c2.project(X), q2) < POSE_TOL

# -- resection, calibration, self-calibration --------------------------------------------------

@covers("solveTwoSlitPnP", "SOLVEPNP_ITERATIVE", "SOLVEPNP_LINEAR")
@given(S.posed_scenes(12, 30, pushbroom=False), st.sampled_from(["ITERATIVE", "LINEAR"]))
def test_pnp_recovers_the_pose(scene, flag):
    intr, _rvec, _tvec, cam, X = scene
    px = cam.project(X)
    ok, r, t = xslit.solveTwoSlitPnP(X, px, intr, flags=getattr(xslit, f"SOLVEPNP_{flag}"))
    if ok:  # failures are reported with a reason; a returned pose must be right
        again = xslit.composeTwoSlitProjection(intr, r, t)
        assert rel_err(again.project(X), px) < PROPERTY_SOLVER_RTOL


@covers("solveTwoSlitPnPRansac")
@given(S.posed_scenes(15, 30, pushbroom=False))
def test_pnp_ransac_recovers_the_pose(scene):
    intr, _rvec, _tvec, cam, X = scene
    px = cam.project(X)
    ok, r, t, inliers = xslit.solveTwoSlitPnPRansac(X, px, intr, iterationsCount=50, rng=0)
    if ok:
        assert inliers.ndim == 2 and inliers.shape[1] == 1
        again = xslit.composeTwoSlitProjection(intr, r, t)
        assert rel_err(again.project(X), px) < PROPERTY_SOLVER_RTOL


@covers("solveTwoSlitPnP", "solveTwoSlitPnPRansac")
@given(st.sampled_from(["objectPoints", "imagePoints"]), st.data())
def test_pnp_refuses_malformed_points(which, data):
    intr = xslit.TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, 1.4, 1.5)
    X = np.random.default_rng(0).uniform(-1, 1, (12, 3)) + np.array([0.0, 0, 5])
    px = np.random.default_rng(1).uniform(0, 600, (12, 2))
    bad = data.draw(S.malformed_arrays((12, 3) if which == "objectPoints" else (12, 2)))
    args = (bad, px) if which == "objectPoints" else (X, bad)
    for f in (xslit.solveTwoSlitPnP, xslit.solveTwoSlitPnPRansac):
        with pytest.raises(ValueError, match=rf"^(objectPoints and )?{which} "):
            f(*args, intr)


@covers("calibrateTwoSlit", "calibrateTwoSlitExtended", "CALIB_FIX_D",
        "CALIB_FIX_FOCAL_LENGTH", "CALIB_FIX_PRINCIPAL_POINT", "CALIB_FIX_THETA",
        "CALIB_PARALLEL", "CALIB_PUSHBROOM", "CALIB_USE_INTRINSIC_GUESS")
@given(st.sampled_from(["objectPoints", "imagePoints"]), st.data())
def test_calibration_refuses_malformed_views(which, data):
    X = np.random.default_rng(0).uniform(-1, 1, (20, 3))
    px = np.random.default_rng(1).uniform(0, 600, (20, 2))
    bad = data.draw(S.malformed_arrays((20, 3) if which == "objectPoints" else (20, 2)))
    obj = [X, X, bad] if which == "objectPoints" else [X, X, X]
    img = [px, px, px] if which == "objectPoints" else [px, px, bad]
    for f in (xslit.calibrateTwoSlit, xslit.calibrateTwoSlitExtended):
        with pytest.raises(ValueError, match=rf"^(objectPoints\[2\] and )?{which}"):
            f(obj, img, (640, 480))
    flags = [xslit.CALIB_FIX_D, xslit.CALIB_FIX_FOCAL_LENGTH, xslit.CALIB_FIX_PRINCIPAL_POINT,
             xslit.CALIB_FIX_THETA, xslit.CALIB_PARALLEL, xslit.CALIB_PUSHBROOM,
             xslit.CALIB_USE_INTRINSIC_GUESS]
    assert len(set(flags)) == len(flags)


def test_calibration_recovers_a_two_slit_camera():
    """The valid-input property of calibration, on one known target (a generated one costs
    seconds per example)."""
    intr = xslit.TwoSlitIntrinsics.from_parameters(800, 400, 320, 240, 1.3, 0.8)
    rng = np.random.default_rng(3)
    grid = np.stack(np.meshgrid(np.linspace(-1, 1, 6), np.linspace(-1, 1, 5)), -1).reshape(-1, 2)
    obj, img = [], []
    for _ in range(4):
        rvec, tvec = rng.normal(scale=0.3, size=3), np.array([0, 0, 6.0]) + rng.normal(size=3)
        X = np.column_stack([grid, 0.3 * rng.uniform(size=len(grid))])
        obj.append(X)
        img.append(xslit.composeTwoSlitProjection(intr, rvec, tvec).project(X))
    rms, est, _rvecs, _tvecs = xslit.calibrateTwoSlit(obj, img, (640, 480))
    assert np.isfinite(rms) and rms < PROPERTY_CALIBRATION_PX
    assert abs(est.fu - intr.fu) < PROPERTY_CALIBRATION_RTOL * intr.fu


@covers("selfCalibrateTwoSlit", "SELFCALIB_FIX_THETA", "SELFCALIB_USE_LINEAR",
        "SELFCALIB_ZERO_PRINCIPAL_POINT")
@given(st.sampled_from([None, "cams", [], [1, 2, 3], np.zeros((3, 2, 4)),
                        np.zeros((3, 2, 2, 4), bool)]))
def test_self_calibration_refuses_malformed_cameras(bad):
    with raises_named("cameras"):
        xslit.selfCalibrateTwoSlit(bad)
    flags = [xslit.SELFCALIB_FIX_THETA, xslit.SELFCALIB_USE_LINEAR,
             xslit.SELFCALIB_ZERO_PRINCIPAL_POINT]
    assert len(set(flags)) == 3


def _self_calibrated(cameras, points=None):
    """The intrinsics ``(n, 6)`` (fu, fv, u0, v0, theta, d) of the upgraded cameras and the
    upgraded points, or the reason of the failure (from the plain function)."""
    from xslit.sfm.autocalibration import self_calibrate_two_slit

    ok, Q, upgraded, X = xslit.selfCalibrateTwoSlit(list(cameras), points)
    if not ok:
        res = self_calibrate_two_slit(cameras, points)
        assert not res.ok and _names_a_degeneracy(res.reason), res.reason
        event("self-calibration: a named failure")
        return res.reason
    event("self-calibration: upgraded")
    _nan_free(Q)
    assert len(upgraded) == len(cameras)
    intr = [xslit.decomposeTwoSlitProjection(c).intrinsics for c in upgraded]
    return np.array([[i.fu, i.fv, i.u0, i.v0, i.theta, i.d] for i in intr]), X


def _pairwise_distances(X):
    i, j = np.triu_indices(len(X), 1)
    return np.linalg.norm(X[i] - X[j], axis=1)


@covers("selfCalibrateTwoSlit", "decomposeTwoSlitProjection")
@given(S.projective_two_slit_scenes(1, 6, motions=("general", "translation")))
def test_self_calibration_is_the_truth_or_a_named_degeneracy(scene):
    """Noise-free projective cameras give the true magnifications, zero principal points and
    slit angles, and the slit distances and points of one similarity (a common scale); fewer
    than three cameras or a pure translation fail with a reason naming the degeneracy."""
    out = _self_calibrated(scene.cameras, scene.points)
    n = len(scene.cameras)
    degenerate = n < 3 or np.ptp(scene.rvecs, axis=0).max() == 0
    if degenerate:
        assert isinstance(out, str), "a degenerate reconstruction was upgraded"
        return
    assert not isinstance(out, str), out  # three or more cameras in general motion
    est, X = out
    true = np.array([[i.fu, i.fv, i.u0, i.v0, i.theta, i.d] for i in scene.intrinsics])
    assert rel_err(est[:, :2] / true[:, :2], 1.0) < SELFCAL_TOL
    assert np.abs(est[:, 2:4]).max() < SELFCAL_TOL * true[:, :2].min()
    assert np.abs(est[:, 4] - true[:, 4]).max() < SELFCAL_TOL
    scale = est[:, 5] / true[:, 5]  # a similarity frame has its own unit of length
    assert np.ptp(scale) < SELFCAL_TOL * abs(scale[0]) and scale[0] > 0
    ratio = _pairwise_distances(X) / _pairwise_distances(scene.points_euclidean)
    assert np.abs(ratio / scale[0] - 1).max() < SELFCAL_TOL


@covers("selfCalibrateTwoSlit")
@given(S.projective_two_slit_scenes(3, 6), st.data())
def test_self_calibration_follows_pixel_scale_frame_and_order(scene, data):
    """Each camera's pixels times ``s_i`` (its first rows times ``s_i``) scale its
    magnifications by ``s_i``; another projective frame and another order of the cameras
    change nothing else."""
    n = len(scene.cameras)
    s = np.array(data.draw(st.lists(S.floats(0.1, 10.0), min_size=n, max_size=n)))
    order = np.array(data.draw(st.permutations(range(n))))
    H = np.random.default_rng(data.draw(S.seeds())).normal(size=(4, 4))
    assume(np.linalg.cond(H) < 100)
    base = _self_calibrated(scene.cameras)
    A = scene.cameras.copy()
    A[:, :, 0, :] *= s[:, None, None]
    A = (A @ H)[order]
    again = _self_calibrated(A)
    assert not isinstance(base, str), base
    assert not isinstance(again, str), again
    expected = base[0].copy()
    expected[:, :4] *= s[:, None]
    expected = expected[order]
    est = again[0]
    assert rel_err(est[:, :2] / expected[:, :2], 1.0) < SELFCAL_TOL
    assert np.abs(est[:, 2:4]).max() < SELFCAL_TOL * expected[:, :2].min()
    assert np.abs(est[:, 4] - expected[:, 4]).max() < SELFCAL_TOL
    ratio = est[:, 5] / expected[:, 5]
    assert np.ptp(ratio) < SELFCAL_TOL * abs(ratio[0])


# -- features and drawing ----------------------------------------------------------------------

def _texture(seed, shape=(120, 160)):
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, (shape[0] // 8, shape[1] // 8, 3), dtype=np.uint8)
    return np.kron(small, np.ones((8, 8, 1), np.uint8))


@covers("matchFeatures", "matchFeaturesExtended")
@given(st.integers(0, 2 ** 16), st.integers(-6, 6), st.integers(-6, 6))
def test_matches_of_a_shifted_image_are_the_shift(seed, dx, dy):
    img = _texture(seed)
    shifted = np.roll(img, (dy, dx), axis=(0, 1))
    p1, p2 = xslit.matchFeatures(img, shifted)
    _nan_free(p1, p2)
    assert p1.shape == p2.shape and p1.shape[1:] == (2,)
    inside = ((p1[:, 0] > 12) & (p1[:, 0] < 148) & (p1[:, 1] > 12) & (p1[:, 1] < 108))
    if inside.sum() >= 5:
        assert np.median(np.abs(p2[inside] - p1[inside] - [dx, dy])) < PROPERTY_SHIFT_MATCH_PX
    m = xslit.matchFeaturesExtended(img, shifted)
    assert len(m.points1) == len(p1)


@covers("matchFeatures", "matchFeaturesExtended", "drawMatchesMask", "drawEpipolarCurves")
@given(S.malformed_arrays((40, 50, 3)), st.sampled_from([0, 1]))
def test_image_arguments_are_named(bad, which):
    img = _texture(0)
    pts = np.ones((3, 2))
    pair = (bad, img) if which == 0 else (img, bad)
    name = f"image{which + 1}"
    if isinstance(bad, np.ndarray) and bad.dtype.kind in "fiu" and bad.ndim == 3 \
            and np.isfinite(bad).all():
        return  # a differently sized image is still an image
    for f in (xslit.matchFeatures, xslit.matchFeaturesExtended):
        with raises_named(name):
            f(*pair)
    with raises_named(name):
        xslit.drawMatchesMask(pair[0], pts, pair[1], pts)
    with raises_named("image"):
        xslit.drawEpipolarCurves(bad, np.ones((2, 4)))


@covers("drawMatchesMask", "drawEpipolarCurves")
@given(st.integers(1, 20), st.integers(0, 2 ** 16))
def test_drawings_have_the_images_shape(n, seed):
    rng = np.random.default_rng(seed)
    a, b = _texture(1), _texture(2, (80, 120))
    p1, p2 = rng.uniform(0, 100, (n, 2)), rng.uniform(0, 70, (n, 2))
    pic = xslit.drawMatchesMask(a, p1, b, p2, mask=rng.integers(0, 2, n))
    assert pic.shape == (120, 160 + 120, 3) and pic.dtype == np.uint8
    curves = rng.normal(size=(n, 4))
    out = xslit.drawEpipolarCurves(a, curves, p1)
    assert out.shape == a.shape and out.dtype == np.uint8


# -- rendering ---------------------------------------------------------------------------------

_TRIANGLE = ([[-1, -1, 2], [1, -1, 2], [0, 1, 2]], [[0, 1, 2]])


@covers("Scene", "renderImage", "correspondences_between")
@pytest.mark.render
@given(S.floats(0, 1), st.integers(4, 24), st.integers(4, 24))
def test_render_of_a_triangle_is_finite_where_it_hits(ambient, w, h):
    scene = xslit.Scene.from_arrays(*_TRIANGLE)
    cam = xslit.PinholeCamera.from_intrinsics([[w, 0, w / 2], [0, h, h / 2], [0, 0, 1]])
    r = xslit.renderImage(scene, cam, (w, h), nthreads=1, ambient=ambient)
    assert r["image"].shape == (h, w, 3)
    _nan_free(r["depth"][r["mask"]], r["points"][r["mask"]])
    assert np.allclose(r["points"][r["mask"]][:, 2], 2.0)
    cam2 = xslit.PinholeCamera.from_intrinsics([[w, 0, w / 2], [0, h, h / 2], [0, 0, 1]],
                                               tvec=[0.1, 0, 0])
    r2 = xslit.renderImage(scene, cam2, (w, h), nthreads=1)
    c = xslit.correspondences_between(r, r2)
    _nan_free(c.points1, c.points2, c.X)


@covers("renderImage")
@pytest.mark.render
@given(st.sampled_from(["ambient", "imageSize", "supersample", "background"]),
       st.sampled_from([None, "x", np.nan, -1, 2.5, True, (50000, 50000), (10 ** 9, 10 ** 9),
                        (0, 5), [1, 2, 3]]))
def test_render_refuses_malformed_arguments(name, bad):
    scene = xslit.Scene.from_arrays(*_TRIANGLE)
    cam = xslit.PinholeCamera.from_intrinsics([[8, 0, 4], [0, 8, 4], [0, 0, 1]])
    kwargs = {"imageSize": (8, 8), "supersample": 1, "ambient": 0.3, "background": (0, 0, 0),
              name: bad}
    if name == "background" and bad == [1, 2, 3]:
        return  # a valid RGB triple
    imageSize = kwargs.pop("imageSize")
    with raises_named(name):
        xslit.renderImage(scene, cam, imageSize, nthreads=1, **kwargs)


@covers("Scene")
@given(st.sampled_from(["vertices", "triangles"]), st.data())
def test_scene_refuses_malformed_arrays(name, data):
    vertices, triangles = np.array(_TRIANGLE[0], float), np.array(_TRIANGLE[1])
    bad = data.draw(S.malformed_arrays(vertices.shape if name == "vertices" else (1, 3))
                    | st.just([[0, 1, 2.5]] if name == "triangles" else [[1e39, 0, 0]] * 3))
    if isinstance(bad, np.ndarray) and bad.dtype == float and bad.ndim == 2 and \
            bad.shape[1] == 3 and len(bad) >= 3 and np.isfinite(bad).all():
        return  # more vertices than the triangle uses: a valid mesh
    args = {"vertices": vertices, "triangles": triangles, name: bad}
    with raises_named(name):
        xslit.Scene.from_arrays(args["vertices"], args["triangles"])


@covers("make_room_scene", "make_terrain_scene", "make_calibration_target")
@given(st.sampled_from([
    ("make_room_scene", "size", (np.nan, 12, 4)), ("make_room_scene", "size", (1e6, 1e6, 1e6)),
    ("make_room_scene", "size", (12, 12)), ("make_room_scene", "size", None),
    ("make_room_scene", "n_objects", -1), ("make_room_scene", "texels_per_unit", None),
    ("make_terrain_scene", "n_triangles", 10 ** 12), ("make_terrain_scene", "n_triangles", 2.5),
    ("make_terrain_scene", "extent", np.nan), ("make_terrain_scene", "relief", None),
    ("make_terrain_scene", "sea_level", 1.0), ("make_terrain_scene", "texture_size", 10 ** 6),
    ("make_calibration_target", "square_size", None),
    ("make_calibration_target", "square_px", 10 ** 6),
    ("make_calibration_target", "planes", 7), ("make_calibration_target", "squares", (2.5, 3)),
    ("make_room_scene", "rng", "seed")]))
def test_scene_makers_name_their_arguments(case):
    fn, name, bad = case
    with raises_named(name):
        getattr(xslit, fn)(**{name: bad})


@covers("make_terrain_scene", "make_calibration_target", "make_room_scene")
@given(st.integers(0, 2 ** 16))
def test_scene_makers_give_finite_meshes(seed):
    for scene in (xslit.make_terrain_scene(seed, n_triangles=200, texture_size=32),
                  xslit.make_calibration_target(seed, squares=(3, 3), square_px=8)):
        _nan_free(scene.vertices)
        assert scene.triangles.max() < len(scene.vertices)


# -- datasets ----------------------------------------------------------------------------------

def _tiny_dataset(root: Path, X=None, points=None):
    from xslit.io import Correspondences, Dataset, View, write_dataset

    K = np.array([[30.0, 0, 12], [0, 30, 8], [0, 0, 1]])
    cams = [xslit.PinholeCamera.from_intrinsics(K, tvec=[t, 0, 4.0]) for t in (0.0, 0.2)]
    views = [View(f"v{k}", c, np.zeros((16, 24, 3), np.uint8), points, K,
                  {"rvec": np.zeros(3), "tvec": np.array([t, 0, 4.0])}, {})
             for k, (c, t) in enumerate(zip(cams, (0.0, 0.2), strict=True))]
    if X is None:
        X = np.random.default_rng(0).uniform(-0.5, 0.5, (10, 3))
    pairs = [Correspondences("v0", "v1", cams[0].project(X), cams[1].project(X), X)]
    write_dataset(root, Dataset(views, pairs, {}, None), progress=False)
    return root


@covers("load_dataset", "verify_dataset")
@given(st.integers(0, 2 ** 16))
def test_dataset_round_trip_verifies(seed):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        X = np.random.default_rng(seed).uniform(-0.5, 0.5, (8, 3))
        root = _tiny_dataset(Path(tmp) / "ds", X)
        ds = xslit.load_dataset(root)
        np.testing.assert_allclose(ds.correspondences[0].X, X)
        report = xslit.verify_dataset(root)
        assert np.isfinite(report["max_pair_reprojection_px"])


@covers("load_dataset", "verify_dataset")
@given(st.sampled_from([None, 3, b"", "", ["a"]]))
def test_dataset_paths_are_named(bad):
    for f in (xslit.load_dataset, xslit.verify_dataset):
        with raises_named("path"):
            f(bad)


@covers("verify_dataset")
@given(S.malformed_scalars(allow_zero=False, allow_negative=False))
def test_verify_dataset_refuses_a_malformed_tolerance(bad):
    with raises_named("reprojection_tol"):
        xslit.verify_dataset("anywhere", reprojection_tol=bad)


# -- the inventory -----------------------------------------------------------------------------

_FLAGS_COVERED_BY_USE = {
    "FM_13POINT", "FM_LMEDS", "FM_RANSAC", "LOCAL_OPTIM_INNER_LO", "LOCAL_OPTIM_NULL",
    "LSQ_POLISHER", "NONE_POLISHER", "SAMPLING_JOINT_DENSITY", "SAMPLING_PROSAC",
    "SAMPLING_UNIFORM", "SCORE_METHOD_LMEDS", "SCORE_METHOD_MSAC", "SCORE_METHOD_RANSAC",
    "USAC_ACCURATE", "USAC_DEFAULT"}


@covers(*_FLAGS_COVERED_BY_USE)
@given(st.sampled_from(sorted(_FLAGS_COVERED_BY_USE)))
def test_robust_flags_are_accepted_by_name(flag):
    value = getattr(xslit, flag)
    assert isinstance(value, int) and not isinstance(value, bool)
    p = np.random.default_rng(0).uniform(0, 100, (30, 2))
    params = xslit.UsacParams()
    if flag.startswith(("FM_", "USAC_")):
        q = p[:13] if flag == "FM_13POINT" else p
        _F, mask = xslit.findEpipolarTensor(q, q + 1, value, maxIters=20)
        assert mask.shape == (len(q), 1)
        return
    field = {"LOCAL": "loMethod", "LSQ": "final_polisher", "NONE": "final_polisher",
             "SAMPLING": "sampler", "SCORE": "score"}[flag.split("_")[0]]
    setattr(params, field, value)
    params.maxIterations = 20
    _F, mask = xslit.findEpipolarTensor(p, p + 1, params)
    assert mask.shape == (30, 1)


# -- lower-level entry points: xslit.epipolar, xslit.sfm, xslit.robust -------------------------

import functools  # noqa: E402

import xslit.epipolar as XE  # noqa: E402
import xslit.robust as XR  # noqa: E402
import xslit.sfm as XS  # noqa: E402

#: Public names of the subpackages that a property below exercises.
COVERED_LOWER: set[str] = set()
#: Public names of the subpackages without input of their own to validate: constants, result
#: records, and the protocols a caller implements.
NO_INPUT = {
    "epipolar": {"MIN_LINEAR_POINTS"},
    "sfm": {"CalibratedPose", "CalibratedTwoView", "MetricFit", "ProjectiveRefinement",
            "RobustMetricFit"},
    "robust": {"LMEDS", "MSAC", "PROSAC", "RANSAC", "UNIFORM", "RobustResult", "RobustProblem",
               "RobustProblemBase", "Sampler"},
}


def covers_lower(*names):
    """Record that the decorated property exercises ``names`` of the subpackages."""
    COVERED_LOWER.update(names)
    return lambda f: f


class _Mean(XR.RobustProblemBase):
    """A one-point robust problem: the location of 1D data (model: a (1,) array)."""

    sample_size = 1

    def __init__(self, data):
        self.data = np.asarray(data, float)
        self.n_points = len(self.data)

    def fit_samples(self, samples, near=None):
        return self.data[samples[:, 0]][:, None], np.arange(len(samples))

    def residuals(self, models, subset=None):
        d = self.data if subset is None else self.data[subset]
        return np.abs(np.asarray(models, float).reshape(-1, 1) - d[None, :])

    def refit(self, model, inliers, threshold, final=True):
        return np.array([self.data[inliers].mean()]) if inliers.any() else None

    def chance_residuals(self, model, rng, draws):
        return np.abs(rng.uniform(-100, 100, draws) - float(np.ravel(model)[0]))


def _mean_problem(seed=0, n=60, outliers=20):
    rng = np.random.default_rng(seed)
    data = np.r_[rng.normal(3.0, 0.1, n - outliers), rng.uniform(-100, 100, outliers)]
    return _Mean(data)


@functools.lru_cache(maxsize=1)
def _valid():
    """Valid arguments of the lower-level functions, from one noise-free rig."""
    from xslit.synthetic import random_two_view_scene

    s = random_two_view_scene(0, n=30)
    c1, c2 = s["camera1"], s["camera2"]
    return dict(scene=s, c1=c1, c2=c2, p1=s["points1"], p2=s["points2"],
                F=xslit.computeEpipolarTensor(c1, c2),
                C=XE.matrix_from_cameras(c1.A1, c1.A2, c2.A1, c2.A2),
                X4=np.c_[s["X"], np.ones(30)])


def _calls():
    """``name -> (function, valid keyword arguments)`` of every validated lower-level function."""
    v = _valid()
    c1, c2, p1, p2, F, C = v["c1"], v["c2"], v["p1"], v["p2"], v["F"], v["C"]
    s = v["scene"]
    i1, i2 = s["intrinsics1"], s["intrinsics2"]
    cams = dict(A1=c1.A1, A2=c1.A2, B1=c2.A1, B2=c2.A2)
    pts = dict(points1=p1, points2=p2)
    rng = np.random.default_rng(0)
    return {
        "epipolar_tensor": (XE.epipolar_tensor, cams),
        "evaluate_tensor": (XE.evaluate_tensor, dict(F=F, **pts)),
        "sampson_distance": (XE.sampson_distance, dict(F=F, **pts)),
        "sampson_distance_pairs": (XE.sampson_distance_pairs, dict(F=F, **pts)),
        "tensor_gradient": (XE.tensor_gradient, dict(F=F, **pts)),
        "design_matrix": (XE.design_matrix, pts),
        "contract_modes": (XE.contract_modes, dict(F=F, T1=np.eye(2), T2=np.eye(2),
                                                   T3=np.eye(2), T4=np.eye(2))),
        "axis_normalization": (XE.axis_normalization, dict(values=p1[:, 0])),
        "solve_linear": (XE.solve_linear, dict(**pts, weights=np.ones(30))),
        "solve_linear_batch": (XE.solve_linear_batch, dict(points1=p1[None, :15],
                                                           points2=p2[None, :15])),
        "matrix_from_cameras": (XE.matrix_from_cameras, cams),
        "cameras_from_matrix": (XE.cameras_from_matrix, dict(C=C)),
        "principal_minor_tensor": (XE.principal_minor_tensor, dict(C=C)),
        "principal_minor_jacobian": (XE.principal_minor_jacobian, dict(C=C)),
        "normalize_matrix_gauge": (XE.normalize_matrix_gauge, dict(C=C)),
        "balance_matrix": (XE.balance_matrix, dict(C=C)),
        "candidate_matrices": (XE.candidate_matrices, dict(F=F)),
        "recover_configurations": (XE.recover_configurations, dict(F=F)),
        "solve_minimal": (XE.solve_minimal, dict(points1=p1[:13], points2=p2[:13])),
        "triangulate_linear": (XS.triangulate_linear, dict(cameras=[c1, c2], points=[p1, p2])),
        "reprojection_residuals": (XS.reprojection_residuals,
                                   dict(cameras=[c1, c2], points=[p1, p2], X=v["X4"])),
        "triangulate_nonlinear": (XS.triangulate_nonlinear,
                                  dict(cameras=[c1, c2], points=[p1, p2], X0=v["X4"],
                                       iterations=2)),
        "projective_pairs_from_tensor": (XS.projective_pairs_from_tensor,
                                         dict(F=F, **pts, refine=False)),
        "refine_projective_pair": (XS.refine_projective_pair,
                                   dict(C0=C, **pts, X0=v["X4"], axis_scales=np.ones(4),
                                        max_iterations=2)),
        "metric_residuals": (XS.metric_residuals, dict(intrinsics1=i1, intrinsics2=i2, **pts)),
        "fit_metric_pose": (XS.fit_metric_pose,
                            dict(intrinsics1=i1, intrinsics2=i2, rvec0=s["rvec"],
                                 tvec0=s["tvec"], **pts, X0=s["X"], max_iterations=2)),
        "fit_metric_pose_robust": (XS.fit_metric_pose_robust,
                                   dict(intrinsics1=i1, intrinsics2=i2, rvec0=s["rvec"],
                                        tvec0=s["tvec"], **pts, threshold=1.0,
                                        max_iterations=2)),
        "refine_metric_pose": (XS.refine_metric_pose,
                               dict(intrinsics1=i1, intrinsics2=i2, rvec0=s["rvec"],
                                    tvec0=s["tvec"], **pts, X0=s["X"], max_iterations=2)),
        "metric_pose_information": (XS.metric_pose_information,
                                    dict(intrinsics1=i1, intrinsics2=i2, rvec=s["rvec"],
                                         tvec=s["tvec"], **pts, X=s["X"])),
        "calibrated_two_view": (XS.calibrated_two_view,
                                dict(**pts, intrinsics1=i1, intrinsics2=i2, rng=0)),
        "relative_pose": (XS.relative_pose, dict(**pts, intrinsics1=i1, intrinsics2=i2, rng=0)),
        "pose_distances": (XS.pose_distances, dict(intrinsics1=i1, intrinsics2=i2, rvec=s["rvec"],
                                                   t=s["tvec"], **pts, threshold=1.0)),
        "tensor_map": (XS.tensor_map, dict(intrinsics1=i1, intrinsics2=i2)),
        "msac_loss": (XR.msac_loss, dict(residuals=np.abs(p1[:, 0]), threshold=2.0)),
        "density_order": (XR.density_order, dict(data=np.c_[p1, p2], rng=rng)),
        "sample_indices": (XR.sample_indices, dict(rng=rng, n=30, s=5, batch=4)),
        "disjoint_samples": (XR.disjoint_samples, dict(rng=rng, n=30, s=5, batch=4)),
        "log_binom_table": (XR.log_binom_table, dict(n_max=30, k=5)),
        "log_binom": (XR.log_binom, dict(n=30, k=5)),
        "required_iterations": (XR.required_iterations,
                                dict(inlier_ratio=0.5, s=5, confidence=0.99)),
        "support_needed": (XR.support_needed, dict(n=30, s=5, p0=0.1, alpha=0.01)),
        "anneal_thresholds": (XR.anneal_thresholds, dict(threshold=1.0, anneal=4.0, steps=2)),
        "UniformSampler": (XR.UniformSampler, dict(n=30, s=5, confidence=0.99)),
        "ProsacSampler": (XR.ProsacSampler, dict(order=np.arange(30), s=5, confidence=0.99)),
        "RobustOptions": (XR.RobustOptions, dict(threshold=1.0, confidence=0.99)),
        "robust_estimate": (XR.robust_estimate, dict(problem=_mean_problem(),
                                                     options=XR.RobustOptions(), rng=0)),
        "iterated_least_squares": (XR.iterated_least_squares,
                                   dict(problem=_mean_problem(), model=np.array([3.0]),
                                        inliers=np.r_[np.ones(40, bool), np.zeros(20, bool)],
                                        threshold=1.0)),
        "chance_inlier_ratio": (XR.chance_inlier_ratio,
                                dict(problem=_mean_problem(), model=np.array([3.0]), threshold=1.0, rng=rng,
                                     draws=100)),
        "chance_verdict": (XR.chance_verdict,
                           dict(problem=_mean_problem(), inliers=np.r_[np.ones(40, bool),
                                                                       np.zeros(20, bool)],
                                chance=0.01, hypotheses=10, alpha=1e-6)),
    }


_POINTS = S.malformed_arrays((30, 2))
_TENSOR = S.malformed_arrays((2, 2, 2, 2), batched=True)
_C = S.malformed_arrays((4, 4), batched=True)
_C_REAL_OR_COMPLEX = st.sampled_from([None, "C", np.eye(4) != 0, np.full((4, 4), np.nan),
                                      np.ones((4, 3)), np.ones((4, 4), dtype=object)])
_CAMERA = S.malformed_arrays((2, 4))
#: Not a mask of the 60 points of the robust problem (booleans and numbers are masks).
_MASKS = st.sampled_from([None, "mask", np.ones(59, bool), np.ones((60, 2)), np.full(60, np.nan),
                          np.ones(60) + 1j, {"a": 1}])


def _given(strategy):
    """``strategy`` without None, for optional arguments (None is their default)."""
    return strategy.filter(lambda v: v is not None)
#: ``(function, argument) -> strategy`` of malformed values of that argument.
MALFORMED = {
    **{("epipolar_tensor", a): S.malformed_arrays((2, 4), batched=True)
       for a in ("A1", "A2", "B1", "B2")},
    **{("sampson_distance_pairs", a): S.malformed_arrays((30, 2), allow_empty=True)
       for a in ("points1", "points2")},
    **{(f, a): _POINTS for f in ("evaluate_tensor", "sampson_distance", "tensor_gradient",
                                "design_matrix", "solve_linear",
                                "projective_pairs_from_tensor", "refine_projective_pair",
                                "metric_residuals", "fit_metric_pose", "metric_pose_information",
                                "calibrated_two_view", "relative_pose", "pose_distances",
                                "fit_metric_pose_robust")
       for a in ("points1", "points2")},
    **{(f, "F"): _TENSOR for f in ("evaluate_tensor", "sampson_distance", "tensor_gradient",
                                  "contract_modes", "candidate_matrices")},
    **{(f, "F"): S.malformed_arrays((2, 2, 2, 2))
       for f in ("sampson_distance_pairs", "recover_configurations",
                 "projective_pairs_from_tensor")},
    **{("contract_modes", a): S.malformed_arrays((2, 2), batched=True)
       for a in ("T1", "T2", "T3", "T4")},
    ("axis_normalization", "values"): S.malformed_arrays((30,), any_shape=True),
    ("solve_linear", "weights"): _given(S.malformed_arrays((30,))),
    **{("solve_linear_batch", a): S.malformed_arrays((1, 15, 2))
       for a in ("points1", "points2")},
    **{("matrix_from_cameras", a): _CAMERA for a in ("A1", "A2", "B1", "B2")},
    ("cameras_from_matrix", "C"): S.malformed_arrays((4, 4)),
    ("balance_matrix", "C"): S.malformed_arrays((4, 4)),
    ("principal_minor_tensor", "C"): _C_REAL_OR_COMPLEX,
    ("principal_minor_jacobian", "C"): _C,
    ("normalize_matrix_gauge", "C"): _C,
    **{("solve_minimal", a): S.malformed_arrays((13, 2)) for a in ("points1", "points2")},
    **{(f, "cameras"): st.sampled_from([None, "cams", [], [1, 2], np.zeros((2, 2, 4))])
       for f in ("triangulate_linear", "reprojection_residuals", "triangulate_nonlinear")},
    **{(f, "points"): st.sampled_from([None, "pts", [np.ones((30, 2))],
                                       [np.ones((30, 2)), np.ones((29, 2))],
                                       [np.ones((30, 2)), np.full((30, 2), np.nan)],
                                       [np.ones((30, 2)), np.ones((30, 2)) != 0]])
       for f in ("triangulate_linear", "reprojection_residuals", "triangulate_nonlinear")},
    ("reprojection_residuals", "X"): S.malformed_arrays((30, 4)),
    ("triangulate_nonlinear", "X0"): S.malformed_arrays((30, 4)),
    ("triangulate_nonlinear", "iterations"): S.malformed_ints(0),
    ("refine_projective_pair", "C0"): S.malformed_arrays((4, 4)),
    ("refine_projective_pair", "X0"): _given(S.malformed_arrays((30, 4))),
    ("refine_projective_pair", "axis_scales"): _given(S.malformed_arrays((4,))),
    ("refine_projective_pair", "max_iterations"): S.malformed_ints(0),
    ("projective_pairs_from_tensor", "refine"): st.sampled_from([None, 1, "yes", np.ones(2)]),
    **{(f, a): S.malformed_intrinsics()
       for f in ("metric_residuals", "fit_metric_pose", "refine_metric_pose",
                 "metric_pose_information", "calibrated_two_view", "pose_distances",
                 "fit_metric_pose_robust")
       for a in ("intrinsics1", "intrinsics2")},
    **{("pose_distances", a): S.malformed_arrays((3,)) for a in ("rvec", "t")},
    ("pose_distances", "threshold"): S.malformed_scalars(allow_zero=False,
                                                         allow_negative=False),
    **{(f, a): S.malformed_arrays((3,))
       for f in ("fit_metric_pose", "refine_metric_pose", "fit_metric_pose_robust")
       for a in ("rvec0", "tvec0")},
    ("fit_metric_pose_robust", "inliers"): _given(st.sampled_from(
        ["mask", np.ones(29, bool), np.ones((30, 2)), np.full(30, np.nan), np.ones(30) + 1j,
         np.arange(30) < 7])),
    ("fit_metric_pose_robust", "threshold"): S.malformed_scalars(allow_zero=False,
                                                                 allow_negative=False),
    ("fit_metric_pose_robust", "max_iterations"): S.malformed_ints(1),
    **{("metric_pose_information", a): S.malformed_arrays((3,)) for a in ("rvec", "tvec")},
    ("fit_metric_pose", "X0"): _given(S.malformed_arrays((30, 3))),
    ("fit_metric_pose", "max_iterations"): S.malformed_ints(0),
    ("metric_pose_information", "X"): S.malformed_arrays((30, 3)),
    ("msac_loss", "residuals"): st.one_of(
        S.malformed_arrays((30,), finite=False, any_shape=True),
        st.just(np.array([1.0, np.nan]))),
    ("msac_loss", "threshold"): S.malformed_scalars(allow_zero=False, allow_negative=False),
    ("density_order", "data"): S.malformed_arrays((30, 4), allow_empty=True).filter(
        lambda v: not (isinstance(v, np.ndarray) and v.ndim == 2 and v.dtype.kind == "f"
                       and np.isfinite(v).all())),  # (N, d) of any width d is valid
    **{(f, "rng"): S.malformed_generators()
       for f in ("density_order", "sample_indices", "disjoint_samples")},
    **{(f, a): S.malformed_ints(1) for f in ("sample_indices", "disjoint_samples")
       for a in ("n", "s")},
    ("sample_indices", "batch"): S.malformed_ints(0),
    ("disjoint_samples", "batch"): S.malformed_ints(1),
    **{("log_binom_table", a): S.malformed_ints(0) for a in ("n_max", "k")},
    **{("log_binom", a): S.malformed_ints(0) for a in ("n", "k")},
    ("required_iterations", "inlier_ratio"): st.sampled_from([None, True, "0.5", np.nan, -0.5,
                                                              1.5]),
    ("required_iterations", "s"): S.malformed_ints(1),
    ("required_iterations", "confidence"): S.malformed_probabilities(),
    ("support_needed", "n"): S.malformed_ints(0),
    ("support_needed", "s"): S.malformed_ints(1),
    ("support_needed", "p0"): st.sampled_from([None, True, "0.1", np.nan, -0.5, 1.5]),
    ("support_needed", "alpha"): S.malformed_probabilities(),
    ("anneal_thresholds", "threshold"): S.malformed_scalars(allow_zero=False,
                                                            allow_negative=False),
    ("anneal_thresholds", "anneal"): st.sampled_from([None, True, "4", np.nan, np.inf, 0.5]),
    ("anneal_thresholds", "steps"): S.malformed_ints(0),
    **{("UniformSampler", a): S.malformed_ints(1) for a in ("n", "s")},
    ("UniformSampler", "confidence"): S.malformed_probabilities(),
    ("ProsacSampler", "order"): st.sampled_from([None, "order", np.arange(30) + 0.5,
                                                 np.arange(30) != 0, np.arange(30) + 30,
                                                 np.arange(30).reshape(5, 6), np.arange(0)]),
    ("ProsacSampler", "s"): S.malformed_ints(1),
    ("ProsacSampler", "confidence"): S.malformed_probabilities(),
    ("RobustOptions", "threshold"): S.malformed_scalars(allow_zero=False, allow_negative=False),
    ("RobustOptions", "confidence"): S.malformed_probabilities(),
    **{(f, "problem"): st.sampled_from([None, "problem", np.ones(3), object()])
       for f in ("robust_estimate", "iterated_least_squares", "chance_inlier_ratio",
                 "chance_verdict")},
    ("robust_estimate", "options"): st.sampled_from([None, {"threshold": 1.0}, "msac"]),
    **{(f, "inliers"): _MASKS for f in ("iterated_least_squares", "chance_verdict")},
    **{(f, "threshold"): S.malformed_scalars(allow_zero=False, allow_negative=False)
       for f in ("iterated_least_squares", "chance_inlier_ratio")},
    ("chance_inlier_ratio", "draws"): S.malformed_ints(1),
    ("chance_verdict", "chance"): st.sampled_from([None, True, "0.1", np.nan, -0.5, 1.5]),
    ("chance_verdict", "hypotheses"): S.malformed_ints(0),
    ("chance_verdict", "alpha"): S.malformed_probabilities(),
}


@covers_lower(*_calls())
@pytest.mark.parametrize("name", sorted(set(_calls()) - {"solve_minimal"}))
def test_lower_level_functions_run_on_valid_input(name):
    """The valid arguments of the table below are valid (so that each malformed case differs
    from a working call in one argument only). The minimal solver's valid input has its own
    tests (its first call compiles the path tracker)."""
    f, kwargs = _calls()[name]
    out = f(**kwargs)
    for a in (out if isinstance(out, tuple) else (out,)):
        if isinstance(a, np.ndarray) and a.dtype.kind in "fc" and name != "candidate_matrices":
            _nan_free(a.real)


@covers_lower(*{f for f, _ in MALFORMED})
@pytest.mark.parametrize("name,arg", sorted(MALFORMED))
@given(data=st.data())
def test_lower_level_functions_name_malformed_arguments(name, arg, data):
    """Each malformed argument gives a ValueError whose message starts with its name (or
    with a pair of names, for a count mismatch); never another exception type."""
    f, kwargs = _calls()[name]
    bad = data.draw(MALFORMED[name, arg], label=f"{name}({arg}=...)")
    with pytest.raises(ValueError, match=rf"^((\w+ and )?(options\.)?{arg}\b|\w+ and {arg}\b)"):
        f(**{**kwargs, arg: bad})


@covers_lower("sampson_distance", "evaluate_tensor", "design_matrix", "tensor_gradient",
              "epipolar_tensor", "triangulate_linear", "reprojection_residuals",
              "triangulate_nonlinear", "solve_linear", "matrix_from_cameras",
              "principal_minor_tensor", "recover_configurations", "contract_modes",
              "axis_normalization")
@given(two_views(15, 40))
def test_lower_level_geometry_holds_on_noise_free_matches(views):
    """The tensor of two cameras vanishes on their matches (algebraically and in Sampson
    distance), the linear solver and the principal minors of the cameras' matrix give it back
    (up to scale), normalising the pixel axes contracts it as the documentation says, and the
    triangulated points reproject exactly."""
    from xslit.testing import projective_distance

    cam1, cam2, X, p1, p2 = views
    F = XE.epipolar_tensor(cam1.A1, cam1.A2, cam2.A1, cam2.A2)
    Fn = F / np.linalg.norm(F)
    scale = 1 + np.abs(np.r_[p1.ravel(), p2.ravel()]).max()
    assert np.abs(XE.evaluate_tensor(Fn, p1, p2)).max() < TENSOR_RESIDUAL_RTOL * scale ** 4
    assert np.abs(XE.design_matrix(p1, p2) @ Fn.ravel()).max() < TENSOR_RESIDUAL_RTOL * scale ** 4
    assert XE.sampson_distance(F, p1, p2).max() < PROPERTY_NOISE_FREE * scale
    e, grad = XE.tensor_gradient(Fn, p1, p2)
    assert grad.shape == (len(p1), 4)
    assert np.abs(e - XE.evaluate_tensor(Fn, p1, p2)).max() < TENSOR_RESIDUAL_RTOL * scale ** 4
    F_lin, cond = XE.solve_linear(p1, p2)
    if cond > PROPERTY_NOISE_FREE:  # a sample that determines F
        assert projective_distance(F_lin, F) < PROPERTY_SOLVER_RTOL
    try:
        C = XE.matrix_from_cameras(cam1.A1, cam1.A2, cam2.A1, cam2.A2)
    except ValueError as exc:  # no canonical frame or no gauge: a degeneracy, named
        assert str(exc).startswith(("A1, A2, B1 and B2 must have independent first rows",
                                    "A1, A2, B1 and B2 must give c12, c13, c14 != 0"))
    else:
        G = XE.principal_minor_tensor(C)
        assert np.abs(XE.evaluate_tensor(G / np.linalg.norm(G), p1, p2)).max() < \
            PROPERTY_NOISE_FREE * scale ** 4
        try:
            _, Cs, _ = XE.recover_configurations(G)
        except ValueError as exc:  # a non-generic tensor (a vanishing pivot), named
            assert str(exc).startswith("F: ")
        else:
            assert min(projective_distance(XE.principal_minor_tensor(c), G)
                       for c in Cs) < PROPERTY_NOISE_FREE
    Ts = [XE.axis_normalization(v) for v in (p1[:, 0], p1[:, 1], p2[:, 0], p2[:, 1])]
    Tinv = [np.linalg.inv(T) for T in Ts]
    Fnorm = XE.contract_modes(F, *Tinv)  # the tensor of the normalised pixels
    q1 = np.c_[Ts[0][0, 0] * p1[:, 0] + Ts[0][0, 1], Ts[1][0, 0] * p1[:, 1] + Ts[1][0, 1]]
    q2 = np.c_[Ts[2][0, 0] * p2[:, 0] + Ts[2][0, 1], Ts[3][0, 0] * p2[:, 1] + Ts[3][0, 1]]
    assert XE.sampson_distance(Fnorm, q1, q2).max() < PROPERTY_NOISE_FREE
    Xh = XS.triangulate_linear([cam1, cam2], [p1, p2])
    residuals = XS.reprojection_residuals([cam1, cam2], [p1, p2], Xh)
    assert np.abs(residuals).max() < PROPERTY_NOISE_FREE * scale
    Xr = XS.triangulate_nonlinear([cam1, cam2], [p1, p2], Xh, iterations=2)
    assert rel_err(Xr[:, :3] / Xr[:, 3:], X) < PROPERTY_NOISE_FREE


@covers_lower("sample_indices", "disjoint_samples", "required_iterations", "log_binom_table",
              "log_binom", "support_needed", "msac_loss", "UniformSampler", "ProsacSampler",
              "density_order", "anneal_thresholds")
@given(S.seeds(), st.integers(2, 60), st.integers(1, 8), st.integers(0, 20),
       S.floats(0.05, 0.95), S.floats(0.5, 0.999))
def test_sampling_and_termination(seed, n, s, batch, w, p):
    """Samples hold ``s`` distinct indices below ``n``; disjoint samples of one permutation
    share none; RANSAC's count makes an all-inlier sample likely with probability ``p``; the
    binomial table is ``log C(n, k)``; the MSAC loss is the truncated square; the annealing's
    thresholds fall geometrically from ``anneal`` times the threshold, staying above it; PROSAC
    draws from its order and the density order is a permutation."""
    from math import comb, log

    s = min(s, n)
    rng = np.random.default_rng(seed)
    for draw in (XR.sample_indices, XR.disjoint_samples):
        if draw is XR.disjoint_samples and batch == 0:
            continue
        idx = draw(rng, n, s, batch)
        assert idx.shape == (batch, s) and (idx.min(initial=0) >= 0) and idx.max(initial=0) < n
        assert all(len(set(row)) == s for row in idx.tolist())
    k = XR.required_iterations(w, s, p)
    assert -np.expm1(np.ceil(k) * np.log1p(-w ** s)) >= p - 1e-9  # P(an all-inlier sample)
    table = XR.log_binom_table(n, s)
    assert np.allclose(table, [log(comb(m, s)) for m in range(s, n + 1)])
    assert XR.log_binom(n, s) == table[-1]
    assert s < XR.support_needed(n, s, 0.1, 1e-3) <= n + 1 or n <= s
    r = np.random.default_rng(seed).uniform(0, 3, n)
    assert np.isclose(XR.msac_loss(r, 1.5), np.sum(np.minimum(r * r, 2.25)))
    anneal = 1.0 + 4.0 * w
    steps = XR.anneal_thresholds(1.5, anneal, s)
    assert len(steps) == s and np.isclose(steps[0], 1.5 * anneal)
    assert np.allclose(np.diff(np.log(steps)), -np.log(anneal) / s) and min(steps) > 1.5
    assert XR.anneal_thresholds(1.5, 1.0, s) == [] == XR.anneal_thresholds(1.5, anneal, 0)
    order = np.random.default_rng(seed).permutation(n)
    prosac = XR.ProsacSampler(order, s, p)
    assert set(prosac.draw(rng, 4).ravel().tolist()) <= set(order.tolist())
    assert XR.UniformSampler(n, s, p).draw(rng, 3).shape == (3, s)
    data = np.random.default_rng(seed).normal(size=(n, 4))
    assert sorted(XR.density_order(data, rng).tolist()) == list(range(n))


@covers_lower("projective_pairs_from_tensor", "refine_projective_pair", "metric_residuals",
              "fit_metric_pose", "fit_metric_pose_robust", "refine_metric_pose",
              "metric_pose_information",
              "tensor_map", "candidate_matrices",
              "cameras_from_matrix", "normalize_matrix_gauge", "balance_matrix",
              "principal_minor_jacobian", "solve_linear_batch", "sampson_distance_pairs")
@given(S.two_view_scenes(15, 30, kinds=("two_slit",)))
def test_lower_level_two_view_fits_are_exact_on_noise_free_matches(scene):
    """From the true pose, the metric fit stays there (zero residuals, a positive definite
    information matrix); the projective pairs of the true tensor reproduce it; the balanced
    and gauge-normalised matrices have the same principal minors."""
    from xslit.testing import projective_distance

    p1, p2, i1, i2 = scene["points1"], scene["points2"], scene["intrinsics1"], scene["intrinsics2"]
    c1, c2 = scene["camera1"], scene["camera2"]
    fit = XS.fit_metric_pose(i1, i2, scene["rvec"], scene["tvec"], p1, p2, scene["X"],
                             max_iterations=3)
    assert fit.rms < PROPERTY_NOISE_FREE and rel_err(fit.tvec, scene["tvec"]) < PROPERTY_NOISE_FREE
    robust = XS.fit_metric_pose_robust(i1, i2, scene["rvec"], scene["tvec"], p1, p2,
                                       threshold=1.0, max_iterations=3)
    assert robust.inliers.all() and robust.cost < PROPERTY_NOISE_FREE_COST
    assert rel_err(robust.tvec, scene["tvec"]) < PROPERTY_NOISE_FREE
    assert len(XS.refine_metric_pose(i1, i2, scene["rvec"], scene["tvec"], p1, p2)) == 4
    fun, _ = XS.metric_residuals(i1, i2, p1, p2)
    assert np.abs(fun(np.r_[scene["rvec"], scene["tvec"]], scene["X"])).max() < PROPERTY_NOISE_FREE
    info, _ = XS.metric_pose_information(i1, i2, scene["rvec"], scene["tvec"], p1, p2,
                                         scene["X"])
    assert np.all(np.linalg.eigvalsh(info) > 0)
    assert XS.tensor_map(i1, i2).ndim >= 2
    F = xslit.computeEpipolarTensor(c1, c2)
    pairs = XS.projective_pairs_from_tensor(F, p1, p2, refine=False)
    assert projective_distance(pairs.F, F) < PROPERTY_NOISE_FREE
    C = XE.matrix_from_cameras(c1.A1, c1.A2, c2.A1, c2.A2)
    G = XE.principal_minor_tensor(C)
    for D in (XE.balance_matrix(C), XE.normalize_matrix_gauge(C)):
        assert projective_distance(XE.principal_minor_tensor(D), G) < TENSOR_RTOL
    f, J = XE.principal_minor_jacobian(C)
    assert np.allclose(f, G.ravel()) and J.shape == (16, 16)
    Cs, res = XE.candidate_matrices(G)
    assert Cs.shape == (8, 4, 4) and np.nanmin(res) < PROPERTY_NOISE_FREE
    A1, A2, B1, B2 = XE.cameras_from_matrix(Cs[np.nanargmin(res)])
    assert projective_distance(XE.epipolar_tensor(A1, A2, B1, B2), F) < PROPERTY_NOISE_FREE
    ref = XS.refine_projective_pair(C, p1, p2, max_iterations=3)
    assert ref.rms < PROPERTY_NOISE_FREE
    Fb, cond = XE.solve_linear_batch(p1[None, :15], p2[None, :15])
    assert Fb.shape == (1, 2, 2, 2, 2) and cond.shape == (1,)
    d = XE.sampson_distance_pairs(F, p1[:5], p2[:5])
    assert np.allclose(np.diag(d), XE.sampson_distance(F, p1[:5], p2[:5]))


@covers_lower("RobustOptions", "robust_estimate", "iterated_least_squares",
              "chance_inlier_ratio", "chance_verdict")
@given(S.seeds(), st.integers(30, 80), S.floats(0.0, 0.6),
       st.sampled_from([XR.RANSAC, XR.MSAC, XR.LMEDS]), st.sampled_from([XR.UNIFORM, XR.PROSAC]))
def test_robust_loop_finds_the_location_among_outliers(seed, n, ratio, method, sampler):
    """On 1D data with a cluster at 3 (spread 0.1) and uniform outliers in [-100, 100], the
    loop returns the cluster's location, with (at least) the cluster as inliers at the given
    threshold (RANSAC, MSAC; LMedS with at most 30% outliers); iterated least
    squares from the truth stays there; the chance ratio is about twice the threshold over the
    outliers' range, and the cluster's support is not chance."""
    if method == XR.LMEDS:
        assume(ratio <= 0.3)  # the median must fall in the cluster, with margin
    outliers = int(ratio * n)
    problem = _mean_problem(seed, n, outliers)
    options = XR.RobustOptions(method=method, sampler=sampler, threshold=0.5, confidence=0.999)
    order = np.argsort(np.abs(problem.data - 3.0)) if sampler == XR.PROSAC else None
    res = XR.robust_estimate(problem, options, seed, order)
    assert res.success, res.reason
    assert abs(float(np.ravel(res.model)[0]) - 3.0) < ROBUST_LOCATION_ATOL
    if method != XR.LMEDS:  # LMedS's threshold comes from the median, not from options
        assert res.inliers[: n - outliers].all()
    model, _ = XR.iterated_least_squares(problem, np.array([3.0]), res.inliers, 0.5)
    assert abs(model[0] - 3.0) < ROBUST_LOCATION_ATOL
    p0 = XR.chance_inlier_ratio(problem, np.array([3.0]), 0.5, np.random.default_rng(seed), 5000)
    assert 0.0 < p0 < CHANCE_RATIO_MAX
    needed, reason = XR.chance_verdict(problem, res.inliers, p0, res.iterations, 1e-6)
    assert reason == "" and needed <= res.inliers.sum()


def test_every_lower_level_name_has_a_property():
    """Every public name of xslit.epipolar, xslit.sfm and xslit.robust is covered by a
    property above, or has no input of its own to validate."""
    for short, module in (("epipolar", XE), ("sfm", XS), ("robust", XR)):
        missing = sorted(set(module.__all__) - COVERED_LOWER - NO_INPUT[short])
        assert not missing, f"xslit.{short} names without a property test: {missing}"
        assert not NO_INPUT[short] - set(module.__all__)


def test_every_public_name_has_a_property():
    public = set(xslit.__all__) - {"__version__"}
    missing = sorted(public - COVERED)
    assert not missing, f"public names without a property test: {missing}"
    assert not COVERED - public, f"covered names not public: {sorted(COVERED - public)}"


@pytest.mark.slow
def test_properties_hold_on_the_thorough_profile():
    """The same properties with ten times as many examples (a separate process, so that the
    profile is loaded before the tests are collected)."""
    env = dict(os.environ, XSLIT_HYPOTHESIS_PROFILE="thorough")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-m", "not slow", __file__], env=env, capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1], check=False)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
