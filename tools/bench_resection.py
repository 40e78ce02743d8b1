"""Benchmark: solveTwoSlitPnP / solveTwoSlitPnPRansac against cv2.solvePnP / solvePnPRansac.

The two-slit problem is a random_resection_scene (known intrinsics, noise of 0.5 px; 30%
outliers for the RANSAC variants); the pinhole problem has the same size: the same object
points seen by a zero-distortion pinhole at the same pose with a focal length of 800 px, its
pixels with the same noise and the same outliers. Calls are interleaved (xslit, cv2, xslit,
...) and the best of several repeats of each is kept; the script prints the times and their
ratios for N = 100 and N = 1000.

Both RANSACs get the same threshold (4 sigma = 2 px) and confidence (0.99); cv2's iteration
cap is raised to xslit's (1000) so that neither stops on the cap.

Run:  .venv/bin/python tools/bench_resection.py [--sizes 100 1000] [--repeats 7] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _pinhole_problem(s, rng):
    """Pixels of the scene's points through a pinhole at the scene's pose, with its noise and
    outliers."""
    import cv2

    K = np.array([[800.0, 0, 500], [0, 800.0, 500], [0, 0, 1]])
    px = cv2.projectPoints(s["X"], s["rvec"], s["tvec"], K, None)[0][:, 0]
    px += rng.normal(scale=0.5, size=px.shape)
    out = ~s["inliers"]
    px[out] = rng.uniform(0, 1000, size=(int(out.sum()), 2))
    return K, px


def _interleaved(fns, repeats):
    best = [np.inf] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def _bench_size(n, seed, repeats, rng):
    """Rows ``(name, xslit seconds, cv2 seconds)`` of the problems of ``n`` points."""
    import cv2

    from xslit.api.resection import solveTwoSlitPnP, solveTwoSlitPnPRansac
    from xslit.synthetic import random_resection_scene

    clean = random_resection_scene(seed, n, sigma=0.5)
    dirty = random_resection_scene(seed, n, sigma=0.5, outlier_ratio=0.3)
    K, px_clean = _pinhole_problem(clean, rng)
    _, px_dirty = _pinhole_problem(dirty, rng)
    X_clean = np.ascontiguousarray(clean["X"])
    X_dirty = np.ascontiguousarray(dirty["X"])
    cases = [
        ("solvePnP", lambda: solveTwoSlitPnP(X_clean, clean["pixels"], clean["intrinsics"]),
         lambda: cv2.solvePnP(X_clean, px_clean, K, None)),
        ("solvePnPRansac",
         lambda: solveTwoSlitPnPRansac(X_dirty, dirty["pixels"], dirty["intrinsics"],
                                       reprojectionError=2.0, rng=seed),
         lambda: cv2.solvePnPRansac(X_dirty, px_dirty, K, None, iterationsCount=1000,
                                    reprojectionError=2.0, confidence=0.99)),
    ]
    return [(name, *_interleaved([ours, theirs], repeats)) for name, ours, theirs in cases]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"{'N':>6} {'function':<24} {'xslit ms':>10} {'cv2 ms':>10} {'ratio':>7}")
    for n in args.sizes:
        for name, t_ours, t_cv2 in _bench_size(n, args.seed, args.repeats, rng):
            print(f"{n:>6} {name:<24} {1e3 * t_ours:>10.2f} {1e3 * t_cv2:>10.2f} "
                  f"{t_ours / t_cv2:>7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
