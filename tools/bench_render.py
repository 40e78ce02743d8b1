"""Benchmark: rendering against raw Open3D ray casting on the same rays.

Renders a 1920x1080 X-slit view of the ~1M-triangle procedural terrain and compares the
throughput of :func:`xslit.render.render_from_rays` and :func:`xslit.render.renderImage` with a
bare ``RaycastingScene.cast_rays`` on the same precomputed float32 rays (one C-contiguous
``(H * W, 6)`` array, cast by both without a copy), with the same number of threads. Goals:
"texture and depth" (``outputs=("image", "depth", "mask")``) at 0.8 of the raw throughput, and
:func:`renderImage` end to end (pixels to all outputs, rays included) at 0.6. The table also
shows all outputs (adding float64 hit points), the float64-ray path, and ray generation: the
general ``camera.rays`` of an ``(N, 2)`` pixel array, and ``camera.ray_grid`` (per-row and
per-column terms of the pixel grid) that :func:`renderImage` uses, each for the whole image in
float64. :func:`renderImage` makes its rays block by block, on all threads, while the previous
block is post-processed, and casts them in float32; its hit points are evaluated on the float64
rays.

Every step is timed ``--repeat`` times, the steps taking turns (so that a burst of load on a
shared machine hits all of them), and each figure is the best of its runs. On a shared machine
run it several times and report the range. Run with::

    .venv/bin/python tools/bench_render.py [--nthreads 2] [--repeat 9]

and paste the table it prints into the README.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

GOAL = 0.8
#: Goal of renderImage end to end against the raw cast.
GOAL_END_TO_END = 0.6


def best_times(steps: dict, repeat: int) -> dict:
    """Best wall time of each step over ``repeat`` rounds, the steps taking turns."""
    best = dict.fromkeys(steps, np.inf)
    for _ in range(repeat):
        for name, fn in steps.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    parser.add_argument("--triangles", type=int, default=1_000_000)
    parser.add_argument("--nthreads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)

    import cv2
    import open3d as o3d

    from xslit.cameras import TwoSlitIntrinsics, compose_two_slit
    from xslit.render import (
        make_terrain_scene,
        pixel_grid,
        pose_from_look_at,
        render_from_rays,
        renderImage,
    )

    w, h, n = args.width, args.height, args.nthreads
    t0 = time.perf_counter()
    scene = make_terrain_scene(0, n_triangles=args.triangles)
    t_scene = time.perf_counter() - t0
    raycaster = scene.raycaster
    intr = TwoSlitIntrinsics.from_parameters(0.57 * w, 0.285 * w, (w - 1) / 2, (h - 1) / 2,
                                             np.pi / 2, 5.0)
    camera = compose_two_slit(intr, *pose_from_look_at([0, -60, 45], [0, 5, 0]))

    pixels = pixel_grid((w, h)).reshape(-1, 2)
    rays = camera.rays(pixels)  # float64
    rays32 = np.ascontiguousarray(rays, dtype=np.float32)
    tensor32 = o3d.core.Tensor.from_numpy(rays32)  # shares rays32's memory
    t0 = time.perf_counter()
    raycaster.cast_rays(tensor32, nthreads=n)  # Open3D builds the BVH on the first cast
    t_build = time.perf_counter() - t0
    texture_and_depth = ("image", "depth", "mask")
    t0 = time.perf_counter()
    render_from_rays(scene, rays32, (w, h), outputs="image", nthreads=n)  # texel table
    t_table = time.perf_counter() - t0

    steps = {
        "raw": lambda: raycaster.cast_rays(tensor32, nthreads=n),
        "tex32": lambda: render_from_rays(scene, rays32, (w, h), outputs=texture_and_depth,
                                          nthreads=n),
        "all32": lambda: render_from_rays(scene, rays32, (w, h), nthreads=n),
        "all64": lambda: render_from_rays(scene, rays, (w, h), nthreads=n),
        "rays": lambda: camera.rays(pixels),
        "grid": lambda: camera.ray_grid(np.arange(w), np.arange(h)).rays(),
        "full": lambda: renderImage(scene, camera, (w, h), nthreads=n),
    }
    t = best_times(steps, args.repeat)
    result = renderImage(scene, camera, (w, h), nthreads=n)

    mpix = w * h / 1e6
    print(f"xslit render benchmark: {w}x{h} X-slit view of a {scene.n_triangles:,}-triangle "
          f"terrain, nthreads={n}, best of {args.repeat} (steps taking turns)")
    print(f"machine: {platform.processor() or platform.machine()}, "
          f"open3d {o3d.__version__}, opencv {cv2.__version__}, numpy {np.__version__}")
    print(f"scene generation {t_scene:.2f} s, BVH build + first cast {t_build:.2f} s, texel "
          f"table + first render {t_table:.2f} s, {result['mask'].mean():.0%} of pixels hit "
          f"the terrain")
    print()
    print("| step | time (ms) | Mrays/s | ratio to raw cast_rays |")
    print("|---|---:|---:|---:|")
    rows = [
        ("raw", "raw `cast_rays` (float32 rays precomputed)"),
        ("tex32", "`render_from_rays`, same float32 rays: texture and depth "
                  "(image, depth, mask)"),
        ("all32", "`render_from_rays`, same float32 rays: all outputs (+ float64 points)"),
        ("all64", "`render_from_rays`, float64 rays: all outputs (cast in float32, float64 "
                  "points)"),
        ("rays", "`camera.rays` of the (N, 2) pixel array (ray generation, float64)"),
        ("grid", "`camera.ray_grid(x, y).rays()` (ray generation on the pixel grid, "
                 "float64)"),
        ("full", "`renderImage` (pixels to image, all outputs, all included)"),
    ]
    for key, name in rows:
        print(f"| {name} | {1e3 * t[key]:.1f} | {mpix / t[key]:.2f} | "
              f"{t['raw'] / t[key]:.2f} |")
    print()
    ratio = t["raw"] / t["tex32"]
    print(f"throughput ratio texture and depth / raw on the same rays: {ratio:.3f} "
          f"(goal >= {GOAL:.2f}: {'met' if ratio >= GOAL else 'not met'})")
    print(f"throughput ratio all outputs / raw on the same rays: "
          f"{t['raw'] / t['all32']:.3f} (float32 rays), {t['raw'] / t['all64']:.3f} "
          f"(float64 rays)")
    end = t["raw"] / t["full"]
    print(f"throughput ratio renderImage end to end / raw: {end:.3f} (goal >= "
          f"{GOAL_END_TO_END:.2f}: {'met' if end >= GOAL_END_TO_END else 'not met'})")
    print(f"load average during the run: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
