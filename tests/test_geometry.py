"""Plücker line algebra and projective helpers (paper section 1.3, "Line geometry")."""

import numpy as np
import pytest
from tolerances import (
    COINCIDENCE_FRACTION,
    EXACT,
    KLEIN_DETERMINANT_RTOL,
    RAY_RTOL,
    ROUNDING_RTOL,
    ULP_RTOL,
)

from xslit.geometry import (
    dual_line,
    dual_matrix,
    euclidean_from_homogeneous,
    homogeneous_from_euclidean,
    is_on_klein_quadric,
    join_line_point,
    klein_product,
    line_from_origin_direction,
    line_from_planes,
    line_from_points,
    lines_intersect,
    matrix_from_rvec,
    meet_line_plane,
    normalize_lines,
    null_space,
    origin_direction_from_line,
    primal_matrix,
    rvec_from_matrix,
    skew,
)
from xslit.testing import assert_allclose_up_to_scale, projective_distance

N = 1000


def _rel(v, *scales):
    """Norm of v over the product of the norms of ``scales`` (per row)."""
    den = np.ones(v.shape[:-1])
    for s in scales:
        den = den * np.linalg.norm(s, axis=-1)
    return np.linalg.norm(v, axis=-1) / den


def _two_planes_through(x, y):
    """Two planes containing the points x, y (rows of the null space of [x; y]), (N, 4) each."""
    ns = null_space(np.stack([x, y], axis=-2), rank=2)  # (N, 2, 4)
    return ns[:, 0], ns[:, 1]


# -- conventions --------------------------------------------------------------------------


def test_plucker_coordinates_follow_the_paper_convention():
    # l = (l41, l42, l43, l23, l31, l12), l_ij = x_i y_j - x_j y_i (paper, section 1.3).
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([-2.0, 0.5, 7.0, 1.5])

    def lij(i, j):
        return x[i - 1] * y[j - 1] - x[j - 1] * y[i - 1]

    expected = [lij(4, 1), lij(4, 2), lij(4, 3), lij(2, 3), lij(3, 1), lij(1, 2)]
    np.testing.assert_allclose(line_from_points(x, y), expected, rtol=0, atol=EXACT)
    l = line_from_points(x, y)
    np.testing.assert_array_equal(dual_line(l), np.concatenate([l[3:], l[:3]]))


def test_finite_points_give_direction_and_moment():
    X, Y = np.array([1.0, -2.0, 0.5]), np.array([3.0, 1.0, -4.0])
    l = line_from_points(np.append(X, 1), np.append(Y, 1))
    np.testing.assert_allclose(l[:3], Y - X, atol=EXACT)
    np.testing.assert_allclose(l[3:], np.cross(X, Y), atol=EXACT)


# -- join and meet --------------------------------------------------------------------------


def test_line_through_points_equals_meet_of_planes(rng):
    x, y = rng.normal(size=(2, N, 4))
    u, v = _two_planes_through(x, y)
    assert_allclose_up_to_scale(line_from_planes(u, v), line_from_points(x, y), RAY_RTOL, axis=-1)


def test_line_does_not_depend_on_the_points_chosen(rng):
    x, y = rng.normal(size=(2, N, 4))
    a, b, c, d = rng.normal(size=(4, N, 1))
    l1 = line_from_points(x, y)
    l2 = line_from_points(a * x + b * y, c * x + d * y)  # scale det(a d - b c)
    np.testing.assert_allclose(l2, (a * d - b * c) * l1, rtol=0, atol=EXACT * np.abs(l2).max())


def test_line_of_coincident_points_is_zero():
    x = np.array([1.0, 2.0, 3.0, 1.0])
    np.testing.assert_array_equal(line_from_points(x, 2 * x), np.zeros(6))


def test_primal_matrix_is_x_yT_minus_y_xT(rng):
    x, y = rng.normal(size=(2, N, 4))
    L = primal_matrix(line_from_points(x, y))
    expected = x[:, :, None] * y[:, None, :] - y[:, :, None] * x[:, None, :]
    np.testing.assert_allclose(L, expected, rtol=0, atol=EXACT)
    np.testing.assert_array_equal(L, -np.swapaxes(L, -1, -2))


def test_dual_matrix_is_u_vT_minus_v_uT(rng):
    u, v = rng.normal(size=(2, N, 4))
    Lstar = dual_matrix(line_from_planes(u, v))
    expected = u[:, :, None] * v[:, None, :] - v[:, :, None] * u[:, None, :]
    np.testing.assert_allclose(Lstar, expected, rtol=0, atol=EXACT)


