"""Intrinsics (Propositions 1-2, appendix B): decomposition, composition, invariance under
Euclidean motions, and projectTwoSlitPoints (the analogue of cv2.projectPoints)."""

import warnings

import numpy as np
import pytest
from tolerances import (
    EXACT,
    INTRINSICS_RTOL,
    JACOBIAN_RTOL,
    N_CAMERAS,
    PIXEL_RTOL,
    POSE_RTOL,
    ROUNDTRIP_RTOL,
    SMOOTH_THROUGH_ZERO_YAW,
    ULP_RTOL,
)

import xslit
from xslit import synthetic
from xslit.geometry import matrix_from_rvec, rvec_from_matrix
from xslit.testing import assert_allclose_up_to_scale, projective_distance

# The appendix's parallel camera A (eq. (49)): second rows share (8, -1, 13).
A1_APP = np.array([[-1.0, 7, 4, 0], [8, -1, 13, 4]])
A2_APP = np.array([[11.0, 6, -2, 4], [8, -1, 13, -5]])


def _rigid(rng, translation=5.0):
    H = np.eye(4)
    H[:3, :3] = synthetic.random_rotation(rng)
    H[:3, 3] = rng.normal(scale=translation, size=3)
    return H


def _random_pose(rng):
    """A cv2 pose (rvec, tvec) whose camera sees the world origin (|d| <= 2 < t_z)."""
    return rng.normal(size=3), np.array([*rng.normal(scale=0.3, size=2), rng.uniform(4, 8)])


def _assert_intrinsics_equal(a, b, rtol=INTRINSICS_RTOL):
    scale = max(np.abs(a.K1).max(), np.abs(a.K2).max())
    np.testing.assert_allclose(b.K1, a.K1, rtol=0, atol=rtol * scale)
    np.testing.assert_allclose(b.K2, a.K2, rtol=0, atol=rtol * scale)
    if isinstance(a, xslit.PushbroomIntrinsics):
        np.testing.assert_allclose(b.velocity, a.velocity, rtol=0,
                                   atol=rtol * np.abs(a.velocity).max())
        return
    assert abs(np.angle(np.exp(1j * (b.theta - a.theta)))) <= rtol
    assert abs(b.d - a.d) <= rtol * abs(a.d)


def _assert_same_camera(a, b, rtol=ROUNDTRIP_RTOL):
    """Equal up to a positive scale per matrix (the sign carries cheirality)."""
    assert_allclose_up_to_scale(b.A1, a.A1, rtol, positive=True)
    assert_allclose_up_to_scale(b.A2, a.A2, rtol, positive=True)


# -- the paper's cameras --------------------------------------------------------------------


def test_appendix_parallel_camera_decomposition():
    cam = xslit.TwoSlitCamera(A1_APP, A2_APP)
    dec = xslit.decomposeTwoSlitProjection(cam)
    s = np.sqrt(234.0)  # |(8, -1, 13)|
    # K upper triangular with unit lower-right entry and positive diagonal (parallel camera).
    for K in (dec.K1, dec.K2):
        assert abs(K[1, 0]) < EXACT and K[1, 1] == 1.0 and K[0, 0] > 0
    assert dec.intrinsics.is_parallel
    # r3 is the shared direction of the second rows.
    np.testing.assert_allclose(dec.r3, np.array([8.0, -1, 13]) / s, atol=EXACT)
    # Gram-Schmidt by hand: r1, r2 are the first rows made orthogonal to r3.
    m1, m2 = A1_APP[0, :3], A2_APP[0, :3]
    r1 = m1 - (m1 @ dec.r3) * dec.r3
    r2 = m2 - (m2 @ dec.r3) * dec.r3
    np.testing.assert_allclose(dec.r1, r1 / np.linalg.norm(r1), atol=EXACT)
    np.testing.assert_allclose(dec.r2, r2 / np.linalg.norm(r2), atol=EXACT)
    np.testing.assert_allclose(dec.K1[0], [np.linalg.norm(r1) / s, 37 / 234], atol=EXACT)
    np.testing.assert_allclose(dec.K2[0], [np.linalg.norm(r2) / s, 56 / 234], atol=EXACT)
    # theta = arccos(r1 . r2) (as a signed angle in (0, 2 pi)); distance |t4 - t3| = 9 / |m3|.
    assert 0 < dec.theta < 2 * np.pi
    np.testing.assert_allclose(np.cos(dec.theta), dec.r1 @ dec.r2, atol=EXACT)
    np.testing.assert_allclose(abs(dec.d), 9 / s, atol=EXACT)
    np.testing.assert_allclose(dec.t[[2, 3]], [4 / s, -5 / s], atol=EXACT)
    np.testing.assert_allclose(dec.d, dec.t[3] - dec.t[2], atol=EXACT)
    # eq. (16) rebuilds the matrices (up to the common 1/|m3|).
    A1 = dec.K1 @ np.array([[*dec.r1, dec.t[0]], [*dec.r3, dec.t[2]]])
    A2 = dec.K2 @ np.array([[*dec.r2, dec.t[1]], [*dec.r3, dec.t[3]]])
    np.testing.assert_allclose(A1 * s, A1_APP, atol=EXACT)
    np.testing.assert_allclose(A2 * s, A2_APP, atol=EXACT)
    # And composition from intrinsics and the cv2 pose gives the camera back.
    _assert_same_camera(cam, xslit.composeTwoSlitProjection(dec.intrinsics, dec.rvec, dec.tvec))


