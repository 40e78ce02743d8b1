r"""Resection: a camera from 2D-3D correspondences (the analogue of ``cv2.solvePnP``).

Two problems, both linear first and then refined by maximum likelihood (reprojection error,
Levenberg-Marquardt from :mod:`xslit.sfm.lm`):

**Pose with known intrinsics** (a generalized absolute pose problem). In the frame of the
camera composed at the identity pose, pixel ``(u, v)`` is the ray where the planes
:math:`\pi_1 = A_1^0[0] - u A_1^0[1]` and :math:`\pi_2 = A_2^0[0] - v A_2^0[1]` meet
(the viewing ray of the Conventions, eq. (11)). With each plane scaled to a unit
normal, :math:`\pi_k = (n_k, w_k)`, a world point :math:`X` lies on the ray of its pixel when

.. math:: n_k^\top (R X + t) + w_k = 0, \qquad k = 1, 2,

two equations linear in the 12 entries of :math:`[R \mid t]`. They are solved as a
homogeneous system in :math:`(R, t, \sigma)` with the weight :math:`\sigma` of :math:`w_k`
eliminated in closed form, the scale then fixed by :math:`R` (the polar factor of the
solution, Umeyama's projection to SO(3)) and :math:`t` solved again with :math:`\sigma = 1`.
Eliminating :math:`\sigma` keeps the solver exact for nearly central cameras (slits a small
fraction of the depth apart): there :math:`w_k \approx 0`, an inhomogeneous solve with
:math:`\sigma = 1` loses the scale of the solution in the noise, while the rotation still
fixes it (as in a pinhole's DLT). Six points in general position determine the pose
(12 equations for 12 unknowns up to :math:`\sigma`). A planar target (after a rotation of the
world into the target's frame, :math:`X = (x, y, 0)`) needs the first two columns of
:math:`R` only: 9 unknowns and :math:`\sigma`, five points; the sign of the solution is then
not fixed by :math:`\det R` and both candidates are returned (the estimator keeps the one
that sees the points in front).

The minimal solver of the robust loop is this linear 6-point (5-point planar) solver, batched
as stacked SVDs. PoseLib's robust generalized absolute pose samples 3 points and solves gP3P
(up to 8 solutions each, then a truncated-loss refinement); here the linear solver is used
because at the outlier ratios of calibration data its loop is short: measured on
``random_resection_scene`` scenes with 100 points, 30% outliers and 0.5 px of noise, the
adaptive loop stopped after its first batch of 64 samples in 20 of 20 scenes; fitting the
batch (stacked SVDs, then 5 Levenberg-Marquardt steps on each sample's own points, see
:attr:`PoseProblem.polish_iterations`) took 4.6 ms, and each sample gives one candidate to
score instead of gP3P's up to eight. gP3P would pay off at high outlier ratios, where 6-point
samples need thousands of draws (at 60% outliers about 1,100 for 0.99 confidence, against
about 70 triples).

**Projective camera** (intrinsics unknown). A two-slit camera :math:`(A_1, A_2)` has
:math:`u = A_1[0] X / A_1[1] X`, so each correspondence gives one equation linear in the 8
entries of :math:`A_1`,

.. math:: A_1[0] \cdot X - u\, A_1[1] \cdot X = 0,

and likewise one for :math:`A_2` with :math:`v`: 7 points determine both matrices
(7 + 7 = 14 degrees of freedom). A pushbroom camera has :math:`A_1 = [m_1^\top\; t_1; 0\; 1]`
(eq. (18)): :math:`u` is affine in :math:`X` (linear least squares, 4
unknowns) and :math:`A_2` is as for two slits (11 degrees of freedom). Points are centred and
scaled, pixels normalised per axis, before the linear solve (Hartley's normalisation). The
reprojection error separates into one problem per matrix (``u`` depends only on ``A1``),
which are refined together as a batch of two small problems. Coplanar points are degenerate:
for points on a plane :math:`\pi`, adding :math:`\alpha \pi` and :math:`\beta \pi` to the rows
of either matrix changes no projection (a 2-dimensional extra null space per matrix).

The residual kernels (:func:`pose_residuals`, :func:`projection_jacobian`) take the
intrinsics as :func:`xslit.cameras.intrinsics.intrinsic_parameters` gives them, so a joint
refinement of intrinsics and several poses (calibration) reuses them as the blocks of
:func:`xslit.sfm.lm.block_levenberg_marquardt` (intrinsics global, one pose per view).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..cameras import (
    PushbroomCamera,
    PushbroomIntrinsics,
    TwoSlitCamera,
    TwoSlitIntrinsics,
    compose_camera,
    project_points_with_pose,
)
from ..cameras.intrinsics import intrinsic_parameters, intrinsics_from_parameters
from ..geometry.projective import matrix_from_rvec, rvec_from_matrix
from ..robust import MSAC, RobustOptions, RobustProblemBase, robust_estimate
from .lm import batch_levenberg_marquardt

__all__ = [
    "FLAT_TOL",
    "MIN_PLANAR_POSE_POINTS",
    "MIN_POSE_POINTS",
    "MIN_PROJECTIVE_POINTS",
    "MIN_PUSHBROOM_POSE_POINTS",
    "SAMPLE_CONDITION_TOL",
    "PointFrame",
    "PoseProblem",
    "ProjectiveResectionProblem",
    "ResectionResult",
    "linear_pose",
    "linear_projective_resection",
    "point_frame",
    "pose_jacobian",
    "pose_residuals",
    "projection_jacobian",
    "ray_planes",
    "refine_pose",
    "refine_poses",
    "refine_projective_resection",
    "reprojection_errors",
    "resect_pose",
    "resect_pose_robust",
    "resect_projective",
    "resect_projective_robust",
]

#: Points for the linear pose of a non-planar target (12 equations, 12 unknowns up to sigma).
MIN_POSE_POINTS = 6
#: Points for the linear pose of a planar target (9 unknowns and sigma).
MIN_PLANAR_POSE_POINTS = 5
#: Points for the linear pose of a pushbroom camera (non-planar target; see
#: :func:`linear_pose`'s ``decoupled``).
MIN_PUSHBROOM_POSE_POINTS = 7
#: Points for the projective resection (8 entries per matrix, 7 up to scale).
MIN_PROJECTIVE_POINTS = 7
#: Relative spread (singular value over the largest) of the centred object points under which
#: a dimension counts as collapsed: the points are coplanar (third) or collinear (second). A
#: target whose depth is a thousandth of its extent leaves the projective resection's extra
#: null directions at a thousandth of the signal, below half a pixel of noise on images of
#: about a thousand pixels.
FLAT_TOL = 1e-3
#: A sample's design matrix is degenerate when its second smallest singular value, relative to
#: its largest, is below this: the null space is not one-dimensional (e.g. 7 coplanar points
#: of a two-plane target make the projective design rank-deficient exactly).
SAMPLE_CONDITION_TOL = 1e-9
#: Complex-step increment of :func:`projection_jacobian` (exact to rounding at any size).
_COMPLEX_STEP = 1e-30


# -- object points -----------------------------------------------------------------------
class PointFrame(NamedTuple):
    """Result of :func:`point_frame`: a similarity normalising the object points.

    ``normalized = (X - centre) @ basis.T / scale``: centred, rotated into their principal
    axes (``basis`` rows, a proper rotation) and scaled to unit RMS per axis.
    """

    centre: np.ndarray  # (3,)
    basis: np.ndarray  # (3, 3)
    scale: float
    normalized: np.ndarray  # (N, 3)
    spread: np.ndarray  # (3,) singular values relative to the largest
    kind: str  # "general", "planar", "collinear" or "identical"

    @property
    def homogeneous_map(self) -> np.ndarray:
        """The (4, 4) matrix taking homogeneous world points to normalised ones."""
        T = np.eye(4)
        T[:3, :3] = self.basis / self.scale
        T[:3, 3] = -self.basis @ self.centre / self.scale
        return T


def point_frame(X) -> PointFrame:
    """Normalise ``(N, 3)`` object points and classify their configuration.

    Parameters
    ----------
    X : (N, 3) ndarray
        Validated object points.

    Returns
    -------
    PointFrame
        ``kind`` is ``"identical"`` (no spread), ``"collinear"`` (the second singular value of
        the centred points below :data:`FLAT_TOL` of the first), ``"planar"`` (the third) or
        ``"general"``.

    Examples
    --------
    >>> board = np.array([[x, y, 0.0] for x in range(3) for y in range(3)])
    >>> f = point_frame(board)
    >>> f.kind, np.round(f.normalized[:, 2], 12).tolist() == [0.0] * 9
    ('planar', True)
    """
    X = np.asarray(X, dtype=float)
    centre = X.mean(axis=0)
    Y = X - centre
    _, s, Vt = np.linalg.svd(Y, full_matrices=False)
    if np.linalg.det(Vt) < 0:
        Vt[2] *= -1
    size = max(float(np.abs(X).max()), 1e-300)
    spread = s / s[0] if s[0] > 0 else np.zeros(3)
    if s[0] <= 1e-12 * size * np.sqrt(len(X)):
        kind, scale = "identical", 1.0
    else:
        kind = ("collinear" if spread[1] < FLAT_TOL else "planar" if spread[2] < FLAT_TOL
                else "general")
        scale = float(np.sqrt(np.sum(s * s) / (3 * len(X))))
    return PointFrame(centre, Vt, scale, Y @ Vt.T / scale, spread, kind)


def _configuration_reason(frame: PointFrame, what: str) -> str:
    """Why ``frame``'s points cannot determine ``what`` ("" when they can)."""
    if frame.kind == "identical":
        return f"all object points are identical: they do not determine {what}"
    if frame.kind == "collinear":
        return (f"the object points are collinear (relative spread {frame.spread[1]:.1e} "
                f"across the line, below {FLAT_TOL}): they do not determine {what}")
    return ""


