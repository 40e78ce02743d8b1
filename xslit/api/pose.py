"""cv2-style pose functions: recoverTwoSlitPose, triangulateTwoSlitPoints."""

from __future__ import annotations

import numpy as np

from .._checks import check_array, check_finite, check_image_points, check_rng
from ..cameras import PushbroomIntrinsics, TwoSlitCamera, TwoSlitIntrinsics, compose_camera
from ..epipolar.tensor import sampson_distance
from ..geometry.projective import matrix_from_rvec, rvec_from_matrix
from ..sfm import (
    projective_pairs_from_tensor,
    refine_metric_pose,
    relative_pose,
    reprojection_residuals,
    triangulate_linear,
    triangulate_nonlinear,
)

__all__ = ["recoverTwoSlitPose", "triangulateTwoSlitPoints"]


def _check_tensor(F):
    F = check_array("F", F)
    if F.shape != (2, 2, 2, 2):
        raise ValueError(f"F must have shape (2, 2, 2, 2), got {F.shape}")
    check_finite("F", F)
    if not np.any(F):
        raise ValueError("F must not be zero")
    return F


def _check_mask(mask, n):
    if mask is None:
        return np.ones(n, bool)
    m = check_array("mask", mask)
    if m.size != n:
        raise ValueError(f"mask must have N = {n} entries ((N, 1) or (N,)), got shape {m.shape}")
    return m.reshape(n) != 0


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
    canonical form of eq. vecrep, with triangulated points. With ``refine`` the pair is first
    refined by maximum likelihood on the inliers (13 + 3N parameters), so the configurations
    explain a tensor exactly on the variety.

    **Calibrated** (both intrinsics, as ``decomposeTwoSlitProjection(...).intrinsics``): the
    metric relative pose of camera 2 (two-slit cameras observe scale through the slit distance
    ``d``), from the masked correspondences by the calibrated solver of
    :mod:`xslit.sfm.calibrated`: the tensor is linear in ``(R, [t]x R)``, a global search over
    rotations with ``t`` eliminated, Sampson fits, and a local optimisation in the exact
    6-parameter model that rejects the outliers a linear ``F`` can absorb. With ``refine``,
    pose and points are then refined by maximum likelihood on the inliers.

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
    reprojThreshold : float
        Pixels. Uncalibrated: a correspondence counts in ``retval`` when its triangulated
        point reprojects within this distance. Calibrated: inlier threshold on the Sampson
        distance to the recovered pose's tensor (use the threshold given to
        ``findEpipolarTensor``).
    rng : None, int or numpy.random.Generator
        Calibrated only: random subsets of the robust solver (deterministic by default).

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
        On bad input, or (calibrated) when no pose explains the correspondences with the
        given intrinsics.
    """
    F = _check_tensor(F)
    p1 = check_image_points("points1", points1)
    p2 = check_image_points("points2", points2)
    if len(p1) != len(p2):
        raise ValueError(f"points1 and points2 must have the same number of points, got "
                         f"{len(p1)} and {len(p2)}")
    inl = _check_mask(mask, len(p1))
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
    if mask is None:  # the correspondences that F explains
        inl &= sampson_distance(F, p1, p2) <= reprojThreshold
        if inl.sum() < 15:
            raise ValueError(f"F explains only {int(inl.sum())} correspondences within "
                             f"reprojThreshold = {reprojThreshold}; at least 15 are needed")
    q1, q2 = p1[inl], p2[inl]
    res = relative_pose(q1, q2, intrinsics1, intrinsics2, threshold=reprojThreshold,
                        rng=check_rng(rng))
    rvec, tvec = rvec_from_matrix(res.R), res.t
    good = np.flatnonzero(inl)[res.inliers]
    cam1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    if refine:
        rvec, tvec, X_good, _ = refine_metric_pose(intrinsics1, intrinsics2, rvec, tvec,
                                                   p1[good], p2[good])
        X_good = np.concatenate([X_good, np.ones((len(good), 1))], axis=1)
    cam2 = compose_camera(intrinsics2, rvec, tvec)
    # All correspondences are triangulated (as cv2.recoverPose does); the inliers' points are
    # those of the maximum-likelihood refinement, or refined here.
    X = triangulate_linear([cam1, cam2], [p1, p2])
    X[good] = X_good if refine else triangulate_nonlinear([cam1, cam2], [p1[good], p2[good]],
                                                          X[good])
    valid = np.zeros(len(p1), bool)
    valid[good] = True
    valid &= cam1.in_front(X) & cam2.in_front(X)
    return (int(valid.sum()), matrix_from_rvec(rvec), np.asarray(tvec, float).reshape(3, 1),
            valid.astype(np.uint8)[:, None], X.T.copy())


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
