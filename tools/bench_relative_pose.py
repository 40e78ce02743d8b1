"""Calibrated relative pose: xslit against pycolmap, and xslit against the ML yardstick.

Run::

    .venv/bin/pip install -e '.[bench]'        # pycolmap, a benchmark-only dependency
    .venv/bin/python tools/bench_relative_pose.py            # 20 seeds, N = 1,000
    .venv/bin/python tools/bench_relative_pose.py --seeds 5 --n 300
    .venv/bin/python tools/bench_relative_pose.py --family 60     # no pycolmap needed
    .venv/bin/python tools/bench_relative_pose.py --sweep 60 --max-n 2000 [--seed S]

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

``--sweep K [--max-n N] [--seed S] [--timings T] [--colmap-timeout SECONDS]``: both estimators
on the K scenes ``xslit.synthetic.random_sweep_scene(seed, max_n=N)``, seeds S to S + K - 1
(two-slit, mixed and pushbroom pairs, 0-70% outliers, noise 0.1-2 px), with the threshold 3
sigma of each scene on both sides. xslit is called as ``tools/sweep_two_view.py`` calls it
(``findEpipolarTensor(USAC_DEFAULT)``, then ``recoverTwoSlitPose`` with the same
``reprojThreshold``); a ValueError it raises (pose undetermined or failed) is counted as a
reported failure with its reason, not as a wrong pose. pycolmap gets one pinhole per ray as
above, the rays of each image in its own camera's frame (camera 2's is ``X2 = R X1 + t``); a
pushbroom pixel's ray starts on the plane of its finite slit and its direction depends on the
sensor coordinate only (the along-track coordinate moves the origin). Every scene checks that
the rays of the noise-free projections pass through the true points. The common focal length
is the mean of the two cameras' magnifications in pixels per unit of ``tan`` of the ray angle:
``fu`` and ``K2[0, 0]`` for a two-slit camera; ``f`` across track and ``K1[0, 0]`` times the
median depth of the scene along track for a pushbroom camera, whose along-track pixel is a
fixed distance. pycolmap runs with xslit's RANSAC budget (confidence 0.99, at most 10,000
trials; its default minimum of 1,000 trials kept) in a child process, so that a call can be
stopped after ``--colmap-timeout`` seconds (60 by default); such a call counts as a failure
whose time is the limit, and is not repeated. Calls are interleaved per scene (pycolmap,
xslit, T times, 3 by default) and each side's time is the minimum of its T timings.

Printed per scene with ``--verbose``, then per kind, per outlier-ratio bin and overall: the
median time per call of each side and their ratio; mean and median rotation error (degrees)
and translation error (percent of ``|t|``) of each side over the scenes where both returned a
pose, with the ratios pycolmap / xslit; failures of each side; how many scenes each side has
within 1.5x of the ML-from-truth yardstick (``xslit.synthetic.score_two_view``: rotation and
translation errors over the larger of the yardstick's error and its predicted standard
deviation), among the scenes where the yardstick is determined; and the median fraction of
the true inliers whose Sampson distance between their two ray pinholes under the true pose is
below pycolmap's threshold (how well that threshold matches 3 sigma in the images). Then, per
kind and overall, the yardstick's own errors (maximum likelihood from the truth on the
correspondences within the threshold of the true tensor, ``xslit.synthetic.ml_within_threshold``)
over the same scenes, and the ratios of pycolmap's and xslit's means and medians to its: an
estimator as good as the data allow has ratios near 1, so pycolmap's ratio to the yardstick
bounds what its ratio to any estimator can be on these scenes. Then the median of the
per-scene time ratios, the failure reasons with their seeds, and the seeds of the scenes where
pycolmap does better than xslit against the yardstick.
"""

from __future__ import annotations

import argparse
import itertools
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
from xslit.cameras import PushbroomIntrinsics, compose_camera, compose_two_slit
from xslit.geometry.projective import matrix_from_rvec
from xslit.synthetic import (
    SWEEP_BINS,
    SWEEP_KINDS,
    ml_from_truth,
    ml_within_threshold,
    random_rig_correspondences,
    random_sweep_scene,
    score_two_view,
)


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


def rays_in_own_frame(intrinsics, pixels):
    """Viewing rays ``(origin, direction)`` of pixels in the camera's own frame, (N, 3) each,
    for two-slit and pushbroom intrinsics (the camera composed at the identity pose)."""
    r = compose_camera(intrinsics, np.zeros(3), np.zeros(3)).rays(pixels)
    return r[:, :3], r[:, 3:]


