r"""Escape from a nearly degenerate model: search the family of tensors its inliers leave open.

When most correspondences lie on one plane (or the scene is otherwise close to a degenerate
configuration), a linear fit of a sample of mostly planar points is one member of the family
of tensors that fits the plane, and local optimisation gathers the plane's points together
with a handful of outliers that happen to fit that member. The result can hold an apparently
well-determined model while missing every off-plane inlier: its support is large, a sample
with enough off-plane inliers to leave the family is rare among the loop's samples (at 40%
outliers and 15-point samples a few in 10,000), and such a sample, fitted to noisy points,
scores worse than the optimised wrong model and is never optimised itself.

The inliers of such a model determine the tensor only through the few outliers and off-plane
points among them. Rows of the design matrix with a high *leverage* on the weakly determined
directions (the eigenvectors of the Gram matrix just above the least one) are exactly those
points; without them the least eigenvectors span the family
:math:`f = B a`, :math:`B \in \mathbb{R}^{16 \times k}`, that fits the rest, and the true tensor
lies in it. A few correspondences the model leaves out then fix the member: ``k - 1`` of them
give ``k - 1`` linear equations in ``a`` (samples of 2-4 points instead of 15, so an off-plane
sample is found in tens of draws; for a pencil, ``k = 2``, every left-out point votes for the
member it fixes, a Hough transform of the pencil), and the best members are locally optimised
on all points as in the loop.

The pencil matters beyond degenerate scenes: every noisy fit leaves one weak direction, and
local optimisation moves along it only as far as the model's own inliers pull it. When the
correspondences that fix it lie beyond the threshold, the model stays in a fixed point that
misses them (noise of 1.2-1.5 px and half of the points on one plane: 3-13% of the inliers
missed).

This is the idea of DEGENSAC (Chum, Werner and Matas, CVPR 2005: complete a homography by
plane-and-parallax samples) with the homography replaced by the linear family of tensors that
the degenerate part of the data leaves, which needs no model of the degeneracy.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import _jit
from ..robust import msac_loss, required_iterations, sample_indices
from .linear import (
    compiled_row_kernels,
    denormalize_rows_into,
    denormalize_with,
    eigen_tall,
    eigen_tall_into,
    pairwise_sum,
)
from .tensor import sampson_rows_into

__all__ = ["family_members", "pencil_votes", "search_family", "weak_family"]

#: Directions above the least eigenvector whose leverage marks a row as holding the model.
WEAK_DIRECTIONS = 5
#: A row is left out when its leverage on those directions exceeds this many times the average.
LEVERAGE_FACTOR = 10.0
#: Fewest inliers of a model whose family is searched (at least four correspondences that
#: the model leaves out are needed too: a sample of the largest family's). On outlier-free
#: sweep scenes of 37 and 55 correspondences, 75-80% of them on one plane, LMedS's model was
#: the plane's, with 26 and 44 inliers and 8-9 correspondences far from it; a search that
#: needed 32 inliers and 15 far correspondences never ran, and the estimate failed as
#: undetermined.
MIN_INLIERS = 24
#: Largest family searched (samples of ``k - 1`` points): five-dimensional, the family of a
#: plane with noise-free points.
MAX_FAMILY = 5
#: Eigenvalues of the Gram matrix within this factor of the least one belong to the family
#: (squared singular values: 10 times the least singular value). A model held by a few
#: outliers leaves three to five such directions once they are left out (singular values
#: 1.3-7 times the least on the scenes where the loop was caught); a model that its inliers
#: determine leaves one or none (the next singular value 3-9 times, then 15-60 times).
FAMILY_GAP = 100.0
#: Smallest family searched: a pencil (one weak direction). Local optimisation moves along a
#: pencil only as far as the inliers it already has pull it; when the correspondences that fix
#: that direction lie beyond the threshold of the model, it stays (on sweep scenes with noise
#: of 1.2-1.5 px and half of the points on one plane, the loop's model missed 3-13% of the
#: inliers, at 1-7 thresholds, with a truncated loss 1.1-1.6 times the maximum-likelihood
#: tensor's). One left-out point then fixes each member.
MIN_FAMILY = 2
#: A member of a pencil is optimised only when it explains at least this fraction of the
#: model's inliers among the correspondences the model leaves out. On well-posed scenes every
#: fit leaves a pencil at the noise level, whose members add at most 0.6% (and optimise back
#: to the model, at 3 ms each); the members that led to better models added 4-16%.
PENCIL_NEW_SUPPORT = 0.02
#: The pencil's members are voted for by every left-out point (:func:`pencil_votes`): bins of
#: its angle (2 degrees each), and the densest windows whose members are scored.
PENCIL_BINS = 90
PENCIL_MODES = 4
#: Members whose loss before optimisation is within this factor of the model's are optimised
#: (on the dominant-plane scenes measured, the members that optimised to the true tensor
#: scored 1.03-1.06 times the loop model's loss before their optimisation; members far worse
#: rarely end better, and optimising them costs most of the search).
OPTIMISE_WITHIN = 1.5
#: The weak family of more inliers than this is that of every ``k``-th of them (at most this
#: many), and each inlier's leverage on it marks the ones that hold the model: the weak
#: directions are a property of the scene, which 2,000 rows determine (the 300-scene sweep,
#: up to 2,000 correspondences, is not thinned), while their eigenbasis, found again after
#: each round of left-out rows, costs two passes over every row (at 10,000 correspondences,
#: 7,000 inliers, a tenth of the estimate).
FAMILY_ROWS = 2000


def weak_family(design, *, rounds: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eigenbasis of the design rows without the rows that hold its weak directions.

    Parameters
    ----------
    design : (n, 16) ndarray
        Rows of the (normalised) design matrix of a model's inliers.
    rounds : int
        Times the leverage test is repeated (outliers mask each other's leverage).

    Returns
    -------
    V : (16, 16) ndarray
        Right singular vectors of the kept rows, by increasing singular value.
    w : (16,) ndarray
        Their squared singular values.
    kept : (n,) bool ndarray
        Rows kept: leverage ``sum_j (d_i . v_j / s_j)^2`` over the ``WEAK_DIRECTIONS``
        directions above the least one at most ``LEVERAGE_FACTOR`` times its average.

    Examples
    --------
    >>> import numpy as np
    >>> D = np.random.default_rng(0).normal(size=(200, 16))
    >>> V, w, kept = weak_family(D)
    >>> V.shape, bool(np.all(np.diff(w) >= 0)), kept.shape
    ((16, 16), True, (200,))
    """
    design = np.asarray(design, dtype=float)
    if design.ndim != 2 or design.shape[1] != 16 or len(design) < 16:
        raise ValueError(f"design must have shape (n, 16) with n >= 16, got {design.shape}")
    kept = np.ones(len(design), bool)
    if _jit.USE_NUMBA and _compiled_family():  # the same steps in one compiled call
        V, w = np.empty((16, 16)), np.empty(16)
        _nb_weak_family(np.ascontiguousarray(design), rounds, WEAK_DIRECTIONS,
                        LEVERAGE_FACTOR, V, w, kept, *_jit.lapack_routines("dsyrk", "dgemm"))
        return V, w, kept
    V, w = eigen_tall(design)
    for _ in range(rounds):
        idx = np.flatnonzero(kept)
        rows = design if len(idx) == len(design) else design[idx]
        drop = _holds_weak_directions(rows, V, w, len(idx))
        if not drop.any() or len(idx) - np.count_nonzero(drop) < 2 * 16:
            break
        kept[idx[drop]] = False
        V, w = eigen_tall(design[kept])
    return V, w, kept


