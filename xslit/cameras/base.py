"""The interface every camera model of xslit implements.

Rendering, triangulation and the dataset format take any :class:`Camera`: a camera projects
points to pixels and gives the viewing ray of each pixel, as a Plücker line and in Open3D's
``(N, 6)`` ray layout ``(ox, oy, oz, dx, dy, dz)``.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_array, check_image_points, check_object_points
from ..geometry.projective import homogeneous_from_euclidean

__all__ = ["Camera", "RayGrid", "homogeneous_points", "pixels_from_homogeneous"]


def homogeneous_points(name: str, points) -> np.ndarray:
    """Validate ``(N, 3)`` or ``(N, 4)`` points and return them homogeneous ``(N, 4)``."""
    X = check_object_points(name, points)
    return homogeneous_from_euclidean(X) if X.shape[1] == 3 else X


def pixels_from_homogeneous(u: np.ndarray) -> np.ndarray:
    """``(N, 3)`` image points to ``(N, 2)`` pixels; undefined or infinite images become NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        px = u[:, :2] / u[:, 2:3]
    px[~np.isfinite(px).all(axis=1)] = np.nan
    return px


#: Pixels per chunk of :meth:`Camera.rays` (a chunk's float64 columns are 128 KiB).
RAY_CHUNK = 1 << 14
#: Pixels per chunk of :meth:`RayGrid.rays` (whole rows; fewer temporaries than ``rays``).
GRID_CHUNK = 1 << 15


