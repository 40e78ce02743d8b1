r"""The 13-point minimal solver for the epipolar tensor (appendix "Algorithms", "Minimal SfM").

Thirteen correspondences give 13 linear equations (the relation of Theorem 1, section
"Two-slit cameras: algorithms") in the 16 entries of :math:`F`; on generic data their
solutions form a 3-dimensional space :math:`\operatorname{span}(N)`. The epipolar tensors are the signed principal minors of
:math:`4 \times 4` matrices :math:`C` (Theorem 1 and its proof, appendix "Linear SfM"), a
variety of degree 28, so 28 complex tensors, and 56 matrices :math:`C` in the gauge
:math:`c_{12} = c_{13} = c_{14} = 1` (each tensor has :math:`C` and :math:`C^T` up to diagonal
similarity), solve the problem.

Formulation
-----------
In the affine chart :math:`f_{2222} = 1` of the null space (``F[1, 1, 1, 1]`` here), every
tensor of :math:`\operatorname{span}(N)` is

.. math:: f(a, b) = f_0 + a f_1 + b f_2, \qquad (f_0)_{2222} = 1,\ (f_1)_{2222} = (f_2)_{2222} = 0,

and its signed entries :math:`\mu_S = (-1)^{|S|} f_S` must be the principal minors
:math:`\det C[S, S]` (``S`` the positions whose paper index is 1). The appendix algorithm reads
the diagonal :math:`c_{pp} = \mu_p` and the first column
:math:`c_{p1} = c_{11} c_{pp} - \mu_{1p}` off the chart; the eight remaining unknowns
:math:`u = (a, b, c_{23}, c_{32}, c_{24}, c_{42}, c_{34}, c_{43})` satisfy the eight polynomial
equations

.. math::

    \det C[S, S] - \mu_S(a, b) = 0, \qquad
    S \in \{23, 24, 34, 123, 124, 134, 234, 1234\}.

They are solved by parameter homotopy continuation: the parameters :math:`(f_0, f_1, f_2)`
move on the segment from those of a generic complex start system, whose 56 solutions are
stored with the package (``data/start_system_13pt.npz``, made by
``tools/make_start_system.py`` with monodromy), to those of the data. On every call the chart
of the start system is turned by the unitary :math:`2 \times 2` matrix that brings its
:math:`f_1, f_2` closest to the data's, so that the segment moves the chart's plane without a
twist (12% fewer evaluations than a turn drawn at random), times a random unitary matrix near
the identity (the gamma trick: a random complex path that avoids the discriminant with
probability one). The system depends
on :math:`C` only through its principal minors, so the gauge-fixed transpose of a solution is
a solution: 28 paths, one per transpose pair, are tracked (a fourth-order Runge-Kutta
predictor, two Newton corrections, adaptive step) and the other 28 solutions are their
partners. With numba installed (the optional extra ``fast``) the paths are tracked in compiled
loops (compiled on the first call, cached on disk), eight at a time: the evaluations and linear
solves of a step run on the eight paths together in vector instructions, and a path that ends
hands its lane to the next one; without numba, all paths of all instances advance together in
numpy. Both take the same steps. The start system is tracked from a chart like those of the
data (:func:`chart_from_null_space`). Instances whose paths fail (a path that diverges or
stalls, two paths meeting at one end), or with a solution whose principal minors miss its
tensor by more than :data:`STRUCTURE_TOL` (cancellation far out in the chart), are tracked
again from a fresh random chart.

The chart entry :math:`f_{2222}` is the value of the tensor at the origin of the image
coordinates. After the usual per-axis normalisation the origin is the centroid of the data,
where the tensor nearly vanishes, which puts the solutions far out in the chart (entries of
:math:`C` in the thousands, Jacobians with condition numbers near :math:`10^8`, paths that
fail). Each normalised axis is therefore also turned by a random rotation of its homogeneous
coordinates (:func:`null_space_charts`), which moves the origin away from the data.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
from importlib import resources

import numpy as np

from .. import _jit
from .._checks import (
    check_array,
    check_finite,
    check_image_points,
    check_index_array,
    check_rng,
)
from .linear import compiled_row_kernels, pairwise_sum
from .minors import principal_minor_tensor
from .tensor import INDEX, kron_modes

__all__ = [
    "CHART_TOL",
    "COND_TOL",
    "HAVE_NUMBA",
    "MIN_MINIMAL_POINTS",
    "N_SOLUTIONS",
    "REAL_TOL",
    "STRUCTURE_TOL",
    "MinimalComplexSolutions",
    "MinimalSolutions",
    "StartSystem",
    "chart_from_null_space",
    "gauge_transpose",
    "load_start_system",
    "matrix_from_unknowns",
    "minimal_hypotheses",
    "minimal_residuals",
    "null_space_charts",
    "solve_minimal",
    "solve_minimal_complex",
    "track_from_start",
    "track_paths",
]

#: Correspondences of the minimal problem (13 equations, a 3-dimensional null space).
MIN_MINIMAL_POINTS = 13

#: Complex solutions in the gauge c12 = c13 = c14 = 1 (28 tensors, two matrices C each).
N_SOLUTIONS = 56

#: Smallest accepted ``s_13 / s_1`` of the normalised 13 x 16 design matrix.
COND_TOL = 1e-7
#: Smallest accepted ``|N[15]|`` (the entry f_2222 of the unit null space basis): the chart.
CHART_TOL = 1e-9
#: Largest relative imaginary part of a solution counted as real.
REAL_TOL = 1e-8
#: Largest accepted miss of a solution's principal minors to its tensor (relative to the
#: largest entry) before a sample is solved again in a fresh chart
#: (:func:`solve_minimal_complex`).
STRUCTURE_TOL = 2e-9


def _flat(S) -> int:
    """Index into ``F.reshape(16)`` of the principal minor ``det C[S, S]`` (0-based ``S``)."""
    idx = [0 if m in S else 1 for m in range(4)]
    return int(idx[0] * 8 + idx[1] * 4 + idx[2] * 2 + idx[3])


#: (-1)^|S| for each entry of F (|S| = number of 0 indices).
_SIGN = (-1.0) ** (4 - INDEX.sum(axis=1))
#: The eight equations: subsets S (0-based) whose minors are not read off by the appendix
#: algorithm.
_EQ_SUBSETS = ((1, 2), (1, 3), (2, 3), (0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3), (0, 1, 2, 3))
_EQ_FLAT = np.array([_flat(S) for S in _EQ_SUBSETS])
_DIAG_FLAT = np.array([_flat((p,)) for p in range(4)])
_COL_FLAT = np.array([_flat((0, p)) for p in (1, 2, 3)])
#: Unknown off-diagonal entries u[2:], in order.
_OFF = ((1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2))
_OFF_R = np.array([r for r, _ in _OFF])
_OFF_C = np.array([c for _, c in _OFF])
#: Entries that depend on the chart coordinates (a, b): the diagonal and the first column.
_DEP = ((0, 0), (1, 1), (2, 2), (3, 3), (1, 0), (2, 0), (3, 0))


def _minor_tables():
    """Index tables of :func:`_minors`.

    The working array ``pool`` holds, by rows: the 16 entries of ``C`` (``4 i + j``), their
    negatives, the 2 x 2 minors ``C[R, K]`` that are needed (pairs of rows and columns), their
    negatives, and the signed cofactors of the 4 x 4 determinant at the entries in
    ``_GRAD`` (expanded along a row of the other row pair); the last row is zero.
    """
    grad = [4 * i + j for i, j in _DEP + _OFF]  # entries with a derivative, J's columns
    minors = {}  # (rows, cols) -> position among the 2 x 2 minors

    def minor(rows, cols):
        return minors.setdefault((tuple(rows), tuple(cols)), len(minors))

    g3 = {}  # (S, entry) -> (position of the minor, sign)
    for S in _EQ_SUBSETS[3:7]:
        for x in S:
            for y in S:
                if 4 * x + y in grad:
                    rows, cols = [q for q in S if q != x], [q for q in S if q != y]
                    g3[S, 4 * x + y] = (minor(rows, cols), (-1) ** (S.index(x) + S.index(y)))
    cof = []  # per entry of grad: three (C position, signed minor) terms
    for e in grad:
        x, y = divmod(e, 4)
        rows, cols = [q for q in range(4) if q != x], [q for q in range(4) if q != y]
        r0 = 1 - x if x < 2 else 5 - x  # the other row of x's pair
        rest = [q for q in rows if q != r0]
        terms = []
        for k, c in enumerate(cols):
            sign = (-1) ** (x + y + rows.index(r0) + k)
            terms.append((4 * r0 + c + (0 if sign > 0 else 16),
                          minor(rest, [q for q in cols if q != c])))
        cof.append(terms)
    nm = len(minors)
    q0, c0 = 32, 32 + 2 * nm  # first minor and first cofactor rows of the pool
    zero = c0 + len(grad)
    keys = list(minors)
    m_idx = np.array([[4 * R[0] + K[0], 4 * R[1] + K[1], 4 * R[0] + K[1], 4 * R[1] + K[0]]
                      for R, K in keys]).T  # minor = C[m0] C[m1] - C[m2] C[m3]
    cof_c = np.array([[c for c, _ in terms] for terms in cof])
    cof_m = np.array([[q0 + m for _, m in terms] for terms in cof])
    g_idx = np.full((8, len(grad)), zero)
    for r, S in enumerate(_EQ_SUBSETS):
        for k, e in enumerate(grad):
            x, y = divmod(e, 4)
            if x not in S or y not in S:
                continue
            if len(S) == 2:  # d(c_xx c_yy - c_xy c_yx): the opposite entry, signed
                o = 4 * (sum(S) - x) + sum(S) - y
                g_idx[r, k] = o if x == y else 16 + o
            elif len(S) == 3:
                m, sign = g3[S, e]
                g_idx[r, k] = q0 + m + (0 if sign > 0 else nm)
            else:
                g_idx[r, k] = c0 + k
    # Each determinant expanded along its first column: entries (x, S[0]), x in S.
    det_c = np.full((8, 4), zero)
    det_g = np.zeros((8, 4), dtype=int)
    for r, S in enumerate(_EQ_SUBSETS):
        for k, x in enumerate(S):
            det_c[r, k] = 4 * x + S[0]
            det_g[r, k] = grad.index(4 * x + S[0])
    return dict(grad=np.array(grad), n_pool=zero + 1, q0=q0, c0=c0, nm=nm, m_idx=m_idx,
                cof_c=cof_c, cof_m=cof_m, g_idx=g_idx, det_c=det_c, det_g=det_g)


_TABLES = _minor_tables()
_DIAG_C = np.array([0, 5, 10, 15])  # the diagonal of C, flat
_COL_C = np.array([4, 8, 12])  # c21, c31, c41, flat
_OFF_C_FLAT = np.array([4 * i + j for i, j in _OFF])


def _minors(u, p, dp):
    """The eight equations, their Jacobian in ``u`` and their derivative along ``dp``.

    The entries of ``C``, the 2 x 2 minors and the 4 x 4 cofactors that the equations and
    their gradients need are gathered into one working array by index tables
    (:func:`_minor_tables`): a few long vector operations over all paths.

    Parameters
    ----------
    u : (8, P) complex ndarray
    p : (3, 16, P) complex ndarray
        Chart ``(f0, f1, f2)`` of each path.
    dp : (3, 16, P) complex ndarray or None
        Direction of the parameters (``None``: no derivative).

    Returns
    -------
    H : (8, P), J : (8, 8, P), Ht : (8, P) or None
    """
    tb = _TABLES
    n = u.shape[1]
    a, b = u[0], u[1]
    sign = _SIGN[:, None]
    mu = sign * (p[0] + a * p[1] + b * p[2])  # (16, P)
    nd = 2 if dp is None else 3
    D = np.empty((nd, 16, n), dtype=complex)  # d mu along a, b (and t)
    D[0], D[1] = p[1], p[2]
    if dp is not None:
        D[2] = dp[0] + a * dp[1] + b * dp[2]
    D *= sign
    pool = np.empty((tb["n_pool"], n), dtype=complex)
    C = pool[:16]
    C[1:4] = 1.0
    C[_DIAG_C] = mu[_DIAG_FLAT]
    C[_COL_C] = C[0] * C[_DIAG_C[1:]] - mu[_COL_FLAT]
    C[_OFF_C_FLAT] = u[2:]
    np.negative(C, out=pool[16:32])
    q0, c0, nm = tb["q0"], tb["c0"], tb["nm"]
    m = tb["m_idx"]
    np.subtract(C[m[0]] * C[m[1]], C[m[2]] * C[m[3]], out=pool[q0:q0 + nm])
    np.negative(pool[q0:q0 + nm], out=pool[q0 + nm:c0])
    np.sum(pool[tb["cof_c"]] * pool[tb["cof_m"]], axis=1, out=pool[c0:-1])
    pool[-1] = 0.0
    G = pool[tb["g_idx"]]  # (8, 13, P): gradients at the diagonal, first column, unknowns
    H = np.sum(pool[tb["det_c"]] * G[np.arange(8)[:, None], tb["det_g"]], axis=1)
    H -= mu[_EQ_FLAT]
    dC = np.empty((nd, 7, n), dtype=complex)  # derivatives of the diagonal and first column
    dC[:, :4] = D[:, _DIAG_FLAT]
    dC[:, 4:] = (D[:, _DIAG_FLAT[:1]] * C[_DIAG_C[1:]] + C[0] * D[:, _DIAG_FLAT[1:]]
                 - D[:, _COL_FLAT])
    J = np.empty((8, 8, n), dtype=complex)
    dirs = [np.sum(G[:, :7] * dC[k], axis=1) - D[k, _EQ_FLAT] for k in range(nd)]
    J[:, 0], J[:, 1] = dirs[0], dirs[1]
    J[:, 2:] = G[:, 7:]
    return H, J, (dirs[2] if dp is not None else None)


def _newton_step(u, p, block: int = 1024):
    """The Newton correction ``J^{-1} H`` of the eight equations at ``u`` (8, P) in charts
    ``p`` (3, 16, P), computed on blocks of ``block`` paths."""
    d = np.empty_like(u)
    for lo in range(0, u.shape[1], block):
        sl = slice(lo, lo + block)
        H, J, _ = _minors(u[:, sl], p[..., sl], None)
        d[:, sl] = _solve(J, H)
    return d


#: Rows and columns of the Jacobian that only involve ``(a, b)`` and one pair
#: ``(c_ij, c_ji)``: the pair's 2 x 2 principal minor and its 3 x 3 principal minor with 1.
_PAIR_ROWS = np.array([[0, 3], [1, 4], [2, 5]])
_PAIR_COLS = np.array([[2, 3], [4, 5], [6, 7]])
#: Smallest ``|det B| / max|B|^2`` of a pivot block of :func:`_solve` (else LAPACK solves).
_PIVOT_TOL = 1e-10


def _inv2(M):
    """Inverses and determinants of 2 x 2 matrices ``M`` (..., 2, 2, P)."""
    a, b, c, d = M[..., 0, 0, :], M[..., 0, 1, :], M[..., 1, 0, :], M[..., 1, 1, :]
    det = a * d - b * c
    adj = np.stack([np.stack([d, -b], -2), np.stack([-c, a], -2)], -3)
    return adj / det[..., None, None, :], det


def _solve_lapack(J, rhs):
    """``J^{-1} rhs`` by LAPACK, ``J`` (8, 8, P), ``rhs`` (8, k, P); NaN where ``J`` is
    singular."""
    A = np.moveaxis(J, -1, 0)
    B = np.moveaxis(rhs, -1, 0)  # (P, 8, k)
    try:
        x = np.linalg.solve(A, B)
    except np.linalg.LinAlgError:
        x = np.full(B.shape, np.nan + 0j)
        with np.errstate(all="ignore"):
            ok = np.isfinite(np.linalg.cond(A))
        if np.any(ok):
            x[ok] = np.linalg.solve(A[ok], B[ok])
    return np.moveaxis(x, 0, -1)


def _solve(J, rhs):
    r"""``J^{-1} rhs`` for ``J`` (8, 8, P) and ``rhs`` (8, P) or (8, k, P); NaN where ``J`` is
    singular.

    Block elimination by the sparsity of :func:`_minors`' Jacobian: rows ``k`` and ``k + 3``
    (the 2 x 2 and 3 x 3 minors of the pair ``k``) involve only :math:`(a, b)` and the pair's
    unknowns :math:`y_k`, so with :math:`J_k = [A_k\ B_k]` on those rows

    .. math:: y_k = B_k^{-1} (r_k - A_k x_{ab}), \qquad
              \Big(W_{ab} - \sum_k W_k B_k^{-1} A_k\Big)\, x_{ab}
              = r_W - \sum_k W_k B_k^{-1} r_k

    with :math:`W` the last two rows (the minors of 234 and 1234): a few elementwise
    operations on 2 x 2 blocks instead of one LAPACK call per path. Paths whose 2 x 2 pivot
    blocks are nearly singular are solved by LAPACK.
    """
    r = rhs if rhs.ndim == 3 else rhs[:, None]
    A = J[_PAIR_ROWS[:, :, None], np.arange(2)]  # (3, 2, 2, P)
    B = J[_PAIR_ROWS[:, :, None], _PAIR_COLS[:, None, :]]  # (3, 2, 2, P)
    W = J[6:]  # (2, 8, P)
    with np.errstate(all="ignore"):
        Binv, detB = _inv2(B)
        M = np.einsum("kijp,kjlp->kilp", Binv, A)  # B^{-1} A, (3, 2, 2, P)
        z = np.einsum("kijp,kjlp->kilp", Binv, r[_PAIR_ROWS])  # B^{-1} r, (3, 2, k, P)
        Wk = W[:, _PAIR_COLS]  # (2, 3, 2, P)
        S = W[:, :2] - np.einsum("ikjp,kjlp->ilp", Wk, M)
        Sinv, detS = _inv2(S)
        xab = np.einsum("ijp,jlp->ilp", Sinv, r[6:] - np.einsum("ikjp,kjlp->ilp", Wk, z))
        y = z - np.einsum("kijp,jlp->kilp", M, xab)
        x = np.concatenate([xab, y.reshape(6, *y.shape[2:])])
        bsize = np.abs(B).max(axis=(1, 2))
        ssize = np.abs(S).max(axis=(0, 1))
        weak = ~(np.all(np.abs(detB) > _PIVOT_TOL * bsize * bsize, axis=0)
                 & (np.abs(detS) > _PIVOT_TOL * ssize * ssize)
                 & np.all(np.isfinite(x), axis=(0, 1)))
    if np.any(weak):
        x[..., weak] = _solve_lapack(J[..., weak], r[..., weak])
    return x if rhs.ndim == 3 else x[:, 0]


# The compiled tracker. The functions ``_nb_*`` are plain Python written for numba's nopython
# mode (scalar complex arithmetic, no allocation inside the loops); ``_compiled`` compiles them
# on first use (cached on disk) and binds the compiled versions to their module names, which
# is how they find each other. Without numba they are never called. ``_nb_eval``, the
# equations and their derivatives as straight-line code, is written by
# tools/make_minimal_kernel.py between its marker lines (a test checks that they agree).

#: Whether numba is installed: :func:`track_paths` and the solvers then track the paths in
#: compiled loops (``backend="auto"``, unless the environment variable ``XSLIT_NO_NUMBA``
#: switches the package's compiled kernels off, :mod:`xslit._jit`), compiled on the first
#: call and cached on disk.
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

#: Largest ratio of a step's second Newton correction to its first (both relative to
#: ``1 + |u|``) that :func:`track_paths` accepts, unless the second is at rounding level. A
#: larger ratio (a Newton iteration that does not contract quadratically) rejects the step:
#: the prediction may have landed near another path. On 400 noise-free samples a fifth took
#: 3.7% fewer steps of the eight lanes than a tenth, with 4 samples instead of 1 where two
#: paths met (solved again, :func:`solve_minimal_complex`) and all 56 solutions found at the
#: first attempt in 96.8% instead of 97.2%; 0.3 let paths meet in 15.
_CONTRACTION = 0.2

#: Paths that the lane kernels (``_nb_*_lanes``) advance together: a work array of
#: ``_W_ROWS * _LANES`` complex numbers, loops of this constant length over the lanes (the
#: compiler vectorises those, not loops of a variable length). Eight lanes were the fastest
#: measured on an AVX-512 machine: 0.78 ms of tracking per sample in batches of 100 against
#: 0.98 ms with four lanes, and 0.95 ms against 1.13 ms for a single sample's 28 paths despite
#: more idle lanes at its end; 12 and 16 lanes took 1.8 and 1.2 ms.
_LANES = 8


# BEGIN GENERATED by tools/make_minimal_kernel.py: edit the generator, not this block.
def _nb_eval(u, p, dp, H, J, Ht):
    r"""The eight equations ``H`` (8,), their Jacobian ``J`` (8, 8) in ``u`` (8,) and their
    derivative ``Ht`` (8,) along ``dp`` (3, 16), in the chart ``p`` (3, 16); the charts come
    multiplied by ``_SIGN``. Only the structurally nonzero entries of ``J`` are written (the
    caller zeroes it once).

    Straight-line code over the quantities of :func:`_minors` (kept in registers): ``mK`` the
    signed chart entry :math:`\mu` of ``F.reshape(16)[K]`` and ``vK`` its derivative along
    ``dp``; ``cXY`` the entries of ``C`` (``c0Y = 1`` for ``Y > 0``), ``aXY``, ``bXY``, ``tXY``
    the derivatives of its diagonal and first column along ``a``, ``b`` and ``dp``; ``gR_XY``
    the cofactor of ``C[X, Y]`` in equation ``R`` (2 x 2 and 3 x 3 cofactors in their cyclic
    form, 4 x 4 ones from the 2 x 2 minors ``sK`` of rows 0, 1 and ``kK`` of rows 2, 3).
    """
    a, b = u[0], u[1]
    m0 = p[0, 0] + a * p[1, 0] + b * p[2, 0]
    m1 = p[0, 1] + a * p[1, 1] + b * p[2, 1]
    m2 = p[0, 2] + a * p[1, 2] + b * p[2, 2]
    m3 = p[0, 3] + a * p[1, 3] + b * p[2, 3]
    m4 = p[0, 4] + a * p[1, 4] + b * p[2, 4]
    m5 = p[0, 5] + a * p[1, 5] + b * p[2, 5]
    m6 = p[0, 6] + a * p[1, 6] + b * p[2, 6]
    m7 = p[0, 7] + a * p[1, 7] + b * p[2, 7]
    m8 = p[0, 8] + a * p[1, 8] + b * p[2, 8]
    m9 = p[0, 9] + a * p[1, 9] + b * p[2, 9]
    m10 = p[0, 10] + a * p[1, 10] + b * p[2, 10]
    m11 = p[0, 11] + a * p[1, 11] + b * p[2, 11]
    m12 = p[0, 12] + a * p[1, 12] + b * p[2, 12]
    m13 = p[0, 13] + a * p[1, 13] + b * p[2, 13]
    m14 = p[0, 14] + a * p[1, 14] + b * p[2, 14]
    v0 = dp[0, 0] + a * dp[1, 0] + b * dp[2, 0]
    v1 = dp[0, 1] + a * dp[1, 1] + b * dp[2, 1]
    v2 = dp[0, 2] + a * dp[1, 2] + b * dp[2, 2]
    v3 = dp[0, 3] + a * dp[1, 3] + b * dp[2, 3]
    v4 = dp[0, 4] + a * dp[1, 4] + b * dp[2, 4]
    v5 = dp[0, 5] + a * dp[1, 5] + b * dp[2, 5]
    v6 = dp[0, 6] + a * dp[1, 6] + b * dp[2, 6]
    v7 = dp[0, 7] + a * dp[1, 7] + b * dp[2, 7]
    v8 = dp[0, 8] + a * dp[1, 8] + b * dp[2, 8]
    v9 = dp[0, 9] + a * dp[1, 9] + b * dp[2, 9]
    v10 = dp[0, 10] + a * dp[1, 10] + b * dp[2, 10]
    v11 = dp[0, 11] + a * dp[1, 11] + b * dp[2, 11]
    v12 = dp[0, 12] + a * dp[1, 12] + b * dp[2, 12]
    v13 = dp[0, 13] + a * dp[1, 13] + b * dp[2, 13]
    v14 = dp[0, 14] + a * dp[1, 14] + b * dp[2, 14]
    c00 = m7
    c11 = m11
    c22 = m13
    c33 = m14
    c10 = c00 * c11 - m3
    c20 = c00 * c22 - m5
    c30 = c00 * c33 - m6
    c12, c21, c13, c31, c23, c32 = u[2], u[3], u[4], u[5], u[6], u[7]
    a00 = p[1, 7]
    a11 = p[1, 11]
    a22 = p[1, 13]
    a33 = p[1, 14]
    a10 = a00 * c11 + c00 * a11 - p[1, 3]
    a20 = a00 * c22 + c00 * a22 - p[1, 5]
    a30 = a00 * c33 + c00 * a33 - p[1, 6]
    b00 = p[2, 7]
    b11 = p[2, 11]
    b22 = p[2, 13]
    b33 = p[2, 14]
    b10 = b00 * c11 + c00 * b11 - p[2, 3]
    b20 = b00 * c22 + c00 * b22 - p[2, 5]
    b30 = b00 * c33 + c00 * b33 - p[2, 6]
    t00 = v7
    t11 = v11
    t22 = v13
    t33 = v14
    t10 = t00 * c11 + c00 * t11 - v3
    t20 = t00 * c22 + c00 * t22 - v5
    t30 = t00 * c33 + c00 * t33 - v6
    g0_11 = c22
    g0_22 = c11
    g0_12 = -c21
    g0_21 = -c12
    H[0] = c11 * c22 - c12 * c21 - m9
    g1_11 = c33
    g1_33 = c11
    g1_13 = -c31
    g1_31 = -c13
    H[1] = c11 * c33 - c13 * c31 - m10
    g2_22 = c33
    g2_33 = c22
    g2_23 = -c32
    g2_32 = -c23
    H[2] = c22 * c33 - c23 * c32 - m12
    g3_00 = c11 * c22 - c12 * c21
    g3_10 = c21 - c22
    g3_11 = c22 * c00 - c20
    g3_12 = c20 - c21 * c00
    g3_20 = c12 - c11
    g3_21 = c10 - c00 * c12
    g3_22 = c00 * c11 - c10
    H[3] = c00 * g3_00 + c10 * g3_10 + c20 * g3_20 - m1
    g4_00 = c11 * c33 - c13 * c31
    g4_10 = c31 - c33
    g4_11 = c33 * c00 - c30
    g4_13 = c30 - c31 * c00
    g4_30 = c13 - c11
    g4_31 = c10 - c00 * c13
    g4_33 = c00 * c11 - c10
    H[4] = c00 * g4_00 + c10 * g4_10 + c30 * g4_30 - m2
    g5_00 = c22 * c33 - c23 * c32
    g5_20 = c32 - c33
    g5_22 = c33 * c00 - c30
    g5_23 = c30 - c32 * c00
    g5_30 = c23 - c22
    g5_32 = c20 - c00 * c23
    g5_33 = c00 * c22 - c20
    H[5] = c00 * g5_00 + c20 * g5_20 + c30 * g5_30 - m4
    g6_11 = c22 * c33 - c23 * c32
    g6_12 = c23 * c31 - c21 * c33
    g6_13 = c21 * c32 - c22 * c31
    g6_21 = c32 * c13 - c33 * c12
    g6_22 = c33 * c11 - c31 * c13
    g6_23 = c31 * c12 - c32 * c11
    g6_31 = c12 * c23 - c13 * c22
    g6_32 = c13 * c21 - c11 * c23
    g6_33 = c11 * c22 - c12 * c21
    H[6] = c11 * g6_11 + c21 * g6_21 + c31 * g6_31 - m8
    s0 = c00 * c11 - c10
    s1 = c00 * c12 - c10
    s2 = c00 * c13 - c10
    s3 = c12 - c11
    s4 = c13 - c11
    s5 = c13 - c12
    k5 = c22 * c33 - c23 * c32
    k4 = c21 * c33 - c23 * c31
    k3 = c21 * c32 - c22 * c31
    k2 = c20 * c33 - c23 * c30
    k1 = c20 * c32 - c22 * c30
    k0 = c20 * c31 - c21 * c30
    g7_00 = c11 * k5 - c12 * k4 + c13 * k3
    g7_11 = c00 * k5 - k2 + k1
    g7_22 = c30 * s4 - c31 * s2 + c33 * s0
    g7_33 = c20 * s3 - c21 * s1 + c22 * s0
    g7_10 = -k5 + k4 - k3
    g7_20 = c31 * s5 - c32 * s4 + c33 * s3
    g7_30 = -c21 * s5 + c22 * s4 - c23 * s3
    g7_12 = -c00 * k4 + k2 - k0
    g7_21 = -c30 * s5 + c32 * s2 - c33 * s1
    g7_13 = c00 * k3 - k1 + k0
    g7_31 = c20 * s5 - c22 * s2 + c23 * s1
    g7_23 = -c30 * s3 + c31 * s1 - c32 * s0
    g7_32 = -c20 * s4 + c21 * s2 - c23 * s0
    H[7] = s0 * k5 - s1 * k4 + s2 * k3 + s3 * k2 - s4 * k1 + s5 * k0 - m0
    J[0, 2] = g0_12
    J[0, 3] = g0_21
    J[0, 0] = g0_11 * a11 + g0_22 * a22 - p[1, 9]
    J[0, 1] = g0_11 * b11 + g0_22 * b22 - p[2, 9]
    Ht[0] = g0_11 * t11 + g0_22 * t22 - v9
    J[1, 4] = g1_13
    J[1, 5] = g1_31
    J[1, 0] = g1_11 * a11 + g1_33 * a33 - p[1, 10]
    J[1, 1] = g1_11 * b11 + g1_33 * b33 - p[2, 10]
    Ht[1] = g1_11 * t11 + g1_33 * t33 - v10
    J[2, 6] = g2_23
    J[2, 7] = g2_32
    J[2, 0] = g2_22 * a22 + g2_33 * a33 - p[1, 12]
    J[2, 1] = g2_22 * b22 + g2_33 * b33 - p[2, 12]
    Ht[2] = g2_22 * t22 + g2_33 * t33 - v12
    J[3, 2] = g3_12
    J[3, 3] = g3_21
    J[3, 0] = g3_00 * a00 + g3_11 * a11 + g3_22 * a22 + g3_10 * a10 + g3_20 * a20 - p[1, 1]
    J[3, 1] = g3_00 * b00 + g3_11 * b11 + g3_22 * b22 + g3_10 * b10 + g3_20 * b20 - p[2, 1]
    Ht[3] = g3_00 * t00 + g3_11 * t11 + g3_22 * t22 + g3_10 * t10 + g3_20 * t20 - v1
    J[4, 4] = g4_13
    J[4, 5] = g4_31
    J[4, 0] = g4_00 * a00 + g4_11 * a11 + g4_33 * a33 + g4_10 * a10 + g4_30 * a30 - p[1, 2]
    J[4, 1] = g4_00 * b00 + g4_11 * b11 + g4_33 * b33 + g4_10 * b10 + g4_30 * b30 - p[2, 2]
    Ht[4] = g4_00 * t00 + g4_11 * t11 + g4_33 * t33 + g4_10 * t10 + g4_30 * t30 - v2
    J[5, 6] = g5_23
    J[5, 7] = g5_32
    J[5, 0] = g5_00 * a00 + g5_22 * a22 + g5_33 * a33 + g5_20 * a20 + g5_30 * a30 - p[1, 4]
    J[5, 1] = g5_00 * b00 + g5_22 * b22 + g5_33 * b33 + g5_20 * b20 + g5_30 * b30 - p[2, 4]
    Ht[5] = g5_00 * t00 + g5_22 * t22 + g5_33 * t33 + g5_20 * t20 + g5_30 * t30 - v4
    J[6, 2] = g6_12
    J[6, 3] = g6_21
    J[6, 4] = g6_13
    J[6, 5] = g6_31
    J[6, 6] = g6_23
    J[6, 7] = g6_32
    J[6, 0] = g6_11 * a11 + g6_22 * a22 + g6_33 * a33 - p[1, 8]
    J[6, 1] = g6_11 * b11 + g6_22 * b22 + g6_33 * b33 - p[2, 8]
    Ht[6] = g6_11 * t11 + g6_22 * t22 + g6_33 * t33 - v8
    J[7, 2] = g7_12
    J[7, 3] = g7_21
    J[7, 4] = g7_13
    J[7, 5] = g7_31
    J[7, 6] = g7_23
    J[7, 7] = g7_32
    J[7, 0] = (g7_00 * a00 + g7_11 * a11 + g7_22 * a22 + g7_33 * a33 + g7_10 * a10
               + g7_20 * a20 + g7_30 * a30 - p[1, 0])
    J[7, 1] = (g7_00 * b00 + g7_11 * b11 + g7_22 * b22 + g7_33 * b33 + g7_10 * b10
               + g7_20 * b20 + g7_30 * b30 - p[2, 0])
    Ht[7] = (g7_00 * t00 + g7_11 * t11 + g7_22 * t22 + g7_33 * t33 + g7_10 * t10
             + g7_20 * t20 + g7_30 * t30 - v0)


#: Rows of the work array of the lane kernels (the generator's ``ROWS``).
(_W_U, _W_SP0, _W_DP, _W_TS, _W_H, _W_HT,
 _W_J, _W_X0, _W_X1, _W_BAD, _W_FREE) = (
    0, 8, 56, 104, 105, 113, 121, 185, 193, 201, 202)


def _nb_eval_lanes(w):
    """:func:`_nb_eval` on every lane of the work array ``w`` (rows
    ``_W_*``) in the chart ``p = sp0 + t dp`` of the homotopy at the lane's ``t``: the same
    straight-line code in a loop over the lanes, which the compiler turns into vector
    instructions (all lanes in one array, a loop of constant length); the entries ``pR_K`` of
    the chart that the equations read are computed first.
    """
    for l in range(_LANES):
        t = w[104 * _LANES + l].real
        p0_0 = w[8 * _LANES + l] + t * w[56 * _LANES + l]
        p0_1 = w[9 * _LANES + l] + t * w[57 * _LANES + l]
        p0_2 = w[10 * _LANES + l] + t * w[58 * _LANES + l]
        p0_3 = w[11 * _LANES + l] + t * w[59 * _LANES + l]
        p0_4 = w[12 * _LANES + l] + t * w[60 * _LANES + l]
        p0_5 = w[13 * _LANES + l] + t * w[61 * _LANES + l]
        p0_6 = w[14 * _LANES + l] + t * w[62 * _LANES + l]
        p0_7 = w[15 * _LANES + l] + t * w[63 * _LANES + l]
        p0_8 = w[16 * _LANES + l] + t * w[64 * _LANES + l]
        p0_9 = w[17 * _LANES + l] + t * w[65 * _LANES + l]
        p0_10 = w[18 * _LANES + l] + t * w[66 * _LANES + l]
        p0_11 = w[19 * _LANES + l] + t * w[67 * _LANES + l]
        p0_12 = w[20 * _LANES + l] + t * w[68 * _LANES + l]
        p0_13 = w[21 * _LANES + l] + t * w[69 * _LANES + l]
        p0_14 = w[22 * _LANES + l] + t * w[70 * _LANES + l]
        p1_0 = w[24 * _LANES + l] + t * w[72 * _LANES + l]
        p1_1 = w[25 * _LANES + l] + t * w[73 * _LANES + l]
        p1_2 = w[26 * _LANES + l] + t * w[74 * _LANES + l]
        p1_3 = w[27 * _LANES + l] + t * w[75 * _LANES + l]
        p1_4 = w[28 * _LANES + l] + t * w[76 * _LANES + l]
        p1_5 = w[29 * _LANES + l] + t * w[77 * _LANES + l]
        p1_6 = w[30 * _LANES + l] + t * w[78 * _LANES + l]
        p1_7 = w[31 * _LANES + l] + t * w[79 * _LANES + l]
        p1_8 = w[32 * _LANES + l] + t * w[80 * _LANES + l]
        p1_9 = w[33 * _LANES + l] + t * w[81 * _LANES + l]
        p1_10 = w[34 * _LANES + l] + t * w[82 * _LANES + l]
        p1_11 = w[35 * _LANES + l] + t * w[83 * _LANES + l]
        p1_12 = w[36 * _LANES + l] + t * w[84 * _LANES + l]
        p1_13 = w[37 * _LANES + l] + t * w[85 * _LANES + l]
        p1_14 = w[38 * _LANES + l] + t * w[86 * _LANES + l]
        p2_0 = w[40 * _LANES + l] + t * w[88 * _LANES + l]
        p2_1 = w[41 * _LANES + l] + t * w[89 * _LANES + l]
        p2_2 = w[42 * _LANES + l] + t * w[90 * _LANES + l]
        p2_3 = w[43 * _LANES + l] + t * w[91 * _LANES + l]
        p2_4 = w[44 * _LANES + l] + t * w[92 * _LANES + l]
        p2_5 = w[45 * _LANES + l] + t * w[93 * _LANES + l]
        p2_6 = w[46 * _LANES + l] + t * w[94 * _LANES + l]
        p2_7 = w[47 * _LANES + l] + t * w[95 * _LANES + l]
        p2_8 = w[48 * _LANES + l] + t * w[96 * _LANES + l]
        p2_9 = w[49 * _LANES + l] + t * w[97 * _LANES + l]
        p2_10 = w[50 * _LANES + l] + t * w[98 * _LANES + l]
        p2_11 = w[51 * _LANES + l] + t * w[99 * _LANES + l]
        p2_12 = w[52 * _LANES + l] + t * w[100 * _LANES + l]
        p2_13 = w[53 * _LANES + l] + t * w[101 * _LANES + l]
        p2_14 = w[54 * _LANES + l] + t * w[102 * _LANES + l]
        a = w[l]
        b = w[1 * _LANES + l]
        m0 = p0_0 + a * p1_0 + b * p2_0
        m1 = p0_1 + a * p1_1 + b * p2_1
        m2 = p0_2 + a * p1_2 + b * p2_2
        m3 = p0_3 + a * p1_3 + b * p2_3
        m4 = p0_4 + a * p1_4 + b * p2_4
        m5 = p0_5 + a * p1_5 + b * p2_5
        m6 = p0_6 + a * p1_6 + b * p2_6
        m7 = p0_7 + a * p1_7 + b * p2_7
        m8 = p0_8 + a * p1_8 + b * p2_8
        m9 = p0_9 + a * p1_9 + b * p2_9
        m10 = p0_10 + a * p1_10 + b * p2_10
        m11 = p0_11 + a * p1_11 + b * p2_11
        m12 = p0_12 + a * p1_12 + b * p2_12
        m13 = p0_13 + a * p1_13 + b * p2_13
        m14 = p0_14 + a * p1_14 + b * p2_14
        v0 = w[56 * _LANES + l] + a * w[72 * _LANES + l] + b * w[88 * _LANES + l]
        v1 = w[57 * _LANES + l] + a * w[73 * _LANES + l] + b * w[89 * _LANES + l]
        v2 = w[58 * _LANES + l] + a * w[74 * _LANES + l] + b * w[90 * _LANES + l]
        v3 = w[59 * _LANES + l] + a * w[75 * _LANES + l] + b * w[91 * _LANES + l]
        v4 = w[60 * _LANES + l] + a * w[76 * _LANES + l] + b * w[92 * _LANES + l]
        v5 = w[61 * _LANES + l] + a * w[77 * _LANES + l] + b * w[93 * _LANES + l]
        v6 = w[62 * _LANES + l] + a * w[78 * _LANES + l] + b * w[94 * _LANES + l]
        v7 = w[63 * _LANES + l] + a * w[79 * _LANES + l] + b * w[95 * _LANES + l]
        v8 = w[64 * _LANES + l] + a * w[80 * _LANES + l] + b * w[96 * _LANES + l]
        v9 = w[65 * _LANES + l] + a * w[81 * _LANES + l] + b * w[97 * _LANES + l]
        v10 = w[66 * _LANES + l] + a * w[82 * _LANES + l] + b * w[98 * _LANES + l]
        v11 = w[67 * _LANES + l] + a * w[83 * _LANES + l] + b * w[99 * _LANES + l]
        v12 = w[68 * _LANES + l] + a * w[84 * _LANES + l] + b * w[100 * _LANES + l]
        v13 = w[69 * _LANES + l] + a * w[85 * _LANES + l] + b * w[101 * _LANES + l]
        v14 = w[70 * _LANES + l] + a * w[86 * _LANES + l] + b * w[102 * _LANES + l]
        c00 = m7
        c11 = m11
        c22 = m13
        c33 = m14
        c10 = c00 * c11 - m3
        c20 = c00 * c22 - m5
        c30 = c00 * c33 - m6
        c12 = w[2 * _LANES + l]
        c21 = w[3 * _LANES + l]
        c13 = w[4 * _LANES + l]
        c31 = w[5 * _LANES + l]
        c23 = w[6 * _LANES + l]
        c32 = w[7 * _LANES + l]
        a00 = p1_7
        a11 = p1_11
        a22 = p1_13
        a33 = p1_14
        a10 = a00 * c11 + c00 * a11 - p1_3
        a20 = a00 * c22 + c00 * a22 - p1_5
        a30 = a00 * c33 + c00 * a33 - p1_6
        b00 = p2_7
        b11 = p2_11
        b22 = p2_13
        b33 = p2_14
        b10 = b00 * c11 + c00 * b11 - p2_3
        b20 = b00 * c22 + c00 * b22 - p2_5
        b30 = b00 * c33 + c00 * b33 - p2_6
        t00 = v7
        t11 = v11
        t22 = v13
        t33 = v14
        t10 = t00 * c11 + c00 * t11 - v3
        t20 = t00 * c22 + c00 * t22 - v5
        t30 = t00 * c33 + c00 * t33 - v6
        g0_11 = c22
        g0_22 = c11
        g0_12 = -c21
        g0_21 = -c12
        w[105 * _LANES + l] = c11 * c22 - c12 * c21 - m9
        g1_11 = c33
        g1_33 = c11
        g1_13 = -c31
        g1_31 = -c13
        w[106 * _LANES + l] = c11 * c33 - c13 * c31 - m10
        g2_22 = c33
        g2_33 = c22
        g2_23 = -c32
        g2_32 = -c23
        w[107 * _LANES + l] = c22 * c33 - c23 * c32 - m12
        g3_00 = c11 * c22 - c12 * c21
        g3_10 = c21 - c22
        g3_11 = c22 * c00 - c20
        g3_12 = c20 - c21 * c00
        g3_20 = c12 - c11
        g3_21 = c10 - c00 * c12
        g3_22 = c00 * c11 - c10
        w[108 * _LANES + l] = c00 * g3_00 + c10 * g3_10 + c20 * g3_20 - m1
        g4_00 = c11 * c33 - c13 * c31
        g4_10 = c31 - c33
        g4_11 = c33 * c00 - c30
        g4_13 = c30 - c31 * c00
        g4_30 = c13 - c11
        g4_31 = c10 - c00 * c13
        g4_33 = c00 * c11 - c10
        w[109 * _LANES + l] = c00 * g4_00 + c10 * g4_10 + c30 * g4_30 - m2
        g5_00 = c22 * c33 - c23 * c32
        g5_20 = c32 - c33
        g5_22 = c33 * c00 - c30
        g5_23 = c30 - c32 * c00
        g5_30 = c23 - c22
        g5_32 = c20 - c00 * c23
        g5_33 = c00 * c22 - c20
        w[110 * _LANES + l] = c00 * g5_00 + c20 * g5_20 + c30 * g5_30 - m4
        g6_11 = c22 * c33 - c23 * c32
        g6_12 = c23 * c31 - c21 * c33
        g6_13 = c21 * c32 - c22 * c31
        g6_21 = c32 * c13 - c33 * c12
        g6_22 = c33 * c11 - c31 * c13
        g6_23 = c31 * c12 - c32 * c11
        g6_31 = c12 * c23 - c13 * c22
        g6_32 = c13 * c21 - c11 * c23
        g6_33 = c11 * c22 - c12 * c21
        w[111 * _LANES + l] = c11 * g6_11 + c21 * g6_21 + c31 * g6_31 - m8
        s0 = c00 * c11 - c10
        s1 = c00 * c12 - c10
        s2 = c00 * c13 - c10
        s3 = c12 - c11
        s4 = c13 - c11
        s5 = c13 - c12
        k5 = c22 * c33 - c23 * c32
        k4 = c21 * c33 - c23 * c31
        k3 = c21 * c32 - c22 * c31
        k2 = c20 * c33 - c23 * c30
        k1 = c20 * c32 - c22 * c30
        k0 = c20 * c31 - c21 * c30
        g7_00 = c11 * k5 - c12 * k4 + c13 * k3
        g7_11 = c00 * k5 - k2 + k1
        g7_22 = c30 * s4 - c31 * s2 + c33 * s0
        g7_33 = c20 * s3 - c21 * s1 + c22 * s0
        g7_10 = -k5 + k4 - k3
        g7_20 = c31 * s5 - c32 * s4 + c33 * s3
        g7_30 = -c21 * s5 + c22 * s4 - c23 * s3
        g7_12 = -c00 * k4 + k2 - k0
        g7_21 = -c30 * s5 + c32 * s2 - c33 * s1
        g7_13 = c00 * k3 - k1 + k0
        g7_31 = c20 * s5 - c22 * s2 + c23 * s1
        g7_23 = -c30 * s3 + c31 * s1 - c32 * s0
        g7_32 = -c20 * s4 + c21 * s2 - c23 * s0
        w[112 * _LANES + l] = s0 * k5 - s1 * k4 + s2 * k3 + s3 * k2 - s4 * k1 + s5 * k0 - m0
        w[123 * _LANES + l] = g0_12
        w[124 * _LANES + l] = g0_21
        w[121 * _LANES + l] = g0_11 * a11 + g0_22 * a22 - p1_9
        w[122 * _LANES + l] = g0_11 * b11 + g0_22 * b22 - p2_9
        w[113 * _LANES + l] = g0_11 * t11 + g0_22 * t22 - v9
        w[133 * _LANES + l] = g1_13
        w[134 * _LANES + l] = g1_31
        w[129 * _LANES + l] = g1_11 * a11 + g1_33 * a33 - p1_10
        w[130 * _LANES + l] = g1_11 * b11 + g1_33 * b33 - p2_10
        w[114 * _LANES + l] = g1_11 * t11 + g1_33 * t33 - v10
        w[143 * _LANES + l] = g2_23
        w[144 * _LANES + l] = g2_32
        w[137 * _LANES + l] = g2_22 * a22 + g2_33 * a33 - p1_12
        w[138 * _LANES + l] = g2_22 * b22 + g2_33 * b33 - p2_12
        w[115 * _LANES + l] = g2_22 * t22 + g2_33 * t33 - v12
        w[147 * _LANES + l] = g3_12
        w[148 * _LANES + l] = g3_21
        w[145 * _LANES + l] = (g3_00 * a00 + g3_11 * a11 + g3_22 * a22 + g3_10 * a10
                               + g3_20 * a20 - p1_1)
        w[146 * _LANES + l] = (g3_00 * b00 + g3_11 * b11 + g3_22 * b22 + g3_10 * b10
                               + g3_20 * b20 - p2_1)
        w[116 * _LANES + l] = (g3_00 * t00 + g3_11 * t11 + g3_22 * t22 + g3_10 * t10
                               + g3_20 * t20 - v1)
        w[157 * _LANES + l] = g4_13
        w[158 * _LANES + l] = g4_31
        w[153 * _LANES + l] = (g4_00 * a00 + g4_11 * a11 + g4_33 * a33 + g4_10 * a10
                               + g4_30 * a30 - p1_2)
        w[154 * _LANES + l] = (g4_00 * b00 + g4_11 * b11 + g4_33 * b33 + g4_10 * b10
                               + g4_30 * b30 - p2_2)
        w[117 * _LANES + l] = (g4_00 * t00 + g4_11 * t11 + g4_33 * t33 + g4_10 * t10
                               + g4_30 * t30 - v2)
        w[167 * _LANES + l] = g5_23
        w[168 * _LANES + l] = g5_32
        w[161 * _LANES + l] = (g5_00 * a00 + g5_22 * a22 + g5_33 * a33 + g5_20 * a20
                               + g5_30 * a30 - p1_4)
        w[162 * _LANES + l] = (g5_00 * b00 + g5_22 * b22 + g5_33 * b33 + g5_20 * b20
                               + g5_30 * b30 - p2_4)
        w[118 * _LANES + l] = (g5_00 * t00 + g5_22 * t22 + g5_33 * t33 + g5_20 * t20
                               + g5_30 * t30 - v4)
        w[171 * _LANES + l] = g6_12
        w[172 * _LANES + l] = g6_21
        w[173 * _LANES + l] = g6_13
        w[174 * _LANES + l] = g6_31
        w[175 * _LANES + l] = g6_23
        w[176 * _LANES + l] = g6_32
        w[169 * _LANES + l] = g6_11 * a11 + g6_22 * a22 + g6_33 * a33 - p1_8
        w[170 * _LANES + l] = g6_11 * b11 + g6_22 * b22 + g6_33 * b33 - p2_8
        w[119 * _LANES + l] = g6_11 * t11 + g6_22 * t22 + g6_33 * t33 - v8
        w[179 * _LANES + l] = g7_12
        w[180 * _LANES + l] = g7_21
        w[181 * _LANES + l] = g7_13
        w[182 * _LANES + l] = g7_31
        w[183 * _LANES + l] = g7_23
        w[184 * _LANES + l] = g7_32
        w[177 * _LANES + l] = (g7_00 * a00 + g7_11 * a11 + g7_22 * a22 + g7_33 * a33
                               + g7_10 * a10 + g7_20 * a20 + g7_30 * a30 - p1_0)
        w[178 * _LANES + l] = (g7_00 * b00 + g7_11 * b11 + g7_22 * b22 + g7_33 * b33
                               + g7_10 * b10 + g7_20 * b20 + g7_30 * b30 - p2_0)
        w[120 * _LANES + l] = (g7_00 * t00 + g7_11 * t11 + g7_22 * t22 + g7_33 * t33
                               + g7_10 * t10 + g7_20 * t20 + g7_30 * t30 - v0)


def _nb_eval_lanes_hj(w):
    """:func:`_nb_eval_lanes` without ``Ht`` (its rows keep their values): the
    statements that the other outputs need.
    """
    for l in range(_LANES):
        t = w[104 * _LANES + l].real
        p0_0 = w[8 * _LANES + l] + t * w[56 * _LANES + l]
        p0_1 = w[9 * _LANES + l] + t * w[57 * _LANES + l]
        p0_2 = w[10 * _LANES + l] + t * w[58 * _LANES + l]
        p0_3 = w[11 * _LANES + l] + t * w[59 * _LANES + l]
        p0_4 = w[12 * _LANES + l] + t * w[60 * _LANES + l]
        p0_5 = w[13 * _LANES + l] + t * w[61 * _LANES + l]
        p0_6 = w[14 * _LANES + l] + t * w[62 * _LANES + l]
        p0_7 = w[15 * _LANES + l] + t * w[63 * _LANES + l]
        p0_8 = w[16 * _LANES + l] + t * w[64 * _LANES + l]
        p0_9 = w[17 * _LANES + l] + t * w[65 * _LANES + l]
        p0_10 = w[18 * _LANES + l] + t * w[66 * _LANES + l]
        p0_11 = w[19 * _LANES + l] + t * w[67 * _LANES + l]
        p0_12 = w[20 * _LANES + l] + t * w[68 * _LANES + l]
        p0_13 = w[21 * _LANES + l] + t * w[69 * _LANES + l]
        p0_14 = w[22 * _LANES + l] + t * w[70 * _LANES + l]
        p1_0 = w[24 * _LANES + l] + t * w[72 * _LANES + l]
        p1_1 = w[25 * _LANES + l] + t * w[73 * _LANES + l]
        p1_2 = w[26 * _LANES + l] + t * w[74 * _LANES + l]
        p1_3 = w[27 * _LANES + l] + t * w[75 * _LANES + l]
        p1_4 = w[28 * _LANES + l] + t * w[76 * _LANES + l]
        p1_5 = w[29 * _LANES + l] + t * w[77 * _LANES + l]
        p1_6 = w[30 * _LANES + l] + t * w[78 * _LANES + l]
        p1_7 = w[31 * _LANES + l] + t * w[79 * _LANES + l]
        p1_8 = w[32 * _LANES + l] + t * w[80 * _LANES + l]
        p1_9 = w[33 * _LANES + l] + t * w[81 * _LANES + l]
        p1_10 = w[34 * _LANES + l] + t * w[82 * _LANES + l]
        p1_11 = w[35 * _LANES + l] + t * w[83 * _LANES + l]
        p1_12 = w[36 * _LANES + l] + t * w[84 * _LANES + l]
        p1_13 = w[37 * _LANES + l] + t * w[85 * _LANES + l]
        p1_14 = w[38 * _LANES + l] + t * w[86 * _LANES + l]
        p2_0 = w[40 * _LANES + l] + t * w[88 * _LANES + l]
        p2_1 = w[41 * _LANES + l] + t * w[89 * _LANES + l]
        p2_2 = w[42 * _LANES + l] + t * w[90 * _LANES + l]
        p2_3 = w[43 * _LANES + l] + t * w[91 * _LANES + l]
        p2_4 = w[44 * _LANES + l] + t * w[92 * _LANES + l]
        p2_5 = w[45 * _LANES + l] + t * w[93 * _LANES + l]
        p2_6 = w[46 * _LANES + l] + t * w[94 * _LANES + l]
        p2_7 = w[47 * _LANES + l] + t * w[95 * _LANES + l]
        p2_8 = w[48 * _LANES + l] + t * w[96 * _LANES + l]
        p2_9 = w[49 * _LANES + l] + t * w[97 * _LANES + l]
        p2_10 = w[50 * _LANES + l] + t * w[98 * _LANES + l]
        p2_11 = w[51 * _LANES + l] + t * w[99 * _LANES + l]
        p2_12 = w[52 * _LANES + l] + t * w[100 * _LANES + l]
        p2_13 = w[53 * _LANES + l] + t * w[101 * _LANES + l]
        p2_14 = w[54 * _LANES + l] + t * w[102 * _LANES + l]
        a = w[l]
        b = w[1 * _LANES + l]
        m0 = p0_0 + a * p1_0 + b * p2_0
        m1 = p0_1 + a * p1_1 + b * p2_1
        m2 = p0_2 + a * p1_2 + b * p2_2
        m3 = p0_3 + a * p1_3 + b * p2_3
        m4 = p0_4 + a * p1_4 + b * p2_4
        m5 = p0_5 + a * p1_5 + b * p2_5
        m6 = p0_6 + a * p1_6 + b * p2_6
        m7 = p0_7 + a * p1_7 + b * p2_7
        m8 = p0_8 + a * p1_8 + b * p2_8
        m9 = p0_9 + a * p1_9 + b * p2_9
        m10 = p0_10 + a * p1_10 + b * p2_10
        m11 = p0_11 + a * p1_11 + b * p2_11
        m12 = p0_12 + a * p1_12 + b * p2_12
        m13 = p0_13 + a * p1_13 + b * p2_13
        m14 = p0_14 + a * p1_14 + b * p2_14
        c00 = m7
        c11 = m11
        c22 = m13
        c33 = m14
        c10 = c00 * c11 - m3
        c20 = c00 * c22 - m5
        c30 = c00 * c33 - m6
        c12 = w[2 * _LANES + l]
        c21 = w[3 * _LANES + l]
        c13 = w[4 * _LANES + l]
        c31 = w[5 * _LANES + l]
        c23 = w[6 * _LANES + l]
        c32 = w[7 * _LANES + l]
        a00 = p1_7
        a11 = p1_11
        a22 = p1_13
        a33 = p1_14
        a10 = a00 * c11 + c00 * a11 - p1_3
        a20 = a00 * c22 + c00 * a22 - p1_5
        a30 = a00 * c33 + c00 * a33 - p1_6
        b00 = p2_7
        b11 = p2_11
        b22 = p2_13
        b33 = p2_14
        b10 = b00 * c11 + c00 * b11 - p2_3
        b20 = b00 * c22 + c00 * b22 - p2_5
        b30 = b00 * c33 + c00 * b33 - p2_6
        g0_11 = c22
        g0_22 = c11
        g0_12 = -c21
        g0_21 = -c12
        w[105 * _LANES + l] = c11 * c22 - c12 * c21 - m9
        g1_11 = c33
        g1_33 = c11
        g1_13 = -c31
        g1_31 = -c13
        w[106 * _LANES + l] = c11 * c33 - c13 * c31 - m10
        g2_22 = c33
        g2_33 = c22
        g2_23 = -c32
        g2_32 = -c23
        w[107 * _LANES + l] = c22 * c33 - c23 * c32 - m12
        g3_00 = c11 * c22 - c12 * c21
        g3_10 = c21 - c22
        g3_11 = c22 * c00 - c20
        g3_12 = c20 - c21 * c00
        g3_20 = c12 - c11
        g3_21 = c10 - c00 * c12
        g3_22 = c00 * c11 - c10
        w[108 * _LANES + l] = c00 * g3_00 + c10 * g3_10 + c20 * g3_20 - m1
        g4_00 = c11 * c33 - c13 * c31
        g4_10 = c31 - c33
        g4_11 = c33 * c00 - c30
        g4_13 = c30 - c31 * c00
        g4_30 = c13 - c11
        g4_31 = c10 - c00 * c13
        g4_33 = c00 * c11 - c10
        w[109 * _LANES + l] = c00 * g4_00 + c10 * g4_10 + c30 * g4_30 - m2
        g5_00 = c22 * c33 - c23 * c32
        g5_20 = c32 - c33
        g5_22 = c33 * c00 - c30
        g5_23 = c30 - c32 * c00
        g5_30 = c23 - c22
        g5_32 = c20 - c00 * c23
        g5_33 = c00 * c22 - c20
        w[110 * _LANES + l] = c00 * g5_00 + c20 * g5_20 + c30 * g5_30 - m4
        g6_11 = c22 * c33 - c23 * c32
        g6_12 = c23 * c31 - c21 * c33
        g6_13 = c21 * c32 - c22 * c31
        g6_21 = c32 * c13 - c33 * c12
        g6_22 = c33 * c11 - c31 * c13
        g6_23 = c31 * c12 - c32 * c11
        g6_31 = c12 * c23 - c13 * c22
        g6_32 = c13 * c21 - c11 * c23
        g6_33 = c11 * c22 - c12 * c21
        w[111 * _LANES + l] = c11 * g6_11 + c21 * g6_21 + c31 * g6_31 - m8
        s0 = c00 * c11 - c10
        s1 = c00 * c12 - c10
        s2 = c00 * c13 - c10
        s3 = c12 - c11
        s4 = c13 - c11
        s5 = c13 - c12
        k5 = c22 * c33 - c23 * c32
        k4 = c21 * c33 - c23 * c31
        k3 = c21 * c32 - c22 * c31
        k2 = c20 * c33 - c23 * c30
        k1 = c20 * c32 - c22 * c30
        k0 = c20 * c31 - c21 * c30
        g7_00 = c11 * k5 - c12 * k4 + c13 * k3
        g7_11 = c00 * k5 - k2 + k1
        g7_22 = c30 * s4 - c31 * s2 + c33 * s0
        g7_33 = c20 * s3 - c21 * s1 + c22 * s0
        g7_10 = -k5 + k4 - k3
        g7_20 = c31 * s5 - c32 * s4 + c33 * s3
        g7_30 = -c21 * s5 + c22 * s4 - c23 * s3
        g7_12 = -c00 * k4 + k2 - k0
        g7_21 = -c30 * s5 + c32 * s2 - c33 * s1
        g7_13 = c00 * k3 - k1 + k0
        g7_31 = c20 * s5 - c22 * s2 + c23 * s1
        g7_23 = -c30 * s3 + c31 * s1 - c32 * s0
        g7_32 = -c20 * s4 + c21 * s2 - c23 * s0
        w[112 * _LANES + l] = s0 * k5 - s1 * k4 + s2 * k3 + s3 * k2 - s4 * k1 + s5 * k0 - m0
        w[123 * _LANES + l] = g0_12
        w[124 * _LANES + l] = g0_21
        w[121 * _LANES + l] = g0_11 * a11 + g0_22 * a22 - p1_9
        w[122 * _LANES + l] = g0_11 * b11 + g0_22 * b22 - p2_9
        w[133 * _LANES + l] = g1_13
        w[134 * _LANES + l] = g1_31
        w[129 * _LANES + l] = g1_11 * a11 + g1_33 * a33 - p1_10
        w[130 * _LANES + l] = g1_11 * b11 + g1_33 * b33 - p2_10
        w[143 * _LANES + l] = g2_23
        w[144 * _LANES + l] = g2_32
        w[137 * _LANES + l] = g2_22 * a22 + g2_33 * a33 - p1_12
        w[138 * _LANES + l] = g2_22 * b22 + g2_33 * b33 - p2_12
        w[147 * _LANES + l] = g3_12
        w[148 * _LANES + l] = g3_21
        w[145 * _LANES + l] = (g3_00 * a00 + g3_11 * a11 + g3_22 * a22 + g3_10 * a10
                               + g3_20 * a20 - p1_1)
        w[146 * _LANES + l] = (g3_00 * b00 + g3_11 * b11 + g3_22 * b22 + g3_10 * b10
                               + g3_20 * b20 - p2_1)
        w[157 * _LANES + l] = g4_13
        w[158 * _LANES + l] = g4_31
        w[153 * _LANES + l] = (g4_00 * a00 + g4_11 * a11 + g4_33 * a33 + g4_10 * a10
                               + g4_30 * a30 - p1_2)
        w[154 * _LANES + l] = (g4_00 * b00 + g4_11 * b11 + g4_33 * b33 + g4_10 * b10
                               + g4_30 * b30 - p2_2)
        w[167 * _LANES + l] = g5_23
        w[168 * _LANES + l] = g5_32
        w[161 * _LANES + l] = (g5_00 * a00 + g5_22 * a22 + g5_33 * a33 + g5_20 * a20
                               + g5_30 * a30 - p1_4)
        w[162 * _LANES + l] = (g5_00 * b00 + g5_22 * b22 + g5_33 * b33 + g5_20 * b20
                               + g5_30 * b30 - p2_4)
        w[171 * _LANES + l] = g6_12
        w[172 * _LANES + l] = g6_21
        w[173 * _LANES + l] = g6_13
        w[174 * _LANES + l] = g6_31
        w[175 * _LANES + l] = g6_23
        w[176 * _LANES + l] = g6_32
        w[169 * _LANES + l] = g6_11 * a11 + g6_22 * a22 + g6_33 * a33 - p1_8
        w[170 * _LANES + l] = g6_11 * b11 + g6_22 * b22 + g6_33 * b33 - p2_8
        w[179 * _LANES + l] = g7_12
        w[180 * _LANES + l] = g7_21
        w[181 * _LANES + l] = g7_13
        w[182 * _LANES + l] = g7_31
        w[183 * _LANES + l] = g7_23
        w[184 * _LANES + l] = g7_32
        w[177 * _LANES + l] = (g7_00 * a00 + g7_11 * a11 + g7_22 * a22 + g7_33 * a33
                               + g7_10 * a10 + g7_20 * a20 + g7_30 * a30 - p1_0)
        w[178 * _LANES + l] = (g7_00 * b00 + g7_11 * b11 + g7_22 * b22 + g7_33 * b33
                               + g7_10 * b10 + g7_20 * b20 + g7_30 * b30 - p2_0)


def _nb_eval_lanes_jt(w):
    """:func:`_nb_eval_lanes` without ``H`` (its rows keep their values): the
    statements that the other outputs need.
    """
    for l in range(_LANES):
        t = w[104 * _LANES + l].real
        p0_3 = w[11 * _LANES + l] + t * w[59 * _LANES + l]
        p0_5 = w[13 * _LANES + l] + t * w[61 * _LANES + l]
        p0_6 = w[14 * _LANES + l] + t * w[62 * _LANES + l]
        p0_7 = w[15 * _LANES + l] + t * w[63 * _LANES + l]
        p0_11 = w[19 * _LANES + l] + t * w[67 * _LANES + l]
        p0_13 = w[21 * _LANES + l] + t * w[69 * _LANES + l]
        p0_14 = w[22 * _LANES + l] + t * w[70 * _LANES + l]
        p1_0 = w[24 * _LANES + l] + t * w[72 * _LANES + l]
        p1_1 = w[25 * _LANES + l] + t * w[73 * _LANES + l]
        p1_2 = w[26 * _LANES + l] + t * w[74 * _LANES + l]
        p1_3 = w[27 * _LANES + l] + t * w[75 * _LANES + l]
        p1_4 = w[28 * _LANES + l] + t * w[76 * _LANES + l]
        p1_5 = w[29 * _LANES + l] + t * w[77 * _LANES + l]
        p1_6 = w[30 * _LANES + l] + t * w[78 * _LANES + l]
        p1_7 = w[31 * _LANES + l] + t * w[79 * _LANES + l]
        p1_8 = w[32 * _LANES + l] + t * w[80 * _LANES + l]
        p1_9 = w[33 * _LANES + l] + t * w[81 * _LANES + l]
        p1_10 = w[34 * _LANES + l] + t * w[82 * _LANES + l]
        p1_11 = w[35 * _LANES + l] + t * w[83 * _LANES + l]
        p1_12 = w[36 * _LANES + l] + t * w[84 * _LANES + l]
        p1_13 = w[37 * _LANES + l] + t * w[85 * _LANES + l]
        p1_14 = w[38 * _LANES + l] + t * w[86 * _LANES + l]
        p2_0 = w[40 * _LANES + l] + t * w[88 * _LANES + l]
        p2_1 = w[41 * _LANES + l] + t * w[89 * _LANES + l]
        p2_2 = w[42 * _LANES + l] + t * w[90 * _LANES + l]
        p2_3 = w[43 * _LANES + l] + t * w[91 * _LANES + l]
        p2_4 = w[44 * _LANES + l] + t * w[92 * _LANES + l]
        p2_5 = w[45 * _LANES + l] + t * w[93 * _LANES + l]
        p2_6 = w[46 * _LANES + l] + t * w[94 * _LANES + l]
        p2_7 = w[47 * _LANES + l] + t * w[95 * _LANES + l]
        p2_8 = w[48 * _LANES + l] + t * w[96 * _LANES + l]
        p2_9 = w[49 * _LANES + l] + t * w[97 * _LANES + l]
        p2_10 = w[50 * _LANES + l] + t * w[98 * _LANES + l]
        p2_11 = w[51 * _LANES + l] + t * w[99 * _LANES + l]
        p2_12 = w[52 * _LANES + l] + t * w[100 * _LANES + l]
        p2_13 = w[53 * _LANES + l] + t * w[101 * _LANES + l]
        p2_14 = w[54 * _LANES + l] + t * w[102 * _LANES + l]
        a = w[l]
        b = w[1 * _LANES + l]
        m3 = p0_3 + a * p1_3 + b * p2_3
        m5 = p0_5 + a * p1_5 + b * p2_5
        m6 = p0_6 + a * p1_6 + b * p2_6
        m7 = p0_7 + a * p1_7 + b * p2_7
        m11 = p0_11 + a * p1_11 + b * p2_11
        m13 = p0_13 + a * p1_13 + b * p2_13
        m14 = p0_14 + a * p1_14 + b * p2_14
        v0 = w[56 * _LANES + l] + a * w[72 * _LANES + l] + b * w[88 * _LANES + l]
        v1 = w[57 * _LANES + l] + a * w[73 * _LANES + l] + b * w[89 * _LANES + l]
        v2 = w[58 * _LANES + l] + a * w[74 * _LANES + l] + b * w[90 * _LANES + l]
        v3 = w[59 * _LANES + l] + a * w[75 * _LANES + l] + b * w[91 * _LANES + l]
        v4 = w[60 * _LANES + l] + a * w[76 * _LANES + l] + b * w[92 * _LANES + l]
        v5 = w[61 * _LANES + l] + a * w[77 * _LANES + l] + b * w[93 * _LANES + l]
        v6 = w[62 * _LANES + l] + a * w[78 * _LANES + l] + b * w[94 * _LANES + l]
        v7 = w[63 * _LANES + l] + a * w[79 * _LANES + l] + b * w[95 * _LANES + l]
        v8 = w[64 * _LANES + l] + a * w[80 * _LANES + l] + b * w[96 * _LANES + l]
        v9 = w[65 * _LANES + l] + a * w[81 * _LANES + l] + b * w[97 * _LANES + l]
        v10 = w[66 * _LANES + l] + a * w[82 * _LANES + l] + b * w[98 * _LANES + l]
        v11 = w[67 * _LANES + l] + a * w[83 * _LANES + l] + b * w[99 * _LANES + l]
        v12 = w[68 * _LANES + l] + a * w[84 * _LANES + l] + b * w[100 * _LANES + l]
        v13 = w[69 * _LANES + l] + a * w[85 * _LANES + l] + b * w[101 * _LANES + l]
        v14 = w[70 * _LANES + l] + a * w[86 * _LANES + l] + b * w[102 * _LANES + l]
        c00 = m7
        c11 = m11
        c22 = m13
        c33 = m14
        c10 = c00 * c11 - m3
        c20 = c00 * c22 - m5
        c30 = c00 * c33 - m6
        c12 = w[2 * _LANES + l]
        c21 = w[3 * _LANES + l]
        c13 = w[4 * _LANES + l]
        c31 = w[5 * _LANES + l]
        c23 = w[6 * _LANES + l]
        c32 = w[7 * _LANES + l]
        a00 = p1_7
        a11 = p1_11
        a22 = p1_13
        a33 = p1_14
        a10 = a00 * c11 + c00 * a11 - p1_3
        a20 = a00 * c22 + c00 * a22 - p1_5
        a30 = a00 * c33 + c00 * a33 - p1_6
        b00 = p2_7
        b11 = p2_11
        b22 = p2_13
        b33 = p2_14
        b10 = b00 * c11 + c00 * b11 - p2_3
        b20 = b00 * c22 + c00 * b22 - p2_5
        b30 = b00 * c33 + c00 * b33 - p2_6
        t00 = v7
        t11 = v11
        t22 = v13
        t33 = v14
        t10 = t00 * c11 + c00 * t11 - v3
        t20 = t00 * c22 + c00 * t22 - v5
        t30 = t00 * c33 + c00 * t33 - v6
        g0_11 = c22
        g0_22 = c11
        g0_12 = -c21
        g0_21 = -c12
        g1_11 = c33
        g1_33 = c11
        g1_13 = -c31
        g1_31 = -c13
        g2_22 = c33
        g2_33 = c22
        g2_23 = -c32
        g2_32 = -c23
        g3_00 = c11 * c22 - c12 * c21
        g3_10 = c21 - c22
        g3_11 = c22 * c00 - c20
        g3_12 = c20 - c21 * c00
        g3_20 = c12 - c11
        g3_21 = c10 - c00 * c12
        g3_22 = c00 * c11 - c10
        g4_00 = c11 * c33 - c13 * c31
        g4_10 = c31 - c33
        g4_11 = c33 * c00 - c30
        g4_13 = c30 - c31 * c00
        g4_30 = c13 - c11
        g4_31 = c10 - c00 * c13
        g4_33 = c00 * c11 - c10
        g5_00 = c22 * c33 - c23 * c32
        g5_20 = c32 - c33
        g5_22 = c33 * c00 - c30
        g5_23 = c30 - c32 * c00
        g5_30 = c23 - c22
        g5_32 = c20 - c00 * c23
        g5_33 = c00 * c22 - c20
        g6_11 = c22 * c33 - c23 * c32
        g6_12 = c23 * c31 - c21 * c33
        g6_13 = c21 * c32 - c22 * c31
        g6_21 = c32 * c13 - c33 * c12
        g6_22 = c33 * c11 - c31 * c13
        g6_23 = c31 * c12 - c32 * c11
        g6_31 = c12 * c23 - c13 * c22
        g6_32 = c13 * c21 - c11 * c23
        g6_33 = c11 * c22 - c12 * c21
        s0 = c00 * c11 - c10
        s1 = c00 * c12 - c10
        s2 = c00 * c13 - c10
        s3 = c12 - c11
        s4 = c13 - c11
        s5 = c13 - c12
        k5 = c22 * c33 - c23 * c32
        k4 = c21 * c33 - c23 * c31
        k3 = c21 * c32 - c22 * c31
        k2 = c20 * c33 - c23 * c30
        k1 = c20 * c32 - c22 * c30
        k0 = c20 * c31 - c21 * c30
        g7_00 = c11 * k5 - c12 * k4 + c13 * k3
        g7_11 = c00 * k5 - k2 + k1
        g7_22 = c30 * s4 - c31 * s2 + c33 * s0
        g7_33 = c20 * s3 - c21 * s1 + c22 * s0
        g7_10 = -k5 + k4 - k3
        g7_20 = c31 * s5 - c32 * s4 + c33 * s3
        g7_30 = -c21 * s5 + c22 * s4 - c23 * s3
        g7_12 = -c00 * k4 + k2 - k0
        g7_21 = -c30 * s5 + c32 * s2 - c33 * s1
        g7_13 = c00 * k3 - k1 + k0
        g7_31 = c20 * s5 - c22 * s2 + c23 * s1
        g7_23 = -c30 * s3 + c31 * s1 - c32 * s0
        g7_32 = -c20 * s4 + c21 * s2 - c23 * s0
        w[123 * _LANES + l] = g0_12
        w[124 * _LANES + l] = g0_21
        w[121 * _LANES + l] = g0_11 * a11 + g0_22 * a22 - p1_9
        w[122 * _LANES + l] = g0_11 * b11 + g0_22 * b22 - p2_9
        w[113 * _LANES + l] = g0_11 * t11 + g0_22 * t22 - v9
        w[133 * _LANES + l] = g1_13
        w[134 * _LANES + l] = g1_31
        w[129 * _LANES + l] = g1_11 * a11 + g1_33 * a33 - p1_10
        w[130 * _LANES + l] = g1_11 * b11 + g1_33 * b33 - p2_10
        w[114 * _LANES + l] = g1_11 * t11 + g1_33 * t33 - v10
        w[143 * _LANES + l] = g2_23
        w[144 * _LANES + l] = g2_32
        w[137 * _LANES + l] = g2_22 * a22 + g2_33 * a33 - p1_12
        w[138 * _LANES + l] = g2_22 * b22 + g2_33 * b33 - p2_12
        w[115 * _LANES + l] = g2_22 * t22 + g2_33 * t33 - v12
        w[147 * _LANES + l] = g3_12
        w[148 * _LANES + l] = g3_21
        w[145 * _LANES + l] = (g3_00 * a00 + g3_11 * a11 + g3_22 * a22 + g3_10 * a10
                               + g3_20 * a20 - p1_1)
        w[146 * _LANES + l] = (g3_00 * b00 + g3_11 * b11 + g3_22 * b22 + g3_10 * b10
                               + g3_20 * b20 - p2_1)
        w[116 * _LANES + l] = (g3_00 * t00 + g3_11 * t11 + g3_22 * t22 + g3_10 * t10
                               + g3_20 * t20 - v1)
        w[157 * _LANES + l] = g4_13
        w[158 * _LANES + l] = g4_31
        w[153 * _LANES + l] = (g4_00 * a00 + g4_11 * a11 + g4_33 * a33 + g4_10 * a10
                               + g4_30 * a30 - p1_2)
        w[154 * _LANES + l] = (g4_00 * b00 + g4_11 * b11 + g4_33 * b33 + g4_10 * b10
                               + g4_30 * b30 - p2_2)
        w[117 * _LANES + l] = (g4_00 * t00 + g4_11 * t11 + g4_33 * t33 + g4_10 * t10
                               + g4_30 * t30 - v2)
        w[167 * _LANES + l] = g5_23
        w[168 * _LANES + l] = g5_32
        w[161 * _LANES + l] = (g5_00 * a00 + g5_22 * a22 + g5_33 * a33 + g5_20 * a20
                               + g5_30 * a30 - p1_4)
        w[162 * _LANES + l] = (g5_00 * b00 + g5_22 * b22 + g5_33 * b33 + g5_20 * b20
                               + g5_30 * b30 - p2_4)
        w[118 * _LANES + l] = (g5_00 * t00 + g5_22 * t22 + g5_33 * t33 + g5_20 * t20
                               + g5_30 * t30 - v4)
        w[171 * _LANES + l] = g6_12
        w[172 * _LANES + l] = g6_21
        w[173 * _LANES + l] = g6_13
        w[174 * _LANES + l] = g6_31
        w[175 * _LANES + l] = g6_23
        w[176 * _LANES + l] = g6_32
        w[169 * _LANES + l] = g6_11 * a11 + g6_22 * a22 + g6_33 * a33 - p1_8
        w[170 * _LANES + l] = g6_11 * b11 + g6_22 * b22 + g6_33 * b33 - p2_8
        w[119 * _LANES + l] = g6_11 * t11 + g6_22 * t22 + g6_33 * t33 - v8
        w[179 * _LANES + l] = g7_12
        w[180 * _LANES + l] = g7_21
        w[181 * _LANES + l] = g7_13
        w[182 * _LANES + l] = g7_31
        w[183 * _LANES + l] = g7_23
        w[184 * _LANES + l] = g7_32
        w[177 * _LANES + l] = (g7_00 * a00 + g7_11 * a11 + g7_22 * a22 + g7_33 * a33
                               + g7_10 * a10 + g7_20 * a20 + g7_30 * a30 - p1_0)
        w[178 * _LANES + l] = (g7_00 * b00 + g7_11 * b11 + g7_22 * b22 + g7_33 * b33
                               + g7_10 * b10 + g7_20 * b20 + g7_30 * b30 - p2_0)
        w[120 * _LANES + l] = (g7_00 * t00 + g7_11 * t11 + g7_22 * t22 + g7_33 * t33
                               + g7_10 * t10 + g7_20 * t20 + g7_30 * t30 - v0)


def _nb_solve_lanes_block(w):
    """:func:`_nb_solve` on every lane of ``w``, without its fallback:
    ``X0, X1 = J^{-1} (H, Ht)`` by the block elimination (three 2 x 2 pivot blocks and the
    Schur complement of the unknowns ``a, b``), and ``BAD`` set to 1 on the lanes whose pivot
    blocks are nearly singular or whose solution is not finite (the caller solves those by
    :func:`_nb_lu`). Straight-line code in a loop over the lanes, as :func:`_nb_eval_lanes`.
    """
    for l in range(_LANES):
        s00, s01 = w[169 * _LANES + l], w[170 * _LANES + l]
        s10, s11 = w[177 * _LANES + l], w[178 * _LANES + l]
        q00, q10 = w[111 * _LANES + l], w[112 * _LANES + l]
        q01, q11 = w[119 * _LANES + l], w[120 * _LANES + l]
        b00, b01 = w[123 * _LANES + l], w[124 * _LANES + l]
        b10, b11 = w[147 * _LANES + l], w[148 * _LANES + l]
        weak = False
        det = b00 * b11 - b01 * b10
        size = max(max(abs(b00.real) + abs(b00.imag), abs(b01.real) + abs(b01.imag)),
                   max(abs(b10.real) + abs(b10.imag), abs(b11.real) + abs(b11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        e00, e01, e10, e11 = b11 * inv, -b01 * inv, -b10 * inv, b00 * inv
        m000 = e00 * w[121 * _LANES + l] + e01 * w[145 * _LANES + l]
        m001 = e00 * w[122 * _LANES + l] + e01 * w[146 * _LANES + l]
        m010 = e10 * w[121 * _LANES + l] + e11 * w[145 * _LANES + l]
        m011 = e10 * w[122 * _LANES + l] + e11 * w[146 * _LANES + l]
        z000 = e00 * w[105 * _LANES + l] + e01 * w[108 * _LANES + l]
        z010 = e10 * w[105 * _LANES + l] + e11 * w[108 * _LANES + l]
        z001 = e00 * w[113 * _LANES + l] + e01 * w[116 * _LANES + l]
        z011 = e10 * w[113 * _LANES + l] + e11 * w[116 * _LANES + l]
        w00, w01 = w[171 * _LANES + l], w[172 * _LANES + l]
        w10, w11 = w[179 * _LANES + l], w[180 * _LANES + l]
        s00 -= w00 * m000 + w01 * m010
        s01 -= w00 * m001 + w01 * m011
        s10 -= w10 * m000 + w11 * m010
        s11 -= w10 * m001 + w11 * m011
        q00 -= w00 * z000 + w01 * z010
        q10 -= w10 * z000 + w11 * z010
        q01 -= w00 * z001 + w01 * z011
        q11 -= w10 * z001 + w11 * z011
        b00, b01 = w[133 * _LANES + l], w[134 * _LANES + l]
        b10, b11 = w[157 * _LANES + l], w[158 * _LANES + l]
        det = b00 * b11 - b01 * b10
        size = max(max(abs(b00.real) + abs(b00.imag), abs(b01.real) + abs(b01.imag)),
                   max(abs(b10.real) + abs(b10.imag), abs(b11.real) + abs(b11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        e00, e01, e10, e11 = b11 * inv, -b01 * inv, -b10 * inv, b00 * inv
        m100 = e00 * w[129 * _LANES + l] + e01 * w[153 * _LANES + l]
        m101 = e00 * w[130 * _LANES + l] + e01 * w[154 * _LANES + l]
        m110 = e10 * w[129 * _LANES + l] + e11 * w[153 * _LANES + l]
        m111 = e10 * w[130 * _LANES + l] + e11 * w[154 * _LANES + l]
        z100 = e00 * w[106 * _LANES + l] + e01 * w[109 * _LANES + l]
        z110 = e10 * w[106 * _LANES + l] + e11 * w[109 * _LANES + l]
        z101 = e00 * w[114 * _LANES + l] + e01 * w[117 * _LANES + l]
        z111 = e10 * w[114 * _LANES + l] + e11 * w[117 * _LANES + l]
        w00, w01 = w[173 * _LANES + l], w[174 * _LANES + l]
        w10, w11 = w[181 * _LANES + l], w[182 * _LANES + l]
        s00 -= w00 * m100 + w01 * m110
        s01 -= w00 * m101 + w01 * m111
        s10 -= w10 * m100 + w11 * m110
        s11 -= w10 * m101 + w11 * m111
        q00 -= w00 * z100 + w01 * z110
        q10 -= w10 * z100 + w11 * z110
        q01 -= w00 * z101 + w01 * z111
        q11 -= w10 * z101 + w11 * z111
        b00, b01 = w[143 * _LANES + l], w[144 * _LANES + l]
        b10, b11 = w[167 * _LANES + l], w[168 * _LANES + l]
        det = b00 * b11 - b01 * b10
        size = max(max(abs(b00.real) + abs(b00.imag), abs(b01.real) + abs(b01.imag)),
                   max(abs(b10.real) + abs(b10.imag), abs(b11.real) + abs(b11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        e00, e01, e10, e11 = b11 * inv, -b01 * inv, -b10 * inv, b00 * inv
        m200 = e00 * w[137 * _LANES + l] + e01 * w[161 * _LANES + l]
        m201 = e00 * w[138 * _LANES + l] + e01 * w[162 * _LANES + l]
        m210 = e10 * w[137 * _LANES + l] + e11 * w[161 * _LANES + l]
        m211 = e10 * w[138 * _LANES + l] + e11 * w[162 * _LANES + l]
        z200 = e00 * w[107 * _LANES + l] + e01 * w[110 * _LANES + l]
        z210 = e10 * w[107 * _LANES + l] + e11 * w[110 * _LANES + l]
        z201 = e00 * w[115 * _LANES + l] + e01 * w[118 * _LANES + l]
        z211 = e10 * w[115 * _LANES + l] + e11 * w[118 * _LANES + l]
        w00, w01 = w[175 * _LANES + l], w[176 * _LANES + l]
        w10, w11 = w[183 * _LANES + l], w[184 * _LANES + l]
        s00 -= w00 * m200 + w01 * m210
        s01 -= w00 * m201 + w01 * m211
        s10 -= w10 * m200 + w11 * m210
        s11 -= w10 * m201 + w11 * m211
        q00 -= w00 * z200 + w01 * z210
        q10 -= w10 * z200 + w11 * z210
        q01 -= w00 * z201 + w01 * z211
        q11 -= w10 * z201 + w11 * z211
        det = s00 * s11 - s01 * s10
        size = max(max(abs(s00.real) + abs(s00.imag), abs(s01.real) + abs(s01.imag)),
                   max(abs(s10.real) + abs(s10.imag), abs(s11.real) + abs(s11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        xa = (s11 * q00 - s01 * q10) * inv
        xb = (s00 * q10 - s10 * q00) * inv
        w[185 * _LANES + l], w[186 * _LANES + l] = xa, xb
        x00 = z000 - m000 * xa - m001 * xb
        w[187 * _LANES + l] = x00
        x01 = z010 - m010 * xa - m011 * xb
        w[188 * _LANES + l] = x01
        x10 = z100 - m100 * xa - m101 * xb
        w[189 * _LANES + l] = x10
        x11 = z110 - m110 * xa - m111 * xb
        w[190 * _LANES + l] = x11
        x20 = z200 - m200 * xa - m201 * xb
        w[191 * _LANES + l] = x20
        x21 = z210 - m210 * xa - m211 * xb
        w[192 * _LANES + l] = x21
        total = xa + xb + x00 + x01 + x10 + x11 + x20 + x21
        xa = (s11 * q01 - s01 * q11) * inv
        xb = (s00 * q11 - s10 * q01) * inv
        w[193 * _LANES + l], w[194 * _LANES + l] = xa, xb
        x00 = z001 - m000 * xa - m001 * xb
        w[195 * _LANES + l] = x00
        x01 = z011 - m010 * xa - m011 * xb
        w[196 * _LANES + l] = x01
        x10 = z101 - m100 * xa - m101 * xb
        w[197 * _LANES + l] = x10
        x11 = z111 - m110 * xa - m111 * xb
        w[198 * _LANES + l] = x11
        x20 = z201 - m200 * xa - m201 * xb
        w[199 * _LANES + l] = x20
        x21 = z211 - m210 * xa - m211 * xb
        w[200 * _LANES + l] = x21
        total += xa + xb + x00 + x01 + x10 + x11 + x20 + x21
        w[201 * _LANES + l] = 1.0 if weak | (not np.isfinite(total.real + total.imag)) else 0.0


def _nb_solve_lanes_h(w):
    """:func:`_nb_solve_lanes_block` for the right-hand side ``H`` alone (into
    ``X0``; the other rows keep their values).
    """
    for l in range(_LANES):
        s00, s01 = w[169 * _LANES + l], w[170 * _LANES + l]
        s10, s11 = w[177 * _LANES + l], w[178 * _LANES + l]
        q00, q10 = w[111 * _LANES + l], w[112 * _LANES + l]
        b00, b01 = w[123 * _LANES + l], w[124 * _LANES + l]
        b10, b11 = w[147 * _LANES + l], w[148 * _LANES + l]
        weak = False
        det = b00 * b11 - b01 * b10
        size = max(max(abs(b00.real) + abs(b00.imag), abs(b01.real) + abs(b01.imag)),
                   max(abs(b10.real) + abs(b10.imag), abs(b11.real) + abs(b11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        e00, e01, e10, e11 = b11 * inv, -b01 * inv, -b10 * inv, b00 * inv
        m000 = e00 * w[121 * _LANES + l] + e01 * w[145 * _LANES + l]
        m001 = e00 * w[122 * _LANES + l] + e01 * w[146 * _LANES + l]
        m010 = e10 * w[121 * _LANES + l] + e11 * w[145 * _LANES + l]
        m011 = e10 * w[122 * _LANES + l] + e11 * w[146 * _LANES + l]
        z000 = e00 * w[105 * _LANES + l] + e01 * w[108 * _LANES + l]
        z010 = e10 * w[105 * _LANES + l] + e11 * w[108 * _LANES + l]
        w00, w01 = w[171 * _LANES + l], w[172 * _LANES + l]
        w10, w11 = w[179 * _LANES + l], w[180 * _LANES + l]
        s00 -= w00 * m000 + w01 * m010
        s01 -= w00 * m001 + w01 * m011
        s10 -= w10 * m000 + w11 * m010
        s11 -= w10 * m001 + w11 * m011
        q00 -= w00 * z000 + w01 * z010
        q10 -= w10 * z000 + w11 * z010
        b00, b01 = w[133 * _LANES + l], w[134 * _LANES + l]
        b10, b11 = w[157 * _LANES + l], w[158 * _LANES + l]
        det = b00 * b11 - b01 * b10
        size = max(max(abs(b00.real) + abs(b00.imag), abs(b01.real) + abs(b01.imag)),
                   max(abs(b10.real) + abs(b10.imag), abs(b11.real) + abs(b11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        e00, e01, e10, e11 = b11 * inv, -b01 * inv, -b10 * inv, b00 * inv
        m100 = e00 * w[129 * _LANES + l] + e01 * w[153 * _LANES + l]
        m101 = e00 * w[130 * _LANES + l] + e01 * w[154 * _LANES + l]
        m110 = e10 * w[129 * _LANES + l] + e11 * w[153 * _LANES + l]
        m111 = e10 * w[130 * _LANES + l] + e11 * w[154 * _LANES + l]
        z100 = e00 * w[106 * _LANES + l] + e01 * w[109 * _LANES + l]
        z110 = e10 * w[106 * _LANES + l] + e11 * w[109 * _LANES + l]
        w00, w01 = w[173 * _LANES + l], w[174 * _LANES + l]
        w10, w11 = w[181 * _LANES + l], w[182 * _LANES + l]
        s00 -= w00 * m100 + w01 * m110
        s01 -= w00 * m101 + w01 * m111
        s10 -= w10 * m100 + w11 * m110
        s11 -= w10 * m101 + w11 * m111
        q00 -= w00 * z100 + w01 * z110
        q10 -= w10 * z100 + w11 * z110
        b00, b01 = w[143 * _LANES + l], w[144 * _LANES + l]
        b10, b11 = w[167 * _LANES + l], w[168 * _LANES + l]
        det = b00 * b11 - b01 * b10
        size = max(max(abs(b00.real) + abs(b00.imag), abs(b01.real) + abs(b01.imag)),
                   max(abs(b10.real) + abs(b10.imag), abs(b11.real) + abs(b11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        e00, e01, e10, e11 = b11 * inv, -b01 * inv, -b10 * inv, b00 * inv
        m200 = e00 * w[137 * _LANES + l] + e01 * w[161 * _LANES + l]
        m201 = e00 * w[138 * _LANES + l] + e01 * w[162 * _LANES + l]
        m210 = e10 * w[137 * _LANES + l] + e11 * w[161 * _LANES + l]
        m211 = e10 * w[138 * _LANES + l] + e11 * w[162 * _LANES + l]
        z200 = e00 * w[107 * _LANES + l] + e01 * w[110 * _LANES + l]
        z210 = e10 * w[107 * _LANES + l] + e11 * w[110 * _LANES + l]
        w00, w01 = w[175 * _LANES + l], w[176 * _LANES + l]
        w10, w11 = w[183 * _LANES + l], w[184 * _LANES + l]
        s00 -= w00 * m200 + w01 * m210
        s01 -= w00 * m201 + w01 * m211
        s10 -= w10 * m200 + w11 * m210
        s11 -= w10 * m201 + w11 * m211
        q00 -= w00 * z200 + w01 * z210
        q10 -= w10 * z200 + w11 * z210
        det = s00 * s11 - s01 * s10
        size = max(max(abs(s00.real) + abs(s00.imag), abs(s01.real) + abs(s01.imag)),
                   max(abs(s10.real) + abs(s10.imag), abs(s11.real) + abs(s11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        xa = (s11 * q00 - s01 * q10) * inv
        xb = (s00 * q10 - s10 * q00) * inv
        w[185 * _LANES + l], w[186 * _LANES + l] = xa, xb
        x00 = z000 - m000 * xa - m001 * xb
        w[187 * _LANES + l] = x00
        x01 = z010 - m010 * xa - m011 * xb
        w[188 * _LANES + l] = x01
        x10 = z100 - m100 * xa - m101 * xb
        w[189 * _LANES + l] = x10
        x11 = z110 - m110 * xa - m111 * xb
        w[190 * _LANES + l] = x11
        x20 = z200 - m200 * xa - m201 * xb
        w[191 * _LANES + l] = x20
        x21 = z210 - m210 * xa - m211 * xb
        w[192 * _LANES + l] = x21
        total = xa + xb + x00 + x01 + x10 + x11 + x20 + x21
        w[201 * _LANES + l] = 1.0 if weak | (not np.isfinite(total.real + total.imag)) else 0.0


def _nb_solve_lanes_ht(w):
    """:func:`_nb_solve_lanes_block` for the right-hand side ``Ht`` alone (into
    ``X1``; the other rows keep their values).
    """
    for l in range(_LANES):
        s00, s01 = w[169 * _LANES + l], w[170 * _LANES + l]
        s10, s11 = w[177 * _LANES + l], w[178 * _LANES + l]
        q01, q11 = w[119 * _LANES + l], w[120 * _LANES + l]
        b00, b01 = w[123 * _LANES + l], w[124 * _LANES + l]
        b10, b11 = w[147 * _LANES + l], w[148 * _LANES + l]
        weak = False
        det = b00 * b11 - b01 * b10
        size = max(max(abs(b00.real) + abs(b00.imag), abs(b01.real) + abs(b01.imag)),
                   max(abs(b10.real) + abs(b10.imag), abs(b11.real) + abs(b11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        e00, e01, e10, e11 = b11 * inv, -b01 * inv, -b10 * inv, b00 * inv
        m000 = e00 * w[121 * _LANES + l] + e01 * w[145 * _LANES + l]
        m001 = e00 * w[122 * _LANES + l] + e01 * w[146 * _LANES + l]
        m010 = e10 * w[121 * _LANES + l] + e11 * w[145 * _LANES + l]
        m011 = e10 * w[122 * _LANES + l] + e11 * w[146 * _LANES + l]
        z001 = e00 * w[113 * _LANES + l] + e01 * w[116 * _LANES + l]
        z011 = e10 * w[113 * _LANES + l] + e11 * w[116 * _LANES + l]
        w00, w01 = w[171 * _LANES + l], w[172 * _LANES + l]
        w10, w11 = w[179 * _LANES + l], w[180 * _LANES + l]
        s00 -= w00 * m000 + w01 * m010
        s01 -= w00 * m001 + w01 * m011
        s10 -= w10 * m000 + w11 * m010
        s11 -= w10 * m001 + w11 * m011
        q01 -= w00 * z001 + w01 * z011
        q11 -= w10 * z001 + w11 * z011
        b00, b01 = w[133 * _LANES + l], w[134 * _LANES + l]
        b10, b11 = w[157 * _LANES + l], w[158 * _LANES + l]
        det = b00 * b11 - b01 * b10
        size = max(max(abs(b00.real) + abs(b00.imag), abs(b01.real) + abs(b01.imag)),
                   max(abs(b10.real) + abs(b10.imag), abs(b11.real) + abs(b11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        e00, e01, e10, e11 = b11 * inv, -b01 * inv, -b10 * inv, b00 * inv
        m100 = e00 * w[129 * _LANES + l] + e01 * w[153 * _LANES + l]
        m101 = e00 * w[130 * _LANES + l] + e01 * w[154 * _LANES + l]
        m110 = e10 * w[129 * _LANES + l] + e11 * w[153 * _LANES + l]
        m111 = e10 * w[130 * _LANES + l] + e11 * w[154 * _LANES + l]
        z101 = e00 * w[114 * _LANES + l] + e01 * w[117 * _LANES + l]
        z111 = e10 * w[114 * _LANES + l] + e11 * w[117 * _LANES + l]
        w00, w01 = w[173 * _LANES + l], w[174 * _LANES + l]
        w10, w11 = w[181 * _LANES + l], w[182 * _LANES + l]
        s00 -= w00 * m100 + w01 * m110
        s01 -= w00 * m101 + w01 * m111
        s10 -= w10 * m100 + w11 * m110
        s11 -= w10 * m101 + w11 * m111
        q01 -= w00 * z101 + w01 * z111
        q11 -= w10 * z101 + w11 * z111
        b00, b01 = w[143 * _LANES + l], w[144 * _LANES + l]
        b10, b11 = w[167 * _LANES + l], w[168 * _LANES + l]
        det = b00 * b11 - b01 * b10
        size = max(max(abs(b00.real) + abs(b00.imag), abs(b01.real) + abs(b01.imag)),
                   max(abs(b10.real) + abs(b10.imag), abs(b11.real) + abs(b11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        e00, e01, e10, e11 = b11 * inv, -b01 * inv, -b10 * inv, b00 * inv
        m200 = e00 * w[137 * _LANES + l] + e01 * w[161 * _LANES + l]
        m201 = e00 * w[138 * _LANES + l] + e01 * w[162 * _LANES + l]
        m210 = e10 * w[137 * _LANES + l] + e11 * w[161 * _LANES + l]
        m211 = e10 * w[138 * _LANES + l] + e11 * w[162 * _LANES + l]
        z201 = e00 * w[115 * _LANES + l] + e01 * w[118 * _LANES + l]
        z211 = e10 * w[115 * _LANES + l] + e11 * w[118 * _LANES + l]
        w00, w01 = w[175 * _LANES + l], w[176 * _LANES + l]
        w10, w11 = w[183 * _LANES + l], w[184 * _LANES + l]
        s00 -= w00 * m200 + w01 * m210
        s01 -= w00 * m201 + w01 * m211
        s10 -= w10 * m200 + w11 * m210
        s11 -= w10 * m201 + w11 * m211
        q01 -= w00 * z201 + w01 * z211
        q11 -= w10 * z201 + w11 * z211
        det = s00 * s11 - s01 * s10
        size = max(max(abs(s00.real) + abs(s00.imag), abs(s01.real) + abs(s01.imag)),
                   max(abs(s10.real) + abs(s10.imag), abs(s11.real) + abs(s11.imag)))
        weak |= not abs(det.real) + abs(det.imag) > _PIVOT_TOL * size * size
        r = 1.0 / (det.real * det.real + det.imag * det.imag)
        inv = complex(det.real * r, -det.imag * r)
        xa = (s11 * q01 - s01 * q11) * inv
        xb = (s00 * q11 - s10 * q01) * inv
        w[193 * _LANES + l], w[194 * _LANES + l] = xa, xb
        x00 = z001 - m000 * xa - m001 * xb
        w[195 * _LANES + l] = x00
        x01 = z011 - m010 * xa - m011 * xb
        w[196 * _LANES + l] = x01
        x10 = z101 - m100 * xa - m101 * xb
        w[197 * _LANES + l] = x10
        x11 = z111 - m110 * xa - m111 * xb
        w[198 * _LANES + l] = x11
        x20 = z201 - m200 * xa - m201 * xb
        w[199 * _LANES + l] = x20
        x21 = z211 - m210 * xa - m211 * xb
        w[200 * _LANES + l] = x21
        total = xa + xb + x00 + x01 + x10 + x11 + x20 + x21
        w[201 * _LANES + l] = 1.0 if weak | (not np.isfinite(total.real + total.imag)) else 0.0
# END GENERATED


#: Rows of the work array that only the lane tracker uses: each lane's current point and
#: velocity, the four Runge-Kutta slopes, the first Newton correction, the step (real part)
#: and a row of factors (16 reals).
_W_CUR = _W_FREE
_W_VEL = _W_CUR + 8
_W_K = _W_VEL + 8
_W_D1 = _W_K + 32
_W_HA = _W_D1 + 8
_W_FAC = _W_HA + 1
_W_ROWS = _W_FAC + 1

# The loops over whole rows of the work array below run over its real and imaginary parts
# (``w.view(np.float64)``) in one loop, or in a loop over rows around one over the parts of a
# row: the compiler turns those into vector loads and stores. Written as a loop over rows
# around one over the complex lanes, they compiled to gathers and scatters (or to scalar code)
# and took 7 to 45 times as long (160 against 22 ns for eight rows), about a quarter of the
# tracker's time; the arithmetic is the same.


def _nb_segment_lane(w, l, p0, p1, m):
    """Lane ``l`` of the work array ``w`` set to the homotopy's segment of sample ``m``: its
    start parameters ``p0[m]`` and their step to ``p1[m]`` (signed, (3, 16) each)."""
    for r in range(3):
        for c in range(16):
            w[(_W_SP0 + 16 * r + c) * _LANES + l] = _SIGN[c] * p0[m, r, c]
            w[(_W_DP + 16 * r + c) * _LANES + l] = (_SIGN[c] * p1[m, r, c]
                                                   - _SIGN[c] * p0[m, r, c])


def _nb_copy_lanes(r, src, dst, count, sign):
    """Rows ``dst .. dst + count`` of the work array set to ``sign`` times rows ``src ..``
    (``r`` its real view)."""
    for k in range(2 * count * _LANES):
        r[2 * dst * _LANES + k] = sign * r[2 * src * _LANES + k]


def _nb_subtract_lanes(r, dst, src):
    """Rows ``dst .. dst + 8`` of the work array minus rows ``src .. src + 8``, in place (``r``
    its real view)."""
    for k in range(16 * _LANES):
        r[2 * dst * _LANES + k] -= r[2 * src * _LANES + k]


def _nb_step_lanes(r, dst, base, scale, div):
    """Rows ``dst .. dst + 8`` of the work array set to rows ``base ..`` plus ``scale h / div``
    times rows ``dst ..``, with each lane's step ``h`` (row ``_W_HA``; ``r`` its real view)."""
    for j in range(2 * _LANES):
        r[2 * _W_FAC * _LANES + j] = (scale * r[2 * _W_HA * _LANES + (j & -2)]) / div
    for c in range(8):
        for j in range(2 * _LANES):
            r[2 * (dst + c) * _LANES + j] = (r[2 * (base + c) * _LANES + j]
                                             + r[2 * _W_FAC * _LANES + j]
                                             * r[2 * (dst + c) * _LANES + j])


