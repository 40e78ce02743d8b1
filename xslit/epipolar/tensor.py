r"""The :math:`2 \times 2 \times 2 \times 2` epipolar tensor of two two-slit cameras (Theorem 1).

Convention: ``F[i, j, k, l]`` with 0-based indices is the paper's
:math:`f_{(i+1)(j+1)(k+1)(l+1)}`, and matching pixels :math:`(x, y) \leftrightarrow (x', y')`
satisfy (eq. (22))

.. math::

    \sum_{ijkl} F_{ijkl}\, [x, 1]_i\, [y, 1]_j\, [x', 1]_k\, [y', 1]_l = 0 .

Its entries are (eq. (23), 0-based rows)

.. math::

    F_{ijkl} = (-1)^{i+j+k+l} \det\big[(A_1)_{1-i}^T, (A_2)_{1-j}^T, (B_1)_{1-k}^T,
    (B_2)_{1-l}^T\big] .
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from .. import _jit
from .._checks import check_batch, check_image_points, check_point_pair
from .._scratch import Scratch

__all__ = [
    "INDEX",
    "SampsonRows",
    "contract_modes",
    "design_matrix",
    "epipolar_tensor",
    "evaluate_tensor",
    "kron_modes",
    "sampson_distance",
    "sampson_distance_batch",
    "sampson_distance_op",
    "sampson_distance_pairs",
    "sampson_jacobian_op",
    "sampson_operator",
    "sampson_rows_into",
    "tensor_gradient",
]

#: All 16 multi-indices (i, j, k, l) in C order, matching ``F.reshape(16)``.
INDEX = np.array(list(itertools.product((0, 1), repeat=4)))


def epipolar_tensor(A1, A2, B1, B2) -> np.ndarray:
    """Epipolar tensor of cameras ``(A1, A2)`` and ``(B1, B2)`` (eq. (23)).

    Parameters
    ----------
    A1, A2, B1, B2 : (..., 2, 4) array_like
        Validated projection matrices (leading dimensions broadcast, for batches).

    Returns
    -------
    F : (..., 2, 2, 2, 2) ndarray

    Examples
    --------
    The appendix example (eq. (50)):

    >>> A1 = [[-1, 7, 4, 0], [8, -1, 13, 4]]; A2 = [[11, 6, -2, 4], [8, -1, 13, -5]]
    >>> B1 = [[14, 9, -3, 8], [0, 0, 0, 1]]; B2 = [[-3, 8, 10, 3], [6, 13, 5, 13]]
    >>> np.round(epipolar_tensor(A1, A2, B1, B2)[0, 0]).astype(int)
    array([[     0,      0],
           [ 21816, -25650]])
    """
    names = ("A1", "A2", "B1", "B2")
    mats = [check_batch(n, a, (2, 4)) for n, a in zip(names, (A1, A2, B1, B2), strict=True)]
    try:
        shape = np.broadcast_shapes(*(m.shape for m in mats))[:-2]
    except ValueError as exc:
        raise ValueError("A1, A2, B1 and B2 must have broadcastable batch shapes, got "
                         f"{', '.join(str(m.shape) for m in mats)}") from exc
    mats = [np.broadcast_to(m, (*shape, 2, 4)) for m in mats]
    rows = np.stack([m[..., 1 - INDEX[:, p], :] for p, m in enumerate(mats)], axis=-1)
    # rows: (..., 16, 4, 4) with the chosen rows as columns.
    sign = (-1.0) ** INDEX.sum(axis=1)
    F = sign * np.linalg.det(rows)
    return F.reshape((*shape, 2, 2, 2, 2))


def _lift(points1, points2):
    """The four ``(N, 2)`` vectors ``[x, 1], [y, 1], [x', 1], [y', 1]``."""
    one = np.ones(len(points1))
    return (np.stack([points1[:, 0], one], 1), np.stack([points1[:, 1], one], 1),
            np.stack([points2[:, 0], one], 1), np.stack([points2[:, 1], one], 1))


def _kron_rows(p, q, r, s) -> np.ndarray:
    """Row-wise ``kron(p, q, r, s)`` of four ``(N, 2)`` arrays, (N, 16), by broadcasting."""
    n = len(p)
    pq = (p[:, :, None] * q[:, None, :]).reshape(n, 4)
    rs = (r[:, :, None] * s[:, None, :]).reshape(n, 4)
    return (pq[:, :, None] * rs[:, None, :]).reshape(n, 16)


def design_matrix(points1, points2) -> np.ndarray:
    """Rows ``kron([x,1], [y,1], [x',1], [y',1])``: ``design @ F.ravel()`` is eq. (22), (N, 16).

    Parameters
    ----------
    points1, points2 : (N, 2) array_like
    """
    return _kron_rows(*_lift(*check_point_pair("points1", points1, "points2", points2)))


def evaluate_tensor(F, points1, points2) -> np.ndarray:
    """Algebraic residual of eq. (22) for each correspondence; ``F`` may be batched
    ``(B, 2, 2, 2, 2)``.

    Returns
    -------
    e : (N,) or (B, N) ndarray
    """
    F = check_batch("F", F, (2, 2, 2, 2))
    a, b, c, d = _lift(*check_point_pair("points1", points1, "points2", points2))
    return np.einsum("...ijkl,ni,nj,nk,nl->...n", F, a, b, c, d, optimize=True)


def tensor_gradient(F, points1, points2):
    """Residual and its gradient with respect to ``(x, y, x', y')``.

    Returns
    -------
    e : (..., N) ndarray
    grad : (..., N, 4) ndarray
    """
    F = check_batch("F", F, (2, 2, 2, 2))
    points1, points2 = check_point_pair("points1", points1, "points2", points2)
    lead, n = F.shape[:-4], len(points1)
    e, grad = SampsonRows(points1, points2).residual_and_gradient(F.reshape(-1, 16))
    return e.reshape(*lead, n), np.moveaxis(grad, 0, -1).reshape(*lead, n, 4)


def sampson_distance(F, points1, points2) -> np.ndarray:
    r"""First-order geometric distance (Sampson) of correspondences to eq. (22), in pixels.

    .. math:: d = \frac{|e|}{\|\nabla e\|}, \qquad
              \nabla e = \Big(\frac{\partial e}{\partial x}, \frac{\partial e}{\partial y},
              \frac{\partial e}{\partial x'}, \frac{\partial e}{\partial y'}\Big)

    is the length of the smallest 4D displacement of ``(x, y, x', y')`` that satisfies the
    linearised constraint; for small noise of standard deviation :math:`\sigma` per coordinate
    it is distributed as :math:`\sigma |\mathcal{N}(0, 1)|`.

    Parameters
    ----------
    F : (2, 2, 2, 2) or (B, 2, 2, 2, 2) array_like
    points1, points2 : (N, 2) ndarray

    Returns
    -------
    d : (N,) or (B, N) ndarray
        ``inf`` where the gradient vanishes but the residual does not.
    """
    F = check_batch("F", F, (2, 2, 2, 2))
    points1, points2 = check_point_pair("points1", points1, "points2", points2)
    d = SampsonRows(points1, points2).distances(F.reshape(-1, 16))
    return d.reshape(*F.shape[:-4], len(points1))


def sampson_distance_pairs(F, points1, points2) -> np.ndarray:
    """:func:`sampson_distance` of every pairing of ``points1`` with ``points2``.

    The residual of the pair ``(m, n)`` is ``[x_m y_m, x_m, y_m, 1] M [x'_n y'_n, x'_n, y'_n, 1]``
    with ``M`` the 4 x 4 unfolding of ``F``; it and its four derivatives are five small matrix
    products, so all ``N1 N2`` pairs cost about as much as ``N1 + N2`` points (used to measure
    how often a wrong pairing fits by chance).

    Parameters
    ----------
    F : (2, 2, 2, 2) array_like
    points1 : (N1, 2) ndarray
    points2 : (N2, 2) ndarray

    Returns
    -------
    d : (N1, N2) ndarray
    """
    M = check_batch("F", F, (2, 2, 2, 2), batched=False).reshape(4, 4)
    points1 = check_image_points("points1", points1)
    points2 = check_image_points("points2", points2)
    return _pair_distances(M, *_lifted_rows(points1), *_lifted_rows(points2))


def _pair_distances(M, x, y, a, xp, yp, c) -> np.ndarray:
    """:func:`sampson_distance_pairs` of the 4 x 4 unfolding ``M`` from the coordinates and
    lifted rows (:func:`_lifted_rows`) of both sides."""
    kernel = _compiled_sampson_pairs() if _jit.USE_NUMBA else None
    if kernel is not None:  # the same operations, pair by pair in one pass
        d = a.T @ M @ c
        kernel(d, M.T @ a, M @ c, x, y, xp, yp)
        return d
    aM, Mc = (M.T @ a)[:, :, None], (M @ c)[:, None, :]  # (4, N1, 1), (4, 1, N2)
    return _sampson_kernel(a.T @ M @ c, aM, Mc, x[:, None], y[:, None], xp, yp)[0]


def contract_modes(F, T1, T2, T3, T4) -> np.ndarray:
    r"""Change of image coordinates: :math:`F'_{ijkl} = \sum F_{abcd} T_{1,ai} T_{2,bj}
    T_{3,ck} T_{4,dl}`.

    If pixels are normalised by ``[x_n, 1] = T [x, 1]`` on each axis, the tensor of the
    original pixels is ``contract_modes(F_n, T1, T2, T3, T4)``: each tensor mode is contracted
    with its axis' 2x2 matrix, since each mode is linear in ``[x, 1]`` of one axis. Works on batches ``(..., 2, 2, 2, 2)``.

    Parameters
    ----------
    F : (..., 2, 2, 2, 2) array_like
    T1, T2, T3, T4 : (..., 2, 2) array_like
    """
    F = check_batch("F", F, (2, 2, 2, 2))
    T1, T2, T3, T4 = (check_batch(n, T, (2, 2)) for n, T in
                      (("T1", T1), ("T2", T2), ("T3", T3), ("T4", T4)))
    f = F.reshape(*F.shape[:-4], 16) @ kron_modes(T1, T2, T3, T4)
    return f.reshape(F.shape)


def kron_modes(T1, T2, T3, T4) -> np.ndarray:
    """``kron(T1, T2, T3, T4)`` of 2x2 matrices (or batches ``(..., 2, 2)``): ``(..., 16, 16)``.

    ``contract_modes(F, T1, T2, T3, T4).ravel() = F.ravel() @ kron_modes(T1, T2, T3, T4)``.
    """
    def k2(A, B):
        A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
        n = A.shape[-1] * B.shape[-1]
        K = A[..., :, None, :, None] * B[..., None, :, None, :]
        return K.reshape(*K.shape[:-4], n, n)

    return k2(k2(T1, T2), k2(T3, T4))


def sampson_operator(points1, points2) -> np.ndarray:
    """Precomputed linear maps giving the residual and its gradient for any tensor.

    Returns
    -------
    G : (5, N, 16) ndarray
        ``G[0] @ F.ravel()`` is the residual of eq. (22) and ``G[1:] @ F.ravel()`` its
        derivatives with respect to ``x, y, x', y'``: scoring M tensors is one matrix product.
    """
    p1, p2 = np.asarray(points1, dtype=float), np.asarray(points2, dtype=float)
    n = len(p1)
    # kron([x,1],[y,1]) = [xy, x, y, 1] and its x and y derivatives [y, 1, 0, 0], [x, 0, 1, 0]
    # for each image; G[k] is the row-wise product of a left and a right factor.
    left = np.zeros((5, n, 4))
    right = np.zeros((5, n, 4))
    for out, (x, y), rows in ((left, p1.T, (0, 3, 4)), (right, p2.T, (0, 1, 2))):
        out[rows, :, 0] = x * y
        out[rows, :, 1] = x
        out[rows, :, 2] = y
        out[rows, :, 3] = 1.0
    left[1, :, 0], left[1, :, 1] = p1[:, 1], 1.0
    left[2, :, 0], left[2, :, 2] = p1[:, 0], 1.0
    right[3, :, 0], right[3, :, 1] = p2[:, 1], 1.0
    right[4, :, 0], right[4, :, 2] = p2[:, 0], 1.0
    return (left[..., :, None] * right[..., None, :]).reshape(5, n, 16)


def _lifted_rows(points):
    """Coordinates ``x, y`` (copies) of ``points`` (N, 2) and the rows
    ``kron([x, 1], [y, 1]) = [xy, x, y, 1]`` as ``(4, N)``."""
    p = np.asarray(points, dtype=float)
    x, y = p[:, 0].copy(), p[:, 1].copy()
    return x, y, np.array([x * y, x, y, np.ones_like(x)])


class SampsonRows:
    r"""Sampson distances of many tensors on fixed correspondences, without a design matrix.

    With :math:`a = [xy, x, y, 1]` and :math:`c = [x'y', x', y', 1]` (kept as ``(4, N)`` rows)
    and ``M`` the 4 x 4 unfolding of ``F``, the residual is :math:`e = a^T M c` and its
    gradient is read off :math:`a^T M` and :math:`M c`:
    :math:`\partial_x e = (Mc)_0 y + (Mc)_1`, :math:`\partial_y e = (Mc)_0 x + (Mc)_2`, and
    the same for :math:`x', y'` from :math:`a^T M`. Two small matrix products per tensor and a
    few vector operations, with no ``(5, N, 16)`` operator to build.

    Parameters
    ----------
    points1, points2 : (N, 2) ndarray
    """

    def __init__(self, points1, points2):
        self.x, self.y, self.a = _lifted_rows(points1)
        self.xp, self.yp, self.c = _lifted_rows(points2)
        self._scratch = Scratch()

    def subset(self, rows) -> SampsonRows:
        """The evaluator of the correspondences ``rows`` (indices or a boolean mask)."""
        sub = object.__new__(SampsonRows)
        sub.x, sub.y, sub.xp, sub.yp = self.x[rows], self.y[rows], self.xp[rows], self.yp[rows]
        sub.a, sub.c = self.a[:, rows], self.c[:, rows]
        sub._scratch = Scratch()
        return sub

    def pair_distances(self, F, rows1, rows2) -> np.ndarray:
        """:func:`sampson_distance_pairs` of ``F`` ``(2, 2, 2, 2)`` on the points ``rows1`` of
        image 1 paired with the points ``rows2`` of image 2 (indices), from the rows kept here
        (the same numbers): ``(len(rows1), len(rows2))``."""
        M = np.asarray(F, dtype=float).reshape(4, 4)
        return _pair_distances(M, self.x[rows1], self.y[rows1], self.a[:, rows1],
                               self.xp[rows2], self.yp[rows2], self.c[:, rows2])

    def _products(self, F):
        """``e`` (a fresh ``(M, N)`` array) and ``a^T M``, ``M c`` (scratch, ``(M, 4, N)``)."""
        Ms = np.asarray(F, dtype=float).reshape(-1, 4, 4)
        shape = (len(Ms), 4, self.a.shape[1])
        aM = np.matmul(np.swapaxes(Ms, 1, 2), self.a, out=self._scratch.get("aM", shape))
        Mc = np.matmul(Ms, self.c, out=self._scratch.get("Mc", shape))
        return np.einsum("mkn,kn->mn", aM, self.c), aM, Mc

    def residual_and_gradient(self, F):
        """Residuals ``(M, N)`` and gradients ``(4, M, N)`` (``x, y, x', y'``) of ``F``
        ``(M, 2, 2, 2, 2)`` or ``(M, 16)``."""
        e, aM, Mc = self._products(F)
        grad = np.stack([Mc[:, 0] * self.y + Mc[:, 1], Mc[:, 0] * self.x + Mc[:, 2],
                         aM[:, 0] * self.yp + aM[:, 1], aM[:, 0] * self.xp + aM[:, 2]])
        return e, grad

    def distances(self, F, signed: bool = False, norms: bool = False):
        """:func:`sampson_distance` of ``F`` ``(M, ...)``: ``(M, N)``, signed on request.

        With ``norms``, also the gradient norms ``|grad e|`` ``(M, N)`` (the Sampson weights
        of a linear refit).
        """
        kernel = _compiled_sampson() if _jit.USE_NUMBA else None
        if kernel is not None:
            Ms = np.ascontiguousarray(F, dtype=float).reshape(-1, 4, 4)
            shape = (len(Ms), len(self.x))
            d = np.empty(shape)
            gn = np.empty(shape) if norms else self._scratch.get("gn", shape)
            kernel(Ms, self.a, self.c, self.x, self.y, self.xp, self.yp, signed, d, gn)
            return (d, gn) if norms else d
        e, aM, Mc = self._products(F)
        d, gn = _sampson_kernel(e, np.swapaxes(aM, 0, 1), np.swapaxes(Mc, 0, 1), self.x,
                                self.y, self.xp, self.yp, signed, self._scratch)
        return (d, gn.copy()) if norms else d


def _sampson_kernel(e, aM, Mc, x, y, xp, yp, signed=False, scratch=None):
    """``e / |grad e|`` from ``e``, the components ``aM[k]`` of ``a^T M`` and ``Mc[k]`` of
    ``M c`` and the coordinates (all broadcast to the shape of ``e``; 0 where ``e`` and the
    gradient vanish): the derivatives are ``(Mc)_0 y + (Mc)_1``, ``(Mc)_0 x + (Mc)_2`` and the
    same from ``a^T M`` with ``y', x'``.

    The distances overwrite ``e`` (returned); the gradient norms, also returned, and the
    temporaries live in ``scratch`` (a fresh :class:`~xslit._scratch.Scratch` by default).
    With numba, :meth:`SampsonRows.distances` computes the same numbers point by point in one
    compiled pass (:func:`sampson_rows_into`), products included.
    """
    scratch = Scratch() if scratch is None else scratch
    t, gn = scratch.get("t", e.shape), scratch.get("gn", e.shape)
    np.multiply(Mc[0], y, out=t)
    t += Mc[1]
    np.multiply(t, t, out=gn)
    for u, v, w in ((Mc[0], x, Mc[2]), (aM[0], yp, aM[1]), (aM[0], xp, aM[2])):
        np.multiply(u, v, out=t)
        t += w
        t *= t
        gn += t
    np.sqrt(gn, out=gn)
    if not signed:
        np.abs(e, out=e)
    with np.errstate(divide="ignore", invalid="ignore"):
        e /= gn
    e[np.isnan(e)] = 0.0
    return e, gn


def sampson_rows_into(Ms, a, c, x, y, xp, yp, signed, d, gn):  # pragma: no cover - compiled
    """Sampson distances of the tensors ``Ms`` (M, 4, 4) (unfoldings) on the rows ``a``, ``c``
    (4, N) of :class:`SampsonRows` and the coordinates ``x, y, x', y'`` (N,), point by point
    in one pass: the distances (signed with ``signed``) go to ``d`` and the gradient norms to
    ``gn`` (M, N).

    A kernel for numba's nopython mode (compiled by :func:`_compiled_sampson`, and by other
    modules' kernels that call it): :func:`_sampson_kernel`'s numbers from the products of
    each ``Ms[m]`` with the rows.
    """
    for m in range(Ms.shape[0]):
        M = Ms[m]
        for n in range(a.shape[1]):
            a0, a1, a2, a3 = a[0, n], a[1, n], a[2, n], a[3, n]
            c0, c1, c2, c3 = c[0, n], c[1, n], c[2, n], c[3, n]
            aM0 = a0 * M[0, 0] + a1 * M[1, 0] + a2 * M[2, 0] + a3 * M[3, 0]
            aM1 = a0 * M[0, 1] + a1 * M[1, 1] + a2 * M[2, 1] + a3 * M[3, 1]
            aM2 = a0 * M[0, 2] + a1 * M[1, 2] + a2 * M[2, 2] + a3 * M[3, 2]
            aM3 = a0 * M[0, 3] + a1 * M[1, 3] + a2 * M[2, 3] + a3 * M[3, 3]
            Mc0 = M[0, 0] * c0 + M[0, 1] * c1 + M[0, 2] * c2 + M[0, 3] * c3
            Mc1 = M[1, 0] * c0 + M[1, 1] * c1 + M[1, 2] * c2 + M[1, 3] * c3
            Mc2 = M[2, 0] * c0 + M[2, 1] * c1 + M[2, 2] * c2 + M[2, 3] * c3
            e = aM0 * c0 + aM1 * c1 + aM2 * c2 + aM3 * c3
            t0 = Mc0 * y[n] + Mc1
            t1 = Mc0 * x[n] + Mc2
            t2 = aM0 * yp[n] + aM1
            t3 = aM0 * xp[n] + aM2
            g = np.sqrt(t0 * t0 + t1 * t1 + t2 * t2 + t3 * t3)
            if not signed:
                e = abs(e)
            r = e / g
            d[m, n] = 0.0 if r != r else r
            gn[m, n] = g


def _nb_sampson_pairs(e, aM, Mc, x, y, xp, yp):  # pragma: no cover - compiled
    """:func:`_sampson_kernel` on the pairs of :func:`sampson_distance_pairs` (for numba,
    :func:`_compiled_sampson_pairs`): the residuals ``e`` (N1, N2) are overwritten with the
    distances, from ``a^T M`` (4, N1), ``M c`` (4, N2) and the coordinates of both sides,
    with the numpy kernel's operations in its order (the same numbers)."""
    for i in range(e.shape[0]):
        for j in range(e.shape[1]):
            t = Mc[0, j] * y[i] + Mc[1, j]
            g = t * t
            t = Mc[0, j] * x[i] + Mc[2, j]
            g += t * t
            t = aM[0, i] * yp[j] + aM[1, i]
            g += t * t
            t = aM[0, i] * xp[j] + aM[2, i]
            g += t * t
            r = abs(e[i, j]) / np.sqrt(g)
            e[i, j] = 0.0 if r != r else r


