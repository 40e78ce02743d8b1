"""Benchmark: large inputs, concurrent calls and repeated calls.

1. ``findEpipolarTensor`` (USAC_DEFAULT) and ``recoverTwoSlitPose`` (known intrinsics) on N
   correspondences of an X-slit pair (0.5 px, 30% outliers), against
   ``cv2.findFundamentalMat(USAC_MAGSAC)`` on a pinhole pair of the same N. Each call runs in
   a fresh process: the time, and the peak of the process's resident memory during the call
   above its value just before (sampled every 2 ms from /proc: it sees numpy's and OpenCV's
   allocations alike).
2. ``--threads K`` threads calling ``findEpipolarTensor`` on K different inputs at once give the
   results of sequential calls, bit for bit; likewise ``renderImage`` of K different views.
3. ``--repeat M`` repeated calls of ``findEpipolarTensor`` (N = 200): the resident memory after
   every tenth of them (flat when nothing leaks).

Run:  .venv/bin/python tools/bench_scale.py [--sizes 100000 1000000] [--threads 8]
      [--repeat 10000] [--jobs tensor cv2 pose]

``--jobs pose --threads 0 --repeat 0`` measures only ``recoverTwoSlitPose``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def _pinhole_pair(n, rng):
    X = np.column_stack([rng.uniform(-2, 2, n), rng.uniform(-1.5, 1.5, n),
                         rng.uniform(4, 8, n)])
    K = np.array([[800.0, 0, 500], [0, 800, 500], [0, 0, 1]])
    x1 = (X @ K.T)
    x2 = ((X - [0.8, 0, 0]) @ K.T)
    p1 = x1[:, :2] / x1[:, 2:] + rng.normal(scale=0.5, size=(n, 2))
    p2 = x2[:, :2] / x2[:, 2:] + rng.normal(scale=0.5, size=(n, 2))
    bad = rng.random(n) < 0.3
    p2[bad] = rng.uniform(0, 1000, (int(bad.sum()), 2))
    return p1.astype(np.float32), p2.astype(np.float32)


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


class _PeakMemory:
    """Peak resident memory (MiB) above the value at entry, sampled by a thread."""

    def __enter__(self):
        self.base = self.peak = _rss_mib()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, _rss_mib())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_mib())
        self.above = self.peak - self.base


def _child(job, n):
    """Run one measurement in this process; print a JSON line."""
    from xslit.synthetic import random_two_view_scene

    rng = np.random.default_rng(0)
    if job == "cv2":
        import cv2

        p1, p2 = _pinhole_pair(n, rng)
    else:
        import xslit

        s = random_two_view_scene(0, n, image_size=4000, sigma=0.5, outlier_ratio=0.3)
        p1, p2 = s["points1"], s["points2"]
    if job == "pose":
        F, mask = xslit.findEpipolarTensor(p1, p2, xslit.USAC_DEFAULT, 1.5)
    t0 = time.perf_counter()
    with _PeakMemory() as mem:
        if job == "cv2":
            F, mask = cv2.findFundamentalMat(p1, p2, cv2.USAC_MAGSAC, 1.5, 0.99, 10000)
            extra = {"inliers": int(mask.sum())}
        elif job == "tensor":
            F, mask = xslit.findEpipolarTensor(p1, p2, xslit.USAC_DEFAULT, 1.5)
            extra = {"inliers": int(mask.sum())}
        else:
            out = xslit.recoverTwoSlitPose(F, p1, p2, s["intrinsics1"], s["intrinsics2"],
                                           mask=mask)
            from xslit.geometry import matrix_from_rvec, rvec_from_matrix

            R_true = matrix_from_rvec(s["rvec"])
            extra = {"rotation_error_deg": float(np.degrees(np.linalg.norm(
                rvec_from_matrix(out[1].T @ R_true))))}
    seconds = time.perf_counter() - t0
    print(json.dumps({"job": job, "n": n, "seconds": seconds, "peak_mib": mem.above,
                      **extra}))


def _measure(job, n):
    out = subprocess.run([sys.executable, __file__, "--child", job, str(n)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _concurrency(k):
    import xslit
    from xslit.render import make_room_scene, pose_from_look_at
    from xslit.synthetic import random_two_view_scene

    scenes = [random_two_view_scene(i, 300, sigma=0.5, outlier_ratio=0.3) for i in range(k)]

    def tensor(s):
        return xslit.findEpipolarTensor(s["points1"], s["points2"])

    seq = [tensor(s) for s in scenes]
    with ThreadPoolExecutor(k) as pool:
        par = list(pool.map(tensor, scenes))
    same_tensor = all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                      for a, b in zip(seq, par, strict=True))
    scene = make_room_scene(0)
    intr = xslit.TwoSlitIntrinsics.from_parameters(176, 88, 160, 120, np.radians(80), 1.5)
    cams = [xslit.composeTwoSlitProjection(intr, *pose_from_look_at(
        [-0.8 + 0.2 * i, -4.2, 0.4], [0, 0, -0.3])) for i in range(k)]

    def render(c):
        return xslit.renderImage(scene, c, (320, 240), nthreads=1)["image"]

    seq_r = [render(c) for c in cams]
    with ThreadPoolExecutor(k) as pool:
        par_r = list(pool.map(render, cams))
    same_render = all(np.array_equal(a, b) for a, b in zip(seq_r, par_r, strict=True))
    return same_tensor, same_render


def _repeated(m):
    import xslit
    from xslit.synthetic import random_two_view_scene

    s = random_two_view_scene(0, 200, sigma=0.5, outlier_ratio=0.3)
    rss = []
    for i in range(m):
        xslit.findEpipolarTensor(s["points1"], s["points2"])
        if (i + 1) % max(1, m // 10) == 0:
            rss.append(_rss_mib())
    return rss


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=10_000)
    parser.add_argument("--jobs", nargs="*", choices=("tensor", "cv2", "pose"),
                        default=["tensor", "cv2", "pose"],
                        help="measurements of part 1, each in a fresh process")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return 0
    for n in args.sizes:
        for job in args.jobs:
            r = _measure(job, n)
            extra = {k: v for k, v in r.items() if k not in ("job", "n", "seconds", "peak_mib")}
            print(f"N={n:>9,} {job:<7} {r['seconds']:8.2f} s  peak +{r['peak_mib']:8.1f} MiB"
                  f"  {extra if extra else ''}", flush=True)
    if args.threads:
        same_tensor, same_render = _concurrency(args.threads)
        print(f"{args.threads} threads: findEpipolarTensor same as sequential: {same_tensor}; "
              f"renderImage same as sequential: {same_render}", flush=True)
    if args.repeat:
        t0 = time.perf_counter()
        rss = _repeated(args.repeat)
        print(f"{args.repeat} calls of findEpipolarTensor (N=200) in "
              f"{time.perf_counter() - t0:.0f} s; resident MiB after each tenth: "
              + ", ".join(f"{v:.0f}" for v in rss))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