def _nb_solve_lanes(w, rhs, active):
    """``J^{-1} H`` into rows ``_W_X0`` (``rhs`` 0), ``J^{-1} Ht`` into rows ``_W_X1`` (1) or
    both (2) on every lane (:func:`_nb_solve_lanes_h`, :func:`_nb_solve_lanes_ht`,
    :func:`_nb_solve_lanes_block`), then both by :func:`_nb_lu` on the active lanes that were
    flagged (about one solve in a thousand; its work arrays are made then). The lane kernels
    take the work array and the lanes' flags alone: every array argument of a compiled call
    costs two atomic reference counts, 6% of the tracker's time with the four work arrays of
    the fallback passed down on every call."""
    if rhs == 0:
        _nb_solve_lanes_h(w)
    elif rhs == 1:
        _nb_solve_lanes_ht(w)
    else:
        _nb_solve_lanes_block(w)
    for l in range(_LANES):
        if not (active[l] and w[_W_BAD * _LANES + l].real != 0.0):
            continue
        _, J, _, A, B, X = _nb_work()
        for i in range(8):
            for j in range(8):
                J[i, j] = w[(_W_J + 8 * i + j) * _LANES + l]
            B[i, 0] = w[(_W_H + i) * _LANES + l]
            B[i, 1] = w[(_W_HT + i) * _LANES + l]
        _nb_lu(J, B, 2, A, X)
        for i in range(8):
            w[(_W_X0 + i) * _LANES + l] = X[i, 0]
            w[(_W_X1 + i) * _LANES + l] = X[i, 1]


