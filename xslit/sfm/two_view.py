r"""Two-view reconstruction: maximum-likelihood refinement and metric relative pose.

Projective (section 4, "Structure from motion"): the two configurations recovered from the
principal minors of :math:`F` are refined by minimising the reprojection error over the 13
degrees of freedom of the pair (the matrix :math:`C` of eq. (24) in the gauge
:math:`c_{12} = c_{13} = c_{14} = 1`) and the 3D points (homogeneous, with a local
3-parameter update), with an analytic sparse Jacobian. The refined tensor is computed from the
refined cameras, so it lies exactly on the variety of epipolar tensors.

Metric (known intrinsics): :func:`refine_metric_pose` is the maximum-likelihood refinement of
the 6 pose parameters and the 3D points with camera 1 fixed to its canonical Euclidean form;
the pose itself comes from the calibrated solver of :mod:`xslit.sfm.calibrated`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .. import _jit
from .._checks import (
    MAX_RVEC_NORM,
    check_array,
    check_batch,
    check_finite,
    check_point_pair,
    check_positive_int,
    check_rvec,
    check_vector,
)
from ..cameras import (
    PushbroomIntrinsics,
    TwoSlitCamera,
    TwoSlitIntrinsics,
    camera_matrices,
    check_two_slit_matrices,
    checked_translation_length,
    compose_camera,
)
from ..epipolar.minors import balance_matrix, cameras_from_matrix, normalize_matrix_gauge
from ..epipolar.tensor import epipolar_tensor
from ..geometry.projective import matrix_from_rvec
from .lm import block_levenberg_marquardt, eliminated_rows
from .triangulate import triangulate_linear, triangulate_nonlinear

__all__ = [
    "MetricFit",
    "ProjectiveRefinement",
    "fit_metric_pose",
    "metric_pose_information",
    "metric_residuals",
    "projective_pairs_from_tensor",
    "refine_metric_pose",
    "refine_projective_pair",
]

_FREE = np.array([[0, 0]] + [[r, c] for r in (1, 2, 3) for c in range(4)])  # 13 entries of C


@dataclass
class ProjectiveRefinement:
    """Result of :func:`refine_projective_pair`."""

    C: np.ndarray  # (4, 4) in the gauge c12 = c13 = c14 = 1 (to compare with the paper)
    cameras: tuple  # (A1, A2, B1, B2), from the balanced C
    F: np.ndarray  # (2, 2, 2, 2), unit norm, exactly the tensor of the cameras
    points: np.ndarray  # (N, 4) homogeneous, unit norm
    rms: float  # reprojection RMS per coordinate, pixels
    success: bool
    message: str


def _check_intrinsics(name: str, value):
    if not isinstance(value, (TwoSlitIntrinsics, PushbroomIntrinsics)):
        raise ValueError(f"{name} must be TwoSlitIntrinsics or PushbroomIntrinsics, got "
                         f"{type(value).__name__}")
    return value


def _check_points3(name: str, X, n: int, width: int) -> np.ndarray:
    X = check_array(name, X)
    if X.shape != (n, width):
        raise ValueError(f"{name} must have shape ({n}, {width}) (one point per "
                         f"correspondence), got {X.shape}")
    return check_finite(name, X)


def _tangent_basis(X):
    """Rows spanning the orthogonal complement of each unit 4-vector: (N, 3, 4)."""
    _, _, Vt = np.linalg.svd(X[:, None, :])
    return Vt[:, 1:, :]


def _residuals_C(C, X, obs):
    """Residuals (N, 4) of canonical cameras: view m reads X[m] / (c_m . X)."""
    den = X @ C.T  # (N, 4)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = X / den
    return val - obs, val, den


def refine_projective_pair(C0, points1, points2, X0=None, *, axis_scales=None,
                           max_iterations: int = 100):
    """Maximum-likelihood refinement of a projective two-slit pair (13 + 3N parameters).

    Minimises the reprojection error in both images with :func:`block_levenberg_marquardt`
    and an analytic Jacobian.

    Parameters
    ----------
    C0 : (4, 4) array_like
        Initial configuration (eq. (24)); any diagonal gauge.
    points1, points2 : (N, 2) ndarray
        Inlier correspondences.
    X0 : (N, 4) ndarray, optional
        Initial points; triangulated linearly when omitted.
    axis_scales : (4,) array_like, optional
        Pixels per unit of each coordinate (x, y, x', y') when the points are normalised:
        residuals are multiplied by them, so the cost and ``rms`` are in pixels.

    Returns
    -------
    ProjectiveRefinement
    """
    C0 = check_batch("C0", C0, (4, 4), batched=False)
    points1, points2 = check_point_pair("points1", points1, "points2", points2, min_count=1)
    if X0 is not None:
        X0 = _check_points3("X0", X0, len(points1), 4)
    if axis_scales is not None:
        axis_scales = check_vector("axis_scales", axis_scales, 4)
        if not np.all(axis_scales > 0):
            raise ValueError(f"axis_scales must be positive, got {axis_scales}")
    max_iterations = check_positive_int("max_iterations", max_iterations, minimum=0)
    return _refine_projective_pair(C0, points1, points2, X0, axis_scales, max_iterations)


def _refine_projective_pair(C0, points1, points2, X0, axis_scales, max_iterations):
    """:func:`refine_projective_pair` on validated input (``C0`` may be non-finite: a
    configuration that failed upstream is reported as a failure)."""
    w = np.ones(4) if axis_scales is None else np.asarray(axis_scales, dtype=float)
    C0 = np.asarray(C0, dtype=float)
    if not np.all(np.isfinite(C0)) or np.any(C0[0, 1:] == 0):
        return ProjectiveRefinement(C0, (), None, None, np.inf, False,
                                    "initial configuration has c12, c13 or c14 = 0")
    C0 = balance_matrix(C0)  # gauge: c12, c13, c14 fixed at their balanced values
    obs = np.stack([points1[:, 0], points1[:, 1], points2[:, 0], points2[:, 1]], axis=1)
    n = len(obs)
    if X0 is None:
        cams = cameras_from_matrix(C0)
        X0 = triangulate_linear([TwoSlitCamera(*cams[:2]), TwoSlitCamera(*cams[2:])],
                                [points1, points2])
    X0 = X0 / np.linalg.norm(X0, axis=1, keepdims=True)
    Bt = _tangent_basis(X0)  # (N, 3, 4)

    def unpack(g, p):
        C = C0.copy()
        C[_FREE[:, 0], _FREE[:, 1]] = g
        return C, X0 + np.einsum("nk,nkj->nj", p, Bt)

    def fun(g, p):
        C, X = unpack(g, p)
        return _residuals_C(C, X, obs)[0] * w

    def jac(g, p):
        C, X = unpack(g, p)
        _, val, den = _residuals_C(C, X, obs)
        Jg = np.zeros((n, 4, 13))
        # d r_m / d c_mj = -val_m X_j / den_m
        Jg[:, _FREE[:, 0], np.arange(13)] = -(val / den)[:, _FREE[:, 0]] * X[:, _FREE[:, 1]]
        # d r_m / dX = (e_m - val_m c_m) / den_m, times the tangent basis
        dX = (np.eye(4)[None] - val[:, :, None] * C[None]) / den[:, :, None]
        Jp = np.einsum("nmj,nkj->nmk", dX, Bt)
        return Jg * w[None, :, None], Jp * w[None, :, None]

    g0 = C0[_FREE[:, 0], _FREE[:, 1]]
    if not np.all(np.isfinite(fun(g0, np.zeros((n, 3))))):
        return ProjectiveRefinement(C0, (), None, None, np.inf, False,
                                    "a point projects to infinity in the initial configuration")
    sol = block_levenberg_marquardt(fun, g0, np.zeros((n, 3)), jac,
                                    max_iterations=max_iterations)
    C, X = unpack(sol.g, sol.p)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    cams = cameras_from_matrix(C)
    C = normalize_matrix_gauge(C)
    F = epipolar_tensor(*cams)
    F = F / np.linalg.norm(F)
    rms = float(np.sqrt(np.mean(sol.residuals**2)))
    return ProjectiveRefinement(C, cams, F, X, rms, sol.converged,
                                f"{sol.iterations} iterations")


# --------------------------------------------------------------------------------------
# Metric pose with known intrinsics
# --------------------------------------------------------------------------------------


def _nb_metric_jacobian(A, B, h, p, Jg, Jp):
    """The Jacobians of :func:`metric_residuals`' ``jac`` at the points ``p`` (N, 3): ``A``
    (4, 2, 4) the rows of the two cameras, ``B`` (6, 2, 2, 4) camera 2's rows moved by each of
    the 6 pose steps ``h`` (6,); fills ``Jg`` (N, 4, 6) (the rows of image 1 are 0) and ``Jp``
    (N, 4, 3), one point at a time."""
    for n in range(p.shape[0]):
        x, y, z = p[n, 0], p[n, 1], p[n, 2]
        for v in range(4):
            a0 = A[v, 0, 0] * x + A[v, 0, 1] * y + A[v, 0, 2] * z + A[v, 0, 3]
            a1 = A[v, 1, 0] * x + A[v, 1, 1] * y + A[v, 1, 2] * z + A[v, 1, 3]
            val = a0 / a1
            for j in range(3):
                Jp[n, v, j] = (A[v, 0, j] - val * A[v, 1, j]) / a1
            for k in range(6):
                if v < 2:
                    Jg[n, v, k] = 0.0
                    continue
                b0 = B[k, v - 2, 0, 0] * x + B[k, v - 2, 0, 1] * y + B[k, v - 2, 0, 2] * z \
                    + B[k, v - 2, 0, 3]
                b1 = B[k, v - 2, 1, 0] * x + B[k, v - 2, 1, 1] * y + B[k, v - 2, 1, 2] * z \
                    + B[k, v - 2, 1, 3]
                Jg[n, v, k] = (b0 / b1 - val) / h[k]


@functools.cache
def _compiled():
    """The compiled :func:`_nb_metric_jacobian`, or None when numba cannot be imported
    (compiled on the first call, cached on disk)."""
    namespace = globals()
    if not _jit.compile_kernels(namespace, ("_nb_metric_jacobian",)):
        return None
    return namespace["_nb_metric_jacobian"]


def metric_residuals(intrinsics1, intrinsics2, points1, points2, *, backend: str = "auto"):
    r"""The reprojection residuals of a calibrated pair and their Jacobians, as functions.

    Camera 1 is fixed at the canonical pose; camera 2 has the pose ``g = [rvec, tvec]``
    (``X_cam2 = R X_cam1 + t``); the points ``p`` are Euclidean in camera 1's frame. The point
    blocks of the Jacobian are analytic,

    .. math:: \frac{\partial (a_0 / a_1)}{\partial X} = \frac{A_0 a_1 - A_1 a_0}{a_1^2},
              \qquad a_k = A_k [X; 1],

    and the pose columns forward differences of camera 2's rows (camera 2 at a nearby pose is
    camera 2 times a rigid motion, so no new camera is built).

    Parameters
    ----------
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
    points1, points2 : (N, 2) ndarray
        Pixels.
    backend : {"auto", "numba", "numpy"}
        How ``jac`` evaluates the projections: ``"numpy"`` as matrix products of all points at
        once, ``"numba"`` in a compiled loop over the points (:func:`_nb_metric_jacobian`; the
        same numbers up to rounding, about 5 times faster on a few hundred points, where
        the batched products spend their time in the overhead of small arrays); ``"auto"`` is
        ``"numba"`` when numba is installed and the environment variable ``XSLIT_NO_NUMBA``
        does not switch it off (:mod:`xslit._jit`).

    Returns
    -------
    fun : callable
        ``fun(g, p) -> (N, 4)`` residuals (u, v in image 1, u, v in image 2), infinite for a
        pose whose camera 2 is not a camera (slits that meet).
    jac : callable
        ``jac(g, p) -> (Jg (N, 4, 6), Jp (N, 4, 3))``, as
        :func:`~xslit.sfm.lm.block_levenberg_marquardt` takes it.

    Examples
    --------
    >>> from xslit.synthetic import random_two_view_scene
    >>> s = random_two_view_scene(0, 5)
    >>> fun, jac = metric_residuals(s["intrinsics1"], s["intrinsics2"], s["points1"],
    ...                             s["points2"])
    >>> g = np.concatenate([s["rvec"], s["tvec"]])
    >>> bool(np.abs(fun(g, s["X"])).max() < 1e-9), jac(g, s["X"])[0].shape
    (True, (5, 4, 6))
    """
    _check_intrinsics("intrinsics1", intrinsics1)
    _check_intrinsics("intrinsics2", intrinsics2)
    points1, points2 = check_point_pair("points1", points1, "points2", points2)
    kernel = _jit.select_kernels(backend, _compiled, "metric_residuals")
    # Camera 1 at the canonical pose, as compose_camera makes it (whose checks can fail only
    # where its translation, zero, is beyond checked_translation_length).
    A1_1, A2_1 = camera_matrices(intrinsics1, np.eye(3), np.zeros(3))
    if checked_translation_length(intrinsics1) < 0:
        compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    obs = np.concatenate([points1, points2], axis=1)
    cache = {}
    checked = checked_translation_length(intrinsics2)
    checked = checked * abs(checked)

    def rows(g):
        """The rows (4, 2, 4) of both cameras at the pose ``g`` and its rotation matrix, or
        None for a pose that makes no camera (a step to it is rejected): the matrices and
        the verdict of :func:`~xslit.cameras.compose_camera`, without building a camera
        (its checks run only where they could fail, beyond
        :func:`~xslit.cameras.checked_translation_length`)."""
        key = g.tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = None
            if np.isfinite(g).all() and np.abs(g[:3]).max() <= MAX_RVEC_NORM:
                R = matrix_from_rvec(g[:3])
                try:
                    with np.errstate(over="raise", invalid="raise"):
                        A1, A2 = camera_matrices(intrinsics2, R, g[3:])
                        if not g[3:] @ g[3:] <= checked:
                            check_two_slit_matrices(A1, A2)
                except (ValueError, FloatingPointError):
                    pass
                else:
                    cache[key] = np.stack([A1_1, A2_1, A1, A2]), R
        return cache[key]

    def project(A, p):
        # a = A [p; 1] for every row of every view (N, V, 2), as one matrix product
        a = (p @ A[:, :, :3].reshape(-1, 3).T).reshape(len(p), -1, 2) + A[:, :, 3]
        with np.errstate(divide="ignore", invalid="ignore"):
            return a[..., 0] / a[..., 1], a

    def fun(g, p):
        cams = rows(g)
        if cams is None:
            return np.full((len(p), 4), np.inf)
        return project(cams[0], p)[0] - obs

    def jac(g, p):
        A, R = rows(g)
        if kernel is not None:
            return compiled_jac(g, p, A, R)
        val, a = project(A, p)
        with np.errstate(divide="ignore", invalid="ignore"):
            Jp = (A[None, :, 0, :3] - val[..., None] * A[None, :, 1, :3]) / a[..., 1:]
        # Camera 2 at a nearby pose (R', t') is camera 2 at (R, t) times the rigid motion
        # [R^T R', R^T (t' - t); 0 1]: no new camera to build and check.
        Jg = np.zeros((len(p), 4, 6))
        for k in range(6):
            h = 1e-7 * max(1.0, abs(g[k]))
            motion = np.eye(4)
            if k < 3:
                gk = g[:3].copy()
                gk[k] += h
                motion[:3, :3] = R.T @ matrix_from_rvec(gk)
            else:
                motion[:3, 3] = h * R[k - 3]
            Jg[:, 2:, k] = (project(A[2:] @ motion, p)[0] - val[:, 2:]) / h
        return Jg, Jp

    def compiled_jac(g, p, A, R):
        """``jac`` with the projections in the compiled kernel: camera 2's rows at the six
        nearby poses are formed once (the same motions as above)."""
        h = 1e-7 * np.maximum(1.0, np.abs(g))
        motion = np.tile(np.eye(4), (6, 1, 1))
        motion[:3, :3, :3] = R.T @ matrix_from_rvec(g[:3] + h[:3, None] * np.eye(3))
        motion[3:, :3, 3] = h[3:, None] * R
        B = np.ascontiguousarray(A[None, 2:] @ motion[:, None])
        Jg, Jp = np.empty((len(p), 4, 6)), np.empty((len(p), 4, 3))
        kernel(np.ascontiguousarray(A), B, h, np.ascontiguousarray(p, dtype=float), Jg, Jp)
        return Jg, Jp

    return fun, jac


@dataclass
class MetricFit:
    """Result of :func:`fit_metric_pose`."""

    rvec: np.ndarray  # (3,) pose of camera 2 (X_cam2 = R X_cam1 + t)
    tvec: np.ndarray  # (3,)
    points: np.ndarray  # (N, 3) in camera 1's frame
    rms: float  # reprojection RMS per coordinate, pixels
    cost: float  # sum of squared residuals, pixels^2
    converged: bool  # the descent stopped at a minimum, not at the iteration limit


def fit_metric_pose(intrinsics1, intrinsics2, rvec0, tvec0, points1, points2, X0=None,
                    *, max_iterations: int = 50) -> MetricFit:
    r"""Maximum-likelihood relative pose (6) and points (3N) with both intrinsics known.

    Minimises :math:`\sum_i \|x_i - \pi_1(X_i)\|^2 + \|x'_i - \pi_2(R, t; X_i)\|^2` over the
    pose of camera 2 and the points (:func:`~xslit.sfm.lm.block_levenberg_marquardt` with the
    Jacobians of :func:`metric_residuals`).

    Parameters
    ----------
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
    rvec0, tvec0 : (3,) array_like
        Starting pose of camera 2 (``X_cam2 = R X_cam1 + t``).
    points1, points2 : (N, 2) ndarray
        Pixels.
    X0 : (N, 3) ndarray, optional
        Starting points in camera 1's frame; triangulated when omitted.
    max_iterations : int

    Returns
    -------
    MetricFit

    Raises
    ------
    ValueError
        On malformed input (naming the argument), or when the starting pose makes no camera
        of ``intrinsics2`` (its slits meet).
    """
    _check_intrinsics("intrinsics1", intrinsics1)
    _check_intrinsics("intrinsics2", intrinsics2)
    rvec0, tvec0 = check_rvec("rvec0", rvec0), check_vector("tvec0", tvec0, 3)
    points1, points2 = check_point_pair("points1", points1, "points2", points2, min_count=1)
    n = len(points1)
    if X0 is not None:
        X0 = _check_points3("X0", X0, n, 3)
    max_iterations = check_positive_int("max_iterations", max_iterations, minimum=0)
    if X0 is None:
        cam1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
        cam2 = compose_camera(intrinsics2, rvec0, tvec0)
        Xh = triangulate_linear([cam1, cam2], [points1, points2])
        Xh = triangulate_nonlinear([cam1, cam2], [points1, points2], Xh)
        X0 = Xh[:, :3] / Xh[:, 3:]
    fun, jac = metric_residuals(intrinsics1, intrinsics2, points1, points2)
    g0 = np.concatenate([np.ravel(rvec0), np.ravel(tvec0)]).astype(float)
    sol = block_levenberg_marquardt(fun, g0, np.asarray(X0, dtype=float).reshape(n, 3), jac,
                                    max_iterations=max_iterations)
    return MetricFit(sol.g[:3], sol.g[3:], sol.p, float(np.sqrt(np.mean(sol.residuals**2))),
                     2.0 * sol.cost, sol.converged)


def refine_metric_pose(intrinsics1, intrinsics2, rvec0, tvec0, points1, points2, X0=None,
                       *, max_iterations: int = 50):
    """:func:`fit_metric_pose` as a tuple.

    Returns
    -------
    rvec, tvec : (3,) ndarray
        Pose of camera 2 in camera 1's frame.
    X : (N, 3) ndarray in camera 1's frame
    rms : float
        Reprojection RMS per coordinate.
    """
    fit = fit_metric_pose(intrinsics1, intrinsics2, rvec0, tvec0, points1, points2, X0,
                          max_iterations=max_iterations)
    return fit.rvec, fit.tvec, fit.points, fit.rms


def metric_pose_information(intrinsics1, intrinsics2, rvec, tvec, points1, points2, X, *,
                            influence: bool = False):
    r"""Information matrix of the pose at a maximum-likelihood solution, points eliminated.

    With the Jacobians :math:`J_g` (pose) and :math:`J_p` (points) of the reprojection
    residuals of :func:`refine_metric_pose`, the covariance of ``[rvec, tvec]`` is
    :math:`\sigma^2 S^{-1}` with :math:`S` the Schur complement
    (:func:`~xslit.sfm.lm.eliminated_information`, stable when a point is nearly unobserved) and
    :math:`\hat\sigma^2 = \sum r^2 / (4N - 3N - 6)` (four coordinates, three point parameters
    per correspondence, six pose parameters).

    With ``influence``, each correspondence's share of :math:`S` too, its *leverage*
    :math:`h_i = \operatorname{tr}(A_i S^{-1} A_i^\top)` (:func:`~xslit.sfm.lm.eliminated_rows`;
    near 1, the correspondence alone determines a direction of the pose, so that its
    residual says nothing of whether it is an inlier), and the middle term of the sandwich
    (jackknife-like, "HC3") covariance :math:`S^{-1} M S^{-1}` (MacKinnon and White, 1985),

    .. math:: M = \sum_i \frac{g_i g_i^\top}{(1 - h_i)^2}, \qquad g_i = A_i^\top N_i^\top r_i ,

    the correspondences' gradient terms inflated by their leverage: where one correspondence
    holds a direction, the spread of its deleted fit, which the model-based
    :math:`\hat\sigma^2 S^{-1}` does not see.

    Parameters
    ----------
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
    rvec, tvec : (3,) array_like
    points1, points2 : (N, 2) ndarray
    X : (N, 3) ndarray
        Points in camera 1's frame.
    influence : bool
        Return the leverages and ``M`` too.

    Returns
    -------
    S : (6, 6) ndarray
        Information per unit variance (pixels^-2 times sigma^2).
    sigma2 : float
        :math:`\hat\sigma^2` in pixels^2 (``nan`` when ``N <= 6``).
    h : (N,) ndarray
        With ``influence``: in [0, 1], summing to the rank of ``S`` (``S``'s pseudo-inverse
        where it is singular).
    M : (6, 6) ndarray
        With ``influence``: in pixels^-2 times pixels^2 (the covariance is
        ``S^+ M S^+`` without a ``sigma2``).
    """
    _check_intrinsics("intrinsics1", intrinsics1)
    _check_intrinsics("intrinsics2", intrinsics2)
    rvec, tvec = check_rvec("rvec", rvec), check_vector("tvec", tvec, 3)
    points1, points2 = check_point_pair("points1", points1, "points2", points2)
    X = _check_points3("X", X, len(points1), 3)
    fun, jac = metric_residuals(intrinsics1, intrinsics2, points1, points2)
    g = np.concatenate([np.ravel(rvec), np.ravel(tvec)]).astype(float)
    p = np.asarray(X, dtype=float)
    r = fun(g, p)
    Jg, Jp = jac(g, p)
    A, b = eliminated_rows(Jg, Jp, residuals=r)
    A2 = A.reshape(-1, 6)
    S = A2.T @ A2
    S = (S + S.T) / 2
    dof = len(p) - 6
    sigma2 = float(np.sum(r * r) / dof) if dof > 0 else float("nan")
    if not influence:
        return S, sigma2
    h = np.clip(np.einsum("nmi,ij,nmj->n", A, np.linalg.pinv(S, hermitian=True), A), 0.0, 1.0)
    gi = np.einsum("nmi,nm->ni", A, b) / np.maximum(1.0 - h, 1e-6)[:, None]
    return S, sigma2, h, gi.T @ gi


@dataclass
class ProjectivePairs:
    """Both projective configurations in pixel coordinates (result of
    :func:`projective_pairs_from_tensor`)."""

    configurations: list  # two tuples (A1, A2, B1, B2), in pixels
    normalized: list  # the same in normalised coordinates (canonical form of eq. (24))
    transforms: list  # four (2, 2): [x_n, 1] = T [x, 1] for x, y, x', y'
    F: np.ndarray  # refined tensor (unit norm), exactly that of both configurations
    rms: float  # reprojection RMS of the refinement (nan without refinement)
    refined: bool


def projective_pairs_from_tensor(F, points1, points2, refine: bool = True) -> ProjectivePairs:
    """The two configurations of ``F`` (Theorem 1), refined by maximum likelihood.

    The principal-minor recovery and the refinement run on pixels normalised per axis
    (normalising an axis is a 2x2 change of the rows of its matrix A, which keeps the model),
    where the entries of ``C`` are well scaled; the cameras are then mapped back to pixels, ``A = T^{-1} A_n``, where ``A_n`` has
    the canonical form of eq. (24) (first rows e1..e4, second rows those of C).

    Parameters
    ----------
    F : (2, 2, 2, 2) array_like
    points1, points2 : (N, 2) array_like
        Inlier correspondences, N >= 1.
    refine : bool

    Returns
    -------
    ProjectivePairs
    """
    from ..epipolar.linear import axis_normalization
    from ..epipolar.minors import recover_configurations
    from ..epipolar.tensor import contract_modes

    F = check_batch("F", F, (2, 2, 2, 2), batched=False)
    points1, points2 = check_point_pair("points1", points1, "points2", points2, min_count=1)
    if not isinstance(refine, (bool, np.bool_)):
        raise ValueError(f"refine must be True or False, got {refine!r}")

    cols = np.stack([points1[:, 0], points1[:, 1], points2[:, 0], points2[:, 1]])
    T = axis_normalization(cols)  # per axis, as the linear solver
    Ts = list(T)
    x, y, xp, yp = T[:, 0, 0, None] * cols + T[:, 0, 1, None]
    Tinv = [np.linalg.inv(T) for T in Ts]
    Fn = contract_modes(F, *Tinv)
    n1, n2 = np.stack([x, y], axis=1), np.stack([xp, yp], axis=1)
    _, Cs, _ = recover_configurations(Fn)
    rms, refined = np.nan, False
    if refine:
        # Both configurations start the refinement: they give the same tensor, but from a
        # tensor off the variety (a linear estimate) the descent from one of them can stop in
        # a local minimum that the other avoids. Even unconverged, LM only lowered the error.
        scales = np.array([1.0 / T[0, 0] for T in Ts])
        refs = [_refine_projective_pair(C, n1, n2, None, scales, 100) for C in Cs]
        refs = [r for r in refs if r.F is not None]
        if refs:
            best = min(refs, key=lambda r: r.rms)
            Cs = np.stack([best.C, normalize_matrix_gauge(best.C.T)])
            rms, refined = best.rms, True
    Cs = [balance_matrix(C) for C in Cs]
    configs = []
    for C in Cs:
        configs.append(tuple(Ti @ A for Ti, A in zip(Tinv, cameras_from_matrix(C), strict=True)))
    Fp = epipolar_tensor(*configs[0])
    return ProjectivePairs(configs, [cameras_from_matrix(C) for C in Cs], Ts,
                           Fp / np.linalg.norm(Fp), rms, refined)
