"""The compiled kernels of the Sampson distances and of the polish's normal equations (numba,
the extra ``fast``) against the numpy code they replace: the same numbers up to rounding, and
the same estimates. Each test runs on both paths; the compiled one is skipped without numba."""

import os
import subprocess
import sys

import numpy as np
import pytest
from tolerances import (
    BACKENDS_AGREE,
    EXACT,
    NONZERO_RTOL,
    NULL_VECTOR_ATOL,
    NULL_VECTOR_EPS_FACTOR,
    SAME_FIT_RTOL,
)

import xslit
from xslit import _jit
from xslit._scratch import Scratch
from xslit.epipolar.linear import (
    denormalize_with,
    design_rows,
    minimal_null_vectors,
    normalize_axes,
    taubin_fit_from_design,
    weighted_leverage,
)
from xslit.epipolar.minors import (
    candidate_matrices,
    principal_minor_jacobian,
    principal_minor_tensor,
)
from xslit.epipolar.tensor import (
    SampsonRows,
    sampson_distance_op,
    sampson_distance_pairs,
    sampson_operator,
)
from xslit.epipolar.variety import refine_on_variety
from xslit.synthetic import random_two_view_scene


@pytest.fixture(params=["numpy", "numba"])
def backend(request, monkeypatch):
    """The numpy path (as without the extra ``fast``) or the compiled kernels (skipped without
    numba)."""
    if request.param == "numba":
        pytest.importorskip("numba")
        monkeypatch.setattr(_jit, "USE_NUMBA", True)
    else:
        monkeypatch.setattr(_jit, "USE_NUMBA", False)
    return request.param


def _on(backend_name, monkeypatch, call, *args):
    monkeypatch.setattr(_jit, "USE_NUMBA", backend_name == "numba")
    return call(*args)


def test_sampson_rows_match_the_operator(backend):
    """Distances (signed and not) and gradient norms of a batch, with a correspondence whose
    residual and gradient vanish (distance 0) and one whose gradient alone vanishes (inf)."""
    rng = np.random.default_rng(21)
    p1, p2 = rng.uniform(0, 900, (60, 2)), rng.uniform(0, 900, (60, 2))
    F = rng.normal(size=(4, 2, 2, 2, 2))
    F[3] = 0.0
    F[3, 1, 1, 1, 1] = 1.0  # constant residual 1, no gradient anywhere
    rows = SampsonRows(p1, p2)
    G = sampson_operator(p1, p2)
    d, gn = rows.distances(F, norms=True)
    np.testing.assert_allclose(d[:3], sampson_distance_op(G, F[:3]), rtol=EXACT)
    assert np.all(np.isinf(d[3])) and np.all(gn[3] == 0)
    grad = np.einsum("knj,mj->kmn", G[1:], F.reshape(4, 16))
    np.testing.assert_allclose(gn, np.sqrt((grad ** 2).sum(0)), rtol=EXACT)
    signed = rows.distances(F[:3], signed=True)
    np.testing.assert_allclose(signed, sampson_distance_op(G, F[:3], signed=True), rtol=EXACT)
    F[3, 1, 1, 1, 1] = 0.0  # the zero tensor: 0 / 0 is a distance of 0
    assert np.all(rows.distances(F[3:]) == 0)


def test_pair_distances_are_the_numpy_paths(monkeypatch):
    """The compiled pair-by-pair kernel of sampson_distance_pairs does the numpy kernel's
    operations in its order: the same numbers bit for bit, also where the residual and
    gradient vanish (0) or the gradient alone does (inf)."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(22)
    p1, p2 = rng.uniform(-500, 500, (37, 2)), rng.uniform(-500, 500, (41, 2))
    p1[0] = p2[0] = 0.0
    for F in (rng.normal(size=(2, 2, 2, 2)), np.eye(4).reshape(2, 2, 2, 2)):
        d = [_on(b, monkeypatch, lambda F=F: sampson_distance_pairs(F, p1, p2))
             for b in ("numpy", "numba")]
        np.testing.assert_array_equal(d[1], d[0])
    F = np.zeros((2, 2, 2, 2))
    F[1, 1, 1, 1] = 1.0  # constant residual, no gradient
    assert np.all(np.isinf(_on("numba", monkeypatch, lambda: sampson_distance_pairs(F, p1, p2))))
    F[1, 1, 1, 1] = 0.0
    assert np.all(_on("numba", monkeypatch, lambda: sampson_distance_pairs(F, p1, p2)) == 0)


def test_taubin_fits_of_rows_are_the_numpy_paths(monkeypatch):
    """The compiled Taubin fit of design rows calls the BLAS and LAPACK routines numpy and
    SciPy call, in their order: the same tensors bit for bit, and None for rows that do not
    determine the fit (all on one line of image 1: a conditioning of 0)."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(23)
    s = random_two_view_scene(4, 400)
    Ts, normed = normalize_axes(s["points1"], s["points2"], robust=True)
    design = design_rows(*normed)
    scales = np.array([T[0, 0] for T in Ts])
    K = rng.normal(size=(16, 16))
    for size in (15, 40, 399):
        rows = np.sort(rng.choice(400, size, replace=False))
        fits = [_on(b, monkeypatch, lambda rows=rows: taubin_fit_from_design(
            design, rows, scales, K, 1e-6)) for b in ("numpy", "numba")]
        np.testing.assert_array_equal(fits[1], fits[0])
    line = design.copy()
    line[:, np.r_[0:4, 8:12]] = 0.0  # y = 0 in image 1: a = [0, x, 0, 1]
    for b in ("numpy", "numba"):
        assert _on(b, monkeypatch, lambda: taubin_fit_from_design(line, np.arange(50), scales,
                                                                  K, 1e-6)) is None