def _nb_velocity_lanes(w, r, active, frac, slope):
    """One Runge-Kutta stage on every lane: the slope ``-J^{-1} Ht`` at the point
    ``cur + frac h k[slope - 1]`` (``h`` in row ``_W_HA``) and the parameter in row ``_W_TS``,
    into ``k[slope]``."""
    _nb_copy_lanes(r, _W_K + 8 * (slope - 1), _W_U, 8, 1.0)
    _nb_step_lanes(r, _W_U, _W_CUR, frac, 1.0)
    _nb_eval_lanes_jt(w)
    _nb_solve_lanes(w, 1, active)
    _nb_copy_lanes(r, _W_X1, _W_K + 8 * slope, 8, -1.0)


def _nb_newton_lanes(w, r, active):
    """A Newton step on every lane at the points in rows ``_W_U`` (corrections into rows
    ``_W_X0``, subtracted from the points) in the chart of rows ``_W_SP0``, ``_W_DP`` at the
    parameter in row ``_W_TS``."""
    _nb_eval_lanes_hj(w)
    _nb_solve_lanes(w, 0, active)
    _nb_subtract_lanes(r, _W_U, _W_X0)


def _nb_track_lanes(u0, p0, p1, owner, max_steps, h0, min_step, first_tol, final_newton,
                    slow_newton, max_norm, end_zone, partners):
    """:func:`_nb_track` with the Runge-Kutta predictor, ``_LANES`` paths at a time: the
    evaluations and linear solves of a step run on all lanes together in vector instructions
    (:func:`_nb_eval_lanes`, :func:`_nb_solve_lanes`), the decisions lane by lane; a lane
    whose path has ended takes the next one. Every path takes the steps that :func:`_nb_track`
    takes (same arithmetic, but for the rounding of the block elimination). The Newton steps
    on the target system of the paths that arrived, and on their partners, also run on the
    lanes, after the last path (:func:`_nb_newton_lanes`; path by path, they kept seven lanes
    waiting: about 5% of a single sample's time). Returns the end points (P, 8), whether each
    path succeeded (P,), the evaluations per path (P,) and, with ``partners``, the gauge
    transpose partners of the end points (:func:`_nb_partner`) after a Newton step (P, 8) and
    whether that step was below ``1e-8 (1 + |u|)`` (P,)."""
    n = u0.shape[0]
    out = np.full((n, 8), np.nan + 0j)
    ok = np.zeros(n, np.bool_)
    evals = np.zeros(n, np.int64)
    pout = np.full((n, 8), np.nan + 0j)
    pconv = np.zeros(n, np.bool_)
    v = np.empty(8, np.complex128)
    w = np.zeros(_W_ROWS * _LANES, np.complex128)
    wr = w.view(np.float64)  # its real and imaginary parts (the loops over whole rows)
    path = np.zeros(_LANES, np.int64)
    active = np.zeros(_LANES, np.bool_)
    t = np.zeros(_LANES)
    h = np.zeros(_LANES)
    iters = np.zeros(_LANES, np.int64)
    su = np.zeros(_LANES)
    sd1 = np.zeros(_LANES)
    sd2 = np.zeros(_LANES)
    H, J, Ht, A, B, X = _nb_work()
    sp1 = np.empty((3, 16), np.complex128)
    u = np.empty(8, np.complex128)
    ends = np.empty((n, 8), np.complex128)
    arrived = np.empty(n, np.int64)
    n_arrived = 0
    queued = 0
    running = 0
    # The velocities at the start points, eight paths at a time on the lanes (path by path,
    # at the start of each, they took about 2% of a single sample's time).
    vel0 = np.empty((n, 8), np.complex128)
    for first in range(0, n, _LANES):
        for l in range(_LANES):
            i = min(first + l, n - 1)
            active[l] = first + l < n
            _nb_segment_lane(w, l, p0, p1, owner[i])
            w[_W_TS * _LANES + l] = 0.0
            for c in range(8):
                w[(_W_U + c) * _LANES + l] = u0[i, c]
        _nb_eval_lanes_jt(w)
        _nb_solve_lanes(w, 1, active)
        for l in range(min(_LANES, n - first)):
            for c in range(8):
                vel0[first + l, c] = -w[(_W_X1 + c) * _LANES + l]
    active[:] = False
    while True:
        for l in range(_LANES):  # the next paths into the free lanes, with their velocity
            if active[l] or queued >= n:
                continue
            i = queued
            queued += 1
            _nb_segment_lane(w, l, p0, p1, owner[i])
            evals[i] = 1
            for c in range(8):
                w[(_W_CUR + c) * _LANES + l] = u0[i, c]
                w[(_W_VEL + c) * _LANES + l] = vel0[i, c]
            t[l], h[l], iters[l], path[l], active[l] = 0.0, h0, 0, i, True
            running += 1
        if running == 0:
            break
        # One step on all lanes: the Runge-Kutta prediction, then two Newton corrections.
        for l in range(_LANES):
            w[_W_HA * _LANES + l] = min(h[l], 1.0 - t[l])
        _nb_copy_lanes(wr, _W_VEL, _W_K, 8, 1.0)
        for s in range(1, 4):
            for l in range(_LANES):
                w[_W_TS * _LANES + l] = t[l] + (1.0 if s == 3 else 0.5) * w[_W_HA * _LANES
                                                                            + l].real
            _nb_velocity_lanes(w, wr, active, 1.0 if s == 3 else 0.5, s)
        for k in range(16 * _LANES):
            wr[2 * _W_U * _LANES + k] = (wr[2 * _W_K * _LANES + k]
                                         + 2.0 * wr[2 * (_W_K + 8) * _LANES + k]
                                         + 2.0 * wr[2 * (_W_K + 16) * _LANES + k]
                                         + wr[2 * (_W_K + 24) * _LANES + k])
        _nb_step_lanes(wr, _W_U, _W_CUR, 1.0, 6.0)
        for l in range(_LANES):
            w[_W_TS * _LANES + l] = t[l] + w[_W_HA * _LANES + l].real
        _nb_eval_lanes_hj(w)
        _nb_solve_lanes(w, 0, active)
        _nb_copy_lanes(wr, _W_X0, _W_D1, 8, 1.0)
        _nb_subtract_lanes(wr, _W_U, _W_X0)
        # The second correction also gives the velocity of the next step.
        _nb_eval_lanes(w)
        _nb_solve_lanes(w, 2, active)
        _nb_subtract_lanes(wr, _W_U, _W_X0)
        # The scales 1 + |u| and the relative corrections e1, e2 of all lanes first (each
        # lane's sums in the order of _nb_track's), then the step control of _nb_track, lane
        # by lane.
        su[:] = 0.0
        sd1[:] = 0.0
        sd2[:] = 0.0
        for c in range(8):
            for l in range(_LANES):
                x = w[(_W_U + c) * _LANES + l]
                su[l] += x.real * x.real + x.imag * x.imag
                x = w[(_W_D1 + c) * _LANES + l]
                sd1[l] += x.real * x.real + x.imag * x.imag
                x = w[(_W_X0 + c) * _LANES + l]
                sd2[l] += x.real * x.real + x.imag * x.imag
        for l in range(_LANES):
            su[l] = 1.0 + np.sqrt(su[l])  # the scale 1 + |u|
            sd1[l] = np.sqrt(sd1[l]) / su[l]  # e1
            sd2[l] = np.sqrt(sd2[l]) / su[l]  # e2
        for l in range(_LANES):
            if not active[l]:
                continue
            i = path[l]
            evals[i] += 5
            iters[l] += 1
            scale, e1, e2 = su[l], sd1[l], sd2[l]
            good = (e1 < first_tol and (e2 < _CONTRACTION * e1 or e2 < 1e-11)
                    and scale < max_norm)
            # The factor 0.5 (first_tol / e1)^(1/5) of _nb_track, its power taken only where
            # the clipping below keeps it (above 2.5 from a ratio of 3125 on, below 0.5 under
            # 1, below 0.1 under 3.2e-4): the same steps, fewer powers.
            ratio = first_tol / e1 if e1 > 0.0 else np.inf
            if not np.isfinite(ratio):
                factor = 0.25
            elif ratio > (3200.0 if good else 1.01):
                factor = 2.5 if good else 0.5
            elif not good and ratio < 3.1e-4:
                factor = 0.1
            else:
                factor = 0.5 * ratio ** 0.2
            ha = w[_W_HA * _LANES + l].real
            tn = t[l] + ha
            state = 0  # 0 running, 1 reached t = 1, 2 failed
            if good:
                for c in range(8):
                    w[(_W_CUR + c) * _LANES + l] = w[(_W_U + c) * _LANES + l]
                    w[(_W_VEL + c) * _LANES + l] = -w[(_W_X1 + c) * _LANES + l]
                t[l] = 1.0 if tn >= 1.0 - 1e-15 else tn
                h[l] = ha * min(max(factor, 0.5), 2.5)
                if t[l] >= 1.0:
                    state = 1
            else:
                h[l] = ha * min(max(factor, 0.1), 0.5)
                bounded = scale < max_norm
                if h[l] < min_step or not bounded:
                    # Next to a cluster of close solutions the corrections contract only
                    # linearly and the step collapses: finished by Newton steps at t = 1.
                    state = 1 if (t[l] > 1.0 - end_zone and bounded) else 2
            if state == 0 and iters[l] >= max_steps:
                state = 2
            if state == 0:
                continue
            active[l] = False
            running -= 1
            if state == 1:
                arrived[n_arrived] = i
                n_arrived += 1
                for c in range(8):
                    ends[i, c] = w[(_W_CUR + c) * _LANES + l]
    # The paths that arrived, eight at a time on the lanes: Newton steps on the target system
    # (the first on the lanes, any further ones path by path), then a Newton step on the
    # partners of those that converged, which checks them like the end points.
    for first in range(0, n_arrived, _LANES):
        for l in range(_LANES):
            active[l] = first + l < n_arrived
            if not active[l]:
                continue
            i = arrived[first + l]
            # The segment from the target to itself (a zero step): the target's chart.
            _nb_segment_lane(w, l, p1, p1, owner[i])
            w[_W_TS * _LANES + l] = 0.0
            for c in range(8):
                w[(_W_U + c) * _LANES + l] = ends[i, c]
        _nb_newton_lanes(w, wr, active)
        for l in range(_LANES):
            if not active[l]:
                continue
            i = arrived[first + l]
            evals[i] += 1
            su = sd = 0.0
            for c in range(8):
                x = w[(_W_X0 + c) * _LANES + l]
                sd += x.real * x.real + x.imag * x.imag
                u[c] = w[(_W_U + c) * _LANES + l]
                su += u[c].real * u[c].real + u[c].imag * u[c].imag
            err = np.sqrt(sd) / (1.0 + np.sqrt(su))
            m = owner[i]
            for r in range(3):
                for c in range(16):
                    sp1[r, c] = _SIGN[c] * p1[m, r, c]
            for it in range(1, final_newton + slow_newton):
                if it >= final_newton and err < 1e-8:
                    break
                _nb_eval(u, sp1, sp1, H, J, Ht)
                B[:, 0] = H
                _nb_solve(J, B, 1, A, X)
                for c in range(8):
                    u[c] -= X[c, 0]
                err = _nb_norm(X[:, 0]) / (1.0 + _nb_norm(u))
                evals[i] += 1
            if not err < 1e-8:
                active[l] = False
                continue
            ok[i] = True
            out[i] = u
            if partners:
                _nb_partner(u, sp1, v)
                for c in range(8):
                    w[(_W_U + c) * _LANES + l] = v[c]
        if not partners:
            continue
        _nb_newton_lanes(w, wr, active)
        for l in range(_LANES):
            if not active[l]:
                continue
            i = arrived[first + l]
            su = sd = 0.0
            for c in range(8):
                x = w[(_W_X0 + c) * _LANES + l]
                sd += x.real * x.real + x.imag * x.imag
                x = w[(_W_U + c) * _LANES + l]
                su += x.real * x.real + x.imag * x.imag
                pout[i, c] = x
            pconv[i] = np.sqrt(sd) / (1.0 + np.sqrt(su)) < 1e-8
    return out, ok, evals, pout, pconv


