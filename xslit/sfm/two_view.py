r"""Two-view reconstruction: maximum-likelihood refinement and metric relative pose.

Projective (section 4, "Structure from motion"): the two configurations recovered from the
principal minors of :math:`F` are refined by minimising the reprojection error over the 13
degrees of freedom of the pair (the matrix :math:`C` of eq. vecrep in the gauge
:math:`c_{12} = c_{13} = c_{14} = 1`) and the 3D points (homogeneous, with a local
3-parameter update), with an analytic sparse Jacobian. The refined tensor is computed from the
refined cameras, so it lies exactly on the variety of epipolar tensors.

Metric (known intrinsics, Proposition 1): camera 1 is fixed to its canonical Euclidean form
:math:`A^m` (identity pose). The projective pair is mapped by
:math:`H(\gamma) = M_p^{-1}\,\mathrm{diag}(1, 1, \gamma, \gamma)\,M_m` with
:math:`M = [A_1; A_2]`, the one-parameter family of transformations that send the projective
camera 1 to :math:`A^m` (the stabiliser of a two-slit camera is one-dimensional). The second
camera :math:`B(\gamma) = B_p H(\gamma)` is affine in :math:`\gamma`; requiring
:math:`K_B^{-1} B(\gamma)` to have the Euclidean form of eq. two_slit_euclidean_s gives
quadratic equations in :math:`\gamma`, solved in the least-squares sense. With both cameras'
intrinsics the slit distance fixes the scale, so the translation is metric.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cameras import (
    PushbroomCamera,
    TwoSlitCamera,
    TwoSlitIntrinsics,
    compose_camera,
    decompose_camera,
)
from ..epipolar.minors import balance_matrix, cameras_from_matrix, normalize_matrix_gauge
from ..epipolar.tensor import epipolar_tensor, sampson_distance_op, sampson_operator
from ..geometry.projective import matrix_from_rvec, rvec_from_matrix
from .lm import block_levenberg_marquardt
from .triangulate import reprojection_residuals, triangulate_linear, triangulate_nonlinear

__all__ = [
    "MetricPose",
    "ProjectiveRefinement",
    "metric_pose",
    "metric_pose_candidates",
    "projective_pairs_from_tensor",
    "refine_metric_pose",
    "refine_pose_sampson",
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
        Initial configuration (eq. vecrep); any diagonal gauge.
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


def _intrinsics_mismatch(dec, intr) -> float:
    """Relative mismatch between decomposed and known intrinsics."""
    K = np.concatenate([(dec.K1 - intr.K1).ravel() / max(np.abs(intr.K1).max(), 1),
                        (dec.K2 - intr.K2).ravel() / max(np.abs(intr.K2).max(), 1)])
    e = float(np.linalg.norm(K)) + abs(np.sin(dec.theta - intr.theta))
    if isinstance(intr, TwoSlitIntrinsics):
        e += abs(dec.d - intr.d) / abs(intr.d)
    return e


@dataclass
class MetricPose:
    """A metric relative pose of camera 2 in camera 1's frame (X2 = R X1 + t)."""

    R: np.ndarray
    t: np.ndarray
    camera1: TwoSlitCamera
    camera2: TwoSlitCamera
    mismatch: float


def _bilinear_poly(P, Q, P2, Q2):
    """Coefficients (c0, c1, c2) of (P + g Q) . (P2 + g Q2)."""
    return np.array([np.dot(P, P2), np.dot(P, Q2) + np.dot(Q, P2), np.dot(Q, Q2)])


