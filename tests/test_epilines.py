"""Epipolar curves: coefficients (xslit.epipolar.curves, computeCorrespondEpilines), polylines
per branch clipped to the image, and their drawing."""

import numpy as np
import pytest

import xslit
from xslit.api.features import computeCorrespondEpilines, drawEpipolarCurves
from xslit.epipolar.curves import curve_distance, curves_from_points, polylines_from_curves
from xslit.features import draw_epipolar_curves
from xslit.synthetic import random_two_view_scene

KINDS = ("two_slit", "mixed", "pushbroom")
SEEDS = range(8)


def _scene_and_tensor(kind, seed, n=100):
    s = random_two_view_scene(seed, n=n, kind=kind)
    return s, xslit.computeEpipolarTensor(s["camera1"], s["camera2"])


def _hyperbola_branch(curves, points):
    """sign(a x + c): which side of the vertical asymptote each point is on."""
    a, _, c, _ = np.asarray(curves, float).T
    return np.sign(a * points[:, 0] + c)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("which", (1, 2))
def test_curve_passes_through_the_true_match(kind, which, tol):
    for seed in SEEDS:
        s, F = _scene_and_tensor(kind, seed)
        source, target = (s["points1"], s["points2"]) if which == 1 else (s["points2"],
                                                                         s["points1"])
        curves = computeCorrespondEpilines(source, which, F)
        assert curves.shape == (len(source), 4) and curves.dtype == np.float64
        np.testing.assert_allclose(np.linalg.norm(curves, axis=1), 1.0, rtol=tol.EXACT)
        assert curve_distance(curves, target).max() < tol.EPILINE_EXACT_PX


@pytest.mark.parametrize("kind", KINDS)
def test_curve_is_the_image_of_the_viewing_ray(kind, tol):
    s, F = _scene_and_tensor(kind, 3, n=20)
    curves = curves_from_points(F, s["points1"], 1)
    rays = s["camera1"].rays(s["points1"])  # (N, 6): origin, unit direction
    for t in (-3.0, 0.5, 2.0, 7.0):
        X = rays[:, :3] + t * rays[:, 3:]
        # Far along the ray the projection runs off to the asymptote; stay in a bounded range.
        p2 = s["camera2"].project(X)
        assert curve_distance(curves, p2).max() < tol.EPILINE_EXACT_PX * 100


def test_hyperbola_form_and_asymptotes(tol):
    # (a x + c)(a y + b) = bc - ad on the curve, with the asymptotes x = -c/a, y = -b/a.
    s, F = _scene_and_tensor("two_slit", 5, n=30)
    curves = curves_from_points(F, s["points1"], 1)
    a, b, c, d = curves.T
    x, y = s["points2"].T
    lhs = (a * x + c) * (a * y + b)
    np.testing.assert_allclose(lhs, b * c - a * d, atol=tol.EXACT)
    assert np.all(a != 0)


def test_curve_matches_the_tensor_residual(tol):
    # The curve is the tensor contracted with the point: a x'y' + b x' + c y' + d is
    # evaluate_tensor(F, p, p') up to the row's scale.
    rng = np.random.default_rng(0)
    F = rng.normal(size=(2, 2, 2, 2))
    p1, p2 = rng.uniform(0, 100, (10, 2)), rng.uniform(0, 100, (10, 2))
    from xslit.epipolar import evaluate_tensor

    e = evaluate_tensor(F, p1, p2)
    for which, (p, q) in ((1, (p1, p2)), (2, (p2, p1))):
        one = np.ones(len(p))
        raw = np.einsum("ijkl,ni,nj->nkl" if which == 1 else "ijkl,nk,nl->nij", F,
                        np.c_[p[:, 0], one], np.c_[p[:, 1], one]).reshape(-1, 4)
        curves = curves_from_points(F, p, which)
        scale = np.linalg.norm(raw, axis=1)
        a, b, c, d = curves.T
        x, y = q.T
        np.testing.assert_allclose((a * x * y + b * x + c * y + d) * scale, e,
                                   rtol=tol.EPILINE_RESIDUAL_RTOL)


def test_positive_scale_of_the_tensor_does_not_change_the_curves(tol):
    s, F = _scene_and_tensor("mixed", 1, n=10)
    np.testing.assert_allclose(curves_from_points(3.7 * F, s["points1"]),
                               curves_from_points(F, s["points1"]), rtol=tol.EXACT,
                               atol=tol.ULP_RTOL)
    np.testing.assert_allclose(curves_from_points(-F, s["points1"]),
                               -curves_from_points(F, s["points1"]), rtol=tol.EXACT,
                               atol=tol.ULP_RTOL)


def test_opencv_point_layout_and_singular_point():
    s, F = _scene_and_tensor("two_slit", 2, n=5)
    np.testing.assert_array_equal(curves_from_points(F, s["points1"][:, None, :]),
                                  curves_from_points(F, s["points1"]))
    # A point where the contraction vanishes gives an all-zero row, and no polyline.
    assert np.all(curves_from_points(np.zeros((2, 2, 2, 2)), [[1.0, 2.0]]) == 0)
    assert polylines_from_curves(np.zeros((1, 4)), (100, 80)) == [[]]