def _nb_lu(J, B, nrhs, A, X):
    """``X[:, :nrhs] = J^{-1} B[:, :nrhs]`` for ``J`` (8, 8) by Gaussian elimination with
    partial pivoting; NaN when ``J`` is singular. ``A`` (8, 8) is a work array."""
    for i in range(8):
        for j in range(8):
            A[i, j] = J[i, j]
        for c in range(nrhs):
            X[i, c] = B[i, c]
    for k in range(8):
        piv, best = k, abs(A[k, k].real) + abs(A[k, k].imag)
        for i in range(k + 1, 8):
            v = abs(A[i, k].real) + abs(A[i, k].imag)
            if v > best:
                piv, best = i, v
        if not best > 0.0 or not np.isfinite(best):
            for i in range(8):
                for c in range(nrhs):
                    X[i, c] = np.nan
            return
        if piv != k:
            for j in range(k, 8):
                A[k, j], A[piv, j] = A[piv, j], A[k, j]
            for c in range(nrhs):
                X[k, c], X[piv, c] = X[piv, c], X[k, c]
        inv = 1.0 / A[k, k]
        for i in range(k + 1, 8):
            f = A[i, k] * inv
            for j in range(k + 1, 8):
                A[i, j] -= f * A[k, j]
            for c in range(nrhs):
                X[i, c] -= f * X[k, c]
    for k in range(7, -1, -1):
        inv = 1.0 / A[k, k]
        for c in range(nrhs):
            s = X[k, c]
            for j in range(k + 1, 8):
                s -= A[k, j] * X[j, c]
            X[k, c] = s * inv


