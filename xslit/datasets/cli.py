"""``python -m xslit.datasets {generate,info,verify}``: make, describe and check datasets."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    from .generate import DEFAULT_VIEWS, RECIPES

    p = argparse.ArgumentParser(prog="python -m xslit.datasets",
                                description="Make, describe and verify xslit datasets "
                                            "(format: datasets/FORMAT.md).")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="render a dataset from a recipe")
    g.add_argument("--recipe", required=True, choices=sorted(RECIPES),
                   help="; ".join(f"{k}: {v[1]}" for k, v in RECIPES.items()))
    g.add_argument("--out", required=True, type=Path, help="dataset folder to create")
    g.add_argument("--size", default="640x480", help="image size WIDTHxHEIGHT (640x480)")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--views", type=int, default=None,
                   help="number of views (defaults: " +
                        ", ".join(f"{k} {v}" for k, v in DEFAULT_VIEWS.items()) + ")")
    g.add_argument("--supersample", type=int, default=2, help="k x k rays per pixel (2)")
    g.add_argument("--max-matches", type=int, default=20_000,
                   help="ground-truth correspondences kept per pair (20000)")
    g.add_argument("--threads", type=int, default=None, help="ray-casting threads")
    g.add_argument("--overwrite", action="store_true", help="replace an existing dataset")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    for name, text in (("info", "describe a dataset"),
                       ("verify", "check checksums, files, cameras and ground truth")):
        s = sub.add_parser(name, help=text)
        s.add_argument("path", type=Path)
    return p


def _info(path: Path) -> None:
    from ..io.dataset import load_dataset
    from ..io.jsonio import read_json

    ds = load_dataset(path, checksums=False)
    m = read_json(path / "manifest.json")
    total = sum(f["size"] for f in m["files"].values())
    meta = ds.metadata
    print(f"{path}: xslit dataset version {m['version']}, {len(m['files'])} files, "
          f"{total / 1e6:.1f} MB, created {m.get('created', '?')} by {m.get('generator', '?')}")
    if "recipe" in meta:
        print(f"recipe {meta['recipe']} (seed {meta.get('seed')}): {meta.get('description', '')}")
    for v in ds.views:
        extra = "" if v.mask is None else f", {int(v.mask.sum())} pixels with ground truth"
        intr = "" if v.intrinsics is None else ", intrinsics and pose"
        print(f"  view {v.name}: {v.camera.model} {v.image_size[0]}x{v.image_size[1]}"
              f"{intr}{extra}")
    for c in ds.correspondences:
        print(f"  matches {c.view1} - {c.view2}: {len(c)}")
    if ds.point_cloud is not None:
        print(f"  point cloud: {len(ds.point_cloud[0])} points")


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 damaged dataset, 2 bad usage)."""
    args = _parser().parse_args(argv)
    if args.command == "generate":
        from .generate import generate_dataset

        try:
            out = generate_dataset(args.recipe, args.out, args.size, args.seed, args.views,
                                   supersample=args.supersample, max_matches=args.max_matches,
                                   nthreads=args.threads, overwrite=args.overwrite,
                                   progress=False if args.quiet else True)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {out}")
        return 0
    if args.command == "info":
        try:
            _info(args.path)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        return 0
    from ..io.dataset import verify_dataset

    try:
        report = verify_dataset(args.path, progress=None)
    except ValueError as exc:
        print(f"DAMAGED: {exc}", file=sys.stderr)
        return 1
    print(f"OK: {args.path}: {report['views']} views, {report['pairs']} pairs, all files match "
          f"their checksums; ground truth reprojects within "
          f"{max(report['max_pair_reprojection_px'], report['max_point_reprojection_px']):.2g} px")
    return 0