def test_taubin_bases_of_rows_are_the_numpy_paths(monkeypatch):
    """The compiled Taubin basis of design rows (the polish's start): the same eigenvectors,
    eigenvalues and conditioning bit for bit as numpy and SciPy, from indices or a mask, also
    for rows that do not determine the tensor (all on one line of image 1)."""
    from xslit.epipolar.linear import taubin_basis_from_design

    pytest.importorskip("numba")
    rng = np.random.default_rng(25)
    s = random_two_view_scene(4, 400)
    Ts, normed = normalize_axes(s["points1"], s["points2"], robust=True)
    design = design_rows(*normed)
    scales = np.array([T[0, 0] for T in Ts])
    line = design.copy()
    line[:, np.r_[0:4, 8:12]] = 0.0  # y = 0 in image 1: a = [0, x, 0, 1]
    for D, rows in ((design, np.sort(rng.choice(400, 40, replace=False))),
                    (design, rng.random(400) < 0.7), (line, np.arange(50))):
        out = [_on(b, monkeypatch, lambda D=D, rows=rows: taubin_basis_from_design(
            D, rows, scales, 2)) for b in ("numpy", "numba")]
        for a, b in zip(out[1], out[0], strict=True):
            np.testing.assert_array_equal(a, b)
    assert out[0][2] < NONZERO_RTOL  # the line's rows: a conditioning of 0 to rounding