def _nb_cabs(z):
    """``|re z| + |im z|``."""
    return abs(z.real) + abs(z.imag)


def _nb_inv(z):
    """``1 / z`` without the scaling of complex division (the callers bound ``|z|`` away from
    zero relative to the entries it comes from)."""
    return z.conjugate() / (z.real * z.real + z.imag * z.imag)


def _nb_solve(J, B, nrhs, A, X):
    """``X[:, :nrhs] = J^{-1} B[:, :nrhs]`` (``nrhs`` 1 or 2) for the Jacobian ``J`` (8, 8) of
    :func:`_nb_eval`: the block elimination of :func:`_solve` (three 2 x 2 pivot blocks and
    a 2 x 2 Schur complement), Gaussian elimination with pivoting (:func:`_nb_lu`) when a
    pivot block is nearly singular. ``A`` (8, 8) is a work array: rows ``2k, 2k + 1`` hold
    :math:`B_k^{-1} A_k` (columns 0, 1) and :math:`B_k^{-1} r_k` (columns 2, 3)."""
    s00, s01, s10, s11 = J[6, 0], J[6, 1], J[7, 0], J[7, 1]  # the Schur complement
    q00, q10 = B[6, 0], B[7, 0]  # its right-hand sides
    q01, q11 = (B[6, 1], B[7, 1]) if nrhs == 2 else (0j, 0j)
    for k in range(3):
        r0, r1, c0, c1 = k, k + 3, 2 + 2 * k, 3 + 2 * k
        b00, b01, b10, b11 = J[r0, c0], J[r0, c1], J[r1, c0], J[r1, c1]
        det = b00 * b11 - b01 * b10
        size = max(max(_nb_cabs(b00), _nb_cabs(b01)), max(_nb_cabs(b10), _nb_cabs(b11)))
        if not _nb_cabs(det) > _PIVOT_TOL * size * size:
            _nb_lu(J, B, nrhs, A, X)
            return
        inv = _nb_inv(det)
        e00, e01, e10, e11 = b11 * inv, -b01 * inv, -b10 * inv, b00 * inv  # B_k^{-1}
        m00 = e00 * J[r0, 0] + e01 * J[r1, 0]
        m01 = e00 * J[r0, 1] + e01 * J[r1, 1]
        m10 = e10 * J[r0, 0] + e11 * J[r1, 0]
        m11 = e10 * J[r0, 1] + e11 * J[r1, 1]
        z00 = e00 * B[r0, 0] + e01 * B[r1, 0]
        z10 = e10 * B[r0, 0] + e11 * B[r1, 0]
        A[2 * k, 0], A[2 * k, 1], A[2 * k + 1, 0], A[2 * k + 1, 1] = m00, m01, m10, m11
        A[2 * k, 2], A[2 * k + 1, 2] = z00, z10
        w00, w01, w10, w11 = J[6, c0], J[6, c1], J[7, c0], J[7, c1]
        s00 -= w00 * m00 + w01 * m10
        s01 -= w00 * m01 + w01 * m11
        s10 -= w10 * m00 + w11 * m10
        s11 -= w10 * m01 + w11 * m11
        q00 -= w00 * z00 + w01 * z10
        q10 -= w10 * z00 + w11 * z10
        if nrhs == 2:
            z01 = e00 * B[r0, 1] + e01 * B[r1, 1]
            z11 = e10 * B[r0, 1] + e11 * B[r1, 1]
            A[2 * k, 3], A[2 * k + 1, 3] = z01, z11
            q01 -= w00 * z01 + w01 * z11
            q11 -= w10 * z01 + w11 * z11
    det = s00 * s11 - s01 * s10
    size = max(max(_nb_cabs(s00), _nb_cabs(s01)), max(_nb_cabs(s10), _nb_cabs(s11)))
    if not _nb_cabs(det) > _PIVOT_TOL * size * size:
        _nb_lu(J, B, nrhs, A, X)
        return
    inv = _nb_inv(det)
    finite = True
    for c in range(nrhs):
        v0, v1 = (q00, q10) if c == 0 else (q01, q11)
        xa = (s11 * v0 - s01 * v1) * inv
        xb = (s00 * v1 - s10 * v0) * inv
        X[0, c], X[1, c] = xa, xb
        for i in range(6):
            x = A[i, 2 + c] - A[i, 0] * xa - A[i, 1] * xb
            X[2 + i, c] = x
            finite &= np.isfinite(x.real) and np.isfinite(x.imag)
        finite &= np.isfinite(xa.real) and np.isfinite(xa.imag)
        finite &= np.isfinite(xb.real) and np.isfinite(xb.imag)
    if not finite:
        _nb_lu(J, B, nrhs, A, X)


def _nb_chart(sp0, dp, t, pp):
    """The chart ``pp = sp0 + t dp`` (3, 16) of the homotopy at ``t``, in place."""
    for r in range(3):
        for c in range(16):
            pp[r, c] = sp0[r, c] + t * dp[r, c]


