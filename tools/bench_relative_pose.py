"""Calibrated relative pose: xslit against pycolmap, and xslit against the ML yardstick.

Run::

    .venv/bin/pip install -e '.[bench]'        # pycolmap, a benchmark-only dependency
    .venv/bin/python tools/bench_relative_pose.py            # 20 seeds, N = 1,000
    .venv/bin/python tools/bench_relative_pose.py --seeds 5 --n 300
    .venv/bin/python tools/bench_relative_pose.py --family 60     # no pycolmap needed

The correspondences are those of ``bench_find_tensor.py`` (crossed-slit stereo pair, 1 m
baseline, scene ball 4.5 m away, 1000 x 1000 images, sigma = 0.5 px, 30% uniform outliers),
with a new scene and new random intrinsics per seed. Both sides know the intrinsics.

xslit: ``findEpipolarTensor`` (USAC_DEFAULT, 1.5 px) then ``recoverTwoSlitPose(F, points1,
points2, intrinsics1, intrinsics2, mask=mask)``, which returns the metric ``(R, t)`` with
``X_cam2 = R X_cam1 + t``.

pycolmap: ``estimate_generalized_relative_pose`` (17-point generalized relative pose, GR6P
minimal solver, LO-RANSAC) on a generalized camera made of one pinhole per ray: the viewing ray
``(o, d)`` of each pixel (in its camera's own frame, from the known intrinsics) becomes a camera
with centre ``o`` and identity rotation (``cam_from_rig = [I | -o]``) that sees the point
``f (d_x / d_z, d_y / d_z)``, ``f`` being the mean magnification of the two-slit camera, so that
pycolmap's threshold in pixels means about the same as xslit's. Rig 1 holds the rays of image 1,
rig 2 those of image 2; the estimate ``rig2_from_rig1`` is the same metric pose (generalized
cameras observe scale). Building the rays and cameras is not timed (it stands for the
intrinsics that xslit takes as input); the call is.

Printed: median time per call, mean and median rotation error (degrees) and translation error
(cm, for the 1 m baseline) over the seeds, and the ratios (goal: xslit 10x faster, 5x more
accurate).

``--family K``: K seeded scenes of the family of ``tests/test_calibrated.py`` (the README's
intrinsics with slit distance 0.05-2 of either sign, points 2-50 deep, 0-50% outliers, poses
around the README's; 300 points, 0.5 px), each through ``findEpipolarTensor`` and
``recoverTwoSlitPose``, against the yardstick: maximum likelihood (``refine_metric_pose``)
started at the true pose on the true inliers. Counted: scenes whose pose is returned, raised
(undetermined or failed, with the reason), more than 1 degree worse than the yardstick, and
beyond 1.5x the yardstick in rotation or translation (floors 0.01 degree, 1 mm).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as in bench_find_tensor.py
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
from bench_find_tensor import THRESHOLD, make_two_slit_scene

import xslit
from xslit.cameras import compose_two_slit
from xslit.geometry.projective import matrix_from_rvec
from xslit.synthetic import random_rig_correspondences


def rotation_error_deg(R, R_true) -> float:
    c = (np.trace(R @ R_true.T) - 1) / 2
    return float(np.degrees(np.arccos(np.clip(c, -1.0, 1.0))))


def camera_rays(intrinsics, pixels):
    """Viewing rays ``(origin, direction)`` of pixels in the camera's own frame, (N, 3) each."""
    cam = compose_two_slit(intrinsics, np.zeros(3), np.zeros(3))
    r = cam.rays(pixels)
    return r[:, :3], r[:, 3:]


def pycolmap_inputs(scene):
    """One pinhole per ray: points2D, camera indices, cams_from_rig and cameras."""
    import pycolmap

    n = len(scene["points1"])
    pts, rigs = [], []
    intr = (scene["intrinsics1"], scene["intrinsics2"])
    f = float(np.mean([[i.fu, 2 * i.fv] for i in intr]))
    for intrinsics, px in zip(intr, (scene["points1"], scene["points2"]), strict=True):
        o, d = camera_rays(intrinsics, px)
        if np.any(d[:, 2] <= 0):
            raise RuntimeError("a viewing ray does not point forward; cannot make it a pinhole")
        pts.append(f * d[:, :2] / d[:, 2:])
        rigs.extend(pycolmap.Rigid3d(pycolmap.Rotation3d(np.eye(3)), -oi) for oi in o)
    camera = pycolmap.Camera(model="SIMPLE_PINHOLE", width=1000, height=1000,
                             params=[f, 0.0, 0.0])
    return (pts[0], pts[1], list(range(n)), list(range(n, 2 * n)), rigs, [camera] * (2 * n))


