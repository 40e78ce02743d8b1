r"""Procedural colour textures, generated in code from a seed, and bilinear texture lookup.

Every generator returns an ``(H, W, 3)`` uint8 RGB image and takes
``rng: None | int | numpy.random.Generator``. The textures are made for feature matching:
they carry detail at every scale (fractal value noise, sums of octaves
:math:`n(x) = \sum_k a^k\, v(2^k x)` of smooth random lattices :math:`v`), sharp coloured
shapes, letters and patterns, so that SIFT finds thousands of distinctive keypoints on a render.

Texture coordinates follow the OBJ convention, which is how Open3D stores ``triangle_uvs``
for OBJ, PLY and glTF files: :math:`(u, v) \in [0, 1]^2` with :math:`v` pointing *up* the
image, so the texel at row ``r`` and column ``c`` of an ``H x W`` texture has its centre at
``u = (c + 0.5) / W``, ``v = 1 - (r + 0.5) / H``. Lookups wrap around (textures tile).
"""

from __future__ import annotations

import string

import numpy as np

from .._checks import check_array, check_positive_int, check_rng
from ._open3d import import_cv2

__all__ = [
    "bricks_texture",
    "checkerboard_texture",
    "colorize",
    "fractal_noise",
    "land_cover_texture",
    "noise_texture",
    "sample_texture",
    "shapes_texture",
    "tiles_texture",
    "wood_texture",
]

#: Width of the 2D maps given to ``cv2.remap`` (its maps must be narrower than 32767).
_REMAP_WIDTH = 4096


def _check_size(name: str, size) -> tuple[int, int]:
    """``size`` as ``(height, width)``; an int means a square."""
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        size = (size, size)
    try:
        h, w = size
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an int or a (height, width) pair, got {size!r}") from None
    return check_positive_int(f"{name}[0]", h, minimum=2), check_positive_int(f"{name}[1]", w,
                                                                              minimum=2)


def fractal_noise(size, rng=None, *, scale: float = 4.0, octaves: int = 7,
                  persistence: float = 0.55) -> np.ndarray:
    r"""Fractal value noise in :math:`[0, 1]`: a sum of smooth random lattices.

    .. math:: n(x) = \sum_{k=0}^{K-1} p^k\, v_k(2^k s\, x)

    where :math:`v_k` is a lattice of uniform random values interpolated bicubically, ``s`` the
    number of lattice cells across the image at the coarsest octave and ``p`` the persistence.
    Octaves finer than two pixels per cell are skipped.

    Parameters
    ----------
    size : int or (height, width)
    rng : None, int or numpy.random.Generator
    scale : float
        Lattice cells across the longer side at the coarsest octave.
    octaves : int
    persistence : float
        Amplitude ratio between successive octaves, in (0, 1].

    Returns
    -------
    noise : (H, W) float32 ndarray, with minimum 0 and maximum 1.

    Examples
    --------
    >>> n = fractal_noise((64, 96), rng=0)
    >>> n.shape, float(n.min()), float(n.max())
    ((64, 96), 0.0, 1.0)
    """
    cv2 = import_cv2()
    h, w = _check_size("size", size)
    rng = check_rng(rng)
    octaves = check_positive_int("octaves", octaves)
    if not 0 < scale or not np.isfinite(scale):
        raise ValueError(f"scale must be a positive number of cells, got {scale}")
    if not 0 < persistence <= 1:
        raise ValueError(f"persistence must be in (0, 1], got {persistence}")
    out = np.zeros((h, w), np.float32)
    longest = max(h, w)
    amplitude = 1.0
    for k in range(octaves):
        cells = scale * 2.0**k
        if k > 0 and longest / cells < 2.0:
            break
        ch = max(2, int(np.ceil(cells * h / longest)) + 1)
        cw = max(2, int(np.ceil(cells * w / longest)) + 1)
        lattice = rng.random((ch, cw), dtype=np.float32)
        out += amplitude * cv2.resize(lattice, (w, h), interpolation=cv2.INTER_CUBIC)
        amplitude *= persistence
    out -= out.min()
    top = out.max()
    if top > 0:
        out /= top
    return out


