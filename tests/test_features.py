"""Feature matching (xslit.features, matchFeatures) on rendered X-slit views against the
renderer's ground truth, the match picture, and bad input."""

import subprocess
import sys

import numpy as np
import pytest

import xslit
from xslit.api.features import drawMatchesMask, matchFeatures, matchFeaturesExtended
from xslit.features import (
    DEFAULT_RATIO,
    FeatureMatches,
    draw_matches,
    gray_from_image,
    match_descriptors,
    match_features,
)

SIZE = (320, 240)


@pytest.fixture(scope="module")
def room_pair():
    """Two crossed-slit views of the textured room (the cameras of samples/xslit_stereo.py)."""
    from xslit.render import make_room_scene, pose_from_look_at

    w, h = SIZE
    scene = make_room_scene(0)
    intr = xslit.TwoSlitIntrinsics.from_parameters(fu=0.55 * w, fv=0.5 * 0.55 * w, u0=w / 2,
                                                   v0=h / 2, theta=np.radians(80), d=1.5)
    target = np.array([0.0, 0.0, -0.3])
    poses = [pose_from_look_at(eye, target) for eye in ([-0.4, -4.2, 0.4], [0.4, -4.2, 0.4])]
    cams = [xslit.composeTwoSlitProjection(intr, rv, tv) for rv, tv in poses]
    renders = [xslit.renderImage(scene, cam, SIZE, supersample=2) for cam in cams]
    return scene, cams, renders


def _true_matches(room_pair, points1):
    """Exact correspondence of each (sub-pixel) point of view 1 and its visibility in view 2:
    cast the point's own ray, project the hit with camera 2, and cast that pixel's ray back."""
    from xslit.render.raycast import cast_rays

    scene, (cam1, cam2), _ = room_pair
    rays1 = cam1.rays(points1)
    t1 = cast_rays(scene, rays1, 2)["t_hit"].astype(np.float64)
    X = rays1[:, :3] + np.where(np.isfinite(t1), t1, 0.0)[:, None] * rays1[:, 3:]
    p2 = cam2.project(X)
    rays2 = cam2.rays(p2)
    expected = np.einsum("ij,ij->i", X - rays2[:, :3], rays2[:, 3:])
    t2 = cast_rays(scene, rays2, 2)["t_hit"].astype(np.float64)
    visible = np.isfinite(t1) & (np.abs(t2 - expected) <= 1e-3 * np.maximum(1.0, expected))
    return p2, visible


def _fraction_correct(room_pair, m, tol):
    p2, visible = _true_matches(room_pair, m.points1)
    err = np.linalg.norm(p2 - m.points2, axis=1)
    return np.mean(visible & (err < tol.FEATURES_MATCH_PX))


@pytest.mark.render
@pytest.mark.parametrize("matcher", ["FLANN", "BF"])
@pytest.mark.parametrize("cross_check", [True, False])
def test_sift_matches_are_true_correspondences(room_pair, matcher, cross_check, tol):
    _, _, (r1, r2) = room_pair
    m = match_features(r1["image"], r2["image"], matcher=matcher, cross_check=cross_check)
    assert len(m) >= tol.FEATURES_SIFT_MIN_MATCHES
    assert _fraction_correct(room_pair, m, tol) >= tol.FEATURES_SIFT_MIN_CORRECT


@pytest.mark.render
@pytest.mark.parametrize("matcher", ["FLANN", "BF"])
def test_orb_matches_are_true_correspondences(room_pair, matcher, tol):
    _, _, (r1, r2) = room_pair
    m = match_features(r1["image"], r2["image"], detector="orb", matcher=matcher,
                       nfeatures=2000)
    assert m.detector == "ORB" and m.matcher == matcher
    assert len(m) >= tol.FEATURES_ORB_MIN_MATCHES
    assert _fraction_correct(room_pair, m, tol) >= tol.FEATURES_ORB_MIN_CORRECT


@pytest.mark.render
def test_result_fields_and_order(room_pair):
    _, _, (r1, r2) = room_pair
    m = matchFeaturesExtended(r1["image"], r2["image"])
    assert isinstance(m, FeatureMatches)
    n = len(m)
    for a in (m.points1, m.points2):
        assert a.shape == (n, 2) and a.dtype == np.float64
    np.testing.assert_array_equal(m.points1, m.keypoints1[m.index1])
    np.testing.assert_array_equal(m.points2, m.keypoints2[m.index2])
    assert np.all(m.ratio < DEFAULT_RATIO) and np.all(np.diff(m.ratio) >= 0)
    assert np.all(m.distance >= 0)
    # Mutual nearest neighbours: no keypoint is used twice.
    assert len(np.unique(m.index1)) == n and len(np.unique(m.index2)) == n
    # The cv2-style function returns the same points; the same seed, the same matches.
    p1, p2 = matchFeatures(r1["image"], r2["image"])
    np.testing.assert_array_equal(p1, m.points1)
    np.testing.assert_array_equal(p2, m.points2)