class Camera:
    """Abstract camera: subclasses implement the three ``_kernel`` methods on valid arrays."""

    #: Name used in the JSON form (``to_dict``).
    model: str = "camera"

    # -- kernels on validated arrays -------------------------------------------------
    def _project_h(self, X: np.ndarray) -> np.ndarray:  # (N, 4) -> (N, 3)
        raise NotImplementedError

    def _rays_plucker(self, px: np.ndarray) -> np.ndarray:  # (N, 2) -> (N, 6)
        raise NotImplementedError

    def _rays(self, px: np.ndarray) -> np.ndarray:  # (N, 2) -> (N, 6)
        raise NotImplementedError

    def _grid_terms(self, x: np.ndarray, y: np.ndarray) -> dict | None:
        """Separable form of the rays of the grid ``x`` (columns) by ``y`` (rows), or None.

        A camera whose rays on a pixel grid have the form described in :meth:`ray_grid`
        returns its terms: ``row_dir`` (R, 3); ``col_dir`` (C, 3) or None (directions that
        depend on the row only); ``row_sign`` (R,) and ``col_sign`` (C,), each or None (+1);
        ``row_origin`` (R, 3) or None and ``col_origin`` (C, 3) or None; when both origins
        are given, ``row_select`` (R,) and ``col_select`` (C,) bool: the origin is the
        column's where both are true, else the row's. None: no such form (or not a
        well-conditioned one for this grid); the grid's rays are then those of
        :meth:`rays`.
        """
        return None

    # -- public methods ----------------------------------------------------------------
    def project_homogeneous(self, points) -> np.ndarray:
        """Image points :math:`u \\in \\mathbb{P}^2` of 3D points.

        Parameters
        ----------
        points : (N, 3) or (N, 4) array_like
            Euclidean or homogeneous 3D points.

        Returns
        -------
        u : (N, 3) ndarray
        """
        return self._project_h(homogeneous_points("points", points))

    def project(self, points) -> np.ndarray:
        """Pixels ``(u1/u3, u2/u3)`` of 3D points.

        Points on the exceptional locus (on a slit or centre, or on the line where the
        projection is undefined), and points whose image lies at infinity, give NaN rows;
        no warning is emitted.

        Parameters
        ----------
        points : (N, 3) or (N, 4) array_like

        Returns
        -------
        pixels : (N, 2) float64 ndarray
        """
        return pixels_from_homogeneous(self._project_h(homogeneous_points("points", points)))

    def rays_plucker(self, pixels) -> np.ndarray:
        """Viewing ray of each pixel as a Plücker line (inverse projection χ, eq. (5)).

        Parameters
        ----------
        pixels : (N, 2) array_like

        Returns
        -------
        lines : (N, 6) ndarray, each scaled to unit norm.
        """
        from ..geometry.plucker import normalize_lines

        return normalize_lines(self._rays_plucker(check_image_points("pixels", pixels)))

    def rays(self, pixels) -> np.ndarray:
        """Viewing rays in Open3D's layout: origin and unit direction, ``(N, 6)`` float64.

        The origin is where the ray enters the camera's visible half-space (for two-slit
        cameras: the later of the two slit planes; for a pinhole: the centre), and the
        direction points towards the scene, so that a ray caster with ``t >= 0`` sees what
        the camera sees. See the subclass for its exact convention.
        """
        px = check_image_points("pixels", pixels)
        if len(px) <= RAY_CHUNK:
            return self._rays(px)
        # In chunks: the temporaries of a chunk stay in cache, where a fresh array per step
        # for a whole image would be faulted in page by page (three to five times slower).
        out = np.empty((len(px), 6))
        for a in range(0, len(px), RAY_CHUNK):
            out[a:a + RAY_CHUNK] = self._rays(px[a:a + RAY_CHUNK])
        return out

    def ray_grid(self, x, y) -> RayGrid:
        r"""The viewing rays of a pixel grid, made row range by row range.

        The grid's pixels are ``(x[j], y[i])``; ``ray_grid(x, y).rays()[i, j]`` is
        ``rays([[x[j], y[i]]])[0]`` to rounding. Where the camera has one, the rays come from
        the grid's structure: for two-slit and pushbroom cameras the ray of pixel ``(u, v)``
        joins the point where slit 1 meets the plane ``A2[0] - v A2[1]`` (one point per row)
        to the point where slit 2 meets ``A1[0] - u A1[1]`` (one per column); for a pinhole
        its direction is :math:`M^{-1} (u, v, 1)^T`. In both cases

        .. math:: d_{ij} = \frac{s_i\,\sigma_j\,(r_i + c_j)}{\|r_i + c_j\|}, \qquad
                  o_{ij} \in \{a_i, b_j\},

        with per-row terms :math:`r_i, s_i, a_i` and per-column terms :math:`c_j,
        \sigma_j, b_j` computed here once, so that each pixel costs a few operations instead
        of a Plücker line and its conversion. Other cameras (and grids on which the terms
        would be ill-conditioned) are evaluated with :meth:`rays`.

        Parameters
        ----------
        x : (W,) array_like
            Pixel x coordinates of the columns.
        y : (H,) array_like
            Pixel y coordinates of the rows.

        Returns
        -------
        RayGrid

        Examples
        --------
        >>> from xslit import PinholeCamera
        >>> cam = PinholeCamera.from_intrinsics([[10, 0, 1], [0, 10, 1], [0, 0, 1]])
        >>> r = cam.ray_grid([0.0, 1.0, 2.0], [0.0, 1.0]).rays()
        >>> r.shape, bool(np.allclose(r[1, 2], cam.rays([[2.0, 1.0]])[0]))
        ((2, 3, 6), True)
        """
        x = _check_axis("x", x)
        y = _check_axis("y", y)
        terms = self._grid_terms(x, y) if len(x) and len(y) else None
        if terms is not None and terms["row_origin"] is not None \
                and terms["col_origin"] is not None:
            rs, cs = terms["row_select"], terms["col_select"]
            if rs.all() and cs.all():
                terms = {**terms, "row_origin": None}
            elif not rs.any() or not cs.any():
                terms = {**terms, "col_origin": None}
        return RayGrid(self, x, y, terms)

    def in_front(self, points) -> np.ndarray:
        """Boolean ``(N,)``: which points lie in the camera's visible half-space."""
        raise NotImplementedError

    def to_dict(self) -> dict:
        raise NotImplementedError

    def copy(self):
        return type(self).from_dict(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict):
        from .serialize import camera_from_dict

        return camera_from_dict(data)


