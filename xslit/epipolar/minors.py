r"""Camera configurations from an epipolar tensor via principal minors (Theorem 1, appendix C).

In the projective frame where the first rows of :math:`A_1, A_2, B_1, B_2` are
:math:`e_1, \dots, e_4` and their second rows are the rows of a :math:`4 \times 4` matrix
:math:`C` (eq. (24)),

.. math:: F_{ijkl} = (-1)^{|S|} \det C[S, S], \qquad S = \{m : \text{index}_m = 1\}

with the paper's 1-based indices (0 in this module's 0-based ``F[i, j, k, l]``; the supplement's
sentence states the selection the other way round, but its algorithm and printed example agree
with this one). All matrices with the same principal minors are
:math:`D^{-1} C D` and :math:`D^{-1} C^T D` (Lin and Sturmfels): two projective configurations.

The appendix algorithm fixes :math:`c_{12} = c_{13} = c_{14} = 1`, reads the diagonal and the
first column linearly, and each pair :math:`(c_{pq}, c_{qp})` from a quadratic: 8 candidates;
the unused entries :math:`f_{1111}, f_{2111}` select the two consistent ones.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from .. import _jit
from .._checks import check_batch

__all__ = [
    "balance_matrix",
    "cameras_from_matrix",
    "candidate_matrices",
    "matrix_from_cameras",
    "minor_tables",
    "minors_into",
    "normalize_matrix_gauge",
    "principal_minor_jacobian",
    "principal_minor_tensor",
    "recover_configurations",
]

_SUBSETS = np.array(list(itertools.product((0, 1), repeat=4)))  # F index (i, j, k, l)


def _check_C(value, *, complex_ok: bool = False) -> np.ndarray:
    """``C`` as a finite ``(..., 4, 4)`` float64 array (complex128 too when ``complex_ok``)."""
    if complex_ok:
        try:
            a = np.asarray(value)
        except (ValueError, TypeError):
            a = None
        if a is not None and a.dtype.kind == "c":
            if a.ndim < 2 or a.shape[-2:] != (4, 4):
                raise ValueError(f"C must have shape (..., 4, 4), got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise ValueError("C must be finite, got NaN or inf entries")
            return a.astype(complex, copy=False)
    return check_batch("C", value, (4, 4))


def _minor_index():
    """Per size k = 1..4: the positions in ``F.ravel()`` of the minors of that size, their
    signs and the index sets ``S`` (m_k, k)."""
    out = []
    for k in range(1, 5):
        pos, sets = [], []
        for n, idx in enumerate(_SUBSETS):
            S = np.flatnonzero(idx == 0)
            if len(S) == k:
                pos.append(n)
                sets.append(S)
        out.append((np.array(pos), (-1.0) ** k, np.array(sets)))
    return out


_MINOR_INDEX = _minor_index()


def principal_minor_tensor(C) -> np.ndarray:
    """The tensor ``F[i,j,k,l] = (-1)^|S| det C[S, S]`` with ``S = {m : index_m = 0}``.

    Each signed minor is a polynomial in the entries of ``C`` (Leibniz's formula); all of them
    are one product of the 64 monomials with their signed coefficients
    (:func:`principal_minor_jacobian` shares the monomials).

    Parameters
    ----------
    C : (..., 4, 4) array_like
        Real or complex.

    Returns
    -------
    F : (..., 2, 2, 2, 2) ndarray, with ``F[1, 1, 1, 1] = 1`` (the empty minor).
    """
    C = _check_C(C, complex_ok=True)
    if C.shape == (4, 4) and C.dtype == np.float64 and _jit.USE_NUMBA and _compiled_minors():
        f = np.empty(16)
        minors_into(C, _POLY_P, _POLY_A.T, _POLY_W, False, f, np.empty((16, 16)))
        return f.reshape(2, 2, 2, 2)
    x = _monomial_factors(C)
    f = (x[..., 0] * x[..., 1] * x[..., 2] * x[..., 3]) @ _POLY_A.T
    f[..., 15] = 1.0
    return f.reshape((*f.shape[:-1], 2, 2, 2, 2))


def _monomial_factors(C) -> np.ndarray:
    """The four factors ``(..., 64, 4)`` of each monomial of the principal minors of ``C``
    (the constant 1 where a monomial has fewer than four)."""
    C = np.asarray(C)
    C = C.astype(np.result_type(C.dtype, float), copy=False)
    lead = C.shape[:-2]
    ext = np.concatenate([C.reshape(*lead, 16), np.ones((*lead, 1), C.dtype)], axis=-1)
    return ext[..., _POLY_P]


def _minor_polynomials():
    """The 16 signed principal minors as polynomials in the entries of ``C``: 64 monomials of
    at most 4 entries (``P``: flat indices, 16 for the constant 1), the matrix ``A`` (16, 64)
    of signed coefficients, and ``W`` (256, 256) mapping the leave-one-out products of the
    monomials' factors to the Jacobian."""
    import itertools as it

    P, A = [], np.zeros((16, 64))
    for pos, sign, sets in _MINOR_INDEX:
        for n, S in zip(pos, sets, strict=True):
            for perm in it.permutations(range(len(S))):
                parity = sum(1 for a in range(len(perm)) for b in range(a + 1, len(perm))
                             if perm[a] > perm[b])
                A[n, len(P)] = sign * (-1.0) ** parity
                P.append([4 * S[r] + S[perm[r]] for r in range(len(S))] + [16] * (4 - len(S)))
    P = np.array(P)
    W = np.zeros((64, 4, 16, 16))
    for t in range(64):
        for j in range(4):
            if P[t, j] < 16:
                W[t, j, P[t, j], :] += A[:, t]
    return P, A, W.reshape(256, 256)


_POLY_P, _POLY_A, _POLY_W = _minor_polynomials()


def principal_minor_jacobian(C) -> tuple[np.ndarray, np.ndarray]:
    """Principal-minor tensors of ``C`` and their derivatives with respect to its 16 entries.

    Each signed minor is a polynomial of 64 monomials in all (Leibniz's formula: ``k!`` terms
    for a ``k x k`` minor); the minors are one product of the monomials with their signed
    coefficients, and the derivatives one product of the leave-one-out products of the
    monomials' factors (the cofactors, without any factorisation: singular matrices are
    handled exactly).

    Parameters
    ----------
    C : (..., 4, 4) array_like

    Returns
    -------
    f : (..., 16) ndarray
        ``principal_minor_tensor(C)`` flattened (``f[-1] = 1``).
    J : (..., 16, 16) ndarray
        ``J[..., 4 p + q, :]`` is the derivative of ``f`` with respect to ``C[p, q]``.

    Examples
    --------
    >>> C = np.arange(16.0).reshape(4, 4) ** 0.5
    >>> f, J = principal_minor_jacobian(C)
    >>> E = np.zeros((4, 4)); E[1, 2] = 1e-6
    >>> fd = (principal_minor_tensor(C + E).ravel() - f) / 1e-6
    >>> bool(np.allclose(J[6], fd, atol=1e-6))
    True
    """
    C = _check_C(C)
    if C.shape == (4, 4) and _jit.USE_NUMBA and _compiled_minors():  # the polish's one matrix
        f, J = np.empty(16), np.empty((16, 16))
        minors_into(C, _POLY_P, _POLY_A.T, _POLY_W, True, f, J)
        return f, J
    lead = C.shape[:-2]
    x = _monomial_factors(C)
    x01, x23 = x[..., 0] * x[..., 1], x[..., 2] * x[..., 3]
    f = (x01 * x23) @ _POLY_A.T
    f[..., 15] = 1.0
    loo = np.stack([x[..., 1] * x23, x[..., 0] * x23, x01 * x[..., 3], x01 * x[..., 2]],
                   axis=-1)  # (..., 64, 4): product of the other three factors
    J = (loo.reshape(*lead, 256) @ _POLY_W).reshape(*lead, 16, 16)
    return f, J


def minor_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tables ``P``, ``AT``, ``W`` that :func:`minors_into` takes (shared: not to be
    modified): the monomials' factors (64, 4), their signed coefficients (64, 16) and the map
    of their leave-one-out products to the Jacobian (256, 256)."""
    return _POLY_P, _POLY_A.T, _POLY_W


def minors_into(C, P, AT, W, jacobian, f, J):  # pragma: no cover - compiled
    """:func:`principal_minor_tensor` of one ``C`` (4, 4) into ``f`` (16,) or, with
    ``jacobian``, :func:`principal_minor_jacobian` into ``f`` and ``J`` (16, 16): each
    function's products in its order and its two matrix products (``dgemv``, as numpy calls
    it), the same numbers bit for bit. A kernel for numba, compiled by this module
    (:func:`_compiled_minors`) and by the modules whose compiled loops evaluate minors;
    ``P, AT, W`` are :func:`minor_tables`."""
    ext = np.empty(17)
    for i in range(4):
        for j in range(4):
            ext[4 * i + j] = C[i, j]
    ext[16] = 1.0
    prod, loo = np.empty(64), np.empty(256)
    for t in range(64):
        x0, x1, x2, x3 = ext[P[t, 0]], ext[P[t, 1]], ext[P[t, 2]], ext[P[t, 3]]
        if jacobian:
            x01, x23 = x0 * x1, x2 * x3
            prod[t] = x01 * x23
            loo[4 * t], loo[4 * t + 1] = x1 * x23, x0 * x23
            loo[4 * t + 2], loo[4 * t + 3] = x01 * x3, x01 * x2
        else:
            prod[t] = x0 * x1 * x2 * x3
    f[:] = np.dot(prod, AT)
    f[15] = 1.0
    if jacobian:
        J[:] = np.dot(loo, W).reshape(16, 16)


@functools.cache
def _compiled_minors():
    """The compiled :func:`minors_into`, or None when numba cannot be imported."""
    return minors_into if _jit.compile_kernels(globals(), ("minors_into",)) else None


def cameras_from_matrix(C) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The canonical cameras of eq. (24): ``A1 = [e1; c1], A2 = [e2; c2], B1 = [e3; c3],
    B2 = [e4; c4]``.

    Parameters
    ----------
    C : (4, 4) array_like
    """
    C = check_batch("C", C, (4, 4), batched=False)
    E = np.eye(4)
    return tuple(np.stack([E[m], C[m]]) for m in range(4))