def test_dual_times_primal_is_zero(rng):
    x, y = rng.normal(size=(2, N, 4))
    l = line_from_points(x, y)
    L, Lstar = primal_matrix(l), dual_matrix(l)
    scale = np.linalg.norm(l, axis=-1)[:, None, None] ** 2
    assert np.abs(Lstar @ L / scale).max() < EXACT
    assert np.abs(L @ Lstar / scale).max() < EXACT


def test_join_line_point_is_the_plane_through_line_and_point(rng):
    x, y, z = rng.normal(size=(3, N, 4))
    l = line_from_points(x, y)
    w = join_line_point(l, z)
    np.testing.assert_allclose(w, np.einsum("nij,nj->ni", dual_matrix(l), z), atol=EXACT)
    for p in (x, y, z):
        assert (np.abs(np.sum(w * p, axis=-1)) / _rel(w) / _rel(p)).max() < RAY_RTOL
    # The plane through x, y, z is the cofactor vector of [x; y; z]: compare up to scale.
    M = np.stack([x, y, z], axis=-2)
    cof = np.stack([(-1) ** i * np.linalg.det(np.delete(M, i, axis=-1)) for i in range(4)], -1)
    assert_allclose_up_to_scale(w, cof, RAY_RTOL, axis=-1)


def test_join_with_a_point_on_the_line_is_zero(rng):
    x, y = rng.normal(size=(2, N, 4))
    a, b = rng.normal(size=(2, N, 1))
    l = line_from_points(x, y)
    w = join_line_point(l, a * x + b * y)
    assert _rel(w, l, a * x + b * y).max() < RAY_RTOL


def test_meet_line_plane_is_the_point_where_line_meets_plane(rng):
    x, y, w = rng.normal(size=(3, N, 4))
    l = line_from_points(x, y)
    p = meet_line_plane(l, w)
    np.testing.assert_allclose(p, np.einsum("nij,nj->ni", primal_matrix(l), w), atol=EXACT)
    # On the plane ...
    assert (np.abs(np.sum(p * w, axis=-1)) / _rel(p) / _rel(w)).max() < RAY_RTOL
    # ... and on the line: p = (w.y) x - (w.x) y by the definition L = x y^T - y x^T.
    expected = np.sum(w * y, -1, keepdims=True) * x - np.sum(w * x, -1, keepdims=True) * y
    np.testing.assert_allclose(p, expected, atol=EXACT * np.abs(expected).max())


def test_meet_with_a_plane_containing_the_line_is_zero(rng):
    x, y = rng.normal(size=(2, N, 4))
    u, v = _two_planes_through(x, y)
    l = line_from_points(x, y)
    a, b = rng.normal(size=(2, N, 1))
    assert _rel(meet_line_plane(l, a * u + b * v), l, a * u + b * v).max() < RAY_RTOL


def test_meet_of_two_planes_then_meet_with_third_plane_is_three_plane_point(rng):
    u, v, w = rng.normal(size=(3, N, 4))
    p = meet_line_plane(line_from_planes(u, v), w)
    for plane in (u, v, w):
        assert (np.abs(np.sum(p * plane, -1)) / _rel(p) / _rel(plane)).max() < RAY_RTOL


# -- Klein quadric and incidence ------------------------------------------------------------


def test_lines_lie_on_the_klein_quadric(rng):
    x, y = rng.normal(size=(2, N, 4))
    l = line_from_points(x, y)
    assert np.all(is_on_klein_quadric(l))
    assert (np.abs(klein_product(l, l)) / _rel(l) ** 2).max() < EXACT
    assert np.all(is_on_klein_quadric(line_from_planes(x, y)))


def test_random_six_vectors_are_not_lines(rng):
    v = rng.normal(size=(N, 6))
    off = np.abs(klein_product(v, v)) / np.sum(v * v, axis=-1)
    assert np.array_equal(is_on_klein_quadric(v), off <= 1e-9)
    assert np.mean(is_on_klein_quadric(v)) < COINCIDENCE_FRACTION


def test_klein_product_is_the_determinant_of_the_four_points(rng):
    # l . m* = det[x, y, x', y'] up to one global sign: zero iff the lines are coplanar.
    x, y, xp, yp = rng.normal(size=(4, N, 4))
    k = klein_product(line_from_points(x, y), line_from_points(xp, yp))
    det = np.linalg.det(np.stack([x, y, xp, yp], axis=-1))
    sign = np.sign(k[0] * det[0])
    np.testing.assert_allclose(k, sign * det, rtol=KLEIN_DETERMINANT_RTOL, atol=EXACT)