def colorize(values, colors) -> np.ndarray:
    """Map values in ``[0, 1]`` through a piecewise-linear colour ramp.

    Parameters
    ----------
    values : (H, W) array_like
        Values in ``[0, 1]`` (clipped).
    colors : (K, 3) array_like
        RGB colours (0-255) at evenly spaced stops ``0, 1/(K-1), ..., 1``; ``K >= 2``.

    Returns
    -------
    image : (H, W, 3) uint8 ndarray

    Examples
    --------
    >>> colorize([[0.0, 1.0]], [[0, 0, 0], [255, 128, 0]])
    array([[[  0,   0,   0],
            [255, 128,   0]]], dtype=uint8)
    """
    colors = check_array("colors", colors)
    if colors.ndim != 2 or colors.shape[1] != 3 or colors.shape[0] < 2:
        raise ValueError(f"colors must have shape (K, 3) with K >= 2, got {colors.shape}")
    stops = np.linspace(0.0, 1.0, len(colors))
    ramp = np.linspace(0.0, 1.0, 256)
    lut = np.stack([np.interp(ramp, stops, colors[:, c]) for c in range(3)], axis=1)
    lut = np.clip(np.rint(lut), 0, 255).astype(np.uint8)
    idx = np.clip(np.rint(np.asarray(values, np.float32) * 255), 0, 255).astype(np.uint8)
    return lut[idx]


def _random_palette(rng, k: int = 5) -> np.ndarray:
    """``k`` random colours of increasing brightness, with a random dominant hue."""
    base = rng.uniform(40, 215, size=3)
    cols = base + rng.normal(scale=55, size=(k, 3))
    cols += np.linspace(-70, 70, k)[:, None]
    return np.clip(cols, 0, 255)


def _modulate(image: np.ndarray, noise: np.ndarray, strength: float) -> np.ndarray:
    """Multiply an RGB image by ``1 + strength * (noise - 0.5)`` (in place friendly copy)."""
    gain = 1.0 + strength * (noise[..., None] - 0.5)
    return np.clip(image * gain, 0, 255).astype(np.uint8)


def noise_texture(size, rng=None, *, colors=None, scale: float = 4.0,
                  octaves: int = 8) -> np.ndarray:
    """Coloured fractal noise: a random colour ramp over fractal noise, with fine grain.

    Parameters
    ----------
    size : int or (height, width)
    rng : None, int or numpy.random.Generator
    colors : (K, 3) array_like, optional
        Colour ramp (see :func:`colorize`); random when omitted.
    scale, octaves : see :func:`fractal_noise`

    Returns
    -------
    image : (H, W, 3) uint8 ndarray
    """
    rng = check_rng(rng)
    h, w = _check_size("size", size)
    colors = _random_palette(rng) if colors is None else colors
    base = colorize(fractal_noise((h, w), rng, scale=scale, octaves=octaves), colors)
    grain = fractal_noise((h, w), rng, scale=4 * scale, octaves=octaves, persistence=0.7)
    return _modulate(base, grain, 0.6)


def _draw_shapes(cv2, img: np.ndarray, rng, count: int, min_frac=0.01, max_frac=0.12,
                 letters: bool = True) -> None:
    """Draw ``count`` random anti-aliased shapes on ``img`` in place."""
    h, w = img.shape[:2]
    side = min(h, w)
    for _ in range(count):
        r = float(np.exp(rng.uniform(np.log(min_frac), np.log(max_frac)))) * side
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        color = tuple(int(c) for c in rng.integers(0, 256, size=3))
        kind = rng.integers(0, 6 if letters else 5)
        center = (int(cx), int(cy))
        if kind == 0:
            cv2.circle(img, center, max(1, int(r)), color, -1, cv2.LINE_AA)
        elif kind == 1:
            axes = (max(1, int(r)), max(1, int(r * rng.uniform(0.2, 0.8))))
            cv2.ellipse(img, center, axes, float(rng.uniform(0, 180)), 0, 360, color, -1,
                        cv2.LINE_AA)
        elif kind == 2:
            n = int(rng.integers(3, 7))
            ang = np.sort(rng.uniform(0, 2 * np.pi, n))
            rad = r * rng.uniform(0.5, 1.0, n)
            pts = np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], 1).astype(np.int32)
            cv2.fillPoly(img, [pts], color, cv2.LINE_AA)
        elif kind == 3:
            ang = rng.uniform(0, np.pi)
            dx, dy = r * np.cos(ang), r * np.sin(ang)
            cv2.line(img, (int(cx - dx), int(cy - dy)), (int(cx + dx), int(cy + dy)), color,
                     max(1, int(r * rng.uniform(0.05, 0.2))), cv2.LINE_AA)
        elif kind == 4:
            a, b = r, r * rng.uniform(0.3, 1.0)
            box = cv2.boxPoints(((cx, cy), (2 * a, 2 * b), float(rng.uniform(0, 90))))
            cv2.fillPoly(img, [box.astype(np.int32)], color, cv2.LINE_AA)
        else:
            text = "".join(rng.choice(list(string.ascii_uppercase + string.digits),
                                      size=int(rng.integers(1, 5))))
            font_scale = max(0.3, r / 15.0)
            cv2.putText(img, text, center, int(rng.choice([0, 1, 2, 3, 4, 6, 7])), font_scale,
                        color, max(1, int(font_scale * 1.5)), cv2.LINE_AA)


