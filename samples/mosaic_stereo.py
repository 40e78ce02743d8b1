"""Mosaics from video: a rendered sideways video, pushbroom and crossed-slit mosaics with their
exact cameras, and a point cloud reconstructed from two crossed-slit mosaics.

    python samples/mosaic_stereo.py --out out/mosaic [--frames 240] [--size 320x240]

A pinhole camera slides along its x axis through the textured room (``renderImage`` with a
``PinholeCamera`` per frame). Pasting one column of every frame side by side gives a
pushbroom mosaic (fixed column) or a crossed-slit mosaic (a column that moves with the frame
index: Zomet et al., PAMI 2003); ``xslit.mosaic.mosaic_camera`` gives the exact two-slit camera
of each. Two crossed-slit mosaics, taking columns that sweep the frames at different rates
from different starts, see the room along two different sets of rays: a stereo pair. SIFT
matches between them, kept by the mosaics' known epipolar tensor, and triangulated with the
known mosaic cameras, give a point cloud, measured against the room.

Writes pushbroom.png, xslit_left.png, xslit_right.png, matches.png, points.ply, cloud.png
and metrics.json.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import xslit
from xslit.datasets import parse_size
from xslit.io import write_json


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="out/mosaic")
    ap.add_argument("--frames", type=int, default=240, help="video frames (>= 32)")
    ap.add_argument("--size", default="320x240", help="frame size WIDTHxHEIGHT")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        w, h = parse_size(args.size)
        if w < 64 or h < 48:
            raise ValueError
    except ValueError:
        ap.error(f"--size must be WIDTHxHEIGHT, at least 64x48, got {args.size!r}")
    if args.frames < 32:
        ap.error(f"--frames must be at least 32, got {args.frames}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import imageio.v3 as iio

    from xslit.cameras import PinholeCamera
    from xslit.io.ply import write_ply
    from xslit.mosaic import mosaic_camera, mosaic_from_frames
    from xslit.render import cloud_metrics, make_room_scene, pose_from_look_at
    from xslit.viz import preview_png

    t0 = time.perf_counter()
    scene = make_room_scene(args.seed)
    # The camera looks at the far wall and slides along its x axis across the room.
    n = args.frames
    f = 0.8 * w
    K = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1.0]])
    rvec, tvec = pose_from_look_at([-1.6, -4.5, 0.2], [-1.6, 3.0, 0.2])
    R = xslit.geometry.matrix_from_rvec(rvec)
    step = 3.2 / n  # world units per frame along the camera's x axis
    velocity = R.T @ np.array([step, 0.0, 0.0])
    frames = []
    for k in range(n):
        cam = PinholeCamera.from_intrinsics(K, rvec, tvec - k * (R @ velocity))
        frames.append(xslit.renderImage(scene, cam, (w, h))["image"])
    print(f"rendered a {n}-frame {w}x{h} video in {time.perf_counter() - t0:.1f} s")

    # Mosaics: a fixed centre column (pushbroom), and two columns sweeping the frames from
    # left to right at different rates (two crossed-slit cameras whose second slits lie at
    # different depths behind the camera path: a column moving against the motion would put
    # its slit in the room, and the mosaic would show the room folded about it).
    rate = (w - 1) / (n - 1)
    specs = {"pushbroom": ((w - 1) / 2, 0.0), "xslit_left": (0.1 * (w - 1), 0.5 * rate),
             "xslit_right": (0.4 * (w - 1), 0.25 * rate)}
    mosaics, cameras = {}, {}
    for name, (a, b) in specs.items():
        mosaics[name], _ = mosaic_from_frames(frames, a, b)
        cameras[name] = mosaic_camera(K, rvec, tvec, velocity, a, b)
        iio.imwrite(out / f"{name}.png", mosaics[name])
    print(f"mosaics {', '.join(f'{k} {v.shape[1]}x{v.shape[0]}' for k, v in mosaics.items())}: "
          f"{type(cameras['pushbroom']).__name__} and two {type(cameras['xslit_left']).__name__}")

    # Stereo from the two crossed-slit mosaics with their known cameras.
    left, right = mosaics["xslit_left"], mosaics["xslit_right"]
    p1, p2 = xslit.matchFeatures(left, right, rng=args.seed)
    # The mosaics' cameras are known exactly, and so is their tensor: the matches it explains
    # (within 1.5 px) are the inliers, as with a calibrated rig.
    from xslit.epipolar import sampson_distance

    F_true = xslit.computeEpipolarTensor(cameras["xslit_left"], cameras["xslit_right"])
    with np.errstate(invalid="ignore", divide="ignore"):
        d_true = sampson_distance(F_true, p1, p2)
    inl = np.nan_to_num(d_true, nan=np.inf) < 1.5
    print(f"SIFT between the crossed-slit mosaics: {len(p1)} matches, {inl.sum()} within 1.5 px "
          "of the mosaics' tensor")
    if inl.sum() < 8:
        print("too few matches to triangulate")
        return 1
    # Without the cameras, the tensor would have to be estimated: the room's far wall fills
    # most of the mosaics, and findEpipolarTensor reports when the matches leave it open.
    F, mask = xslit.findEpipolarTensor(p1, p2, xslit.USAC_DEFAULT, 1.5, rng=args.seed)
    if F is None:
        print("  findEpipolarTensor without the cameras: not determined (the reason is logged)")
    else:
        print(f"  findEpipolarTensor without the cameras: {int(mask.sum())} inliers, "
              f"{int((mask[:, 0].astype(bool) & inl).sum())} of them explained by the true tensor")
    mask = inl.astype(np.uint8)[:, None]
    pair = [cameras["xslit_left"], cameras["xslit_right"]]
    X4 = xslit.triangulateTwoSlitPoints(pair, [p1[inl], p2[inl]])
    X = (X4[:3] / X4[3]).T
    ij = np.clip(np.round(p1[inl]).astype(int), 0, [left.shape[1] - 1, left.shape[0] - 1])
    colors = left[ij[:, 1], ij[:, 0]]
    write_ply(out / "points.ply", X, colors)
    preview_png((X, colors), out / "cloud.png", size=(640, 480), front=(0.0, -1.0, 0.3),
                up=(0, 0, 1))
    cm = cloud_metrics(X, scene=scene)
    print(f"point cloud: {len(X)} points, distance to the room's surface: median "
          f"{100 * cm['accuracy_median']:.2f} cm, mean {100 * cm['accuracy']:.2f} cm "
          f"({100 * cm['accuracy_median_rel']:.3f}% of the room's diameter)")
    iio.imwrite(out / "matches.png", xslit.drawMatchesMask(left, p1, right, p2, mask,
                                                           maxMatches=300))
    metrics = {"frames": n, "matches": len(p1), "inliers": int(inl.sum()),
               "inlier_distance_to_true_tensor_median": float(np.median(d_true[inl])),
               "points": len(X), "distance_to_surface_median": cm["accuracy_median"],
               "scene_diameter": cm["scene_diameter"], "total_s": time.perf_counter() - t0}
    write_json(out / "metrics.json", metrics)
    print(f"wrote {out}/ in {metrics['total_s']:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