#: :func:`matrix_from_cameras` refuses first rows whose matrix (rows scaled to unit length)
#: has a condition number beyond this: the frame then multiplies rounding errors by as much
#: (a nearly pure translation, rotations 1e-10 apart, gave a tensor 1.0 from the cameras' in
#: projective distance at 2.7e10).
FRAME_CONDITION = 1e8
#: :func:`matrix_from_cameras` refuses a pair whose smallest of ``|c12|, |c13|, |c14|`` in the
#: canonical frame is at most this fraction of the largest entry of ``C`` (no usable gauge).
GAUGE_TOLERANCE = 1e-6


def matrix_from_cameras(A1, A2, B1, B2) -> np.ndarray:
    """``C`` of a camera pair in the canonical frame (eq. (24)), gauge ``c12 = c13 = c14 = 1``.

    The frame is ``H = inv([A1[0]; A2[0]; B1[0]; B2[0]])``; raises ValueError when those four
    rows are dependent or nearly so (:data:`FRAME_CONDITION`; the canonical frame does not
    exist), or when one of ``c12, c13, c14`` of the matrix in that frame is zero or nearly so
    (:data:`GAUGE_TOLERANCE`; the gauge does not exist, or scales the entries beyond what
    double precision holds: e.g. ``A1 = [f 0 0 0; 0 0 1 0]`` with a second row that has no
    component on the frame's second axis).

    Parameters
    ----------
    A1, A2, B1, B2 : (2, 4) array_like
    """
    A1, A2, B1, B2 = (check_batch(n, a, (2, 4), batched=False) for n, a in
                      (("A1", A1), ("A2", A2), ("B1", B1), ("B2", B2)))
    rows = np.stack([A1[0], A2[0], B1[0], B2[0]])
    cond = np.linalg.cond(rows / np.linalg.norm(rows, axis=1, keepdims=True))
    if not cond < FRAME_CONDITION:
        raise ValueError(f"A1, A2, B1 and B2 must have independent first rows, got nearly "
                         f"dependent ones (condition number {cond:.3g}: the canonical frame of "
                         "eq. (24) does not exist, or loses the tensor's digits)")
    Hinv = np.linalg.inv(rows)
    C = np.stack([A1[1], A2[1], B1[1], B2[1]]) @ Hinv
    # Gauges with c1j near zero scale C's entries by 1 / c1j and its minors by up to the
    # fourth power: at 1e-9 relative the tensor of the matrix lost all its digits.
    first = np.abs(C[0, 1:])
    if first.min() <= GAUGE_TOLERANCE * np.abs(C).max():
        raise ValueError(f"A1, A2, B1 and B2 must give c12, c13, c14 != 0 in the canonical "
                         f"frame of eq. (24), got {C[0, 1:].tolist()} for entries up to "
                         f"{np.abs(C).max():.3g} (the gauge c12 = c13 = c14 = 1 does not exist "
                         "or loses the tensor's digits)")
    return normalize_matrix_gauge(C)