@functools.cache
def _compiled_sampson_pairs():
    """The compiled :func:`_nb_sampson_pairs`, or None when numba cannot be imported."""
    return (_nb_sampson_pairs if _jit.compile_kernels(globals(), ("_nb_sampson_pairs",))
            else None)


@functools.cache
def _compiled_sampson():
    """The compiled :func:`sampson_rows_into`, or None when numba cannot be imported (compiled
    on the first call, cached on disk)."""
    return (sampson_rows_into if _jit.compile_kernels(globals(), ("sampson_rows_into",))
            else None)


def sampson_distance_op(G, F, signed: bool = False) -> np.ndarray:
    """:func:`sampson_distance` from a :func:`sampson_operator`, for ``F`` of shape (M, 2, 2, 2, 2).

    With ``signed`` the residual keeps its sign (``e / |grad e|``), a smooth function for
    least squares.

    Returns
    -------
    d : (M, N) ndarray
    """
    Fm = np.asarray(F, dtype=float).reshape(-1, 16)
    R = Fm @ G.transpose(0, 2, 1)  # (5, M, N): BLAS products, model-major output
    gn2 = R[1] * R[1]
    for k in (2, 3, 4):
        gn2 += R[k] * R[k]
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = (R[0] if signed else np.abs(R[0])) / np.sqrt(gn2)
    dist[np.isnan(dist)] = 0.0
    return dist


