"""Camera models: the paper's worked examples, projection against rays on 1,000 random cameras
of every kind, retinal planes and frames (Lemma), exceptional locus, JSON round trip."""

import json
import warnings

import numpy as np
import pytest
from tolerances import (
    EXACT,
    GRID_SEPARABLE_FRACTION,
    HOMOGRAPHY_RTOL,
    N_CAMERAS,
    N_POINTS_PER_CAMERA,
    NONZERO_RTOL,
    PROJECTION_RTOL,
    PUSHBROOM_FORM_RTOL,
    RAY_RTOL,
    ROUNDING_RTOL,
)

import xslit
from xslit import synthetic
from xslit.cameras import RationalCamera, plane_projection_matrix
from xslit.geometry import (
    dual_matrix,
    homogeneous_from_euclidean,
    join_line_point,
    klein_product,
    line_from_planes,
    line_from_points,
    meet_line_plane,
    normalize_lines,
    null_space,
    primal_matrix,
)
from xslit.testing import assert_allclose_up_to_scale, projective_distance

# -- the paper's worked examples ------------------------------------------------------------

# Example 1 (eq. (3)): plane x3 - x4 = 0, y1 = e1, y2 = e2, y3 = (0,0,1,1).
Y_EX1 = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]])
N_EX1 = np.array([[1.0, 0, 0, 0, -1, 0], [0, 1, 0, 1, 0, 0], [0, 0, 1, 0, 0, 0]])
# Example "two_slit_finite": slits l1 = {x1 = x3 = 0}, l2 = {x2 = x3 + x4 = 0}.
L1_EX = line_from_planes([1.0, 0, 0, 0], [0.0, 0, 1, 0])
L2_EX = line_from_planes([0.0, 1, 0, 0], [0.0, 0, 1, 1])
# eq. (13).
A1_EX = np.array([[1.0, 0, 0, 0], [0, 0, 1, 0]])
A2_EX = np.array([[0.0, 2, 0, 0], [0, 0, 1, 1]])


def _psi_paper(X):
    """eq. (9): psi(x) = (x1 (x3 + x4), 2 x2 x3, x3 (x3 + x4))."""
    x1, x2, x3, x4 = X.T
    return np.stack([x1 * (x3 + x4), 2 * x2 * x3, x3 * (x3 + x4)], axis=1)


def _lambda_paper(X):
    """The essential map of the example: (x1(x3+x4), x2x3, x3(x3+x4), x2x3, 0, -x1x2)."""
    x1, x2, x3, x4 = X.T
    return np.stack([x1 * (x3 + x4), x2 * x3, x3 * (x3 + x4), x2 * x3, 0 * x1, -x1 * x2], 1)


@pytest.fixture
def integer_points(rng):
    """Homogeneous points with small integer coordinates: the examples are then exact."""
    return rng.integers(-9, 10, size=(200, 4)).astype(float)


def test_example1_plane_projection_matrix_exactly():
    np.testing.assert_array_equal(plane_projection_matrix(Y_EX1), N_EX1)


def test_example1_N_maps_lines_to_their_meet_with_the_plane(rng):
    # N l are the frame coordinates of l ^ pi (paper, eq. (2)).
    x, y = rng.normal(size=(2, 100, 4))
    l = line_from_points(x, y)
    pi = np.array([0.0, 0, 1, -1])
    assert_allclose_up_to_scale(l @ N_EX1.T @ Y_EX1.T, meet_line_plane(l, pi), PROJECTION_RTOL,
                                axis=-1)


def test_two_slit_example_essential_map(integer_points):
    cam = RationalCamera.two_slit(L1_EX, L2_EX, Y_EX1)
    np.testing.assert_array_equal(cam.essential_map(integer_points), _lambda_paper(integer_points))


def test_two_slit_example_rational_camera(integer_points):
    # psi = N lambda (eq. (4)) with the frame of Example 1 gives eq. (9).
    cam = RationalCamera.two_slit(L1_EX, L2_EX, Y_EX1)
    assert cam.beta == 1
    np.testing.assert_array_equal(cam.project_homogeneous(integer_points),
                                  _psi_paper(integer_points))


def test_two_slit_example_linear_model(integer_points):
    # eq. (13): the same psi from the pair of 2x4 matrices.
    cam = xslit.TwoSlitCamera(A1_EX, A2_EX)
    np.testing.assert_array_equal(cam.project_homogeneous(integer_points),
                                  _psi_paper(integer_points))
    # Points [x1, x2, 1, 1] on the retinal plane x3 = x4 map to [x1, x2, 1] (paper, after
    # eq. (13)).
    X = integer_points.copy()
    X[:, 2:] = 1.0
    np.testing.assert_array_equal(cam.project(X), X[:, :2])