def normalize_matrix_gauge(C) -> np.ndarray:
    """The representative ``D^{-1} C D`` with ``c12 = c13 = c14 = 1`` (batched ``(..., 4, 4)``).

    Where one of ``c12, c13, c14`` is zero the gauge does not exist, and that representative
    holds inf or NaN.

    Parameters
    ----------
    C : (..., 4, 4) array_like
    """
    C = _check_C(C)
    dvec = np.ones(C.shape[:-1])
    # Where c1j = 0 the gauge does not exist: the representative is inf or NaN.
    with np.errstate(divide="ignore", invalid="ignore"):
        dvec[..., 1:] = 1.0 / C[..., 0, 1:]
        return C * dvec[..., None, :] / dvec[..., :, None]


def balance_matrix(C) -> np.ndarray:
    """The diagonal similarity ``D^{-1} C D`` with balanced row and column norms.

    Same principal minors, same projective configuration (``D`` rescales the world frame and
    each camera), but much better conditioned cameras than the gauge ``c12 = c13 = c14 = 1``
    when the four denominator planes are nearly parallel (LAPACK's balancing, no permutation).
    """
    from scipy.linalg import matrix_balance

    B, _ = matrix_balance(check_batch("C", C, (4, 4), batched=False), permute=False)
    return B