def _nb_rk4(u, vel, t, ha, sp0, dp, pp, k, un, H, J, Ht, A, B, X):
    """The fourth-order Runge-Kutta prediction ``un`` from ``u`` at ``t`` with velocity ``vel``
    over the step ``ha`` (three evaluations: ``k2, k3, k4`` at ``t + ha/2, t + ha/2, t + ha``);
    ``pp`` (3, 16) and ``k`` (4, 8) are work arrays."""
    k[0] = vel
    for s in range(1, 4):
        frac = 1.0 if s == 3 else 0.5
        ts = t + frac * ha
        for c in range(8):
            un[c] = u[c] + frac * ha * k[s - 1, c]
        _nb_chart(sp0, dp, ts, pp)
        _nb_eval(un, pp, dp, H, J, Ht)
        B[:, 0] = Ht
        _nb_solve(J, B, 1, A, X)
        for c in range(8):
            k[s, c] = -X[c, 0]
    for c in range(8):
        un[c] = u[c] + (ha / 6.0) * (k[0, c] + 2.0 * k[1, c] + 2.0 * k[2, c] + k[3, c])


def _nb_norm(v):
    """Euclidean norm of a complex vector."""
    s = 0.0
    for x in v:
        s += x.real * x.real + x.imag * x.imag
    return np.sqrt(s)


def _nb_work():
    """Work arrays of :func:`_nb_eval` and :func:`_nb_solve` (the Jacobian zeroed)."""
    return (np.empty(8, np.complex128), np.zeros((8, 8), np.complex128),
            np.empty(8, np.complex128), np.empty((8, 8), np.complex128),
            np.empty((8, 2), np.complex128), np.empty((8, 2), np.complex128))


def _nb_partner(u, p, v):
    """The unknowns ``v`` (8,) of the gauge transpose partner (:func:`gauge_transpose`) of the
    matrix ``C`` of ``u`` (8,) in the chart ``p`` (3, 16, multiplied by ``_SIGN``): entries
    :math:`c_{ji} c_{i0} / c_{j0}` off the first row and column, the same ``a, b``."""
    a, b = u[0], u[1]
    c00 = p[0, 7] + a * p[1, 7] + b * p[2, 7]
    c10 = c00 * (p[0, 11] + a * p[1, 11] + b * p[2, 11]) - (p[0, 3] + a * p[1, 3] + b * p[2, 3])
    c20 = c00 * (p[0, 13] + a * p[1, 13] + b * p[2, 13]) - (p[0, 5] + a * p[1, 5] + b * p[2, 5])
    c30 = c00 * (p[0, 14] + a * p[1, 14] + b * p[2, 14]) - (p[0, 6] + a * p[1, 6] + b * p[2, 6])
    v[0], v[1] = a, b
    v[2], v[3] = u[3] * c10 / c20, u[2] * c20 / c10  # c21 c10 / c20, c12 c20 / c10
    v[4], v[5] = u[5] * c10 / c30, u[4] * c30 / c10  # c31 c10 / c30, c13 c30 / c10
    v[6], v[7] = u[7] * c20 / c30, u[6] * c30 / c20  # c32 c20 / c30, c23 c30 / c20


