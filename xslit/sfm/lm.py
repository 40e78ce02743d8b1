r"""Levenberg-Marquardt for problems with global parameters and independent point blocks.

The structure of bundle adjustment (Triggs et al., "Bundle adjustment - a modern synthesis",
2000, section 6): parameters split into ``G`` global ones (cameras) and ``N`` blocks of ``b``
point parameters; the residual block ``r_i`` (``m`` entries) depends on the globals and on
block ``i`` only. Each step solves the damped normal equations through the Schur complement
of the block-diagonal point part, so one iteration costs ``O(N)``, vectorised over points.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["BlockLMResult", "block_levenberg_marquardt", "numeric_block_jacobian"]


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
    G, b = len(g), p.shape[1]
    for it in range(1, max_iterations + 1):  # noqa: B007
        if jac is None:
            Jg, Jp = numeric_block_jacobian(fun, g, p, r)
        else:
            Jg, Jp = jac(g, p)
        U = np.einsum("nmi,nmj->ij", Jg, Jg)
        V = np.einsum("nmi,nmj->nij", Jp, Jp)
        W = np.einsum("nmi,nmj->nij", Jg, Jp)  # (N, G, b)
        eg = np.einsum("nmi,nm->i", Jg, r)
        ep = np.einsum("nmi,nm->ni", Jp, r)
        improved = False
        for _ in range(12):
            Ud = U + lam * np.diag(np.maximum(np.diag(U), 1e-12))
            Vd = V + lam * np.maximum(np.einsum("nii->ni", V), 1e-12)[:, :, None] * np.eye(b)
            Vinv = np.linalg.inv(Vd)
            WV = np.einsum("nij,njk->nik", W, Vinv)  # (N, G, b)
            S = Ud - np.einsum("nik,njk->ij", WV, W)
            rhs = eg - np.einsum("nik,nk->i", WV, ep)
            try:
                dg = np.linalg.solve(S, rhs) if G else np.zeros(0)
            except np.linalg.LinAlgError:
                lam *= 10
                continue
            dp = np.einsum("nij,nj->ni", Vinv, ep - np.einsum("nij,i->nj", W, dg))
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