@pytest.mark.parametrize("theta", [0.3, np.pi / 2, 2.0, 4.0, 5.9])
@pytest.mark.parametrize("d", [1.0, -0.5, 2.5])
def test_canonical_euclidean_camera_decomposes_with_identity(theta, d):
    # eq. (15): K1 = I, K2 = diag(2, 1), angle theta, distance d.
    A1 = np.array([[1.0, 0, 0, 0], [0, 0, 1, 0]])
    A2 = np.array([[2 * np.cos(theta), 2 * np.sin(theta), 0, 0], [0, 0, 1, d]])
    dec = xslit.decomposeTwoSlitProjection((A1, A2))
    np.testing.assert_allclose(dec.K1, np.eye(2), atol=EXACT)
    np.testing.assert_allclose(dec.K2, np.diag([2.0, 1.0]), atol=EXACT)
    assert abs(dec.theta - theta) < EXACT
    assert abs(dec.d - d) < EXACT
    np.testing.assert_allclose(matrix_from_rvec(dec.rvec), np.eye(3), atol=EXACT)
    np.testing.assert_allclose(dec.tvec, 0.0, atol=EXACT)
    intr = xslit.TwoSlitIntrinsics.from_parameters(1.0, 1.0, 0.0, 0.0, theta, d)
    _assert_intrinsics_equal(intr, dec.intrinsics)


def test_paper_example_camera_has_theta_90_and_d_1():
    # "Note that eq. (9) is of this form, with theta = pi / 2 and d = 1."
    dec = xslit.decomposeTwoSlitProjection(xslit.TwoSlitCamera([[1, 0, 0, 0], [0, 0, 1, 0]],
                                                               [[0, 2, 0, 0], [0, 0, 1, 1]]))
    assert abs(dec.theta - np.pi / 2) < EXACT and abs(dec.d - 1) < EXACT
    assert abs(dec.intrinsics.fu - 1) < EXACT and abs(dec.intrinsics.fv - 1) < EXACT


@pytest.mark.parametrize("theta", [0.4, np.pi / 2, 2.5])
def test_canonical_pushbroom_of_proposition_2(theta):
    # Paper, section 3.2: A1 = [sin t, cos t, 0, 0; 0 0 0 1], A2 = [0 1 0 0; 0 0 1 0], a
    # pushbroom moving at the angle t to its scanning planes. In the Gupta-Hartley form of
    # PushbroomIntrinsics: speed 1, magnification sin t along the sensor, yaw t - pi/2.
    cam = xslit.PushbroomCamera([[np.sin(theta), np.cos(theta), 0, 0], [0, 0, 0, 1]],
                                [[0.0, 1, 0, 0], [0, 0, 1, 0]])
    dec = xslit.decomposePushbroomProjection(cam)
    np.testing.assert_allclose(dec.K1, np.eye(2), atol=EXACT)
    np.testing.assert_allclose(dec.K2, [[np.sin(theta), 0], [0, 1]], atol=EXACT)
    assert abs(dec.intrinsics.yaw - (theta - np.pi / 2)) < EXACT
    assert abs(dec.intrinsics.tilt) < EXACT
    assert abs(dec.v - 1) < EXACT and abs(dec.u) < EXACT
    # r1 is the scanning planes' normal, the motion is at the angle theta to the sensor line.
    np.testing.assert_allclose(dec.r1, [np.sin(theta), np.cos(theta), 0], atol=EXACT)
    motion = matrix_from_rvec(dec.rvec).T @ dec.velocity
    np.testing.assert_allclose(motion / np.linalg.norm(motion) @ dec.r2, -np.cos(theta),
                               atol=EXACT)
    assert_allclose_up_to_scale(xslit.synthetic.pushbroom_at_sensor_angle(1.0, 1.0, 0.0, theta)
                                .K2, dec.K2)


