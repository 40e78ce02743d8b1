"""cv2-style pose functions: recoverTwoSlitPose, triangulateTwoSlitPoints."""

from __future__ import annotations

import logging

import numpy as np

from .._checks import (
    check_array,
    check_finite,
    check_image_points,
    check_mask,
    check_rng,
    check_threshold,
)
from ..cameras import PushbroomIntrinsics, TwoSlitCamera, TwoSlitIntrinsics, compose_camera
from ..epipolar.tensor import sampson_distance
from ..sfm import (
    calibrated_two_view,
    projective_pairs_from_tensor,
    reprojection_residuals,
    triangulate_linear,
    triangulate_nonlinear,
)

__all__ = ["recoverTwoSlitPose", "triangulateTwoSlitPoints"]

log = logging.getLogger("xslit")


def _check_tensor(F):
    F = check_array("F", F)
    if F.shape != (2, 2, 2, 2):
        raise ValueError(f"F must have shape (2, 2, 2, 2), got {F.shape}")
    check_finite("F", F)
    if not np.any(F):
        raise ValueError("F must not be zero")
    return F


def triangulateTwoSlitPoints(cameras, points, refine=True):
    """Triangulate points seen by two or more two-slit cameras (like ``cv2.triangulatePoints``).

    Parameters
    ----------
    cameras : sequence of V >= 2 TwoSlitCamera
    points : sequence of V (N, 2) or (N, 1, 2) array_like
        Pixels of the same N points in each camera.
    refine : bool
        Minimise the reprojection error of each point after the linear estimate.

    Returns
    -------
    points4D : (4, N) float64 ndarray
        Homogeneous points (``X[3] = 1`` for refined finite points).

    Examples
    --------
    >>> import xslit
    >>> a = xslit.TwoSlitCamera([[1, 0, 0, 0], [0, 0, 1, 0]], [[0, 2, 0, 0], [0, 0, 1, 1]])
    >>> b = xslit.TwoSlitCamera([[1, 0, 0, 1], [0, 0, 1, 0]], [[0, 1, 0, 0], [0, 0, 1, 2]])
    >>> X = np.array([[0.5, -0.2, 3.0], [0.1, 0.4, 5.0]])
    >>> P = xslit.triangulateTwoSlitPoints([a, b], [a.project(X), b.project(X)])
    >>> np.allclose(P[:3] / P[3], X.T)
    True
    """
    if not isinstance(cameras, (list, tuple)) or len(cameras) < 2:
        raise ValueError("cameras must be a list of at least 2 TwoSlitCamera")
    for k, cam in enumerate(cameras):
        if not isinstance(cam, TwoSlitCamera):
            raise ValueError(f"cameras[{k}] must be a TwoSlitCamera, got {type(cam).__name__}")
    if not isinstance(points, (list, tuple)) or len(points) != len(cameras):
        raise ValueError(f"points must be a list of {len(cameras)} arrays (one per camera)")
    pts = [check_image_points(f"points[{k}]", p) for k, p in enumerate(points)]
    if len({len(p) for p in pts}) != 1:
        raise ValueError(f"points must all have the same N, got {[len(p) for p in pts]}")
    X = triangulate_linear(cameras, pts)
    if refine:
        X = triangulate_nonlinear(cameras, pts, X)
    return X.T.copy()