def sampson_jacobian_op(G, f):
    r"""Signed Sampson distances and their derivatives with respect to the tensor entries,
    from a :func:`sampson_operator` ``G`` (whose gradient rows may be scaled per axis).

    .. math:: \frac{\partial}{\partial f}\,\frac{e}{g}
              = \frac{G_0}{g} - \frac{e}{g^3} \sum_{k=1}^{4} (G_k f)\, G_k,
              \qquad e = G_0 f, \quad g^2 = \sum_{k=1}^{4} (G_k f)^2

    Parameters
    ----------
    G : (5, N, 16) ndarray
    f : (M, 16) ndarray

    Returns
    -------
    d : (M, N) ndarray
    J : (M, N, 16) ndarray
    """
    n = G.shape[1]
    R = np.swapaxes((G.reshape(-1, 16) @ f.T).reshape(5, n, -1), 1, 2)  # (5, M, N)
    g2 = np.maximum(np.einsum("kmn,kmn->mn", R[1:], R[1:]), 1e-300)
    g = np.sqrt(g2)
    d = R[0] / g
    coef = -(R[0] / (g2 * g))[:, None, :] * np.swapaxes(R[1:], 0, 1)  # (M, 4, N)
    J = G[0][None] / g[..., None] + np.einsum("mkn,knj->mnj", coef, G[1:])
    return d, J