def _holds_weak_directions(rows, V, w, count) -> np.ndarray:
    """Rows whose leverage ``sum_j (d_i . v_j / s_j)^2`` on the ``WEAK_DIRECTIONS`` directions
    above the least one of the eigenbasis ``V, w`` exceeds ``LEVERAGE_FACTOR`` times its
    average over ``count`` rows."""
    weak = slice(1, 1 + WEAK_DIRECTIONS)
    Y = (rows @ V[:, weak]) / np.sqrt(np.maximum(w[weak], np.finfo(float).tiny))
    return np.einsum("ij,ij->i", Y, Y) > LEVERAGE_FACTOR * WEAK_DIRECTIONS / count


def _nb_weak_family(design, rounds, directions, factor, V, w, kept, syrk,
                    gemm):  # pragma: no cover - compiled
    """:func:`weak_family` of the C-contiguous ``design`` into ``V``, ``w`` and ``kept`` (all
    True on entry) with ``directions`` weak directions and the leverage ``factor`` (for numba,
    :func:`_compiled_family`): :func:`~xslit.epipolar.linear.eigen_tall_into` of the kept
    rows, and :func:`_holds_weak_directions`' products of the rows with the weak directions
    as numpy's ``dgemm`` makes them, their squares summed in turn (``einsum``'s to
    rounding)."""
    n = design.shape[0]
    rows = np.empty(n, np.intp)
    for i in range(n):
        rows[i] = i
    count = n
    D = np.empty((n, 16))
    Y = np.empty((n, directions))
    drop = np.empty(n, np.bool_)
    eigen_tall_into(design, V, w, syrk)
    scale = np.empty(directions)
    trans = np.array([78], np.uint8)  # "N"
    width, ld, ldy = (np.array([directions], np.int32), np.array([16], np.int32),
                      np.array([directions], np.int32))
    one, zero = np.array([1.0]), np.array([0.0])
    source = design
    for _ in range(rounds):
        for j in range(directions):
            scale[j] = np.sqrt(max(w[1 + j], np.finfo(np.float64).tiny))
        # rows @ V[:, 1:1 + directions] as numpy calls BLAS for it (row-major: the product's
        # transpose is V[:, weak]^T rows^T, V's weak columns from its second entry on)
        height = np.array([count], np.int32)
        call_routine(gemm, (trans.ctypes.data, trans.ctypes.data, width.ctypes.data,
                            height.ctypes.data, ld.ctypes.data, one.ctypes.data,
                            V[0, 1:].ctypes.data, ld.ctypes.data, source.ctypes.data,
                            ld.ctypes.data, zero.ctypes.data, Y.ctypes.data, ldy.ctypes.data))
        limit = factor * directions / count
        dropped = 0
        for i in range(count):
            h = 0.0
            for j in range(directions):
                p = Y[i, j] / scale[j]
                h += p * p
            drop[i] = h > limit
            dropped += drop[i]
        if dropped == 0 or count - dropped < 2 * 16:
            break
        m = 0
        for i in range(count):
            if drop[i]:
                kept[rows[i]] = False
            else:
                rows[m] = rows[i]
                for k in range(16):
                    D[m, k] = design[rows[i], k]
                m += 1
        count = m
        source = D
        eigen_tall_into(D[:count], V, w, syrk)


