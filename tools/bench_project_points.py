"""Benchmark: xslit.projectTwoSlitPoints against cv2.projectPoints.

Projects the same 1,000,000 points with a two-slit camera (projectTwoSlitPoints) and with a
zero-distortion pinhole (cv2.projectPoints), keeps the best of several repeats of each, and
prints both times and their ratio (goal: <= 1.5). cv2.projectPoints always computes its
(2N, 15) Jacobian in Python (it returns ``(imagePoints, jacobian)``), so the ratio with
``computeJacobian=True`` is printed as well.

Run:  .venv/bin/python tools/bench_project_points.py [--points 1000000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def best_time(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--goal", type=float, default=1.5)
    args = parser.parse_args(argv)

    import cv2

    import xslit

    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(args.points, 3))
    rvec = np.array([0.1, -0.2, 0.3])
    tvec = np.array([0.1, -0.2, 5.0])
    K = np.array([[800.0, 0, 320], [0, 800.0, 240], [0, 0, 1]])
    intr = xslit.TwoSlitIntrinsics.from_parameters(800.0, 600.0, 320.0, 240.0, np.radians(70),
                                                   0.5)

    out = cv2.projectPoints(X, rvec, tvec, K, None)
    assert isinstance(out, tuple) and out[1].shape == (2 * args.points, 15), \
        "cv2.projectPoints is expected to return its Jacobian"
    img, jac = xslit.projectTwoSlitPoints(X, rvec, tvec, intr)
    assert img.shape == (args.points, 1, 2) and img.dtype == np.float64 and jac is None

    t_cv2 = best_time(lambda: cv2.projectPoints(X, rvec, tvec, K, None), args.repeats)
    t_xs = best_time(lambda: xslit.projectTwoSlitPoints(X, rvec, tvec, intr), args.repeats)
    t_xj = best_time(lambda: xslit.projectTwoSlitPoints(X, rvec, tvec, intr,
                                                        computeJacobian=True),
                     max(2, args.repeats // 2))
    n = f"{args.points:,}"
    print(f"cv2 {cv2.__version__}, numpy {np.__version__}; {n} points, best of {args.repeats}")
    print(f"cv2.projectPoints (pinhole, no distortion, Jacobian included): {t_cv2 * 1e3:8.1f} ms")
    print(f"xslit.projectTwoSlitPoints:                                  {t_xs * 1e3:8.1f} ms")
    print(f"xslit.projectTwoSlitPoints(computeJacobian=True):            {t_xj * 1e3:8.1f} ms")
    ratio = t_xs / t_cv2
    print(f"ratio xslit / cv2:                  {ratio:.2f}x  "
          f"({'ok' if ratio <= args.goal else 'FAIL'}: goal <= {args.goal}x)")
    print(f"ratio xslit with Jacobian / cv2:    {t_xj / t_cv2:.2f}x")
    return 0 if ratio <= args.goal else 1


if __name__ == "__main__":
    raise SystemExit(main())
