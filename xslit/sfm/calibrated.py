r"""Calibrated two-view geometry: the epipolar tensor as a linear function of the pose.

With both intrinsics known, camera 1 is :math:`A^m` (identity pose) and camera 2 is
:math:`B^m T` with the rigid motion :math:`T = \begin{bmatrix} R & t \\ 0 & 1\end{bmatrix}`
(``X_cam2 = R X_cam1 + t``). Each entry of the epipolar tensor (eq. entries_epipolar_tensor)
is the determinant of two rows of camera 1 and two rows :math:`b T, b' T` of camera 2. By the
Laplace expansion along the first two rows and the Cauchy--Binet formula,

.. math::

    \det[a; a'; bT; b'T] = (a \wedge a')\, H\, C_2(T)^\top (b \wedge b')^\top,

where :math:`a \wedge a'` are Plücker coordinates, :math:`H` pairs complementary index pairs
and :math:`C_2(T)` is the second compound matrix (all :math:`2 \times 2` minors) of :math:`T`.
For a rotation :math:`\operatorname{cof} R = R`, so every minor of :math:`T` is an entry of
:math:`R` or of :math:`E = [t]_\times R` (the minors mixing ``t`` and ``R``). Hence

.. math:: \operatorname{vec} F = \Phi \begin{bmatrix} \operatorname{vec} R \\
          \operatorname{vec} E \end{bmatrix}, \qquad \Phi \in \mathbb{R}^{16 \times 18},

the generalised essential matrix of Pless (2003) seen through the line complexes of the two
pairs of slits. :math:`\Phi` depends only on the intrinsics; its rank is 14 for two two-slit
cameras (13 with one pushbroom camera, 11 with two), so a calibrated tensor lies in a known
subspace and, for a fixed rotation, is affine in :math:`t` (:math:`F = a(R) + B(R)\,t`). This gives the calibrated solver of
:func:`relative_pose`:

1. for a grid of rotations, the translation minimising the algebraic error of eq. linF over the
   correspondences is a 3x3 linear solve; the best distinct rotations are polished by
   Levenberg--Marquardt on the rotation alone (the translation stays eliminated);
2. the candidates are refined by Levenberg--Marquardt on the 6 pose parameters minimising the
   Sampson distances (:func:`xslit.epipolar.sampson_distance`), in pixels;
3. a local optimisation in the exact 6-parameter model (LO-RANSAC's inner loop, Chum et al.
   2003): poses fitted to random subsets of the inliers are scored by MSAC on all
   correspondences, and the inlier set is re-selected until it is stable. A linear tensor has
   16 - 13 = 3 more degrees of freedom than the variety and can absorb a few outliers along
   weakly observed directions (the metric scale of nearly central slits); the exact model
   rejects them.

The metric scale is observed because the slit distances are known; it is weak when the slits
are close compared with the scene depth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cameras import compose_camera
from ..epipolar.linear import _normalized
from ..epipolar.tensor import (
    INDEX,
    design_matrix,
    kron_modes,
    sampson_operator,
)

__all__ = [
    "CalibratedPose",
    "pose_tensors",
    "refine_pose_sampson",
    "relative_pose",
    "rotation_grid",
    "search_rotations",
    "tensor_map",
]

#: Index pairs of Plücker coordinates, in the order used by the compound matrix.
_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
#: Laplace pairing: pair ``a`` goes with its complement ``5 - a``, with these signs.
_LAPLACE_SIGN = np.array([1.0, -1.0, 1.0, 1.0, -1.0, 1.0])
_COMPLEMENT = np.array([5, 4, 3, 2, 1, 0])

_LEVI_CIVITA = np.zeros((3, 3, 3))
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    _LEVI_CIVITA[_i, _j, _k], _LEVI_CIVITA[_i, _k, _j] = 1.0, -1.0


def _wedge(x, y):
    """Plücker coordinates ``x ∧ y`` of rows ``(..., 4)``, ``(..., 6)`` in ``_PAIRS`` order."""
    return np.stack([x[..., p] * y[..., q] - x[..., q] * y[..., p] for p, q in _PAIRS], -1)


def _compound_basis() -> np.ndarray:
    r"""``(18, 6, 6)``: :math:`C_2(T) = \sum_m x_m \mathrm{basis}_m` with
    ``x = [vec R, vec E]`` for a rigid ``T`` (entries of the minors, see the module text)."""
    basis = np.zeros((18, 6, 6))
    even = {(0, 1, 2), (1, 2, 0), (2, 0, 1)}
    for a, (p, q) in enumerate(_PAIRS):
        for b, (r, s) in enumerate(_PAIRS):
            if q < 3 and s < 3:  # a minor of R: (-1)^(k+m) cof_km = (-1)^(k+m) R_km
                k, m = 3 - p - q, 3 - r - s
                basis[3 * k + m, a, b] = (-1.0) ** (k + m)
            elif q < 3:  # rows p, q of R and t, columns r and 3: -eps(k, p, q) E_kr
                k = 3 - p - q
                basis[9 + 3 * k + r, a, b] = -1.0 if (k, p, q) in even else 1.0
            elif s == 3:  # rows p and 3, columns r and 3: R_pr
                basis[3 * p + r, a, b] = 1.0
    return basis


_BASIS = _compound_basis()


def _translation_map(R) -> np.ndarray:
    r"""``L(R)`` ``(..., 9, 3)`` with :math:`\operatorname{vec}([t]_\times R) = L(R)\, t`."""
    return -np.einsum("ikm,...kj->...ijm", _LEVI_CIVITA, R).reshape(*np.shape(R)[:-2], 9, 3)


def tensor_map(intrinsics1, intrinsics2, transforms=None) -> np.ndarray:
    r"""The matrix :math:`\Phi` (16, 18) with ``F.ravel() = Phi @ [vec R, vec([t]x R)]``.

    Parameters
    ----------
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
    transforms : sequence of four (2, 2) arrays, optional
        Per-axis image normalisations ``[x_n, 1] = T [x, 1]`` for x, y, x', y'; the tensor is
        then that of the normalised pixels.

    Returns
    -------
    Phi : (16, 18) ndarray

    Examples
    --------
    >>> from xslit.cameras import TwoSlitIntrinsics, compose_camera
    >>> from xslit.epipolar import epipolar_tensor
    >>> i1 = TwoSlitIntrinsics.from_parameters(800, 300, 500, 500, 1.2, 0.6)
    >>> i2 = TwoSlitIntrinsics.from_parameters(900, 350, 480, 510, 1.8, -0.4)
    >>> R, t = np.eye(3), np.array([1.0, 0.1, 0.2])
    >>> E = np.cross(t, R.T).T  # [t]x R
    >>> c1 = compose_camera(i1, np.zeros(3), np.zeros(3)); c2 = compose_camera(i2, np.zeros(3), t)
    >>> F = epipolar_tensor(c1.A1, c1.A2, c2.A1, c2.A2)
    >>> bool(np.allclose(tensor_map(i1, i2) @ np.r_[R.ravel(), E.ravel()], F.ravel()))
    True
    """
    T = [np.eye(2)] * 4 if transforms is None else [np.asarray(m, float) for m in transforms]
    c1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    c2 = compose_camera(intrinsics2, np.zeros(3), np.zeros(3))
    rows = [Tk @ A for Tk, A in zip(T, (c1.A1, c1.A2, c2.A1, c2.A2), strict=True)]
    # eq. entries_epipolar_tensor: F_ijkl = (-1)^(i+j+k+l) det[A1_(1-i); A2_(1-j); B1_(1-k); B2_(1-l)]
    x, y, u, v = (rows[p][1 - INDEX[:, p]] for p in range(4))
    w = (_wedge(x, y) * _LAPLACE_SIGN)[:, _COMPLEMENT]
    sign = (-1.0) ** INDEX.sum(axis=1)
    return np.einsum("ic,mcb,ib->im", _wedge(u, v), _BASIS, w) * sign[:, None]


def pose_tensors(Phi, R, t) -> np.ndarray:
    """Tensors ``(..., 16)`` of poses ``R (..., 3, 3)``, ``t (..., 3)`` through ``Phi``."""
    R = np.asarray(R, dtype=float)
    t = np.asarray(t, dtype=float)
    E = (_translation_map(R) @ t[..., None])[..., 0]
    return np.concatenate([R.reshape(*R.shape[:-2], 9), E], axis=-1) @ Phi.T


def rotation_grid(n: int) -> np.ndarray:
    """``n`` rotations spread evenly over SO(3) (super-Fibonacci spirals, Alexa 2022).

    Deterministic: the same ``n`` gives the same grid. Returns ``(n, 3, 3)``.
    """
    s = np.arange(n) + 0.5
    r, rr = np.sqrt(s / n), np.sqrt(1.0 - s / n)
    a = 2.0 * np.pi * s / np.sqrt(2.0)
    b = 2.0 * np.pi * s / 1.533751168755204288118041
    x, y, z, w = r * np.sin(a), r * np.cos(a), rr * np.sin(b), rr * np.cos(b)
    return np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                     2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                     2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
                    axis=1).reshape(n, 3, 3)


def _rodrigues(w) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of rotation vectors ``(..., 3)``."""
    w = np.asarray(w, dtype=float)
    th = np.linalg.norm(w, axis=-1)[..., None, None]
    K = np.zeros((*w.shape[:-1], 3, 3))
    K[..., 0, 1], K[..., 0, 2], K[..., 1, 2] = -w[..., 2], w[..., 1], -w[..., 0]
    K[..., 1, 0], K[..., 2, 0], K[..., 2, 1] = w[..., 2], -w[..., 1], w[..., 0]
    small = th < 1e-8
    th = np.where(small, 1.0, th)
    s = np.where(small, 1.0, np.sin(th) / th)
    c = np.where(small, 0.5, (1.0 - np.cos(th)) / th**2)
    return np.eye(3) + s * K + c * (K @ K)