def shapes_texture(size, rng=None, *, count: int | None = None) -> np.ndarray:
    """Random coloured shapes and letters over coloured noise, like a poster or a collage.

    Parameters
    ----------
    size : int or (height, width)
    rng : None, int or numpy.random.Generator
    count : int, optional
        Number of shapes; by default about one per 2500 texels.

    Returns
    -------
    image : (H, W, 3) uint8 ndarray
    """
    cv2 = import_cv2()
    rng = check_rng(rng)
    h, w = _check_size("size", size)
    count = max(1, h * w // 2500) if count is None else check_positive_int("count", count)
    img = np.ascontiguousarray(noise_texture((h, w), rng, scale=3.0))
    _draw_shapes(cv2, img, rng, count)
    grain = fractal_noise((h, w), rng, scale=32.0, octaves=4, persistence=0.7)
    return _modulate(img, grain, 0.35)


def bricks_texture(size, rng=None, *, rows: int = 12, bricks_per_row: int = 6) -> np.ndarray:
    """A brick wall: tinted bricks in running bond, grey mortar, grit noise.

    Parameters
    ----------
    size : int or (height, width)
    rng : None, int or numpy.random.Generator
    rows, bricks_per_row : int
        Brick courses over the texture height and bricks per course.

    Returns
    -------
    image : (H, W, 3) uint8 ndarray
    """
    rng = check_rng(rng)
    h, w = _check_size("size", size)
    rows = check_positive_int("rows", rows)
    bricks_per_row = check_positive_int("bricks_per_row", bricks_per_row)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    row = np.floor(yy * rows / h).astype(np.int64)
    xs = xx * bricks_per_row / w + 0.5 * (row % 2)
    col = np.floor(xs).astype(np.int64) % bricks_per_row
    fy = yy * rows / h - row
    fx = xs - np.floor(xs)
    mortar = (fy < 0.08) | (fx < 0.04)
    tints = np.clip(np.array([150, 70, 50]) + rng.normal(scale=[35, 20, 15],
                                                         size=(rows, bricks_per_row, 3)), 0, 255)
    img = tints[row, col]
    img[mortar] = (170, 165, 155)
    grit = fractal_noise((h, w), rng, scale=24.0, octaves=6, persistence=0.65)
    stains = fractal_noise((h, w), rng, scale=3.0, octaves=3)
    img = img * (0.75 + 0.5 * grit[..., None]) * (0.8 + 0.4 * stains[..., None])
    return np.clip(img, 0, 255).astype(np.uint8)


def tiles_texture(size, rng=None, *, tiles: int = 6) -> np.ndarray:
    """Floor tiles: marbled noise in alternating colours, with grout lines and markings.

    Parameters
    ----------
    size : int or (height, width)
    rng : None, int or numpy.random.Generator
    tiles : int
        Tiles across the texture.

    Returns
    -------
    image : (H, W, 3) uint8 ndarray
    """
    cv2 = import_cv2()
    rng = check_rng(rng)
    h, w = _check_size("size", size)
    tiles = check_positive_int("tiles", tiles)
    marble = noise_texture((h, w), rng, scale=2.0 * tiles)
    yy, xx = np.mgrid[0:h, 0:w]
    ty, tx = yy * tiles // h, xx * tiles // w
    dark = ((ty + tx) % 2 == 1)[..., None]
    tint = np.clip(_random_palette(rng, 2), 30, 230)
    img = np.where(dark, 0.55 * marble + 0.45 * tint[0], 0.55 * marble + 0.45 * tint[1])
    fy, fx = (yy * tiles % h) / h * tiles, (xx * tiles % w) / w * tiles
    grout = (fy < 0.03) | (fx < 0.03)
    img[grout] = (60, 55, 50)
    img = np.ascontiguousarray(img.astype(np.uint8))
    _draw_shapes(cv2, img, rng, max(1, h * w // 20000), 0.005, 0.04, letters=False)
    return img


def wood_texture(size, rng=None, *, rings: float = 30.0) -> np.ndarray:
    """Wood grain: distorted concentric rings with a brown ramp and fine fibres.

    Parameters
    ----------
    size : int or (height, width)
    rng : None, int or numpy.random.Generator
    rings : float
        Number of rings across the texture.

    Returns
    -------
    image : (H, W, 3) uint8 ndarray
    """
    rng = check_rng(rng)
    h, w = _check_size("size", size)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    warp = fractal_noise((h, w), rng, scale=3.0, octaves=5)
    cx, cy = rng.uniform(-0.5, 1.5) * w, rng.uniform(-2.0, -1.0) * h
    dist = np.hypot((xx - cx) / w, 0.15 * (yy - cy) / h)
    phase = rings * (dist + 0.35 * warp)
    grain = 0.5 + 0.5 * np.sin(2 * np.pi * phase) ** 3
    fibres = fractal_noise((h, w), rng, scale=48.0, octaves=4, persistence=0.8)
    value = np.clip(0.65 * grain + 0.35 * fibres, 0, 1)
    colors = np.array([[70, 40, 20], [130, 80, 40], [190, 140, 85], [225, 185, 130]])
    colors = np.clip(colors + rng.normal(scale=15, size=3), 0, 255)
    return colorize(value, colors)


def checkerboard_texture(squares=(8, 8), square_px: int = 64, rng=None, *,
                         marks: bool = True) -> np.ndarray:
    """A checkerboard whose squares carry texture, so both corner detectors and SIFT work.

    Dark squares are near black and light squares near white, each filled with low-contrast
    noise and (with ``marks``) a small coloured shape away from the corners, so the square
    corners stay sharp at exact texel boundaries: the corner between squares ``(i, j)`` lies at
    texel coordinate ``(j * square_px, i * square_px)`` in pixel-edge units.

    Parameters
    ----------
    squares : (rows, cols) pair of int
    square_px : int
        Side of a square in texels.
    rng : None, int or numpy.random.Generator
    marks : bool
        Draw a random shape in every square.

    Returns
    -------
    image : (rows * square_px, cols * square_px, 3) uint8 ndarray
    """
    cv2 = import_cv2()
    rng = check_rng(rng)
    rows, cols = _check_size("squares", squares)
    square_px = check_positive_int("square_px", square_px, minimum=4)
    h, w = rows * square_px, cols * square_px
    yy, xx = np.mgrid[0:h, 0:w]
    dark = ((yy // square_px + xx // square_px) % 2 == 0)
    noise = fractal_noise((h, w), rng, scale=2.0 * max(rows, cols), octaves=6, persistence=0.6)
    value = np.where(dark, 20 + 50 * noise, 205 + 45 * noise)
    img = np.repeat(value[..., None], 3, axis=2)
    img += rng.normal(scale=8, size=3)
    img = np.ascontiguousarray(np.clip(img, 0, 255).astype(np.uint8))
    if marks:
        for i in range(rows):
            for j in range(cols):
                cell = img[i * square_px:(i + 1) * square_px, j * square_px:(j + 1) * square_px]
                inner = np.ascontiguousarray(cell[square_px // 4:-(square_px // 4),
                                                  square_px // 4:-(square_px // 4)])
                _draw_shapes(cv2, inner, rng, 2, 0.2, 0.45, letters=False)
                cell[square_px // 4:-(square_px // 4), square_px // 4:-(square_px // 4)] = inner
    return img


def land_cover_texture(heights, size, rng=None, *, sea_level: float = 0.3) -> np.ndarray:
    """Satellite-like land cover for a heightfield: water, beaches, fields, forest, rock, snow.

    Cover classes follow the height and a moisture noise; lowlands are cut into fields (random
    polygons of crop colours), roads cross the land, and fine noise adds canopy and soil texture.

    Parameters
    ----------
    heights : (h, w) array_like
        Heights normalised to ``[0, 1]``, row 0 at the top (north) edge of the texture.
    size : int or (height, width)
        Texture size (the heights are resampled to it).
    rng : None, int or numpy.random.Generator
    sea_level : float
        Normalised height under which the ground is water.

    Returns
    -------
    image : (H, W, 3) uint8 ndarray
    """
    cv2 = import_cv2()
    rng = check_rng(rng)
    h, w = _check_size("size", size)
    z = check_array("heights", heights, dtype=np.float32)
    if z.ndim != 2:
        raise ValueError(f"heights must be a 2D array, got shape {z.shape}")
    z = cv2.resize(z, (w, h), interpolation=cv2.INTER_LINEAR)
    moist = fractal_noise((h, w), rng, scale=3.0, octaves=6)
    detail = fractal_noise((h, w), rng, scale=64.0, octaves=4, persistence=0.75)
    canopy = fractal_noise((h, w), rng, scale=256.0, octaves=3, persistence=0.8)
    # Fields: a Voronoi-like patchwork from random polygons of crop colours.
    crops = np.array([[120, 150, 60], [170, 160, 80], [90, 130, 50], [200, 180, 110],
                      [140, 110, 70], [100, 160, 90], [185, 150, 60]], np.float32)
    fields = np.empty((h, w, 3), np.uint8)
    fields[:] = (120, 140, 70)
    for _ in range(max(1, h * w // 6000)):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        a, b = rng.uniform(0.01, 0.04) * w, rng.uniform(0.01, 0.04) * h
        box = cv2.boxPoints(((cx, cy), (2 * a, 2 * b), float(rng.uniform(0, 90))))
        color = crops[rng.integers(len(crops))] + rng.normal(scale=10, size=3)
        cv2.fillPoly(fields, [box.astype(np.int32)], tuple(float(c) for c in color),
                     cv2.LINE_AA)
    # Stripes inside fields (ploughing), in the field colour.
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    stripes = 0.9 + 0.1 * np.sin(xx * 0.9 + yy * 0.4)
    fields = fields * stripes[..., None]
    forest = colorize(canopy, [[20, 50, 20], [40, 80, 30], [70, 110, 50]])
    rock = colorize(detail, [[90, 85, 80], [130, 120, 105], [170, 160, 150]])
    water = colorize(detail, [[20, 50, 90], [30, 70, 110], [40, 90, 120]])
    sand = np.array([200, 190, 150], np.float32)
    snow = np.array([240, 240, 245], np.float32)
    land = (z - sea_level) / max(1e-6, 1.0 - sea_level)
    img = np.where((moist > 0.55)[..., None], forest, fields).astype(np.float32)
    img = np.where((land > 0.45)[..., None], rock, img)
    img = np.where((land > 0.72 + 0.1 * (moist - 0.5))[..., None], snow, img)
    img = np.where((land < 0.03)[..., None], sand, img)
    img = np.where((z < sea_level)[..., None], water, img)
    img = np.ascontiguousarray(img * (0.8 + 0.4 * detail[..., None]))
    for _ in range(max(1, (h + w) // 300)):  # roads
        pts = np.cumsum(rng.normal(scale=0.05 * w, size=(12, 2)), axis=0)
        pts += rng.uniform(0, [w, h])
        cv2.polylines(img, [pts.astype(np.int32)], False, (95, 90, 85),
                      max(1, w // 800), cv2.LINE_AA)
    return np.clip(img, 0, 255).astype(np.uint8)


def sample_texture(texture: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """Bilinear lookup of a texture at texture coordinates, wrapping around (tiling).

    Texel ``(r, c)`` has its centre at ``(u, v) = ((c + 0.5) / W, 1 - (r + 0.5) / H)``
    (OBJ convention, see the module docstring); interpolation is bilinear with 1/32 texel
    resolution (``cv2.remap``).

    Parameters
    ----------
    texture : (H, W, 3) uint8 ndarray
    uv : (N, 2) array_like

    Returns
    -------
    colors : (N, 3) uint8 ndarray

    Examples
    --------
    >>> tex = np.zeros((2, 2, 3), np.uint8); tex[0, 1] = 200   # top right texel
    >>> sample_texture(tex, [[0.75, 0.75], [0.5, 0.5]])[:, 0]
    array([200,  50], dtype=uint8)
    """
    cv2 = import_cv2()
    uv = np.asarray(uv, dtype=np.float32)
    n = len(uv)
    th, tw = texture.shape[:2]
    rows = -(-n // _REMAP_WIDTH) if n else 0
    maps = np.empty((rows * _REMAP_WIDTH, 2), np.float32)
    # Map to texel coordinates in [0, W) x [0, H) so that only the seam needs BORDER_WRAP.
    np.multiply(uv[:, 0], tw, out=maps[:n, 0])
    maps[:n, 0] -= 0.5
    np.mod(maps[:n, 0], tw, out=maps[:n, 0])
    np.multiply(uv[:, 1], -th, out=maps[:n, 1])
    maps[:n, 1] += th - 0.5
    np.mod(maps[:n, 1], th, out=maps[:n, 1])
    maps[n:] = 0
    out = cv2.remap(texture, maps.reshape(rows, _REMAP_WIDTH, 2), None, cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_WRAP)
    return out.reshape(-1, texture.shape[2])[:n]
