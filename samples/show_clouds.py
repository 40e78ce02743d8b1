"""Point clouds in Open3D: the samples' clouds in a window, or as PNGs without a display.

    python samples/show_clouds.py outputs/xslit_stereo/points.ply outputs/pushbroom/points.ply
    python samples/show_clouds.py CLOUD.ply --png views.png     # always a picture

With a display that answers, each cloud opens in Open3D's window (``xslit.viz.show``; close it
to see the next). Without one, or with ``--png``, each cloud is drawn from three viewpoints
(front, side, above, framed on the cloud) by ``xslit.viz.preview_png`` and the three pictures
are put side by side in one PNG per cloud; the script prints which renderer drew them (Open3D
through EGL, or xslit's numpy renderer where EGL is missing).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from xslit.datasets import parse_size

VIEWS = {"front": ((0.0, -0.2, -1.0), (0, -1, 0)), "side": ((1.0, -0.2, -0.3), (0, -1, 0)),
         "above": ((0.0, -1.0, -0.2), (0, 0, -1))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clouds", nargs="+", help="PLY files")
    ap.add_argument("--png", default=None,
                    help="write pictures (NAME.png per cloud, or this path for one cloud) "
                         "instead of opening a window")
    ap.add_argument("--size", default="480x360", help="size of each view, WIDTHxHEIGHT")
    args = ap.parse_args(argv)
    try:
        w, h = parse_size(args.size)
    except ValueError:
        ap.error(f"--size must be WIDTHxHEIGHT, got {args.size!r}")
    paths = [Path(p) for p in args.clouds]
    for p in paths:
        if not p.is_file():
            ap.error(f"clouds: no such file: {p}")
    import imageio.v3 as iio

    from xslit.io.ply import read_ply_cloud
    from xslit.viz import display_problem, preview_png, show

    window = args.png is None and display_problem() is None
    for path in paths:
        cloud = read_ply_cloud(path)
        points, colors = cloud[0], cloud[1]
        print(f"{path}: {len(points)} points")
        if window:
            show((points, colors), title=str(path))
            continue
        out = (Path(args.png) if args.png and len(paths) == 1
               else path.with_name(path.stem + "_views.png"))
        tiles = []
        for name, (front, up) in VIEWS.items():
            tile = out.with_name(f"{out.stem}_{name}.png")
            res = preview_png((points, colors), tile, size=(w, h), front=front, up=up)
            tiles.append(iio.imread(tile))
            tile.unlink()
        iio.imwrite(out, np.concatenate(tiles, axis=1))
        print(f"  views {', '.join(VIEWS)} drawn by {res.renderer} -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