def _eliminate_translation(a, B, M):
    """For each rotation, the ``t`` minimising the Rayleigh quotient ``f^T M f / f^T f`` of
    ``f = a + B t``: the smallest generalised eigenvector ``y = (1, t)`` of
    ``(A^T M A, A^T A)`` with ``A = [a, B]`` (a 4x4 problem). Returns ``t (K, 3)``, ``f (K, 16)``
    and the quotient ``(K,)``."""
    A = np.concatenate([a[..., None], B], axis=-1)  # (K, 16, 4)
    P = np.swapaxes(A, 1, 2) @ (M @ A)
    Q = np.swapaxes(A, 1, 2) @ A
    Q += 1e-12 * np.trace(Q, axis1=1, axis2=2)[:, None, None] * np.eye(4)
    Linv = np.linalg.inv(np.linalg.cholesky(Q))
    C = Linv @ P @ np.swapaxes(Linv, 1, 2)
    w, V = np.linalg.eigh((C + np.swapaxes(C, 1, 2)) / 2)
    y = (np.swapaxes(Linv, 1, 2) @ V[:, :, :1])[..., 0]  # (K, 4)
    y0 = np.where(np.abs(y[:, 0]) > 1e-12 * np.abs(y).max(axis=1), y[:, 0], 1e-12)
    t = y[:, 1:] / y0[:, None]
    return t, (A @ y[..., None])[..., 0], np.maximum(w[:, 0], 0.0)