def test_incidence_of_two_lines(rng):
    x, y, z, w = rng.normal(size=(4, N, 4))
    l = line_from_points(x, y)
    meeting = line_from_points(x + 0.3 * y, z)  # shares the point x + 0.3 y with l
    skew_ = line_from_points(z, w)
    assert np.all(lines_intersect(l, meeting))
    assert np.all(lines_intersect(meeting, l))
    assert (np.abs(klein_product(l, meeting)) / _rel(l) / _rel(meeting)).max() < RAY_RTOL
    assert np.mean(lines_intersect(l, skew_)) < COINCIDENCE_FRACTION
    # Coplanar lines through a common point at infinity (parallel lines) also meet.
    P = np.array([[0.0, 0, 0, 1], [1, 0, 0, 1], [0, 1, 0, 1], [1, 1, 0, 1]])
    assert lines_intersect(line_from_points(P[0], P[1]), line_from_points(P[2], P[3]))
    assert not lines_intersect(line_from_points(P[0], P[1]),
                               line_from_points([0, 1, 1, 1.0], [0, 2, 1, 1.0]))


def test_normalize_lines(rng):
    l = rng.normal(size=(N, 6)) * rng.uniform(1e-3, 1e3, size=(N, 1))
    n = normalize_lines(l)
    np.testing.assert_allclose(np.linalg.norm(n, axis=-1), 1.0, rtol=ROUNDING_RTOL)
    assert_allclose_up_to_scale(n, l, ROUNDING_RTOL, axis=-1, positive=True)


# -- origin and direction -------------------------------------------------------------------


def test_origin_direction_from_line(rng):
    X, Y = rng.normal(size=(2, N, 3)) * 5
    l = line_from_points(homogeneous_from_euclidean(X), homogeneous_from_euclidean(Y))
    o, d = origin_direction_from_line(l)
    np.testing.assert_allclose(np.linalg.norm(d, axis=-1), 1.0, rtol=ROUNDING_RTOL)
    # Direction from X to Y.
    dXY = (Y - X) / np.linalg.norm(Y - X, axis=-1, keepdims=True)
    np.testing.assert_allclose(d, dXY, atol=EXACT)
    # Origin on the line, and closest to the world origin (orthogonal to the direction).
    off = np.cross(o - X, d)
    assert (np.linalg.norm(off, axis=-1) / np.maximum(1, np.linalg.norm(X, axis=-1))).max() < EXACT
    assert np.abs(np.sum(o * d, axis=-1)).max() < EXACT * np.abs(o).max()
    # Scale-invariant: -3 l is the same line with the opposite direction.
    o2, d2 = origin_direction_from_line(-3 * l)
    np.testing.assert_allclose(o2, o, atol=EXACT * np.abs(o).max())
    np.testing.assert_allclose(d2, -d, atol=ROUNDING_RTOL)


def test_line_from_origin_direction_round_trip(rng):
    o, d = rng.normal(size=(2, N, 3))
    l = line_from_origin_direction(o, d)
    assert np.all(is_on_klein_quadric(l))
    X1 = homogeneous_from_euclidean(o)
    X2 = homogeneous_from_euclidean(o + 2.5 * d)
    assert_allclose_up_to_scale(l, line_from_points(X1, X2), RAY_RTOL, axis=-1, positive=True)
    o2, d2 = origin_direction_from_line(l)
    assert (np.linalg.norm(np.cross(o2 - o, d), axis=-1)).max() < EXACT * np.abs(o).max() * 10
    assert_allclose_up_to_scale(d2, d, ROUNDING_RTOL, axis=-1, positive=True)


def test_line_at_infinity_has_no_origin():
    # Two points at infinity: the line lies in the plane at infinity (direction zero).
    l = line_from_points([1.0, 0, 0, 0], [0.0, 1, 0, 0])
    np.testing.assert_array_equal(l[:3], 0.0)
    o, d = origin_direction_from_line(np.stack([l, line_from_points([0, 0, 0, 1.0],
                                                                    [1, 0, 0, 1.0])]))
    assert np.all(np.isnan(o[0])) and np.all(np.isnan(d[0]))
    np.testing.assert_allclose(d[1], [1, 0, 0])


# -- projective helpers ---------------------------------------------------------------------


