"""cv2-style feature matching and epipolar-curve functions (thin wrappers of
:mod:`xslit.features` and :mod:`xslit.epipolar.curves`).

Images are ``uint8`` RGB ``(H, W, 3)`` as ``xslit.renderImage(...)["image"]`` returns them, or
grayscale ``(H, W)``. OpenCV is imported on first call.
"""

from __future__ import annotations

import numpy as np

from ..epipolar.curves import curves_from_points
from ..features.drawing import (
    INLIER_COLOR,
    OUTLIER_COLOR,
    draw_epipolar_curves,
    draw_matches,
)
from ..features.matching import DEFAULT_RATIO, FeatureMatches, match_features

__all__ = [
    "computeCorrespondEpilines",
    "drawEpipolarCurves",
    "drawMatchesMask",
    "matchFeatures",
    "matchFeaturesExtended",
]


def matchFeaturesExtended(image1, image2, detector: str = "SIFT", matcher: str = "FLANN",
                          ratio: float = DEFAULT_RATIO, crossCheck: bool = True,
                          nfeatures: int | None = None, mask1=None, mask2=None, *,
                          rng=0) -> FeatureMatches:
    """Detect and match features; the full result (keypoints, indices, distances, ratios).

    Parameters are those of :func:`matchFeatures`.

    Returns
    -------
    xslit.features.FeatureMatches
        ``points1, points2`` (N, 2) float64, ``index1, index2`` (N,) rows of ``keypoints1,
        keypoints2`` (M, 2), ``distance`` and ``ratio`` (N,), best match first.
    """
    return match_features(image1, image2, detector=detector, matcher=matcher, ratio=ratio,
                          cross_check=crossCheck, nfeatures=nfeatures, mask1=mask1,
                          mask2=mask2, rng=rng)


def matchFeatures(image1, image2, detector: str = "SIFT", matcher: str = "FLANN",
                  ratio: float = DEFAULT_RATIO, crossCheck: bool = True,
                  nfeatures: int | None = None, mask1=None, mask2=None, *, rng=0):
    """Matched points of two images, ready for :func:`xslit.findEpipolarTensor`.

    SIFT or ORB keypoints (``cv2.SIFT_create`` / ``cv2.ORB_create``), nearest neighbours by
    FLANN (KD-trees for SIFT, LSH for ORB) or brute force (``cv2.BFMatcher``), Lowe's ratio
    test and, with ``crossCheck``, only mutual nearest neighbours.

    Parameters
    ----------
    image1, image2 : (H, W, 3) or (H, W) uint8 array_like
        RGB as ``xslit.renderImage(...)["image"]`` returns them, or grayscale.
    detector : {"SIFT", "ORB"}
        Case-insensitive.
    matcher : {"FLANN", "BF"}
        Case-insensitive.
    ratio : float in (0, 1]
        Lowe's ratio: keep a match whose distance is below ``ratio`` times the second
        nearest's. Default 0.75 (:data:`xslit.features.DEFAULT_RATIO`, with measured figures).
    crossCheck : bool
        Keep only mutual nearest neighbours (like ``cv2.BFMatcher(crossCheck=True)``, here
        combined with the ratio test).
    nfeatures : int, optional
        Keypoints per image, best first; default cv2's (SIFT: all, ORB: 500).
    mask1, mask2 : (H, W) array_like, optional
        Non-zero where keypoints may be detected, e.g. ``renderImage(...)["mask"]``.
    rng : None, int or numpy.random.Generator
        Seeds FLANN's randomised index (through ``cv2.setRNGSeed``): same seed, same matches.

    Returns
    -------
    points1, points2 : (N, 2) float64 ndarray
        Matched keypoints (x, y) of image 1 and image 2, best match (smallest ratio) first.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> img = (rng.random((120, 160)) * 255).astype(np.uint8)
    >>> p1, p2 = matchFeatures(img, np.roll(img, 5, axis=1))
    >>> p1.shape[1], p1.dtype
    (2, dtype('float64'))
    """
    m = matchFeaturesExtended(image1, image2, detector, matcher, ratio, crossCheck, nfeatures,
                              mask1, mask2, rng=rng)
    return m.points1, m.points2