def test_pushbroom_from_gupta_hartley_matrix():
    # Proposition 2 with m1 orthogonal to m3 (the motion orthogonal to the optical axis).
    intr = xslit.PushbroomIntrinsics.from_parameters(v=0.02, f=900.0, u=310.0, yaw=0.3)
    cam = xslit.composePushbroomProjection(intr, [0.1, -0.2, 0.3], [0.5, 0.1, 6.0])
    m1, m3 = cam.matrix[0, :3], cam.matrix[2, :3]
    assert abs(m1 @ m3) < INTRINSICS_RTOL * np.linalg.norm(m1) * np.linalg.norm(m3)
    dec = xslit.decomposePushbroomProjection(cam.matrix)  # a (3, 4) array is accepted
    np.testing.assert_allclose([dec.v, dec.f, dec.u, dec.intrinsics.yaw, dec.intrinsics.tilt],
                               [0.02, 900.0, 310.0, 0.3, 0.0], rtol=EXACT, atol=EXACT)


def _along_track_instrument(tilt_deg, yaw_deg, roll_deg=0.0):
    """A satellite pushbroom 700 km up flying along +x at 7 km/s, one line per 1 ms: sensor
    line across the track (turned by ``yaw_deg`` about the optical axis), the view tilted
    ``tilt_deg`` fore (> 0) or aft about the sensor line and rolled ``roll_deg`` across the
    track; the Gupta-Hartley matrix of the physical model, built without xslit's intrinsics."""
    flight = np.array([1.0, 0, 0])
    speed = 7.0  # metres per line
    nadir = np.array([0.0, 0, -1])
    t, y, r = np.radians([tilt_deg, yaw_deg, roll_deg])
    axis = np.cos(t) * nadir + np.sin(t) * flight
    across = np.array([0.0, -1, 0])  # so that the camera's x axis points along the flight
    # Roll about the flight direction, then the sensor line turned about the optical axis.
    Rroll = matrix_from_rvec(flight * r)
    axis, across = Rroll @ axis, Rroll @ across
    sensor = matrix_from_rvec(axis * y) @ across
    normal = np.cross(sensor, axis)  # x axis of the camera: normal to the scanning plane
    R = np.stack([normal, sensor, axis])  # world to camera
    C = np.array([0.0, 0, 700e3])
    f, u0 = 40000.0, 6000.0
    Vc = R @ (speed * flight)
    # Line of X: when the scanning plane through C + s V contains X: normal.(X - C - sV) = 0.
    m1 = normal / Vc[0]
    rows = np.stack([f * (sensor - Vc[1] / Vc[0] * normal) + u0 * (axis - Vc[2] / Vc[0] * normal),
                     axis - Vc[2] / Vc[0] * normal])
    P = np.vstack([np.append(m1, -m1 @ C), np.column_stack([rows, -rows @ C])])
    return P, (Vc, f, u0, R, -R @ C)


@pytest.mark.parametrize("tilt", [18.0, 0.0, -18.0, 26.0], ids=["fore", "nadir", "aft", "fore26"])
@pytest.mark.parametrize("yaw", [0.0, 0.1, -3.0])
@pytest.mark.parametrize("roll", [0.0, 25.0], ids=["along", "across"])
def test_along_track_instruments_decompose_finitely(tilt, yaw, roll):
    """The standard stereo instruments (SPOT HRS, PRISM, Cartosat style): sensor exactly
    perpendicular to the flight, fore/aft/nadir views, across-track pointing. Proposition 2's
    general K2 is singular for them (K2[1, 1] = m3 . r3 = 0); the Gupta-Hartley form is not."""
    P, (Vc, f, u0, R, t) = _along_track_instrument(tilt, yaw, roll)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dec = xslit.decomposePushbroomProjection(P)
    values = np.concatenate([dec.K1.ravel(), dec.K2.ravel(), dec.velocity, dec.t, dec.rvec])
    assert np.isfinite(values).all()
    assert dec.v > 0
    np.testing.assert_allclose(dec.velocity, Vc, rtol=0, atol=INTRINSICS_RTOL * np.linalg.norm(Vc))
    np.testing.assert_allclose([dec.f, dec.u], [f, u0], rtol=INTRINSICS_RTOL)
    np.testing.assert_allclose(matrix_from_rvec(dec.rvec), R, atol=POSE_RTOL)
    np.testing.assert_allclose(dec.tvec, t, rtol=0, atol=POSE_RTOL * np.linalg.norm(t))
    if yaw == 0:  # then the tilt of the view is exactly the intrinsics' tilt
        assert abs(np.degrees(dec.intrinsics.tilt) - tilt) < INTRINSICS_RTOL
    again = xslit.composePushbroomProjection(dec.intrinsics, dec.rvec, dec.tvec)
    np.testing.assert_allclose(again.matrix, P, rtol=0, atol=ROUNDTRIP_RTOL * np.abs(P).max())