def _algebraic(Phi, M, U, R):
    """Whitened algebraic residuals ``(K, 16)`` of rotations ``R`` with ``t`` eliminated.

    ``t`` minimises the Rayleigh quotient of eq. linF (:func:`_eliminate_translation`); the
    residual is ``U f / |f|`` (``M = U^T U``), whose squared norm is that quotient. ``M`` and
    ``U`` are ``(16, 16)`` or one per rotation ``(K, 16, 16)``.
    """
    a = R.reshape(-1, 9) @ Phi[:, :9].T  # (K, 16)
    B = Phi[:, 9:] @ _translation_map(R)  # (K, 16, 3)
    t, f, _ = _eliminate_translation(a, B, M)
    Uf = (f @ U.T) if U.ndim == 2 else (U @ f[..., None])[..., 0]
    return Uf / np.linalg.norm(f, axis=1, keepdims=True), t


def _whitening(points1, points2):
    """``M = D^T D / tr`` and ``U`` with ``M = U^T U`` for the design matrix ``D``."""
    D = design_matrix(points1, points2)
    M = D.T @ D
    M = M / np.trace(M)
    return M, np.linalg.cholesky(M + 1e-12 * np.eye(16)).T


def _distinct(R, order, max_count, separation_deg):
    """Greedy non-maximum suppression: indices in ``order`` at least ``separation_deg`` apart."""
    cos_sep = np.cos(np.radians(separation_deg))
    keep = []
    for k in order:
        if all((np.trace(R[k] @ R[j].T) - 1) / 2 < cos_sep for j in keep):
            keep.append(k)
            if len(keep) == max_count:
                break
    return keep


