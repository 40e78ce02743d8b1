"""Time the 13-point minimal solver against PoseLib's generalized relative pose 6-point solver.

Both are minimal solvers of a two-view problem of non-central cameras with many complex
solutions (56 matrices C here, 64 poses for PoseLib's gen_relpose_6pt, a compiled elimination
template). xslit's solver runs on a batch of samples (as a robust estimator would call it) and
on single samples; PoseLib is called once per sample. The runs are interleaved (xslit batch,
xslit single, PoseLib, repeated --runs times); the summary gives the range over the runs of
the wall-clock times (medians per sample for single calls) and of the CPU times of the process
(which a busy machine inflates less), and the ratios of the best times to PoseLib's.

The paths are tracked by the compiled kernel when numba is installed (pip install numba, or
pip install xslit[fast]) and by numpy otherwise; --backends numba,numpy times both, interleaved.
The first line of the output says which backend ran.

With --robust, also the time of one round of hypotheses of a robust loop
(xslit.epipolar.minimal.minimal_hypotheses: --batch samples of --points correspondences with
50% outliers in one call) and the real tensors it gives per sample. Where 13-point samples pay
against 15-point ones in the robust loop itself is measured by tools/bench_minimal_sampling.py
(findEpipolarTensor(sampleSize=13)).

PoseLib is needed only here: pip install poselib (or pip install xslit[bench]).

With --accuracy N, first the fractions of N noise-free samples with all 56 complex solutions
found and with the true tensor among the real solutions.

Usage: python tools/bench_minimal.py [--batch 200] [--single 10] [--runs 3] [--robust]
                                     [--accuracy 1000] [--backends auto]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from xslit.epipolar import epipolar_tensor
from xslit.epipolar.minimal import HAVE_NUMBA, N_SOLUTIONS, minimal_hypotheses, solve_minimal
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


def backend_line(backend):
    """Which implementation tracks the paths for ``backend``."""
    if backend == "numpy" or (backend == "auto" and not HAVE_NUMBA):
        return "numpy (vectorised over all paths)"
    import numba

    return f"numba {numba.__version__} (compiled loops over paths)"


def accuracy(rng, n, backend):
    """Fractions of ``n`` samples with all 56 solutions and with the truth among the real ones."""
    p1, p2, F = samples(rng, n, truth=True)
    complete = found = 0
    for k in range(0, n, 250):
        sol = solve_minimal(p1[k:k + 250], p2[k:k + 250], rng=k, backend=backend)
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


def time_xslit(p1, p2, seed, backend):
    """Wall-clock and CPU time per sample of one batched call, and its solutions."""
    t0, c0 = time.perf_counter(), time.process_time()
    sol = solve_minimal(p1, p2, rng=seed, backend=backend)
    return ((time.perf_counter() - t0) / len(p1), (time.process_time() - c0) / len(p1)), sol


def time_xslit_single(p1, p2, seed, backend):
    """Median wall-clock time per single-sample call, and the mean CPU time."""
    times = []
    c0 = time.process_time()
    for a, b in zip(p1, p2, strict=True):
        t0 = time.perf_counter()
        solve_minimal(a, b, rng=seed, backend=backend)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), (time.process_time() - c0) / len(p1)


def time_poselib(poselib, instances):
    """Median wall-clock time per call, and the mean CPU time."""
    times = []
    c0 = time.process_time()
    for inst in instances:
        t0 = time.perf_counter()
        poselib.gen_relpose_6pt(*inst)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), (time.process_time() - c0) / len(instances)


def hypotheses_round(rng, n_samples, n_points, backend, runs):
    """Time per sample and real tensors per sample of one round of hypotheses
    (:func:`minimal_hypotheses`) on ``n_points`` correspondences with 50% outliers."""
    q1, q2, _ = samples(rng, 1, n_points, truth=True)
    q1, q2 = q1[0], q2[0]
    bad = rng.permutation(n_points)[: n_points // 2]
    q2 = q2.copy()
    q2[bad] = q2[rng.permutation(bad)]  # outliers: shuffled partners
    idx = np.stack([rng.choice(n_points, 13, replace=False) for _ in range(n_samples)])
    best, count = math.inf, 0
    for run in range(runs):
        t0 = time.perf_counter()
        tensors, _ = minimal_hypotheses(q1, q2, idx, rng=run, backend=backend)
        best = min(best, (time.perf_counter() - t0) / n_samples)
        count = len(tensors)
    return best, count / n_samples


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
                    help="also time a robust loop's round of 13-point hypotheses")
    ap.add_argument("--accuracy", type=int, default=0, metavar="N",
                    help="first measure completeness and recovery on N samples")
    ap.add_argument("--points", type=int, default=1000,
                    help="correspondences of the round of --robust (default 1000)")
    ap.add_argument("--backends", default="auto",
                    help="comma-separated backends of the solver to time, interleaved: auto, "
                         "numba, numpy (default auto)")
    args = ap.parse_args(argv)
    backends = args.backends.split(",")
    try:
        import poselib
    except ImportError:
        print("PoseLib is not installed: pip install poselib (or pip install xslit[bench])",
              file=sys.stderr)
        return 1
    for backend in backends:
        if backend not in ("auto", "numba", "numpy"):
            ap.error(f"--backends: unknown backend {backend!r}")
        print(f"backend {backend}: {backend_line(backend)}")
    rng = np.random.default_rng(args.seed)
    if args.accuracy:
        accuracy(rng, args.accuracy, backends[0])
    p1, p2 = samples(rng, args.batch)
    instances = generalized_instances(rng, max(args.batch, 100))
    for backend in backends:  # load the start system, compile (or load) the kernel
        solve_minimal(p1[:2], p2[:2], rng=0, backend=backend)
    # Per backend: wall-clock and CPU times of the batch and of single samples, per run.
    times = {b: [] for b in backends}
    pose = []
    for run in range(args.runs):
        line = f"run {run + 1}:"
        for backend in backends:
            tb, sol = time_xslit(p1, p2, run, backend)
            ts = (time_xslit_single(p1[:args.single], p2[:args.single], run, backend)
                  if args.single else (math.nan, math.nan))
            times[backend].append(tb + ts)
            complete = np.mean(sol.n_found == 56)
            line += (f" {backend} batch of {args.batch} {tb[0] * 1e3:.2f} ms per sample (CPU "
                     f"{tb[1] * 1e3:.2f}; all 56 solutions in {complete:.1%}), single "
                     f"{ts[0] * 1e3:.2f} ms (CPU {ts[1] * 1e3:.2f});")
        pose.append(time_poselib(poselib, instances))
        print(f"{line} PoseLib gen_relpose_6pt {pose[-1][0] * 1e6:.1f} us (CPU "
              f"{pose[-1][1] * 1e6:.1f})", flush=True)
    print()
    tp = min(p[0] for p in pose)
    for backend, rows in times.items():
        t = np.array(rows) * 1e3  # (runs, 4): batch wall, batch CPU, single wall, single CPU
        lo, hi = t.min(axis=0), t.max(axis=0)
        print(f"{backend}: batch of {args.batch} {lo[0]:.2f}-{hi[0]:.2f} ms per sample (CPU "
              f"{lo[1]:.2f}-{hi[1]:.2f}), single {lo[2]:.2f}-{hi[2]:.2f} ms (CPU "
              f"{lo[3]:.2f}-{hi[3]:.2f}); best / PoseLib: {lo[0] / tp / 1e3:.1f} (batch), "
              f"{lo[2] / tp / 1e3:.1f} (single)")
    print(f"PoseLib gen_relpose_6pt: {tp * 1e6:.1f}-{max(p[0] for p in pose) * 1e6:.1f} us "
          f"(CPU {min(p[1] for p in pose) * 1e6:.1f}-{max(p[1] for p in pose) * 1e6:.1f})")
    if args.robust:
        th, real = hypotheses_round(rng, args.batch, args.points, backends[0], args.runs)
        print(f"  one round of {args.batch} hypotheses (minimal_hypotheses, {args.points} "
              f"correspondences, 50% outliers): {th * 1e3:.2f} ms per sample, {real:.1f} real "
              f"tensors per sample")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
