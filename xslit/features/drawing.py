"""Pictures of matches and epipolar curves (OpenCV drawing, anti-aliased, sub-pixel).

Images are ``uint8`` RGB ``(H, W, 3)`` as :func:`xslit.renderImage` returns them (grayscale
accepted); colours are RGB triples. Unlike ``cv2.drawMatches``, only matched points are drawn,
never the unmatched keypoints.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._checks import check_image_points, check_mask, check_rng
from ..epipolar.curves import polylines_from_curves
from ._opencv import import_cv2
from .images import check_image, rgb_from_image

__all__ = ["INLIER_COLOR", "OUTLIER_COLOR", "curve_colors", "draw_epipolar_curves",
           "draw_matches"]

#: Default colours (RGB): inliers green, outliers red.
INLIER_COLOR = (0, 255, 0)
OUTLIER_COLOR = (255, 0, 0)
#: Sub-pixel precision of cv2's drawing: coordinates are multiplied by 2**_SHIFT.
_SHIFT = 4


def _check_color(name: str, color) -> tuple[int, int, int]:
    try:
        c = np.asarray(color, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an RGB triple of integers in 0..255, "
                         f"got {color!r}") from exc
    if c.shape != (3,) or not np.all((c >= 0) & (c <= 255) & (c == np.round(c))):
        raise ValueError(f"{name} must be an RGB triple of integers in 0..255, got {color!r}")
    return tuple(int(v) for v in c)


def _check_size(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _fixed(points: np.ndarray) -> np.ndarray:
    """Pixel coordinates as cv2's fixed-point int32 (``shift = _SHIFT``)."""
    return np.rint(points * (1 << _SHIFT)).astype(np.int32)


def draw_matches(image1, points1, image2, points2, mask=None, *,
                 inlier_color=INLIER_COLOR, outlier_color=OUTLIER_COLOR,
                 max_matches: int | None = None, thickness: int = 1, radius: int = 3,
                 rng=0) -> np.ndarray:
    """Two images side by side with their matches drawn, inliers and outliers in two colours.

    Each match is a line from its point in image 1 to its point in image 2 (shifted by image
    1's width) with a small circle at both ends; outliers are drawn first, inliers over them.
    Unmatched keypoints are not drawn.

    Parameters
    ----------
    image1, image2 : (H, W, 3) or (H, W) uint8 array_like
        RGB as ``xslit.renderImage(...)["image"]`` returns them, or grayscale.
    points1, points2 : (N, 2) array_like
        Matched points (x, y) ((N, 1, 2) accepted).
    mask : (N,) or (N, 1) array_like, optional
        Non-zero for inliers, as :func:`xslit.findEpipolarTensor` returns it; default: all
        inliers.
    inlier_color, outlier_color : RGB triple of int
    max_matches : int, optional
        Draw a random subset of at most this many matches, for readability.
    thickness : int
        Line thickness in pixels (>= 1).
    radius : int
        Radius of the circles at the ends (0: none).
    rng : None, int or numpy.random.Generator
        For the subset.

    Returns
    -------
    picture : (max(H1, H2), W1 + W2, 3) uint8 ndarray
        RGB; the shorter image is padded with black at the bottom.

    Examples
    --------
    >>> img = np.zeros((20, 30, 3), np.uint8)
    >>> pic = draw_matches(img, [[5, 5], [10, 10]], img, [[6, 5], [11, 10]], [1, 0])
    >>> pic.shape, pic[10, 20].tolist()  # on the outlier's line, anti-aliased
    ((20, 60, 3), [232, 0, 0])
    """
    cv2 = import_cv2()
    image1 = check_image("image1", image1)
    image2 = check_image("image2", image2)
    points1 = check_image_points("points1", points1)
    points2 = check_image_points("points2", points2)
    if len(points1) != len(points2):
        raise ValueError(f"points1 and points2 must have the same number of rows, got "
                         f"{len(points1)} and {len(points2)}")
    inlier = check_mask("mask", mask, len(points1))
    inlier_color = _check_color("inlier_color", inlier_color)
    outlier_color = _check_color("outlier_color", outlier_color)
    thickness = _check_size("thickness", thickness, 1)
    radius = _check_size("radius", radius, 0)
    rng = check_rng(rng)
    (h1, w1), (h2, w2) = image1.shape[:2], image2.shape[:2]
    picture = np.zeros((max(h1, h2), w1 + w2, 3), np.uint8)
    picture[:h1, :w1] = rgb_from_image(image1)
    picture[:h2, w1:] = rgb_from_image(image2)
    keep = np.arange(len(points1))
    if max_matches is not None:
        max_matches = _check_size("max_matches", max_matches, 1)
        if len(keep) > max_matches:
            keep = np.sort(rng.choice(keep, size=max_matches, replace=False))
    ends1 = _fixed(points1[keep])
    ends2 = _fixed(points2[keep] + np.array([w1, 0.0]))
    order = np.argsort(inlier[keep], kind="stable")  # outliers first, inliers drawn over them
    for n in order:
        color = inlier_color if inlier[keep[n]] else outlier_color
        p, q = tuple(ends1[n].tolist()), tuple(ends2[n].tolist())
        cv2.line(picture, p, q, color, thickness, cv2.LINE_AA, _SHIFT)
        if radius:
            cv2.circle(picture, p, radius << _SHIFT, color, 1, cv2.LINE_AA, _SHIFT)
            cv2.circle(picture, q, radius << _SHIFT, color, 1, cv2.LINE_AA, _SHIFT)
    return picture


