r"""Linear estimation of the epipolar tensor from :math:`N \ge 15` correspondences (section 4).

Each correspondence gives one linear equation in the 16 entries of :math:`F` (eq. (22)); the
estimate is the right singular vector of least singular value of the design matrix, computed
on pixels normalised per axis (:math:`x \mapsto s(x - m)` separately for
:math:`x, y, x', y'`, which keeps the model: it is a :math:`2 \times 2` change of each
:math:`A`) and de-normalised by contracting each tensor mode with its :math:`2 \times 2`
matrix.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import _jit
from .._checks import check_array, check_batch, check_finite, check_point_pair
from .tensor import kron_modes, sampson_rows_into

__all__ = [
    "MIN_LINEAR_POINTS",
    "axis_normalization",
    "best_sample_fit",
    "compiled_row_kernels",
    "conditioning_from_eigenvalues",
    "denormalize",
    "denormalize_rows_into",
    "denormalize_with",
    "design_rows",
    "eigen_tall",
    "eigen_tall_into",
    "gram_pass",
    "inverse_iteration",
    "iterated_taubin_fits",
    "least_eigenvector",
    "minimal_null_vectors",
    "normalize_axes",
    "null_vector_tall",
    "pairwise_sum",
    "pulled_rows",
    "refine_pass",
    "robust_axis_normalization",
    "sample_inverse_iteration",
    "solve_linear",
    "solve_linear_batch",
    "solve_taubin",
    "taubin_basis",
    "taubin_basis_from_design",
    "taubin_fit",
    "taubin_fit_from_design",
    "taubin_gradient_moments",
    "taubin_matrices",
    "taubin_matrices_from_design",
    "weighted_leverage",
]

#: Correspondences needed by the linear solver (15 equations for 16 unknowns up to scale).
MIN_LINEAR_POINTS = 15


def axis_normalization(values) -> np.ndarray:
    r"""The :math:`2 \times 2` matrix ``T`` with ``T @ [v, 1] = [s (v - m), 1]``.

    ``m`` is the mean and ``s`` makes the mean absolute deviation 1, for ``values`` of shape
    ``(..., N)`` (batched: result ``(..., 2, 2)``).

    Parameters
    ----------
    values : (..., N) array_like
        Coordinates along one image axis, N >= 1.
    """
    v = check_array("values", values)
    if v.ndim < 1 or v.shape[-1] < 1:
        raise ValueError(f"values must have shape (..., N) with N >= 1, got {v.shape}")
    check_finite("values", v)
    m = v.mean(axis=-1)
    s = 1.0 / np.maximum(np.abs(v - m[..., None]).mean(axis=-1), 1e-12)
    T = np.zeros((*v.shape[:-1], 2, 2))
    T[..., 0, 0] = s
    T[..., 0, 1] = -s * m
    T[..., 1, 1] = 1.0
    return T


#: Values per axis on which :func:`robust_axis_normalization` measures its centre and spread:
#: more are evenly thinned to at most this many. A normalisation needs no more precision than
#: 2,000 values give (the estimates that use it do not depend on it but through rounding and
#: their conditioning tests), while the two selections over 10,000 values per axis cost 4% of
#: the robust estimate of the epipolar tensor.
NORMALIZATION_VALUES = 2000


def robust_axis_normalization(values) -> np.ndarray:
    r"""The :math:`2 \times 2` matrix ``T`` with ``T @ [v, 1] = [s (v - m), 1]``, robust to
    gross outliers.

    ``m`` is the median and ``1 / s`` the mean absolute deviation from it of the 80% of the
    values closest to it, so a few wild values (a 1e12 pixel among ordinary ones) neither
    move the origin nor collapse the other values to one point. Both are measured on at most
    :data:`NORMALIZATION_VALUES` values (every ``k``-th). Batched over leading axes of
    ``values`` ``(..., N)``: result ``(..., 2, 2)``.
    """
    v = np.asarray(values, dtype=float)
    n = v.shape[-1]
    sample = v if n <= NORMALIZATION_VALUES else v[..., ::-(-n // NORMALIZATION_VALUES)]
    keep = max(1, int(np.ceil(0.8 * sample.shape[-1])))
    if v.ndim == 2 and n > 0 and _jit.USE_NUMBA and compiled_row_kernels():
        # One compiled pass per row: the same numbers as below.
        m, spread = np.empty(len(v)), np.empty(len(v))
        _nb_robust_spread(np.ascontiguousarray(sample), keep, m, spread)
    else:
        m = np.median(sample, axis=-1)
        # The keep-th least deviation by selection (linear time), not by a sort; the ones
        # below it summed in their order (the others adding zeros), the ones equal to it as a
        # multiple of it.
        dev = np.abs(sample - m[..., None])
        t = np.partition(dev, keep - 1, axis=-1)[..., keep - 1, None]
        below = dev < t
        total = np.add.accumulate(np.where(below, dev, 0.0), axis=-1)[..., -1]
        spread = (total + (keep - np.count_nonzero(below, axis=-1)) * t[..., 0]) / keep
    if not np.all(spread > 0):  # most values equal: the largest deviation of them all
        top = np.abs(v - m[..., None]).max(axis=-1)
        spread = np.where(spread > 0, spread, np.maximum(top, 1e-12))
    s = 1.0 / np.where(spread > 0, spread, 1.0)
    T = np.zeros((*v.shape[:-1], 2, 2))
    T[..., 0, 0] = s
    T[..., 0, 1] = -s * m
    T[..., 1, 1] = 1.0
    return T


def normalize_axes(points1, points2, robust: bool = False):
    """Normalising matrices of the four axes ``x, y, x', y'`` and the normalised coordinates.

    Parameters
    ----------
    points1, points2 : (..., N, 2) ndarray
    robust : bool
        :func:`robust_axis_normalization` (median, trimmed deviation) instead of
        :func:`axis_normalization` (mean, mean absolute deviation).

    Returns
    -------
    T : list of four (..., 2, 2) ndarray
        ``[x_n, 1] = T[k] @ [x, 1]`` for each axis.
    normalized : list of four (..., N) ndarray
    """
    cols = np.array([points1[..., 0], points1[..., 1], points2[..., 0], points2[..., 1]])
    T = (robust_axis_normalization if robust else axis_normalization)(cols)  # (4, ..., 2, 2)
    normed = T[..., 0, 0, None] * cols + T[..., 0, 1, None]
    return list(T), list(normed)



def design_rows(x, y, xp, yp) -> np.ndarray:
    """Rows ``kron([x,1], [y,1], [x',1], [y',1])`` of coordinates ``(..., n)``: ``(..., n, 16)``.

    One broadcast product of ``kron([x,1], [y,1]) = [xy, x, y, 1]`` and its primed twin, with
    the points on the last axis (long inner loops), then one transposing copy: the same
    numbers as :func:`design_matrix`. With numba, one-dimensional coordinates are written
    row by row in one compiled pass (:func:`_nb_design_rows`, the same products), without
    the ``(16, n)`` temporary and its transposing copy.
    """
    if np.ndim(x) == 1 and _jit.USE_NUMBA and compiled_row_kernels():
        coords = [np.ascontiguousarray(v, dtype=float) for v in (x, y, xp, yp)]
        D = np.empty((len(coords[0]), 16))
        _nb_design_rows(*coords, D)
        return D
    one = np.ones_like(x)
    ab = np.stack([x * y, x, y, one])
    cd = np.stack([xp * yp, xp, yp, one])
    D = (ab[:, None] * cd[None]).reshape(16, *x.shape)
    return np.moveaxis(D, 0, -1).copy()


def denormalize(fn, Ts) -> np.ndarray:
    """Tensors ``(..., 16)`` of normalised pixels back to pixels (``contract_modes``) with unit
    Frobenius norm, as ``(..., 2, 2, 2, 2)``: one product with ``kron(T1, T2, T3, T4)``."""
    return denormalize_with(fn, kron_modes(*Ts))


def denormalize_with(fn, K) -> np.ndarray:
    """:func:`denormalize` with the precomputed ``K = kron_modes(T1, T2, T3, T4)``. With
    numba, one compiled call for one tensor or a stack of them and one ``K`` (16, 16)
    (:func:`denormalize_rows_into`: the same BLAS product per tensor and the same sum of
    squares, bit for bit)."""
    if (np.ndim(fn) in (1, 2) and np.shape(K) == (16, 16) and _jit.USE_NUMBA
            and compiled_row_kernels()):
        F = np.empty(np.shape(fn))
        denormalize_rows_into(np.ascontiguousarray(fn, dtype=float).reshape(-1, 16),
                              np.ascontiguousarray(K, dtype=float), F.reshape(-1, 16))
        return F.reshape(*F.shape[:-1], 2, 2, 2, 2)
    F = (fn[..., None, :] @ K)[..., 0, :]
    F /= np.sqrt(np.add.reduce(F * F, axis=-1, keepdims=True))  # np.linalg.norm's arithmetic
    return F.reshape(*F.shape[:-1], 2, 2, 2, 2)


def eigen_tall(D) -> tuple[np.ndarray, np.ndarray]:
    """Right singular vectors and squared singular values of ``D`` (..., n, 16), ascending,
    without an n x 16 SVD.

    Eigenvectors ``V`` of the Gram matrix ``D^T D`` (a BLAS product) are accurate to
    ``eps * cond(D)^2``; a second pass on ``Y = D V`` (eigenvectors of ``Y^T Y``, which is
    nearly diagonal) brings the error back to the ``eps * cond(D)`` of an SVD, the same
    one-sided refinement as a Jacobi sweep. Several times faster than ``svd`` for n >> 16.
    (:func:`gram_pass` alone is the first pass, for candidates that are refined later.)
    With numba, one compiled call for one matrix (:func:`eigen_tall_into`: numpy's BLAS and
    LAPACK calls for the first pass, Jacobi rotations for the nearly diagonal second one:
    the same numbers to rounding).
    """
    if np.ndim(D) == 2 and _jit.USE_NUMBA and compiled_row_kernels():
        V, w = np.empty((16, 16)), np.empty(16)
        eigen_tall_into(np.ascontiguousarray(D, dtype=float), V, w,
                        *_jit.lapack_routines("dsyrk"))
        return V, w
    V, _, Y = gram_pass(D)
    V, w, _ = refine_pass(V, Y)
    return V, w


def gram_pass(D, out=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """First pass of :func:`eigen_tall`: eigenvectors ``V`` and eigenvalues ``w`` (ascending)
    of ``D^T D`` and the projections ``Y = D V`` of the rows (written to ``out`` if given)."""
    w, V = np.linalg.eigh(np.swapaxes(D, -1, -2) @ D)
    return V, np.maximum(w, 0.0), np.matmul(D, V, out=out)


def refine_pass(V, Y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Second pass of :func:`eigen_tall` from ``V, Y`` of :func:`gram_pass`: the refined
    vectors ``V V2``, their squared singular values and the rotation ``V2`` (the projections on
    the refined vectors are ``Y V2``)."""
    w, V2 = np.linalg.eigh(np.swapaxes(Y, -1, -2) @ Y)  # ascending
    return V @ V2, np.maximum(w, 0.0), V2


