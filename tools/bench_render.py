"""Benchmark: rendering against raw Open3D ray casting on the same rays (issue 4).

Renders a 1920x1080 X-slit view of the ~1M-triangle procedural terrain (texture, depth, hit
points, mask) and compares its throughput with a bare ``RaycastingScene.cast_rays`` on the
same precomputed float32 rays, with the same number of threads. Each figure is the best of
``--repeat`` runs (the machine may be shared). Run with::

    .venv/bin/python tools/bench_render.py [--nthreads 2] [--repeat 5]

and paste the table it prints into the README.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np


def best_time(fn, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    parser.add_argument("--triangles", type=int, default=1_000_000)
    parser.add_argument("--nthreads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    import open3d as o3d

    from xslit.cameras import TwoSlitIntrinsics, compose_two_slit
    from xslit.render import make_terrain_scene, pixel_grid, pose_from_look_at, renderImage
    from xslit.render.raycast import render_from_rays

    w, h, n = args.width, args.height, args.nthreads
    t0 = time.perf_counter()
    scene = make_terrain_scene(0, n_triangles=args.triangles)
    t_scene = time.perf_counter() - t0
    raycaster = scene.raycaster
    intr = TwoSlitIntrinsics.from_parameters(0.57 * w, 0.285 * w, (w - 1) / 2, (h - 1) / 2,
                                             np.pi / 2, 5.0)
    camera = compose_two_slit(intr, *pose_from_look_at([0, -60, 45], [0, 5, 0]))

    pixels = pixel_grid((w, h)).reshape(-1, 2)
    t_rays = best_time(lambda: camera.rays(pixels), args.repeat)
    rays = camera.rays(pixels)
    rays32 = o3d.core.Tensor(rays.astype(np.float32))
    t0 = time.perf_counter()
    raycaster.cast_rays(rays32, nthreads=n)  # Open3D builds the BVH on the first cast
    t_build = time.perf_counter() - t0
    t_raw = best_time(lambda: raycaster.cast_rays(rays32, nthreads=n), args.repeat)
    t_kernel = best_time(lambda: render_from_rays(scene, rays, (w, h), nthreads=n), args.repeat)
    t_full = best_time(lambda: renderImage(scene, camera, (w, h), nthreads=n), args.repeat)
    result = renderImage(scene, camera, (w, h), nthreads=n)

    mpix = w * h / 1e6
    print(f"xslit render benchmark: {w}x{h} X-slit view of a {scene.n_triangles:,}-triangle "
          f"terrain, nthreads={n}, best of {args.repeat}")
    print(f"machine: {platform.processor() or platform.machine()}, "
          f"open3d {o3d.__version__}, numpy {np.__version__}")
    print(f"scene generation {t_scene:.2f} s, BVH build + first cast {t_build:.2f} s, "
          f"{result['mask'].mean():.0%} of pixels hit the terrain")
    print()
    print("| step | time (ms) | Mrays/s | ratio to raw cast_rays |")
    print("|---|---:|---:|---:|")
    rows = [("raw `cast_rays` (float32 rays precomputed)", t_raw),
            ("`render_from_rays` (same rays: colour, depth, points, mask)", t_kernel),
            ("`camera.rays` (ray generation, float64)", t_rays),
            ("`renderImage` (pixels to image, all included)", t_full)]
    for name, t in rows:
        print(f"| {name} | {1e3 * t:.1f} | {mpix / t:.2f} | {t_raw / t:.2f} |")
    print()
    goal = "met" if t_raw / t_kernel >= 0.8 else "not met"
    print(f"throughput ratio render / raw on the same rays: {t_raw / t_kernel:.2f} "
          f"(goal >= 0.80: {goal})")


if __name__ == "__main__":
    main()
