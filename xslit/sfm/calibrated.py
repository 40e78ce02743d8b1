r"""Calibrated two-view geometry: the epipolar tensor as a linear function of the pose.

With both intrinsics known, camera 1 is :math:`A^m` (identity pose) and camera 2 is
:math:`B^m T` with the rigid motion :math:`T = \begin{bmatrix} R & t \\ 0 & 1\end{bmatrix}`
(``X_cam2 = R X_cam1 + t``). Each entry of the epipolar tensor (Theorem 1)
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
subspace; for a fixed rotation it is affine in :math:`t` (:math:`F = a(R) + B(R)\,t`), and
for a fixed translation linear in :math:`\operatorname{vec} R`. This gives the calibrated
solver of :func:`relative_pose`:

1. for a grid of translations (directions times lengths around a reference length: the
   slit distance, or the length of the strip a pushbroom camera imaged), the rotations
   minimising the algebraic error of Theorem 1's relation come from a small eigenproblem
   projected on SO(3) and a descent on SO(3) (:func:`rotations_for_translations`); the starts
   are ranked by the truncated (MSAC) cost of their Sampson distances on a sample, the best
   of each length kept.

   The former grid of rotations with the translation eliminated is kept for the retry
   (:func:`search_rotations`) but no longer starts the search: for a fixed rotation the
   algebraic error is smallest for near-degenerate tensors with :math:`t` near 0 (their
   residuals vanish together with their gradients, while their Sampson distances do not),
   and polishing the rotation on it led every start into that basin: on the README's
   intrinsics and pose, a basin 8 degrees off whose Sampson fit stops 24-31 degrees off,
   with an RMS Sampson distance 4 times that of the true pose;
2. the best distinct starts take Levenberg--Marquardt steps on the 6 pose parameters
   minimising a robust (Cauchy) cost of the Sampson distances
   (:func:`xslit.epipolar.sampson_distance`, in pixels) on a subset of the starting
   correspondences, which hold the outliers a linear tensor absorbed; the candidates are
   scored by MSAC on all correspondences, and the best distinct few are fitted to their
   inliers and compared again;
3. a local optimisation in the exact 6-parameter model (LO-RANSAC's inner loop, Chum et al.
   2003): poses fitted to random subsets of the inliers are scored by MSAC on all
   correspondences, and the inlier set is re-selected until it is stable. A linear tensor has
   16 - 13 = 3 more degrees of freedom than the variety and can absorb a few outliers along
   weakly observed directions (the metric scale of nearly central slits); the exact model
   rejects them.

:func:`calibrated_two_view` refines the best basins by maximum likelihood, compares them, and
reports the covariance of the pose and whether the data determine it.

The metric scale is observed because the slit distances are known; it is weak when the slits
are close compared with the scene depth.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

import numpy as np

from .. import _jit
from .._checks import (
    check_array,
    check_image_points,
    check_mask,
    check_matrix,
    check_point_pair,
    check_positive_int,
    check_rng,
    check_rvec,
    check_threshold,
    check_vector,
)
from ..cameras import PushbroomIntrinsics, TwoSlitIntrinsics, compose_camera
from ..epipolar.linear import axis_normalization, solve_taubin
from ..epipolar.tensor import (
    INDEX,
    SampsonRows,
    design_matrix,
    epipolar_tensor,
    kron_modes,
    sampson_distance,
    sampson_distance_batch,
    sampson_operator,
)
from ..epipolar.variety import refine_on_variety
from ..geometry.projective import matrix_from_rvec, rvec_from_matrix, skew
from ..robust import msac_loss
from .lm import batch_levenberg_marquardt, batch_levenberg_marquardt_normal
from .triangulate import triangulate_linear
from .two_view import (
    fit_metric_pose,
    metric_pose_information,
)

__all__ = [
    "AMBIGUITY_LEVEL",
    "LENGTH_FACTORS",
    "MODEL_FIT_LEVEL",
    "MODEL_FIT_RETRY",
    "RANK_TOLERANCE",
    "SAMPSON_BLOCK",
    "SAMPSON_CLIP",
    "SAMPSON_KEEP",
    "SCALE_TOLERANCE",
    "THOROUGH_SEARCH",
    "CalibratedPose",
    "CalibratedTwoView",
    "PoseSampson",
    "calibrated_two_view",
    "fibonacci_sphere",
    "pose_tangents",
    "pose_tensors",
    "refine_pose_sampson",
    "relative_pose",
    "rotation_grid",
    "rotations_for_translations",
    "search_rotations",
    "tensor_map",
    "translation_grid",
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
    _check_intrinsics(intrinsics1, intrinsics2)
    if transforms is None:
        T = [np.eye(2)] * 4
    else:
        T = check_array("transforms", transforms)
        if T.shape != (4, 2, 2) or not np.all(np.isfinite(T)):
            raise ValueError(f"transforms must be four finite (2, 2) matrices, got shape "
                             f"{T.shape}" + ("" if T.shape != (4, 2, 2) else " with NaN or inf"))
        T = list(T)
    c1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    c2 = compose_camera(intrinsics2, np.zeros(3), np.zeros(3))
    rows = [Tk @ A for Tk, A in zip(T, (c1.A1, c1.A2, c2.A1, c2.A2), strict=True)]
    # Theorem 1: F_ijkl = (-1)^(i+j+k+l) det[A1_(1-i); A2_(1-j); B1_(1-k); B2_(1-l)]
    x, y, u, v = (rows[p][1 - INDEX[:, p]] for p in range(4))
    w = (_wedge(x, y) * _LAPLACE_SIGN)[:, _COMPLEMENT]
    sign = (-1.0) ** INDEX.sum(axis=1)
    return np.einsum("ic,mcb,ib->im", _wedge(u, v), _BASIS, w) * sign[:, None]


def _check_intrinsics(intrinsics1, intrinsics2) -> None:
    for name, intr in (("intrinsics1", intrinsics1), ("intrinsics2", intrinsics2)):
        if not isinstance(intr, (TwoSlitIntrinsics, PushbroomIntrinsics)):
            raise ValueError(f"{name} must be TwoSlitIntrinsics or PushbroomIntrinsics, got "
                             f"{type(intr).__name__}")


def pose_tensors(Phi, R, t) -> np.ndarray:
    """Tensors ``(..., 16)`` of poses ``R (..., 3, 3)``, ``t (..., 3)`` through ``Phi``
    (the first of :func:`pose_tangents`)."""
    R = np.asarray(R, dtype=float)
    t = np.asarray(t, dtype=float)
    shape = np.broadcast_shapes(R.shape[:-2], t.shape[:-1])
    R = np.broadcast_to(R, (*shape, 3, 3)).reshape(-1, 3, 3)
    t = np.broadcast_to(t, (*shape, 3)).reshape(-1, 3)
    return _tangents(_tangent_basis(Phi), R, t, 1).reshape(*shape, 16)


def pose_tangents(Phi, R, t) -> np.ndarray:
    r"""Tensors of poses and their derivatives, ``(K, 7, 16)``: ``f`` and
    :math:`\partial f / \partial \theta_a` for the pose moved by
    :math:`R \leftarrow \exp([w]_\times) R`, :math:`t \leftarrow t + v`,
    :math:`\theta = (w, v)` at 0.

    With :math:`E = [t]_\times R`: :math:`\partial R / \partial w_a = [e_a]_\times R`,
    :math:`\partial E / \partial w_a = [t]_\times [e_a]_\times R` and
    :math:`\partial E / \partial v_a = [e_a]_\times R`; :math:`f` is linear in
    :math:`(\operatorname{vec} R, \operatorname{vec} E)` through ``Phi``.

    Parameters
    ----------
    Phi : (16, 18) ndarray
    R : (K, 3, 3) ndarray
    t : (K, 3) ndarray
    """
    return _tangents(_tangent_basis(Phi), R, t, 7)


def _tangent_basis(Phi) -> np.ndarray:
    r"""``(9, 7 * 4 * 16)``: the tensors of :func:`pose_tangents` as linear maps of
    :math:`\operatorname{vec} R` whose coefficients are affine in ``t``,
    :math:`\partial_j f = \sum_c \tau_c Q_{jc} \operatorname{vec} R` with
    :math:`\tau = (1, t)`, stacked ``[i, (j, c, f)]``.

    With row-major :math:`\operatorname{vec}(A B) = (A \otimes I) \operatorname{vec} B` and
    :math:`S_a = [e_a]_\times \otimes I`: :math:`f` has :math:`Q_{00} = \Phi_R`,
    :math:`Q_{0b} = \Phi_E S_b`; :math:`\partial f / \partial w_a` has :math:`\Phi_R S_a`
    and :math:`\Phi_E S_b S_a`; :math:`\partial f / \partial v_a` has :math:`\Phi_E S_a`
    (:math:`\Phi = [\Phi_R, \Phi_E]`).
    """
    eye = np.eye(3)
    S = [np.kron(skew(e), eye) for e in eye]
    PR, PE = Phi[:, :9], Phi[:, 9:]
    Q = np.zeros((7, 4, 16, 9))
    Q[0, 0] = PR
    for a in range(3):
        Q[0, 1 + a] = PE @ S[a]
        Q[1 + a, 0] = PR @ S[a]
        Q[4 + a, 0] = PE @ S[a]
        for b in range(3):
            Q[1 + a, 1 + b] = PE @ S[b] @ S[a]
    return np.ascontiguousarray(Q.transpose(3, 0, 1, 2).reshape(9, 7 * 4 * 16))


def _tangents(Q, R, t, count) -> np.ndarray:
    """The first ``count`` tensors ``(K, count, 16)`` of :func:`pose_tangents` from its
    :func:`_tangent_basis` ``Q``: two matrix products."""
    K = len(R)
    Y = (R.reshape(K, 9) @ Q[:, :count * 64]).reshape(K, count, 4, 16)
    tau = np.empty((K, 1, 1, 4))
    tau[..., 0] = 1.0
    tau[:, 0, 0, 1:] = t
    return (tau @ Y)[:, :, 0]


#: Sampson distances beyond this (pixels) are clipped: a tensor whose gradient nearly vanishes
#: at a correspondence must not dominate a least-squares fit.
SAMPSON_CLIP = 1e6
#: Tensor-correspondence pairs that :class:`PoseSampson` evaluates at once (a block): its
#: temporaries stay within about 32 MiB whatever the number of correspondences.
SAMPSON_BLOCK = 2**17
#: Correspondences whose :func:`~xslit.epipolar.tensor.sampson_operator` a
#: :class:`PoseSampson` keeps between calls (640 bytes each, 20 MiB per evaluator: all of
#: the thorough search's); beyond, it is built again for each block at each call, which
#: cost no measurable time at N = 100,000 (against keeping the operators of 2^18).
SAMPSON_KEEP = 2**15

#: :data:`SAMPSON_CLIP` as the compiled kernel sees it (a constant at compile time).
_CLIP = SAMPSON_CLIP


# The compiled Sampson kernel of PoseSampson (used when numba is installed). The functions
# ``_nb_*`` are plain Python written for numba's nopython mode; ``_compiled`` compiles them on
# first use (cached on disk). They read the residual and its gradient from the 4 x 4 unfolding
# ``M`` of a tensor, ``e = a^T M c`` with ``a = [xy, x, y, 1]`` and ``c = [x'y', x', y', 1]``
# (the rows of sampson_operator, never built), one pose and correspondence at a time.
def _nb_residual(f, x, y, u, v):
    """The residual ``e`` of the tensor ``f`` (16,) at ``(x, y, u, v)`` and its gradient."""
    xy, uv = x * y, u * v
    m0 = f[0] * uv + f[1] * u + f[2] * v + f[3]
    m1 = f[4] * uv + f[5] * u + f[6] * v + f[7]
    m2 = f[8] * uv + f[9] * u + f[10] * v + f[11]
    m3 = f[12] * uv + f[13] * u + f[14] * v + f[15]
    n0 = xy * f[0] + x * f[4] + y * f[8] + f[12]
    n1 = xy * f[1] + x * f[5] + y * f[9] + f[13]
    n2 = xy * f[2] + x * f[6] + y * f[10] + f[14]
    e = xy * m0 + x * m1 + y * m2 + m3
    return e, y * m0 + m1, x * m0 + m2, v * n0 + n1, u * n0 + n2


def _nb_cost(p1, p2, F, W, scale, out):
    """:meth:`PoseSampson.cost` of the tensors ``F`` (K, 16) on the points ``p1``, ``p2``
    (1 or K, m, 2): the sums ``out`` (K,) of squared (Cauchy, with ``scale`` (K,) or (0,))
    residuals weighted by ``W`` (K, m) or (0, 0)."""
    K, m = F.shape[0], p1.shape[1]
    for k in range(K):
        row = 0 if p1.shape[0] == 1 else k
        f = F[k]
        acc = 0.0
        for i in range(m):
            e, g1, g2, g3, g4 = _nb_residual(f, p1[row, i, 0], p1[row, i, 1], p2[row, i, 0],
                                            p2[row, i, 1])
            d = e / np.sqrt(g1 * g1 + g2 * g2 + g3 * g3 + g4 * g4)
            if d != d:
                d = 0.0
            d = min(max(d, -_CLIP), _CLIP)
            if scale.shape[0]:
                q = d / scale[k]
                r2 = scale[k] * scale[k] * np.log1p(q * q)
            else:
                r2 = d * d
            if W.shape[0]:
                r2 *= W[k, i] * W[k, i]
            acc += r2
        out[k] = acc


def _nb_normal(p1, p2, F, W, scale, cost, H, g):
    r""":meth:`PoseSampson.cost_and_normal_equations` from the tensors and tangents ``F``
    (K, 7, 16) (:func:`pose_tangents`): ``cost`` (K,) as :func:`_nb_cost` sums it, ``H``
    (K, 6, 6) and ``g`` (K, 6).

    With :math:`s = d / \|\nabla e\|` the row of the derivatives is
    :math:`b\, v^\top \partial f` where :math:`v = G_0 - s \sum_c g_c G_c`, one 16-vector
    per correspondence (the Kronecker rows of the operator, combined before the product):
    the rows :math:`b v` of a pose's correspondences are formed in a loop, and the products
    with its 6 tangents and the sums of the normal equations are matrix products (BLAS)."""
    K, m = F.shape[0], p1.shape[1]
    V = np.zeros((m, 16))
    res = np.zeros(m)
    for k in range(K):
        row = 0 if p1.shape[0] == 1 else k
        f = F[k, 0]
        finite = np.all(np.isfinite(F[k]))
        acc = 0.0
        for i in range(m):
            x, y, u, w = p1[row, i, 0], p1[row, i, 1], p2[row, i, 0], p2[row, i, 1]
            e, g1, g2, g3, g4 = _nb_residual(f, x, y, u, w)
            norm = np.sqrt(g1 * g1 + g2 * g2 + g3 * g3 + g4 * g4)
            d, inv = e / norm, 1.0 / norm
            dc = 0.0 if d != d else min(max(d, -_CLIP), _CLIP)  # as _nb_cost
            if scale.shape[0]:
                q = dc / scale[k]
                log = np.log1p(q * q)
                r2 = scale[k] * scale[k] * log
            else:
                r2 = dc * dc
            if W.shape[0]:
                r2 *= W[k, i] * W[k, i]
            acc += r2
            if not abs(d) < _CLIP:  # a vanishing gradient or a clipped distance: no move
                V[i] = 0.0
                res[i] = 0.0
                continue
            s, b, r = d * inv, inv, d
            if scale.shape[0]:  # d = dc here
                root = np.sqrt(log)
                if root > 0:
                    b *= abs(q) / ((1.0 + q * q) * root)
                r = np.sign(d) * scale[k] * root
            if W.shape[0]:
                r *= W[k, i]
                b *= W[k, i]
            res[i] = r
            # b v = kron(b (a - s alpha), c) - kron(a, b s beta), with alpha = g1 da/dx +
            # g2 da/dy and beta = g3 dc/dx' + g4 dc/dy' (the rows of the operator, combined)
            xy, uw = x * y, u * w
            a0, a1, a2 = b * (xy - s * (g1 * y + g2 * x)), b * (x - s * g1), b * (y - s * g2)
            c0, c1, c2 = b * s * (g3 * w + g4 * u), b * s * g3, b * s * g4
            V[i, 0], V[i, 1], V[i, 2], V[i, 3] = a0 * uw - xy * c0, a0 * u - xy * c1, \
                a0 * w - xy * c2, a0
            V[i, 4], V[i, 5], V[i, 6], V[i, 7] = a1 * uw - x * c0, a1 * u - x * c1, \
                a1 * w - x * c2, a1
            V[i, 8], V[i, 9], V[i, 10], V[i, 11] = a2 * uw - y * c0, a2 * u - y * c1, \
                a2 * w - y * c2, a2
            V[i, 12], V[i, 13], V[i, 14], V[i, 15] = b * uw - c0, b * u - c1, b * w - c2, b
        cost[k] = acc
        if not finite:  # as the products of the numpy path
            H[k] = np.nan
            g[k] = np.nan
            continue
        J = V @ np.ascontiguousarray(F[k, 1:].T)  # (m, 6)
        H[k] = J.T @ J
        g[k] = J.T @ res


def _nb_distances(p1, p2, F, out):
    """:meth:`PoseSampson.distances` of the tensors ``F`` (K, 16): the signed distances
    ``out`` (K, m), 0 where the residual and its gradient vanish, clipped."""
    K, m = F.shape[0], p1.shape[1]
    for k in range(K):
        row = 0 if p1.shape[0] == 1 else k
        for i in range(m):
            e, g1, g2, g3, g4 = _nb_residual(F[k], p1[row, i, 0], p1[row, i, 1],
                                             p2[row, i, 0], p2[row, i, 1])
            d = e / np.sqrt(g1 * g1 + g2 * g2 + g3 * g3 + g4 * g4)
            if d != d:
                d = 0.0
            out[k, i] = min(max(d, -_CLIP), _CLIP)


def _nb_score(p1, p2, F, Rv, t, terms, threshold, loss, masks):
    """:meth:`PoseSampson.score` of the tensors ``F`` (K, 16) of the poses ``Rv`` (K, 9)
    (row-major), ``t`` (K, 3): MSAC ``loss`` (K,) and inlier ``masks`` (K, m), with the
    cheirality test of :func:`_in_front` when ``terms`` (m, 35: :func:`_ray_terms` side by
    side) has rows."""
    K, m = F.shape[0], p1.shape[1]
    rays = terms.shape[0] > 0
    cap = threshold * threshold
    for k in range(K):
        row = 0 if p1.shape[0] == 1 else k
        # R^T t, for the origin of ray 2 in camera 1's frame (_in_front)
        rt0 = Rv[k, 0] * t[k, 0] + Rv[k, 3] * t[k, 1] + Rv[k, 6] * t[k, 2]
        rt1 = Rv[k, 1] * t[k, 0] + Rv[k, 4] * t[k, 1] + Rv[k, 7] * t[k, 2]
        rt2 = Rv[k, 2] * t[k, 0] + Rv[k, 5] * t[k, 1] + Rv[k, 8] * t[k, 2]
        acc = 0.0
        for i in range(m):
            e, g1, g2, g3, g4 = _nb_residual(F[k], p1[row, i, 0], p1[row, i, 1],
                                             p2[row, i, 0], p2[row, i, 1])
            d = abs(e) / np.sqrt(g1 * g1 + g2 * g2 + g3 * g3 + g4 * g4)
            if d != d:
                d = 0.0
            d = min(d, _CLIP)
            if rays:
                b = 0.0
                o = 0.0
                q = 0.0
                for j in range(9):
                    b += Rv[k, j] * terms[i, j]
                    o += Rv[k, j] * terms[i, 9 + j]
                    q += Rv[k, j] * terms[i, 18 + j]
                e1 = (terms[i, 27] - o + rt0 * terms[i, 29] + rt1 * terms[i, 30]
                      + rt2 * terms[i, 31])
                e2 = q - terms[i, 28] + t[k, 0] * terms[i, 32] + t[k, 1] * terms[i, 33] \
                    + t[k, 2] * terms[i, 34]
                if not (b * e2 - e1 >= 0 and e2 - b * e1 >= 0):
                    d = np.inf
            masks[k, i] = d <= threshold
            acc += min(d * d, cap)
        loss[k] = acc


def _nb_rotation(w, out):
    """:func:`~xslit.geometry.projective.matrix_from_rvec` of one rotation vector ``w`` (3,)
    into ``out`` (3, 3)."""
    x, y, z = w[0], w[1], w[2]
    th2 = x * x + y * y + z * z
    th = np.sqrt(th2)
    if th < 1e-8:  # the series near 0
        a, b = 1.0 - th2 / 6.0, 0.5 - th2 / 24.0
    else:
        a, b = np.sin(th) / th, (1.0 - np.cos(th)) / th2
    # I + a [w]x + b [w]x^2, with [w]x^2 = w w^T - |w|^2 I
    out[0, 0] = 1.0 + b * (x * x - th2)
    out[1, 1] = 1.0 + b * (y * y - th2)
    out[2, 2] = 1.0 + b * (z * z - th2)
    out[0, 1], out[1, 0] = b * x * y - a * z, b * x * y + a * z
    out[0, 2], out[2, 0] = b * x * z + a * y, b * x * z - a * y
    out[1, 2], out[2, 1] = b * y * z - a * x, b * y * z + a * x


def _nb_tangents(Q, R, t, out):
    """:func:`pose_tangents` of one pose ``R`` (3, 3), ``t`` (3,) from its
    :func:`_tangent_basis` ``Q`` (9, 448) into ``out`` (7, 16)."""
    for j in range(7):
        for f in range(16):
            acc = 0.0
            for c in range(4):
                col = (4 * j + c) * 16 + f
                s = 0.0
                for i in range(9):
                    s += R[i // 3, i % 3] * Q[i, col]
                acc += s if c == 0 else t[c - 1] * s
            out[j, f] = acc


def _nb_damped_step(H, g, lam, out):
    """The step ``out`` (p,) of :func:`xslit.sfm.lm.batch_damped_solve` for one problem:
    ``-(H + lam (diag H + 1e-12)) out = g``, by Gaussian elimination with partial pivoting
    (NaN when the damped matrix is singular)."""
    n = g.shape[0]
    A = np.empty((n, n + 1))
    for i in range(n):
        for j in range(n):
            A[i, j] = H[i, j]
        A[i, i] += lam * (H[i, i] + 1e-12)
        A[i, n] = -g[i]
    for c in range(n):
        p = c
        for i in range(c + 1, n):
            if abs(A[i, c]) > abs(A[p, c]):
                p = i
        if p != c:
            for j in range(c, n + 1):
                A[c, j], A[p, j] = A[p, j], A[c, j]
        if A[c, c] == 0.0:
            out[:] = np.nan
            return
        for i in range(c + 1, n):
            m = A[i, c] / A[c, c]
            for j in range(c, n + 1):
                A[i, j] -= m * A[c, j]
    for i in range(n - 1, -1, -1):
        s = A[i, n]
        for j in range(i + 1, n):
            s -= A[i, j] * out[j]
        out[i] = s / A[i, i]


def _nb_descend(L, T, R, iterations):
    """:func:`_descend_on_rotations` of the rotations ``R`` (K, 3, 3), in place, one at a
    time: ``iterations`` steps of :func:`xslit.sfm.lm.batch_levenberg_marquardt` (damping
    from 1e-3, divided by 3 after a step that lowers the cost, multiplied by 10 otherwise) on
    the residuals ``L_k^T vec(R)`` (``L`` (K, 9, 9)), with ``T`` the generators
    :data:`_SO3_TANGENT` (9, 27)."""
    J, H, g, step = np.empty((3, 9)), np.empty((3, 3)), np.empty(3), np.empty(3)
    turn, Rn = np.empty((3, 3)), np.empty((3, 3))
    r, rn, w = np.empty(9), np.empty(9), np.empty(27)
    for k in range(R.shape[0]):
        for j in range(9):
            acc = 0.0
            for i in range(9):
                acc += L[k, i, j] * R[k, i // 3, i % 3]
            r[j] = acc
        cost, lam = np.dot(r, r), 1e-3
        for _ in range(iterations):
            for c in range(27):
                acc = 0.0
                for i in range(9):
                    acc += R[k, i // 3, i % 3] * T[i, c]
                w[c] = acc
            for a in range(3):
                for j in range(9):
                    acc = 0.0
                    for i in range(9):
                        acc += w[9 * a + i] * L[k, i, j]
                    J[a, j] = acc
            for a in range(3):
                g[a] = np.dot(J[a], r)
                for b in range(3):
                    H[a, b] = np.dot(J[a], J[b])
            _nb_damped_step(H, g, lam, step)
            _nb_rotation(step, turn)
            for i in range(3):
                for j in range(3):
                    Rn[i, j] = R[k, i, 0] * turn[0, j] + R[k, i, 1] * turn[1, j] \
                        + R[k, i, 2] * turn[2, j]
            for j in range(9):
                acc = 0.0
                for i in range(9):
                    acc += L[k, i, j] * Rn[i // 3, i % 3]
                rn[j] = acc
            new = np.dot(rn, rn)
            if new < cost:
                R[k] = Rn
                r[:] = rn
                cost, lam = new, lam / 3
            else:
                lam *= 10


def _nb_refine(p1, p2, Q, R, t, W, scale, iterations, rel_tol, lam0, cost):
    """:func:`refine_pose_sampson` of the poses ``R`` (K, 3, 3), ``t`` (K, 3), in place, one
    pose at a time: the steps and acceptance of
    :func:`xslit.sfm.lm.batch_levenberg_marquardt_normal` with ``fused`` (a pose leaves when
    its step lowers its cost by less than ``rel_tol``, or no step at any useful damping
    lowers it), the normal equations of :func:`_nb_normal`; ``cost`` (K,) receives the
    costs. ``p1``, ``p2``, ``W`` and ``scale`` are as in :func:`_nb_normal`."""
    K, m = R.shape[0], p1.shape[1]
    F = np.empty((1, 7, 16))
    c1, H1, g1 = np.empty(1), np.empty((1, 6, 6)), np.empty((1, 6))
    H, g, step = np.empty((6, 6)), np.empty(6), np.empty(6)
    turn, Rn, tn = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    # One pose's arguments of _nb_normal, copied into arrays of the types the other callers
    # pass (slices would compile another version of it).
    q1, q2 = np.empty((1, m, 2)), np.empty((1, m, 2))
    Wk = np.empty((1, m)) if W.shape[0] else W
    sk = np.empty(1) if scale.shape[0] else scale
    for k in range(K):
        if k == 0 or p1.shape[0] > 1:
            q1[0] = p1[k if p1.shape[0] > 1 else 0]
            q2[0] = p2[k if p2.shape[0] > 1 else 0]
        if W.shape[0]:
            Wk[0] = W[k]
        if scale.shape[0]:
            sk[0] = scale[k]
        _nb_tangents(Q, R[k], t[k], F[0])
        _nb_normal(q1, q2, F, Wk, sk, c1, H1, g1)
        c, lam = c1[0], lam0
        H[:] = H1[0]
        g[:] = g1[0]
        for _ in range(iterations):
            _nb_damped_step(H, g, lam, step)
            _nb_rotation(step[:3], turn)
            for i in range(3):
                for j in range(3):
                    Rn[i, j] = turn[i, 0] * R[k, 0, j] + turn[i, 1] * R[k, 1, j] \
                        + turn[i, 2] * R[k, 2, j]
                tn[i] = t[k, i] + step[3 + i]
            _nb_tangents(Q, Rn, tn, F[0])
            _nb_normal(q1, q2, F, Wk, sk, c1, H1, g1)
            ok = c1[0] < c
            done = (not ok and lam > 1e6) or (ok and c - c1[0] <= rel_tol * c)
            if ok:
                R[k] = Rn
                t[k] = tn
                c, lam = c1[0], lam / 3
                H[:] = H1[0]
                g[:] = g1[0]
            else:
                lam *= 10
            if done:
                break
        cost[k] = c


_NB_FUNCTIONS = ("_nb_residual", "_nb_rotation", "_nb_tangents", "_nb_damped_step", "_nb_cost",
                 "_nb_normal", "_nb_distances", "_nb_score", "_nb_refine", "_nb_descend")
_NB_KERNELS = ("_nb_cost", "_nb_normal", "_nb_distances", "_nb_score", "_nb_refine",
               "_nb_descend")


@functools.cache
def _compiled():
    """The compiled :func:`_nb_cost`, :func:`_nb_normal`, :func:`_nb_distances`,
    :func:`_nb_score`, :func:`_nb_refine` and :func:`_nb_descend`, or None when numba cannot be imported. Compiles
    on the first call (numba caches the machine code on disk) and binds the compiled ``_nb_*``
    functions to their module names, by which they call each other."""
    namespace = globals()
    if not _jit.compile_kernels(namespace, _NB_FUNCTIONS):
        return None
    return tuple(namespace[name] for name in _NB_KERNELS)


class PoseSampson:
    r"""Sampson distances of rigid poses on fixed correspondences, reduced block by block.

    A pose :math:`(R, t)` gives the tensor :math:`f = \Phi [\operatorname{vec} R,
    \operatorname{vec}([t]_\times R)]` (:func:`pose_tensors`), whose signed Sampson distances
    :math:`d_i = e_i / \|\nabla e_i\|` (:func:`~xslit.epipolar.tensor.sampson_distance_batch`,
    clipped to :data:`SAMPSON_CLIP` pixels) are what the search fits and scores. K poses on N
    correspondences are evaluated in blocks of at most ``block`` tensor-correspondence
    pairs, the :func:`~xslit.epipolar.tensor.sampson_operator` of each block's
    correspondences built when needed (kept for at most :data:`SAMPSON_KEEP` of them), and
    each block is reduced at once to what the caller needs: the truncated (MSAC) cost and
    inlier masks (:meth:`score`), a robust cost (:meth:`cost`), or the normal equations of a
    Levenberg--Marquardt step with or without that cost (:meth:`normal_equations`,
    :meth:`cost_and_normal_equations`). Nothing of size K x N but the masks is held.

    The derivatives are analytic: with :math:`e = G_0 f` and :math:`g_c = G_c f` the
    residual and the components of its gradient (``G`` the operator) and :math:`\partial_\theta`
    a derivative of the pose (:func:`pose_tangents`, so that :math:`\partial_\theta e = G_0
    \partial_\theta f` and :math:`\partial_\theta g_c = G_c \partial_\theta f`),

    .. math:: \partial_\theta d = \frac{\partial_\theta e
              - d \sum_c g_c\, \partial_\theta g_c / \|g\|}{\|g\|} :

    the 7 tensors of a pose cost one matrix product with the operator.

    With numba installed (the optional extra ``fast``), every reduction runs in a compiled
    loop over poses and correspondences instead (:func:`_nb_distances`, :func:`_nb_score`,
    :func:`_nb_cost`, :func:`_nb_normal`, compiled on first use and cached on disk): the
    same reductions, equal up to rounding, with no operator and no temporaries; on the
    search's small batches (a few to 48 poses on 64 to 300 correspondences) the numpy blocks
    spend most of their time in the overhead of their many array operations.

    Parameters
    ----------
    Phi : (16, 18) ndarray
        :func:`tensor_map` in the coordinates of the points.
    points1, points2 : (N, 2) ndarray
    rays : pair of (N, 6) ndarray, optional
        Viewing rays of the correspondences in each camera's frame (origin, unit direction),
        for the cheirality test of :meth:`score`.
    block : int
        Tensor-correspondence pairs per block (results do not depend on it beyond rounding).
    backend : {"auto", "numba", "numpy"}
        ``"auto"`` uses the compiled reductions when numba is installed (and
        ``XSLIT_NO_NUMBA`` does not switch them off, :mod:`xslit._jit`) and the numpy blocks
        otherwise; ``"numba"`` requires the compiled kernels, ``"numpy"`` forces the blocks
        (``block`` then matters).

    Raises
    ------
    ValueError
        On malformed input or an unknown ``backend`` (naming the argument).
    RuntimeError
        When ``backend="numba"`` and numba cannot be imported.

    Examples
    --------
    >>> from xslit.synthetic import random_two_view_scene
    >>> s = random_two_view_scene(0, 50)
    >>> Phi = tensor_map(s["intrinsics1"], s["intrinsics2"])
    >>> R, t = matrix_from_rvec(s["rvec"])[None], s["tvec"][None]
    >>> d = PoseSampson(Phi, s["points1"], s["points2"]).distances(R, t)
    >>> bool(np.abs(d).max() < 1e-6)
    True
    """

    def __init__(self, Phi, points1, points2, rays=None, *, block: int = SAMPSON_BLOCK,
                 backend: str = "auto"):
        self.kernels = _jit.select_kernels(backend, _compiled, "PoseSampson")
        self.Phi = check_matrix("Phi", Phi, (16, 18))
        self._basis = _tangent_basis(self.Phi)
        self.points1, self.points2 = check_point_pair("points1", points1, "points2", points2)
        self.block = check_positive_int("block", block)
        if rays is not None:
            rays = tuple(check_matrix(name, r, (len(self.points1), 6)) for name, r in
                         (("rays[0]", rays[0]), ("rays[1]", rays[1])))
        self.rays = rays
        self._operators, self._ray_terms = {}, {}

    def __len__(self) -> int:
        """Correspondences (of each pose, for :meth:`subsets`)."""
        return self.points1.shape[-2]

    def subset(self, rows) -> PoseSampson:
        """The evaluator of the correspondences ``rows`` (indices or a boolean mask)."""
        sub = object.__new__(PoseSampson)
        sub.Phi, sub.block, sub._operators, sub._ray_terms = self.Phi, self.block, {}, {}
        sub.kernels, sub._basis = self.kernels, self._basis
        sub.points1, sub.points2 = self.points1[rows], self.points2[rows]
        sub.rays = None if self.rays is None else (self.rays[0][rows], self.rays[1][rows])
        return sub

    def subsets(self, rows) -> PoseSampson:
        """The evaluator of ``K`` poses each on its own correspondences, the rows of ``rows``
        ``(K, m)`` (indices): pose ``k`` of every later call is evaluated on ``rows[k]``
        only (without the cheirality test)."""
        rows = np.asarray(rows)
        if rows.ndim != 2 or not np.issubdtype(rows.dtype, np.integer):
            raise ValueError(f"rows must be (K, m) integer indices, got {rows.dtype} "
                             f"{rows.shape}")
        sub = self.subset(rows)
        sub.rays = None
        return sub

    def poses(self, k) -> PoseSampson:
        """The evaluator of the poses ``k`` (indices) of one made by :meth:`subsets`, sharing
        its operators."""
        sub = self.subset(k)
        sub._operators = {key: G[k] for key, G in self._operators.items()}
        return sub

    def _operator(self, c0, c1):
        """The Sampson operator ``(5, m, 16)`` of the correspondences ``c0:c1``, or one per
        pose ``(K, 5, m, 16)`` (:meth:`subsets`)."""
        G = self._operators.get((c0, c1))
        if G is None:
            p1, p2 = self.points1[..., c0:c1, :], self.points2[..., c0:c1, :]
            G = sampson_operator(p1.reshape(-1, 2), p2.reshape(-1, 2))
            if p1.ndim == 3:
                G = np.ascontiguousarray(G.reshape(5, *p1.shape[:2], 16).transpose(1, 0, 2, 3))
            if G.size + sum(g.size for g in self._operators.values()) <= 80 * SAMPSON_KEEP:
                self._operators[c0, c1] = G
        return G

    def _terms(self, cols):
        """:func:`_ray_terms` of the correspondences ``cols`` (a slice), kept with the
        operators."""
        terms = self._ray_terms.get((cols.start, cols.stop))
        if terms is None:
            terms = _ray_terms(self.rays[0][cols], self.rays[1][cols])
            if cols.stop - cols.start + sum(t[0].shape[0] for t in self._ray_terms.values()) \
                    <= SAMPSON_KEEP:
                self._ray_terms[cols.start, cols.stop] = terms
        return terms

    def _blocks(self, K, per_pose):
        """Blocks ``(poses, columns, G)``: the poses and the correspondences (slices) and the
        Sampson operator of those correspondences; ``per_pose`` tensors are evaluated per pose
        and correspondence."""
        n = len(self)
        m = max(1, min(n, max(256, self.block // (per_pose * max(K, 1)))))
        kc = max(1, self.block // (per_pose * m))
        for c0 in range(0, n, m):
            c1 = min(n, c0 + m)
            G = self._operator(c0, c1)
            for k0 in range(0, K, kc):
                yield slice(k0, k0 + kc), slice(c0, c1), G if G.ndim == 3 else G[k0:k0 + kc]

    def distances(self, R, t) -> np.ndarray:
        """Signed Sampson distances ``(K, N)`` of poses ``R (K, 3, 3)``, ``t (K, 3)``."""
        f = _tangents(self._basis, R, t, 1)[:, 0]
        out = np.empty((len(f), len(self)))
        if self.kernels is not None:
            self.kernels[2](*self._kernel_args(f, None, None)[:3], out)
            return out
        for k, cols, G in self._blocks(len(f), 1):
            out[k, cols] = sampson_distance_batch(G, f[k][:, None], signed=True)[:, 0]
        return np.clip(out, -SAMPSON_CLIP, SAMPSON_CLIP, out=out)

    def score(self, R, t, threshold):
        """MSAC scores ``(K,)`` and inlier masks ``(K, N)`` of poses: a correspondence is an
        inlier when its Sampson distance is within ``threshold`` and the closest points of its
        rays lie in front of both cameras (:func:`_in_front`; without ``rays``, every
        correspondence counts as in front)."""
        f = _tangents(self._basis, R, t, 1)[:, 0]
        K, n = len(f), len(self)
        loss, masks = np.zeros(K), np.zeros((K, n), bool)
        if self.kernels is not None:
            if self.rays is None:
                terms = np.zeros((0, 35))
            else:
                terms = self._ray_terms.get("packed")
                if terms is None:
                    terms = np.concatenate([np.reshape(a, (n, -1)) for a in
                                            _ray_terms(*self.rays)], axis=1)
                    if n <= SAMPSON_KEEP:
                        self._ray_terms["packed"] = terms
            p1, p2, f = self._kernel_args(f, None, None)[:3]
            self.kernels[3](p1, p2, f, np.ascontiguousarray(np.reshape(R, (K, 9)), dtype=float),
                            np.ascontiguousarray(t, dtype=float), terms, float(threshold), loss,
                            masks)
            return loss, masks
        for k, cols, G in self._blocks(K, 1):
            d = sampson_distance_batch(G, f[k][:, None])[:, 0]
            np.minimum(d, SAMPSON_CLIP, out=d)
            if self.rays is not None:
                front = _in_front(self._terms(cols), R[k], t[k])
                d[~front] = np.inf
            masks[k, cols] = d <= threshold
            loss[k] += msac_loss(d, threshold)
        return loss, masks

    def _kernel_args(self, F, weights, scale):
        """The arguments of the compiled kernel: points ``(1 or K, m, 2)``, tensors, weights
        and scales (empty when not given), C-contiguous float arrays."""
        p1, p2 = self.points1, self.points2
        if p1.ndim == 2:
            p1, p2 = p1[None], p2[None]
        W = np.zeros((0, 0)) if weights is None else weights
        scale = np.zeros(0) if scale is None else scale
        return tuple(np.ascontiguousarray(a, dtype=float) for a in (p1, p2, F, W, scale))

    @staticmethod
    def _robust(d, scale):
        """Residuals whose squares sum to the cost: the distances, or the signed roots of
        their Cauchy loss with ``scale`` ``(k, 1)``; and their derivatives in ``d``."""
        if scale is None:
            return d, None
        u = d / scale
        root = np.sqrt(np.log1p(u * u))
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.where(root > 0, np.abs(u) / ((1 + u * u) * root), 1.0)
        return np.sign(d) * scale * root, slope

    def cost(self, R, t, *, weights=None, scale=None) -> np.ndarray:
        r"""Sums ``(K,)`` of squared weighted residuals: the Sampson distances, or with
        ``scale`` :math:`s` the Cauchy loss :math:`\sum_i w_i^2 s^2 \log(1 + d_i^2 / s^2)`
        (:func:`refine_pose_sampson`).

        Parameters
        ----------
        R : (K, 3, 3) ndarray
        t : (K, 3) ndarray
        weights : (K, N) ndarray, optional
            Per-pose weights of the correspondences.
        scale : (K,) ndarray, optional
        """
        f = _tangents(self._basis, R, t, 1)[:, 0]
        if self.kernels is not None:
            out = np.empty(len(f))
            self.kernels[0](*self._kernel_args(f, weights, scale), out)
            return out
        out = np.zeros(len(f))
        for k, cols, G in self._blocks(len(f), 1):
            d = sampson_distance_batch(G, f[k][:, None], signed=True)[:, 0]
            np.clip(d, -SAMPSON_CLIP, SAMPSON_CLIP, out=d)
            r, _ = self._robust(d, None if scale is None else scale[k, None])
            if weights is not None:
                r = r * weights[k, cols]
            out[k] += np.einsum("kn,kn->k", r, r)
        return out

    def normal_equations(self, R, t, *, weights=None, scale=None):
        """``J J^T`` ``(K, 6, 6)`` and ``J r`` ``(K, 6)`` of the residuals of :meth:`cost`,
        with ``J`` their derivatives in ``(w, v)`` (:func:`pose_tangents`)."""
        return self.cost_and_normal_equations(R, t, weights=weights, scale=scale)[1:]

    def cost_and_normal_equations(self, R, t, *, weights=None, scale=None):
        """:meth:`cost` ``(K,)`` and :meth:`normal_equations` ``(K, 6, 6)``, ``(K, 6)`` from
        one evaluation of the residuals (the normal equations come with the residuals)."""
        F = _tangents(self._basis, R, t, 7)  # pose_tangents (K, 7, 16)
        K = len(F)
        c, H, g = np.zeros(K), np.zeros((K, 6, 6)), np.zeros((K, 6))
        if self.kernels is not None:
            self.kernels[1](*self._kernel_args(F, weights, scale), c, H, g)
            return c, H, g
        for k, cols, G in self._blocks(K, 7):
            Fk = F[k]
            m = G.shape[-2]
            # Two-dimensional products (BLAS with the operator transposed in place): the
            # batched product copies it.
            if G.ndim == 3:
                P = Fk.reshape(-1, 16) @ G.reshape(-1, 16).T
            else:
                P = np.stack([Fi @ Gi.reshape(-1, 16).T for Fi, Gi in zip(Fk, G, strict=True)])
            P = P.reshape(len(Fk), 7, 5, m)
            grad0 = P[:, 0, 1:]  # (k, 4, m)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                inv = 1.0 / np.sqrt(np.einsum("kcn,kcn->kn", grad0, grad0))
                d = P[:, 0, 0] * inv
                # A vanishing gradient (d infinite or NaN) or a clipped distance does not
                # move: its derivatives are 0.
                ok = np.abs(d) < SAMPSON_CLIP
                d = np.clip(np.nan_to_num(d, nan=0.0), -SAMPSON_CLIP, SAMPSON_CLIP)
                a = np.where(ok, d * inv, 0.0)
                b = np.where(ok, inv, 0.0)
            r, slope = self._robust(d, None if scale is None else scale[k, None])
            if slope is not None:
                b *= slope
            if weights is not None:
                w = weights[k, cols]
                r = r * w
                b *= w
            dot = np.einsum("kcn,kjcn->kjn", grad0, P[:, 1:, 1:])
            J = (P[:, 1:, 0] - a[:, None] * dot) * b[:, None]
            c[k] += np.einsum("kn,kn->k", r, r)
            H[k] += J @ np.swapaxes(J, 1, 2)
            g[k] += (J @ r[..., None])[..., 0]
        return c, H, g


def rotation_grid(n: int) -> np.ndarray:
    """``n`` rotations spread evenly over SO(3) (super-Fibonacci spirals, Alexa 2022).

    Deterministic: the same ``n`` gives the same grid. Returns ``(n, 3, 3)``.
    """
    n = check_positive_int("n", n)
    s = np.arange(n) + 0.5
    r, rr = np.sqrt(s / n), np.sqrt(1.0 - s / n)
    a = 2.0 * np.pi * s / np.sqrt(2.0)
    b = 2.0 * np.pi * s / 1.533751168755204288118041
    x, y, z, w = r * np.sin(a), r * np.cos(a), rr * np.sin(b), rr * np.cos(b)
    return np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                     2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                     2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
                    axis=1).reshape(n, 3, 3)


def fibonacci_sphere(n: int) -> np.ndarray:
    """``n`` unit vectors ``(n, 3)`` spread evenly over the sphere (Fibonacci lattice).

    Deterministic: the same ``n`` gives the same directions.

    Examples
    --------
    >>> bool(np.allclose(np.linalg.norm(fibonacci_sphere(50), axis=1), 1.0))
    True
    """
    n = check_positive_int("n", n)
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    r = np.sqrt(1.0 - z * z)
    phi = np.pi * (1.0 + np.sqrt(5.0)) * i
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def _rotation_blocks(Phi):
    r"""``P (4, 16, 9)``: for a fixed translation the tensor is linear in ``vec R``,
    :math:`f = (P_0 + \sum_j t_j P_j) \operatorname{vec} R`, because
    :math:`\operatorname{vec}([t]_\times R) = ([t]_\times \otimes I) \operatorname{vec} R`."""
    eye = np.eye(3)
    return np.stack([Phi[:, :9]] + [Phi[:, 9:] @ np.kron(skew(eye[j]), eye) for j in range(3)])


#: Generators of so(3): the rows of ``vec(R) @ _SO3_TANGENT`` (reshaped (3, 9)) are
#: ``vec(R [e_a]x)``, the derivatives of ``vec(R exp([w]x))`` at ``w = 0`` (row-major vec).
_SO3_TANGENT = np.stack([np.kron(np.eye(3), skew(e)) for e in np.eye(3)], axis=1).reshape(9, 27)


def _descend_on_rotations(L, R, iterations):
    r"""Batched Levenberg--Marquardt on SO(3) for :math:`\|L_k^\top \operatorname{vec}(R)\|^2
    = \operatorname{vec}(R)^\top H_k \operatorname{vec}(R)` (``L (K, 9, 9)`` a square root of
    ``H``), from ``R (K, 3, 3)``; returns the rotations.

    The steps are rotation vectors on the right, :math:`R \leftarrow R \exp([w]_\times)`.
    With numba they run in one compiled loop per rotation (:func:`_nb_descend`), where the
    batched steps spend most of their time in the overhead of their 3 x 3 and 9 x 9 array
    operations; each rotation takes all ``iterations`` steps (the batched loop stops early
    only when every rotation fails a step at a damping past 1e6 in the same iteration, ten
    failed steps in a row from 1e-3).
    """
    K = len(R)
    kernels = _jit.select_kernels("auto", _compiled, "rotations_for_translations")
    if kernels is not None:  # the same steps, one compiled loop per rotation
        R = np.array(R, dtype=float)
        kernels[5](np.ascontiguousarray(L, dtype=float), _SO3_TANGENT, R, iterations)
        return R

    def residuals(state):
        return (np.swapaxes(L, 1, 2) @ state[0].reshape(K, 9, 1))[..., 0], state

    def jacobian(state, r):
        return (state[0].reshape(K, 9) @ _SO3_TANGENT).reshape(K, 3, 9) @ L

    def retract(state, d):
        return (state[0] @ matrix_from_rvec(d),)

    (R,), _, _ = batch_levenberg_marquardt(residuals, jacobian, retract,
                                           (np.array(R, dtype=float),),
                                           iterations=iterations, rel_tol=0.0)
    return R


def rotations_for_translations(Phi, M, t, *, iterations: int = 8):
    r"""For each fixed translation, the rotations of least algebraic error (Theorem 1).

    With ``t`` fixed, :math:`f = P(t) \operatorname{vec} R` is linear in the 9 entries of
    :math:`R` (:func:`_rotation_blocks`); the least eigenvector :math:`r` of
    :math:`H = P(t)^\top M P(t)` (9 x 9) is projected on SO(3), from both signs of :math:`r`
    (the eigenvector's sign is arbitrary, and the two projections differ):

    .. math:: r = U \Sigma V^\top \mapsto R_\pm = U \operatorname{diag}(\pm 1, \pm 1,
              \det U V^\top) V^\top ,

    and each projection descends on SO(3) to a minimum of
    :math:`\operatorname{vec}(R)^\top H \operatorname{vec}(R)` (:func:`_descend_on_rotations`).
    The projection alone is no such minimum when :math:`H` has several small eigenvalues
    (the pose of a pushbroom pair leaves part of :math:`\operatorname{vec} R` unobserved, as
    does a nearly central camera): at the true translation of sweep scenes it came out 16 to
    176 degrees from the true rotation, where the constrained minimum was 0.1 to 2 degrees
    off, so that no start of the grid lay in the basin of the maximum-likelihood pose.

    Unlike the elimination of ``t`` for a fixed rotation, a fixed translation cannot shrink
    towards the near-degenerate tensors of ``t`` near 0 (whose algebraic error is small
    without their Sampson distances being small), so a grid of translations gives starts in
    the basin of the maximum-likelihood pose where a grid of rotations does not.

    Parameters
    ----------
    Phi : (16, 18) ndarray
        :func:`tensor_map` in the coordinates of ``M``.
    M : (16, 16) ndarray
        ``D^T D`` of the design matrix of the correspondences (Theorem 1's relation).
    t : (K, 3) ndarray
    iterations : int
        Steps of the descent on SO(3) (0: the projections as they are).

    Returns
    -------
    R : (2K, 3, 3) ndarray
        Blocks of K: from ``r`` and from ``-r``.
    """
    P = _rotation_blocks(Phi)
    # Q[a, b] = P_a^T M P_b (4, 4, 9, 9) and H = sum_ab tau_a tau_b Q[a, b], as matrix
    # products (the three-operand einsums took 1.2 ms for 480 translations).
    Q = (P.transpose(0, 2, 1).reshape(36, 16) @ (M @ P).transpose(1, 0, 2).reshape(16, 36))
    Q = Q.reshape(4, 9, 4, 9).transpose(0, 2, 1, 3)
    tau = np.concatenate([np.ones((len(t), 1)), t], axis=1)
    H = ((tau[:, :, None] * tau[:, None, :]).reshape(len(t), 16)
         @ np.ascontiguousarray(Q).reshape(16, 81)).reshape(-1, 9, 9)
    w, V = np.linalg.eigh(H)
    r = V[:, :, 0].reshape(-1, 3, 3)
    U, _, Vt = np.linalg.svd(r)
    det = np.linalg.det(U @ Vt)
    plus = np.stack([np.ones_like(det), np.ones_like(det), det], axis=1)
    minus = plus * np.array([-1.0, -1.0, 1.0])
    R = np.concatenate([(U * plus[:, None, :]) @ Vt, (U * minus[:, None, :]) @ Vt])
    # The rotation constraint also keeps the descent away from r = t w^T, which [t]x R
    # does not see (the reason the unconstrained problem needed a second solve with the
    # rows of R orthogonal to t).
    if not iterations:
        return R
    L = V * np.sqrt(np.maximum(w, 0.0))[:, None, :]  # H = L L^T
    return _descend_on_rotations(np.concatenate([L, L]), R, iterations)


#: Lengths of :func:`translation_grid`, in units of the reference length.
LENGTH_FACTORS = (1 / 8, 1 / 2, 2.0, 8.0, 32.0)


def translation_grid(reference: float, n_directions: int = 64,
                     factors=LENGTH_FACTORS) -> np.ndarray:
    """Translations ``(n_directions * len(factors), 3)``: :func:`fibonacci_sphere` directions
    at lengths ``reference * factors`` (the Sampson fits converge from a length within about
    a factor of 2 of the right one and a direction within about 15 degrees)."""
    dirs = fibonacci_sphere(n_directions)
    return (dirs[None] * (reference * np.asarray(factors, float))[:, None, None]).reshape(-1, 3)


def _reference_length(intrinsics1, intrinsics2, origins1=None, origins2=None) -> float:
    """The metric length that sets the scale of the translation grid.

    A pushbroom camera measures lengths along its flight line through its speed, so the
    strip it images has a known length: the extent (10-90% quantiles) of the origins
    ``(n, 3)`` of the rays of the correspondences, which lie on that line. That extent, the
    mean over the pushbroom cameras, is the reference when there is one: the baseline is
    comparable with it: 0.15-4.3 times it on 165 pushbroom and mixed scenes of
    :func:`xslit.synthetic.random_sweep_scene`, where it was 0.08-476 times the slit
    distance of a mixed pair's two-slit camera, and a pushbroom pair's baseline 0.14-79
    units (the grid spans a factor of 256). Otherwise the mean slit distance of the
    two-slit cameras.
    """
    ext = []
    for intr, o in ((intrinsics1, origins1), (intrinsics2, origins2)):
        if isinstance(intr, PushbroomIntrinsics) and o is not None and len(o):
            q = np.quantile(o, [0.1, 0.9], axis=0)
            ext.append(float(np.linalg.norm(q[1] - q[0])))
    if ext and max(ext) > 0:
        return float(np.mean(ext))
    ds = [abs(i.d) for i in (intrinsics1, intrinsics2) if isinstance(i, TwoSlitIntrinsics)]
    return float(np.mean(ds)) if ds else 1.0


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

    ``t`` minimises the Rayleigh quotient of Theorem 1's relation (:func:`_eliminate_translation`); the
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


def _row_medians(x):
    """``np.median(x, axis=1)`` of a ``(K, n)`` array of non-negative numbers (NaN allowed),
    by sorting the rows: numpy's median partitions each row, which takes fifteen times as
    long on the ``(960, 64)`` distances of the translation grid's starts; the middle values
    and their mean are the same numbers."""
    n = x.shape[1]
    if not n:
        return np.median(x, axis=1)
    x = np.sort(x, axis=1)
    h = n // 2
    middle = x[:, h] if n % 2 else (x[:, h - 1] + x[:, h]) / 2
    return np.where(np.isnan(x[:, -1]), np.nan, middle)  # NaN sorts last, as numpy's median


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


def _polish_rotations(Phi, M, U, R, iterations):
    """Batched Levenberg--Marquardt on the rotation alone (``t`` eliminated)."""
    h = 1e-6
    turns = [matrix_from_rvec(k * h) for k in np.eye(3)]
    Mp = M if M.ndim == 2 else np.concatenate([M] * 3)
    Up = U if U.ndim == 2 else np.concatenate([U] * 3)

    def residuals(state):
        r, t = _algebraic(Phi, M, U, state[0])
        return r, (state[0], t)

    def jacobian(state, r):  # forward differences along the three axes
        Rp = np.concatenate([turn @ state[0] for turn in turns])
        return ((_algebraic(Phi, Mp, Up, Rp)[0].reshape(3, *r.shape) - r) / h).transpose(1, 0, 2)

    def retract(state, steps):
        return matrix_from_rvec(steps) @ state[0], state[1]

    (R, t), _, cost = batch_levenberg_marquardt(residuals, jacobian, retract, (R,),
                                                iterations=iterations, rel_tol=1e-12)
    return R, t, cost


def search_rotations(Phi, points1, points2, *, subsets=None, rays=None,
                     n_rotations: int = 1000, n_starts: int = 4, separation_deg: float = 25.0,
                     iterations: int = 10):
    """Global search of the rotation on the algebraic error of Theorem 1's relation, ``t`` eliminated.

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
        d = SampsonRows(points1[sample], points2[sample]).distances(f)
        cost = _row_medians(np.minimum(d, SAMPSON_CLIP))
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


def refine_pose_sampson(sampson, R, t, weights=None, *, iterations: int = 30, scale=None,
                        rel_tol: float = 1e-6):
    r"""Levenberg--Marquardt on 6 pose parameters minimising signed Sampson distances, batched.

    Least squares of the Sampson distances :math:`d_i`, or with ``scale`` :math:`s` the
    Cauchy loss

    .. math:: \sum_i w_i^2\, s^2 \log\left(1 + d_i^2 / s^2\right),

    as least squares of the signed roots :math:`\operatorname{sign}(d_i)\, s
    \sqrt{\log(1 + d_i^2 / s^2)}`, so that correspondences far from the pose's tensor pull
    little (outliers among a start's correspondences). The steps use the analytic
    derivatives of :class:`PoseSampson`, reduced block by block to the normal equations,
    which come with the cost of each trial step
    (:func:`xslit.sfm.lm.batch_levenberg_marquardt_normal` with ``fused``: one evaluation of
    the residuals per step instead of two); a start leaves the batch when it
    has converged. With the compiled kernels of ``sampson`` (numba), the same steps and
    acceptance run in one compiled loop per start (:func:`_nb_refine`): the batched loop
    spends about as long in the overhead of its small array operations as in the normal
    equations themselves (the fits of :func:`relative_pose` take 40 to 60 poses on 64
    correspondences, or a few on 300).

    Parameters
    ----------
    sampson : PoseSampson
        The correspondences (and ``Phi``, in pixels), shared by the starts or one set per
        start (:meth:`PoseSampson.subsets`).
    R : (K, 3, 3), t : (K, 3)
        Starting poses.
    weights : (K, n) ndarray, optional
        Per-start weights of the residuals (e.g. 0/1 inlier masks).
    iterations : int
    scale : (K,) array_like or float, optional
        Cauchy scale in pixels per start; least squares when omitted.
    rel_tol : float
        A start has converged when a step lowers its cost by less than this fraction.

    Returns
    -------
    R : (K, 3, 3), t : (K, 3), rms : (K,)
        Root of the mean cost per (weighted) correspondence, in pixels: the weighted RMS
        Sampson distance for least squares.

    Raises
    ------
    ValueError
        When the shapes do not match (naming the argument).
    """
    if not isinstance(sampson, PoseSampson):
        raise ValueError(f"sampson must be a PoseSampson, got {type(sampson).__name__}")
    # Shapes only: a start that is not finite stays in the batch and loses the comparisons.
    R = check_array("R", R)
    K = len(R)
    R = check_matrix("R", R, (K, 3, 3), finite=False)
    t = check_matrix("t", t, (K, 3), finite=False)
    n = len(sampson)
    if sampson.points1.ndim == 3 and len(sampson.points1) != K:
        raise ValueError(f"sampson must hold correspondences for {K} starts, got "
                         f"{len(sampson.points1)}")
    if weights is not None:
        weights = check_matrix("weights", weights, (K, n), finite=False)
    iterations = check_positive_int("iterations", iterations, minimum=0)
    if scale is not None:
        scale = np.array(np.broadcast_to(np.asarray(scale, dtype=float), (K,)))
        if not np.all(scale > 0):
            raise ValueError(f"scale must be positive, got {scale}")

    count = n if weights is None else np.maximum(np.sum(weights * weights, axis=1), 1.0)
    if sampson.kernels is not None:  # the same steps, one compiled loop per start
        R, t, cost = np.array(R, dtype=float), np.array(t, dtype=float), np.empty(K)
        p1, p2, _, W, s = sampson._kernel_args(np.zeros((0, 7, 16)), weights, scale)
        sampson.kernels[4](p1, p2, sampson._basis, R, t, W, s, iterations, float(rel_tol),
                           1e-3, cost)
        return R, t, np.sqrt(cost / count)

    def part(k):
        """The evaluator and the arguments of the starts ``k``."""
        ev = sampson if sampson.points1.ndim == 2 or len(k) == K else sampson.poses(k)
        return ev, {"weights": None if weights is None else weights[k],
                    "scale": None if scale is None else scale[k]}

    def fused(state, k):
        ev, kw = part(k)
        return ev.cost_and_normal_equations(*state, **kw)

    def retract(state, d):
        return matrix_from_rvec(d[:, :3]) @ state[0], state[1] + d[:, 3:]

    (R, t), cost = batch_levenberg_marquardt_normal(None, None, retract, (R, t),
                                                    iterations=iterations, rel_tol=rel_tol,
                                                    fused=fused)
    return R, t, np.sqrt(cost / count)


@dataclass
class CalibratedPose:
    """Result of :func:`relative_pose`: the best pose and the other distinct local minima.

    ``alternatives`` holds the other basins the search refined, best first, as tuples
    ``(R, t, inliers, score)``; ``score`` is the MSAC cost of :func:`relative_pose`.
    """

    R: np.ndarray  # (3, 3), X_cam2 = R X_cam1 + t
    t: np.ndarray  # (3,), metric
    inliers: np.ndarray  # (N,) bool, Sampson distance to the pose's tensor <= threshold
    rms: float  # RMS Sampson distance over the inliers, pixels
    candidates: int  # starts of the Sampson fits (rotation grid and translation grid)
    score: float = np.inf  # MSAC cost over all N, pixels^2
    alternatives: list = field(default_factory=list)
    reference: float = np.nan  # the translation grid's reference length (_reference_length)


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


def _distinct_poses(R, t, order, max_count, separation_deg, translation_tol):
    """Greedy non-maximum suppression of poses: indices in ``order`` whose rotation differs
    from every kept one by more than ``separation_deg`` or whose translation differs by more
    than ``translation_tol`` times the longer one (poses with a non-finite translation are
    left out)."""
    cos_sep = np.cos(np.radians(separation_deg))
    Rv = np.asarray(R).reshape(-1, 9)
    t = np.asarray(t)
    order = np.asarray(order, dtype=int).reshape(-1)
    order = order[np.isfinite(t[order]).all(axis=1)]
    norms = np.linalg.norm(t, axis=1)

    def close(a, b):
        """``(len(a), len(b))``: the poses ``a`` and ``b`` are too close to both be kept."""
        cos = (Rv[a] @ Rv[b].T - 1) / 2
        dt = np.linalg.norm(t[a][:, None] - t[b][None], axis=2)
        return (cos >= cos_sep) & (dt <= translation_tol * np.maximum(norms[a][:, None],
                                                                      norms[b][None]))

    keep, c0, size = [], 0, 32
    while c0 < len(order):  # in growing chunks: pairwise tests of a chunk at once
        chunk, c0, size = order[c0:c0 + size], c0 + size, min(2 * size, 512)
        gone = close(chunk, keep).any(axis=1) if keep else np.zeros(len(chunk), bool)
        among = close(chunk, chunk)
        for i, k in enumerate(chunk):
            if gone[i]:
                continue
            keep.append(int(k))
            if len(keep) == max_count:
                return keep
            gone |= among[i]
    return keep


def relative_pose(points1, points2, intrinsics1, intrinsics2, inliers=None, *,
                  threshold: float = 1.5, rng=None, n_rotations: int = 0,
                  n_directions: int = 96, n_subsets: int = 4, n_starts: int = 48,
                  n_candidates: int = 8, lo_iterations: int = 8,
                  retry: bool = True) -> CalibratedPose:
    r"""Metric relative pose of two calibrated cameras from correspondences (module text).

    Starts come from two grids: rotations with the translation eliminated
    (:func:`search_rotations`) and translations with the rotation solved linearly
    (:func:`rotations_for_translations`, which cannot fall into the near-degenerate tensors of
    a vanishing translation). Every start is ranked, and after a few Sampson steps every
    candidate is compared, by the truncated quadratic (MSAC) cost of its Sampson distances
    :math:`d_i` in pixels, the first-order approximation of the reprojection error that
    maximum likelihood minimises,

    .. math:: C = \sum_i \min(d_i^2, \tau^2)\quad
              (d_i = \infty \text{ behind a camera}),

    and several distinct basins are fitted to their inliers before one is chosen; the others
    are returned as ``alternatives``.

    Parameters
    ----------
    points1, points2 : (N, 2) array_like
        Pixels.
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
    inliers : (N,) or (N, 1) array_like, optional
        Correspondences to start from (non-zero; e.g. the mask of ``findEpipolarTensor``); all
        when omitted. The returned inliers are re-selected on the exact model from all N.
    threshold : float
        Sampson distance :math:`\tau` (pixels) below which a correspondence is an inlier.
    rng : None, int or numpy.random.Generator
        For the random subsets of the search and of the local optimisation; ``None`` means
        the fixed seed 0 (deterministic).
    n_rotations : int
        Size of the rotation grid (:func:`search_rotations`); 0 (the default) leaves it to
        the retry: its starts, polished on the algebraic error, fall into the near-degenerate
        tensors of a vanishing translation on nearly central slits.
    n_directions : int
        Directions of the translation grid (:func:`translation_grid`, at five lengths around
        the reference length of :func:`_reference_length`).
    n_subsets : int
        The rotation search also runs on this many random quarters of the starting
        correspondences, so that a few outliers absorbed by a linear tensor cannot steer it.
    n_starts : int
        Distinct starts kept from the translation grid, the same number at each length.
    n_candidates : int
        Distinct candidates fitted to their inliers and compared.
    lo_iterations : int
        Subsets per round of the local optimisation.
    retry : bool
        When no pose is found or the pose explains fewer than 90% of the starting
        correspondences (which a tensor explained; a pose in the right basin explains nearly
        all of them, less only the outliers the tensor absorbed: a pushbroom scene's wrong
        basin, 26 degrees off, explained 82%), or when its translation is longer than the
        grid's longest length (``max(LENGTH_FACTORS)`` times the reference: a pose sliding
        towards an infinite translation, where a pushbroom pair's tensor tends to a limit
        that fits nearly as well as the maximum-likelihood pose, 40 degrees off on a fore/aft
        pair), search once more with four times the directions, twice the subsets and
        starts, and the rotation grid (at least 1,000 rotations), and keep the better
        pose.

    Returns
    -------
    CalibratedPose

    Raises
    ------
    ValueError
        On malformed input (naming the argument), when fewer than 12 correspondences remain,
        or when no pose explains them.
    """
    points1 = check_image_points("points1", points1)
    points2 = check_image_points("points2", points2)
    if len(points1) != len(points2):
        raise ValueError(f"points1 and points2 must have the same number of points, got "
                         f"{len(points1)} and {len(points2)}")
    threshold = check_threshold("threshold", threshold)
    rng = np.random.default_rng(0) if rng is None else check_rng(rng)
    _check_intrinsics(intrinsics1, intrinsics2)
    n_rotations = check_positive_int("n_rotations", n_rotations, minimum=0)
    n_directions = check_positive_int("n_directions", n_directions)
    n_subsets = check_positive_int("n_subsets", n_subsets, minimum=0)
    n_starts = check_positive_int("n_starts", n_starts)
    n_candidates = check_positive_int("n_candidates", n_candidates)
    lo_iterations = check_positive_int("lo_iterations", lo_iterations)
    if not isinstance(retry, (bool, np.bool_)):
        raise ValueError(f"retry must be True or False, got {retry!r}")
    start = check_mask("inliers", inliers, len(points1))
    if start.sum() < 12:
        raise ValueError(f"inliers: a calibrated pose needs at least 12 correspondences, got "
                         f"{int(start.sum())}")
    args = (points1, points2, intrinsics1, intrinsics2, start, threshold, rng)
    try:
        pose = _search_pose(*args, n_rotations, n_directions, n_subsets, n_starts,
                            n_candidates, lo_iterations)
    except ValueError:
        if not retry:
            raise
        pose = None
    if retry and (pose is None or np.count_nonzero(pose.inliers & start) < 0.9 * start.sum()
                  or np.linalg.norm(pose.t) > max(LENGTH_FACTORS) * pose.reference):
        again = _search_pose(*args, max(4 * n_rotations, 1000), 4 * n_directions,
                             2 * n_subsets, 2 * n_starts, 2 * n_candidates, lo_iterations)
        if pose is None or again.score < pose.score:
            return again
    return pose


def _search_pose(points1, points2, intrinsics1, intrinsics2, start, threshold, rng,
                 n_rotations, n_directions, n_subsets, n_starts, n_candidates, lo_iterations):
    """One search of :func:`relative_pose` with the given sizes."""
    n = len(points1)
    idx = np.flatnonzero(start)
    q1, q2 = points1[idx], points2[idx]
    cols = np.stack([q1[:, 0], q1[:, 1], q2[:, 0], q2[:, 1]])
    T = axis_normalization(cols)  # per axis, as the linear solver
    Ts = list(T)
    normed = T[:, 0, 0, None] * cols + T[:, 0, 1, None]
    n1, n2 = normed[:2].T.copy(), normed[2:].T.copy()
    Phi_n = tensor_map(intrinsics1, intrinsics2, Ts)
    quarter = max(12, len(idx) // 4)
    subsets = [np.arange(len(idx))]
    if len(idx) >= 2 * quarter:
        subsets += [rng.choice(len(idx), quarter, replace=False) for _ in range(n_subsets)]
    cam1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
    cam2 = compose_camera(intrinsics2, np.zeros(3), np.zeros(3))
    rays = (cam1.rays(points1), cam2.rays(points2))
    if n_rotations:
        Ra, ta, _ = search_rotations(Phi_n, n1, n2, subsets=subsets,
                                     rays=(rays[0][idx], rays[1][idx]),
                                     n_rotations=n_rotations)
        keep = _distinct_poses(Ra, ta, range(len(Ra)), len(Ra), 5.0, 0.5)
    else:
        Ra, ta, keep = np.zeros((0, 3, 3)), np.zeros((0, 3)), []
    # Sampson distances in pixels: the tensor of the pixels is F_n contracted with the Ts.
    Phi = kron_modes(*Ts).T @ Phi_n
    sampson = PoseSampson(Phi, points1, points2, rays)
    # Translation grid: starts ranked by MSAC on a sample of the starting correspondences.
    M, _ = _whitening(n1, n2)
    reference = _reference_length(intrinsics1, intrinsics2, rays[0][idx, :3], rays[1][idx, :3])
    tg = translation_grid(reference, n_directions)
    Rb = rotations_for_translations(Phi_n, M, tg)
    tb = np.concatenate([tg] * (len(Rb) // len(tg)))
    sample = sampson.subset(idx[:: max(1, len(idx) // 64)])
    # Far from the bottom of their basins, the starts' Sampson distances all exceed a small
    # threshold; the truncation is then raised to the typical median distance of the best
    # tenth of the starts, so that the ranking still tells them apart.
    med = _row_medians(np.abs(sample.distances(Rb, tb)))
    sb, _ = sample.score(Rb, tb, max(threshold, float(np.quantile(med, 0.1))))
    # The best starts of each length of the grid: ranked together, the lengths far from the
    # true one can take every place (long baselines tend to degenerate tensors that fit a
    # little everywhere, as short ones do), and the starts of the right length, whose
    # rotation is a few degrees off, come after them.
    level = np.arange(len(tb)) % len(tg) // n_directions  # translation_grid's layout
    n_levels = len(tg) // n_directions
    kb = []
    for j in range(n_levels):
        same = np.flatnonzero(level == j)
        same = same[np.argsort(sb[same], kind="stable")]
        kb += [k for k in _distinct_poses(Rb, tb, same, -(-n_starts // n_levels), 10.0, 0.5)
               if np.isfinite(sb[k])]
    Rs, ts = np.concatenate([Ra[keep], Rb[kb]]), np.concatenate([ta[keep], tb[kb]])
    n_starts_total = len(Rs)
    # Steps on the starting correspondences bring each start near the bottom of its basin
    # (the algebraic optimum can be far off in the weakly observed scale); then every
    # candidate is scored on all points (MSAC) and the best distinct few are fitted to their
    # inliers and compared again. The starting correspondences hold the outliers a linear
    # tensor absorbed, up to hundreds of pixels from the true pose's tensor: in least
    # squares they outweigh the inliers and move the minimum to another basin. The fit is
    # robust (Cauchy loss), its scale brought down from each start's median distance to the
    # threshold as the start nears its basin. Starts that reach the pose of a better one
    # (within 0.5 degrees and 5% of the translation: one basin) go no further: about a quarter
    # of them after the first steps on the scenes of tools/bench_relative_pose.py.
    few = sampson.subset(idx[:: max(1, len(idx) // 64)])  # about 64: enough for the basin
    for j in range(3):
        scale = _row_medians(np.abs(few.distances(Rs, ts)))
        if j:
            keep = _distinct_poses(Rs, ts, np.argsort(scale, kind="stable"), len(Rs), 0.5,
                                   0.05)
            Rs, ts, scale = Rs[np.sort(keep)], ts[np.sort(keep)], scale[np.sort(keep)]
        Rs, ts, _ = refine_pose_sampson(few, Rs, ts, iterations=8,
                                        scale=np.maximum(scale, threshold))
    scores, inls = sampson.score(Rs, ts, threshold)
    # Candidates at least 3 degrees or 20% of the translation apart: starts still sliding
    # down one basin would otherwise take every place.
    ranked = [k for k in np.argsort(scores, kind="stable") if np.isfinite(scores[k])]
    best = _distinct_poses(Rs, ts, ranked, n_candidates, 3.0, 0.2)
    # A weakly observed translation length can make a family of poses, one rotation with
    # lengths from the grid's shortest to many times its longest, that fits nearly as well as
    # the maximum-likelihood pose (t -> 0 on nearly central slits; t -> infinity on a pushbroom
    # pair, whose tensor then tends to a limit that depends only on R and the direction of t).
    # Distinct by their lengths, its members can take every place; the best start of each
    # other rotation (10 degrees apart) is a candidate too, so that the basin of the
    # maximum-likelihood pose, whose starts are fewer and further from its bottom, is fitted.
    best += [k for k in _distinct(Rs, ranked, n_candidates // 2, 10.0) if k not in best]
    if not best:
        raise ValueError("no metric pose explains the correspondences with these intrinsics")
    # Each candidate is fitted to its inliers, or to the starting correspondences while it
    # has too few (a start still far from the bottom of its basin for a small threshold).
    # The comparison needs each basin's bottom, not its precise optimum: the fits use about
    # 300 of the correspondences and stop at a relative decrease of 1e-4 (the best candidate
    # is refitted to all its inliers below).
    # A candidate a few degrees from the bottom of its basin gains inliers with each fit; the
    # fits to the re-selected inliers go on while its cost falls (a pushbroom pair's
    # candidate 6 degrees off needed four rounds to reach the bottom, 0.1 degrees off).
    part = np.arange(n)[:: max(1, n // 300)]
    Rs, ts, scores, inls = Rs[best], ts[best], np.full(len(best), np.inf), inls[best]
    active = np.arange(len(best))
    for _ in range(FIT_ROUNDS):
        weights = np.where(inls[active].sum(axis=1, keepdims=True) >= 12, inls[active],
                           start[None])
        cols = part if np.all(weights[:, part].sum(axis=1) >= 12) else np.arange(n)
        cols = cols[weights[:, cols].any(axis=0)]  # the rest weigh nothing
        Ra, ta, _ = refine_pose_sampson(sampson.subset(cols), Rs[active], ts[active],
                                        weights[:, cols].astype(float), iterations=12,
                                        rel_tol=1e-4)
        sa, ia = sampson.score(Ra, ta, threshold)
        falling = ~(sa >= scores[active] * (1.0 - FIT_PROGRESS))
        Rs[active], ts[active], scores[active], inls[active] = Ra, ta, sa, ia
        # A candidate that reached a better one (within 0.1 degrees and 1%, where the
        # comparison below takes them for one) is that basin again: it leaves the comparison.
        kept = _distinct_poses(Rs, ts, np.argsort(scores, kind="stable"), len(Rs), 0.1, 0.01)
        twins = np.setdiff1d(np.arange(len(Rs)), kept)
        scores[twins] = np.inf
        active = np.setdiff1d(active[falling & np.isfinite(sa)], twins)
        if not len(active):
            break
    order = _distinct_poses(Rs, ts, np.argsort(scores, kind="stable"), len(Rs), 0.1, 0.01)
    order = [k for k in order if np.isfinite(scores[k]) and inls[k].any()]
    if not order:
        raise ValueError("no metric pose explains the correspondences with these intrinsics")
    k = order[0]
    R, t, score, inl = Rs[k], ts[k], scores[k], inls[k]
    for _ in range(3):  # local optimisation in the exact model
        R, t, score, inl, improved = _local_optimisation(sampson, R, t, score, inl,
                                                         threshold, rng, lo_iterations)
        if not improved:
            break
    R, t, score, inl = _annealed_refits(sampson, R, t, score, inl, threshold)
    if not inl.any():
        raise ValueError("no metric pose explains the correspondences with these intrinsics")
    rms = float(np.sqrt(np.mean(sampson.subset(inl).distances(R[None], t[None]) ** 2)))
    others = [(Rs[j], ts[j], inls[j], float(scores[j])) for j in order[1:]]
    others = [o for o in others if _distinct_poses(np.stack([R, o[0]]), np.stack([t, o[1]]),
                                                   [0, 1], 2, 0.1, 0.01) == [0, 1]]
    return CalibratedPose(R, t, inl, rms, n_starts_total, float(score), others, reference)


FIT_ROUNDS = 8
FIT_PROGRESS = 0.01


def _local_optimisation(sampson, R, t, score, inl, threshold, rng, n_subsets):
    """One round: poses fitted to random quarters of the inliers, scored by MSAC on all
    points; the best one, if better, is re-fitted to its inliers until they are stable.

    Not :mod:`xslit.robust`'s local optimisation: its inner samples are disjoint chunks of
    permutations and its refits are kept whatever their loss (the annealed least squares),
    where these refits are kept only while they lower the loss; they share the MSAC loss
    (:func:`xslit.robust.msac_loss`, through :meth:`PoseSampson.score`).
    """
    idx = np.flatnonzero(inl)
    size = max(12, len(idx) // 4)
    improved = False
    if len(idx) > 2 * size:
        subsets = np.stack([rng.choice(idx, size, replace=False) for _ in range(n_subsets)])
        Rk, tk, _ = refine_pose_sampson(sampson.subsets(subsets),
                                        np.repeat(R[None], n_subsets, 0),
                                        np.repeat(t[None], n_subsets, 0), iterations=15)
        sk, ik = sampson.score(Rk, tk, threshold)
        k = int(np.argmin(sk))
        if sk[k] < score:
            R, t, score, inl, improved = Rk[k], tk[k], sk[k], ik[k], True
    for _ in range(5):  # re-fit to all inliers (a quarter of them is noisier)
        Rf, tf, _ = refine_pose_sampson(sampson.subset(inl), R[None], t[None])
        sf, inf = sampson.score(Rf, tf, threshold)
        if not sf[0] < score:
            break
        R, t, score = Rf[0], tf[0], sf[0]
        if np.array_equal(inf[0], inl):
            break
        inl = inf[0]
    return R, t, score, inl, improved


#: Thresholds, in units of the inlier threshold, of the annealed refits
#: (:func:`_annealed_refits`).
ANNEAL_FACTORS = (2.0, 3.0, 5.0)
#: Refits to the re-selected inliers of each annealed start, kept while its cost falls.
ANNEAL_ROUNDS = 3
#: Levenberg--Marquardt steps of each annealed refit.
ANNEAL_ITERATIONS = 8


def _annealed_refits(sampson, R, t, score, inl, threshold):
    r"""Leave a fixed point of the inlier re-selection: refits to the correspondences within
    :data:`ANNEAL_FACTORS` times the threshold, then to their re-selected inliers while the
    truncated cost falls; the one of lowest cost when it is lower than the start's by more
    than noise in the pose explains.

    Fitting a pose to its inliers and re-selecting them stops at a fixed point of the
    truncated (MSAC) cost, not at its minimum: a correspondence a little beyond the
    threshold never enters the least-squares fit that would bring it in, and a pose that is
    weakly observed in some direction (a scale on nearly central slits, a rotation on few
    correspondences) keeps the inlier set it started with. Where the data barely decide, a
    few correspondences more or less move the pose by degrees: on a sweep scene of 85
    correspondences (69% outliers) the fixed point left out four true inliers 1.5-4 thresholds
    away and was 1.6 degrees off with a cost 6% above that of maximum likelihood from the
    truth; the refit from twice the threshold reaches that minimum (0.17 degrees off). The
    annealed starts are fitted together (:func:`refine_pose_sampson` on 0/1 weights).

    Returns
    -------
    R : (3, 3), t : (3,), score : float, inliers : (N,) bool
        The start when no annealed refit lowers its cost.
    """
    d = np.abs(sampson.distances(R[None], t[None])[0])
    W = np.stack([d <= f * threshold for f in ANNEAL_FACTORS])
    keep = [k for k in range(len(W)) if W[k].sum() >= 12 and not np.array_equal(W[k], inl)
            and (k == 0 or not np.array_equal(W[k], W[k - 1]))]
    if not keep:
        return R, t, score, inl
    W = W[keep]
    Rk, tk = np.repeat(R[None], len(W), 0), np.repeat(t[None], len(W), 0)
    sk = np.full(len(W), np.inf)
    active = np.arange(len(W))
    for _ in range(ANNEAL_ROUNDS):
        cols = np.flatnonzero(W[active].any(axis=0))
        Ra, ta, _ = refine_pose_sampson(sampson.subset(cols), Rk[active], tk[active],
                                        W[active][:, cols].astype(float),
                                        iterations=ANNEAL_ITERATIONS)
        sa, ia = sampson.score(Ra, ta, threshold)
        better = sa < sk[active]
        gained = active[better]
        Rk[gained], tk[gained], sk[gained], W[gained] = (Ra[better], ta[better], sa[better],
                                                         ia[better])
        active = gained[W[gained].sum(axis=1) >= 12]
        if not len(active):
            break
    # Only a cost lower by more than noise in the pose explains (the level by which
    # calibrated_two_view tells basins apart) replaces the start: among fixed points whose
    # costs differ by less, the refits chase the few correspondences near the threshold (on
    # 300 sweep scenes, poses 1.5-3x further from the truth than maximum likelihood from it,
    # at costs 0.01-4 px^2 lower), while the start's inliers are the tensor's.
    k = int(np.argmin(sk))
    if not sk[k] < score:
        return R, t, score, inl
    rms2 = float(np.mean(sampson.subset(inl).distances(R[None], t[None]) ** 2))
    if sk[k] < score - _chi2_quantile(AMBIGUITY_LEVEL, 6) * rms2:
        return Rk[k], tk[k], float(sk[k]), W[k]
    return R, t, score, inl


#: Probability of the chi-square quantile that decides "ambiguous": two distinct
#: maximum-likelihood basins whose costs differ by less than this quantile of
#: sigma^2 chi^2(6) (the spread that noise in the 6 pose parameters explains).
AMBIGUITY_LEVEL = 0.99
#: Relative eigenvalue of the (Jacobi-scaled) pose information below which the
#: maximum-likelihood Jacobian counts as rank-deficient.
RANK_TOLERANCE = 1e-9
#: The translation length counts as undetermined when its standard deviation exceeds this
#: fraction of the length (the scale is then not told apart from zero at one sigma).
SCALE_TOLERANCE = 1.0
#: The rotation counts as undetermined when its standard deviation about some axis exceeds this
#: (radians, 5 degrees): beyond it the first-order covariance no longer describes the
#: uncertainty, and such a pose was 54 degrees off on a sweep scene whose maximum-likelihood
#: pose is determined to 0.2 degrees (a wrong basin that the correspondences barely constrain).
ROTATION_TOLERANCE = np.radians(5.0)
#: Probability of the chi-square quantile of the test that the calibrated pose fits its
#: inliers as well as an uncalibrated tensor does (:func:`_uncalibrated_gap`): beyond the
#: ``MODEL_FIT_LEVEL`` quantile of :math:`\sigma^2 \chi^2_7` (35.3) the pose is not the
#: maximum-likelihood one (a basin the search should not have returned, or intrinsics that do
#: not match the images) and the result is ``"undetermined"``. The level is high because
#: the test runs on every pose: on 300 sweep scenes a correct pose (0.02 degrees off) gave
#: 26.5, beyond the 0.999 quantile; the wrong basins measured gave 27.8 and 99.
MODEL_FIT_LEVEL = 0.99999
#: See :data:`MODEL_FIT_LEVEL`: beyond this quantile (12.0) the thorough search runs first
#: (about one correct pose in ten pays for it, in time only). A pushbroom pose 32.8 degrees
#: off gave 13.2 on its 194 inliers, where the thorough search finds the pose 0.09 degrees
#: off; the 0.99 quantile (18.5) let it through.
MODEL_FIT_RETRY = 0.9
#: Sizes of the thorough search (:func:`relative_pose`'s arguments): 16 times the directions
#: of the translation grid, 4 times the starts and candidates, and the rotation grid. On a
#: nearly central mixed scene (slit distance 0.009 of the depth, 870 inliers) whose default
#: and wider searches returned a basin 14.7 degrees off, only this size found the
#: maximum-likelihood pose (0.01 degrees off, a truncated Sampson cost lower by 245 px^2).
#: Correspondences the thorough search runs on at most (a random part of them; its pose is
#: then fitted to all): its time grows with its 4x starts and candidates times the
#: correspondences, and so do their inlier masks (a byte per start and correspondence).
THOROUGH_MAX_POINTS = 20000
THOROUGH_SEARCH = {"n_rotations": 1000, "n_directions": 1536, "n_subsets": 8,
                   "n_starts": 192, "n_candidates": 32, "retry": False}


@functools.cache
def _chi2_quantile(p: float, dof: int) -> float:
    """The ``p`` quantile of chi-square with ``dof`` degrees of freedom, computed once per
    level: twice the inverse of the regularised lower incomplete gamma function at
    ``dof / 2``, as ``scipy.stats.chi2.ppf`` computes it (the same numbers), without
    importing scipy.stats (1-2 s at the first call that needs a quantile; scipy.special,
    which the robust loop imports anyway, is enough)."""
    from scipy.special import gammaincinv  # not at import: scipy takes a second to load

    return float(2.0 * gammaincinv(dof / 2.0, p))


@dataclass
class CalibratedTwoView:
    r"""Result of :func:`calibrated_two_view`.

    ``status`` is one of

    - ``"ok"``: one maximum-likelihood basin, determined;
    - ``"ambiguous"``: another distinct basin (in ``alternatives``) has a maximum-likelihood
      cost within what noise explains (:data:`AMBIGUITY_LEVEL`), for instance the pose
      fitted without correspondences of leverage above :data:`LEVERAGE_LIMIT` that the others
      cannot verify; the pose returned is the one of lower cost, but the data cannot decide,
      and ``covariance`` covers the other;
    - ``"undetermined"``: the pose information is rank-deficient (collinear points, points
      that leave a motion unobserved), the translation length is not told apart from 0
      (slits too close together for the scene depth), the rotation's standard deviation
      exceeds :data:`ROTATION_TOLERANCE`, or the pose fits its inliers worse than an
      uncalibrated epipolar tensor by more than noise explains (:data:`MODEL_FIT_LEVEL`: the
      search missed the maximum-likelihood basin, or the intrinsics are wrong); ``R``, ``t``
      and ``covariance`` are those of the best basin, with their (large or infinite)
      uncertainty;
    - ``"failed"``: no pose explains the correspondences (``R`` and ``t`` are ``None``).

    ``reason`` says why in words. ``covariance`` is that of ``[rvec, t]`` (rotation vector of
    ``R`` in radians, translation in the units of the slit distances), ``sigma2`` the
    residual variance per coordinate, ``alternatives`` a list of ``(R, t, cost)`` of the other
    basins refined by maximum likelihood.
    """

    status: str
    reason: str
    R: np.ndarray | None  # (3, 3), X_cam2 = R X_cam1 + t
    t: np.ndarray | None  # (3,)
    inliers: np.ndarray  # (N,) bool
    points: np.ndarray | None  # (N, 4) homogeneous points in camera 1's frame
    rms: float  # reprojection RMS per coordinate over the inliers, pixels
    covariance: np.ndarray | None  # (6, 6) of [rvec, t]
    sigma2: float  # residual variance per coordinate, pixels^2
    cost: float  # truncated squared Sampson distances over all N of the first ML fit, px^2
    alternatives: list = field(default_factory=list)

    @property
    def rvec(self) -> np.ndarray | None:
        """Rotation vector ``(3,)`` of ``R`` (cv2.Rodrigues convention)."""
        return None if self.R is None else rvec_from_matrix(self.R)


def _pose_distances(cam1, cam2, points1, points2, threshold):
    """Squared Sampson distances ``(n,)`` to the tensor of the cameras of a pose (the
    first-order distance of each correspondence to its reprojection in the joint image;
    infinite when the linearly triangulated point is behind a camera), their truncated sum,
    and those points ``(n, 4)``."""
    F = epipolar_tensor(cam1.A1, cam1.A2, cam2.A1, cam2.A2)
    e = sampson_distance(F, points1, points2) ** 2
    X = triangulate_linear([cam1, cam2], [points1, points2])
    e[~(cam1.in_front(X) & cam2.in_front(X))] = np.inf
    return float(np.minimum(e, threshold**2).sum()), e, X


def pose_distances(intrinsics1, intrinsics2, rvec, t, points1, points2, threshold):
    r"""Squared Sampson distances of correspondences to the tensor of a calibrated pose, with
    cheirality, and their truncated sum: the cost by which :func:`calibrated_two_view` ranks
    its basins.

    .. math:: C = \sum_i \min(e_i, \tau^2), \qquad
              e_i = d_{\mathrm{Sampson}, i}^2 \text{, or } \infty \text{ when the
              linearly triangulated } X_i \text{ is behind a camera}

    A correspondence whose point lies behind either camera is not explained by the pose,
    however close it is to the tensor's curves (outliers of a nearly central pair can lie
    on the curves of a pose whose rays meet behind the cameras).

    Parameters
    ----------
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
    rvec : (3,) array_like
        Rotation vector of camera 2 (``X_cam2 = R X_cam1 + t``).
    t : (3,) array_like
    points1, points2 : (N, 2) array_like
        Pixels.
    threshold : float
        :math:`\tau` in pixels.

    Returns
    -------
    cost : float
    distances : (N,) ndarray
        :math:`e_i` in pixels squared.
    points : (N, 4) ndarray
        The linearly triangulated points, homogeneous, in camera 1's frame.

    Raises
    ------
    ValueError
        On malformed input (naming the argument), or when the pose makes no camera of
        ``intrinsics2`` (its slits meet).
    """
    _check_intrinsics(intrinsics1, intrinsics2)
    rvec, t = check_rvec("rvec", rvec), check_vector("t", t, 3)
    points1, points2 = check_point_pair("points1", points1, "points2", points2, min_count=1)
    threshold = check_threshold("threshold", threshold)
    return _pose_distances(compose_camera(intrinsics1, np.zeros(3), np.zeros(3)),
                           compose_camera(intrinsics2, rvec, t), points1, points2, threshold)


def _linear_points(cam1, cam2, points1, points2):
    """Linearly triangulated Euclidean points ``(n, 3)`` of the cameras of a pose (the
    maximum-likelihood fits refine them)."""
    X = triangulate_linear([cam1, cam2], [points1, points2])
    return X[:, :3] / X[:, 3:]


@dataclass
class _MaximumLikelihood:
    """The maximum-likelihood basins of one search, best first, each on its own inliers."""

    cost: float  # truncated squared Sampson distances over all N of the best's first fit, px^2
    inliers: np.ndarray  # (N,) bool, the correspondences the best's fit used
    points: np.ndarray  # (N, 4) homogeneous, triangulated with the best's first fit
    basins: list  # (reprojection cost on its inliers, rvec, tvec, (n, 3) points), best first
    scores: list  # truncated squared Sampson distances over all N of each basin, px^2
    information: tuple  # metric_pose_information (S, sigma2, M) of the best basin
    distances: np.ndarray  # (N,) squared Sampson distances of the best basin (_pose_distances)
    unverified: np.ndarray  # (N,) bool, high-leverage inliers of the best; the last basin is
    # the pose fitted without them (none when no such pose is distinct and within reach)

    @property
    def score(self) -> float:
        return self.scores[0]


#: Refits of one maximum-likelihood basin on its re-selected inliers (:func:`_fit_basin`).
#: One re-selection can stop at a fixed point of higher cost: on a mixed sweep scene of 1,779
#: correspondences the further refits bring the truncated cost from 1.0021 to 1.0001 times
#: that of maximum likelihood from the truth, and the rotation from 0.069 to 0.028 degrees
#: off; on 300 sweep scenes no pose got worse.
REFIT_ROUNDS = 4
#: A correspondence whose leverage on the maximum-likelihood pose exceeds this
#: (:func:`~xslit.sfm.metric_pose_information`) determines a direction of the pose more than
#: all the others together, so that its small residual does not show whether it is an inlier.
#: Outliers near the epipolar curves triangulate to points at extreme depths that pin the
#: translation: on the 1,000-scene sweep (``tools/sweep_two_view.py``), 43 poses that the
#: statistics called determined lay 1.5-10 standard deviations from maximum likelihood
#: from the truth, and in 30 of them the correspondence of largest leverage was an outlier
#: (leverage 0.5-0.995; seed 592: one outlier 11.6 px from the true tensor, 0.67 px from the
#: pose, moved the translation by 2.4 standard deviations and made the reported covariance
#: 23 times too small in that direction). See :func:`_maximum_likelihood`.
LEVERAGE_LIMIT = 0.5
#: Rounds of leaving out the correspondence of largest leverage beyond
#: :data:`LEVERAGE_LIMIT`, one per round (the leverages of the pose fitted without it change).
LEVERAGE_ROUNDS = 3


@dataclass
class _Basin:
    """One maximum-likelihood fit of :func:`_fit_basin`."""

    score: float  # truncated squared Sampson distances over all N of the fit, px^2
    cost: float  # the same of the first fit (on the start's inliers)
    points: np.ndarray  # (N, 4) homogeneous, triangulated with the first fit
    basin: tuple  # (reprojection cost on the inliers, rvec, tvec, (n, 3) points)
    distances: np.ndarray  # (N,) squared Sampson distances of the fit
    converged: bool
    fitted: np.ndarray  # (N,) bool, the correspondences the last fit used


def _fit_basin(start, p1, p2, intrinsics1, intrinsics2, threshold,
               max_iterations: int = 50, exclude=None) -> _Basin | str:
    """Maximum likelihood from a pose ``(R, t, inliers)`` on those inliers, then on the
    correspondences within the threshold of that fit among all N (but ``exclude``),
    refitted while they change and the truncated Sampson cost over all N falls (up to
    :data:`REFIT_ROUNDS` refits); the reason as a string when no pose results."""
    R0, t0, inl0 = start
    r0 = rvec_from_matrix(R0)
    q1, q2 = p1[inl0], p2[inl0]
    try:
        cam1 = compose_camera(intrinsics1, np.zeros(3), np.zeros(3))
        fit = fit_metric_pose(intrinsics1, intrinsics2, r0, t0, q1, q2,
                              _linear_points(cam1, compose_camera(intrinsics2, r0, t0), q1,
                                             q2),
                              max_iterations=max_iterations)
        cam2 = compose_camera(intrinsics2, fit.rvec, fit.tvec)
    except ValueError:
        return "the maximum-likelihood pose makes no camera of intrinsics2 (its slits meet)"
    cost, e, X = _pose_distances(cam1, cam2, p1, p2, threshold)
    keep = np.ones(len(p1), bool) if exclude is None else ~exclude
    inl = (e <= threshold**2) & keep
    if inl.sum() < 8:
        return (f"the maximum-likelihood pose explains only {int(inl.sum())} "
                f"correspondences within threshold = {threshold}")
    score, converged, used, Xu = cost, fit.converged, inl0, X
    for _ in range(REFIT_ROUNDS):
        now = (e <= threshold**2) & keep
        if np.array_equal(now, used) or now.sum() < 8:
            break
        try:
            again = fit_metric_pose(intrinsics1, intrinsics2, fit.rvec, fit.tvec, p1[now],
                                    p2[now], Xu[now, :3] / Xu[now, 3:],
                                    max_iterations=max_iterations)
            cam2 = compose_camera(intrinsics2, again.rvec, again.tvec)
        except ValueError:
            if used is inl0:
                return ("the maximum-likelihood pose makes no camera of intrinsics2 (its slits "
                        "meet)")
            break
        s_again, e_again, X_again = _pose_distances(cam1, cam2, p1, p2, threshold)
        # The first refit on the re-selected inliers is the fit; the next ones are kept while
        # the truncated cost falls.
        if used is not inl0 and s_again >= score:
            break
        fit, score, e, Xu, used = again, s_again, e_again, X_again, now
        converged = converged and fit.converged
    return _Basin(score, cost, X, (fit.cost, fit.rvec, fit.tvec, fit.points), e, converged,
                  used)


@dataclass
class RobustMetricFit:
    """Result of :func:`fit_metric_pose_robust`."""

    rvec: np.ndarray  # (3,) pose of camera 2 (X_cam2 = R X_cam1 + t)
    tvec: np.ndarray  # (3,)
    inliers: np.ndarray  # (N,) bool, the correspondences of the last fit (those within the
    # threshold of the pose but for a last re-selection that no longer lowered the cost)
    points: np.ndarray  # (inliers.sum(), 3) their points in camera 1's frame
    cost: float  # truncated squared Sampson distances over all N (pose_distances), px^2
    distances: np.ndarray  # (N,) squared Sampson distances, infinite behind a camera
    converged: bool  # every maximum-likelihood descent stopped at a minimum


def fit_metric_pose_robust(intrinsics1, intrinsics2, rvec0, tvec0, points1, points2,
                           inliers=None, *, threshold: float = 1.5,
                           max_iterations: int = 50) -> RobustMetricFit:
    r"""Maximum likelihood of a calibrated pose among inliers and outliers, from a start.

    The likelihood of correspondences that are inliers (Gaussian reprojection errors) or
    outliers (uniform) is, to first order, the truncated quadratic loss of
    :func:`pose_distances`, :math:`C = \sum_i \min(e_i, \tau^2)`. From the start
    ``rvec0, tvec0`` the pose and points are fitted by maximum likelihood
    (:func:`~xslit.sfm.fit_metric_pose`) on ``inliers``; the correspondences within
    ``threshold`` of that fit are re-selected among all N and the pose refitted on them, and
    again while they change and :math:`C` falls (at most :data:`REFIT_ROUNDS` refits): the
    fits of :func:`calibrated_two_view`'s basins. From the true pose this is what the data
    allow a robust estimator: which correspondences it explains is decided by the data, not
    by labels it cannot know.

    Parameters
    ----------
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
    rvec0, tvec0 : (3,) array_like
        Starting pose of camera 2 (``X_cam2 = R X_cam1 + t``).
    points1, points2 : (N, 2) array_like
        Pixels.
    inliers : (N,) or (N, 1) array_like, optional
        The correspondences of the first fit (non-zero); those within ``threshold`` of the
        start when omitted.
    threshold : float
        :math:`\tau` in pixels.
    max_iterations : int
        Of each maximum-likelihood descent.

    Returns
    -------
    RobustMetricFit

    Raises
    ------
    ValueError
        On malformed input (naming the argument), or when no pose results: fewer than 8
        correspondences within the threshold, or a fit whose camera 2 has meeting slits.

    Examples
    --------
    >>> from xslit.synthetic import random_two_view_scene
    >>> s = random_two_view_scene(0, 80, sigma=0.5)
    >>> fit = fit_metric_pose_robust(s["intrinsics1"], s["intrinsics2"], s["rvec"], s["tvec"],
    ...                              s["points1"], s["points2"], threshold=2.0)
    >>> int(fit.inliers.sum()), bool(np.linalg.norm(fit.tvec - s["tvec"]) < 0.05)
    (80, True)
    """
    _check_intrinsics(intrinsics1, intrinsics2)
    rvec0, tvec0 = check_rvec("rvec0", rvec0), check_vector("tvec0", tvec0, 3)
    p1, p2 = check_point_pair("points1", points1, "points2", points2, min_count=8)
    threshold = check_threshold("threshold", threshold)
    max_iterations = check_positive_int("max_iterations", max_iterations)
    n = len(p1)
    if inliers is None:
        try:
            start = _pose_distances(compose_camera(intrinsics1, np.zeros(3), np.zeros(3)),
                                    compose_camera(intrinsics2, rvec0, tvec0), p1, p2,
                                    threshold)[1] <= threshold**2
        except ValueError as err:
            raise ValueError(f"rvec0, tvec0 make no camera of intrinsics2: {err}") from None
    else:
        start = check_mask("inliers", inliers, n)
    if start.sum() < 8:
        raise ValueError(f"inliers must select at least 8 correspondences, got {start.sum()}")
    fit = _fit_basin((matrix_from_rvec(rvec0), tvec0, start), p1, p2, intrinsics1, intrinsics2,
                     threshold, max_iterations=max_iterations)
    if isinstance(fit, str):
        raise ValueError(f"no pose from this start: {fit}")
    _, rvec, tvec, X = fit.basin
    return RobustMetricFit(np.asarray(rvec, float), np.asarray(tvec, float), fit.fitted.copy(),
                           np.asarray(X, float), float(fit.score), fit.distances,
                           bool(fit.converged))


def _maximum_likelihood(pose, p1, p2, intrinsics1, intrinsics2, threshold):
    """Maximum likelihood from the best basin of a search (:class:`CalibratedPose`) and from
    the other basins whose Sampson cost is within reach, each on its own inliers among all
    correspondences (:func:`calibrated_two_view`), ranked by their truncated Sampson cost over
    all correspondences; the reason as a string when no pose results.

    Each basin is compared on its own inliers: on the best start's inliers another basin
    pays for the correspondences it explains differently (on a nearly central sweep scene of
    451 correspondences the basin 0.5 degrees from the truth cost 46 px^2 more there, and
    0.1 px^2 more over all correspondences, than the search's best, 28 degrees off: the data
    cannot decide between them, and only the comparison over all correspondences says so).
    """
    reach = _chi2_quantile(AMBIGUITY_LEVEL, 6) * max(pose.rms**2, 1e-12)
    best = _fit_basin((pose.R, pose.t, pose.inliers), p1, p2, intrinsics1, intrinsics2,
                      threshold)
    if isinstance(best, str):
        return best
    _, rv, tv, Xi = best.basin
    S, sigma2, h, M = metric_pose_information(intrinsics1, intrinsics2, rv, tv,
                                              p1[best.fitted], p2[best.fitted], Xi,
                                              influence=True)
    found = [best]
    # A start that is still descending when the iterations run out slides along a weakly
    # observed direction of one basin (which the covariance shows), it is not another basin.
    # A start within the noise of this minimum (the Mahalanobis distance by which
    # calibrated_two_view tells minima apart) lies in its basin and is not fitted: the Sampson
    # search's other poses within reach were mostly such starts (Mahalanobis distances of 4
    # to 13 sigma^2 on the scenes of tools/bench_relative_pose.py), each fit costing as much
    # as the first.
    for R, t, inl, score in pose.alternatives[:2]:
        if score - pose.score > reach or inl.sum() < 8:
            continue
        d = np.concatenate([rvec_from_matrix(R) - rv, t - tv])
        if d @ S @ d <= _chi2_quantile(AMBIGUITY_LEVEL, 6) * sigma2:
            continue
        other = _fit_basin((R, t, inl), p1, p2, intrinsics1, intrinsics2, threshold,
                           max_iterations=20)
        if not isinstance(other, str) and other.converged:
            found.append(other)
    found.sort(key=lambda b: b.score)
    top = found[0]
    if top is not best:
        _, rv, tv, Xi = top.basin
        S, sigma2, h, M = metric_pose_information(intrinsics1, intrinsics2, rv, tv,
                                                  p1[top.fitted], p2[top.fitted], Xi,
                                                  influence=True)
    # Correspondences beyond LEVERAGE_LIMIT fit the pose because they determine it, whether
    # they are inliers or not: the pose fitted without them is another minimum of the
    # truncated cost, which calibrated_two_view reports as a rival when it is distinct and
    # its cost within what noise explains (the data cannot verify them). The pose returned
    # stays the one of lowest cost: returning the other when it is within reach moved 4 of
    # 239 judged poses of the 300-scene sweep beyond 1.5 times the yardstick's error (true
    # inliers of leverage 0.52-0.65 on 30-50 correspondences, fits up to 8.8% worse than
    # maximum likelihood from the truth) and brought 7 others within it.
    level = _chi2_quantile(AMBIGUITY_LEVEL, 6)
    heavy = np.zeros(len(p1), bool)
    fitted, basin, rival = top.fitted, top.basin, None
    for _ in range(LEVERAGE_ROUNDS):
        if h.max(initial=0.0) <= LEVERAGE_LIMIT:
            break
        # The largest first: without it, the others' leverages change.
        heavy[np.flatnonzero(fitted)[np.argmax(h)]] = True
        other = _fit_basin((matrix_from_rvec(basin[1]), basin[2], fitted & ~heavy), p1, p2,
                           intrinsics1, intrinsics2, threshold, exclude=heavy)
        if isinstance(other, str) or other.score - top.score > level * sigma2:
            break
        d = np.concatenate([other.basin[1] - rv, other.basin[2] - tv])
        if d @ S @ d > level * sigma2:
            rival = other
            break
        # Within noise of the pose: the next one is left out of this fit.
        fitted, basin = other.fitted, other.basin
        _, _, h, _ = metric_pose_information(intrinsics1, intrinsics2, basin[1], basin[2],
                                             p1[fitted], p2[fitted], basin[3], influence=True)
    if rival is not None and rival.score < top.score:
        # Without them the fit is better: the pose of lowest cost is that one.
        top, heavy = rival, np.zeros(len(p1), bool)
        found.insert(0, rival)
        S, sigma2, _, M = metric_pose_information(intrinsics1, intrinsics2,
                                                  *rival.basin[1:3], p1[rival.fitted],
                                                  p2[rival.fitted], rival.basin[3],
                                                  influence=True)
    elif rival is not None:
        found.append(rival)
    else:
        heavy[:] = False
    return _MaximumLikelihood(top.cost, top.fitted, top.points, [b.basin for b in found],
                              [b.score for b in found], (S, sigma2, M), top.distances, heavy)


def _uncalibrated_gap(intrinsics1, intrinsics2, ml, p1, p2, threshold) -> float:
    r"""How much worse the calibrated pose fits than an uncalibrated tensor, in units of
    :math:`\hat\sigma^2`.

    The calibrated tensors (6 pose parameters) are a subset of the variety of epipolar
    tensors (13 parameters): on correspondences that both explain, the maximum-likelihood
    pose's squared Sampson distances exceed those of the maximum-likelihood tensor by about
    :math:`\sigma^2 \chi^2_7` (a likelihood-ratio test). The tensor is Taubin's fit to the
    pose's inliers polished on the variety with its inliers re-selected
    (:func:`~xslit.epipolar.variety.refine_on_variety`), so that it is not held in the
    pose's basin; the sums run over the correspondences within the threshold of both, where
    the truncation of either does not count. A pose in another basin than the
    maximum-likelihood one fits worse: on a pushbroom scene, a pose 31.6 degrees off (194
    inliers, and the data determine the pose to 0.03 degrees) gave 27.8, a nearly central
    mixed scene's pose 14.7 degrees off gave 99, where correct poses of sweep scenes gave
    0.8 to 11.5 (and one of 300 gave 26.5). ``-inf`` when the tensor cannot be fitted (fewer
    than 15 inliers).
    """
    Xi = ml.basins[0][3]
    # Noise-free data: below a micropixel the difference is rounding, not misfit.
    sigma2 = max(ml.basins[0][0] / max(len(Xi) - 6, 1), 1e-12)
    e = ml.distances
    inl = e <= threshold**2
    try:
        F0 = solve_taubin(p1[inl], p2[inl])[0]
        fit = refine_on_variety(F0, p1, p2, inl, threshold=threshold)
    except ValueError:
        return -np.inf
    both = inl & fit.inliers
    if both.sum() < 15:
        return -np.inf
    return float((e[both].sum() - np.sum(fit.distances[both] ** 2)) / sigma2)


def _spread(pose: CalibratedPose, rows, n) -> CalibratedPose:
    """``pose`` of a search on the correspondences ``rows`` with its masks over all ``n``."""
    def full(mask):
        out = np.zeros(n, bool)
        out[rows] = mask
        return out

    return dataclasses.replace(pose, inliers=full(pose.inliers), alternatives=[
        (R, t, full(inl), score) for R, t, inl, score in pose.alternatives])


def _pose_covariance(S, sigma2, M) -> np.ndarray:
    r"""The covariance of ``[rvec, t]``: the model-based :math:`\hat\sigma^2 S^{+}`, and
    where the sandwich estimate :math:`S^{+} M S^{+}` (:func:`metric_pose_information`'s
    ``influence``) is larger, that: the model-based one plus the positive part of their
    difference.

    The model-based covariance assumes that every inlier is one; a correspondence that holds
    a direction of the pose (an outlier near the curves, triangulated to an extreme point)
    shrinks it in that direction whatever its error, while its deleted fit, which the sandwich
    estimate follows, moves. Of the 22 judged poses of the 1,000-scene sweep
    (``tools/sweep_two_view.py``) beyond 1.5 times the yardstick's error whose error lay
    outside the 0.999 quantile of the model-based covariance, 12 lie inside this one or fail
    with the scale undetermined.
    """
    Si = np.linalg.pinv(S, hermitian=True)
    model = sigma2 * Si
    w, V = np.linalg.eigh(Si @ M @ Si - model)
    return model + (V * np.maximum(w, 0.0)) @ V.T


def calibrated_two_view(points1, points2, intrinsics1, intrinsics2, inliers=None, *,
                        threshold: float = 1.5, rng=None) -> CalibratedTwoView:
    r"""Metric relative pose of two calibrated cameras, refined and qualified.

    :func:`relative_pose` gives the best basin of the Sampson (MSAC) cost and the other
    distinct basins it refined. The best is refined by maximum likelihood
    (:func:`~xslit.sfm.refine_metric_pose`); its inliers are the correspondences whose
    Sampson distance to the pose's tensor (the first-order approximation of the distance to
    their reprojections in the joint image) is within the threshold,

    .. math:: e_i = \|x_i - \pi_1(X_i)\|^2 + \|x'_i - \pi_2(X_i)\|^2
              \approx d_{\mathrm{Sampson}, i}^2 \le \tau^2 ,

    and it is refined again on them. The other basins whose Sampson cost is within reach are
    refined the same way, each on its own inliers (those whose descent converges are minima),
    and the lowest truncated Sampson cost over all correspondences is chosen. A
    correspondence whose leverage exceeds :data:`LEVERAGE_LIMIT` determines a direction of
    the pose more than all the others together, so that its residual is small whether it is
    an inlier or not; the pose is fitted again without it (and without the next such one,
    up to :data:`LEVERAGE_ROUNDS`), and that fit is one more basin. The noise is
    :math:`\hat\sigma^2 = \sum_{\text{inliers}} e_i / (N_{in} - 6)`; another minimum, distinct
    by more than noise in the pose explains, whose cost is within the :data:`AMBIGUITY_LEVEL`
    quantile of :math:`\hat\sigma^2 \chi^2_6` of the best makes the result ``"ambiguous"``.
    The covariance of ``[rvec, t]`` is :math:`\hat\sigma^2 S^{-1}` with :math:`S` the pose
    information with the points eliminated
    (:func:`~xslit.sfm.two_view.metric_pose_information`), enlarged to the sandwich estimate
    where that is larger (:func:`_pose_covariance`), plus, for each of the :math:`K`
    such rival minima at :math:`d_k = [\mathrm{rvec}_k, t_k] - [\mathrm{rvec}, t]`, the
    term :math:`d_k d_k^\top / (K + 1)`: the second moment about the returned pose of the
    equal mixture of the minima, so that the reported uncertainty covers the rivals.

    The pose is then tested against an uncalibrated epipolar tensor fitted to its inliers
    (a likelihood-ratio test with 13 - 6 = 7 degrees of freedom, on the correspondences
    both explain): a pose in the maximum-likelihood basin fits them about as well, a pose in
    another basin does not. Beyond the :data:`MODEL_FIT_RETRY` quantile a thorough search
    (:data:`THOROUGH_SEARCH`) runs and its maximum-likelihood pose is kept when its truncated
    Sampson cost on all correspondences is lower; a pose still beyond the
    :data:`MODEL_FIT_LEVEL` quantile is ``"undetermined"``.

    Parameters
    ----------
    points1, points2 : (N, 2) array_like
        Pixels.
    intrinsics1, intrinsics2 : TwoSlitIntrinsics or PushbroomIntrinsics
    inliers : (N,) or (N, 1) array_like, optional
        Correspondences to start from (non-zero), e.g. the mask of ``findEpipolarTensor`` or
        the correspondences within ``threshold`` of a tensor (Sampson distance); all when
        omitted. Whatever the start, the pose is checked against all N correspondences and
        its inliers are re-selected among them: a linear tensor misses inliers that the
        exact 6-parameter model explains, and absorbs outliers that it rejects.
    threshold : float
        Inlier threshold :math:`\tau` in pixels (Sampson distance for the search, distance in
        the joint image for the comparison of basins).
    rng : None, int or numpy.random.Generator
        Random subsets of the search; ``None`` means the fixed seed 0, so that two identical
        calls give identical results.

    Returns
    -------
    CalibratedTwoView

    Raises
    ------
    ValueError
        On malformed input (naming the argument).

    Examples
    --------
    >>> from xslit.synthetic import random_two_view_scene
    >>> s = random_two_view_scene(0, 60)
    >>> res = calibrated_two_view(s["points1"], s["points2"], s["intrinsics1"],
    ...                           s["intrinsics2"], threshold=0.1)
    >>> res.status, bool(np.allclose(res.t, s["tvec"], atol=1e-6))
    ('ok', True)
    """
    p1 = check_image_points("points1", points1)
    p2 = check_image_points("points2", points2)
    if len(p1) != len(p2):
        raise ValueError(f"points1 and points2 must have the same number of points, got "
                         f"{len(p1)} and {len(p2)}")
    _check_intrinsics(intrinsics1, intrinsics2)
    threshold = check_threshold("threshold", threshold)
    n = len(p1)
    start = check_mask("inliers", inliers, n)
    rng = np.random.default_rng(0) if rng is None else check_rng(rng)
    empty = np.zeros(n, bool)
    try:
        pose = relative_pose(p1, p2, intrinsics1, intrinsics2, start, threshold=threshold,
                             rng=rng)
    except ValueError as err:
        return CalibratedTwoView("failed", str(err), None, None, empty, None, np.nan, None,
                                 np.nan, np.inf)
    ml = _maximum_likelihood(pose, p1, p2, intrinsics1, intrinsics2, threshold)
    if isinstance(ml, str):
        return CalibratedTwoView("failed", ml, None, None, empty, None, np.nan, None, np.nan,
                                 np.inf)
    gap = _uncalibrated_gap(intrinsics1, intrinsics2, ml, p1, p2, threshold)
    if gap > _chi2_quantile(MODEL_FIT_RETRY, 7):
        # The pose fits its inliers worse than an uncalibrated tensor: the search may have
        # missed the maximum-likelihood basin. A thorough search, kept when its
        # maximum-likelihood pose has the lower truncated Sampson cost on all correspondences
        # (the cost that ranks the search's candidates, now at maximum-likelihood poses).
        # On many correspondences the search runs on a random part of them (its time and
        # its starts' inlier masks grow with the starts times N); its pose is then fitted
        # to all.
        sub = (np.arange(n) if n <= THOROUGH_MAX_POINTS else
               np.sort(rng.choice(n, THOROUGH_MAX_POINTS, replace=False)))
        try:
            again = _spread(relative_pose(p1[sub], p2[sub], intrinsics1, intrinsics2,
                                          start[sub], threshold=threshold, rng=rng,
                                          **THOROUGH_SEARCH), sub, n)
        except ValueError:
            again = None
        other = (None if again is None else
                 _maximum_likelihood(again, p1, p2, intrinsics1, intrinsics2, threshold))
        if other is not None and not isinstance(other, str) and other.score < ml.score:
            ml = other
            gap = _uncalibrated_gap(intrinsics1, intrinsics2, ml, p1, p2, threshold)
    cost, inl, X, basins = ml.cost, ml.inliers, ml.points, ml.basins
    _, rv, tv, Xi = basins[0]
    R, t = matrix_from_rvec(rv), tv
    S, sigma2, M = ml.information
    rms = float(np.sqrt(sigma2 * (inl.sum() - 6) / (4 * inl.sum())))
    status, reason = "ok", "one maximum-likelihood basin, determined"
    sv = np.linalg.svd(Xi - Xi.mean(axis=0), compute_uv=False)
    shape = ("; the inlier points are nearly collinear" if sv[1] < 0.01 * sv[0] else
             "; the inlier points are nearly coplanar" if sv[2] < 0.01 * sv[0] else "")
    diag = np.sqrt(np.maximum(np.diag(S), 1e-300))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        Sn = S / diag[:, None] / diag[None]
    # An overflow here means a direction of the pose the data do not observe at all.
    ev = np.linalg.eigvalsh(Sn) if np.all(np.isfinite(Sn)) else np.array([0.0, 1.0])
    level = _chi2_quantile(AMBIGUITY_LEVEL, 6)
    # Minima closer than noise in the pose explains (Mahalanobis distance) are one minimum.
    diffs = [np.concatenate([b[1] - rv, b[2] - tv]) for b in basins[1:]]
    distinct = [d @ S @ d > level * sigma2 for d in diffs]
    others = [(matrix_from_rvec(b[1]), b[2], score)
              for b, score, far in zip(basins[1:], ml.scores[1:], distinct, strict=True) if far]
    # The distinct basins that fit all correspondences within what noise explains.
    rivals = [d for d, score, far in zip(diffs, ml.scores[1:], distinct, strict=True)
              if far and score - ml.score <= level * sigma2]
    if ev[0] <= RANK_TOLERANCE * ev[-1]:
        rank = int(np.sum(ev > RANK_TOLERANCE * ev[-1]))
        cov = np.full((6, 6), np.inf)
        status = "undetermined"
        reason = (f"the maximum-likelihood Jacobian of the pose has rank {rank} < 6: the "
                  f"correspondences do not determine the pose{shape}")
    else:
        cov = _pose_covariance(S, sigma2, M)
        u = t / max(np.linalg.norm(t), 1e-300)
        sd = float(np.sqrt(max(u @ cov[3:, 3:] @ u, 0.0)))
        if sd > SCALE_TOLERANCE * np.linalg.norm(t):
            status = "undetermined"
            reason = (f"the translation length {np.linalg.norm(t):.4g} has standard deviation "
                      f"{sd:.4g}: the correspondences do not determine the pose's scale"
                      f"{shape or ' (slits too close together for the scene depth)'}")
        elif (rot_sd := float(np.sqrt(max(np.linalg.eigvalsh(cov[:3, :3])[-1], 0.0)))) \
                > ROTATION_TOLERANCE:
            status = "undetermined"
            reason = (f"the rotation has standard deviation {np.degrees(rot_sd):.3g} degrees "
                      "about one axis: the correspondences do not determine the pose"
                      f"{shape or ' (too few of them, or too little depth or parallax)'}")
        elif gap > _chi2_quantile(MODEL_FIT_LEVEL, 7):
            status = "undetermined"
            reason = (f"the pose fits its inliers worse than an uncalibrated epipolar tensor "
                      f"does, by {gap:.3g} sigma^2 on their common correspondences (beyond "
                      f"the {MODEL_FIT_LEVEL} quantile {_chi2_quantile(MODEL_FIT_LEVEL, 7):.3g} of "
                      "chi-square with 7 degrees of freedom): the search did not find the "
                      "maximum-likelihood basin, or the intrinsics do not match the images")
        elif rivals:
            # A distinct basin with a cost within what noise explains: the data cannot decide.
            d_rot = np.degrees(np.linalg.norm(rvec_from_matrix(others[0][0] @ R.T)))
            status = "ambiguous"
            if ml.unverified.any() and distinct[-1] and ml.scores[-1] - ml.score <= level * sigma2:
                which = np.flatnonzero(ml.unverified)
                d_lev = np.degrees(np.linalg.norm(rvec_from_matrix(
                    matrix_from_rvec(basins[-1][1]) @ R.T)))
                reason = (f"the pose rests on {len(which)} correspondence(s) (indices "
                          f"{which[:5].tolist()}{'...' if len(which) > 5 else ''}) that each "
                          f"determine a direction of it more than all others together (leverage "
                          f"above {LEVERAGE_LIMIT}), which the others cannot verify; fitted "
                          f"without them it lies {d_lev:.3g} degrees away, with a truncated "
                          f"Sampson cost {ml.scores[-1] - ml.score:.4g} px^2 higher, within what "
                          f"noise explains ({level * sigma2:.4g} px^2)")
            else:
                reason = (f"another basin ({d_rot:.3g} degrees away) has a truncated Sampson "
                          f"cost over all correspondences only {others[0][2] - ml.score:.4g} "
                          f"px^2 higher, within what noise explains ({level * sigma2:.4g} px^2)")
        # The rivals are as likely as the pose returned: the covariance is the second moment
        # about it of the equal mixture of the basins (each rival adds d d^T / (K + 1)), so
        # that it covers them.
        for d in rivals:
            cov = cov + np.outer(d, d) / (len(rivals) + 1)
    full = inl.copy()
    points = X.copy()  # the outliers' points triangulated with the first fit
    points[inl] = np.concatenate([Xi, np.ones((len(Xi), 1))], axis=1)
    return CalibratedTwoView(status, reason, R, t, full, points, rms, cov, sigma2, cost,
                             others)