def test_two_slit_example_from_slits_gives_the_printed_matrices():
    cam = xslit.TwoSlitCamera.from_slits(L1_EX, L2_EX, Y_EX1)
    np.testing.assert_allclose(cam.A1, A1_EX, atol=EXACT)
    np.testing.assert_allclose(cam.A2, A2_EX, atol=EXACT)


def test_two_slit_example_quadratic_forms_equal_N_lambda(rng):
    # eq. (7): u_k = x^T P1* S_k P2* x equals N lambda(x) up to ONE scale.
    cam = RationalCamera.two_slit(L1_EX, L2_EX, Y_EX1)
    X = rng.normal(size=(200, 4))
    Q = cam.quadratic_forms
    u = np.einsum("ni,kij,nj->nk", X, Q, X)
    assert_allclose_up_to_scale(u, _psi_paper(X), PROJECTION_RTOL)  # one scale for all


def test_quadratic_forms_on_random_two_slit_cameras(rng):
    for _ in range(50):
        P = rng.normal(size=(4, 4))
        l1, l2 = line_from_points(P[0], P[1]), line_from_points(P[2], P[3])
        cam = RationalCamera.two_slit(l1, l2, rng.normal(size=(4, 3)))
        X = rng.normal(size=(30, 4))
        u = np.einsum("ni,kij,nj->nk", X, cam.quadratic_forms, X)
        assert_allclose_up_to_scale(u, cam.project_homogeneous(X), PROJECTION_RTOL)


def test_example2_pushbroom_form(rng):
    # eqs. (18) / (19): x -> ([m1 t1] x, [m2 t2] x / [m3 t3] x), with
    # the pushbroom camera B of the appendix (eq. (49)).
    P = np.array([[14.0, 9, -3, 8], [-3, 8, 10, 3], [6, 13, 5, 13]])
    cam = xslit.PushbroomCamera.from_matrix(P)
    np.testing.assert_array_equal(cam.A1, [[14.0, 9, -3, 8], [0, 0, 0, 1]])
    np.testing.assert_array_equal(cam.A2, P[1:])
    np.testing.assert_array_equal(cam.matrix, P)
    X = rng.normal(size=(100, 3))
    Xh = homogeneous_from_euclidean(X)
    a, b = Xh @ P[1], Xh @ P[2]
    expected = np.stack([Xh @ P[0], a / b], axis=1)
    # Each coordinate against the rounding its formula allows: a dot product is exact to the
    # sum of its terms' sizes, a quotient to the sum of its factors' relative errors.
    size = np.abs(Xh)
    scale = np.stack([size @ np.abs(P[0]),
                      np.abs(a / b) * (size @ np.abs(P[1]) / np.abs(a)
                                       + size @ np.abs(P[2]) / np.abs(b))], axis=1)
    assert (np.abs(cam.project(X) - expected) <= PUSHBROOM_FORM_RTOL * scale).all()
    # A pushbroom camera is a two-slit camera with one slit at infinity.
    assert isinstance(cam, xslit.TwoSlitCamera)
    slit1, _ = cam.slits
    np.testing.assert_allclose(slit1[:3], 0.0, atol=EXACT)
    # And it round-trips through its 3x4 matrix.
    again = xslit.PushbroomCamera.from_matrix(cam.matrix)
    np.testing.assert_array_equal(again.matrix, P)


def test_pushbroom_normalises_A1_and_keeps_its_scale(rng):
    A1 = np.array([[2.0, 4.0, -2.0, 6.0], [0, 0, 0, 2.0]])
    A2 = rng.normal(size=(2, 4))
    cam = xslit.PushbroomCamera(A1, A2)
    np.testing.assert_array_equal(cam.A1, A1 / 2.0)
    X = rng.normal(size=(10, 3))
    np.testing.assert_allclose(cam.project(X), xslit.TwoSlitCamera(A1, A2).project(X),
                               rtol=PUSHBROOM_FORM_RTOL)


# -- random cameras of every kind -----------------------------------------------------------


def _plane_basis(pi):
    """(4, 3) basis of the plane pi."""
    return null_space(np.asarray(pi)[None], rank=1).T


def _random_rational_frame(rng):
    return rng.normal(size=(4, 3))