def recoverTwoSlitPose(F, points1, points2, intrinsics1=None, intrinsics2=None, mask=None, *,
                       refine=True, reprojThreshold=1.5, rng=0):
    """Camera pairs from an epipolar tensor and correspondences, like ``cv2.recoverPose``.

    **Uncalibrated** (no intrinsics): the two projective configurations compatible with
    ``F`` (Theorem 1: 8 candidates from the principal minors, the 2 consistent ones), in the
    canonical form of eq. (24), with triangulated points. With ``refine`` the pair is first
    refined by maximum likelihood on the inliers (13 + 3N parameters), so the configurations
    explain a tensor exactly on the variety.

    **Calibrated** (both intrinsics, as ``decomposeTwoSlitProjection(...).intrinsics``): the
    metric relative pose of camera 2 (two-slit cameras observe scale through the slit distance
    ``d``), a thin wrapper over :func:`xslit.sfm.calibrated_two_view`: starts from grids of
    rotations and of translations, Sampson fits of several distinct basins ranked by their
    truncated (MSAC) Sampson cost, maximum likelihood on the best ones, compared on their
    truncated reprojection cost. The pose starts from ``mask`` (or from the correspondences
    that ``F`` explains) and is checked against all N correspondences. The
    cv2 return tuple has no status slot: when the plain function reports the pose as
    ``"undetermined"`` (collinear points, scale not observed) or ``"failed"``, this raises
    ValueError with the reason; ``"ambiguous"`` (two basins that noise cannot tell apart)
    returns the better one and logs the reason on the ``xslit`` logger. Use
    :func:`xslit.sfm.calibrated_two_view` for the status, the other basins and the 6 x 6
    covariance of the pose.

    Parameters
    ----------
    F : (2, 2, 2, 2) array_like
    points1, points2 : (N, 2) or (N, 1, 2) array_like
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics, optional
        Both or neither.
    mask : (N, 1) or (N,) array_like, optional
        Inliers to use (non-zero), e.g. from :func:`findEpipolarTensor`. Calibrated without a
        mask: the correspondences within ``reprojThreshold`` of ``F`` (Sampson distance).
    refine : bool
        Uncalibrated only (the calibrated pose is always refined by maximum likelihood: its
        basins are compared that way).
    reprojThreshold : float
        Pixels, finite and positive. Uncalibrated: a correspondence counts in ``retval`` when
        its triangulated point reprojects within this distance. Calibrated: inlier threshold
        on the Sampson distance to the pose's tensor and on the distance of the
        correspondence to its reprojection (use the threshold given to ``findEpipolarTensor``).
    rng : None, int or numpy.random.Generator
        Calibrated only: random subsets of the robust solver (the fixed seed 0 by default,
        so that identical calls give identical results).

    Returns
    -------
    Uncalibrated: ``(retval, configurations, mask)``
        ``configurations`` is a list of two ``(camera1, camera2, points4D)`` with
        ``points4D`` (4, N); ``retval`` counts the masked correspondences reprojecting within
        ``reprojThreshold``; ``mask`` (N, 1) uint8 marks them.
    Calibrated: ``(retval, R, t, mask, points4D)``
        ``R`` (3, 3) and ``t`` (3, 1) map camera 1's coordinates to camera 2's
        (``X2 = R X1 + t``; camera 1's frame is the one of ``composeTwoSlitProjection`` with
        zero pose); ``retval`` counts the masked correspondences in front of both cameras
        (the validity check of cv2.recoverPose) and consistent with the pose within
        ``reprojThreshold``, which ``mask`` marks; ``points4D`` (4, N) are in camera 1's
        frame.

    Raises
    ------
    ValueError
        On bad input (naming the argument), or (calibrated) when the pose is undetermined or
        no pose explains the correspondences (with the reason).
    """
    F = _check_tensor(F)
    p1 = check_image_points("points1", points1)
    p2 = check_image_points("points2", points2)
    if len(p1) != len(p2):
        raise ValueError(f"points1 and points2 must have the same number of points, got "
                         f"{len(p1)} and {len(p2)}")
    inl = check_mask("mask", mask, len(p1))
    reprojThreshold = check_threshold("reprojThreshold", reprojThreshold)
    if (intrinsics1 is None) != (intrinsics2 is None):
        raise ValueError("intrinsics1 and intrinsics2 must be given together (calibrated) or "
                         "both omitted (uncalibrated)")
    for name, intr in (("intrinsics1", intrinsics1), ("intrinsics2", intrinsics2)):
        if intr is not None and not isinstance(intr, (TwoSlitIntrinsics, PushbroomIntrinsics)):
            raise ValueError(f"{name} must be TwoSlitIntrinsics or PushbroomIntrinsics, got "
                             f"{type(intr).__name__}")
    if inl.sum() < 15:
        raise ValueError(f"mask must leave at least 15 correspondences, got {int(inl.sum())}")
    if intrinsics1 is None:
        return _uncalibrated(F, p1, p2, inl, p1[inl], p2[inl], refine, reprojThreshold)
    if mask is None:  # start from the correspondences that F explains
        inl &= sampson_distance(F, p1, p2) <= reprojThreshold
        if inl.sum() < 15:
            raise ValueError(f"F explains only {int(inl.sum())} correspondences within "
                             f"reprojThreshold = {reprojThreshold}; at least 15 are needed")
    res = calibrated_two_view(p1, p2, intrinsics1, intrinsics2, inl,
                              threshold=reprojThreshold, rng=check_rng(rng))
    if res.status in ("failed", "undetermined"):
        raise ValueError(f"recoverTwoSlitPose: the pose is {res.status}: {res.reason}")
    if res.status == "ambiguous":
        log.warning("recoverTwoSlitPose: %s", res.reason)
    cam1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    cam2 = compose_camera(intrinsics2, res.rvec, res.t)
    valid = res.inliers & cam1.in_front(res.points) & cam2.in_front(res.points)
    return (int(valid.sum()), res.R.copy(), res.t.reshape(3, 1).copy(),
            valid.astype(np.uint8)[:, None], res.points.T.copy())


def _uncalibrated(F, p1, p2, inl, q1, q2, refine, reprojThreshold):
    """Both projective configurations (the uncalibrated branch of recoverTwoSlitPose)."""
    pairs = projective_pairs_from_tensor(F, q1, q2, refine=refine)
    out = []
    good = np.zeros(len(p1), bool)
    for A1, A2, B1, B2 in pairs.configurations:
        cams = [TwoSlitCamera(A1, A2), TwoSlitCamera(B1, B2)]
        X = triangulate_linear(cams, [p1, p2])
        res = reprojection_residuals(cams, [p1, p2], X)
        good |= inl & (np.nan_to_num(np.abs(res), nan=np.inf).max(axis=1) <= reprojThreshold)
        out.append((cams[0], cams[1], X.T.copy()))
    return int(good.sum()), out, good.astype(np.uint8)[:, None]
