"""Denser correspondences from sparse matches: a grid of points tracked by Lucas-Kanade.

Sparse feature matches leave most of an image without a correspondence, and a point cloud
triangulated from them is too sparse to describe a surface. Where the two views see the
same smooth surface, the displacement between them varies slowly: interpolated from the
sparse matches, it is a good start for pyramidal Lucas-Kanade (Bouguet's implementation in
OpenCV), which refines each grid point to sub-pixel accuracy on the image texture. A point is
kept when tracking it back from the second image returns within ``fb_threshold`` of where it
started (forward-backward consistency, Kalal et al. 2010) and, given the epipolar tensor, when
its Sampson distance is below ``threshold`` pixels.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_image_points, check_positive_int, check_threshold
from ..epipolar import sampson_distance
from ._opencv import import_cv2
from .images import check_detection_mask, check_image, gray_from_image

__all__ = ["densify_matches"]


def densify_matches(image1, image2, points1, points2, F=None, *, step: int = 6,
                    threshold: float = 1.0, fb_threshold: float = 0.5, window: int = 15,
                    levels: int = 3, mask1=None):
    """Correspondences on a grid of image 1, tracked into image 2 from sparse matches.

    Parameters
    ----------
    image1, image2 : (H, W, 3) or (H, W) uint8 array_like
        RGB or grayscale.
    points1, points2 : (N, 2) array_like
        Sparse matches (e.g. the inliers of :func:`xslit.findEpipolarTensor`), N >= 3: their
        displacements, interpolated linearly (nearest outside their convex hull), start the
        tracking.
    F : (2, 2, 2, 2) array_like, optional
        Epipolar tensor: tracked points farther than ``threshold`` from it are dropped.
    step : int
        Grid spacing in pixels.
    threshold : float
        Largest Sampson distance to ``F``, pixels.
    fb_threshold : float
        Largest forward-backward tracking error, pixels.
    window : int
        Side of Lucas-Kanade's window, pixels (odd).
    levels : int
        Pyramid levels of Lucas-Kanade beyond the full resolution.
    mask1 : (H, W) bool array_like, optional
        Only grid points where it is True (e.g. a render's ``mask``).

    Returns
    -------
    q1, q2 : (M, 2) float64 ndarray
        The kept correspondences.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> img = (rng.uniform(0, 255, (40, 40)) // 1).astype(np.uint8)
    >>> import cv2
    >>> img = cv2.GaussianBlur(img, (5, 5), 1.0)
    >>> shifted = np.roll(img, 3, axis=1)  # image 2: image 1 moved 3 px right
    >>> p1 = np.array([[10.0, 10], [30, 12], [20, 30]])
    >>> q1, q2 = densify_matches(img, shifted, p1, p1 + [3, 0], step=8)
    >>> bool(np.allclose(q2 - q1, [3, 0], atol=0.05)), len(q1) > 4
    (True, True)
    """
    cv2 = import_cv2()
    img1 = gray_from_image(check_image("image1", image1))
    img2 = gray_from_image(check_image("image2", image2))
    p1 = check_image_points("points1", points1, min_count=3)
    p2 = check_image_points("points2", points2, min_count=3)
    if len(p1) != len(p2):
        raise ValueError(f"points1 and points2 must have the same number of points, got "
                         f"{len(p1)} and {len(p2)}")
    step = check_positive_int("step", step)
    window = check_positive_int("window", window, minimum=3)
    levels = check_positive_int("levels", levels, minimum=0)
    threshold = check_threshold("threshold", threshold)
    fb_threshold = check_threshold("fb_threshold", fb_threshold)
    h, w = img1.shape
    m1 = check_detection_mask("mask1", mask1, (h, w))
    ys, xs = np.mgrid[step // 2:h:step, step // 2:w:step]
    grid = np.column_stack([xs.ravel(), ys.ravel()]).astype(np.float64)
    if m1 is not None:
        grid = grid[m1[ys.ravel(), xs.ravel()] > 0]
    if not len(grid):
        return np.zeros((0, 2)), np.zeros((0, 2))
    from scipy.interpolate import LinearNDInterpolator, NearestNDInterpolator

    disp = p2 - p1
    start = LinearNDInterpolator(p1, disp)(grid)
    outside = ~np.isfinite(start).all(axis=1)
    if outside.any():
        start[outside] = NearestNDInterpolator(p1, disp)(grid[outside])
    g1 = grid.astype(np.float32)
    g2 = (grid + start).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01)
    size = (window | 1, window | 1)
    g2, ok, _ = cv2.calcOpticalFlowPyrLK(img1, img2, g1, g2, winSize=size, maxLevel=levels,
                                         criteria=criteria,
                                         flags=cv2.OPTFLOW_USE_INITIAL_FLOW)
    back, ok_back, _ = cv2.calcOpticalFlowPyrLK(img2, img1, g2, g1.copy(), winSize=size,
                                                maxLevel=levels, criteria=criteria,
                                                flags=cv2.OPTFLOW_USE_INITIAL_FLOW)
    keep = (ok[:, 0] == 1) & (ok_back[:, 0] == 1)
    keep &= np.linalg.norm(back - g1, axis=1) <= fb_threshold
    q1, q2 = grid[keep], g2[keep].astype(np.float64)
    inside = (q2[:, 0] >= 0) & (q2[:, 0] <= img2.shape[1] - 1) & (q2[:, 1] >= 0) \
        & (q2[:, 1] <= img2.shape[0] - 1)
    q1, q2 = q1[inside], q2[inside]
    if F is not None and len(q1):
        with np.errstate(divide="ignore", invalid="ignore"):
            d = sampson_distance(F, q1, q2)
        near = np.nan_to_num(d, nan=np.inf) <= threshold
        q1, q2 = q1[near], q2[near]
    return q1, q2