def _make(kind, rng):
    """A random camera of ``kind`` and points it sees (or None when it sees none of them)."""
    if kind == "two_slit_parallel":
        cam = synthetic.random_two_slit_camera(rng, parallel=True)
    elif kind == "two_slit_non_parallel":
        cam = synthetic.random_two_slit_camera(rng, parallel=False)
    elif kind == "pushbroom":
        cam = synthetic.random_pushbroom_camera(rng, orthogonal=bool(rng.integers(2)))
    elif kind == "pinhole":
        cam = synthetic.random_pinhole_camera(rng)
    elif kind == "rational_pinhole":
        cam = RationalCamera.pinhole(np.append(rng.normal(size=3), 1.0),
                                     _random_rational_frame(rng))
    elif kind == "rational_two_slit":
        P = rng.normal(size=(4, 4))
        cam = RationalCamera.two_slit(line_from_points(P[0], P[1]),
                                      line_from_points(P[2], P[3]), _random_rational_frame(rng))
    elif kind.startswith("transversal_beta"):
        beta = int(kind[-1])
        cam = RationalCamera.transversal(rng.normal(size=beta), rng.normal(size=beta + 1),
                                         rng.normal(size=beta + 1), _random_rational_frame(rng))
        assert cam.beta == beta
    else:  # pragma: no cover
        raise AssertionError(kind)
    if isinstance(cam, RationalCamera):
        X = rng.normal(size=(4 * N_POINTS_PER_CAMERA, 3))
        X = X[cam.in_front(X)][:N_POINTS_PER_CAMERA]
    else:
        X = synthetic.random_points_in_front(cam, N_POINTS_PER_CAMERA, rng)
    return cam, X


KINDS = ["two_slit_parallel", "two_slit_non_parallel", "pushbroom", "pinhole",
         "rational_pinhole", "rational_two_slit", "transversal_beta2", "transversal_beta3"]


@pytest.mark.parametrize("kind", KINDS)
def test_ray_of_each_projected_pixel_contains_the_point(kind, rng):
    """For 1,000 seeded random cameras, the ray of each projected pixel contains the
    point (within RAY_RTOL), in Plücker form and in Open3D's origin + direction form, with the
    point at t >= 0 in front of the origin."""
    worst = {"join": 0.0, "klein": 0.0, "distance": 0.0, "reproject": 0.0, "unit": 0.0}
    t_min = np.inf
    n_points = 0
    for _ in range(N_CAMERAS):
        cam, X = _make(kind, rng)
        if len(X) == 0:
            continue
        n_points += len(X)
        Xh = homogeneous_from_euclidean(X)
        px = cam.project(X)
        assert px.shape == (len(X), 2) and px.dtype == np.float64
        assert np.all(np.isfinite(px))

        # Plücker form: the point is on the ray (L* x = 0) ...
        L = cam.rays_plucker(px)
        np.testing.assert_allclose(np.linalg.norm(L, axis=1), 1.0, rtol=ROUNDING_RTOL)
        join = np.linalg.norm(join_line_point(L, Xh), axis=1) / np.linalg.norm(Xh, axis=1)
        # ... and the ray meets three non-coplanar lines through the point (Klein incidence).
        Z = rng.normal(size=(3, len(X), 4))
        through = normalize_lines(line_from_points(Xh[None] / np.linalg.norm(Xh, axis=1)[:, None],
                                                   Z))
        klein = np.abs(klein_product(L[None], through)).max(axis=0)

        # Origin + unit direction form.
        R = cam.rays(px)
        assert R.shape == (len(X), 6) and R.dtype == np.float64
        o, d = R[:, :3], R[:, 3:]
        t = np.sum((X - o) * d, axis=1)
        dist = np.linalg.norm(X - o - t[:, None] * d, axis=1)
        scale = np.maximum(1.0, np.linalg.norm(X - o, axis=1))

        # Every point of the ray projects to the same pixel (the ray is the pre-image).
        Y = o + (t * rng.uniform(0.3, 3.0, size=len(t)))[:, None] * d
        px2 = cam.project(Y)
        rep = np.linalg.norm(px2 - px, axis=1) / np.maximum(1.0, np.linalg.norm(px, axis=1))

        worst["join"] = max(worst["join"], join.max())
        worst["klein"] = max(worst["klein"], klein.max())
        worst["distance"] = max(worst["distance"], (dist / scale).max())
        worst["reproject"] = max(worst["reproject"], rep.max())
        worst["unit"] = max(worst["unit"], np.abs(np.linalg.norm(d, axis=1) - 1).max())
        t_min = min(t_min, (t / scale).min())
    assert n_points >= N_CAMERAS * N_POINTS_PER_CAMERA // 2
    for name in ("join", "klein", "distance", "unit"):
        assert worst[name] <= RAY_RTOL, (name, worst)
    # Reprojection goes through a second division: allow the conditioning of the pixel.
    assert worst["reproject"] <= 1e3 * RAY_RTOL, worst
    assert t_min >= 0.0, t_min


@pytest.mark.parametrize("kind", ["two_slit_parallel", "pushbroom", "pinhole"])
def test_ray_origin_is_where_visibility_begins(kind, rng):
    # Beyond the origin the camera sees the ray; just before it (for two-slit cameras: behind
    # the later slit plane) it does not.
    for _ in range(100):
        cam, X = _make(kind, rng)
        R = cam.rays(cam.project(X))
        o, d = R[:, :3], R[:, 3:]
        assert np.all(cam.in_front(o + 1e-6 * d))
        if kind != "pushbroom":  # a pushbroom ray enters through its finite slit plane only
            assert not np.any(cam.in_front(o - 1e-6 * d))


