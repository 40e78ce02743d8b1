"""cv2-style two-view functions: computeEpipolarTensor, findEpipolarTensor (and flags)."""

from __future__ import annotations

import logging
import numbers
from dataclasses import dataclass, fields

import numpy as np

from .._checks import check_image_points, check_rng, check_threshold
from ..cameras import TwoSlitCamera
from ..epipolar import MIN_LINEAR_POINTS, epipolar_tensor
from ..epipolar.estimate import estimate_epipolar_tensor, robust_options
from ..epipolar.minimal_sampling import check_sample_size
from ..robust import LMEDS, MSAC, PROSAC, RANSAC, UNIFORM, RobustOptions

__all__ = [
    "FM_13POINT",
    "FM_LINEAR",
    "FM_LMEDS",
    "FM_RANSAC",
    "LOCAL_OPTIM_INNER_LO",
    "LOCAL_OPTIM_NULL",
    "LSQ_POLISHER",
    "NONE_POLISHER",
    "SAMPLING_JOINT_DENSITY",
    "SAMPLING_PROSAC",
    "SAMPLING_UNIFORM",
    "SCORE_METHOD_LMEDS",
    "SCORE_METHOD_MSAC",
    "SCORE_METHOD_RANSAC",
    "USAC_ACCURATE",
    "USAC_DEFAULT",
    "UsacParams",
    "computeEpipolarTensor",
    "findEpipolarTensor",
]

log = logging.getLogger("xslit")

#: Linear estimate from all points (>= 15), pixels normalised per axis. cv2.FM_8POINT's value,
#: so that code written for cv2 asks for the linear solver.
FM_LINEAR = 2
#: The minimal solver: exactly 13 correspondences, every real tensor through them stacked as
#: ``(K, 2, 2, 2, 2)``, like cv2.FM_7POINT and with its value
#: (:func:`xslit.epipolar.minimal.solve_minimal`).
FM_13POINT = 1
#: Plain RANSAC (inlier count), then a refit on the inliers. Like cv2.FM_RANSAC.
FM_RANSAC = 8
#: Least median of squares (no threshold needed). Like cv2.FM_LMEDS.
FM_LMEDS = 4
#: The default: PROSAC sampling on the density of the matches in the joint image space
#: (:func:`xslit.robust.density_order`), MSAC score, preemptive verification, local
#: optimisation (LO+), final refit.
USAC_DEFAULT = 32
#: Uniform sampling (no assumption on the order), more local optimisation and a 0.999
#: confidence floor: slower, for data whose wrong matches are not scattered (repeated
#: structures can make consistent clusters of wrong matches).
USAC_ACCURATE = 36

#: Samplers of :class:`UsacParams` (cv2's numbers). ``SAMPLING_PROSAC`` takes the points in the
#: order given, best first (e.g. by descriptor distance), as in cv2.
SAMPLING_UNIFORM = 0
SAMPLING_PROSAC = 3
#: xslit's own: PROSAC on the density of the matches in the joint image space.
SAMPLING_JOINT_DENSITY = 101
SCORE_METHOD_RANSAC = 0
SCORE_METHOD_MSAC = 1
SCORE_METHOD_LMEDS = 3
LOCAL_OPTIM_NULL = 0
LOCAL_OPTIM_INNER_LO = 1
NONE_POLISHER = 0
LSQ_POLISHER = 1