def test_pushbroom_decomposition_is_continuous_through_zero_yaw():
    """Sensor yaw from -0.1 to 0.1 degrees: the intrinsics change smoothly (the general K2 of
    Proposition 2 has entries of about 1/sin(yaw) there)."""
    yaws = np.linspace(-0.1, 0.1, 21)
    decs = [xslit.decomposePushbroomProjection(_along_track_instrument(18.0, y)[0]) for y in yaws]
    vy = np.array([d.velocity[1] for d in decs])
    expected = [_along_track_instrument(18.0, y)[1][0][1] for y in yaws]
    np.testing.assert_allclose(vy, expected, rtol=0, atol=EXACT)
    # Smooth through zero yaw: the second differences are a small fraction of the first (sin
    # is nearly linear there).
    assert np.abs(np.diff(vy, 2)).max() < SMOOTH_THROUGH_ZERO_YAW * np.abs(np.diff(vy)).max()
    assert np.abs(vy[10]) < EXACT
    assert np.ptp([d.f for d in decs]) < SMOOTH_THROUGH_ZERO_YAW * decs[0].f


@pytest.mark.parametrize("P", [
    [[1.0, 0, 0, 0], [0, 1, 0, 0], [2, 0, 0, 1]],  # m3 parallel to m1: no optical axis
    [[1.0, 0, 0, 0], [1, 0, 3, 0], [0, 0, 1, 0]],  # the motion within the scanning plane
])
def test_degenerate_pushbroom_matrices_raise_by_name(P):
    # Every way in which the decomposition could break makes m1, m2, m3 dependent: the finite
    # slit then meets the slit at infinity, and the matrix is refused before decomposing.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"^P must have an invertible left 3x3 block"):
            xslit.decomposePushbroomProjection(np.array(P))
        with pytest.raises(ValueError, match="the slits meet"):
            xslit.PushbroomCamera(np.vstack([P[0], [0, 0, 0, 1]]), np.array(P[1:]))


def test_pinhole_like_gupta_hartley_matrix_decomposes():
    # A matrix that reads like a pinhole K: a pushbroom whose motion is tilted from the
    # scanning planes' normal; finite intrinsics that compose back to it.
    P = np.array([[800.0, 0, 320, 0], [0, 600, 240, 0], [0, 0, 1, 0]])
    dec = xslit.decomposePushbroomProjection(P)
    assert np.isfinite(np.concatenate([dec.K2.ravel(), dec.velocity])).all()
    again = xslit.composePushbroomProjection(dec.intrinsics, dec.rvec, dec.tvec)
    _assert_same_camera(xslit.PushbroomCamera.from_matrix(P), again)


# -- 1,000 random cameras: round trips and Euclidean invariance -----------------------------


@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "non_parallel"])
def test_two_slit_decomposition_round_trip(parallel, rng):
    """Composition then decomposition gives the intrinsics and pose back, and
    decomposition then composition gives the camera back (up to a positive scale per matrix),
    for 1,000 random cameras."""
    for _ in range(N_CAMERAS):
        intr = synthetic.random_two_slit_intrinsics(rng, parallel=parallel)
        rvec, tvec = _random_pose(rng)
        cam = xslit.composeTwoSlitProjection(intr, rvec, tvec)
        dec = xslit.decomposeTwoSlitProjection(cam)
        _assert_intrinsics_equal(intr, dec.intrinsics)
        assert dec.intrinsics.is_parallel == parallel
        np.testing.assert_allclose(matrix_from_rvec(dec.rvec), matrix_from_rvec(rvec),
                                   atol=POSE_RTOL)
        np.testing.assert_allclose(dec.tvec, tvec, atol=POSE_RTOL * np.abs(tvec).max())
        _assert_same_camera(cam, xslit.composeTwoSlitProjection(dec.intrinsics, dec.rvec,
                                                                 dec.tvec))
        # r1, r2, r3 unit, r3 orthogonal to both, theta their angle.
        R = np.stack([dec.r1, dec.r2, dec.r3])
        np.testing.assert_allclose(np.linalg.norm(R, axis=1), 1.0, rtol=EXACT)
        assert abs(dec.r1 @ dec.r3) < EXACT and abs(dec.r2 @ dec.r3) < EXACT
        assert abs(np.cos(dec.theta) - dec.r1 @ dec.r2) < EXACT


@pytest.mark.parametrize("orthogonal", [True, False], ids=["orthogonal", "general"])
def test_pushbroom_decomposition_round_trip(orthogonal, rng):
    for _ in range(N_CAMERAS):
        intr = synthetic.random_pushbroom_intrinsics(rng, orthogonal=orthogonal)
        rvec, tvec = _random_pose(rng)
        cam = xslit.composePushbroomProjection(intr, rvec, tvec)
        dec = xslit.decomposePushbroomProjection(cam)
        _assert_intrinsics_equal(intr, dec.intrinsics)
        # Motion orthogonal to the optical axis: m1 orthogonal to m3, no velocity along z.
        assert (abs(dec.velocity[2]) < EXACT * abs(dec.v)) == orthogonal
        assert dec.f > 0 and np.linalg.det(matrix_from_rvec(dec.rvec)) > 0
        np.testing.assert_allclose(matrix_from_rvec(dec.rvec), matrix_from_rvec(rvec),
                                   atol=POSE_RTOL)
        np.testing.assert_allclose(dec.tvec, tvec, atol=POSE_RTOL * np.abs(tvec).max())
        again = xslit.composePushbroomProjection(dec.intrinsics, dec.rvec, dec.tvec)
        assert isinstance(again, xslit.PushbroomCamera)
        _assert_same_camera(cam, again)
        np.testing.assert_allclose(again.A1, cam.A1, atol=ROUNDTRIP_RTOL * np.abs(cam.A1).max())


