r"""A renderable scene: a triangle mesh, its colour source, and a cached Open3D ray caster.

Colour comes, in this order of precedence, from

1. texture maps through per-corner texture coordinates (``triangle_uvs``, OBJ convention, see
   :mod:`xslit.render.textures`), one texture per material id, as Open3D reads OBJ, PLY and
   glTF files;
2. a procedural texture: a function of the texture coordinates (``uv_color_fn``) or of the 3D
   hit point (``color_fn``);
3. vertex colours, interpolated with the barycentric coordinates of the hit;
4. a constant ``base_color``.

Attributes at a hit are interpolated with Embree's barycentric coordinates
:math:`(\beta_1, \beta_2)` returned by ``cast_rays`` as ``primitive_uvs``:

.. math:: a = (1 - \beta_1 - \beta_2)\, a_0 + \beta_1 a_1 + \beta_2 a_2 .
"""

from __future__ import annotations

import os

import numpy as np

from .._checks import check_array, check_finite, check_index_array
from ._open3d import import_open3d
from .textures import sample_texture

__all__ = ["Scene"]


def _check_texture(name: str, image) -> np.ndarray:
    """An ``(H, W, 3)`` uint8 RGB texture from grey, RGB or RGBA, uint8 or float in [0, 1]."""
    a = np.asarray(image)
    if a.ndim == 2:
        a = a[..., None]
    if a.ndim != 3 or a.shape[2] not in (1, 3, 4) or min(a.shape[:2]) < 1:
        raise ValueError(f"{name} must be an (H, W), (H, W, 3) or (H, W, 4) image, got shape "
                         f"{a.shape}")
    if a.dtype.kind == "f":
        a = np.clip(np.rint(a * 255.0), 0, 255)
    elif a.dtype.kind not in "ui":
        raise ValueError(f"{name} must be a numeric image, got dtype {a.dtype}")
    elif a.dtype != np.uint8:
        a = np.clip(a, 0, 255)
    a = a.astype(np.uint8, copy=False)
    if a.shape[2] == 1:
        a = np.repeat(a, 3, axis=2)
    return np.ascontiguousarray(a[..., :3])


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a``, copied first unless ``a`` owns its data (a view of the
    caller's array would change when the caller writes into it). The view's base is read-only
    too, so ``setflags(write=True)`` on the view raises."""
    if not a.flags.owndata:
        a = a.copy()
    a.setflags(write=False)
    view = a.view()
    view.setflags(write=False)
    return view


def _check_color(name: str, color) -> np.ndarray:
    c = check_array(name, color)
    if c.shape != (3,) or not np.all((c >= 0) & (c <= 255)):
        raise ValueError(f"{name} must be an RGB triple in [0, 255], got {color!r}")
    return c.astype(np.float32)


class Scene:
    """Triangle mesh with colours, rendered by :func:`xslit.render.renderImage`.

    Parameters
    ----------
    mesh : open3d.geometry.TriangleMesh or open3d.t.geometry.TriangleMesh
        Legacy meshes give ``triangle_uvs``, ``textures``, ``triangle_material_ids`` and
        ``vertex_colors``; tensor meshes give ``triangle["texture_uvs"]``, the material's
        ``albedo`` texture map and ``vertex["colors"]``.
    color_fn, uv_color_fn, base_color, info
        See :meth:`from_arrays`.

    Notes
    -----
    The mesh and colour arrays are read-only copies owned by the scene, and its attributes
    cannot be reassigned: the Open3D ``RaycastingScene`` and the texel table are built from
    them on first use and cached, so a changed scene is a new object (build it with
    :meth:`from_arrays`).

    Examples
    --------
    >>> scene = Scene.from_arrays([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    >>> scene.n_triangles
    1
    """

    def __init__(self, mesh, *, color_fn=None, uv_color_fn=None, base_color=(180, 180, 180),
                 info: dict | None = None):
        o3d = import_open3d()
        if isinstance(mesh, o3d.geometry.TriangleMesh):
            arrays = _arrays_from_legacy(mesh)
        elif isinstance(mesh, o3d.t.geometry.TriangleMesh):
            arrays = _arrays_from_tensor(mesh)
        else:
            raise ValueError("mesh must be an open3d.geometry.TriangleMesh or "
                             f"open3d.t.geometry.TriangleMesh, got {type(mesh).__name__}")
        self._setup(**arrays, color_fn=color_fn, uv_color_fn=uv_color_fn,
                    base_color=base_color, info=info)

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_arrays(cls, vertices, triangles, *, triangle_uvs=None, textures=None,
                    material_ids=None, vertex_colors=None, color_fn=None, uv_color_fn=None,
                    base_color=(180, 180, 180), info: dict | None = None) -> Scene:
        """A scene built in code, from numpy arrays (Open3D is needed only to render).

        Parameters
        ----------
        vertices : (V, 3) array_like
        triangles : (T, 3) array_like of int
            Vertex indices; any orientation (hits are two-sided).
        triangle_uvs : (T, 3, 2) or (3 T, 2) array_like, optional
            Texture coordinates of each triangle corner (OBJ convention).
        textures : sequence of (H, W, 3) images, or one image, optional
            uint8 (0-255) or float (0-1); grey and RGBA are converted.
        material_ids : (T,) array_like of int, optional
            Index into ``textures`` per triangle (default 0). A triangle with a negative id or
            without texture coordinates falls back to the next colour source.
        vertex_colors : (V, 3) array_like, optional
            RGB in [0, 1].
        color_fn : callable, optional
            ``color_fn(points)`` with points ``(N, 3)`` float64 returns ``(N, 3)`` RGB in
            [0, 255]: a procedural solid texture.
        uv_color_fn : callable, optional
            ``uv_color_fn(uv)`` with uv ``(N, 2)`` float32 returns ``(N, 3)`` RGB in [0, 255].
        base_color : (3,) array_like
            RGB in [0, 255] when nothing else colours a triangle.
        info : dict, optional
            Free metadata kept with the scene (a recipe, target geometry, ...).
        """
        self = cls.__new__(cls)
        self._setup(vertices, triangles, triangle_uvs=triangle_uvs, textures=textures,
                    material_ids=material_ids, vertex_colors=vertex_colors, color_fn=color_fn,
                    uv_color_fn=uv_color_fn, base_color=base_color, info=info)
        return self

    @classmethod
    def from_file(cls, path, **kwargs) -> Scene:
        """Load a mesh with its textures through Open3D (OBJ, PLY, glTF/GLB, ...).

        Parameters
        ----------
        path : str or os.PathLike
        **kwargs
            Passed to :class:`Scene` (``color_fn``, ``base_color``, ``info``, ...).
        """
        o3d = import_open3d()
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise ValueError(f"path must name an existing mesh file, got {path!r}")
        mesh = o3d.io.read_triangle_mesh(path, enable_post_processing=True)
        if len(mesh.triangles) == 0:
            raise ValueError(f"path: Open3D read no triangles from {path!r}")
        return cls(mesh, **kwargs)

    def _setup(self, vertices, triangles, *, triangle_uvs=None, textures=None,
               material_ids=None, vertex_colors=None, color_fn=None, uv_color_fn=None,
               base_color=(180, 180, 180), info=None):
        V = check_finite("vertices", check_array("vertices", vertices))
        if V.ndim != 2 or V.shape[1] != 3 or len(V) < 3:
            raise ValueError(f"vertices must have shape (V, 3) with V >= 3, got {V.shape}")
        big = np.finfo(np.float32).max
        if np.abs(V).max() > big:  # Open3D casts in float32: these would become inf
            raise ValueError(f"vertices must be within float32 range (|x| <= {big:.3g}), got "
                             f"{np.abs(V).max():.3g}")
        T = check_index_array("triangles", triangles)
        if T.ndim != 2 or T.shape[1] != 3 or len(T) < 1:
            raise ValueError(f"triangles must have shape (T, 3) with T >= 1, got {T.shape}")
        if T.min() < 0 or T.max() >= len(V):
            raise ValueError(f"triangles must index vertices in [0, {len(V)}), got indices in "
                             f"[{T.min()}, {T.max()}]")
        # Read-only arrays the scene owns: a scene is validated once, and its ray caster and
        # texel table are built from these arrays; a changed scene is a new object.
        self._vertices = _frozen(np.ascontiguousarray(V, dtype=np.float32))
        self._triangles = _frozen(np.ascontiguousarray(T, dtype=np.uint32))
        nt = len(T)
        self._triangle_uvs = None
        if triangle_uvs is not None:
            uv = check_finite("triangle_uvs", check_array("triangle_uvs", triangle_uvs))
            if uv.shape == (3 * nt, 2):
                uv = uv.reshape(nt, 3, 2)
            if uv.shape != (nt, 3, 2):
                raise ValueError(f"triangle_uvs must have shape ({nt}, 3, 2) or ({3 * nt}, 2), "
                                 f"got {uv.shape}")
            self._triangle_uvs = _frozen(np.ascontiguousarray(uv, dtype=np.float32))
        if textures is None:
            textures = []
        elif isinstance(textures, np.ndarray) and textures.ndim in (2, 3) and \
                textures.dtype != object:
            textures = [textures]
        self._textures = tuple(_frozen(_check_texture(f"textures[{i}]", t))
                               for i, t in enumerate(textures))
        self._material_ids = None
        if material_ids is not None:
            m = check_index_array("material_ids", material_ids)
            if m.shape != (nt,):
                raise ValueError(f"material_ids must have shape ({nt},), got {m.shape}")
            if m.max(initial=-1) >= len(self._textures):
                raise ValueError(f"material_ids must be < the number of textures "
                                 f"({len(self._textures)}), got {m.max()}")
            self._material_ids = _frozen(m.astype(np.int32))
        self._vertex_colors = None
        if vertex_colors is not None:
            c = check_finite("vertex_colors", check_array("vertex_colors", vertex_colors))
            if c.shape != V.shape:
                raise ValueError(f"vertex_colors must have shape {V.shape}, got {c.shape}")
            self._vertex_colors = _frozen(
                np.ascontiguousarray(np.clip(c, 0, 1) * 255, dtype=np.float32))
        for name, fn in (("color_fn", color_fn), ("uv_color_fn", uv_color_fn)):
            if fn is not None and not callable(fn):
                raise ValueError(f"{name} must be callable, got {type(fn).__name__}")
        self._color_fn = color_fn
        self._uv_color_fn = uv_color_fn
        self._base_color = _frozen(_check_color("base_color", base_color))
        self.info = dict(info or {})
        self._raycaster = None
        self._texel_table = False  # not computed yet; None when not applicable

    def __repr__(self) -> str:
        return (f"Scene({len(self.vertices)} vertices, {self.n_triangles} triangles, "
                f"{len(self.textures)} textures)")

    # -- properties ------------------------------------------------------------------
    @property
    def vertices(self) -> np.ndarray:
        """(V, 3) float32 read-only ndarray: vertex positions."""
        return self._vertices

    @property
    def triangles(self) -> np.ndarray:
        """(T, 3) uint32 read-only ndarray: vertex indices of each triangle."""
        return self._triangles

    @property
    def triangle_uvs(self) -> np.ndarray | None:
        """(T, 3, 2) float32 read-only ndarray or None: texture coordinates of the corners."""
        return self._triangle_uvs

    @property
    def textures(self) -> tuple[np.ndarray, ...]:
        """Tuple of (H, W, 3) uint8 read-only RGB texture maps."""
        return self._textures

    @property
    def material_ids(self) -> np.ndarray | None:
        """(T,) int32 read-only ndarray or None: texture of each triangle (negative: none)."""
        return self._material_ids

    @property
    def vertex_colors(self) -> np.ndarray | None:
        """(V, 3) float32 read-only ndarray or None: RGB in [0, 255]."""
        return self._vertex_colors

    @property
    def color_fn(self):
        """The procedural solid texture ``color_fn(points)``, or None."""
        return self._color_fn

    @property
    def uv_color_fn(self):
        """The procedural texture ``uv_color_fn(uv)``, or None."""
        return self._uv_color_fn

    @property
    def base_color(self) -> np.ndarray:
        """(3,) float32 read-only ndarray: RGB in [0, 255] of triangles nothing else colours."""
        return self._base_color

    @property
    def n_triangles(self) -> int:
        return len(self.triangles)

    @property
    def bounds(self) -> np.ndarray:
        """Axis-aligned bounding box ``[[xmin, ymin, zmin], [xmax, ymax, zmax]]``, (2, 3)."""
        return np.stack([self.vertices.min(0), self.vertices.max(0)]).astype(np.float64)

    @property
    def raycaster(self):
        """The cached ``open3d.t.geometry.RaycastingScene`` of the mesh (built on first use)."""
        if self._raycaster is None:
            o3d = import_open3d()
            rc = o3d.t.geometry.RaycastingScene()
            rc.add_triangles(o3d.core.Tensor.from_numpy(self.vertices),
                             o3d.core.Tensor.from_numpy(self.triangles))
            self._raycaster = rc
        return self._raycaster

    def texel_table(self):
        r"""Per-triangle affine maps from barycentric to texel coordinates, for the fast kernel.

        For a scene with one texture (every triangle textured by it), texel coordinates
        ``(x, y)`` of a hit with barycentric ``(b1, b2)`` on triangle ``k`` are

        .. math:: x = X_{k0} + b_1 X_{k1} + b_2 X_{k2}, \quad y = Y_{k0} + b_1 Y_{k1} + b_2 Y_{k2},

        with ``x = u W - 1/2``, ``y = (1 - v) H - 1/2`` (OBJ convention) after shifting each
        triangle's ``(u, v)`` by whole periods into ``[0, 1)`` (lookups wrap). Not applicable
        (both results None) when the scene has no texture coordinates, several textures,
        untextured triangles, or texture coordinates too far from ``[0, 1]`` for
        ``cv2.remap``'s 16-bit fixed point. Computed once and cached.

        Returns
        -------
        table : (K + 1, 8) float32 read-only ndarray, or None
            Row ``k < K`` of triangle ``k`` is ``(X_k0, X_k1, X_k2, Y_k0, Y_k1, Y_k2, 0, 0)``
            (32-byte rows, gathered by ``numpy.take``); the last row is zero, for the
            out-of-range ids of rays that hit nothing (``numpy.take(..., mode="clip")``).
        texture : (H, W, 4) uint8 read-only ndarray, or None
            The texture with a fourth, zero channel: ``cv2.remap`` samples 4-channel images
            about twice as fast as 3-channel ones.
        """
        if self._texel_table is not False:
            return self._texel_table
        table = texture = None
        one_texture = len(self.textures) == 1 and (
            self.material_ids is None or not np.any(self.material_ids))
        if self.triangle_uvs is not None and one_texture:
            th, tw = self.textures[0].shape[:2]
            uv = self.triangle_uvs.astype(np.float64)
            uv = uv - np.floor(uv.min(axis=1, keepdims=True))
            x = uv[..., 0] * tw - 0.5
            y = (1.0 - uv[..., 1]) * th - 0.5
            if max(np.abs(x).max(), np.abs(y).max()) < 30000:
                table = np.zeros((self.n_triangles + 1, 8), np.float32)
                for col, c in ((0, x), (3, y)):
                    table[:-1, col] = c[:, 0]
                    table[:-1, col + 1] = c[:, 1] - c[:, 0]
                    table[:-1, col + 2] = c[:, 2] - c[:, 0]
                texture = np.zeros((th, tw, 4), np.uint8)
                texture[..., :3] = self.textures[0]
                table, texture = _frozen(table), _frozen(texture)
        self._texel_table = (table, texture)
        return self._texel_table

    def to_legacy_mesh(self):
        """The mesh as an ``open3d.geometry.TriangleMesh`` with its textures and uvs."""
        o3d = import_open3d()
        mesh = o3d.geometry.TriangleMesh(
            o3d.utility.Vector3dVector(self.vertices.astype(np.float64)),
            o3d.utility.Vector3iVector(self.triangles.astype(np.int32)))
        if self.triangle_uvs is not None:
            mesh.triangle_uvs = o3d.utility.Vector2dVector(
                self.triangle_uvs.reshape(-1, 2).astype(np.float64))
            mesh.textures = [o3d.geometry.Image(t) for t in self.textures]
            ids = self.material_ids if self.material_ids is not None else \
                np.zeros(self.n_triangles, np.int32)
            mesh.triangle_material_ids = o3d.utility.IntVector(ids.astype(np.int32))
        if self.vertex_colors is not None:
            mesh.vertex_colors = o3d.utility.Vector3dVector(
                self.vertex_colors.astype(np.float64) / 255.0)
        mesh.compute_vertex_normals()
        return mesh

    # -- colour at hits -----------------------------------------------------------------
    def albedo(self, primitive_ids: np.ndarray, barycentric: np.ndarray,
               points: np.ndarray | None = None) -> np.ndarray:
        """Surface colour at ray hits.

        Parameters
        ----------
        primitive_ids : (N,) integer ndarray
            Triangle of each hit (``cast_rays``' ``primitive_ids``).
        barycentric : (N, 2) ndarray
            ``cast_rays``' ``primitive_uvs``.
        points : (N, 3) ndarray, optional
            Hit points, needed by ``color_fn``.

        Returns
        -------
        colors : (N, 3) float32 ndarray, RGB in [0, 255].
        """
        n = len(primitive_ids)
        out = np.empty((n, 3), np.float32)
        todo = np.ones(n, bool)
        uv = None
        if self.triangle_uvs is not None and (self.textures or self.uv_color_fn is not None):
            uv = _interpolate(self.triangle_uvs, primitive_ids, barycentric)
        if uv is not None and self.textures:
            if self.material_ids is None or (len(self.textures) == 1 and \
                    self.material_ids.min() >= 0):
                out[:] = sample_texture(self.textures[0], uv)
                return out
            mat = self.material_ids[primitive_ids]
            for m in np.unique(mat):
                if m < 0:
                    continue
                sel = np.flatnonzero(mat == m)
                out[sel] = sample_texture(self.textures[m], uv[sel])
            todo = mat < 0
            if not todo.any():
                return out
        sel = np.flatnonzero(todo)
        if uv is not None and self.uv_color_fn is not None:
            out[sel] = _call_color_fn("uv_color_fn", self.uv_color_fn, uv[sel], len(sel))
        elif self.color_fn is not None:
            if points is None:
                raise ValueError("points must be given for a scene coloured by color_fn")
            out[sel] = _call_color_fn("color_fn", self.color_fn, points[sel], len(sel))
        elif self.vertex_colors is not None:
            corners = self.triangles[primitive_ids[sel]]
            w = barycentric[sel].astype(np.float32)
            out[sel] = ((1 - w[:, :1] - w[:, 1:]) * self.vertex_colors[corners[:, 0]]
                        + w[:, :1] * self.vertex_colors[corners[:, 1]]
                        + w[:, 1:] * self.vertex_colors[corners[:, 2]])
        else:
            out[sel] = self.base_color
        return out


def _interpolate(corner_values: np.ndarray, primitive_ids: np.ndarray,
                 barycentric: np.ndarray) -> np.ndarray:
    """``(1 - b1 - b2) a0 + b1 a1 + b2 a2`` of per-corner values ``(T, 3, k)`` at hits -> (N, k)."""
    c = corner_values[primitive_ids]  # (N, 3, k)
    b = barycentric.astype(np.float32, copy=False)
    b1, b2 = b[:, :1], b[:, 1:]
    return (1 - b1 - b2) * c[:, 0] + b1 * c[:, 1] + b2 * c[:, 2]


def _call_color_fn(name, fn, arg, n):
    c = np.asarray(fn(arg), dtype=np.float32)
    if c.shape != (n, 3):
        raise ValueError(f"{name} must return an (N, 3) array of RGB colours, got {c.shape} "
                         f"for N = {n}")
    return c


def _arrays_from_legacy(mesh) -> dict:
    V = np.asarray(mesh.vertices)
    T = np.asarray(mesh.triangles)
    out = {"vertices": V, "triangles": T}
    uv = np.asarray(mesh.triangle_uvs)
    if mesh.has_triangle_uvs() and len(uv) == 3 * len(T) and len(mesh.textures) > 0:
        out["triangle_uvs"] = uv
        out["textures"] = [np.asarray(t) for t in mesh.textures]
        if mesh.has_triangle_material_ids():
            ids = np.asarray(mesh.triangle_material_ids).copy()
            ids[ids >= len(out["textures"])] = -1
            out["material_ids"] = ids
    if mesh.has_vertex_colors():
        out["vertex_colors"] = np.asarray(mesh.vertex_colors)
    return out


def _arrays_from_tensor(mesh) -> dict:
    V = mesh.vertex.positions.numpy()
    T = mesh.triangle.indices.numpy()
    out = {"vertices": V, "triangles": T}
    if "texture_uvs" in mesh.triangle and mesh.has_valid_material() and \
            "albedo" in mesh.material.texture_maps:
        out["triangle_uvs"] = mesh.triangle["texture_uvs"].numpy()
        out["textures"] = [np.asarray(mesh.material.texture_maps["albedo"].as_tensor().numpy())]
    if "colors" in mesh.vertex:
        out["vertex_colors"] = mesh.vertex.colors.numpy()
    return out