#: The call of a BLAS routine by its address in the compiled kernels (bound by
#: :func:`_compiled_family`; :func:`xslit._jit.routine_caller`).
call_routine = None


@functools.cache
def _compiled_family() -> bool:
    """Compile :func:`_nb_weak_family`, :func:`_nb_pencil_votes` and :func:`_nb_pencil_pool`
    with the kernels of :mod:`xslit.epipolar.linear` and :mod:`xslit.epipolar.tensor` they
    call (the module's names then hold the compiled kernels); False when numba cannot be
    imported."""
    return compiled_row_kernels() and _jit.compile_kernels(
        globals(), ("eigen_tall_into", "denormalize_rows_into", "pairwise_sum",
                    "sampson_rows_into", "_nb_weak_family", "_nb_pencil_votes",
                    "_nb_pencil_pool"))


def family_members(rows, basis) -> np.ndarray:
    """Members ``f = B a`` of a family that satisfy ``k - 1`` linear equations each.

    Parameters
    ----------
    rows : (M, k - 1, 16) ndarray
        Design rows of the samples.
    basis : (16, k) ndarray
        Orthonormal basis ``B`` of the family.

    Returns
    -------
    (M, 16) ndarray
        Unit tensors ``B a`` with ``rows B a = 0`` (the least right singular vector of
        ``rows B``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> B = np.linalg.qr(rng.normal(size=(16, 3)))[0]
    >>> rows = rng.normal(size=(4, 2, 16))
    >>> f = family_members(rows, B)
    >>> bool(np.allclose(np.einsum("mij,mj->mi", rows, f), 0))
    True
    """
    coeffs = np.linalg.svd(rows @ basis)[2][:, -1, :]
    return coeffs @ basis.T