def test_pushbroom_round_trip_for_any_direction_of_motion(rng):
    """1,000 physical pushbroom cameras whose motion makes any angle with the scanning plane
    (velocity uniform on the sphere, at least 1 degree off the plane), speeds over four
    decades, any focal length and principal point: decompose(compose) is the identity to
    1e-9 and every intrinsic is finite."""
    for _ in range(N_CAMERAS):
        vel = rng.normal(size=3)
        vel /= np.linalg.norm(vel)
        if abs(vel[0]) < np.sin(np.radians(1.0)):
            vel[0] = np.copysign(np.sin(np.radians(1.0)), vel[0])
        intr = xslit.PushbroomIntrinsics(vel * 10 ** rng.uniform(-3, 1), rng.uniform(100, 5000),
                                         rng.uniform(-2000, 2000))
        rvec, tvec = _random_pose(rng)
        cam = xslit.composePushbroomProjection(intr, rvec, tvec)
        dec = xslit.decomposePushbroomProjection(cam)
        assert np.isfinite(np.concatenate([dec.velocity, dec.K2.ravel(), dec.t])).all()
        _assert_intrinsics_equal(intr, dec.intrinsics, rtol=INTRINSICS_RTOL)
        np.testing.assert_allclose(matrix_from_rvec(dec.rvec), matrix_from_rvec(rvec),
                                   atol=POSE_RTOL)
        again = xslit.composePushbroomProjection(dec.intrinsics, dec.rvec, dec.tvec)
        _assert_same_camera(cam, again, rtol=ROUNDTRIP_RTOL)


@pytest.mark.parametrize("kind", ["parallel", "non_parallel", "pushbroom"])
def test_intrinsics_are_invariant_under_euclidean_motions(kind, rng):
    """theta, d, K1, K2 are unchanged by random rigid motions (camera.transform(H))."""
    for _ in range(N_CAMERAS):
        if kind == "pushbroom":
            cam = synthetic.random_pushbroom_camera(rng, orthogonal=bool(rng.integers(2)))
            before = xslit.decomposePushbroomProjection(cam)
        else:
            cam = synthetic.random_two_slit_camera(rng, parallel=kind == "parallel")
            before = xslit.decomposeTwoSlitProjection(cam)
        H = _rigid(rng)
        moved = cam.transform(H)
        if kind == "pushbroom":
            assert isinstance(moved, xslit.PushbroomCamera)
            after = xslit.decomposePushbroomProjection(moved)
        else:
            after = xslit.decomposeTwoSlitProjection(moved)
        _assert_intrinsics_equal(before.intrinsics, after.intrinsics)
        # The pose moves with H: camera coordinates R X + t are preserved.
        R0, R1 = matrix_from_rvec(before.rvec), matrix_from_rvec(after.rvec)
        np.testing.assert_allclose(R1 @ H[:3, :3], R0, atol=POSE_RTOL)


def test_similarity_scales_d_only(rng):
    # Euclidean and similarity orbits differ: scaling the world by s scales d by s.
    for _ in range(100):
        cam = synthetic.random_two_slit_camera(rng)
        s = rng.uniform(0.2, 5.0)
        H = _rigid(rng)
        H[:3] *= s
        before = xslit.decomposeTwoSlitProjection(cam)
        after = xslit.decomposeTwoSlitProjection(cam.transform(H))
        _assert_intrinsics_equal(
            xslit.TwoSlitIntrinsics(before.K1, before.K2, before.theta, s * before.d),
            after.intrinsics)


def test_intrinsics_parameters_and_properties():
    intr = xslit.TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, 1.1, -0.4)
    np.testing.assert_array_equal(intr.K1, [[800, 320], [0, 1]])
    np.testing.assert_array_equal(intr.K2, [[1200, 240], [0, 1]])  # K2 = [2 fv v0; 0 1]
    assert (intr.fu, intr.fv, intr.u0, intr.v0, intr.theta, intr.d) == (800, 600, 320, 240,
                                                                        1.1, -0.4)
    # K is normalised to K[1, 1] = 1.
    scaled = xslit.TwoSlitIntrinsics(2 * intr.K1, 3 * intr.K2, 1.1, -0.4)
    np.testing.assert_allclose(scaled.K1, intr.K1)
    np.testing.assert_allclose(scaled.K2, intr.K2)
    pb = xslit.PushbroomIntrinsics.from_parameters(0.05, 700.0, 300.0, 0.2, -0.3)
    assert (pb.v, pb.f, pb.u, pb.yaw, pb.tilt) == pytest.approx((0.05, 700.0, 300.0, 0.2, -0.3))
    np.testing.assert_allclose(pb.velocity, 0.05 * np.array([1, np.tan(0.2), np.tan(-0.3)]))
    np.testing.assert_array_equal(pb.K1, np.diag([20.0, 1.0]))
    np.testing.assert_array_equal(pb.K2, [[700.0, 300.0], [0, 1]])
    assert intr.to_dict()["d"] == -0.4 and pb.to_dict()["velocity"] == pb.velocity.tolist()


