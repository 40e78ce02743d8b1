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
from ._open3d import import_cv2, import_open3d
from .scene import Scene

__all__ = ["Correspondences", "correspondences_between", "pixel_grid", "renderImage",
           "render_from_rays"]

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
        ``primitive_uvs`` (N, 2) float32, ``primitive_normals`` (N, 3) float32, and
        ``rays`` (N, 6) float32, the rays as cast.
    """
    o3d = import_open3d()
    rays32 = np.ascontiguousarray(rays, dtype=np.float32)
    # Embree reports no hit for rays with NaN or inf entries (tested in test_render.py).
    ans = scene.raycaster.cast_rays(o3d.core.Tensor.from_numpy(rays32), nthreads=nthreads)
    out = {k: ans[k].numpy() for k in ("t_hit", "primitive_ids", "primitive_uvs",
                                       "primitive_normals")}
    out["rays"] = rays32
    return out


#: Pixels per block: rays are cast and shaded block by block so that the intermediate arrays
#: stay in cache; the result does not depend on it.
BLOCK_PIXELS = 1 << 18


def _lambert(normals: np.ndarray, directions: np.ndarray, light: np.ndarray,
             ambient: float) -> np.ndarray:
    """Shade factor ``a + (1 - a) max(0, n' . l)``, ``n'`` the normal turned to the camera.

    ``normals`` and ``directions`` are ``(h, w, 3)`` float32 images; returns ``(h, w)``.
    """
    cv2 = import_cv2()
    ones = np.ones((1, 3), np.float32)
    cos_light = cv2.transform(normals, light.reshape(1, 3).astype(np.float32))
    cos_view = cv2.transform(cv2.multiply(normals, directions), ones)
    # The normal faces the camera when n . d < 0; then n' . l = n . l, else -n . l.
    lit = np.abs(cos_light)
    lit[cos_light * cos_view >= 0] = 0.0
    lit *= 1.0 - ambient
    lit += ambient
    return lit.reshape(normals.shape[:2])


def _colour_fast(scene, table, hits, dirs, mask, h, w, light, ambient):
    """Shaded colour ``(h, w, 3)`` float32 of a single-texture scene, all in ``cv2``."""
    cv2 = import_cv2()
    prim = np.where(mask, hits["primitive_ids"], 0)
    gather = np.empty((h, w, 2), np.int16)
    np.bitwise_and(prim, 4095, out=gather[..., 0].reshape(-1), casting="unsafe")
    np.right_shift(prim, 12, out=gather[..., 1].reshape(-1), casting="unsafe")
    b1, b2 = cv2.split(hits["primitive_uvs"].reshape(h, w, 2))
    weights = cv2.merge([np.ones_like(b1), b1, b2])
    ones = np.ones((1, 3), np.float32)
    xy = [cv2.transform(cv2.multiply(cv2.remap(t, gather, None, cv2.INTER_NEAREST), weights),
                        ones) for t in table]
    texels = cv2.remap(scene.textures[0], xy[0], xy[1], cv2.INTER_LINEAR,
                       borderMode=cv2.BORDER_WRAP)
    shade = _lambert(hits["primitive_normals"].reshape(h, w, 3), dirs, light, ambient)
    if not mask.all():
        shade *= mask.reshape(h, w)  # misses: black, the background is added by the caller
    return cv2.multiply(texels, cv2.merge([shade, shade, shade]), dtype=cv2.CV_32F)


def _colour_general(scene, hits, rays, mask, h, w, light, ambient):
    """Shaded colour ``(h, w, 3)`` float32 from :meth:`Scene.albedo` (any colour source)."""
    idx = np.flatnonzero(mask)
    out = np.zeros((h * w, 3), np.float32)
    if len(idx) == 0:
        return out.reshape(h, w, 3)
    t = hits["t_hit"][idx].astype(np.float64)
    points = rays[idx, :3] + t[:, None] * rays[idx, 3:]
    albedo = scene.albedo(hits["primitive_ids"][idx], hits["primitive_uvs"][idx], points)
    normals = np.ascontiguousarray(hits["primitive_normals"][idx]).reshape(-1, 1, 3)
    dirs = rays[idx, 3:].astype(np.float32).reshape(-1, 1, 3)
    albedo *= _lambert(normals, dirs, light, ambient)
    out[idx] = albedo
    return out.reshape(h, w, 3)


def _render_block(scene, rays, h, w, light, ambient, bg, nthreads, image, depth=None,
                  points=None, mask=None, *, fast=True):
    """Cast and shade ``h * w`` rays ``(h * w, 6)`` float64; write into the output views.

    ``image`` (h, w, 3) float32 receives the colour (added to it); ``depth`` (h, w),
    ``points`` (h, w, 3) and ``mask`` (h, w), when given, the geometry.
    """
    cv2 = import_cv2()
    hits = cast_rays(scene, rays, nthreads)
    t = hits["t_hit"]
    hit = np.isfinite(t)
    if depth is not None:
        d = depth.reshape(-1)
        d[:] = t
        mask.reshape(-1)[:] = hit
        if not hit.all():
            d[~hit] = np.nan  # so that the points are NaN; set back to inf below
        p = points.reshape(-1, 3)
        np.multiply(rays[:, 3:], d[:, None], out=p)
        p += rays[:, :3]
        if not hit.all():
            d[~hit] = np.inf
    table = scene.texel_table() if fast else None
    if table is not None:
        dirs = np.ascontiguousarray(hits["rays"][:, 3:]).reshape(h, w, 3)
        colour = _colour_fast(scene, table, hits, dirs, hit, h, w, light, ambient)
    else:
        colour = _colour_general(scene, hits, rays, hit, h, w, light, ambient)
    if bg.any() and not hit.all():
        colour += (~hit).reshape(h, w, 1) * bg  # misses are black so far
    cv2.add(image, colour, dst=image)


def render_from_rays(scene, rays, imageSize, *, light_dir=DEFAULT_LIGHT,
                     nthreads: int | None = None, ambient: float = 0.35,
                     background=(0, 0, 0)) -> dict:
    """Render precomputed rays, one per pixel: the kernel of :func:`renderImage`.

    Parameters
    ----------
    scene : Scene
    rays : (H * W, 6) or (H, W, 6) array_like
        Origin and unit direction per pixel, row-major (as ``camera.rays`` of
        :func:`pixel_grid`); non-finite rays give no hit.
    imageSize : (width, height)
    light_dir, nthreads, ambient, background
        As in :func:`renderImage`.

    Returns
    -------
    render : dict
        ``"image"``, ``"depth"``, ``"points"``, ``"mask"`` as in :func:`renderImage`.
    """
    if not isinstance(scene, Scene):
        raise ValueError(f"scene must be an xslit.render.Scene, got {type(scene).__name__}")
    w, h = _check_image_size(imageSize)
    light, ambient, bg, nthreads = _check_shading(light_dir, ambient, background, nthreads)
    rays = check_array("rays", rays)
    if rays.shape not in ((h * w, 6), (h, w, 6)):
        raise ValueError(f"rays must have shape ({h * w}, 6) or ({h}, {w}, 6) for imageSize "
                         f"{(w, h)}, got {rays.shape}")
    rays = np.ascontiguousarray(rays.reshape(h * w, 6))
    image = np.zeros((h, w, 3), np.float32)
    depth = np.empty((h, w))
    points = np.empty((h, w, 3))
    mask = np.empty((h, w), bool)
    step = max(1, BLOCK_PIXELS // w)
    for r0 in range(0, h, step):
        r1 = min(h, r0 + step)
        _render_block(scene, rays[r0 * w:r1 * w], r1 - r0, w, light, ambient, bg, nthreads,
                      image[r0:r1], depth[r0:r1], points[r0:r1], mask[r0:r1])
    return {"image": _to_uint8(image), "depth": depth, "points": points, "mask": mask}


def _to_uint8(image: np.ndarray) -> np.ndarray:
    cv2 = import_cv2()
    return cv2.convertScaleAbs(image)  # rounds and saturates to [0, 255]; colours are >= 0


def _check_shading(light_dir, ambient, background, nthreads):
    light = _check_direction("light_dir", light_dir)
    if not 0 <= ambient <= 1:
        raise ValueError(f"ambient must be in [0, 1], got {ambient}")
    bg = check_array("background", background)
    if bg.shape != (3,) or not np.all((bg >= 0) & (bg <= 255)):
        raise ValueError(f"background must be an RGB triple in [0, 255], got {background!r}")
    return light, float(ambient), bg.astype(np.float32), _check_nthreads(nthreads)


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
    light, ambient, bg, nthreads = _check_shading(light_dir, ambient, background, nthreads)

    pixels = pixel_grid((w, h))
    result = render_from_rays(scene, camera.rays(pixels.reshape(-1, 2)), (w, h),
                              light_dir=light, nthreads=nthreads, ambient=ambient,
                              background=bg)
    if k > 1:
        image = np.zeros((h, w, 3), np.float32)
        offsets = (np.arange(k) + 0.5) / k - 0.5
        step = max(1, BLOCK_PIXELS // w)
        for dy in offsets:
            for dx in offsets:
                sub = camera.rays((pixels + np.array([dx, dy])).reshape(-1, 2))
                for r0 in range(0, h, step):
                    r1 = min(h, r0 + step)
                    _render_block(scene, sub[r0 * w:r1 * w], r1 - r0, w, light, ambient, bg,
                                  nthreads, image[r0:r1])
        image /= k * k
        result["image"] = _to_uint8(image)
    result.update(camera=camera, pixels=pixels, scene=scene)
    return result


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
