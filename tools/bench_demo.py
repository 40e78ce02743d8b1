"""Benchmark: the stages of the X-slit stereo demo, timed separately, at two image sizes.

The pipeline of ``samples/xslit_stereo.py`` on the textured room: rendering of the two views
(``renderImage``), feature detection and matching (``matchFeatures``: SIFT, FLANN, ratio test,
mutual check), estimation (``findEpipolarTensor``, ``recoverTwoSlitPose`` with the
intrinsics), refinement (dense matches by ``densify_matches`` and their triangulation) and
export (PLY and the PNG preview). Each stage is run ``--repeat`` times and the best time is
kept; the table gives the stages and their total at each size.

Run:  .venv/bin/python tools/bench_demo.py [--sizes 640x480 1920x1080] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def _best(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bench_size(w, h, repeat, folder):
    import xslit
    from xslit.features import densify_matches
    from xslit.geometry import rvec_from_matrix
    from xslit.io.ply import write_ply
    from xslit.render import make_room_scene, pose_from_look_at
    from xslit.viz import preview_png

    scene = make_room_scene(0)
    intr = xslit.TwoSlitIntrinsics.from_parameters(0.55 * w, 0.275 * w, w / 2, h / 2,
                                                   np.radians(80), 1.5)
    poses = [pose_from_look_at(e, [0.0, 0.0, -0.3]) for e in ([-0.4, -4.2, 0.4],
                                                              [0.4, -4.2, 0.4])]
    cams = [xslit.composeTwoSlitProjection(intr, rv, tv) for rv, tv in poses]
    times = {}
    times["render"], renders = _best(
        lambda: [xslit.renderImage(scene, c, (w, h)) for c in cams], repeat)
    images = [r["image"] for r in renders]
    times["features and matching"], (p1, p2) = _best(
        lambda: xslit.matchFeatures(images[0], images[1]), repeat)

    def estimate():
        F, mask = xslit.findEpipolarTensor(p1, p2, xslit.USAC_DEFAULT, 1.5)
        pose = xslit.recoverTwoSlitPose(F, p1, p2, intr, intr, mask=mask)
        return F, mask, pose

    times["estimation"], (F, mask, pose) = _best(estimate, repeat)
    _, R, t, _, _ = pose
    inl = mask[:, 0] == 1

    def refine():
        q1, q2 = densify_matches(images[0], images[1], p1[inl], p2[inl], F, step=3,
                                 mask1=renders[0]["mask"])
        pair = [xslit.composeTwoSlitProjection(intr, np.zeros(3), np.zeros(3)),
                xslit.composeTwoSlitProjection(intr, rvec_from_matrix(R), t.ravel())]
        X4 = xslit.triangulateTwoSlitPoints(pair, [q1, q2])
        return (X4[:3] / X4[3]).T, q1

    times["refinement (dense matches, triangulation)"], (X, q1) = _best(refine, repeat)
    qi = np.clip(np.round(q1).astype(int), 0, [w - 1, h - 1])
    colors = images[0][qi[:, 1], qi[:, 0]]

    def export():
        write_ply(folder / "points.ply", X, colors)
        preview_png((X, colors), folder / "cloud.png", size=(640, 480))

    times["export (PLY, PNG preview)"], _ = _best(export, repeat)
    return times, len(p1), len(X)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["640x480", "1920x1080"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sizes = []
    for s in args.sizes:
        try:
            w, h = (int(v) for v in s.lower().split("x"))
        except ValueError:
            parser.error(f"--sizes must be WIDTHxHEIGHT values, got {s!r}")
        sizes.append((w, h))
    with tempfile.TemporaryDirectory() as tmp:
        results = [(w, h, *bench_size(w, h, args.repeat, Path(tmp))) for w, h in sizes]
    stages = list(results[0][2])
    print("| stage | " + " | ".join(f"{w}x{h} (ms)" for w, h, *_ in results) + " |")
    print("|---|" + "---:|" * len(results))
    for name in stages:
        print(f"| {name} | " + " | ".join(f"{1e3 * r[2][name]:.0f}" for r in results) + " |")
    print("| **total** | " + " | ".join(f"{1e3 * sum(r[2].values()):.0f}" for r in results)
          + " |")
    print("matches / cloud points: " + ", ".join(f"{w}x{h}: {m} / {n}"
                                                 for w, h, _, m, n in results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