class RayGrid:
    """The viewing rays of a pixel grid ``(x[j], y[i])`` of a camera (:meth:`Camera.ray_grid`).

    Attributes
    ----------
    camera : Camera
    x : (W,) ndarray
    y : (H,) ndarray
    """

    def __init__(self, camera: Camera, x: np.ndarray, y: np.ndarray, terms: dict | None):
        self.camera, self.x, self.y = camera, x, y
        if terms is not None:  # vectors as (3, n): each coordinate contiguous
            terms = {k: np.ascontiguousarray(v.T) if k.endswith(("_dir", "_origin"))
                     and v is not None else v for k, v in terms.items()}
        self._terms = terms

    @property
    def separable(self) -> bool:
        """Whether the rays come from per-row and per-column terms (else from ``rays``)."""
        return self._terms is not None

    @property
    def shape(self) -> tuple[int, int]:
        """``(H, W)``."""
        return len(self.y), len(self.x)

    def rays(self, start: int = 0, stop: int | None = None, *, out=None) -> np.ndarray:
        """The rays of rows ``[start, stop)`` in Open3D's layout, as :meth:`Camera.rays`.

        Parameters
        ----------
        start, stop : int
            Row range (default: all rows), ``0 <= start <= stop <= H``.
        out : (stop - start, W, 6) float64 ndarray, optional
            Where to write the rays, any strides (a planar ``(6, rows, W)`` buffer moved to
            the last axis is the fastest); allocated when None.

        Returns
        -------
        rays : (stop - start, W, 6) float64 ndarray
            ``out`` when given.
        """
        h, w = self.shape
        stop = h if stop is None else stop
        for name, v in (("start", start), ("stop", stop)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ValueError(f"{name} must be an int, got {v!r}")
        if not 0 <= start <= stop <= h:
            raise ValueError(f"start and stop must satisfy 0 <= start <= stop <= {h}, got "
                             f"{start} and {stop}")
        shape = (stop - start, w, 6)
        if out is None:
            out = np.empty(shape)
        elif not (isinstance(out, np.ndarray) and out.shape == shape
                  and out.dtype == np.float64 and out.flags.writeable):
            got = (f"a {out.dtype} array of shape {out.shape}" if isinstance(out, np.ndarray)
                   else type(out).__name__)
            raise ValueError(f"out must be a writeable float64 array of shape {shape}, got "
                             f"{got}")
        step = max(1, GRID_CHUNK // max(1, w))  # rows per chunk: its temporaries stay in cache
        for r0 in range(start, stop, step):
            r1 = min(stop, r0 + step)
            part = out[r0 - start:r1 - start]
            if self._terms is None:
                px = np.empty((r1 - r0, w, 2))
                px[..., 0] = self.x
                px[..., 1] = self.y[r0:r1, None]
                part[...] = self.camera._rays(px.reshape(-1, 2)).reshape(part.shape)
            else:
                _fill_grid(self._terms, r0, r1, part)
        return out


def _check_axis(name: str, value) -> np.ndarray:
    a = check_array(name, value)
    if a.ndim != 1 or not np.isfinite(a).all():
        raise ValueError(f"{name} must be a 1-D array of finite pixel coordinates, got "
                         f"shape {a.shape}" + ("" if a.ndim != 1 else " with non-finite values"))
    return a


def _fill_grid(terms: dict, r0: int, r1: int, out: np.ndarray) -> None:
    """Write the rays of rows ``[r0, r1)`` of a separable grid (see ``Camera.ray_grid``);
    the vector terms are ``(3, n)``."""
    rows = slice(r0, r1)
    col_dir = terms["col_dir"]
    row_sign = terms["row_sign"]
    if col_dir is None:  # the direction depends on the row only
        d = terms["row_dir"][:, rows]
        d = d / np.linalg.norm(d, axis=0)
        if row_sign is not None:
            d *= row_sign[rows]
        for c in range(3):
            out[..., 3 + c] = d[c, :, None]
    else:
        row_dir = terms["row_dir"][:, rows]
        d = [out[..., 3 + c] for c in range(3)]
        for c in range(3):
            np.add(row_dir[c, :, None], col_dir[c], out=d[c])
        norm = np.multiply(d[0], d[0])
        tmp = np.empty_like(norm)
        for c in (1, 2):
            np.multiply(d[c], d[c], out=tmp)
            norm += tmp
        np.sqrt(norm, out=norm)
        col_sign = terms["col_sign"]
        np.divide(1.0 if col_sign is None else col_sign, norm, out=norm)
        if row_sign is not None:
            norm *= row_sign[rows, None]
        for c in range(3):
            d[c] *= norm
    row_origin, col_origin = terms["row_origin"], terms["col_origin"]
    select = None
    if row_origin is not None and col_origin is not None:
        select = terms["row_select"][rows, None] & terms["col_select"]
    for c in range(3):
        if col_origin is None:
            out[..., c] = row_origin[c, rows, None]
        else:
            out[..., c] = col_origin[c]
            if select is not None:
                np.copyto(out[..., c], row_origin[c, rows, None], where=~select)