def sampson_distance_batch(G, F, signed: bool = False) -> np.ndarray:
    """:func:`sampson_distance` of a batch of tensors from a :func:`sampson_operator`, as one
    matrix product ``(K P, 16) x (16, 5 N)`` (or one per operator).

    Parameters
    ----------
    G : (5, N, 16) or (K, 5, N, 16) ndarray
        The operator shared by all tensors, or one per row of ``F`` (e.g. a different subset
        of the correspondences for each).
    F : (K, P, 16) ndarray
        ``P`` tensors per row.
    signed : bool
        Keep the sign of the residual (``e / |grad e|``), a smooth function for least squares.

    Returns
    -------
    d : (K, P, N) ndarray
        0 where the residual and its gradient vanish.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p1, p2, F = rng.normal(size=(6, 2)), rng.normal(size=(6, 2)), rng.normal(size=(1, 2, 16))
    >>> d = sampson_distance_batch(sampson_operator(p1, p2), F)
    >>> bool(np.allclose(d[0], sampson_distance(F[0].reshape(2, 2, 2, 2, 2), p1, p2)))
    True
    """
    G = np.ascontiguousarray(G, dtype=float)
    F = np.asarray(F, dtype=float)
    if G.ndim not in (3, 4) or G.shape[-3] != 5 or G.shape[-1] != 16:
        raise ValueError(f"G must have shape (5, N, 16) or (K, 5, N, 16), got {G.shape}")
    if F.ndim != 3 or F.shape[-1] != 16 or (G.ndim == 4 and len(F) != len(G)):
        want = "(K, P, 16)" if G.ndim == 3 else f"({len(G)}, P, 16)"
        raise ValueError(f"F must have shape {want}, got {F.shape}")
    K, P = F.shape[:2]
    if G.ndim == 3:
        R = (F.reshape(K * P, 16) @ G.reshape(-1, 16).T).reshape(K, P, 5, -1)
    else:
        R = (F @ np.swapaxes(G.reshape(len(G), -1, 16), 1, 2)).reshape(K, P, 5, -1)
    g = R[:, :, 1:]
    gn = np.sqrt(np.einsum("kpcn,kpcn->kpn", g, g))
    with np.errstate(divide="ignore", invalid="ignore"):
        d = (R[:, :, 0] if signed else np.abs(R[:, :, 0])) / gn
    d[np.isnan(d)] = 0.0
    return d