def conditioning_from_eigenvalues(w) -> np.ndarray | float:
    """``s_15 / s_1`` (second smallest over largest singular value) from ascending ``s^2``."""
    if np.ndim(w) == 1:  # one fit: plain floats (a few numpy calls on 16 numbers cost more)
        # w[1] is >= 0 but for rounding (a tensor family: a zero eigenvalue to rounding)
        return math.sqrt(max(w[1], 0.0) / w[15]) if w[15] > 0 else 0.0
    s = np.sqrt(np.maximum(w, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(s[..., 15] > 0, s[..., 1] / s[..., 15], 0.0)
    return float(cond) if np.ndim(cond) == 0 else cond


def least_eigenvector(G) -> tuple[np.ndarray, float]:
    """Least eigenvector of a symmetric positive semi-definite ``G`` (16, 16) and the lower
    bound ``sqrt(w_1 / trace G)`` of ``s_1 / s_15`` (within a factor 4, as
    ``w_15 <= trace G <= 16 w_15``), for fits that are fitted again.

    LAPACK's ``dsyevr`` computes only the two least eigenpairs: about half the cost of a full
    ``eigh`` (batched ``eigh`` is no faster per matrix at this size).
    """
    from scipy.linalg.lapack import dsyevr  # not at import: scipy.linalg takes 0.2 s to load

    w, z, _, _, info = dsyevr(G, range="I", il=1, iu=2)
    if info != 0:
        raise np.linalg.LinAlgError(f"dsyevr did not converge (info {info})")
    tr = G.trace()
    return z[:, 0], (math.sqrt(max(w[1], 0.0) / tr) if tr > 0 else 0.0)


def inverse_iteration(G, start, steps: int = 8) -> np.ndarray:
    """Least eigenvectors (B, 16) of symmetric positive semi-definite ``G`` (B, 16, 16) by
    inverse iteration from ``start`` (16,), a vector near all of them.

    Each step divides the error by ``w_1 / w_0`` (10 to 20 for a noisy fit of 100 rows), so
    8 steps converge to about 1e-9 also from a distant start (a poor minimal model); the
    shift ``1e-12 trace G`` keeps exactly singular matrices (noise-free rows) invertible
    without moving the eigenvectors. One batched inverse and small products cost about half
    of batched ``eigh`` at this size.
    """
    shift = 1e-12 * np.trace(G, axis1=1, axis2=2)
    H = np.linalg.inv(G + shift[:, None, None] * np.eye(16))  # symmetric: x H = (H x)^T
    if _jit.USE_NUMBA and compiled_row_kernels():  # the steps in one compiled call
        out = np.empty((len(G), 16))
        _nb_inverse_steps(H, np.ascontiguousarray(start, dtype=float).reshape(16), steps, out)
        return out
    x = np.broadcast_to(start, (len(G), 1, 16))
    for i in range(steps):
        x = x @ H
        if i % 4 == 3 or i == steps - 1:  # growth at most 1e12 per step: rescaled every 4th
            x = x / np.sqrt(np.add.reduce(x * x, axis=-1, keepdims=True))  # the norm
    return x[:, 0]


def sample_inverse_iteration(design, samples, start, steps: int = 8) -> np.ndarray:
    """:func:`inverse_iteration` on the Gram matrices of samples of design rows: the least
    eigenvectors (B, 16) of ``D_b^T D_b`` with ``D_b = design[samples[b]]``.

    With numba, one compiled call (:func:`_nb_sample_inverse_iteration`) that gathers each
    sample's rows, forms their Gram matrix with ``dsyrk`` and inverts it with numba's LAPACK
    (to rounding: numpy inverts by ``dgesv`` against the identity); the vectors then agree to
    the rounding of the steps.

    Parameters
    ----------
    design : (N, 16) ndarray
        C-contiguous design rows.
    samples : (B, m) int ndarray
        Row indices of each sample.
    start : (16,) ndarray
        A vector near all the eigenvectors.
    steps : int
    """
    if _jit.USE_NUMBA and compiled_row_kernels():
        samples = np.asarray(samples, dtype=np.intp)
        out = np.empty((len(samples), 16))
        _nb_sample_inverse_iteration(design, samples,
                                     np.ascontiguousarray(start, dtype=float).reshape(16),
                                     steps, out, *_jit.lapack_routines("dsyrk"))
        return out
    D = design[samples]
    return inverse_iteration(np.swapaxes(D, 1, 2) @ D, start, steps)


def _nb_nearly_diagonal_eigh(A):  # pragma: no cover - compiled
    """``eigh`` of a symmetric ``A`` (n, n) that is diagonal up to rounding (the Gram matrix
    of the second pass of :func:`eigen_tall`, ``V^T G V`` for eigenvectors ``V`` of ``G``):
    cyclic Jacobi rotations (Golub and Van Loan, section 8.5), which converge in one or two
    sweeps from there, and as accurately as LAPACK for the small eigenvalues (relative to
    each, where LAPACK's tridiagonal reduction is accurate relative to the largest), at a
    fifth of ``dsyevd``'s cost at n = 16. Eigenvalues ascending, the columns of the rotation
    in their order; ``np.linalg.eigh`` when five sweeps do not converge."""
    n = A.shape[0]
    a = A.copy()
    V = np.eye(n)
    converged = False
    for _ in range(5):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = a[p, q]
                if abs(apq) <= 1e-18 * np.sqrt(abs(a[p, p] * a[q, q])) or apq == 0.0:
                    continue
                rotated = True
                theta = (a[q, q] - a[p, p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + np.sqrt(1.0 + theta * theta))
                if theta < 0.0:
                    t = -t
                c = 1.0 / np.sqrt(1.0 + t * t)
                s = t * c
                for k in range(n):  # A <- A J (columns p, q)
                    akp, akq = a[k, p], a[k, q]
                    a[k, p], a[k, q] = c * akp - s * akq, s * akp + c * akq
                for k in range(n):  # A <- J^T A (rows p, q)
                    apk, aqk = a[p, k], a[q, k]
                    a[p, k], a[q, k] = c * apk - s * aqk, s * apk + c * aqk
                for k in range(n):
                    vkp, vkq = V[k, p], V[k, q]
                    V[k, p], V[k, q] = c * vkp - s * vkq, s * vkp + c * vkq
        if not rotated:
            converged = True
            break
    if not converged:
        return np.linalg.eigh(A)
    w = np.empty(n)
    for i in range(n):
        w[i] = a[i, i]
    order = np.argsort(w, kind="mergesort")
    return w[order], np.ascontiguousarray(V[:, order])


def eigen_tall_into(D, V, w, syrk):  # pragma: no cover - compiled
    """:func:`eigen_tall` of one C-contiguous matrix ``D`` (n, 16) into ``V`` (16, 16) and
    ``w`` (16,), ``syrk`` the address of BLAS's ``dsyrk`` (:func:`xslit._jit.lapack_routines`)
    (for numba, :func:`compiled_row_kernels`; kernels of other modules call it compiled after
    that): :func:`_nb_gram` for ``D^T D`` and ``Y^T Y`` (``dsyrk``, as numpy), ``eigh`` and
    the products as :func:`_nb_leverage` makes them."""
    _, V1 = np.linalg.eigh(_nb_gram(D, syrk))
    Y = np.dot(D, V1)
    w2, V2 = _nb_nearly_diagonal_eigh(_nb_gram(Y, syrk))
    V[:] = np.dot(V1, np.ascontiguousarray(V2))
    for j in range(16):
        w[j] = max(w2[j], 0.0)


def _nb_sample_inverse_iteration(design, samples, start, steps, out,
                                 syrk):  # pragma: no cover - compiled
    """:func:`sample_inverse_iteration` into ``out`` (B, 16) (for numba,
    :func:`compiled_row_kernels`): per sample the rows gathered, :func:`_nb_gram`, the
    shifted inverse of :func:`inverse_iteration`, then :func:`_nb_inverse_steps`."""
    m = samples.shape[1]
    D = np.empty((m, 16))
    H = np.empty((samples.shape[0], 16, 16))
    for b in range(samples.shape[0]):
        for i in range(m):
            for j in range(16):
                D[i, j] = design[samples[b, i], j]
        G = _nb_gram(D, syrk)
        shift = 0.0
        for i in range(16):
            shift += G[i, i]
        shift *= 1e-12
        for i in range(16):
            G[i, i] += shift
        H[b] = np.linalg.inv(G)
    _nb_inverse_steps(H, start, steps, out)


def null_vector_tall(D) -> tuple[np.ndarray, float]:
    """Least right singular vector of ``D`` (..., n, 16) and ``s_15 / s_1`` (:func:`eigen_tall`).
    """
    V, w = eigen_tall(D)
    return V[..., :, 0], conditioning_from_eigenvalues(w)


#: Samples that :func:`minimal_null_vectors` factors side by side in its compiled pass (the
#: robust loop's batch): each step of Householder's QR is then one operation over this many
#: samples, which the compiler vectorises (2.2x faster than one sample at a time).
NULL_LANES = 64


def minimal_null_vectors(D, tol, samples=None) -> tuple[np.ndarray, np.ndarray]:
    """Null vectors of a batch of normalised 15 x 16 design matrices and whether
    ``s_15 / s_1 > tol``.

    The null vector of each ``D`` is the last column of the complete QR factor of ``D^T``
    (Householder, as backward stable as the SVD and about 5x faster batched; with numba one
    compiled pass forms that column alone and the bound ``c`` below). For the
    conditioning, ``R`` (15 x 15) has the singular values of ``D``;
    ``c = 1 / (|R|_F |R^-1|_F)`` satisfies ``c <= s_15 / s_1 <= 15 c``, so only the samples
    with ``c <= tol < 15 c`` need their singular values: the decision is exactly
    ``s_15 / s_1 > tol``, as with :func:`solve_linear_batch`.

    Parameters
    ----------
    D : (B, 15, 16) ndarray, or (n, 16) with ``samples``
        The design matrices, or the design rows that the samples index.
    tol : float
    samples : (B, 15) int ndarray, optional
        Rows of ``D`` in each design matrix: the matrices are ``D[samples]``, which the
        compiled pass reads in place (the robust loop's samples, without a gathered copy).

    Returns
    -------
    f : (B, 16) ndarray
    ok : (B,) bool ndarray
    """
    if _jit.USE_NUMBA and compiled_row_kernels():  # null vectors, R and c in one pass
        if samples is None:
            D = np.ascontiguousarray(D, dtype=float)
            rows = D.reshape(-1, 16)
            samples = np.arange(len(rows)).reshape(len(D), 15)
        else:
            rows = np.ascontiguousarray(D, dtype=float)
            samples = np.ascontiguousarray(samples, dtype=np.intp)
        B = len(samples)
        f, R, c = np.empty((B, 16)), np.empty((B, 15, 15)), np.empty(B)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            _nb_householder_null(rows, samples, float(tol), f, R, c, NULL_LANES)
    else:
        if samples is not None:
            D = D[samples]
        Q, R = np.linalg.qr(np.swapaxes(D, -1, -2), mode="complete")
        f, R = Q[:, :, 15], R[:, :15, :]
        # An exactly singular sample (a zero on the diagonal of R, e.g. a zero design row)
        # has c = 0; the others are measured as usual.
        regular = np.all(np.diagonal(R, axis1=1, axis2=2), axis=1)
        c = np.zeros(len(R))
        Rr = R if regular.all() else R[regular]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if len(Rr):
                c[regular] = 1.0 / (np.linalg.norm(Rr, axis=(1, 2))
                                    * np.linalg.norm(np.linalg.inv(Rr), axis=(1, 2)))
    c = np.where(np.isfinite(c), c, 0.0)
    ok = c > tol
    unsure = ~ok & (15.0 * c > tol)
    if np.any(unsure):
        s = np.linalg.svd(R[unsure], compute_uv=False)
        ok[unsure] = s[:, 14] / s[:, 0] > tol
    return f, ok


def solve_linear_batch(points1, points2) -> tuple[np.ndarray, np.ndarray]:
    """Linear tensors of a batch of samples: stacked SVDs, no per-sample Python loop.

    Parameters
    ----------
    points1, points2 : (B, n, 2) ndarray, n >= 15

    Returns
    -------
    F : (B, 2, 2, 2, 2) ndarray
        Unit Frobenius norm, in the original pixel coordinates.
    conditioning : (B,) ndarray
        ``s_15 / s_1`` of the normalised design matrix (the second smallest singular value
        relative to the largest): near zero when the sample does not determine ``F``.
    """
    p1, p2 = (check_batch(name, p, (2,)) for name, p in
              (("points1", points1), ("points2", points2)))
    for name, p in (("points1", p1), ("points2", p2)):
        if p.ndim != 3 or p.shape[1] < MIN_LINEAR_POINTS:
            raise ValueError(f"{name} must have shape (B, n, 2) with n >= {MIN_LINEAR_POINTS}, "
                             f"got {p.shape}")
    if p1.shape != p2.shape:
        raise ValueError(f"points1 and points2 must have the same shape, got {p1.shape} and "
                         f"{p2.shape}")
    B, n, _ = p1.shape
    Ts, normed = normalize_axes(p1, p2)
    D = design_rows(*normed)
    if n < 16:  # pad to a square system so the SVD returns the null vector
        D = np.concatenate([D, np.zeros((B, 16 - n, 16))], axis=1)
    _, s, Vt = np.linalg.svd(D, full_matrices=False)
    F = denormalize(Vt[:, -1, :], Ts)
    cond = s[:, 14] / s[:, 0]
    return F, cond


def solve_linear(points1, points2, weights=None) -> tuple[np.ndarray, float]:
    """Linear (optionally weighted) least-squares tensor from all correspondences.

    Parameters
    ----------
    points1, points2 : (N, 2) ndarray, N >= 15
    weights : (N,) ndarray, optional
        Non-negative row weights (for iteratively reweighted refits).

    Returns
    -------
    F : (2, 2, 2, 2) ndarray of unit norm
    conditioning : float
        ``s_15 / s_1`` of the normalised design matrix.
    """
    points1, points2 = check_point_pair("points1", points1, "points2", points2,
                                        min_count=MIN_LINEAR_POINTS)
    if weights is not None:
        weights = check_array("weights", weights)
        if weights.shape != (len(points1),) or not np.all(weights >= 0):  # NaN fails >= 0
            raise ValueError(f"weights must be ({len(points1)},) finite and non-negative, got "
                             f"shape {weights.shape}")
        check_finite("weights", weights)
    Ts, normed = normalize_axes(points1, points2)
    D = design_rows(*normed)
    if weights is not None:
        D = D * weights[:, None]
    f, cond = null_vector_tall(D)
    return denormalize(f, Ts), cond


#: Entries of ``F.ravel()`` (index ``4 i + k`` of ``kron(a, c)``) on which the derivatives of
#: a design row along ``x, y, x', y'`` are non-zero, in the order of the blocks
#: :func:`taubin_matrices` stacks; as flat indices of the 8 x 8 blocks they fill in ``N``.
_TAUBIN_ROWS = tuple((16 * r[:, None] + r).ravel() for r in (
    np.r_[0:8], np.r_[0:4, 8:12], np.r_[0:16:4, 1:16:4], np.r_[0:16:4, 2:16:4]))


def _taubin_sources() -> np.ndarray:
    """Flat indices into ``M`` (16 x 16) of the 8 x 8 moment blocks of the four derivatives,
    ``(4, 64)``, in the order of :data:`_TAUBIN_ROWS` (see :func:`taubin_matrices`)."""
    M4 = np.arange(256).reshape(4, 4, 4, 4)  # [a row, c row, a column, c column]
    blocks = []
    for k, (u, v) in enumerate(((2, 3), (1, 3), (2, 3), (1, 3))):
        if k < 2:  # the moments of a_u, a_v times c c^T
            blocks.append(M4[[u, v]][:, :, [u, v]].reshape(64))
        else:  # the moments of c_u, c_v times a a^T
            blocks.append(M4[:, [u, v]][..., [u, v]].transpose(1, 0, 3, 2).reshape(64))
    return np.stack(blocks)


_TAUBIN_SOURCE = _taubin_sources()
_TAUBIN_TARGET = np.concatenate(_TAUBIN_ROWS)


def taubin_matrices(normalized, scales, weights=None) -> tuple[np.ndarray, np.ndarray]:
    r"""The moment matrices of Taubin's fit of eq. (22): :math:`M = \sum_i w_i d_i d_i^T` and
    :math:`N = \sum_i w_i \sum_k s_k^2\, \partial_k d_i\, \partial_k d_i^T`.

    ``d_i`` is the design row of correspondence ``i`` (``d_i^T f`` its residual) and
    :math:`\partial_k d_i` its derivative along image axis ``k`` (``x, y, x', y'``), so that
    :math:`f^T N f = \sum_i \lVert \nabla e_i \rVert^2`, with the gradient in pixels
    (``s_k`` converts the derivative along a normalised axis back to pixels).

    Parameters
    ----------
    normalized : sequence of four (N,) ndarray
        Normalised coordinates ``x, y, x', y'``.
    scales : (4,) array_like
        ``s_k`` of each axis (``x_n = s_k (x - m_k)``).
    weights : (N,) array_like, optional

    Returns
    -------
    M, N : (16, 16) ndarray
    """
    x, y, xp, yp = (np.asarray(v, dtype=float) for v in normalized)
    sw = None if weights is None else np.sqrt(np.asarray(weights, dtype=float))
    M = np.zeros((16, 16))
    # The design row is kron(a, c) with a = [xy, x, y, 1], c = [x'y', x', y', 1]. Chunks of
    # the points keep the temporaries small (fresh large arrays cost a page fault per page).
    for lo in range(0, len(x), 2048):
        sl = slice(lo, lo + 2048)
        xs, ys, xps, yps = x[sl], y[sl], xp[sl], yp[sl]
        a = np.stack([xs * ys, xs, ys, np.ones_like(xs)])
        if sw is not None:
            a *= sw[sl]  # the weight rides on a
        c = np.stack([xps * yps, xps, yps, np.ones_like(xs)])
        D = (a[:, None] * c[None]).reshape(16, -1)
        M += D @ D.T
    return M, taubin_gradient_moments(M, scales)


def taubin_gradient_moments(M, scales) -> np.ndarray:
    r"""Taubin's :math:`N` (:func:`taubin_matrices`) from the moment matrix
    :math:`M = \sum_i w_i d_i d_i^T` of the same correspondences, without a pass over them.

    Parameters
    ----------
    M : (16, 16) ndarray
        ``D^T diag(w) D`` of the design rows ``D`` (:func:`design_rows`) of the normalised
        coordinates.
    scales : (4,) array_like
        ``s_k`` of each axis (``x_n = s_k (x - m_k)``).

    Returns
    -------
    N : (16, 16) ndarray
    """
    s2 = np.square(np.asarray(scales, dtype=float))
    # Each derivative changes one factor to a vector with two non-zero entries, so its row
    # has 8 non-zero entries: d/dx -> kron([y, 1, 0, 0], c), d/dy -> kron([x, 0, 1, 0], c),
    # d/dx' -> kron(a, [y', 1, 0, 0]), d/dy' -> kron(a, [x', 0, 1, 0]). Their moments
    # (sums of y^2 c c^T, y c c^T, c c^T, ...) are blocks of M = sum kron(a a^T, c c^T), whose
    # a and c hold y, x, 1 and y', x', 1: N is gathered from M (_TAUBIN_SOURCE).
    return np.bincount(_TAUBIN_TARGET, weights=(s2[:, None] * M.ravel()[_TAUBIN_SOURCE]).ravel(),
                       minlength=256).reshape(16, 16)


def taubin_matrices_from_design(design, rows, scales) -> tuple[np.ndarray, np.ndarray]:
    """Taubin's moment matrices (:func:`taubin_matrices`) of the
    correspondences ``rows`` (indices or a bool mask) from their rows of the ``design``
    matrix ``(N, 16)`` of the normalised coordinates, whose per-axis scales are ``scales``
    (4,): one gather and one product, a quarter of the cost of building the rows again."""
    D = design[rows]
    M = D.T @ D
    return M, taubin_gradient_moments(M, scales)


def solve_taubin(points1, points2, weights=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Taubin's fit of the epipolar tensor: the least generalised eigenvector of
    :math:`(M, N)` (:func:`taubin_matrices`).

    .. math:: \min_f \frac{\sum_i e_i(f)^2}{\sum_i \lVert \nabla e_i(f) \rVert^2}

    The algebraic least squares of :func:`solve_linear` minimises the numerator alone: its
    estimate is biased towards tensors whose gradient is large at the data, and on scenes
    whose slit distance is small compared with the depth the bias reaches several pixels of
    Sampson distance. Dividing by the summed squared gradient (Taubin, PAMI 1991; Kanatani's
    analysis of its bias) removes the leading term of that bias at the cost of one 16 x 16
    generalised eigenproblem, and the fit lands in the basin of the maximum-likelihood
    estimate, which :func:`xslit.epipolar.variety.refine_on_variety` then reaches.

    Parameters
    ----------
    points1, points2 : (N, 2) ndarray, N >= 15
    weights : (N,) array_like, optional

    Returns
    -------
    F : (2, 2, 2, 2) ndarray of unit norm, in pixels
    ratios : (16,) ndarray
        The generalised eigenvalues :math:`f^T M f / f^T N f` ascending (mean squared Sampson
        distances in pixels, to first order, of the 16 eigenvectors).

    Examples
    --------
    >>> from xslit.synthetic import random_two_view_scene
    >>> from xslit.epipolar import sampson_distance
    >>> s = random_two_view_scene(1, 50)
    >>> F, ratios = solve_taubin(s['points1'], s['points2'])
    >>> bool(sampson_distance(F, s['points1'], s['points2']).max() < 1e-6)
    True
    """
    Ts, normed = normalize_axes(points1, points2, robust=True)
    scales = np.array([T[0, 0] for T in Ts])
    f, ratios = taubin_fit(*taubin_matrices(normed, scales, weights))
    return denormalize(f, Ts), ratios


def taubin_fit(M, N) -> tuple[np.ndarray, np.ndarray]:
    """The least generalised eigenvector of ``(M, N)`` (:func:`taubin_matrices`) and all the
    generalised eigenvalues, ascending (:func:`solve_taubin` in the normalised frame).

    Returns
    -------
    f : (16,) ndarray of unit norm
    ratios : (16,) ndarray
        The 15 finite generalised eigenvalues, then ``inf``.

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``N[:15, :15]`` is singular (see :func:`taubin_basis`).
    """
    basis, ratios = taubin_basis(M, N, 1)
    return basis[0], ratios


def taubin_basis(M, N, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` least generalised eigenvectors of ``(M, N)`` (:func:`taubin_matrices`)
    and all the generalised eigenvalues, ascending.

    The constant entry (the last) has no gradient, so the last row and column of ``N`` vanish
    and that entry is eliminated exactly: ``f_15 = -M[15, :15] g / M[15, 15]``, and ``g``
    solves the definite problem ``S g = lambda N[:15, :15] g`` with ``S`` the Schur complement
    of ``M[15, 15]`` in ``M``. Exact data (``M`` singular) give ``lambda = 0`` exactly.

    Returns
    -------
    basis : (count, 16) ndarray
        The eigenvectors, each of unit norm (the least first).
    ratios : (16,) ndarray
        The 15 finite generalised eigenvalues, then ``inf``.

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``N[:15, :15]`` is singular (the gradients of the correspondences do not span
        the 15 entries: e.g. all of them share a coordinate).
    """
    from scipy.linalg.lapack import dsygv  # not at import: scipy.linalg takes 0.2 s to load

    m = M[15, 15]
    S = M[:15, :15] - M[:15, 15, None] * M[None, 15, :15] / m
    # LAPACK's dsygv: Cholesky factor of N, reduction to a standard problem and eigh in one
    # call (a third of the cost of numpy's cholesky, inv and eigh at this size).
    lam, V, info = dsygv(S, N[:15, :15])
    if info != 0:
        raise np.linalg.LinAlgError(f"dsygv failed (info {info}): N is not positive definite")
    basis = np.empty((count, 16))
    for k in range(count):
        g = V[:, k]
        f = basis[k]
        f[:15] = g
        f[15] = -(M[15, :15] @ g) / m
        f /= math.sqrt(f @ f)
    ratios = np.empty(16)
    np.maximum(lam, 0.0, out=ratios[:15])
    ratios[15] = np.inf
    return basis, ratios


def taubin_fit_from_design(design, rows, scales, K, tol, scratch=None) -> np.ndarray | None:
    """Taubin's fit (:func:`taubin_fit`) of the correspondences ``rows`` from their rows of the
    ``design`` matrix, mapped by ``K`` (:func:`denormalize_with`), or None when the rows do not
    determine it.

    The rows do not determine it when the conditioning of their Gram matrix
    (:func:`conditioning_from_eigenvalues`) is below ``tol``, or when their gradients do not
    span the 15 entries (:func:`taubin_fit` raises). With numba the whole fit is one compiled
    call (:func:`_nb_taubin_rows`) that calls the BLAS and LAPACK routines numpy's and
    SciPy's functions call (:func:`xslit._jit.lapack_routines`): the same numbers, bit for
    bit, without a dozen Python wrappers around 16 x 16 problems (a third of the cost at
    1,000 rows).

    Parameters
    ----------
    design : (N, 16) ndarray
        C-contiguous design matrix (:func:`design_rows`) of coordinates normalised with
        ``x_n = s_k (x - m_k)``.
    rows : (n,) int ndarray
        Indices of the correspondences to fit.
    scales : (4,) ndarray
        ``s_k`` of each axis.
    K : (16, 16) ndarray
        Map of the normalised tensor to the result.
    tol : float
        Least conditioning ``s_15 / s_1``.
    scratch : xslit._scratch.Scratch, optional
        Buffers reused across calls (for the gathered rows).

    Returns
    -------
    (2, 2, 2, 2) ndarray of unit norm, or None
    """
    if not (_jit.USE_NUMBA and compiled_row_kernels()):
        M, N = taubin_matrices_from_design(design, rows, scales)
        if conditioning_from_eigenvalues(np.linalg.eigvalsh(M)) < tol:
            return None
        try:
            f, _ = taubin_fit(M, N)
        except np.linalg.LinAlgError:  # no gradient along some entry: degenerate rows
            return None
        return denormalize_with(f, K)
    rows = np.asarray(rows, dtype=np.intp)
    D = np.empty((len(rows), 16)) if scratch is None else scratch.get("taubin_rows",
                                                                      (len(rows), 16))
    out = np.empty(16)
    if not _nb_taubin_rows(design, rows, np.square(scales), _TAUBIN_SOURCE, _TAUBIN_TARGET, K,
                  float(tol), D, out, *_jit.lapack_routines("dsyrk", "dsygv")):
        return None
    return out.reshape(2, 2, 2, 2)


def taubin_basis_from_design(design, rows, scales, count: int, scratch=None):
    """Taubin's ``count`` least generalised eigenvectors and all the generalised eigenvalues
    (:func:`taubin_basis`) of the correspondences ``rows`` from their rows of the ``design``
    matrix, and the conditioning of their Gram matrix (:func:`conditioning_from_eigenvalues`).
    With numba, one compiled call (:func:`_nb_taubin_basis_rows`) with the BLAS and LAPACK
    routines of numpy's and SciPy's functions: the same numbers.

    Parameters
    ----------
    design : (N, 16) ndarray
        C-contiguous design matrix (:func:`design_rows`) of coordinates normalised with
        ``x_n = s_k (x - m_k)``.
    rows : (N,) bool ndarray or (n,) int ndarray
        The correspondences.
    scales : (4,) ndarray
        ``s_k`` of each axis.
    count : int
    scratch : xslit._scratch.Scratch, optional
        Buffers reused across calls (for the gathered rows).

    Returns
    -------
    basis : (count, 16) ndarray, or None when :func:`taubin_basis` raises
    ratios : (16,) ndarray, or None with it
    conditioning : float
    """
    if _jit.USE_NUMBA and compiled_row_kernels():
        rows = np.asarray(rows)
        rows = np.flatnonzero(rows) if rows.dtype == bool else rows.astype(np.intp, copy=False)
        D = (np.empty((len(rows), 16)) if scratch is None
             else scratch.get("taubin_rows", (len(rows), 16)))
        basis, ratios = np.empty((count, 16)), np.empty(16)
        cond = _nb_taubin_basis_rows(design, rows, np.square(scales), _TAUBIN_SOURCE,
                                     _TAUBIN_TARGET, D, basis, ratios,
                                     *_jit.lapack_routines("dsyrk", "dsygv"))
        if cond < 0.0:  # dsygv failed: N is not positive definite
            return None, None, -1.0 - cond
        return basis, ratios, cond
    M, N = taubin_matrices_from_design(design, rows, scales)
    cond = conditioning_from_eigenvalues(np.linalg.eigvalsh(M))
    try:
        basis, ratios = taubin_basis(M, N, count)
    except np.linalg.LinAlgError:
        return None, None, cond
    return basis, ratios, cond


def _nb_taubin_basis_rows(design, rows, s2, source, target, D, basis, ratios, syrk,
                          sygv):  # pragma: no cover - compiled
    """:func:`taubin_basis_from_design` into ``basis`` (count, 16) and ``ratios`` (16,);
    returns the conditioning, or ``-1 - conditioning`` when ``dsygv`` fails (for numba,
    :func:`compiled_row_kernels`). The operations of :func:`_nb_taubin_rows` and
    :func:`taubin_basis` in their order."""
    for i in range(rows.shape[0]):
        for j in range(16):
            D[i, j] = design[rows[i], j]
    M = _nb_gram(D, syrk)
    w = np.linalg.eigvalsh(M)
    cond = np.sqrt(max(w[1], 0.0) / w[15]) if w[15] > 0 else 0.0
    a, lam = np.empty((15, 15)), np.empty(15)
    if _nb_taubin_eigen(M, s2, source, target, sygv, a, lam) != 0:
        return -1.0 - cond
    for k in range(basis.shape[0]):
        _nb_taubin_vector(M, a, k, basis[k])
    for k in range(15):
        ratios[k] = max(lam[k], 0.0)
    ratios[15] = np.inf
    return cond


def _nb_robust_spread(v, keep, m, spread):  # pragma: no cover - compiled
    """Per row of ``v`` (B, N): the median into ``m`` and the mean of the ``keep`` least
    absolute deviations from it into ``spread`` (B,) (:func:`robust_axis_normalization`'s
    operations; for numba, :func:`compiled_row_kernels`).

    The order statistics are found by :func:`_nb_kth_key` on the floats' bits, without a
    branch on the data: quickselect's branches mispredict so often on fresh data that its
    selections cost four times their time in a loop on one data set."""
    n = v.shape[1]
    sign = np.int64(0x7FFFFFFFFFFFFFFF)
    keys, dev, one = np.empty(n, np.int64), np.empty(n), np.empty(1, np.int64)
    for b in range(v.shape[0]):
        bits = v[b].view(np.int64)
        for i in range(n):  # integers in the order of the floats
            keys[i] = bits[i] ^ ((bits[i] >> 63) & sign)
        half = n // 2
        low = _nb_kth_key(keys, half - 1 + n % 2)
        high = low
        if n % 2 == 0:  # the next value up: ``low`` again, or the least key above it
            at_most = 0
            for i in range(n):
                at_most += keys[i] <= low
            if at_most <= half:
                high = np.iinfo(np.int64).max
                for i in range(n):
                    high = min(high, keys[i] if keys[i] > low else high)
        one[0] = low ^ ((low >> 63) & sign)
        a = one.view(np.float64)[0]
        one[0] = high ^ ((high >> 63) & sign)
        m[b] = a if n % 2 else (a + one.view(np.float64)[0]) / 2.0
        for i in range(n):
            dev[i] = abs(v[b, i] - m[b])
        one[0] = _nb_kth_key(dev.view(np.int64), keep - 1)  # non-negative: the bits order
        t = one.view(np.float64)[0]
        total, below = 0.0, 0
        for i in range(n):  # in their order, the others adding zeros
            total += dev[i] if dev[i] < t else 0.0
            below += dev[i] < t
        spread[b] = (total + (keep - below) * t) / keep


def _nb_kth_key(keys, k):  # pragma: no cover - compiled
    """The ``k``-th least (from 0) of the integer ``keys`` (N,) by bisection of the integers:
    the least ``K`` with more than ``k`` keys at most ``K``, each step one count over the
    keys (vectorised, no branch on them), 64 steps at most."""
    lo, hi = keys[0], keys[0]
    for i in range(keys.shape[0]):
        lo = min(lo, keys[i])
        hi = max(hi, keys[i])
    while lo < hi:
        mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # floor of the mean, without overflow
        count = 0
        for i in range(keys.shape[0]):
            count += keys[i] <= mid
        if count > k:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _nb_inverse_steps(H, start, steps, out):  # pragma: no cover - compiled
    """The steps of :func:`inverse_iteration` with the inverses ``H`` (B, 16, 16) from
    ``start`` (16,) into ``out`` (B, 16) (for numba, :func:`compiled_row_kernels`): the same
    operations, summed in the loops' order (equal to rounding)."""
    x = np.empty(16)
    y = np.empty(16)
    for b in range(H.shape[0]):
        x[:] = start
        for i in range(steps):
            # y[k] summed over j in turn, every k at once (independent sums, not one chain)
            for k in range(16):
                y[k] = 0.0
            for j in range(16):
                xj = x[j]
                for k in range(16):
                    y[k] += xj * H[b, j, k]
            if i % 4 == 3 or i == steps - 1:
                y /= np.sqrt(np.sum(y * y))
            x[:] = y
        out[b] = x


def _nb_design_rows(x, y, xp, yp, D):  # pragma: no cover - compiled
    """:func:`design_rows` of coordinates ``(n,)`` into ``D`` (n, 16): ``D[i, 4 j + k]`` is
    ``[xy, x, y, 1][j] * [x'y', x', y', 1][k]``."""
    for i in range(x.shape[0]):
        a0, a1, a2 = x[i] * y[i], x[i], y[i]
        c0, c1, c2 = xp[i] * yp[i], xp[i], yp[i]
        row = D[i]
        row[0], row[1], row[2], row[3] = a0 * c0, a0 * c1, a0 * c2, a0 * 1.0
        row[4], row[5], row[6], row[7] = a1 * c0, a1 * c1, a1 * c2, a1 * 1.0
        row[8], row[9], row[10], row[11] = a2 * c0, a2 * c1, a2 * c2, a2 * 1.0
        row[12], row[13], row[14], row[15] = c0, c1, c2, 1.0


def _nb_householder_null(rows, samples, tol, f, R, c, lanes):  # pragma: no cover
    """The null vectors ``f`` (B, 16) and bounds ``c`` (B,) of :func:`minimal_null_vectors`
    for the design matrices ``rows[samples[b]]`` (15 x 16), and the triangular factor ``R``
    (B, 15, 15) of the samples whose decision needs singular values
    (``c <= tol < 15 c``; the other entries of ``R`` are left unset).

    Householder's QR of each ``D^T`` (16 x 15) with LAPACK's reflectors (``dlarfg``:
    ``H = I - tau v v^T``, ``v[0] = 1``, ``beta = -sign(x_0) |x|``; a column that is already
    zero below its diagonal gets ``tau = 0`` and is left as it is), then the last column of
    ``Q = H_1 ... H_15`` from its reflectors alone (numpy's complete QR forms all of ``Q`` and
    copies it; the vectors agree to rounding, sign included), and
    ``c = 1 / (|R|_F |R^-1|_F)`` with each column of ``R^-1`` by back substitution (a fifth of
    the cost of numpy's batched ``inv``, which factors the triangular matrices again; 0 when a
    diagonal entry of ``R`` is 0). Up to ``lanes`` samples are factored side by side: the
    samples are the last axis of the work arrays, so that each step is one loop over them that
    the compiler vectorises, with the same operations in the same order on each sample
    (``lanes = 1`` gives the same numbers bit for bit). ``D^T`` is held as ``D``
    (``A[j, i]`` is entry ``(i, j)`` of ``D^T``), so that each reflector and each column it
    updates are rows."""
    B = samples.shape[0]
    L = min(B, lanes)
    A = np.empty((15, 16, L))
    taus = np.empty((15, L))
    w, xnorm, scale, t = np.empty(L), np.empty(L), np.empty(L), np.empty(L)
    q, x = np.empty((16, L)), np.empty((15, L))
    frobenius, total = np.empty(L), np.empty(L)
    keep = np.empty(L, np.bool_)  # the reflector of each sample is applied
    for b0 in range(0, B, L):
        m = min(L, B - b0)
        for l in range(L):  # lanes beyond the batch repeat its first sample
            b = b0 + l if l < m else b0
            for j in range(15):
                for i in range(16):
                    A[j, i, l] = rows[samples[b, j], i]
        for j in range(15):
            xnorm[:] = 0.0
            for i in range(j + 1, 16):
                for l in range(L):
                    xnorm[l] += A[j, i, l] * A[j, i, l]
            for l in range(L):
                keep[l] = xnorm[l] != 0.0
                alpha = A[j, j, l]
                beta = -np.copysign(np.sqrt(alpha * alpha + xnorm[l]), alpha)
                taus[j, l] = (beta - alpha) / beta if keep[l] else 0.0
                scale[l] = 1.0 / (alpha - beta) if keep[l] else 1.0
                A[j, j, l] = beta if keep[l] else alpha
            for i in range(j + 1, 16):
                for l in range(L):
                    A[j, i, l] *= scale[l]
            for k in range(j + 1, 15):  # H_j on the remaining columns
                for l in range(L):
                    w[l] = A[k, j, l]
                for i in range(j + 1, 16):
                    for l in range(L):
                        w[l] += A[j, i, l] * A[k, i, l]
                for l in range(L):
                    w[l] *= taus[j, l]
                    A[k, j, l] = A[k, j, l] - w[l] if keep[l] else A[k, j, l]
                for i in range(j + 1, 16):
                    for l in range(L):
                        A[k, i, l] = A[k, i, l] - w[l] * A[j, i, l] if keep[l] else A[k, i, l]
        q[:] = 0.0
        q[15, :] = 1.0
        for j in range(14, -1, -1):  # Q e_16 = H_1 (H_2 (... H_15 e_16))
            for l in range(L):
                w[l] = q[j, l]
            for i in range(j + 1, 16):
                for l in range(L):
                    w[l] += A[j, i, l] * q[i, l]
            for l in range(L):
                w[l] *= taus[j, l]
                q[j, l] -= w[l]
            for i in range(j + 1, 16):
                for l in range(L):
                    q[i, l] -= w[l] * A[j, i, l]
        frobenius[:] = 0.0
        for i in range(15):
            for j in range(i, 15):
                for l in range(L):
                    frobenius[l] += A[j, i, l] * A[j, i, l]
        total[:] = 0.0
        for j in range(15):  # R x = e_j, x[i] = 0 below j
            for i in range(j, -1, -1):
                for l in range(L):
                    t[l] = 1.0 if i == j else 0.0
                for k in range(i + 1, j + 1):
                    for l in range(L):
                        t[l] -= A[k, i, l] * x[k, l]
                for l in range(L):
                    x[i, l] = t[l] / A[i, i, l]
                    total[l] += x[i, l] * x[i, l]
        for l in range(m):
            b = b0 + l
            singular = False
            for i in range(16):
                f[b, i] = q[i, l]
            for i in range(15):
                singular |= A[i, i, l] == 0.0
            c[b] = 0.0 if singular else 1.0 / (np.sqrt(frobenius[l]) * np.sqrt(total[l]))
            bound = c[b] if np.isfinite(c[b]) else 0.0
            if not bound > tol and 15.0 * bound > tol:
                for i in range(15):
                    for j in range(15):
                        R[b, i, j] = A[j, i, l] if j >= i else 0.0


def _nb_gram(D, syrk):  # pragma: no cover - compiled
    """``D.T @ D`` (16, 16) of the C-contiguous rows ``D`` (n, 16) as numpy computes it: BLAS
    ``dsyrk`` on the upper triangle (of the row-major result: the lower one of the
    column-major matrix BLAS sees), mirrored to the lower one."""
    G = np.zeros((16, 16))
    uplo, trans = np.array([76], np.uint8), np.array([78], np.uint8)  # "L", "N"
    n, k = np.array([16], np.int32), np.array([D.shape[0]], np.int32)
    alpha, beta = np.array([1.0]), np.array([0.0])
    call_routine(syrk, (uplo.ctypes.data, trans.ctypes.data, n.ctypes.data, k.ctypes.data,
                        alpha.ctypes.data, D.ctypes.data, n.ctypes.data, beta.ctypes.data,
                        G.ctypes.data, n.ctypes.data))
    for i in range(16):
        for j in range(i):
            G[i, j] = G[j, i]
    return G


def _nb_surely_conditioned(M, tol):  # pragma: no cover - compiled
    """Whether the conditioning ``sqrt(w_1 / w_15)`` of the Gram matrix ``M`` (16, 16)
    (:func:`conditioning_from_eigenvalues`) is at least ``tol`` by a bound, without its
    eigenvalues (False: not known). By interlacing, ``w_1`` is at least the least eigenvalue
    of ``B = M[:15, :15]``, which is at least ``1 / |L^-1|_F^2`` for the Cholesky factor
    ``L`` of ``B``; ``w_15`` is at most the trace. The bound must clear ``tol^2`` by a margin
    above the rounding of the factorisation (``1e-11`` of the trace), so the answer is the
    eigenvalues' whenever it is given."""
    n = 15
    L = np.zeros((n, n))
    for j in range(n):
        t = M[j, j]
        for k in range(j):
            t -= L[j, k] * L[j, k]
        if not t > 0.0:
            return False
        L[j, j] = np.sqrt(t)
        for i in range(j + 1, n):
            t = M[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / L[j, j]
    total = 0.0  # |L^-1|_F^2, column by column of the inverse (forward substitution)
    x = np.empty(n)
    for j in range(n):
        for i in range(j, n):
            t = 1.0 if i == j else 0.0
            for k in range(j, i):
                t -= L[i, k] * x[k]
            x[i] = t / L[i, i]
            total += x[i] * x[i]
    trace = 0.0
    for i in range(16):
        trace += M[i, i]
    return 1.0 / total > (4.0 * tol * tol + 1e-11) * trace


def _nb_taubin_rows(design, rows, s2, source, target, K, tol, D, out, syrk,
                    sygv):  # pragma: no cover - compiled
    """:func:`taubin_fit_from_design` of the rows ``rows`` (gathered into ``D``) with the
    squared scales ``s2``, into ``out`` (16,); False when the rows do not determine the fit.
    The operations of :func:`taubin_matrices_from_design`, :func:`taubin_fit` and
    :func:`denormalize_with` in their order (for numba, :func:`compiled_row_kernels`)."""
    for i in range(rows.shape[0]):
        for j in range(16):
            D[i, j] = design[rows[i], j]
    M = _nb_gram(D, syrk)
    if not _nb_surely_conditioned(M, tol):
        w = np.linalg.eigvalsh(M)
        cond = np.sqrt(max(w[1], 0.0) / w[15]) if w[15] > 0 else 0.0
        if cond < tol:
            return False
    a, lam = np.empty((15, 15)), np.empty(15)
    if _nb_taubin_eigen(M, s2, source, target, sygv, a, lam) != 0:
        return False
    f = np.empty(16)
    _nb_taubin_vector(M, a, 0, f)
    _nb_denormalize_into(f, K, out)
    return True


def _nb_taubin_eigen(M, s2, source, target, sygv, a, lam):  # pragma: no cover - compiled
    """Taubin's generalised eigenproblem of the Gram matrix ``M`` (16, 16) of design rows with
    the squared scales ``s2``: the gradient moments ``N`` (:func:`taubin_gradient_moments`:
    ``np.bincount`` adds the weights in their order), then ``dsygv`` of the Schur complement of
    ``M[15, 15]`` and ``N[:15, :15]`` as SciPy's wrapper calls it (itype 1, jobz "V", uplo
    "L", lwork 3 n - 1) on Fortran-ordered copies: the eigenvectors into ``a`` (15, 15), row
    ``k`` the ``k``-th, and the eigenvalues into ``lam`` (15,); returns LAPACK's ``info``
    (for numba, :func:`compiled_row_kernels`)."""
    Mf, Nf = M.ravel(), np.zeros(256)
    blocks = source.shape[1]
    for k in range(4):
        for j in range(blocks):
            Nf[target[k * blocks + j]] += s2[k] * Mf[source[k, j]]
    m = M[15, 15]
    b = np.empty((15, 15))
    for i in range(15):
        for j in range(15):
            a[j, i] = M[i, j] - M[i, 15] * M[15, j] / m
            b[j, i] = Nf[16 * i + j]
    itype, n, lwork, info = (np.array([1], np.int32), np.array([15], np.int32),
                             np.array([44], np.int32), np.zeros(1, np.int32))
    jobz, uplo = np.array([86], np.uint8), np.array([76], np.uint8)  # "V", "L"
    work = np.empty(44)
    call_routine(sygv, (itype.ctypes.data, jobz.ctypes.data, uplo.ctypes.data, n.ctypes.data,
                        a.ctypes.data, n.ctypes.data, b.ctypes.data, n.ctypes.data,
                        lam.ctypes.data, work.ctypes.data, lwork.ctypes.data,
                        info.ctypes.data))
    return info[0]


def _nb_taubin_vector(M, a, k, f):  # pragma: no cover - compiled
    """The tensor ``f`` (16,) of unit norm of eigenvector ``k`` of :func:`_nb_taubin_eigen`
    (row ``k`` of ``a``: column ``k`` of LAPACK's Fortran-ordered result), its constant entry
    eliminated by ``M[15, 15]`` as :func:`taubin_basis` does."""
    g = a[k].copy()
    f[:15] = g
    f[15] = -np.dot(M[15, :15], g) / M[15, 15]
    f /= np.sqrt(np.dot(f, f))


def _nb_denormalize_into(f, K, out):  # pragma: no cover - compiled
    """:func:`denormalize_with` of one tensor ``f`` (16,) into ``out`` (16,) (for numba,
    :func:`compiled_row_kernels`): the product (``dgemv``, as numpy's matmul calls it for a
    row times a matrix), then numpy's pairwise sum of the 16 squares (eight partial sums of
    two, added in pairs)."""
    F = np.dot(f, K)
    r = np.empty(8)
    for j in range(8):
        r[j] = F[j] * F[j] + F[8 + j] * F[8 + j]
    out[:] = F / np.sqrt(((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7])))


def denormalize_rows_into(f, K, out):  # pragma: no cover - compiled
    """:func:`denormalize_with` of the tensors ``f`` (B, 16) into ``out`` (B, 16), one at a
    time (:func:`_nb_denormalize_into`; numpy's stacked product is one ``dgemv`` per row)
    (for numba, :func:`compiled_row_kernels`; kernels of other modules call it compiled after
    that)."""
    for b in range(f.shape[0]):
        _nb_denormalize_into(f[b], K, out[b])


#: The call of a BLAS or LAPACK routine by its address in the compiled kernels (bound by
#: :func:`compiled_row_kernels`; :func:`xslit._jit.routine_caller`).
call_routine = None


@functools.cache
def compiled_row_kernels() -> bool:
    """Compile (once) :func:`_nb_design_rows`, :func:`_nb_householder_null`,
    :func:`_nb_gram`, :func:`_nb_taubin_rows`, :func:`_nb_leverage`, :func:`_nb_robust_spread`,
    :func:`_nb_inverse_steps`, :func:`_nb_pulled_rows`,
    :func:`_nb_kth_key`,
    :func:`_nb_sample_inverse_iteration`, :func:`eigen_tall_into`,
    :func:`_nb_surely_conditioned`, :func:`_nb_nearly_diagonal_eigh`,
    :func:`_nb_taubin_basis_rows`, :func:`_nb_denormalize_into`,
    :func:`denormalize_rows_into`, :func:`_nb_taubin_eigen`, :func:`_nb_taubin_vector`,
    :func:`~xslit.epipolar.tensor.sampson_rows_into`, :func:`_nb_thinned_rows`,
    :func:`_nb_recall`, :func:`_nb_recall_or_fit`, :func:`_nb_iterated_taubin`,
    :func:`_nb_block_sum`, :func:`pairwise_sum` and :func:`_nb_best_sample_fit` (the
    module's names then hold the compiled kernels); False when numba cannot be imported."""
    return _jit.compile_kernels(globals(), ("_nb_design_rows", "_nb_householder_null",
                                            "_nb_gram", "_nb_taubin_rows", "_nb_leverage",
                                            "_nb_robust_spread", "_nb_kth_key",
                                            "_nb_inverse_steps",
                                            "_nb_pulled_rows",
                                            "_nb_sample_inverse_iteration", "eigen_tall_into",
                                            "_nb_surely_conditioned",
                                            "_nb_nearly_diagonal_eigh",
                                            "_nb_taubin_basis_rows",
                                            "_nb_denormalize_into", "denormalize_rows_into",
                                            "_nb_taubin_eigen", "_nb_taubin_vector",
                                            "sampson_rows_into", "_nb_thinned_rows",
                                            "_nb_recall", "_nb_recall_or_fit",
                                            "_nb_iterated_taubin", "_nb_block_sum",
                                            "pairwise_sum", "_nb_best_sample_fit"))


def weighted_leverage(design, rows, norms, scratch, refine: bool = True):
    """Leverages of the ``rows`` of the ``design`` matrix, each divided by its gradient norm,
    on the least eigenvector of their Gram matrix: first-order perturbations of that
    eigenvector when the row is deleted, ``h_i = sum_k (d_i . v_k)^2 / (s_k^2 - s_0^2)``.

    The eigenvectors are those of :func:`gram_pass`, refined by :func:`refine_pass`. With
    numba, one compiled call (:func:`_nb_leverage`) with the BLAS and LAPACK routines numpy
    calls: the same leverages bit for bit, the refined eigenvectors to rounding (Jacobi
    rotations, :func:`_nb_nearly_diagonal_eigh`).

    Parameters
    ----------
    design : (N, 16) ndarray
        C-contiguous design matrix (:func:`design_rows`).
    rows : (n,) int ndarray
        Indices of the rows.
    norms : (N,) ndarray
        Gradient norms of all rows (floored at ``1e-12`` times the largest of ``rows``).
    scratch : xslit._scratch.Scratch
        Holds the weighted rows and their projections (``"D"``, ``"Y"``).
    refine : bool
        Whether to refine the eigenvectors (the leverages use the first pass's; without,
        ``V`` is None).

    Returns
    -------
    h : (n,) ndarray
        Leverages (a scratch view).
    V, V1 : (16, 16) ndarray
        The refined and the first-pass eigenvectors, ascending.
    w1 : (16,) ndarray
        The first pass's eigenvalues.
    D : (n, 16) ndarray
        The weighted rows (a scratch view).
    None when the least eigenvalue is not isolated.
    """
    n = len(rows)
    D = scratch.get("D", (n, 16))
    Y = scratch.get("Y", (n, 16))
    if _jit.USE_NUMBA and compiled_row_kernels():
        h, V, V1, w1 = scratch.get("h", (n,)), np.empty((16, 16)), np.empty((16, 16)), \
            np.empty(16)
        if not _nb_leverage(design, np.asarray(rows, dtype=np.intp), norms, D, Y, h, V, V1, w1,
                            refine, *_jit.lapack_routines("dsyrk", "dgemv")):
            return None
        return h, V if refine else None, V1, w1, D
    gn = norms[rows]
    np.take(design, rows, axis=0, out=D)
    D *= (1.0 / np.maximum(gn, 1e-12 * gn.max()))[:, None]
    V1, w1, _ = gram_pass(D, out=Y)
    gap = w1[1:] - w1[0]
    if gap[0] <= 0:
        return None
    V = refine_pass(V1, Y)[0] if refine else None
    np.square(Y, out=Y)
    return Y[:, 1:] @ (1.0 / gap), V, V1, w1, D


def pulled_rows(d, h, D, V1, w1, K, threshold, sample_size) -> np.ndarray:
    """The rows of a refit that only fit because they pull it (the leverage guard of
    :meth:`~xslit.epipolar.estimate.EpipolarProblem.refit`): ``(n,)`` bool.

    A row whose deleted residual ``d_i / (1 - h_i)`` exceeds twice the ``threshold`` is
    pulled. A few outliers that pull the fit together mask each other's deleted residuals:
    the rows of high leverage (more than 3x the average 15 / n, Hoaglin and Welsch's rule)
    are also deleted as a group (when at least ``2 sample_size`` rows remain), and those
    farther than twice the threshold from that fit are pulled too. The Gram matrix without
    them is a downdate of ``V1 diag(w1) V1^T``; their distances to its fit are their
    weighted algebraic residuals (to first order). When fewer than ``sample_size`` rows
    would remain, none is pulled. With numba, one compiled call (:func:`_nb_pulled_rows`,
    equal to rounding).

    Parameters
    ----------
    d : (n,) ndarray
        Distances of the rows to the fit (units of ``threshold``).
    h, D, V1, w1
        Leverages, weighted rows, first-pass eigenvectors and eigenvalues of
        :func:`weighted_leverage`.
    K : (16, 16) ndarray
        Map of normalised tensors to the distances' frame (:func:`denormalize_with`).
    threshold : float
    sample_size : int
    """
    n = len(h)
    if _jit.USE_NUMBA and compiled_row_kernels():
        pulled = np.empty(n, bool)
        _nb_pulled_rows(d, h, D, V1, w1, K, float(threshold), sample_size, pulled)
        return pulled
    pulled = d > 2.0 * threshold * np.maximum(1.0 - h, 1e-12)
    high = np.flatnonzero(h > 3.0 * 15.0 / n)
    if len(high) and n - len(high) >= 2 * sample_size:
        D_high = D[high]
        _, V_del = np.linalg.eigh((V1 * w1) @ V1.T - D_high.T @ D_high)
        v = V_del[:, 0]
        d_del = np.abs(D_high @ v) / np.linalg.norm(v @ K)
        pulled[high[d_del > 2.0 * threshold]] = True
    if n - np.count_nonzero(pulled) < sample_size:
        pulled[:] = False
    return pulled


def _nb_pulled_rows(d, h, D, V1, w1, K, threshold, sample_size,
                    pulled):  # pragma: no cover - compiled
    """:func:`pulled_rows` into ``pulled`` (n,) (for numba, :func:`compiled_row_kernels`):
    the numpy code's steps, its products as numba's (equal to rounding)."""
    n = h.shape[0]
    limit = 3.0 * 15.0 / n
    n_high = 0
    for i in range(n):
        pulled[i] = d[i] > 2.0 * threshold * max(1.0 - h[i], 1e-12)
        if h[i] > limit:
            n_high += 1
    if n_high and n - n_high >= 2 * sample_size:
        high = np.empty(n_high, np.int64)
        j = 0
        for i in range(n):
            if h[i] > limit:
                high[j] = i
                j += 1
        D_high = np.empty((n_high, D.shape[1]))
        for j in range(n_high):
            D_high[j] = D[high[j]]
        _, V_del = np.linalg.eigh(np.dot(V1 * w1, V1.T) - np.dot(D_high.T, D_high))
        v = np.ascontiguousarray(V_del[:, 0])
        scale = np.sqrt(np.sum(np.dot(v, K) ** 2))
        for j in range(n_high):
            if abs(np.dot(D_high[j], v)) / scale > 2.0 * threshold:
                pulled[high[j]] = True
    if n - np.sum(pulled) < sample_size:
        pulled[:] = False


def _nb_leverage(design, rows, norms, D, Y, h, V, V1, w1, refine, syrk,
                 gemv):  # pragma: no cover - compiled
    """:func:`weighted_leverage` into ``D``, ``Y`` (n, 16), ``h`` (n,), ``V``, ``V1`` (16, 16)
    and ``w1`` (16,); False when the least eigenvalue is not isolated. numpy's operations in
    their order (for numba, :func:`compiled_row_kernels`): ``dsyrk`` for ``D.T @ D``, ``dgemv``
    as numpy calls it for ``Y[:, 1:] @ g`` (row-major, leading dimension 16); the refined
    vectors ``V`` by :func:`_nb_nearly_diagonal_eigh` (to rounding), only with ``refine``."""
    n = rows.shape[0]
    top = -np.inf
    for i in range(n):
        top = max(top, norms[rows[i]])
    floor = 1e-12 * top
    for i in range(n):
        g = norms[rows[i]]
        s = 1.0 / (g if g >= floor else floor)
        for j in range(16):
            D[i, j] = design[rows[i], j] * s
    w, vectors = np.linalg.eigh(_nb_gram(D, syrk))
    V1[:] = vectors
    for j in range(16):
        w1[j] = max(w[j], 0.0)
    if w1[1] - w1[0] <= 0:
        return False
    np.dot(D, V1, Y)
    if refine:
        _, V2 = _nb_nearly_diagonal_eigh(_nb_gram(Y, syrk))
        V[:] = np.dot(V1, np.ascontiguousarray(V2))
    inverse_gap = np.empty(15)
    for j in range(15):
        inverse_gap[j] = 1.0 / (w1[j + 1] - w1[0])
    for i in range(n):
        for j in range(16):
            Y[i, j] = Y[i, j] * Y[i, j]
    trans, m, k, lda, inc = (np.array([84], np.uint8), np.array([15], np.int32),
                             np.array([n], np.int32), np.array([16], np.int32),
                             np.array([1], np.int32))  # "T"
    one, zero = np.array([1.0]), np.array([0.0])
    call_routine(gemv, (trans.ctypes.data, m.ctypes.data, k.ctypes.data, one.ctypes.data,
                        Y[0, 1:].ctypes.data, lda.ctypes.data, inverse_gap.ctypes.data,
                        inc.ctypes.data, zero.ctypes.data, h.ctypes.data, inc.ctypes.data))
    return True


def iterated_taubin_fits(design, rows, model, inliers, threshold, thresholds, iterations,
                         sample_size, max_rows, change, scales, K, tol, known=None):
    """Iterated least squares of the epipolar tensor in one compiled call
    (:func:`_nb_iterated_taubin`), or None without numba.

    The steps of :func:`xslit.robust.iterated_least_squares` on
    :class:`~xslit.epipolar.estimate.EpipolarProblem`, whose refits and residuals these are:
    Taubin's fits of the correspondences within each of the annealing's ``thresholds``
    (without the leverage guard), then up to ``iterations`` refits at ``threshold`` with the
    guard (:func:`weighted_leverage` on the rows weighted by the current tensor's gradient
    norms, :func:`pulled_rows` of the distances to the refined eigenvector's tensor, Taubin's
    fit of the rest), each followed by the Sampson distances of all correspondences, until at
    most ``change`` of the inliers change. The same BLAS and LAPACK calls on the same numbers
    as those functions' compiled kernels in that order: the same tensors, bit for bit, without
    a Python call around each of them (at 1,000 correspondences the calls cost as much as
    the arithmetic; on 100-200 correspondences, several times more).

    Parameters
    ----------
    design : (N, 16) ndarray
        C-contiguous design matrix (:func:`design_rows`) of coordinates normalised with
        ``x_n = s_k (x - m_k)``.
    rows : xslit.epipolar.tensor.SampsonRows
        The same correspondences, for the Sampson distances of the tensors ``K`` maps to.
    model : (2, 2, 2, 2) or (16,) ndarray
        Starting tensor (of the frame ``K`` maps to).
    inliers : (N,) bool ndarray
        Its inliers at ``threshold`` (used when ``thresholds`` is empty).
    threshold : float
    thresholds : (k,) ndarray
        The annealing's thresholds, in the order of its fits (may be empty).
    iterations, sample_size, max_rows : int
        Refits at ``threshold`` at most, the sample size (fewer rows give no fit; as many
        inliers end the iteration), and the rows of a fit at most (more are thinned evenly
        to every ``k``-th).
    change : float
        Fraction of the inliers whose change still counts as converged.
    scales : (4,) ndarray
        ``s_k`` of each axis.
    K : (16, 16) ndarray
        Map of normalised tensors to models (:func:`denormalize_with`).
    tol : float
        Least conditioning of a fit (:func:`taubin_fit_from_design`).
    known : tuple of ndarray, optional
        Fits made before, taken instead of fitting the same rows again: their rows
        ``(R, N)`` int (the first ``size`` of each row), sizes ``(R,)`` (-1 for none), tensors
        ``(R, 16)`` and success ``(R,)`` bool. Fits of this call are taken again likewise.

    Returns
    -------
    None without numba, else a tuple of

    model : (2, 2, 2, 2) ndarray or None
        The last tensor fitted (None when the first fit is degenerate).
    converged : bool
    distances, norms : (N,) ndarray
        Sampson distances and gradient norms of ``model`` (of the starting tensor when None).
    fits : list of (rows, fit)
        The Taubin fits made: the rows (indices) and the tensor (None when degenerate).
    """
    if not (_jit.USE_NUMBA and compiled_row_kernels()):
        return None
    n = design.shape[0]
    steps = len(thresholds) + iterations
    out, d, gn = np.empty(16), np.empty((1, n)), np.empty((1, n))
    fit_rows, fit_sizes = np.empty((steps, n), np.intp), np.full(steps, -1, np.intp)
    fit_models, fit_ok = np.empty((steps, 16)), np.zeros(steps, bool)
    if known is None:
        known = (np.empty((0, n), np.intp), np.empty(0, np.intp), np.empty((0, 16)),
                 np.empty(0, bool))
    status = _nb_iterated_taubin(
        np.ascontiguousarray(design, dtype=float), rows.a, rows.c, rows.x, rows.y, rows.xp,
        rows.yp, np.ascontiguousarray(model, dtype=float).reshape(16),
        np.ascontiguousarray(inliers, dtype=bool), float(threshold),
        np.asarray(thresholds, dtype=float), int(iterations), int(sample_size),
        int(max_rows), float(change), np.square(scales), _TAUBIN_SOURCE, _TAUBIN_TARGET,
        np.ascontiguousarray(K, dtype=float), float(tol), *known, out, d, gn, fit_rows,
        fit_sizes, fit_models, fit_ok, *_jit.lapack_routines("dsyrk", "dsygv", "dgemv"))
    fits = []
    for k in range(steps):
        size = fit_sizes[k]
        if size < 0:
            break
        fits.append((fit_rows[k, :size],
                     fit_models[k].reshape(2, 2, 2, 2) if fit_ok[k] else None))
    return (None if status < 0 else out.reshape(2, 2, 2, 2)), status == 1, d[0], gn[0], fits


def _nb_thinned_rows(mask, max_rows, rows):  # pragma: no cover - compiled
    """The indices of ``mask`` (N,) into ``rows`` (N,), every ``k``-th of them when more than
    ``max_rows`` (``k`` the least that leaves at most ``max_rows``, as
    :meth:`~xslit.epipolar.estimate.EpipolarProblem.refit` thins); returns their number."""
    total = 0
    for i in range(mask.shape[0]):  # without a branch on the mask (``rows`` holds N)
        rows[total] = i
        total += mask[i]
    if total <= max_rows:
        return total
    step = -(-total // max_rows)
    m = 0
    for j in range(0, total, step):
        rows[m] = rows[j]
        m += 1
    return m


def _nb_recall(rows, table, sizes, count):  # pragma: no cover - compiled
    """The first of the ``count`` entries of ``table`` (R, N) whose first ``sizes[k]`` values
    are ``rows``, or -1 (for numba, :func:`compiled_row_kernels`)."""
    n = rows.shape[0]
    for k in range(count):
        if sizes[k] != n:
            continue
        same = True
        for i in range(n):
            if table[k, i] != rows[i]:
                same = False
                break
        if same:
            return k
    return -1


def _nb_recall_or_fit(design, rows, s2, source, target, K, tol, D, fit, known_rows,
                      known_sizes, known_models, known_ok, fit_rows, fit_sizes, fit_models,
                      fit_ok, fits, syrk, sygv):  # pragma: no cover - compiled
    """Taubin's fit of ``rows`` into ``fit`` (:func:`_nb_taubin_rows`; False when the rows do
    not determine it), or the same fit made before: among the ``known`` ones or the first
    ``fits`` of this call; recorded as the call's fit number ``fits`` (its rows, their number,
    the tensor and whether it succeeded) either way (for numba,
    :func:`compiled_row_kernels`)."""
    k = _nb_recall(rows, known_rows, known_sizes, known_sizes.shape[0])
    if k >= 0:
        ok = known_ok[k]
        if ok:
            fit[:] = known_models[k]
    else:
        k = _nb_recall(rows, fit_rows, fit_sizes, fits)
        if k >= 0:
            ok = fit_ok[k]
            if ok:
                fit[:] = fit_models[k]
        else:
            ok = _nb_taubin_rows(design, rows, s2, source, target, K, tol, D, fit, syrk, sygv)
    n = rows.shape[0]
    fit_rows[fits, :n] = rows
    fit_ok[fits] = ok
    fit_sizes[fits] = n
    fit_models[fits] = fit
    return ok


def _nb_iterated_taubin(design, a, c, x, y, xp, yp, model, inliers, threshold, thresholds,
                        iterations, sample_size, max_rows, change, s2, source, target, K, tol,
                        known_rows, known_sizes, known_models, known_ok, out, d, gn, fit_rows,
                        fit_sizes, fit_models, fit_ok, syrk, sygv,
                        gemv):  # pragma: no cover - compiled
    """:func:`iterated_taubin_fits` into ``out`` (16,) (the last tensor), ``d``, ``gn``
    (1, N) (its distances and gradient norms) and the fits' rows, sizes, tensors and
    success (for numba, :func:`compiled_row_kernels`). Returns -1 when no tensor was fitted,
    1 when converged, else 0. The kernels of :func:`taubin_fit_from_design`,
    :func:`weighted_leverage`, :func:`denormalize_with`, :func:`pulled_rows` and
    :meth:`~xslit.epipolar.tensor.SampsonRows.distances` in the order of the loop's calls."""
    n_all = design.shape[0]
    rows, kept = np.empty(n_all, np.intp), np.empty(n_all, np.intp)
    D, Y, h = np.empty((n_all, 16)), np.empty((n_all, 16)), np.empty(n_all)
    V, V1, w1 = np.empty((16, 16)), np.empty((16, 16)), np.empty(16)
    f, fit = np.empty(16), np.empty(16)
    dv, gv = np.empty((1, n_all)), np.empty((1, n_all))
    dsel, pulled = np.empty(n_all), np.empty(n_all, np.bool_)
    inl, inl_new, within = inliers.copy(), np.empty(n_all, np.bool_), np.empty(n_all, np.bool_)
    out[:] = model
    fitted = False
    fits = 0
    sampson_rows_into(out.reshape(1, 4, 4), a, c, x, y, xp, yp, False, d, gn)
    for t in thresholds:
        for i in range(n_all):
            within[i] = d[0, i] < t
        n = _nb_thinned_rows(within, max_rows, rows)
        if n < sample_size:
            break
        ok = _nb_recall_or_fit(design, rows[:n], s2, source, target, K, tol, D[:n], fit,
                               known_rows, known_sizes, known_models, known_ok, fit_rows,
                               fit_sizes, fit_models, fit_ok, fits, syrk, sygv)
        fits += 1
        if not ok:
            break
        out[:] = fit
        fitted = True
        sampson_rows_into(out.reshape(1, 4, 4), a, c, x, y, xp, yp, False, d, gn)
    if thresholds.shape[0] > 0:
        for i in range(n_all):
            inl[i] = d[0, i] < threshold
    for _ in range(iterations):
        n = _nb_thinned_rows(inl, max_rows, rows)
        if n < sample_size:
            return 0 if fitted else -1
        m = n
        kept[:n] = rows[:n]
        if _nb_leverage(design, rows[:n], gn[0], D[:n], Y[:n], h[:n], V, V1, w1, True, syrk,
                        gemv):
            _nb_denormalize_into(np.ascontiguousarray(V[:, 0]), K, f)
            sampson_rows_into(f.reshape(1, 4, 4), a, c, x, y, xp, yp, False, dv, gv)
            for i in range(n):
                dsel[i] = dv[0, rows[i]]
            _nb_pulled_rows(dsel[:n], h[:n], D[:n], V1, w1, K, threshold, sample_size,
                            pulled[:n])
            m = 0
            for i in range(n):
                if not pulled[i]:
                    kept[m] = rows[i]
                    m += 1
        ok = _nb_recall_or_fit(design, kept[:m], s2, source, target, K, tol, D[:m], fit,
                               known_rows, known_sizes, known_models, known_ok, fit_rows,
                               fit_sizes, fit_models, fit_ok, fits, syrk, sygv)
        fits += 1
        if not ok:
            return 0 if fitted else -1
        out[:] = fit
        fitted = True
        sampson_rows_into(out.reshape(1, 4, 4), a, c, x, y, xp, yp, False, d, gn)
        count, count_new, changed = 0, 0, 0
        for i in range(n_all):
            inl_new[i] = d[0, i] < threshold
            count += inl[i]
            count_new += inl_new[i]
            changed += inl[i] != inl_new[i]
        if count_new <= sample_size:
            return 0
        if changed <= change * count:
            return 1
        inl[:] = inl_new
    return 0


def best_sample_fit(design, rows, samples, start, K, threshold, steps: int = 8):
    """The fit of least truncated quadratic loss among the fits of the ``samples`` of design
    rows by inverse iteration from ``start``, in one compiled call (:func:`_nb_best_sample_fit`),
    or None without numba.

    The fits are those of :func:`sample_inverse_iteration` mapped by ``K``
    (:func:`denormalize_with`); each is scored by the loss
    ``sum_i min(d_i^2, threshold^2)`` of its Sampson distances on the correspondences of
    ``rows`` (:func:`xslit.robust.msac_loss`, summed in numpy's pairwise order): the same
    fits and losses as those functions give, bit for bit.

    Parameters
    ----------
    design : (N, 16) ndarray
        C-contiguous design rows.
    rows : xslit.epipolar.tensor.SampsonRows
        The correspondences that score the fits.
    samples : (B, m) int ndarray
        Row indices of each sample (B >= 1).
    start : (16,) ndarray
        A vector near all the least eigenvectors (normalised frame).
    K : (16, 16) ndarray
        Map of normalised tensors to the frame of ``rows``.
    threshold : float
    steps : int
        Inverse-iteration steps.

    Returns
    -------
    None without numba, else the best fit (2, 2, 2, 2) and its loss.
    """
    if not (_jit.USE_NUMBA and compiled_row_kernels()):
        return None
    fits = np.empty((len(samples), 16))
    n = len(rows.x)
    k, loss = _nb_best_sample_fit(
        design, np.asarray(samples, dtype=np.intp),
        np.ascontiguousarray(start, dtype=float).reshape(16), steps,
        np.ascontiguousarray(K, dtype=float), rows.a, rows.c, rows.x, rows.y, rows.xp, rows.yp,
        float(threshold) * float(threshold), fits, np.empty((1, n)), np.empty((1, n)),
        *_jit.lapack_routines("dsyrk"))
    return fits[k].reshape(2, 2, 2, 2), loss


def _nb_block_sum(a, start, n):  # pragma: no cover - compiled
    """``a[start:start + n].sum()`` for ``n <= 128`` in numpy's order (its pairwise summation's
    block: eight running sums, then the rest one by one; fewer than eight values in turn)."""
    if n < 8:
        res = 0.0
        for i in range(start, start + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
    r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
    i = start + 8
    stop = start + n - n % 8
    while i < stop:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < start + n:
        res += a[i]
        i += 1
    return res


def pairwise_sum(a, n):  # pragma: no cover - compiled
    """``a[:n].sum()`` in numpy's order (for numba, :func:`compiled_row_kernels`; kernels of
    other modules call it compiled after that): blocks of at most 128 values
    (:func:`_nb_block_sum`) from halving at multiples of eight, the halves' sums added, as
    numpy's recursion does (here with a stack: a kernel cached on disk must not call
    itself)."""
    if n <= 128:
        return _nb_block_sum(a, 0, n)
    first, size, stage = np.empty(64, np.intp), np.empty(64, np.intp), np.zeros(64, np.intp)
    sums = np.empty(64)
    top, count = 0, 0
    first[0], size[0] = 0, n
    while top >= 0:
        m = size[top]
        if m <= 128:
            sums[count] = _nb_block_sum(a, first[top], m)
            count += 1
            top -= 1
        elif stage[top] == 2:  # both halves summed: their sum replaces them
            sums[count - 2] = sums[count - 2] + sums[count - 1]
            count -= 1
            top -= 1
        else:
            half = m // 2
            half -= half % 8
            stage[top] += 1
            left = stage[top] == 1
            first[top + 1] = first[top] if left else first[top] + half
            size[top + 1] = half if left else m - half
            stage[top + 1] = 0
            top += 1
    return sums[0]


def _nb_best_sample_fit(design, samples, start, steps, K, a, c, x, y, xp, yp, t2, fits, d, gn,
                        syrk):  # pragma: no cover - compiled
    """:func:`best_sample_fit`: the fits into ``fits`` (B, 16); returns the index of the best
    and its loss (for numba, :func:`compiled_row_kernels`). The kernels of
    :func:`sample_inverse_iteration`, :func:`denormalize_with` and
    :meth:`~xslit.epipolar.tensor.SampsonRows.distances` in the loop's order, then numpy's
    ``np.minimum(d * d, t2).sum()`` and ``argmin`` (the first least)."""
    f = np.empty((samples.shape[0], 16))
    _nb_sample_inverse_iteration(design, samples, start, steps, f, syrk)
    denormalize_rows_into(f, K, fits)
    n = a.shape[1]
    best, best_loss = 0, 0.0
    for b in range(samples.shape[0]):
        sampson_rows_into(fits[b].reshape(1, 4, 4), a, c, x, y, xp, yp, False, d, gn)
        for i in range(n):
            d[0, i] = min(d[0, i] * d[0, i], t2)
        loss = 0.0 + pairwise_sum(d[0], n)
        if b == 0 or loss < best_loss:
            best, best_loss = b, loss
    return best, best_loss
