"""End to end on rendered images: an X-slit stereo pair of a textured room, SIFT matches,
the epipolar tensor, the metric relative pose, and a coloured point cloud (PLY).

    python samples/xslit_stereo.py --out out/xslit_stereo [--size 640x480] [--seed 0]

Writes view1.png, view2.png, matches.png (inliers green, outliers red), points.ply (a dense
cloud: open it with `xslit view` or any PLY viewer), cloud.png (its preview) and metrics.json,
and prints the accuracy of every stage against the renderer's ground truth: the 3D errors by
depth band next to what the geometry allows at the measured matching noise (a two-slit
camera's depth error grows with the square of the depth over the baseline, as a pinhole
pair's), after the best similarity, and the Chamfer distance to the true surface.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np

import xslit
from xslit.datasets import parse_size
from xslit.geometry import matrix_from_rvec, rvec_from_matrix
from xslit.io import read_json, write_json
from xslit.render import (
    cloud_metrics,
    correspondences_between,
    make_room_scene,
    match_errors,
    pose_from_look_at,
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/xslit_stereo")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--metrics", default=None,
                    help="also record the figures under 'xslit_stereo' in this JSON file (merged)")
    args = ap.parse_args(argv)
    try:
        w, h = parse_size(args.size)
        if w < 64 or h < 48:
            raise ValueError
    except ValueError:
        ap.error(f"--size must be WIDTHxHEIGHT, at least 64x48, got {args.size!r}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    import imageio.v3 as iio

    t0 = time.perf_counter()
    scene = make_room_scene(args.seed)
    # Two crossed-slit cameras 0.8 apart looking at the middle of the room: slit angle 80 deg,
    # slits 1.5 apart, magnifications chosen for a ~60 deg field of view.
    intr = xslit.TwoSlitIntrinsics.from_parameters(fu=0.55 * w, fv=0.5 * 0.55 * w, u0=w / 2,
                                                   v0=h / 2, theta=np.radians(80), d=1.5)
    target = np.array([0.0, 0.0, -0.3])
    poses = [pose_from_look_at(eye, target) for eye in ([-0.4, -4.2, 0.4], [0.4, -4.2, 0.4])]
    cams = [xslit.composeTwoSlitProjection(intr, rv, tv) for rv, tv in poses]
    renders = [xslit.renderImage(scene, cam, (w, h), supersample=2) for cam in cams]
    for k, r in enumerate(renders, 1):
        iio.imwrite(out / f"view{k}.png", r["image"])
    print(f"rendered 2 views {w}x{h} in {time.perf_counter() - t0:.1f} s")

    # SIFT, ratio test and mutual check (xslit.features over OpenCV).
    t1 = time.perf_counter()
    p1, p2 = xslit.matchFeatures(renders[0]["image"], renders[1]["image"], rng=args.seed)
    # Ground truth for each match: the hit point under the first view's pixel.
    correct = match_errors(renders[0], cams[1], p1, p2) < 2.0
    print(f"SIFT: {len(p1)} matches, {correct.mean():.1%} within 2 px of the true "
          f"correspondence ({time.perf_counter() - t1:.1f} s)")

    t1 = time.perf_counter()
    F, mask = xslit.findEpipolarTensor(p1, p2, xslit.USAC_DEFAULT, 1.5, rng=args.seed)
    if F is None:
        print("findEpipolarTensor failed (see the log)")
        return 1
    inl = mask[:, 0] == 1
    print(f"findEpipolarTensor: {inl.sum()} inliers of {len(p1)} in "
          f"{1e3 * (time.perf_counter() - t1):.0f} ms; inlier precision vs ground truth "
          f"{(inl & correct).sum() / inl.sum():.3f}")

    # Metric relative pose (intrinsics known): R, t of camera 2 in camera 1's frame.
    retval, R, t, _, _ = xslit.recoverTwoSlitPose(F, p1, p2, intr, intr, mask=mask)
    R1, R2 = (matrix_from_rvec(rv) for rv, _ in poses)
    R_true = R2 @ R1.T
    t_true = poses[1][1] - R_true @ poses[0][1]
    ang = np.degrees(np.linalg.norm(rvec_from_matrix(R.T @ R_true)))
    print(f"recoverTwoSlitPose: {retval} points in front; rotation error {ang:.3f} deg, "
          f"translation error {100 * np.linalg.norm(t.ravel() - t_true):.2f} cm "
          f"(baseline {100 * np.linalg.norm(t_true):.0f} cm, metric scale from d)")
    metrics = {"matches": len(p1), "inliers": int(inl.sum()), "rotation_error_deg": ang,
               "translation_error": float(np.linalg.norm(t.ravel() - t_true))}

    # A denser cloud: a grid of view 1 tracked into view 2 from the inlier matches
    # (Lucas-Kanade, forward-backward check, within 1 px of the tensor), triangulated with the
    # recovered cameras, in camera 1's frame.
    from xslit.features import densify_matches
    from xslit.io.ply import write_ply
    from xslit.viz import preview_png

    q1, q2 = densify_matches(renders[0]["image"], renders[1]["image"], p1[inl], p2[inl], F,
                             step=3, mask1=renders[0]["mask"])
    pair = [xslit.composeTwoSlitProjection(intr, np.zeros(3), np.zeros(3)),
            xslit.composeTwoSlitProjection(intr, rvec_from_matrix(R), t.ravel())]
    X4 = xslit.triangulateTwoSlitPoints(pair, [q1, q2])
    X = (X4[:3] / X4[3]).T
    qi = np.clip(np.round(q1).astype(int), 0, [w - 1, h - 1])
    cols = renders[0]["image"][qi[:, 1], qi[:, 0]]
    write_ply(out / "points.ply", X, cols)
    preview_png((X, cols), out / "cloud.png", size=(640, 480), front=(0.0, -0.3, -1.0),
                up=(0, -1, 0))
    # Ground truth: the surface under each grid point, in camera 1's frame.
    X_true = renders[0]["points"][qi[:, 1], qi[:, 0]] @ R1.T + poses[0][1]
    err = np.linalg.norm(X - X_true, axis=1)
    depth = X_true[:, 2]
    print(f"point cloud: {len(X)} points (dense matches) -> {out / 'points.ply'}")
    # Errors by depth band, next to what the geometry allows: the same pixels, perturbed by
    # the tracking noise measured against the truth, triangulated with the TRUE cameras.
    true_pair = [xslit.composeTwoSlitProjection(intr, np.zeros(3), np.zeros(3)),
                 xslit.composeTwoSlitProjection(intr, rvec_from_matrix(R_true), t_true)]
    exact2 = true_pair[1].project(X_true)
    noise = float(np.sqrt(np.median(np.sum((exact2 - q2) ** 2, axis=1)) / 2))
    rng = np.random.default_rng(args.seed)
    Xa = xslit.triangulateTwoSlitPoints(
        true_pair, [true_pair[0].project(X_true) + rng.normal(scale=noise, size=q1.shape),
                    exact2 + rng.normal(scale=noise, size=q2.shape)])
    err_allowed = np.linalg.norm((Xa[:3] / Xa[3]).T - X_true, axis=1)
    print(f"  3D error by depth (tracking noise {noise:.2f} px per axis); 'allowed' is the "
          "error of the true cameras at that noise:")
    edges = np.quantile(depth, [0, 0.25, 0.5, 0.75, 1.0])
    for a, b in itertools.pairwise(edges):
        band = (depth >= a) & (depth <= b)
        print(f"    depth {a:5.1f}-{b:5.1f} m: median {100 * np.median(err[band]):6.2f} cm, "
              f"allowed {100 * np.median(err_allowed[band]):6.2f} cm")
    # After the best similarity (Umeyama): what remains is shape error, not placement.
    mu_a, mu_b = X.mean(axis=0), X_true.mean(axis=0)
    A, B = X - mu_a, X_true - mu_b
    U, S, Vt = np.linalg.svd(B.T @ A)
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))])
    Rs = U @ D @ Vt
    scale = np.trace(np.diag(S) @ D) / np.sum(A * A)
    err_sim = np.linalg.norm(scale * A @ Rs.T - B, axis=1)
    print(f"  after the best similarity: median {100 * np.median(err_sim):.2f} cm "
          f"(scale {scale:.4f}); relative to depth: median "
          f"{100 * np.median(err / depth):.2f}% (allowed {100 * np.median(err_allowed / depth):.2f}%)")
    # Chamfer distance to the surface both views see (the renderer's exact correspondences).
    X_world = (X - poses[0][1]) @ R1
    seen = correspondences_between(renders[0], renders[1], max_points=20000, rng=0).X
    diameter = float(np.linalg.norm(scene.vertices.max(axis=0) - scene.vertices.min(axis=0)))
    chamfer = cloud_metrics(X_world, seen, scene=scene, diameter=diameter)["chamfer_rel"]
    print(f"  Chamfer distance to the surface both views see: {100 * chamfer:.3f}% of the "
          f"scene diameter ({diameter:.1f} m)")
    metrics.update(points=len(X), median_error_m=float(np.median(err)),
                   median_error_allowed_m=float(np.median(err_allowed)),
                   median_error_after_similarity_m=float(np.median(err_sim)),
                   scene_diameter=diameter, chamfer_fraction_of_diameter=float(chamfer),
                   total_s=time.perf_counter() - t0)
    iio.imwrite(out / "matches.png", xslit.drawMatchesMask(
        renders[0]["image"], p1, renders[1]["image"], p2, mask, maxMatches=300))
    write_json(out / "metrics.json", metrics)
    if args.metrics:
        merged = read_json(args.metrics) if Path(args.metrics).exists() else {}
        write_json(args.metrics, {**merged, "xslit_stereo": metrics})
    print(f"wrote {out}/ in {metrics['total_s']:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
