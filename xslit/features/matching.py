r"""Feature detection and matching with OpenCV: SIFT or ORB, FLANN or brute force, Lowe's ratio
test and a mutual (cross) check.

A descriptor :math:`d_m` of image 1 is matched to its nearest neighbour :math:`d_{n_1}` in
image 2 when it passes Lowe's ratio test against the second nearest :math:`d_{n_2}`,

.. math:: \|d_m - d_{n_1}\| < r\, \|d_m - d_{n_2}\| ,

(D. Lowe, "Distinctive image features from scale-invariant keypoints", IJCV 2004, section 7.1)
and, with the cross check, when :math:`d_m` is also the nearest neighbour of :math:`d_{n_1}` in
image 1. The matched keypoints come out as ``(N, 2)`` float64 pixel arrays ready for
:func:`xslit.findEpipolarTensor`, best match first (smallest ratio), as PROSAC sampling wants.

OpenCV is imported on first use, never by ``import xslit``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .._checks import check_rng
from ._opencv import import_cv2
from .images import check_detection_mask, check_image, gray_from_image

__all__ = [
    "DEFAULT_RATIO",
    "DETECTORS",
    "MATCHERS",
    "FeatureMatches",
    "check_detector",
    "check_matcher",
    "check_ratio",
    "detect_features",
    "match_descriptors",
    "match_features",
]

#: Detector names (case-insensitive).
DETECTORS = ("SIFT", "ORB")
#: Matcher names (case-insensitive): FLANN (a KD-tree forest for SIFT, locality-sensitive
#: hashing for ORB) or exhaustive brute force (L2 for SIFT, Hamming for ORB).
MATCHERS = ("FLANN", "BF")
#: Default ratio of Lowe's test (Lowe suggests 0.8; OpenCV's tutorials use 0.7-0.75). On the
#: rendered X-slit room pair of the tests at 640x480 (SIFT, FLANN, mutual check), 0.75 gives 675
#: matches of which 98.1% lie within 2 px of the true correspondence; 0.8 gives 703 at 95.7%:
#: 11 more correct matches for 17 more wrong ones. Without the mutual check: 96.8% and 93.8%.
DEFAULT_RATIO = 0.75
#: cv2's own defaults of ``nfeatures`` (0: SIFT keeps every keypoint).
_DEFAULT_NFEATURES = {"SIFT": 0, "ORB": 500}
#: FLANN parameters of OpenCV's feature-matching tutorial (FLANN_INDEX_KDTREE = 1 with 5
#: trees; FLANN_INDEX_LSH = 6 with 6 tables of 12-bit keys), 50 checks.
_FLANN_INDEX = {"SIFT": {"algorithm": 1, "trees": 5},
                "ORB": {"algorithm": 6, "table_number": 6, "key_size": 12,
                        "multi_probe_level": 1}}
_FLANN_SEARCH = {"checks": 50}


def check_detector(detector) -> str:
    """Normalise a detector name to upper case; ValueError naming ``detector`` otherwise.

    Examples
    --------
    >>> check_detector("sift")
    'SIFT'
    """
    if not isinstance(detector, str) or detector.upper() not in DETECTORS:
        raise ValueError(f"detector must be one of {', '.join(DETECTORS)} (any case), "
                         f"got {detector!r}")
    return detector.upper()


def check_matcher(matcher) -> str:
    """Normalise a matcher name to upper case; ValueError naming ``matcher`` otherwise.

    Examples
    --------
    >>> check_matcher("bf")
    'BF'
    """
    if not isinstance(matcher, str) or matcher.upper() not in MATCHERS:
        raise ValueError(f"matcher must be one of {', '.join(MATCHERS)} (any case), "
                         f"got {matcher!r}")
    return matcher.upper()


def check_ratio(ratio) -> float:
    """Validate Lowe's ratio: a real number in (0, 1] (1 keeps every unambiguous match).

    Examples
    --------
    >>> check_ratio(0.75)
    0.75
    """
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real) or not 0 < ratio <= 1:
        raise ValueError(f"ratio must be a real number in (0, 1], got {ratio!r}")
    return float(ratio)


def _check_nfeatures(nfeatures, detector: str) -> int:
    if nfeatures is None:
        return _DEFAULT_NFEATURES[detector]
    minimum = 0 if detector == "SIFT" else 1
    if (isinstance(nfeatures, bool) or not isinstance(nfeatures, numbers.Integral)
            or nfeatures < minimum):
        raise ValueError(f"nfeatures must be None or an integer >= {minimum} for {detector}"
                         f"{' (0: all)' if detector == 'SIFT' else ''}, got {nfeatures!r}")
    return int(nfeatures)


def detect_features(image, detector: str = "SIFT", *, nfeatures: int | None = None,
                    mask=None, name: str = "image"):
    """Detect keypoints and compute their descriptors.

    Parameters
    ----------
    image : (H, W, 3) or (H, W) uint8 array_like
        RGB as ``xslit.renderImage(...)["image"]`` returns it, or grayscale.
    detector : {"SIFT", "ORB"}
    nfeatures : int, optional
        Keypoints to keep, best first; default cv2's (SIFT: 0, all; ORB: 500).
    mask : (H, W) array_like, optional
        Non-zero where keypoints may be detected (e.g. ``renderImage(...)["mask"]``).
    name : str
        Argument name used in error messages.

    Returns
    -------
    keypoints : (M, 2) float64 ndarray
        Keypoint positions (x, y), integer coordinates at pixel centres (cv2's convention).
    descriptors : (M, D) ndarray
        float32 (SIFT, D = 128) or uint8 (ORB, D = 32); ``(0, D)`` when nothing is found.

    Examples
    --------
    >>> img = np.zeros((64, 64), np.uint8); img[20:44, 20:44] = 255
    >>> kp, desc = detect_features(img)
    >>> kp.shape[1], desc.shape[1], desc.dtype
    (2, 128, dtype('float32'))
    """
    cv2 = import_cv2()
    image = check_image(name, image)
    detector = check_detector(detector)
    nfeatures = _check_nfeatures(nfeatures, detector)
    mask = check_detection_mask("mask", mask, image.shape[:2])
    gray = gray_from_image(image)
    if detector == "SIFT":
        algorithm, width, dtype = cv2.SIFT_create(nfeatures=nfeatures), 128, np.float32
    else:
        algorithm, width, dtype = cv2.ORB_create(nfeatures=nfeatures), 32, np.uint8
    keypoints, descriptors = algorithm.detectAndCompute(gray, mask)
    points = np.array([k.pt for k in keypoints], dtype=np.float64).reshape(-1, 2)
    if descriptors is None:
        descriptors = np.empty((0, width), dtype)
    return points, descriptors


def _knn(cv2, matcher: str, binary: bool, query: np.ndarray, train: np.ndarray, k: int,
         rng: np.random.Generator):
    """Nearest ``k`` train descriptors of each query: indices and distances, (Q, k) each,
    -1 and inf where fewer than k neighbours were found (LSH may find fewer)."""
    if matcher == "FLANN":
        # FLANN's randomised trees and hash tables draw from OpenCV's RNG.
        cv2.setRNGSeed(int(rng.integers(2**31)))
        m = cv2.FlannBasedMatcher(_FLANN_INDEX["ORB" if binary else "SIFT"], _FLANN_SEARCH)
    else:
        m = cv2.BFMatcher(cv2.NORM_HAMMING if binary else cv2.NORM_L2)
    pairs = m.knnMatch(query, train, k=k)
    index = np.full((len(query), k), -1, dtype=np.intp)
    dist = np.full((len(query), k), np.inf)
    rows = [(q, j, d.trainIdx, d.distance) for q, ds in enumerate(pairs) for j, d in enumerate(ds)]
    if rows:
        q, j, t, d = (np.array(c) for c in zip(*rows, strict=True))
        index[q, j], dist[q, j] = t, d
    return index, dist


def match_descriptors(descriptors1, descriptors2, *, matcher: str = "FLANN",
                      ratio: float = DEFAULT_RATIO, cross_check: bool = True, rng=0):
    r"""Match descriptors with Lowe's ratio test and optionally a mutual check.

    Parameters
    ----------
    descriptors1 : (M1, D) ndarray
    descriptors2 : (M2, D) ndarray
        float32 (L2 distance, FLANN KD-trees) or uint8 binary (Hamming distance, FLANN LSH).
    matcher : {"FLANN", "BF"}
    ratio : float in (0, 1]
        A match is kept when its distance is below ``ratio`` times the second nearest's.
    cross_check : bool
        Also require descriptor 1 to be the nearest neighbour of its match in image 2.
    rng : None, int or numpy.random.Generator
        Seeds FLANN's randomised index (through ``cv2.setRNGSeed``, which also seeds OpenCV's
        other random functions on this thread); brute force is deterministic.

    Returns
    -------
    index1, index2 : (N,) intp ndarray
        Matched rows of ``descriptors1`` and ``descriptors2``, best (smallest ratio) first.
    distance : (N,) float64 ndarray
        Descriptor distance of each match.
    ratios : (N,) float64 ndarray
        Distance over the second nearest neighbour's distance (< ``ratio``).

    Examples
    --------
    >>> d1 = np.eye(3, 8, dtype=np.float32); d2 = d1[[2, 0, 1]] + 0.01
    >>> i1, i2, dist, r = match_descriptors(d1, d2, matcher="BF")
    >>> i1.tolist(), i2.tolist()
    ([0, 1, 2], [1, 2, 0])
    """
    cv2 = import_cv2()
    matcher = check_matcher(matcher)
    ratio = check_ratio(ratio)
    rng = check_rng(rng)
    d1, d2 = np.asarray(descriptors1), np.asarray(descriptors2)
    for name, d in (("descriptors1", d1), ("descriptors2", d2)):
        if d.ndim != 2 or d.dtype not in (np.float32, np.uint8):
            raise ValueError(f"{name} must be an (M, D) float32 or uint8 array, got shape "
                             f"{d.shape} and dtype {d.dtype}")
    if d1.dtype != d2.dtype or d1.shape[1] != d2.shape[1]:
        raise ValueError(f"descriptors1 and descriptors2 must have the same width and dtype, "
                         f"got {d1.shape} {d1.dtype} and {d2.shape} {d2.dtype}")
    binary = d1.dtype == np.uint8
    empty = np.empty(0, np.intp)
    if len(d1) == 0 or len(d2) < 2:
        return empty, empty.copy(), np.empty(0), np.empty(0)
    index, dist = _knn(cv2, matcher, binary, d1, d2, 2, rng)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(dist[:, 1] > 0, dist[:, 0] / dist[:, 1], np.inf)
    keep = (index[:, 1] >= 0) & (dist[:, 0] < ratio * dist[:, 1])
    if cross_check:
        back, _ = _knn(cv2, matcher, binary, d2, d1, 1, rng)
        target = np.where(index[:, 0] >= 0, index[:, 0], 0)
        keep &= back[target, 0] == np.arange(len(d1))
    index1 = np.flatnonzero(keep)
    order = np.argsort(ratios[index1], kind="stable")
    index1 = index1[order]
    return (index1, index[index1, 0], dist[index1, 0].astype(np.float64),
            ratios[index1].astype(np.float64))


@dataclass(frozen=True)
class FeatureMatches:
    """Matches between two images, best first.

    Attributes
    ----------
    points1, points2 : (N, 2) float64 ndarray
        Matched keypoint positions (x, y) in image 1 and image 2, ready for
        :func:`xslit.findEpipolarTensor`.
    index1, index2 : (N,) intp ndarray
        Rows of ``keypoints1`` and ``keypoints2``.
    distance : (N,) float64 ndarray
        Descriptor distances (L2 for SIFT, Hamming for ORB).
    ratio : (N,) float64 ndarray
        Distance over the second nearest neighbour's, the ratio test's statistic.
    keypoints1 : (M1, 2) float64 ndarray
    keypoints2 : (M2, 2) float64 ndarray
        Every detected keypoint of each image.
    detector, matcher : str
    """

    points1: np.ndarray
    points2: np.ndarray
    index1: np.ndarray
    index2: np.ndarray
    distance: np.ndarray
    ratio: np.ndarray
    keypoints1: np.ndarray
    keypoints2: np.ndarray
    detector: str
    matcher: str

    def __len__(self) -> int:
        return len(self.points1)


def match_features(image1, image2, *, detector: str = "SIFT", matcher: str = "FLANN",
                   ratio: float = DEFAULT_RATIO, cross_check: bool = True,
                   nfeatures: int | None = None, mask1=None, mask2=None,
                   rng=0) -> FeatureMatches:
    """Detect features in two images and match them (ratio test, optional mutual check).

    Parameters
    ----------
    image1, image2 : (H, W, 3) or (H, W) uint8 array_like
        RGB images as ``xslit.renderImage(...)["image"]`` returns them, or grayscale.
    detector : {"SIFT", "ORB"}
    matcher : {"FLANN", "BF"}
        FLANN: KD-trees for SIFT, LSH for ORB; BF: exhaustive search.
    ratio : float in (0, 1]
        Lowe's ratio (default :data:`DEFAULT_RATIO`).
    cross_check : bool
        Keep only mutual nearest neighbours.
    nfeatures : int, optional
        Keypoints per image; default cv2's (SIFT: all, ORB: 500).
    mask1, mask2 : (H, W) array_like, optional
        Non-zero where keypoints may be detected in each image.
    rng : None, int or numpy.random.Generator
        Seeds FLANN's randomised index (see :func:`match_descriptors`): with the same seed
        the same images give the same matches.

    Returns
    -------
    FeatureMatches

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> img = (rng.random((120, 160)) * 255).astype(np.uint8)
    >>> m = match_features(img, np.roll(img, 5, axis=1))
    >>> shift = m.points2 - m.points1
    >>> bool(np.mean(np.all(np.abs(shift - [5, 0]) < 0.5, axis=1)) > 0.9)
    True
    """
    image1 = check_image("image1", image1)
    image2 = check_image("image2", image2)
    detector = check_detector(detector)
    matcher = check_matcher(matcher)
    ratio = check_ratio(ratio)
    rng = check_rng(rng)
    nfeatures = _check_nfeatures(nfeatures, detector)
    mask1 = check_detection_mask("mask1", mask1, image1.shape[:2])
    mask2 = check_detection_mask("mask2", mask2, image2.shape[:2])
    kp1, d1 = detect_features(image1, detector, nfeatures=nfeatures, mask=mask1, name="image1")
    kp2, d2 = detect_features(image2, detector, nfeatures=nfeatures, mask=mask2, name="image2")
    i1, i2, dist, ratios = match_descriptors(d1, d2, matcher=matcher, ratio=ratio,
                                             cross_check=bool(cross_check), rng=rng)
    return FeatureMatches(points1=kp1[i1], points2=kp2[i2], index1=i1, index2=i2,
                          distance=dist, ratio=ratios, keypoints1=kp1, keypoints2=kp2,
                          detector=detector, matcher=matcher)
