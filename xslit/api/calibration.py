"""cv2-style calibration from views of a known target: calibrateTwoSlit and its flags.

Thin wrappers over :func:`xslit.sfm.calibration.calibrate`, which holds the math and returns
a :class:`~xslit.sfm.calibration.CalibrationResult` with the reason of a failure.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._checks import check_correspondences_2d3d, check_positive_int
from ..cameras import PushbroomIntrinsics, TwoSlitIntrinsics
from ..sfm.calibration import calibrate
from ..sfm.resection import MIN_PLANAR_POSE_POINTS, MIN_PROJECTIVE_POINTS

__all__ = [
    "CALIB_FIX_D",
    "CALIB_FIX_FOCAL_LENGTH",
    "CALIB_FIX_PRINCIPAL_POINT",
    "CALIB_FIX_THETA",
    "CALIB_PARALLEL",
    "CALIB_PUSHBROOM",
    "CALIB_USE_INTRINSIC_GUESS",
    "calibrateTwoSlit",
    "calibrateTwoSlitExtended",
]

#: Start from ``intrinsics`` instead of the views' resections (cv2's flag of the same name);
#: needed for planar targets and for the fixed parameters' values.
CALIB_USE_INTRINSIC_GUESS = 1
#: Keep the principal points (``u0, v0``; pushbroom ``u``) at the guess, or at the image
#: centre without one (cv2's flag of the same name).
CALIB_FIX_PRINCIPAL_POINT = 4
#: Keep the magnifications (``fu, 2 fv``; pushbroom ``f``) at the guess.
CALIB_FIX_FOCAL_LENGTH = 16
#: Keep the slit angle ``theta`` (pushbroom: the direction of motion) at the guess.
CALIB_FIX_THETA = 1 << 20
#: Keep the slit distance ``d`` at the guess.
CALIB_FIX_D = 1 << 21
#: The parallel model of Proposition 1 (retinal plane parallel to both slits): ``K1, K2``
#: upper triangular, 6 intrinsics instead of 8.
CALIB_PARALLEL = 1 << 22
#: Calibrate a pushbroom camera (implied by a ``PushbroomIntrinsics`` guess).
CALIB_PUSHBROOM = 1 << 23

_FIXES = ((CALIB_FIX_PRINCIPAL_POINT, "principal_point"), (CALIB_FIX_FOCAL_LENGTH, "focal"),
          (CALIB_FIX_THETA, "theta"), (CALIB_FIX_D, "d"), (CALIB_PARALLEL, "parallel"))
_ALL = (CALIB_USE_INTRINSIC_GUESS | CALIB_PUSHBROOM
        | sum(flag for flag, _ in _FIXES))


def _check_views(objectPoints, imagePoints, need):
    for name, value in (("objectPoints", objectPoints), ("imagePoints", imagePoints)):
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{name} must be a list with one array per view, got "
                             f"{type(value).__name__}")
    if len(objectPoints) != len(imagePoints):
        raise ValueError("objectPoints and imagePoints must have one entry per view each, got "
                         f"{len(objectPoints)} and {len(imagePoints)}")
    if not objectPoints:
        raise ValueError("objectPoints must hold at least one view, got none")
    X, px = [], []
    for i, (o, p) in enumerate(zip(objectPoints, imagePoints, strict=True)):
        Xi, pi = check_correspondences_2d3d(f"objectPoints[{i}]", o, f"imagePoints[{i}]", p,
                                            min_count=need)
        X.append(Xi)
        px.append(pi)
    return X, px


def _check_image_size(imageSize):
    if not isinstance(imageSize, (list, tuple, np.ndarray)) or len(imageSize) != 2:
        raise ValueError(f"imageSize must be a (width, height) pair, got {imageSize!r}")
    return tuple(check_positive_int(f"imageSize[{k}]", v) for k, v in enumerate(imageSize))


def _options(intrinsics, flags):
    if (isinstance(flags, bool) or not isinstance(flags, numbers.Integral)
            or flags & ~_ALL or flags < 0):
        raise ValueError("flags must combine CALIB_USE_INTRINSIC_GUESS, CALIB_FIX_PRINCIPAL_POINT, "
                         "CALIB_FIX_FOCAL_LENGTH, CALIB_FIX_THETA, CALIB_FIX_D, CALIB_PARALLEL "
                         f"and CALIB_PUSHBROOM, got {flags!r}")
    guess = bool(flags & CALIB_USE_INTRINSIC_GUESS)
    if guess and not isinstance(intrinsics, (TwoSlitIntrinsics, PushbroomIntrinsics)):
        raise ValueError("intrinsics must be TwoSlitIntrinsics or PushbroomIntrinsics with "
                         f"CALIB_USE_INTRINSIC_GUESS, got {type(intrinsics).__name__}")
    if not guess and intrinsics is not None:
        raise ValueError("intrinsics are a guess: pass CALIB_USE_INTRINSIC_GUESS with them, "
                         f"or None, got {type(intrinsics).__name__} without the flag")
    model = ("pushbroom" if flags & CALIB_PUSHBROOM or isinstance(intrinsics, PushbroomIntrinsics)
             else "two_slit")
    if guess and model == "pushbroom" and not isinstance(intrinsics, PushbroomIntrinsics):
        raise ValueError("intrinsics must be PushbroomIntrinsics with CALIB_PUSHBROOM, got "
                         "TwoSlitIntrinsics")
    fixed = [name for flag, name in _FIXES if flags & flag]
    if model == "pushbroom" and {"d", "parallel"} & set(fixed):
        raise ValueError("flags CALIB_FIX_D and CALIB_PARALLEL apply to two-slit cameras, not "
                         "to CALIB_PUSHBROOM")
    for name in ("theta", "d", "focal"):
        if name in fixed and not guess:
            raise ValueError(f"flags: fixing {name} keeps the guess's value: add "
                             "CALIB_USE_INTRINSIC_GUESS and intrinsics")
    return model, fixed, intrinsics if guess else None


def calibrateTwoSlitExtended(objectPoints, imagePoints, imageSize, intrinsics=None, flags=0,
                             maxIterations=100):
    r"""Intrinsics and view poses from views of a known target, like
    ``cv2.calibrateCameraExtended``.

    Without a guess, every view's projective camera is resected (7 or more points not on one
    plane: a target of two or three boards, as :func:`xslit.make_calibration_target` renders)
    and decomposed (Propositions 1-2); the median of the views' intrinsics starts one joint
    maximum-likelihood refinement of the intrinsics and all poses (Levenberg-Marquardt with
    the poses eliminated by the Schur complement). With ``CALIB_USE_INTRINSIC_GUESS`` the
    poses come from the generalized absolute pose, which also works on planar targets.

    Parameters
    ----------
    objectPoints : list of (N_i, 3) array_like
        Target points per view, in world units (they set the scale of ``d`` and ``v``).
    imagePoints : list of (N_i, 2) array_like
        Their pixels (``(N_i, 1, 2)`` accepted).
    imageSize : (width, height)
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics, optional
        The guess, with ``CALIB_USE_INTRINSIC_GUESS``.
    flags : int
        A combination of :data:`CALIB_USE_INTRINSIC_GUESS`, :data:`CALIB_FIX_PRINCIPAL_POINT`,
        :data:`CALIB_FIX_FOCAL_LENGTH`, :data:`CALIB_FIX_THETA`, :data:`CALIB_FIX_D`,
        :data:`CALIB_PARALLEL` and :data:`CALIB_PUSHBROOM`.
    maxIterations : int
        Of the joint refinement.

    Returns
    -------
    retval : float
        RMS reprojection distance over all points (pixels), as cv2 returns it.
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics
    rvecs, tvecs : tuple of (3, 1) ndarray
        One pose per view (``X_c = R X + t``).
    stdDeviationsIntrinsics : (P, 1) ndarray
        In :data:`xslit.sfm.calibration.PARAMETER_NAMES` order (two-slit: ``fu, u0,
        K1[1,0], K2[0,0] = 2 fv, v0, K2[1,0], theta, d``; pushbroom: ``1/v, f, u, v_y/v,
        v_z/v``); 0 for fixed parameters.
    stdDeviationsExtrinsics : (6 V, 1) ndarray
        ``rvec, tvec`` of each view in turn.
    perViewErrors : (V, 1) ndarray
        RMS reprojection distance per view.

    Raises
    ------
    ValueError
        On bad input (naming the argument), and when the views cannot be calibrated, with
        the reason (a planar target without a guess, views that leave a parameter
        undetermined, a view without a pose), as ``cv2.calibrateCamera`` raises.

    Examples
    --------
    >>> import xslit
    >>> from xslit.synthetic import random_calibration_views
    >>> true = xslit.TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, np.radians(80), 0.5)
    >>> views = random_calibration_views(true, 5, rng=0)
    >>> out = calibrateTwoSlitExtended(views["object_points"], views["image_points"],
    ...                                (640, 480), flags=xslit.CALIB_PARALLEL)
    >>> rms, intr = out[:2]
    >>> round(rms, 9), round(intr.fu, 6), round(intr.fv, 6), round(intr.d, 9)
    (0.0, 800.0, 600.0, 0.5)
    """
    model, fixed, guess = _options(intrinsics, flags)
    need = MIN_PLANAR_POSE_POINTS if guess is not None else MIN_PROJECTIVE_POINTS
    X, px = _check_views(objectPoints, imagePoints, need)
    size = _check_image_size(imageSize)
    iterations = check_positive_int("maxIterations", maxIterations)
    res = calibrate(X, px, size, model=model, intrinsics_guess=guess, fixed=fixed,
                    max_iterations=iterations)
    if not res.success:
        raise ValueError(f"calibrateTwoSlit failed: {res.reason}")
    rvecs = tuple(r.reshape(3, 1).copy() for r in res.rvecs)
    tvecs = tuple(t.reshape(3, 1).copy() for t in res.tvecs)
    return (res.rms, res.intrinsics, rvecs, tvecs, res.std_intrinsics.reshape(-1, 1),
            res.std_extrinsics.reshape(-1, 1), res.per_view_errors.reshape(-1, 1))


def calibrateTwoSlit(objectPoints, imagePoints, imageSize, intrinsics=None, flags=0,
                     maxIterations=100):
    """Intrinsics and view poses from views of a known target, like ``cv2.calibrateCamera``.

    :func:`calibrateTwoSlitExtended` without the standard deviations and per-view errors.

    Returns
    -------
    retval : float
        RMS reprojection distance (pixels).
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics
    rvecs, tvecs : tuple of (3, 1) ndarray
    """
    return calibrateTwoSlitExtended(objectPoints, imagePoints, imageSize, intrinsics, flags,
                                    maxIterations)[:4]
