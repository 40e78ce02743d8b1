r"""Maximum-likelihood polishing of an epipolar tensor on the variety of epipolar tensors.

A linear estimate (section 4, "Linear SfM") lives in the 15-dimensional projective space of
all :math:`2 \times 2 \times 2 \times 2` tensors; the epipolar tensors of camera pairs form a
13-dimensional variety in it: the signed principal minors of a :math:`4 \times 4` matrix
:math:`C` (Theorem 1 and its proof in appendix C),

.. math:: F_{ijkl} = (-1)^{|S|} \det C[S, S], \qquad S = \{m : \text{index}_m = 1\},

where :math:`C` is defined up to a diagonal similarity :math:`D^{-1} C D` (3 degrees of
freedom: 16 - 3 = 13). :func:`refine_on_variety` minimises the sum of squared Sampson
distances (in pixels) of the inliers over :math:`C`, so the returned tensor is exactly the
tensor of a camera pair and fits the data as well as that model allows.

Starts matter: the Sampson cost has local minima, and the two candidates of the appendix
algorithm that reproduce the unused entries of a *linear* estimate best are not always in
the basin of the optimum (a linear estimate is off the variety). All eight candidate matrices
of the algorithm are read off in several affine frames of the image axes (each shift of the
origin gives a different principal-minor read-off of the same tensor) and ranked by their
Sampson cost on a few of the inliers; the best are polished, and the winner is chosen by its
cost.

The polish is Levenberg--Marquardt with a small initial damping: near the optimum it takes
Gauss--Newton steps, which converge in two to four iterations where a strongly damped start
crawls along the weakly determined directions of :math:`C` for tens of iterations. Its
normal equations cost one ``16 x n`` product per iteration: the derivative of a Sampson
distance with respect to the tensor is a sum of two Kronecker products of 4-vectors
(:meth:`_Residuals.normal_equations`), so neither the ``(5, n, 16)`` operator of
:func:`~xslit.epipolar.tensor.sampson_operator` nor the ``n x 16`` Jacobian in :math:`C` is
formed. With many inliers the polish starts on a random subset of them and finishes on all.

Residuals are evaluated in centred and scaled image coordinates (per axis) with the gradient
converted back to pixels, so the distances are in pixels and no precision is lost on large
pixel offsets.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .. import _jit
from .._scratch import Scratch
from .linear import normalize_axes
from .minors import (
    candidate_matrices,
    minor_tables,
    minors_into,
    principal_minor_jacobian,
    principal_minor_tensor,
)
from .tensor import kron_modes

__all__ = ["VarietyFit", "refine_on_variety"]

#: Affine frames (shifts of the origin, in units of each axis' spread) in which the candidate
#: matrices are read off: the empty minor ``f_2222`` is the residual of the correspondence at
#: the origin, small when the origin nearly corresponds (the centroids of both images often
#: do), and each frame gives different starts.
_FRAME_SHIFTS = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [3.0, 0.0, 0.0, -3.0],
                          [0.0, 3.0, -3.0, 3.0]])

#: Inlier rows on which the candidate starts are ranked.
_RANKING_ROWS = 128


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
    #: The polish's principal-minor matrix ``C`` (4, 4), the tensor map of the affine frame it
    #: was read off in (16, 16) and the per-axis normalisation of the pixels (4, 2, 2): a later
    #: polish of another inlier set continues from them (``refine_on_variety(start=...)``).
    matrix: np.ndarray | None = None
    frame_map: np.ndarray | None = None
    normalization: np.ndarray | None = None


class _Residuals:
    r"""Signed Sampson distances in pixels of tensors given in normalised coordinates, and
    the Gauss--Newton normal equations of their squares.

    With :math:`a = [xy, x, y, 1]`, :math:`c = [x'y', x', y', 1]` (normalised coordinates)
    and ``M`` the 4 x 4 unfolding of ``f``, the residual is :math:`e = a^T M c = (a \otimes
    c)^T f`; its derivatives along the axes are read off :math:`a^T M` and :math:`M c`
    (:class:`~xslit.epipolar.tensor.SampsonRows`) and converted to pixels by the axis scales
    ``s_k`` (``x_n = s (x - m)`` gives ``de/dx = s de/dx_n``). The distance is
    :math:`d = e / g` with :math:`g^2 = \sum_k s_k^2 e_k^2`, and

    .. math:: \frac{\partial d}{\partial f} = \frac{1}{g}\Big(a \otimes c
              - \frac{e}{g^2} \sum_k s_k^2 e_k\, \partial_k (a \otimes c)\Big)
              = u \otimes c + a \otimes v,

    since the derivatives of ``a`` (along ``x, y``) and of ``c`` (along ``x', y'``) touch one
    factor each: ``u`` and ``v`` are 4-vectors per correspondence.
    """

    def __init__(self, normalized, scales):
        x, y, xp, yp = (np.ascontiguousarray(v, dtype=float) for v in normalized)
        self.x, self.y, self.xp, self.yp = x, y, xp, yp
        self.s2 = np.square(np.asarray(scales, dtype=float))
        self._scratch = Scratch()

    # The rows a and c (4, n) are built on first use: the compiled distances do not read them,
    # and the evaluator of all correspondences, built by every polish, only gives distances.
    @functools.cached_property
    def a(self) -> np.ndarray:
        """The rows ``[xy, x, y, 1]`` (4, n)."""
        return np.stack([self.x * self.y, self.x, self.y, np.ones_like(self.x)])

    @functools.cached_property
    def c(self) -> np.ndarray:
        """The rows ``[x'y', x', y', 1]`` (4, n)."""
        return np.stack([self.xp * self.yp, self.xp, self.yp, np.ones_like(self.xp)])

    def __len__(self):
        return len(self.x)

    def subset(self, rows) -> _Residuals:
        """The evaluator of the correspondences ``rows`` (indices). It shares the scratch
        buffers (results are fresh arrays, so evaluators used in turn do not interfere): the
        polish makes a new evaluator for each inlier set and calls it only a few times, and
        fresh buffers would cost their page faults every time."""
        sub = _Residuals((self.x[rows], self.y[rows], self.xp[rows], self.yp[rows]),
                         np.sqrt(self.s2))
        sub._scratch = self._scratch
        return sub

    def _parts(self, f):
        """Residuals ``e`` and squared pixel gradient norms ``g^2`` (fresh, ``(B, n)``) of
        tensors ``f`` ``(B, 16)``, and the derivatives ``e_x, e_y, e_x', e_y'`` in normalised
        coordinates (scratch)."""
        M = f.reshape(-1, 4, 4)
        shape = (len(M), 4, len(self.x))
        aM = np.matmul(np.swapaxes(M, 1, 2), self.a, out=self._scratch.get("aM", shape))
        Mc = np.matmul(M, self.c, out=self._scratch.get("Mc", shape))
        e = np.einsum("bkn,kn->bn", aM, self.c)
        grads = self._scratch.get("grads", (4, *shape[::2]))
        g2 = np.zeros(e.shape)
        for k, (u, v, w) in enumerate(((Mc[:, 0], self.y, Mc[:, 1]), (Mc[:, 0], self.x, Mc[:, 2]),
                                       (aM[:, 0], self.yp, aM[:, 1]),
                                       (aM[:, 0], self.xp, aM[:, 2]))):
            gk = np.multiply(u, v, out=grads[k])
            gk += w
            g2 += self.s2[k] * gk * gk
        np.maximum(g2, 1e-300, out=g2)
        return e, g2, grads

    def distances(self, f) -> np.ndarray:
        """Signed distances ``(B, n)`` of tensors ``f`` ``(B, 16)``."""
        if _jit.USE_NUMBA and _compiled_residuals() is not None:
            Ms = np.ascontiguousarray(f, dtype=float).reshape(-1, 4, 4)
            d = np.empty((len(Ms), len(self.x)))
            _nb_distances(Ms, self.x, self.y, self.xp, self.yp, _NO_ROWS, _NO_ROWS, self.s2, d)
            return d
        e, g2, _ = self._parts(np.asarray(f, dtype=float))
        np.sqrt(g2, out=g2)
        e /= g2
        return e

    def evaluate(self, f):
        """Signed distances ``(n,)`` of one tensor ``f`` ``(16,)``, and the parts of their
        normal equations (:meth:`normal_equations` of the same ``f`` takes them instead of
        evaluating the tensor again; valid until this evaluator or one sharing its scratch
        is called again). The parts are None with the compiled kernel, whose normal
        equations evaluate the tensor again in the same pass."""
        if _jit.USE_NUMBA and _compiled_residuals() is not None:
            return self.distances(np.asarray(f, dtype=float).reshape(1, 16))[0], None
        parts = self._parts(np.asarray(f, dtype=float).reshape(1, 16))
        return parts[0][0] / np.sqrt(parts[1][0]), parts

    def normal_equations(self, f, parts=None):
        """Signed distances ``d`` ``(n,)`` of one tensor ``f`` ``(16,)``, and ``J^T J`` (16, 16)
        and ``J^T d`` (16,) with ``J`` ``(n, 16)`` their derivatives with respect to ``f``
        (from ``parts`` of :meth:`evaluate` of ``f`` when given)."""
        kernel = _compiled_residuals() if _jit.USE_NUMBA else None
        if kernel is not None:
            n = len(self.x)
            d = np.empty(n)
            J = self._scratch.get("J", (16, n))
            kernel(np.ascontiguousarray(f, dtype=float).reshape(4, 4), self.x, self.y, self.xp,
                   self.yp, self.a, self.c, self.s2, True, d, self._scratch.get("W", (7, n)), J)
            return d, J @ J.T, J @ d
        if parts is None:
            parts = self._parts(np.asarray(f, dtype=float).reshape(1, 16))
        e, g2, grads = parts
        e, g2, (ex, ey, exp, eyp) = e[0], g2[0], grads[:, 0]
        n = len(e)
        ig = 1.0 / np.sqrt(g2)
        d = e * ig
        w = d * ig * ig  # e / g^3
        px, py = (self.s2[0] * w) * ex, (self.s2[1] * w) * ey
        u, v = self._scratch.get("u", (4, n)), self._scratch.get("v", (4, n))
        # u = a / g - (e / g^3) (s_x^2 e_x [y, 1, 0, 0] + s_y^2 e_y [x, 0, 1, 0])
        np.multiply(self.x, ig, out=u[1])
        u[1] -= px
        np.multiply(self.y, ig, out=u[2])
        u[2] -= py
        np.multiply(self.y, u[1], out=u[0])  # xy / g - px y - py x
        u[0] -= py * self.x
        u[3] = ig
        # v = -(e / g^3) (s_x'^2 e_x' [y', 1, 0, 0] + s_y'^2 e_y' [x', 0, 1, 0])
        np.multiply(exp, -self.s2[2] * w, out=v[1])
        np.multiply(eyp, -self.s2[3] * w, out=v[2])
        np.multiply(self.yp, v[1], out=v[0])
        v[0] += v[2] * self.xp
        v[3] = 0.0
        J = np.multiply(u[:, None], self.c[None], out=self._scratch.get("J", (4, 4, n)))
        J += np.multiply(self.a[:, None], v[None], out=self._scratch.get("Jv", (4, 4, n)))
        J = J.reshape(16, n)
        return d, J @ J.T, J @ d


#: Stands for the rows ``a`` and ``c`` in the compiled distances, which do not read them.
_NO_ROWS = np.empty((4, 0))
_NO_ROWS.flags.writeable = False


def _nb_point(m, s, xn, yn, xpn, ypn):  # pragma: no cover - compiled
    """The residual, its derivatives along ``x, y, x', y'`` (normalised coordinates) and the
    squared gradient norm in pixels (floored at 1e-300) of one correspondence, for the
    entries ``m`` (16-tuple, row-major) of ``M`` and the squared axis scales ``s`` (4-tuple)."""
    a0, c0 = xn * yn, xpn * ypn
    aM0 = a0 * m[0] + xn * m[4] + yn * m[8] + m[12]
    aM1 = a0 * m[1] + xn * m[5] + yn * m[9] + m[13]
    aM2 = a0 * m[2] + xn * m[6] + yn * m[10] + m[14]
    aM3 = a0 * m[3] + xn * m[7] + yn * m[11] + m[15]
    Mc0 = m[0] * c0 + m[1] * xpn + m[2] * ypn + m[3]
    Mc1 = m[4] * c0 + m[5] * xpn + m[6] * ypn + m[7]
    Mc2 = m[8] * c0 + m[9] * xpn + m[10] * ypn + m[11]
    e = aM0 * c0 + aM1 * xpn + aM2 * ypn + aM3
    ex = Mc0 * yn + Mc1
    ey = Mc0 * xn + Mc2
    exp = aM0 * ypn + aM1
    eyp = aM0 * xpn + aM2
    g2 = max(s[0] * ex * ex + s[1] * ey * ey + s[2] * exp * exp + s[3] * eyp * eyp, 1e-300)
    return e, ex, ey, exp, eyp, g2


def _nb_residuals(M, x, y, xp, yp, a, c, s2, jacobian, d, W, J):  # pragma: no cover
    """:meth:`_Residuals.distances` of one tensor ``M`` (4, 4) point by point into ``d``
    (n,), or with ``jacobian`` the distances and the Jacobian rows ``J`` (16, n) of
    :meth:`_Residuals.normal_equations` (the same operations; for numba,
    :func:`_compiled_residuals`): the factors ``u`` and ``v`` of each row ``u (x) c +
    a (x) v`` first (into ``W`` (7, n)), then the rows one by one from them and the rows
    ``a``, ``c`` (4, n) (two simple loops, which the compiler vectorises, where one loop
    writing 17 arrays per point is not)."""
    m = (M[0, 0], M[0, 1], M[0, 2], M[0, 3], M[1, 0], M[1, 1], M[1, 2], M[1, 3],
         M[2, 0], M[2, 1], M[2, 2], M[2, 3], M[3, 0], M[3, 1], M[3, 2], M[3, 3])
    s = (s2[0], s2[1], s2[2], s2[3])
    n_points = x.shape[0]
    if not jacobian:
        for n in range(n_points):
            e, _, _, _, _, g2 = _nb_point(m, s, x[n], y[n], xp[n], yp[n])
            d[n] = e / np.sqrt(g2)
        return
    for n in range(n_points):
        xn, yn, xpn, ypn = x[n], y[n], xp[n], yp[n]
        e, ex, ey, exp, eyp, g2 = _nb_point(m, s, xn, yn, xpn, ypn)
        ig = 1.0 / np.sqrt(g2)
        dn = e * ig
        d[n] = dn
        w = dn * ig * ig
        px, py = (s[0] * w) * ex, (s[1] * w) * ey
        u1 = xn * ig - px
        u2 = yn * ig - py
        W[0, n] = yn * u1 - py * xn
        W[1, n] = u1
        W[2, n] = u2
        W[3, n] = ig
        v1 = exp * (-s[2] * w)
        v2 = eyp * (-s[3] * w)
        W[4, n] = ypn * v1 + v2 * xpn
        W[5, n] = v1
        W[6, n] = v2
    # Row 4 i + j of J is u_i c_j + a_i v_j, and u_i where c_3 = 1, v_3 = 0.
    for i in range(4):
        for j in range(3):
            r = 4 * i + j
            for n in range(n_points):
                J[r, n] = W[i, n] * c[j, n] + a[i, n] * W[4 + j, n]
        for n in range(n_points):
            J[4 * i + 3, n] = W[i, n]


def _nb_distances(Ms, x, y, xp, yp, a, c, s2, d):  # pragma: no cover - compiled
    """:func:`_nb_residuals` of each tensor ``Ms[b]`` (B, 4, 4), distances only, into ``d``
    (B, n): one call for a batch of tensors (the ranking of the starts)."""
    none = np.empty((0, 0))
    for b in range(Ms.shape[0]):
        _nb_residuals(Ms[b], x, y, xp, yp, a, c, s2, False, d[b], none, none)


@functools.cache
def _compiled_residuals():
    """The compiled :func:`_nb_residuals`, or None when numba cannot be imported (compiled on
    the first call, cached on disk)."""
    names = ("_nb_point", "_nb_residuals", "_nb_distances")
    return _nb_residuals if _jit.compile_kernels(globals(), names) else None


def _balance(C):
    """A diagonal similarity of each ``C`` (batched) with balanced off-diagonal row and column
    norms: the same principal minors, better conditioned steps."""
    if _jit.USE_NUMBA and _compiled_balance() is not None:
        out = np.array(C, dtype=float)
        _nb_balance(out.reshape(-1, 4, 4))
        return out
    with np.errstate(divide="ignore", invalid="ignore"):  # r / c where r or c vanishes
        for _ in range(3):
            off = C * _OFF_DIAGONAL
            r = np.sqrt(np.einsum("bij,bij->bi", off, off))
            c = np.sqrt(np.einsum("bji,bji->bi", off, off))
            d = np.sqrt(np.where((r > 0) & (c > 0), r / c, 1.0))
            d = np.minimum(np.maximum(np.where(np.isfinite(d), d, 1.0), 1e-6), 1e6)
            C = C * d[:, None, :] / d[:, :, None]
    return C


#: Mask of the off-diagonal entries of a 4 x 4 matrix (:func:`_balance`).
_OFF_DIAGONAL = 1.0 - np.eye(4)


def _nb_balance(C):  # pragma: no cover - compiled
    """:func:`_balance` of each ``C[b]`` (B, 4, 4) in place (for numba,
    :func:`_compiled_balance`), with the numpy code's operations in its order: the squared
    off-diagonal entries of a row summed as numpy's einsum sums a contiguous row of four,
    ``(s0 + s2) + (s1 + s3)``, those of a column in order (bit for bit the numpy path's
    numbers with numpy 2.4 on x86-64; to rounding wherever einsum sums otherwise)."""
    s = np.empty((4, 4))
    r = np.empty(4)
    c = np.empty(4)
    d = np.empty(4)
    for b in range(C.shape[0]):
        M = C[b]
        for _ in range(3):
            for i in range(4):
                for j in range(4):
                    v = M[i, j] * (0.0 if i == j else 1.0)  # C * _OFF_DIAGONAL
                    s[i, j] = v * v
            for i in range(4):
                r[i] = np.sqrt((s[i, 0] + s[i, 2]) + (s[i, 1] + s[i, 3]))
                c[i] = np.sqrt(((s[0, i] + s[1, i]) + s[2, i]) + s[3, i])
            for i in range(4):
                di = np.sqrt(r[i] / c[i]) if r[i] > 0 and c[i] > 0 else 1.0
                if not np.isfinite(di):
                    di = 1.0
                d[i] = min(max(di, 1e-6), 1e6)
            for i in range(4):
                for j in range(4):
                    M[i, j] = M[i, j] * d[j] / d[i]


@functools.cache
def _compiled_balance():
    """The compiled :func:`_nb_balance`, or None when numba cannot be imported."""
    return _nb_balance if _jit.compile_kernels(globals(), ("_nb_balance",)) else None


def _levenberg_marquardt(res, C, K, iterations):
    """Levenberg--Marquardt on one ``C`` (4, 4) minimising the squared distances of ``res`` of
    the tensor ``minors(C) @ K`` (``K`` (16, 16), frame to normalised coordinates). Returns
    ``C`` and its cost.

    The damping starts at ``1e-9`` of the diagonal (a Gauss--Newton step, kept only when it
    lowers the cost) and grows tenfold per rejected step. The three directions of the
    diagonal similarity leave the cost unchanged; the damping keeps the system regular and
    their step components at rounding level. Converged when a step gains less than a
    thousandth of the mean squared distance (the optimum's own statistical uncertainty is of
    the order of that mean per degree of freedom), or when the Gauss--Newton model predicts a
    gain below that (the step is then not taken).

    With numba the whole loop is one compiled call (:func:`_nb_levenberg_marquardt`), equal
    to rounding (numba's LAPACK solve rounds otherwise than numpy's); a singular or
    non-finite system, which it cannot solve, is left to the loop here (least squares).
    """
    if _jit.USE_NUMBA and _compiled_polish():
        n, out = len(res), np.empty((4, 4))
        scratch = res._scratch
        try:
            cost = _nb_levenberg_marquardt(
                np.ascontiguousarray(C, dtype=float), np.ascontiguousarray(K, dtype=float),
                res.x, res.y, res.xp, res.yp, res.s2, iterations, scratch.get("AC", (8, n)),
                scratch.get("W", (7, n)), scratch.get("J", (16, n)), *minor_tables(), out)
            return out, cost
        except np.linalg.LinAlgError:
            pass
    f, Jc = principal_minor_jacobian(C)
    d, Hf, gf = res.normal_equations(f @ K)
    cost = float(d @ d)
    tol = 1e-3 * cost / len(d)
    lam = 1e-9
    for _ in range(iterations):
        Jf = (Jc @ K).reshape(16, 16)  # rows: derivatives of the tensor by each entry of C
        H = Jf @ Hf @ Jf.T
        g = Jf @ gf
        diag = np.diag(H)
        A = H + np.diag(lam * (diag + 1e-12 * diag.max()))
        try:
            step = np.linalg.solve(A, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(A, g, rcond=None)[0]
        # A step that the quadratic model says gains less than the tolerance is not worth
        # evaluating (its gain would be below it too, and the polish ends there anyway).
        if 2.0 * (step @ g) - step @ H @ step <= tol:
            break
        Cn = C - step.reshape(4, 4)
        # The parts of the step's distances also give its normal equations when it is kept.
        dn, parts = res.evaluate(principal_minor_tensor(Cn).reshape(16) @ K)
        new = float(dn @ dn)
        if not new < cost:  # also NaN
            lam *= 10.0
            if lam > 1e8:
                break
            continue
        converged = cost - new <= tol
        C, cost, lam = Cn, new, lam / 10.0
        if converged:
            break
        f, Jc = principal_minor_jacobian(C)
        d, Hf, gf = res.normal_equations(f @ K, parts)
    return C, cost


def _nb_levenberg_marquardt(C, K, x, y, xp, yp, s2, iterations, AC, W, J, P, AT, PW,
                            out):  # pragma: no cover - compiled
    """:func:`_levenberg_marquardt` of ``C`` (4, 4) in one call, into ``out`` (4, 4); returns
    the cost (for numba, :func:`_compiled_polish`). The same steps: the minors and their
    Jacobian by :func:`~xslit.epipolar.minors.minors_into` (``P, AT, PW`` its tables), the
    distances and Jacobian rows by :func:`_nb_residuals` (the rows ``a``, ``c`` of
    :class:`_Residuals` built into ``AC`` (8, n); ``W``, ``J`` scratch), numba's products and
    solve (a singular or non-finite system raises LinAlgError)."""
    n = x.shape[0]
    for i in range(n):
        AC[0, i], AC[1, i], AC[2, i], AC[3, i] = x[i] * y[i], x[i], y[i], 1.0
        AC[4, i], AC[5, i], AC[6, i], AC[7, i] = xp[i] * yp[i], xp[i], yp[i], 1.0
    a, c = AC[:4], AC[4:]
    f, Jc = np.empty(16), np.empty((16, 16))
    fn, unused = np.empty(16), np.empty((16, 16))
    d, dn = np.empty(n), np.empty(n)
    none = np.empty((0, 0))
    out[:] = C
    minors_into(out, P, AT, PW, True, f, Jc)
    _nb_residuals(np.dot(f, K).reshape(4, 4), x, y, xp, yp, a, c, s2, True, d, W, J)
    Hf, gf = np.dot(J, J.T), np.dot(J, d)
    cost = np.dot(d, d)
    tol = 1e-3 * cost / n
    lam = 1e-9
    A = np.empty((16, 16))
    for _ in range(iterations):
        Jf = np.dot(Jc, K)
        H = np.dot(np.dot(Jf, Hf), Jf.T)
        g = np.dot(Jf, gf)
        top = H[0, 0]
        for i in range(1, 16):
            top = max(top, H[i, i])
        A[:] = H
        for i in range(16):
            A[i, i] = H[i, i] + lam * (H[i, i] + 1e-12 * top)
        step = np.linalg.solve(A, g)
        if 2.0 * np.dot(step, g) - np.dot(np.dot(step, H), step) <= tol:
            break
        Cn = out - step.reshape(4, 4)
        minors_into(Cn, P, AT, PW, False, fn, unused)
        _nb_residuals(np.dot(fn, K).reshape(4, 4), x, y, xp, yp, a, c, s2, False, dn, none,
                      none)
        new = np.dot(dn, dn)
        if not new < cost:  # also NaN
            lam *= 10.0
            if lam > 1e8:
                break
            continue
        converged = cost - new <= tol
        out[:] = Cn
        cost, lam = new, lam / 10.0
        if converged:
            break
        minors_into(out, P, AT, PW, True, f, Jc)
        _nb_residuals(np.dot(f, K).reshape(4, 4), x, y, xp, yp, a, c, s2, True, d, W, J)
        Hf, gf = np.dot(J, J.T), np.dot(J, d)
    return cost


@functools.cache
def _compiled_polish() -> bool:
    """Compile :func:`_nb_levenberg_marquardt` (with the minors' kernel it calls; the
    module's names then hold the compiled kernels); False when numba cannot be imported."""
    if _compiled_residuals() is None:
        return False
    return _jit.compile_kernels(globals(), ("minors_into", "_nb_levenberg_marquardt"))


def _shift_maps(shift):
    """The four maps ``[x + shift_k, 1] = S_k [x, 1]``, (4, 2, 2)."""
    S = np.tile(np.eye(2), (4, 1, 1))
    S[:, 0, 1] = shift
    return S


#: The tensor maps of the frames in which the starts are read off, and their inverses
#: (read-only: a fit's ``frame_map`` is one of them).
_FRAMES = np.stack([kron_modes(*_shift_maps(shift)) for shift in _FRAME_SHIFTS])
_FRAMES_INV = np.linalg.inv(_FRAMES)
_FRAMES.flags.writeable = False


def _starts(f_n):
    """Candidate matrices (balanced) for the normalised tensor ``f_n`` and the indices of
    their frames in :data:`_FRAMES`."""
    fg = f_n @ _FRAMES_INV  # (frames, 16)
    use = np.abs(fg[:, -1]) >= 1e-10 * np.abs(fg).max(axis=1)
    if not use.any():
        return np.zeros((0, 4, 4)), np.zeros(0, np.intp)
    # (frames, 8, 4, 4), ranked by their Sampson cost (not the read-off's residuals)
    C, _ = candidate_matrices(fg[use].reshape(-1, 2, 2, 2, 2), residuals=False)
    flat = C.reshape(*C.shape[:-2], 16)
    with np.errstate(invalid="ignore"):
        good = np.isfinite(flat).all(axis=-1) & (np.abs(flat).max(axis=-1) < 1e8)
    # The frame of each good candidate: its row of ``good`` indexes the frames used.
    return _balance(C[good]), np.flatnonzero(use)[np.nonzero(good)[0]]


def _distinct_best(costs, tensors, count):
    """Indices of the ``count`` best starts by ``costs`` with distinct ``tensors`` (B, 16):
    ``C`` and its transposed twin ``D^{-1} C^T D``, both among the candidates, have the
    same principal minors.

    One matrix read off in several frames has one cost up to rounding, and its polish in
    each frame can stop at another point (or in another basin, on few correspondences):
    costs within :data:`_SAME_COST` of the one before them in cost count as equal and the
    first read off goes first (:func:`_ranked_starts`), so that the choice does not follow
    the rounding of the data's normalisation."""
    unit = None  # the unit tensors, compared from the second start kept on
    keep = []
    for b in _ranked_starts(costs):
        if not math.isfinite(costs[b]):
            break
        if keep and unit is None:
            unit = tensors / np.linalg.norm(tensors, axis=1, keepdims=True)
        if all(min(np.linalg.norm(unit[b] - unit[k]), np.linalg.norm(unit[b] + unit[k])) > 1e-8
               for k in keep):
            keep.append(b)
            if len(keep) == count:
                break
    return np.array(keep or [int(np.argmin(costs))], dtype=int)


#: Relative difference of two starts' costs below which they count as one (rounding).
_SAME_COST = 1e-9


def _ranked_starts(costs):
    """Indices of ``costs`` by increasing cost, each run of costs within a relative
    :data:`_SAME_COST` of the one before in increasing index (a cost that is not finite
    starts a run of its own); yielded run by run, so that a caller that needs the first few
    ranks only orders their runs."""
    by_cost = np.argsort(costs, kind="stable").tolist()
    value = costs.tolist()
    i = 0
    while i < len(by_cost):
        j = i + 1
        while (j < len(by_cost)
               and value[by_cost[j]] <= value[by_cost[j - 1]] * (1.0 + _SAME_COST)):
            j += 1
        yield from sorted(by_cost[i:j])
        i = j


def refine_on_variety(F, points1, points2, inliers=None, threshold=None, *, rng=0,
                      frame=None, subset_size: int = 400, n_starts: int = 1,
                      iterations: int = 20, rounds: int = 3,
                      start: VarietyFit | None = None) -> VarietyFit:
    r"""Polish a tensor (typically a linear estimate) to the maximum-likelihood tensor on the
    variety of epipolar tensors, by the Sampson distance.

    .. math:: \min_C \sum_{i \in \text{inliers}} d_i(F(C))^2, \qquad
              d_i = \frac{e_i}{\lVert \nabla e_i \rVert}

    with :math:`F(C)` the signed principal minors of :math:`C` (Theorem 1) and :math:`d_i` the
    Sampson distance of correspondence :math:`i` in pixels.

    Parameters
    ----------
    F : (2, 2, 2, 2) or (K, 2, 2, 2, 2) array_like
        Starting tensor, in pixels or in the coordinates of ``frame`` (need not be on the
        variety), or ``K`` of them whose candidate starts are ranked together (flattened
        entries, (16,) or (K, 16), are accepted too).
    points1, points2 : (N, 2) ndarray
        Correspondences, in pixels.
    inliers : (N,) bool array_like, optional
        Correspondences to fit (default all).
    threshold : float, optional
        Inlier threshold in pixels: the inlier set is re-selected from all correspondences
        after each polish (up to ``rounds``) and polished again while more than a thousandth
        of them changes. Without it, ``inliers`` is kept.
    rng : None, int or numpy.random.Generator
        Chooses the subset of the inliers on which the starts are polished first.
    frame : (4, 2, 2) array_like, optional
        Per-axis maps ``[x_f, 1] = frame[k] @ [x, 1]`` of the coordinates ``F`` is given in
        (default: pixels). A start in normalised coordinates keeps its precision when the
        pixel coordinates are large. When every map is a normalisation ``x_f = s (x - m)``
        with ``s > 0`` (as :func:`~xslit.epipolar.linear.normalize_axes` returns), the polish
        works in that frame; otherwise in the robust normalisation of the points.
    subset_size, n_starts, iterations, rounds : int
        Size of that subset (used when there are more than twice as many inliers; the polish
        is finished on all of them), distinct starts polished (the best of the candidates by
        their cost on about 128 of the inliers), iterations of Levenberg--Marquardt per polish,
        re-selections of the inlier set.
    start : VarietyFit, optional
        A fit of the same correspondences in the same ``frame`` to continue from: its
        principal-minor matrix starts the polish of ``inliers`` (``F`` is then not read
        off). A fit of a nearby inlier set is in the basin of this one's optimum, and the
        candidate starts and the subset polish are skipped. Ignored when its normalisation
        is not this call's.

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
    f = np.asarray(F, dtype=float)
    if not ((f.shape[-4:] == (2, 2, 2, 2) and f.ndim in (4, 5))
            or (f.shape[-1:] == (16,) and f.ndim in (1, 2))) or f.size == 0:
        raise ValueError("F must have shape (2, 2, 2, 2) or (K, 2, 2, 2, 2) (or flattened, "
                         f"(16,) or (K, 16)), got {f.shape}")
    f = f.reshape(-1, 16)
    if frame is not None and _is_normalization(frame):
        T = np.asarray(frame, dtype=float)
        f_n = f.copy()
        normed = T[:, 0, 0, None] * np.array([p1[:, 0], p1[:, 1], p2[:, 0], p2[:, 1]]) \
            + T[:, 0, 1, None]
    else:
        Ts, normed = normalize_axes(p1, p2, robust=True)
        T, normed = np.stack(Ts), np.stack(normed)
        # A pixel tensor is f_n @ kron(T), one in the frame f_n @ kron(T) @ kron(frame)^-1.
        if frame is None:
            X = np.linalg.inv(kron_modes(*T))
        else:
            X = kron_modes(*(np.asarray(frame, dtype=float) @ np.linalg.inv(T)))
        f_n = np.stack([g @ X for g in f])
    for g in f_n:  # one start at a time: the same numbers for one start as for several
        g /= math.sqrt(g.dot(g))  # np.linalg.norm's arithmetic
    scales = T[:, 0, 0]
    every = _Residuals(normed, scales)
    fitted = every.subset(idx)
    if (start is not None and start.matrix is not None
            and np.array_equal(start.normalization, T)):
        C, Kf = _levenberg_marquardt(fitted, start.matrix, start.frame_map, iterations)[0], \
            start.frame_map
        return _reselected(every, C, Kf, T, inl, threshold, rounds, iterations)

    C, frames = (np.concatenate(parts) for parts in zip(*map(_starts, f_n), strict=True))
    if len(C) == 0:
        raise ValueError("F: no finite principal-minor matrix in any frame (the tensor is "
                         "degenerate: it is not near the tensor of a camera pair)")
    # Starts ranked on a few inliers spread over their order, the best distinct ones polished.
    tensors = (principal_minor_tensor(C).reshape(-1, 1, 16) @ _FRAMES[frames])[:, 0]
    d0 = every.subset(idx[::max(1, len(idx) // _RANKING_ROWS)]).distances(tensors)
    keep = _distinct_best(np.einsum("bn,bn->b", d0, d0), tensors, max(n_starts, 1))
    first = fitted
    if len(idx) > 2 * subset_size:
        first = every.subset(np.sort(rng.choice(idx, subset_size, replace=False)))
    polished = [_levenberg_marquardt(first, C[b], _FRAMES[frames[b]], iterations) for b in keep]
    best = int(np.argmin([cost for _, cost in polished]))
    C, Kf = _balance(polished[best][0][None])[0], _FRAMES[frames[keep[best]]]
    if first is not fitted:
        C, _ = _levenberg_marquardt(fitted, C, Kf, iterations)
    return _reselected(every, C, Kf, T, inl, threshold, rounds, iterations)


def _reselected(every, C, Kf, T, inl, threshold, rounds, iterations) -> VarietyFit:
    """:func:`refine_on_variety`'s last step: the inliers of the polished ``C`` re-selected
    at ``threshold`` and polished again (up to ``rounds`` times), the fit in pixels."""
    for round_ in range(max(rounds, 1)):
        f = principal_minor_tensor(C).reshape(16) @ Kf  # the final C's when the loop ends
        d = np.abs(every.distances(f[None])[0])
        if threshold is None:
            break
        new = d < threshold
        # A few points at the threshold that flip (at most a thousandth of the inliers) move
        # the fit by far less than its noise: another polish would cost a full pass for it.
        changed = np.count_nonzero(new != inl)
        if (changed <= 1e-3 * np.count_nonzero(inl) or np.count_nonzero(new) < 13
                or round_ == max(rounds, 1) - 1):
            break
        inl = new
        C, _ = _levenberg_marquardt(every.subset(np.flatnonzero(new)), C, Kf, iterations)
    if threshold is not None:
        inl = d < threshold
    f = f @ _pixels_from_frame(T.tobytes())
    f /= math.sqrt(f.dot(f))  # np.linalg.norm's arithmetic
    inside = d[inl]  # np.mean's arithmetic (the pairwise sum, then the division)
    rms = float(np.sqrt(np.add.reduce(inside * inside) / len(inside))) if len(inside) else np.inf
    return VarietyFit(f.reshape(2, 2, 2, 2), d, inl, rms, C, Kf, T)


@functools.lru_cache(maxsize=8)
def _pixels_from_frame(frame_bytes) -> np.ndarray:
    """``kron_modes`` of the per-axis maps (4, 2, 2) given by their bytes (read-only): the
    polishes of one estimate share its frame, and the map is built once."""
    K = kron_modes(*np.frombuffer(frame_bytes).reshape(4, 2, 2))
    K.flags.writeable = False
    return K


def _is_normalization(frame) -> bool:
    """Whether ``frame`` (4, 2, 2) maps each axis by ``x_f = s (x - m)`` with ``s > 0``."""
    T = np.asarray(frame, dtype=float)
    return T.shape == (4, 2, 2) and _is_normalization_of(T.tobytes())


@functools.lru_cache(maxsize=8)
def _is_normalization_of(frame_bytes) -> bool:
    """:func:`_is_normalization` of the maps (4, 2, 2) given by their bytes: the polishes of
    one estimate share its frame, and it is tested once."""
    T = np.frombuffer(frame_bytes).reshape(4, 2, 2)
    return (bool(np.all(np.isfinite(T))) and bool(np.all(T[:, 0, 0] > 0))
            and bool(np.all(T[:, 1] == [0.0, 1.0])))
