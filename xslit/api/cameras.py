"""cv2-style camera functions: decompose, compose and project (analogues of calib3d)."""

from __future__ import annotations

import numpy as np

from .._checks import check_array, check_object_points, check_rvec, check_vector
from ..cameras import (
    PushbroomCamera,
    PushbroomIntrinsics,
    TwoSlitCamera,
    TwoSlitIntrinsics,
    compose_pushbroom,
    compose_two_slit,
    decompose_pushbroom,
    decompose_two_slit,
    project_points_with_pose,
)
from ..sfm.resection import projection_jacobian

__all__ = [
    "composePushbroomProjection",
    "composeTwoSlitProjection",
    "decomposePushbroomProjection",
    "decomposeTwoSlitProjection",
    "projectTwoSlitPoints",
]


def decomposeTwoSlitProjection(camera):
    """Analogue of ``cv2.decomposeProjectionMatrix`` for two-slit cameras (Proposition 1).

    Parameters
    ----------
    camera : TwoSlitCamera or tuple of two (2, 4) array_like
        A finite two-slit camera (parallel or general).

    Returns
    -------
    TwoSlitDecomposition
        Named tuple ``(K1, K2, r1, r2, r3, t, theta, d, rvec, tvec)``: ``K1 = [fu u0; 0 1]``,
        ``K2 = [2fv v0; 0 1]`` for parallel cameras (lower-left entries non-zero otherwise),
        ``t = (t1, t2, t3, t4)``, slit angle ``theta`` in (0, 2π) and signed slit distance
        ``d = t4 - t3``; ``rvec, tvec`` is the cv2 pose with which
        :func:`composeTwoSlitProjection` rebuilds the camera.

    Examples
    --------
    >>> import xslit
    >>> intr = xslit.TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, np.pi / 3, 0.5)
    >>> cam = xslit.composeTwoSlitProjection(intr, [0.1, 0.2, 0.3], [0.0, 0.1, 4.0])
    >>> dec = xslit.decomposeTwoSlitProjection(cam)
    >>> np.round([dec.K1[0, 0], dec.K2[0, 0] / 2, np.degrees(dec.theta), dec.d], 9).tolist()
    [800.0, 600.0, 60.0, 0.5]
    """
    return decompose_two_slit(_as_camera(camera))


def decomposePushbroomProjection(camera):
    """Pushbroom intrinsics ``(v, f, u, theta)`` and pose (Proposition 2).

    Parameters
    ----------
    camera : PushbroomCamera, TwoSlitCamera with ``A1[1] ∝ (0, 0, 0, 1)``, or (3, 4) array_like
        A (3, 4) array is read as Gupta and Hartley's matrix.

    Returns
    -------
    PushbroomDecomposition
        ``(K1, K2, r1, r2, r3, t, theta, v, f, u, rvec, tvec)``.
    """
    if not isinstance(camera, TwoSlitCamera):
        arr = check_array("camera", camera)
        if arr.shape == (3, 4):
            camera = PushbroomCamera.from_matrix(arr)
        else:
            camera = _as_camera(camera)
    return decompose_pushbroom(camera)


def composeTwoSlitProjection(intrinsics, rvec, tvec) -> TwoSlitCamera:
    """The two-slit camera with given intrinsics and cv2 pose (inverse of the decomposition).

    Parameters
    ----------
    intrinsics : TwoSlitIntrinsics
    rvec, tvec : (3,) or (3, 1) array_like
        World-to-camera rotation (Rodrigues) and translation, as in cv2.
    """
    return compose_two_slit(intrinsics, rvec, tvec)


def composePushbroomProjection(intrinsics, rvec, tvec) -> PushbroomCamera:
    """The pushbroom camera with given intrinsics and cv2 pose."""
    return compose_pushbroom(intrinsics, rvec, tvec)


def projectTwoSlitPoints(objectPoints, rvec, tvec, intrinsics, computeJacobian=False):
    r"""Analogue of ``cv2.projectPoints`` for two-slit and pushbroom cameras.

    .. math::
        u = \frac{(K_1 [x_c;\, z_c])_0}{(K_1 [x_c;\, z_c])_1},\quad
        v = \frac{(K_2 [\cos\theta\, x_c + \sin\theta\, y_c;\, z_c + d])_0}
                 {(K_2 [\cos\theta\, x_c + \sin\theta\, y_c;\, z_c + d])_1},\quad
        X_c = R X + t

    (eq. (16) with the canonical camera of
    eq. (15); the pushbroom form is eq. (43)).

    Parameters
    ----------
    objectPoints : (N, 3) or (N, 1, 3) array_like
    rvec, tvec : (3,) or (3, 1) array_like
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics
    computeJacobian : bool
        Also return the derivatives of the pixels (complex-step, exact to rounding).

    Returns
    -------
    imagePoints : (N, 1, 2) float64 ndarray
        NaN where a point lies on the locus where the projection is undefined.
    jacobian : (2N, 6 + P) ndarray or None
        Rows ``2i, 2i + 1`` are ``du_i, dv_i``; columns are ``rvec, tvec`` and the ``P``
        intrinsic parameters (two-slit: ``K1[0,0], K1[0,1], K1[1,0], K2[0,0], K2[0,1],
        K2[1,0], theta, d``; pushbroom: ``1/v, f, u, v_y/v, v_z/v``, see
        :class:`~xslit.PushbroomIntrinsics`).
    """
    X = check_object_points("objectPoints", objectPoints)
    if X.shape[1] != 3:
        raise ValueError(f"objectPoints must have shape (N, 3), got {X.shape}")
    r = check_rvec("rvec", rvec)
    t = check_vector("tvec", tvec, 3)
    if not isinstance(intrinsics, (TwoSlitIntrinsics, PushbroomIntrinsics)):
        raise ValueError("intrinsics must be TwoSlitIntrinsics or PushbroomIntrinsics, got "
                         f"{type(intrinsics).__name__}")
    with np.errstate(divide="ignore", invalid="ignore"):
        px = project_points_with_pose(X, r, t, intrinsics)
    px[~np.isfinite(px).all(axis=1)] = np.nan
    jac = None
    if computeJacobian:
        # One complex-step kernel for every Jacobian of the projection (resection and
        # calibration use it too); rows 2i, 2i + 1 are du_i, dv_i.
        J = projection_jacobian(X, r, t, intrinsics, intrinsic=True)
        jac = J.reshape(2 * len(X), -1)
    return px[:, None, :], jac


def _as_camera(camera):
    if isinstance(camera, TwoSlitCamera):
        return camera
    if isinstance(camera, (tuple, list)) and len(camera) == 2:
        return TwoSlitCamera(camera[0], camera[1])
    raise ValueError("camera must be a TwoSlitCamera or a pair (A1, A2) of (2, 4) arrays, got "
                     f"{type(camera).__name__}")