# -- projectTwoSlitPoints -------------------------------------------------------------------


def _pushbroom_or_two_slit(kind, rng):
    if kind == "pushbroom":
        return synthetic.random_pushbroom_intrinsics(rng, orthogonal=bool(rng.integers(2)))
    return synthetic.random_two_slit_intrinsics(rng, parallel=kind == "parallel")


def _random_intrinsics(kind, rng):
    """Intrinsics over wide ranges of focal lengths, skews, slit distances and motions."""
    if kind == "pushbroom":
        return xslit.PushbroomIntrinsics.from_parameters(
            10 ** rng.uniform(-3, 3), 10 ** rng.uniform(1, 4), rng.normal(scale=100),
            rng.uniform(-1.4, 1.4), rng.uniform(-1.4, 1.4))
    K1 = [[10 ** rng.uniform(1, 4), rng.normal(scale=100)], [rng.normal(scale=0.1), 1.0]]
    K2 = [[10 ** rng.uniform(1, 4), rng.normal(scale=100)], [rng.normal(scale=0.1), 1.0]]
    return xslit.TwoSlitIntrinsics(K1, K2, rng.uniform(0.05, np.pi - 0.05),
                                   rng.choice([-1, 1]) * 10 ** rng.uniform(-2, 1))


@pytest.mark.parametrize("kind", ["two_slit", "pushbroom"])
def test_camera_matrices_are_the_composed_cameras(kind, rng):
    from xslit.cameras import camera_matrices, compose_camera

    for _ in range(50):
        intr = _random_intrinsics(kind, rng)
        rvec = rng.normal(size=3) * rng.choice([0.0, 1e-9, 1.0])
        tvec = rng.normal(size=3) * rng.choice([0.0, 1e-3, 1.0, 100.0])
        cam = compose_camera(intr, rvec, tvec)
        A1, A2 = camera_matrices(intr, matrix_from_rvec(rvec), tvec)
        np.testing.assert_array_equal(A1, cam.A1)
        np.testing.assert_array_equal(A2, cam.A2)
        # the canonical pose (rvec 0 is the identity exactly)
        cam = compose_camera(intr, np.zeros(3), np.zeros(3))
        A1, A2 = camera_matrices(intr, np.eye(3), np.zeros(3))
        np.testing.assert_array_equal(A1, cam.A1)
        np.testing.assert_array_equal(A2, cam.A2)


@pytest.mark.parametrize("kind", ["two_slit", "pushbroom"])
def test_cameras_within_the_checked_translation_length_pass_the_checks(kind, rng):
    # The bounds of checked_translation_length hold for every rotation and direction of t;
    # beyond the length the checks run (and can fail: a translation that swamps the rows).
    from xslit.cameras import camera_matrices, check_two_slit_matrices, checked_translation_length

    lengths = []
    for _ in range(100):
        intr = _random_intrinsics(kind, rng)
        length = checked_translation_length(intr)
        lengths.append(length)
        if length < 0:
            continue
        for _ in range(10):
            R = matrix_from_rvec(rng.normal(scale=2.0, size=3))
            u = rng.normal(size=3)
            t = u / np.linalg.norm(u) * length * rng.choice([1.0, rng.uniform()])
            with np.errstate(over="raise", invalid="raise"):
                check_two_slit_matrices(*camera_matrices(intr, R, t))
    assert np.median(lengths) > 1.0
    with pytest.raises(ValueError, match=r"rank 2|meet"):
        check_two_slit_matrices(*camera_matrices(intr, np.eye(3), [0.0, 0.0, 1e30]))


@pytest.mark.parametrize("kind", ["parallel", "non_parallel", "pushbroom"])
def test_project_points_matches_composed_camera(kind, rng):
    compose = (xslit.composePushbroomProjection if kind == "pushbroom"
               else xslit.composeTwoSlitProjection)
    for _ in range(200):
        intr = _pushbroom_or_two_slit(kind, rng)
        rvec, tvec = _random_pose(rng)
        cam = compose(intr, rvec, tvec)
        X = synthetic.random_points_in_front(cam, 20, rng)
        img, jac = xslit.projectTwoSlitPoints(X, rvec, tvec, intr)
        assert jac is None
        assert img.shape == (20, 1, 2) and img.dtype == np.float64
        expected = cam.project(X)
        np.testing.assert_allclose(img[:, 0], expected, rtol=0,
                                   atol=PIXEL_RTOL * np.abs(expected).max())


