"""The paper's worked examples, printed with their checks (``make demo`` runs ``python -m xslit.demo``).

Each check is a function returning a list of :class:`Line` (a label, the value shown, and
whether it agrees with the paper); :data:`CHECKS` lists them in order, so later sections (the
epipolar tensor of the appendix, its two camera configurations) are appended as more functions.
The process exits with status 1 when any line fails.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

__all__ = ["CHECKS", "Line", "main", "run"]


class Line(NamedTuple):
    label: str
    value: str
    ok: bool


def _fmt(a) -> str:
    a = np.asarray(a, dtype=float)
    a = np.where(np.abs(a) < 5e-13, 0.0, a)  # no "-0." from round-off
    return np.array2string(a, precision=4, suppress_small=True, separator=", ",
                           max_line_width=200).replace("\n", "")


# -- section 2: Example 1 ---------------------------------------------------------------------

Y_EX1 = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]])


def example1_plane_projection() -> list[Line]:
    """Example 1, eq. (3): N of the plane x3 = x4 with its frame."""
    from .cameras import plane_projection_matrix

    expected = np.array([[1.0, 0, 0, 0, -1, 0], [0, 1, 0, 1, 0, 0], [0, 0, 1, 0, 0, 0]])
    N = plane_projection_matrix(Y_EX1)
    return [Line("Example 1: N (eq. (3))", _fmt(N),
                 bool(np.array_equal(N, expected)))]


# -- section 3: the finite two-slit example --------------------------------------------------


def two_slit_example() -> list[Line]:
    """Slits {x1 = x3 = 0}, {x2 = x3 + x4 = 0}: lambda, psi (eq. (9)), A1, A2."""
    from .cameras import RationalCamera, TwoSlitCamera
    from .geometry import line_from_planes

    l1 = line_from_planes([1.0, 0, 0, 0], [0.0, 0, 1, 0])
    l2 = line_from_planes([0.0, 1, 0, 0], [0.0, 0, 1, 1])
    X = np.random.default_rng(0).integers(-9, 10, size=(50, 4)).astype(float)
    x1, x2, x3, x4 = X.T
    lam_paper = np.stack([x1 * (x3 + x4), x2 * x3, x3 * (x3 + x4), x2 * x3, 0 * x1, -x1 * x2], 1)
    psi_paper = np.stack([x1 * (x3 + x4), 2 * x2 * x3, x3 * (x3 + x4)], 1)
    rational = RationalCamera.two_slit(l1, l2, Y_EX1)
    linear = TwoSlitCamera.from_slits(l1, l2, Y_EX1)
    A1 = np.array([[1.0, 0, 0, 0], [0, 0, 1, 0]])
    A2 = np.array([[0.0, 2, 0, 0], [0, 0, 1, 1]])
    printed = TwoSlitCamera(A1, A2)
    Q = rational.quadratic_forms
    u = np.einsum("ni,kij,nj->nk", X, Q, X)
    scale = u[np.abs(psi_paper) > 0][0] / psi_paper[np.abs(psi_paper) > 0][0]
    return [
        Line("essential map lambda(x) = (x1(x3+x4), x2x3, x3(x3+x4), x2x3, 0, -x1x2)",
             "50 integer points", bool(np.array_equal(rational.essential_map(X), lam_paper))),
        Line("psi = N lambda = (x1(x3+x4), 2x2x3, x3(x3+x4)) (eq. (9))",
             "50 integer points",
             bool(np.array_equal(rational.project_homogeneous(X), psi_paper))),
        Line("eq. (7): x^T P1* S_k P2* x = s N lambda(x)", f"s = {scale:g}",
             bool(np.allclose(u, scale * psi_paper, rtol=0, atol=1e-12))),
        Line("A1 from the slits and the intrinsic frame (eq. (13))",
             _fmt(linear.A1), bool(np.allclose(linear.A1, A1, atol=1e-12))),
        Line("A2 from the slits and the intrinsic frame", _fmt(linear.A2),
             bool(np.allclose(linear.A2, A2, atol=1e-12))),
        Line("TwoSlitCamera(A1, A2) projects x to psi(x)", "50 integer points",
             bool(np.array_equal(printed.project_homogeneous(X), psi_paper))),
    ]


# -- section 3.2: Example 2, pushbroom ---------------------------------------------------------


def pushbroom_example() -> list[Line]:
    """eqs. (18) / (19) with the appendix's pushbroom camera B."""
    from .cameras import PushbroomCamera
    from .geometry import homogeneous_from_euclidean

    P = np.array([[14.0, 9, -3, 8], [-3, 8, 10, 3], [6, 13, 5, 13]])
    cam = PushbroomCamera.from_matrix(P)
    X = np.random.default_rng(1).normal(size=(50, 3))
    Xh = homogeneous_from_euclidean(X)
    expected = np.stack([Xh @ P[0], (Xh @ P[1]) / (Xh @ P[2])], axis=1)
    return [
        Line("pushbroom A1 = [m1 t1; 0 0 0 1]", _fmt(cam.A1),
             bool(np.array_equal(cam.A1, [[14.0, 9, -3, 8], [0, 0, 0, 1]]))),
        Line("x -> ([m1 t1]x, [m2 t2]x / [m3 t3]x) (eq. (19))", "50 points",
             bool(np.allclose(cam.project(X), expected, rtol=1e-12))),
        Line("Gupta-Hartley 3x4 matrix round trip", _fmt(cam.matrix),
             bool(np.array_equal(cam.matrix, P))),
    ]


# -- appendix: the parallel camera and its intrinsics -------------------------------------------