def run_pycolmap(scene, seed, threshold):
    import pycolmap

    args = pycolmap_inputs(scene)
    opts = pycolmap.RANSACOptions(max_error=threshold, random_seed=seed)
    t0 = time.perf_counter()
    out = pycolmap.estimate_generalized_relative_pose(*args, estimation_options=opts)
    dt = time.perf_counter() - t0
    if out is None or out.get("rig2_from_rig1") is None:
        return dt, None, None
    T = out["rig2_from_rig1"].matrix()
    return dt, T[:, :3], T[:, 3]


def run_xslit(scene, seed):
    t0 = time.perf_counter()
    F, mask = xslit.findEpipolarTensor(scene["points1"], scene["points2"], xslit.USAC_DEFAULT,
                                       THRESHOLD, 0.99, 10000, rng=seed)
    if F is None:
        return time.perf_counter() - t0, None, None
    _, R, t, _, _ = xslit.recoverTwoSlitPose(F, scene["points1"], scene["points2"],
                                             scene["intrinsics1"], scene["intrinsics2"],
                                             mask=mask)
    return time.perf_counter() - t0, np.asarray(R), np.ravel(t)


def summarise(name, times, rerr, terr, fails, seeds):
    if rerr:
        print(f"  {name:34}{1e3 * statistics.median(times):10.1f}{np.mean(rerr):10.4f}"
              f"{np.median(rerr):10.4f}{np.mean(terr):9.3f}{np.median(terr):9.3f}"
              f"{fails:>5}/{seeds}")
    else:
        print(f"  {name:34}{'':>48}{fails:>5}/{seeds}")


def family_scene(seed, n=300):
    """Scene ``seed`` of the family (see the module text); returns intrinsics, true pose,
    pixels and the true inlier mask."""
    rng = np.random.default_rng(1000 + seed)
    d = float(np.exp(rng.uniform(np.log(0.05), np.log(2.0)))) * rng.choice([-1.0, 1.0])
    near = float(np.exp(rng.uniform(np.log(2.0), np.log(25.0))))
    outliers = float(rng.choice([0.0, 0.1, 0.3, 0.5]))
    rvec = rng.normal(scale=0.1, size=3)
    tvec = np.array([-0.8, 0.05, 0.1]) + rng.normal(scale=0.2, size=3)
    intr = xslit.TwoSlitIntrinsics.from_parameters(fu=800, fv=600, u0=320, v0=240,
                                                   theta=np.radians(80), d=d)
    cam1 = xslit.composeTwoSlitProjection(intr, np.zeros(3), np.zeros(3))
    cam2 = xslit.composeTwoSlitProjection(intr, rvec, tvec)
    s = random_rig_correspondences(cam1, cam2, n, [-0.5 * near, -0.375 * near, near],
                                   [0.5 * near, 0.375 * near, 2 * near], sigma=0.5,
                                   outlier_ratio=outliers, rng=seed)
    p1, p2, inl = s["points1"], s["points2"], s["inliers"]
    return intr, rvec, tvec, p1, p2, inl, d, near, outliers