def test_homogeneous_conversions(rng):
    X = rng.normal(size=(N, 3))
    Xh = homogeneous_from_euclidean(X)
    np.testing.assert_array_equal(Xh[:, 3], 1.0)
    np.testing.assert_allclose(euclidean_from_homogeneous(Xh * 3.0), X, rtol=ULP_RTOL)
    with np.errstate(all="raise"):  # points at infinity: silent inf/NaN, no FloatingPointError
        out = euclidean_from_homogeneous(np.array([[1.0, 0, 0, 0], [0, 0, 0, 0]]))
    assert np.isinf(out[0, 0]) and np.all(np.isnan(out[1]))


def test_null_space(rng):
    A = rng.normal(size=(N, 2, 4))
    ns = null_space(A, rank=2)
    assert ns.shape == (N, 2, 4)
    assert np.abs(A @ np.swapaxes(ns, -1, -2)).max() < EXACT
    np.testing.assert_allclose(ns @ np.swapaxes(ns, -1, -2), np.broadcast_to(np.eye(2),
                                                                           (N, 2, 2)), atol=EXACT)
    one = null_space(A[:, :1, :3] * 0 + rng.normal(size=(N, 2, 3)))  # (N, 2, 3): rank 2
    assert one.shape == (N, 1, 3)


def test_skew_is_the_cross_product(rng):
    a, b = rng.normal(size=(2, N, 3))
    np.testing.assert_allclose(np.einsum("nij,nj->ni", skew(a), b), np.cross(a, b),
                               atol=ROUNDING_RTOL)


def test_rodrigues_matches_cv2(rng):
    cv2 = pytest.importorskip("cv2")
    rv = rng.normal(size=(200, 3)) * rng.choice([1e-10, 1e-5, 1.0, 3.0], size=(200, 1))
    R = matrix_from_rvec(rv)
    for r, Rk in zip(rv, R, strict=True):
        np.testing.assert_allclose(Rk, cv2.Rodrigues(r)[0], atol=EXACT)
    np.testing.assert_allclose(R @ np.swapaxes(R, -1, -2), np.broadcast_to(np.eye(3), R.shape),
                               atol=ROUNDING_RTOL)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=ROUNDING_RTOL)


def test_rodrigues_of_one_vector_equals_the_batched_formula(rng):
    # One vector takes a shorter path (the inner loops of pose refinements); its matrix is the
    # batched one bit for bit, near zero (the series) and away from it.
    rv = rng.normal(size=(300, 3)) * rng.choice([0.0, 1e-12, 1e-9, 1e-5, 1.0, 3.0],
                                                size=(300, 1))
    rv[::7, 0] = 0.0
    for r, Rk in zip(rv, matrix_from_rvec(rv), strict=True):
        np.testing.assert_array_equal(matrix_from_rvec(r), Rk)
    with np.errstate(invalid="ignore"):
        assert np.isnan(matrix_from_rvec([np.inf, 0.0, 0.0])).any()


def test_rvec_round_trip(rng):
    rv = rng.normal(size=(N, 3))
    rv *= rng.uniform(0, 3.0, size=(N, 1)) / np.linalg.norm(rv, axis=1, keepdims=True)
    np.testing.assert_allclose(rvec_from_matrix(matrix_from_rvec(rv)), rv, atol=EXACT)


def test_projective_distance_helper():
    # The helper itself must be able to fail (tests/ rely on it).
    a = np.array([1.0, 2.0, 3.0])
    assert projective_distance(a, -7 * a) < ULP_RTOL
    assert projective_distance(a, -7 * a, positive=True) >= 1
    assert abs(projective_distance([1.0, 0], [0.0, 1]) - 1) < ULP_RTOL
    assert projective_distance(np.zeros(3), a) == 1
    assert np.isnan(projective_distance([np.nan, 1.0], [1.0, 1.0]))
    batch = projective_distance(np.stack([a, a]), np.stack([2 * a, a[::-1]]), axis=-1)
    assert batch.shape == (2,) and batch[0] < ULP_RTOL and batch[1] > 0.1
    with pytest.raises(AssertionError, match="1 of 2 objects"):
        assert_allclose_up_to_scale(np.stack([a, a]), np.stack([2 * a, a[::-1]]), axis=-1)
    with pytest.raises(AssertionError, match="negative"):
        assert_allclose_up_to_scale(a, -a, positive=True)
    with pytest.raises(AssertionError):
        assert_allclose_up_to_scale([np.nan, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="same shape"):
        projective_distance(a, a[:2])
