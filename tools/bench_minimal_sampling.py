"""Benchmark: the robust estimate with 13-point minimal samples against 15-point samples.

Runs ``xslit.findEpipolarTensor(points1, points2, method, 1.5, 0.99, maxIters, rng=seed,
sampleSize=s)`` for s = 13 and 15 on the same scenes, interleaved (13, 15, 13, 15, ...) in
one process, and prints per outlier ratio the samples drawn by the robust loop (its
iterations), the wall-clock and CPU time of the call, and the inlier recall and precision
against the ground-truth labels, then the ratios 13 / 15.

Scenes: ``xslit.synthetic.random_two_view_scene(seed, --points, sigma=0.5,
outlier_ratio=r)``: a calibrated two-slit rig, points filling both 1000 x 1000 images, noise of
0.5 px per coordinate, outliers with a uniform second point. Threshold 1.5 px (3 sigma).

By the numbers of draws alone (RANSAC's k_s = log(1 - p) / log(1 - w^s) for an inlier ratio w)
13-point samples need about 1 / w^2 times fewer: 2.8 at 40% outliers, 4 at 50%, 11 at 70%.
Each costs the minimal solver's homotopy (milliseconds; the numba kernel of the extra ``fast``
when installed, numpy otherwise) against a null vector (microseconds). The last lines give the
CPU time per sample of a round of the loop (64 uniform samples: hypotheses and their
residuals on all correspondences, best of 3, per scene), the outlier ratio above which
13-point samples cost less in total by those costs and k_s (without the iteration cap), and
the outlier ratio above which 15-point samples reach the cap of --max-iters, and the cost
of a 13-point sample at which the option would pay at each outlier ratio.

Samples are counted by recording the estimate that findEpipolarTensor computes (its
iterations are not among cv2's return values).

Usage: python tools/bench_minimal_sampling.py [--outliers 0.4,0.5] [--scenes 3]
                                              [--points 300] [--method usac_default]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import time

# Single-threaded BLAS unless the caller says otherwise: on a shared 2-core machine OpenBLAS's
# spinning threads make the small factorisations of the loop many times slower. Must be set
# before numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

import xslit
import xslit.api.epipolar as api
from xslit.epipolar.minimal import HAVE_NUMBA
from xslit.epipolar.minimal_sampling import epipolar_problem
from xslit.robust.sampling import required_iterations
from xslit.synthetic import random_two_view_scene

SIGMA = 0.5
THRESHOLD = 3 * SIGMA
CONFIDENCE = 0.99
METHODS = {"usac_default": xslit.USAC_DEFAULT, "usac_accurate": xslit.USAC_ACCURATE,
           "ransac": xslit.FM_RANSAC}


@contextlib.contextmanager
def recorded_estimates():
    """Collect the :class:`~xslit.epipolar.estimate.EpipolarEstimate` of every
    findEpipolarTensor call inside the block (a list, appended to)."""
    seen = []
    original = api.estimate_epipolar_tensor

    def record(*args, **kwargs):
        est = original(*args, **kwargs)
        seen.append(est)
        return est

    api.estimate_epipolar_tensor = record
    try:
        yield seen
    finally:
        api.estimate_epipolar_tensor = original


def run(scene, method, max_iters, seed, size):
    """One call: samples drawn, wall-clock and CPU seconds, recall, precision, success."""
    with recorded_estimates() as seen:
        t0, c0 = time.perf_counter(), time.process_time()
        F, mask = xslit.findEpipolarTensor(scene["points1"], scene["points2"], method, THRESHOLD,
                                           CONFIDENCE, max_iters, rng=seed, sampleSize=size)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    inl, truth = mask[:, 0] == 1, scene["inliers"]
    hit = np.count_nonzero(inl & truth)
    return dict(iterations=seen[-1].iterations, wall=wall, cpu=cpu,
                recall=hit / truth.sum(), precision=hit / max(inl.sum(), 1),
                success=F is not None)


def sample_cost(scene, size, seed, batch=64, repeats=3):
    """CPU seconds per sample of the loop's work on a round of ``batch`` uniform samples: the
    hypotheses (:meth:`fit_samples <xslit.epipolar.estimate.EpipolarProblem.fit_samples>`)
    and their residuals on all correspondences; the best of ``repeats`` rounds."""
    rng = np.random.default_rng(seed)
    problem = epipolar_problem(scene["points1"], scene["points2"], size, rng)
    n = problem.n_points
    best = math.inf
    for _ in range(repeats):
        idx = np.stack([rng.choice(n, size, replace=False) for _ in range(batch)])
        c0 = time.process_time()
        models, _ = problem.fit_samples(idx)
        problem.residuals(models)
        best = min(best, (time.process_time() - c0) / batch)
    return best


def spread(values, fmt):
    """``median (min-max)`` of ``values``."""
    lo, hi = min(values), max(values)
    return f"{fmt.format(statistics.median(values))} ({fmt.format(lo)}-{fmt.format(hi)})"


def crossover(cost13, cost15, max_iters, confidence):
    """Outlier ratios above which 13-point samples cost less (uncapped), and above which
    15-point samples reach ``max_iters``."""
    outliers = np.linspace(0.0, 0.99, 991)
    pays = caps = None
    for r in outliers:
        k13 = required_iterations(1.0 - r, 13, confidence)
        k15 = required_iterations(1.0 - r, 15, confidence)
        if pays is None and k13 > 0 and k13 * cost13 < k15 * cost15:
            pays = r
        if caps is None and k15 > max_iters:
            caps = r
    return pays, caps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--outliers", default="0.4,0.5",
                    help="comma-separated outlier ratios (default 0.4,0.5)")
    ap.add_argument("--scenes", type=int, default=3, help="scenes per ratio (default 3)")
    ap.add_argument("--points", type=int, default=300,
                    help="correspondences per scene (default 300)")
    ap.add_argument("--method", default="usac_default", choices=sorted(METHODS),
                    help="findEpipolarTensor's method (default usac_default: PROSAC on the "
                         "density of the matches; usac_accurate samples uniformly, with local "
                         "optimisation, as RANSAC's formula assumes)")
    ap.add_argument("--max-iters", type=int, default=10000,
                    help="findEpipolarTensor's maxIters (default 10000)")
    ap.add_argument("--seed", type=int, default=0, help="first scene seed (default 0)")
    args = ap.parse_args(argv)
    ratios = [float(r) for r in args.outliers.split(",")]
    method = METHODS[args.method]
    solver = "numba (compiled kernel)" if HAVE_NUMBA else "numpy (no numba installed)"
    # USAC_ACCURATE raises the confidence to 0.999 (findEpipolarTensor's documentation).
    confidence = 0.999 if args.method == "usac_accurate" else CONFIDENCE
    floor = f" (raised to {confidence} by the method)" if confidence != CONFIDENCE else ""
    print(f"findEpipolarTensor, {args.method}, threshold {THRESHOLD} px, confidence "
          f"{CONFIDENCE}{floor}, maxIters {args.max_iters}; {args.points} correspondences, sigma "
          f"{SIGMA} px; minimal solver: {solver}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    # Load the start system and compile (or load) the solver's kernel before timing.
    warm = random_two_view_scene(args.seed, 40, outlier_ratio=0.1)
    run(warm, method, 64, 0, 13)
    per_sample = {13: [], 15: []}  # CPU per sample of a round of the loop (sample_cost)
    rows = []
    for ratio in ratios:
        res = {13: [], 15: []}
        for k in range(args.scenes):
            seed = args.seed + k
            scene = random_two_view_scene(seed, args.points, sigma=SIGMA, outlier_ratio=ratio)
            for size in (13, 15):
                r = run(scene, method, args.max_iters, seed, size)
                res[size].append(r)
                per_sample[size].append(sample_cost(scene, size, seed))
                print(f"  {ratio:.0%} outliers, scene {seed}, {size}-point: "
                      f"{r['iterations']:,} samples, {r['wall']:.2f} s (CPU {r['cpu']:.2f}), "
                      f"recall {r['recall']:.3f}, precision {r['precision']:.3f}"
                      + ("" if r["success"] else ", failed"), flush=True)
        rows.append((ratio, res))
    print()
    print(f"{'outliers':>8}  {'size':>4}  {'samples':>22}  {'time s':>22}  {'CPU s':>22}  "
          f"{'recall':>19}  {'precision':>19}  ok")
    for ratio, res in rows:
        for size in (13, 15):
            rs = res[size]
            print(f"{ratio:>8.0%}  {size:>4}  "
                  f"{spread([r['iterations'] for r in rs], '{:,.0f}'):>22}  "
                  f"{spread([r['wall'] for r in rs], '{:.2f}'):>22}  "
                  f"{spread([r['cpu'] for r in rs], '{:.2f}'):>22}  "
                  f"{spread([r['recall'] for r in rs], '{:.3f}'):>19}  "
                  f"{spread([r['precision'] for r in rs], '{:.3f}'):>19}  "
                  f"{sum(r['success'] for r in rs)}/{len(rs)}")
        it = [a["iterations"] / b["iterations"] for a, b in zip(res[13], res[15], strict=True)]
        wall = [a["wall"] / b["wall"] for a, b in zip(res[13], res[15], strict=True)]
        cpu = [a["cpu"] / b["cpu"] for a, b in zip(res[13], res[15], strict=True)]
        w = 1.0 - ratio
        formula = (required_iterations(w, 13, confidence)
                   / required_iterations(w, 15, confidence))
        print(f"{'':>8}  13/15: samples {spread(it, '{:.2f}')} (RANSAC's formula "
              f"{formula:.2f}), time {spread(wall, '{:.1f}')}, CPU {spread(cpu, '{:.1f}')}")
    c13 = statistics.median(per_sample[13])
    c15 = statistics.median(per_sample[15])
    pays, caps = crossover(c13, c15, args.max_iters, confidence)
    print(f"\nCPU per sample of a round of 64 (hypotheses and their residuals, median over the "
          f"scenes): 13-point {c13 * 1e3:.2f} ms, 15-point {c15 * 1e3:.3f} ms "
          f"({c13 / c15:.0f} times)")
    print("13-point samples cost less in total above "
          + (f"{pays:.0%} outliers" if pays is not None else "no outlier ratio")
          + f" (RANSAC's draws without a cap); 15-point samples need more than "
          f"{args.max_iters:,} draws above {caps:.0%} outliers")
    for ratio in ratios:
        w = 1.0 - ratio
        gain = required_iterations(w, 15, confidence) / required_iterations(w, 13, confidence)
        print(f"at {ratio:.0%} outliers 13-point samples pay when one costs less than "
              f"{gain:.1f} 15-point samples: {gain * c15 * 1e3:.3f} ms, {c13 / (gain * c15):.0f} "
              f"times less than today's")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