def _quadratic_roots(a, b, c):
    """Both real roots of ``a z^2 + b z + c`` (batched); complex pairs give their real part,
    a vanishing ``a`` gives the linear root twice."""
    disc = b * b - 4 * a * c
    sq = np.sqrt(np.maximum(disc, 0.0))
    # Numerically stable form: q = -(b + sign(b) sq) / 2, roots q / a and c / q.
    sgn = np.where(b >= 0, 1.0, -1.0)
    q = -0.5 * (b + sgn * sq)
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = q / a
        r2 = c / q
        lin = -c / b
    small_a = np.abs(a) < 1e-14 * (np.abs(b) + np.abs(c) + 1e-300)
    r1 = np.where(small_a, lin, r1)
    r2 = np.where(small_a, lin, np.where(q == 0, r1, r2))
    return np.stack([r1, r2], axis=-1)


#: Sign ``(-1)^|S|`` of each entry of ``F.ravel()`` as a principal minor (``S``: the zero
#: indices), and which root of each quadratic the 8 candidates take (pairs (1, 2), (1, 3), (2, 3)).
_MINOR_SIGN = (-1.0) ** np.count_nonzero(_SUBSETS == 0, axis=1)
_ROOT_CHOICE = dict(zip(((1, 2), (1, 3), (2, 3)),
                        np.array(list(itertools.product((0, 1), repeat=3))).T, strict=True))


def _flat_index(S) -> int:
    """Position in ``F.ravel()`` of the principal minor ``det C[S, S]`` (1-based ``S``)."""
    idx = [1, 1, 1, 1]
    for s in S:
        idx[s - 1] = 0
    return 8 * idx[0] + 4 * idx[1] + 2 * idx[2] + idx[3]