def run_family(count, verbose):
    """The yardstick comparison of ``--family``."""
    from xslit.sfm import refine_metric_pose

    returned = raised = far = beyond = 0
    times = []
    for seed in range(count):
        intr, rvec, tvec, p1, p2, inl, d, near, outliers = family_scene(seed)
        R_true = matrix_from_rvec(rvec)
        rv, tv, _, _ = refine_metric_pose(intr, intr, rvec, tvec, p1[inl], p2[inl])
        rot_ml, t_ml = rotation_error_deg(matrix_from_rvec(rv), R_true), np.linalg.norm(tv - tvec)
        F, mask = xslit.findEpipolarTensor(p1, p2, rng=seed)
        t0 = time.perf_counter()
        note = ""
        try:
            if F is None:
                raise ValueError("findEpipolarTensor failed")
            _, R, t, _, _ = xslit.recoverTwoSlitPose(F, p1, p2, intr, intr, mask=mask)
        except ValueError as err:
            raised += 1
            rot = trans = float("nan")
            note = str(err)[:90]
        else:
            returned += 1
            rot, trans = rotation_error_deg(R, R_true), float(np.linalg.norm(t.ravel() - tvec))
            far += rot > rot_ml + 1.0
            out = rot > 1.5 * rot_ml + 0.01 or trans > 1.5 * t_ml + 1e-3
            beyond += out
            note = "FAR" if rot > rot_ml + 1.0 else "beyond 1.5x" if out else ""
        times.append(time.perf_counter() - t0)
        if verbose or note:
            print(f"  scene {seed:3d} d {d:6.3f} depth {near:5.1f} outliers {outliers:.1f}: "
                  f"rotation {rot:8.3f} deg (ML {rot_ml:7.3f}), translation {trans:9.3f} "
                  f"(ML {t_ml:9.3f}) {note}")
    print(f"family of {count}: returned {returned}, raised {raised}; of the returned, "
          f"{far} more than 1 degree worse than the yardstick, {beyond} beyond 1.5x; "
          f"median time {1e3 * statistics.median(times):.0f} ms")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", type=int, default=0,
                    help="run this many family scenes against the yardstick (no pycolmap)")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--verbose", action="store_true", help="print every seed's errors")
    ap.add_argument("--colmap-threshold", type=float, default=THRESHOLD,
                    help="pycolmap max_error in pixels (default: xslit's threshold)")
    args = ap.parse_args(argv)
    if args.family:
        logging.disable(logging.WARNING)  # ambiguous poses are logged; the counts tell
        run_family(args.family, args.verbose)
        return
    import pycolmap

    have_xslit = hasattr(xslit, "recoverTwoSlitPose")
    print(f"xslit {xslit.__version__}, pycolmap {pycolmap.__version__}, numpy {np.__version__}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    print(f"N = {args.n}, 30% outliers, sigma 0.5 px, 1 m baseline, {args.seeds} seeds; "
          f"thresholds: xslit {THRESHOLD} px, pycolmap {args.colmap_threshold} px")
    res = {"pycolmap": ([], [], [], 0), "xslit": ([], [], [], 0)}
    for seed in range(args.seeds):
        scene = make_two_slit_scene(args.n, 1000 + seed)
        R_true = matrix_from_rvec(scene["pose2"][0])
        t_true = scene["pose2"][1]
        runs = [("pycolmap", lambda s=scene, k=seed: run_pycolmap(s, k, args.colmap_threshold))]
        if have_xslit:
            runs.append(("xslit", lambda s=scene, k=seed: run_xslit(s, k)))
        for name, fn in runs:
            times, rerr, terr, fails = res[name]
            dt, R, t = fn()
            times.append(dt)
            if R is None:
                res[name] = (times, rerr, terr, fails + 1)
                continue
            rerr.append(rotation_error_deg(R, R_true))
            terr.append(100 * np.linalg.norm(t - t_true))
            if args.verbose:
                print(f"  seed {seed:3d} {name:9} {1e3 * dt:8.1f} ms  rotation {rerr[-1]:8.4f} deg"
                      f"  translation {terr[-1]:9.3f} cm")
    print(f"  {'':34}{'time [ms]':>10}{'rot mean':>10}{'rot med':>10}{'t mean':>9}{'t med':>9}"
          f"{'fail':>8}")
    print(f"  {'':34}{'':>10}{'[deg]':>10}{'[deg]':>10}{'[cm]':>9}{'[cm]':>9}")
    summarise("pycolmap generalized rel. pose", *res["pycolmap"], args.seeds)
    if have_xslit:
        summarise("xslit findEpipolarTensor+recover", *res["xslit"], args.seeds)
        tp, rp, sp = (statistics.median(res["pycolmap"][0]), np.mean(res["pycolmap"][1]),
                      np.mean(res["pycolmap"][2]))
        tx, rx, sx = (statistics.median(res["xslit"][0]), np.mean(res["xslit"][1]),
                      np.mean(res["xslit"][2]))
        print(f"  speed-up pycolmap / xslit = {tp / tx:.2f} (goal >= 10); accuracy ratio "
              f"pycolmap / xslit: rotation {rp / rx:.2f}, translation {sp / sx:.2f} "
              "(goal >= 5)")
    else:
        print("  xslit.recoverTwoSlitPose is not available yet: only pycolmap was measured")
    print(f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
