"""cv2-style resection: solveTwoSlitPnP, solveTwoSlitPnPRansac (and flags).

Thin wrappers over :mod:`xslit.sfm.resection`, which holds the math and returns
:class:`~xslit.sfm.resection.ResectionResult` objects with the reason of a failure.
"""

from __future__ import annotations

import logging
import numbers

import numpy as np

from .._checks import (
    check_array,
    check_correspondences_2d3d,
    check_matrix,
    check_positive_int,
    check_rng,
    check_threshold,
)
from ..cameras import PushbroomIntrinsics, TwoSlitIntrinsics
from ..sfm.resection import (
    MIN_PLANAR_POSE_POINTS,
    MIN_PROJECTIVE_POINTS,
    resect_pose,
    resect_pose_robust,
    resect_projective,
    resect_projective_robust,
)

__all__ = [
    "SOLVEPNP_ITERATIVE",
    "SOLVEPNP_LINEAR",
    "solveTwoSlitPnP",
    "solveTwoSlitPnPRansac",
]

log = logging.getLogger("xslit")

#: Linear estimate, then maximum likelihood (reprojection error, Levenberg-Marquardt); with
#: ``useExtrinsicGuess``, maximum likelihood from the guess. Like cv2.SOLVEPNP_ITERATIVE.
SOLVEPNP_ITERATIVE = 0
#: The linear estimate only (xslit's own flag, like cv2's DLT inside SOLVEPNP_ITERATIVE).
SOLVEPNP_LINEAR = 101

_MODELS = ("two_slit", "pushbroom")


def _check_common(objectPoints, imagePoints, intrinsics, flags, model):
    """Validated points, flags and the model name (``"two_slit"`` or ``"pushbroom"``)."""
    if intrinsics is not None and not isinstance(intrinsics, (TwoSlitIntrinsics,
                                                              PushbroomIntrinsics)):
        raise ValueError("intrinsics must be None, TwoSlitIntrinsics or PushbroomIntrinsics, got "
                         f"{type(intrinsics).__name__}")
    if isinstance(flags, bool) or flags not in (SOLVEPNP_ITERATIVE, SOLVEPNP_LINEAR):
        raise ValueError(f"flags must be SOLVEPNP_ITERATIVE ({SOLVEPNP_ITERATIVE}) or "
                         f"SOLVEPNP_LINEAR ({SOLVEPNP_LINEAR}), got {flags!r}")
    if model is not None and model not in _MODELS:
        raise ValueError(f"model must be None, 'two_slit' or 'pushbroom', got {model!r}")
    if intrinsics is not None:
        kind = "pushbroom" if isinstance(intrinsics, PushbroomIntrinsics) else "two_slit"
        if model is not None and model != kind:
            raise ValueError(f"model is {model!r} but intrinsics are {type(intrinsics).__name__}")
        model = kind
    model = model or "two_slit"
    need = MIN_PLANAR_POSE_POINTS if intrinsics is not None else MIN_PROJECTIVE_POINTS
    X, px = check_correspondences_2d3d("objectPoints", objectPoints, "imagePoints",
                                       imagePoints, min_count=need)
    return X, px, model


def _check_pose(name, value):
    return check_matrix(name, np.ravel(check_array(name, value)), (3,))


def _pose_out(res, name):
    if not res.success:
        log.warning("%s failed: %s", name, res.reason)
        return False, None, None
    return True, res.rvec.reshape(3, 1).copy(), res.tvec.reshape(3, 1).copy()