def test_project_homogeneous_agrees_with_project(rng):
    for kind in KINDS:
        cam, X = _make(kind, rng)
        u = cam.project_homogeneous(X)
        assert u.shape == (len(X), 3)
        np.testing.assert_allclose(u[:, :2] / u[:, 2:], cam.project(X), rtol=EXACT)
        # Homogeneous input, scaled by -2, gives the same pixels.
        np.testing.assert_allclose(cam.project(-2 * homogeneous_from_euclidean(X)),
                                   cam.project(X), rtol=EXACT)


def test_points_accept_opencv_layout(rng):
    cam, X = _make("two_slit_parallel", rng)
    np.testing.assert_array_equal(cam.project(X[:, None, :]), cam.project(X))
    np.testing.assert_array_equal(cam.project(X[0]), cam.project(X[:1]))
    px = cam.project(X)
    np.testing.assert_array_equal(cam.rays(px[:, None, :]), cam.rays(px))
    np.testing.assert_array_equal(cam.project(X.astype(np.float32)),
                                  cam.project(X.astype(np.float32).astype(float)))


# -- the two-slit model: slits, frames, retinal planes ---------------------------------------


def _random_skew_slits(rng):
    cam = synthetic.random_two_slit_camera(rng, parallel=bool(rng.integers(2)))
    return cam.slits


def _random_intrinsic_frame(l1, l2, rng):
    """A random plane pi and Y = [s1 (l2 ^ pi), s2 (l1 ^ pi), y3] with random scales."""
    pi = np.append(rng.normal(size=3), rng.normal())
    y1 = meet_line_plane(l2, pi)
    y2 = meet_line_plane(l1, pi)
    y3 = _plane_basis(pi) @ rng.normal(size=3)
    s = rng.uniform(0.5, 2.0, size=3) * rng.choice([-1, 1], size=3)
    return np.stack([s[0] * y1, s[1] * y2, s[2] * y3], axis=1)


def test_slits_are_the_null_spaces(rng):
    for _ in range(200):
        A1, A2 = rng.normal(size=(2, 2, 4))
        cam = xslit.TwoSlitCamera(A1, A2)
        l1, l2 = cam.slits
        np.testing.assert_allclose([np.linalg.norm(l1), np.linalg.norm(l2)], 1.0,
                                   rtol=ROUNDING_RTOL)
        # Points of each slit (L w for planes w) are killed by its matrix and not by the other.
        W = rng.normal(size=(5, 4))
        p1 = W @ primal_matrix(l1).T
        p2 = W @ primal_matrix(l2).T
        assert np.abs(p1 @ A1.T).max() <= EXACT * np.abs(p1).max() * np.abs(A1).max()
        assert np.abs(p2 @ A2.T).max() <= EXACT * np.abs(p2).max() * np.abs(A2).max()
        assert np.abs(p1 @ A2.T).max() > NONZERO_RTOL * np.abs(p1).max() * np.abs(A2).max()
        # And they are the slits that rebuild the camera.
        assert_allclose_up_to_scale(l1, line_from_points(*null_space(A1, rank=2)), RAY_RTOL)
        assert_allclose_up_to_scale(l2, line_from_points(*null_space(A2, rank=2)), RAY_RTOL)


def test_from_slits_reproduces_the_rational_two_slit_camera(rng):
    # With an intrinsic frame, eq. (7) reduces to eq. (11).
    for _ in range(200):
        l1, l2 = _random_skew_slits(rng)
        Y = _random_intrinsic_frame(l1, l2, rng)
        lin = xslit.TwoSlitCamera.from_slits(l1, l2, Y)
        rat = RationalCamera.two_slit(l1, l2, Y)
        X = rng.normal(size=(20, 4))
        assert_allclose_up_to_scale(lin.project_homogeneous(X), rat.project_homogeneous(X),
                                    PROJECTION_RTOL)
        # The slits come back.
        m1, m2 = lin.slits
        assert_allclose_up_to_scale(m1, l1, RAY_RTOL)
        assert_allclose_up_to_scale(m2, l2, RAY_RTOL)
        # The exceptional line is y1 v y2 and lies in the retinal plane.
        assert_allclose_up_to_scale(lin.exceptional_line, line_from_points(Y[:, 0], Y[:, 1]),
                                    RAY_RTOL)


