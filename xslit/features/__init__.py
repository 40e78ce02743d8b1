"""Feature detection and matching with OpenCV (SIFT or ORB, FLANN or brute force, Lowe's ratio
test, mutual check) and pictures of matches and epipolar curves.

Images are ``uint8`` RGB ``(H, W, 3)`` as :func:`xslit.renderImage` returns them, or grayscale.
OpenCV loads on first use: importing this package does not import cv2.
"""

from .dense import densify_matches
from .drawing import (
    INLIER_COLOR,
    OUTLIER_COLOR,
    curve_colors,
    draw_epipolar_curves,
    draw_matches,
)
from .images import check_detection_mask, check_image, gray_from_image, rgb_from_image
from .matching import (
    DEFAULT_RATIO,
    DETECTORS,
    MATCHERS,
    FeatureMatches,
    check_detector,
    check_matcher,
    check_ratio,
    detect_features,
    match_descriptors,
    match_features,
)

__all__ = [
    "DEFAULT_RATIO",
    "DETECTORS",
    "INLIER_COLOR",
    "MATCHERS",
    "OUTLIER_COLOR",
    "FeatureMatches",
    "check_detection_mask",
    "check_detector",
    "check_image",
    "check_matcher",
    "check_ratio",
    "curve_colors",
    "densify_matches",
    "detect_features",
    "draw_epipolar_curves",
    "draw_matches",
    "gray_from_image",
    "match_descriptors",
    "match_features",
    "rgb_from_image",
]