def metric_pose_candidates(configuration, intrinsics1, intrinsics2,
                           transforms=None, sweep: int = 0) -> list[MetricPose]:
    """Metric candidates for one projective configuration ``(A1, A2, B1, B2)``.

    Parameters
    ----------
    configuration : tuple of four (2, 4) arrays
        In the image coordinates given by ``transforms``.
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
        In pixels.
    transforms : sequence of four (2, 2) arrays, optional
        ``[x_n, 1] = T [x, 1]`` for the axes x, y, x', y' (identity when omitted). Working in
        normalised coordinates keeps ``[A1; A2]`` well conditioned.
    sweep : int
        Also try ``sweep`` log-spaced values of gamma of each sign around the algebraic
        solutions (under noise the algebraic optimum can be far from the right gamma; the
        caller ranks the candidates on the data).

    Returns every real critical point of the least-squares problem in :math:`\\gamma` whose
    second camera decomposes, sorted by intrinsics mismatch (best first).
    """
    T = [np.eye(2)] * 4 if transforms is None else [np.asarray(t, float) for t in transforms]
    A1p, A2p, B1p, B2p = (np.asarray(a, dtype=float) for a in configuration)
    cam1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    Mp = np.vstack([A1p, A2p])
    Mm = np.vstack([T[0] @ cam1.A1, T[1] @ cam1.A2])
    if np.linalg.cond(Mp) > 1e13:  # camera 1's slits (nearly) meet
        return []
    Mpinv = np.linalg.inv(Mp)
    D0 = np.diag([1.0, 1, 0, 0])
    D1 = np.diag([0.0, 0, 1, 1])
    K1i = np.linalg.inv(T[2] @ intrinsics2.K1)
    K2i = np.linalg.inv(T[3] @ intrinsics2.K2)
    U1 = K1i @ B1p @ Mpinv @ D0 @ Mm
    V1 = K1i @ B1p @ Mpinv @ D1 @ Mm
    U2 = K2i @ B2p @ Mpinv @ D0 @ Mm
    V2 = K2i @ B2p @ Mpinv @ D1 @ Mm
    a1, b1 = (U1[0, :3], V1[0, :3]), (U1[1, :3], V1[1, :3])
    a2, b2 = (U2[0, :3], V2[0, :3]), (U2[1, :3], V2[1, :3])

    def dot(x, y):
        return _bilinear_poly(x[0], x[1], y[0], y[1])

    polys = []
    th = intrinsics2.theta
    if isinstance(intrinsics2, TwoSlitIntrinsics):
        polys += [dot(a1, b1), dot(a1, a1) - dot(b1, b1), dot(a2, b2), dot(a2, a2) - dot(b2, b2),
                  dot(a1, a2) - np.cos(th) * dot(b1, b2)]
        for i, j in ((0, 1), (1, 2), (2, 0)):  # b1 x b2 = 0
            polys.append(_bilinear_poly(b1[0][i], b1[1][i], b2[0][j], b2[1][j])
                         - _bilinear_poly(b1[0][j], b1[1][j], b2[0][i], b2[1][i]))
    else:
        for i in range(3):  # the second row of K1^-1 B1 is (0, 0, 0, s): first slit at infinity
            polys.append(np.array([b1[0][i], b1[1][i], 0.0]))
        polys += [dot(a2, b2), dot(a2, a2) - dot(b2, b2), dot(a1, b2)]
    # Balance the equations; one that vanishes identically must not be blown up to O(1).
    biggest = max(np.linalg.norm(p) for p in polys)
    polys = [p / max(np.linalg.norm(p), 1e-6 * biggest, 1e-300) for p in polys]
    total = np.zeros(5)
    for p in polys:
        total += np.convolve(p, p)
    crit = np.roots(np.polyder(total[::-1]))
    gammas = crit[np.abs(crit.imag) < 1e-6 * (1 + np.abs(crit.real))].real
    def candidates_at(g):
        """Both orientations of the second camera for one gamma."""
        H = Mpinv @ np.diag([1.0, 1.0, g, g]) @ Mm
        B1 = np.linalg.solve(T[2], B1p @ H)
        B2 = np.linalg.solve(T[3], B2p @ H)
        # (B1, B2) and (-B1, -B2) are one projective camera with opposite orientations; the
        # known intrinsics (the signed slit distance d, or for a pushbroom the sign of B2)
        # tell them apart, so both are decomposed.
        found = []
        for sign in (1.0, -1.0):
            try:
                if isinstance(intrinsics2, TwoSlitIntrinsics):
                    cam2 = TwoSlitCamera(sign * B1, sign * B2)
                else:  # snap the first slit to infinity (exact only without noise)
                    B1s = B1 / B1[1, 3]
                    B1s[1, :3] = 0.0
                    cam2 = PushbroomCamera(B1s, sign * B2)
                dec = decompose_camera(cam2, intrinsics2)
            except (ValueError, np.linalg.LinAlgError):
                continue
            found.append((_intrinsics_mismatch(dec, intrinsics2), dec))
        return found

    def mismatch_at(g):
        found = candidates_at(g)
        return min((m for m, _ in found), default=1e12)

    from scipy.optimize import minimize_scalar

    out = []
    if sweep:
        scale = float(np.median(np.abs(gammas))) if len(gammas) else 1.0
        grid = scale * np.logspace(-4, 4, sweep)
        for g in np.concatenate([grid, -grid]):
            for mis, dec in candidates_at(g):
                cam2 = compose_camera(intrinsics2, dec.rvec, dec.tvec)
                out.append(MetricPose(matrix_from_rvec(dec.rvec), dec.tvec, cam1, cam2, mis))
    for g in gammas:
        if not np.isfinite(g) or abs(g) < 1e-12:
            continue
        # Polish gamma on the mismatch of the decomposed intrinsics itself (the algebraic
        # equations weight the constraints arbitrarily under noise).
        lo, hi = sorted((0.5 * g, 2.0 * g))
        sol = minimize_scalar(mismatch_at, bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-10 * abs(g), "maxiter": 80})
        g_best = sol.x if sol.fun < mismatch_at(g) else g
        for mis, dec in candidates_at(g_best):
            cam2 = compose_camera(intrinsics2, dec.rvec, dec.tvec)
            out.append(MetricPose(matrix_from_rvec(dec.rvec), dec.tvec, cam1, cam2, mis))
    out.sort(key=lambda m: m.mismatch)
    return out


