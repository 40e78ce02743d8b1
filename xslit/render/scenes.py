"""Procedural, seeded scenes: a textured room, a satellite-style terrain, a calibration target.

Every scene is built in code from ``rng: None | int | numpy.random.Generator`` (no downloads,
no binary assets): the same seed gives the same mesh and textures. ``scene.info`` holds
JSON-serialisable metadata: the kind of scene, its extent, suggested viewpoints, and for the
calibration target the 3D positions of the checkerboard corners.

World units are metres-like; ``z`` is up.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_allocation, check_array, check_positive_int, check_real, check_rng
from ..geometry.projective import rvec_from_matrix
from .scene import Scene
from .textures import (
    bricks_texture,
    checkerboard_texture,
    fractal_noise,
    land_cover_texture,
    noise_texture,
    shapes_texture,
    tiles_texture,
    wood_texture,
)

__all__ = [
    "MeshBuilder",
    "make_calibration_target",
    "make_room_scene",
    "make_terrain_scene",
    "pose_from_look_at",
]


def pose_from_look_at(eye, target, up=(0.0, 0.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """cv2 pose ``(rvec, tvec)`` of a camera at ``eye`` looking at ``target``.

    Camera coordinates are OpenCV's: ``z`` along the viewing direction, ``x`` to the right,
    ``y`` down (``-up`` projected), with ``X_c = R X + t``. For a two-slit camera composed
    with :func:`xslit.cameras.compose_two_slit`, ``eye`` lies on the first slit.

    Parameters
    ----------
    eye, target, up : (3,) array_like

    Returns
    -------
    rvec, tvec : (3,) ndarray

    Examples
    --------
    >>> from xslit.geometry.projective import matrix_from_rvec
    >>> rvec, tvec = pose_from_look_at([0, -5, 0], [0, 0, 0])
    >>> np.round(matrix_from_rvec(rvec) @ [0, 0, 0] + tvec, 12)   # target is 5 ahead
    array([0., 0., 5.])
    """
    eye = check_array("eye", eye)
    target = check_array("target", target)
    up = check_array("up", up)
    for name, v in (("eye", eye), ("target", target), ("up", up)):
        if v.shape != (3,) or not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be a finite 3-vector, got {v!r}")
    z = target - eye
    if np.linalg.norm(z) == 0:
        raise ValueError("target must differ from eye")
    z /= np.linalg.norm(z)
    x = np.cross(z, up)
    if np.linalg.norm(x) < 1e-9 * np.linalg.norm(up):
        raise ValueError("up must not be parallel to the viewing direction target - eye")
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    R = np.stack([x, y, z])
    return rvec_from_matrix(R), -R @ eye


class MeshBuilder:
    """Accumulates textured primitives (quads, boxes, spheres, cylinders) into one mesh.

    Each primitive carries a material index (into the scene's texture list) and per-corner
    texture coordinates; :meth:`scene` returns the :class:`Scene`.
    """

    def __init__(self):
        self._vertices: list[np.ndarray] = []
        self._triangles: list[np.ndarray] = []
        self._uvs: list[np.ndarray] = []
        self._materials: list[np.ndarray] = []
        self._count = 0

    def add_grid(self, points: np.ndarray, uv: np.ndarray, material: int) -> None:
        """A quad-grid surface: ``points`` (m, n, 3) with texture coordinates ``uv`` (m, n, 2)."""
        m, n = points.shape[:2]
        idx = np.arange(m * n).reshape(m, n)
        a, b = idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel()
        c, d = idx[1:, :-1].ravel(), idx[1:, 1:].ravel()
        tri = np.concatenate([np.stack([a, b, d], 1), np.stack([a, d, c], 1)])
        uv = uv.reshape(-1, 2)
        self._vertices.append(points.reshape(-1, 3))
        self._triangles.append(tri + self._count)
        self._uvs.append(uv[tri])
        self._materials.append(np.full(len(tri), material, np.int32))
        self._count += m * n

    def add_quad(self, origin, eu, ev, material: int, uv_scale=(1.0, 1.0)) -> None:
        """Parallelogram ``origin + s eu + t ev``, ``s, t`` in [0, 1], uv ``(s, t) * uv_scale``."""
        s = np.array([0.0, 1.0])
        S, T = np.meshgrid(s, s)
        pts = (np.asarray(origin, float) + S[..., None] * np.asarray(eu, float)
               + T[..., None] * np.asarray(ev, float))
        uv = np.stack([S * uv_scale[0], T * uv_scale[1]], axis=-1)
        self.add_grid(pts, uv, material)

    def add_box(self, center, size, materials, yaw: float = 0.0) -> None:
        """Box of ``size`` (sx, sy, sz) centred at ``center``, rotated by ``yaw`` about z.

        ``materials`` is one index or six (for -x, +x, -y, +y, -z, +z).
        """
        mats = [materials] * 6 if np.ndim(materials) == 0 else list(materials)
        c, s = np.cos(yaw), np.sin(yaw)
        R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
        hx, hy, hz = np.asarray(size, float) / 2
        ctr = np.asarray(center, float)
        ex, ey, ez = R[:, 0] * 2 * hx, R[:, 1] * 2 * hy, R[:, 2] * 2 * hz
        corner = ctr - (ex + ey + ez) / 2
        faces = [(corner, ey, ez), (corner + ex, ey, ez), (corner, ex, ez),
                 (corner + ey, ex, ez), (corner, ex, ey), (corner + ez, ex, ey)]
        for (o, eu, ev), m in zip(faces, mats, strict=True):
            self.add_quad(o, eu, ev, m)

    def add_sphere(self, center, radius: float, material: int, n: int = 48) -> None:
        """UV sphere; ``u`` goes twice around the equator so the texture is not stretched."""
        lat = np.linspace(0, np.pi, n + 1)
        lon = np.linspace(0, 2 * np.pi, 2 * n + 1)
        LON, LAT = np.meshgrid(lon, lat)
        pts = np.asarray(center, float) + radius * np.stack(
            [np.sin(LAT) * np.cos(LON), np.sin(LAT) * np.sin(LON), -np.cos(LAT)], axis=-1)
        uv = np.stack([LON / np.pi, LAT / np.pi], axis=-1)
        self.add_grid(pts, uv, material)

    def add_cylinder(self, base, radius: float, height: float, material: int,
                     cap_material: int | None = None, n: int = 64) -> None:
        """Vertical cylinder standing on ``base``, with a flat top."""
        ang = np.linspace(0, 2 * np.pi, n + 1)
        zz = np.array([0.0, height])
        A, Z = np.meshgrid(ang, zz)
        b = np.asarray(base, float)
        pts = b + np.stack([radius * np.cos(A), radius * np.sin(A), Z], axis=-1)
        uv = np.stack([A / (2 * np.pi), Z / height], axis=-1)
        self.add_grid(pts, uv, material)
        rr = np.array([0.0, radius])
        A, Rr = np.meshgrid(ang, rr)
        top = b + np.stack([Rr * np.cos(A), Rr * np.sin(A), np.full_like(A, height)], axis=-1)
        uv = (top[..., :2] - b[:2]) / (2 * radius) + 0.5
        self.add_grid(top, uv, material if cap_material is None else cap_material)

    def scene(self, textures, info: dict | None = None) -> Scene:
        """The accumulated mesh as a :class:`Scene` with ``textures`` indexed by material."""
        return Scene.from_arrays(np.concatenate(self._vertices), np.concatenate(self._triangles),
                                 triangle_uvs=np.concatenate(self._uvs), textures=textures,
                                 material_ids=np.concatenate(self._materials), info=info)


#: Working memory per texel of a procedural texture: the RGB texel and the float64 noise,
#: shading and colour temporaries that make it.
BYTES_PER_TEXEL = 64
#: Working memory per vertex of the terrain grid: heights and their noise octaves, vertices,
#: texture coordinates and the two triangles with their texture coordinates.
BYTES_PER_GRID_VERTEX = 256


def _seed_info(rng) -> int | None:
    return int(rng) if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) else None


def make_room_scene(rng=None, *, size=(12.0, 12.0, 4.2), n_objects: int = 10,
                    texels_per_unit: float = 128.0) -> Scene:
    """A textured room with objects around the origin: the default scene for X-slit stereo.

    The room is the box ``[-sx/2, sx/2] x [-sy/2, sy/2] x [-1.2, sz - 1.2]`` (floor at
    ``z = -1.2``, so the origin is in the middle of the objects at about table height). Walls
    carry posters of random shapes and letters, bricks and wood panelling; the floor carries
    tiles; objects are boxes, spheres and cylinders with their own textures, on the floor
    within 2.5 units of the z axis. Cameras a few units from the origin, inside the room,
    looking at it, see objects in front of textured walls.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
    size : (3,) floats
        Room extent along x, y, z.
    n_objects : int
    texels_per_unit : float
        Texture resolution on the walls and floor (objects get textures of 256 to 512 texels).

    Returns
    -------
    Scene
        With ``info["kind"] == "room"`` and ``info["views"]``, suggested ``(eye, target)``
        pairs.
    """
    seed = _seed_info(rng)
    rng = check_rng(rng)
    extents = check_array("size", size)
    if extents.shape != (3,) or not (np.all(np.isfinite(extents)) and np.all(extents > 0)):
        raise ValueError(f"size must be three finite positive extents, got {size!r}")
    sx, sy, sz = (float(v) for v in extents)
    n_objects = check_positive_int("n_objects", n_objects, minimum=0)
    texels_per_unit = check_real("texels_per_unit", texels_per_unit, low=0, low_open=True,
                                 what="a finite positive texture resolution")
    # Walls, floor and ceiling textures: their texels, with the float temporaries that make them.
    area = 2 * (sx + sy) * sz + 1.25 * sx * sy
    check_allocation("size", size, area * texels_per_unit ** 2 * BYTES_PER_TEXEL)
    floor = -1.2

    def tex_size(a, b):
        return (max(16, int(b * texels_per_unit)), max(16, int(a * texels_per_unit)))

    wall_makers = [
        lambda s: shapes_texture(s, rng),
        lambda s: bricks_texture(s, rng, rows=int(sz / 0.15), bricks_per_row=int(sx / 0.45)),
        lambda s: shapes_texture(s, rng, count=max(1, s[0] * s[1] // 1500)),
        lambda s: wood_texture(s, rng, rings=12.0),
    ]
    order = rng.permutation(4)
    textures = []
    b = MeshBuilder()
    x0, x1, y0, y1, z0, z1 = -sx / 2, sx / 2, -sy / 2, sy / 2, floor, floor + sz
    walls = [((x0, y1, z0), (sx, 0, 0), (0, 0, sz), sx),   # north, y = y1
             ((x1, y0, z0), (0, sy, 0), (0, 0, sz), sy),   # east
             ((x0, y0, z0), (sx, 0, 0), (0, 0, sz), sx),   # south
             ((x0, y0, z0), (0, sy, 0), (0, 0, sz), sy)]   # west
    for k, (o, eu, ev, length) in enumerate(walls):
        textures.append(wall_makers[order[k]](tex_size(length, sz)))
        b.add_quad(o, eu, ev, len(textures) - 1)
    textures.append(tiles_texture(tex_size(sx, sy), rng, tiles=int(max(sx, sy) / 0.8)))
    b.add_quad((x0, y0, z0), (sx, 0, 0), (0, sy, 0), len(textures) - 1)
    textures.append(noise_texture(tex_size(sx / 2, sy / 2), rng, scale=6.0))
    b.add_quad((x0, y0, z1), (sx, 0, 0), (0, sy, 0), len(textures) - 1)

    # Objects on a jittered ring/grid around the origin, not overlapping.
    slots = np.array([(r * np.cos(a), r * np.sin(a)) for r, m in ((0.0, 1), (1.3, 5), (2.4, 8))
                      for a in np.linspace(0, 2 * np.pi, m, endpoint=False) + rng.uniform(0, 1)])
    chosen = slots[rng.permutation(len(slots))[:n_objects]]
    for cx, cy in chosen:
        kind = rng.integers(0, 4)
        t_side = int(rng.integers(256, 513))
        if kind in (0, 1):  # box, maybe with a second box on top
            w, d, hgt = rng.uniform(0.4, 0.9), rng.uniform(0.4, 0.9), rng.uniform(0.4, 1.4)
            textures.append(shapes_texture(t_side, rng))
            b.add_box((cx, cy, floor + hgt / 2), (w, d, hgt), len(textures) - 1,
                      yaw=rng.uniform(0, np.pi))
            if kind == 1:
                s = rng.uniform(0.2, 0.35)
                textures.append(noise_texture(t_side // 2, rng, scale=3.0))
                b.add_box((cx, cy, floor + hgt + s / 2), (s, s, s), len(textures) - 1,
                          yaw=rng.uniform(0, np.pi))
        elif kind == 2:  # sphere on a pedestal
            r = rng.uniform(0.25, 0.45)
            ped = rng.uniform(0.3, 0.9)
            textures.append(wood_texture(t_side, rng))
            b.add_box((cx, cy, floor + ped / 2), (0.5, 0.5, ped), len(textures) - 1)
            textures.append(shapes_texture((t_side, 2 * t_side), rng))
            b.add_sphere((cx, cy, floor + ped + r), r, len(textures) - 1)
        else:  # cylinder
            r, hgt = rng.uniform(0.2, 0.4), rng.uniform(0.6, 1.6)
            textures.append(shapes_texture(t_side, rng))
            b.add_cylinder((cx, cy, floor), r, hgt, len(textures) - 1)
    info = {
        "kind": "room",
        "seed": seed,
        "bounds": [[x0, y0, z0], [x1, y1, z1]],
        "views": [{"eye": [0.0, -4.5, 0.6], "target": [0.0, 0.0, -0.3]},
                  {"eye": [4.0, -3.0, 1.0], "target": [0.0, 0.0, -0.3]}],
    }
    return b.scene(textures, info)


def make_terrain_scene(rng=None, *, n_triangles: int = 1_000_000, extent: float = 100.0,
                       relief: float = 12.0, sea_level: float = 0.3,
                       texture_size: int = 2048) -> Scene:
    """A satellite-style terrain: a fractal heightfield with a land-cover texture.

    The heightfield covers ``[-extent/2, extent/2]^2`` with a regular grid of
    ``2 (n - 1)^2 ~ n_triangles`` triangles; heights are fractal noise shaped into valleys
    and ridges, between 0 and ``relief``, with flat water below ``sea_level * relief``.
    Texture coordinates are ``u = x / extent + 1/2``, ``v = y / extent + 1/2`` (north up in the
    texture).

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
    n_triangles : int
        Approximate triangle count (at least 2).
    extent, relief : float
    sea_level : float
        Fraction of ``relief`` under which the land is flooded.
    texture_size : int
        Side of the land-cover texture in texels.

    Returns
    -------
    Scene
        With ``info["kind"] == "terrain"``.
    """
    seed = _seed_info(rng)
    rng = check_rng(rng)
    n_triangles = check_positive_int("n_triangles", n_triangles, minimum=2)
    check_allocation("n_triangles", n_triangles, n_triangles / 2 * BYTES_PER_GRID_VERTEX)
    texture_size = check_positive_int("texture_size", texture_size, minimum=16)
    check_allocation("texture_size", texture_size, float(texture_size) ** 2 * BYTES_PER_TEXEL)
    extent = check_real("extent", extent, low=0, low_open=True, what="a finite positive length")
    relief = check_real("relief", relief, low=0, low_open=True, what="a finite positive height")
    sea_level = check_real("sea_level", sea_level, low=0, high=1, high_open=True,
                           what="a fraction in [0, 1)")
    n = max(2, round(np.sqrt(n_triangles / 2)) + 1)
    h = fractal_noise((n, n), rng, scale=3.0, octaves=10, persistence=0.5)
    h = h ** 1.6  # broad valleys, sharper peaks
    h = (h - h.min()) / max(1e-12, h.max() - h.min())
    texture = land_cover_texture(h, texture_size, rng, sea_level=sea_level)
    z = relief * np.maximum(h, sea_level)
    s = np.linspace(-extent / 2, extent / 2, n)
    # Row r of the height grid is at y = +extent/2 - r * step (north at row 0, as the texture).
    X, Y = np.meshgrid(s, s[::-1])
    pts = np.stack([X, Y, z], axis=-1)
    uv = np.stack([X / extent + 0.5, Y / extent + 0.5], axis=-1)
    b = MeshBuilder()
    b.add_grid(pts, uv, 0)
    info = {"kind": "terrain", "seed": seed, "extent": float(extent), "relief": float(relief),
            "sea_level": float(sea_level * relief),
            "bounds": [[-extent / 2, -extent / 2, 0.0], [extent / 2, extent / 2, float(relief)]]}
    return b.scene([texture], info)


def make_calibration_target(rng=None, *, planes: int = 3, squares=(8, 8),
                            square_size: float = 0.1, square_px: int = 64) -> Scene:
    """Two or three textured checkerboards on planes at right angles, meeting at the origin.

    Board 0 lies in the plane ``z = 0`` (``x, y >= 0``), board 1 in ``x = 0`` (``y, z >= 0``)
    and board 2 in ``y = 0`` (``x, z >= 0``), each ``cols * square_size`` by
    ``rows * square_size``. Every square carries noise and a small shape, so SIFT matches as
    well as corner detectors work.

    Parameters
    ----------
    rng : None, int or numpy.random.Generator
    planes : int
        2 or 3.
    squares : (rows, cols) pair of int
    square_size : float
        Side of a square in world units.
    square_px : int
        Side of a square in texels.

    Returns
    -------
    Scene
        ``info["boards"]`` lists, per board, its ``origin``, unit axes ``axis_u`` (along the
        columns) and ``axis_v`` (along the rows) and ``corners``: the inner checkerboard corners
        as a ``((rows - 1) * (cols - 1), 3)`` list, row by row, as ``cv2.findChessboardCorners``
        orders them on the texture image.
    """
    seed = _seed_info(rng)
    rng = check_rng(rng)
    planes = check_positive_int("planes", planes, minimum=2)
    if planes > 3:
        raise ValueError(f"planes must be 2 or 3, got {planes}")
    try:
        rows, cols = (check_positive_int("squares", v, minimum=2) for v in squares)
    except (TypeError, ValueError):
        raise ValueError(f"squares must be a (rows, cols) pair of ints >= 2, got {squares!r}") \
            from None
    square_size = check_real("square_size", square_size, low=0, low_open=True,
                             what="a finite positive length")
    square_px = check_positive_int("square_px", square_px, minimum=1)
    check_allocation("square_px", square_px,
                     planes * float(rows * square_px) * float(cols * square_px) * BYTES_PER_TEXEL)
    e = np.eye(3)
    axes = [(e[0], e[1]), (e[1], e[2]), (e[0], e[2])][:planes]
    b = MeshBuilder()
    textures, boards = [], []
    width, height = cols * square_size, rows * square_size
    jj, ii = np.meshgrid(np.arange(1, cols), np.arange(1, rows))
    for k, (eu, ev) in enumerate(axes):
        textures.append(checkerboard_texture((rows, cols), square_px, rng))
        b.add_quad(np.zeros(3), eu * width, ev * height, k)
        # Texture row 0 is at v = 1 (top): corner at texel row i*sp is at height (rows - i) s.
        corners = (jj.reshape(-1, 1) * square_size * eu
                   + (rows - ii.reshape(-1, 1)) * square_size * ev)
        boards.append({"origin": [0.0, 0.0, 0.0], "axis_u": eu.tolist(), "axis_v": ev.tolist(),
                       "corners": corners.tolist()})
    info = {"kind": "calibration_target", "seed": seed, "squares": [rows, cols],
            "square_size": float(square_size), "boards": boards,
            "views": [{"eye": [1.6, 1.4, 1.2], "target": [0.3, 0.3, 0.3]}]}
    return b.scene(textures, info)
