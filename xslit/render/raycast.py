r"""Rendering any xslit camera by ray casting (Open3D ``RaycastingScene``, Embree).

Pixel convention (as OpenCV): integer image coordinates are pixel *centres*. The centre of the
pixel in row ``i`` and column ``j`` is at image coordinates ``(x, y) = (j, i)``, and
``camera.project`` returns ``(x, y)``. Each pixel is rendered from the camera's viewing ray
through its centre, ``camera.rays([[j, i]])`` (:func:`renderImage` makes the rays of the
whole pixel grid with ``camera.ray_grid``: the same rays to rounding, from per-row and
per-column terms where the camera has them); with supersampling, ``k x k`` rays at
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

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from .._checks import check_allocation, check_array, check_positive_int, check_real, check_rng
from ..cameras import Camera
from ._open3d import import_cv2, import_open3d
from .scene import Scene

__all__ = ["Correspondences", "correspondences_between", "pixel_grid", "renderImage",
           "render_from_rays"]

#: Default light direction (towards the light): from above, slightly to the side.
DEFAULT_LIGHT = (0.35, -0.45, 0.82)
#: Working memory of a render per pixel: the pixel grid (16 bytes), the image (3), depth (8),
#: hit points (24) and mask (1) it returns, and the rays and hits of the blocks in flight.
BYTES_PER_PIXEL = 64
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
    check_allocation("imageSize", imageSize, float(w) * float(h) * BYTES_PER_PIXEL)
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


#: Names of the outputs of :func:`render_from_rays`, in the order of its result.
OUTPUTS = ("image", "depth", "points", "mask")
#: Pixels per block: rays are cast and shaded block by block so that the intermediate arrays
#: stay in cache; the result does not depend on it.
BLOCK_PIXELS = 1 << 18
#: Blocks with fewer pixels are post-processed on the calling thread only.
PARALLEL_PIXELS = 1 << 14
#: Chunks per thread of a block's parallel steps, taken in turn by the threads: the work per
#: row varies (sky rows have no texture), so a few chunks each keep the threads busy.
CHUNKS_PER_THREAD = 2
#: Pixels per piece of a chunk whose rays are made and converted to float32 in one go.
RAY_PIECE = 1 << 16


def _check_outputs(outputs) -> tuple[str, ...]:
    names = (outputs,) if isinstance(outputs, str) else outputs
    try:
        names = tuple(names)
    except TypeError:
        names = ()
    if not names or not all(isinstance(n, str) and n in OUTPUTS for n in names):
        raise ValueError(f"outputs must be a non-empty sequence of names from {OUTPUTS}, got "
                         f"{outputs!r}")
    return tuple(n for n in OUTPUTS if n in names)


def _check_rays(rays, h: int, w: int) -> np.ndarray:
    """``(h * w, 6)`` rays: float32 as given (no copy when contiguous), anything else float64."""
    if isinstance(rays, np.ndarray) and rays.dtype == np.float32:
        a = rays
    else:
        a = check_array("rays", rays)
    if a.shape not in ((h * w, 6), (h, w, 6)):
        raise ValueError(f"rays must have shape ({h * w}, 6) or ({h}, {w}, 6) for imageSize "
                         f"{(w, h)}, got {a.shape}")
    return a.reshape(h * w, 6)


def _shade(normals: np.ndarray, directions: np.ndarray, hit: np.ndarray, light: np.ndarray,
           ambient: float) -> np.ndarray:
    """Shade factor ``a + (1 - a) max(0, n' . l)`` on hits, 0 on misses.

    ``n'`` is the normal turned towards the camera. ``normals`` is ``(n, 3)`` float32 and
    C-contiguous, ``directions`` ``(n, 3)`` (any strides), ``hit`` ``(n,)`` bool; returns
    ``(n,)`` float32.
    """
    cv2 = import_cv2()
    # (n, 1) images throughout: cv2 would read a 1-D array of up to 4 values as a scalar.
    cos_light = cv2.transform(normals.reshape(-1, 1, 3), light.reshape(1, 3)).reshape(-1, 1)
    cos_view = np.multiply(normals[:, 0], directions[:, 0], dtype=np.float32)
    tmp = np.empty_like(cos_view)
    for c in (1, 2):
        np.multiply(normals[:, c], directions[:, c], out=tmp, casting="same_kind")
        cos_view += tmp
    # The normal faces the camera when n . d < 0; then n' . l = n . l, else -n . l, so the
    # light reaches the surface when -(n . l)(n . d) > 0, and then n' . l = |n . l|.
    lit_by = cv2.multiply(cos_light, cos_view.reshape(-1, 1), scale=-1.0)
    _, shade = cv2.threshold(lit_by, 0.0, 1.0 - ambient, cv2.THRESH_BINARY)
    shade = shade.reshape(-1)
    shade *= np.abs(cos_light, out=cos_light).reshape(-1)
    shade += ambient
    if not hit.all():
        shade *= hit  # misses: black, the background is added by the caller
    return shade


def _texture_colour(table, texture, hits, sl, rows, w, hit, light, ambient, out=None):
    """Shaded colour of the pixels ``sl`` (whole rows) of a single-texture scene.

    Returns ``(rows, w, 3)`` uint8, written into ``out`` when given, or float32 when ``out`` is
    None (for averaging).
    """
    cv2 = import_cv2()
    ids = hits["primitive_ids"][sl]
    # Rays that hit nothing have the invalid id 2**32 - 1: clipped to the zero last row.
    coef = np.take(table, ids, axis=0, mode="clip")
    uv = hits["primitive_uvs"][sl]
    maps = np.empty((2, rows, w), np.float32)
    tmp = np.empty(len(ids), np.float32)
    for i, col in enumerate((0, 3)):
        m = maps[i].reshape(-1)
        np.multiply(coef[:, col + 1], uv[:, 0], out=m)
        m += coef[:, col]
        np.multiply(coef[:, col + 2], uv[:, 1], out=tmp)
        m += tmp
    texels = cv2.remap(texture, maps[0], maps[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
    texels = cv2.cvtColor(texels, cv2.COLOR_RGBA2RGB)
    shade = _shade(hits["primitive_normals"][sl], hits["rays"][sl, 3:], hit, light, ambient)
    shade = cv2.merge([shade.reshape(rows, w)] * 3)
    if out is None:
        return cv2.multiply(texels, shade, dtype=cv2.CV_32F)
    result = cv2.multiply(texels, shade, dst=out, dtype=cv2.CV_8U)
    if not np.shares_memory(result, out):  # cv2 allocated a new array instead of writing out
        out[...] = result
    return out


def _texture_rows(table, texture, hits, c0, rows, w, hit, light, ambient, bg, bg_u8, image,
                  add):
    """Colour ``rows`` whole image rows of hits ``[c0, c0 + rows * w)`` of a block into ``image``
    (``(rows * w, 3)``: uint8, or float32 to add to when ``add``) with the texture kernel.

    Only the rows from the first to the last one with a hit are textured; the others (sky,
    say) are set to the background.
    """
    with_hit = np.flatnonzero(hit.reshape(rows, w).any(axis=1))
    a, b = (int(with_hit[0]), int(with_hit[-1]) + 1) if len(with_hit) else (rows, rows)
    img = image.reshape(rows, w, 3)
    for empty in (img[:a], img[b:]):
        if add and bg_u8 is not None:
            empty += bg
        elif not add:
            empty[...] = 0 if bg_u8 is None else bg_u8
    if a == b:
        return
    sl = slice(c0 + a * w, c0 + b * w)
    hit = hit[a * w:b * w]
    if add:
        img[a:b] += _texture_colour(table, texture, hits, sl, b - a, w, hit, light, ambient)
    else:
        _texture_colour(table, texture, hits, sl, b - a, w, hit, light, ambient, out=img[a:b])
    if bg_u8 is not None and not hit.all():
        misses = ~hit.reshape(b - a, w)
        if add:
            img[a:b][misses] += bg
        else:
            img[a:b][misses] = bg_u8


def _general_colour(scene, hits, rays, hit, light, ambient) -> np.ndarray:
    """Shaded colour ``(n, 3)`` float32 from :meth:`Scene.albedo` (any colour source)."""
    idx = np.flatnonzero(hit)
    out = np.zeros((len(hit), 3), np.float32)
    if len(idx) == 0:
        return out
    t = hits["t_hit"][idx].astype(np.float64)
    points = rays[idx, :3] + t[:, None] * rays[idx, 3:]
    albedo = scene.albedo(hits["primitive_ids"][idx], hits["primitive_uvs"][idx], points)
    normals = np.ascontiguousarray(hits["primitive_normals"][idx])
    albedo *= _shade(normals, hits["rays"][idx, 3:], np.ones(len(idx), bool), light,
                     ambient)[:, None]
    out[idx] = albedo
    return out


def _hit_points(rays: np.ndarray, t: np.ndarray, out: np.ndarray) -> None:
    """``out = o + t d`` in float64, NaN where ``t`` is not finite (no hit).

    ``rays`` ``(n, 6)`` float32 or float64 (any strides), ``t`` ``(n,)`` float32, ``out``
    ``(n, 3)`` float64 C-contiguous.
    """
    cv2 = import_cv2()
    with np.errstate(invalid="ignore"):
        tn = np.subtract(t, t, dtype=np.float64)  # 0, or NaN where t is inf
    tn += t
    coords = []
    for c in range(3):  # coordinate planes, interleaved into out by cv2.merge
        p = np.multiply(rays[:, 3 + c], tn)  # float64
        p += rays[:, c]
        coords.append(p.reshape(-1, 1))
    cv2.merge(coords, dst=out.reshape(-1, 1, 3))


def _to_float32(src: np.ndarray, dst: np.ndarray) -> None:
    """Copy ``(n, 6)`` float64 rays into C-contiguous float32 ``dst``."""
    if src.strides[0] < src.strides[1]:  # column-major (as camera.rays returns): by columns
        for c in range(6):
            np.copyto(dst[:, c], src[:, c], casting="same_kind")
    else:
        np.copyto(dst, src, casting="same_kind")


def _render(scene, rays, h, w, outputs, light, ambient, bg, nthreads, *, accumulate=None,
            fast=True) -> dict:
    """Cast and shade ``h * w`` rays ``(h * w, 6)`` (float32 or float64) block by block.

    ``rays`` may also be a function ``rays(g0, g1, out)`` writing the float64 rays of pixels
    ``[g0, g1)`` (whole rows) into ``out`` ((g1 - g0, 6), planar: each column contiguous):
    they are then made block by block, in parallel, while the block is in cache (a full image
    of rays at once is hundreds of megabytes of temporaries, slower to fault in than to
    compute). Returns the requested ``outputs``; with ``accumulate`` ((h, w, 3)
    float32), the colour is added to it instead of returned as ``"image"``.
    """
    cv2 = import_cv2()
    light = np.asarray(light, np.float32)
    n = h * w
    res = {}
    if "image" in outputs and accumulate is None:
        res["image"] = np.empty((h, w, 3), np.uint8)
    if "depth" in outputs:
        res["depth"] = np.empty((h, w))
    if "points" in outputs:
        res["points"] = np.empty((h, w, 3))
    if "mask" in outputs:
        res["mask"] = np.empty((h, w), bool)
    colour = "image" in outputs or accumulate is not None
    table, texture = scene.texel_table() if colour and fast else (None, None)
    general = colour and table is None
    bg_u8 = cv2.convertScaleAbs(bg.reshape(1, 3)).reshape(3) if bg.any() else None
    flat = {k: v.reshape(n, -1) if v.ndim == 3 else v.reshape(n) for k, v in res.items()}
    image = accumulate.reshape(n, 3) if accumulate is not None else flat.get("image")
    step = max(1, BLOCK_PIXELS // w)
    blocks = [(r0 * w, min(h, r0 + step) * w) for r0 in range(0, h, step)]
    parts = (nthreads * CHUNKS_PER_THREAD if nthreads > 1 and min(n, step * w) >= PARALLEL_PIXELS
             else 1)
    # Float64 rays are converted block by block into these buffers for the cast; two of each,
    # so that the rays of the next block are made while the last one is post-processed.
    lazy = callable(rays)
    nbuf = min(2, len(blocks))
    buf32 = (None if not lazy and rays.dtype == np.float32
             else np.empty((nbuf, min(n, step * w), 6), np.float32))
    # Planar: the columns of a block of rays are contiguous for the generator and the hits.
    buf64 = np.empty((nbuf, 6, min(n, step * w))) if lazy else None

    def chunks_of(g0, g1):
        """Pixel ranges (whole rows, relative to g0) of a block's parallel steps."""
        edges = [round(k * (g1 - g0) / w / parts) * w for k in range(parts + 1)]
        return [(a, b) for a, b in itertools.pairwise(edges) if b > a]

    def make_rays(block, block32, g0, a, b):
        """Make the rays of pixels [a, b) of a block, and their float32 copy, piece by piece
        (each piece is converted while it is in cache)."""
        step = max(1, RAY_PIECE // w) * w
        for c0 in range(a, b, step):
            c1 = min(b, c0 + step)
            rays(g0 + c0, g0 + c1, block[c0:c1])
            _to_float32(block[c0:c1], block32[c0:c1])

    def prepare(i):
        """The float64 and float32 rays of block ``i`` and the tasks that make them."""
        g0, g1 = blocks[i]
        chunks = chunks_of(g0, g1)
        if lazy:
            block = buf64[i % nbuf, :, :g1 - g0].T
            block32 = buf32[i % nbuf, :g1 - g0]
            return block, block32, [(make_rays, (block, block32, g0, a, b)) for a, b in chunks]
        block = rays[g0:g1]
        if buf32 is None:
            return block, np.ascontiguousarray(block), []  # no copy when C-contiguous
        block32 = buf32[i % nbuf, :g1 - g0]
        return block, block32, [(_to_float32, (block[a:b], block32[a:b])) for a, b in chunks]

    def finish(hits, block_rays, g0, c0, c1, hit_out):
        """Post-process the pixels [c0, c1) of a block starting at pixel g0 (whole rows)."""
        sl = slice(c0, c1)
        gl = slice(g0 + c0, g0 + c1)
        t = hits["t_hit"][sl]
        hit = np.isfinite(t, out=hit_out[sl])
        if "depth" in flat:
            d = flat["depth"][gl]
            np.copyto(d, t)  # inf where no hit (Embree's t_hit, tested with non-finite rays)
        if "points" in flat:
            # Rows without a hit (sky, say) are NaN without evaluating their points.
            rows_hit = np.flatnonzero(hit.reshape(-1, w).any(axis=1))
            a, b = (rows_hit[0] * w, (rows_hit[-1] + 1) * w) if len(rows_hit) else (0, 0)
            points = flat["points"][gl]
            points[:a] = np.nan
            points[b:] = np.nan
            if b > a:
                _hit_points(block_rays[sl][a:b], t[a:b], points[a:b])
        if table is not None:
            _texture_rows(table, texture, hits, c0, (c1 - c0) // w, w, hit, light, ambient,
                          bg, bg_u8, image[gl], accumulate is not None)

    pool = ThreadPoolExecutor(nthreads - 1) if parts > 1 else None

    def run(tasks):
        """``fn(*args)`` for every ``(fn, args)`` of ``tasks``, on this thread and the pool's,
        each taking the next task (numpy and OpenCV release the GIL); returns when all are
        done."""
        todo = iter(tasks)
        lock = threading.Lock()

        def work():
            while True:
                with lock:
                    task = next(todo, None)
                if task is None:
                    return
                task[0](*task[1])
        futures = [pool.submit(work) for _ in range(nthreads - 1)] if pool and tasks else []
        work()
        for f in futures:
            f.result()
    try:
        block, block32, tasks = prepare(0)
        run(tasks)
        for i, (g0, g1) in enumerate(blocks):
            hits = cast_rays(scene, block32, nthreads)
            hit = flat["mask"][g0:g1] if "mask" in flat else np.empty(g1 - g0, bool)
            tasks = [(finish, (hits, block, g0, a, b, hit)) for a, b in chunks_of(g0, g1)]
            if i + 1 < len(blocks):  # the next block's rays, after this one's hits
                following = prepare(i + 1)
                tasks += following[2]
            run(tasks)
            if general:  # Scene.albedo may call user functions: on this thread only
                c = _general_colour(scene, hits, block, hit, light, ambient)
                if bg.any() and not hit.all():
                    c[~hit] = bg
                if accumulate is None:
                    image[g0:g1] = cv2.convertScaleAbs(c)
                else:
                    image[g0:g1] += c
            if i + 1 < len(blocks):
                block, block32 = following[:2]
    finally:
        if pool is not None:
            pool.shutdown()
    return res


def render_from_rays(scene, rays, imageSize, *, outputs=OUTPUTS, light_dir=DEFAULT_LIGHT,
                     nthreads: int | None = None, ambient: float = 0.35,
                     background=(0, 0, 0)) -> dict:
    """Render precomputed rays, one per pixel: the kernel of :func:`renderImage`.

    Open3D casts rays in float32: C-contiguous float32 rays are cast as given, without a copy
    (the fastest input); float64 rays are converted for the cast, block by block. The hit
    points are ``o + t d`` evaluated in float64 with the rays as given, so with float64 rays
    they lie on those rays to rounding: with the rays of ``camera.rays``, every valid pixel's
    hit point projects back to its pixel centre within ``1e-6`` px (the contract of
    :func:`renderImage`). With float32 rays the hit points are only as precise as those rays
    (float32 rounding of origins and directions, relative ``6e-8``, moves them by that
    fraction of their distance from the origin and of the coordinates).

    Parameters
    ----------
    scene : Scene
    rays : (H * W, 6) or (H, W, 6) array_like
        Origin and unit direction per pixel, row-major (as ``camera.rays`` of
        :func:`pixel_grid`), float32 or float64 (other types are converted to float64);
        non-finite rays give no hit.
    imageSize : (width, height)
    outputs : str or sequence of str
        Which of ``"image"``, ``"depth"``, ``"points"``, ``"mask"`` to compute (default: all),
        as Open3D's ``cast_rays`` returns named fields; only those are computed and returned.
        For example, video frames with depth need ``("image", "depth")`` and do not pay for
        the float64 hit points (24 bytes per pixel).
    light_dir, nthreads, ambient, background
        As in :func:`renderImage`. ``nthreads`` threads cast the rays, and as many post-process
        each block between casts (numpy and OpenCV release the GIL); procedural colours
        (``Scene.albedo``) are computed on the calling thread only.

    Returns
    -------
    render : dict
        The requested outputs only: ``"image"``, ``"depth"``, ``"points"``, ``"mask"`` as in
        :func:`renderImage`.

    Raises
    ------
    ValueError
        On a bad scene, image size, rays, shading argument, or ``outputs`` (unknown names or
        empty).
    """
    if not isinstance(scene, Scene):
        raise ValueError(f"scene must be an xslit.render.Scene, got {type(scene).__name__}")
    w, h = _check_image_size(imageSize)
    outputs = _check_outputs(outputs)
    light, ambient, bg, nthreads = _check_shading(light_dir, ambient, background, nthreads)
    rays = _check_rays(rays, h, w)
    return _render(scene, rays, h, w, outputs, light, ambient, bg, nthreads)


def _to_uint8(image: np.ndarray) -> np.ndarray:
    cv2 = import_cv2()
    return cv2.convertScaleAbs(image)  # rounds and saturates to [0, 255]; colours are >= 0


def _check_shading(light_dir, ambient, background, nthreads):
    light = _check_direction("light_dir", light_dir)
    ambient = check_real("ambient", ambient, low=0, high=1, what="a number in [0, 1]")
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
    textures, procedural textures or vertex colours, with Lambert shading. The rays are made
    block by block from ``camera.ray_grid`` (float64), while the previous block is
    post-processed, and cast in float32; the hit points are evaluated on the float64 rays.
    Those rays equal ``camera.rays`` of the pixel centres to float64 rounding, so the render
    equals that of ``render_from_rays`` on them, except where a float64 rounding difference
    crosses a float32 rounding boundary: a last-bit change of a cast ray, which can flip a
    grazing hit at a silhouette (none on the test scenes).

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

    pixels = np.empty((h, w, 2))  # pixel_grid((w, h)), written with the centre rays
    columns = np.arange(w, dtype=np.float64)
    rows = np.arange(h, dtype=np.float64)

    def rays_of(offset, centre=False):
        """Writes the rays of pixels [g0, g1) (whole rows), made when their block is cast."""
        grid = camera.ray_grid(columns + offset[0], rows + offset[1])

        def make(g0, g1, out):
            r0, r1 = g0 // w, g1 // w
            grid.rays(r0, r1, out=np.reshape(out, (r1 - r0, w, 6), copy=False))
            if centre:
                pixels[r0:r1, :, 0] = columns
                pixels[r0:r1, :, 1] = rows[r0:r1, None]
        return make

    # With supersampling, the colour comes from the k x k sub-pixel rays only.
    outputs = OUTPUTS if k == 1 else ("depth", "points", "mask")
    result = _render(scene, rays_of(np.zeros(2), centre=True), h, w, outputs, light, ambient,
                     bg, nthreads)
    if k > 1:
        image = np.zeros((h, w, 3), np.float32)
        offsets = (np.arange(k) + 0.5) / k - 0.5
        for dy in offsets:
            for dx in offsets:
                _render(scene, rays_of(np.array([dx, dy])), h, w, ("image",), light, ambient,
                        bg, nthreads, accumulate=image)
        image /= k * k
        result = {"image": _to_uint8(image), **result}
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