def _nb_hermite(ts, us, vs, m, tq, out, z, tab, coef):
    """:func:`_extrapolate` for one path: the value at ``tq`` of the Hermite polynomial through
    the last ``m`` of the points ``us`` (3, 8) with derivatives ``vs`` (3, 8) at ``ts`` (3,),
    oldest first; ``z``, ``tab``, ``coef`` (6,) are work arrays."""
    n = 2 * m
    for c in range(8):
        for i in range(n):
            z[i] = ts[3 - m + i // 2]
            tab[i] = us[3 - m + i // 2, c]
        coef[0] = tab[0]
        for level in range(1, n):
            for i in range(n - level):
                if level == 1 and i % 2 == 0:
                    tab[i] = vs[3 - m + i // 2, c]
                else:
                    tab[i] = (tab[i + 1] - tab[i]) / (z[i + level] - z[i])
            coef[level] = tab[0]
        val = coef[n - 1]
        for level in range(n - 2, -1, -1):
            val = coef[level] + (tq - z[level]) * val
        out[c] = val


def _nb_track(u0, p0, p1, owner, hermite, max_steps, h0, min_step, first_tol, final_newton,
              slow_newton, max_norm, end_zone):
    """:func:`track_paths` path by path: ``u0`` (P, 8), charts ``p0[owner]`` and ``p1[owner]``
    (M, 3, 16), the fourth-order Runge-Kutta predictor or (``hermite``) the Hermite
    extrapolation. Returns the end points (P, 8), whether each path succeeded (P,) and the
    evaluations of the equations per path (P,)."""
    H, J, Ht, A, B, X = _nb_work()
    n = u0.shape[0]
    out = np.full((n, 8), np.nan + 0j)
    ok = np.zeros(n, np.bool_)
    evals = np.zeros(n, np.int64)
    pp = np.empty((3, 16), np.complex128)
    sp0 = np.empty((3, 16), np.complex128)
    sp1 = np.empty((3, 16), np.complex128)
    dp = np.empty((3, 16), np.complex128)
    u = np.empty(8, np.complex128)
    un = np.empty(8, np.complex128)
    vel = np.empty(8, np.complex128)
    k = np.empty((4, 8), np.complex128)
    d1 = np.empty(8, np.complex128)
    hist_t = np.empty(3)  # the last three points of the path, oldest first (Hermite)
    hist_u = np.empty((3, 8), np.complex128)
    hist_v = np.empty((3, 8), np.complex128)
    z = np.empty(6)
    tab = np.empty(6, np.complex128)
    coef = np.empty(6, np.complex128)
    for i in range(n):
        m = owner[i]
        for r in range(3):  # the charts multiplied by _SIGN
            for c in range(16):
                sp0[r, c] = _SIGN[c] * p0[m, r, c]
                sp1[r, c] = _SIGN[c] * p1[m, r, c]
                dp[r, c] = sp1[r, c] - sp0[r, c]
        u[:] = u0[i]
        evals[i] = 1
        _nb_eval(u, sp0, dp, H, J, Ht)
        B[:, 0] = Ht
        _nb_solve(J, B, 1, A, X)
        for c in range(8):
            vel[c] = -X[c, 0]
        t, h, state = 0.0, h0, 0  # state 0 running, 1 reached t = 1, 2 failed
        npts = 1
        for _ in range(max_steps):
            ha = min(h, 1.0 - t)
            tn = t + ha
            if hermite:
                hist_t[2] = t
                hist_u[2] = u
                hist_v[2] = vel
                _nb_hermite(hist_t, hist_u, hist_v, npts, tn, un, z, tab, coef)
                evals[i] += 2
            else:
                _nb_rk4(u, vel, t, ha, sp0, dp, pp, k, un, H, J, Ht, A, B, X)
                evals[i] += 5
            _nb_chart(sp0, dp, tn, pp)
            _nb_eval(un, pp, dp, H, J, Ht)
            B[:, 0] = H
            _nb_solve(J, B, 1, A, X)
            for c in range(8):
                d1[c] = X[c, 0]
                un[c] -= d1[c]
            # The second correction also gives the velocity of the next step.
            _nb_eval(un, pp, dp, H, J, Ht)
            B[:, 0] = H
            B[:, 1] = Ht
            _nb_solve(J, B, 2, A, X)
            for c in range(8):
                un[c] -= X[c, 0]
            scale = 1.0 + _nb_norm(un)
            e1 = _nb_norm(d1) / scale
            e2 = _nb_norm(X[:, 0]) / scale
            good = (e1 < first_tol and (e2 < _CONTRACTION * e1 or e2 < 1e-11)
                    and scale < max_norm)
            factor = 0.5 * (first_tol / e1) ** 0.2 if e1 > 0.0 else np.inf
            if not np.isfinite(factor):
                factor = 0.25
            if good:
                hist_t[0] = hist_t[1]  # the history of the Hermite predictor
                hist_t[1] = t
                hist_u[0] = hist_u[1]
                hist_v[0] = hist_v[1]
                hist_u[1] = u
                hist_v[1] = vel
                npts = min(npts + 1, 3)
                for c in range(8):
                    u[c] = un[c]
                    vel[c] = -X[c, 1]
                t = 1.0 if tn >= 1.0 - 1e-15 else tn
                h = ha * min(max(factor, 0.5), 2.5)
                if t >= 1.0:
                    state = 1
                    break
            else:
                h = ha * min(max(factor, 0.1), 0.5)
                bounded = scale < max_norm
                if h < min_step or not bounded:
                    # Next to a cluster of close solutions the corrections contract only
                    # linearly and the step collapses: finished by Newton steps at t = 1.
                    state = 1 if (t > 1.0 - end_zone and bounded) else 2
                    break
        if state != 1:
            continue
        err = np.inf
        for it in range(final_newton + slow_newton):
            if it >= final_newton and err < 1e-8:
                break
            _nb_eval(u, sp1, dp, H, J, Ht)
            B[:, 0] = H
            _nb_solve(J, B, 1, A, X)
            for c in range(8):
                u[c] -= X[c, 0]
            err = _nb_norm(X[:, 0]) / (1.0 + _nb_norm(u))
            evals[i] += 1
        if err < 1e-8:
            ok[i] = True
            out[i] = u
    return out, ok, evals


def _nb_first_occurrence(u, ok, rtol):
    """:func:`_first_occurrence` in compiled loops, sample by sample (the same squared
    distances from the Gram matrix): whether each found solution of ``u`` (B, 8, 56) differs
    from every earlier found one, (B, 56)."""
    nb, _, n = u.shape
    out = np.ones((nb, n), np.bool_)
    n2 = np.zeros(n)
    norm = np.zeros(n)
    for b in range(nb):
        for i in range(n):
            n2[i] = 0.0
            if ok[b, i]:
                for c in range(8):
                    x = u[b, c, i]
                    n2[i] += x.real * x.real + x.imag * x.imag
            norm[i] = np.sqrt(n2[i])
        for i in range(n):
            if not ok[b, i]:
                continue
            for j in range(i):
                if not ok[b, j]:
                    continue
                lim = rtol * min(1.0 + norm[i], 1.0 + norm[j])
                # |v_i - v_j| >= ||v_i| - |v_j||: pairs whose norms differ by twice the limit
                # are far apart, whatever the rounding of the expansion (far below lim^2).
                if (norm[i] - norm[j]) ** 2 > 4.0 * lim * lim:
                    continue
                g = 0.0
                for c in range(8):
                    x, y = u[b, c, i], u[b, c, j]
                    g += x.real * y.real + x.imag * y.imag
                if n2[i] + n2[j] - 2.0 * g < lim * lim:
                    out[b, i] = False
                    break
    return out


def _nb_design(points1, points2, cos, sin, T, D):
    """The normalisations ``T`` (4, B, 2, 2) and design matrices ``D`` (B, n, 16) of
    :func:`null_space_charts` for samples ``points1, points2`` (B, n, 2) and the cosines and
    sines of its rotations (4, B), in the numpy code's arithmetic (the same numbers)."""
    nb, n = points1.shape[0], points1.shape[1]
    x = np.empty(n)
    dev = np.empty(n)
    h = np.empty((4, n, 2))
    for b in range(nb):
        for a in range(4):
            for j in range(n):
                x[j] = points1[b, j, a] if a < 2 else points2[b, j, a - 2]
            m = pairwise_sum(x, n) / n
            for j in range(n):
                dev[j] = abs(x[j] - m)
            sm = 1.0 / max(pairwise_sum(dev, n) / n, 1e-12)
            c, s = cos[a, b], sin[a, b]
            T[a, b, 0, 0], T[a, b, 1, 0] = c * sm, s * sm
            T[a, b, 0, 1], T[a, b, 1, 1] = c * (-sm * m) - s, s * (-sm * m) + c
            for j in range(n):
                for k in range(2):
                    h[a, j, k] = T[a, b, k, 0] * x[j] + T[a, b, k, 1]
        for j in range(n):
            for q in range(16):
                D[b, j, q] = ((h[0, j, q >> 3] * h[1, j, (q >> 2) & 1])
                              * (h[2, j, (q >> 1) & 1] * h[3, j, q & 1]))


def _nb_null_space_chart(sv, Vt, cond, params, size):
    """From the SVDs of the design matrices of :func:`null_space_charts` (singular values
    ``sv`` (B, 13), ``Vt`` (B, 16, 16)): ``cond`` (B,), ``s_13 / s_1`` (0 when ``s_1`` is 0),
    and :func:`chart_from_null_space` of ``N = Vt[:, 13:]`` into ``params`` (B, 3, 16) and
    ``size`` (B,), in the numpy code's arithmetic (the same numbers)."""
    coeffs = np.empty((3, 3))
    N = Vt[:, 13:]
    for b in range(N.shape[0]):
        cond[b] = sv[b, 12] / sv[b, 0] if sv[b, 0] > 0.0 else 0.0
        x, y, z = N[b, 0, 15], N[b, 1, 15], N[b, 2, 15]
        s = np.sqrt((x * x + y * y) + z * z)
        size[b] = s
        s2 = s * s
        k = s * (s + abs(x))
        w0 = x + (-s if x < 0.0 else s)
        coeffs[0, 0], coeffs[0, 1], coeffs[0, 2] = x / s2, y / s2, z / s2
        coeffs[1, 0], coeffs[1, 1], coeffs[1, 2] = -(w0 * y) / k, 1.0 - (y * y) / k, -(z * y) / k
        coeffs[2, 0], coeffs[2, 1], coeffs[2, 2] = -(w0 * z) / k, -(y * z) / k, 1.0 - (z * z) / k
        for r in range(3):
            for q in range(16):
                params[b, r, q] = ((coeffs[r, 0] * N[b, 0, q] + coeffs[r, 1] * N[b, 1, q])
                                   + coeffs[r, 2] * N[b, 2, q])


def _nb_unitary2(zr, zi, U):
    """:func:`_unitary2` of the Gaussian draws ``zr + i zi`` (B, 2, 2) into ``U``."""
    for b in range(zr.shape[0]):
        z00, z10 = complex(zr[b, 0, 0], zi[b, 0, 0]), complex(zr[b, 1, 0], zi[b, 1, 0])
        z01, z11 = complex(zr[b, 0, 1], zi[b, 0, 1]), complex(zr[b, 1, 1], zi[b, 1, 1])
        r = np.sqrt((z00.real * z00.real + z00.imag * z00.imag)
                    + (z10.real * z10.real + z10.imag * z10.imag))
        q00, q10 = z00 / r, z10 / r
        c = q00.conjugate() * z01 + q10.conjugate() * z11
        y0, y1 = z01 - c * q00, z11 - c * q10
        r = np.sqrt((y0.real * y0.real + y0.imag * y0.imag)
                    + (y1.real * y1.real + y1.imag * y1.imag))
        U[b, 0, 0], U[b, 1, 0], U[b, 0, 1], U[b, 1, 1] = q00, q10, y0 / r, y1 / r


def _nb_aligned_unitary2(sp, params, zr, zi, spread, U):
    """:func:`_aligned_unitary2` in compiled loops: the unitary ``U`` (B, 2, 2) that aligns
    the chart ``sp`` (3, 16) of the start system with each chart of ``params`` (B, 3, 16),
    turned by :func:`_nb_unitary2` of ``I + spread (zr + i zi)``."""
    m = zr.shape[0]
    R = np.empty((m, 2, 2), np.complex128)
    yr = np.empty((m, 2, 2))
    yi = np.empty((m, 2, 2))
    for b in range(m):
        for r in range(2):
            for c in range(2):
                yr[b, r, c] = (1.0 if r == c else 0.0) + spread * zr[b, r, c]
                yi[b, r, c] = spread * zi[b, r, c]
    _nb_unitary2(yr, yi, R)
    for b in range(m):
        m00 = m01 = m10 = m11 = 0j
        for c in range(16):
            s0, s1 = sp[1, c].conjugate(), sp[2, c].conjugate()
            m00 += s0 * params[b, 1, c]
            m01 += s0 * params[b, 2, c]
            m10 += s1 * params[b, 1, c]
            m11 += s1 * params[b, 2, c]
        det = m00 * m11 - m01 * m10
        size = abs(det)
        phase = det / size if size > 0.0 else 1.0 + 0j
        norm = np.sqrt(m00.real * m00.real + m00.imag * m00.imag + m01.real * m01.real
                       + m01.imag * m01.imag + m10.real * m10.real + m10.imag * m10.imag
                       + m11.real * m11.real + m11.imag * m11.imag + 2.0 * size)
        if not norm > 0.0:
            m00, m11, norm, phase = 1.0 + 0j, 1.0 + 0j, 2.0, 1.0 + 0j
        a00 = (m00 + phase * m11.conjugate()) / norm
        a01 = (m01 - phase * m10.conjugate()) / norm
        a10 = (m10 - phase * m01.conjugate()) / norm
        a11 = (m11 + phase * m00.conjugate()) / norm
        U[b, 0, 0] = a00 * R[b, 0, 0] + a01 * R[b, 1, 0]
        U[b, 0, 1] = a00 * R[b, 0, 1] + a01 * R[b, 1, 1]
        U[b, 1, 0] = a10 * R[b, 0, 0] + a11 * R[b, 1, 0]
        U[b, 1, 1] = a10 * R[b, 0, 1] + a11 * R[b, 1, 1]


def _nb_track_from_start(params, zr, zi, spread, sp, su, order, max_steps, h0, min_step,
                         first_tol, final_newton, slow_newton, max_norm, end_zone, rtol):
    """:func:`track_from_start` in compiled loops: the start charts aligned with the charts
    ``params`` and turned by the Gaussian draws ``zr + i zi`` (B, 2, 2) scaled by ``spread``
    (:func:`_nb_aligned_unitary2`), the paths
    from the columns ``order`` of the start solutions ``su`` (8, 56) in the chart ``sp``
    (3, 16) to the charts ``params`` (B, 3, 16) on lanes (:func:`_nb_track_lanes`, queued in
    the order of ``order``), their partners, and the end points that are found and not
    duplicates (:func:`_nb_first_occurrence`, relative distance ``rtol``). Returns ``u``
    (B, 8, 56), NaN where not found, and ``found`` (B, 56)."""
    m, half = params.shape[0], order.shape[0]
    U = np.empty((m, 2, 2), np.complex128)
    _nb_aligned_unitary2(sp, params, zr, zi, spread, U)
    ps = np.empty((m, 3, 16), np.complex128)
    pt = np.empty((m, 3, 16), np.complex128)
    u0 = np.empty((m * half, 8), np.complex128)
    owner = np.empty(m * half, np.int64)
    for b in range(m):
        for c in range(16):
            ps[b, 0, c] = sp[0, c]
            for j in range(2):
                ps[b, 1 + j, c] = sp[1, c] * U[b, 0, j] + sp[2, c] * U[b, 1, j]
            for r in range(3):
                pt[b, r, c] = params[b, r, c]
        for k in range(half):
            i, q = b * half + k, order[k]
            owner[i] = b
            for j in range(2):
                u0[i, j] = U[b, 0, j].conjugate() * su[0, q] + U[b, 1, j].conjugate() * su[1, q]
            for c in range(2, 8):
                u0[i, c] = su[c, q]
    ue, ok, _, up, conv = _nb_track_lanes(u0, ps, pt, owner, max_steps, h0, min_step,
                                          first_tol, final_newton, slow_newton, max_norm,
                                          end_zone, True)
    u = np.empty((m, 8, 2 * half), np.complex128)
    found = np.zeros((m, 2 * half), np.bool_)
    for b in range(m):
        for k in range(half):
            i, q = b * half + k, order[k]
            for c in range(8):
                u[b, c, q] = ue[i, c]
                u[b, c, q + half] = up[i, c]
            found[b, q] = ok[i]
            found[b, q + half] = ok[i] and conv[i]
    first = _nb_first_occurrence(u, found, rtol)
    for b in range(m):
        for q in range(2 * half):
            found[b, q] &= first[b, q]
            if not found[b, q]:
                for c in range(8):
                    u[b, c, q] = np.nan
    return u, found


def _nb_real_tensors(u, found, params, T, real_tol):
    """The real tensors of :func:`solve_minimal` in compiled loops: for ``u`` (B, 8, 56) with
    ``found`` (B, 56), the pairs ``k, k + 28`` that are both found and real (imaginary parts
    at most ``real_tol (1 + |u|)``), their tensors ``f0 + a f1 + b f2`` of the charts
    ``params`` (B, 3, 16) contracted with the normalisations ``T`` (B, 4, 2, 2) in every mode
    (:func:`~xslit.epipolar.tensor.contract_modes`) and scaled to unit norm: ``(K, 16)``, and
    the sample of each (K,)."""
    nb, _, n = u.shape
    half = n // 2
    keep = np.zeros((nb, half), np.bool_)
    count = 0
    for b in range(nb):
        for k in range(half):
            real = found[b, k] and found[b, k + half]
            for c in range(8):
                for q in (k, k + half):
                    x = u[b, c, q]
                    real &= abs(x.imag) <= real_tol * (1.0 + abs(x))
            keep[b, k] = real
            if real:
                count += 1
    F = np.empty((count, 16))
    owner = np.empty(count, np.int64)
    f = np.empty(16)
    g = np.empty(16)
    i = 0
    for b in range(nb):
        for k in range(half):
            if not keep[b, k]:
                continue
            a, c = u[b, 0, k].real, u[b, 1, k].real
            for q in range(16):
                f[q] = params[b, 0, q] + a * params[b, 1, q] + c * params[b, 2, q]
            for mode in range(4):  # index q = 8 i + 4 j + 2 k + l, mode 0 the slowest
                step = 8 >> mode
                for q in range(16):
                    bit = (q // step) & 1
                    lo = q - bit * step
                    g[q] = f[lo] * T[b, mode, 0, bit] + f[lo + step] * T[b, mode, 1, bit]
                for q in range(16):
                    f[q] = g[q]
            s = 0.0
            for q in range(16):
                s += f[q] * f[q]
            s = np.sqrt(s)
            for q in range(16):
                F[i, q] = f[q] / s
            owner[i] = b
            i += 1
    return F, owner


_NB_FUNCTIONS = ("_nb_eval", "_nb_lu", "_nb_cabs", "_nb_inv", "_nb_solve", "_nb_chart",
                 "_nb_rk4", "_nb_hermite", "_nb_norm", "_nb_work", "_nb_partner", "_nb_track",
                 "_nb_eval_lanes", "_nb_eval_lanes_hj", "_nb_eval_lanes_jt",
                 "_nb_solve_lanes_block", "_nb_solve_lanes_h", "_nb_solve_lanes_ht",
                 "_nb_segment_lane", "_nb_copy_lanes", "_nb_subtract_lanes", "_nb_step_lanes", "_nb_newton_lanes",
                 "_nb_solve_lanes", "_nb_velocity_lanes", "_nb_track_lanes",
                 "_nb_first_occurrence", "pairwise_sum", "_nb_design",
                 "_nb_null_space_chart", "_nb_unitary2", "_nb_aligned_unitary2",
                 "_nb_track_from_start",
                 "_nb_real_tensors")


@functools.cache
def _compiled():
    """The compiled :func:`_nb_track`, :func:`_nb_track_lanes`, :func:`_nb_first_occurrence` and
    :func:`_nb_design`, or None when numba cannot be imported. Compiles on the first call (numba caches the machine
    code on disk) and binds the compiled ``_nb_*`` functions to their module names, by which
    they call each other. Division by zero gives inf or NaN as in numpy (the lane kernels divide on
    every lane, the idle ones too, and the callers test for finite results)."""
    namespace = globals()
    # pairwise_sum calls the kernels of xslit.epipolar.linear, compiled first.
    if not (compiled_row_kernels() and _jit.compile_kernels(namespace, _NB_FUNCTIONS)):
        return None
    return (namespace["_nb_track"], namespace["_nb_track_lanes"],
            namespace["_nb_first_occurrence"], namespace["_nb_design"],
            namespace["_nb_null_space_chart"], namespace["_nb_track_from_start"],
            namespace["_nb_real_tensors"])


def _kernels(backend: str):
    """The compiled ``(track, track_lanes, first_occurrence, design, chart, track_from_start,
    real_tensors)`` kernels that ``backend`` selects, or None for the numpy implementation."""
    return _jit.select_kernels(backend, _compiled, "the minimal solver", available=HAVE_NUMBA)


def _track_compiled(kernels, u0, p0, p1, owner, *, hermite=False, max_steps=150, h0=0.05,
                    min_step=1e-7, first_tol=5e-2, final_newton=3, slow_newton=40,
                    max_norm=1e8, end_zone=1e-4):
    """:func:`track_paths` by the compiled kernels (:func:`_kernels`), rows first: ``u0``
    (P, 8), charts ``p0[owner]`` and ``p1[owner]`` with ``p0, p1`` (M, 3, 16), all complex and
    C-contiguous. The Runge-Kutta predictor runs on lanes of paths (:func:`_nb_track_lanes`),
    the Hermite one path by path (:func:`_nb_track`). Returns the end points (P, 8) and
    whether they converged (P,)."""
    args = (u0, p0, p1, np.asarray(owner, dtype=np.int64))
    opts = (int(max_steps), float(h0), float(min_step), float(first_tol), int(final_newton),
            int(slow_newton), float(max_norm), float(end_zone))
    if hermite:
        u, ok, _ = kernels[0](*args, True, *opts)
        return u, ok
    u, ok, _, _, _ = kernels[1](*args, *opts, False)
    return u, ok


def minimal_residuals(u, params) -> np.ndarray:
    """The eight polynomial equations of the module docstring at ``u``.

    Parameters
    ----------
    u : (8, ...) array_like
        ``(a, b, c23, c32, c24, c42, c34, c43)``, complex or real.
    params : (3, 16, ...) array_like
        The chart ``(f0, f1, f2)``, broadcast against ``u``'s trailing dimensions.

    Returns
    -------
    H : (8, ...) complex ndarray
    """
    u = np.asarray(u, dtype=complex)
    shape = u.shape[1:]
    p = np.broadcast_to(np.asarray(params, dtype=complex), (3, 16, *shape))
    H, _, _ = _minors(u.reshape(8, -1), p.reshape(3, 16, -1), None)
    return H.reshape(8, *shape)


def matrix_from_unknowns(u, params) -> np.ndarray:
    """The matrix :math:`C` (gauge :math:`c_{12} = c_{13} = c_{14} = 1`) of unknowns ``u``.

    Parameters
    ----------
    u : (8, ...) array_like
    params : (3, 16, ...) array_like
        The chart ``(f0, f1, f2)``.

    Returns
    -------
    C : (..., 4, 4) ndarray, complex if ``u`` or ``params`` is.
    """
    u = np.asarray(u)
    params = np.asarray(params)
    dtype = np.result_type(u, params, float)
    shape = np.broadcast_shapes(u.shape[1:], params.shape[2:])
    u = np.broadcast_to(u, (8, *shape))
    mu = _SIGN.reshape(16, *([1] * len(shape))) * (params[0] + u[0] * params[1]
                                                   + u[1] * params[2])
    C = np.empty((4, 4, *shape), dtype=dtype)
    C[0, 1:] = 1.0
    d = mu[_DIAG_FLAT]
    C[[0, 1, 2, 3], [0, 1, 2, 3]] = d
    C[[1, 2, 3], 0] = d[0] * d[1:] - mu[_COL_FLAT]
    C[_OFF_R, _OFF_C] = u[2:]
    return np.moveaxis(C, (0, 1), (-2, -1))


def gauge_transpose(C) -> np.ndarray:
    r"""The partner :math:`D^{-1} C^T D` of ``C`` in the gauge :math:`c_{12} = c_{13} = c_{14} = 1`.

    Same principal minors, so the same tensor (proof of Theorem 1). Complex input allowed.

    Parameters
    ----------
    C : (..., 4, 4) array_like

    Returns
    -------
    (..., 4, 4) ndarray
    """
    Ct = np.swapaxes(np.asarray(C), -1, -2)
    dvec = np.ones(Ct.shape[:-1], dtype=np.result_type(Ct, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        dvec[..., 1:] = 1.0 / Ct[..., 0, 1:]
    return Ct * dvec[..., None, :] / dvec[..., :, None]


def _unknowns_from_matrix(C, ab):
    """``u`` (8, ...) from matrices ``C`` (..., 4, 4) and chart coordinates ``ab`` (2, ...)."""
    return np.concatenate([ab, np.moveaxis(C[..., _OFF_R, _OFF_C], -1, 0)])


def _extrapolate(ts, us, vs, tq):
    """Value at ``tq`` (P,) of the Hermite polynomial through points ``us`` (k, 8, P) with
    derivatives ``vs`` at parameters ``ts`` (k, P), oldest first; a negative parameter marks a
    point that does not exist yet, and paths with fewer points get a lower degree (linear with
    the last point alone)."""
    out = us[-1] + (tq - ts[-1]) * vs[-1]
    with np.errstate(all="ignore"):
        for m in range(2, len(ts) + 1):
            have = np.all(ts[-m:] >= 0.0, axis=0)
            if not np.any(have):
                break
            z = np.repeat(ts[-m:], 2, axis=0)  # each node twice (confluent)
            table = list(np.repeat(us[-m:], 2, axis=0))
            coef = [table[0]]
            for level in range(1, 2 * m):
                table = [vs[len(ts) - m + i // 2] if level == 1 and i % 2 == 0
                         else (table[i + 1] - table[i]) / (z[i + level] - z[i])
                         for i in range(2 * m - level)]
                coef.append(table[0])
            val = coef[-1]
            for level in range(2 * m - 2, -1, -1):
                val = coef[level] + (tq - z[level]) * val
            out = np.where(have, val, out)
    return out


def track_paths(u0, start, target, *, predictor: str = "rk4", max_steps: int | None = None,
                h0: float = 0.05, min_step: float = 1e-7, first_tol: float | None = None,
                final_newton: int = 3, slow_newton: int = 40, max_norm: float = 1e8,
                end_zone: float = 1e-4, block: int = 1024, backend: str = "auto"):
    r"""Track solutions of the eight equations from parameters ``start`` to ``target``.

    The parameters move on the segment :math:`p(t) = (1 - t) p_0 + t p_1`; each path solves
    :math:`H(u(t), p(t)) = 0`, i.e.

    .. math:: \dot u = -J_u^{-1}\, \partial_t H .

    A step of length :math:`h` is a prediction followed by two Newton corrections at
    :math:`t + h`. The ``"hermite"`` predictor extrapolates the quintic Hermite polynomial
    through the last three points of the path and their velocities (cubic after the first
    step, linear at the start): no evaluation of the equations, against three for the
    fourth-order Runge-Kutta predictor ``"rk4"``, for about 1.8 times as many steps (a fifth
    fewer evaluations, measured with ``first_tol`` 0.03 for ``"rk4"``; the default stays
    ``"rk4"``, whose end points pass the accuracy checks of the tests). It is accepted when the first correction :math:`e_1`
    (relative to :math:`1 + |u|`) is below ``first_tol``, the second has contracted to a fifth
    of it (:data:`_CONTRACTION`; or to rounding level) and :math:`|u|` stays below
    ``max_norm``; the next step is :math:`h \cdot 0.5\, (\text{first\_tol} / e_1)^{1/5}`, within [0.5 h, 2.5 h] after an
    acceptance and [0.1 h, 0.5 h] after a rejection. The second correction's Jacobian also gives
    the velocity :math:`\dot u` that starts the next step. Each path has its own :math:`t`
    and :math:`h` (numpy advances all paths together, the compiled kernel eight at a time, or one
    after the other with the Hermite predictor, with the same steps); a path fails when its
    step falls below ``min_step``, it diverges, or it has not arrived after ``max_steps``
    iterations.

    Near a cluster of close solutions (a nearly double root, which noise-free data sometimes
    gives at the true tensor) the corrections contract only linearly and the step collapses.
    A path whose step collapses within ``end_zone`` of :math:`t = 1` is therefore handed to the
    Newton steps on the target system: ``final_newton`` for all paths, then up to
    ``slow_newton`` more for those not yet converged. A path succeeds when its last correction
    is below :math:`10^{-8} (1 + |u|)`.

    Parameters
    ----------
    u0 : (8, P) complex array_like
        Solutions at ``start``.
    start, target : (3, 16, P) complex array_like
        Charts ``(f0, f1, f2)`` of each path.
    predictor : {"hermite", "rk4"}
    max_steps : int, optional
        400 for ``"hermite"``, 150 for ``"rk4"``.
    h0 : float
        First step in :math:`t`.
    first_tol : float, optional
        0.1 for ``"hermite"``, 0.05 for ``"rk4"`` (on 3,000 noise-free samples 4.6% fewer
        evaluations than 0.03, and as many samples with all paths converged; 0.07 lost some).
    min_step, max_norm, end_zone : float
    final_newton, slow_newton : int
        Newton steps on the target system after reaching :math:`t = 1`.
    block : int
        Paths evaluated together in one vector operation (the working arrays of larger blocks
        fall out of the processor's cache; numpy implementation only).
    backend : {"auto", "numba", "numpy"}
        ``"auto"`` tracks the paths in compiled loops when numba is installed
        (:data:`HAVE_NUMBA`; the same steps, end points equal to rounding) and all paths
        together in numpy otherwise; ``"numba"`` requires the compiled kernel, ``"numpy"``
        forbids it. Both backends implement both predictors.

    Returns
    -------
    u : (8, P) complex ndarray
        End points (NaN for failed paths).
    ok : (P,) bool ndarray
        Paths that reached :math:`t = 1` with a converged Newton correction.
    """
    if predictor not in ("hermite", "rk4"):
        raise ValueError(f"predictor must be 'hermite' or 'rk4', got {predictor!r}")
    hermite = predictor == "hermite"
    max_steps = (400 if hermite else 150) if max_steps is None else max_steps
    first_tol = (0.1 if hermite else 5e-2) if first_tol is None else first_tol
    kernels = _kernels(backend)
    u = np.array(u0, dtype=complex)
    p0 = np.asarray(start, dtype=complex)
    p1 = np.asarray(target, dtype=complex)
    if kernels is not None:
        def rows(x):
            return np.ascontiguousarray(np.moveaxis(x, -1, 0))

        ue, ok = _track_compiled(kernels, rows(u), rows(p0), rows(p1), np.arange(u.shape[1]),
                                 hermite=hermite, max_steps=max_steps, h0=h0,
                                 min_step=min_step, first_tol=first_tol,
                                 final_newton=final_newton, slow_newton=slow_newton,
                                 max_norm=max_norm, end_zone=end_zone)
        return ue.T, ok
    dp = p1 - p0
    n = u.shape[1]
    t = np.zeros(n)
    h = np.full(n, h0)
    state = np.zeros(n, dtype=int)  # 0 running, 1 reached t = 1, 2 failed
    vel = np.empty_like(u)  # du/dt at the current point of every path
    # The two previous points of each path, their velocities and parameters (-1: none yet).
    hist_u = np.zeros((2, *u.shape), dtype=complex)
    hist_v = np.zeros((2, *u.shape), dtype=complex)
    hist_t = np.full((2, n), -1.0)

    def step(act):
        """One predictor-corrector step of the paths ``act``, in place."""
        ua, ta = u[:, act], t[act]
        ha = np.minimum(h[act], 1.0 - ta)
        p0a, dpa = p0[..., act], dp[..., act]

        def velocity(v, s):
            _, J, Ht = _minors(v, p0a + s * dpa, dpa)
            return -_solve(J, Ht)

        k1 = vel[:, act]
        tn = ta + ha
        if hermite:
            un = _extrapolate(np.concatenate([hist_t[:, act], ta[None]]),
                              np.concatenate([hist_u[:, :, act], ua[None]]),
                              np.concatenate([hist_v[:, :, act], k1[None]]), tn)
        else:
            k2 = velocity(ua + 0.5 * ha * k1, ta + 0.5 * ha)
            k3 = velocity(ua + 0.5 * ha * k2, ta + 0.5 * ha)
            k4 = velocity(ua + ha * k3, ta + ha)
            un = ua + (ha / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        pn = p0a + tn * dpa
        H, J, _ = _minors(un, pn, None)
        d1 = _solve(J, H)
        un = un - d1
        # The second correction also gives the velocity of the next step (its Jacobian
        # is that of a point within the square of the first correction of the path).
        H, J, Ht = _minors(un, pn, dpa)
        sol = _solve(J, np.stack([H, Ht], axis=1))
        d2, vn = sol[:, 0], -sol[:, 1]
        un = un - d2
        scale = 1.0 + np.linalg.norm(un, axis=0)
        e1 = np.linalg.norm(d1, axis=0) / scale
        e2 = np.linalg.norm(d2, axis=0) / scale
        good = ((e1 < first_tol) & ((e2 < _CONTRACTION * e1) | (e2 < 1e-11))
                & (scale < max_norm))
        acc, rej = act[good], act[~good]
        for old, new in ((hist_u[0], hist_u[1]), (hist_v[0], hist_v[1]), (hist_u[1], u),
                         (hist_v[1], vel)):
            old[:, acc] = new[:, acc]
        hist_t[:, acc] = np.stack([hist_t[1, acc], t[acc]])
        u[:, acc] = un[:, good]
        vel[:, acc] = vn[:, good]
        t[acc] = np.where(tn[good] >= 1.0 - 1e-15, 1.0, tn[good])
        with np.errstate(divide="ignore"):
            factor = 0.5 * (first_tol / e1) ** 0.2
        factor = np.where(np.isfinite(factor), factor, 0.25)
        h[acc] = ha[good] * np.clip(factor[good], 0.5, 2.5)
        h[rej] = ha[~good] * np.clip(factor[~good], 0.1, 0.5)
        state[acc[t[acc] >= 1.0]] = 1
        small = h[rej] < min_step
        bounded = scale[~good] < max_norm
        stuck = rej[small | ~bounded]
        # Next to a cluster of close solutions the corrections contract only linearly and
        # the step collapses; a path that got there is finished by the Newton steps at t = 1.
        near_end = (t[stuck] > 1.0 - end_zone) & bounded[small | ~bounded]
        state[stuck] = np.where(near_end, 1, 2)

    with np.errstate(all="ignore"):
        for lo in range(0, n, block):
            sl = slice(lo, lo + block)
            _, J, Ht = _minors(u[:, sl], p0[..., sl], dp[..., sl])
            vel[:, sl] = -_solve(J, Ht)
        for _ in range(max_steps):
            act = np.flatnonzero(state == 0)
            if act.size == 0:
                break
            # Blocks of paths small enough for the temporaries to stay in the cache.
            for lo in range(0, act.size, block):
                step(act[lo:lo + block])
        state[state == 0] = 2
        for _ in range(final_newton):
            d = _newton_step(u, p1, block)
            u = u - d
        scale = 1.0 + np.linalg.norm(u, axis=0)
        ok = (state == 1) & (np.linalg.norm(d, axis=0) / scale < 1e-8)
        # Paths that end at a close pair of solutions converge only linearly: more steps.
        slow = np.flatnonzero((state == 1) & ~ok)
        for _ in range(slow_newton):
            if slow.size == 0:
                break
            d = _newton_step(u[:, slow], p1[..., slow], block)
            u[:, slow] -= d
            done = np.linalg.norm(d, axis=0) < 1e-8 * (1.0 + np.linalg.norm(u[:, slow], axis=0))
            ok[slow[done]] = True
            slow = slow[~done]
    u[:, ~ok] = np.nan
    return u, ok


@dataclasses.dataclass(frozen=True)
class StartSystem:
    """A generic complex instance and all its :data:`N_SOLUTIONS` solutions.

    Attributes
    ----------
    params : (3, 16) complex ndarray
        The chart ``(f0, f1, f2)``.
    solutions : (8, 56) complex ndarray
        Unknowns ``u`` of every solution; column ``k + 28`` is the gauge transpose partner of
        column ``k``.
    """

    params: np.ndarray
    solutions: np.ndarray


@functools.cache
def load_start_system() -> StartSystem:
    """The start system stored with the package (``data/start_system_13pt.npz``)."""
    ref = resources.files("xslit.epipolar").joinpath("data", "start_system_13pt.npz")
    with resources.as_file(ref) as path, np.load(path) as data:
        return StartSystem(data["params"].copy(), data["solutions"].copy())


def _orthonormal_start(start: StartSystem):
    """``(params, solutions)`` of ``start`` in a chart like those of the data
    (:func:`chart_from_null_space`): ``f1, f2`` orthonormal, ``f0`` orthogonal to both.

    The same tensors, the coordinates :math:`(a, b)` moved by an affine map. The paths from
    this chart are shorter than from the stored one (about 6% fewer evaluations on noise-free
    samples) and fail less often (97.5% of the samples instead of 95% need no second attempt).
    """
    P, S = start.params, start.solutions
    Q, R = np.linalg.qr(P[1:].T)  # [f1 f2] = Q R
    c = Q.conj().T @ P[0]  # f0 + Q R (a, b) = (f0 - Q c) + Q (R (a, b) + c)
    params = np.concatenate([(P[0] - Q @ c)[None], Q.T])
    return params, np.concatenate([R @ S[:2] + c[:, None], S[2:]])


#: The transpose pairs of the stored start system whose second member (column ``k + 28``) is
#: tracked rather than the first: a solution and its gauge transpose follow paths of different
#: lengths, and these were the shorter on average (on 300 noise-free samples, 3.6% fewer
#: evaluations per sample, the longest mean path 186 evaluations long down to 168; on 300
#: others the simulated queue of a single sample's 28 paths 3% shorter).
_SWAPPED_PAIRS = np.array([5, 10, 11, 17, 19, 22, 25])


@functools.cache
def _default_start():
    """:func:`_orthonormal_start` of :func:`load_start_system`, the members of the pairs
    :data:`_SWAPPED_PAIRS` swapped (columns ``k`` and ``k + 28``)."""
    params, solutions = _orthonormal_start(load_start_system())
    k = _SWAPPED_PAIRS
    solutions[:, np.concatenate([k, k + N_SOLUTIONS // 2])] = (
        solutions[:, np.concatenate([k + N_SOLUTIONS // 2, k])])
    return params, solutions


def _unitary2(Z):
    """The Gram-Schmidt orthonormalisation of the columns of complex matrices ``Z``
    (B, 2, 2) (their QR decomposition with the diagonal of ``R`` positive): Haar-distributed
    unitary matrices for Gaussian ``Z``."""
    Q = np.empty(Z.shape, dtype=complex)
    a = np.abs(Z[:, :, 0]) ** 2  # sums of two entries written out: fewer numpy calls
    Q[:, :, 0] = Z[:, :, 0] / np.sqrt(a[:, :1] + a[:, 1:])
    c = Q[:, :, 0].conj() * Z[:, :, 1]
    z2 = Z[:, :, 1] - (c[:, :1] + c[:, 1:]) * Q[:, :, 0]
    a = np.abs(z2) ** 2
    Q[:, :, 1] = z2 / np.sqrt(a[:, :1] + a[:, 1:])
    return Q


#: Size of the random turn of the aligned chart of the start system (:func:`_aligned_unitary2`):
#: the Gram-Schmidt orthonormalisation of ``I + spread Z`` with complex Gaussian ``Z``, a turn
#: by angles of about this size in radians.
_CHART_SPREAD = 0.2


def _aligned_unitary2(sp, params, Z, spread):
    r"""The chart of the start system for each target chart: the unitary :math:`U` with
    :math:`[f_1' f_2'] = [f_1 f_2]_{start}\, U` closest to the target's :math:`[f_1 f_2]`,
    turned by the random unitary :func:`_unitary2` of ``I + spread Z``.

    The closest unitary (the orthogonal Procrustes problem) is the polar factor of
    :math:`M = [f_1 f_2]_{start}^H [f_1 f_2]`, for a :math:`2 \times 2` matrix in closed form:

    .. math:: U = \frac{M + e^{i \arg \det M} \operatorname{adj}(M)^H}
                        {\sqrt{\|M\|_F^2 + 2 |\det M|}}.

    The segment of the homotopy then moves the chart's plane without the twist of a Haar
    random :math:`U` (on 300 noise-free samples 12% fewer evaluations, 0.70 ms of tracking
    per sample instead of 0.81), and the random turn keeps the path random, as the gamma
    trick wants (with a turn of 0.15-0.6 radians, 1-3% more evaluations than none).

    Parameters
    ----------
    sp : (3, 16) complex ndarray
        The start system's chart, ``f1, f2`` orthonormal.
    params : (B, 3, 16) complex ndarray
        The target charts.
    Z : (B, 2, 2) complex ndarray
        Gaussian draws.
    spread : float

    Returns
    -------
    (B, 2, 2) complex ndarray
    """
    M = sp[1:].conj() @ np.swapaxes(params[:, 1:], 1, 2)  # (B, 2, 2)
    det = M[:, 0, 0] * M[:, 1, 1] - M[:, 0, 1] * M[:, 1, 0]
    size = np.abs(det)
    phase = np.where(size > 0.0, det / np.where(size > 0.0, size, 1.0), 1.0)
    adj = np.stack([np.stack([M[:, 1, 1], -M[:, 0, 1]], -1),
                    np.stack([-M[:, 1, 0], M[:, 0, 0]], -1)], -2)
    norm = np.sqrt(np.sum(np.abs(M) ** 2, axis=(1, 2)) + 2.0 * size)
    ok = norm > 0.0
    A = np.where(ok[:, None, None], M + phase[:, None, None] * np.conj(np.swapaxes(adj, 1, 2)),
                 2.0 * np.eye(2)) / np.where(ok, norm, 2.0)[:, None, None]
    return A @ _unitary2(np.eye(2) + spread * Z)


#: Newton steps on the target system after a path of :func:`track_from_start` arrives, before
#: its convergence test: the last step of the path already made two corrections at t = 1, and
#: the test asks for more while the correction exceeds 1e-8 (1 + |u|) (three steps gave the
#: same completeness and recovery on 1,000 samples, for about 2% more time).
_FINAL_NEWTON = 1

#: The order in which the compiled kernel queues the 28 paths of an instance: by decreasing mean
#: length (evaluations per path on 300 noise-free samples, from 168 down to 115, with the pairs
#: :data:`_SWAPPED_PAIRS` swapped and the charts of :func:`_aligned_unitary2`), so that the
#: lanes left idle at the end of a single sample wait for short paths only. Each path's
#: arithmetic does not depend on its lane, so the solutions are the same in any order.
_PATH_ORDER = np.array([24, 23, 1, 14, 20, 19, 25, 6, 11, 9, 15, 13, 12, 22, 16, 3, 5, 17, 10, 4,
                        26, 7, 18, 0, 2, 21, 27, 8])

#: The options of the compiled kernel's paths in :func:`track_from_start` (those of
#: :func:`track_paths` with the Runge-Kutta predictor): ``max_steps, h0, min_step, first_tol,
#: final_newton, slow_newton, max_norm, end_zone``.
_TRACK_OPTIONS = (150, 0.05, 1e-7, 5e-2, _FINAL_NEWTON, 40, 1e8, 1e-4)

#: Largest distance, relative to ``1 + |u|``, of two end points counted as one solution (two
#: paths that met).
_DUPLICATE_RTOL = 1e-6


def track_from_start(params, *, rng=None, start: StartSystem | None = None,
                     backend: str = "auto"):
    r"""All complex solutions for given null-space charts: one pass of the homotopy.

    The 28 paths of each instance start at one solution of each transpose pair of the start
    system, in a chart of it aligned with the instance's and turned at random
    (:func:`_aligned_unitary2`); the other 28 solutions are the gauge transposes
    (:func:`gauge_transpose`) of the end points. With the compiled backend all of it, from
    the chart of the start system on, is one compiled call
    (:func:`_nb_track_from_start`): for a single sample the numpy calls around the path
    tracker took about a third as long as the tracker itself.

    Parameters
    ----------
    params : (B, 3, 16) array_like
        Charts ``(f0, f1, f2)`` of the null spaces (:func:`null_space_charts`); real or complex.
    rng : None | int | numpy.random.Generator
        Draws the random turn of the start system's chart (the gamma trick).
    start : StartSystem, optional
        Defaults to :func:`load_start_system`.
    backend : {"auto", "numba", "numpy"}
        See :func:`track_paths`.

    Returns
    -------
    u : (B, 8, 56) complex ndarray
        Unknowns of the solutions; column ``k + 28`` is the gauge transpose partner of column
        ``k``. NaN for solutions that were not found.
    found : (B, 56) bool ndarray
        Converged end points that are not duplicates of an earlier column (two paths that met
        count once).
    """
    rng = check_rng(rng)
    kernels = _kernels(backend)
    sp, su = _default_start() if start is None else _orthonormal_start(start)
    params = np.ascontiguousarray(params, dtype=complex)  # (B, 3, 16)
    m = len(params)
    half = N_SOLUTIONS // 2
    zr = rng.normal(size=(m, 2, 2))
    zi = rng.normal(size=(m, 2, 2))
    if kernels is not None:  # the draws, the rest in one compiled call
        return kernels[5](params, zr, zi, _CHART_SPREAD, sp, su, _PATH_ORDER, *_TRACK_OPTIONS,
                          _DUPLICATE_RTOL)
    # chart basis [f1' f2'] = [f1 f2] U, coordinates (a, b) = U (a', b')
    U = _aligned_unitary2(sp, params, zr + 1j * zi, _CHART_SPREAD)
    ps = np.empty((m, 3, 16), dtype=complex)
    ps[:, 0] = sp[0]
    ps[:, 1:] = np.swapaxes(sp[1:].T @ U, 1, 2)  # (16, 2) @ (B, 2, 2), then (B, 2, 16)
    u0 = np.repeat(su[None, :, :half], m, axis=0)  # (B, 8, 28)
    u0[:, :2] = np.swapaxes(U.conj(), 1, 2) @ u0[:, :2]
    owner = np.repeat(np.arange(m), half)
    u = np.empty((m, 8, N_SOLUTIONS), dtype=complex)
    pt = np.moveaxis(params, 0, -1)  # (3, 16, B)
    ue, ok = track_paths(np.moveaxis(u0, 0, 1).reshape(8, -1),
                         np.moveaxis(ps, 0, -1)[..., owner], pt[..., owner],
                         final_newton=_FINAL_NEWTON, backend="numpy")
    with np.errstate(all="ignore"):
        Cp = gauge_transpose(matrix_from_unknowns(ue.reshape(8, m, half), pt[..., None]))
        up = _unknowns_from_matrix(Cp, ue.reshape(8, m, half)[:2]).reshape(8, -1)
        # The partners are checked like the end points of the paths: a Newton step.
        d = _newton_step(up, pt[..., owner])
        up = up - d
        conv = np.linalg.norm(d, axis=0) < 1e-8 * (1.0 + np.linalg.norm(up, axis=0))
    u[:, :, :half] = np.moveaxis(ue.reshape(8, m, half), 1, 0)
    u[:, :, half:] = np.moveaxis(up.reshape(8, m, half), 1, 0)
    ok = ok.reshape(m, half)
    found = np.concatenate([ok, ok & conv.reshape(m, half)], axis=1)
    found &= _first_occurrence(u, found, _DUPLICATE_RTOL)
    u[~found[:, None, :].repeat(8, axis=1)] = np.nan
    return u, found


def _first_occurrence(u, ok, rtol: float = 1e-6) -> np.ndarray:
    r"""Whether each found solution differs from every earlier found one, (B, 56).

    Squared distances from the Gram matrix, :math:`|v_i - v_j|^2 = |v_i|^2 + |v_j|^2 -
    2 \operatorname{Re} v_i^H v_j` (one matrix product per sample; the threshold is far above
    the rounding of the expansion)."""
    v = np.where(ok[:, None, :], u, 0.0)
    n2 = np.einsum("bkn,bkn->bn", v.real, v.real) + np.einsum("bkn,bkn->bn", v.imag, v.imag)
    gram = (np.swapaxes(v.real, 1, 2) @ v.real) + (np.swapaxes(v.imag, 1, 2) @ v.imag)
    d2 = n2[:, :, None] + n2[:, None, :] - 2.0 * gram
    scale = 1.0 + np.sqrt(n2)
    lim = rtol * np.minimum(scale[:, :, None], scale[:, None, :])
    close = (d2 < lim * lim) & ok[:, :, None] & ok[:, None, :]
    n = u.shape[2]
    close &= np.tri(n, n, -1, dtype=bool)  # close[i, j] for j < i
    return ~np.any(close, axis=2)


@dataclasses.dataclass(frozen=True)
class MinimalComplexSolutions:
    """Every complex solution of 13-point samples, in the chart each was solved in.

    Attributes
    ----------
    solutions : (B, 8, 56) complex ndarray
        Unknowns ``u`` (see the module docstring); column ``k + 28`` is the gauge transpose
        partner of column ``k``; NaN where not found.
    found : (B, 56) bool ndarray
    params : (B, 3, 16) ndarray
        The chart ``(f0, f1, f2)`` of each sample, in normalised coordinates.
    T : (B, 4, 2, 2) ndarray
        The normalisation of each sample (:func:`null_space_charts`).
    reasons : list of (str or None)
        Why a sample was skipped (degenerate) or is incomplete; None when all 56 solutions
        were found.
    """

    solutions: np.ndarray
    found: np.ndarray
    params: np.ndarray
    T: np.ndarray
    reasons: list

    def tensors(self) -> np.ndarray:
        """The tensors of all solutions in pixel coordinates, unit Frobenius norm,
        ``(B, 56, 2, 2, 2, 2)`` complex (NaN where not found)."""
        return _pixel_tensors(self.params[:, None], self.solutions[:, :2].transpose(0, 2, 1),
                              self.T[:, None])


def _pixel_tensors(params, ab, T, owner=None) -> np.ndarray:
    """Tensors ``f0 + a f1 + b f2`` of charts ``params`` (..., 3, 16) at ``ab`` (..., 2),
    de-normalised with ``T`` (..., 4, 2, 2), or with ``T[owner]`` when the tensors of a sample
    share its ``T`` (one Kronecker product per sample), and scaled to unit norm:
    (..., 2, 2, 2, 2)."""
    f = params[..., 0, :] + ab[..., :1] * params[..., 1, :] + ab[..., 1:] * params[..., 2, :]
    K = kron_modes(T[..., 0, :, :], T[..., 1, :, :], T[..., 2, :, :], T[..., 3, :, :])
    if owner is not None:
        K = K[owner]
    F = (f[..., None, :] @ K)[..., 0, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        F = F / np.linalg.norm(F, axis=-1, keepdims=True)
    return F.reshape(*F.shape[:-1], 2, 2, 2, 2)


def solve_minimal_complex(points1, points2, *, rng=None, retries: int = 2,
                          start: StartSystem | None = None,
                          backend: str = "auto") -> MinimalComplexSolutions:
    """Every complex solution of 13-point samples (for testing and analysis).

    Samples whose paths did not all succeed, or with a solution whose principal minors miss
    its tensor by more than :data:`STRUCTURE_TOL` (relative to the largest entry: solutions far
    out in the chart, entries of :math:`C` in the thousands, lose digits to cancellation), are
    solved again, up to ``retries`` times, with a fresh random rotation of the image axes
    (:func:`null_space_charts`) and a fresh chart of the start system
    (:func:`track_from_start`); the attempt with the most solutions, then the smallest such
    miss, is kept.

    Parameters
    ----------
    points1, points2 : (13, 2) or (B, 13, 2) array_like
    rng : None | int | numpy.random.Generator
    retries : int
    start : StartSystem, optional
    backend : {"auto", "numba", "numpy"}
        Compiled or numpy path tracking (:func:`track_paths`).

    Returns
    -------
    MinimalComplexSolutions
        With a leading batch dimension also for a single sample.
    """
    p1, p2, _ = _check_samples(points1, points2)
    rng = check_rng(rng)
    _kernels(backend)
    nb = len(p1)
    params, T, reasons = null_space_charts(p1, p2, rng, backend)
    todo = np.flatnonzero([r is None for r in reasons])
    first = 0
    if todo.size == nb:  # no degenerate sample: the first attempt's arrays as they come
        u, found = track_from_start(params, rng=rng, start=start, backend=backend)
        miss = _structure_residual(u, params).max(axis=1)  # largest miss of the solutions
        todo, first = np.flatnonzero((found.sum(1) < N_SOLUTIONS) | (miss > STRUCTURE_TOL)), 1
    else:
        u = np.full((nb, 8, N_SOLUTIONS), np.nan + 0j)
        found = np.zeros((nb, N_SOLUTIONS), dtype=bool)
        miss = np.full(nb, np.inf)
    for attempt in range(first, retries + 1):
        if todo.size == 0:
            break
        pa, Ta = params[todo], T[todo]
        if attempt:
            pa, Ta, _ = null_space_charts(p1[todo], p2[todo], rng, backend)
        ut, ft = track_from_start(pa, rng=rng, start=start, backend=backend)
        mt = _structure_residual(ut, pa).max(axis=1)
        nt, n0 = ft.sum(1), found[todo].sum(1)
        better = (nt > n0) | ((nt == n0) & (mt < miss[todo]))
        keep = todo[better]
        u[keep], found[keep] = ut[better], ft[better]
        params[keep], T[keep], miss[keep] = pa[better], Ta[better], mt[better]
        todo = todo[(found[todo].sum(1) < N_SOLUTIONS) | (miss[todo] > STRUCTURE_TOL)]
    if todo.size:
        todo = todo[found[todo].sum(1) < N_SOLUTIONS]
    for k in todo:
        reasons[k] = (f"{N_SOLUTIONS - found[k].sum()} of the {N_SOLUTIONS} complex solutions "
                      f"were not found (failed homotopy paths)")
    return MinimalComplexSolutions(u, found, params, T, reasons)


def _structure_residual(u, params, size: float = 1000.0) -> np.ndarray:
    """How far the principal minors of each solution's matrix :math:`C` are from its tensor:
    ``max |principal_minor_tensor(C) - f| / max |f|`` for ``u`` (B, 8, 56) in charts
    ``params`` (B, 3, 16).

    Computed only for the solutions with :math:`|u|` above ``size``, 0 for the others and for
    those not found (NaN): the miss comes from cancellation in the minors, which grows with
    the entries of :math:`C` (on 500 noise-free samples, every solution that missed by more
    than 1e-10 had :math:`|u| > 400`, by more than 1e-9, half :data:`STRUCTURE_TOL`,
    :math:`|u| > 1100`; about one sample in eight has a solution above 1000)."""
    r = np.zeros((u.shape[0], u.shape[2]))
    # |u| > size needs an entry above size / sqrt(8); fmax skips the NaN of those not found.
    if not np.fmax.reduce(np.abs(u), axis=None) > size / np.sqrt(8.0):
        return r
    far = np.linalg.norm(u, axis=1) > size  # (B, 56), False where not found (NaN)
    if not far.any():
        return r
    b, k = np.nonzero(far)
    v, p = u[b, :, k], params[b]  # (K, 8), (K, 3, 16)
    C = matrix_from_unknowns(v.T, np.moveaxis(p, 0, -1))
    m = principal_minor_tensor(C).reshape(-1, 16)
    f = p[:, 0] + v[:, :1] * p[:, 1] + v[:, 1:2] * p[:, 2]
    r[b, k] = np.abs(m - f).max(axis=-1) / np.abs(f).max(axis=-1)
    return r


def _design_rows(v, w):
    """Rows ``kron(h1, h2, h3, h4)`` of homogeneous coordinates ``h_m = (v[m], w[m])``, with
    ``v, w`` of shape ``(4, ..., n)``: ``(..., n, 16)``."""
    h = np.stack([v, w], axis=-1)  # (4, ..., n, 2)
    ab = (h[0][..., :, None] * h[1][..., None, :]).reshape(*h.shape[1:-1], 4)
    cd = (h[2][..., :, None] * h[3][..., None, :]).reshape(*h.shape[1:-1], 4)
    return (ab[..., :, None] * cd[..., None, :]).reshape(*ab.shape[:-1], 16)


def chart_from_null_space(N) -> tuple[np.ndarray, np.ndarray]:
    r"""The chart ``(f0, f1, f2)`` of :math:`\operatorname{span}(N)` with :math:`f_{2222} = 1`.

    With :math:`n` the last column of :math:`N` and :math:`s = |n|`, ``f0`` is
    :math:`N^T n / s^2` and ``f1, f2`` are :math:`N^T e_1, N^T e_2` for the last two columns
    :math:`e_1, e_2` of the Householder reflection that maps :math:`n` to
    :math:`\mp s\,(1, 0, 0)`, an orthonormal basis of the complement of :math:`n` in closed
    form:

    .. math:: H = I - \frac{w w^T}{s (s + |n_1|)}, \qquad
              w = n + \operatorname{sign}(n_1)\, s\, (1, 0, 0).

    Parameters
    ----------
    N : (..., 3, 16) array_like
        Real orthonormal rows spanning the null space.

    Returns
    -------
    params : (..., 3, 16) ndarray
        ``f0`` with ``f0[15] = 1``, and ``f1, f2`` an orthonormal basis of the tensors of
        ``span(N)`` with ``f[15] = 0``.
    size : (...,) ndarray
        ``|n|``: small when ``f_2222`` nearly vanishes on the whole null space.

    Examples
    --------
    >>> N = np.linalg.qr(np.random.default_rng(0).normal(size=(16, 3)))[0].T
    >>> params, size = chart_from_null_space(N)
    >>> bool(np.allclose(params[:, 15], [1, 0, 0]) and np.allclose(params[1:] @ params[1:].T,
    ...                                                           np.eye(2)))
    True
    """
    N = np.asarray(N, dtype=float)
    # Written out entry by entry in the order of the compiled kernel (the same numbers).
    x, y, z = N[..., 0, 15], N[..., 1, 15], N[..., 2, 15]
    size = np.sqrt((x * x + y * y) + z * z)
    coeffs = np.empty((*N.shape[:-2], 3, 3))
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = size * size
        k = size * (size + np.abs(x))
        w0 = x + np.where(x < 0.0, -size, size)
        coeffs[..., 0, 0], coeffs[..., 0, 1], coeffs[..., 0, 2] = x / s2, y / s2, z / s2
        coeffs[..., 1, 0], coeffs[..., 1, 1] = -(w0 * y) / k, 1.0 - (y * y) / k
        coeffs[..., 1, 2], coeffs[..., 2, 0] = -(z * y) / k, -(w0 * z) / k
        coeffs[..., 2, 1], coeffs[..., 2, 2] = -(y * z) / k, 1.0 - (z * z) / k
    params = ((coeffs[..., :, :1] * N[..., None, 0, :] + coeffs[..., :, 1:2] * N[..., None, 1, :])
              + coeffs[..., :, 2:] * N[..., None, 2, :])
    return params, size


def null_space_charts(points1, points2, rng=None, backend: str = "auto"):
    r"""Normalisation, null space and chart of a batch of 13-point samples.

    Pixels are normalised per axis (:func:`~xslit.epipolar.linear.axis_normalization`, mean 0
    and mean absolute deviation 1), then each axis is turned by a random rotation ``R`` of its
    homogeneous coordinates, :math:`[v, 1] \mapsto R\,[s(v - m), 1]`, by an angle between 30
    and 60 degrees: the chart entry :math:`f_{2222}` is the value of the tensor at the origin
    of the new coordinates, and at the centroid of the data (the origin of the plain
    normalisation) it nearly vanishes, which would put the solutions far out in the chart.
    The null space of the design matrix (Theorem 1's relation, homogeneous rows) is read off
    its SVD.

    Parameters
    ----------
    points1, points2 : (B, 13, 2) ndarray
    rng : None | int | numpy.random.Generator
        Draws the rotations.
    backend : {"auto", "numba", "numpy"}
        Normalisation and design matrices by a compiled loop (:func:`_nb_design`: for a single
        sample about a quarter of this function's time goes to a dozen small numpy calls) or
        by numpy; the same numbers.

    Returns
    -------
    params : (B, 3, 16) ndarray
        Charts (:func:`chart_from_null_space`) in normalised coordinates.
    T : (B, 4, 2, 2) ndarray
        Normalising matrices of ``x, y, x', y'``: homogeneous normalised coordinates are
        ``T @ [v, 1]``.
    reasons : list of (str or None)
        Why a sample is degenerate (the null space is not 3-dimensional, or ``f_2222``
        vanishes on it), None for the others.
    """
    rng = check_rng(rng)
    kernels = _kernels(backend)
    shape = (4, len(points1))
    # The angles and signs of Generator.choice((-1, 1)), drawn the same way.
    angle = rng.uniform(np.pi / 6, np.pi / 3, size=shape) * (
        2.0 * rng.integers(0, 2, size=shape) - 1.0)
    cos, sin = np.cos(angle), np.sin(angle)
    T = np.empty((*shape, 2, 2))  # (4, B, 2, 2)
    if kernels is not None:
        D = np.empty((shape[1], points1.shape[1], 16))
        kernels[3](np.ascontiguousarray(points1, dtype=float),
                   np.ascontiguousarray(points2, dtype=float), cos, sin, T, D)
    else:
        cols = np.stack([points1[..., 0], points1[..., 1], points2[..., 0], points2[..., 1]])
        # T = R N with N = axis_normalization(cols) = [[s, -s m], [0, 1]], written out.
        m = cols.mean(axis=-1)
        sm = 1.0 / np.maximum(np.abs(cols - m[..., None]).mean(axis=-1), 1e-12)
        T[..., 0, 0], T[..., 1, 0] = cos * sm, sin * sm
        T[..., 0, 1], T[..., 1, 1] = cos * (-sm * m) - sin, sin * (-sm * m) + cos
        h = T[..., :, :1] * cols[..., None, :] + T[..., :, 1:]  # (4, B, 2, 13) homogeneous
        D = _design_rows(h[:, :, 0], h[:, :, 1])
    _, s, Vt = np.linalg.svd(D)
    if kernels is not None:
        cond, size, params = np.empty(shape[1]), np.empty(shape[1]), np.empty((shape[1], 3, 16))
        kernels[4](s, Vt, cond, params, size)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            cond = np.where(s[:, 0] > 0, s[:, 12] / s[:, 0], 0.0)
        params, size = chart_from_null_space(Vt[:, 13:])
    reasons = []
    for c, z in zip(cond, size, strict=True):
        if not c > COND_TOL:
            reasons.append(f"the null space of the 13 correspondences is not 3-dimensional "
                           f"(s13 / s1 = {c:.1e}): coplanar or repeated points")
        elif not z > CHART_TOL:
            reasons.append("f_2222 vanishes on the whole null space (the chart of the "
                           "gauge c12 = c13 = c14 = 1 does not exist)")
        else:
            reasons.append(None)
    return params, T.transpose(1, 0, 2, 3), reasons


def _check_samples(points1, points2):
    """Validated ``(B, 13, 2)`` samples and whether the input was a single ``(13, 2)`` one."""
    p1 = check_array("points1", points1)
    p2 = check_array("points2", points2)
    for name, p in (("points1", p1), ("points2", p2)):
        if p.ndim not in (2, 3) or p.shape[-2:] != (MIN_MINIMAL_POINTS, 2):
            raise ValueError(f"{name} must have shape (13, 2) or (B, 13, 2), got {p.shape}")
        check_finite(name, p)
    if p1.shape != p2.shape:
        raise ValueError(f"points2 must have the shape of points1 {p1.shape}, got {p2.shape}")
    single = p1.ndim == 2
    return (p1[None], p2[None], True) if single else (p1, p2, False)


@dataclasses.dataclass(frozen=True)
class MinimalSolutions:
    """Real solutions of 13-point samples.

    Attributes
    ----------
    tensors : (K, 2, 2, 2, 2) ndarray
        Epipolar tensors in pixel coordinates, unit Frobenius norm, one per real tensor (its
        two matrices C are real).
    sample : (K,) int ndarray
        The sample each tensor comes from (all 0 for a single sample).
    reasons : list of (str or None)
        Per sample: why it was skipped (degenerate) or why solutions may be missing (paths that
        failed), None when all 56 complex solutions were found.
    n_found : (B,) int ndarray
        Complex solutions found per sample (56 on success, 0 for skipped samples).
    """

    tensors: np.ndarray
    sample: np.ndarray
    reasons: list
    n_found: np.ndarray


def solve_minimal(points1, points2, *, rng=None, backend: str = "auto") -> MinimalSolutions:
    r"""All real epipolar tensors through 13 correspondences (appendix, "Minimal SfM").

    Solves

    .. math:: \sum_{ijkl} F_{ijkl} [x,1]_i [y,1]_j [x',1]_k [y',1]_l = 0, \qquad
              F_{ijkl} = (-1)^{|S|} \det C[S, S]

    (Theorem 1 and its proof) for the 13 correspondences: the formulation of the module
    docstring, by parameter homotopy.

    Parameters
    ----------
    points1, points2 : (13, 2) or (B, 13, 2) array_like
        One sample, or a batch of samples solved together (much faster per sample).
    rng : None | int | numpy.random.Generator
        Randomness of the homotopy paths (the gamma trick).
    backend : {"auto", "numba", "numpy"}
        ``"auto"`` tracks the paths in compiled loops when numba is installed
        (:data:`HAVE_NUMBA`), with numpy otherwise; the other two force one of them
        (:func:`track_paths`).

    Returns
    -------
    MinimalSolutions
        Degenerate samples (coplanar or repeated points: the null space is not 3-dimensional)
        are skipped with their reason.

    Examples
    --------
    >>> from xslit.epipolar import epipolar_tensor
    >>> from xslit.synthetic import random_two_slit_camera, random_points_in_front
    >>> from xslit.testing import projective_distance
    >>> rng = np.random.default_rng(1)
    >>> cam1, cam2 = random_two_slit_camera(rng), random_two_slit_camera(rng)
    >>> X = random_points_in_front([cam1, cam2], 13, rng)
    >>> sol = solve_minimal(cam1.project(X), cam2.project(X), rng=0)
    >>> F = epipolar_tensor(cam1.A1, cam1.A2, cam2.A1, cam2.A2)
    >>> bool(min(projective_distance(G, F) for G in sol.tensors) < 1e-8)
    True
    """
    sol = solve_minimal_complex(points1, points2, rng=rng, backend=backend)
    u, found = sol.solutions, sol.found
    kernels = _kernels(backend)
    if kernels is not None:
        # T contiguous for one batch or one sample alike: one compiled version of the kernel.
        F, bi = kernels[6](u, found, sol.params, np.ascontiguousarray(sol.T), REAL_TOL)
        return MinimalSolutions(F.reshape(-1, 2, 2, 2, 2), bi, sol.reasons, found.sum(axis=1))
    half = N_SOLUTIONS // 2
    # NaN (solutions not found) compares False: not real.
    real = found & np.all(np.abs(u.imag) <= REAL_TOL * (1.0 + np.abs(u)), axis=1)
    keep = real[:, :half] & real[:, half:]  # (B, 28): both matrices C real
    bi, ki = np.nonzero(keep)
    F = _pixel_tensors(sol.params[bi], u[bi, :2, ki].real, sol.T, bi)
    return MinimalSolutions(F, bi, sol.reasons, found.sum(axis=1))


def minimal_hypotheses(points1, points2, samples, *, rng=None,
                       backend: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """The real epipolar tensors of many 13-point samples of one set of correspondences.

    The hypotheses of a robust loop for one round of samples: one batched call of
    :func:`solve_minimal` (batches are much faster per sample than single samples).
    Degenerate samples (coplanar or repeated points) give no tensor.

    Parameters
    ----------
    points1, points2 : (N, 2) array_like
        Corresponding pixels, ``N >= 13``.
    samples : (B, 13) array_like of int
        Indices into the correspondences, one sample per row.
    rng : None | int | numpy.random.Generator
        Randomness of the homotopy paths.
    backend : {"auto", "numba", "numpy"}
        See :func:`solve_minimal`.

    Returns
    -------
    tensors : (K, 2, 2, 2, 2) ndarray
        Every real tensor of every sample, pixel coordinates, unit Frobenius norm.
    owner : (K,) int ndarray
        The row of ``samples`` each tensor comes from.

    Examples
    --------
    >>> from xslit.synthetic import random_two_slit_camera, random_points_in_front
    >>> rng = np.random.default_rng(2)
    >>> cam1, cam2 = random_two_slit_camera(rng), random_two_slit_camera(rng)
    >>> X = random_points_in_front([cam1, cam2], 40, rng)
    >>> idx = np.stack([rng.choice(40, 13, replace=False) for _ in range(3)])
    >>> tensors, owner = minimal_hypotheses(cam1.project(X), cam2.project(X), idx, rng=0)
    >>> tensors.shape[1:], bool(np.all(np.diff(owner) >= 0))
    ((2, 2, 2, 2), True)
    """
    p1 = check_image_points("points1", points1, min_count=MIN_MINIMAL_POINTS)
    p2 = check_image_points("points2", points2)
    if p2.shape != p1.shape:
        raise ValueError(f"points2 must have the shape of points1 {p1.shape}, got {p2.shape}")
    idx = check_index_array("samples", samples)
    if idx.ndim != 2 or idx.shape[1] != MIN_MINIMAL_POINTS:
        raise ValueError(f"samples must have shape (B, 13), got {idx.shape}")
    if idx.size and (idx.min() < 0 or idx.max() >= len(p1)):
        raise ValueError(f"samples must hold indices in [0, {len(p1)}), got "
                         f"[{idx.min()}, {idx.max()}]")
    _kernels(backend)
    if len(idx) == 0:
        return np.zeros((0, 2, 2, 2, 2)), np.zeros(0, dtype=np.int64)
    sol = solve_minimal(p1[idx], p2[idx], rng=rng, backend=backend)
    return sol.tensors, sol.sample.astype(np.int64)