def magnifications(intrinsics, depth):
    """Pixels per unit of ``tan`` of the ray angle on each image axis at the scene's ``depth``.

    Two-slit: ``fu`` and ``K2[0, 0]``. Pushbroom: the sensor's ``f`` across track; along
    track a pixel is a fixed distance ``1 / K1[0, 0]`` (the speed), which is an angle of
    ``1 / (K1[0, 0] depth)`` seen from the scene, so the magnification there grows with depth.
    """
    if isinstance(intrinsics, PushbroomIntrinsics):
        return [intrinsics.f, intrinsics.K1[0, 0] * depth]
    return [intrinsics.fu, intrinsics.K2[0, 0]]


def check_rays(scene, tol=1e-6):
    """The rays of the noise-free projections of the true points pass through those points
    (camera 1's frame for image 1, camera 2's own frame ``R X + t`` for image 2); the
    directions point to the scene. A wrong ray model would make the comparison meaningless,
    so a violation stops the benchmark."""
    X1 = scene.X[scene.inliers]
    X2 = X1 @ scene.R.T + scene.t
    for k, (cam, intr, X) in enumerate(((scene.camera1, scene.intrinsics1, X1),
                                        (scene.camera2, scene.intrinsics2, X2)), 1):
        o, d = rays_in_own_frame(intr, cam.project(X1))
        lam = np.einsum("ij,ij->i", X - o, d) / np.einsum("ij,ij->i", d, d)
        miss = np.linalg.norm(o + lam[:, None] * d - X, axis=1) / np.linalg.norm(X - o, axis=1)
        if not (np.all(miss < tol) and np.all(lam > 0)):
            raise RuntimeError(f"scene {scene.seed}: rays of image {k} miss the true points "
                               f"(largest relative distance {miss.max():.2g}, smallest depth "
                               f"along the ray {lam.min():.3g})")


def sweep_pycolmap_inputs(scene):
    """As :func:`pycolmap_inputs`, for a sweep scene, as plain arrays: the pinhole points of
    the two images, the ray origins (one pinhole per ray, identity rotation, centre at the
    origin) and the focal length ``f`` they share, the mean magnification of the two cameras
    at the median depth of the true points (see :func:`magnifications`), so that a threshold
    in pixels means about what it means in the images. Returns those and the rays."""
    X1 = scene.X[scene.inliers]
    depths = (np.median(X1[:, 2]), np.median((X1 @ scene.R.T + scene.t)[:, 2]))
    intr = (scene.intrinsics1, scene.intrinsics2)
    f = float(np.mean([m for i, z in zip(intr, depths, strict=True)
                       for m in magnifications(i, z)]))
    pts, origins, rays = [], [], []
    for intrinsics, px in zip(intr, (scene.points1, scene.points2), strict=True):
        o, d = rays_in_own_frame(intrinsics, px)
        if np.any(d[:, 2] <= 1e-9 * np.linalg.norm(d, axis=1)):
            raise RuntimeError(f"scene {scene.seed}: a viewing ray does not point forward; "
                               "cannot make it a pinhole with identity rotation")
        rays.append((o, d))
        pts.append(f * d[:, :2] / d[:, 2:])
        origins.append(o)
    return (pts[0], pts[1], np.vstack(origins), f, scene.image_size), rays


def pinhole_sampson(rays, R, t, f):
    """Sampson distance (pixels of focal length ``f``) of each correspondence between its two
    ray pinholes under the pose ``X2 = R X1 + t``: the error pycolmap thresholds. Used with the
    true pose it tells which fraction of the true inliers pycolmap's threshold can keep."""
    (o1, d1), (o2, d2) = rays
    x1, x2 = d1 / d1[:, 2:], d2 / d2[:, 2:]
    b = o1 @ R.T + t - o2  # centre of pinhole 1 in the frame of pinhole 2
    Rx1 = x1 @ R.T
    Ex1 = np.cross(b, Rx1)  # [b]_x R x1
    Etx2 = -np.einsum("ji,nj->ni", R, np.cross(b, x2))  # (E^T x2) = -R^T [b]_x x2
    r = np.einsum("ni,ni->n", x2, Ex1)
    den = Ex1[:, 0] ** 2 + Ex1[:, 1] ** 2 + Etx2[:, 0] ** 2 + Etx2[:, 1] ** 2
    return f * np.abs(r) / np.sqrt(den)


