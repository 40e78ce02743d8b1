r"""Rendering any xslit camera by ray casting (Open3D ``RaycastingScene``, Embree).

Pixel convention (as OpenCV): integer image coordinates are pixel *centres*. The centre of the
pixel in row ``i`` and column ``j`` is at image coordinates ``(x, y) = (j, i)``, and
``camera.project`` returns ``(x, y)``. Each pixel is rendered from the camera's viewing ray
through its centre, ``camera.rays([[j, i]])``; with supersampling, ``k x k`` rays at
``(j + (a + 1/2)/k - 1/2, i + (b + 1/2)/k - 1/2)`` are averaged for the colour, while depth and
hit point always come from the centre ray, so that

.. math:: \operatorname{project}(o + t\,d) = (j, i)

holds to rounding for every valid pixel, where ``(o, d)`` is the centre ray (float64) and
``t`` its hit distance (``depth``).

Shading is Lambertian with ambient light: a hit of albedo :math:`\rho` and unit normal
:math:`n` (turned towards the camera) has colour
:math:`\rho\,(a + (1 - a) \max(0, n \cdot l))` for a unit light direction :math:`l`
(pointing towards the light) and ambient fraction :math:`a`.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from .._checks import check_array, check_positive_int, check_rng
from ..cameras import Camera
from ._open3d import import_open3d
from .scene import Scene

__all__ = ["Correspondences", "correspondences_between", "pixel_grid", "renderImage"]

#: Default light direction (towards the light): from above, slightly to the side.
DEFAULT_LIGHT = (0.35, -0.45, 0.82)
#: Relative depth tolerance of the visibility test of :func:`correspondences_between`.
DEPTH_TOLERANCE = 1e-4


def _check_image_size(imageSize) -> tuple[int, int]:
    try:
        w, h = imageSize
    except (TypeError, ValueError):
        raise ValueError(f"imageSize must be a (width, height) pair of positive ints, got "
                         f"{imageSize!r}") from None
    for v in (w, h):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"imageSize must be a (width, height) pair of positive ints, "
                             f"got {imageSize!r}")
    return int(w), int(h)


def _check_camera(name: str, camera) -> Camera:
    if not isinstance(camera, Camera):
        raise ValueError(f"{name} must be an xslit camera (an instance of xslit.Camera), got "
                         f"{type(camera).__name__}")
    return camera


def _check_nthreads(nthreads) -> int:
    if nthreads is None:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # not on Linux
            return max(1, os.cpu_count() or 1)
    return check_positive_int("nthreads", nthreads)


def _check_direction(name: str, v) -> np.ndarray:
    a = check_array(name, v)
    n = np.linalg.norm(a) if a.shape == (3,) else 0.0
    if a.shape != (3,) or not np.isfinite(n) or n == 0:
        raise ValueError(f"{name} must be a finite non-zero 3-vector, got {v!r}")
    return a / n


def pixel_grid(imageSize) -> np.ndarray:
    """Centres of all pixels: ``grid[i, j] = (j, i)``.

    Parameters
    ----------
    imageSize : (width, height)

    Returns
    -------
    pixels : (height, width, 2) float64 ndarray

    Examples
    --------
    >>> pixel_grid((3, 2))[1, 2]
    array([2., 1.])
    """
    w, h = _check_image_size(imageSize)
    grid = np.empty((h, w, 2))
    grid[..., 0] = np.arange(w, dtype=np.float64)[None, :]
    grid[..., 1] = np.arange(h, dtype=np.float64)[:, None]
    return grid


def cast_rays(scene: Scene, rays: np.ndarray, nthreads: int) -> dict:
    """Cast ``(N, 6)`` rays (float64 or float32) into the scene; returns numpy arrays.

    Rays with non-finite entries are not cast and report no hit.

    Returns
    -------
    hits : dict
        ``t_hit`` (N,) float32 (inf: no hit), ``primitive_ids`` (N,) uint32,
        ``primitive_uvs`` (N, 2) float32, ``primitive_normals`` (N, 3) float32.
    """
    o3d = import_open3d()
    rays32 = np.ascontiguousarray(rays, dtype=np.float32)
    finite = np.isfinite(rays32).all(axis=1)
    if not finite.all():
        rays32 = rays32.copy()
        rays32[~finite] = (0, 0, 0, 0, 0, 1)
    ans = scene.raycaster.cast_rays(o3d.core.Tensor.from_numpy(rays32), nthreads=nthreads)
    out = {k: ans[k].numpy() for k in ("t_hit", "primitive_ids", "primitive_uvs",
                                       "primitive_normals")}
    if not finite.all():
        out["t_hit"][~finite] = np.inf
    return out


def _shade(scene, hits, rays, idx, points, light, ambient) -> np.ndarray:
    """Lambert-shaded colour ``(len(idx), 3)`` float32 of the hits ``idx``."""
    prim = hits["primitive_ids"][idx]
    albedo = scene.albedo(prim, hits["primitive_uvs"][idx], points)
    normals = hits["primitive_normals"][idx]
    d = rays[idx, 3:]
    cos_view = np.einsum("ij,ij->i", normals, d.astype(np.float32, copy=False))
    cos_light = normals @ light.astype(np.float32)
    cos_light[cos_view > 0] *= -1  # turn the normal towards the camera
    shade = ambient + (1.0 - ambient) * np.maximum(cos_light, 0.0)
    albedo *= shade[:, None]
    return albedo


def renderImage(scene, camera, imageSize, supersample: int = 1, light_dir=DEFAULT_LIGHT,
                nthreads: int | None = None, *, ambient: float = 0.35,
                background=(0, 0, 0)) -> dict:
    """Render a scene with any xslit camera: colour, depth, hit points and validity.

    One ray per pixel centre (see the module docstring for the pixel convention), cast with
    Open3D's ``RaycastingScene`` on ``nthreads`` threads; colours come from the scene's
    textures, procedural textures or vertex colours, with Lambert shading.

    Parameters
    ----------
    scene : Scene
    camera : xslit.Camera
        Two-slit, pushbroom, pinhole or rational camera.
    imageSize : (width, height) pair of int
        As in OpenCV.
    supersample : int
        ``k``: average the colour of ``k x k`` rays per pixel (anti-aliasing). Depth, points
        and mask always come from the centre ray.
    light_dir : (3,) array_like
        Direction towards the light (normalised here).
    nthreads : int, optional
        Threads for ``cast_rays``; default: the CPUs this process may use.
    ambient : float
        Ambient fraction ``a`` in [0, 1].
    background : (3,) array_like
        RGB colour of pixels whose ray hits nothing.

    Returns
    -------
    render : dict
        ``"image"`` (H, W, 3) uint8 RGB; ``"depth"`` (H, W) float64, distance along the unit
        ray from its origin (``camera.rays``), inf where no hit; ``"points"`` (H, W, 3)
        float64 world hit points, NaN where no hit; ``"mask"`` (H, W) bool, valid hits;
        ``"camera"`` the camera; ``"pixels"`` (H, W, 2) float64 pixel centres
        (``pixels[i, j] = (j, i)``); ``"scene"`` the scene (used by
        :func:`correspondences_between`).

    Examples
    --------
    >>> from xslit import PinholeCamera
    >>> scene = Scene.from_arrays([[-1, -1, 2], [1, -1, 2], [0, 1, 2]], [[0, 1, 2]])
    >>> cam = PinholeCamera.from_intrinsics([[20, 0, 15], [0, 20, 10], [0, 0, 1]])
    >>> r = renderImage(scene, cam, (32, 24), nthreads=1)
    >>> r["image"].shape, bool(r["mask"][10, 15]), round(float(r["depth"][10, 15]), 6)
    ((24, 32, 3), True, 2.0)
    """
    if not isinstance(scene, Scene):
        raise ValueError(f"scene must be an xslit.render.Scene, got {type(scene).__name__}")
    camera = _check_camera("camera", camera)
    w, h = _check_image_size(imageSize)
    k = check_positive_int("supersample", supersample)
    light = _check_direction("light_dir", light_dir)
    nthreads = _check_nthreads(nthreads)
    if not 0 <= ambient <= 1:
        raise ValueError(f"ambient must be in [0, 1], got {ambient}")
    bg = check_array("background", background)
    if bg.shape != (3,):
        raise ValueError(f"background must be an RGB triple, got {background!r}")

    pixels = pixel_grid((w, h))
    rays = camera.rays(pixels.reshape(-1, 2))
    hits = cast_rays(scene, rays, nthreads)
    t = hits["t_hit"]
    mask = np.isfinite(t)
    depth = t.astype(np.float64)
    idx = np.flatnonzero(mask)
    points = np.full((h * w, 3), np.nan)
    points[idx] = rays[idx, :3] + depth[idx, None] * rays[idx, 3:]

    image = np.empty((h * w, 3), np.float32)
    if k == 1:
        image[:] = bg
        image[idx] = _shade(scene, hits, rays, idx, points[idx], light, ambient)
    else:
        image[:] = 0
        offsets = (np.arange(k) + 0.5) / k - 0.5
        for dy in offsets:
            for dx in offsets:
                sub = camera.rays((pixels + np.array([dx, dy])).reshape(-1, 2))
                sub_hits = cast_rays(scene, sub, nthreads)
                sub_t = sub_hits["t_hit"]
                sub_idx = np.flatnonzero(np.isfinite(sub_t))
                sub_points = sub[sub_idx, :3] + sub_t[sub_idx, None].astype(np.float64) * \
                    sub[sub_idx, 3:]
                contrib = np.empty((h * w, 3), np.float32)
                contrib[:] = bg
                contrib[sub_idx] = _shade(scene, sub_hits, sub, sub_idx, sub_points, light,
                                          ambient)
                image += contrib
        image /= k * k
    image = np.clip(np.rint(image), 0, 255).astype(np.uint8)
    return {
        "image": image.reshape(h, w, 3),
        "depth": depth.reshape(h, w),
        "points": points.reshape(h, w, 3),
        "mask": mask.reshape(h, w),
        "camera": camera,
        "pixels": pixels,
        "scene": scene,
    }


class Correspondences(NamedTuple):
    """Ground-truth matches between two renders: ``points1[n] <-> points2[n]`` see ``X[n]``."""

    points1: np.ndarray  # (N, 2) pixel centres in view 1
    points2: np.ndarray  # (N, 2) projections of X in view 2
    X: np.ndarray  # (N, 3) world points


def _check_render(name: str, render) -> dict:
    if not isinstance(render, dict) or not {"points", "mask", "pixels"} <= set(render):
        raise ValueError(f"{name} must be a dict returned by renderImage (with 'points', "
                         f"'mask' and 'pixels'), got {type(render).__name__}")
    return render


def correspondences_between(render1, render2, camera1=None, camera2=None, *, scene=None,
                            max_points: int | None = None, rng=None,
                            depth_tolerance: float = DEPTH_TOLERANCE,
                            nthreads: int | None = None) -> Correspondences:
    r"""Exact ground-truth correspondences between two rendered views, with visibility.

    Every valid pixel of view 1 gives its hit point :math:`X`; :math:`x_2 = P_2(X)` is kept
    when it falls inside view 2's image, :math:`X` is in front of camera 2, and the ray of
    :math:`x_2` in view 2 first hits the scene at :math:`X`: with that ray ``(o, d)``,

    .. math:: |t_{hit} - (X - o) \cdot d| \le \tau \max(1, (X - o) \cdot d),

    where :math:`\tau` is ``depth_tolerance``; otherwise :math:`X` is occluded in view 2.

    Parameters
    ----------
    render1, render2 : dict
        Results of :func:`renderImage`.
    camera1, camera2 : xslit.Camera, optional
        Default: the renders' ``"camera"``.
    scene : Scene, optional
        Scene to cast view 2's rays in; default: ``render2["scene"]``.
    max_points : int, optional
        Keep a random subset of at most this many correspondences.
    rng : None, int or numpy.random.Generator
        For the subset.
    depth_tolerance : float
        Relative depth tolerance :math:`\tau` of the visibility test.
    nthreads : int, optional
        Threads for ``cast_rays``.

    Returns
    -------
    Correspondences
        ``points1`` (N, 2) float64 pixel centres of view 1, ``points2`` (N, 2) float64
        projections in view 2 (sub-pixel), ``X`` (N, 3) float64 world points; rows ordered by
        pixel of view 1 (row-major) unless subsampled.
    """
    render1 = _check_render("render1", render1)
    render2 = _check_render("render2", render2)
    cam1 = _check_camera("camera1", render1.get("camera") if camera1 is None else camera1)
    cam2 = _check_camera("camera2", render2.get("camera") if camera2 is None else camera2)
    del cam1  # view 1's geometry is in render1's points
    scene = render2.get("scene") if scene is None else scene
    if not isinstance(scene, Scene):
        raise ValueError(f"scene must be an xslit.render.Scene (or render2 must hold one), "
                         f"got {type(scene).__name__}")
    if not depth_tolerance > 0:
        raise ValueError(f"depth_tolerance must be positive, got {depth_tolerance}")
    nthreads = _check_nthreads(nthreads)
    rng = check_rng(rng)
    h2, w2 = render2["mask"].shape

    mask1 = np.asarray(render1["mask"]).reshape(-1)
    X = np.asarray(render1["points"], dtype=np.float64).reshape(-1, 3)[mask1]
    p1 = np.asarray(render1["pixels"], dtype=np.float64).reshape(-1, 2)[mask1]
    if len(X) == 0:
        empty = np.empty((0, 2))
        return Correspondences(empty, empty.copy(), np.empty((0, 3)))
    p2 = cam2.project(X)
    ok = np.isfinite(p2).all(axis=1) & cam2.in_front(X)
    ok &= (p2[:, 0] >= -0.5) & (p2[:, 0] < w2 - 0.5) & (p2[:, 1] >= -0.5) & (p2[:, 1] < h2 - 0.5)
    sel = np.flatnonzero(ok)
    rays2 = cam2.rays(p2[sel])
    t_expected = np.einsum("ij,ij->i", X[sel] - rays2[:, :3], rays2[:, 3:])
    t_hit = cast_rays(scene, rays2, nthreads)["t_hit"].astype(np.float64)
    visible = np.abs(t_hit - t_expected) <= depth_tolerance * np.maximum(1.0, t_expected)
    sel = sel[visible & (t_expected > 0)]
    if max_points is not None:
        max_points = check_positive_int("max_points", max_points)
        if len(sel) > max_points:
            sel = np.sort(rng.choice(sel, size=max_points, replace=False))
    return Correspondences(p1[sel], p2[sel], X[sel])