def solveTwoSlitPnP(objectPoints, imagePoints, intrinsics=None, rvec=None, tvec=None,
                    useExtrinsicGuess=False, flags=SOLVEPNP_ITERATIVE, model=None):
    r"""Pose (known intrinsics) or projective camera from 2D-3D correspondences, like
    ``cv2.solvePnP``.

    **Known intrinsics**: the generalized absolute pose. Every pixel is a known ray in the
    camera's frame; the linear solver (:func:`xslit.sfm.resection.linear_pose`) solves
    :math:`n_k^\top (R X + t) + w_k = 0` for the ray's two planes, 6 or more points in
    general position (7 for a pushbroom camera), 5 or more on a plane (a calibration board),
    then maximum likelihood refines ``rvec, tvec`` on the reprojection error. The camera is
    the one of Propositions 1-2 (:func:`composeTwoSlitProjection`).

    **Intrinsics unknown** (``intrinsics=None``): the projective camera, linear per matrix
    (:math:`A_1[0] \cdot X - u A_1[1] \cdot X = 0`, likewise ``A2`` with ``v``; normalised
    points and pixels), 7 or more points not on one plane, then maximum likelihood.
    ``model="pushbroom"`` fits a pushbroom camera (``A1 = [m1 t1; 0 0 0 1]``, 11 degrees of
    freedom) instead of a two-slit camera (14).

    Parameters
    ----------
    objectPoints : (N, 3) or (N, 1, 3) array_like
    imagePoints : (N, 2) or (N, 1, 2) array_like
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics, optional
    rvec, tvec : (3,) or (3, 1) array_like, optional
        Starting pose with ``useExtrinsicGuess`` (known intrinsics only).
    useExtrinsicGuess : bool
    flags : int
        :data:`SOLVEPNP_ITERATIVE` (linear, then maximum likelihood) or
        :data:`SOLVEPNP_LINEAR` (linear only).
    model : {None, "two_slit", "pushbroom"}
        The camera model without intrinsics (default two-slit); with intrinsics, their type
        decides (a different ``model`` is refused).

    Returns
    -------
    Known intrinsics: ``(retval, rvec, tvec)``
        ``retval`` bool; ``rvec, tvec`` (3, 1) float64 (``X_c = R X + t``, as cv2), or None
        when ``retval`` is False.
    Intrinsics unknown: ``(retval, camera)``
        ``camera`` a :class:`TwoSlitCamera` or :class:`PushbroomCamera`, or None.

    On failure (collinear or identical points, a coplanar target without intrinsics, a pose
    that puts points behind the camera) ``retval`` is False and the reason is logged on the
    ``xslit`` logger; :func:`xslit.sfm.resection.resect_pose` and
    :func:`~xslit.sfm.resection.resect_projective` return it as
    :attr:`~xslit.sfm.resection.ResectionResult.reason`.

    Raises
    ------
    ValueError
        On bad input, naming the argument.

    Examples
    --------
    >>> import xslit
    >>> intr = xslit.TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, np.pi / 3, 0.5)
    >>> board = np.array([[x, y, 0.0] for x in range(6) for y in range(4)]) * 0.1
    >>> cam = xslit.composeTwoSlitProjection(intr, [0.1, -0.2, 0.05], [-0.2, -0.1, 2.0])
    >>> ok, rvec, tvec = solveTwoSlitPnP(board, cam.project(board), intr)
    >>> ok, np.round(rvec.ravel(), 9).tolist(), np.round(tvec.ravel(), 9).tolist()
    (True, [0.1, -0.2, 0.05], [-0.2, -0.1, 2.0])
    >>> X = np.random.default_rng(0).uniform(-1, 1, (20, 3))
    >>> ok, camera = solveTwoSlitPnP(X, cam.project(X))
    >>> ok, bool(np.allclose(camera.project(X), cam.project(X)))
    (True, True)
    """
    X, px, model = _check_common(objectPoints, imagePoints, intrinsics, flags, model)
    refine = flags == SOLVEPNP_ITERATIVE
    if intrinsics is None:
        if useExtrinsicGuess or rvec is not None or tvec is not None:
            raise ValueError("rvec, tvec and useExtrinsicGuess need intrinsics (a pose); "
                             "without them the projective camera is solved")
        res = resect_projective(X, px, pushbroom=model == "pushbroom", refine=refine)
        if not res.success:
            log.warning("solveTwoSlitPnP failed: %s", res.reason)
            return False, None
        return True, res.camera
    guess = None
    if useExtrinsicGuess:
        if rvec is None or tvec is None:
            raise ValueError("useExtrinsicGuess needs rvec and tvec, got None")
        guess = (_check_pose("rvec", rvec), _check_pose("tvec", tvec))
    res = resect_pose(X, px, intrinsics, *(guess or (None, None)), refine=refine)
    return _pose_out(res, "solveTwoSlitPnP")


