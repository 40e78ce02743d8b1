"""The interface every camera model of xslit implements.

Rendering, triangulation and the dataset format take any :class:`Camera`: a camera projects
points to pixels and gives the viewing ray of each pixel, as a Plücker line and in Open3D's
``(N, 6)`` ray layout ``(ox, oy, oz, dx, dy, dz)``.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_image_points, check_object_points
from ..geometry.projective import homogeneous_from_euclidean

__all__ = ["Camera", "homogeneous_points", "pixels_from_homogeneous"]


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
        """Viewing ray of each pixel as a Plücker line (inverse projection χ, eq. inverse).

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