def search_family(problem, model, threshold: float, rng, *, optimise, rounds: int = 4,
                  confidence: float = 0.99, max_samples: int = 512, batch: int = 64,
                  subset: int = 256, n_optimised: int = 3):
    """Look for a better model in the family of tensors that ``model``'s inliers leave open,
    repeatedly from each better model found.

    Each round: the weak family of the inliers (:func:`weak_family`). Its pencil (the two
    least directions) is searched by a vote of every left-out point (far from the model, or
    an inlier that held it) for the member it fixes (:func:`pencil_votes`); each larger
    family of dimension ``k = 3 .. 5`` within :data:`FAMILY_GAP` by members fixed by
    ``k - 1`` left-out points (half of the samples from the quarter nearest the model),
    drawn until a better member would have been found with probability ``confidence`` (for
    the best fraction of left-out points a member explains) or ``max_samples`` are drawn.
    The ``n_optimised`` members of lowest truncated quadratic (MSAC) loss are optimised (a
    pencil's only when they explain :data:`PENCIL_NEW_SUPPORT` of the model's inliers among
    the points it leaves out), and the best of them is kept when its loss is below the
    model's. A better model starts the next round (its own inliers leave a different
    family), up to ``rounds``.

    Parameters
    ----------
    problem : EpipolarProblem
        The loop's problem (``design``, ``model_from_normalized``, ``residuals``).
    model : (2, 2, 2, 2) ndarray
        The loop's model (a tensor of the problem's centred pixels).
    threshold : float
        Inlier threshold, in the units of ``problem.residuals``.
    rng : numpy.random.Generator
    optimise : callable
        ``optimise(model, inliers) -> model or None``: local optimisation on all points (the
        loop's annealed iterated least squares).
    rounds : int
    confidence : float
    max_samples, batch : int
        Samples per family dimension (3 to 5) and round, drawn ``batch`` at a time. On a
        sweep scene with 63% outliers and 77% of the points on one plane, whose better member
        needs 4 of the left-out points that are its inliers (11% of them, 25% of the nearest
        quarter), 256 found it about one time in two.
    subset : int
        Members are ranked on this many random correspondences; the best two of each batch
        are scored on all.
    n_optimised : int

    Returns
    -------
    model, inliers : ndarray and (n,) bool ndarray, or None and None when no member beats
    ``model``.
    """
    best = best_inl = None
    for _ in range(rounds):
        found, inliers = _search_round(problem, model if best is None else best, threshold,
                                       rng, optimise, confidence, max_samples, batch, subset,
                                       n_optimised)
        if found is None:
            break
        best, best_inl = found, inliers
    return best, best_inl