def solveTwoSlitPnPRansac(objectPoints, imagePoints, intrinsics=None, rvec=None, tvec=None,
                          useExtrinsicGuess=False, iterationsCount=1000,
                          reprojectionError=8.0, confidence=0.99, flags=SOLVEPNP_ITERATIVE,
                          model=None, rng=None):
    """Robust pose or projective camera, like ``cv2.solvePnPRansac``.

    Samples of the linear solver (6 points for a two-slit pose, 7 for a pushbroom pose, 5 on
    a planar target, 7 for a projective camera) in the robust loop of :mod:`xslit.robust`
    (MSAC score, local optimisation, adaptive number of samples); the final model is the
    maximum-likelihood fit of its inliers, and its support is tested against chance.

    Parameters
    ----------
    objectPoints : (N, 3) or (N, 1, 3) array_like
    imagePoints : (N, 2) or (N, 1, 2) array_like
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics, optional
        Without them, the projective camera (see :func:`solveTwoSlitPnP`).
    rvec, tvec, useExtrinsicGuess
        Accepted for cv2's signature; a guess is not used by the sampling (as in cv2's
        default method). Must be None and False.
    iterationsCount : int
        Maximum number of samples (cv2's default is 100; the loop stops earlier when
        ``confidence`` is reached).
    reprojectionError : float
        Inlier threshold on the reprojection distance, pixels.
    confidence : float in (0, 1)
    flags : int
        :data:`SOLVEPNP_ITERATIVE` (the only method of the loop: :data:`SOLVEPNP_LINEAR` is
        refused, the refits are maximum likelihood).
    model : {None, "two_slit", "pushbroom"}
    rng : None, int or numpy.random.Generator
        The samples' random stream (None draws fresh entropy; pass an int for repeatable
        results).

    Returns
    -------
    Known intrinsics: ``(retval, rvec, tvec, inliers)``
        ``inliers`` (K, 1) int32 indices, as cv2; None with ``retval`` False.
    Intrinsics unknown: ``(retval, camera, inliers)``

    Examples
    --------
    >>> import xslit
    >>> from xslit.synthetic import random_resection_scene
    >>> s = random_resection_scene(1, 100, sigma=0.5, outlier_ratio=0.3)
    >>> ok, rvec, tvec, inliers = solveTwoSlitPnPRansac(
    ...     s["X"], s["pixels"], s["intrinsics"], reprojectionError=2.0, rng=0)
    >>> ok, inliers.shape[1], inliers.dtype, bool(np.all(s["inliers"][inliers.ravel()]))
    (True, 1, dtype('int32'), True)
    """
    X, px, model = _check_common(objectPoints, imagePoints, intrinsics, flags, model)
    if flags != SOLVEPNP_ITERATIVE:
        raise ValueError(f"flags must be SOLVEPNP_ITERATIVE ({SOLVEPNP_ITERATIVE}) for "
                         f"solveTwoSlitPnPRansac, got {flags!r}")
    if useExtrinsicGuess or rvec is not None or tvec is not None:
        raise ValueError("rvec, tvec and useExtrinsicGuess are not used by "
                         "solveTwoSlitPnPRansac: pass None and False")
    iterationsCount = check_positive_int("iterationsCount", iterationsCount)
    reprojectionError = check_threshold("reprojectionError", reprojectionError)
    if (isinstance(confidence, bool) or not isinstance(confidence, numbers.Real)
            or not 0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    rng = check_rng(rng)
    kw = {"threshold": reprojectionError, "confidence": float(confidence),
          "max_iterations": iterationsCount, "rng": rng}
    if intrinsics is None:
        res = resect_projective_robust(X, px, pushbroom=model == "pushbroom", **kw)
        if not res.success:
            log.warning("solveTwoSlitPnPRansac failed: %s", res.reason)
            return False, None, None
        return True, res.camera, _indices(res.inliers)
    res = resect_pose_robust(X, px, intrinsics, **kw)
    out = _pose_out(res, "solveTwoSlitPnPRansac")
    return (*out, _indices(res.inliers) if res.success else None)


def _indices(mask) -> np.ndarray:
    return np.flatnonzero(mask).astype(np.int32)[:, None]
