r"""Levenberg-Marquardt: for problems with global parameters and independent point blocks,
and the step and acceptance kernels of a batch of small independent problems.

The structure of bundle adjustment (Triggs et al., "Bundle adjustment - a modern synthesis",
2000, section 6): parameters split into ``G`` global ones (cameras) and ``N`` blocks of ``b``
point parameters; the residual block ``r_i`` (``m`` entries) depends on the globals and on
block ``i`` only. Each step solves the damped normal equations through the Schur complement
of the block-diagonal point part, so one iteration costs ``O(N)``, vectorised over points.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import _jit
from .._checks import check_positive_int

__all__ = [
    "BlockLMResult",
    "batch_accept",
    "batch_damped_solve",
    "batch_damped_steps",
    "batch_levenberg_marquardt",
    "batch_levenberg_marquardt_normal",
    "block_levenberg_marquardt",
    "eliminated_information",
    "eliminated_rows",
    "numeric_block_jacobian",
    "reduced_normal_equations",
]


@dataclass
class BlockLMResult:
    g: np.ndarray
    p: np.ndarray
    residuals: np.ndarray  # (N, m)
    cost: float  # 0.5 * sum of squares
    iterations: int
    converged: bool


def numeric_block_jacobian(fun, g, p, r0=None, eps=1e-7):
    """Forward-difference Jacobians ``(N, m, G)`` and ``(N, m, b)`` of ``fun(g, p) -> (N, m)``.

    Costs ``G + b`` evaluations: each point column is perturbed for all points at once.
    """
    r0 = fun(g, p) if r0 is None else r0
    Jg = np.empty((*r0.shape, len(g)))
    for k in range(len(g)):
        h = eps * max(1.0, abs(g[k]))
        gk = g.copy()
        gk[k] += h
        Jg[..., k] = (fun(gk, p) - r0) / h
    Jp = np.empty((*r0.shape, p.shape[1]))
    for k in range(p.shape[1]):
        h = eps * np.maximum(1.0, np.abs(p[:, k]))
        pk = p.copy()
        pk[:, k] += h
        Jp[..., k] = (fun(g, pk) - r0) / h[:, None]
    return Jg, Jp


def reduced_normal_equations(Jg, Jp, r=None, lam: float = 0.0):
    r"""The damped normal equations of the globals with the point blocks eliminated (Schur).

    With :math:`U = \sum_i J_{g,i}^\top J_{g,i}`, :math:`V_i = J_{p,i}^\top J_{p,i}`,
    :math:`W_i = J_{g,i}^\top J_{p,i}` and the damping :math:`\lambda` on the diagonals,

    .. math:: S = U_\lambda - \sum_i W_i V_{i,\lambda}^{-1} W_i^\top, \qquad
              b = \sum_i J_{g,i}^\top r_i - W_i V_{i,\lambda}^{-1} J_{p,i}^\top r_i .

    At :math:`\lambda = 0`, :math:`S` is the information (inverse covariance up to
    :math:`\sigma^2`) of the globals when the points are unknown (Triggs et al. 2000,
    section 6).

    Parameters
    ----------
    Jg : (N, m, G) ndarray
    Jp : (N, m, b) ndarray
    r : (N, m) ndarray, optional
    lam : float

    Returns
    -------
    S : (G, G) ndarray
    b : (G,) ndarray (zeros without ``r``)
    Vinv : (N, b, b) ndarray
        The damped point blocks' inverses.
    WV : (N, G, b) ndarray
        :math:`W_i V_{i,\lambda}^{-1}`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Jg, Jp = rng.normal(size=(50, 4, 2)), rng.normal(size=(50, 4, 3))
    >>> S = reduced_normal_equations(Jg, Jp)[0]
    >>> J = np.zeros((200, 2 + 150))  # the dense Jacobian, for comparison
    >>> J[:, :2] = Jg.reshape(200, 2)
    >>> for i in range(50):
    ...     J[4 * i:4 * i + 4, 2 + 3 * i:5 + 3 * i] = Jp[i]
    >>> bool(np.allclose(np.linalg.inv(np.linalg.inv(J.T @ J)[:2, :2]), S))
    True
    """
    return _schur(*_normal_blocks(Jg, Jp, r), lam)


def eliminated_information(Jg, Jp, rcond: float = 1e-10) -> np.ndarray:
    r"""The information of the globals with the point blocks eliminated, positive
    semi-definite by construction.

    It equals the undamped Schur complement :math:`U - \sum_i W_i V_i^{+} W_i^\top` of
    :func:`reduced_normal_equations`, computed as

    .. math:: S = \sum_i (N_i^\top J_{g,i})^\top (N_i^\top J_{g,i})

    with :math:`N_i` an orthonormal basis of the residual directions that the point
    :math:`i` cannot absorb: the left singular vectors of :math:`J_{p,i}` beyond its rank
    (singular values at most ``rcond`` times its largest count as zero). The difference of
    nearly equal large terms in the Schur complement loses everything when a point is
    nearly unobserved in one direction (a far point with condition numbers of
    :math:`V_i` near :math:`10^{10}`): on sweep scenes it returned matrices with negative
    eigenvalues a tenth of the largest.

    Parameters
    ----------
    Jg : (N, m, G) ndarray
    Jp : (N, m, b) ndarray
    rcond : float

    Returns
    -------
    S : (G, G) ndarray, symmetric positive semi-definite

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Jg, Jp = rng.normal(size=(50, 4, 2)), rng.normal(size=(50, 4, 3))
    >>> S = eliminated_information(Jg, Jp)
    >>> bool(np.allclose(S, reduced_normal_equations(Jg, Jp)[0]))
    True
    """
    A = eliminated_rows(Jg, Jp, rcond)
    A2 = A.reshape(-1, A.shape[-1])
    S = A2.T @ A2
    return (S + S.T) / 2


def eliminated_rows(Jg, Jp, rcond: float = 1e-10, residuals=None):
    r"""Each point's rows of the globals' Jacobian with its own parameters eliminated,
    :math:`N_i^\top J_{g,i}` (:func:`eliminated_information` sums their products).

    :math:`N_i` spans the residual directions that point :math:`i` cannot absorb; the
    other rows are zero. Point :math:`i` contributes :math:`A_i^\top A_i` to the
    information :math:`S` of the globals, and its *leverage* is
    :math:`h_i = \operatorname{tr}(A_i S^{-1} A_i^\top) \in [0, 1]` (the leverages sum to
    the rank of :math:`S`): near 1, the point alone determines a direction of the globals,
    and its residual is near zero whatever its error.

    Parameters
    ----------
    Jg : (N, m, G) ndarray
    Jp : (N, m, b) ndarray
    rcond : float
        Singular values of :math:`J_{p,i}` at most ``rcond`` times its largest count as zero.
    residuals : (N, m) ndarray, optional
        Residuals at a solution whose point parameters are optimal.

    Returns
    -------
    A : (N, m, G) ndarray
    b : (N, m) ndarray
        With ``residuals``: their components :math:`N_i^\top r_i` (zero where ``A`` is), so
        that :math:`A_i^\top b_i` is point :math:`i`'s term of the globals' gradient.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Jg, Jp = rng.normal(size=(50, 4, 2)), rng.normal(size=(50, 4, 3))
    >>> A = eliminated_rows(Jg, Jp)
    >>> bool(np.allclose(np.einsum("nmi,nmj->ij", A, A), eliminated_information(Jg, Jp)))
    True
    """
    Jg, Jp = np.asarray(Jg, dtype=float), np.asarray(Jp, dtype=float)
    Ub, sv, _ = np.linalg.svd(Jp, full_matrices=True)
    m = Jp.shape[1]
    keep = np.ones((len(Jp), m))
    k = min(sv.shape[1], m)
    keep[:, :k] = sv[:, :k] <= rcond * np.maximum(sv[:, :1], 1e-300)
    Ut = np.swapaxes(Ub, 1, 2)
    A = Ut @ Jg  # (N, m, G): the residual directions of each point
    A *= np.sqrt(keep)[:, :, None]
    if residuals is None:
        return A
    b = (Ut @ np.asarray(residuals, dtype=float)[:, :, None])[:, :, 0] * keep
    return A, b


def _normal_blocks(Jg, Jp, r=None):
    """``U (G, G)``, ``V (N, b, b)``, ``W (N, G, b)`` and the gradients ``eg``, ``ep``."""
    # Products as (batched) matrix products: BLAS, several times faster than einsum here.
    JgT, JpT = np.swapaxes(Jg, 1, 2), np.swapaxes(Jp, 1, 2)
    Jg2 = Jg.reshape(-1, Jg.shape[-1])
    U = Jg2.T @ Jg2
    V = JpT @ Jp
    W = JgT @ Jp
    if r is None:
        return U, V, W, None, None
    return U, V, W, Jg2.T @ r.reshape(-1), (JpT @ r[..., None])[..., 0]


def _inverse3(V):
    """Inverses ``(N, 3, 3)`` of ``(N, 3, 3)`` matrices, the adjugate over the determinant:
    a few operations on ``(N,)`` arrays, where ``np.linalg.inv`` runs an LU factorisation per
    matrix (seven times as long for 700 points, the most of a metric fit's step)."""
    a, b, c = V[:, 0, 0], V[:, 0, 1], V[:, 0, 2]
    d, e, f = V[:, 1, 0], V[:, 1, 1], V[:, 1, 2]
    g, h, i = V[:, 2, 0], V[:, 2, 1], V[:, 2, 2]
    adj = np.empty_like(V)
    adj[:, 0, 0], adj[:, 0, 1], adj[:, 0, 2] = e * i - f * h, c * h - b * i, b * f - c * e
    adj[:, 1, 0], adj[:, 1, 1], adj[:, 1, 2] = f * g - d * i, a * i - c * g, c * d - a * f
    adj[:, 2, 0], adj[:, 2, 1], adj[:, 2, 2] = d * h - e * g, b * g - a * h, a * e - b * d
    det = a * adj[:, 0, 0] + b * adj[:, 1, 0] + c * adj[:, 2, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        return adj / det[:, None, None]


def _nb_damped_inverse3(V, lam, out):
    """The inverses ``out`` (N, 3, 3) of the damped blocks ``V + lam diag(max(diag V,
    1e-12))`` of :func:`_schur`, one block at a time: the operations of the numpy code (the
    damping, then :func:`_inverse3`) in the same order, so the same numbers bit for bit."""
    for n in range(V.shape[0]):
        m0, m1, m2 = V[n, 0, 0], V[n, 1, 1], V[n, 2, 2]
        # np.maximum (NaN propagates), then the row of lam max(...) times the identity's
        m0 = lam * (m0 if m0 > 1e-12 or m0 != m0 else 1e-12)
        m1 = lam * (m1 if m1 > 1e-12 or m1 != m1 else 1e-12)
        m2 = lam * (m2 if m2 > 1e-12 or m2 != m2 else 1e-12)
        a, b, c = V[n, 0, 0] + m0 * 1.0, V[n, 0, 1] + m0 * 0.0, V[n, 0, 2] + m0 * 0.0
        d, e, f = V[n, 1, 0] + m1 * 0.0, V[n, 1, 1] + m1 * 1.0, V[n, 1, 2] + m1 * 0.0
        g, h, i = V[n, 2, 0] + m2 * 0.0, V[n, 2, 1] + m2 * 0.0, V[n, 2, 2] + m2 * 1.0
        a00, a01, a02 = e * i - f * h, c * h - b * i, b * f - c * e
        a10, a11, a12 = f * g - d * i, a * i - c * g, c * d - a * f
        a20, a21, a22 = d * h - e * g, b * g - a * h, a * e - b * d
        det = a * a00 + b * a10 + c * a20
        out[n, 0, 0], out[n, 0, 1], out[n, 0, 2] = a00 / det, a01 / det, a02 / det
        out[n, 1, 0], out[n, 1, 1], out[n, 1, 2] = a10 / det, a11 / det, a12 / det
        out[n, 2, 0], out[n, 2, 1], out[n, 2, 2] = a20 / det, a21 / det, a22 / det


@functools.cache
def _compiled():
    """The compiled :func:`_nb_damped_inverse3`, or None when numba cannot be imported."""
    namespace = globals()
    if not _jit.compile_kernels(namespace, ("_nb_damped_inverse3",)):
        return None
    return namespace["_nb_damped_inverse3"]


def _damped_inverse(V, lam):
    """Inverses ``(N, b, b)`` of the point blocks damped by ``lam`` (Marquardt's scaling of
    the diagonal); undamped, their pseudo-inverses."""
    # Undamped, a point block can be singular (a point that the rays do not fix): its
    # pseudo-inverse leaves the unobserved directions out of the information.
    if not lam:
        return np.linalg.pinv(V)
    if V.shape[1] == 3:
        kernel = _jit.select_kernels("auto", _compiled, "block_levenberg_marquardt")
        if kernel is not None:  # the damping and _inverse3 in one compiled loop
            Vinv = np.empty(V.shape)
            kernel(np.ascontiguousarray(V, dtype=float), float(lam), Vinv)
            return Vinv
    V = V + lam * np.maximum(np.einsum("nii->ni", V), 1e-12)[:, :, None] * np.eye(V.shape[1])
    return _inverse3(V) if V.shape[1] == 3 else np.linalg.inv(V)


def _schur(U, V, W, eg, ep, lam):
    """:func:`reduced_normal_equations` from :func:`_normal_blocks`."""
    if lam:
        U = U + lam * np.diag(np.maximum(np.diag(U), 1e-12))
    Vinv = _damped_inverse(V, lam)
    WV = W @ Vinv
    # Sums over the points as one matrix product each: (G, N b) x (N b, G).
    size = W.shape[0] * W.shape[2]
    WV2 = np.swapaxes(WV, 0, 1).reshape(len(U), size)
    S = U - WV2 @ np.swapaxes(W, 0, 1).reshape(len(U), size).T
    if eg is None:
        return S, np.zeros(len(S)), Vinv, WV
    return S, eg - WV2 @ ep.reshape(-1), Vinv, WV


def block_levenberg_marquardt(
    fun: Callable[[np.ndarray, np.ndarray], np.ndarray],
    g0: np.ndarray,
    p0: np.ndarray,
    jac: Callable | None = None,
    *,
    max_iterations: int = 100,
    tol: float = 1e-10,
    lam0: float = 1e-3,
) -> BlockLMResult:
    """Minimise ``0.5 * sum(fun(g, p)**2)`` over globals ``g`` (G,) and blocks ``p`` (N, b).

    Parameters
    ----------
    fun : callable
        ``fun(g, p) -> (N, m)`` residual blocks.
    g0 : (G,) ndarray
    p0 : (N, b) ndarray
    jac : callable, optional
        ``jac(g, p) -> (Jg (N, m, G), Jp (N, m, b))``; forward differences when omitted.
    max_iterations : int
    tol : float
        Stop when the relative decrease of the cost or the relative step falls below it.

    Returns
    -------
    BlockLMResult
    """
    g = np.asarray(g0, dtype=float).copy()
    p = np.asarray(p0, dtype=float).copy()
    r = fun(g, p)
    cost = 0.5 * float(np.sum(r * r))
    lam = lam0
    converged = False
    it = 0
    G = len(g)
    for it in range(1, max_iterations + 1):  # noqa: B007
        if jac is None:
            Jg, Jp = numeric_block_jacobian(fun, g, p, r)
        else:
            Jg, Jp = jac(g, p)
        U, V, W, eg, ep = _normal_blocks(Jg, Jp, r)
        improved = False
        for _ in range(12):
            S, rhs, Vinv, _ = _schur(U, V, W, eg, ep, lam)
            try:
                dg = np.linalg.solve(S, rhs) if G else np.zeros(0)
            except np.linalg.LinAlgError:
                lam *= 10
                continue
            dp = (Vinv @ (ep - dg @ W)[..., None])[..., 0]
            g_new, p_new = g - dg, p - dp
            r_new = fun(g_new, p_new)
            cost_new = 0.5 * float(np.sum(r_new * r_new))
            if np.isfinite(cost_new) and cost_new < cost:
                rel = (cost - cost_new) / max(cost, 1e-300)
                step = np.sqrt(np.sum(dg * dg) + np.sum(dp * dp))
                size = np.sqrt(np.sum(g * g) + np.sum(p * p)) + 1e-300
                g, p, r, cost = g_new, p_new, r_new, cost_new
                lam = max(lam / 3, 1e-12)
                improved = True
                if rel < tol or step < tol * size:
                    converged = True
                break
            lam *= 10
        if not improved:
            converged = True  # no descent direction left at this damping: a minimum
            break
        if converged:
            break
    return BlockLMResult(g, p, r, cost, it, converged)


def batch_damped_steps(J, r, lam):
    r"""Levenberg--Marquardt steps of a batch of independent small problems.

    .. math:: \delta_k = -(J_k J_k^\top + \lambda_k \operatorname{diag}(J_k J_k^\top))^{-1}
              J_k r_k

    Parameters
    ----------
    J : (K, p, m) ndarray
        Jacobians, transposed (one row per parameter).
    r : (K, m) ndarray
        Residuals.
    lam : (K,) ndarray
        Damping of each problem (Marquardt's scaling of the diagonal).

    Returns
    -------
    steps : (K, p) ndarray

    Examples
    --------
    >>> J = np.array([[[1.0, 0.0], [0.0, 2.0]]])
    >>> batch_damped_steps(J, np.array([[1.0, 1.0]]), np.array([0.0]))
    array([[-1. , -0.5]])
    """
    return batch_damped_solve(J @ np.swapaxes(J, 1, 2), (J @ r[..., None])[..., 0], lam)


def batch_damped_solve(H, g, lam):
    r"""Levenberg--Marquardt steps from the normal equations of a batch of small problems.

    .. math:: \delta_k = -(H_k + \lambda_k \operatorname{diag}(H_k))^{-1} g_k ,
              \qquad H_k = J_k J_k^\top, \quad g_k = J_k r_k

    (:func:`batch_damped_steps` with the products already formed, e.g. accumulated over
    blocks of residuals that are never held at once).

    Parameters
    ----------
    H : (K, p, p) ndarray
    g : (K, p) ndarray
    lam : (K,) ndarray

    Returns
    -------
    steps : (K, p) ndarray

    Examples
    --------
    >>> batch_damped_solve(np.array([[[1.0, 0.0], [0.0, 4.0]]]), np.array([[1.0, 2.0]]),
    ...                    np.array([0.0]))
    array([[-1. , -0.5]])
    """
    A = np.array(H, dtype=float)
    diagonal = A.reshape(len(A), -1)[:, :: A.shape[1] + 1]  # a view of the diagonals
    diagonal += lam[:, None] * (diagonal + 1e-12)
    return -np.linalg.solve(A, g[..., None])[..., 0]


def batch_accept(cost, new_cost, lam, rel_tol, old, new):
    """Keep the steps that lowered the cost, adapt the damping, tell which problems are done.

    The damping falls by 3 after a successful step and grows by 10 after a failed one (as in
    :func:`block_levenberg_marquardt`); a problem is done when its relative decrease is below
    ``rel_tol`` or its damping has grown past any useful step.

    Parameters
    ----------
    cost, new_cost, lam : (K,) ndarray
    rel_tol : float
    old, new : tuple of ndarray
        States before and after the step, each with the batch as first axis.

    Returns
    -------
    state : tuple of ndarray
        ``new`` where the cost decreased, ``old`` elsewhere.
    cost, lam : (K,) ndarray
    done : (K,) bool ndarray

    Examples
    --------
    >>> state, cost, lam, done = batch_accept(np.array([2.0, 2.0]), np.array([1.0, 3.0]),
    ...                                       np.array([1.0, 1.0]), 1e-9, (np.zeros(2),),
    ...                                       (np.ones(2),))
    >>> state[0], cost, lam
    (array([1., 0.]), array([1., 2.]), array([ 0.33333333, 10.        ]))
    """
    ok = new_cost < cost
    done = ~ok & (lam > 1e6) | ok & (cost - new_cost <= rel_tol * cost)
    state = tuple(np.where(ok.reshape(-1, *[1] * (o.ndim - 1)), n, o)
                  for o, n in zip(old, new, strict=True))
    return state, np.where(ok, new_cost, cost), np.where(ok, lam / 3, lam * 10), done


def batch_levenberg_marquardt(residuals, jacobian, retract, state, *, iterations: int,
                              rel_tol: float, lam0: float = 1e-3):
    """Levenberg--Marquardt on a batch of ``K`` independent small problems, vectorised.

    Each step is :func:`batch_damped_steps`, kept per problem by :func:`batch_accept` when it
    lowers the sum of squared residuals; the loop ends when every problem is done or after
    ``iterations`` steps.

    Parameters
    ----------
    residuals : callable
        ``residuals(state) -> (r, state)``: the residuals ``(K, m)`` of a state (a tuple of
        arrays, each with the batch as first axis) and the state completed with what they
        determine (e.g. parameters eliminated in closed form; the same number of arrays
        whatever the input).
    jacobian : callable
        ``jacobian(state, r) -> (K, p, m)``: Jacobians at ``state``, transposed (one row per
        parameter), given its residuals ``r``.
    retract : callable
        ``retract(state, steps) -> state``: the state moved by the steps ``(K, p)``.
    state : tuple of ndarray
        Starting state.
    iterations : int
        Maximum number of steps.
    rel_tol : float
        A problem is done when a step lowers its cost by less than this fraction.
    lam0 : float
        Initial damping.

    Returns
    -------
    state : tuple of ndarray
    r : (K, m) ndarray
    cost : (K,) ndarray
        Sums of squared residuals.

    Examples
    --------
    Two problems ``min (x - a)^2 + (2 x - 2 a)^2`` at once:

    >>> a = np.array([1.0, -3.0])
    >>> def residuals(state):
    ...     return np.stack([state[0] - a, 2 * state[0] - 2 * a], axis=1), state
    >>> def jacobian(state, r):
    ...     return np.tile([[[1.0, 2.0]]], (len(r), 1, 1))
    >>> (x,), r, cost = batch_levenberg_marquardt(residuals, jacobian,
    ...                                           lambda s, d: (s[0] + d[:, 0],),
    ...                                           (np.zeros(2),), iterations=50, rel_tol=1e-12)
    >>> np.round(x, 6)
    array([ 1., -3.])
    """
    iterations = check_positive_int("iterations", iterations, minimum=0)
    r, state = residuals(tuple(state))
    cost = np.einsum("km,km->k", r, r)
    lam = np.full(len(r), lam0)
    for _ in range(iterations):
        r_new, new = residuals(retract(state, batch_damped_steps(jacobian(state, r), r, lam)))
        (r, *state), cost, lam, done = batch_accept(
            cost, np.einsum("km,km->k", r_new, r_new), lam, rel_tol, (r, *state), (r_new, *new))
        state = tuple(state)
        if done.all():
            break
    return state, r, cost


def batch_levenberg_marquardt_normal(cost, normal, retract, state, *, iterations: int,
                                     rel_tol: float, lam0: float = 1e-3, fused=None):
    """Levenberg--Marquardt on a batch of ``K`` independent small problems given by their
    costs and normal equations, on the problems not yet done.

    As :func:`batch_levenberg_marquardt`, for problems whose residuals are too many to hold
    (they are reduced as they are computed, e.g. in blocks) and whose costs differ in price:
    each step is :func:`batch_damped_solve`, kept per problem by :func:`batch_accept`; a
    problem that is done (its step lowered the cost by less than ``rel_tol``, or no step at
    any useful damping lowers it) leaves the batch and keeps its state, and the normal
    equations are formed again only for the problems whose step was kept.

    Parameters
    ----------
    cost : callable
        ``cost(state, rows) -> (k,)``: sums of squared residuals of the problems ``rows``
        (indices into the batch, ``(k,)``) at ``state``, their part of the batch.
    normal : callable
        ``normal(state, rows) -> (H (k, p, p), g (k, p))``: ``J J^T`` and ``J r`` of the
        problems ``rows`` at ``state`` (``J`` the Jacobian, transposed, of the residuals
        ``r``).
    retract : callable
        ``retract(state, steps) -> state``: the state moved by the steps ``(k, p)``.
    state : tuple of ndarray
        Starting state, each array with the batch as first axis (copied).
    iterations : int
        Maximum number of steps.
    rel_tol : float
    lam0 : float
        Initial damping.
    fused : callable, optional
        ``fused(state, rows) -> (cost, H, g)``: both at once, for problems whose normal
        equations cost little more than their residuals. Every trial step is then evaluated
        by it (the normal equations of a kept step come with its cost, at the price of
        forming them also for the steps that are not kept and for the last step of each
        problem); ``cost`` and ``normal`` are not called (pass None).

    Returns
    -------
    state : tuple of ndarray
    cost : (K,) ndarray

    Examples
    --------
    Two problems ``min (x - a)^2 + (2 x - 2 a)^2`` at once:

    >>> a = np.array([1.0, -3.0])
    >>> def cost(state, rows):
    ...     return 5 * (state[0] - a[rows]) ** 2
    >>> def normal(state, rows):
    ...     return np.full((len(rows), 1, 1), 5.0), 5 * (state[0] - a[rows])[:, None]
    >>> (x,), c = batch_levenberg_marquardt_normal(cost, normal,
    ...                                            lambda s, d: (s[0] + d[:, 0],),
    ...                                            (np.zeros(2),), iterations=50,
    ...                                            rel_tol=1e-12)
    >>> np.round(x, 6)
    array([ 1., -3.])

    The same with the cost and the normal equations from one function:

    >>> def fused(state, rows):
    ...     return cost(state, rows), *normal(state, rows)
    >>> (y,), c = batch_levenberg_marquardt_normal(None, None,
    ...                                            lambda s, d: (s[0] + d[:, 0],),
    ...                                            (np.zeros(2),), iterations=50,
    ...                                            rel_tol=1e-12, fused=fused)
    >>> bool(np.array_equal(x, y))
    True
    """
    iterations = check_positive_int("iterations", iterations, minimum=0)
    state = tuple(np.array(s, dtype=float) for s in state)
    active = np.arange(len(state[0]))
    if fused is None:
        costs = np.asarray(cost(state, active), dtype=float).copy()
        H, g = (np.array(x, dtype=float) for x in normal(state, active))
    else:
        costs, H, g = (np.array(x, dtype=float) for x in fused(state, active))
    lam = np.full(len(active), lam0)
    for _ in range(iterations):
        if not len(active):
            break
        old = tuple(s[active] for s in state)
        new = retract(old, batch_damped_solve(H[active], g[active], lam[active]))
        if fused is None:
            new_cost = cost(new, active)
        else:
            new_cost, H_new, g_new = fused(new, active)
        ok = new_cost < costs[active]
        kept, costs[active], lam[active], done = batch_accept(
            costs[active], new_cost, lam[active], rel_tol, old, new)
        for s, k in zip(state, kept, strict=True):
            s[active] = k
        go_on = ok & ~done
        again = active[go_on]
        if len(again) and fused is None:
            H[again], g[again] = normal(tuple(s[again] for s in state), again)
        elif len(again):
            H[again], g[again] = H_new[go_on], g_new[go_on]
        active = active[~done]
    return state, costs
