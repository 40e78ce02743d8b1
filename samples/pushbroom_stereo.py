"""Satellite-style pushbroom stereo: two strips of a terrain, matches, the epipolar tensor, the
metric pose, a point cloud and a height map (DSM), each measured against the truth.

    python samples/pushbroom_stereo.py --out out/pushbroom [--size 800x800] [--seed 0]

The instrument is the standard one of along-track stereo (SPOT HRS, PRISM, Cartosat): a linear
sensor perpendicular to the flight line, the view tilted about the sensor line, 20 degrees
fore on one pass and 20 degrees aft on a second pass flown 25 units to the side. (Two strips
of ONE pass share their flight line, the finite slit of both cameras: their epipolar tensor is
not determined, and findEpipolarTensor says so; a second pass makes it determined.) The
intrinsics are those of ``xslit.PushbroomIntrinsics`` (Gupta and Hartley's model: focal length,
principal point and the sensor's velocity in its own frame), the scale comes from the known
speed.

Writes strip1.png, strip2.png (first image axis: time, one column per sensor line),
matches.png (inliers green, outliers red), points.ply, cloud.png (preview), dsm.png (heights,
with the error map dsm_error.png) and metrics.json; prints each figure.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import xslit
from xslit.datasets import parse_size
from xslit.geometry import matrix_from_rvec, rvec_from_matrix
from xslit.io import read_json, write_json

ALTITUDE = 150.0
TILT_DEG = 20.0
EXTENT = 100.0
PASS_OFFSET = 25.0


def strip_camera(tilt_deg, y_offset, lines, pixels):
    """A pushbroom strip flying along +x at ``ALTITUDE``, the view tilted ``tilt_deg`` fore
    (> 0) or aft about the sensor line, which lies across the track; it images the terrain
    ``[-EXTENT/2, EXTENT/2]^2`` in ``lines`` columns and ``pixels`` rows."""
    tau = np.radians(tilt_deg)
    axis = np.array([np.sin(tau), 0.0, -np.cos(tau)])  # optical axis, looking down
    sensor = np.array([0.0, -1.0, 0.0])  # so that the camera's x axis points along the flight
    normal = np.cross(sensor, axis)
    R = np.stack([normal, sensor, axis])  # world to camera
    margin = 1.1 * EXTENT
    speed = margin / lines  # world units per line along the flight
    ahead = ALTITUDE * np.tan(tau)  # the view's ground point is this far ahead of the camera
    start = np.array([-margin / 2 - ahead, y_offset, ALTITUDE])
    slant = ALTITUDE / np.cos(tau)
    f = (pixels / 2) / (0.55 * EXTENT / slant)
    intr = xslit.PushbroomIntrinsics(R @ np.array([speed, 0.0, 0.0]), f, (pixels - 1) / 2)
    rvec, tvec = rvec_from_matrix(R), -R @ start
    return intr, rvec, tvec


def true_heights(scene, xy):
    """Height of the terrain under each ``(x, y)`` (a vertical ray cast), NaN off the mesh."""
    rays = np.column_stack([xy, np.full(len(xy), 1e3), np.zeros((len(xy), 2)),
                            -np.ones(len(xy))])
    import open3d as o3d

    t = scene.raycaster.cast_rays(o3d.core.Tensor(rays.astype(np.float32)))["t_hit"].numpy()
    return np.where(np.isfinite(t), 1e3 - t, np.nan)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/pushbroom")
    ap.add_argument("--size", default="800x800", help="lines x sensor pixels, e.g. 800x800")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--metrics", default=None,
                    help="also record the figures under 'pushbroom_stereo' in this JSON file (merged)")
    ap.add_argument("--triangles", type=int, default=250_000, help="terrain mesh size")
    ap.add_argument("--threshold", type=float, default=1.5,
                    help="inlier threshold of findEpipolarTensor, pixels")
    args = ap.parse_args(argv)
    try:
        lines, pixels = parse_size(args.size)
        if lines < 64 or pixels < 64:
            raise ValueError
    except ValueError:
        ap.error(f"--size must be LINESxPIXELS with both at least 64, got {args.size!r}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import cv2
    import imageio.v3 as iio

    from xslit.io.ply import write_ply
    from xslit.render import (
        cloud_metrics,
        correspondences_between,
        make_terrain_scene,
        match_errors,
    )
    from xslit.viz import preview_png

    metrics = {}
    t0 = time.perf_counter()
    scene = make_terrain_scene(args.seed, n_triangles=args.triangles, extent=EXTENT,
                               sea_level=0.1)
    setups = [strip_camera(TILT_DEG, 0.0, lines, pixels),
              strip_camera(-TILT_DEG, PASS_OFFSET, lines, pixels)]
    cams = [xslit.composePushbroomProjection(*s) for s in setups]
    renders = [xslit.renderImage(scene, cam, (lines, pixels)) for cam in cams]
    for k, r in enumerate(renders, 1):
        iio.imwrite(out / f"strip{k}.png", r["image"])
    metrics["render_s"] = time.perf_counter() - t0
    print(f"rendered 2 strips of {lines} lines x {pixels} pixels in {metrics['render_s']:.1f} s")

    t1 = time.perf_counter()
    p1, p2 = xslit.matchFeatures(renders[0]["image"], renders[1]["image"], rng=args.seed)
    # Truth of each match: the terrain point under strip 1's pixel, seen by strip 2.
    correct = match_errors(renders[0], cams[1], p1, p2) < 2.0
    print(f"SIFT matches: {len(p1)}, {correct.mean():.1%} within 2 px of the truth "
          f"({time.perf_counter() - t1:.1f} s)")

    F, mask = xslit.findEpipolarTensor(p1, p2, xslit.USAC_DEFAULT, args.threshold, rng=args.seed)
    if F is None:
        print("findEpipolarTensor failed (the reason is in the log)")
        return 1
    inl = mask[:, 0] == 1
    print(f"findEpipolarTensor: {inl.sum()} inliers of {len(p1)}, precision against the truth "
          f"{(inl & correct).sum() / inl.sum():.3f}")
    intr1, intr2 = setups[0][0], setups[1][0]
    retval, R, t, pose_mask, _ = xslit.recoverTwoSlitPose(F, p1, p2, intr1, intr2, mask=mask)
    R1, R2 = (matrix_from_rvec(s[1]) for s in setups)
    R_true = R2 @ R1.T
    t_true = setups[1][2] - R_true @ setups[0][2]
    rot_err = np.degrees(np.linalg.norm(rvec_from_matrix(R.T @ R_true)))
    t_err = np.linalg.norm(t.ravel() - t_true)
    print(f"recoverTwoSlitPose: {retval} points; rotation error {rot_err:.4f} deg, translation "
          f"error {t_err:.3f} units over a {np.linalg.norm(t_true):.1f} unit baseline (the "
          "scale comes from the known speed)")
    # What the data allow: maximum likelihood started from the true pose on the same inliers.
    from xslit.sfm import refine_metric_pose

    rv_ml, t_ml, _, _ = refine_metric_pose(intr1, intr2, rvec_from_matrix(R_true), t_true,
                                           p1[keep_pose := pose_mask[:, 0] == 1],
                                           p2[keep_pose])
    rot_ml = np.degrees(np.linalg.norm(rvec_from_matrix(matrix_from_rvec(rv_ml).T @ R_true)))
    t_ml_err = np.linalg.norm(t_ml - t_true)
    print(f"  what the data allow (maximum likelihood from the true pose, same inliers): "
          f"rotation error {rot_ml:.4f} deg, translation error {t_ml_err:.3f} units")
    metrics.update(matches=len(p1), inliers=int(inl.sum()), rotation_error_deg=rot_err,
                   translation_error=t_err, baseline=float(np.linalg.norm(t_true)),
                   ml_rotation_error_deg=float(rot_ml), ml_translation_error=float(t_ml_err))

    # A denser cloud: a grid of strip 1 tracked into strip 2 from the inlier matches
    # (Lucas-Kanade, forward-backward check, within 1 px of the tensor), triangulated with the
    # recovered pose; then in the world through strip 1's known orbit and attitude (what a
    # satellite's ephemeris gives).
    from xslit.features import densify_matches

    q1, q2 = densify_matches(renders[0]["image"], renders[1]["image"], p1[inl], p2[inl], F,
                             step=4, mask1=renders[0]["mask"])
    # The pose again by maximum likelihood on (a sample of) the dense matches: thousands of
    # sub-pixel correspondences outweigh the few wrong SIFT matches inside the threshold.
    pick = np.random.default_rng(args.seed).permutation(len(q1))[:4000]
    rv_d, t_d, _, _ = refine_metric_pose(intr1, intr2, rvec_from_matrix(R), t.ravel(),
                                         q1[pick], q2[pick])
    rot_d = np.degrees(np.linalg.norm(rvec_from_matrix(matrix_from_rvec(rv_d).T @ R_true)))
    print(f"pose refined on {len(pick)} dense matches: rotation error {rot_d:.4f} deg, "
          f"translation error {np.linalg.norm(t_d - t_true):.3f} units")
    metrics.update(dense_rotation_error_deg=float(rot_d),
                   dense_translation_error=float(np.linalg.norm(t_d - t_true)))
    pair = [xslit.composePushbroomProjection(intr1, np.zeros(3), np.zeros(3)),
            xslit.composePushbroomProjection(intr2, rv_d, t_d)]
    X4d = xslit.triangulateTwoSlitPoints(pair, [q1, q2])
    Xc = (X4d[:3] / X4d[3]).T
    X = (Xc - setups[0][2]) @ R1
    qi = np.clip(np.round(q1).astype(int), 0, [lines - 1, pixels - 1])
    colors = renders[0]["image"][qi[:, 1], qi[:, 0]]
    print(f"dense matches: {len(q1)} grid points tracked and kept")
    write_ply(out / "points.ply", X, colors)
    preview_png((X, colors), out / "cloud.png", size=(640, 480), front=(0.3, -0.6, 0.75),
                up=(0, 0, 1))
    # Accuracy against the terrain's mesh; completeness against the terrain both strips see
    # (the renderer's exact correspondences: the part of the surface a stereo pair can
    # reconstruct).
    seen = correspondences_between(renders[0], renders[1], max_points=20000, rng=0).X
    diameter = float(np.linalg.norm(np.ptp(renders[0]["points"][renders[0]["mask"]], axis=0)))
    cm = cloud_metrics(X, seen, scene=scene, diameter=diameter)
    print(f"point cloud: {len(X)} points; distance to the true surface: median "
          f"{cm['accuracy_median']:.3f}, mean {cm['accuracy']:.3f} units; from the surface both "
          f"strips see to the cloud: mean {cm['completeness']:.3f}; Chamfer distance (their "
          f"average) {100 * cm['chamfer_rel']:.3f}% of the scene diameter ({diameter:.0f} units)")
    metrics.update(points=len(X), cloud_to_surface_mean=cm["accuracy"],
                   surface_to_cloud_mean=cm["completeness"], scene_diameter=diameter,
                   chamfer_fraction_of_diameter=cm["chamfer_rel"])

    # Height map: the median height of the cloud per 2x2-unit cell, against the terrain.
    cell = 2.0
    n = int(EXTENT / cell)
    ix = np.floor((X[:, :2] + EXTENT / 2) / cell).astype(int)
    ok = ((ix >= 0) & (ix < n)).all(axis=1)
    dsm = np.full((n, n), np.nan)
    order = np.lexsort((X[ok, 2], ix[ok, 1], ix[ok, 0]))
    cells, start = np.unique(ix[ok][order], axis=0, return_index=True)
    counts = np.diff(np.append(start, ok.sum()))
    dsm[cells[:, 1], cells[:, 0]] = X[ok, 2][order][start + counts // 2]
    centres = (np.stack(np.meshgrid(np.arange(n), np.arange(n)), -1).reshape(-1, 2) + 0.5) \
        * cell - EXTENT / 2
    truth = true_heights(scene, centres).reshape(n, n)
    err = dsm - truth
    filled = np.isfinite(err)
    print(f"DSM ({cell:g}-unit cells): {filled.mean():.0%} of the cells filled, height error "
          f"median {np.median(np.abs(err[filled])):.3f}, RMS {np.sqrt(np.mean(err[filled]**2)):.3f} "
          f"units (relief {np.nanmax(truth) - np.nanmin(truth):.1f})")
    metrics.update(dsm_cells_filled=float(filled.mean()),
                   dsm_error_median=float(np.median(np.abs(err[filled]))),
                   dsm_error_rms=float(np.sqrt(np.mean(err[filled] ** 2))))
    lo, hi = np.nanmin(truth), np.nanmax(truth)
    scaled = np.where(filled, (np.nan_to_num(dsm, nan=lo) - lo) / (hi - lo), 0)
    dsm_img = cv2.applyColorMap(np.clip(255 * scaled, 0, 255).astype(np.uint8),
                                cv2.COLORMAP_VIRIDIS)
    dsm_img[~filled] = 0
    iio.imwrite(out / "dsm.png", cv2.resize(dsm_img[::-1, :, ::-1], (4 * n, 4 * n),
                                            interpolation=cv2.INTER_NEAREST))
    e = np.clip(np.abs(np.nan_to_num(err)) / 1.0, 0, 1)
    err_img = cv2.applyColorMap((255 * e).astype(np.uint8), cv2.COLORMAP_INFERNO)
    err_img[~filled] = 0
    iio.imwrite(out / "dsm_error.png", cv2.resize(err_img[::-1, :, ::-1], (4 * n, 4 * n),
                                                  interpolation=cv2.INTER_NEAREST))
    iio.imwrite(out / "matches.png", xslit.drawMatchesMask(
        renders[0]["image"], p1, renders[1]["image"], p2, mask, maxMatches=300))
    metrics["total_s"] = time.perf_counter() - t0
    write_json(out / "metrics.json", metrics)
    if args.metrics:
        merged = read_json(args.metrics) if Path(args.metrics).exists() else {}
        write_json(args.metrics, {**merged, "pushbroom_stereo": metrics})
    print(f"wrote {out}/ in {metrics['total_s']:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