@dataclass
class UsacParams:
    """Parameters of the robust estimator, mirroring ``cv2.UsacParams``.

    Unknown attributes cannot be set (the dataclass has fixed fields); values are validated
    when used. ``randomGeneratorState`` is the seed (0 by default, as in cv2: the same call
    gives the same answer; None draws fresh entropy).
    """

    confidence: float = 0.99
    maxIterations: int = 10000
    threshold: float = 1.5
    score: int = SCORE_METHOD_MSAC
    sampler: int = SAMPLING_UNIFORM
    loMethod: int = LOCAL_OPTIM_INNER_LO
    loIterations: int = 10
    loSampleSize: int = 8 * MIN_LINEAR_POINTS
    final_polisher: int = LSQ_POLISHER
    randomGeneratorState: int | None = 0

    def __setattr__(self, name, value):
        if name not in {f.name for f in fields(UsacParams)}:
            raise ValueError(f"UsacParams has no parameter {name!r}")
        object.__setattr__(self, name, value)

    def to_options(self) -> RobustOptions:
        check_threshold("params.threshold", self.threshold)
        _check_confidence("params.confidence", self.confidence)
        _check_iters("params.maxIterations", self.maxIterations)
        score = {SCORE_METHOD_RANSAC: RANSAC, SCORE_METHOD_MSAC: MSAC,
                 SCORE_METHOD_LMEDS: LMEDS}.get(self.score)
        if score is None:
            raise ValueError("params.score must be SCORE_METHOD_RANSAC, SCORE_METHOD_MSAC or "
                             f"SCORE_METHOD_LMEDS, got {self.score!r}")
        if self.sampler not in (SAMPLING_UNIFORM, SAMPLING_PROSAC, SAMPLING_JOINT_DENSITY):
            raise ValueError("params.sampler must be SAMPLING_UNIFORM, SAMPLING_PROSAC or "
                             f"SAMPLING_JOINT_DENSITY, got {self.sampler!r}")
        if self.loMethod not in (LOCAL_OPTIM_NULL, LOCAL_OPTIM_INNER_LO):
            raise ValueError("params.loMethod must be LOCAL_OPTIM_NULL or LOCAL_OPTIM_INNER_LO, "
                             f"got {self.loMethod!r}")
        if self.final_polisher not in (NONE_POLISHER, LSQ_POLISHER):
            raise ValueError("params.final_polisher must be NONE_POLISHER or LSQ_POLISHER, got "
                             f"{self.final_polisher!r}")
        _check_iters("params.loIterations", self.loIterations, minimum=0)
        _check_iters("params.loSampleSize", self.loSampleSize, minimum=MIN_LINEAR_POINTS + 1)
        return RobustOptions(
            method=score, threshold=float(self.threshold), confidence=float(self.confidence),
            sampler=UNIFORM if self.sampler == SAMPLING_UNIFORM else PROSAC,
            max_iterations=int(self.maxIterations),
            local_optimization=self.loMethod == LOCAL_OPTIM_INNER_LO,
            lo_iterations=int(self.loIterations),
            lo_sample_factor=max(1, int(self.loSampleSize) // MIN_LINEAR_POINTS),
            final_refit=self.final_polisher == LSQ_POLISHER)


def _check_confidence(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 < v < 1:
        raise ValueError(f"{name} must be in (0, 1), got {v!r}")


def _check_iters(name, v, minimum=1):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {v!r}")


def computeEpipolarTensor(camera1, camera2) -> np.ndarray:
    """Epipolar tensor of two two-slit cameras (Theorem 1, eq. (23)).

    Parameters
    ----------
    camera1, camera2 : TwoSlitCamera (or PushbroomCamera)

    Returns
    -------
    F : (2, 2, 2, 2) ndarray
        ``F[i, j, k, l]`` is the paper's ``f_(i+1)(j+1)(k+1)(l+1)``; matching pixels satisfy
        ``sum F[i,j,k,l] [x,1]_i [y,1]_j [x',1]_k [y',1]_l = 0``. Not normalised: the exact
        determinants of eq. (23).

    Examples
    --------
    >>> import xslit
    >>> A = xslit.TwoSlitCamera([[-1, 7, 4, 0], [8, -1, 13, 4]], [[11, 6, -2, 4], [8, -1, 13, -5]])
    >>> B = xslit.TwoSlitCamera([[14, 9, -3, 8], [0, 0, 0, 1]], [[-3, 8, 10, 3], [6, 13, 5, 13]])
    >>> np.round(xslit.computeEpipolarTensor(A, B)[1, 1]).astype(int)
    array([[   97,  -380],
           [-1259,  1425]])
    """
    for name, cam in (("camera1", camera1), ("camera2", camera2)):
        if not isinstance(cam, TwoSlitCamera):
            raise ValueError(f"{name} must be a TwoSlitCamera, got {type(cam).__name__}")
    return epipolar_tensor(camera1.A1, camera1.A2, camera2.A1, camera2.A2)


def findEpipolarTensor(points1, points2, method=USAC_DEFAULT, ransacReprojThreshold=1.5,
                       confidence=0.99, maxIters=10000, *, rng=0, sampleSize=MIN_LINEAR_POINTS):
    """Estimate the epipolar tensor from correspondences, like ``cv2.findFundamentalMat``.

    Also callable as ``findEpipolarTensor(points1, points2, params)`` with a
    :class:`UsacParams` (its ``randomGeneratorState`` seeds the sampler).

    Parameters
    ----------
    points1, points2 : (N, 2) or (N, 1, 2) array_like
        Matching pixels in the two images, N >= 15.
    method : int
        ``FM_LINEAR``, ``FM_RANSAC``, ``FM_LMEDS``, ``USAC_DEFAULT``, ``USAC_ACCURATE``, or
        ``FM_13POINT`` (exactly 13 correspondences: every real tensor through them, stacked
        ``(K, 2, 2, 2, 2)`` as cv2's FM_7POINT stacks its solutions, K <= 28).
    ransacReprojThreshold : float
        Inlier threshold on the first-order geometric (Sampson) distance, in pixels.
    confidence : float
        Desired probability that an all-inlier sample was drawn, in (0, 1).
    maxIters : int
    rng : None, int or numpy.random.Generator
        Randomness of the sampler. The default seed 0 makes the same call give the same
        answer, as cv2 does; None draws fresh entropy.
    sampleSize : {15, 13}
        Correspondences per sample of the robust methods (``FM_RANSAC``, ``FM_LMEDS``,
        ``USAC_DEFAULT``, ``USAC_ACCURATE``, :class:`UsacParams`). 15: the linear solution of
        each sample (about 0.02 ms with its residuals). 13: every real tensor of the
        minimal solver (:func:`xslit.epipolar.minimal.minimal_hypotheses`, about 0.8 ms per
        sample with numba, ``pip install 'xslit[fast]'``, many times more without). Uniform
        sampling then needs about ``w^2`` times the draws for an inlier ratio ``w`` (2.8
        times fewer at 40% outliers, 4 at 50%), which repays a sample costing at most 3-4
        times a 15-point one, not 60; with the default's PROSAC order both sizes usually stop
        after the same few samples. The 13-point option pays only beyond about 87% outliers,
        where neither search ends within ``maxIters`` (``tools/bench_minimal_sampling.py``).
        The rest of the estimate (local optimisation, the polish on the variety) is the
        same.

    Returns
    -------
    F : (2, 2, 2, 2) ndarray of unit Frobenius norm, or None on failure
        Every method returns a tensor on the variety of epipolar tensors: the robust loop (or
        all points, for ``FM_LINEAR``) selects the inliers, Taubin's fit of them starts a
        maximum-likelihood polish of the Sampson distances over the 13 parameters of the
        variety (:func:`xslit.epipolar.variety.refine_on_variety`). On failure the reason is
        logged on the ``xslit`` logger; use
        :func:`xslit.epipolar.estimate.estimate_epipolar_tensor` to get it as a value. It fails
        when the correspondences leave a family of tensors (points on one plane or line,
        identical cameras, pushbroom strips on one flight line), when too few remain to tell
        inliers from chance, or when no model has more support than chance gives.
    mask : (N, 1) uint8 ndarray
        1 for the inliers of the returned tensor (all ones for ``FM_LINEAR``).
    """
    if type(method).__module__.split(".")[0] == "cv2":
        raise ValueError(f"method must be an xslit flag or xslit.UsacParams, got "
                         f"{type(method).__module__}.{type(method).__name__}: build "
                         "xslit.UsacParams with the same fields instead")
    if isinstance(method, bool):
        raise ValueError(f"method must be an xslit flag (an int), got {method!r}")
    p1 = check_image_points("points1", points1)
    p2 = check_image_points("points2", points2)
    if len(p1) != len(p2):
        raise ValueError(f"points1 and points2 must have the same number of points, got "
                         f"{len(p1)} and {len(p2)}")
    sample_size = check_sample_size("sampleSize", sampleSize)
    if sample_size != MIN_LINEAR_POINTS and isinstance(method, numbers.Integral) \
            and method in (FM_LINEAR, FM_13POINT):
        raise ValueError(f"sampleSize must be {MIN_LINEAR_POINTS} with FM_LINEAR and FM_13POINT "
                         f"(it sets the samples of the robust methods), got {sampleSize!r}")
    if isinstance(method, numbers.Integral) and not isinstance(method, bool) \
            and method == FM_13POINT:
        return _thirteen_point(p1, p2, rng)
    if len(p1) < MIN_LINEAR_POINTS:
        raise ValueError(f"points1 must have shape (N, 2) with N >= {MIN_LINEAR_POINTS}, got "
                         f"{p1.shape}")
    order = None
    if isinstance(method, UsacParams):
        options = method.to_options()
        rng = check_rng(method.randomGeneratorState)
        linear = False
        if method.sampler == SAMPLING_PROSAC:
            order = np.arange(len(p1))
    else:
        rng = check_rng(rng)
        if method not in (FM_LINEAR, FM_RANSAC, FM_LMEDS, USAC_DEFAULT, USAC_ACCURATE):
            raise ValueError("method must be FM_LINEAR, FM_RANSAC, FM_LMEDS, USAC_DEFAULT or "
                             f"USAC_ACCURATE, got {method!r}")
        linear = method == FM_LINEAR
        if method != FM_LMEDS:
            check_threshold("ransacReprojThreshold", ransacReprojThreshold)
        _check_confidence("confidence", confidence)
        _check_iters("maxIters", maxIters)
        options = None if linear else robust_options(
            {FM_RANSAC: "ransac", FM_LMEDS: "lmeds", USAC_DEFAULT: "usac_default",
             USAC_ACCURATE: "usac_accurate"}[method], ransacReprojThreshold, confidence, maxIters)
    est = estimate_epipolar_tensor(p1, p2, options, rng, linear_only=linear, order=order,
                                   sample_size=sample_size)
    mask = est.inliers.astype(np.uint8)[:, None]
    if not est.success:
        log.warning("findEpipolarTensor failed: %s", est.reason)
        return None, mask
    return est.F, mask


def _thirteen_point(p1, p2, rng):
    """``findEpipolarTensor(..., FM_13POINT)``: every real tensor through 13 correspondences."""
    from ..epipolar.minimal import solve_minimal

    if len(p1) != 13:
        raise ValueError(f"points1 must have shape (13, 2) for FM_13POINT, got {p1.shape}")
    sol = solve_minimal(p1, p2, rng=check_rng(rng))
    mask = np.ones((13, 1), np.uint8)
    if len(sol.tensors) == 0:
        log.warning("findEpipolarTensor failed: %s", sol.reasons[0] or "no real solution")
        return None, np.zeros((13, 1), np.uint8)
    return sol.tensors, mask