def _check_polylines(curves, polylines, size, step, tol):
    w, h = size
    eps = tol.EPILINE_BORDER_PX
    for curve, pieces in zip(curves, polylines, strict=True):
        for p in pieces:
            assert p.ndim == 2 and p.shape[1] == 2 and len(p) >= 1
            assert np.all((p[:, 0] >= -0.5 - eps) & (p[:, 0] <= w - 0.5 + eps))
            assert np.all((p[:, 1] >= -0.5 - eps) & (p[:, 1] <= h - 0.5 + eps))
            assert curve_distance(np.tile(curve, (len(p), 1)), p).max() < tol.EPILINE_VERTEX_PX
            # Consecutive vertices at most one step apart along each axis.
            assert np.all(np.abs(np.diff(p, axis=0)) <= step * (1 + tol.EPILINE_STEP_RTOL))
            # One branch per piece: never across the vertical asymptote.
            if curve[0] != 0 and curve[1] * curve[2] != curve[0] * curve[3]:
                side = _hyperbola_branch(np.tile(curve, (len(p), 1)), p)
                assert np.all(side == side[0])


def _distance_to_polylines(point, pieces):
    best = np.inf
    for p in pieces:
        if len(p) == 1:
            best = min(best, np.linalg.norm(p[0] - point))
            continue
        a, b = p[:-1], p[1:]
        ab = b - a
        t = np.clip(np.einsum("ij,ij->i", point - a, ab) / np.einsum("ij,ij->i", ab, ab), 0, 1)
        best = min(best, np.linalg.norm(a + t[:, None] * ab - point, axis=1).min())
    return best


@pytest.mark.parametrize("kind", KINDS)
def test_polylines_of_a_scene(kind, tol):
    s, F = _scene_and_tensor(kind, 4, n=40)
    size = (1000, 1000)  # random_two_view_scene's image
    for which, (p, q) in ((1, (s["points1"], s["points2"])), (2, (s["points2"], s["points1"]))):
        curves = curves_from_points(F, p, which)
        polylines = polylines_from_curves(curves, size, step=2.0)
        _check_polylines(curves, polylines, size, 2.0, tol)
        # The true match is on the drawn polyline (to the chords' sagitta), when in the image.
        inside = np.all((q >= -0.5) & (q <= 999.5), axis=1)
        d = [_distance_to_polylines(qi, pieces)
             for qi, pieces, keep in zip(q, polylines, inside, strict=True) if keep]
        assert max(d) < tol.EPILINE_POLYLINE_PX


def test_both_branches_inside_the_image(tol):
    # (x - 50)(y - 40) = 100: centre inside a 100 x 80 image, both branches visible.
    curve = np.array([[1.0, -40.0, -50.0, 1900.0]])
    pieces = polylines_from_curves(curve, (100, 80), step=0.5)[0]
    assert len(pieces) == 2
    _check_polylines(curve, [pieces], (100, 80), 0.5, tol)
    assert {np.sign(p[0, 0] - 50) for p in pieces} == {-1.0, 1.0}
    # Each branch runs from one border of the image to another.
    for p in pieces:
        for end in (p[0], p[-1]):
            assert min(abs(end[0] + 0.5), abs(end[0] - 99.5), abs(end[1] + 0.5),
                       abs(end[1] - 79.5)) < tol.EPILINE_BORDER_PX


def test_sharp_corner_of_a_nearly_degenerate_curve(tol):
    # (x - 50)(y - 40) = -1e-3: an L with a corner of radius ~0.04 px; both vertices are on
    # the polylines (the vertex samples), not cut by a chord.
    curve = np.array([[1.0, -40.0, -50.0, 2000.001]])
    pieces = polylines_from_curves(curve, (100, 80))[0]
    assert len(pieces) == 2
    _check_polylines(curve, [pieces], (100, 80), 1.0, tol)
    for side in (-1, 1):
        vertex = np.array([50.0, 40.0]) + np.sqrt(1e-3) * np.array([side, -side])
        assert _distance_to_polylines(vertex, pieces) < tol.EPILINE_VERTEX_PX