def candidate_matrices(F, residuals: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    r"""The 8 candidate matrices :math:`C` of the appendix algorithm, with their residuals.

    Parameters
    ----------
    F : (..., 2, 2, 2, 2) array_like
        Any scale; it is normalised to ``F[1, 1, 1, 1] = 1`` (the empty minor). Leading axes
        are a batch (one vectorised pass for several tensors, e.g. one tensor read off in
        several frames).
    residuals : bool
        Whether to compute the residuals (a third of the cost; a caller that ranks the
        candidates by another cost can skip them).

    Returns
    -------
    C : (..., 8, 4, 4) ndarray
        In the gauge ``c12 = c13 = c14 = 1``. Rows with non-finite entries mean the tensor is
        degenerate for this gauge (a division by zero).
    residual : (..., 8) ndarray, or None without ``residuals``
        Relative mismatch of the two unused entries :math:`f_{1111}, f_{2111}` (all 16 entries
        are compared; the 14 used ones match by construction on exact input).
    """
    F = check_batch("F", F, (2, 2, 2, 2))
    lead = F.shape[:-4]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f = F.reshape(*lead, 16) / F[..., 1, 1, 1, 1, None]
    signed = f * _MINOR_SIGN  # principal minor det C[S, S] at the flat index of S
    kernel = _compiled_candidates() if _jit.USE_NUMBA and not residuals else None
    if kernel is not None:  # the same operations, tensor by tensor in one call
        Cs = np.empty((*lead, 8, 4, 4))
        kernel(np.ascontiguousarray(signed).reshape(-1, 16), _CANDIDATE_MINORS, _CANDIDATE_ROOTS,
               Cs.reshape(-1, 8, 4, 4))
        return Cs, None

    def m(*S):  # principal minor det C[S, S] from F (1-based S)
        return signed[..., _flat_index(S)]

    c = np.full((*lead, 4, 4), np.nan)
    c[..., 0, 1:] = 1.0
    for p in range(4):
        c[..., p, p] = m(p + 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for p in (1, 2, 3):
            c[..., p, 0] = (c[..., 0, 0] * c[..., p, p] - m(1, p + 1)) / c[..., 0, p]
        Cs = np.repeat(c[..., None, :, :], 8, axis=-3)
        for p, q in ((1, 2), (1, 3), (2, 3)):
            P = c[..., p, p] * c[..., q, q] - m(p + 1, q + 1)  # c_pq c_qp
            r = (m(1, p + 1, q + 1) - c[..., 0, 0] * m(p + 1, q + 1)
                 + c[..., 0, p] * c[..., p, 0] * c[..., q, q]
                 + c[..., 0, q] * c[..., p, p] * c[..., q, 0])
            # c1q cp1 z^2 - r z + c1p cq1 P = 0 for z = c_qp; then c_pq = P / z.
            z = _quadratic_roots(c[..., 0, q] * c[..., p, 0], -r,
                                 c[..., 0, p] * c[..., q, 0] * P)[..., _ROOT_CHOICE[(p, q)]]
            Cs[..., q, p] = z
            Cs[..., p, q] = P[..., None] / z
        if not residuals:
            return Cs, None
        pred = principal_minor_tensor(np.nan_to_num(Cs, nan=0.0, posinf=0.0, neginf=0.0))
        res = (np.linalg.norm(pred.reshape(*lead, 8, 16) - f[..., None, :], axis=-1)
               / np.linalg.norm(f, axis=-1)[..., None])
    res[~np.isfinite(Cs).all(axis=(-2, -1))] = np.inf
    return Cs, res


#: For :func:`_nb_candidates`: the flat indices in ``F.ravel()`` of the minors ``m(p + 1)``
#: (p = 0..3), ``m(1, p + 1)`` (p = 1..3, at 4 + p), and, per pair ``(p, q)`` of
#: ``_ROOT_CHOICE`` (k = 0..2), ``m(p + 1, q + 1)`` and ``m(1, p + 1, q + 1)`` (at 8 + 2k and
#: 9 + 2k); the root each candidate takes per pair (3, 8).
_CANDIDATE_MINORS = np.array(
    [_flat_index((p + 1,)) for p in range(4)] + [0]
    + [_flat_index((1, p + 1)) for p in (1, 2, 3)]
    + [i for p, q in _ROOT_CHOICE for i in (_flat_index((p + 1, q + 1)),
                                            _flat_index((1, p + 1, q + 1)))])
_CANDIDATE_ROOTS = np.array([_ROOT_CHOICE[pq] for pq in ((1, 2), (1, 3), (2, 3))])


def _nb_candidates(signed, minors, roots, Cs):  # pragma: no cover - compiled
    """:func:`candidate_matrices` without residuals from the signed minors ``signed`` (B, 16),
    into ``Cs`` (B, 8, 4, 4), with the numpy code's operations in its order (the same
    numbers; for numba, :func:`_compiled_candidates`). ``minors`` and ``roots``:
    :data:`_CANDIDATE_MINORS`, :data:`_CANDIDATE_ROOTS`."""
    pairs = ((1, 2), (1, 3), (2, 3))
    c = np.empty((4, 4))
    for t in range(signed.shape[0]):
        m = signed[t]
        c[:] = np.nan
        c[0, 1:] = 1.0
        for p in range(4):
            c[p, p] = m[minors[p]]
        for p in range(1, 4):
            c[p, 0] = (c[0, 0] * c[p, p] - m[minors[4 + p]]) / c[0, p]
        for k in range(8):
            Cs[t, k] = c
        for j in range(3):
            p, q = pairs[j]
            mpq, m1pq = m[minors[8 + 2 * j]], m[minors[9 + 2 * j]]
            P = c[p, p] * c[q, q] - mpq
            r = (m1pq - c[0, 0] * mpq + c[0, p] * c[p, 0] * c[q, q]
                 + c[0, q] * c[p, p] * c[q, 0])
            # _quadratic_roots(a, b, cc), operation by operation
            a, b, cc = c[0, q] * c[p, 0], -r, c[0, p] * c[q, 0] * P
            disc = b * b - 4 * a * cc
            if disc == disc and not disc > 0.0:  # np.maximum(disc, 0.0)
                disc = 0.0
            sq = np.sqrt(disc)
            sgn = 1.0 if b >= 0 else -1.0
            qq = -0.5 * (b + sgn * sq)
            r1 = qq / a
            r2 = cc / qq
            lin = -cc / b
            small_a = abs(a) < 1e-14 * (abs(b) + abs(cc) + 1e-300)
            if small_a:
                r1 = lin
                r2 = lin
            elif qq == 0:
                r2 = r1
            for k in range(8):
                z = r1 if roots[j, k] == 0 else r2
                Cs[t, k, q, p] = z
                Cs[t, k, p, q] = P / z


@functools.cache
def _compiled_candidates():
    """The compiled :func:`_nb_candidates`, or None when numba cannot be imported."""
    return _nb_candidates if _jit.compile_kernels(globals(), ("_nb_candidates",)) else None


def recover_configurations(F):
    """The two projective camera configurations compatible with ``F`` (Theorem 1).

    Returns the two candidates of smallest residual (on exact input they reproduce all 16
    entries; they are related by :math:`C \\to C^T` up to diagonal similarity).

    Parameters
    ----------
    F : (2, 2, 2, 2) array_like

    Returns
    -------
    configurations : list of two tuples ``(A1, A2, B1, B2)`` of (2, 4) arrays
    matrices : (2, 4, 4) ndarray
        Their matrices :math:`C`.
    residuals : (2,) ndarray

    Raises
    ------
    ValueError
        When ``F`` is not a finite (2, 2, 2, 2) real array, or ``F[1, 1, 1, 1]`` (the paper's
        :math:`f_{2222}`) vanishes or no candidate is finite: the tensor is degenerate for
        the algorithm's gauge.

    Examples
    --------
    The appendix example (eq. (51)):

    >>> from xslit.epipolar.tensor import epipolar_tensor
    >>> F = epipolar_tensor([[-1, 7, 4, 0], [8, -1, 13, 4]], [[11, 6, -2, 4], [8, -1, 13, -5]],
    ...                     [[14, 9, -3, 8], [0, 0, 0, 1]], [[-3, 8, 10, 3], [6, 13, 5, 13]])
    >>> _, C, _ = recover_configurations(F)
    >>> np.round(C[:, 1], 2)  # second rows of A2 in the two configurations, in some order
    array([[-14.22,   8.33,  -6.67, -22.17],
           [-14.22,   8.33,   9.25,   4.24]])
    """
    F = check_batch("F", F, (2, 2, 2, 2), batched=False)
    if abs(F[1, 1, 1, 1]) <= 1e-12 * np.abs(F).max():
        raise ValueError("F: the entry f_2222 (F[1, 1, 1, 1]) vanishes, so the principal-minor "
                         "recovery with c12 = c13 = c14 = 1 is undefined for this tensor")
    Cs, res = candidate_matrices(F)
    order = np.argsort(res, kind="stable")
    if not np.isfinite(res[order[0]]):
        raise ValueError("F: no finite camera configuration (a zero pivot in the principal-minor "
                         "recovery; the tensor is degenerate)")
    best = order[:2]
    # Present the pair in a deterministic order (by the (2, 3) entry).
    best = best[np.argsort(Cs[best, 1, 2])]
    return [cameras_from_matrix(Cs[n]) for n in best], Cs[best], res[best]