def _pycolmap_worker(conn):
    """Serve pycolmap calls in a child process (so that a call can be given a time limit):
    receives ``(arrays, seed, max_error)``, sends ``(seconds, R, t, mask)``; building the
    rig is not timed."""
    import pycolmap

    while (job := conn.recv()) is not None:
        (p1, p2, origins, f, (w, h)), seed, max_error = job
        n = len(p1)
        rigs = [pycolmap.Rigid3d(pycolmap.Rotation3d(np.eye(3)), -o) for o in origins]
        camera = pycolmap.Camera(model="SIMPLE_PINHOLE", width=w, height=h,
                                 params=[f, 0.0, 0.0])
        # xslit's confidence and iteration cap: pycolmap's own (0.9999, 100,000 trials) run
        # for minutes per call at 60-70% outliers; its minimum of 1,000 trials is kept, being
        # part of its design.
        opts = pycolmap.RANSACOptions(max_error=max_error, random_seed=seed, confidence=0.99,
                                      max_num_trials=10000)
        t0 = time.perf_counter()
        out = pycolmap.estimate_generalized_relative_pose(
            p1, p2, list(range(n)), list(range(n, 2 * n)), rigs, [camera] * (2 * n),
            estimation_options=opts)
        dt = time.perf_counter() - t0
        if out is None or out.get("rig2_from_rig1") is None:
            conn.send((dt, None, None, None))
        else:
            T = out["rig2_from_rig1"].matrix()
            conn.send((dt, T[:, :3], T[:, 3], np.asarray(out["inlier_mask"], bool)))