@pytest.mark.render
def test_smaller_ratio_keeps_a_subset(room_pair):
    _, _, (r1, r2) = room_pair
    pairs = {}
    for ratio in (0.6, 0.75, 1.0):
        m = match_features(r1["image"], r2["image"], matcher="BF", ratio=ratio)
        pairs[ratio] = set(zip(m.index1.tolist(), m.index2.tolist(), strict=True))
    assert pairs[0.6] < pairs[0.75] < pairs[1.0]


@pytest.mark.render
def test_detection_mask_and_grayscale(room_pair):
    _, _, (r1, r2) = room_pair
    w, h = SIZE
    mask1 = np.zeros((h, w), bool)
    mask1[:, w // 2:] = True
    m = match_features(r1["image"], r2["image"], mask1=mask1, matcher="BF")
    assert len(m) > 0 and np.all(m.keypoints1[:, 0] >= w // 2 - 1)
    # Grayscale input gives the matches of the RGB input (the same conversion).
    g = match_features(gray_from_image(r1["image"]), gray_from_image(r2["image"])[:, :, None],
                       mask1=mask1, matcher="BF")
    np.testing.assert_array_equal(g.points1, m.points1)


def test_gray_conversion_is_opencvs():
    # cv2.cvtColor(image, cv2.COLOR_RGB2GRAY), within one grey level (fixed-point rounding).
    import cv2

    img = np.random.default_rng(0).integers(0, 256, (40, 50, 3), dtype=np.uint8)
    diff = gray_from_image(img).astype(int) - cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    assert np.abs(diff).max() <= 1


@pytest.mark.render
def test_matches_feed_findEpipolarTensor(room_pair, tol):
    _, _, (r1, r2) = room_pair
    p1, p2 = matchFeatures(r1["image"], r2["image"])
    F, mask = xslit.findEpipolarTensor(p1, p2, xslit.USAC_DEFAULT, 1.5, rng=0)
    assert F is not None and mask.shape == (len(p1), 1)
    assert mask.mean() >= tol.FEATURES_SIFT_MIN_CORRECT


def _segment_distance(pixels, a, b):
    """Distance of each pixel (P, 2) to the nearest segment a[m] b[m] (M, 2)."""
    px, py = pixels[:, :1], pixels[:, 1:]
    abx, aby = b[:, 0] - a[:, 0], b[:, 1] - a[:, 1]
    dx, dy = px - a[:, 0], py - a[:, 1]  # (P, M)
    t = np.clip((dx * abx + dy * aby) / (abx * abx + aby * aby), 0.0, 1.0)
    return np.sqrt(np.min((dx - t * abx) ** 2 + (dy - t * aby) ** 2, axis=1))


@pytest.mark.render
def test_match_picture(room_pair):
    _, _, (r1, r2) = room_pair
    m = match_features(r1["image"], r2["image"])
    mask = np.ones((len(m), 1), np.uint8)
    mask[::5] = 0
    # Different heights: image 2 cropped, padded with black in the picture.
    img2 = r2["image"][:200]
    keep = m.points2[:, 1] < 199
    p1, p2, mask = m.points1[keep], m.points2[keep], mask[keep]
    pic = drawMatchesMask(r1["image"], p1, img2, p2, mask)
    w, h = SIZE
    assert pic.shape == (h, 2 * w, 3) and pic.dtype == np.uint8
    base = np.zeros_like(pic)
    base[:, :w] = r1["image"]
    base[:200, w:] = img2
    changed = np.argwhere(np.any(pic != base, axis=2))[:, ::-1].astype(float)
    # Inlier and outlier colours (anti-aliased over the texture) both present.
    colours = pic[changed[:, 1].astype(int), changed[:, 0].astype(int)].astype(int)
    green = np.all(np.abs(colours - (0, 255, 0)) <= 40, axis=1).sum()
    red = np.all(np.abs(colours - (255, 0, 0)) <= 40, axis=1).sum()
    assert green > 20 * len(p1) and red > 5 * (mask == 0).sum()
    # Everything drawn is near a match's line or its end circles: unmatched keypoints are not.
    a, b = p1, p2 + np.array([w, 0.0])
    assert _segment_distance(changed, a, b).max() <= 3 + 2
    unmatched = np.setdiff1d(np.arange(len(m.keypoints1)), m.index1)
    far = unmatched[_segment_distance(m.keypoints1[unmatched], a, b) > 8]
    assert len(far) > 20
    kp = np.rint(m.keypoints1[far]).astype(int)
    np.testing.assert_array_equal(pic[kp[:, 1], kp[:, 0]], base[kp[:, 1], kp[:, 0]])


def test_match_picture_subsample_and_defaults():
    img = np.full((30, 40), 90, np.uint8)
    rng = np.random.default_rng(1)
    p1 = rng.uniform(0, 39, (50, 2))
    p2 = rng.uniform(0, 29, (50, 2))
    full = draw_matches(img, p1, img, p2)
    few = draw_matches(img, p1, img, p2, max_matches=5, rng=3)
    np.testing.assert_array_equal(few, draw_matches(img, p1, img, p2, max_matches=5, rng=3))
    changed = lambda pic: np.count_nonzero(np.any(pic != 90, axis=2))  # noqa: E731
    assert 0 < changed(few) < changed(full)
    # No mask: every match an inlier (no red).
    assert not np.any((full[:, :, 0] > 150) & (full[:, :, 1] < 100))
    # An empty set of matches: the two images side by side.
    empty = draw_matches(img, np.empty((0, 2)), img, np.empty((0, 2)))
    assert empty.shape == (30, 80, 3) and np.all(empty == 90)


def test_import_does_not_load_opencv():
    code = ("import sys, xslit.features, xslit.api.features, xslit.epipolar.curves; "
            "print('cv2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_match_descriptors_small():
    d1 = np.eye(4, 8, dtype=np.float32)
    d2 = d1[[3, 0, 2, 1]] + 0.01
    for matcher in ("FLANN", "BF"):
        i1, i2, dist, ratio = match_descriptors(d1, d2, matcher=matcher)
        assert sorted(i1.tolist()) == [0, 1, 2, 3]
        np.testing.assert_array_equal(d2.argmax(axis=1)[i2], i1)
    # Too few descriptors to apply the ratio test: no matches.
    i1, i2, dist, ratio = match_descriptors(d1, d2[:1], matcher="BF")
    assert len(i1) == len(i2) == len(dist) == len(ratio) == 0


IMG = np.zeros((40, 50, 3), np.uint8)


@pytest.mark.parametrize("kwargs, pattern", [
    ({"image1": None}, r"^image1 must be an image array, got None"),
    ({"image2": None}, r"^image2 must be an image array, got None"),
    ({"image1": IMG.astype(float)}, r"^image1 must be a uint8 image"),
    ({"image2": np.zeros((40, 50, 2), np.uint8)}, r"^image2 must have shape \(H, W, 3\)"),
    ({"image1": np.zeros((0, 50, 3), np.uint8)}, r"^image1 must not be empty"),
    ({"image2": np.zeros(5, np.uint8)}, r"^image2 must have shape"),
    ({"detector": "SURF"}, r"^detector must be one of SIFT, ORB"),
    ({"detector": None}, r"^detector must be one of"),
    ({"matcher": "KNN"}, r"^matcher must be one of FLANN, BF"),
    ({"ratio": 0}, r"^ratio must be a real number in \(0, 1\]"),
    ({"ratio": 1.5}, r"^ratio must be"),
    ({"ratio": -0.1}, r"^ratio must be"),
    ({"ratio": True}, r"^ratio must be"),
    ({"ratio": "0.7"}, r"^ratio must be"),
    ({"nfeatures": -1}, r"^nfeatures must be None or an integer >= 0"),
    ({"nfeatures": 2.5}, r"^nfeatures must be"),
    ({"mask1": np.ones((10, 10), bool)}, r"^mask1 must have the image's shape \(40, 50\)"),
    ({"mask2": np.array([["a"]])}, r"^mask2 must be an \(H, W\) array"),
    ({"rng": "seed"}, r"^rng must be"),
])
def test_match_bad_input(kwargs, pattern):
    args = {"image1": IMG, "image2": IMG, **kwargs}
    with pytest.raises(ValueError, match=pattern):
        matchFeatures(**args)


def test_orb_nfeatures_must_be_positive():
    with pytest.raises(ValueError, match=r"^nfeatures must be None or an integer >= 1 for ORB"):
        match_features(IMG, IMG, detector="ORB", nfeatures=0)


@pytest.mark.parametrize("kwargs, pattern", [
    ({"image1": None}, r"^image1 must be an image array"),
    ({"image2": IMG.astype(np.float32)}, r"^image2 must be a uint8 image"),
    ({"points1": np.zeros((3, 3))}, r"^points1 must have shape \(N, 2\)"),
    ({"points2": np.zeros((2, 2))}, r"^points1 and points2 must have the same number"),
    ({"mask": np.ones(4)}, r"^mask must have shape \(3,\) or \(3, 1\)"),
    ({"inlierColor": (0, 300, 0)}, r"^inlier_color must be an RGB triple"),
    ({"outlierColor": (0, 0)}, r"^outlier_color must be an RGB triple"),
    ({"maxMatches": 0}, r"^max_matches must be an integer >= 1"),
    ({"thickness": 0}, r"^thickness must be an integer >= 1"),
    ({"radius": -1}, r"^radius must be an integer >= 0"),
])
def test_draw_bad_input(kwargs, pattern):
    args = {"image1": IMG, "points1": np.ones((3, 2)), "image2": IMG,
            "points2": np.ones((3, 2)), **kwargs}
    with pytest.raises(ValueError, match=pattern):
        drawMatchesMask(**args)