def test_project_points_accepts_opencv_shapes(rng):
    intr = synthetic.random_two_slit_intrinsics(rng)
    rvec, tvec = _random_pose(rng)
    X = rng.normal(size=(7, 3))
    ref, _ = xslit.projectTwoSlitPoints(X, rvec, tvec, intr)
    for args in ((X[:, None, :], rvec[:, None], tvec[:, None]),
                 (X, list(rvec), tuple(tvec)),
                 (X.tolist(), rvec.reshape(1, 3), tvec)):
        out, _ = xslit.projectTwoSlitPoints(*args, intr)
        np.testing.assert_array_equal(out, ref)
    X32 = X.astype(np.float32)
    out32, _ = xslit.projectTwoSlitPoints(X32, rvec, tvec, intr)
    assert out32.dtype == np.float64
    np.testing.assert_array_equal(out32, xslit.projectTwoSlitPoints(X32.astype(float), rvec,
                                                                    tvec, intr)[0])


def test_project_points_u_matches_cv2_pinhole(rng):
    # With the pose convention of cv2, u = fu x_c / z_c + u0 is exactly the first pixel
    # coordinate of cv2.projectPoints with K = [fu 0 u0; 0 f 0; 0 0 1]; with theta = pi / 2,
    # v = 2 fv y_c / (z_c + d) + v0 is a pinhole moved back by d.
    cv2 = pytest.importorskip("cv2")
    intr = xslit.TwoSlitIntrinsics.from_parameters(750.0, 420.0, 310.0, 250.0, np.pi / 2, 0.7)
    rvec, tvec = np.array([0.2, -0.1, 0.3]), np.array([0.1, 0.2, 5.0])
    X = rng.uniform(-1, 1, size=(500, 3))
    img, _ = xslit.projectTwoSlitPoints(X, rvec, tvec, intr)
    K = np.array([[750.0, 0, 310], [0, 840.0, 250], [0, 0, 1]])
    cv_u, _ = cv2.projectPoints(X, rvec, tvec, K, None)
    cv_v, _ = cv2.projectPoints(X, rvec, tvec + np.array([0, 0, 0.7]), K, None)
    np.testing.assert_allclose(img[:, 0, 0], cv_u[:, 0, 0], rtol=EXACT)
    np.testing.assert_allclose(img[:, 0, 1], cv_v[:, 0, 1], rtol=EXACT)


def _params(kind, intr):
    if kind == "pushbroom":
        return np.array([1 / intr.v, intr.f, intr.u, *(intr.velocity[1:] / intr.v)])
    return np.array([intr.K1[0, 0], intr.K1[0, 1], intr.K1[1, 0], intr.K2[0, 0], intr.K2[0, 1],
                     intr.K2[1, 0], intr.theta, intr.d])


def _intrinsics(kind, p):
    """Public constructors only, in the documented Jacobian column order."""
    if kind == "pushbroom":
        return xslit.PushbroomIntrinsics(np.array([1.0, p[3], p[4]]) / p[0], p[1], p[2])
    return xslit.TwoSlitIntrinsics([[p[0], p[1]], [p[2], 1.0]], [[p[3], p[4]], [p[5], 1.0]],
                                   p[6], p[7])


@pytest.mark.parametrize("kind", ["parallel", "non_parallel", "pushbroom"])
@pytest.mark.parametrize("zero_rotation", [False, True], ids=["rotated", "rvec0"])
def test_project_points_jacobian_against_finite_differences(kind, zero_rotation, rng):
    for _ in range(5):
        intr = _pushbroom_or_two_slit(kind, rng)
        rvec, tvec = _random_pose(rng)
        if zero_rotation:
            rvec = np.zeros(3)
        compose = (xslit.composePushbroomProjection if kind == "pushbroom"
                   else xslit.composeTwoSlitProjection)
        X = synthetic.random_points_in_front(compose(intr, rvec, tvec), 15, rng)
        _, jac = xslit.projectTwoSlitPoints(X, rvec, tvec, intr, computeJacobian=True)
        p = np.concatenate([rvec, tvec, _params(kind, intr)])
        assert jac.shape == (2 * len(X), len(p)) and jac.dtype == np.float64

        def f(q, p=p, X=X):
            return xslit.projectTwoSlitPoints(X, q[:3], q[3:6], _intrinsics(kind, q[6:]))[0]

        fd = np.empty_like(jac)
        for k in range(len(p)):
            h = 1e-6 * max(1.0, abs(p[k]))
            qp, qm = p.copy(), p.copy()
            qp[k] += h
            qm[k] -= h
            fd[:, k] = ((f(qp) - f(qm)) / (2 * h)).reshape(-1)
        col = np.maximum(np.abs(fd).max(axis=0), 1e-3)
        err = np.abs(jac - fd) / col
        assert err.max() <= JACOBIAN_RTOL, (err.max(axis=0), kind)
        # Row layout: rows 2i, 2i + 1 are du_i, dv_i (the u row does not depend on d).
        if kind != "pushbroom":
            np.testing.assert_array_equal(jac[0::2, -1], 0.0)


