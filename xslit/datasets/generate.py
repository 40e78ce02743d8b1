"""Dataset recipes: a procedural scene, a camera rig, rendering and ground truth, written
atomically in the xslit dataset format (``datasets/FORMAT.md``)."""

from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

from ..io.dataset import DatasetWriter
from ..io.progress import ProgressBar
from .rigs import pushbroom_strips_rig, xslit_circle_rig, xslit_stereo_rig

__all__ = ["DEFAULT_VIEWS", "RECIPES", "generate_dataset", "parse_size"]

#: Recipe name -> (scene kind, description).
RECIPES = {
    "xslit-stereo": ("room", "an X-slit stereo pair in the textured room"),
    "xslit-circle": ("room", "a circle of X-slit views around the textured room's centre"),
    "pushbroom-strips": ("terrain", "pushbroom strips along parallel flight lines over a "
                                    "fractal terrain"),
}
DEFAULT_VIEWS = {"xslit-stereo": 2, "xslit-circle": 8, "pushbroom-strips": 3}
#: Points in the ground-truth point cloud ``points.ply`` (at most).
POINT_CLOUD_SIZE = 100_000


def parse_size(text) -> tuple[int, int]:
    """``"640x480"`` or ``(640, 480)`` to ``(width, height)``; ValueError otherwise."""
    if isinstance(text, str):
        parts = text.lower().split("x")
        try:
            w, h = (int(p) for p in parts)
        except ValueError:
            raise ValueError(f"size must be WIDTHxHEIGHT like 640x480, got {text!r}") from None
    else:
        try:
            w, h = text
        except (TypeError, ValueError):
            raise ValueError(f"size must be (width, height), got {text!r}") from None
    if not all(isinstance(v, numbers.Integral) and 8 <= v <= 16384 for v in (w, h)):
        raise ValueError(f"size must be two integers in [8, 16384], got {text!r}")
    return int(w), int(h)


def _pairs(recipe: str, n: int) -> list[tuple[int, int]]:
    if recipe == "xslit-circle":
        return [(k, (k + 1) % n) for k in range(n)] if n > 2 else [(0, 1)]
    return [(k, k + 1) for k in range(n - 1)]


def _scene(recipe: str, seed: int, scene_options: dict):
    from ..render import make_room_scene, make_terrain_scene

    make = make_room_scene if RECIPES[recipe][0] == "room" else make_terrain_scene
    try:
        return make(seed, **scene_options)
    except TypeError as exc:
        raise ValueError(f"scene_options: {exc}") from None


def generate_dataset(recipe: str, out, size="640x480", seed: int = 0, views: int | None = None,
                     *, supersample: int = 2, max_matches: int = 20_000,
                     scene_options: dict | None = None, nthreads: int | None = None,
                     overwrite: bool = False, progress: bool | None = None) -> Path:
    """Render a dataset from a recipe and write it to ``out`` (atomically).

    Parameters
    ----------
    recipe : {"xslit-stereo", "xslit-circle", "pushbroom-strips"}
        Scene and rig (see :data:`RECIPES` and :mod:`xslit.datasets.rigs`).
    out : str or Path
        Dataset folder to create.
    size : str or (width, height)
        Image size, ``"640x480"``.
    seed : int
        Seeds the scene (``make_*_scene(seed)``), the rig's jitter and the match subsets:
        the same seed gives the same dataset.
    views : int, optional
        Number of views (stereo: 2 only; circle: default 8; strips: default 3).
    supersample : int
        Anti-aliasing: ``k x k`` rays per pixel for the colour.
    max_matches : int
        Ground-truth correspondences kept per pair (a seeded random subset).
    scene_options : dict, optional
        Keyword arguments of the scene maker (e.g. ``{"n_triangles": 20000}`` for a small
        terrain); unknown keys raise ValueError.
    nthreads : int, optional
        Ray-casting threads.
    overwrite : bool
        Replace an existing dataset at ``out``.
    progress : bool or None
        Progress bar on stderr (None: only on a terminal).

    Returns
    -------
    Path
        ``out``.
    """
    from ..render import correspondences_between, renderImage

    if recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {sorted(RECIPES)}, got {recipe!r}")
    w, h = parse_size(size)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    n = DEFAULT_VIEWS[recipe] if views is None else views
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"views must be a positive integer, got {views!r}")
    if recipe == "xslit-stereo" and n != 2:
        raise ValueError(f"views must be 2 for the xslit-stereo recipe, got {views}")
    if recipe == "xslit-circle" and n < 2:
        raise ValueError(f"views must be at least 2 for the xslit-circle recipe, got {views}")
    scene_options = dict(scene_options or {})
    rig_rng = np.random.default_rng([seed, 1])
    pair_rng = np.random.default_rng([seed, 2])
    if recipe == "xslit-stereo":
        rig = xslit_stereo_rig((w, h), rig_rng)
    elif recipe == "xslit-circle":
        rig = xslit_circle_rig((w, h), n, rig_rng)
    else:
        extent = float(scene_options.get("extent", 100.0))
        relief = float(scene_options.get("relief", 12.0))
        rig = pushbroom_strips_rig((w, h), n, rig_rng, extent=extent, relief=relief,
                                   altitude=0.6 * extent)
    light = (0.35, -0.45, 0.82)
    metadata = {"recipe": recipe, "description": RECIPES[recipe][1], "seed": int(seed),
                "image_size": [w, h], "supersample": int(supersample), "light_dir": light,
                "max_matches": int(max_matches), "scene_options": scene_options}
    # The writer checks `out` before any rendering.
    with DatasetWriter(out, metadata, overwrite=overwrite, progress=progress) as writer:
        scene = _scene(recipe, seed, scene_options)
        writer.metadata["scene"] = {"kind": RECIPES[recipe][0],
                                    "triangles": int(scene.n_triangles),
                                    "info": scene.info}
        pairs = _pairs(recipe, n)
        renders = []
        bar = ProgressBar(len(rig) + len(pairs), f"{recipe}", enabled=progress)
        cloud_pts, cloud_rgb = [], []
        per_view = POINT_CLOUD_SIZE // len(rig)
        for v in rig:
            r = renderImage(scene, v.camera, (w, h), supersample=supersample, light_dir=light,
                            nthreads=nthreads)
            writer.add_view(v.name, v.camera, r["image"], points=r["points"].astype(np.float32),
                            intrinsics=v.intrinsics, pose=v.pose,
                            meta={**v.meta, "valid_pixels": int(r["mask"].sum())})
            idx = np.flatnonzero(r["mask"].ravel())
            idx = pair_rng.choice(idx, size=min(per_view, len(idx)), replace=False)
            cloud_pts.append(r["points"].reshape(-1, 3)[idx])
            cloud_rgb.append(r["image"].reshape(-1, 3)[idx])
            renders.append(r)
            bar.update(note=v.name)
        for i, j in pairs:
            c = correspondences_between(renders[i], renders[j], max_points=max_matches,
                                        rng=pair_rng, nthreads=nthreads)
            writer.add_correspondences(rig[i].name, rig[j].name, c.points1, c.points2, c.X)
            bar.update(note=f"{rig[i].name}-{rig[j].name}: {len(c.X)} matches")
        bar.close()
        writer.set_point_cloud(np.concatenate(cloud_pts), np.concatenate(cloud_rgb))
    return Path(out)