class PycolmapRunner:
    """pycolmap in a child process; a call that exceeds ``timeout`` seconds is stopped (the
    process restarted) and reported as a failure."""

    def __init__(self, timeout):
        import multiprocessing

        self.timeout = timeout
        self.ctx = multiprocessing.get_context("fork")
        self.proc = None

    def _start(self):
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_pycolmap_worker, args=(child,), daemon=True)
        self.proc.start()

    def __call__(self, arrays, seed, max_error):
        """``(seconds, R, t, mask, failure)``."""
        if self.proc is None:
            self._start()
        self.conn.send((arrays, seed, max_error))
        if self.conn.poll(self.timeout):
            dt, R, t, mask = self.conn.recv()
            return dt, R, t, mask, None if R is not None else "no pose"
        self.close()
        return self.timeout, None, None, None, f"time limit {self.timeout:g} s"

    def close(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
            self.proc = None


def sweep_call_xslit(scene, seed, threshold):
    """xslit's estimate as ``tools/sweep_two_view.py`` makes it: (R, t, mask, failure)."""
    p1, p2 = scene.points1, scene.points2
    F, mask = xslit.findEpipolarTensor(p1, p2, xslit.USAC_DEFAULT, threshold, rng=seed)
    if F is None:
        return None, None, mask, "tensor: not found"
    try:
        _, R, t, _, _ = xslit.recoverTwoSlitPose(F, p1, p2, scene.intrinsics1,
                                                 scene.intrinsics2, mask=mask,
                                                 reprojThreshold=threshold)
    except ValueError as err:  # undetermined or failed, with the reason
        return None, None, mask, f"pose: {err}"
    return np.asarray(R), np.ravel(t), mask, None


def sweep_scene_record(seed, max_n, timings, colmap):
    """Both estimators on sweep scene ``seed``: interleaved calls, the minimum of ``timings``
    timings of each (the estimates are deterministic, so the repeats differ only in time; a
    pycolmap call stopped at the time limit is not repeated)."""
    scene = random_sweep_scene(seed, max_n=max_n)
    check_rays(scene)
    threshold = 3 * scene.sigma
    arrays, rays = sweep_pycolmap_inputs(scene)
    f = arrays[3]
    rec = {"seed": seed, "kind": scene.params["kind"], "n": len(scene.inliers),
           "outlier_ratio": scene.params["outlier_ratio"], "sigma": scene.sigma, "f": f}
    rec["colmap_ceiling"] = float(np.mean(pinhole_sampson(rays, scene.R, scene.t, f)
                                          [scene.inliers] < threshold))
    best = {"pycolmap": np.inf, "xslit": np.inf}
    out_c = None
    for _ in range(timings):
        if out_c is None or out_c[3] is None or not out_c[3].startswith("time limit"):
            dt, *out_c = colmap(arrays, seed, threshold)
            best["pycolmap"] = min(best["pycolmap"], dt)
        t0 = time.perf_counter()
        out_x = sweep_call_xslit(scene, seed, threshold)
        best["xslit"] = min(best["xslit"], time.perf_counter() - t0)
    y = ml_from_truth(scene)
    rec["determined"] = y.determined
    y_data = ml_within_threshold(scene, threshold, yardstick=y)
    rec["yardstick"] = {"rot": y_data.rotation_error_deg,
                        "trans": 100 * y_data.translation_rel_error}
    for name, (R, t, mask, failure) in (("pycolmap", out_c), ("xslit", out_x)):
        side = {"time": best[name], "failure": failure}
        if R is not None:
            s = score_two_view(scene, mask if mask is not None else np.zeros(rec["n"]), R, t,
                               threshold=threshold, yardstick=y)
            side.update(rot=s["rotation_error_deg"], trans=100 * s["translation_rel_error"],
                        within=s["pose_within"],
                        ratio=max(s["rotation_ratio"], s["translation_ratio"]))
        rec[name] = side
    return rec


def _stat(values, fn):
    return fn(values) if values else float("nan")


def kinds(records):
    """``(label, records)`` of each kind of pair present in ``records``."""
    for kind in SWEEP_KINDS:
        sel = [r for r in records if r["kind"] == kind]
        if sel:
            yield f"kind {kind}", sel


def sweep_region_line(label, recs):
    """One row of the sweep table for the records ``recs``."""
    tc = [r["pycolmap"]["time"] for r in recs]
    tx = [r["xslit"]["time"] for r in recs]
    both = [r for r in recs if "rot" in r["pycolmap"] and "rot" in r["xslit"]]
    cols = []
    for key in ("rot", "trans"):
        c = [r["pycolmap"][key] for r in both]
        x = [r["xslit"][key] for r in both]
        cols += [_stat(c, np.mean), _stat(x, np.mean), _stat(c, np.mean) / _stat(x, np.mean),
                 _stat(c, np.median), _stat(x, np.median),
                 _stat(c, np.median) / _stat(x, np.median)]
    det = [r for r in recs if r["determined"]]
    within = [sum(1 for r in det if r[s].get("within")) for s in ("pycolmap", "xslit")]
    fail_c = sum(1 for r in recs if r["pycolmap"]["failure"])
    fail_x = sum(1 for r in recs if r["xslit"]["failure"])
    tmc, tmx = 1e3 * statistics.median(tc), 1e3 * statistics.median(tx)
    print(f"  {label:18}{len(recs):4}{tmc:9.0f}{tmx:8.0f}{tmc / tmx:7.1f}"
          + "".join(f"{v:9.3g}" for v in cols)
          + f"{fail_c:4}{fail_x:4}{within[0]:5}{within[1]:4}/{len(det):<3}"
          + f"{statistics.median(r['colmap_ceiling'] for r in recs):6.3f}")


def yardstick_region_line(label, recs):
    """One row of the yardstick table: the errors of maximum likelihood from the truth on the
    correspondences within the threshold, over the scenes of ``recs`` where both estimators
    returned a pose, and pycolmap's ratios against them (the bounds of its ratios against
    an estimator as good as the data allow) and xslit's."""
    both = [r for r in recs if "rot" in r["pycolmap"] and "rot" in r["xslit"]]
    cols = []
    for key in ("rot", "trans"):
        c, x = ([r[s][key] for r in both] for s in ("pycolmap", "xslit"))
        y = [r["yardstick"][key] for r in both]
        for fn in (np.mean, np.median):
            cy = _stat(y, fn)
            cols += [cy, _stat(c, fn) / cy, _stat(x, fn) / cy]
    print(f"  {label:18}{len(both):4}" + "".join(f"{v:9.3g}" for v in cols))


def run_sweep(count, max_n, seed0, timings, timeout, verbose):
    """The sweep comparison of ``--sweep``."""
    import pycolmap

    print(f"xslit {xslit.__version__}, pycolmap {pycolmap.__version__}, numpy {np.__version__}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    print(f"{count} sweep scenes (seeds {seed0}-{seed0 + count - 1}, max-n {max_n}); threshold "
          f"3 sigma for both; interleaved calls, minimum of {timings} timings each")
    records = []
    colmap = PycolmapRunner(timeout)
    # One untimed call first: a process's first estimate loads the compiled kernels from
    # numba's cache (about 0.4 s), which would otherwise be counted on the first scene.
    warm = random_sweep_scene(seed0, max_n=max_n)
    sweep_call_xslit(warm, seed0, 3 * warm.sigma)
    for seed in range(seed0, seed0 + count):
        r = sweep_scene_record(seed, max_n, timings, colmap)
        records.append(r)
        if verbose:
            parts = []
            for s in ("pycolmap", "xslit"):
                v = r[s]
                err = (f"rot {v['rot']:8.4f} t {v['trans']:8.3f}% x{v['ratio']:7.2f}"
                       if "rot" in v else f"{v['failure'][:60]}")
                parts.append(f"{s} {1e3 * v['time']:7.0f} ms {err}")
            print(f"  seed {seed:4d} {r['kind']:8} n {r['n']:5d} out {r['outlier_ratio']:.2f} "
                  f"det {int(r['determined'])} ceil {r['colmap_ceiling']:.3f} | "
                  + " | ".join(parts), flush=True)
    colmap.close()
    load = os.getloadavg()[0]
    print("\ncolumns: scenes; median time per call [ms] pycolmap, xslit, ratio pycolmap/xslit; "
          "rotation error [deg] mean pycolmap, xslit, ratio, median pycolmap, xslit, ratio; "
          "translation error [% of |t|] the same six; failures pycolmap, xslit; within 1.5x of "
          "the yardstick pycolmap, xslit / determined scenes; median fraction of the true "
          "inliers pycolmap's threshold keeps under the true pose. Errors over the scenes "
          "where both returned a pose.")
    print(f"  {'region':18}{'#':>4}{'t col':>9}{'t xs':>8}{'x':>7}"
          + "".join(f"{h:>9}" for h in ("rMn col", "rMn xs", "ratio", "rMd col", "rMd xs",
                                        "ratio", "tMn col", "tMn xs", "ratio", "tMd col",
                                        "tMd xs", "ratio"))
          + f"{'fc':>4}{'fx':>4}{'wc':>5}{'wx/det':>8}{'ceil':>6}")
    for label, sel in kinds(records):
        sweep_region_line(label, sel)
    edges = SWEEP_BINS["outlier_ratio"]
    for lo, hi in itertools.pairwise(edges):
        sel = [r for r in records if lo <= r["outlier_ratio"] < hi
               or (hi == edges[-1] and r["outlier_ratio"] == hi)]
        if sel:
            sweep_region_line(f"outliers {lo:g}-{hi:g}", sel)
    sweep_region_line("overall", records)
    print("\nyardstick (maximum likelihood from the truth on the correspondences within the "
          "threshold of the true tensor: what the data allow) over the same scenes: its mean "
          "rotation error [deg], pycolmap's mean / its, xslit's mean / its, the same three "
          "for the medians; then for translation [% of |t|]")
    print(f"  {'region':18}{'#':>4}"
          + "".join(f"{h:>9}" for h in ("rMn ML", "col/ML", "xs/ML", "rMd ML", "col/ML",
                                        "xs/ML", "tMn ML", "col/ML", "xs/ML", "tMd ML",
                                        "col/ML", "xs/ML")))
    for label, sel in kinds(records):
        yardstick_region_line(label, sel)
    yardstick_region_line("overall", records)
    ratios = [r["pycolmap"]["time"] / r["xslit"]["time"] for r in records]
    print(f"  median of the per-scene time ratios pycolmap / xslit: "
          f"{statistics.median(ratios):.1f} (goal >= 10); load average {load:.2f} at end")
    reasons = {}
    for r in records:
        for side in ("pycolmap", "xslit"):
            if r[side]["failure"]:
                reasons.setdefault((side, r[side]["failure"][:100]), []).append(r["seed"])
    for (side, why), seeds in sorted(reasons.items()):
        print(f"  {side} failed (seeds {seeds}): {why}")
    better = [r["seed"] for r in records if r["determined"] and r["pycolmap"].get("within")
              and (not r["xslit"].get("within"))]
    print(f"  determined scenes where pycolmap is within 1.5x of the yardstick and xslit is not: "
          f"{better}")
    much = [r["seed"] for r in records if "ratio" in r["pycolmap"] and "ratio" in r["xslit"]
            and r["xslit"]["ratio"] > 3 * max(r["pycolmap"]["ratio"], 1.0)]
    print(f"  scenes where xslit's error ratio to the yardstick is over 3x pycolmap's: {much}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", type=int, default=0,
                    help="run this many family scenes against the yardstick (no pycolmap)")
    ap.add_argument("--sweep", type=int, default=0,
                    help="run both on this many scenes of random_sweep_scene")
    ap.add_argument("--max-n", type=int, default=2000,
                    help="cap on the correspondences of a sweep scene")
    ap.add_argument("--seed", type=int, default=0, help="first sweep seed")
    ap.add_argument("--timings", type=int, default=3,
                    help="timings per call in --sweep (the minimum counts)")
    ap.add_argument("--colmap-timeout", type=float, default=60.0,
                    help="--sweep: seconds after which a pycolmap call counts as failed")
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
    if args.sweep:
        logging.disable(logging.WARNING)  # failures are counted with their reasons
        run_sweep(args.sweep, args.max_n, args.seed, args.timings, args.colmap_timeout,
                  args.verbose)
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