def drawMatchesMask(image1, points1, image2, points2, mask=None, inlierColor=INLIER_COLOR,
                    outlierColor=OUTLIER_COLOR, maxMatches: int | None = None,
                    thickness: int = 1, radius: int = 3, rng=0) -> np.ndarray:
    """The match picture: both images side by side, inliers and outliers in two colours.

    The analogue of ``cv2.drawMatches`` with ``matchesMask`` taking point arrays and the
    ``(N, 1)`` mask of :func:`xslit.findEpipolarTensor`; unmatched keypoints are not drawn,
    and outliers are drawn (in ``outlierColor``) instead of hidden.

    Parameters
    ----------
    image1, image2 : (H, W, 3) or (H, W) uint8 array_like
        RGB as ``xslit.renderImage(...)["image"]`` returns them, or grayscale.
    points1, points2 : (N, 2) array_like
    mask : (N, 1) or (N,) array_like, optional
        Non-zero for inliers; default all inliers.
    inlierColor, outlierColor : RGB triple of int
        Default green and red.
    maxMatches : int, optional
        Draw a random subset of at most this many matches (seeded by ``rng``).
    thickness : int
    radius : int
        Circles at both ends of each match (0: none).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    picture : (max(H1, H2), W1 + W2, 3) uint8 ndarray
        RGB.

    Examples
    --------
    >>> img = np.zeros((20, 30, 3), np.uint8)
    >>> drawMatchesMask(img, [[5, 5]], img, [[6, 5]], [[1]]).shape
    (20, 60, 3)
    """
    return draw_matches(image1, points1, image2, points2, mask, inlier_color=inlierColor,
                        outlier_color=outlierColor, max_matches=maxMatches,
                        thickness=thickness, radius=radius, rng=rng)


def computeCorrespondEpilines(points, whichImage: int, F) -> np.ndarray:
    r"""Epipolar curves of points, the two-slit analogue of ``cv2.computeCorrespondEpilines``.

    A point of image ``whichImage`` gives, in the other image, the curve of its possible
    matches: the image of its viewing ray,

    .. math:: a\, x y + b\, x + c\, y + d = 0 ,

    a hyperbola with asymptotes :math:`x = -c/a`, :math:`y = -b/a` parallel to the image axes
    (a line when :math:`a = 0`). See :mod:`xslit.epipolar.curves`.

    Parameters
    ----------
    points : (N, 2) or (N, 1, 2) array_like
        Points (x, y) of image ``whichImage``.
    whichImage : {1, 2}
        1: points of image 1, curves in image 2; 2: the reverse.
    F : (2, 2, 2, 2) array_like
        Epipolar tensor, from :func:`xslit.findEpipolarTensor` or
        :func:`xslit.computeEpipolarTensor`.

    Returns
    -------
    curves : (N, 4) float64 ndarray
        Rows ``(a, b, c, d)`` of unit norm (cv2 returns ``(N, 1, 3)`` lines
        :math:`a x + b y + c = 0`); zero for a point singular for ``F``. The first-order
        distance of a point to its curve is
        :math:`|a x y + b x + c y + d| / \|(a y + b, a x + c)\|`
        (:func:`xslit.epipolar.curves.curve_distance`).

    Examples
    --------
    >>> import xslit
    >>> from xslit.synthetic import random_two_view_scene
    >>> s = random_two_view_scene(0, n=5)
    >>> F = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    >>> computeCorrespondEpilines(s["points2"], 2, F).shape
    (5, 4)
    """
    if isinstance(whichImage, bool) or whichImage not in (1, 2):
        raise ValueError(f"whichImage must be 1 or 2, got {whichImage!r}")
    return curves_from_points(F, points, whichImage)


def drawEpipolarCurves(image, curves, points=None, colors=None, thickness: int = 1,
                       radius: int = 4) -> np.ndarray:
    """Draw epipolar curves (and optionally the points they belong to) on a copy of an image.

    Each branch of a hyperbola is a separate anti-aliased polyline clipped to the image, so
    nothing is drawn across an asymptote.

    Parameters
    ----------
    image : (H, W, 3) or (H, W) uint8 array_like
        RGB as ``xslit.renderImage(...)["image"]`` returns it, or grayscale.
    curves : (N, 4) array_like
        From :func:`computeCorrespondEpilines` (curves in this image).
    points : (N, 2) array_like, optional
        One point per curve, drawn as a circle in its curve's colour (e.g. the matches in
        this image: each should lie on its curve).
    colors : (N, 3) array_like of int, optional
        RGB per curve; default distinct hues (:func:`xslit.features.curve_colors`).
    thickness : int
    radius : int

    Returns
    -------
    picture : (H, W, 3) uint8 ndarray
        RGB.

    Examples
    --------
    >>> drawEpipolarCurves(np.zeros((80, 100), np.uint8), [[1, -40, -50, 1900]]).shape
    (80, 100, 3)
    """
    return draw_epipolar_curves(image, curves, points, colors=colors, thickness=thickness,
                                radius=radius)