def test_line_and_degenerate_curves(tol):
    size = (100, 80)
    curves = np.array([
        [0.0, 1.0, -1.0, 0.0],     # the line y = x
        [0.0, 1.0, 0.0, -30.0],    # the vertical line x = 30
        [0.0, 0.0, 1.0, -20.0],    # the horizontal line y = 20
        [1.0, -40.0, -50.0, 2000.0],  # bc = ad: the asymptotes x = 50 and y = 40
        [1.0, 0.0, 0.0, -1e6],     # x y = 1e6: outside the image
    ])
    polylines = polylines_from_curves(curves, size)
    _check_polylines(curves, polylines, size, 1.0, tol)
    assert [len(p) for p in polylines] == [1, 1, 1, 2, 0]
    diag = polylines[0][0]
    np.testing.assert_allclose(diag[:, 0], diag[:, 1], atol=tol.EXACT)
    assert np.ptp(diag[:, 0]) == pytest.approx(80.0)
    np.testing.assert_allclose(polylines[1][0][:, 0], 30.0)
    assert np.ptp(polylines[1][0][:, 1]) == pytest.approx(80.0)
    np.testing.assert_allclose(polylines[2][0][:, 1], 20.0)
    vertical, horizontal = sorted(polylines[3], key=lambda p: np.ptp(p[:, 0]))
    np.testing.assert_allclose(vertical[:, 0], 50.0)
    np.testing.assert_allclose(horizontal[:, 1], 40.0)


def test_draw_epipolar_curves(tol):
    s, F = _scene_and_tensor("two_slit", 6, n=12)
    image = np.zeros((1000, 1000), np.uint8)
    curves = computeCorrespondEpilines(s["points1"], 1, F)
    pic = drawEpipolarCurves(image, curves)
    assert pic.shape == (1000, 1000, 3) and pic.dtype == np.uint8
    # Every true match lies on a drawn pixel of its own curve's colour.
    colors = xslit.features.curve_colors(len(curves)).astype(int)
    for q, color in zip(s["points2"], colors, strict=True):
        j, i = np.rint(q).astype(int)
        patch = pic[max(i - 1, 0):i + 2, max(j - 1, 0):j + 2].reshape(-1, 3).astype(int)
        # Anti-aliased (and other curves may cross nearby): some pixel next to the match has
        # the curve's hue.
        patch = patch[patch.max(axis=1) > 64]
        hue_error = np.abs(patch / patch.max(axis=1, keepdims=True) - color / color.max())
        assert hue_error.max(axis=1).min() < tol.EPILINE_HUE_ERROR
    # Nothing is drawn away from the curves.
    drawn = np.argwhere(pic.any(axis=2))[:, ::-1].astype(float)
    polylines = polylines_from_curves(curves, (1000, 1000))
    far = [min(_distance_to_polylines(p, pieces) for pieces in polylines)
           for p in drawn[:: max(1, len(drawn) // 300)]]
    assert max(far) < tol.EPILINE_DRAWN_PX


def test_draw_points_and_colors():
    curves = np.array([[0.0, 1.0, -1.0, 0.0]])
    pic = draw_epipolar_curves(np.zeros((50, 60, 3), np.uint8), curves, [[10.0, 40.0]],
                               colors=[[0, 0, 255]], radius=4)
    assert pic[:, :, :2].max() == 0 and pic[:, :, 2].max() > 200
    assert pic[40, 14, 2] > 0  # the circle around (10, 40), far from the line y = x


def test_bad_input():
    s, F = _scene_and_tensor("two_slit", 0, n=5)
    cce = computeCorrespondEpilines
    with pytest.raises(ValueError, match=r"^F must have shape \(2, 2, 2, 2\)"):
        cce(s["points1"], 1, np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match=r"^F must be"):
        cce(s["points1"], 1, None)
    with pytest.raises(ValueError, match=r"^points must have shape \(N, 2\)"):
        cce(np.zeros((5, 3)), 1, F)
    with pytest.raises(ValueError, match=r"^points must be finite"):
        cce([[np.nan, 1.0]], 1, F)
    for which in (0, 3, True, "1"):
        with pytest.raises(ValueError, match=r"^whichImage must be 1 or 2"):
            cce(s["points1"], which, F)
    with pytest.raises(ValueError, match=r"^curves must have shape \(N, 4\)"):
        polylines_from_curves(np.zeros((3, 3)), (10, 10))
    for size in ((0, 10), (10,), "ab", (10.5, 3), None):
        with pytest.raises(ValueError, match=r"^image_size must be"):
            polylines_from_curves(np.ones((1, 4)), size)
    for step in (0, -1.0, np.nan):
        with pytest.raises(ValueError, match=r"^step must be"):
            polylines_from_curves(np.ones((1, 4)), (10, 10), step=step)
    with pytest.raises(ValueError, match=r"^points must have one row per curve"):
        curve_distance(np.ones((2, 4)), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"^colors must have shape \(1, 3\)"):
        draw_epipolar_curves(np.zeros((5, 5), np.uint8), np.ones((1, 4)), colors=[[1, 2]])
    with pytest.raises(ValueError, match=r"^colors must be an RGB triple"):
        draw_epipolar_curves(np.zeros((5, 5), np.uint8), np.ones((1, 4)), colors=[[1, 2, 300]])
    with pytest.raises(ValueError, match=r"^image must be a uint8 image"):
        draw_epipolar_curves(np.zeros((5, 5)), np.ones((1, 4)))
    with pytest.raises(ValueError, match=r"^points must have one row per curve"):
        draw_epipolar_curves(np.zeros((5, 5), np.uint8), np.ones((1, 4)), np.ones((2, 2)))