def appendix_parallel_camera() -> list[Line]:
    """A1 = [-1 7 4 0; 8 -1 13 4], A2 = [11 6 -2 4; 8 -1 13 -5] (eq. (49))."""
    from .api.cameras import composeTwoSlitProjection, decomposeTwoSlitProjection
    from .cameras import TwoSlitCamera
    from .testing import projective_distance

    A1 = np.array([[-1.0, 7, 4, 0], [8, -1, 13, 4]])
    A2 = np.array([[11.0, 6, -2, 4], [8, -1, 13, -5]])
    cam = TwoSlitCamera(A1, A2)
    dec = decomposeTwoSlitProjection(cam)
    s = np.sqrt(234.0)
    back = composeTwoSlitProjection(dec.intrinsics, dec.rvec, dec.tvec)
    upper = all(abs(K[1, 0]) < 1e-12 and K[1, 1] == 1 and K[0, 0] > 0 for K in (dec.K1, dec.K2))
    return [
        Line("K1 upper triangular (parallel camera)", _fmt(dec.K1),
             upper and bool(np.isclose(dec.K1[0, 1], 37 / 234))),
        Line("K2 upper triangular", _fmt(dec.K2), upper and bool(np.isclose(dec.K2[0, 1],
                                                                            56 / 234))),
        Line("r3 = (8, -1, 13) / sqrt(234), shared by the second rows", _fmt(dec.r3),
             bool(np.allclose(dec.r3, np.array([8.0, -1, 13]) / s, atol=1e-12))),
        Line("theta = arccos(r1 . r2) (signed, degrees)",
             f"{np.degrees(dec.theta):.4f} (arccos = {np.degrees(np.arccos(dec.r1 @ dec.r2)):.4f})",
             bool(np.isclose(np.cos(dec.theta), dec.r1 @ dec.r2, atol=1e-12))),
        Line("d = t4 - t3 = -9 / sqrt(234)", f"{dec.d:.6f}", bool(np.isclose(dec.d, -9 / s))),
        Line("composeTwoSlitProjection(K1, K2, theta, d, rvec, tvec) gives A1, A2 back",
             f"distance {max(projective_distance(back.A1, A1), projective_distance(back.A2, A2)):.1e}",
             bool(projective_distance(back.A1, A1, positive=True) < 1e-12
                  and projective_distance(back.A2, A2, positive=True) < 1e-12)),
    ]


# -- appendix C: the epipolar tensor and its two configurations ------------------------------


def appendix_epipolar_tensor() -> list[Line]:
    """Appendix C: the epipolar tensor of (A1, A2), (B1, B2) and its two configurations."""
    from .api.epipolar import computeEpipolarTensor
    from .cameras import TwoSlitCamera
    from .epipolar import candidate_matrices, matrix_from_cameras, recover_configurations

    A1 = np.array([[-1.0, 7, 4, 0], [8, -1, 13, 4]])
    A2 = np.array([[11.0, 6, -2, 4], [8, -1, 13, -5]])
    B1 = np.array([[14.0, 9, -3, 8], [0, 0, 0, 1]])
    B2 = np.array([[-3.0, 8, 10, 3], [6, 13, 5, 13]])
    printed = np.array([[[[0, 0], [21816, -25650]], [[1906, -2090], [-3642, 5510]]],
                        [[[880, 475], [18600, -11875]], [[97, -380], [-1259, 1425]]]])
    F = computeEpipolarTensor(TwoSlitCamera(A1, A2), TwoSlitCamera(B1, B2))
    _, res = candidate_matrices(F)
    _, C, _ = recover_configurations(F)
    rows = {"-14.22 8.33 -6.67 -22.17": C[0, 1], "-14.22 8.33 9.25 4.24": C[1, 1]}
    truth = matrix_from_cameras(A1, A2, B1, B2)
    lines = [
        Line("F (eq. (23)) equals eq. (50)",
             _fmt(F.reshape(4, 4)), bool(np.array_equal(np.round(F), printed))),
        Line("8 candidate C, exactly 2 reproduce f_1111 and f_2111",
             _fmt(np.sort(res)), int(np.sum(res < 1e-9)) == 2),
    ]
    for text, row in rows.items():
        lines.append(Line(f"A2 second row, printed {text}", _fmt(row),
                          bool(np.allclose(np.round(row, 2), [float(v) for v in text.split()]))))
    lines.append(Line("the second configuration is the original cameras", _fmt(C[1]),
                      bool(np.allclose(C[1], truth, atol=1e-9))))
    return lines


#: The checks in the order printed; append later sections here.
CHECKS: list[Callable[[], list[Line]]] = [
    example1_plane_projection,
    two_slit_example,
    pushbroom_example,
    appendix_parallel_camera,
    appendix_epipolar_tensor,
]


def run(checks=None, out=None) -> bool:
    """Run ``checks`` (default :data:`CHECKS`), print every line, return whether all passed.

    A check that raises counts as a failure (its exception is printed), and the others still run.

    Examples
    --------
    >>> import io
    >>> run([example1_plane_projection], out=io.StringIO())
    True
    """
    out = sys.stdout if out is None else out
    all_ok = True
    for check in CHECKS if checks is None else checks:
        title = (check.__doc__ or check.__name__).strip().splitlines()[0]
        print(f"\n== {title}", file=out)
        try:
            lines = check()
        except Exception as exc:  # report and go on: the demo shows every result
            lines = [Line(check.__name__, f"raised {type(exc).__name__}: {exc}", False)]
        for line in lines:
            all_ok &= line.ok
            print(f"  [{'ok' if line.ok else 'FAIL'}] {line.label}: {line.value}", file=out)
    return all_ok


def main(argv=None) -> int:
    print("xslit: the worked examples of Trager et al., 'General models for rational cameras "
          "and the case of two-slit projections' (CVPR 2017)")
    ok = run()
    print("\nall checks ok" if ok else "\nSOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
