"""Benchmark: calibrateTwoSlit against cv2.calibrateCamera on problems of the same size.

Both calibrate V views of N points each with 0.5 px of Gaussian noise:

* xslit: a parallel two-slit camera (6 intrinsics, ``CALIB_PARALLEL``), a target of three
  boards at right angles (``xslit.synthetic.calibration_target_points``, with as many
  corners per board as N needs), viewed by ``random_calibration_views``; no guess (per-view
  resection and decomposition, then the joint refinement);
* cv2: a pinhole with zero distortion (``CALIB_FIX_K1..K3``, zero tangential distortion: 4
  intrinsics), one planar board of N corners at the same viewpoints, Zhang's initialisation,
  then its joint refinement.

Calls are interleaved (xslit, cv2, xslit, ...) and the best of several repeats is kept. The
script prints both times and their ratio, and each method's intrinsics errors in units of its
own reported standard deviations (how close to the noise bound the estimate is).

Run:  .venv/bin/python tools/bench_calibrate.py [--views 20] [--points 500] [--repeats 5]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np


def _xslit_problem(views, points, rng):
    import xslit
    from xslit.synthetic import calibration_target_points, random_calibration_views

    side = math.ceil(math.sqrt(points / 3)) + 1  # squares per board side
    target = calibration_target_points(3, (side, side), 0.7 / side)[:points]
    intr = xslit.TwoSlitIntrinsics.from_parameters(900, 450, 640, 480, np.radians(80), 0.3)
    data = random_calibration_views(intr, views, rng, sigma=0.5, object_points=target,
                                     image_size=(1280, 960))
    return intr, data


def _pinhole_problem(data, points, rng):
    """A planar board of ``points`` corners seen by a pinhole from the same viewpoints."""
    import cv2

    side = math.ceil(math.sqrt(points))
    g = np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2)[:points]
    board = np.column_stack([g * 0.7 / side, np.zeros(len(g))]).astype(np.float32)
    K = np.array([[900.0, 0, 640], [0, 900.0, 480], [0, 0, 1]])
    obj, img = [], []
    for rvec in data["rvecs"]:
        tvec = np.array([-0.35, -0.35, 2.0]) + rng.normal(scale=0.1, size=3)
        px = cv2.projectPoints(board, rvec * 0.3, tvec, K, None)[0]
        obj.append(board)
        img.append((px + rng.normal(scale=0.5, size=px.shape)).astype(np.float32))
    return K, obj, img


def _interleaved(fns, repeats):
    best = [np.inf] * len(fns)
    out = [None] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            out[k] = fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best, out


def main(argv=None) -> int:
    import cv2

    import xslit
    from xslit.cameras.intrinsics import intrinsic_parameters

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--views", type=int, default=20)
    parser.add_argument("--points", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    intr, data = _xslit_problem(args.views, args.points, rng)
    K, obj, img = _pinhole_problem(data, args.points, rng)
    flags_cv = (cv2.CALIB_FIX_K1 | cv2.CALIB_FIX_K2 | cv2.CALIB_FIX_K3
                | cv2.CALIB_ZERO_TANGENT_DIST)
    (t_x, t_cv), (out_x, out_cv) = _interleaved([
        lambda: xslit.calibrateTwoSlitExtended(data["object_points"], data["image_points"],
                                               (1280, 960), flags=xslit.CALIB_PARALLEL),
        lambda: cv2.calibrateCameraExtended(obj, img, (1280, 960), None, None,
                                            flags=flags_cv),
    ], args.repeats)
    p, q = intrinsic_parameters(intr)[1], intrinsic_parameters(out_x[1])[1]
    std_x = out_x[4].ravel()
    free = std_x > 0
    z_x = np.abs(q - p)[free] / std_x[free]
    Kc, std_cv = out_cv[1], out_cv[5].ravel()[:4]
    est_cv = np.array([Kc[0, 0], Kc[1, 1], Kc[0, 2], Kc[1, 2]])
    z_cv = np.abs(est_cv - [K[0, 0], K[1, 1], K[0, 2], K[1, 2]]) / std_cv
    print(f"{args.views} views x {args.points} points, sigma 0.5 px, best of {args.repeats}")
    print(f"{'':<28} {'ms':>9} {'RMS px':>8} {'max |err| / std':>16}")
    print(f"{'xslit calibrateTwoSlit':<28} {1e3 * t_x:9.1f} {out_x[0]:8.4f} {z_x.max():16.2f}")
    print(f"{'cv2 calibrateCamera':<28} {1e3 * t_cv:9.1f} {out_cv[0]:8.4f} {z_cv.max():16.2f}")
    print(f"time ratio xslit / cv2: {t_x / t_cv:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