def test_principal_minors_of_one_matrix_are_the_numpy_paths(monkeypatch):
    """The compiled minors and Jacobian of one matrix (the polish's): the numpy path's
    numbers bit for bit, also for a singular matrix; batches take the numpy path."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(26)
    singular = rng.normal(size=(4, 4))
    singular[3] = singular[0] + singular[1]
    for C in (rng.normal(size=(4, 4)) * 30.0, singular):
        for call in (principal_minor_tensor, principal_minor_jacobian):
            out = [_on(b, monkeypatch, lambda C=C, call=call: call(C)) for b in ("numpy", "numba")]
            np.testing.assert_equal(out[1], out[0])


def test_minimal_null_vectors_decide_as_the_numpy_path(monkeypatch):
    """The compiled Householder reflections (the last column of Q from the reflectors alone)
    and norms of the triangular inverses (back substitution instead of numpy's inv) give
    numpy's null vectors to rounding, sign included, and bound the conditioning as numpy's
    do: the same decisions, also for samples near the tolerance and a batch with an exactly
    singular sample."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(27)
    for _ in range(20):
        D = rng.normal(size=(64, 15, 16))
        D[:8] *= np.logspace(-9, 0, 16)[rng.permutation(16)]  # conditioning near 1e-9..1e-4
        tol = 10 ** rng.uniform(-8, -4)
        out = [_on(b, monkeypatch, lambda D=D, tol=tol: minimal_null_vectors(D, tol))
               for b in ("numpy", "numba")]
        s = np.linalg.svd(D, compute_uv=False)
        bound = NULL_VECTOR_EPS_FACTOR * np.finfo(float).eps * s[:, 0] / s[:, 14]
        assert np.all(np.abs(out[1][0] - out[0][0]).max(axis=1) <= bound)
        np.testing.assert_array_equal(out[1][1], out[0][1])
    D = rng.normal(size=(64, 15, 16))
    D[3, 5] = 0.0  # a zero row: R has a zero on its diagonal
    out = [_on(b, monkeypatch, lambda: minimal_null_vectors(D, 1e-6)) for b in ("numpy", "numba")]
    np.testing.assert_array_equal(out[1][1], out[0][1])
    # Only that sample is refused: the others of its batch are measured as usual.
    assert not out[0][1][3] and out[0][1][np.arange(64) != 3].all()


def test_minimal_null_vectors_side_by_side_are_one_at_a_time(monkeypatch):
    """The samples factored side by side (one vectorised step over the batch) give the
    null vectors and decisions of one sample at a time bit for bit: full and partial batches,
    samples with a zero or repeated design row (a reflector that meets a zero column is
    skipped in its lane alone), conditioning near the tolerance; and the samples read in
    place from the design rows are the gathered matrices'."""
    pytest.importorskip("numba")
    from xslit.epipolar import linear

    monkeypatch.setattr(_jit, "USE_NUMBA", True)
    rng = np.random.default_rng(31)
    for trial in range(30):
        n = int(rng.integers(20, 200))
        rows = rng.normal(size=(n, 16)) * np.logspace(-6 * (trial % 3 == 0), 0, 16)
        rows[int(rng.integers(n))] = 0.0
        rows[:, 2] = 0.0 if trial % 4 == 0 else rows[:, 2]
        B = int(rng.integers(1, 3 * linear.NULL_LANES))
        samples = np.argsort(rng.random((B, n)), axis=1)[:, :15]
        samples[0, 1] = samples[0, 0]  # a repeated row
        tol = 10 ** rng.uniform(-8, -2)
        with monkeypatch.context() as m:
            m.setattr(linear, "NULL_LANES", 1)
            ref, ref_ok = minimal_null_vectors(rows, tol, samples)
        f, ok = minimal_null_vectors(rows, tol, samples)
        np.testing.assert_array_equal(f, ref)
        np.testing.assert_array_equal(ok, ref_ok)
        f2, ok2 = minimal_null_vectors(rows[samples], tol)
        np.testing.assert_array_equal(f2, f)
        np.testing.assert_array_equal(ok2, ok)
        with monkeypatch.context() as m:  # the numpy path gathers the samples' rows
            m.setattr(_jit, "USE_NUMBA", False)
            out = [minimal_null_vectors(rows, tol, samples),
                   minimal_null_vectors(rows[samples], tol)]
        np.testing.assert_array_equal(out[0][0], out[1][0])
        np.testing.assert_array_equal(out[0][1], out[1][1])


def test_design_rows_are_the_numpy_paths(monkeypatch):
    """The compiled rows of one-dimensional coordinates: the same products bit for bit."""
    pytest.importorskip("numba")
    coords = np.random.default_rng(25).normal(scale=300.0, size=(4, 57))
    rows = [_on(b, monkeypatch, lambda: design_rows(*coords)) for b in ("numpy", "numba")]
    np.testing.assert_array_equal(rows[1], rows[0])
    assert rows[1].flags.c_contiguous


def test_denormalizations_are_the_numpy_paths(monkeypatch):
    """The compiled map of normalised tensors to pixels: numpy's product (one ``dgemv`` per
    tensor) and its sum of squares, bit for bit, for a stack, for one tensor read off a
    column (strided), and for an empty stack."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(31)
    K = rng.normal(size=(16, 16)) * 10.0 ** rng.uniform(-3, 3, size=(16, 16))
    stack = rng.normal(size=(9, 16)) * 10.0 ** rng.uniform(-3, 3, size=(9, 1))
    column = rng.normal(size=(16, 16))[:, 0]
    for fn in (stack, column, np.zeros((0, 16))):
        out = [_on(b, monkeypatch, lambda fn=fn: denormalize_with(fn, K))
               for b in ("numpy", "numba")]
        assert out[1].shape == out[0].shape == (*fn.shape[:-1], 2, 2, 2, 2)
        np.testing.assert_array_equal(out[1], out[0])


def test_routines_are_called_by_their_addresses():
    """A compiled kernel calls BLAS by the routine's address (``routine_caller``): ``dgemv``
    (eleven pointer arguments) on integer-valued data, whose sums are exact in any order,
    gives ``A.T @ x`` exactly."""
    numba = pytest.importorskip("numba")
    call = _jit.routine_caller()
    (gemv,) = _jit.lapack_routines("dgemv")

    @numba.njit
    def product(A, x, address):
        # Row-major A (n, m) is the column-major m x n matrix A^T: "N" gives y = A^T x.
        y = np.zeros(A.shape[1])
        trans = np.array([78], np.uint8)  # "N"
        m, n = np.array([A.shape[1]], np.int32), np.array([A.shape[0]], np.int32)
        one, zero, inc = np.array([1.0]), np.array([0.0]), np.array([1], np.int32)
        call(address, (trans.ctypes.data, m.ctypes.data, n.ctypes.data, one.ctypes.data,
                       A.ctypes.data, m.ctypes.data, x.ctypes.data, inc.ctypes.data,
                       zero.ctypes.data, y.ctypes.data, inc.ctypes.data))
        return y

    rng = np.random.default_rng(40)
    A = rng.integers(-50, 50, (700, 16)).astype(float)
    x = rng.integers(-50, 50, 700).astype(float)
    np.testing.assert_array_equal(product(A, x, gemv), A.T @ x)


def test_robust_normalizations_are_the_numpy_paths(monkeypatch):
    """The compiled robust normalisation of each axis (order statistics by bisection of the
    floats' bits): the numpy path's median and trimmed mean deviation bit for bit, on odd and
    even counts, with most values equal (the largest deviation then sets the scale), with
    ties at the trimming (integer pixels), signed zeros, values of every magnitude, and
    beyond the thinning to 2,000 values."""
    from xslit.epipolar.linear import robust_axis_normalization

    pytest.importorskip("numba")
    rng = np.random.default_rng(26)
    sets = [rng.normal(500.0, 200.0, (4, 999)), rng.uniform(0, 900, (4, 5003)),
            np.r_[np.zeros(90), rng.normal(size=10)][None],
            np.round(rng.normal(300.0, 4.0, (3, 1000))),
            np.r_[np.zeros(7), -np.zeros(6), rng.normal(size=8)][None],
            rng.normal(size=(2, 64)) * 10.0 ** rng.uniform(-300, 300, (2, 64)),
            np.array([[5.0]]), np.array([[3.0, -1.0]])]
    for values in sets:
        T = [_on(b, monkeypatch, robust_axis_normalization, values)
             for b in ("numpy", "numba")]
        np.testing.assert_array_equal(T[1], T[0])


def test_inverse_iterations_are_the_numpy_paths_to_rounding(monkeypatch):
    """The compiled steps of inverse iteration (local optimisation's inner fits): the numpy
    path's least eigenvectors to rounding, from a start near them and from a distant one."""
    from xslit.epipolar.linear import inverse_iteration

    pytest.importorskip("numba")
    rng = np.random.default_rng(27)
    D = rng.normal(size=(5, 40, 16))
    G = np.swapaxes(D, 1, 2) @ D
    for start in (np.linalg.eigh(G[0])[1][:, 0] + 0.01, rng.normal(size=16)):
        f = [_on(b, monkeypatch, inverse_iteration, G, start) for b in ("numpy", "numba")]
        np.testing.assert_allclose(f[1], f[0], rtol=EXACT, atol=EXACT)


def test_sample_inverse_iterations_are_the_numpy_paths_to_rounding(monkeypatch):
    """The compiled gather, Gram matrix and inverse of each sample of design rows, then the
    steps of inverse iteration: the numpy path's least eigenvectors to rounding."""
    from xslit.epipolar.linear import sample_inverse_iteration

    pytest.importorskip("numba")
    rng = np.random.default_rng(28)
    s = random_two_view_scene(4, 300, sigma=0.5)
    _, normed = normalize_axes(s["points1"], s["points2"], robust=True)
    design = design_rows(*normed)
    samples = np.stack([rng.choice(300, 90, replace=False) for _ in range(6)])
    start = rng.normal(size=16)
    f = [_on(b, monkeypatch, lambda: sample_inverse_iteration(design, samples, start))
         for b in ("numpy", "numba")]
    np.testing.assert_allclose(f[1], f[0], rtol=EXACT, atol=EXACT)


def test_prosac_termination_is_the_numpy_paths_to_rounding(monkeypatch):
    """PROSAC's samples needed, compiled: the numpy path's number to rounding and the same
    prefix (the pool it stops growing at), also when no prefix is non-random."""
    from xslit.robust.sampling import ProsacSampler

    pytest.importorskip("numba")
    rng = np.random.default_rng(28)
    for n, ratio, chance in ((1000, 0.7, 0.05), (400, 0.3, 0.2), (150, 0.05, 0.3)):
        order = rng.permutation(n)
        inliers = rng.uniform(size=n) < ratio
        inliers[order[:n // 4]] = ratio > 0.1  # the best quarter all inliers, or none
        got = []
        for b in ("numpy", "numba"):
            sampler = ProsacSampler(order, 15, 0.99)
            got.append((_on(b, monkeypatch, sampler.needed, inliers, chance),
                        sampler.max_pool))
        assert got[1][1] == got[0][1]
        np.testing.assert_allclose(got[1][0], got[0][0], rtol=EXACT)
    assert np.isinf(got[0][0]) and got[0][1] == n  # nothing beats chance: the pool grows on


def test_pencil_votes_are_the_numpy_paths_to_rounding(monkeypatch):
    """The compiled vote of a pencil's members: the numpy path's members to rounding, in the
    same order, with rows that agree on one member among random ones."""
    from xslit.epipolar.family import pencil_votes

    pytest.importorskip("numba")
    rng = np.random.default_rng(29)
    for t in range(20):
        basis = np.linalg.qr(rng.normal(size=(16, 2)))[0]
        f = basis @ [np.cos(t), np.sin(t)]
        rows = rng.normal(size=(40, 16))
        rows -= np.outer(rows @ f, f)
        rows = np.vstack([rows + 1e-3 * rng.normal(size=rows.shape),
                          rng.normal(size=(60, 16))])
        members = [_on(b, monkeypatch, pencil_votes, rows, basis)
                   for b in ("numpy", "numba")]
        assert members[1].shape == members[0].shape
        np.testing.assert_allclose(members[1], members[0], rtol=0, atol=EXACT)


def test_weak_families_are_the_numpy_paths(monkeypatch):
    """The compiled weak family (eigenbasis, leverage test and the rows left out, round after
    round, in one call): the numpy path's rows kept exactly and its eigenbasis to rounding, on
    the inliers of a loop's model held by a few outliers (sweep scene 84, where rows are left
    out) and on random designs with a weak direction held by a few rows."""
    from xslit.epipolar.estimate import EpipolarProblem
    from xslit.epipolar.family import weak_family
    from xslit.robust import RobustOptions, robust_estimate
    from xslit.synthetic import random_sweep_scene

    pytest.importorskip("numba")
    scene = random_sweep_scene(84, max_n=2000)
    problem = EpipolarProblem(scene.points1, scene.points2)
    result = robust_estimate(problem, RobustOptions(threshold=3 * scene.sigma),
                             np.random.default_rng(84))
    designs = [problem.design[result.inliers]]
    rng = np.random.default_rng(37)
    for _ in range(6):
        U = np.linalg.qr(rng.normal(size=(16, 16)))[0]
        D = rng.normal(size=(300, 16)) @ U
        D -= np.outer(D @ U[:, 0], U[:, 0]) + 0.97 * np.outer(D @ U[:, 1], U[:, 1])
        D[:5] += 5.0 * rng.normal(size=(5, 16))  # rows that hold the weak direction
        designs.append(D)
    left_out = 0
    for D in designs:
        (V0, w0, kept0), (V1, w1, kept1) = (_on(b, monkeypatch, weak_family, D)
                                            for b in ("numpy", "numba"))
        np.testing.assert_array_equal(kept1, kept0)
        np.testing.assert_allclose(w1, w0, rtol=0, atol=NULL_VECTOR_EPS_FACTOR
                                   * np.finfo(float).eps * w0[-1])
        np.testing.assert_allclose(np.abs(np.sum(V0 * V1, axis=0)), 1.0, rtol=0, atol=EXACT)
        left_out += np.count_nonzero(~kept0)
    assert left_out > 0


@pytest.mark.parametrize("seed", [26, 84, 137])
def test_family_searches_are_the_numpy_paths(seed, monkeypatch):
    """The family search with the weak family and the pencil's vote and scores in compiled
    calls: the numpy path's better model and inliers, from the same loop model and random
    stream, on sweep scenes where it finds one (dominant planes; a pencil that
    correspondences beyond the loop model's threshold fix)."""
    from xslit.epipolar.estimate import EpipolarProblem
    from xslit.epipolar.family import search_family
    from xslit.robust import RobustOptions, iterated_least_squares, robust_estimate
    from xslit.synthetic import random_sweep_scene

    pytest.importorskip("numba")
    scene = random_sweep_scene(seed, max_n=2000)
    threshold = 3 * scene.sigma
    problem = EpipolarProblem(scene.points1, scene.points2)
    result = robust_estimate(problem, RobustOptions(threshold=threshold),
                             np.random.default_rng(seed))

    def search():
        return search_family(
            problem, result.model, threshold, np.random.default_rng(seed),
            optimise=lambda m, inl: iterated_least_squares(problem, m, inl, threshold)[0])

    (model0, inliers0), (model1, inliers1) = (_on(b, monkeypatch, search)
                                              for b in ("numpy", "numba"))
    assert model0 is not None and model1 is not None
    np.testing.assert_array_equal(inliers1, inliers0)
    np.testing.assert_allclose(model1, model0, rtol=0, atol=SAME_FIT_RTOL)


def test_density_orders_are_the_numpy_paths(monkeypatch):
    """The compiled density order (brute-force neighbour distances kept by a network of
    minima and maxima, the ranking in one call): the k-d tree path's order exactly, on joint
    coordinates of a scene with outliers, on random data of fewer and more rows than the
    reference set and of fewer coordinates than four, on integer pixels (ties in the
    distances and the coordinates), and for each neighbour ``k``."""
    from xslit.robust import density_order

    pytest.importorskip("numba")
    rng = np.random.default_rng(31)
    s = random_two_view_scene(4, 1000, sigma=0.5, outlier_ratio=0.3)
    sets = [np.hstack([s["points1"], s["points2"]])]
    sets += [rng.normal(size=(n, d)) * 100 for n, d in ((5, 4), (40, 4), (300, 3), (2500, 4),
                                                        (120, 1))]
    sets += [np.round(sets[-2])]
    for data in sets:
        for seed in range(3):
            orders = [_on(b, monkeypatch, density_order, data, np.random.default_rng(seed))
                      for b in ("numpy", "numba")]
            np.testing.assert_array_equal(orders[1], orders[0])
    # Every neighbour the compiled search keeps, and beyond it (the k-d tree on both paths).
    for k in (1, 2, 4):
        orders = [_on(b, monkeypatch,
                      lambda k=k: density_order(sets[0], np.random.default_rng(k), k=k))
                  for b in ("numpy", "numba")]
        np.testing.assert_array_equal(orders[1], orders[0])


def test_pulled_rows_are_the_numpy_paths(monkeypatch):
    """The compiled leverage guard of a refit pulls the same rows as the numpy code: outliers
    among the rows, with and without the group deletion of the high-leverage rows, and none
    when too few rows would remain."""
    from xslit.epipolar.linear import pulled_rows

    pytest.importorskip("numba")
    rng = np.random.default_rng(30)
    s = random_two_view_scene(6, 300, sigma=0.5, outlier_ratio=0.1)
    design = design_rows(*normalize_axes(s["points1"], s["points2"], robust=True)[1])
    K = np.eye(16)
    for size, threshold in ((299, 1.0), (60, 0.5), (31, 1e-4)):
        rows = np.sort(rng.choice(300, size, replace=False))
        h, V, V1, w1, D = (a.copy() for a in weighted_leverage(design, rows, np.ones(300),
                                                              Scratch()))
        d = np.abs(D @ V[:, 0]) * rng.uniform(1.0, 3.0, size)
        pulled = [_on(b, monkeypatch, pulled_rows, d, h, D, V1, w1, K, threshold, 15)
                  for b in ("numpy", "numba")]
        np.testing.assert_array_equal(pulled[1], pulled[0])


def test_leverages_are_the_numpy_paths(monkeypatch):
    """The compiled leverages of weighted design rows: the numpy path's numbers bit for bit
    (leverages, the first pass's eigenvectors, eigenvalues and weighted rows), the refined
    eigenvectors to rounding and sign (Jacobi rotations instead of LAPACK's eigh), and None
    on both paths when the least eigenvalue is not isolated (two exact solutions)."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(24)
    s = random_two_view_scene(5, 300)
    design = design_rows(*normalize_axes(s["points1"], s["points2"], robust=True)[1])
    norms = rng.uniform(0.5, 2.0, 300)
    for size in (30, 299):
        rows = np.sort(rng.choice(300, size, replace=False))
        out = [_on(b, monkeypatch, lambda rows=rows: tuple(
            a.copy() for a in weighted_leverage(design, rows, norms, Scratch())))
            for b in ("numpy", "numba")]
        (h, V, V1, w1, D), (h0, V0, V10, w10, D0) = out
        for a, b in ((h, h0), (V1, V10), (w1, w10), (D, D0)):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(V * np.sign(np.sum(V * V0, axis=0)), V0, rtol=0,
                                   atol=NULL_VECTOR_ATOL)
    twice = np.zeros((40, 16))
    twice[:, :14] = rng.normal(size=(40, 14))  # the last two entries are free
    for b in ("numpy", "numba"):
        assert _on(b, monkeypatch, lambda: weighted_leverage(twice, np.arange(40),
                                                             np.ones(40), Scratch())) is None


@pytest.mark.parametrize("sample_size", [15, 13])
def test_iterated_least_squares_is_the_refits_loop(monkeypatch, sample_size):
    """The epipolar problem's compiled iterated least squares gives the models of the loop of
    its refits and residuals (RobustProblemBase's) bit for bit, and those of the numpy path to
    rounding: annealed from a poor start, plain, thinned beyond the refits' row limit, and
    None from a start whose inliers are fewer than a sample. The distances it leaves for the
    next residuals are those computed."""
    pytest.importorskip("numba")
    from xslit.epipolar import estimate
    from xslit.epipolar.minimal_sampling import epipolar_problem
    from xslit.robust import RobustProblemBase

    rng = np.random.default_rng(31)
    s = random_two_view_scene(7, 600, sigma=0.5, outlier_ratio=0.4)
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    for rows, anneal, steps in ((None, 4.0, 2), (None, 1.0, 0), (250, 4.0, 2), (12, 1.0, 0)):
        monkeypatch.setattr(estimate, "REFIT_ROWS", rows or estimate.REFIT_ROWS)
        monkeypatch.setattr(_jit, "USE_NUMBA", True)
        problem, generic, fresh = (epipolar_problem(s["points1"], s["points2"], sample_size)
                                   for _ in range(3))
        start = problem.model_from_pixels(F0 + 2e-3 * rng.normal(size=F0.shape))
        inliers = problem.residuals(start[None])[0] < 1.5
        if rows == 12:
            inliers[np.flatnonzero(inliers)[rows:]] = False
        args = (start, inliers, 1.5, 3, anneal, steps)
        model, converged = problem.iterated_least_squares(*args)
        model0, converged0 = RobustProblemBase.iterated_least_squares(generic, *args)
        monkeypatch.setattr(_jit, "USE_NUMBA", False)
        model1, _ = RobustProblemBase.iterated_least_squares(fresh, *args)
        monkeypatch.setattr(_jit, "USE_NUMBA", True)
        assert converged == converged0
        if rows == 12:
            assert model is None and model0 is None and model1 is None
            continue
        np.testing.assert_array_equal(model, model0)
        np.testing.assert_allclose(model1, model0, rtol=0, atol=NULL_VECTOR_ATOL)
        np.testing.assert_array_equal(problem.residuals(model[None])[0],
                                      generic.residuals(model0[None].copy())[0])
        # Again, with every fit taken from the problem's memory of them.
        again, _ = problem.iterated_least_squares(*args)
        np.testing.assert_array_equal(again, model)
        # The second polishes' annealing from the result, on its own and in the loop of refits.
        factors = (2.0, 1.5, 1.0)
        annealed = problem.annealed_fit(model, 1.5, factors)
        monkeypatch.setattr(estimate, "iterated_taubin_fits", lambda *a: None)
        np.testing.assert_array_equal(annealed, generic.annealed_fit(model, 1.5, factors))
        monkeypatch.undo()


def test_best_fits_of_samples_are_the_fits_and_scores(monkeypatch):
    """The epipolar problem's compiled best of local optimisation's inner fits: the fit and
    loss of fit_samples, residuals and msac_loss (RobustProblemBase's) bit for bit, on all
    correspondences and on a verification subset, and the numpy path's to rounding; samples
    of 15 rows (fitted as minimal ones) take the generic path. The loss is numpy's pairwise
    sum, which the kernel replays."""
    pytest.importorskip("numba")
    from xslit.epipolar.minimal_sampling import epipolar_problem
    from xslit.robust import RobustProblemBase

    rng = np.random.default_rng(32)
    s = random_two_view_scene(8, 700, sigma=0.5, outlier_ratio=0.3)
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    monkeypatch.setattr(_jit, "USE_NUMBA", True)
    problem = epipolar_problem(s["points1"], s["points2"])
    model = problem.model_from_pixels(F0 + 1e-3 * rng.normal(size=F0.shape))
    inliers = np.flatnonzero(problem.residuals(model[None])[0] < 1.5)
    # Subsets across the block sizes of numpy's pairwise sum (8 and 128 values).
    for m, subset in ((120, None), (40, rng.choice(700, 256, replace=False)), (15, None),
                      *((30, rng.choice(700, k, replace=False)) for k in (5, 128, 129, 300))):
        samples = np.stack([rng.choice(inliers, m, replace=False) for _ in range(6)])
        fit, loss = problem.best_fit(samples, model, subset, 1.5)
        fit0, loss0 = RobustProblemBase.best_fit(problem, samples, model, subset, 1.5)
        monkeypatch.setattr(_jit, "USE_NUMBA", False)
        fit1, loss1 = RobustProblemBase.best_fit(problem, samples, model, subset, 1.5)
        monkeypatch.setattr(_jit, "USE_NUMBA", True)
        np.testing.assert_array_equal(fit, fit0)
        assert loss == loss0
        np.testing.assert_allclose(fit1, fit0, rtol=0, atol=NULL_VECTOR_ATOL)
        assert loss1 == pytest.approx(loss0, rel=SAME_FIT_RTOL)


def test_candidates_are_the_numpy_paths(monkeypatch):
    """The compiled read-off of the candidate matrices (without residuals) does the numpy
    code's operations in its order: the same numbers bit for bit, also on tensors with zero
    entries and a vanishing empty minor (infinite and undefined candidates)."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(23)
    F = rng.normal(size=(40, 2, 2, 2, 2)) * 10.0 ** rng.uniform(-4, 4, (40, 1, 1, 1, 1))
    F[:10][rng.random((10, 2, 2, 2, 2)) < 0.3] = 0.0
    F[10:15, 1, 1, 1, 1] = 0.0
    C = [_on(b, monkeypatch, lambda: candidate_matrices(F, residuals=False)[0])
         for b in ("numpy", "numba")]
    np.testing.assert_array_equal(C[1], C[0])
    assert np.isnan(C[0][10:15]).any() and np.isfinite(C[0][15:]).all()


def test_compiled_and_numpy_paths_agree(monkeypatch):
    """The polish on the variety and the robust estimate give the same tensors and masks on
    both paths (to rounding)."""
    pytest.importorskip("numba")
    s = random_two_view_scene(2, 600, sigma=0.5, outlier_ratio=0.3)
    p1, p2 = s["points1"], s["points2"]
    F0 = xslit.computeEpipolarTensor(s["camera1"], s["camera2"])
    fits = [_on(b, monkeypatch, lambda: refine_on_variety(F0, p1, p2, s["inliers"],
                                                          threshold=1.5))
            for b in ("numpy", "numba")]
    np.testing.assert_allclose(fits[1].F, fits[0].F, atol=BACKENDS_AGREE)
    np.testing.assert_allclose(fits[1].distances, fits[0].distances, atol=BACKENDS_AGREE)
    found = [_on(b, monkeypatch, lambda: xslit.findEpipolarTensor(
        p1, p2, xslit.USAC_DEFAULT, 1.5)) for b in ("numpy", "numba")]
    np.testing.assert_array_equal(found[1][1], found[0][1])
    np.testing.assert_allclose(found[1][0] * np.sign(np.vdot(found[0][0], found[1][0])),
                               found[0][0], atol=BACKENDS_AGREE)


@pytest.mark.parametrize("kind", ["two_slit", "mixed", "pushbroom"])
def test_compiled_and_numpy_metric_jacobians_agree(kind):
    """The Jacobians of the metric fit (metric_residuals' jac: analytic in the points, forward
    differences in the pose) are the same on both paths, to the rounding of the differences;
    the residuals come from one code."""
    pytest.importorskip("numba")
    from tolerances import METRIC_JACOBIAN_RTOL

    from xslit.sfm.two_view import metric_residuals

    s = random_two_view_scene(3, 200, kind=kind)
    g = np.concatenate([s["rvec"], s["tvec"]]) + 0.01
    X = s["X"] + 0.01
    (Jg, Jp), (Jg0, Jp0) = (
        metric_residuals(s["intrinsics1"], s["intrinsics2"], s["points1"], s["points2"],
                         backend=b)[1](g, X) for b in ("numba", "numpy"))
    assert np.all(Jg[:, :2] == 0)  # camera 1 does not move
    np.testing.assert_allclose(Jg, Jg0, rtol=0, atol=METRIC_JACOBIAN_RTOL * np.abs(Jg0).max())
    np.testing.assert_allclose(Jp, Jp0, rtol=0, atol=METRIC_JACOBIAN_RTOL * np.abs(Jp0).max())


def test_damped_point_blocks_are_the_numpy_paths(monkeypatch):
    """The compiled damping and inversion of the point blocks (reduced_normal_equations, the
    step of block_levenberg_marquardt) do the numpy code's operations in its order: the same
    numbers bit for bit, with singular, infinite and NaN blocks among them."""
    pytest.importorskip("numba")
    from xslit.sfm.lm import reduced_normal_equations

    rng = np.random.default_rng(23)
    Jg = rng.normal(size=(40, 4, 6))
    Jp = rng.normal(size=(40, 4, 3)) * 10.0 ** rng.uniform(-6, 6, size=(40, 1, 1))
    Jp[0], Jp[1, :, 2], Jp[2, 0, 0], Jp[3, 1, 1] = 0.0, 0.0, np.inf, np.nan
    r = rng.normal(size=(40, 4))
    for lam in (1e-12, 1e-3, 1e4):
        with np.errstate(invalid="ignore", over="ignore"):
            out = [_on(b, monkeypatch, lambda lam=lam: reduced_normal_equations(Jg, Jp, r, lam))
                   for b in ("numpy", "numba")]
        for a, b in zip(out[0], out[1], strict=True):
            np.testing.assert_array_equal(b, a)


def test_estimate_on_either_path(backend):
    """findEpipolarTensor recovers the inliers on the path in use (the numpy one is the only
    one without numba)."""
    s = random_two_view_scene(3, 400, sigma=0.5, outlier_ratio=0.3)
    F, mask = xslit.findEpipolarTensor(s["points1"], s["points2"], xslit.USAC_DEFAULT, 1.5)
    inl = mask[:, 0] == 1
    assert F.shape == (2, 2, 2, 2) and np.all(np.isfinite(F))
    assert (inl & s["inliers"]).sum() >= 0.97 * s["inliers"].sum()
    assert (inl & ~s["inliers"]).sum() <= 3


def test_switch_and_lazy_import():
    """``XSLIT_NO_NUMBA`` selects the numpy path, and importing the estimators does not load
    numba (it is imported at the first call that needs a kernel)."""
    code = ("import os, sys, xslit, xslit.epipolar.variety, xslit.epipolar.estimate; "
            "from xslit import _jit; print(_jit.USE_NUMBA, 'numba' in sys.modules)")
    env = dict(os.environ, XSLIT_NO_NUMBA="1")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env)
    assert out.stdout.split() == ["False", "False"]
    env["XSLIT_NO_NUMBA"] = "0"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env)
    assert out.stdout.split()[1] == "False"