def pencil_votes(rows, basis, *, bins: int = PENCIL_BINS, modes: int = PENCIL_MODES
                 ) -> np.ndarray:
    """Members of the pencil ``f = B (cos a, sin a)`` on which the most ``rows`` agree.

    Each row fixes one member (the angle ``a`` at which it is satisfied, modulo pi). The
    correspondences that fix a better member than the model agree on its angle, up to their
    noise, where outliers scatter: the angles are voted into ``bins`` bins (a Hough transform
    of the pencil, with every row counted, and no draws), and the members at the median angle
    of the ``modes`` densest windows of three bins that share no bin are returned, densest
    first.

    Parameters
    ----------
    rows : (M, 16) ndarray
        Design rows of the voting correspondences.
    basis : (16, 2) ndarray
        Orthonormal basis ``B`` of the pencil.
    bins, modes : int

    Returns
    -------
    (m, 16) ndarray
        Unit members, ``m = modes`` or fewer when fewer windows hold votes.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(2)
    >>> B = np.linalg.qr(rng.normal(size=(16, 2)))[0]
    >>> f = B @ [np.cos(1.0), np.sin(1.0)]
    >>> rows = rng.normal(size=(30, 16))
    >>> rows -= np.outer(rows @ f, f)  # satisfied by f
    >>> members = pencil_votes(np.vstack([rows, rng.normal(size=(30, 16))]), B)
    >>> bool(abs(members[0] @ f) > 1 - 1e-9)
    True
    """
    y = rows @ basis  # y . (cos a, sin a) = 0
    if _jit.USE_NUMBA and _compiled_family():  # the same steps in one compiled call
        members = np.empty((modes, len(basis)))
        found = _nb_pencil_votes(np.ascontiguousarray(y), np.ascontiguousarray(basis), bins,
                                 modes, members)
        return members[:found]
    angle = np.mod(np.arctan2(y[:, 0], -y[:, 1]), np.pi)
    k = np.minimum((angle / np.pi * bins).astype(int), bins - 1)
    counts = np.bincount(k, minlength=bins)
    window = counts.copy()  # counts + np.roll(counts, 1) + np.roll(counts, -1), without roll
    window[1:] += counts[:-1]
    window[0] += counts[-1]
    window[:-1] += counts[1:]
    window[-1] += counts[0]
    members = []
    counts_by_window = window.tolist()
    shared = [False] * bins  # windows that share a bin with a chosen one hold the same votes
    for b in np.argsort(-window, kind="stable").tolist():
        if counts_by_window[b] == 0 or len(members) == modes:
            break
        if shared[b]:
            continue
        for c in range(b - 2, b + 3):
            shared[c % bins] = True
        near = np.abs(((k - b + bins // 2) % bins) - bins // 2) <= 1
        # The median of the window's angles about the bin's centre (modulo pi): the few
        # random votes that fall in it do not move it.
        centre = (b + 0.5) * np.pi / bins
        a = centre + _median(np.mod(angle[near] - centre + np.pi / 2, np.pi) - np.pi / 2)
        members.append(basis @ np.array([np.cos(a), np.sin(a)]))
    return np.array(members)


def _nb_pencil_votes(y, basis, bins, modes, members):  # pragma: no cover - compiled
    """:func:`pencil_votes` from the projections ``y`` (M, 2) of the rows on the ``basis``
    (16, 2), into ``members`` (modes, 16); returns how many were found (for numba,
    :func:`_compiled_family`). The numpy code's steps (arctan2, sin and cos from libm: equal to
    rounding)."""
    n_rows = y.shape[0]
    angle = np.empty(n_rows)
    k = np.empty(n_rows, np.int64)
    counts = np.zeros(bins, np.int64)
    for i in range(n_rows):
        a = np.arctan2(y[i, 0], -y[i, 1]) % np.pi
        b = min(int(a / np.pi * bins), bins - 1)
        angle[i], k[i] = a, b
        counts[b] += 1
    window = counts.copy()
    window[1:] += counts[:-1]
    window[0] += counts[-1]
    window[:-1] += counts[1:]
    window[-1] += counts[0]
    shared = np.zeros(bins, np.bool_)
    values = np.empty(n_rows)
    found = 0
    for b in np.argsort(-window, kind="mergesort"):
        if window[b] == 0 or found == modes:
            break
        if shared[b]:
            continue
        for c in range(b - 2, b + 3):
            shared[c % bins] = True
        centre = (b + 0.5) * np.pi / bins
        m = 0
        for i in range(n_rows):
            if abs(((k[i] - b + bins // 2) % bins) - bins // 2) <= 1:
                values[m] = (angle[i] - centre + np.pi / 2) % np.pi - np.pi / 2
                m += 1
        v = np.sort(values[:m])
        h = m // 2
        a = centre + (v[h] if m % 2 else (v[h - 1] + v[h]) / 2.0)
        ca, sa = np.cos(a), np.sin(a)
        for j in range(basis.shape[0]):
            members[found, j] = basis[j, 0] * ca + basis[j, 1] * sa
        found += 1
    return found


def _nb_pencil_pool(design, candidates, V, K, a, c, x, y, xp, yp, verify, inl, threshold,
                    bins, modes, new_support, members, losses, inside,
                    gemm):  # pragma: no cover - compiled
    """The pencil's step of :func:`_search_round` in one call (for numba,
    :func:`_compiled_family`): the members that the ``candidates`` vote for
    (:func:`pencil_votes` of their design rows on the two least directions of ``V``, the
    product as numpy's ``dgemm``), mapped by ``K`` (:func:`denormalize_with`), ranked by their
    truncated loss on the correspondences ``verify`` (all when empty), and the best two
    scored on all: their tensors into ``members`` (2, 16), their losses into ``losses`` (2,)
    (infinite for a member that explains fewer than ``new_support`` times the inliers ``inl``
    among the correspondences it leaves out) and their inliers into ``inside`` (2, N). The
    Sampson distances of :class:`~xslit.epipolar.tensor.SampsonRows` (rows ``a``, ``c``,
    coordinates ``x, y, x', y'``) and the sums of :func:`~xslit.robust.msac_loss` in numpy's
    order: the numbers of the numpy steps. Returns how many members were scored."""
    m = candidates.shape[0]
    rows = np.empty((m, 16))
    for i in range(m):
        for k in range(16):
            rows[i, k] = design[candidates[i], k]
    # rows @ V[:, :2] as numpy calls BLAS for it (row-major: proj^T = V[:, :2]^T rows^T)
    proj = np.empty((m, 2))
    trans = np.array([78], np.uint8)  # "N"
    two, count, ld = np.array([2], np.int32), np.array([m], np.int32), np.array([16], np.int32)
    one, zero = np.array([1.0]), np.array([0.0])
    call_routine(gemm, (trans.ctypes.data, trans.ctypes.data, two.ctypes.data,
                        count.ctypes.data, ld.ctypes.data, one.ctypes.data, V.ctypes.data,
                        ld.ctypes.data, rows.ctypes.data, ld.ctypes.data, zero.ctypes.data,
                        proj.ctypes.data, two.ctypes.data))
    voted = np.empty((modes, 16))
    found = _nb_pencil_votes(proj, np.ascontiguousarray(V[:, :2]), bins, modes, voted)
    F = np.empty((found, 16))
    denormalize_rows_into(voted[:found], K, F)
    t2 = threshold * threshold
    n_all = x.shape[0]
    nv = verify.shape[0]
    if nv == 0:  # ranked on all correspondences
        nv, av, cv, xv, yv, xpv, ypv = n_all, a, c, x, y, xp, yp
    else:
        av, cv = np.empty((4, nv)), np.empty((4, nv))
        xv, yv, xpv, ypv = np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv)
        for i in range(nv):
            j = verify[i]
            for k in range(4):
                av[k, i] = a[k, j]
                cv[k, i] = c[k, j]
            xv[i], yv[i], xpv[i], ypv[i] = x[j], y[j], xp[j], yp[j]
    d, g = np.empty((found, nv)), np.empty((found, nv))
    sampson_rows_into(F.reshape(found, 4, 4), av, cv, xv, yv, xpv, ypv, False, d, g)
    q = np.empty(max(nv, n_all))
    ranking = np.empty(found)
    for b in range(found):
        for i in range(nv):
            q[i] = min(d[b, i] * d[b, i], t2)
        ranking[b] = pairwise_sum(q, nv)
    ranked = np.argsort(ranking, kind="mergesort")[:2]
    scored = ranked.shape[0]
    for r in range(scored):
        members[r] = F[ranked[r]]
    d, g = np.empty((scored, n_all)), np.empty((scored, n_all))
    sampson_rows_into(members[:scored].reshape(scored, 4, 4), a, c, x, y, xp, yp, False, d,
                      g)
    support = 0
    for i in range(n_all):
        support += inl[i]
    for r in range(scored):
        new = 0
        for i in range(n_all):
            inside[r, i] = d[r, i] < threshold
            new += inside[r, i] and not inl[i]
            q[i] = min(d[r, i] * d[r, i], t2)
        losses[r] = pairwise_sum(q, n_all) if new >= new_support * support else np.inf
    return scored


def _median(values) -> float:
    """``np.median`` of a non-empty 1-D array of finite numbers, with its arithmetic (the
    middle value, or the mean ``(a + b) / 2`` of the two middle ones) without its dispatch."""
    v = np.sort(values)
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2.0


def _search_round(problem, model, threshold, rng, optimise, confidence, max_samples, batch,
                  subset, n_optimised):
    """One round of :func:`search_family`."""
    r0 = problem.residuals(np.asarray(model)[None])[0]
    inl = r0 < threshold
    n = len(r0)
    if np.count_nonzero(inl) < MIN_INLIERS:
        return None, None
    design = problem.design
    rows = np.flatnonzero(inl)
    fitted = rows[::-(-len(rows) // FAMILY_ROWS)]
    V, w, kept = weak_family(design[fitted])
    left = np.zeros(n, bool)
    left[fitted[~kept]] = True
    if len(fitted) < len(rows):  # the leverage of every inlier on the weak directions
        left[rows[_holds_weak_directions(design[rows], V, w, np.count_nonzero(kept))]] = True
    # Points far from the model (beyond its noise tail) and the inliers that held it.
    candidates = np.flatnonzero(left | (r0 > 3.0 * threshold))
    if len(candidates) < MAX_FAMILY - 1:
        return None, None
    k_max = int(min(MAX_FAMILY, np.count_nonzero(w < FAMILY_GAP * w[0])))
    if k_max < MIN_FAMILY:
        return None, None
    verify = rng.choice(n, subset, replace=False) if n > 2 * subset else None
    best_loss = float(msac_loss(r0, threshold))
    pool_loss, pool, pool_inliers = [], [], []

    def score(members, pencil):
        """The two best ``members`` by their loss on ``verify`` into the pool; the largest
        fraction of the candidates that one of them explains."""
        ranked = np.argsort(msac_loss(problem.residuals(members, verify), threshold))[:2]
        r = problem.residuals(members[ranked])
        loss = msac_loss(r, threshold)
        if pencil:  # only members that reach correspondences the model leaves out
            new = np.count_nonzero((r < threshold) & ~inl, axis=1)
            loss = np.where(new >= PENCIL_NEW_SUPPORT * np.count_nonzero(inl), loss, np.inf)
        pool_loss.extend(loss)
        pool.extend(members[ranked])
        pool_inliers.extend(r < threshold)
        return float(np.max(np.count_nonzero(r[:, candidates] < threshold, axis=1))
                     / len(candidates))

    if _jit.USE_NUMBA and _compiled_family():  # the same steps in one compiled call
        rows = problem.sampson_rows
        members, losses, inside = np.empty((2, 16)), np.empty(2), np.empty((2, n), bool)
        scored = _nb_pencil_pool(
            design, candidates, V, problem.model_from_normalized, rows.a, rows.c, rows.x,
            rows.y, rows.xp, rows.yp, np.empty(0, np.intp) if verify is None else verify, inl,
            threshold, PENCIL_BINS, PENCIL_MODES, PENCIL_NEW_SUPPORT, members, losses, inside,
            *_jit.lapack_routines("dgemm"))
        pool_loss.extend(losses[:scored])
        pool.extend(members[:scored].reshape(scored, 2, 2, 2, 2))
        pool_inliers.extend(inside[:scored])
    else:
        score(denormalize_with(pencil_votes(design[candidates], V[:, :2]),
                               problem.model_from_normalized), pencil=True)
    # Half of each batch is drawn from the quarter of the candidates nearest the model: the
    # inliers it misses are nearer than outliers (on two sweep scenes they were 23% and 11%
    # of the candidates, and 58% and 25% of that quarter).
    if k_max >= 3:
        quarter = max(len(candidates) // 4, MAX_FAMILY)
        nearest = candidates[np.argsort(r0[candidates], kind="stable")[:quarter]]
    for k in range(3, k_max + 1):
        basis, m = V[:, :k], k - 1
        drawn, needed, explained = 0, float(max_samples), 0.0
        while drawn < min(needed, max_samples):
            picks = np.concatenate([
                candidates[sample_indices(rng, len(candidates), m, batch - batch // 2)],
                nearest[sample_indices(rng, len(nearest), m, batch // 2)]])
            members = denormalize_with(family_members(design[picks], basis),
                                       problem.model_from_normalized)
            drawn += batch
            explained = max(explained, score(members, pencil=False))
            needed = required_iterations(explained, m, confidence)
    best = best_inl = None
    for j in np.argsort(pool_loss)[:n_optimised]:
        if pool_loss[j] > OPTIMISE_WITHIN * best_loss:
            break
        refined = optimise(pool[j], pool_inliers[j])
        if refined is None:
            continue
        r = problem.residuals(refined[None])[0]
        loss = float(msac_loss(r, threshold))
        if loss < best_loss:
            best, best_loss, best_inl = refined, loss, r < threshold
    return best, best_inl