# -- rays as planes ------------------------------------------------------------------------
def ray_planes(camera: TwoSlitCamera, pixels) -> np.ndarray:
    r"""The two planes of each pixel's viewing ray, scaled to unit normals.

    .. math:: \pi_1 = A_1[0] - u A_1[1], \qquad \pi_2 = A_2[0] - v A_2[1]

    (the Conventions: the ray is their meet). A point ``x`` is on the ray when
    :math:`\pi_1 \cdot x = \pi_2 \cdot x = 0`; with unit normals, :math:`\pi_k \cdot (X, 1)` is
    the distance of ``X`` to the plane.

    Parameters
    ----------
    camera : TwoSlitCamera
    pixels : (N, 2) ndarray

    Returns
    -------
    planes : (N, 2, 4) ndarray

    Examples
    --------
    >>> cam = TwoSlitCamera([[1, 0, 0, 0], [0, 0, 1, 0]], [[0, 2, 0, 0], [0, 0, 1, 1]])
    >>> P = ray_planes(cam, cam.project([[1.0, 2.0, 1.0]]))
    >>> np.round(P @ [1.0, 2.0, 1.0, 1.0], 12)
    array([[0., 0.]])
    """
    px = np.asarray(pixels, dtype=float)
    P = np.stack([camera.A1[0] - px[:, :1] * camera.A1[1],
                  camera.A2[0] - px[:, 1:2] * camera.A2[1]], axis=1)
    return P / np.linalg.norm(P[..., :3], axis=-1, keepdims=True)