def _damped_steps(J, r, lam):
    """Levenberg--Marquardt steps ``(K, p)`` of a batch: ``J`` ``(K, p, m)``, ``r`` ``(K, m)``,
    damping ``lam`` ``(K,)`` on the diagonal of the normal equations."""
    JTJ = J @ np.swapaxes(J, 1, 2)
    g = (J @ r[..., None])[..., 0]
    A = JTJ + lam[:, None, None] * (np.einsum("kaa->ka", JTJ)[:, :, None] + 1e-12) * np.eye(
        J.shape[1])
    return -np.linalg.solve(A, g[..., None])[..., 0]


def _accept(cost, new_cost, lam, rel_tol, old, new):
    """Keep the starts whose cost decreased; returns ``(state, cost, lam, done)``.

    ``old`` and ``new`` are tuples of arrays with the batch as first axis; a start is done when
    its decrease is below ``rel_tol`` or its damping has grown past any useful step.
    """
    ok = new_cost < cost
    done = ~ok & (lam > 1e6) | ok & (cost - new_cost <= rel_tol * cost)
    state = tuple(np.where(ok.reshape(-1, *[1] * (o.ndim - 1)), n, o)
                  for o, n in zip(old, new, strict=True))
    return state, np.where(ok, new_cost, cost), np.where(ok, lam / 3, lam * 10), done


def _polish_rotations(Phi, M, U, R, iterations):
    """Batched Levenberg--Marquardt on the rotation alone (``t`` eliminated)."""
    r, t = _algebraic(Phi, M, U, R)
    cost = np.einsum("ij,ij->i", r, r)
    lam = np.full(len(R), 1e-3)
    h = 1e-6
    eye = np.eye(3)
    for _ in range(iterations):
        Rp = np.concatenate([_rodrigues(eye[k] * h) @ R for k in range(3)])
        Mp = M if M.ndim == 2 else np.concatenate([M] * 3)
        Up = U if U.ndim == 2 else np.concatenate([U] * 3)
        J = ((_algebraic(Phi, Mp, Up, Rp)[0].reshape(3, *r.shape) - r) / h).transpose(1, 0, 2)
        Rn = _rodrigues(_damped_steps(J, r, lam)) @ R
        rn, tn = _algebraic(Phi, M, U, Rn)
        (R, r, t), cost, lam, done = _accept(cost, np.einsum("ij,ij->i", rn, rn), lam, 1e-12,
                                             (R, r, t), (Rn, rn, tn))
        if done.all():
            break
    return R, t, cost