def test_retinal_frame_inverts_the_projection(rng):
    # TwoSlitCamera.retinal_frame(plane): the ray of u meets the plane at Y u, so projecting
    # Y u gives u back.
    for _ in range(200):
        cam = xslit.TwoSlitCamera(*rng.normal(size=(2, 2, 4)))
        delta = cam.exceptional_line
        plane = join_line_point(delta, rng.normal(size=4))
        Y = cam.retinal_frame(plane)
        u = np.column_stack([rng.normal(size=(20, 2)), np.ones(20)])
        y = u @ Y.T
        assert np.abs(y @ plane).max() <= EXACT * np.abs(y).max() * np.linalg.norm(plane)
        assert_allclose_up_to_scale(cam.project_homogeneous(y), u, PROJECTION_RTOL, axis=-1)
        # It is the retinal plane of the camera: the rational camera with this frame is the
        # same camera.
        rat = RationalCamera.two_slit(*cam.slits, Y)
        X = rng.normal(size=(20, 4))
        assert_allclose_up_to_scale(rat.project_homogeneous(X), cam.project_homogeneous(X),
                                    PROJECTION_RTOL)


def _transversal_planes(l1, l2, rng):
    """Two planes meeting along a random transversal delta to the slits l1, l2."""
    a = primal_matrix(l1) @ rng.normal(size=4)  # a point of l1
    b = primal_matrix(l2) @ rng.normal(size=4)  # a point of l2
    delta = line_from_points(a, b)
    return join_line_point(delta, rng.normal(size=4)), join_line_point(delta, rng.normal(size=4))


def test_lemma_homography_maps_retinal_projections_onto_each_other(rng):
    """The Lemma (retinal planes): planes meeting along a transversal; arbitrary frames on both;
    u2 ~ H u1 for the two RationalCamera.two_slit projections. 1,000 random configurations."""
    worst = 0.0
    for _ in range(N_CAMERAS):
        l1, l2 = _random_skew_slits(rng)
        pi1, pi2 = _transversal_planes(l1, l2, rng)
        Y1 = _plane_basis(pi1) @ rng.normal(size=(3, 3))
        Y2 = _plane_basis(pi2) @ rng.normal(size=(3, 3))
        c1 = RationalCamera.two_slit(l1, l2, Y1)
        c2 = RationalCamera.two_slit(l1, l2, Y2)
        X = rng.normal(size=(N_POINTS_PER_CAMERA, 3))
        u1, u2 = c1.project_homogeneous(X), c2.project_homogeneous(X)
        H = xslit.retinal_plane_homography(l1, l2, Y1, Y2)
        assert H.shape == (3, 3)
        worst = max(worst, projective_distance(u1 @ H.T, u2, axis=-1).max())
    assert worst <= HOMOGRAPHY_RTOL, worst


def test_lemma_homography_same_plane_is_change_of_frame(rng):
    l1, l2 = _random_skew_slits(rng)
    Y = rng.normal(size=(4, 3))
    T = rng.normal(size=(3, 3))
    H = xslit.retinal_plane_homography(l1, l2, Y, Y @ T)
    assert_allclose_up_to_scale(H, np.linalg.inv(T), HOMOGRAPHY_RTOL)


def test_lemma_homography_example():
    # Example planes x3 = x4 and x3 = 2 x4 contain the exceptional line {x3 = x4 = 0}, which
    # meets both slits; frames [e1, e2, (0,0,1,1)] and [e1, e2, (0,0,2,1)].
    Y2 = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 2], [0, 0, 1]])
    H = xslit.retinal_plane_homography(L1_EX, L2_EX, Y_EX1, Y2)
    c1 = RationalCamera.two_slit(L1_EX, L2_EX, Y_EX1)
    c2 = RationalCamera.two_slit(L1_EX, L2_EX, Y2)
    X = np.random.default_rng(0).normal(size=(20, 4))
    assert_allclose_up_to_scale(c1.project_homogeneous(X) @ H.T, c2.project_homogeneous(X),
                                HOMOGRAPHY_RTOL, axis=-1)


def test_planes_not_meeting_along_a_transversal_raise(rng):
    n_raised = 0
    for _ in range(200):
        l1, l2 = _random_skew_slits(rng)
        Y1 = rng.normal(size=(4, 3))
        Y2 = rng.normal(size=(4, 3))
        with pytest.raises(ValueError, match="transversal"):
            xslit.retinal_plane_homography(l1, l2, Y1, Y2)
        n_raised += 1
        # Also when the common line meets exactly one slit.
        a = primal_matrix(l1) @ rng.normal(size=4)
        delta = line_from_points(a, rng.normal(size=4))
        Y1 = _plane_basis(join_line_point(delta, rng.normal(size=4)))
        Y2 = _plane_basis(join_line_point(delta, rng.normal(size=4)))
        with pytest.raises(ValueError, match="frame1 and frame2"):
            xslit.retinal_plane_homography(l1, l2, Y1, Y2)
    assert n_raised == 200


# -- exceptional locus ----------------------------------------------------------------------


