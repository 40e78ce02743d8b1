"""Point clouds between numpy arrays, PLY files and ``open3d.geometry.PointCloud``.

Open3D keeps points and normals as float64 and colours as float64 in [0, 1]; these
conversions accept uint8 colours (divided by 255) as well. Open3D is imported only by the
functions that build or read an Open3D object.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._checks import check_array, check_finite
from ..io.ply import check_colors, read_ply_cloud
from ._open3d import import_open3d

__all__ = ["arrays_from_cloud", "pointcloud_from_points", "points_from_pointcloud"]


def _check_points(name: str, value) -> np.ndarray:
    P = check_array(name, value)
    if P.ndim != 2 or P.shape[1] != 3:
        raise ValueError(f"{name} must have shape (N, 3), got {P.shape}")
    return check_finite(name, P)


def _check_normals(name: str, value, n: int) -> np.ndarray:
    N = check_array(name, value)
    if N.shape != (n, 3):
        raise ValueError(f"{name} must have shape ({n}, 3) like the points, got {N.shape}")
    return check_finite(name, N)


def pointcloud_from_points(points, colors=None, normals=None):
    """Build an ``open3d.geometry.PointCloud``.

    Parameters
    ----------
    points : (N, 3) array_like
        Finite positions.
    colors : (N, 3) array_like, optional
        RGB colours: uint8 (or integers) in [0, 255], or floats in [0, 1].
    normals : (N, 3) array_like, optional

    Returns
    -------
    cloud : open3d.geometry.PointCloud
        Points and normals as float64, colours as float64 in [0, 1].

    Examples
    --------
    >>> cloud = pointcloud_from_points([[0.0, 0.0, 1.0]], np.array([[255, 0, 0]], np.uint8))
    >>> np.asarray(cloud.colors)
    array([[1., 0., 0.]])
    """
    P = _check_points("points", points)
    C = None if colors is None else check_colors("colors", colors, len(P))
    N = None if normals is None else _check_normals("normals", normals, len(P))
    o3d = import_open3d()
    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(P))
    if C is not None:
        cloud.colors = o3d.utility.Vector3dVector(C)
    if N is not None:
        cloud.normals = o3d.utility.Vector3dVector(N)
    return cloud


def _is_open3d_cloud(value) -> bool:
    return (type(value).__module__.startswith("open3d")
            and type(value).__name__ == "PointCloud")


def points_from_pointcloud(cloud):
    """Arrays of an ``open3d.geometry.PointCloud`` (legacy or tensor ``t.geometry``).

    Parameters
    ----------
    cloud : open3d.geometry.PointCloud or open3d.t.geometry.PointCloud

    Returns
    -------
    points : (N, 3) float64 ndarray
    colors : (N, 3) float64 ndarray in [0, 1] or None
    normals : (N, 3) float64 ndarray or None

    Examples
    --------
    >>> P, C, N = points_from_pointcloud(pointcloud_from_points([[1.0, 2.0, 3.0]]))
    >>> P, C, N
    (array([[1., 2., 3.]]), None, None)
    """
    if not _is_open3d_cloud(cloud):
        raise ValueError(f"cloud must be an open3d PointCloud, got {type(cloud).__name__}")
    if hasattr(cloud, "point"):  # tensor geometry
        attrs = cloud.point

        def get(key):
            if key not in attrs:
                return None
            a = attrs[key].numpy()
            if key == "colors" and a.dtype.kind in "ui":
                return check_colors("cloud colours", a, len(a))
            return a.astype(np.float64)

        P = get("positions")
        P = np.zeros((0, 3)) if P is None else P
        return P, get("colors"), get("normals")
    P = np.asarray(cloud.points, dtype=np.float64).reshape(-1, 3).copy()
    C = np.asarray(cloud.colors, dtype=np.float64).copy() if cloud.has_colors() else None
    N = np.asarray(cloud.normals, dtype=np.float64).copy() if cloud.has_normals() else None
    return P, C, N


def arrays_from_cloud(cloud, colors=None, normals=None):
    """Points, colours and normals from any cloud xslit accepts.

    Parameters
    ----------
    cloud : (N, 3) array_like, tuple, open3d PointCloud, str or Path
        Positions; or ``(points, colors)`` as :func:`xslit.io.read_ply` returns them; or an
        Open3D point cloud; or the path of a PLY file (vertices, colours and normals read
        with :func:`xslit.io.read_ply_cloud`).
    colors : (N, 3) array_like, optional
        Colours for array input (uint8 in [0, 255] or floats in [0, 1]); they replace those
        of the cloud when both are given.
    normals : (N, 3) array_like, optional

    Returns
    -------
    points : (N, 3) float64 ndarray
    colors : (N, 3) float64 ndarray in [0, 1] or None
    normals : (N, 3) float64 ndarray or None
    """
    C = N = None
    if isinstance(cloud, (str, Path)):
        P, C8, N = read_ply_cloud(cloud)
        _check_points("cloud", P)
        C = None if C8 is None else check_colors("cloud colours", C8, len(P))
    elif _is_open3d_cloud(cloud):
        P, C, N = points_from_pointcloud(cloud)
    elif isinstance(cloud, tuple) and len(cloud) == 2:
        P = _check_points("cloud points", cloud[0])
        if cloud[1] is not None:
            C = check_colors("cloud colours", cloud[1], len(P))
    else:
        P = _check_points("cloud", cloud)
    if colors is not None:
        C = check_colors("colors", colors, len(P))
    if normals is not None:
        N = _check_normals("normals", normals, len(P))
    return P, C, N