def search_rotations(Phi, points1, points2, *, subsets=None, rays=None,
                     n_rotations: int = 1000, n_starts: int = 4, separation_deg: float = 25.0,
                     iterations: int = 10):
    """Global search of the rotation on the algebraic error of eq. linF, ``t`` eliminated.

    Every rotation of a :func:`rotation_grid` is scored with its best translation (a 4x4
    generalised eigenproblem); the best ``n_starts`` rotations at least ``separation_deg``
    apart are polished by a few Levenberg--Marquardt steps (the Sampson fits finish them). With ``subsets`` the search is repeated on each subset of the
    correspondences (a robust search: a subset free of outliers finds the right basin).

    Parameters
    ----------
    Phi : (16, 18) ndarray
        :func:`tensor_map` in the coordinates of the points.
    points1, points2 : (N, 2) ndarray
        Correspondences (normalised coordinates, matching ``Phi``).
    subsets : list of index arrays, optional
        Default: all points, once.
    rays : pair of (N, 6) ndarray, optional
        Viewing rays of the correspondences in each camera's frame (``camera.rays`` of the
        canonical cameras). When given, grid rotations whose pose puts most of a sample of the
        correspondences behind a camera (cheirality, as in cv2.recoverPose) are not used as
        starts: for nearly central slits the "twisted pair" (rotation by pi about the
        baseline) is almost as good algebraically.

    Returns
    -------
    R : (K, 3, 3), t : (K, 3), cost : (K,)
        Local minima (distinct within each subset).
    """
    subsets = [np.arange(len(points1))] if subsets is None else subsets
    grid = rotation_grid(n_rotations)
    a = grid.reshape(-1, 9) @ Phi[:, :9].T
    B = Phi[:, 9:] @ _translation_map(grid)  # (n, 16, 3)
    starts, Ms, Us = [], [], []
    for idx in subsets:
        M, U = _whitening(points1[idx], points2[idx])
        # On the grid, t by linear least squares (3x3; the polish below minimises the
        # quotient). The grid is ranked on the median Sampson distance of a sample: the
        # algebraic error alone favours near-degenerate poses (t near 0) over the true one.
        MB = M @ B
        Q = np.swapaxes(B, 1, 2) @ MB
        Q += 1e-12 * np.trace(Q, axis1=1, axis2=2)[:, None, None] * np.eye(3)
        t = -np.linalg.solve(Q, np.swapaxes(MB, 1, 2) @ a[..., None])[..., 0]
        f = a + (B @ t[..., None])[..., 0]
        sample = idx[:: max(1, len(idx) // 64)]
        Gs = _operator(sampson_operator(points1[sample], points2[sample]))
        cost = np.median(np.abs(_sampson_batch(Gs, f[:, None])[:, 0]), axis=1)
        if rays is not None:
            terms = _ray_terms(rays[0][sample], rays[1][sample])
            front = _in_front(terms, grid, t).mean(axis=1)
            if np.any(front >= 0.5):
                cost = np.where(front >= 0.5, cost, np.inf)
        for j in _distinct(grid, np.argsort(cost), n_starts, separation_deg):
            starts.append(j)
            Ms.append(M)
            Us.append(U)
    return _polish_rotations(Phi, np.stack(Ms), np.stack(Us), grid[starts], iterations)


def _operator(G):
    """``sampson_operator`` ``(5, n, 16)`` or ``(K, 5, n, 16)`` as ``(16, 5n)`` or
    ``(K, 16, 5n)`` for BLAS products (a view when ``G`` is contiguous)."""
    G = np.ascontiguousarray(G)
    if G.ndim == 3:
        return G.reshape(-1, 16).T
    return np.swapaxes(G.reshape(len(G), -1, 16), 1, 2)


def _sampson_batch(Gt, f):
    """Signed Sampson distances ``(K, P, n)`` of tensors ``f`` ``(K, P, 16)``.

    ``Gt`` is an :func:`_operator`, shared by all ``(16, 5n)`` or one per batch
    ``(K, 16, 5n)``; the products are BLAS matrix products.
    """
    K, P, _ = f.shape
    if Gt.ndim == 2:
        Rk = (f.reshape(K * P, 16) @ Gt).reshape(K, P, 5, -1)
    else:
        Rk = (f @ Gt).reshape(K, P, 5, -1)
    g = Rk[:, :, 1:]
    gn = np.sqrt(np.einsum("kpcn,kpcn->kpn", g, g))
    with np.errstate(divide="ignore", invalid="ignore"):
        d = Rk[:, :, 0] / gn
    d[np.isnan(d)] = 0.0
    return np.clip(d, -1e6, 1e6)


def _pose_residuals(Phi, Gt, R, t):
    """Signed Sampson distances ``(K, n)`` of poses ``(K, 3, 3)``, ``(K, 3)``."""
    return _sampson_batch(Gt, pose_tensors(Phi, R, t)[:, None])[:, 0]


def refine_pose_sampson(Phi, G, R, t, weights=None, *, iterations: int = 30):
    """Levenberg--Marquardt on 6 pose parameters minimising signed Sampson distances, batched.

    Parameters
    ----------
    Phi : (16, 18) ndarray
        :func:`tensor_map` in pixels.
    G : (5, N, 16) or (K, 5, n, 16) ndarray
        :func:`xslit.epipolar.tensor.sampson_operator` of the correspondences, shared or one
        per start.
    R : (K, 3, 3), t : (K, 3)
        Starting poses.
    weights : (K, n) ndarray, optional
        Per-start weights of the residuals (e.g. 0/1 inlier masks).

    Returns
    -------
    R : (K, 3, 3), t : (K, 3), rms : (K,)
        Weighted RMS Sampson distance in pixels.
    """
    Gt = _operator(G)
    R = np.array(R, dtype=float)
    t = np.array(t, dtype=float)
    K = len(R)
    w = 1.0 if weights is None else np.asarray(weights, dtype=float)
    r = _pose_residuals(Phi, Gt, R, t) * w
    cost = np.einsum("kn,kn->k", r, r)
    lam = np.full(K, 1e-3)
    hw = 1e-7
    eye = np.eye(3)
    for _ in range(iterations):
        ht = 1e-7 * np.maximum(1.0, np.linalg.norm(t, axis=1))
        Rp = np.stack([_rodrigues(eye[k] * hw) @ R for k in range(3)] + [R] * 3, axis=1)
        tp = np.stack([t] * 3 + [t + eye[k] * ht[:, None] for k in range(3)], axis=1)
        rp = _sampson_batch(Gt, pose_tensors(Phi, Rp, tp))  # (K, 6, n)
        steps = np.concatenate([np.full((K, 3), hw), np.repeat(ht[:, None], 3, 1)], axis=1)
        J = (rp * (w if weights is None else w[:, None]) - r[:, None]) / steps[:, :, None]
        d = _damped_steps(J, r, lam)
        Rn = _rodrigues(d[:, :3]) @ R
        tn = t + d[:, 3:]
        rn = _pose_residuals(Phi, Gt, Rn, tn) * w
        (R, t, r), cost, lam, done = _accept(cost, np.einsum("kn,kn->k", rn, rn), lam, 1e-10,
                                             (R, t, r), (Rn, tn, rn))
        if done.all():
            break
    count = r.shape[1] if weights is None else np.maximum(np.sum(w * w, axis=1), 1.0)
    return R, t, np.sqrt(cost / count)


@dataclass
class CalibratedPose:
    """Result of :func:`relative_pose`."""

    R: np.ndarray  # (3, 3), X_cam2 = R X_cam1 + t
    t: np.ndarray  # (3,), metric
    inliers: np.ndarray  # (N,) bool, Sampson distance to the pose's tensor <= threshold
    rms: float  # RMS Sampson distance over the inliers, pixels
    candidates: int  # distinct minima of the rotation search


def _ray_terms(rays1, rays2):
    """Pose-independent products of the correspondences' viewing rays, for :func:`_in_front`.

    ``rays1``, ``rays2`` ``(N, 6)`` are the rays (origin, unit direction pointing into the
    visible half-space) in each camera's own frame.
    """
    o1, d1, o2, d2 = rays1[:, :3], rays1[:, 3:], rays2[:, :3], rays2[:, 3:]
    def outer(u, v):
        return (u[:, :, None] * v[:, None, :]).reshape(-1, 9)
    return (outer(d2, d1), outer(o2, d1), outer(d2, o1), np.einsum("ij,ij->i", d1, o1),
            np.einsum("ij,ij->i", d2, o2), d1, d2)


def _in_front(terms, R, t):
    """``(K, N)``: the correspondences' rays meet (closest points) in front of both cameras.

    Ray 2 moves to camera 1's frame by ``X1 = R^T (X2 - t)``. With ``b = d1 . d2'`` and
    ``w = o1 - o2'``, the closest points are at ``lambda1 = (b e2 - e1) / (1 - b^2)`` and
    ``lambda2 = (e2 - b e1) / (1 - b^2)`` with ``e1 = d1 . w``, ``e2 = d2' . w``; every term is
    an inner product of ``vec R`` or ``t`` with precomputed products (:func:`_ray_terms`), so
    K poses cost a few (K, 9) x (9, N) products.
    """
    D21, O21, D2O1, c1, c2, d1, d2 = terms
    Rv = R.reshape(-1, 9)
    b = Rv @ D21.T
    e1 = c1 - Rv @ O21.T + np.einsum("kij,ki->kj", R, t) @ d1.T
    e2 = Rv @ D2O1.T - c2 + t @ d2.T
    # 1 - b^2 >= 0; parallel rays (points at infinity) are not rejected.
    return (b * e2 - e1 >= 0) & (e2 - b * e1 >= 0)


def _score(Phi, Gt, terms, R, t, threshold):
    """MSAC scores ``(K,)`` and inlier masks ``(K, N)`` of poses: a correspondence is an inlier
    when its Sampson distance is within ``threshold`` and it lies in front of both cameras."""
    d = np.abs(_pose_residuals(Phi, Gt, R, t))
    inl = (d <= threshold) & _in_front(terms, R, t)
    return np.where(inl, d * d, threshold * threshold).sum(axis=1), inl


def relative_pose(points1, points2, intrinsics1, intrinsics2, inliers=None, *,
                  threshold: float = 1.5, rng=None, n_rotations: int = 1000,
                  n_subsets: int = 4, n_candidates: int = 4,
                  lo_iterations: int = 12, retry: bool = True) -> CalibratedPose:
    """Metric relative pose of two calibrated cameras from correspondences (module text).

    Parameters
    ----------
    points1, points2 : (N, 2) ndarray
        Pixels.
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
    inliers : (N,) bool ndarray, optional
        Correspondences to start from (e.g. the mask of ``findEpipolarTensor``); all when
        omitted. The returned inliers are re-selected on the exact model from all N.
    threshold : float
        Sampson distance (pixels) below which a correspondence is an inlier.
    rng : numpy.random.Generator, optional
        For the random subsets of the search and of the local optimisation; default
        ``numpy.random.default_rng(0)`` (deterministic).
    n_rotations : int
        Size of the rotation grid.
    n_subsets : int
        The rotation search also runs on this many random quarters of the starting
        correspondences, so that a few outliers absorbed by a linear tensor cannot steer it.
    lo_iterations : int
        Subsets per round of the local optimisation.
    retry : bool
        When the pose explains fewer than 80% of the starting correspondences (which a tensor
        explained), search once more with four times the rotations and starts and twice the
        subsets, and keep the better pose: on rare scenes the search misses the basin of the
        right rotation.

    Returns
    -------
    CalibratedPose

    Raises
    ------
    ValueError
        When fewer than 12 correspondences remain, or no pose explains them.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    n = len(points1)
    start = np.ones(n, bool) if inliers is None else np.asarray(inliers, bool)
    idx = np.flatnonzero(start)
    if len(idx) < 12:
        raise ValueError(f"inliers: a calibrated pose needs at least 12 correspondences, got "
                         f"{len(idx)}")
    q1, q2 = points1[idx], points2[idx]
    Ts, normed = _normalized(q1, q2)  # per axis, as the linear solver
    n1, n2 = np.stack(normed[:2], axis=1), np.stack(normed[2:], axis=1)
    Phi_n = tensor_map(intrinsics1, intrinsics2, Ts)
    quarter = max(12, len(idx) // 4)
    subsets = [np.arange(len(idx))]
    if len(idx) >= 2 * quarter:
        subsets += [rng.choice(len(idx), quarter, replace=False) for _ in range(n_subsets)]
    cam1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    cam2 = compose_camera(intrinsics2, np.zeros(3), np.zeros(3))
    rays = (cam1.rays(points1), cam2.rays(points2))
    terms = _ray_terms(*rays)
    Rs, ts, _ = search_rotations(Phi_n, n1, n2, subsets=subsets,
                                    rays=(rays[0][idx], rays[1][idx]),
                                    n_rotations=n_rotations)
    keep = _distinct(Rs, range(len(Rs)), len(Rs), 1.0)
    Rs, ts = Rs[keep], ts[keep]
    # Sampson distances in pixels: the tensor of the pixels is F_n contracted with the Ts.
    Phi = kron_modes(*Ts).T @ Phi_n
    G_all = sampson_operator(points1, points2)
    Gt = _operator(G_all)
    # A few steps on the starting correspondences bring each candidate near the bottom of its
    # basin (the algebraic optimum can be far off in the weakly observed scale); then every
    # candidate is scored on all points (MSAC) and the best few are fitted to their inliers.
    Rs, ts, _ = refine_pose_sampson(Phi, G_all[:, idx], Rs, ts, iterations=6)
    scores, inls = _score(Phi, Gt, terms, Rs, ts, threshold)
    best = np.argsort(scores)[:n_candidates]
    Rs, ts, _ = refine_pose_sampson(Phi, G_all, Rs[best], ts[best], inls[best])
    scores, inls = _score(Phi, Gt, terms, Rs, ts, threshold)
    if not np.any(np.isfinite(scores)):
        raise ValueError("no metric pose explains the correspondences with these intrinsics")
    k = int(np.argmin(scores))
    R, t, score, inl = Rs[k], ts[k], scores[k], inls[k]
    for _ in range(3):  # local optimisation in the exact model
        R, t, score, inl, improved = _local_optimisation(Phi, G_all, Gt, terms, R, t, score,
                                                         inl, threshold, rng, lo_iterations)
        if not improved:
            break
    if not inl.any():
        raise ValueError("no metric pose explains the correspondences with these intrinsics")
    rms = float(np.sqrt(np.mean(_pose_residuals(Phi, Gt, R[None], t[None])[0, inl] ** 2)))
    pose = CalibratedPose(R, t, inl, rms, len(Rs))
    if retry and np.count_nonzero(inl & start) < 0.8 * len(idx):
        again = relative_pose(points1, points2, intrinsics1, intrinsics2, inliers,
                              threshold=threshold, rng=rng, n_rotations=4 * n_rotations,
                              n_subsets=2 * n_subsets, n_candidates=4 * n_candidates,
                              lo_iterations=lo_iterations, retry=False)
        both, _ = _score(Phi, Gt, terms, np.stack([pose.R, again.R]),
                         np.stack([pose.t, again.t]), threshold)
        if both[1] < both[0]:
            return again
    return pose


def _local_optimisation(Phi, G_all, Gt, terms, R, t, score, inl, threshold, rng, n_subsets):
    """One round: poses fitted to random quarters of the inliers, scored by MSAC on all
    points; the best one, if better, is re-fitted to its inliers until they are stable."""
    idx = np.flatnonzero(inl)
    size = max(12, len(idx) // 4)
    improved = False
    if len(idx) > 2 * size:
        subsets = np.stack([rng.choice(idx, size, replace=False) for _ in range(n_subsets)])
        Gs = G_all[:, subsets].transpose(1, 0, 2, 3)  # (K, 5, size, 16)
        Rk, tk, _ = refine_pose_sampson(Phi, Gs, np.repeat(R[None], n_subsets, 0),
                                        np.repeat(t[None], n_subsets, 0), iterations=15)
        sk, ik = _score(Phi, Gt, terms, Rk, tk, threshold)
        k = int(np.argmin(sk))
        if sk[k] < score:
            R, t, score, inl, improved = Rk[k], tk[k], sk[k], ik[k], True
    for _ in range(5):  # re-fit to all inliers (a quarter of them is noisier)
        Rf, tf, _ = refine_pose_sampson(Phi, G_all, R[None], t[None], inl[None])
        sf, inf = _score(Phi, Gt, terms, Rf, tf, threshold)
        if not sf[0] < score:
            break
        R, t, score = Rf[0], tf[0], sf[0]
        if np.array_equal(inf[0], inl):
            break
        inl = inf[0]
    return R, t, score, inl, improved