def _integer_two_slit_camera(rng):
    """A random two-slit camera with small integer matrices: points on its slits and on its
    exceptional line then have integer coordinates and lie *exactly* on the locus."""
    while True:
        A1, A2 = rng.integers(-5, 6, size=(2, 2, 4)).astype(float)
        try:
            return xslit.TwoSlitCamera(A1, A2)
        except ValueError:
            continue


def _integer_points_on(l, rng, n=3):
    """Integer points L w of an integer Plücker line (exact in floating point)."""
    return rng.integers(-4, 5, size=(n, 4)).astype(float) @ primal_matrix(l).T


def test_points_on_the_exceptional_locus_project_to_nan_silently(rng):
    for _ in range(100):
        cam = _integer_two_slit_camera(rng)
        A1, A2 = cam.A1, cam.A2
        on_slit1 = _integer_points_on(line_from_planes(A1[0], A1[1]), rng)
        on_slit2 = _integer_points_on(line_from_planes(A2[0], A2[1]), rng)
        on_delta = _integer_points_on(line_from_planes(A1[1], A2[1]), rng)
        # Image at infinity: on the plane A1[1] x = 0 but not on the exceptional line.
        at_inf = _integer_points_on(line_from_planes(A1[1], rng.integers(-5, 6, size=4)), rng)
        bad = np.vstack([on_slit1, on_slit2, on_delta, at_inf])
        assert np.all((bad @ A1.T == 0).all(axis=1) | (bad @ A2.T == 0).all(axis=1)
                      | (bad @ A1[1] == 0))
        good = rng.normal(size=(3, 4))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):  # NumPy floating-point errors would raise too
                px = cam.project(np.vstack([bad, good]))
                u = cam.project_homogeneous(np.vstack([bad, good]))
        assert np.all(np.isnan(px[:12]))
        assert np.all(np.isfinite(px[12:]))
        np.testing.assert_array_equal(u[:9], 0.0)  # psi vanishes on slits and delta
        np.testing.assert_array_equal(u[9:12, 2], 0.0)  # image at infinity
    # The paper's example camera: slits {x1 = x3 = 0}, {x2 = x3 + x4 = 0}, delta at infinity.
    ex = xslit.TwoSlitCamera(A1_EX, A2_EX)
    X = np.array([[0.0, 5, 0, 1], [3, 0, -1, 1], [2, 7, 0, 0], [1, 2, 3, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        px = ex.project(X)
    assert np.all(np.isnan(px[:3])) and np.all(np.isfinite(px[3]))


def _integer_line(rng):
    P = rng.integers(-5, 6, size=(2, 4)).astype(float)
    return line_from_points(P[0], P[1])


@pytest.mark.parametrize("kind", ["pushbroom", "pinhole", "rational_pinhole",
                                  "rational_two_slit", "transversal_beta2"])
def test_other_cameras_give_nan_without_warnings(kind, rng):
    if kind == "pushbroom":
        P = rng.integers(-5, 6, size=(3, 4)).astype(float)
        P[:, :3] += 10 * np.eye(3)  # invertible left block
        cam = xslit.PushbroomCamera.from_matrix(P)
        bad = _integer_points_on(line_from_planes(P[1], P[2]), rng, 1)  # the finite slit
    elif kind == "pinhole":
        cam = xslit.PinholeCamera([[1.0, 0, 0, 2], [0, 1, 0, -3], [0, 0, 1, 4]])
        bad = np.array([[-2.0, 3, -4, 1]])  # the centre
    elif kind == "rational_pinhole":
        cam = RationalCamera.pinhole([1.0, 2, 3, 1], rng.normal(size=(4, 3)))
        bad = np.array([[2.0, 4, 6, 2]])
    elif kind == "rational_two_slit":
        cam = RationalCamera.two_slit(_integer_line(rng), _integer_line(rng),
                                      rng.normal(size=(4, 3)))
        bad = _integer_points_on(np.array(cam.to_dict()["slit1"]), rng, 1)
    else:  # a point of the line delta = {x1 = x2 = 0} of the transversal congruence
        cam = RationalCamera.transversal([1.0, 2], [1.0, 0, 3], [0.0, 2, 1], rng.normal(size=(4, 3)))
        bad = np.array([[0.0, 0.0, 0.3, 1.0]])
    assert np.abs(bad).max() > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        px = cam.project(np.vstack([bad, rng.normal(size=(2, 4))]))
    assert np.all(np.isnan(px[0]))
    assert np.all(np.isfinite(px[1:]))


# -- serialisation ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_json_round_trip(kind, rng):
    cam, X = _make(kind, rng)
    text = json.dumps(cam.to_dict())
    again = xslit.camera_from_dict(json.loads(text))
    assert type(again) is type(cam)
    assert again.to_dict() == cam.to_dict()
    np.testing.assert_array_equal(again.project(X), cam.project(X))
    px = cam.project(X)
    np.testing.assert_array_equal(again.rays(px), cam.rays(px))
    copy = cam.copy()
    assert copy is not cam and copy.to_dict() == cam.to_dict()


def test_json_round_trip_of_the_paper_cameras():
    for cam in (xslit.TwoSlitCamera(A1_EX, A2_EX),
                xslit.PushbroomCamera.from_matrix([[14.0, 9, -3, 8], [-3, 8, 10, 3],
                                                   [6, 13, 5, 13]]),
                RationalCamera.two_slit(L1_EX, L2_EX, Y_EX1)):
        again = xslit.Camera.from_dict(json.loads(json.dumps(cam.to_dict())))
        assert again.to_dict() == cam.to_dict()


def test_custom_rational_camera_cannot_be_serialised():
    cam = RationalCamera(lambda X: line_from_points(X, [0, 0, 0, 1.0]), Y_EX1, 0)
    with pytest.raises(ValueError, match="custom essential map"):
        cam.to_dict()


def test_transform_changes_world_coordinates(rng):
    # x' = H x: the moved camera sees H x where the camera saw x.
    for kind in ("two_slit_parallel", "two_slit_non_parallel", "pushbroom", "pinhole"):
        cam, X = _make(kind, rng)
        H = synthetic.random_projective_transform(rng)
        if kind == "pushbroom":
            H[3] = [0, 0, 0, 1]  # affine: a pushbroom stays a pushbroom
        Xh = homogeneous_from_euclidean(X)
        moved = cam.transform(H)
        if kind == "pushbroom":
            assert isinstance(moved, xslit.PushbroomCamera)
        np.testing.assert_allclose(moved.project(Xh @ H.T), cam.project(X), rtol=PROJECTION_RTOL)
    # A pushbroom moved by a projective H is a general two-slit camera.
    cam, X = _make("pushbroom", rng)
    H = np.eye(4)
    H[3, :3] = 0.1
    moved = cam.transform(H)
    assert type(moved) is xslit.TwoSlitCamera
    np.testing.assert_allclose(moved.project(homogeneous_from_euclidean(X) @ H.T),
                               cam.project(X), rtol=PROJECTION_RTOL)


def test_dual_matrix_of_a_slit_builds_the_camera_rows():
    # p1 = l1 v y3, p2 = -(l1 v y1), q1 = l2 v y3, q2 = -(l2 v y2) (eq. (11)).
    P1, P2 = dual_matrix(L1_EX), dual_matrix(L2_EX)
    y1, y2, y3 = Y_EX1.T
    np.testing.assert_allclose(np.stack([P1 @ y3, -(P1 @ y1)]), A1_EX, atol=EXACT)
    np.testing.assert_allclose(np.stack([P2 @ y3, -(P2 @ y2)]), A2_EX, atol=EXACT)


# -- the demo (make demo) ------------------------------------------------------------------


def test_demo_checks_pass_and_failures_are_reported(capsys):
    import io

    from xslit import demo

    assert demo.main() == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and out.count("[ok]") >= 15
    buf = io.StringIO()

    def failing():
        """A failing check."""
        return [demo.Line("wrong", "1 != 2", False)]

    def raising():
        """A check that raises."""
        raise RuntimeError("boom")

    assert demo.run([demo.example1_plane_projection, failing], out=buf) is False
    assert "[FAIL] wrong" in buf.getvalue()
    buf = io.StringIO()
    assert demo.run([raising, demo.example1_plane_projection], out=buf) is False
    assert "raised RuntimeError: boom" in buf.getvalue() and "[ok]" in buf.getvalue()


# -- rays of a pixel grid -------------------------------------------------------------------
GRID_KINDS = [*KINDS, "two_slit_random", "pushbroom_any_motion", "two_slit_scaled_pushbroom"]
#: Random cameras per kind of the grid checks, and pixels per grid (columns, rows).
N_GRID_CAMERAS = 200
GRID_SHAPE = (23, 17)


def _grid_camera(kind, rng):
    """A camera of ``kind`` and a grid of pixels (x, y) around the images of points it sees."""
    if kind == "two_slit_random":  # any A1, A2: origins on either slit, either orientation
        cam = xslit.TwoSlitCamera(rng.normal(size=(2, 4)), rng.normal(size=(2, 4)))
        X = rng.normal(size=(50, 3))
    elif kind == "pushbroom_any_motion":  # flight direction m1 at any angle to the sensor
        cam = xslit.PushbroomCamera.from_matrix(rng.normal(size=(3, 4)))
        X = rng.normal(size=(50, 3))
    elif kind == "two_slit_scaled_pushbroom":  # slit 1 at infinity, A1 not normalised
        pb = synthetic.random_pushbroom_camera(rng, orthogonal=bool(rng.integers(2)))
        cam = xslit.TwoSlitCamera(rng.uniform(0.1, 10) * pb.A1, pb.A2)
        X = rng.normal(size=(50, 3))
    else:
        cam, X = _make(kind, rng)
    px = cam.project(X)
    px = px[np.isfinite(px).all(axis=1)]
    if len(px) < 2:
        px = rng.normal(scale=100, size=(2, 2))
    lo, hi = px.min(axis=0), px.max(axis=0)
    pad = 0.1 * (hi - lo) + 1.0
    x = np.sort(rng.uniform(lo[0] - pad[0], hi[0] + pad[0], size=GRID_SHAPE[0]))
    y = np.sort(rng.uniform(lo[1] - pad[1], hi[1] + pad[1], size=GRID_SHAPE[1]))
    return cam, x, y


@pytest.mark.parametrize("kind", GRID_KINDS)
def test_ray_grid_equals_the_rays_of_its_pixels(kind, rng):
    """``ray_grid(x, y).rays()[i, j]`` is ``rays([[x[j], y[i]]])``: origins relative to the
    largest origin and unit directions within RAY_RTOL, the same non-finite rays; two-slit,
    pushbroom and pinhole grids come from their separable terms, rational ones from ``rays``
    (exactly)."""
    separable = 0
    worst = 0.0
    for _ in range(N_GRID_CAMERAS):
        cam, x, y = _grid_camera(kind, rng)
        grid = cam.ray_grid(x, y)
        R = grid.rays()
        assert R.shape == (len(y), len(x), 6) and R.dtype == np.float64
        px = np.stack(np.meshgrid(x, y), axis=-1).reshape(-1, 2)
        ref = cam.rays(px).reshape(R.shape)
        separable += grid.separable
        if not grid.separable:
            np.testing.assert_array_equal(R, ref)
            continue
        finite = np.isfinite(ref).all(axis=-1)
        np.testing.assert_array_equal(np.isfinite(R).all(axis=-1), finite)
        scale = max(1.0, np.abs(ref[finite][:, :3]).max())
        err = max(np.abs(R[finite][:, :3] - ref[finite][:, :3]).max() / scale,
                  np.abs(R[finite][:, 3:] - ref[finite][:, 3:]).max())
        worst = max(worst, err)
        # A range of rows into a planar buffer gives those rows.
        planar = np.empty((6, 5, len(x)))
        part = grid.rays(3, 8, out=np.moveaxis(planar, 0, -1))
        assert np.shares_memory(part, planar)
        np.testing.assert_array_equal(part, R[3:8])
    assert worst <= RAY_RTOL, worst
    if kind.startswith(("rational", "transversal")):
        assert separable == 0
    else:
        assert separable >= GRID_SEPARABLE_FRACTION * N_GRID_CAMERAS, separable


def test_ray_grid_of_a_two_slit_camera_with_slit_2_at_infinity_uses_rays(rng):
    """A camera the separable form does not cover (slit 2 at infinity) gives ``rays``."""
    pb = synthetic.random_pushbroom_camera(rng)
    cam = xslit.TwoSlitCamera(pb.A2, pb.A1)  # the slits swapped
    x, y = np.linspace(-50, 50, 7), np.linspace(300, 400, 5)
    grid = cam.ray_grid(x, y)
    assert not grid.separable
    px = np.stack(np.meshgrid(x, y), axis=-1).reshape(-1, 2)
    np.testing.assert_array_equal(grid.rays(), cam.rays(px).reshape(5, 7, 6))


def test_ray_grid_empty_and_malformed(rng):
    cam = synthetic.random_two_slit_camera(rng)
    assert cam.ray_grid([], [1.0, 2.0]).rays().shape == (2, 0, 6)
    assert cam.ray_grid([1.0], []).rays().shape == (0, 1, 6)
    for bad in ([[1.0, 2.0]], [1.0, np.nan], "ab", None):
        with pytest.raises(ValueError, match=r"^x must"):
            cam.ray_grid(bad, [1.0])
    with pytest.raises(ValueError, match=r"^y must"):
        cam.ray_grid([1.0], [np.inf])
    grid = cam.ray_grid([1.0, 2.0, 3.0], [1.0, 2.0])
    for start, stop in ((1, 0), (-1, 2), (0, 3), (0.0, 1), (True, 2)):
        with pytest.raises(ValueError, match="start"):
            grid.rays(start, stop)
    for out in (np.empty((2, 3, 6), np.float32), np.empty((2, 3, 5)), [[0.0]],
                np.empty((2, 3, 6))[:, :, ::-1][:1]):
        with pytest.raises(ValueError, match=r"^out must"):
            grid.rays(out=out)
    frozen = np.empty((2, 3, 6))
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match=r"^out must"):
        grid.rays(out=frozen)