def refine_metric_pose(intrinsics1, intrinsics2, rvec0, tvec0, points1, points2, X0=None,
                       *, max_iterations: int = 50):
    """Maximum-likelihood relative pose (6) and points (3N) with both intrinsics known.

    Returns
    -------
    rvec, tvec : (3,) ndarray
        Pose of camera 2 in camera 1's frame.
    X : (N, 3) ndarray in camera 1's frame
    rms : float
        Reprojection RMS per coordinate.
    """
    cam1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    n = len(points1)
    if X0 is None:
        cam2 = compose_camera(intrinsics2, rvec0, tvec0)
        Xh = triangulate_linear([cam1, cam2], [points1, points2])
        Xh = triangulate_nonlinear([cam1, cam2], [points1, points2], Xh)
        X0 = Xh[:, :3] / Xh[:, 3:]
    obs = [points1, points2]
    ones = np.ones((n, 1))

    def fun(g, p):
        try:
            cam2 = compose_camera(intrinsics2, g[:3], g[3:])
        except ValueError:  # a step to an invalid pose: infinite cost, the step is rejected
            return np.full((n, 4), np.inf)
        return reprojection_residuals([cam1, cam2], obs, np.concatenate([p, ones], axis=1))

    g0 = np.concatenate([np.ravel(rvec0), np.ravel(tvec0)])
    sol = block_levenberg_marquardt(fun, g0, np.asarray(X0, dtype=float),
                                    max_iterations=max_iterations)
    return sol.g[:3], sol.g[3:], sol.p, float(np.sqrt(np.mean(sol.residuals**2)))


@dataclass
class ProjectivePairs:
    """Both projective configurations in pixel coordinates (result of
    :func:`projective_pairs_from_tensor`)."""

    configurations: list  # two tuples (A1, A2, B1, B2), in pixels
    normalized: list  # the same in normalised coordinates (canonical form of eq. vecrep)
    transforms: list  # four (2, 2): [x_n, 1] = T [x, 1] for x, y, x', y'
    F: np.ndarray  # refined tensor (unit norm), exactly that of both configurations
    rms: float  # reprojection RMS of the refinement (nan without refinement)
    refined: bool


def projective_pairs_from_tensor(F, points1, points2, refine: bool = True) -> ProjectivePairs:
    """The two configurations of ``F`` (Theorem 1), refined by maximum likelihood.

    The principal-minor recovery and the refinement run on pixels normalised per axis
    (MATH-NOTES: a 2x2 change of each A keeps the model), where the entries of ``C`` are well
    scaled; the cameras are then mapped back to pixels, ``A = T^{-1} A_n``, where ``A_n`` has
    the canonical form of eq. vecrep (first rows e1..e4, second rows those of C).
    """
    from ..epipolar.linear import axis_normalization
    from ..epipolar.minors import recover_configurations
    from ..epipolar.tensor import contract_modes

    Ts = [axis_normalization(v) for v in (points1[:, 0], points1[:, 1], points2[:, 0],
                                          points2[:, 1])]
    Tinv = [np.linalg.inv(T) for T in Ts]
    Fn = contract_modes(F, *Tinv)
    n1 = np.stack([Ts[0][0, 0] * points1[:, 0] + Ts[0][0, 1],
                   Ts[1][0, 0] * points1[:, 1] + Ts[1][0, 1]], axis=1)
    n2 = np.stack([Ts[2][0, 0] * points2[:, 0] + Ts[2][0, 1],
                   Ts[3][0, 0] * points2[:, 1] + Ts[3][0, 1]], axis=1)
    _, Cs, _ = recover_configurations(Fn)
    rms, refined = np.nan, False
    if refine:
        for C in Cs:
            ref = refine_projective_pair(C, n1, n2,
                                         axis_scales=[1.0 / T[0, 0] for T in Ts])
            if ref.F is not None:  # even unconverged, LM only ever lowered the error
                Cs = np.stack([ref.C, normalize_matrix_gauge(ref.C.T)])
                rms, refined = ref.rms, True
                break
    Cs = [balance_matrix(C) for C in Cs]
    configs = []
    for C in Cs:
        configs.append(tuple(Ti @ A for Ti, A in zip(Tinv, cameras_from_matrix(C), strict=True)))
    Fp = epipolar_tensor(*configs[0])
    return ProjectivePairs(configs, [cameras_from_matrix(C) for C in Cs], Ts,
                           Fp / np.linalg.norm(Fp), rms, refined)


