r"""Maximum-likelihood polishing of an epipolar tensor on the variety of epipolar tensors.

A linear estimate (section 4, "Linear SfM") lives in the 15-dimensional projective space of
all :math:`2 \times 2 \times 2 \times 2` tensors; the epipolar tensors of camera pairs form a
13-dimensional variety in it: the signed principal minors of a :math:`4 \times 4` matrix
:math:`C` (Theorem 1 and its proof in appendix C),

.. math:: F_{ijkl} = (-1)^{|S|} \det C[S, S], \qquad S = \{m : \text{index}_m = 1\},

where :math:`C` is defined up to a diagonal similarity :math:`D^{-1} C D` (3 degrees of
freedom: 16 - 3 = 13). :func:`refine_on_variety` minimises the sum of squared Sampson
distances (in pixels) of the inliers over :math:`C` by Levenberg--Marquardt, so the returned
tensor is exactly the tensor of a camera pair and fits the data as well as that model allows.

Starts matter: the Sampson cost has local minima, and the two candidates of the appendix
algorithm that reproduce the unused entries of a *linear* estimate best are not always in
the basin of the optimum (a linear estimate is off the variety). All eight candidate matrices
of the algorithm are used as starts, read off in several affine frames of the image axes
(each shift of the origin gives a different principal-minor read-off of the same tensor),
polished briefly on a subset of the inliers; the best ones are polished to convergence on all
of them, and the winner is chosen by its truncated (MSAC) Sampson loss on all
correspondences.

Residuals are evaluated in centred and scaled image coordinates (per axis) with the gradient
converted back to pixels, so the distances are in pixels and no precision is lost on large
pixel offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .linear import normalize_axes
from .minors import candidate_matrices, principal_minor_jacobian, principal_minor_tensor
from .tensor import (
    SampsonRows,
    kron_modes,
    sampson_distance_op,
    sampson_jacobian_op,
    sampson_operator,
)

__all__ = ["VarietyFit", "refine_on_variety"]

#: Affine frames (shifts of the origin, in units of each axis' spread) in which the candidate
#: matrices are read off: the empty minor ``f_2222`` is the residual of the correspondence at
#: the origin, small when the origin nearly corresponds (the centroids of both images often
#: do), and each frame gives different starts.
_FRAME_SHIFTS = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [3.0, 0.0, 0.0, -3.0],
                          [0.0, 3.0, -3.0, 3.0]])


@dataclass
class VarietyFit:
    """Result of :func:`refine_on_variety`."""

    #: (2, 2, 2, 2) tensor in pixels, unit Frobenius norm, exactly on the variety.
    F: np.ndarray
    #: (N,) Sampson distances of all correspondences to ``F``, in pixels.
    distances: np.ndarray
    #: (N,) bool: the correspondences the final fit used.
    inliers: np.ndarray
    #: Root mean square Sampson distance of ``inliers``.
    rms: float


class _Residuals:
    """Sampson distances in pixels of tensors given in normalised coordinates, and their
    derivatives: :func:`~xslit.epipolar.tensor.sampson_distance_op` and
    :func:`~xslit.epipolar.tensor.sampson_jacobian_op` with the gradient rows of the
    operator scaled to pixels (``x_n = s (x - m)`` gives ``de/dx = s de/dx_n``)."""

    def __init__(self, normalized, scales):
        G = sampson_operator(np.stack(normalized[:2], axis=1), np.stack(normalized[2:], axis=1))
        G[1:] *= np.asarray(scales, dtype=float)[:, None, None]
        self.G = G

    def subset(self, rows):
        sub = object.__new__(_Residuals)
        sub.G = np.ascontiguousarray(self.G[:, rows])
        return sub

    def distances(self, f):
        """Signed distances ``(B, N)`` of tensors ``f`` ``(B, 16)``."""
        return sampson_distance_op(self.G, f, signed=True)

    def jacobian(self, f):
        """Distances ``(B, N)`` and their derivatives ``(B, N, 16)`` with respect to ``f``."""
        return sampson_jacobian_op(self.G, f)


def _balance(C):
    """A diagonal similarity of each ``C`` (batched) with balanced off-diagonal row and column
    norms: the same principal minors, better conditioned steps."""
    C = C.copy()
    for _ in range(3):
        off = C * (1.0 - np.eye(4))
        r = np.sqrt(np.einsum("bij,bij->bi", off, off))
        c = np.sqrt(np.einsum("bji,bji->bi", off, off))
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.sqrt(np.where((r > 0) & (c > 0), r / c, 1.0))
        d = np.clip(np.where(np.isfinite(d), d, 1.0), 1e-6, 1e6)
        C = C * d[:, None, :] / d[:, :, None]
    return C


def _levenberg_marquardt(res, C, K, iterations, tol=1e-7):
    """Batched Levenberg--Marquardt on ``C`` ``(B, 4, 4)`` minimising the squared distances of
    ``res`` of the tensors ``minors(C) @ K`` (``K`` ``(B, 16, 16)``, frame to normalised
    coordinates). Returns ``C`` and the costs ``(B,)``."""
    B = len(C)
    f, Jc = principal_minor_jacobian(C)
    d, Jd = res.jacobian(_apply(f, K))
    cost = np.einsum("bn,bn->b", d, d)
    lam = np.full(B, 1e-4)
    active = np.ones(B, bool)
    for _ in range(iterations):
        Jf = Jc @ K  # (B, 16 params, 16 entries)
        J = Jd @ np.swapaxes(Jf, 1, 2)  # (B, N, 16)
        H = np.swapaxes(J, 1, 2) @ J
        g = np.einsum("bnp,bn->bp", J, d)
        diag = np.einsum("bpp->bp", H)
        A = H + lam[:, None, None] * (np.eye(16) * (diag[:, None, :] + 1e-12 * diag.max(
            axis=1, keepdims=True)[:, None, :]))
        try:
            step = -np.linalg.solve(A, g[..., None])[..., 0]
        except np.linalg.LinAlgError:
            step = -np.linalg.lstsq(A[0], g[0], rcond=None)[0][None] if B == 1 else \
                np.zeros_like(g)
        step[~active] = 0.0
        Cn = C + step.reshape(B, 4, 4)
        fn, Jcn = principal_minor_jacobian(Cn)
        dn, Jdn = res.jacobian(_apply(fn, K))
        new = np.einsum("bn,bn->b", dn, dn)
        ok = (new < cost) & active & np.isfinite(new)
        conv = ok & (cost - new <= tol * cost) & (lam <= 1e-2)
        stuck = ~ok & active & (lam > 1e8)
        C = np.where(ok[:, None, None], Cn, C)
        Jc = np.where(ok[:, None, None], Jcn, Jc)
        d = np.where(ok[:, None], dn, d)
        Jd = np.where(ok[:, None, None], Jdn, Jd)
        cost = np.where(ok, new, cost)
        lam = np.where(ok, lam / 4.0, lam * 8.0)
        active &= ~(conv | stuck)
        if not active.any():
            break
    return C, cost


def _starts(f_n, frames_K):
    """Candidate matrices (balanced) and their frame maps for the normalised tensor ``f_n``."""
    Cs, Ks = [], []
    for Kg in frames_K:
        fg = f_n @ np.linalg.inv(Kg)
        if abs(fg[-1]) < 1e-10 * np.abs(fg).max():
            continue
        with np.errstate(all="ignore"):
            C, _ = candidate_matrices(fg.reshape(2, 2, 2, 2))
        good = np.all(np.isfinite(C), axis=(1, 2)) & (np.abs(C).max(axis=(1, 2)) < 1e8)
        Cs.append(C[good])
        Ks.extend([Kg] * int(good.sum()))
    if not Ks:
        return np.zeros((0, 4, 4)), np.zeros((0, 16, 16))
    return _balance(np.concatenate(Cs)), np.stack(Ks)


def _apply(f, K):
    """Row-wise products ``f[b] @ K[b]`` of ``f`` ``(B, 16)`` and ``K`` ``(B, 16, 16)``."""
    return (f[:, None, :] @ K)[:, 0]


def _msac(d, threshold):
    return np.minimum(d * d, threshold * threshold).sum(axis=-1)


def refine_on_variety(F, points1, points2, inliers=None, threshold=None, *, rng=0,
                      frame=None, subset_size: int = 400, n_starts: int = 2,
                      iterations: int = 20, rounds: int = 3) -> VarietyFit:
    r"""Polish a tensor (typically a linear estimate) to the maximum-likelihood tensor on the
    variety of epipolar tensors, by the Sampson distance.

    .. math:: \min_C \sum_{i \in \text{inliers}} d_i(F(C))^2, \qquad
              d_i = \frac{e_i}{\lVert \nabla e_i \rVert}

    with :math:`F(C)` the signed principal minors of :math:`C` (Theorem 1) and :math:`d_i` the
    Sampson distance of correspondence :math:`i` in pixels.

    Parameters
    ----------
    F : (2, 2, 2, 2) array_like
        Starting tensor, in pixels or in the coordinates of ``frame`` (need not be on the
        variety).
    points1, points2 : (N, 2) ndarray
        Correspondences, in pixels.
    inliers : (N,) bool array_like, optional
        Correspondences to fit (default all).
    threshold : float, optional
        Inlier threshold in pixels: the inlier set is re-selected from all correspondences
        after each round (up to ``rounds``), and starts are compared by their truncated
        quadratic (MSAC) loss. Without it, ``inliers`` is kept and starts are compared by
        their sum of squared distances on it.
    rng : None, int or numpy.random.Generator
        Chooses the subset of the inliers on which the starts are polished.
    frame : (4, 2, 2) array_like, optional
        Per-axis maps ``[x_f, 1] = frame[k] @ [x, 1]`` of the coordinates ``F`` is given in
        (default: pixels). A start in normalised coordinates keeps its precision when the
        pixel coordinates are large.
    subset_size, n_starts, iterations, rounds : int
        Size of that subset (the polish is finished by a few iterations on all the inliers),
        starts polished on it (the best of the candidates on 128 of its rows), iterations of
        Levenberg--Marquardt per polish, re-selections of the inlier set.

    Returns
    -------
    VarietyFit

    Raises
    ------
    ValueError
        When fewer than 13 correspondences are fitted, or ``F`` has no finite principal-minor
        matrix in any frame.

    Examples
    --------
    >>> import xslit
    >>> from xslit.synthetic import random_two_view_scene
    >>> s = random_two_view_scene(3, 100)
    >>> F0 = xslit.computeEpipolarTensor(s['camera1'], s['camera2'])
    >>> fit = refine_on_variety(F0, s['points1'], s['points2'])
    >>> bool(fit.rms < 1e-6)
    True
    """
    from .._checks import check_rng

    rng = check_rng(rng)
    p1, p2 = np.asarray(points1, dtype=float), np.asarray(points2, dtype=float)
    n = len(p1)
    inl = np.ones(n, bool) if inliers is None else np.asarray(inliers, bool).copy()
    idx = np.flatnonzero(inl)
    if len(idx) < 13:
        raise ValueError(f"inliers: the tensor has 13 degrees of freedom, got {len(idx)} "
                         "correspondences")
    Ts, normed = normalize_axes(p1, p2, robust=True)
    T = np.stack(Ts)
    normed = np.stack(normed)
    scales = T[:, 0, 0]
    K_n = kron_modes(*T)  # a pixel tensor is f = f_n @ K_n
    if frame is None:
        f_n = np.asarray(F, dtype=float).reshape(16) @ np.linalg.inv(K_n)
    else:  # f_n = f_frame @ kron(frame T^-1)
        f_n = np.asarray(F, dtype=float).reshape(16) @ kron_modes(
            *(np.asarray(frame, dtype=float) @ np.linalg.inv(T)))
    f_n /= np.linalg.norm(f_n)
    # Distances of all correspondences: SampsonRows on the pixels centred on the medians (the
    # tensor of the centred pixels is f_n @ kron(diag(s_k, 1))).
    centred = normed / scales[:, None]
    rows = SampsonRows(centred[:2].T, centred[2:].T)
    K_c = kron_modes(*[np.diag([sk, 1.0]) for sk in scales])

    def all_distances(C, Kf):
        f = _apply(principal_minor_tensor(C).reshape(-1, 16), Kf) @ K_c
        return np.abs(rows.distances(f))

    frames = [kron_modes(*_shift_maps(shift)) for shift in _FRAME_SHIFTS]
    C, Kf = _starts(f_n, frames)
    if len(C) == 0:
        raise ValueError("F: no finite principal-minor matrix in any frame (the tensor is "
                         "degenerate: it is not near the tensor of a camera pair)")

    def residuals_of(rows_idx):
        if len(rows_idx) > subset_size:
            rows_idx = np.sort(rng.choice(rows_idx, subset_size, replace=False))
        return _Residuals(normed[:, rows_idx], scales), rows_idx

    res, sub = residuals_of(idx)
    # Starts ranked on a few of the rows, the best few polished on the subset.
    d0 = res.subset(slice(0, 128)).distances(
        _apply(principal_minor_tensor(C).reshape(-1, 16), Kf))
    keep = np.argsort(np.einsum("bn,bn->b", d0, d0))[:n_starts]
    C, Kf = C[keep], Kf[keep]
    C, cost = _levenberg_marquardt(res, C, Kf, iterations=iterations)
    k = int(np.argmin(cost))
    C, Kf = _balance(C[k:k + 1]), Kf[k:k + 1]
    for round_ in range(max(rounds, 1)):
        if len(sub) < len(idx):  # finish on all the inliers
            C, _ = _levenberg_marquardt(_Residuals(normed[:, idx], scales), C, Kf,
                                           iterations=4)
        d = all_distances(C, Kf)[0]
        if threshold is None:
            break
        new = d < threshold
        if np.array_equal(new, inl) or new.sum() < 13 or round_ == max(rounds, 1) - 1:
            break
        inl, idx = new, np.flatnonzero(new)
        res, sub = residuals_of(idx)
        C, _ = _levenberg_marquardt(res, C, Kf, iterations=iterations // 2)
    if threshold is not None:
        inl = d < threshold
    f = (principal_minor_tensor(C[0]).reshape(16) @ Kf[0]) @ K_n
    f /= np.linalg.norm(f)
    rms = float(np.sqrt(np.mean(d[inl] ** 2))) if inl.any() else np.inf
    return VarietyFit(f.reshape(2, 2, 2, 2), d, inl, rms)


def _shift_maps(shift):
    """The four maps ``[x + shift_k, 1] = S_k [x, 1]``, (4, 2, 2)."""
    S = np.tile(np.eye(2), (4, 1, 1))
    S[:, 0, 1] = shift
    return S
