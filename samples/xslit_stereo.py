"""End to end on rendered images: an X-slit stereo pair of a textured room, SIFT matches,
the epipolar tensor, the metric relative pose, and a coloured point cloud (PLY).

    python samples/xslit_stereo.py --out out/xslit_stereo [--size 640x480] [--seed 0]

Writes view1.png, view2.png, matches.png and points.ply (open it in Open3D or any PLY viewer),
and prints the accuracy of every stage against the renderer's ground truth.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import xslit
from xslit.geometry import matrix_from_rvec, rvec_from_matrix
from xslit.render import make_room_scene, pose_from_look_at


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/xslit_stereo")
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    w, h = (int(v) for v in args.size.lower().split("x"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    import cv2
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

    # SIFT + ratio test (OpenCV).
    sift = cv2.SIFT_create(nfeatures=4000)
    grays = [cv2.cvtColor(r["image"], cv2.COLOR_RGB2GRAY) for r in renders]
    (k1, d1), (k2, d2) = (sift.detectAndCompute(g, None) for g in grays)
    pairs = cv2.BFMatcher(cv2.NORM_L2).knnMatch(d1, d2, k=2)
    good = [m for m, n in pairs if m.distance < 0.8 * n.distance]
    p1 = np.array([k1[m.queryIdx].pt for m in good])
    p2 = np.array([k2[m.trainIdx].pt for m in good])
    print(f"SIFT: {len(k1)} / {len(k2)} keypoints, {len(good)} ratio-test matches")

    # Ground truth for each match: the hit point under the first view's pixel.
    X_gt = renders[0]["points"][np.clip(np.round(p1[:, 1]).astype(int), 0, h - 1),
                                np.clip(np.round(p1[:, 0]).astype(int), 0, w - 1)]
    err_gt = np.linalg.norm(cams[1].project(X_gt) - p2, axis=1)
    correct = np.nan_to_num(err_gt, nan=np.inf) < 3.0
    print(f"matches within 3 px of the true correspondence: {correct.mean():.1%}")

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
    retval, R, t, pose_mask, X4 = xslit.recoverTwoSlitPose(F, p1, p2, intr, intr, mask=mask)
    R1, R2 = (matrix_from_rvec(rv) for rv, _ in poses)
    R_true = R2 @ R1.T
    t_true = poses[1][1] - R_true @ poses[0][1]
    ang = np.degrees(np.linalg.norm(rvec_from_matrix(R.T @ R_true)))
    print(f"recoverTwoSlitPose: {retval} points in front; rotation error {ang:.3f} deg, "
          f"translation error {100 * np.linalg.norm(t.ravel() - t_true):.2f} cm "
          f"(baseline {100 * np.linalg.norm(t_true):.0f} cm, metric scale from d)")

    # Point cloud in camera 1's frame, coloured from view 1.
    keep = pose_mask[:, 0] == 1
    X = (X4[:3] / X4[3]).T[keep]
    cols = renders[0]["image"][np.clip(np.round(p1[keep, 1]).astype(int), 0, h - 1),
                               np.clip(np.round(p1[keep, 0]).astype(int), 0, w - 1)]
    from xslit.io.ply import write_ply

    write_ply(out / "points.ply", X, cols)
    # Ground-truth points in camera 1's frame, to measure the reconstruction.
    Xc = X_gt[keep] @ R1.T + poses[0][1]
    print(f"point cloud: {len(X)} points, median 3D error "
          f"{100 * np.median(np.linalg.norm(X - Xc, axis=1)):.2f} cm -> {out / 'points.ply'}")
    vis = cv2.drawMatches(renders[0]["image"], k1, renders[1]["image"], k2,
                          [g for g, m in zip(good, inl, strict=True) if m][:200], None)
    iio.imwrite(out / "matches.png", vis)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