def refine_pose_sampson(intrinsics1, intrinsics2, rvec0, tvec0, points1, points2):
    """Relative pose (6 parameters) minimising the Sampson distances of the correspondences to
    the epipolar tensor of ``(camera1, compose(intrinsics2, rvec, tvec))``.

    Needs no 3D points, so its basin of convergence is wider than that of the full maximum
    likelihood; it serves as the step between the algebraic upgrade and
    :func:`refine_metric_pose`.

    Returns
    -------
    rvec, tvec : (3,) ndarray
    rms : float
        RMS Sampson distance, pixels.
    """
    from scipy.optimize import least_squares

    cam1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    G = sampson_operator(points1, points2)
    n = len(points1)

    def fun(x):
        try:
            cam2 = compose_camera(intrinsics2, x[:3], x[3:])
        except ValueError:
            return np.full(n, 1e6)
        F = epipolar_tensor(cam1.A1, cam1.A2, cam2.A1, cam2.A2)
        r = sampson_distance_op(G, F[None], signed=True)[0]
        return np.nan_to_num(r, nan=1e6, posinf=1e6, neginf=-1e6)

    x0 = np.concatenate([np.ravel(rvec0), np.ravel(tvec0)])
    sol = least_squares(fun, x0, method="lm", xtol=1e-8, ftol=1e-6, max_nfev=150)
    return sol.x[:3], sol.x[3:], float(np.sqrt(np.mean(sol.fun**2)))


def metric_pose(pairs: ProjectivePairs, intrinsics1, intrinsics2, points1, points2,
                refine: bool = True):
    """Metric relative pose of camera 2 from the two projective configurations (known K).

    Every metric candidate of both configurations (:func:`metric_pose_candidates`, with a sweep
    of gamma) is ranked on the data by the RMS Sampson distance of its metric pair, and on the
    algebraic mismatch; the best few are fitted by :func:`refine_pose_sampson` (wide basin);
    cheirality decides first (as cv2.recoverPose), then the fit; the winner is refined by
    :func:`refine_metric_pose`.

    Returns
    -------
    rvec, tvec : (3,) ndarray
        ``X2 = R X1 + t`` with camera 1's canonical frame.

    Raises
    ------
    ValueError
        When no configuration upgrades to the given intrinsics.
    """
    cands = []
    for conf in pairs.normalized:
        cands += metric_pose_candidates(conf, intrinsics1, intrinsics2, pairs.transforms,
                                        sweep=40)
    if not cands:
        raise ValueError("F: no metric pose is consistent with intrinsics1 and intrinsics2 "
                         "(the projective configurations do not upgrade)")
    # The algebraic mismatch alone is unreliable under noise: also rank on the data.
    Fs = epipolar_tensor(np.stack([c.camera1.A1 for c in cands]),
                         np.stack([c.camera1.A2 for c in cands]),
                         np.stack([c.camera2.A1 for c in cands]),
                         np.stack([c.camera2.A2 for c in cands]))  # one batched call
    rms0 = np.sqrt(np.mean(sampson_distance_op(sampson_operator(points1, points2), Fs) ** 2,
                           axis=1))
    by_data = list(np.argsort(np.nan_to_num(rms0, nan=np.inf))[:4])
    by_mismatch = sorted(range(len(cands)), key=lambda k: cands[k].mismatch)[:4]
    cam1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    results = []
    for k in dict.fromkeys(by_mismatch + by_data):
        rv, tv, score = rvec_from_matrix(cands[k].R), cands[k].t, cands[k].mismatch
        if refine:
            rv, tv, score = refine_pose_sampson(intrinsics1, intrinsics2, rv, tv, points1,
                                                points2)
        try:
            cam2 = compose_camera(intrinsics2, rv, tv)
        except ValueError:
            continue
        X = triangulate_linear([cam1, cam2], [points1, points2])
        front = int((cam1.in_front(X) & cam2.in_front(X)).sum())
        results.append((front, score if np.isfinite(score) else np.inf, rv, tv))
    if not results:
        raise ValueError("F: no metric pose is consistent with intrinsics1 and intrinsics2")
    most = max(r[0] for r in results)
    _, _, rvec, tvec = min((r for r in results if r[0] >= 0.9 * most), key=lambda r: r[1])
    if refine:
        rvec, tvec, _, _ = refine_metric_pose(intrinsics1, intrinsics2, rvec, tvec, points1,
                                              points2)
    return rvec, tvec