def _rigid(R, t) -> np.ndarray:
    """``(..., 4, 4)`` matrices ``[[R, t], [0, 1]]``."""
    T = np.zeros((*R.shape[:-2], 4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = t
    T[..., 3, 3] = 1.0
    return T


# -- reprojection ---------------------------------------------------------------------------
def reprojection_errors(A, Xh, pixels, *, scale=(1.0, 1.0), cheirality=False) -> np.ndarray:
    r"""Reprojection distances of a batch of two-slit cameras, ``(M, n)``.

    Camera ``m`` has rows ``A[m] = [A1; A2]`` and maps :math:`x` to
    :math:`(A_1[0]x / A_1[1]x,\; A_2[0]x / A_2[1]x)`. The distance is measured after scaling
    the two axes by ``scale`` (e.g. back to pixels from normalised coordinates).

    Parameters
    ----------
    A : (M, 4, 4) ndarray
    Xh : (n, 4) ndarray
        Homogeneous points.
    pixels : (n, 2) ndarray
    scale : (2,) sequence of float
    cheirality : bool
        Points behind the camera (a denominator not positive) get an infinite distance.

    Returns
    -------
    errors : (M, n) ndarray
        Infinite where the projection is undefined.

    Examples
    --------
    >>> A = np.array([[[1, 0, 0, 0], [0, 0, 1, 0], [0, 2, 0, 0], [0, 0, 1, 1.0]]])
    >>> reprojection_errors(A, np.array([[1.0, 2.0, 1.0, 1.0]]), np.array([[1.0, 2.5]]))
    array([[0.5]])
    """
    p = np.einsum("mij,nj->mni", A, Xh)
    with np.errstate(divide="ignore", invalid="ignore"):
        du = scale[0] * (p[..., 0] / p[..., 1] - pixels[:, 0])
        dv = scale[1] * (p[..., 2] / p[..., 3] - pixels[:, 1])
        e = np.sqrt(du * du + dv * dv)
    bad = ~np.isfinite(e)
    if cheirality:
        bad |= (p[..., 1] <= 0) | (p[..., 3] <= 0)
    e[bad] = np.inf
    return e


def pose_residuals(X, pixels, rvec, tvec, intrinsics) -> np.ndarray:
    """Reprojection residuals ``(N, 2)`` (projection minus pixel) of a pose.

    Parameters
    ----------
    X : (N, 3) ndarray
    pixels : (N, 2) ndarray
    rvec, tvec : (3,) ndarray
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics, or the tuple of
        :func:`xslit.cameras.intrinsics.intrinsics_from_parameters`

    Returns
    -------
    (N, 2) ndarray
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return project_points_with_pose(X, rvec, tvec, intrinsics) - pixels


def projection_jacobian(X, rvec, tvec, intrinsics, *, intrinsic: bool = False) -> np.ndarray:
    """Derivatives of the projections of ``X`` with respect to the pose (and intrinsics).

    Complex-step differentiation of :func:`xslit.cameras.project_points_with_pose` (exact to
    rounding), one evaluation on all points per parameter.

    Parameters
    ----------
    X : (N, 3) ndarray
    rvec, tvec : (3,) ndarray
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics
    intrinsic : bool
        Also differentiate with respect to the ``P`` parameters of
        :func:`xslit.cameras.intrinsics.intrinsic_parameters` (in its order).

    Returns
    -------
    J : (N, 2, 6) or (N, 2, 6 + P) ndarray
        Columns ``rvec, tvec`` (then the intrinsic parameters).

    Examples
    --------
    >>> intr = TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, 1.2, 0.5)
    >>> X = np.array([[0.1, -0.2, 4.0]])
    >>> J = projection_jacobian(X, np.zeros(3), np.zeros(3), intr)
    >>> h = 1e-6
    >>> fd = (project_points_with_pose(X, np.zeros(3), np.array([0, 0, h]), intr)
    ...       - project_points_with_pose(X, np.zeros(3), np.array([0, 0, -h]), intr)) / (2 * h)
    >>> bool(np.allclose(J[:, :, 5], fd, rtol=1e-6))
    True
    """
    kind, p = intrinsic_parameters(intrinsics)
    params = np.concatenate([np.asarray(rvec, float), np.asarray(tvec, float)]
                            + ([p] if intrinsic else []))
    J = np.empty((len(X), 2, len(params)))
    for k in range(len(params)):
        q = params.astype(complex)
        q[k] += 1j * _COMPLEX_STEP
        intr = intrinsics_from_parameters(kind, q[6:]) if intrinsic else intrinsics
        with np.errstate(divide="ignore", invalid="ignore"):
            J[:, :, k] = project_points_with_pose(X, q[:3], q[3:6], intr).imag / _COMPLEX_STEP
    return J


def pose_jacobian(A0, X, R, t):
    r"""Reprojection residual model and its Jacobian for a batch of poses, analytically.

    With :math:`X_c = R X + t` and the camera at the identity pose ``A0`` (rows
    ``[A1; A2]``), :math:`u = a_0 \cdot X_c / a_1 \cdot X_c` (homogeneous :math:`X_c`), so
    :math:`\partial u / \partial X_c = (a_0 - u\, a_1)_{:3} / (a_1 \cdot X_c)`; a step
    :math:`(\omega, \delta t)` moves :math:`X_c` to :math:`e^{[\omega]_\times} X_c + \delta t`,
    so :math:`\partial X_c / \partial \omega = -[X_c]_\times` and
    :math:`\partial X_c / \partial \delta t = I`.

    Parameters
    ----------
    A0 : (4, 4) ndarray
    X : (B, n, 3) ndarray
    R : (B, 3, 3) ndarray
    t : (B, 3) ndarray

    Returns
    -------
    projections : (B, n, 2) ndarray
    J : (B, n, 2, 6) ndarray
        Columns :math:`\omega, \delta t`.
    """
    Xc = np.einsum("bij,bnj->bni", R, X) + t[:, None, :]
    p = np.einsum("ij,bnj->bni", A0[:, :3], Xc) + A0[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = np.stack([p[..., 0] / p[..., 1], p[..., 2] / p[..., 3]], axis=-1)
        dX = np.stack([(A0[0, :3] - uv[..., :1] * A0[1, :3]) / p[..., 1:2],
                       (A0[2, :3] - uv[..., 1:] * A0[3, :3]) / p[..., 3:4]], axis=-2)
    J = np.concatenate([np.cross(Xc[..., None, :], dX), dX], axis=-1)  # -dX [Xc]x = Xc x dX
    return uv, J


def refine_poses(A0, X, pixels, R, t, *, iterations: int = 50, rel_tol: float = 1e-12):
    """Maximum-likelihood poses of a batch of problems: least squares on the reprojection
    residuals (:func:`xslit.sfm.lm.batch_levenberg_marquardt` with :func:`pose_jacobian`).

    Parameters
    ----------
    A0 : (4, 4) ndarray
        Rows ``[A1; A2]`` of the camera at the identity pose.
    X : (B, n, 3) ndarray
    pixels : (B, n, 2) ndarray
    R : (B, 3, 3) ndarray
    t : (B, 3) ndarray
        Starting poses.
    iterations : int
    rel_tol : float
        A problem is done when a step lowers its cost by less than this fraction.

    Returns
    -------
    R : (B, 3, 3) ndarray
    t : (B, 3) ndarray
    cost : (B,) ndarray
        Sums of squared residuals (pixels squared; infinite where a projection is undefined).

    Examples
    --------
    >>> intr = TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, 1.2, 0.5)
    >>> cam0 = compose_camera(intr, np.zeros(3), np.zeros(3))
    >>> A0 = np.vstack([cam0.A1, cam0.A2])
    >>> X = np.random.default_rng(0).uniform(-1, 1, (1, 20, 3)) + [0, 0, 5]
    >>> px = project_points_with_pose(X[0], np.array([0.1, 0, 0]), np.zeros(3), intr)[None]
    >>> R, t, cost = refine_poses(A0, X, px, matrix_from_rvec([[0.12, 0.01, 0]]),
    ...                           np.array([[0.05, 0, 0.1]]))
    >>> (np.round(rvec_from_matrix(R[0]), 9) + 0.0).tolist(), bool(cost[0] < 1e-16)
    ([0.1, 0.0, 0.0], True)
    """
    B = len(X)

    def residuals(state):
        uv, J = pose_jacobian(A0, X, *state)
        r = (uv - pixels).reshape(B, -1)
        r[~np.isfinite(r)] = 1e150  # undefined projections: no step is taken towards them
        return r, (*state, J)

    def jacobian(state, r):
        J = state[2].reshape(B, -1, 6).transpose(0, 2, 1)
        return np.where(np.isfinite(J), J, 0.0)

    def retract(state, steps):
        dR = matrix_from_rvec(steps[:, :3])
        return (dR @ state[0], np.einsum("bij,bj->bi", dR, state[1]) + steps[:, 3:])

    J0 = np.zeros((B, X.shape[1], 2, 6))
    (R, t, _), _, cost = batch_levenberg_marquardt(
        lambda s: residuals(s[:2]), jacobian, lambda s, d: retract(s[:2], d),
        (R, t, J0), iterations=iterations, rel_tol=rel_tol)
    return R, t, cost


def refine_pose(X, pixels, intrinsics, rvec, tvec, *, max_iterations: int = 50,
                rel_tol: float = 1e-12):
    """Maximum-likelihood pose of one camera (:func:`refine_poses` on a batch of one).

    Parameters
    ----------
    X : (N, 3) ndarray
    pixels : (N, 2) ndarray
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics
    rvec, tvec : (3,) array_like
        Starting pose.
    max_iterations : int
    rel_tol : float
        Stop when a step lowers the cost by less than this fraction.

    Returns
    -------
    rvec, tvec : (3,) ndarray
    cost : float
        Sum of squared residuals (pixels squared).

    Examples
    --------
    >>> intr = TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, 1.2, 0.5)
    >>> X = np.random.default_rng(0).uniform(-1, 1, (20, 3)) + [0, 0, 5]
    >>> px = project_points_with_pose(X, np.array([0.1, 0, 0]), np.zeros(3), intr)
    >>> rvec, tvec, cost = refine_pose(X, px, intr, [0.12, 0.01, 0], [0.05, 0, 0.1])
    >>> (np.round(rvec, 9) + 0.0).tolist(), bool(cost < 1e-16)
    ([0.1, 0.0, 0.0], True)
    """
    cam0 = compose_camera(intrinsics, np.zeros(3), np.zeros(3))
    R, t, cost = refine_poses(np.vstack([cam0.A1, cam0.A2]), np.asarray(X, float)[None],
                              np.asarray(pixels, float)[None],
                              matrix_from_rvec(np.ravel(rvec).astype(float))[None],
                              np.ravel(tvec).astype(float)[None], iterations=max_iterations,
                              rel_tol=rel_tol)
    return rvec_from_matrix(R[0]), t[0], float(cost[0])


# -- linear pose ------------------------------------------------------------------------------
def _right_singular(D):
    """Singular values and all right singular vectors ``(..., m, m)`` of ``(..., k, m)``
    matrices, without the left ones when ``k >= m`` (a tall design's full U costs k^2)."""
    _, s, Vt = np.linalg.svd(D, full_matrices=D.shape[-2] < D.shape[-1])
    return s, Vt


def _null_vectors_without(D, w, dim=1):
    """Null vectors of ``D x + sigma w = 0`` with ``sigma`` eliminated, batched: the ``dim``
    least right singular vectors ``(B, dim, m)`` of ``(I - w w^T / |w|^2) D``, and the
    ratio of the next singular value to the largest (the conditioning of the null space)."""
    ww = np.einsum("bi,bi->b", w, w)
    big = ww > 1e-30 * np.einsum("bij,bij->b", D, D)
    coef = np.where(big, 1.0 / np.where(big, ww, 1.0), 0.0)
    PD = D - w[:, :, None] * (coef[:, None] * np.einsum("bi,bij->bj", w, D))[:, None, :]
    s, Vt = _right_singular(PD)
    m = D.shape[2]
    cond = s[:, m - dim - 1] / np.maximum(s[:, 0], 1e-300)
    return Vt[:, m - dim:][:, ::-1], cond


def _decoupled_candidates(planes, Yd, scale):
    r"""Both scaled-rotation candidates ``M`` ``(B, 2, 3, c)`` of a pushbroom's two systems.

    First planes (common unit normal :math:`n_1`): :math:`a \cdot Y + b = -w_1` with
    :math:`a = M^\top n_1`, metric, by least squares. Second planes (through the finite slit,
    normals :math:`B^\top c` in the span ``B`` ``(2, 3)`` of the slit's normal planes):
    :math:`c^\top (P Y + q) = 0` with :math:`P = \lambda B M` up to scale, the least singular
    vector. With :math:`G = [n_1^\top; B]^{-1} = [g_1, G_2]`,
    :math:`M = g_1 a^\top + \lambda G_2 P`, and :math:`\operatorname{tr} M^\top M = c`
    (orthonormal columns) is a quadratic in :math:`\lambda`; its two roots are the two
    candidates (the second system's sign is free: cheirality decides). ``Yd`` are the points
    divided by ``scale``. Returns the candidates and the conditioning of the second system's null space.
    """
    Bn, n, _, _ = planes.shape
    c = Yd.shape[-1]
    n1 = planes[:, :1, 0, :3]  # (B, 1, 3)
    w1 = planes[..., 0, 3] * np.sign(np.einsum("bni,bki->bn", planes[..., 0, :3], n1))
    L = np.concatenate([Yd, np.ones((Bn, n, 1))], axis=-1)
    ab = np.linalg.solve(np.einsum("bni,bnj->bij", L, L) + 1e-300 * np.eye(c + 1),
                         np.einsum("bni,bn->bi", L, -w1)[..., None])[..., 0]
    a = ab[:, :c] / scale  # M^T n_1 of the unscaled points: unit norm rows of a rotation
    Bs = _right_singular(planes[..., 1, :3])[1][:, :2]  # (B, 2, 3)
    cc = np.einsum("bki,bni->bnk", Bs, planes[..., 1, :3])
    D = np.concatenate([np.einsum("bnk,bnj->bnkj", cc, Yd).reshape(Bn, n, 2 * c), cc],
                       axis=-1)
    sv, Vt = _right_singular(D)
    m = D.shape[-1]
    cond = sv[:, m - 2] / np.maximum(sv[:, 0], 1e-300)
    P = Vt[:, -1, :2 * c].reshape(Bn, 2, c)
    G = np.linalg.inv(np.concatenate([n1, Bs], axis=1))
    g1, G2 = G[:, :, 0], G[:, :, 1:]
    GP = G2 @ P  # (B, 3, c)
    q2 = np.einsum("bij,bij->b", GP, GP)
    q1 = 2 * np.einsum("bi,bj,bij->b", g1, a, GP)
    q0 = np.einsum("bi,bi->b", g1, g1) * np.einsum("bi,bi->b", a, a) - c
    disc = np.sqrt(np.maximum(q1 * q1 - 4 * q2 * q0, 0.0))
    lam = np.stack([-q1 + disc, -q1 - disc], axis=1) / (2 * q2[:, None] + 1e-300)
    M = g1[:, None, :, None] * a[:, None, None, :] + lam[..., None, None] * GP[:, None]
    return M, cond


def _solve_translation(planes, Y, R):
    """Least-squares ``t`` (batched) of ``n_k . (R Y + t) + w_k = 0`` for rotations ``R``
    ``(B, 3, 3)``, points ``Y`` ``(B, n, 3)`` and planes ``(B, n, 2, 4)``."""
    n = planes[..., :3].reshape(len(planes), -1, 3)
    w = planes[..., 3].reshape(len(planes), -1)
    RY = np.repeat(np.einsum("bij,bnj->bni", R, Y), 2, axis=1)
    rhs = -w - np.einsum("bmi,bmi->bm", n, RY)
    N = np.einsum("bmi,bmj->bij", n, n)
    return np.linalg.solve(N, np.einsum("bmi,bm->bi", n, rhs)[..., None])[..., 0]


def linear_pose(planes, Y, *, planar: bool, scale: float = 1.0, decoupled: bool = False):
    r"""Linear generalized absolute pose of a batch of samples.

    Solves :math:`n_k^\top (M Y + t) + \sigma w_k = 0` for ``M`` (3x3, or its first two
    columns when ``planar``) and ``t`` up to scale, with :math:`\sigma` eliminated; projects
    ``M`` to a rotation (its polar factor; ``planar``: the two columns to the nearest
    orthonormal pair, completed by their cross product) and solves ``t`` again by least squares
    with that rotation and :math:`\sigma = 1`.

    Parameters
    ----------
    planes : (B, n, 2, 4) ndarray
        The ray planes (:func:`ray_planes`) of each sample's pixels, unit normals.
    Y : (B, n, 3) ndarray
        The sample's object points, best centred and in their principal axes
        (:func:`point_frame`'s ``normalized`` times its ``scale``); ``planar``: the target lies
        in ``Y[..., 2] = 0``.
    planar : bool
    scale : float
        Typical size of ``Y`` (the design matrix is built on ``Y / scale``, for conditioning).
    decoupled : bool
        The rays' first planes share one normal and their second planes one point (a
        pushbroom camera: scanning planes parallel to each other, sensor planes through the
        finite slit). The equations then split into two systems, each homogeneous on its
        own (a 2-dimensional null space); their relative scale is the one that makes ``M``
        a scaled rotation. The second system has 8 unknowns up to scale, so 7 points are
        needed (5 on a plane).

    Returns
    -------
    R : (B, k, 3, 3) ndarray
    t : (B, k, 3) ndarray
        Poses ``X_c = R Y + t``; ``k = 1``, or ``k = 2`` when ``planar`` (both signs of the
        solution: :math:`\det R` does not fix it for a plane; cheirality does).
    ok : (B,) bool ndarray
        False for degenerate samples (a null space that is not one-dimensional, at
        :data:`SAMPLE_CONDITION_TOL`).

    Examples
    --------
    >>> from xslit.cameras import TwoSlitIntrinsics, compose_camera
    >>> intr = TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, 1.2, 0.5)
    >>> Y = np.random.default_rng(1).normal(size=(1, 8, 3))
    >>> cam = compose_camera(intr, [0.3, -0.2, 0.1], [0.1, 0.2, 6.0])
    >>> planes = ray_planes(compose_camera(intr, np.zeros(3), np.zeros(3)), cam.project(Y[0]))
    >>> R, t, ok = linear_pose(planes[None], Y, planar=False)
    >>> bool(ok[0]), np.round(rvec_from_matrix(R[0, 0]), 9).tolist()
    (True, [0.3, -0.2, 0.1])
    >>> np.round(t[0, 0], 9).tolist()
    [0.1, 0.2, 6.0]
    """
    B, n = Y.shape[:2]
    cols = 2 if planar else 3
    Yd = Y[..., :cols] / scale
    if decoupled:
        M, cond = _decoupled_candidates(planes, Yd, scale)
    else:
        nrm = planes[..., :3]  # (B, n, 2, 3)
        D = np.concatenate([np.einsum("bnki,bnj->bnkij", nrm, Yd).reshape(B, n, 2, 3 * cols),
                            nrm], axis=-1).reshape(B, 2 * n, 3 * cols + 3)
        x, cond = _null_vectors_without(D, planes[..., 3].reshape(B, 2 * n))
        M = x[:, 0, :3 * cols].reshape(B, 1, 3, cols)
        if planar:  # both signs: det R does not fix the sign for a plane
            M = np.concatenate([M, -M], axis=1)
    U, _, Vt = np.linalg.svd(M, full_matrices=False)
    Q = U @ Vt  # the nearest matrices with orthonormal columns
    if planar:
        R = np.concatenate([Q, np.cross(Q[..., 0], Q[..., 1])[..., None]], axis=-1)
    else:
        R = Q * np.where(np.linalg.det(Q) < 0, -1.0, 1.0)[..., None, None]
    k = R.shape[1]
    t = _solve_translation(np.repeat(planes, k, axis=0), np.repeat(Y, k, axis=0),
                           R.reshape(B * k, 3, 3))
    return R, t.reshape(B, k, 3), cond > SAMPLE_CONDITION_TOL


def _orient(A, Xh):
    """Flip each row pair of ``A`` ``(B, 4, 4)`` so that most points ``Xh`` ``(B, n, 4)`` have
    positive denominators (the cheirality convention of :class:`TwoSlitCamera`)."""
    den = np.einsum("bkj,bnj->bkn", A[:, [1, 3]], Xh)
    sign = np.where(np.sign(den).sum(axis=-1) < 0, -1.0, 1.0)  # (B, 2)
    return A * np.repeat(sign, 2, axis=1)[..., None]


# -- linear projective resection ------------------------------------------------------------
def linear_projective_resection(Xh, u, v, *, pushbroom: bool = False):
    r"""Linear projective resection of a batch of samples (normalised coordinates advised).

    Each row of ``A1`` solves :math:`A_1[0] \cdot x - u\, A_1[1] \cdot x = 0` (the least
    right singular vector of the stacked equations), likewise ``A2`` with ``v``. For a
    pushbroom camera ``A1 = [m_1^T\; t_1; 0\; 0\; 0\; 1]`` and ``u = [m_1^T\; t_1] x`` is
    solved by linear least squares.

    Parameters
    ----------
    Xh : (B, n, 4) ndarray
        Homogeneous object points (last coordinate 1), ``n >= 7``.
    u, v : (B, n) ndarray
        Image coordinates.
    pushbroom : bool

    Returns
    -------
    A : (B, 4, 4) ndarray
        Rows ``[A1; A2]``, each matrix of unit norm (pushbroom: ``A1[1] = (0, 0, 0, 1)``),
        oriented so that most points are in front.
    ok : (B,) bool ndarray
        False when a matrix is not determined (the design's null space is not
        one-dimensional at :data:`SAMPLE_CONDITION_TOL`, e.g. coplanar points).

    Examples
    --------
    >>> cam = TwoSlitCamera([[1, 0, 0, 0], [0, 0, 1, 0]], [[0, 2, 0, 0], [0, 0, 1, 1]])
    >>> X = np.random.default_rng(0).uniform(-1, 1, (9, 3)) + [0, 0, 4]
    >>> px = cam.project(X)
    >>> Xh = np.hstack([X, np.ones((9, 1))])
    >>> A, ok = linear_projective_resection(Xh[None], px[None, :, 0], px[None, :, 1])
    >>> bool(ok[0]), bool(np.allclose(reprojection_errors(A, Xh, px), 0, atol=1e-9))
    (True, True)
    """
    B = len(Xh)
    A = np.empty((B, 4, 4))
    ok = np.ones(B, bool)
    if pushbroom:
        s = np.linalg.svd(Xh, compute_uv=False)
        ok &= s[:, 3] > SAMPLE_CONDITION_TOL * s[:, 0]
        G = np.einsum("bni,bnj->bij", Xh, Xh) + 1e-300 * np.eye(4)
        A[:, 0] = np.linalg.solve(G, np.einsum("bni,bn->bi", Xh, u)[..., None])[..., 0]
        A[:, 1] = (0.0, 0.0, 0.0, 1.0)
        targets = [(2, v)]
    else:
        targets = [(0, u), (2, v)]
    for row, c in targets:
        D = np.concatenate([Xh, -c[..., None] * Xh], axis=-1)
        s, Vt = _right_singular(D)
        ok &= s[:, 6] > SAMPLE_CONDITION_TOL * s[:, 0]
        A[:, row:row + 2] = Vt[:, -1].reshape(B, 2, 4)
    return _orient(A, Xh), ok


def _tangent_basis(a):
    """Orthonormal bases ``(K, 8, 7)`` of the complements of unit vectors ``a`` ``(K, 8)``:
    the columns of the Householder reflection taking ``a`` to a coordinate axis, that axis
    left out."""
    K, m = a.shape
    k = np.argmax(np.abs(a), axis=1)
    v = a.copy()
    v[np.arange(K), k] += np.where(a[np.arange(K), k] < 0, -1.0, 1.0)
    H = np.eye(m) - 2.0 * v[:, :, None] * v[:, None, :] / np.einsum("ki,ki->k", v, v)[:, None,
                                                                                       None]
    keep = np.arange(m)[None, :] != k[:, None]
    return H.transpose(0, 2, 1)[keep].reshape(K, m - 1, m).transpose(0, 2, 1)


def refine_projective_resection(A, Xh, u, v, *, pushbroom: bool = False,
                                max_iterations: int = 50, rel_tol: float = 1e-12):
    r"""Maximum-likelihood projective camera: least squares on the reprojection residuals.

    The residual :math:`u - A_1[0]x / A_1[1]x` depends on ``A1`` only and
    :math:`v - A_2[0]x / A_2[1]x` on ``A2`` only, so the two matrices are refined as a batch of
    two independent problems (:func:`xslit.sfm.lm.batch_levenberg_marquardt`), each on the
    sphere of its 8 entries (steps in the tangent space, 7 parameters). A pushbroom camera's
    ``A1`` is affine in its entries: its linear least-squares fit is already the maximum of
    the likelihood, and only ``A2`` is refined.

    Parameters
    ----------
    A : (4, 4) ndarray
        Starting rows ``[A1; A2]``.
    Xh : (n, 4) ndarray
    u, v : (n,) ndarray
    pushbroom : bool
    max_iterations : int
    rel_tol : float

    Returns
    -------
    A : (4, 4) ndarray
        Each matrix of unit norm (pushbroom: ``A1`` as given), oriented as the start.

    Examples
    --------
    >>> cam = TwoSlitCamera([[1, 0, 0, 0], [0, 0, 1, 0]], [[0, 2, 0, 0], [0, 0, 1, 1]])
    >>> X = np.random.default_rng(0).uniform(-1, 1, (12, 3)) + [0, 0, 4]
    >>> px, Xh = cam.project(X), np.hstack([X, np.ones((12, 1))])
    >>> start = np.vstack([cam.A1, cam.A2]) + 0.01
    >>> A = refine_projective_resection(start, Xh, px[:, 0], px[:, 1])
    >>> bool(reprojection_errors(A[None], Xh, px).max() < 1e-9)
    True
    """
    rows = [2] if pushbroom else [0, 2]
    a0 = np.stack([A[r:r + 2].reshape(8) for r in rows])
    sign = np.sign(a0[:, 4:] @ np.ones(4) + 1e-300)
    a0 = a0 / np.linalg.norm(a0, axis=1, keepdims=True)
    target = np.stack([u, v])[[r // 2 for r in rows]]

    def residuals(state):
        a = state[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.einsum("ki,ni->kn", a[:, :4], Xh) / np.einsum("ki,ni->kn", a[:, 4:], Xh)
        return r - target, state

    def jacobian(state, r):
        a = state[0]
        den = np.einsum("ki,ni->kn", a[:, 4:], Xh)
        pred = r + target
        J = np.concatenate([Xh[None] / den[..., None], -(pred / den)[..., None] * Xh[None]],
                           axis=-1)  # (K, n, 8)
        return np.einsum("kim,kni->kmn", _tangent_basis(a), J)

    def retract(state, steps):
        a = state[0] + np.einsum("kim,km->ki", _tangent_basis(state[0]), steps)
        return (a / np.linalg.norm(a, axis=1, keepdims=True),)

    (a,), _, _ = batch_levenberg_marquardt(residuals, jacobian, retract, (a0,),
                                           iterations=max_iterations, rel_tol=rel_tol)
    out = np.array(A, dtype=float)
    for k, r in enumerate(rows):
        # Keep the start's orientation (the sign of a matrix carries cheirality).
        same = np.sign(a[k, 4:] @ np.ones(4) + 1e-300) == sign[k]
        out[r:r + 2] = (a[k] if same else -a[k]).reshape(2, 4)
    return out


# -- results --------------------------------------------------------------------------------
@dataclass
class ResectionResult:
    """A resection: the pose (known intrinsics) or the projective camera, or why it failed.

    Attributes
    ----------
    success : bool
    reason : str
        Why it failed ("" on success).
    camera : TwoSlitCamera or PushbroomCamera or None
        The camera (composed from the pose when the intrinsics are known).
    rvec, tvec : (3,) ndarray or None
        The pose (``X_c = R X + t``, as cv2), known intrinsics only.
    inliers : (N,) bool ndarray
        The correspondences used (all of them without a robust method).
    rms : float
        Root mean square reprojection distance over the inliers (pixels).
    configuration : str
        The object points' :attr:`PointFrame.kind`.
    iterations : int
        Samples drawn by the robust loop (0 without).
    """

    success: bool
    reason: str = ""
    camera: TwoSlitCamera | None = None
    rvec: np.ndarray | None = None
    tvec: np.ndarray | None = None
    inliers: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    rms: float = np.inf
    configuration: str = ""
    iterations: int = 0


def _failure(reason, n, frame=None, iterations=0) -> ResectionResult:
    return ResectionResult(False, reason, inliers=np.zeros(n, bool),
                           configuration=frame.kind if frame is not None else "",
                           iterations=iterations)


def _rms(errors) -> float:
    return float(np.sqrt(np.mean(errors * errors))) if len(errors) else np.inf


# -- pose with known intrinsics ----------------------------------------------------------------
class PoseProblem(RobustProblemBase):
    """:class:`xslit.robust.RobustProblem` for the pose with known intrinsics.

    Models are ``(3, 4)`` matrices ``[R | t]``; samples are fitted by :func:`linear_pose`
    (6 points, or 5 on a planar target), residuals are reprojection distances in pixels
    (infinite behind the camera), refits are maximum likelihood on the inliers
    (:func:`refine_pose`).

    Parameters
    ----------
    X : (N, 3) ndarray
    pixels : (N, 2) ndarray
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics
    frame : PointFrame, optional
        :func:`point_frame` of ``X`` when already computed.
    """

    degenerate_reason = ("the sampled object points are collinear or the samples' rays do not "
                         "determine a pose")
    #: Levenberg-Marquardt steps on each sample's own points after the linear solve. The
    #: linear solution minimises distances to the rays' planes, which weigh far points more
    #: than their pixels do: with rays far from the axis (a principal point outside the
    #: image and a short focal length) a 6-point sample with 0.5 px of noise was measured
    #: 1 degree and a scene unit off, explaining no other point; the sample's own maximum
    #: likelihood is close enough for the loop to find the inliers.
    polish_iterations = 5

    def __init__(self, X, pixels, intrinsics, frame: PointFrame | None = None):
        if not isinstance(intrinsics, (TwoSlitIntrinsics, PushbroomIntrinsics)):
            raise ValueError("intrinsics must be TwoSlitIntrinsics or PushbroomIntrinsics, got "
                             f"{type(intrinsics).__name__}")
        self.X = np.asarray(X, dtype=float)
        self.pixels = np.asarray(pixels, dtype=float)
        self.intrinsics = intrinsics
        self.frame = point_frame(self.X) if frame is None else frame
        self.planar = self.frame.kind == "planar"
        self.decoupled = isinstance(intrinsics, PushbroomIntrinsics)
        self.sample_size = (MIN_PLANAR_POSE_POINTS if self.planar else
                            MIN_PUSHBROOM_POSE_POINTS if self.decoupled else MIN_POSE_POINTS)
        self.n_points = len(self.X)
        cam0 = compose_camera(intrinsics, np.zeros(3), np.zeros(3))
        self.A0 = np.vstack([cam0.A1, cam0.A2])
        self.planes = ray_planes(cam0, self.pixels)
        self.Y = self.frame.normalized * self.frame.scale
        self.Xh = np.hstack([self.X, np.ones((self.n_points, 1))])

    def world_pose(self, R, t):
        """Poses ``(..., 3, 4)`` of world points from poses of the frame's points ``Y``."""
        Rw = R @ self.frame.basis
        return np.concatenate([Rw, (t - Rw @ self.frame.centre)[..., None]], axis=-1)

    def fit_samples(self, samples, near=None):
        """Linear poses of the samples (:func:`linear_pose`, batched); planar targets give
        two candidates per sample (both signs), told apart by the residuals' cheirality."""
        R, t, ok = linear_pose(self.planes[samples], self.Y[samples], planar=self.planar,
                               scale=self.frame.scale, decoupled=self.decoupled)
        k = R.shape[1]
        models = self.world_pose(R, t)[ok].reshape(-1, 3, 4)
        picks = np.repeat(samples[ok], k, axis=0)
        if self.polish_iterations and len(models):
            R, t, _ = refine_poses(self.A0, self.X[picks], self.pixels[picks], models[..., :3],
                                   models[..., 3], iterations=self.polish_iterations)
            models = np.concatenate([R, t[..., None]], axis=-1)
        return models, np.repeat(np.flatnonzero(ok), k)

    def residuals(self, models, subset=None):
        Xh = self.Xh if subset is None else self.Xh[subset]
        px = self.pixels if subset is None else self.pixels[subset]
        T = np.zeros((len(models), 4, 4))
        T[:, :3] = models
        T[:, 3, 3] = 1.0
        return reprojection_errors(self.A0 @ T, Xh, px, cheirality=True)

    def refit(self, model, inliers, threshold, final=True):
        """Maximum likelihood on the inliers from ``model`` (a few steps when not final)."""
        if np.count_nonzero(inliers) < self.sample_size:
            return None
        rvec, tvec, _ = refine_pose(self.X[inliers], self.pixels[inliers], self.intrinsics,
                                    rvec_from_matrix(model[:, :3]), model[:, 3],
                                    max_iterations=50 if final else 5)
        return np.concatenate([matrix_from_rvec(rvec), tvec[:, None]], axis=1)

    def chance_residuals(self, model, rng, draws):
        """Distances of the projections to the pixels of other, random points."""
        m = min(draws, 4 * self.n_points)
        i = rng.integers(0, self.n_points, m)
        j = (i + rng.integers(1, self.n_points, m)) % self.n_points
        return reprojection_errors(self._camera_rows(model), self.Xh[i], self.pixels[j],
                                   cheirality=True)[0]

    def _camera_rows(self, model):
        T = np.eye(4)
        T[:3] = model
        return (self.A0 @ T)[None]


def _select_pose(problem: PoseProblem, models):
    """The candidate that sees most points in front, then with the least squared error."""
    r = problem.residuals(models)
    front = np.isfinite(r).sum(axis=1)
    sq = np.where(np.isfinite(r), r * r, 0.0).sum(axis=1)
    k = np.lexsort((sq, -front))[0]
    return models[k]


def resect_pose(X, pixels, intrinsics, rvec=None, tvec=None, *, refine: bool = True
                ) -> ResectionResult:
    """Pose of a camera with known intrinsics from 2D-3D correspondences.

    Linear (:func:`linear_pose` on all points: 6 or more non-coplanar points, or 5 or more on
    a plane) unless a starting pose is given, then maximum likelihood (:func:`refine_pose`)
    when ``refine``.

    Parameters
    ----------
    X : (N, 3) ndarray
        Validated object points.
    pixels : (N, 2) ndarray
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics
    rvec, tvec : (3,) ndarray, optional
        Starting pose (both or neither).
    refine : bool

    Returns
    -------
    ResectionResult

    Examples
    --------
    >>> intr = TwoSlitIntrinsics.from_parameters(800, 600, 320, 240, 1.2, 0.5)
    >>> board = np.array([[x, y, 0.0] for x in range(-3, 4) for y in range(-2, 3)]) * 0.1
    >>> px = project_points_with_pose(board, np.array([0.2, 0.1, 3.0]), np.array([0, 0, 2.0]),
    ...                               intr)
    >>> res = resect_pose(board, px, intr)
    >>> res.success, res.configuration, np.round(res.rvec, 9).tolist()
    (True, 'planar', [0.2, 0.1, 3.0])
    """
    X = np.asarray(X, dtype=float)
    n = len(X)
    problem = PoseProblem(X, pixels, intrinsics)
    frame = problem.frame
    reason = _configuration_reason(frame, "a pose")
    if reason:
        return _failure(reason, n, frame)
    if rvec is None:
        if n < problem.sample_size:
            return _failure(f"{n} non-coplanar object points; the linear pose needs "
                            f"{problem.sample_size} (or {MIN_PLANAR_POSE_POINTS} on a plane)",
                            n, frame)
        models, _ = problem.fit_samples(np.arange(n)[None])
        if not len(models):
            return _failure("the rays do not determine a pose (the linear system's null space "
                            "is not one-dimensional)", n, frame)
        model = _select_pose(problem, models)
        rv, tv = rvec_from_matrix(model[:, :3]), model[:, 3].copy()
    else:
        rv, tv = np.asarray(rvec, float), np.asarray(tvec, float)
    if refine:
        rv, tv, _ = refine_pose(X, problem.pixels, intrinsics, rv, tv)
    return _pose_result(problem, rv, tv, np.ones(n, bool))


def _pose_result(problem: PoseProblem, rvec, tvec, inliers, iterations=0):
    model = np.concatenate([matrix_from_rvec(rvec), tvec[:, None]], axis=1)
    e = problem.residuals(model[None])[0]
    frame = problem.frame
    if not np.all(np.isfinite(e[inliers])):
        return _failure(f"{int(np.count_nonzero(~np.isfinite(e[inliers])))} of the "
                        f"{int(inliers.sum())} points used are behind the camera or on its "
                        "exceptional locus at the pose found", len(e), frame, iterations)
    return ResectionResult(True, "", compose_camera(problem.intrinsics, rvec, tvec), rvec,
                           tvec, inliers, _rms(e[inliers]), frame.kind, iterations)


def resect_pose_robust(X, pixels, intrinsics, *, threshold: float = 8.0,
                       confidence: float = 0.99, max_iterations: int = 1000, rng=None
                       ) -> ResectionResult:
    """Robust pose with known intrinsics: :func:`xslit.robust.robust_estimate` on a
    :class:`PoseProblem` (MSAC score, local optimisation, final maximum likelihood on the
    inliers, non-randomness test).

    Parameters
    ----------
    X : (N, 3) ndarray
    pixels : (N, 2) ndarray
    intrinsics : TwoSlitIntrinsics or PushbroomIntrinsics
    threshold : float
        Inlier threshold on the reprojection distance (pixels).
    confidence : float
    max_iterations : int
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ResectionResult
    """
    X = np.asarray(X, dtype=float)
    problem = PoseProblem(X, pixels, intrinsics)
    reason = _configuration_reason(problem.frame, "a pose")
    if reason:
        return _failure(reason, len(X), problem.frame)
    opt = RobustOptions(method=MSAC, threshold=threshold, confidence=confidence,
                        max_iterations=max_iterations)
    res = robust_estimate(problem, opt, rng)
    if not res.success:
        return _failure(res.reason, len(X), problem.frame, res.iterations)
    return _pose_result(problem, rvec_from_matrix(res.model[:, :3]), res.model[:, 3].copy(),
                        res.inliers, res.iterations)


# -- projective camera -----------------------------------------------------------------------
def _axis_normalization(c):
    """Centre and scale ``(m, s)`` of one image axis: ``(c - m) / s`` has unit RMS."""
    m = float(np.mean(c))
    s = float(np.sqrt(np.mean((c - m) ** 2)))
    return m, s if s > 0 else 1.0


class ProjectiveResectionProblem(RobustProblemBase):
    """:class:`xslit.robust.RobustProblem` for the projective camera (intrinsics unknown).

    Object points and pixels are normalised once (:func:`point_frame`, per image axis); models
    are rows ``[A1; A2]`` ``(4, 4)`` in the normalised coordinates (:meth:`camera_from_model`
    gives the camera of the original ones), fitted by :func:`linear_projective_resection` on
    samples of 7 and refined by :func:`refine_projective_resection`; residuals are
    reprojection distances in pixels.

    Parameters
    ----------
    X : (N, 3) ndarray
    pixels : (N, 2) ndarray
    pushbroom : bool
    frame : PointFrame, optional
    """

    sample_size = MIN_PROJECTIVE_POINTS
    degenerate_reason = ("the sampled object points are coplanar (a plane adds a null "
                         "direction to each matrix)")

    def __init__(self, X, pixels, *, pushbroom: bool = False, frame: PointFrame | None = None):
        self.X = np.asarray(X, dtype=float)
        self.pixels = np.asarray(pixels, dtype=float)
        self.pushbroom = pushbroom
        self.frame = point_frame(self.X) if frame is None else frame
        self.n_points = len(self.X)
        self.Xh = np.hstack([self.frame.normalized, np.ones((self.n_points, 1))])
        (mu, su), (mv, sv) = (_axis_normalization(c) for c in self.pixels.T)
        self.axis_maps = np.array([[[su, mu], [0.0, 1.0]], [[sv, mv], [0.0, 1.0]]])
        self.scale = (su, sv)
        self.u = (self.pixels[:, 0] - mu) / su
        self.v = (self.pixels[:, 1] - mv) / sv
        self._uv = np.stack([self.u, self.v], axis=1)

    def fit_samples(self, samples, near=None):
        A, ok = linear_projective_resection(self.Xh[samples], self.u[samples],
                                            self.v[samples], pushbroom=self.pushbroom)
        return A[ok], np.flatnonzero(ok)

    def residuals(self, models, subset=None):
        Xh = self.Xh if subset is None else self.Xh[subset]
        uv = self._uv if subset is None else self._uv[subset]
        return reprojection_errors(models, Xh, uv, scale=self.scale)

    def refit(self, model, inliers, threshold, final=True):
        """Linear fit of the inliers, then (final) maximum likelihood from the better of it
        and ``model``."""
        idx = np.flatnonzero(inliers)
        if len(idx) < self.sample_size:
            return None
        A, ok = linear_projective_resection(self.Xh[idx][None], self.u[idx][None],
                                            self.v[idx][None], pushbroom=self.pushbroom)
        if not ok[0]:
            return None
        cands = np.stack([A[0], model])
        start = cands[np.argmin(np.sum(self.residuals(cands, idx) ** 2, axis=1))]
        if not final:
            return start
        return refine_projective_resection(start, self.Xh[idx], self.u[idx], self.v[idx],
                                           pushbroom=self.pushbroom)

    def chance_residuals(self, model, rng, draws):
        """Distances of the projections to the pixels of other, random points."""
        m = min(draws, 4 * self.n_points)
        i = rng.integers(0, self.n_points, m)
        j = (i + rng.integers(1, self.n_points, m)) % self.n_points
        return reprojection_errors(model[None], self.Xh[i], self._uv[j], scale=self.scale)[0]

    def camera_from_model(self, model) -> TwoSlitCamera:
        """The camera of the original coordinates (raises ValueError when the slits meet)."""
        T = self.frame.homogeneous_map
        A1 = self.axis_maps[0] @ model[:2] @ T
        A2 = self.axis_maps[1] @ model[2:] @ T
        A1, A2 = A1 / np.linalg.norm(A1), A2 / np.linalg.norm(A2)
        if self.pushbroom:
            return PushbroomCamera(A1, A2)
        return TwoSlitCamera(A1, A2)


def _projective_reason(frame: PointFrame) -> str:
    reason = _configuration_reason(frame, "a projective camera")
    if reason or frame.kind != "planar":
        return reason
    return (f"the object points are coplanar (relative spread {frame.spread[2]:.1e} off their "
            f"plane, below {FLAT_TOL}): adding multiples of the plane to the rows of A1 or A2 "
            "changes no projection, so the projective camera is not determined (give the "
            "intrinsics to solve for the pose)")


def _projective_result(problem, model, inliers, iterations=0):
    frame = problem.frame
    try:
        camera = problem.camera_from_model(model)
    except ValueError as exc:
        return _failure(f"the camera found is degenerate: {exc}", problem.n_points, frame,
                        iterations)
    e = problem.residuals(model[None])[0]
    if not np.all(np.isfinite(e[inliers])):
        return _failure("points used lie on the exceptional locus of the camera found",
                        problem.n_points, frame, iterations)
    return ResectionResult(True, "", camera, None, None, inliers, _rms(e[inliers]),
                           frame.kind, iterations)


def resect_projective(X, pixels, *, pushbroom: bool = False, refine: bool = True
                      ) -> ResectionResult:
    """Projective two-slit (14 dof) or pushbroom (11 dof) camera from >= 7 correspondences.

    Linear (:func:`linear_projective_resection` on normalised coordinates), then maximum
    likelihood (:func:`refine_projective_resection`) when ``refine``.

    Parameters
    ----------
    X : (N, 3) ndarray
        Validated object points, not coplanar.
    pixels : (N, 2) ndarray
    pushbroom : bool
    refine : bool

    Returns
    -------
    ResectionResult
        ``camera`` a :class:`TwoSlitCamera` or :class:`PushbroomCamera`; no pose.

    Examples
    --------
    >>> cam = TwoSlitCamera([[1, 0, 0, 0], [0, 0, 1, 0]], [[0, 2, 0, 0], [0, 0, 1, 1]])
    >>> X = np.random.default_rng(0).uniform(-1, 1, (20, 3)) + [0, 0, 4]
    >>> res = resect_projective(X, cam.project(X))
    >>> res.success, bool(np.allclose(res.camera.project(X), cam.project(X)))
    (True, True)
    """
    X = np.asarray(X, dtype=float)
    frame = point_frame(X)
    reason = _projective_reason(frame)
    if reason:
        return _failure(reason, len(X), frame)
    problem = ProjectiveResectionProblem(X, pixels, pushbroom=pushbroom, frame=frame)
    A, ok = linear_projective_resection(problem.Xh[None], problem.u[None], problem.v[None],
                                        pushbroom=pushbroom)
    if not ok[0]:
        return _failure("the correspondences do not determine a projective camera (the "
                        "linear system's null space is not one-dimensional)", len(X), frame)
    model = A[0]
    if refine:
        model = refine_projective_resection(model, problem.Xh, problem.u, problem.v,
                                            pushbroom=pushbroom)
    return _projective_result(problem, model, np.ones(len(X), bool))


def resect_projective_robust(X, pixels, *, pushbroom: bool = False, threshold: float = 8.0,
                             confidence: float = 0.99, max_iterations: int = 1000, rng=None
                             ) -> ResectionResult:
    """Robust projective camera: :func:`xslit.robust.robust_estimate` on a
    :class:`ProjectiveResectionProblem` (7-point samples, MSAC, local optimisation, final
    maximum likelihood on the inliers).

    Parameters
    ----------
    X : (N, 3) ndarray
    pixels : (N, 2) ndarray
    pushbroom : bool
    threshold : float
        Inlier threshold on the reprojection distance (pixels).
    confidence : float
    max_iterations : int
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ResectionResult
    """
    X = np.asarray(X, dtype=float)
    frame = point_frame(X)
    reason = _projective_reason(frame)
    if reason:
        return _failure(reason, len(X), frame)
    problem = ProjectiveResectionProblem(X, pixels, pushbroom=pushbroom, frame=frame)
    opt = RobustOptions(method=MSAC, threshold=threshold, confidence=confidence,
                        max_iterations=max_iterations)
    res = robust_estimate(problem, opt, rng)
    if not res.success:
        return _failure(res.reason, len(X), frame, res.iterations)
    return _projective_result(problem, res.model, res.inliers, res.iterations)