def test_exceptional_locus_gives_nan_without_warnings(rng):
    # Non-parallel intrinsics: the two denominator planes meet along a finite line.
    intr = synthetic.random_two_slit_intrinsics(rng, parallel=False)
    k1, k2 = intr.K1[1, 0], intr.K2[1, 0]
    c, s, d = np.cos(intr.theta), np.sin(intr.theta), intr.d
    rvec, tvec = _random_pose(rng)
    R = matrix_from_rvec(rvec)
    x = rng.normal(size=4)
    # Camera coordinates (x, y, z): slit1 {x = z = 0}, slit2 {c x + s y = 0, z = -d},
    # exceptional line {k1 x + z = 0, k2 (c x + s y) + z + d = 0}.
    slit1 = np.stack([0 * x, x, 0 * x], 1)
    slit2 = np.stack([s * x, -c * x, 0 * x - d], 1)
    z = -k1 * x
    exc = np.stack([x, (-(z + d) / k2 - c * x) / s, z], 1)
    Xc = np.vstack([slit1, slit2, exc])
    X = (Xc - tvec) @ R  # R^T (Xc - t)
    good = synthetic.random_points_in_front(xslit.composeTwoSlitProjection(intr, rvec, tvec),
                                            3, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        img, _ = xslit.projectTwoSlitPoints(np.vstack([X, good]), rvec, tvec, intr,
                                            computeJacobian=True)
    # Round-off moves those world points off the locus by ~1e-16 (their pixels are then huge,
    # or NaN), silently. Exactly on the locus (identity pose, exact coordinates) they are NaN:
    # slit1 {x = z = 0}; slit2 {c x + s y = 0, z = -d}, exact for x = y = 0 and, with
    # theta = pi / 2 (sin = 1.0 exactly), for (x, -cos(theta) x, -d) with x a power of two
    # (so that cos(theta) x is exact even under fused multiply-adds).
    assert np.all(np.isfinite(img[-3:]))
    right = xslit.TwoSlitIntrinsics(intr.K1, intr.K2, np.pi / 2, d)
    p2 = np.array([1.0, -2.0, 0.25, 8.0])
    on_slits = np.vstack([slit1, [[0.0, 0.0, -d]],
                          np.stack([p2, -np.cos(np.pi / 2) * p2, 0 * p2 - d], 1)])
    for intrinsics in (intr, right):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            img0, _ = xslit.projectTwoSlitPoints(on_slits if intrinsics is right
                                                 else on_slits[:5], np.zeros(3), np.zeros(3),
                                                 intrinsics, computeJacobian=True)
        assert np.all(np.isnan(img0))
    # On the exceptional line, exactly: k1 = k2 = -1, theta = pi / 2, d = 1.
    ex = xslit.TwoSlitIntrinsics([[500.0, 0], [-1.0, 1]], [[500.0, 0], [-1.0, 1]], np.pi / 2,
                                 1.0)
    # Denominators x - z... u: (-x + z) = 0 -> z = x; v: (-y + z + 1) = 0 -> y = z + 1.
    Xe = np.array([[1.0, 2.0, 1.0], [2.0, 3.0, 2.0], [-3.0, -2.0, -3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        img1, jac1 = xslit.projectTwoSlitPoints(Xe, np.zeros(3), np.zeros(3), ex,
                                                computeJacobian=True)
    assert np.all(np.isnan(img1))
    assert jac1.shape == (6, 14)


def test_projective_distance_sees_scale_and_sign_of_matrices(rng):
    # Guard for _assert_same_camera: flipping the sign of A2 is the same projection but not
    # the same oriented camera.
    cam = synthetic.random_two_slit_camera(rng)
    flipped = xslit.TwoSlitCamera(cam.A1, -cam.A2)
    assert projective_distance(flipped.A2, cam.A2) < ULP_RTOL
    with pytest.raises(AssertionError):
        _assert_same_camera(cam, flipped)


def test_decomposition_is_unique_up_to_the_matrix_scales(rng):
    cam = synthetic.random_two_slit_camera(rng, parallel=False)
    a = xslit.decomposeTwoSlitProjection(cam)
    b = xslit.decomposeTwoSlitProjection(xslit.TwoSlitCamera(3.0 * cam.A1, 0.25 * cam.A2))
    _assert_intrinsics_equal(a.intrinsics, b.intrinsics)
    np.testing.assert_allclose(b.rvec, a.rvec, atol=EXACT)
    np.testing.assert_allclose(rvec_from_matrix(matrix_from_rvec(b.rvec)), a.rvec, atol=EXACT)
