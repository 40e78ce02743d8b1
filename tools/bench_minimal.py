"""Time the 13-point minimal solver against PoseLib's generalized relative pose 6-point solver.

Both are minimal solvers of a two-view problem of non-central cameras with many complex
solutions (56 matrices C here, 64 poses for PoseLib's gen_relpose_6pt, a compiled elimination
template). xslit's solver runs on a batch of samples (as a robust estimator would call it) and
on single samples; PoseLib is called once per sample. The runs are interleaved (xslit batch,
xslit single, PoseLib, repeated --runs times) and each figure is the best run; the ratios of
the median times per sample are printed.

With --robust, also the cost of a robust estimation with 13-point minimal samples against
15-point linear samples (xslit.epipolar.solve_linear_batch) at 40% and 50% outliers:
iterations by the standard formula log(1 - p) / log(1 - w^s) for confidence p = 0.99 and
inlier ratio w, times the measured time per sample of each solver plus the scoring of its
real tensors on --points correspondences.

PoseLib is needed only here: pip install poselib (or pip install xslit[bench]).

With --accuracy N, first the fractions of N noise-free samples with all 56 complex solutions
found and with the true tensor among the real solutions.

Usage: python tools/bench_minimal.py [--batch 200] [--single 10] [--runs 3] [--robust]
                                     [--accuracy 1000]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from xslit.epipolar import epipolar_tensor, sampson_distance, solve_linear_batch
from xslit.epipolar.minimal import N_SOLUTIONS, solve_minimal
from xslit.synthetic import random_points_in_front, random_two_slit_camera
from xslit.testing import projective_distance


def samples(rng, n, size=13, truth=False):
    """``n`` noise-free samples of ``size`` correspondences of random two-slit camera pairs
    (alternately parallel finite two-slit cameras and general ones), and their true tensors
    with ``truth``."""
    p1, p2, F = [], [], []
    for i in range(n):
        parallel = i % 2 == 0
        cam1 = random_two_slit_camera(rng, parallel=parallel)
        cam2 = random_two_slit_camera(rng, parallel=parallel)
        X = random_points_in_front([cam1, cam2], size, rng)
        p1.append(cam1.project(X))
        p2.append(cam2.project(X))
        F.append(epipolar_tensor(cam1.A1, cam1.A2, cam2.A1, cam2.A2))
    return (np.array(p1), np.array(p2)) + ((np.array(F),) if truth else ())


def accuracy(rng, n):
    """Fractions of ``n`` samples with all 56 solutions and with the truth among the real ones."""
    p1, p2, F = samples(rng, n, truth=True)
    complete = found = 0
    for k in range(0, n, 250):
        sol = solve_minimal(p1[k:k + 250], p2[k:k + 250], rng=k)
        complete += int(np.sum(sol.n_found == N_SOLUTIONS))
        for b in range(len(p1[k:k + 250])):
            G = sol.tensors[sol.sample == b]
            d = projective_distance(G, np.broadcast_to(F[k + b], G.shape), axis=(1, 2, 3, 4))
            found += int(len(G) > 0 and d.min() < 1e-6)
    print(f"{n} samples: all {N_SOLUTIONS} complex solutions in {complete / n:.1%}, the true "
          f"tensor among the real solutions (projective distance < 1e-6) in {found / n:.1%}")


def generalized_instances(rng, n):
    """``n`` noise-free 6-point generalized relative pose problems (rays of two rigs)."""
    out = []
    for _ in range(n):
        R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        R *= np.sign(np.linalg.det(R))
        t = rng.normal(size=3)
        X = rng.normal(size=(6, 3)) + np.array([0.0, 0.0, 5.0])
        c1 = rng.normal(scale=0.5, size=(6, 3))
        c2 = rng.normal(scale=0.5, size=(6, 3))
        d1 = X - c1
        X2 = X @ R.T + t
        d2 = X2 - c2
        out.append((c1, d1 / np.linalg.norm(d1, axis=1, keepdims=True), c2,
                    d2 / np.linalg.norm(d2, axis=1, keepdims=True)))
    return out


def time_xslit(p1, p2, seed):
    t0 = time.perf_counter()
    sol = solve_minimal(p1, p2, rng=seed)
    return (time.perf_counter() - t0) / len(p1), sol


def time_xslit_single(p1, p2, seed):
    times = []
    for a, b in zip(p1, p2, strict=True):
        t0 = time.perf_counter()
        solve_minimal(a, b, rng=seed)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def time_poselib(poselib, instances):
    times = []
    for inst in instances:
        t0 = time.perf_counter()
        poselib.gen_relpose_6pt(*inst)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def robust_comparison(rng, minimal_time, real_per_sample, n_points):
    """Cost of a robust estimation with 13-point and 15-point samples."""
    p1, p2 = samples(rng, 200, 15)
    t0 = time.perf_counter()
    for _ in range(5):
        solve_linear_batch(p1, p2)
    linear_time = (time.perf_counter() - t0) / (5 * len(p1))
    q1, q2 = samples(rng, 1, n_points)
    F = np.broadcast_to(solve_linear_batch(p1[:1], p2[:1])[0][0], (64, 2, 2, 2, 2))
    t0 = time.perf_counter()
    for _ in range(5):
        sampson_distance(F, q1[0], q2[0])
    score_time = (time.perf_counter() - t0) / (5 * len(F))
    print(f"\nrobust estimation, confidence 0.99, {n_points} correspondences scored per model "
          f"({score_time * 1e6:.1f} us per model)")
    print(f"  15-point linear sample: {linear_time * 1e6:.1f} us, 1 model")
    print(f"  13-point minimal sample: {minimal_time * 1e3:.2f} ms, {real_per_sample:.1f} real "
          f"models on average")
    for outliers in (0.4, 0.5):
        w = 1.0 - outliers
        line = f"  {outliers:.0%} outliers:"
        for s, cost in ((13, minimal_time + real_per_sample * score_time),
                        (15, linear_time + score_time)):
            it = math.ceil(math.log(0.01) / math.log(1.0 - w ** s))
            line += f"  {s}-point {it:,} iterations, {it * cost:.2f} s;"
        print(line)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--batch", type=int, default=200, help="samples per batch (default 200)")
    ap.add_argument("--single", type=int, default=10,
                    help="samples solved one at a time (default 10)")
    ap.add_argument("--runs", type=int, default=3, help="interleaved runs (default 3)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--robust", action="store_true",
                    help="also compare 13-point and 15-point robust estimation")
    ap.add_argument("--accuracy", type=int, default=0, metavar="N",
                    help="first measure completeness and recovery on N samples")
    ap.add_argument("--points", type=int, default=1000,
                    help="correspondences scored per model for --robust (default 1000)")
    args = ap.parse_args(argv)
    try:
        import poselib
    except ImportError:
        print("PoseLib is not installed: pip install poselib (or pip install xslit[bench])",
              file=sys.stderr)
        return 1
    rng = np.random.default_rng(args.seed)
    if args.accuracy:
        accuracy(rng, args.accuracy)
    p1, p2 = samples(rng, args.batch)
    instances = generalized_instances(rng, max(args.batch, 100))
    solve_minimal(p1[:2], p2[:2], rng=0)  # load the start system
    best_batch = best_single = best_pose = math.inf
    for run in range(args.runs):
        tb, sol = time_xslit(p1, p2, run)
        ts = time_xslit_single(p1[:args.single], p2[:args.single], run) if args.single else 0
        tp = time_poselib(poselib, instances)
        best_batch, best_pose = min(best_batch, tb), min(best_pose, tp)
        best_single = min(best_single, ts) if args.single else math.nan
        complete = np.mean(sol.n_found == 56)
        print(f"run {run + 1}: xslit batch of {args.batch} {tb * 1e3:.2f} ms per sample "
              f"(all 56 solutions in {complete:.1%}), single {ts * 1e3:.2f} ms; "
              f"PoseLib gen_relpose_6pt {tp * 1e6:.1f} us; ratio batch / PoseLib "
              f"{tb / tp:.0f}", flush=True)
    print(f"\nbest: xslit {best_batch * 1e3:.2f} ms per sample in a batch of {args.batch}, "
          f"{best_single * 1e3:.2f} ms alone; PoseLib {best_pose * 1e6:.1f} us; "
          f"ratios {best_batch / best_pose:.0f} (batch) and {best_single / best_pose:.0f} "
          f"(single)")
    if args.robust:
        robust_comparison(rng, best_batch, len(sol.tensors) / args.batch, args.points)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