def curve_colors(n: int) -> np.ndarray:
    """``n`` distinct saturated RGB colours (hues spaced by the golden angle), deterministic.

    Returns
    -------
    colors : (n, 3) uint8 ndarray

    Examples
    --------
    >>> curve_colors(3)
    array([[255,   0,   0],
           [  0,  74, 255],
           [149, 255,   0]], dtype=uint8)
    """
    hue = (np.arange(n) * 0.6180339887498949) % 1.0
    # HSV to RGB with S = V = 1.
    k = (np.array([5.0, 3.0, 1.0]) + 6.0 * hue[:, None]) % 6.0
    rgb = 1.0 - np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)
    return np.rint(255 * rgb).astype(np.uint8)


def draw_epipolar_curves(image, curves, points=None, *, colors=None, thickness: int = 1,
                         radius: int = 4, step: float = 1.0) -> np.ndarray:
    r"""Draw epipolar curves :math:`a x y + b x + c y + d = 0` (and optionally points) on an image.

    Each curve is drawn branch by branch (see
    :func:`xslit.epipolar.curves.polylines_from_curves`), so nothing is drawn across an
    asymptote.

    Parameters
    ----------
    image : (H, W, 3) or (H, W) uint8 array_like
        RGB as ``xslit.renderImage(...)["image"]`` returns it, or grayscale.
    curves : (N, 4) array_like
        Rows ``(a, b, c, d)``, e.g. from :func:`xslit.computeCorrespondEpilines`.
    points : (N, 2) array_like, optional
        One point per curve (e.g. the matches in this image), drawn as circles in the
        curve's colour.
    colors : (N, 3) array_like of int, optional
        RGB per curve; default :func:`curve_colors`.
    thickness : int
    radius : int
        Radius of the points' circles.
    step : float
        Vertex spacing of the polylines, in pixels.

    Returns
    -------
    picture : (H, W, 3) uint8 ndarray
        An RGB copy of ``image`` with the curves drawn.

    Examples
    --------
    >>> pic = draw_epipolar_curves(np.zeros((80, 100), np.uint8), [[1, -40, -50, 1900]])
    >>> pic.shape, int(np.count_nonzero(pic.any(axis=2))) > 100
    ((80, 100, 3), True)
    """
    cv2 = import_cv2()
    image = check_image("image", image)
    h, w = image.shape[:2]
    polylines = polylines_from_curves(curves, (w, h), step=step)
    n = len(polylines)
    if points is not None:
        points = check_image_points("points", points)
        if len(points) != n:
            raise ValueError(f"points must have one row per curve ({n}), got {len(points)}")
    if colors is None:
        colors = curve_colors(n)
    else:
        colors = np.asarray(colors)
        if colors.shape != (n, 3):
            raise ValueError(f"colors must have shape ({n}, 3), got {colors.shape}")
        colors = np.array([_check_color("colors", c) for c in colors])
    thickness = _check_size("thickness", thickness, 1)
    radius = _check_size("radius", radius, 0)
    picture = rgb_from_image(image)
    for m, pieces in enumerate(polylines):
        color = tuple(int(v) for v in colors[m])
        if pieces:
            cv2.polylines(picture, [_fixed(p) for p in pieces], False, color, thickness,
                          cv2.LINE_AA, _SHIFT)
        if points is not None and radius:
            cv2.circle(picture, tuple(_fixed(points[m]).tolist()), radius << _SHIFT, color,
                       thickness, cv2.LINE_AA, _SHIFT)
    return picture
